package lift

import (
	"github.com/gxbit/gxbit/gvinst"
	"golang.org/x/arch/x86/x86asm"
)

// sseStringOps is the dispatch table of the SSE4.2 string instructions.
func sseStringOps() map[x86asm.Op]liftFunc {
	return map[x86asm.Op]liftFunc{
		x86asm.PCMPISTRI: liftPcmpStr(false, false),
		x86asm.PCMPISTRM: liftPcmpStr(false, true),
		x86asm.PCMPESTRI: liftPcmpStr(true, false),
		x86asm.PCMPESTRM: liftPcmpStr(true, true),
	}
}

// implicitLen returns the number of lanes of t before the first zero lane
// of v (n if there is none).
func (b *builder) implicitLen(v gvinst.Reg, t gvinst.Type, n int) gvinst.Reg {
	zero := b.li(gvinst.U64, 0)
	z := b.vdef(gvinst.OpVCmp, t, uint8(gvinst.CmpEq), 0, v, b.join(zero, zero))
	m := b.vdef(gvinst.OpVMovMsk, t, 0, 0, z)
	return b.un(gvinst.OpCtz, gvinst.U32, b.opi(gvinst.OpOr, gvinst.U32, m, 1<<n))
}

// explicitLen returns min(|r|, n) for the length register r (rax or rdx,
// as eax/edx unless REX.W).
func (b *builder) explicitLen(slot gvinst.Reg, n int) gvinst.Reg {
	v := b.get(slot)
	if b.d.Inst.DataSize != 64 {
		v = b.sext(v, 32)
	}
	abs := b.un(gvinst.OpAbs, gvinst.S64, v)
	return b.opi(gvinst.OpMin, gvinst.U64, abs, int64(n))
}

// liftPcmpStr lifts pcmpestri, pcmpestrm, pcmpistri and pcmpistrm.
func liftPcmpStr(explicit, mask bool) liftFunc {
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
		imm &= 0x7f
		t := [4]gvinst.Type{gvinst.U8, gvinst.U16, gvinst.S8, gvinst.S16}[imm&3]
		n := 16 / t.Size()
		s, err := b.x128(so)
		if err != nil {
			return err
		}
		a := b.getX(dx)
		var la, lb gvinst.Reg
		if explicit {
			la = b.explicitLen(gvinst.S0, n)
			lb = b.explicitLen(gvinst.S2, n)
		} else {
			ut := t.WithSign(false)
			la = b.implicitLen(a, ut, n)
			lb = b.implicitLen(s, ut, n)
		}
		opImm := imm
		if !mask {
			opImm &^= 0x40
		}
		r := b.vdef(gvinst.OpVPcmpStr, t, 0, opImm, a, s, b.join(la, lb))
		nonzero := b.cmpi(gvinst.CmpNe, gvinst.U64, b.op(gvinst.OpOr, gvinst.U64, r, hiOf(r)), 0)
		if mask {
			b.putX(gvinst.XReg(0), r)
		} else {
			var idx gvinst.Reg
			if imm&0x40 != 0 {
				idx = b.op(gvinst.OpSub, gvinst.U32, b.li(gvinst.U32, 31), b.un(gvinst.OpClz, gvinst.U32, r))
			} else {
				idx = b.un(gvinst.OpCtz, gvinst.U32, r)
			}
			ecx := b.sel(gvinst.U64, nonzero, idx, b.li(gvinst.U64, int64(n)))
			b.writeGPR(gpr{slot: gvinst.S1, size: 4}, ecx)
		}
		zf := b.cmpi(gvinst.CmpLt, gvinst.U64, lb, int64(n))
		sf := b.cmpi(gvinst.CmpLt, gvinst.U64, la, int64(n))
		of := b.opi(gvinst.OpAnd, gvinst.U64, r, 1)
		bits := b.op(gvinst.OpOr, gvinst.U64, nonzero, b.bitAt(zf, 6))
		bits = b.op(gvinst.OpOr, gvinst.U64, bits, b.bitAt(sf, 7))
		bits = b.op(gvinst.OpOr, gvinst.U64, bits, b.bitAt(of, 11))
		b.setFlagBits(statusFlags, bits)
		return nil
	}
}
