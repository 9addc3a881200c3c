package gvinst

import "slices"

// Inst is one GVInst instruction. Which fields are meaningful is given by
// the op's OpInfo: the operands fill Dst, Src (in order), Imm and Target (in
// order); Mod holds the op's modifier (a Cmp, Cond, Rounding, FlagKind or
// TrapKind as the op's ModKind says).
type Inst struct {
	Op      Op
	Type    Type
	SrcType Type // the source type of CVT, VCVT and VEXT
	Mod     uint8
	HasImm  bool // the OpdSrcImm operand is Imm rather than a register
	Dst     Reg
	Src     [4]Reg
	Imm     int64
	Target  [2]uint64
	// X86 is the address of the guest instruction this one was lifted from.
	X86 uint64
}

// GuestInst records one x86 instruction covered by a VBlock.
type GuestInst struct {
	Addr uint64
	Text string // disassembly, Intel syntax
}

// VBlock is a virtual basic block: the GVInst of the guest instructions from
// a jump target to the next control transfer. Its last instruction is the
// only one that ends the block.
type VBlock struct {
	Addr  uint64 // guest address of the first instruction
	End   uint64 // guest address after the last instruction
	Insts []Inst
	Guest []GuestInst // the x86 instructions, in order
	// FlagsDeadAtExit says that no successor of the block reads the x86
	// status flags before setting them, so the flags the block leaves need
	// not be computed (the lifter sets it when it knows; the flags pass
	// then deletes the block's last FLAGS too).
	FlagsDeadAtExit bool
	// Split says that the block ends at End with a jump the x86 code does
	// not have: the lifter stopped there (a block too long, or an
	// instruction it cannot fetch yet) and the guest runs on into the
	// instruction at End, which starts the next block.
	Split bool
}

// SplitAt ends b before its guest instruction at addr with a jump there,
// so that the code at addr starts a block of its own (a loop latch that
// falls through into the loop header, say, then ends at the header like
// any back edge). It reports whether it cut: not when addr is not the
// start of one of b's guest instructions after the first. The block's
// flags are then live at its new exit, and Split is set.
func (b *VBlock) SplitAt(addr uint64) bool {
	if addr <= b.Addr || addr >= b.End {
		return false
	}
	cut := -1
	for i := range b.Insts {
		if b.Insts[i].X86 == addr {
			cut = i
			break
		}
	}
	if cut == 0 && len(b.Guest) > 1 && b.Guest[0].Addr == b.Addr && slices.ContainsFunc(b.Guest[1:], func(g GuestInst) bool { return g.Addr == addr }) {
		// The guest instructions before addr lifted to nothing (nops):
		// the block is just the jump.
		b.Insts = append(b.Insts[:0:0], Inst{Op: OpJmp, Target: [2]uint64{addr}, X86: b.Addr})
		b.Guest = b.Guest[:slices.IndexFunc(b.Guest, func(g GuestInst) bool { return g.Addr == addr })]
		b.End, b.FlagsDeadAtExit, b.Split = addr, false, true
		return true
	}
	if cut <= 0 {
		return false
	}
	x86 := b.Insts[cut-1].X86
	b.Insts = append(b.Insts[:cut:cut], Inst{Op: OpJmp, Target: [2]uint64{addr}, X86: x86})
	for i, g := range b.Guest {
		if g.Addr >= addr {
			b.Guest = b.Guest[:i]
			break
		}
	}
	b.End = addr
	b.FlagsDeadAtExit = false
	b.Split = true
	return true
}

// NumVRegs is one more than the highest virtual register any instruction of
// b uses (counting both slots of a pair), i.e. the number of virtual slots an
// interpreter frame needs.
func (b *VBlock) NumVRegs() int {
	n := 0
	see := func(r Reg, t Type) {
		if r.IsVirtual() {
			if k := r.VIndex() + t.Slots(); k > n {
				n = k
			}
		}
	}
	for i := range b.Insts {
		in := &b.Insts[i]
		info := in.Op.Info()
		si := 0
		for _, k := range info.Operands {
			switch k {
			case OpdDst:
				see(in.Dst, in.DstType())
			case OpdSrc, OpdMem:
				see(in.Src[si], in.srcType(si))
				si++
			case OpdSrcImm:
				if !in.HasImm {
					see(in.Src[si], in.Type)
				}
				si++
			}
		}
	}
	return n
}

// srcType is the type a source operand is read with: SrcType for the
// converting ops, u64 for addresses and conditions, the op's type otherwise.
func (in *Inst) srcType(i int) Type {
	info := in.Op.Info()
	switch {
	case info.SrcType != TNone && info.Types != TVec:
		return in.SrcType
	case in.Op == OpLd || in.Op == OpSt && i == 0 || in.Op == OpProbe || in.Op == OpChkAlign:
		return U64
	case in.Op == OpSelect && i == 0, in.Op == OpBranch, in.Op == OpJmpR, in.Op == OpCallR, in.Op == OpRet, in.Op == OpSetFlags:
		return U64
	case in.Op == OpFxsave || in.Op == OpFxrstor || in.Op == OpFnstenv || in.Op == OpFldenv:
		return U64
	case (in.Op == OpVShl || in.Op == OpVShr || in.Op == OpVSar) && i == 1:
		return U64
	case in.Op == OpVInsert && i == 1:
		return U64
	case in.Op == OpDivW && i < 2 || in.Op == OpRemW && i < 2:
		return in.Type
	case in.Op == OpJoin:
		return U64
	}
	if info.Types == TVec {
		return B128
	}
	return in.Type
}

// Successors returns the guest addresses control may go to after b, when
// they are known statically: none for an indirect jump or a return.
func (b *VBlock) Successors() []uint64 {
	if len(b.Insts) == 0 {
		return nil
	}
	last := &b.Insts[len(b.Insts)-1]
	switch last.Op {
	case OpJmp, OpSyscall:
		return []uint64{last.Target[0]}
	case OpBranch, OpCall:
		return []uint64{last.Target[0], last.Target[1]}
	case OpCallR:
		return []uint64{last.Target[0]}
	}
	return nil
}

// DstType is the type of the value an instruction writes to Dst: U64 for
// the 0/1 results of CMP and GETCC and the other integer-valued reads, B128
// for packed ops, the op's type otherwise.
func (in *Inst) DstType() Type {
	switch in.Op {
	case OpCmp, OpGetCC, OpGetFlags, OpRdtsc, OpFClass, OpFCmp, OpFXam:
		return U64
	case OpVExtract:
		return in.Type
	case OpVMovMsk:
		return U32
	}
	if in.Op.Info().Types == TVec {
		return B128
	}
	return in.Type
}

// SrcTypeOf is the type source operand i (an index into Src) is read with.
func (in *Inst) SrcTypeOf(i int) Type { return in.srcType(i) }

// SlotHolding returns the guest slot whose value register r holds at
// instruction at of b: r was read from the slot by a GET, or written to
// it by a PUT, and neither r nor the slot is written again before at.
func (b *VBlock) SlotHolding(at int, r Reg) (Reg, bool) {
	for k := at - 1; k >= 0; k-- {
		in := &b.Insts[k]
		var slot Reg
		switch {
		case in.Op == OpPut && in.Src[0] == r:
			slot = in.Dst
		case in.Op == OpGet && in.Dst == r:
			slot = in.Src[0]
		case writesReg(in, r):
			return 0, false
		default:
			continue
		}
		for j := k + 1; j < at; j++ {
			if writesReg(&b.Insts[j], slot) {
				return 0, false
			}
		}
		return slot, true
	}
	return 0, false
}

// SrcRegs returns the registers in reads as operands, an address's base
// included, in operand order.
func (in *Inst) SrcRegs() []Reg {
	var rs []Reg
	for _, i := range srcIndexes(in) {
		rs = append(rs, in.Src[i])
	}
	return rs
}
