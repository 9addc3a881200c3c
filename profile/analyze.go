package profile

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/polyhedral"
)

// RunInfo describes the profiled run for the profile file.
type RunInfo struct {
	Program           string
	Args              []string
	LoadBias          uint64
	GuestInstructions uint64
}

// maxAnalysedEntries is how many sampled nest entries the dependence test
// is run on (each with its concrete bases and bounds).
const maxAnalysedEntries = 3

// Finish analyses what the collector recorded and returns the profile.
func (c *Collector) Finish(run RunInfo) *File {
	f := &File{Version: FormatVersion, Program: run.Program, Args: run.Args, LoadBias: Hex(run.LoadBias),
		GuestInstructions: run.GuestInstructions, Functions: len(c.prog.Funcs), Loops: []LoopSummary{}, HotSpots: []HotSpot{}}
	var hots []*HotSpot
	var sums []*LoopSummary
	for ni, n := range c.nests {
		for r := range n.loops {
			sum, hs := c.analyzeChain(ni, r, run.GuestInstructions)
			sums = append(sums, sum)
			if hs != nil {
				hots = append(hots, hs)
				sum.HotSpot = len(hots) - 1 // provisional, renumbered below
			}
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
	return f
}

// chain is one candidate hot spot being analysed: the nest's loops from
// root r down the single-child chain.
type chain struct {
	c      *Collector
	n      *nestState
	r      int   // root loop index in the nest
	lv     []int // loop indices of the levels
	p      int   // number of loops above r in the nest
	levels []Level
	sum    *LoopSummary
	hs     *HotSpot
	// redSites caches inReduction.
	redSites map[int]bool
	// extra are the inner loops of the last level when it has several;
	// extraIdx maps their loop index to their position.
	extra    []extraLevel
	extraIdx map[int]int
}

// extraLevel is an inner loop of the chain's last level that is not a
// level of the chain (the last level has several): its sites get an index
// of their own, bounded by the loop's fitted trip count.
type extraLevel struct {
	loop int
	name string
	trip *affineFit
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

func (c *Collector) analyzeChain(ni, r int, total uint64) (*LoopSummary, *HotSpot) {
	n := c.nests[ni]
	L := n.loops[r].loop
	ch := &chain{c: c, n: n, r: r, p: len(n.loops[r].chain) - 1, redSites: map[int]bool{}, extraIdx: map[int]int{}}
	for _, l := range L.Levels() {
		ch.lv = append(ch.lv, n.index[l])
	}
	d := len(ch.lv)
	var samples uint64
	for _, b := range L.Blocks {
		samples += c.blockSamples[b.Addr]
	}
	share := 0.0
	if c.pcSamples > 0 {
		share = float64(samples) / float64(c.pcSamples)
	}
	insns := uint64(share * float64(total))
	sum := &LoopSummary{Entry: Hex(L.Header.Addr), Function: L.Func.Name, Depth: d, ParallelLevels: []int{}, Share: share, HotSpot: -1}
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
	hs := &HotSpot{Function: L.Func.Name, Entry: Hex(L.Header.Addr), Depth: d, Share: share, Instructions: insns,
		ParallelLevels: []int{}, Vars: []Var{}, Accesses: []Access{}, Arrays: []Array{}, Scalars: []Scalar{}, Blocks: []BlockText{}}
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
		ch.levels = append(ch.levels, lev)
	}
	// The VBlocks: every block start control can jump to.
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
		vb, err := ch.c.lift.Translate(b.Addr)
		if err != nil || vb == nil {
			continue
		}
		cp := *vb
		cp.Insts = append([]gvinst.Inst(nil), vb.Insts...)
		if gvinst.Optimize(&cp) != nil {
			cp = *vb
		}
		hs.Blocks = append(hs.Blocks, BlockText{Addr: Hex(cp.Addr), End: Hex(cp.End), GVInst: gvinst.Print(&cp)})
	}
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
	init       map[string]uint64 // value at iteration 0, per level entry
}

// classify looks at slot index si of loop k's snapshots.
func (ch *chain) classify(k, si int, size int) scalarClass {
	info := ch.n.loops[k]
	type obs struct {
		t int32
		v uint64
	}
	groups := map[string][]obs{}
	fits32 := true
	for _, s := range info.snaps {
		key := groupKey(s.entry, s.iters[:len(s.iters)-1])
		v := s.vals[si]
		if size == 4 {
			v = uint64(uint32(v))
		}
		if v>>32 != 0 {
			fits32 = false
		}
		groups[key] = append(groups[key], obs{s.iters[len(s.iters)-1], v})
	}
	sc := scalarClass{kind: "unknown", init: map[string]uint64{}, bits: 64}
	// try checks for a step in a width: v_t - v_0 == step*t, wrapping,
	// with one step per entry of the level.
	try := func(mask uint64) (inv, iv, multi bool, steps map[string]int64) {
		inv, iv = true, true
		steps = map[string]int64{}
		for key, os := range groups {
			var v0 uint64
			has0 := false
			for _, o := range os {
				if o.t == 0 {
					v0, has0 = o.v, true
				}
			}
			if !has0 {
				continue
			}
			sc.init[key] = v0
			stepKnown := false
			var step int64
			for _, o := range os {
				if o.t == 0 {
					continue
				}
				multi = true
				diff := (o.v - v0) & mask
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
	for _, k := range sortedKeys(steps) {
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
	depth  int // levels of the chain the site is inside (d+1 for an inner loop's site)
	extra  int // for a site in an inner loop of the last level: its index in chain.extra, else -1
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
			entries[groupKey(s.entry, s.iters[:ch.p])] = true
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
			// A site in an inner loop of the last level, which has several
			// (a vector loop and its epilogue): it gets a level of its own
			// that only its own accesses use.
			if n.loops[s.loop].parent == ch.lv[d-1] {
				if _, ok := ch.extraIdx[s.loop]; !ok {
					ch.extraIdx[s.loop] = len(ch.extra)
					ch.extra = append(ch.extra, extraLevel{loop: s.loop, name: fmt.Sprintf("u%d", len(ch.extra))})
				}
				pts[int(smp.site)] = append(pts[int(smp.site)], point{key: groupKey(smp.entry, smp.iters[:ch.p]), vec: smp.iters[ch.p:], val: smp.addr})
				continue
			}
			if imperfect == "" {
				imperfect = fmt.Sprintf("the access at %#x is two loops below the last level of the chain", s.x86)
			}
			continue
		}
		pts[int(smp.site)] = append(pts[int(smp.site)], point{key: groupKey(smp.entry, smp.iters[:ch.p]), vec: smp.iters[ch.p:], val: smp.addr})
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
		sf := &siteFit{id: id, s: s, depth: levelOf[s.loop] + 1, lo: ^uint64(0), n: len(pts[id]), extra: -1}
		if e, ok := ch.extraIdx[s.loop]; ok {
			sf.depth, sf.extra = d+1, e
		}
		for _, p := range pts[id] {
			sf.lo = min(sf.lo, p.val)
			sf.hi = max(sf.hi, p.val+uint64(s.size))
		}
		sf.fit, sf.err = fitAffine(pts[id], sf.depth)
		if s.varSize && sf.err == nil {
			sf.err = fmt.Errorf("a rep movs/stos whose length changes between iterations")
		}
		if sf.err != nil && s.stack.kind == opdUnknown && nonAffine == "" {
			nonAffine = fmt.Sprintf("access at %#x fits no affine function: %v", s.x86, sf.err)
		}
		fits = append(fits, sf)
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
				} else {
					hs.Scalars = append(hs.Scalars, Scalar{Loc: loc, Level: l, Kind: "carried"})
					if scalarBlock[l] == "" {
						scalarBlock[l] = fmt.Sprintf("register %s carries a value from one iteration to the next", loc)
					}
				}
			}
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
			if len(t.iters) < ch.p || (ch.p > 0 && !ch.inChain(t.iters[:ch.p])) {
				continue
			}
			tp = append(tp, point{key: groupKey(t.entry, t.iters[:ch.p]), vec: t.iters[ch.p:], val: uint64(t.trips)})
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
		f, err := fitAffine(tp, l)
		if err != nil {
			if tripErr == "" {
				tripErr = fmt.Sprintf("trip count of level %s is not affine in the outer indices: %v", indexName(l), err)
			}
			continue
		}
		tripFits[l] = f
		lev.TripCount = ch.tripExpr(f, l)
	}
	for i := range ch.extra {
		e := &ch.extra[i]
		var tp []point
		for _, t := range n.loops[e.loop].trips {
			if len(t.iters) != ch.p+d {
				continue
			}
			if t.trips < 1 {
				tp = nil
				break
			}
			tp = append(tp, point{key: groupKey(t.entry, t.iters[:ch.p]), vec: t.iters[ch.p:], val: uint64(t.trips)})
		}
		f, err := fitAffine(tp, d)
		if len(tp) == 0 || err != nil {
			if imperfect == "" {
				imperfect = fmt.Sprintf("the inner loop at %#x has no affine, positive trip count", n.loops[e.loop].loop.Header.Addr)
			}
			continue
		}
		e.trip = f
	}
	for l := range ch.levels {
		if !ivFound[l] && tripErr == "" {
			tripErr = fmt.Sprintf("no induction variable found for level %s", indexName(l))
		}
	}
	// Accesses and arrays.
	ch.accesses(fits)
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

// inChain reports whether counters outer lead to the chain's root (always
// true: the samples were chosen by their site's loop).
func (ch *chain) inChain(outer []int32) bool { return len(outer) == ch.p }

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
// every sampled iteration of level l.
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
		key := groupKey(smp.entry, smp.iters[:ch.p+l+1])
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
		for _, k := range sortedKeys(sc.steps) {
			if len(iv.StepObserved) < 8 {
				iv.StepObserved = append(iv.StepObserved, sc.steps[k])
			}
		}
		iv.StepLoc = ch.stepLoc(sc, l)
	}
	for _, k := range sortedKeys(sc.init) {
		if len(iv.InitObserved) < 8 {
			iv.InitObserved = append(iv.InitObserved, int64(sc.init[k]))
		}
	}
	// Init as a constant when it is the same at every entry of the level.
	same := true
	var v0 uint64
	firstV := true
	for _, v := range sc.init {
		if firstV {
			v0, firstV = v, false
		} else if v != v0 {
			same = false
		}
	}
	if same && !firstV {
		iv.Init = strconv.FormatInt(int64(v0), 10)
	}
	return iv
}

// stepLoc finds a slot of level l's snapshots that holds an IV's step in
// every entry of the level.
func (ch *chain) stepLoc(sc scalarClass, l int) *Loc {
	info := ch.n.loops[ch.lv[l]]
	at0 := map[string][]uint64{}
	for _, s := range info.snaps {
		if s.iters[len(s.iters)-1] == 0 {
			at0[groupKey(s.entry, s.iters[:len(s.iters)-1])] = s.vals
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
	la, sa := locOf(sb.a)
	lb, sbs := locOf(sb.b)
	rel := sb.rel
	if !isIV(la) && isIV(lb) {
		la, lb, sa, sbs = lb, la, sbs, sa
		rel = swapRel[rel]
	}
	_ = sa
	_ = lb
	return &Bound{IV: la, Cond: rel, Signed: sb.signed, Limit: sbs, X86: Hex(sb.x86)}
}

// tripExpr writes a fitted trip count: a constant plus outer indices, or
// a bound variable when the constant differs between entries.
func (ch *chain) tripExpr(f *affineFit, l int) string {
	hs := ch.hs
	same := true
	var b0 uint64
	for i, k := range f.keys {
		if i == 0 {
			b0 = f.bases[k]
		} else if f.bases[k] != b0 {
			same = false
		}
	}
	base := strconv.FormatInt(int64(b0), 10)
	if !same {
		name := fmt.Sprintf("bound%d", countKind(hs.Vars, "bound"))
		v := Var{Name: name, Kind: "bound", Level: l}
		for _, k := range f.keys {
			if len(v.Observed) < 8 {
				v.Observed = append(v.Observed, int64(f.bases[k]))
			}
		}
		hs.Vars = append(hs.Vars, v)
		base = name
	}
	return fmtCoeffs(f.coeffs, &base)
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
			inner := ""
			if sf.extra >= 0 && len(a.Coeffs) > len(ch.lv) {
				if c := a.Coeffs[len(ch.lv)]; c != 0 {
					inner = fmt.Sprintf(" + %d*%s", c, ch.extra[sf.extra].name)
					a.Inner = &InnerIndex{Header: Hex(ch.n.loops[ch.extra[sf.extra].loop].loop.Header.Addr), Coeff: c}
				}
				a.Coeffs = a.Coeffs[:len(ch.lv)]
			}
			for _, k := range sf.fit.keys {
				if len(a.BaseObserved) < 8 {
					a.BaseObserved = append(a.BaseObserved, Hex(sf.fit.bases[k]))
				}
			}
			a.Base = ch.baseExpr(sf)
			a.Function = fmtCoeffs(a.Coeffs, &a.Base) + inner
		}
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
// entry, else a register or stack slot of the chain's entry snapshot plus
// a constant, named var0, var1, ….
func (ch *chain) baseExpr(sf *siteFit) string {
	f := sf.fit
	b0 := f.bases[f.keys[0]]
	same := true
	for _, k := range f.keys[1:] {
		if f.bases[k] != b0 {
			same = false
		}
	}
	if same && len(f.keys) > 1 || sf.s.stack.kind != opdSlot && b0 < 1<<32 {
		return fmt.Sprintf("%#x", b0)
	}
	// Match against the root's snapshot at iteration 0.
	info := ch.n.loops[ch.r]
	at0 := map[string][]uint64{}
	for _, s := range info.snaps {
		if s.iters[len(s.iters)-1] == 0 {
			at0[groupKey(s.entry, s.iters[:ch.p])] = s.vals
		}
	}
	bestSlot, bestOff := -1, int64(0)
	nslots := len(info.snapRegs) + len(info.stack)
	for si := 0; si < nslots; si++ {
		ok := true
		var off int64
		firstK := true
		for _, k := range f.keys {
			vals, has := at0[k]
			if !has {
				ok = false
				break
			}
			o := int64(f.bases[k] - vals[si])
			if firstK {
				off, firstK = o, false
			} else if o != off {
				ok = false
				break
			}
		}
		if !ok || firstK || off < -1<<20 || off > 1<<20 {
			continue
		}
		if bestSlot < 0 || abs64(off) < abs64(bestOff) {
			bestSlot, bestOff = si, off
		}
	}
	if bestSlot < 0 {
		return fmt.Sprintf("%#x", b0)
	}
	var loc Loc
	if bestSlot < len(info.snapRegs) {
		loc = Loc{Reg: bitName(info.snapRegs[bestSlot])}
	} else {
		st := info.stack[bestSlot-len(info.snapRegs)]
		loc = Loc{Base: st.slot.String(), Disp: st.disp, Size: st.size}
	}
	name := ""
	for _, v := range ch.hs.Vars {
		if v.Kind == "value" && v.Loc != nil && *v.Loc == loc {
			name = v.Name
		}
	}
	if name == "" {
		name = fmt.Sprintf("var%d", countKind(ch.hs.Vars, "value"))
		v := Var{Name: name, Kind: "value", Loc: &loc}
		for _, k := range f.keys {
			if vals, ok := at0[k]; ok && len(v.Observed) < 8 {
				v.Observed = append(v.Observed, int64(vals[bestSlot]))
			}
		}
		ch.hs.Vars = append(ch.hs.Vars, v)
	}
	if bestOff == 0 {
		return name
	}
	if bestOff < 0 {
		return fmt.Sprintf("%s - %d", name, -bestOff)
	}
	return fmt.Sprintf("%s + %d", name, bestOff)
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
				up = polyhedral.Const(int64(b) - 1)
				for m, c := range e.trip.coeffs {
					if c != 0 {
						up = up.Add(polyhedral.Var(indexName(m)).Scale(c))
					}
				}
			}
			dom.Levels = append(dom.Levels, polyhedral.Level{Index: e.name, Lower: polyhedral.Const(0), Upper: up})
		}
		for lvl := 0; lvl < d; lvl++ {
			if verdicts[lvl] == VerdictSequential {
				continue
			}
			ch.dependLevel(dom, key, lvl, sites, verdicts, reasons, conflicts)
		}
	}
}

// dependLevel runs the exact test for level lvl of one entry: only the
// accesses inside the level's loop can carry a dependence on it.
func (ch *chain) dependLevel(dom polyhedral.Domain, key string, lvl int, sites []*siteFit, verdicts, reasons []string, conflicts []*Conflict) {
	nest := polyhedral.Nest{Domain: dom}
	var idx []int
	for i, sf := range sites {
		b, ok := sf.fit.bases[key]
		if !ok || sf.depth <= lvl {
			continue
		}
		off := polyhedral.Const(0)
		for l, c := range sf.fit.coeffs {
			if c != 0 {
				off = off.Add(polyhedral.Var(ch.coeffName(sf, l)).Scale(c))
			}
		}
		kind := polyhedral.Read
		if sf.s.write {
			kind = polyhedral.Write
		}
		nest.Accesses = append(nest.Accesses, polyhedral.Access{Site: fmt.Sprintf("%#x", sf.s.x86), Base: polyhedral.Const(int64(b)), Offset: off, Size: int64(sf.s.size), Kind: kind})
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
		verdicts[lvl], reasons[lvl] = VerdictSequential, "dependence test failed: "+err.Error()
		return
	}
	v := vs[lvl]
	switch v.Kind {
	case polyhedral.LevelSequential:
		verdicts[lvl], reasons[lvl] = VerdictSequential, v.Reason
		if v.Conflict != nil {
			cf := &Conflict{Sites: [2]int{ch.accessIndex(sites[idx[v.Conflict.A]]), ch.accessIndex(sites[idx[v.Conflict.B]])}}
			if v.Conflict.Witness != nil {
				cf.Witness = v.Conflict.Witness.String()
			} else if v.Conflict.Err != nil {
				cf.Witness = v.Conflict.Err.Error()
			}
			conflicts[lvl] = cf
		}
	case polyhedral.LevelReduction:
		if verdicts[lvl] == VerdictParallel {
			verdicts[lvl], reasons[lvl] = VerdictReduction, v.Reason
		}
	}
}

// coeffName names the index of coefficient l of a site: the chain's
// levels, then for a site of an inner loop its own index.
func (ch *chain) coeffName(sf *siteFit, l int) string {
	if l >= len(ch.lv) && sf.extra >= 0 {
		return ch.extra[sf.extra].name
	}
	return indexName(l)
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
func (ch *chain) traceCheck(fits []*siteFit, private map[[3]int64]bool, verdicts, reasons []string, conflicts []*Conflict) {
	c, n := ch.c, ch.n
	sites := map[int]*siteFit{}
	for _, sf := range memSites(fits, private) {
		sites[sf.id] = sf
	}
	for l := range verdicts {
		if verdicts[l] == VerdictSequential {
			continue
		}
		type key struct {
			outer string
			addr  uint64
		}
		type acc struct {
			t     int32
			write bool
			site  int
		}
		seen := map[key]acc{}
		for _, smp := range n.samples {
			sf := sites[int(smp.site)]
			if sf == nil || len(smp.iters) <= ch.p+l {
				continue
			}
			s := &c.sites[smp.site]
			chn := n.loops[s.loop].chain
			if len(chn) <= ch.p || chn[ch.p] != ch.r {
				continue
			}
			outer := groupKey(smp.entry, smp.iters[:ch.p+l])
			t := smp.iters[ch.p+l]
			for b := uint64(0); b < uint64(s.size); b++ {
				k := key{outer, smp.addr + b}
				prev, ok := seen[k]
				if !ok {
					seen[k] = acc{t, s.write, sf.id}
					continue
				}
				if prev.t != t && (prev.write || s.write) && !ch.reductionPair(prev.site, sf.id) {
					verdicts[l] = VerdictSequential
					reasons[l] = fmt.Sprintf("the trace shows byte %#x touched at %s=%d (site %#x) and %s=%d (site %#x), one a write", smp.addr+b, indexName(l), prev.t, c.sites[prev.site].x86, indexName(l), t, s.x86)
					conflicts[l] = &Conflict{Sites: [2]int{ch.accessIndex(sites[prev.site]), ch.accessIndex(sf)}, Witness: reasons[l]}
					break
				}
				if s.write && !prev.write {
					seen[k] = acc{t, true, sf.id}
				}
			}
			if verdicts[l] == VerdictSequential {
				break
			}
		}
	}
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
