package polyhedral

import (
	"errors"
	"fmt"
	"strings"
)

// ReductionOp is the associative operator of a read-modify-write update.
type ReductionOp uint8

// Reduction operators.
const (
	Sum     ReductionOp = iota + 1 // x = x + e
	Product                        // x = x * e
)

// String returns "sum" or "product".
func (op ReductionOp) String() string {
	switch op {
	case Sum:
		return "sum"
	case Product:
		return "product"
	}
	return fmt.Sprintf("ReductionOp(%d)", uint8(op))
}

// Reduction marks two access sites of a nest as one update x = x op e: the
// read and the write of x (indices into Nest.Accesses, same address and
// size). The caller, which sees the instructions, vouches for the operator.
type Reduction struct {
	Read, Write int
	Op          ReductionOp
}

// Nest is a loop nest to classify: its domain, every memory access site in
// its body, and the update pairs that may form reductions.
type Nest struct {
	Domain     Domain
	Accesses   []Access
	Reductions []Reduction
}

// LevelKind is the verdict on one loop level.
type LevelKind uint8

// Level verdicts.
const (
	// LevelParallel: no dependence is carried by the loop.
	LevelParallel LevelKind = iota
	// LevelReduction: the only carried dependences are those of Reduction
	// updates whose address is invariant in the loop (and its inner loops).
	LevelReduction
	// LevelSequential: some other dependence is carried by the loop, or the
	// exact test could not decide.
	LevelSequential
)

// String returns "parallel", "reduction" or "sequential".
func (k LevelKind) String() string {
	switch k {
	case LevelParallel:
		return "parallel"
	case LevelReduction:
		return "reduction"
	}
	return "sequential"
}

// Conflict is a pair of access sites (indices into Nest.Accesses) with a
// dependence carried by a level: a witness, or the error that left the exact
// test undecided.
type Conflict struct {
	A, B    int
	Witness *Witness // nil when Err is set
	Err     error
}

// LevelVerdict is Analyze's answer for one loop level.
type LevelVerdict struct {
	Level      int
	Index      string
	Kind       LevelKind
	Reductions []int     // indices into Nest.Reductions carried here (LevelReduction)
	Conflict   *Conflict // the first blocking pair (LevelSequential)
	Reason     string    // one line for people
}

// Analyze classifies every level of the nest as parallel, reduction or
// sequential, testing each pair of accesses with at least one write with
// Depends. It fails only on malformed input; an undecided test makes the
// level sequential with the error in its Conflict.
func Analyze(n Nest, opts Options) ([]LevelVerdict, error) {
	d := n.Domain
	if err := d.Validate(); err != nil {
		return nil, err
	}
	for _, a := range n.Accesses {
		if err := a.validate(); err != nil {
			return nil, err
		}
		if err := d.checkPath(a); err != nil {
			return nil, err
		}
	}
	for i, r := range n.Reductions {
		if err := n.checkReduction(r); err != nil {
			return nil, fmt.Errorf("reduction %d: %w", i, err)
		}
	}
	out := make([]LevelVerdict, len(d.Levels))
	cache := newNestCache(n, d.paramsOnly(opts.Params), opts.MaxSteps)
	for l := range d.Levels {
		v, err := n.level(l, opts, cache)
		if err != nil {
			return nil, err
		}
		out[l] = v
	}
	return out, nil
}

func (n Nest) checkReduction(r Reduction) error {
	if r.Read < 0 || r.Read >= len(n.Accesses) || r.Write < 0 || r.Write >= len(n.Accesses) {
		return fmt.Errorf("%w: site index out of range", ErrInvalid)
	}
	rd, wr := n.Accesses[r.Read], n.Accesses[r.Write]
	switch {
	case r.Op != Sum && r.Op != Product:
		return fmt.Errorf("%w: unknown operator %v", ErrInvalid, r.Op)
	case rd.Kind != Read || wr.Kind != Write:
		return fmt.Errorf("%w: want a read and a write, have %v %s and %v %s", ErrInvalid, rd.Kind, rd.Site, wr.Kind, wr.Site)
	case !rd.Addr().Equal(wr.Addr()) || rd.Size != wr.Size:
		return fmt.Errorf("%w: read %s and write %s touch different bytes", ErrInvalid, rd, wr)
	}
	return nil
}

// level classifies level l. Analyze has validated the nest: level asks
// the cache's depends, Depends without the checks.
func (n Nest) level(l int, opts Options, cache *nestCache) (LevelVerdict, error) {
	d := n.Domain
	v := LevelVerdict{Level: l, Index: d.Levels[l].Index, Kind: LevelParallel}
	carried := map[int]bool{}
	for p := range n.Accesses {
		for q := p; q < len(n.Accesses); q++ {
			a, b := n.Accesses[p], n.Accesses[q]
			if a.Kind == Read && b.Kind == Read {
				continue
			}
			if opts.DistinctBases && !a.Base.Equal(b.Base) {
				continue
			}
			w, err := cache.depends(p, q, l)
			if err != nil && !isUndecided(err) {
				return v, err
			}
			if w == nil && err == nil {
				continue
			}
			if r := n.reductionOf(p, q, l); r >= 0 && err == nil {
				carried[r] = true
				continue
			}
			v.Kind = LevelSequential
			v.Conflict = &Conflict{A: p, B: q, Witness: w, Err: err}
			v.Reason = n.conflictReason(v.Conflict)
			return v, nil
		}
	}
	if len(carried) == 0 {
		v.Reason = "no loop-carried dependence"
		return v, nil
	}
	v.Kind = LevelReduction
	var parts []string
	for r := range n.Reductions {
		if carried[r] {
			v.Reductions = append(v.Reductions, r)
			red := n.Reductions[r]
			parts = append(parts, fmt.Sprintf("%s update %s/%s", red.Op, n.Accesses[red.Read].Site, n.Accesses[red.Write].Site))
		}
	}
	v.Reason = "only carried dependences: " + strings.Join(parts, ", ")
	return v, nil
}

// isUndecided reports whether err leaves a dependence question open rather
// than reporting bad input.
func isUndecided(err error) bool {
	return errors.Is(err, ErrTooComplex) || errors.Is(err, ErrOverflow) || errors.Is(err, errWitness)
}

// reductionOf returns the reduction whose update covers sites p and q with
// an address invariant in level l and its inner levels, or -1.
func (n Nest) reductionOf(p, q, l int) int {
	for i, r := range n.Reductions {
		in := func(s int) bool { return s == r.Read || s == r.Write }
		if !in(p) || !in(q) {
			continue
		}
		addr := n.Accesses[r.Write].Addr()
		invariant := true
		for _, lv := range n.Domain.Levels[l:] {
			invariant = invariant && addr.Coef(lv.Index) == 0
		}
		if invariant {
			return i
		}
	}
	return -1
}

func (n Nest) conflictReason(c *Conflict) string {
	a, b := n.Accesses[c.A], n.Accesses[c.B]
	if c.Err != nil {
		return fmt.Sprintf("%s and %s: dependence undecided (%v)", a, b, c.Err)
	}
	return fmt.Sprintf("%s and %s touch the same bytes at iterations %s", a, b, c.Witness.format(n.Domain.Indices()))
}
