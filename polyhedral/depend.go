package polyhedral

import (
	"fmt"
	"slices"
	"strings"
)

// Options are the inputs of Depends and Analyze besides the nest itself.
type Options struct {
	// Params holds concrete parameter values. A parameter without a value
	// is an unknown limited only by Domain.Assume, and answers then hold
	// for every allowed value: independence is claimed only when no
	// allowed value makes the accesses conflict.
	Params map[string]int64
	// DistinctBases makes Analyze skip pairs of accesses whose Base
	// expressions differ, as if they were distinct arrays. The caller must
	// then guard at run time that such footprints do not overlap.
	DistinctBases bool
	// MaxSteps bounds the work of one exact test (0: a default of 200000
	// subproblems). Past it the test fails with ErrTooComplex.
	MaxSteps int
}

// Witness is a pair of distinct iterations at which two accesses touch a
// common byte.
type Witness struct {
	A, B   []int64          // index values of the iteration of each access, outermost first (0 for a level off its path)
	Params map[string]int64 // values chosen for parameters that had none
}

// String prints the witness as "(i=1, j=2) and (i=1, j=3)", followed by
// the chosen parameter values, if any, as " with bound0=4".
func (w Witness) String() string { return w.format(nil) }

func (w Witness) format(names []string) string {
	vec := func(v []int64) string {
		parts := make([]string, len(v))
		for i, x := range v {
			if i < len(names) {
				parts[i] = fmt.Sprintf("%s=%d", names[i], x)
			} else {
				parts[i] = fmt.Sprint(x)
			}
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	s := vec(w.A) + " and " + vec(w.B)
	if len(w.Params) > 0 {
		var ps []string
		for _, k := range sortedKeys(w.Params) {
			ps = append(ps, fmt.Sprintf("%s=%d", k, w.Params[k]))
		}
		s += " with " + strings.Join(ps, ", ")
	}
	return s
}

// Depends decides exactly whether access a at some iteration I and access
// b at some iteration I' of domain d touch a common byte, where I and I'
// agree on every level outer to level (0 = outermost) and differ at level:
// a dependence carried by that loop, in either direction. It returns the
// witness when one exists and nil when the accesses are independent (two
// reads are always independent). An error (ErrTooComplex, ErrOverflow)
// leaves the question open, and the caller must assume a dependence.
//
// In an imperfect nest (accesses with Loops), only an access inside the
// level can carry a dependence on it, and the iterations agree on the
// outer levels the two paths share: the level's enclosing loops.
func Depends(d Domain, a, b Access, level int, opts Options) (*Witness, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if level < 0 || level >= len(d.Levels) {
		return nil, fmt.Errorf("%w: level %d outside a %d-level nest", ErrInvalid, level, len(d.Levels))
	}
	for _, x := range []Access{a, b} {
		if err := x.validate(); err != nil {
			return nil, err
		}
		if err := d.checkPath(x); err != nil {
			return nil, err
		}
	}
	params := d.paramsOnly(opts.Params)
	sameAddr := a.Addr().Equal(b.Addr())
	return depends(d, a, b, level, sameAddr, func(dir int64) (*Witness, error) {
		return carried(d, a, b, level, dir, params, opts.MaxSteps)
	})
}

// depends is Depends on input already validated (Analyze validates the
// domain and every access once, and these checks depend on nothing else).
// sameAddr says whether a and b have the same address function; carry
// answers carried for a, b and level in direction dir.
func depends(d Domain, a, b Access, level int, sameAddr bool, carry func(dir int64) (*Witness, error)) (*Witness, error) {
	if a.Kind == Read && b.Kind == Read {
		return nil, nil
	}
	if idx := d.Levels[level].Index; !a.encloses(idx) || !b.encloses(idx) {
		return nil, nil
	}
	dirs := []int64{1, -1}
	if sameAddr && a.Size == b.Size {
		dirs = dirs[:1] // same address function: backward is forward with I, I' swapped
	}
	for _, dir := range dirs {
		w, err := carry(dir)
		if err != nil || w != nil {
			if err != nil {
				err = fmt.Errorf("dependence of %s and %s at level %d: %w", a.Site, b.Site, level, err)
			}
			return w, err
		}
	}
	return nil, nil
}

// DependsBefore is Depends in one direction: access a at iteration I and
// access b at a later iteration I' (I'_level > I_level, outer levels
// equal) touch a common byte. Loop distribution asks it: a later
// statement's access in an earlier iteration feeding an earlier
// statement's access in a later one forbids splitting the loop there.
func DependsBefore(d Domain, a, b Access, level int, opts Options) (*Witness, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if level < 0 || level >= len(d.Levels) {
		return nil, fmt.Errorf("%w: level %d outside a %d-level nest", ErrInvalid, level, len(d.Levels))
	}
	for _, x := range []Access{a, b} {
		if err := x.validate(); err != nil {
			return nil, err
		}
		if err := d.checkPath(x); err != nil {
			return nil, err
		}
	}
	if a.Kind == Read && b.Kind == Read {
		return nil, nil
	}
	if idx := d.Levels[level].Index; !a.encloses(idx) || !b.encloses(idx) {
		return nil, nil
	}
	w, err := carried(d, a, b, level, 1, d.paramsOnly(opts.Params), opts.MaxSteps)
	if err != nil {
		err = fmt.Errorf("dependence of %s and %s at level %d: %w", a.Site, b.Site, level, err)
	}
	return w, err
}

// nestCache is what Analyze keeps between the questions it asks of one
// nest. The domain, the params and the step budget are fixed there, and
// carried's answer is then a function of the level, the direction and, of
// each access, its address, size and path (Loops) alone, the same at
// every call (a new solver each time, deterministic): not of its Site or
// Kind. So accesses with the same address, size and path (a reduction's
// read and write, reloads of one element) share a shape, and a question
// asked again of the same shapes gets the first answer. The constraints
// each shape brings to a system (its side) are built once.
type nestCache struct {
	d        Domain
	accesses []Access
	params   map[string]int64
	maxSteps int
	addrs    []Expr // by access: Addr()
	shapes   []int  // by access: the first access with the same address, size and path
	sides    map[sideKey]side
	answers  map[carriedKey]carriedAnswer
}

// sideKey names a side: an access's shape, and which iteration it is in
// (its suffix, sa or sb).
type sideKey struct {
	shape int
	sfx   string
}

// carriedKey is a question to carried: level, direction, and the shapes
// of the accesses at I and at I'.
type carriedKey struct {
	level, a, b int
	dir         int64
}

// carriedAnswer is what carried returned.
type carriedAnswer struct {
	w   *Witness
	err error
}

// newNestCache returns the cache for the questions of Analyze on n.
func newNestCache(n Nest, params map[string]int64, maxSteps int) *nestCache {
	c := &nestCache{d: n.Domain, accesses: n.Accesses, params: params, maxSteps: maxSteps,
		addrs: make([]Expr, len(n.Accesses)), shapes: make([]int, len(n.Accesses)),
		sides: map[sideKey]side{}, answers: map[carriedKey]carriedAnswer{}}
	for i, a := range n.Accesses {
		c.addrs[i] = a.Addr()
		c.shapes[i] = i
		for j := range i {
			b := n.Accesses[j]
			if c.addrs[i].Equal(c.addrs[j]) && a.Size == b.Size && (a.Loops == nil) == (b.Loops == nil) && slices.Equal(a.Loops, b.Loops) {
				c.shapes[i] = j
				break
			}
		}
	}
	return c
}

// depends is Depends on accesses p and q of the nest.
func (c *nestCache) depends(p, q, level int) (*Witness, error) {
	return depends(c.d, c.accesses[p], c.accesses[q], level, c.addrs[p].Equal(c.addrs[q]), func(dir int64) (*Witness, error) {
		return c.carried(p, q, level, dir)
	})
}

// carried is the package's carried on accesses p and q, answered from the
// cache when their shapes were asked the same before. Each caller gets its
// own copy of a witness.
func (c *nestCache) carried(p, q, level int, dir int64) (*Witness, error) {
	key := carriedKey{level: level, a: c.shapes[p], b: c.shapes[q], dir: dir}
	if ans, ok := c.answers[key]; ok {
		return ans.w.clone(), ans.err
	}
	w, err := carriedOn(c.d, c.side(p, sa), c.side(q, sb), level, dir, c.params, c.maxSteps)
	c.answers[key] = carriedAnswer{w.clone(), err}
	return w, err
}

// side returns access p's side in the iteration with suffix sfx.
func (c *nestCache) side(p int, sfx string) side {
	key := sideKey{c.shapes[p], sfx}
	sd, ok := c.sides[key]
	if !ok {
		sd = sideOf(c.d, c.accesses[p], sfx, c.params)
		c.sides[key] = sd
	}
	return sd
}

// clone returns a deep copy of w (nil for nil).
func (w *Witness) clone() *Witness {
	if w == nil {
		return nil
	}
	c := &Witness{A: append([]int64(nil), w.A...), B: append([]int64(nil), w.B...)}
	if w.Params != nil {
		c.Params = make(map[string]int64, len(w.Params))
		for k, v := range w.Params {
			c.Params[k] = v
		}
	}
	return c
}

// The suffixes of the two iterations' index names in a dependence system.
const sa, sb = "'a", "'b"

// carried solves one direction: dir*(I'_level - I_level) >= 1.
func carried(d Domain, a, b Access, level int, dir int64, params map[string]int64, maxSteps int) (*Witness, error) {
	return carriedOn(d, sideOf(d, a, sa, params), sideOf(d, b, sb, params), level, dir, params, maxSteps)
}

// carriedOn is carried on the sides of a and b.
func carriedOn(d Domain, sideA, sideB side, level int, dir int64, params map[string]int64, maxSteps int) (*Witness, error) {
	a, b := sideA.acc, sideB.acc
	y := systemOn(d, sideA, sideB, level, dir, params)
	sol, ok, err := y.solve(maxSteps)
	if err != nil || !ok {
		return nil, err
	}
	w := &Witness{A: make([]int64, len(d.Levels)), B: make([]int64, len(d.Levels))}
	for l, lv := range d.Levels {
		if a.encloses(lv.Index) {
			w.A[l] = sol[lv.Index+sa]
		}
		if b.encloses(lv.Index) {
			w.B[l] = sol[lv.Index+sb]
		}
	}
	// Every parameter without a value gets the solver's value, or 0 when
	// no constraint kept it (it cancelled out, so any value will do).
	for _, v := range freeParams(d, []Access{a, b}, params) {
		if w.Params == nil {
			w.Params = map[string]int64{}
		}
		w.Params[v] = sol[v]
	}
	return w, nil
}

// dependenceSystem is the system carried solves: a at I and b at I', each
// on its path, equal on the outer levels both paths share, dir*(I'_level -
// I_level) >= 1, and their byte ranges intersecting.
func dependenceSystem(d Domain, a, b Access, level int, dir int64, params map[string]int64) system {
	return systemOn(d, sideOf(d, a, sa, params), sideOf(d, b, sb, params), level, dir, params)
}

// side is what an access brings to a dependence system in one iteration:
// its path's domain constraints (addPath's) and its address, with the
// indices renamed by the iteration's suffix and params bound. It is
// immutable once built.
type side struct {
	acc      Access
	eqs, ges []Expr
	addr     Expr
}

// sideOf returns a's side in the iteration with suffix sfx.
func sideOf(d Domain, a Access, sfx string, params map[string]int64) side {
	var y system
	y.addPath(d, a, sfx, params)
	return side{acc: a, eqs: y.eqs, ges: y.ges, addr: a.Addr().rename(d.renamer(sfx)).bind(params)}
}

// systemOn is dependenceSystem on the sides of a and b.
func systemOn(d Domain, sideA, sideB side, level int, dir int64, params map[string]int64) system {
	a, b := sideA.acc, sideB.acc
	// a's path constraints, then b's, in each list, as two addPath calls
	// would append them.
	y := system{
		eqs: append(append(make([]Expr, 0, len(sideA.eqs)+len(sideB.eqs)+level), sideA.eqs...), sideB.eqs...),
		ges: append(append(make([]Expr, 0, len(sideA.ges)+len(sideB.ges)+len(d.Assume)+3), sideA.ges...), sideB.ges...),
	}
	y.addAssume(d, params)
	for l := 0; l < level; l++ {
		n := d.Levels[l].Index
		if a.encloses(n) && b.encloses(n) {
			y.add(EQ(Var(n+sa), Var(n+sb)))
		}
	}
	n := d.Levels[level].Index
	y.add(GE(Var(n+sb).Sub(Var(n+sa)).Scale(dir), Const(1)))
	addrA, addrB := sideA.addr, sideB.addr
	// [addrA, addrA+sizeA) and [addrB, addrB+sizeB) intersect.
	y.add(GE(addrB.AddConst(b.Size), addrA.AddConst(1)))
	y.add(GE(addrA.AddConst(a.Size), addrB.AddConst(1)))
	return y
}

// freeParams returns the variables of d and the accesses that are neither
// indices nor given in params.
func freeParams(d Domain, accs []Access, params map[string]int64) []string {
	seen := map[string]int64{}
	note := func(e Expr) {
		for _, v := range e.Vars() {
			if _, ok := params[v]; !ok {
				seen[v] = 0
			}
		}
	}
	for _, l := range d.Levels {
		note(l.Lower)
		note(l.Upper)
	}
	for _, c := range d.Assume {
		note(c.Expr)
	}
	for _, a := range accs {
		note(a.Addr())
	}
	for _, l := range d.Levels {
		delete(seen, l.Index)
	}
	return sortedKeys(seen)
}
