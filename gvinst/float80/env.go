package float80

import "math/bits"

// Rounding is the x87 rounding control (control word bits 10-11).
type Rounding uint8

// Rounding modes, numbered as in the x87 RC field.
const (
	RoundNearest Rounding = 0 // round to nearest, ties to even
	RoundDown    Rounding = 1 // round toward negative infinity
	RoundUp      Rounding = 2 // round toward positive infinity
	RoundZero    Rounding = 3 // round toward zero (truncate)
)

// Precision is the x87 precision control (control word bits 8-9): the
// significand width of the results of Add, Sub, Mul, Div and Sqrt. Its zero
// value is Prec64, the x87's state after FNINIT, so that the zero Env
// behaves as the x87 does by default; NewEnv decodes the control word field.
type Precision uint8

// Precision control settings.
const (
	Prec64 Precision = iota // extended precision significand (64 bits); PC=3
	Prec53                  // double precision significand (53 bits); PC=2
	Prec24                  // single precision significand (24 bits); PC=0
)

func (p Precision) bits() int {
	switch p {
	case Prec24:
		return 24
	case Prec53:
		return 53
	default:
		return 64
	}
}

// Flags are exception flags laid out as in the x87 status word, plus
// FlagRoundedUp at the position of C1.
type Flags uint16

// Exception flags. The first six are the sticky status word bits IE, DE, ZE,
// OE, UE and PE. FlagRoundedUp is not sticky: it reports that the last
// rounding increased the magnitude of the result, which the x87 reports in C1
// together with PE; callers copy it to C1 per instruction.
const (
	FlagInvalid    Flags = 0x0001
	FlagDenormal   Flags = 0x0002
	FlagZeroDivide Flags = 0x0004
	FlagOverflow   Flags = 0x0008
	FlagUnderflow  Flags = 0x0010
	FlagPrecision  Flags = 0x0020
	FlagRoundedUp  Flags = 0x0200
)

// Env is the x87 control state an operation runs under and the flags it
// raises. The zero Env rounds to nearest with 64-bit precision and has no
// flags set, like the x87 after FNINIT. Methods OR the flags they raise into Flags and never clear it; a
// caller that needs one instruction's flags (for C1, or to check them against
// the exception masks) clears Flags before the call. Results are always the
// masked responses: the caller raises #MF itself if an unmasked flag is set.
type Env struct {
	// Rounding is the rounding control (RC).
	Rounding Rounding
	// Precision is the precision control (PC).
	Precision Precision
	// Flags accumulates the exceptions raised, in status word layout.
	Flags Flags
}

// NewEnv returns an Env with the rounding and precision control of the x87
// control word cw and no flags set. The exception mask bits of cw are
// ignored; the reserved precision control value 1 is treated as 64 bits.
func NewEnv(cw uint16) Env {
	p := Prec64
	switch cw >> 8 & 3 {
	case 0:
		p = Prec24
	case 2:
		p = Prec53
	}
	return Env{Rounding: Rounding(cw >> 10 & 3), Precision: p}
}

// format describes the precision and exponent range a result is rounded to.
type format struct {
	prec       int
	emin, emax int32
}

func (e *Env) extFormat() format { return format{e.Precision.bits(), extEmin, extEmax} }

func ext64() format     { return format{64, extEmin, extEmax} }
func fmtDouble() format { return format{53, -1022, 1023} }
func fmtSingle() format { return format{24, -126, 127} }

// roundBits decides whether q (the kept bits) must be incremented given the
// round bit and the sticky bit.
func (e *Env) roundUp(neg bool, q uint64, rbit, sticky bool) bool {
	switch e.Rounding {
	case RoundNearest:
		return rbit && (sticky || q&1 != 0)
	case RoundUp:
		return !neg && (rbit || sticky)
	case RoundDown:
		return neg && (rbit || sticky)
	}
	return false
}

// roundPack rounds the value (-1)^neg * (hi:lo) * 2^(exp-127), where hi has
// bit 63 set and bit 0 of lo may carry a sticky bit for discarded low-order
// bits, to the format f, raising PE, UE, OE and C1 as the x87 does with
// masked exceptions. The result is returned as an F80; values that are
// denormal in f but normal in the extended format are returned normalized.
func (e *Env) roundPack(neg bool, exp int32, hi, lo uint64, f format) F80 {
	p := f.prec
	k := p // number of significand bits kept
	lsbExp := exp - int32(p-1)
	if exp < f.emin {
		d := int64(f.emin) - int64(exp)
		if d > 200 {
			d = 200
		}
		k = p - int(d)
		lsbExp = f.emin - int32(p-1)
	}
	var q uint64
	var rbit, sticky bool
	switch {
	case k > 0:
		s := uint(64 - k) // bits of hi below the kept bits
		q = hi >> s
		if s > 0 {
			rbit = hi>>(s-1)&1 != 0
			sticky = hi&(uint64(1)<<(s-1)-1) != 0 || lo != 0
		} else {
			rbit = lo>>63 != 0
			sticky = lo<<1 != 0
		}
	case k == 0:
		rbit = true
		sticky = hi<<1 != 0 || lo != 0
	default:
		sticky = true
	}
	inexact := rbit || sticky
	tiny := false
	if exp < f.emin {
		tiny = true
		if exp == f.emin-1 && e.carriesAt(neg, hi, lo, p) {
			tiny = false
		}
	}
	up := e.roundUp(neg, q, rbit, sticky)
	if up {
		q++
		if q == 0 { // carried out of 64 bits
			q = intBit
			lsbExp++
		}
	}
	if inexact {
		e.Flags |= FlagPrecision
		if up {
			e.Flags |= FlagRoundedUp
		}
		if tiny {
			e.Flags |= FlagUnderflow
		}
	}
	if q == 0 {
		return Zero(neg)
	}
	l := int32(63 - bits.LeadingZeros64(q))
	lead := lsbExp + l
	if lead > f.emax {
		return e.overflow(neg, f)
	}
	if lead >= extEmin {
		return F80{Mant: q << uint(63-l), SignExp: signOf(neg) | uint16(lead+expBias)}
	}
	return F80{Mant: q << uint(lsbExp-(extEmin-63)), SignExp: signOf(neg)}
}

// carriesAt reports whether rounding (hi:lo) to p bits with an unbounded
// exponent carries out to the next power of two.
func (e *Env) carriesAt(neg bool, hi, lo uint64, p int) bool {
	s := uint(64 - p)
	q := hi >> s
	if q != uint64(1)<<uint(p)-1 && !(p == 64 && q == ^uint64(0)) {
		return false
	}
	var rbit, sticky bool
	if s > 0 {
		rbit = hi>>(s-1)&1 != 0
		sticky = hi&(uint64(1)<<(s-1)-1) != 0 || lo != 0
	} else {
		rbit = lo>>63 != 0
		sticky = lo<<1 != 0
	}
	return e.roundUp(neg, q, rbit, sticky)
}

// overflow returns the masked overflow response for format f: infinity or the
// largest finite value of f, depending on the rounding mode and sign.
func (e *Env) overflow(neg bool, f format) F80 {
	e.Flags |= FlagOverflow | FlagPrecision
	toInf := e.Rounding == RoundNearest || (e.Rounding == RoundUp && !neg) || (e.Rounding == RoundDown && neg)
	if toInf {
		e.Flags |= FlagRoundedUp
		return Inf(neg)
	}
	return F80{Mant: ^uint64(0) << uint(64-f.prec), SignExp: signOf(neg) | uint16(f.emax+expBias)}
}

// pack rounds the normalized finite value (-1)^neg * m * 2^(exp-63) to f.
func (e *Env) pack(neg bool, exp int32, m uint64, f format) F80 {
	return e.roundPack(neg, exp, m, 0, f)
}

// quiet returns the NaN a with its quiet bit set.
func quiet(a F80) F80 { return F80{a.Mant | quietBit, a.SignExp} }

// nan1 handles a NaN or unsupported single operand: it returns the result and
// true if a is one, raising IE as needed.
func (e *Env) nan1(a F80, k kind) (F80, bool) {
	switch k {
	case kUnsupported:
		e.Flags |= FlagInvalid
		return Indefinite(), true
	case kSNaN:
		e.Flags |= FlagInvalid
		return quiet(a), true
	case kQNaN:
		return a, true
	}
	return F80{}, false
}

// nan2 handles NaN and unsupported operands of a two-operand instruction as
// the x87 does: an unsupported operand gives the default NaN; otherwise among
// NaNs the one with the larger significand wins, quieted.
func (e *Env) nan2(a, b F80, ka, kb kind) (F80, bool) {
	if ka == kUnsupported || kb == kUnsupported {
		e.Flags |= FlagInvalid
		return Indefinite(), true
	}
	an, bn := isNaN(ka), isNaN(kb)
	if !an && !bn {
		return F80{}, false
	}
	if ka == kSNaN || kb == kSNaN {
		e.Flags |= FlagInvalid
	}
	switch {
	case an && bn:
		qa, qb := a.Mant, b.Mant
		if qb > qa || (qb == qa && b.SignExp < a.SignExp) {
			return quiet(b), true
		}
		return quiet(a), true
	case an:
		return quiet(a), true
	}
	return quiet(b), true
}

// invalid raises IE and returns the default NaN.
func (e *Env) invalid() F80 {
	e.Flags |= FlagInvalid
	return Indefinite()
}

// denormal raises DE if any of the kinds is a denormal.
func (e *Env) denormal(ks ...kind) {
	for _, k := range ks {
		if k == kDenormal {
			e.Flags |= FlagDenormal
		}
	}
}
