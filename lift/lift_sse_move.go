package lift

import (
	"github.com/gxbit/gxbit/gvinst"
	"golang.org/x/arch/x86/x86asm"
)

// sseMoveOps is the dispatch table of the SSE data moves.
func sseMoveOps() map[x86asm.Op]liftFunc {
	return map[x86asm.Op]liftFunc{
		x86asm.MOVAPS: liftMov128, x86asm.MOVUPS: liftMov128, x86asm.MOVAPD: liftMov128, x86asm.MOVUPD: liftMov128,
		x86asm.MOVDQA: liftMov128, x86asm.MOVDQU: liftMov128, x86asm.LDDQU: liftMov128,
		x86asm.MOVNTDQ: liftMov128, x86asm.MOVNTPS: liftMov128, x86asm.MOVNTPD: liftMov128, x86asm.MOVNTDQA: liftMov128,
		x86asm.MOVD:      liftMovdq(4),
		x86asm.MOVQ:      liftMovdq(8),
		x86asm.MOVSS:     liftMovScalar(4),
		x86asm.MOVSD_XMM: liftMovScalar(8),
		x86asm.MOVHPS:    liftMovHalf(true),
		x86asm.MOVHPD:    liftMovHalf(true),
		x86asm.MOVLPS:    liftMovHalf(false),
		x86asm.MOVLPD:    liftMovHalf(false),
		x86asm.MOVHLPS:   liftMovHLLH(true),
		x86asm.MOVLHPS:   liftMovHLLH(false),
		x86asm.MOVDDUP:   liftMovddup,
		x86asm.MOVSHDUP:  liftPermMove(0xf5),
		x86asm.MOVSLDUP:  liftPermMove(0xa0),
	}
}

// liftMov128 lifts the full-register moves (movaps and the other aligned
// forms check the alignment in xoperand).
func liftMov128(b *builder) error {
	if _, toMem := b.d.Inst.Args[0].(x86asm.Mem); toMem {
		// The register first, so that an alignment check of the
		// destination sits right before the store.
		s, err := b.xoperand(1)
		if err != nil {
			return err
		}
		if s.kind != xopXMM {
			return unsupported("memory to memory")
		}
		v := b.getX(s.x)
		d, err := b.xoperand(0)
		if err != nil {
			return err
		}
		b.st(gvinst.B128, d.m, v)
		return nil
	}
	d, err := b.xoperand(0)
	if err != nil {
		return err
	}
	s, err := b.xoperand(1)
	if err != nil {
		return err
	}
	if d.kind != xopXMM {
		return unsupported("destination")
	}
	v, err := b.x128(s)
	if err != nil {
		return err
	}
	b.putX(d.x, v)
	return nil
}

// liftMovdq lifts movd (size 4) and movq (size 8) between xmm registers,
// general registers and memory; a write to an xmm register zeroes the
// bits above size.
func liftMovdq(size int) liftFunc {
	return func(b *builder) error {
		d, err := b.xoperand(0)
		if err != nil {
			return err
		}
		s, err := b.xoperand(1)
		if err != nil {
			return err
		}
		if s.kind == xopGPR && s.g.size != size || d.kind == xopGPR && d.g.size != size {
			return unsupported("movd/movq register size")
		}
		switch d.kind {
		case xopXMM:
			v, err := b.xlow(s, size)
			if err != nil {
				return err
			}
			if size == 4 || s.kind != xopMem {
				v = b.zext(v, size*8)
			}
			b.putX(d.x, b.join(v, b.li(gvinst.U64, 0)))
		case xopGPR:
			if s.kind != xopXMM {
				return unsupported("movd/movq source")
			}
			b.writeGPR(d.g, b.getXLo(s.x))
		case xopMem:
			if s.kind != xopXMM {
				return unsupported("movd/movq source")
			}
			b.st(uintType(size), d.m, b.getXLo(s.x))
		default:
			return unsupported("movd/movq destination")
		}
		return nil
	}
}

// liftMovScalar lifts movss (4) and movsd (8): a load zeroes the rest of
// the register, a register move keeps it.
func liftMovScalar(size int) liftFunc {
	return func(b *builder) error {
		d, err := b.xoperand(0)
		if err != nil {
			return err
		}
		s, err := b.xoperand(1)
		if err != nil {
			return err
		}
		switch {
		case d.kind == xopXMM && s.kind == xopMem:
			v := b.ld(uintType(size), s.m)
			b.putX(d.x, b.join(v, b.li(gvinst.U64, 0)))
		case d.kind == xopXMM && s.kind == xopXMM:
			b.writeScalar(d.x, size, b.getXLo(s.x))
		case d.kind == xopMem && s.kind == xopXMM:
			b.st(uintType(size), d.m, b.getXLo(s.x))
		default:
			return unsupported("movss/movsd operands")
		}
		return nil
	}
}

// liftMovHalf lifts movhps/movhpd (high) and movlps/movlpd (low) between
// an xmm register and memory.
func liftMovHalf(high bool) liftFunc {
	return func(b *builder) error {
		d, err := b.xoperand(0)
		if err != nil {
			return err
		}
		s, err := b.xoperand(1)
		if err != nil {
			return err
		}
		switch {
		case d.kind == xopXMM && s.kind == xopMem:
			v := b.ld(gvinst.U64, s.m)
			if !high {
				b.putXLo(d.x, v)
				return nil
			}
			old := b.getX(d.x)
			b.putX(d.x, b.join(old, v))
		case d.kind == xopMem && s.kind == xopXMM:
			if !high {
				b.st(gvinst.U64, d.m, b.getXLo(s.x))
				return nil
			}
			b.st(gvinst.U64, d.m, hiOf(b.getX(s.x)))
		default:
			return unsupported("movhps/movlps operands")
		}
		return nil
	}
}

// liftMovHLLH lifts movhlps (dst.lo = src.hi) and movlhps (dst.hi = src.lo).
func liftMovHLLH(hl bool) liftFunc {
	return func(b *builder) error {
		dx, err := b.xmmArg(0)
		if err != nil {
			return err
		}
		sx, err := b.xmmArg(1)
		if err != nil {
			return err
		}
		s := b.getX(sx)
		if hl {
			b.putXLo(dx, hiOf(s))
			return nil
		}
		d := b.getX(dx)
		b.putX(dx, b.join(d, s))
		return nil
	}
}

// liftMovddup lifts movddup: both halves = the source's low 64 bits.
func liftMovddup(b *builder) error {
	dx, err := b.xmmArg(0)
	if err != nil {
		return err
	}
	s, err := b.xoperand(1)
	if err != nil {
		return err
	}
	v, err := b.xlow(s, 8)
	if err != nil {
		return err
	}
	b.putX(dx, b.join(v, v))
	return nil
}

// liftPermMove lifts movshdup and movsldup as a fixed dword shuffle.
func liftPermMove(imm int64) liftFunc {
	return func(b *builder) error {
		dx, err := b.xmmArg(0)
		if err != nil {
			return err
		}
		s, err := b.xoperand(1)
		if err != nil {
			return err
		}
		v, err := b.x128(s)
		if err != nil {
			return err
		}
		b.putX(dx, b.vdef(gvinst.OpVPerm, gvinst.U32, 0, imm, v))
		return nil
	}
}
