package lift

import (
	"github.com/gxbit/gxbit/gvinst"
	"golang.org/x/arch/x86/x86asm"
)

// stringOps is the dispatch table of the string instructions.
func stringOps() map[x86asm.Op]liftFunc {
	return map[x86asm.Op]liftFunc{
		x86asm.MOVSB: liftMovs(1), x86asm.MOVSW: liftMovs(2), x86asm.MOVSD: liftMovs(4), x86asm.MOVSQ: liftMovs(8),
		x86asm.STOSB: liftStos(1), x86asm.STOSW: liftStos(2), x86asm.STOSD: liftStos(4), x86asm.STOSQ: liftStos(8),
		x86asm.LODSB: liftLods(1), x86asm.LODSW: liftLods(2), x86asm.LODSD: liftLods(4), x86asm.LODSQ: liftLods(8),
		x86asm.CMPSB: liftCmps(1), x86asm.CMPSW: liftCmps(2), x86asm.CMPSD: liftCmps(4), x86asm.CMPSQ: liftCmps(8),
		x86asm.SCASB: liftScas(1), x86asm.SCASW: liftScas(2), x86asm.SCASD: liftScas(4), x86asm.SCASQ: liftScas(8),
		x86asm.XLATB: liftXlat,
	}
}

// repPrefix returns 0xf3 (rep, repe), 0xf2 (repne) or 0.
func (b *builder) repPrefix() int {
	rep := 0
	for _, p := range b.d.Inst.Prefix {
		if p == 0 {
			break
		}
		switch p & 0xff {
		case 0xf3:
			rep = 0xf3
		case 0xf2:
			rep = 0xf2
		}
	}
	return rep
}

// checkString rejects string instructions with 32-bit addresses or a
// segment override on their source.
func (b *builder) checkString() error {
	if b.d.Inst.AddrSize != 64 {
		return unsupported("%d-bit string addressing", b.d.Inst.AddrSize)
	}
	for _, a := range b.d.Inst.Args {
		if m, ok := a.(x86asm.Mem); ok && (m.Segment == x86asm.FS || m.Segment == x86asm.GS) {
			return unsupported("string instruction with a segment override")
		}
	}
	return nil
}

// stringDelta returns +size or -size as RFLAGS.DF says.
func (b *builder) stringDelta(size int) gvinst.Reg {
	df := b.opi(gvinst.OpAnd, gvinst.U64, b.opi(gvinst.OpShr, gvinst.U64, b.getflags(), 10), 1)
	return b.sel(gvinst.U64, df, b.li(gvinst.U64, int64(-size)), b.li(gvinst.U64, int64(size)))
}

// advance adds delta to the pointer register slot.
func (b *builder) advance(slot, delta gvinst.Reg) {
	b.put(slot, b.op(gvinst.OpAdd, gvinst.U64, b.get(slot), delta))
}

// repOp emits one of the REP* ops.
func (b *builder) repOp(op gvinst.Op, size int, c gvinst.Cond) {
	b.emit(gvinst.Inst{Op: op, Type: uintType(size), Mod: uint8(c)})
}

func liftMovs(size int) liftFunc {
	return func(b *builder) error {
		if err := b.checkString(); err != nil {
			return err
		}
		if b.repPrefix() != 0 {
			b.repOp(gvinst.OpRepMovs, size, 0)
			return nil
		}
		t := uintType(size)
		v := b.ld(t, memRef{b.get(gvinst.S6), 0})
		b.st(t, memRef{b.get(gvinst.S7), 0}, v)
		d := b.stringDelta(size)
		b.advance(gvinst.S6, d)
		b.advance(gvinst.S7, d)
		return nil
	}
}

func liftStos(size int) liftFunc {
	return func(b *builder) error {
		if err := b.checkString(); err != nil {
			return err
		}
		if b.repPrefix() != 0 {
			b.repOp(gvinst.OpRepStos, size, 0)
			return nil
		}
		b.st(uintType(size), memRef{b.get(gvinst.S7), 0}, b.get(gvinst.S0))
		b.advance(gvinst.S7, b.stringDelta(size))
		return nil
	}
}

func liftLods(size int) liftFunc {
	return func(b *builder) error {
		if err := b.checkString(); err != nil {
			return err
		}
		if b.repPrefix() != 0 {
			return unsupported("rep lods")
		}
		v := b.ld(uintType(size), memRef{b.get(gvinst.S6), 0})
		b.writeGPR(sizedGPR(gvinst.S0, size), v)
		b.advance(gvinst.S6, b.stringDelta(size))
		return nil
	}
}

func liftCmps(size int) liftFunc {
	return func(b *builder) error {
		if err := b.checkString(); err != nil {
			return err
		}
		switch b.repPrefix() {
		case 0xf3:
			b.repOp(gvinst.OpRepCmps, size, gvinst.CondE)
			return nil
		case 0xf2:
			b.repOp(gvinst.OpRepCmps, size, gvinst.CondNE)
			return nil
		}
		t := uintType(size)
		x := b.ld(t, memRef{b.get(gvinst.S6), 0})
		y := b.ld(t, memRef{b.get(gvinst.S7), 0})
		d := b.stringDelta(size)
		b.flags(gvinst.FlagsSub, t, x, y, b.op(gvinst.OpSub, t, x, y), x)
		b.advance(gvinst.S6, d)
		b.advance(gvinst.S7, d)
		return nil
	}
}

func liftScas(size int) liftFunc {
	return func(b *builder) error {
		if err := b.checkString(); err != nil {
			return err
		}
		switch b.repPrefix() {
		case 0xf3:
			b.repOp(gvinst.OpRepScas, size, gvinst.CondE)
			return nil
		case 0xf2:
			b.repOp(gvinst.OpRepScas, size, gvinst.CondNE)
			return nil
		}
		t := uintType(size)
		x := b.get(gvinst.S0)
		y := b.ld(t, memRef{b.get(gvinst.S7), 0})
		d := b.stringDelta(size)
		b.flags(gvinst.FlagsSub, t, x, y, b.op(gvinst.OpSub, t, x, y), x)
		b.advance(gvinst.S7, d)
		return nil
	}
}

// liftXlat lifts xlat: al = [rbx + al].
func liftXlat(b *builder) error {
	if b.d.Inst.AddrSize != 64 {
		return unsupported("32-bit xlat")
	}
	m, _ := b.d.Inst.Args[0].(x86asm.Mem)
	ref, err := b.addrOf(x86asm.Mem{Segment: m.Segment, Base: x86asm.RBX}, false)
	if err != nil {
		return err
	}
	al := b.zext(b.get(gvinst.S0), 8)
	v := b.ld(gvinst.U8, memRef{b.op(gvinst.OpAdd, gvinst.U64, b.effAddr(ref), al), 0})
	b.writeGPR(sizedGPR(gvinst.S0, 1), v)
	return nil
}
