package ptxgen

import "github.com/gxbit/gxbit/gvinst"

// x86's scalar single-precision operations (addss, mulss, …) write the
// low 32 bits of an SSE register and keep the rest: the lifter merges the
// result into the old value, AND with hiHalf and OR, after every
// operation. A kernel's registers die with its threads, so where nothing
// the kernel runs reads those upper bits, the merge computes bits nobody
// looks at: the 32-bit result, zero-extended, serves as well, and a
// float stencil's every operation costs one instruction instead of four.

// hiHalf is the mask of the bits a scalar single-precision merge keeps.
const hiHalf = 0xFFFFFFFF00000000

// merges returns plainMerges' result, computed once per analysis: the
// kernel, its unchecked twin and its dry one lower the same blocks, and
// the demanded-bits analysis, run for each, was a fifth of the
// generator's time in gxbit run --accelerate on heat3d 80 16 once the
// peephole pass was fast (0.08 of 0.41 s over five runs).
func (a *analysis) merges() map[[2]int64]bool {
	if a.plain == nil {
		a.plain = a.plainMerges()
	}
	return a.plain
}

// plainMerges returns the ORs (by key of block and index) of the kernel's
// blocks that merge a value into the upper half kept by an AND with
// hiHalf, and whose own upper 32 bits nothing reads: each may be a plain
// move of its other source. A demanded-bits analysis to a fixed point: a
// register's upper 32 bits are read when any use of it reads them, and a
// use reads them unless it reads its operand at 32 bits or less, copies
// it (GET, PUT, MOV) to a register whose upper bits nothing reads, or
// ANDs it with hiHalf or ORs it into such a register. Memory addresses,
// wide (128-bit) operations and everything else read them.
func (a *analysis) plainMerges() map[[2]int64]bool {
	demanded := map[resource]bool{}
	// A register an exit stores is read whole (exitstate.go).
	for t, rs := range a.exitStates {
		for _, r := range rs {
			// (Its upper 32 bits where the exit's code reads them.)
			if live := a.n.ExitLive[t]; r < int(gvinst.NumGuestSlots) && live != nil && live.High[r] {
				demanded[resource{id: int64(r)}] = true
			}
		}
	}
	var block uint64
	res := func(r gvinst.Reg) resource {
		if r.IsVirtual() {
			return resource{id: int64(r), block: block}
		}
		return resource{id: int64(r)}
	}
	// reads reports whether in, as emit lowers it, reads the upper 32
	// bits of its source operand si (of operand kind k), given whether
	// its destination's upper bits are read: not for a copy (GET, PUT,
	// MOV, SELECT's values: selp copies all 64 bits) whose destination's
	// nothing reads, nor narrower than 8 bytes (emit masks it), a hiHalf
	// AND or a 64-bit OR whose result's nothing reads, a single-precision
	// float operand (emit truncates it) or a stored value of at most 4
	// bytes.
	reads := func(in *gvinst.Inst, si int, k gvinst.OperandKind, dst bool) bool {
		t := in.SrcTypeOf(si)
		switch {
		case k == gvinst.OpdMem || t.IsWide():
			return true
		case in.Op == gvinst.OpGet || in.Op == gvinst.OpPut || in.Op == gvinst.OpMov:
			return in.Type.Size() == 8 && dst
		case in.Op == gvinst.OpSelect && si > 0:
			return dst
		case in.Op == gvinst.OpAnd && in.HasImm && uint64(in.Imm) == hiHalf:
			return dst
		case in.Op == gvinst.OpOr && in.Type.Size() == 8:
			return dst
		case in.Op == gvinst.OpSt && si == 1:
			return t.Size() > 4
		}
		return !(t.IsFloat() && t.Size() == 4)
	}
	for changed := true; changed; {
		changed = false
		for _, addr := range a.order {
			block = addr
			b := a.n.Blocks[addr]
			for i := range b.Insts {
				in := &b.Insts[i]
				if _, private := a.priv[key(addr, i)]; private && in.Op == gvinst.OpLd {
					continue // no memory operand in the kernel: a register
				}
				dst := hasDst(in) && demanded[res(in.Dst)]
				si := 0
				for _, k := range in.Op.Info().Operands {
					if k != gvinst.OpdSrc && k != gvinst.OpdMem && k != gvinst.OpdSrcImm {
						continue
					}
					if k == gvinst.OpdSrcImm && in.HasImm {
						si++
						continue
					}
					r := in.Src[si]
					_, private := a.priv[key(addr, i)]
					if !(private && k == gvinst.OpdMem) && reads(in, si, k, dst) && !demanded[res(r)] {
						demanded[res(r)], changed = true, true
					}
					si++
				}
			}
		}
	}
	plain := map[[2]int64]bool{}
	for _, addr := range a.order {
		block = addr
		b := a.n.Blocks[addr]
		kept := map[gvinst.Reg]bool{} // virtual registers an AND with hiHalf set
		for i := range b.Insts {
			in := &b.Insts[i]
			switch {
			case in.Op == gvinst.OpAnd && in.HasImm && uint64(in.Imm) == hiHalf && in.Dst.IsVirtual():
				kept[in.Dst] = true
			case in.Op == gvinst.OpOr && !in.HasImm && in.Type.Size() == 8 && !demanded[res(in.Dst)] && (kept[in.Src[0]] || kept[in.Src[1]]):
				plain[key(addr, i)] = true
			case hasDst(in) && in.Dst.IsVirtual():
				delete(kept, in.Dst)
			}
		}
	}
	if len(a.exitStates) > 0 {
		// The exit state demands the upper halves it stores: merges
		// into a zero one are moves all the same.
		for k := range a.upperZeroMerges() {
			plain[k] = true
		}
	}
	return plain
}

// upperZeroMerges returns the ORs (by key of block and index) that merge
// a value whose upper 32 bits are zero into a kept upper half that is
// zero too: a plain move of the value gives the same 64 bits, whoever
// reads them. A forward analysis of which registers hold a zero upper
// half: a result of 4 bytes or less (emit zero-extends every one, a
// single-precision float's too), a small constant, and guest slots
// through GET and PUT, from block to block (what is known at a block's
// start holds on every edge to it; nothing at the level's start, nor for
// the values a thread moves or reloads as it enters an inner level).
// gcc's scalar float code loads an SSE register whole (movss from
// memory clears its upper bits) and merges into it from then on: where
// the exit state stores the register (exitstate.go), its merges need
// not be computed as merges.
func (a *analysis) upperZeroMerges() map[[2]int64]bool {
	type facts map[gvinst.Reg]bool // guest slots with a zero upper half
	n := a.n
	preds := map[uint64][]uint64{}
	for _, b := range a.order {
		for _, s := range n.Blocks[b].Successors() {
			if n.Blocks[s] != nil && s != n.start() {
				preds[s] = append(preds[s], b)
			}
		}
	}
	moved := func(ls []LiveIn, level int) map[gvinst.Reg]bool {
		m := map[gvinst.Reg]bool{}
		for _, l := range ls {
			if !l.Stack && l.Written {
				m[l.Slot] = true
			}
		}
		for r := range a.reloadedAt(level) {
			m[r] = true
		}
		return m
	}
	movedInner, movedInner2 := moved(a.innerLive, 1), moved(a.inner2Live, 2)
	plain := map[[2]int64]bool{}
	// run applies block addr to slot facts in (changed in place),
	// noting its plain merges when note is set.
	run := func(addr uint64, in facts, note bool) {
		b := n.Blocks[addr]
		vz := map[gvinst.Reg]bool{}
		kept := map[gvinst.Reg]bool{} // ANDs with hiHalf of a zero upper half
		z := func(r gvinst.Reg) bool {
			if r.IsVirtual() {
				return vz[r]
			}
			return in[r]
		}
		for i := range b.Insts {
			ins := &b.Insts[i]
			_, private := a.priv[key(addr, i)]
			t := ins.Type
			switch {
			case ins.Op == gvinst.OpGet && t.IsWide():
				vz[ins.Dst], vz[ins.Dst+1] = in[ins.Src[0]], in[ins.Src[0]+1]
			case ins.Op == gvinst.OpGet:
				vz[ins.Dst] = t.Size() <= 4 || in[ins.Src[0]]
			case ins.Op == gvinst.OpPut && t.IsWide():
				in[ins.Dst], in[ins.Dst+1] = z(ins.Src[0]), z(ins.Src[0]+1)
			case ins.Op == gvinst.OpPut:
				in[ins.Dst] = t.Size() <= 4 || z(ins.Src[0])
			case ins.Op == gvinst.OpMov && t.IsWide():
				vz[ins.Dst], vz[ins.Dst+1] = z(ins.Src[0]), z(ins.Src[0]+1)
			case ins.Op == gvinst.OpMov:
				vz[ins.Dst] = z(ins.Src[0])
			case ins.Op == gvinst.OpLi && t.IsWide():
				vz[ins.Dst], vz[ins.Dst+1] = uint64(ins.Imm) < 1<<32, true
			case ins.Op == gvinst.OpLi:
				vz[ins.Dst] = uint64(ins.Imm)&t.Mask() < 1<<32
			case ins.Op == gvinst.OpJoin:
				lo, hi := z(ins.Src[0]), z(ins.Src[1])
				vz[ins.Dst], vz[ins.Dst+1] = lo, hi
			case ins.Op == gvinst.OpLd && !private && !t.IsWide():
				vz[ins.Dst] = t.Size() <= 4
			case ins.Op == gvinst.OpAnd && ins.HasImm && uint64(ins.Imm) == hiHalf:
				vz[ins.Dst] = z(ins.Src[0])
				kept[ins.Dst] = z(ins.Src[0])
			case ins.Op == gvinst.OpAnd && ins.HasImm && uint64(ins.Imm) < 1<<32:
				vz[ins.Dst] = true
			case ins.Op == gvinst.OpOr && !ins.HasImm && t.Size() == 8:
				x, y := ins.Src[0], ins.Src[1]
				vz[ins.Dst] = z(x) && z(y)
				if note && (kept[x] && vz[y] || kept[y] && vz[x]) {
					plain[key(addr, i)] = true
				}
			case hasDst(ins) && ins.Dst.IsVirtual() && !ins.DstType().IsWide():
				vz[ins.Dst] = ins.DstType().Size() <= 4 && ins.Op != gvinst.OpLd
			case hasDst(ins) && ins.Dst.IsVirtual():
				vz[ins.Dst], vz[ins.Dst+1] = false, false
			}
			if hasDst(ins) && ins.Dst.IsVirtual() && ins.Op != gvinst.OpAnd {
				delete(kept, ins.Dst)
			}
			_, ws := stringRegs(ins)
			for _, r := range ws {
				in[r] = false
			}
			if hasDst(ins) && !ins.Dst.IsVirtual() && ins.Op != gvinst.OpPut {
				for s := 0; s < ins.DstType().Slots(); s++ {
					in[ins.Dst+gvinst.Reg(s)] = false
				}
			}
		}
	}
	entry := map[uint64]facts{}
	outOf := map[uint64]facts{}
	for changed := true; changed; {
		changed = false
		for _, b := range a.order {
			var in facts
			if b == n.start() {
				in = facts{}
			} else {
				var reached []facts
				for _, p := range preds[b] {
					if o, ok := outOf[p]; ok {
						reached = append(reached, o)
					}
				}
				var ok bool
				if in, ok = meetSets(reached); !ok {
					continue
				}
			}
			drop := func(m map[gvinst.Reg]bool) {
				for r := range m {
					delete(in, r)
				}
			}
			if a.inner != nil && b == n.Inner {
				drop(movedInner)
			}
			if a.inner2 != nil && b == n.Inner2 {
				drop(movedInner2)
			}
			if old, ok := entry[b]; ok && len(old) == len(in) {
				continue
			}
			entry[b] = in
			out := facts{}
			for r, v := range in {
				out[r] = v
			}
			run(b, out, false)
			outOf[b] = out
			changed = true
		}
	}
	for _, b := range a.order {
		if in, ok := entry[b]; ok {
			f := facts{}
			for r, v := range in {
				f[r] = v
			}
			run(b, f, true)
		}
	}
	return plain
}
