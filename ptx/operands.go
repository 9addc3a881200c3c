package ptx

// The operand column of the op table: each opcode's shape function gives
// the type every operand must have, from the instruction's type modifiers.
// The checker holds registers and immediates to these types; the
// simulator's decoder reads its operands with them (Inst.OperandTypes).

// operandRoles returns the type each operand of in should have, derived
// from the instruction's type modifiers by its opcode's shape function in
// the table. It reports a missing or unsuitable type modifier as an
// *Error.
func operandRoles(in *Inst) ([]role, error) {
	if info := in.Info(); info != nil && info.shape != nil {
		return info.shape(in)
	}
	return all(len(in.Args), role{}), nil
}

// need checks that in's type modifier satisfies ok (what names the types
// it may be).
func need(in *Inst, ok func(Type) bool, what string) error {
	t := in.Type()
	if t == TypeNone {
		return errorf(in.Pos, "%s needs a type modifier (%s)", in.String(), what)
	}
	if !ok(t) {
		return errorf(in.Pos, "%s does not accept type .%s (expects %s)", in.Op, t, what)
	}
	return nil
}

// all is n operands of role r.
func all(n int, r role) []role {
	out := make([]role, n)
	for i := range out {
		out[i] = r
	}
	return out
}

func anyType(Type) bool      { return true }
func intOrFloat(x Type) bool { return x.IsInt() || x.IsFloat() || x.IsBits() }
func num(x Type) bool        { return x.IsInt() || x.IsFloat() }
func fltT(x Type) bool       { return x == F32 || x == F64 }
func bitsOrPred(x Type) bool { return x.IsBits() || x.IsInt() || x == Pred }

// shapeMov gives the operand types of mov.
func shapeMov(in *Inst) ([]role, error) {
	t := in.Type()
	n := len(in.Args)
	if err := need(in, anyType, "any type"); err != nil {
		return nil, err
	}
	return all(n, role{t: t}), nil
}

// shapeLoad gives the operand types of ld, ldu.
func shapeLoad(in *Inst) ([]role, error) {
	t := in.Type()
	if err := need(in, anyType, "a load type"); err != nil {
		return nil, err
	}
	return []role{{t: t, wider: !t.IsFloat()}, {addr: true}, {}}, nil
}

// shapeStore gives the operand types of st.
func shapeStore(in *Inst) ([]role, error) {
	t := in.Type()
	if err := need(in, anyType, "a store type"); err != nil {
		return nil, err
	}
	return []role{{addr: true}, {t: t, wider: !t.IsFloat()}}, nil
}

// shapeCvt gives the operand types of cvt.
func shapeCvt(in *Inst) ([]role, error) {
	if len(in.Types) != 2 {
		return nil, errorf(in.Pos, "cvt needs two types (destination and source), found %d", len(in.Types))
	}
	return []role{{t: in.Types[0], wider: !in.Types[0].IsFloat()}, {t: in.Types[1], wider: !in.Types[1].IsFloat()}}, nil
}

// shapeCvta gives the operand types of cvta.
func shapeCvta(in *Inst) ([]role, error) {
	t := in.Type()
	if err := need(in, func(x Type) bool { return x == U32 || x == U64 }, ".u32 or .u64"); err != nil {
		return nil, err
	}
	return all(2, role{t: t}), nil
}

// shapeArith gives the operand types of add, sub, min, max, addc, subc, copysign.
func shapeArith(in *Inst) ([]role, error) {
	t := in.Type()
	if err := need(in, num, "an integer or float type"); err != nil {
		return nil, err
	}
	return all(3, role{t: t}), nil
}

// shapeMadc gives the operand types of madc.
func shapeMadc(in *Inst) ([]role, error) {
	t := in.Type()
	if err := need(in, func(x Type) bool { return x.IsInt() && x.Size() >= 4 }, "a 32- or 64-bit integer type"); err != nil {
		return nil, err
	}
	return all(4, role{t: t}), nil
}

// shapeMul gives the operand types of mul, mad.
func shapeMul(in *Inst) ([]role, error) {
	t := in.Type()
	n := len(in.Args)
	if err := need(in, num, "an integer or float type"); err != nil {
		return nil, err
	}
	if in.Has("wide") {
		if !t.IsInt() || t.Size() > 4 {
			return nil, errorf(in.Pos, "%s.wide needs a 16- or 32-bit integer type, not .%s", in.Op, t)
		}
		wide := wideType(t)
		if in.Op == "mul" {
			return []role{{t: wide}, {t: t}, {t: t}}, nil
		}
		return []role{{t: wide}, {t: t}, {t: t}, {t: wide}}, nil
	}
	return all(n, role{t: t}), nil
}

// shapeMul24 gives the operand types of mul24, mad24.
func shapeMul24(in *Inst) ([]role, error) {
	t := in.Type()
	n := len(in.Args)
	if err := need(in, func(x Type) bool { return x == U32 || x == S32 }, ".u32 or .s32"); err != nil {
		return nil, err
	}
	return all(n, role{t: t}), nil
}

// shapeDiv gives the operand types of div, rem, abs, neg.
func shapeDiv(in *Inst) ([]role, error) {
	t := in.Type()
	n := len(in.Args)
	if err := need(in, num, "an integer or float type"); err != nil {
		return nil, err
	}
	if in.Op == "rem" && !t.IsInt() {
		return nil, errorf(in.Pos, "rem needs an integer type, not .%s", t)
	}
	return all(n, role{t: t}), nil
}

// shapeFloat gives the operand types of fma, rcp, sqrt, rsqrt, ex2, lg2, sin, cos.
func shapeFloat(in *Inst) ([]role, error) {
	t := in.Type()
	n := len(in.Args)
	if err := need(in, fltT, ".f32 or .f64"); err != nil {
		return nil, err
	}
	return all(n, role{t: t}), nil
}

// shapeTestp gives the operand types of testp.
func shapeTestp(in *Inst) ([]role, error) {
	t := in.Type()
	if err := need(in, fltT, ".f32 or .f64"); err != nil {
		return nil, err
	}
	return []role{{t: Pred}, {t: t}}, nil
}

// shapeLogic gives the operand types of and, or, xor, not, cnot.
func shapeLogic(in *Inst) ([]role, error) {
	t := in.Type()
	n := len(in.Args)
	if err := need(in, bitsOrPred, "a bit-size or predicate type"); err != nil {
		return nil, err
	}
	return all(n, role{t: t}), nil
}

// shapeShift gives the operand types of shl, shr.
func shapeShift(in *Inst) ([]role, error) {
	t := in.Type()
	u32 := role{t: U32}
	if err := need(in, func(x Type) bool { return x.IsBits() || x.IsInt() }, "a bit-size or integer type"); err != nil {
		return nil, err
	}
	return []role{{t: t}, {t: t}, u32}, nil
}

// shapeBfe gives the operand types of bfe.
func shapeBfe(in *Inst) ([]role, error) {
	t := in.Type()
	u32 := role{t: U32}
	if err := need(in, func(x Type) bool { return x == U32 || x == S32 || x == U64 || x == S64 }, ".u32, .s32, .u64 or .s64"); err != nil {
		return nil, err
	}
	return []role{{t: t}, {t: t}, u32, u32}, nil
}

// shapeBfi gives the operand types of bfi.
func shapeBfi(in *Inst) ([]role, error) {
	t := in.Type()
	u32 := role{t: U32}
	if err := need(in, func(x Type) bool { return x == B32 || x == B64 }, ".b32 or .b64"); err != nil {
		return nil, err
	}
	return []role{{t: t}, {t: t}, {t: t}, u32, u32}, nil
}

// shapeBrev gives the operand types of brev.
func shapeBrev(in *Inst) ([]role, error) {
	t := in.Type()
	if err := need(in, func(x Type) bool { return x == B32 || x == B64 }, ".b32 or .b64"); err != nil {
		return nil, err
	}
	return all(2, role{t: t}), nil
}

// shapeShf gives the operand types of shf.
func shapeShf(in *Inst) ([]role, error) {
	t := in.Type()
	u32 := role{t: U32}
	if len(in.Mode) != 1 || t != B32 {
		return nil, errorf(in.Pos, "shf needs .l or .r, .wrap or .clamp, and .b32")
	}
	return []role{{t: B32}, {t: B32}, {t: B32}, u32}, nil
}

// shapeSad gives the operand types of sad.
func shapeSad(in *Inst) ([]role, error) {
	t := in.Type()
	if err := need(in, func(x Type) bool { return x.IsInt() }, "an integer type"); err != nil {
		return nil, err
	}
	return all(4, role{t: t}), nil
}

// shapeBfind gives the operand types of bfind.
func shapeBfind(in *Inst) ([]role, error) {
	t := in.Type()
	u32 := role{t: U32}
	if err := need(in, func(x Type) bool { return x == U32 || x == S32 || x == U64 || x == S64 }, ".u32, .s32, .u64 or .s64"); err != nil {
		return nil, err
	}
	return []role{u32, {t: t}}, nil
}

// shapeCount gives the operand types of popc, clz.
func shapeCount(in *Inst) ([]role, error) {
	t := in.Type()
	u32 := role{t: U32}
	if err := need(in, func(x Type) bool { return x == B32 || x == B64 }, ".b32 or .b64"); err != nil {
		return nil, err
	}
	return []role{u32, {t: t}}, nil
}

// shapePrmt gives the operand types of prmt.
func shapePrmt(in *Inst) ([]role, error) {
	if err := need(in, func(x Type) bool { return x == B32 }, ".b32"); err != nil {
		return nil, err
	}
	return all(4, role{t: B32}), nil
}

// shapeSetp gives the operand types of setp.
func shapeSetp(in *Inst) ([]role, error) {
	t := in.Type()
	if in.Cmp == "" {
		return nil, errorf(in.Pos, "setp needs a comparison operator (.eq, .lt, ...)")
	}
	if err := need(in, intOrFloat, "an integer, bit-size or float type"); err != nil {
		return nil, err
	}
	if err := cmpFits(in, t); err != nil {
		return nil, err
	}
	return []role{{t: Pred}, {t: t}, {t: t}, {t: Pred}}, nil
}

// shapeSet gives the operand types of set.
func shapeSet(in *Inst) ([]role, error) {
	if in.Cmp == "" || len(in.Types) != 2 {
		return nil, errorf(in.Pos, "set needs a comparison operator and two types")
	}
	return []role{{t: in.Types[0]}, {t: in.Types[1]}, {t: in.Types[1]}, {t: Pred}}, nil
}

// shapeSelp gives the operand types of selp.
func shapeSelp(in *Inst) ([]role, error) {
	t := in.Type()
	if err := need(in, intOrFloat, "an integer, bit-size or float type"); err != nil {
		return nil, err
	}
	return []role{{t: t}, {t: t}, {t: t}, {t: Pred}}, nil
}

// shapeSlct gives the operand types of slct.
func shapeSlct(in *Inst) ([]role, error) {
	t := in.Type()
	if len(in.Types) != 2 || (in.Types[1] != S32 && in.Types[1] != F32) {
		return nil, errorf(in.Pos, "slct needs a value type and .s32 or .f32")
	}
	return []role{{t: t}, {t: t}, {t: t}, {t: in.Types[1]}}, nil
}

// shapeAtom gives the operand types of atom, red.
func shapeAtom(in *Inst) ([]role, error) {
	t := in.Type()
	if len(in.Mode) != 1 {
		return nil, errorf(in.Pos, "%s needs exactly one operation (.add, .cas, ...)", in.Op)
	}
	if err := need(in, intOrFloat, "an integer, bit-size or float type"); err != nil {
		return nil, err
	}
	if in.Op == "red" {
		return []role{{addr: true}, {t: t}}, nil
	}
	return []role{{t: t}, {addr: true}, {t: t}, {t: t}}, nil
}

// shapeShfl gives the operand types of shfl.
func shapeShfl(in *Inst) ([]role, error) {
	t := in.Type()
	u32 := role{t: U32}
	if len(in.Mode) != 1 || t != B32 {
		return nil, errorf(in.Pos, "shfl needs a mode (.up, .down, .bfly, .idx) and .b32")
	}
	return []role{{t: B32}, {t: B32}, u32, u32, u32}, nil
}

// shapeVote gives the operand types of vote.
func shapeVote(in *Inst) ([]role, error) {
	t := in.Type()
	u32 := role{t: U32}
	if len(in.Mode) != 1 {
		return nil, errorf(in.Pos, "vote needs a mode (.all, .any, .uni, .ballot)")
	}
	if in.Mode[0] == "ballot" {
		if t != B32 {
			return nil, errorf(in.Pos, "vote.ballot needs .b32")
		}
		return []role{{t: B32}, {t: Pred}, u32}, nil
	}
	return []role{{t: Pred}, {t: Pred}, u32}, nil
}

// shapeActivemask gives the operand types of activemask.
func shapeActivemask(in *Inst) ([]role, error) {
	return []role{{t: B32}}, nil
}

// shapeBar gives the operand types of bar, barrier.
func shapeBar(in *Inst) ([]role, error) {
	n := len(in.Args)
	u32 := role{t: U32}
	return all(n, u32), nil
}

// shapeNanosleep gives the operand types of nanosleep.
func shapeNanosleep(in *Inst) ([]role, error) {
	u32 := role{t: U32}
	return []role{u32}, nil
}

// shapePrefetch gives the operand types of prefetch.
func shapePrefetch(in *Inst) ([]role, error) {
	return []role{{addr: true}}, nil
}
