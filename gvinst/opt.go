package gvinst

import (
	"fmt"
	"slices"
)

// Pass is an optimization pass over one VBlock: it rewrites the block in
// place and leaves it valid (Verify accepts it) with the same effect on the
// guest, except that guest state at a trap inside the block may already
// hold values the block computes later (gxbit reports faults; it does not
// deliver signals to guest handlers, which could observe the difference).
type Pass struct {
	Name string
	Run  func(b *VBlock)
}

// passTable lists the passes in the order Optimize runs them.
var passTable = [...]Pass{
	{"flags", FlagsPass},
	{"flagbits", FlagBitsPass},
	{"state", StateForwardPass},
	{"loads", LoadForwardPass},
	{"constfold", ConstFoldPass},
	{"dce", DeadCodePass},
}

// Passes returns the optimization passes in the order Optimize runs them.
func Passes() []Pass { return append([]Pass(nil), passTable[:]...) }

// Optimize runs every pass on b, then verifies it.
func Optimize(b *VBlock) error {
	for _, p := range passTable {
		p.Run(b)
	}
	if err := Verify(b); err != nil {
		return fmt.Errorf("after optimization: %w", err)
	}
	return nil
}

// deleteMarked removes the instructions of b whose mark is set.
func deleteMarked(b *VBlock, dead []bool) {
	out := b.Insts[:0]
	for i := range b.Insts {
		if !dead[i] {
			out = append(out, b.Insts[i])
		}
	}
	b.Insts = out
}

// flagsFullKind reports whether FLAGS of kind k sets every status flag
// without reading the previous ones.
func flagsFullKind(k FlagKind) bool {
	switch k {
	case FlagsAdd, FlagsSub, FlagsAdc, FlagsSbb, FlagsLogic, FlagsNeg, FlagsMul:
		return true
	}
	return false
}

// FlagsPass removes flag computations nobody reads. First, a GETCC whose
// flags come from a FLAGS of the same block with operands still unchanged
// becomes an equivalent CMP on those operands (FLAGS.sub.s64 a, b, …; GETCC.l
// is CMP.lt.s64 a, b), or an LI when the condition is constant (GETCC.b
// after FLAGS.logic is 0). Then a FLAGS whose flags are overwritten before
// anything reads them is deleted; so is the block's last one when the
// lifter marked the flags dead at the block's exit (VBlock.FlagsDeadAtExit).
func FlagsPass(b *VBlock) {
	last := -1
	for j := range b.Insts {
		in := &b.Insts[j]
		if in.Op == OpGetCC && last >= 0 {
			if rep, ok := getccAsCmp(&b.Insts[last], in); ok {
				b.Insts[j] = rep
				continue
			}
		}
		switch {
		case in.Op == OpFlags:
			last = j
		case last < 0:
		default:
			_, wr := implicitSlots(in)
			fl := &b.Insts[last]
			if wr.has(CCOp) || writesReg(in, fl.Src[0]) || writesReg(in, fl.Src[1]) || writesReg(in, fl.Src[2]) {
				last = -1
			}
		}
	}
	live := !b.FlagsDeadAtExit
	dead := make([]bool, len(b.Insts))
	for i := len(b.Insts) - 1; i >= 0; i-- {
		in := &b.Insts[i]
		switch {
		case in.Op == OpFlags:
			if !live {
				dead[i] = true
				continue
			}
			live = !flagsFullKind(FlagKind(in.Mod))
		case in.Op == OpSetFlags:
			live = false
		default:
			if rd, _ := implicitSlots(in); rd.has(CCOp) {
				live = true
			}
		}
	}
	deleteMarked(b, dead)
}

// getccAsCmp returns the CMP or LI equivalent to GETCC g right after FLAGS
// fl, if there is one.
func getccAsCmp(fl, g *Inst) (Inst, bool) {
	t := fl.Type
	u, s := t.WithSign(false), t.WithSign(true)
	a, b, r := fl.Src[0], fl.Src[1], fl.Src[2]
	cmp := func(c Cmp, ty Type, x, y Reg) (Inst, bool) {
		return Inst{Op: OpCmp, Type: ty, Mod: uint8(c), Dst: g.Dst, Src: [4]Reg{x, y}, X86: g.X86}, true
	}
	zero := func(c Cmp, ty Type) (Inst, bool) {
		return Inst{Op: OpCmp, Type: ty, Mod: uint8(c), Dst: g.Dst, Src: [4]Reg{r}, HasImm: true, Imm: 0, X86: g.X86}, true
	}
	li := func(v int64) (Inst, bool) {
		return Inst{Op: OpLi, Type: U64, Dst: g.Dst, Imm: v, X86: g.X86}, true
	}
	c := Cond(g.Mod)
	switch FlagKind(fl.Mod) {
	case FlagsSub:
		switch c {
		case CondE:
			return cmp(CmpEq, u, a, b)
		case CondNE:
			return cmp(CmpNe, u, a, b)
		case CondB:
			return cmp(CmpLt, u, a, b)
		case CondAE:
			return cmp(CmpGe, u, a, b)
		case CondBE:
			return cmp(CmpLe, u, a, b)
		case CondA:
			return cmp(CmpGt, u, a, b)
		case CondL:
			return cmp(CmpLt, s, a, b)
		case CondGE:
			return cmp(CmpGe, s, a, b)
		case CondLE:
			return cmp(CmpLe, s, a, b)
		case CondG:
			return cmp(CmpGt, s, a, b)
		case CondS:
			return zero(CmpLt, s)
		case CondNS:
			return zero(CmpGe, s)
		}
	case FlagsLogic:
		switch c {
		case CondE, CondBE:
			return zero(CmpEq, u)
		case CondNE, CondA:
			return zero(CmpNe, u)
		case CondS, CondL:
			return zero(CmpLt, s)
		case CondNS, CondGE:
			return zero(CmpGe, s)
		case CondLE:
			return zero(CmpLe, s)
		case CondG:
			return zero(CmpGt, s)
		case CondB, CondO:
			return li(0)
		case CondAE, CondNO:
			return li(1)
		}
	case FlagsAdd:
		switch c {
		case CondE:
			return zero(CmpEq, u)
		case CondNE:
			return zero(CmpNe, u)
		case CondS:
			return zero(CmpLt, s)
		case CondNS:
			return zero(CmpGe, s)
		case CondB:
			return cmp(CmpLt, u, r, a)
		case CondAE:
			return cmp(CmpGe, u, r, a)
		}
	case FlagsInc, FlagsDec, FlagsNeg, FlagsAdc, FlagsSbb:
		if FlagKind(fl.Mod) == FlagsNeg {
			// neg's CF is a != 0 (sbb reg, reg after neg: a bool to a mask).
			aZero := func(c Cmp) (Inst, bool) {
				return Inst{Op: OpCmp, Type: u, Mod: uint8(c), Dst: g.Dst, Src: [4]Reg{a}, HasImm: true, Imm: 0, X86: g.X86}, true
			}
			switch c {
			case CondB:
				return aZero(CmpNe)
			case CondAE:
				return aZero(CmpEq)
			}
		}
		switch c {
		case CondE:
			return zero(CmpEq, u)
		case CondNE:
			return zero(CmpNe, u)
		case CondS:
			return zero(CmpLt, s)
		case CondNS:
			return zero(CmpGe, s)
		}
	}
	return Inst{}, false
}

// knownVal is a register that holds the current value of a guest slot.
type knownVal struct {
	reg Reg
	typ Type
}

// StateForwardPass forwards guest state through the block: a GET of a slot
// after a PUT of it becomes a MOV from the PUT's source (an AND when the GET
// reads a narrower integer), a repeated GET of an unchanged slot becomes a
// MOV from the first, and a PUT overwritten by a later PUT of the same slot
// with nothing reading the slot in between is deleted.
func StateForwardPass(b *VBlock) {
	var known knownSlots
	for j := range b.Insts {
		in := &b.Insts[j]
		if in.Op == OpGet {
			g := in.Src[0]
			if k, ok := known.get(g); ok {
				switch {
				case k.typ == in.Type || k.typ.Size() == 8 && in.Type.Size() == 8 && !in.Type.IsWide() && !k.typ.IsWide():
					*in = Inst{Op: OpMov, Type: in.Type, Dst: in.Dst, Src: [4]Reg{k.reg}, X86: in.X86}
				case k.typ == B128 && in.Type.Size() == 8 && !in.Type.IsWide():
					// The low half of an SSE register written whole.
					*in = Inst{Op: OpMov, Type: in.Type, Dst: in.Dst, Src: [4]Reg{k.reg}, X86: in.X86}
				case k.typ.Size() == 8 && !k.typ.IsWide() && in.Type.IsInt() && in.Type.Size() < 8:
					*in = Inst{Op: OpAnd, Type: in.Type, Dst: in.Dst, Src: [4]Reg{k.reg}, HasImm: true, Imm: CanonImm(in.Type, -1), X86: in.X86}
				}
			}
		}
		// Forget what this instruction overwrites: guest slots, and the
		// registers holding known values.
		if len(known) > 0 {
			_, wr := implicitSlots(in)
			writesState := wr != slotSet{} // most instructions write none
			d, hasDst := destReg(in)
			known = slices.DeleteFunc(known, func(k knownSlot) bool {
				g, n := k.slot, Reg(k.typ.Slots())
				for s := Reg(0); writesState && s < n; s++ {
					if wr.has(g + s) {
						return true
					}
				}
				return hasDst && (overlaps(d.r, Reg(d.n), g, n) || overlaps(d.r, Reg(d.n), k.reg, n))
			})
		}
		switch in.Op {
		case OpPut:
			if in.Type.Size() == 8 || in.Type.IsWide() {
				known.set(in.Dst, knownVal{in.Src[0], in.Type})
			}
		case OpGet:
			if (in.Type.Size() == 8 || in.Type.IsWide()) && in.Dst != in.Src[0] {
				if _, ok := known.get(in.Src[0]); !ok {
					known.set(in.Src[0], knownVal{in.Dst, in.Type})
				}
			}
		}
	}

	// Dead PUTs, backward: killed holds the slots written later with no
	// read in between.
	var killed slotSet
	dead := make([]bool, len(b.Insts))
	for i := len(b.Insts) - 1; i >= 0; i-- {
		in := &b.Insts[i]
		rd, wr := implicitSlots(in)
		if in.Op == OpPut {
			var w slotSet
			w.add(in.Dst, putSlots(in))
			if w[0]&^killed[0] == 0 && w[1]&^killed[1] == 0 {
				dead[i] = true
				continue
			}
			killed[0] |= w[0]
			killed[1] |= w[1]
		}
		killed[0] |= wr[0]
		killed[1] |= wr[1]
		var buf [4]regUse
		for _, u := range sourceRegs(buf[:0], in) {
			rd.add(u.r, u.n)
		}
		killed[0] &^= rd[0]
		killed[1] &^= rd[1]
	}
	deleteMarked(b, dead)
}

// knownSlots maps guest slots to the registers holding their current
// values (StateForwardPass): a list, which every instruction walks to
// forget what it overwrites; a block keeps a few dozen at most. It was a
// map, whose iteration at every instruction was a third of Optimize's
// time on the blocks of a profiling run.
type knownSlots []knownSlot

// knownSlot is an entry of knownSlots: register reg holds slot's value.
type knownSlot struct {
	slot Reg
	knownVal
}

// get returns the value known for slot g, if there is one.
func (ks knownSlots) get(g Reg) (knownVal, bool) {
	for _, k := range ks {
		if k.slot == g {
			return k.knownVal, true
		}
	}
	return knownVal{}, false
}

// set makes v the value known for slot g.
func (ks *knownSlots) set(g Reg, v knownVal) {
	for i := range *ks {
		if (*ks)[i].slot == g {
			(*ks)[i].knownVal = v
			return
		}
	}
	*ks = append(*ks, knownSlot{g, v})
}

// overlaps reports whether slot ranges [a, a+an) and [b, b+bn) overlap.
func overlaps(a, an, b, bn Reg) bool { return a < b+bn && b < a+an }

// putSlots is the number of guest slots PUT in writes.
func putSlots(in *Inst) int { return in.Type.Slots() }

// ConstFoldPass folds constants: an LI whose value is then used as the
// immediate-capable operand of an integer op becomes that op's immediate
// (for commutative integer ops, an LI in the first operand is swapped into
// the second first).
func ConstFoldPass(b *VBlock) {
	var consts vregTable[uint64] // the virtual registers an LI set, and their values
	value := func(r Reg) (uint64, bool) {
		if !r.IsVirtual() {
			return 0, false
		}
		return consts.get(r)
	}
	for j := range b.Insts {
		in := &b.Insts[j]
		info := in.Op.Info()
		if len(info.Operands) == 3 && info.Operands[2] == OpdSrcImm && !in.HasImm && in.Type.IsInt() && !isVecOp(in.Op) {
			_, ok1 := value(in.Src[1])
			if _, ok0 := value(in.Src[0]); ok0 && !ok1 && commutative(in.Op) {
				in.Src[0], in.Src[1] = in.Src[1], in.Src[0]
			}
			if v, ok := value(in.Src[1]); ok {
				in.HasImm, in.Imm, in.Src[1] = true, CanonImm(in.Type, int64(v)), 0
			}
		}
		if d, ok := destReg(in); ok {
			for s := 0; s < d.n; s++ {
				if r := d.r + Reg(s); r.IsVirtual() {
					consts.remove(r)
				}
			}
			if in.Op == OpLi && !in.Type.IsWide() && d.r.IsVirtual() {
				consts.set(d.r, uint64(in.Imm)&in.Type.Mask())
			}
		}
	}
}

func commutative(op Op) bool {
	switch op {
	case OpAdd, OpMul, OpAnd, OpOr, OpXor, OpMin, OpMax, OpMulHi:
		return true
	}
	return false
}

// pure reports whether deleting in changes nothing but its destination.
func pure(in *Inst) bool {
	if usesX87Hook(in) || isSSEFloat(in) {
		return false // sets the x87 or MXCSR exception flags
	}
	eff := in.Op.Info().Effects
	return eff&^EffStateRead == 0 && in.Op != OpFlags && in.Op != OpPut
}

// DeadCodePass deletes pure instructions whose virtual destination is never
// read.
func DeadCodePass(b *VBlock) {
	var live vregTable[struct{}] // the virtual registers read later
	dead := make([]bool, len(b.Insts))
	for i := len(b.Insts) - 1; i >= 0; i-- {
		in := &b.Insts[i]
		if d, ok := destReg(in); ok && d.r.IsVirtual() {
			used := false
			for s := 0; s < d.n; s++ {
				if live.has(d.r + Reg(s)) {
					used = true
				}
			}
			if !used && pure(in) {
				dead[i] = true
				continue
			}
			for s := 0; s < d.n; s++ {
				live.remove(d.r + Reg(s))
			}
		}
		var buf [4]regUse
		for _, u := range sourceRegs(buf[:0], in) {
			for s := 0; s < u.n; s++ {
				if r := u.r + Reg(s); r.IsVirtual() {
					live.set(r, struct{}{})
				}
			}
		}
	}
	deleteMarked(b, dead)
}
