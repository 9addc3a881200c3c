package gvinst

import "fmt"

// LiveAt reports, per guest state slot, whether the code that starts at
// addr may read the slot before it writes it: a slot is dead (false) only
// where a scan of the code forward from addr, through direct jumps, both
// sides of conditional branches and into direct calls (back at their
// return addresses at the callee's RET), meets a write of it before any
// read on every path. Anything the scan cannot see through (an indirect
// jump or call, a return from where the scan began, a system call, a
// trap, code it cannot translate, more than liveAtBlocks blocks or
// liveAtCalls calls deep) leaves every slot not yet decided live.
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
	sc := &liveScan{t: t, live: &live, budget: liveAtBlocks, seen: map[string][]*[NumGuestSlots]bool{}}
	sc.from(addr, undecided, nil)
	return live
}

// liveAtBlocks bounds the blocks LiveAt translates.
const liveAtBlocks = 256

// liveScan is one LiveAt: the slots found live, the blocks it may still
// translate, and per block (and the return addresses of the calls the
// scan is inside) the sets of undecided slots it was scanned with.
type liveScan struct {
	t      Translator
	live   *[NumGuestSlots]bool
	budget int
	seen   map[string][]*[NumGuestSlots]bool
}

// from marks live every slot of undecided that the code from addr may
// read before writing it; rets are the return addresses of the calls the
// scan followed, innermost last (a RET goes on at the last).
func (sc *liveScan) from(addr uint64, undecided [NumGuestSlots]bool, rets []uint64) {
	rest := func() {
		for r, u := range undecided {
			if u {
				sc.live[r] = true
			}
		}
	}
	for {
		// A block scanned before with every slot undecided now
		// undecided then found every read this scan could: a loop's
		// second time round, a join.
		key := fmt.Sprint(addr, rets)
		covered := false
		for _, u := range sc.seen[key] {
			sub := true
			for r := range undecided {
				if undecided[r] && !u[r] {
					sub = false
					break
				}
			}
			if sub {
				covered = true
				break
			}
		}
		if covered {
			return
		}
		u := undecided
		sc.seen[key] = append(sc.seen[key], &u)
		if sc.budget <= 0 {
			rest()
			return
		}
		sc.budget--
		b, err := sc.t.Translate(addr)
		if err != nil || b == nil || len(b.Insts) == 0 {
			rest()
			return
		}
		var buf [4]regUse
		for i := range b.Insts {
			in := &b.Insts[i]
			read := func(r Reg) {
				if r < NumGuestSlots && undecided[r] {
					undecided[r], sc.live[r] = false, true
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
		switch {
		case last.Op == OpJmp:
			addr = last.Target[0]
		case last.Op == OpCall && len(rets) < liveAtCalls:
			rets = append(rets[:len(rets):len(rets)], last.Target[1])
			addr = last.Target[0]
		case last.Op == OpRet && len(rets) > 0:
			// Back at the call's return address (a callee that
			// returns elsewhere jumps there indirectly, or changes
			// its return address: neither is seen through).
			addr, rets = rets[len(rets)-1], rets[:len(rets)-1]
		case last.Op == OpBranch:
			sc.from(last.Target[1], undecided, rets)
			addr = last.Target[0]
		default:
			rest()
			return
		}
	}
}

// liveAtCalls bounds the calls LiveAt follows one inside another.
const liveAtCalls = 4
