package float80

import "math/bits"

// Rem computes the partial remainder of a by b as FPREM does: the quotient is
// truncated toward zero. When the exponent difference is 64 or more the
// reduction is partial, incomplete is true (C2) and r is a reduced value with
// the same remainder. Otherwise q holds the three low bits of the quotient
// (bit 0 → C1, bit 1 → C3, bit 2 → C0). Precision control does not apply.
func (e *Env) Rem(a, b F80) (r F80, q uint8, incomplete bool) { return e.rem(a, b, false) }

// Rem1 computes the IEEE partial remainder of a by b as FPREM1 does: the
// quotient is rounded to nearest, ties to even. Results are reported as for
// Rem.
func (e *Env) Rem1(a, b F80) (r F80, q uint8, incomplete bool) { return e.rem(a, b, true) }

func (e *Env) rem(a, b F80, ieee bool) (F80, uint8, bool) {
	ka, kb := a.kind(), b.kind()
	if r, ok := e.nan2(a, b, ka, kb); ok {
		return r, 0, false
	}
	switch {
	case ka == kInf || kb == kZero:
		return e.invalid(), 0, false
	case ka == kZero:
		e.denormal(kb)
		return a, 0, false
	case kb == kInf:
		e.denormal(ka)
		return e.pack(unpackExt(a)), 0, false
	}
	e.denormal(ka, kb)
	neg, ea, ma := unpack(a)
	_, eb, mb := unpack(b)
	d := ea - eb
	if d >= 64 {
		// Partial reduction by 2^(d-n) * b for an n in [32, 63].
		n := uint(d&31 | 32)
		hi, lo := ma>>(64-n), ma<<n
		rm := bits.Rem64(hi%mb, lo, mb)
		if rm == 0 {
			return Zero(neg), 0, true
		}
		return e.packNorm(neg, ea-int32(n), rm), 0, true
	}
	if d < 0 {
		if ieee && d == -1 && ma > mb {
			// |a| > |b|/2: the quotient rounds to 1.
			return e.packNorm(!neg, ea, mb-(ma-mb)), 1, false
		}
		return e.pack(neg, ea, ma, ext64()), 0, false
	}
	hi, lo := uint64(0), ma
	if d > 0 {
		hi, lo = ma>>(64-uint(d)), ma<<uint(d)
	}
	quo, rm := bits.Div64(hi, lo, mb) // hi < 2^63 <= mb since d <= 63
	if ieee {
		if rm > mb-rm || (rm == mb-rm && quo&1 != 0) {
			rm = mb - rm
			quo++
			neg = !neg
		}
	}
	if rm == 0 {
		return Zero(a.Neg()), uint8(quo & 7), false
	}
	// The remainder's scale is that of b's significand: rm * 2^(eb-63).
	return e.packNorm(neg, eb, rm), uint8(quo & 7), false
}

// packNorm packs the exact non-zero value (-1)^neg * m * 2^(exp-63) in the
// extended format, m not necessarily normalized.
func (e *Env) packNorm(neg bool, exp int32, m uint64) F80 {
	nz := bits.LeadingZeros64(m)
	return e.pack(neg, exp-int32(nz), m<<uint(nz), ext64())
}

// unpackExt returns pack's arguments for a finite non-zero a in the
// extended format with 64-bit precision.
func unpackExt(a F80) (bool, int32, uint64, format) {
	neg, exp, m := unpack(a)
	return neg, exp, m, ext64()
}

// RoundToInt rounds a to an integer per the rounding control (FRNDINT).
func (e *Env) RoundToInt(a F80) F80 {
	ka := a.kind()
	if r, ok := e.nan1(a, ka); ok {
		return r
	}
	if ka == kZero || ka == kInf {
		return a
	}
	e.denormal(ka)
	neg, exp, m := unpack(a)
	if exp >= 63 {
		return F80{Mant: m, SignExp: signOf(neg) | uint16(exp+expBias)}
	}
	var q uint64
	var rbit, sticky bool
	if exp < 0 {
		rbit = exp == -1
		sticky = exp < -1 || m<<1 != 0
	} else {
		f := uint(63 - exp)
		q = m >> f
		rem := m << (64 - f)
		rbit = rem>>63 != 0
		sticky = rem<<1 != 0
	}
	if rbit || sticky {
		e.Flags |= FlagPrecision
		if e.roundUp(neg, q, rbit, sticky) {
			q++
			e.Flags |= FlagRoundedUp
		}
	}
	return intToF80(neg, q)
}

// intToF80 converts the integer (-1)^neg * q exactly.
func intToF80(neg bool, q uint64) F80 {
	if q == 0 {
		return Zero(neg)
	}
	n := bits.LeadingZeros64(q)
	return F80{Mant: q << uint(n), SignExp: signOf(neg) | uint16(63-n+expBias)}
}

// Scale returns a * 2^trunc(b) (FSCALE), rounded to 64 bits per the rounding
// control.
func (e *Env) Scale(a, b F80) F80 {
	ka, kb := a.kind(), b.kind()
	if r, ok := e.nan2(a, b, ka, kb); ok {
		return r
	}
	e.denormal(ka, kb)
	if kb == kInf {
		switch {
		case b.Neg() && ka == kInf, !b.Neg() && ka == kZero:
			return e.invalid()
		case b.Neg():
			return Zero(a.Neg())
		}
		return Inf(a.Neg())
	}
	if ka == kInf || ka == kZero {
		return a
	}
	n := int32(0)
	if kb != kZero {
		bneg, bexp, bm := unpack(b)
		switch {
		case bexp >= 20:
			n = 1 << 20
		case bexp >= 0:
			n = int32(bm >> uint(63-bexp))
		}
		if bneg {
			n = -n
		}
	}
	neg, exp, m := unpack(a)
	return e.pack(neg, exp+n, m, ext64())
}

// Xtract splits a into its unbiased exponent and its significand (FXTRACT):
// a = sig * 2^exp with 1 <= |sig| < 2. FXTRACT leaves exp in ST(1) and sig in
// ST(0).
func (e *Env) Xtract(a F80) (exp, sig F80) {
	ka := a.kind()
	if r, ok := e.nan1(a, ka); ok {
		return r, r
	}
	switch ka {
	case kZero:
		e.Flags |= FlagZeroDivide
		return Inf(true), a
	case kInf:
		return Inf(false), a
	}
	e.denormal(ka)
	neg, x, m := unpack(a)
	return FromInt64(int64(x)), F80{Mant: m, SignExp: signOf(neg) | expBias}
}

// Ordering is the result of Compare.
type Ordering uint8

// Compare results. As FCOM sets them: Greater → C3=C2=C0=0, Less → C0=1,
// Equal → C3=1, Unordered → C3=C2=C0=1; as FCOMI sets ZF, PF, CF the same way.
const (
	Greater Ordering = iota
	Less
	Equal
	Unordered
)

// Compare compares a with b. With quiet false (FCOM, FCOMI) any NaN operand
// raises IE; with quiet true (FUCOM, FUCOMI) only a signaling NaN does.
// Unsupported encodings always raise IE and compare unordered.
func (e *Env) Compare(a, b F80, quiet bool) Ordering {
	ka, kb := a.kind(), b.kind()
	if ka == kUnsupported || kb == kUnsupported || isNaN(ka) || isNaN(kb) {
		if !quiet || ka == kUnsupported || kb == kUnsupported || ka == kSNaN || kb == kSNaN {
			e.Flags |= FlagInvalid
		}
		return Unordered
	}
	e.denormal(ka, kb)
	c := cmpMag(a, ka, b, kb)
	if ka == kZero && kb == kZero {
		return Equal
	}
	an, bn := a.Neg() && ka != kZero, b.Neg() && kb != kZero
	switch {
	case an != bn:
		if an {
			return Less
		}
		return Greater
	case c == 0:
		return Equal
	case (c < 0) != an:
		return Less
	}
	return Greater
}

// cmpMag compares |a| with |b| for non-NaN supported values.
func cmpMag(a F80, ka kind, b F80, kb kind) int {
	rank := func(k kind) int {
		switch k {
		case kZero:
			return 0
		case kInf:
			return 2
		}
		return 1
	}
	if ra, rb := rank(ka), rank(kb); ra != rb || ra != 1 {
		return ra - rb
	}
	_, ea, ma := unpack(a)
	_, eb, mb := unpack(b)
	switch {
	case ea != eb:
		if ea < eb {
			return -1
		}
		return 1
	case ma < mb:
		return -1
	case ma > mb:
		return 1
	}
	return 0
}
