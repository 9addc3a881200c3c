package gvinst

import "math/bits"

// The reference semantics of the integer ops, type-generic. The interpreter's
// specialised fast paths must agree with these functions (the tests check
// it); everything the fast paths do not cover calls them.

// sext sign-extends the low n bits of v.
func sext(v uint64, n int) int64 {
	if n >= 64 {
		return int64(v)
	}
	s := 64 - uint(n)
	return int64(v<<s) >> s
}

// intBinary computes the binary integer op on type t. Sources are read as
// their low t bits; the result is t's bits zero-extended. ok is false when
// the op traps (#DE).
func intBinary(op Op, t Type, a, b uint64) (r uint64, ok bool) {
	m := t.Mask()
	n := t.Bits()
	a &= m
	b &= m
	signed := t.IsSigned()
	switch op {
	case OpAdd:
		r = a + b
	case OpSub:
		r = a - b
	case OpMul:
		r = a * b
	case OpMulHi:
		r = mulHi(t, a, b)
	case OpDiv, OpRem:
		if b == 0 {
			return 0, false
		}
		if signed {
			sa, sb := sext(a, n), sext(b, n)
			if sb == -1 && sa == sext(1<<(n-1), n) {
				return 0, false
			}
			if op == OpDiv {
				r = uint64(sa / sb)
			} else {
				r = uint64(sa % sb)
			}
		} else if op == OpDiv {
			r = a / b
		} else {
			r = a % b
		}
	case OpAnd:
		r = a & b
	case OpOr:
		r = a | b
	case OpXor:
		r = a ^ b
	case OpShl:
		if b >= uint64(n) {
			r = 0
		} else {
			r = a << b
		}
	case OpShr:
		if b >= uint64(n) {
			r = 0
		} else {
			r = a >> b
		}
	case OpSar:
		if b >= uint64(n) {
			b = uint64(n - 1)
		}
		r = uint64(sext(a, n) >> b)
	case OpRol, OpRor:
		k := b % uint64(n)
		if op == OpRor {
			k = (uint64(n) - k) % uint64(n)
		}
		if k == 0 {
			r = a
		} else {
			r = a<<k | a>>(uint64(n)-k)
		}
	case OpMin, OpMax:
		less := a < b
		if signed {
			less = sext(a, n) < sext(b, n)
		}
		if (op == OpMin) == less {
			r = a
		} else {
			r = b
		}
	default:
		return 0, false
	}
	return r & m, true
}

// mulHi is the high t-width half of the 2t-bit product of a and b (signed
// for signed t); a and b are already masked to t.
func mulHi(t Type, a, b uint64) uint64 {
	n := t.Bits()
	if n == 64 {
		hi, _ := bits.Mul64(a, b)
		if t.IsSigned() {
			if int64(a) < 0 {
				hi -= b
			}
			if int64(b) < 0 {
				hi -= a
			}
		}
		return hi
	}
	if t.IsSigned() {
		p := sext(a, n) * sext(b, n)
		return uint64(p>>uint(n)) & t.Mask()
	}
	return (a * b) >> uint(n) & t.Mask()
}

// intUnary computes NOT, NEG, ABS, CLZ, CTZ, POPC and BSWAP on type t.
func intUnary(op Op, t Type, a uint64) uint64 {
	m := t.Mask()
	n := t.Bits()
	a &= m
	var r uint64
	switch op {
	case OpNot:
		r = ^a
	case OpNeg:
		r = -a
	case OpAbs:
		if sext(a, n) < 0 {
			r = -a
		} else {
			r = a
		}
	case OpClz:
		r = uint64(bits.LeadingZeros64(a) - (64 - n))
	case OpCtz:
		if a == 0 {
			r = uint64(n)
		} else {
			r = uint64(bits.TrailingZeros64(a))
		}
	case OpPopc:
		r = uint64(bits.OnesCount64(a))
	case OpBswap:
		r = bits.ReverseBytes64(a) >> uint(64-n)
	}
	return r & m
}

// divWide divides the 2t-bit dividend hi:lo by b, returning the quotient or
// the remainder; ok is false when b is 0 or the quotient does not fit t.
func divWide(t Type, hi, lo, b uint64, rem bool) (uint64, bool) {
	n := uint(t.Bits())
	m := t.Mask()
	hi, lo, b = hi&m, lo&m, b&m
	if b == 0 {
		return 0, false
	}
	if n < 64 {
		if !t.IsSigned() {
			d := hi<<n | lo
			q := d / b
			if q > m {
				return 0, false
			}
			if rem {
				return d % b, true
			}
			return q, true
		}
		d := sext(hi<<n|lo, int(2*n))
		sb := sext(b, int(n))
		q := d / sb
		if q < -(1<<(n-1)) || q > 1<<(n-1)-1 {
			return 0, false
		}
		if rem {
			return uint64(d%sb) & m, true
		}
		return uint64(q) & m, true
	}
	if !t.IsSigned() {
		if hi >= b {
			return 0, false
		}
		q, r := bits.Div64(hi, lo, b)
		if rem {
			return r, true
		}
		return q, true
	}
	// Signed 128/64: divide the magnitudes, then fix the signs.
	neg := int64(hi) < 0
	ahi, alo := hi, lo
	if neg {
		var borrow uint64
		alo, borrow = bits.Sub64(0, lo, 0)
		ahi, _ = bits.Sub64(0, hi, borrow)
	}
	bneg := int64(b) < 0
	ab := b
	if bneg {
		ab = -b
	}
	if ahi >= ab {
		return 0, false
	}
	q, r := bits.Div64(ahi, alo, ab)
	if neg != bneg {
		if q > 1<<63 {
			return 0, false
		}
		q = -q
	} else if q >= 1<<63 {
		return 0, false
	}
	if neg {
		r = -r
	}
	if rem {
		return r, true
	}
	return q, true
}

// cmpInt evaluates integer comparison c of a and b on type t (unsigned order
// for .uN and .bN, signed for .sN).
func cmpInt(c Cmp, t Type, a, b uint64) bool {
	m := t.Mask()
	a &= m
	b &= m
	if t.IsSigned() {
		n := t.Bits()
		sa, sb := sext(a, n), sext(b, n)
		switch c {
		case CmpLt, CmpLtu:
			return sa < sb
		case CmpLe, CmpLeu:
			return sa <= sb
		case CmpGt, CmpGtu:
			return sa > sb
		case CmpGe, CmpGeu:
			return sa >= sb
		}
	}
	switch c {
	case CmpEq, CmpEqu:
		return a == b
	case CmpNe, CmpNeu:
		return a != b
	case CmpLt, CmpLtu:
		return a < b
	case CmpLe, CmpLeu:
		return a <= b
	case CmpGt, CmpGtu:
		return a > b
	case CmpGe, CmpGeu:
		return a >= b
	case CmpNum:
		return true
	}
	return false
}

// intConvert converts integer a of type s to integer type t: truncating, or
// extending by s's signedness.
func intConvert(t, s Type, a uint64) uint64 {
	a &= s.Mask()
	if s.IsSigned() {
		a = uint64(sext(a, s.Bits()))
	}
	return a & t.Mask()
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
