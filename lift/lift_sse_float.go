package lift

import (
	"github.com/gxbit/gxbit/gvinst"
	"golang.org/x/arch/x86/x86asm"
)

// sseFloatOps is the dispatch table of the SSE floating-point
// instructions.
func sseFloatOps() map[x86asm.Op]liftFunc {
	f32, f64, b128 := gvinst.F32, gvinst.F64, gvinst.B128
	u32, u64 := gvinst.U32, gvinst.U64
	return map[x86asm.Op]liftFunc{
		x86asm.ADDPS: vbin(gvinst.OpVAdd, f32), x86asm.ADDPD: vbin(gvinst.OpVAdd, f64),
		x86asm.SUBPS: vbin(gvinst.OpVSub, f32), x86asm.SUBPD: vbin(gvinst.OpVSub, f64),
		x86asm.MULPS: vbin(gvinst.OpVMul, f32), x86asm.MULPD: vbin(gvinst.OpVMul, f64),
		x86asm.DIVPS: vbin(gvinst.OpVDiv, f32), x86asm.DIVPD: vbin(gvinst.OpVDiv, f64),
		x86asm.MINPS: vbin(gvinst.OpVMin, f32), x86asm.MINPD: vbin(gvinst.OpVMin, f64),
		x86asm.MAXPS: vbin(gvinst.OpVMax, f32), x86asm.MAXPD: vbin(gvinst.OpVMax, f64),
		x86asm.SQRTPS: vun(gvinst.OpVSqrt, f32), x86asm.SQRTPD: vun(gvinst.OpVSqrt, f64),
		x86asm.ANDPS: vbin(gvinst.OpVAnd, b128), x86asm.ANDPD: vbin(gvinst.OpVAnd, b128),
		x86asm.ANDNPS: vbin(gvinst.OpVAndN, b128), x86asm.ANDNPD: vbin(gvinst.OpVAndN, b128),
		x86asm.ORPS: vbin(gvinst.OpVOr, b128), x86asm.ORPD: vbin(gvinst.OpVOr, b128),
		x86asm.XORPS: vbin(gvinst.OpVXor, b128), x86asm.XORPD: vbin(gvinst.OpVXor, b128),
		x86asm.UNPCKLPS: vbin(gvinst.OpVUnpackL, u32), x86asm.UNPCKLPD: vbin(gvinst.OpVUnpackL, u64),
		x86asm.UNPCKHPS: vbin(gvinst.OpVUnpackH, u32), x86asm.UNPCKHPD: vbin(gvinst.OpVUnpackH, u64),
		x86asm.SHUFPS: liftBinImm(gvinst.OpVShufP, f32, 0xff), x86asm.SHUFPD: liftBinImm(gvinst.OpVShufP, f64, 3),
		x86asm.BLENDPS: liftBinImm(gvinst.OpVBlend, f32, 0xf), x86asm.BLENDPD: liftBinImm(gvinst.OpVBlend, f64, 3),
		x86asm.BLENDVPS: liftBlendV(f32), x86asm.BLENDVPD: liftBlendV(f64),
		x86asm.MOVMSKPS: liftMovMsk(u32), x86asm.MOVMSKPD: liftMovMsk(u64),
		x86asm.CMPPS: liftCmpP(f32), x86asm.CMPPD: liftCmpP(f64),
		x86asm.CMPSS: liftCmpS(f32), x86asm.CMPSD_XMM: liftCmpS(f64),
		x86asm.ADDSS: liftScalar(gvinst.OpAdd, f32), x86asm.ADDSD: liftScalar(gvinst.OpAdd, f64),
		x86asm.SUBSS: liftScalar(gvinst.OpSub, f32), x86asm.SUBSD: liftScalar(gvinst.OpSub, f64),
		x86asm.MULSS: liftScalar(gvinst.OpMul, f32), x86asm.MULSD: liftScalar(gvinst.OpMul, f64),
		x86asm.DIVSS: liftScalar(gvinst.OpDiv, f32), x86asm.DIVSD: liftScalar(gvinst.OpDiv, f64),
		x86asm.MINSS: liftScalar(gvinst.OpMin, f32), x86asm.MINSD: liftScalar(gvinst.OpMin, f64),
		x86asm.MAXSS: liftScalar(gvinst.OpMax, f32), x86asm.MAXSD: liftScalar(gvinst.OpMax, f64),
		x86asm.SQRTSS: liftScalar(gvinst.OpSqrt, f32), x86asm.SQRTSD: liftScalar(gvinst.OpSqrt, f64),
		x86asm.UCOMISS: liftComis(f32), x86asm.UCOMISD: liftComis(f64),
		x86asm.COMISS: liftComis(f32), x86asm.COMISD: liftComis(f64),
		x86asm.CVTSI2SS: liftCvtInt2F(f32), x86asm.CVTSI2SD: liftCvtInt2F(f64),
		x86asm.CVTSS2SD: liftCvtF2F(f64, f32), x86asm.CVTSD2SS: liftCvtF2F(f32, f64),
		x86asm.CVTTSS2SI: liftCvtF2Int(f32, gvinst.RoundZero), x86asm.CVTTSD2SI: liftCvtF2Int(f64, gvinst.RoundZero),
		x86asm.CVTSS2SI: liftCvtF2Int(f32, gvinst.RoundMXCSR), x86asm.CVTSD2SI: liftCvtF2Int(f64, gvinst.RoundMXCSR),
		x86asm.CVTDQ2PS:  liftVCvt(f32, gvinst.S32, gvinst.RoundMXCSR, 16),
		x86asm.CVTPS2DQ:  liftVCvt(gvinst.S32, f32, gvinst.RoundMXCSR, 16),
		x86asm.CVTTPS2DQ: liftVCvt(gvinst.S32, f32, gvinst.RoundZero, 16),
		x86asm.CVTDQ2PD:  liftVCvt(f64, gvinst.S32, gvinst.RoundNearest, 8),
		x86asm.CVTPD2DQ:  liftVCvt(gvinst.S32, f64, gvinst.RoundMXCSR, 16),
		x86asm.CVTTPD2DQ: liftVCvt(gvinst.S32, f64, gvinst.RoundZero, 16),
		x86asm.CVTPS2PD:  liftVCvt(f64, f32, gvinst.RoundNearest, 8),
		x86asm.CVTPD2PS:  liftVCvt(f32, f64, gvinst.RoundMXCSR, 16),
		x86asm.HADDPS:    vbin(gvinst.OpVHAdd, f32), x86asm.HADDPD: vbin(gvinst.OpVHAdd, f64),
		x86asm.HSUBPS: vbin(gvinst.OpVHSub, f32), x86asm.HSUBPD: vbin(gvinst.OpVHSub, f64),
		x86asm.EXTRACTPS: liftPextr(u32),
		x86asm.INSERTPS:  liftInsertps,
		x86asm.DPPS:      liftDotProduct(f32),
		x86asm.DPPD:      liftDotProduct(f64),
		x86asm.ADDSUBPS:  liftAddSub(f32), x86asm.ADDSUBPD: liftAddSub(f64),
		x86asm.ROUNDSS: liftRoundS(f32), x86asm.ROUNDSD: liftRoundS(f64),
		x86asm.ROUNDPS: liftRoundP(f32), x86asm.ROUNDPD: liftRoundP(f64),
	}
}

// scalarSrc reads the low size bytes of an xmm register or memory.
func (b *builder) scalarSrc(i, size int) (gvinst.Reg, error) {
	so, err := b.xoperand(i)
	if err != nil {
		return 0, err
	}
	if so.kind != xopXMM && so.kind != xopMem {
		return 0, unsupported("scalar source")
	}
	return b.xlow(so, size)
}

// liftScalar lifts the scalar arithmetic: the low lane of xmm1 = op.t
// (xmm1, src) (sqrt: op.t src); the other lanes are kept.
func liftScalar(op gvinst.Op, t gvinst.Type) liftFunc {
	return func(b *builder) error {
		dx, err := b.xmmArg(0)
		if err != nil {
			return err
		}
		s, err := b.scalarSrc(1, t.Size())
		if err != nil {
			return err
		}
		var r gvinst.Reg
		if op == gvinst.OpSqrt {
			r = b.un(op, t, s)
		} else {
			r = b.op(op, t, b.getXLo(dx), s)
		}
		b.writeScalar(dx, t.Size(), r)
		return nil
	}
}

// sseCmp maps the SSE comparison predicates 0-7 to GVInst conditions.
var sseCmp = [8]gvinst.Cmp{gvinst.CmpEq, gvinst.CmpLt, gvinst.CmpLe, gvinst.CmpNan, gvinst.CmpNeu, gvinst.CmpGeu, gvinst.CmpGtu, gvinst.CmpNum}

func (b *builder) cmpPredicate(i int) (gvinst.Cmp, error) {
	imm, err := b.immArg(i)
	if err != nil {
		return 0, err
	}
	if imm < 0 || imm > 7 {
		return 0, unsupported("comparison predicate %d", imm)
	}
	return sseCmp[imm], nil
}

// liftCmpP lifts cmpps and cmppd.
func liftCmpP(t gvinst.Type) liftFunc {
	return func(b *builder) error {
		c, err := b.cmpPredicate(2)
		if err != nil {
			return err
		}
		return vbinMod(gvinst.OpVCmp, t, uint8(c))(b)
	}
}

// liftCmpS lifts cmpss and cmpsd: the low lane becomes all ones or zero.
func liftCmpS(t gvinst.Type) liftFunc {
	return func(b *builder) error {
		c, err := b.cmpPredicate(2)
		if err != nil {
			return err
		}
		dx, err := b.xmmArg(0)
		if err != nil {
			return err
		}
		s, err := b.scalarSrc(1, t.Size())
		if err != nil {
			return err
		}
		bit := b.cmp(c, t, b.getXLo(dx), s)
		b.writeScalar(dx, t.Size(), b.un(gvinst.OpNeg, uintType(t.Size()), bit))
		return nil
	}
}

// liftComis lifts ucomiss/ucomisd/comiss/comisd: unordered sets ZF, PF and
// CF; less sets CF; equal sets ZF; OF, SF and AF are cleared.
func liftComis(t gvinst.Type) liftFunc {
	return func(b *builder) error {
		dx, err := b.xmmArg(0)
		if err != nil {
			return err
		}
		s, err := b.scalarSrc(1, t.Size())
		if err != nil {
			return err
		}
		a := b.getXLo(dx)
		cf := b.cmp(gvinst.CmpLtu, t, a, s)
		zf := b.cmp(gvinst.CmpEqu, t, a, s)
		pf := b.cmp(gvinst.CmpNan, t, a, s)
		bits := b.op(gvinst.OpOr, gvinst.U64, cf, b.op(gvinst.OpOr, gvinst.U64, b.bitAt(pf, 2), b.bitAt(zf, 6)))
		b.setFlagBits(statusFlags, bits)
		return nil
	}
}

// liftCvtInt2F lifts cvtsi2ss and cvtsi2sd from a 32- or 64-bit integer.
func liftCvtInt2F(t gvinst.Type) liftFunc {
	return func(b *builder) error {
		dx, err := b.xmmArg(0)
		if err != nil {
			return err
		}
		so, err := b.xoperand(1)
		if err != nil {
			return err
		}
		size := b.d.Inst.MemBytes
		if so.kind == xopGPR {
			size = so.g.size
		}
		if size != 4 && size != 8 {
			return unsupported("cvtsi2s* source size")
		}
		v, err := b.xlow(so, size)
		if err != nil {
			return err
		}
		b.writeScalar(dx, t.Size(), b.cvt(gvinst.RoundMXCSR, t, sintType(size), v))
		return nil
	}
}

// liftCvtF2F lifts cvtss2sd and cvtsd2ss.
func liftCvtF2F(t, s gvinst.Type) liftFunc {
	return func(b *builder) error {
		dx, err := b.xmmArg(0)
		if err != nil {
			return err
		}
		v, err := b.scalarSrc(1, s.Size())
		if err != nil {
			return err
		}
		r := gvinst.RoundMXCSR
		if t == gvinst.F64 {
			r = gvinst.RoundNearest
		}
		b.writeScalar(dx, t.Size(), b.cvt(r, t, s, v))
		return nil
	}
}

// liftCvtF2Int lifts cvt(t)ss2si and cvt(t)sd2si to a 32- or 64-bit register.
func liftCvtF2Int(s gvinst.Type, r gvinst.Rounding) liftFunc {
	return func(b *builder) error {
		d, err := b.xoperand(0)
		if err != nil {
			return err
		}
		if d.kind != xopGPR || d.g.size < 4 {
			return unsupported("conversion destination")
		}
		v, err := b.scalarSrc(1, s.Size())
		if err != nil {
			return err
		}
		b.writeGPR(d.g, b.cvt(r, sintType(d.g.size), s, v))
		return nil
	}
}

// liftVCvt lifts the packed conversions; srcBytes is the size of a memory
// source (8 for the widening ones).
func liftVCvt(t, s gvinst.Type, r gvinst.Rounding, srcBytes int) liftFunc {
	return func(b *builder) error {
		dx, err := b.xmmArg(0)
		if err != nil {
			return err
		}
		so, err := b.xoperand(1)
		if err != nil {
			return err
		}
		v, err := b.xsmall(so, srcBytes)
		if err != nil {
			return err
		}
		in := gvinst.Inst{Op: gvinst.OpVCvt, Type: t, SrcType: s, Mod: uint8(r), Dst: b.newV(2)}
		in.Src[0] = v
		b.emit(in)
		b.putX(dx, in.Dst)
		return nil
	}
}

// roundMode decodes the rounding immediate of roundss/sd/ps/pd.
func (b *builder) roundMode(i int) (gvinst.Rounding, error) {
	imm, err := b.immArg(i)
	if err != nil {
		return 0, err
	}
	if imm&4 != 0 {
		return gvinst.RoundMXCSR, nil
	}
	return [4]gvinst.Rounding{gvinst.RoundNearest, gvinst.RoundDown, gvinst.RoundUp, gvinst.RoundZero}[imm&3], nil
}

func liftRoundS(t gvinst.Type) liftFunc {
	return func(b *builder) error {
		r, err := b.roundMode(2)
		if err != nil {
			return err
		}
		dx, err := b.xmmArg(0)
		if err != nil {
			return err
		}
		v, err := b.scalarSrc(1, t.Size())
		if err != nil {
			return err
		}
		in := gvinst.Inst{Op: gvinst.OpRound, Type: t, Mod: uint8(r), Dst: b.newV(1)}
		in.Src[0] = v
		b.emit(in)
		b.writeScalar(dx, t.Size(), in.Dst)
		return nil
	}
}

func liftRoundP(t gvinst.Type) liftFunc {
	return func(b *builder) error {
		r, err := b.roundMode(2)
		if err != nil {
			return err
		}
		dx, err := b.xmmArg(0)
		if err != nil {
			return err
		}
		v, err := b.xsrc(1)
		if err != nil {
			return err
		}
		b.putX(dx, b.vdef(gvinst.OpVRound, t, uint8(r), 0, v))
		return nil
	}
}

// liftAddSub lifts addsubps and addsubpd: even lanes subtract, odd lanes
// add.
func liftAddSub(t gvinst.Type) liftFunc {
	return func(b *builder) error {
		dx, d, s, err := b.binSrc()
		if err != nil {
			return err
		}
		sub := b.vdef(gvinst.OpVSub, t, 0, 0, d, s)
		add := b.vdef(gvinst.OpVAdd, t, 0, 0, d, s)
		odd := int64(0b1010)
		if t == gvinst.F64 {
			odd = 0b10
		}
		b.putX(dx, b.vdef(gvinst.OpVBlend, t, 0, odd, sub, add))
		return nil
	}
}

// liftInsertps lifts insertps: lane count_d of xmm1 = lane count_s of the
// source (or the 32-bit memory operand), then the lanes of zmask cleared.
func liftInsertps(b *builder) error {
	dx, err := b.xmmArg(0)
	if err != nil {
		return err
	}
	so, err := b.xoperand(1)
	if err != nil {
		return err
	}
	imm, err := b.immArg(2)
	if err != nil {
		return err
	}
	var v gvinst.Reg
	switch so.kind {
	case xopXMM:
		v = b.vdef(gvinst.OpVExtract, gvinst.U32, 0, imm>>6&3, b.getX(so.x))
	case xopMem:
		v = b.ld(gvinst.U32, so.m)
	default:
		return unsupported("insertps source")
	}
	r := b.vdef(gvinst.OpVInsert, gvinst.U32, 0, imm>>4&3, b.getX(dx), v)
	if zmask := imm & 0xf; zmask != 0 {
		zero := b.li(gvinst.U64, 0)
		r = b.vdef(gvinst.OpVBlend, gvinst.F32, 0, zmask, r, b.join(zero, zero))
	}
	b.putX(dx, r)
	return nil
}

// liftDotProduct lifts dpps and dppd: the products of the lanes selected by
// imm's high nibble (the others +0.0) are summed pairwise, as the SDM
// orders the additions, and the sum goes to the lanes selected by imm's low
// nibble (the others +0.0).
func liftDotProduct(t gvinst.Type) liftFunc {
	return func(b *builder) error {
		dx, a, s, err := b.binSrc()
		if err != nil {
			return err
		}
		imm, err := b.immArg(2)
		if err != nil {
			return err
		}
		lanes := int64(16 / t.Size())
		all := int64(1)<<lanes - 1
		zero := b.li(gvinst.U64, 0)
		zv := b.join(zero, zero)
		prod := b.vdef(gvinst.OpVMul, t, 0, 0, a, s)
		prod = b.vdef(gvinst.OpVBlend, t, 0, imm>>4&all, zv, prod)
		sum := b.vdef(gvinst.OpVHAdd, t, 0, 0, prod, prod)
		if t == gvinst.F32 {
			sum = b.vdef(gvinst.OpVHAdd, t, 0, 0, sum, sum)
		}
		b.putX(dx, b.vdef(gvinst.OpVBlend, t, 0, imm&all, zv, sum))
		return nil
	}
}
