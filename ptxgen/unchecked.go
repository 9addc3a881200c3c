package ptxgen

import "github.com/gxbit/gxbit/gvinst"

// A kernel checks every access against its site's footprint, and that is
// most of the instructions of a stencil's thread (a five-point sweep runs
// six checked accesses and two checked reloads per point). A time-stepped
// program launches the same kernel with the same input over and over:
// the same live-in values, trip counts and footprints, other data in the
// arrays. When nothing the kernel computes an address from, branches on,
// or could trap on is a value it loaded (DataIndependent), every launch
// with that input makes the same accesses and takes the same paths, so
// once a checked launch of it has succeeded, the next ones cannot fail
// their checks: they run Kernel.Unchecked, the same kernel without them
// and without branches to its error exits (a thread leaving the loop
// early, a division that would trap: none of that happened in the checked
// launch, and the paths are the same), and need no backup of what they
// overwrite.

// resource is a value the data-dependence analysis follows: a register
// (guest or virtual), a private stack slot (by offset), or the x86 flags.
type resource struct {
	kind  int // 0 register, 1 private slot, 2 flags
	id    int64
	block uint64 // a virtual register's block (virtual registers are local)
}

var flagsResource = resource{kind: 2}

// dataIndependent reports whether no address the kernel's blocks access,
// no branch they take, no trapping operation and no reload address depends
// on a value loaded from guest memory: a flow-insensitive taint analysis
// over every block the kernel runs, so that a value is loaded-tainted if
// any path makes it so. Reloaded registers count as loaded. A float
// division does not trap in a kernel. Kernels with a rep string operation
// (implicit operands) are not data independent.
func (a *analysis) dataIndependent() bool {
	tainted := map[resource]bool{}
	for _, r := range a.n.Reloads {
		tainted[resource{id: int64(r.Slot)}] = true
		if r.HighZero {
			tainted[resource{id: int64(r.Slot + 1)}] = true
		}
	}
	var block uint64 // the block being looked at
	regs := func(r gvinst.Reg, t gvinst.Type) []resource {
		if r.IsVirtual() {
			// A virtual register holds the whole value.
			return []resource{{id: int64(r), block: block}}
		}
		out := make([]resource, max(t.Slots(), 1))
		for s := range out {
			out[s] = resource{id: int64(r) + int64(s)}
		}
		return out
	}
	// sources returns the register resources an instruction reads, and
	// the base register of its memory operand (0 and false if none).
	sources := func(in *gvinst.Inst) (srcs []resource, base gvinst.Reg, hasBase bool) {
		si := 0
		for _, k := range in.Op.Info().Operands {
			switch k {
			case gvinst.OpdSrc, gvinst.OpdMem, gvinst.OpdSrcImm:
				if k == gvinst.OpdSrcImm && in.HasImm {
					si++
					continue
				}
				if k == gvinst.OpdMem {
					base, hasBase = in.Src[si], true
				}
				srcs = append(srcs, regs(in.Src[si], in.SrcTypeOf(si))...)
				si++
			}
		}
		return srcs, base, hasBase
	}
	anyTainted := func(rs []resource) bool {
		for _, r := range rs {
			if tainted[r] {
				return true
			}
		}
		return false
	}
	privSlots := func(addr uint64, idx int, in *gvinst.Inst) ([]resource, bool) {
		o, ok := a.priv[key(addr, idx)]
		if !ok {
			return nil, false
		}
		n := 1
		if in.Type.Size() == 16 {
			n = 2
		}
		out := make([]resource, n)
		for k := range out {
			out[k] = resource{kind: 1, id: o + int64(8*k)}
		}
		return out, true
	}
	for _, addr := range a.order {
		for i := range a.n.Blocks[addr].Insts {
			switch a.n.Blocks[addr].Insts[i].Op {
			case gvinst.OpRepStos, gvinst.OpRepMovs, gvinst.OpRepCmps, gvinst.OpRepScas:
				return false
			}
		}
	}
	// Propagate to a fixed point.
	for changed := true; changed; {
		changed = false
		mark := func(rs []resource) {
			for _, r := range rs {
				if !tainted[r] {
					tainted[r], changed = true, true
				}
			}
		}
		for _, addr := range a.order {
			b := a.n.Blocks[addr]
			block = addr
			for i := range b.Insts {
				in := &b.Insts[i]
				info := in.Op.Info()
				srcs, _, _ := sources(in)
				t := anyTainted(srcs)
				if info.Effects&gvinst.EffStateRead != 0 && tainted[flagsResource] {
					t = true
				}
				if slots, ok := privSlots(addr, i, in); ok {
					// A private slot lives in a register of the kernel.
					if in.Op == gvinst.OpLd {
						t = anyTainted(slots)
					} else if in.Op == gvinst.OpSt && anyTainted(regs(in.Src[1], in.Type)) {
						mark(slots)
					}
				} else if info.Effects&gvinst.EffLoad != 0 {
					t = true
				}
				if t && hasDst(in) {
					mark(regs(in.Dst, in.DstType()))
				}
				if t && info.Effects&gvinst.EffStateWrite != 0 {
					mark([]resource{flagsResource})
				}
			}
		}
	}
	for _, addr := range a.order {
		b := a.n.Blocks[addr]
		block = addr
		for i := range b.Insts {
			in := &b.Insts[i]
			info := in.Op.Info()
			srcs, base, hasBase := sources(in)
			if _, private := a.priv[key(addr, i)]; !private && hasBase && anyTainted(regs(base, gvinst.U64)) {
				return false // an address computed from loaded data
			}
			switch {
			case in.Op == gvinst.OpBranch && anyTainted(srcs):
				return false // a branch on loaded data
			case in.Op == gvinst.OpTrap:
				return false
			case info.Effects&gvinst.EffTrap != 0 && in.Op != gvinst.OpLd && in.Op != gvinst.OpSt && !in.Type.IsFloat() && anyTainted(srcs):
				return false // an integer division of loaded data may trap
			}
		}
	}
	for _, r := range a.n.Reloads {
		for _, t := range r.Terms {
			if tainted[resource{id: int64(t.Reg)}] {
				return false // a reload's address from loaded data
			}
		}
	}
	return true
}
