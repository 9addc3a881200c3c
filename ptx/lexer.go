package ptx

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

type tokKind uint8

const (
	tEOF     tokKind = iota
	tWord            // identifiers, directives, registers, dotted opcodes
	tInt             // integer literal
	tFloat           // floating-point literal
	tStr             // string literal
	tPunct           // one punctuation character
	tComment         // a // comment on a line of its own (text: what follows //)
)

type token struct {
	kind tokKind
	text string
	pos  Pos
	ival int64
	fval float64
	fbit uint64
	fsz  int
	hex  int // hex digits of a 0x integer literal
}

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tStr:
		return fmt.Sprintf("string %q", t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

type lexer struct {
	src       string
	off       int
	line, col int
	// lineStart is true while only white space precedes off on its line.
	lineStart bool
	comment   *token // a whole-line comment skipSpace found, not yet returned
}

func isWordStart(c byte) bool {
	return c == '_' || c == '$' || c == '%' || c == '.' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isWordChar(c byte) bool {
	return c == '_' || c == '$' || c == '.' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (lx *lexer) advance(n int) {
	for i := 0; i < n && lx.off < len(lx.src); i++ {
		if lx.src[lx.off] == '\n' {
			lx.line++
			lx.col = 1
		} else {
			lx.col++
		}
		lx.off++
	}
}

// skipSpace skips white space and comments.
func (lx *lexer) skipSpace() error {
	for lx.off < len(lx.src) {
		c := lx.src[lx.off]
		switch {
		case c == '\n':
			lx.advance(1)
			lx.lineStart = true
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			lx.advance(1)
		case strings.HasPrefix(lx.src[lx.off:], "//"):
			p := Pos{lx.line, lx.col}
			start := lx.off + 2
			for lx.off < len(lx.src) && lx.src[lx.off] != '\n' {
				lx.advance(1)
			}
			if lx.lineStart {
				lx.comment = &token{kind: tComment, text: strings.TrimSuffix(lx.src[start:lx.off], "\r"), pos: p}
				return nil
			}
		case strings.HasPrefix(lx.src[lx.off:], "/*"):
			p := Pos{lx.line, lx.col}
			end := strings.Index(lx.src[lx.off+2:], "*/")
			if end < 0 {
				return errorf(p, "unterminated /* comment")
			}
			lx.advance(end + 4)
			lx.lineStart = false
		default:
			return nil
		}
	}
	return nil
}

func (lx *lexer) next() (token, error) {
	if err := lx.skipSpace(); err != nil {
		return token{}, err
	}
	if c := lx.comment; c != nil {
		lx.comment = nil
		return *c, nil
	}
	lx.lineStart = false
	p := Pos{lx.line, lx.col}
	if lx.off >= len(lx.src) {
		return token{kind: tEOF, pos: p}, nil
	}
	s := lx.src[lx.off:]
	c := s[0]
	switch {
	case isDigit(c):
		return lx.number(p)
	case isWordStart(c):
		n := 1
		for n < len(s) {
			if isWordChar(s[n]) {
				n++
			} else if s[n] == ':' && n+2 < len(s) && s[n+1] == ':' && isWordChar(s[n+2]) {
				n += 2 // state-space and cache-hint qualifiers such as .shared::cta
			} else {
				break
			}
		}
		lx.advance(n)
		return token{kind: tWord, text: s[:n], pos: p}, nil
	case c == '"':
		end := strings.IndexAny(s[1:], "\"\n")
		if end < 0 || s[1+end] != '"' {
			return token{}, errorf(p, "unterminated string literal")
		}
		lx.advance(end + 2)
		return token{kind: tStr, text: s[1 : 1+end], pos: p}, nil
	case strings.ContainsRune(",;:{}[]()<>+-!@=|*", rune(c)):
		lx.advance(1)
		return token{kind: tPunct, text: s[:1], pos: p}, nil
	}
	return token{}, errorf(p, "unexpected character %q", c)
}

// number lexes decimal, hex, octal, binary and float-hex (0f/0d) literals,
// and decimal floating-point literals.
func (lx *lexer) number(p Pos) (token, error) {
	s := lx.src[lx.off:]
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'F' || s[1] == 'd' || s[1] == 'D') {
		digits := 8
		if s[1] == 'd' || s[1] == 'D' {
			digits = 16
		}
		if len(s) < 2+digits {
			return token{}, errorf(p, "float literal %s needs %d hex digits", s[:2], digits)
		}
		for i := 2; i < 2+digits; i++ {
			if !isHex(s[i]) {
				return token{}, errorf(p, "float literal %s needs %d hex digits", s[:2], digits)
			}
		}
		bits, _ := strconv.ParseUint(s[2:2+digits], 16, 64)
		t := token{kind: tFloat, text: s[:2+digits], pos: p, fbit: bits}
		if digits == 8 {
			t.fval, t.fsz = float64(math.Float32frombits(uint32(bits))), 4
		} else {
			t.fval, t.fsz = math.Float64frombits(bits), 8
		}
		lx.advance(2 + digits)
		return t, nil
	}
	n := 0
	isFloat := false
	base := 10
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		base, n = 16, 2
		for n < len(s) && isHex(s[n]) {
			n++
		}
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B'):
		base, n = 2, 2
		for n < len(s) && (s[n] == '0' || s[n] == '1') {
			n++
		}
	default:
		for n < len(s) && isDigit(s[n]) {
			n++
		}
		if n < len(s) && s[n] == '.' && n+1 < len(s) && isDigit(s[n+1]) {
			isFloat = true
			n++
			for n < len(s) && isDigit(s[n]) {
				n++
			}
		}
		if n < len(s) && (s[n] == 'e' || s[n] == 'E') {
			m := n + 1
			if m < len(s) && (s[m] == '+' || s[m] == '-') {
				m++
			}
			if m < len(s) && isDigit(s[m]) {
				isFloat = true
				n = m
				for n < len(s) && isDigit(s[n]) {
					n++
				}
			}
		}
	}
	text := s[:n]
	if isFloat {
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return token{}, errorf(p, "bad floating-point literal %q", text)
		}
		lx.advance(n)
		return token{kind: tFloat, text: text, pos: p, fval: v}, nil
	}
	digits := text
	switch base {
	case 16, 2:
		digits = text[2:]
	default:
		if len(text) > 1 && text[0] == '0' {
			base, digits = 8, text[1:]
		}
	}
	if digits == "" {
		return token{}, errorf(p, "bad integer literal %q", text)
	}
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		return token{}, errorf(p, "bad integer literal %q", text)
	}
	if n < len(s) && (s[n] == 'U' || s[n] == 'u') {
		n++
	}
	if n < len(s) && isWordChar(s[n]) {
		return token{}, errorf(p, "bad integer literal %q", s[:n+1])
	}
	lx.advance(n)
	t := token{kind: tInt, text: s[:n], pos: p, ival: int64(v)}
	if base == 16 {
		t.hex = len(digits)
	}
	return t, nil
}

// tokenize splits src into tokens, ending with one tEOF token.
func tokenize(src string) ([]token, error) {
	lx := &lexer{src: src, line: 1, col: 1, lineStart: true}
	var toks []token
	for {
		t, err := lx.next()
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		if t.kind == tEOF {
			return toks, nil
		}
	}
}
