package accel

import (
	"fmt"
	"maps"
	"math/big"
	"slices"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptxgen"
)

// The fallback reasons, as the report counts them.
const (
	ReasonTripCount  = "trip count too small"
	ReasonNotAffine  = "live-in value not affine"
	ReasonExitTest   = "exit test not evaluable"
	ReasonFootprint  = "footprint not evaluable"
	ReasonUnmapped   = "footprint outside mapped memory"
	ReasonAliasing   = "written footprint overlaps another array"
	ReasonStackAlias = "stack slot inside an array footprint"
	ReasonWrap       = "induction variable would wrap"
	ReasonDependence = "iterations observed dependent"
	// ReasonNotProfitable: the cost model predicts the launch would cost
	// more than the CPU engine takes.
	ReasonNotProfitable = "not profitable"
	// ReasonLoading: the kernel's module is still being loaded (the
	// CUDA JIT), and the CPU engine runs the instance in less time than
	// the load has left (spot.loadWait).
	ReasonLoading     = "kernel still loading"
	ReasonRounding    = "MXCSR rounding is not to nearest"
	ReasonDirection   = "direction flag set"
	ReasonKernel      = "kernel reported an error"
	ReasonDriver      = "driver error"
	ReasonProbeStop   = "probing stopped outside the loop"
	ReasonNotOffload  = "nest not offloadable"
	ReasonUnsupported = "no kernel"
)

// fallback is a failed guard: its reason, and a detail for the report.
type fallback struct {
	reason, detail string
	// timing is set when the instance ended while timePlain timed the
	// plain engine on it: an instance run on the CPU to measure it, not
	// one too short to offload.
	timing bool
}

// Error is the reason and its detail.
func (f *fallback) Error() string { return f.reason + ": " + f.detail }

func fail(reason, format string, args ...any) *fallback {
	return &fallback{reason: reason, detail: fmt.Sprintf(format, args...)}
}

// group is the profile's array of a site.
func (sp *spot) group(s ptxgen.Site) (int, bool) {
	kind := uint64(0)
	if s.Store {
		kind = 1
	}
	g, ok := sp.groupOf[[2]uint64{s.X86, kind}]
	return g, ok
}

// guards checks the footprints against the guest's memory map, the
// profile's arrays and the private stack slots.
func (sp *spot) guards(cpu *gvinst.CPU, sites []ptxgen.Range) *fallback {
	k := sp.kernel
	mem := sp.a.g.Mem
	for _, g := range ptxgen.Groups(k, sites) {
		if !mem.IsMapped(g.Range.Lo, g.Range.Hi-g.Range.Lo) {
			return fail(ReasonUnmapped, "[%#x,%#x)", g.Range.Lo, g.Range.Hi)
		}
		if g.Written && !mem.HasPerm(g.Range.Lo, g.Range.Hi-g.Range.Lo, gvinst.PermWrite) {
			return fail(ReasonUnmapped, "[%#x,%#x) is not all writable", g.Range.Lo, g.Range.Hi)
		}
	}
	// Sites the profile put in different arrays must not overlap where
	// one of them writes.
	group := sp.group
	for i, si := range k.Sites {
		gi, ok := group(si)
		if !ok {
			continue
		}
		for j := i + 1; j < len(k.Sites); j++ {
			sj := k.Sites[j]
			if !si.Store && !sj.Store {
				continue
			}
			gj, ok := group(sj)
			if ok && gi != gj && sites[i].Overlaps(sites[j]) {
				return fail(ReasonAliasing, "sites at %#x and %#x", si.X86, sj.X86)
			}
		}
	}
	slot := func(l ptxgen.LiveIn) ptxgen.Range {
		lo := cpu.State[l.Base] + uint64(l.Disp)
		return ptxgen.Range{Lo: lo, Hi: lo + uint64(l.Size)}
	}
	for j, l := range k.Private {
		at := slot(l)
		for i, s := range sites {
			if s.Overlaps(at) {
				return fail(ReasonStackAlias, "%s and the site at %#x", l, k.Sites[i].X86)
			}
		}
		for _, m := range k.Private[j+1:] {
			if m.Base != l.Base && slot(m).Overlaps(at) {
				return fail(ReasonStackAlias, "%s and %s are the same memory", l, m)
			}
		}
	}
	return nil
}

// (all its copies): whether it ran, and the bytes it touched.
type siteObs struct {
	seen   [2]bool
	lo, hi [2]uint64
}

// coverConditionalSites widens the footprint of each site seen in both
// probed iterations whose lowest and highest bytes moved by different
// steps, but which stayed inside the window of a site of the same array
// that moved as a whole both times, to take in that site's footprint too.
// Such a site is conditional (a store on one side of an if: ifsides.c),
// and its own steps say only which elements took that side in the two
// probed iterations (its window grew by 8 bytes, moving 392 bytes a row
// for 400), so extrapolating them alone left the rows further on with
// elements outside its footprint, and the kernel failed on them. The
// covering site's footprint is what the profile's affine model of the
// access gives (it fits both to one function).
func (sp *spot) coverConditionalSites(byX86 map[[2]uint64]*siteObs, sites []ptxgen.Range, seen []bool) {
	k := sp.kernel
	for s := range sites {
		o := byX86[siteKey(k.Sites[s])]
		if !seen[s] || o.lo[1]-o.lo[0] == o.hi[1]-o.hi[0] {
			continue
		}
		g, ok := sp.group(k.Sites[s])
		for c := 0; c < len(sites) && ok; c++ {
			oc := byX86[siteKey(k.Sites[c])]
			if gc, okc := sp.group(k.Sites[c]); c == s || !seen[c] || !okc || gc != g {
				continue
			}
			step := oc.lo[1] - oc.lo[0]
			if step == 0 || oc.hi[1]-oc.hi[0] != step {
				continue
			}
			if oc.lo[0] <= o.lo[0] && o.hi[0] <= oc.hi[0] && oc.lo[1] <= o.lo[1] && o.hi[1] <= oc.hi[1] {
				sites[s].Lo, sites[s].Hi = min(sites[s].Lo, sites[c].Lo), max(sites[s].Hi, sites[c].Hi)
			}
		}
	}
}

// coverConditionalUnions widens, as coverConditionalSites does, the
// footprint of each site seen in both probed iterations that did not move
// by its array's step, when its array's window (all the sites the profile
// groups with it that ran, in each probed iteration) moved as a whole: a
// store on each side of an if into an array the loop does not read
// (fcond's b[i][j]), each side writing the elements the other skipped, so
// that together they wrote the row. That window, extended linearly over
// the arrivals from..to, is what the profile's affine model of the stores
// gives (it fits both to one function); their own steps say only which
// elements took each side in the probed iterations (9,584 bytes a row for
// 9,600, or a window that grew), and extrapolated alone left rows further
// on with elements outside the footprints (the kernel failed on them). A
// site that ran in one probed iteration only joins that iteration's window
// (a probed row that recorded only a prefix of its inner loop may have
// seen one side of the if only).
func (sp *spot) coverConditionalUnions(byX86 map[[2]uint64]*siteObs, sites []ptxgen.Range, seen []bool, from, to uint64) {
	k := sp.kernel
	widened := make([]ptxgen.Range, len(sites))
	for s := range sites {
		widened[s] = sites[s]
		o := byX86[siteKey(k.Sites[s])]
		g, ok := sp.group(k.Sites[s])
		if !ok || !seen[s] || o.lo[1] == o.lo[0] && o.hi[1] == o.hi[0] {
			// A site that read the same bytes in both iterations (threemm's
			// row of the left matrix, under the j loop) is not conditional:
			// fixedReadsApart checks it where it is. Widened to its array's
			// moving window, it overlapped the product's writes, and the
			// product ran on the CPU.
			continue
		}
		lo, hi := o.lo, o.hi
		members := 0
		for c := range sites {
			oc := byX86[siteKey(k.Sites[c])]
			if gc, okc := sp.group(k.Sites[c]); c == s || !okc || gc != g || oc == nil {
				continue
			}
			for it := range lo {
				if oc.seen[it] {
					lo[it], hi[it] = min(lo[it], oc.lo[it]), max(hi[it], oc.hi[it])
				}
			}
			members++
		}
		step := int64(lo[1] - lo[0])
		if members == 0 || step == 0 || int64(hi[1]-hi[0]) != step ||
			int64(o.lo[1]-o.lo[0]) == step && int64(o.hi[1]-o.hi[0]) == step {
			continue
		}
		first, last := int64(from), int64(to)
		loA, loB := int64(lo[0])+step*first, int64(lo[0])+step*last
		hiA, hiB := int64(hi[0])+step*first, int64(hi[0])+step*last
		if min(loA, loB) < 0 {
			continue
		}
		widened[s].Lo = min(widened[s].Lo, uint64(min(loA, loB)))
		widened[s].Hi = max(widened[s].Hi, uint64(max(hiA, hiB)))
	}
	copy(sites, widened)
}

// disjointIterations proves, from what the probed iterations touched, that
// distinct iterations of the mapped level, n of them from the first probed,
// touch disjoint bytes of every array they write. Each site's lowest and
// highest byte move linearly (by what the two probed iterations show), so
// the array's window in iteration t lies in [L+a·t, H+b·t), L and H the
// lowest and highest of iteration 0, a the least step of a lowest byte and
// b the greatest of a highest (a triangle's rows: the window grows or
// shrinks by an element a row). With a > 0 the windows of t < t' meet
// nowhere when H+b·t ≤ L+a·t', which holds for every such pair below n
// when H-L + max(0, b-a)·(n-2) ≤ a; a < 0 is the same on negated
// addresses. It returns "" when that holds, or what failed. Arrays are
// the sites whose footprints over the instance meet (instanceArrays).
//
// A load that reads the same bytes in every iteration (LU's pivot row
// A[k][j] under the i loop) is left out of its array's window: fixed
// lists those loads, and fixedReadsApart must then find each of them
// apart from everything the instance writes to its array.
func (sp *spot) disjointIterations(byX86 map[[2]uint64]*siteObs, n uint64) (why string, fixed []int) {
	type window struct {
		written bool
		set     bool
		a, b    int64  // least step of a lowest byte, greatest of a highest
		lo, hi  uint64 // iteration 0's
		bad     string
	}
	ks := sp.kernel.Sites
	obs := make([]*siteObs, len(ks))
	used := make([]bool, len(ks))
	for i, site := range ks {
		if !sp.rowsIndependent(site) {
			continue // only an interchanged kernel runs it: rows in order
		}
		used[i] = true
		if o := byX86[siteKey(site)]; o != nil && o.seen[0] && o.seen[1] {
			obs[i] = o
			if o.lo[1] == o.lo[0] && o.hi[1] == o.hi[0] && !site.Store {
				fixed = append(fixed, i)
				used[i] = false
			}
		}
	}
	comp := sp.instanceArrays(used, obs, n)
	arrays := map[int]*window{}
	for i, site := range ks {
		if !used[i] {
			continue
		}
		w := arrays[comp[i]]
		if w == nil {
			w = &window{}
			arrays[comp[i]] = w
		}
		w.written = w.written || site.Store
		o := obs[i]
		if o == nil && neverRan(byX86[siteKey(site)]) {
			// Ran in neither probed iteration (a vector loop's scalar
			// tail, at a size whose rows have none): the launch gives
			// it an empty footprint (unseenSites), so that a thread
			// that runs it fails the launch.
			continue
		}
		if o == nil {
			w.bad = fmt.Sprintf("the access at %#x did not run in both probed iterations", site.X86)
			continue
		}
		a, b := int64(o.lo[1]-o.lo[0]), int64(o.hi[1]-o.hi[0])
		if w.set && (a > 0) != (w.a > 0) {
			w.bad = fmt.Sprintf("the accesses to one array move in opposite directions (%#x at %#x)", a, site.X86)
			continue
		}
		if !w.set {
			w.a, w.b, w.lo, w.hi, w.set = a, b, o.lo[0], o.hi[0], true
		}
		w.a, w.b = min(w.a, a), max(w.b, b)
		w.lo, w.hi = min(w.lo, o.lo[0]), max(w.hi, o.hi[0])
	}
	for _, g := range slices.Sorted(maps.Keys(arrays)) {
		w := arrays[g]
		if !w.written {
			continue
		}
		if w.bad != "" {
			return w.bad, nil
		}
		if !w.set {
			continue // none of its sites ran: all have empty footprints
		}
		a, b := w.a, w.b
		if a <= 0 {
			a, b = -b, -a // on negated addresses
		}
		width := new(big.Int).SetUint64(w.hi - w.lo)
		if grow := b - a; grow > 0 && n > 2 {
			width.Add(width, new(big.Int).Mul(big.NewInt(grow), new(big.Int).SetUint64(n-2)))
		}
		if a <= 0 || width.Cmp(big.NewInt(a)) > 0 {
			return fmt.Sprintf("a written array's window of %d bytes per iteration (moving by %d to %d) overlaps the next over %d iterations", w.hi-w.lo, w.a, w.b, n), nil
		}
	}
	return "", fixed
}

// instanceArrays groups the used sites of the spot's kernel into the
// arrays disjointIterations checks, returning each site's group: sites
// whose bytes over the instance's n iterations meet (each site's lowest
// and highest byte moving linearly from obs, as the footprint guards and
// the kernel's own checks hold them) are one array. The profile's groups
// are unions over every entry it saw: threemm's product, called for
// E = A·B and then G = E·F, has one group for the rows it reads of its
// first operand and writes of its result, whose windows together span
// two matrices, so that no row looked apart from the next. A site that did
// not run in both probed iterations (obs nil) has no footprint: it joins
// the sites of its profile group.
func (sp *spot) instanceArrays(used []bool, obs []*siteObs, n uint64) []int {
	ks := sp.kernel.Sites
	parent := make([]int, len(ks))
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
	union := func(i, j int) { parent[find(i)] = find(j) }
	// span is site i's bytes over the instance; whole when the steps
	// could carry it past the address space.
	span := func(i int) (lo, hi uint64) {
		o := obs[i]
		lo, hi = o.lo[0], o.hi[0]
		if n < 2 {
			return lo, hi
		}
		a, b := int64(o.lo[1]-o.lo[0]), int64(o.hi[1]-o.hi[0])
		if n > 1<<31 || max(a, -a) > 1<<31 || max(b, -b) > 1<<31 {
			return 0, ^uint64(0)
		}
		m := int64(n - 1)
		lo1, hi1 := int64(lo)+a*m, int64(hi)+b*m
		if int64(lo) < 0 || int64(hi) < 0 || lo1 < 0 || hi1 < 0 {
			return 0, ^uint64(0)
		}
		return min(lo, uint64(lo1)), max(hi, uint64(hi1))
	}
	type rng struct{ lo, hi uint64 }
	spans := make([]rng, len(ks))
	for i := range ks {
		if used[i] && obs[i] != nil {
			spans[i].lo, spans[i].hi = span(i)
		}
	}
	for i := range ks {
		if !used[i] {
			continue
		}
		gi, oki := sp.group(ks[i])
		for j := i + 1; j < len(ks); j++ {
			if !used[j] {
				continue
			}
			if obs[i] != nil && obs[j] != nil {
				if spans[i].lo < spans[j].hi && spans[j].lo < spans[i].hi {
					union(i, j)
				}
				continue
			}
			if gj, okj := sp.group(ks[j]); oki && okj && gi == gj {
				union(i, j)
			}
		}
	}
	comp := make([]int, len(ks))
	for i := range ks {
		comp[i] = find(i)
	}
	return comp
}

// neverRan reports whether a site's observations o show it in neither
// probed iteration.
func neverRan(o *siteObs) bool { return o == nil || !o.seen[0] && !o.seen[1] }

// unseenSites gives each site of the spot's kernel that ran in neither
// probed iteration an empty footprint in sites: where the profile's
// strides do not hold, the proof that the iterations are independent
// (disjointIterations) knows nothing of such a site, so a thread that
// runs it must fail the launch (the CPU then runs the instance), rather
// than write inside its array's footprint where another iteration may
// read.
func (sp *spot) unseenSites(byX86 map[[2]uint64]*siteObs, sites []ptxgen.Range) {
	for s, site := range sp.kernel.Sites {
		if s < len(sites) && neverRan(byX86[siteKey(site)]) {
			sites[s] = ptxgen.Range{}
		}
	}
}

// disjointObserved is the second proof that the n iterations of the mapped
// level are independent when the profile's strides do not hold (after
// disjointIterations, whose windows cannot tell a row from a column that
// crosses it): every access of the kernel ran in both probed iterations,
// and no two iterations touch a byte one of them writes, by the spans and
// lattices they touched (observedDependence). It returns "" when that
// holds, or what failed. A kernel over a level that carries a dependence
// (parts run in order) gets no second proof.
func (sp *spot) disjointObserved(ts []*accessTrace, n uint64) string {
	if sp.levelCarried() {
		return "the level carries a dependence"
	}
	for _, t := range ts {
		if !t.it[0].seen || !t.it[1].seen {
			return fmt.Sprintf("the access at %#x did not run in both probed iterations", t.x86)
		}
	}
	return observedDependence(ts, n)
}

// fixedReadsApart checks that each load of fixed (sites of the spot's
// kernel that read the same bytes in every iteration, see
// disjointIterations) reads nothing any store writes in the instance,
// whose footprints are sites: it returns what it found otherwise.
func (sp *spot) fixedReadsApart(fixed []int, sites []ptxgen.Range) string {
	ks := sp.kernel.Sites
	for _, f := range fixed {
		for w, site := range ks {
			if !site.Store {
				continue
			}
			if sites[f].Overlaps(sites[w]) {
				return fmt.Sprintf("the load at %#x reads the same bytes in every iteration, and the store at %#x writes some of them", ks[f].X86, site.X86)
			}
		}
	}
	return ""
}
