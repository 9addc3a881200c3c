package polyhedral

import "errors"

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
	// gesNormalized, when set, is what normalizeGes made of ges already:
	// the splinters of one elimination share their inequalities.
	gesNormalized *normalGes
}

// solver decides integer feasibility of a problem with the Omega test (Pugh,
// 1991): exact equality elimination with the symmetric-modulo step, then
// Fourier–Motzkin elimination that is exact when a unit coefficient makes it
// so, and otherwise real shadow, dark shadow and splintering.
//
// The zero solver is ready to use. The constraints it builds live in two
// stacks of reused memory (vecs for coefficient vectors, lists for
// constraint lists) and not on the heap: what one call of solve builds is
// released when it returns, since nothing of it outlives the call but the
// point it returns, which is heap memory. A constraint's coefficients are
// never written once built, so constraints share them freely (subst and
// divLin return their input when it does not change, the splinters share
// their lower bound's).
type solver struct {
	steps, maxSteps int
	ovf             bool
	vecs            stack[int64]
	lists           stack[lin]
	seen            coefTable // normalize's, reused
}

// reset readies s for a new solve under maxSteps, its stacks emptied.
func (s *solver) reset(maxSteps int) {
	s.steps, s.maxSteps, s.ovf = 0, maxSteps, false
	s.release(solverMark{})
}

// solverMark is the top of a solver's stacks.
type solverMark struct{ vecs, lists stackMark }

func (s *solver) mark() solverMark { return solverMark{s.vecs.mark(), s.lists.mark()} }

// release frees everything the solver's stacks handed out since m.
func (s *solver) release(m solverMark) {
	s.vecs.release(m.vecs)
	s.lists.release(m.lists)
}

// vec returns n zero coefficients.
func (s *solver) vec(n int) []int64 {
	c := s.vecs.alloc(n)
	clear(c)
	return c
}

// vecToFill returns n coefficients of any value, for a caller that writes
// every one.
func (s *solver) vecToFill(n int) []int64 { return s.vecs.alloc(n) }

// list returns an empty constraint list with room for n; appending past n
// moves it to the heap, never over the stack's other lists.
func (s *solver) list(n int) []lin { return s.lists.alloc(n)[:0] }

// stack hands out slices of reused chunks in last-in first-out order:
// release(mark()) frees everything allocated since the mark. The slices
// hold what was last written there: callers clear what they do not fill.
type stack[T any] struct {
	chunks     [][]T
	chunk, off int // the next free element is chunks[chunk][off]
}

// stackMark is a stack's top.
type stackMark struct{ chunk, off int }

func (st *stack[T]) mark() stackMark { return stackMark{st.chunk, st.off} }

func (st *stack[T]) release(m stackMark) { st.chunk, st.off = m.chunk, m.off }

// alloc returns n elements, with no capacity past them.
func (st *stack[T]) alloc(n int) []T {
	for ; st.chunk < len(st.chunks); st.chunk, st.off = st.chunk+1, 0 {
		if c := st.chunks[st.chunk]; st.off+n <= len(c) {
			r := c[st.off : st.off+n : st.off+n]
			st.off += n
			return r
		}
	}
	size := 1024
	if k := len(st.chunks); k > 0 {
		size = 2 * len(st.chunks[k-1])
	}
	st.chunks = append(st.chunks, make([]T, max(size, n)))
	st.chunk, st.off = len(st.chunks)-1, n
	return st.chunks[st.chunk][:n:n]
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
	r := lin{c: s.vecToFill(len(y.c)), k: s.add(s.mul(a, x.k), y.k)}
	for i := range r.c {
		r.c[i] = s.add(s.mul(a, x.c[i]), y.c[i])
	}
	return r
}

// scale returns a*x with n coefficients: axpy(a, x, 0), whose additions of
// 0 neither change a value nor overflow.
func (s *solver) scale(a int64, x lin, n int) lin {
	r := lin{c: s.vecToFill(n), k: s.mul(a, x.k)}
	for i := range r.c {
		r.c[i] = s.mul(a, x.c[i])
	}
	return r
}

// combine returns a*x + b*y.
func (s *solver) combine(a int64, x lin, b int64, y lin) lin {
	r := lin{c: s.vecToFill(len(y.c)), k: s.add(s.mul(a, x.k), s.mul(b, y.k))}
	for i := range r.c {
		r.c[i] = s.add(s.mul(a, x.c[i]), s.mul(b, y.c[i]))
	}
	return r
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
	defer s.release(s.mark())
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
		r := lin{c: s.vecToFill(len(eq.c)), k: eq.k}
		copy(r.c, eq.c)
		r.c[x] = 0
		def = s.scale(-a, r, nv)
		rest = append(append(s.list(len(p.eqs)-1), p.eqs[:bestE]...), p.eqs[bestE+1:]...)
	} else {
		// m = |a|+1; sum (c_i mod^ m) x_i + (k mod^ m) = m*sigma, where the
		// coefficient of x becomes -sign(a). Solve that for x.
		m := bestA + 1
		nv++
		sig := lin{c: s.vec(nv)}
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
		def = s.scale(sign, sig, nv)
		p = s.widen(p, nv)
		rest = p.eqs
	}
	q := problem{nv: nv, eqs: s.list(len(rest)), ges: s.list(len(p.ges))}
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
func (s *solver) widen(p problem, nv int) problem {
	ext := func(ls []lin) []lin {
		out := s.list(len(ls))[:len(ls)]
		for i, l := range ls {
			c := s.vec(nv)
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
		c := s.vec(len(def.c))
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
	lows, ups, other := s.list(len(p.ges)), s.list(len(p.ges)), s.list(len(p.ges))
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
	// projection returns the other constraints and the real (or dark)
	// shadow of the bounds on x.
	projection := func(dark bool) problem {
		ges := s.list(len(other) + len(lows)*len(ups))
		ges = append(ges, other...)
		return problem{nv: p.nv, ges: s.appendShadow(ges, x, lows, ups, dark)}
	}
	if len(lows) == 0 || len(ups) == 0 || exact {
		pt, ok, err := s.solve(projection(false))
		if !ok || err != nil {
			return nil, ok, err
		}
		return finish(pt)
	}
	m := s.mark()
	_, ok, err := s.solve(projection(false))
	s.release(m)
	if !ok || err != nil {
		return nil, false, err
	}
	pt, ok, err := s.solve(projection(true))
	if err != nil {
		return nil, false, err
	}
	if ok {
		return finish(pt)
	}
	// Splinter: any integer solution outside the dark shadow lies close to
	// some lower bound a*x >= L, at a*x = L+i for 0 <= i <= (m*a-a-m)/m,
	// where m is the largest upper-bound coefficient.
	var mu int64
	for _, u := range ups {
		mu = max(mu, -u.c[x])
	}
	eqs := s.list(1)[:1] // each splinter's one equality; solve does not write its input
	// Every splinter has the inequalities p.ges, and normalize's work on
	// them, which does not look at the equality, is the same each time: it
	// is done once, at the first splinter, with s.ovf false as in a
	// splinter's normalize, and replayed in the others (overflow included).
	var ges *normalGes
	for _, l := range lows {
		a := l.c[x]
		top := floorDiv(s.add(s.mul(mu, a), -s.add(a, mu)), mu)
		for i := int64(0); i <= top; i++ {
			eqs[0] = lin{c: l.c, k: s.add(l.k, -i)}
			if ges == nil && !s.ovf {
				// (With s.ovf set, solve returns ErrOverflow before normalize.)
				r := s.normalizeGes(p.ges)
				ges = &r
				s.ovf = false
			}
			pt, ok, err := s.solve(problem{nv: p.nv, eqs: eqs, ges: p.ges, gesNormalized: ges})
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

// appendShadow pairs every lower bound a*x + L >= 0 with every upper bound
// -b*x + U >= 0 into b*L + a*U >= 0 (the real shadow), minus (a-1)(b-1) for
// the dark shadow, and appends them to out.
func (s *solver) appendShadow(out []lin, x int, lows, ups []lin, dark bool) []lin {
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
// false when a contradiction is found. It builds new lists and does not
// write p's.
func (s *solver) normalize(p *problem) bool {
	// Opposite inequalities add at most one equality per two.
	eqs := s.list(len(p.eqs) + len(p.ges))
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
		eqs = append(eqs, s.divLin(e, g, false))
	}
	// The inequalities' part does not depend on the equalities.
	var r normalGes
	if p.gesNormalized != nil {
		r = *p.gesNormalized
		s.ovf = r.ovf // false before: solve checked it
	} else {
		r = s.normalizeGes(p.ges)
	}
	if !r.ok {
		return false
	}
	p.eqs, p.ges, p.gesNormalized = append(eqs, r.eqs...), r.ges, nil
	return true
}

// normalGes is what normalize makes of a list of inequalities: whether it
// found no contradiction and no overflow (ok), whether it overflowed (it
// set the solver's ovf), the equalities that opposite pairs pin, and the
// inequalities kept. It depends on the list alone.
type normalGes struct {
	ok, ovf bool
	eqs     []lin
	ges     []lin
}

// normalizeGes is normalize's work on the inequalities ges, with s.ovf
// false on entry.
func (s *solver) normalizeGes(in []lin) normalGes {
	var eqs []lin
	// The inequalities by coefficient vector: a duplicate's constant goes
	// to the first one with those coefficients.
	seen := &s.seen
	seen.reset(len(in))
	ges := s.list(len(in))
	for _, g0 := range in {
		g := gcdVec(g0.c)
		if g == 0 {
			if g0.k < 0 {
				return normalGes{ovf: s.ovf}
			}
			continue
		}
		l := s.divLin(g0, g, true)
		h := coefHash(l.c)
		if i, ok := seen.find(ges, h, l.c, false); ok {
			ges[i].k = min(ges[i].k, l.k)
			continue
		}
		seen.insert(h, len(ges))
		ges = append(ges, l)
	}
	// Opposite pairs: c·x + k1 >= 0 and -c·x + k2 >= 0 need k1 + k2 >= 0,
	// and with equality they pin c·x = -k1.
	kept := s.list(len(ges))
	for i, g := range ges {
		j, ok := seen.find(ges, -seen.hashes[i], g.c, true)
		if !ok || j == i {
			kept = append(kept, g)
			continue
		}
		sum := s.add(g.k, ges[j].k)
		if sum < 0 {
			return normalGes{ovf: s.ovf}
		}
		if sum == 0 {
			if i < j {
				if eqs == nil {
					eqs = s.list(len(ges) / 2)
				}
				eqs = append(eqs, g)
			}
			continue
		}
		kept = append(kept, g)
	}
	return normalGes{ok: !s.ovf, ovf: s.ovf, eqs: eqs, ges: kept}
}

// coefTable finds a coefficient vector among those of a constraint list,
// as the byte strings of the vectors would in a map: two vectors match
// when they are equal element by element, lengths included. It is an
// open-addressing hash table.
type coefTable struct {
	hashes []uint64 // coefHash of each vector in the list, by index
	slots  []int32  // index+1 in the list, 0 for free
	shift  uint     // 64 - log2(len(slots))
}

// reset empties the table for a list of up to n vectors.
func (t *coefTable) reset(n int) {
	t.hashes = t.hashes[:0]
	size, bits := 16, uint(4)
	for size < 2*n {
		size, bits = size*2, bits+1
	}
	if cap(t.slots) < size {
		t.slots = make([]int32, size)
	}
	t.slots = t.slots[:size]
	clear(t.slots)
	t.shift = 64 - bits
}

// coefHash hashes a coefficient vector: a sum of each coefficient times a
// pseudo-random odd multiplier of its position, mod 2^64. It is linear,
// so the hash of -c is -coefHash(c) (negation wraps in int64 as in
// uint64), and one pass serves both the duplicate and the opposite
// lookup.
func coefHash(c []int64) uint64 {
	var h uint64
	m := uint64(0x9e3779b97f4a7c15)
	for _, v := range c {
		h += uint64(v) * m
		m = m*6364136223846793005 + 1442695040888963407 | 1
	}
	return h
}

// find returns the index in ls of the vector equal to c (to -c when neg),
// whose hash is h.
func (t *coefTable) find(ls []lin, h uint64, c []int64, neg bool) (int, bool) {
	mask := uint64(len(t.slots) - 1)
	for x := (h * 0x9e3779b97f4a7c15) >> t.shift; t.slots[x] != 0; x = (x + 1) & mask {
		i := int(t.slots[x]) - 1
		if t.hashes[i] == h && sameCoefs(ls[i].c, c, neg) {
			return i, true
		}
	}
	return 0, false
}

// insert records that the vector with hash h is at index i, the next.
func (t *coefTable) insert(h uint64, i int) {
	t.hashes = append(t.hashes, h)
	mask := uint64(len(t.slots) - 1)
	x := (h * 0x9e3779b97f4a7c15) >> t.shift
	for t.slots[x] != 0 {
		x = (x + 1) & mask
	}
	t.slots[x] = int32(i + 1)
}

// sameCoefs reports whether a equals b (-b when neg) element by element.
func sameCoefs(a, b []int64, neg bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i, v := range b {
		if neg {
			v = -v
		}
		if a[i] != v {
			return false
		}
	}
	return true
}

// divLin divides l by g > 0, flooring the constant for inequalities. By 1
// it returns l itself: c/1 = c and k/1 = floor(k/1) = k.
func (s *solver) divLin(l lin, g int64, floor bool) lin {
	if g == 1 {
		return l
	}
	r := lin{c: s.vecToFill(len(l.c)), k: l.k / g}
	if floor {
		r.k = floorDiv(l.k, g)
	}
	for i, c := range l.c {
		r.c[i] = c / g
	}
	return r
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
		if g == 1 {
			return 1 // the gcd of 1 and anything
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
