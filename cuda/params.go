package cuda

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gxbit/gxbit/gpu"
)

// paramError is a fault in a .entry parameter list, at a 1-based line and
// column of the PTX text.
type paramError struct {
	Line, Col int
	Msg       string
}

func (e *paramError) Error() string { return fmt.Sprintf("ptx:%d:%d: %s", e.Line, e.Col, e.Msg) }

// typeSize gives the size in bytes of a PTX fundamental type that may
// declare a kernel parameter, or 0.
func typeSize(t string) int {
	switch t {
	case ".b8", ".u8", ".s8":
		return 1
	case ".b16", ".u16", ".s16", ".f16", ".bf16":
		return 2
	case ".b32", ".u32", ".s32", ".f32", ".f16x2", ".bf16x2":
		return 4
	case ".b64", ".u64", ".s64", ".f64":
		return 8
	case ".b128":
		return 16
	}
	return 0
}

// entryParams reads the parameter list of `.entry name` from PTX text. It is
// a small scanner over the entry header, independent of any full PTX parser:
// comments are skipped, and each parameter is `.param` followed by optional
// state-space qualifiers (.ptr, .global, .const, .local, .shared), an
// optional `.align N`, one type, a name and optional `[N]` dimensions.
func entryParams(ptx, name string) ([]gpu.Param, error) {
	src := stripComments(ptx)
	at := findEntry(src, name)
	if at < 0 {
		return nil, fmt.Errorf("no .entry named %q in the PTX text", name)
	}
	// at is just past the name; the list is optional.
	i := skipSpace(src, at)
	if i >= len(src) || src[i] != '(' {
		return nil, nil
	}
	end := strings.IndexByte(src[i:], ')')
	if end < 0 {
		return nil, posError(ptx, i, "parameter list of %s is not closed", name)
	}
	list := src[i+1 : i+end]
	base := i + 1
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var params []gpu.Param
	start := 0
	for k := 0; k <= len(list); k++ {
		if k < len(list) && list[k] != ',' {
			continue
		}
		p, err := parseParam(ptx, list[start:k], base+start)
		if err != nil {
			return nil, err
		}
		params = append(params, p)
		start = k + 1
	}
	return params, nil
}

// parseParam reads one declaration of a parameter list; off is its byte
// offset in the PTX text, for error positions.
func parseParam(ptx, decl string, off int) (gpu.Param, error) {
	toks := tokens(decl, off)
	if len(toks) == 0 {
		return gpu.Param{}, posError(ptx, off, "empty parameter declaration")
	}
	if toks[0].s != ".param" {
		return gpu.Param{}, posError(ptx, toks[0].off, "kernel parameter must start with .param, found %q", toks[0].s)
	}
	var p gpu.Param
	elem, align := 0, 0
	k := 1
	for ; k < len(toks) && strings.HasPrefix(toks[k].s, "."); k++ {
		t := toks[k]
		switch {
		case t.s == ".align":
			if k+1 >= len(toks) {
				return gpu.Param{}, posError(ptx, t.off, ".align needs a value")
			}
			n, err := strconv.Atoi(toks[k+1].s)
			if err != nil || n <= 0 || n&(n-1) != 0 || n > 1<<16 {
				return gpu.Param{}, posError(ptx, toks[k+1].off, "bad .align value %q", toks[k+1].s)
			}
			align = n
			k++
		case t.s == ".ptr" || t.s == ".global" || t.s == ".const" || t.s == ".local" || t.s == ".shared":
			// State-space qualifiers of a pointer parameter: no effect on layout.
		case typeSize(t.s) > 0:
			if elem != 0 {
				return gpu.Param{}, posError(ptx, t.off, "second type %s in one parameter", t.s)
			}
			elem = typeSize(t.s)
		default:
			return gpu.Param{}, posError(ptx, t.off, "unexpected %q in parameter declaration", t.s)
		}
	}
	if elem == 0 {
		return gpu.Param{}, posError(ptx, toks[0].off, "parameter has no type")
	}
	if k >= len(toks) || !isIdent(toks[k].s) {
		return gpu.Param{}, posError(ptx, toks[0].off, "parameter has no name")
	}
	p.Name = toks[k].s
	k++
	count := 1
	for k < len(toks) {
		if toks[k].s != "[" || k+2 >= len(toks) || toks[k+2].s != "]" {
			return gpu.Param{}, posError(ptx, toks[k].off, "unexpected %q after parameter %s", toks[k].s, p.Name)
		}
		n, err := strconv.Atoi(toks[k+1].s)
		if err != nil || n <= 0 || n > 1<<20 || count*n > 1<<20 {
			return gpu.Param{}, posError(ptx, toks[k+1].off, "bad array size %q for parameter %s", toks[k+1].s, p.Name)
		}
		count *= n
		k += 3
	}
	p.Size = elem * count
	p.Align = align
	if p.Align == 0 {
		p.Align = elem
	}
	return p, nil
}

// token is a word of a parameter declaration and its offset in the text.
type token struct {
	s   string
	off int
}

// tokens splits a declaration into words, brackets standing alone.
func tokens(s string, off int) []token {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '[' || c == ']':
			out = append(out, token{s[i : i+1], off + i})
			i++
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r[]", rune(s[j])) {
				j++
			}
			out = append(out, token{s[i:j], off + i})
			i = j
		}
	}
	return out
}

// findEntry returns the offset just past the name in the first
// `.entry name` of src, or -1.
func findEntry(src, name string) int {
	for from := 0; ; {
		i := strings.Index(src[from:], ".entry")
		if i < 0 {
			return -1
		}
		i += from
		from = i + len(".entry")
		if i > 0 && isIdentByte(src[i-1]) {
			continue
		}
		j := skipSpace(src, from)
		if j == from || !strings.HasPrefix(src[j:], name) {
			continue
		}
		end := j + len(name)
		if end < len(src) && isIdentByte(src[end]) {
			continue
		}
		return end
	}
}

// stripComments replaces // and /* */ comments with spaces, keeping
// newlines, so offsets into the result are offsets into s. Quoted strings
// are left alone.
func stripComments(s string) string {
	b := []byte(s)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '"':
			for i++; i < len(b) && b[i] != '"' && b[i] != '\n'; i++ {
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			b[i], b[i+1] = ' ', ' '
			for i += 2; i < len(b); i++ {
				if b[i] == '*' && i+1 < len(b) && b[i+1] == '/' {
					b[i], b[i+1] = ' ', ' '
					i++
					break
				}
				if b[i] != '\n' {
					b[i] = ' '
				}
			}
		}
	}
	return string(b)
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c == '%' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// isIdent reports whether s is a PTX identifier.
func isIdent(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) {
			return false
		}
	}
	return true
}

// posError builds a paramError at byte offset off of ptx.
func posError(ptx string, off int, format string, args ...any) error {
	if off > len(ptx) {
		off = len(ptx)
	}
	line := 1 + strings.Count(ptx[:off], "\n")
	col := off - strings.LastIndexByte(ptx[:off], '\n')
	return &paramError{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}
