package gvinst

import (
	"bytes"
	"runtime"
	"testing"
)

// TestPokeFillsRunsTogether checks that a Poke over untouched pages gives
// them bytes from shared allocations, not one a page (bringing back an
// array born on the device wrote into untouched guest memory at 2-3 GB/s,
// a page allocated at a time), and that the pages stay pages of their
// own: each holds what was written to it, a page written before keeps
// its bytes, and a later write to one changes no other.
func TestPokeFillsRunsTogether(t *testing.T) {
	const base, pages = 0x10000000, 64
	m := NewMemory(0)
	if err := m.Map(base, 2*pages*PageSize, PermRead|PermWrite); err != nil {
		t.Fatal(err)
	}
	if err := m.Poke(base+5*PageSize, []byte{7}); err != nil { // a page with bytes already
		t.Fatal(err)
	}
	buf := make([]byte, pages*PageSize)
	for i := range buf {
		buf[i] = byte(i / PageSize)
	}
	buf[5*PageSize] = 9
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := m.Poke(base, buf); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if allocs := after.Mallocs - before.Mallocs; allocs > pages*3/2 {
		// A page's entry is an allocation of its own, its bytes are not.
		t.Errorf("a Poke of %d untouched pages made %v allocations, want about one a page (its entry)", pages, allocs)
	}
	got := make([]byte, len(buf))
	if err := m.Read(base, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, buf) {
		t.Fatal("the pages do not hold what the Poke wrote")
	}
	if err := m.Write(base+3*PageSize, bytes.Repeat([]byte{0xff}, PageSize)); err != nil {
		t.Fatal(err)
	}
	if err := m.Read(base, got); err != nil {
		t.Fatal(err)
	}
	for p := 0; p < pages; p++ {
		want := buf[p*PageSize : (p+1)*PageSize]
		if p == 3 {
			want = bytes.Repeat([]byte{0xff}, PageSize)
		}
		if !bytes.Equal(got[p*PageSize:(p+1)*PageSize], want) {
			t.Errorf("page %d changed by a write to page 3", p)
		}
	}
	if hb, want := m.HostBytes(), uint64(pages*PageSize); hb != want {
		t.Errorf("host bytes %d, want the %d pages' %d", hb, pages, want)
	}
}

// BenchmarkPokeUntouched writes 60 MB into untouched guest pages, 5 MB a
// Poke, as bringing back an array born on the device does.
func BenchmarkPokeUntouched(b *testing.B) {
	const base, size, chunk = 0x10000000, 60 << 20, 5 << 20
	buf := make([]byte, chunk)
	b.SetBytes(size)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		m := NewMemory(0)
		if err := m.Map(base, size, PermRead|PermWrite); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for off := uint64(0); off < size; off += chunk {
			if err := m.Poke(base+off, buf); err != nil {
				b.Fatal(err)
			}
		}
	}
}
