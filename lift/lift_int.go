package lift

import (
	"github.com/gxbit/gxbit/gvinst"
	"golang.org/x/arch/x86/x86asm"
)

// integerOps is the dispatch table of the general-purpose integer
// instructions.
func integerOps() map[x86asm.Op]liftFunc {
	t := map[x86asm.Op]liftFunc{
		x86asm.MOV:        liftMov,
		x86asm.MOVZX:      liftMovExt(false),
		x86asm.MOVSX:      liftMovExt(true),
		x86asm.MOVSXD:     liftMovExt(true),
		x86asm.MOVNTI:     liftMov,
		x86asm.LEA:        liftLea,
		x86asm.ADD:        liftArith(gvinst.OpAdd, gvinst.FlagsAdd, true),
		x86asm.SUB:        liftArith(gvinst.OpSub, gvinst.FlagsSub, true),
		x86asm.CMP:        liftArith(gvinst.OpSub, gvinst.FlagsSub, false),
		x86asm.AND:        liftArith(gvinst.OpAnd, gvinst.FlagsLogic, true),
		x86asm.OR:         liftArith(gvinst.OpOr, gvinst.FlagsLogic, true),
		x86asm.XOR:        liftArith(gvinst.OpXor, gvinst.FlagsLogic, true),
		x86asm.TEST:       liftArith(gvinst.OpAnd, gvinst.FlagsLogic, false),
		x86asm.ADC:        liftCarry(gvinst.OpAdd, gvinst.FlagsAdc),
		x86asm.SBB:        liftCarry(gvinst.OpSub, gvinst.FlagsSbb),
		x86asm.NOT:        liftNot,
		x86asm.NEG:        liftNeg,
		x86asm.INC:        liftIncDec(gvinst.OpAdd, gvinst.FlagsInc),
		x86asm.DEC:        liftIncDec(gvinst.OpSub, gvinst.FlagsDec),
		x86asm.IMUL:       liftImul,
		x86asm.MUL:        liftMul1(false),
		x86asm.DIV:        liftDiv(false),
		x86asm.IDIV:       liftDiv(true),
		x86asm.SHL:        liftShift(gvinst.OpShl, gvinst.FlagsShl),
		x86asm.SHR:        liftShift(gvinst.OpShr, gvinst.FlagsShr),
		x86asm.SAR:        liftShift(gvinst.OpSar, gvinst.FlagsSar),
		x86asm.ROL:        liftShift(gvinst.OpRol, gvinst.FlagsRol),
		x86asm.ROR:        liftShift(gvinst.OpRor, gvinst.FlagsRor),
		x86asm.RCL:        liftRotCarry(true),
		x86asm.RCR:        liftRotCarry(false),
		x86asm.SHLD:       liftShiftDouble(true),
		x86asm.SHRD:       liftShiftDouble(false),
		x86asm.BT:         liftBitTest(0),
		x86asm.BTS:        liftBitTest(1),
		x86asm.BTR:        liftBitTest(2),
		x86asm.BTC:        liftBitTest(3),
		x86asm.BSF:        liftBitScan(false),
		x86asm.BSR:        liftBitScan(true),
		x86asm.TZCNT:      liftCount(gvinst.OpCtz),
		x86asm.LZCNT:      liftCount(gvinst.OpClz),
		x86asm.POPCNT:     liftCount(gvinst.OpPopc),
		x86asm.BSWAP:      liftBswap,
		x86asm.MOVBE:      liftMovbe,
		x86asm.XCHG:       liftXchg,
		x86asm.CMPXCHG:    liftCmpxchg,
		x86asm.XADD:       liftXadd,
		x86asm.CMPXCHG16B: liftCmpxchg16b,
		x86asm.CMPXCHG8B:  liftCmpxchg8b,
		x86asm.CRC32:      liftCrc32,
		x86asm.CBW:        liftSignExtendAcc(2),
		x86asm.CWDE:       liftSignExtendAcc(4),
		x86asm.CDQE:       liftSignExtendAcc(8),
		x86asm.CWD:        liftSignSplat(2),
		x86asm.CDQ:        liftSignSplat(4),
		x86asm.CQO:        liftSignSplat(8),
	}
	for op, c := range setccOps {
		t[op] = liftSetcc(c)
	}
	for op, c := range cmovOps {
		t[op] = liftCmov(c)
	}
	return t
}

var setccOps = map[x86asm.Op]gvinst.Cond{
	x86asm.SETO: gvinst.CondO, x86asm.SETNO: gvinst.CondNO, x86asm.SETB: gvinst.CondB, x86asm.SETAE: gvinst.CondAE,
	x86asm.SETE: gvinst.CondE, x86asm.SETNE: gvinst.CondNE, x86asm.SETBE: gvinst.CondBE, x86asm.SETA: gvinst.CondA,
	x86asm.SETS: gvinst.CondS, x86asm.SETNS: gvinst.CondNS, x86asm.SETP: gvinst.CondP, x86asm.SETNP: gvinst.CondNP,
	x86asm.SETL: gvinst.CondL, x86asm.SETGE: gvinst.CondGE, x86asm.SETLE: gvinst.CondLE, x86asm.SETG: gvinst.CondG,
}

var cmovOps = map[x86asm.Op]gvinst.Cond{
	x86asm.CMOVO: gvinst.CondO, x86asm.CMOVNO: gvinst.CondNO, x86asm.CMOVB: gvinst.CondB, x86asm.CMOVAE: gvinst.CondAE,
	x86asm.CMOVE: gvinst.CondE, x86asm.CMOVNE: gvinst.CondNE, x86asm.CMOVBE: gvinst.CondBE, x86asm.CMOVA: gvinst.CondA,
	x86asm.CMOVS: gvinst.CondS, x86asm.CMOVNS: gvinst.CondNS, x86asm.CMOVP: gvinst.CondP, x86asm.CMOVNP: gvinst.CondNP,
	x86asm.CMOVL: gvinst.CondL, x86asm.CMOVGE: gvinst.CondGE, x86asm.CMOVLE: gvinst.CondLE, x86asm.CMOVG: gvinst.CondG,
}

func liftMov(b *builder) error {
	args := b.d.Inst.Args
	if _, ok := args[0].(x86asm.Reg); ok {
		if _, ok := gprOf(args[0].(x86asm.Reg)); !ok {
			return unsupported("mov to %v", args[0])
		}
	}
	if r, ok := args[1].(x86asm.Reg); ok {
		if _, ok := gprOf(r); !ok {
			return unsupported("mov from %v", r)
		}
	}
	dst, src, err := b.operands2()
	if err != nil {
		return err
	}
	b.write(dst, b.read(src))
	return nil
}

func liftMovExt(signed bool) liftFunc {
	return func(b *builder) error {
		args := b.d.Inst.Args
		dr, ok := args[0].(x86asm.Reg)
		if !ok {
			return unsupported("movzx/movsx destination")
		}
		dg, ok := gprOf(dr)
		if !ok {
			return unsupported("destination %v", dr)
		}
		ssize := b.opSize(args[1])
		src, err := b.resolve(args[1], ssize)
		if err != nil {
			return err
		}
		v := b.read(src)
		if src.size < dg.size {
			if signed {
				v = b.cvt(gvinst.RoundNearest, sintType(dg.size), sintType(src.size), v)
			} else {
				v = b.zext(v, src.size*8)
			}
		}
		b.writeGPR(dg, v)
		return nil
	}
}

func liftLea(b *builder) error {
	args := b.d.Inst.Args
	dr, _ := args[0].(x86asm.Reg)
	dg, ok := gprOf(dr)
	m, ok2 := args[1].(x86asm.Mem)
	if !ok || !ok2 {
		return unsupported("lea operands")
	}
	ref, err := b.addrOf(m, true)
	if err != nil {
		return err
	}
	b.writeGPR(dg, b.effAddr(ref))
	return nil
}

// liftArith lifts add, sub, cmp, and, or, xor and test.
func liftArith(op gvinst.Op, k gvinst.FlagKind, store bool) liftFunc {
	return func(b *builder) error {
		dst, src, err := b.operands2()
		if err != nil {
			return err
		}
		t := uintType(dst.size)
		// xor r, r and sub r, r give zero whatever r holds.
		if store && (op == gvinst.OpXor || op == gvinst.OpSub) && dst.kind == locReg && src.kind == locReg && dst.reg == src.reg {
			zero := b.li(t, 0)
			b.flags(k, t, zero, zero, zero, zero)
			b.write(dst, zero)
			return nil
		}
		x := b.read(dst)
		var y, r gvinst.Reg
		if src.kind == locImm {
			r = b.opi(op, t, x, src.imm)
			y = b.li(t, src.imm)
		} else {
			y = b.read(src)
			r = b.op(op, t, x, y)
		}
		b.flags(k, t, x, y, r, x)
		if store {
			b.write(dst, r)
		}
		return nil
	}
}

// liftCarry lifts adc and sbb.
func liftCarry(op gvinst.Op, k gvinst.FlagKind) liftFunc {
	return func(b *builder) error {
		dst, src, err := b.operands2()
		if err != nil {
			return err
		}
		t := uintType(dst.size)
		x := b.read(dst)
		y := b.read(src)
		c := b.getcc(gvinst.CondB)
		r := b.op(op, t, b.op(op, t, x, y), c)
		b.flags(k, t, x, y, r, c)
		b.write(dst, r)
		return nil
	}
}

// unary resolves the one operand of not, neg, inc, dec, mul, div, ….
func (b *builder) unary() (loc, error) {
	a := b.d.Inst.Args[0]
	if a == nil {
		return loc{}, unsupported("missing operand")
	}
	l, err := b.resolve(a, b.opSize(a))
	if err == nil && l.kind == locImm {
		return loc{}, unsupported("immediate operand")
	}
	return l, err
}

func liftNot(b *builder) error {
	l, err := b.unary()
	if err != nil {
		return err
	}
	b.write(l, b.un(gvinst.OpNot, uintType(l.size), b.read(l)))
	return nil
}

func liftNeg(b *builder) error {
	l, err := b.unary()
	if err != nil {
		return err
	}
	t := uintType(l.size)
	x := b.read(l)
	r := b.un(gvinst.OpNeg, t, x)
	b.flags(gvinst.FlagsNeg, t, x, x, r, x)
	b.write(l, r)
	return nil
}

func liftIncDec(op gvinst.Op, k gvinst.FlagKind) liftFunc {
	return func(b *builder) error {
		l, err := b.unary()
		if err != nil {
			return err
		}
		t := uintType(l.size)
		x := b.read(l)
		r := b.opi(op, t, x, 1)
		b.flags(k, t, x, b.li(t, 1), r, x)
		b.write(l, r)
		return nil
	}
}

// sizedGPR returns the size-byte view of the register in slot (al, ax,
// eax or rax for s0).
func sizedGPR(slot gvinst.Reg, size int) gpr { return gpr{slot: slot, size: size} }

// liftMul1 lifts the one-operand mul and imul: rdx:rax = rax * src.
func liftMul1(signed bool) liftFunc {
	return func(b *builder) error {
		l, err := b.unary()
		if err != nil {
			return err
		}
		t := uintType(l.size)
		if signed {
			t = sintType(l.size)
		}
		src := b.read(l)
		a := b.readGPR(sizedGPR(gvinst.S0, l.size))
		lo := b.op(gvinst.OpMul, t, a, src)
		hi := b.op(gvinst.OpMulHi, t, a, src)
		b.flags(gvinst.FlagsMul, t, hi, src, lo, hi)
		if l.size == 1 {
			ax := b.op(gvinst.OpOr, gvinst.U64, b.opi(gvinst.OpShl, gvinst.U64, b.zext(hi, 8), 8), b.zext(lo, 8))
			b.writeGPR(sizedGPR(gvinst.S0, 2), ax)
			return nil
		}
		b.writeGPR(sizedGPR(gvinst.S0, l.size), lo)
		b.writeGPR(sizedGPR(gvinst.S2, l.size), hi)
		return nil
	}
}

func liftImul(b *builder) error {
	args := b.d.Inst.Args
	if args[1] == nil {
		return liftMul1(true)(b)
	}
	dr, ok := args[0].(x86asm.Reg)
	if !ok {
		return unsupported("imul destination")
	}
	dg, ok := gprOf(dr)
	if !ok {
		return unsupported("imul destination %v", dr)
	}
	t := sintType(dg.size)
	var x, y gvinst.Reg
	if args[2] != nil {
		src, err := b.resolve(args[1], dg.size)
		if err != nil {
			return err
		}
		imm, ok := args[2].(x86asm.Imm)
		if !ok {
			return unsupported("imul third operand")
		}
		x = b.read(src)
		y = b.li(t, int64(imm))
	} else {
		src, err := b.resolve(args[1], dg.size)
		if err != nil {
			return err
		}
		x = b.readGPR(dg)
		y = b.read(src)
	}
	lo := b.op(gvinst.OpMul, t, x, y)
	hi := b.op(gvinst.OpMulHi, t, x, y)
	b.flags(gvinst.FlagsMul, t, hi, y, lo, hi)
	b.writeGPR(dg, lo)
	return nil
}

// liftDiv lifts div and idiv: rax = rdx:rax / src, rdx = the remainder
// (ax / src into al and ah for bytes).
func liftDiv(signed bool) liftFunc {
	return func(b *builder) error {
		l, err := b.unary()
		if err != nil {
			return err
		}
		t := uintType(l.size)
		if signed {
			t = sintType(l.size)
		}
		src := b.read(l)
		var hi, lo gvinst.Reg
		if l.size == 1 {
			ax := b.get(gvinst.S0)
			lo = ax
			hi = b.opi(gvinst.OpShr, gvinst.U64, ax, 8)
		} else {
			lo = b.readGPR(sizedGPR(gvinst.S0, l.size))
			hi = b.readGPR(sizedGPR(gvinst.S2, l.size))
		}
		in := gvinst.Inst{Op: gvinst.OpDivW, Type: t, Dst: b.newV(1)}
		in.Src[0], in.Src[1], in.Src[2] = hi, lo, src
		b.emit(in)
		q := in.Dst
		in.Op, in.Dst = gvinst.OpRemW, b.newV(1)
		b.emit(in)
		r := in.Dst
		b.width[q], b.width[r] = t.Bits(), t.Bits()
		if l.size == 1 {
			ax := b.op(gvinst.OpOr, gvinst.U64, b.opi(gvinst.OpShl, gvinst.U64, b.zext(r, 8), 8), b.zext(q, 8))
			b.writeGPR(sizedGPR(gvinst.S0, 2), ax)
			return nil
		}
		b.writeGPR(sizedGPR(gvinst.S0, l.size), q)
		b.writeGPR(sizedGPR(gvinst.S2, l.size), r)
		return nil
	}
}

// shiftCount returns the count operand of a shift: its immediate value
// (masked as x86 does) with isImm, or a register holding the masked count.
func (b *builder) shiftCount(a x86asm.Arg, size int) (imm int64, reg gvinst.Reg, isImm bool, err error) {
	mask := int64(31)
	if size == 8 {
		mask = 63
	}
	switch a := a.(type) {
	case nil:
		return 1, 0, true, nil
	case x86asm.Imm:
		return int64(a) & mask, 0, true, nil
	case x86asm.Reg:
		if a != x86asm.CL {
			return 0, 0, false, unsupported("shift count %v", a)
		}
		return 0, b.opi(gvinst.OpAnd, gvinst.U64, b.get(gvinst.S1), mask), false, nil
	}
	return 0, 0, false, unsupported("shift count %v", a)
}

// liftShift lifts shl, shr, sar, rol and ror.
func liftShift(op gvinst.Op, k gvinst.FlagKind) liftFunc {
	return func(b *builder) error {
		l, err := b.unary()
		if err != nil {
			return err
		}
		t := uintType(l.size)
		if op == gvinst.OpSar {
			t = sintType(l.size)
		}
		imm, cnt, isImm, err := b.shiftCount(b.d.Inst.Args[1], l.size)
		if err != nil {
			return err
		}
		x := b.read(l)
		if isImm {
			if imm == 0 {
				// No flags change; a 32-bit register is still written.
				if l.kind == locReg {
					b.write(l, x)
				}
				return nil
			}
			cnt = b.li(gvinst.U8, imm)
		}
		r := b.op(op, t, x, cnt)
		b.flags(k, t, x, cnt, r, x)
		b.write(l, r)
		return nil
	}
}

// liftRotCarry lifts rcl and rcr: a rotation through CF over bits+1 bits,
// by an immediate count or by cl, computing CF and OF directly.
func liftRotCarry(left bool) liftFunc {
	return func(b *builder) error {
		l, err := b.unary()
		if err != nil {
			return err
		}
		t := uintType(l.size)
		bits := int64(l.size * 8)
		imm, cnt, isImm, err := b.shiftCount(b.d.Inst.Args[1], l.size)
		if err != nil {
			return err
		}
		x := b.read(l)
		var cond gvinst.Reg // non-zero when the count is not 0 (register counts)
		if isImm {
			if bits < 32 {
				imm %= bits + 1
			}
			if imm == 0 {
				if l.kind == locReg {
					b.write(l, x)
				}
				return nil
			}
			cnt = b.li(gvinst.U64, imm)
		} else {
			if bits < 32 {
				cnt = b.opi(gvinst.OpRem, gvinst.U64, cnt, bits+1)
			}
			cond = b.cmpi(gvinst.CmpNe, gvinst.U64, cnt, 0)
		}
		// For a count n of 1..bits, with shifts of bits or more giving 0:
		// rcl: r = x<<n | cf<<(n-1) | x>>(bits+1-n), CF = bit bits-n of x;
		// rcr: r = x>>n | cf<<(bits-n) | x<<(bits+1-n), CF = bit n-1 of x.
		cf := b.getcc(gvinst.CondB)
		nm1 := b.opi(gvinst.OpSub, gvinst.U64, cnt, 1)
		inv1 := b.op(gvinst.OpSub, gvinst.U64, b.li(gvinst.U64, bits+1), cnt)
		inv := b.op(gvinst.OpSub, gvinst.U64, b.li(gvinst.U64, bits), cnt)
		var r, ncf gvinst.Reg
		if left {
			r = b.op(gvinst.OpShl, t, x, cnt)
			r = b.op(gvinst.OpOr, t, r, b.op(gvinst.OpShl, t, cf, nm1))
			r = b.op(gvinst.OpOr, t, r, b.op(gvinst.OpShr, t, x, inv1))
			ncf = b.opi(gvinst.OpAnd, gvinst.U64, b.op(gvinst.OpShr, t, x, inv), 1)
		} else {
			r = b.op(gvinst.OpShr, t, x, cnt)
			r = b.op(gvinst.OpOr, t, r, b.op(gvinst.OpShl, t, cf, inv))
			r = b.op(gvinst.OpOr, t, r, b.op(gvinst.OpShl, t, x, inv1))
			ncf = b.opi(gvinst.OpAnd, gvinst.U64, b.op(gvinst.OpShr, t, x, nm1), 1)
		}
		// OF: rcl: MSB(result) xor CF(after); rcr: MSB(x) xor CF(before).
		var of gvinst.Reg
		if left {
			of = b.op(gvinst.OpXor, gvinst.U64, b.opi(gvinst.OpShr, t, r, bits-1), ncf)
		} else {
			of = b.op(gvinst.OpXor, gvinst.U64, b.opi(gvinst.OpShr, t, x, bits-1), cf)
		}
		of = b.opi(gvinst.OpAnd, gvinst.U64, of, 1)
		nbits := b.op(gvinst.OpOr, gvinst.U64, ncf, b.bitAt(of, 11))
		old := b.getflags()
		nf := b.op(gvinst.OpOr, gvinst.B64, b.opi(gvinst.OpAnd, gvinst.B64, old, ^int64(flagCF|flagOF)), nbits)
		if cond != 0 {
			nf = b.sel(gvinst.U64, cond, nf, old)
		}
		b.setflags(nf)
		b.write(l, r)
		return nil
	}
}

// flagsFromResult sets ZF, SF and PF from r (of type t), CF and OF from cf
// and of (0/1 values), and AF to 0; the other bits of RFLAGS are kept.
// If cond is not 0, the flags change only when cond is non-zero.
func (b *builder) flagsFromResult(t gvinst.Type, r, cf, of, cond gvinst.Reg) {
	old := b.getflags()
	b.flags(gvinst.FlagsLogic, t, r, r, r, r)
	nf := b.getflags()
	if cf != 0 {
		nf = b.op(gvinst.OpOr, gvinst.B64, nf, cf)
	}
	if of != 0 {
		nf = b.op(gvinst.OpOr, gvinst.B64, nf, b.bitAt(of, 11))
	}
	if cond != 0 {
		nf = b.sel(gvinst.U64, cond, nf, old)
	}
	b.setflags(nf)
}

// liftShiftDouble lifts shld and shrd.
func liftShiftDouble(left bool) liftFunc {
	return func(b *builder) error {
		args := b.d.Inst.Args
		l, err := b.unary()
		if err != nil {
			return err
		}
		sr, ok := args[1].(x86asm.Reg)
		if !ok {
			return unsupported("shld/shrd source")
		}
		sg, ok := gprOf(sr)
		if !ok {
			return unsupported("shld/shrd source %v", sr)
		}
		t := uintType(l.size)
		bits := int64(l.size * 8)
		imm, cnt, isImm, err := b.shiftCount(args[2], l.size)
		if err != nil {
			return err
		}
		x := b.read(l)
		s := b.readGPR(sg)
		if isImm {
			if imm == 0 {
				if l.kind == locReg {
					b.write(l, x)
				}
				return nil
			}
			cnt = b.li(gvinst.U8, imm)
		}
		if l.size == 2 {
			b.shiftDouble16(l, left, x, s, cnt, isImm)
			return nil
		}
		inv := b.op(gvinst.OpSub, gvinst.U64, b.li(gvinst.U64, bits), cnt)
		var r gvinst.Reg
		if left {
			r = b.op(gvinst.OpOr, t, b.op(gvinst.OpShl, t, x, cnt), b.op(gvinst.OpShr, t, s, inv))
			// CF is bit bits-cnt of x and OF sign(r) xor CF, as for shl.
			b.flags(gvinst.FlagsShl, t, x, cnt, r, x)
		} else {
			r = b.op(gvinst.OpOr, t, b.op(gvinst.OpShr, t, x, cnt), b.op(gvinst.OpShl, t, s, inv))
			cm1 := b.opi(gvinst.OpSub, gvinst.U64, cnt, 1)
			cf := b.opi(gvinst.OpAnd, gvinst.U64, b.op(gvinst.OpShr, t, x, cm1), 1)
			of := b.opi(gvinst.OpAnd, gvinst.U64, b.opi(gvinst.OpShr, t, b.op(gvinst.OpXor, t, x, r), bits-1), 1)
			var cond gvinst.Reg
			if !isImm {
				cond = b.cmpi(gvinst.CmpNe, gvinst.U64, cnt, 0)
			}
			b.flagsFromResult(t, r, cf, of, cond)
		}
		b.write(l, r)
		return nil
	}
}

// shiftDouble16 lifts 16-bit shld and shrd. Counts of 17 to 31 are
// undefined by the SDM; Intel processors shift the 48-bit value d:s:d,
// and so does this.
func (b *builder) shiftDouble16(l loc, left bool, x, s, cnt gvinst.Reg, isImm bool) {
	d16 := b.zext(x, 16)
	wide := b.op(gvinst.OpOr, gvinst.U64, d16, b.opi(gvinst.OpShl, gvinst.U64, b.zext(s, 16), 16))
	wide = b.op(gvinst.OpOr, gvinst.U64, wide, b.opi(gvinst.OpShl, gvinst.U64, d16, 32))
	var r, cf gvinst.Reg
	if left {
		r = b.opi(gvinst.OpShr, gvinst.U64, b.op(gvinst.OpShl, gvinst.U64, wide, cnt), 32)
		out := b.op(gvinst.OpSub, gvinst.U64, b.li(gvinst.U64, 48), cnt)
		cf = b.opi(gvinst.OpAnd, gvinst.U64, b.op(gvinst.OpShr, gvinst.U64, wide, out), 1)
	} else {
		r = b.op(gvinst.OpShr, gvinst.U64, wide, cnt)
		cm1 := b.opi(gvinst.OpSub, gvinst.U64, cnt, 1)
		cf = b.opi(gvinst.OpAnd, gvinst.U64, b.op(gvinst.OpShr, gvinst.U64, wide, cm1), 1)
	}
	of := b.opi(gvinst.OpAnd, gvinst.U64, b.opi(gvinst.OpShr, gvinst.U16, b.op(gvinst.OpXor, gvinst.U16, x, r), 15), 1)
	var cond gvinst.Reg
	if !isImm {
		cond = b.cmpi(gvinst.CmpNe, gvinst.U64, cnt, 0)
	}
	b.flagsFromResult(gvinst.U16, r, cf, of, cond)
	b.write(l, r)
}

// liftBitTest lifts bt (kind 0), bts (1), btr (2) and btc (3).
func liftBitTest(kind int) liftFunc {
	return func(b *builder) error {
		args := b.d.Inst.Args
		size := b.opSize(args[0])
		if size == 1 {
			return unsupported("8-bit bt")
		}
		t := uintType(size)
		bits := int64(size * 8)
		var l loc
		var idx gvinst.Reg
		switch a1 := args[1].(type) {
		case x86asm.Imm:
			var err error
			if l, err = b.resolve(args[0], size); err != nil {
				return err
			}
			idx = b.li(gvinst.U64, int64(a1)&(bits-1))
		case x86asm.Reg:
			g, ok := gprOf(a1)
			if !ok {
				return unsupported("bit offset %v", a1)
			}
			off := b.readGPR(g)
			if m, ok := args[0].(x86asm.Mem); ok {
				// The bit offset is signed and may reach beyond the operand.
				ref, err := b.addrOf(m, false)
				if err != nil {
					return err
				}
				so := b.sext(off, g.size*8)
				shift := int64(3)
				switch size {
				case 2:
					shift = 4
				case 4:
					shift = 5
				case 8:
					shift = 6
				}
				words := b.opi(gvinst.OpSar, gvinst.S64, so, shift)
				byteOff := b.opi(gvinst.OpShl, gvinst.U64, words, shift-3)
				base := b.op(gvinst.OpAdd, gvinst.U64, b.effAddr(ref), byteOff)
				l = loc{kind: locMem, mem: memRef{base, 0}, size: size}
			} else {
				var err error
				if l, err = b.resolve(args[0], size); err != nil {
					return err
				}
			}
			idx = b.opi(gvinst.OpAnd, gvinst.U64, off, bits-1)
		default:
			return unsupported("bit offset %v", args[1])
		}
		x := b.read(l)
		bit := b.opi(gvinst.OpAnd, gvinst.U64, b.op(gvinst.OpShr, t, x, idx), 1)
		b.width[bit] = 1
		b.setFlagBits(flagCF, bit)
		if kind == 0 {
			return nil
		}
		m := b.op(gvinst.OpShl, t, b.li(t, 1), idx)
		var r gvinst.Reg
		switch kind {
		case 1:
			r = b.op(gvinst.OpOr, t, x, m)
		case 2:
			r = b.op(gvinst.OpAnd, t, x, b.un(gvinst.OpNot, t, m))
		default:
			r = b.op(gvinst.OpXor, t, x, m)
		}
		b.write(l, r)
		return nil
	}
}

// srcDst resolves a register destination and a register-or-memory source
// of the same size (bsf, popcnt, cmov, …).
func (b *builder) srcDst() (gpr, loc, error) {
	args := b.d.Inst.Args
	dr, ok := args[0].(x86asm.Reg)
	if !ok {
		return gpr{}, loc{}, unsupported("destination %v", args[0])
	}
	dg, ok := gprOf(dr)
	if !ok {
		return gpr{}, loc{}, unsupported("destination %v", dr)
	}
	src, err := b.resolve(args[1], dg.size)
	if err != nil {
		return gpr{}, loc{}, err
	}
	return dg, src, nil
}

// liftBitScan lifts bsf and bsr: ZF = (src == 0); the destination is left
// unchanged for a zero source.
func liftBitScan(reverse bool) liftFunc {
	return func(b *builder) error {
		dg, src, err := b.srcDst()
		if err != nil {
			return err
		}
		t := uintType(dg.size)
		x := b.read(src)
		var idx gvinst.Reg
		if reverse {
			idx = b.op(gvinst.OpSub, t, b.li(t, int64(dg.size*8-1)), b.un(gvinst.OpClz, t, x))
		} else {
			idx = b.un(gvinst.OpCtz, t, x)
		}
		zero := b.cmpi(gvinst.CmpEq, t, x, 0)
		old := b.get(dg.slot)
		nv := b.sel(gvinst.U64, zero, old, b.mergeGPR(dg, idx))
		b.put(dg.slot, nv)
		b.setFlagBits(flagZF, b.bitAt(zero, 6))
		return nil
	}
}

// liftCount lifts tzcnt, lzcnt (CF = src is zero, ZF = result is zero)
// and popcnt (ZF = src is zero, the other status flags clear).
func liftCount(op gvinst.Op) liftFunc {
	return func(b *builder) error {
		dg, src, err := b.srcDst()
		if err != nil {
			return err
		}
		t := uintType(dg.size)
		x := b.read(src)
		r := b.un(op, t, x)
		srcZero := b.cmpi(gvinst.CmpEq, t, x, 0)
		if op == gvinst.OpPopc {
			b.setFlagBits(statusFlags, b.bitAt(srcZero, 6))
		} else {
			resZero := b.cmpi(gvinst.CmpEq, t, r, 0)
			b.setFlagBits(flagCF|flagZF, b.op(gvinst.OpOr, gvinst.U64, srcZero, b.bitAt(resZero, 6)))
		}
		b.writeGPR(dg, r)
		return nil
	}
}

func liftBswap(b *builder) error {
	l, err := b.unary()
	if err != nil {
		return err
	}
	if l.size == 2 {
		// bswap of a 16-bit register is undefined; real processors clear it.
		return unsupported("16-bit bswap")
	}
	b.write(l, b.un(gvinst.OpBswap, uintType(l.size), b.read(l)))
	return nil
}

func liftMovbe(b *builder) error {
	dst, src, err := b.operands2()
	if err != nil {
		return err
	}
	if dst.size == 1 {
		return unsupported("8-bit movbe")
	}
	b.write(dst, b.un(gvinst.OpBswap, uintType(dst.size), b.read(src)))
	return nil
}

func liftXchg(b *builder) error {
	dst, src, err := b.operands2()
	if err != nil {
		return err
	}
	x := b.read(dst)
	y := b.read(src)
	if dst.kind == locReg && src.kind == locReg && dst.reg == src.reg {
		b.write(dst, x)
		return nil
	}
	b.write(dst, y)
	b.write(src, x)
	return nil
}

// liftCmpxchg lifts cmpxchg: flags as cmp acc, dst; if equal dst = src,
// else acc = dst.
func liftCmpxchg(b *builder) error {
	dst, src, err := b.operands2()
	if err != nil {
		return err
	}
	t := uintType(dst.size)
	acc := sizedGPR(gvinst.S0, dst.size)
	a := b.readGPR(acc)
	old := b.read(dst)
	y := b.read(src)
	b.flags(gvinst.FlagsSub, t, a, old, b.op(gvinst.OpSub, t, a, old), a)
	eq := b.cmp(gvinst.CmpEq, t, a, old)
	if dst.kind == locMem {
		b.write(dst, b.sel(gvinst.U64, eq, y, old))
	} else {
		full := b.get(dst.reg.slot)
		b.put(dst.reg.slot, b.sel(gvinst.U64, eq, b.mergeGPR(dst.reg, y), full))
	}
	fullAcc := b.get(gvinst.S0)
	b.put(gvinst.S0, b.sel(gvinst.U64, eq, fullAcc, b.mergeGPR(acc, old)))
	return nil
}

func liftXadd(b *builder) error {
	dst, src, err := b.operands2()
	if err != nil {
		return err
	}
	t := uintType(dst.size)
	x := b.read(dst)
	y := b.read(src)
	r := b.op(gvinst.OpAdd, t, x, y)
	b.flags(gvinst.FlagsAdd, t, x, y, r, x)
	b.write(src, x)
	b.write(dst, r)
	return nil
}

func liftCmpxchg16b(b *builder) error {
	m, ok := b.d.Inst.Args[0].(x86asm.Mem)
	if !ok {
		return unsupported("cmpxchg16b operand")
	}
	ref, err := b.addrOf(m, false)
	if err != nil {
		return err
	}
	lo := b.ld(gvinst.U64, ref)
	hi := b.ld(gvinst.U64, ref.at(8))
	rax, rdx := b.get(gvinst.S0), b.get(gvinst.S2)
	eq := b.op(gvinst.OpAnd, gvinst.U64, b.cmp(gvinst.CmpEq, gvinst.U64, lo, rax), b.cmp(gvinst.CmpEq, gvinst.U64, hi, rdx))
	b.width[eq] = 1
	rbx, rcx := b.get(gvinst.S3), b.get(gvinst.S1)
	b.st(gvinst.U64, ref, b.sel(gvinst.U64, eq, rbx, lo))
	b.st(gvinst.U64, ref.at(8), b.sel(gvinst.U64, eq, rcx, hi))
	b.put(gvinst.S0, b.sel(gvinst.U64, eq, rax, lo))
	b.put(gvinst.S2, b.sel(gvinst.U64, eq, rdx, hi))
	b.setFlagBits(flagZF, b.bitAt(eq, 6))
	return nil
}

// liftSignExtendAcc lifts cbw, cwde and cdqe: the accumulator's low half
// sign-extended to size bytes.
func liftSignExtendAcc(size int) liftFunc {
	return func(b *builder) error {
		v := b.readGPR(sizedGPR(gvinst.S0, size/2))
		b.writeGPR(sizedGPR(gvinst.S0, size), b.cvt(gvinst.RoundNearest, sintType(size), sintType(size/2), v))
		return nil
	}
}

// liftSignSplat lifts cwd, cdq and cqo: rdx = the sign of rax, in size
// bytes.
func liftSignSplat(size int) liftFunc {
	return func(b *builder) error {
		t := sintType(size)
		v := b.readGPR(sizedGPR(gvinst.S0, size))
		b.writeGPR(sizedGPR(gvinst.S2, size), b.opi(gvinst.OpSar, t, v, int64(size*8-1)))
		return nil
	}
}

func liftSetcc(c gvinst.Cond) liftFunc {
	return func(b *builder) error {
		l, err := b.unary()
		if err != nil {
			return err
		}
		b.write(l, b.getcc(c))
		return nil
	}
}

// liftCmov lifts cmovcc; the source is read (and may fault) and a 32-bit
// destination is zero-extended whether or not the condition holds.
func liftCmov(c gvinst.Cond) liftFunc {
	return func(b *builder) error {
		dg, src, err := b.srcDst()
		if err != nil {
			return err
		}
		y := b.read(src)
		x := b.readGPR(dg)
		cond := b.getcc(c)
		b.writeGPR(dg, b.sel(gvinst.U64, cond, y, x))
		return nil
	}
}

// liftCmpxchg8b lifts cmpxchg8b: compare edx:eax with m64; if equal, ZF = 1
// and m64 = ecx:ebx, else ZF = 0 and edx:eax = m64 (zero-extended).
func liftCmpxchg8b(b *builder) error {
	m, ok := b.d.Inst.Args[0].(x86asm.Mem)
	if !ok {
		return unsupported("cmpxchg8b operand")
	}
	ref, err := b.addrOf(m, false)
	if err != nil {
		return err
	}
	old := b.ld(gvinst.U64, ref)
	rax, rdx := b.get(gvinst.S0), b.get(gvinst.S2)
	want := b.op(gvinst.OpOr, gvinst.U64, b.opi(gvinst.OpShl, gvinst.U64, rdx, 32), b.zext(rax, 32))
	eq := b.cmp(gvinst.CmpEq, gvinst.U64, old, want)
	repl := b.op(gvinst.OpOr, gvinst.U64, b.opi(gvinst.OpShl, gvinst.U64, b.get(gvinst.S1), 32), b.zext(b.get(gvinst.S3), 32))
	b.st(gvinst.U64, ref, b.sel(gvinst.U64, eq, repl, old))
	b.put(gvinst.S0, b.sel(gvinst.U64, eq, rax, b.zext(old, 32)))
	b.put(gvinst.S2, b.sel(gvinst.U64, eq, rdx, b.opi(gvinst.OpShr, gvinst.U64, old, 32)))
	b.setFlagBits(flagZF, b.bitAt(eq, 6))
	return nil
}

// crc32cPoly is the bit-reflected CRC-32C (Castagnoli) polynomial the SSE4.2
// crc32 instruction uses.
const crc32cPoly = 0x82f63b78

// liftCrc32 lifts crc32: the destination's low 32 bits are the CRC-32C
// state, updated with the source's bytes (low first), bit by bit as the
// reflected shift-right algorithm does; a 64-bit destination is
// zero-extended.
func liftCrc32(b *builder) error {
	args := b.d.Inst.Args
	dr, ok := args[0].(x86asm.Reg)
	if !ok {
		return unsupported("crc32 destination")
	}
	dg, ok := gprOf(dr)
	if !ok || dg.size < 4 {
		return unsupported("crc32 destination %v", dr)
	}
	size := b.opSize(args[1])
	src, err := b.resolve(args[1], size)
	if err != nil {
		return err
	}
	data := b.read(src)
	crc := b.readGPR(dg)
	poly := b.li(gvinst.U32, crc32cPoly)
	for chunk := 0; chunk < size; chunk += 4 {
		n := min(size-chunk, 4)
		part := data
		if chunk > 0 {
			part = b.opi(gvinst.OpShr, gvinst.U64, data, int64(chunk*8))
		}
		crc = b.op(gvinst.OpXor, gvinst.U32, crc, b.zext(part, n*8))
		for i := 0; i < n*8; i++ {
			mask := b.un(gvinst.OpNeg, gvinst.U32, b.opi(gvinst.OpAnd, gvinst.U32, crc, 1))
			crc = b.op(gvinst.OpXor, gvinst.U32, b.opi(gvinst.OpShr, gvinst.U32, crc, 1), b.op(gvinst.OpAnd, gvinst.U32, mask, poly))
		}
	}
	b.writeGPR(gpr{slot: dg.slot, size: 8}, b.zext(crc, 32))
	return nil
}
