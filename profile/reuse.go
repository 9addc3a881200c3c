package profile

import (
	"reflect"
	"slices"

	"github.com/gxbit/gxbit/gvinst"
)

// Analyses kept between Finishes (RATIONALE).
//
// gxbit run --accelerate profiles in rounds, and each round ends with a
// Finish over every nest the collector has seen, the guest stopped
// meanwhile; a nest that did not run in the round (one a first round
// sampled, when a later one samples the next nest of the program) has
// the same data as at the last Finish and got the same analysis again:
// on the H100 host at the nests' large sizes, the later rounds of lu,
// correlation and covariance redid nearly half of their 0.08-0.15 s of
// analysis so (their first Finish is nearly all the dependence test,
// polyhedral.Analyze). So Finish keeps each nest's analysis
// (nestAnalysis) and uses it again while nothing it was made from has
// changed:
//
//   - the nest's recorded data, which the collector counts in
//     nestState.changes at every change (a sample, a snapshot, a trip
//     count, a partial iteration, an access site, an instruction first
//     translated, the rejection);
//   - the trip counts provisionalTrips gives the loops still running, read
//     from the counters at each Finish;
//   - the page permissions constReload reads of the guest's memory.
//
// What the rest of the run changes is worked out again at every Finish:
// the nest's share of the run (from the position samples), and the
// VBlocks' text (lifted from guest memory as it is now). The static CFG
// and the liveness of the nest's function do not change once the nest is
// known. The kept analysis is a deep copy, and each Finish hands out a
// deep copy of it, so that no profile shares memory with another, as with
// a new analysis.

// nestAnalysis is a nest's analysis at the last Finish, with what it was
// made from.
type nestAnalysis struct {
	changes     uint64            // the nest's changes counter then
	provisional []provisionalTrip // the trip counts provisionalTrips gave its loops then
	pages       []pageRead        // the page permissions the analysis read
	chains      []analysedChain   // by root loop index; shares not set
}

// analysedChain is the analysis of the chain rooted at one loop of a
// nest: its summary, and its hot spot (nil when it is none).
type analysedChain struct {
	sum *LoopSummary
	hs  *HotSpot
}

// pageRead is one answer of the guest memory's PermAt.
type pageRead struct {
	addr uint64
	perm gvinst.Perm
	ok   bool
}

// permAt is the guest memory's PermAt, noted in ch.pages: a page that
// changes its permissions changes the analysis of a nest whose data did
// not.
func (ch *chain) permAt(a uint64) (gvinst.Perm, bool) {
	p, ok := ch.c.mem.PermAt(a)
	if ch.pages != nil {
		*ch.pages = append(*ch.pages, pageRead{a, p, ok})
	}
	return p, ok
}

// analyseNest returns the analysis of the chains of nest ni, by root loop
// index, given the trip counts provisionalTrips gave its loops. With
// reuse, that is the kept one while it holds, else a new one, which it
// keeps; without, a new one, and the kept one stays as it is. The shares
// of the run are left for Finish.
func (c *Collector) analyseNest(memo *analysisMemo, ni int, given []provisionalTrip, reuse bool) []analysedChain {
	n := c.nests[ni]
	for len(c.analysed) <= ni {
		c.analysed = append(c.analysed, nil)
	}
	if a := c.analysed[ni]; reuse && a != nil && a.changes == n.changes && sameTrips(a.provisional, given) && c.samePages(a.pages) {
		c.reused++
		out := copyChains(a.chains)
		for r, ac := range out {
			if ac.hs != nil {
				ac.hs.Blocks = c.blockTexts(memo, n.loops[r].loop)
			}
		}
		return out
	}
	var pages []pageRead
	out := make([]analysedChain, len(n.loops))
	rooted := map[uint64]*HotSpot{} // the hot spot rooted at each loop, by header
	var inNest []*HotSpot
	for r := range n.loops {
		sum, hs := c.analyzeChain(memo, ni, r, &pages)
		out[r] = analysedChain{sum, hs}
		if hs != nil {
			rooted[uint64(hs.Entry)] = hs
			inNest = append(inNest, hs)
		}
	}
	for _, hs := range inNest {
		innerFromRoots(hs, rooted)
	}
	if reuse {
		kept := copyChains(out)
		for _, ac := range kept {
			if ac.hs != nil {
				ac.hs.innerScalar = nil // innerFromRoots is done with it
			}
		}
		c.analysed[ni] = &nestAnalysis{changes: n.changes, provisional: given, pages: pages, chains: kept}
	}
	return out
}

// samePages reports whether the guest's memory gives every page
// permission in pages as it did.
func (c *Collector) samePages(pages []pageRead) bool {
	return !slices.ContainsFunc(pages, func(r pageRead) bool {
		p, ok := c.mem.PermAt(r.addr)
		return p != r.perm || ok != r.ok
	})
}

// copyChains deep-copies analysed chains (deepCopy).
func copyChains(in []analysedChain) []analysedChain {
	out := make([]analysedChain, len(in))
	for i, ac := range in {
		out[i].sum = deepCopy(ac.sum)
		if ac.hs != nil {
			out[i].hs = deepCopy(ac.hs)
		}
	}
	return out
}

// deepCopy returns a copy of *p that shares no memory with it: every
// pointer, slice and map reachable through exported fields is copied.
// Unexported fields are copied as they are.
func deepCopy[T any](p *T) *T {
	out := new(T)
	copyValue(reflect.ValueOf(out).Elem(), reflect.ValueOf(p).Elem())
	return out
}

// copyValue sets dst, a settable zero value, to a deep copy of src. A nil
// pointer, slice or map stays nil, an empty slice empty: the profile
// written is the same byte for byte.
func copyValue(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if !src.IsNil() {
			dst.Set(reflect.New(src.Type().Elem()))
			copyValue(dst.Elem(), src.Elem())
		}
	case reflect.Slice:
		if !src.IsNil() {
			dst.Set(reflect.MakeSlice(src.Type(), src.Len(), src.Len()))
			for i := range src.Len() {
				copyValue(dst.Index(i), src.Index(i))
			}
		}
	case reflect.Array:
		for i := range src.Len() {
			copyValue(dst.Index(i), src.Index(i))
		}
	case reflect.Map:
		if !src.IsNil() {
			dst.Set(reflect.MakeMapWithSize(src.Type(), src.Len()))
			for it := src.MapRange(); it.Next(); {
				k := reflect.New(src.Type().Key()).Elem()
				copyValue(k, it.Key())
				v := reflect.New(src.Type().Elem()).Elem()
				copyValue(v, it.Value())
				dst.SetMapIndex(k, v)
			}
		}
	case reflect.Struct:
		dst.Set(src)
		for i := range src.NumField() {
			if src.Type().Field(i).IsExported() {
				dst.Field(i).SetZero()
				copyValue(dst.Field(i), src.Field(i))
			}
		}
	case reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		panic("profile: deepCopy of a " + src.Kind().String())
	default:
		dst.Set(src)
	}
}
