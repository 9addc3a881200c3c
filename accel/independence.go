package accel

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/gxbit/gxbit/polyhedral"
	"github.com/gxbit/gxbit/ptxgen"
)

// Checking the profile's claim of independence (RATIONALE).
//
// A profile is input: it may come from another run, another version of
// phase 1, or a hand edit, and a level it marks parallel may not be. So
// before every launch phase 2 checks the claim against what the probed
// iterations did, with no help from the profile's arrays or access
// functions. Each access of the level records the bytes it touched in
// each probed iteration, as a short list of spans. An access whose spans
// in iteration 1 are those of iteration 0 moved by d bytes is taken to
// touch its iteration-0 bytes moved by d·t in iteration t (its affine
// model; the footprint guards and the kernel's own bounds checks hold it
// to that). Then a write w and any access s (a read, another write, or w
// itself) conflict when some span a of w and some span b of s meet
// across m ≠ 0 iterations, |m| < the number launched:
// a.Lo − b.Hi < d·m < a.Hi − b.Lo. Accesses that do not move as a whole
// (a triangular inner loop), or that move by different strides, are
// checked on their whole windows instead: the window of one iteration must
// end before the other's window of the next begins, in the direction they
// move. A truly sequential loop (a prefix sum, Gauss-Seidel) reads in
// iteration t+1 what it wrote in iteration t, and is refused with
// ReasonDependence.
//
// Only what ran in both probed iterations is checked: an access that ran
// in one of them only (conditional code) is left to the profile's proof.
// A probed iteration records only the first iterations of each loop
// inside it; the spans of the rest are the recorded ones extended along
// their steps (bounded.go says what such a prefix can and cannot show).

// maxSpans is how many separate spans an access may record in one
// iteration; past it the access keeps only its window.
const maxSpans = 512

// spanList is the bytes one access touched in one probed iteration: the
// spans in the order first touched, adjacent touches merged, and the
// window (hull) of them all.
type spanList struct {
	spans    []ptxgen.Range
	window   ptxgen.Range
	seen     bool
	overflow bool // more than maxSpans spans: only window counts
	fill     bool // a rep stos: its two probes are the ends of one span
	// lat, when set, is exactly what the list holds: one lattice of spans
	// (a column walked by an inner loop), kept whether or not the spans
	// overflowed. Anything added after it clears it.
	lat *lattice
}

// lattice is the spans lo + stride·u + [0, width) for u < count: what an
// access that moves by stride in each iteration of an inner loop touches
// (a column, one element a row), or, with stride = width, one span of
// count elements.
type lattice struct {
	lo     uint64
	width  uint64
	stride int64
	count  uint64
}

func (l *spanList) add(lo, hi uint64) {
	l.lat = nil
	if !l.seen {
		l.seen = true
		l.window = ptxgen.Range{Lo: lo, Hi: hi}
	}
	l.window.Lo, l.window.Hi = min(l.window.Lo, lo), max(l.window.Hi, hi)
	if l.fill {
		l.spans = append(l.spans[:0], l.window)
		return
	}
	if l.overflow {
		return
	}
	if n := len(l.spans); n > 0 {
		last := &l.spans[n-1]
		if lo <= last.Hi && hi >= last.Lo {
			last.Lo, last.Hi = min(last.Lo, lo), max(last.Hi, hi)
			return
		}
	}
	if len(l.spans) == maxSpans {
		l.overflow, l.spans = true, nil
		return
	}
	l.spans = append(l.spans, ptxgen.Range{Lo: lo, Hi: hi})
}

// addWindow adds bytes [lo, hi) known only as a window: the list keeps
// its window only from then on (a rep stos keeps it as its one span).
func (l *spanList) addWindow(lo, hi uint64) {
	l.add(lo, hi)
	if l.fill {
		return
	}
	l.overflow, l.spans = true, nil
}

// merge adds what src touched.
func (l *spanList) merge(src *spanList) {
	switch {
	case !src.seen:
	case src.overflow:
		l.addWindow(src.window.Lo, src.window.Hi)
	default:
		for _, r := range src.spans {
			l.add(r.Lo, r.Hi)
		}
	}
}

// accessTrace is what the probed iterations 0 and 1 saw of one x86 access
// (all its lifted copies).
type accessTrace struct {
	x86   uint64
	store bool
	size  uint64 // bytes per access
	it    [2]spanList
}

// shape is the lattice of what the access touched in probed iteration it:
// the list's own, or its spans when they are evenly spaced and of one
// width, or one span of whole elements; false when there is none.
func (t *accessTrace) shape(it int) (lattice, bool) {
	l := &t.it[it]
	switch {
	case l.lat != nil:
		return *l.lat, true
	case !l.seen || l.overflow || len(l.spans) == 0:
		return lattice{}, false
	case len(l.spans) == 1:
		r := l.spans[0]
		if t.size == 0 || (r.Hi-r.Lo)%t.size != 0 {
			return lattice{}, false
		}
		return lattice{lo: r.Lo, width: t.size, stride: int64(t.size), count: (r.Hi - r.Lo) / t.size}, true
	}
	w, d := l.spans[0].Hi-l.spans[0].Lo, l.spans[1].Lo-l.spans[0].Lo
	for i, r := range l.spans {
		if r.Hi-r.Lo != w || r.Lo-l.spans[0].Lo != d*uint64(i) {
			return lattice{}, false
		}
	}
	return lattice{lo: l.spans[0].Lo, width: w, stride: int64(d), count: uint64(len(l.spans))}, true
}

// family is how an access's lattice changes with the iteration t of the
// mapped level: lo + move·t + stride·u + [0, width) for u < count +
// grow·t, from its shapes in probed iterations 0 and 1.
type family struct {
	lo, count    int64
	move, grow   int64
	stride, size int64
}

// familyOf fits t's family, false when its shapes do not make one: none,
// or of different widths or strides.
func familyOf(t *accessTrace) (family, bool) {
	a, ok0 := t.shape(0)
	b, ok1 := t.shape(1)
	if !ok0 || !ok1 || a.width != b.width || a.lo > math.MaxInt64 || b.lo > math.MaxInt64 ||
		a.count > math.MaxInt32 || b.count > math.MaxInt32 {
		return family{}, false
	}
	stride := a.stride
	switch {
	case a.count == 1:
		stride = b.stride
	case b.count > 1 && b.stride != a.stride:
		return family{}, false
	}
	return family{lo: int64(a.lo), count: int64(a.count), move: int64(b.lo) - int64(a.lo), grow: int64(b.count) - int64(a.count), stride: stride, size: int64(a.width)}, true
}

// latticeConflict decides exactly, on the families of w and s, whether
// two of n iterations of the mapped level touch a common byte: "" when
// none do, what met when some do; ok is false when either access has no
// family or the exact test could not decide. It sees what windows cannot
// (covariance's cov[i][j] and cov[j][i]: row i and column i meet only in
// iteration i, though every column's window spans the rows below it).
func latticeConflict(w, s *accessTrace, n uint64) (why string, ok bool) {
	fw, okw := familyOf(w)
	fs, oks := familyOf(s)
	if !okw || !oks || n > math.MaxInt32 {
		return "", false
	}
	inner := func(name string, f family) polyhedral.Level {
		return polyhedral.Level{Index: name, Lower: polyhedral.Const(0), Upper: polyhedral.NewExpr(f.count-1, polyhedral.Term{Var: "t", Coef: f.grow})}
	}
	access := func(name string, f family, tr *accessTrace) polyhedral.Access {
		kind := polyhedral.Read
		if tr.store {
			kind = polyhedral.Write
		}
		return polyhedral.Access{Site: fmt.Sprintf("%#x", tr.x86), Base: polyhedral.Const(0), Size: f.size, Kind: kind, Loops: []string{"t", name},
			Offset: polyhedral.NewExpr(f.lo, polyhedral.Term{Var: "t", Coef: f.move}, polyhedral.Term{Var: name, Coef: f.stride})}
	}
	d := polyhedral.Domain{Levels: []polyhedral.Level{{Index: "t", Lower: polyhedral.Const(0), Upper: polyhedral.Const(int64(n) - 1)}, inner("uw", fw)}}
	aw := access("uw", fw, w)
	as := access("uw", fs, s)
	if s != w {
		d.Levels = append(d.Levels, inner("us", fs))
		as = access("us", fs, s)
	}
	wit, err := polyhedral.Depends(d, aw, as, 0, polyhedral.Options{})
	switch {
	case err != nil:
		return "", false
	case wit != nil:
		return fmt.Sprintf("lattices meet at iterations %d and %d", wit.A[0], wit.B[0]), true
	}
	return "", true
}

// shift is how far the access's spans moved from iteration 0 to 1, and
// whether they all moved by that (false for a triangular window, a span
// list that overflowed, or one that changed shape).
func (t *accessTrace) shift() (int64, bool) {
	a, b := &t.it[0], &t.it[1]
	if a.overflow || b.overflow || len(a.spans) != len(b.spans) || len(a.spans) == 0 {
		return 0, false
	}
	d := b.spans[0].Lo - a.spans[0].Lo
	for i := range a.spans {
		if b.spans[i].Lo-a.spans[i].Lo != d || b.spans[i].Hi-a.spans[i].Hi != d {
			return 0, false
		}
	}
	return int64(d), true
}

// observedDependence returns, when the traces show two of n iterations of
// the mapped level touching the same bytes with one of them writing, what
// they touched; "" when they show none.
func observedDependence(traces []*accessTrace, n uint64) string {
	if n < 2 {
		return ""
	}
	covered := coverConditional(traces)
	for wi, w := range traces {
		if !w.store || !w.it[0].seen || !w.it[1].seen {
			continue
		}
		for si, s := range traces {
			if !s.it[0].seen || !s.it[1].seen {
				continue
			}
			why := conflict(w, s, n)
			if why != "" && (covered[wi] != w || covered[si] != s) {
				// A conditional access: its own windows' steps are an
				// accident; what the covering access's windows say
				// decides (coverConditional).
				why = conflict(covered[wi], covered[si], n)
			}
			if why != "" {
				kind := "read"
				if s.store {
					kind = "write"
				}
				if s == w {
					return fmt.Sprintf("the write at %#x touches in one iteration bytes it writes in another (%s)", w.x86, why)
				}
				return fmt.Sprintf("the write at %#x and the %s at %#x touch the same bytes in different iterations (%s)", w.x86, kind, s.x86, why)
			}
		}
	}
	return ""
}

// coverConditional returns traces with each access that does not move as
// a whole but, in both probed iterations, stayed inside the window of one
// that does (a store on one side of an if, which wrote a scattered part of
// the row the loop's read walks whole: ifsides.c) replaced by that window,
// moving with it. Its own windows move by a stride that is an accident of
// which elements took that side (392 bytes a row for 400), and windows
// moving by different strides meet some iterations away. The covering
// window is what an affine model of the access says (the profile fits
// both to one function), and, holding every byte the access touched in
// the probed iterations, more than it: observedDependence asks it only
// where the access's own windows show a conflict (a triangular row inside
// a whole row's read is exact on its own, and its covering row would meet
// the columns that covariance writes beside it).
//
// With no such access, the accesses that do not move as a whole either
// may together (a store on each side of an if into an array the loop does
// not read: fcond's b[i][j], each side writing the elements the other
// skips): their union, when it moves as a whole, covers each of them.
func coverConditional(traces []*accessTrace) []*accessTrace {
	var out []*accessTrace
	for i, t := range traces {
		if _, ok := t.shift(); ok || !t.it[0].seen || !t.it[1].seen {
			continue
		}
		c := coveringAccess(traces, t)
		if c == nil {
			c = coveringUnion(traces, t)
		}
		if c == nil {
			continue
		}
		if out == nil {
			out = slices.Clone(traces)
		}
		hull := &accessTrace{x86: t.x86, store: t.store, size: t.size}
		for it := range hull.it {
			w := c.it[it].window
			hull.it[it] = spanList{spans: []ptxgen.Range{w}, window: w, seen: true}
		}
		out[i] = hull
	}
	if out == nil {
		return traces
	}
	return out
}

// coveringAccess returns an access of traces that moves as a whole and
// whose windows hold t's in both probed iterations, or nil.
func coveringAccess(traces []*accessTrace, t *accessTrace) *accessTrace {
	for _, c := range traces {
		if c == t || !c.it[0].seen || !c.it[1].seen {
			continue
		}
		if d, ok := c.shift(); ok && d != 0 && inside(t.it[0].window, c.it[0].window) && inside(t.it[1].window, c.it[1].window) {
			return c
		}
	}
	return nil
}

// coveringUnion returns the union of t with another access of its size
// that does not move as a whole either, or with all of them, when that
// union moves as a whole (by a nonzero step); nil when none does. An
// access that ran in one probed iteration only joins with what it
// touched there (a probed row that recorded only a prefix of its inner
// loop may have seen one side of the if only).
func coveringUnion(traces []*accessTrace, t *accessTrace) *accessTrace {
	var others []*accessTrace
	for _, u := range traces {
		if u == t || u.size != t.size || !u.it[0].seen && !u.it[1].seen {
			continue
		}
		if _, ok := u.shift(); !ok {
			others = append(others, u)
		}
	}
	union := func(us ...*accessTrace) *accessTrace {
		un := &accessTrace{x86: t.x86, store: t.store, size: t.size}
		for it := range un.it {
			un.it[it].merge(&t.it[it])
			for _, u := range us {
				un.it[it].merge(&u.it[it])
			}
			un.it[it].normalize()
		}
		if d, ok := un.shift(); ok && d != 0 {
			return un
		}
		return nil
	}
	for _, u := range others {
		if un := union(u); un != nil {
			return un
		}
	}
	if len(others) > 1 {
		return union(others...)
	}
	return nil
}

// inside reports whether a lies within b.
func inside(a, b ptxgen.Range) bool { return b.Lo <= a.Lo && a.Hi <= b.Hi }

// conflict tests write w against access s over n iterations.
func conflict(w, s *accessTrace, n uint64) string {
	dw, okw := w.shift()
	ds, oks := s.shift()
	if okw && oks && dw == ds {
		return spanConflict(w.it[0].spans, s.it[0].spans, dw, n)
	}
	why := windowConflict(w, s, n)
	if why == "" {
		return ""
	}
	if exact, ok := latticeConflict(w, s, n); ok {
		return exact
	}
	return why
}

// spanConflict looks for spans a of ws and b of ss and an m ≠ 0, |m| < n,
// with a and b moved by d·m meeting, and names the first such pair in
// ws's order, then ss's. Only the spans of ss near a can meet it (b.Lo
// within |d|·(n−1) plus the longest span of ss below a, or that far above
// it), found by binary search in ss sorted: a row's accesses are up to
// maxSpans spans each, and checking every pair made the probe of symm's
// triangle (C's column, one span a row above the diagonal) cost 1.4 ms
// an instance at its 50th row.
func spanConflict(ws, ss []ptxgen.Range, d int64, n uint64) string {
	if len(ws) == 0 || len(ss) == 0 {
		return ""
	}
	order := make([]int, len(ss))
	var longest uint64
	for i, b := range ss {
		order[i] = i
		longest = max(longest, b.Hi-b.Lo)
	}
	slices.SortFunc(order, func(i, j int) int { return cmp.Compare(ss[i].Lo, ss[j].Lo) })
	reach := spanReach(d, n)
	reach += min(longest, math.MaxUint64-reach)
	for _, a := range ws {
		lo := a.Lo - min(a.Lo, reach) // saturating a.Lo − reach
		hi := a.Hi + min(reach, math.MaxUint64-a.Hi)
		first, _ := slices.BinarySearchFunc(order, lo, func(i int, v uint64) int { return cmp.Compare(ss[i].Lo, v) })
		best, why := -1, ""
		for _, i := range order[first:] {
			if ss[i].Lo >= hi {
				break
			}
			if best >= 0 && i > best {
				continue
			}
			if w := spansMeet(a, ss[i], d, n); w != "" {
				best, why = i, w
			}
		}
		if best >= 0 {
			return why
		}
	}
	return ""
}

// spanReach is |d|·(n−1), saturated: how far apart the iterations of a
// level of n, moving by d each, place the same span.
func spanReach(d int64, n uint64) uint64 {
	ad := uint64(d)
	if d < 0 {
		ad = uint64(-d)
	}
	if n < 2 || ad == 0 {
		return 0
	}
	if n-1 > math.MaxUint64/ad {
		return math.MaxUint64
	}
	return ad * (n - 1)
}

// spansMeet reports how span a meets span b moved by d·m for an m ≠ 0,
// |m| < n, or with d = 0 overlaps it; "" when it does not.
func spansMeet(a, b ptxgen.Range, d int64, n uint64) string {
	// a meets b moved by d·m iff a.Lo − b.Hi < d·m < a.Hi − b.Lo.
	lo, hi := int64(a.Lo-b.Hi), int64(a.Hi-b.Lo)
	if d == 0 {
		if lo < 0 && 0 < hi {
			return fmt.Sprintf("bytes [%#x,%#x) in every iteration", max(a.Lo, b.Lo), min(a.Hi, b.Hi))
		}
		return ""
	}
	if d < 0 {
		lo, hi, d = -hi, -lo, -d
	}
	// The smallest m > lo/d, and the largest m < hi/d.
	mlo := floorDiv(lo, d) + 1
	mhi := -floorDiv(-hi, d) - 1
	for _, m := range []int64{mlo, -1, 1, mhi} {
		if m != 0 && m >= mlo && m <= mhi && uint64(max(m, -m)) < n {
			return fmt.Sprintf("%d iteration(s) apart, stride %d", max(m, -m), d)
		}
	}
	return ""
}

// windowConflict checks two accesses that do not move as one by their
// windows: they must stay in order, each iteration's windows ending before
// the next iteration's begin (or, moving down, beginning after they end).
// The windows are linear in the iteration, so the first and the last pair
// of iterations decide.
func windowConflict(w, s *accessTrace, n uint64) string {
	type lin struct{ lo0, dlo, hi0, dhi int64 }
	win := func(t *accessTrace) lin {
		a, b := t.it[0].window, t.it[1].window
		return lin{int64(a.Lo), int64(b.Lo - a.Lo), int64(a.Hi), int64(b.Hi - a.Hi)}
	}
	at := func(l lin, t int64) (int64, int64) { return l.lo0 + l.dlo*t, l.hi0 + l.dhi*t }
	x, y := win(w), win(s)
	last := int64(n) - 2
	ordered := func(up bool) bool {
		for _, t := range []int64{0, last} {
			for _, p := range [][2]lin{{x, y}, {y, x}} {
				_, hiT := at(p[0], t)
				loN, _ := at(p[1], t+1)
				loT, _ := at(p[0], t+1)
				_, hiN := at(p[1], t)
				if up && hiT > loN {
					return false
				}
				if !up && hiN > loT {
					return false
				}
			}
		}
		return true
	}
	if ordered(true) || ordered(false) {
		return ""
	}
	// Windows that never meet over the whole run cannot conflict.
	wl0, wh0 := at(x, 0)
	wl1, wh1 := at(x, int64(n)-1)
	sl0, sh0 := at(y, 0)
	sl1, sh1 := at(y, int64(n)-1)
	if max(wh0, wh1) <= min(sl0, sl1) || max(sh0, sh1) <= min(wl0, wl1) {
		return ""
	}
	return fmt.Sprintf("windows moving by %d and %d bytes per iteration overlap", x.dlo, y.dlo)
}

// floorDiv is ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// traces groups the per-site span lists of the two probed iterations by
// x86 access.
func traces(sites []ptxgen.Site, recs [2]*probeRecord) []*accessTrace {
	byKey := map[[2]uint64]*accessTrace{}
	var out []*accessTrace
	for i, s := range sites {
		key := [2]uint64{s.X86, 0}
		if s.Store {
			key[1] = 1
		}
		t := byKey[key]
		if t == nil {
			t = &accessTrace{x86: s.X86, store: s.Store, size: uint64(max(s.Size, 0))}
			byKey[key] = t
			out = append(out, t)
		}
		for it := 0; it < 2; it++ {
			l := &recs[it].spans[i]
			if !l.seen {
				continue
			}
			dst := &t.it[it]
			first := !dst.seen
			dst.fill = dst.fill || l.fill
			if l.overflow {
				dst.add(l.window.Lo, l.window.Hi)
				dst.overflow, dst.spans = true, nil
			} else {
				for _, r := range l.spans {
					dst.add(r.Lo, r.Hi)
				}
			}
			if first && l.lat != nil {
				lat := *l.lat
				dst.lat = &lat
			}
		}
	}
	for _, t := range out {
		for it := range t.it {
			t.it[it].normalize()
		}
	}
	return out
}

// normalize sorts the spans and merges those that meet, so that two
// iterations that touched the same bytes moved list the same spans (the
// copies of an access add theirs in block order).
func (l *spanList) normalize() {
	slices.SortFunc(l.spans, func(a, b ptxgen.Range) int {
		switch {
		case a.Lo < b.Lo:
			return -1
		case a.Lo > b.Lo:
			return 1
		}
		return 0
	})
	out := l.spans[:0]
	for _, r := range l.spans {
		if n := len(out); n > 0 && r.Lo <= out[n-1].Hi {
			out[n-1].Hi = max(out[n-1].Hi, r.Hi)
			continue
		}
		out = append(out, r)
	}
	l.spans = out
}
