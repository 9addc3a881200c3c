package gputest

import (
	"math"
	"math/big"
	"testing"
)

// feq compares a recorded float result with Go's: NaN matches any NaN,
// anything else must match bit for bit.
func (c *checker) feq(what string, i int, got, want float64, gotBits, wantBits uint64) {
	c.t.Helper()
	if math.IsNaN(want) && math.IsNaN(got) {
		return
	}
	if gotBits != wantBits {
		c.bad++
		if c.bad <= 8 {
			c.t.Errorf("%s: %s[%d] recorded %v (%#x), Go computes %v (%#x)", c.name, what, i, got, gotBits, want, wantBits)
		}
	}
}

// directed computes op on finite inputs with a directed rounding mode at
// prec bits; ok is false when an input is not finite or the result is
// zero or outside the normal range of the format, where exponent limits
// (not modelled here) decide.
func directed(op string, prec uint, mode big.RoundingMode, args ...float64) (float64, bool) {
	bs := make([]*big.Float, len(args))
	for i, a := range args {
		if math.IsInf(a, 0) || math.IsNaN(a) {
			return 0, false
		}
		bs[i] = new(big.Float).SetFloat64(a)
	}
	z := new(big.Float).SetPrec(prec).SetMode(mode)
	switch op {
	case "add":
		z.Add(bs[0], bs[1])
	case "sub":
		z.Sub(bs[0], bs[1])
	case "mul":
		z.Mul(bs[0], bs[1])
	case "div":
		if bs[1].Sign() == 0 {
			return 0, false
		}
		z.Quo(bs[0], bs[1])
	case "sqrt":
		if bs[0].Sign() < 0 {
			return 0, false
		}
		// big.Float.Sqrt does not round directed modes correctly: take the
		// correctly rounded math.Sqrt and step it by the exact square.
		r := math.Sqrt(args[0])
		if prec == 24 {
			r = float64(float32(math.Sqrt(args[0])))
		}
		sq := new(big.Float).SetPrec(4 * 53).SetFloat64(r)
		sq.Mul(sq, sq)
		cmp := sq.Cmp(bs[0]) // r*r against x
		up := mode == big.ToPositiveInf
		switch {
		case cmp < 0 && up:
			r = next(r, math.Inf(1), prec)
		case cmp > 0 && !up:
			r = next(r, 0, prec)
		}
		z.SetFloat64(r)
	case "fma":
		p := new(big.Float).SetPrec(2*53).Mul(bs[0], bs[1])
		z.Add(p, bs[2])
	}
	r, _ := z.Float64()
	minNormal, maxFinite := 0x1p-1022, math.MaxFloat64
	if prec == 24 {
		minNormal, maxFinite = 0x1p-126, math.MaxFloat32
	}
	if a := math.Abs(r); a == 0 || a < minNormal || a > maxFinite {
		return 0, false
	}
	return r, true
}

// next steps x one unit toward y in the format of prec bits (24 or 53).
func next(x, y float64, prec uint) float64 {
	if prec == 24 {
		return float64(math.Nextafter32(float32(x), float32(y)))
	}
	return math.Nextafter(x, y)
}

// ptxMin is PTX min.f32/min.f64: a NaN operand yields the other operand.
func ptxMin(a, b float64) float64 {
	switch {
	case math.IsNaN(a):
		return b
	case math.IsNaN(b):
		return a
	case a == 0 && b == 0:
		if math.Signbit(a) {
			return a
		}
		return b
	}
	return math.Min(a, b)
}

// ptxMax is PTX max.f32/max.f64: a NaN operand yields the other operand.
func ptxMax(a, b float64) float64 {
	switch {
	case math.IsNaN(a):
		return b
	case math.IsNaN(b):
		return a
	case a == 0 && b == 0:
		if math.Signbit(a) {
			return b
		}
		return a
	}
	return math.Max(a, b)
}

func TestOracleF64(t *testing.T) {
	f := fixture(t, "f64math")
	a, b, c := words64(f.Inputs["a"]), words64(f.Inputs["b"]), words64(f.Inputs["c"])
	out := words64(f.Expected["out"])
	ck := &checker{t: t, name: "f64math"}
	for i := range a {
		x, y, z := math.Float64frombits(a[i]), math.Float64frombits(b[i]), math.Float64frombits(c[i])
		want := map[int]float64{
			0: x + y, 1: x - y, 2: x * y, 3: float64(x*y) + z, 4: math.FMA(x, y, z), 5: math.FMA(x, y, z),
			6: x / y, 7: 1 / y, 8: math.Sqrt(math.Abs(x)), 9: math.Sqrt(x),
			14: ptxMin(x, y), 15: ptxMax(x, z),
			16: math.Floor(x) + math.Ceil(y), 17: math.Trunc(z) - math.RoundToEven(x), 18: -x,
		}
		for k, w := range map[int]struct {
			op   string
			mode big.RoundingMode
			args []float64
		}{
			10: {"add", big.ToZero, []float64{x, y}}, 11: {"mul", big.ToPositiveInf, []float64{x, y}},
			12: {"div", big.ToNegativeInf, []float64{x, y}}, 13: {"fma", big.ToZero, []float64{x, y, z}},
			19: {"sqrt", big.ToPositiveInf, []float64{math.Abs(z)}},
		} {
			if r, ok := directed(w.op, 53, w.mode, w.args...); ok {
				want[k] = r
			}
		}
		for k, w := range want {
			g := out[i*20+k]
			ck.feq("out", i*20+k, math.Float64frombits(g), w, g, math.Float64bits(w))
		}
	}
}

func TestOracleF32(t *testing.T) {
	f := fixture(t, "fma32")
	a, b, c := floats32(f.Inputs["a"]), floats32(f.Inputs["b"]), floats32(f.Inputs["c"])
	out := floats32(f.Expected["out"])
	ck := &checker{t: t, name: "fma32"}
	for i := range a {
		x, y, z := float64(a[i]), float64(b[i]), float64(c[i])
		// Single operations rounded once through float64 are exact: 53 >=
		// 2*24+2, so the double rounding is innocuous.
		want := map[int]float64{
			4: float64(float32(float64(float32(x*y)) + z)),
			6: float64(float32(x / y)), 8: float64(float32(math.Sqrt(math.Abs(x)))),
			10: float64(float32(1 / y)), 14: ptxMin(x, y), 15: ptxMax(y, z),
			16: float64(float32(math.Floor(x) + math.Ceil(z))), 17: float64(float32(math.Trunc(y) - math.RoundToEven(x))),
			18: math.Copysign(x, z), 19: float64(float32(math.Sqrt(x))),
		}
		for k, w := range map[int]struct {
			op   string
			mode big.RoundingMode
			args []float64
		}{
			0: {"fma", big.ToNearestEven, []float64{x, y, z}}, 1: {"fma", big.ToZero, []float64{x, y, z}},
			2: {"fma", big.ToNegativeInf, []float64{x, y, z}}, 3: {"fma", big.ToPositiveInf, []float64{x, y, z}},
			5: {"fma", big.ToNearestEven, []float64{x, y, z}},
			7: {"div", big.ToZero, []float64{x, y}}, 9: {"sqrt", big.ToNegativeInf, []float64{math.Abs(z)}},
			11: {"add", big.ToPositiveInf, []float64{x, z}}, 12: {"sub", big.ToNegativeInf, []float64{x, z}},
			13: {"mul", big.ToZero, []float64{x, z}},
		} {
			if r, ok := directed(w.op, 24, w.mode, w.args...); ok {
				want[k] = r
			}
		}
		for k, w := range want {
			g := out[i*20+k]
			w32 := float32(w)
			ck.feq("out", i*20+k, float64(g), w, uint64(math.Float32bits(g)), uint64(math.Float32bits(w32)))
		}
	}
}
