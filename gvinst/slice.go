package gvinst

import (
	"maps"
	"slices"
)

// Slice is what the blocks of a loop nest compute for some of their
// stores (see SliceStores).
type Slice struct {
	// Blocks are copies of the blocks, by address, holding only the
	// instructions the slice needs, in their order.
	Blocks map[uint64]*VBlock
	// Slots are the guest slots those instructions read, ascending: the
	// registers whose values reach a kept store, a branch or another
	// effect.
	Slots []Reg
	// Dropped counts the instructions left out.
	Dropped int
}

// SliceStores cuts a loop nest's blocks down to the statements whose
// stores keep accepts: it keeps those stores, every instruction that ends
// a block or has another effect than a store or a load, and, transitively,
// what they read — virtual registers through their definitions in the
// same block, guest slots through every instruction of every block that
// writes them (flow-insensitively, so a register the nest carries from one
// iteration to the next keeps its whole chain of updates). The other
// stores, and the loads and computations that only fed them, are left
// out: a loop body that distribution splits into one kernel per statement
// (bicg's s[j] += r[i]·A[i][j] and q[i] += A[i][j]·p[j] in one j loop) runs
// each slice on its own. A float operation's MXCSR status update counts as
// a write only when some instruction names MXCSR itself (an stmxcsr):
// otherwise every float op would keep every other.
func SliceStores(blocks map[uint64]*VBlock, keep func(in *Inst) bool) *Slice {
	addrs := slices.Sorted(maps.Keys(blocks))
	type ref struct{ b, i int }
	explicitMXCSR := false
	for _, a := range addrs {
		for i := range blocks[a].Insts {
			in := &blocks[a].Insts[i]
			var buf [4]regUse
			for _, u := range sourceRegs(buf[:0], in) {
				explicitMXCSR = explicitMXCSR || u.covers(MXCSR)
			}
			if d, ok := destReg(in); ok && d.covers(MXCSR) {
				explicitMXCSR = true
			}
		}
	}
	implicit := func(in *Inst) (slotSet, slotSet) {
		rd, wr := implicitSlots(in)
		if !explicitMXCSR && isSSEFloat(in) {
			rd[MXCSR/64] &^= 1 << (MXCSR % 64)
			wr[MXCSR/64] &^= 1 << (MXCSR % 64)
		}
		return rd, wr
	}
	// Per instruction: the definitions of the virtual registers it reads,
	// and the guest slots it reads; per slot, the instructions writing it.
	defs := make([][][]ref, len(addrs))
	reads := make([][]slotSet, len(addrs))
	var writers [NumGuestSlots][]ref
	useful := make([][]bool, len(addrs))
	var work []ref
	mark := func(r ref) {
		if !useful[r.b][r.i] {
			useful[r.b][r.i] = true
			work = append(work, r)
		}
	}
	all := allSlots()
	for bi, a := range addrs {
		b := blocks[a]
		defs[bi] = make([][]ref, len(b.Insts))
		reads[bi] = make([]slotSet, len(b.Insts))
		useful[bi] = make([]bool, len(b.Insts))
		last := map[Reg]int{}
		for i := range b.Insts {
			in := &b.Insts[i]
			rd, wr := implicit(in)
			var buf [4]regUse
			for _, u := range sourceRegs(buf[:0], in) {
				for s := 0; s < u.n; s++ {
					r := u.r + Reg(s)
					if !r.IsVirtual() {
						rd.add(r, 1)
					} else if d, ok := last[r]; ok {
						defs[bi][i] = append(defs[bi][i], ref{bi, d})
					}
				}
			}
			reads[bi][i] = rd
			if d, ok := destReg(in); ok {
				for s := 0; s < d.n; s++ {
					if r := d.r + Reg(s); r.IsVirtual() {
						last[r] = i
					} else {
						wr.add(r, 1)
					}
				}
			}
			for r := Reg(0); r < NumGuestSlots; r++ {
				if wr.has(r) {
					writers[r] = append(writers[r], ref{bi, i})
				}
			}
			eff := in.Op.Info().Effects
			switch {
			case eff&EffStore != 0:
				if keep(in) {
					mark(ref{bi, i})
				}
			case eff&(EffEnd|EffHost) != 0, eff&EffTrap != 0 && eff&EffLoad == 0, wr == all:
				mark(ref{bi, i})
			}
		}
	}
	var needed slotSet
	for len(work) > 0 {
		r := work[len(work)-1]
		work = work[:len(work)-1]
		for _, d := range defs[r.b][r.i] {
			mark(d)
		}
		rd := reads[r.b][r.i]
		for s := Reg(0); s < NumGuestSlots; s++ {
			if rd.has(s) && !needed.has(s) {
				needed.add(s, 1)
				for _, w := range writers[s] {
					mark(w)
				}
			}
		}
	}
	out := &Slice{Blocks: map[uint64]*VBlock{}}
	for bi, a := range addrs {
		b := blocks[a]
		nb := *b
		nb.Insts = make([]Inst, 0, len(b.Insts))
		for i := range b.Insts {
			if useful[bi][i] {
				nb.Insts = append(nb.Insts, b.Insts[i])
			} else {
				out.Dropped++
			}
		}
		out.Blocks[a] = &nb
	}
	for s := Reg(0); s < NumGuestSlots; s++ {
		if needed.has(s) {
			out.Slots = append(out.Slots, s)
		}
	}
	return out
}
