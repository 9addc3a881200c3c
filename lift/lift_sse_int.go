package lift

import (
	"github.com/gxbit/gxbit/gvinst"
	"golang.org/x/arch/x86/x86asm"
)

// sseIntOps is the dispatch table of the packed-integer SSE instructions.
func sseIntOps() map[x86asm.Op]liftFunc {
	u8, u16, u32, u64 := gvinst.U8, gvinst.U16, gvinst.U32, gvinst.U64
	s8, s16, s32, s64 := gvinst.S8, gvinst.S16, gvinst.S32, gvinst.S64
	b128 := gvinst.B128
	eq, gt := uint8(gvinst.CmpEq), uint8(gvinst.CmpGt)
	return map[x86asm.Op]liftFunc{
		x86asm.PADDB: vbin(gvinst.OpVAdd, u8), x86asm.PADDW: vbin(gvinst.OpVAdd, u16),
		x86asm.PADDD: vbin(gvinst.OpVAdd, u32), x86asm.PADDQ: vbin(gvinst.OpVAdd, u64),
		x86asm.PSUBB: vbin(gvinst.OpVSub, u8), x86asm.PSUBW: vbin(gvinst.OpVSub, u16),
		x86asm.PSUBD: vbin(gvinst.OpVSub, u32), x86asm.PSUBQ: vbin(gvinst.OpVSub, u64),
		x86asm.PADDSB: vbin(gvinst.OpVAddSat, s8), x86asm.PADDSW: vbin(gvinst.OpVAddSat, s16),
		x86asm.PADDUSB: vbin(gvinst.OpVAddSat, u8), x86asm.PADDUSW: vbin(gvinst.OpVAddSat, u16),
		x86asm.PSUBSB: vbin(gvinst.OpVSubSat, s8), x86asm.PSUBSW: vbin(gvinst.OpVSubSat, s16),
		x86asm.PSUBUSB: vbin(gvinst.OpVSubSat, u8), x86asm.PSUBUSW: vbin(gvinst.OpVSubSat, u16),
		x86asm.PCMPEQB: vbinMod(gvinst.OpVCmp, u8, eq), x86asm.PCMPEQW: vbinMod(gvinst.OpVCmp, u16, eq),
		x86asm.PCMPEQD: vbinMod(gvinst.OpVCmp, u32, eq), x86asm.PCMPEQQ: vbinMod(gvinst.OpVCmp, u64, eq),
		x86asm.PCMPGTB: vbinMod(gvinst.OpVCmp, s8, gt), x86asm.PCMPGTW: vbinMod(gvinst.OpVCmp, s16, gt),
		x86asm.PCMPGTD: vbinMod(gvinst.OpVCmp, s32, gt), x86asm.PCMPGTQ: vbinMod(gvinst.OpVCmp, s64, gt),
		x86asm.PMINUB: vbin(gvinst.OpVMin, u8), x86asm.PMINUW: vbin(gvinst.OpVMin, u16), x86asm.PMINUD: vbin(gvinst.OpVMin, u32),
		x86asm.PMINSB: vbin(gvinst.OpVMin, s8), x86asm.PMINSW: vbin(gvinst.OpVMin, s16), x86asm.PMINSD: vbin(gvinst.OpVMin, s32),
		x86asm.PMAXUB: vbin(gvinst.OpVMax, u8), x86asm.PMAXUW: vbin(gvinst.OpVMax, u16), x86asm.PMAXUD: vbin(gvinst.OpVMax, u32),
		x86asm.PMAXSB: vbin(gvinst.OpVMax, s8), x86asm.PMAXSW: vbin(gvinst.OpVMax, s16), x86asm.PMAXSD: vbin(gvinst.OpVMax, s32),
		x86asm.PAND: vbin(gvinst.OpVAnd, b128), x86asm.POR: vbin(gvinst.OpVOr, b128),
		x86asm.PXOR: vbin(gvinst.OpVXor, b128), x86asm.PANDN: vbin(gvinst.OpVAndN, b128),
		x86asm.PAVGB: vbin(gvinst.OpVAvg, u8), x86asm.PAVGW: vbin(gvinst.OpVAvg, u16),
		x86asm.PMULLW: vbin(gvinst.OpVMul, u16), x86asm.PMULLD: vbin(gvinst.OpVMul, u32),
		x86asm.PMULHW: vbin(gvinst.OpVMulHi, s16), x86asm.PMULHUW: vbin(gvinst.OpVMulHi, u16),
		x86asm.PMULUDQ: vbin(gvinst.OpVMulW, u32), x86asm.PMULDQ: vbin(gvinst.OpVMulW, s32),
		x86asm.PMADDWD: vbin(gvinst.OpVMaddW, s16), x86asm.PSADBW: vbin(gvinst.OpVSad, u8),
		x86asm.PSHUFB:    vbin(gvinst.OpVShufB, u8),
		x86asm.PUNPCKLBW: vbin(gvinst.OpVUnpackL, u8), x86asm.PUNPCKLWD: vbin(gvinst.OpVUnpackL, u16),
		x86asm.PUNPCKLDQ: vbin(gvinst.OpVUnpackL, u32), x86asm.PUNPCKLQDQ: vbin(gvinst.OpVUnpackL, u64),
		x86asm.PUNPCKHBW: vbin(gvinst.OpVUnpackH, u8), x86asm.PUNPCKHWD: vbin(gvinst.OpVUnpackH, u16),
		x86asm.PUNPCKHDQ: vbin(gvinst.OpVUnpackH, u32), x86asm.PUNPCKHQDQ: vbin(gvinst.OpVUnpackH, u64),
		x86asm.PACKSSWB: vbin(gvinst.OpVPackSS, s16), x86asm.PACKSSDW: vbin(gvinst.OpVPackSS, s32),
		x86asm.PACKUSWB: vbin(gvinst.OpVPackUS, s16), x86asm.PACKUSDW: vbin(gvinst.OpVPackUS, s32),
		x86asm.PHADDW: vbin(gvinst.OpVHAdd, u16), x86asm.PHADDD: vbin(gvinst.OpVHAdd, u32),
		x86asm.PHSUBW: vbin(gvinst.OpVHSub, u16), x86asm.PHSUBD: vbin(gvinst.OpVHSub, u32),
		x86asm.PSIGNB: vbin(gvinst.OpVSign, s8), x86asm.PSIGNW: vbin(gvinst.OpVSign, s16), x86asm.PSIGND: vbin(gvinst.OpVSign, s32),
		x86asm.PABSB: vun(gvinst.OpVAbs, s8), x86asm.PABSW: vun(gvinst.OpVAbs, s16), x86asm.PABSD: vun(gvinst.OpVAbs, s32),
		x86asm.PMOVMSKB: liftMovMsk(u8),
		x86asm.PSHUFD:   liftPerm(gvinst.OpVPerm, u32),
		x86asm.PSHUFLW:  liftPerm(gvinst.OpVPermLo, u16),
		x86asm.PSHUFHW:  liftPerm(gvinst.OpVPermHi, u16),
		x86asm.PALIGNR:  liftBinImm(gvinst.OpVAlignR, u8, 0xff),
		x86asm.PBLENDW:  liftBinImm(gvinst.OpVBlend, u16, 0xff),
		x86asm.PBLENDVB: liftBlendV(u8),
		x86asm.PSLLDQ:   liftByteShift(gvinst.OpVBShl),
		x86asm.PSRLDQ:   liftByteShift(gvinst.OpVBShr),
		x86asm.PSLLW:    liftVShift(gvinst.OpVShl, u16), x86asm.PSLLD: liftVShift(gvinst.OpVShl, u32), x86asm.PSLLQ: liftVShift(gvinst.OpVShl, u64),
		x86asm.PSRLW: liftVShift(gvinst.OpVShr, u16), x86asm.PSRLD: liftVShift(gvinst.OpVShr, u32), x86asm.PSRLQ: liftVShift(gvinst.OpVShr, u64),
		x86asm.PSRAW: liftVShift(gvinst.OpVSar, s16), x86asm.PSRAD: liftVShift(gvinst.OpVSar, s32),
		x86asm.PINSRB: liftPinsr(u8), x86asm.PINSRW: liftPinsr(u16), x86asm.PINSRD: liftPinsr(u32), x86asm.PINSRQ: liftPinsr(u64),
		x86asm.PEXTRB: liftPextr(u8), x86asm.PEXTRW: liftPextr(u16), x86asm.PEXTRD: liftPextr(u32), x86asm.PEXTRQ: liftPextr(u64),
		x86asm.PTEST:     liftPtest,
		x86asm.PMADDUBSW: liftPmaddubsw,
		x86asm.PMULHRSW:  liftPmulhrsw,
		x86asm.PHADDSW:   liftHAddSubSat(false),
		x86asm.MPSADBW:   liftMpsadbw,
		x86asm.PHSUBSW:   liftHAddSubSat(true),
		x86asm.PMOVSXBW:  liftPmovx(s16, s8, 8), x86asm.PMOVSXBD: liftPmovx(s32, s8, 4), x86asm.PMOVSXBQ: liftPmovx(s64, s8, 2),
		x86asm.PMOVSXWD: liftPmovx(s32, s16, 8), x86asm.PMOVSXWQ: liftPmovx(s64, s16, 4), x86asm.PMOVSXDQ: liftPmovx(s64, s32, 8),
		x86asm.PMOVZXBW: liftPmovx(u16, u8, 8), x86asm.PMOVZXBD: liftPmovx(u32, u8, 4), x86asm.PMOVZXBQ: liftPmovx(u64, u8, 2),
		x86asm.PMOVZXWD: liftPmovx(u32, u16, 8), x86asm.PMOVZXWQ: liftPmovx(u64, u16, 4), x86asm.PMOVZXDQ: liftPmovx(u64, u32, 8),
	}
}

// liftMovMsk lifts pmovmskb, movmskps and movmskpd: the top bit of each
// lane into a general register.
func liftMovMsk(t gvinst.Type) liftFunc {
	return func(b *builder) error {
		d, err := b.xoperand(0)
		if err != nil {
			return err
		}
		sx, err := b.xmmArg(1)
		if err != nil {
			return err
		}
		if d.kind != xopGPR || d.g.size < 4 {
			return unsupported("movmsk destination")
		}
		m := b.vdef(gvinst.OpVMovMsk, t, 0, 0, b.getX(sx))
		b.writeGPR(d.g, m)
		return nil
	}
}

// liftPerm lifts pshufd, pshuflw and pshufhw: xmm1 = perm(src, imm).
func liftPerm(op gvinst.Op, t gvinst.Type) liftFunc {
	return func(b *builder) error {
		dx, err := b.xmmArg(0)
		if err != nil {
			return err
		}
		s, err := b.xsrc(1)
		if err != nil {
			return err
		}
		imm, err := b.immArg(2)
		if err != nil {
			return err
		}
		b.putX(dx, b.vdef(op, t, 0, imm&0xff, s))
		return nil
	}
}

// liftBinImm lifts op xmm1, xmm2/m128, imm8: xmm1 = op.t xmm1, src, imm.
func liftBinImm(op gvinst.Op, t gvinst.Type, mask int64) liftFunc {
	return func(b *builder) error {
		dx, d, s, err := b.binSrc()
		if err != nil {
			return err
		}
		imm, err := b.immArg(2)
		if err != nil {
			return err
		}
		b.putX(dx, b.vdef(op, t, 0, imm&mask, d, s))
		return nil
	}
}

// liftBlendV lifts pblendvb, blendvps and blendvpd (the mask is xmm0).
func liftBlendV(t gvinst.Type) liftFunc {
	return func(b *builder) error {
		dx, d, s, err := b.binSrc()
		if err != nil {
			return err
		}
		m := b.getX(gvinst.XReg(0))
		b.putX(dx, b.vdef(gvinst.OpVBlendV, t, 0, 0, d, s, m))
		return nil
	}
}

// liftByteShift lifts pslldq and psrldq.
func liftByteShift(op gvinst.Op) liftFunc {
	return func(b *builder) error {
		dx, err := b.xmmArg(0)
		if err != nil {
			return err
		}
		imm, err := b.immArg(1)
		if err != nil {
			return err
		}
		n := imm & 0xff
		if n > 16 {
			n = 16
		}
		b.putX(dx, b.vdef(op, gvinst.B128, 0, n, b.getX(dx)))
		return nil
	}
}

// liftVShift lifts the lane shifts by an immediate or by the low 64 bits
// of an xmm register or m128.
func liftVShift(op gvinst.Op, t gvinst.Type) liftFunc {
	return func(b *builder) error {
		dx, err := b.xmmArg(0)
		if err != nil {
			return err
		}
		so, err := b.xoperand(1)
		if err != nil {
			return err
		}
		d := b.getX(dx)
		var r gvinst.Reg
		switch so.kind {
		case xopImm:
			n := so.imm & 0xff
			if n >= int64(t.Bits()) && op != gvinst.OpVSar {
				n = int64(t.Bits())
			}
			if op == gvinst.OpVSar && n >= int64(t.Bits()) {
				n = int64(t.Bits() - 1)
			}
			r = b.vimm(op, t, d, n)
		case xopXMM, xopMem:
			var cnt gvinst.Reg
			if so.kind == xopXMM {
				cnt = b.getXLo(so.x)
			} else {
				cnt = b.ld(gvinst.U64, so.m)
			}
			r = b.vdef(op, t, 0, 0, d, cnt)
		default:
			return unsupported("shift count")
		}
		b.putX(dx, r)
		return nil
	}
}

// liftPinsr lifts pinsrb/w/d/q.
func liftPinsr(t gvinst.Type) liftFunc {
	return func(b *builder) error {
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
		if so.kind == xopXMM {
			return unsupported("pinsr from xmm")
		}
		v, err := b.xlow(so, t.Size())
		if err != nil {
			return err
		}
		lanes := int64(16 / t.Size())
		d := b.getX(dx)
		b.putX(dx, b.vdef(gvinst.OpVInsert, t, 0, imm&(lanes-1), d, v))
		return nil
	}
}

// liftPextr lifts pextrb/w/d/q to a general register or memory.
func liftPextr(t gvinst.Type) liftFunc {
	return func(b *builder) error {
		d, err := b.xoperand(0)
		if err != nil {
			return err
		}
		sx, err := b.xmmArg(1)
		if err != nil {
			return err
		}
		imm, err := b.immArg(2)
		if err != nil {
			return err
		}
		lanes := int64(16 / t.Size())
		v := b.vdef(gvinst.OpVExtract, t, 0, imm&(lanes-1), b.getX(sx))
		switch d.kind {
		case xopGPR:
			if d.g.size < 4 {
				return unsupported("pextr destination")
			}
			b.writeGPR(d.g, v)
		case xopMem:
			b.st(t, d.m, v)
		default:
			return unsupported("pextr destination")
		}
		return nil
	}
}

// isZero128 returns 1 if the 128-bit pair v is all zero, else 0.
func (b *builder) isZero128(v gvinst.Reg) gvinst.Reg {
	or := b.op(gvinst.OpOr, gvinst.U64, v, hiOf(v))
	return b.cmpi(gvinst.CmpEq, gvinst.U64, or, 0)
}

// liftPtest lifts ptest: ZF = (a AND b) == 0, CF = (NOT a AND b) == 0, the
// other status flags clear.
func liftPtest(b *builder) error {
	_, d, s, err := b.binSrc()
	if err != nil {
		return err
	}
	zf := b.isZero128(b.vdef(gvinst.OpVAnd, gvinst.B128, 0, 0, d, s))
	cf := b.isZero128(b.vdef(gvinst.OpVAndN, gvinst.B128, 0, 0, d, s))
	b.setFlagBits(statusFlags, b.op(gvinst.OpOr, gvinst.U64, b.bitAt(zf, 6), cf))
	return nil
}

// liftPmovx lifts pmovsx* and pmovzx*: the low lanes of the source
// (srcBytes of memory) widened.
func liftPmovx(t, s gvinst.Type, srcBytes int) liftFunc {
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
		in := gvinst.Inst{Op: gvinst.OpVExt, Type: t, SrcType: s, Dst: b.newV(2)}
		in.Src[0] = v
		b.emit(in)
		b.putX(dx, in.Dst)
		return nil
	}
}

// splat16 returns a 128-bit constant with every 16-bit lane v.
func (b *builder) splat16(v uint16) gvinst.Reg {
	q := uint64(v) * 0x0001000100010001
	c := b.li(gvinst.U64, int64(q))
	return b.join(c, c)
}

// binSrc resolves the operands of op xmm1, xmm2/m128 as (xmm1 slot,
// xmm1 value, source value).
func (b *builder) binSrc() (gvinst.Reg, gvinst.Reg, gvinst.Reg, error) {
	dx, err := b.xmmArg(0)
	if err != nil {
		return 0, 0, 0, err
	}
	s, err := b.xsrc(1)
	if err != nil {
		return 0, 0, 0, err
	}
	return dx, b.getX(dx), s, nil
}

// liftPmaddubsw lifts pmaddubsw: unsigned bytes of xmm1 times signed bytes
// of the source, adjacent products summed into signed-saturated words.
func liftPmaddubsw(b *builder) error {
	dx, a, s, err := b.binSrc()
	if err != nil {
		return err
	}
	u16, s16 := gvinst.U16, gvinst.S16
	aEven := b.vdef(gvinst.OpVAnd, gvinst.B128, 0, 0, a, b.splat16(0x00ff))
	aOdd := b.vimm(gvinst.OpVShr, u16, a, 8)
	sEven := b.vimm(gvinst.OpVSar, s16, b.vimm(gvinst.OpVShl, u16, s, 8), 8)
	sOdd := b.vimm(gvinst.OpVSar, s16, s, 8)
	even := b.vdef(gvinst.OpVMul, u16, 0, 0, aEven, sEven)
	odd := b.vdef(gvinst.OpVMul, u16, 0, 0, aOdd, sOdd)
	b.putX(dx, b.vdef(gvinst.OpVAddSat, s16, 0, 0, even, odd))
	return nil
}

// liftPmulhrsw lifts pmulhrsw: each word is ((a*b >> 14) + 1) >> 1 of the
// signed 32-bit product, computed as 2*hi + ((lo>>14) + 1)>>1.
func liftPmulhrsw(b *builder) error {
	dx, a, s, err := b.binSrc()
	if err != nil {
		return err
	}
	u16 := gvinst.U16
	hi := b.vdef(gvinst.OpVMulHi, gvinst.S16, 0, 0, a, s)
	lo := b.vdef(gvinst.OpVMul, u16, 0, 0, a, s)
	u := b.vimm(gvinst.OpVShr, u16, lo, 14)
	w := b.vimm(gvinst.OpVShr, u16, b.vdef(gvinst.OpVAdd, u16, 0, 0, u, b.splat16(1)), 1)
	b.putX(dx, b.vdef(gvinst.OpVAdd, u16, 0, 0, b.vimm(gvinst.OpVShl, u16, hi, 1), w))
	return nil
}

// liftHAddSubSat lifts phaddsw (sub false) and phsubsw: the even and odd
// words of xmm1 (low half) and the source (high half) are gathered with
// pshufb-style shuffles and added or subtracted with signed saturation.
func liftHAddSubSat(sub bool) liftFunc {
	return func(b *builder) error {
		dx, a, s, err := b.binSrc()
		if err != nil {
			return err
		}
		// Byte selectors for words 0,2,4,6 (even) and 1,3,5,7 (odd) into
		// the low 8 bytes; 0x80 zeroes the high 8 bytes.
		hiZero := b.li(gvinst.U64, -0x7f7f7f7f7f7f7f80)
		evenSel := b.join(b.li(gvinst.U64, 0x0d0c090805040100), hiZero)
		oddSel := b.join(b.li(gvinst.U64, 0x0f0e0b0a07060302), hiZero)
		gather := func(sel gvinst.Reg) gvinst.Reg {
			lo := b.vdef(gvinst.OpVShufB, gvinst.U8, 0, 0, a, sel)
			hi := b.vdef(gvinst.OpVShufB, gvinst.U8, 0, 0, s, sel)
			return b.vdef(gvinst.OpVUnpackL, gvinst.U64, 0, 0, lo, hi)
		}
		op := gvinst.OpVAddSat
		if sub {
			op = gvinst.OpVSubSat
		}
		b.putX(dx, b.vdef(op, gvinst.S16, 0, 0, gather(evenSel), gather(oddSel)))
		return nil
	}
}

// liftMpsadbw lifts mpsadbw: word i of the result is the sum of absolute
// differences between bytes i..i+3 of xmm1's block (offset imm bit 2 * 4)
// and the source's 4-byte block (offset imm bits 1:0 * 4). Each pair of
// words is one psadbw over two zero-padded 4-byte groups.
func liftMpsadbw(b *builder) error {
	dx, a, s, err := b.binSrc()
	if err != nil {
		return err
	}
	imm, err := b.immArg(2)
	if err != nil {
		return err
	}
	low4 := func(v gvinst.Reg) gvinst.Reg { return b.opi(gvinst.OpAnd, gvinst.U64, v, 0xffffffff) }
	y := low4(b.vdef(gvinst.OpVBShr, gvinst.B128, 0, (imm&3)*4, s))
	ydup := b.join(y, y)
	blk := b.vdef(gvinst.OpVBShr, gvinst.B128, 0, (imm>>2&1)*4, a)
	group := func(i int64) gvinst.Reg {
		if i == 0 {
			return low4(blk)
		}
		return low4(b.vdef(gvinst.OpVBShr, gvinst.B128, 0, i, blk))
	}
	var half [2]gvinst.Reg
	for h := 0; h < 2; h++ {
		var acc gvinst.Reg
		for k := 0; k < 2; k++ {
			i := int64(4*h + 2*k)
			sad := b.vdef(gvinst.OpVSad, gvinst.U8, 0, 0, b.join(group(i), group(i+1)), ydup)
			pair := b.op(gvinst.OpOr, gvinst.U64, sad, b.opi(gvinst.OpShl, gvinst.U64, hiOf(sad), 16))
			if k == 0 {
				acc = pair
			} else {
				acc = b.op(gvinst.OpOr, gvinst.U64, acc, b.opi(gvinst.OpShl, gvinst.U64, pair, 32))
			}
		}
		half[h] = acc
	}
	b.putX(dx, b.join(half[0], half[1]))
	return nil
}
