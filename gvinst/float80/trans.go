package float80

import (
	"math"
	"math/big"
	"math/bits"
	"sync"
)

// Transcendental instructions. Each computes its result with math/big at
// tprec bits (series with argument reduction), then rounds once to the 64-bit
// format per the rounding control; precision control does not apply, as on
// the x87. The working error is far below 2^-140 relative, so results are the
// correctly rounded values of the exact function (for FSIN, FCOS, FSINCOS and
// FPTAN: of the function of the argument reduced modulo the x87's 66-bit
// value of π, as the hardware does), except for the x87's tiny-argument
// shortcuts, which are reproduced.

const tprec = 160

// bigConsts holds constants and tables computed once at tprec bits; they
// are never modified after construction.
type bigConsts struct {
	ln2, pi, piHalf, piQuarter, pi66Half *big.Float
	// log2Tab[j-logTabMin] = log2(1 + j/64) for j in [logTabMin, logTabMax].
	log2Tab [logTabMax - logTabMin + 1]*big.Float
	// atanTab[j] = atan(j/64) for j in [0, 64].
	atanTab [65]*big.Float
	// sinTab[j], cosTab[j] = sin(j/64), cos(j/64) for j in [0, 56] (a
	// reduced trigonometric argument is at most about π/4 < 51/64).
	sinTab, cosTab [57]*big.Float
}

const (
	logTabMin = -20 // 1 + j/64 covers [sqrt(1/2), sqrt(2)) with the
	logTabMax = 28  // reduced argument at most 1/128 away
)

var constants = sync.OnceValue(func() *bigConsts {
	c := &bigConsts{}
	// ln 2 = 2 atanh(1/3).
	third := newF().Quo(newF().SetInt64(1), newF().SetInt64(3))
	c.ln2 = atanhSeries(c, third)
	c.ln2.SetMantExp(c.ln2, 1)
	// π = 16 atan(1/5) - 4 atan(1/239) (Machin).
	a := atanSeries(c, newF().Quo(newF().SetInt64(1), newF().SetInt64(5)))
	b := atanSeries(c, newF().Quo(newF().SetInt64(1), newF().SetInt64(239)))
	c.pi = newF().Sub(a.SetMantExp(a, 4), b.SetMantExp(b, 2))
	c.piHalf = newF().SetMantExp(c.pi, -1)
	c.piQuarter = newF().SetMantExp(c.pi, -2)
	// The x87 reduces trigonometric arguments with π rounded to 66 bits
	// (0xC90FDAA22168C234C truncated to 66 bits, which is also π rounded
	// to nearest at 66 bits).
	p66 := newF().SetPrec(66).SetMode(big.ToNearestEven).Set(c.pi)
	c.pi66Half = newF().SetMantExp(p66, -1)
	// log2(1 + j/64) = 2 atanh(j / (128 + j)) / ln 2.
	for j := logTabMin; j <= logTabMax; j++ {
		r := atanhSeries(c, newF().Quo(newF().SetInt64(int64(j)), newF().SetInt64(int64(128+j))))
		r.SetMantExp(r, 1)
		c.log2Tab[j-logTabMin] = r.Quo(r, c.ln2)
	}
	// atan(j/64) by halving the argument three times:
	// atan(t) = 2 atan(t / (1 + sqrt(1 + t^2))).
	one := newF().SetInt64(1)
	for j := range c.atanTab {
		t := newF().Quo(newF().SetInt64(int64(j)), newF().SetInt64(64))
		s := newF()
		for i := 0; i < 3; i++ {
			s.Mul(t, t)
			s.Add(s, one)
			s.Sqrt(s)
			s.Add(s, one)
			t.Quo(t, s)
		}
		r := atanSeries(c, t)
		c.atanTab[j] = r.SetMantExp(r, 3)
	}
	for j := range c.sinTab {
		t := newF().SetInt64(int64(j))
		c.sinTab[j], c.cosTab[j] = sinCosSeries(t.SetMantExp(t, -6))
	}
	return c
})

func newF() *big.Float { return new(big.Float).SetPrec(tprec) }

// toBig converts a finite a exactly.
func toBig(a F80) *big.Float {
	if a.kind() == kZero {
		f := newF()
		if a.Neg() {
			f.Neg(f)
		}
		return f
	}
	neg, exp, m := unpack(a)
	f := newF().SetUint64(m)
	f.SetMantExp(f, int(exp)-63)
	if neg {
		f.Neg(f)
	}
	return f
}

// tail says how the exact result relates to the computed value passed to
// roundBig.
type tail uint8

const (
	// tailUnknown: the result is irrational and the computed value has
	// bits beyond the 128 that decide rounding, so their truncation plus a
	// sticky bit rounds correctly.
	tailUnknown tail = iota
	// tailExact: the computed value is the exact result.
	tailExact
	// tailDown: the exact result is smaller in magnitude than the computed
	// value by less than its last bit (a series whose first omitted term
	// was too small to change the sum, e.g. sin x = x - x^3/6 for tiny x).
	tailDown
	// tailUp: the exact result is larger in magnitude, likewise.
	tailUp
)

// roundBig rounds x to the extended format with 64-bit precision, t telling
// how the exact result relates to x.
func (e *Env) roundBig(x *big.Float, t tail) F80 {
	if x.Sign() == 0 {
		return Zero(x.Signbit())
	}
	if x.IsInf() {
		return Inf(x.Signbit())
	}
	neg := x.Signbit()
	m := newF()
	exp := int32(x.MantExp(m)) - 1 // x = m * 2^(exp+1), 0.5 <= |m| < 1
	m.Abs(m)
	m.SetMantExp(m, 64)
	hi, _ := m.Uint64()
	m.Sub(m, newF().SetUint64(hi))
	m.SetMantExp(m, 64)
	lo, _ := m.Uint64()
	m.Sub(m, newF().SetUint64(lo))
	switch {
	case m.Sign() != 0 || t == tailUnknown || t == tailUp:
		lo |= 1
	case t == tailDown:
		// Just below hi:lo: (hi:lo - 1) with the sticky bit set.
		var b uint64
		lo, b = bits.Sub64(lo, 1, 0)
		hi -= b
		if hi&intBit == 0 {
			hi, lo = hi<<1|lo>>63, lo<<1
			exp--
		}
		lo |= 1
	}
	return e.roundPack(neg, exp, hi, lo, ext64())
}

// inexactExact rounds the exact value x but reports the result as inexact
// (PE, and UE when it is denormal), as FYL2X and FYL2XP1 do for results that
// happen to be exact.
func (e *Env) inexactExact(x *big.Float) F80 {
	r := e.roundBig(x, tailExact)
	e.Flags |= FlagPrecision
	if r.kind() == kDenormal {
		e.Flags |= FlagUnderflow
	}
	return r
}

// small reports whether term is negligible next to sum.
func small(term, sum *big.Float) bool {
	return term.Sign() == 0 || (sum.Sign() != 0 && term.MantExp(nil) < sum.MantExp(nil)-tprec-8)
}

// atanhSeries returns t + t^3/3 + t^5/5 + ... for |t| < 1.
func atanhSeries(c *bigConsts, t *big.Float) *big.Float {
	return oddSeries(c, t, false)
}

// atanSeries returns t - t^3/3 + t^5/5 - ... for |t| < 1.
func atanSeries(c *bigConsts, t *big.Float) *big.Float {
	return oddSeries(c, t, true)
}

// oddSeries sums t^(2k+1)/(2k+1), with alternating signs if alt.
func oddSeries(c *bigConsts, t *big.Float, alt bool) *big.Float {
	sum := newF().Set(t)
	t2 := newF().Mul(t, t)
	if alt {
		t2.Neg(t2)
	}
	pow := newF().Set(t)
	term, k := newF(), newF()
	for n := int64(3); ; n += 2 {
		pow.Mul(pow, t2)
		term.Quo(pow, k.SetInt64(n))
		if small(term, sum) {
			return sum
		}
		sum.Add(sum, term)
	}
}

// log2Big returns log2(x) for x > 0: with x = m * 2^k, m in [sqrt(1/2),
// sqrt(2)) and c = 1 + j/64 the nearest table point, log2(x) = k + log2(c) +
// 2 atanh((m-c)/(m+c)) / ln 2.
func log2Big(x *big.Float) *big.Float {
	c := constants()
	m := newF()
	k := x.MantExp(m) // m in [0.5, 1)
	if m.Cmp(big.NewFloat(0.70710678118654752)) < 0 {
		m.SetMantExp(m, 1)
		k--
	}
	// j = round((m - 1) * 64)
	d := newF().Sub(m, newF().SetInt64(1))
	d.SetMantExp(d, 6)
	jf, _ := d.Float64()
	j := int64(math.Round(jf))
	cj := newF().SetInt64(64 + j)
	cj.SetMantExp(cj, -6)
	num := newF().Sub(m, cj)
	den := newF().Add(m, cj)
	r := lnRatio(num, den)
	r.Add(r, c.log2Tab[j-logTabMin])
	return r.Add(r, newF().SetInt64(int64(k)))
}

// lnRatio returns 2 atanh(num/den) / ln 2 = log2((den+num)/(den-num)).
func lnRatio(num, den *big.Float) *big.Float {
	c := constants()
	t := newF().Quo(num, den)
	r := atanhSeries(c, t)
	r.SetMantExp(r, 1)
	return r.Quo(r, c.ln2)
}

// expm1Big returns e^x - 1 for |x| <= 1, with full relative accuracy.
func expm1Big(x *big.Float) *big.Float {
	const halvings = 8
	y := newF().SetMantExp(x, -halvings)
	sum := newF().Set(y)
	term, k := newF().Set(y), newF()
	for n := int64(2); ; n++ {
		term.Mul(term, y)
		term.Quo(term, k.SetInt64(n))
		if small(term, sum) {
			break
		}
		sum.Add(sum, term)
	}
	two, t := newF().SetInt64(2), newF()
	for i := 0; i < halvings; i++ { // e^(2y)-1 = (e^y-1)(e^y+1)
		t.Add(sum, two)
		sum.Mul(sum, t)
	}
	return sum
}

// atanBig returns atan(t) for t >= 0: with c = j/64 the nearest table point,
// atan(t) = atan(c) + atan((t-c)/(1+tc)).
func atanBig(t *big.Float) *big.Float {
	c := constants()
	one := newF().SetInt64(1)
	inv := t.Cmp(one) > 0
	if inv {
		t = newF().Quo(one, t)
	} else {
		t = newF().Set(t)
	}
	s := newF().SetMantExp(t, 6)
	jf, _ := s.Float64()
	j := int64(math.Round(jf))
	var r *big.Float
	if j == 0 {
		r = atanSeries(c, t)
	} else {
		cj := newF().SetInt64(j)
		cj.SetMantExp(cj, -6)
		num := newF().Sub(t, cj)
		den := newF().Mul(t, cj)
		den.Add(den, one)
		r = atanSeries(c, num.Quo(num, den))
		r.Add(r, c.atanTab[j])
	}
	if inv {
		r.Sub(c.piHalf, r)
	}
	return r
}

// sinCosBig returns sin(r) and cos(r) for |r| <= about π/4: with c = j/64
// the nearest table point to |r| and d = |r| - c, sin|r| = sin c cos d +
// cos c sin d and cos r = cos c cos d - sin c sin d.
func sinCosBig(r *big.Float) (sin, cos *big.Float) {
	c := constants()
	d := newF().Abs(r)
	jf, _ := newF().SetMantExp(d, 6).Float64()
	j := int(math.Round(jf))
	if j == 0 || j >= len(c.sinTab) {
		return sinCosSeries(r)
	}
	cj := newF().SetInt64(int64(j))
	d.Sub(d, cj.SetMantExp(cj, -6))
	sd, cd := sinCosSeries(d)
	sin = newF().Mul(c.sinTab[j], cd)
	sin.Add(sin, newF().Mul(c.cosTab[j], sd))
	if r.Sign() < 0 {
		sin.Neg(sin)
	}
	cos = newF().Mul(c.cosTab[j], cd)
	cos.Sub(cos, newF().Mul(c.sinTab[j], sd))
	return sin, cos
}

// sinCosSeries returns sin(r) and cos(r) by their Taylor series, for small
// |r|.
func sinCosSeries(r *big.Float) (sin, cos *big.Float) {
	r2 := newF().Mul(r, r)
	r2.Neg(r2)
	sin = newF().Set(r)
	term, k := newF().Set(r), newF()
	for n := int64(2); ; n += 2 {
		term.Mul(term, r2)
		term.Quo(term, k.SetInt64(n*(n+1)))
		if small(term, sin) {
			break
		}
		sin.Add(sin, term)
	}
	cos = newF().SetInt64(1)
	term.SetInt64(1)
	for n := int64(1); ; n += 2 {
		term.Mul(term, r2)
		term.Quo(term, k.SetInt64(n*(n+1)))
		if small(term, cos) {
			break
		}
		cos.Add(cos, term)
	}
	return sin, cos
}

// reduce returns r and n with x = n*(π66/2) + r, |r| <= about π/4, exactly.
func reduce(x *big.Float) (*big.Float, int64) {
	c := constants()
	ax := newF().Abs(x)
	if ax.Cmp(c.piQuarter) <= 0 {
		return newF().Set(x), 0
	}
	q := newF().Quo(x, c.pi66Half)
	var half big.Float
	half.SetFloat64(0.5)
	if q.Sign() < 0 {
		half.Neg(&half)
	}
	q.Add(q, &half)
	n, _ := q.Int64() // truncation of q ± 0.5: nearest integer
	wide := new(big.Float).SetPrec(3 * tprec)
	wide.Mul(new(big.Float).SetPrec(3*tprec).SetInt64(n), c.pi66Half)
	r := new(big.Float).SetPrec(3*tprec).Sub(x, wide)
	return r.SetPrec(tprec), n
}

// trigArg handles the special operands of FSIN, FCOS, FSINCOS and FPTAN. It
// returns done=true with res when the result is decided without computing.
func (e *Env) trigArg(a F80) (res F80, done, incomplete bool) {
	ka := a.kind()
	if r, ok := e.nan1(a, ka); ok {
		return r, true, false
	}
	switch ka {
	case kInf:
		return e.invalid(), true, false
	case kZero:
		return a, true, false
	}
	if a.Exp() >= expBias+63 {
		return a, true, true
	}
	e.denormal(ka)
	return F80{}, false, false
}

// The x87 returns tiny arguments of FSIN, FCOS and FPTAN, and tiny
// quotients of FPATAN, without evaluating the function: sin x = x and
// cos x = 1 for |x| < 2^-68, tan r = r for a reduced argument |r| < 2^-32
// (rounded as if just below r when |r| >= 2^-68),
// atan(y/x) = y/x for 0 < y/x < 2^-40 (x > 0; y/x rounded once), always
// reporting PE. These are the host's thresholds, measured by the
// differential tests; in directed rounding modes such results differ from
// the correctly rounded ones by one unit in the last place.
const (
	sinCosIdentityExp = -69 // |x| < 2^-68: exponent of the leading bit <= -69
	tanIdentityExp    = -33
	atanIdentityExp   = -41
)

// tiny reports whether a is finite, non-zero and below 2^(maxExp+1).
func tiny(a F80, maxExp int32) bool {
	k := a.kind()
	if k != kNormal && k != kDenormal {
		return false
	}
	_, exp, _ := unpack(a)
	return exp <= maxExp
}

// inexactCopy returns a normalized and reports it as an inexact result (PE,
// and UE when it is denormal), as the x87's shortcuts for tiny arguments do.
func (e *Env) inexactCopy(a F80) F80 {
	neg, exp, m := unpack(a)
	r := e.pack(neg, exp, m, ext64())
	e.Flags |= FlagPrecision
	if r.kind() == kDenormal {
		e.Flags |= FlagUnderflow
	}
	return r
}

// Sin returns sin(a) (FSIN). When |a| >= 2^63 it returns a unchanged with
// incomplete set (C2). For |a| < 2^-68 it returns a with PE, as the x87 does.
func (e *Env) Sin(a F80) (r F80, incomplete bool) {
	if r, done, inc := e.trigArg(a); done {
		return r, inc
	}
	s, _ := e.sinCos(a, true, false)
	return s, false
}

// Cos returns cos(a) (FCOS), with the same out-of-range rule as Sin. For
// |a| < 2^-68 it returns 1 with PE, as the x87 does.
func (e *Env) Cos(a F80) (r F80, incomplete bool) {
	if r, done, inc := e.trigArg(a); done {
		if !inc && a.kind() == kZero {
			return One(), false
		}
		return r, inc
	}
	_, c := e.sinCos(a, false, true)
	return c, false
}

// SinCos returns sin(a) and cos(a) (FSINCOS leaves cos in ST(0) and sin in
// ST(1)); FlagRoundedUp reports the rounding of the cosine. When |a| >= 2^63 both results are a and incomplete is set; the
// caller then leaves the stack unchanged.
func (e *Env) SinCos(a F80) (sin, cos F80, incomplete bool) {
	if r, done, inc := e.trigArg(a); done {
		if !inc && a.kind() == kZero {
			return a, One(), false
		}
		return r, r, inc
	}
	s, c := e.sinCos(a, true, true)
	return s, c, false
}

// Tan computes tan(a) for FPTAN, which leaves tan in ST(1) and pushes
// pushed: 1.0 normally, or the NaN result itself when a is a NaN or invalid.
// When |a| >= 2^63 it returns tan = a with incomplete set (C2) and the caller
// changes nothing on the stack. For a reduced argument |r| < 2^-32 it returns
// r with PE, as the x87 does.
func (e *Env) Tan(a F80) (tan, pushed F80, incomplete bool) {
	if r, done, inc := e.trigArg(a); done {
		switch {
		case inc:
			return r, F80{}, true
		case a.kind() == kZero:
			return r, One(), false
		}
		return r, r, false
	}
	r0, n := reduce(toBig(a))
	if n&1 == 0 && r0.Sign() != 0 && r0.MantExp(nil)-1 <= tanIdentityExp {
		// tan r = r for tiny reduced arguments. For |r| >= 2^-68 the x87
		// rounds as if the value were just below r in magnitude (toward
		// zero it gives r less one unit, to nearest r with C1 set).
		t := tailDown
		if r0.MantExp(nil)-1 <= sinCosIdentityExp {
			t = tailExact
		}
		res := e.roundBig(r0, t)
		e.Flags |= FlagPrecision
		if res.kind() == kDenormal {
			e.Flags |= FlagUnderflow
		}
		return res, One(), false
	}
	s, c := sinCosBig(r0)
	// For tiny r the series leave sin r = r and cos r = 1 exactly, and
	// tan r = r + r^3/3 + ... is just above r in magnitude, cot r = 1/r -
	// r/3 - ... just below 1/r.
	t := tailUnknown
	if s.Cmp(r0) == 0 && c.Cmp(newF().SetInt64(1)) == 0 {
		t = tailUp
		if n&1 != 0 {
			t = tailDown
		}
	}
	if n&1 != 0 {
		s, c = c, s.Neg(s)
	}
	return e.roundBig(s.Quo(s, c), t), One(), false
}

func (e *Env) sinCos(a F80, wantSin, wantCos bool) (sin, cos F80) {
	if tiny(a, sinCosIdentityExp) {
		if wantSin {
			sin = e.inexactCopy(a)
		}
		e.Flags |= FlagPrecision
		return sin, One()
	}
	r, n := reduce(toBig(a))
	s, c := sinCosBig(r)
	// For tiny r the series leave sin r = r and cos r = 1 exactly; both
	// exact values are just below those in magnitude.
	st, ct := tailUnknown, tailUnknown
	if s.Cmp(r) == 0 {
		st = tailDown
	}
	if c.Cmp(newF().SetInt64(1)) == 0 {
		ct = tailDown
	}
	if n&1 != 0 {
		st, ct = ct, st
	}
	switch n & 3 {
	case 1:
		s, c = c, s.Neg(s)
	case 2:
		s, c = s.Neg(s), c.Neg(c)
	case 3:
		s, c = c.Neg(c), s
	}
	if wantSin {
		saved := e.Flags
		sin = e.roundBig(s, st)
		if wantCos { // the x87 reports C1 for the cosine, left in ST(0)
			e.Flags = saved | e.Flags&^FlagRoundedUp
		}
	}
	if wantCos {
		cos = e.roundBig(c, ct)
	}
	return sin, cos
}

// F2xm1 returns 2^a - 1 (F2XM1). The x87 defines it for |a| <= 1; for a
// finite |a| > 1 it returns a unchanged with PE, as the hardware does. Like
// the hardware it reports PE for every finite non-zero a, also for the exact
// results at a = ±1.
func (e *Env) F2xm1(a F80) F80 {
	ka := a.kind()
	if r, ok := e.nan1(a, ka); ok {
		return r
	}
	switch ka {
	case kZero:
		return a
	case kInf:
		if a.Neg() {
			return F80{Mant: intBit, SignExp: signBit | expBias}
		}
		return a
	}
	e.denormal(ka)
	neg, exp, m := unpack(a)
	switch {
	case exp > 0 || (exp == 0 && m != intBit):
		e.Flags |= FlagPrecision
		return a
	case exp == 0: // 2^1 - 1 = 1, 2^-1 - 1 = -1/2
		e.Flags |= FlagPrecision
		if neg {
			return F80{Mant: intBit, SignExp: signBit | (expBias - 1)}
		}
		return One()
	}
	x := toBig(a)
	return e.roundBig(expm1Big(x.Mul(x, constants().ln2)), tailUnknown)
}

// Yl2x returns y * log2(x) (FYL2X: x is ST(0), y is ST(1); the result
// replaces ST(1) and the stack is popped).
func (e *Env) Yl2x(x, y F80) F80 {
	kx, ky := x.kind(), y.kind()
	if r, ok := e.nan2(x, y, kx, ky); ok {
		return r
	}
	if x.Neg() && kx != kZero {
		return e.invalid()
	}
	// Sign and class of log2(x): -inf for 0, negative below 1, +0 at 1.
	one := F80{Mant: intBit, SignExp: expBias}
	switch {
	case kx == kZero:
		switch {
		case ky == kZero:
			return e.invalid()
		case ky == kInf:
			return Inf(!y.Neg())
		}
		e.Flags |= FlagZeroDivide
		return Inf(!y.Neg())
	case kx == kInf:
		if ky == kZero {
			return e.invalid()
		}
		e.denormal(ky)
		return Inf(y.Neg())
	case x == one:
		if ky == kInf {
			return e.invalid()
		}
		e.denormal(ky)
		return Zero(y.Neg())
	}
	e.denormal(kx, ky)
	lneg := x.Exp() < expBias
	if ky == kZero {
		return Zero(y.Neg() != lneg)
	}
	if ky == kInf {
		return Inf(y.Neg() != lneg)
	}
	_, xe, xm := unpack(x)
	if xm == intBit {
		// log2(x) is the integer xe; the product is computed exactly, but
		// the x87 reports it as inexact (PE, and UE when it is denormal)
		// whatever its value, so this does too.
		p := newF().SetInt64(int64(xe))
		return e.inexactExact(p.Mul(p, toBig(y)))
	}
	l := log2Big(toBig(x))
	return e.roundBig(l.Mul(l, toBig(y)), tailUnknown)
}

// Yl2xp1 returns y * log2(x + 1) (FYL2XP1: x is ST(0), y is ST(1)). The x87
// defines it for |x| < 1 - sqrt(2)/2; beyond that range this returns the
// function's value rounded where it exists, and for finite x <= -1 it returns
// x with PE, as the hardware does.
func (e *Env) Yl2xp1(x, y F80) F80 {
	kx, ky := x.kind(), y.kind()
	if r, ok := e.nan2(x, y, kx, ky); ok {
		return r
	}
	switch {
	case kx == kZero:
		if ky == kInf {
			return e.invalid()
		}
		e.denormal(ky)
		return Zero(y.Neg() != x.Neg())
	case kx == kInf:
		if x.Neg() || ky == kZero {
			return e.invalid()
		}
		e.denormal(ky)
		return Inf(y.Neg())
	}
	e.denormal(kx, ky)
	if ky == kZero {
		return Zero(y.Neg() != x.Neg())
	}
	if ky == kInf {
		return Inf(y.Neg() != x.Neg())
	}
	bx := toBig(x)
	one := newF().SetInt64(1)
	if bx.Cmp(newF().Neg(one)) <= 0 {
		// x <= -1 (undefined): the x87 returns x with PE.
		e.Flags |= FlagPrecision
		return x
	}
	by := toBig(y)
	_, xe, _ := unpack(x)
	if xe > -200 {
		// 1 + x exactly; a power of two gives an exact integer logarithm.
		s := new(big.Float).SetPrec(512).Add(bx, one)
		m := newF()
		k := s.MantExp(m)
		if m.Cmp(big.NewFloat(0.5)) == 0 {
			// Exact, but reported inexact as FYL2X does.
			p := newF().SetInt64(int64(k - 1))
			return e.inexactExact(p.Mul(p, by))
		}
		if xe >= -2 {
			l := log2Big(s.SetPrec(tprec))
			return e.roundBig(l.Mul(l, by), tailUnknown)
		}
	}
	l := lnRatio(bx, newF().Add(bx, newF().SetInt64(2)))
	return e.roundBig(l.Mul(l, by), tailUnknown)
}

// Patan returns atan2(y, x), the angle of the point (x, y) in (-π, π]
// (FPATAN: x is ST(0), y is ST(1); the result replaces ST(1) and the stack
// is popped). For x > 0 and 0 < |y/x| < 2^-40 it returns y/x rounded, with
// PE, as the x87 does.
func (e *Env) Patan(x, y F80) F80 {
	kx, ky := x.kind(), y.kind()
	if r, ok := e.nan2(x, y, kx, ky); ok {
		return r
	}
	e.denormal(kx, ky)
	c := constants()
	yneg, xneg := y.Neg(), x.Neg()
	var r *big.Float
	t := tailUnknown
	switch {
	case ky == kZero:
		if !xneg {
			return Zero(yneg)
		}
		r = newF().Set(c.pi)
	case ky == kInf && kx == kInf:
		r = newF().Set(c.piQuarter)
		if xneg {
			r.Mul(r, newF().SetInt64(3))
		}
	case ky == kInf || kx == kZero:
		r = newF().Set(c.piHalf)
	case kx == kInf:
		if !xneg {
			return Zero(yneg)
		}
		r = newF().Set(c.pi)
	default:
		q := newF().Quo(toBig(Abs(y)), toBig(Abs(x)))
		if !xneg && q.MantExp(nil)-1 <= atanIdentityExp {
			d := Env{Rounding: e.Rounding} // y/x rounded to 64 bits
			res := d.Div(y, x)
			e.Flags |= d.Flags | FlagPrecision
			return res
		}
		r = atanBig(q)
		if !xneg && q.Acc() == big.Exact && r.Cmp(q) == 0 {
			// Tiny exact quotient: atan q = q - q^3/3 + ..., just below q.
			t = tailDown
		}
		if xneg {
			r.Sub(c.pi, r)
		}
	}
	if yneg {
		r.Neg(r)
	}
	return e.roundBig(r, t)
}

// Constant identifies a constant the x87 loads with FLDPI, FLDL2E, FLDL2T,
// FLDLG2 and FLDLN2.
type Constant uint8

// The x87 constants.
const (
	ConstPi  Constant = iota // π
	ConstL2E                 // log2(e)
	ConstL2T                 // log2(10)
	ConstLG2                 // log10(2)
	ConstLN2                 // ln(2)
)

// Const returns the constant c rounded to 64 bits per the rounding control,
// as the x87 loads it. It raises no exception.
func (e *Env) Const(c Constant) F80 {
	k := constants()
	var v *big.Float
	switch c {
	case ConstPi:
		v = k.pi
	case ConstL2E:
		v = newF().Quo(newF().SetInt64(1), k.ln2)
	case ConstL2T:
		v = log2Big(newF().SetInt64(10))
	case ConstLG2:
		v = newF().Quo(newF().SetInt64(1), log2Big(newF().SetInt64(10)))
	default:
		v = k.ln2
	}
	saved := e.Flags
	r := e.roundBig(v, tailUnknown)
	e.Flags = saved
	return r
}
