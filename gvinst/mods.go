package gvinst

// Cmp is a comparison condition of CMP and VCMP, named as in PTX's setp.
// For integer types, lt/le/gt/ge order by the type's signedness. For float
// types, the plain conditions are ordered (false if either operand is NaN)
// and the ...u conditions are unordered (true if either is NaN).
type Cmp uint8

// The comparison conditions.
const (
	CmpEq Cmp = iota
	CmpNe
	CmpLt
	CmpLe
	CmpGt
	CmpGe
	CmpEqu
	CmpNeu
	CmpLtu
	CmpLeu
	CmpGtu
	CmpGeu
	CmpNum // neither is NaN
	CmpNan // either is NaN
	numCmps
)

var cmpNames = [numCmps]string{"eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"}

// String returns the condition's name.
func (c Cmp) String() string { return modName(cmpNames[:], uint8(c)) }

// Cond is an x86 condition code, numbered as in the low nibble of Jcc's
// opcode (o=0 … g=15).
type Cond uint8

// The x86 condition codes.
const (
	CondO Cond = iota
	CondNO
	CondB // CF
	CondAE
	CondE // ZF
	CondNE
	CondBE // CF or ZF
	CondA
	CondS
	CondNS
	CondP
	CondNP
	CondL // SF != OF
	CondGE
	CondLE // ZF or SF != OF
	CondG
	numConds
)

var condNames = [numConds]string{"o", "no", "b", "ae", "e", "ne", "be", "a", "s", "ns", "p", "np", "l", "ge", "le", "g"}

// String returns the condition's name.
func (c Cond) String() string { return modName(condNames[:], uint8(c)) }

// Negate returns the opposite condition.
func (c Cond) Negate() Cond { return c ^ 1 }

// Rounding is the rounding mode of a conversion or rounding op.
type Rounding uint8

// The rounding modes.
const (
	RoundNearest Rounding = iota // rn: to nearest, ties to even
	RoundZero                    // rz: toward zero (truncation)
	RoundDown                    // rm: toward minus infinity
	RoundUp                      // rp: toward plus infinity
	RoundMXCSR                   // dyn: as the guest's MXCSR says
	RoundX87                     // x87: as the guest's x87 control word says
	numRoundings
)

var roundNames = [numRoundings]string{"rn", "rz", "rm", "rp", "dyn", "x87"}

// String returns the mode's name.
func (r Rounding) String() string { return modName(roundNames[:], uint8(r)) }

// FlagKind names the operation whose x86 flags FLAGS records.
type FlagKind uint8

// The flag-setting operations recorded by FLAGS.k.t a, b, r, c. The
// interpreter stores CCOp = k | t<<8, CCA = a, CCB = b, CCR = r, CCC = c and
// computes flags from them when GETCC or GETFLAGS asks. All values are read
// as t-width; "sign" is bit t.Bits()-1; ZF, SF and PF (even parity of the low
// byte) always come from r unless said otherwise.
//
//	add   r = a+b:      CF = r <u a; OF = sign((a^r)&(b^r)); AF = bit 4 of a^b^r
//	sub   r = a-b:      CF = a <u b; OF = sign((a^b)&(a^r)); AF = bit 4 of a^b^r (cmp too)
//	adc   r = a+b+c:    CF = c ? r <=u a : r <u a; OF, AF as add
//	sbb   r = a-b-c:    CF = c ? a <=u b : a <u b; OF, AF as sub
//	logic r = a op b:   CF = OF = AF = 0 (and, or, xor, test)
//	inc   r = a+1:      CF unchanged (the interpreter saves the previous CF in
//	                    CCC when it executes FLAGS); OF, AF as add with b = 1
//	dec   r = a-1:      CF unchanged likewise; OF, AF as sub with b = 1
//	neg   r = -a:       CF = a != 0; OF = a == signmin; AF = bit 4 of a^r
//	shl   r = a<<b:     CF = bit t.Bits()-b of a; OF = sign(r) ^ CF; AF = 0
//	shr   r = a>>b:     CF = bit b-1 of a; OF = sign(a); AF = 0
//	sar   r = a>>b:     CF = bit b-1 of sext(a) (the sign for b ≥ bits); OF = 0; AF = 0
//	rol   r = rot(a,b): only CF and OF change: CF = bit 0 of r; OF = sign(r) ^ CF
//	ror   r = rot(a,b): only CF and OF change: CF = sign(r); OF = sign(r) ^ bit t.Bits()-2 of r
//	mul   a = high half of the product, r = low half: CF = OF = (for .sN) a is
//	                    not the sign extension of r, (for .uN) a != 0; AF = 0
//
// For shl, shr, sar, rol and ror, b is the count after x86's masking; a
// count of 0 leaves every flag unchanged. Operands a kind does not use (c for
// most kinds) are conventionally a copy of a. The interpreter may turn rol and
// ror (which keep the other flags) into FlagsNone with the result in RFLAGS.
const (
	FlagsNone FlagKind = iota // the flags live in RFLAGS
	FlagsAdd
	FlagsSub
	FlagsAdc
	FlagsSbb
	FlagsLogic // and, or, xor, test: CF = OF = 0
	FlagsInc
	FlagsDec
	FlagsNeg
	FlagsShl
	FlagsShr
	FlagsSar
	FlagsRol
	FlagsRor
	FlagsMul
	numFlagKinds
)

var flagKindNames = [numFlagKinds]string{"none", "add", "sub", "adc", "sbb", "logic", "inc", "dec", "neg", "shl", "shr", "sar", "rol", "ror", "mul"}

// String returns the kind's name.
func (k FlagKind) String() string { return modName(flagKindNames[:], uint8(k)) }

// TrapKind is the kind of fault that stops the guest.
type TrapKind uint8

// The trap kinds, with the signal a native run would receive.
const (
	TrapIllegal     TrapKind = iota // ud2 or an invalid encoding: SIGILL
	TrapUnsupported                 // an instruction gxbit does not implement: SIGILL
	TrapSegv                        // bad memory access: SIGSEGV
	TrapDivide                      // #DE: SIGFPE
	TrapBreakpoint                  // int3: SIGTRAP
	TrapHalt                        // a privileged instruction (hlt, cli, wrmsr, in, out, lgdt, int n, …) in user mode: #GP, SIGSEGV
	numTrapKinds
)

var trapKindNames = [numTrapKinds]string{"ill", "unsupported", "segv", "fpe", "brk", "hlt"}

// String returns the kind's name.
func (k TrapKind) String() string { return modName(trapKindNames[:], uint8(k)) }

func modName(names []string, v uint8) string {
	if int(v) < len(names) {
		return names[v]
	}
	return "?"
}

// modNames lists the names a modifier kind takes, indexed by value.
func modNames(k ModKind) []string {
	switch k {
	case ModCmp:
		return cmpNames[:]
	case ModX86Cond:
		return condNames[:]
	case ModRound:
		return roundNames[:]
	case ModFlags:
		return flagKindNames[:]
	case ModTrap:
		return trapKindNames[:]
	}
	return nil
}
