package accel

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/profile"
	"github.com/gxbit/gxbit/ptxgen"
	"github.com/gxbit/gxbit/schedule"
)

// Running the schedule's kernels (RATIONALE).
//
// The level's own kernel runs one iteration of the mapped level per
// thread, the x86 body as it is. Where the schedule distributes the body
// (gemm's `C *= beta` loop, then the k–j product) or moves a sequential
// loop inward under a grid level (k–j becomes j–k: grid (i, j), k in the
// thread), phase 2 launches the schedule's kernels instead, in order,
// once per instance of the level: each is the same x86 code cut into the
// parts the schedule names (ptxgen.Nest's Start and Stop, ThreadLoop,
// Interchange), so every element sees the same floating-point operations
// in the same order as on the CPU.
//
// The probe checks what the schedule relies on: the level's iterations
// touch no byte another one writes (as for the level's kernel: then all
// of part 1 before all of part 2 is the same as part 1 then part 2 per
// iteration), and in the first probed iteration the inner level's
// iterations 0 and 1 (each gathered over every row of the thread loop,
// with the part's accesses outside the inner loop counted in both) touch
// no byte the other writes. Each kernel checks its trip counts and
// footprints itself. When the probe cannot tell (too few inner
// iterations, rows of uneven length), the instance runs the level's own
// kernel. A part that fails after earlier parts ran leaves those parts'
// writes in place, and the CPU engine runs the failed part and the later
// ones, each for every offloaded iteration in order: what the
// distribution makes legal.

// partKernel is one kernel of the schedule that phase 2 runs in place of
// the level's own kernel.
type partKernel struct {
	nest *ptxgen.Nest
	k    *ptxgen.Kernel
	fn   gpu.Function
	// live gives, per k.LiveIns, its index in the level kernel's LiveIns:
	// a part's values are the level's at the header.
	live []int
	// what is the schedule's kernel in words, for the report.
	what string
	// even is the interchanged part's kernel for even rows (Nest.Even),
	// which a launch whose rows are even runs instead of k; nil when
	// there is none.
	even   *ptxgen.Kernel
	evenFn gpu.Function
	// statement is set for one statement of a body split between
	// statements (statementParts): its blocks are the level's sliced, and
	// the CPU runs the part over them (cpu) when a launch of it fails.
	statement bool
	cpu       gvinst.Engine
	// innerExits are where the part's inner level leaves to: from there
	// on, accesses belong to no inner iteration.
	innerExits map[uint64]bool
	// reload are the instructions reloadBlocks put at the part's start
	// (GET, LD, PUT per register), which a run of the part on the CPU
	// does too.
	reload []gvinst.Inst
	// The probe's observations of the part's inner level, per probed
	// iteration, and the inner independence records.
	obs   [3]rowObs
	watch innerWatch
}

// rowObs is what one probed iteration showed of a part's inner level:
// the header arrivals per row (of the thread loop, or of the iteration),
// and the first states at the inner header of a row with the most.
type rowObs struct {
	inRow  bool
	trips  uint64 // arrivals in the current row
	rows   int
	first  uint64 // arrivals in each row so far
	uneven bool
	cur    [][]uint64 // the current row's first three states
	states [][]uint64 // the first row's (with at least two) first three states
}

func (o *rowObs) closeRow() {
	if !o.inRow {
		return
	}
	if o.rows == 0 {
		o.first = o.trips
	} else if o.trips != o.first {
		o.uneven = true
	}
	if len(o.cur) > len(o.states) {
		o.states = o.cur
	}
	o.rows++
	o.inRow, o.trips, o.cur = false, 0, nil
}

// innerWatch records, in the first probed iteration, the bytes each site
// touched in inner iterations 0 and 1 of every row; idx is the inner
// iteration running (-1 outside the inner loop: both).
type innerWatch struct {
	active bool
	idx    int
	recs   [2]probeRecord
}

// wants reports whether an access now belongs to the watch's inner
// iteration j.
func (w *innerWatch) wants(j int) bool {
	return w.active && (w.idx == -1 || w.idx == j)
}

// planParts turns the schedule of the spot into ptxgen nests over the
// lifted level, or says why phase 2 runs the level's own kernel. The level
// must be lifted.
func (sp *spot) planParts(s *schedule.Schedule) ([]*ptxgen.Nest, []string, string) {
	hs := sp.hs
	L := &hs.Levels[sp.levelIndex]
	if len(s.Host) > 0 {
		return nil, nil, "the schedule keeps loops on the host"
	}
	if len(s.Kernels) == 0 {
		return nil, nil, "the schedule has no kernel"
	}
	loops := map[string]profile.InnerLoop{}
	for _, il := range hs.InnerLoops {
		loops[il.Index] = il
	}
	for l := sp.levelIndex + 1; l < len(hs.Levels); l++ {
		lv := &hs.Levels[l]
		loops[lv.Index] = profile.InnerLoop{Index: lv.Index, Header: lv.Header, Parent: hs.Levels[l-1].Index}
	}
	childOf := func(c, p string) bool { return loops[c].Parent == p }
	// Each kernel's nest, over the whole level.
	var nests []*ptxgen.Nest
	var whats []string
	for ki, kn := range s.Kernels {
		n := &ptxgen.Nest{Name: fmt.Sprintf("gx_%x_s%d", sp.entry, ki+1), Header: sp.header, Blocks: sp.blocks, Cold: sp.cold}
		g := kn.Grid
		switch {
		case len(g) == 1 && g[0].Index == L.Index && kn.Interchanged[0] == "":
		case len(g) == 2 && g[0].Index == L.Index && kn.Interchanged[0] == "" && childOf(g[1].Index, L.Index):
			n.Inner = uint64(g[1].Header)
		case len(g) == 2 && g[0].Index == L.Index && kn.Interchanged[1] == g[1].Index && childOf(kn.Interchanged[0], L.Index) && childOf(g[1].Index, kn.Interchanged[0]):
			n.Inner, n.ThreadLoop = uint64(g[1].Header), uint64(loops[kn.Interchanged[0]].Header)
		case len(g) == 1 && kn.Interchanged == [2]string{L.Index, g[0].Index} && childOf(g[0].Index, L.Index):
			n.Inner, n.Interchange = uint64(g[0].Header), true
		case len(s.Kernels) == 1 && len(g) == 3 && g[0].Index == L.Index && kn.Interchanged[0] == "" && childOf(g[1].Index, L.Index) && childOf(g[2].Index, g[1].Index) &&
			uint64(g[1].Header) == sp.inner && uint64(g[2].Header) == sp.inner2:
			return nil, nil, "" // the level's own 3D kernel is the schedule's
		default:
			return nil, nil, fmt.Sprintf("kernel %d of the schedule is not a shape phase 2 generates (grid over %s, or %s interchanged inward, under the level)", ki+1, L.Index, L.Index)
		}
		if n.Inner != 0 {
			n.InnerBlocks = sp.loopBlocks(n.Inner)
		}
		nests = append(nests, n)
		whats = append(whats, kernelWords(kn))
	}
	if len(nests) == 1 {
		if nests[0].ThreadLoop == 0 && !nests[0].Interchange {
			return nil, nil, "" // the level's own kernels are the schedule's
		}
		return nests, whats, ""
	}
	if s.Kernels[0].Stores != nil {
		return sp.statementParts(s, nests), whats, ""
	}
	// Distributed: one part per sibling loop of the level, in the order
	// control reaches them, which is the order of the schedule's kernels
	// (by header: schedule.Build's); part m ends where sibling m's loop
	// leaves to. The profile's order of its inner loops is the order its
	// samples met them: a single run's round that began inside the
	// second sibling (atax's Aᵀ·tmp loop, gemm's k loop) names that one
	// first.
	var sibs []profile.InnerLoop
	for _, il := range hs.InnerLoops {
		if il.Parent == L.Index {
			sibs = append(sibs, il)
		}
	}
	slices.SortStableFunc(sibs, func(a, b profile.InnerLoop) int { return cmp.Compare(a.Header, b.Header) })
	if len(sibs) != len(nests) {
		return nil, nil, fmt.Sprintf("the schedule's %d kernels are not one per loop under %s (%d)", len(nests), L.Index, len(sibs))
	}
	var cuts []uint64
	for m := range sibs[:len(sibs)-1] {
		body := sp.loopBlocks(uint64(sibs[m].Header))
		var exit uint64
		for b := range body {
			for _, t := range sp.blocks[b].Successors() {
				if body[t] {
					continue
				}
				if exit != 0 && exit != t {
					return nil, nil, fmt.Sprintf("loop %s leaves to %#x and to %#x", sibs[m].Index, exit, t)
				}
				exit = t
			}
		}
		if exit == 0 || exit == sp.header || sp.blocks[exit] == nil {
			return nil, nil, fmt.Sprintf("loop %s does not leave into the level's body", sibs[m].Index)
		}
		if c := sp.cutAfter[exit]; c != 0 {
			exit = c
		}
		cuts = append(cuts, exit)
	}
	owner := func(idx string) string {
		for idx != "" && loops[idx].Parent != L.Index {
			idx = loops[idx].Parent
		}
		return idx
	}
	for m, n := range nests {
		if m > 0 {
			n.Start = cuts[m-1]
			if r := sp.reloadBlocks(n.Start); r != nil {
				n.Blocks = r
			}
		}
		if m < len(cuts) {
			n.Stop = cuts[m]
		}
		kn := s.Kernels[m]
		for _, l := range append(append([]schedule.Loop(nil), kn.Grid...), kn.Thread...) {
			if l.Index != L.Index && owner(l.Index) != sibs[m].Index {
				return nil, nil, fmt.Sprintf("kernel %d of the schedule runs %s, which is not under loop %s", m+1, l.Index, sibs[m].Index)
			}
		}
	}
	return nests, whats, ""
}

// statementParts gives each kernel of a schedule that splits the level's
// body between its statements (bicg: schedule.Kernel.Stores) the level's
// blocks cut down to its statement: without the stores of the others, and
// without what only those needed (gvinst.SliceStores). A store no
// statement names (a stack slot's) stays in every part.
func (sp *spot) statementParts(s *schedule.Schedule, nests []*ptxgen.Nest) []*ptxgen.Nest {
	owner := map[uint64]int{} // a statement's store → its kernel
	for ki, k := range s.Kernels {
		for _, i := range k.Stores {
			owner[uint64(sp.hs.Accesses[i].X86)] = ki
		}
	}
	for ki, n := range nests {
		sl := gvinst.SliceStores(sp.blocks, func(in *gvinst.Inst) bool {
			k, ok := owner[in.X86]
			return !ok || k == ki
		})
		n.Blocks = sl.Blocks
	}
	return nests
}

// distributedLevel is the level of a hot spot whose level carries a
// dependence that its schedule removes by distribution (atax: tmp = A·x
// then y += Aᵀ·tmp under one i loop, i carrying y): the outermost level,
// when the schedule splits it into kernels of its own; else -1. Only the
// schedule's kernels run such a level (levelCarried), never its own.
func distributedLevel(hs *profile.HotSpot) int {
	if hs.Verdict == profile.VerdictParallel || hs.Verdict == profile.VerdictRejected || len(hs.Levels) == 0 {
		return -1
	}
	s := schedule.Build(hs)
	if s == nil || len(s.Kernels) < 2 || len(s.Host) > 0 {
		return -1
	}
	for _, k := range s.Kernels {
		if !k.Distributed {
			return -1
		}
	}
	return 0
}

// levelCarried reports whether the spot's level carries a dependence, so
// that only the schedule's kernels may run its iterations.
func (sp *spot) levelCarried() bool {
	return !slices.Contains(sp.hs.ParallelLevels, sp.levelIndex) || sp.hs.Verdict != profile.VerdictParallel
}

// rowsIndependent reports whether distinct iterations of the level that
// run site may run at once: always, unless the level carries a dependence
// and only interchanged kernels of the schedule run the site.
func (sp *spot) rowsIndependent(site ptxgen.Site) bool {
	if !sp.levelCarried() {
		return true
	}
	for _, p := range sp.parts {
		if !p.nest.Interchange && slices.ContainsFunc(p.k.Sites, func(s ptxgen.Site) bool { return s.X86 == site.X86 && s.Store == site.Store }) {
			return true
		}
	}
	return false
}

// levelDependence checks what the probed iterations touched against the
// kernels that will run them: "" when the level's kernel may run them at
// once (no two of them touch a byte that one writes); for a level that
// carries a dependence, when each of the schedule's kernels over the level
// may (an interchanged one runs the level's iterations in order in each
// thread: innerDependence checks its threads).
func (sp *spot) levelDependence(ts []*accessTrace, count uint64) string {
	if !sp.levelCarried() {
		return observedDependence(ts, count)
	}
	for pi, p := range sp.parts {
		if p.nest.Interchange {
			continue
		}
		var mine []*accessTrace
		for _, t := range ts {
			if slices.ContainsFunc(p.k.Sites, func(s ptxgen.Site) bool { return s.X86 == t.x86 && s.Store == t.store }) {
				mine = append(mine, t)
			}
		}
		if why := observedDependence(mine, count); why != "" {
			return fmt.Sprintf("kernel %d (%s): %s", pi+1, p.what, why)
		}
	}
	return ""
}

// kernelWords is one kernel of a schedule on a line.
func kernelWords(k schedule.Kernel) string {
	var g, t []string
	for _, l := range k.Grid {
		g = append(g, l.Index)
	}
	for _, l := range k.Thread {
		t = append(t, l.Index)
	}
	s := "grid(" + strings.Join(g, ",") + ")"
	if len(t) > 0 {
		s += " thread(" + strings.Join(t, ",") + ")"
	}
	if k.Interchanged[0] != "" {
		s += fmt.Sprintf(" [%s<->%s]", k.Interchanged[0], k.Interchanged[1])
	}
	return s
}

// loopBlocks is the natural loop of header h among the lifted level's
// blocks: h and the blocks that reach one of its back edges' sources
// without passing h, a back edge being an edge into h from a block that h
// dominates (that the level's header cannot reach but through h).
func (sp *spot) loopBlocks(h uint64) map[uint64]bool {
	preds := map[uint64][]uint64{}
	for a, b := range sp.blocks {
		for _, s := range b.Successors() {
			preds[s] = append(preds[s], a)
		}
	}
	// Reachable from the level's header without passing h.
	outside := map[uint64]bool{sp.header: true}
	for w := []uint64{sp.header}; len(w) > 0; {
		b := w[len(w)-1]
		w = w[:len(w)-1]
		for _, s := range sp.blocks[b].Successors() {
			if !outside[s] && s != h && sp.blocks[s] != nil {
				outside[s] = true
				w = append(w, s)
			}
		}
	}
	out := map[uint64]bool{h: true}
	var w []uint64
	for _, p := range preds[h] {
		if !outside[p] && !out[p] {
			out[p] = true
			w = append(w, p)
		}
	}
	for len(w) > 0 {
		b := w[len(w)-1]
		w = w[:len(w)-1]
		for _, p := range preds[b] {
			if !out[p] && sp.blocks[p] != nil {
				out[p] = true
				w = append(w, p)
			}
		}
	}
	return out
}

// generateParts generates the schedule's kernels of a lifted spot, when
// they differ from the level's own; the report's ScheduleNote says which
// ran, or why not.
func (sp *spot) generateParts(s *schedule.Schedule) {
	nests, whats, why := sp.planParts(s)
	if nests == nil {
		if why != "" {
			sp.rep.ScheduleNote += "; the schedule's kernels are not generated: " + why
		}
		return
	}
	var parts []*partKernel
	for i, n := range nests {
		k, err := ptxgen.Generate(n)
		if err != nil {
			sp.rep.ScheduleNote += fmt.Sprintf("; the schedule's kernel %d (%s) cannot be generated: %v", i+1, whats[i], err)
			return
		}
		p := &partKernel{nest: n, k: k, what: whats[i], innerExits: map[uint64]bool{}, statement: s.Kernels[i].Stores != nil}
		if n.Interchange {
			en := *n
			en.Name, en.Even = n.Name+"e", true
			if ek, err := ptxgen.Generate(&en); err == nil {
				p.even = ek
			}
		}
		for b := range n.InnerBlocks {
			for _, t := range n.Blocks[b].Successors() {
				if !n.InnerBlocks[t] && n.Blocks[t] != nil && t != sp.header && !sp.exits[t] && t != sp.inner {
					p.innerExits[t] = true
				}
			}
		}
		if n.Start != 0 && n.Blocks[n.Start] != sp.blocks[n.Start] {
			p.reload = n.Blocks[n.Start].Insts[:len(n.Blocks[n.Start].Insts)-len(sp.blocks[n.Start].Insts)]
		}
		for _, l := range k.LiveIns {
			at := slices.IndexFunc(sp.kernel.LiveIns, func(o ptxgen.LiveIn) bool { o.Written = l.Written; return o == l })
			if at < 0 {
				sp.rep.ScheduleNote += fmt.Sprintf("; the schedule's kernel %d (%s) reads %s, which the level's kernel does not", i+1, whats[i], l)
				return
			}
			p.live = append(p.live, at)
		}
		parts = append(parts, p)
	}
	sp.parts = parts
	sp.rep.ScheduleNote = "phase 2 runs the schedule's kernels: " + strings.Join(whats, "; ")
	if len(parts) > 1 {
		sp.rep.ScheduleNote += fmt.Sprintf(" (%d launches an instance, in order; the level's own kernel when the probe cannot confirm them)", len(parts))
	}
}

// partCuts are the addresses where the schedule's parts begin and the
// inner headers their kernels need as block starts: cut there when
// lifting.
func (sp *spot) partCuts() []uint64 {
	var out []uint64
	for _, il := range sp.hs.InnerLoops {
		out = append(out, uint64(il.Header))
	}
	// Every level below too, so that a probed row sees each arrival at
	// an inner header (bounded.go).
	for _, lv := range sp.hs.Levels[min(sp.levelIndex+1, len(sp.hs.Levels)):] {
		out = append(out, uint64(lv.Header))
	}
	for _, c := range sp.cutAfter {
		out = append(out, c)
	}
	return out
}

// storeCuts finds, for the loops under the level but the last, where the
// stores that begin the block each leaves to end (atax's tmp[i] = sum
// after the loop that sums it): the lifted level's blocks there. A part
// then ends after them, and the next begins there.
func (sp *spot) storeCuts() map[uint64]uint64 {
	L := sp.hs.Levels[sp.levelIndex].Index
	out := map[uint64]uint64{}
	for _, il := range sp.hs.InnerLoops {
		if il.Parent != L {
			continue
		}
		body := sp.loopBlocks(uint64(il.Header))
		for b := range body {
			for _, t := range sp.blocks[b].Successors() {
				if body[t] || sp.blocks[t] == nil || t == sp.header {
					continue
				}
				if c := storesEnd(sp.blocks[t]); c != 0 {
					out[t] = c
				}
			}
		}
	}
	return out
}

// storesEnd is the address of the first x86 instruction of b after the
// ones it begins with that store to memory, or 0 (none, or all of them).
func storesEnd(b *gvinst.VBlock) uint64 {
	for gi, g := range b.Guest {
		if !slices.ContainsFunc(b.Insts, func(in gvinst.Inst) bool { return in.X86 == g.Addr && in.Op == gvinst.OpSt }) {
			if gi == 0 {
				return 0
			}
			return g.Addr
		}
	}
	return 0
}

// reloadBlocks returns the level's blocks with the block at start (where
// a part begins, right after a block of stores) first reloading the
// registers those stores wrote to memory, from there: "GET b; ST [b+d],
// r" before start becomes "GET b; LD r, [b+d]" at its beginning, so that
// the part no longer needs r from the part before (which leaves it in
// memory). It returns nil when the blocks before start store no register
// so, or the part writes the array stored to.
func (sp *spot) reloadBlocks(start uint64) map[uint64]*gvinst.VBlock {
	var prev *gvinst.VBlock
	for _, b := range sp.blocks {
		if b.End == start && slices.Contains(b.Successors(), start) {
			prev = b
		}
	}
	sb := sp.blocks[start]
	if prev == nil || sb == nil {
		return nil
	}
	after := map[uint64]bool{} // the blocks of the part from start
	for w := []uint64{start}; len(w) > 0; {
		b := w[len(w)-1]
		w = w[:len(w)-1]
		if after[b] || b == sp.header || sp.blocks[b] == nil {
			continue
		}
		after[b] = true
		w = append(w, sp.blocks[b].Successors()...)
	}
	getOf := map[gvinst.Reg]gvinst.Reg{} // virtual → the guest slot it holds
	var pre []gvinst.Inst
	next := gvinst.Reg(0)
	for _, in := range sb.Insts {
		for _, r := range append([]gvinst.Reg{in.Dst}, in.Src[:]...) {
			if r.IsVirtual() && r >= next {
				next = r + 2
			}
		}
	}
	next = max(next, gvinst.VReg(0))
	for _, in := range prev.Insts {
		switch {
		case in.Op == gvinst.OpGet && in.Dst.IsVirtual() && !in.Src[0].IsVirtual():
			getOf[in.Dst] = in.Src[0]
		case in.Op == gvinst.OpSt:
			base, okB := getOf[in.Src[0]]
			val, okV := getOf[in.Src[1]]
			if !okB || !okV || in.Type.Slots() != 1 || base > gvinst.S15 {
				return nil
			}
			g, ok := sp.groupOf[[2]uint64{in.X86, 1}]
			for _, w := range sp.kernel.Sites {
				if wg, wok := sp.group(w); w.Store && (!ok || !wok || wg == g) && after[w.Block] {
					return nil // the part may store to the array
				}
			}
			a, v := next, next+1
			next += 2
			pre = append(pre,
				gvinst.Inst{Op: gvinst.OpGet, Type: gvinst.U64, Dst: a, Src: [4]gvinst.Reg{base}, X86: in.X86},
				gvinst.Inst{Op: gvinst.OpLd, Type: in.Type, Dst: v, Src: [4]gvinst.Reg{a}, Imm: in.Imm, X86: in.X86},
				gvinst.Inst{Op: gvinst.OpPut, Type: in.Type, Dst: val, Src: [4]gvinst.Reg{v}, X86: in.X86})
		case hasDst(in):
			delete(getOf, in.Dst)
		}
	}
	if len(pre) == 0 {
		return nil
	}
	nb := *sb
	nb.Insts = append(pre, sb.Insts...)
	if err := gvinst.Verify(&nb); err != nil {
		return nil
	}
	out := maps.Clone(sp.blocks)
	out[start] = &nb
	return out
}

// hasDst reports whether in writes a destination register.
func hasDst(in gvinst.Inst) bool {
	return slices.Contains(in.Op.Info().Operands, gvinst.OpdDst)
}

// observeParts follows the probing engine through the parts' inner
// levels: it is called at every breakpoint stop of probed iteration it
// and reports whether pc is one of the parts' (probing goes on).
func (sp *spot) observeParts(it int, cpu *gvinst.CPU, pc uint64) (bool, error) {
	watched := false
	for _, p := range sp.parts {
		n := p.nest
		o := &p.obs[it]
		switch pc {
		case n.ThreadLoop:
			o.closeRow()
			o.inRow = true
			p.watch.idx = -1
			watched = true
		case n.Inner:
			if !o.inRow {
				o.inRow = true
			}
			o.trips++
			if len(o.cur) < 3 {
				v, err := liveValuesOf(sp.a.g.Mem, cpu, p.k.InnerLiveIns)
				if err != nil {
					return true, err
				}
				o.cur = append(o.cur, v)
			}
			p.watch.idx = int(o.trips - 1)
			watched = true
		default:
			if p.innerExits[pc] && !sp.partHeader(pc) {
				// Out of the inner level: what follows (the thread
				// loop's latch) is no inner iteration's.
				p.watch.idx = -1
				watched = true
			}
		}
	}
	return watched, nil
}

// partHeader reports whether pc is the inner or thread loop header of a
// part (a breakpoint observeParts handles as such).
func (sp *spot) partHeader(pc uint64) bool {
	for _, p := range sp.parts {
		if pc == p.nest.Inner || pc == p.nest.ThreadLoop {
			return true
		}
	}
	return false
}

// startProbe resets the parts' observations before probed iteration it.
func (sp *spot) startProbe(it, numSites int) {
	for _, p := range sp.parts {
		p.obs[it] = rowObs{}
		p.watch.active, p.watch.idx = it == 0 && p.nest.Inner != 0, -1
		if it == 0 {
			for j := range p.watch.recs {
				p.watch.recs[j].reset(numSites)
			}
		}
	}
}

// partsNeedRows reports whether a part maps an inner level (three probed
// iterations then give its per-row trip counts and steps).
func (sp *spot) partsNeedRows() bool {
	for _, p := range sp.parts {
		if p.nest.Inner != 0 {
			return true
		}
	}
	return false
}

// partInputs makes each part's launch input from the level's (in, over
// count iterations from arrival from on, after P probed rows) and the probe's
// observations; ok is false when they do not confirm a part's inner
// level, and why says how.
func (sp *spot) partInputs(in ptxgen.LaunchInput, P, from int, sites map[[2]uint64]ptxgen.Range) ([]ptxgen.LaunchInput, string) {
	var out []ptxgen.LaunchInput
	for pi, p := range sp.parts {
		k := p.k
		pin := ptxgen.LaunchInput{Count: in.Count}
		for _, at := range p.live {
			pin.Values = append(pin.Values, in.Values[at])
			pin.Steps = append(pin.Steps, in.Steps[at])
		}
		for _, s := range k.Sites {
			key := [2]uint64{s.X86, 0}
			if s.Store {
				key[1] = 1
			}
			r, ok := sites[key]
			if !ok && !s.Store {
				// A reload (reloadBlocks) reads what the store at its
				// address wrote.
				r = sites[[2]uint64{s.X86, 1}]
			}
			pin.Sites = append(pin.Sites, r)
		}
		if p.nest.Inner != 0 {
			var trips [3]int64
			var steps [3][]uint64
			known := [3]bool{}
			for it := 0; it < P; it++ {
				o := &p.obs[it]
				o.closeRow()
				if o.uneven {
					return nil, fmt.Sprintf("kernel %d: the rows of its thread loop ran different inner trip counts", pi+1)
				}
				trips[it] = int64(o.first)
				if len(o.states) >= 2 {
					known[it] = true
					for i := range k.InnerLiveIns {
						d := o.states[1][i] - o.states[0][i]
						if len(o.states) == 3 && o.states[2][i]-o.states[1][i] != d {
							return nil, fmt.Sprintf("kernel %d: %s changed by %#x then %#x in the inner level", pi+1, k.InnerLiveIns[i], d, o.states[2][i]-o.states[1][i])
						}
						steps[it] = append(steps[it], d)
					}
				}
			}
			if P < 3 || !known[1] || !known[2] {
				return nil, fmt.Sprintf("kernel %d: the probed rows ran too few inner iterations to give the inner steps", pi+1)
			}
			dn := trips[1] - trips[0]
			if trips[2]-trips[1] != dn {
				return nil, fmt.Sprintf("kernel %d: inner trip counts %d, %d, %d are not affine", pi+1, trips[0], trips[1], trips[2])
			}
			first, last := trips[0]+int64(from)*dn, trips[0]+dn*int64(from+int(in.Count)-1)
			if first < 0 || last < 0 {
				return nil, fmt.Sprintf("kernel %d: inner trip counts go below zero", pi+1)
			}
			pin.InnerTrip0, pin.InnerTripStep, pin.InnerMax = uint64(first), uint64(dn), uint64(max(first, last))
			for i := range k.InnerLiveIns {
				row := steps[2][i] - steps[1][i]
				if known[0] && steps[1][i]-steps[0][i] != row {
					return nil, fmt.Sprintf("kernel %d: the inner step of %s is not affine in the row", pi+1, k.InnerLiveIns[i])
				}
				pin.InnerSteps = append(pin.InnerSteps, steps[1][i]+uint64(from-1)*row)
				pin.InnerStepRows = append(pin.InnerStepRows, row)
			}
			if p.nest.Interchange {
				// The interchanged kernel's rows are the level's; its
				// threads the inner iterations of the widest row.
				pin.InnerMax = max(uint64(first), uint64(last))
			}
		}
		out = append(out, pin)
	}
	return out, ""
}

// innerDependence checks the parts' inner levels against what the first
// probed iteration saw: "" when their iterations 0 and 1 touch no byte
// the other writes.
func (sp *spot) innerDependence(inner []ptxgen.LaunchInput) string {
	for pi, p := range sp.parts {
		if p.nest.Inner == 0 {
			continue
		}
		var sites []ptxgen.Site
		var recs [2]probeRecord
		for j := range recs {
			recs[j].reset(len(p.k.Sites))
		}
		// The level kernel's sites in the part, renumbered.
		for _, s := range sp.kernel.Sites {
			if !slices.ContainsFunc(p.k.Sites, func(o ptxgen.Site) bool { return o.X86 == s.X86 && o.Store == s.Store }) {
				continue
			}
			id := len(sites)
			sites = append(sites, ptxgen.Site{ID: id, X86: s.X86, Store: s.Store, Size: s.Size})
			for j := range recs {
				if s.ID < len(p.watch.recs[j].spans) {
					recs[j].spans = append(recs[j].spans[:id], p.watch.recs[j].spans[s.ID])
				}
			}
		}
		for j := range recs {
			recs[j].spans = recs[j].spans[:len(sites)]
		}
		if why := observedDependence(traces(sites, [2]*probeRecord{&recs[0], &recs[1]}), inner[pi].InnerMax); why != "" {
			return fmt.Sprintf("kernel %d (%s), inner level: %s", pi+1, p.what, why)
		}
	}
	return ""
}

// offloadParts runs an instance's count iterations from probed iteration
// from (after P probed rows) as the schedule's kernels, in order, then sets the CPU at the header
// for the last ones, as offload does. When the probe does not confirm the
// parts, use is false and the caller launches the level's kernel.
func (sp *spot) offloadParts(cpu *gvinst.CPU, in ptxgen.LaunchInput, P, from int, sites []ptxgen.Range, cpuIter time.Duration) (use bool, fb *fallback) {
	byKey := map[[2]uint64]ptxgen.Range{}
	for i, s := range sp.kernel.Sites {
		key := [2]uint64{s.X86, 0}
		if s.Store {
			key[1] = 1
		}
		r, ok := byKey[key]
		if !ok || r.Hi <= r.Lo {
			byKey[key] = sites[i]
		} else if sites[i].Hi > sites[i].Lo {
			byKey[key] = ptxgen.Range{Lo: min(r.Lo, sites[i].Lo), Hi: max(r.Hi, sites[i].Hi)}
		}
	}
	if sp.levelCarried() {
		// Only the schedule's kernels may run the level: what keeps them
		// from it sends the instance to the CPU.
		if inputs, why := sp.partInputs(in, P, from, byKey); why != "" {
			return true, fail(ReasonDependence, "the level carries a dependence and %s", why)
		} else {
			return true, sp.runParts(cpu, in, inputs, cpuIter)
		}
	}
	if sp.a.prefer1D(sp.kernel, in.Count) {
		// The simulator, with rows enough for every host core: one thread
		// per row pays a thread's prologue once per row (prefer1D).
		sp.rep.Note = "the level's own kernel ran: on the simulator, with a CTA of rows for every host core"
		return false, nil
	}
	inputs, why := sp.partInputs(in, P, from, byKey)
	if why != "" {
		sp.rep.Note = "the level's own kernel ran: " + why
		return false, nil
	}
	for pi, p := range sp.parts {
		if _, _, err := sp.loadedPart(p, inputs[pi]); err != nil {
			sp.rep.Note = "the level's own kernel ran: " + err.Error()
			sp.parts = nil
			return false, nil
		}
	}
	return true, sp.runParts(cpu, in, inputs, cpuIter)
}

// loadedPart returns the kernel a launch of part p over in runs, loaded:
// the even variant when in's rows are even and it loads, else the part's
// own kernel.
func (sp *spot) loadedPart(p *partKernel, in ptxgen.LaunchInput) (*ptxgen.Kernel, gpu.Function, error) {
	if p.even != nil && evenRows(in) {
		if p.evenFn == nil {
			if p.evenFn, _ = sp.load(p.even); p.evenFn == nil {
				p.even = nil
			}
		}
		if p.evenFn != nil {
			return p.even, p.evenFn, nil
		}
	}
	if p.fn == nil {
		fn, err := sp.load(p.k)
		if err != nil {
			return nil, nil, err
		}
		p.fn = fn
	}
	return p.k, p.fn, nil
}

// runParts checks the parts' inner levels and launches the parts over the
// instance's count iterations, in order (see offloadParts); a part that
// fails after the first runs on the CPU with the later ones.
func (sp *spot) runParts(cpu *gvinst.CPU, in ptxgen.LaunchInput, inputs []ptxgen.LaunchInput, cpuIter time.Duration) *fallback {
	if why := sp.innerDependence(inputs); why != "" {
		return fail(ReasonDependence, "%s", why)
	}
	var kernel time.Duration
	for pi, p := range sp.parts {
		before := sp.rep.KernelSeconds
		k, fn, err := sp.loadedPart(p, inputs[pi])
		if err != nil {
			return fail(ReasonDriver, "%v", err)
		}
		fb, done := sp.launch(fn, k, inputs[pi], cpuIter)
		kernel += time.Duration((sp.rep.KernelSeconds - before) * float64(time.Second))
		if fb == nil {
			continue
		}
		if pi == 0 || done {
			return fb
		}
		// Parts before pi ran: the CPU runs this part and the later ones,
		// each for every offloaded iteration.
		if err := sp.runPartsOnCPU(cpu, pi, in); err != nil {
			sp.fatal = fmt.Errorf("accelerate: hot spot %s: running the schedule's kernels %d.. on the CPU after %v: %w", sp.rep.Entry, pi+1, fb, err)
			return fb
		}
		sp.rep.Fallbacks++
		sp.rep.FallbackReasons[fb.reason]++
		sp.rep.LastFallback = fb.Error() + " (the CPU ran it and the later kernels)"
		break
	}
	sp.kernelPerIter = sp.kernelTimes.add(kernel / time.Duration(max(in.Count, 1)))
	return nil
}

// evenRows reports whether a launch's rows all run the same inner trip
// count with the same inner steps (an even kernel's input).
func evenRows(in ptxgen.LaunchInput) bool {
	if in.InnerTripStep != 0 {
		return false
	}
	for _, d := range in.InnerStepRows {
		if d != 0 {
			return false
		}
	}
	return true
}

// runPartsOnCPU runs parts from..end on the CPU engine, each for the
// offloaded iterations of in in order, and leaves the CPU at the header
// of the first iteration after them.
func (sp *spot) runPartsOnCPU(cpu *gvinst.CPU, from int, in ptxgen.LaunchInput) error {
	if sp.partCPU == nil {
		sp.partCPU = sp.fastEngine(sp.partCPUBreaks())
	}
	vals := make([]uint64, len(in.Values))
	for _, p := range sp.parts[from:] {
		engine := sp.partCPU
		if p.statement {
			if p.cpu == nil {
				p.cpu = sp.engineWith(&slicedTranslator{sp: sp, blocks: p.nest.Blocks}, sp.partCPUBreaks())
			}
			engine = p.cpu
		}
		for t := uint64(0); t < in.Count; t++ {
			for i := range vals {
				vals[i] = in.Values[i] + in.Steps[i]*t
			}
			if err := sp.setLive(cpu, vals); err != nil {
				return err
			}
			for k := 0; k+2 < len(p.reload); k += 3 {
				get, ld, put := p.reload[k], p.reload[k+1], p.reload[k+2]
				v, err := sp.a.g.Mem.Load(cpu.State[get.Src[0]]+uint64(ld.Imm), ld.Type.Size())
				if err != nil {
					return err
				}
				cpu.State[put.Dst] = v
			}
			cpu.PC = p.nest.Start
			if cpu.PC == 0 {
				cpu.PC = sp.header
			}
			for {
				st := engine.Run(cpu, 0)
				if st.Kind != gvinst.StopBreakpoint {
					return fmt.Errorf("stopped at %v", st)
				}
				if st.PC == sp.header || st.PC == p.nest.Stop && p.nest.Stop != 0 {
					break
				}
				if sp.exits[st.PC] {
					return fmt.Errorf("left the loop at %#x", st.PC)
				}
			}
		}
	}
	return nil
}

// partCPUBreaks are where a part run on the CPU stops: the level's header
// and exits, and where parts end.
func (sp *spot) partCPUBreaks() map[uint64]bool {
	bps := map[uint64]bool{sp.header: true}
	for e := range sp.exits {
		bps[e] = true
	}
	for _, p := range sp.parts {
		if p.nest.Stop != 0 {
			bps[p.nest.Stop] = true
		}
	}
	return bps
}

// slicedTranslator gives the CPU engine one statement's blocks of the
// level (statementParts) and lifts what lies outside it.
type slicedTranslator struct {
	sp     *spot
	blocks map[uint64]*gvinst.VBlock
}

func (t *slicedTranslator) Translate(addr uint64) (*gvinst.VBlock, error) {
	b, ok := t.blocks[addr]
	if !ok {
		return (&probeTranslator{sp: t.sp, plain: true}).Translate(addr)
	}
	c := *b
	c.Insts = append([]gvinst.Inst(nil), b.Insts...)
	return &c, nil
}
