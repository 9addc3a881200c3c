package gvinst

import (
	"bytes"
	"errors"
	"math/rand"
	"testing"
)

// refMemory is the page-by-page model the range-based Memory must agree
// with: every mapped page with its permission and bytes.
type refMemory struct {
	pages map[uint64]*refPage
}

type refPage struct {
	perm Perm
	data [PageSize]byte
}

func (r *refMemory) mapRange(first, last uint64, perm Perm) {
	for pn := first; pn <= last; pn++ {
		r.pages[pn] = &refPage{perm: perm}
	}
}

// TestMemoryRangesMatchPages runs random maps, unmaps, protects, moves,
// discards, stores and loads on a Memory and on a page-by-page model, and
// checks after each that both agree on every page's mapping, permission
// and bytes, and on FindFree.
func TestMemoryRangesMatchPages(t *testing.T) {
	const span = 48 // pages the operations range over
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 40; round++ {
		m := NewMemory(0)
		ref := &refMemory{pages: map[uint64]*refPage{}}
		for step := 0; step < 60; step++ {
			first := uint64(rng.Intn(span))
			last := first + uint64(rng.Intn(span-int(first)))
			n := last - first + 1
			perm := Perm(rng.Intn(8))
			switch op := rng.Intn(7); op {
			case 0:
				if err := m.Map(first*PageSize, n*PageSize, perm); err != nil {
					t.Fatal(err)
				}
				ref.mapRange(first, last, perm)
			case 1:
				if err := m.Unmap(first*PageSize, n*PageSize); err != nil {
					t.Fatal(err)
				}
				for pn := first; pn <= last; pn++ {
					delete(ref.pages, pn)
				}
			case 2:
				err := m.Protect(first*PageSize, n*PageSize, perm)
				full := true
				for pn := first; pn <= last; pn++ {
					full = full && ref.pages[pn] != nil
				}
				if full != (err == nil) {
					t.Fatalf("Protect %d..%d: %v, model fully mapped %v", first, last, err, full)
				}
				if full {
					for pn := first; pn <= last; pn++ {
						ref.pages[pn].perm = perm
					}
				}
			case 3:
				addr := first*PageSize + uint64(rng.Intn(PageSize))
				v := rng.Uint64()
				err := m.Poke(addr, []byte{byte(v), byte(v >> 8)})
				rp, rq := ref.pages[addr/PageSize], ref.pages[(addr+1)/PageSize]
				if (rp != nil && rq != nil) != (err == nil) {
					t.Fatalf("Poke %#x: %v", addr, err)
				}
				if err == nil {
					rp.data[addr%PageSize] = byte(v)
					rq.data[(addr+1)%PageSize] = byte(v >> 8)
				}
			case 4:
				to := uint64(span + rng.Intn(span))
				if !m.IsFree(to*PageSize, n*PageSize) || !m.IsMapped(first*PageSize, n*PageSize) {
					continue
				}
				if err := m.Move(first*PageSize, to*PageSize, n*PageSize); err != nil {
					t.Fatal(err)
				}
				moved := map[uint64]*refPage{}
				for pn := first; pn <= last; pn++ {
					moved[pn-first+to] = ref.pages[pn]
					delete(ref.pages, pn)
				}
				for pn, p := range moved {
					ref.pages[pn] = p
				}
			case 5:
				err := m.Discard(first*PageSize, n*PageSize)
				full := true
				for pn := first; pn <= last; pn++ {
					full = full && ref.pages[pn] != nil
				}
				if full != (err == nil) {
					t.Fatalf("Discard %d..%d: %v, model fully mapped %v", first, last, err, full)
				}
				if full {
					for pn := first; pn <= last; pn++ {
						ref.pages[pn].data = [PageSize]byte{}
					}
				}
			case 6:
				addr := first * PageSize
				err := m.Store(addr+8, 8, 0x0102030405060708)
				rp := ref.pages[first]
				if (rp != nil && rp.perm&PermWrite != 0) != (err == nil) {
					t.Fatalf("Store %#x: %v (model %v)", addr, err, rp)
				}
				if err == nil {
					copy(rp.data[8:], []byte{8, 7, 6, 5, 4, 3, 2, 1})
				}
			}
			checkAgainstModel(t, m, ref, 2*span)
		}
	}
}

func checkAgainstModel(t *testing.T, m *Memory, ref *refMemory, span uint64) {
	t.Helper()
	var buf [PageSize]byte
	for pn := uint64(0); pn < span; pn++ {
		perm, ok := m.PermAt(pn * PageSize)
		rp := ref.pages[pn]
		if ok != (rp != nil) || ok && perm != rp.perm {
			t.Fatalf("page %d: mapped %v perm %v; model %+v", pn, ok, perm, rp)
		}
		if !ok {
			continue
		}
		if err := m.Peek(pn*PageSize, buf[:]); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf[:], rp.data[:]) {
			t.Fatalf("page %d: bytes differ from the model", pn)
		}
		if v, err := m.Load(pn*PageSize+8, 8); (err == nil) != (perm&PermRead != 0) {
			t.Fatalf("Load page %d (%v): %v", pn, perm, err)
		} else if err == nil && v != uint64FromBytes(rp.data[8:16]) {
			t.Fatalf("Load page %d = %#x", pn, v)
		}
	}
	// HasPerm over every span of up to four pages, for each permission.
	for first := uint64(0); first < span; first++ {
		for n := uint64(1); n <= 4 && first+n <= span; n++ {
			for _, want := range []Perm{PermRead, PermWrite, PermRead | PermWrite} {
				model := true
				for pn := first; pn < first+n; pn++ {
					model = model && ref.pages[pn] != nil && ref.pages[pn].perm&want == want
				}
				if got := m.HasPerm(first*PageSize+7, n*PageSize-8, want); got != model {
					t.Fatalf("HasPerm(pages %d..%d, %v) = %v, model %v", first, first+n-1, want, got, model)
				}
			}
		}
	}
	if m.Mapped() != uint64(len(ref.pages))*PageSize {
		t.Fatalf("Mapped = %d, model %d pages", m.Mapped(), len(ref.pages))
	}
	for size := uint64(1); size <= 4; size++ {
		got, gok := m.FindFree(size*PageSize, 2*PageSize, span*PageSize)
		want, wok := uint64(0), false
		for at := span - size; at >= 2 && !wok; at-- {
			free := true
			for pn := at; pn < at+size; pn++ {
				free = free && ref.pages[pn] == nil
			}
			if free {
				want, wok = at*PageSize, true
			}
		}
		if got != want || gok != wok {
			t.Fatalf("FindFree(%d pages) = %#x %v, model %#x %v", size, got, gok, want, wok)
		}
	}
}

func uint64FromBytes(b []byte) uint64 {
	v := uint64(0)
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// TestMemoryHugeMapIsCheap is the regression test for issue 12 item 5:
// mapping, protecting, moving and unmapping 2^46 bytes must cost time in
// the number of mappings, and host memory only for the pages touched.
func TestMemoryHugeMapIsCheap(t *testing.T) {
	m := NewMemory(0)
	const huge = 1 << 46
	if err := m.Map(0x10000000, huge, PermRead|PermWrite); err != nil {
		t.Fatal(err)
	}
	if v, err := m.Load(0x10000000+huge/2, 8); err != nil || v != 0 {
		t.Fatalf("untouched page reads %#x, %v", v, err)
	}
	if m.HostBytes() != 0 {
		t.Errorf("reading an untouched page took %d bytes of host memory", m.HostBytes())
	}
	if err := m.Store(0x10000000+huge-8, 8, 42); err != nil {
		t.Fatal(err)
	}
	if m.HostBytes() != PageSize {
		t.Errorf("one store took %d bytes of host memory", m.HostBytes())
	}
	if err := m.Protect(0x10000000, huge, PermRead); err != nil {
		t.Fatal(err)
	}
	if err := m.Store(0x10000000, 1, 1); err == nil {
		t.Error("store to a read-only huge mapping succeeded")
	}
	to := uint64(0x10000000 + 2*huge)
	if err := m.Move(0x10000000, to, huge); err != nil {
		t.Fatal(err)
	}
	if v, err := m.Load(to+huge-8, 8); err != nil || v != 42 {
		t.Errorf("moved page reads %#x, %v", v, err)
	}
	if a, ok := m.FindFree(huge, 0, 1<<47); !ok || a != 1<<47-huge {
		t.Errorf("FindFree = %#x, %v", a, ok)
	}
	if err := m.Unmap(0, 1<<48); err != nil {
		t.Fatal(err)
	}
	if m.Mapped() != 0 || m.HostBytes() != 0 {
		t.Errorf("after unmapping everything: mapped %d, host %d", m.Mapped(), m.HostBytes())
	}
	limited := NewMemory(1 << 30)
	if err := limited.Map(0, 1<<40, PermRead); !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("2^40 bytes over a 1 GiB limit: %v", err)
	}
	if limited.Mapped() != 0 {
		t.Errorf("a refused map left %d bytes mapped", limited.Mapped())
	}
}
