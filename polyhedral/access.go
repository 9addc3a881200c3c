package polyhedral

import (
	"fmt"
)

// AccessKind says whether an access site reads or writes memory.
type AccessKind uint8

// Access kinds.
const (
	Read AccessKind = iota
	Write
)

// String returns "read" or "write".
func (k AccessKind) String() string {
	if k == Write {
		return "write"
	}
	return "read"
}

// Access is one memory access site of a nest: in each iteration it touches
// the bytes [Base+Offset, Base+Offset+Size). Base is the array's start
// (usually a parameter such as var0, or a constant address); Offset is
// affine in the loop indices and parameters.
//
// Loops names the domain levels that enclose the site, outermost first,
// when the nest is imperfect: a domain then lists the loops of a tree in
// pre-order (gemm's i, then the sibling loops j and k under it, then the
// j inside k), and a site runs only over the levels on its own path. Nil
// means every level of the domain (a perfect nest).
type Access struct {
	Site   string // caller's label, e.g. the guest address "0x401a2c"
	Base   Expr
	Offset Expr
	Size   int64 // bytes, > 0
	Kind   AccessKind
	Loops  []string
}

// encloses reports whether the level named idx is on the access's path.
func (a Access) encloses(idx string) bool {
	if a.Loops == nil {
		return true
	}
	for _, l := range a.Loops {
		if l == idx {
			return true
		}
	}
	return false
}

// checkPath checks that an access's Loops are levels of d in domain order,
// that the bounds of each use only indices on the path, and that the
// address uses no index off the path.
func (d Domain) checkPath(a Access) error {
	if a.Loops == nil {
		return nil
	}
	level := map[string]int{}
	for i, l := range d.Levels {
		level[l.Index] = i
	}
	on := map[string]bool{}
	prev := -1
	for _, n := range a.Loops {
		i, ok := level[n]
		if !ok {
			return fmt.Errorf("%w: access %s: loop %q is not a level of the domain", ErrInvalid, a.Site, n)
		}
		if i <= prev {
			return fmt.Errorf("%w: access %s: loops out of domain order at %q", ErrInvalid, a.Site, n)
		}
		prev = i
		for _, b := range []Expr{d.Levels[i].Lower, d.Levels[i].Upper} {
			for _, v := range b.Vars() {
				if _, isIdx := level[v]; isIdx && !on[v] {
					return fmt.Errorf("%w: access %s: the bound of %s uses %s, which is not on its path", ErrInvalid, a.Site, n, v)
				}
			}
		}
		on[n] = true
	}
	for _, v := range a.Addr().Vars() {
		if _, isIdx := level[v]; isIdx && !on[v] {
			return fmt.Errorf("%w: access %s: address uses index %s, which is not on its path", ErrInvalid, a.Site, v)
		}
	}
	return nil
}

// Addr returns the byte address Base + Offset.
func (a Access) Addr() Expr { return a.Base.Add(a.Offset) }

// String prints the access as "write 0x401a2c [var0 + 8*i] 8".
func (a Access) String() string {
	return fmt.Sprintf("%s %s [%s] %d", a.Kind, a.Site, a.Addr(), a.Size)
}

func (a Access) validate() error {
	if a.Size <= 0 {
		return fmt.Errorf("%w: access %s: size %d is not positive", ErrInvalid, a.Site, a.Size)
	}
	if a.Addr().ovf {
		return fmt.Errorf("access %s: address: %w", a.Site, ErrOverflow)
	}
	return nil
}

// Range is the byte range [Lo, Hi); it is empty when Lo >= Hi.
type Range struct {
	Lo, Hi int64
}

// Empty reports whether r holds no byte.
func (r Range) Empty() bool { return r.Lo >= r.Hi }

// Overlaps reports whether r and s share a byte.
func (r Range) Overlaps(s Range) bool {
	return !r.Empty() && !s.Empty() && r.Lo < s.Hi && s.Lo < r.Hi
}

// String prints r as "[lo, hi)" in hexadecimal.
func (r Range) String() string { return fmt.Sprintf("[%#x, %#x)", r.Lo, r.Hi) }

// paramsOnly returns params without d's index names.
func (d Domain) paramsOnly(params map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(params))
	for k, v := range params {
		out[k] = v
	}
	for _, l := range d.Levels {
		delete(out, l.Index)
	}
	return out
}

// Footprint returns the exact byte range an access touches over the whole
// domain for concrete parameter values: [min addr, max addr + Size). An empty
// domain gives an empty Range. Every parameter must have a value. The
// minimum and maximum are found by bisection on the exact integer test, so
// triangular and strided domains are exact too.
func Footprint(d Domain, a Access, params map[string]int64) (Range, error) {
	if err := d.Validate(); err != nil {
		return Range{}, err
	}
	if err := a.validate(); err != nil {
		return Range{}, err
	}
	if err := d.checkPath(a); err != nil {
		return Range{}, err
	}
	params = d.paramsOnly(params)
	if ok, err := d.assumptionsHold(params); err != nil || !ok {
		return Range{}, err
	}
	addr := a.Addr().bind(params)
	idx := map[string]bool{}
	for _, l := range d.Levels {
		idx[l.Index] = true
	}
	for _, v := range addr.Vars() {
		if !idx[v] {
			return Range{}, fmt.Errorf("footprint of %s: %w: %s", a.Site, ErrUnbound, v)
		}
	}
	var base system
	base.addPath(d, a, "", params)
	for _, e := range append(base.eqs, base.ges...) {
		for _, v := range e.Vars() {
			if !idx[v] && v[0] != '#' {
				return Range{}, fmt.Errorf("footprint of %s: %w: %s", a.Site, ErrUnbound, v)
			}
		}
	}
	lo, ok, err := extreme(base, addr, false)
	if err != nil || !ok {
		return Range{}, wrapFootprint(a, err)
	}
	hi, _, err := extreme(base, addr, true)
	if err != nil {
		return Range{}, wrapFootprint(a, err)
	}
	end, okAdd := add64(hi, a.Size)
	if !okAdd {
		return Range{}, wrapFootprint(a, ErrOverflow)
	}
	return Range{lo, end}, nil
}

func wrapFootprint(a Access, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("footprint of %s: %w", a.Site, err)
}

// extreme returns the minimum (or maximum when max) of f over the integer
// points of y, and ok=false when y has none.
func extreme(y system, f Expr, max bool) (int64, bool, error) {
	if max {
		v, ok, err := extreme(y, f.Scale(-1), false)
		if v == minInt64 {
			return 0, false, ErrOverflow
		}
		return -v, ok, err
	}
	sol, ok, err := y.solve(0)
	if err != nil || !ok {
		return 0, ok, err
	}
	hi, err := f.Eval(sol) // an attained value: min <= hi
	if err != nil {
		return 0, false, err
	}
	// Bisection on "some point has f <= v": lo is infeasible, hi feasible.
	lo := int64(minInt64)
	probe := func(v int64) (bool, error) {
		t := y
		t.ges = append(append([]Expr(nil), y.ges...), Const(v).Sub(f))
		_, ok, err := t.solve(0)
		return ok, err
	}
	// Gallop down from hi to find an infeasible lower end quickly.
	for step := int64(1); ; step *= 2 {
		v, okSub := add64(hi, -step)
		if !okSub || step > 1<<62 {
			break
		}
		ok, err := probe(v)
		if err != nil {
			return 0, false, err
		}
		if !ok {
			lo = v
			break
		}
		hi = v
	}
	if lo == minInt64 {
		if ok, err := probe(minInt64); err != nil || ok {
			return minInt64, true, err
		}
	}
	for uint64(hi)-uint64(lo) > 1 {
		mid := lo + int64((uint64(hi)-uint64(lo))/2)
		ok, err := probe(mid)
		if err != nil {
			return 0, false, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true, nil
}
