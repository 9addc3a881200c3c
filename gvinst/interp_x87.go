package gvinst

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gxbit/gxbit/gvinst/float80"
)

// The x87 status word bits the interpreter maintains in FPSW (TOP lives in
// FPTop, not in FPSW).
const (
	fswExceptions = 0x3f   // IE DE ZE OE UE PE, sticky
	fswSF         = 1 << 6 // stack fault
	fswES         = 1 << 7 // exception summary
	fswC0         = 1 << 8
	fswC1         = 1 << 9
	fswC2         = 1 << 10
	fswC3         = 1 << 14
	fswB          = 1 << 15 // busy (mirrors ES)
	fswCC         = fswC0 | fswC1 | fswC2 | fswC3
)

// errX87Unmasked is wrapped by the error of an x87 operation that raised an
// exception its control word does not mask. Natively the next x87
// instruction would deliver SIGFPE; the interpreter stops the guest at once.
var errX87Unmasked = errors.New("unmasked x87 floating-point exception (SIGFPE natively)")

// x87Consts holds the values FCONST loads, for each rounding control: the
// constants are rounded per RC, as the hardware does, and computing them
// takes math/big, so they are computed once.
var x87Consts = sync.OnceValue(func() (t [4][7]float80.F80) {
	for rc := range t {
		e := float80.Env{Rounding: float80.Rounding(rc)}
		t[rc][0] = float80.One()
		t[rc][1] = e.Const(float80.ConstL2T)
		t[rc][2] = e.Const(float80.ConstL2E)
		t[rc][3] = e.Const(float80.ConstPi)
		t[rc][4] = e.Const(float80.ConstLG2)
		t[rc][5] = e.Const(float80.ConstLN2)
		t[rc][6] = float80.Zero(false)
	}
	return t
})

// f80At reads the .f80 value in frame slots r, r+1.
func f80At(f *frame, r Reg) float80.F80 {
	return float80.F80{Mant: f[uint16(r)], SignExp: uint16(f[uint16(r+1)])}
}

// setF80 writes v to frame slots r, r+1.
func setF80(f *frame, r Reg, v float80.F80) {
	f[uint16(r)], f[uint16(r+1)] = v.Mant, uint64(v.SignExp)
}

// x87Env is the float80 environment of the guest's control word.
func x87Env(f *frame) float80.Env { return float80.NewEnv(uint16(f[FPCW])) }

// x87EnvRounding is the environment with the rounding control replaced by
// r unless r is RoundX87 (or dyn, which means the same for x87 values).
func x87EnvRounding(f *frame, r Rounding) float80.Env {
	e := x87Env(f)
	switch r {
	case RoundNearest:
		e.Rounding = float80.RoundNearest
	case RoundZero:
		e.Rounding = float80.RoundZero
	case RoundDown:
		e.Rounding = float80.RoundDown
	case RoundUp:
		e.Rounding = float80.RoundUp
	}
	return e
}

// x87Raise ORs the exception flags of e into the status word and sets C1
// from e's rounded-up report when setC1 is true. It returns an error when a
// raised exception is unmasked in the control word (ES and B are then set,
// as the hardware sets them).
func x87Raise(f *frame, e *float80.Env, setC1 bool) error {
	fl := uint64(e.Flags)
	f[FPSW] |= fl & fswExceptions
	if setC1 {
		f[FPSW] = f[FPSW]&^fswC1 | fl&uint64(float80.FlagRoundedUp)
	}
	if fl&fswExceptions&^f[FPCW] != 0 {
		f[FPSW] |= fswES | fswB
		return fmt.Errorf("%w: status word %#x, control word %#x", errX87Unmasked, fsw(f), f[FPCW]&0xffff)
	}
	return nil
}

// setCC sets the condition code bits in mask to those of bits.
func setCC(f *frame, mask, bits uint64) { f[FPSW] = f[FPSW]&^mask | bits&mask }

// execX87 executes one instruction for which usesX87Hook is true: the x87
// stack ops (FGETST … FCLASS) and the arithmetic, conversion and comparison
// ops on .f80. in's register operands are frame slots (a .f80 value is two
// slots: the significand, then sign and exponent in the low 16 bits); the
// x87 state is in the guest slots FPCW, FPSW, FPTop, FPTag and FR0…. Every
// operation rounds per the control word (or the instruction's explicit
// rounding), ORs the exceptions it raises into FPSW's sticky bits and sets
// C0…C3 as the x87 instruction it implements does. A non-nil error stops
// the guest with TrapUnsupported and that error.
func execX87(in *Inst, f *frame) error {
	d := in.Dst
	src := func(i int) float80.F80 { return f80At(f, in.Src[i]) }
	if in.Op >= OpFGetST && in.Op <= OpFClass && in.Op.Info().Types != TNone && in.Type != F80 {
		return fmt.Errorf("%s.%s: the x87 ops take .f80 only: %w", in.Op, in.Type, errUnsupported)
	}
	switch in.Op {
	case OpFGetST:
		r := stPhys(f, int(in.Imm))
		if f[FPTag]>>(uint(r-FR0)/2)&1 != 0 {
			// Stack underflow: IE and SF, C1 = 0, the masked response is
			// the real indefinite.
			f[FPSW] = f[FPSW]&^fswC1 | float80FlagIE | fswSF
			setF80(f, d, float80.Indefinite())
			if f[FPCW]&1 == 0 {
				f[FPSW] |= fswES | fswB
				return fmt.Errorf("%w: x87 stack underflow", errX87Unmasked)
			}
			return nil
		}
		setF80(f, d, f80At(f, r))
		return nil
	case OpFPutST:
		r := stPhys(f, int(in.Imm))
		setF80(f, r, src(0))
		f[FPTag] &^= 1 << (uint(r-FR0) / 2)
		return nil
	case OpFPush:
		f[FPTop] = (f[FPTop] - 1) & 7
		if f[FPTag]>>f[FPTop]&1 == 0 {
			// Stack overflow: IE and SF, C1 = 1.
			f[FPSW] |= float80FlagIE | fswSF | fswC1
			if f[FPCW]&1 == 0 {
				f[FPSW] |= fswES | fswB
				return fmt.Errorf("%w: x87 stack overflow", errX87Unmasked)
			}
			return nil
		}
		f[FPSW] &^= fswC1
		return nil
	case OpFPop:
		f[FPTag] |= 1 << (f[FPTop] & 7)
		f[FPTop] = (f[FPTop] + 1) & 7
		return nil
	case OpFConst:
		k := in.Imm
		if k < 0 || k > 6 {
			return fmt.Errorf("FCONST: no constant %d: %w", k, errUnsupported)
		}
		setF80(f, d, x87Consts()[f[FPCW]>>10&3][k])
		return nil
	case OpFXam:
		r := stPhys(f, int(in.Imm))
		v := f80At(f, r)
		c, neg := float80.Examine(v)
		if f[FPTag]>>(uint(r-FR0)/2)&1 != 0 {
			c = float80.ClassEmpty
		}
		f[d] = classBits(c, neg)
		return nil
	case OpFClass:
		c, neg := float80.Examine(src(0))
		f[d] = classBits(c, neg)
		return nil
	case OpFCmp:
		e := x87Env(f)
		var bits uint64
		switch e.Compare(src(0), src(1), in.Imm&1 != 0) {
		case float80.Less:
			bits = fswC0
		case float80.Equal:
			bits = fswC3
		case float80.Unordered:
			bits = fswC3 | fswC2 | fswC0
		}
		f[d] = bits
		return x87Raise(f, &e, false)
	case OpFPrem, OpFPrem1:
		e := x87Env(f)
		var r float80.F80
		var q uint8
		var inc bool
		if in.Op == OpFPrem {
			r, q, inc = e.Rem(src(0), src(1))
		} else {
			r, q, inc = e.Rem1(src(0), src(1))
		}
		setF80(f, d, r)
		if float80.IsNaN(r) {
			// A NaN operand or an invalid operation clears C2 and leaves
			// C0, C1 and C3 as they were (measured on hardware).
			setCC(f, fswC2, 0)
			return x87Raise(f, &e, false)
		}
		var cc uint64
		if inc {
			cc = fswC2
		} else {
			cc = uint64(q&1)<<9 | uint64(q>>1&1)<<14 | uint64(q>>2&1)<<8
		}
		setCC(f, fswCC, cc)
		return x87Raise(f, &e, false)
	case OpFSin, OpFCos, OpFPtan:
		e := x87Env(f)
		var r float80.F80
		var inc bool
		switch in.Op {
		case OpFSin:
			r, inc = e.Sin(src(0))
		case OpFCos:
			r, inc = e.Cos(src(0))
		default:
			r, _, inc = e.Tan(src(0))
		}
		setF80(f, d, r)
		if inc {
			setCC(f, fswC2|fswC1, fswC2)
			return x87Raise(f, &e, false)
		}
		setCC(f, fswC2, 0)
		return x87Raise(f, &e, true)
	case OpFXtSig, OpFXtExp:
		e := x87Env(f)
		exp, sig := e.Xtract(src(0))
		if in.Op == OpFXtSig {
			setF80(f, d, sig)
		} else {
			setF80(f, d, exp)
		}
		f[FPSW] &^= fswC1
		return x87Raise(f, &e, false)
	case OpFScale, OpF2xm1, OpFYl2x, OpFYl2xp1, OpFPatan:
		e := x87Env(f)
		var r float80.F80
		switch in.Op {
		case OpFScale:
			r = e.Scale(src(0), src(1))
		case OpF2xm1:
			r = e.F2xm1(src(0))
		case OpFYl2x:
			r = e.Yl2x(src(0), src(1))
		case OpFYl2xp1:
			r = e.Yl2xp1(src(0), src(1))
		default:
			r = e.Patan(src(0), src(1))
		}
		setF80(f, d, r)
		return x87Raise(f, &e, true)
	case OpAdd, OpSub, OpMul, OpDiv:
		if in.Type != F80 || in.HasImm {
			break
		}
		e := x87Env(f)
		a, b := src(0), src(1)
		var r float80.F80
		switch in.Op {
		case OpAdd:
			r = e.Add(a, b)
		case OpSub:
			r = e.Sub(a, b)
		case OpMul:
			r = e.Mul(a, b)
		default:
			r = e.Div(a, b)
		}
		setF80(f, d, r)
		return x87Raise(f, &e, true)
	case OpSqrt:
		if in.Type != F80 {
			break
		}
		e := x87Env(f)
		setF80(f, d, e.Sqrt(src(0)))
		return x87Raise(f, &e, true)
	case OpNeg, OpAbs:
		if in.Type != F80 {
			break
		}
		// FCHS and FABS only change the sign bit and clear C1.
		if in.Op == OpNeg {
			setF80(f, d, float80.Negate(src(0)))
		} else {
			setF80(f, d, float80.Abs(src(0)))
		}
		f[FPSW] &^= fswC1
		return nil
	case OpRound:
		if in.Type != F80 {
			break
		}
		e := x87EnvRounding(f, Rounding(in.Mod))
		setF80(f, d, e.RoundToInt(src(0)))
		return x87Raise(f, &e, true)
	case OpCmp:
		if in.Type != F80 || in.HasImm {
			break
		}
		// eq, ne and the unordered conditions compare quietly (as FUCOM);
		// the ordered relations signal on any NaN (as FCOM), as IEEE 754's
		// compareQuiet and compareSignaling do.
		c := Cmp(in.Mod)
		quiet := true
		switch c {
		case CmpLt, CmpLe, CmpGt, CmpGe:
			quiet = false
		}
		e := x87Env(f)
		o := e.Compare(src(0), src(1), quiet)
		var res bool
		switch c {
		case CmpEq:
			res = o == float80.Equal
		case CmpNe:
			res = o != float80.Equal && o != float80.Unordered
		case CmpLt:
			res = o == float80.Less
		case CmpLe:
			res = o == float80.Less || o == float80.Equal
		case CmpGt:
			res = o == float80.Greater
		case CmpGe:
			res = o == float80.Greater || o == float80.Equal
		case CmpEqu:
			res = o == float80.Equal || o == float80.Unordered
		case CmpNeu:
			res = o != float80.Equal
		case CmpLtu:
			res = o == float80.Less || o == float80.Unordered
		case CmpLeu:
			res = o != float80.Greater
		case CmpGtu:
			res = o == float80.Greater || o == float80.Unordered
		case CmpGeu:
			res = o != float80.Less
		case CmpNum:
			res = o != float80.Unordered
		case CmpNan:
			res = o == float80.Unordered
		}
		f[d] = b2u(res)
		return x87Raise(f, &e, false)
	case OpCvt:
		return x87Convert(in, f)
	}
	return fmt.Errorf("%w for .f80 in the x87 unit", errUnsupported)
}

// float80FlagIE is the invalid-operation bit of the status word.
const float80FlagIE = uint64(float80.FlagInvalid)

// classBits encodes an FXAM class and sign as C3 C2 C1 C0 status word bits.
func classBits(c float80.Class, neg bool) uint64 {
	c0, c2, c3 := c.CC()
	var v uint64
	if c0 {
		v |= fswC0
	}
	if neg {
		v |= fswC1
	}
	if c2 {
		v |= fswC2
	}
	if c3 {
		v |= fswC3
	}
	return v
}

// x87Convert executes CVT with .f80 as its source or destination type: the
// loads (FLD m32/m64, FILD), the stores (FST m32/m64, FIST, FISTTP) and the
// exact .f80 copy. Loads clear C1; rounding stores set it when the result
// was rounded up.
func x87Convert(in *Inst, f *frame) error {
	d, t, s := in.Dst, in.Type, in.SrcType
	a := f[uint16(in.Src[0])]
	if t == F80 {
		e := x87Env(f)
		var v float80.F80
		switch {
		case s == F80:
			v = f80At(f, in.Src[0])
		case s == F64:
			v = e.FromFloat64(a)
		case s == F32:
			v = e.FromFloat32(uint32(a))
		case s == U64 && a>>63 != 0:
			v = float80.F80{Mant: a, SignExp: 16383 + 63}
		case s.IsInt():
			v = float80.FromInt64(intValue(s, a))
		default:
			return fmt.Errorf("CVT.f80.%s: %w", s, errUnsupported)
		}
		setF80(f, d, v)
		f[FPSW] &^= fswC1
		return x87Raise(f, &e, false)
	}
	if s != F80 {
		return fmt.Errorf("CVT.%s.%s: %w", t, s, errUnsupported)
	}
	x := f80At(f, in.Src[0])
	r := Rounding(in.Mod)
	e := x87EnvRounding(f, r)
	switch t {
	case F64:
		f[d] = e.ToFloat64(x)
	case F32:
		f[d] = uint64(e.ToFloat32(x))
	case S16, B16:
		if r == RoundZero {
			f[d] = uint64(uint16(e.TruncInt16(x)))
		} else {
			f[d] = uint64(uint16(e.ToInt16(x)))
		}
	case S32, B32:
		if r == RoundZero {
			f[d] = uint64(uint32(e.TruncInt32(x)))
		} else {
			f[d] = uint64(uint32(e.ToInt32(x)))
		}
	case S64, B64:
		if r == RoundZero {
			f[d] = uint64(e.TruncInt64(x))
		} else {
			f[d] = uint64(e.ToInt64(x))
		}
	default:
		return fmt.Errorf("CVT.%s.f80: %w", t, errUnsupported)
	}
	return x87Raise(f, &e, true)
}

// intValue is the integer value of the low s bits of a, by s's signedness.
func intValue(s Type, a uint64) int64 {
	switch s.Size() {
	case 1:
		if s.IsSigned() {
			return int64(int8(a))
		}
		return int64(uint8(a))
	case 2:
		if s.IsSigned() {
			return int64(int16(a))
		}
		return int64(uint16(a))
	case 4:
		if s.IsSigned() {
			return int64(int32(a))
		}
		return int64(uint32(a))
	}
	return int64(a)
}
