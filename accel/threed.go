package accel

import (
	"runtime"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptxgen"
)

// The 3D kernel (ptxgen.Nest.Inner2): when the level two inside the
// mapped one is parallel too, thread (x, y, z) runs one iteration of it.
// A nest whose outer levels are short (heat3d's 158 × 158 rows of 158
// elements, doitgen's) then has a thread per element, as a hand-written
// CUDA kernel does, where the 2D kernel has a thread per row and walks
// the rows in it, its warps' accesses a row apart. The probed rows give
// the innermost level's trip count and steps: at the innermost header,
// in each of the first three inner iterations of every probed row, the
// arrivals and the live values of the first three. The kernel needs
// them the same in all of those: it checks the trip count in every
// inner iteration it runs, and each thread that its iteration moved the
// values by exactly those steps; a launch that finds otherwise fails (the
// CPU runs the instance) and the hot spot goes back to its 2D kernel. On
// the simulator the 3D kernel runs only while the 2D grid leaves a host
// core idle (prefer2D), as the 1D kernel is preferred to the 2D one there.
// A nest whose inner body divides gets no 3D kernel: each innermost
// iteration's thread would repeat the division.

// innermostObs is what the probed rows saw of the innermost level: per
// probed row and per inner iteration 0..2 of it, the arrivals at the
// innermost header and the live values at the first three.
type innermostObs struct {
	trips  [3][3]uint64
	states [3][3][][]uint64
}

// arrive notes an arrival at the innermost header in probed row it,
// whose inner level has had innerArrivals arrivals so far (the current
// inner iteration is the last of them).
func (o *innermostObs) arrive(sp *spot, cpu *gvinst.CPU, it int, innerArrivals uint64) error {
	m := int(innerArrivals) - 1
	if it >= len(o.trips) || m < 0 || m >= len(o.trips[it]) {
		return nil
	}
	o.trips[it][m]++
	if len(o.states[it][m]) < 3 {
		v, err := liveValuesOf(sp.a.g.Mem, cpu, sp.kernel3.Inner2LiveIns)
		if err != nil {
			return err
		}
		o.states[it][m] = append(o.states[it][m], v)
	}
	return nil
}

// skipped adds n arrivals at the innermost header that the fast engine
// ran, in probed row it at inner arrival innerArrivals.
func (o *innermostObs) skipped(it int, innerArrivals, n uint64) {
	m := int(innerArrivals) - 1
	if it < len(o.trips) && m >= 0 && m < len(o.trips[it]) {
		o.trips[it][m] += n
	}
}

// confirm returns the innermost trip count and steps of k3's
// Inner2LiveIns when every observed instance (at least two inner
// iterations of two rows) ran the same trip count, the same steps, and
// its reloaded registers held what the kernel loads; ok is false
// otherwise. ivs are the profile's induction variables of the innermost
// level: a value that moves must be one.
func (o *innermostObs) confirm(mem *gvinst.Memory, k3 *ptxgen.Kernel, ivs map[string]bool) (trip uint64, steps []uint64, ok bool) {
	trip = o.trips[0][0]
	if trip == 0 {
		return 0, nil, false
	}
	reloaded := reloadIndex(k3.Inner2LiveIns, k3.Reloads, 2)
	steps = make([]uint64, len(k3.Inner2LiveIns))
	known := make([]bool, len(steps))
	seen := 0
	for it := range o.trips {
		for m := range o.trips[it] {
			st := o.states[it][m]
			if o.trips[it][m] == 0 {
				continue // the row has fewer inner iterations, or was not probed
			}
			if o.trips[it][m] != trip || len(st) != int(min(trip, 3)) {
				return 0, nil, false
			}
			seen++
			for a := 1; a < len(st); a++ {
				if checkReloads(mem, k3.Inner2LiveIns, st[a], reloaded, a) != "" {
					return 0, nil, false
				}
			}
			for i := range steps {
				if _, r := reloaded[i]; r || len(st) < 2 {
					continue
				}
				d := st[1][i] - st[0][i]
				if len(st) == 3 && st[2][i]-st[1][i] != d || known[i] && d != steps[i] {
					return 0, nil, false
				}
				steps[i], known[i] = d, true
			}
		}
	}
	if seen < 4 || o.trips[0][1] == 0 || o.trips[1][0] == 0 {
		return 0, nil, false
	}
	for i, l := range k3.Inner2LiveIns {
		if _, r := reloaded[i]; r || l.Stack || l.Slot > gvinst.S15 || !l.Written {
			continue
		}
		if !ivs[l.String()] {
			// Moving or not, a general register the innermost loop
			// carries must be one of its induction variables (an
			// accumulator would make the level sequential).
			return 0, nil, false
		}
	}
	return trip, steps, true
}

// innermostIVs are the profile's induction variables of the level two
// inside the mapped one, by location.
func (sp *spot) innermostIVs() map[string]bool {
	out := map[string]bool{}
	if L := sp.levelIndex + 2; L < len(sp.hs.Levels) {
		for _, iv := range sp.hs.Levels[L].IVs {
			out[iv.Loc.String()] = true
		}
	}
	return out
}

// fits3D reports whether a 3D launch of planes × rows × cols threads
// fits the grid's limits (y and z at most 65535 blocks).
func fits3D(k *ptxgen.Kernel, planes, rows, cols uint64) bool {
	if planes == 0 || rows == 0 || cols == 0 || planes > 1<<31 || rows > 1<<31 || cols > 1<<31 {
		return false
	}
	cfg := k.Plan.Config3D(planes, rows, cols)
	return cfg.Grid.Y <= 65535 && cfg.Grid.Z <= 65535 && uint64(cfg.Grid.X)*uint64(cfg.Block.X)*k.Plan.Run3D(planes, rows, cols) >= cols &&
		uint64(cfg.Grid.Y)*uint64(cfg.Block.Y) >= rows && uint64(cfg.Grid.Z)*uint64(cfg.Block.Z) >= planes
}

// outerStoresFit reports whether a launch of the 2D kernel k over
// footprints sites, whose first and last rows have first and last inner
// iterations (the counts are affine in the row), may run its outer
// body's stores in every thread of a row (ptxgen.Kernel.OuterStores):
// no row without an inner iteration (no thread would store), and the
// stores' footprints apart from every other site's.
func outerStoresFit(k *ptxgen.Kernel, sites []ptxgen.Range, first, last int64) bool {
	if len(k.OuterStores) == 0 {
		return true
	}
	return first >= 1 && last >= 1 && ptxgen.OuterStoresApart(k, sites)
}

// prefer2D reports whether a launch should use the 2D kernel k2 with
// input in though a 3D one exists: on the simulator, whose "SMs" are the
// host's cores, once the 2D grid gives every core a CTA of its own (a
// thread's prologue there costs as much as many innermost iterations,
// which the 2D kernel runs in a loop with its checks hoisted); a real
// GPU needs the 3D kernel's parallelism.
func (a *Accelerator) prefer2D(k2 *ptxgen.Kernel, in ptxgen.LaunchInput) bool {
	if a.opts.Driver == nil || a.opts.Driver.Name() != "sim" {
		return false
	}
	cfg := k2.Plan.Config2D(in.Count, in.InnerMax)
	return uint64(cfg.Grid.X)*uint64(cfg.Grid.Y) >= uint64(runtime.NumCPU())
}
