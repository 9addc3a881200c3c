package profile

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/polyhedral"
)

// RunInfo describes the profiled run for the profile file.
type RunInfo struct {
	Program           string
	ProgramSHA256     string // hex SHA-256 of the program file
	Args              []string
	LoadBias          uint64
	GuestInstructions uint64
}

// maxAnalysedEntries is how many sampled nest entries the dependence test
// is run on (each with its concrete bases and bounds).
const maxAnalysedEntries = 3

// Finish analyses what the collector recorded and returns the profile.
// A nest whose recorded data has not changed since the collector's last
// Finish is not analysed again (nestAnalysis): its analysis then is
// what a new one would find.
func (c *Collector) Finish(run RunInfo) *File { return c.finish(run, true) }

// finish is Finish; with reuse false it analyses every nest anew, and
// keeps nothing for the next.
func (c *Collector) finish(run RunInfo, reuse bool) *File {
	given, undo := c.provisionalTrips()
	defer undo()
	c.reused = 0
	f := &File{Version: FormatVersion, Program: run.Program, ProgramSHA256: run.ProgramSHA256, Args: run.Args, LoadBias: Hex(run.LoadBias),
		GuestInstructions: run.GuestInstructions, Functions: len(c.prog.Funcs), Loops: []LoopSummary{}, HotSpots: []HotSpot{}}
	var hots []*HotSpot
	var sums []*LoopSummary
	memo := newAnalysisMemo()
	for ni, n := range c.nests {
		// provisionalTrips gives its samples nest by nest.
		var nestGiven []provisionalTrip
		for len(given) > 0 && given[0].n == n {
			nestGiven, given = append(nestGiven, given[0]), given[1:]
		}
		for r, a := range c.analyseNest(memo, ni, nestGiven, reuse) {
			// The nest's share of the run changes with every slice the
			// guest runs, whether or not the nest does.
			share := c.loopShare(n.loops[r].loop)
			a.sum.Share = share
			sums = append(sums, a.sum)
			if hs := a.hs; hs != nil {
				hs.Share, hs.Instructions = share, uint64(share*float64(run.GuestInstructions))
				hots = append(hots, hs)
				a.sum.HotSpot = len(hots) - 1 // provisional, renumbered below
			}
		}
	}
	for _, fn := range c.rejectedFuncs {
		for _, l := range fn.Loops {
			sums = append(sums, c.rejectedSummary(l))
		}
	}
	order := make([]int, len(hots))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return hots[order[a]].Share > hots[order[b]].Share })
	newID := make([]int, len(hots))
	for id, i := range order {
		newID[i] = id
		hots[i].ID = id
		f.HotSpots = append(f.HotSpots, *hots[i])
	}
	for _, s := range sums {
		if s.HotSpot >= 0 {
			s.HotSpot = newID[s.HotSpot]
		}
		f.Loops = append(f.Loops, *s)
	}
	// Hottest first; the rest in address order.
	sort.SliceStable(f.Loops, func(a, b int) bool { return f.Loops[a].Share > f.Loops[b].Share })
	return f
}

// innerFromRoots completes each inner loop's verdict, so far the exact
// test on memory over the outer nest's entries, with what the hot spot
// rooted at the same loop found: its level 0 asks the same question (are
// the loop's iterations independent within one entry?) with the full
// scalar analysis and the trace check. Without such a hot spot, a
// conservative scalar check (innerScalars) stands in. The stricter
// verdict wins.
func innerFromRoots(hs *HotSpot, rooted map[uint64]*HotSpot) {
	rank := map[string]int{VerdictParallel: 0, VerdictReduction: 1, VerdictSequential: 2}
	for i := range hs.InnerLoops {
		il := &hs.InnerLoops[i]
		r := rooted[uint64(il.Header)]
		if r == nil || len(r.Levels) == 0 {
			if i < len(hs.innerScalar) {
				if v := hs.innerScalar[i]; rank[v.kind] > rank[il.Verdict] {
					il.Verdict, il.Reason, il.Conflict = v.kind, v.reason, v.conflict
				}
			}
			continue
		}
		lv := r.Levels[0]
		if rank[lv.Verdict] <= rank[il.Verdict] {
			continue
		}
		il.Verdict, il.Reason, il.Conflict = lv.Verdict, lv.Reason+" (as the nest rooted at this loop)", nil
		if cf := lv.Conflict; cf != nil {
			// Site indices of the other hot spot, renumbered into this one.
			c := &Conflict{Sites: [2]int{-1, -1}, Witness: cf.Witness}
			for k, s := range cf.Sites {
				if s < 0 || s >= len(r.Accesses) {
					continue
				}
				for j, a := range hs.Accesses {
					if a.Site == r.Accesses[s].Site {
						c.Sites[k] = j
					}
				}
			}
			il.Conflict = c
		}
	}
}

// loopShare is the share of the run's position samples that fell in
// loop L's blocks.
func (c *Collector) loopShare(L *Loop) float64 {
	var samples uint64
	for _, b := range L.Blocks {
		samples += c.blockSamples[b.Addr]
	}
	if c.pcSamples == 0 {
		return 0
	}
	return float64(samples) / float64(c.pcSamples)
}

// rejectedSummary lists a loop of a function that has no candidate.
func (c *Collector) rejectedSummary(L *Loop) *LoopSummary {
	d := len(L.Levels())
	sum := &LoopSummary{Entry: Hex(L.Header.Addr), Function: L.Func.Name, Depth: d, ParallelLevels: []int{}, Share: c.loopShare(L),
		HotSpot: -1, Verdict: VerdictRejected, Reason: L.staticReject()}
	for i := 0; i < d; i++ {
		sum.Levels = append(sum.Levels, VerdictRejected)
	}
	return sum
}

// analysisMemo holds what one Finish works out once for all its chains:
// facts of the static CFG, or of the data recorded, that do not depend on
// the chain asking. A nest's chains share their loops, and every chain
// asks again of each register of each level: whether a loop writes it,
// walking the loop's instructions (writes), was 11% of the analysis of
// heat3d at its medium size, and classifying its snapshots (classify) 9%,
// most of it asked before.
type analysisMemo struct {
	loopDefs    map[*Loop]slots             // the slots each loop writes (chain.writes)
	snapEntries map[*loopInfo][]snapGroup   // each loop's snapshots by entry (chain.snapEntries)
	classes     map[classifyKey]scalarClass // chain.classify's answers
	blocks      map[uint64]liftedBlock      // the VBlocks' text by address (Collector.blockText)
	groupKeys   map[string]string           // groupKey's strings, interned (analysisMemo.groupKey)
	keyBuf      []byte                      // groupKey's scratch
	trace       traceWords                  // traceCheck's scratch
}

// liftedBlock is what blockText made of a VBlock, ok false where it did
// not lift.
type liftedBlock struct {
	text BlockText
	ok   bool
}

// newAnalysisMemo returns an empty memo for one Finish.
func newAnalysisMemo() *analysisMemo {
	return &analysisMemo{loopDefs: map[*Loop]slots{}, snapEntries: map[*loopInfo][]snapGroup{}, classes: map[classifyKey]scalarClass{}, blocks: map[uint64]liftedBlock{}, groupKeys: map[string]string{}}
}

// chain is one candidate hot spot being analysed: the nest's loops from
// root r down the single-child chain.
type chain struct {
	c    *Collector
	memo *analysisMemo
	// pages is where constReload notes the page permissions it reads
	// (nestAnalysis.pages).
	pages  *[]pageRead
	n      *nestState
	r      int   // root loop index in the nest
	lv     []int // loop indices of the levels
	p      int   // number of loops above r in the nest
	levels []Level
	sum    *LoopSummary
	hs     *HotSpot
	// redSites caches inReduction.
	redSites map[int]bool
	// extra are the loops below the last level (it has several inner
	// loops, or code around one: an imperfect nest), in pre-order;
	// extraIdx maps their loop index to their position.
	extra    []extraLevel
	extraIdx map[int]int
	// innerVerdicts are the verdicts of the extra loops, by position.
	innerVerdicts []innerVerdict
}

// extraLevel is a loop below the chain's last level: its sites get an
// index of their own, bounded by the loop's fitted trip count, which may
// depend on every enclosing index.
type extraLevel struct {
	loop int
	name string
	path []int // positions in chain.extra of the inner loops enclosing it, outermost first, itself last
	trip *affineFit
}

// innerPath registers the loops below the last level on a site's path
// (nest loop indices, outermost first) and returns their positions in
// ch.extra.
func (ch *chain) innerPath(loops []int) []int {
	var path []int
	for _, k := range loops {
		e, ok := ch.extraIdx[k]
		if !ok {
			e = len(ch.extra)
			ch.extraIdx[k] = e
			ch.extra = append(ch.extra, extraLevel{loop: k, name: fmt.Sprintf("u%d", e), path: append(append([]int(nil), path...), e)})
		}
		path = append(path, e)
	}
	return path
}

// posName names position m of an iteration vector whose inner loops are
// path: the levels' indices, then the inner loops'.
func (ch *chain) posName(path []int, m int) string {
	if d := len(ch.lv); m >= d {
		return ch.extra[path[m-d]].name
	}
	return indexName(m)
}

// namedCoeffs writes base + Σ coeffs[m]·index_m with the names of posName.
func (ch *chain) namedCoeffs(c []int64, path []int, base string) string {
	var parts []string
	if base != "" {
		parts = append(parts, base)
	}
	for m, k := range c {
		switch {
		case k == 0:
		case k == 1:
			parts = append(parts, ch.posName(path, m))
		default:
			parts = append(parts, fmt.Sprintf("%d*%s", k, ch.posName(path, m)))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.ReplaceAll(strings.Join(parts, " + "), "+ -", "- ")
}

// groupKey is the package's groupKey, interned for the Finish: the
// samples and snapshots of one entry share one string instead of each
// making its own (a string per sample, made again by each chain, was 4%
// of the analysis of heat3d at its medium size, and more in the
// collector's garbage).
func (m *analysisMemo) groupKey(entry int32, outer []int32) string {
	b := strconv.AppendInt(m.keyBuf[:0], int64(entry), 10)
	for _, x := range outer {
		b = append(b, '/')
		b = strconv.AppendInt(b, int64(x), 10)
	}
	m.keyBuf = b
	if k, ok := m.groupKeys[string(b)]; ok {
		return k
	}
	k := string(b)
	m.groupKeys[k] = k
	return k
}

// groupKey names one entry of the chain: the nest entry and the counters
// of the loops above it.
func groupKey(entry int32, outer []int32) string {
	var sb strings.Builder
	sb.WriteString(strconv.Itoa(int(entry)))
	for _, x := range outer {
		sb.WriteByte('/')
		sb.WriteString(strconv.Itoa(int(x)))
	}
	return sb.String()
}

// analyzeChain analyses the chain rooted at loop r of nest ni, noting in
// pages the page permissions it reads. The summary's and hot spot's
// shares of the run are left for Finish.
func (c *Collector) analyzeChain(memo *analysisMemo, ni, r int, pages *[]pageRead) (*LoopSummary, *HotSpot) {
	n := c.nests[ni]
	L := n.loops[r].loop
	ch := &chain{c: c, memo: memo, pages: pages, n: n, r: r, p: len(n.loops[r].chain) - 1, redSites: map[int]bool{}, extraIdx: map[int]int{}}
	for _, l := range L.Levels() {
		ch.lv = append(ch.lv, n.index[l])
	}
	d := len(ch.lv)
	sum := &LoopSummary{Entry: Hex(L.Header.Addr), Function: L.Func.Name, Depth: d, ParallelLevels: []int{}, HotSpot: -1}
	ch.sum = sum
	reject := L.staticReject()
	if reject == "" {
		reject = n.rejected
	}
	if reject == "" && len(n.loops[r].snaps) == 0 {
		reject = "never executed"
	}
	if reject != "" {
		sum.Verdict, sum.Reason = VerdictRejected, reject
		for range ch.lv {
			sum.Levels = append(sum.Levels, VerdictRejected)
		}
		return sum, nil
	}
	hs := &HotSpot{Function: L.Func.Name, Entry: Hex(L.Header.Addr), Depth: d,
		ParallelLevels: []int{}, Vars: []Var{}, Accesses: []Access{}, Arrays: []Array{}, Scalars: []Scalar{}, Blocks: []BlockText{}, Unobserved: []Hex{}, InnerLoops: []InnerLoop{}}
	ch.hs = hs
	ch.static()
	ch.dynamic()
	// The nest verdict.
	best := ""
	for l, lv := range hs.Levels {
		sum.Levels = append(sum.Levels, lv.Verdict)
		switch lv.Verdict {
		case VerdictParallel:
			hs.ParallelLevels = append(hs.ParallelLevels, l)
			best = VerdictParallel
		case VerdictReduction:
			if best == "" || best == VerdictSequential {
				best = VerdictReduction
			}
		default:
			if best == "" {
				best = VerdictSequential
			}
		}
	}
	if hs.Verdict == "" {
		hs.Verdict = best
	}
	if hs.Reason == "" {
		var rs []string
		for l, lv := range hs.Levels {
			rs = append(rs, fmt.Sprintf("%s: %s", indexName(l), lv.Reason))
		}
		hs.Reason = strings.Join(rs, "; ")
	}
	sum.Verdict, sum.Reason, sum.ParallelLevels = hs.Verdict, hs.Reason, hs.ParallelLevels
	return sum, hs
}

// static fills in what the CFG tells: levels, blocks, liveness, GVInst.
func (ch *chain) static() {
	n, hs := ch.n, ch.hs
	L := n.loops[ch.r].loop
	live := ch.c.live[L.Func]
	hs.LiveIn = live[L.Header.Addr].names()
	var out slots
	seen := map[uint64]bool{}
	for _, e := range L.Exits {
		out |= live[e.To.Addr]
		if !seen[e.To.Addr] {
			seen[e.To.Addr] = true
			hs.Exits = append(hs.Exits, Hex(e.To.Addr))
		}
	}
	hs.LiveOut = out.names()
	for l, k := range ch.lv {
		lp := n.loops[k].loop
		lev := Level{Index: indexName(l), Header: Hex(lp.Header.Addr), LiveIn: lp.carriedIn().names(),
			IVs: []IV{}, Invariants: []Loc{}, Latches: []Hex{}, Exits: []Hex{}, Blocks: []Hex{}}
		for _, b := range lp.Latches {
			lev.Latches = append(lev.Latches, Hex(b.Last().Addr))
		}
		for _, e := range lp.Exits {
			lev.Exits = append(lev.Exits, Hex(e.To.Addr))
		}
		for _, b := range lp.Blocks {
			lev.Blocks = append(lev.Blocks, Hex(b.Addr))
		}
		for _, b := range lp.Cold {
			lev.Cold = append(lev.Cold, Hex(b.Addr))
		}
		ch.levels = append(ch.levels, lev)
	}
	hs.Blocks = ch.c.blockTexts(ch.memo, L)
}

// blockTexts lifts the VBlocks of loop L: every block start control can
// jump to.
func (c *Collector) blockTexts(memo *analysisMemo, L *Loop) []BlockText {
	out := []BlockText{}
	for _, b := range L.Blocks {
		start := b == L.Header
		for _, p := range b.Preds {
			if l := p.Last(); l.Term != TermFall || l.Next != b.Addr {
				start = true
			}
		}
		if !start {
			continue
		}
		if bt, ok := c.blockText(memo, b.Addr); ok {
			out = append(out, bt)
		}
	}
	return out
}

// blockText lifts, optimizes and prints the VBlock at addr, once per
// Finish (analysisMemo.blocks): the chains of a nest list the blocks of
// their inner loops again, and listing the blocks (static) was 10% of
// heat3d's analysis at its medium size. It reports false for a block
// that does not lift.
func (c *Collector) blockText(memo *analysisMemo, addr uint64) (BlockText, bool) {
	if bt, ok := memo.blocks[addr]; ok {
		return bt.text, bt.ok
	}
	var bt BlockText
	vb, err := c.lift.Translate(addr)
	ok := err == nil && vb != nil
	if ok {
		cp := *vb
		cp.Insts = append([]gvinst.Inst(nil), vb.Insts...)
		if gvinst.Optimize(&cp) != nil {
			cp = *vb
		}
		bt = BlockText{Addr: Hex(cp.Addr), End: Hex(cp.End), GVInst: gvinst.Print(&cp)}
	}
	memo.blocks[addr] = liftedBlock{bt, ok}
	return bt, ok
}

// scalarClass is what the header snapshots say of one slot at one level.
type scalarClass struct {
	kind string // invariant|iv|varying|unknown
	step int64
	bits int // the width the IV steps in: 64, or 32 for a 32-bit register
	// steps are the IV's steps per level entry; stepVaries is set when
	// they differ (the step is then an invariant of each entry).
	steps      map[string]int64
	stepVaries bool
	fits32     bool              // every value seen fits in 32 bits
	init       map[string]uint64 // value at iteration 0, per level entry
}

// classifyKey names one classify question: a slot of a loop's snapshots,
// read in some width.
type classifyKey struct {
	info     *loopInfo
	si, size int
}

// snapGroup is the snapshots of one entry of a loop (snapEntries).
type snapGroup struct {
	key string // groupKey of the nest entry and the enclosing loops' counters
	obs []snapObs
}

// snapObs is one snapshot of a snapGroup: the loop's counter, and the
// snapshot's index in the loop's snaps.
type snapObs struct {
	t    int32
	snap int
}

// snapEntries groups loop k's snapshots by entry of the loop, in the
// order the entries were first seen; worked out once per Finish, as every
// slot's classify groups them alike.
func (ch *chain) snapEntries(k int) []snapGroup {
	info := ch.n.loops[k]
	if gs, ok := ch.memo.snapEntries[info]; ok {
		return gs
	}
	var gs []snapGroup
	at := map[string]int{}
	for i, s := range info.snaps {
		key := ch.memo.groupKey(s.entry, s.iters[:len(s.iters)-1])
		g, ok := at[key]
		if !ok {
			g = len(gs)
			at[key] = g
			gs = append(gs, snapGroup{key: key})
		}
		gs[g].obs = append(gs[g].obs, snapObs{t: s.iters[len(s.iters)-1], snap: i})
	}
	ch.memo.snapEntries[info] = gs
	return gs
}

// classify looks at slot index si of loop k's snapshots. The answer is
// kept for the Finish (analysisMemo.classes): each chain of a nest asks
// it again of the loops it shares with the others, and callers only read
// its maps.
func (ch *chain) classify(k, si int, size int) scalarClass {
	key := classifyKey{ch.n.loops[k], si, size}
	if sc, ok := ch.memo.classes[key]; ok {
		return sc
	}
	sc := ch.classifySnaps(k, si, size)
	ch.memo.classes[key] = sc
	return sc
}

// classifySnaps is classify, worked out.
func (ch *chain) classifySnaps(k, si int, size int) scalarClass {
	info := ch.n.loops[k]
	value := func(snap int) uint64 {
		v := info.snaps[snap].vals[si]
		if size == 4 {
			v = uint64(uint32(v))
		}
		return v
	}
	groups := ch.snapEntries(k)
	fits32 := true
	for i := range info.snaps {
		if value(i)>>32 != 0 {
			fits32 = false
		}
	}
	sc := scalarClass{kind: "unknown", init: map[string]uint64{}, bits: 64, fits32: fits32}
	// try checks for a step in a width: v_t - v_0 == step*t, wrapping,
	// with one step per entry of the level. What it finds does not depend
	// on the order of the entries.
	try := func(mask uint64) (inv, iv, multi bool, steps map[string]int64) {
		inv, iv = true, true
		steps = map[string]int64{}
		for _, g := range groups {
			key := g.key
			var v0 uint64
			has0 := false
			for _, o := range g.obs {
				if o.t == 0 {
					v0, has0 = value(o.snap), true
				}
			}
			if !has0 {
				continue
			}
			sc.init[key] = v0
			stepKnown := false
			var step int64
			for _, o := range g.obs {
				if o.t == 0 {
					continue
				}
				multi = true
				diff := (value(o.snap) - v0) & mask
				if diff != 0 {
					inv = false
				}
				if !stepKnown {
					sd := int64(diff)
					if mask != ^uint64(0) {
						sd = int64(int32(uint32(diff)))
					}
					if sd%int64(o.t) != 0 {
						iv = false
						continue
					}
					step, stepKnown = sd/int64(o.t), true
					steps[key] = step
				}
				if uint64(step)*uint64(o.t)&mask != diff {
					iv = false
				}
			}
		}
		return inv, iv, multi, steps
	}
	inv, iv, multi, steps := try(^uint64(0))
	if !iv && fits32 {
		sc.bits = 32
		inv, iv, multi, steps = try(0xffffffff)
	}
	sc.steps = steps
	first := true
	for _, k := range slices.Sorted(maps.Keys(steps)) {
		if first {
			sc.step, first = steps[k], false
		} else if steps[k] != sc.step {
			sc.stepVaries = true
		}
	}
	switch {
	case !multi:
	case inv:
		sc.kind = "invariant"
	case iv:
		sc.kind = "iv"
	default:
		sc.kind = "varying"
	}
	return sc
}

// siteFit is the affine fit of one access site.
type siteFit struct {
	id     int
	s      *site
	fit    *affineFit
	err    error
	depth  int   // loops the site is inside: levels of the chain, then inner loops
	path   []int // for a site below the last level: the inner loops holding it (positions in chain.extra), outermost first
	lo, hi uint64
	n      int
}

// dynamic analyses the samples: fits, scalars, dependences.
func (ch *chain) dynamic() {
	c, n, hs := ch.c, ch.n, ch.hs
	d := len(ch.lv)
	levelOf := map[int]int{}
	for l, k := range ch.lv {
		levelOf[k] = l
	}
	rootInfo := n.loops[ch.r]
	// Entries of the chain.
	entries := map[string]bool{}
	for _, s := range rootInfo.snaps {
		if s.iters[len(s.iters)-1] == 0 {
			entries[ch.memo.groupKey(s.entry, s.iters[:ch.p])] = true
		}
	}
	hs.Entries = uint64(len(entries))
	// Access sites of the chain.
	imperfect := ""
	pts := map[int][]point{}
	for _, smp := range n.samples {
		s := &c.sites[smp.site]
		chn := n.loops[s.loop].chain
		if len(chn) <= ch.p || chn[ch.p] != ch.r {
			continue
		}
		if _, ok := levelOf[s.loop]; !ok {
			// A site below the last level, in one of its inner loops at
			// any depth (gcc's vector loop and its epilogue, or the
			// sibling loops of an imperfect nest): each loop on its path
			// gets an index of its own.
			if len(chn) <= ch.p+d || chn[ch.p+d-1] != ch.lv[d-1] {
				if imperfect == "" {
					imperfect = fmt.Sprintf("the access at %#x is outside the levels of the nest", s.x86)
				}
				continue
			}
			ch.innerPath(chn[ch.p+d:])
		}
		pts[int(smp.site)] = append(pts[int(smp.site)], point{key: ch.memo.groupKey(smp.entry, smp.iters[:ch.p]), vec: smp.iters[ch.p:], val: smp.addr})
	}
	ids := make([]int, 0, len(pts))
	for id := range pts {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	var fits []*siteFit
	nonAffine := ""
	for _, id := range ids {
		s := &c.sites[id]
		sf := &siteFit{id: id, s: s, depth: levelOf[s.loop] + 1, lo: ^uint64(0), n: len(pts[id])}
		if e, ok := ch.extraIdx[s.loop]; ok {
			sf.path = ch.extra[e].path
			sf.depth = d + len(sf.path)
		}
		for _, p := range pts[id] {
			sf.lo = min(sf.lo, p.val)
			sf.hi = max(sf.hi, p.val+uint64(s.size))
		}
		sf.fit, sf.err = fitAffine(pts[id], sf.depth, ch.fixedLevels(s, sf.path, sf.depth))
		if s.varSize && sf.err == nil {
			sf.err = fmt.Errorf("a rep movs/stos whose length changes between iterations")
		}
		if sf.err != nil && s.stack.kind == opdUnknown && nonAffine == "" {
			nonAffine = fmt.Sprintf("access at %#x fits no affine function: %v", s.x86, sf.err)
		}
		fits = append(fits, sf)
	}
	// Every memory access of the chain must have been observed: one that
	// ran only between the sampled iterations, or not at all, could carry
	// a dependence nothing here sees.
	if nonAffine == "" {
		if a := ch.unobserved(pts); a != 0 {
			nonAffine = fmt.Sprintf("the access at %#x ran but was not observed in the sampled iterations", a)
		}
	}
	// Scalars and induction variables per level.
	scalarBlock := make([]string, d)   // a carried scalar that makes the level sequential
	scalarRed := make([][]string, d)   // reductions carried by the level
	privateSlot := map[[3]int64]bool{} // stack slots not to test as memory
	ivFound := make([]bool, d)
	for l, k := range ch.lv {
		info := n.loops[k]
		lp := info.loop
		lev := &ch.levels[l]
		for si, b := range info.snapRegs {
			if b >= 32 || b == flagsBit || info.liveIn&(1<<b) == 0 {
				continue
			}
			loc := Loc{Reg: bitName(b)}
			sc := ch.classify(k, si, 8)
			var high scalarClass
			if b >= 16 {
				// An SSE register is an IV or an invariant only if its
				// high half is one too.
				for hi, hb := range info.snapRegs {
					if hb == xmmHigh+b-16 {
						high = ch.classify(k, hi, 8)
					}
				}
				switch {
				case sc.kind == "invariant" && high.kind == "iv":
					sc.kind = "iv"
					sc.step, sc.steps, sc.stepVaries = 0, map[string]int64{}, false
				case sc.kind == "iv" && (high.kind == "invariant" || high.kind == "iv" && !high.stepVaries):
				case sc.kind == "invariant" && (high.kind == "invariant" || high.kind == "unknown"):
				case sc.kind == "unknown":
				default:
					sc.kind = "varying"
				}
			}
			if sc.kind == "iv" && loadsData(lp, b) {
				// Loaded data that stepped like an induction variable
				// while watched (loadsData).
				sc.kind = "varying"
			}
			// The snapshots see only some iterations: a register the loop
			// writes is never taken for an invariant on their word (a
			// conditional update may fall between them).
			// A register the loop spills and reloads, to a stack slot or
			// another register (its value at every back edge is the
			// header's), is an induction variable of step 0: written in
			// the loop, yet the same in every iteration.
			// So is one whose every write in the loop loads one constant
			// from read-only memory (constReload), when the trace shows
			// it holding the same value on entry.
			if ch.writes(lp, b) && (sc.kind == "invariant" || sc.kind == "unknown") && (spillRestored(lp, b, sc.fits32) || copyRestored(lp, b, sc.fits32)) {
				sc.kind, sc.step, sc.steps, sc.stepVaries = "iv", 0, map[string]int64{}, false
			} else if _, why := ch.constReload(lp, b, fits); ch.writes(lp, b) && sc.kind == "invariant" && why == "" {
				sc.kind, sc.step, sc.steps, sc.stepVaries = "iv", 0, map[string]int64{}, false
			} else if ch.writes(lp, b) && (sc.kind == "invariant" || sc.kind == "unknown") {
				sc.kind = "varying"
			} else if sc.kind == "unknown" {
				sc.kind = "invariant"
			}
			switch sc.kind {
			case "invariant":
				lev.Invariants = append(lev.Invariants, loc)
			case "iv":
				iv := ch.ivOf(loc, sc, l)
				if high.kind == "iv" {
					iv.StepHigh = high.step
				}
				lev.IVs = append(lev.IVs, iv)
				ivFound[l] = true
			case "varying":
				if op, ok := regAccumulates(lp, b); ok {
					scalarRed[l] = append(scalarRed[l], loc.String())
					hs.Scalars = append(hs.Scalars, Scalar{Loc: loc, Level: l, Kind: VerdictReduction, Op: op})
				} else if r, why := ch.reloadOf(l, lp, b, fits); why == "" {
					lev.Reloads = append(lev.Reloads, r)
					hs.Scalars = append(hs.Scalars, Scalar{Loc: loc, Level: l, Kind: "reload"})
				} else {
					hs.Scalars = append(hs.Scalars, Scalar{Loc: loc, Level: l, Kind: "carried"})
					if scalarBlock[l] == "" {
						scalarBlock[l] = fmt.Sprintf("register %s carries a value from one iteration to the next: %s", loc, why)
					}
				}
			}
		}
		if info.liveIn&(1<<flagsBit) != 0 && scalarBlock[l] == "" {
			// Flags carried from one iteration to the next (an adc chain).
			scalarBlock[l] = "the x86 flags carry a value from one iteration to the next"
		}
		for j, st := range info.stack {
			loc := Loc{Base: st.slot.String(), Disp: st.disp, Size: st.size}
			key := [3]int64{int64(st.slot), st.disp, int64(st.size)}
			written := false
			for _, sf := range fits {
				if sf.s.write && sameSlot(sf.s.stack, st) && n.loops[k].loop.Contains(ch.blockOf(sf.s.x86)) {
					written = true
				}
			}
			sc := ch.classify(k, len(info.snapRegs)+j, st.size)
			if !written {
				if sc.kind == "invariant" || sc.kind == "unknown" {
					lev.Invariants = append(lev.Invariants, loc)
				}
				privateSlot[key] = true
				continue
			}
			switch {
			case ch.privateAt(st, l):
				privateSlot[key] = true
				hs.Scalars = append(hs.Scalars, Scalar{Loc: loc, Level: l, Kind: "private"})
			case sc.kind == "iv":
				lev.IVs = append(lev.IVs, ch.ivOf(loc, sc, l))
				ivFound[l] = true
				privateSlot[key] = true
			default:
				if op, ok := ch.slotAccumulates(st, l); ok {
					scalarRed[l] = append(scalarRed[l], loc.String())
					hs.Scalars = append(hs.Scalars, Scalar{Loc: loc, Level: l, Kind: VerdictReduction, Op: op})
					privateSlot[key] = true
				} else {
					hs.Scalars = append(hs.Scalars, Scalar{Loc: loc, Level: l, Kind: "carried"})
					if scalarBlock[l] == "" {
						scalarBlock[l] = fmt.Sprintf("stack slot %s carries a value from one iteration to the next", loc)
					}
				}
			}
		}
		if sb, ok := findBound(lp); ok {
			lev.Bound = ch.boundOf(sb, lev)
		}
	}
	// Trip counts.
	tripFits := make([]*affineFit, d)
	tripErr := ""
	for l, k := range ch.lv {
		var tp []point
		for _, t := range n.loops[k].trips {
			if len(t.iters) < ch.p {
				continue
			}
			tp = append(tp, point{key: ch.memo.groupKey(t.entry, t.iters[:ch.p]), vec: t.iters[ch.p:], val: uint64(t.trips)})
		}
		lev := &ch.levels[l]
		for _, p := range tp {
			if len(lev.ObservedTrips) < 8 {
				lev.ObservedTrips = append(lev.ObservedTrips, int64(p.val))
			}
		}
		if len(tp) == 0 {
			if tripErr == "" {
				tripErr = fmt.Sprintf("trip count of level %s not observed", indexName(l))
			}
			continue
		}
		f, err := fitAffine(tp, l, nil)
		if err != nil {
			if tripErr == "" {
				tripErr = fmt.Sprintf("trip count of level %s is not affine in the outer indices: %v", indexName(l), err)
			}
			continue
		}
		tripFits[l] = f
		lev.TripCount = ch.tripExpr(f, l, nil)
	}
	for i := range ch.extra {
		e := &ch.extra[i]
		outer := d + len(e.path) - 1 // the loops enclosing it
		var tp []point
		for _, t := range n.loops[e.loop].trips {
			if len(t.iters) != ch.p+outer {
				continue
			}
			if t.trips < 1 {
				tp = nil
				break
			}
			tp = append(tp, point{key: ch.memo.groupKey(t.entry, t.iters[:ch.p]), vec: t.iters[ch.p:], val: uint64(t.trips)})
		}
		f, err := fitAffine(tp, outer, nil)
		if len(tp) == 0 || err != nil {
			if imperfect == "" {
				imperfect = fmt.Sprintf("the inner loop at %#x has no affine, positive trip count", n.loops[e.loop].loop.Header.Addr)
			}
			continue
		}
		e.trip = f
	}
	for i := range ch.extra {
		e := &ch.extra[i]
		lp := n.loops[e.loop]
		il := InnerLoop{Index: e.name, Header: Hex(lp.loop.Header.Addr), Parent: indexName(d - 1)}
		if len(e.path) > 1 {
			il.Parent = ch.extra[e.path[len(e.path)-2]].name
		}
		for _, t := range lp.trips {
			if len(il.ObservedTrips) < 8 {
				il.ObservedTrips = append(il.ObservedTrips, int64(t.trips))
			}
		}
		if e.trip != nil {
			il.TripCount = ch.tripExpr(e.trip, d-1, e.path[:len(e.path)-1])
		}
		hs.InnerLoops = append(hs.InnerLoops, il)
	}
	for l := range ch.levels {
		if !ivFound[l] && tripErr == "" {
			tripErr = fmt.Sprintf("no induction variable found for level %s", indexName(l))
		}
	}
	// Accesses and arrays.
	ch.accesses(fits)
	ch.innerVerdicts = make([]innerVerdict, len(ch.extra))
	hs.innerScalar = make([]innerVerdict, len(ch.extra))
	for e := range ch.extra {
		ch.innerVerdicts[e] = innerVerdict{kind: VerdictParallel}
		hs.innerScalar[e] = ch.innerScalars(e, fits)
	}
	// Verdicts.
	verdicts := make([]string, d)
	reasons := make([]string, d)
	conflicts := make([]*Conflict, d)
	for l := range verdicts {
		verdicts[l] = VerdictParallel
	}
	seq := func(l int, why string, cf *Conflict) {
		if verdicts[l] != VerdictSequential {
			verdicts[l], reasons[l], conflicts[l] = VerdictSequential, why, cf
		}
	}
	for l := range verdicts {
		switch {
		case imperfect != "":
			seq(l, imperfect, nil)
		case nonAffine != "":
			seq(l, nonAffine, nil)
		case tripErr != "":
			seq(l, tripErr, nil)
		case scalarBlock[l] != "":
			seq(l, scalarBlock[l], &Conflict{Sites: [2]int{-1, -1}, Witness: scalarBlock[l]})
		}
	}
	if imperfect == "" && nonAffine == "" && tripErr == "" {
		ch.depend(fits, tripFits, privateSlot, verdicts, reasons, conflicts)
		ch.traceCheck(fits, privateSlot, verdicts, reasons, conflicts)
	}
	for l := range verdicts {
		if verdicts[l] == VerdictParallel && len(scalarRed[l]) > 0 {
			verdicts[l] = VerdictReduction
			reasons[l] = "accumulates into " + strings.Join(scalarRed[l], ", ")
		}
		if reasons[l] == "" {
			reasons[l] = "no dependence carried (exact test on the fitted accesses, checked against the trace)"
		}
		ch.levels[l].Verdict, ch.levels[l].Reason, ch.levels[l].Conflict = verdicts[l], reasons[l], conflicts[l]
	}
	hs.Levels = ch.levels
	for e := range hs.InnerLoops {
		iv := ch.innerVerdicts[e]
		for _, r := range []string{imperfect, nonAffine, tripErr} {
			if r != "" {
				iv = innerVerdict{kind: VerdictSequential, reason: r}
				break
			}
		}
		if iv.reason == "" {
			iv.reason = "no dependence carried (exact test on the fitted accesses)"
		}
		il := &hs.InnerLoops[e]
		il.Verdict, il.Reason, il.Conflict = iv.kind, iv.reason, iv.conflict
	}
	if imperfect != "" || nonAffine != "" || tripErr != "" {
		hs.Verdict = VerdictSequential
		for _, r := range []string{imperfect, nonAffine, tripErr} {
			if r != "" {
				hs.Reason = r
				break
			}
		}
	}
}

// innerScalars is the scalar part of an inner loop's verdict: registers
// and stack slots it carries from one iteration to the next (induction
// variables aside). An accumulating register makes it a reduction; any
// other carried value, a written stack slot that is no induction
// variable, or carried flags make it sequential.
func (ch *chain) innerScalars(e int, fits []*siteFit) innerVerdict {
	k := ch.extra[e].loop
	info := ch.n.loops[k]
	lp := info.loop
	v := innerVerdict{kind: VerdictParallel}
	var red []string
	for si, b := range info.snapRegs {
		if b >= 32 || b == flagsBit || info.liveIn&(1<<b) == 0 || !ch.writes(lp, b) {
			continue
		}
		loc := Loc{Reg: bitName(b)}
		if b < 16 && ch.classify(k, si, 8).kind == "iv" && !loadsData(lp, b) {
			continue
		}
		if _, ok := regAccumulates(lp, b); ok {
			red = append(red, loc.String())
			continue
		}
		return innerVerdict{kind: VerdictSequential, reason: fmt.Sprintf("register %s carries a value from one iteration to the next", loc)}
	}
	if info.liveIn&(1<<flagsBit) != 0 {
		return innerVerdict{kind: VerdictSequential, reason: "the x86 flags carry a value from one iteration to the next"}
	}
	for j, st := range info.stack {
		written := false
		for _, sf := range fits {
			if sf.s.write && sameSlot(sf.s.stack, st) && lp.Contains(ch.blockOf(sf.s.x86)) {
				written = true
			}
		}
		if !written || ch.classify(k, len(info.snapRegs)+j, st.size).kind == "iv" {
			continue
		}
		loc := Loc{Base: st.slot.String(), Disp: st.disp, Size: st.size}
		return innerVerdict{kind: VerdictSequential, reason: fmt.Sprintf("stack slot %s is written in the loop and is no induction variable", loc)}
	}
	if len(red) > 0 {
		v = innerVerdict{kind: VerdictReduction, reason: "accumulates into " + strings.Join(red, ", ")}
	}
	return v
}

// unobserved returns the address of a load or store of the chain's code
// that is not a stack slot, ran, and has no sample, or 0. Those that never
// ran go to the hot spot's Unobserved list.
func (ch *chain) unobserved(pts map[int][]point) uint64 {
	L := ch.n.loops[ch.r].loop
	for _, b := range L.Blocks {
		for _, x := range b.Insns {
			ord := 0
			for j := range x.Code {
				in := &x.Code[j]
				if in.Op != gvinst.OpLd && in.Op != gvinst.OpSt {
					continue
				}
				k := ord
				ord++
				if a := addrOf(x, j); a.kind == opdSlot && isStackBase(a.slot) {
					continue
				}
				id, ok := ch.c.accSite[[2]uint64{x.Addr, uint64(k)}]
				if ok && len(pts[id]) > 0 {
					continue
				}
				if ch.c.executed[x.Addr] {
					return x.Addr
				}
				// Code that never ran: listed for phase 2, which must not
				// run it (reaching it fails the hot spot's guard).
				if n := len(ch.hs.Unobserved); n == 0 || ch.hs.Unobserved[n-1] != Hex(x.Addr) {
					ch.hs.Unobserved = append(ch.hs.Unobserved, Hex(x.Addr))
				}
			}
		}
	}
	return 0
}

// fixedLevels reports, for each position of site s's iteration vector
// (the chain's levels, then the inner loops of path: depth in all),
// whether the code keeps the site's address from moving at that position
// (fitAffine's fixed): the address is a constant, or one general register
// plus a displacement where the loop of that position never writes the
// register. Nil when the address is of neither form.
func (ch *chain) fixedLevels(s *site, path []int, depth int) []bool {
	x := ch.c.insnAt(ch.n, s.x86)
	if x == nil {
		return nil
	}
	ord := 0
	for j := range x.Code {
		in := &x.Code[j]
		if in.Op != gvinst.OpLd && in.Op != gvinst.OpSt {
			continue
		}
		if ord++; ord-1 != s.ordinal {
			continue
		}
		a := addrOf(x, j)
		fixed := make([]bool, depth)
		if a.kind == opdConst {
			// A constant address (a rip-relative global).
			for m := range fixed {
				fixed[m] = true
			}
			return fixed
		}
		b := slotBit(a.slot)
		if a.kind != opdSlot || b < 0 || b >= 16 {
			return nil
		}
		for m := range fixed {
			k := 0
			if d := len(ch.lv); m < d {
				k = ch.lv[m]
			} else if m-d < len(path) {
				k = ch.extra[path[m-d]].loop
			} else {
				return nil
			}
			fixed[m] = !ch.writes(ch.n.loops[k].loop, b)
		}
		return fixed
	}
	return nil
}

// writes is writes(l, b), with the slots each loop writes worked out once
// per Finish (analysisMemo).
func (ch *chain) writes(l *Loop, b int) bool {
	defs, ok := ch.memo.loopDefs[l]
	if !ok {
		for _, blk := range l.Blocks {
			for _, x := range blk.Insns {
				_, d := useDef(x)
				defs |= d
			}
		}
		ch.memo.loopDefs[l] = defs
	}
	return defs&(1<<b) != 0
}

// writes reports whether some instruction of loop l writes tracked slot b.
func writes(l *Loop, b int) bool {
	for _, blk := range l.Blocks {
		for _, x := range blk.Insns {
			if _, d := useDef(x); d&(1<<b) != 0 {
				return true
			}
		}
	}
	return false
}

// blockOf returns the CFG block of the nest holding x86 address a.
func (ch *chain) blockOf(a uint64) *Block {
	for _, b := range ch.n.root.Blocks {
		if a >= b.Addr && a < b.End {
			return b
		}
	}
	return nil
}

func sameSlot(a, b operand) bool {
	return a.kind == opdSlot && b.kind == opdSlot && a.slot == b.slot && a.disp == b.disp
}

// privateAt reports whether stack slot st is written before it is read in
// every sampled iteration of level l (recorded from its start: not one of
// the collector's partial iterations).
func (ch *chain) privateAt(st operand, l int) bool {
	c, n := ch.c, ch.n
	first := map[string]bool{} // iteration → first access was a write
	any := false
	for _, smp := range n.samples {
		s := &c.sites[smp.site]
		if !sameSlot(s.stack, st) {
			continue
		}
		chn := n.loops[s.loop].chain
		if len(chn) <= ch.p+l || chn[ch.p] != ch.r {
			continue
		}
		key := ch.memo.groupKey(smp.entry, smp.iters[:ch.p+l+1])
		if n.partial[key] {
			continue
		}
		if _, ok := first[key]; !ok {
			first[key] = s.write
			any = true
		}
	}
	if !any {
		return false
	}
	for _, w := range first {
		if !w {
			return false
		}
	}
	return true
}

// slotAccumulates looks for a read and a write of stack slot st in one
// block of level l forming an accumulation.
func (ch *chain) slotAccumulates(st operand, l int) (string, bool) {
	lp := ch.n.loops[ch.lv[l]].loop
	type ref struct {
		x *Insn
		i int
		b *Block
	}
	var reads, writes []ref
	for _, b := range lp.Blocks {
		for _, x := range b.Insns {
			for i := range x.Code {
				in := &x.Code[i]
				if in.Op != gvinst.OpLd && in.Op != gvinst.OpSt {
					continue
				}
				a := addrOf(x, i)
				if !sameSlot(a, st) {
					continue
				}
				if in.Op == gvinst.OpLd {
					reads = append(reads, ref{x, i, b})
				} else {
					writes = append(writes, ref{x, i, b})
				}
			}
		}
	}
	if len(writes) != 1 {
		return "", false
	}
	w := writes[0]
	op := ""
	for _, r := range reads {
		o, ok := accumulates(w.b, r.x, r.i, w.x, w.i)
		if ok && r.b == w.b {
			if op != "" {
				return "", false
			}
			op = o
			continue
		}
		return "", false
	}
	return op, op != ""
}

// ivOf builds an IV record.
func (ch *chain) ivOf(loc Loc, sc scalarClass, l int) IV {
	iv := IV{Loc: loc, Step: sc.step, Bits: sc.bits}
	if sc.stepVaries {
		iv.Step = 0
		for _, k := range slices.Sorted(maps.Keys(sc.steps)) {
			if len(iv.StepObserved) < 8 {
				iv.StepObserved = append(iv.StepObserved, sc.steps[k])
			}
		}
		iv.StepLoc = ch.stepLoc(sc, l)
	}
	for _, k := range slices.Sorted(maps.Keys(sc.init)) {
		if len(iv.InitObserved) < 8 {
			iv.InitObserved = append(iv.InitObserved, int64(sc.init[k]))
		}
	}
	iv.Init = ch.initExpr(sc, l)
	return iv
}

// initExpr writes an IV's value at iteration 0 of level l as an affine
// expression of the outer indices and an entry-state slot (or a
// constant), fitted on every level entry seen; "" when none fits.
func (ch *chain) initExpr(sc scalarClass, l int) string {
	k := ch.lv[l]
	var pts []point
	for _, s := range ch.n.loops[k].snaps {
		if s.iters[len(s.iters)-1] != 0 {
			continue
		}
		key := ch.memo.groupKey(s.entry, s.iters[:len(s.iters)-1])
		v, ok := sc.init[key]
		if !ok {
			continue
		}
		if sc.bits == 32 {
			v = uint64(uint32(v))
		}
		pts = append(pts, point{key: ch.memo.groupKey(s.entry, s.iters[:ch.p]), vec: s.iters[ch.p : len(s.iters)-1], val: v})
	}
	f, err := fitAffine(pts, l, nil)
	if err != nil || len(pts) == 0 {
		return ""
	}
	bases := map[string]uint64{}
	for _, key := range f.keys {
		bases[key] = f.bases[key]
	}
	base := ""
	if c, same := sameValue(bases); same && (len(bases) > 1 || c < 1<<32) {
		base = strconv.FormatInt(int64(c), 10)
	} else if loc, off, ok := ch.matchSlot(bases, 1<<20); ok {
		base = withOffset(ch.varFor(loc, "value", l, bases, off), off)
	} else if same {
		base = strconv.FormatInt(int64(c), 10)
	} else {
		return ""
	}
	return fmtCoeffs(f.coeffs, &base)
}

// stepLoc finds a slot of level l's snapshots that holds an IV's step in
// every entry of the level.
func (ch *chain) stepLoc(sc scalarClass, l int) *Loc {
	info := ch.n.loops[ch.lv[l]]
	at0 := map[string][]uint64{}
	for _, s := range info.snaps {
		if s.iters[len(s.iters)-1] == 0 {
			at0[ch.memo.groupKey(s.entry, s.iters[:len(s.iters)-1])] = s.vals
		}
	}
	mask := ^uint64(0)
	if sc.bits == 32 {
		mask = 0xffffffff
	}
	nslots := len(info.snapRegs) + len(info.stack)
	for si := 0; si < nslots; si++ {
		ok := len(sc.steps) > 0
		for k, st := range sc.steps {
			vals, has := at0[k]
			if !has || vals[si]&mask != uint64(st)&mask {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		if si < len(info.snapRegs) {
			return &Loc{Reg: bitName(info.snapRegs[si])}
		}
		st := info.stack[si-len(info.snapRegs)]
		return &Loc{Base: st.slot.String(), Disp: st.disp, Size: st.size}
	}
	return nil
}

// boundOf turns a static bound into the format's, putting the IV first.
func (ch *chain) boundOf(sb staticBound, lev *Level) *Bound {
	locOf := func(o operand) (Loc, string) {
		switch o.kind {
		case opdSlot:
			if b := slotBit(o.slot); b >= 0 && b < 32 {
				return Loc{Reg: bitName(b)}, bitName(b)
			}
		case opdLoad:
			l := Loc{Base: o.slot.String(), Disp: o.disp, Size: o.size}
			return l, l.String()
		case opdConst:
			return Loc{}, strconv.FormatInt(o.value, 10)
		}
		return Loc{}, "?"
	}
	isIV := func(l Loc) bool {
		for _, iv := range lev.IVs {
			if iv.Loc == l {
				return true
			}
		}
		return false
	}
	ivLoc, _ := locOf(sb.a)
	other, limit := locOf(sb.b)
	rel := sb.rel
	if !isIV(ivLoc) && isIV(other) {
		ivLoc, _ = locOf(sb.b)
		_, limit = locOf(sb.a)
		rel = swapRel[rel]
	}
	return &Bound{IV: ivLoc, Cond: rel, Signed: sb.signed, Limit: limit, X86: Hex(sb.x86)}
}

// tripExpr writes a fitted trip count: outer indices plus, per chain
// entry, a value that is an entry-state slot plus a small constant (a
// bound variable with its location), a bound variable seen to differ
// between entries, or a constant.
func (ch *chain) tripExpr(f *affineFit, l int, path []int) string {
	bases := map[string]uint64{}
	for _, k := range f.keys {
		bases[k] = f.bases[k]
	}
	// A slot is named only when entries with different values confirm
	// it: one value matches too many slots by chance.
	base := ""
	if c, same := sameValue(bases); same {
		base = strconv.FormatInt(int64(c), 10)
	} else if loc, off, ok := ch.matchSlot(bases, 2); ok {
		name := ch.varFor(loc, "bound", l, bases, off)
		base = withOffset(name, off)
	} else {
		name := fmt.Sprintf("bound%d", countKind(ch.hs.Vars, "bound"))
		v := Var{Name: name, Kind: "bound", Level: l}
		for _, k := range f.keys {
			if len(v.Observed) < 8 {
				v.Observed = append(v.Observed, int64(f.bases[k]))
			}
		}
		ch.hs.Vars = append(ch.hs.Vars, v)
		base = name
	}
	return ch.namedCoeffs(f.coeffs, path, base)
}

// sameValue reports whether every value of m is the same one.
func sameValue(m map[string]uint64) (uint64, bool) {
	first := true
	var v0 uint64
	for _, v := range m {
		if first {
			v0, first = v, false
		} else if v != v0 {
			return 0, false
		}
	}
	return v0, !first
}

// withOffset writes name + off.
func withOffset(name string, off int64) string {
	switch {
	case off == 0:
		return name
	case off < 0:
		return fmt.Sprintf("%s - %d", name, -off)
	}
	return fmt.Sprintf("%s + %d", name, off)
}

// matchSlot finds the slot of the chain root's snapshot at iteration 0 of
// each chain entry that, plus one constant off (|off| <= maxOff), gives
// vals in every entry; the smallest |off| wins.
func (ch *chain) matchSlot(vals map[string]uint64, maxOff int64) (Loc, int64, bool) {
	info := ch.n.loops[ch.r]
	at0 := map[string][]uint64{}
	for _, s := range info.snaps {
		if s.iters[len(s.iters)-1] == 0 {
			at0[ch.memo.groupKey(s.entry, s.iters[:ch.p])] = s.vals
		}
	}
	best, bestOff := -1, int64(0)
	nslots := len(info.snapRegs) + len(info.stack)
	for si := 0; si < nslots; si++ {
		if si < len(info.snapRegs) && info.snapRegs[si] >= 32 {
			continue // the high half of an SSE register
		}
		ok := len(vals) > 0
		var off int64
		first := true
		for k, v := range vals {
			sv, has := at0[k]
			if !has {
				ok = false
				break
			}
			o := int64(v - sv[si])
			if first {
				off, first = o, false
			} else if o != off {
				ok = false
				break
			}
		}
		if !ok || off < -maxOff || off > maxOff {
			continue
		}
		if best < 0 || abs64(off) < abs64(bestOff) {
			best, bestOff = si, off
		}
	}
	if best < 0 {
		return Loc{}, 0, false
	}
	if best < len(info.snapRegs) {
		return Loc{Reg: bitName(info.snapRegs[best])}, bestOff, true
	}
	st := info.stack[best-len(info.snapRegs)]
	return Loc{Base: st.slot.String(), Disp: st.disp, Size: st.size}, bestOff, true
}

// varFor names the entry value at loc: an existing variable of that kind
// and place, or a new one (bound0…, var0…) with the values seen.
func (ch *chain) varFor(loc Loc, kind string, level int, vals map[string]uint64, off int64) string {
	for _, v := range ch.hs.Vars {
		if v.Kind == kind && v.Loc != nil && *v.Loc == loc {
			return v.Name
		}
	}
	prefix := "var"
	if kind == "bound" {
		prefix = "bound"
	}
	name := fmt.Sprintf("%s%d", prefix, countKind(ch.hs.Vars, kind))
	v := Var{Name: name, Kind: kind, Loc: &loc, Level: level}
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		if len(v.Observed) < 8 {
			v.Observed = append(v.Observed, int64(vals[k]-uint64(off)))
		}
	}
	ch.hs.Vars = append(ch.hs.Vars, v)
	return name
}

func countKind(vs []Var, kind string) int {
	n := 0
	for _, v := range vs {
		if v.Kind == kind {
			n++
		}
	}
	return n
}

// accesses fills the hot spot's accesses and arrays.
func (ch *chain) accesses(fits []*siteFit) {
	hs := ch.hs
	for l := range ch.lv {
		hs.Vars = append(hs.Vars, Var{Name: indexName(l), Kind: "index", Level: l})
	}
	// Arrays: union of overlapping footprints.
	parent := make([]int, len(fits))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i := range fits {
		for j := i + 1; j < len(fits); j++ {
			if fits[i].lo < fits[j].hi && fits[j].lo < fits[i].hi {
				parent[find(i)] = find(j)
			}
		}
	}
	group := map[int]int{}
	for i, sf := range fits {
		s := sf.s
		a := Access{Site: sf.id, Block: Hex(s.block), Index: s.index, X86: Hex(s.x86), Size: s.size, Kind: "read",
			Affine: sf.err == nil, Stack: s.stack.kind == opdSlot, Samples: sf.n, Footprint: [2]Hex{Hex(sf.lo), Hex(sf.hi)}, BaseObserved: []Hex{}}
		if s.write {
			a.Kind = "write"
		}
		if sf.err != nil {
			a.Why = sf.err.Error()
		} else {
			a.Coeffs = append([]int64(nil), sf.fit.coeffs...)
			for len(a.Coeffs) < len(ch.lv) {
				a.Coeffs = append(a.Coeffs, 0)
			}
			for q, e := range sf.path {
				a.Inner = append(a.Inner, InnerIndex{Index: ch.extra[e].name, Header: Hex(ch.n.loops[ch.extra[e].loop].loop.Header.Addr), Coeff: a.Coeffs[len(ch.lv)+q]})
			}
			for _, k := range sf.fit.keys {
				if len(a.BaseObserved) < 8 {
					a.BaseObserved = append(a.BaseObserved, Hex(sf.fit.bases[k]))
				}
			}
			a.Base = ch.baseExpr(sf)
			a.Function = ch.namedCoeffs(a.Coeffs, sf.path, a.Base)
			a.Coeffs = a.Coeffs[:len(ch.lv)]
		}
		a.Loop = ch.posName(sf.path, sf.depth-1)
		g := find(i)
		id, ok := group[g]
		if !ok {
			id = len(hs.Arrays)
			group[g] = id
			hs.Arrays = append(hs.Arrays, Array{ID: id, Sites: []int{}, Footprint: [2]Hex{Hex(sf.lo), Hex(sf.hi)}})
		}
		arr := &hs.Arrays[id]
		arr.Sites = append(arr.Sites, i)
		arr.Written = arr.Written || s.write
		arr.Footprint[0] = min(arr.Footprint[0], Hex(sf.lo))
		arr.Footprint[1] = max(arr.Footprint[1], Hex(sf.hi))
		a.Group = id
		hs.Accesses = append(hs.Accesses, a)
	}
}

// baseExpr names a site's base: a constant when it is the same at every
// entry (or a small address, a global of a non-PIE program), else a slot
// of the chain's entry state plus a constant, named var0, var1, ….
func (ch *chain) baseExpr(sf *siteFit) string {
	f := sf.fit
	bases := map[string]uint64{}
	for _, k := range f.keys {
		bases[k] = f.bases[k]
	}
	b0, same := sameValue(bases)
	if same && len(f.keys) > 1 || sf.s.stack.kind != opdSlot && b0 < 1<<32 {
		return fmt.Sprintf("%#x", b0)
	}
	loc, off, ok := ch.matchSlot(bases, 1<<20)
	if !ok {
		return fmt.Sprintf("%#x", b0)
	}
	return withOffset(ch.varFor(loc, "value", 0, bases, off), off)
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// memSites returns the fits the dependence test looks at: affine accesses
// not to private or scalar stack slots.
func memSites(fits []*siteFit, private map[[3]int64]bool) []*siteFit {
	var out []*siteFit
	for _, sf := range fits {
		if sf.err != nil {
			continue
		}
		if st := sf.s.stack; st.kind == opdSlot {
			if private[[3]int64{int64(st.slot), st.disp, int64(sf.s.size)}] || stackScalar(st, private) {
				continue
			}
		}
		out = append(out, sf)
	}
	return out
}

// stackScalar reports whether a stack slot overlapping st was classified.
func stackScalar(st operand, private map[[3]int64]bool) bool {
	for k := range private {
		if gvinst.Reg(k[0]) == st.slot && k[1] == st.disp {
			return true
		}
	}
	return false
}

// depend runs the exact dependence test on a few sampled entries.
func (ch *chain) depend(fits []*siteFit, trips []*affineFit, private map[[3]int64]bool, verdicts, reasons []string, conflicts []*Conflict) {
	sites := memSites(fits, private)
	d := len(ch.lv)
	keys := trips[0].keys
	if len(keys) > maxAnalysedEntries {
		keys = keys[:maxAnalysedEntries]
	}
	for _, key := range keys {
		dom := polyhedral.Domain{}
		for l := 0; l < d; l++ {
			f := trips[l]
			base, ok := f.bases[key]
			if !ok {
				// The level did not run in this entry; use the first seen.
				base = f.bases[f.keys[0]]
			}
			k := ch.lv[l]
			lp := ch.n.loops[k].loop
			adj := int64(1)
			if ch.topTested(lp, sites) {
				adj = 2
			}
			up := polyhedral.Const(int64(base) - adj)
			for m, c := range f.coeffs {
				if c != 0 {
					up = up.Add(polyhedral.Var(indexName(m)).Scale(c))
				}
			}
			dom.Levels = append(dom.Levels, polyhedral.Level{Index: indexName(l), Lower: polyhedral.Const(0), Upper: up})
		}
		for _, e := range ch.extra {
			up := polyhedral.Const(0)
			if b, ok := e.trip.bases[key]; ok {
				// As for a level: a loop tested at the top runs no body
				// at its last header arrival (at -O0 every loop; syrk's
				// j2 loop, taken one row past its last, met the next
				// array, and the outer level was found sequential).
				adj := int64(1)
				if ch.topTested(ch.n.loops[e.loop].loop, sites) {
					adj = 2
				}
				up = polyhedral.Const(int64(b) - adj)
				for m, c := range e.trip.coeffs {
					if c != 0 {
						up = up.Add(polyhedral.Var(ch.posName(e.path, m)).Scale(c))
					}
				}
			}
			dom.Levels = append(dom.Levels, polyhedral.Level{Index: e.name, Lower: polyhedral.Const(0), Upper: up})
		}
		ch.dependEntry(dom, key, sites, verdicts, reasons, conflicts)
	}
}

// dependEntry runs the exact test on one entry: every site over the loops
// of its own path, so that only the sites inside a loop can carry a
// dependence on it. It decides the levels not already sequential and the
// inner loops (ch.innerVerdicts).
func (ch *chain) dependEntry(dom polyhedral.Domain, key string, sites []*siteFit, verdicts, reasons []string, conflicts []*Conflict) {
	nest := polyhedral.Nest{Domain: dom}
	var idx []int
	d := len(ch.lv)
	for i, sf := range sites {
		b, ok := sf.fit.bases[key]
		if !ok {
			continue
		}
		off := polyhedral.Const(0)
		for l, c := range sf.fit.coeffs {
			if c != 0 {
				off = off.Add(polyhedral.Var(ch.posName(sf.path, l)).Scale(c))
			}
		}
		kind := polyhedral.Read
		if sf.s.write {
			kind = polyhedral.Write
		}
		var loops []string
		for l := 0; l < sf.depth; l++ {
			loops = append(loops, ch.posName(sf.path, l))
		}
		nest.Accesses = append(nest.Accesses, polyhedral.Access{Site: fmt.Sprintf("%#x", sf.s.x86), Base: polyhedral.Const(int64(b)), Offset: off, Size: int64(sf.s.size), Kind: kind, Loops: loops})
		idx = append(idx, i)
	}
	// Memory reductions: a read and a write of the same address
	// accumulating in one block.
	for a := range nest.Accesses {
		for b := range nest.Accesses {
			ra, wb := sites[idx[a]], sites[idx[b]]
			if ra.s.write || !wb.s.write || !nest.Accesses[a].Addr().Equal(nest.Accesses[b].Addr()) || ra.s.size != wb.s.size {
				continue
			}
			if op, ok := ch.memAccumulates(ra.s, wb.s); ok && (op == "add" || op == "mul") {
				rop := polyhedral.Sum
				if op == "mul" {
					rop = polyhedral.Product
				}
				nest.Reductions = append(nest.Reductions, polyhedral.Reduction{Read: a, Write: b, Op: rop})
			}
		}
	}
	vs, err := polyhedral.Analyze(nest, polyhedral.Options{})
	if err != nil {
		for lvl := range verdicts {
			verdicts[lvl], reasons[lvl] = VerdictSequential, "dependence test failed: "+err.Error()
		}
		for e := range ch.innerVerdicts {
			ch.innerVerdicts[e] = innerVerdict{kind: VerdictSequential, reason: "dependence test failed: " + err.Error()}
		}
		return
	}
	for l, v := range vs {
		var cf *Conflict
		if v.Kind == polyhedral.LevelSequential && v.Conflict != nil {
			cf = &Conflict{Sites: [2]int{ch.accessIndex(sites[idx[v.Conflict.A]]), ch.accessIndex(sites[idx[v.Conflict.B]])}}
			if v.Conflict.Witness != nil {
				cf.Witness = v.Conflict.Witness.String()
			} else if v.Conflict.Err != nil {
				cf.Witness = v.Conflict.Err.Error()
			}
		}
		if l >= d {
			iv := &ch.innerVerdicts[l-d]
			switch {
			case v.Kind == polyhedral.LevelSequential && iv.kind != VerdictSequential:
				*iv = innerVerdict{kind: VerdictSequential, reason: v.Reason, conflict: cf}
			case v.Kind == polyhedral.LevelReduction && iv.kind == VerdictParallel:
				*iv = innerVerdict{kind: VerdictReduction, reason: v.Reason}
			}
			continue
		}
		if verdicts[l] == VerdictSequential {
			continue
		}
		switch v.Kind {
		case polyhedral.LevelSequential:
			verdicts[l], reasons[l], conflicts[l] = VerdictSequential, v.Reason, cf
		case polyhedral.LevelReduction:
			if verdicts[l] == VerdictParallel {
				verdicts[l], reasons[l] = VerdictReduction, v.Reason
			}
		}
	}
}

// innerVerdict is what the exact test and the scalar analysis say of an
// inner loop (one below the last level).
type innerVerdict struct {
	kind, reason string
	conflict     *Conflict
}

// accessIndex is the index of a site in the hot spot's accesses.
func (ch *chain) accessIndex(sf *siteFit) int {
	for i, a := range ch.hs.Accesses {
		if a.Site == sf.id {
			return i
		}
	}
	return -1
}

// topTested reports whether lp leaves from its header (tested at the top)
// with no memory access of the sites in its header block, so that its last
// header arrival runs no body.
func (ch *chain) topTested(lp *Loop, sites []*siteFit) bool {
	if len(lp.Exits) == 0 || lp.Exits[0].From != lp.Header || len(lp.Latches) == 1 && lp.Latches[0] == lp.Header {
		return false
	}
	for _, sf := range sites {
		if sf.s.x86 >= lp.Header.Addr && sf.s.x86 < lp.Header.End {
			return false
		}
	}
	return true
}

// memAccumulates checks the instructions of a read and a write site.
func (ch *chain) memAccumulates(r, w *site) (string, bool) {
	rb, wb := ch.blockOf(r.x86), ch.blockOf(w.x86)
	if rb == nil || rb != wb {
		return "", false
	}
	find := func(s *site) (*Insn, int) {
		for _, x := range rb.Insns {
			if x.Addr != s.x86 {
				continue
			}
			ord := 0
			for i := range x.Code {
				if op := x.Code[i].Op; op == gvinst.OpLd || op == gvinst.OpSt {
					if ord == s.ordinal {
						return x, i
					}
					ord++
				}
			}
		}
		return nil, -1
	}
	rx, ri := find(r)
	wx, wi := find(w)
	if rx == nil || wx == nil {
		return "", false
	}
	return accumulates(rb, rx, ri, wx, wi)
}

// traceCheck looks for a dependence in the samples themselves: a byte
// written in one iteration of a level and touched in another with the same
// outer iterations. A level found so is sequential whatever the test said.
//
// Each byte's first access (upgraded to a write when a later one in the
// same iteration writes it) is kept per 8-byte word (traceWords): one map
// look-up per word an access touches instead of one per byte, and the
// words and their map are kept from one level, and chain, to the next
// (analysisMemo.trace). With a map
// entry per byte, grown from empty at every level, the check was 78% of
// conv2d's analysis at its medium size and 26% of heat3d's (36% of the
// five programs' of BenchmarkFinish), nearly all of it map insertions
// and rehashing.
func (ch *chain) traceCheck(fits []*siteFit, private map[[3]int64]bool, verdicts, reasons []string, conflicts []*Conflict) {
	c, n := ch.c, ch.n
	sites := map[int]*siteFit{}
	for _, sf := range memSites(fits, private) {
		sites[sf.id] = sf
	}
	// The samples of the chain's tested sites, in the order recorded.
	var chainSamples []*sample
	for i := range n.samples {
		smp := &n.samples[i]
		if sites[int(smp.site)] == nil {
			continue
		}
		chn := n.loops[c.sites[smp.site].loop].chain
		if len(chn) <= ch.p || chn[ch.p] != ch.r {
			continue
		}
		chainSamples = append(chainSamples, smp)
	}
	seen := &ch.memo.trace
	for l := range verdicts {
		if verdicts[l] == VerdictSequential {
			continue
		}
		seen.reset(len(chainSamples))
		for _, smp := range chainSamples {
			if len(smp.iters) <= ch.p+l {
				continue
			}
			sf := sites[int(smp.site)]
			s := &c.sites[smp.site]
			// The outer iterations are hashed: a collision can only add
			// a false conflict (a safe "sequential"), never hide one.
			outer := hashIters(smp.entry, smp.iters[:ch.p+l])
			t := smp.iters[ch.p+l]
			var word *[8]traceByte
			for b := uint64(0); b < uint64(s.size); b++ {
				addr := smp.addr + b
				if word == nil || addr%8 == 0 {
					word = seen.word(outer, addr/8)
				}
				prev := &word[addr%8]
				if !prev.seen {
					*prev = traceByte{t: t, site: int32(sf.id), write: s.write, seen: true}
					continue
				}
				if prev.t != t && (prev.write || s.write) && !ch.reductionPair(int(prev.site), sf.id) {
					verdicts[l] = VerdictSequential
					reasons[l] = fmt.Sprintf("the trace shows byte %#x touched at %s=%d (site %#x) and %s=%d (site %#x), one a write", addr, indexName(l), prev.t, c.sites[prev.site].x86, indexName(l), t, s.x86)
					conflicts[l] = &Conflict{Sites: [2]int{ch.accessIndex(sites[int(prev.site)]), ch.accessIndex(sf)}, Witness: reasons[l]}
					break
				}
				if s.write && !prev.write {
					*prev = traceByte{t: t, site: int32(sf.id), write: true, seen: true}
				}
			}
			if verdicts[l] == VerdictSequential {
				break
			}
		}
	}
}

// traceByte is what traceCheck keeps of one byte: the iteration and site
// of its first access, and whether that, or a later access in the same
// iteration, wrote it.
type traceByte struct {
	t     int32
	site  int32
	write bool
	seen  bool
}

// traceWords holds traceCheck's bytes, eight to a word of guest memory
// under each hash of the outer iterations.
type traceWords struct {
	index map[[2]uint64]int32 // (outer hash, address/8) → words
	words [][8]traceByte
}

// reset empties w for a level whose check looks at about n accesses.
func (w *traceWords) reset(n int) {
	if len(w.index) > 0 {
		clear(w.index)
	}
	if w.index == nil || cap(w.words) < n {
		w.index = make(map[[2]uint64]int32, n)
		w.words = make([][8]traceByte, 0, n)
	}
	w.words = w.words[:0]
}

// word returns the bytes of the word at address word*8 under outer.
func (w *traceWords) word(outer, word uint64) *[8]traceByte {
	k := [2]uint64{outer, word}
	i, ok := w.index[k]
	if !ok {
		i = int32(len(w.words))
		w.index[k] = i
		w.words = append(w.words, [8]traceByte{})
	}
	return &w.words[i]
}

// hashIters hashes a nest entry and iteration counters (FNV-1a).
func hashIters(entry int32, iters []int32) uint64 {
	h := uint64(14695981039346656037)
	mix := func(v int32) {
		for k := 0; k < 4; k++ {
			h ^= uint64(byte(v >> (8 * k)))
			h *= 1099511628211
		}
	}
	mix(entry)
	for _, x := range iters {
		mix(x)
	}
	return h
}

// reductionPair reports whether both sites take part in accumulations
// (a read and a write of one address updated by x = x op e): their
// conflicts are the reduction's, which the dependence test judged.
func (ch *chain) reductionPair(a, b int) bool {
	return ch.inReduction(a) && ch.inReduction(b)
}

// inReduction reports whether site id is the read or the write of an
// accumulation with some other site of the nest.
func (ch *chain) inReduction(id int) bool {
	if v, ok := ch.redSites[id]; ok {
		return v
	}
	s := &ch.c.sites[id]
	found := false
	for j := range ch.c.sites {
		o := &ch.c.sites[j]
		if o.kind != siteAccess || o.nest != s.nest || o.write == s.write {
			continue
		}
		r, w := s, o
		if s.write {
			r, w = o, s
		}
		if _, ok := ch.memAccumulates(r, w); ok {
			found = true
			break
		}
	}
	ch.redSites[id] = found
	return found
}
