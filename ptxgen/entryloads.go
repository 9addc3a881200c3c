package ptxgen

import (
	"fmt"

	"github.com/gxbit/gxbit/gvinst"
)

// Entry loads of a 2D kernel.
//
// Every thread of a plain 2D kernel runs the outer body from the level's
// header to the inner loop, then moves to its own inner iteration and
// reloads the registers the inner level carries from one iteration to
// the next (Nest.Reloads): gcc -O2 loads a stencil's first columns
// before the loop (conv2d's in[i-1][0], in[i][1], … into six xmm
// registers) and rotates them through the loop. A thread at inner
// iteration xi at or past the deepest of those reloads loads every one of
// them again from memory, so the outer body's loads into them are dead
// in that thread: only the first threads of each row (xi below the
// depth) use their values. Those loads, with their footprint checks, are
// skipped past that depth: six loads and six checks of the nine loads of
// a conv2d thread. The row's first threads still make them, and with them
// their checks (their addresses are the row's, whatever the thread), so
// no access goes unchecked; every row has a thread at xi = 0.

// entryLoads finds the outer body's loads that only set registers the
// inner level reloads (see above), keyed by block and index, and the
// depth from which a thread skips them (0 when there is none).
func (e *emitter) entryLoads() (map[[2]uint64]bool, int) {
	a := e.a
	if a.inner == nil || a.inner2 != nil || a.n.Interchange || a.n.ThreadLoop != 0 || a.n.Even {
		return nil, 0
	}
	rs := e.levelReloads(1)
	if len(rs) == 0 {
		return nil, 0
	}
	reloaded := map[gvinst.Reg]bool{}
	depth := 0
	for _, r := range rs {
		reloaded[r.Slot] = true
		depth = max(depth, r.Depth)
	}
	for _, r := range rs {
		for _, t := range r.Terms {
			if reloaded[t.Reg] {
				return nil, 0 // a reload's address reads a reloaded register
			}
		}
	}
	dead := map[[2]uint64]bool{}
	for _, addr := range a.order {
		b := a.n.Blocks[addr]
		if a.inner[addr] || len(b.Insts) == 0 {
			continue
		}
		last := &b.Insts[len(b.Insts)-1]
		if last.Op != gvinst.OpJmp || last.Target[0] != a.n.Inner {
			continue // the block must go on into the inner loop only
		}
		for i := range b.Insts {
			in := &b.Insts[i]
			if in.Op != gvinst.OpLd || in.Type.IsWide() {
				continue
			}
			slot, ok := in.Dst, true
			if slot.IsVirtual() {
				slot, ok = entrySlot(b.Insts[i+1:], in.Dst)
			}
			if ok && reloaded[slot] && !readsAny(b.Insts[i+1:], slot) {
				dead[[2]uint64{addr, uint64(i)}] = true
			}
		}
	}
	if len(dead) == 0 {
		return nil, 0
	}
	return dead, depth
}

// entrySlot follows the value a load wrote to virtual register v
// through insts: each step's only reader is either a JOIN that makes it
// the low half of a wide value (movss: the high lanes zero) or the PUT
// that ends the trace in a guest slot, which it returns.
func entrySlot(insts []gvinst.Inst, v gvinst.Reg) (gvinst.Reg, bool) {
	cur := v
	for i := range insts {
		in := &insts[i]
		if !readsReg(in, cur) {
			if hasDst(in) && in.Dst <= cur && cur < in.Dst+gvinst.Reg(in.DstType().Slots()) {
				return 0, false // written again before a PUT
			}
			continue
		}
		if readsAny(insts[i+1:], cur) {
			return 0, false
		}
		switch {
		case in.Op == gvinst.OpJoin && in.Src[0] == cur && in.Src[1] != cur && in.Dst.IsVirtual():
			cur = in.Dst
		case in.Op == gvinst.OpPut && in.Src[0] == cur && !in.Dst.IsVirtual():
			return in.Dst, true
		default:
			return 0, false
		}
	}
	return 0, false
}

// readsAny reports whether an instruction of insts reads register r.
func readsAny(insts []gvinst.Inst, r gvinst.Reg) bool {
	for i := range insts {
		if readsReg(&insts[i], r) {
			return true
		}
	}
	return false
}

// readsReg reports whether in reads register r: a source operand of a
// type that spans it (a wide value's second slot included), or a string
// op's implicit registers.
func readsReg(in *gvinst.Inst, r gvinst.Reg) bool {
	si := 0
	for _, k := range in.Op.Info().Operands {
		switch k {
		case gvinst.OpdSrc, gvinst.OpdMem, gvinst.OpdSrcImm:
			if k == gvinst.OpdSrcImm && in.HasImm {
				si++
				continue
			}
			if n := gvinst.Reg(in.SrcTypeOf(si).Slots()); in.Src[si] <= r && r < in.Src[si]+n {
				return true
			}
			si++
		}
	}
	rs, _ := stringRegs(in)
	for _, s := range rs {
		if s == r {
			return true
		}
	}
	return false
}

// skipEntryLoad opens the branch around an entry load (entryLoads) for
// threads at inner iterations depth and on, and returns the label that
// closes it.
func (e *emitter) skipEntryLoad(addr uint64, idx, depth int) string {
	l := fmt.Sprintf("$Lentry%x_%d", addr, idx)
	p := e.pred()
	e.comment(fmt.Sprintf(" a register the inner level reloads: threads at inner iteration %d and on load it again", depth))
	e.i("setp.ge.u64", p, e.mid(), depth)
	e.i("bra", l).when(p)
	return l
}
