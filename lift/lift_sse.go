package lift

import (
	"github.com/gxbit/gxbit/gvinst"
	"golang.org/x/arch/x86/x86asm"
)

// The SSE lifters work on whole registers (GET.b128, PUT.b128) for packed
// instructions, and on the low 64-bit slot of a register (GET.u64, PUT.u64,
// which leave the high slot alone) for scalar ones. A 128-bit value in a
// virtual register pair vN, vN+1 has its low half in vN, its high half in
// vN+1; the lifter builds pairs with JOIN.

// xopKind says what an SSE operand is.
type xopKind uint8

const (
	xopXMM xopKind = iota + 1
	xopGPR
	xopMem
	xopImm
)

// xop is a resolved SSE operand.
type xop struct {
	kind xopKind
	x    gvinst.Reg // xmm slot pair
	g    gpr
	m    memRef
	imm  int64
}

// xoperand resolves argument i of the current instruction.
func (b *builder) xoperand(i int) (xop, error) {
	switch a := b.d.Inst.Args[i].(type) {
	case x86asm.Reg:
		if x, ok := xmmOf(a); ok {
			return xop{kind: xopXMM, x: x}, nil
		}
		if g, ok := gprOf(a); ok {
			return xop{kind: xopGPR, g: g}, nil
		}
		return xop{}, unsupported("register %v", a)
	case x86asm.Mem:
		m, err := b.addrOf(a, false)
		if err != nil {
			return xop{}, err
		}
		if b.d.Inst.MemBytes == 16 && !unalignedM128[b.d.Inst.Op] {
			b.checkAligned16(m)
		}
		return xop{kind: xopMem, m: m}, nil
	case x86asm.Imm:
		return xop{kind: xopImm, imm: int64(a)}, nil
	}
	return xop{}, unsupported("operand %d", i)
}

// xmmArg resolves argument i, which must be an xmm register.
func (b *builder) xmmArg(i int) (gvinst.Reg, error) {
	r, ok := b.d.Inst.Args[i].(x86asm.Reg)
	if !ok {
		return 0, unsupported("expected an xmm register")
	}
	x, ok := xmmOf(r)
	if !ok {
		return 0, unsupported("register %v", r)
	}
	return x, nil
}

// immArg returns argument i as an immediate.
func (b *builder) immArg(i int) (int64, error) {
	imm, ok := b.d.Inst.Args[i].(x86asm.Imm)
	if !ok {
		return 0, unsupported("expected an immediate")
	}
	return int64(imm), nil
}

// getX reads a whole xmm register.
func (b *builder) getX(x gvinst.Reg) gvinst.Reg {
	if v, ok := b.xcache[x]; ok {
		return v
	}
	v := b.getT(gvinst.B128, x)
	b.xcache[x] = v
	return v
}

// putX writes a whole xmm register.
func (b *builder) putX(x, v gvinst.Reg) {
	b.putT(gvinst.B128, x, v)
	b.xcache[x] = v
}

// getXLo reads the low 64 bits of an xmm register.
func (b *builder) getXLo(x gvinst.Reg) gvinst.Reg {
	if v, ok := b.xcache[x]; ok {
		return v // the low slot of the pair
	}
	return b.getT(gvinst.U64, x)
}

// putXLo writes the low 64 bits of an xmm register, keeping the high ones.
func (b *builder) putXLo(x, v gvinst.Reg) { b.putT(gvinst.U64, x, v) }

// join returns the 128-bit value hi:lo.
func (b *builder) join(lo, hi gvinst.Reg) gvinst.Reg {
	return b.def(gvinst.OpJoin, gvinst.B128, lo, hi)
}

// hiOf is the high half of a 128-bit virtual register pair.
func hiOf(v gvinst.Reg) gvinst.Reg { return v + 1 }

// xsrc returns the 128-bit value of operand i, an xmm register or m128.
func (b *builder) xsrc(i int) (gvinst.Reg, error) {
	o, err := b.xoperand(i)
	if err != nil {
		return 0, err
	}
	return b.x128(o)
}

// x128 reads an xmm register or a 16-byte memory operand.
func (b *builder) x128(o xop) (gvinst.Reg, error) {
	switch o.kind {
	case xopXMM:
		return b.getX(o.x), nil
	case xopMem:
		return b.ld(gvinst.B128, o.m), nil
	}
	return 0, unsupported("expected xmm or m128")
}

// xlow reads the low size bytes of an operand: an xmm register's low
// slot, a general register or memory. Bits above size*8 are unspecified
// for registers and zero for memory.
func (b *builder) xlow(o xop, size int) (gvinst.Reg, error) {
	switch o.kind {
	case xopXMM:
		return b.getXLo(o.x), nil
	case xopGPR:
		return b.readGPR(o.g), nil
	case xopMem:
		return b.ld(uintType(size), o.m), nil
	}
	return 0, unsupported("operand kind")
}

// xsmall reads an operand of size bytes (an xmm register, or memory of
// that size) as a 128-bit value; for memory the bytes above size are zero.
func (b *builder) xsmall(o xop, size int) (gvinst.Reg, error) {
	if o.kind == xopXMM || size == 16 {
		return b.x128(o)
	}
	if o.kind != xopMem {
		return 0, unsupported("operand kind")
	}
	if size > 8 {
		return 0, unsupported("operand size %d", size)
	}
	return b.join(b.ld(uintType(size), o.m), b.li(gvinst.U64, 0)), nil
}

// vdef emits a packed op d = op.t srcs..., with the modifier mod and an
// optional immediate.
func (b *builder) vdef(op gvinst.Op, t gvinst.Type, mod uint8, imm int64, srcs ...gvinst.Reg) gvinst.Reg {
	in := gvinst.Inst{Op: op, Type: t, Mod: mod, Imm: imm}
	copy(in.Src[:], srcs)
	in.Dst = b.newV(in.DstType().Slots())
	b.emit(in)
	b.setWidth(in.Dst, in.DstType())
	return in.Dst
}

// vimm emits a packed op with an immediate second operand (VSHL.t d, a, imm).
func (b *builder) vimm(op gvinst.Op, t gvinst.Type, a gvinst.Reg, imm int64) gvinst.Reg {
	in := gvinst.Inst{Op: op, Type: t, HasImm: true, Imm: gvinst.CanonImm(t, imm), Dst: b.newV(2)}
	in.Src[0] = a
	b.emit(in)
	return in.Dst
}

// mergeLo32 returns the 64-bit slot old with its low 32 bits replaced by v.
func (b *builder) mergeLo32(old, v gvinst.Reg) gvinst.Reg {
	kept := b.opi(gvinst.OpAnd, gvinst.B64, old, -1<<32)
	return b.op(gvinst.OpOr, gvinst.B64, kept, b.zext(v, 32))
}

// writeScalar writes a scalar result of size 4 or 8 to the low lane of x,
// keeping the register's other bits.
func (b *builder) writeScalar(x gvinst.Reg, size int, v gvinst.Reg) {
	if size == 8 {
		b.putXLo(x, v)
		return
	}
	b.putXLo(x, b.mergeLo32(b.getXLo(x), v))
}

// vbin lifts a packed binary instruction op xmm1, xmm2/m128: xmm1 = op.t
// xmm1, src.
func vbin(op gvinst.Op, t gvinst.Type) liftFunc { return vbinMod(op, t, 0) }

func vbinMod(op gvinst.Op, t gvinst.Type, mod uint8) liftFunc {
	return func(b *builder) error {
		dx, err := b.xmmArg(0)
		if err != nil {
			return err
		}
		so, err := b.xoperand(1)
		if err != nil {
			return err
		}
		if so.kind == xopXMM && so.x == dx && (op == gvinst.OpVXor || op == gvinst.OpVAndN || op == gvinst.OpVSub && t.IsInt()) {
			// pxor x, x, psub* x, x and the like give zero whatever x
			// holds (not subps x, x: NaN - NaN and Inf - Inf are NaN).
			zero := b.li(gvinst.U64, 0)
			b.putX(dx, b.join(zero, zero))
			return nil
		}
		s, err := b.x128(so)
		if err != nil {
			return err
		}
		d := b.getX(dx)
		b.putX(dx, b.vdef(op, t, mod, 0, d, s))
		return nil
	}
}

// vun lifts a packed unary instruction op xmm1, xmm2/m128.
func vun(op gvinst.Op, t gvinst.Type) liftFunc {
	return func(b *builder) error {
		dx, err := b.xmmArg(0)
		if err != nil {
			return err
		}
		s, err := b.xsrc(1)
		if err != nil {
			return err
		}
		b.putX(dx, b.vdef(op, t, 0, 0, s))
		return nil
	}
}

// unalignedM128 lists the legacy SSE instructions whose 16-byte memory
// operand may be misaligned (Intel SDM vol. 1 and 3A, 6.15 #GP: MOVUPS,
// MOVUPD, MOVDQU and LDDQU; PCMPESTRI/M and PCMPISTRI/M "do not require
// alignment"). Every other legacy SSE instruction with a 16-byte memory
// operand raises #GP when it is not 16-byte aligned.
var unalignedM128 = map[x86asm.Op]bool{
	x86asm.MOVUPS: true, x86asm.MOVUPD: true, x86asm.MOVDQU: true, x86asm.LDDQU: true,
	x86asm.PCMPESTRI: true, x86asm.PCMPESTRM: true, x86asm.PCMPISTRI: true, x86asm.PCMPISTRM: true,
}

// checkAligned16 emits CHKALIGN.b128 m: the guest faults (#GP, SIGSEGV)
// here, before the instruction changes anything, unless m's address is a
// multiple of 16. The access itself keeps m as it is, so that phase 1 sees
// its address as base + displacement.
func (b *builder) checkAligned16(m memRef) {
	in := gvinst.Inst{Op: gvinst.OpChkAlign, Type: gvinst.B128, Imm: m.disp}
	in.Src[0] = m.base
	b.emit(in)
}
