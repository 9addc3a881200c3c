package gvinst

import (
	"fmt"
	"strconv"
	"strings"
)

// Reg is an index into the frame of 64-bit slots an interpreter or a kernel
// works on. Indexes below NumGuestSlots name guest state; the rest are the
// virtual registers of a VBlock (v0 is NumGuestSlots).
type Reg uint32

// The guest state slots. The general registers follow x86-64's encoding
// order: s0=rax s1=rcx s2=rdx s3=rbx s4=rsp s5=rbp s6=rsi s7=rdi s8…s15=r8…r15.
const (
	S0  Reg = 0 // rax
	S1  Reg = 1 // rcx
	S2  Reg = 2 // rdx
	S3  Reg = 3 // rbx
	S4  Reg = 4 // rsp
	S5  Reg = 5 // rbp
	S6  Reg = 6 // rsi
	S7  Reg = 7 // rdi
	S15 Reg = 15

	// X0 is the first of 16 SSE registers, two slots each (low, high):
	// xN is slot X0+2N.
	X0 Reg = 16

	FSBase Reg = 48 // fs segment base (thread pointer)
	GSBase Reg = 49 // gs segment base

	// The lazy flags state. FLAGS writes CCOp (the FlagKind and type of the
	// last flag-setting operation), CCA and CCB (its operands), CCR (its
	// result) and CCC (its carry in, or the previous CF for inc/dec). GETCC
	// and GETFLAGS compute flags from them on demand. CCOp == 0 means the
	// arithmetic flags are stored in RFLAGS itself.
	CCOp Reg = 50
	CCA  Reg = 51
	CCB  Reg = 52
	CCR  Reg = 53
	CCC  Reg = 54
	// RFLAGS holds DF and the other system bits, and the arithmetic flags
	// while CCOp is 0.
	RFLAGS Reg = 55
	MXCSR  Reg = 56 // SSE control and status

	// The x87 state.
	FPCW  Reg = 57 // control word
	FPSW  Reg = 58 // status word without TOP
	FPTop Reg = 59 // TOP of the register stack, 0..7
	FPTag Reg = 60 // tag word: bit i set when physical register i is empty
	// FR0 is the first of the 8 physical x87 registers, two slots each
	// (significand, then sign and exponent): FRn is slot FR0+2n.
	FR0 Reg = 61

	// NumGuestSlots is the number of guest state slots; v0 is the slot after.
	NumGuestSlots Reg = 77
)

// SReg returns the slot of general register sN.
func SReg(n int) Reg { return Reg(n) }

// XReg returns the first slot of SSE register xN.
func XReg(n int) Reg { return X0 + Reg(2*n) }

// FReg returns the first slot of physical x87 register n.
func FReg(n int) Reg { return FR0 + Reg(2*n) }

// VReg returns the slot of virtual register vN.
func VReg(n int) Reg { return NumGuestSlots + Reg(n) }

// IsVirtual reports whether r is a virtual register.
func (r Reg) IsVirtual() bool { return r >= NumGuestSlots }

// VIndex is N for the virtual register vN.
func (r Reg) VIndex() int { return int(r - NumGuestSlots) }

var namedSlots = map[Reg]string{
	FSBase: "fsbase", GSBase: "gsbase",
	CCOp: "cc_op", CCA: "cc_a", CCB: "cc_b", CCR: "cc_r", CCC: "cc_c",
	RFLAGS: "rflags", MXCSR: "mxcsr",
	FPCW: "fpcw", FPSW: "fpsw", FPTop: "fptop", FPTag: "fptag",
}

// GuestSlotName returns the text name of a guest slot that starts a value:
// "s3", "x2" (for the slot pair of x2), "fr5", "cc_op", …; ok is false for a
// slot that is the second half of a pair, or not a guest slot.
func GuestSlotName(r Reg) (name string, ok bool) {
	switch {
	case r < X0:
		return "s" + strconv.Itoa(int(r)), true
	case r < FSBase:
		if (r-X0)%2 != 0 {
			return "", false
		}
		return "x" + strconv.Itoa(int(r-X0)/2), true
	case r >= FR0 && r < NumGuestSlots:
		if (r-FR0)%2 != 0 {
			return "", false
		}
		return "fr" + strconv.Itoa(int(r-FR0)/2), true
	}
	n, ok := namedSlots[r]
	return n, ok
}

// startsGuestValue reports whether guest slot r starts a value: whether
// GuestSlotName has a name for it, without making the name (Verify asks
// for every operand).
func startsGuestValue(r Reg) bool {
	switch {
	case r < X0:
		return true
	case r < FSBase:
		return (r-X0)%2 == 0
	case r >= FR0 && r < NumGuestSlots:
		return (r-FR0)%2 == 0
	}
	_, ok := namedSlots[r]
	return ok
}

// String returns the text form of r: "v12" for a virtual register, the guest
// slot name otherwise.
func (r Reg) String() string {
	if r.IsVirtual() {
		return "v" + strconv.Itoa(r.VIndex())
	}
	if n, ok := GuestSlotName(r); ok {
		return n
	}
	if r < NumGuestSlots {
		return fmt.Sprintf("slot%d", uint32(r))
	}
	return fmt.Sprintf("reg%d", uint32(r))
}

// ParseReg parses a register name: vN, sN, xN, frN or a named guest slot.
func ParseReg(s string) (Reg, bool) {
	num := func(prefix string, limit int) (int, bool) {
		if !strings.HasPrefix(s, prefix) {
			return 0, false
		}
		n, err := strconv.Atoi(s[len(prefix):])
		if err != nil || n < 0 || (limit > 0 && n >= limit) || strconv.Itoa(n) != s[len(prefix):] {
			return 0, false
		}
		return n, true
	}
	if n, ok := num("v", 1<<24); ok {
		return VReg(n), true
	}
	if n, ok := num("s", 16); ok {
		return SReg(n), true
	}
	if n, ok := num("x", 16); ok {
		return XReg(n), true
	}
	if n, ok := num("fr", 8); ok {
		return FReg(n), true
	}
	for r, name := range namedSlots {
		if name == s {
			return r, true
		}
	}
	return 0, false
}
