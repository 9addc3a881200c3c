package gvinst

import "fmt"

// cinst is one compiled instruction. Register operands are frame slots.
type cinst struct {
	op         iop
	d, a, b, c uint16
	mod        uint8
	sz         uint8
	idx        uint32 // index of the source instruction in cblock.insts
	imm        uint64
}

// cblock is a compiled VBlock.
type cblock struct {
	addr, end uint64
	code      []cinst
	insts     []Inst // the instructions code was compiled from (after coalescing)
	vb        *VBlock
	nguest    uint64     // guest instructions in the block
	target    [2]uint64  // the static successors of the last instruction
	succ      [2]*cblock // their compiled blocks, once known (chaining)
	dead      bool       // invalidated: must not be entered again
	bp        bool       // a breakpoint is set at addr
	runs      uint32     // times entered, counted only with InterpOptions.HotAfter
	edges     [2]uint32  // times each static successor was taken, counted only with InterpOptions.HotAfter
	// jumped is the last computed target the block went to, and
	// jumpedRuns how many times in a row it went there (with HotAfter).
	jumped     uint64
	jumpedRuns uint32
}

// The mod of iLd128, iSt128, iLdX128 and iStX128: the shift of the X
// forms in its low bits, and modAligned when the access first checks that
// its address is 16-byte aligned (a CHKALIGN.b128 folded in).
const (
	modShift   = 63
	modAligned = 64
)

// compileBlock compiles vb. With fast set, it coalesces guest state copies
// into direct slot accesses and uses the specialised opcodes; otherwise
// every instruction but the control transfer runs through the reference
// path.
func compileBlock(vb *VBlock, fast bool) (*cblock, error) {
	insts := append([]Inst(nil), vb.Insts...)
	if fast {
		insts = coalesce(insts)
	}
	b := &cblock{addr: vb.Addr, end: vb.End, insts: insts, vb: vb}
	b.nguest = uint64(len(vb.Guest))
	if b.nguest == 0 {
		b.nguest = b.guestBefore(^uint64(0))
	}
	if n := NumGuestSlots + Reg(vb.NumVRegs()); n > maxFrameReg {
		return nil, fmt.Errorf("vblock %#x uses %d virtual registers, more than the interpreter's frame holds", vb.Addr, vb.NumVRegs())
	}
	b.code = make([]cinst, 0, len(insts))
	var reads map[Reg]int
	if fast {
		reads = readCounts(insts)
	}
	for i := 0; i < len(insts); i++ {
		in := &insts[i]
		if fast {
			if c, n, ok := fuseAddress(insts[i:], reads, i); ok {
				b.code = append(b.code, c)
				i += n - 1
				continue
			}
		}
		if fast && i+2 < len(insts) {
			// LD.u64 v, a(disp); LI.u64 z, 0; JOIN.b128 d, v, z (movsd and
			// movq from memory) → one load that zeroes d's high half.
			li, join := &insts[i+1], &insts[i+2]
			if in.Op == OpLd && in.Type.Size() == 8 && !in.Type.IsWide() && li.Op == OpLi && !li.Type.IsWide() && li.Imm == 0 &&
				join.Op == OpJoin && join.Src[0] == in.Dst && join.Src[1] == li.Dst && in.Dst != li.Dst &&
				in.Dst.IsVirtual() && li.Dst.IsVirtual() && reads[in.Dst] == 1 && reads[li.Dst] == 1 && in.Src[0] != join.Dst {
				c := cinst{op: iLd64Z, idx: uint32(i), d: uint16(join.Dst), a: uint16(in.Src[0]), imm: uint64(in.Imm)}
				i += 2
				if g, ok := putOfJoin(insts, i); ok {
					c.mod, c.b = 1, uint16(g)
					i++
				}
				b.code = append(b.code, c)
				continue
			}
		}
		if fast && i+1 < len(insts) {
			// LD.u64 v, b(disp); OP.f64 d, a, v → one load-op (addsd xmm,
			// [mem] and the like).
			op := &insts[i+1]
			if in.Op == OpLd && in.Type.Size() == 8 && !in.Type.IsWide() && in.Dst.IsVirtual() && reads[in.Dst] == 1 &&
				op.Type == F64 && !op.HasImm && op.Src[1] == in.Dst && op.Src[0] != in.Dst {
				var k iop
				switch op.Op {
				case OpAdd:
					k = iAddF64M
				case OpSub:
					k = iSubF64M
				case OpMul:
					k = iMulF64M
				case OpDiv:
					k = iDivF64M
				}
				if k != 0 {
					b.code = append(b.code, cinst{op: k, idx: uint32(i), d: uint16(op.Dst), a: uint16(op.Src[0]), b: uint16(in.Src[0]), c: uint16(in.Dst), imm: uint64(in.Imm)})
					i++
					continue
				}
			}
		}
		if fast && i+1 < len(insts) {
			// LI.u64 z, 0; JOIN.b128 d, v, z (and PUT.b128 g, d): the
			// zero-extension of a scalar into an xmm register.
			join := &insts[i+1]
			if in.Op == OpLi && !in.Type.IsWide() && in.Imm == 0 && in.Dst.IsVirtual() && reads[in.Dst] == 1 &&
				join.Op == OpJoin && join.Src[1] == in.Dst && join.Src[0] != in.Dst {
				c := cinst{op: iJoinZ, idx: uint32(i + 1), d: uint16(join.Dst), a: uint16(join.Src[0])}
				i++
				if g, ok := putOfJoin(insts, i); ok {
					c.mod, c.b = 1, uint16(g)
					i++
				}
				b.code = append(b.code, c)
				continue
			}
		}
		if fast && checksAlignOf(insts, i) {
			// CHKALIGN.b128 a(disp); LD or ST.b128 a(disp) → one access
			// that checks the alignment first.
			acc := &insts[i+1]
			c := cinst{op: iSlow, idx: uint32(i + 1), d: uint16(acc.Dst), a: uint16(acc.Src[0]), b: uint16(acc.Src[1]), c: uint16(acc.Src[2])}
			lower(&c, acc)
			c.mod |= modAligned
			b.code = append(b.code, c)
			i++
			continue
		}
		c := cinst{op: iSlow, idx: uint32(i), d: uint16(in.Dst), a: uint16(in.Src[0]), b: uint16(in.Src[1]), c: uint16(in.Src[2]), mod: in.Mod}
		if in.Op.EndsBlock() {
			lowerControl(&c, in, b)
		} else if fast {
			// CMP fused with the BRANCH that ends the block.
			if in.Op == OpCmp && i == len(insts)-2 && in.Dst.IsVirtual() {
				if br := &insts[i+1]; br.Op == OpBranch && br.Src[0] == in.Dst {
					if op, ok := cmpIop(in, iBrEq64); ok {
						c.op = op
						c.imm = uint64(in.Imm)
						b.target = br.Target
						b.code = append(b.code, c)
						break
					}
				}
			}
			lower(&c, in)
		}
		b.code = append(b.code, c)
	}
	return b, nil
}

// lowerControl compiles the instruction that ends a block.
func lowerControl(c *cinst, in *Inst, b *cblock) {
	switch in.Op {
	case OpJmp, OpCall:
		c.op = iJmp
		b.target[0] = in.Target[0]
	case OpBranch:
		c.op = iBranch
		b.target = in.Target
	case OpJmpR, OpCallR, OpRet:
		c.op = iJmpR
	case OpSyscall:
		c.op = iSyscall
		b.target[0] = in.Target[0]
	case OpTrap:
		c.op = iTrap
		c.imm = uint64(in.Imm)
	}
}

// lower picks the specialised opcode for a non-control instruction, leaving
// iSlow where there is none.
func lower(c *cinst, in *Inst) {
	t := in.Type
	c.imm = uint64(in.Imm)
	sz := t.Size()
	switch in.Op {
	case OpGet, OpPut, OpMov:
		switch {
		case t.IsWide():
			c.op = iMov2
		case sz == 8 || in.Op == OpMov:
			c.op = iMov
		default:
			c.op, c.imm = iMovMask, t.Mask()
		}
	case OpLi:
		if !t.IsWide() {
			c.op, c.imm = iLi, uint64(in.Imm)&t.Mask()
		}
	case OpJoin:
		c.op = iJoin
	case OpLd:
		c.sz = uint8(sz)
		switch sz {
		case 1:
			c.op = iLd8
		case 2:
			c.op = iLd16
		case 4:
			c.op = iLd32
		case 8:
			c.op = iLd64
		case 16:
			c.op = iLd128
		}
	case OpChkAlign:
		if sz&(sz-1) == 0 {
			c.op, c.sz = iChkAlign, uint8(sz)
		}
	case OpSt:
		c.sz = uint8(sz)
		switch sz {
		case 1:
			c.op = iSt8
		case 2:
			c.op = iSt16
		case 4:
			c.op = iSt32
		case 8:
			c.op = iSt64
		case 16:
			c.op = iSt128
		}
	case OpAdd, OpSub, OpMul, OpAnd, OpOr, OpXor, OpShl, OpShr, OpSar:
		if t.IsFloat() {
			if in.HasImm || t == F80 {
				return
			}
			base := map[Op]iop{OpAdd: iAddF64, OpSub: iSubF64, OpMul: iMulF64}[in.Op]
			if base == 0 {
				return
			}
			if t == F32 {
				base += iAddF32 - iAddF64
			}
			c.op = base
			return
		}
		var base iop
		switch sz {
		case 8:
			base = iAdd64
		case 4:
			base = iAdd32
		default:
			return
		}
		k := map[Op]iop{OpAdd: 0, OpSub: 2, OpMul: 4, OpAnd: 6, OpOr: 8, OpXor: 10, OpShl: 12, OpShr: 14, OpSar: 16}[in.Op]
		c.op = base + k
		if in.HasImm {
			c.op++
		}
	case OpMulHi:
		if t.Size() == 8 && !t.IsWide() {
			c.op = iMulHiU64
			if t.IsSigned() {
				c.op = iMulHiS64
			}
			if in.HasImm {
				c.b, c.mod = 0, 1
			}
		}
	case OpDiv:
		if !in.HasImm && (t == F64 || t == F32) {
			c.op = iDivF64
			if t == F32 {
				c.op = iDivF32
			}
		}
	case OpCmp:
		if op, ok := cmpIop(in, iCmpEq64); ok {
			c.op = op
		}
	case OpSelect:
		if !t.IsWide() {
			c.op, c.a, c.b, c.c = iSelect, uint16(in.Src[0]), uint16(in.Src[1]), uint16(in.Src[2])
		}
	case OpFlags:
		switch FlagKind(in.Mod) {
		case FlagsAdd, FlagsSub, FlagsAdc, FlagsSbb, FlagsLogic, FlagsNeg, FlagsMul:
			c.op = iFlags
			c.imm = CCOpValue(FlagKind(in.Mod), t)
			c.d = uint16(in.Src[3])
		}
	case OpGetCC:
		c.op = iGetCC
	case OpCvt:
		lowerCvt(c, in)
	case OpVAdd, OpVSub, OpVMul, OpVDiv:
		if t == F64 || t == F32 {
			c.op = map[Op]iop{OpVAdd: iVAddF64, OpVSub: iVSubF64, OpVMul: iVMulF64, OpVDiv: iVDivF64}[in.Op]
			if t == F32 {
				c.op += iVAddF32 - iVAddF64
			}
		}
	case OpVUnpackL, OpVUnpackH:
		if t.Size() == 8 {
			c.op = iVUnpackL64
			if in.Op == OpVUnpackH {
				c.op = iVUnpackH64
			}
		}
	case OpVAnd:
		c.op = iVAnd
	case OpVOr:
		c.op = iVOr
	case OpVXor:
		c.op = iVXor
	case OpVAndN:
		c.op = iVAndN
	case OpVCmp:
		if Cmp(in.Mod) == CmpEq && (t == U8 || t == S8 || t == B8) {
			c.op = iVCmpEqU8
		}
	case OpVMovMsk:
		if t.Size() == 1 {
			c.op = iVMovMskU8
		}
	}
}

// cmpIop picks the compiled CMP (base iCmpEq64) or fused CMP and BRANCH
// (base iBrEq64) form of an integer CMP of 32 or 64 bits.
func cmpIop(in *Inst, base iop) (iop, bool) {
	t := in.Type
	if !t.IsInt() || (t.Size() != 8 && t.Size() != 4) {
		return 0, false
	}
	var ci int
	switch Cmp(in.Mod) {
	case CmpEq, CmpEqu:
		ci = 0
	case CmpNe, CmpNeu:
		ci = 1
	case CmpLt, CmpLtu:
		ci = 2
	case CmpLe, CmpLeu:
		ci = 3
	case CmpGt, CmpGtu:
		ci = 4
	case CmpGe, CmpGeu:
		ci = 5
	default:
		return 0, false
	}
	if ci >= 2 && !t.IsSigned() {
		ci += 4
	}
	op := base + iop(ci*4)
	if t.Size() == 4 {
		op += 2
	}
	if in.HasImm {
		op++
	}
	return op, true
}

// coalesce removes guest state copies a compiled block does not need: a
// 64-bit GET (or a one-slot MOV) whose source is not written while its value is still read is
// dropped and its readers read the guest slot directly; a 64-bit PUT of a
// value computed earlier in the block, when nothing in between touches the
// slot, becomes the computing instruction writing the slot directly. Guest
// state at a trap between the two may then already hold the new value,
// which gxbit allows (it reports faults, it does not deliver signals to
// guest handlers).
func coalesce(insts []Inst) []Inst {
	dead := make([]bool, len(insts))
	// No read of v lies past readEnd(v): the scans for v stop there,
	// which keeps coalescing a long block linear rather than quadratic.
	// Renaming v's reads to g moves v's bound to g when g is virtual
	// (a MOV between virtual registers), so the bounds hold throughout.
	last := lastVirtualReads(insts)
	readEnd := func(v Reg) int {
		if k := v.VIndex(); k < len(last) {
			return last[k] + 1
		}
		return 0
	}
	renamed := func(v, g Reg) {
		if g.IsVirtual() && readEnd(v) > readEnd(g) {
			for len(last) <= g.VIndex() {
				last = append(last, -1)
			}
			last[g.VIndex()] = readEnd(v) - 1
		}
	}
	for i := range insts {
		in := &insts[i]
		switch {
		case !in.Dst.IsVirtual() || in.Type.IsWide():
			continue
		case in.Op == OpGet && in.Type.Size() == 8, in.Op == OpMov:
		default:
			continue
		}
		v, g := in.Dst, in.Src[0]
		end, ok := aliasEnd(insts, dead, i, v, g, readEnd(v))
		if !ok {
			continue
		}
		renameReads(insts, dead, i+1, end, v, g)
		renamed(v, g)
		dead[i] = true
	}
	for j := range insts {
		in := &insts[j]
		if dead[j] || in.Op != OpPut || in.Type.Size() != 8 || !in.Src[0].IsVirtual() {
			continue
		}
		g, v := in.Dst, in.Src[0]
		i := j - 1
		for ; i >= 0; i-- {
			if !dead[i] && writesReg(&insts[i], v) {
				break
			}
		}
		if i < 0 {
			continue
		}
		def := &insts[i]
		if d, ok := destReg(def); !ok || d.r != v || d.n != 1 {
			continue
		}
		if _, wr := implicitSlots(def); wr.has(g) {
			continue
		}
		ok := true
		for k := i + 1; k < j && ok; k++ {
			if dead[k] {
				continue
			}
			rg, _ := readsReg(&insts[k], g)
			_, wide := readsReg(&insts[k], v)
			if rg || wide || writesReg(&insts[k], g) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		end, ok := aliasEnd(insts, dead, j, v, g, readEnd(v))
		if !ok {
			continue
		}
		def.Dst = g
		renameReads(insts, dead, i+1, end, v, g)
		renamed(v, g)
		dead[j] = true
	}
	out := insts[:0]
	for i := range insts {
		if !dead[i] {
			out = append(out, insts[i])
		}
	}
	return out
}

// aliasEnd checks that guest slot g holds the value of virtual register v
// after instruction i for as long as v is read: no read of v comes after a
// write of g, and no read of v is part of a wide value. It returns the end
// (exclusive) of the range of instructions whose reads of v are to be
// renamed. No instruction at readEnd or after reads v.
func aliasEnd(insts []Inst, dead []bool, i int, v, g Reg, readEnd int) (int, bool) {
	gw := false
	end := min(len(insts), readEnd)
	if end <= i {
		return i + 1, true
	}
	for j := i + 1; j < end; j++ {
		if dead[j] {
			continue
		}
		in := &insts[j]
		if rd, wide := readsReg(in, v); rd && (gw || wide) {
			return 0, false
		}
		if writesReg(in, g) {
			gw = true
		}
		if writesReg(in, v) {
			return j + 1, true
		}
	}
	return end, true
}

// lastVirtualReads returns, per virtual register (by VIndex), the index
// of the last instruction of insts that reads it, -1 for none.
func lastVirtualReads(insts []Inst) []int {
	var last []int
	var buf [4]regUse
	for i := range insts {
		for _, u := range sourceRegs(buf[:0], &insts[i]) {
			for s := 0; s < u.n; s++ {
				r := u.r + Reg(s)
				if !r.IsVirtual() {
					continue
				}
				for len(last) <= r.VIndex() {
					last = append(last, -1)
				}
				last[r.VIndex()] = i
			}
		}
	}
	return last
}

// renameReads replaces the reads of v by reads of g in insts[from:to].
func renameReads(insts []Inst, dead []bool, from, to int, v, g Reg) {
	for j := from; j < to; j++ {
		if dead[j] {
			continue
		}
		in := &insts[j]
		for _, si := range srcIndexes(in) {
			if in.Src[si] == v {
				in.Src[si] = g
			}
		}
	}
}

// readCounts counts the reads of each virtual register in insts.
func readCounts(insts []Inst) map[Reg]int {
	n := map[Reg]int{}
	var buf [4]regUse
	for i := range insts {
		for _, u := range sourceRegs(buf[:0], &insts[i]) {
			for s := 0; s < u.n; s++ {
				if r := u.r + Reg(s); r.IsVirtual() {
					n[r]++
				}
			}
		}
	}
	return n
}

// is64Int reports whether in is a one-slot 64-bit integer op.
func is64Int(in *Inst) bool { return in.Type.IsInt() && in.Type.Size() == 8 }

// fuseAddress compiles an address computation and the 32- or 64-bit LD or
// ST that uses it into one indexed memory instruction, when the
// intermediate registers are read nowhere else:
//
//	SHL t, x, k; ADD a, base, t; LD d, a(disp)  → d = load(base + x<<k + disp)
//	ADD a, base, x; LD d, a(disp)               → d = load(base + x + disp)
//	ADD a, base, imm; LD d, a(disp)             → d = load(base + imm + disp)
//
// (and the same for ST). A CHKALIGN.b128 a(disp) right before a 16-byte
// access of a(disp) is folded in too (modAligned). It returns the
// instruction and how many source instructions it covers.
func fuseAddress(s []Inst, reads map[Reg]int, at int) (cinst, int, bool) {
	single := func(r Reg) bool { return r.IsVirtual() && reads[r] == 1 }
	var shift uint8
	var base, index Reg
	var disp uint64
	n := 0
	hasIndex := true
	switch {
	case len(s) >= 3 && s[0].Op == OpShl && is64Int(&s[0]) && s[0].HasImm && uint64(s[0].Imm) < 64 &&
		s[1].Op == OpAdd && is64Int(&s[1]) && !s[1].HasImm && single(s[0].Dst):
		t := s[0].Dst
		switch t {
		case s[1].Src[1]:
			base = s[1].Src[0]
		case s[1].Src[0]:
			base = s[1].Src[1]
		default:
			return cinst{}, 0, false
		}
		if base == t || s[0].Src[0] == t {
			return cinst{}, 0, false
		}
		index, shift, n = s[0].Src[0], uint8(s[0].Imm), 2
	case len(s) >= 2 && s[0].Op == OpAdd && is64Int(&s[0]):
		if s[0].HasImm {
			base, disp, hasIndex = s[0].Src[0], uint64(s[0].Imm), false
		} else {
			base, index = s[0].Src[0], s[0].Src[1]
		}
		n = 1
	default:
		return cinst{}, 0, false
	}
	a := s[n-1].Dst
	mem := &s[n]
	aligned := checksAlignOf(s, n) && a.IsVirtual() && reads[a] == 2
	if aligned {
		mem = &s[n+1]
	}
	if !aligned && !single(a) || a == base || a == index || mem.Src[0] != a {
		return cinst{}, 0, false
	}
	sz := mem.Type.Size()
	if sz != 4 && sz != 8 && sz != 16 || mem.Type.IsWide() && sz != 16 {
		return cinst{}, 0, false
	}
	c := cinst{idx: uint32(at + n), a: uint16(base), b: uint16(index), mod: shift, imm: disp + uint64(mem.Imm), sz: uint8(sz)}
	covered := n + 1
	if aligned {
		c.idx++
		c.mod |= modAligned
		covered++
	}
	switch mem.Op {
	case OpLd:
		c.d = uint16(mem.Dst)
		switch {
		case sz == 16 && hasIndex:
			c.op = iLdX128
		case sz == 16:
			c.op = iLd128
		case !hasIndex && sz == 8:
			c.op = iLd64
		case !hasIndex:
			c.op = iLd32
		case sz == 8:
			c.op = iLdX64
		default:
			c.op = iLdX32
		}
	case OpSt:
		v := mem.Src[1]
		if n == 2 && v == s[0].Dst || v == a {
			return cinst{}, 0, false
		}
		c.c = uint16(v)
		switch {
		case sz == 16 && hasIndex:
			c.op = iStX128
		case sz == 16:
			c.op, c.b = iSt128, uint16(v)
		case !hasIndex && sz == 8:
			c.op, c.b = iSt64, uint16(v)
		case !hasIndex:
			c.op, c.b = iSt32, uint16(v)
		case sz == 8:
			c.op = iStX64
		default:
			c.op = iStX32
		}
	default:
		return cinst{}, 0, false
	}
	return c, covered, true
}

// checksAlignOf reports whether insts[i] is a CHKALIGN.b128 of the address
// of the 16-byte LD or ST right after it, which the compiled access then
// checks itself (modAligned).
func checksAlignOf(insts []Inst, i int) bool {
	if i+1 >= len(insts) {
		return false
	}
	chk, acc := &insts[i], &insts[i+1]
	return chk.Op == OpChkAlign && chk.Type.Size() == 16 && (acc.Op == OpLd || acc.Op == OpSt) &&
		acc.Type.Size() == 16 && acc.Src[0] == chk.Src[0] && acc.Imm == chk.Imm
}

// lowerCvt picks a specialised form for the common conversions: integer
// extension and truncation (movsx, movzx), signed integer to f64
// (cvtsi2sd) and f64 to s32/s64 by truncation (cvttsd2si).
func lowerCvt(c *cinst, in *Inst) {
	t, s := in.Type, in.SrcType
	switch {
	case t.IsInt() && s.IsInt():
		if s.IsSigned() {
			c.op, c.mod, c.imm = iSext, uint8(64-s.Bits()), t.Mask()
		} else {
			c.op, c.imm = iMovMask, s.Mask()&t.Mask()
		}
	case t == F64 && s.IsSigned() && (s.Bits() <= 32 || Rounding(in.Mod) == RoundNearest || Rounding(in.Mod) == RoundMXCSR):
		// Exact for s32 whatever the rounding; an inexact s64 takes the
		// reference path unless MXCSR rounds to nearest with PE set.
		c.op, c.mod = iCvtF64FromS64, uint8(64-s.Bits())
	case s == F64 && Rounding(in.Mod) == RoundZero && t.IsSigned() && t.Bits() == 64:
		c.op, c.imm = iCvtS64FromF64, t.Mask()
	case s == F64 && Rounding(in.Mod) == RoundZero && t.IsSigned() && t.Bits() == 32:
		c.op = iCvtS32FromF64
	}
}

// putOfJoin reports whether insts[i+1] is a PUT.b128 of the value the JOIN
// at insts[i] made, and returns the guest register it writes.
func putOfJoin(insts []Inst, i int) (Reg, bool) {
	if i+1 >= len(insts) {
		return 0, false
	}
	put := &insts[i+1]
	if put.Op != OpPut || put.Type.Size() != 16 || put.Src[0] != insts[i].Dst {
		return 0, false
	}
	return put.Dst, true
}
