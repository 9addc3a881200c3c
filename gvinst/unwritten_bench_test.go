package gvinst

import "testing"

// BenchmarkUnwritten measures looking for pages nothing wrote in 64 MiB
// the guest wrote every page of (a launch's copy in asks before copying).
func BenchmarkUnwritten(b *testing.B) {
	m := NewMemory(0)
	if err := m.Map(guestCopyBase, guestCopySize, PermRead|PermWrite); err != nil {
		b.Fatal(err)
	}
	src := make([]byte, guestCopyChunk)
	for off := uint64(0); off < guestCopySize; off += guestCopyChunk {
		if err := m.Poke(guestCopyBase+off, src); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(guestCopySize)
	for i := 0; i < b.N; i++ {
		if runs := m.Unwritten(guestCopyBase, guestCopySize, 16); len(runs) != 0 {
			b.Fatal(runs)
		}
	}
}
