package float80

import "math/bits"

// FromInt64 converts v exactly (FILD of a 16-, 32- or 64-bit integer).
func FromInt64(v int64) F80 {
	if v < 0 {
		return intToF80(true, uint64(-v))
	}
	return intToF80(false, uint64(v))
}

// FromFloat64 converts the IEEE double with bit pattern b exactly (FLD m64).
// A signaling NaN raises IE and is quieted; a denormal raises DE.
func (e *Env) FromFloat64(b uint64) F80 {
	return e.fromIEEE(b>>63 != 0, int32(b>>52&0x7FF), b&(1<<52-1), 52, 1023)
}

// FromFloat32 converts the IEEE single with bit pattern b exactly (FLD m32).
// A signaling NaN raises IE and is quieted; a denormal raises DE.
func (e *Env) FromFloat32(b uint32) F80 {
	return e.fromIEEE(b>>31 != 0, int32(b>>23&0xFF), uint64(b&(1<<23-1)), 23, 127)
}

func (e *Env) fromIEEE(neg bool, be int32, frac uint64, fbits uint, bias int32) F80 {
	s := signOf(neg)
	maxE := 2*bias + 1
	switch {
	case be == maxE:
		m := intBit | frac<<(63-fbits)
		if frac == 0 {
			return F80{Mant: intBit, SignExp: s | expMask}
		}
		if m&quietBit == 0 {
			e.Flags |= FlagInvalid
			m |= quietBit
		}
		return F80{Mant: m, SignExp: s | expMask}
	case be == 0:
		if frac == 0 {
			return Zero(neg)
		}
		e.Flags |= FlagDenormal
		n := bits.LeadingZeros64(frac)
		// value = frac * 2^(1-bias-fbits); leading bit at 63-n.
		exp := 1 - bias - int32(fbits) + int32(63-n)
		return F80{Mant: frac << uint(n), SignExp: s | uint16(exp+expBias)}
	}
	return F80{Mant: intBit | frac<<(63-fbits), SignExp: s | uint16(be-bias+expBias)}
}

// ToFloat64 rounds a to an IEEE double per the rounding control (FST m64) and
// returns its bit pattern. A signaling NaN raises IE and is quieted; an
// unsupported encoding raises IE and gives the double default NaN.
func (e *Env) ToFloat64(a F80) uint64 {
	return e.toIEEE(a, fmtDouble(), 52, 1023)
}

// ToFloat32 rounds a to an IEEE single per the rounding control (FST m32) and
// returns its bit pattern, with the same special cases as ToFloat64.
func (e *Env) ToFloat32(a F80) uint32 {
	return uint32(e.toIEEE(a, fmtSingle(), 23, 127))
}

func (e *Env) toIEEE(a F80, f format, fbits uint, bias int32) uint64 {
	ka := a.kind()
	if ka == kUnsupported || ka == kSNaN {
		e.Flags |= FlagInvalid
	}
	topBit := uint(fbits + 1 + uint(bits.Len32(uint32(2*bias+1))))
	var s uint64
	if a.Neg() {
		s = 1 << (topBit - 1)
	}
	infExp := uint64(2*bias+1) << fbits
	switch ka {
	case kUnsupported:
		return 1<<(topBit-1) | infExp | 1<<(fbits-1)
	case kSNaN, kQNaN:
		return s | infExp | (a.Mant|quietBit)<<1>>(64-fbits)
	case kInf:
		return s | infExp
	case kZero:
		return s
	}
	neg, exp, m := unpack(a)
	r := e.pack(neg, exp, m, f)
	switch r.kind() {
	case kInf:
		return s | infExp
	case kZero:
		return s
	}
	_, exp, m = unpack(r)
	if exp < f.emin {
		// Denormal in the destination; exact after rounding.
		return s | m>>uint(int32(63-fbits)+f.emin-exp)
	}
	return s | uint64(exp+bias)<<fbits | m<<1>>(64-fbits)
}

// ToInt16 converts a to a 16-bit integer per the rounding control (FIST m16).
// NaNs, infinities and out-of-range values raise IE and give the integer
// indefinite 0x8000.
func (e *Env) ToInt16(a F80) int16 { return int16(e.toInt(a, 16, false)) }

// ToInt32 converts a to a 32-bit integer per the rounding control (FIST m32),
// giving the integer indefinite 0x80000000 on invalid operations.
func (e *Env) ToInt32(a F80) int32 { return int32(e.toInt(a, 32, false)) }

// ToInt64 converts a to a 64-bit integer per the rounding control (FISTP
// m64), giving the integer indefinite 0x8000000000000000 on invalid
// operations.
func (e *Env) ToInt64(a F80) int64 { return e.toInt(a, 64, false) }

// TruncInt16 converts a to a 16-bit integer rounding toward zero (FISTTP m16).
func (e *Env) TruncInt16(a F80) int16 { return int16(e.toInt(a, 16, true)) }

// TruncInt32 converts a to a 32-bit integer rounding toward zero (FISTTP m32).
func (e *Env) TruncInt32(a F80) int32 { return int32(e.toInt(a, 32, true)) }

// TruncInt64 converts a to a 64-bit integer rounding toward zero (FISTTP m64).
func (e *Env) TruncInt64(a F80) int64 { return e.toInt(a, 64, true) }

func (e *Env) toInt(a F80, width uint, trunc bool) int64 {
	indef := int64(-1) << (width - 1)
	ka := a.kind()
	switch ka {
	case kZero:
		return 0
	case kNormal, kDenormal:
	default:
		e.Flags |= FlagInvalid
		return indef
	}
	neg, exp, m := unpack(a)
	if exp >= 64 {
		e.Flags |= FlagInvalid
		return indef
	}
	var q uint64
	var rbit, sticky bool
	switch {
	case exp < 0:
		rbit = exp == -1
		sticky = exp < -1 || m<<1 != 0
	case exp == 63:
		q = m
	default:
		f := uint(63 - exp)
		q = m >> f
		rem := m << (64 - f)
		rbit = rem>>63 != 0
		sticky = rem<<1 != 0
	}
	up := false
	if rbit || sticky {
		up = !trunc && e.roundUp(neg, q, rbit, sticky)
	}
	carry := false
	if up {
		q++
		carry = q == 0
	}
	limit := uint64(1) << (width - 1)
	if carry || q > limit || (q == limit && !neg) {
		e.Flags |= FlagInvalid
		return indef
	}
	if rbit || sticky {
		e.Flags |= FlagPrecision
		if up {
			e.Flags |= FlagRoundedUp
		}
	}
	if neg {
		return -int64(q)
	}
	return int64(q)
}
