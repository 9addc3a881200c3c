package jit

import "github.com/gxbit/gxbit/gvinst"

// Compiled code reads the x86 flags through one routine, emitted once at
// the start of the code arena: statusFlags computes the status flags (CF
// PF AF ZF SF OF, as RFLAGS places them) that the lazy flags record of the
// frame stands for, exactly as the interpreter's lazyFlags does, or takes
// them from RFLAGS when CCOp is 0. Units call it through machine.flagsFn;
// it keeps every register but rax (its result) and the host flags, and
// uses 48 bytes of stack below the return address enter pushed. It returns
// all ones for a record it does not know (a type other than an integer of
// 8 to 64 bits), and its caller then takes the callout.
//
// On it are built GETCC (a condition of those flags), GETFLAGS (all of
// RFLAGS), and the FLAGS kinds that read the previous flags (inc and dec
// keep CF) or may leave them alone (shifts and rotates by 0).

// flagsUnknown is what statusFlags returns for a record it cannot read.
const flagsUnknown = ^uint64(0)

// shiftNibbles holds, for each gvinst.Type below 16, (64 - its bits) / 8
// in the nibble at 4*type, or 0xf for a type FLAGS cannot record.
var shiftNibbles = func() uint64 {
	v := uint64(0)
	for t := gvinst.Type(0); t < 16; t++ {
		n := uint64(0xf)
		if t.IsInt() {
			n = uint64(8-t.Size()) & 0xf
		}
		v |= n << (4 * t)
	}
	return v
}()

// emitStatusFlags emits the statusFlags routine.
func emitStatusFlags(a *asm) {
	const arith = int64(gvinst.FlagsArith)
	a.encode(mnMovRM, 8, rax, memOp(slotMem(gvinst.CCOp)), 0)
	a.encode(mnTestMR, 8, rax, regOp(rax), 0)
	lazy := a.jcc(ccNE)
	a.encode(mnMovRM, 8, rax, memOp(slotMem(gvinst.RFLAGS)), 0)
	a.encode(mnAndMI, 4, 0, regOp(rax), arith)
	a.ret()
	a.bind(lazy, a.pos())
	saved := []reg{rcx, rdx, rbx, rsi, rdi}
	for _, r := range saved {
		a.push(r)
	}
	// rcx = s = 64 - t.Bits().
	bad1, bad2 := typeShift(a)
	// rdx = A = a<<s, rbx = B = b<<s, rsi = R = r<<s: the t-bit values in
	// the top bits, so 64-bit compares and sign tests are t-bit ones.
	a.encode(mnMovRM, 8, rdx, memOp(slotMem(gvinst.CCA)), 0)
	a.encode(mnShlMCL, 8, 0, regOp(rdx), 0)
	a.encode(mnMovRM, 8, rbx, memOp(slotMem(gvinst.CCB)), 0)
	a.encode(mnShlMCL, 8, 0, regOp(rbx), 0)
	a.encode(mnMovRM, 8, rsi, memOp(slotMem(gvinst.CCR)), 0)
	a.encode(mnShlMCL, 8, 0, regOp(rsi), 0)
	a.encode(mnXorMR, 4, rdi, regOp(rdi), 0) // rdi = CF OF AF
	var tails []int
	toTail := func() { tails = append(tails, a.jmp()) }
	// setBit ors condition cc into bit k of rdi (clobbers rax and the
	// host flags).
	setBit := func(cc cond, k uint8) {
		a.setcc(cc, rax)
		if k != 0 {
			a.shiftImm(4, rax, k)
		}
		a.encode(mnOrMR, 8, rax, regOp(rdi), 0)
	}
	// signBit ors the sign of r into bit k of rdi (clobbers r).
	signBit := func(r reg, k uint8) {
		a.shiftImm(5, r, 63)
		a.shiftImm(4, r, k)
		a.encode(mnOrMR, 8, r, regOp(rdi), 0)
	}
	// af ors bit 4 of the xor of the slots into rdi (AF: a^b^r; a^r for
	// neg, and for inc and dec, whose b of 1 does not reach bit 4).
	af := func(slots ...gvinst.Reg) {
		a.encode(mnMovRM, 8, rax, memOp(slotMem(slots[0])), 0)
		for _, s := range slots[1:] {
			a.encodeForm(&fmXorRM, 8, rax, memOp(slotMem(s)), 0)
		}
		a.encode(mnAndMI, 4, 0, regOp(rax), int64(gvinst.FlagAF))
		a.encode(mnOrMR, 8, rax, regOp(rdi), 0)
	}
	ofAdd := func() { // sign((A^R)&(B^R))
		a.encode(mnMovMR, 8, rdx, regOp(rax), 0)
		a.encode(mnXorMR, 8, rsi, regOp(rax), 0)
		a.encode(mnMovMR, 8, rbx, regOp(rcx), 0)
		a.encode(mnXorMR, 8, rsi, regOp(rcx), 0)
		a.encode(mnAndMR, 8, rcx, regOp(rax), 0)
		signBit(rax, 11)
	}
	ofSub := func() { // sign((A^B)&(A^R))
		a.encode(mnMovMR, 8, rdx, regOp(rax), 0)
		a.encode(mnXorMR, 8, rbx, regOp(rax), 0)
		a.encode(mnMovMR, 8, rdx, regOp(rcx), 0)
		a.encode(mnXorMR, 8, rsi, regOp(rcx), 0)
		a.encode(mnAndMR, 8, rcx, regOp(rax), 0)
		signBit(rax, 11)
	}
	// carryClear emits a jump, returned for binding, taken when CCC's
	// bit 0 is clear.
	carryClear := func() int {
		a.encodeForm(&fmTest8MI, 1, 0, memOp(slotMem(gvinst.CCC)), 1)
		return a.jcc(ccE)
	}
	// setCF sets CF from an unsigned compare of x with y (the operands
	// and result shifted to the top): x below y, or, with carryIn and
	// CCC's bit 0 set, x below or equal (a subtract or add with borrow
	// or carry wraps on equality too).
	setCF := func(x, y reg, carryIn bool) {
		if !carryIn {
			a.encode(mnCmpMR, 8, y, regOp(x), 0)
			setBit(ccB, 0)
			return
		}
		clear := carryClear()
		a.encode(mnCmpMR, 8, y, regOp(x), 0)
		setBit(ccBE, 0)
		done := a.jmp()
		a.bind(clear, a.pos())
		a.encode(mnCmpMR, 8, y, regOp(x), 0)
		setBit(ccB, 0)
		a.bind(done, a.pos())
	}
	// The kind, in the low byte of CCOp: a compare chain, the common
	// kinds first; logic and unknown kinds set only ZF SF PF.
	a.encode(mnMovRM, 8, rax, memOp(slotMem(gvinst.CCOp)), 0)
	a.encode(mnAndMI, 4, 0, regOp(rax), 0xff)
	kinds := []gvinst.FlagKind{gvinst.FlagsSub, gvinst.FlagsAdd, gvinst.FlagsInc, gvinst.FlagsDec, gvinst.FlagsAdc, gvinst.FlagsSbb,
		gvinst.FlagsNeg, gvinst.FlagsShl, gvinst.FlagsShr, gvinst.FlagsSar, gvinst.FlagsMul}
	jumps := make([]int, len(kinds))
	for i, k := range kinds {
		a.encode(mnCmpMI, 4, 0, regOp(rax), int64(k))
		jumps[i] = a.jcc(ccE)
	}
	toTail()
	for i, k := range kinds {
		a.bind(jumps[i], a.pos())
		switch k {
		case gvinst.FlagsSub, gvinst.FlagsSbb:
			af(gvinst.CCA, gvinst.CCB, gvinst.CCR)
			setCF(rdx, rbx, k == gvinst.FlagsSbb)
			ofSub()
		case gvinst.FlagsAdd, gvinst.FlagsAdc:
			af(gvinst.CCA, gvinst.CCB, gvinst.CCR)
			setCF(rsi, rdx, k == gvinst.FlagsAdc)
			ofAdd()
		case gvinst.FlagsInc, gvinst.FlagsDec:
			// AF = bit 4 of a^1^r (bit 0 does not reach bit 4).
			af(gvinst.CCA, gvinst.CCR)
			a.encode(mnMovRM, 8, rax, memOp(slotMem(gvinst.CCC)), 0)
			a.encode(mnAndMI, 4, 0, regOp(rax), 1)
			a.encode(mnOrMR, 8, rax, regOp(rdi), 0)
			// rax = ONE = 1<<s
			a.movImm(rax, 1)
			a.encode(mnShlMCL, 8, 0, regOp(rax), 0)
			if k == gvinst.FlagsInc { // sign((A^R)&(ONE^R))
				a.encode(mnXorMR, 8, rsi, regOp(rax), 0)
				a.encode(mnMovMR, 8, rdx, regOp(rcx), 0)
				a.encode(mnXorMR, 8, rsi, regOp(rcx), 0)
			} else { // sign((A^ONE)&(A^R))
				a.encode(mnXorMR, 8, rdx, regOp(rax), 0)
				a.encode(mnMovMR, 8, rdx, regOp(rcx), 0)
				a.encode(mnXorMR, 8, rsi, regOp(rcx), 0)
			}
			a.encode(mnAndMR, 8, rcx, regOp(rax), 0)
			signBit(rax, 11)
		case gvinst.FlagsNeg:
			af(gvinst.CCA, gvinst.CCR)
			a.encode(mnTestMR, 8, rdx, regOp(rdx), 0)
			setBit(ccNE, 0)
			a.movImm64(rax, 1<<63)
			a.encode(mnCmpMR, 8, rax, regOp(rdx), 0)
			setBit(ccE, 11)
		case gvinst.FlagsShl, gvinst.FlagsShr, gvinst.FlagsSar:
			// rax = the count b&mask = B>>s.
			a.encode(mnMovMR, 8, rbx, regOp(rax), 0)
			a.encode(mnShrMCL, 8, 0, regOp(rax), 0)
			noCF := []int{}
			switch k {
			case gvinst.FlagsShl:
				// CF = bit 64-b of A, for s <= 64-b <= 63.
				a.encode(mnNegM, 8, 0, regOp(rax), 0)
				a.encode(mnAddMI, 8, 0, regOp(rax), 64)
			case gvinst.FlagsShr:
				// CF = bit b-1+s of A, for s <= b-1+s <= 63.
				a.encode(mnAddMR, 8, rcx, regOp(rax), 0)
				a.encode(mnSubMI, 8, 0, regOp(rax), 1)
			case gvinst.FlagsSar:
				// CF = bit min(b-1+s, 63) of A, for b > 0.
				a.encode(mnTestMR, 8, rax, regOp(rax), 0)
				noCF = append(noCF, a.jcc(ccE))
				a.encode(mnAddMR, 8, rcx, regOp(rax), 0)
				a.encode(mnSubMI, 8, 0, regOp(rax), 1)
				a.encode(mnCmpMI, 8, 0, regOp(rax), 63)
				inRange := a.jcc(ccBE)
				a.movImm(rax, 63)
				a.bind(inRange, a.pos())
			}
			if k != gvinst.FlagsSar {
				a.encode(mnCmpMI, 8, 0, regOp(rax), 63)
				noCF = append(noCF, a.jcc(ccA))
				a.encode(mnCmpMR, 8, rcx, regOp(rax), 0)
				noCF = append(noCF, a.jcc(ccB))
			}
			a.encodeForm(&fmBtMR, 8, rax, regOp(rdx), 0)
			setBit(ccB, 0)
			for _, j := range noCF {
				a.bind(j, a.pos())
			}
			switch k {
			case gvinst.FlagsShl: // OF = sign(R) ^ CF
				a.encode(mnMovMR, 8, rsi, regOp(rax), 0)
				a.shiftImm(5, rax, 63)
				a.encode(mnXorMR, 8, rdi, regOp(rax), 0)
				a.encode(mnAndMI, 4, 0, regOp(rax), 1)
				a.shiftImm(4, rax, 11)
				a.encode(mnOrMR, 8, rax, regOp(rdi), 0)
			case gvinst.FlagsShr: // OF = sign(A)
				a.encode(mnMovMR, 8, rdx, regOp(rax), 0)
				signBit(rax, 11)
			}
		case gvinst.FlagsMul:
			// CF = OF = A != (the sign extension of r, shifted, for .sN;
			// 0 for .uN).
			a.encode(mnMovRM, 8, rax, memOp(slotMem(gvinst.CCOp)), 0)
			a.shiftImm(5, rax, 8)
			a.encode(mnXorMR, 4, rbx, regOp(rbx), 0)
			a.encode(mnCmpMI, 4, 0, regOp(rax), int64(gvinst.S8))
			unsigned1 := a.jcc(ccB)
			a.encode(mnCmpMI, 4, 0, regOp(rax), int64(gvinst.S64))
			unsigned2 := a.jcc(ccA)
			a.encode(mnMovMR, 8, rsi, regOp(rbx), 0)
			a.shiftImm(7, rbx, 63)
			a.encode(mnShlMCL, 8, 0, regOp(rbx), 0)
			a.bind(unsigned1, a.pos())
			a.bind(unsigned2, a.pos())
			a.encode(mnCmpMR, 8, rbx, regOp(rdx), 0)
			a.setcc(ccNE, rax)
			a.encode(mnOrMR, 8, rax, regOp(rdi), 0)
			a.shiftImm(4, rax, 11)
			a.encode(mnOrMR, 8, rax, regOp(rdi), 0)
		}
		toTail()
	}
	// ZF and SF from R, PF from the low byte of r.
	for _, j := range tails {
		a.bind(j, a.pos())
	}
	a.encode(mnTestMR, 8, rsi, regOp(rsi), 0)
	a.setcc(ccE, rax)
	a.setcc(ccS, rcx) // setcc's movzx leaves the flags alone
	a.shiftImm(4, rax, 6)
	a.shiftImm(4, rcx, 7)
	a.encode(mnOrMR, 8, rax, regOp(rdi), 0)
	a.encode(mnOrMR, 8, rcx, regOp(rdi), 0)
	a.encode(mnMovRM, 8, rax, memOp(slotMem(gvinst.CCR)), 0)
	a.encodeForm(&fmTest8, 1, rax, regOp(rax), 0)
	a.setcc(ccP, rax)
	a.shiftImm(4, rax, 2)
	a.encode(mnOrMR, 8, rdi, regOp(rax), 0)
	ret := a.jmp()
	a.bind(bad1, a.pos())
	a.bind(bad2, a.pos())
	a.movImm64(rax, flagsUnknown)
	a.bind(ret, a.pos())
	for i := len(saved) - 1; i >= 0; i-- {
		a.pop(saved[i])
	}
	a.ret()
}

// subCondBit is the bit of subConds' result that holds condition cc (or
// its negation), for the conditions it computes.
func subCondBit(cc gvinst.Cond) (uint8, bool) {
	switch cc &^ 1 {
	case gvinst.CondB:
		return 0, true
	case gvinst.CondE:
		return 1, true
	case gvinst.CondBE:
		return 2, true
	case gvinst.CondL:
		return 3, true
	case gvinst.CondLE:
		return 4, true
	}
	return 0, false
}

// subNotSub is what subConds returns when the record is not a sub's.
const subNotSub = ^uint64(1)

// emitSubConds emits the subConds routine: when the flags record is a
// sub's (FLAGS.sub.t a, b, …), it returns in rax the conditions the
// interpreter computes from a and b alone (getCC), bit 0 a <u b, bit 1
// a == b, bit 2 a <=u b, bit 3 a <s b, bit 4 a <=s b, as t-bit values;
// subNotSub for any other record, flagsUnknown for a type it does not know.
// It keeps every register but rax and the host flags.
func emitSubConds(a *asm) {
	saved := []reg{rcx, rdx, rbx}
	for _, r := range saved {
		a.push(r)
	}
	a.encode(mnMovRM, 8, rax, memOp(slotMem(gvinst.CCOp)), 0)
	a.encode(mnMovMR, 8, rax, regOp(rcx), 0)
	a.encode(mnAndMI, 4, 0, regOp(rcx), 0xff)
	a.encode(mnCmpMI, 4, 0, regOp(rcx), int64(gvinst.FlagsSub))
	notSub := a.jcc(ccNE)
	// rcx = s = 64 - t.Bits(), as in statusFlags.
	bad1, bad2 := typeShift(a)
	a.encode(mnMovRM, 8, rax, memOp(slotMem(gvinst.CCA)), 0)
	a.encode(mnShlMCL, 8, 0, regOp(rax), 0)
	a.encode(mnMovRM, 8, rdx, memOp(slotMem(gvinst.CCB)), 0)
	a.encode(mnShlMCL, 8, 0, regOp(rdx), 0)
	a.encode(mnCmpMR, 8, rdx, regOp(rax), 0)
	// setcc and its movzx leave the host flags alone. BE is B|E, LE is
	// L|E.
	a.setcc(ccB, rax)
	a.setcc(ccE, rcx)
	a.setcc(ccL, rdx)
	a.encode(mnMovMR, 8, rax, regOp(rbx), 0)
	a.encode(mnOrMR, 8, rcx, regOp(rbx), 0) // rbx = BE
	a.shiftImm(4, rdx, 3)
	a.encode(mnOrMR, 8, rdx, regOp(rax), 0) // L
	a.shiftImm(4, rcx, 1)
	a.encode(mnOrMR, 8, rcx, regOp(rax), 0) // E
	a.shiftImm(4, rbx, 2)
	a.encode(mnOrMR, 8, rbx, regOp(rax), 0) // BE
	a.shiftImm(5, rcx, 1)
	a.shiftImm(4, rcx, 4)
	a.shiftImm(5, rdx, 3)
	a.shiftImm(4, rdx, 4)
	a.encode(mnOrMR, 8, rdx, regOp(rcx), 0)
	a.encode(mnOrMR, 8, rcx, regOp(rax), 0) // LE = (E|L) << 4
	ret := a.jmp()
	a.bind(notSub, a.pos())
	a.movImm64(rax, subNotSub)
	ret2 := a.jmp()
	a.bind(bad1, a.pos())
	a.bind(bad2, a.pos())
	a.movImm64(rax, flagsUnknown)
	a.bind(ret, a.pos())
	a.bind(ret2, a.pos())
	for i := len(saved) - 1; i >= 0; i-- {
		a.pop(saved[i])
	}
	a.ret()
}

// flagsSlots are the slots the flags routines read from the frame.
var flagsSlots = [...]gvinst.Reg{gvinst.CCOp, gvinst.CCA, gvinst.CCB, gvinst.CCR, gvinst.CCC, gvinst.RFLAGS}

// flushFlags stores the register copies of the flags slots that are newer
// than the frame, where the routines read them.
func (c *compiler) flushFlags() {
	for _, r := range flagsSlots {
		c.frame(r)
	}
}

// callStatusFlags emits the call of statusFlags, which leaves the status
// flags in rax, and returns the jump (to bind to a callout) taken when it
// could not read the record. The flags slots must be flushed.
func (c *compiler) callStatusFlags() int {
	a := &c.a
	a.encodeForm(&fmCallM, 4, 0, memOp(fieldMem(offFlagsFn)), 0)
	a.encode(mnCmpMI8, 8, 0, regOp(rax), -1)
	return a.jcc(ccE)
}

// condFromFlags turns the status flags in rax into 1 if x86 condition cc
// holds on them, else 0 (clobbers rcx).
func (c *compiler) condFromFlags(cc gvinst.Cond) {
	a := &c.a
	bit := func(k uint8) {
		if k != 0 {
			a.shiftImm(5, rax, k)
		}
		a.encode(mnAndMI, 4, 0, regOp(rax), 1)
	}
	sfXorOF := func() { // bit 7 of rcx = SF ^ OF
		a.encode(mnMovMR, 8, rax, regOp(rcx), 0)
		a.shiftImm(5, rcx, 4)
		a.encode(mnXorMR, 8, rax, regOp(rcx), 0)
	}
	switch cc &^ 1 {
	case gvinst.CondO:
		bit(11)
	case gvinst.CondB:
		bit(0)
	case gvinst.CondE:
		bit(6)
	case gvinst.CondBE:
		a.encodeForm(&fmTestMI, 4, 0, regOp(rax), int64(gvinst.FlagCF|gvinst.FlagZF))
		a.setcc(ccNE, rax)
	case gvinst.CondS:
		bit(7)
	case gvinst.CondP:
		bit(2)
	case gvinst.CondL:
		sfXorOF()
		a.encode(mnMovMR, 8, rcx, regOp(rax), 0)
		bit(7)
	default: // CondLE: ZF | (SF ^ OF)
		sfXorOF()
		a.shiftImm(5, rcx, 1)
		a.encode(mnOrMR, 8, rcx, regOp(rax), 0)
		bit(6)
	}
	if cc&1 != 0 {
		a.encode(mnXorMI, 4, 0, regOp(rax), 1)
	}
}

// flagsOps emits GETCC, GETFLAGS, SETFLAGS and the FLAGS kinds
// compile.go leaves out (none, inc, dec, the shifts and rotates). The
// routines read the flags slots from the frame, so those are flushed
// first; the code writes them through the register cache (put), or, where
// it may skip the write (a count of 0), in the frame directly.
func (c *compiler) flagsOps(idx int, in *gvinst.Inst) bool {
	a := &c.a
	t := in.Type
	var pre regCache
	// slow binds jumps to the callout of the whole instruction, resuming
	// after it; the instruction's code must have changed nothing before
	// any of them, and pre is the register cache where they leave.
	slow := func(jumps ...int) {
		c.out.resume[idx] = a.pos()
		c.slowJump(idx, &pre, jumps...)
	}
	switch in.Op {
	case gvinst.OpGetCC:
		c.flushFlags()
		pre = c.cache
		cc := gvinst.Cond(in.Mod)
		var done, jumps []int
		if bit, ok := subCondBit(cc); ok {
			// After a sub, these conditions compare a with b (as the
			// interpreter's getCC does).
			a.encodeForm(&fmCallM, 4, 0, memOp(fieldMem(offSubCondsFn)), 0)
			a.encode(mnCmpMI8, 8, 0, regOp(rax), -2)
			notSub := a.jcc(ccE)
			a.encode(mnCmpMI8, 8, 0, regOp(rax), -1)
			jumps = append(jumps, a.jcc(ccE))
			if bit != 0 {
				a.shiftImm(5, rax, bit)
			}
			a.encode(mnAndMI, 4, 0, regOp(rax), 1)
			if cc&1 != 0 {
				a.encode(mnXorMI, 4, 0, regOp(rax), 1)
			}
			done = append(done, a.jmp())
			a.bind(notSub, a.pos())
		}
		jumps = append(jumps, c.callStatusFlags())
		c.condFromFlags(cc)
		for _, j := range done {
			a.bind(j, a.pos())
		}
		c.put(in.Dst, rax)
		slow(jumps...)
		return true
	case gvinst.OpGetFlags:
		c.flushFlags()
		pre = c.cache
		j := c.callStatusFlags()
		c.rflagsFromStatus()
		c.put(in.Dst, rax)
		slow(j)
		return true
	case gvinst.OpSetFlags:
		c.srcTo(rax, in.Src[0])
		c.put(gvinst.RFLAGS, rax)
		c.putImm(gvinst.CCOp, 0)
		return true
	case gvinst.OpFlags:
	default:
		return false
	}
	if !t.IsInt() {
		return false
	}
	k := gvinst.FlagKind(in.Mod)
	switch k {
	case gvinst.FlagsNone:
		return true
	case gvinst.FlagsInc, gvinst.FlagsDec:
		// CCC = the previous CF.
		c.flushFlags()
		pre = c.cache
		j := c.callStatusFlags()
		a.encode(mnMovMR, 8, rax, regOp(rsi), 0)
		a.encode(mnAndMI, 4, 0, regOp(rsi), 1)
		c.srcTo(rax, in.Src[0])
		c.srcTo(rcx, in.Src[1])
		c.srcTo(rdx, in.Src[2])
		c.putImm(gvinst.CCOp, gvinst.CCOpValue(k, t))
		c.put(gvinst.CCA, rax)
		c.put(gvinst.CCB, rcx)
		c.put(gvinst.CCR, rdx)
		c.put(gvinst.CCC, rsi)
		slow(j)
		return true
	case gvinst.FlagsShl, gvinst.FlagsShr, gvinst.FlagsSar:
		if n, ok := c.loadedImm(in.Src[1], idx); ok {
			c.constCountRecord(in, k, n)
			return true
		}
		// A count of 0 leaves the flags alone: the record goes to the
		// frame, on one path only.
		c.srcTo(rax, in.Src[0])
		c.srcTo(rcx, in.Src[1])
		c.srcTo(rdx, in.Src[2])
		c.srcTo(rsi, in.Src[3])
		c.flushFlags()
		c.testCount(rcx, t)
		skip := a.jcc(ccE)
		c.record(k, t, rsi)
		a.bind(skip, a.pos())
		c.flagsWritten()
		return true
	case gvinst.FlagsRol, gvinst.FlagsRor:
		// Only CF and OF change, in RFLAGS; the record is cleared.
		c.flushFlags()
		pre = c.cache
		c.srcTo(rcx, in.Src[1])
		c.srcTo(rsi, in.Src[2])
		c.testCount(rcx, t)
		skip := a.jcc(ccE)
		j := c.callStatusFlags()
		c.rflagsFromStatus()
		a.encode(mnAndMI, 8, 0, regOp(rax), ^int64(gvinst.FlagCF|gvinst.FlagOF))
		// rax = RFLAGS without CF OF, rsi = r.
		n := uint8(t.Bits())
		cfBit, ofBit := n-1, n-2  // ror: CF = sign(r), OF = CF ^ bit n-2
		if k == gvinst.FlagsRol { // CF = bit 0, OF = sign(r) ^ CF
			cfBit, ofBit = 0, n-1
		}
		a.encode(mnMovMR, 8, rsi, regOp(rcx), 0)
		if cfBit != 0 {
			a.shiftImm(5, rcx, cfBit)
		}
		a.encode(mnAndMI, 4, 0, regOp(rcx), 1)
		a.encode(mnMovMR, 8, rsi, regOp(rdx), 0)
		if ofBit != 0 {
			a.shiftImm(5, rdx, ofBit)
		}
		a.encode(mnXorMR, 8, rcx, regOp(rdx), 0)
		a.encode(mnAndMI, 4, 0, regOp(rdx), 1)
		a.shiftImm(4, rdx, 11)
		a.encode(mnOrMR, 8, rcx, regOp(rax), 0)
		a.encode(mnOrMR, 8, rdx, regOp(rax), 0)
		a.encode(mnMovMR, 8, rax, memOp(slotMem(gvinst.RFLAGS)), 0)
		a.encode(mnMovMI, 8, 0, memOp(slotMem(gvinst.CCOp)), 0)
		slow(j)
		a.bind(skip, a.pos())
		c.flagsWritten()
		return true
	}
	return false
}

// flagsWritten records that the code wrote the flags slots in the frame.
func (c *compiler) flagsWritten() {
	for _, r := range flagsSlots {
		c.frameWritten(r)
	}
}

// loadedImm returns the value of virtual register r at instruction idx
// when the block's last write of it before idx is an LI.
func (c *compiler) loadedImm(r gvinst.Reg, idx int) (uint64, bool) {
	if !r.IsVirtual() {
		return 0, false
	}
	i := c.lastWriteBefore(r, idx)
	if i < 0 {
		return 0, false
	}
	if in := &c.vb.Insts[i]; in.Op == gvinst.OpLi && in.Dst == r && !in.Type.IsWide() {
		return uint64(in.Imm) & in.Type.Mask(), true
	}
	return 0, false
}

// constCountRecord emits a shift's FLAGS of kind k whose count is the
// constant n: nothing when n is 0 (read as the type's low bits: the
// flags stay as they were), else the record stored in the frame straight
// from where its values are, with no test.
func (c *compiler) constCountRecord(in *gvinst.Inst, k gvinst.FlagKind, n uint64) {
	a := &c.a
	t := in.Type
	if n&t.Mask() == 0 {
		return
	}
	// Every source is read (into a scratch register when it is only in
	// the frame) before any slot of the record is written.
	var ops [4]operand
	for i, s := range [4]reg{rax, rcx, rdx, rsi} {
		if ops[i] = c.operand(in.Src[i]); ops[i].isMem {
			a.encode(mnMovRM, 8, s, ops[i], 0)
			ops[i] = regOp(s)
		}
	}
	a.encode(mnMovMI, 8, 0, memOp(slotMem(gvinst.CCOp)), int64(gvinst.CCOpValue(k, t)))
	for i, slot := range [4]gvinst.Reg{gvinst.CCA, gvinst.CCB, gvinst.CCR, gvinst.CCC} {
		if i == 1 && n < 1<<31 {
			a.encode(mnMovMI, 8, 0, memOp(slotMem(slot)), int64(n))
			continue
		}
		a.encode(mnMovMR, 8, ops[i].r, memOp(slotMem(slot)), 0)
	}
	for _, slot := range [...]gvinst.Reg{gvinst.CCOp, gvinst.CCA, gvinst.CCB, gvinst.CCR, gvinst.CCC} {
		c.frameWritten(slot)
	}
}

// testCount sets ZF when the count in r, read as t's low bits, is 0.
func (c *compiler) testCount(r reg, t gvinst.Type) {
	if t.Size() == 8 {
		c.a.encode(mnTestMR, 8, r, regOp(r), 0)
		return
	}
	c.a.encodeForm(&fmTestMI, 4, 0, regOp(r), int64(uint32(t.Mask())))
}

// record stores the flags record of kind k and type t in the frame: a, b,
// r in rax, rcx, rdx and the carry in register cin.
func (c *compiler) record(k gvinst.FlagKind, t gvinst.Type, cin reg) {
	a := &c.a
	a.encode(mnMovMI, 8, 0, memOp(slotMem(gvinst.CCOp)), int64(gvinst.CCOpValue(k, t)))
	for _, s := range []struct {
		slot gvinst.Reg
		r    reg
	}{{gvinst.CCA, rax}, {gvinst.CCB, rcx}, {gvinst.CCR, rdx}, {gvinst.CCC, cin}} {
		a.encode(mnMovMR, 8, s.r, memOp(slotMem(s.slot)), 0)
	}
}

// rflagsFromStatus turns the status flags in rax into the whole RFLAGS
// value, from the frame's RFLAGS (clobbers rcx).
func (c *compiler) rflagsFromStatus() {
	a := &c.a
	a.encode(mnMovRM, 8, rcx, memOp(slotMem(gvinst.RFLAGS)), 0)
	a.encode(mnAndMI, 8, 0, regOp(rcx), ^int64(gvinst.FlagsArith))
	a.encode(mnOrMR, 8, rcx, regOp(rax), 0)
	a.encode(mnOrMI, 8, 0, regOp(rax), 2)
}

// typeShift emits, for the flags record in rax, rcx = 64 - t.Bits() of its
// type t (from the nibble table shiftNibbles), clobbering rdx. It returns
// the two jumps taken when the type is unknown: 16 or more (or a record
// with bits above the type), or a type whose nibble is 0xf.
func typeShift(a *asm) (bad1, bad2 int) {
	a.encode(mnMovMR, 8, rax, regOp(rcx), 0)
	a.shiftImm(5, rcx, 8)
	a.encode(mnCmpMI, 8, 0, regOp(rcx), 15)
	bad1 = a.jcc(ccA)
	a.shiftImm(4, rcx, 2)
	a.movImm64(rdx, shiftNibbles)
	a.encode(mnShrMCL, 8, 0, regOp(rdx), 0)
	a.encode(mnAndMI, 4, 0, regOp(rdx), 0xf)
	a.encode(mnCmpMI, 4, 0, regOp(rdx), 0xf)
	bad2 = a.jcc(ccE)
	a.encode(mnMovMR, 4, rdx, regOp(rcx), 0)
	a.shiftImm(4, rcx, 3)
	return bad1, bad2
}
