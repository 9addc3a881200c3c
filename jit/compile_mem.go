package jit

import (
	"github.com/gxbit/gxbit/gvinst"
)

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
	// The base register, or the parts of a folded address.
	at := mem{}
	if ad, ok := c.addr.get(in.Src[0]); ok && c.cur > ad.from {
		at = mem{base: c.src(ad.base), index: c.src(ad.index), scale: ad.scale, hasIndex: true}
	} else {
		at.base = c.src(in.Src[0])
	}
	var val [2]reg
	if isStore {
		val[0] = c.src(in.Src[1])
		if sz == 16 {
			val[1] = c.src(in.Src[1] + 1)
		}
	}
	// A load's destination register is taken before the paths split (it
	// may evict something); the slow path does not count it as written.
	var d reg
	var taken []takenReg
	_, grouped := c.memberOf(idx)
	x := -1 // the xmm register (index in xmmPins) a float load goes to
	if !isStore && !grouped {
		x = c.floatLoadX(idx, in)
	}
	if !isStore && x < 0 {
		d = c.takeDst(&taken, in.Dst)
	}
	if m, ok := c.memberOf(idx); ok {
		c.groupAccess(idx, in, isStore, sz, m, at.base, d, val, taken)
		return true
	}
	pre := c.cache
	revert(&pre, taken)
	site := c.newSite()
	if end := in.Imm + int64(sz); site < 0 && !at.hasIndex && in.Imm == int64(int32(in.Imm)) && end == int64(int32(end)) {
		// The probe and the access address base+imm themselves.
		at.disp = int32(in.Imm)
		tlb := offRTLB
		if isStore {
			tlb = offWTLB
		}
		miss, entry := c.emitConstProbe(tlb, sz, in, idx)
		if miss < 0 {
			miss, entry = c.emitProbe(tlb, sz, at)
		}
		a.encode(mnMovRM, 8, rcx, hostWord(entry), 0)
		c.emitAccessX(in, isStore, sz, d, x, val, mem{base: rcx, index: at.base, scale: 1, hasIndex: true, disp: at.disp})
		if !isStore {
			c.loaded(in, d, x)
			if sz == 16 {
				c.put(in.Dst+1, rdx)
			}
		}
		c.out.resume[idx] = a.pos()
		c.slowJump(idx, &pre, miss)
		return true
	}
	// rsi = the address
	switch {
	case in.Imm == 0 && !at.hasIndex:
		a.encode(mnMovMR, 8, at.base, regOp(rsi), 0)
	case in.Imm == int64(int32(in.Imm)):
		at.disp = int32(in.Imm)
		a.encode(mnLea, 8, rsi, memOp(at), 0)
	default:
		a.encode(mnLea, 8, rsi, memOp(at), 0)
		a.movImm(rcx, uint64(in.Imm))
		a.encode(mnAddMR, 8, rcx, regOp(rsi), 0)
	}
	var jumps []int
	var probeAt int // the slow path the full probe's miss joins
	var access int  // the access itself: rcx = page data, rax = offset in the page
	if site >= 0 {
		// The site's page: rax = the offset from its start, which must
		// leave the access inside it, and the copy must be of the TLB
		// generation Go entered with.
		sm := func(field int32) operand {
			return memOp(mem{base: r15, disp: int32(offSites) + int32(site)*siteBytes + field})
		}
		a.encode(mnMovMR, 8, rsi, regOp(rax), 0)
		a.encode(mnSubRM, 8, rax, sm(0), 0)
		a.encode(mnCmpMI, 8, 0, regOp(rax), int64(gvinst.PageSize-sz))
		j1 := a.jcc(ccA)
		a.encode(mnMovRM, 8, rdx, memOp(fieldMem(offTLBGen)), 0)
		a.encode(mnCmpMR, 8, rdx, sm(16), 0)
		j2 := a.jcc(ccNE)
		a.encode(mnMovRM, 8, rcx, sm(8), 0)
		access = a.pos()
		c.emitAccessX(in, isStore, sz, d, x, val, mem{base: rcx, index: rax, scale: 1, hasIndex: true})
		tlb := offRTLB
		if isStore {
			tlb = offWTLB
		}
		c.outOfLine = append(c.outOfLine, func() {
			a.bind(j1, a.pos())
			a.bind(j2, a.pos())
			miss, entry := c.emitProbe(tlb, sz, mem{base: rsi})
			// Hit: remember the page for this site, then access.
			a.encode(mnMovMR, 8, rsi, regOp(rax), 0)
			a.encode(mnAndMI, 8, 0, regOp(rax), -gvinst.PageSize)
			a.encode(mnMovMR, 8, rax, sm(0), 0)
			a.encode(mnMovRM, 8, rcx, hostWord(entry), 0)
			a.encode(mnAddMR, 8, rax, regOp(rcx), 0)
			a.encode(mnMovMR, 8, rcx, sm(8), 0)
			a.encode(mnMovRM, 8, rdx, memOp(fieldMem(offTLBGen)), 0)
			a.encode(mnMovMR, 8, rdx, sm(16), 0)
			a.encode(mnMovMR, 8, rsi, regOp(rax), 0)
			a.encode(mnAndMI, 4, 0, regOp(rax), gvinst.PageSize-1)
			a.bind(a.jmp(), access)
			c.slowAt[probeAt].jumps = append(c.slowAt[probeAt].jumps, miss)
		})
	} else {
		tlb := offRTLB
		if isStore {
			tlb = offWTLB
		}
		miss, entry := c.emitProbe(tlb, sz, mem{base: rsi})
		jumps = append(jumps, miss)
		a.encode(mnMovRM, 8, rcx, hostWord(entry), 0)
		c.emitAccessX(in, isStore, sz, d, x, val, mem{base: rcx, index: rsi, scale: 1, hasIndex: true})
	}
	if !isStore {
		c.loaded(in, d, x)
		if sz == 16 {
			c.put(in.Dst+1, rdx)
		}
	}
	c.out.resume[idx] = a.pos()
	probeAt = len(c.slowAt)
	c.slowJump(idx, &pre, jumps...)
	return true
}

// emitProbe emits the software TLB probe of the access of sz bytes at
// address at, a register plus a displacement whose sum with sz fits 32
// bits (tlb: the read or the write TLB's field), and returns the jump
// its miss takes and, for a hit, the TLB entry's memory operand, whose
// word at 8 added to a guest address of the page is its host address. It
// uses rcx and rdx; the entry's operand reads rcx (and r15).
func (c *compiler) emitProbe(tlb uintptr, sz int, at mem) (miss int, entry mem) {
	a := &c.a
	// rcx = the byte offset of the first byte's page's TLB entry
	// (gvinst.TLBSlot): its page number's low bits, scaled to the entry
	// size in one shift.
	c.emitAddress(rcx, at, 0)
	a.shiftImm(5, rcx, tlbEntryShift)
	a.encode(mnAndMI, 4, 0, regOp(rcx), (gvinst.TLBSlots-1)*gvinst.TLBEntryBytes)
	entry = c.tlbEntry(tlb)
	// rdx = the tag of the last byte's page: a hit means both are the
	// entry's page, since consecutive pages never share an entry.
	c.emitAddress(rdx, at, int32(sz-1))
	a.encode(mnOrMI, 8, 0, regOp(rdx), gvinst.PageSize-1)
	a.encode(mnCmpMR, 8, rdx, memOp(entry), 0)
	return a.jcc(ccNE), entry
}

// emitConstProbe emits the probe of LD or ST in (instruction idx, sz
// bytes) when its base register holds a constant (an LI of the block) and
// the unit addresses TLB entries from r15: the entry and the tag are known
// here, so the probe is a compare of the entry with the tag, whatever the
// base register's value arrives late. It returns the miss jump and the
// entry, or -1 when it emitted nothing (no constant, an access across a
// page, a TLB out of a displacement's reach).
func (c *compiler) emitConstProbe(tlb uintptr, sz int, in *gvinst.Inst, idx int) (miss int, entry mem) {
	base, ok := c.loadedImm(in.Src[0], idx)
	d := c.tlbFromMachine[0]
	if tlb == offWTLB {
		d = c.tlbFromMachine[1]
	}
	addr := base + uint64(in.Imm)
	if !ok || d == 0 || addr%gvinst.PageSize+uint64(sz) > gvinst.PageSize {
		return -1, mem{}
	}
	at := d + int64(gvinst.TLBSlot(addr/gvinst.PageSize)*gvinst.TLBEntryBytes)
	if at != int64(int32(at)) || at+8 != int64(int32(at+8)) {
		return -1, mem{}
	}
	entry = mem{base: r15, disp: int32(at)}
	c.a.movImm(rdx, addr|(gvinst.PageSize-1))
	c.a.encode(mnCmpMR, 8, rdx, memOp(entry), 0)
	return c.a.jcc(ccNE), entry
}

// tlbEntry returns the memory operand of the entry of TLB tlb (a field
// offset: offRTLB or offWTLB) at byte offset rcx: from r15 when the
// unit's machine lies within a 32-bit displacement of its Memory's TLBs
// (compiler.tlbFromMachine), else from rcx once it holds the entry's
// address.
func (c *compiler) tlbEntry(tlb uintptr) mem {
	d := c.tlbFromMachine[0]
	if tlb == offWTLB {
		d = c.tlbFromMachine[1]
	}
	if d != 0 && d == int64(int32(d)) {
		return mem{base: r15, index: rcx, scale: 1, hasIndex: true, disp: int32(d)}
	}
	c.a.encode(mnAddRM, 8, rcx, memOp(fieldMem(tlb)), 0)
	return mem{base: rcx}
}

// hostWord returns the operand of a TLB entry's host word.
func hostWord(entry mem) operand {
	entry.disp += 8
	return memOp(entry)
}

// tlbEntryShift turns an address into its TLB entry's byte offset (before
// the mask): the page number times gvinst.TLBEntryBytes.
const tlbEntryShift = 12 - 5

// emitAddress sets d to the address at plus more.
func (c *compiler) emitAddress(d reg, at mem, more int32) {
	at.disp += more
	if at.disp == 0 && !at.hasIndex {
		c.a.encode(mnMovMR, 8, at.base, regOp(d), 0)
		return
	}
	c.a.encode(mnLea, 8, d, memOp(at), 0)
}

// emitAccess emits the load or store itself at host address at: into
// register d, or of the value registers val (and the high half of a 16-byte
// load into rdx).
func (c *compiler) emitAccess(in *gvinst.Inst, isStore bool, sz int, d reg, val [2]reg, at mem) {
	a := &c.a
	hi := at
	hi.disp += 8
	if isStore {
		switch sz {
		case 1:
			a.encode(mnMovMR8, 1, val[0], memOp(at), 0)
		case 2, 4, 8:
			a.encode(mnMovMR, sz, val[0], memOp(at), 0)
		case 16:
			a.encode(mnMovMR, 8, val[0], memOp(at), 0)
			a.encode(mnMovMR, 8, val[1], memOp(hi), 0)
		}
		return
	}
	if sz == 16 {
		a.encode(mnMovRM, 8, rdx, memOp(hi), 0)
	}
	switch sz {
	case 1:
		a.encode(mnMovzx8, 4, d, memOp(at), 0)
	case 2:
		a.encode(mnMovzx16, 4, d, memOp(at), 0)
	case 4:
		a.encode(mnMovRM, 4, d, memOp(at), 0)
	case 8, 16:
		a.encode(mnMovRM, 8, d, memOp(at), 0)
	}
}

// newSite returns a page cache entry for the next access of a loop unit,
// or -1.
func (c *compiler) newSite() int {
	if !c.loop || c.siteNext < 0 || c.siteNext >= maxSites {
		return -1
	}
	c.siteNext++
	c.out.sites++
	return c.siteNext - 1
}

// emitAccessX is emitAccess, into xmm register xmmPins[x] instead of d
// when x is not -1 (a load of 4 or 8 bytes: movss, movsd).
func (c *compiler) emitAccessX(in *gvinst.Inst, isStore bool, sz int, d reg, x int, val [2]reg, at mem) {
	if x < 0 {
		c.emitAccess(in, isStore, sz, d, val, at)
		return
	}
	m := mnMovsdRM
	if sz == 4 {
		m = mnMovssRM
	}
	c.a.encode(m, 4, xmmPins[x], memOp(at), 0)
}

// loaded ends a load's code: its destination is in d, or in xmm register
// xmmPins[x] when x is not -1.
func (c *compiler) loaded(in *gvinst.Inst, d reg, x int) {
	if x < 0 {
		c.unlock(d)
		return
	}
	c.cache.x[x] = xmmEntry{valid: true, slot: in.Dst}
}

// floatLoadReach is how far after a float load (in instructions) its value
// may last be read for floatLoadX to load it into an xmm register.
const floatLoadReach = 16

// floatLoadX returns the free xmm register (its index in xmmPins) that
// load idx of 4 or 8 bytes loads into, when the first instruction that
// makes code of its value is float arithmetic or a PUT into an SSE
// register kept in an xmm register, and none reads it more than
// floatLoadReach instructions on; or -1 for a pool register.
// A later reader that needs it elsewhere moves it (notXmm).
func (c *compiler) floatLoadX(idx int, in *gvinst.Inst) int {
	sz := in.Type.Size()
	v := in.Dst
	if sz != 4 && sz != 8 || in.Type.IsWide() || !v.IsVirtual() || c.cache.find(v) >= 0 || c.cache.findX(v) >= 0 {
		return -1
	}
	first := -1
	for _, i := range c.reads.of(v) {
		if i > idx && !c.isAliasDef(i, &c.vb.Insts[i]) {
			first = i
			break
		}
	}
	// A value read far ahead would hold its xmm register against the
	// float temporaries between (a stencil's loads): a pool register
	// then.
	if rs := c.reads.of(v); first < 0 || rs[len(rs)-1] > idx+floatLoadReach {
		return -1
	}
	r := &c.vb.Insts[first]
	switch r.Op {
	case gvinst.OpAdd, gvinst.OpSub, gvinst.OpMul, gvinst.OpDiv, gvinst.OpSqrt, gvinst.OpCvt, gvinst.OpCmp:
		if r.Type != gvinst.F32 && r.Type != gvinst.F64 && r.SrcType != gvinst.F32 && r.SrcType != gvinst.F64 {
			return -1
		}
	case gvinst.OpPut:
		if _, ok := c.xmmOf(r.Dst); !ok {
			return -1 // not into an SSE register kept in an xmm register
		}
	default:
		return -1
	}
	for k := c.nXmm; k < len(xmmPins); k++ {
		if !c.cache.x[k].valid {
			return k
		}
	}
	return -1
}
