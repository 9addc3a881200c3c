package gvinst

import (
	"runtime/debug"
	"testing"
)

// The guest memory throughput of phase 2's copies: bringing back pages
// from the device (Poke, 8 MiB at a time, as a Resident's staging buffer
// holds) and reading pages to copy in (Peek). Each reports bytes a second
// (go test -bench GuestCopy ./gvinst); "memcpy" is the same copy between
// two host buffers whose pages exist, the speed to reach, and
// "poke-recycled" bringing back into the host memory of pages released
// before (Release).
//
// Fresh host memory is what a run brings back into: an array the device
// made has no host page yet. Every iteration but the memcpy one hands the
// Go heap's free pages back to the system first (debug.FreeOSMemory), so
// that its pages cost what a first touch costs.

const (
	guestCopyBase  = 0x10000000
	guestCopySize  = 64 << 20
	guestCopyChunk = 8 << 20
)

// BenchmarkGuestCopy measures each way a page's bytes cross.
func BenchmarkGuestCopy(b *testing.B) {
	src := make([]byte, guestCopyChunk)
	for i := range src {
		src[i] = byte(i * 7)
	}
	b.Run("memcpy", func(b *testing.B) {
		dst := make([]byte, guestCopySize)
		for i := range dst {
			dst[i] = 1
		}
		b.SetBytes(guestCopySize)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for off := 0; off < guestCopySize; off += guestCopyChunk {
				copy(dst[off:], src)
			}
		}
	})
	poke := func(b *testing.B, prepare func(m *Memory), before func(m *Memory, addr uint64)) {
		b.SetBytes(guestCopySize)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			m := NewMemory(0)
			if err := m.Map(guestCopyBase, guestCopySize, PermRead|PermWrite); err != nil {
				b.Fatal(err)
			}
			prepare(m)
			debug.FreeOSMemory()
			b.StartTimer()
			for off := uint64(0); off < guestCopySize; off += guestCopyChunk {
				if before != nil {
					before(m, guestCopyBase+off)
				}
				if err := m.Poke(guestCopyBase+off, src); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	// Pages the guest wrote before (an array initialised on the CPU).
	b.Run("poke-present", func(b *testing.B) {
		poke(b, func(m *Memory) {
			for off := uint64(0); off < guestCopySize; off += guestCopyChunk {
				if err := m.Poke(guestCopyBase+off, src); err != nil {
					b.Fatal(err)
				}
			}
		}, nil)
	})
	// Pages no one touched.
	b.Run("poke-untouched", func(b *testing.B) { poke(b, func(*Memory) {}, nil) })
	// Pages an array born on the device left stale (runs of them), each
	// undeferred before the Poke as a Resident's bring-back does.
	b.Run("poke-stale", func(b *testing.B) {
		poke(b, func(m *Memory) {
			if err := m.Defer(guestCopyBase, guestCopySize); err != nil {
				b.Fatal(err)
			}
		}, func(m *Memory, addr uint64) {
			for p := addr; p < addr+guestCopyChunk; p += PageSize {
				m.Undefer(p, PageSize)
			}
		})
	})
	// Pages no one touched, each chunk after the guest's pages of the one
	// before were released (a holder reading forward through an array
	// born on the device, keeping a window of it): fill reuses their
	// host memory.
	b.Run("poke-recycled", func(b *testing.B) {
		b.SetBytes(guestCopySize)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			m := NewMemory(0)
			if err := m.Map(guestCopyBase, guestCopySize+guestCopyChunk, PermRead|PermWrite); err != nil {
				b.Fatal(err)
			}
			if err := m.Poke(guestCopyBase, src); err != nil {
				b.Fatal(err)
			}
			debug.FreeOSMemory()
			b.StartTimer()
			for off := uint64(0); off < guestCopySize; off += guestCopyChunk {
				if _, err := m.Release(guestCopyBase+off, guestCopyChunk); err != nil {
					b.Fatal(err)
				}
				if err := m.Poke(guestCopyBase+off+guestCopyChunk, src); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	// Reading pages the guest wrote, to copy them in.
	b.Run("peek-present", func(b *testing.B) {
		m := NewMemory(0)
		if err := m.Map(guestCopyBase, guestCopySize, PermRead|PermWrite); err != nil {
			b.Fatal(err)
		}
		for off := uint64(0); off < guestCopySize; off += guestCopyChunk {
			if err := m.Poke(guestCopyBase+off, src); err != nil {
				b.Fatal(err)
			}
		}
		dst := make([]byte, guestCopyChunk)
		b.SetBytes(guestCopySize)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for off := uint64(0); off < guestCopySize; off += guestCopyChunk {
				if err := m.Peek(guestCopyBase+off, dst); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
