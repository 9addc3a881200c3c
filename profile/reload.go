package profile

import (
	"fmt"
	"sort"

	"github.com/gxbit/gxbit/gvinst"
)

// A register a loop carries from one iteration to the next is often a
// value the loop loaded from memory it does not write: gcc keeps A[i+1]
// in a register for the next iteration's A[i] (and copies it on for the
// one after, A[i-1]). Such a register does not make the iterations
// dependent: each one could load the value again. reloadOf proves it for
// one register of a loop whose blocks run in one chain (one block, or
// gcc's body block and the block of copies its back edge goes through)
// by evaluating them symbolically from the header's values, and phase 2 makes every GPU thread load it
// again (checking while probing that the register holds that load).

// symVal is a symbolic value in terms of the header's register values:
// a linear form (coefficients of the 64-bit header values of guest slots,
// plus a constant), the value of a load at a linear address, the header's
// value of one slot zero-extended from its low bytes, or unknown.
type symVal struct {
	kind  symKind
	terms map[gvinst.Reg]int64 // linear form, or a load's address
	c     int64
	// For a load: the x86 load instruction, the bytes loaded
	// (zero-extended) and, for an SSE register, whether its high half is
	// zero (a movsd/movss/movq load). For a zero-extended slot: size is
	// the bytes kept (terms has the slot, with coefficient 1).
	x86      uint64
	size     int
	highZero bool
}

type symKind uint8

const (
	symUnknown symKind = iota
	symLinear
	symLoad
	// symZext is the header's value of a slot zero-extended from its low
	// size bytes (movzx r12d, sil): the same value when the slot held a
	// load of at most size bytes, which is all reloadOf uses it for.
	symZext
)

func linearOf(terms map[gvinst.Reg]int64, c int64) symVal {
	t := map[gvinst.Reg]int64{}
	for r, k := range terms {
		if k != 0 {
			t[r] = k
		}
	}
	return symVal{kind: symLinear, terms: t, c: c}
}

// combine returns a + k·b for two linear forms.
func combine(a, b symVal, k int64) symVal {
	if a.kind != symLinear || b.kind != symLinear {
		return symVal{}
	}
	t := map[gvinst.Reg]int64{}
	for r, v := range a.terms {
		t[r] += v
	}
	for r, v := range b.terms {
		t[r] += k * v
	}
	return linearOf(t, a.c+k*b.c)
}

func scale(a symVal, k int64) symVal {
	return combine(linearOf(nil, 0), a, k)
}

// isConst reports whether v is a known constant.
func (v symVal) isConst() (int64, bool) {
	if v.kind == symLinear && len(v.terms) == 0 {
		return v.c, true
	}
	return 0, false
}

// headerSlot reports whether v is the header's value of one slot, whole.
func (v symVal) headerSlot() (gvinst.Reg, bool) {
	if v.kind != symLinear || v.c != 0 || len(v.terms) != 1 {
		return 0, false
	}
	for r, k := range v.terms {
		return r, k == 1
	}
	return 0, false
}

// blockEffect evaluates the instructions of one iteration of a loop (its
// blocks in the order they run, see bodyChain) from its header and returns what each guest slot it writes holds at the back
// edge, keyed by the slot written (the first slot of an SSE register for
// a whole .b128 write; a partial write leaves the slot unknown).
func blockEffect(insns []*Insn) map[gvinst.Reg]symVal {
	state := map[gvinst.Reg]symVal{}
	slotVal := func(g gvinst.Reg) symVal {
		if v, ok := state[g]; ok {
			return v
		}
		return linearOf(map[gvinst.Reg]int64{g: 1}, 0)
	}
	for _, x := range insns {
		vals := map[gvinst.Reg]symVal{}
		val := func(r gvinst.Reg) symVal {
			if r < gvinst.NumGuestSlots {
				return symVal{}
			}
			return vals[r]
		}
		for i := range x.Code {
			in := &x.Code[i]
			var d symVal
			wide := in.Type == gvinst.U64 || in.Type == gvinst.S64
			switch in.Op {
			case gvinst.OpGet:
				g := in.Src[0]
				v := slotVal(g)
				switch {
				case in.Type == gvinst.B128 && g >= gvinst.X0 && g < gvinst.FSBase:
					d = v
				case v.kind == symLinear && (wide || in.Type == gvinst.F64):
					d = v
				case (v.kind == symLoad || v.kind == symZext) && (wide || in.Type == gvinst.F64) && v.size <= 8:
					d = v
				}
			case gvinst.OpLi:
				d = linearOf(nil, in.Imm)
			case gvinst.OpMov:
				if wide || in.Type == gvinst.F64 || in.Type == gvinst.B128 {
					d = val(in.Src[0])
				}
			case gvinst.OpAdd, gvinst.OpSub:
				if !wide {
					break
				}
				b := val(in.Src[1])
				if in.HasImm {
					b = linearOf(nil, in.Imm)
				}
				k := int64(1)
				if in.Op == gvinst.OpSub {
					k = -1
				}
				d = combine(val(in.Src[0]), b, k)
			case gvinst.OpShl, gvinst.OpMul:
				if !wide {
					break
				}
				a, b := val(in.Src[0]), val(in.Src[1])
				if in.HasImm {
					b = linearOf(nil, in.Imm)
				}
				if kb, ok := b.isConst(); ok {
					if in.Op == gvinst.OpShl {
						if kb < 0 || kb > 32 {
							break
						}
						kb = 1 << kb
					}
					d = scale(a, kb)
				} else if ka, ok := a.isConst(); ok && in.Op == gvinst.OpMul {
					d = scale(b, ka)
				}
			case gvinst.OpLd:
				a := val(in.Src[0])
				if a.kind == symLinear && in.Type.Size() <= 8 {
					d = symVal{kind: symLoad, terms: a.terms, c: a.c + in.Imm, x86: in.X86, size: in.Type.Size()}
				}
			case gvinst.OpCvt:
				// An integer zero-extension to 64 bits (movzx, or a
				// 32-bit move): a load of at most the bytes kept is
				// already zero-extended, and the header's value of a slot
				// is kept as what it is.
				n := in.SrcType.Size()
				if !wide || in.SrcType != gvinst.U8 && in.SrcType != gvinst.U16 && in.SrcType != gvinst.U32 {
					break
				}
				switch a := val(in.Src[0]); {
				case a.kind == symLoad && a.size <= n:
					d = a
				case a.kind == symZext:
					d = a
					d.size = min(a.size, n)
				default:
					if r, ok := a.headerSlot(); ok && r < gvinst.X0 {
						d = symVal{kind: symZext, terms: map[gvinst.Reg]int64{r: 1}, size: n}
					}
				}
			case gvinst.OpJoin:
				lo, hi := val(in.Src[0]), val(in.Src[1])
				if z, ok := hi.isConst(); ok && z == 0 && lo.kind == symLoad {
					d = lo
					d.highZero = true
				}
			case gvinst.OpPut:
				g := in.Dst
				v := val(in.Src[0])
				switch {
				case g < gvinst.X0 && wide:
					state[g] = v
				case g >= gvinst.X0 && g < gvinst.FSBase && in.Type == gvinst.B128 && (v.kind == symLoad && v.highZero || v.kind == symLinear):
					state[g] = v
				case g >= gvinst.X0 && g < gvinst.FSBase && in.Type.Slots() == 2:
					state[g], state[g+1] = symVal{}, symVal{}
				default:
					state[g] = symVal{}
				}
				continue
			}
			if in.Op != gvinst.OpPut && hasDst(in) && in.Dst >= gvinst.NumGuestSlots {
				vals[in.Dst] = d
			}
		}
	}
	return state
}

// bodyChain returns the blocks of loop lp in the order an iteration that
// goes on runs them, when they form one chain from the header: each block
// has one successor in the loop, the next of the chain, the last one the
// header, and none ends in a call or a system call. Every block then
// dominates the latch, and evaluating them in that order gives the values
// at the back edge of every iteration that does not leave the loop.
func bodyChain(lp *Loop) ([]*Block, bool) {
	chain := []*Block{lp.Header}
	seen := map[*Block]bool{lp.Header: true}
	for b := lp.Header; ; {
		switch b.Last().Term {
		case TermCall, TermCallR, TermSyscall:
			return nil, false
		}
		var next *Block
		for _, s := range b.Succs {
			if !lp.Contains(s) {
				continue
			}
			if next != nil && s != next {
				return nil, false
			}
			next = s
		}
		if next == nil || seen[next] && next != lp.Header {
			return nil, false
		}
		if next == lp.Header {
			break
		}
		seen[next] = true
		chain = append(chain, next)
		b = next
	}
	return chain, len(chain) == len(lp.Blocks)
}

// reloadOf reports whether register b (a profile slot bit), which level l
// carries from one iteration to the next, is a reload: the loop's blocks
// run in one chain (bodyChain), and at its back edge b holds the value of a load from memory (or
// a whole copy of a register that the header held such a value in) whose
// address is affine in the header's registers, from bytes no access of the
// hot spot writes. It returns the reload, or why b is not one.
func (ch *chain) reloadOf(l int, lp *Loop, b int, fits []*siteFit) (Reload, string) {
	if b < 0 || b >= 32 {
		return Reload{}, "not a general or SSE register"
	}
	chain, ok := bodyChain(lp)
	if !ok {
		return Reload{}, "the loop's blocks do not run in one chain from the header"
	}
	var insns []*Insn
	for _, blk := range chain {
		insns = append(insns, blk.Insns...)
	}
	state := blockEffect(insns)
	slot := bitSlot(b)
	v, ok := state[slot]
	if !ok || v.kind == symUnknown {
		return Reload{}, "its value at the back edge is not a load"
	}
	depth := 1
	var source gvinst.Reg
	if v.kind == symZext {
		// The header's value of a general register, zero-extended: the
		// previous iteration's load when that fits in the bytes kept.
		var src gvinst.Reg
		for r := range v.terms {
			src = r
		}
		if slot >= gvinst.X0 {
			return Reload{}, "a copy between register kinds"
		}
		sv, ok := state[src]
		if !ok || sv.kind != symLoad || sv.size > v.size {
			return Reload{}, fmt.Sprintf("a zero-extension of %s, which does not hold a load that fits it", src)
		}
		v, depth, source = sv, 2, src
	} else if src, ok := v.headerSlot(); ok {
		// A whole copy of the header's value of another register, which
		// must itself be a load.
		if src < gvinst.X0 && slot >= gvinst.X0 || src >= gvinst.X0 && slot < gvinst.X0 {
			return Reload{}, "a copy between register kinds"
		}
		sv, ok := state[src]
		if !ok || sv.kind != symLoad || slot >= gvinst.X0 && !sv.highZero {
			return Reload{}, fmt.Sprintf("a copy of %s, which does not hold a load", src)
		}
		v, depth, source = sv, 2, src
	}
	if v.kind != symLoad {
		return Reload{}, "its value at the back edge is not a load"
	}
	if slot >= gvinst.X0 && !v.highZero {
		return Reload{}, "the load leaves the register's high half"
	}
	for r := range v.terms {
		if r >= gvinst.X0 {
			return Reload{}, "the load's address is not in general registers"
		}
	}
	// The load's site: its stride per iteration of level l, and no write
	// of the hot spot may touch its bytes.
	var load *siteFit
	for _, sf := range fits {
		if sf.s.x86 == v.x86 && !sf.s.write && sf.fit != nil && sf.err == nil && len(sf.path) == 0 && sf.depth == l+1 {
			load = sf
		}
	}
	if load == nil {
		return Reload{}, fmt.Sprintf("the load at %#x has no affine access function at this level", v.x86)
	}
	for _, sf := range fits {
		if sf.s.write && sf.lo < load.hi && load.lo < sf.hi {
			return Reload{}, fmt.Sprintf("the store at %#x writes bytes the load at %#x reads", sf.s.x86, v.x86)
		}
	}
	stride := load.fit.coeffs[l]
	r := Reload{Loc: Loc{Reg: slot.String()}, X86: Hex(v.x86), Depth: depth, Size: v.size, HighZero: slot >= gvinst.X0,
		Disp: v.c - int64(depth)*stride, Stride: stride}
	if depth == 2 {
		r.Source = source.String()
	}
	regs := make([]gvinst.Reg, 0, len(v.terms))
	for reg := range v.terms {
		regs = append(regs, reg)
	}
	sort.Slice(regs, func(i, j int) bool { return regs[i] < regs[j] })
	for _, reg := range regs {
		r.Terms = append(r.Terms, AddrTerm{Reg: reg.String(), Scale: v.terms[reg]})
	}
	return r, ""
}

// constReload reports whether register b (a profile slot bit), which loop
// lp writes, holds the same value at every header of the loop because
// every write of it in the loop is one load from one fixed address in a
// page the guest cannot write, and no store of the hot spot (fits) touches
// its bytes: gcc reloads a constant from .rodata after a call in the body
// (conv2d's divisor 17.0f, in xmm1 again after the per-row memset) and
// holds the same constant before the loop. Then every back edge carries
// either the header's value or that load; the caller checks on the trace
// that the value on entry is the same (the register's header snapshots
// are invariant), and phase 2 checks it again while probing, as for any
// live-in. It returns the load's address, or why b is not such a register.
func (ch *chain) constReload(lp *Loop, b int, fits []*siteFit) (uint64, string) {
	if b < 0 || b >= 32 {
		return 0, "not a general or SSE register"
	}
	if !ch.writes(lp, b) {
		return 0, "the loop does not write it" // as found below, without walking the loop again
	}
	slot := bitSlot(b)
	var the *constLoad
	for _, blk := range lp.Blocks {
		for xi, x := range blk.Insns {
			if _, def := useDef(x); def&(1<<b) == 0 {
				continue
			}
			found := false
			for i := range x.Code {
				in := &x.Code[i]
				if in.Op != gvinst.OpPut || slotBit(in.Dst) != b {
					continue
				}
				l, ok := constLoadPut(blk.Insns[:xi], x, i, slot)
				if !ok {
					return 0, fmt.Sprintf("the write at %#x is not a load from a fixed address", x.Addr)
				}
				if the != nil && *the != l {
					return 0, fmt.Sprintf("the write at %#x loads other bytes than the loop's other writes", x.Addr)
				}
				the, found = &l, true
			}
			if !found {
				return 0, fmt.Sprintf("the write at %#x is not a load from a fixed address", x.Addr)
			}
		}
	}
	if the == nil {
		return 0, "the loop does not write it"
	}
	if ch.c == nil || ch.c.mem == nil {
		return 0, "the guest's memory is not known here"
	}
	for _, a := range []uint64{the.addr, the.addr + uint64(the.size) - 1} {
		if p, ok := ch.permAt(a); !ok || p&gvinst.PermWrite != 0 || p&gvinst.PermRead == 0 {
			return 0, fmt.Sprintf("the load from %#x reads a page that is not read-only", the.addr)
		}
	}
	for _, sf := range fits {
		if sf.s.write && sf.lo < the.addr+uint64(the.size) && the.addr < sf.hi {
			return 0, fmt.Sprintf("the store at %#x writes bytes the load from %#x reads", sf.s.x86, the.addr)
		}
	}
	return the.addr, ""
}

// constLoad is a load from a fixed address that a PUT writes to a whole
// register: its address and bytes, and for an SSE register whether the
// high half is zero.
type constLoad struct {
	addr     uint64
	size     int
	highZero bool
}

// constLoadPut reports whether the PUT at index i of x writes register
// slot (its first slot) whole with a load from a fixed address: a 64-bit
// write of a general register with a load of at most 8 bytes (zero-
// extended, as a 32-bit mov is), or a 128-bit write of an SSE register
// with a load joined to a zero high half (movss, movsd, movq), or with a
// general register joined to a zero high half (movq xmm2, rdx) that the
// last write of it among before (the instructions before x in its block)
// loaded so (gramschmidt's mov rdx, [rip+…]; movq xmm2, rdx).
func constLoadPut(before []*Insn, x *Insn, i int, slot gvinst.Reg) (constLoad, bool) {
	in := &x.Code[i]
	if in.Dst != slot {
		return constLoad{}, false
	}
	def := func(j int, r gvinst.Reg) (int, *gvinst.Inst) {
		for k := j - 1; k >= 0; k-- {
			if d := &x.Code[k]; hasDst(d) && d.Dst == r {
				return k, d
			}
		}
		return -1, nil
	}
	ld := func(j int, r gvinst.Reg) (constLoad, bool) {
		k, d := def(j, r)
		if d == nil || d.Op != gvinst.OpLd || d.Type.Size() > 8 {
			return constLoad{}, false
		}
		a := addrOf(x, k)
		if a.kind != opdConst {
			return constLoad{}, false
		}
		return constLoad{addr: uint64(a.value), size: d.Type.Size()}, true
	}
	switch {
	case slot < gvinst.X0:
		if in.Type != gvinst.U64 && in.Type != gvinst.S64 {
			return constLoad{}, false
		}
		return ld(i, in.Src[0])
	case slot < gvinst.FSBase:
		if in.Type != gvinst.B128 {
			return constLoad{}, false
		}
		k, j := def(i, in.Src[0])
		if j == nil || j.Op != gvinst.OpJoin {
			return constLoad{}, false
		}
		if hi := trace(x, k, j.Src[1]); hi.kind != opdConst || hi.value != 0 {
			return constLoad{}, false
		}
		if _, g := def(k, j.Src[0]); g != nil && g.Op == gvinst.OpGet && g.Type.Size() == 8 && g.Src[0] < gvinst.X0 {
			// A general register's whole value: the load that last
			// wrote it before x, nothing of x writing it first.
			return lastConstLoad(before, g.Src[0])
		}
		l, ok := ld(k, j.Src[0])
		l.highZero = true
		return l, ok
	}
	return constLoad{}, false
}

// lastConstLoad finds the last write of general register r among insns
// and reports whether it loads r whole from a fixed address (constLoadPut),
// with the high half of an SSE register it is copied to zero.
func lastConstLoad(insns []*Insn, r gvinst.Reg) (constLoad, bool) {
	for xi := len(insns) - 1; xi >= 0; xi-- {
		x := insns[xi]
		if _, def := useDef(x); def&(1<<slotBit(r)) == 0 {
			continue
		}
		for i := len(x.Code) - 1; i >= 0; i-- {
			if in := &x.Code[i]; in.Op == gvinst.OpPut && in.Dst == r {
				l, ok := constLoadPut(nil, x, i, r)
				l.highZero = true
				return l, ok
			}
		}
		return constLoad{}, false
	}
	return constLoad{}, false
}
