package ptx

import (
	"errors"
	"strconv"
	"strings"
)

// SpecialRegs maps each supported special register to its type.
var SpecialRegs = map[string]Type{
	"%tid.x": U32, "%tid.y": U32, "%tid.z": U32,
	"%ntid.x": U32, "%ntid.y": U32, "%ntid.z": U32,
	"%ctaid.x": U32, "%ctaid.y": U32, "%ctaid.z": U32,
	"%nctaid.x": U32, "%nctaid.y": U32, "%nctaid.z": U32,
	"%laneid": U32, "%warpid": U32, "%nwarpid": U32, "%smid": U32, "%nsmid": U32,
	"%gridid": U64, "%clock": U32, "%clock64": U64, "%globaltimer": U64,
	"%globaltimer_lo": U32, "%globaltimer_hi": U32,
	"%lanemask_eq": U32, "%lanemask_lt": U32, "%lanemask_le": U32, "%lanemask_gt": U32, "%lanemask_ge": U32,
	"%dynamic_smem_size": U32, "%total_smem_size": U32,
}

// Scope resolves names inside one function body: registers, variables,
// parameters and labels. Lookups walk from the innermost block outwards.
type Scope struct {
	mod    *Module
	fn     *Func
	frames []*frame
	labels map[string]bool
}

type frame struct {
	regs map[string]*RegDecl
	rng  []*RegDecl // %r<N> ranges
	vars map[string]*Var
}

// NewScope starts name resolution for function f of module m.
func NewScope(m *Module, f *Func) *Scope {
	s := &Scope{mod: m, fn: f, labels: map[string]bool{}}
	if f.Body != nil {
		collectLabels(f.Body, s.labels)
	}
	return s
}

func collectLabels(b *Block, out map[string]bool) {
	for _, st := range b.Stmts {
		switch x := st.(type) {
		case *Label:
			out[x.Name] = true
		case *Block:
			collectLabels(x, out)
		}
	}
}

// Push enters block b, declaring everything b declares directly. It enters
// the block even when it reports a duplicate declaration, so every Push is
// matched by a Pop.
func (s *Scope) Push(b *Block) error {
	fr := &frame{regs: map[string]*RegDecl{}, vars: map[string]*Var{}}
	s.frames = append(s.frames, fr)
	for _, st := range b.Stmts {
		switch x := st.(type) {
		case *RegDecl:
			if x.Count > 0 {
				fr.rng = append(fr.rng, x)
				continue
			}
			if _, dup := fr.regs[x.Name]; dup {
				return errorf(x.Pos, "register %s declared twice in one scope", x.Name)
			}
			fr.regs[x.Name] = x
		case *Var:
			if _, dup := fr.vars[x.Name]; dup {
				return errorf(x.Pos, "variable %s declared twice in one scope", x.Name)
			}
			fr.vars[x.Name] = x
		}
	}
	return nil
}

// Pop leaves the innermost block.
func (s *Scope) Pop() { s.frames = s.frames[:len(s.frames)-1] }

// Reg resolves a register name to its type. Special registers resolve too.
func (s *Scope) Reg(name string) (Type, bool) {
	for i := len(s.frames) - 1; i >= 0; i-- {
		fr := s.frames[i]
		if d, ok := fr.regs[name]; ok {
			return d.Type, true
		}
		for _, d := range fr.rng {
			if rest, ok := strings.CutPrefix(name, d.Name); ok && rest != "" {
				if n, err := strconv.Atoi(rest); err == nil && n >= 0 && n < d.Count && (rest == "0" || rest[0] != '0') {
					return d.Type, true
				}
			}
		}
	}
	for _, p := range s.fn.Params {
		if p.Space == SpaceReg && p.Name == name {
			return p.Type, true
		}
	}
	for _, p := range s.fn.Rets {
		if p.Space == SpaceReg && p.Name == name {
			return p.Type, true
		}
	}
	if t, ok := SpecialRegs[name]; ok {
		return t, true
	}
	return TypeNone, false
}

// Symbol is what a non-register name refers to.
type Symbol struct {
	Var   *Var   // a variable in some state space
	Param *Param // a parameter of the enclosing function
	Ret   bool   // Param is a return parameter
	Func  *Func  // a function
	Label bool   // a label of the enclosing function
}

// Space is the state space of a variable or parameter symbol.
func (y Symbol) Space() Space {
	switch {
	case y.Var != nil:
		return y.Var.Space
	case y.Param != nil:
		return y.Param.Space
	}
	return SpaceGeneric
}

// Lookup resolves a non-register name.
func (s *Scope) Lookup(name string) (Symbol, bool) {
	for i := len(s.frames) - 1; i >= 0; i-- {
		if v, ok := s.frames[i].vars[name]; ok {
			return Symbol{Var: v}, true
		}
	}
	for _, p := range s.fn.Params {
		if p.Name == name {
			return Symbol{Param: p}, true
		}
	}
	for _, p := range s.fn.Rets {
		if p.Name == name {
			return Symbol{Param: p, Ret: true}, true
		}
	}
	if s.labels[name] {
		return Symbol{Label: true}, true
	}
	for _, v := range s.mod.Vars {
		if v.Name == name {
			return Symbol{Var: v}, true
		}
	}
	if f := s.mod.Func(name); f != nil {
		return Symbol{Func: f}, true
	}
	return Symbol{}, false
}

// Check verifies a parsed module: every register is declared and of a type
// the instruction accepts, every label and callee exists, every address names
// a declared register or variable in a state space the instruction may use.
// It returns all problems found, joined, each an *Error.
func Check(m *Module) error {
	var errs []error
	if m.Version == "" {
		errs = append(errs, errorf(Pos{Line: 1, Col: 1}, "the module has no .version directive"))
	}
	if len(m.Target) == 0 {
		errs = append(errs, errorf(Pos{Line: 1, Col: 1}, "the module has no .target directive"))
	}
	for _, f := range m.Funcs {
		if def := m.Func(f.Name); def != f && !sameSignature(f, def) {
			errs = append(errs, errorf(f.Pos, "declaration of %s does not match its definition at %s", f.Name, def.Pos))
		}
	}
	seen := map[string]bool{}
	for _, v := range m.Vars {
		if seen[v.Name] {
			errs = append(errs, errorf(v.Pos, "symbol %s declared twice", v.Name))
		}
		seen[v.Name] = true
	}
	for _, f := range m.Funcs {
		if f.Body == nil {
			continue
		}
		if seen[f.Name] {
			errs = append(errs, errorf(f.Pos, "symbol %s defined twice", f.Name))
		}
		seen[f.Name] = true
		c := &checker{s: NewScope(m, f)}
		c.block(f.Body)
		errs = append(errs, c.errs...)
		if len(errs) > 50 {
			break
		}
	}
	return errors.Join(errs...)
}

type checker struct {
	s    *Scope
	errs []error
}

func (c *checker) errf(p Pos, format string, args ...any) {
	c.errs = append(c.errs, errorf(p, format, args...))
}

func (c *checker) block(b *Block) {
	if err := c.s.Push(b); err != nil {
		c.errs = append(c.errs, err)
	}
	for _, st := range b.Stmts {
		switch x := st.(type) {
		case *Block:
			c.block(x)
		case *Inst:
			c.inst(x)
		case *RegDecl:
			if x.Type == TypeNone {
				c.errf(x.Pos, "register %s has no type", x.Name)
			}
		}
	}
	c.s.Pop()
}

// role is what an operand position expects.
type role struct {
	t     Type
	wider bool // a wider register is acceptable (ld/st/cvt values)
	addr  bool
}

func (c *checker) inst(in *Inst) {
	if in.Guard != "" {
		if t, ok := c.s.Reg(in.Guard); !ok {
			c.errf(in.Pos, "guard predicate %s is not declared", in.Guard)
		} else if t != Pred {
			c.errf(in.Pos, "guard %s is .%s, not .pred", in.Guard, t)
		}
	}
	roles, err := operandRoles(in)
	if err != nil {
		c.errs = append(c.errs, err)
		return
	}
	eff := in.Effects()
	switch {
	case eff&Branch != 0:
		a := in.Args[0]
		if a.Kind != OpSym || !c.s.labels[a.Name] {
			c.errf(a.Pos, "branch target %s is not a label of %s", a.String(), c.s.fn.Name)
		}
		return
	case eff&Calls != 0:
		c.call(in)
		return
	}
	for _, d := range in.Dests() {
		c.writable(in, d)
	}
	for i, a := range in.Args {
		if i >= len(roles) {
			break
		}
		c.operand(in, a, roles[i])
	}
}

// writable reports a destination operand that is not a register the
// instruction may write: an immediate, an address, a special register.
func (c *checker) writable(in *Inst, d Operand) {
	switch d.Kind {
	case OpSink:
	case OpVec:
		for _, e := range d.Elems {
			c.writable(in, e)
		}
	case OpReg, OpSym:
		if _, special := SpecialRegs[d.Name]; special {
			c.errf(d.Pos, "%s writes %s, a read-only special register", in.String(), d.Name)
			return
		}
		if _, reg := c.s.Reg(d.Name); d.Kind == OpSym && !reg {
			c.errf(d.Pos, "the destination of %s must be a register, not %s", in.String(), d.String())
		}
	default:
		c.errf(d.Pos, "the destination of %s must be a register, not %s", in.String(), d.String())
	}
}

func (c *checker) call(in *Inst) {
	var target Operand
	var args []Operand
	var rets []Operand
	switch len(in.Args) {
	case 1:
		target = in.Args[0]
	case 2:
		if in.Args[0].Kind == OpList {
			rets, target = in.Args[0].Elems, in.Args[1]
		} else {
			target, args = in.Args[0], in.Args[1].Elems
		}
	case 3:
		rets, target, args = in.Args[0].Elems, in.Args[1], in.Args[2].Elems
	}
	sym, ok := c.s.Lookup(target.Name)
	if target.Kind != OpSym || !ok || sym.Func == nil {
		c.errf(target.Pos, "call target %s is not a function", target.String())
		return
	}
	f := sym.Func
	if len(args) != len(f.Params) {
		c.errf(in.Pos, "call to %s passes %d arguments, the function takes %d", f.Name, len(args), len(f.Params))
	}
	if len(rets) != len(f.Rets) {
		c.errf(in.Pos, "call to %s receives %d results, the function returns %d", f.Name, len(rets), len(f.Rets))
	}
	for _, a := range append(append([]Operand{}, args...), rets...) {
		switch a.Kind {
		case OpReg, OpSym:
			if _, ok := c.s.Reg(a.Name); ok {
				continue
			}
			if y, ok := c.s.Lookup(a.Name); !ok || (y.Var == nil && y.Param == nil) {
				c.errf(a.Pos, "call argument %s is not declared", a.Name)
			}
		case OpInt, OpFloat:
		default:
			c.errf(a.Pos, "bad call argument %s", a.String())
		}
	}
}

func (c *checker) operand(in *Inst, a Operand, r role) {
	switch a.Kind {
	case OpSink:
	case OpReg, OpSym:
		if rt, ok := c.s.Reg(a.Name); ok {
			c.checkType(in, a, rt, r)
			if a.Pair != "" {
				if pt, ok := c.s.Reg(a.Pair); !ok || pt != Pred {
					c.errf(a.Pos, "%s must be a declared .pred register", a.Pair)
				}
			}
			return
		}
		if a.Kind == OpReg {
			c.errf(a.Pos, "register %s is not declared", a.Name)
			return
		}
		y, ok := c.s.Lookup(a.Name)
		if !ok {
			c.errf(a.Pos, "%s is not declared", a.Name)
			return
		}
		// A variable name as a value is its address (mov, cvta).
		if y.Var == nil && y.Param == nil && y.Func == nil {
			c.errf(a.Pos, "%s cannot be used as an operand of %s", a.Name, in.Op)
		}
	case OpInt:
		if r.t == Pred && !(in.Op == "mov" && (a.Int == 0 || a.Int == 1)) {
			c.errf(a.Pos, "integer immediate where %s expects a predicate", in.Op)
		}
	case OpFloat:
		if r.t != TypeNone && !r.t.IsFloat() && !r.t.IsBits() {
			c.errf(a.Pos, "floating-point immediate for .%s operand of %s", r.t, in.Op)
		}
	case OpAddr:
		if !r.addr {
			c.errf(a.Pos, "%s does not take an address operand here", in.Op)
			return
		}
		c.address(in, a)
	case OpVec:
		if r.t == TypeNone {
			return
		}
		et := r.t
		if in.Vec == 0 && in.Op == "mov" {
			// mov.b64 d, {a, b}: packing; each element is a fraction of the type.
			if n := len(a.Elems); n > 0 && r.t.Size()%n == 0 {
				et = sizedBits(r.t.Size() / n)
			}
		} else if in.Vec == 0 {
			c.errf(a.Pos, "vector operand needs a .v2 or .v4 modifier on %s", in.Op)
		} else if len(a.Elems) != in.Vec {
			c.errf(a.Pos, "vector operand has %d elements, .v%d needs %d", len(a.Elems), in.Vec, in.Vec)
		}
		for _, e := range a.Elems {
			c.operand(in, e, role{t: et, wider: r.wider})
		}
	case OpList:
		c.errf(a.Pos, "parenthesised list is only valid in call")
	}
}

func sizedBits(n int) Type {
	switch n {
	case 1:
		return B8
	case 2:
		return B16
	case 4:
		return B32
	case 8:
		return B64
	}
	return TypeNone
}

func (c *checker) checkType(in *Inst, a Operand, rt Type, r role) {
	w := r.t
	if w == TypeNone {
		return
	}
	if (w == Pred) != (rt == Pred) {
		c.errf(a.Pos, "%s is .%s but %s expects .%s here", a.Name, rt, in.String(), w)
		return
	}
	if w == Pred {
		return
	}
	if rt.Size() < w.Size() || (rt.Size() > w.Size() && !r.wider) {
		c.errf(a.Pos, "%s is .%s but %s expects a %d-bit operand", a.Name, rt, in.String(), w.Bits())
		return
	}
	if rt.Size() == w.Size() && ((w.IsFloat() && rt.IsInt()) || (w.IsInt() && rt.IsFloat())) {
		c.errf(a.Pos, "%s is .%s but %s expects .%s", a.Name, rt, in.String(), w)
	}
}

func (c *checker) address(in *Inst, a Operand) {
	if a.Name == "" {
		return
	}
	if rt, ok := c.s.Reg(a.Name); ok {
		if rt.Size() != 4 && rt.Size() != 8 {
			c.errf(a.Pos, "address register %s must be 32 or 64 bits, is .%s", a.Name, rt)
		}
		return
	}
	if strings.HasPrefix(a.Name, "%") {
		c.errf(a.Pos, "register %s is not declared", a.Name)
		return
	}
	y, ok := c.s.Lookup(a.Name)
	if !ok || (y.Var == nil && y.Param == nil) {
		c.errf(a.Pos, "%s in address is not a declared variable or parameter", a.Name)
		return
	}
	sp := y.Space()
	want := in.Space
	switch {
	case want == SpaceGeneric:
		if sp == SpaceParam || sp == SpaceReg {
			c.errf(a.Pos, "%s is a parameter; %s needs .param to access it", a.Name, in.Op)
		}
	case sp == SpaceReg:
		c.errf(a.Pos, "%s is a register parameter, not addressable", a.Name)
	case want != sp:
		c.errf(a.Pos, "%s is in .%s but %s accesses .%s", a.Name, sp, in.String(), want)
	}
	if in.Op == "st" && sp == SpaceParam && y.Param != nil && c.s.fn.Entry {
		c.errf(a.Pos, "kernel parameter %s is read-only", a.Name)
	}
	if in.Op == "st" && sp == SpaceConst {
		c.errf(a.Pos, "cannot store to .const variable %s", a.Name)
	}
}

func cmpFits(in *Inst, t Type) error {
	switch in.Cmp {
	case "lo", "ls", "hi", "hs":
		if t.IsFloat() {
			return errorf(in.Pos, "comparison .%s is for unsigned integers, not .%s", in.Cmp, t)
		}
	case "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan":
		if !t.IsFloat() {
			return errorf(in.Pos, "comparison .%s is for floating-point types, not .%s", in.Cmp, t)
		}
	case "lt", "le", "gt", "ge":
		if t.IsBits() {
			return errorf(in.Pos, "ordered comparison .%s needs a signed, unsigned or float type, not .%s", in.Cmp, t)
		}
	}
	return nil
}

func wideType(t Type) Type {
	switch t {
	case U16:
		return U32
	case S16:
		return S32
	case U32:
		return U64
	case S32:
		return S64
	}
	return t
}

// sameSignature reports whether functions f and g have the same kind and
// parameters and return values of the same types, in order.
func sameSignature(f, g *Func) bool {
	same := func(a, b []*Param) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if a[i].Type != b[i].Type || a[i].Size() != b[i].Size() {
				return false
			}
		}
		return true
	}
	return f.Entry == g.Entry && same(f.Params, g.Params) && same(f.Rets, g.Rets)
}
