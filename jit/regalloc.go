package jit

import (
	"fmt"
	"sort"

	"github.com/gxbit/gxbit/gvinst"
)

// The host registers of a unit.
//
//   - r15: the machine (frame, TLBs).
//   - rbp (fuelReg): the fuel, guest instructions left (machine.fuel
//     while Go runs; enter loads and stores it).
//   - rax, rcx, rdx, rsi: scratch, free within one instruction's code.
//   - pool (rbx, rdi, r8-r14): copies of frame slots, write-back: a value
//     computed into a pool register reaches the frame only when the unit
//     leaves (a successor exit, a callout, the fuel exit) or when the
//     register is taken for another slot. Virtual registers die with the
//     block, so block exits store only guest slots; callouts store every
//     dirty slot, since the interpreter reads the frame.
//
// In a loop unit the guest registers the block uses most are pinned: loaded
// into pool registers once at the unit's entry and kept there across
// iterations (see compiler.pinLoop).
var pool = [...]reg{rbx, rdi, r8, r9, r10, r11, r12, r13, r14}

// cacheEntry is what one pool register holds.
type cacheEntry struct {
	valid  bool
	dirty  bool // newer than the frame slot
	pinned bool // a loop-carried guest register, never evicted
	slot   gvinst.Reg
	used   uint32 // when last used, for eviction
}

// regCache is the state of the pool at one point of a unit's code. It is a
// value: slow paths keep copies of it.
type regCache struct {
	e    [len(pool)]cacheEntry
	tick uint32
	// x are the xmm registers of xmmPins that hold virtual registers'
	// float values (see xmmpin.go): slot x[k] is in xmmPins[k].
	x [len(xmmPins)]xmmEntry
}

// find returns the pool index holding slot r, or -1.
func (rc *regCache) find(r gvinst.Reg) int {
	for i := range rc.e {
		if rc.e[i].valid && rc.e[i].slot == r {
			return i
		}
	}
	return -1
}

// The operand API. Code generators for an instruction call these; they keep
// the register cache and the frame consistent. Within one instruction the
// registers they return stay valid (they are locked against eviction until
// the next instruction starts).
//
//	src(r) reg                       a register holding slot r (read only)
//	operand(r) operand               slot r as an r/m operand, allocating nothing
//	srcTo(d, r)                      copy slot r into scratch register d
//	srcExt(d, r, size, signed)       slot r's low size bytes into scratch d, extended
//	dstReg(r) reg                    the register that receives slot r's new value
//	put(r, s)                        scratch (or src) register s is slot r's new value
//	putImm(r, v)                     the constant v is slot r's new value
//	frame(r) mem                     slot r in the frame, current, for a direct read
//	frameWritten(r)                  the code wrote slot r in the frame directly

// beginInst starts the code of one instruction: nothing is locked.
func (c *compiler) beginInst() { c.locked = 0 }

// lock keeps pool register i from eviction until the next instruction.
func (c *compiler) lock(i int) {
	c.locked |= 1 << i
	c.touch(i)
}

func (c *compiler) touch(i int) {
	c.cache.tick++
	c.cache.e[i].used = c.cache.tick
}

// storeEntry emits the store of pool register i to its slot.
func (c *compiler) storeEntry(i int) {
	e := &c.cache.e[i]
	c.a.encode(mnMovMR, 8, pool[i], memOp(slotMem(e.slot)), 0)
	e.dirty = false
}

// alloc returns a free pool register, evicting (and storing, if dirty)
// the unlocked, unpinned one whose slot the unit reads again furthest
// ahead (never, best), a clean one on a tie, then the least recently used.
func (c *compiler) alloc() int {
	best, bestNext := -1, 0
	for i := range c.cache.e {
		e := &c.cache.e[i]
		if !e.valid {
			return i
		}
		if e.pinned || c.locked&(1<<i) != 0 {
			continue
		}
		next := c.nextRead(e.slot)
		if best < 0 || next > bestNext ||
			next == bestNext && (!e.dirty && c.cache.e[best].dirty ||
				e.dirty == c.cache.e[best].dirty && e.used < c.cache.e[best].used) {
			best, bestNext = i, next
		}
	}
	if best < 0 {
		panic("jit: every pool register is locked or pinned")
	}
	if c.cache.e[best].dirty {
		c.storeEntry(best)
	}
	c.cache.e[best] = cacheEntry{}
	return best
}

// src returns a register holding slot r, loading it into the cache if it is
// not there. The caller must not change it.
func (c *compiler) src(r gvinst.Reg) reg {
	r = c.aliased(r)
	c.notXmm(r)
	i := c.cache.find(r)
	if i < 0 {
		i = c.alloc()
		c.a.encode(mnMovRM, 8, pool[i], memOp(slotMem(r)), 0)
		c.cache.e[i] = cacheEntry{valid: true, slot: r}
	}
	c.lock(i)
	return pool[i]
}

// srcTo copies slot r into scratch register d.
func (c *compiler) srcTo(d reg, r gvinst.Reg) {
	r = c.aliased(r)
	c.notXmm(r)
	if i := c.cache.find(r); i >= 0 {
		c.touch(i)
		c.a.encode(mnMovMR, 8, pool[i], regOp(d), 0)
		return
	}
	c.a.encode(mnMovRM, 8, d, memOp(slotMem(r)), 0)
}

// operand returns slot r as an r/m operand: its register copy, or the
// frame slot (which is then current). It allocates nothing.
func (c *compiler) operand(r gvinst.Reg) operand {
	r = c.aliased(r)
	c.notXmm(r)
	if i := c.cache.find(r); i >= 0 {
		c.touch(i)
		return regOp(pool[i])
	}
	return memOp(slotMem(r))
}

// srcExt loads slot r's low size bytes into scratch register d, zero- or
// sign-extended to 64 bits.
func (c *compiler) srcExt(d reg, r gvinst.Reg, size int, signed bool) {
	r = c.aliased(r)
	c.notXmm(r)
	if i := c.cache.find(r); i >= 0 {
		c.touch(i)
		c.a.extend(d, regOp(pool[i]), size, signed)
		return
	}
	c.a.extend(d, memOp(slotMem(r)), size, signed)
}

// dstReg returns the pool register that holds slot r's new value once the
// caller has written it; the slot is dirty from now on. When r is also a
// source of the instruction, this is the same register src returned.
func (c *compiler) dstReg(r gvinst.Reg) reg {
	c.notXmm(r)
	i := c.cache.find(r)
	if i < 0 {
		i = c.alloc()
		c.cache.e[i] = cacheEntry{valid: true, slot: r}
	}
	c.markDirty(i)
	c.lock(i)
	return pool[i]
}

func (c *compiler) markDirty(i int) {
	e := &c.cache.e[i]
	if e.pinned && !c.loopWrites[e.slot] {
		panic(fmt.Sprintf("jit: pinned slot %v written but not counted among the loop's writes", e.slot))
	}
	e.dirty = true
}

// put makes register s (a scratch register, or one src returned for this
// instruction) the new value of slot r.
func (c *compiler) put(r gvinst.Reg, s reg) {
	d := c.dstReg(r)
	if d != s {
		c.a.encode(mnMovMR, 8, s, regOp(d), 0)
	}
	c.unlock(d)
}

// unlock lets pool register d go again within this instruction: its value
// is written (evicting it would store it).
func (c *compiler) unlock(d reg) {
	for i, p := range pool {
		if p == d {
			c.locked &^= 1 << i
		}
	}
}

// putImm makes the constant v the new value of slot r.
func (c *compiler) putImm(r gvinst.Reg, v uint64) {
	d := c.dstReg(r)
	if v == 0 {
		c.a.encode(mnXorMR, 4, d, regOp(d), 0)
	} else {
		c.a.movImm(d, v)
	}
	c.unlock(d)
}

// frame returns slot r's memory operand after storing its register copy if
// that is newer; for reading the slot directly.
func (c *compiler) frame(r gvinst.Reg) mem {
	r = c.aliased(r)
	c.notXmm(r)
	if i := c.cache.find(r); i >= 0 && c.cache.e[i].dirty {
		c.storeEntry(i)
		if c.cache.e[i].pinned {
			// The head of a loop assumes the pinned registers it writes
			// are dirty; stay so.
			c.cache.e[i].dirty = true
		}
	}
	return slotMem(r)
}

// frameWritten records that the code wrote slot r in the frame: a register
// copy is dropped, or reloaded when pinned.
func (c *compiler) frameWritten(r gvinst.Reg) {
	c.notXmm(r)
	i := c.cache.find(r)
	if i < 0 {
		return
	}
	if c.cache.e[i].pinned {
		c.a.encode(mnMovRM, 8, pool[i], memOp(slotMem(r)), 0)
		c.markDirty(i)
		return
	}
	c.cache.e[i] = cacheEntry{}
}

// emitFlush stores the dirty slots of cache state st: guest slots only, or
// virtual registers too; and the guest slots the unit keeps in xmm
// registers (storeXmm).
func (c *compiler) emitFlush(st *regCache, virtual bool) {
	c.storeXmm()
	if virtual {
		c.storeVirtualXmm(st)
	}
	for i := range st.e {
		e := &st.e[i]
		if e.valid && e.dirty && (virtual || !e.slot.IsVirtual()) {
			c.a.encode(mnMovMR, 8, pool[i], memOp(slotMem(e.slot)), 0)
		}
	}
}

// emitReload loads every register of cache state st from the frame (after
// Go ran an instruction on it), and those the unit keeps in xmm registers.
func (c *compiler) emitReload(st *regCache) {
	c.loadXmm()
	c.loadVirtualXmm(st)
	for i := range st.e {
		if e := &st.e[i]; e.valid {
			c.a.encode(mnMovRM, 8, pool[i], memOp(slotMem(e.slot)), 0)
		}
	}
}

// afterCallout is the cache state once Go has run an instruction: the
// pinned registers are reloaded (the caller emits that), everything else is
// forgotten.
func (rc *regCache) afterCallout() {
	for i := range rc.e {
		if !rc.e[i].pinned {
			rc.e[i] = cacheEntry{}
		}
	}
	rc.x = [len(xmmPins)]xmmEntry{}
}

// dying returns the pool index that holds slot r (after renaming) when the
// current instruction is its last reader: a virtual register in the
// cache, not pinned, that no later instruction's code reads (findReads:
// reads renamed to another register do not count); else -1.
func (c *compiler) dying(r gvinst.Reg) int {
	r = c.aliased(r)
	if !r.IsVirtual() || c.nextRead(r) < len(c.vb.Insts) {
		return -1
	}
	i := c.cache.find(r)
	if i < 0 || c.cache.e[i].pinned {
		return -1
	}
	return i
}

// dstRegFrom is dstReg(r) for an instruction that computes r from src:
// when this instruction reads src last, src's register becomes r's (the
// code computes in place, with no copy first); the caller must read src
// before it writes the returned register.
func (c *compiler) dstRegFrom(r, src gvinst.Reg) reg {
	i := c.dying(src)
	if i < 0 || c.xmmHeld(r) {
		// (A value of r an xmm register holds is dstReg's to retire: it
		// was read in place of the new one. FuzzEngineTraces: a CVT.u8
		// into a register a MAX.f64 had written, then read by SETFLAGS,
		// gave the MAX's bits.)
		return c.dstReg(r)
	}
	if j := c.cache.find(r); j >= 0 {
		if j == i || c.cache.e[j].pinned || c.locked&(1<<j) != 0 {
			return c.dstReg(r)
		}
		// r's old value is overwritten whole.
		c.cache.e[j] = cacheEntry{}
	}
	c.cache.e[i] = cacheEntry{valid: true, slot: r}
	c.markDirty(i)
	c.lock(i)
	return pool[i]
}

// nextRead is the index of the next instruction after the current one
// that reads slot r (through a renamed copy, a folded address or a page
// group too), or len(vb.Insts) when none does.
func (c *compiler) nextRead(r gvinst.Reg) int {
	rs := c.reads.of(r)
	k := sort.SearchInts(rs, c.cur+1)
	if k == len(rs) {
		return len(c.vb.Insts)
	}
	return rs[k]
}

// findReads lists, per slot, the instructions that read it in the code:
// their operands after renaming, the parts of folded addresses, and the
// host root of a page group at each of its accesses.
func (f *unitFacts) findReads() {
	pairs := f.pairs[:0]
	for i := range f.vb.Insts {
		from := len(pairs)
		for _, u := range f.usesOf(i) {
			if u.dst {
				continue
			}
			r := u.r
			if a, ok := f.alias.get(r); ok && i > a.from {
				r = a.of
			}
			if ad, ok := f.addr.get(r); ok && i > ad.from {
				pairs = addOnce(pairs, from, ad.base, i)
				pairs = addOnce(pairs, from, ad.index, i)
				continue
			}
			pairs = addOnce(pairs, from, r, i)
		}
		if m, ok := f.memberOf(i); ok {
			pairs = addOnce(pairs, from, f.groups[m.g].slot, i)
		}
	}
	f.pairs = pairs
	f.reads.set(f.nSlots, pairs)
}
