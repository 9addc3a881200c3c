package gpusim

import (
	"github.com/gxbit/gxbit/ptx"
)

// inst decodes one PTX instruction into zero or more executable ones.
func (d *decoder) inst(fi *fnInstance, in *ptx.Inst) error {
	guard := int32(-1)
	if in.Guard != "" {
		g, err := d.pred(fi, in.Guard, in.Pos)
		if err != nil {
			return err
		}
		guard = g
	}
	t := in.Type()
	x := &inst{
		typ: t, rnd: decodeRound(in.Round), ftz: in.Has("ftz"), sat: in.Has("sat"),
		line: int32(in.Pos.Line), text: in.String(), base: -1, pd: -1, pq: -1, pc: -1,
	}
	if len(in.Types) > 1 {
		x.t2 = in.Types[1]
	}
	A := in.Args
	var err error
	srcs := func(from int, ts ...ptx.Type) error {
		regs := []*int32{&x.a, &x.b, &x.c, &x.e}
		for i, ty := range ts {
			if i >= len(regs) {
				return decodeErr(in.Pos, "%s: too many operands", in.Op)
			}
			if from+i >= len(A) {
				return decodeErr(in.Pos, "%s: missing operand %d", in.Op, from+i+1)
			}
			r, err := d.src(fi, A[from+i], ty)
			if err != nil {
				return err
			}
			*regs[i] = r
		}
		return nil
	}
	// types holds each operand's type, from the ptx package's rules (the
	// checker's): the simulator keeps no list of operand shapes of its own.
	var types []ptx.Type
	operandTypes := func() error {
		types, err = in.OperandTypes()
		return err
	}
	emit := func() error {
		if x.fn == nil && x.kind == kALU {
			return unsupported(in.Pos, "instruction %s is not supported by the simulator", in.String())
		}
		d.emit(x, in.Pos, guard, in.GuardNeg)
		return nil
	}

	switch in.Op {
	case "bra":
		if A[0].Kind != ptx.OpSym {
			return decodeErr(A[0].Pos, "branch target must be a label")
		}
		x.kind = kBra
		pc := d.emit(x, in.Pos, guard, in.GuardNeg)
		fi.fixups = append(fi.fixups, labelFixup{pc: pc, label: A[0].Name, pos: A[0].Pos})
		return nil
	case "exit":
		x.kind = kExit
		return emit()
	case "ret":
		if fi.kernel {
			x.kind = kExit
			return emit()
		}
		x.kind = kBra
		pc := d.emit(x, in.Pos, guard, in.GuardNeg)
		fi.retFix = append(fi.retFix, pc)
		return nil
	case "trap":
		x.fn = opTrap
		return emit()
	case "call":
		return d.call(fi, in, guard)
	case "bar", "barrier":
		if in.HasMode("warp") {
			x.kind = kNop
			return emit()
		}
		if in.Has("red") {
			return unsupported(in.Pos, "%s is not supported by the simulator", in.String())
		}
		// a = barrier number, b = expected thread count (-1: the whole CTA).
		x.a, x.b = d.constReg(0), -1
		if err := operandTypes(); err != nil {
			return err
		}
		if len(A) > 0 {
			if x.a, err = d.src(fi, A[0], types[0]); err != nil {
				return err
			}
			if A[0].Kind == ptx.OpInt && (A[0].Int < 0 || A[0].Int > 15) {
				return decodeErr(A[0].Pos, "barrier number %d is not in 0..15", A[0].Int)
			}
		}
		if len(A) > 1 {
			if x.b, err = d.src(fi, A[1], types[1]); err != nil {
				return err
			}
			if A[1].Kind == ptx.OpInt && (A[1].Int <= 0 || A[1].Int%32 != 0) {
				return decodeErr(A[1].Pos, "barrier thread count %d must be a positive multiple of 32", A[1].Int)
			}
		}
		if in.HasMode("arrive") {
			if len(A) < 2 {
				return decodeErr(in.Pos, "%s needs a thread count", in.String())
			}
			x.mode = 1
		}
		x.kind = kBar
		return emit()
	case "membar", "fence", "prefetch", "nanosleep":
		x.kind = kNop
		return emit()
	case "mov":
		return d.mov(fi, in, x, guard)
	case "ld", "ldu":
		return d.load(fi, in, x, guard)
	case "st":
		return d.store(fi, in, x, guard)
	case "cvta":
		if x.d, err = d.dst(fi, A[0]); err != nil {
			return err
		}
		if err := operandTypes(); err != nil {
			return err
		}
		if err := srcs(1, types[1:]...); err != nil {
			return err
		}
		x.fn, x.f2 = cvtaFunc(in)
		return emit()
	case "cvt":
		if x.d, err = d.dst(fi, A[0]); err != nil {
			return err
		}
		if err := operandTypes(); err != nil {
			return err
		}
		if err := srcs(1, types[1:]...); err != nil {
			return err
		}
		if x.fn, err = cvtHandler(x, in); err != nil {
			return err
		}
		return emit()
	case "setp", "set":
		return d.setp(fi, in, x, guard)
	case "selp":
		if x.d, err = d.dst(fi, A[0]); err != nil {
			return err
		}
		if err := operandTypes(); err != nil {
			return err
		}
		if err := srcs(1, types[1:3]...); err != nil {
			return err
		}
		if x.pc, err = d.pred(fi, A[3].Name, A[3].Pos); err != nil {
			return err
		}
		x.pcNeg = A[3].Neg
		x.fn = opSelp
		return emit()
	case "slct":
		if x.d, err = d.dst(fi, A[0]); err != nil {
			return err
		}
		if err := operandTypes(); err != nil {
			return err
		}
		if err := srcs(1, types[1:]...); err != nil {
			return err
		}
		x.fn = opSlct
		return emit()
	case "and", "or", "xor", "not", "cnot":
		if t == ptx.Pred {
			return d.predLogic(fi, in, x, guard)
		}
	case "atom", "red":
		return d.atom(fi, in, x, guard)
	case "shfl":
		return d.shfl(fi, in, x, guard)
	case "vote":
		return d.vote(fi, in, x, guard)
	case "activemask":
		if x.d, err = d.dst(fi, A[0]); err != nil {
			return err
		}
		x.fn = opActivemask
		return emit()
	case "testp":
		if x.pd, err = d.pred(fi, A[0].Name, A[0].Pos); err != nil {
			return err
		}
		if err := operandTypes(); err != nil {
			return err
		}
		if err := srcs(1, types[1:]...); err != nil {
			return err
		}
		x.mode = testpModes[in.Mode[0]]
		x.fn = opTestp
		return emit()
	}
	if carry := in.Has("cc") || in.Op == "addc" || in.Op == "subc" || in.Op == "madc"; carry {
		return d.carryOp(fi, in, x, guard)
	}

	// Arithmetic and logic: d, then sources.
	if x.d, err = d.dst(fi, A[0]); err != nil {
		return err
	}
	if err := operandTypes(); err != nil {
		return err
	}
	if err := srcs(1, types[1:]...); err != nil {
		return err
	}
	if err := selectArith(x, in); err != nil {
		return err
	}
	return emit()
}

// carryOp decodes the extended-precision forms that read or write the
// carry flag CC.CF: add.cc, addc, sub.cc, subc, mad.cc and madc.
func (d *decoder) carryOp(fi *fnInstance, in *ptx.Inst, x *inst, guard int32) error {
	t := in.Type()
	if !t.IsInt() || t.Size() < 4 {
		return decodeErr(in.Pos, "%s needs a 32- or 64-bit integer type", in.String())
	}
	var err error
	if x.d, err = d.dst(fi, in.Args[0]); err != nil {
		return err
	}
	ts := make([]ptx.Type, len(in.Args)-1)
	regs := []*int32{&x.a, &x.b, &x.c}
	for i := range ts {
		if *regs[i], err = d.src(fi, in.Args[i+1], t); err != nil {
			return err
		}
	}
	switch in.Op {
	case "add":
		x.mode = carryAdd
	case "addc":
		x.mode = carryAdd | carryIn
	case "sub":
		x.mode = carrySub
	case "subc":
		x.mode = carrySub | carryIn
	case "mad", "madc":
		if in.Has("wide") {
			return unsupported(in.Pos, "%s is not supported by the simulator", in.String())
		}
		x.mode = carryMad
		if in.Op == "madc" {
			x.mode |= carryIn
		}
		if in.Has("hi") {
			x.mode |= carryHi
		}
	default:
		return decodeErr(in.Pos, "%s cannot use .cc", in.Op)
	}
	if in.Has("cc") {
		x.mode |= carryOut
	}
	x.size = uint8(t.Size())
	x.fn = opCarry
	d.emit(x, in.Pos, guard, in.GuardNeg)
	return nil
}

func wideOf(t ptx.Type) ptx.Type {
	switch t {
	case ptx.U16:
		return ptx.U32
	case ptx.S16:
		return ptx.S32
	case ptx.U32:
		return ptx.U64
	case ptx.S32:
		return ptx.S64
	}
	return t
}

func (d *decoder) mov(fi *fnInstance, in *ptx.Inst, x *inst, guard int32) error {
	A := in.Args
	t := in.Type()
	var err error
	if t == ptx.Pred {
		if x.pd, err = d.pred(fi, A[0].Name, A[0].Pos); err != nil {
			return err
		}
		switch A[1].Kind {
		case ptx.OpInt:
			x.mode = 1
			if A[1].Int != 0 {
				x.mode = 2
			}
		default:
			if x.pc, err = d.pred(fi, A[1].Name, A[1].Pos); err != nil {
				return err
			}
			x.pcNeg = A[1].Neg
		}
		x.fn = opMovPred
		d.emit(x, in.Pos, guard, in.GuardNeg)
		return nil
	}
	if A[1].Kind == ptx.OpVec || A[0].Kind == ptx.OpVec {
		vecOp, scalar := A[1], A[0]
		pack := true
		x.fn = opPack
		if A[0].Kind == ptx.OpVec {
			vecOp, scalar = A[0], A[1]
			x.fn, pack = opUnpack, false
		}
		n := len(vecOp.Elems)
		if n == 0 || t.Bits()%n != 0 {
			return decodeErr(vecOp.Pos, "cannot split .%s into %d parts", t, n)
		}
		x.size = uint8(t.Bits() / n)
		for _, e := range vecOp.Elems {
			var r int32
			if pack {
				r, err = d.src(fi, e, ptx.TypeNone)
			} else {
				r, err = d.dst(fi, e)
			}
			if err != nil {
				return err
			}
			x.vec = append(x.vec, r)
		}
		if pack {
			x.d, err = d.dst(fi, scalar)
		} else {
			x.a, err = d.src(fi, scalar, t)
		}
		if err != nil {
			return err
		}
		d.emit(x, in.Pos, guard, in.GuardNeg)
		return nil
	}
	if x.d, err = d.dst(fi, A[0]); err != nil {
		return err
	}
	if k, ok := dynSregs[A[1].Name]; ok && A[1].Kind == ptx.OpReg {
		x.mode = k
		x.fn = opClock
		d.emit(x, in.Pos, guard, in.GuardNeg)
		return nil
	}
	if x.a, err = d.src(fi, A[1], t); err != nil {
		return err
	}
	x.fn = movHandler(t)
	d.emit(x, in.Pos, guard, in.GuardNeg)
	return nil
}

func (d *decoder) valueRegs(fi *fnInstance, o ptx.Operand, vec int, isDst bool, t ptx.Type) ([]int32, error) {
	var ops []ptx.Operand
	if vec > 0 {
		if o.Kind != ptx.OpVec || len(o.Elems) != vec {
			return nil, decodeErr(o.Pos, "expected a vector of %d registers, found %s", vec, o.String())
		}
		ops = o.Elems
	} else {
		ops = []ptx.Operand{o}
	}
	out := make([]int32, len(ops))
	for i, e := range ops {
		var err error
		if isDst {
			out[i], err = d.dst(fi, e)
		} else {
			out[i], err = d.src(fi, e, t)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (d *decoder) load(fi *fnInstance, in *ptx.Inst, x *inst, guard int32) error {
	A := in.Args
	t := in.Type()
	var err error
	if x.vec, err = d.valueRegs(fi, A[0], in.Vec, true, t); err != nil {
		return err
	}
	if x.base, x.off, x.space, err = d.addr(fi, A[1], in.Space); err != nil {
		return err
	}
	x.size = uint8(t.Size())
	x.signed = t.IsSigned()
	if x.size == 0 || x.size > 8 {
		return decodeErr(in.Pos, "%s: unsupported access type .%s", in.String(), t)
	}
	x.fn = loadHandler(x)
	if strongAccess(in) {
		x.fn = opLoadStrong
	}
	d.emit(x, in.Pos, guard, in.GuardNeg)
	return nil
}

func (d *decoder) store(fi *fnInstance, in *ptx.Inst, x *inst, guard int32) error {
	A := in.Args
	t := in.Type()
	var err error
	if x.base, x.off, x.space, err = d.addr(fi, A[0], in.Space); err != nil {
		return err
	}
	if x.space == msConst || (x.space == msKParam && x.base < 0) {
		return decodeErr(A[0].Pos, "%s: cannot store to .%s", in.String(), x.space)
	}
	if x.vec, err = d.valueRegs(fi, A[1], in.Vec, false, t); err != nil {
		return err
	}
	x.size = uint8(t.Size())
	if x.size == 0 || x.size > 8 {
		return decodeErr(in.Pos, "%s: unsupported access type .%s", in.String(), t)
	}
	x.fn = storeHandler(x)
	if strongAccess(in) {
		x.fn = opStoreStrong
	}
	d.emit(x, in.Pos, guard, in.GuardNeg)
	return nil
}

// strongAccess reports whether a load or store takes part in the memory
// model (.volatile, .relaxed, .acquire, .release): such global accesses are
// ordered with atomics by taking the same lock.
func strongAccess(in *ptx.Inst) bool {
	return in.Has("volatile") || in.Has("relaxed") || in.Has("acquire") || in.Has("release")
}

func (d *decoder) setp(fi *fnInstance, in *ptx.Inst, x *inst, guard int32) error {
	A := in.Args
	var err error
	ct := in.Type()
	if in.Op == "set" {
		ct = x.t2
		if x.d, err = d.dst(fi, A[0]); err != nil {
			return err
		}
	} else {
		if x.pd, err = d.pred(fi, A[0].Name, A[0].Pos); err != nil {
			return err
		}
		if A[0].Pair != "" {
			if x.pq, err = d.pred(fi, A[0].Pair, A[0].Pos); err != nil {
				return err
			}
		}
	}
	types, err := in.OperandTypes()
	if err != nil {
		return err
	}
	if x.a, err = d.src(fi, A[1], types[1]); err != nil {
		return err
	}
	if x.b, err = d.src(fi, A[2], types[2]); err != nil {
		return err
	}
	if len(A) > 3 {
		if in.BoolOp == "" {
			return decodeErr(A[3].Pos, "%s: a fourth operand needs .and, .or or .xor", in.String())
		}
		if x.pc, err = d.pred(fi, A[3].Name, A[3].Pos); err != nil {
			return err
		}
		x.pcNeg = A[3].Neg
	}
	x.mode = boolOps[in.BoolOp]
	cmp, ok := cmpTables[in.Cmp]
	if !ok {
		return decodeErr(in.Pos, "%s: unknown comparison", in.String())
	}
	x.cmp = cmp
	x.cmpFn = compareFunc(ct, x.ftz)
	x.fn = opSetp
	if in.Op == "set" {
		x.fn = opSet
	}
	d.emit(x, in.Pos, guard, in.GuardNeg)
	return nil
}

func (d *decoder) predLogic(fi *fnInstance, in *ptx.Inst, x *inst, guard int32) error {
	A := in.Args
	var err error
	if x.pd, err = d.pred(fi, A[0].Name, A[0].Pos); err != nil {
		return err
	}
	if x.a, err = d.pred(fi, A[1].Name, A[1].Pos); err != nil {
		return err
	}
	if len(A) > 2 {
		if x.b, err = d.pred(fi, A[2].Name, A[2].Pos); err != nil {
			return err
		}
	}
	x.mode = map[string]uint8{"and": 0, "or": 1, "xor": 2, "not": 3, "cnot": 3}[in.Op]
	x.fn = opPredLogic
	d.emit(x, in.Pos, guard, in.GuardNeg)
	return nil
}

func (d *decoder) atom(fi *fnInstance, in *ptx.Inst, x *inst, guard int32) error {
	A := in.Args
	t := in.Type()
	var err error
	ai := 1
	x.d = d.sink
	if in.Op == "red" {
		ai = 0
	} else if x.d, err = d.dst(fi, A[0]); err != nil {
		return err
	}
	if x.base, x.off, x.space, err = d.addr(fi, A[ai], in.Space); err != nil {
		return err
	}
	if x.space == msConst || x.space == msKParam || x.space == msLocal {
		return decodeErr(A[ai].Pos, "%s: atomics need .global, .shared or generic addresses", in.String())
	}
	types, err := in.OperandTypes()
	if err != nil {
		return err
	}
	if x.a, err = d.src(fi, A[ai+1], types[ai+1]); err != nil {
		return err
	}
	op := in.Mode[0]
	if op == "cas" {
		if len(A) < ai+3 {
			return decodeErr(in.Pos, "%s needs a compare and a new value", in.String())
		}
		if x.b, err = d.src(fi, A[ai+2], types[ai+2]); err != nil {
			return err
		}
	} else if len(A) > ai+2 {
		return decodeErr(A[ai+2].Pos, "%s takes no third source", in.String())
	}
	x.size = uint8(t.Size())
	if x.size != 4 && x.size != 8 {
		return decodeErr(in.Pos, "%s: only 32- and 64-bit atomics are supported", in.String())
	}
	if x.f2, err = atomFunc(op, t, in.Pos); err != nil {
		return err
	}
	x.mode = 0
	if op == "cas" {
		x.mode = 1
	}
	x.fn = opAtom
	d.emit(x, in.Pos, guard, in.GuardNeg)
	return nil
}

func (d *decoder) shfl(fi *fnInstance, in *ptx.Inst, x *inst, guard int32) error {
	A := in.Args
	var err error
	if x.d, err = d.dst(fi, A[0]); err != nil {
		return err
	}
	if A[0].Pair != "" {
		if x.pd, err = d.pred(fi, A[0].Pair, A[0].Pos); err != nil {
			return err
		}
	}
	types, err := in.OperandTypes()
	if err != nil {
		return err
	}
	if x.a, err = d.src(fi, A[1], types[1]); err != nil {
		return err
	}
	if x.b, err = d.src(fi, A[2], types[2]); err != nil {
		return err
	}
	if x.c, err = d.src(fi, A[3], types[3]); err != nil {
		return err
	}
	x.mode = map[string]uint8{"up": 0, "down": 1, "bfly": 2, "idx": 3}[in.Mode[0]]
	x.fn = opShfl
	d.emit(x, in.Pos, guard, in.GuardNeg)
	return nil
}

func (d *decoder) vote(fi *fnInstance, in *ptx.Inst, x *inst, guard int32) error {
	A := in.Args
	var err error
	mode := in.Mode[0]
	if mode == "ballot" {
		if x.d, err = d.dst(fi, A[0]); err != nil {
			return err
		}
	} else if x.pd, err = d.pred(fi, A[0].Name, A[0].Pos); err != nil {
		return err
	}
	if x.pc, err = d.pred(fi, A[1].Name, A[1].Pos); err != nil {
		return err
	}
	x.pcNeg = A[1].Neg
	x.b = -1
	if len(A) > 2 {
		types, err := in.OperandTypes()
		if err != nil {
			return err
		}
		if x.b, err = d.src(fi, A[2], types[2]); err != nil {
			return err
		}
	}
	x.mode = map[string]uint8{"all": 0, "any": 1, "uni": 2, "ballot": 3}[mode]
	x.fn = opVote
	d.emit(x, in.Pos, guard, in.GuardNeg)
	return nil
}

// call inlines the callee's body at the call site. Formal .param
// parameters alias the caller's argument variables; .reg formals get fresh
// registers, copied in before and out after the body.
func (d *decoder) call(fi *fnInstance, in *ptx.Inst, guard int32) error {
	A := in.Args
	var rets, args []ptx.Operand
	var target ptx.Operand
	switch len(A) {
	case 1:
		target = A[0]
	case 2:
		if A[0].Kind == ptx.OpList {
			rets, target = A[0].Elems, A[1]
		} else {
			target, args = A[0], A[1].Elems
		}
	default:
		rets, target, args = A[0].Elems, A[1], A[2].Elems
	}
	f := d.m.Func(target.Name)
	if target.Kind != ptx.OpSym || f == nil {
		return decodeErr(target.Pos, "call target %s is not a function of this module", target.String())
	}
	if f.Body == nil {
		return unsupported(target.Pos, "call to %s: external functions are not supported", f.Name)
	}
	if f.Entry {
		return decodeErr(target.Pos, "call to kernel %s", f.Name)
	}
	for _, g := range d.stack {
		if g == f {
			return unsupported(in.Pos, "recursive call to %s is not supported by the simulator", f.Name)
		}
	}
	if len(d.stack) > 64 {
		return decodeErr(in.Pos, "calls nested too deeply")
	}
	if len(args) != len(f.Params) || len(rets) != len(f.Rets) {
		return decodeErr(in.Pos, "call to %s: %d arguments and %d results, the function has %d and %d", f.Name, len(args), len(rets), len(f.Params), len(f.Rets))
	}
	callee := &fnInstance{f: f, labels: map[string]int32{}, params: map[string]symRef{}, regForms: map[string]regSlot{}}
	skip := int32(-1)
	if guard >= 0 {
		// @p call f  ==>  @!p bra after; <body>; after:
		skip = d.emit(&inst{kind: kBra, text: "call", line: int32(in.Pos.Line), base: -1}, in.Pos, guard, !in.GuardNeg)
	}
	type copyOut struct{ from, to int32 }
	var outs []copyOut
	bind := func(formal *ptx.Param, actual ptx.Operand, isRet bool) error {
		if formal.Space == ptx.SpaceParam {
			if actual.Kind != ptx.OpSym {
				return decodeErr(actual.Pos, "argument for .param %s must be a .param variable", formal.Name)
			}
			ref, ok := d.lookupSym(fi, actual.Name)
			if !ok || ref.space != msLocal {
				return decodeErr(actual.Pos, "argument %s is not a .param variable of the caller", actual.Name)
			}
			callee.params[formal.Name] = ref
			return nil
		}
		slot := d.allocReg(formal.Type)
		if slot.pred {
			return unsupported(actual.Pos, "predicate parameters are not supported")
		}
		callee.regForms[formal.Name] = slot
		if isRet {
			to, err := d.dst(fi, actual)
			if err != nil {
				return err
			}
			outs = append(outs, copyOut{slot.idx, to})
			return nil
		}
		from, err := d.src(fi, actual, formal.Type)
		if err != nil {
			return err
		}
		d.emit(&inst{fn: movHandler(ptx.B64), d: slot.idx, a: from, text: "call", line: int32(in.Pos.Line), base: -1}, in.Pos, -1, false)
		return nil
	}
	for i, p := range f.Params {
		if err := bind(p, args[i], false); err != nil {
			return err
		}
	}
	for i, p := range f.Rets {
		if err := bind(p, rets[i], true); err != nil {
			return err
		}
	}
	d.stack = append(d.stack, f)
	err := d.body(callee, f.Body)
	d.stack = d.stack[:len(d.stack)-1]
	if err != nil {
		return err
	}
	end := int32(len(d.k.prog))
	for _, pc := range callee.retFix {
		d.k.prog[pc].target = end
	}
	for _, o := range outs {
		d.emit(&inst{fn: movHandler(ptx.B64), d: o.to, a: o.from, text: "call", line: int32(in.Pos.Line), base: -1}, in.Pos, -1, false)
	}
	if skip >= 0 {
		d.k.prog[skip].target = int32(len(d.k.prog))
	}
	return nil
}
