package gpusim

import (
	"math"
	"math/big"
	"math/rand"
	"strings"
	"testing"
)

// refRound32 rounds the exact value x to float32 in mode ("rn", "rz", "rm",
// "rp") by comparing with the round-to-nearest result's neighbours; this is
// independent of the simulator's float64 error-term method.
func refRound32(x *big.Float, mode string) float32 {
	r, _ := x.Float32()
	if math.IsInf(float64(r), 0) && mode != "rn" && !x.IsInf() {
		// Overflow: directed modes may stop at the largest finite value.
		max := float32(math.MaxFloat32)
		switch {
		case r > 0 && (mode == "rz" || mode == "rm"):
			return max
		case r < 0 && (mode == "rz" || mode == "rp"):
			return -max
		}
		return r
	}
	c := x.Cmp(new(big.Float).SetFloat64(float64(r)))
	if mode == "rn" || c == 0 {
		if r == 0 && x.Sign() != 0 && mode == "rn" {
			return float32(math.Copysign(0, float64(x.Sign())))
		}
		return r
	}
	lo, hi := r, r
	if c > 0 {
		hi = math.Nextafter32(r, float32(math.Inf(1)))
	} else {
		lo = math.Nextafter32(r, float32(math.Inf(-1)))
	}
	switch mode {
	case "rm":
		return lo
	case "rp":
		return hi
	}
	if x.Sign() > 0 {
		return lo
	}
	return hi
}

func refRound64(x *big.Float, mode string) float64 {
	r, _ := x.Float64()
	if math.IsInf(r, 0) && mode != "rn" && !x.IsInf() {
		switch {
		case r > 0 && (mode == "rz" || mode == "rm"):
			return math.MaxFloat64
		case r < 0 && (mode == "rz" || mode == "rp"):
			return -math.MaxFloat64
		}
		return r
	}
	c := x.Cmp(new(big.Float).SetFloat64(r))
	if mode == "rn" || c == 0 {
		return r
	}
	lo, hi := r, r
	if c > 0 {
		hi = math.Nextafter(r, math.Inf(1))
	} else {
		lo = math.Nextafter(r, math.Inf(-1))
	}
	switch mode {
	case "rm":
		return lo
	case "rp":
		return hi
	}
	if x.Sign() > 0 {
		return lo
	}
	return hi
}

func exact(v float64) *big.Float { return new(big.Float).SetPrec(2400).SetFloat64(v) }

// randF32 returns finite float32 values over a wide exponent range,
// including subnormal results when multiplied.
func randF32(r *rand.Rand) float32 {
	m := r.Float64() + 0.5
	e := r.Intn(80) - 40
	if r.Intn(8) == 0 {
		e = r.Intn(60) - 130
	}
	v := float32(math.Ldexp(m, e))
	if r.Intn(2) == 0 {
		v = -v
	}
	return v
}

func randF64(r *rand.Rand) float64 {
	m := r.Float64() + 0.5
	e := r.Intn(200) - 100
	if r.Intn(8) == 0 {
		e = r.Intn(100) - 1080
	}
	v := math.Ldexp(m, e)
	if r.Intn(2) == 0 {
		v = -v
	}
	return v
}

// TestFloatRounding checks f32 and f64 add/mul/fma/div/sqrt in every
// rounding mode against exact big.Float arithmetic.
func TestFloatRounding(t *testing.T) {
	h := newHarness(t, Options{Workers: 1})
	for seed := int64(1); seed <= 4; seed++ {
		floatRoundingSeed(t, h, seed)
	}
}

func floatRoundingSeed(t *testing.T, h *harness, seed int64) {
	r := rand.New(rand.NewSource(seed))
	type op struct {
		name  string
		arity int
		ref   func(a, b, c *big.Float) *big.Float
	}
	ops := []op{
		{"add", 2, func(a, b, _ *big.Float) *big.Float { return new(big.Float).SetPrec(2400).Add(a, b) }},
		{"sub", 2, func(a, b, _ *big.Float) *big.Float { return new(big.Float).SetPrec(2400).Sub(a, b) }},
		{"mul", 2, func(a, b, _ *big.Float) *big.Float { return new(big.Float).SetPrec(2400).Mul(a, b) }},
		{"fma", 3, func(a, b, c *big.Float) *big.Float {
			p := new(big.Float).SetPrec(2400).Mul(a, b)
			return p.Add(p, c)
		}},
		{"div", 2, func(a, b, _ *big.Float) *big.Float { return new(big.Float).SetPrec(2400).Quo(a, b) }},
		{"sqrt", 1, func(a, _, _ *big.Float) *big.Float { return new(big.Float).SetPrec(2400).Sqrt(a) }},
	}
	for _, width := range []int{32, 64} {
		for _, o := range ops {
			for _, mode := range []string{"rn", "rz", "rm", "rp"} {
				ty := "f32"
				if width == 64 {
					ty = "f64"
				}
				args := "%a, %b"
				switch o.arity {
				case 1:
					args = "%a"
				case 3:
					args = "%a, %b, %c"
				}
				body := o.name + "." + mode + "." + ty + " %d, " + args + ";"
				a, b, c := make([]uint64, opLanes), make([]uint64, opLanes), make([]uint64, opLanes)
				for i := range a {
					if width == 32 {
						a[i], b[i], c[i] = bits32(randF32(r)), bits32(randF32(r)), bits32(randF32(r))
						if o.name == "sqrt" {
							a[i] &^= 1 << 31
						}
					} else {
						a[i], b[i], c[i] = bits64(randF64(r)), bits64(randF64(r)), bits64(randF64(r))
						if o.name == "sqrt" {
							a[i] &^= 1 << 63
						}
					}
				}
				got := runOp(t, h, ty, ty, body, a, b, c)
				for l := range got {
					var want uint64
					if width == 32 {
						x := o.ref(exact(float64(f32(a[l]))), exact(float64(f32(b[l]))), exact(float64(f32(c[l]))))
						want = uint64(math.Float32bits(refRound32(x, mode)))
					} else {
						x := o.ref(exact(f64(a[l])), exact(f64(b[l])), exact(f64(c[l])))
						want = math.Float64bits(refRound64(x, mode))
					}
					if got[l] != want {
						t.Fatalf("%s lane %d: a=%#x b=%#x c=%#x: got %#x, want %#x", body, l, a[l], b[l], c[l], got[l], want)
					}
				}
			}
		}
	}
}

func TestFloatSpecials(t *testing.T) {
	f := func(v float32) uint64 { return uint64(math.Float32bits(v)) }
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	edges := []uint64{f(0), f(float32(math.Copysign(0, -1))), f(1), f(-1), f(1.5), f(-2.5), f(inf), f(-inf), f(nan),
		1, 0x80000001, f(math.MaxFloat32), f(0.1), f(3), f(1e-38), f(0.75), f(-0.5), f(2.5)}
	sat := func(x float32) float32 {
		switch {
		case x != x || x <= 0:
			return 0
		case x > 1:
			return 1
		}
		return x
	}
	ftz := func(x float32) float32 {
		if math.Abs(float64(x)) < 0x1p-126 {
			return float32(math.Copysign(0, float64(x)))
		}
		return x
	}
	canon := func(x float32) uint64 {
		if x != x {
			return 0x7fffffff
		}
		return f(x)
	}
	cases := []opCase{
		{"add.f32 %d, %a, %b;", "f32", "f32", func(a, b, _ uint64) uint64 { return canon(f32(a) + f32(b)) }},
		{"add.ftz.f32 %d, %a, %b;", "f32", "f32", func(a, b, _ uint64) uint64 { return canon(ftz(ftz(f32(a)) + ftz(f32(b)))) }},
		{"mul.sat.f32 %d, %a, %b;", "f32", "f32", func(a, b, _ uint64) uint64 { return canon(sat(f32(a) * f32(b))) }},
		{"min.f32 %d, %a, %b;", "f32", "f32", func(a, b, _ uint64) uint64 {
			x, y := f32(a), f32(b)
			switch {
			case x != x && y != y:
				return 0x7fffffff
			case x != x:
				return b
			case y != y:
				return a
			case x == 0 && y == 0:
				if math.Signbit(float64(x)) {
					return a
				}
				return b
			case x < y:
				return a
			}
			return b
		}},
		{"max.f32 %d, %a, %b;", "f32", "f32", func(a, b, _ uint64) uint64 {
			x, y := f32(a), f32(b)
			switch {
			case x != x && y != y:
				return 0x7fffffff
			case x != x:
				return b
			case y != y:
				return a
			case x > y:
				return a
			}
			return b
		}},
		{"max.NaN.f32 %d, %a, %b;", "f32", "f32", func(a, b, _ uint64) uint64 {
			x, y := f32(a), f32(b)
			switch {
			case x != x || y != y:
				return 0x7fffffff
			case x > y || (x == y && !math.Signbit(float64(x))):
				return a
			}
			return b
		}},
		{"abs.f32 %d, %a;", "f32", "f32", func(a, _, _ uint64) uint64 { return a &^ (1 << 31) }},
		{"neg.f32 %d, %a;", "f32", "f32", func(a, _, _ uint64) uint64 { return a ^ 1<<31 }},
		{"div.rn.f32 %d, %a, %b;", "f32", "f32", func(a, b, _ uint64) uint64 { return canon(f32(a) / f32(b)) }},
		{"rcp.rn.f32 %d, %a;", "f32", "f32", func(a, _, _ uint64) uint64 { return canon(1 / f32(a)) }},
		{"sqrt.rn.f32 %d, %a;", "f32", "f32", func(a, _, _ uint64) uint64 { return canon(float32(math.Sqrt(float64(f32(a))))) }},
		{"setp.ltu.f32 %p, %a, %b; selp.u32 %d, 1, 0, %p;", "f32", "u32", func(a, b, _ uint64) uint64 {
			return b2u(!(f32(a) >= f32(b)))
		}},
		{"setp.ne.f32 %p, %a, %b; selp.u32 %d, 1, 0, %p;", "f32", "u32", func(a, b, _ uint64) uint64 {
			x, y := f32(a), f32(b)
			return b2u(x == x && y == y && x != y)
		}},
		{"setp.nan.f32 %p, %a, %b; selp.u32 %d, 1, 0, %p;", "f32", "u32", func(a, b, _ uint64) uint64 {
			return b2u(f32(a) != f32(a) || f32(b) != f32(b))
		}},
		{"setp.geu.f32 %p, %a, %b; selp.u32 %d, 1, 0, %p;", "f32", "u32", func(a, b, _ uint64) uint64 {
			return b2u(!(f32(a) < f32(b)))
		}},
		{"testp.subnormal.f32 %p, %a; selp.u32 %d, 1, 0, %p;", "f32", "u32", func(a, _, _ uint64) uint64 {
			return b2u(a&0x7f800000 == 0 && a&0x7fffff != 0)
		}},
		{"copysign.f32 %d, %a, %b;", "f32", "f32", func(a, b, _ uint64) uint64 { return a&(1<<31) | b&^(1<<31) }},
		{"ex2.approx.f32 %d, %a; sub.f32 %d, %d, %d;", "f32", "f32", func(a, _, _ uint64) uint64 {
			v := float32(math.Exp2(float64(f32(a))))
			return canon(v - v)
		}},
	}
	checkCases(t, cases, edges, math.MaxUint32)
}

// TestApprox checks the .approx functions against the ISA's error bounds.
func TestApprox(t *testing.T) {
	h := newHarness(t, Options{Workers: 1})
	r := rand.New(rand.NewSource(3))
	a := make([]uint64, opLanes)
	for i := range a {
		a[i] = bits32(float32(r.Float64()*20 - 10))
	}
	cases := []struct {
		body string
		ref  func(x float64) float64
		tol  float64 // absolute error for sin/cos, relative ulps otherwise
		abs  bool
	}{
		{"sin.approx.f32 %d, %a;", math.Sin, 0x1p-20, true},
		{"cos.approx.f32 %d, %a;", math.Cos, 0x1p-20, true},
		{"ex2.approx.f32 %d, %a;", math.Exp2, 2, false},
		{"lg2.approx.f32 %d, %a;", func(x float64) float64 { return math.Log2(math.Abs(x)) }, 0x1p-22, true},
		{"rsqrt.approx.f32 %d, %a;", func(x float64) float64 { return 1 / math.Sqrt(math.Abs(x)) }, 2, false},
		{"rcp.approx.f32 %d, %a;", func(x float64) float64 { return 1 / x }, 1, false},
	}
	for _, tc := range cases {
		body := tc.body
		in := a
		if tc.body[:3] == "lg2" || tc.body[:3] == "rsq" {
			body = "abs.f32 %a, %a; " + body
		}
		got := runOp(t, h, "f32", "f32", body, in, in, in)
		for l, g := range got {
			want := tc.ref(float64(f32(in[l])))
			diff := math.Abs(float64(f32(g)) - want)
			lim := tc.tol
			if !tc.abs {
				lim = tc.tol * math.Abs(want) * 0x1p-23
			}
			if diff > lim {
				t.Fatalf("%s(%v) = %v, want %v within %g", tc.body, f32(in[l]), f32(g), want, lim)
			}
		}
	}
}

func TestConvert(t *testing.T) {
	f := func(v float32) uint64 { return uint64(math.Float32bits(v)) }
	edges := []uint64{f(0), f(-0.5), f(0.5), f(1.5), f(2.5), f(-2.5), f(-1.5), f(3e9), f(-3e9), f(float32(math.Inf(1))),
		f(float32(math.NaN())), f(255.7), f(-129), f(65535.9), f(1e-40), f(16777217), f(0.49999997)}
	rn := func(x float32, g func(float64) float64) float64 { return g(float64(x)) }
	clamp := func(v float64, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }
	cases := []opCase{
		{"cvt.rni.s32.f32 %d, %a;", "f32", "s32", func(a, _, _ uint64) uint64 {
			if f32(a) != f32(a) {
				return 0
			}
			return uint64(int64(clamp(rn(f32(a), math.RoundToEven), math.MinInt32, math.MaxInt32)))
		}},
		{"cvt.rzi.s32.f32 %d, %a;", "f32", "s32", func(a, _, _ uint64) uint64 {
			if f32(a) != f32(a) {
				return 0
			}
			return uint64(int64(clamp(rn(f32(a), math.Trunc), math.MinInt32, math.MaxInt32)))
		}},
		{"cvt.rmi.u32.f32 %d, %a;", "f32", "u32", func(a, _, _ uint64) uint64 {
			if f32(a) != f32(a) {
				return 0
			}
			return uint64(clamp(rn(f32(a), math.Floor), 0, math.MaxUint32))
		}},
		{"cvt.rpi.u8.f32 %d, %a;", "f32", "u32", func(a, _, _ uint64) uint64 {
			if f32(a) != f32(a) {
				return 0
			}
			return uint64(clamp(rn(f32(a), math.Ceil), 0, 255))
		}},
		{"cvt.rzi.s64.f32 %w, %a; cvt.u32.u64 %d, %w;", "f32", "u32", func(a, _, _ uint64) uint64 {
			if f32(a) != f32(a) {
				return 0 // low word of 0x8000000000000000
			}
			v := rn(f32(a), math.Trunc)
			switch {
			case v >= 0x1p63:
				return math.MaxInt64
			case v <= -0x1p63:
				return 1 << 63
			}
			return uint64(int64(v))
		}},
		{"cvt.rni.f32.f32 %d, %a;", "f32", "f32", func(a, _, _ uint64) uint64 {
			v := f32(a)
			if v != v {
				return a
			}
			return f(float32(math.RoundToEven(float64(v))))
		}},
		{"cvt.sat.f32.f32 %d, %a;", "f32", "f32", func(a, _, _ uint64) uint64 {
			v := f32(a)
			switch {
			case v != v || v <= 0:
				return 0
			case v > 1:
				return f(1)
			}
			return a
		}},
		{"cvt.rn.f16.f32 %h, %a; cvt.f32.f16 %d, %h;", "f32", "f32", func(a, _, _ uint64) uint64 {
			v := f32(a)
			if v != v {
				return 0x7fffffff
			}
			return f(roundToHalf(v))
		}},
	}
	for i := range cases {
		cases[i].body = strings.Replace(cases[i].body, "%h", "%hh", -1)
		cases[i].body = ".reg .b16 %hh; .reg .b64 %ww; " + strings.Replace(cases[i].body, "%w", "%ww", -1)
	}
	checkCases(t, cases, edges, math.MaxUint32)

	ints := []opCase{
		{"cvt.s8.s32 %d, %a;", "s32", "s32", func(a, _, _ uint64) uint64 { return uint64(int8(a)) }},
		{"cvt.sat.s8.s32 %d, %a;", "s32", "s32", func(a, _, _ uint64) uint64 { return uint64(max(-128, min(127, sx32(a)))) }},
		{"cvt.sat.u16.s32 %d, %a;", "s32", "u32", func(a, _, _ uint64) uint64 { return uint64(max(0, min(65535, sx32(a)))) }},
		{"cvt.sat.s32.u32 %d, %a;", "u32", "s32", func(a, _, _ uint64) uint64 { return min(uint64(uint32(a)), math.MaxInt32) }},
		{"cvt.u16.u32 %d, %a;", "u32", "u32", func(a, _, _ uint64) uint64 { return a & 0xffff }},
		{"cvt.rn.f32.s32 %d, %a;", "s32", "f32", func(a, _, _ uint64) uint64 { return f(float32(sx32(a))) }},
		{"cvt.rz.f32.u32 %d, %a;", "u32", "f32", func(a, _, _ uint64) uint64 {
			return f(refRound32(new(big.Float).SetUint64(uint64(uint32(a))), "rz"))
		}},
		{"cvt.rp.f32.s32 %d, %a;", "s32", "f32", func(a, _, _ uint64) uint64 {
			return f(refRound32(new(big.Float).SetInt64(sx32(a)), "rp"))
		}},
	}
	checkCases(t, ints, edges32, math.MaxUint32)
}

// roundToHalf rounds v to the nearest binary16 value (ties to even),
// computed by scaling rather than by bit manipulation.
func roundToHalf(v float32) float32 {
	x := float64(v)
	if math.IsInf(x, 0) || x == 0 {
		return v
	}
	e := math.Ilogb(x)
	if e < -14 {
		e = -14
	}
	q := math.Ldexp(1, e-10)
	r := math.RoundToEven(x/q) * q
	if math.Abs(r) > 65504 {
		return float32(math.Inf(int(math.Copysign(1, x))))
	}
	return float32(r)
}

func TestFmaAliasing(t *testing.T) {
	h := newHarness(t, Options{Workers: 1})
	r := rand.New(rand.NewSource(11))
	a, b, c := make([]uint64, opLanes), make([]uint64, opLanes), make([]uint64, opLanes)
	for i := range a {
		a[i], b[i], c[i] = bits32(randF32(r)), bits32(randF32(r)), bits32(randF32(r))
		if i%4 == 0 { // subnormal products take the exact slow path
			a[i], b[i] = bits32(0x1p-70), bits32(float32(i)*0x1p-70)
		}
	}
	got := runOp(t, h, "f32", "f32", "fma.rn.f32 %c, %a, %b, %c; mov.f32 %d, %c;", a, b, c)
	for l := range got {
		p := new(big.Float).SetPrec(2400).Mul(exact(float64(f32(a[l]))), exact(float64(f32(b[l]))))
		want := uint64(math.Float32bits(refRound32(p.Add(p, exact(float64(f32(c[l])))), "rn")))
		if got[l] != want {
			t.Fatalf("lane %d: got %#x, want %#x", l, got[l], want)
		}
	}
}
