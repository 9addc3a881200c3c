package accel

import (
	"time"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptxgen"
)

// A time-stepped program enters the same loop instance over and over:
// the same registers at its header, other data in its arrays. Probing
// each one runs its first iterations on the CPU, and the CPU then touches
// (and brings back from the device) the rows they read and write. So once
// an instance has been probed and launched, it is kept as a replay: an
// instance that arrives at the header with the same live-in values runs
// on the GPU from its first iteration, with the steps, trip count and
// footprints of the one probed, after the guards; the CPU runs its last
// iteration (or two, see cpuTail) as usual, or none where the kernel
// gives the exit state (givesExit). What probing would have found out differently
// the kernel still catches: an access outside its footprint, a thread
// leaving the loop early, a division that would trap (the launch then
// fails, the guest's memory is left as it was, and the CPU runs the
// instance); and a loop that runs on past the predicted trip count runs
// on on the CPU. Once a replay has run the checked kernel without error,
// a data-independent kernel's later replays with the same input make the
// same accesses: they run its unchecked variant, without backups.
//
// A sequential outer loop (LU's k, cholesky's j) enters an instance that
// differs from the one before by constant amounts: the start pointers move
// by a row and a column, the trip counts fall by one. When two consecutive
// instances were probed and launched with the same kernel, their
// difference is kept (replay.before), and the next instance whose live-in
// values continue the progression (each moved by the same amount again,
// reloaded registers aside) is launched from arrival 0 without probing,
// with everything the probed ones gave moved on by the same amount
// (extrapolate): the steps, the trip count, the inner trip counts and
// steps of a 2D kernel, each site's observed footprints. The launch is
// the checked kernel's, always, so the argument above holds: a footprint
// extrapolated too small, a trip count too large, a step that did not
// move as predicted make the kernel fail (the guest is left as it was,
// the CPU runs the instance) and the progression is dropped, probing
// again; a trip count too small leaves the CPU tail more arrivals to run.
// An extrapolated replay launched without error continues the
// progression for the instance after it.

// replay is an instance to launch again without probing.
type replay struct {
	start []uint64 // live-in values at its first arrival
	// reloaded are the live-ins a reload sets: data, which need not
	// match (the first threads take the values passed).
	reloaded map[int]ptxgen.Reload
	k        *ptxgen.Kernel
	fn       gpu.Function
	in       ptxgen.LaunchInput // from the first arrival; Count and Sites set per launch
	steps    []uint64
	// last is the arrival that leaves the loop, obs what the probed
	// iterations saw of each site (the footprints over arrivals 0 to the
	// GPU's last come from them), and for a 2D kernel lastRow0 and
	// lastRowStep the inner trip count of outer arrival j as
	// lastRow0 + lastRowStep·j.
	last                  uint64
	obs                   map[[2]uint64]*siteObs
	lastRow0, lastRowStep uint64
	// cpuIter is the CPU's time per iteration the instance was priced at,
	// insns the guest instructions of its last probed iteration (an
	// extrapolated replay's cpuIter moves with them).
	cpuIter time.Duration
	insns   float64
	// proven is the Count of the last replay that ran the checked kernel
	// without error (0: none yet): a replay with that same input runs the
	// unchecked kernel (fnUnchecked, loaded at its first use), when k is
	// data independent.
	proven      uint64
	fnUnchecked gpu.Function
	// uncheckedFailed is set when the unchecked kernel did not load.
	uncheckedFailed bool
	// instance is the spot's instance (spot.instances) the replay was
	// kept from, or last launched at; probed says it was kept from a
	// probed launch (its observations are what probing saw, not an
	// extrapolation's); before is the probed replay of the instance
	// before it, of the same kernel, when there was one: the two give
	// the progression (extrapolate).
	instance uint64
	probed   bool
	before   *replay
}

// keepReplay records the instance whose live-in values at arrival 0 were
// start, launched with k (fn) and in from arrival P, as a replay from
// arrival 0: last is the arrival that leaves the loop, obs what the probed
// iterations saw of the sites, for a 2D kernel inner0 the inner trip
// count and steps of row 0, and insns the guest instructions of the last
// probed iteration.
func (sp *spot) keepReplay(start []uint64, k *ptxgen.Kernel, fn gpu.Function, in ptxgen.LaunchInput, P, last uint64, obs map[[2]uint64]*siteObs, inner0 *ptxgen.LaunchInput, cpuIter time.Duration, insns float64) {
	r := &replay{start: append([]uint64(nil), start...), reloaded: reloadIndex(k.LiveIns, k.Reloads, 0), k: k, fn: fn, steps: in.Steps, cpuIter: cpuIter, insns: insns, last: last, obs: obs}
	r.in = in
	r.in.Values = r.start
	if k.TwoD {
		if inner0 == nil {
			return
		}
		r.in.InnerTrip0, r.in.InnerSteps = inner0.InnerTrip0, inner0.InnerSteps
		r.lastRow0, r.lastRowStep = inner0.InnerTrip0, in.InnerTripStep
	}
	r.instance, r.probed = sp.instances, true
	if b := sp.replay; b != nil && b.probed && b.instance+1 == sp.instances && b.k == k && b.fn == fn {
		r.before = b
		b.before = nil
	}
	sp.replay = r
}

// next is the replay of the instance after r when the two instances r
// and r.before, consecutive, make a progression, for an instance arriving
// as the spot's instance (nil when r has no progression, or the instance
// is not the next one).
func (r *replay) next(instance uint64) *replay {
	if r.before == nil || r.instance+1 != instance {
		return nil
	}
	return extrapolate(r.before, r)
}

// extrapolate is the replay of the instance after b, where a is the one
// before b: every value b launches with moved on by its change from a to
// b (wrapping, as the guest's registers do), or nil when the progression
// does not extrapolate (different kernels or sites, a trip count or
// footprint that would go below zero, a site seen in one and not the
// other). Its footprints are used as the probed ones' are: the checked
// kernel catches any access outside them. Stores proved dense in b are
// not trusted to be dense in the extrapolated footprints (Dense is
// dropped: they are copied in).
func extrapolate(a, b *replay) *replay {
	if a.k != b.k || a.fn != b.fn || len(a.start) != len(b.start) || len(a.steps) != len(b.steps) || len(a.obs) != len(b.obs) {
		return nil
	}
	last, ok := moveOn(a.last, b.last)
	if !ok {
		return nil
	}
	c := &replay{k: b.k, fn: b.fn, reloaded: b.reloaded, cpuIter: b.cpuIter, insns: b.insns, last: last, before: b,
		start: moveAll(a.start, b.start), steps: moveAll(a.steps, b.steps)}
	// The CPU's time per iteration moves with the iteration's
	// instructions: cholesky's rows run an inner loop one trip longer an
	// instance, LU's trailing update's rows one element shorter.
	if ins := 2*b.insns - a.insns; a.insns > 0 && b.insns > 0 && ins > 0 {
		c.insns = ins
		c.cpuIter = time.Duration(float64(b.cpuIter) * ins / b.insns)
	}
	c.obs = make(map[[2]uint64]*siteObs, len(b.obs))
	for key, ob := range b.obs {
		oa := a.obs[key]
		if oa == nil || oa.seen != ob.seen {
			return nil
		}
		oc := &siteObs{seen: ob.seen}
		for it := range ob.seen {
			if !ob.seen[it] {
				continue
			}
			lo, ok1 := moveOn(oa.lo[it], ob.lo[it])
			hi, ok2 := moveOn(oa.hi[it], ob.hi[it])
			if !ok1 || !ok2 || hi <= lo {
				return nil
			}
			oc.lo[it], oc.hi[it] = lo, hi
		}
		c.obs[key] = oc
	}
	c.in = b.in
	c.in.Steps, c.in.Dense = c.steps, nil
	if !b.k.TwoD && b.k.TripChecked {
		// The counted loop's trip count, the same in every row of an
		// instance, moves on too (all ones: not checked).
		t, ok := moveOn(a.in.InnerTrip0, b.in.InnerTrip0)
		if a.in.InnerTrip0 == ^uint64(0) || b.in.InnerTrip0 == ^uint64(0) || !ok {
			t = ^uint64(0)
		}
		c.in.InnerTrip0, c.in.InnerTripStep = t, 0
	}
	if b.k.TwoD {
		if len(a.in.InnerSteps) != len(b.in.InnerSteps) || len(a.in.InnerStepRows) != len(b.in.InnerStepRows) || len(a.in.Inner2Steps) != len(b.in.Inner2Steps) {
			return nil
		}
		c.lastRow0, c.lastRowStep = 2*b.lastRow0-a.lastRow0, 2*b.lastRowStep-a.lastRowStep
		if int64(c.lastRow0) < 0 {
			return nil
		}
		c.in.InnerTrip0 = 2*b.in.InnerTrip0 - a.in.InnerTrip0
		c.in.InnerTripStep = 2*b.in.InnerTripStep - a.in.InnerTripStep
		c.in.Inner2Trip = 2*b.in.Inner2Trip - a.in.Inner2Trip
		c.in.InnerSteps = moveAll(a.in.InnerSteps, b.in.InnerSteps)
		c.in.InnerStepRows = moveAll(a.in.InnerStepRows, b.in.InnerStepRows)
		c.in.Inner2Steps = moveAll(a.in.Inner2Steps, b.in.Inner2Steps)
		if b.in.InnerStepRows == nil {
			c.in.InnerStepRows = nil
		}
		if b.in.Inner2Steps == nil {
			c.in.Inner2Steps = nil
		}
	}
	return c
}

// moveOn is the value after a and b in their progression, b + (b - a),
// and whether it stays a count or address (no signed wrap below zero or
// past 2^63).
func moveOn(a, b uint64) (uint64, bool) {
	d := int64(b - a)
	c := b + uint64(d)
	if int64(b) < 0 || int64(c) < 0 {
		return 0, false
	}
	return c, true
}

// moveAll is moveOn over each value, wrapping: a register's value.
func moveAll(a, b []uint64) []uint64 {
	c := make([]uint64, len(b))
	for i := range b {
		c[i] = 2*b[i] - a[i]
	}
	return c
}

// matches reports whether an instance whose live-in values at its first
// arrival are start is the replay's: the same values, but for reloaded
// registers.
func (r *replay) matches(start []uint64) bool {
	if len(start) != len(r.start) {
		return false
	}
	for i, v := range start {
		if _, data := r.reloaded[i]; !data && v != r.start[i] {
			return false
		}
	}
	return true
}

// input is the replay's launch input when the CPU runs the last tail
// arrivals: the GPU runs arrivals 0..last-tail, from the live-in values
// start (the replay's, with the reloaded registers' own).
func (r *replay) input(sp *spot, tail uint64, start []uint64) (ptxgen.LaunchInput, bool) {
	if r.last < tail {
		return ptxgen.LaunchInput{}, false
	}
	in := r.in
	in.Values = start
	in.Count = r.last + 1 - tail
	in.ExitState = tail == 0
	sites, fb := sp.siteRanges(r.obs, 0, r.last-tail)
	if fb != nil {
		return ptxgen.LaunchInput{}, false
	}
	in.Sites = sites
	if r.k.TwoD {
		// The inner trip counts of rows 0 and last-tail, as in offload.
		lastRow := r.lastRow0 + r.lastRowStep*(r.last-tail)
		if int64(lastRow) < 0 {
			return ptxgen.LaunchInput{}, false
		}
		in.InnerMax = max(r.lastRow0, lastRow)
		if !outerStoresFit(r.k, sites, int64(r.lastRow0), int64(lastRow)) {
			return ptxgen.LaunchInput{}, false
		}
	}
	return in, true
}

// offloadReplay launches replay r (the spot's, or the one extrapolated
// from it) for an instance whose live-in values at its first arrival,
// start, match r's. applied is false when the
// replay does not apply (a guard fails on its footprints, or MXCSR or DF
// are not what the kernel assumes): the instance is then probed, which
// finds out why. A failed launch drops the replay and leaves the
// instance, untouched, to the CPU.
func (sp *spot) offloadReplay(cpu *gvinst.CPU, r *replay, start []uint64) (applied, done bool, fb *fallback) {
	if r.k.DynRounding && cpu.State[gvinst.MXCSR]>>13&3 != 0 || r.k.ClearDF && cpu.State[gvinst.RFLAGS]&gvinst.FlagDF != 0 {
		return false, false, nil
	}
	t0 := time.Now()
	sp.jit = sp.a.markJIT()
	// Kernels loaded on the way (an unchecked or dry variant at its first
	// use) are not the instance's GPU time, as in offload: a module's
	// JIT, 0.1 s on an H100, sent cholesky's hot spot back to the CPU for
	// good as one launch "of 2,283 iterations that cost 0.1 s".
	loadBefore := sp.loadTime
	sp.unseen, sp.launchCPU = 0, cpu
	tail := sp.cpuTail()
	if tail == 1 && sp.givesExit() && r.k.GivesExitState() {
		tail = 0
	}
	sp.tailInsns = r.insns
	in, ok := r.input(sp, tail, start)
	if !ok || in.Count < max(sp.a.opts.MinIterations, 1) {
		sp.replay = nil
		return false, false, nil
	}
	if fb := sp.guards(cpu, in.Sites); fb != nil || reloadsOverlapStores(r.k, in.Sites) != "" {
		sp.replay = nil
		return false, false, nil
	}
	if r != sp.replay && !sp.replayPays(r, in) {
		// An instance of a progression too small to pay (LU's last
		// steps): probing prices it, and sends it to the CPU.
		return false, false, nil
	}
	fn, k := r.fn, r.k
	if r.k.Unchecked != nil && r.proven == in.Count && !r.uncheckedFailed {
		// The same input as a checked launch that succeeded: the same
		// accesses, all inside their footprints (see ptxgen's
		// unchecked.go).
		if r.fnUnchecked == nil {
			// Loaded at its first use (spot.load).
			f, err := sp.load(r.k.Unchecked)
			if err == nil {
				r.fnUnchecked = f
			} else {
				r.uncheckedFailed = true // the checked kernel, then, always
			}
		}
		if r.fnUnchecked != nil {
			fn, k, in.Proven = r.fnUnchecked, r.k.Unchecked, true
		}
	}
	if fb, done := sp.launch(fn, k, in, r.cpuIter); fb != nil {
		sp.replay = nil
		return true, done, fb
	}
	if in.Proven {
		sp.rep.Unchecked++
	} else if r.k.DataIndependent {
		r.proven = in.Count
	}
	sp.rep.Replays++
	r.instance = sp.instances
	if r != sp.replay {
		// An extrapolated replay that ran: the progression goes on from it.
		sp.rep.Extrapolated++
		r.before.before = nil
		sp.replay = r
	}
	done, fb = sp.finishInstance(cpu, t0, sp.loadTime-loadBefore, 0, in.Count, tail, r.steps, start, r.cpuIter, r.obs)
	return true, done, fb
}

// replayPays reports whether the cost model expects the launch of
// extrapolated replay r with input in to cost less than the CPU running
// the iterations, bringing back first what the device holds of their
// footprints (as offload prices a probed instance, less the probing, with
// the same copies at the same measured costs): a progression's instances
// change size, and its last ones may not pay. Without the device's costs
// measured, or with AlwaysOffload, it does.
func (sp *spot) replayPays(r *replay, in ptxgen.LaunchInput) bool {
	if sp.a.costs == nil || sp.a.opts.AlwaysOffload {
		return true
	}
	c := sp.a.measuredCosts()
	est := c.Predict(in.Count, r.cpuIter, r.insns, 0, 0, sp.kernelPerIter)
	est.Copy = sp.launchCopies(&sp.a.resident, r.k, in).time(c, sp.rep.Launches, sp.rep.Fallbacks, sp.expectedInstances(sp.a.hotSpots()))
	est.Fetch, est.Refill = sp.pageTraffic(c, r.k, in.Sites, in.Count)
	sp.fetch, sp.predicted = est.Fetch, est
	return est.Pays()
}
