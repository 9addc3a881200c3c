package gvinst

import "testing"

func TestTLBLayout(t *testing.T) {
	if !tlbLayoutOK() {
		t.Fatal("tlbEntry or page is not laid out as TLBSlots documents; package jit probes them inline")
	}
	for _, pn := range []uint64{0, 1, 4095, 4096, 1 << 24, 0x7ffff_ffff, 0x12345_6789} {
		if got, want := TLBSlot(pn), (pn+pn>>12<<1)%TLBSlots; got != want {
			t.Errorf("TLBSlot(%#x) = %d, want %d (the hash jit emits)", pn, got, want)
		}
	}
	// Consecutive pages never share a slot (jit's one-compare probe
	// relies on it), around every carry into the mixed-in bits too.
	for _, base := range []uint64{0, 1 << 12, 0x7ff << 12, 0xfff << 12, 1 << 24, 0x12345 << 12, 0xfffffffff << 12} {
		for pn := base - 4; pn != base+4; pn++ {
			if TLBSlot(pn) == TLBSlot(pn+1) {
				t.Errorf("pages %#x and %#x share TLB slot %d", pn, pn+1, TLBSlot(pn))
			}
		}
	}
}
