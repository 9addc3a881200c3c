package gvinst

import "math"

// The reference semantics of the .f32 and .f64 ops. A .f32 value is its IEEE
// bits in the low 32 bits of a slot. Arithmetic uses Go's float32 and
// float64 operations, which on amd64 are the SSE instructions themselves, so
// NaN propagation and default NaNs match the guest's SSE exactly; the
// explicit conversions prevent any fused multiply-add. These functions
// round to nearest and set no flags; sse.go applies MXCSR (rounding, DAZ,
// FTZ, exception flags) around them.

func f32(v uint64) float32   { return math.Float32frombits(uint32(v)) }
func f64(v uint64) float64   { return math.Float64frombits(v) }
func pf32(x float32) uint64  { return uint64(math.Float32bits(x)) }
func pf64(x float64) uint64  { return math.Float64bits(x) }
func isNaN32(x float32) bool { return x != x }

// resolveRounding turns dyn and x87 into the mode the guest's MXCSR or x87
// control word selects.
func resolveRounding(r Rounding, f *frame) Rounding {
	var rc uint64
	switch r {
	case RoundMXCSR:
		rc = f[MXCSR] >> 13 & 3
	case RoundX87:
		rc = f[FPCW] >> 10 & 3
	default:
		return r
	}
	return [4]Rounding{RoundNearest, RoundDown, RoundUp, RoundZero}[rc]
}

// floatBinary computes ADD, SUB, MUL, DIV, MIN and MAX on .f32 or .f64.
func floatBinary(op Op, t Type, a, b uint64) uint64 {
	if t == F32 {
		x, y := f32(a), f32(b)
		var r float32
		switch op {
		case OpAdd:
			r = float32(x + y)
		case OpSub:
			r = float32(x - y)
		case OpMul:
			r = float32(x * y)
		case OpDiv:
			r = float32(x / y)
		case OpMin:
			if x < y {
				r = x
			} else {
				r = y
			}
		case OpMax:
			if x > y {
				r = x
			} else {
				r = y
			}
		}
		return pf32(r)
	}
	x, y := f64(a), f64(b)
	var r float64
	switch op {
	case OpAdd:
		r = float64(x + y)
	case OpSub:
		r = float64(x - y)
	case OpMul:
		r = float64(x * y)
	case OpDiv:
		r = float64(x / y)
	case OpMin:
		if x < y {
			r = x
		} else {
			r = y
		}
	case OpMax:
		if x > y {
			r = x
		} else {
			r = y
		}
	}
	return pf64(r)
}

// floatUnary computes NEG, ABS and SQRT on .f32 or .f64.
func floatUnary(op Op, t Type, a uint64) uint64 {
	if t == F32 {
		a &= 0xffffffff
		switch op {
		case OpNeg:
			return a ^ 1<<31
		case OpAbs:
			return a &^ (1 << 31)
		}
		return pf32(float32(math.Sqrt(float64(f32(a)))))
	}
	switch op {
	case OpNeg:
		return a ^ 1<<63
	case OpAbs:
		return a &^ (1 << 63)
	}
	return pf64(math.Sqrt(f64(a)))
}

// cmpFloat evaluates comparison c as PTX's setp does for floats.
func cmpFloat(c Cmp, x, y float64) bool {
	unord := x != x || y != y
	switch c {
	case CmpEq:
		return x == y
	case CmpNe:
		return !unord && x != y
	case CmpLt:
		return x < y
	case CmpLe:
		return x <= y
	case CmpGt:
		return x > y
	case CmpGe:
		return x >= y
	case CmpEqu:
		return unord || x == y
	case CmpNeu:
		return x != y
	case CmpLtu:
		return unord || x < y
	case CmpLeu:
		return unord || x <= y
	case CmpGtu:
		return unord || x > y
	case CmpGeu:
		return unord || x >= y
	case CmpNum:
		return !unord
	case CmpNan:
		return unord
	}
	return false
}

// floatVal reads a .f32 or .f64 value as a float64 (exactly).
func floatVal(t Type, v uint64) float64 {
	if t == F32 {
		return float64(f32(v))
	}
	return f64(v)
}

// roundIntegral rounds x to an integral value by mode r (resolved).
func roundIntegral(x float64, r Rounding) float64 {
	switch r {
	case RoundZero:
		return math.Trunc(x)
	case RoundDown:
		return math.Floor(x)
	case RoundUp:
		return math.Ceil(x)
	}
	return math.RoundToEven(x)
}

// roundFloat is ROUND.r.t: a's value rounded to an integral value of the
// same type.
func roundFloat(t Type, a uint64, r Rounding) uint64 {
	if t == F32 {
		x := f32(a)
		if isNaN32(x) {
			return pf32(x) | 1<<22
		}
		return pf32(float32(roundIntegral(float64(x), r)))
	}
	x := f64(a)
	if x != x {
		return a | 1<<51
	}
	return pf64(roundIntegral(x, r))
}

// floatToInt converts float x to integer type t rounding by r; NaN or out
// of range gives the x86 integer indefinite (only the sign bit set).
func floatToInt(t Type, x float64, r Rounding) uint64 {
	n := t.Bits()
	indefinite := uint64(1) << (n - 1)
	if x != x {
		return indefinite
	}
	v := roundIntegral(x, r)
	if t.IsSigned() {
		lim := math.Ldexp(1, n-1)
		if v < -lim || v >= lim {
			return indefinite
		}
		return uint64(int64(v)) & t.Mask()
	}
	if v < 0 || v >= math.Ldexp(1, n) {
		return indefinite
	}
	return uint64(v) & t.Mask()
}

// cmpFloatInt is the sign of f - x for an integral float f and integer x.
func cmpFloatInt(f float64, x uint64, signed bool) int {
	if signed {
		switch {
		case f >= 0x1p63:
			return 1
		case f < -0x1p63:
			return -1
		}
		switch i := int64(f); {
		case i < int64(x):
			return -1
		case i > int64(x):
			return 1
		}
		return 0
	}
	switch {
	case f >= 0x1p64:
		return 1
	case f < 0:
		return -1
	}
	switch i := uint64(f); {
	case i < x:
		return -1
	case i > x:
		return 1
	}
	return 0
}

// intToFloat converts integer a of type s to .f32 or .f64 rounding by r.
func intToFloat(t, s Type, a uint64, r Rounding) uint64 {
	a &= s.Mask()
	signed := s.IsSigned()
	if signed {
		a = uint64(sext(a, s.Bits()))
	}
	if t == F32 {
		var y float32
		if signed {
			y = float32(int64(a))
		} else {
			y = float32(a)
		}
		if r != RoundNearest {
			d := cmpFloatInt(float64(y), a, signed)
			if d != 0 {
				y = adjust32(y, d, r)
			}
		}
		return pf32(y)
	}
	var y float64
	if signed {
		y = float64(int64(a))
	} else {
		y = float64(a)
	}
	if r != RoundNearest {
		d := cmpFloatInt(y, a, signed)
		if d != 0 {
			y = adjust64(y, d, r)
		}
	}
	return pf64(y)
}

// adjust32 moves the nearest-rounded y one step so that it is rounded by r
// instead; d is the sign of y minus the exact value.
func adjust32(y float32, d int, r Rounding) float32 {
	switch {
	case r == RoundDown && d > 0, r == RoundZero && d > 0 && y > 0:
		return math.Nextafter32(y, float32(math.Inf(-1)))
	case r == RoundUp && d < 0, r == RoundZero && d < 0 && y < 0:
		return math.Nextafter32(y, float32(math.Inf(1)))
	}
	return y
}

func adjust64(y float64, d int, r Rounding) float64 {
	switch {
	case r == RoundDown && d > 0, r == RoundZero && d > 0 && y > 0:
		return math.Nextafter(y, math.Inf(-1))
	case r == RoundUp && d < 0, r == RoundZero && d < 0 && y < 0:
		return math.Nextafter(y, math.Inf(1))
	}
	return y
}

// convert is CVT.r.t.s for every pair of types except .f80; r is resolved.
func convert(t, s Type, a uint64, r Rounding) uint64 {
	switch {
	case t.IsInt() && s.IsInt():
		return intConvert(t, s, a)
	case t.IsInt():
		return floatToInt(t, floatVal(s, a), r)
	case s.IsInt():
		return intToFloat(t, s, a, r)
	case t == s:
		if t == F32 {
			return a & 0xffffffff
		}
		return a
	case t == F64:
		return pf64(float64(f32(a)))
	}
	// f64 to f32.
	x := f64(a)
	y := float32(x)
	if r != RoundNearest && x == x {
		switch d := float64(y) - x; {
		case d > 0 || math.IsInf(float64(y), 1) && !math.IsInf(x, 1):
			y = adjust32(y, 1, r)
		case d < 0 || math.IsInf(float64(y), -1) && !math.IsInf(x, -1):
			y = adjust32(y, -1, r)
		}
	}
	return pf32(y)
}
