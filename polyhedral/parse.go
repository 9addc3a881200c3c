package polyhedral

import (
	"fmt"
	"strconv"
)

// SyntaxError is a ParseExpr failure at a byte offset of its input.
type SyntaxError struct {
	Offset int    // byte offset in the input
	Msg    string // what was wrong there
}

// Error implements error.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("polyhedral: offset %d: %s", e.Offset, e.Msg)
}

// ParseExpr parses an affine expression as String prints it: terms joined by
// "+" or "-", each term an integer, a variable, "INT*VAR" or "VAR*INT", with
// an optional leading "-" and any spaces between tokens. Variables are
// identifiers ([A-Za-z_][A-Za-z0-9_]*). Repeated variables are combined; the
// result is in canonical form, so ParseExpr(e.String()) equals e.
func ParseExpr(s string) (Expr, error) {
	p := exprParser{s: s}
	e := Expr{}
	p.space()
	neg := false
	if p.peek() == '-' {
		neg = true
		p.pos++
	}
	for {
		p.space()
		start := p.pos
		t, err := p.term(neg)
		if err != nil {
			return Expr{}, err
		}
		e = e.Add(t)
		if e.ovf {
			return Expr{}, &SyntaxError{start, "value overflows int64"}
		}
		p.space()
		switch p.peek() {
		case 0:
			if p.pos != len(s) {
				return Expr{}, &SyntaxError{p.pos, "unexpected NUL byte"}
			}
			return e, nil
		case '+':
			neg = false
		case '-':
			neg = true
		default:
			return Expr{}, &SyntaxError{p.pos, fmt.Sprintf("unexpected %q, want + or -", p.s[p.pos])}
		}
		p.pos++
	}
}

type exprParser struct {
	s   string
	pos int
}

func (p *exprParser) peek() byte {
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

func (p *exprParser) space() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

// term parses one term; neg negates it (the sign before it).
func (p *exprParser) term(neg bool) (Expr, error) {
	start := p.pos
	switch c := p.peek(); {
	case isDigit(c):
		v, err := p.number(neg)
		if err != nil {
			return Expr{}, err
		}
		p.space()
		if p.peek() != '*' {
			return Const(v), nil
		}
		p.pos++
		p.space()
		name, err := p.ident()
		if err != nil {
			return Expr{}, err
		}
		return NewExpr(0, Term{name, v}), nil
	case isIdentStart(c):
		name, _ := p.ident()
		p.space()
		if p.peek() != '*' {
			if neg {
				return NewExpr(0, Term{name, -1}), nil
			}
			return Var(name), nil
		}
		p.pos++
		p.space()
		if !isDigit(p.peek()) {
			return Expr{}, &SyntaxError{p.pos, "want an integer after '*'"}
		}
		v, err := p.number(neg)
		if err != nil {
			return Expr{}, err
		}
		return NewExpr(0, Term{name, v}), nil
	case c == 0 && p.pos == len(p.s):
		return Expr{}, &SyntaxError{start, "unexpected end of expression, want a term"}
	default:
		return Expr{}, &SyntaxError{start, fmt.Sprintf("unexpected %q, want a term", c)}
	}
}

// number parses a decimal magnitude and applies the sign; -2^63 is allowed.
func (p *exprParser) number(neg bool) (int64, error) {
	start := p.pos
	for isDigit(p.peek()) {
		p.pos++
	}
	u, err := strconv.ParseUint(p.s[start:p.pos], 10, 64)
	switch {
	case err != nil, !neg && u > maxInt64, neg && u > 1<<63:
		return 0, &SyntaxError{start, "integer overflows int64"}
	case neg:
		return int64(-u), nil
	default:
		return int64(u), nil
	}
}

func (p *exprParser) ident() (string, error) {
	start := p.pos
	if !isIdentStart(p.peek()) {
		return "", &SyntaxError{start, "want a variable name"}
	}
	for isIdentStart(p.peek()) || isDigit(p.peek()) {
		p.pos++
	}
	return p.s[start:p.pos], nil
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
