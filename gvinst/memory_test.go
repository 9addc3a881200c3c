package gvinst

import (
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
	m.OnStale = func(page uint64) error {
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
