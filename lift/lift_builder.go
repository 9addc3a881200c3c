package lift

import (
	"math/bits"

	"github.com/gxbit/gxbit/gvinst"
	"golang.org/x/arch/x86/x86asm"
)

// builder accumulates the GVInst of one VBlock.
type builder struct {
	blk      *gvinst.VBlock
	d        *Decoded           // the instruction being lifted
	x86      uint64             // its address (Inst.X86 of what is emitted)
	nv       int                // next free virtual register index
	ended    bool               // the block has its control transfer
	endsHere bool               // the current instruction ended the block
	mark     int                // len(blk.Insts) when the current instruction began
	markNV   int                // nv then
	width    map[gvinst.Reg]int // bits above which a virtual register is known to be zero
	// cache maps a general register or segment base slot to a virtual
	// register that holds its current 64-bit value, so a block reads each
	// guest register once.
	cache map[gvinst.Reg]gvinst.Reg
	// xcache maps an xmm register's slot to a virtual pair that holds its
	// current 128-bit value.
	xcache map[gvinst.Reg]gvinst.Reg
}

func newBuilder(addr uint64) *builder {
	return &builder{
		blk:    &gvinst.VBlock{Addr: addr, End: addr},
		width:  make(map[gvinst.Reg]int),
		cache:  make(map[gvinst.Reg]gvinst.Reg),
		xcache: make(map[gvinst.Reg]gvinst.Reg),
	}
}

// begin starts lifting d.
func (b *builder) begin(d *Decoded) {
	b.d = d
	b.x86 = d.Addr
	b.mark = len(b.blk.Insts)
	b.markNV = b.nv
	b.endsHere = false
	b.blk.Guest = append(b.blk.Guest, gvinst.GuestInst{Addr: d.Addr, Text: d.Text})
	b.blk.End = d.Next()
}

// rollback discards what the current instruction emitted.
func (b *builder) rollback() {
	b.blk.Insts = b.blk.Insts[:b.mark]
	b.nv = b.markNV
	clear(b.cache)
	clear(b.xcache)
	b.endsHere = false
}

// next is the address after the current instruction.
func (b *builder) next() uint64 { return b.d.Next() }

// newV returns a fresh virtual register of slots slots.
func (b *builder) newV(slots int) gvinst.Reg {
	r := gvinst.VReg(b.nv)
	b.nv += slots
	return r
}

// emit appends in (with its X86 address set) and keeps the register cache
// consistent with the guest state it writes.
func (b *builder) emit(in gvinst.Inst) {
	in.X86 = b.x86
	info := in.Op.Info()
	switch {
	case in.Op == gvinst.OpPut:
		delete(b.cache, in.Dst)
		delete(b.xcache, in.Dst)
	case in.Op == gvinst.OpFlags || in.Op == gvinst.OpSetFlags:
	case info.Effects&(gvinst.EffStateWrite|gvinst.EffHost) != 0:
		clear(b.cache)
		clear(b.xcache)
	}
	b.blk.Insts = append(b.blk.Insts, in)
	if info.Effects&gvinst.EffEnd != 0 {
		b.ended = true
		b.endsHere = true
	}
}

// def emits an instruction of op and type t with sources srcs, writing a
// fresh register, and returns that register.
func (b *builder) def(op gvinst.Op, t gvinst.Type, srcs ...gvinst.Reg) gvinst.Reg {
	in := gvinst.Inst{Op: op, Type: t}
	copy(in.Src[:], srcs)
	in.Dst = b.newV(in.DstType().Slots())
	b.emit(in)
	b.setWidth(in.Dst, in.DstType())
	return in.Dst
}

func (b *builder) setWidth(r gvinst.Reg, t gvinst.Type) {
	if t.Bits() < 64 && !t.IsWide() {
		b.width[r] = t.Bits()
	}
}

// widthOf is the number of low bits of r that may be non-zero.
func (b *builder) widthOf(r gvinst.Reg) int {
	if w, ok := b.width[r]; ok {
		return w
	}
	return 64
}

// op emits d = op.t a, b.
func (b *builder) op(op gvinst.Op, t gvinst.Type, x, y gvinst.Reg) gvinst.Reg {
	r := b.def(op, t, x, y)
	switch op {
	case gvinst.OpAnd:
		b.narrow(r, min(b.widthOf(x), b.widthOf(y)))
	case gvinst.OpOr, gvinst.OpXor:
		b.narrow(r, max(b.widthOf(x), b.widthOf(y)))
	}
	return r
}

// narrow records that r has no bits at or above w.
func (b *builder) narrow(r gvinst.Reg, w int) {
	if w < b.widthOf(r) {
		b.width[r] = w
	}
}

// opi emits d = op.t a, imm.
func (b *builder) opi(op gvinst.Op, t gvinst.Type, x gvinst.Reg, imm int64) gvinst.Reg {
	in := gvinst.Inst{Op: op, Type: t, HasImm: true, Imm: gvinst.CanonImm(t, imm)}
	in.Src[0] = x
	in.Dst = b.newV(1)
	b.emit(in)
	b.setWidth(in.Dst, in.DstType())
	w := b.widthOf(x)
	switch op {
	case gvinst.OpAnd:
		if imm >= 0 {
			b.narrow(in.Dst, bits.Len64(uint64(imm)))
		}
	case gvinst.OpShr:
		if t.Bits() == 64 && imm < 64 && imm >= 0 {
			b.narrow(in.Dst, max(w-int(imm), 0))
		}
	case gvinst.OpShl:
		if imm >= 0 && imm < 64 {
			b.narrow(in.Dst, min(w+int(imm), 64))
		}
	case gvinst.OpOr, gvinst.OpXor:
		if imm >= 0 {
			b.narrow(in.Dst, max(w, bits.Len64(uint64(imm))))
		}
	}
	return in.Dst
}

// un emits d = op.t a.
func (b *builder) un(op gvinst.Op, t gvinst.Type, x gvinst.Reg) gvinst.Reg {
	return b.def(op, t, x)
}

// li emits d = LI.t imm.
func (b *builder) li(t gvinst.Type, imm int64) gvinst.Reg {
	in := gvinst.Inst{Op: gvinst.OpLi, Type: t, Imm: gvinst.CanonImm(t, imm), Dst: b.newV(t.Slots())}
	b.emit(in)
	if t.Bits() < 64 || uint64(imm)>>32 == 0 {
		w := t.Bits()
		if uint64(imm)>>32 == 0 && w > 32 {
			w = 32
		}
		b.width[in.Dst] = w
	}
	return in.Dst
}

// cvt emits d = CVT.r.t.s a.
func (b *builder) cvt(r gvinst.Rounding, t, s gvinst.Type, x gvinst.Reg) gvinst.Reg {
	in := gvinst.Inst{Op: gvinst.OpCvt, Type: t, SrcType: s, Mod: uint8(r), Dst: b.newV(1)}
	in.Src[0] = x
	b.emit(in)
	b.setWidth(in.Dst, t)
	if t.IsInt() && s.IsInt() && !s.IsSigned() && s.Bits() < t.Bits() {
		b.narrow(in.Dst, s.Bits())
	}
	return in.Dst
}

// zext returns x's low bits bits zero-extended to 64 bits.
func (b *builder) zext(x gvinst.Reg, bits int) gvinst.Reg {
	if bits >= 64 || b.widthOf(x) <= bits {
		return x
	}
	return b.cvt(gvinst.RoundNearest, gvinst.U64, uintType(bits/8), x)
}

// sext returns x's low bits bits sign-extended to 64 bits.
func (b *builder) sext(x gvinst.Reg, bits int) gvinst.Reg {
	if bits >= 64 {
		return x
	}
	return b.cvt(gvinst.RoundNearest, gvinst.S64, sintType(bits/8), x)
}

// get returns the 64-bit value of guest slot g (a general register or a
// segment base).
func (b *builder) get(g gvinst.Reg) gvinst.Reg {
	if v, ok := b.cache[g]; ok {
		return v
	}
	in := gvinst.Inst{Op: gvinst.OpGet, Type: gvinst.U64, Dst: b.newV(1)}
	in.Src[0] = g
	b.emit(in)
	b.cache[g] = in.Dst
	return in.Dst
}

// getT emits GET.t of a guest slot that is not cached (xN, mxcsr, …).
func (b *builder) getT(t gvinst.Type, g gvinst.Reg) gvinst.Reg {
	in := gvinst.Inst{Op: gvinst.OpGet, Type: t, Dst: b.newV(t.Slots())}
	in.Src[0] = g
	b.emit(in)
	return in.Dst
}

// put sets the 64-bit guest slot g to v.
func (b *builder) put(g gvinst.Reg, v gvinst.Reg) {
	b.putT(gvinst.U64, g, v)
	if g < gvinst.X0 || g == gvinst.FSBase || g == gvinst.GSBase {
		b.cache[g] = v
	}
}

// putT emits PUT.t g, v.
func (b *builder) putT(t gvinst.Type, g gvinst.Reg, v gvinst.Reg) {
	in := gvinst.Inst{Op: gvinst.OpPut, Type: t, Dst: g}
	in.Src[0] = v
	b.emit(in)
}

// ld emits d = LD.t base(disp).
func (b *builder) ld(t gvinst.Type, m memRef) gvinst.Reg {
	in := gvinst.Inst{Op: gvinst.OpLd, Type: t, Imm: m.disp, Dst: b.newV(t.Slots())}
	in.Src[0] = m.base
	b.emit(in)
	b.setWidth(in.Dst, t)
	return in.Dst
}

// st emits ST.t base(disp), v.
func (b *builder) st(t gvinst.Type, m memRef, v gvinst.Reg) {
	in := gvinst.Inst{Op: gvinst.OpSt, Type: t, Imm: m.disp}
	in.Src[0], in.Src[1] = m.base, v
	b.emit(in)
}

// flags emits FLAGS.k.t a, y, r, c.
func (b *builder) flags(k gvinst.FlagKind, t gvinst.Type, x, y, r, c gvinst.Reg) {
	in := gvinst.Inst{Op: gvinst.OpFlags, Type: t, Mod: uint8(k)}
	in.Src = [4]gvinst.Reg{x, y, r, c}
	b.emit(in)
}

// getcc emits d = GETCC.c.
func (b *builder) getcc(c gvinst.Cond) gvinst.Reg {
	in := gvinst.Inst{Op: gvinst.OpGetCC, Mod: uint8(c), Dst: b.newV(1)}
	b.emit(in)
	b.width[in.Dst] = 1
	return in.Dst
}

// getflags emits d = GETFLAGS.
func (b *builder) getflags() gvinst.Reg {
	in := gvinst.Inst{Op: gvinst.OpGetFlags, Dst: b.newV(1)}
	b.emit(in)
	return in.Dst
}

// setflags emits SETFLAGS v.
func (b *builder) setflags(v gvinst.Reg) {
	in := gvinst.Inst{Op: gvinst.OpSetFlags}
	in.Src[0] = v
	b.emit(in)
}

// cmp emits d = CMP.c.t a, y.
func (b *builder) cmp(c gvinst.Cmp, t gvinst.Type, x, y gvinst.Reg) gvinst.Reg {
	in := gvinst.Inst{Op: gvinst.OpCmp, Type: t, Mod: uint8(c), Dst: b.newV(1)}
	in.Src[0], in.Src[1] = x, y
	b.emit(in)
	b.width[in.Dst] = 1
	return in.Dst
}

// cmpi emits d = CMP.c.t a, imm.
func (b *builder) cmpi(c gvinst.Cmp, t gvinst.Type, x gvinst.Reg, imm int64) gvinst.Reg {
	in := gvinst.Inst{Op: gvinst.OpCmp, Type: t, Mod: uint8(c), HasImm: true, Imm: gvinst.CanonImm(t, imm), Dst: b.newV(1)}
	in.Src[0] = x
	b.emit(in)
	b.width[in.Dst] = 1
	return in.Dst
}

// sel emits d = SELECT.t c, x, y.
func (b *builder) sel(t gvinst.Type, c, x, y gvinst.Reg) gvinst.Reg {
	r := b.def(gvinst.OpSelect, t, c, x, y)
	if t.Bits() >= 64 && !t.IsWide() {
		if w := max(b.widthOf(x), b.widthOf(y)); w < 64 {
			b.width[r] = w
		}
	}
	return r
}

// trap ends the block with TRAP.k at the current address.
func (b *builder) trap(k gvinst.TrapKind) {
	b.emit(gvinst.Inst{Op: gvinst.OpTrap, Mod: uint8(k), Imm: int64(b.x86)})
}

// jmp ends the block with a jump to target.
func (b *builder) jmp(target uint64) {
	b.emit(gvinst.Inst{Op: gvinst.OpJmp, Target: [2]uint64{target}})
}

// setFlagBits replaces the flag bits in mask with those of bits (a value
// holding only bits of mask) in RFLAGS.
func (b *builder) setFlagBits(mask uint64, bits gvinst.Reg) {
	old := b.getflags()
	kept := b.opi(gvinst.OpAnd, gvinst.B64, old, int64(^mask))
	b.setflags(b.op(gvinst.OpOr, gvinst.B64, kept, bits))
}

// The RFLAGS bits.
const (
	flagCF = 1 << 0
	flagPF = 1 << 2
	flagAF = 1 << 4
	flagZF = 1 << 6
	flagSF = 1 << 7
	flagTF = 1 << 8
	flagIF = 1 << 9
	flagDF = 1 << 10
	flagOF = 1 << 11

	statusFlags = flagCF | flagPF | flagAF | flagZF | flagSF | flagOF
)

// bitAt returns the 0/1 value v (width 1) shifted to bit n.
func (b *builder) bitAt(v gvinst.Reg, n int) gvinst.Reg {
	if n == 0 {
		return v
	}
	return b.opi(gvinst.OpShl, gvinst.U64, v, int64(n))
}

// uintType is the unsigned integer type of size bytes.
func uintType(size int) gvinst.Type {
	switch size {
	case 1:
		return gvinst.U8
	case 2:
		return gvinst.U16
	case 4:
		return gvinst.U32
	}
	return gvinst.U64
}

// sintType is the signed integer type of size bytes.
func sintType(size int) gvinst.Type {
	switch size {
	case 1:
		return gvinst.S8
	case 2:
		return gvinst.S16
	case 4:
		return gvinst.S32
	}
	return gvinst.S64
}

// gpr describes an x86 general register operand.
type gpr struct {
	slot gvinst.Reg // the guest slot of the full register
	size int        // operand size in bytes
	high bool       // ah, ch, dh or bh
}

// gprOf maps an x86asm register to its guest slot.
func gprOf(r x86asm.Reg) (gpr, bool) {
	switch {
	case r >= x86asm.AL && r <= x86asm.BL:
		return gpr{slot: gvinst.Reg(r - x86asm.AL), size: 1}, true
	case r >= x86asm.AH && r <= x86asm.BH:
		return gpr{slot: gvinst.Reg(r - x86asm.AH), size: 1, high: true}, true
	case r >= x86asm.SPB && r <= x86asm.R15B:
		return gpr{slot: gvinst.Reg(r-x86asm.SPB) + 4, size: 1}, true
	case r >= x86asm.AX && r <= x86asm.R15W:
		return gpr{slot: gvinst.Reg(r - x86asm.AX), size: 2}, true
	case r >= x86asm.EAX && r <= x86asm.R15L:
		return gpr{slot: gvinst.Reg(r - x86asm.EAX), size: 4}, true
	case r >= x86asm.RAX && r <= x86asm.R15:
		return gpr{slot: gvinst.Reg(r - x86asm.RAX), size: 8}, true
	}
	return gpr{}, false
}

// xmmOf maps an x86asm XMM register (xmm0…xmm15) to its guest slot pair.
func xmmOf(r x86asm.Reg) (gvinst.Reg, bool) {
	if r >= x86asm.X0 && r <= x86asm.X15 {
		return gvinst.XReg(int(r - x86asm.X0)), true
	}
	return 0, false
}

// readGPR returns the value of register g; only its low g.size bytes are
// meaningful unless widthOf says more.
func (b *builder) readGPR(g gpr) gvinst.Reg {
	v := b.get(g.slot)
	if g.high {
		return b.opi(gvinst.OpShr, gvinst.U64, v, 8)
	}
	return v
}

// mergeGPR returns the 64-bit value register g's slot holds after x86
// writes v (its low g.size bytes) to it.
func (b *builder) mergeGPR(g gpr, v gvinst.Reg) gvinst.Reg {
	switch g.size {
	case 8:
		return v
	case 4:
		return b.zext(v, 32)
	}
	bits := g.size * 8
	mask := uint64(1)<<bits - 1
	nv := b.zext(v, bits)
	if g.high {
		nv = b.opi(gvinst.OpShl, gvinst.U64, nv, 8)
		mask <<= 8
	}
	old := b.get(g.slot)
	kept := b.opi(gvinst.OpAnd, gvinst.B64, old, int64(^mask))
	return b.op(gvinst.OpOr, gvinst.B64, kept, nv)
}

// writeGPR writes v to register g with x86's partial-register rules.
func (b *builder) writeGPR(g gpr, v gvinst.Reg) {
	b.put(g.slot, b.mergeGPR(g, v))
}
