package float80

import (
	"math"
	"math/bits"
)

// Add returns a + b (FADD), rounded per the rounding and precision control.
func (e *Env) Add(a, b F80) F80 { return e.addSub(a, b, false) }

// Sub returns a - b (FSUB), rounded per the rounding and precision control.
func (e *Env) Sub(a, b F80) F80 { return e.addSub(a, b, true) }

func (e *Env) addSub(a, b F80, sub bool) F80 {
	ka, kb := a.kind(), b.kind()
	if r, ok := e.nan2(a, b, ka, kb); ok {
		return r
	}
	e.denormal(ka, kb)
	sa, sb := a.Neg(), b.Neg() != sub
	switch {
	case ka == kInf && kb == kInf:
		if sa != sb {
			return e.invalid()
		}
		return Inf(sa)
	case ka == kInf:
		return Inf(sa)
	case kb == kInf:
		return Inf(sb)
	case ka == kZero && kb == kZero:
		if sa == sb {
			return Zero(sa)
		}
		return Zero(e.Rounding == RoundDown)
	case ka == kZero:
		_, eb, mb := unpack(b)
		return e.pack(sb, eb, mb, e.extFormat())
	case kb == kZero:
		_, ea, ma := unpack(a)
		return e.pack(sa, ea, ma, e.extFormat())
	}
	_, ea, ma := unpack(a)
	_, eb, mb := unpack(b)
	if eb > ea || (eb == ea && mb > ma) {
		sa, sb, ea, eb, ma, mb = sb, sa, eb, ea, mb, ma
	}
	bhi, blo := shiftRightJam(mb, 0, uint(ea-eb))
	if sa == sb {
		lo, c := bits.Add64(0, blo, 0)
		hi, c2 := bits.Add64(ma, bhi, c)
		if c2 != 0 {
			lo = lo>>1 | hi<<63 | lo&1
			hi = hi>>1 | intBit
			ea++
		}
		return e.roundPack(sa, ea, hi, lo, e.extFormat())
	}
	lo, bw := bits.Sub64(0, blo, 0)
	hi, _ := bits.Sub64(ma, bhi, bw)
	if hi == 0 && lo == 0 {
		return Zero(e.Rounding == RoundDown)
	}
	n := leadingZeros128(hi, lo)
	hi, lo = shiftLeft128(hi, lo, n)
	return e.roundPack(sa, ea-int32(n), hi, lo, e.extFormat())
}

// shiftRightJam shifts (hi:lo) right by n bits, ORing every bit shifted out
// into bit 0 of the result.
func shiftRightJam(hi, lo uint64, n uint) (uint64, uint64) {
	switch {
	case n == 0:
		return hi, lo
	case n < 64:
		s := lo<<(64-n) != 0
		lo = hi<<(64-n) | lo>>n
		if s {
			lo |= 1
		}
		return hi >> n, lo
	case n == 64:
		if lo != 0 {
			hi |= 1
		}
		return 0, hi
	case n < 128:
		s := hi<<(128-n) != 0 || lo != 0
		lo = hi >> (n - 64)
		if s {
			lo |= 1
		}
		return 0, lo
	}
	if hi|lo != 0 {
		return 0, 1
	}
	return 0, 0
}

func leadingZeros128(hi, lo uint64) uint {
	if hi != 0 {
		return uint(bits.LeadingZeros64(hi))
	}
	return 64 + uint(bits.LeadingZeros64(lo))
}

func shiftLeft128(hi, lo uint64, n uint) (uint64, uint64) {
	switch {
	case n == 0:
		return hi, lo
	case n < 64:
		return hi<<n | lo>>(64-n), lo << n
	}
	return lo << (n - 64), 0
}

// Mul returns a * b (FMUL), rounded per the rounding and precision control.
func (e *Env) Mul(a, b F80) F80 {
	ka, kb := a.kind(), b.kind()
	if r, ok := e.nan2(a, b, ka, kb); ok {
		return r
	}
	neg := a.Neg() != b.Neg()
	switch {
	case (ka == kInf && kb == kZero) || (ka == kZero && kb == kInf):
		return e.invalid()
	case ka == kInf || kb == kInf:
		e.denormal(ka, kb)
		return Inf(neg)
	case ka == kZero || kb == kZero:
		e.denormal(ka, kb)
		return Zero(neg)
	}
	e.denormal(ka, kb)
	_, ea, ma := unpack(a)
	_, eb, mb := unpack(b)
	hi, lo := bits.Mul64(ma, mb)
	exp := ea + eb + 1
	if hi&intBit == 0 {
		hi, lo = hi<<1|lo>>63, lo<<1
		exp--
	}
	return e.roundPack(neg, exp, hi, lo, e.extFormat())
}

// Div returns a / b (FDIV), rounded per the rounding and precision control.
func (e *Env) Div(a, b F80) F80 {
	ka, kb := a.kind(), b.kind()
	if r, ok := e.nan2(a, b, ka, kb); ok {
		return r
	}
	neg := a.Neg() != b.Neg()
	switch {
	case (ka == kInf && kb == kInf) || (ka == kZero && kb == kZero):
		return e.invalid()
	case ka == kInf:
		e.denormal(kb)
		return Inf(neg)
	case kb == kInf:
		e.denormal(ka)
		return Zero(neg)
	case kb == kZero:
		e.Flags |= FlagZeroDivide
		return Inf(neg)
	case ka == kZero:
		e.denormal(kb)
		return Zero(neg)
	}
	e.denormal(ka, kb)
	_, ea, ma := unpack(a)
	_, eb, mb := unpack(b)
	hi, lo, sticky, exp := divMant(ma, mb)
	if sticky {
		lo |= 1
	}
	return e.roundPack(neg, ea-eb+exp, hi, lo, e.extFormat())
}

// divMant divides normalized significands: ma/mb = (hi:lo + sticky) *
// 2^(exp-127), hi normalized.
func divMant(ma, mb uint64) (hi, lo uint64, sticky bool, exp int32) {
	nh, nl := ma, uint64(0)
	exp = -1
	if ma >= mb {
		nh, nl = ma>>1, ma<<63
		exp = 0
	}
	hi, r := bits.Div64(nh, nl, mb)
	lo, r = bits.Div64(r, 0, mb)
	return hi, lo, r != 0, exp
}

// Sqrt returns the square root of a (FSQRT), rounded per the rounding and
// precision control.
func (e *Env) Sqrt(a F80) F80 {
	ka := a.kind()
	if r, ok := e.nan1(a, ka); ok {
		return r
	}
	switch {
	case ka == kZero:
		return a
	case a.Neg():
		return e.invalid()
	case ka == kInf:
		return a
	}
	e.denormal(ka)
	_, exp, m := unpack(a)
	// a = m * 2^(exp-63) = N * 2^(exp-63-k) with N = m * 2^k in [2^126,
	// 2^128) and exp-63-k even; sqrt(a) = sqrt(N) * 2^((exp-63-k)/2).
	k := uint(64)
	if (exp-63-64)&1 != 0 {
		k = 63
	}
	nh, nl := m>>(64-k), m<<k
	s := isqrt128(nh, nl) // in [2^63, 2^64)
	ph, pl := bits.Mul64(s, s)
	rl, bw := bits.Sub64(nl, pl, 0)
	rh, _ := bits.Sub64(nh, ph, bw)
	// The root's fraction is >= 1/2 iff N - s^2 > s (it is never exactly
	// 1/2), and non-zero iff N != s^2.
	var lo uint64
	if rh != 0 || rl > s {
		lo = 1<<63 | 1
	} else if rl != 0 {
		lo = 1
	}
	return e.roundPack(false, (exp-63-int32(k))/2+63, s, lo, e.extFormat())
}

// isqrt128 returns floor(sqrt(hi:lo)) for hi >= 2^62.
func isqrt128(hi, lo uint64) uint64 {
	est := math.Sqrt(float64(hi)*0x1p64 + float64(lo))
	s := ^uint64(0)
	if est < 0x1p64-0x1p13 {
		s = uint64(est) + 1<<12 // above the root
	}
	if hi < s {
		// One integer Newton step from above lands on the root or one
		// above it.
		q, _ := bits.Div64(hi, lo, s)
		sum, c := bits.Add64(s, q, 0)
		s = sum>>1 | c<<63
	}
	for {
		ph, pl := bits.Mul64(s, s)
		if ph < hi || (ph == hi && pl <= lo) {
			return s
		}
		s--
	}
}
