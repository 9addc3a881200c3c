// Package ptx is gxbit's one model of PTX assembly (NVIDIA's virtual
// ISA): the op table (ops.go: per opcode its operands, which of them it
// writes and what else it does), the tree of a module, the parser, the
// checker and the printer. The code generator builds kernels as values of
// this package and its passes read the op table; the simulated GPU
// decodes the tree, taking operand types from the same rules as the
// checker.
//
// The package covers the subset of PTX ISA 9.0 that compute kernels use:
// module directives, .entry and .func definitions, register and variable
// declarations in every state space, labels, predicated instructions and all
// operand forms. Parse builds the tree; Check verifies it (declared
// registers, compatible types, writable destinations, defined labels and
// state spaces); Print writes it back in one canonical layout, keeping
// whole-line comments inside bodies, so that Print(Parse(x)) == x for
// text in that layout. Parse and Check report problems as *Error values
// carrying a line and column.
package ptx

import (
	"fmt"
	"strconv"
	"strings"
)

// Pos is a position in PTX source text; Line and Col count from 1.
type Pos struct {
	Line, Col int
}

// String formats p as "line:col".
func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Type is a PTX fundamental type such as .u32 or .f64.
type Type uint8

// The PTX fundamental types. TypeNone marks the absence of a type.
const (
	TypeNone Type = iota
	Pred
	B8
	B16
	B32
	B64
	B128
	U8
	U16
	U32
	U64
	S8
	S16
	S32
	S64
	F16
	F16x2
	BF16
	BF16x2
	F32
	F64
)

var typeNames = [...]string{"", "pred", "b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64",
	"s8", "s16", "s32", "s64", "f16", "f16x2", "bf16", "bf16x2", "f32", "f64"}

// String returns the type's PTX spelling without the leading dot.
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("type(%d)", int(t))
}

// Size is the type's width in bytes; predicates count as 1 and TypeNone as 0.
func (t Type) Size() int {
	switch t {
	case Pred, B8, U8, S8:
		return 1
	case B16, U16, S16, F16, BF16:
		return 2
	case B32, U32, S32, F32, F16x2, BF16x2:
		return 4
	case B64, U64, S64, F64:
		return 8
	case B128:
		return 16
	}
	return 0
}

// Bits is the type's width in bits.
func (t Type) Bits() int { return t.Size() * 8 }

// IsFloat reports whether t is a floating-point type (f16 through f64).
func (t Type) IsFloat() bool { return t >= F16 && t <= F64 }

// IsSigned reports whether t is a signed integer type.
func (t Type) IsSigned() bool { return t >= S8 && t <= S64 }

// IsUnsigned reports whether t is an unsigned integer type.
func (t Type) IsUnsigned() bool { return t >= U8 && t <= U64 }

// IsInt reports whether t is a signed or unsigned integer type.
func (t Type) IsInt() bool { return t.IsSigned() || t.IsUnsigned() }

// IsBits reports whether t is an untyped bit-size type (.b8 through .b128).
func (t Type) IsBits() bool { return t >= B8 && t <= B128 }

func lookupType(s string) (Type, bool) {
	for i, n := range typeNames {
		if i > 0 && n == s {
			return Type(i), true
		}
	}
	return TypeNone, false
}

// Space is a PTX state space.
type Space uint8

// The PTX state spaces. SpaceGeneric is an instruction without a space
// qualifier (generic addressing) or a declaration outside any space.
const (
	SpaceGeneric Space = iota
	SpaceReg
	SpaceSReg
	SpaceConst
	SpaceGlobal
	SpaceLocal
	SpaceParam
	SpaceShared
	SpaceTex
)

var spaceNames = [...]string{"generic", "reg", "sreg", "const", "global", "local", "param", "shared", "tex"}

// String returns the space's PTX spelling without the leading dot.
func (s Space) String() string {
	if int(s) < len(spaceNames) {
		return spaceNames[s]
	}
	return fmt.Sprintf("space(%d)", int(s))
}

// Module is a parsed PTX module.
type Module struct {
	Version     string // e.g. "8.0"
	Target      []string
	AddressSize int // 32 or 64; 64 when absent
	Vars        []*Var
	Funcs       []*Func
}

// Func looks up a function or kernel by name; it returns nil when absent.
//
// A function may be declared (a prototype, with no body) before it is
// defined: Func then returns the definition, and the first declaration only
// when there is no definition.
func (m *Module) Func(name string) *Func {
	var decl *Func
	for _, f := range m.Funcs {
		if f.Name != name {
			continue
		}
		if f.Body != nil {
			return f
		}
		if decl == nil {
			decl = f
		}
	}
	return decl
}

// Func is an .entry (kernel) or .func (device function) definition or
// declaration.
type Func struct {
	Pos     Pos
	Name    string
	Entry   bool   // .entry rather than .func
	Linkage string // "visible", "weak", "extern" or ""
	Params  []*Param
	Rets    []*Param // .func return parameters
	// Perf holds performance directives such as "maxntid" with their values.
	Perf map[string][]int
	// Body is nil for a declaration without a body (a prototype).
	Body *Block
}

// Param is a kernel or function parameter.
type Param struct {
	Pos   Pos
	Name  string
	Space Space // SpaceParam or SpaceReg
	Type  Type
	Align int   // explicit .align, or 0
	Dims  []int // array dimensions, nil for a scalar
	Ptr   bool  // .ptr attribute
}

// Size is the parameter's size in bytes.
func (p *Param) Size() int { return p.Type.Size() * product(p.Dims) }

// Alignment is the explicit alignment or the element size.
func (p *Param) Alignment() int {
	if p.Align > 0 {
		return p.Align
	}
	if s := p.Type.Size(); s > 0 {
		return s
	}
	return 1
}

func product(dims []int) int {
	n := 1
	for _, d := range dims {
		if d > 0 {
			n *= d
		}
	}
	return n
}

// Block is a brace-delimited scope holding declarations and statements.
type Block struct {
	Pos   Pos
	Stmts []Stmt
}

// Stmt is one statement of a function body: *Inst, *Label, *RegDecl, *Var,
// *Comment or a nested *Block.
type Stmt interface {
	StmtPos() Pos
}

// StmtPos implements Stmt.
func (b *Block) StmtPos() Pos { return b.Pos }

// Label is a branch target.
type Label struct {
	Pos  Pos
	Name string
}

// StmtPos implements Stmt.
func (l *Label) StmtPos() Pos { return l.Pos }

// Comment is a comment on a line of its own inside a function body. Text
// is what follows the "//", verbatim; the printer writes it back on a line
// of its own. Comments elsewhere (after an instruction, /* */) are not
// kept.
type Comment struct {
	Pos  Pos
	Text string
}

// StmtPos implements Stmt.
func (c *Comment) StmtPos() Pos { return c.Pos }

// RegDecl declares one register, or Count registers Name0..Name{Count-1}
// when Count > 0 (the `%r<N>` form).
type RegDecl struct {
	Pos   Pos
	Name  string
	Type  Type
	Vec   int // .v2/.v4 vector registers, or 0
	Count int
}

// StmtPos implements Stmt.
func (r *RegDecl) StmtPos() Pos { return r.Pos }

// Var is a variable in an addressable state space (.global, .shared,
// .const, .local, or .param inside a function body).
type Var struct {
	Pos     Pos
	Space   Space
	Linkage string // "visible", "extern", "weak" or ""
	Name    string
	Type    Type
	Vec     int
	Align   int
	Dims    []int // -1 for an unspecified dimension (extern arrays)
	Init    []Operand
}

// StmtPos implements Stmt.
func (v *Var) StmtPos() Pos { return v.Pos }

// Size is the variable's size in bytes; unspecified dimensions count as 0.
func (v *Var) Size() int {
	n := v.Type.Size()
	if v.Vec > 0 {
		n *= v.Vec
	}
	for _, d := range v.Dims {
		if d < 0 {
			return 0
		}
		n *= d
	}
	return n
}

// Alignment is the explicit alignment or the element size.
func (v *Var) Alignment() int {
	if v.Align > 0 {
		return v.Align
	}
	n := v.Type.Size()
	if v.Vec > 0 {
		n *= v.Vec
	}
	if n == 0 {
		return 1
	}
	return n
}

// Inst is one instruction. Op is the opcode ("add"); Mods are the dotted
// modifiers in source order. The parser also classifies the modifiers into
// the typed fields below.
type Inst struct {
	Pos      Pos
	Guard    string // predicate register, or ""
	GuardNeg bool   // @!%p
	Op       string
	Mods     []string
	Args     []Operand

	Types  []Type // type modifiers in order (cvt has two)
	Space  Space  // state-space modifier, SpaceGeneric if none
	Round  string // rn rz rm rp rni rzi rmi rpi, or ""
	Cmp    string // comparison operator of setp/set, or ""
	BoolOp string // and/or/xor combining of setp/set, or ""
	Vec    int    // .v2/.v4
	Flags  map[string]bool
	Mode   []string // op-specific modifiers (atom op, shfl mode, ...)
}

// StmtPos implements Stmt.
func (in *Inst) StmtPos() Pos { return in.Pos }

// Type is the instruction's first type modifier, or TypeNone.
func (in *Inst) Type() Type {
	if len(in.Types) == 0 {
		return TypeNone
	}
	return in.Types[0]
}

// Has reports whether flag modifier f (such as "ftz" or "wide") is present.
func (in *Inst) Has(f string) bool { return in.Flags[f] }

// HasMode reports whether op-specific modifier m is present.
func (in *Inst) HasMode(m string) bool {
	for _, x := range in.Mode {
		if x == m {
			return true
		}
	}
	return false
}

// String returns the instruction's opcode with its modifiers, as written.
func (in *Inst) String() string {
	if len(in.Mods) == 0 {
		return in.Op
	}
	return in.Op + "." + strings.Join(in.Mods, ".")
}

// OperandKind says what an Operand is.
type OperandKind uint8

// Operand kinds.
const (
	OpReg   OperandKind = iota + 1 // %r1, %tid.x, or a named register
	OpInt                          // integer immediate
	OpFloat                        // floating-point immediate
	OpSym                          // a variable, parameter, label or function name
	OpAddr                         // [base+offset]
	OpVec                          // {a, b, ...}
	OpList                         // (a, b, ...) in call
	OpSink                         // _
)

// Operand is one instruction operand or initializer value.
type Operand struct {
	Pos  Pos
	Kind OperandKind
	// Name is the register or symbol (OpReg, OpSym), or the address base
	// (OpAddr; empty for an absolute address).
	Name string
	// Pair is the second destination of `%p|%q`.
	Pair string
	Neg  bool // !%p
	// Int is the integer immediate (OpInt) or the address offset (OpAddr).
	Int int64
	// HexDigits is how many hex digits an OpInt immediate was written
	// with (0x00FF: 4), or 0 for decimal; the printer keeps the spelling.
	HexDigits int
	// Float is a floating-point immediate; FloatBits and FloatSize hold the
	// exact bits of a 0f/0d literal (FloatSize 4 or 8), or 0 for decimal.
	Float     float64
	FloatBits uint64
	FloatSize int
	Elems     []Operand // OpVec, OpList
}

// String formats the operand as PTX.
func (o Operand) String() string {
	switch o.Kind {
	case OpReg, OpSym:
		s := o.Name
		if o.Neg {
			s = "!" + s
		}
		if o.Pair != "" {
			s += "|" + o.Pair
		}
		switch {
		case o.Kind == OpSym && o.Int > 0:
			s += fmt.Sprintf("+%d", o.Int)
		case o.Kind == OpSym && o.Int < 0:
			s += fmt.Sprintf("%d", o.Int)
		}
		return s
	case OpInt:
		if o.HexDigits > 0 {
			return fmt.Sprintf("0x%0*X", o.HexDigits, uint64(o.Int))
		}
		return fmt.Sprint(o.Int)
	case OpFloat:
		switch o.FloatSize {
		case 4:
			return fmt.Sprintf("0f%08X", o.FloatBits)
		case 8:
			return fmt.Sprintf("0d%016X", o.FloatBits)
		}
		// A decimal literal keeps a point or an exponent, so that it
		// reads back as a float.
		t := strconv.FormatFloat(o.Float, 'g', -1, 64)
		if !strings.ContainsAny(t, ".eIN") {
			t += ".0"
		}
		return t
	case OpAddr:
		switch {
		case o.Name == "":
			return fmt.Sprintf("[%d]", o.Int)
		case o.Int == 0:
			return "[" + o.Name + "]"
		case o.Int < 0:
			return fmt.Sprintf("[%s+%d]", o.Name, o.Int)
		}
		return fmt.Sprintf("[%s+%d]", o.Name, o.Int)
	case OpVec, OpList:
		parts := make([]string, len(o.Elems))
		for i, e := range o.Elems {
			parts[i] = e.String()
		}
		if o.Kind == OpVec {
			return "{" + strings.Join(parts, ", ") + "}"
		}
		return "(" + strings.Join(parts, ", ") + ")"
	case OpSink:
		return "_"
	}
	return "?"
}

// Error is a problem in PTX source at a position.
type Error struct {
	Pos Pos
	Msg string
}

// Error formats the error as "line:col: message".
func (e *Error) Error() string { return fmt.Sprintf("%d:%d: %s", e.Pos.Line, e.Pos.Col, e.Msg) }

func errorf(p Pos, format string, args ...any) *Error {
	return &Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}
