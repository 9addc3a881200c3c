package polyhedral

import (
	"encoding/binary"
	"errors"
)

// ErrTooComplex reports that the exact integer test ran past its step budget.
// Callers must treat the question as undecided (conservatively: dependent).
var ErrTooComplex = errors.New("polyhedral: integer test exceeded its step budget")

// errWitness reports a broken internal invariant of the solver: a projection
// said feasible but no integer value fits the eliminated variable.
var errWitness = errors.New("polyhedral: internal error: no witness value in a feasible projection")

// defaultMaxSteps bounds the number of subproblems one solve may visit.
const defaultMaxSteps = 200000

// lin is the dense affine form sum c[i]*x[i] + k.
type lin struct {
	c []int64
	k int64
}

// problem is a conjunction of equalities (lin == 0) and inequalities
// (lin >= 0) over nv integer variables.
type problem struct {
	nv  int
	eqs []lin
	ges []lin
}

// solver decides integer feasibility of a problem with the Omega test (Pugh,
// 1991): exact equality elimination with the symmetric-modulo step, then
// Fourier–Motzkin elimination that is exact when a unit coefficient makes it
// so, and otherwise real shadow, dark shadow and splintering.
type solver struct {
	steps, maxSteps int
	ovf             bool
}

func (s *solver) add(a, b int64) int64 {
	r, ok := add64(a, b)
	if !ok {
		s.ovf = true
	}
	return r
}

func (s *solver) mul(a, b int64) int64 {
	r, ok := mul64(a, b)
	if !ok {
		s.ovf = true
	}
	return r
}

// axpy returns a*x + y.
func (s *solver) axpy(a int64, x, y lin) lin {
	r := lin{c: make([]int64, len(y.c)), k: s.add(s.mul(a, x.k), y.k)}
	for i := range r.c {
		r.c[i] = s.add(s.mul(a, x.c[i]), y.c[i])
	}
	return r
}

// combine returns a*x + b*y.
func (s *solver) combine(a int64, x lin, b int64, y lin) lin {
	return s.axpy(a, x, s.axpy(b, y, lin{c: make([]int64, len(y.c))}))
}

// eval returns the value of l at point v.
func (s *solver) eval(l lin, v []int64) int64 {
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
func (s *solver) solve(p problem) (point []int64, ok bool, err error) {
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
func (s *solver) solveEq(p problem) ([]int64, bool, error) {
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
		p = widen(p, nv)
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
func widen(p problem, nv int) problem {
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
func (s *solver) subst(l lin, x int, def lin) lin {
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
func (s *solver) eliminate(p problem) ([]int64, bool, error) {
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
func (s *solver) pickVar(p problem) (x int, exact bool) {
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
func (s *solver) shadow(x int, lows, ups []lin, dark bool) []lin {
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
func (s *solver) pick(x int, lows, ups []lin, pt []int64) (int64, error) {
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
func (s *solver) normalize(p *problem) bool {
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
		eqs = append(eqs, divLin(e, g, false))
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
		l := divLin(g0, g, true)
		key := linKey(l.c, false)
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
		j, ok := seen[linKey(g.c, true)]
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

// divLin divides l by g > 0, flooring the constant for inequalities.
func divLin(l lin, g int64, floor bool) lin {
	r := lin{c: make([]int64, len(l.c)), k: l.k / g}
	if floor {
		r.k = floorDiv(l.k, g)
	}
	for i, c := range l.c {
		r.c[i] = c / g
	}
	return r
}

// linKey encodes a coefficient vector (negated when neg) as a map key.
func linKey(c []int64, neg bool) string {
	b := make([]byte, 8*len(c))
	for i, v := range c {
		if neg {
			v = -v
		}
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	}
	return string(b)
}

// gcdVec returns the gcd of the absolute values (0 for an all-zero vector).
// When the gcd is 2^63 (entries are 0 or MinInt64) it yields 2^62.
func gcdVec(c []int64) int64 {
	var g uint64
	for _, v := range c {
		u := uint64(v)
		if v < 0 {
			u = -u
		}
		for u != 0 {
			g, u = u, g%u
		}
	}
	if g > maxInt64 {
		return 1 << 62
	}
	return int64(g)
}

// modHat is Pugh's symmetric modulo: a - m*floor(a/m + 1/2), in (-m/2, m/2].
func modHat(a, m int64) int64 {
	r := a - m*floorDiv(a, m) // in [0, m)
	if r >= m-r {
		return r - m
	}
	return r
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// floorDiv returns floor(a/b) for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// ceilDiv returns ceil(a/b) for b > 0.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) == (b < 0)) {
		q++
	}
	return q
}
