package gvinst

// FlagBitsPass turns the reads of flags that a SETFLAGS of the same block
// wrote into plain integer tests of the value it wrote, and deletes a
// SETFLAGS nothing reads that changes only status flags.
//
// The lifter writes the flags of instructions whose flags no FLAGS kind
// describes as explicit bits: ucomisd/comiss build CF, PF and ZF from
// three compares and write them with SETFLAGS over GETFLAGS with the
// status bits masked out. A GETCC after it read the flags word, so
// anything reading a float compare's outcome (ja, cmova, setp) needed the
// whole flags state, the incoming flags included. After this pass:
//
//   - GETCC.c d after SETFLAGS v (no flags write between) becomes
//     AND t, v, bits(c); CMP.ne/eq d, t, 0 for the conditions that test
//     bits (not L, GE, LE, G, which compare SF with OF). Where v is
//     OR x, y with x = AND _, m and m clearing every bit c tests, the test
//     reads y alone: the masked flags word drops out.
//   - A SETFLAGS whose status flags a later flags write replaces before
//     anything reads them (or that the block leaves dead), and which
//     writes back the system bits it read (v = OR (AND GETFLAGS, m), y
//     with m keeping every bit but the status flags, y only status bits,
//     no flags write between), changes nothing and is deleted.
//
// DeadCodePass then removes the GETFLAGS chain no one reads.
func FlagBitsPass(b *VBlock) {
	ins := b.Insts
	// out is the new block from its first change on (most blocks have
	// none, and are not copied).
	var out []Inst
	fresh := 0 // the next free virtual register, once out is made
	last := -1 // index in ins of the block's last flags write, if a SETFLAGS
	changed := false
	for i := range ins {
		in := ins[i]
		if in.Op == OpGetCC && last >= 0 && !writtenBetween(ins, ins[last].Src[0], last, i) {
			if bits, whenClear, ok := condBits(Cond(in.Mod)); ok {
				if !changed {
					out = append(make([]Inst, 0, len(ins)+8), ins[:i]...)
					fresh = b.NumVRegs()
				}
				v := seeThroughMask(ins, ins[last].Src[0], last, i, bits)
				t := VReg(fresh)
				fresh++
				c := CmpNe
				if whenClear {
					c = CmpEq
				}
				out = append(out,
					Inst{Op: OpAnd, Type: U64, Dst: t, Src: [4]Reg{v}, HasImm: true, Imm: int64(bits), X86: in.X86},
					Inst{Op: OpCmp, Type: U64, Mod: uint8(c), Dst: in.Dst, Src: [4]Reg{t}, HasImm: true, X86: in.X86})
				changed = true
				continue
			}
		}
		if _, wr := implicitSlots(&in); wr.has(CCOp) || wr.has(RFLAGS) {
			last = -1
			if in.Op == OpSetFlags {
				last = i
			}
		}
		if changed {
			out = append(out, in)
		}
	}
	if changed {
		b.Insts = out
	}
	// Dead SETFLAGS, from the end: live says whether a later instruction
	// may read the status flags the current one leaves.
	live := !b.FlagsDeadAtExit
	var dead []bool // made at the first dead SETFLAGS
	for i := len(b.Insts) - 1; i >= 0; i-- {
		in := &b.Insts[i]
		switch {
		case in.Op == OpFlags:
			live = !flagsFullKind(FlagKind(in.Mod))
		case in.Op == OpSetFlags:
			if !live && writesStatusOnly(b.Insts, i) {
				if dead == nil {
					dead = make([]bool, len(b.Insts))
				}
				dead[i] = true
				continue
			}
			live = false
		default:
			if rd, _ := implicitSlots(in); rd.has(CCOp) || rd.has(RFLAGS) {
				live = true
			}
		}
	}
	if dead != nil {
		deleteMarked(b, dead)
	}
}

// condBits returns the status flags condition c tests and whether c holds
// when they are all clear, for the conditions that test bits only: the
// even ones (O, B, E, BE, S, P) hold when one is set, the odd ones (NO,
// AE, NE, A, NS, NP) when all are clear.
func condBits(c Cond) (bits uint64, whenClear bool, ok bool) {
	switch c &^ 1 {
	case CondO:
		bits = FlagOF
	case CondB:
		bits = FlagCF
	case CondE:
		bits = FlagZF
	case CondBE:
		bits = FlagCF | FlagZF
	case CondS:
		bits = FlagSF
	case CondP:
		bits = FlagPF
	default:
		return 0, false, false
	}
	return bits, c&1 != 0, true
}

// writtenBetween reports whether an instruction of ins strictly between
// from and to writes r.
func writtenBetween(ins []Inst, r Reg, from, to int) bool {
	for k := from + 1; k < to; k++ {
		if writesReg(&ins[k], r) {
			return true
		}
	}
	return false
}

// defBefore returns the index of the instruction of ins before at that
// last wrote r, or -1.
func defBefore(ins []Inst, r Reg, at int) int {
	for k := at - 1; k >= 0; k-- {
		if writesReg(&ins[k], r) {
			return k
		}
	}
	return -1
}

// orMaskSides splits the value v read at index at into OR x, y with x =
// AND w, m (either side), all 64-bit: it returns the OR's and the AND's
// indexes in ins, m, and y, and whether v has that shape with y not
// written again from the OR on to at.
func orMaskSides(ins []Inst, v Reg, at int) (orAt, andAt int, m uint64, y Reg, ok bool) {
	if !v.IsVirtual() {
		return 0, 0, 0, 0, false
	}
	d := defBefore(ins, v, at)
	if d < 0 || ins[d].Op != OpOr || ins[d].HasImm || ins[d].Type.Size() != 8 {
		return 0, 0, 0, 0, false
	}
	for side := 0; side < 2; side++ {
		x, y := ins[d].Src[side], ins[d].Src[1-side]
		if !x.IsVirtual() || !y.IsVirtual() || writtenBetween(ins, y, d-1, at) {
			continue
		}
		a := defBefore(ins, x, d)
		if a < 0 || ins[a].Op != OpAnd || !ins[a].HasImm || ins[a].Type.Size() != 8 {
			continue
		}
		return d, a, uint64(ins[a].Imm), y, true
	}
	return 0, 0, 0, 0, false
}

// seeThroughMask returns a register that holds, at index use, the bits in
// mask that v holds at index at: v itself, or, where v is OR (AND _, m), y
// with m clearing all of mask, y (and so on down y).
func seeThroughMask(ins []Inst, v Reg, at, use int, mask uint64) Reg {
	for {
		d, _, m, y, ok := orMaskSides(ins, v, at)
		if !ok || m&mask != 0 || writtenBetween(ins, y, at-1, use) {
			return v
		}
		v, at = y, d
	}
}

// writesStatusOnly reports whether SETFLAGS i of ins writes back the
// system bits of RFLAGS unchanged: its value is OR (AND g, m), y with g a
// GETFLAGS with no flags write between it and i, m keeping every bit but
// the status flags, and y holding status flags only.
func writesStatusOnly(ins []Inst, i int) bool {
	_, a, m, y, ok := orMaskSides(ins, ins[i].Src[0], i)
	if !ok || ^m&^uint64(FlagsArith) != 0 {
		return false
	}
	g := defBefore(ins, ins[a].Src[0], a)
	if g < 0 || ins[g].Op != OpGetFlags {
		return false
	}
	for k := g + 1; k < i; k++ {
		if _, wr := implicitSlots(&ins[k]); wr.has(CCOp) || wr.has(RFLAGS) {
			return false
		}
	}
	return possibleBits(ins, y, i, 8)&^uint64(FlagsArith) == 0
}

// possibleBits returns the bits that r may have set at index at: a CMP's
// 0 or 1, an immediate's bits, shifts and ORs of those; all ones where it
// cannot tell (depth bounds the walk).
func possibleBits(ins []Inst, r Reg, at, depth int) uint64 {
	if depth == 0 || !r.IsVirtual() {
		return ^uint64(0)
	}
	d := defBefore(ins, r, at)
	if d < 0 {
		return ^uint64(0)
	}
	in := &ins[d]
	src := func(k int) uint64 { return possibleBits(ins, in.Src[k], d, depth-1) }
	switch in.Op {
	case OpCmp:
		return 1
	case OpLi:
		return uint64(in.Imm)
	case OpShl:
		if in.HasImm && in.Imm >= 0 && in.Imm < 64 {
			return src(0) << uint(in.Imm)
		}
	case OpOr:
		if in.HasImm {
			return src(0) | uint64(in.Imm)
		}
		return src(0) | src(1)
	case OpAnd:
		if in.HasImm {
			return src(0) & uint64(in.Imm)
		}
		return src(0) & src(1)
	}
	return ^uint64(0)
}
