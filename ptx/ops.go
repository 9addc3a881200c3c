package ptx

import (
	"slices"
	"strings"
)

// OpInfo describes one PTX opcode: its operand counts, the op-specific
// modifiers it accepts, which operands it writes and what else it does.
// The parser uses it to reject unknown instructions and modifiers; the
// checker, the simulator's decoder and ptxgen's passes read the same table
// (through Inst's Info, DefRegs, UseRegs and Effects).
type OpInfo struct {
	Name             string
	MinArgs, MaxArgs int
	// Modes are the op-specific modifiers the opcode accepts (for example
	// the atomic operations of atom, the modes of shfl).
	Modes []string
	// Cmp is true for opcodes that take a comparison operator (setp, set).
	Cmp bool
	// Dsts is how many leading operands the instruction writes: 1 for
	// every opcode that computes a value (a vector {a, b} and a predicate
	// pair p|q count as one operand), 0 for stores, branches, barriers.
	// call is the exception: its destinations are the parenthesised list
	// before the callee, when there is one (see Inst.DefRegs).
	Dsts int
	// Effects is what the instruction does besides writing its
	// destinations; 0 for an instruction that only computes them.
	Effects Effect
	// shape gives the type of each operand from the instruction's type
	// modifiers (check.go); nil for opcodes whose operands are labels,
	// functions or nothing.
	shape func(in *Inst) ([]role, error)
}

var atomModes = []string{"add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"}

// opTable lists every opcode the package accepts, by name.
var opTable = map[string]*OpInfo{
	"mov":        {Name: "mov", MinArgs: 2, MaxArgs: 2, Dsts: 1, shape: shapeMov},
	"ld":         {Name: "ld", MinArgs: 2, MaxArgs: 3, Dsts: 1, Effects: ReadsMem, shape: shapeLoad},
	"ldu":        {Name: "ldu", MinArgs: 2, MaxArgs: 2, Dsts: 1, Effects: ReadsMem, shape: shapeLoad},
	"st":         {Name: "st", MinArgs: 2, MaxArgs: 2, Effects: WritesMem, shape: shapeStore},
	"cvt":        {Name: "cvt", MinArgs: 2, MaxArgs: 2, Dsts: 1, shape: shapeCvt},
	"cvta":       {Name: "cvta", MinArgs: 2, MaxArgs: 2, Dsts: 1, shape: shapeCvta},
	"add":        {Name: "add", MinArgs: 3, MaxArgs: 3, Dsts: 1, shape: shapeArith},
	"addc":       {Name: "addc", MinArgs: 3, MaxArgs: 3, Dsts: 1, shape: shapeArith},
	"sub":        {Name: "sub", MinArgs: 3, MaxArgs: 3, Dsts: 1, shape: shapeArith},
	"subc":       {Name: "subc", MinArgs: 3, MaxArgs: 3, Dsts: 1, shape: shapeArith},
	"mul":        {Name: "mul", MinArgs: 3, MaxArgs: 3, Dsts: 1, shape: shapeMul},
	"mad":        {Name: "mad", MinArgs: 4, MaxArgs: 4, Dsts: 1, shape: shapeMul},
	"madc":       {Name: "madc", MinArgs: 4, MaxArgs: 4, Dsts: 1, shape: shapeMadc},
	"mul24":      {Name: "mul24", MinArgs: 3, MaxArgs: 3, Dsts: 1, shape: shapeMul24},
	"mad24":      {Name: "mad24", MinArgs: 4, MaxArgs: 4, Dsts: 1, shape: shapeMul24},
	"div":        {Name: "div", MinArgs: 3, MaxArgs: 3, Dsts: 1, shape: shapeDiv},
	"rem":        {Name: "rem", MinArgs: 3, MaxArgs: 3, Dsts: 1, shape: shapeDiv},
	"abs":        {Name: "abs", MinArgs: 2, MaxArgs: 2, Dsts: 1, shape: shapeDiv},
	"neg":        {Name: "neg", MinArgs: 2, MaxArgs: 2, Dsts: 1, shape: shapeDiv},
	"min":        {Name: "min", MinArgs: 3, MaxArgs: 3, Dsts: 1, shape: shapeArith},
	"max":        {Name: "max", MinArgs: 3, MaxArgs: 3, Dsts: 1, shape: shapeArith},
	"fma":        {Name: "fma", MinArgs: 4, MaxArgs: 4, Dsts: 1, shape: shapeFloat},
	"rcp":        {Name: "rcp", MinArgs: 2, MaxArgs: 2, Dsts: 1, shape: shapeFloat},
	"sqrt":       {Name: "sqrt", MinArgs: 2, MaxArgs: 2, Dsts: 1, shape: shapeFloat},
	"rsqrt":      {Name: "rsqrt", MinArgs: 2, MaxArgs: 2, Dsts: 1, shape: shapeFloat},
	"ex2":        {Name: "ex2", MinArgs: 2, MaxArgs: 2, Dsts: 1, shape: shapeFloat},
	"lg2":        {Name: "lg2", MinArgs: 2, MaxArgs: 2, Dsts: 1, shape: shapeFloat},
	"sin":        {Name: "sin", MinArgs: 2, MaxArgs: 2, Dsts: 1, shape: shapeFloat},
	"cos":        {Name: "cos", MinArgs: 2, MaxArgs: 2, Dsts: 1, shape: shapeFloat},
	"copysign":   {Name: "copysign", MinArgs: 3, MaxArgs: 3, Dsts: 1, shape: shapeArith},
	"testp":      {Name: "testp", MinArgs: 2, MaxArgs: 2, Modes: []string{"finite", "infinite", "number", "notanumber", "normal", "subnormal"}, Dsts: 1, Effects: SetsPred, shape: shapeTestp},
	"and":        {Name: "and", MinArgs: 3, MaxArgs: 3, Dsts: 1, shape: shapeLogic},
	"or":         {Name: "or", MinArgs: 3, MaxArgs: 3, Dsts: 1, shape: shapeLogic},
	"xor":        {Name: "xor", MinArgs: 3, MaxArgs: 3, Dsts: 1, shape: shapeLogic},
	"not":        {Name: "not", MinArgs: 2, MaxArgs: 2, Dsts: 1, shape: shapeLogic},
	"cnot":       {Name: "cnot", MinArgs: 2, MaxArgs: 2, Dsts: 1, shape: shapeLogic},
	"shl":        {Name: "shl", MinArgs: 3, MaxArgs: 3, Dsts: 1, shape: shapeShift},
	"shr":        {Name: "shr", MinArgs: 3, MaxArgs: 3, Dsts: 1, shape: shapeShift},
	"bfe":        {Name: "bfe", MinArgs: 4, MaxArgs: 4, Dsts: 1, shape: shapeBfe},
	"bfi":        {Name: "bfi", MinArgs: 5, MaxArgs: 5, Dsts: 1, shape: shapeBfi},
	"brev":       {Name: "brev", MinArgs: 2, MaxArgs: 2, Dsts: 1, shape: shapeBrev},
	"bfind":      {Name: "bfind", MinArgs: 2, MaxArgs: 2, Dsts: 1, shape: shapeBfind},
	"shf":        {Name: "shf", MinArgs: 4, MaxArgs: 4, Modes: []string{"l", "r"}, Dsts: 1, shape: shapeShf},
	"sad":        {Name: "sad", MinArgs: 4, MaxArgs: 4, Dsts: 1, shape: shapeSad},
	"popc":       {Name: "popc", MinArgs: 2, MaxArgs: 2, Dsts: 1, shape: shapeCount},
	"clz":        {Name: "clz", MinArgs: 2, MaxArgs: 2, Dsts: 1, shape: shapeCount},
	"prmt":       {Name: "prmt", MinArgs: 4, MaxArgs: 4, Modes: []string{"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"}, Dsts: 1, shape: shapePrmt},
	"setp":       {Name: "setp", MinArgs: 3, MaxArgs: 4, Cmp: true, Dsts: 1, Effects: SetsPred, shape: shapeSetp},
	"set":        {Name: "set", MinArgs: 3, MaxArgs: 4, Cmp: true, Dsts: 1, shape: shapeSet},
	"selp":       {Name: "selp", MinArgs: 4, MaxArgs: 4, Dsts: 1, shape: shapeSelp},
	"slct":       {Name: "slct", MinArgs: 4, MaxArgs: 4, Dsts: 1, shape: shapeSlct},
	"bra":        {Name: "bra", MinArgs: 1, MaxArgs: 1, Effects: Branch},
	"call":       {Name: "call", MinArgs: 1, MaxArgs: 3, Effects: Calls | ReadsMem | WritesMem},
	"ret":        {Name: "ret", MinArgs: 0, MaxArgs: 0, Effects: Ends},
	"exit":       {Name: "exit", MinArgs: 0, MaxArgs: 0, Effects: Ends},
	"trap":       {Name: "trap", MinArgs: 0, MaxArgs: 0, Effects: Ends},
	"bar":        {Name: "bar", MinArgs: 0, MaxArgs: 2, Modes: []string{"sync", "arrive", "warp"}, Effects: Sync, shape: shapeBar},
	"barrier":    {Name: "barrier", MinArgs: 0, MaxArgs: 2, Modes: []string{"sync", "arrive"}, Effects: Sync, shape: shapeBar},
	"membar":     {Name: "membar", MinArgs: 0, MaxArgs: 0, Effects: Sync},
	"fence":      {Name: "fence", MinArgs: 0, MaxArgs: 0, Effects: Sync},
	"atom":       {Name: "atom", MinArgs: 3, MaxArgs: 4, Modes: atomModes, Dsts: 1, Effects: ReadsMem | WritesMem, shape: shapeAtom},
	"red":        {Name: "red", MinArgs: 2, MaxArgs: 2, Modes: atomModes, Effects: ReadsMem | WritesMem, shape: shapeAtom},
	"shfl":       {Name: "shfl", MinArgs: 4, MaxArgs: 5, Modes: []string{"up", "down", "bfly", "idx"}, Dsts: 1, Effects: Lanes, shape: shapeShfl},
	"vote":       {Name: "vote", MinArgs: 2, MaxArgs: 3, Modes: []string{"all", "any", "uni", "ballot"}, Dsts: 1, Effects: Lanes, shape: shapeVote},
	"activemask": {Name: "activemask", MinArgs: 1, MaxArgs: 1, Dsts: 1, Effects: Lanes, shape: shapeActivemask},
	"nanosleep":  {Name: "nanosleep", MinArgs: 1, MaxArgs: 1, Effects: Sync, shape: shapeNanosleep},
	"prefetch":   {Name: "prefetch", MinArgs: 1, MaxArgs: 1, Modes: []string{"L1", "L2"}, Effects: Hint, shape: shapePrefetch},
}

// LookupOp returns the table entry of opcode name, or nil when PTX has no
// such opcode or this package does not support it.
func LookupOp(name string) *OpInfo { return opTable[name] }

var cmpOps = map[string]bool{
	"eq": true, "ne": true, "lt": true, "le": true, "gt": true, "ge": true,
	"lo": true, "ls": true, "hi": true, "hs": true,
	"equ": true, "neu": true, "ltu": true, "leu": true, "gtu": true, "geu": true,
	"num": true, "nan": true,
}

var roundMods = map[string]bool{
	"rn": true, "rz": true, "rm": true, "rp": true, "rna": true,
	"rni": true, "rzi": true, "rmi": true, "rpi": true,
}

// flagMods are modifiers without op-specific meaning: they are recorded in
// Inst.Flags.
var flagMods = map[string]bool{
	"ftz": true, "sat": true, "approx": true, "full": true, "uni": true, "aligned": true,
	"sync": true, "wide": true, "hi": true, "lo": true, "to": true, "nc": true,
	"volatile": true, "relaxed": true, "acquire": true, "release": true, "acq_rel": true,
	"sc": true, "weak": true, "mmio": true, "cta": true, "gpu": true, "sys": true, "cluster": true,
	"gl": true, "ca": true, "cg": true, "cs": true, "lu": true, "cv": true, "wb": true,
	"wt": true, "cc": true, "noftz": true, "clamp": true, "wrap": true, "shiftamt": true,
	"noinc": true, "red": true, "NaN": true,
}

var spaceMods = map[string]Space{
	"const": SpaceConst, "global": SpaceGlobal, "local": SpaceLocal, "param": SpaceParam,
	"shared": SpaceShared, "shared::cta": SpaceShared, "shared::cluster": SpaceShared,
	"param::entry": SpaceParam, "param::func": SpaceParam,
}

// classify sorts the dotted modifiers of in into its typed fields. It
// returns an error naming the first modifier the opcode does not accept.
func classify(in *Inst, info *OpInfo) error {
	for _, m := range in.Mods {
		switch {
		case contains(info.Modes, m):
			in.Mode = append(in.Mode, m)
		case info.Cmp && cmpOps[m] && in.Cmp == "":
			in.Cmp = m
		case info.Cmp && (m == "and" || m == "or" || m == "xor"):
			in.BoolOp = m
		case roundMods[m]:
			in.Round = m
		case m == "v2" || m == "v4" || m == "v8":
			in.Vec = int(m[1] - '0')
		case flagMods[m]:
			if in.Flags == nil {
				in.Flags = map[string]bool{}
			}
			in.Flags[m] = true
		case len(m) > 4 && (m[:4] == "L1::" || m[:4] == "L2::"):
			// Cache eviction hints do not change results.
		default:
			if t, ok := lookupType(m); ok {
				in.Types = append(in.Types, t)
				continue
			}
			if s, ok := spaceMods[m]; ok {
				in.Space = s
				continue
			}
			return errorf(in.Pos, "unknown modifier .%s on instruction %s", m, in.Op)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Effect is a set of things an instruction does besides writing its
// destination registers. Passes ask for it to decide whether an
// instruction may be removed when its results are dead, or moved.
type Effect uint16

// The effects. A memory effect applies to the instruction's state space
// (Inst.Space; generic addressing when none is named).
const (
	// ReadsMem: the instruction reads memory (ld, atom, call).
	ReadsMem Effect = 1 << iota
	// WritesMem: the instruction writes memory (st, atom, red, call).
	WritesMem
	// Sync: the instruction orders memory or threads (bar, membar,
	// fence, nanosleep); nothing moves across it.
	Sync
	// Branch: the instruction may go to the label of its first operand.
	Branch
	// Ends: control does not go on past the instruction in this function
	// (exit, ret, trap) unless a guard is false.
	Ends
	// Calls: the instruction calls a function.
	Calls
	// Lanes: the result depends on other lanes of the warp (shfl, vote,
	// activemask), so the instruction may not move across divergent
	// control flow.
	Lanes
	// SetsPred: the destination is a predicate (setp, testp).
	SetsPred
	// Hint: the instruction has no effect on results (prefetch).
	Hint
	// Volatile: a memory access that must happen exactly as written
	// (ld.volatile, st.volatile); set per instruction, never in the table.
	Volatile
)

// Info returns the table entry of the instruction's opcode, or nil for an
// opcode the table lacks (only possible for an Inst built by hand).
func (in *Inst) Info() *OpInfo { return opTable[in.Op] }

// Effects returns the instruction's effects: its opcode's, plus Volatile
// for a .volatile access.
func (in *Inst) Effects() Effect {
	info := in.Info()
	if info == nil {
		return 0
	}
	e := info.Effects
	if e&(ReadsMem|WritesMem) != 0 && in.Has("volatile") {
		e |= Volatile
	}
	return e
}

// Removable reports whether the instruction does nothing but write its
// destinations, so that it may be deleted when none of them is read
// (loads included: a dead non-volatile load has no effect).
func (in *Inst) Removable() bool {
	info := in.Info()
	if info == nil || info.Dsts == 0 {
		return false
	}
	return in.Effects()&^(ReadsMem|SetsPred|Lanes) == 0
}

// Dests returns the operands the instruction writes (empty for stores,
// branches, barriers; call's result list when it has one).
func (in *Inst) Dests() []Operand {
	info := in.Info()
	if info == nil {
		return nil
	}
	if in.Op == "call" {
		if len(in.Args) > 1 && in.Args[0].Kind == OpList {
			return in.Args[:1]
		}
		return nil
	}
	return in.Args[:min(info.Dsts, len(in.Args))]
}

// Sources returns the operands the instruction reads: all but its
// destinations.
func (in *Inst) Sources() []Operand { return in.Args[len(in.Dests()):] }

// DefRegs appends to out the registers the instruction writes: its
// destinations' registers, a predicate pair's second register, vector
// elements. A sink (_) writes nothing.
func (in *Inst) DefRegs(out []string) []string {
	for _, a := range in.Dests() {
		out = a.appendRegs(out, true)
	}
	return out
}

// UseRegs appends to out the registers the instruction reads: the guard,
// its source operands' registers and address bases. Special registers
// (%tid.x, ...) are left out: nothing writes them.
func (in *Inst) UseRegs(out []string) []string {
	if in.Guard != "" {
		out = append(out, in.Guard)
	}
	for _, a := range in.Sources() {
		out = a.appendRegs(out, false)
	}
	return out
}

// appendRegs appends the registers operand o names; dst says whether o is
// a destination (where the pair of p|q is a register too).
func (o Operand) appendRegs(out []string, dst bool) []string {
	switch o.Kind {
	case OpReg:
		if _, special := SpecialRegs[o.Name]; !special {
			out = append(out, o.Name)
		}
		if dst && o.Pair != "" {
			out = append(out, o.Pair)
		}
	case OpAddr:
		if len(o.Name) > 0 && o.Name[0] == '%' {
			out = append(out, o.Name)
		}
	case OpVec, OpList:
		for _, e := range o.Elems {
			out = e.appendRegs(out, dst)
		}
	}
	return out
}

// OperandTypes returns the type each operand of the instruction has, as
// its opcode and type modifiers say (the checker's rules): TypeNone for an
// address, a label or an operand that may have any type. It reports a
// missing or unsuitable type modifier as an *Error.
func (in *Inst) OperandTypes() ([]Type, error) {
	roles, err := operandRoles(in)
	if err != nil {
		return nil, err
	}
	out := make([]Type, len(in.Args))
	for i := range out {
		if i < len(roles) {
			out[i] = roles[i].t
		}
	}
	return out, nil
}

// Ops returns the table's entries, sorted by name.
func Ops() []*OpInfo {
	out := make([]*OpInfo, 0, len(opTable))
	for _, info := range opTable {
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b *OpInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// NewInst builds an instruction from its opcode with modifiers ("add.u64",
// "setp.ne.or.u64") and its operands, classifying the modifiers as the
// parser does. It fails on an opcode or modifier the table does not have.
func NewInst(op string, args ...Operand) (*Inst, error) {
	parts := strings.Split(op, ".")
	in := &Inst{Op: parts[0], Args: args}
	for _, m := range parts[1:] {
		if m == "" {
			return nil, errorf(Pos{}, "empty modifier in %q", op)
		}
		in.Mods = append(in.Mods, m)
	}
	info := LookupOp(in.Op)
	if info == nil {
		return nil, errorf(Pos{}, "unknown instruction %q", in.Op)
	}
	if err := classify(in, info); err != nil {
		return nil, err
	}
	if len(args) < info.MinArgs || len(args) > info.MaxArgs {
		return nil, errorf(Pos{}, "%s takes %d to %d operands, found %d", in.Op, info.MinArgs, info.MaxArgs, len(args))
	}
	return in, nil
}

// Regs appends to out the registers operand o names (its register, a
// predicate pair's second, an address base, vector elements), special
// registers left out.
func (o Operand) Regs(out []string) []string { return o.appendRegs(out, true) }

// Reg is the operand naming register name.
func Reg(name string) Operand { return Operand{Kind: OpReg, Name: name} }

// Sym is the operand naming a label, variable, parameter or function.
func Sym(name string) Operand { return Operand{Kind: OpSym, Name: name} }

// Int is the integer immediate v, written in decimal.
func Int(v int64) Operand { return Operand{Kind: OpInt, Int: v} }

// Hex is the integer immediate v written with digits hex digits.
func Hex(v uint64, digits int) Operand { return Operand{Kind: OpInt, Int: int64(v), HexDigits: digits} }

// Addr is the address operand [base+off]; base is a register or a
// variable or parameter name.
func Addr(base string, off int64) Operand { return Operand{Kind: OpAddr, Name: base, Int: off} }

// Vec is the vector operand {elems...}.
func Vec(elems ...Operand) Operand { return Operand{Kind: OpVec, Elems: elems} }
