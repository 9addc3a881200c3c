package lift

import (
	"github.com/gxbit/gxbit/gvinst"
	"golang.org/x/arch/x86/x86asm"
)

// memRef is a guest address as LD and ST take it: a register plus a
// displacement.
type memRef struct {
	base gvinst.Reg
	disp int64
}

// at returns m moved by off bytes.
func (m memRef) at(off int64) memRef { return memRef{m.base, m.disp + off} }

// isMoffs reports whether the current instruction is mov with a 64-bit
// absolute address (opcodes A0-A3), whose Mem.Disp is the full address.
func (b *builder) isMoffs() bool {
	op := b.d.Inst.Opcode >> 24
	return b.d.Inst.Op == x86asm.MOV && op >= 0xa0 && op <= 0xa3
}

// addrOf computes the address of a memory operand, segment base included
// unless noSeg (lea).
func (b *builder) addrOf(m x86asm.Mem, noSeg bool) (memRef, error) {
	disp := int64(int32(m.Disp))
	if b.isMoffs() {
		disp = m.Disp
	}
	if m.Base == x86asm.RIP {
		if m.Index != 0 {
			return memRef{}, unsupported("rip-relative address with an index")
		}
		return memRef{b.li(gvinst.U64, int64(b.next())+disp), 0}, nil
	}
	if m.Base == x86asm.EIP || m.Base == x86asm.IP {
		return memRef{}, unsupported("eip-relative address")
	}
	var base gvinst.Reg
	have := false
	if m.Base != 0 {
		g, ok := gprOf(m.Base)
		if !ok || g.size < 4 {
			return memRef{}, unsupported("base register %v", m.Base)
		}
		base, have = b.get(g.slot), true
	}
	if m.Index != 0 && m.Scale != 0 {
		g, ok := gprOf(m.Index)
		if !ok || g.size < 4 {
			return memRef{}, unsupported("index register %v", m.Index)
		}
		idx := b.get(g.slot)
		switch m.Scale {
		case 2:
			idx = b.opi(gvinst.OpShl, gvinst.U64, idx, 1)
		case 4:
			idx = b.opi(gvinst.OpShl, gvinst.U64, idx, 2)
		case 8:
			idx = b.opi(gvinst.OpShl, gvinst.U64, idx, 3)
		}
		if have {
			base = b.op(gvinst.OpAdd, gvinst.U64, base, idx)
		} else {
			base, have = idx, true
		}
	}
	switch b.d.Inst.AddrSize {
	case 64:
	case 32:
		if !have {
			base = b.li(gvinst.U64, int64(uint32(disp)))
		} else {
			base = b.opi(gvinst.OpAdd, gvinst.U32, base, disp)
		}
		disp, have = 0, true
	default:
		return memRef{}, unsupported("%d-bit addressing", b.d.Inst.AddrSize)
	}
	if !noSeg {
		var seg gvinst.Reg
		switch m.Segment {
		case x86asm.FS:
			seg = gvinst.FSBase
		case x86asm.GS:
			seg = gvinst.GSBase
		}
		if seg != 0 {
			s := b.get(seg)
			if have {
				base = b.op(gvinst.OpAdd, gvinst.U64, base, s)
			} else {
				base, have = s, true
			}
		}
	}
	if !have {
		return memRef{b.li(gvinst.U64, disp), 0}, nil
	}
	return memRef{base, disp}, nil
}

// effAddr returns a memory operand's address as one 64-bit value.
func (b *builder) effAddr(m memRef) gvinst.Reg {
	if m.disp == 0 {
		return m.base
	}
	return b.opi(gvinst.OpAdd, gvinst.U64, m.base, m.disp)
}

// locKind says what an integer operand is.
type locKind uint8

const (
	locReg locKind = iota + 1
	locMem
	locImm
)

// loc is a resolved integer operand: a register, a memory location (its
// address computed once, for read-modify-write) or an immediate.
type loc struct {
	kind locKind
	reg  gpr
	mem  memRef
	imm  int64
	size int // bytes
}

// resolve resolves an integer operand. size is used for memory and
// immediate operands (registers know their own).
func (b *builder) resolve(a x86asm.Arg, size int) (loc, error) {
	switch a := a.(type) {
	case x86asm.Reg:
		g, ok := gprOf(a)
		if !ok {
			return loc{}, unsupported("operand register %v", a)
		}
		return loc{kind: locReg, reg: g, size: g.size}, nil
	case x86asm.Mem:
		m, err := b.addrOf(a, false)
		if err != nil {
			return loc{}, err
		}
		return loc{kind: locMem, mem: m, size: size}, nil
	case x86asm.Imm:
		return loc{kind: locImm, imm: int64(a), size: size}, nil
	}
	return loc{}, unsupported("operand %v", a)
}

// opSize is the size of operand a in bytes: a general register's own size,
// else the size of the current instruction's memory operand, else its
// operand size.
func (b *builder) opSize(a x86asm.Arg) int {
	if r, ok := a.(x86asm.Reg); ok {
		if g, ok := gprOf(r); ok {
			return g.size
		}
	}
	if b.d.Inst.MemBytes > 0 {
		return b.d.Inst.MemBytes
	}
	return b.d.Inst.DataSize / 8
}

// read returns the value of l (its low l.size bytes meaningful).
func (b *builder) read(l loc) gvinst.Reg {
	switch l.kind {
	case locReg:
		return b.readGPR(l.reg)
	case locMem:
		return b.ld(uintType(l.size), l.mem)
	}
	return b.li(uintType(l.size), l.imm)
}

// write stores v (its low l.size bytes) to l.
func (b *builder) write(l loc, v gvinst.Reg) {
	switch l.kind {
	case locReg:
		b.writeGPR(l.reg, v)
	case locMem:
		b.st(uintType(l.size), l.mem, v)
	default:
		panic("lift: write to an immediate operand")
	}
}

// operands2 resolves the two operands of a binary integer instruction.
func (b *builder) operands2() (dst, src loc, err error) {
	args := b.d.Inst.Args
	if args[0] == nil || args[1] == nil {
		return loc{}, loc{}, unsupported("expected two operands")
	}
	size := b.opSize(args[0])
	if dst, err = b.resolve(args[0], size); err != nil {
		return
	}
	if dst.kind == locImm {
		return loc{}, loc{}, unsupported("immediate destination")
	}
	src, err = b.resolve(args[1], size)
	return
}
