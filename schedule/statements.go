package schedule

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/polyhedral"
	"github.com/gxbit/gxbit/profile"
)

// Statement distribution (RATIONALE).
//
// bicg computes q = A·p and s = Aᵀ·r in one loop nest: for i { for j {
// s[j] += r[i]·A[i][j]; q[i] += A[i][j]·p[j] } } (gcc keeps q[i]'s sum in a
// register and stores it after the j loop). No level is parallel as a
// whole — i carries s, j carries the sum — and there is no sibling loop to
// split between, so the nest would stay on the CPU, reading all of A. Each
// statement alone has a parallel level: q's is i (j a reduction in the
// thread), s's is j (i moves inside the thread, which then updates s[j] in
// i's order). So the schedule splits the body between its statements:
// one kernel per written array, each running the body sliced down to that
// array's stores and what feeds them (gvinst.SliceStores: registers
// through the nest's instructions, memory through the array groups).
//
// It is legal when no statement reads an array another one writes (then
// running all of one before all of another changes no value) and each
// statement's slice reads no register a dropped statement carries; the
// levels' verdicts for a statement come from the exact test on its own
// sites and from the registers its slice reads (the profile's scalars).

// statement is one written array's part of a loop body.
type statement struct {
	group  int
	stores []int        // its write sites
	sites  map[int]bool // its sites: the loads and stores its slice keeps
	slots  []gvinst.Reg // the guest slots its slice reads
}

// distributeStatements splits loop p.n, which carries a dependence and
// holds one loop c with no loop inside it, between the statements of its
// body when each then has a parallel level; it reports whether it did
// (appending one kernel per statement), noting why not when it tried.
func (m *model) distributeStatements(s *Schedule, p part) bool {
	n := p.n
	if !p.whole || len(p.children) != 1 || len(p.children[0].children) != 0 {
		return false
	}
	c := p.children[0]
	sites := m.partSites(p)
	var groups []int
	for _, i := range sites {
		if a := m.hs.Accesses[i]; a.Kind == "write" && !slices.Contains(groups, a.Group) {
			groups = append(groups, a.Group)
		}
	}
	if len(groups) < 2 {
		return false
	}
	sort.Ints(groups)
	refuse := func(format string, args ...any) bool {
		s.note("%s's statements are not split: %s", n.loop.Index, fmt.Sprintf(format, args...))
		return false
	}
	if !n.memoryOnly {
		return refuse("%s carries a register or was not analysed (%s)", n.loop.Index, n.loop.Why)
	}
	blocks, err := m.blocks()
	if err != nil {
		return refuse("%v", err)
	}
	stmts, why := m.statements(blocks, sites, groups)
	if why != "" {
		return refuse("%s", why)
	}
	var kernels []Kernel
	var words []string
	for _, st := range stmts {
		sp := part{n: n, children: p.children, only: st.sites}
		for _, i := range p.sites {
			if st.sites[i] {
				sp.sites = append(sp.sites, i)
			}
		}
		vn, whyN, regN := m.statementVerdict(sp, st, n)
		vc, whyC, _ := m.statementVerdict(sp, st, c)
		outer, inner := n.loop, c.loop
		outer.Verdict, outer.Why = vn, whyN
		inner.Verdict, inner.Why = vc, whyC
		k := Kernel{Sites: m.partSites(sp), Distributed: true, Stores: st.stores}
		switch {
		case vn == profile.VerdictParallel && vc == profile.VerdictParallel:
			k.Grid = []Loop{outer, inner}
		case vn == profile.VerdictParallel:
			k.Grid, k.Thread = []Loop{outer}, []Loop{inner}
		case vc == profile.VerdictParallel:
			r := m.interchangeRefusal(sp, c)
			if regN {
				r = fmt.Sprintf("the statement reads a register %s carries", n.loop.Index)
			}
			if r != "" {
				return refuse("the statement of the %s: %s is %s (%s) and %s cannot move inside %s: %s", m.siteNames(st.stores), n.loop.Index, vn, whyN, n.loop.Index, c.loop.Index, r)
			}
			outer.Verdict, outer.Why = m.afterInterchange(sp, c)
			k.Grid, k.Thread, k.Interchanged = []Loop{inner}, []Loop{outer}, [2]string{n.loop.Index, c.loop.Index}
		default:
			return refuse("the statement of the %s has no parallel level (%s: %s — %s; %s: %s — %s)", m.siteNames(st.stores), n.loop.Index, vn, whyN, c.loop.Index, vc, whyC)
		}
		kernels = append(kernels, k)
		words = append(words, fmt.Sprintf("%s (%s)", m.siteNames(st.stores), kernelText(k)))
	}
	// Kernels without an interchange first: they need no other order.
	sort.SliceStable(kernels, func(a, b int) bool { return kernels[a].Interchanged[0] == "" && kernels[b].Interchanged[0] != "" })
	s.Kernels = append(s.Kernels, kernels...)
	s.note("split the body of %s between its %d statements, one kernel each: %s; no statement reads an array another writes, nor a register another carries", n.loop.Index, len(stmts), strings.Join(words, "; "))
	return true
}

// statements groups the sites of a loop body by the array each statement
// writes (groups): a statement's sites are those its slice keeps. It says
// why not when a statement's slice reads an array another one writes, or
// a store is not one of the nest's sites.
func (m *model) statements(blocks map[uint64]*gvinst.VBlock, sites []int, groups []int) ([]statement, string) {
	writeOf := map[uint64]int{} // x86 of a write site → its group
	readsOf := map[uint64][]int{}
	stackStore := map[uint64]bool{}
	for _, i := range sites {
		a := m.hs.Accesses[i]
		if a.Kind == "write" {
			writeOf[uint64(a.X86)] = a.Group
		} else {
			readsOf[uint64(a.X86)] = append(readsOf[uint64(a.X86)], i)
		}
	}
	for _, a := range m.hs.Accesses {
		if a.Stack && a.Kind == "write" {
			stackStore[uint64(a.X86)] = true
		}
	}
	var out []statement
	for _, g := range groups {
		st := statement{group: g, sites: map[int]bool{}}
		for _, i := range sites {
			if a := m.hs.Accesses[i]; a.Kind == "write" && a.Group == g {
				st.stores = append(st.stores, i)
				st.sites[i] = true
			}
		}
		sl := gvinst.SliceStores(blocks, func(in *gvinst.Inst) bool {
			wg, ok := writeOf[in.X86]
			// A store the nest's sites do not name (a stack slot's) stays:
			// a kept load may read what it wrote.
			return ok && wg == g || !ok
		})
		for _, b := range sl.Blocks {
			for _, in := range b.Insts {
				if in.Op.Info().Effects&gvinst.EffLoad == 0 {
					continue
				}
				for _, i := range readsOf[in.X86] {
					if a := m.hs.Accesses[i]; a.Group != g && slices.Contains(groups, a.Group) {
						return nil, fmt.Sprintf("the statement of the %s reads %s, which another statement writes", m.siteNames(st.stores), m.siteNames([]int{i}))
					}
					st.sites[i] = true
				}
			}
		}
		st.slots = sl.Slots
		out = append(out, st)
	}
	return out, ""
}

// statementVerdict is loop x's verdict for statement st (part sp over st's
// sites): the exact test on st's sites, worsened by a register the
// profile finds carried at x that st's slice reads. An inner loop that
// carries a register keeps its own verdict (the profile names no scalar
// of inner loops). register reports a register dependence.
func (m *model) statementVerdict(sp part, st statement, x *node) (verdict, why string, register bool) {
	level := slices.IndexFunc(m.hs.Levels, func(l profile.Level) bool { return l.Index == x.loop.Index })
	if level < 0 && !x.memoryOnly {
		return x.loop.Verdict, x.loop.Why, true
	}
	nest, lvl, err := m.nestOf(sp.n, m.partSites(sp), nil)
	if err != nil {
		return profile.VerdictSequential, err.Error(), false
	}
	if x != sp.n {
		lvl = slices.IndexFunc(nest.Domain.Levels, func(l polyhedral.Level) bool { return l.Index == x.loop.Index })
	}
	vs, err := polyhedral.Analyze(nest, polyhedral.Options{DistinctBases: true})
	if err != nil || lvl < 0 {
		return profile.VerdictSequential, fmt.Sprintf("dependence test failed: %v", err), false
	}
	verdict, why = profile.VerdictSequential, vs[lvl].Reason
	switch vs[lvl].Kind {
	case polyhedral.LevelParallel:
		verdict, why = profile.VerdictParallel, "no dependence carried by the statement's sites (exact test)"
	case polyhedral.LevelReduction:
		verdict = profile.VerdictReduction
	}
	for _, sc := range m.hs.Scalars {
		if sc.Level != level || sc.Kind != "reduction" && sc.Kind != "carried" {
			continue
		}
		r, ok := gvinst.ParseReg(sc.Loc.Reg)
		if ok && !slices.Contains(st.slots, r) {
			continue // the statement does not read it
		}
		register = true
		switch {
		case sc.Kind == "reduction" && verdict != profile.VerdictSequential:
			verdict, why = profile.VerdictReduction, fmt.Sprintf("accumulates into %s", sc.Loc)
		default:
			return profile.VerdictSequential, fmt.Sprintf("register %s carries a value from one iteration to the next", sc.Loc), true
		}
	}
	return verdict, why, register
}

// blocks parses the hot spot's GVInst, by block address.
func (m *model) blocks() (map[uint64]*gvinst.VBlock, error) {
	if len(m.hs.Blocks) == 0 {
		return nil, fmt.Errorf("the profile holds no GVInst of the nest")
	}
	out := map[uint64]*gvinst.VBlock{}
	for _, bt := range m.hs.Blocks {
		bs, err := gvinst.Parse(bt.GVInst)
		if err != nil {
			return nil, fmt.Errorf("the nest's block at %s: %v", bt.Addr, err)
		}
		for _, b := range bs {
			out[b.Addr] = b
		}
	}
	return out, nil
}

// kernelText is one kernel's grid and thread loops, as Summary prints
// them.
func kernelText(k Kernel) string {
	t := "grid " + gridNames(k.Grid)
	if len(k.Thread) > 0 {
		t += ", " + names(k.Thread) + " in the thread"
	}
	if k.Interchanged[0] != "" {
		t += ", interchanged"
	}
	return t
}
