//go:build linux && amd64

#include "textflag.h"

// func enter(code, machine uintptr) uint64
//
// enter calls compiled code at code with the machine's address in R15. The
// code touches no stack but the return address this CALL pushes, and
// returns its exit word in AX. It may clobber every general register but
// SP and BP, and X0-X14 (the ABI0 wrapper restores R14 and X15).
TEXT ·enter(SB), NOSPLIT, $16-24
	MOVQ code+0(FP), AX
	MOVQ machine+8(FP), R15
	CALL AX
	MOVQ AX, ret+16(FP)
	RET
