package jit

import (
	"testing"
	"unsafe"

	"github.com/gxbit/gxbit/gvinst"
)

// TestMachineLayout checks the page offsets machine's RATIONALE relies on:
// the machine starts on a page boundary, its fields lie at
// fieldsPageOffset.. within a page, the return stack's top at
// retTopPageOffset, and none of them shares its low 12 bits with the
// frame's guest state slots or its first virtual registers.
func TestMachineLayout(t *testing.T) {
	m := new(machine)
	if at := uintptr(unsafe.Pointer(m)) % 4096; at != 0 {
		t.Fatalf("a new machine starts at page offset %#x, want 0", at)
	}
	fields := map[string]uintptr{
		"fuel": unsafe.Offsetof(m.fuel), "nextPC": offNextPC, "rtlb": offRTLB, "wtlb": offWTLB,
		"mxIn": offMXIn, "mxOut": offMXOut, "mxTrap": offMXTrap, "flagsFn": offFlagsFn,
		"subCondsFn": offSubCondsFn, "tlbGen": offTLBGen, "goSP": unsafe.Offsetof(m.goSP),
		"retTop": unsafe.Offsetof(m.retTop), "exitSP": offExitSP, "retLimit": offRetLimit,
		"startFn": unsafe.Offsetof(m.startFn), "missFn": offMissFn,
	}
	for name, off := range fields {
		if p := off % 4096; p < fieldsPageOffset || p >= fieldsPageOffset+0x78 {
			t.Errorf("machine.%s at page offset %#x, want %#x..%#x", name, p, fieldsPageOffset, fieldsPageOffset+0x78)
		}
	}
	if p := unsafe.Offsetof(m.ijc) % 4096; p != fieldsPageOffset+0x78 {
		t.Errorf("machine.ijc at page offset %#x: the fields no longer take 0x78 bytes (fix retStackPad)", p)
	}
	m.initRetStack()
	if p := (m.retTop - uintptr(unsafe.Pointer(m))) % 4096; p != retTopPageOffset {
		t.Errorf("the return stack's top at page offset %#x, want %#x", p, retTopPageOffset)
	}
	// The frame's slots below the return stack's top: the guest state and
	// some 340 virtual registers.
	if last := uintptr(gvinst.NumGuestSlots) * 8; last >= retTopPageOffset {
		t.Errorf("the guest state slots end at %#x, past the return stack's top's page offset", last)
	}
}
