package jit

import (
	"unsafe"

	"github.com/gxbit/gxbit/gvinst"
)

// machine is the memory compiled code works on; r15 holds its address. It
// holds no Go pointers (the code writes it without write barriers), and
// lives on the heap, where it does not move.
type machine struct {
	frame  [gvinst.FrameSlots]uint64 // guest state slots, then the block's virtual registers
	fuel   int64                     // guest instructions left before the next unit entry exits
	nextPC uint64                    // the target of a computed jump, at exitIndirect
	rtlb   uintptr                   // the Memory's read TLB
	wtlb   uintptr                   // its write TLB
	mxIn   uint32                    // the MXCSR compiled code runs under: the guest's, every exception masked
	mxOut  uint32                    // the MXCSR it left, whose exception flags go back to the guest's
}

const (
	offFuel   = unsafe.Offsetof(machine{}.fuel)
	offNextPC = unsafe.Offsetof(machine{}.nextPC)
	offRTLB   = unsafe.Offsetof(machine{}.rtlb)
	offWTLB   = unsafe.Offsetof(machine{}.wtlb)
	offMXIn   = unsafe.Offsetof(machine{}.mxIn)
	offMXOut  = unsafe.Offsetof(machine{}.mxOut)
)
