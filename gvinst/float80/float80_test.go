package float80

import (
	"math"
	"math/rand/v2"
	"testing"
)

func f(se uint16, m uint64) F80 { return F80{Mant: m, SignExp: se} }

func fromF64(x float64) F80 {
	var e Env
	return e.FromFloat64(math.Float64bits(x))
}

func toF64(a F80) float64 {
	var e Env
	return math.Float64frombits(e.ToFloat64(a))
}

func TestString(t *testing.T) {
	if got, want := (F80{0xC90FDAA22168C235, 0x4000}).String(), "4000:c90fdaa22168c235"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

func TestBytesRoundTrip(t *testing.T) {
	a := f(0xC00A, 0x8123456789ABCDEF)
	b := a.Bytes()
	want := [10]byte{0xEF, 0xCD, 0xAB, 0x89, 0x67, 0x45, 0x23, 0x81, 0x0A, 0xC0}
	if b != want {
		t.Fatalf("Bytes = % x, want % x", b, want)
	}
	if got := FromBytes(b); got != a {
		t.Fatalf("FromBytes = %v, want %v", got, a)
	}
}

func TestSpecialCases(t *testing.T) {
	one, two, three := FromInt64(1), FromInt64(2), FromInt64(3)
	qnanSmall, qnanBig := f(0x7FFF, 0xC000000000000001), f(0xFFFF, 0xC000000000000100)
	snan := f(0x7FFF, 0x8000000000000001)
	unnormal := f(0x3FFF, 0x4000000000000000)
	pseudoDenormal := f(0x0000, 0x8000000000000000)
	cwRN, cwRD, cwRU, cwRZ := uint16(0x037F), uint16(0x077F), uint16(0x0B7F), uint16(0x0F7F)
	tests := []struct {
		name      string
		cw        uint16
		run       func(e *Env) F80
		want      F80
		wantFlags Flags
	}{
		{"inf-inf", cwRN, func(e *Env) F80 { return e.Add(Inf(false), Inf(true)) }, Indefinite(), FlagInvalid},
		{"+0 + -0 nearest", cwRN, func(e *Env) F80 { return e.Add(Zero(false), Zero(true)) }, Zero(false), 0},
		{"+0 + -0 down", cwRD, func(e *Env) F80 { return e.Add(Zero(false), Zero(true)) }, Zero(true), 0},
		{"x-x down", cwRD, func(e *Env) F80 { return e.Sub(three, three) }, Zero(true), 0},
		{"1/0", cwRN, func(e *Env) F80 { return e.Div(one, Zero(true)) }, Inf(true), FlagZeroDivide},
		{"0/0", cwRN, func(e *Env) F80 { return e.Div(Zero(false), Zero(false)) }, Indefinite(), FlagInvalid},
		{"sqrt(-1)", cwRN, func(e *Env) F80 { return e.Sqrt(Negate(one)) }, Indefinite(), FlagInvalid},
		{"sqrt(-0)", cwRN, func(e *Env) F80 { return e.Sqrt(Zero(true)) }, Zero(true), 0},
		{"sqrt(2) up", cwRU, func(e *Env) F80 { return e.Sqrt(two) }, f(0x3FFF, 0xB504F333F9DE6485), FlagPrecision | FlagRoundedUp},
		{"sqrt(2) down", cwRD, func(e *Env) F80 { return e.Sqrt(two) }, f(0x3FFF, 0xB504F333F9DE6484), FlagPrecision},
		{"SNaN*1", cwRN, func(e *Env) F80 { return e.Mul(snan, one) }, f(0x7FFF, 0xC000000000000001), FlagInvalid},
		{"NaN larger significand", cwRN, func(e *Env) F80 { return e.Add(qnanSmall, qnanBig) }, qnanBig, 0},
		{"QNaN beats SNaN", cwRN, func(e *Env) F80 { return e.Add(snan, qnanSmall) }, qnanSmall, FlagInvalid},
		{"unnormal", cwRN, func(e *Env) F80 { return e.Add(unnormal, one) }, Indefinite(), FlagInvalid},
		{"pseudo-denormal", cwRN, func(e *Env) F80 { return e.Add(pseudoDenormal, Zero(false)) }, f(0x0001, 0x8000000000000000), FlagDenormal},
		{"PC24 tie to even", 0x007F, func(e *Env) F80 { return e.Add(one, f(0x3FFF-24, 1<<63)) }, one, FlagPrecision},
		{"PC24 above tie", 0x007F, func(e *Env) F80 { return e.Add(one, f(0x3FFF-24, 1<<63|1)) }, f(0x3FFF, 0x8000010000000000), FlagPrecision | FlagRoundedUp},
		{"PC53 overflow toward zero", 0x0E7F, func(e *Env) F80 { return e.Mul(f(0x7FFE, 1<<63), two) }, f(0x7FFE, 0xFFFFFFFFFFFFF800), FlagOverflow | FlagPrecision},
		{"denormal result", cwRN, func(e *Env) F80 { return e.Mul(f(0x0001, 0xC000000000000000), f(0x3FFE, 1<<63)) }, f(0x0000, 0x6000000000000000), 0},
		{"inexact denormal result", cwRZ, func(e *Env) F80 { return e.Mul(f(0x0001, 0xC000000000000001), f(0x3FFE, 1<<63)) }, f(0x0000, 0x6000000000000000), FlagUnderflow | FlagPrecision},
		{"frndint 2.5 nearest", cwRN, func(e *Env) F80 { return e.RoundToInt(f(0x4000, 0xA000000000000000)) }, two, FlagPrecision},
		{"frndint 2.5 up", cwRU, func(e *Env) F80 { return e.RoundToInt(f(0x4000, 0xA000000000000000)) }, three, FlagPrecision | FlagRoundedUp},
		{"frndint -0.5", cwRN, func(e *Env) F80 { return e.RoundToInt(f(0xBFFE, 1<<63)) }, Zero(true), FlagPrecision},
		{"fscale 1*2^3.7", cwRN, func(e *Env) F80 { return e.Scale(one, f(0x4000, 0xECCCCCCCCCCCCCCD)) }, FromInt64(8), 0},
		{"fscale 1*2^-inf", cwRN, func(e *Env) F80 { return e.Scale(one, Inf(true)) }, Zero(false), 0},
		{"fscale 0*2^inf", cwRN, func(e *Env) F80 { return e.Scale(Zero(false), Inf(false)) }, Indefinite(), FlagInvalid},
		{"pi", cwRN, func(e *Env) F80 { return e.Const(ConstPi) }, f(0x4000, 0xC90FDAA22168C235), 0},
		{"pi down", cwRD, func(e *Env) F80 { return e.Const(ConstPi) }, f(0x4000, 0xC90FDAA22168C234), 0},
		{"ln2", cwRN, func(e *Env) F80 { return e.Const(ConstLN2) }, f(0x3FFE, 0xB17217F7D1CF79AC), 0},
		{"sin(-0)", cwRN, func(e *Env) F80 { r, _ := e.Sin(Zero(true)); return r }, Zero(true), 0},
		{"cos(0)", cwRN, func(e *Env) F80 { r, _ := e.Cos(Zero(false)); return r }, one, 0},
		{"sin(inf)", cwRN, func(e *Env) F80 { r, _ := e.Sin(Inf(false)); return r }, Indefinite(), FlagInvalid},
		{"f2xm1(1)", cwRN, func(e *Env) F80 { return e.F2xm1(one) }, one, FlagPrecision},
		{"f2xm1(-1)", cwRN, func(e *Env) F80 { return e.F2xm1(Negate(one)) }, f(0xBFFE, 1<<63), FlagPrecision},
		{"f2xm1(3) out of range", cwRN, func(e *Env) F80 { return e.F2xm1(three) }, three, FlagPrecision},
		{"fyl2xp1(-2) out of range", cwRN, func(e *Env) F80 { return e.Yl2xp1(FromInt64(-2), three) }, FromInt64(-2), FlagPrecision},
		{"fyl2xp1(1)*3 exact", cwRN, func(e *Env) F80 { return e.Yl2xp1(one, three) }, three, FlagPrecision},
		{"f2xm1(-inf)", cwRN, func(e *Env) F80 { return e.F2xm1(Inf(true)) }, Negate(one), 0},
		{"fyl2x(8)*3", cwRN, func(e *Env) F80 { return e.Yl2x(FromInt64(8), three) }, FromInt64(9), FlagPrecision},
		{"fyl2x(-1)", cwRN, func(e *Env) F80 { return e.Yl2x(Negate(one), three) }, Indefinite(), FlagInvalid},
		{"fyl2x(0)", cwRN, func(e *Env) F80 { return e.Yl2x(Zero(false), three) }, Inf(true), FlagZeroDivide},
		{"fyl2xp1(-0)", cwRN, func(e *Env) F80 { return e.Yl2xp1(Zero(true), three) }, Zero(true), 0},
		{"atan2(+0,-0)", cwRN, func(e *Env) F80 { return e.Patan(Zero(true), Zero(false)) }, f(0x4000, 0xC90FDAA22168C235), FlagPrecision | FlagRoundedUp},
		{"atan2(-0,+0)", cwRN, func(e *Env) F80 { return e.Patan(Zero(false), Zero(true)) }, Zero(true), 0},
	}
	for _, tc := range tests {
		e := NewEnv(tc.cw)
		got := tc.run(&e)
		if got != tc.want || e.Flags != tc.wantFlags {
			t.Errorf("%s: got %04x:%016x flags %#x, want %04x:%016x flags %#x", tc.name,
				got.SignExp, got.Mant, e.Flags, tc.want.SignExp, tc.want.Mant, tc.wantFlags)
		}
	}
}

func TestRem(t *testing.T) {
	var e Env
	five, three := FromInt64(5), FromInt64(3)
	if r, q, inc := e.Rem(five, three); r != FromInt64(2) || q != 1 || inc {
		t.Errorf("fprem(5,3) = %v q=%d inc=%v", r, q, inc)
	}
	if r, q, inc := e.Rem1(five, three); r != FromInt64(-1) || q != 2 || inc {
		t.Errorf("fprem1(5,3) = %v q=%d inc=%v", r, q, inc)
	}
	// A partial remainder keeps reducing until complete; the final
	// remainder of 2^100 by 3 is 1 (2^100 = (2^2)^50 ≡ 1 mod 3).
	a := f(0x3FFF+100, 1<<63)
	steps := 0
	for {
		var inc bool
		a, _, inc = e.Rem(a, three)
		steps++
		if !inc {
			break
		}
		if steps > 10 {
			t.Fatal("fprem did not complete")
		}
	}
	if a != FromInt64(1) || steps < 2 {
		t.Errorf("2^100 mod 3 = %v after %d steps, want 1 after at least 2", a, steps)
	}
}

func TestConversions(t *testing.T) {
	tests := []struct {
		name      string
		cw        uint16
		run       func(e *Env) int64
		want      int64
		wantFlags Flags
	}{
		{"fist32 2^31", 0x037F, func(e *Env) int64 { return int64(e.ToInt32(f(0x3FFF+31, 1<<63))) }, math.MinInt32, FlagInvalid},
		{"fist32 -2^31", 0x037F, func(e *Env) int64 { return int64(e.ToInt32(f(0xBFFF+31, 1<<63))) }, math.MinInt32, 0},
		{"fist16 -32768.25", 0x037F, func(e *Env) int64 { return int64(e.ToInt16(f(0xC00E, 0x8000800000000000))) }, -32768, FlagPrecision},
		{"fist16 -32768.25 down", 0x077F, func(e *Env) int64 { return int64(e.ToInt16(f(0xC00E, 0x8000800000000000))) }, math.MinInt16, FlagInvalid},
		{"fisttp64 -1.9", 0x037F, func(e *Env) int64 { return e.TruncInt64(fromF64(-1.9)) }, -1, FlagPrecision},
		{"fist64 NaN", 0x037F, func(e *Env) int64 { return e.ToInt64(Indefinite()) }, math.MinInt64, FlagInvalid},
		{"fst64 overflow toward zero", 0x0F7F, func(e *Env) int64 { return int64(e.ToFloat64(f(0x7000, 1<<63))) }, int64(math.Float64bits(math.MaxFloat64)), FlagOverflow | FlagPrecision},
		{"fst32 denormal", 0x037F, func(e *Env) int64 { return int64(e.ToFloat32(f(0x3FFF-140, 0xC000000000000001))) }, 0x300, FlagUnderflow | FlagPrecision},
		{"fst64 SNaN", 0x037F, func(e *Env) int64 { return int64(e.ToFloat64(f(0xFFFF, 0x8000000000000800))) }, -0x7FFFFFFFFFFFF, FlagInvalid},
	}
	for _, tc := range tests {
		e := NewEnv(tc.cw)
		if got := tc.run(&e); got != tc.want || e.Flags != tc.wantFlags {
			t.Errorf("%s: got %#x flags %#x, want %#x flags %#x", tc.name, got, e.Flags, tc.want, tc.wantFlags)
		}
	}
}

func TestExamine(t *testing.T) {
	tests := []struct {
		a    F80
		want Class
		neg  bool
	}{
		{Zero(true), ClassZero, true},
		{FromInt64(7), ClassNormal, false},
		{f(0x0000, 1), ClassDenormal, false},
		{f(0x0000, 1<<63), ClassDenormal, false},
		{Inf(true), ClassInfinity, true},
		{Indefinite(), ClassNaN, true},
		{f(0x4000, 0x4000000000000000), ClassUnsupported, false},
		{f(0x7FFF, 0x4000000000000000), ClassUnsupported, false},
	}
	for _, tc := range tests {
		if c, neg := Examine(tc.a); c != tc.want || neg != tc.neg {
			t.Errorf("Examine(%v) = %d, %v; want %d, %v", tc.a, c, neg, tc.want, tc.neg)
		}
	}
}

func TestCompare(t *testing.T) {
	nan := Indefinite()
	tests := []struct {
		a, b      F80
		quiet     bool
		want      Ordering
		wantFlags Flags
	}{
		{Zero(true), Zero(false), false, Equal, 0},
		{FromInt64(-2), FromInt64(1), false, Less, 0},
		{Inf(false), FromInt64(1), false, Greater, 0},
		{nan, FromInt64(1), true, Unordered, 0},
		{nan, FromInt64(1), false, Unordered, FlagInvalid},
		{f(0x0000, 1), Zero(false), false, Greater, FlagDenormal},
	}
	for _, tc := range tests {
		var e Env
		if got := e.Compare(tc.a, tc.b, tc.quiet); got != tc.want || e.Flags != tc.wantFlags {
			t.Errorf("Compare(%v, %v, %v) = %d flags %#x, want %d flags %#x", tc.a, tc.b, tc.quiet, got, e.Flags, tc.want, tc.wantFlags)
		}
	}
}

// TestDoubleArithmetic checks the basic operations under precision control 53
// against Go's float64 arithmetic, which agrees whenever the result is a
// normal double; this runs without the host FPU reference.
func TestDoubleArithmetic(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	e := NewEnv(0x027F)
	for i := 0; i < 20000; i++ {
		x := math.Float64frombits(r.Uint64()&^(0x7FF<<52) | uint64(900+r.IntN(248))<<52)
		y := math.Float64frombits(r.Uint64()&^(0x7FF<<52) | uint64(900+r.IntN(248))<<52)
		a, b := fromF64(x), fromF64(y)
		check := func(op string, got F80, want float64) {
			if math.Abs(want) < 0x1p-1022 || math.IsInf(want, 0) {
				return
			}
			if g := toF64(got); g != want {
				t.Fatalf("%s(%g, %g) = %g, want %g", op, x, y, g, want)
			}
		}
		check("add", e.Add(a, b), x+y)
		check("sub", e.Sub(a, b), x-y)
		check("mul", e.Mul(a, b), x*y)
		check("div", e.Div(a, b), x/y)
		check("sqrt", e.Sqrt(Abs(a)), math.Sqrt(math.Abs(x)))
	}
}

// TestTranscendentalIdentities checks correctly rounded results against
// other operations that are exact or correctly rounded too.
func TestTranscendentalIdentities(t *testing.T) {
	var e Env
	one := One()
	// atan2(1, 1) = π/4: the rounding of π scaled by 2^-2.
	pi := e.Const(ConstPi)
	if got, want := e.Patan(one, one), (F80{pi.Mant, pi.SignExp - 2}); got != want {
		t.Errorf("atan2(1,1) = %v, want %v", got, want)
	}
	// 1*log2(10) is the FLDL2T constant.
	if got, want := e.Yl2x(FromInt64(10), one), e.Const(ConstL2T); got != want {
		t.Errorf("log2(10) = %v, want %v", got, want)
	}
	// 2^0.5 - 1 against sqrt(2) - 1 (the subtraction is exact).
	if got, want := e.F2xm1(F80{1 << 63, expBias - 1}), e.Sub(e.Sqrt(FromInt64(2)), one); ulps(got, want) > 1 {
		t.Errorf("2^0.5-1 = %v, want %v within 1 ulp", got, want)
	}
	// sin^2 + cos^2 = 1 within a few ulps, for arguments up to 2^20.
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 200; i++ {
		a := F80{intBit | r.Uint64(), uint16(expBias - 20 + r.IntN(40))}
		s, c, _ := e.SinCos(a)
		sum := e.Add(e.Mul(s, s), e.Mul(c, c))
		if ulps(sum, one) > 4 && ulps(sum, F80{^uint64(0), expBias - 1}) > 4 {
			t.Errorf("sin^2+cos^2(%v) = %v", a, sum)
		}
	}
	if _, inc := e.Sin(F80{1 << 63, expBias + 63}); !inc {
		t.Error("sin(2^63) did not report C2")
	}
}

func BenchmarkFloat80(b *testing.B) {
	x := F80{0xB17217F7D1CF79AC, expBias - 1}
	y := F80{0xC90FDAA22168C235, expBias + 1}
	z := F80{0x9E06521848C2F0DB, expBias} // 1.234...: a generic trig argument
	e := NewEnv(0x037F)
	b.Run("Add", func(b *testing.B) {
		for b.Loop() {
			e.Add(x, y)
		}
	})
	b.Run("Mul", func(b *testing.B) {
		for b.Loop() {
			e.Mul(x, y)
		}
	})
	b.Run("Div", func(b *testing.B) {
		for b.Loop() {
			e.Div(x, y)
		}
	})
	b.Run("Sqrt", func(b *testing.B) {
		for b.Loop() {
			e.Sqrt(y)
		}
	})
	b.Run("Sin", func(b *testing.B) {
		for b.Loop() {
			e.Sin(z)
		}
	})
	b.Run("Tan", func(b *testing.B) {
		for b.Loop() {
			e.Tan(z)
		}
	})
	b.Run("F2xm1", func(b *testing.B) {
		for b.Loop() {
			e.F2xm1(x)
		}
	})
	b.Run("Yl2x", func(b *testing.B) {
		for b.Loop() {
			e.Yl2x(y, x)
		}
	})
	b.Run("Patan", func(b *testing.B) {
		for b.Loop() {
			e.Patan(y, x)
		}
	})
}
