package polyhedral

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ErrOverflow reports that an int64 computation on coefficients, constants or
// values overflowed. Results that depend on it are unknown.
var ErrOverflow = errors.New("polyhedral: int64 overflow")

// ErrUnbound reports that an expression refers to a variable that has no value
// where a value is needed.
var ErrUnbound = errors.New("polyhedral: unbound variable")

// Term is one variable of an affine expression with its coefficient.
type Term struct {
	Var  string
	Coef int64
}

// Expr is an affine expression: a constant plus a sum of int64 coefficients
// times named variables (loop indices i, j, k, parameters bound0, var0, ...).
//
// Expr is an immutable value; the zero Expr is the constant 0. It is kept in
// canonical form: terms sorted by variable name (shorter names first, then
// lexically, so i, j, k come before bound0 and var9 before var10), no zero
// coefficients, no repeated variables. An operation whose coefficients
// overflow int64 returns a poisoned Expr: Err reports ErrOverflow, Eval
// fails, and every analysis given it fails with ErrOverflow.
type Expr struct {
	terms []Term
	c     int64
	ovf   bool
}

// varLess is the canonical variable order.
func varLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// Const returns the constant expression c.
func Const(c int64) Expr { return Expr{c: c} }

// Var returns the expression 1*name.
func Var(name string) Expr { return Expr{terms: []Term{{name, 1}}} }

// NewExpr returns c + sum of terms, combining repeated variables.
func NewExpr(c int64, terms ...Term) Expr {
	e := Const(c)
	for _, t := range terms {
		e = e.Add(Expr{terms: []Term{t}}.normal())
	}
	return e
}

// normal drops zero terms of a single-term expression built by hand.
func (e Expr) normal() Expr {
	out := e.terms[:0:0]
	for _, t := range e.terms {
		if t.Coef != 0 {
			out = append(out, t)
		}
	}
	e.terms = out
	return e
}

// Err returns ErrOverflow if e is the result of an overflowing operation, and
// nil otherwise.
func (e Expr) Err() error {
	if e.ovf {
		return ErrOverflow
	}
	return nil
}

// Constant returns the constant part of e.
func (e Expr) Constant() int64 { return e.c }

// Coef returns the coefficient of name in e (0 when absent).
func (e Expr) Coef(name string) int64 {
	for _, t := range e.terms {
		if t.Var == name {
			return t.Coef
		}
	}
	return 0
}

// Terms returns a copy of e's terms in canonical order.
func (e Expr) Terms() []Term { return append([]Term(nil), e.terms...) }

// Vars returns the variables of e in canonical order.
func (e Expr) Vars() []string {
	vs := make([]string, len(e.terms))
	for i, t := range e.terms {
		vs[i] = t.Var
	}
	return vs
}

// IsConst reports whether e has no variables.
func (e Expr) IsConst() bool { return len(e.terms) == 0 }

// Equal reports whether e and f are the same expression.
func (e Expr) Equal(f Expr) bool {
	if e.c != f.c || e.ovf != f.ovf || len(e.terms) != len(f.terms) {
		return false
	}
	for i := range e.terms {
		if e.terms[i] != f.terms[i] {
			return false
		}
	}
	return true
}

// Add returns e + f.
func (e Expr) Add(f Expr) Expr {
	r := Expr{ovf: e.ovf || f.ovf}
	var ok bool
	if r.c, ok = add64(e.c, f.c); !ok {
		r.ovf = true
	}
	r.terms = make([]Term, 0, len(e.terms)+len(f.terms))
	i, j := 0, 0
	for i < len(e.terms) || j < len(f.terms) {
		switch {
		case j == len(f.terms) || (i < len(e.terms) && varLess(e.terms[i].Var, f.terms[j].Var)):
			r.terms = append(r.terms, e.terms[i])
			i++
		case i == len(e.terms) || varLess(f.terms[j].Var, e.terms[i].Var):
			r.terms = append(r.terms, f.terms[j])
			j++
		default:
			s, ok := add64(e.terms[i].Coef, f.terms[j].Coef)
			if !ok {
				r.ovf = true
			}
			if s != 0 {
				r.terms = append(r.terms, Term{e.terms[i].Var, s})
			}
			i++
			j++
		}
	}
	return r
}

// Sub returns e - f.
func (e Expr) Sub(f Expr) Expr { return e.Add(f.Scale(-1)) }

// AddConst returns e + k.
func (e Expr) AddConst(k int64) Expr { return e.Add(Const(k)) }

// Scale returns k * e.
func (e Expr) Scale(k int64) Expr {
	if k == 0 {
		return Expr{ovf: e.ovf}
	}
	r := Expr{ovf: e.ovf, terms: make([]Term, len(e.terms))}
	var ok bool
	if r.c, ok = mul64(e.c, k); !ok {
		r.ovf = true
	}
	for i, t := range e.terms {
		c, ok := mul64(t.Coef, k)
		if !ok {
			r.ovf = true
		}
		r.terms[i] = Term{t.Var, c}
	}
	return r
}

// Subst returns e with every occurrence of the variable name replaced by by.
func (e Expr) Subst(name string, by Expr) Expr {
	a := e.Coef(name)
	if a == 0 {
		return e
	}
	rest := e.Add(Expr{terms: []Term{{name, -a}}})
	return rest.Add(by.Scale(a))
}

// rename returns e with variables renamed by f (which must be injective on
// e's variables).
func (e Expr) rename(f func(string) string) Expr {
	r := Expr{c: e.c, ovf: e.ovf, terms: make([]Term, len(e.terms))}
	for i, t := range e.terms {
		r.terms[i] = Term{f(t.Var), t.Coef}
	}
	less := func(i, j int) bool { return varLess(r.terms[i].Var, r.terms[j].Var) }
	if len(r.terms) > 12 {
		sort.Slice(r.terms, less)
		return r
	}
	// sort.Slice's own algorithm on up to 12 elements (pdqsort's
	// insertionSort_func below maxInsertion), without its reflection: the
	// same order even if f were not injective.
	for i := 1; i < len(r.terms); i++ {
		for j := i; j > 0 && less(j, j-1); j-- {
			r.terms[j], r.terms[j-1] = r.terms[j-1], r.terms[j]
		}
	}
	return r
}

// bind substitutes the values in env for the variables of e that env holds.
func (e Expr) bind(env map[string]int64) Expr {
	r := Expr{c: e.c, ovf: e.ovf}
	for _, t := range e.terms {
		v, ok := env[t.Var]
		if !ok {
			r.terms = append(r.terms, t)
			continue
		}
		p, ok1 := mul64(t.Coef, v)
		s, ok2 := add64(r.c, p)
		if !ok1 || !ok2 {
			r.ovf = true
		}
		r.c = s
	}
	return r
}

// Eval returns the value of e under env. It fails with ErrUnbound when a
// variable of e is missing from env, and with ErrOverflow when the value does
// not fit in int64.
func (e Expr) Eval(env map[string]int64) (int64, error) {
	if e.ovf {
		return 0, ErrOverflow
	}
	acc := e.c
	for _, t := range e.terms {
		v, ok := env[t.Var]
		if !ok {
			return 0, fmt.Errorf("%w: %s in %s", ErrUnbound, t.Var, e)
		}
		p, ok1 := mul64(t.Coef, v)
		s, ok2 := add64(acc, p)
		if !ok1 || !ok2 {
			return 0, fmt.Errorf("evaluating %s: %w", e, ErrOverflow)
		}
		acc = s
	}
	return acc, nil
}

// String prints e in canonical form, for example "2*i + j + 8*bound0 + 16";
// ParseExpr reads it back. A poisoned expression prints as "<overflow>".
func (e Expr) String() string {
	if e.ovf {
		return "<overflow>"
	}
	var b strings.Builder
	write := func(neg bool, mag string) {
		switch {
		case b.Len() == 0 && neg:
			b.WriteString("-")
		case b.Len() > 0 && neg:
			b.WriteString(" - ")
		case b.Len() > 0:
			b.WriteString(" + ")
		}
		b.WriteString(mag)
	}
	for _, t := range e.terms {
		m := magnitude(t.Coef)
		if m == "1" {
			write(t.Coef < 0, t.Var)
		} else {
			write(t.Coef < 0, m+"*"+t.Var)
		}
	}
	if e.c != 0 || b.Len() == 0 {
		write(e.c < 0, magnitude(e.c))
	}
	return b.String()
}

// magnitude prints |v| in decimal, including |MinInt64|.
func magnitude(v int64) string {
	if v < 0 {
		return strconv.FormatUint(uint64(-(v+1))+1, 10)
	}
	return strconv.FormatInt(v, 10)
}

// add64 returns a+b and whether it did not overflow.
func add64(a, b int64) (int64, bool) {
	s := a + b
	return s, (s > a) == (b > 0)
}

// mul64 returns a*b and whether it did not overflow.
func mul64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	if p/b != a || (a == -1 && b == minInt64) || (b == -1 && a == minInt64) {
		return p, false
	}
	return p, true
}

const (
	minInt64 = -1 << 63
	maxInt64 = 1<<63 - 1
)
