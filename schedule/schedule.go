// Package schedule decides how phase 2 runs a hot loop nest, from phase 1's
// affine model of it (a profile.HotSpot: the loop tree, each loop's trip
// count and verdict, each access site's affine address over the loops of
// its path).
//
// A Schedule says which loops stay on the host (sequential loops above
// the first parallel one: time steps, LU's k), and which kernels run, in
// order: each kernel's grid (the outermost band of parallel loops, at
// most three, the innermost of the band on x), the loops each thread runs
// inside it (sequential loops, reductions, triangular bounds), and the
// two transformations that turn an imperfect nest into kernels with a
// wide grid and a register accumulator:
//
//   - distribution: the sibling loops under a parallel loop become
//     separate kernels (gemm: `C *= beta` over (i, j), then the product over
//     (i, j)). It is legal whenever the loops around them carry no
//     dependence: the kernels then run each sibling for all outer
//     iterations in the original sibling order. Code between the siblings
//     that writes memory keeps its sibling on a grid without that loop.
//   - statement distribution: a loop that carries a dependence and holds
//     one loop with two or more written arrays in its body (bicg's s[j]
//     and q[i] in one j loop) becomes one kernel per statement, each
//     with its own parallel level (statements.go).
//   - interchange: a sequential loop whose only child is a parallel loop
//     (gemm's k over j) swaps with it when, with the child outside, the
//     child still carries no dependence: then no dependence runs backwards
//     in the child, the child joins the grid, and the sequential loop runs
//     in the thread, in its original order, so every element is updated in
//     the same order as on the CPU (bit-identical floating point).
//
// Every decision and every refusal is a Note with its reason; Format
// prints them for gxbit profile --print, gxbit ptx gen and the accelerate
// report.
//
// Legality comes from the exact dependence test (package polyhedral) on
// the hot spot's fitted accesses, with bases and bounds left symbolic
// (var0, bound0, …): a transformation is chosen only when it is legal for
// every value. Sites of different arrays (the profile's array groups) are
// not tested against each other: phase 2's guards check at every entry
// that the footprints of different arrays do not overlap.
package schedule

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gxbit/gxbit/polyhedral"
	"github.com/gxbit/gxbit/profile"
)

// MaxGrid is the most loops a kernel's grid maps (x, y, z).
const MaxGrid = 3

// Schedule is how phase 2 runs one hot spot.
type Schedule struct {
	Entry    uint64 // the hot spot's outermost header
	Function string
	// Host are the loops that stay loops on the host, outermost first:
	// each of their iterations launches Kernels over arrays that stay on
	// the device.
	Host []Loop
	// Kernels run in order, once per iteration of the host loops.
	Kernels []Kernel
	// Notes are the decisions and the refusals, each with its reason.
	Notes []string
}

// Loop is one loop of the nest as the schedule places it.
type Loop struct {
	Index   string // i, j, … for levels; u0, u1, … for inner loops
	Header  uint64
	Trip    string // header arrivals per entry, affine in outer indices and vars
	Verdict string // parallel, reduction or sequential, after any interchange
	Why     string
}

// Kernel is one launch: the grid loops, outermost first (the last maps to
// x), and the loops each thread runs, outermost first.
type Kernel struct {
	Grid   []Loop
	Thread []Loop
	// Sites are the accesses it runs (indices into the hot spot's
	// Accesses), stack slots (private to a thread) left out.
	Sites []int
	// Distributed is set when the kernel is one of several sibling loops
	// of one parallel loop; Interchanged names the pair (sequential,
	// parallel) that swapped, when one did.
	Distributed  bool
	Interchanged [2]string
	// Stores, when not nil, are the write sites (indices into the hot
	// spot's Accesses) of the one statement the kernel runs: the loop
	// body was split between statements (bicg's s[j] and q[i] in one j
	// loop), and the kernel runs the body without the other statements'
	// stores and what only they need (gvinst.SliceStores).
	Stores []int
}

// node is one loop of the hot spot's tree.
type node struct {
	loop     Loop
	parent   *node
	children []*node
	sites    []int // accesses whose innermost loop this is
	depth    int
	// memoryOnly is set when every dependence the profile found for the
	// loop is between memory sites (none in a register or stack slot, and
	// the loop was analysed): the exact test on a subset of its sites then
	// decides for that subset.
	memoryOnly bool
}

// model is the hot spot's loop tree and its accesses as polyhedral values.
type model struct {
	hs     *profile.HotSpot
	nodes  map[string]*node
	root   *node
	access []polyhedral.Access // by index into hs.Accesses; Size 0 when unusable
	why    []string            // why an access is unusable
}

// part is a loop with some of its children: the whole loop, or one of
// the loops a distribution split it into (one child, and the code at the
// loop's own level that goes with it).
type part struct {
	n        *node
	children []*node
	sites    []int // the sites at n's own level that go with the part
	whole    bool
	// only, when not nil, limits the part to these sites (one
	// statement's: see distributeStatements).
	only map[int]bool
}

func (m *model) whole(n *node) part {
	return part{n: n, children: n.children, sites: n.sites, whole: true}
}

// Build makes the schedule of a hot spot. It never fails: a nest it cannot
// place gets a schedule with no kernel and a note saying why.
func Build(hs *profile.HotSpot) *Schedule {
	s := &Schedule{Entry: uint64(hs.Entry), Function: hs.Function}
	if len(hs.Levels) == 0 {
		s.note("no kernel: the nest has no analysed level (%s)", hs.Reason)
		return s
	}
	m := newModel(hs)
	m.place(s, m.whole(m.root), nil, false)
	return s
}

// place schedules part p below the grid loops grid (all parallel).
func (m *model) place(s *Schedule, p part, grid []Loop, distributed bool) {
	n := p.n
	verdict, why := m.verdict(p)
	if verdict == profile.VerdictParallel {
		if len(grid) == MaxGrid {
			s.note("%s runs inside the thread: a grid maps at most %d loops", n.loop.Index, MaxGrid)
			m.kernel(s, grid, []*node{n}, m.partSites(p), distributed, [2]string{})
			return
		}
		l := n.loop
		l.Verdict, l.Why = verdict, why
		m.body(s, p, append(append([]Loop(nil), grid...), l), distributed)
		return
	}
	// n carries a dependence. With a parallel child, swap them.
	if len(p.children) == 1 && len(grid) < MaxGrid && m.whole(p.children[0]).n.loop.Verdict == profile.VerdictParallel {
		c := p.children[0]
		if m.interchange(s, p, c) {
			inner := c.loop
			outer := n.loop
			outer.Verdict, outer.Why = m.afterInterchange(p, c)
			k := Kernel{Grid: append(append([]Loop(nil), grid...), inner), Thread: append([]Loop{outer}, m.threadLoops(c.children)...),
				Sites: m.partSites(p), Distributed: distributed, Interchanged: [2]string{n.loop.Index, c.loop.Index}}
			s.Kernels = append(s.Kernels, k)
			return
		}
	}
	if len(grid) > 0 {
		// Under a grid: n runs inside the thread, in order.
		m.kernel(s, grid, []*node{n}, m.partSites(p), distributed, [2]string{})
		return
	}
	// Not under a grid: split n between its children, or keep it on the
	// host and launch what is inside it per iteration.
	if len(p.children) >= 2 {
		if groups, ok := m.distributeSequential(s, p); ok {
			for _, g := range groups {
				m.place(s, g, nil, true)
			}
			return
		}
	}
	if len(p.children) == 0 {
		s.note("no kernel for %s (%#x): %s — %s, and it holds no loop", n.loop.Index, n.loop.Header, verdict, why)
		return
	}
	if m.distributeStatements(s, p) {
		return
	}
	host, kernels, notes := len(s.Host), len(s.Kernels), len(s.Notes)
	s.Host = append(s.Host, n.loop)
	s.note("%s stays on the host (%s — %s); what is inside runs per iteration, arrays resident on the device", n.loop.Index, verdict, why)
	for _, c := range p.children {
		m.place(s, m.whole(c), nil, false)
	}
	if len(s.Kernels) == kernels {
		// Nothing inside runs as a kernel: no host loop either.
		s.Host, s.Notes = s.Host[:host], s.Notes[:notes]
		s.note("no kernel: %s is %s (%s) and no loop inside it is parallel", n.loop.Index, verdict, why)
	}
}

// body schedules what is inside part p, whose loop is the last of grid.
func (m *model) body(s *Schedule, p part, grid []Loop, distributed bool) {
	writes := m.levelWrites(p.sites)
	switch {
	case len(p.children) == 0:
		m.kernel(s, grid, nil, m.partSites(p), distributed, [2]string{})
	case len(writes) > 0 && len(p.children) == 1 && len(grid) < MaxGrid && m.parallel(p.children[0]) && m.apart(p, p.children[0]):
		// The level's own stores touch no array of the loop inside, nor
		// does that loop write an array the level's body reads: a 2D
		// kernel's rows make them once each (before the loop, every
		// thread of the row the same values; after it, the row's last
		// thread), and the loop inside can join the grid.
		s.note("%s's stores outside %s (%s) touch no array %s touches, and %s writes none that %s reads: each row makes them, and %s can join the grid", p.n.loop.Index, p.children[0].loop.Index, m.siteNames(writes), p.children[0].loop.Index, p.children[0].loop.Index, p.n.loop.Index, p.children[0].loop.Index)
		first := len(s.Kernels)
		m.place(s, m.whole(p.children[0]), grid, distributed)
		for i := first; i < len(s.Kernels); i++ {
			k := &s.Kernels[i]
			k.Sites = append(k.Sites, m.partSites(part{n: p.n, sites: p.sites})...)
			sort.Ints(k.Sites)
			k.Sites = slices.Compact(k.Sites)
		}
	case len(writes) > 0:
		if len(p.children) > 1 {
			s.note("the loops under %s (%s) stay in one kernel: %s writes memory between them (%s)", p.n.loop.Index, childNames(p.children), p.n.loop.Index, m.siteNames(writes))
		}
		m.kernel(s, grid, p.children, m.partSites(p), distributed, [2]string{})
	case len(p.children) == 1:
		m.place(s, m.whole(p.children[0]), grid, distributed)
	default:
		s.note("distributed the %d loops under %s (%s) into kernels of their own: %s carries no dependence, so each can run for every %s before the next", len(p.children), p.n.loop.Index, childNames(p.children), gridNames(grid), gridNames(grid))
		for _, c := range p.children {
			m.place(s, m.whole(c), grid, true)
		}
	}
}

// kernel appends a kernel over grid whose threads run the loops of ns.
func (m *model) kernel(s *Schedule, grid []Loop, ns []*node, sites []int, distributed bool, swapped [2]string) {
	s.Kernels = append(s.Kernels, Kernel{Grid: append([]Loop(nil), grid...), Thread: m.threadLoops(ns), Sites: sites, Distributed: distributed, Interchanged: swapped})
}

// verdict is part p's loop's verdict: the profile's for a whole loop; for
// a piece of a distributed loop, the exact test on the piece's sites
// (only when every dependence the profile found for it was in memory).
func (m *model) verdict(p part) (string, string) {
	l := p.n.loop
	if p.whole || l.Verdict == profile.VerdictParallel || !p.n.memoryOnly {
		return l.Verdict, l.Why
	}
	nest, lvl, err := m.nestOf(p.n, m.partSites(p), nil)
	if err != nil {
		return l.Verdict, l.Why
	}
	vs, err := polyhedral.Analyze(nest, polyhedral.Options{DistinctBases: true})
	if err != nil {
		return l.Verdict, l.Why
	}
	switch vs[lvl].Kind {
	case polyhedral.LevelParallel:
		return profile.VerdictParallel, "no dependence carried by the loop's sites in this kernel (exact test)"
	case polyhedral.LevelReduction:
		return profile.VerdictReduction, vs[lvl].Reason
	}
	return profile.VerdictSequential, vs[lvl].Reason
}

// distributeSequential splits loop p.n, which carries a dependence, into
// one part per child when no dependence runs from a later child back to
// an earlier one in a later iteration. Code at the loop's own level goes
// with a neighbouring child: a store with the child before it (a result
// the child computed: atax's tmp[i] = sum), a load with the child after
// it (an operand the child reads), and otherwise with the nearest child.
func (m *model) distributeSequential(s *Schedule, p part) ([]part, bool) {
	n := p.n
	if !n.memoryOnly {
		s.note("%s is not split between its loops (%s): it carries a register or is not analysed (%s)", n.loop.Index, childNames(p.children), n.loop.Why)
		return nil, false
	}
	groups := make([]part, len(p.children))
	for i, c := range p.children {
		groups[i] = part{n: n, children: []*node{c}}
	}
	for _, i := range p.sites {
		if m.hs.Accesses[i].Stack {
			continue
		}
		a := m.hs.Accesses[i]
		after := len(p.children) // the first child after the site
		for k, c := range p.children {
			if uint64(a.X86) < c.loop.Header {
				after = k
				break
			}
		}
		g := after
		if a.Kind == "write" && after > 0 || after == len(p.children) {
			g = after - 1
		}
		groups[g].sites = append(groups[g].sites, i)
	}
	nest, lvl, err := m.nestOf(n, m.partSites(p), nil)
	if err != nil {
		s.note("%s is not split between its loops: %v", n.loop.Index, err)
		return nil, false
	}
	for b := 1; b < len(groups); b++ {
		for a := 0; a < b; a++ {
			for _, x := range m.partSites(groups[b]) {
				for _, y := range m.partSites(groups[a]) {
					ax, ay := m.access[x], m.access[y]
					if ax.Size == 0 || ay.Size == 0 || !ax.Base.Equal(ay.Base) {
						continue
					}
					w, err := polyhedral.DependsBefore(nest.Domain, ax, ay, lvl, polyhedral.Options{})
					if err != nil || w != nil {
						why := "undecided"
						if w != nil {
							why = "at " + formatWitness(nest.Domain, w)
						}
						s.note("%s is not split between %s and %s: %s in the later one feeds %s in the earlier one one iteration on (%s)", n.loop.Index, groups[a].children[0].loop.Index, groups[b].children[0].loop.Index, m.siteNames([]int{x}), m.siteNames([]int{y}), why)
						return nil, false
					}
				}
			}
		}
	}
	s.note("split %s between its %d loops (%s): no dependence runs from a later loop back to an earlier one", n.loop.Index, len(groups), childNames(p.children))
	return groups, true
}

// nestOf is the polyhedral nest of sites below loop n: the loops from the
// root down to n, then n's descendants, in pre-order; swapped, when set,
// names a child of n to put right above n instead. It returns the level
// of n.
func (m *model) nestOf(n *node, sites []int, swapped *node) (polyhedral.Nest, int, error) {
	var nest polyhedral.Nest
	var order []*node
	for x := n.parent; x != nil; x = x.parent {
		order = append([]*node{x}, order...)
	}
	if swapped != nil {
		order = append(order, swapped)
	}
	order = append(order, n)
	lvl := len(order) - 1
	var walk func(*node)
	walk = func(x *node) {
		for _, y := range x.children {
			if y != swapped {
				order = append(order, y)
			}
			walk(y)
		}
	}
	walk(n)
	pos := map[string]int{}
	for i, x := range order {
		lv, err := m.level(x)
		if err != nil {
			return nest, 0, err
		}
		nest.Domain.Levels = append(nest.Domain.Levels, lv)
		pos[x.loop.Index] = i
	}
	for _, i := range sites {
		a := m.access[i]
		if a.Size == 0 {
			return nest, 0, fmt.Errorf("access %s: %s", m.siteNames([]int{i}), m.why[i])
		}
		loops := append([]string(nil), a.Loops...)
		// A site of n outside the swapped child now runs inside it.
		if swapped != nil && !contains(loops, swapped.loop.Index) {
			loops = append(loops, swapped.loop.Index)
		}
		sort.SliceStable(loops, func(x, y int) bool { return pos[loops[x]] < pos[loops[y]] })
		a.Loops = loops
		nest.Accesses = append(nest.Accesses, a)
	}
	m.addReductions(&nest)
	return nest, lvl, nil
}

// interchange decides whether the loop of part p (which carries a
// dependence) moves inside its only child c (parallel), noting why or why
// not.
func (m *model) interchange(s *Schedule, p part, c *node) bool {
	why := m.interchangeRefusal(p, c)
	if why != "" {
		s.note("%s is not moved inside %s: %s", p.n.loop.Index, c.loop.Index, why)
		return false
	}
	s.note("interchanged %s and %s: with %s outside, %s still carries no dependence, so %s joins the grid and %s runs inside the thread in its own order", p.n.loop.Index, c.loop.Index, c.loop.Index, c.loop.Index, c.loop.Index, p.n.loop.Index)
	return true
}

// interchangeRefusal says why the loop of part p cannot move inside its
// parallel child c, or "" when it can.
func (m *model) interchangeRefusal(p part, c *node) string {
	n := p.n
	if !n.memoryOnly {
		return fmt.Sprintf("%s carries a register or was not analysed (%s)", n.loop.Index, n.loop.Why)
	}
	if c.loop.Trip == "" {
		return fmt.Sprintf("%s has no affine trip count", c.loop.Index)
	}
	trip, err := polyhedral.ParseExpr(c.loop.Trip)
	if err != nil {
		return fmt.Sprintf("%s's trip count %q: %v", c.loop.Index, c.loop.Trip, err)
	}
	if trip.Coef(n.loop.Index) != 0 {
		return fmt.Sprintf("%s's trip count depends on %s (triangular)", c.loop.Index, n.loop.Index)
	}
	sites := m.partSites(p)
	for _, i := range p.sites {
		a := m.hs.Accesses[i]
		if a.Stack {
			continue
		}
		if a.Kind == "write" {
			return fmt.Sprintf("%s writes memory outside %s (%s)", n.loop.Index, c.loop.Index, m.siteNames([]int{i}))
		}
		for _, j := range sites {
			if b := m.hs.Accesses[j]; b.Group == a.Group && b.Kind == "write" {
				return fmt.Sprintf("%s reads outside %s an array written inside it (%s)", n.loop.Index, c.loop.Index, m.siteNames([]int{i}))
			}
		}
	}
	nest, _, err := m.nestOf(n, sites, c)
	if err != nil {
		return err.Error()
	}
	vs, err := polyhedral.Analyze(nest, polyhedral.Options{DistinctBases: true})
	if err != nil {
		return "dependence test failed: " + err.Error()
	}
	for _, v := range vs {
		if v.Index == c.loop.Index && v.Kind != polyhedral.LevelParallel {
			return fmt.Sprintf("with %s outside, it would carry a dependence: %s", c.loop.Index, v.Reason)
		}
	}
	return ""
}

// afterInterchange is the verdict of part p's loop once inside c.
func (m *model) afterInterchange(p part, c *node) (string, string) {
	nest, lvl, err := m.nestOf(p.n, m.partSites(p), c)
	if err != nil {
		return profile.VerdictSequential, err.Error()
	}
	vs, err := polyhedral.Analyze(nest, polyhedral.Options{DistinctBases: true})
	if err != nil {
		return profile.VerdictSequential, err.Error()
	}
	switch vs[lvl].Kind {
	case polyhedral.LevelReduction:
		return profile.VerdictReduction, "updates one element per thread, in its original order"
	case polyhedral.LevelParallel:
		return profile.VerdictParallel, "no dependence carried"
	}
	return profile.VerdictSequential, vs[lvl].Reason
}

// addReductions pairs a read and a write of the same address and size in
// one loop (x = x op e): the profile marks a level a reduction only when
// the instructions accumulate, so a pair whose loop's verdict was
// reduction or whose parent became one is taken as a sum.
func (m *model) addReductions(n *polyhedral.Nest) {
	for r := range n.Accesses {
		for w := range n.Accesses {
			a, b := n.Accesses[r], n.Accesses[w]
			if a.Kind != polyhedral.Read || b.Kind != polyhedral.Write || a.Size != b.Size || !a.Addr().Equal(b.Addr()) {
				continue
			}
			if strings.Join(a.Loops, ",") != strings.Join(b.Loops, ",") {
				continue
			}
			n.Reductions = append(n.Reductions, polyhedral.Reduction{Read: r, Write: w, Op: polyhedral.Sum})
		}
	}
}

// level is x's polyhedral level: 0 ≤ index ≤ trip - 1 (a loop tested at
// the top arrives at its header once more than it runs its body: one
// iteration too many is a safe over-approximation for the test).
func (m *model) level(x *node) (polyhedral.Level, error) {
	if x.loop.Trip == "" {
		return polyhedral.Level{}, fmt.Errorf("%s has no affine trip count", x.loop.Index)
	}
	t, err := polyhedral.ParseExpr(x.loop.Trip)
	if err != nil {
		return polyhedral.Level{}, fmt.Errorf("%s's trip count %q: %v", x.loop.Index, x.loop.Trip, err)
	}
	return polyhedral.Level{Index: x.loop.Index, Lower: polyhedral.Const(0), Upper: t.AddConst(-1)}, nil
}

// newModel builds the loop tree and the accesses of hs.
func newModel(hs *profile.HotSpot) *model {
	m := &model{hs: hs, nodes: map[string]*node{}}
	var prev *node
	for _, l := range hs.Levels {
		n := &node{loop: Loop{Index: l.Index, Header: uint64(l.Header), Trip: l.TripCount, Verdict: l.Verdict, Why: l.Reason}, parent: prev,
			memoryOnly: memoryConflict(l.Verdict, l.Conflict)}
		if prev != nil {
			prev.children = append(prev.children, n)
			n.depth = prev.depth + 1
		} else {
			m.root = n
		}
		m.nodes[l.Index] = n
		prev = n
	}
	for _, il := range hs.InnerLoops {
		p := m.nodes[il.Parent]
		if p == nil {
			continue
		}
		n := &node{loop: Loop{Index: il.Index, Header: uint64(il.Header), Trip: il.TripCount, Verdict: il.Verdict, Why: il.Reason}, parent: p, depth: p.depth + 1,
			memoryOnly: memoryConflict(il.Verdict, il.Conflict)}
		p.children = append(p.children, n)
		m.nodes[il.Index] = n
	}
	for _, n := range m.nodes {
		sort.SliceStable(n.children, func(a, b int) bool { return n.children[a].loop.Header < n.children[b].loop.Header })
	}
	m.access = make([]polyhedral.Access, len(hs.Accesses))
	m.why = make([]string, len(hs.Accesses))
	for i, a := range hs.Accesses {
		loop := a.Loop
		if loop == "" && len(hs.Levels) > 0 {
			loop = hs.Levels[0].Index
		}
		if n := m.nodes[loop]; n != nil {
			n.sites = append(n.sites, i)
		}
		pa, err := m.accessOf(a)
		if err != nil {
			m.why[i] = err.Error()
			continue
		}
		m.access[i] = pa
	}
	return m
}

// memoryConflict reports whether a verdict is parallel or was decided by
// a conflict between two memory sites.
func memoryConflict(verdict string, c *profile.Conflict) bool {
	return verdict == profile.VerdictParallel || c != nil && c.Sites[0] >= 0 && c.Sites[1] >= 0
}

// accessOf turns a profile access into a polyhedral one over its path.
func (m *model) accessOf(a profile.Access) (polyhedral.Access, error) {
	if !a.Affine {
		return polyhedral.Access{}, fmt.Errorf("not affine: %s", a.Why)
	}
	base, err := parseBase(a.Base)
	if err != nil {
		return polyhedral.Access{}, err
	}
	off := polyhedral.Const(0)
	for l, c := range a.Coeffs {
		if c != 0 && l < len(m.hs.Levels) {
			off = off.Add(polyhedral.Var(m.hs.Levels[l].Index).Scale(c))
		}
	}
	for _, in := range a.Inner {
		if in.Coeff != 0 {
			off = off.Add(polyhedral.Var(in.Index).Scale(in.Coeff))
		}
	}
	kind := polyhedral.Read
	if a.Kind == "write" {
		kind = polyhedral.Write
	}
	var loops []string
	for n := m.nodes[a.Loop]; n != nil; n = n.parent {
		loops = append([]string{n.loop.Index}, loops...)
	}
	// Arrays are told apart by their group: the Base names the group
	// (tests run with DistinctBases), the offset holds the address.
	return polyhedral.Access{Site: a.X86.String(), Base: polyhedral.Var(fmt.Sprintf("array%d", a.Group)), Offset: base.Add(off), Size: int64(a.Size), Kind: kind, Loops: loops}, nil
}

// parseBase reads a base: a hexadecimal constant, or an expression of vars.
func parseBase(s string) (polyhedral.Expr, error) {
	if s == "" {
		return polyhedral.Const(0), fmt.Errorf("no base expression")
	}
	if v, err := strconv.ParseUint(s, 0, 64); err == nil {
		if v > 1<<62 {
			return polyhedral.Const(0), fmt.Errorf("base %s too large", s)
		}
		return polyhedral.Const(int64(v)), nil
	}
	return polyhedral.ParseExpr(s)
}

// threadLoops lists the loops of the subtrees at ns, in pre-order, as the
// thread runs them.
func (m *model) threadLoops(ns []*node) []Loop {
	var out []Loop
	var walk func(*node)
	walk = func(n *node) {
		out = append(out, n.loop)
		for _, c := range n.children {
			walk(c)
		}
	}
	for _, n := range ns {
		walk(n)
	}
	return out
}

// subtreeSites lists the non-stack sites of n's subtree and n's own.
func (m *model) subtreeSites(n *node) []int {
	var out []int
	var walk func(*node)
	walk = func(x *node) {
		for _, i := range x.sites {
			if !m.hs.Accesses[i].Stack {
				out = append(out, i)
			}
		}
		for _, c := range x.children {
			walk(c)
		}
	}
	walk(n)
	sort.Ints(out)
	return out
}

// levelWrites lists the memory writes among sites (stack slots aside).
func (m *model) levelWrites(sites []int) []int {
	var out []int
	for _, i := range sites {
		if a := m.hs.Accesses[i]; a.Kind == "write" && !a.Stack {
			out = append(out, i)
		}
	}
	return out
}

// parallel reports whether loop n, whole, carries no dependence.
func (m *model) parallel(n *node) bool {
	v, _ := m.verdict(m.whole(n))
	return v == profile.VerdictParallel
}

// apart reports whether the sites of part p's own level and those of
// its child c's subtree meet in no array (the profile's groups) that
// either side writes.
func (m *model) apart(p part, c *node) bool {
	own, inner := map[int]string{}, map[int]string{}
	add := func(set map[int]string, i int) {
		a := m.hs.Accesses[i]
		if a.Stack {
			return
		}
		if set[a.Group] != "write" {
			set[a.Group] = a.Kind
		}
	}
	for _, i := range p.sites {
		add(own, i)
	}
	for _, i := range m.subtreeSites(c) {
		add(inner, i)
	}
	for g, k := range own {
		if ik, ok := inner[g]; ok && (k == "write" || ik == "write") {
			return false
		}
	}
	return true
}

// partSites lists the non-stack sites of a part: its own, then those of
// its children's subtrees.
func (m *model) partSites(p part) []int {
	var out []int
	for _, i := range p.sites {
		if !m.hs.Accesses[i].Stack {
			out = append(out, i)
		}
	}
	for _, c := range p.children {
		out = append(out, m.subtreeSites(c)...)
	}
	if p.only != nil {
		out = slices.DeleteFunc(out, func(i int) bool { return !p.only[i] })
	}
	sort.Ints(out)
	return out
}

// formatWitness prints a witness with the domain's index names, without
// the array names the test introduced.
func formatWitness(d polyhedral.Domain, w *polyhedral.Witness) string {
	vec := func(v []int64) string {
		var parts []string
		for i, x := range v {
			parts = append(parts, fmt.Sprintf("%s=%d", d.Levels[i].Index, x))
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	return vec(w.A) + " and " + vec(w.B)
}

func childNames(ns []*node) string {
	var out []string
	for _, n := range ns {
		out = append(out, n.loop.Index)
	}
	return strings.Join(out, ", ")
}

func (m *model) siteNames(is []int) string {
	var parts []string
	for _, i := range is {
		a := m.hs.Accesses[i]
		parts = append(parts, fmt.Sprintf("%s at %s", a.Kind, a.X86))
	}
	return strings.Join(parts, ", ")
}

func (s *Schedule) note(format string, args ...any) {
	s.Notes = append(s.Notes, fmt.Sprintf(format, args...))
}

func names(ls []Loop) string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Index)
	}
	return strings.Join(out, ", ")
}

func gridNames(ls []Loop) string {
	if len(ls) == 1 {
		return ls[0].Index
	}
	return "(" + names(ls) + ")"
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Summary is the schedule on one line: host loops, then per kernel its
// grid and in-thread loops, e.g. "grid(i,u0); grid(i,u2) thread(u1) [u1<->u2]".
func Summary(s *Schedule) string {
	var parts []string
	if len(s.Host) > 0 {
		parts = append(parts, "host("+names(s.Host)+")")
	}
	for _, k := range s.Kernels {
		p := "grid(" + strings.ReplaceAll(names(k.Grid), " ", "") + ")"
		if len(k.Thread) > 0 {
			p += " thread(" + strings.ReplaceAll(names(k.Thread), " ", "") + ")"
		}
		if k.Interchanged[0] != "" {
			p += " [" + k.Interchanged[0] + "<->" + k.Interchanged[1] + "]"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "CPU"
	}
	return strings.Join(parts, "; ")
}

// tripText shows a loop's trip count (header arrivals per entry).
func tripText(t string) string {
	if t == "" {
		return "[? trips]"
	}
	return "[" + t + " trips]"
}

// Format prints a schedule for people: the host loops, each kernel's grid
// (index→dimension [trip count]) and in-thread loops, then the notes.
func Format(s *Schedule) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "schedule of %s at %#x:", s.Function, s.Entry)
	if len(s.Host) > 0 {
		fmt.Fprintf(&sb, " host loop %s;", names(s.Host))
	}
	fmt.Fprintf(&sb, " %d kernel(s)\n", len(s.Kernels))
	for i, k := range s.Kernels {
		var g []string
		for j, l := range k.Grid {
			dim := []string{"x", "y", "z"}[len(k.Grid)-1-j]
			g = append(g, fmt.Sprintf("%s→%s %s", l.Index, dim, tripText(l.Trip)))
		}
		fmt.Fprintf(&sb, "  kernel %d: grid (%s)", i+1, strings.Join(g, ", "))
		if len(k.Thread) > 0 {
			var t []string
			for _, l := range k.Thread {
				t = append(t, fmt.Sprintf("%s %s %s", l.Index, tripText(l.Trip), l.Verdict))
			}
			fmt.Fprintf(&sb, ", in the thread: %s", strings.Join(t, ", "))
		}
		var tags []string
		if k.Distributed {
			tags = append(tags, "distributed")
		}
		if k.Interchanged[0] != "" {
			tags = append(tags, fmt.Sprintf("%s and %s interchanged", k.Interchanged[0], k.Interchanged[1]))
		}
		if len(tags) > 0 {
			fmt.Fprintf(&sb, " [%s]", strings.Join(tags, "; "))
		}
		fmt.Fprintf(&sb, "; %d sites\n", len(k.Sites))
	}
	for _, n := range s.Notes {
		fmt.Fprintf(&sb, "  - %s\n", n)
	}
	return sb.String()
}
