package jit

import (
	"github.com/gxbit/gxbit/gvinst"
)

// Page groups: one TLB probe for the accesses of a unit at constant
// offsets from one base value (a function's stack slots at rsp+8..rsp+0xa4,
// also after a push moved rsp; a structure's fields), instead of one per
// access.
//
// A base value is tracked through the unit's copies and constant sums
// (gvinst.AddressValues): each base register holds some root value plus a
// known delta. The group's first access probes one TLB for the whole range
// root+minOff .. root+maxEnd-1, which spans at most a page: the write TLB
// if the group stores (it holds only pages that are readable too), else
// the read TLB. On a hit the range lies in one page the TLB vouches for,
// and the group's host root, the root plus the entry's host word, is kept
// in a register of its own (a pseudo virtual register past the block's, so
// the register cache spills and reloads it like any other). Every access
// of the group is then one host instruction at [host root + delta +
// offset], after a compare of the host root with 1: 0 means "probe again"
// (set after every callout, since Go may have changed the TLB: a page that
// was the shared zero page got bytes of its own, a mapping changed), 1
// means the range does not lie in one page the TLB holds, and the access
// takes its own probe and, on a miss, its callout, exactly as an access
// outside a group: faults stay precise and stores into translated code
// still reach Go.

// pageGroup is a set of loads and stores from one root value.
type pageGroup struct {
	root        int        // the root value's number
	slot        gvinst.Reg // the pseudo register holding the host root
	minOff      int32      // the lowest offset accessed, from the root
	maxEnd      int32      // the highest offset accessed plus its size
	read, write bool       // it loads, it stores
	first, last int        // the indexes of its first and last access
	n           int        // its accesses
}

// groupMember says an access is in group g, its base register holding
// the group's root plus delta; g -1 says it is in none.
type groupMember struct {
	g     int
	delta int32
}

// groupable reports the size of LD or ST in when it may join a page
// group: a plain base+offset access of 1 to 16 bytes (8 for a store, which
// with its two value registers, the base and the host root would lock
// more pool registers than a loop unit leaves unpinned); else 0.
func groupable(in *gvinst.Inst, addr addrTable, i int) int32 {
	if in.Op != gvinst.OpLd && in.Op != gvinst.OpSt {
		return 0
	}
	sz := in.Type.Size()
	switch sz {
	case 1, 2, 4, 8:
	case 16:
		if in.Op == gvinst.OpSt {
			return 0
		}
	default:
		return 0
	}
	if ad, ok := addr.get(in.Src[0]); ok && i > ad.from {
		return 0
	}
	return int32(sz)
}

// maxGroupOffset bounds the offsets from a root a group takes, so that
// every displacement the code computes fits 32 bits.
const maxGroupOffset = 1 << 28

// findPageGroups finds the page groups of the unit: accesses from one
// root value (gvinst.AddressValues) whose offsets span at most a page.
// Groups of one access are dropped (the access's own probe costs the
// same). Pseudo registers are numbered from firstSlot. It sets groups and
// groupOf.
func (f *unitFacts) findPageGroups(firstSlot gvinst.Reg) {
	vb := f.vb
	addrs := gvinst.AddressValues(vb)
	all := f.allGroups[:0]
	member := reuse(f.groupOf, len(vb.Insts))
	open := f.groupNum[:0] // root → the group being gathered, plus one (0: none)
	for i := range vb.Insts {
		member[i].g = -1
		in := &vb.Insts[i]
		if sz := groupable(in, f.addr, i); sz > 0 {
			av := addrs[i]
			if delta := av.Off - in.Imm; delta > -maxGroupOffset && delta < maxGroupOffset && av.Off > -maxGroupOffset && av.Off < maxGroupOffset {
				off := int32(av.Off)
				for av.Root >= len(open) {
					open = append(open, 0)
				}
				g, ok := open[av.Root]-1, open[av.Root] > 0
				if ok && max(all[g].maxEnd, off+sz)-min(all[g].minOff, off) > gvinst.PageSize {
					ok = false
				}
				if !ok {
					g = len(all)
					all = append(all, pageGroup{root: av.Root, minOff: off, maxEnd: off + sz, first: i})
					open[av.Root] = g + 1
				}
				pg := &all[g]
				pg.minOff, pg.maxEnd = min(pg.minOff, off), max(pg.maxEnd, off+sz)
				pg.read = pg.read || in.Op == gvinst.OpLd
				pg.write = pg.write || in.Op == gvinst.OpSt
				pg.last = i
				pg.n++
				member[i] = groupMember{g: g, delta: int32(delta)}
			}
		}
	}
	groups := f.groups[:0]
	renum := reuse(open, len(all)) // the kept groups' numbers, -1 for the dropped
	for g := range all {
		renum[g] = -1
		if all[g].n >= 2 {
			renum[g] = len(groups)
			all[g].slot = firstSlot + gvinst.Reg(len(groups))
			groups = append(groups, all[g])
		}
	}
	for i, m := range member {
		if m.g >= 0 {
			member[i].g = renum[m.g]
		}
	}
	f.groups, f.groupOf, f.allGroups, f.groupNum = groups, member, all, renum
}

// takenReg is a pool register an instruction took before its paths split,
// with what it held: the slow path's cache does not count it as written.
type takenReg struct {
	at     int
	before cacheEntry
}

// takeDst returns dstReg(r), recording in taken what its pool register
// held.
func (c *compiler) takeDst(taken *[]takenReg, r gvinst.Reg) reg {
	var before cacheEntry
	if i := c.cache.find(r); i >= 0 {
		before = c.cache.e[i]
	}
	d := c.dstReg(r)
	for i, p := range pool {
		if p == d {
			*taken = append(*taken, takenReg{i, before})
		}
	}
	return d
}

// revert gives the registers in taken back what they held in cache st.
func revert(st *regCache, taken []takenReg) {
	for k := len(taken) - 1; k >= 0; k-- {
		st.e[taken[k].at] = taken[k].before
	}
}

// groupAccess emits the LD or ST idx of sz bytes, member m of a page
// group, from base register base: into d, or of the values in val.
func (c *compiler) groupAccess(idx int, in *gvinst.Inst, isStore bool, sz int, m groupMember, base, d reg, val [2]reg, taken []takenReg) {
	g := &c.groups[m.g]
	a := &c.a
	var h reg
	first := idx == g.first
	if first {
		h = c.takeDst(&taken, g.slot)
	} else {
		c.src(g.slot)
		h = c.dstReg(g.slot) // the out-of-line code may write it
	}
	pre := c.cache
	revert(&pre, taken)
	var toProbe, toOwn int
	if first {
		toProbe = -1
	} else {
		// cmp h, 1; jbe → probe again (0) or this access's own probe (1)
		a.encode(mnCmpMI8, 8, 0, regOp(h), 1)
		toProbe = a.jcc(ccBE)
	}
	var misses []int
	if first {
		misses = c.emitGroupProbe(g, base, m.delta, h)
	}
	access := a.pos()
	c.emitAccess(in, isStore, sz, d, val, mem{base: h, disp: m.delta + int32(in.Imm)})
	join := a.pos()
	if !isStore {
		c.unlock(d)
		if sz == 16 {
			c.put(in.Dst+1, rdx)
		}
	}
	resume := a.pos()
	c.out.resume[idx] = resume
	post := c.cache
	c.outOfLine = append(c.outOfLine, func() {
		if !first {
			a.bind(toProbe, a.pos())
			toOwn = a.jcc(ccE) // h is 1
			misses = c.emitGroupProbe(g, base, m.delta, h)
			a.bind(a.jmp(), access)
		}
		for _, j := range misses {
			a.bind(j, a.pos())
		}
		a.movImm(h, 1)
		if !first {
			a.bind(toOwn, a.pos())
		}
		// This access's own probe, as outside a group.
		tlb := offRTLB
		if isStore {
			tlb = offWTLB
		}
		miss, entry := c.emitProbe(tlb, sz, mem{base: base, disp: int32(in.Imm)})
		a.encode(mnMovRM, 8, rcx, hostWord(entry), 0)
		c.emitAccess(in, isStore, sz, d, val, mem{base: rcx, index: base, scale: 1, hasIndex: true, disp: int32(in.Imm)})
		a.bind(a.jmp(), join)
		c.slowAt = append(c.slowAt, slowPath{jumps: []int{miss}, idx: idx, back: resume, pre: pre, post: post})
	})
}

// emitGroupProbe probes the TLBs group g needs for its whole range from
// base register base, which holds the group's root plus delta, and, on a
// hit, sets h to the host address of the root. It returns the jumps its
// misses take.
func (c *compiler) emitGroupProbe(g *pageGroup, base reg, delta int32, h reg) []int {
	a := &c.a
	span := int(g.maxEnd - g.minOff)
	// A group that stores probes the write TLB alone: its pages are
	// readable too (gvinst.TLBSlots).
	tlb := offRTLB
	if g.write {
		tlb = offWTLB
	}
	miss, entry := c.emitProbe(tlb, span, mem{base: base, disp: g.minOff - delta})
	a.encode(mnMovRM, 8, h, hostWord(entry), 0)
	a.encode(mnLea, 8, h, memOp(mem{base: h, index: base, scale: 1, hasIndex: true, disp: -delta}), 0)
	return []int{miss}
}

// emitGroupsInvalid marks every page group whose accesses span instruction
// idx as to be probed again: Go ran code (a callout) that may have changed
// the TLBs. It writes the frame slots; the caller reloads the registers.
func (c *compiler) emitGroupsInvalid(idx int) {
	for k := range c.groups {
		if g := &c.groups[k]; g.first <= idx && idx < g.last {
			c.a.encode(mnMovMI, 8, 0, memOp(slotMem(g.slot)), 0)
		}
	}
}
