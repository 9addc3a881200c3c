package gvinst

import (
	"testing"
	"unsafe"
)

func TestTLBLayout(t *testing.T) {
	if !tlbLayoutOK() {
		t.Fatal("tlbEntry or page is not laid out as TLBSlots documents; package jit probes them inline")
	}
	for _, pn := range []uint64{0, 1, 4095, 4096, 1 << 24, 0x7ffff_ffff, 0x12345_6789} {
		if got, want := TLBSlot(pn), pn%TLBSlots; got != want {
			t.Errorf("TLBSlot(%#x) = %d, want %d (the index jit emits)", pn, got, want)
		}
	}
	// Consecutive pages never share a slot (jit's one-compare probe
	// relies on it).
	for _, base := range []uint64{0, 1 << 12, 0x7ff << 12, 0xfff << 12, 1 << 24, 0x12345 << 12, 0xfffffffff << 12} {
		for pn := base - 4; pn != base+4; pn++ {
			if TLBSlot(pn) == TLBSlot(pn+1) {
				t.Errorf("pages %#x and %#x share TLB slot %d", pn, pn+1, TLBSlot(pn))
			}
		}
	}
}

// TestTLBEntryAddressesPage reads the TLB entries the way compiled code
// does: an address or'ed with PageSize-1 equals the tag of its page's
// entry, and the address plus the entry's host word is the host byte.
func TestTLBEntryAddressesPage(t *testing.T) {
	mem := NewMemory(0)
	const base = 0x7000_0000
	if err := mem.Map(base, 2*PageSize, PermRead|PermWrite); err != nil {
		t.Fatal(err)
	}
	for _, addr := range []uint64{base + 8, base + PageSize + 0xff8} {
		if err := mem.Store(addr, 8, addr^0x5a5a); err != nil {
			t.Fatal(err)
		}
		if _, err := mem.Load(addr, 8); err != nil {
			t.Fatal(err)
		}
		for _, tlb := range []*[tlbSize]tlbEntry{&mem.rtlb, &mem.wtlb} {
			e := &tlb[TLBSlot(addr/PageSize)]
			if e.tag != addr|(PageSize-1) {
				t.Fatalf("entry of %#x has tag %#x, want %#x", addr, e.tag, addr|(PageSize-1))
			}
			p := mem.pages[addr/PageSize]
			if e.p != p || e.host+uintptr(addr) != uintptr(unsafe.Pointer(&p.data[addr&pageMask])) {
				t.Fatalf("entry of %#x does not address the page's byte", addr)
			}
		}
	}
}
