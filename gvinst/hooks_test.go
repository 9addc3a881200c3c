package gvinst

import "testing"

func TestTLBLayout(t *testing.T) {
	if !tlbLayoutOK() {
		t.Fatal("tlbEntry or page is not laid out as TLBSlots documents; package jit probes them inline")
	}
	for _, pn := range []uint64{0, 1, 4095, 4096, 1 << 24, 0x7ffff_ffff, 0x12345_6789} {
		if got, want := TLBSlot(pn), (pn^pn>>12^pn>>24)%TLBSlots; got != want {
			t.Errorf("TLBSlot(%#x) = %d, want %d (the hash jit emits)", pn, got, want)
		}
	}
}
