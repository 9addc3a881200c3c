package ptx

import (
	"strconv"
	"strings"
)

// MaxVersion is the newest PTX ISA version the parser accepts.
const MaxVersion = "9.0"

// MaxVarBytes bounds the size of one declared variable or parameter.
const MaxVarBytes = 1 << 40

// Parse parses PTX source text into a Module. Syntax errors are returned as
// *Error with the line and column of the offending token and what was
// expected there.
func Parse(src string) (*Module, error) {
	toks, err := tokenize(src)
	if err != nil {
		return nil, err
	}
	p := &parser{comments: map[int][]token{}}
	for _, t := range toks {
		if t.kind == tComment {
			p.comments[len(p.toks)] = append(p.comments[len(p.toks)], t)
			continue
		}
		p.toks = append(p.toks, t)
	}
	return p.module()
}

type parser struct {
	toks []token
	i    int
	// comments holds the whole-line comments found before token i; a
	// function body keeps them as *Comment statements.
	comments map[int][]token
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) peekAt(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) take() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) isPunct(s string) bool {
	t := p.peek()
	return t.kind == tPunct && t.text == s
}

func (p *parser) isWord(s string) bool {
	t := p.peek()
	return t.kind == tWord && t.text == s
}

func (p *parser) accept(s string) bool {
	if p.isPunct(s) || p.isWord(s) {
		p.take()
		return true
	}
	return false
}

func (p *parser) expect(s string) (token, error) {
	t := p.peek()
	if (t.kind == tPunct || t.kind == tWord) && t.text == s {
		return p.take(), nil
	}
	return t, errorf(t.pos, "expected %q, found %s", s, t.describe())
}

func (p *parser) expectInt(what string) (int64, token, error) {
	t := p.peek()
	neg := false
	if t.kind == tPunct && t.text == "-" && p.peekAt(1).kind == tInt {
		p.take()
		neg = true
		t = p.peek()
	}
	if t.kind != tInt {
		return 0, t, errorf(t.pos, "expected %s (an integer), found %s", what, t.describe())
	}
	p.take()
	if neg {
		return -t.ival, t, nil
	}
	return t.ival, t, nil
}

func (p *parser) expectName(what string) (token, error) {
	t := p.peek()
	if t.kind != tWord || strings.HasPrefix(t.text, ".") {
		return t, errorf(t.pos, "expected %s, found %s", what, t.describe())
	}
	return p.take(), nil
}

// skipLine skips the rest of the source line of token t (used for .loc and
// other debug directives).
func (p *parser) skipLine(line int) {
	for p.peek().kind != tEOF && p.peek().pos.Line == line {
		p.take()
	}
}

func (p *parser) module() (*Module, error) {
	m := &Module{AddressSize: 64}
	for {
		t := p.peek()
		if t.kind == tEOF {
			return m, nil
		}
		if t.kind != tWord {
			return nil, errorf(t.pos, "expected a directive, found %s", t.describe())
		}
		switch t.text {
		case ".version":
			p.take()
			v := p.take()
			if v.kind != tFloat && v.kind != tInt {
				return nil, errorf(v.pos, "expected version number, found %s", v.describe())
			}
			if !versionOK(v.text) {
				return nil, errorf(v.pos, "unsupported PTX version %s (at most %s)", v.text, MaxVersion)
			}
			m.Version = v.text
		case ".target":
			p.take()
			for {
				n, err := p.expectName("target name")
				if err != nil {
					return nil, err
				}
				m.Target = append(m.Target, n.text)
				if !p.accept(",") {
					break
				}
			}
		case ".address_size":
			p.take()
			n, nt, err := p.expectInt("address size")
			if err != nil {
				return nil, err
			}
			if n != 32 && n != 64 {
				return nil, errorf(nt.pos, "address size must be 32 or 64, not %d", n)
			}
			m.AddressSize = int(n)
		case ".file", ".loc":
			p.take()
			p.skipLine(t.pos.Line)
		case ".section":
			if err := p.skipSection(); err != nil {
				return nil, err
			}
		case ".pragma":
			p.take()
			p.skipLine(t.pos.Line)
			p.accept(";")
		default:
			if err := p.topDecl(m); err != nil {
				return nil, err
			}
		}
	}
}

func versionOK(v string) bool {
	maj, min, ok := strings.Cut(v, ".")
	if !ok {
		return false
	}
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	if err1 != nil || err2 != nil {
		return false
	}
	return a >= 1 && (a < 9 || (a == 9 && b == 0))
}

func (p *parser) skipSection() error {
	p.take()
	depth := 0
	for {
		t := p.take()
		switch {
		case t.kind == tEOF:
			return errorf(t.pos, "unterminated .section")
		case t.kind == tPunct && t.text == "{":
			depth++
		case t.kind == tPunct && t.text == "}":
			depth--
			if depth <= 0 {
				return nil
			}
		}
	}
}

// topDecl parses a module-level function or variable with optional linkage.
func (p *parser) topDecl(m *Module) error {
	start := p.peek()
	linkage := ""
	for {
		switch p.peek().text {
		case ".visible", ".extern", ".weak", ".common":
			linkage = p.take().text[1:]
			continue
		}
		break
	}
	t := p.peek()
	switch t.text {
	case ".entry", ".func":
		f, err := p.function(linkage)
		if err != nil {
			return err
		}
		f.Pos = start.pos
		m.Funcs = append(m.Funcs, f)
		return nil
	case ".global", ".shared", ".const", ".local":
		vars, err := p.varDecl(linkage)
		if err != nil {
			return err
		}
		m.Vars = append(m.Vars, vars...)
		return nil
	}
	return errorf(t.pos, "expected a directive (.version, .target, .entry, .func, .global, ...), found %s", t.describe())
}

func (p *parser) function(linkage string) (*Func, error) {
	kw := p.take()
	f := &Func{Entry: kw.text == ".entry", Linkage: linkage, Pos: kw.pos}
	if !f.Entry && p.isPunct("(") {
		rets, err := p.paramList(false)
		if err != nil {
			return nil, err
		}
		f.Rets = rets
	}
	name, err := p.expectName("function name")
	if err != nil {
		return nil, err
	}
	f.Name = name.text
	if p.isPunct("(") {
		params, err := p.paramList(f.Entry)
		if err != nil {
			return nil, err
		}
		f.Params = params
	}
	for {
		t := p.peek()
		switch t.text {
		case ".maxntid", ".reqntid", ".minnctapersm", ".maxnctapersm", ".maxnreg", ".pragma", ".noreturn", ".reqnctapercluster", ".explicitcluster", ".maxclusterrank":
			p.take()
			if f.Perf == nil {
				f.Perf = map[string][]int{}
			}
			key := t.text[1:]
			if t.text == ".pragma" {
				if p.peek().kind == tStr {
					p.take()
				}
				p.accept(";")
				continue
			}
			for p.peek().kind == tInt {
				f.Perf[key] = append(f.Perf[key], int(p.take().ival))
				if !p.accept(",") {
					break
				}
			}
			continue
		}
		break
	}
	if p.accept(";") {
		return f, nil
	}
	body, err := p.block()
	if err != nil {
		return nil, err
	}
	f.Body = body
	return f, nil
}

func (p *parser) paramList(entry bool) ([]*Param, error) {
	if _, err := p.expect("("); err != nil {
		return nil, err
	}
	var out []*Param
	if p.accept(")") {
		return out, nil
	}
	for {
		prm, err := p.param(entry)
		if err != nil {
			return nil, err
		}
		out = append(out, prm)
		if p.accept(")") {
			return out, nil
		}
		if _, err := p.expect(","); err != nil {
			return nil, errorf(p.peek().pos, "expected \",\" or \")\" in parameter list, found %s", p.peek().describe())
		}
	}
}

func (p *parser) param(entry bool) (*Param, error) {
	t := p.peek()
	prm := &Param{Pos: t.pos}
	switch t.text {
	case ".param":
		prm.Space = SpaceParam
	case ".reg":
		if entry {
			return nil, errorf(t.pos, "kernel parameters must be .param, found .reg")
		}
		prm.Space = SpaceReg
	default:
		return nil, errorf(t.pos, "expected .param or .reg, found %s", t.describe())
	}
	p.take()
	for {
		t := p.peek()
		if t.kind != tWord || !strings.HasPrefix(t.text, ".") {
			break
		}
		p.take()
		switch t.text {
		case ".align":
			n, nt, err := p.expectInt("alignment")
			if err != nil {
				return nil, err
			}
			if n <= 0 || n&(n-1) != 0 {
				return nil, errorf(nt.pos, "alignment must be a power of two, not %d", n)
			}
			prm.Align = int(n)
		case ".ptr":
			prm.Ptr = true
		case ".global", ".shared", ".const", ".local":
		default:
			ty, ok := lookupType(t.text[1:])
			if !ok {
				return nil, errorf(t.pos, "expected a parameter type, found %s", t.describe())
			}
			prm.Type = ty
		}
	}
	if prm.Type == TypeNone {
		return nil, errorf(p.peek().pos, "expected a parameter type, found %s", p.peek().describe())
	}
	name, err := p.expectName("parameter name")
	if err != nil {
		return nil, err
	}
	prm.Name = name.text
	dims, err := p.dims()
	if err != nil {
		return nil, err
	}
	total := uint64(max(prm.Type.Size(), 1))
	for _, d := range dims {
		if d < 0 {
			return nil, errorf(name.pos, "parameter %s needs an explicit array size", prm.Name)
		}
		if total *= uint64(d); total > MaxVarBytes {
			return nil, errorf(name.pos, "parameter %s is larger than %d bytes", prm.Name, uint64(MaxVarBytes))
		}
	}
	prm.Dims = dims
	return prm, nil
}

// dims parses optional array dimensions; [] yields -1.
func (p *parser) dims() ([]int, error) {
	var dims []int
	for p.isPunct("[") {
		p.take()
		if p.accept("]") {
			dims = append(dims, -1)
			continue
		}
		n, nt, err := p.expectInt("array size")
		if err != nil {
			return nil, err
		}
		if n <= 0 || n > 1<<31 {
			return nil, errorf(nt.pos, "bad array size %d", n)
		}
		dims = append(dims, int(n))
		if _, err := p.expect("]"); err != nil {
			return nil, err
		}
	}
	return dims, nil
}

// varDecl parses `.space [.align N] [.vN] .type name[dims] [= init] {, name...};`.
func (p *parser) varDecl(linkage string) ([]*Var, error) {
	st := p.take()
	space := spaceMods[st.text[1:]]
	base := Var{Pos: st.pos, Space: space, Linkage: linkage}
	for {
		t := p.peek()
		if t.kind != tWord || !strings.HasPrefix(t.text, ".") {
			break
		}
		p.take()
		switch {
		case t.text == ".align":
			n, nt, err := p.expectInt("alignment")
			if err != nil {
				return nil, err
			}
			if n <= 0 || n&(n-1) != 0 {
				return nil, errorf(nt.pos, "alignment must be a power of two, not %d", n)
			}
			base.Align = int(n)
		case t.text == ".v2" || t.text == ".v4":
			base.Vec = int(t.text[2] - '0')
		case t.text == ".ptr":
		default:
			ty, ok := lookupType(t.text[1:])
			if !ok {
				return nil, errorf(t.pos, "expected a type in %s declaration, found %s", st.text, t.describe())
			}
			base.Type = ty
		}
	}
	if base.Type == TypeNone {
		return nil, errorf(p.peek().pos, "expected a type in %s declaration, found %s", st.text, p.peek().describe())
	}
	var out []*Var
	for {
		name, err := p.expectName("variable name")
		if err != nil {
			return nil, err
		}
		v := base
		v.Pos = name.pos
		v.Name = name.text
		if v.Dims, err = p.dims(); err != nil {
			return nil, err
		}
		if p.accept("=") {
			if v.Init, err = p.initializer(); err != nil {
				return nil, err
			}
			if len(v.Dims) > 0 && v.Dims[0] < 0 {
				v.Dims[0] = len(v.Init) / max(1, product(v.Dims[1:]))
			}
		}
		total := uint64(max(v.Type.Size(), 1) * max(v.Vec, 1))
		for i, d := range v.Dims {
			if d < 0 && (i > 0 || v.Linkage != "extern") {
				return nil, errorf(name.pos, "variable %s needs an explicit array size (only .extern arrays may omit it)", v.Name)
			}
			if d > 0 {
				if total *= uint64(d); total > MaxVarBytes {
					return nil, errorf(name.pos, "variable %s is larger than %d bytes", v.Name, uint64(MaxVarBytes))
				}
			}
		}
		out = append(out, &v)
		if !p.accept(",") {
			break
		}
	}
	if _, err := p.expect(";"); err != nil {
		return nil, err
	}
	return out, nil
}

// initializer parses a scalar or a (possibly nested) brace list, flattened.
func (p *parser) initializer() ([]Operand, error) {
	if p.accept("{") {
		var out []Operand
		if p.accept("}") {
			return out, nil
		}
		for {
			elems, err := p.initializer()
			if err != nil {
				return nil, err
			}
			out = append(out, elems...)
			if p.accept("}") {
				return out, nil
			}
			if _, err := p.expect(","); err != nil {
				return nil, err
			}
		}
	}
	o, err := p.operand()
	if err != nil {
		return nil, err
	}
	switch o.Kind {
	case OpInt, OpFloat, OpSym:
		return []Operand{o}, nil
	}
	return nil, errorf(o.Pos, "expected a constant initializer, found %s", o.String())
}

func (p *parser) block() (*Block, error) {
	open, err := p.expect("{")
	if err != nil {
		return nil, err
	}
	b := &Block{Pos: open.pos}
	for {
		for _, c := range p.comments[p.i] {
			b.Stmts = append(b.Stmts, &Comment{Pos: c.pos, Text: c.text})
		}
		delete(p.comments, p.i)
		t := p.peek()
		switch {
		case t.kind == tEOF:
			return nil, errorf(t.pos, "expected \"}\" to close the block opened at %s, found end of input", open.pos)
		case t.kind == tPunct && t.text == "}":
			p.take()
			return b, nil
		case t.kind == tPunct && t.text == "{":
			inner, err := p.block()
			if err != nil {
				return nil, err
			}
			b.Stmts = append(b.Stmts, inner)
		case t.kind == tPunct && t.text == "@":
			in, err := p.inst()
			if err != nil {
				return nil, err
			}
			b.Stmts = append(b.Stmts, in)
		case t.kind == tWord && (t.text == ".loc" || t.text == ".file"):
			p.take()
			p.skipLine(t.pos.Line)
		case t.kind == tWord && t.text == ".pragma":
			p.take()
			if p.peek().kind == tStr {
				p.take()
			}
			if _, err := p.expect(";"); err != nil {
				return nil, err
			}
		case t.kind == tWord && t.text == ".reg":
			decls, err := p.regDecl()
			if err != nil {
				return nil, err
			}
			for _, d := range decls {
				b.Stmts = append(b.Stmts, d)
			}
		case t.kind == tWord && (t.text == ".shared" || t.text == ".local" || t.text == ".param" || t.text == ".const" || t.text == ".global"):
			vars, err := p.varDecl("")
			if err != nil {
				return nil, err
			}
			for _, v := range vars {
				b.Stmts = append(b.Stmts, v)
			}
		case t.kind == tWord && (t.text == ".extern" || t.text == ".visible"):
			p.take()
			if s := p.peek().text; s != ".shared" && s != ".global" && s != ".const" {
				return nil, errorf(p.peek().pos, "expected a variable declaration after %s, found %s", t.text, p.peek().describe())
			}
			vars, err := p.varDecl(t.text[1:])
			if err != nil {
				return nil, err
			}
			for _, v := range vars {
				b.Stmts = append(b.Stmts, v)
			}
		case t.kind == tWord && !strings.HasPrefix(t.text, ".") && p.peekAt(1).kind == tPunct && p.peekAt(1).text == ":":
			p.take()
			p.take()
			b.Stmts = append(b.Stmts, &Label{Pos: t.pos, Name: t.text})
		case t.kind == tWord && !strings.HasPrefix(t.text, ".") && !strings.HasPrefix(t.text, "%"):
			in, err := p.inst()
			if err != nil {
				return nil, err
			}
			b.Stmts = append(b.Stmts, in)
		default:
			return nil, errorf(t.pos, "expected an instruction, label or declaration, found %s", t.describe())
		}
	}
}

func (p *parser) regDecl() ([]*RegDecl, error) {
	kw := p.take()
	var base RegDecl
	base.Pos = kw.pos
	for {
		t := p.peek()
		if t.kind != tWord || !strings.HasPrefix(t.text, ".") {
			break
		}
		p.take()
		if t.text == ".v2" || t.text == ".v4" {
			base.Vec = int(t.text[2] - '0')
			continue
		}
		ty, ok := lookupType(t.text[1:])
		if !ok {
			return nil, errorf(t.pos, "expected a register type, found %s", t.describe())
		}
		base.Type = ty
	}
	if base.Type == TypeNone {
		return nil, errorf(p.peek().pos, "expected a register type, found %s", p.peek().describe())
	}
	var out []*RegDecl
	for {
		name, err := p.expectName("register name")
		if err != nil {
			return nil, err
		}
		d := base
		d.Pos = name.pos
		d.Name = name.text
		if p.accept("<") {
			n, nt, err := p.expectInt("register count")
			if err != nil {
				return nil, err
			}
			if n <= 0 || n > 1<<20 {
				return nil, errorf(nt.pos, "bad register count %d", n)
			}
			d.Count = int(n)
			if _, err := p.expect(">"); err != nil {
				return nil, err
			}
		}
		out = append(out, &d)
		if !p.accept(",") {
			break
		}
	}
	if _, err := p.expect(";"); err != nil {
		return nil, err
	}
	return out, nil
}

func (p *parser) inst() (*Inst, error) {
	in := &Inst{Pos: p.peek().pos}
	if p.accept("@") {
		neg := p.accept("!")
		g := p.peek()
		if g.kind != tWord || strings.HasPrefix(g.text, ".") {
			return nil, errorf(g.pos, "expected a predicate register after @, found %s", g.describe())
		}
		p.take()
		in.Guard, in.GuardNeg = g.text, neg
	}
	op := p.peek()
	if op.kind != tWord || strings.HasPrefix(op.text, ".") || strings.HasPrefix(op.text, "%") {
		return nil, errorf(op.pos, "expected an instruction, found %s", op.describe())
	}
	p.take()
	in.Pos = op.pos
	parts := strings.Split(op.text, ".")
	in.Op = parts[0]
	for _, m := range parts[1:] {
		if m == "" {
			return nil, errorf(op.pos, "empty modifier in %q", op.text)
		}
		in.Mods = append(in.Mods, m)
	}
	info := LookupOp(in.Op)
	if info == nil {
		return nil, errorf(op.pos, "unknown instruction %q", in.Op)
	}
	if err := classify(in, info); err != nil {
		return nil, err
	}
	if !p.isPunct(";") {
		for {
			o, err := p.operand()
			if err != nil {
				return nil, err
			}
			in.Args = append(in.Args, o)
			if !p.accept(",") {
				break
			}
		}
	}
	if _, err := p.expect(";"); err != nil {
		t := p.peek()
		return nil, errorf(t.pos, "expected \",\" or \";\" after operand of %s, found %s", in.Op, t.describe())
	}
	if len(in.Args) < info.MinArgs || len(in.Args) > info.MaxArgs {
		if info.MinArgs == info.MaxArgs {
			return nil, errorf(in.Pos, "%s takes %d operands, found %d", in.Op, info.MinArgs, len(in.Args))
		}
		return nil, errorf(in.Pos, "%s takes %d to %d operands, found %d", in.Op, info.MinArgs, info.MaxArgs, len(in.Args))
	}
	return in, nil
}

func (p *parser) operand() (Operand, error) {
	t := p.peek()
	o := Operand{Pos: t.pos}
	switch {
	case t.kind == tPunct && t.text == "[":
		p.take()
		o.Kind = OpAddr
		b := p.peek()
		switch b.kind {
		case tWord:
			p.take()
			o.Name = b.text
			if p.isPunct("+") || p.isPunct("-") {
				neg := p.take().text == "-"
				n, _, err := p.expectInt("address offset")
				if err != nil {
					return o, err
				}
				if neg {
					n = -n
				}
				o.Int = n
			}
		case tInt:
			p.take()
			o.Int = b.ival
		default:
			return o, errorf(b.pos, "expected a register, variable or address in [ ], found %s", b.describe())
		}
		if _, err := p.expect("]"); err != nil {
			return o, err
		}
		return o, nil
	case t.kind == tPunct && (t.text == "{" || t.text == "("):
		p.take()
		closer := "}"
		o.Kind = OpVec
		if t.text == "(" {
			closer, o.Kind = ")", OpList
		}
		if p.accept(closer) {
			return o, nil
		}
		for {
			e, err := p.operand()
			if err != nil {
				return o, err
			}
			o.Elems = append(o.Elems, e)
			if p.accept(closer) {
				return o, nil
			}
			if _, err := p.expect(","); err != nil {
				return o, errorf(p.peek().pos, "expected \",\" or %q, found %s", closer, p.peek().describe())
			}
		}
	case t.kind == tPunct && t.text == "!":
		p.take()
		r, err := p.operand()
		if err != nil {
			return o, err
		}
		if r.Kind != OpReg && r.Kind != OpSym {
			return o, errorf(t.pos, "expected a predicate after !, found %s", r.String())
		}
		r.Neg = true
		r.Pos = t.pos
		return r, nil
	case t.kind == tPunct && t.text == "-":
		p.take()
		n := p.peek()
		switch n.kind {
		case tInt:
			p.take()
			return Operand{Pos: t.pos, Kind: OpInt, Int: -n.ival}, nil
		case tFloat:
			p.take()
			o := floatOperand(n)
			o.Pos = t.pos
			o.Float = -o.Float
			switch o.FloatSize {
			case 4:
				o.FloatBits ^= 1 << 31
			case 8:
				o.FloatBits ^= 1 << 63
			}
			return o, nil
		}
		return o, errorf(n.pos, "expected a number after -, found %s", n.describe())
	case t.kind == tInt:
		p.take()
		return Operand{Pos: t.pos, Kind: OpInt, Int: t.ival, HexDigits: t.hex}, nil
	case t.kind == tFloat:
		p.take()
		return floatOperand(t), nil
	case t.kind == tWord && !strings.HasPrefix(t.text, "."):
		p.take()
		if t.text == "_" {
			return Operand{Pos: t.pos, Kind: OpSink}, nil
		}
		o.Name = t.text
		o.Kind = OpSym
		if strings.HasPrefix(t.text, "%") {
			o.Kind = OpReg
		}
		if p.isPunct("|") {
			p.take()
			q, err := p.expectName("second predicate")
			if err != nil {
				return o, err
			}
			o.Pair = q.text
		}
		if o.Kind == OpSym && (p.isPunct("+") || p.isPunct("-")) && p.peekAt(1).kind == tInt {
			// name+offset: the address of a variable plus a constant.
			neg := p.take().text == "-"
			n := p.take().ival
			if neg {
				n = -n
			}
			o.Int = n
		}
		return o, nil
	}
	return o, errorf(t.pos, "expected an operand, found %s", t.describe())
}

func floatOperand(t token) Operand {
	return Operand{Pos: t.pos, Kind: OpFloat, Float: t.fval, FloatBits: t.fbit, FloatSize: t.fsz}
}
