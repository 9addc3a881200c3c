package lift

import (
	"github.com/gxbit/gxbit/gvinst"
	"golang.org/x/arch/x86/x86asm"
)

// x87Ops is the dispatch table of the x87 instructions.
//
// RATIONALE: the register stack stays in the guest state (FPTop, FPTag,
// FR0…FR7) and every x87 instruction is lifted on its own into FGETST,
// FPUSH, FPUTST and FPOP around .f80 arithmetic: the interpreter's x87 unit
// (gvinst/float80) does the rounding, the exception flags and C1, and the
// lifter composes the other condition codes, the status word with TOP and
// the control word with plain GET/PUT of fpsw, fptop, fptag and fpcw.
// Nothing is cached across instructions, so a block may stop anywhere.
func x87Ops() map[x86asm.Op]liftFunc {
	return map[x86asm.Op]liftFunc{
		x86asm.FLD:    liftFld,
		x86asm.FST:    liftFst(false),
		x86asm.FSTP:   liftFst(true),
		x86asm.FILD:   liftFild,
		x86asm.FIST:   liftFist(gvinst.RoundX87, false),
		x86asm.FISTP:  liftFist(gvinst.RoundX87, true),
		x86asm.FISTTP: liftFist(gvinst.RoundZero, true),
		x86asm.FLD1:   liftFconst(0),
		x86asm.FLDL2T: liftFconst(1),
		x86asm.FLDL2E: liftFconst(2),
		x86asm.FLDPI:  liftFconst(3),
		x86asm.FLDLG2: liftFconst(4),
		x86asm.FLDLN2: liftFconst(5),
		x86asm.FLDZ:   liftFconst(6),
		x86asm.FXCH:   liftFxch,

		x86asm.FADD:   liftFarith(gvinst.OpAdd, false, false),
		x86asm.FADDP:  liftFarith(gvinst.OpAdd, false, true),
		x86asm.FIADD:  liftFarith(gvinst.OpAdd, false, false),
		x86asm.FSUB:   liftFarith(gvinst.OpSub, false, false),
		x86asm.FSUBP:  liftFarith(gvinst.OpSub, false, true),
		x86asm.FISUB:  liftFarith(gvinst.OpSub, false, false),
		x86asm.FSUBR:  liftFarith(gvinst.OpSub, true, false),
		x86asm.FSUBRP: liftFarith(gvinst.OpSub, true, true),
		x86asm.FISUBR: liftFarith(gvinst.OpSub, true, false),
		x86asm.FMUL:   liftFarith(gvinst.OpMul, false, false),
		x86asm.FMULP:  liftFarith(gvinst.OpMul, false, true),
		x86asm.FIMUL:  liftFarith(gvinst.OpMul, false, false),
		x86asm.FDIV:   liftFarith(gvinst.OpDiv, false, false),
		x86asm.FDIVP:  liftFarith(gvinst.OpDiv, false, true),
		x86asm.FIDIV:  liftFarith(gvinst.OpDiv, false, false),
		x86asm.FDIVR:  liftFarith(gvinst.OpDiv, true, false),
		x86asm.FDIVRP: liftFarith(gvinst.OpDiv, true, true),
		x86asm.FIDIVR: liftFarith(gvinst.OpDiv, true, false),

		x86asm.FCHS:    liftFunary(gvinst.OpNeg),
		x86asm.FABS:    liftFunary(gvinst.OpAbs),
		x86asm.FSQRT:   liftFunary(gvinst.OpSqrt),
		x86asm.FRNDINT: liftFunary(gvinst.OpRound),
		x86asm.F2XM1:   liftFunary(gvinst.OpF2xm1),
		x86asm.FSIN:    liftFunary(gvinst.OpFSin),
		x86asm.FCOS:    liftFunary(gvinst.OpFCos),
		x86asm.FSCALE:  liftFbinST1(gvinst.OpFScale),
		x86asm.FPREM:   liftFbinST1(gvinst.OpFPrem),
		x86asm.FPREM1:  liftFbinST1(gvinst.OpFPrem1),
		x86asm.FYL2X:   liftFpopST1(gvinst.OpFYl2x),
		x86asm.FYL2XP1: liftFpopST1(gvinst.OpFYl2xp1),
		x86asm.FPATAN:  liftFpopST1(gvinst.OpFPatan),
		x86asm.FXTRACT: liftFxtract,
		x86asm.FPTAN:   liftFptan,
		x86asm.FSINCOS: liftFsincos,

		x86asm.FCOM:    liftFcom(false, 0),
		x86asm.FCOMP:   liftFcom(false, 1),
		x86asm.FCOMPP:  liftFcom(false, 2),
		x86asm.FUCOM:   liftFcom(true, 0),
		x86asm.FUCOMP:  liftFcom(true, 1),
		x86asm.FUCOMPP: liftFcom(true, 2),
		x86asm.FICOM:   liftFcom(false, 0),
		x86asm.FICOMP:  liftFcom(false, 1),
		x86asm.FTST:    liftFtst,
		x86asm.FCOMI:   liftFcomi(false, false),
		x86asm.FCOMIP:  liftFcomi(false, true),
		x86asm.FUCOMI:  liftFcomi(true, false),
		x86asm.FUCOMIP: liftFcomi(true, true),
		x86asm.FXAM:    liftFxam,

		x86asm.FCMOVB:   liftFcmov(gvinst.CondB),
		x86asm.FCMOVE:   liftFcmov(gvinst.CondE),
		x86asm.FCMOVBE:  liftFcmov(gvinst.CondBE),
		x86asm.FCMOVU:   liftFcmov(gvinst.CondP),
		x86asm.FCMOVNB:  liftFcmov(gvinst.CondAE),
		x86asm.FCMOVNE:  liftFcmov(gvinst.CondNE),
		x86asm.FCMOVNBE: liftFcmov(gvinst.CondA),
		x86asm.FCMOVNU:  liftFcmov(gvinst.CondNP),

		x86asm.FNSTSW:  liftFnstsw,
		x86asm.FNSTCW:  liftFnstcw,
		x86asm.FLDCW:   liftFldcw,
		x86asm.FNSTENV: liftFxState(gvinst.OpFnstenv),
		x86asm.FLDENV:  liftFxState(gvinst.OpFldenv),
		x86asm.FNINIT:  liftFninit,
		x86asm.FNCLEX:  liftFnclex,
		x86asm.FFREE:   liftFfree(false),
		x86asm.FFREEP:  liftFfree(true),
		x86asm.FINCSTP: liftFstep(1),
		x86asm.FDECSTP: liftFstep(-1),
		x86asm.FWAIT:   liftNop,
		x86asm.FNOP:    liftNop,
	}
}

// The x87 status word bits the lifter composes.
const (
	fswC0 = 1 << 8
	fswC1 = 1 << 9
	fswC2 = 1 << 10
	fswC3 = 1 << 14
	// fswCC is every condition code bit.
	fswCC = fswC0 | fswC1 | fswC2 | fswC3
)

// stArg returns i for an x87 register operand ST(i).
func stArg(a x86asm.Arg) (int, bool) {
	r, ok := a.(x86asm.Reg)
	if !ok || r < x86asm.F0 || r > x86asm.F7 {
		return 0, false
	}
	return int(r - x86asm.F0), true
}

// fget emits d = FGETST.f80 i.
func (b *builder) fget(i int) gvinst.Reg {
	in := gvinst.Inst{Op: gvinst.OpFGetST, Type: gvinst.F80, Imm: int64(i), Dst: b.newV(2)}
	b.emit(in)
	return in.Dst
}

// fput emits FPUTST.f80 i, v.
func (b *builder) fput(i int, v gvinst.Reg) {
	in := gvinst.Inst{Op: gvinst.OpFPutST, Type: gvinst.F80, Imm: int64(i)}
	in.Src[0] = v
	b.emit(in)
}

// fpush pushes v onto the register stack.
func (b *builder) fpush(v gvinst.Reg) {
	b.emit(gvinst.Inst{Op: gvinst.OpFPush})
	b.fput(0, v)
}

// fpop pops the register stack n times.
func (b *builder) fpop(n int) {
	for ; n > 0; n-- {
		b.emit(gvinst.Inst{Op: gvinst.OpFPop})
	}
}

// f80op emits d = op.f80 srcs….
func (b *builder) f80op(op gvinst.Op, srcs ...gvinst.Reg) gvinst.Reg {
	return b.def(op, gvinst.F80, srcs...)
}

// setFSW replaces the status word bits in mask with those of bits (a value
// holding only bits of mask).
func (b *builder) setFSW(mask uint64, bits gvinst.Reg) {
	old := b.getT(gvinst.U64, gvinst.FPSW)
	kept := b.opi(gvinst.OpAnd, gvinst.B64, old, int64(^mask))
	if bits == 0 {
		b.putT(gvinst.U64, gvinst.FPSW, kept)
		return
	}
	b.putT(gvinst.U64, gvinst.FPSW, b.op(gvinst.OpOr, gvinst.B64, kept, bits))
}

// clearC1 clears C1, as most x87 instructions that do not round do.
func (b *builder) clearC1() { b.setFSW(fswC1, 0) }

// x87MemSize is the size in bytes of the current x87 instruction's memory
// operand: x86asm leaves MemBytes 0 for the 80-bit forms.
func (b *builder) x87MemSize() int {
	if n := b.d.Inst.MemBytes; n > 0 {
		return n
	}
	return 10
}

// loadF80 loads the memory operand m as an .f80 value: a float of its size,
// or a signed integer when integer is set.
func (b *builder) loadF80(m memRef, size int, integer bool) (gvinst.Reg, error) {
	var t gvinst.Type
	switch {
	case integer:
		if size != 2 && size != 4 && size != 8 {
			return 0, unsupported("%d-byte x87 integer operand", size)
		}
		t = sintType(size)
	case size == 4:
		t = gvinst.F32
	case size == 8:
		t = gvinst.F64
	case size == 10:
		return b.ld(gvinst.F80, m), nil
	default:
		return 0, unsupported("%d-byte x87 operand", size)
	}
	return b.cvtF80(t, b.ld(t, m)), nil
}

// cvtF80 emits d = CVT.rn.f80.t v (exact).
func (b *builder) cvtF80(t gvinst.Type, v gvinst.Reg) gvinst.Reg {
	in := gvinst.Inst{Op: gvinst.OpCvt, Type: gvinst.F80, SrcType: t, Mod: uint8(gvinst.RoundNearest), Dst: b.newV(2)}
	in.Src[0] = v
	b.emit(in)
	return in.Dst
}

// fromF80 emits d = CVT.r.t.f80 v.
func (b *builder) fromF80(r gvinst.Rounding, t gvinst.Type, v gvinst.Reg) gvinst.Reg {
	in := gvinst.Inst{Op: gvinst.OpCvt, Type: t, SrcType: gvinst.F80, Mod: uint8(r), Dst: b.newV(1)}
	in.Src[0] = v
	b.emit(in)
	return in.Dst
}

// x87Mem returns the current instruction's memory operand, if its
// first operand is one.
func (b *builder) x87Mem() (memRef, bool, error) {
	m, ok := b.d.Inst.Args[0].(x86asm.Mem)
	if !ok {
		return memRef{}, false, nil
	}
	ref, err := b.addrOf(m, false)
	return ref, true, err
}

// liftFld lifts fld ST(i) and fld m32/m64/m80.
func liftFld(b *builder) error {
	if i, ok := stArg(b.d.Inst.Args[0]); ok {
		b.fpush(b.fget(i))
		return nil
	}
	m, ok, err := b.x87Mem()
	if err != nil || !ok {
		return orUnsupported(err, "fld operand")
	}
	v, err := b.loadF80(m, b.x87MemSize(), false)
	if err != nil {
		return err
	}
	b.fpush(v)
	return nil
}

// orUnsupported returns err, or an unsupported-form error when err is nil.
func orUnsupported(err error, what string) error {
	if err != nil {
		return err
	}
	return unsupported("%s", what)
}

// liftFst lifts fst and fstp to ST(i) or to m32/m64/m80.
func liftFst(pop bool) liftFunc {
	return func(b *builder) error {
		if i, ok := stArg(b.d.Inst.Args[0]); ok {
			if i != 0 {
				b.fput(i, b.fget(0))
			} else {
				b.fget(0) // fstp st(0) still faults on an empty register
			}
			if pop {
				b.fpop(1)
			}
			return nil
		}
		m, ok, err := b.x87Mem()
		if err != nil || !ok {
			return orUnsupported(err, "fst operand")
		}
		v := b.fget(0)
		switch size := b.x87MemSize(); size {
		case 4:
			b.st(gvinst.F32, m, b.fromF80(gvinst.RoundX87, gvinst.F32, v))
		case 8:
			b.st(gvinst.F64, m, b.fromF80(gvinst.RoundX87, gvinst.F64, v))
		case 10:
			if !pop {
				return unsupported("fst m80")
			}
			b.st(gvinst.F80, m, v)
			b.clearC1()
		default:
			return unsupported("%d-byte fst operand", size)
		}
		if pop {
			b.fpop(1)
		}
		return nil
	}
}

// liftFild lifts fild m16/m32/m64.
func liftFild(b *builder) error {
	m, ok, err := b.x87Mem()
	if err != nil || !ok {
		return orUnsupported(err, "fild operand")
	}
	v, err := b.loadF80(m, b.x87MemSize(), true)
	if err != nil {
		return err
	}
	b.fpush(v)
	return nil
}

// liftFist lifts fist, fistp (rounding per fpcw) and fisttp (truncating).
func liftFist(r gvinst.Rounding, pop bool) liftFunc {
	return func(b *builder) error {
		m, ok, err := b.x87Mem()
		if err != nil || !ok {
			return orUnsupported(err, "fist operand")
		}
		size := b.x87MemSize()
		if size != 2 && size != 4 && size != 8 || size == 8 && !pop {
			return unsupported("%d-byte fist operand", size)
		}
		v := b.fromF80(r, sintType(size), b.fget(0))
		b.st(uintType(size), m, v)
		if pop {
			b.fpop(1)
		}
		return nil
	}
}

// liftFconst lifts fld1, fldl2t, fldl2e, fldpi, fldlg2, fldln2 and fldz.
func liftFconst(k int64) liftFunc {
	return func(b *builder) error {
		in := gvinst.Inst{Op: gvinst.OpFConst, Type: gvinst.F80, Imm: k, Dst: b.newV(2)}
		b.emit(in)
		b.fpush(in.Dst)
		return nil
	}
}

// liftFxch lifts fxch ST(i).
func liftFxch(b *builder) error {
	i := 1
	if a := b.d.Inst.Args[0]; a != nil {
		var ok bool
		if i, ok = stArg(a); !ok {
			return unsupported("fxch operand")
		}
	}
	x, y := b.fget(0), b.fget(i)
	b.fput(0, y)
	b.fput(i, x)
	b.clearC1()
	return nil
}

// liftFarith lifts the two-operand arithmetic instructions: fadd, fsub,
// fmul, fdiv with a memory operand (float or, for the fi… forms, integer)
// or between ST(0) and ST(i), their reversed (r) and popping (p) forms.
func liftFarith(op gvinst.Op, rev, pop bool) liftFunc {
	return func(b *builder) error {
		args := b.d.Inst.Args
		if m, ok, err := b.x87Mem(); err != nil {
			return err
		} else if ok {
			integer := false
			switch b.d.Inst.Op {
			case x86asm.FIADD, x86asm.FISUB, x86asm.FISUBR, x86asm.FIMUL, x86asm.FIDIV, x86asm.FIDIVR:
				integer = true
			}
			src, err := b.loadF80(m, b.x87MemSize(), integer)
			if err != nil {
				return err
			}
			dst := b.fget(0)
			if rev {
				b.fput(0, b.f80op(op, src, dst))
			} else {
				b.fput(0, b.f80op(op, dst, src))
			}
			return nil
		}
		i, ok1 := stArg(args[0])
		j, ok2 := stArg(args[1])
		if !ok1 || !ok2 {
			return unsupported("x87 arithmetic operands")
		}
		dst, src := b.fget(i), b.fget(j)
		if rev {
			b.fput(i, b.f80op(op, src, dst))
		} else {
			b.fput(i, b.f80op(op, dst, src))
		}
		if pop {
			b.fpop(1)
		}
		return nil
	}
}

// liftFunary lifts the instructions that replace ST(0) by a function of it.
func liftFunary(op gvinst.Op) liftFunc {
	return func(b *builder) error {
		v := b.fget(0)
		var r gvinst.Reg
		if op == gvinst.OpRound {
			in := gvinst.Inst{Op: op, Type: gvinst.F80, Mod: uint8(gvinst.RoundX87), Dst: b.newV(2)}
			in.Src[0] = v
			b.emit(in)
			r = in.Dst
		} else {
			r = b.f80op(op, v)
		}
		b.fput(0, r)
		return nil
	}
}

// liftFbinST1 lifts fscale, fprem and fprem1: ST(0) = op(ST(0), ST(1)).
func liftFbinST1(op gvinst.Op) liftFunc {
	return func(b *builder) error {
		x, y := b.fget(0), b.fget(1)
		b.fput(0, b.f80op(op, x, y))
		return nil
	}
}

// liftFpopST1 lifts fyl2x, fyl2xp1 and fpatan: ST(1) = op(ST(0), ST(1)),
// then pop.
func liftFpopST1(op gvinst.Op) liftFunc {
	return func(b *builder) error {
		x, y := b.fget(0), b.fget(1)
		b.fput(1, b.f80op(op, x, y))
		b.fpop(1)
		return nil
	}
}

// liftFxtract lifts fxtract: ST(0) = the exponent, then push the
// significand.
func liftFxtract(b *builder) error {
	v := b.fget(0)
	exp := b.f80op(gvinst.OpFXtExp, v)
	sig := b.f80op(gvinst.OpFXtSig, v)
	b.fput(0, exp)
	b.fpush(sig)
	return nil
}

// condPush writes first to ST(0) and then, unless C2 is set (the
// instruction's argument was out of range and the stack must not change),
// pushes second. With C2 set, first is the unchanged argument.
func (b *builder) condPush(first, second gvinst.Reg) {
	b.fput(0, first)
	sw := b.getT(gvinst.U64, gvinst.FPSW)
	c2 := b.opi(gvinst.OpAnd, gvinst.B64, b.opi(gvinst.OpShr, gvinst.U64, sw, 10), 1)
	top := b.getT(gvinst.U64, gvinst.FPTop)
	ntop := b.opi(gvinst.OpAnd, gvinst.B64, b.op(gvinst.OpAdd, gvinst.U64, b.opi(gvinst.OpSub, gvinst.U64, top, 1), c2), 7)
	b.putT(gvinst.U64, gvinst.FPTop, ntop)
	b.fput(0, b.sel(gvinst.F80, c2, first, second))
}

// liftFptan lifts fptan: ST(0) = tan(ST(0)), then push 1.0 (or the NaN
// result itself when the result is a NaN).
func liftFptan(b *builder) error {
	t := b.f80op(gvinst.OpFPtan, b.fget(0))
	cls := b.def(gvinst.OpFClass, gvinst.F80, t)
	isNaN := b.cmpi(gvinst.CmpEq, gvinst.U64, b.opi(gvinst.OpAnd, gvinst.B64, cls, fswC3|fswC2|fswC0), fswC0)
	one := b.f80const(0)
	b.condPush(t, b.sel(gvinst.F80, isNaN, t, one))
	return nil
}

// f80const emits d = FCONST.f80 k.
func (b *builder) f80const(k int64) gvinst.Reg {
	in := gvinst.Inst{Op: gvinst.OpFConst, Type: gvinst.F80, Imm: k, Dst: b.newV(2)}
	b.emit(in)
	return in.Dst
}

// liftFsincos lifts fsincos: ST(0) = sin(ST(0)), then push cos; C1 reports
// the cosine's rounding, as the hardware does.
func liftFsincos(b *builder) error {
	v := b.fget(0)
	s := b.f80op(gvinst.OpFSin, v)
	c := b.f80op(gvinst.OpFCos, v)
	b.condPush(s, c)
	return nil
}

// fcmp emits d = FCMP.f80 x, y, quiet.
func (b *builder) fcmp(x, y gvinst.Reg, quiet bool) gvinst.Reg {
	in := gvinst.Inst{Op: gvinst.OpFCmp, Type: gvinst.F80, Dst: b.newV(1)}
	in.Src[0], in.Src[1] = x, y
	if quiet {
		in.Imm = 1
	}
	b.emit(in)
	return in.Dst
}

// liftFcom lifts fcom, fucom and ficom (ST(0) against ST(i) or memory) and
// their forms that pop once or twice: C3 C2 C0 get the ordering, C1 is
// cleared.
func liftFcom(quiet bool, pops int) liftFunc {
	return func(b *builder) error {
		var src gvinst.Reg
		m, isMem, err := b.x87Mem()
		switch {
		case err != nil:
			return err
		case isMem:
			integer := b.d.Inst.Op == x86asm.FICOM || b.d.Inst.Op == x86asm.FICOMP
			if src, err = b.loadF80(m, b.x87MemSize(), integer); err != nil {
				return err
			}
		default:
			i := 1
			if a := b.d.Inst.Args[0]; a != nil && pops < 2 {
				var ok bool
				if i, ok = stArg(a); !ok {
					return unsupported("fcom operand")
				}
			}
			src = b.fget(i)
		}
		bits := b.fcmp(b.fget(0), src, quiet)
		b.setFSW(fswCC, bits)
		b.fpop(pops)
		return nil
	}
}

// liftFtst lifts ftst: compare ST(0) with +0.0.
func liftFtst(b *builder) error {
	bits := b.fcmp(b.fget(0), b.f80const(6), false)
	b.setFSW(fswCC, bits)
	return nil
}

// liftFcomi lifts fcomi, fucomi and their popping forms: ZF PF CF get the
// ordering (C3 C2 C0 moved to bits 6 2 0), OF SF AF are cleared, C1 is
// cleared.
func liftFcomi(quiet, pop bool) liftFunc {
	return func(b *builder) error {
		i, ok := stArg(b.d.Inst.Args[1])
		if !ok {
			return unsupported("fcomi operand")
		}
		bits := b.fcmp(b.fget(0), b.fget(i), quiet)
		fl := b.opi(gvinst.OpAnd, gvinst.B64, b.opi(gvinst.OpShr, gvinst.U64, bits, 8), flagZF|flagPF|flagCF)
		b.setFlagBits(statusFlags, fl)
		b.clearC1()
		if pop {
			b.fpop(1)
		}
		return nil
	}
}

// liftFxam lifts fxam: C3 C2 C1 C0 classify ST(0).
func liftFxam(b *builder) error {
	in := gvinst.Inst{Op: gvinst.OpFXam, Dst: b.newV(1)}
	b.emit(in)
	b.setFSW(fswCC, in.Dst)
	return nil
}

// liftFcmov lifts fcmovcc ST(0), ST(i).
func liftFcmov(c gvinst.Cond) liftFunc {
	return func(b *builder) error {
		i, ok := stArg(b.d.Inst.Args[1])
		if !ok {
			return unsupported("fcmov operand")
		}
		cond := b.getcc(c)
		src, cur := b.fget(i), b.fget(0)
		b.fput(0, b.sel(gvinst.F80, cond, src, cur))
		return nil
	}
}

// fullFSW returns the status word with TOP in bits 11-13.
func (b *builder) fullFSW() gvinst.Reg {
	sw := b.getT(gvinst.U64, gvinst.FPSW)
	top := b.opi(gvinst.OpShl, gvinst.U64, b.getT(gvinst.U64, gvinst.FPTop), 11)
	return b.op(gvinst.OpOr, gvinst.B64, sw, top)
}

// liftFnstsw lifts fnstsw ax and fnstsw m16.
func liftFnstsw(b *builder) error {
	if r, ok := b.d.Inst.Args[0].(x86asm.Reg); ok {
		g, ok := gprOf(r)
		if !ok || g.size != 2 {
			return unsupported("fnstsw %v", r)
		}
		b.writeGPR(g, b.fullFSW())
		return nil
	}
	m, ok, err := b.x87Mem()
	if err != nil || !ok {
		return orUnsupported(err, "fnstsw operand")
	}
	b.st(gvinst.U16, m, b.fullFSW())
	return nil
}

// liftFnstcw lifts fnstcw m16.
func liftFnstcw(b *builder) error {
	m, ok, err := b.x87Mem()
	if err != nil || !ok {
		return orUnsupported(err, "fnstcw operand")
	}
	b.st(gvinst.U16, m, b.getT(gvinst.U16, gvinst.FPCW))
	return nil
}

// liftFldcw lifts fldcw m16.
func liftFldcw(b *builder) error {
	m, ok, err := b.x87Mem()
	if err != nil || !ok {
		return orUnsupported(err, "fldcw operand")
	}
	b.putT(gvinst.U64, gvinst.FPCW, b.ld(gvinst.U16, m))
	return nil
}

// liftFninit lifts fninit: control word 0x37f, status word 0 (TOP 0),
// every register empty.
func liftFninit(b *builder) error {
	b.putT(gvinst.U64, gvinst.FPCW, b.li(gvinst.U64, 0x37f))
	zero := b.li(gvinst.U64, 0)
	b.putT(gvinst.U64, gvinst.FPSW, zero)
	b.putT(gvinst.U64, gvinst.FPTop, zero)
	b.putT(gvinst.U64, gvinst.FPTag, b.li(gvinst.U64, 0xff))
	return nil
}

// liftFnclex lifts fnclex: clear the exception flags, SF, ES and B.
func liftFnclex(b *builder) error {
	b.setFSW(0x80ff, 0)
	return nil
}

// liftFfree lifts ffree ST(i) (tag it empty) and ffreep (then pop).
func liftFfree(pop bool) liftFunc {
	return func(b *builder) error {
		i, ok := stArg(b.d.Inst.Args[0])
		if !ok {
			return unsupported("ffree operand")
		}
		top := b.getT(gvinst.U64, gvinst.FPTop)
		phys := b.opi(gvinst.OpAnd, gvinst.B64, b.opi(gvinst.OpAdd, gvinst.U64, top, int64(i)), 7)
		bit := b.op(gvinst.OpShl, gvinst.U64, b.li(gvinst.U64, 1), phys)
		tag := b.getT(gvinst.U64, gvinst.FPTag)
		b.putT(gvinst.U64, gvinst.FPTag, b.op(gvinst.OpOr, gvinst.B64, tag, bit))
		if pop {
			b.fpop(1)
		}
		return nil
	}
}

// liftFstep lifts fincstp (+1) and fdecstp (-1): TOP moves, tags stay.
func liftFstep(delta int64) liftFunc {
	return func(b *builder) error {
		top := b.getT(gvinst.U64, gvinst.FPTop)
		b.putT(gvinst.U64, gvinst.FPTop, b.opi(gvinst.OpAnd, gvinst.B64, b.opi(gvinst.OpAdd, gvinst.U64, top, delta), 7))
		b.clearC1()
		return nil
	}
}
