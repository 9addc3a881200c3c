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
	// cpuIter is the CPU's time per iteration the instance was priced at.
	cpuIter time.Duration
	// proven is the Count of the last replay that ran the checked kernel
	// without error (0: none yet): a replay with that same input runs the
	// unchecked kernel (fnUnchecked, loaded at its first use), when k is
	// data independent.
	proven      uint64
	fnUnchecked gpu.Function
	// uncheckedFailed is set when the unchecked kernel did not load.
	uncheckedFailed bool
}

// keepReplay records the instance whose live-in values at arrival 0 were
// start, launched with k (fn) and in from arrival P, as a replay from
// arrival 0: last is the arrival that leaves the loop, obs what the probed
// iterations saw of the sites, and for a 2D kernel inner0 the inner trip
// count and steps of row 0.
func (sp *spot) keepReplay(start []uint64, k *ptxgen.Kernel, fn gpu.Function, in ptxgen.LaunchInput, P, last uint64, obs map[[2]uint64]*siteObs, inner0 *ptxgen.LaunchInput, cpuIter time.Duration) {
	r := &replay{start: append([]uint64(nil), start...), reloaded: reloadIndex(k.LiveIns, k.Reloads, 0), k: k, fn: fn, steps: in.Steps, cpuIter: cpuIter, last: last, obs: obs}
	r.in = in
	r.in.Values = r.start
	if k.TwoD {
		if inner0 == nil {
			return
		}
		r.in.InnerTrip0, r.in.InnerSteps = inner0.InnerTrip0, inner0.InnerSteps
		r.lastRow0, r.lastRowStep = inner0.InnerTrip0, in.InnerTripStep
	}
	sp.replay = r
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

// offloadReplay launches the replay for an instance whose live-in values
// at its first arrival, start, match the replay's. applied is false when the
// replay does not apply (a guard fails on its footprints, or MXCSR or DF
// are not what the kernel assumes): the instance is then probed, which
// finds out why. A failed launch drops the replay and leaves the
// instance, untouched, to the CPU.
func (sp *spot) offloadReplay(cpu *gvinst.CPU, start []uint64) (applied, done bool, fb *fallback) {
	r := sp.replay
	if r.k.DynRounding && cpu.State[gvinst.MXCSR]>>13&3 != 0 || r.k.ClearDF && cpu.State[gvinst.RFLAGS]&gvinst.FlagDF != 0 {
		return false, false, nil
	}
	t0 := time.Now()
	sp.unseen, sp.launchCPU = 0, cpu
	tail := sp.cpuTail()
	if tail == 1 && sp.givesExit() && r.k.GivesExitState() {
		tail = 0
	}
	in, ok := r.input(sp, tail, start)
	if !ok || in.Count < max(sp.a.opts.MinIterations, 1) {
		sp.replay = nil
		return false, false, nil
	}
	if fb := sp.guards(cpu, in.Sites); fb != nil || reloadsOverlapStores(r.k, in.Sites) != "" {
		sp.replay = nil
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
	done, fb = sp.finishInstance(cpu, t0, 0, 0, in.Count, tail, r.steps, start, r.cpuIter)
	return true, done, fb
}
