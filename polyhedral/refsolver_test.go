package polyhedral

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// refSolver is the solver as it was before its fast paths (commit 74d1f00),
// kept as the reference of TestSolverMatchesReference: it decides integer feasibility of a problem with the Omega test (Pugh,
// 1991): exact equality elimination with the symmetric-modulo step, then
// Fourier–Motzkin elimination that is exact when a unit coefficient makes it
// so, and otherwise real shadow, dark shadow and splintering.
type refSolver struct {
	steps, maxSteps int
	ovf             bool
}

func (s *refSolver) add(a, b int64) int64 {
	r, ok := add64(a, b)
	if !ok {
		s.ovf = true
	}
	return r
}

func (s *refSolver) mul(a, b int64) int64 {
	r, ok := mul64(a, b)
	if !ok {
		s.ovf = true
	}
	return r
}

// axpy returns a*x + y.
func (s *refSolver) axpy(a int64, x, y lin) lin {
	r := lin{c: make([]int64, len(y.c)), k: s.add(s.mul(a, x.k), y.k)}
	for i := range r.c {
		r.c[i] = s.add(s.mul(a, x.c[i]), y.c[i])
	}
	return r
}

// combine returns a*x + b*y.
func (s *refSolver) combine(a int64, x lin, b int64, y lin) lin {
	return s.axpy(a, x, s.axpy(b, y, lin{c: make([]int64, len(y.c))}))
}

// eval returns the value of l at point v.
func (s *refSolver) eval(l lin, v []int64) int64 {
	acc := l.k
	for i, c := range l.c {
		if c != 0 {
			acc = s.add(acc, s.mul(c, v[i]))
		}
	}
	return acc
}

// solve returns an integer point satisfying p (len p.nv), or ok=false when
// none exists. Errors are ErrOverflow and ErrTooComplex.
func (s *refSolver) solve(p problem) (point []int64, ok bool, err error) {
	if s.maxSteps == 0 {
		s.maxSteps = defaultMaxSteps
	}
	s.steps++
	if s.steps > s.maxSteps {
		return nil, false, ErrTooComplex
	}
	if s.ovf {
		return nil, false, ErrOverflow
	}
	if !s.normalize(&p) {
		if s.ovf {
			return nil, false, ErrOverflow
		}
		return nil, false, nil
	}
	if len(p.eqs) > 0 {
		return s.solveEq(p)
	}
	if len(p.ges) == 0 {
		return make([]int64, p.nv), true, nil
	}
	return s.eliminate(p)
}

// solveEq removes one variable using an equality.
func (s *refSolver) solveEq(p problem) ([]int64, bool, error) {
	// Prefer an equality with a unit coefficient; otherwise take the
	// smallest coefficient and apply the symmetric-modulo step.
	bestE, bestX := -1, -1
	var bestA int64
	for ei, e := range p.eqs {
		for x, c := range e.c {
			if c == 0 {
				continue
			}
			if a := abs64(c); bestE < 0 || a < bestA {
				bestE, bestX, bestA = ei, x, a
			}
		}
	}
	eq := p.eqs[bestE]
	x := bestX
	a := eq.c[x]
	nv := p.nv
	var def lin // x = def
	rest := p.eqs
	if bestA == 1 {
		// a*x + r = 0  =>  x = -a*r (a = ±1).
		r := lin{c: append([]int64(nil), eq.c...), k: eq.k}
		r.c[x] = 0
		def = s.axpy(-a, r, lin{c: make([]int64, nv)})
		rest = append(append([]lin(nil), p.eqs[:bestE]...), p.eqs[bestE+1:]...)
	} else {
		// m = |a|+1; sum (c_i mod^ m) x_i + (k mod^ m) = m*sigma, where the
		// coefficient of x becomes -sign(a). Solve that for x.
		m := bestA + 1
		nv++
		sig := lin{c: make([]int64, nv)}
		for i, c := range eq.c {
			if i != x {
				sig.c[i] = modHat(c, m)
			}
		}
		sig.k = modHat(eq.k, m)
		sig.c[nv-1] = -m
		sign := int64(1)
		if a < 0 {
			sign = -1
		}
		def = s.axpy(sign, sig, lin{c: make([]int64, nv)})
		p = refWiden(p, nv)
		rest = p.eqs
	}
	q := problem{nv: nv}
	for _, e := range rest {
		q.eqs = append(q.eqs, s.subst(e, x, def))
	}
	for _, g := range p.ges {
		q.ges = append(q.ges, s.subst(g, x, def))
	}
	pt, ok, err := s.solve(q)
	if !ok || err != nil {
		return nil, ok, err
	}
	pt[x] = s.eval(def, pt)
	if s.ovf {
		return nil, false, ErrOverflow
	}
	return pt[:p.nv:p.nv], true, nil
}

// widen returns p with every constraint extended to nv variables.
func refWiden(p problem, nv int) problem {
	ext := func(ls []lin) []lin {
		out := make([]lin, len(ls))
		for i, l := range ls {
			c := make([]int64, nv)
			copy(c, l.c)
			out[i] = lin{c: c, k: l.k}
		}
		return out
	}
	return problem{nv: p.nv, eqs: ext(p.eqs), ges: ext(p.ges)}
}

// subst replaces x in l by def (def does not mention x).
func (s *refSolver) subst(l lin, x int, def lin) lin {
	if len(l.c) < len(def.c) {
		c := make([]int64, len(def.c))
		copy(c, l.c)
		l = lin{c: c, k: l.k}
	}
	a := l.c[x]
	if a == 0 {
		return l
	}
	r := s.axpy(a, def, l)
	r.c[x] = 0
	return r
}

// eliminate removes one variable from an inequality-only problem.
func (s *refSolver) eliminate(p problem) ([]int64, bool, error) {
	x, exact := s.pickVar(p)
	var lows, ups, other []lin
	for _, g := range p.ges {
		switch c := g.c[x]; {
		case c > 0:
			lows = append(lows, g)
		case c < 0:
			ups = append(ups, g)
		default:
			other = append(other, g)
		}
	}
	finish := func(pt []int64) ([]int64, bool, error) {
		v, err := s.pick(x, lows, ups, pt)
		if err != nil {
			return nil, false, err
		}
		pt[x] = v
		return pt, true, nil
	}
	if len(lows) == 0 || len(ups) == 0 || exact {
		pt, ok, err := s.solve(problem{nv: p.nv, ges: append(other, s.shadow(x, lows, ups, false)...)})
		if !ok || err != nil {
			return nil, ok, err
		}
		return finish(pt)
	}
	if _, ok, err := s.solve(problem{nv: p.nv, ges: append(append([]lin(nil), other...), s.shadow(x, lows, ups, false)...)}); !ok || err != nil {
		return nil, false, err
	}
	pt, ok, err := s.solve(problem{nv: p.nv, ges: append(append([]lin(nil), other...), s.shadow(x, lows, ups, true)...)})
	if err != nil {
		return nil, false, err
	}
	if ok {
		return finish(pt)
	}
	// Splinter: any integer solution outside the dark shadow lies close to
	// some lower bound a*x >= L, at a*x = L+i for 0 <= i <= (m*a-a-m)/m,
	// where m is the largest upper-bound coefficient.
	var m int64
	for _, u := range ups {
		m = max(m, -u.c[x])
	}
	for _, l := range lows {
		a := l.c[x]
		top := floorDiv(s.add(s.mul(m, a), -s.add(a, m)), m)
		for i := int64(0); i <= top; i++ {
			eq := lin{c: l.c, k: s.add(l.k, -i)}
			pt, ok, err := s.solve(problem{nv: p.nv, eqs: []lin{eq}, ges: p.ges})
			if ok || err != nil {
				return pt, ok, err
			}
		}
	}
	return nil, false, nil
}

// pickVar chooses the variable to eliminate: one unbounded on a side first,
// then one whose elimination is exact, then the fewest new constraints.
func (s *refSolver) pickVar(p problem) (x int, exact bool) {
	best, bestScore, bestExact := -1, 0, false
	for v := 0; v < p.nv; v++ {
		nl, nu := 0, 0
		unitL, unitU := true, true
		for _, g := range p.ges {
			switch c := g.c[v]; {
			case c > 0:
				nl++
				unitL = unitL && c == 1
			case c < 0:
				nu++
				unitU = unitU && c == -1
			}
		}
		if nl+nu == 0 {
			continue
		}
		if nl == 0 || nu == 0 {
			return v, true
		}
		ex := unitL || unitU
		score := nl*nu - nl - nu
		if best < 0 || (ex && !bestExact) || (ex == bestExact && score < bestScore) {
			best, bestScore, bestExact = v, score, ex
		}
	}
	return best, bestExact
}

// shadow pairs every lower bound a*x + L >= 0 with every upper bound
// -b*x + U >= 0 into b*L + a*U >= 0 (the real shadow), minus (a-1)(b-1) for
// the dark shadow.
func (s *refSolver) shadow(x int, lows, ups []lin, dark bool) []lin {
	var out []lin
	for _, l := range lows {
		for _, u := range ups {
			a, b := l.c[x], -u.c[x]
			r := s.combine(b, l, a, u)
			r.c[x] = 0
			if dark {
				r.k = s.add(r.k, -s.mul(a-1, b-1))
			}
			out = append(out, r)
		}
	}
	return out
}

// pick chooses an integer value for x given the other coordinates of pt: the
// smallest one above every lower bound, or the largest below every upper
// bound when there is no lower bound.
func (s *refSolver) pick(x int, lows, ups []lin, pt []int64) (int64, error) {
	pt[x] = 0
	lo, hi := int64(minInt64), int64(maxInt64)
	for _, l := range lows {
		lo = max(lo, ceilDiv(s.mul(-1, s.eval(l, pt)), l.c[x]))
	}
	for _, u := range ups {
		hi = min(hi, floorDiv(s.eval(u, pt), -u.c[x]))
	}
	if s.ovf {
		return 0, ErrOverflow
	}
	if lo > hi {
		return 0, errWitness
	}
	if len(lows) == 0 {
		return hi, nil
	}
	return lo, nil
}

// normalize divides every constraint by the gcd of its coefficients
// (tightening inequality constants toward the integer hull), drops trivial
// constraints, merges duplicate and opposite inequalities, and reports
// false when a contradiction is found.
func (s *refSolver) normalize(p *problem) bool {
	eqs := p.eqs[:0:0]
	for _, e := range p.eqs {
		g := gcdVec(e.c)
		if g == 0 {
			if e.k != 0 {
				return false
			}
			continue
		}
		if e.k%g != 0 {
			return false
		}
		eqs = append(eqs, refDivLin(e, g, false))
	}
	seen := map[string]int{}
	ges := p.ges[:0:0]
	for _, g0 := range p.ges {
		g := gcdVec(g0.c)
		if g == 0 {
			if g0.k < 0 {
				return false
			}
			continue
		}
		l := refDivLin(g0, g, true)
		key := refLinKey(l.c, false)
		if i, ok := seen[key]; ok {
			ges[i].k = min(ges[i].k, l.k)
			continue
		}
		seen[key] = len(ges)
		ges = append(ges, l)
	}
	// Opposite pairs: c·x + k1 >= 0 and -c·x + k2 >= 0 need k1 + k2 >= 0,
	// and with equality they pin c·x = -k1.
	kept := ges[:0:0]
	for i, g := range ges {
		j, ok := seen[refLinKey(g.c, true)]
		if !ok || j == i {
			kept = append(kept, g)
			continue
		}
		sum := s.add(g.k, ges[j].k)
		if sum < 0 {
			return false
		}
		if sum == 0 {
			if i < j {
				eqs = append(eqs, g)
			}
			continue
		}
		kept = append(kept, g)
	}
	p.eqs, p.ges = eqs, kept
	return !s.ovf
}

// refDivLin divides l by g > 0, flooring the constant for inequalities.
func refDivLin(l lin, g int64, floor bool) lin {
	r := lin{c: make([]int64, len(l.c)), k: l.k / g}
	if floor {
		r.k = floorDiv(l.k, g)
	}
	for i, c := range l.c {
		r.c[i] = c / g
	}
	return r
}

// refLinKey encodes a coefficient vector (negated when neg) as a map key.
func refLinKey(c []int64, neg bool) string {
	b := make([]byte, 8*len(c))
	for i, v := range c {
		if neg {
			v = -v
		}
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	}
	return string(b)
}

// solverOutcome is everything a solve tells its caller, and the steps it
// took (which decide ErrTooComplex in a larger solve).
type solverOutcome struct {
	point []int64
	ok    bool
	err   error
	steps int
	ovf   bool
}

// compareSolvers solves p with the reference solver and with reused (its
// stacks left as earlier solves left them), both under maxSteps, and
// reports any difference.
func compareSolvers(t *testing.T, name string, p problem, maxSteps int, reused *solver) solverOutcome {
	t.Helper()
	ref := refSolver{maxSteps: maxSteps}
	pt, ok, err := ref.solve(cloneProblem(p))
	want := solverOutcome{pt, ok, err, ref.steps, ref.ovf}
	reused.steps, reused.maxSteps, reused.ovf = 0, maxSteps, false
	in := cloneProblem(p)
	pt, ok, err = reused.solve(in)
	got := solverOutcome{pt, ok, err, reused.steps, reused.ovf}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: solver gives %+v, reference %+v\n%+v", name, got, want, p)
	}
	if !reflect.DeepEqual(in, p) {
		t.Fatalf("%s: the solver wrote its input", name)
	}
	return want
}

func cloneProblem(p problem) problem {
	clone := func(ls []lin) []lin {
		if ls == nil {
			return nil
		}
		out := make([]lin, len(ls))
		for i, l := range ls {
			out[i] = lin{c: append([]int64(nil), l.c...), k: l.k}
		}
		return out
	}
	return problem{nv: p.nv, eqs: clone(p.eqs), ges: clone(p.ges)}
}

// TestSolverMatchesReference checks the solver against the reference (the
// solver before its fast paths) on random problems: the same point, the
// same answer and error, the same number of steps. Small budgets stop
// solves at every point of their search, and large coefficients
// overflow.
func TestSolverMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	n := 3000
	if testing.Short() {
		n = 500
	}
	// A budget below the default keeps the problems that splinter long
	// (large boxes, large coefficients) quick.
	const budget = 3000
	reused := new(solver)
	var budgeted, overflowed, tooComplex int
	for it := range n {
		nv := 1 + r.IntN(6)
		box := []int64{2, 4, 30, 1000, 1 << 40}[r.IntN(5)]
		maxc := []int64{1, 3, 7, 50, 3000, 1 << 31, 1 << 60}[r.IntN(7)]
		p := randomProblem(r, nv, box, maxc)
		for range r.IntN(3) {
			p.eqs = append(p.eqs, randomProblem(r, nv, box, maxc).ges[2*nv:]...)
		}
		name := fmt.Sprintf("case %d", it)
		full := compareSolvers(t, name, p, budget, reused)
		switch {
		case errors.Is(full.err, ErrOverflow):
			overflowed++
		case errors.Is(full.err, ErrTooComplex):
			tooComplex++
		}
		if full.steps > 1 {
			budgeted++
			compareSolvers(t, name+" (budget)", p, 1+r.IntN(full.steps), reused)
		}
	}
	if overflowed == 0 || tooComplex == 0 || budgeted < n/10 {
		t.Errorf("generator too tame: %d overflows, %d out of budget, %d solved again under a smaller budget, of %d", overflowed, tooComplex, budgeted, n)
	}
	t.Logf("%d problems: %d overflowed, %d ran out of a budget of %d steps, %d solved again under a smaller one", n, overflowed, tooComplex, budget, budgeted)
}

// TestSolverMatchesReferenceOnNests checks the solver against the
// reference on the dependence systems of the recorded nests: every system
// Analyze solves there, under the default budget and under a smaller one.
func TestSolverMatchesReferenceOnNests(t *testing.T) {
	rs, err := readNestFile(nestsFile)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	reused := new(solver)
	systems := 0
	for i, rec := range rs {
		n, opts, err := rec.nest()
		if err != nil {
			t.Fatal(err)
		}
		if testing.Short() && i%10 != 0 {
			continue
		}
		d := n.Domain
		params := d.paramsOnly(opts.Params)
		for level := range d.Levels {
			for x, a := range n.Accesses {
				for _, b := range n.Accesses[x:] {
					if a.Kind == Read && b.Kind == Read {
						continue
					}
					for _, dir := range []int64{1, -1} {
						y := dependenceSystem(d, a, b, level, dir, params)
						p, _, err := y.lower(new(solver))
						if err != nil {
							continue
						}
						systems++
						name := fmt.Sprintf("%s:%d level %d %s %s dir %d", nestsFile, i+1, level, a.Site, b.Site, dir)
						full := compareSolvers(t, name, p, opts.MaxSteps, reused)
						if full.steps > 1 {
							compareSolvers(t, name+" (budget)", p, 1+r.IntN(full.steps), reused)
						}
					}
				}
			}
		}
	}
	t.Logf("%d systems", systems)
}
