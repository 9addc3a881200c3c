package gvinst

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// sseHWCases were measured on an Intel Xeon (ldmxcsr; op; stmxcsr): the
// result and the exception flags MXCSR gained.
var sseHWCases = []struct {
	name     string
	op       Op
	t        Type
	a, b, mx uint64
	want, fl uint64
}{
	{"tiny before rounding only", OpMul, F64, 0x3ff0000000000001, 0x000fffffffffffff, 0x1f80, 0x0010000000000000, 0x22},
	{"tiny before rounding only, FTZ", OpMul, F64, 0x3ff0000000000001, 0x000fffffffffffff, 0x9f80, 0x0010000000000000, 0x22},
	{"denormal + 0", OpAdd, F64, 1, 0, 0x1f80, 1, 0x02},
	{"denormal + 0, FTZ", OpAdd, F64, 1, 0, 0x9f80, 0, 0x32},
	{"exact denormal difference", OpAdd, F64, 0x0010000000000001, 0x8010000000000000, 0x1f80, 1, 0},
	{"exact denormal difference, FTZ", OpAdd, F64, 0x0010000000000001, 0x8010000000000000, 0x9f80, 0, 0x30},
	{"denormal / 0", OpDiv, F64, 1, 0, 0x1f80, 0x7ff0000000000000, 0x04},
	{"1 / 0", OpDiv, F64, 0x3ff0000000000000, 0, 0x1f80, 0x7ff0000000000000, 0x04},
	{"sqrt(-denormal)", OpSqrt, F64, 0x8000000000000001, 0, 0x1f80, 0xfff8000000000000, 0x01},
	{"sqrt(-1)", OpSqrt, F64, 0xbff0000000000000, 0, 0x1f80, 0xfff8000000000000, 0x01},
	{"denormal + QNaN", OpAdd, F64, 1, 0x7ff8000000000000, 0x1f80, 0x7ff8000000000000, 0},
	{"denormal + SNaN", OpAdd, F64, 1, 0x7ff0000000000001, 0x1f80, 0x7ff8000000000001, 0x01},
	{"QNaN + SNaN", OpAdd, F64, 0x7ff8000000000002, 0x7ff0000000000001, 0x1f80, 0x7ff8000000000002, 0x01},
	{"denormal * inf", OpMul, F64, 1, 0x7ff0000000000000, 0x1f80, 0x7ff0000000000000, 0x02},
	{"0 * inf", OpMul, F64, 0, 0x7ff0000000000000, 0x1f80, 0xfff8000000000000, 0x01},
	{"DAZ denormal + 1", OpAdd, F64, 1, 0x3ff0000000000000, 0x1fc0, 0x3ff0000000000000, 0},
	{"DAZ -denormal * 1", OpMul, F64, 0x8000000000000001, 0x3ff0000000000000, 0x1fc0, 0x8000000000000000, 0},
	{"overflow toward zero", OpMul, F64, 0x7fefffffffffffff, 0x4000000000000000, 0x7f80, 0x7fefffffffffffff, 0x28},
	{"tiny, FTZ, up", OpMul, F64, 0x0010000000000000, 0x3fe0000000000000, 0xdf80, 0, 0x30},
	{"exact tiny, FTZ", OpMul, F64, 0x0010000000000000, 0x3fe0000000000000, 0x9f80, 0, 0x30},
	{"exact tiny", OpMul, F64, 0x0010000000000000, 0x3fe0000000000000, 0x1f80, 0x0008000000000000, 0},
	// From the decode differential test's findings.
	{"subsd toward zero", OpSub, F64, 0xb56762c9cf000000, 0xc1e0000000000000, 0x7f80, 0x41dfffffffffffff, 0x20},
	{"divps overflow toward zero", OpDiv, F32, 0x7f000000, 0x3e800000, 0x7f80, 0x7f7fffff, 0x28},
	{"addps DAZ", OpAdd, F32, 0x00200000, 0, 0x9fc0, 0, 0},
}

func TestSSEHardwareCases(t *testing.T) {
	for _, c := range sseHWCases {
		r, fl := sseArith(c.op, c.t, c.a, c.b, c.mx)
		if r != c.want || fl != c.fl {
			t.Errorf("%s: %s.%s %#x, %#x under %#x = %#x flags %#x, want %#x flags %#x", c.name, c.op, c.t, c.a, c.b, c.mx, r, fl, c.want, c.fl)
		}
	}
}

// TestSSEOthersHardware checks MIN, CMP, CVT and ROUND against values
// measured on an Intel Xeon.
func TestSSEOthersHardware(t *testing.T) {
	check := func(name string, r, fl, want, wantFl uint64) {
		t.Helper()
		if r != want || fl != wantFl {
			t.Errorf("%s = %#x flags %#x, want %#x flags %#x", name, r, fl, want, wantFl)
		}
	}
	r, fl := sseMinMax(OpMin, F64, 1, 0x3ff0000000000000, 0x1f80)
	check("min(denormal, 1)", r, fl, 1, 0x02)
	r, fl = sseMinMax(OpMin, F64, 1, 0x3ff0000000000000, 0x1fc0)
	check("min(denormal, 1) DAZ", r, fl, 0, 0)
	r, fl = sseMinMax(OpMin, F64, 0x3ff0000000000000, 0x8000000000000001, 0x1fc0)
	check("min(1, -denormal) DAZ", r, fl, 0x8000000000000000, 0)
	r, fl = sseMinMax(OpMin, F64, 0x7ff8000000000000, 0x3ff0000000000000, 0x1f80)
	check("min(QNaN, 1)", r, fl, 0x3ff0000000000000, 0x01)
	r, fl = sseMinMax(OpMax, F32, 0x7fc01234, 0x00018000, 0x9fc0)
	check("max(QNaN, denormal) DAZ", r, fl, 0, 0x01)
	for _, c := range []struct {
		name   string
		c      Cmp
		a, b   uint64
		mx     uint64
		want   bool
		wantFl uint64
	}{
		{"lt(QNaN, 1)", CmpLt, 0x7ff8000000000000, 0x3ff0000000000000, 0x1f80, false, 0x01},
		{"eq(QNaN, 1)", CmpEq, 0x7ff8000000000000, 0x3ff0000000000000, 0x1f80, false, 0},
		{"eq(SNaN, 1)", CmpEq, 0x7ff0000000000001, 0x3ff0000000000000, 0x1f80, false, 0x01},
		{"eq(denormal, 1)", CmpEq, 1, 0x3ff0000000000000, 0x1f80, false, 0x02},
		{"equ(denormal, 0)", CmpEqu, 1, 0, 0x1f80, false, 0x02},
		{"equ(denormal, 0) DAZ", CmpEqu, 1, 0, 0x1fc0, true, 0},
	} {
		ok, fl := sseCmp(c.c, F64, c.a, c.b, c.mx)
		check(c.name, b2u(ok), fl, b2u(c.want), c.wantFl)
	}
	for _, c := range []struct {
		name   string
		t, s   Type
		a, mx  uint64
		want   uint64
		wantFl uint64
	}{
		{"cvtsd2ss tiny", F32, F64, 0x3800000000000000, 0x1f80, 0x00400000, 0},
		{"cvtsd2ss tiny FTZ", F32, F64, 0x3800000000000000, 0x9f80, 0, 0x30},
		{"cvtsd2ss denormal", F32, F64, 1, 0x1f80, 0, 0x32},
		{"cvtsd2ss SNaN", F32, F64, 0x7ff0000000000001, 0x1f80, 0x7fc00000, 0x01},
		{"cvtsd2ss 1e300", F32, F64, 0x7e37e43c8800759c, 0x1f80, 0x7f800000, 0x28},
		{"cvtss2sd denormal", F64, F32, 1, 0x1f80, 0x36a0000000000000, 0x02},
		{"cvtss2sd denormal DAZ", F64, F32, 1, 0x1fc0, 0, 0},
		{"cvtss2sd SNaN", F64, F32, 0x7f800001, 0x1f80, 0x7ff8000020000000, 0x01},
		{"cvtsd2si denormal up", S64, F64, 1, 0x5f80, 1, 0x20},
		{"cvtsd2si denormal up DAZ", S64, F64, 1, 0x5fc0, 0, 0},
		{"cvtsd2si 1.5", S64, F64, 0x3ff8000000000000, 0x1f80, 2, 0x20},
		{"cvtsd2si NaN", S64, F64, 0x7ff8000000000000, 0x1f80, 1 << 63, 0x01},
		{"cvtsd2si 1e300", S64, F64, 0x7e37e43c8800759c, 0x1f80, 1 << 63, 0x01},
	} {
		r, fl := sseConvert(c.t, c.s, c.a, mxRounding(c.mx), c.mx)
		check(c.name, r, fl, c.want, c.wantFl)
	}
	r, fl = sseRound(F64, 1, RoundUp, 0x5fc0)
	check("roundsd denormal up DAZ", r, fl, 0, 0)
	r, fl = sseRound(F64, 0x7ff0000000000001, RoundNearest, 0x1f80)
	check("roundsd SNaN", r, fl, 0x7ff8000000000001, 0x01)
}

// refRound rounds the exact (or 2200-bit) value z to format ff by mode
// rc as IEEE 754 with tininess after rounding does, with big.Float doing
// the rounding; it returns the bits and the OE, UE and PE flags.
func refRound(ff *fpFmt, z *big.Float, rc Rounding, ftz bool) (uint64, uint64) {
	mode := map[Rounding]big.RoundingMode{RoundNearest: big.ToNearestEven, RoundZero: big.ToZero, RoundDown: big.ToNegativeInf, RoundUp: big.ToPositiveInf}[rc]
	neg := z.Signbit()
	if z.Sign() == 0 {
		return ff.zero(neg), 0
	}
	minNormal := new(big.Float).SetMantExp(big.NewFloat(1), ff.emin)
	// Tininess after rounding: rounded to p bits, exponent unbounded.
	u := new(big.Float).SetMode(mode).SetPrec(uint(ff.p)).Set(z)
	tiny := new(big.Float).Abs(u).Cmp(minNormal) < 0
	if tiny && ftz {
		return ff.zero(neg), mxUE | mxPE
	}
	exp := z.MantExp(nil) // z = mant * 2^exp, 0.5 <= |mant| < 1
	prec := ff.p
	if exp-1 < ff.emin {
		prec = ff.p - (ff.emin - (exp - 1))
	}
	var r *big.Float
	if prec <= 0 {
		// Below half the least denormal's binade: 0 or the least denormal.
		least := new(big.Float).SetMantExp(big.NewFloat(1), ff.emin-ff.p+1)
		half := new(big.Float).Quo(least, big.NewFloat(2))
		a := new(big.Float).Abs(z)
		up := false
		switch rc {
		case RoundNearest:
			up = a.Cmp(half) > 0
		case RoundDown:
			up = neg
		case RoundUp:
			up = !neg
		}
		r = new(big.Float)
		if up {
			r.Set(least)
		}
		if neg {
			r.Neg(r)
		}
		if r.Sign() == 0 {
			r = big.NewFloat(0)
			if neg {
				r.Neg(r)
			}
		}
	} else {
		r = new(big.Float).SetMode(mode).SetPrec(uint(prec)).Set(z)
	}
	var fl uint64
	if r.Cmp(z) != 0 {
		fl |= mxPE
		if tiny {
			fl |= mxUE
		}
	}
	maxFin := new(big.Float).SetMantExp(big.NewFloat(1), ff.emax+1)
	if new(big.Float).Abs(r).Cmp(maxFin) >= 0 {
		fl |= mxOE | mxPE
		switch {
		case rc == RoundZero, rc == RoundDown && !neg, rc == RoundUp && neg:
			return ff.maxFin(neg), fl
		}
		return ff.inf(neg), fl
	}
	if ff.width == 32 {
		v, _ := r.Float32()
		return uint64(math.Float32bits(v)), fl
	}
	v, _ := r.Float64()
	return math.Float64bits(v), fl
}

// refArith is the reference for sseArith on finite, non-NaN operands.
func refArith(op Op, t Type, a, b, mx uint64) (uint64, uint64) {
	ff := fmtOf(t)
	var fl uint64
	if mx&mxDAZ != 0 {
		a, b = ff.flush(a), ff.flush(b)
	}
	x, y := new(big.Float).SetFloat64(floatVal(t, a)), new(big.Float).SetFloat64(floatVal(t, b))
	z := new(big.Float).SetPrec(2200)
	rc := mxRounding(mx)
	switch op {
	case OpAdd, OpSub:
		if op == OpSub {
			y.Neg(y)
		}
		z.Add(x, y)
		if z.Sign() == 0 {
			// IEEE 754: +0, but -0 for -0 + -0 and in rounding down.
			neg := rc == RoundDown
			if x.Sign() == 0 && y.Sign() == 0 && x.Signbit() == y.Signbit() {
				neg = x.Signbit()
			}
			if mx&mxDAZ == 0 && (ff.isDen(a) || ff.isDen(b)) {
				fl = mxDE
			}
			return ff.zero(neg), fl
		}
	case OpMul:
		z.Mul(x, y)
	case OpDiv:
		if y.Sign() == 0 {
			if x.Sign() == 0 {
				return ff.defaultNaN(), mxIE
			}
			return ff.inf(x.Signbit() != y.Signbit()), mxZE
		}
		z.Quo(x, y)
	case OpSqrt:
		if x.Signbit() && x.Sign() != 0 {
			return ff.defaultNaN(), mxIE
		}
		if x.Sign() == 0 {
			return a, 0
		}
		z.Sqrt(x)
	}
	if mx&mxDAZ == 0 && (ff.isDen(a) || op != OpSqrt && ff.isDen(b)) {
		fl |= mxDE
	}
	r, rf := refRound(ff, z, rc, mx&mxFTZ != 0)
	return r, fl | rf
}

// randFloat returns the bits of a finite .f32 or .f64, biased to the
// edges: denormals, the smallest normals, the largest finite numbers,
// zeros and values near b (for cancellation).
func randFloat(r *rand.Rand, ff *fpFmt, near uint64) uint64 {
	frac := r.Uint64() & ff.fracMask()
	var e uint64
	switch r.IntN(8) {
	case 0:
		e = 0
	case 1:
		e = uint64(1 + r.IntN(3))
	case 2:
		e = ff.expMax() - 1 - uint64(r.IntN(3))
	case 3:
		return ff.zero(r.IntN(2) == 0)
	case 4:
		if near != 0 {
			return near ^ uint64(r.IntN(8)) ^ ff.signBit()*uint64(r.IntN(2))
		}
		fallthrough
	case 5:
		frac &= ^uint64(0) << uint(r.IntN(ff.p))
		fallthrough
	default:
		e = uint64(r.IntN(int(ff.expMax()-1))) + 1
		if r.IntN(2) == 0 {
			e = ff.expMax()/2 + uint64(r.IntN(60)) - 30
		}
	}
	return ff.zero(r.IntN(2) == 0) | e<<uint(ff.p-1) | frac
}

// TestSSEArithRounding compares sseArith with the big.Float reference in
// every rounding mode, with FTZ and DAZ on and off, for both types.
func TestSSEArithRounding(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 4000
	if testing.Short() {
		n = 500
	}
	fails := 0
	for _, ty := range []Type{F32, F64} {
		ff := fmtOf(ty)
		for _, op := range []Op{OpAdd, OpSub, OpMul, OpDiv, OpSqrt} {
			for rc := uint64(0); rc < 4; rc++ {
				for _, ctl := range []uint64{0x1f80, 0x1fa0, 0x9f80, 0x1fc0, 0x9fc0} {
					mx := ctl | rc<<13
					for i := 0; i < n/10; i++ {
						b := randFloat(r, ff, 0)
						a := randFloat(r, ff, b)
						if op == OpSqrt && r.IntN(4) != 0 {
							a &^= ff.signBit()
						}
						got, gf := sseArith(op, ty, a, b, mx)
						want, wf := refArith(op, ty, a, b, mx)
						if got != want || (gf|mx)&0x3f != (wf|mx)&0x3f {
							t.Errorf("%s.%s %#x, %#x under mxcsr %#x = %#x flags %#x, want %#x flags %#x", op, ty, a, b, mx, got, gf, want, wf)
							if fails++; fails > 20 {
								t.FailNow()
							}
						}
					}
				}
			}
		}
	}
}

// TestSSEFastPath checks that the interpreter's compiled float ops agree
// with sseArith on the guest state, under default and non-default MXCSR.
func TestSSEFastPath(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, e := range allEngines() {
		for _, ty := range []Type{F32, F64} {
			ff := fmtOf(ty)
			for _, op := range []Op{OpAdd, OpSub, OpMul, OpDiv} {
				for _, mx := range []uint64{0x1f80, 0x1fa0, 0x5fa0, 0x9fe0, 0x1fbf} {
					m := newMachine(t, e, fmt.Sprintf("  GET.%s v0, s0\n  GET.%s v1, s1\n  %s.%s v2, v0, v1\n  PUT.%s s2, v2\n", ty, ty, op, ty, ty))
					for i := 0; i < 50; i++ {
						b := randFloat(r, ff, 0)
						a := randFloat(r, ff, b)
						m.cpu.PC = 0x1000
						m.cpu.State[S0], m.cpu.State[S1], m.cpu.State[S2], m.cpu.State[MXCSR] = a, b, 0, mx
						m.mustSyscall(t)
						want, fl := sseArith(op, ty, a, b, mx)
						gotMx := m.cpu.State[MXCSR]
						if !e.noFast {
							// The compiled fast path may leave DE unset (exec.go).
							gotMx, fl = gotMx|fl&mxDE, fl|gotMx&mxDE&^mx
						}
						if got := m.cpu.State[S2]; got != want || gotMx != mx|fl {
							t.Fatalf("%s: %s.%s %#x, %#x under %#x = %#x, mxcsr %#x; want %#x, mxcsr %#x", e.name, op, ty, a, b, mx, got, m.cpu.State[MXCSR], want, mx|fl)
						}
					}
				}
			}
		}
	}
}

// TestSSEUnmasked checks that an unmasked exception stops the guest
// before the destination is written.
func TestSSEUnmasked(t *testing.T) {
	for _, e := range allEngines() {
		m := newMachine(t, e, "  GET.f64 v0, s0\n  GET.f64 v1, s1\n  DIV.f64 v2, v0, v1\n  PUT.f64 s2, v2\n")
		m.cpu.State[S0], m.cpu.State[S1], m.cpu.State[S2] = math.Float64bits(1), 0, 7
		m.cpu.State[MXCSR] = 0x1f80 &^ (mxZE << 7)
		stop := m.run(t)
		if stop.Kind != StopTrap || m.cpu.State[S2] != 7 || m.cpu.State[MXCSR]&mxZE == 0 {
			t.Errorf("%s: stop %v, s2 %#x, mxcsr %#x; want a trap, s2 unchanged, ZE set", e.name, stop, m.cpu.State[S2], m.cpu.State[MXCSR])
		}
	}
}

// TestCompiledMulHi checks MULHI.u64 and MULHI.s64, register and
// immediate forms, on every engine against the reference mulHi.
func TestCompiledMulHi(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	vals := []uint64{0, 1, 2, 1 << 63, ^uint64(0), 0x7fffffffffffffff, 0xaaaaaaaaaaaaaaab}
	for _, e := range allEngines() {
		for _, ty := range []Type{U64, S64} {
			for _, imm := range []bool{false, true} {
				for i := 0; i < 40; i++ {
					x, y := r.Uint64(), r.Uint64()
					if i < len(vals) {
						x, y = vals[i], vals[(i*3+1)%len(vals)]
					}
					src := fmt.Sprintf("  GET.%s v0, s0\n  GET.%s v1, s1\n  MULHI.%s v2, v0, v1\n  PUT.%s s2, v2\n", ty, ty, ty, ty)
					if imm {
						src = fmt.Sprintf("  GET.%s v0, s0\n  MULHI.%s v2, v0, %d\n  PUT.%s s2, v2\n", ty, ty, int64(y), ty)
					}
					m := newMachine(t, e, src)
					m.cpu.State[S0], m.cpu.State[S1] = x, y
					m.mustSyscall(t)
					if got, want := m.cpu.State[S2], mulHi(ty, x, y); got != want {
						t.Fatalf("%s: MULHI.%s %#x, %#x (imm %v) = %#x, want %#x", e.name, ty, x, y, imm, got, want)
					}
				}
			}
		}
	}
}
