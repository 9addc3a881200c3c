package jit

import (
	"fmt"

	"github.com/gxbit/gxbit/gvinst"
)

// Traces: a unit of several VBlocks along the path the guest took most.
//
// A block that ends in a BRANCH or a JMP is followed, while tiering ran it
// in the interpreter (whose edge profile, gvinst.Interpreter.Edges, says
// which way it went), by its successor on the hot side, and one that ends
// in a JMPR or a CALLR by the one target the interpreter saw it jump to
// every time (gvinst.Interpreter.Jumped: a PLT stub's jump through the
// GOT). A CALL is followed into the callee, and a RET back to the caller
// whose call the trace went through; a call whose return the trace does
// not reach ends it, so that the return stack (retstack.go) has its frame
// when the callee returns. The unit is the
// blocks' instructions in one list, each block's virtual registers
// renumbered past the previous ones', and every control transfer but the
// last stays where it was. In the code, a JMP inside a trace is nothing;
// a BRANCH inside it goes on along the trace and leaves by a side exit to
// its other target: the stores of the dirty guest slots (out of line, from
// the register state at the branch) and a successor exit that linking
// makes a direct jump, as at the end of any unit. A JMPR, CALLR or RET
// inside it compares its target with the one the trace goes on at; any
// other leaves through the jump cache, as a JMPR that ends a unit does; a
// CALL inside it is nothing, as a JMP. Along the trace, guest
// registers stay in host registers across the blocks' boundaries, and a
// trace that comes back to its first block is a loop unit (its back edge
// stays inside the unit, its registers pinned).
//
// Each block pays its own guest instructions from the fuel as it starts,
// so the count stays exact when a side exit leaves early; only the first
// block checks the fuel, as every unit entry does.
//
// RATIONALE: a wrong guess costs what a block's end costs anyway (the
// stores, a linked jump, the next unit's loads), so the trace follows the
// more frequent side even of a branch that is far from one-sided; it stops
// where the profile is too thin to say. A trace also stops at a block that
// has a unit of its own already: copying it into every trace that reaches
// it (a side exit's target starts a trace that joins the main path again)
// compiled python3's start-up twice over (30,000 blocks for 15,900
// units), which cost more than registers kept across that one edge saved
// (numeric.py 1: 2.58 s -> 2.07 s CPU, numeric.py 6: 5.04 s -> 4.52 s,
// with h11-mem2's memory work merged).

// maxTraceBlocks is the most VBlocks a trace joins.
const maxTraceBlocks = 8

// segment is one VBlock of a unit: where its instructions start in the
// unit's list, its guest range and instruction count, and, for every block
// but the last, the successor (0: a BRANCH's taken target, or where a JMP,
// CALL, JMPR, CALLR or RET goes; 1: a BRANCH's fall-through) the trace goes
// on to and its address.
type segment struct {
	first     int
	addr, end uint64
	nguest    uint64
	follow    int
	next      uint64
}

// traceUnit is what compileTrace compiles: the blocks' instructions in one
// VBlock (vb.Addr the first block's, vb.End the last's) and its segments.
type traceUnit struct {
	vb   *gvinst.VBlock
	segs []segment
}

// singleTrace is the unit of one block.
func singleTrace(vb *gvinst.VBlock) *traceUnit {
	return &traceUnit{vb: vb, segs: []segment{{first: 0, addr: vb.Addr, end: vb.End, nguest: guestCount(vb), follow: -1}}}
}

// segmentOf returns the index of the segment instruction idx belongs to.
func (t *traceUnit) segmentOf(idx int) int {
	s := 0
	for s+1 < len(t.segs) && t.segs[s+1].first <= idx {
		s++
	}
	return s
}

// charged is the number of guest instructions the unit has taken from the
// fuel when instruction idx runs: those of its segment and of the ones
// before.
func (t *traceUnit) charged(idx int) uint64 {
	n := uint64(0)
	for s := 0; s <= t.segmentOf(idx); s++ {
		n += t.segs[s].nguest
	}
	return n
}

// overlaps reports whether [addr, end) overlaps a block of the unit.
func (t *traceUnit) overlaps(addr, end uint64) bool {
	for _, s := range t.segs {
		if s.addr < end && s.end > addr || s.addr == s.end && s.addr >= addr && s.addr < end {
			return true
		}
	}
	return false
}

// hotSide returns the successor of block vb a trace follows (0 or 1) and
// its address, or false: a JMP's target, or the side of a BRANCH that the
// edge profile saw taken more often, at least minRuns times in all.
func hotSide(vb *gvinst.VBlock, edges [2]uint32, minRuns uint32) (int, uint64, bool) {
	last := &vb.Insts[len(vb.Insts)-1]
	switch last.Op {
	case gvinst.OpJmp:
		return 0, last.Target[0], true
	case gvinst.OpBranch:
		if last.Target[0] == last.Target[1] || edges[0]+edges[1] < minRuns || edges[0] == edges[1] {
			return 0, 0, false
		}
		if edges[0] > edges[1] {
			return 0, last.Target[0], true
		}
		return 1, last.Target[1], true
	}
	return 0, 0, false
}

// joinBlocks makes the unit of blocks, which follow one another along
// successors follow, at nexts (one per block but the last).
func joinBlocks(blocks []*gvinst.VBlock, follow []int, nexts []uint64) (*traceUnit, error) {
	n := 0
	for _, vb := range blocks {
		n += len(vb.Insts)
	}
	j := &gvinst.VBlock{Addr: blocks[0].Addr, End: blocks[len(blocks)-1].End, Insts: make([]gvinst.Inst, 0, n)}
	t := &traceUnit{vb: j}
	base := 0 // the virtual registers of the blocks before
	for b, vb := range blocks {
		if b > 0 {
			prev := &j.Insts[len(j.Insts)-1]
			computed := prev.Op == gvinst.OpJmpR || prev.Op == gvinst.OpCallR || prev.Op == gvinst.OpRet
			if nexts[b-1] != vb.Addr || !computed && prev.Target[follow[b-1]] != vb.Addr {
				return nil, fmt.Errorf("trace at %#x: block %#x does not follow %#x", j.Addr, vb.Addr, prev.X86)
			}
		}
		s := segment{first: len(j.Insts), addr: vb.Addr, end: vb.End, nguest: guestCount(vb), follow: -1}
		if b < len(follow) {
			s.follow, s.next = follow[b], nexts[b]
		}
		t.segs = append(t.segs, s)
		for i := range vb.Insts {
			in := vb.Insts[i]
			renumber(&in, base)
			j.Insts = append(j.Insts, in)
		}
		if len(vb.Guest) != 0 {
			j.Guest = append(j.Guest, vb.Guest...)
		}
		base += vb.NumVRegs()
	}
	if len(j.Guest) != 0 && len(j.Guest) != int(guestTotal(t)) {
		// Some block lacks its guest list: count from the instructions.
		j.Guest = nil
	}
	if n := int(gvinst.NumGuestSlots) + base; n+2 > gvinst.FrameSlots {
		return nil, fmt.Errorf("trace at %#x uses %d virtual registers, more than the frame holds", j.Addr, base)
	}
	return t, nil
}

// guestTotal is the guest instruction count of the whole unit.
func guestTotal(t *traceUnit) uint64 {
	n := uint64(0)
	for _, s := range t.segs {
		n += s.nguest
	}
	return n
}

// renumber adds base to the index of every virtual register instruction
// in names.
func renumber(in *gvinst.Inst, base int) {
	if base == 0 {
		return
	}
	shift := func(r *gvinst.Reg) {
		if r.IsVirtual() {
			*r += gvinst.Reg(base)
		}
	}
	si := 0
	for _, k := range in.Op.Info().Operands {
		switch k {
		case gvinst.OpdDst:
			shift(&in.Dst)
		case gvinst.OpdSrc, gvinst.OpdMem:
			shift(&in.Src[si])
			si++
		case gvinst.OpdSrcImm:
			if !in.HasImm {
				shift(&in.Src[si])
			}
			si++
		}
	}
}
