package profile

import (
	"math"
	"slices"
	"sort"

	"github.com/gxbit/gxbit/gvinst"
)

// BlockLifter lifts whole VBlocks; package lift's *Lifter satisfies it
// (as it does Code).
type BlockLifter interface {
	Translate(addr uint64) (*gvinst.VBlock, error)
}

// CollectOptions bound the collector's cost.
type CollectOptions struct {
	// MaxSamplesPerSite caps the samples kept per access site (0: 4096).
	MaxSamplesPerSite int
	// MaxSnapshotsPerLoop caps the register snapshots kept per loop
	// (0: 256); past it the loop's register probes are removed.
	MaxSnapshotsPerLoop int
	// MaxProbesPerNest is how many probe calls a nest may make while it
	// is sampled (0: DefaultMaxProbesPerNest); past it the nest thins out
	// (thinIterations), and past thinBudget times it the nest is
	// re-translated without probes.
	MaxProbesPerNest int64
	// SliceInsns is how many guest instructions run between the
	// collector's bookkeeping points, where it also samples the guest's
	// position for the hotness of each nest (0: 1<<14).
	SliceInsns uint64
	// LongOuterIteration is how many guest instructions an iteration of
	// a nest's outermost loop takes before Progress stops waiting for
	// more of them (0: longRootIteration; see there).
	LongOuterIteration uint64
	// ProbedHeaders keeps a paused innermost loop's header a PROBE, a
	// callout at every iteration, instead of a COUNT (see Counted
	// headers): the profile is the same, only slower to make.
	ProbedHeaders bool
}

// DefaultMaxProbesPerNest is CollectOptions.MaxProbesPerNest when it is 0.
const DefaultMaxProbesPerNest = 1_000_000

// The kinds of instrumentation sites.
const (
	siteHeader     = iota // a loop header: a new iteration
	siteReset             // an edge into a loop is about to be taken: restart its count
	siteReg               // one register of a header snapshot
	siteAccess            // a memory access
	siteExit              // a loop's exit edge was taken (or its target reached)
	siteRepCount          // the element count of the rep movs/stos that follows
	siteCallTarget        // the target of an indirect call (lazy analysis of stripped programs)
)

type site struct {
	kind int
	nest int
	loop int // index into the nest's loops
	// For siteReg: the index of the register in the loop's snapshot.
	reg int
	// For siteAccess:
	x86     uint64
	ordinal int // the LD/ST's ordinal among the instruction's GVInst
	block   uint64
	index   int
	write   bool
	size    int
	stack   operand // its static address when it is [rsp/rbp+disp]
	samples int
	// rep is set for the accesses of rep movs/stos: size is then the
	// element size until the first sample sets the access's byte length
	// (s1 elements); varSize records that the length changed.
	rep, repSized, varSize bool
}

// sample is one recorded access.
type sample struct {
	site  int32
	entry int32   // the nest entry (0-based)
	iters []int32 // the counters of the loops from the nest root to the site's loop
	addr  uint64
}

// snap is one header snapshot.
type snap struct {
	entry int32
	iters []int32  // the counters from the root to the loop
	vals  []uint64 // per snapshot slot
}

// tripSample is the trip count of one entry of a loop.
type tripSample struct {
	entry int32
	iters []int32 // the counters of the enclosing loops
	trips int64
}

type loopInfo struct {
	loop     *Loop
	parent   int
	chain    []int // loop indices from the root to this loop
	liveIn   slots // at the header
	snapRegs []int // tracked slot bits snapshot at the header
	// boundRegs are the general registers the exit test of a loop with
	// inner loops reads that snapRegs lacks (an invariant limit), snapshot
	// after the stack slots, for predictTrips only.
	boundRegs []int
	stack     []operand // stack slots read or written in the loop
	snaps     []snap    // recorded
	snapDone  bool      // enough snapshots: its register probes are gone
	trips     []tripSample
	// lastTrips is the trip count of the loop's last entry whose
	// counter was exact (0: none yet), for resuming a paused loop before
	// it ends; exact says whether the current entry's counter began at
	// the entry (false for an entry the collector took over in the middle
	// of, Restart: floyd's i loop, counted from its 740th iteration, gave
	// 60 for 800 and resumed probes for most of its next entry).
	lastTrips int64
	exact     bool
	// bound is the loop's exit test (hasBound: found), and predicted the
	// trip count of its current entry that the test gives on the
	// registers its header snapshots of the entry show (0: none), for
	// resuming a paused loop before an end no earlier entry told
	// (predictTrips).
	bound     staticBound
	hasBound  bool
	predicted int64
	// fresh says the loop's current entry began (its reset probe ran)
	// since the nest's probes last came back (flush): an innermost loop's
	// counter is then exact while the nest skips. counting says an
	// innermost loop paused in its current entry, its header probe kept:
	// its counter is exact too; pauseTried that its current entry was
	// considered for that pause.
	fresh, counting, pauseTried bool
	// entryMark is the guest instruction count when the loop's current
	// entry began, or its last one ended, and lastEntry the instructions
	// its last entry took (since the round began, for one begun before
	// it), for the loops just inside a nest's outermost one that have
	// inner loops of their own (innerSampled's long entries).
	entryMark, lastEntry uint64
	// partial says the loop's current entry began before the collector
	// took over (Restart found the guest inside it): its trip count so
	// far is not the entry's, and is not recorded.
	partial bool
	// guide holds the header snapshots of the last two iterations of a
	// partial entry of a loop with inner loops that are not recorded
	// (an enclosing loop has no counter yet), for predictTrips only:
	// nothing the analysis reads (see Blind loops).
	guide []snap
	// partialTrips is the iterations a partial entry ran under the
	// collector (0: none ended), with the iterations of the enclosing
	// loops then: a lower bound that provisionalTrips gives a loop no
	// whole entry of which was seen.
	partialTrips tripSample
	// entered says the loop began an iteration since the collector last
	// took over (Restart), and done that it has then run
	// minOuterIterations iterations in one entry or a whole entry, or
	// the rest of a partial entry from an iteration it recorded, two at
	// least (innerSampled).
	entered, done bool
	// zeroSeen says an iteration 0 of the loop was recorded since then:
	// one the collector skipped (the first iterations of a time step's
	// second sweep, while the probes come back after the first one's
	// pause) leaves the loop's model without its start.
	zeroSeen bool
	// tookOver says the collector took over inside the loop (Restart):
	// its entry then was partial, counted from a later iteration, and
	// has no iteration 0 to see.
	tookOver bool
	// lead is the largest lead a pause of the loop's current entry took:
	// while the nest waits for its outer header to begin an entry, a later
	// pause of the same entry takes at least that, so that a loop that
	// resumed that far before its end is not paused again closer to it
	// (its iterations grew longer, and so the lead they ask for shorter),
	// which would leave no time for the probes to come back before that
	// header: nussinov's j loop flapped so to its last iteration at every
	// outer iteration, and the profiling round never ended.
	lead int32
}

type nestState struct {
	root     *Loop
	loops    []*loopInfo
	index    map[*Loop]int
	counter  []int32
	sel      []bool
	entries  int32
	maxOuter int32 // the most iterations the outermost loop ran in one entry (while sampling)
	sampling bool
	probes   int64
	samples  []sample
	vblocks  map[uint64]uint64 // instrumented VBlocks: start → end
	snapping int               // loop whose snapshot is being filled, or -1
	guiding  bool              // that snapshot is a guide (loopInfo.guide), not recorded
	buf      []uint64
	rejected string // an instruction the collector cannot model
	// provisional says the current entry was begun by Restart inside an
	// iteration of the outermost loop (see Restart), and rootAt is the
	// guest instruction count then (Progress).
	provisional bool
	rootAt      uint64
	// inside says the round began inside the nest (Restart): its outer
	// loop's iterations are taken to be long, and innerSampled's rule
	// ends the round past the provisional entry too, to the round's end.
	inside bool
	// Pausing (see pauseMinProbes): paused is the loop whose unselected
	// iterations run without the sampling probes, or -1; iterStart holds
	// n.spent at each loop's last sampled header (-1: none), spent
	// counting every probe call of the nest while it samples. After a
	// resume, skip is set until the first header of a loop at most
	// skipSeen deep (the paused loop's depth, or less: the depth of a
	// header that passed while it was set, since an iteration that began
	// unrecorded is never recorded in part) once the nest is translated
	// with its probes again (flushed): what ran before it is counted, not
	// recorded.
	paused    int
	spent     int64
	lead      int32 // the paused loop's (pauseLead)
	toEnd     bool  // the paused loop resumes only before it ends
	thin      bool  // past the probe budget (selected)
	iterStart []int64
	skip      bool
	flushed   bool
	skipSeen  int
	// partial holds the iterations (groupKey of the entry and the
	// counters from the root to the loop) recorded from their middle: an
	// enclosing iteration that began while skipping, whose accesses before
	// the skip ended were not recorded.
	partial map[string]bool
	// changes counts the changes to what Finish's analysis of the nest
	// reads of the run: a sample, a header snapshot, a trip count, a
	// partial iteration, a new access site, an instruction of the nest
	// first translated, the nest's rejection. (A partial entry's trip
	// count is read only through provisionalTrips, whose counts Finish
	// compares itself.) Finish analyses again only a nest whose count
	// moved (nestAnalysis), so whatever else comes to feed the analysis
	// must count here too.
	changes uint64
}

// xmmHigh+n in a snapshot list stands for the high 64 bits of xN.
const xmmHigh = 64

// probeRank orders the probes before one instruction: counters, exits,
// resets, then each header followed by its registers.
var probeRank = [...]int{siteExit: 1, siteReset: 2, siteHeader: 3, siteReg: 3, siteAccess: 4, siteRepCount: 4, siteCallTarget: 4}

type probeSpec struct {
	kind int
	site int
	imm  int64
}

// Collector instruments the candidate nests of a Program and records their
// behaviour while the program runs. It is a gvinst.Translator (give it to
// the interpreter) and a gvinst.Engine (give that to the pipeline), and
// its Probe method is the interpreter's probe hook.
type Collector struct {
	prog        *Program
	lift        BlockLifter
	mem         *gvinst.Memory
	opts        CollectOptions
	inner       gvinst.Engine
	nests       []*nestState
	sites       []site
	before      map[uint64][]probeSpec // x86 address → probes before its GVInst
	access      map[uint64]int         // x86 address → nest, for LD/ST probes
	known       *KnownCalls            // memset calls, run inlined inside candidate nests
	accSite     map[[2]uint64]int      // (x86, ordinal) → site
	pending     []int                  // scratch for flush
	pendingNest []int                  // nests to re-translate (fewer probes)
	resumed     []int                  // paused nests to re-translate with every probe
	// Hotness is sampled: between slices of SliceInsns instructions the
	// collector notes which nest block the guest is about to run.
	blockSamples map[uint64]uint64 // CFG block address (of a nest) → samples
	blockNest    map[uint64]int    // CFG block address → its nest, or -1 (a loop of a function with no candidate)
	pcSamples    uint64            // all samples
	beforeAddrs  []uint64
	executed     map[uint64]bool // nest instructions of translated (so executed) VBlocks
	repCount     uint64          // the last siteRepCount value
	// In lazy mode (an != nil) a function is analysed when its entry is
	// first translated; entries are the known function entries (symbols,
	// direct call targets, and with callProbes the targets of indirect
	// calls, reported by a probe before each CALLR).
	an         *analyzer
	entries    map[uint64]bool
	callProbes bool
	// With a symbol table, functions first run before main (the C
	// library's start-up) are not analysed: started is set when main is
	// first translated. Without one, started is always set.
	mainAddr uint64
	started  bool
	// rejectedFuncs have loops, none of them a candidate: they are not
	// instrumented, only listed.
	rejectedFuncs []*Func
	callSite      int // the keys of before, sorted
	live          map[*Func]map[uint64]slots
	// roundBudget, when not 0, is the probe budget past which a nest
	// thins out (SetProbeBudget), in place of MaxProbesPerNest.
	roundBudget int64
	// counts are the sites' counters of COUNT (the engines'
	// InterpOptions.Counts, Counts), and armed the headers counting down
	// now (see Counted headers).
	counts []int64
	armed  []armedHeader
	// analysed holds each nest's last analysis, by nest index, for
	// Finish to use again while the nest's data stays the same; reused
	// counts the nests the last Finish did not analyse again.
	analysed []*nestAnalysis
	reused   int
}

// Counted headers (RATIONALE).
//
// A paused innermost loop keeps only its header's probe, which counts its
// iterations, so that the loop resumes a lead before its end
// (resumeAt): a callout per iteration, some 40-80 ns against the few
// instructions of a row's iteration. jacobi1d's round at 2 M points
// waited for its sweeps' ends so, 10 M callouts, 0.44 s on the 2-core
// machine where the same instructions run plainly in 0.07 s. So that
// header is a COUNT instead: at each of its probes the collector works
// out how many of the next headers cannot resume the loop
// (headersBefore) and sets the site's counter to that, and the engine
// takes one from it at each header without calling out, until it is
// zero. The loop's counter lags by what the engine took meanwhile, and
// nothing else of the collector changes at those headers; syncCounts
// adds it back, and disarms every counter, before any probe is handled
// and after every slice, so that whatever reads the counters (probes of
// the nest's other loops, its exits, Progress) reads them exact.

// armedHeader is a header whose counter counts down: the site, its nest
// and loop, and what its counter was set to.
type armedHeader struct {
	site  int
	n     *nestState
	loop  int
	given int64
}

// countSites is how many sites have counters: the first countSites; a
// later one's header stays a PROBE.
const countSites = 1 << 12

// Counts returns the sites' counters for the engines that run the
// collector's translations (gvinst.InterpOptions.Counts): COUNT counts
// down the one of its site.
func (c *Collector) Counts() []int64 { return c.counts }

// syncCounts gives each armed header's loop the iterations its counter
// counted, and disarms it (see Counted headers).
func (c *Collector) syncCounts() {
	for _, h := range c.armed {
		took := h.given - c.counts[h.site]
		c.counts[h.site] = 0
		h.n.counter[h.loop] += int32(took)
		h.n.sel[h.loop] = h.n.selected(h.n.counter[h.loop])
	}
	c.armed = c.armed[:0]
}

// countable reports whether header site id of loop l of nest n is a
// COUNT: the nest is paused at l, an innermost loop below the outermost
// one, and the site has a counter.
func (c *Collector) countable(n *nestState, l, id int) bool {
	return !n.sampling && n.paused == l && l > 0 && len(n.loops[l].loop.Children) == 0 && id < len(c.counts)
}

// headersBefore is how many of the next headers of paused loop info, at
// iteration t, certainly do not resume it (resumeAt with the same lead,
// toEnd and waiting): none where a selected iteration may come (not
// toEnd), and as many as fit in an int32 counter where no end is known
// or the loop is past it.
func headersBefore(info *loopInfo, t, lead int32, toEnd, waiting bool) int64 {
	never := max(int64(math.MaxInt32)-int64(t)-1, 0)
	if !toEnd {
		return 0
	}
	end, past := info.lastTrips, int64(0)
	if info.predicted > 0 {
		end, past = info.predicted, 1
	}
	if end <= 0 || !waiting && int64(t)+1 >= end+past {
		return never
	}
	return min(max(end-int64(lead)-int64(t)-1, 0), never)
}

// SetProbeBudget sets how many probe calls a nest may make before it thins
// out (see thinIterations), from now on, in place of
// CollectOptions.MaxProbesPerNest (0: that again): gxbit run --accelerate
// sizes each round's by the run so far. A nest still stops sampling at
// thinBudget times MaxProbesPerNest, whatever the budget: what a round
// must see of a time step of long 1D sweeps does not shrink with it.
func (c *Collector) SetProbeBudget(n int64) { c.roundBudget = n }

// budget is the probe budget past which a nest thins out.
func (c *Collector) budget() int64 {
	if c.roundBudget > 0 {
		return c.roundBudget
	}
	return c.opts.MaxProbesPerNest
}

// NewCollector prepares the instrumentation of the nests of p: every loop
// of every nest root is instrumented, whether or not the nest is a
// candidate, so that the report can say why a nest was not chosen from
// what it did.
func NewCollector(p *Program, lift BlockLifter, mem *gvinst.Memory, opts CollectOptions) *Collector {
	if opts.MaxSamplesPerSite <= 0 {
		opts.MaxSamplesPerSite = 4096
	}
	if opts.MaxSnapshotsPerLoop <= 0 {
		opts.MaxSnapshotsPerLoop = 256
	}
	if opts.MaxProbesPerNest <= 0 {
		opts.MaxProbesPerNest = DefaultMaxProbesPerNest
	}
	if opts.SliceInsns == 0 {
		opts.SliceInsns = 1 << 14
	}
	if opts.LongOuterIteration == 0 {
		opts.LongOuterIteration = longRootIteration
	}
	c := &Collector{prog: p, lift: lift, mem: mem, opts: opts,
		before: map[uint64][]probeSpec{}, access: map[uint64]int{}, accSite: map[[2]uint64]int{},
		live: map[*Func]map[uint64]slots{}, blockSamples: map[uint64]uint64{}, blockNest: map[uint64]int{}, executed: map[uint64]bool{},
	}
	if !opts.ProbedHeaders {
		c.counts = make([]int64, countSites)
	}
	for _, f := range p.Funcs {
		if len(f.Nests) == 0 {
			continue
		}
		live := f.liveness()
		c.live[f] = live
		for _, root := range f.Nests {
			c.addNest(root, live)
		}
	}
	return c
}

// newLazyCollector is a collector that analyses each function when its
// entry is first translated.
func newLazyCollector(an *analyzer, lift BlockLifter, mem *gvinst.Memory, opts CollectOptions, entries []uint64) *Collector {
	c := NewCollector(an.prog, lift, mem, opts)
	c.an = an
	c.entries = map[uint64]bool{}
	for _, e := range entries {
		c.entries[e] = true
	}
	c.started = true
	for a, sym := range an.syms {
		c.entries[a] = true
		if sym.Name == "main" {
			c.mainAddr, c.started = a, false
		}
	}
	if len(an.syms) == 0 {
		c.callProbes = true
		c.sites = append(c.sites, site{kind: siteCallTarget})
		c.callSite = len(c.sites) - 1
	}
	return c
}

// analyse recovers the function at entry a, if not done yet, and
// instruments its nests.
func (c *Collector) analyse(a uint64) {
	if _, done := c.an.prog.ByAddr[a]; done {
		return
	}
	f, _ := c.an.function(a)
	if f == nil || len(f.Nests) == 0 {
		return
	}
	if !f.hasCandidates() {
		// Nothing to instrument: only the hotness samples.
		for _, b := range f.Blocks {
			for _, l := range f.Loops {
				if l.Contains(b) {
					c.blockSamples[b.Addr] += 0
					c.blockNest[b.Addr] = -1
				}
			}
		}
		c.rejectedFuncs = append(c.rejectedFuncs, f)
		return
	}
	live := f.liveness()
	c.live[f] = live
	for _, root := range f.Nests {
		c.addNest(root, live)
	}
	// Translations made before cover none of f's code (its entry is
	// translated only now), except blocks running into it from before.
	for _, b := range f.Blocks {
		if b.Addr < a && c.inner != nil {
			c.inner.Invalidate(b.Addr, b.End-b.Addr)
		}
	}
}

// SetEngine gives the collector the engine it wraps (the interpreter made
// with the collector as its translator and Probe as its hook).
func (c *Collector) SetEngine(e gvinst.Engine) { c.inner = e }

func (c *Collector) addNest(root *Loop, live map[uint64]slots) {
	ni := len(c.nests)
	n := &nestState{root: root, index: map[*Loop]int{}, sampling: true, vblocks: map[uint64]uint64{}, snapping: -1, paused: -1, partial: map[string]bool{}}
	var add func(l *Loop, parent int)
	add = func(l *Loop, parent int) {
		li := &loopInfo{loop: l, parent: parent}
		idx := len(n.loops)
		n.index[l] = idx
		if parent >= 0 {
			li.chain = append(append([]int{}, n.loops[parent].chain...), idx)
		} else {
			li.chain = []int{idx}
		}
		li.liveIn = l.carriedIn()
		li.bound, li.hasBound = findBound(l)
		seen := map[[3]int64]bool{}
		for _, b := range l.Blocks {
			for _, x := range b.Insns {
				for j := range x.Code {
					in := &x.Code[j]
					if in.Op != gvinst.OpLd && in.Op != gvinst.OpSt {
						continue
					}
					a := addrOf(x, j)
					if a.kind == opdSlot && isStackBase(a.slot) {
						a.size = in.Type.Size()
						k := [3]int64{int64(a.slot), a.disp, int64(a.size)}
						if !seen[k] {
							seen[k] = true
							li.stack = append(li.stack, a)
						}
					}
				}
			}
		}
		regs := li.liveIn | 1<<4 | 1<<5 // rsp and rbp locate the stack slots
		for b := 0; b < 32; b++ {
			if regs&(1<<b) != 0 {
				li.snapRegs = append(li.snapRegs, b)
			}
		}
		// The high halves of the SSE registers, as xmmHigh+n.
		for b := 16; b < 32; b++ {
			if regs&(1<<b) != 0 {
				li.snapRegs = append(li.snapRegs, xmmHigh+b-16)
			}
		}
		if li.hasBound && len(l.Children) > 0 {
			for _, o := range []operand{li.bound.a, li.bound.b} {
				if o.kind == opdSlot && o.slot < 16 && !slices.Contains(li.snapRegs, int(o.slot)) && !slices.Contains(li.boundRegs, int(o.slot)) {
					li.boundRegs = append(li.boundRegs, int(o.slot))
				}
			}
		}
		n.loops = append(n.loops, li)
		for _, ch := range l.Children {
			add(ch, idx)
		}
	}
	add(root, -1)
	n.counter = make([]int32, len(n.loops))
	n.sel = make([]bool, len(n.loops))
	n.iterStart = make([]int64, len(n.loops))
	for i := range n.iterStart {
		n.iterStart[i] = -1
	}
	for i := range n.counter {
		n.counter[i] = -1
	}
	c.nests = append(c.nests, n)
	newSite := func(s site) int {
		s.nest = ni
		c.sites = append(c.sites, s)
		return len(c.sites) - 1
	}
	// Counters at every block of the nest.
	for _, b := range root.Blocks {
		c.blockSamples[b.Addr] += 0
		c.blockNest[b.Addr] = ni
		for _, x := range b.Insns {
			c.access[x.Addr] = ni
		}
	}
	for li, info := range n.loops {
		l := info.loop
		// Resets before the last instruction of each block entering the loop.
		for _, p := range l.Header.Preds {
			if l.Contains(p) {
				continue
			}
			id := newSite(site{kind: siteReset, loop: li})
			a := p.Last().Addr
			c.before[a] = append(c.before[a], probeSpec{kind: siteReset, site: id})
		}
		for _, e := range l.Exits {
			id := newSite(site{kind: siteExit, loop: li})
			c.before[e.To.Addr] = append(c.before[e.To.Addr], probeSpec{kind: siteExit, site: id})
		}
		id := newSite(site{kind: siteHeader, loop: li})
		h := l.Header.Addr
		c.before[h] = append(c.before[h], probeSpec{kind: siteHeader, site: id})
		for k, b := range slices.Concat(info.snapRegs, info.boundRegs) {
			rid := newSite(site{kind: siteReg, loop: li, reg: k})
			c.before[h] = append(c.before[h], probeSpec{kind: siteReg, site: rid, imm: int64(b)})
		}
	}
	c.beforeAddrs = c.beforeAddrs[:0]
	for a := range c.before {
		c.beforeAddrs = append(c.beforeAddrs, a)
	}
	sort.Slice(c.beforeAddrs, func(i, j int) bool { return c.beforeAddrs[i] < c.beforeAddrs[j] })
	// Order the probes at each address: counters, resets, headers (each
	// header followed by its registers).
	for _, b := range root.Blocks {
		for _, x := range b.Insns {
			ps := c.before[x.Addr]
			sort.SliceStable(ps, func(i, j int) bool { return probeRank[ps[i].kind] < probeRank[ps[j].kind] })
		}
	}
}

// innermost returns the innermost loop of nest n containing the block at
// x86 address a.
func (c *Collector) innermost(n *nestState, a uint64) int {
	best := 0
	for i, info := range n.loops {
		l := info.loop
		for _, b := range l.Blocks {
			if a >= b.Addr && a < b.End {
				if len(info.chain) > len(n.loops[best].chain) {
					best = i
				}
				break
			}
		}
	}
	return best
}

// Translate implements gvinst.Translator: it lifts the block at addr and
// adds the probes of the nests it overlaps.
func (c *Collector) Translate(addr uint64) (*gvinst.VBlock, error) {
	if c.an != nil && addr == c.mainAddr {
		c.started = true
	}
	if c.an != nil && c.started && c.entries[addr] {
		c.analyse(addr)
	}
	vb, err := c.lift.Translate(addr)
	if err != nil || vb == nil || len(vb.Insts) == 0 {
		return vb, err
	}
	if c.an != nil {
		last := &vb.Insts[len(vb.Insts)-1]
		switch {
		case last.Op == gvinst.OpCall:
			c.entries[last.Target[0]] = true
		case last.Op == gvinst.OpCallR && c.callProbes:
			cp := *vb
			cp.Insts = append(append([]gvinst.Inst(nil), vb.Insts[:len(vb.Insts)-1]...),
				gvinst.Inst{Op: gvinst.OpProbe, Type: gvinst.U8, Src: [4]gvinst.Reg{last.Src[0]}, Target: [2]uint64{uint64(c.callSite)}, X86: last.X86},
				*last)
			vb = &cp
		}
	}
	if last := &vb.Insts[len(vb.Insts)-1]; last.Op == gvinst.OpCall {
		if _, ok := c.access[last.X86]; ok {
			vb = inlined(vb, c.known)
		}
	}
	k := sort.Search(len(c.beforeAddrs), func(k int) bool { return c.beforeAddrs[k] >= vb.Addr })
	touched := k < len(c.beforeAddrs) && c.beforeAddrs[k] < vb.End
	for i := range vb.Insts {
		if _, ok := c.access[vb.Insts[i].X86]; ok {
			touched = true
			break
		}
	}
	if !touched {
		return vb, nil
	}
	for i := range vb.Insts {
		x := vb.Insts[i].X86
		if ni, ok := c.access[x]; ok && !c.executed[x] {
			c.executed[x] = true
			c.nests[ni].changes++
		}
	}
	cp := *vb
	cp.Insts = make([]gvinst.Inst, 0, len(vb.Insts)+16)
	out := &cp
	nv := vb.NumVRegs()
	newV := func() gvinst.Reg { nv++; return gvinst.VReg(nv - 1) }
	ordinal := 0
	for i := range vb.Insts {
		in := vb.Insts[i]
		ni, inNest := c.access[in.X86]
		if i == 0 || vb.Insts[i-1].X86 != in.X86 {
			ordinal = 0
		}
		// The probes of every guest instruction up to this one (an
		// instruction with no GVInst of its own, a nop, gets its probes
		// before the next one's).
		if i == 0 || vb.Insts[i-1].X86 != in.X86 {
			c.insertProbes(out, vb, i, newV)
		}
		if inNest && c.nests[ni].sampling {
			n := c.nests[ni]
			switch in.Op {
			case gvinst.OpLd, gvinst.OpSt:
				key := [2]uint64{in.X86, uint64(ordinal)}
				id, ok := c.accSite[key]
				if !ok {
					s := site{kind: siteAccess, nest: ni, x86: in.X86, ordinal: ordinal, block: vb.Addr, index: i,
						write: in.Op == gvinst.OpSt, size: in.Type.Size()}
					s.loop = c.innermost(n, in.X86)
					if x := c.insnAt(n, in.X86); x != nil {
						for j := range x.Code {
							if x.Code[j].Op == in.Op && x.Code[j].Type == in.Type {
								if a := addrOf(x, j); a.kind == opdSlot && isStackBase(a.slot) {
									s.stack = a
								}
								break
							}
						}
					}
					c.sites = append(c.sites, s)
					id = len(c.sites) - 1
					c.accSite[key] = id
					n.changes++
				}
				ordinal++
				n.vblocks[vb.Addr] = vb.End
				out.Insts = append(out.Insts, gvinst.Inst{Op: gvinst.OpProbe, Type: in.Type, Src: [4]gvinst.Reg{in.Src[0]}, Imm: in.Imm, Target: [2]uint64{uint64(id)}, X86: in.X86})
			case gvinst.OpRepMovs, gvinst.OpRepStos:
				// rep movs / rep stos: s1 elements at [s7] (and from [s6]),
				// recorded as one access each of s1 times the element size.
				cid, ok := c.accSite[[2]uint64{in.X86, 99}]
				if !ok {
					c.sites = append(c.sites, site{kind: siteRepCount, nest: ni})
					cid = len(c.sites) - 1
					c.accSite[[2]uint64{in.X86, 99}] = cid
					n.changes++
				}
				emit := func(slot gvinst.Reg, id int, t gvinst.Type) {
					z := newV()
					out.Insts = append(out.Insts, gvinst.Inst{Op: gvinst.OpGet, Type: gvinst.U64, Dst: z, Src: [4]gvinst.Reg{slot}, X86: in.X86})
					out.Insts = append(out.Insts, gvinst.Inst{Op: gvinst.OpProbe, Type: t, Src: [4]gvinst.Reg{z}, Target: [2]uint64{uint64(id)}, X86: in.X86})
				}
				emit(gvinst.S1, cid, gvinst.U8)
				rep := func(ord int, write bool, slot gvinst.Reg) {
					key := [2]uint64{in.X86, uint64(100 + ord)}
					id, ok := c.accSite[key]
					if !ok {
						s := site{kind: siteAccess, nest: ni, x86: in.X86, ordinal: 100 + ord, block: vb.Addr, index: i,
							write: write, size: in.Type.Size(), rep: true}
						s.loop = c.innermost(n, in.X86)
						c.sites = append(c.sites, s)
						id = len(c.sites) - 1
						c.accSite[key] = id
						n.changes++
					}
					emit(slot, id, in.Type)
				}
				if in.Op == gvinst.OpRepMovs {
					rep(0, false, gvinst.S6)
				}
				rep(1, true, gvinst.S7)
				n.vblocks[vb.Addr] = vb.End
			default:
				if in.Op.Info().Effects&(gvinst.EffLoad|gvinst.EffStore) != 0 && n.rejected == "" {
					n.rejected = "memory access the collector cannot model (" + in.Op.String() + ")"
					n.changes++
				}
			}
		}
		out.Insts = append(out.Insts, in)
	}
	return out, nil
}

// insertProbes appends to out the probes of every guest instruction from
// the one after the previous GVInst's up to GVInst i's own (an instruction
// with no GVInst of its own, a nop, gets its probes before the next one).
func (c *Collector) insertProbes(out, vb *gvinst.VBlock, i int, newV func() gvinst.Reg) {
	in := &vb.Insts[i]
	lo := vb.Addr
	if i > 0 {
		lo = vb.Insts[i-1].X86 + 1
	}
	for gi := sort.Search(len(c.beforeAddrs), func(k int) bool { return c.beforeAddrs[k] >= lo }); gi < len(c.beforeAddrs) && c.beforeAddrs[gi] <= in.X86; gi++ {
		g := c.beforeAddrs[gi]
		for _, p := range c.before[g] {
			s := &c.sites[p.site]
			if !c.nests[s.nest].sampling && !c.keepCounting(s) {
				continue
			}
			c.nests[s.nest].vblocks[vb.Addr] = vb.End
			z := newV()
			switch p.kind {
			case siteReg:
				if b := int(p.imm); b >= xmmHigh {
					// The high half of xN: read the pair, probe its second slot.
					newV()
					out.Insts = append(out.Insts, gvinst.Inst{Op: gvinst.OpGet, Type: gvinst.B128, Dst: z, Src: [4]gvinst.Reg{gvinst.XReg(b - xmmHigh)}, X86: in.X86})
					z++
				} else {
					out.Insts = append(out.Insts, gvinst.Inst{Op: gvinst.OpGet, Type: gvinst.U64, Dst: z, Src: [4]gvinst.Reg{bitSlot(b)}, X86: in.X86})
				}
				out.Insts = append(out.Insts, gvinst.Inst{Op: gvinst.OpProbe, Type: gvinst.U8, Src: [4]gvinst.Reg{z}, Target: [2]uint64{uint64(p.site)}, X86: in.X86})
			case siteHeader:
				if c.countable(c.nests[s.nest], s.loop, p.site) {
					out.Insts = append(out.Insts, gvinst.Inst{Op: gvinst.OpCount, Target: [2]uint64{uint64(p.site)}, X86: in.X86})
					continue
				}
				fallthrough
			default:
				out.Insts = append(out.Insts, gvinst.Inst{Op: gvinst.OpLi, Type: gvinst.U64, Dst: z, X86: in.X86})
				out.Insts = append(out.Insts, gvinst.Inst{Op: gvinst.OpProbe, Type: gvinst.U8, Src: [4]gvinst.Reg{z}, Imm: p.imm, Target: [2]uint64{uint64(p.site)}, X86: in.X86})
			}
		}
	}
}

// nestIndex returns n's index.
func (c *Collector) nestIndex(n *nestState) int {
	for i, m := range c.nests {
		if m == n {
			return i
		}
	}
	return -1
}

// keepCounting reports whether probe site s stays when its nest stops
// sampling: the headers, resets and exits of loops with inner loops, so
// that the trip counts of outer loops are known (an outer loop runs once
// while its inner loops run many times).
func (c *Collector) keepCounting(s *site) bool {
	switch s.kind {
	case siteHeader, siteReset, siteExit:
		n := c.nests[s.nest]
		return len(n.loops[s.loop].loop.Children) > 0 || n.paused == s.loop
	}
	return false
}

// insnAt finds the instruction at a in nest n.
func (c *Collector) insnAt(n *nestState, a uint64) *Insn {
	for _, b := range n.root.Blocks {
		if a >= b.Addr && a < b.End {
			for _, x := range b.Insns {
				if x.Addr == a {
					return x
				}
			}
		}
	}
	return nil
}

func selected(t int32) bool { return t < 4 || t&(t-1) == 0 }

// thinIterations is how many iterations of each loop a nest that has
// spent MaxProbesPerNest records, to the end of its outer loop's
// iteration (its second, if the budget went in the first) or until it
// has spent thinBudget times MaxProbesPerNest.
// Thinning pauses the unrecorded iterations of loops with inner loops
// (they cost little), but an innermost loop's run their probes: in a
// time step of 1D sweeps (jacobi1d at 2 M points: about 20 M probes a
// step) the rest of the first sweep and the whole second one are probed,
// so the cap must cover a step of those (4 times the budget stopped
// inside the first sweep, and the second was never profiled: its arrays
// then crossed the bus every step). 32 bounds the worst case to about 3 s
// of probes.
const (
	thinIterations = 5
	thinBudget     = 32
)

// innermostPauseMin is how many iterations an innermost loop must have left
// (by predictTrips) to pause once the nest has spent its probe budget
// (thin): each pause and resume translates the nest again, and its lead
// runs with every probe. Probing every iteration of a 1D sweep at 2 M
// points (its header's register snapshots, which thinning never fills to
// MaxSnapshotsPerLoop, and its accesses: 14 probes an iteration) spent
// thinBudget before jacobi1d's second sweep ended once: its trip count
// was never observed.
const innermostPauseMin = 4096

// thinOuterIterations bounds how many iterations of its outer loop a nest
// that has spent its probe budget samples while some loop has not shown
// its steps yet (stepsSeen).
const thinOuterIterations = 4

// stepsSeen reports whether every loop of nest n that has run more than
// one iteration in an entry has a header snapshot at iteration 0 and one
// at a later iteration of the same entry (of the same iterations of the
// loops around it): what classify needs to tell its induction variables.
// A loop whose snapshots are done (MaxSnapshotsPerLoop) has shown what it
// will.
func (c *Collector) stepsSeen(n *nestState) bool {
	for k, info := range n.loops {
		if info.snapDone {
			continue
		}
		multi := n.counter[k] >= 1
		for _, tr := range info.trips {
			multi = multi || tr.trips > 1
		}
		if !multi {
			continue
		}
		first := map[string]bool{}
		for _, s := range info.snaps {
			if s.iters[len(s.iters)-1] == 0 {
				first[groupKey(s.entry, s.iters[:len(s.iters)-1])] = true
			}
		}
		seen := false
		for _, s := range info.snaps {
			if s.iters[len(s.iters)-1] > 0 && first[groupKey(s.entry, s.iters[:len(s.iters)-1])] {
				seen = true
				break
			}
		}
		if !seen {
			return false
		}
	}
	return true
}

// selected reports whether iteration t is recorded: selected, or the
// first thinIterations once the nest has spent its probe budget.
func (n *nestState) selected(t int32) bool {
	if n.thin {
		return t < thinIterations
	}
	return selected(t)
}

// stopSampling ends the sampling of nest ni for good: only the counting
// probes stay (keepCounting).
func (c *Collector) stopSampling(n *nestState, ni int) {
	n.sampling, n.skip, n.thin = false, false, false
	c.pendingNest = append(c.pendingNest, ni)
}

// Pausing (RATIONALE). Only the selected iterations of every loop of a
// chain are recorded (selected), but the probes of the others run too,
// and a probe costs as much as tens of plain instructions. At large sizes
// a single iteration of an outer loop can take millions of probes, so
// that MaxProbesPerNest ended the sampling inside the first iteration of
// the outer loop, which then had no induction variable and no verdict.
// So a loop with inner loops whose last sampled iteration took at least
// pauseMinProbes probes pauses at an unselected iteration far enough from
// the next selected one: the nest is translated again with only the
// counting probes (keepCounting), which keep the counters of every loop
// with inner loops exact, and runs at the engine's speed until a few
// iterations (its lead) before the next selected one, or before the loop
// ends, where it is translated again with every probe. The new
// translation takes effect only between slices, so the lead covers two
// slices of SliceInsns instructions (an instruction makes about one probe
// at most; a longer wait costs a selected iteration, not a wrong
// sample), and what runs after a resume is counted, not recorded, until
// the first header, at the paused loop's depth or above (and not inside
// an iteration that began before it), after the new translation: every
// counter below it starts afresh there. A long loop inside an iteration
// that is not recorded pauses too, until it is about to end.
const pauseMinProbes = 256

// nextSelected is the first selected iteration after t.
func nextSelected(t int32) int32 {
	if t < 3 {
		return t + 1
	}
	s := int32(4)
	for s <= t {
		s <<= 1
	}
	return s
}

// pauseLead is how many iterations of probes-long iterations a paused
// loop resumes before the iteration it must sample.
func (c *Collector) pauseLead(probes int64) int32 {
	return int32(max(2, (2*int64(c.opts.SliceInsns)+probes-1)/max(probes, 1)))
}

// resumeAt reports whether paused loop info, at iteration t, resumes:
// the next selected iteration (unless toEnd: the loop's iterations are
// not recorded whatever they are), or the loop's end, is within lead. The
// end is where the entry's exit test says it is (predicted, give or take
// an iteration), else where the last entry ended. While the nest waits
// for its outer header to begin an entry (waiting), a loop that runs past
// its last entry's count (a growing triangle's next row) is at its end
// too: the probes must be back by that header.
func resumeAt(info *loopInfo, t, lead int32, toEnd, waiting bool) bool {
	if !toEnd && nextSelected(t) <= t+lead {
		return true
	}
	end, past := info.lastTrips, int64(0)
	if info.predicted > 0 {
		end, past = info.predicted, 1 // an estimate: it may be one short
	}
	if waiting {
		return end > 0 && int64(t)+int64(lead) >= end
	}
	return int64(t)+int64(lead) >= end && int64(t) < end+past
}

// Blind loops (RATIONALE).
//
// A loop of the iterations Restart found the guest inside (partial) whose
// end nothing tells (no earlier entry's count, and no snapshots of this
// entry to predict it from: the loops around it began before the
// collector took over, so its iterations are not recorded) does not
// pause: it would resume only at its exit, and the next header of the
// loop around it, the first iteration of that loop the round records,
// would run before the probes are back. Such a round never saw the sweep
// it began in start an iteration (zeroSeen) and ran to the program's end
// (heat3d at 80, begun late in a plane). It costs the rest of the entry's
// probes: one plane's in heat3d, where the plane loop's next header gives
// the row loop a counter. In fdtd2d the second sweep's row loop sits
// inside a loop of one iteration (the compiler's path for a single row,
// entered once a time step), which gets no counter before the next time
// step: a round begun in that sweep probed the rest of it, every
// iteration of every row, 12 probes a point (30 M at 1500 × 1700: 1.3 s
// of a 0.2 s round; begun early in the sweep it reached thinBudget, so
// that the nest stopped sampling with the third sweep never seen). So a
// partial loop with inner loops whose iterations are not recorded still
// snapshots its headers, for predictTrips only (guide: the last two, of
// the current entry; nothing the analysis reads): it is then not blind,
// pauses as a recorded loop does, and resumes a lead before its
// predicted end, before the next header of the loop around it. Only a
// loop whose exit test predictTrips cannot read stays blind.

// predictTrips is the trip count of the current entry of loop l that its
// exit test (a register that steps compared with a constant or a register
// that does not) gives on the values its last two header snapshots of this
// entry show; 0 when it cannot tell. Without it, a loop paused in its
// first entry (no earlier entry's count to go by) got its probes back only
// at its end, after which the loop next to it ran its first iteration
// before the new translation took effect, unrecorded: the second sweep of
// a time step that runs once had no induction variable. The estimate may
// be one off (the test may compare the register before or after its step;
// resumeAt allows for it); one further off resumes the loop early (it
// pauses again) or at its end, as without it.
func (c *Collector) predictTrips(n *nestState, l int) int64 {
	info := n.loops[l]
	if !info.hasBound {
		return 0
	}
	var outer []int32
	if info.parent >= 0 {
		outer = c.iters(n, info.parent)
	}
	// The entry's snapshots are the last ones taken.
	var prev, last *snap
	for i := len(info.snaps) - 1; i >= 0 && prev == nil; i-- {
		s := &info.snaps[i]
		if s.entry != n.entries-1 || !slices.Equal(s.iters[:len(s.iters)-1], outer) {
			break
		}
		if last == nil {
			last = s
		} else {
			prev = s
		}
	}
	if prev == nil && len(info.guide) == 2 {
		// No recorded snapshots of this entry: the guide's, if they are
		// of this entry (Blind loops).
		g0, g1 := &info.guide[0], &info.guide[1]
		if g0.entry == n.entries-1 && g1.entry == n.entries-1 && slices.Equal(g0.iters[:len(g0.iters)-1], outer) && slices.Equal(g1.iters[:len(g1.iters)-1], outer) {
			prev, last = g0, g1
		}
	}
	if prev == nil {
		return 0
	}
	value := func(o operand, s *snap) (int64, bool) {
		switch o.kind {
		case opdConst:
			return o.value, true
		case opdSlot:
			for k, b := range info.snapRegs {
				if b < 16 && bitSlot(b) == o.slot {
					return int64(s.vals[k]), true
				}
			}
			for k, b := range info.boundRegs {
				if bitSlot(b) == o.slot {
					return int64(s.vals[len(info.snapRegs)+len(info.stack)+k]), true
				}
			}
		case opdLoad:
			// A stack slot the header snapshots (a counter or limit
			// spilled at -O2: heat3d's plane loops compare [rsp+32]
			// with [rsp+36], and without their ends a paused plane loop
			// resumed only at its exit, after which the next sweep's
			// first plane ran unrecorded).
			for k, st := range info.stack {
				if st.slot == o.slot && st.disp == o.disp && st.size == o.size && o.size <= 8 {
					v := s.vals[len(info.snapRegs)+k]
					if info.bound.signed && o.size < 8 {
						sh := 64 - 8*o.size
						return int64(v<<sh) >> sh, true
					}
					return int64(v), true
				}
			}
		}
		return 0, false
	}
	a0, ok0 := value(info.bound.a, prev)
	a1, ok1 := value(info.bound.a, last)
	b0, ok2 := value(info.bound.b, prev)
	b1, ok3 := value(info.bound.b, last)
	if !ok0 || !ok1 || !ok2 || !ok3 {
		return 0
	}
	var v0, v1, limit int64
	switch {
	case a0 != a1 && b0 == b1:
		v0, v1, limit = a0, a1, b0
	case b0 != b1 && a0 == a1:
		v0, v1, limit = b0, b1, a0
	default:
		return 0
	}
	t0, t1 := int64(prev.iters[len(prev.iters)-1]), int64(last.iters[len(last.iters)-1])
	if t1 <= t0 || (v1-v0)%(t1-t0) != 0 {
		return 0
	}
	step, d := (v1-v0)/(t1-t0), limit-v1
	if step == 0 || d == 0 || (d > 0) != (step > 0) {
		return 0
	}
	left := (d + step - 1) / step // rounded up
	if step < 0 {
		left = (d + step + 1) / step
	}
	if left > math.MaxInt32 {
		return 0
	}
	return t1 + left
}

// pause stops the sampling probes of nest ni during the unselected
// iterations of its loop l.
func (c *Collector) pause(n *nestState, ni, l int) {
	n.sampling, n.paused = false, l
	c.pendingNest = append(c.pendingNest, ni)
}

// resume gives nest n, paused, its sampling probes back.
func (c *Collector) resume(n *nestState) {
	l := n.paused
	d := len(n.loops[l].chain)
	if n.skip {
		// Still skipping after an earlier resume: what began
		// unrecorded stays so.
		d = min(d, n.skipSeen)
	}
	n.sampling, n.skip, n.flushed, n.skipSeen = true, true, false, d
	n.paused = -1
	// The paused loop's and its inner loops' iterations start afresh;
	// an enclosing loop's iteration goes on, and may pause in turn
	// (one pause an iteration of it rather than one for each of the
	// inner loop's entries).
	for k := range n.iterStart {
		if k == l || c.isDescendant(n, k, l) {
			n.iterStart[k] = -1
		}
	}
	c.resumed = append(c.resumed, c.nestIndex(n))
}

// Probe is the interpreter's probe hook.
func (c *Collector) Probe(id uint32, addr uint64, size int) {
	if len(c.armed) > 0 {
		c.syncCounts()
	}
	s := &c.sites[id]
	if s.kind == siteCallTarget {
		c.entries[addr] = true
		return
	}
	n := c.nests[s.nest]
	if !n.sampling {
		// Counting: only the outer loops' iterations, for their trip
		// counts (paused: for resuming too).
		switch s.kind {
		case siteHeader:
			l := s.loop
			for k := l + 1; k < len(n.loops); k++ {
				if n.counter[k] >= 0 && c.isDescendant(n, k, l) {
					c.finishTrips(n, k)
				}
			}
			if l == 0 && n.provisional {
				c.endProvisional(n)
			}
			if l == 0 && n.counter[0] < 0 && (n.paused >= 0 || n.skip) {
				// A nest paused before the collector saw its outer loop
				// begin an iteration (its descendant, ended above, has
				// resumed): the entry begins at the first outer header
				// with every probe in place, so that its iteration 0 is
				// recorded from its start.
				return
			}
			c.beginEntry(n, l)
			n.counter[l]++
			n.loops[l].entered = true
			if l == 0 && n.counter[0] == 0 {
				// A new entry, counted only: its trip counts are its
				// own, not those of the last entry sampled (gramschmidt's
				// j loop, entered once per k with n-k-1 trips, gave two
				// trip counts to one entry).
				n.entries++
			}
			n.sel[l] = n.selected(n.counter[l])
			if n.paused >= 0 && l == 0 {
				n.maxOuter = max(n.maxOuter, n.counter[0])
			}
			if n.paused == l && resumeAt(n.loops[l], n.counter[l], n.lead, n.toEnd, n.counter[0] < 0) {
				c.resume(n)
			}
			if n.skip {
				// This iteration began unrecorded (the header that
				// resumed an ancestor's paused descendant, or l itself).
				n.skipSeen = min(n.skipSeen, len(n.loops[l].chain))
			}
			if c.countable(n, l, int(id)) {
				if k := headersBefore(n.loops[l], n.counter[l], n.lead, n.toEnd, n.counter[0] < 0); k > 0 {
					c.counts[id] = k
					c.armed = append(c.armed, armedHeader{site: int(id), n: n, loop: l, given: k})
				}
			}
		case siteReset, siteExit:
			c.finishTrips(n, s.loop)
			n.loops[s.loop].fresh = n.loops[s.loop].fresh || s.kind == siteReset
		}
		return
	}
	// A nest the guest was inside when the collector took over (a later
	// round of gxbit run --accelerate) starts counting at its first outer
	// iteration, so that the probe budget buys whole iterations.
	if n.entries > 0 || s.kind == siteHeader && s.loop == 0 {
		n.probes++
	}
	n.spent++
	switch {
	case n.probes >= thinBudget*c.opts.MaxProbesPerNest:
		c.stopSampling(n, s.nest)
	case n.probes >= c.budget() && !n.thin:
		// Thin out to the end of the outer loop's iteration, so that
		// the loops after the one that spent the budget (a time step's
		// second sweep) are sampled too, and through the next one if
		// the budget went in the first: what is seen at one value of
		// the outer index only has no known step in it (fitAffine).
		n.thin = true
	}
	switch s.kind {
	case siteHeader:
		l := s.loop
		if l == 0 && n.thin && n.counter[0] >= 1 && (n.counter[0]+1 >= thinOuterIterations || c.stepsSeen(n)) {
			// The outer iteration that spent the budget is over, the
			// loop has begun two iterations while sampling (jacobi1d
			// stopped at its second time step's header: its sweeps' trip
			// counts were seen at t = 0 only, not affine in t), and
			// every loop of the nest has shown its steps: an iteration
			// that began unrecorded (after a loop that resumed only at
			// its end) may have left one with no first iteration seen
			// next to a later one, and so with no induction variable.
			c.stopSampling(n, s.nest)
			c.Probe(id, addr, size)
			return
		}
		// Inner loops start afresh in this iteration.
		for k := l + 1; k < len(n.loops); k++ {
			if n.counter[k] >= 0 && c.isDescendant(n, k, l) {
				c.finishTrips(n, k)
			}
		}
		if l == 0 && n.provisional {
			c.endProvisional(n)
		}
		if n.counter[l] < 0 && l == 0 {
			if n.skip && !n.flushed {
				// As above: not until the probes are in place.
				return
			}
			n.entries++
		}
		info := n.loops[l]
		if d := len(info.chain); n.skip {
			// Once the probes are back, a header of a loop with inner
			// loops ends the skip: its counter, and its ancestors', were
			// kept exact by the counting probes, and its inner loops'
			// start afresh above. So does the header of an innermost loop
			// entered since (fresh): its counter began at its entry; and
			// that of an innermost loop paused counting its headers (a
			// long row past its recorded iterations, innermostPauseMin):
			// its counter is exact too. Skipping on from there to the
			// next outer header lost what the outer iteration does after
			// the row (conv2d's memset of its output row, at 15,000
			// columns): recorded at one outer index only, it had no step,
			// and a single run's round begun inside the rows found the
			// nest's outer level sequential.
			// Waiting instead for a header as shallow as any seen while
			// skipping lost whole iterations of the outer loop (a time
			// step that began just before the probes came back, its
			// sweeps' rows resumed at their ends, ran unrecorded to the
			// next step), and took an innermost loop's header there for
			// one whose counter was exact (n-body's update loop, entered
			// before the probes came back, gave 19,999 trips for 20,000).
			// The enclosing iterations that began while skipping are
			// recorded from here on only: they are partial.
			if n.flushed && (len(info.loop.Children) > 0 || info.fresh || info.counting) {
				for q := n.skipSeen; q < d; q++ {
					n.partial[groupKey(n.entries-1, c.iters(n, info.chain[q-1]))] = true
					n.changes++
				}
				n.skip = false
			} else {
				n.skipSeen = min(n.skipSeen, d)
			}
		}
		c.beginEntry(n, l)
		n.counter[l]++
		info.entered = true
		if l == 0 {
			n.maxOuter = max(n.maxOuter, n.counter[0])
		}
		n.sel[l] = n.selected(n.counter[l])
		n.snapping, n.guiding = -1, false
		if len(info.loop.Children) > 0 && n.sampling {
			// An iteration that is not recorded (unselected, or inside
			// one that began unrecorded: after a resume, or before the
			// nest's outer loop began an iteration under the collector)
			// need not pay for its probes.
			t := n.counter[l]
			unrecorded := n.skip || n.counter[0] < 0 || n.thin && !n.selected(t)
			// Its later iterations stay unrecorded (toEnd) only while an
			// enclosing loop's iteration does: one of l's own that began
			// so (an inner loop resumed at its end, just before this
			// header: covariance's j loop, shorter at each i than the
			// last) ends at l's next header, and l's next selected
			// iteration is recorded. Paused to its end, the outer loop
			// of covariance's nest was sampled at i = 0 only.
			toEnd := n.skip && n.skipSeen < len(info.chain) || n.counter[0] < 0 || n.thin && !n.selected(t)
			if last := n.iterStart[l]; last >= 0 && n.spent-last >= pauseMinProbes && (unrecorded || !selected(t)) {
				lead, waiting := c.pauseLead(n.spent-last), n.counter[0] < 0
				if waiting {
					lead = max(lead, info.lead)
				} else {
					info.predicted = c.predictTrips(n, l)
				}
				// A loop of the iterations Restart found the guest inside
				// whose end nothing tells does not pause (Blind loops).
				blind := info.partial && info.lastTrips == 0 && info.predicted == 0
				if !blind && !resumeAt(info, t, lead, toEnd, waiting) {
					info.lead = lead
					n.iterStart[l], n.lead, n.toEnd = -1, lead, toEnd
					c.pause(n, s.nest, l)
					return
				}
			}
			n.iterStart[l] = n.spent
		} else if n.thin && n.sampling && !n.skip && n.counter[0] >= 0 {
			// An innermost loop past its recorded iterations in a nest
			// that spent its budget (a 1D sweep of a time step) pauses to
			// a lead before the end its exit test predicts, counting its
			// headers only (innermostPauseMin). It is considered once an
			// entry: after its last recorded iteration, or where the
			// budget ran out.
			switch t := n.counter[l]; {
			case info.pauseTried || t < thinIterations-1:
			case n.iterStart[l] < 0:
				n.iterStart[l] = n.spent
			default:
				lead := c.pauseLead(n.spent - n.iterStart[l])
				info.pauseTried, n.iterStart[l] = true, -1
				if end := c.predictTrips(n, l); end-int64(t) >= max(innermostPauseMin, 4*int64(lead)) {
					info.predicted, info.counting = end, true
					n.lead, n.toEnd = lead, true
					c.pause(n, s.nest, l)
					return
				}
			}
		}
		if n.skip {
			return
		}
		if n.counter[l] == 0 && c.chainSelected(n, l) {
			info.zeroSeen = true
		}
		recorded := c.chainSelected(n, l) && !info.snapDone
		if guide := info.partial && len(info.loop.Children) > 0 && !c.chainSelected(n, l); recorded || guide {
			n.snapping, n.guiding = l, !recorded
			nregs := len(info.snapRegs) + len(info.boundRegs)
			if cap(n.buf) < nregs {
				n.buf = make([]uint64, nregs)
			}
			n.buf = n.buf[:nregs]
			if nregs == 0 {
				c.commitSnap(n, l)
			}
		}
	case siteReg:
		if n.skip || n.snapping != s.loop {
			return
		}
		n.buf[s.reg] = addr
		if s.reg == len(n.buf)-1 {
			c.commitSnap(n, s.loop)
		}
	case siteReset, siteExit:
		c.finishTrips(n, s.loop)
		n.loops[s.loop].fresh = n.loops[s.loop].fresh || s.kind == siteReset
	case siteRepCount:
		c.repCount = addr
	case siteAccess:
		if n.skip || s.samples >= c.opts.MaxSamplesPerSite || n.entries == 0 || !c.chainSelected(n, s.loop) {
			return
		}
		if s.rep {
			if c.repCount == 0 {
				return
			}
			bytes := int(c.repCount) * size
			if !s.repSized {
				s.size, s.repSized = bytes, true
			} else if s.size != bytes {
				s.varSize = true
			}
		}
		s.samples++
		n.samples = append(n.samples, sample{site: int32(id), entry: n.entries - 1, iters: c.iters(n, s.loop), addr: addr})
		n.changes++
	}
}

func (c *Collector) isDescendant(n *nestState, k, l int) bool {
	for p := n.loops[k].parent; p >= 0; p = n.loops[p].parent {
		if p == l {
			return true
		}
	}
	return false
}

// finishTrips ends the current entry of loop l, recording its trip count.
func (c *Collector) finishTrips(n *nestState, l int) {
	if n.paused == l {
		// The paused loop ends: its siblings and ancestors sample.
		c.resume(n)
	}
	// Once a nest only counts (or while it is paused, or skips after a
	// resume), its innermost loops run without probes and their counters
	// mean nothing.
	if n.counter[l] >= 0 && (n.sampling && !n.skip || len(n.loops[l].loop.Children) > 0 || n.loops[l].counting) {
		info := n.loops[l]
		if info.exact {
			info.lastTrips = int64(n.counter[l]) + 1
		}
		if n.entries > 0 && len(info.trips) < c.opts.MaxSamplesPerSite {
			if ts, ok := c.tripNow(n, l); ok && info.partial {
				info.partialTrips = ts
			} else if ok {
				info.trips = append(info.trips, ts)
				n.changes++
			}
		}
	}
	// A partial entry (the one Restart found the guest inside) is done
	// after minOuterIterations iterations, or at its end once it ran two
	// from the first it recorded: the rest of the entry is all there was
	// to see of it, and waiting for the next entry (a sweep the round
	// caught seven planes before its end) ran the round through the rest
	// of the time step and most of the next.
	if info := n.loops[l]; info.entered && n.counter[l] >= 0 && (!info.partial || n.counter[l] >= minOuterIterations || info.zeroSeen && n.counter[l] >= 1) {
		info.done = true
	}
	if info := n.loops[l]; n.counter[l] >= 0 && timesEntries(info) {
		// At least this long, for an entry begun before the round.
		now := c.inner.Stats().GuestInsns
		info.lastEntry, info.entryMark = now-max(info.entryMark, n.rootAt), now
	}
	n.counter[l] = -1
	n.loops[l].lead, n.loops[l].exact, n.loops[l].predicted, n.loops[l].partial = 0, true, 0, false
	n.loops[l].guide = n.loops[l].guide[:0]
	n.loops[l].counting, n.loops[l].pauseTried = false, false
	for k := l + 1; k < len(n.loops); k++ {
		if c.isDescendant(n, k, l) && n.counter[k] >= 0 {
			c.finishTrips(n, k)
		}
	}
}

func (c *Collector) chainSelected(n *nestState, l int) bool {
	for _, k := range n.loops[l].chain {
		if n.counter[k] < 0 || !n.sel[k] {
			return false
		}
	}
	return true
}

// tripNow is loop l's trip count so far in the nest's current entry, as a
// sample with the iterations of the loops around it; false when those
// are not all selected (chainSelected), so that the sample has no place.
func (c *Collector) tripNow(n *nestState, l int) (tripSample, bool) {
	var outer []int32
	if p := n.loops[l].parent; p >= 0 {
		if !c.chainSelected(n, p) {
			return tripSample{}, false
		}
		outer = c.iters(n, p)
	}
	return tripSample{entry: n.entries - 1, iters: outer, trips: int64(n.counter[l]) + 1}, true
}

func (c *Collector) iters(n *nestState, l int) []int32 {
	ch := n.loops[l].chain
	out := make([]int32, len(ch))
	for i, k := range ch {
		out[i] = n.counter[k]
	}
	return out
}

func (c *Collector) commitSnap(n *nestState, l int) {
	info := n.loops[l]
	vals := make([]uint64, len(info.snapRegs)+len(info.stack)+len(info.boundRegs))
	copy(vals, n.buf[:len(info.snapRegs)])
	copy(vals[len(info.snapRegs)+len(info.stack):], n.buf[len(info.snapRegs):])
	var rsp, rbp uint64
	for k, b := range info.snapRegs {
		switch b {
		case 4:
			rsp = n.buf[k]
		case 5:
			rbp = n.buf[k]
		}
	}
	for k, s := range info.stack {
		base := rsp
		if s.slot == gvinst.S5 {
			base = rbp
		}
		v, err := c.mem.Load(base+uint64(s.disp), min(s.size, 8))
		if err != nil {
			v = 0
		}
		vals[len(info.snapRegs)+k] = v
	}
	n.snapping = -1
	if n.guiding {
		// Not recorded: only the last two, for predictTrips.
		n.guiding = false
		if len(info.guide) == 2 {
			info.guide = append(info.guide[:0], info.guide[1])
		}
		info.guide = append(info.guide, snap{entry: n.entries - 1, iters: c.iters(n, l), vals: vals})
		return
	}
	info.snaps = append(info.snaps, snap{entry: n.entries - 1, iters: c.iters(n, l), vals: vals})
	n.changes++
	if len(info.snaps) >= c.opts.MaxSnapshotsPerLoop && !info.snapDone {
		// Enough: re-translate the nest without this loop's register probes.
		info.snapDone = true
		c.pendingNest = append(c.pendingNest, c.nestIndex(n))
	}
}

// Run implements gvinst.Engine: it runs the wrapped engine in slices and,
// between slices, re-translates the nests that have sampled enough.
func (c *Collector) Run(cpu *gvinst.CPU, budget uint64) gvinst.Stop {
	start := c.inner.Stats().GuestInsns
	for {
		slice := c.opts.SliceInsns
		if budget != 0 {
			used := c.inner.Stats().GuestInsns - start
			if used >= budget {
				return gvinst.Stop{Kind: gvinst.StopBudget, PC: cpu.PC}
			}
			slice = min(slice, budget-used)
		}
		st := c.inner.Run(cpu, slice)
		c.syncCounts()
		c.flush()
		if st.Kind == gvinst.StopBudget {
			c.pcSamples++
			if n, ok := c.blockSamples[cpu.PC]; ok {
				c.blockSamples[cpu.PC] = n + 1
			}
		}
		if st.Kind != gvinst.StopBudget {
			return st
		}
	}
}

// flush switches the pending nests to counting only.
func (c *Collector) flush() {
	c.pending = append(c.pending[:0], c.pendingNest...)
	c.pendingNest = c.pendingNest[:0]
	for _, ni := range c.pending {
		n := c.nests[ni]
		for a, end := range n.vblocks {
			c.inner.Invalidate(a, end-a)
		}
		n.vblocks = map[uint64]uint64{}
	}
	c.pending = c.pending[:0]
	// A resumed nest's blocks without probes (its innermost loops') get
	// them back as well.
	for _, ni := range c.resumed {
		n := c.nests[ni]
		for a, end := range n.vblocks {
			c.inner.Invalidate(a, end-a)
		}
		n.vblocks = map[uint64]uint64{}
		for _, b := range n.root.Blocks {
			c.inner.Invalidate(b.Addr, b.End-b.Addr)
		}
		n.flushed = true
		for _, info := range n.loops {
			info.fresh = false
		}
	}
	c.resumed = c.resumed[:0]
}

// Invalidate implements gvinst.Engine.
func (c *Collector) Invalidate(addr, size uint64) { c.inner.Invalidate(addr, size) }

// Stats implements gvinst.Engine.
func (c *Collector) Stats() gvinst.EngineStats { return c.inner.Stats() }

// Progress is how far a collector's sampling has come, for a caller that
// ends the profiling once it has seen enough (gxbit run --accelerate).
type Progress struct {
	// Entered is the number of nests the guest has entered.
	Entered int
	// Sampling is how many of those are running now and have not been
	// sampled enough yet: a nest has been once it stopped sampling
	// (MaxProbesPerNest), or once its outermost loop has run
	// minOuterIterations iterations in one entry (the iterations the fit
	// samples before it thins out), or once a loop just inside that one,
	// with inner loops of its own, has run minOuterIterations iterations in its
	// current entry while the outermost loop's current iteration has
	// taken CollectOptions.LongOuterIteration guest instructions
	// (longRootIteration by default). A nest that
	// is not running has given what its entries so far could give.
	Sampling int
}

// minOuterIterations is how many iterations of a nest's outermost loop
// make it sampled enough for Progress.
const minOuterIterations = 9

// longRootIteration is how many guest instructions an iteration of a
// nest's outermost loop must have taken for Progress to stop waiting for
// minOuterIterations of them, once a loop inside it, with inner loops of
// its own, has run that many iterations (RATIONALE). The outermost loop
// of a nest is often a time step or a repetition run a few times (nbody's
// 2 steps, each a 40000 × 40000 i-j nest; fsum's 3 passes): waiting for 9
// of its iterations profiled the whole run and offloaded nothing. The
// inner loop's model (its level seen at a few values) is what phase 2
// maps, and an outermost level that is parallel but not seen enough costs
// little when its iterations are this long: the inner level's launch, one
// per outer iteration, has tens of millions of instructions of work to
// amortise it.
const longRootIteration = 1 << 25

// Progress reports the collector's sampling so far.
func (c *Collector) Progress() Progress {
	var p Progress
	for _, n := range c.nests {
		running := false
		for _, k := range n.counter {
			running = running || k >= 0
		}
		if n.entries == 0 && !running {
			continue
		}
		p.Entered++
		// A nest the guest was inside when the collector took over counts
		// its entry from its next outer iteration: running, it is not
		// sampled until then.
		if (n.sampling || n.paused >= 0) && n.maxOuter < minOuterIterations && running && !c.innerSampled(n) {
			p.Sampling++
		}
	}
	return p
}

// innerSampled reports whether nest n, in a round begun inside it (the
// provisional entry Restart began in the outermost loop's iteration the
// guest was inside, and the entry after it, inside), has run
// CollectOptions.LongOuterIteration guest instructions since, and every
// loop just inside the outermost one, with inner loops of its own, that
// began an iteration since has recorded its iteration 0 and run
// minOuterIterations iterations in one entry, or a whole entry, and has
// ended two entries (its trip count at two values of the outer index)
// or had longRootTripWait LongOuterIteration to; and one has (Progress).
//
// The rule holds past the provisional entry, in the outer iterations
// that follow it in the same round (inside): a round begun late in a time
// step's first sweep saw fewer than minOuterIterations of its planes, so
// it went on into the next step, whose header ended the provisional
// entry, and then waited for nine whole time steps: it profiled heat3d's
// six to the end and offloaded nothing.
func (c *Collector) innerSampled(n *nestState) bool {
	since := c.inner.Stats().GuestInsns - n.rootAt
	if !n.inside || since < c.opts.LongOuterIteration {
		return false
	}
	some := false
	for l := 1; l < len(n.loops); l++ {
		info := n.loops[l]
		if info.parent != 0 || len(info.loop.Children) == 0 || !info.entered {
			continue
		}
		if !info.zeroSeen || !info.done && n.counter[l] < minOuterIterations {
			// Not seen enough yet (a sweep whose first planes ran
			// while the probes came back, or one the round caught
			// near its end): the round goes on, whichever other loop
			// of the step is done.
			return false
		}
		if len(info.trips) < 2 && since < longRootTripWait*c.opts.LongOuterIteration && !c.longEntries(n, l) {
			// Its trip count not seen at two outer indices yet
			// (RATIONALE: Trip counts of rows): the round goes on to the
			// end of its second whole entry, for a while.
			return false
		}
		some = true
	}
	return some
}

// Trip counts of rows (RATIONALE).
//
// A loop just inside the outermost one whose entries are shorter than
// LongOuterIteration (gemm's k loop at 1600 × 1800 × 2000: an entry is a
// row of the product, 18 M guest instructions) must end two entries
// before innerSampled ends the round, if that comes within
// longRootTripWait LongOuterIteration of the round's start: the entry the
// round began inside gives no trip count, and a trip count seen at one
// value of the outer index has no known step in it (fitAffine), so the
// outer level is not a model phase 2 can map ("the inner loop at
// 0x401730 has no affine, positive trip count"). A single run of gemm at
// that size, its round ended at 32 M instructions with one whole row
// seen, mapped the k level instead, one launch per k, and lost to the
// CPU. Long entries (n-body's i loop, a whole time step of 40000 × 40000;
// heat3d's sweeps, each an entry of its plane loop) are not waited for,
// as before: the inner level is what phase 2 maps there.

// timesEntries reports whether the collector times the entries of loop
// info (entryMark): a loop just inside its nest's outermost one with
// inner loops of its own, as innerSampled looks at.
func timesEntries(info *loopInfo) bool {
	return info.parent == 0 && len(info.loop.Children) > 0
}

// beginEntry notes the start of an entry of loop l of nest n, at its
// header, where its counter is about to leave -1 (timesEntries).
func (c *Collector) beginEntry(n *nestState, l int) {
	if info := n.loops[l]; n.counter[l] < 0 && timesEntries(info) {
		info.entryMark = c.inner.Stats().GuestInsns
	}
}

// longEntries reports whether the entries of loop l of nest n are long
// (see Trip counts of rows): its last entry took longEntry
// CollectOptions.LongOuterIteration guest instructions or more, or its
// current one has run that many, or it has waited that many for its next
// (since the round began, for an entry begun before it): heat3d's first
// sweep between its time steps, while the second sweep runs.
func (c *Collector) longEntries(n *nestState, l int) bool {
	info := n.loops[l]
	long := c.opts.LongOuterIteration
	if soleRowLoop(n, l) {
		long *= longEntry
	}
	return info.lastEntry >= long || c.inner.Stats().GuestInsns-max(info.entryMark, n.rootAt) >= long
}

// soleRowLoop reports whether loop l is the only loop just inside nest
// n's outermost one with inner loops of its own: the outermost loop's
// body is one nest (gemm's k loop under i, beside the beta loop), whose
// outermost level is the one phase 2 should map, not a time step's
// sweeps (heat3d's two, fdtd2d's three), each of which phase 2 maps by
// itself.
func soleRowLoop(n *nestState, l int) bool {
	for m := 1; m < len(n.loops); m++ {
		if m != l && timesEntries(n.loops[m]) {
			return false
		}
	}
	return true
}

// longEntry is how many CollectOptions.LongOuterIteration an entry of
// the only loop just inside a nest's outermost one with inner loops
// (soleRowLoop) takes for longEntries (one for a time step's sweeps), and
// longRootTripWait how many a round begun inside a nest waits, at most,
// for those loops to end two entries (see above): an entry the round
// began inside, then two whole ones. gemm at the 2000 × 2300 ×
// 2600 has rows of 48 M instructions: counted long at one
// LongOuterIteration, its single run's round ended inside the first row,
// mapped the k level (sequential: the only parallel level left was j,
// 2300 iterations a launch, not profitable), and the product ran on the
// CPU, 19 s on the 2-core machine where the two-phase run takes 2.
const (
	longEntry        = 2
	longRootTripWait = 6
)

// endProvisional ends the entry Restart began inside an iteration of
// nest n's outermost loop, at that loop's next header: the header begins
// a whole entry (the partial iteration's trip count is not recorded).
func (c *Collector) endProvisional(n *nestState) {
	n.provisional = false
	n.loops[0].partial = true
	c.finishTrips(n, 0)
}

// Restart prepares the collector to drive the guest again, at pc, after
// another engine ran it (a later profiling round of gxbit run
// --accelerate, or the first one when the run did not start under the
// collector): where the guest was in each nest is forgotten, so that no
// stale loop counter is taken for its position, and a nest it is inside
// now, or enters later, begins a new entry at its next outer header. In
// lazy mode the function holding pc is analysed (its entry ran on the
// other engine, so it was never translated here), and every function
// entered from now on: the guest is taken to be past its C library's
// start-up.
func (c *Collector) Restart(pc uint64) {
	if c.an != nil {
		c.started = true
		var best uint64
		for a, sym := range c.an.syms {
			if a <= pc && a > best && (sym.Size == 0 || pc < a+sym.Size) {
				best = a
			}
		}
		if best != 0 {
			before := len(c.nests)
			c.analyse(best)
			for _, n := range c.nests[before:] {
				// Its blocks may have run here before, without probes.
				for _, b := range n.root.Blocks {
					c.inner.Invalidate(b.Addr, b.End-b.Addr)
				}
			}
		}
	}
	now := c.inner.Stats().GuestInsns
	for ni, n := range c.nests {
		if n.paused >= 0 {
			c.resume(n)
		}
		// A nest with a loop no round has sampled yet (the round that
		// spent the nest's probe budget ended before it ran: a time
		// step's second sweep) gets a budget again, for that loop; this
		// round may have begun for it. The others keep theirs spent:
		// probing them again would only repeat what they showed.
		unsampled := false
		for _, info := range n.loops {
			unsampled = unsampled || len(info.snaps) == 0
		}
		if unsampled && n.entries > 0 {
			n.probes, n.thin = 0, false
			if !n.sampling && n.paused < 0 {
				n.sampling = true
				c.resumed = append(c.resumed, ni)
			}
		}
		c.cutEntries(n)
		for i := range n.counter {
			n.counter[i] = -1
			n.loops[i].exact, n.loops[i].partial, n.loops[i].guide = false, false, n.loops[i].guide[:0]
			n.loops[i].entered, n.loops[i].done, n.loops[i].zeroSeen, n.loops[i].tookOver = false, false, false, false
		}
		n.snapping, n.guiding, n.provisional, n.inside = -1, false, false, false
	}
	// The guest is between engines: the nests resumed or sampling again
	// get their probes back now, not after the collector's first slice,
	// so that nothing runs unrecorded (skip) from here on.
	c.flush()
	for _, n := range c.nests {
		n.skip = false
	}
	// The guest inside a nest: its outermost loop's iteration in progress
	// begins a provisional entry at once, counted as that loop's iteration
	// 0, rather than at the loop's next header, so that the loops inside
	// it are sampled from their next headers on: the iteration in progress
	// may be the last there is (nbody's second time step, hours long at
	// its size) or most of the run. The loops the guest is inside have
	// partial entries, whose trip counts are not recorded; the loop's next
	// header ends the provisional entry (endProvisional).
	for _, n := range c.nests {
		if !n.contains(pc) {
			continue
		}
		n.entries++
		n.counter[0], n.sel[0], n.provisional, n.inside, n.rootAt = 0, true, true, true, now
		// That iteration is recorded from its middle: a stack slot it
		// wrote before the collector took over (a spilled bound, an
		// inner loop's counter set to 0 at -O0) is read first here, and
		// is not taken for one the loop carries (privateAt).
		n.partial[groupKey(n.entries-1, n.counter[:1])] = true
		n.changes++
		for _, k := range n.loops[c.innermost(n, pc)].chain {
			n.loops[k].partial, n.loops[k].tookOver = true, true
		}
		break
	}
}

// cutEntries keeps, for each loop of nest n whose entry was still running
// when the last round ended (Restart, beginning the next, forgets the
// counters), the iterations that entry ran under the collector as a
// partial entry's trip count (partialTrips): the lower bound
// provisionalTrips gave it for that round's analysis. Without it a later
// round's analysis found no trip count for a loop whose only entries were
// the one the first round began inside and the one it ended inside
// (doitgen's q loop: its nest, offloadable after the first round, was
// sequential after the second, "trip count of level i not observed").
func (c *Collector) cutEntries(n *nestState) {
	for l, info := range n.loops {
		// As in finishTrips: an innermost loop's counter means nothing
		// while the nest only counts.
		if n.counter[l] < 0 || len(info.trips) > 0 || !(n.sampling && !n.skip || len(info.loop.Children) > 0 || info.counting) {
			continue
		}
		if ts, ok := c.tripNow(n, l); ok && ts.trips > info.partialTrips.trips {
			info.partialTrips = ts
		}
	}
}

// contains reports whether the guest address pc is inside a block of
// nest n.
func (n *nestState) contains(pc uint64) bool {
	for _, b := range n.root.Blocks {
		if pc >= b.Addr && pc < b.End {
			return true
		}
	}
	return false
}

// InNest reports whether the guest address pc starts a block of a loop
// the collector has sampled (or of a loop it does not instrument: one of
// a function with no candidate nest). A loop of a nest that has run, but
// not in a sampled iteration (a time step's second sweep, when the round
// ended in its first), is not known.
func (c *Collector) InNest(pc uint64) bool {
	ni, ok := c.blockNest[pc]
	if !ok || ni < 0 {
		return ok
	}
	n := c.nests[ni]
	return n.entries > 0 && len(n.loops[c.innermost(n, pc)].snaps) > 0
}

// provisionalTrips gives every loop that is running now and has no trip
// count sample yet (the outer level of a nest instance still in progress,
// as when gxbit run --accelerate ends a profiling round inside the only
// instance of a nest) the iterations it has run so far as its trip count,
// a lower bound, so that Finish can analyse the nest; phase 2 finds the
// real trip count from the loop's exit test when it offloads the rest of
// the instance. A loop that is not running and was seen only in an entry
// the collector took over in the middle of (a time step's first sweep,
// when the round began inside it and ended in the second) gets that
// entry's count, a lower bound as well. It returns the samples it gave,
// nest by nest in order, and the function that takes them back out.
func (c *Collector) provisionalTrips() (given []provisionalTrip, undo func()) {
	type added struct{ info *loopInfo }
	var undoList []added
	for _, n := range c.nests {
		if n.entries == 0 {
			continue
		}
		for l, info := range n.loops {
			if len(info.trips) > 0 {
				continue
			}
			if n.counter[l] < 0 {
				if info.partialTrips.trips > 0 {
					info.trips = append(info.trips, info.partialTrips)
					undoList = append(undoList, added{info})
					given = append(given, provisionalTrip{n, l, info.partialTrips})
				}
				continue
			}
			if ts, ok := c.tripNow(n, l); ok {
				info.trips = append(info.trips, ts)
				undoList = append(undoList, added{info})
				given = append(given, provisionalTrip{n, l, ts})
			}
		}
	}
	return given, func() {
		for _, a := range undoList {
			a.info.trips = a.info.trips[:len(a.info.trips)-1]
		}
	}
}

// provisionalTrip is a trip count provisionalTrips gave loop loop of
// nest n.
type provisionalTrip struct {
	n    *nestState
	loop int
	trip tripSample
}

// sameTrips reports whether two lists of provisionalTrip give the same
// loops the same counts.
func sameTrips(a, b []provisionalTrip) bool {
	return slices.EqualFunc(a, b, func(x, y provisionalTrip) bool {
		return x.n == y.n && x.loop == y.loop && x.trip.entry == y.trip.entry && x.trip.trips == y.trip.trips && slices.Equal(x.trip.iters, y.trip.iters)
	})
}
