package gvinst

import "fmt"

// Liveness is what LiveAt finds about the code at an address: per guest
// state slot, whether it may read any bit of the slot before writing it
// (Slot), and whether it may read bits 32 to 63 (High). Scalar
// single-precision code reads and writes the low 32 bits of an SSE
// register's low slot and keeps the rest (a merge: GET, AND with the
// high half's mask, OR, PUT back to the slot): that reads no high bits.
type Liveness struct {
	Slot, High [NumGuestSlots]bool
}

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
func LiveAt(t Translator, addr uint64) Liveness {
	// Bits 0-31 of slot r are bit r of the scan's sets, bits 32-63 bit
	// NumGuestSlots+r.
	var undecided [2 * NumGuestSlots]bool
	for i := range undecided {
		undecided[i] = true
	}
	var live [2 * NumGuestSlots]bool
	sc := &liveScan{t: t, live: &live, budget: liveAtBlocks, seen: map[string][]*[2 * NumGuestSlots]bool{}}
	sc.from(addr, undecided, nil)
	var l Liveness
	for r := range NumGuestSlots {
		l.High[r] = live[NumGuestSlots+r]
		l.Slot[r] = live[r] || l.High[r]
	}
	return l
}

// liveAtBlocks bounds the blocks LiveAt translates.
const liveAtBlocks = 256

// liveScan is one LiveAt: the slots found live, the blocks it may still
// translate, and per block (and the return addresses of the calls the
// scan is inside) the sets of undecided slots it was scanned with.
type liveScan struct {
	t      Translator
	live   *[2 * NumGuestSlots]bool
	budget int
	seen   map[string][]*[2 * NumGuestSlots]bool
}

// from marks live every slot of undecided that the code from addr may
// read before writing it; rets are the return addresses of the calls the
// scan followed, innermost last (a RET goes on at the last).
func (sc *liveScan) from(addr uint64, undecided [2 * NumGuestSlots]bool, rets []uint64) {
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
		merges, highUse := lowHalfOps(b)
		read := func(r Reg, high bool) {
			if r >= NumGuestSlots {
				return
			}
			for _, k := range []Reg{r, NumGuestSlots + r}[:1+btoi(high)] {
				if undecided[k] {
					undecided[k], sc.live[k] = false, true
				}
			}
		}
		write := func(r Reg, high bool) {
			if r < NumGuestSlots {
				undecided[r] = false
				if high {
					undecided[NumGuestSlots+r] = false
				}
			}
		}
		var buf [4]regUse
		for i := range b.Insts {
			in := &b.Insts[i]
			switch {
			case in.Op == OpGet && merges[i]:
				// Only its high bits, back into the same slot.
			case in.Op == OpGet:
				for k := 0; k < in.DstType().Slots(); k++ {
					read(in.Src[0]+Reg(k), in.Type.Size() > 4 && highUse[in.Dst] || k > 0)
				}
			default:
				for _, u := range sourceRegs(buf[:0], in) {
					for k := 0; k < u.n; k++ {
						read(u.r+Reg(k), true)
					}
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
					read(r, true)
				}
			}
			if d, ok := destReg(in); ok {
				for k := 0; k < d.n; k++ {
					// A merge writes the low half and keeps the rest.
					write(d.r+Reg(k), !(in.Op == OpPut && merges[i]))
				}
			}
			for r := Reg(0); r < NumGuestSlots; r++ {
				if wr.has(r) {
					write(r, true)
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

// lowHalfMask is the mask of the bits a scalar single-precision merge
// keeps: all but the low 32.
const lowHalfMask = 0xFFFFFFFF00000000

// lowHalfOps finds in b the merges of a 32-bit value into the low half
// of a slot (GET r, AND with lowHalfMask, OR, PUT r, each value read
// only by the next; by instruction index, the GET and the PUT), and the
// virtual registers some instruction reads bits 32 to 63 of (not one
// that reads its operand at 4 bytes or less).
func lowHalfOps(b *VBlock) (merges map[int]bool, highUse map[Reg]bool) {
	uses := map[Reg][]int{}
	highUse = map[Reg]bool{}
	for i := range b.Insts {
		in := &b.Insts[i]
		for _, si := range srcIndexes(in) {
			r := in.Src[si]
			uses[r] = append(uses[r], i)
			if in.SrcTypeOf(si).Size() > 4 {
				highUse[r] = true
			}
		}
	}
	only := func(r Reg) (int, bool) {
		if u := uses[r]; len(u) == 1 {
			return u[0], true
		}
		return 0, false
	}
	merges = map[int]bool{}
	for i := range b.Insts {
		get := &b.Insts[i]
		if get.Op != OpGet || !get.Dst.IsVirtual() {
			continue
		}
		a, ok := only(get.Dst)
		and := &b.Insts[a]
		if !ok || and.Op != OpAnd || !and.HasImm || uint64(and.Imm) != lowHalfMask {
			continue
		}
		o, ok := only(and.Dst)
		or := &b.Insts[o]
		if !ok || or.Op != OpOr || or.Type.Size() != 8 {
			continue
		}
		p, ok := only(or.Dst)
		put := &b.Insts[p]
		if !ok || put.Op != OpPut || put.Dst != get.Src[0] || put.Type.Size() != 8 {
			continue
		}
		merges[i], merges[p] = true, true
	}
	return merges, highUse
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
