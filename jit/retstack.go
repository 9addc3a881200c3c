package jit

import "unsafe"

// retStackWords is the size of the return stack in 8-byte words: each
// guest call in flight takes two (the guest return address and the host
// one), and the last retMargin bytes are left for the flags routines.
const (
	retStackWords = 8192
	retMargin     = 512
)

// retBottom is the guest return address of the return stack's bottom
// frame: a guest return that matches it (a return to this non-canonical
// address) lands in the miss routine, which leaves for Go.
const retBottom = ijcEmpty

// initRetStack lays out the return stack; the start and miss routines
// must be placed.
func (m *machine) initRetStack() {
	base := uintptr(unsafe.Pointer(&m.retStack[0]))
	m.retTop = base + 8*retStackWords
	m.exitSP = m.retTop - 8 // enter's CALL puts its return address there
	m.retLimit = base + retMargin
	m.clearIJC()
}

// emitStart emits the start routine, which enter calls with the code to
// run in rax: it pushes the return stack's bottom frame (retBottom and the
// miss routine as its host return address) under enter's return address,
// and jumps to the code.
func emitStart(a *asm) {
	a.movImm64(rcx, retBottom)
	a.push(rcx)
	a.encode(mnMovRM, 8, rcx, memOp(fieldMem(offMissFn)), 0)
	a.push(rcx)
	a.encode(mnJmpM, 4, 0, regOp(rax), 0)
}

// emitMiss emits the miss routine: the computed jump to machine.nextPC
// found no unit, in the jump cache or on the return stack, so it leaves
// for Go. Its exit word names unit 0, which Go does not read for it.
func emitMiss(a *asm) {
	a.movImm64(rax, exitWord(exitIndirect, 0, 0))
	a.exitToGo()
}

// exitToGo returns to enter with the exit word in rax, from whatever depth
// of the return stack: rsp goes back to machine.exitSP first.
func (a *asm) exitToGo() {
	a.encode(mnMovRM, 8, rsp, memOp(fieldMem(offExitSP)), 0)
	a.ret()
}

// callRel emits call rel32 to be bound with bind, and returns the
// displacement's offset.
func (a *asm) callRel() int {
	a.byte1(0xe8)
	at := a.pos()
	a.u32(0)
	return at
}
