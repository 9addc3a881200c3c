package ptxgen

import (
	"fmt"

	"github.com/gxbit/gxbit/gvinst"
)

// Packed SSE ops are scalarised: a .b128 value is two 64-bit registers
// (the slot pair), and an op on lanes of 1, 2, 4 or 8 bytes becomes PTX
// instructions per lane, each lane in a .b64 register (bfe splits a half
// into lanes, bfi joins them back). This is what lets gcc -O3's vectorised
// loops (movupd/mulpd/addpd over doubles, punpcklbw/paddw/packuswb over
// bytes) run as kernels. vecSupported is the table of what lowers, by op
// and lane type; each entry computes what gvinst's interpreter (vec.go)
// computes, lane order, saturation and rounding included.

// vecSupported reports whether packed op in can be scalarised.
func vecSupported(in *gvinst.Inst) bool {
	t := in.Type
	ls := t.Size()
	isInt := t.IsInt() && ls <= 8
	isFloat := t == gvinst.F32 || t == gvinst.F64
	narrowInt := isInt && ls <= 2
	switch in.Op {
	case gvinst.OpVAnd, gvinst.OpVOr, gvinst.OpVXor, gvinst.OpVAndN:
		return true
	case gvinst.OpVAdd, gvinst.OpVSub, gvinst.OpVMul, gvinst.OpVMin, gvinst.OpVMax, gvinst.OpVCmp, gvinst.OpVUnpackL, gvinst.OpVUnpackH:
		return isFloat || isInt
	case gvinst.OpVDiv, gvinst.OpVSqrt:
		return isFloat
	case gvinst.OpVRound:
		return isFloat && gvinst.Rounding(in.Mod) != gvinst.RoundX87
	case gvinst.OpVShl, gvinst.OpVShr, gvinst.OpVSar:
		return isInt
	case gvinst.OpVPerm:
		return ls == 4
	case gvinst.OpVPermLo, gvinst.OpVPermHi:
		return ls == 2 && isInt
	case gvinst.OpVMulW:
		return ls == 4 && isInt
	case gvinst.OpVShufP:
		return isFloat
	case gvinst.OpVAddSat, gvinst.OpVSubSat, gvinst.OpVAvg:
		return narrowInt
	case gvinst.OpVMulHi:
		return isInt && ls == 2
	case gvinst.OpVMaddW:
		return t == gvinst.S16
	case gvinst.OpVSad:
		return t == gvinst.U8
	case gvinst.OpVAbs, gvinst.OpVSign:
		return t.IsSigned() && ls <= 4
	case gvinst.OpVHAdd, gvinst.OpVHSub:
		return isFloat || (isInt && (ls == 2 || ls == 4))
	case gvinst.OpVPackSS, gvinst.OpVPackUS:
		return t == gvinst.S16 || t == gvinst.S32
	case gvinst.OpVBShl, gvinst.OpVBShr:
		return true
	case gvinst.OpVShufB, gvinst.OpVAlignR:
		return ls == 1 && isInt
	case gvinst.OpVBlend, gvinst.OpVBlendV, gvinst.OpVMovMsk, gvinst.OpVExtract, gvinst.OpVInsert:
		return isInt || isFloat
	case gvinst.OpVExt:
		s := in.SrcType
		return isInt && s.IsInt() && s.Size() < ls
	case gvinst.OpVCvt:
		s := in.SrcType
		ok := func(x gvinst.Type) bool {
			return x == gvinst.F32 || x == gvinst.F64 || x == gvinst.S32 || x == gvinst.U32
		}
		return ok(t) && ok(s) && (t.IsFloat() || s.IsFloat()) && gvinst.Rounding(in.Mod) != gvinst.RoundX87
	}
	return false
}

// lanesOf splits the .b128 value in slot pair r into lanes of ls bytes,
// low lane first, each zero-extended in a .b64 register.
func (e *emitter) lanesOf(r gvinst.Reg, ls int) []string {
	var out []string
	for h := 0; h < 2; h++ {
		half := e.reg(r + gvinst.Reg(h))
		switch ls {
		case 8:
			out = append(out, half)
		case 4:
			w0, w1 := e.w(), e.w()
			e.i("mov.b64", vec(w0, w1), half)
			for _, w := range []string{w0, w1} {
				x := e.t()
				e.i("cvt.u64.u32", x, w)
				out = append(out, x)
			}
		default:
			for k := 0; k < 8/ls; k++ {
				x := e.t()
				e.i("bfe.u64", x, half, 8*ls*k, 8*ls)
				out = append(out, x)
			}
		}
	}
	return out
}

// lanesExt splits slot pair r into lanes of type t, each extended to 64
// bits as t's signedness says.
func (e *emitter) lanesExt(r gvinst.Reg, t gvinst.Type) []string {
	ls := t.Size()
	if !t.IsSigned() || ls == 8 {
		return e.lanesOf(r, ls)
	}
	var out []string
	for h := 0; h < 2; h++ {
		half := e.reg(r + gvinst.Reg(h))
		for k := 0; k < 8/ls; k++ {
			x := e.t()
			e.i("bfe.s64", x, half, 8*ls*k, 8*ls)
			out = append(out, x)
		}
	}
	return out
}

// setLanes writes lanes (each in the low ls bytes of a .b64 register; the
// bits above are ignored) into slot pair d.
func (e *emitter) setLanes(d gvinst.Reg, lanes []string, ls int) {
	if ls == 8 {
		x0, x1 := e.t(), e.t()
		e.i("mov.b64", x0, lanes[0])
		e.i("mov.b64", x1, lanes[1])
		e.i("mov.b64", e.reg(d), x0)
		e.i("mov.b64", e.reg(d+1), x1)
		return
	}
	if ls == 4 {
		var ws []string
		for _, l := range lanes {
			w := e.w()
			e.i("cvt.u32.u64", w, l)
			ws = append(ws, w)
		}
		e.i("mov.b64", e.reg(d), vec(ws[0], ws[1]))
		e.i("mov.b64", e.reg(d+1), vec(ws[2], ws[3]))
		return
	}
	n := 8 / ls
	var halves [2]string
	for h := range halves {
		x := e.t()
		e.i("mov.b64", x, lanes[h*n])
		for k := 1; k < n; k++ {
			e.i("bfi.b64", x, lanes[h*n+k], x, 8*ls*k, 8*ls)
		}
		halves[h] = x
	}
	e.i("mov.b64", e.reg(d), halves[0])
	e.i("mov.b64", e.reg(d+1), halves[1])
}

// vecMore lowers the packed ops that work lane by lane through lanesOf.
func (e *emitter) vecMore(in *gvinst.Inst) {
	t := in.Type
	ls := t.Size()
	switch in.Op {
	case gvinst.OpVCmp:
		a, b := e.lanesOf(in.Src[0], ls), e.lanesOf(in.Src[1], ls)
		c := gvinst.Cmp(in.Mod)
		out := make([]string, len(a))
		for i := range a {
			p := e.pred()
			if t.IsFloat() {
				fa, fb := e.fin(a[i], t), e.fin(b[i], t)
				e.i(fmt.Sprintf("setp.%s.%s", c, ftype(t)), p, fa, fb)
			} else {
				s := t.IsSigned()
				x, y := e.ext(a[i], t, s), e.ext(b[i], t, s)
				ty := "u64"
				if s {
					ty = "s64"
				}
				e.i(fmt.Sprintf("setp.%s.%s", intCmpName(c), ty), p, x, y)
			}
			out[i] = e.t()
			e.i("selp.b64", out[i], lit(sizeMask(ls)), 0, p)
		}
		e.setLanes(in.Dst, out, ls)
	case gvinst.OpVShl, gvinst.OpVShr, gvinst.OpVSar:
		a := e.lanesOf(in.Src[0], ls)
		var cnt string
		if in.HasImm {
			cnt = e.t()
			e.i("mov.b64", cnt, lit(uint64(in.Imm)))
		} else {
			cnt = e.reg(in.Src[1])
		}
		c := e.t()
		e.i("min.u64", c, cnt, 64)
		w := e.w()
		e.i("cvt.u32.u64", w, c)
		out := make([]string, len(a))
		for i := range a {
			out[i] = e.t()
			switch in.Op {
			case gvinst.OpVShl:
				e.i("shl.b64", out[i], a[i], w)
			case gvinst.OpVShr:
				e.i("shr.u64", out[i], a[i], w)
			default:
				x := e.ext(a[i], t, true)
				e.i("shr.s64", out[i], x, w)
			}
			e.mask(out[i], t)
		}
		e.setLanes(in.Dst, out, ls)
	case gvinst.OpVMulW:
		// pmuludq/pmuldq: lanes 0 and 2 (the low half of each quadword)
		// multiplied into full 64-bit products.
		out := make([]string, 2)
		for h := 0; h < 2; h++ {
			x := e.ext(e.reg(in.Src[0]+gvinst.Reg(h)), t, t.IsSigned())
			y := e.ext(e.reg(in.Src[1]+gvinst.Reg(h)), t, t.IsSigned())
			out[h] = e.t()
			e.i("mul.lo.u64", out[h], x, y)
		}
		e.setLanes(in.Dst, out, 8)
	case gvinst.OpVShufP:
		// shufps/shufpd: the low half of d from a's lanes, the high half
		// from b's, chosen by the immediate.
		a, b := e.lanesOf(in.Src[0], ls), e.lanesOf(in.Src[1], ls)
		if ls == 8 {
			e.setLanes(in.Dst, []string{a[in.Imm&1], b[in.Imm>>1&1]}, 8)
			return
		}
		e.setLanes(in.Dst, []string{a[in.Imm&3], a[in.Imm>>2&3], b[in.Imm>>4&3], b[in.Imm>>6&3]}, 4)
	case gvinst.OpVPerm:
		a := e.lanesOf(in.Src[0], 4)
		out := make([]string, 4)
		for i := range out {
			out[i] = a[in.Imm>>(2*i)&3]
		}
		e.setLanes(in.Dst, out, 4)
	case gvinst.OpVCvt:
		s := in.SrcType
		ns, nt := 16/s.Size(), 16/ls
		n := min(ns, nt)
		a := e.lanesOf(in.Src[0], s.Size())
		out := make([]string, nt)
		for i := range out {
			out[i] = e.t()
			if i >= n {
				e.i("mov.b64", out[i], 0)
				continue
			}
			e.cvtReg(out[i], a[i], t, s, gvinst.Rounding(in.Mod))
		}
		e.setLanes(in.Dst, out, ls)
	}
}

// vec lowers a supported packed op.
func (e *emitter) vec(in *gvinst.Inst) {
	t := in.Type
	d, a := in.Dst, in.Src[0]
	b := in.Src[1]
	switch in.Op {
	case gvinst.OpVAnd, gvinst.OpVOr, gvinst.OpVXor, gvinst.OpVAndN:
		x := [2]string{e.t(), e.t()}
		for h := 0; h < 2; h++ {
			ra, rb := e.reg(a+gvinst.Reg(h)), e.reg(b+gvinst.Reg(h))
			switch in.Op {
			case gvinst.OpVAnd:
				e.i("and.b64", x[h], ra, rb)
			case gvinst.OpVOr:
				e.i("or.b64", x[h], ra, rb)
			case gvinst.OpVXor:
				e.i("xor.b64", x[h], ra, rb)
			default:
				e.i("not.b64", x[h], ra)
				e.i("and.b64", x[h], x[h], rb)
			}
		}
		e.i("mov.b64", e.reg(d), x[0])
		e.i("mov.b64", e.reg(d+1), x[1])
		return
	case gvinst.OpVShl, gvinst.OpVShr:
		if in.HasImm && t.Size() <= 4 {
			e.swarShift(in)
			return
		}
		e.vecMore(in)
		return
	case gvinst.OpVCmp, gvinst.OpVSar, gvinst.OpVPerm, gvinst.OpVCvt, gvinst.OpVMulW, gvinst.OpVShufP:
		e.vecMore(in)
		return
	case gvinst.OpVAdd, gvinst.OpVSub, gvinst.OpVMul, gvinst.OpVMin, gvinst.OpVMax, gvinst.OpVUnpackL, gvinst.OpVUnpackH:
		if t.IsInt() && (t.Size() <= 2 || t.Size() == 8 && (in.Op == gvinst.OpVMin || in.Op == gvinst.OpVMax)) {
			e.vecInt(in)
			return
		}
	case gvinst.OpVAddSat, gvinst.OpVSubSat, gvinst.OpVAvg, gvinst.OpVMulHi, gvinst.OpVMaddW, gvinst.OpVSad, gvinst.OpVAbs, gvinst.OpVSign,
		gvinst.OpVHAdd, gvinst.OpVHSub, gvinst.OpVPackSS, gvinst.OpVPackUS, gvinst.OpVPermLo, gvinst.OpVPermHi, gvinst.OpVBShl, gvinst.OpVBShr,
		gvinst.OpVShufB, gvinst.OpVAlignR, gvinst.OpVBlend, gvinst.OpVBlendV, gvinst.OpVMovMsk, gvinst.OpVExtract, gvinst.OpVInsert, gvinst.OpVExt,
		gvinst.OpVRound:
		e.vecInt(in)
		return
	}
	switch in.Op {
	case gvinst.OpVUnpackL, gvinst.OpVUnpackH:
		off := gvinst.Reg(0)
		if in.Op == gvinst.OpVUnpackH {
			off = 1
		}
		x := [2]string{e.t(), e.t()}
		if t.Size() == 8 {
			e.i("mov.b64", x[0], e.reg(a+off))
			e.i("mov.b64", x[1], e.reg(b+off))
		} else {
			a0, a1, b0, b1 := e.w(), e.w(), e.w(), e.w()
			e.i("mov.b64", vec(a0, a1), e.reg(a+off))
			e.i("mov.b64", vec(b0, b1), e.reg(b+off))
			e.i("mov.b64", x[0], vec(a0, b0))
			e.i("mov.b64", x[1], vec(a1, b1))
		}
		e.i("mov.b64", e.reg(d), x[0])
		e.i("mov.b64", e.reg(d+1), x[1])
		return
	}
	unary := in.Op == gvinst.OpVSqrt
	res := [2]string{e.t(), e.t()}
	for h := 0; h < 2; h++ {
		ra := e.reg(a + gvinst.Reg(h))
		rb := ""
		if !unary {
			rb = e.reg(b + gvinst.Reg(h))
		}
		if t.Size() == 8 {
			e.lane(in.Op, t, res[h], ra, rb)
			continue
		}
		// Two 32-bit lanes per half.
		a0, a1 := e.w(), e.w()
		e.i("mov.b64", vec(a0, a1), ra)
		var b0, b1 string
		if !unary {
			b0, b1 = e.w(), e.w()
			e.i("mov.b64", vec(b0, b1), rb)
		}
		r0, r1 := e.w(), e.w()
		e.lane32(in.Op, t, r0, a0, b0)
		e.lane32(in.Op, t, r1, a1, b1)
		e.i("mov.b64", res[h], vec(r0, r1))
	}
	e.i("mov.b64", e.reg(d), res[0])
	e.i("mov.b64", e.reg(d+1), res[1])
}

// lane computes one 64-bit lane into register r.
func (e *emitter) lane(op gvinst.Op, t gvinst.Type, r, a, b string) {
	if t == gvinst.F64 {
		e.floatLane(op, 64, r, a, b)
		return
	}
	switch op {
	case gvinst.OpVMul:
		e.i("mul.lo.u64", r, a, b)
	default:
		e.i(fmt.Sprintf("%s.u64", vname(op)), r, a, b)
	}
}

// floatLane computes one float lane of the given width (32 or 64) into
// the .b32 or .b64 register r, from a and b (b is empty for a unary op).
func (e *emitter) floatLane(op gvinst.Op, width int, r, a, b string) {
	freg, ft, bt := e.fd, "f64", "b64"
	if width == 32 {
		freg, ft, bt = e.fs, "f32", "b32"
	}
	fa := freg()
	e.i(fmt.Sprintf("mov.%s", bt), fa, a)
	var fb string
	if b != "" {
		fb = freg()
		e.i(fmt.Sprintf("mov.%s", bt), fb, b)
	}
	fr := freg()
	switch op {
	case gvinst.OpVMin, gvinst.OpVMax:
		p := e.pred()
		c := "lt"
		if op == gvinst.OpVMax {
			c = "gt"
		}
		e.i(fmt.Sprintf("setp.%s.%s", c, ft), p, fa, fb)
		e.i(fmt.Sprintf("selp.%s", bt), r, a, b, p)
		return
	case gvinst.OpVSqrt:
		e.i(fmt.Sprintf("sqrt.rn.%s", ft), fr, fa)
	default:
		e.i(fmt.Sprintf("%s.rn.%s", vname(op), ft), fr, fa, fb)
	}
	e.i(fmt.Sprintf("mov.%s", bt), r, fr)
}

// lane32 computes one 32-bit lane into .b32 register r.
func (e *emitter) lane32(op gvinst.Op, t gvinst.Type, r, a, b string) {
	if t == gvinst.F32 {
		e.floatLane(op, 32, r, a, b)
		return
	}
	ty := "u32"
	if t.IsSigned() {
		ty = "s32"
	}
	switch op {
	case gvinst.OpVMul:
		e.i("mul.lo.u32", r, a, b)
	case gvinst.OpVMin, gvinst.OpVMax:
		e.i(fmt.Sprintf("%s.%s", vname(op), ty), r, a, b)
	default:
		e.i(fmt.Sprintf("%s.u32", vname(op)), r, a, b)
	}
}

func vname(op gvinst.Op) string {
	switch op {
	case gvinst.OpVAdd:
		return "add"
	case gvinst.OpVSub:
		return "sub"
	case gvinst.OpVMul:
		return "mul"
	case gvinst.OpVDiv:
		return "div"
	case gvinst.OpVMin:
		return "min"
	case gvinst.OpVMax:
		return "max"
	}
	panic(fmt.Sprintf("ptxgen: no lane op for %s", op))
}
