package gvinst

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

// holderOf is a holder of copies of m's pages for the tests: it has the
// bytes of every page it holds, and brings a stale one back with Poke.
type holderOf struct {
	m      *Memory
	copies map[uint64][]byte // by page address
	asked  []uint64          // the pages Refresh was asked for
	during func()            // called in Refresh before the Poke
}

func (h *holderOf) Refresh(addr uint64) error {
	pa := addr &^ pageMask
	h.asked = append(h.asked, pa)
	b, ok := h.copies[pa]
	if !ok {
		return errors.New("no copy of the page")
	}
	if h.during != nil {
		h.during()
	}
	h.m.Undefer(pa, PageSize)
	return h.m.Poke(pa, b)
}

func (h *holderOf) Touched(uint64) {}

// pageOf returns a page of bytes that tell page k's apart.
func pageOf(k int) []byte {
	b := make([]byte, PageSize)
	for i := range b {
		b[i] = byte(k*31 + i*7 + 1)
	}
	return b
}

// TestRelease checks Release: the pages turn stale and their next access
// brings them back through the holder; pages that were current give
// their host memory back, which the next pages to need bytes reuse (a
// page written whole as it is, one written in part cleared first: it
// must read zeros where nothing wrote); a page translated code came from,
// and one stale for a holder already, keep their bytes; TLB entries of
// released pages are gone.
func TestRelease(t *testing.T) {
	const base = 0x40000000
	m := NewMemory(0)
	if err := m.Map(base, 16*PageSize, PermRead|PermWrite|PermExec); err != nil {
		t.Fatal(err)
	}
	h := &holderOf{m: m, copies: map[uint64][]byte{}}
	m.SetHolder(h)
	for k := 0; k < 4; k++ {
		if err := m.Poke(base+uint64(k)*PageSize, pageOf(k)); err != nil {
			t.Fatal(err)
		}
		h.copies[base+uint64(k)*PageSize] = pageOf(k)
	}
	m.MarkCode(base + 2*PageSize)
	if err := m.Defer(base+3*PageSize, PageSize); err != nil {
		t.Fatal(err)
	}
	// Page 0 in the read TLB.
	if v, err := m.Load(base+8, 1); err != nil || byte(v) != pageOf(0)[8] {
		t.Fatalf("Load = %#x, %v", v, err)
	}
	host := m.HostBytes()
	if ok, err := m.Release(base, 5*PageSize); !ok || err != nil {
		t.Fatalf("Release = %v, %v", ok, err)
	}
	for k := 0; k < 5; k++ {
		if !m.IsStale(base + uint64(k)*PageSize) {
			t.Errorf("page %d is not stale after Release", k)
		}
	}
	if got, want := m.HostBytes(), host-2*PageSize; got != want {
		t.Errorf("host bytes %d after Release, want %d: pages 0 and 1 give theirs back, code page 2 and stale page 3 keep theirs", got, want)
	}
	if len(m.spare) != 2 {
		t.Fatalf("%d spare pages, want 2", len(m.spare))
	}
	spares := map[*[PageSize]byte]bool{m.spare[0]: true, m.spare[1]: true}
	// A page written whole takes a spare page as it is.
	if err := m.Poke(base+8*PageSize, pageOf(8)); err != nil {
		t.Fatal(err)
	}
	if p := m.pages[8+base/PageSize]; p == nil || !spares[p.data] {
		t.Error("a page written whole did not get a released page's memory")
	}
	// A page written in part takes the other, cleared.
	if err := m.Store(base+9*PageSize+100, 4, 0xdeadbeef); err != nil {
		t.Fatal(err)
	}
	if p := m.pages[9+base/PageSize]; p == nil || !spares[p.data] {
		t.Error("a page written in part did not get a released page's memory")
	}
	got := make([]byte, PageSize)
	if err := m.Read(base+9*PageSize, got); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, PageSize)
	copy(want[100:], []byte{0xef, 0xbe, 0xad, 0xde})
	if !bytes.Equal(got, want) {
		t.Error("a released page written in part holds bytes nothing wrote there")
	}
	// The released pages come back through the holder, the read TLB's
	// entry of page 0 included; the pages keep what they held.
	h.asked = nil
	for k := 0; k < 4; k++ {
		if err := m.Read(base+uint64(k)*PageSize, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, pageOf(k)) {
			t.Errorf("page %d reads other bytes after coming back", k)
		}
	}
	// (Page 3 carries two marks, Defer's and Release's: the holder
	// undefers one a Refresh.)
	if want := []uint64{base, base + PageSize, base + 2*PageSize, base + 3*PageSize, base + 3*PageSize}; !slices.Equal(h.asked, want) {
		t.Errorf("the holder was asked for %#x, want %#x", h.asked, want)
	}
	// Page 4, untouched, reads zeros again once the holder has
	// nothing for it: it fails, naming the page.
	var f *Fault
	if _, err := m.Load(base+4*PageSize, 8); !errors.As(err, &f) || f.Stale == nil {
		t.Errorf("reading page 4 with no copy to bring back: %v, want a fault naming the stale page", err)
	}
}

// TestReleaseUnalignedPokeClears checks that a Poke whose ends cover
// their pages in part clears the released pages it gets there: only the
// pages it writes whole keep no zeros.
func TestReleaseUnalignedPokeClears(t *testing.T) {
	const base = 0x40000000
	m := NewMemory(0)
	if err := m.Map(base, 16*PageSize, PermRead|PermWrite); err != nil {
		t.Fatal(err)
	}
	h := &holderOf{m: m, copies: map[uint64][]byte{}}
	m.SetHolder(h)
	for k := 0; k < 4; k++ {
		if err := m.Poke(base+uint64(k)*PageSize, pageOf(k)); err != nil {
			t.Fatal(err)
		}
		h.copies[base+uint64(k)*PageSize] = pageOf(k)
	}
	if ok, err := m.Release(base, 4*PageSize); !ok || err != nil {
		t.Fatalf("Release = %v, %v", ok, err)
	}
	// Pages 8, 9 and 10: from byte 100 of 8 to byte 99 of 10.
	data := bytes.Repeat([]byte{0x5a}, 2*PageSize)
	if err := m.Poke(base+8*PageSize+100, data); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 3*PageSize)
	if err := m.Read(base+8*PageSize, got); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 3*PageSize)
	copy(want[100:], data)
	if !bytes.Equal(got, want) {
		t.Error("an unaligned Poke over released pages left bytes nothing wrote")
	}
	if len(m.spare) != 1 {
		t.Errorf("%d spare pages left, want 1 (three of four taken)", len(m.spare))
	}
}

// TestReleaseWhileSettling checks that Release does nothing while Unmap
// brings stale pages back (settling): a page it released then would be
// left stale where Unmap needs none.
func TestReleaseWhileSettling(t *testing.T) {
	const base = 0x40000000
	m := NewMemory(0)
	if err := m.Map(base, 8*PageSize, PermRead|PermWrite); err != nil {
		t.Fatal(err)
	}
	h := &holderOf{m: m, copies: map[uint64][]byte{}}
	m.SetHolder(h)
	for k := 0; k < 4; k++ {
		if err := m.Poke(base+uint64(k)*PageSize, pageOf(k)); err != nil {
			t.Fatal(err)
		}
		h.copies[base+uint64(k)*PageSize] = pageOf(k)
	}
	if err := m.Defer(base, PageSize); err != nil {
		t.Fatal(err)
	}
	var released []bool
	h.during = func() {
		ok, err := m.Release(base+PageSize, PageSize)
		if err != nil {
			t.Error(err)
		}
		released = append(released, ok)
	}
	if err := m.Unmap(base, 2*PageSize); err != nil {
		t.Fatal(err)
	}
	if len(released) != 1 || released[0] {
		t.Errorf("Release during Unmap's settling reported %v, want one false", released)
	}
	if m.IsMapped(base+PageSize, 1) {
		t.Error("page 1 is still mapped")
	}
	// Outside a settle, from the same holder, it releases.
	if err := m.Defer(base+2*PageSize, PageSize); err != nil {
		t.Fatal(err)
	}
	released = nil
	h.during = func() {
		ok, _ := m.Release(base+3*PageSize, PageSize)
		released = append(released, ok)
	}
	if _, err := m.Load(base+2*PageSize, 8); err != nil {
		t.Fatal(err)
	}
	if len(released) != 1 || !released[0] || !m.IsStale(base+3*PageSize) {
		t.Errorf("Release from a guest access's bring-back reported %v, want true and page 3 stale", released)
	}
	var f *Fault
	if _, err := m.Release(base+6*PageSize, 4*PageSize); !errors.As(err, &f) || !f.Unmapped {
		t.Errorf("Release over unmapped pages: %v, want a fault", err)
	}
}

// TestUnwritten checks the runs of pages that read as zeros from no bytes
// of their own: a page written, one a holder left stale (in a run of
// them or with an entry), an unreadable area and a hole end runs; a page
// only watched does not; the ends of the range count whole pages only,
// and runs shorter than asked for are left out.
func TestUnwritten(t *testing.T) {
	const base = 0x40000000
	pg := func(k uint64) uint64 { return base + k*PageSize }
	m := NewMemory(0)
	if err := m.Map(base, 32*PageSize, PermRead|PermWrite); err != nil {
		t.Fatal(err)
	}
	if err := m.Protect(pg(24), 2*PageSize, 0); err != nil {
		t.Fatal(err)
	}
	if err := m.Map(pg(40), 8*PageSize, PermRead); err != nil {
		t.Fatal(err)
	}
	if err := m.Store(pg(5)+8, 8, 1); err != nil {
		t.Fatal(err)
	}
	if err := m.Defer(pg(10), 2*PageSize); err != nil { // a stale run
		t.Fatal(err)
	}
	if err := m.Poke(pg(14), []byte{1}); err != nil {
		t.Fatal(err)
	}
	if err := m.Defer(pg(14), PageSize); err != nil { // stale, with bytes
		t.Fatal(err)
	}
	m.Watch(pg(20), PageSize)
	got := m.Unwritten(base+100, pg(46)+5-(base+100), 1)
	want := [][2]uint64{{pg(1), pg(5)}, {pg(6), pg(10)}, {pg(12), pg(14)}, {pg(15), pg(24)}, {pg(26), pg(32)}, {pg(40), pg(46)}}
	if !slices.Equal(got, want) {
		t.Errorf("Unwritten = %#x, want %#x", got, want)
	}
	got = m.Unwritten(base, pg(48)-base, 5)
	want = [][2]uint64{{pg(0), pg(5)}, {pg(15), pg(24)}, {pg(26), pg(32)}, {pg(40), pg(48)}}
	if !slices.Equal(got, want) {
		t.Errorf("Unwritten of runs of 5 pages = %#x, want %#x", got, want)
	}
}
