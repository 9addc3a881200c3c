package profile

import (
	"fmt"
	"slices"

	"github.com/gxbit/gxbit/gvinst"
	"sort"
	"strings"
)

// Loop is a natural loop: a header and the blocks that reach a back edge
// to it without passing it. Loops with the same header are merged.
type Loop struct {
	Func    *Func
	Header  *Block
	Blocks  []*Block // in address order, the header included
	Latches []*Block // sources of back edges
	// Cold are the blocks of the natural loop that end in a call only
	// an error path takes (Block.Cold): they are not in Blocks, and the
	// edges into them are not exits. See isColdCall.
	Cold []*Block
	// Exits are the edges that leave the loop: From inside, To outside.
	Exits    []Edge
	Parent   *Loop
	Children []*Loop // in address order
	Depth    int     // 1 for a root of the forest
	body     map[*Block]bool
}

// Edge is a control flow edge.
type Edge struct{ From, To *Block }

// Contains reports whether b is in the loop.
func (l *Loop) Contains(b *Block) bool { return l.body[b] }

// Levels returns the loop's nest shape below it: the loop, then its only
// child, and so on, as long as each level has exactly one child. A nest
// with siblings at some level is cut there (the returned levels are a
// perfect-or-imperfect chain).
func (l *Loop) Levels() []*Loop {
	out := []*Loop{l}
	for x := l; len(x.Children) == 1; x = x.Children[0] {
		out = append(out, x.Children[0])
	}
	return out
}

// findLoops finds the natural loops of f and builds the nest forest.
func (f *Func) findLoops() {
	byHeader := map[*Block]*Loop{}
	var headers []*Block
	for _, b := range f.rpo {
		for _, s := range b.Succs {
			if !Dominates(s, b) {
				continue
			}
			l := byHeader[s]
			if l == nil {
				l = &Loop{Func: f, Header: s, body: map[*Block]bool{s: true}}
				byHeader[s] = l
				headers = append(headers, s)
			}
			l.Latches = append(l.Latches, b)
			// Blocks reaching b without passing the header.
			work := []*Block{b}
			for len(work) > 0 {
				x := work[len(work)-1]
				work = work[:len(work)-1]
				if l.body[x] {
					continue
				}
				l.body[x] = true
				for _, p := range x.Preds {
					if p.RPO >= 0 {
						work = append(work, p)
					}
				}
			}
		}
	}
	sort.Slice(headers, func(i, j int) bool { return headers[i].Addr < headers[j].Addr })
	var loops []*Loop
	for _, h := range headers {
		l := byHeader[h]
		cold := l.coldRegion()
		for b := range l.body {
			if cold[b] {
				delete(l.body, b)
				l.Cold = append(l.Cold, b)
				continue
			}
			l.Blocks = append(l.Blocks, b)
		}
		sort.Slice(l.Cold, func(i, j int) bool { return l.Cold[i].Addr < l.Cold[j].Addr })
		sort.Slice(l.Blocks, func(i, j int) bool { return l.Blocks[i].Addr < l.Blocks[j].Addr })
		sort.Slice(l.Latches, func(i, j int) bool { return l.Latches[i].Addr < l.Latches[j].Addr })
		for _, b := range l.Blocks {
			for _, s := range b.Succs {
				if !l.body[s] && !slices.Contains(l.Cold, s) {
					l.Exits = append(l.Exits, Edge{b, s})
				}
			}
		}
		loops = append(loops, l)
	}
	// Parent: the smallest other loop containing the header.
	for _, l := range loops {
		for _, m := range loops {
			if m == l || !m.body[l.Header] || len(m.body) < len(l.body) {
				continue
			}
			if len(m.body) == len(l.body) && m.Header.Addr > l.Header.Addr {
				continue
			}
			if l.Parent == nil || len(m.body) < len(l.Parent.body) {
				l.Parent = m
			}
		}
	}
	hasChild := map[*Loop]bool{}
	for _, l := range loops {
		hasChild[l.Parent] = true
	}
	kept := loops[:0]
	for _, l := range loops {
		if l.Parent == nil || hasChild[l] || !l.unswitchedGuard() {
			kept = append(kept, l)
		}
	}
	loops = kept
	for _, l := range loops {
		if l.Parent != nil {
			l.Parent.Children = append(l.Parent.Children, l)
		} else {
			f.Nests = append(f.Nests, l)
		}
	}
	var order func(l *Loop, d int)
	order = func(l *Loop, d int) {
		l.Depth = d
		f.Loops = append(f.Loops, l)
		for _, c := range l.Children {
			order(c, d+1)
		}
	}
	for _, l := range f.Nests {
		order(l, 1)
	}
}

// unswitchedGuard reports whether l is the empty twin of an unswitched
// inner loop, which findLoops leaves out of the forest: its blocks are then
// straight-line code of its parent. gcc -O2 versions a loop on a test of
// values the loop does not change (gemm's k loop on nj > 0): the header
// tests it and either enters the real loop, outside l, or runs l, which
// only advances registers the real loop would have advanced. l qualifies
// when
//
//   - the header's exit test reads only slots that no block of l writes,
//     so it goes the same way on every visit: l leaves from the header on
//     entry or never;
//   - no block of l reads or writes memory, calls, or ends otherwise than
//     by a jump, a conditional branch or falling through;
//   - every slot l writes is tracked and recomputed in each iteration of the
//     parent (not in the parent's carriedIn): whatever l does, and however
//     often its back edge runs, no later iteration of the parent sees it.
//
// The parent's analyses then never depend on l's trip count, and a kernel
// that takes l's back edge runs l exactly as the CPU does (ptxgen branches
// to any block of the level that is not its header).
func (l *Loop) unswitchedGuard() bool {
	var written slots
	for _, b := range l.Blocks {
		switch b.Last().Term {
		case TermFall, TermJump, TermBranch:
		default:
			return false
		}
		for _, x := range b.Insns {
			for i := range x.Code {
				in := &x.Code[i]
				switch in.Op {
				case gvinst.OpLd, gvinst.OpSt, gvinst.OpChkAlign, gvinst.OpProbe:
					return false
				}
				if in.Op == gvinst.OpPut || hasDst(in) && in.Dst < gvinst.NumGuestSlots {
					if slotBit(in.Dst) < 0 {
						return false
					}
				}
			}
			_, d := useDef(x)
			written |= d
		}
	}
	var headerUse, headerDef slots
	for _, x := range l.Header.Insns {
		u, d := useDef(x)
		headerUse |= u &^ headerDef
		headerDef |= d
	}
	if h := l.Header.Last(); h.Term != TermBranch || headerUse&written != 0 {
		return false
	}
	return written&l.Parent.carriedIn() == 0
}

// FormatLoops prints the functions' loop-nest forests, one loop a line,
// indented by depth, for golden tests and people:
//
//	main 0x401136
//	  loop 0x401150 blocks=3 latches=0x40116a exits=0x401170
//	    loop 0x401158 …
func FormatLoops(p *Program, only func(*Func) bool) string {
	var sb strings.Builder
	for _, f := range p.Funcs {
		if only != nil && !only(f) {
			continue
		}
		fmt.Fprintf(&sb, "%s %#x blocks=%d", f.Name, f.Entry, len(f.Blocks))
		if f.Indirect {
			sb.WriteString(" indirect")
		}
		sb.WriteString("\n")
		var pr func(l *Loop)
		pr = func(l *Loop) {
			sb.WriteString(strings.Repeat("  ", l.Depth))
			fmt.Fprintf(&sb, "loop %#x blocks=%d latches=", l.Header.Addr, len(l.Blocks))
			for i, b := range l.Latches {
				if i > 0 {
					sb.WriteString(",")
				}
				fmt.Fprintf(&sb, "%#x", b.Last().Addr)
			}
			sb.WriteString(" exits=")
			for i, e := range l.Exits {
				if i > 0 {
					sb.WriteString(",")
				}
				fmt.Fprintf(&sb, "%#x->%#x", e.From.Last().Addr, e.To.Addr)
			}
			if r := l.staticReject(); r != "" {
				sb.WriteString(" [" + r + "]")
			}
			sb.WriteString("\n")
			for _, c := range l.Children {
				pr(c)
			}
		}
		for _, l := range f.Nests {
			pr(l)
		}
	}
	return sb.String()
}

// staticReject says why the nest rooted at l is no candidate, or "".
func (l *Loop) staticReject() string {
	for _, b := range l.Blocks {
		last := b.Last()
		switch last.Term {
		case TermCall:
			name := fmt.Sprintf("%#x", last.Targets[0])
			if f := l.Func; f != nil && last.Targets[0] == f.Entry {
				name = f.Name
			}
			return fmt.Sprintf("calls %s at %#x", name, last.Addr)
		case TermCallR:
			return fmt.Sprintf("indirect call at %#x", last.Addr)
		case TermJumpR:
			return fmt.Sprintf("indirect jump at %#x", last.Addr)
		case TermRet:
			return fmt.Sprintf("returns from inside the loop at %#x", last.Addr)
		case TermSyscall:
			return fmt.Sprintf("system call at %#x", last.Addr)
		case TermTrap:
			return fmt.Sprintf("trap at %#x", last.Addr)
		}
	}
	if r := l.x87Reject(); r != "" {
		return r
	}
	return l.shapeReject()
}

// x87Reject rejects loops that use the x87 register stack: values carried
// in it are outside the slots the analyses track.
func (l *Loop) x87Reject() string {
	for _, b := range l.Blocks {
		for _, x := range b.Insns {
			for i := range x.Code {
				in := &x.Code[i]
				uses := in.Op == gvinst.OpFPush || in.Op == gvinst.OpFPop || in.Op == gvinst.OpFGetST || in.Op == gvinst.OpFPutST
				for _, r := range in.SrcRegs() {
					if r >= gvinst.FPCW && r < gvinst.NumGuestSlots {
						uses = true
					}
				}
				if (in.Op == gvinst.OpGet) && in.Src[0] >= gvinst.FPCW && in.Src[0] < gvinst.NumGuestSlots ||
					(in.Op == gvinst.OpPut) && in.Dst >= gvinst.FPCW && in.Dst < gvinst.NumGuestSlots {
					uses = true
				}
				if uses {
					return fmt.Sprintf("x87 code at %#x: values in the x87 register stack are not analysed", x.Addr)
				}
			}
		}
	}
	return ""
}

// maxColdRegion bounds the blocks of one error path a loop leaves out.
const maxColdRegion = 6

// coldRegion returns the blocks of l's natural loop that only an error
// path runs: for each block ending in a cold call (Block.Cold), the
// blocks dominated by the first block of its path, found by walking up
// from the call's block through its dominators while each is reached
// only by a conditional branch of the loop (gcc's sqrt: ja to a block
// that tests the argument again, spills, calls and jumps back). The
// region stays within maxColdRegion blocks, does not hold the header,
// and leaves only into the loop, so that cutting it loses no exit.
func (l *Loop) coldRegion() map[*Block]bool {
	cold := map[*Block]bool{}
	for c := range l.body {
		if !c.Cold || c == l.Header {
			continue
		}
		region := func(s *Block) map[*Block]bool {
			r := map[*Block]bool{}
			for b := range l.body {
				if Dominates(s, b) {
					r[b] = true
				}
			}
			return r
		}
		var best map[*Block]bool
		for s := c; s != nil && s != l.Header && l.body[s]; s = s.Idom {
			if len(s.Preds) != 1 || s.Preds[0].Last().Term != TermBranch || !l.body[s.Preds[0]] {
				break
			}
			r := region(s)
			if len(r) > maxColdRegion || r[l.Header] {
				break
			}
			ok := true
			for b := range r {
				for _, x := range b.Succs {
					ok = ok && (r[x] || l.body[x])
				}
				for _, lt := range l.Latches {
					ok = ok && b != lt
				}
			}
			if !ok {
				break
			}
			best = r
		}
		for b := range best {
			cold[b] = true
		}
	}
	return cold
}

// isColdCall reports whether a call to the function named name is one
// that only an error path takes, so that a loop may leave the block
// making it out of its body (Loop.Cold): gcc computes sqrt inline
// (sqrtsd) and calls the library's sqrt (under any of the names glibc
// gives it) only for a negative argument,
// where it must set errno. A kernel never runs such a block: a thread
// that reaches it ends with an error and the instance runs on the CPU,
// which makes the call. Phase 1 does not see the callee's accesses
// (errno) for the same reason: they happen only in instances that run
// on the CPU.
func isColdCall(name string) bool {
	switch name {
	case "sqrt", "__sqrt", "sqrtf64", "sqrtf32x", "f32xsqrtf64", "__ieee754_sqrt", "__sqrt_finite", // glibc's names of one function
		"sqrtf", "__sqrtf", "sqrtf32", "__ieee754_sqrtf", "__sqrtf_finite":
		return true
	}
	return false
}

// latchExitTwins reports whether l leaves from several latches that run
// copies of one exit test: gcc keeps a test of a value the loop does not
// change inside the loop (kmeans's k > 0 around its inner loop) and ends
// each side with its own copy of the loop's compare and branch. It holds
// when every block l leaves from is a latch and every latch leaves (each
// iteration runs exactly one copy), each ends with the same x86 compare
// and conditional branch (the same text: the same operands, condition and
// back edge), and every exit reaches one block, directly or through a
// block that only jumps there. The trip count is then that of one exit
// test, as for a loop with one latch; the profile's trip counts and the
// runtime's observed compares check it as for any loop.
func (l *Loop) latchExitTwins() bool {
	if len(l.Latches) < 2 || len(l.Exits) != len(l.Latches) {
		return false
	}
	latch := map[*Block]bool{}
	for _, b := range l.Latches {
		latch[b] = true
	}
	var target *Block
	var cmp *Insn
	var cond gvinst.Cond
	for i, e := range l.Exits {
		if !latch[e.From] || e.From.Last().Term != TermBranch {
			return false
		}
		to := e.To
		if len(to.Insns) == 1 && to.Insns[0].Term == TermJump && len(to.Succs) == 1 {
			to = to.Succs[0]
		}
		c := e.From.flagsInsn()
		if c == nil {
			return false
		}
		ec, ok := exitCond(e.From.Last(), l)
		if !ok {
			return false
		}
		if i == 0 {
			target, cmp, cond = to, c, ec
			continue
		}
		if to != target || !sameCode(c, cmp) || ec != cond {
			return false
		}
	}
	return true
}

// exitCond returns the x86 condition under which the conditional branch
// br leaves loop l: its own when it jumps out, the opposite when it
// falls out (x86 conditions come in pairs that differ in the low bit).
func exitCond(br *Insn, l *Loop) (gvinst.Cond, bool) {
	if len(br.Code) != 2 || br.Code[0].Op != gvinst.OpGetCC || br.Code[1].Op != gvinst.OpBranch || br.Code[1].Src[0] != br.Code[0].Dst {
		return 0, false
	}
	c := gvinst.Cond(br.Code[0].Mod)
	if taken := l.Func.ByAddr[br.Targets[0]]; taken != nil && l.Contains(taken) {
		c ^= 1
	}
	return c, true
}

// sameCode reports whether x and y lift to the same GVInst but for the
// x86 addresses they came from and where each goes on to when it falls
// through: the same operation on the same guest state.
func sameCode(x, y *Insn) bool {
	if len(x.Code) != len(y.Code) || x.Term != y.Term {
		return false
	}
	for i := range x.Code {
		a, b := x.Code[i], y.Code[i]
		a.X86, b.X86 = 0, 0
		if a.Op == gvinst.OpBranch || a.Op == gvinst.OpJmp && a.Target[0] == x.Next && b.Target[0] == y.Next {
			a.Target[1], b.Target[1] = 0, 0 // a branch's fall-through
			if a.Op == gvinst.OpJmp {
				a.Target[0], b.Target[0] = 0, 0 // on to the next instruction
			}
		}
		if a != b {
			return false
		}
	}
	return true
}

// flagsInsn is the last instruction of b before its branch that writes
// the x86 flags (the compare the branch tests), or nil when there is none.
func (b *Block) flagsInsn() *Insn {
	for k := len(b.Insns) - 2; k >= 0; k-- {
		for _, in := range b.Insns[k].Code {
			if in.Op == gvinst.OpFlags || in.Op == gvinst.OpSetFlags {
				return b.Insns[k]
			}
		}
	}
	return nil
}

// shapeReject checks that each loop of the nest leaves only from one block,
// its header or its latch (a counted loop tested at the top or the
// bottom), and that an inner loop leaves only into its parent.
func (l *Loop) shapeReject() string {
	var check func(x *Loop) string
	check = func(x *Loop) string {
		var from *Block
		twins := x.latchExitTwins()
		for _, e := range x.Exits {
			if from != nil && e.From != from && !twins {
				return fmt.Sprintf("loop %#x leaves from two places (%#x and %#x): early exit, trip count unknown on entry", x.Header.Addr, from.Last().Addr, e.From.Last().Addr)
			}
			if from == nil || !twins {
				from = e.From
			}
			if x.Parent != nil && !x.Parent.Contains(e.To) && x != l {
				return fmt.Sprintf("loop %#x leaves its parent loop directly at %#x", x.Header.Addr, e.From.Last().Addr)
			}
		}
		if from == nil {
			return fmt.Sprintf("loop %#x never exits", x.Header.Addr)
		}
		// The exit test must run in every iteration: its block dominates
		// every latch (or, twins, each latch runs its own copy).
		for _, lt := range x.Latches {
			if !twins && !Dominates(from, lt) {
				return fmt.Sprintf("loop %#x leaves from %#x, which some iterations skip: early exit", x.Header.Addr, from.Last().Addr)
			}
		}
		if from.Last().Term != TermBranch {
			return fmt.Sprintf("loop %#x leaves at %#x without a conditional branch", x.Header.Addr, from.Last().Addr)
		}
		for _, c := range x.Children {
			if r := check(c); r != "" {
				return r
			}
		}
		return ""
	}
	return check(l)
}
