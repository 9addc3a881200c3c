package profile

import (
	"math/bits"
	"strings"

	"github.com/gxbit/gxbit/gvinst"
)

// slots is a set of the guest state the analyses track: the 16 general
// registers (bits 0-15), the 16 SSE registers (bits 16-31) and the flags
// (bit 32).
type slots uint64

const (
	flagsBit = 32
	allGPR   = slots(1<<16 - 1)
	allXMM   = slots(1<<16-1) << 16
	allSlots = allGPR | allXMM | 1<<flagsBit
)

// slotBit maps a guest slot to its bit, or -1 for state not tracked.
func slotBit(r gvinst.Reg) int {
	switch {
	case r < gvinst.X0:
		return int(r)
	case r < gvinst.FSBase:
		return 16 + int(r-gvinst.X0)/2
	case r >= gvinst.CCOp && r <= gvinst.RFLAGS:
		return flagsBit
	}
	return -1
}

// bitSlot is the first guest slot of bit b.
func bitSlot(b int) gvinst.Reg {
	switch {
	case b < 16:
		return gvinst.Reg(b)
	case b < 32:
		return gvinst.XReg(b - 16)
	}
	return gvinst.CCOp
}

// bitName names a tracked slot: s0…s15, x0…x15, flags.
func bitName(b int) string {
	if b == flagsBit {
		return "flags"
	}
	return bitSlot(b).String()
}

// names lists the set's members by name.
func (s slots) names() []string {
	out := []string{}
	for s != 0 {
		b := bits.TrailingZeros64(uint64(s))
		s &^= 1 << b
		out = append(out, bitName(b))
	}
	return out
}

// String lists the set's members.
func (s slots) String() string { return strings.Join(s.names(), " ") }

// hasDst reports whether in writes its Dst register.
func hasDst(in *gvinst.Inst) bool {
	for _, k := range in.Op.Info().Operands {
		if k == gvinst.OpdDst {
			return true
		}
	}
	return false
}

// System V argument, return and callee-saved registers.
var (
	argRegs     = slots(1<<7 | 1<<6 | 1<<2 | 1<<1 | 1<<8 | 1<<9 | 1<<0 | 1<<4 | 0xff<<16)
	retRegs     = slots(1<<0 | 1<<2 | 1<<4 | 3<<16)
	calleeSaved = slots(1<<3 | 1<<5 | 1<<12 | 1<<13 | 1<<14 | 1<<15 | 1<<4)
	callerSaved = slots(1<<0|1<<1|1<<2|1<<6|1<<7|1<<8|1<<9|1<<10|1<<11) | allXMM | 1<<flagsBit
	syscallUse  = slots(1<<0 | 1<<7 | 1<<6 | 1<<2 | 1<<10 | 1<<8 | 1<<9 | 1<<4)
	syscallDef  = slots(1<<0 | 1<<1 | 1<<11)
)

// useDef returns the tracked slots the instruction reads before writing
// (use) and the slots it writes entirely (def).
// keepsSystemBitsOnly reports whether the GETFLAGS at i of code is
// read only by an AND with an immediate that clears every status flag:
// the instruction writes all six itself (ucomisd, comiss) and reads only
// the system bits (DF), which the profile does not track as flags.
func keepsSystemBitsOnly(code []gvinst.Inst, i int) bool {
	d := code[i].Dst
	used := false
	for k := i + 1; k < len(code); k++ {
		in := &code[k]
		for _, r := range in.SrcRegs() {
			if r != d {
				continue
			}
			if in.Op != gvinst.OpAnd || !in.HasImm || uint64(in.Imm)&gvinst.FlagsArith != 0 {
				return false
			}
			used = true
		}
		if hasDst(in) && in.Dst == d {
			break
		}
	}
	return used
}

func useDef(x *Insn) (use, def slots) {
	read := func(r gvinst.Reg) {
		if b := slotBit(r); b >= 0 && def&(1<<b) == 0 {
			use |= 1 << b
		}
	}
	for i := range x.Code {
		in := &x.Code[i]
		switch in.Op {
		case gvinst.OpGetFlags:
			if !keepsSystemBitsOnly(x.Code, i) {
				read(gvinst.CCOp)
			}
		case gvinst.OpGetCC:
			read(gvinst.CCOp)
		case gvinst.OpFlags, gvinst.OpSetFlags:
			def |= 1 << flagsBit
		}
		for _, r := range in.SrcRegs() {
			if r < gvinst.NumGuestSlots {
				read(r)
			}
		}
		if in.Op == gvinst.OpGet {
			read(in.Src[0])
		}
		if in.Op == gvinst.OpPut || hasDst(in) && in.Dst < gvinst.NumGuestSlots {
			r := in.Dst
			if b := slotBit(r); b >= 0 {
				if b >= 16 && b < 32 && in.Type != gvinst.B128 {
					read(r) // a partial write of an SSE register keeps its high half
				}
				def |= 1 << b
			}
		}
	}
	switch x.Term {
	case TermCall, TermCallR:
		use |= argRegs
		def |= callerSaved &^ retRegs
	case TermSyscall:
		use |= syscallUse
		def |= syscallDef
	}
	return use, def
}

// liveness computes the tracked slots live at the start of every
// instruction of f (by address).
func (f *Func) liveness() map[uint64]slots {
	type bl struct{ use, def, in, out slots }
	info := make([]bl, len(f.Blocks))
	for i, b := range f.Blocks {
		var use, def slots
		for _, x := range b.Insns {
			u, d := useDef(x)
			use |= u &^ def
			def |= d
		}
		info[i] = bl{use: use, def: def}
	}
	exitLive := func(b *Block) slots {
		switch l := b.Last(); l.Term {
		case TermRet:
			return retRegs | calleeSaved
		case TermJumpR, TermTrap:
			return allSlots
		case TermJump, TermBranch:
			// A jump out of the function is a tail call.
			for _, t := range l.Targets[:1+btoi(l.Term == TermBranch)] {
				if _, ok := f.ByAddr[t]; !ok {
					return argRegs | calleeSaved
				}
			}
		}
		return 0
	}
	for changed := true; changed; {
		changed = false
		for i := len(f.rpo) - 1; i >= 0; i-- {
			b := f.rpo[i]
			out := exitLive(b)
			for _, s := range b.Succs {
				out |= info[s.ID].in
			}
			in := info[b.ID].use | out&^info[b.ID].def
			if in != info[b.ID].in || out != info[b.ID].out {
				info[b.ID].in, info[b.ID].out = in, out
				changed = true
			}
		}
	}
	live := map[uint64]slots{}
	for _, b := range f.Blocks {
		l := info[b.ID].out
		for i := len(b.Insns) - 1; i >= 0; i-- {
			u, d := useDef(b.Insns[i])
			l = u | l&^d
			live[b.Insns[i].Addr] = l
		}
	}
	return live
}

// carriedIn returns the tracked slots an iteration of loop l reads before
// writing them: liveness inside the loop, with the back edges to its
// header and the exits cut. These are the values one iteration may take
// from the one before; the others are recomputed in every iteration.
func (l *Loop) carriedIn() slots {
	in := map[*Block]slots{}
	ud := map[*Block][2]slots{}
	for _, b := range l.Blocks {
		var use, def slots
		for _, x := range b.Insns {
			u, d := useDef(x)
			use |= u &^ def
			def |= d
		}
		ud[b] = [2]slots{use, def}
	}
	for changed := true; changed; {
		changed = false
		for i := len(l.Blocks) - 1; i >= 0; i-- {
			b := l.Blocks[i]
			var out slots
			for _, s := range b.Succs {
				if s != l.Header && l.Contains(s) {
					out |= in[s]
				}
			}
			v := ud[b][0] | out&^ud[b][1]
			if v != in[b] {
				in[b] = v
				changed = true
			}
		}
	}
	return in[l.Header]
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// valueOf describes where the value of register r at instruction index i
// of x came from, within x: a guest slot read (slot >= 0), a load from
// [slot+disp], or a constant.
type operand struct {
	kind  int // 0 unknown, 1 slot, 2 load from [base+disp], 3 constant
	slot  gvinst.Reg
	disp  int64
	size  int
	value int64
}

const (
	opdUnknown = iota
	opdSlot
	opdLoad
	opdConst
)

// trace follows r back through x's GVInst before index i.
func trace(x *Insn, i int, r gvinst.Reg) operand {
	if r < gvinst.NumGuestSlots {
		return operand{kind: opdSlot, slot: r}
	}
	for j := i - 1; j >= 0; j-- {
		in := &x.Code[j]
		if !hasDst(in) || in.Dst != r {
			continue
		}
		switch in.Op {
		case gvinst.OpGet:
			return operand{kind: opdSlot, slot: in.Src[0]}
		case gvinst.OpLi:
			return operand{kind: opdConst, value: in.Imm}
		case gvinst.OpMov:
			return trace(x, j, in.Src[0])
		case gvinst.OpCvt:
			// A width change of an integer keeps the identity of the value.
			if in.Type.IsInt() && in.SrcType.IsInt() {
				return trace(x, j, in.Src[0])
			}
		case gvinst.OpLd:
			b := addrOf(x, j)
			if b.kind == opdSlot {
				return operand{kind: opdLoad, slot: b.slot, disp: b.disp, size: in.Type.Size()}
			}
		case gvinst.OpAnd:
			if in.HasImm && (in.Imm == 0xffffffff || in.Imm == -1) {
				return trace(x, j, in.Src[0])
			}
		}
		return operand{}
	}
	return operand{}
}

// addrOf returns the address operand of the LD, ST or PROBE at index i of
// x as a guest slot plus displacement (kind opdSlot) when it is one.
func addrOf(x *Insn, i int) operand {
	in := &x.Code[i]
	disp := in.Imm
	r := in.Src[0]
	for k := 0; k < 8; k++ {
		if r < gvinst.NumGuestSlots {
			return operand{kind: opdSlot, slot: r, disp: disp}
		}
		j := i - 1
		for ; j >= 0; j-- {
			if hasDst(&x.Code[j]) && x.Code[j].Dst == r {
				break
			}
		}
		if j < 0 {
			return operand{}
		}
		d := &x.Code[j]
		switch {
		case d.Op == gvinst.OpGet:
			return operand{kind: opdSlot, slot: d.Src[0], disp: disp}
		case d.Op == gvinst.OpAdd && d.HasImm:
			disp += d.Imm
			r, i = d.Src[0], j
		case d.Op == gvinst.OpSub && d.HasImm:
			disp -= d.Imm
			r, i = d.Src[0], j
		case d.Op == gvinst.OpMov:
			r, i = d.Src[0], j
		case d.Op == gvinst.OpLi:
			return operand{kind: opdConst, value: d.Imm + disp}
		default:
			return operand{}
		}
	}
	return operand{}
}

// isStackBase reports whether slot is rsp or rbp.
func isStackBase(r gvinst.Reg) bool { return r == gvinst.S4 || r == gvinst.S5 }

// cmpFromCond maps an x86 condition on the flags of "cmp a, b" to the
// relation a ? b it tests: the gvinst.Cmp name and its signedness.
func cmpFromCond(c gvinst.Cond) (rel string, signed, ok bool) {
	switch c {
	case gvinst.CondL:
		return "lt", true, true
	case gvinst.CondLE:
		return "le", true, true
	case gvinst.CondG:
		return "gt", true, true
	case gvinst.CondGE:
		return "ge", true, true
	case gvinst.CondB:
		return "lt", false, true
	case gvinst.CondBE:
		return "le", false, true
	case gvinst.CondA:
		return "gt", false, true
	case gvinst.CondAE:
		return "ge", false, true
	case gvinst.CondE:
		return "eq", false, true
	case gvinst.CondNE:
		return "ne", false, true
	}
	return "", false, false
}

var negRel = map[string]string{"lt": "ge", "ge": "lt", "le": "gt", "gt": "le", "eq": "ne", "ne": "eq"}
var swapRel = map[string]string{"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne"}

// staticBound is the compare that ends a loop, as found in its exiting
// block: the loop continues while A rel B.
type staticBound struct {
	a, b   operand
	rel    string
	signed bool
	x86    uint64
}

// findBound looks at the exiting block of loop l for "cmp a, b; jcc".
func findBound(l *Loop) (staticBound, bool) {
	if len(l.Exits) == 0 {
		return staticBound{}, false
	}
	blk := l.Exits[0].From
	br := blk.Last()
	if br.Term != TermBranch {
		return staticBound{}, false
	}
	// The branch's condition: BRANCH c where c = GETCC.cond.
	last := &br.Code[len(br.Code)-1]
	var cond gvinst.Cond
	found := false
	for j := len(br.Code) - 2; j >= 0; j-- {
		in := &br.Code[j]
		if hasDst(in) && in.Dst == last.Src[0] && in.Op == gvinst.OpGetCC {
			cond, found = gvinst.Cond(in.Mod), true
			break
		}
	}
	if !found {
		return staticBound{}, false
	}
	rel, signed, ok := cmpFromCond(cond)
	if !ok {
		return staticBound{}, false
	}
	taken, _ := l.Func.ByAddr[last.Target[0]]
	if taken == nil || !l.Contains(taken) {
		rel = negRel[rel]
	}
	// The flags: the last FLAGS before the branch in the block.
	for k := len(blk.Insns) - 1; k >= 0; k-- {
		x := blk.Insns[k]
		for j := len(x.Code) - 1; j >= 0; j-- {
			in := &x.Code[j]
			if in.Op == gvinst.OpSetFlags {
				return staticBound{}, false
			}
			if in.Op != gvinst.OpFlags {
				continue
			}
			sb := staticBound{rel: rel, signed: signed, x86: x.Addr}
			resolve := func(o operand) operand {
				if o.kind != opdSlot || o.slot >= 16 {
					return o
				}
				// The register's last write before, in this block.
				for kk := k - 1; kk >= 0; kk-- {
					y := blk.Insns[kk]
					for jj := len(y.Code) - 1; jj >= 0; jj-- {
						w := &y.Code[jj]
						if w.Op == gvinst.OpPut && w.Dst == o.slot {
							if t := trace(y, jj, w.Src[0]); t.kind == opdLoad || t.kind == opdConst {
								return t
							}
							return o
						}
					}
				}
				return o
			}

			switch gvinst.FlagKind(in.Mod & 0x7f) {
			case gvinst.FlagsSub:
				sb.a, sb.b = resolve(trace(x, j, in.Src[0])), resolve(trace(x, j, in.Src[1]))
			case gvinst.FlagsLogic:
				if in.Src[0] != in.Src[1] {
					return staticBound{}, false
				}
				sb.a, sb.b = resolve(trace(x, j, in.Src[0])), operand{kind: opdConst}
			default:
				// add, inc, dec…: the result compared with 0; the result
				// is what the instruction writes back.
				return staticBound{}, false
			}
			return sb, true
		}
	}
	return staticBound{}, false
}

// accumulates reports whether the value loaded by the LD at (ld, li) flows
// to the value stored by the ST at (st, si), in block b, through exactly
// one associative update x = x op e (op add or mul, e independent of x),
// and nowhere else. It returns the op ("add" or "mul").
func accumulates(b *Block, ld *Insn, li int, st *Insn, si int) (string, bool) {
	start, end := -1, -1
	for k, x := range b.Insns {
		if x == ld {
			start = k
		}
		if x == st {
			end = k
		}
	}
	if start < 0 || end < start {
		return "", false
	}
	var tslots map[gvinst.Reg]int // tainted guest slots: number of updates so far
	tslots = map[gvinst.Reg]int{}
	op := ""
	for k := start; k <= end; k++ {
		x := b.Insns[k]
		tv := map[gvinst.Reg]int{} // tainted virtual registers
		first := 0
		if k == start {
			first = li + 1
			tv[x.Code[li].Dst] = 0
		}
		taint := func(r gvinst.Reg) (int, bool) {
			if r < gvinst.NumGuestSlots {
				n, ok := tslots[r]
				return n, ok
			}
			n, ok := tv[r]
			return n, ok
		}
		last := len(x.Code)
		if k == end {
			last = si + 1
		}
		for j := first; j < last; j++ {
			in := &x.Code[j]
			if in.Op == gvinst.OpFlags {
				continue
			}
			if k == end && j == si {
				n, ok := taint(in.Src[1])
				if _, bad := taint(in.Src[0]); bad {
					return "", false
				}
				return op, ok && n == 1
			}
			var tn []int
			var tpos []int
			for p, r := range in.SrcRegs() {
				if n, ok := taint(r); ok {
					tn = append(tn, n)
					tpos = append(tpos, p)
				}
			}
			if in.Op == gvinst.OpGet {
				if n, ok := tslots[in.Src[0]]; ok {
					tn, tpos = []int{n}, []int{0}
				}
			}
			if len(tn) == 0 {
				if hasDst(in) {
					delete(tv, in.Dst)
				}
				if in.Op == gvinst.OpPut {
					delete(tslots, in.Dst)
				}
				continue
			}
			if len(tn) > 1 {
				return "", false
			}
			n := tn[0]
			switch in.Op {
			case gvinst.OpGet, gvinst.OpMov:
				tv[in.Dst] = n
			case gvinst.OpJoin:
				if tpos[0] != 0 {
					return "", false
				}
				tv[in.Dst] = n
			case gvinst.OpPut:
				tslots[in.Dst] = n
			case gvinst.OpAdd, gvinst.OpVAdd, gvinst.OpMul, gvinst.OpVMul, gvinst.OpSub, gvinst.OpVSub,
				gvinst.OpAnd, gvinst.OpOr, gvinst.OpVAnd, gvinst.OpVOr, gvinst.OpMin, gvinst.OpMax, gvinst.OpVMin, gvinst.OpVMax:
				o := reductionOp(in.Op)
				if (in.Op == gvinst.OpSub || in.Op == gvinst.OpVSub) && tpos[0] != 0 {
					return "", false
				}
				if op != "" && op != o || n != 0 {
					return "", false
				}
				op = o
				tv[in.Dst] = n + 1
			default:
				return "", false
			}
		}
	}
	return "", false
}

// regAccumulates reports whether the carried register bit b of loop l is
// an accumulator: every instruction of the loop that reads it is
// b = b op e, with one op for all of them (gcc -O3 unrolls a sum into
// several such instructions).
func regAccumulates(l *Loop, b int) (string, bool) {
	op := ""
	n := 0
	for _, blk := range l.Blocks {
		for _, x := range blk.Insns {
			u, _ := useDef(x)
			if u&(1<<b) == 0 {
				continue
			}
			o, ok := insnAccumulates(x, bitSlot(b))
			if !ok || op != "" && o != op {
				return "", false
			}
			op = o
			n++
		}
	}
	return op, n > 0
}

// insnAccumulates reports whether instruction x is slot = slot op e with
// e independent of slot, and returns op.
func insnAccumulates(x *Insn, slot gvinst.Reg) (string, bool) {
	tv := map[gvinst.Reg]int{}
	op := ""
	ok := false
	for j := range x.Code {
		in := &x.Code[j]
		if in.Op == gvinst.OpGet && in.Src[0] == slot {
			tv[in.Dst] = 0
			continue
		}
		if in.Op == gvinst.OpFlags {
			continue
		}
		var tn []int
		var tpos []int
		for p, r := range in.SrcRegs() {
			if r == slot {
				return "", false
			}
			if n, t := tv[r]; t {
				tn = append(tn, n)
				tpos = append(tpos, p)
			}
		}
		if len(tn) == 0 {
			continue
		}
		if len(tn) > 1 {
			return "", false
		}
		n := tn[0]
		switch in.Op {
		case gvinst.OpMov:
			tv[in.Dst] = n
		case gvinst.OpJoin:
			if tpos[0] != 0 {
				return "", false
			}
			tv[in.Dst] = n
		case gvinst.OpPut:
			if in.Dst != slot || n != 1 {
				return "", false
			}
			ok = true
		case gvinst.OpAdd, gvinst.OpVAdd, gvinst.OpMul, gvinst.OpVMul, gvinst.OpSub, gvinst.OpVSub,
			gvinst.OpAnd, gvinst.OpOr, gvinst.OpVAnd, gvinst.OpVOr, gvinst.OpMin, gvinst.OpMax, gvinst.OpVMin, gvinst.OpVMax:
			o := reductionOp(in.Op)
			if (in.Op == gvinst.OpSub || in.Op == gvinst.OpVSub) && tpos[0] != 0 || n != 0 || op != "" {
				return "", false
			}
			op = o
			tv[in.Dst] = 1
		default:
			return "", false
		}
	}
	return op, ok
}

// reductionOp names the associative operator of an accumulating op.
func reductionOp(op gvinst.Op) string {
	switch op {
	case gvinst.OpMul, gvinst.OpVMul:
		return "mul"
	case gvinst.OpAnd, gvinst.OpVAnd:
		return "and"
	case gvinst.OpOr, gvinst.OpVOr:
		return "or"
	case gvinst.OpMin, gvinst.OpVMin:
		return "min"
	case gvinst.OpMax, gvinst.OpVMax:
		return "max"
	}
	return "add"
}

// spillRestored reports whether general register b, though written in
// loop l, holds its header value again at every back edge because it is
// spilled to one stack slot and reloaded from it (gcc -O2 frees a
// register for an inner loop this way: `mov [rsp], r11` before it, `mov
// r11, [rsp]` after). A forward must-analysis over the loop's blocks
// tracks whether b, and the slot, hold b's value at the header. A 32-bit
// spill and reload (`mov [rsp], ebp` … `mov ebp, [rsp]`) restores b only
// when its value fits in 32 bits: the caller says so with fits32.
func spillRestored(l *Loop, b int, fits32 bool) bool {
	if b >= 16 {
		return false
	}
	reg := bitSlot(b)
	type slotKey struct {
		base gvinst.Reg
		disp int64
		size int
	}
	var slot *slotKey
	// spillOf returns the stack slot instruction x stores b to, if it does.
	spillOf := func(x *Insn) (slotKey, bool) {
		for i := range x.Code {
			in := &x.Code[i]
			if in.Op != gvinst.OpSt || in.Type.Size() != 8 && (in.Type.Size() != 4 || !fits32) {
				continue
			}
			a := addrOf(x, i)
			if a.kind != opdSlot || !isStackBase(a.slot) {
				continue
			}
			if v := trace(x, i, in.Src[1]); v.kind == opdSlot && v.slot == reg {
				return slotKey{a.slot, a.disp, in.Type.Size()}, true
			}
		}
		return slotKey{}, false
	}
	for _, blk := range l.Blocks {
		for _, x := range blk.Insns {
			if k, ok := spillOf(x); ok {
				if slot != nil && *slot != k {
					return false
				}
				slot = &k
			}
		}
	}
	if slot == nil || writes(l, slotBit(slot.base)) {
		return false // no spill, or the frame moves under the slot
	}
	// step applies instruction x to (b holds the header value, the slot
	// holds it).
	step := func(x *Insn, regOK, slotOK bool) (bool, bool) {
		if k, ok := spillOf(x); ok && k == *slot {
			return regOK, regOK
		}
		for i := range x.Code {
			in := &x.Code[i]
			if in.Op == gvinst.OpSt {
				// A store that shares a byte with the slot (gcc -O3's
				// gemm spills ebp to [rsp+0x38] and r12d beside it).
				if a := addrOf(x, i); a.kind == opdSlot && a.slot == slot.base && a.disp < slot.disp+int64(slot.size) && slot.disp < a.disp+int64(in.Type.Size()) {
					slotOK = false
				}
			}
		}
		if _, def := useDef(x); def&(1<<b) != 0 {
			regOK = false
			for i := range x.Code {
				in := &x.Code[i]
				if in.Op == gvinst.OpPut && in.Dst == reg && in.Type.Size() == 8 {
					v := trace(x, i, in.Src[0])
					regOK = v.kind == opdLoad && v.slot == slot.base && v.disp == slot.disp && v.size == slot.size && slotOK
				}
			}
		}
		return regOK, slotOK
	}
	type state struct{ reg, slot bool }
	in := map[*Block]state{}
	for _, blk := range l.Blocks {
		in[blk] = state{true, true}
	}
	out := func(blk *Block) state {
		st := in[blk]
		for _, x := range blk.Insns {
			st.reg, st.slot = step(x, st.reg, st.slot)
		}
		return st
	}
	for changed := true; changed; {
		changed = false
		for _, blk := range l.Blocks {
			st := state{true, true}
			if blk == l.Header {
				st = state{true, false}
			} else {
				for _, p := range blk.Preds {
					if l.Contains(p) {
						o := out(p)
						st.reg, st.slot = st.reg && o.reg, st.slot && o.slot
					}
				}
			}
			if st != in[blk] {
				in[blk], changed = st, true
			}
		}
	}
	for _, lt := range l.Latches {
		if !out(lt).reg {
			return false
		}
	}
	return true
}

// loadsData reports whether some instruction of loop l writes tracked
// slot b a value computed from a load whose address moves in the loop:
// data, which no number of header snapshots proves an induction variable.
// gcc keeps A[k+1] in an SSE register for the next iteration's A[k]; an
// array initialised linearly in k makes those values step like an
// induction variable in every iteration the profile watches, and a kernel
// that computed them from the thread's index would be wrong once the data
// changes. A load from a fixed place (a constant address, or a register
// the loop does not write plus a displacement: a stack slot, a global, a
// vector of steps in .rodata) is spared: it reads the same bytes in every
// iteration, and -O0 code and spills keep induction variables there. A
// copy of another register that holds such data (gcc's A[k-1] from last
// iteration's A[k]) is data too. Only the writes whose value can reach a
// back edge count: an outer loop whose counter lives in a register that
// its inner loop borrows as a temporary for loaded bytes, and restores
// from a spill before the back edge (gcc -O2's blur: edx), holds at its
// header only what the restore put there. What those writes read is
// traced through every write of the loop (dataSlot).
func loadsData(l *Loop, b int) bool {
	busy := map[int]bool{b: true}
	for _, blk := range l.Blocks {
		for xi, x := range blk.Insns {
			for i := range x.Code {
				in := &x.Code[i]
				if in.Op == gvinst.OpPut && slotBit(in.Dst) == b && reachesBackEdge(l, blk, xi, i, in.Dst) {
					if dataFrom(l, blk, xi, i, in.Src[0], map[int]bool{}, busy) {
						return true
					}
				}
			}
		}
	}
	return false
}

// reachesBackEdge reports whether the value the PUT at index i of
// instruction xi of block blk writes to guest slot g can still be in g
// at a back edge of loop l: a path from it to the header within the loop
// passes no other whole write of g (a write of part of g, or of state not
// by PUT, does not stop it).
func reachesBackEdge(l *Loop, blk *Block, xi, i int, g gvinst.Reg) bool {
	writesWhole := func(b *Block, fromXi, fromI int) bool {
		for k := fromXi; k < len(b.Insns); k++ {
			code := b.Insns[k].Code
			start := 0
			if k == fromXi {
				start = fromI
			}
			for p := start; p < len(code); p++ {
				if in := &code[p]; in.Op == gvinst.OpPut && in.Dst == g && in.Type.Size() == 8 {
					return true
				}
			}
		}
		return false
	}
	if writesWhole(blk, xi, i+1) {
		return false
	}
	seen := map[*Block]bool{}
	work := []*Block{blk}
	for len(work) > 0 {
		b := work[len(work)-1]
		work = work[:len(work)-1]
		for _, s := range b.Succs {
			if !l.Contains(s) {
				continue
			}
			if s == l.Header {
				return true
			}
			if seen[s] {
				continue
			}
			seen[s] = true
			if !writesWhole(s, 0, 0) {
				work = append(work, s)
			}
		}
	}
	return false
}

// dataSlot is loadsData for slot bit b, the bits in busy being under
// test already.
func dataSlot(l *Loop, b int, busy map[int]bool) bool {
	if busy[b] {
		return false
	}
	busy[b] = true
	for _, blk := range l.Blocks {
		for xi, x := range blk.Insns {
			for i := range x.Code {
				in := &x.Code[i]
				if in.Op == gvinst.OpPut && slotBit(in.Dst) == b {
					if dataFrom(l, blk, xi, i, in.Src[0], map[int]bool{}, busy) {
						return true
					}
				}
			}
		}
	}
	return false
}

// lastPutBefore finds the last PUT to guest slot g in block blk before
// index j of instruction xi's code: the instruction's index and the PUT's.
// It reports false when the block does not write g before that point (or
// writes it other than by a PUT of the whole slot).
func lastPutBefore(blk *Block, xi, j int, g gvinst.Reg) (int, int, bool) {
	for k := xi; k >= 0; k-- {
		code := blk.Insns[k].Code
		end := len(code)
		if k == xi {
			end = j
		}
		for p := end - 1; p >= 0; p-- {
			in := &code[p]
			if in.Op == gvinst.OpPut && in.Dst == g {
				return k, p, true
			}
			flagsOnly := in.Op == gvinst.OpFlags || in.Op == gvinst.OpSetFlags
			if in.Op == gvinst.OpPut && in.Dst < g && g < in.Dst+gvinst.Reg(in.Type.Slots()) || in.Op.Info().Effects&gvinst.EffStateWrite != 0 && !flagsOnly {
				return 0, 0, false // part of a wider PUT, or a write of state not by PUT
			}
		}
	}
	return 0, 0, false
}

// dataFrom reports whether virtual register r, read at index i of
// instruction xi of block blk, depends on a load whose address loop l
// moves, or on a guest slot that holds such data (loadsData). A slot
// written earlier in the same block holds what that write put there (gcc
// reuses rax as a temporary: the header's rax computed from spilled
// invariants is not the data the loop's tails load into it); only a slot
// the block reads before writing it stands for every value the loop puts
// there.
func dataFrom(l *Loop, blk *Block, xi, i int, r gvinst.Reg, seen, busy map[int]bool) bool {
	x := blk.Insns[xi]
	if r < gvinst.NumGuestSlots {
		return false
	}
	for j := i - 1; j >= 0; j-- {
		in := &x.Code[j]
		if !hasDst(in) || in.Dst != r {
			continue
		}
		if seen[j] {
			return false
		}
		seen[j] = true
		if in.Op == gvinst.OpGet {
			b := slotBit(in.Src[0])
			if b < 0 || b >= 32 {
				return false
			}
			if k, p, ok := lastPutBefore(blk, xi, j, in.Src[0]); ok {
				return dataFrom(l, blk, k, p, blk.Insns[k].Code[p].Src[0], map[int]bool{}, busy)
			}
			return dataSlot(l, b, busy)
		}
		if in.Op == gvinst.OpLd {
			switch a := addrOf(x, j); {
			case a.kind == opdConst:
				return false
			case a.kind == opdSlot:
				b := slotBit(a.slot)
				return b < 0 || b >= 16 || writes(l, b)
			}
			return true
		}
		for _, s := range in.SrcRegs() {
			if dataFrom(l, blk, xi, j, s, seen, busy) {
				return true
			}
		}
		return false
	}
	return false
}

// copyRestored reports whether general register b, though written in
// loop l, holds its header value again at every back edge because the
// loop only ever moves it away, to other general registers or to stack
// slots, and back (gcc -O3 frees rdx for gemm's vectorised inner loops
// with mov r12, rdx before them and mov rdx, r12 after; heat3d's r13 goes
// to two stack slots). A forward must-analysis over the loop's blocks
// tracks where b's header value is: a whole 64-bit copy (a 32-bit one
// where the caller says b's value fits in 32 bits, fits32) of a place
// that holds it passes it on; any other write of a register, or store
// sharing a byte with a slot, ends it there. Slots are addressed from rsp
// or rbp, which the loop must not write.
func copyRestored(l *Loop, b int, fits32 bool) bool {
	if b >= 16 {
		return false
	}
	type slotKey struct {
		base gvinst.Reg
		disp int64
		size int
	}
	type where struct {
		regs  uint16
		slots map[slotKey]bool
	}
	frame := map[gvinst.Reg]bool{}
	for _, r := range []gvinst.Reg{gvinst.S4, gvinst.S5} {
		frame[r] = !writes(l, slotBit(r))
	}
	wholeSize := func(n int) bool { return n == 8 || n == 4 && fits32 }
	step := func(x *Insn, in where) where {
		_, def := useDef(x)
		out := where{regs: in.regs &^ uint16(def&allGPR), slots: map[slotKey]bool{}}
		for k := range in.slots {
			out.slots[k] = true
		}
		// reads reports whether register r, read by GET at index j of
		// x, holds b's header value: it did before x, and x does not
		// write it before j.
		reads := func(j int, r gvinst.Reg) bool {
			if r >= gvinst.X0 || in.regs&(1<<r) == 0 {
				return false
			}
			for k := 0; k < j; k++ {
				if e := &x.Code[k]; e.Op == gvinst.OpPut && e.Dst == r {
					return false
				}
			}
			return true
		}
		for i := range x.Code {
			c := &x.Code[i]
			switch {
			case c.Op == gvinst.OpSt:
				a := addrOf(x, i)
				if a.kind != opdSlot || !frame[a.slot] {
					continue
				}
				n := c.Type.Size()
				for k := range out.slots {
					if k.base == a.slot && k.disp < a.disp+int64(n) && a.disp < k.disp+int64(k.size) {
						delete(out.slots, k)
					}
				}
				if v, j := valueOf(x, i, c.Src[1]); v != nil && v.Op == gvinst.OpGet && wholeSize(n) && reads(j, v.Src[0]) {
					out.slots[slotKey{a.slot, a.disp, n}] = true
				}
			case c.Op == gvinst.OpPut && c.Dst < gvinst.X0 && c.Type.Size() == 8:
				v, j := valueOf(x, i, c.Src[0])
				switch {
				case v == nil:
				case v.Op == gvinst.OpGet && v.Type.Size() == 8 && reads(j, v.Src[0]):
					out.regs |= 1 << c.Dst
				case v.Op == gvinst.OpLd && wholeSize(v.Type.Size()):
					if a := addrOf(x, j); a.kind == opdSlot && in.slots[slotKey{a.slot, a.disp, v.Type.Size()}] {
						out.regs |= 1 << c.Dst
					}
				}
			}
		}
		return out
	}
	equal := func(a, b where) bool {
		if a.regs != b.regs || len(a.slots) != len(b.slots) {
			return false
		}
		for k := range a.slots {
			if !b.slots[k] {
				return false
			}
		}
		return true
	}
	meet := func(a, b where) where {
		out := where{regs: a.regs & b.regs, slots: map[slotKey]bool{}}
		for k := range a.slots {
			if b.slots[k] {
				out.slots[k] = true
			}
		}
		return out
	}
	// Every place holds it until a path shows otherwise.
	top := where{regs: 1<<16 - 1}
	in := map[*Block]where{}
	out := func(blk *Block) where {
		st := in[blk]
		for _, x := range blk.Insns {
			st = step(x, st)
		}
		return st
	}
	done := map[*Block]bool{}
	for changed := true; changed; {
		changed = false
		for _, blk := range l.Blocks {
			var st where
			if blk == l.Header {
				st = where{regs: 1 << b, slots: map[slotKey]bool{}}
			} else {
				first := true
				for _, p := range blk.Preds {
					if !l.Contains(p) || !done[p] && p != l.Header {
						continue
					}
					if first {
						st, first = out(p), false
					} else {
						st = meet(st, out(p))
					}
				}
				if first {
					st = top
				}
			}
			if !done[blk] || !equal(st, in[blk]) {
				in[blk], done[blk], changed = st, true, true
			}
		}
	}
	for _, lt := range l.Latches {
		if out(lt).regs&(1<<b) == 0 {
			return false
		}
	}
	return true
}

// valueOf finds the instruction of x before index i that defines virtual
// register r, through MOVs and integer width changes that keep its low
// bytes (a 32-bit move), and its index; nil where r is a guest slot or
// has no definition in x.
func valueOf(x *Insn, i int, r gvinst.Reg) (*gvinst.Inst, int) {
	for j := i - 1; j >= 0; j-- {
		d := &x.Code[j]
		if !hasDst(d) || d.Dst != r {
			continue
		}
		if d.Op == gvinst.OpMov || d.Op == gvinst.OpCvt && d.Type.IsInt() && d.SrcType.IsInt() && d.SrcType.Size() <= d.Type.Size() && !d.SrcType.IsSigned() {
			r = d.Src[0]
			continue
		}
		return d, j
	}
	return nil, -1
}
