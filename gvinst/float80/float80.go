// Package float80 implements the x87 80-bit extended-precision floating-point
// format in software, exact to the bit, for the interpreter's x87 instructions.
//
// A value is an F80: a 64-bit significand with an explicit integer bit and a
// 16-bit sign-and-exponent word, exactly as the x87 keeps it in a register and
// in its 10-byte memory form. Every operation that can round or raise an
// exception is a method of Env, which holds the rounding and precision control
// fields of the x87 control word and accumulates the exception flags of the
// status word. Results are those the x87 delivers with all exceptions masked.
//
// The basic operations (add, subtract, multiply, divide, square root,
// remainders, rounding, scaling, comparisons and every conversion) are
// computed exactly in 64- and 128-bit integer arithmetic and rounded once, so
// they match the hardware bit for bit, flags and condition codes included.
//
// The transcendental instructions (F2XM1, FYL2X, FYL2XP1, FPATAN, FSIN, FCOS,
// FSINCOS, FPTAN) are evaluated with math/big at 160 bits (series after table
// or argument reduction, error far below 2^-140 relative) and rounded once to
// the 64-bit format, so results are correctly rounded: within 1/2 ulp when
// rounding to nearest and within 1 ulp in the directed modes. Two hardware
// behaviours are reproduced rather than corrected: FSIN, FCOS, FSINCOS and
// FPTAN reduce their argument modulo the x87's 66-bit value of π, and tiny
// arguments take the x87's shortcuts (see Sin, Tan and Patan). The hardware's
// own results are not always correctly rounded, so a real x87 differs from
// this package by exactly 1 ulp on a few per cent of arguments (measured by
// the package's differential tests; never by more than 1 ulp).
//
// # The reference CPU
//
// The package gives the same result on every host: it is pure Go and never
// asks the host FPU. Where x87 implementations disagree, it follows one
// reference, an Intel x87 (the recorded answers come from an Intel Xeon):
// its status word (C1 as "rounded up",
// the tiny-argument shortcuts, the underflow boundary) and, within the
// 1-ulp bound above, its transcendental results. AMD's x87 rounds some
// transcendental results the other way (1 ulp, on 2 to 20 per cent of
// arguments), sets C1 differently, and returns denormal results where
// Intel rounds up to the smallest normal; gxbit does not follow it.
// testdata/x87_reference.txt holds 6,400 transcendental cases with the
// reference CPU's answers; TestTranscendentalReference checks the package
// against them on any host, and TestDifferentialTranscendental checks
// against the host FPU fully only on the reference vendor, elsewhere within
// the 1-ulp bound.
//
// RATIONALE: the interpreter needs results that are identical to a real x87,
// because libc prints long doubles digit by digit from them; a float64
// stand-in prints wrong digits. Exactness for the basic operations comes from
// integer arithmetic; math/big is used only where a function has to be
// approximated.
package float80

import "math/bits"

// F80 is an x87 extended-precision value in its register and memory layout.
type F80 struct {
	// Mant is the significand; bit 63 is the explicit integer bit.
	Mant uint64
	// SignExp holds the sign in bit 15 and the biased exponent (bias 16383)
	// in bits 0 to 14.
	SignExp uint16
}

const (
	expBias  = 16383
	expMask  = 0x7FFF
	signBit  = 0x8000
	intBit   = uint64(1) << 63
	quietBit = uint64(1) << 62
	extEmin  = -16382
	extEmax  = 16383
)

// FromBytes decodes the 10-byte little-endian memory form used by FLD m80.
func FromBytes(b [10]byte) F80 {
	var m uint64
	for i := 7; i >= 0; i-- {
		m = m<<8 | uint64(b[i])
	}
	return F80{Mant: m, SignExp: uint16(b[8]) | uint16(b[9])<<8}
}

// Bytes encodes a in the 10-byte little-endian memory form used by FSTP m80.
func (a F80) Bytes() [10]byte {
	var b [10]byte
	for i := 0; i < 8; i++ {
		b[i] = byte(a.Mant >> (8 * i))
	}
	b[8] = byte(a.SignExp)
	b[9] = byte(a.SignExp >> 8)
	return b
}

// String formats a as its sign-and-exponent word and significand in hex,
// "SSSS:MMMMMMMMMMMMMMMM", the form the tests and the x87 reference use.
func (a F80) String() string {
	const hex = "0123456789abcdef"
	var b [21]byte
	for i := 0; i < 4; i++ {
		b[i] = hex[a.SignExp>>(12-4*i)&0xF]
	}
	b[4] = ':'
	for i := 0; i < 16; i++ {
		b[5+i] = hex[a.Mant>>(60-4*i)&0xF]
	}
	return string(b[:])
}

// Neg reports whether the sign bit of a is set.
func (a F80) Neg() bool { return a.SignExp&signBit != 0 }

// Exp returns the biased exponent field of a.
func (a F80) Exp() uint16 { return a.SignExp & expMask }

// Abs returns a with its sign bit cleared (FABS); it raises no exception.
func Abs(a F80) F80 { return F80{a.Mant, a.SignExp &^ signBit} }

// Negate returns a with its sign bit inverted (FCHS); it raises no exception.
func Negate(a F80) F80 { return F80{a.Mant, a.SignExp ^ signBit} }

// Indefinite returns the x87 default NaN, "real indefinite" (0xFFFF
// C000000000000000), the result of masked invalid operations.
func Indefinite() F80 { return F80{Mant: 0xC000000000000000, SignExp: 0xFFFF} }

// Inf returns an infinity with the given sign.
func Inf(neg bool) F80 { return F80{Mant: intBit, SignExp: signOf(neg) | expMask} }

// Zero returns a zero with the given sign.
func Zero(neg bool) F80 { return F80{SignExp: signOf(neg)} }

// One returns +1.0, the value FLD1 loads.
func One() F80 { return F80{Mant: intBit, SignExp: expBias} }

func signOf(neg bool) uint16 {
	if neg {
		return signBit
	}
	return 0
}

// kind is the internal classification used to dispatch special cases.
type kind uint8

const (
	kZero kind = iota
	kNormal
	kDenormal // includes pseudo-denormals (exponent 0, integer bit set)
	kInf
	kQNaN
	kSNaN
	kUnsupported // unnormals, pseudo-NaNs, pseudo-infinities
)

func (a F80) kind() kind {
	switch e := a.Exp(); {
	case e == 0:
		if a.Mant == 0 {
			return kZero
		}
		return kDenormal
	case e == expMask:
		switch {
		case a.Mant&intBit == 0:
			return kUnsupported
		case a.Mant<<1 == 0:
			return kInf
		case a.Mant&quietBit != 0:
			return kQNaN
		default:
			return kSNaN
		}
	default:
		if a.Mant&intBit == 0 {
			return kUnsupported
		}
		return kNormal
	}
}

func isNaN(k kind) bool { return k == kQNaN || k == kSNaN }

// unpack returns the value of a finite non-zero a as (-1)^neg * m * 2^(exp-63)
// with m normalized (bit 63 set).
func unpack(a F80) (neg bool, exp int32, m uint64) {
	e := int32(a.Exp())
	if e == 0 {
		e = 1
	}
	m = a.Mant
	n := bits.LeadingZeros64(m)
	m <<= uint(n)
	return a.Neg(), e - expBias - int32(n), m
}

// IsNaN reports whether a is a NaN (quiet or signaling) in a supported
// encoding.
func IsNaN(a F80) bool { return isNaN(a.kind()) }

// Class is the FXAM classification of a value; its numeric value holds the
// condition code bits C3, C2 and C0 in bits 2, 1 and 0.
type Class uint8

// FXAM classes. ClassEmpty is never returned by Examine (emptiness is a tag
// property the caller knows); it is listed so callers can encode C3:C2:C0.
const (
	ClassUnsupported Class = 0 // C3=0 C2=0 C0=0
	ClassNaN         Class = 1 // C3=0 C2=0 C0=1
	ClassNormal      Class = 2 // C3=0 C2=1 C0=0
	ClassInfinity    Class = 3 // C3=0 C2=1 C0=1
	ClassZero        Class = 4 // C3=1 C2=0 C0=0
	ClassEmpty       Class = 5 // C3=1 C2=0 C0=1
	ClassDenormal    Class = 6 // C3=1 C2=1 C0=0
)

// CC returns the condition code bits of c: C0, C2 and C3 as FXAM sets them.
func (c Class) CC() (c0, c2, c3 bool) { return c&1 != 0, c&2 != 0, c&4 != 0 }

// Examine classifies a as FXAM does; neg is the sign bit (C1).
func Examine(a F80) (c Class, neg bool) {
	switch a.kind() {
	case kZero:
		c = ClassZero
	case kNormal:
		c = ClassNormal
	case kDenormal:
		c = ClassDenormal
	case kInf:
		c = ClassInfinity
	case kQNaN, kSNaN:
		c = ClassNaN
	default:
		c = ClassUnsupported
	}
	return c, a.Neg()
}
