package gpusim

import (
	"math"
	"math/big"

	"github.com/gxbit/gxbit/ptx"
)

// cvtHandler builds the per-lane conversion of cvt.dtype.stype.
func cvtHandler(x *inst, in *ptx.Inst) (handler, error) {
	dt, st := in.Types[0], in.Types[1]
	if dt == ptx.BF16 || st == ptx.BF16 || dt == ptx.BF16x2 || st == ptx.BF16x2 || dt == ptx.F16x2 || st == ptx.F16x2 || dt == ptx.Pred || st == ptx.Pred || dt == ptx.B128 || st == ptx.B128 {
		return nil, unsupported(in.Pos, "%s is not supported by the simulator", in.String())
	}
	rnd, ftz, sat := x.rnd, x.ftz, x.sat
	dsz, ssz := uint(dt.Bits()), uint(st.Bits())
	store := func(v uint64) uint64 { // extend to the register as PTX does
		if dt.IsSigned() {
			return uint64(int64(v<<(64-dsz)) >> (64 - dsz))
		}
		return v & sizeMask(uint8(dsz/8))
	}
	srcFloat := func(a uint64) float64 {
		switch st {
		case ptx.F16:
			return f16ToF64(uint16(a))
		case ptx.F32:
			f := f32(a)
			if ftz {
				f = flush32(f)
			}
			return float64(f)
		}
		v := f64(a)
		if ftz {
			v = flush64(v)
		}
		return v
	}
	var f func(a uint64) uint64
	switch {
	case !st.IsFloat() && !dt.IsFloat():
		f = func(a uint64) uint64 {
			if st.IsSigned() {
				v := int64(a<<(64-ssz)) >> (64 - ssz)
				if sat {
					lo, hi := intRange(dt)
					if v < 0 && lo == 0 {
						v = 0
					} else if v < 0 && v < int64(lo) {
						v = int64(lo)
					} else if v > 0 && uint64(v) > hi {
						v = int64(hi)
					}
				}
				return store(uint64(v))
			}
			u := a & sizeMask(uint8(ssz/8))
			if sat {
				if _, hi := intRange(dt); u > hi {
					u = hi
				}
			}
			return store(u)
		}
	case !st.IsFloat():
		f = func(a uint64) uint64 {
			var r float64
			switch {
			case st.IsSigned():
				v := int64(a<<(64-ssz)) >> (64 - ssz)
				r = intToFloat(new(big.Float).SetInt64(v), v > -(1<<53) && v < 1<<53, float64(v), dt, rnd)
			default:
				u := a & sizeMask(uint8(ssz/8))
				r = intToFloat(new(big.Float).SetUint64(u), u < 1<<53, float64(u), dt, rnd)
			}
			return floatOut(r, dt, ftz, sat)
		}
	case !dt.IsFloat():
		f = func(a uint64) uint64 {
			v := srcFloat(a)
			if v != v {
				// sm_90: a NaN converts to the most negative value for
				// 64-bit targets and from f64 to 32-bit ones; f32 and f16
				// NaN to a 32-bit or narrower integer is 0.
				if dsz == 64 || (st == ptx.F64 && dsz == 32) {
					return store(1 << (dsz - 1))
				}
				return 0
			}
			switch rnd {
			case rndRNI, rndRN:
				v = math.RoundToEven(v)
			case rndRMI, rndRM:
				v = math.Floor(v)
			case rndRPI, rndRP:
				v = math.Ceil(v)
			default:
				v = math.Trunc(v)
			}
			lo, hi := intRange(dt)
			if dt.IsSigned() {
				switch {
				case v <= float64(lo):
					return store(uint64(lo))
				case v >= float64(hi): // float64(hi) rounds up to 2^n-1... for 64-bit: 2^63
					return store(hi)
				}
				return store(uint64(int64(v)))
			}
			switch {
			case v <= 0:
				return 0
			case v >= float64(hi):
				return store(hi)
			}
			return store(uint64(v))
		}
	default:
		f = func(a uint64) uint64 {
			v := srcFloat(a)
			if v != v && !sat {
				// sm_90 keeps a NaN's payload across f32/f64 conversions.
				switch {
				case st == ptx.F32 && dt == ptx.F64:
					return math.Float64bits(float64(f32(a)))
				case st == ptx.F64 && dt == ptx.F32:
					return uint64(math.Float32bits(float32(f64(a))))
				case st == dt:
					return a & sizeMask(uint8(dsz/8))
				}
			}
			switch rnd {
			case rndRNI:
				v = math.RoundToEven(v)
			case rndRZI:
				v = math.Trunc(v)
			case rndRMI:
				v = math.Floor(v)
			case rndRPI:
				v = math.Ceil(v)
			}
			switch dt {
			case ptx.F16:
				if sat {
					v = sat64(v)
				}
				return uint64(f64ToF16(v, rnd))
			case ptx.F32:
				r := float64(roundF32(v, 0, rnd))
				return floatOut(r, dt, ftz, sat)
			}
			return floatOut(v, dt, ftz, sat)
		}
	}
	x.f2 = func(a, _ uint64) uint64 { return f(a) }
	return opF1, nil
}

// intRange is the range of an integer type as (min as int64 bits, max).
func intRange(t ptx.Type) (int64, uint64) {
	n := uint(t.Bits())
	if t.IsSigned() {
		return -1 << (n - 1), 1<<(n-1) - 1
	}
	if n == 64 {
		return 0, math.MaxUint64
	}
	return 0, 1<<n - 1
}

func intToFloat(big0 *big.Float, exact bool, f float64, dt ptx.Type, rnd uint8) float64 {
	if dt == ptx.F16 {
		return f16ToF64(f64ToF16(f, rnd))
	}
	if exact {
		if dt == ptx.F32 {
			return float64(roundF32(f, 0, rnd))
		}
		return f
	}
	prec := uint(53)
	if dt == ptx.F32 {
		prec = 24
	}
	mode := big.ToNearestEven
	switch rnd {
	case rndRZ:
		mode = big.ToZero
	case rndRM:
		mode = big.ToNegativeInf
	case rndRP:
		mode = big.ToPositiveInf
	}
	r, _ := new(big.Float).SetPrec(prec).SetMode(mode).Set(big0).Float64()
	return r
}

func floatOut(v float64, dt ptx.Type, ftz, sat bool) uint64 {
	switch dt {
	case ptx.F16:
		if sat {
			v = sat64(v)
		}
		return uint64(f64ToF16(v, rndRN))
	case ptx.F32:
		f := float32(v)
		if ftz {
			f = flush32(f)
		}
		if sat {
			f = sat32(f)
		}
		return bits32(f)
	}
	if ftz {
		v = flush64(v)
	}
	if sat {
		v = sat64(v)
	}
	return bits64(v)
}
