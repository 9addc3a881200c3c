package polyhedral

import (
	"errors"
	"fmt"
	"sort"
	"sync"
)

// ErrTooLarge reports that a count or search would need more enumeration than
// its budget allows.
var ErrTooLarge = errors.New("polyhedral: domain too large to enumerate")

// ErrInvalid reports a malformed domain, access or nest.
var ErrInvalid = errors.New("polyhedral: invalid input")

// Constraint is Expr >= 0, or Expr == 0 when Eq is set.
type Constraint struct {
	Expr Expr
	Eq   bool
}

// GE returns the constraint a >= b.
func GE(a, b Expr) Constraint { return Constraint{Expr: a.Sub(b)} }

// EQ returns the constraint a == b.
func EQ(a, b Expr) Constraint { return Constraint{Expr: a.Sub(b), Eq: true} }

// String prints c as "EXPR >= 0" or "EXPR == 0".
func (c Constraint) String() string {
	if c.Eq {
		return c.Expr.String() + " == 0"
	}
	return c.Expr.String() + " >= 0"
}

// Level is one loop of a nest: Index runs from Lower to Upper, both
// inclusive, by Step. Lower and Upper are affine in the indices of outer
// levels and in parameters. A loop "for j = 0; j < i; j++" is
// Level{Index: "j", Lower: Const(0), Upper: Var("i").AddConst(-1)}.
type Level struct {
	Index        string
	Lower, Upper Expr
	// Step is the positive constant stride; 0 means 1. Index takes the
	// values Lower, Lower+Step, ... up to Upper.
	Step int64
}

func (l Level) step() int64 {
	if l.Step == 0 {
		return 1
	}
	return l.Step
}

// Domain is the iteration domain of a loop nest, levels outermost first.
// Variables of the bounds that are not indices are parameters; Assume holds
// the constraints known to hold for them (for example bound0 >= 1) and must
// mention parameters only. Parameters without a value are unknowns limited
// only by Assume.
type Domain struct {
	Levels []Level
	Assume []Constraint
}

// Indices returns the index names, outermost first.
func (d Domain) Indices() []string {
	names := make([]string, len(d.Levels))
	for i, l := range d.Levels {
		names[i] = l.Index
	}
	return names
}

// Validate checks that index names are distinct identifiers, that every
// bound refers only to outer indices and parameters, that steps are
// positive, and that no expression overflowed.
func (d Domain) Validate() error {
	level := map[string]int{}
	for i, l := range d.Levels {
		if !isIdent(l.Index) {
			return fmt.Errorf("%w: level %d: index %q is not an identifier", ErrInvalid, i, l.Index)
		}
		if _, dup := level[l.Index]; dup {
			return fmt.Errorf("%w: level %d: index %q repeated", ErrInvalid, i, l.Index)
		}
		level[l.Index] = i
		if l.Step < 0 {
			return fmt.Errorf("%w: level %d (%s): step %d is not positive", ErrInvalid, i, l.Index, l.Step)
		}
	}
	for i, l := range d.Levels {
		for _, b := range []Expr{l.Lower, l.Upper} {
			if b.ovf {
				return fmt.Errorf("level %d (%s): bound: %w", i, l.Index, ErrOverflow)
			}
			for _, v := range b.Vars() {
				if j, ok := level[v]; ok && j >= i {
					return fmt.Errorf("%w: level %d (%s): bound %s uses index %s of the same or an inner level", ErrInvalid, i, l.Index, b, v)
				}
			}
		}
	}
	for _, c := range d.Assume {
		if c.Expr.ovf {
			return fmt.Errorf("assumption: %w", ErrOverflow)
		}
		for _, v := range c.Expr.Vars() {
			if _, ok := level[v]; ok {
				return fmt.Errorf("%w: assumption %s uses loop index %s", ErrInvalid, c, v)
			}
		}
	}
	return nil
}

func isIdent(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentStart(s[i]) && !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// assumptionsHold evaluates Assume under concrete params; unbound
// parameters make it fail with ErrUnbound.
func (d Domain) assumptionsHold(params map[string]int64) (bool, error) {
	for _, c := range d.Assume {
		v, err := c.Expr.Eval(params)
		if err != nil {
			return false, fmt.Errorf("assumption %s: %w", c, err)
		}
		if (c.Eq && v != 0) || v < 0 {
			return false, nil
		}
	}
	return true, nil
}

// TripCount returns the exact number of iterations of the innermost body
// for concrete parameter values (every parameter must have a value). Inner
// levels whose count does not depend on an index are multiplied out, and a
// step-1 innermost level under a single outer loop is summed in closed form
// (an arithmetic series, which covers triangular nests); other levels are
// enumerated, up to 2^20 iterations before ErrTooLarge.
func (d Domain) TripCount(params map[string]int64) (int64, error) {
	if err := d.Validate(); err != nil {
		return 0, err
	}
	ok, err := d.assumptionsHold(params)
	if err != nil || !ok {
		return 0, err
	}
	env := make(map[string]int64, len(params)+len(d.Levels))
	for k, v := range params {
		env[k] = v
	}
	for _, l := range d.Levels {
		delete(env, l.Index) // an index shadows a same-named parameter
	}
	budget := int64(1 << 20)
	n, err := d.count(0, env, &budget)
	if err != nil {
		return 0, fmt.Errorf("trip count: %w", err)
	}
	return n, nil
}

// values returns the first value, the number of values, and the step of
// level l under env.
func (d Domain) values(l int, env map[string]int64) (first, n int64, err error) {
	lv := d.Levels[l]
	lo, err := lv.Lower.Eval(env)
	if err != nil {
		return 0, 0, err
	}
	hi, err := lv.Upper.Eval(env)
	if err != nil {
		return 0, 0, err
	}
	if hi < lo {
		return lo, 0, nil
	}
	span, ok := add64(hi, -lo)
	if !ok || lo == minInt64 {
		return 0, 0, ErrOverflow
	}
	return lo, span/lv.step() + 1, nil
}

// count returns the number of points of levels l.. under env (outer indices
// bound); budget limits enumeration.
func (d Domain) count(l int, env map[string]int64, budget *int64) (int64, error) {
	if l == len(d.Levels) {
		return 1, nil
	}
	first, n, err := d.values(l, env)
	if err != nil || n == 0 {
		return 0, err
	}
	idx := d.Levels[l].Index
	if !d.innerUses(l, idx) {
		inner, err := d.count(l+1, env, budget)
		if err != nil {
			return 0, err
		}
		r, ok := mul64(n, inner)
		if !ok {
			return 0, ErrOverflow
		}
		return r, nil
	}
	if l+2 == len(d.Levels) && d.Levels[l+1].step() == 1 {
		return d.series(l, env, first, n)
	}
	var total int64
	step := d.Levels[l].step()
	for t := int64(0); t < n; t++ {
		if *budget--; *budget < 0 {
			return 0, ErrTooLarge
		}
		env[idx] = first + t*step
		c, err := d.count(l+1, env, budget)
		if err != nil {
			delete(env, idx)
			return 0, err
		}
		var ok bool
		if total, ok = add64(total, c); !ok {
			delete(env, idx)
			return 0, ErrOverflow
		}
	}
	delete(env, idx)
	return total, nil
}

// innerUses reports whether a bound of a level inner to l mentions name.
func (d Domain) innerUses(l int, name string) bool {
	for _, lv := range d.Levels[l+1:] {
		if lv.Lower.Coef(name) != 0 || lv.Upper.Coef(name) != 0 {
			return true
		}
	}
	return false
}

// series sums max(0, Upper-Lower+1) of the innermost level over the n
// values first, first+step, ... of level l: with i = first + step*t the
// summand is P*t + Q, an arithmetic series over the t where it is positive.
func (d Domain) series(l int, env map[string]int64, first, n int64) (int64, error) {
	idx := d.Levels[l].Index
	inner := d.Levels[l+1]
	width := inner.Upper.Sub(inner.Lower).AddConst(1)
	c := width.Coef(idx)
	env[idx] = first
	q, err := width.Eval(env)
	delete(env, idx)
	if err != nil {
		return 0, err
	}
	var s solver
	p := s.mul(c, d.Levels[l].step())
	t0, t1 := int64(0), n-1
	switch {
	case p > 0:
		t0 = max(t0, floorDiv(s.mul(-1, q), p)+1)
	case p < 0:
		t1 = min(t1, ceilDiv(q, -p)-1)
	case q <= 0:
		return 0, nil
	}
	if t0 > t1 {
		return 0, nil
	}
	// sum_{t=t0}^{t1} (p*t + q) = cnt*q + p*(t0+t1)*cnt/2.
	cnt := t1 - t0 + 1
	a, b := s.add(t0, t1), cnt
	if a%2 == 0 {
		a /= 2
	} else {
		b /= 2
	}
	total := s.add(s.mul(cnt, q), s.mul(p, s.mul(a, b)))
	if s.ovf {
		return 0, ErrOverflow
	}
	return total, nil
}

// system collects affine constraints over named variables and lowers them to
// a dense problem for the solver.
type system struct {
	eqs, ges []Expr
}

func (y *system) add(c Constraint) {
	if c.Eq {
		y.eqs = append(y.eqs, c.Expr)
	} else {
		y.ges = append(y.ges, c.Expr)
	}
}

// addDomain adds the constraints of d with its indices renamed to
// name+sfx and the parameters in params replaced by their values. A strided
// level gets an existential counter "#t<level><sfx>".
func (y *system) addDomain(d Domain, sfx string, params map[string]int64) {
	y.addPath(d, Access{}, sfx, params)
}

// addPath is addDomain restricted to the levels on access a's path.
func (y *system) addPath(d Domain, a Access, sfx string, params map[string]int64) {
	ren := d.renamer(sfx)
	for i, l := range d.Levels {
		if !a.encloses(l.Index) {
			continue
		}
		idx := Var(ren(l.Index))
		lo := l.Lower.rename(ren).bind(params)
		hi := l.Upper.rename(ren).bind(params)
		y.add(GE(idx, lo))
		y.add(GE(hi, idx))
		if st := l.step(); st > 1 {
			t := Var(fmt.Sprintf("#t%d%s", i, sfx))
			y.add(EQ(idx, lo.Add(t.Scale(st))))
		}
	}
}

// renamer maps d's index names to name+sfx and leaves other names alone.
func (d Domain) renamer(sfx string) func(string) string {
	return func(n string) string {
		for _, l := range d.Levels {
			if l.Index == n {
				return n + sfx
			}
		}
		return n
	}
}

// addAssume adds d's parameter assumptions (params bound to their values).
func (y *system) addAssume(d Domain, params map[string]int64) {
	for _, c := range d.Assume {
		y.add(Constraint{Expr: c.Expr.bind(params), Eq: c.Eq})
	}
}

// lower returns the dense problem, built in s's stacks, and the variable
// names by column, in the order they first appear.
func (y *system) lower(s *solver) (problem, []string, error) {
	var names []string
	col := func(v string) int {
		for i, n := range names {
			if n == v {
				return i
			}
		}
		return -1
	}
	for _, set := range [][]Expr{y.eqs, y.ges} {
		for _, e := range set {
			if e.ovf {
				return problem{}, nil, ErrOverflow
			}
			for _, t := range e.terms {
				if col(t.Var) < 0 {
					names = append(names, t.Var)
				}
			}
		}
	}
	p := problem{nv: len(names), eqs: s.list(len(y.eqs)), ges: s.list(len(y.ges))}
	dense := func(e Expr) lin {
		l := lin{c: s.vec(len(names)), k: e.c}
		for _, t := range e.terms {
			l.c[col(t.Var)] = t.Coef
		}
		return l
	}
	for _, e := range y.eqs {
		p.eqs = append(p.eqs, dense(e))
	}
	for _, e := range y.ges {
		p.ges = append(p.ges, dense(e))
	}
	return p, names, nil
}

// solvers holds solvers for reuse, with the memory of their stacks: a
// solve releases all it took from them when it returns.
var solvers = sync.Pool{New: func() any { return new(solver) }}

// solve decides y over the integers and returns a satisfying assignment.
func (y *system) solve(maxSteps int) (map[string]int64, bool, error) {
	s := solvers.Get().(*solver)
	defer solvers.Put(s)
	s.reset(maxSteps)
	p, names, err := y.lower(s)
	if err != nil {
		return nil, false, err
	}
	pt, ok, err := s.solve(p)
	if !ok || err != nil {
		return nil, ok, err
	}
	sol := make(map[string]int64, len(names))
	for i, n := range names {
		sol[n] = pt[i]
	}
	// Check the witness against the original constraints: the solver's
	// answer is only trusted when it verifies.
	for _, e := range y.eqs {
		if v, err := e.Eval(sol); err != nil || v != 0 {
			return nil, false, fmt.Errorf("%w (equality %s)", errWitness, e)
		}
	}
	for _, e := range y.ges {
		if v, err := e.Eval(sol); err != nil || v < 0 {
			return nil, false, fmt.Errorf("%w (inequality %s)", errWitness, e)
		}
	}
	return sol, true, nil
}

// sortedKeys returns the keys of m in canonical variable order.
func sortedKeys(m map[string]int64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return varLess(ks[i], ks[j]) })
	return ks
}
