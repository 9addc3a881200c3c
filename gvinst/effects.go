package gvinst

// slotSet is a set of guest state slots.
type slotSet [2]uint64

func (s *slotSet) add(r Reg, n int) {
	for i := 0; i < n; i++ {
		if g := r + Reg(i); g < NumGuestSlots {
			s[g/64] |= 1 << (g % 64)
		}
	}
}

func (s slotSet) has(r Reg) bool {
	return r < NumGuestSlots && s[r/64]&(1<<(r%64)) != 0
}

func allSlots() slotSet {
	var s slotSet
	s.add(0, int(NumGuestSlots))
	return s
}

func ccSlots() slotSet {
	var s slotSet
	s.add(CCOp, 5)
	s.add(RFLAGS, 1)
	return s
}

// implicitSlots returns the guest slots instruction in reads and writes
// without naming them as operands.
func implicitSlots(in *Inst) (reads, writes slotSet) {
	if usesX87Hook(in) {
		return allSlots(), allSlots()
	}
	if isSSEFloat(in) {
		// MXCSR's rounding, DAZ and FTZ in, its exception flags out.
		reads.add(MXCSR, 1)
		writes.add(MXCSR, 1)
	}
	switch in.Op {
	case OpFlags, OpSetFlags:
		return ccSlots(), ccSlots()
	case OpGetCC, OpGetFlags:
		return ccSlots(), slotSet{}
	case OpCpuid:
		reads.add(S0, 2)
		writes.add(S0, 4)
		return
	case OpRepMovs, OpRepStos, OpRepCmps, OpRepScas:
		reads = ccSlots()
		writes = ccSlots()
		for _, r := range []Reg{S0, S1, S6, S7} {
			reads.add(r, 1)
			writes.add(r, 1)
		}
		return
	case OpFxsave, OpFxrstor, OpFnstenv, OpFldenv, OpSyscall, OpTrap:
		return allSlots(), allSlots()
	case OpCvt, OpRound, OpVCvt, OpVRound:
		switch Rounding(in.Mod) {
		case RoundMXCSR:
			reads.add(MXCSR, 1)
		case RoundX87:
			reads.add(FPCW, 1)
		}
	}
	return
}

// regUse is one register operand: its first slot and how many it covers.
type regUse struct {
	r Reg
	n int
}

// sourceRegs appends the source registers of in (in operand order) to dst.
func sourceRegs(dst []regUse, in *Inst) []regUse {
	info := in.Op.Info()
	si := 0
	for _, k := range info.Operands {
		switch k {
		case OpdSrc, OpdMem:
			dst = append(dst, regUse{in.Src[si], in.srcType(si).Slots()})
			si++
		case OpdSrcImm:
			if !in.HasImm {
				dst = append(dst, regUse{in.Src[si], in.srcType(si).Slots()})
			}
			si++
		}
	}
	return dst
}

// destReg returns the destination register of in, if it has one.
func destReg(in *Inst) (regUse, bool) {
	for _, k := range in.Op.Info().Operands {
		if k == OpdDst {
			return regUse{in.Dst, in.DstType().Slots()}, true
		}
	}
	return regUse{}, false
}

// srcIndexes returns, for each source operand register of in, the index
// into in.Src, in operand order.
func srcIndexes(in *Inst) []int {
	info := in.Op.Info()
	var idx []int
	si := 0
	for _, k := range info.Operands {
		switch k {
		case OpdSrc, OpdMem:
			idx = append(idx, si)
			si++
		case OpdSrcImm:
			if !in.HasImm {
				idx = append(idx, si)
			}
			si++
		}
	}
	return idx
}

func (u regUse) covers(r Reg) bool { return r >= u.r && r < u.r+Reg(u.n) }

// readsReg reports whether in reads slot r, and whether some read of it is
// part of a multi-slot value.
func readsReg(in *Inst, r Reg) (reads, wide bool) {
	var buf [4]regUse
	for _, u := range sourceRegs(buf[:0], in) {
		if u.covers(r) {
			reads = true
			if u.n > 1 {
				wide = true
			}
		}
	}
	if !reads && r < NumGuestSlots {
		rd, _ := implicitSlots(in)
		reads = rd.has(r)
	}
	return
}

// writesReg reports whether in writes slot r (explicitly or implicitly).
func writesReg(in *Inst, r Reg) bool {
	if d, ok := destReg(in); ok && d.covers(r) {
		return true
	}
	if r < NumGuestSlots {
		_, wr := implicitSlots(in)
		return wr.has(r)
	}
	return false
}
