package gvinst

import (
	"errors"
	"math"
	"math/big"
	"math/bits"
)

// SSE floating point under MXCSR.
//
// Every .f32 and .f64 operation that rounds or inspects its operands (ADD,
// SUB, MUL, DIV, SQRT, MIN, MAX, CMP, CVT, ROUND and their packed forms)
// runs as SSE does under the guest's MXCSR: RC (bits 13-14) picks the
// rounding, DAZ (bit 6) reads denormal operands as zeros of the same sign,
// FTZ (bit 15) returns a signed zero for every tiny result, and the sticky
// exception flags IE DE ZE OE UE PE (bits 0-5) are set as the hardware sets
// them (measured on an Intel Xeon: tininess is detected after rounding; a
// divide-by-zero suppresses the denormal flag; a NaN operand suppresses it
// too; FTZ flushes exact tiny results as well and then sets UE and PE).
// An exception whose mask bit (7-12) is clear stops the guest (natively,
// SIGFPE).
//
// The one known difference: the compiled ADD, SUB, MUL, DIV (and VADD …
// VDIV) fast path does not set DE for a denormal operand whose result is a
// normal number (see exec.go); everything else is exact.
//
// RATIONALE: the fast path (exec.go's compiled float ops and the first test
// in sseArith) computes with the host's own SSE instructions, which round to
// nearest, and is taken only when one mask of MXCSR shows the default
// control bits with PE already set (mxFastMask) and the operands and result
// are zeros or normal numbers that no exception but PE concerns: then the
// host's result is exact for the guest and no flag changes. Everything else
// (directed rounding, denormals, infinities, NaNs, tiny or huge results,
// clear PE) takes the exact path: the operation is carried out exactly (or
// rounded to odd with two spare bits, for DIV and SQRT) on big integers and
// rounded once to the destination format.

// MXCSR bits.
const (
	mxIE  = 1 << 0  // invalid operation
	mxDE  = 1 << 1  // denormal operand
	mxZE  = 1 << 2  // divide by zero
	mxOE  = 1 << 3  // overflow
	mxUE  = 1 << 4  // underflow
	mxPE  = 1 << 5  // precision (inexact)
	mxDAZ = 1 << 6  // denormals are zeros
	mxPM  = 1 << 12 // precision exception masked
	mxFTZ = 1 << 15 // flush to zero

	// mxFastMask selects PE, the six exception masks and RC; the fast path
	// needs them to read mxFastVal (round to nearest, every exception
	// masked, PE already set). DAZ and FTZ do not matter to it: it never
	// sees a denormal operand or a tiny result.
	mxFastMask = 0x7fa0
	mxFastVal  = 0x1fa0
	// mxFastMaskDE is mxFastMask with DAZ and FTZ, for exec.go's first test
	// (which does not see denormal operands).
	mxFastMaskDE = 0xffe0
)

// errSSEUnmasked is wrapped by the error of an SSE operation that raised an
// exception MXCSR does not mask.
var errSSEUnmasked = errors.New("unmasked SIMD floating-point exception (SIGFPE natively)")

// fpFmt describes a binary floating-point format.
type fpFmt struct {
	p     int // significand bits, the hidden one included
	emin  int // exponent of the smallest normal number
	emax  int // exponent of the largest finite number (and the bias)
	width int // total bits
}

var (
	fmtF32 = fpFmt{p: 24, emin: -126, emax: 127, width: 32}
	fmtF64 = fpFmt{p: 53, emin: -1022, emax: 1023, width: 64}
)

func fmtOf(t Type) *fpFmt {
	if t == F32 {
		return &fmtF32
	}
	return &fmtF64
}

func (ff *fpFmt) mask() uint64     { return laneMask(ff.width) }
func (ff *fpFmt) signBit() uint64  { return 1 << uint(ff.width-1) }
func (ff *fpFmt) fracMask() uint64 { return 1<<uint(ff.p-1) - 1 }
func (ff *fpFmt) expMax() uint64   { return 1<<uint(ff.width-ff.p) - 1 }
func (ff *fpFmt) exp(v uint64) uint64 {
	return v >> uint(ff.p-1) & ff.expMax()
}
func (ff *fpFmt) neg(v uint64) bool      { return v&ff.signBit() != 0 }
func (ff *fpFmt) isZero(v uint64) bool   { return v&^ff.signBit() == 0 }
func (ff *fpFmt) isInf(v uint64) bool    { return v&^ff.signBit() == ff.expMax()<<uint(ff.p-1) }
func (ff *fpFmt) isNaN(v uint64) bool    { return ff.exp(v) == ff.expMax() && v&ff.fracMask() != 0 }
func (ff *fpFmt) isSNaN(v uint64) bool   { return ff.isNaN(v) && v>>uint(ff.p-2)&1 == 0 }
func (ff *fpFmt) isDen(v uint64) bool    { return ff.exp(v) == 0 && v&ff.fracMask() != 0 }
func (ff *fpFmt) zero(neg bool) uint64   { return b2u(neg) << uint(ff.width-1) }
func (ff *fpFmt) inf(neg bool) uint64    { return ff.zero(neg) | ff.expMax()<<uint(ff.p-1) }
func (ff *fpFmt) maxFin(neg bool) uint64 { return ff.inf(neg) - 1 }
func (ff *fpFmt) defaultNaN() uint64 {
	return ff.inf(true) | 1<<uint(ff.p-2)
}

// flush returns v, or a zero of its sign when v is denormal (DAZ).
func (ff *fpFmt) flush(v uint64) uint64 {
	if ff.isDen(v) {
		return v & ff.signBit()
	}
	return v
}

// ordinary reports whether v is a zero or a normal number.
func (ff *fpFmt) ordinary(v uint64) bool {
	return ff.exp(v)-1 < ff.expMax()-1 || ff.isZero(v)
}

// decode splits finite v into its sign and the integers m, e with
// |v| = m * 2^e.
func (ff *fpFmt) decode(v uint64) (neg bool, m uint64, e int) {
	ex := int(ff.exp(v))
	m = v & ff.fracMask()
	if ex == 0 {
		return ff.neg(v), m, ff.emin - ff.p + 1
	}
	return ff.neg(v), m | 1<<uint(ff.p-1), ex - ff.emax - ff.p + 1
}

// encode packs the finite value (-1)^neg * m * 2^q, where m < 2^p and q is
// at least the exponent of the least denormal, or m is normalised.
func (ff *fpFmt) encode(neg bool, m uint64, q int) uint64 {
	s := ff.zero(neg)
	if m>>uint(ff.p-1) == 0 {
		return s | m // zero or denormal: q is the least exponent
	}
	return s | uint64(q+ff.p-1+ff.emax)<<uint(ff.p-1) | m&ff.fracMask()
}

// mxRounding is the rounding mode MXCSR's RC field selects.
func mxRounding(mx uint64) Rounding {
	return [4]Rounding{RoundNearest, RoundDown, RoundUp, RoundZero}[mx>>13&3]
}

// roundShift rounds n / 2^sh to an integer by mode rc for a value of sign
// neg; it reports whether that lost anything. The result must fit 64 bits.
func roundShift(n *big.Int, sh int, neg bool, rc Rounding) (uint64, bool) {
	if sh <= 0 {
		return n.Uint64() << uint(-sh), false
	}
	m := new(big.Int).Rsh(n, uint(sh)).Uint64()
	half := n.Bit(sh-1) == 1
	sticky := n.TrailingZeroBits() < uint(sh-1)
	inexact := half || sticky
	var up bool
	switch rc {
	case RoundNearest:
		up = half && (sticky || m&1 == 1)
	case RoundDown:
		up = neg && inexact
	case RoundUp:
		up = !neg && inexact
	}
	if up {
		m++
	}
	return m, inexact
}

// round rounds the non-zero value (-1)^neg * n * 2^e to the format by mode
// rc, flushing tiny results to zero when ftz is set, and returns the bits
// and the OE, UE and PE flags it raises.
func (ff *fpFmt) round(neg bool, n *big.Int, e int, rc Rounding, ftz bool) (uint64, uint64) {
	lead := e + n.BitLen() - 1
	qU := lead - ff.p + 1      // the unit of the last place with an unbounded exponent
	qMin := ff.emin - ff.p + 1 // the least denormal
	q := max(qU, qMin)
	m, inexact := roundShift(n, q-e, neg, rc)
	if m>>uint(ff.p) != 0 {
		m >>= 1
		q++
	}
	tiny := false
	if qU < qMin {
		mu, _ := roundShift(n, qU-e, neg, rc)
		tiny = qU+bits.Len64(mu)-1 < ff.emin
	}
	if tiny && ftz {
		return ff.zero(neg), mxUE | mxPE
	}
	var fl uint64
	if inexact {
		fl |= mxPE
		if tiny {
			fl |= mxUE
		}
	}
	if q+bits.Len64(m)-1 > ff.emax {
		fl |= mxOE | mxPE
		switch {
		case rc == RoundZero, rc == RoundDown && !neg, rc == RoundUp && neg:
			return ff.maxFin(neg), fl
		}
		return ff.inf(neg), fl
	}
	return ff.encode(neg, m, q), fl
}

// bigU returns x as a big.Int.
func bigU(x uint64) *big.Int { return new(big.Int).SetUint64(x) }

// exactArith computes ADD, SUB, MUL, DIV or SQRT of the finite operands a
// and b (DAZ applied; no invalid operation, no division by zero) and
// rounds it by rc.
func exactArith(op Op, ff *fpFmt, a, b uint64, rc Rounding, ftz bool) (uint64, uint64) {
	na, ma, ea := ff.decode(a)
	nb, mb, eb := ff.decode(b)
	n := new(big.Int)
	var e int
	var neg bool
	switch op {
	case OpAdd, OpSub:
		if op == OpSub {
			nb = !nb
		}
		if ma == 0 && mb == 0 {
			return ff.zero(na && nb || na != nb && rc == RoundDown), 0
		}
		e = min(ea, eb)
		x := bigU(ma)
		x.Lsh(x, uint(ea-e))
		if na {
			x.Neg(x)
		}
		y := bigU(mb)
		y.Lsh(y, uint(eb-e))
		if nb {
			y.Neg(y)
		}
		n.Add(x, y)
		if n.Sign() == 0 {
			return ff.zero(rc == RoundDown), 0
		}
		neg = n.Sign() < 0
		n.Abs(n)
	case OpMul:
		neg = na != nb
		if ma == 0 || mb == 0 {
			return ff.zero(neg), 0
		}
		hi, lo := bits.Mul64(ma, mb)
		n.SetUint64(hi)
		n.Lsh(n, 64)
		n.Or(n, bigU(lo))
		e = ea + eb
	case OpDiv:
		neg = na != nb
		if ma == 0 {
			return ff.zero(neg), 0
		}
		k := max(ff.p+3+bits.Len64(mb)-bits.Len64(ma), 0)
		x := bigU(ma)
		x.Lsh(x, uint(k))
		r := new(big.Int)
		n.QuoRem(x, bigU(mb), r)
		if r.Sign() != 0 {
			n.SetBit(n, 0, 1) // round to odd: the sticky bit
		}
		e = ea - eb - k
	case OpSqrt:
		if ma == 0 {
			return a, 0
		}
		x := bigU(ma)
		if ea&1 != 0 {
			x.Lsh(x, 1)
			ea--
		}
		k := ff.p + 4
		x.Lsh(x, uint(2*k))
		n.Sqrt(x)
		if new(big.Int).Mul(n, n).Cmp(x) != 0 {
			n.SetBit(n, 0, 1)
		}
		e = ea/2 - k
	}
	return ff.round(neg, n, e, rc, ftz)
}

// nativeArith is the host's SSE result of op, rounded to nearest.
func nativeArith(op Op, t Type, a, b uint64) uint64 {
	if op == OpSqrt {
		return floatUnary(OpSqrt, t, a)
	}
	return floatBinary(op, t, a, b)
}

// sseArith computes ADD, SUB, MUL, DIV or SQRT (b unused) on .f32 or .f64
// under MXCSR mx; it returns the result and the exception flags raised.
func sseArith(op Op, t Type, a, b, mx uint64) (uint64, uint64) {
	ff := fmtOf(t)
	a &= ff.mask()
	b &= ff.mask()
	unary := op == OpSqrt
	if mx&0x6000 == 0 {
		// Rounding to nearest: the host's result is the guest's when the
		// values are ordinary; only PE is then left to find.
		r := nativeArith(op, t, a, b)
		if ff.ordinary(a) && (unary || ff.ordinary(b)) && ff.ordinaryResult(op, a, b, r) {
			if mx&mxPE != 0 {
				return r, 0
			}
			if ex, ok := exactNearest(op, t, a, b, r); ok {
				if ex {
					return r, 0
				}
				return r, mxPE
			}
		}
	}
	if ff.isNaN(a) || !unary && ff.isNaN(b) {
		var fl uint64
		if ff.isSNaN(a) || !unary && ff.isSNaN(b) {
			fl = mxIE
		}
		return nativeArith(op, t, a, b), fl
	}
	den := ff.isDen(a) || !unary && ff.isDen(b)
	if mx&mxDAZ != 0 {
		a, b, den = ff.flush(a), ff.flush(b), false
	}
	za, zb := ff.isZero(a), ff.isZero(b)
	ia, ib := ff.isInf(a), ff.isInf(b)
	invalid := false
	switch op {
	case OpAdd:
		invalid = ia && ib && ff.neg(a) != ff.neg(b)
	case OpSub:
		invalid = ia && ib && ff.neg(a) == ff.neg(b)
	case OpMul:
		invalid = za && ib || ia && zb
	case OpDiv:
		invalid = za && zb || ia && ib
		if !invalid && zb && !ia {
			return ff.inf(ff.neg(a) != ff.neg(b)), mxZE
		}
	case OpSqrt:
		invalid = ff.neg(a) && !za
	}
	if invalid {
		return ff.defaultNaN(), mxIE
	}
	var fl uint64
	if den {
		fl = mxDE
	}
	if ia || !unary && ib {
		return nativeArith(op, t, a, b), fl // exact: an infinity or a zero
	}
	r, rf := exactArith(op, ff, a, b, mxRounding(mx), mx&mxFTZ != 0)
	return r, fl | rf
}

// ordinaryResult reports whether r, the host's result of op on the zero or
// normal operands a and b, is one no exception but PE concerns: a normal
// number that cannot be tiny after rounding, or an exact zero.
func (ff *fpFmt) ordinaryResult(op Op, a, b, r uint64) bool {
	switch op {
	case OpAdd, OpSub, OpSqrt:
		// Sums that land below the normal range are exact.
		return ff.ordinary(r)
	}
	if ff.exp(r)-2 < ff.expMax()-2 {
		return true
	}
	return ff.isZero(r) && (ff.isZero(a) || op == OpMul && ff.isZero(b))
}

// sseMinMax computes MIN or MAX as MINSS/MAXSS do under MXCSR mx: the
// second operand when either is a NaN (raising IE) or both are zeros.
func sseMinMax(op Op, t Type, a, b, mx uint64) (uint64, uint64) {
	ff := fmtOf(t)
	a &= ff.mask()
	b &= ff.mask()
	daz := mx&mxDAZ != 0
	if daz {
		a, b = ff.flush(a), ff.flush(b) // the flushed operand is the result, even beside a NaN
	}
	if ff.isNaN(a) || ff.isNaN(b) {
		return b, mxIE
	}
	var fl uint64
	if !daz && (ff.isDen(a) || ff.isDen(b)) {
		fl = mxDE
	}
	return floatBinary(op, t, a, b), fl
}

// cmpSignals reports whether float comparison c raises IE on a quiet NaN,
// as SSE's LT, LE, NLT and NLE predicates (lt, le, geu, gtu) and their
// mirror images (gt, ge) do; the others raise it on a signaling NaN only.
func cmpSignals(c Cmp) bool {
	switch c {
	case CmpLt, CmpLe, CmpGt, CmpGe, CmpGtu, CmpGeu:
		return true
	}
	return false
}

// sseCmp evaluates float comparison c under MXCSR mx.
func sseCmp(c Cmp, t Type, a, b, mx uint64) (bool, uint64) {
	ff := fmtOf(t)
	a &= ff.mask()
	b &= ff.mask()
	var fl uint64
	switch {
	case ff.isNaN(a) || ff.isNaN(b):
		if cmpSignals(c) || ff.isSNaN(a) || ff.isSNaN(b) {
			fl = mxIE
		}
	case mx&mxDAZ != 0:
		a, b = ff.flush(a), ff.flush(b)
	case ff.isDen(a) || ff.isDen(b):
		fl = mxDE
	}
	return cmpFloat(c, floatVal(t, a), floatVal(t, b)), fl
}

// sseRound is ROUND.r.t under MXCSR mx (r resolved): DAZ applies, a
// signaling NaN raises IE. PE is never raised: the GVInst op does not say
// whether the instruction suppressed it (roundss's immediate bit 3).
func sseRound(t Type, a uint64, r Rounding, mx uint64) (uint64, uint64) {
	ff := fmtOf(t)
	a &= ff.mask()
	var fl uint64
	if ff.isSNaN(a) {
		fl = mxIE
	}
	if mx&mxDAZ != 0 {
		a = ff.flush(a)
	}
	return roundFloat(t, a, r), fl
}

// sseConvert is CVT.r.t.s under MXCSR mx (r resolved) when t or s is
// .f32 or .f64 (and neither is .f80).
func sseConvert(t, s Type, a uint64, r Rounding, mx uint64) (uint64, uint64) {
	switch {
	case s.IsInt():
		v := convert(t, s, a, r)
		x := a & s.Mask()
		if s.IsSigned() {
			x = uint64(sext(x, s.Bits()))
		}
		if cmpFloatInt(floatVal(t, v), x, s.IsSigned()) != 0 {
			return v, mxPE
		}
		return v, 0
	case t.IsInt():
		ff := fmtOf(s)
		a &= ff.mask()
		if mx&mxDAZ != 0 {
			a = ff.flush(a)
		}
		x := floatVal(s, a)
		v := floatToInt(t, x, r)
		n := t.Bits()
		ri := roundIntegral(x, r)
		lo, hi := 0.0, math.Ldexp(1, n)
		if t.IsSigned() {
			lo, hi = -math.Ldexp(1, n-1), math.Ldexp(1, n-1)
		}
		switch {
		case x != x || ri < lo || ri >= hi:
			return v, mxIE
		case ri != x:
			return v, mxPE
		}
		return v, 0
	}
	fs := fmtOf(s)
	a &= fs.mask()
	if fs.isNaN(a) {
		var fl uint64
		if fs.isSNaN(a) {
			fl = mxIE
		}
		return convert(t, s, a, r), fl
	}
	var fl uint64
	if mx&mxDAZ != 0 {
		a = fs.flush(a)
	} else if fs.isDen(a) {
		fl = mxDE
	}
	if t == s || t == F64 || fs.isZero(a) || fs.isInf(a) {
		return convert(t, s, a, r), fl // exact
	}
	neg, m, e := fs.decode(a)
	v, rf := fmtOf(t).round(neg, bigU(m), e, r, mx&mxFTZ != 0)
	return v, fl | rf
}

// unmaskedSSE reports whether flags fl include an exception MXCSR mx does
// not mask.
func unmaskedSSE(fl, mx uint64) bool { return fl&^(mx>>7)&0x3f != 0 }

// isSSEFloat reports whether in is an SSE floating-point operation that
// reads MXCSR and sets its exception flags.
func isSSEFloat(in *Inst) bool {
	t, s := in.Type, in.SrcType
	fl := func(x Type) bool { return x == F32 || x == F64 }
	switch in.Op {
	case OpAdd, OpSub, OpMul, OpDiv, OpSqrt, OpMin, OpMax, OpCmp, OpRound,
		OpVAdd, OpVSub, OpVMul, OpVDiv, OpVSqrt, OpVMin, OpVMax, OpVHAdd, OpVHSub, OpVCmp, OpVRound:
		return fl(t)
	case OpCvt, OpVCvt:
		return (fl(t) || fl(s)) && t != F80 && s != F80
	}
	return false
}

// exactNearest reports whether r, the correctly rounded (to nearest) result
// of op on the zero or normal a and b, is exact, by an error-free
// transformation on the host; ok is false where that could underflow
// (tiny operands or results), and the caller then works it out exactly.
func exactNearest(op Op, t Type, a, b, r uint64) (exact, ok bool) {
	if t == F32 {
		x, y, z := f32(a), f32(b), f32(r)
		switch op {
		case OpAdd, OpSub:
			if op == OpSub {
				y = -y
			}
			bb := float32(z - x)
			e := float32(float32(x-float32(z-bb)) + float32(y-bb))
			return e == 0, true
		case OpMul:
			return float64(z) == float64(x)*float64(y), true
		case OpDiv:
			return float64(z)*float64(y) == float64(x), true
		case OpSqrt:
			return float64(z)*float64(z) == float64(x), true
		}
		return false, false
	}
	x, y, z := f64(a), f64(b), f64(r)
	// Error terms below 2^-1074 would round away: demand room.
	const lim = 0x1p-900
	switch op {
	case OpAdd, OpSub:
		if op == OpSub {
			y = -y
		}
		bb := z - x
		e := (x - (z - bb)) + (y - bb)
		return e == 0, true
	case OpMul:
		if z != 0 && math.Abs(z) < lim {
			return false, false
		}
		return z == 0 || math.FMA(x, y, -z) == 0, true
	case OpDiv:
		if math.Abs(x) < lim && x != 0 {
			return false, false
		}
		return math.FMA(-z, y, x) == 0, true
	case OpSqrt:
		if math.Abs(x) < lim && x != 0 {
			return false, false
		}
		return math.FMA(-z, z, x) == 0, true
	}
	return false, false
}
