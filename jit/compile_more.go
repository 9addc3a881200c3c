package jit

import "github.com/gxbit/gxbit/gvinst"

// nativeMore emits the instructions the files beside compile.go compile:
// the flags (compile_flags.go), the wide multiplications and divisions
// (compile_muldiv.go), the alignment check, and the packed SSE operations
// (compile_sse.go). It reports false for an instruction that stays a
// callout.
func (c *compiler) nativeMore(idx int, in *gvinst.Inst) bool {
	switch in.Op {
	case gvinst.OpGetCC, gvinst.OpGetFlags, gvinst.OpSetFlags, gvinst.OpFlags:
		return c.flagsOps(idx, in)
	case gvinst.OpCmp:
		return c.floatCmp(idx, in)
	case gvinst.OpChkAlign:
		return c.chkAlign(idx, in)
	case gvinst.OpMulHi, gvinst.OpDiv, gvinst.OpRem, gvinst.OpDivW, gvinst.OpRemW, gvinst.OpClz, gvinst.OpCtz, gvinst.OpPopc:
		return c.mulDiv(idx, in)
	}
	return c.vecOp(idx, in)
}

// chkAlign emits CHKALIGN: an address that is not a multiple of the
// type's size takes the callout, where the interpreter stops the guest
// with its misaligned-access trap.
func (c *compiler) chkAlign(idx int, in *gvinst.Inst) bool {
	a := &c.a
	sz := in.Type.Size()
	if sz == 0 || sz&(sz-1) != 0 {
		return false
	}
	if sz == 1 {
		return true
	}
	c.srcTo(rax, in.Src[0])
	if in.Imm != 0 {
		a.movImm(rcx, uint64(in.Imm))
		a.encode(mnAddMR, 8, rcx, regOp(rax), 0)
	}
	pre := c.cache
	a.encodeForm(&fmTestMI, 4, 0, regOp(rax), int64(sz-1))
	j := a.jcc(ccNE)
	c.out.resume[idx] = a.pos()
	c.slowJump(idx, &pre, j)
	return true
}

// floatCmp emits a float CMP as the host's ucomiss/ucomisd (comiss/comisd
// for the conditions that raise IE on a quiet NaN), whose IE and DE
// follow sseCmp: IE for a NaN as the condition says, DE for a denormal
// operand of an ordered comparison unless DAZ, which the host's MXCSR
// (the guest's) applies. As float() does, it first checks that the guest
// masks every exception; otherwise the instruction is a callout.
func (c *compiler) floatCmp(idx int, in *gvinst.Inst) bool {
	a := &c.a
	t := in.Type
	if in.HasImm || (t != gvinst.F32 && t != gvinst.F64) {
		return false
	}
	x, y := in.Src[0], in.Src[1]
	var cc, cc2 cond // the result is cc, and also cc2 (combined by and2/or2)
	both, either := false, false
	swap := false
	switch gvinst.Cmp(in.Mod) {
	case gvinst.CmpEq:
		cc, cc2, both = ccE, ccNP, true
	case gvinst.CmpNe:
		cc, cc2, both = ccNE, ccNP, true
	case gvinst.CmpLt:
		cc, swap = ccA, true
	case gvinst.CmpLe:
		cc, swap = ccAE, true
	case gvinst.CmpGt:
		cc = ccA
	case gvinst.CmpGe:
		cc = ccAE
	case gvinst.CmpEqu:
		cc = ccE
	case gvinst.CmpNeu:
		cc, cc2, either = ccNE, ccP, true
	case gvinst.CmpLtu:
		cc = ccB
	case gvinst.CmpLeu:
		cc = ccBE
	case gvinst.CmpGtu:
		cc, swap = ccB, true
	case gvinst.CmpGeu:
		cc, swap = ccBE, true
	case gvinst.CmpNum:
		cc = ccNP
	case gvinst.CmpNan:
		cc = ccP
	default:
		return false
	}
	if swap {
		x, y = y, x
	}
	f := &fmUcomisd
	if cmpSignalsQuietNaN(gvinst.Cmp(in.Mod)) {
		f = &fmComisd
	}
	if t == gvinst.F32 {
		f = &fmUcomiss
		if cmpSignalsQuietNaN(gvinst.Cmp(in.Mod)) {
			f = &fmComiss
		}
	}
	pre := c.cache
	j := c.checkMasked()
	c.loadF(0, x, t == gvinst.F64)
	a.encodeForm(f, 4, 0, c.floatOperand(1, y, t == gvinst.F64), 0)
	a.setcc(cc, rax)
	if both || either {
		a.setcc(cc2, rcx)
		if both {
			a.encode(mnAndMR, 4, rcx, regOp(rax), 0)
		} else {
			a.encode(mnOrMR, 4, rcx, regOp(rax), 0)
		}
	}
	c.put(in.Dst, rax)
	c.out.resume[idx] = a.pos()
	c.slowJump(idx, &pre, j)
	return true
}

// cmpSignalsQuietNaN reports whether float comparison k raises IE on a
// quiet NaN (gvinst's cmpSignals: SSE's LT LE NLT NLE and their mirrors).
func cmpSignalsQuietNaN(k gvinst.Cmp) bool {
	switch k {
	case gvinst.CmpLt, gvinst.CmpLe, gvinst.CmpGt, gvinst.CmpGe, gvinst.CmpGtu, gvinst.CmpGeu:
		return true
	}
	return false
}

// checkMasked emits the check float() makes first: the guest masks
// every exception (machine.mxTrap is 0). It returns the jump taken when it
// does not.
func (c *compiler) checkMasked() int {
	c.a.encode(mnCmpMI8, 4, 0, memOp(fieldMem(offMXTrap)), 0)
	return c.a.jcc(ccNE)
}
