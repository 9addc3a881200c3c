package polyhedral

import (
	"fmt"
	"strconv"
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
	return depends(d, a, b, level, d.paramsOnly(opts.Params), opts.MaxSteps, nil)
}

// depends is Depends on input already validated (Analyze validates the
// domain and every access once, and these checks depend on nothing else),
// with params without index names. memo, when not nil, keeps the answers
// of carried for the next calls on the same domain, params and maxSteps.
func depends(d Domain, a, b Access, level int, params map[string]int64, maxSteps int, memo *carriedMemo) (*Witness, error) {
	if a.Kind == Read && b.Kind == Read {
		return nil, nil
	}
	if idx := d.Levels[level].Index; !a.encloses(idx) || !b.encloses(idx) {
		return nil, nil
	}
	dirs := []int64{1, -1}
	if a.Addr().Equal(b.Addr()) && a.Size == b.Size {
		dirs = dirs[:1] // same address function: backward is forward with I, I' swapped
	}
	for _, dir := range dirs {
		w, err := memo.carried(d, a, b, level, dir, params, maxSteps)
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

// carriedMemo keeps the answers of carried within one Analyze, where the
// domain, the params and the step budget are fixed: carried's answer is
// then a function of the level, the direction and, of each access, its
// address, size and path (Loops) alone, the same at every call (a new
// solver each time, deterministic). Site and Kind do not enter it.
// Different sites with the same address (a reduction's read and write,
// reloads of one element) and the levels tested again ask the same
// question.
type carriedMemo struct {
	answers map[string]carriedAnswer
	key     []byte
}

// carriedAnswer is what carried returned.
type carriedAnswer struct {
	w   *Witness
	err error
}

// carried is the package's carried, answered from the memo when it holds
// the question; a nil memo keeps nothing. Each caller gets its own copy of
// a witness.
func (m *carriedMemo) carried(d Domain, a, b Access, level int, dir int64, params map[string]int64, maxSteps int) (*Witness, error) {
	if m == nil {
		return carried(d, a, b, level, dir, params, maxSteps)
	}
	m.key = appendCarriedKey(m.key[:0], a, b, level, dir)
	if ans, ok := m.answers[string(m.key)]; ok {
		return ans.w.clone(), ans.err
	}
	w, err := carried(d, a, b, level, dir, params, maxSteps)
	if m.answers == nil {
		m.answers = map[string]carriedAnswer{}
	}
	m.answers[string(m.key)] = carriedAnswer{w.clone(), err}
	return w, err
}

// appendCarriedKey appends to key what carried's answer depends on besides
// the domain, params and budget: level, dir, and each access's address
// (terms, constant), size and path, nil paths apart from empty ones.
// Strings are length-prefixed, so distinct questions give distinct keys.
func appendCarriedKey(key []byte, a, b Access, level int, dir int64) []byte {
	str := func(s string) {
		key = strconv.AppendInt(key, int64(len(s)), 10)
		key = append(key, ':')
		key = append(key, s...)
	}
	num := func(v int64) {
		key = strconv.AppendInt(key, v, 10)
		key = append(key, ',')
	}
	num(int64(level))
	num(dir)
	for _, x := range []Access{a, b} {
		addr := x.Addr()
		num(int64(len(addr.terms)))
		for _, t := range addr.terms {
			str(t.Var)
			num(t.Coef)
		}
		num(addr.c)
		if addr.ovf {
			num(1)
		} else {
			num(0)
		}
		num(x.Size)
		if x.Loops == nil {
			num(-1)
		} else {
			num(int64(len(x.Loops)))
		}
		for _, l := range x.Loops {
			str(l)
		}
	}
	return key
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
	y := dependenceSystem(d, a, b, level, dir, params)
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
	var y system
	y.addPath(d, a, sa, params)
	y.addPath(d, b, sb, params)
	y.addAssume(d, params)
	for l := 0; l < level; l++ {
		n := d.Levels[l].Index
		if a.encloses(n) && b.encloses(n) {
			y.add(EQ(Var(n+sa), Var(n+sb)))
		}
	}
	n := d.Levels[level].Index
	y.add(GE(Var(n+sb).Sub(Var(n+sa)).Scale(dir), Const(1)))
	addrA := a.Addr().rename(d.renamer(sa)).bind(params)
	addrB := b.Addr().rename(d.renamer(sb)).bind(params)
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
