//go:build linux && amd64

#include "textflag.h"
#include "go_asm.h"

// func enter(code, machine uintptr) uint64
//
// enter calls compiled code at code with the machine's address in R15, its
// fuel in BP (fuelReg) and its mxIn as MXCSR, on the machine's return
// stack (retStack: SP switches to retTop, and the start routine pushes
// the bottom frame and jumps to code); it returns its exit word in AX. It
// may clobber every general register but SP, and X0-X14 (the ABI0 wrapper
// restores R14 and X15). enter stores the fuel left in the machine, and
// the MXCSR the code left in mxOut, and restores the caller's MXCSR; the
// epilogue the assembler adds to this frame restores the caller's BP,
// which nothing reads in between (the code calls nothing, and Go unwinds
// no frame of a signal that interrupts code it does not know).
TEXT ·enter(SB), NOSPLIT, $16-24
	MOVQ code+0(FP), AX
	MOVQ machine+8(FP), R15
	STMXCSR 0(SP)
	LDMXCSR machine_mxIn(R15)
	MOVQ machine_fuel(R15), BP
	MOVQ SP, machine_goSP(R15)
	MOVQ machine_retTop(R15), SP
	CALL machine_startFn(R15)
	MOVQ machine_goSP(R15), SP
	MOVQ machine+8(FP), R15
	MOVQ BP, machine_fuel(R15)
	LEAQ 16(SP), BP
	STMXCSR machine_mxOut(R15)
	LDMXCSR 0(SP)
	MOVQ AX, ret+16(FP)
	RET
