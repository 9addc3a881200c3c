package jit

import (
	"fmt"

	"github.com/gxbit/gxbit/gvinst"
)

// The ways compiled code returns to Go. The exit word (what enter returns)
// is kind | arg<<8 | unit<<32, arg an instruction index or a successor
// index.
const (
	exitChain      = iota + 1 // the static successor arg is not linked yet
	exitIndirect              // a computed jump; the target is in machine.nextPC
	exitSyscall               // the block's SYSCALL; control goes to its target
	exitCallout               // instruction arg needs Go (its op, or a TLB miss); resume after it
	exitFuel                  // the budget is spent before this unit
	exitBreakpoint            // this unit is at a breakpoint
)

func exitWord(kind int, arg int, unit uint32) uint64 {
	return uint64(kind) | uint64(arg)<<8 | uint64(unit)<<32
}

// chainStubBytes is the size of a successor exit: movabs rax, imm64; ret.
// Linking overwrites its start with jmp rel32.
const chainStubBytes = 11

// compiled is the code of one unit before it is placed in the arena, with
// the offsets Go needs.
type compiled struct {
	code      []byte
	entryGo   int   // offset of the entry Go uses (past the breakpoint and budget checks)
	resume    []int // per instruction: where to continue after its callout, -1 if it has none
	chainStub [2]int
	nCallouts int
	nativeOps int
}

// compiler turns one VBlock into x86-64 code. Every GVInst register lives
// in the machine's frame (r15 points at it); each instruction loads its
// operands into scratch registers, computes, and stores its result.
type compiler struct {
	a      asm
	vb     *gvinst.VBlock
	id     uint32
	out    compiled
	slowAt []slowPath // out-of-line slow paths, emitted after the body
	cache  regCache   // frame slots whose values host registers also hold
}

// slowPath is a jump from the body to a callout of instruction idx, whose
// resume point is back in the body.
type slowPath struct {
	jumps  []int // rel32 displacements to bind to the slow path
	idx    int
	back   int      // the resume point in the body
	reload regCache // the registers to reload from the frame before going back
}

// compileUnit compiles vb as unit id. bp makes the unit's chained entry
// stop at a breakpoint.
func compileUnit(vb *gvinst.VBlock, id uint32, bp bool) (*compiled, error) {
	if len(vb.Insts) == 0 {
		return nil, fmt.Errorf("vblock %#x is empty", vb.Addr)
	}
	if n := int(gvinst.NumGuestSlots) + vb.NumVRegs(); n+2 > gvinst.FrameSlots {
		return nil, fmt.Errorf("vblock %#x uses %d virtual registers, more than the frame holds", vb.Addr, vb.NumVRegs())
	}
	c := &compiler{vb: vb, id: id}
	c.out.resume = make([]int, len(vb.Insts))
	for i := range c.out.resume {
		c.out.resume[i] = -1
	}
	c.out.chainStub = [2]int{-1, -1}
	a := &c.a
	if bp {
		a.movImm64(rax, exitWord(exitBreakpoint, 0, id))
		a.ret()
	}
	// cmp qword [r15+fuel], 0; jle → fuel exit
	a.encode(mnCmpMI8, 8, 0, memOp(fieldMem(offFuel)), 0)
	fuelJump := a.jcc(ccLE)
	c.out.entryGo = a.pos()
	a.encode(mnSubMI, 8, 0, memOp(fieldMem(offFuel)), int64(guestCount(vb)))
	for i := range vb.Insts {
		in := &vb.Insts[i]
		if in.Op.EndsBlock() {
			if i != len(vb.Insts)-1 {
				return nil, fmt.Errorf("vblock %#x: %s ends the block before its last instruction", vb.Addr, in.Op)
			}
			c.control(i, in)
			break
		}
		if c.native(i, in) {
			c.out.nativeOps++
			continue
		}
		c.callout(i)
	}
	last := &vb.Insts[len(vb.Insts)-1]
	if !last.Op.EndsBlock() {
		return nil, fmt.Errorf("vblock %#x does not end with a control transfer", vb.Addr)
	}
	for _, s := range c.slowAt {
		for _, j := range s.jumps {
			a.bind(j, a.pos())
		}
		a.movImm64(rax, exitWord(exitCallout, s.idx, id))
		a.ret()
		// Go ran the instruction on the frame: reload what the body
		// expects in registers, and go back.
		c.out.resume[s.idx] = a.pos()
		for i, slot := range s.reload.slot {
			if slot != noSlot {
				a.encode(mnMovRM, 8, cachePool[i], memOp(slotMem(slot)), 0)
			}
		}
		a.bind(a.jmp(), s.back)
		c.out.nCallouts++
	}
	a.bind(fuelJump, a.pos())
	a.movImm64(rax, exitWord(exitFuel, 0, id))
	a.ret()
	c.out.code = a.bytes()
	return &c.out, nil
}

// guestCount is the number of x86 instructions of vb.
func guestCount(vb *gvinst.VBlock) uint64 {
	if len(vb.Guest) != 0 {
		return uint64(len(vb.Guest))
	}
	n := uint64(0)
	var prev uint64
	for i := range vb.Insts {
		if x := vb.Insts[i].X86; i == 0 || x != prev {
			n++
			prev = x
		}
	}
	return n
}

// callout makes instruction idx run in Go (the interpreter's semantics).
func (c *compiler) callout(idx int) {
	c.a.movImm64(rax, exitWord(exitCallout, idx, c.id))
	c.a.ret()
	c.out.resume[idx] = c.a.pos()
	c.out.nCallouts++
	c.cache.flush()
}

// slowJump records jumps (from conditional branches just emitted) to a
// callout of instruction idx that resumes at the current position + later
// code; the caller sets the resume point with c.out.resume[idx].
func (c *compiler) slowJump(idx int, jumps ...int) {
	c.slowAt = append(c.slowAt, slowPath{jumps: jumps, idx: idx, back: c.a.pos(), reload: c.cache})
}

func slotMem(r gvinst.Reg) mem   { return mem{base: r15, disp: int32(8 * r)} }
func slotMemHi(r gvinst.Reg) mem { return mem{base: r15, disp: int32(8*r + 8)} }
func fieldMem(off uintptr) mem   { return mem{base: r15, disp: int32(off)} }
func (c *compiler) load(d reg, r gvinst.Reg) {
	if p, ok := c.cache.lookup(r); ok {
		c.a.encode(mnMovMR, 8, p, regOp(d), 0)
		return
	}
	c.a.encode(mnMovRM, 8, d, memOp(slotMem(r)), 0)
}

// store writes scratch register s to slot r, and keeps a copy in a cache
// register when r is a general register or a virtual one.
func (c *compiler) store(r gvinst.Reg, s reg) {
	c.a.encode(mnMovMR, 8, s, memOp(slotMem(r)), 0)
	c.cache.forget(r)
	if r < gvinst.X0 || r.IsVirtual() {
		p := c.cache.alloc(r)
		c.a.encode(mnMovMR, 8, s, regOp(p), 0)
	}
}

// wrote records that code wrote slot r other than through store.
func (c *compiler) wrote(r gvinst.Reg) { c.cache.forget(r) }

// loadExt loads slot r's low size bytes into d, zero- or sign-extended.
func (c *compiler) loadExt(d reg, r gvinst.Reg, size int, signed bool) {
	if _, ok := c.cache.lookup(r); ok {
		c.load(d, r)
		c.extendReg(d, size, signed)
		return
	}
	m := memOp(slotMem(r))
	switch {
	case size == 8:
		c.a.encode(mnMovRM, 8, d, m, 0)
	case size == 4 && signed:
		c.a.encode(mnMovsxd, 8, d, m, 0)
	case size == 4:
		c.a.encode(mnMovRM, 4, d, m, 0)
	case size == 2 && signed:
		c.a.encode(mnMovsx16, 8, d, m, 0)
	case size == 2:
		c.a.encode(mnMovzx16, 4, d, m, 0)
	case size == 1 && signed:
		c.a.encode(mnMovsx8, 8, d, m, 0)
	default:
		c.a.encode(mnMovzx8, 4, d, m, 0)
	}
}

// extendReg zero- or sign-extends register r from size bytes to 64 bits.
func (c *compiler) extendReg(r reg, size int, signed bool) {
	o := regOp(r)
	switch {
	case size == 8:
	case size == 4 && signed:
		c.a.encode(mnMovsxd, 8, r, o, 0)
	case size == 4:
		c.a.encode(mnMovMR, 4, r, o, 0)
	case size == 2 && signed:
		c.a.encode(mnMovsx16, 8, r, o, 0)
	case size == 2:
		c.a.encode(mnMovzx16, 4, r, o, 0)
	case size == 1 && signed:
		c.a.encode(mnMovsx8, 8, r, o, 0)
	default:
		c.a.encode(mnMovzx8, 4, r, o, 0)
	}
}

// loadSrc1 loads the second source of a binary op (a register or the
// immediate) into d.
func (c *compiler) loadSrc1(d reg, in *gvinst.Inst) {
	if in.HasImm {
		c.a.movImm(d, uint64(in.Imm))
		return
	}
	c.load(d, in.Src[1])
}

// native emits instruction idx as host code, or reports false.
func (c *compiler) native(idx int, in *gvinst.Inst) bool {
	t := in.Type
	// The host's MXCSR stands for the guest's while compiled code runs:
	// whatever reads or writes the slot runs in Go, where the slot is
	// current.
	if in.Dst == gvinst.MXCSR {
		return false
	}
	for _, r := range in.Src {
		if r == gvinst.MXCSR {
			return false
		}
	}
	if t.IsFloat() || in.SrcType.IsFloat() {
		return c.float(idx, in) || c.nativeMore(idx, in)
	}
	return c.nativeMove(idx, in) || c.nativeInt(idx, in) || c.nativeMore(idx, in)
}

// nativeMove emits the data movement ops (of any type but .f80 where it
// is wider than the forms): GET PUT MOV LI JOIN SELECT LD ST.
func (c *compiler) nativeMove(idx int, in *gvinst.Inst) bool {
	a := &c.a
	t := in.Type
	sz := t.Size()
	switch in.Op {
	case gvinst.OpGet, gvinst.OpPut, gvinst.OpMov:
		if t.IsWide() {
			c.load(rax, in.Src[0])
			a.encode(mnMovRM, 8, rcx, memOp(slotMemHi(in.Src[0])), 0)
			c.store(in.Dst, rax)
			a.encode(mnMovMR, 8, rcx, memOp(slotMemHi(in.Dst)), 0)
			c.wrote(in.Dst + 1)
			return true
		}
		if in.Op == gvinst.OpMov {
			sz = 8
		}
		c.loadExt(rax, in.Src[0], sz, false)
		c.store(in.Dst, rax)
		return true
	case gvinst.OpLi:
		if t.IsWide() {
			a.movImm(rax, uint64(in.Imm))
			c.store(in.Dst, rax)
			a.encode(mnXorMR, 4, rax, regOp(rax), 0)
			a.encode(mnMovMR, 8, rax, memOp(slotMemHi(in.Dst)), 0)
			c.wrote(in.Dst + 1)
			return true
		}
		a.movImm(rax, uint64(in.Imm)&t.Mask())
		c.store(in.Dst, rax)
		return true
	case gvinst.OpJoin:
		c.load(rax, in.Src[0])
		c.load(rcx, in.Src[1])
		c.store(in.Dst, rax)
		a.encode(mnMovMR, 8, rcx, memOp(slotMemHi(in.Dst)), 0)
		c.wrote(in.Dst + 1)
		return true
	case gvinst.OpSelect:
		slots := 1
		if t.IsWide() {
			slots = 2
		}
		a.encode(mnCmpMI8, 8, 0, memOp(slotMem(in.Src[0])), 0)
		for s := 0; s < slots; s++ {
			off := int32(8 * s)
			ma, mb, md := slotMem(in.Src[1]), slotMem(in.Src[2]), slotMem(in.Dst)
			ma.disp += off
			mb.disp += off
			md.disp += off
			a.encode(mnMovRM, 8, rax+reg(s), memOp(mb), 0)
			a.cmov(ccNE, rax+reg(s), memOp(ma))
		}
		for s := 0; s < slots; s++ {
			md := slotMem(in.Dst)
			md.disp += int32(8 * s)
			a.encode(mnMovMR, 8, rax+reg(s), memOp(md), 0)
			c.wrote(in.Dst + gvinst.Reg(s))
		}
		return true
	case gvinst.OpLd:
		return c.memAccess(idx, in, false)
	case gvinst.OpSt:
		return c.memAccess(idx, in, true)
	}
	return false
}

// nativeInt emits the integer computations.
func (c *compiler) nativeInt(idx int, in *gvinst.Inst) bool {
	a := &c.a
	t := in.Type
	sz := t.Size()
	switch in.Op {
	case gvinst.OpAdd, gvinst.OpSub, gvinst.OpMul, gvinst.OpAnd, gvinst.OpOr, gvinst.OpXor:
		if !t.IsInt() {
			return false
		}
		c.load(rax, in.Src[0])
		c.loadSrc1(rcx, in)
		switch in.Op {
		case gvinst.OpAdd:
			a.encode(mnAddMR, 8, rcx, regOp(rax), 0)
		case gvinst.OpSub:
			a.encode(mnSubMR, 8, rcx, regOp(rax), 0)
		case gvinst.OpMul:
			a.encode(mnImulRM, 8, rax, regOp(rcx), 0)
		case gvinst.OpAnd:
			a.encode(mnAndMR, 8, rcx, regOp(rax), 0)
		case gvinst.OpOr:
			a.encode(mnOrMR, 8, rcx, regOp(rax), 0)
		case gvinst.OpXor:
			a.encode(mnXorMR, 8, rcx, regOp(rax), 0)
		}
		c.extendReg(rax, sz, false)
		c.store(in.Dst, rax)
		return true
	case gvinst.OpShl, gvinst.OpShr, gvinst.OpSar:
		if !t.IsInt() {
			return false
		}
		c.shift(in)
		return true
	case gvinst.OpRol, gvinst.OpRor:
		// The host rotates by its count modulo 32 or 64, then modulo the
		// width: b mod t.Bits(), as GVInst does, for every width.
		if !t.IsInt() {
			return false
		}
		c.load(rax, in.Src[0])
		c.loadSrc1(rcx, in)
		m := mnRolMCL
		if in.Op == gvinst.OpRor {
			m = mnRorMCL
		}
		if sz == 1 {
			m += mnRol8MCL - mnRolMCL
		}
		a.encode(m, sz, 0, regOp(rax), 0)
		c.extendReg(rax, sz, false)
		c.store(in.Dst, rax)
		return true
	case gvinst.OpBswap:
		// The byte-reversed 64 bits of the zero-extended value, shifted
		// down to t's width.
		if !t.IsInt() {
			return false
		}
		c.loadExt(rax, in.Src[0], sz, false)
		a.b = append(a.b, 0x48, 0x0f, 0xc8) // bswap rax
		if sz < 8 {
			a.shiftImm(5, rax, uint8(64-8*sz))
		}
		c.store(in.Dst, rax)
		return true
	case gvinst.OpNot, gvinst.OpNeg:
		if !t.IsInt() {
			return false
		}
		c.load(rax, in.Src[0])
		if in.Op == gvinst.OpNot {
			a.encode(mnNotM, 8, 0, regOp(rax), 0)
		} else {
			a.encode(mnNegM, 8, 0, regOp(rax), 0)
		}
		c.extendReg(rax, sz, false)
		c.store(in.Dst, rax)
		return true
	case gvinst.OpCmp:
		cc, ok := intCond(in)
		if !ok {
			return false
		}
		signed := t.IsSigned()
		c.loadExt(rax, in.Src[0], sz, signed)
		if in.HasImm {
			v := uint64(in.Imm) & t.Mask()
			if signed && sz < 8 && v>>(uint(sz)*8-1)&1 != 0 {
				v |= ^t.Mask()
			}
			a.movImm(rcx, v)
		} else {
			c.loadExt(rcx, in.Src[1], sz, signed)
		}
		a.encode(mnCmpMR, 8, rcx, regOp(rax), 0)
		a.setcc(cc, rax)
		c.store(in.Dst, rax)
		return true
	case gvinst.OpCvt:
		if !t.IsInt() || !in.SrcType.IsInt() {
			return false
		}
		s := in.SrcType
		c.loadExt(rax, in.Src[0], s.Size(), s.IsSigned())
		c.extendReg(rax, sz, false)
		c.store(in.Dst, rax)
		return true
	case gvinst.OpFlags:
		switch gvinst.FlagKind(in.Mod) {
		case gvinst.FlagsAdd, gvinst.FlagsSub, gvinst.FlagsAdc, gvinst.FlagsSbb, gvinst.FlagsLogic, gvinst.FlagsNeg, gvinst.FlagsMul:
		default:
			return false
		}
		// Load all four first: a source may be one of the CC slots.
		for s := 0; s < 4; s++ {
			c.load(rax+reg(s), in.Src[s])
		}
		a.movImm(rsi, gvinst.CCOpValue(gvinst.FlagKind(in.Mod), t))
		c.store(gvinst.CCOp, rsi)
		c.store(gvinst.CCA, rax)
		c.store(gvinst.CCB, rcx)
		c.store(gvinst.CCR, rdx)
		c.store(gvinst.CCC, rbx)
		return true
	}
	return false
}

// intCond is the host condition of an integer CMP, unsigned or signed by
// its type.
func intCond(in *gvinst.Inst) (cond, bool) {
	t := in.Type
	if !t.IsInt() {
		return 0, false
	}
	s := t.IsSigned()
	pick := func(signed, unsigned cond) cond {
		if s {
			return signed
		}
		return unsigned
	}
	switch gvinst.Cmp(in.Mod) {
	case gvinst.CmpEq, gvinst.CmpEqu:
		return ccE, true
	case gvinst.CmpNe, gvinst.CmpNeu:
		return ccNE, true
	case gvinst.CmpLt, gvinst.CmpLtu:
		return pick(ccL, ccB), true
	case gvinst.CmpLe, gvinst.CmpLeu:
		return pick(ccLE, ccBE), true
	case gvinst.CmpGt, gvinst.CmpGtu:
		return pick(ccG, ccA), true
	case gvinst.CmpGe, gvinst.CmpGeu:
		return pick(ccGE, ccAE), true
	}
	return 0, false
}

// shift emits SHL, SHR or SAR: the count is read as its low t bits, and a
// count of t.Bits() or more gives 0 (or the sign in every bit for SAR).
func (c *compiler) shift(in *gvinst.Inst) {
	a := &c.a
	t := in.Type
	sz := t.Size()
	n := uint64(t.Bits())
	digit := byte(4)
	switch in.Op {
	case gvinst.OpShr:
		digit = 5
	case gvinst.OpSar:
		digit = 7
	}
	c.loadExt(rax, in.Src[0], sz, in.Op == gvinst.OpSar)
	if in.HasImm {
		k := uint64(in.Imm) & t.Mask()
		switch {
		case k >= n && in.Op != gvinst.OpSar:
			a.encode(mnXorMR, 4, rax, regOp(rax), 0)
		case k >= n:
			a.shiftImm(digit, rax, uint8(n-1))
		case k > 0:
			a.shiftImm(digit, rax, uint8(k))
		}
	} else {
		c.loadExt(rcx, in.Src[1], sz, false)
		a.encode(mnCmpMI, 8, 0, regOp(rcx), int64(n))
		inRange := a.jcc(ccB)
		if in.Op == gvinst.OpSar {
			a.movImm(rcx, n-1)
		} else {
			a.encode(mnXorMR, 4, rax, regOp(rax), 0)
			a.encode(mnXorMR, 4, rcx, regOp(rcx), 0)
		}
		a.bind(inRange, a.pos())
		a.encode(forms2shift(digit), 8, 0, regOp(rax), 0)
	}
	c.extendReg(rax, sz, false)
	c.store(in.Dst, rax)
}

func forms2shift(digit byte) mn {
	switch digit {
	case 5:
		return mnShrMCL
	case 7:
		return mnSarMCL
	}
	return mnShlMCL
}

// memAccess emits an LD or ST of 1, 2, 4, 8 or 16 bytes through the
// software TLB: the page number's entry is probed inline; a miss, an access
// that crosses a page, or anything else the TLB does not vouch for goes to
// a callout, which runs the whole instruction in Go and resumes after it.
func (c *compiler) memAccess(idx int, in *gvinst.Inst, isStore bool) bool {
	a := &c.a
	sz := in.Type.Size()
	switch sz {
	case 1, 2, 4, 8, 16:
	default:
		return false
	}
	// rax = address
	c.load(rax, in.Src[0])
	if in.Imm != 0 {
		a.movImm(rcx, uint64(in.Imm))
		a.encode(mnAddMR, 8, rcx, regOp(rax), 0)
	}
	// rdx = page number; rcx = TLB slot
	a.encode(mnMovMR, 8, rax, regOp(rdx), 0)
	a.shiftImm(5, rdx, 12)
	a.encode(mnMovMR, 8, rdx, regOp(rcx), 0)
	a.shiftImm(5, rcx, 12)
	a.encode(mnXorMR, 8, rdx, regOp(rcx), 0)
	a.encode(mnMovMR, 8, rdx, regOp(rsi), 0)
	a.shiftImm(5, rsi, 24)
	a.encode(mnXorMR, 8, rsi, regOp(rcx), 0)
	a.encode(mnAndMI, 4, 0, regOp(rcx), gvinst.TLBSlots-1)
	a.shiftImm(4, rcx, 4)
	tlb := offRTLB
	if isStore {
		tlb = offWTLB
	}
	a.encode(mnAddRM, 8, rcx, memOp(fieldMem(tlb)), 0)
	// cmp [rcx], pn+1
	a.encode(mnAddMI, 8, 0, regOp(rdx), 1)
	a.encode(mnCmpMR, 8, rdx, memOp(mem{base: rcx}), 0)
	miss := a.jcc(ccNE)
	// The access must stay in the page: (addr & 0xfff) <= 4096-sz.
	a.encode(mnMovMR, 4, rax, regOp(rsi), 0)
	a.encode(mnAndMI, 4, 0, regOp(rsi), 0xfff)
	jumps := []int{miss}
	if sz > 1 {
		a.encode(mnCmpMI, 4, 0, regOp(rsi), int64(gvinst.PageSize-sz))
		jumps = append(jumps, a.jcc(ccA))
	}
	// rcx = page data
	a.encode(mnMovRM, 8, rcx, memOp(mem{base: rcx, disp: 8}), 0)
	at := mem{base: rcx, index: rsi, scale: 1, hasIndex: true}
	if isStore {
		c.load(rax, in.Src[1])
		switch sz {
		case 1:
			a.encode(mnMovMR8, 1, rax, memOp(at), 0)
		case 2, 4, 8:
			a.encode(mnMovMR, sz, rax, memOp(at), 0)
		case 16:
			a.encode(mnMovMR, 8, rax, memOp(at), 0)
			a.encode(mnMovRM, 8, rax, memOp(slotMemHi(in.Src[1])), 0)
			hi := at
			hi.disp = 8
			a.encode(mnMovMR, 8, rax, memOp(hi), 0)
		}
	} else {
		switch sz {
		case 1:
			a.encode(mnMovzx8, 4, rax, memOp(at), 0)
		case 2:
			a.encode(mnMovzx16, 4, rax, memOp(at), 0)
		case 4:
			a.encode(mnMovRM, 4, rax, memOp(at), 0)
		case 8, 16:
			a.encode(mnMovRM, 8, rax, memOp(at), 0)
		}
		if sz == 16 {
			hi := at
			hi.disp = 8
			a.encode(mnMovRM, 8, rdx, memOp(hi), 0)
			a.encode(mnMovMR, 8, rdx, memOp(slotMemHi(in.Dst)), 0)
			c.wrote(in.Dst + 1)
		}
		c.store(in.Dst, rax)
	}
	c.out.resume[idx] = a.pos()
	c.slowJump(idx, jumps...)
	return true
}

// control emits the instruction that ends the block.
func (c *compiler) control(idx int, in *gvinst.Inst) {
	a := &c.a
	switch in.Op {
	case gvinst.OpJmp, gvinst.OpCall:
		c.chainStub(0)
	case gvinst.OpBranch:
		a.encode(mnCmpMI8, 8, 0, memOp(slotMem(in.Src[0])), 0)
		taken := a.jcc(ccNE)
		c.chainStub(1)
		a.bind(taken, a.pos())
		c.chainStub(0)
	case gvinst.OpJmpR, gvinst.OpCallR, gvinst.OpRet:
		c.load(rax, in.Src[0])
		a.encode(mnMovMR, 8, rax, memOp(fieldMem(offNextPC)), 0)
		// rcx = ijcSlot(rax) * 16; a hit jumps to the cached unit.
		a.encode(mnMovMR, 8, rax, regOp(rcx), 0)
		a.shiftImm(5, rcx, 12)
		a.encode(mnXorMR, 8, rax, regOp(rcx), 0)
		a.encode(mnAndMI, 4, 0, regOp(rcx), ijcSize-1)
		a.shiftImm(4, rcx, 4)
		e := mem{base: r15, index: rcx, scale: 1, hasIndex: true, disp: int32(offIJC)}
		a.encode(mnCmpMR, 8, rax, memOp(e), 0)
		miss := a.jcc(ccNE)
		e.disp += 8
		a.encode(mnJmpM, 4, 0, memOp(e), 0)
		a.bind(miss, a.pos())
		a.movImm64(rax, exitWord(exitIndirect, 0, c.id))
		a.ret()
	case gvinst.OpSyscall:
		a.movImm64(rax, exitWord(exitSyscall, 0, c.id))
		a.ret()
	default: // TRAP
		c.callout(idx)
		// A trap never resumes; should it, the block has nowhere to go.
		a.movImm64(rax, exitWord(exitCallout, idx, c.id))
		a.ret()
	}
}

// chainStub emits the exit to static successor k, which linking may
// overwrite with a direct jump.
func (c *compiler) chainStub(k int) {
	c.out.chainStub[k] = c.a.pos()
	c.a.movImm64(rax, exitWord(exitChain, k, c.id))
	c.a.ret()
}

// The MXCSR bits compiled float code depends on: the exception masks
// (all set, or the instruction is a callout) and the exception flags.
const (
	mxMasks = 0x1f80
	mxFlags = 0x3f
)

// float emits the scalar SSE instructions whose GVInst semantics are the
// host instruction's under the guest's MXCSR: ADD SUB MUL DIV SQRT of .f32
// and .f64, and the conversions SSE makes, rounded as the GVInst says. The
// code first checks that the guest masks every exception (else the
// instruction is a callout, which traps exactly); the host MXCSR holds the
// guest's (enter loads it), so rounding, DAZ, FTZ and the exception flags
// are the guest's.
func (c *compiler) float(idx int, in *gvinst.Inst) bool {
	a := &c.a
	t, s := in.Type, in.SrcType
	if in.HasImm || t == gvinst.F80 || s == gvinst.F80 {
		return false
	}
	is64 := func(x gvinst.Type) bool { return x == gvinst.F64 }
	var body func()
	switch in.Op {
	case gvinst.OpGet, gvinst.OpPut, gvinst.OpMov, gvinst.OpLd, gvinst.OpSt, gvinst.OpLi, gvinst.OpSelect:
		// Plain data movement: the integer forms do it.
		return c.nativeMove(idx, in)
	case gvinst.OpAdd, gvinst.OpSub, gvinst.OpMul, gvinst.OpDiv:
		var m mn
		switch in.Op {
		case gvinst.OpAdd:
			m = mnAddsd
		case gvinst.OpSub:
			m = mnSubsd
		case gvinst.OpMul:
			m = mnMulsd
		default:
			m = mnDivsd
		}
		if !is64(t) {
			m += mnAddss - mnAddsd
		}
		body = func() {
			c.loadF(0, in.Src[0], is64(t))
			a.encode(m, 4, 0, memOp(slotMem(in.Src[1])), 0)
			c.storeF(in.Dst, 0, is64(t))
		}
	case gvinst.OpSqrt:
		m := mnSqrtsd
		if !is64(t) {
			m = mnSqrtss
		}
		body = func() {
			a.encode(m, 4, 0, memOp(slotMem(in.Src[0])), 0)
			c.storeF(in.Dst, 0, is64(t))
		}
	case gvinst.OpCvt:
		r := gvinst.Rounding(in.Mod)
		switch {
		case t.IsFloat() && s.IsInt() && s.IsSigned() && (s.Size() == 4 || s.Size() == 8):
			// cvtsi2sd/ss round per MXCSR; s32 to f64 is always exact.
			if r != gvinst.RoundMXCSR && !(is64(t) && s.Size() == 4) {
				return false
			}
			m := mnCvtsi2sd
			if !is64(t) {
				m = mnCvtsi2ss
			}
			body = func() {
				a.encode(m, s.Size(), 0, memOp(slotMem(in.Src[0])), 0)
				c.storeF(in.Dst, 0, is64(t))
			}
		case s.IsFloat() && t.IsInt() && t.IsSigned() && (t.Size() == 4 || t.Size() == 8):
			var m mn
			switch r {
			case gvinst.RoundZero:
				m = mnCvttsd2si
			case gvinst.RoundMXCSR:
				m = mnCvtsd2si
			default:
				return false
			}
			if !is64(s) {
				m += mnCvttss2si - mnCvttsd2si
			}
			body = func() {
				a.encode(m, t.Size(), rax, memOp(slotMem(in.Src[0])), 0)
				c.store(in.Dst, rax)
			}
		case t == gvinst.F64 && s == gvinst.F32:
			body = func() {
				a.encode(mnCvtss2sd, 4, 0, memOp(slotMem(in.Src[0])), 0)
				c.storeF(in.Dst, 0, true)
			}
		case t == gvinst.F32 && s == gvinst.F64 && r == gvinst.RoundMXCSR:
			body = func() {
				a.encode(mnCvtsd2ss, 4, 0, memOp(slotMem(in.Src[0])), 0)
				c.storeF(in.Dst, 0, false)
			}
		default:
			return false
		}
	default:
		return false
	}
	// mov eax, [mxcsr]; and eax, masks; cmp eax, masks; jne → callout
	a.encode(mnMovRM, 4, rax, memOp(slotMem(gvinst.MXCSR)), 0)
	a.encode(mnAndMI, 4, 0, regOp(rax), mxMasks)
	a.encode(mnCmpMI, 4, 0, regOp(rax), mxMasks)
	j := a.jcc(ccNE)
	body()
	c.out.resume[idx] = a.pos()
	c.slowJump(idx, j)
	return true
}

// loadF loads a .f64 (or .f32) slot into xmm register x.
func (c *compiler) loadF(x reg, r gvinst.Reg, f64 bool) {
	m := mnMovsdRM
	if !f64 {
		m = mnMovssRM
	}
	c.a.encode(m, 4, x, memOp(slotMem(r)), 0)
}

// storeF stores xmm register x's low .f64 (or .f32, zero-extended) into a
// slot.
func (c *compiler) storeF(r gvinst.Reg, x reg, f64 bool) {
	if f64 {
		c.a.encode(mnMovsdMR, 4, x, memOp(slotMem(r)), 0)
		c.wrote(r)
		return
	}
	c.a.encode(mnMovdRX, 4, x, regOp(rax), 0)
	c.store(r, rax)
}

// cachePool are the host registers that hold copies of frame slots within
// a unit. The frame stays current (every write goes to it first), so a
// register copy can be dropped at any time; after a callout Go may have
// changed any slot, so the copies are reloaded or forgotten.
var cachePool = [...]reg{rdi, r8, r9, r10, r11, r12, r13, r14}

const noSlot = ^gvinst.Reg(0)

// regCache says which slot each cachePool register holds a copy of.
type regCache struct {
	slot [len(cachePool)]gvinst.Reg
	used [len(cachePool)]uint32 // when each was last written or read, for eviction
	tick uint32
	init bool
}

func (rc *regCache) ensure() {
	if !rc.init {
		rc.flush()
	}
}

// flush forgets every copy.
func (rc *regCache) flush() {
	for i := range rc.slot {
		rc.slot[i] = noSlot
	}
	rc.init = true
}

// lookup returns the register holding a copy of slot r.
func (rc *regCache) lookup(r gvinst.Reg) (reg, bool) {
	rc.ensure()
	for i, s := range rc.slot {
		if s == r {
			rc.tick++
			rc.used[i] = rc.tick
			return cachePool[i], true
		}
	}
	return 0, false
}

// forget drops the copy of slot r, if any.
func (rc *regCache) forget(r gvinst.Reg) {
	rc.ensure()
	for i, s := range rc.slot {
		if s == r {
			rc.slot[i] = noSlot
		}
	}
}

// alloc picks a register for a copy of slot r: a free one, else the least
// recently used.
func (rc *regCache) alloc(r gvinst.Reg) reg {
	rc.ensure()
	best := 0
	for i, s := range rc.slot {
		if s == noSlot {
			best = i
			break
		}
		if rc.used[i] < rc.used[best] {
			best = i
		}
	}
	rc.tick++
	rc.slot[best], rc.used[best] = r, rc.tick
	return cachePool[best]
}
