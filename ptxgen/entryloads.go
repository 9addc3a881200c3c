package ptxgen

import (
	"fmt"

	"github.com/gxbit/gxbit/gvinst"
)

// Entry loads of 2D and 3D kernels.
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
// no access goes unchecked; every row has a thread at xi = 0. A 3D
// kernel's inner body does the same for the innermost level's reloads.

// entrySkip is how an entry load is skipped: in the threads whose
// iteration of the level (index, a thread register) is depth or more.
type entrySkip struct {
	index string
	depth int
}

// entryLoads finds the loads that only set registers the level they
// enter reloads (see above), keyed by block and index: in a 2D or 3D
// kernel, the outer body's loads into the inner level's reloaded
// registers; in a 3D kernel, the inner body's into the innermost level's.
func (e *emitter) entryLoads() map[[2]uint64]entrySkip {
	a := e.a
	if a.inner == nil || a.n.Interchange || a.n.ThreadLoop != 0 || a.n.Even {
		return nil
	}
	dead := map[[2]uint64]entrySkip{}
	// The outer body's blocks that enter the inner loop, and in a 3D
	// kernel the inner body's that enter the innermost one.
	e.findEntryLoads(dead, 1, a.n.Inner, e.mid(), func(b uint64) bool { return !a.inner[b] })
	if a.inner2 != nil {
		e.findEntryLoads(dead, 2, a.n.Inner2, "%xi", func(b uint64) bool { return a.inner[b] && !a.inner2[b] })
	}
	return dead
}

// findEntryLoads adds to dead the loads of the blocks from (their last
// instruction a jump to header) that set only registers the level's
// reloads load again from iteration depth on.
func (e *emitter) findEntryLoads(dead map[[2]uint64]entrySkip, level int, header uint64, index string, from func(uint64) bool) {
	a := e.a
	rs := e.levelReloads(level)
	if len(rs) == 0 {
		return
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
				return // a reload's address reads a reloaded register
			}
		}
	}
	for _, addr := range a.order {
		b := a.n.Blocks[addr]
		if !from(addr) || len(b.Insts) == 0 {
			continue
		}
		last := &b.Insts[len(b.Insts)-1]
		if last.Op != gvinst.OpJmp || last.Target[0] != header {
			continue // the block must go on into the loop only
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
				dead[[2]uint64{addr, uint64(i)}] = entrySkip{index, depth}
			}
		}
	}
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
// the threads that skip it, and returns the label that closes it.
func (e *emitter) skipEntryLoad(addr uint64, idx int, skip entrySkip) string {
	l := fmt.Sprintf("$Lentry%x_%d", addr, idx)
	p := e.pred()
	e.comment(fmt.Sprintf(" a register the level entered next reloads: threads at its iteration %d and on load it again", skip.depth))
	e.i("setp.ge.u64", p, skip.index, skip.depth)
	e.i("bra", l).when(p)
	return l
}
