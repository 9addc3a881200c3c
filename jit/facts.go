package jit

import (
	"fmt"
	"slices"
	"sync"

	"github.com/gxbit/gxbit/gvinst"
)

// What compileTrace learns of a unit before it emits code: the slots each
// instruction names, which instructions read and write each slot, the
// copies it renames away (findAliases), the addresses it folds
// (findAddresses), its page groups, fused compares and low-lane merges.
// None of it depends on which SSE registers the unit keeps in xmm
// registers, so an attempt compiled again without one (xmmpin.go) uses it
// again.
//
// RATIONALE: slots are dense (guest state, then the block's virtual
// registers, then the page groups' pseudo registers, all below
// gvinst.FrameSlots), so the tables are slices indexed by slot or by
// instruction, built once from one list of the operands' slots (uses).
// They were maps, each analysis scanning the operands again through a
// callback and growing maps of its own, all of it again for the one unit
// in four that is compiled a second time without an xmm register; and
// each callout's materialize walked the alias and address maps and
// sorted what it found. Compiling heat3d's units under the profile
// collector (BenchmarkCompile/heat3d/profile) took 470 µs, 1,735
// allocations and 220 KB a unit, a third of the time in map assignment
// and growth and a sixth in materialize; with the slices, about 280 µs
// and 100 allocations (unitFactsPool takes it further). The slices give
// the same answers in the same order, so the code is the same byte for
// byte (TestCompiledCodeDump).

// unitFacts is what compileTrace knows of a unit before it emits code
// (see above); emitting code only reads it, but for its buffers.
type unitFacts struct {
	vb    *gvinst.VBlock
	trace *traceUnit
	// innerSeg is, per instruction, the segment of the trace it ends when
	// it is an inner control transfer, else -1.
	innerSeg []int
	// nSlots bounds the slots the tables cover: every slot an operand
	// names (a pair's second half included) and every page group's
	// pseudo register is below it.
	nSlots int
	// uses are the slots each instruction names through its operands, as
	// operandSlots lists them: instruction i's are uses[useAt[i]:useAt[i+1]].
	uses  []slotUse
	useAt []int32
	// writes lists, per slot, the instructions that write it through
	// their operands; stateWriters are those that may write guest state
	// beyond their operands.
	writes       slotLists
	stateWriters []int
	// lastRead is, per slot, the index of the last instruction that
	// reads it (-1: none); after that its register is free. Renaming,
	// folded addresses and page groups extend it to their last reads.
	lastRead []int
	// alias maps a virtual register that a GET or MOV copied from another
	// register, still unchanged while the copy is read, to that register:
	// the copy is never made (see findAliases).
	alias aliasTable
	// addr maps a virtual register that is only ever the base of loads
	// and stores, computed as base+index*scale, to those parts: the
	// access folds them into its address (see findAddresses); folded are
	// the instructions whose work they folded.
	addr   addrTable
	folded []bool
	// renamed are the slots alias or addr maps, in increasing order.
	renamed []gvinst.Reg
	// groups are the unit's page groups (pagegroup.go); groupOf gives,
	// per instruction, the group of a load or store in one (g -1: none).
	groups  []pageGroup
	groupOf []groupMember
	// fused marks the CMPs compiled into the jump of the BRANCH right
	// after them.
	fused []bool
	// reads lists, per slot, the instructions that read it in the code
	// (findReads), for choosing what to evict.
	reads slotLists
	// merges are, per instruction, the merge into a 64-bit value's low
	// lane that a .f32 operation's host instruction makes (a zero
	// lowMerge: none; compile_lowmerge.go); empty when the unit has none.
	merges []lowMerge
	// floatGuard is set when the unit's float arithmetic runs inline: its
	// entry checks machine.mxTrap once, and the arithmetic not at all.
	floatGuard bool

	// Buffers the analysis uses, and those an attempt at compiling the
	// unit builds in (compile); they serve the next attempt or unit
	// (unitFactsPool).
	pairs     []slotAt
	readers   slotLists
	allGroups []pageGroup
	groupNum  []int
	bufs      compileBuffers
}

// compileBuffers are the buffers an attempt at compiling a unit builds its
// code, marks, skipped instructions, slow paths and out-of-line emitters
// in (compiler's fields of those names).
type compileBuffers struct {
	code      []byte
	marks     []mark
	skip      []bool
	slowAt    []slowPath
	outOfLine []func()
}

// unitFactsPool keeps unitFacts between compiles, so that their tables and
// buffers, sized for the largest unit compiled lately, serve the next
// unit instead of being allocated again for every one: once the maps were
// gone, compiling was half allocation and garbage collection (heat3d's
// units under the profile collector: 91 KB and 100 allocations a unit;
// with the pool 27 KB, mostly the code and marks copied out, and 48
// allocations, and 110 µs a unit instead of 280).
var unitFactsPool = sync.Pool{New: func() any { return new(unitFacts) }}

// release gives f back to unitFactsPool; nothing may use it after.
func (f *unitFacts) release() {
	f.vb, f.trace = nil, nil
	clear(f.bufs.outOfLine[:cap(f.bufs.outOfLine)]) // closures over the last compiler
	unitFactsPool.Put(f)
}

// reuse returns s with n zero elements, in s's array when it has room.
func reuse[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// slotUse is a frame slot an instruction reads (dst false) or writes
// through one of its operands.
type slotUse struct {
	r   gvinst.Reg
	dst bool
}

// slotLists holds, per slot, a list of instruction indexes in increasing
// order, all in one array: slot r's are idx[start[r]:start[r+1]].
type slotLists struct {
	start []int32
	idx   []int
}

// of returns slot r's list.
func (l *slotLists) of(r gvinst.Reg) []int {
	if int(r)+1 >= len(l.start) {
		return nil
	}
	return l.idx[l.start[r]:l.start[r+1]]
}

// slotAt says instruction i names slot r.
type slotAt struct {
	r gvinst.Reg
	i int
}

// set makes l the lists of pairs, which come in instruction order, over
// slots below nSlots, in l's arrays when they have room.
func (l *slotLists) set(nSlots int, pairs []slotAt) {
	start := reuse(l.start, nSlots+1)
	for _, p := range pairs {
		start[p.r+1]++
	}
	for r := 1; r <= nSlots; r++ {
		start[r] += start[r-1]
	}
	// Fill with start[r] as slot r's cursor, which leaves it at slot
	// r+1's start; then move the starts back.
	idx := reuse(l.idx, len(pairs))
	for _, p := range pairs {
		idx[start[p.r]] = p.i
		start[p.r]++
	}
	copy(start[1:], start[:nSlots])
	start[0] = 0
	l.start, l.idx = start, idx
}

// addOnce appends (r, i) to pairs unless instruction i, whose pairs start
// at from, has it already.
func addOnce(pairs []slotAt, from int, r gvinst.Reg, i int) []slotAt {
	for _, p := range pairs[from:] {
		if p.r == r {
			return pairs
		}
	}
	return append(pairs, slotAt{r, i})
}

// aliasTable is alias (unitFacts), indexed by slot; an entry whose from is
// -1 is none.
type aliasTable []aliasOf

// get returns r's entry, if it has one.
func (t aliasTable) get(r gvinst.Reg) (aliasOf, bool) {
	if int(r) < len(t) && t[r].from >= 0 {
		return t[r], true
	}
	return aliasOf{}, false
}

// addrTable is addr (unitFacts), indexed by slot; an entry whose from is
// -1 is none.
type addrTable []addrOf

// get returns r's entry, if it has one.
func (t addrTable) get(r gvinst.Reg) (addrOf, bool) {
	if int(r) < len(t) && t[r].from >= 0 {
		return t[r], true
	}
	return addrOf{}, false
}

// usesOf returns the slots instruction i names (see unitFacts.uses).
func (f *unitFacts) usesOf(i int) []slotUse { return f.uses[f.useAt[i]:f.useAt[i+1]] }

// lastReadOf returns the index of the last instruction that reads slot r,
// or -1.
func (f *unitFacts) lastReadOf(r gvinst.Reg) int {
	if int(r) < len(f.lastRead) {
		return f.lastRead[r]
	}
	return -1
}

// memberOf returns the page group member load or store idx is, if it is
// one.
func (f *unitFacts) memberOf(idx int) (groupMember, bool) {
	if idx < len(f.groupOf) && f.groupOf[idx].g >= 0 {
		return f.groupOf[idx], true
	}
	return groupMember{}, false
}

// mergeOf returns the merge .f32 operation idx makes, if it makes one.
func (f *unitFacts) mergeOf(idx int) (lowMerge, bool) {
	if idx < len(f.merges) && f.merges[idx].or != 0 {
		return f.merges[idx], true
	}
	return lowMerge{}, false
}

// analyzeUnit checks that t's blocks end as a unit's must and learns what
// compileTrace needs to know of it (unitFacts).
func analyzeUnit(t *traceUnit) (*unitFacts, error) {
	vb := t.vb
	if len(vb.Insts) == 0 {
		return nil, fmt.Errorf("vblock %#x is empty", vb.Addr)
	}
	nVRegs := vb.NumVRegs()
	if n := int(gvinst.NumGuestSlots) + nVRegs; n+2 > gvinst.FrameSlots {
		return nil, fmt.Errorf("vblock %#x uses %d virtual registers, more than the frame holds", vb.Addr, nVRegs)
	}
	nInsts := len(vb.Insts)
	f := unitFactsPool.Get().(*unitFacts)
	f.vb, f.trace = vb, t
	// A trace's inner control transfers: the segment each ends.
	f.innerSeg = reuse(f.innerSeg, nInsts)
	for i := range f.innerSeg {
		f.innerSeg[i] = -1
	}
	for s := range t.segs[:len(t.segs)-1] {
		i := t.segs[s+1].first - 1
		switch vb.Insts[i].Op {
		case gvinst.OpBranch, gvinst.OpJmp, gvinst.OpCall, gvinst.OpJmpR, gvinst.OpCallR, gvinst.OpRet:
		default:
			f.release()
			return nil, fmt.Errorf("trace %#x: block %#x ends in %s inside the trace", vb.Addr, t.segs[s].addr, vb.Insts[i].Op)
		}
		f.innerSeg[i] = s
	}
	for i := range vb.Insts[:nInsts-1] {
		if f.innerSeg[i] < 0 && vb.Insts[i].Op.EndsBlock() {
			f.release()
			return nil, fmt.Errorf("vblock %#x: %s ends the block before its last instruction", vb.Addr, vb.Insts[i].Op)
		}
	}
	if !vb.Insts[nInsts-1].Op.EndsBlock() {
		f.release()
		return nil, fmt.Errorf("vblock %#x does not end with a control transfer", vb.Addr)
	}
	f.findUses()
	f.findLastReads()
	f.findAliases()
	f.findAddresses()
	f.findRenamed()
	f.groups, f.groupOf = f.groups[:0], f.groupOf[:0]
	if n := gvinst.NumGuestSlots + gvinst.Reg(nVRegs) + 2; int(n)+nInsts <= gvinst.FrameSlots {
		f.findPageGroups(n)
		if len(f.groups) > 0 {
			last := f.groups[len(f.groups)-1].slot
			f.nSlots = max(f.nSlots, int(last)+1)
			for len(f.lastRead) < f.nSlots {
				f.lastRead = append(f.lastRead, -1)
			}
		}
		for _, g := range f.groups {
			f.lastRead[g.slot] = g.last
		}
	}
	f.findFusableCmps()
	f.findReads()
	f.findLowMerges()
	f.floatGuard = hasFloatArith(vb)
	return f, nil
}

// findUses lists the slots every instruction names (uses), the writes of
// each slot and the state writers, and sets nSlots.
func (f *unitFacts) findUses() {
	insts := f.vb.Insts
	f.useAt = reuse(f.useAt, len(insts)+1)
	f.uses = f.uses[:0]
	f.stateWriters = f.stateWriters[:0]
	top := gvinst.Reg(0)
	writes := f.pairs[:0]
	for i := range insts {
		in := &insts[i]
		f.useAt[i] = int32(len(f.uses))
		f.uses = operandSlots(f.uses, in)
		for _, u := range f.uses[f.useAt[i]:] {
			top = max(top, u.r)
			if u.dst {
				writes = append(writes, slotAt{u.r, i})
			}
		}
		if in.Op.Info().Effects&gvinst.EffStateWrite != 0 && in.Op != gvinst.OpFlags {
			f.stateWriters = append(f.stateWriters, i)
		}
	}
	f.useAt[len(insts)] = int32(len(f.uses))
	f.nSlots = int(top) + 1
	f.writes.set(f.nSlots, writes)
	f.pairs = writes
}

// findLastReads sets lastRead: per virtual register slot, the index of
// the last instruction that reads it.
func (f *unitFacts) findLastReads() {
	f.lastRead = reuse(f.lastRead, f.nSlots)
	for r := range f.lastRead {
		f.lastRead[r] = -1
	}
	for i := range f.vb.Insts {
		for _, u := range f.usesOf(i) {
			if !u.dst && u.r.IsVirtual() {
				f.lastRead[u.r] = i
			}
		}
	}
}

// findRenamed sets renamed from alias and addr.
func (f *unitFacts) findRenamed() {
	f.renamed = f.renamed[:0]
	for r := range f.nSlots {
		if _, ok := f.alias.get(gvinst.Reg(r)); ok {
			f.renamed = append(f.renamed, gvinst.Reg(r))
		} else if _, ok := f.addr.get(gvinst.Reg(r)); ok {
			f.renamed = append(f.renamed, gvinst.Reg(r))
		}
	}
}

// lastWriteBefore returns the index of the last instruction before idx
// that writes slot r through its operands, or -1.
func (f *unitFacts) lastWriteBefore(r gvinst.Reg, idx int) int {
	ws := f.writes.of(r)
	k, _ := slices.BinarySearch(ws, idx)
	if k == 0 {
		return -1
	}
	return ws[k-1]
}
