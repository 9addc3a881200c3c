package ptxgen

import (
	"fmt"

	"github.com/gxbit/gxbit/gvinst"
)

// The packed ops gcc's vectoriser makes of integer code over bytes and
// words (SSE2's punpck*, paddw, pmullw, packuswb, pminub, paddusb, pavgb,
// pmaddwd, psadbw, ...; SSSE3's pshufb, palignr, pabs*, psign*, phadd*;
// SSE4.1's pmovzx/sx, pblend*), and the lane moves of any lane type. Each
// works on lanes split out by lanesOf or lanesExt and joined back by
// setLanes, and computes exactly what gvinst's execVec does.

// vecInt lowers the packed ops that vec leaves to it.
func (e *emitter) vecInt(in *gvinst.Inst) {
	t := in.Type
	ls := t.Size()
	switch in.Op {
	case gvinst.OpVAdd, gvinst.OpVSub:
		if ls <= 2 {
			e.swarAddSub(in)
			return
		}
		fallthrough
	case gvinst.OpVMul, gvinst.OpVMin, gvinst.OpVMax:
		a, b := e.lanesExt(in.Src[0], t), e.lanesExt(in.Src[1], t)
		ty := "u64"
		if t.IsSigned() {
			ty = "s64"
		}
		out := make([]string, len(a))
		for i := range a {
			out[i] = e.t()
			switch in.Op {
			case gvinst.OpVMul:
				e.i("mul.lo.u64", out[i], a[i], b[i])
			case gvinst.OpVMin, gvinst.OpVMax:
				e.i(fmt.Sprintf("%s.%s", vname(in.Op), ty), out[i], a[i], b[i])
			default:
				e.i(fmt.Sprintf("%s.u64", vname(in.Op)), out[i], a[i], b[i])
			}
		}
		e.setLanes(in.Dst, out, ls)
	case gvinst.OpVUnpackL, gvinst.OpVUnpackH:
		if ls <= 2 {
			e.unpackPrmt(in)
			return
		}
		a, b := e.lanesOf(in.Src[0], ls), e.lanesOf(in.Src[1], ls)
		n := len(a)
		off := 0
		if in.Op == gvinst.OpVUnpackH {
			off = n / 2
		}
		out := make([]string, n)
		for i := 0; i < n/2; i++ {
			out[2*i], out[2*i+1] = a[off+i], b[off+i]
		}
		e.setLanes(in.Dst, out, ls)
	case gvinst.OpVAddSat, gvinst.OpVSubSat:
		// In 64 bits the sum or difference of two extended lanes is
		// exact; it is then clamped to t's range.
		a, b := e.lanesExt(in.Src[0], t), e.lanesExt(in.Src[1], t)
		lo, hi := int64(0), int64(t.Mask())
		if t.IsSigned() {
			hi = int64(t.Mask() >> 1)
			lo = -hi - 1
		}
		out := make([]string, len(a))
		for i := range a {
			out[i] = e.t()
			op := "add.s64"
			if in.Op == gvinst.OpVSubSat {
				op = "sub.s64"
			}
			e.i(op, out[i], a[i], b[i])
			e.clampS64(out[i], lo, hi)
		}
		e.setLanes(in.Dst, out, ls)
	case gvinst.OpVAvg:
		a, b := e.lanesOf(in.Src[0], ls), e.lanesOf(in.Src[1], ls)
		out := make([]string, len(a))
		for i := range a {
			out[i] = e.t()
			e.i("add.u64", out[i], a[i], b[i])
			e.i("add.u64", out[i], out[i], 1)
			e.i("shr.u64", out[i], out[i], 1)
		}
		e.setLanes(in.Dst, out, ls)
	case gvinst.OpVMulHi:
		a, b := e.lanesExt(in.Src[0], t), e.lanesExt(in.Src[1], t)
		out := make([]string, len(a))
		for i := range a {
			out[i] = e.t()
			e.i("mul.lo.s64", out[i], a[i], b[i])
			e.i("shr.s64", out[i], out[i], t.Bits())
		}
		e.setLanes(in.Dst, out, ls)
	case gvinst.OpVMaddW:
		a, b := e.lanesExt(in.Src[0], t), e.lanesExt(in.Src[1], t)
		out := make([]string, 4)
		for i := range out {
			p, q := e.t(), e.t()
			e.i("mul.lo.s64", p, a[2*i], b[2*i])
			e.i("mul.lo.s64", q, a[2*i+1], b[2*i+1])
			out[i] = e.t()
			e.i("add.s64", out[i], p, q)
		}
		e.setLanes(in.Dst, out, 4)
	case gvinst.OpVSad:
		a, b := e.lanesOf(in.Src[0], 1), e.lanesOf(in.Src[1], 1)
		out := make([]string, 2)
		for h := range out {
			out[h] = e.t()
			e.i("mov.b64", out[h], 0)
			for i := 8 * h; i < 8*h+8; i++ {
				e.i("sad.u64", out[h], a[i], b[i], out[h])
			}
		}
		e.setLanes(in.Dst, out, 8)
	case gvinst.OpVAbs:
		a := e.lanesExt(in.Src[0], t)
		out := make([]string, len(a))
		for i := range a {
			out[i] = e.t()
			e.i("abs.s64", out[i], a[i])
		}
		e.setLanes(in.Dst, out, ls)
	case gvinst.OpVSign:
		// psign: a negated where b's lane is negative, zero where it is
		// zero, kept where it is positive.
		a, b := e.lanesOf(in.Src[0], ls), e.lanesExt(in.Src[1], t)
		out := make([]string, len(a))
		for i := range a {
			neg, zero := e.pred(), e.pred()
			e.i("setp.lt.s64", neg, b[i], 0)
			e.i("setp.eq.s64", zero, b[i], 0)
			n := e.t()
			e.i("neg.s64", n, a[i])
			out[i] = e.t()
			e.i("selp.b64", out[i], n, a[i], neg)
			e.i("selp.b64", out[i], 0, out[i], zero)
		}
		e.setLanes(in.Dst, out, ls)
	case gvinst.OpVHAdd, gvinst.OpVHSub:
		a, b := e.lanesOf(in.Src[0], ls), e.lanesOf(in.Src[1], ls)
		n := len(a)
		out := make([]string, n)
		for i := range out {
			src, j := a, i
			if i >= n/2 {
				src, j = b, i-n/2
			}
			out[i] = e.t()
			op := gvinst.OpVAdd
			if in.Op == gvinst.OpVHSub {
				op = gvinst.OpVSub
			}
			if t == gvinst.F32 {
				w := e.w()
				e.floatLane(op, 32, w, e.narrow(src[2*j], t), e.narrow(src[2*j+1], t))
				e.i("cvt.u64.u32", out[i], w)
				continue
			}
			if t == gvinst.F64 {
				e.floatLane(op, 64, out[i], src[2*j], src[2*j+1])
				continue
			}
			e.i(fmt.Sprintf("%s.u64", vname(op)), out[i], src[2*j], src[2*j+1])
		}
		e.setLanes(in.Dst, out, ls)
	case gvinst.OpVPackSS, gvinst.OpVPackUS:
		// a's lanes narrowed into d's low half, b's into the high half.
		a, b := e.lanesExt(in.Src[0], t), e.lanesExt(in.Src[1], t)
		h := t.Bits() / 2
		lo, hi := -(int64(1) << (h - 1)), int64(1)<<(h-1)-1
		if in.Op == gvinst.OpVPackUS {
			lo, hi = 0, 1<<h-1
		}
		var out []string
		for _, x := range append(a, b...) {
			r := e.t()
			e.i("mov.b64", r, x)
			e.clampS64(r, lo, hi)
			out = append(out, r)
		}
		e.setLanes(in.Dst, out, ls/2)
	case gvinst.OpVPermLo, gvinst.OpVPermHi:
		a := e.lanesOf(in.Src[0], 2)
		out := append([]string(nil), a...)
		base := 0
		if in.Op == gvinst.OpVPermHi {
			base = 4
		}
		for i := 0; i < 4; i++ {
			out[base+i] = a[base+int(uint64(in.Imm)>>(2*i)&3)]
		}
		e.setLanes(in.Dst, out, 2)
	case gvinst.OpVBShl, gvinst.OpVBShr:
		a := e.lanesOf(in.Src[0], 1)
		k := int(min(uint64(in.Imm), 16))
		out := make([]string, 16)
		for i := range out {
			j := i - k
			if in.Op == gvinst.OpVBShr {
				j = i + k
			}
			out[i] = e.byteOr0(a, j)
		}
		e.setLanes(in.Dst, out, 1)
	case gvinst.OpVAlignR:
		// Bytes imm..imm+15 of the 32 bytes a:b (b low).
		a, b := e.lanesOf(in.Src[0], 1), e.lanesOf(in.Src[1], 1)
		all := append(append([]string(nil), b...), a...)
		out := make([]string, 16)
		for i := range out {
			out[i] = e.byteOr0(all, int(min(uint64(in.Imm), 32))+i)
		}
		e.setLanes(in.Dst, out, 1)
	case gvinst.OpVShufB:
		e.shufB(in)
	case gvinst.OpVBlend, gvinst.OpVBlendV:
		a, b := e.lanesOf(in.Src[0], ls), e.lanesOf(in.Src[1], ls)
		var m []string
		if in.Op == gvinst.OpVBlendV {
			m = e.lanesOf(in.Src[2], ls)
		}
		out := make([]string, len(a))
		for i := range a {
			if m == nil {
				out[i] = a[i]
				if uint64(in.Imm)>>i&1 != 0 {
					out[i] = b[i]
				}
				continue
			}
			top, p := e.t(), e.pred()
			e.i("shr.u64", top, m[i], 8*ls-1)
			e.i("setp.ne.u64", p, top, 0)
			out[i] = e.t()
			e.i("selp.b64", out[i], b[i], a[i], p)
		}
		e.setLanes(in.Dst, out, ls)
	case gvinst.OpVMovMsk:
		a := e.lanesOf(in.Src[0], ls)
		r := e.t()
		e.i("mov.b64", r, 0)
		for i := range a {
			top := e.t()
			e.i("shr.u64", top, a[i], 8*ls-1)
			e.i("bfi.b64", r, top, r, i, 1)
		}
		e.i("mov.b64", e.reg(in.Dst), r)
	case gvinst.OpVExtract:
		a := e.lanesOf(in.Src[0], ls)
		x := e.t()
		e.i("mov.b64", x, a[int(uint64(in.Imm)%uint64(len(a)))])
		e.i("mov.b64", e.reg(in.Dst), x)
	case gvinst.OpVInsert:
		a := e.lanesOf(in.Src[0], ls)
		out := append([]string(nil), a...)
		out[int(uint64(in.Imm)%uint64(len(a)))] = e.reg(in.Src[1])
		e.setLanes(in.Dst, out, ls)
	case gvinst.OpVRound:
		// roundps/roundpd: each lane rounded to an integral value in its
		// own format (MXCSR's mode is nearest: the runtime checks it).
		a := e.lanesOf(in.Src[0], ls)
		out := make([]string, len(a))
		for i := range a {
			fa, r := e.fin(a[i], t), e.freg(t)
			e.i(fmt.Sprintf("cvt.%si.%s.%s", roundName(gvinst.Rounding(in.Mod)), ftype(t), ftype(t)), r, fa)
			out[i] = e.t()
			e.fout(out[i], r, t)
		}
		e.setLanes(in.Dst, out, ls)
	case gvinst.OpVExt:
		s := in.SrcType
		a := e.lanesExt(in.Src[0], s)
		e.setLanes(in.Dst, a[:16/ls], ls)
	default:
		panic(fmt.Sprintf("ptxgen: vecInt has no lowering of %s.%s", in.Op, t))
	}
}

// narrow returns the low 32 bits of lane register r when t is f32 (as a
// .b32 register floatLane reads), r itself otherwise.
func (e *emitter) narrow(r string, t gvinst.Type) string {
	if t != gvinst.F32 {
		return r
	}
	w := e.w()
	e.i("cvt.u32.u64", w, r)
	return w
}

// clampS64 clamps signed 64-bit register r to [lo, hi] in place.
func (e *emitter) clampS64(r string, lo, hi int64) {
	e.i("max.s64", r, r, lo)
	e.i("min.s64", r, r, hi)
}

// byteOr0 is byte lane j of bytes, or a zero register when j is outside.
func (e *emitter) byteOr0(bytes []string, j int) string {
	if j >= 0 && j < len(bytes) {
		return bytes[j]
	}
	z := e.t()
	e.i("mov.b64", z, 0)
	return z
}

// shufB lowers pshufb: byte i of d is byte (b_i & 15) of a, or zero when
// b_i's top bit is set. The index is data, so each byte is picked from
// a's halves by shifts.
func (e *emitter) shufB(in *gvinst.Inst) {
	lo, hi := e.reg(in.Src[0]), e.reg(in.Src[0]+1)
	sel := e.lanesOf(in.Src[1], 1)
	out := make([]string, 16)
	for i, s := range sel {
		p, z := e.pred(), e.pred()
		idx := e.t()
		e.i("and.b64", idx, s, 8)
		e.i("setp.ne.u64", p, idx, 0)
		half := e.t()
		e.i("selp.b64", half, hi, lo, p)
		sh := e.t()
		e.i("and.b64", sh, s, 7)
		e.i("shl.b64", sh, sh, 3)
		w := e.w()
		e.i("cvt.u32.u64", w, sh)
		out[i] = e.t()
		e.i("shr.u64", out[i], half, w)
		top := e.t()
		e.i("and.b64", top, s, 0x80)
		e.i("setp.ne.u64", z, top, 0)
		e.i("selp.b64", out[i], 0, out[i], z)
	}
	e.setLanes(in.Dst, out, 1)
}

// replicate repeats the ls-byte pattern x across 64 bits.
func replicate(x uint64, ls int) uint64 {
	var r uint64
	for k := 0; k < 8/ls; k++ {
		r |= x << (8 * ls * k)
	}
	return r
}

// swarAddSub lowers VADD and VSUB of 1- and 2-byte lanes on each 64-bit
// half at once, keeping carries and borrows inside their lanes: the lanes'
// low bits are added (or subtracted, the top bits set first) with the top
// bits clear, and the top bit of each lane is then the xor of the three
// top bits. This is the lane-wise wrap-around sum, bit for bit.
func (e *emitter) swarAddSub(in *gvinst.Inst) {
	ls := in.Type.Size()
	top := replicate(1<<(8*ls-1), ls)
	var res [2]string
	for h := range res {
		a, b := e.reg(in.Src[0]+gvinst.Reg(h)), e.reg(in.Src[1]+gvinst.Reg(h))
		x, y, z := e.t(), e.t(), e.t()
		res[h] = e.t()
		if in.Op == gvinst.OpVAdd {
			e.i("and.b64", x, a, lit(^top))
			e.i("and.b64", y, b, lit(^top))
			e.i("add.u64", res[h], x, y)
			e.i("xor.b64", z, a, b)
		} else {
			e.i("or.b64", x, a, lit(top))
			e.i("and.b64", y, b, lit(^top))
			e.i("sub.u64", res[h], x, y)
			e.i("not.b64", z, b)
			e.i("xor.b64", z, a, z)
		}
		e.i("and.b64", z, z, lit(top))
		e.i("xor.b64", res[h], res[h], z)
	}
	e.i("mov.b64", e.reg(in.Dst), res[0])
	e.i("mov.b64", e.reg(in.Dst+1), res[1])
}

// swarShift lowers VSHL and VSHR of 1-, 2- and 4-byte lanes by an immediate
// count on each 64-bit half: shifted whole, then the bits that crossed
// into a neighbouring lane masked off (a count of the lane's width or more
// leaves zero, as x86 does).
func (e *emitter) swarShift(in *gvinst.Inst) {
	ls := in.Type.Size()
	bits := uint64(8 * ls)
	c := uint64(in.Imm)
	var res [2]string
	for h := range res {
		res[h] = e.t()
		if c >= bits {
			e.i("mov.b64", res[h], 0)
			continue
		}
		a := e.reg(in.Src[0] + gvinst.Reg(h))
		lane := uint64(1)<<bits - 1
		if in.Op == gvinst.OpVShl {
			e.i("shl.b64", res[h], a, int(c))
			e.i("and.b64", res[h], res[h], lit(replicate(lane<<c&lane, ls)))
		} else {
			e.i("shr.u64", res[h], a, int(c))
			e.i("and.b64", res[h], res[h], lit(replicate(lane>>c, ls)))
		}
	}
	e.i("mov.b64", e.reg(in.Dst), res[0])
	e.i("mov.b64", e.reg(in.Dst+1), res[1])
}

// unpackPrmt lowers VUNPACKL and VUNPACKH of 1- and 2-byte lanes with
// byte permutes: each 32-bit word of d interleaves the lanes of one word
// of a and the same word of b (prmt takes bytes 0-3 from a, 4-7 from b).
func (e *emitter) unpackPrmt(in *gvinst.Inst) {
	h := gvinst.Reg(0)
	if in.Op == gvinst.OpVUnpackH {
		h = 1
	}
	a0, a1, b0, b1 := e.w(), e.w(), e.w(), e.w()
	e.i("mov.b64", vec(a0, a1), e.reg(in.Src[0]+h))
	e.i("mov.b64", vec(b0, b1), e.reg(in.Src[1]+h))
	sel := [2]int{0x5140, 0x7362} // bytes a0 b0 a1 b1, a2 b2 a3 b3
	if in.Type.Size() == 2 {
		sel = [2]int{0x5410, 0x7632} // words a0 b0, a1 b1
	}
	var w [4]string
	for k := range w {
		w[k] = e.w()
		x, y := a0, b0
		if k >= 2 {
			x, y = a1, b1
		}
		e.i("prmt.b32", w[k], x, y, sel[k%2])
	}
	lo, hi := e.t(), e.t()
	e.i("mov.b64", lo, vec(w[0], w[1]))
	e.i("mov.b64", hi, vec(w[2], w[3]))
	e.i("mov.b64", e.reg(in.Dst), lo)
	e.i("mov.b64", e.reg(in.Dst+1), hi)
}
