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
// two iterations as usual. What probing would have found out differently
// the kernel still catches: an access outside its footprint, a thread
// leaving the loop early, a division that would trap (the launch then
// fails, the guest's memory is left as it was, and the CPU runs the
// instance); and a loop that runs on past the predicted trip count runs
// on on the CPU.

// replay is an instance to launch again without probing.
type replay struct {
	start []uint64 // live-in values at its first arrival
	k     *ptxgen.Kernel
	fn    gpu.Function
	in    ptxgen.LaunchInput // from the first arrival
	steps []uint64
	// cpuIter is the CPU's time per iteration the instance was priced at.
	cpuIter time.Duration
}

// keepReplay records the instance whose live-in values at arrival 0 were
// start, launched with k (fn) and in from arrival P, as a replay from
// arrival 0: sites0 are the footprints over arrivals 0..last-2, and for a
// 2D kernel inner0 the inner trip count and steps of row 0.
func (sp *spot) keepReplay(start []uint64, k *ptxgen.Kernel, fn gpu.Function, in ptxgen.LaunchInput, P uint64, sites0 []ptxgen.Range, inner0 *ptxgen.LaunchInput, cpuIter time.Duration) {
	r := &replay{start: append([]uint64(nil), start...), k: k, fn: fn, steps: in.Steps, cpuIter: cpuIter}
	r.in = in
	r.in.Values = r.start
	r.in.Count = in.Count + P
	r.in.Sites = sites0
	if k.TwoD {
		if inner0 == nil {
			return
		}
		r.in.InnerTrip0, r.in.InnerMax, r.in.InnerSteps = inner0.InnerTrip0, max(in.InnerMax, inner0.InnerTrip0), inner0.InnerSteps
	}
	sp.replay = r
}

// offloadReplay launches the replay for an instance whose live-in values
// at its first arrival equal the replay's start. applied is false when the
// replay does not apply (a guard fails on its footprints, or MXCSR or DF
// are not what the kernel assumes): the instance is then probed, which
// finds out why. A failed launch drops the replay and leaves the
// instance, untouched, to the CPU.
func (sp *spot) offloadReplay(cpu *gvinst.CPU) (applied, done bool, fb *fallback) {
	r := sp.replay
	if r.k.DynRounding && cpu.State[gvinst.MXCSR]>>13&3 != 0 || r.k.ClearDF && cpu.State[gvinst.RFLAGS]&gvinst.FlagDF != 0 {
		return false, false, nil
	}
	start := time.Now()
	if fb := sp.guards(cpu, r.in.Sites); fb != nil || reloadsOverlapStores(r.k, r.in.Sites) != "" {
		sp.replay = nil
		return false, false, nil
	}
	if fb, done := sp.launch(r.fn, r.k, r.in, r.cpuIter); fb != nil {
		sp.replay = nil
		return true, done, fb
	}
	sp.rep.Replays++
	done, fb = sp.finishInstance(cpu, start, 0, 0, r.in.Count, r.steps, r.start, r.cpuIter)
	return true, done, fb
}
