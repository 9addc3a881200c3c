package gpusim

import (
	"math"
	"math/big"
)

// Canonical NaNs produced by arithmetic, as the hardware does.
const (
	canonNaN32 = 0x7fffffff
	canonNaN64 = 0xfff8000000000000 // what sm_90 produces for f64
)

func f32(x uint64) float32 { return math.Float32frombits(uint32(x)) }
func f64(x uint64) float64 { return math.Float64frombits(x) }

func bits32(f float32) uint64 {
	if f != f {
		return canonNaN32
	}
	return uint64(math.Float32bits(f))
}

// nan64 is the NaN an f64 operation returns: its first NaN operand,
// quieted, or the canonical NaN when the operands were numbers (sm_90).
func nan64(ops ...uint64) uint64 {
	for _, o := range ops {
		if o&0x7ff0000000000000 == 0x7ff0000000000000 && o&0xfffffffffffff != 0 {
			return o | 1<<51
		}
	}
	return canonNaN64
}

func bits64(f float64) uint64 {
	if f != f {
		return canonNaN64
	}
	return math.Float64bits(f)
}

// flush32 flushes a subnormal to a zero of the same sign (.ftz).
func flush32(f float32) float32 {
	b := math.Float32bits(f)
	if b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return f
}

func flush64(f float64) float64 {
	b := math.Float64bits(f)
	if b&0x7ff0000000000000 == 0 {
		return math.Float64frombits(b & (1 << 63))
	}
	return f
}

// sat32 clamps to [0, 1]; NaN and -0 become +0, as on sm_90.
func sat32(f float32) float32 {
	switch {
	case f != f:
		return 0
	case f <= 0:
		return 0
	case f > 1:
		return 1
	}
	return f
}

func sat64(f float64) float64 {
	switch {
	case f != f:
		return 0
	case f <= 0:
		return 0
	case f > 1:
		return 1
	}
	return f
}

// twoSum returns s = fl(a+b) and the exact error e with a+b = s+e.
func twoSum(a, b float64) (float64, float64) {
	s := a + b
	bb := s - a
	e := (a - (s - bb)) + (b - bb)
	return s, e
}

// roundF32 rounds the exact value s+e (|e| well below one ulp of s in
// float64) to float32 in mode rnd, once.
func roundF32(s, e float64, rnd uint8) float32 {
	if s != s {
		return float32(s)
	}
	if math.IsInf(e, 0) || e != e {
		e = 0
	}
	r := float32(s)
	rf := float64(r)
	if rnd == rndRN || rnd == rndNone {
		if math.IsInf(rf, 0) {
			return r
		}
		if e == 0 {
			return r
		}
	}
	var lo, hi float32
	switch {
	case rf == s && e == 0:
		return r
	case rf == s && e > 0, rf < s:
		lo, hi = r, math.Nextafter32(r, float32(math.Inf(1)))
	default:
		lo, hi = math.Nextafter32(r, float32(math.Inf(-1))), r
	}
	switch rnd {
	case rndRZ:
		if s > 0 || (s == 0 && e > 0) {
			return lo
		}
		return hi
	case rndRM:
		return lo
	case rndRP:
		return hi
	}
	mid := (float64(lo) + float64(hi)) / 2
	diff := (s - mid) + e
	switch {
	case diff < 0:
		return lo
	case diff > 0:
		return hi
	}
	if math.Float32bits(lo)&1 == 0 {
		return lo
	}
	return hi
}

// roundDir64 adjusts s = fl_rn(x) for directed rounding, where e has the
// sign of the exact error x - s (zero when exact).
func roundDir64(s, e float64, rnd uint8) float64 {
	if s != s || e == 0 || e != e {
		return s
	}
	if math.IsInf(s, 0) {
		// Overflowed under round-to-nearest; directed modes may clamp.
		max := math.MaxFloat64
		switch {
		case s > 0 && (rnd == rndRZ || rnd == rndRM):
			return max
		case s < 0 && (rnd == rndRZ || rnd == rndRP):
			return -max
		}
		return s
	}
	switch rnd {
	case rndRZ:
		if s > 0 && e < 0 || s < 0 && e > 0 {
			return math.Nextafter(s, 0)
		}
	case rndRM:
		if e < 0 {
			return math.Nextafter(s, math.Inf(-1))
		}
	case rndRP:
		if e > 0 {
			return math.Nextafter(s, math.Inf(1))
		}
	}
	return s
}

func directed(r uint8) bool { return r == rndRZ || r == rndRM || r == rndRP }

func add32(a, b float32, rnd uint8) float32 {
	if !directed(rnd) {
		return a + b
	}
	s, e := twoSum(float64(a), float64(b))
	if s == 0 && e == 0 {
		if rnd == rndRM && (math.Signbit(float64(a)) || math.Signbit(float64(b))) {
			return float32(math.Copysign(0, -1))
		}
		return a + b
	}
	return roundF32(s, e, rnd)
}

func mul32(a, b float32, rnd uint8) float32 {
	if !directed(rnd) {
		return a * b
	}
	return roundF32(float64(a)*float64(b), 0, rnd)
}

func fma32(a, b, c float32, rnd uint8) float32 {
	p := float64(a) * float64(b) // exact
	if math.IsInf(p, 0) || p != p || math.IsInf(float64(c), 0) || c != c {
		return float32(p + float64(c))
	}
	s, e := twoSum(p, float64(c))
	if s == 0 && e == 0 {
		// An exact zero: +0 unless both addends are -0, or the signs
		// differ and the rounding is toward -inf.
		if rnd == rndRM && math.Signbit(p) != math.Signbit(float64(c)) {
			return float32(math.Copysign(0, -1))
		}
		return float32(p + float64(c))
	}
	return roundF32(s, e, rnd)
}

func div32(a, b float32, rnd uint8) float32 {
	if !directed(rnd) {
		return a / b
	}
	fa, fb := float64(a), float64(b)
	q := fa / fb
	if q == 0 || math.IsInf(q, 0) || q != q {
		return float32(q)
	}
	r := math.FMA(-q, fb, fa)
	return roundF32(q, r/fb, rnd)
}

func sqrt32(a float32, rnd uint8) float32 {
	fa := float64(a)
	q := math.Sqrt(fa)
	if !directed(rnd) || q == 0 || math.IsInf(q, 0) || q != q {
		return float32(q)
	}
	r := math.FMA(-q, q, fa)
	return roundF32(q, r, rnd)
}

func add64(a, b float64, rnd uint8) float64 {
	s := a + b
	if !directed(rnd) {
		return s
	}
	if math.IsInf(s, 0) && !math.IsInf(a, 0) && !math.IsInf(b, 0) {
		return roundDir64(s, s, rnd)
	}
	if s == 0 && rnd == rndRM && a == -b && a != 0 {
		return math.Copysign(0, -1)
	}
	_, e := twoSum(a, b)
	return roundDir64(s, e, rnd)
}

func mul64(a, b float64, rnd uint8) float64 {
	p := a * b
	if !directed(rnd) {
		return p
	}
	if math.IsInf(p, 0) && !math.IsInf(a, 0) && !math.IsInf(b, 0) {
		return roundDir64(p, p, rnd)
	}
	if math.Abs(p) < 0x1p-960 && a != 0 && b != 0 {
		// Subnormal or zero result: the FMA error term underflows, so
		// compare with the exact product instead.
		x := new(big.Float).SetPrec(2200).SetFloat64(a)
		x.Mul(x, new(big.Float).SetFloat64(b))
		return roundDir64(p, float64(x.Cmp(new(big.Float).SetFloat64(p))), rnd)
	}
	return roundDir64(p, math.FMA(a, b, -p), rnd)
}

func div64(a, b float64, rnd uint8) float64 {
	q := a / b
	if !directed(rnd) || q != q || b == 0 || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return q
	}
	if math.IsInf(q, 0) {
		return roundDir64(q, q, rnd)
	}
	var e float64
	if math.Abs(q) < 0x1p-960 || math.Abs(a) < 0x1p-960 {
		// The remainder may underflow: compute sign(a - q*b) exactly.
		x := new(big.Float).SetPrec(2200).SetFloat64(q)
		x.Mul(x, new(big.Float).SetFloat64(b))
		e = float64(new(big.Float).SetFloat64(a).Cmp(x))
	} else {
		e = math.FMA(-q, b, a)
	}
	if b < 0 {
		e = -e
	}
	return roundDir64(q, e, rnd)
}

func sqrt64(a float64, rnd uint8) float64 {
	q := math.Sqrt(a)
	if !directed(rnd) || q == 0 || q != q || math.IsInf(q, 0) {
		return q
	}
	if a < 0x1p-900 {
		// The remainder a - q*q may underflow: compare exactly.
		x := new(big.Float).SetPrec(2200).SetFloat64(q)
		x.Mul(x, new(big.Float).SetFloat64(q))
		return roundDir64(q, float64(new(big.Float).SetFloat64(a).Cmp(x)), rnd)
	}
	return roundDir64(q, math.FMA(-q, q, a), rnd)
}

func fma64(a, b, c float64, rnd uint8) float64 {
	s := math.FMA(a, b, c)
	if !directed(rnd) || s != s || math.IsInf(a, 0) || math.IsInf(b, 0) || math.IsInf(c, 0) {
		return s
	}
	// The exact value of a*b+c, to compare with the nearest result s.
	x := new(big.Float).SetPrec(0).SetMode(big.ToNearestEven)
	pa := new(big.Float).SetPrec(2200).SetFloat64(a)
	pb := new(big.Float).SetPrec(2200).SetFloat64(b)
	pc := new(big.Float).SetPrec(2200).SetFloat64(c)
	x.SetPrec(2200).Mul(pa, pb).Add(x, pc)
	var e float64
	if math.IsInf(s, 0) {
		return roundDir64(s, s, rnd)
	}
	cmp := x.Cmp(new(big.Float).SetFloat64(s))
	switch {
	case cmp > 0:
		e = 1
	case cmp < 0:
		e = -1
	}
	if s == 0 && e != 0 {
		e = float64(x.Sign())
	}
	if s == 0 && e == 0 && rnd == rndRM && (math.Signbit(a) != math.Signbit(b)) != math.Signbit(c) && (a*b != 0 || c != 0) {
		return math.Copysign(0, -1)
	}
	return roundDir64(s, e, rnd)
}

// minF/maxF follow PTX: a NaN operand is ignored; -0 is below +0.
func minF(a, b float64) float64 {
	switch {
	case a != a:
		return b
	case b != b:
		return a
	case a == b:
		if math.Signbit(a) {
			return a
		}
		return b
	case a < b:
		return a
	}
	return b
}

func maxF(a, b float64) float64 {
	switch {
	case a != a:
		return b
	case b != b:
		return a
	case a == b:
		if math.Signbit(a) {
			return b
		}
		return a
	case a > b:
		return a
	}
	return b
}

// f16 conversions (IEEE binary16).

func f16ToF64(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 31:
		if frac != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1024+frac, exp-25)
}

// f64ToF16 rounds x to binary16 in mode rnd (RN when rndNone).
func f64ToF16(x float64, rnd uint8) uint16 {
	if x != x {
		return 0x7fff
	}
	var sign uint16
	if math.Signbit(x) {
		sign = 0x8000
		x = -x
	}
	if math.IsInf(x, 0) {
		return sign | 0x7c00
	}
	// Scale into an integer number of units of the result's ulp.
	exp := math.Ilogb(x)
	if x == 0 {
		return sign
	}
	if exp < -14 {
		exp = -14
	}
	ulpExp := exp - 10
	m := math.Ldexp(x, -ulpExp) // mantissa in units of ulp, >= 0
	ip, frac := math.Modf(m)
	up := false
	neg := sign != 0
	switch rnd {
	case rndRZ:
	case rndRM:
		up = neg && frac > 0
	case rndRP:
		up = !neg && frac > 0
	default:
		up = frac > 0.5 || (frac == 0.5 && uint64(ip)&1 == 1)
	}
	mi := uint64(ip)
	if up {
		mi++
	}
	// Re-normalise.
	e := ulpExp + 10
	if mi >= 2048 {
		mi >>= 1
		e++
	}
	if mi < 1024 {
		return sign | uint16(mi) // subnormal (e == -14)
	}
	if e > 15 {
		if rnd == rndRZ || (rnd == rndRM && !neg) || (rnd == rndRP && neg) {
			return sign | 0x7bff
		}
		return sign | 0x7c00
	}
	return sign | uint16(e+15)<<10 | uint16(mi-1024)
}
