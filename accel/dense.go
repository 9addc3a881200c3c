package accel

import (
	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptxgen"
)

// denseStores marks the store sites of launch in of kernel k that write
// every byte of their footprint in.Sites (ptxgen.LaunchInput.Dense), so
// that the launch need not copy those bytes in: an initialisation nest
// makes its arrays on the device. obs are the probed iterations' ranges of
// each site. A site is dense when all of these hold, and nothing else is
// assumed:
//   - the profile fitted its address, on every sample, as an affine
//     function of the loop indices, not a stack slot, and it stores;
//   - it sits in the thread's own loop (the mapped level of a 1D kernel,
//     the inner level of a 2D one, or the inner level of a 1D kernel that
//     counts it: ptxgen.Kernel.TripChecked, with the count passed), in a
//     block every iteration of that loop passes through (not under a
//     condition, nor in an inner loop);
//   - its address moves by exactly its size per iteration of that loop
//     so the iterations of one thread row leave no gap; and, for a row
//     of the inner level, every row has the same trip count (the kernel
//     checks it), the probed rows covered that many elements each, and
//     rows are no further apart than a row is wide.
//
// The linear extension of the probed footprints (siteRanges) then is
// exactly the set of bytes the kernel writes.
func (sp *spot) denseStores(k *ptxgen.Kernel, in ptxgen.LaunchInput, byX86 map[[2]uint64]*siteObs) []bool {
	L := sp.levelIndex
	if L < 0 || L >= len(sp.hs.Levels) || (k.TwoD && L+1 >= len(sp.hs.Levels)) {
		return nil
	}
	if k.TwoD && (in.InnerTripStep != 0 || uint64(sp.hs.Levels[L+1].Header) != sp.inner) {
		return nil
	}
	// A 1D kernel's rows of the inner level: counted, of one trip count.
	rows1D := !k.TwoD && k.TripChecked && in.InnerTrip0 != ^uint64(0) && in.InnerTripStep == 0 &&
		L+1 < len(sp.hs.Levels) && uint64(sp.hs.Levels[L+1].Header) == sp.inner
	// The blocks holding a copy of each x86 store (a block that jumps
	// into another may carry its own copy of the other's code).
	copies := map[[2]uint64]map[uint64]bool{}
	for _, site := range k.Sites {
		if site.Store {
			key := siteKey(site)
			if copies[key] == nil {
				copies[key] = map[uint64]bool{}
			}
			copies[key][site.Block] = true
		}
	}
	loops := map[uint64]map[uint64]bool{}
	dense := make([]bool, len(k.Sites))
	any := false
	for s, site := range k.Sites {
		if !site.Store || s >= len(in.Sites) {
			continue
		}
		loopIndex, loopHeader, coeff, rows := sp.hs.Levels[L].Index, sp.header, L, false
		if k.TwoD || rows1D && sp.innerSet[site.Block] {
			loopIndex, loopHeader, coeff, rows = sp.hs.Levels[L+1].Index, sp.inner, L+1, true
		}
		o := byX86[siteKey(site)]
		if o == nil || !o.seen[0] || !o.seen[1] || !sp.affineStore(site, loopIndex, coeff) {
			continue
		}
		size := uint64(site.Size)
		w0, w1 := o.hi[0]-o.lo[0], o.hi[1]-o.lo[1]
		// The step from one row (thread of a 1D kernel) to the next, as
		// the probed iterations show it (the profile's may be another
		// size's).
		row := int64(o.lo[1] - o.lo[0])
		if rows {
			// Rows of InnerTrip0 elements, each as wide as the probed
			// rows (a block that ran once more, or a wider stride, makes
			// them wider), next to each other or overlapping.
			if w0 != w1 || w0 != in.InnerTrip0*size || uint64(max(row, -row)) > w0 {
				continue
			}
		} else if w0 != size || w1 != size || uint64(max(row, -row)) != size {
			// One element per iteration, the next one along.
			continue
		}
		loop := loops[loopHeader]
		if loop == nil {
			loop = sp.loopOf(loopHeader)
			loops[loopHeader] = loop
		}
		if !everyIteration(sp, loop, loopHeader, copies[siteKey(site)]) {
			continue
		}
		dense[s], any = true, true
	}
	if !any {
		return nil
	}
	return dense
}

// countedLoop returns the blocks of the inner level for the level's 1D
// kernel to count (ptxgen.Nest.TripCheck), when the profile saw a store
// there that may prove dense (denseStores): affine, moving by its size per
// inner iteration. Nil otherwise: the kernel then counts nothing.
func (sp *spot) countedLoop() map[uint64]bool {
	L := sp.levelIndex
	if sp.inner == 0 || sp.blocks[sp.inner] == nil || L+1 >= len(sp.hs.Levels) {
		return nil
	}
	idx := sp.hs.Levels[L+1].Index
	candidate := false
	for _, a := range sp.hs.Accesses {
		if a.Kind == "write" && a.Affine && !a.Stack && a.Loop == idx && len(a.Inner) == 0 && L+1 < len(a.Coeffs) &&
			(a.Coeffs[L+1] == int64(a.Size) || a.Coeffs[L+1] == -int64(a.Size)) {
			candidate = true
			break
		}
	}
	if !candidate {
		return nil
	}
	loop := map[uint64]bool{}
	for b := range sp.innerSet {
		if sp.blocks[b] != nil && b != sp.header {
			loop[b] = true
		}
	}
	return loop
}

// countsInner reports whether probing counts the arrivals at the inner
// level's header: for the 2D kernel's rows, or the 1D kernel's counted
// loop.
func (sp *spot) countsInner() bool {
	return sp.inner != 0 && (sp.kernel2 != nil || sp.kernel != nil && sp.kernel.TripChecked)
}

// checkTrips sets the counted loop's trip count of in, a launch of k
// (a 1D kernel) from probed row P on, when every probed row arrived as
// often at the inner header (trips) and a store of the inner level then
// proves dense: the kernel checks every row runs that count. Otherwise it
// turns the check off (all ones), so that a nest whose rows differ still
// launches.
func (sp *spot) checkTrips(in *ptxgen.LaunchInput, k *ptxgen.Kernel, trips [3]uint64, P int, byX86 map[[2]uint64]*siteObs) {
	in.InnerTrip0, in.InnerTripStep = ^uint64(0), 0
	if !k.TripChecked || trips[0] == 0 || sp.tripsDiffer {
		return
	}
	for it := 1; it < P && it < len(trips); it++ {
		if trips[it] != trips[0] {
			return
		}
	}
	try := *in
	try.InnerTrip0 = trips[0]
	dense := sp.denseStores(k, try, byX86)
	for s, d := range dense {
		if d && sp.innerSet[k.Sites[s].Block] {
			in.InnerTrip0 = trips[0]
			return
		}
	}
}

// affineStore reports whether the profile fitted every store access of
// site's x86 instruction as an affine function whose innermost loop is
// the one of index loopIndex (no inner loop on its path), moving by
// exactly the site's size per iteration of it (level coeff).
func (sp *spot) affineStore(site ptxgen.Site, loopIndex string, coeff int) bool {
	found := false
	for _, a := range sp.hs.Accesses {
		if uint64(a.X86) != site.X86 || a.Kind != "write" {
			continue
		}
		if !a.Affine || a.Stack || a.Loop != loopIndex || len(a.Inner) > 0 || coeff >= len(a.Coeffs) || a.Size != site.Size {
			return false
		}
		if c := a.Coeffs[coeff]; c != int64(site.Size) && c != -int64(site.Size) {
			return false
		}
		found = true
	}
	return found
}

// loopOf returns the blocks of the loop of header h: the whole lifted
// level for the level's own header, else the natural loop of h in it.
func (sp *spot) loopOf(h uint64) map[uint64]bool {
	if h != sp.header {
		return sp.loopBlocks(h)
	}
	all := make(map[uint64]bool, len(sp.blocks))
	for a := range sp.blocks {
		all[a] = true
	}
	return all
}

// everyIteration reports whether every iteration of the loop of header h
// (its blocks loop) that comes back to h passes through one of the blocks
// bs (the copies of one x86 instruction): no path from h back to h inside
// the loop avoids them. An iteration that leaves the loop early does not
// come back; the kernel reports it (a thread that leaves its loop but
// through the exit test fails the launch).
func everyIteration(sp *spot, loop map[uint64]bool, h uint64, bs map[uint64]bool) bool {
	if bs[h] {
		return true
	}
	seen := map[uint64]bool{h: true}
	for b := range bs {
		if loop[b] {
			seen[b] = true
		}
	}
	if len(seen) == 1 {
		return false
	}
	work := []uint64{h}
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		blk := sp.blocks[x]
		if blk == nil {
			return false
		}
		for _, s := range blk.Successors() {
			if s == h {
				return false // back at the header without passing b
			}
			if loop[s] && !seen[s] {
				seen[s] = true
				work = append(work, s)
			}
		}
	}
	return true
}

// outerStringStores returns the string stores (REPSTOS: an inlined memset)
// of the level's blocks outside the inner level's (inner), by block and
// index, or nil when there are none.
func (sp *spot) outerStringStores(inner map[uint64]bool) map[[2]uint64]bool {
	var dead map[[2]uint64]bool
	for addr, b := range sp.blocks {
		if inner[addr] {
			continue
		}
		for i := range b.Insts {
			if b.Insts[i].Op == gvinst.OpRepStos {
				if dead == nil {
					dead = map[[2]uint64]bool{}
				}
				dead[[2]uint64{addr, uint64(i)}] = true
			}
		}
	}
	return dead
}

// deadStoresCovered reports whether the string stores the 2D kernel k
// skips (ptxgen.Nest.Dead) write nothing the launch in does not write
// again before anything reads it, so that skipping them leaves memory as
// the CPU would. Each must, in both probed rows, have touched exactly the
// bytes a dense store of the inner level did (denseStores: the kernel
// checks the rows' trip count), so that by the affine extension both
// cover the same bytes in every row, the store after the string store in
// the iteration; and no other site may touch those bytes.
func (sp *spot) deadStoresCovered(k *ptxgen.Kernel, in ptxgen.LaunchInput, byX86 map[[2]uint64]*siteObs) bool {
	dense := sp.denseStores(k, in, byX86)
	if dense == nil {
		return false
	}
	for d, site := range k.Sites {
		b := sp.blocks[site.Block]
		if b == nil || site.Index >= len(b.Insts) || b.Insts[site.Index].Op != gvinst.OpRepStos || sp.innerSet[site.Block] {
			continue
		}
		od := byX86[siteKey(site)]
		if od == nil || !od.seen[0] || !od.seen[1] {
			return false
		}
		cover := [2]uint64{}
		for s, st := range k.Sites {
			os := byX86[siteKey(st)]
			if s != d && dense[s] && os != nil && os.lo == od.lo && os.hi == od.hi {
				cover = siteKey(st)
				break
			}
		}
		if cover == ([2]uint64{}) {
			return false
		}
		for t, st := range k.Sites {
			if t == d || siteKey(st) == cover || siteKey(st) == siteKey(site) {
				continue
			}
			if in.Sites[t].Overlaps(in.Sites[d]) {
				return false
			}
		}
	}
	return true
}

// stringStoresRewritten reports whether each of the outer body's string
// stores (dead, by block and index) writes an array (the profile's
// group) that a store of the inner level writes too, as twomm's memset of
// the row its inner loop then sums into: only then can a launch prove
// them overwritten (deadStoresCovered). One that writes an array the
// inner loop does not (conv2d's memset of its output row, after the
// loop over its input row) would keep the 2D kernel that skips it from
// ever launching; the one whose rows' last threads make the stores
// (ptxgen.Nest.OuterStores) is the 2D kernel then.
func (sp *spot) stringStoresRewritten(dead map[[2]uint64]bool) bool {
	// The accesses of the level itself and of the loops around it name
	// their loop by the level's index; all others are inside the inner
	// level.
	outer := map[string]bool{}
	for l := 0; l <= sp.levelIndex && l < len(sp.hs.Levels); l++ {
		outer[sp.hs.Levels[l].Index] = true
	}
	groups := map[int]bool{}
	for _, acc := range sp.hs.Accesses {
		if acc.Kind == "write" && !outer[acc.Loop] {
			groups[acc.Group] = true
		}
	}
	for d := range dead {
		b := sp.blocks[d[0]]
		if b == nil || int(d[1]) >= len(b.Insts) {
			return false
		}
		found := false
		for _, acc := range sp.hs.Accesses {
			if acc.Kind == "write" && uint64(acc.X86) == b.Insts[d[1]].X86 {
				found = true
				if !groups[acc.Group] {
					return false
				}
			}
		}
		if !found {
			return false
		}
	}
	return true
}
