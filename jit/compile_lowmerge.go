package jit

import "github.com/gxbit/gxbit/gvinst"

// A scalar single-precision SSE instruction (addss, mulss, divss, sqrtss,
// cvtsi2ss, cvtsd2ss, ...) writes bits 0-31 of its destination register
// and keeps the rest. The lifter says so in three GVInst instructions:
//
//	MUL.f32 v, m, y           the result, zero-extended
//	AND.b64 t, m, -4294967296 the destination's other bits
//	OR.b64  d, t, v           merged
//
// The host instruction does the same merge by itself when the
// destination's 64 bits are in its xmm register: movq xmm0, m; mulss
// xmm0, y; movq d, xmm0. lowMerge finds such triples; the AND and the OR
// then make no code of their own.

// lowMerge is a .f32 operation whose result is merged into the low 32 bits
// of base by instructions and (the AND) and or (the OR). The OR comes
// after the operation, so or is never 0: a zero lowMerge is none.
type lowMerge struct {
	and, or int
	base    gvinst.Reg // the AND's source, renamed as at the operation
}

// lowMergeMask is the AND's immediate: every bit but the low lane's.
const lowMergeMask = -1 << 32

// findLowMerges sets merges: by the index of the .f32 operation, the
// merges the compiler may fold into it (see lowMerge). The operation's
// result and the AND's are read by the OR alone; every instruction
// between the operation and the OR other than the AND is a copy renamed
// away (no code, so no exit can come between), none writes the base or
// the OR's destination, and that destination, a virtual register, is
// written only by the OR, so computing it early changes nothing any
// instruction sees. A binary operation's first source must be the base
// (addss xmm0, xmm1 merges into xmm0); a unary one's (sqrtss, the
// conversions) may be anything.
func (f *unitFacts) findLowMerges() {
	vb := f.vb
	f.merges = f.merges[:0]
	any := false
	for i := range vb.Insts {
		if vb.Insts[i].Type == gvinst.F32 {
			any = true
			break
		}
	}
	if !any {
		return // most blocks: nothing to look for
	}
	writes := &f.writes
	resolve := func(r gvinst.Reg, at int) gvinst.Reg {
		if a, ok := f.alias.get(r); ok && a.from < at {
			return a.of
		}
		return r
	}
	only := func(rs []int, i int) bool { return len(rs) == 1 && rs[0] == i }
	is64 := func(t gvinst.Type) bool { return t.Size() == 8 && !t.IsFloat() && !t.IsWide() }
	for i := range vb.Insts {
		in := &vb.Insts[i]
		if in.Type != gvinst.F32 || in.HasImm || !in.Dst.IsVirtual() || !only(writes.of(in.Dst), i) {
			continue
		}
		binaryOp := false
		switch in.Op {
		case gvinst.OpAdd, gvinst.OpSub, gvinst.OpMul, gvinst.OpDiv:
			binaryOp = true
		case gvinst.OpSqrt, gvinst.OpCvt:
		default:
			continue
		}
		v := in.Dst
		rs := f.reads.of(v)
		if len(rs) != 1 || rs[0] <= i {
			continue
		}
		j := rs[0]
		or := &vb.Insts[j]
		if or.Op != gvinst.OpOr || !is64(or.Type) || or.HasImm {
			continue
		}
		var t gvinst.Reg
		switch {
		case or.Src[0] == v && or.Src[1] != v:
			t = or.Src[1]
		case or.Src[1] == v && or.Src[0] != v:
			t = or.Src[0]
		default:
			continue
		}
		d := or.Dst
		if !t.IsVirtual() || !only(f.reads.of(t), j) || len(writes.of(t)) != 1 ||
			!d.IsVirtual() || !only(writes.of(d), j) || d == t || d == v {
			continue
		}
		k := writes.of(t)[0]
		and := &vb.Insts[k]
		if k <= i || k >= j || and.Op != gvinst.OpAnd || !is64(and.Type) || !and.HasImm || and.Imm != lowMergeMask {
			continue
		}
		m := resolve(and.Src[0], k)
		if binaryOp && resolve(in.Src[0], i) != m {
			continue
		}
		ok := true
		for l := i + 1; l < j && ok; l++ {
			if l != k && !f.isAliasDef(l, &vb.Insts[l]) {
				ok = false
				break
			}
			for _, u := range f.usesOf(l) {
				if u.r == d || u.dst && u.r == m {
					ok = false
				}
			}
		}
		if !ok {
			continue
		}
		if len(f.merges) == 0 {
			f.merges = reuse(f.merges, len(vb.Insts))
		}
		f.merges[i] = lowMerge{and: k, or: j, base: m}
	}
}

// mergeInto starts the code of .f32 operation idx when it has a merge:
// xmm0 gets the base's 64 bits, and the AND and the OR make no code.
// It reports whether there is one; the caller computes into xmm0 and
// calls mergeOut.
func (c *compiler) mergeInto(idx int) bool {
	m, ok := c.mergeOf(idx)
	if !ok {
		return false
	}
	c.loadF(0, m.base, true)
	c.skip[m.and] = true
	c.skip[m.or] = true
	return true
}

// mergeOut makes xmm0's low 64 bits the new value of the OR's
// destination, for operation idx that mergeInto began.
func (c *compiler) mergeOut(idx int) {
	m, _ := c.mergeOf(idx)
	c.putF(c.vb.Insts[m.or].Dst, 0, true)
}

// putFOrMerge ends operation idx's code: mergeOut when mergeInto began a
// merge (merged), else putF of xmm0 into slot r.
func (c *compiler) putFOrMerge(idx int, merged bool, r gvinst.Reg, f64 bool) {
	if merged {
		c.mergeOut(idx)
		return
	}
	c.putF(r, 0, f64)
}
