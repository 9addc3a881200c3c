package accel

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptxgen"
)

// prefer1D reports whether a launch of count outer iterations should use
// the 1D kernel k though a 2D one exists: on the simulator, whose "SMs"
// are the host's cores, once the outer level alone gives every core a CTA
// of its own. There a thread's prologue costs as much as many inner
// iterations, and the 1D kernel pays it once per row, with the inner
// loop's footprint checks hoisted to its entry; a real GPU needs the 2D
// kernel's parallelism.
func (a *Accelerator) prefer1D(k *ptxgen.Kernel, count uint64) bool {
	bx := uint64(max(k.Plan.Config(count).Block.X, 1))
	return a.opts.Driver != nil && a.opts.Driver.Name() == "sim" && (count+bx-1)/bx >= uint64(runtime.NumCPU())
}

// (it ended, or the engine must handle a stop).
func (sp *spot) offload(cpu *gvinst.CPU) (done bool, fb *fallback) {
	sp.fetch, sp.unseen, sp.exit, sp.launchCPU = 0, 0, nil, cpu
	k := sp.kernel
	ns := len(k.Sites)
	mem := sp.a.g.Mem
	// The reloaded registers among the live-ins: checked at each probed
	// arrival, passed no value (each thread loads them).
	reloaded := reloadIndex(k.LiveIns, k.Reloads, 0)
	// Two probed iterations give the steps (checked on three states); a
	// 2D kernel needs a third, to check the per-row changes of the inner
	// trip count and steps.
	P := 2
	if sp.kernel2 != nil || sp.partsNeedRows() {
		P = 3
	}
	var states [4][]uint64
	var recs [3]probeRecord
	var err error
	// Until a CPU tail has timed the main engine on this loop, the plain
	// engine's speed is timed first: a probed iteration costs several
	// times a plain one, and a short iteration priced by it makes the GPU
	// look profitable when it is not.
	// Where rows probed dry are long enough for the GPU to run them too,
	// the instance is priced at the best speed timed on any hot spot
	// (runRate) instead: the timing would run the rest of a row on the
	// CPU, and the CPU tail times the loop itself (earlyDry).
	earlyStart := time.Now()
	early, fb := sp.earlyDry(cpu, P, reloaded)
	if fb != nil {
		return true, fb
	}
	if early == nil {
		probeStart := time.Now()
		done, fb = sp.timePlain(cpu)
		sp.rep.ProbeSeconds += time.Since(probeStart).Seconds()
		sp.rep.TimingSeconds += time.Since(probeStart).Seconds()
		if fb != nil {
			return done, fb
		}
	}
	if states[0], err = sp.liveValues(cpu); err != nil {
		return false, fail(ReasonNotAffine, "reading live-in: %v", err)
	}
	if r := sp.replay; r != nil && early == nil {
		// The same instance again (a time step), or the next of a
		// progression (a sequential outer loop's): see replay.go.
		if !r.matches(states[0]) {
			r = r.next(sp.instances)
		}
		if r != nil && r.matches(states[0]) {
			if applied, done, fb := sp.offloadReplay(cpu, r, states[0]); applied {
				return done, fb
			}
		}
	}
	// The instance's first arrivals are probed: dry (dryrows.go), the
	// guest left as it was at arrival 0 and the GPU running from there,
	// where the rows can be jumped through; else on the CPU, which goes
	// on from arrival P.
	start := time.Now()
	sp.jit = sp.a.markJIT()
	var rows probedRows
	rows.states[0] = states[0]
	from := uint64(P) // the instance's first arrival the GPU runs
	dried := false
	if early != nil {
		start = earlyStart
		rows, from, dried = *early, 0, true
		sp.rep.DryProbes++
	} else if d := sp.startDry(cpu); d != nil {
		done, fb = sp.probeRows(cpu, P, reloaded, d, &rows)
		err := d.finish(cpu)
		if fb == nil && err == nil {
			sp.rep.DryProbes++
			from, dried = 0, true
			if rows.insnsPerIter < dryLaunchRow {
				// Short rows: the CPU runs them, as a probe on the CPU
				// would have, and the GPU the rest.
				if fb := sp.runDryRows(cpu, P, reloaded, &rows); fb != nil {
					return false, fb
				}
				from = uint64(P)
			}
		} else {
			why := err
			if fb != nil {
				why = fb
			}
			// The spot's later instances are probed on the CPU: what
			// made this one fail most likely makes theirs (abandonDry).
			sp.abandonDry(why, fb)
			// The guest as it was at arrival 0, and probing as ever.
			if err := d.abandon(cpu); err != nil {
				sp.fatal = fmt.Errorf("accelerate: hot spot %s: undoing a dry probe: %w", sp.rep.Entry, err)
				return true, fail(ReasonProbeStop, "%v", err)
			}
			rows = probedRows{}
			rows.states[0] = states[0]
			done, fb = sp.probeRows(cpu, P, reloaded, nil, &rows)
		}
	} else {
		sp.rep.DryNote = sp.dry.off
		done, fb = sp.probeRows(cpu, P, reloaded, nil, &rows)
	}
	sp.rep.ProbeSeconds += time.Since(start).Seconds()
	if fb != nil {
		return done, fb
	}
	recs, cpuPerIter, insnsPerIter, rowInsns, innerTrips, innerStates := rows.recs, rows.cpuPerIter, rows.insnsPerIter, rows.rowInsns, rows.innerTrips, rows.innerStates
	inner2 := &rows.inner2
	states = rows.states
	// Steps of the live-in values.
	steps := make([]uint64, len(k.LiveIns))
	for i := range k.LiveIns {
		if _, ok := reloaded[i]; ok {
			continue
		}
		d1 := states[1][i] - states[0][i]
		for j := 2; j <= P; j++ {
			if d := states[j][i] - states[j-1][i]; d != d1 {
				return false, fail(ReasonNotAffine, "%s changed by %#x then %#x", k.LiveIns[i], d1, d)
			}
		}
		steps[i] = d1
	}
	// The values that move must be induction variables phase 1 saw, with
	// the steps it saw: a carried scalar (an accumulator) may look affine
	// over a few iterations.
	restride := ""
	if fb := sp.checkIVs(steps, &restride); fb != nil {
		return false, fb
	}
	// Trip count from the exit test: arrival j (0 = the first probed one)
	// compares a0 + da·j with b0 + db·j.
	for it := 0; it < recordedRows; it++ {
		if recs[it].exitSeen != 1 {
			return false, fail(ReasonExitTest, "the exit test ran %d times in one iteration", recs[it].exitSeen)
		}
	}
	last, ok := exitArrival(k.Exit, recs[0].a, recs[1].a-recs[0].a, recs[0].b, recs[1].b-recs[0].b)
	if !ok {
		return false, fail(ReasonExitTest, "no exit found for the compare at %#x", k.Exit.X86)
	}
	// The GPU runs arrivals P .. last-tail; the CPU the last tail ones.
	tail := sp.cpuTail()
	if tail == 1 && sp.givesExit() {
		tail = 0
	}
	if last < from+tail || last+1-tail-from < sp.a.opts.MinIterations {
		return false, fail(ReasonTripCount, "%d iterations left", last+1-from)
	}
	count := last + 1 - tail - from
	if k.DynRounding && cpu.State[gvinst.MXCSR]>>13&3 != 0 {
		return false, fail(ReasonRounding, "MXCSR %#x", cpu.State[gvinst.MXCSR])
	}
	if k.ClearDF && cpu.State[gvinst.RFLAGS]&gvinst.FlagDF != 0 {
		return false, fail(ReasonDirection, "rep stos with the direction flag set")
	}
	// No induction variable wraps over the offloaded and tail arrivals.
	for i := range k.LiveIns {
		if steps[i] == 0 {
			continue
		}
		limit := new(big.Int).Lsh(big.NewInt(1), 64)
		if states[0][i] < 1<<32 && states[1][i] < 1<<32 && states[P][i] < 1<<32 {
			limit = new(big.Int).Lsh(big.NewInt(1), 32)
		}
		end := new(big.Int).SetUint64(states[from][i])
		end.Add(end, new(big.Int).Mul(big.NewInt(int64(steps[i])), new(big.Int).SetUint64(count+tail-1)))
		if end.Sign() < 0 || end.Cmp(limit) >= 0 {
			return false, fail(ReasonWrap, "%s from %#x by %#x", k.LiveIns[i], states[from][i], steps[i])
		}
	}
	// Footprints: each site's range in the probed iterations, extended
	// linearly over the offloaded ones.
	// Copies of one x86 instruction in several blocks share one access
	// function: merge what each iteration saw of them.
	byX86 := map[[2]uint64]*siteObs{}
	for s := 0; s < ns; s++ {
		o := byX86[siteKey(k.Sites[s])]
		if o == nil {
			o = &siteObs{}
			byX86[siteKey(k.Sites[s])] = o
		}
		for it := 0; it < 2; it++ {
			if !recs[it].siteSeen[s] {
				continue
			}
			if !o.seen[it] {
				o.seen[it], o.lo[it], o.hi[it] = true, recs[it].lo[s], recs[it].hi[s]
				continue
			}
			o.lo[it], o.hi[it] = min(o.lo[it], recs[it].lo[s]), max(o.hi[it], recs[it].hi[s])
		}
	}
	sp.traceProbe(dried, from, states[0], steps, last, &rows, byX86)
	sp.checkStrides(byX86, &restride)
	if tail == 2 && sp.tailBringsBack(byX86, from, last) {
		// The timing arrival would time the engine bringing back what
		// the device holds, which times nothing (OnBreak): only the
		// arrival that leaves the loop stays, or none.
		tail = 1
		if sp.givesExit() {
			tail = 0
		}
		count = last + 1 - tail - from
	}
	// The CPU tail's first iteration, timed when it ends (spot.timedTail),
	// comes count rows after the last probed one.
	sp.tailInsns = rowAt(rowInsns[:P], max(from+count+1, uint64(P))-uint64(P))
	var fixed []int // loads the same in every iteration: checked below
	if restride != "" {
		var why string
		if why, fixed = sp.disjointIterations(byX86, last+1); why != "" {
			if sp.disjointObserved(traces(k.Sites, [2]*probeRecord{&recs[0], &recs[1]}), last+1) != "" {
				return false, fail(ReasonNotAffine, "%s, and %s", restride, why)
			}
			fixed = nil
		}
	}
	sites, fb := sp.siteRanges(byX86, from, last-tail)
	if fb != nil {
		return false, fb
	}
	if restride != "" {
		// (Where disjointObserved proved it, every site ran.)
		sp.unseenSites(byX86, sites)
	}
	if why := sp.fixedReadsApart(fixed, sites); why != "" {
		return false, fail(ReasonNotAffine, "%s, and %s", restride, why)
	}
	for _, kk := range []*ptxgen.Kernel{k, sp.kernel2} {
		if kk == nil {
			continue
		}
		if why := reloadsOverlapStores(kk, sites); why != "" {
			return false, fail(ReasonDependence, "%s", why)
		}
	}
	if fb := sp.guards(cpu, sites); fb != nil {
		return false, fb
	}
	// The profile says the iterations are independent: what the probed
	// ones touched must not say otherwise.
	if why := sp.levelDependence(traces(k.Sites, [2]*probeRecord{&recs[0], &recs[1]}), count); why != "" {
		return false, fail(ReasonDependence, "%s", why)
	}
	// The CPU's time per iteration: the plain engine's on the tails of
	// earlier instances, else its instructions at the plain engine's speed
	// timed above (or the main engine's, or the probed iteration's time,
	// if less).
	// Rows that lengthen (a triangle) are priced at the mean row of the
	// instance, not the last probed one.
	if g := rowGrowth(rowInsns[:P], count); g != 1 {
		insnsPerIter *= g
		cpuPerIter *= g
	}
	probed := time.Duration(cpuPerIter * float64(time.Second))
	cpuIter := CPUIteration(TrustedTail(sp.tailAt(insnsPerIter), probed, sp.straightIteration()), probed, insnsPerIter, sp.loopRate(), sp.a.runRate(), sp.a.mainRate())
	// What this instance cost so far beyond its iterations' CPU time
	// (probing, guards): every offloaded instance pays it again. The
	// hot spot's first instance has paid it whatever the decision (it
	// is spent), so its prediction leaves it out; the ledger counts it
	// after the launch, and the instances after the first pay it in
	// their prediction.
	overhead := time.Since(start) - time.Duration(from)*cpuIter
	if sp.rep.Launches == 0 && sp.rep.Fallbacks == 0 {
		overhead = 0
	}
	if !sp.a.opts.AlwaysOffload {
		if _, err := sp.a.deviceCosts(); err != nil {
			return false, fail(ReasonDriver, "%v", err)
		}
		// What the launch would copy, as the 2D kernel would run it when
		// it will, and who pays for it (copycost.go).
		kk, in := k, ptxgen.LaunchInput{Sites: sites}
		if sp.kernel2 != nil && !sp.a.prefer1D(k, count) {
			kk, in.InnerTrip0, in.InnerTripStep = sp.kernel2, innerTrips[0], innerTrips[1]-innerTrips[0]
		} else {
			sp.checkTrips(&in, kk, innerTrips, P, byX86)
		}
		in.Dense = sp.denseStores(kk, in, byX86)
		copies := sp.launchCopies(&sp.a.resident, kk, in)
		c := sp.a.measuredCosts()
		sp.modelPerIter = c.ModelKernel(1<<20, insnsPerIter) >> 20
		est := c.Predict(count, cpuIter, insnsPerIter, overhead, 0, sp.kernelPerIter)
		est.Copy = copies.time(c, sp.rep.Launches, sp.rep.Fallbacks, sp.expectedInstances(sp.a.hotSpots()))
		// Pages go back and forth page by page: they are priced at the
		// rate the guest brought them back so far (fetchBandwidth). Only
		// the hot spots launching between this one's instances make
		// either cost come again (refill.go).
		est.Fetch, est.Refill = sp.pageTraffic(c, k, sites, count)
		sp.fetch = est.Fetch
		sp.predicted = est
		if !est.Pays() && !sp.stays(est) {
			// The CPU runs the instance: the pages its stores write
			// are the hot spot's own to copy in again, once, if it
			// goes back to the GPU (launchCopies).
			sp.ranOnCPU(kk, sites)
			return false, fail(ReasonNotProfitable, "predicted %s", est)
		}
	}
	// An instance the CPU runs before the kernels could load does not
	// wait for them (prefetch.go).
	if wait, pending := sp.loadWait(); pending && !sp.a.opts.AlwaysOffload {
		if cpuTime := time.Duration(count) * cpuIter; cpuIter > 0 && cpuTime < wait {
			sp.queueLoad()
			return false, fail(ReasonLoading, "the CPU runs its %d iterations in %s, and its kernels have about %s of loading left", count, cpuTime, wait)
		}
	}
	// The kernels are loaded on the way (spot.load): the instance's GPU
	// time leaves that out.
	loadBefore := sp.loadTime
	loading := func() time.Duration { return sp.loadTime - loadBefore }
	in := ptxgen.LaunchInput{Count: count, Values: states[from], Steps: steps, Sites: sites, ExitState: tail == 0}
	if sp.parts != nil {
		if used, fb := sp.offloadParts(cpu, in, P, int(from), sites, cpuIter); fb != nil || sp.fatal != nil {
			return false, fb
		} else if used {
			return sp.finishInstance(cpu, start, loading(), int(from), count, tail, steps, states[from], cpuIter, byX86)
		}
	}
	var fn gpu.Function
	var inner0 *ptxgen.LaunchInput // a 2D launch's inner values of row 0, for a replay
	if k2 := sp.kernel2; k2 != nil && !sp.a.prefer1D(sp.kernel, count) && len(innerStates[0]) == 3 && len(innerStates[1]) == 3 && len(innerStates[2]) == 3 {
		// 2D: the inner trip count of outer arrival j is n0 + dn·j, and
		// each inner step is s0 + ds·j (an inner index whose step is the
		// outer index, i*j, say); three probed rows check both.
		n0, dn := int64(innerTrips[0]), int64(innerTrips[1])-int64(innerTrips[0])
		first, lastRow := n0+int64(from)*dn, n0+dn*int64(last-tail)
		isteps := make([]uint64, len(k2.InnerLiveIns))
		isteps0 := make([]uint64, len(k2.InnerLiveIns))
		irows := make([]uint64, len(k2.InnerLiveIns))
		ok := first >= 0 && lastRow >= 0 && int64(innerTrips[2])-int64(innerTrips[1]) == dn
		innerReloaded := reloadIndex(k2.InnerLiveIns, k2.Reloads, 1)
		for it := 0; it < 3 && ok; it++ {
			for a := 1; a < 3 && ok; a++ {
				ok = checkReloads(mem, k2.InnerLiveIns, innerStates[it][a], innerReloaded, a) == ""
			}
		}
		for i := range isteps {
			if _, r := innerReloaded[i]; r {
				continue
			}
			var st [3]uint64
			for it := 0; it < 3; it++ {
				is := innerStates[it]
				d1, d2 := is[1][i]-is[0][i], is[2][i]-is[1][i]
				if d1 != d2 {
					ok = false
				}
				st[it] = d2
			}
			irows[i] = st[1] - st[0]
			if st[2]-st[1] != irows[i] {
				ok = false
			}
			isteps[i] = st[0] + from*irows[i]
			isteps0[i] = st[0]
		}
		if ok && sp.dead2D {
			try := in
			try.InnerTrip0, try.InnerTripStep = uint64(first), uint64(dn)
			ok = sp.deadStoresCovered(k2, try, byX86)
		}
		ok = ok && outerStoresFit(k2, in.Sites, first, lastRow)
		if ok {
			if fn2 := sp.kernel2Fn(); fn2 != nil {
				in.InnerTrip0, in.InnerTripStep, in.InnerMax = uint64(first), uint64(dn), uint64(max(first, lastRow))
				in.InnerSteps, in.InnerStepRows = isteps, irows
				k, fn = k2, fn2
				inner0 = &ptxgen.LaunchInput{InnerTrip0: uint64(n0), InnerSteps: isteps0}
				if k3 := sp.kernel3; k3 != nil && !sp.a.prefer2D(k2, in) && reloadsOverlapStores(k3, sites) == "" {
					// A replay launches P more rows, each up to |dn| wider.
					rows := in.InnerMax + uint64(P)*uint64(max(dn, -dn))
					if trip, steps, ok := inner2.confirm(mem, k3, sp.innermostIVs()); ok && fits3D(k3, in.Count+uint64(P), rows, trip) {
						if fn3 := sp.kernel3Fn(); fn3 != nil {
							in.Inner2Trip, in.Inner2Steps = trip, steps
							k, fn = k3, fn3
						}
					}
				}
			}
		}
	}
	if fn == nil {
		var err error
		if fn, err = sp.kernelFn(); err != nil {
			return false, fail(ReasonDriver, "%v", err)
		}
	}
	// Stores that overwrite their whole footprint: their bytes are not
	// copied in (an initialisation nest makes its arrays on the device).
	if !k.TwoD {
		sp.checkTrips(&in, k, innerTrips, P, byX86)
	}
	in.Dense = sp.denseStores(k, in, byX86)
	if in.ExitState && !sp.exitAtLatch() {
		// The last arrival leaves before the end of its body: the
		// footprints, extended over it, hold bytes no thread stores,
		// and its thread enters no counted loop.
		in.Dense = nil
		if k.TripChecked {
			in.InnerTrip0, in.InnerTripStep = ^uint64(0), 0
		}
	}
	sampled := false
	// The first launch of a 1D kernel on the simulator, whose speed
	// depends on the instructions a kernel runs, is a sample: a slice of
	// the iterations, timed, then the rest where it pays.
	if !sp.a.opts.AlwaysOffload && sp.kernelPerIter == 0 && !k.TwoD && sp.a.opts.Driver.Name() == "sim" && count >= 2*sampleMin {
		sample := max(count/sampleFraction, sampleMin)
		part := in
		part.Count = sample
		part.Dense = nil       // the sample writes a part of the footprints
		part.ExitState = false // the rest runs the last arrival
		// It copies in its own iterations' footprints, not the
		// instance's: the rest's come with the rest, where it pays.
		// (atax's initialisation copied its whole 160 MB matrix in for
		// a sample of 12 rows, 0.7 s on gpusim, and went back to the
		// CPU.)
		if ss, fb := sp.siteRanges(byX86, from, from+sample-1); fb == nil {
			part.Sites = ss
		}
		sp.sampling = true
		fb, done := sp.launch(fn, k, part, cpuIter)
		sp.sampling = false
		if fb != nil {
			return done, fb
		}
		rest := count - sample
		moved := make([]uint64, len(steps))
		for i := range steps {
			moved[i] = states[from][i] + steps[i]*sample
		}
		if err := sp.resolveReloads(moved); err != nil {
			return false, fail(ReasonDriver, "loading a reloaded register: %v", err)
		}
		// From here on the CPU, should it take over, goes on after the
		// sample.
		if err := sp.setLive(cpu, moved); err != nil {
			return false, fail(ReasonDriver, "writing the loop state: %v", err)
		}
		est := Estimate{Iterations: rest, CPU: time.Duration(rest) * cpuIter, Kernel: time.Duration(rest) * sp.kernelPerIter}
		if costs, _ := sp.a.deviceCosts(); costs != nil {
			c := sp.a.measuredCosts()
			est.Launch = c.LaunchLatency
			var restIn uint64
			for _, g := range ptxgen.Groups(k, in.Sites) {
				restIn += sp.a.resident.ToCopy(g.Range)
			}
			est.Copy = c.copyTime(restIn)
		}
		if !est.Pays() {
			// The CPU runs the rest of the instance, from the iteration
			// after the sample.
			why := fmt.Sprintf("a sample of %d iterations took %.3gs on the GPU; the other %d: %s", sample, (time.Duration(sample) * sp.kernelPerIter).Seconds(), rest, est)
			sp.disarm(why)
			return false, fail(ReasonNotProfitable, "%s", why)
		}
		in.Values, in.Count = moved, rest
		sampled = true
	}
	if fb, done := sp.launch(fn, k, in, cpuIter); fb != nil {
		return done, fb
	}
	// Later instances with the same live-in values at their first arrival
	// (reloaded registers aside: data, which the first threads take as
	// passed) run without probing (replay.go), unless the launch was split
	// by a sample. (Re-strided footprints were found disjoint from the
	// probed iterations: the same live-in values give the same.)
	if !sampled {
		sp.keepReplay(states[0], k, fn, in, from, last, byX86, inner0, cpuIter, insnsPerIter)
	}
	return sp.finishInstance(cpu, start, loading(), int(from), count, tail, steps, states[from], cpuIter, byX86)
}

// probedRows is what the probed rows of an instance gave.
type probedRows struct {
	// states are the live-in values at arrivals 0..P.
	states [4][]uint64
	recs   [3]probeRecord
	// cpuPerIter is the last row's time (0 for dry rows, which time
	// nothing), insnsPerIter its guest instructions.
	cpuPerIter, insnsPerIter float64
	rowInsns                 [3]float64
	innerTrips               [3]uint64
	innerStates              [3][][]uint64
	inner2                   innermostObs
}

// probeRows runs the instance's first P arrivals from the header, the
// recorded ones on the probing engine, into rows (whose states[0] is
// set). With dry set they run on its engine, which leaves memory as it
// finds it and jumps through the inner loops (dryrows.go).
func (sp *spot) probeRows(cpu *gvinst.CPU, P int, reloaded map[int]ptxgen.Reload, dry *dryRun, rows *probedRows) (done bool, fb *fallback) {
	k := sp.kernel
	ns := len(k.Sites)
	mem := sp.a.g.Mem
	states, recs := &rows.states, &rows.recs
	innerTrips, innerStates, inner2 := &rows.innerTrips, &rows.innerStates, &rows.inner2
	var err error
	for it := 0; it < P; it++ {
		// The footprints, the exit test and the independence checks read
		// the records of probed iterations 0 and 1 only (recordedRows);
		// a third iteration gives the per-row changes of the inner levels,
		// which the breakpoints tell, so it runs on the fast engine.
		engine := gvinst.Engine(sp.probe)
		if it >= recordedRows {
			engine = sp.rowEngine()
		}
		if dry != nil {
			engine = dry.engine
		}
		t0 := time.Now()
		sp.rec.reset(ns)
		sp.startProbe(it, ns)
		walk := sp.newRowWalk(&sp.rec, engine)
		if dry != nil {
			walk.dry, dry.walk = dry, walk
		}
		st := engine.Run(cpu, 0)
		for st.Kind == gvinst.StopBreakpoint && st.PC != sp.header && !sp.exits[st.PC] {
			skip, mine, err := walk.arrive(cpu)
			if err != nil {
				return false, fail(ReasonNotAffine, "%v", err)
			}
			watched, err := sp.observeParts(it, cpu, st.PC)
			if err != nil {
				return false, fail(ReasonNotAffine, "reading inner live-in: %v", err)
			}
			if st.PC == sp.inner2 && sp.kernel3 != nil {
				// An arrival at the innermost header, in inner
				// iteration innerTrips[it]-1 of the row.
				if err := inner2.arrive(sp, cpu, it, (*innerTrips)[it]); err != nil {
					return false, fail(ReasonNotAffine, "reading innermost live-in: %v", err)
				}
				watched = true
			}
			if !watched && st.PC == sp.inner && sp.countsInner() {
				// An arrival at the inner header: count it, and keep the
				// first three states of the first iteration for the inner
				// steps of the 2D kernel.
				watched = true
				(*innerTrips)[it]++
				if sp.kernel2 != nil && len((*innerStates)[it]) < 3 {
					v, err := liveValuesOf(sp.a.g.Mem, cpu, sp.kernel2.InnerLiveIns)
					if err != nil {
						return false, fail(ReasonNotAffine, "reading inner live-in: %v", err)
					}
					(*innerStates)[it] = append((*innerStates)[it], v)
				}
			}
			if !watched && !mine {
				break
			}
			if skip != nil {
				// The rest of the inner loop's instance on the fast
				// engine; its arrivals count as the breakpoints'.
				h := skip.loop.header
				before := walk.skipped[h]
				if dry != nil {
					st, err = walk.jump(cpu, skip)
				} else {
					st, err = walk.skip(cpu, skip)
				}
				if err != nil {
					return false, fail(ReasonNotAffine, "%v", err)
				}
				sp.countSkipped(it, h, walk.skipped[h]-before, &(*innerTrips)[it])
				if h == sp.inner2 && sp.kernel3 != nil {
					inner2.skipped(it, (*innerTrips)[it], walk.skipped[h]-before)
				}
				continue
			}
			st = engine.Run(cpu, 0)
		}
		if err := walk.finish(); err != nil {
			return false, fail(ReasonNotAffine, "%v", err)
		}
		if st.Kind == gvinst.StopSyscall {
			// The loop's blocks have no system call and every exit is a
			// breakpoint, so this cannot happen; the syscall must not be
			// skipped if it does.
			sp.fatal = fmt.Errorf("accelerate: the probing engine of hot spot %s stopped at a system call (%v)", sp.rep.Entry, st)
			return true, fail(ReasonProbeStop, "%v", st)
		}
		if st.Kind != gvinst.StopBreakpoint {
			return true, fail(ReasonProbeStop, "%v", st)
		}
		if st.PC != sp.header {
			return true, fail(ReasonTripCount, "the loop ended after %d iterations", it+1)
		}
		recs[it] = sp.rec
		if it < recordedRows {
			sp.rep.ProbedIterations++
			sp.rep.ProbedAccesses += sp.rec.accesses
		}
		rows.cpuPerIter = time.Since(t0).Seconds()
		if dry != nil {
			rows.cpuPerIter = 0
		}
		rows.insnsPerIter = float64(walk.insns())
		sp.rep.RowInstructions += walk.executed()
		rows.rowInsns[it] = rows.insnsPerIter
		if states[it+1], err = sp.liveValues(cpu); err != nil {
			return false, fail(ReasonNotAffine, "reading live-in: %v", err)
		}
		if why := checkReloads(mem, k.LiveIns, states[it+1], reloaded, it+1); why != "" {
			return false, fail(ReasonNotAffine, "a reloaded register: %s", why)
		}
	}
	if dry != nil {
		if why := sp.dryStepsTrusted(states[:P+1]); why != "" {
			return false, fail(ReasonNotAffine, "%s", why)
		}
	}
	return false, nil
}

// straightIteration reports whether the hot spot's iteration runs no loop
// of its own: its level is the nest's last, with no loops below it.
func (sp *spot) straightIteration() bool {
	return sp.levelIndex == len(sp.hs.Levels)-1 && len(sp.hs.InnerLoops) == 0
}

// cpuTail is how many of an instance's last arrivals the CPU runs after
// the GPU ran the others: the arrival that leaves the loop, which a
// kernel's thread may not (it takes the exit edge, an error in the
// kernel), and, until a CPU tail has timed the plain engine on the loop
// for the cost model, the one before it (the timing runs from its header
// arrival to the next), for up to maxTimedTails instances (a tail that
// brings back what the device holds does not time the engine: OnBreak).
// A time-stepped stencil runs one row (or plane) per step on the CPU,
// and copies only what that row touches.
func (sp *spot) cpuTail() uint64 {
	if sp.plainIter != 0 || sp.a.opts.AlwaysOffload || sp.timedTails >= maxTimedTails {
		return 1
	}
	return 2
}

// stayFactor is how much dearer than its CPU side an instance of a hot
// spot whose last instance launched may be predicted and launch all the
// same (stays).
const stayFactor = 1.25

// stays reports whether an instance predicted as est, not paying, launches
// all the same: the hot spot's last instance launched, and est's GPU side
// is under stayFactor times its CPU side. Going to the CPU for one
// instance costs what the prediction leaves out: the device's pages the
// CPU reads come back, and the pages it writes go in again at the next
// launch (cholesky at 2400 on an H100: two early columns predicted at
// 0.91 ms against 0.86 ms ran on the CPU, each wrote its column into
// every row of the matrix, the launches after them copied 16 MB in each,
// the ledger sent the hot spot back to the CPU for good, and the run took
// 15 s against 2.9).
func (sp *spot) stays(est Estimate) bool {
	return sp.launchedLast && float64(est.GPU()) < stayFactor*float64(est.CPUSide())
}

// tailBringsBack reports whether the CPU's tail arrivals of an instance
// whose last arrival is last, after a launch of arrivals P up to the tail,
// would touch a page that only the device holds: one stale now, or one
// the launch stores to. Such a tail arrival times the engine bringing
// data back, not the loop (OnBreak keeps no such timing), and pays for
// the copies: mvt's and gemver's column sweeps at 12000 on an H100 ran a
// timing arrival that walked a column of a matrix the device had made,
// 12,000 pages gathered one copy each, 0.7 s of runs of about 2 s. A
// footprint the probed iterations do not give counts as touching.
func (sp *spot) tailBringsBack(byX86 map[[2]uint64]*siteObs, P, last uint64) bool {
	if last < P+2 {
		return false
	}
	tail, fb := sp.siteRanges(byX86, last-1, last)
	if fb != nil {
		return true
	}
	launch, fb := sp.siteRanges(byX86, P, last-2)
	if fb != nil {
		return true
	}
	page := func(a uint64) uint64 { return a / gvinst.PageSize }
	for _, r := range tail {
		if r.Hi <= r.Lo {
			continue
		}
		if sp.a.resident.Stale(r) > 0 {
			return true
		}
		for w, st := range launch {
			if !sp.kernel.Sites[w].Store || st.Hi <= st.Lo {
				continue
			}
			if page(r.Lo) <= page(st.Hi-1) && page(st.Lo) <= page(r.Hi-1) {
				return true
			}
		}
	}
	return false
}

// givesExit reports whether every kernel a launch of the hot spot may
// run gives the loop's exit state (ptxgen.Kernel.ExitStates): its
// instances' last arrivals then run on the GPU, and the CPU goes on at
// the exit (finishInstance). A tail of one arrival, the one that leaves
// the loop, is then none; the timing tails stay (cpuTail). The
// distributed kernels (parts) have no exit of their own.
func (sp *spot) givesExit() bool {
	if sp.a != nil && sp.a.opts.CPUTail || sp.parts != nil || sp.kernel == nil || !sp.kernel.GivesExitState() {
		return false
	}
	for _, k := range []*ptxgen.Kernel{sp.kernel2, sp.kernel3} {
		if k != nil && !k.GivesExitState() {
			return false
		}
	}
	return true
}

// exitAtLatch reports whether every copy of the loop's exit test ends
// an iteration: its branch leaves or goes on to the header through
// blocks that store nothing (gcc's `mov rax, rdi; jmp header` after the
// test), so the arrival that leaves ran its whole body (a rotated loop),
// and the footprints extended over it are those of whole iterations.
func (sp *spot) exitAtLatch() bool {
	for _, c := range sp.kernel.Exit.Copies {
		b := sp.blocks[c.Block]
		if b == nil {
			return false
		}
		for _, t := range b.Successors() {
			if sp.blocks[t] != nil && !sp.runsToHeader(t) {
				return false
			}
		}
	}
	return len(sp.kernel.Exit.Copies) > 0
}

// runsToHeader reports whether block addr of the level is the
// header, or runs to it through a few blocks of one successor each that
// store nothing.
func (sp *spot) runsToHeader(addr uint64) bool {
	for range 8 {
		if addr == sp.header {
			return true
		}
		b := sp.blocks[addr]
		if b == nil || len(b.Successors()) != 1 {
			return false
		}
		for i := range b.Insts {
			if op := b.Insts[i].Op; op == gvinst.OpSt || op == gvinst.OpRepStos {
				return false
			}
		}
		addr = b.Successors()[0]
	}
	return false
}

// noteExit says in the report why the hot spot's instances keep their
// CPU tail, where a kernel does not give the exit state.
func (sp *spot) noteExit() {
	sp.rep.ExitNote = ""
	if sp.givesExit() {
		return
	}
	var why []string
	if sp.parts != nil {
		why = append(why, "the schedule's distributed kernels have no exit of their own")
	}
	for _, k := range []*ptxgen.Kernel{sp.kernel, sp.kernel2, sp.kernel3} {
		if k == nil || k.GivesExitState() {
			continue
		}
		w := "it runs many rows a thread"
		if len(k.ExitRefused) > 0 {
			var ws []string
			for _, r := range k.ExitRefused {
				ws = append(ws, r)
			}
			sort.Strings(ws)
			w = strings.Join(ws, "; ")
		}
		why = append(why, k.Name+": "+w)
	}
	sp.rep.ExitNote = "the CPU runs each instance's last arrival, no kernel giving the exit state: " + strings.Join(why, "; ")
}

// maxTimedTails is how many instances run a second tail arrival on the
// CPU to time the plain engine on the loop.
const maxTimedTails = 2

// finishInstance accounts for the launches of an instance and sets the
// CPU at the header for its last tail arrivals (the CPU runs them; with
// two, the second's header arrival times the plain engine, see OnBreak).
func (sp *spot) finishInstance(cpu *gvinst.CPU, start time.Time, loading time.Duration, P int, count, tail uint64, steps, values []uint64, cpuIter time.Duration, obs map[[2]uint64]*siteObs) (done bool, fb *fallback) {
	// What the tail arrivals touch of what the device holds comes back
	// now, a copy a stretch, not a fault and a copy a page as the CPU
	// reaches it; a cost of the offload, on the instance's GPU side.
	if err := sp.bringBackTail(obs, uint64(P)+count, uint64(P)+count+tail-1, P); err != nil {
		sp.fatal = fmt.Errorf("accelerate: hot spot %s: bringing back the CPU tail's footprint: %w", sp.rep.Entry, err)
		return true, fail(ReasonDriver, "%v", err)
	}
	// The GPU side of the instance: everything since the header but the
	// kernel's loading and the probed iterations, which the CPU runs
	// either way.
	sp.rep.CPUSecondsEstimate += cpuIter.Seconds() * float64(count)
	gpuSide := time.Since(start) - loading - time.Duration(P)*cpuIter - sp.unseen
	sp.unseen = 0
	// The ledger leaves the first launch out (an outlay: see ledgerWindow),
	// and an instance that waited for a module's JIT (jitOverlap).
	contended := sp.a.jitOverlap(sp.jit)
	if contended {
		sp.rep.LaunchesContended++
	} else if why := sp.ledger.add(gpuSide, count, cpuIter, sp.fetch); why != "" && !sp.a.opts.AlwaysOffload {
		sp.disarm(why)
	}
	if sp.ledger.launches > 1 && !contended {
		sp.a.run.gpu += gpuSide
		sp.a.run.cpu += time.Duration(count)*cpuIter + sp.fetch
		_, back := sp.a.resident.BroughtBack()
		if why, lost := sp.a.run.loses(back); lost && !sp.a.opts.AlwaysOffload {
			sp.a.stopOffloading(why)
		}
	}
	if tail == 0 {
		// The GPU ran the last arrival: where its thread left the loop,
		// the CPU goes on at the exit with the state it stored.
		x, k := sp.exit, sp.exitKernel
		sp.exit, sp.exitKernel = nil, nil
		if x != nil {
			if err := sp.setExitState(cpu, k, x); err != nil {
				return false, fail(ReasonDriver, "writing the exit state: %v", err)
			}
			sp.rep.ExitStates++
			return true, nil
		}
		// No thread left it (the loop ran on past the predicted
		// trip count): the CPU goes on at the header, as after a tail.
	}
	// The CPU runs the last tail arrivals from the header.
	sp.rep.TailIterations += tail
	first := make([]uint64, len(steps))
	for i := range steps {
		first[i] = values[i] + steps[i]*count
	}
	var next []uint64
	if tail > 1 {
		next = make([]uint64, len(steps))
		for i := range steps {
			next[i] = first[i] + steps[i]
		}
	}
	if err := sp.resolveReloads(first); err != nil {
		sp.fatal = fmt.Errorf("accelerate: hot spot %s: loading a reloaded register for the CPU: %w", sp.rep.Entry, err)
		return true, fail(ReasonDriver, "%v", err)
	}
	if next != nil {
		if err := sp.resolveReloads(next); err != nil {
			sp.fatal = fmt.Errorf("accelerate: hot spot %s: loading a reloaded register for the CPU: %w", sp.rep.Entry, err)
			return true, fail(ReasonDriver, "%v", err)
		}
	}
	if err := sp.setLive(cpu, first); err != nil {
		return false, fail(ReasonDriver, "writing the loop state: %v", err)
	}
	cpu.PC = sp.header
	sp.skip = next
	sp.tailStart = time.Now()
	_, sp.tailBack = sp.a.resident.BroughtBack()
	if tail > 1 {
		sp.timedTails++
	}
	return true, nil
}

// setExitState sets the CPU at the exit target of record x, with the
// values kernel k stored there: guest slots, and private stack slots at
// their frame's address (its base register the level does not change).
func (sp *spot) setExitState(cpu *gvinst.CPU, k *ptxgen.Kernel, x *ptxgen.ExitRecord) error {
	ls, ok := k.ExitStates[x.Target]
	if !ok || len(ls) != len(x.Values) {
		return fmt.Errorf("kernel %s has no exit state at %#x", k.Name, x.Target)
	}
	for i, l := range ls {
		if !l.Stack {
			cpu.State[l.Slot] = x.Values[i]
		}
	}
	for i, l := range ls {
		if l.Stack {
			if err := sp.a.g.Mem.Store(cpu.State[l.Base]+uint64(l.Disp), l.Size, x.Values[i]); err != nil {
				return err
			}
		}
	}
	cpu.PC = x.Target
	return nil
}

// maxTailFetch bounds the footprint of a site over the tail arrivals
// that bringBackTail brings back ahead: a wider one (a site that did not
// run in the probed iterations takes its array's; a column walked inside
// an iteration spans the matrix) comes back as the CPU reaches it.
const maxTailFetch = 1 << 20

// bringBackTail brings back from the device the stale pages of what
// arrivals from..to of the instance (the CPU's tail) touch: each site's
// footprint over them, from the probed iterations (obs), up to
// maxTailFetch bytes. When some of that is stale, the stale pages of the
// instance's first arrivals (0..P after P probed ones, 0..1 after a
// replay; up to maxAheadFetch bytes a site) come back in the same batch:
// the CPU's code between the instances of a nest whose outer loop moves
// its start on by one (cholesky's diagonal), and the next instance's
// probed arrivals, read what this one's first arrivals touched, which the
// launch left on the device, and would bring it back a fault at a time
// (cholesky at 600 on gpusim: 600 faults, one an instance, gone). Alone
// they would be a copy of their own, which the guest may never need (the
// next kernel may write them first: LU's column and trailing update, one
// after the other).
func (sp *spot) bringBackTail(obs map[[2]uint64]*siteObs, from, to uint64, P int) error {
	if obs == nil || to < from {
		return nil
	}
	var foot []ptxgen.Range
	add := func(from, to, most uint64) {
		sites, fb := sp.siteRanges(obs, from, to)
		if fb != nil {
			return // the CPU brings back what it touches as it goes
		}
		for _, r := range sites {
			if r.Lo < r.Hi && r.Hi-r.Lo <= most {
				foot = append(foot, r)
			}
		}
	}
	add(from, to, maxTailFetch)
	stale := false
	for _, r := range foot {
		stale = stale || sp.a.resident.Stale(r) > 0
	}
	if !stale {
		return nil
	}
	add(0, uint64(max(P, 1)), maxAheadFetch)
	return sp.a.resident.BringBack(foot)
}

// maxAheadFetch bounds the footprint of a site over an instance's first
// arrivals that bringBackTail brings back along with the tail's: a row of
// LU's or cholesky's matrix, not a plane of a stencil's grid, which the
// next step's kernel overwrites before the CPU reads it.
const maxAheadFetch = 64 << 10

// recordedRows is how many probed iterations run on the probing engine,
// recording every access; the others run on the fast engine.
const recordedRows = 2

// Timings beside compiles (RATIONALE).
//
// The plain engine's speed on a loop is timed once, in a few runs of
// 32 K instructions, and prices every instance after. Timed while the
// loader's four compiles ran beside the guest, it came out at half the
// speed the loop later ran at: gramschmidt's column update was priced at
// 12.9-16.8 us an iteration in five runs of six on an H100 host, 7.5 us
// in the sixth, and the runs priced high launched 12-311 times and lost
// (2.9 s against a plain 1.3-1.6 s). So a timing made while a module
// compiled (compiledSince) keeps its best rate and times the loop again
// at its next instance, up to maxBusyTimings times.

// maxBusyTimings is how many timings of a loop made while the loader
// compiled modules time it again at its next instance.
const maxBusyTimings = 8

// The plain engine's speed is the best of plainTimedRuns runs of
// plainTimedInsns guest instructions of the instance, after plainWarmInsns
// that translate its blocks (a run on a shared machine may be slowed).
// A run cut short by the instance's end times the engine only when it ran
// minTimedInsns; instances too short for that are timed whole, each
// from its start, and the best of maxTimedInstances that ran at least
// minShortInsns is the rate.
const (
	maxTimedInstances = 3
	minShortInsns     = 1 << 10
	plainWarmInsns    = 4 << 10
	plainTimedInsns   = 32 << 10
	plainTimedRuns    = 4
	minTimedInsns     = 4 << 10
)

// timePlain times the plain CPU engine on the instance at the header,
// unless a CPU tail already timed the main engine on the loop (or the cost
// model is off): it runs plainWarmInsns guest instructions (on the
// loop's first instance), then times plainTimedRuns runs of
// plainTimedInsns, and keeps the best rate (guest instructions per
// second) for the cost model (timed), the CPU back at the header. The runs stop at
// every exit of the level: when the instance ends among them, it returns
// the fallback, as probing does. The rate is the loop's: an instance timed
// once gives it to the later instances, which go straight to probing, and
// one that ended during the runs gives what its runs of at least
// minTimedInsns measured (0, none, leaves the CPU's price to the main
// engine's speed and the probed iterations, see CPUIteration). (LU's column
// scaling, a few thousand instructions an instance, ended within the
// timing runs every time and never launched: it ran on the CPU between
// the trailing updates, bringing their pages back from the device each
// step.)
func (sp *spot) timePlain(cpu *gvinst.CPU) (done bool, fb *fallback) {
	if sp.plainIter != 0 || sp.a.opts.AlwaysOffload || sp.plainTimed {
		return false, nil
	}
	var rate float64
	ended := func(st gvinst.Stop, want gvinst.StopKind) *fallback {
		switch {
		case st.Kind == want:
			return nil
		case st.Kind == gvinst.StopSyscall:
			// As in probing: the loop has no system call.
			sp.fatal = fmt.Errorf("accelerate: the timing engine of hot spot %s stopped at a system call (%v)", sp.rep.Entry, st)
			return fail(ReasonProbeStop, "%v", st)
		case st.Kind == gvinst.StopBreakpoint && sp.exits[st.PC]:
			return fail(ReasonTripCount, "the loop ended within %d instructions", plainWarmInsns+plainTimedRuns*plainTimedInsns)
		}
		return fail(ReasonProbeStop, "%v", st)
	}
	// The fallback engine, the main engine's kind (fastEngine): the cost
	// model prices the CPU side at the speed the guest runs at without
	// offloading. The first instance warms it up (translating the loop's
	// blocks); the later ones are timed from their start.
	timer := sp.timer
	if !sp.warmed {
		sp.warmed = true
		if fb := ended(timer.Run(cpu, plainWarmInsns), gvinst.StopBudget); fb != nil {
			fb.timing = true
			return true, fb
		}
	}
	// The runs are timed by the thread's CPU clock where there is one
	// (ThreadCPUTime), on a locked thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sp.timedInstances++
	busy := sp.a.markJIT()
	finish := func() {
		if rate > 0 && sp.a.compiledSince(busy) && sp.busyTimings < maxBusyTimings {
			// Timed while modules compiled beside the guest: keep the
			// best rate so far and time the loop again at its next
			// instance (see Timings beside compiles).
			sp.busyTimings++
			sp.timed(rate)
			return
		}
		if rate > 0 || sp.timedInstances >= maxTimedInstances {
			sp.plainTimed = true
			sp.timed(rate)
		}
	}
	for i := 0; i < plainTimedRuns; i++ {
		_, back0 := sp.a.resident.BroughtBack()
		n0, t0, c0 := timer.Stats().GuestInsns, time.Now(), ThreadCPUTime()
		st := timer.Run(cpu, plainTimedInsns)
		d, n := time.Since(t0), timer.Stats().GuestInsns-n0
		if c := ThreadCPUTime() - c0; c0 > 0 && c > 0 {
			d = c
		}
		// A run that brought data back from the device (page by page,
		// with the fault handling around each) did not time the engine:
		// it is left out (as tails are, see OnBreak).
		_, back := sp.a.resident.BroughtBack()
		clean := back == back0
		if n >= minTimedInsns && clean {
			rate = max(rate, float64(n)/max(d.Seconds(), 1e-9))
		} else if n >= minTimedInsns {
			// Less the bring-back, a rough rate: the best the run has
			// where no clean one was timed.
			r := float64(n) / max((d-(back-back0)).Seconds(), 1e-9)
			sp.roughRate = max(sp.roughRate, r)
			sp.a.roughRate = max(sp.a.roughRate, r)
		}
		if fb := ended(st, gvinst.StopBudget); fb != nil {
			if rate == 0 && fb.reason == ReasonTripCount && n >= minShortInsns && clean {
				// A short instance, timed whole from its start: the
				// best of a few tells (the first may have paid for
				// translating the loop's blocks).
				sp.shortRate = max(sp.shortRate, float64(n)/max(d.Seconds(), 1e-9))
				if sp.timedInstances >= maxTimedInstances {
					rate = sp.shortRate
				}
			}
			finish()
			fb.timing = true
			return true, fb
		}
	}
	finish()
	// On to the header, where probing starts.
	var st gvinst.Stop
	for {
		st = sp.toHeader.Run(cpu, 0)
		if st.Kind != gvinst.StopBreakpoint || st.PC == sp.header || sp.exits[st.PC] {
			break
		}
	}
	if st.Kind == gvinst.StopBreakpoint && st.PC == sp.header {
		return false, nil
	}
	if st.Kind == gvinst.StopBreakpoint {
		return true, fail(ReasonTripCount, "the loop ended within %d instructions", plainWarmInsns+plainTimedRuns*plainTimedInsns)
	}
	return true, ended(st, gvinst.StopBudget)
}

// loopRate is the plain engine's speed timed on the loop: clean (no data
// brought back from the device during the runs), else rough (the runs
// less the bring-back), else 0.
func (sp *spot) loopRate() float64 {
	if sp.plainRate > 0 {
		return sp.plainRate
	}
	return sp.roughRate
}

// runRate is the plain engine's best speed timed on any hot spot, as
// loopRate is for one: adi's sweeps walk columns of arrays born on the
// device from their first iteration, and no timing run of its was clean;
// priced by their probed iterations, 16 times the plain engine's, they
// looked worth every launch.
func (a *Accelerator) runRate() float64 {
	if a.plainRate > 0 {
		return a.plainRate
	}
	return a.roughRate
}

// timed keeps rate, the plain engine's speed timed on the loop (0 when
// the runs could not tell), the best so far, for the loop (a loop timed
// again, see Timings beside compiles) and for the run (see
// CPUIteration).
func (sp *spot) timed(rate float64) {
	sp.plainRate = max(sp.plainRate, rate)
	sp.a.plainRate = max(sp.a.plainRate, rate)
}

// The sample launch: at least sampleMin iterations, a sampleFraction of
// the instance. It is small because the simulator's kernels took 12 to
// 94 times the throughput model's time on the nests corpus (the model
// learns that from the first launch, DeviceCosts.KernelScale): a sample
// that loses should cost a few percent of the instance's CPU time. (At
// 32 iterations, covariance's product at 700 600 sampled 32 of its 404
// rows, the longest of its triangle, and the sample cost 0.33 s on a
// 0.45 s run; one row costs 12 ms.)
const (
	sampleMin      = 1
	sampleFraction = 256
)

// launch runs one launch of kernel k (loaded as fn) and adds it to the
// report. A failed launch gives the fallback, and done as offload
// returns it.
func (sp *spot) launch(fn gpu.Function, k *ptxgen.Kernel, in ptxgen.LaunchInput, cpuIter time.Duration) (*fallback, bool) {
	if k.TripChecked && in.InnerTrip0 != ^uint64(0) && sp.tripsDiffer {
		in.InnerTrip0, in.InnerTripStep, in.Dense = ^uint64(0), 0, nil
	}
	if in.ExitState && len(k.ExitInits) > 0 && sp.launchCPU != nil {
		in.ExitInits = make([]uint64, len(k.ExitInits))
		for i, l := range k.ExitInits {
			in.ExitInits[i] = sp.launchCPU.State[l.Slot]
		}
	}
	launchStart, unseenBefore := time.Now(), sp.unseen
	fnU, proved := sp.proveDry(k, &in)
	if proved {
		fn, k = fnU, k.Unchecked
	}
	st, err := ptxgen.Launch(sp.a.ctx, fn, k, sp.a.g.Mem, in, &sp.a.resident)
	var ke *ptxgen.KernelError
	if k.TripChecked && in.InnerTrip0 != ^uint64(0) && errors.As(err, &ke) && ke.Code == ptxgen.ErrCodeExit && ke.X86 == sp.inner {
		// A row of the counted loop ran another trip count than the
		// probed ones: its stores do not cover the footprint (the guest
		// is as it was). Once more, copying in what the kernel writes,
		// and from now on without the check.
		sp.rep.TripRetries++
		sp.tripsDiffer = true
		in.InnerTrip0, in.InnerTripStep, in.Dense = ^uint64(0), 0, nil
		// An emulated faster GPU's host time is left out of every
		// launch's account, a failed one's too (Report.EmulationSeconds).
		sp.unseen += st.Unseen
		sp.a.unseen += st.Unseen
		st, err = ptxgen.Launch(sp.a.ctx, fn, k, sp.a.g.Mem, in, &sp.a.resident)
	}
	if errors.Is(err, ptxgen.ErrLostCopy) {
		// The guest's memory is not what the program wrote: stop.
		sp.fatal = fmt.Errorf("accelerate: hot spot %s: %w", sp.rep.Entry, err)
		return fail(ReasonDriver, "%v", err), true
	}
	if err != nil {
		sp.unseen += st.Unseen
		sp.a.unseen += st.Unseen
		var ke *ptxgen.KernelError
		if errors.As(err, &ke) {
			if k.ThreeD && (ke.Code == ptxgen.ErrCodeExit || ke.Code == ptxgen.ErrCodeStep) && sp.kernel3 != nil {
				// An inner iteration whose innermost trip count or steps
				// differ from the probed ones: the 2D kernel, which runs
				// the innermost loop in the thread, from now on.
				sp.kernel3, sp.fn3 = nil, nil
				sp.replay = nil
				sp.rep.Note = "2D, not 3D: " + ke.Error()
			}
			sp.lostLaunch(time.Since(launchStart)-(sp.unseen-unseenBefore), cpuIter)
			return fail(ReasonKernel, "%v", ke), false
		}
		return fail(ReasonDriver, "%v", err), false
	}
	sp.exit, sp.exitKernel = st.Exit, k
	sp.rep.Launches++
	sp.deviceUse(k, in.Sites)
	if k.TwoD {
		sp.rep.Launches2D++
	}
	if k.ThreeD {
		sp.rep.Launches3D++
	}
	sp.rep.Iterations += in.Count
	if proved {
		sp.rep.Unchecked++
	}
	sp.addCosts(st)
	// The cost model counts what launching costs the host too, past the
	// launch's latency, which every prediction charges on its own
	// (Estimate.Launch): a wall time per iteration that holds it prices a
	// fixed cost as if it grew with the iterations. And the hot spot's
	// first launch's wall holds one-time costs (the module's first use,
	// the device's pages first touched), as the ledger leaves that launch
	// out: its kernel's own time stands for it. (cholesky 2400 on an
	// H100: the first launch, 914 iterations, priced the next instance's
	// 2,268 at 0.81 ms of kernel, against 1.1 ms of CPU, and the hot spot
	// never launched again: 12 s against 2.8 s.)
	perIter := st.Kernel
	if sp.rep.Launches > 1 || sp.sampling {
		// (A sample launch is timed whole: its wall prices the rest.)
		var latency time.Duration
		if sp.a.costs != nil {
			latency = sp.a.costs.LaunchLatency
		}
		perIter = max(st.Kernel, st.LaunchWall-latency)
	}
	if !sp.a.jitOverlap(sp.jit) {
		sp.kernelPerIter = sp.kernelTimes.add(perIter / time.Duration(in.Count))
	}
	sp.a.calib.add(sp.modelPerIter*time.Duration(in.Count), st.Kernel)
	// What copies cost through the residency, for the next predictions.
	sp.a.copyIn.add(st.BytesIn, st.CopyIn)
	sp.a.backups.add(st.Parts.BytesDtoD, st.Parts.DeviceToDevice)
	sp.a.merges.add(st.Parts.BytesDtoD, st.Parts.DeviceToDevice)
	return nil, false
}

// addCosts adds what launch st took to the report.
func (sp *spot) addCosts(st ptxgen.LaunchStats) {
	sp.rep.KernelSeconds += st.Kernel.Seconds()
	sp.rep.SubmitSeconds += st.Submit.Seconds()
	sp.unseen += st.Unseen
	sp.a.unseen += st.Unseen
	sp.rep.ThreadInstructions += st.ThreadInstructions
	sp.rep.CopySeconds += (st.CopyIn + st.CopyOut).Seconds()
	if sp.rep.CopyParts == nil {
		sp.rep.CopyParts = &CopyPartsReport{}
	}
	sp.rep.CopyParts.add(st.Parts)
	sp.rep.BytesIn += st.BytesIn
	sp.rep.BytesReused += st.BytesReused
	sp.rep.BytesOut += st.BytesOut
	sp.rep.BytesDeferred += st.BytesDeferred
}

// proveDry launches the dry variant of data-independent kernel k with
// input in (see ptxgen's backup.go) when the checked launch would back up
// more than Options.DryRunAbove bytes of the device's only copies: a
// clean dry launch proves the input, in is marked Proven, and it returns
// the unchecked kernel, loaded, to launch instead of k. Otherwise (a
// small backup, a variant that did not load, a dry launch that failed)
// the caller launches k, checked and backed up, as it would have; a
// failing input fails there again, with the usual handling.
func (sp *spot) proveDry(k *ptxgen.Kernel, in *ptxgen.LaunchInput) (gpu.Function, bool) {
	if k.Dry == nil || k.Unchecked == nil || in.Proven || sp.dryFailed[k] {
		return nil, false
	}
	bytes := sp.a.resident.BackupBytes(k, in.Sites)
	if limit := sp.a.opts.DryRunAbove; limit > 0 && bytes < limit || limit == 0 && !sp.dryPays(bytes, in.Count) {
		return nil, false
	}
	fnD, errD := sp.load(k.Dry) // with its unchecked twin (moduleOf)
	fnU, errU := sp.load(k.Unchecked)
	if errD != nil || errU != nil {
		if sp.dryFailed == nil {
			sp.dryFailed = map[*ptxgen.Kernel]bool{}
		}
		sp.dryFailed[k] = true // the checked kernel, then, always
		return nil, false
	}
	dry := *in
	dry.Dry = true
	t0 := time.Now()
	st, err := ptxgen.Launch(sp.a.ctx, fnD, k.Dry, sp.a.g.Mem, dry, &sp.a.resident)
	sp.addCosts(st)
	if err != nil {
		return nil, false
	}
	// What the dry launch cost beyond the copies in, which the launch
	// after it would have made.
	sp.dryTook = max(time.Since(t0)-st.Unseen-st.CopyIn, 0)
	sp.rep.DryLaunches++
	in.Proven = true
	return fnU, true
}

// dryPays reports whether a dry launch of count iterations costs less
// than a backup of bytes (Options.DryRunAbove 0): never on the
// simulator; elsewhere once a backup was timed (backupMeter), the backup
// at that bandwidth against the last dry launch's time, or before one
// ran, a launch's latency and the kernel's time on the last launch.
func (sp *spot) dryPays(bytes, count uint64) bool {
	if sp.a.opts.Driver != nil && sp.a.opts.Driver.Name() == "sim" {
		return false
	}
	bw := sp.a.backups.bandwidth()
	if bw <= 0 || bytes == 0 {
		return false
	}
	backup := time.Duration(float64(bytes) / bw * float64(time.Second))
	dry := sp.dryTook
	if dry == 0 {
		if sp.a.costs == nil {
			return false
		}
		dry = sp.a.costs.LaunchLatency + sp.kernelPerIter*time.Duration(count)
	}
	return dry < backup
}

// backupMeter measures the device-to-device bandwidth of the launches'
// backups (ptxgen's backup.go): the launches that copied at least
// minBackupMeasured bytes on the device.
type backupMeter struct {
	bytes uint64
	took  time.Duration
}

// minBackupMeasured is the least a launch copies on the device for its
// time to tell the bandwidth.
const minBackupMeasured = 1 << 20

// add records a launch that copied bytes on the device, taking took.
func (m *backupMeter) add(bytes uint64, took time.Duration) {
	if bytes >= minBackupMeasured && took > 0 {
		m.bytes += bytes
		m.took += took
	}
}

// bandwidth is the bandwidth measured, bytes per second (0: none yet).
func (m backupMeter) bandwidth() float64 {
	if m.took <= 0 {
		return 0
	}
	return float64(m.bytes) / m.took.Seconds()
}

// ivStep is an induction variable's step as the profile gives it: fixed,

// siteRanges gives each site of the spot's kernel its footprint over the
// arrivals from..to of the instance: the range the probed iterations
// 0 and 1 saw of it (obs), extended linearly (a reloaded load's from the
// arrival its depth before from); a site that did not run in both probed
// iterations gets the footprint of the profile's array it belongs to.
func (sp *spot) siteRanges(byX86 map[[2]uint64]*siteObs, from, to uint64) ([]ptxgen.Range, *fallback) {
	k := sp.kernel
	ns := len(k.Sites)
	sites := make([]ptxgen.Range, ns)
	seen := make([]bool, ns)
	for s := 0; s < ns; s++ {
		o := byX86[siteKey(k.Sites[s])]
		if !o.seen[0] || !o.seen[1] {
			continue
		}
		seen[s] = true
		lo0, lo1 := int64(o.lo[0]), int64(o.lo[1])
		hi0, hi1 := int64(o.hi[0]), int64(o.hi[1])
		// (A reloaded register's first threads take the value passed
		// in: the rest load what the load read Depth iterations before
		// them, inside from..to.)
		first, lastJ := int64(from), int64(to)
		loA, loB := lo0+(lo1-lo0)*first, lo0+(lo1-lo0)*lastJ
		hiA, hiB := hi0+(hi1-hi0)*first, hi0+(hi1-hi0)*lastJ
		r := ptxgen.Range{Lo: uint64(min(loA, loB)), Hi: uint64(max(hiA, hiB))}
		if min(loA, loB) < 0 || r.Hi <= r.Lo || r.Hi-r.Lo > 1<<36 {
			return nil, fail(ReasonFootprint, "site at %#x: bad range", k.Sites[s].X86)
		}
		sites[s] = r
	}
	sp.coverConditionalSites(byX86, sites, seen)
	sp.coverConditionalUnions(byX86, sites, seen, from, to)
	// A site that did not run in both probed iterations (conditional code,
	// an inner loop empty there) gets the footprint of the profile's array
	// it belongs to, as the other sites of that array show it; the kernel
	// checks every access against it.
	for s := 0; s < ns; s++ {
		if seen[s] {
			continue
		}
		g, ok := sp.group(k.Sites[s])
		var r ptxgen.Range
		for o := 0; o < ns && ok; o++ {
			if og, ook := sp.group(k.Sites[o]); seen[o] && ook && og == g {
				if r.Hi == 0 {
					r = sites[o]
				}
				r.Lo, r.Hi = min(r.Lo, sites[o].Lo), max(r.Hi, sites[o].Hi)
			}
		}
		if r.Hi == 0 && ok && g >= 0 && g < len(sp.hs.Arrays) {
			// Nothing of that array ran either: the profile's footprint
			// of the array (the kernel's checks catch an input for which
			// it is wrong).
			fp := sp.hs.Arrays[g].Footprint
			r = ptxgen.Range{Lo: uint64(fp[0]), Hi: uint64(fp[1])}
		}
		// Else the site ran neither here nor when profiling (the scalar
		// remainder of a vectorised loop, say): an empty footprint, so
		// that the launch fails, and the CPU takes over, if it runs.
		sites[s] = r
	}
	return sites, nil
}

// siteKey names a site by its x86 instruction and whether it stores:
// copies of one instruction in several blocks share one access function.
func siteKey(s ptxgen.Site) [2]uint64 {
	if s.Store {
		return [2]uint64{s.X86, 1}
	}
	return [2]uint64{s.X86, 0}
}

// lostLaunch accounts for a launch whose kernel reported an error: the
// guest is as it was, the CPU runs the whole instance, and what the
// launch cost (copies, the kernel, undoing it) bought nothing. The ledgers
// count it as a launch of no iterations (a kernel that fails at every
// other instance, a step that depends on the data, goes back to the CPU
// once its launches do not pay for their failures), the hot spot's and
// the run's.
func (sp *spot) lostLaunch(spent, cpuIter time.Duration) {
	if sp.a.opts.AlwaysOffload || spent <= 0 {
		return
	}
	if why := sp.ledger.add(spent, 0, cpuIter, 0); why != "" {
		sp.disarm(why)
	}
	if sp.ledger.launches > 1 {
		sp.a.run.gpu += spent
		_, back := sp.a.resident.BroughtBack()
		if why, lost := sp.a.run.loses(back); lost {
			sp.a.stopOffloading(why)
		}
	}
}

// rowGrowth is how many times the last of the probed rows' instructions
// (rows, three or more, in order) the mean row of the count iterations
// after them runs: 1 unless the rows grow or shrink by about the same
// number of instructions each (a triangle: syrk's row i runs i inner
// iterations, and its first rows, the shortest, priced its whole
// triangle at 1/300 of the plain engine's time). A row count that does
// not change linearly (data-dependent work) is not extrapolated.
func rowGrowth(rows []float64, count uint64) float64 {
	n := len(rows)
	d, ok := rowStep(rows)
	if !ok || count == 0 || rows[n-1] <= 0 {
		return 1
	}
	mean := rows[n-1] + d*(1+float64(count-1)/2)
	return max(mean, 1) / rows[n-1]
}

// rowStep is how many instructions each row adds to the one before it,
// where the probed rows (three or more, in order) grow or shrink by about
// the same number (see rowGrowth).
func rowStep(rows []float64) (float64, bool) {
	n := len(rows)
	if n < 3 {
		return 0, false
	}
	d1, d2 := rows[n-2]-rows[n-3], rows[n-1]-rows[n-2]
	if d1 == 0 && d2 == 0 || d1*d2 <= 0 || math.Abs(d1-d2) > math.Abs(d1+d2)/4 {
		return 0, false
	}
	return (d1 + d2) / 2, true
}

// rowAt is the instructions of the row k rows after the last of the
// probed rows: the last one's, moved by rowStep k times where the rows
// grow linearly (at least 1).
func rowAt(rows []float64, k uint64) float64 {
	last := rows[len(rows)-1]
	if d, ok := rowStep(rows); ok {
		return max(last+d*float64(k), 1)
	}
	return last
}
