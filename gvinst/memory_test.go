package gvinst

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

func TestMemoryMapReadWrite(t *testing.T) {
	m := NewMemory(0)
	if err := m.Map(0x10000, 2*PageSize, PermRead|PermWrite); err != nil {
		t.Fatal(err)
	}
	// A store that crosses the page boundary.
	if err := m.Store(0x10ffe, 8, 0x1122334455667788); err != nil {
		t.Fatal(err)
	}
	v, err := m.Load(0x10ffe, 8)
	if err != nil || v != 0x1122334455667788 {
		t.Fatalf("Load = %#x, %v", v, err)
	}
	if v, _ := m.Load(0x11000, 2); v != 0x5566 {
		t.Errorf("Load high part = %#x", v)
	}
	var f *Fault
	if _, err := m.Load(0x12000, 4); !errors.As(err, &f) || !f.Unmapped || f.Addr != 0x12000 {
		t.Errorf("load past the end: %v", err)
	}
	if err := m.Protect(0x10000, PageSize, PermRead); err != nil {
		t.Fatal(err)
	}
	if err := m.Store(0x10010, 4, 1); !errors.As(err, &f) || f.Unmapped || f.Access != AccessWrite {
		t.Errorf("store to read-only page: %v", err)
	}
	if err := m.Poke(0x10010, []byte{9}); err != nil {
		t.Errorf("Poke ignores permissions: %v", err)
	}
	if s, err := m.ReadString(0x10010, 16); err != nil || s != "\x09" {
		t.Errorf("ReadString = %q, %v", s, err)
	}
	if err := m.Unmap(0x10000, PageSize); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Load(0x10010, 1); err == nil {
		t.Error("load from unmapped page succeeded")
	}
	if m.Mapped() != PageSize {
		t.Errorf("Mapped = %d", m.Mapped())
	}
}

func TestMemoryLimitAndFindFree(t *testing.T) {
	m := NewMemory(4 * PageSize)
	if err := m.Map(0x100000, 4*PageSize, PermRead); err != nil {
		t.Fatal(err)
	}
	if err := m.Map(0x200000, PageSize, PermRead); !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("over the limit: %v", err)
	}
	a, ok := m.FindFree(2*PageSize, 0x100000, 0x104000+2*PageSize)
	if !ok || a != 0x104000 {
		t.Errorf("FindFree = %#x, %v", a, ok)
	}
	if _, ok := m.FindFree(PageSize, 0x100000, 0x104000); ok {
		t.Error("FindFree found space in a full range")
	}
}

func TestMemoryCodeWrite(t *testing.T) {
	m := NewMemory(0)
	var hit []uint64
	m.OnCodeWrite = func(a uint64) { hit = append(hit, a) }
	if err := m.Map(0x400000, PageSize, PermRead|PermWrite|PermExec); err != nil {
		t.Fatal(err)
	}
	_ = m.Store(0x400010, 4, 1) // before MarkCode: no callback
	m.MarkCode(0x400000)
	_ = m.Store(0x400010, 4, 2)
	if len(hit) != 1 || hit[0] != 0x400000 {
		t.Errorf("OnCodeWrite calls = %#x", hit)
	}
}

// TestDefer checks stale pages: every kind of access to one calls OnStale
// first (even after the page was in a TLB), pages stay stale until each
// holder undefers them, and a failing OnStale fails the access.
func TestDefer(t *testing.T) {
	m := NewMemory(0)
	if err := m.Map(0x10000, 3*PageSize, PermRead|PermWrite); err != nil {
		t.Fatal(err)
	}
	var calls []uint64
	// The holder of the stale bytes: writes 0xab at the page's first byte.
	m.OnStale = func(addr uint64) error {
		page := addr &^ (PageSize - 1)
		calls = append(calls, page)
		m.Undefer(page, PageSize)
		return m.Poke(page, []byte{0xab})
	}
	// Warm both TLBs for the first page.
	if _, err := m.Load(0x10000, 8); err != nil {
		t.Fatal(err)
	}
	if err := m.Store(0x10008, 8, 1); err != nil {
		t.Fatal(err)
	}
	accesses := []struct {
		name string
		do   func() error
	}{
		{"load", func() error { _, err := m.Load(0x10010, 4); return err }},
		{"store", func() error { return m.Store(0x10010, 4, 7) }},
		{"read", func() error { return m.Read(0x10ff0, make([]byte, 32)) }},
		{"peek", func() error { return m.Peek(0x10000, make([]byte, 1)) }},
		{"poke", func() error { return m.Poke(0x10004, []byte{1}) }},
		{"string", func() error { _, err := m.ReadString(0x10001, 10); return err }},
		{"unmap", func() error { return m.Unmap(0x10000, PageSize) }},
	}
	for _, a := range accesses {
		calls = nil
		if !m.IsMapped(0x10000, PageSize) {
			if err := m.Map(0x10000, PageSize, PermRead|PermWrite); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.Defer(0x10000, 10); err != nil {
			t.Fatal(err)
		}
		if !m.IsStale(0x10fff) || m.IsStale(0x11000) {
			t.Fatalf("%s: Defer marked the wrong pages", a.name)
		}
		if err := a.do(); err != nil {
			t.Fatalf("%s: %v", a.name, err)
		}
		if len(calls) != 1 || calls[0] != 0x10000 {
			t.Errorf("%s: OnStale calls %#x, want one for 0x10000", a.name, calls)
		}
		if a.name != "unmap" {
			if b, _ := m.Load(0x10000, 1); b != 0xab || m.IsStale(0x10000) {
				t.Errorf("%s: the page was not brought back", a.name)
			}
		}
	}
	// Two holders: the page stays stale until both undefer it.
	_ = m.Defer(0x11000, 1)
	_ = m.Defer(0x11000, 1)
	m.Undefer(0x11000, 1)
	if !m.IsStale(0x11000) {
		t.Error("a page deferred twice went fresh after one Undefer")
	}
	m.Undefer(0x11000, 1)
	if m.IsStale(0x11000) {
		t.Error("a page stayed stale after both holders undeferred it")
	}
	// A holder that fails fails the access with a fault naming it.
	m.OnStale = func(uint64) error { return errors.New("device lost") }
	_ = m.Defer(0x12000, 1)
	var f *Fault
	if _, err := m.Load(0x12008, 8); !errors.As(err, &f) || f.Stale == nil || f.Addr != 0x12008 {
		t.Errorf("load of a page that cannot come back: %v", err)
	}
	if err := m.Defer(0x40000, 1); err == nil {
		t.Error("Defer of an unmapped page succeeded")
	}
}

// TestWatch checks watched pages: the first change by any path (even after
// the page was in the write TLB) reports the page once, reads do not, and
// Map and Unmap over a watched page report it.
func TestWatch(t *testing.T) {
	m := NewMemory(0)
	if err := m.Map(0x10000, 2*PageSize, PermRead|PermWrite); err != nil {
		t.Fatal(err)
	}
	var touched []uint64
	m.OnWatchedWrite = func(page uint64) { touched = append(touched, page) }
	if err := m.Store(0x10008, 8, 1); err != nil { // warm the write TLB
		t.Fatal(err)
	}
	writes := []struct {
		name string
		do   func() error
	}{
		{"store", func() error { return m.Store(0x10010, 4, 7) }},
		{"write", func() error { return m.Write(0x10ff0, make([]byte, 32)) }},
		{"poke", func() error { return m.Poke(0x10004, []byte{1}) }},
		{"map", func() error { return m.Map(0x10000, PageSize, PermRead|PermWrite) }},
		{"unmap", func() error { return m.Unmap(0x10000, PageSize) }},
	}
	for _, w := range writes {
		if !m.IsMapped(0x10000, PageSize) {
			if err := m.Map(0x10000, PageSize, PermRead|PermWrite); err != nil {
				t.Fatal(err)
			}
		}
		m.Watch(0x10000, 1)
		touched = nil
		if _, err := m.Load(0x10000, 8); err != nil || len(touched) != 0 {
			t.Fatalf("%s: a read reported a change (%v)", w.name, err)
		}
		if err := w.do(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if len(touched) != 1 || touched[0] != 0x10000 {
			t.Errorf("%s: reported %#x, want 0x10000 once", w.name, touched)
		}
		if m.IsWatched(0x10000) {
			t.Errorf("%s: the page is still watched after its change", w.name)
		}
		// Later changes are not reported until the page is watched again.
		if w.name == "store" {
			_ = m.Store(0x10010, 4, 8)
			if len(touched) != 1 {
				t.Errorf("a second store was reported")
			}
		}
	}
	// A write spanning two pages reports each watched one.
	if err := m.Map(0x10000, PageSize, PermRead|PermWrite); err != nil {
		t.Fatal(err)
	}
	m.Watch(0x10000, 2*PageSize)
	touched = nil
	if err := m.Write(0x10ffc, make([]byte, 8)); err != nil || len(touched) != 2 {
		t.Errorf("a write over two watched pages reported %#x (%v)", touched, err)
	}
}

// deviceHolder is a Holder for tests: it holds newer bytes for the pages
// it deferred (the page's number repeated, so every byte is checkable),
// brings a page back on Refresh and forgets it on Dropped.
type deviceHolder struct {
	m                  *Memory
	held               map[uint64]bool
	refreshed, dropped int
}

func newDeviceHolder(m *Memory, addr, size uint64) *deviceHolder {
	h := &deviceHolder{m: m, held: map[uint64]bool{}}
	for a := addr; a < addr+size; a += PageSize {
		h.held[a] = true
	}
	m.SetHolder(h)
	return h
}

func heldBytes(pageAddr uint64) []byte {
	b := make([]byte, PageSize)
	for i := range b {
		b[i] = byte(pageAddr/PageSize) + byte(i)
	}
	return b
}

func (h *deviceHolder) Refresh(addr uint64) error {
	pageAddr := addr &^ (PageSize - 1)
	if !h.held[pageAddr] {
		return errors.New("not held")
	}
	delete(h.held, pageAddr)
	h.refreshed++
	h.m.Undefer(pageAddr, PageSize)
	return h.m.Poke(pageAddr, heldBytes(pageAddr))
}

func (h *deviceHolder) Dropped(pageAddr uint64) {
	delete(h.held, pageAddr)
	h.dropped++
	h.m.Undefer(pageAddr, PageSize)
}

func (h *deviceHolder) Touched(uint64) {}

// TestStalePagesTakeNoHostMemory checks that pages a holder marks stale
// (an array born on the device) take no host page until the host reads
// one, that reading one brings its bytes back exactly and fills only it,
// and that unmapping, discarding and mapping over stale pages drops them
// without bringing them back, while mremap brings them along.
func TestStalePagesTakeNoHostMemory(t *testing.T) {
	const base, n = 0x100000, 4096 // 16 MiB
	m := NewMemory(0)
	if err := m.Map(base, n*PageSize, PermRead|PermWrite); err != nil {
		t.Fatal(err)
	}
	h := newDeviceHolder(m, base, n*PageSize)
	if err := m.Defer(base, n*PageSize); err != nil {
		t.Fatal(err)
	}
	m.Watch(base, n*PageSize)
	m.MarkCode(base)
	if hb := m.HostBytes(); hb != 0 {
		t.Fatalf("marking %d pages stale took %d bytes of host memory", n, hb)
	}
	// A read of one page brings back that page alone, byte for byte.
	got := make([]byte, PageSize)
	at := uint64(base + 7*PageSize)
	if err := m.Read(at, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, heldBytes(at)) {
		t.Fatal("the page read back is not the holder's bytes")
	}
	if v, err := m.Load(at+8, 8); err != nil || v != binary.LittleEndian.Uint64(heldBytes(at)[8:]) {
		t.Fatalf("Load after the page came back = %#x, %v", v, err)
	}
	if h.refreshed != 1 || m.HostBytes() != PageSize || m.IsStale(at) || !m.IsStale(at+PageSize) {
		t.Fatalf("after one read: %d pages refreshed, %d host bytes", h.refreshed, m.HostBytes())
	}
	// A store into a stale page brings it back first, then changes it.
	at2 := uint64(base + 9*PageSize)
	if err := m.Store(at2+16, 1, 0xee); err != nil {
		t.Fatal(err)
	}
	want := heldBytes(at2)
	want[16] = 0xee
	if err := m.Peek(at2, got); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("a store into a stale page: %v", err)
	}
	// mremap moves stale pages with their bytes brought back.
	const to = 0x4000000
	if err := m.Move(base+16*PageSize, to, 2*PageSize); err != nil {
		t.Fatal(err)
	}
	for i := uint64(0); i < 2; i++ {
		if err := m.Peek(to+i*PageSize, got); err != nil || !bytes.Equal(got, heldBytes(base+(16+i)*PageSize)) {
			t.Fatalf("page %d moved by mremap: %v", i, err)
		}
	}
	// munmap, MADV_DONTNEED and a mapping over stale pages drop them.
	refreshed := h.refreshed
	if err := m.Unmap(base+32*PageSize, 100*PageSize); err != nil {
		t.Fatal(err)
	}
	if err := m.Discard(base+200*PageSize, 100*PageSize); err != nil {
		t.Fatal(err)
	}
	if err := m.Map(base+400*PageSize, 100*PageSize, PermRead); err != nil {
		t.Fatal(err)
	}
	if h.refreshed != refreshed || h.dropped != 300 {
		t.Fatalf("dropping 300 stale pages refreshed %d and dropped %d", h.refreshed-refreshed, h.dropped)
	}
	if v, err := m.Load(base+250*PageSize, 8); err != nil || v != 0 {
		t.Fatalf("a discarded stale page reads %#x, %v, want zeros", v, err)
	}
	if hb := m.HostBytes(); hb != 4*PageSize {
		t.Fatalf("host bytes %d, want the 4 pages brought back", hb)
	}
	// The rest come back exactly when read, and only then take memory.
	for a := uint64(base + 500*PageSize); a < base+n*PageSize; a += 97 * PageSize {
		if err := m.Read(a, got); err != nil || !bytes.Equal(got, heldBytes(a)) {
			t.Fatalf("page %#x: %v", a, err)
		}
	}
	if hb, want := m.HostBytes(), uint64(4+h.refreshed-refreshed)*PageSize; hb != want {
		t.Fatalf("host bytes %d, want %d", hb, want)
	}
}

// TestMarkedPageReadsZerosUntilWritten checks a page that is only marked
// (watched, code) and never written: it reads as zeros through the read
// TLB, and a write gives it bytes of its own that the read TLB then sees
// instead of the shared zeros.
func TestMarkedPageReadsZerosUntilWritten(t *testing.T) {
	m := NewMemory(0)
	if err := m.Map(0x10000, PageSize, PermRead|PermWrite|PermExec); err != nil {
		t.Fatal(err)
	}
	var watched, code int
	m.OnWatchedWrite = func(uint64) { watched++ }
	m.OnCodeWrite = func(uint64) { code++ }
	m.Watch(0x10000, PageSize)
	m.MarkCode(0x10000)
	if v, err := m.Load(0x10008, 8); err != nil || v != 0 || m.HostBytes() != 0 {
		t.Fatalf("Load = %#x, %v; host bytes %d", v, err, m.HostBytes())
	}
	if n, err := m.Fetch(0x10000, make([]byte, 16)); err != nil || n != 16 {
		t.Fatalf("Fetch = %d, %v", n, err)
	}
	if err := m.Store(0x10008, 8, 0x55); err != nil {
		t.Fatal(err)
	}
	if v, err := m.Load(0x10008, 8); err != nil || v != 0x55 {
		t.Fatalf("Load after the store = %#x, %v", v, err)
	}
	if watched != 1 || code != 1 || m.HostBytes() != PageSize {
		t.Fatalf("watched %d, code %d, host bytes %d", watched, code, m.HostBytes())
	}
}
