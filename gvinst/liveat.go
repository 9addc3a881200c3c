package gvinst

// LiveAt reports, per guest state slot, whether the code that starts at
// addr may read the slot before it writes it: a slot is dead (false) only
// where a scan of the code forward from addr, through direct jumps, both
// sides of conditional branches and into direct calls, meets a write of
// it before any read on every path. Anything the scan cannot see through
// (an indirect jump, call or return, a system call, a trap, code it
// cannot translate, more than liveAtBlocks blocks) leaves every slot not
// yet decided live.
//
// The lazy flags (CCOp, CCA, CCB, CCR, CCC) are written whole by a FLAGS
// of a kind that sets every arithmetic flag (add, sub, logic, …); a
// shift's or rotate's FLAGS, which a count of 0 makes keep them, and
// inc/dec's, which keep CF, read them. It is for phase 2, which takes
// a loop's exit state from a kernel that does not compute the flags:
// where they are dead at the loop's exit, nobody can tell.
func LiveAt(t Translator, addr uint64) (live [NumGuestSlots]bool) {
	var undecided [NumGuestSlots]bool
	for i := range undecided {
		undecided[i] = true
	}
	budget := liveAtBlocks
	liveFrom(t, addr, undecided, &live, &budget)
	return live
}

// liveAtBlocks bounds the blocks LiveAt translates.
const liveAtBlocks = 32

// liveFrom marks live every slot of undecided that the code from addr may
// read before writing it, spending budget blocks.
func liveFrom(t Translator, addr uint64, undecided [NumGuestSlots]bool, live *[NumGuestSlots]bool, budget *int) {
	rest := func() {
		for r, u := range undecided {
			if u {
				live[r] = true
			}
		}
	}
	for {
		if *budget <= 0 {
			rest()
			return
		}
		*budget--
		b, err := t.Translate(addr)
		if err != nil || b == nil || len(b.Insts) == 0 {
			rest()
			return
		}
		var buf [4]regUse
		for i := range b.Insts {
			in := &b.Insts[i]
			read := func(r Reg) {
				if r < NumGuestSlots && undecided[r] {
					undecided[r], live[r] = false, true
				}
			}
			for _, u := range sourceRegs(buf[:0], in) {
				for k := 0; k < u.n; k++ {
					read(u.r + Reg(k))
				}
			}
			rd, wr := implicitSlots(in)
			if in.Op == OpFlags {
				// Its implicit read is of a kept flag (shifts by 0,
				// rotates, inc and dec): a full kind reads none.
				rd, wr = slotSet{}, slotSet{}
				if !flagsFullKind(FlagKind(in.Mod)) {
					rd = ccSlots()
				}
				wr.add(CCOp, 5)
			}
			for r := Reg(0); r < NumGuestSlots; r++ {
				if rd.has(r) {
					read(r)
				}
			}
			if d, ok := destReg(in); ok {
				for k := 0; k < d.n; k++ {
					if r := d.r + Reg(k); r < NumGuestSlots {
						undecided[r] = false
					}
				}
			}
			for r := Reg(0); r < NumGuestSlots; r++ {
				if wr.has(r) {
					undecided[r] = false
				}
			}
		}
		last := &b.Insts[len(b.Insts)-1]
		switch last.Op {
		case OpJmp, OpCall:
			addr = last.Target[0]
		case OpBranch:
			liveFrom(t, last.Target[1], undecided, live, budget)
			addr = last.Target[0]
		default:
			rest()
			return
		}
	}
}
