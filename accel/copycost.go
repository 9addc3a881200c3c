package accel

import (
	"github.com/gxbit/gxbit/profile"
	"time"

	"github.com/gxbit/gxbit/ptxgen"
)

// What a launch copies, and which instances pay for it.
//
// A launch copies in the bytes of its footprints the device does not
// hold, or holds but the guest wrote since, less what the launch
// overwrites in a new buffer (an init nest copies nothing in); it makes
// new buffers for what no buffer holds, and merges the buffers its
// footprints overlap. What it leaves on the device is not copied again:
// a launch after launches is priced by what it copies, not at the mean
// of theirs. (Pricing every instance at the mean copy time of the
// launches so far charged heat3d's first sweep, on an H100, the 0.28 s
// its first launch spent making its buffers and copying both arrays in,
// against 0.2 s on the CPU: it went back to the CPU after one launch,
// and from then on both arrays crossed the bus twice a step.)
//
// Some of those copies are an outlay that the instances still to come
// share, because once made they are not made again: new buffers and
// merged ones stay on the device, and so do the pages the hot spot's
// own CPU runs wrote. An instance the cost model sends to the CPU writes
// its store footprint in the guest, and the pages the device holds there
// go stale on it; the next launch copies them in once, and from then on
// the instances run on the GPU and write them there. Charged to one
// instance, the CPU's own writes kept the hot spot on the CPU: cholesky
// at 2400 on an H100 launched a column, sent the next (short) one to the
// CPU, which wrote a double in every row of the matrix, and each column
// after it was charged 3.8 ms of copying the matrix in again against
// 1 ms on the CPU, so the CPU ran them, dirtied the matrix again, and
// fourteen columns later the hot spot was disarmed (14.6 s, where the run
// that launched every column took 3.4 s). Pages other host code writes
// between the instances are charged every time: they come again at every
// instance (refill.go's rule for the CPU side).

// residency is what pricing a launch's copies asks of the device's
// arrays: ptxgen.Resident.
type residency interface {
	ToCopy(r ptxgen.Range) uint64
	Unheld(r ptxgen.Range) uint64
	ToMerge(r ptxgen.Range) uint64
}

// launchCopies are the bytes a launch would copy, by who pays for them.
type launchCopies struct {
	// in is copied into buffers the device holds, for this instance.
	in uint64
	// fresh is copied into device memory made for it (ptxgen.Resident.
	// Unheld), and merged copied on the device merging buffers (ToMerge):
	// both stay.
	fresh, merged uint64
	// own is copied into buffers the device holds, of the pages the hot
	// spot's own CPU runs wrote since its last launch (spot.fellBack).
	own uint64
}

// launchCopies is what a launch of kernel k with input in (its Sites,
// and Dense for what it overwrites) would copy, with the device's arrays
// as res holds them.
func (sp *spot) launchCopies(res residency, k *ptxgen.Kernel, in ptxgen.LaunchInput) launchCopies {
	var c launchCopies
	for _, g := range ptxgen.Groups(k, in.Sites) {
		c.merged += res.ToMerge(g.Range)
		n := res.ToCopy(g.Range)
		if n == g.Range.Hi-g.Range.Lo {
			w := ptxgen.Overwritten(k, g, in)
			n -= w.Hi - w.Lo
		}
		fresh := min(n, res.Unheld(g.Range))
		var own uint64
		within(g.Range, sp.fellBack, func(r ptxgen.Range) { own += res.ToCopy(r) - res.Unheld(r) })
		own = min(own, n-fresh)
		c.in += n - fresh - own
		c.fresh += fresh
		c.own += own
	}
	return c
}

// time prices the copies at c, for an instance of a hot spot that has
// launched launches times and gone to the CPU fallbacks times, and that
// the profile saw entered entries times. The outlays (new buffers,
// merges, the hot spot's own pages) are shared by the instances it may
// still run: as many as the profile saw it entered, or as it ran so far.
// The two sweeps of a time step over the same arrays make and merge their
// buffers over the first few steps, and a step's share is small; fcond's
// three passes merged 480 MB for each of their last two, and trisolv's
// initialisation, entered once, would have copied its triangle into a
// new buffer. Copies into held buffers stay too, once made: the n-th
// instance of a hot spot that has not launched yet is charged a 1/n share
// of them, so a stencil whose first step cannot pay for the copies alone
// launches by its third or fourth.
func (lc launchCopies) time(c DeviceCosts, launches, fallbacks int, entries uint64) time.Duration {
	in := lc.in
	if fallbacks > 0 && launches == 0 {
		in /= uint64(fallbacks) + 1
	}
	seen := uint64(launches + fallbacks)
	remaining := max(entries, 2*seen, seen+1) - seen
	return c.copyTime(in+lc.own/remaining) + c.NewBufferTime(lc.fresh/remaining) + c.MergeTime(lc.merged/remaining)
}

// copyTime is what copying bytes into buffers the device holds costs, at
// HostToDevice (0 where not measured).
func (c DeviceCosts) copyTime(bytes uint64) time.Duration {
	if c.HostToDevice <= 0 || bytes == 0 {
		return 0
	}
	return time.Duration(float64(bytes) / c.HostToDevice * float64(time.Second))
}

// ranOnCPU records that the instance whose launch kernel k over sites
// was priced runs on the CPU: its store footprints join the pages the
// hot spot's own CPU runs wrote (fellBack), until its next launch copies
// them in.
func (sp *spot) ranOnCPU(k *ptxgen.Kernel, sites []ptxgen.Range) {
	rs := sp.fellBack
	for s, r := range sites {
		if s < len(k.Sites) && k.Sites[s].Store {
			rs = append(rs, r)
		}
	}
	sp.fellBack = unionRanges(rs)
}

// expectedInstances is how many instances of the hot spot's level a run
// like the profiled one has: the profile's entries of the nest (a count
// of the entries it sampled, so at least that many), times the trips of
// the nest's levels around the mapped one; or, where another hot spot's
// nest holds this one's as an inner level (a time step's loop around a
// sweep: the profile samples the sweep's first entries only, and heat3d's
// or jacobi2dt's say 5 of 500), that nest's entries times the trips of
// its levels around it. The outlays shared over the instances still to
// come (launchCopies.time) are shared over this many.
func (sp *spot) expectedInstances(others []*profile.HotSpot) uint64 {
	return expectedInstancesOf(sp.hs, sp.levelIndex, others)
}

// expectedInstancesOf is spot.expectedInstances for level L of hot spot
// hs.
func expectedInstancesOf(hs *profile.HotSpot, L int, others []*profile.HotSpot) uint64 {
	n := instancesOf(hs, L)
	h := hs.Levels[0].Header
	for _, o := range others {
		for l := 1; l < len(o.Levels); l++ {
			if o.Levels[l].Header == h {
				n = max(n, instancesOf(o, l)*instancesOf(hs, L)/max(hs.Entries, 1))
			}
		}
	}
	return n
}

// instancesOf is how many times level L of hot spot hs ran in the
// profiled run: the nest's entries times the mean observed trips of the
// levels around L.
func instancesOf(hs *profile.HotSpot, L int) uint64 {
	n := float64(max(hs.Entries, 1))
	for l := 0; l < L && l < len(hs.Levels); l++ {
		if t := hs.Levels[l].ObservedTrips; len(t) > 0 {
			var sum int64
			for _, v := range t {
				sum += max(v, 0)
			}
			n *= float64(sum) / float64(len(t))
		}
	}
	return uint64(n)
}
