//go:build linux && amd64

#include "textflag.h"
#include "go_asm.h"

// func enter(code, machine uintptr) uint64
//
// enter calls compiled code at code with the machine's address in R15, and
// the machine's mxIn as MXCSR. The code touches no stack but the return
// address this CALL pushes, and returns its exit word in AX. It may clobber
// every general register but SP and BP, and X0-X14 (the ABI0 wrapper
// restores R14 and X15). enter stores the MXCSR the code left in mxOut
// and restores the caller's.
TEXT ·enter(SB), NOSPLIT, $16-24
	MOVQ code+0(FP), AX
	MOVQ machine+8(FP), R15
	STMXCSR 0(SP)
	LDMXCSR machine_mxIn(R15)
	CALL AX
	MOVQ machine+8(FP), R15
	STMXCSR machine_mxOut(R15)
	LDMXCSR 0(SP)
	MOVQ AX, ret+16(FP)
	RET
