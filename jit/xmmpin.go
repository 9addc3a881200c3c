package jit

import "github.com/gxbit/gxbit/gvinst"

// SSE registers in host xmm registers.
//
// The pool of general registers holds frame slots, SSE registers' halves
// included; scalar float code then moves each operand from a general
// register into xmm0 and the result back (movq), which puts two moves on
// every step of a loop-carried float chain (sum += a[i]: 3 cycles an
// iteration natively, about 10 through general registers). A loop unit
// therefore keeps the low halves of the SSE registers it touches in host
// xmm registers (xmmPins) from its entry to its exits, as it pins general
// registers: loaded at the entry, stored at every exit (emitFlush, the
// back edge's fuel exit), reloaded after a callout (emitReload). Float
// arithmetic reads them in place (loadF, floatOperand) and a PUT of a
// value writes them (putXmm). Every other way into a slot, the operand
// API's, refuses one kept in an xmm register (notXmm): the unit is then
// compiled again without it (compileTrace), so the code that runs never
// reads or writes such a slot but through the paths above.

// xmmPins are the host xmm registers that hold guest slots: all but xmm0
// and xmm1 (every float instruction's scratch) and xmm7 (loadX's).
var xmmPins = [...]reg{2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15}

// maxXmmPinned is the most guest slots a loop unit keeps in xmm
// registers; the rest hold virtual registers.
const maxXmmPinned = len(xmmPins) - 4

// fmMovaps is movaps xmm, xmm/m128: a whole register copied.
var fmMovaps = form{op: []byte{0x0f, 0x28}, digit: -1}

// xmm0Value says that xmm0's low 64 bits are slot's value from the end of
// instruction inst's code, at code position pos, on.
type xmm0Value struct {
	slot  gvinst.Reg
	pos   int
	inst  int
	valid bool
}

// sseSet is a set of guest SSE registers: bit k stands for xk, whose low
// half is slot X0+2k.
type sseSet uint16

// sseBit returns the bit of the SSE register whose low half is slot r,
// or 0 when r is no SSE register's low half.
func sseBit(r gvinst.Reg) sseSet {
	if r < gvinst.X0 || r >= gvinst.X0+32 || (r-gvinst.X0)%2 != 0 {
		return 0
	}
	return 1 << ((r - gvinst.X0) / 2)
}

// pinXmm chooses, at a loop unit's entry, the guest SSE registers' low
// halves among uses (the slots the block names, by how often) that it
// keeps in xmm registers, and loads them. uses loses them, so that
// pinLoop does not pin them in general registers too.
func (c *compiler) pinXmm(uses *guestUses) {
	var buf [16]gvinst.Reg
	cands := buf[:0]
	for r, n := range uses {
		if b := sseBit(gvinst.Reg(r)); n > 0 && b != 0 && c.noXmm&b == 0 {
			cands = append(cands, gvinst.Reg(r))
		}
	}
	uses.sort(cands)
	if len(cands) > maxXmmPinned {
		cands = cands[:maxXmmPinned]
	}
	for i, r := range cands {
		c.xmmKept |= sseBit(r)
		c.xmmHome[(r-gvinst.X0)/2] = xmmPins[i]
		uses[r] = 0
	}
	c.nXmm = len(cands)
	c.loadXmm()
}

// xmmOf returns the xmm register a loop unit keeps guest slot r in, if it
// keeps r in one.
func (c *compiler) xmmOf(r gvinst.Reg) (reg, bool) {
	if b := sseBit(r); b != 0 && c.xmmKept&b != 0 {
		return c.xmmHome[(r-gvinst.X0)/2], true
	}
	return 0, false
}

// loadXmm loads the slots kept in xmm registers from the frame, in slot
// order.
func (c *compiler) loadXmm() {
	for k := range c.xmmHome {
		if c.xmmKept&(1<<k) != 0 {
			r := gvinst.X0 + gvinst.Reg(2*k)
			c.a.encode(mnMovqXR, 4, c.xmmHome[k], memOp(slotMem(r)), 0)
		}
	}
}

// storeXmm stores the slots kept in xmm registers that the unit writes,
// in slot order.
func (c *compiler) storeXmm() {
	for k := range c.xmmHome {
		if r := gvinst.X0 + gvinst.Reg(2*k); c.xmmKept&(1<<k) != 0 && c.loopWrites[r] {
			c.a.encode(mnMovqRX, 4, c.xmmHome[k], memOp(slotMem(r)), 0)
		}
	}
}

// xmmHeld reports whether an xmm register holds slot r, or is to (see
// notXmm).
func (c *compiler) xmmHeld(r gvinst.Reg) bool {
	if c.cache.findX(r) >= 0 {
		return true
	}
	_, ok := c.xmmOf(r)
	return ok
}

// notXmm records that the code needs slot r (renamed) where an xmm
// register cannot serve: a virtual register's value moves to a pool
// register; when the unit keeps guest slot r in one, this compilation is
// refused.
func (c *compiler) notXmm(r gvinst.Reg) {
	if k := c.cache.findX(r); k >= 0 {
		// A virtual register moves to a pool register, where the code
		// that needs it finds it.
		i := c.alloc()
		c.a.encode(mnMovqRX, 4, xmmPins[k], regOp(pool[i]), 0)
		c.cache.e[i] = cacheEntry{valid: true, dirty: true, slot: r}
		c.cache.x[k] = xmmEntry{}
		return
	}
	if _, ok := c.xmmOf(r); ok {
		c.xmmRefused |= sseBit(r)
	}
}

// putXmm emits PUT.u64 of v into slot s when the unit keeps s in an xmm
// register: a copy of xmm0 when the float code just before left v there,
// else a movq from v's register or slot. It reports whether s is kept so.
func (c *compiler) putXmm(s, v gvinst.Reg) bool {
	k, ok := c.xmmOf(s)
	if !ok {
		return false
	}
	if c.x0Holds(v) {
		c.a.encodeForm(&fmMovaps, 4, k, regOp(0), 0)
		return true
	}
	if j, ok := c.inXmm(c.aliased(v)); ok {
		c.a.encodeForm(&fmMovaps, 4, k, regOp(j), 0)
		return true
	}
	c.a.encode(mnMovqXR, 4, k, c.operand(v), 0)
	return true
}

// x0Holds reports whether xmm0's low 64 bits are slot r's value (renamed)
// here: the float code that left it there ends where this instruction's
// begins, and the instructions between make no code.
func (c *compiler) x0Holds(r gvinst.Reg) bool {
	x := c.x0
	if !x.valid || x.pos != c.a.pos() || x.slot != c.aliased(r) {
		return false
	}
	for i := x.inst + 1; i < c.cur; i++ {
		if !c.isAliasDef(i, &c.vb.Insts[i]) && !c.skip[i] {
			return false
		}
	}
	return true
}

// moveWideXmm emits a 128-bit GET, PUT or MOV whose destination's or
// source's low half the unit keeps in an xmm register: that half by a
// register copy or a movq, the high half as any slot. It reports false,
// having emitted nothing, when neither half is kept so (or the two
// overlap).
func (c *compiler) moveWideXmm(in *gvinst.Inst) bool {
	d, s := in.Dst, in.Src[0]
	if d == s+1 || d+1 == s {
		return false
	}
	dk, dIn := c.xmmOf(d)
	sk, sIn := c.inXmm(c.aliased(s))
	if !dIn && !sIn {
		return false
	}
	hi := c.src(s + 1)
	switch {
	case dIn && sIn:
		c.a.encodeForm(&fmMovaps, 4, dk, regOp(sk), 0)
	case dIn:
		c.a.encode(mnMovqXR, 4, dk, c.operand(s), 0)
	default:
		r := c.dstReg(d)
		c.a.encode(mnMovqRX, 4, sk, regOp(r), 0)
		c.unlock(r)
	}
	c.put(d+1, hi)
	return true
}

// xmmEntry is what one xmm register of xmmPins holds for a virtual
// register (regCache.x).
type xmmEntry struct {
	valid bool
	slot  gvinst.Reg
}

// findX returns the index in xmmPins of the register holding virtual
// register r, or -1.
func (rc *regCache) findX(r gvinst.Reg) int {
	for k := range rc.x {
		if rc.x[k].valid && rc.x[k].slot == r {
			return k
		}
	}
	return -1
}

// inXmm returns the xmm register that holds slot r (renamed): a guest
// slot the unit keeps in one, or a virtual register's float value.
func (c *compiler) inXmm(r gvinst.Reg) (reg, bool) {
	if k, ok := c.xmmOf(r); ok {
		return k, true
	}
	if k := c.cache.findX(r); k >= 0 {
		return xmmPins[k], true
	}
	return 0, false
}

// putVirtualXmm makes xmm0's low 64 bits virtual register r's value in a
// free xmm register (a copy), when r is virtual and has none; when none is
// free, the value there read again furthest ahead (later than r) moves to
// a pool register first. It reports whether it did. The unit's pinned slots take the first
// registers of xmmPins.
func (c *compiler) putVirtualXmm(r gvinst.Reg) bool {
	if !r.IsVirtual() || c.cache.find(r) >= 0 || c.cache.findX(r) >= 0 {
		return false
	}
	free, far, farNext := -1, -1, c.nextRead(r)
	for k := c.nXmm; k < len(xmmPins); k++ {
		x := c.cache.x[k]
		if !x.valid {
			free = k
			break
		}
		if n := c.nextRead(x.slot); n > farNext {
			far, farNext = k, n
		}
	}
	if free < 0 && far >= 0 {
		// The value read again furthest ahead, later than r, moves to a
		// pool register.
		c.notXmm(c.cache.x[far].slot)
		free = far
	}
	if free < 0 {
		return false
	}
	c.a.encodeForm(&fmMovaps, 4, xmmPins[free], regOp(0), 0)
	c.cache.x[free] = xmmEntry{valid: true, slot: r}
	return true
}

// storeVirtualXmm stores the virtual registers cache state st holds in
// xmm registers, for a callout.
func (c *compiler) storeVirtualXmm(st *regCache) {
	for k, x := range st.x {
		if x.valid {
			c.a.encode(mnMovqRX, 4, xmmPins[k], memOp(slotMem(x.slot)), 0)
		}
	}
}

// loadVirtualXmm reloads the virtual registers cache state st holds in
// xmm registers, after a callout.
func (c *compiler) loadVirtualXmm(st *regCache) {
	for k, x := range st.x {
		if x.valid {
			c.a.encode(mnMovqXR, 4, xmmPins[k], memOp(slotMem(x.slot)), 0)
		}
	}
}
