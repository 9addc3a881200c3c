package gvinst

import "testing"

// TestStaleRuns defers a quarter of a million untouched pages with three
// written pages among them: the written ones take the mark on their
// entries, the rest become runs with no entry at all; every page reads as
// stale, an access to a page of a run (through a TLB warmed before) asks
// the holder for that page alone, Undefer cuts pages out of the runs, a
// second holder's mark keeps a page stale until both undefer it, and
// munmap tells the holder of every stale page it drops.
func TestStaleRuns(t *testing.T) {
	const base, n = 0x10000000, 1 << 18
	m := NewMemory(0)
	if err := m.Map(base, n*PageSize, PermRead|PermWrite); err != nil {
		t.Fatal(err)
	}
	written := []uint64{base + 5*PageSize, base + 6*PageSize, base + 1000*PageSize}
	for _, a := range written {
		if err := m.Store(a, 8, 0x1234); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Load(base+77*PageSize, 8); err != nil { // the read TLB holds the zero page
		t.Fatal(err)
	}
	var asked []uint64
	m.OnStale = func(addr uint64) error {
		page := addr &^ (PageSize - 1)
		asked = append(asked, page)
		m.Undefer(page, PageSize)
		return m.Poke(page, []byte{0xab})
	}
	if err := m.Defer(base, n*PageSize); err != nil {
		t.Fatal(err)
	}
	if len(m.pages) != len(written) || len(m.staleRuns) != 3 {
		t.Fatalf("%d page entries and %d runs, want the %d written pages' and 3 runs", len(m.pages), len(m.staleRuns), len(written))
	}
	for _, a := range []uint64{base, base + 5*PageSize, base + 77*PageSize, base + (n-1)*PageSize} {
		if !m.IsStale(a) {
			t.Errorf("%#x is not stale", a)
		}
	}
	if v, err := m.Load(base+77*PageSize, 1); err != nil || v != 0xab || len(asked) != 1 || asked[0] != base+77*PageSize {
		t.Fatalf("a load from a run's page: %#x, %v, asked for %#x", v, err, asked)
	}
	if m.IsStale(base+77*PageSize) || !m.IsStale(base+76*PageSize) || !m.IsStale(base+78*PageSize) {
		t.Error("bringing one page back changed its neighbours' marks")
	}
	// Undefer pages 100..199: fresh (and untouched) again.
	m.Undefer(base+100*PageSize, 100*PageSize)
	if m.IsStale(base+100*PageSize) || m.IsStale(base+199*PageSize) || !m.IsStale(base+99*PageSize) || !m.IsStale(base+200*PageSize) {
		t.Error("Undefer cut the wrong pages out of the runs")
	}
	if v, err := m.Load(base+150*PageSize, 8); err != nil || v != 0 || len(asked) != 1 {
		t.Errorf("an undeferred page reads %#x, %v (holder asked %d times)", v, err, len(asked))
	}
	// A second holder over pages 300..301: one Undefer leaves them stale.
	if err := m.Defer(base+300*PageSize, 2*PageSize); err != nil {
		t.Fatal(err)
	}
	m.Undefer(base+300*PageSize, 2*PageSize)
	if !m.IsStale(base+300*PageSize) || !m.IsStale(base+301*PageSize) {
		t.Error("a page deferred by two holders went fresh after one Undefer")
	}
	m.Undefer(base+300*PageSize, 2*PageSize)
	if m.IsStale(base + 300*PageSize) {
		t.Error("a page stayed stale after both holders undeferred it")
	}
	// munmap of pages 400..409 drops them, telling the holder.
	var dropped []uint64
	m.OnStaleDropped = func(page uint64) {
		dropped = append(dropped, page)
		m.Undefer(page, PageSize)
	}
	if err := m.Unmap(base+400*PageSize, 10*PageSize); err != nil {
		t.Fatal(err)
	}
	if len(dropped) != 10 || dropped[0] != base+400*PageSize || len(asked) != 1 {
		t.Errorf("munmap dropped %d pages (first %#x) and brought %d back, want 10 dropped", len(dropped), dropped, len(asked)-1)
	}
	if !m.IsStale(base+399*PageSize) || !m.IsStale(base+410*PageSize) {
		t.Error("munmap changed the marks of pages around it")
	}
	if hb := m.HostBytes(); hb > 8*PageSize {
		t.Errorf("the runs took %d bytes of host memory", hb)
	}
}

// BenchmarkDeferUntouched marks 1 GiB of untouched pages stale, as a
// launch that makes an array on the device does.
func BenchmarkDeferUntouched(b *testing.B) {
	const base, size = 0x10000000, 1 << 30
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		m := NewMemory(0)
		if err := m.Map(base, size, PermRead|PermWrite); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := m.Defer(base, size); err != nil {
			b.Fatal(err)
		}
	}
}
