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
	return plain
}
