package jit

import (
	"slices"
	"unsafe"

	"github.com/gxbit/gxbit/gvinst"
)

// nativeMore emits the instructions the files beside compile.go compile:
// the flags (compile_flags.go), the wide multiplications and divisions
// (compile_muldiv.go), the alignment check, the counters of COUNT, and
// the packed SSE operations (compile_sse.go). It reports false for an
// instruction that stays a callout.
func (c *compiler) nativeMore(idx int, in *gvinst.Inst) bool {
	switch in.Op {
	case gvinst.OpGetCC, gvinst.OpGetFlags, gvinst.OpSetFlags, gvinst.OpFlags:
		return c.flagsOps(idx, in)
	case gvinst.OpCmp:
		return c.floatCmp(idx, in)
	case gvinst.OpChkAlign:
		return c.chkAlign(idx, in)
	case gvinst.OpCount:
		return c.countDown(idx, in)
	case gvinst.OpMulHi, gvinst.OpDiv, gvinst.OpRem, gvinst.OpDivW, gvinst.OpRemW, gvinst.OpClz, gvinst.OpCtz, gvinst.OpPopc:
		return c.mulDiv(idx, in)
	}
	return c.vecOp(idx, in)
}

// countDown emits COUNT where its site has a counter (unitEnv.counts):
// one above zero loses one inline, and zero takes the callout, where the
// interpreter calls the probe hook. A counted loop header costs a compare
// and a subtraction in memory instead of a callout (the profile
// collector's paused loops, which only count their iterations).
func (c *compiler) countDown(idx int, in *gvinst.Inst) bool {
	s := in.Target[0]
	if s >= uint64(len(c.counts)) {
		return false
	}
	a := &c.a
	a.movImm64(rax, uint64(uintptr(unsafe.Pointer(&c.counts[s]))))
	cell := memOp(mem{base: rax})
	pre := c.cache
	a.encode(mnCmpMI, 8, 0, cell, 0)
	j := a.jcc(ccLE)
	a.encode(mnSubMI, 8, 0, cell, 1)
	c.out.resume[idx] = a.pos()
	c.slowJump(idx, &pre, j)
	return true
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
// masks every exception; otherwise the instruction is a callout. In a
// unit whose entry checks that (floatGuard) it need not.
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
	if c.comiFlags(idx, f) {
		return true
	}
	pre := c.cache
	j := -1
	if !c.floatGuard {
		j = c.checkMasked()
	}
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
	if j >= 0 {
		c.out.resume[idx] = a.pos()
		c.slowJump(idx, &pre, j)
	}
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

// comiFlags compiles the flags word of a ucomis or comis in one host
// comparison, where the lifter's seven instructions make it from three
// (liftComis):
//
//	CMP.ltu.T cf, a, b
//	CMP.equ.T zf, a, b
//	CMP.nan.T pf, a, b
//	SHL.u64   p, pf, 2
//	SHL.u64   z, zf, 6
//	OR.u64    pz, p, z
//	OR.u64    w, cf, pz
//
// when idx starts them, the unit's entry checks that the guest masks
// every SSE exception (the three comparisons raise what one raises: IE
// for a signaling NaN, DE for a denormal), and every value but w is read
// only by the next of them. f is the host comparison of the first (ucomisd
// or ucomiss). The six that follow make no code.
func (c *compiler) comiFlags(idx int, f *form) bool {
	insts := c.vb.Insts
	if !c.floatGuard || idx+6 >= len(insts) {
		return false
	}
	cmp := insts[idx : idx+3]
	t, a, b := cmp[0].Type, cmp[0].Src[0], cmp[0].Src[1]
	for k, want := range []gvinst.Cmp{gvinst.CmpLtu, gvinst.CmpEqu, gvinst.CmpNan} {
		in := &cmp[k]
		if in.Op != gvinst.OpCmp || gvinst.Cmp(in.Mod) != want || in.Type != t || in.HasImm || in.Src[0] != a || in.Src[1] != b {
			return false
		}
	}
	cf, zf, pf := cmp[0].Dst, cmp[1].Dst, cmp[2].Dst
	shl := func(in *gvinst.Inst, src gvinst.Reg, n int64) bool {
		return in.Op == gvinst.OpShl && in.Type == gvinst.U64 && in.HasImm && in.Imm == n && in.Src[0] == src
	}
	or := func(in *gvinst.Inst, x, y gvinst.Reg) bool {
		return in.Op == gvinst.OpOr && in.Type == gvinst.U64 && !in.HasImm &&
			(in.Src[0] == x && in.Src[1] == y || in.Src[0] == y && in.Src[1] == x)
	}
	p, z, pz := insts[idx+3].Dst, insts[idx+4].Dst, insts[idx+5].Dst
	w := insts[idx+6].Dst
	if !shl(&insts[idx+3], pf, 2) || !shl(&insts[idx+4], zf, 6) || !or(&insts[idx+5], p, z) || !or(&insts[idx+6], cf, pz) {
		return false
	}
	// Each value read once, by the next instruction of the seven; all
	// distinct, and none of them the comparison's operands.
	seen := [9]gvinst.Reg{a, b, cf, zf, pf, p, z, pz, w}
	for k := 2; k < len(seen); k++ {
		if !seen[k].IsVirtual() || slices.Contains(seen[:k], seen[k]) {
			return false
		}
	}
	for _, rr := range [...]struct {
		r      gvinst.Reg
		reader int
	}{{cf, idx + 6}, {zf, idx + 4}, {pf, idx + 3}, {p, idx + 5}, {z, idx + 5}, {pz, idx + 6}} {
		if rs := c.reads.of(rr.r); len(rs) != 1 || rs[0] != rr.reader {
			return false
		}
	}
	for k := idx + 1; k <= idx+6; k++ {
		if c.fused[k] || c.skip[k] {
			return false
		}
	}
	a64 := t == gvinst.F64
	c.loadF(0, a, a64)
	c.a.encodeForm(f, 4, 0, c.floatOperand(1, b, a64), 0)
	c.a.setcc(ccB, rax)
	c.a.setcc(ccP, rcx)
	c.a.setcc(ccE, rdx)
	c.a.shiftImmSized(4, rcx, 2, 4)
	c.a.shiftImmSized(4, rdx, 6, 4)
	c.a.encode(mnOrMR, 4, rcx, regOp(rax), 0)
	c.a.encode(mnOrMR, 4, rdx, regOp(rax), 0)
	c.put(w, rax)
	for k := idx + 1; k <= idx+6; k++ {
		c.skip[k] = true
	}
	return true
}
