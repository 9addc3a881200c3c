package ptxgen

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptx"
)

// emitter writes the PTX of one kernel.
type emitter struct {
	a    *analysis
	k    *Kernel
	body []*pline // the kernel body being built
	maxR int      // highest frame slot used, plus one
	// temporaries, reset per instruction; max* is the most any used.
	nt, nw, nh, nf, nd, np             int
	maxT, maxW, maxH, maxF, maxD, maxP int
	cur                                uint64                    // x86 address of the instruction being lowered
	fuse, fused                        bool                      // this CMP feeds the next BRANCH; this BRANCH reads fusePred
	fusePred                           string                    // the predicate a fused CMP sets: %pbr, or %ptrip (see inst)
	stubs                              map[string][2]uint64      // error stub label: error code, x86 address
	alias                              map[gvinst.Reg]gvinst.Reg // copies in the block being lowered
	block                              uint64                    // the block being lowered
	checks                             []check                   // the error stubs of the combined footprint and alignment checks
	// unchecked emits Kernel.Unchecked: accesses go to their site's
	// device buffer without the footprint and alignment checks.
	unchecked bool
	// dry emits Kernel.Dry: no store to guest memory (errorExit marks
	// the error record's stores, which stay).
	dry, errorExit bool
	// plain are the merges that may be moves (analysis.merges).
	plain     map[[2]int64]bool
	tripExits []tripExit // the edges leaving the counted loop (Nest.TripCheck)
	divs      int        // wide divisions lowered so far (their labels' numbers)
	// exitsTaken are the exit targets whose state stub a branch goes to
	// (exitstate.go).
	exitsTaken map[uint64]bool
	// steps are the values a thread's iteration must leave advanced by
	// exactly one step (see checkSteps); innerSteps those of the inner
	// level's one iteration in a 2D or interchanged kernel, inner2Steps
	// the innermost level's in a 3D one.
	steps, innerSteps, inner2Steps []stepCheck
	err                            error
}

// stepCheck is a stepped live value: the register holding it and the one
// holding the value it must have when the iteration ends.
type stepCheck struct{ reg, next string }

// dropErrorBranches takes the branches to the error exits out of an
// unchecked kernel: launched only with an input a checked launch ran
// without error (see unchecked.go), none of its threads takes one. A
// conditional one goes; an unconditional one ends a path no thread
// takes, and goes to $Ldone instead.
func (e *emitter) dropErrorBranches() {
	errs := map[string]bool{}
	for _, code := range []int{ErrCodeFootprint, ErrCodeExit, ErrCodeDivide, ErrCodeAlign, ErrCodeStep, ErrCodeCold, ErrCodeOverlap, ErrCodeRowStore} {
		errs[fmt.Sprintf("$Lerr%d", code)] = true
	}
	for l := range e.stubs {
		errs[l] = true
	}
	for _, c := range e.checks {
		errs[c.label] = true
	}
	for _, l := range e.body {
		if l.in == nil || l.op != "bra" || l.nargs() != 1 || !errs[l.arg(0)] {
			continue
		}
		if l.in.Guard != "" {
			l.dead = true
			continue
		}
		l.in.Args[0] = ptx.Sym("$Ldone")
		l.touch()
	}
}

// keptBy reports whether virtual register r of the block being lowered
// was last set, before instruction idx, by an AND with hiHalf.
func (e *emitter) keptBy(r gvinst.Reg, idx int) bool {
	b := e.a.n.Blocks[e.block]
	for i := idx - 1; i >= 0; i-- {
		if in := &b.Insts[i]; in.Dst == r && hasDst(in) {
			return in.Op == gvinst.OpAnd && in.HasImm && uint64(in.Imm) == hiHalf
		}
	}
	return false
}

// tripExit is an edge leaving the loop a 1D kernel counts: the branch at
// x86 goes through label, which checks the entry's count, to target.
type tripExit struct {
	label, target string
	x86           uint64
}

// check is the error stub of one access's combined check: the access at
// x86 failed its footprint test when off (a register still holding its
// offset in the site) exceeds the site's span, else its alignment test.
type check struct {
	label string
	x86   uint64
	off   string
	site  int
}

// i appends instruction op (opcode and modifiers) to the body. Each
// operand is a ptx.Operand, a register name ("%r1"), a label ("$Ldone")
// or an integer.
func (e *emitter) i(op string, args ...any) *pline {
	ops := make([]ptx.Operand, len(args))
	for k, a := range args {
		ops[k] = operand(a)
	}
	l := inst(op, ops...)
	if e.dry && !e.errorExit && strings.HasPrefix(op, "st.global") {
		return l // a dry kernel stores nothing (left out of the body)
	}
	e.body = append(e.body, l)
	return l
}

// label appends label name to the body.
func (e *emitter) label(name string) { e.body = append(e.body, &pline{label: name}) }

// comment appends a whole-line comment (the text after "//").
func (e *emitter) comment(text string) { e.body = append(e.body, &pline{comment: text}) }

// operand converts an operand of emitter.i.
func operand(a any) ptx.Operand {
	switch v := a.(type) {
	case ptx.Operand:
		return v
	case string:
		switch {
		case strings.HasPrefix(v, "%"):
			return ptx.Reg(v)
		case strings.HasPrefix(v, "$"):
			return ptx.Sym(v)
		}
	case int:
		return ptx.Int(int64(v))
	case int64:
		return ptx.Int(v)
	case uint64:
		return lit(v)
	}
	panic(fmt.Sprintf("ptxgen: %#v is not an operand", a))
}

// vec is the vector operand of registers rs.
func vec(rs ...any) ptx.Operand {
	ops := make([]ptx.Operand, len(rs))
	for k, r := range rs {
		ops[k] = operand(r)
	}
	return ptx.Vec(ops...)
}

func (e *emitter) reset() {
	e.nt, e.nw, e.nh, e.nf, e.nd, e.np = 0, 0, 0, 0, 0, 0
}

func bump(n *int, m *int, prefix string) string {
	s := fmt.Sprintf("%%%s%d", prefix, *n)
	*n++
	if *n > *m {
		*m = *n
	}
	return s
}

func (e *emitter) t() string    { return bump(&e.nt, &e.maxT, "t") }
func (e *emitter) w() string    { return bump(&e.nw, &e.maxW, "w") }
func (e *emitter) h() string    { return bump(&e.nh, &e.maxH, "h") }
func (e *emitter) fs() string   { return bump(&e.nf, &e.maxF, "f") }
func (e *emitter) fd() string   { return bump(&e.nd, &e.maxD, "d") }
func (e *emitter) pred() string { return bump(&e.np, &e.maxP, "p") }

// reg names frame slot r (guest or virtual) as a .b64 register; a
// virtual register that is a copy of another register is that register.
func (e *emitter) reg(r gvinst.Reg) string {
	if to, ok := e.alias[r]; ok {
		r = to
	}
	if int(r)+2 > e.maxR {
		e.maxR = int(r) + 2
	}
	return fmt.Sprintf("%%r%d", r)
}

// lit is the immediate v: decimal up to 2^63-1, else sixteen hex digits.
func lit(v uint64) ptx.Operand {
	if v <= math.MaxInt64 {
		return ptx.Int(int64(v))
	}
	return ptx.Hex(v, 16)
}

func label(addr uint64) string { return fmt.Sprintf("$Lx%x", addr) }

func (e *emitter) fail(format string, args ...any) {
	if e.err == nil {
		e.err = reject(e.cur, format, args...)
	}
}

// emit produces the module text.
func emit(a *analysis, k *Kernel, unchecked bool) (string, error) {
	return emitWith(&emitter{a: a, k: k, stubs: map[string][2]uint64{}, unchecked: unchecked, plain: a.merges(), exitsTaken: map[uint64]bool{}})
}

// emitDry produces the module text of Kernel.Dry: the checked kernel
// without its stores to guest memory.
func emitDry(a *analysis, k *Kernel) (string, error) {
	return emitWith(&emitter{a: a, k: k, stubs: map[string][2]uint64{}, dry: true, plain: a.merges(), exitsTaken: map[uint64]bool{}})
}

// emitWith produces the module text with emitter e.
func emitWith(e *emitter) (string, error) {
	a, k, unchecked := e.a, e.k, e.unchecked
	// Prologue: the thread's iteration index and its live-in values.
	e.reset()
	// The index in 32 bits (a launch has at most 2^32 threads along each
	// dimension, Launch checks), zero-extended: ptxas then knows its high
	// word is zero, and each live value's step times it is two multiplies
	// instead of three.
	e.threadIndex("%idx", "x")
	if a.inner == nil {
		e.i("ld.param.u64", "%t0", ptx.Addr("count", 0))
		e.i("setp.ge.u64", "%p0", "%idx", "%t0")
		e.i("exit").when("%p0")
		if a.runs1D() {
			e.strideX()
		}
	}
	interchanged := a.n.Interchange
	// threadLoop: the 2D prologue (y the level, x the inner level), the
	// interchanged inner loop (each thread runs its own inner iteration of
	// every row of the thread loop).
	threadLoop := a.n.ThreadLoop != 0
	// even: the interchanged kernel of even rows (Nest.Even). It and the
	// thread loop kernel (fast) enter the inner loop at its header, with
	// each thread's offsets computed once.
	even := interchanged && a.n.Even
	fast := threadLoop || even
	if interchanged {
		// Interchanged: idx above is the inner iteration (x); the thread
		// runs the rows from the first, and idx counts them.
		e.i("mov.b64", "%xi", "%idx")
		e.i("mov.u64", "%idx", 0)
		e.comment(" threads past the widest row retire")
		e.i("ld.param.u64", "%t0", ptx.Addr("itrip0", 0))
		e.i("setp.ge.u64", "%p0", "%xi", "%t0")
		e.i("ld.param.u64", "%t1", ptx.Addr("itripstep", 0))
		e.i("ld.param.u64", "%t0", ptx.Addr("count", 0))
		e.i("sub.u64", "%t0", "%t0", 1)
		e.i("ld.param.u64", "%ib", ptx.Addr("itrip0", 0))
		e.i("mad.lo.u64", "%ib", "%t1", "%t0", "%ib")
		e.i("setp.ge.and.u64", "%p0", "%xi", "%ib", "%p0")
		e.i("exit").when("%p0")
	}
	if a.inner2 != nil {
		// 3D: idx above is along x (the innermost level); the inner
		// iteration is along y, the level's along z.
		e.i("mov.b64", "%xi", "%idx")
		for _, d := range []struct{ dst, dim string }{{"%yi", "y"}, {"%idx", "z"}} {
			e.threadIndex(d.dst, d.dim)
		}
		e.i("ld.param.u64", "%t0", ptx.Addr("count", 0))
		e.i("setp.ge.u64", "%p0", "%idx", "%t0")
		e.i("exit").when("%p0")
		if a.runs3D() {
			e.strideX()
		}
		e.comment(" this plane's inner trip count and the innermost one; threads past them retire")
		e.i("ld.param.u64", "%ib", ptx.Addr("itrip0", 0))
		e.i("ld.param.u64", "%t1", ptx.Addr("itripstep", 0))
		e.i("mad.lo.u64", "%ib", "%t1", "%idx", "%ib")
		e.i("setp.ge.u64", "%p0", "%yi", "%ib")
		e.i("ld.param.u64", "%ib2", ptx.Addr("i2trip", 0))
		e.i("setp.ge.or.u64", "%p0", "%xi", "%ib2", "%p0")
		e.i("exit").when("%p0")
	}
	if a.inner != nil && !interchanged && a.inner2 == nil {
		// 2D: idx above is along x; the outer iteration is along y.
		e.i("mov.b64", "%xi", "%idx")
		if a.runs2D() {
			e.strideX()
		}
		e.threadIndex("%idx", "y")
		e.i("ld.param.u64", "%t0", ptx.Addr("count", 0))
		e.i("setp.ge.u64", "%p0", "%idx", "%t0")
		e.i("exit").when("%p0")
		e.comment(" this row's inner trip count; threads past it retire")
		e.i("ld.param.u64", "%ib", ptx.Addr("itrip0", 0))
		e.i("ld.param.u64", "%t1", ptx.Addr("itripstep", 0))
		e.i("mad.lo.u64", "%ib", "%t1", "%idx", "%ib")
		e.i("setp.ge.u64", "%p0", "%xi", "%ib")
		e.i("exit").when("%p0")
	}
	e.maxW, e.maxT, e.maxP = 3, 2, 1
	reloadedOuter := a.reloadedAt(0)
	for _, l := range a.liveIns {
		nm := paramName(l)
		dst := e.liveReg(l)
		e.comment(fmt.Sprintf(" live-in %s", l))
		e.i("ld.param.u64", dst, ptx.Addr(fmt.Sprintf("in_%s", nm), 0))
		if !l.Written && !a.n.part() || !l.Stack && reloadedOuter[l.Slot] {
			// The level does not change it: step 0. (A part's blocks
			// are not all the level's: another may step it.) Or a
			// reload sets it: the first threads keep the value passed.
			continue
		}
		e.i("ld.param.u64", "%t1", ptx.Addr(fmt.Sprintf("step_%s", nm), 0))
		e.i("mad.lo.u64", dst, "%t1", "%idx", dst)
		if a.inner == nil && !a.n.part() {
			c := stepCheck{reg: dst, next: fmt.Sprintf("%%nx%d", len(e.steps))}
			e.i("add.u64", c.next, dst, "%t1")
			if a.runs1D() {
				e.runMove(len(e.steps))
			}
			e.steps = append(e.steps, c)
		}
	}
	for _, l := range k.ExitInits {
		// Held until a path writes it (exitstate.go).
		e.i("ld.param.u64", e.liveReg(l), ptx.Addr("xinit_"+paramName(l), 0))
	}
	for i := range a.sites {
		e.i("ld.param.u64", fmt.Sprintf("%%sd%d", i), ptx.Addr(fmt.Sprintf("site%d_delta", i), 0))
		if unchecked {
			continue
		}
		// The host passes the span an access of this site may start in
		// (hi-lo-size), so one unsigned compare checks both ends.
		e.i("ld.param.u64", fmt.Sprintf("%%sl%d", i), ptx.Addr(fmt.Sprintf("site%d_lo", i), 0))
		e.i("ld.param.u64", fmt.Sprintf("%%sh%d", i), ptx.Addr(fmt.Sprintf("site%d_span", i), 0))
	}
	for n := range a.rowChecked {
		// No outer store made yet: nothing an inner store can meet.
		e.i("mov.u64", fmt.Sprintf("%%os%d", n), 0)
	}
	if even {
		// Even rows, or the kernel does not apply.
		e.i("ld.param.u64", "%t0", ptx.Addr("itripstep", 0))
		e.i("setp.ne.u64", "%p0", "%t0", 0)
		for _, l := range a.innerLive {
			if l.Written {
				e.i("ld.param.u64", "%t0", ptx.Addr(fmt.Sprintf("istepd_%s", paramName(l)), 0))
				e.i("setp.ne.or.u64", "%p0", "%t0", 0, "%p0")
			}
		}
		e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeExit)).when("%p0")
		e.i("ld.param.u64", "%cnt", ptx.Addr("count", 0))
	}
	if fast {
		// Once per thread: how far its inner iteration lies from the
		// first (for each value the inner loop steps), and whether it is
		// the row's last; every entry of the inner loop then costs one add
		// per stepped value and its leaving one predicate test.
		for i, l := range a.innerLive {
			if !l.Written {
				continue // the inner loop does not change it: step 0
			}
			e.i("ld.param.u64", "%t1", ptx.Addr(fmt.Sprintf("istep_%s", paramName(l)), 0))
			e.i("ld.param.u64", "%t0", ptx.Addr(fmt.Sprintf("istepd_%s", paramName(l)), 0))
			e.i("mad.lo.u64", "%t1", "%t0", "%idx", "%t1")
			e.i("mul.lo.u64", fmt.Sprintf("%%io%d", i), "%t1", "%xi")
		}
		e.i("sub.u64", "%t0", "%ib", 1)
		e.i("setp.eq.u64", "%plast", "%xi", "%t0")
	}
	if a.tripLoop != nil {
		// The counted loop's expected arrivals per entry, this thread's
		// entries and the arrivals of the current one; itrip0 all ones
		// turns the check off.
		e.i("ld.param.u64", "%tcx", ptx.Addr("itrip0", 0))
		e.i("setp.ne.u64", "%ptc", "%tcx", lit(^uint64(0)))
		e.i("ld.param.u64", "%t1", ptx.Addr("itripstep", 0))
		e.i("mad.lo.u64", "%tcx", "%t1", "%idx", "%tcx")
		e.i("mov.u64", "%tc", 0)
		e.i("mov.u64", "%te", 0)
	}
	if a.runs1D() {
		e.label("$Lreload_level")
	}
	e.reloads(0)
	e.i("bra", label(a.n.start()))
	if interchanged && !even {
		// Entering the inner loop: this row's trip count; a thread past
		// it skips the row's inner loop, else moves to its iteration.
		// (With a thread loop, the level's row is the thread's: its trip
		// count, computed in the prologue, holds for every entry.)
		e.label("$Linner_entry")
		{
			e.i("ld.param.u64", "%ib", ptx.Addr("itrip0", 0))
			e.i("ld.param.u64", "%t1", ptx.Addr("itripstep", 0))
			e.i("mad.lo.u64", "%ib", "%t1", "%idx", "%ib")
			e.i("setp.ge.u64", "%p0", "%xi", "%ib")
			e.i("bra", label(a.innerExit)).when("%p0")
		}
		e.toInnerIteration(a)
		// After its one inner iteration the thread leaves the inner loop:
		// by the back edge unless it ran the row's last iteration, by the
		// exit only if it did.
		e.label("$Linner_back")
		e.i("sub.u64", "%t0", "%ib", 1)
		e.i("setp.eq.u64", "%p0", "%xi", "%t0")
		e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeExit)).when("%p0")
		e.checkSteps(e.innerSteps)
		e.i("bra", label(a.innerExit))
		e.label("$Linner_exit")
		e.i("sub.u64", "%t0", "%ib", 1)
		e.i("setp.ne.u64", "%p0", "%xi", "%t0")
		e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeExit)).when("%p0")
		e.i("bra", label(a.innerExit))
		// The level's back edge: the next row, until count rows ran.
		e.label("$Linner_row")
		e.i("add.u64", "%idx", "%idx", 1)
		e.i("ld.param.u64", "%t0", ptx.Addr("count", 0))
		e.i("setp.lt.u64", "%p0", "%idx", "%t0")
		e.i("bra", label(a.n.start())).when("%p0")
		e.i("bra", "$Ldone")
	}

	if a.inner != nil && !interchanged && !threadLoop {
		// Entering the inner loop from the outer body: move this thread to
		// its inner iteration.
		e.label("$Linner_entry")
		e.toInnerIteration(a)
		// The inner loop's back edge: only the row's last iteration may
		// not take it; its exit: only the last one takes it.
		e.label("$Linner_back")
		e.i("sub.u64", "%t0", "%ib", 1)
		e.i("setp.eq.u64", "%p0", e.mid(), "%t0")
		e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeExit)).when("%p0")
		e.checkSteps(e.innerSteps)
		if a.runs2D() {
			e.nextOfRun("%xi", "%ib", e.innerSteps, "%mvi", "%sxi", "$Linner_reload")
		}
		e.i("bra", "$Ldone")
		e.label("$Linner_exit")
		e.i("sub.u64", "%t0", "%ib", 1)
		e.i("setp.ne.u64", "%p0", e.mid(), "%t0")
		e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeExit)).when("%p0")
		if to := a.innerLeavesTo(); to != 0 && a.tailStores {
			// Every row goes on in the outer body, to its stores after
			// the inner loop and the level's back edge (the launch's
			// last row to the level's exit, exitstate.go).
			e.i("bra", label(to))
		} else if to != 0 && len(a.exitStates) > 0 {
			// The launch's last row goes on in the outer body to the
			// level's exit (exitstate.go).
			e.i("ld.param.u64", "%t0", ptx.Addr("xlast", 0))
			e.i("setp.eq.u64", "%p0", "%idx", "%t0")
			e.i("bra", label(to)).when("%p0")
		}
		e.i("bra", "$Ldone")
	}
	if a.inner2 != nil {
		// Entering the innermost loop from the inner body: move this
		// thread to its innermost iteration.
		e.label("$Linner2_entry")
		e.toInner2Iteration(a)
		// The innermost loop's back edge: only the last x may not take
		// it; its exit: only the last x takes it, and goes on in the
		// inner body to the inner loop's back edge or exit.
		e.label("$Linner2_back")
		e.i("sub.u64", "%t0", "%ib2", 1)
		e.i("setp.eq.u64", "%p0", "%xi", "%t0")
		e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeExit)).when("%p0")
		e.checkSteps(e.inner2Steps)
		if a.runs3D() {
			e.nextOfRun("%xi", "%ib2", e.inner2Steps, "%mvj", "%sxj", "$Linner2_reload")
		}
		e.i("bra", "$Ldone")
		e.label("$Linner2_exit")
		e.i("sub.u64", "%t0", "%ib2", 1)
		e.i("setp.ne.u64", "%p0", "%xi", "%t0")
		e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeExit)).when("%p0")
		e.i("bra", e.innerTarget(a.inner2Exit))
	}
	entryLoads := e.entryLoads()
	for _, addr := range a.order {
		b := a.n.Blocks[addr]
		e.label(label(addr))
		if a.tripLoop != nil && addr == a.n.TripCheck {
			e.i("add.u64", "%tc", "%tc", 1)
		}
		if fast && addr == a.n.Inner {
			// Only the thread loop enters the inner header (its back
			// edge leaves): move to this thread's inner iteration.
			for i, l := range a.innerLive {
				if l.Written {
					dst := e.liveReg(l)
					e.i("add.u64", dst, dst, fmt.Sprintf("%%io%d", i))
				}
			}
			e.reloads(1)
		}
		var lastX86 uint64 = ^uint64(0)
		e.alias = copies(b)
		for i := range b.Insts {
			in := &b.Insts[i]
			if _, ok := e.alias[in.Dst]; ok && (in.Op == gvinst.OpGet || in.Op == gvinst.OpMov || in.Op == gvinst.OpJoin) {
				continue // a copy: its readers read the source
			}
			if in.X86 != lastX86 {
				lastX86 = in.X86
				e.comment(fmt.Sprintf(" x86 %#x%s", in.X86, guestText(b, in.X86)))
			}
			e.cur, e.block = in.X86, addr
			e.reset()
			// A CMP whose only reader is the BRANCH right after it sets
			// the branch's predicate directly.
			e.fused = e.fuse
			e.fuse = in.Op == gvinst.OpCmp && i == len(b.Insts)-2 && b.Insts[i+1].Op == gvinst.OpBranch &&
				b.Insts[i+1].Src[0] == in.Dst && in.Dst.IsVirtual()
			if e.fuse {
				e.fusePred = "%pbr"
				if fast && e.innerLeaves(b.Insts[i+1].Target) {
					// Its own predicate, set once per inner iteration:
					// where it does not change in the thread loop,
					// hoist.go moves it out.
					e.fusePred = "%ptrip"
				}
			}
			if skip, ok := entryLoads[[2]uint64{addr, uint64(i)}]; ok {
				skip := e.skipEntryLoad(addr, i, skip)
				e.inst(addr, i, in)
				e.label(skip)
				continue
			}
			e.inst(addr, i, in)
		}
	}
	if even && e.branchesTo("$Linner_row") {
		// The level's back edge where a jump takes it.
		e.label("$Linner_row")
		e.i("add.u64", "%idx", "%idx", 1)
		e.i("setp.lt.u64", "%p0", "%idx", "%cnt")
		e.i("bra", label(a.n.start())).when("%p0")
		e.i("bra", "$Ldone")
	}
	if fast {
		// The inner loop's back edge and exit where a jump takes them (a
		// branch between the two tests %plast itself, see inst).
		if e.branchesTo("$Linner_back") {
			e.label("$Linner_back")
			e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeExit)).when("%plast")
			e.i("bra", label(a.innerExit))
		}
		if e.branchesTo("$Linner_exit") {
			e.label("$Linner_exit")
			e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeExit)).when("!%plast")
			e.i("bra", label(a.innerExit))
		}
	}
	// Leaving the counted loop: the entry ran the expected arrivals.
	tripStub := fmt.Sprintf("$Lcktripx%x", a.n.TripCheck)
	for _, x := range e.tripExits {
		e.label(x.label)
		e.i("setp.ne.and.u64", "%p0", "%tc", "%tcx", "%ptc")
		e.i("bra", tripStub).when("%p0")
		e.i("add.u64", "%te", "%te", 1)
		e.i("mov.u64", "%tc", 0)
		if strings.HasPrefix(x.target, "$Lerr") {
			e.i("mov.b64", "%xa", lit(x.x86))
		}
		e.i("bra", x.target)
	}
	if a.tripLoop != nil {
		e.stubs[tripStub] = [2]uint64{ErrCodeExit, a.n.TripCheck}
	}
	// Error exits: per x86 instruction stubs, then one per code.
	stubs := make([]string, 0, len(e.stubs))
	for l := range e.stubs {
		stubs = append(stubs, l)
	}
	sort.Strings(stubs)
	for _, l := range stubs {
		e.label(l)
		e.i("mov.b64", "%xa", lit(e.stubs[l][1]))
		e.i("bra", fmt.Sprintf("$Lerr%d", e.stubs[l][0]))
	}
	for _, c := range e.checks {
		e.label(c.label)
		e.i("mov.b64", "%xa", lit(c.x86))
		e.i("setp.gt.u64", "%p0", c.off, fmt.Sprintf("%%sh%d", c.site))
		e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeFootprint)).when("%p0")
		e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeAlign))
	}
	e.exitStubs()
	codes := []int{ErrCodeFootprint, ErrCodeExit, ErrCodeDivide, ErrCodeAlign}
	if len(e.steps)+len(e.innerSteps)+len(e.inner2Steps) > 0 {
		codes = append(codes, ErrCodeStep)
	}
	if len(a.n.Cold) > 0 {
		codes = append(codes, ErrCodeCold)
	}
	if a.copies {
		codes = append(codes, ErrCodeOverlap)
	}
	if len(a.rowChecked) > 0 {
		codes = append(codes, ErrCodeRowStore)
	}
	e.errorExit = true
	for _, code := range codes {
		e.label(fmt.Sprintf("$Lerr%d", code))
		e.i("ld.param.u64", "%t0", ptx.Addr("errrec", 0))
		e.i("mov.u32", "%w0", code)
		e.i("st.global.u32", ptx.Addr("%t0", 0), "%w0")
		e.i("st.global.u64", ptx.Addr("%t0", 8), "%xa")
		e.i("exit")
	}
	e.errorExit = false
	if e.branchesTo("$Lback") {
		e.label("$Lback")
		e.checkSteps(e.steps)
		if a.runs1D() {
			e.i("ld.param.u64", "%t0", ptx.Addr("count", 0))
			e.nextOfRun("%idx", "%t0", e.steps, "%mv", "%sx", "$Lreload_level")
		}
		e.i("bra", "$Ldone")
	}
	e.label("$Ldone")
	if a.tripLoop != nil {
		// The iteration ends: it entered the counted loop once.
		e.i("setp.ne.and.u64", "%p0", "%te", 1, "%ptc")
		e.i("bra", tripStub).when("%p0")
	}
	e.i("ret")
	if e.err != nil {
		return "", e.err
	}

	f := &ptx.Func{Name: k.Name, Entry: true, Linkage: "visible", Body: &ptx.Block{}}
	for _, p := range k.Params {
		f.Params = append(f.Params, &ptx.Param{Name: p.Name, Space: ptx.SpaceParam, Type: ptx.U64})
	}
	decl := func(t ptx.Type, name string, n int) {
		f.Body.Stmts = append(f.Body.Stmts, &ptx.RegDecl{Name: name, Type: t, Count: n})
	}
	decls := func(t ptx.Type, prefix string, n int) {
		if n > 0 {
			decl(t, prefix, n)
		}
	}
	decls(ptx.Pred, "%p", e.maxP)
	decl(ptx.Pred, "%pbr", 0)
	decls(ptx.B64, "%r", e.maxR)
	decls(ptx.B64, "%t", e.maxT)
	decls(ptx.B32, "%w", e.maxW)
	decls(ptx.B16, "%h", e.maxH)
	decls(ptx.F32, "%f", e.maxF)
	decls(ptx.F64, "%d", e.maxD)
	decls(ptx.B64, "%k", len(a.privIdx))
	decls(ptx.B64, "%nx", len(e.steps))
	if a.runs1D() {
		decl(ptx.B64, "%xs", 0)
		decls(ptx.B64, "%mv", len(e.steps))
		if !unchecked {
			decls(ptx.B64, "%sx", len(e.steps))
		}
	}
	decls(ptx.B64, "%nxi", len(e.innerSteps))
	decls(ptx.B64, "%nxj", len(e.inner2Steps))
	decls(ptx.B64, "%os", len(a.rowChecked))
	decls(ptx.B64, "%sd", len(a.sites))
	decls(ptx.B64, "%sl", len(a.sites))
	decls(ptx.B64, "%sh", len(a.sites))
	decl(ptx.B64, "%idx", 0)
	decl(ptx.B64, "%xa", 0)
	if a.inner != nil {
		decl(ptx.B64, "%xi", 0)
		decl(ptx.B64, "%ib", 0)
		if a.runs2D() {
			decl(ptx.B64, "%xs", 0)
			decls(ptx.B64, "%mvi", len(e.innerSteps))
			if !unchecked {
				decls(ptx.B64, "%sxi", len(e.innerSteps))
			}
		}
	}
	if a.inner2 != nil {
		decl(ptx.B64, "%yi", 0)
		decl(ptx.B64, "%ib2", 0)
		if a.runs3D() {
			decl(ptx.B64, "%xs", 0)
			decls(ptx.B64, "%mvj", len(e.inner2Steps))
			if !unchecked {
				decls(ptx.B64, "%sxj", len(e.inner2Steps))
			}
		}
	}
	if even {
		decl(ptx.B64, "%cnt", 0)
	}
	if a.tripLoop != nil {
		decl(ptx.B64, "%tcx", 0)
		decl(ptx.B64, "%tc", 0)
		decl(ptx.B64, "%te", 0)
		decl(ptx.Pred, "%ptc", 0)
	}
	if fast {
		decls(ptx.B64, "%io", len(a.innerLive))
		decl(ptx.Pred, "%plast", 0)
		decl(ptx.Pred, "%ptrip", 0)
		decl(ptx.Pred, "%ptripx", 0)
	}
	if unchecked {
		e.dropErrorBranches()
	}
	ls := optimize(e.body)
	f.Body.Stmts = append(f.Body.Stmts, hoistDecls(ls)...)
	f.Body.Stmts = append(f.Body.Stmts, stmts(ls)...)
	m := &ptx.Module{Version: "8.0", Target: []string{"sm_90"}, AddressSize: 64, Funcs: []*ptx.Func{f}}
	shape := shapeOf(a.n)
	if unchecked {
		shape += "; without footprint checks, for launches a checked one proved"
	}
	header := fmt.Sprintf("//\n// gxbit kernel %s: the loop at %#x, %s.\n//\n", k.Name, a.n.Header, shape)
	return header + ptx.Print(m), nil
}

func guestText(b *gvinst.VBlock, addr uint64) string {
	for _, g := range b.Guest {
		if g.Addr == addr {
			return ": " + strings.ReplaceAll(g.Text, "\n", " ")
		}
	}
	return ""
}

// src returns a .b64 register holding source operand i of in (an immediate
// is materialised).
func (e *emitter) src(in *gvinst.Inst, i int) string {
	info := in.Op.Info()
	si := 0
	for _, k := range info.Operands {
		switch k {
		case gvinst.OpdSrc, gvinst.OpdMem:
			if si == i {
				return e.reg(in.Src[si])
			}
			si++
		case gvinst.OpdSrcImm:
			if si == i {
				if in.HasImm {
					t := e.t()
					e.i("mov.b64", t, lit(uint64(in.Imm)))
					return t
				}
				return e.reg(in.Src[si])
			}
			si++
		}
	}
	panic(fmt.Sprintf("ptxgen: %s has no source %d", in.Op, i))
}

// ext returns a register holding the low n bits of r, zero- or
// sign-extended to 64 bits.
func (e *emitter) ext(r string, t gvinst.Type, signed bool) string {
	n := t.Bits()
	if n >= 64 {
		return r
	}
	x := e.t()
	if signed {
		e.i("shl.b64", x, r, 64-n)
		e.i("shr.s64", x, x, 64-n)
	} else {
		e.i("and.b64", x, r, lit(t.Mask()))
	}
	return x
}

// mask truncates d to t's width in place.
func (e *emitter) mask(d string, t gvinst.Type) {
	if t.Size() < 8 {
		e.i("and.b64", d, d, lit(t.Mask()))
	}
}

// fin loads a float operand into an .f32/.f64 register.
func (e *emitter) fin(r string, t gvinst.Type) string {
	if t == gvinst.F32 {
		w, f := e.w(), e.fs()
		e.i("cvt.u32.u64", w, r)
		e.i("mov.b32", f, w)
		return f
	}
	d := e.fd()
	e.i("mov.b64", d, r)
	return d
}

// fout stores a float result into frame register d, zero-extended.
func (e *emitter) fout(d, f string, t gvinst.Type) {
	if t == gvinst.F32 {
		w := e.w()
		e.i("mov.b32", w, f)
		e.i("cvt.u64.u32", d, w)
		return
	}
	e.i("mov.b64", d, f)
}

func ftype(t gvinst.Type) string {
	if t == gvinst.F32 {
		return "f32"
	}
	return "f64"
}

func (e *emitter) freg(t gvinst.Type) string {
	if t == gvinst.F32 {
		return e.fs()
	}
	return e.fd()
}

// flit is a float literal of type t with value v.
func flit(t gvinst.Type, v float64) ptx.Operand {
	if t == gvinst.F32 {
		f := float32(v)
		return ptx.Operand{Kind: ptx.OpFloat, Float: float64(f), FloatBits: uint64(math.Float32bits(f)), FloatSize: 4}
	}
	return ptx.Operand{Kind: ptx.OpFloat, Float: v, FloatBits: math.Float64bits(v), FloatSize: 8}
}

// shapeOf says in words how a kernel maps the nest to threads, for the
// kernel's header comment.
func shapeOf(n *Nest) string {
	var s string
	switch {
	case n.Interchange:
		s = fmt.Sprintf("interchanged: x over the inner loop at %#x, each thread running the level's rows in order", n.Inner)
	case n.ThreadLoop != 0:
		s = fmt.Sprintf("2D: y over the level, x over the inner loop at %#x, each thread running the loop at %#x in order (interchanged inward)", n.Inner, n.ThreadLoop)
	case n.Inner2 != 0:
		s = fmt.Sprintf("3D: z over the level, y over the inner loop at %#x, x over the innermost loop at %#x", n.Inner, n.Inner2)
	case n.Inner != 0:
		s = fmt.Sprintf("2D: y over the level, x over the inner loop at %#x", n.Inner)
	default:
		s = "one iteration per thread"
	}
	if n.Start != 0 {
		s += fmt.Sprintf("; a distributed part: each iteration from %#x", n.Start)
	}
	if n.Stop != 0 {
		s += fmt.Sprintf("; a distributed part: each iteration up to %#x", n.Stop)
	}
	return s
}

// branchesTo reports whether a branch of the body so far names label
// name.
func (e *emitter) branchesTo(name string) bool {
	for _, l := range e.body {
		if l.isBranch() && l.arg(0) == name {
			return true
		}
	}
	return false
}

// innerLeaves reports whether a branch of the block being lowered goes
// to the inner loop's back edge one way and leaves it the other.
func (e *emitter) innerLeaves(to [2]uint64) bool {
	t0, t1 := e.target(to[0]), e.target(to[1])
	return t0 == "$Linner_back" && t1 == "$Linner_exit" || t0 == "$Linner_exit" && t1 == "$Linner_back"
}

// target returns the label control goes to for a successor address.
func (e *emitter) target(to uint64) string {
	if tl := e.a.tripLoop; tl != nil && tl[e.block] && !tl[to] {
		// Leaving the counted loop: through a check of the entry's count.
		x := tripExit{label: fmt.Sprintf("$Ltripx%x_%d", to, len(e.tripExits)), target: e.levelTarget(to), x86: e.cur}
		e.tripExits = append(e.tripExits, x)
		return x.label
	}
	return e.levelTarget(to)
}

// levelTarget is target for an edge that does not leave the counted loop.
func (e *emitter) levelTarget(to uint64) string {
	if in2 := e.a.inner2; in2 != nil {
		switch {
		case in2[e.block] && to == e.a.n.Inner2:
			return "$Linner2_back"
		case in2[e.block] && !in2[to]:
			return "$Linner2_exit"
		case !in2[e.block] && to == e.a.n.Inner2:
			return "$Linner2_entry"
		}
	}
	if in := e.a.inner; in != nil {
		_, ok := e.a.n.Blocks[to]
		switch {
		case in[e.block] && to == e.a.n.Inner:
			return "$Linner_back"
		case in[e.block] && !in[to] && ok:
			return "$Linner_exit"
		case !in[e.block] && to == e.a.n.Inner && (e.a.n.ThreadLoop != 0 || e.a.n.Even):
			return label(to) // the header block moves the thread to its iteration
		case !in[e.block] && to == e.a.n.Inner:
			return "$Linner_entry"
		}
	}
	if to == e.a.n.Header || to == e.a.n.Stop && to != 0 {
		if e.a.n.Interchange {
			return "$Linner_row"
		}
		if to == e.a.n.Header && len(e.steps) > 0 {
			return "$Lback"
		}
		return "$Ldone"
	}
	if _, ok := e.a.n.Blocks[to]; ok {
		return label(to)
	}
	if e.a.n.Cold[to] {
		return fmt.Sprintf("$Lerr%d", ErrCodeCold)
	}
	if l, ok := e.exitTarget(to); ok {
		return l
	}
	return fmt.Sprintf("$Lerr%d", ErrCodeExit)
}

// inst lowers one instruction.
func (e *emitter) inst(block uint64, idx int, in *gvinst.Inst) {
	t := in.Type
	switch in.Op {
	case gvinst.OpFlags, gvinst.OpSetFlags:
		// The lazy flags nobody in the loop reads: nothing to compute.
	case gvinst.OpGetFlags:
		// Read only into a SETFLAGS (checkOps): any value will do.
		e.i("mov.u64", e.reg(in.Dst), 0)
	case gvinst.OpGet, gvinst.OpPut, gvinst.OpMov:
		a := e.src(in, 0)
		d := e.reg(in.Dst)
		switch {
		case t.IsWide():
			e.i("mov.b64", d, a)
			e.i("mov.b64", e.reg(in.Dst+1), e.reg(in.Src[0]+1))
		case t.Size() == 8 || in.Op == gvinst.OpMov:
			e.i("mov.b64", d, a)
		default:
			e.i("and.b64", d, a, lit(t.Mask()))
		}
	case gvinst.OpLi:
		d := e.reg(in.Dst)
		if t.IsWide() {
			e.i("mov.b64", d, lit(uint64(in.Imm)))
			e.i("mov.b64", e.reg(in.Dst+1), 0)
		} else {
			e.i("mov.b64", d, lit(uint64(in.Imm)&t.Mask()))
		}
	case gvinst.OpJoin:
		lo, hi := e.reg(in.Src[0]), e.reg(in.Src[1])
		if in.Dst == in.Src[1] {
			x := e.t()
			e.i("mov.b64", x, hi)
			hi = x
		}
		e.i("mov.b64", e.reg(in.Dst), lo)
		e.i("mov.b64", e.reg(in.Dst+1), hi)
	case gvinst.OpLd, gvinst.OpSt:
		e.mem(block, idx, in)
	case gvinst.OpChkAlign:
		e.chkAlign(block, idx, in)
	case gvinst.OpRepStos:
		e.repStos(block, idx, in)
	case gvinst.OpRepMovs:
		e.repMovs(block, idx, in)
	case gvinst.OpAdd, gvinst.OpSub, gvinst.OpMul:
		d := e.reg(in.Dst)
		name := map[gvinst.Op]string{gvinst.OpAdd: "add", gvinst.OpSub: "sub", gvinst.OpMul: "mul"}[in.Op]
		if !t.IsFloat() && in.HasImm {
			// The immediate straight in the instruction; x - c as
			// x + (-c) (the same modulo 2^64), so that a pointer stepping
			// down is an induction variable to hoist.go as well.
			imm := uint64(in.Imm)
			switch in.Op {
			case gvinst.OpMul:
				name = "mul.lo"
			case gvinst.OpSub:
				name, imm = "add", -imm
			}
			e.i(fmt.Sprintf("%s.u64", name), d, e.reg(in.Src[0]), lit(imm))
			e.mask(d, t)
			return
		}
		a, b := e.src(in, 0), e.src(in, 1)
		if t.IsFloat() {
			fa, fb := e.fin(a, t), e.fin(b, t)
			r := e.freg(t)
			e.i(fmt.Sprintf("%s.rn.%s", name, ftype(t)), r, fa, fb)
			e.fout(d, r, t)
			return
		}
		if in.Op == gvinst.OpMul {
			e.i("mul.lo.u64", d, a, b)
		} else {
			e.i(fmt.Sprintf("%s.u64", name), d, a, b)
		}
		e.mask(d, t)
	case gvinst.OpMulHi:
		a, b := e.src(in, 0), e.src(in, 1)
		d := e.reg(in.Dst)
		if t.Size() == 8 {
			s := "u64"
			if t.IsSigned() {
				s = "s64"
			}
			e.i(fmt.Sprintf("mul.hi.%s", s), d, a, b)
			return
		}
		x, y := e.ext(a, t, t.IsSigned()), e.ext(b, t, t.IsSigned())
		e.i("mul.lo.u64", d, x, y)
		if t.IsSigned() {
			e.i("shr.s64", d, d, t.Bits())
		} else {
			e.i("shr.u64", d, d, t.Bits())
		}
		e.mask(d, t)
	case gvinst.OpDiv, gvinst.OpRem:
		a, b := e.src(in, 0), e.src(in, 1)
		d := e.reg(in.Dst)
		if t.IsFloat() {
			fa, fb := e.fin(a, t), e.fin(b, t)
			r := e.freg(t)
			e.i(fmt.Sprintf("div.rn.%s", ftype(t)), r, fa, fb)
			e.fout(d, r, t)
			return
		}
		s := t.IsSigned()
		x, y := e.ext(a, t, s), e.ext(b, t, s)
		p := e.pred()
		e.i("mov.b64", "%xa", lit(in.X86))
		e.i("setp.eq.u64", p, y, 0)
		e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeDivide)).when(p)
		ty := "u64"
		if s {
			ty = "s64"
			// INT_MIN / -1 overflows on x86.
			q := e.pred()
			e.i("setp.eq.s64", q, y, -1)
			e.i("setp.eq.s64", p, x, lit(uint64(sext(1<<(t.Bits()-1), t.Bits()))))
			e.i("and.pred", p, p, q)
			e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeDivide)).when(p)
		}
		op := "div"
		if in.Op == gvinst.OpRem {
			op = "rem"
		}
		if t.Bits() <= 32 {
			// Operands of 32 bits or less divide in 32 bits (the trap
			// cases are tested above): a GPU divides 64-bit integers in
			// software, several times slower.
			w, v, r := e.w(), e.w(), e.w()
			e.i("cvt.u32.u64", w, x)
			e.i("cvt.u32.u64", v, y)
			e.i(fmt.Sprintf("%s.%s32", op, ty[:1]), r, w, v)
			e.i("cvt.u64.u32", d, r)
			e.mask(d, t)
			return
		}
		e.i(fmt.Sprintf("%s.%s", op, ty), d, x, y)
		e.mask(d, t)
	case gvinst.OpDivW, gvinst.OpRemW:
		e.divw(in)
	case gvinst.OpAnd, gvinst.OpOr, gvinst.OpXor:
		a, b := e.src(in, 0), e.src(in, 1)
		d := e.reg(in.Dst)
		if in.Op == gvinst.OpOr && e.plain[key(block, idx)] {
			// A merge whose kept upper half nothing reads (highbits.go):
			// the value merged in, as it is.
			low := a
			if e.keptBy(in.Src[0], idx) {
				low = b
			}
			e.i("mov.b64", d, low)
			return
		}
		name := map[gvinst.Op]string{gvinst.OpAnd: "and", gvinst.OpOr: "or", gvinst.OpXor: "xor"}[in.Op]
		e.i(fmt.Sprintf("%s.b64", name), d, a, b)
		e.mask(d, t)
	case gvinst.OpShl, gvinst.OpShr, gvinst.OpSar:
		a := e.src(in, 0)
		d := e.reg(in.Dst)
		var w ptx.Operand
		if in.HasImm {
			// A constant count, masked and clamped here.
			w = lit(min(uint64(in.Imm)&t.Mask(), 64))
		} else {
			c := e.t()
			e.i("and.b64", c, e.src(in, 1), lit(t.Mask()))
			e.i("min.u64", c, c, 64)
			w = ptx.Reg(e.w())
			e.i("cvt.u32.u64", w, c)
		}
		switch in.Op {
		case gvinst.OpShl:
			e.i("shl.b64", d, a, w)
		case gvinst.OpShr:
			x := e.ext(a, t, false)
			e.i("shr.u64", d, x, w)
		default:
			x := e.ext(a, t, true)
			e.i("shr.s64", d, x, w)
		}
		e.mask(d, t)
	case gvinst.OpRol, gvinst.OpRor:
		a, b := e.src(in, 0), e.src(in, 1)
		d := e.reg(in.Dst)
		n := t.Bits()
		k := e.t()
		e.i("and.b64", k, b, n-1)
		if in.Op == gvinst.OpRor {
			e.i("sub.u64", k, n, k)
			e.i("and.b64", k, k, n-1)
		}
		az := e.ext(a, t, false)
		kk := e.t()
		e.i("sub.u64", kk, n, k)
		w1, w2 := e.w(), e.w()
		e.i("cvt.u32.u64", w1, k)
		e.i("cvt.u32.u64", w2, kk)
		x, y := e.t(), e.t()
		e.i("shl.b64", x, az, w1)
		e.i("shr.u64", y, az, w2)
		e.i("or.b64", d, x, y)
		e.mask(d, t)
	case gvinst.OpMin, gvinst.OpMax:
		a, b := e.src(in, 0), e.src(in, 1)
		d := e.reg(in.Dst)
		if t.IsFloat() {
			fa, fb := e.fin(a, t), e.fin(b, t)
			p := e.pred()
			c := "lt"
			if in.Op == gvinst.OpMax {
				c = "gt"
			}
			e.i(fmt.Sprintf("setp.%s.%s", c, ftype(t)), p, fa, fb)
			e.i("selp.b64", d, a, b, p)
			e.mask(d, t)
			return
		}
		s := t.IsSigned()
		x, y := e.ext(a, t, s), e.ext(b, t, s)
		ty := "u64"
		if s {
			ty = "s64"
		}
		name := "min"
		if in.Op == gvinst.OpMax {
			name = "max"
		}
		e.i(fmt.Sprintf("%s.%s", name, ty), d, x, y)
		e.mask(d, t)
	case gvinst.OpNot:
		a := e.src(in, 0)
		d := e.reg(in.Dst)
		e.i("not.b64", d, a)
		e.mask(d, t)
	case gvinst.OpNeg, gvinst.OpAbs:
		a := e.src(in, 0)
		d := e.reg(in.Dst)
		if t.IsFloat() {
			sign := uint64(1) << 63
			if t == gvinst.F32 {
				sign = 1 << 31
			}
			if in.Op == gvinst.OpNeg {
				e.i("xor.b64", d, a, lit(sign))
			} else {
				e.i("and.b64", d, a, lit(^sign))
			}
			e.mask(d, t)
			return
		}
		if in.Op == gvinst.OpNeg {
			e.i("neg.s64", d, a)
		} else {
			x := e.ext(a, t, true)
			e.i("abs.s64", d, x)
		}
		e.mask(d, t)
	case gvinst.OpSqrt:
		a := e.src(in, 0)
		fa := e.fin(a, t)
		r := e.freg(t)
		e.i(fmt.Sprintf("sqrt.rn.%s", ftype(t)), r, fa)
		e.fout(e.reg(in.Dst), r, t)
	case gvinst.OpClz, gvinst.OpCtz, gvinst.OpPopc:
		a := e.src(in, 0)
		az := e.ext(a, t, false)
		w := e.w()
		switch in.Op {
		case gvinst.OpClz:
			e.i("clz.b64", w, az)
			e.i("sub.u32", w, w, 64-t.Bits())
		case gvinst.OpCtz:
			x := e.t()
			e.i("brev.b64", x, az)
			e.i("clz.b64", w, x)
			e.i("min.u32", w, w, t.Bits())
		default:
			e.i("popc.b64", w, az)
		}
		e.i("cvt.u64.u32", e.reg(in.Dst), w)
	case gvinst.OpBswap:
		a := e.src(in, 0)
		d := e.reg(in.Dst)
		switch t.Size() {
		case 1:
			e.i("and.b64", d, a, 255)
		case 4:
			w, w2 := e.w(), e.w()
			e.i("cvt.u32.u64", w, a)
			e.i("prmt.b32", w2, w, 0, ptx.Hex(0x0123, 4))
			e.i("cvt.u64.u32", d, w2)
		default:
			lo, hi, lo2, hi2 := e.w(), e.w(), e.w(), e.w()
			e.i("mov.b64", vec(lo, hi), a)
			e.i("prmt.b32", lo2, lo, 0, ptx.Hex(0x0123, 4))
			e.i("prmt.b32", hi2, hi, 0, ptx.Hex(0x0123, 4))
			e.i("mov.b64", d, vec(hi2, lo2))
		}
	case gvinst.OpCvt:
		e.cvt(in)
	case gvinst.OpRound:
		a := e.src(in, 0)
		fa := e.fin(a, t)
		r := e.freg(t)
		e.i(fmt.Sprintf("cvt.%si.%s.%s", roundName(gvinst.Rounding(in.Mod)), ftype(t), ftype(t)), r, fa)
		e.fout(e.reg(in.Dst), r, t)
	case gvinst.OpCmp:
		a, b := e.src(in, 0), e.src(in, 1)
		p := e.pred()
		if e.fuse {
			p = e.fusePred
		}
		c := gvinst.Cmp(in.Mod)
		if t.IsFloat() {
			fa, fb := e.fin(a, t), e.fin(b, t)
			e.i(fmt.Sprintf("setp.%s.%s", c, ftype(t)), p, fa, fb)
		} else {
			s := t.IsSigned()
			x, y := e.ext(a, t, s), e.ext(b, t, s)
			ty := "u64"
			if s {
				ty = "s64"
			}
			e.i(fmt.Sprintf("setp.%s.%s", intCmpName(c), ty), p, x, y)
		}
		if e.fuse {
			return // only the BRANCH that follows reads the result
		}
		e.i("selp.u64", e.reg(in.Dst), 1, 0, p)
	case gvinst.OpSelect:
		c := e.reg(in.Src[0])
		p := e.pred()
		e.i("setp.ne.u64", p, c, 0)
		e.i("selp.b64", e.reg(in.Dst), e.reg(in.Src[1]), e.reg(in.Src[2]), p)
		if t.IsWide() {
			e.i("selp.b64", e.reg(in.Dst+1), e.reg(in.Src[1]+1), e.reg(in.Src[2]+1), p)
		}
	case gvinst.OpJmp:
		e.i("mov.b64", "%xa", lit(in.X86))
		e.i("bra", e.target(in.Target[0]))
	case gvinst.OpBranch:
		p := e.fusePred
		if !e.fused {
			p = e.pred()
			e.i("setp.ne.u64", p, e.reg(in.Src[0]), 0)
		}
		t0, t1 := e.target(in.Target[0]), e.target(in.Target[1])
		if (e.a.n.ThreadLoop != 0 || e.a.n.Even) && e.innerLeaves(in.Target) {
			// The thread's one inner iteration ends: it must take the
			// back edge unless it is the row's last, the exit if it is.
			// With q = the branch's predicate xor %plast, that is q when
			// the back edge is the branch's target, else not q.
			q := "%ptripx"
			e.i("xor.pred", q, p, "%plast")
			stub := fmt.Sprintf("$Lcktrip%x", in.X86)
			e.stubs[stub] = [2]uint64{ErrCodeExit, in.X86}
			if t0 == "$Linner_back" {
				e.i("bra", stub).when("!" + q)
			} else {
				e.i("bra", stub).when(q)
			}
			e.i("bra", label(e.a.innerExit))
			return
		}
		if e.a.n.Even && (t0 == "$Linner_row") != (t1 == "$Linner_row") {
			// The level's back edge in an even kernel: a row the GPU runs
			// is never the level's last (the CPU runs at least the last), then
			// the next row, as a counted loop (hoist.go).
			stub := fmt.Sprintf("$Lckrow%x", in.X86)
			e.stubs[stub] = [2]uint64{ErrCodeExit, in.X86}
			if t0 == "$Linner_row" {
				e.i("bra", stub).when("!" + p)
			} else {
				e.i("bra", stub).when(p)
			}
			e.i("add.u64", "%idx", "%idx", 1)
			e.i("setp.ne.u64", "%pbr", "%idx", "%cnt")
			e.i("bra", label(e.a.n.start())).when("%pbr")
			e.label(fmt.Sprintf("$Lrows%x", in.X86))
			e.i("bra", "$Ldone")
			return
		}
		if side := func(t string) bool {
			return strings.HasPrefix(t, "$Lerr") || strings.HasPrefix(t, "$Linner") || strings.HasPrefix(t, "$Lexit")
		}; side(t0) || side(t1) {
			e.i("mov.b64", "%xa", lit(in.X86))
		}
		e.i("bra", t0).when(p)
		e.i("bra", t1)
	default:
		if vecSupported(in) {
			e.vec(in)
			return
		}
		e.fail("op %s is not lowered to PTX", in.Op)
	}
}

func intCmpName(c gvinst.Cmp) string {
	switch c {
	case gvinst.CmpEqu:
		return "eq"
	case gvinst.CmpNeu:
		return "ne"
	case gvinst.CmpLtu:
		return "lt"
	case gvinst.CmpLeu:
		return "le"
	case gvinst.CmpGtu:
		return "gt"
	case gvinst.CmpGeu:
		return "ge"
	}
	return c.String()
}

func roundName(r gvinst.Rounding) string {
	switch r {
	case gvinst.RoundZero:
		return "rz"
	case gvinst.RoundDown:
		return "rm"
	case gvinst.RoundUp:
		return "rp"
	}
	return "rn" // nearest, and MXCSR's mode, which the runtime checks is nearest
}

// cvt lowers CVT.r.t.s.
func (e *emitter) cvt(in *gvinst.Inst) {
	e.cvtReg(e.reg(in.Dst), e.src(in, 0), in.Type, in.SrcType, gvinst.Rounding(in.Mod))
}

// cvtReg converts the value of type s in 64-bit register a to type t in
// register d (t's bits, zero-extended), rounding by r.
func (e *emitter) cvtReg(d, a string, t, s gvinst.Type, r gvinst.Rounding) {
	switch {
	case t.IsInt() && s.IsInt():
		x := e.ext(a, s, s.IsSigned())
		e.i("mov.b64", d, x)
		e.mask(d, t)
	case t.IsInt():
		fa := e.fin(a, s)
		ri := e.freg(s)
		e.i(fmt.Sprintf("cvt.%si.%s.%s", roundName(r), ftype(s), ftype(s)), ri, fa)
		n := t.Bits()
		var lo, hi float64
		if t.IsSigned() {
			lo, hi = -math.Ldexp(1, n-1), math.Ldexp(1, n-1)
		} else {
			lo, hi = 0, math.Ldexp(1, n)
		}
		p, q := e.pred(), e.pred()
		e.i(fmt.Sprintf("setp.ge.%s", ftype(s)), p, ri, flit(s, lo))
		e.i(fmt.Sprintf("setp.lt.%s", ftype(s)), q, ri, flit(s, hi))
		e.i("and.pred", p, p, q)
		x := e.t()
		if t.IsSigned() || n < 64 {
			e.i(fmt.Sprintf("cvt.rzi.s64.%s", ftype(s)), x, ri)
		} else {
			e.i(fmt.Sprintf("cvt.rzi.u64.%s", ftype(s)), x, ri)
		}
		e.i("selp.b64", d, x, lit(uint64(1)<<(n-1)), p)
		e.mask(d, t)
	case s.IsInt():
		x := e.ext(a, s, s.IsSigned())
		ty := "u64"
		if s.IsSigned() {
			ty = "s64"
		}
		f := e.freg(t)
		e.i(fmt.Sprintf("cvt.%s.%s.%s", roundName(r), ftype(t), ty), f, x)
		e.fout(d, f, t)
	case t == s:
		e.i("mov.b64", d, a)
		e.mask(d, t)
	case t == gvinst.F64:
		fa := e.fin(a, s)
		f := e.fd()
		e.i("cvt.f64.f32", f, fa)
		e.fout(d, f, t)
	default:
		fa := e.fin(a, s)
		f := e.fs()
		e.i(fmt.Sprintf("cvt.%s.f32.f64", roundName(r)), f, fa)
		e.fout(d, f, t)
	}
}

// mem lowers LD and ST: private stack slots as registers, guest memory
// through the site's footprint check and device delta.
func (e *emitter) mem(block uint64, idx int, in *gvinst.Inst) {
	t := in.Type
	size := t.Size()
	if off, ok := e.a.priv[key(block, idx)]; ok {
		halves := 1
		if size == 16 {
			halves, size = 2, 8
		}
		for h := 0; h < halves; h++ {
			o := off + int64(8*h)
			k := fmt.Sprintf("%%k%d", e.a.privIdx[o])
			if in.Op == gvinst.OpLd {
				d := e.reg(in.Dst + gvinst.Reg(h))
				if size == 8 {
					e.i("mov.b64", d, k)
				} else {
					e.i("and.b64", d, k, lit(sizeMask(size)))
				}
				continue
			}
			v := e.reg(in.Src[1] + gvinst.Reg(h))
			if size == 8 {
				e.i("mov.b64", k, v)
				continue
			}
			x := e.t()
			e.i("and.b64", x, v, lit(sizeMask(size)))
			e.i("and.b64", k, k, lit(^sizeMask(size)))
			e.i("or.b64", k, k, x)
		}
		return
	}
	id := e.a.siteAt[key(block, idx)]
	addr := e.t()
	guest := e.reg(in.Src[0])
	if in.Imm != 0 {
		e.i("add.u64", addr, guest, lit(uint64(in.Imm)))
		guest = addr
	}
	if in.Op == gvinst.OpSt {
		e.rowStore(id, block, guest, size)
	}
	if e.a.anyAlign[key(block, idx)] {
		// movdqu, movups, movq/movd of a vector register over bytes: any
		// address (anyAddress), as gcc's vector loops over bytes and
		// stencils' shifted rows make.
		e.siteCheckTo(id, addr, guest, 1, in.X86)
		if in.Op == gvinst.OpLd {
			ds := []string{e.reg(in.Dst)}
			if size == 16 {
				ds = append(ds, e.reg(in.Dst+1))
			}
			e.loadAny(ds, addr, size)
		} else {
			vs := []string{e.reg(in.Src[1])}
			if size == 16 {
				vs = append(vs, e.reg(in.Src[1]+1))
			}
			e.storeAny(addr, vs, size)
		}
		return
	}
	e.siteCheckTo(id, addr, guest, max(naturalAlign(size), e.a.align[key(block, idx)]), in.X86)
	parts := 1
	if size == 16 {
		parts, size = 2, 8
	}
	for h := 0; h < parts; h++ {
		at := ptx.Addr(addr, int64(8*h))
		if in.Op == gvinst.OpLd {
			e.load(e.reg(in.Dst+gvinst.Reg(h)), at, size)
			continue
		}
		e.store(at, e.reg(in.Src[1]+gvinst.Reg(h)), size)
	}
}

// chkAlign lowers CHKALIGN: nothing where the access it guards checks the
// alignment in its site check (analysis.align), else an explicit test that
// reports ErrCodeAlign, so that the CPU runs the instance and faults as
// x86 does.
func (e *emitter) chkAlign(block uint64, idx int, in *gvinst.Inst) {
	if e.a.alignChecked[key(block, idx)] {
		return
	}
	x := e.t()
	e.i("add.u64", x, e.reg(in.Src[0]), lit(uint64(in.Imm)))
	if n := in.Type.Size(); n&(n-1) == 0 {
		e.i("and.b64", x, x, n-1)
	} else {
		e.i("rem.u64", x, x, n)
	}
	p := e.pred()
	e.i("setp.ne.u64", p, x, 0)
	l := fmt.Sprintf("$Lal%x", in.X86)
	e.i("bra", l).when(p)
	e.stubs[l] = [2]uint64{ErrCodeAlign, in.X86}
}

// siteCheck checks guest address addr (a register) of an access of size
// bytes at site id against the site's footprint and the access's natural
// alignment, then turns it into the device address in place.
func (e *emitter) siteCheck(id int, addr string, size int, x86 uint64) {
	e.siteCheckTo(id, addr, addr, naturalAlign(size), x86)
}

// naturalAlign is the alignment the GPU requires of an access of size
// bytes: a 16-byte access is two 8-byte ones.
func naturalAlign(size int) int { return min(size, 8) }

// siteCheckTo checks guest address register guest as siteCheck does, for
// an alignment of al bytes, and leaves the device address in register
// addr.
func (e *emitter) siteCheckTo(id int, addr, guest string, al int, x86 uint64) {
	if e.unchecked {
		e.i("add.u64", addr, guest, fmt.Sprintf("%%sd%d", id))
		return
	}
	// %sl is the site's lowest address and %sh the span it may start an
	// access in (see the prologue): one unsigned compare checks both ends,
	// and the alignment test joins the same predicate, so an access costs
	// one branch; the error stub tells the two failures apart.
	p := e.pred()
	off := e.t()
	e.i("sub.u64", off, guest, fmt.Sprintf("%%sl%d", id))
	e.i("setp.gt.u64", p, off, fmt.Sprintf("%%sh%d", id))
	if al == 1 {
		e.i("bra", fmt.Sprintf("$Lfp%x", x86)).when(p)
		e.stubs[fmt.Sprintf("$Lfp%x", x86)] = [2]uint64{ErrCodeFootprint, x86}
	} else {
		x := e.t()
		e.i("and.b64", x, guest, al-1)
		e.i("setp.ne.or.u64", p, x, 0, p)
		l := fmt.Sprintf("$Lck%x_%d", x86, len(e.checks))
		e.i("bra", l).when(p)
		e.checks = append(e.checks, check{label: l, x86: x86, off: off, site: id})
	}
	e.i("add.u64", addr, guest, fmt.Sprintf("%%sd%d", id))
}

// load loads size bytes at device address at into register d,
// zero-extended.
func (e *emitter) load(d string, at ptx.Operand, size int) {
	switch size {
	case 1, 2:
		x := e.h()
		e.i(fmt.Sprintf("ld.global.u%d", size*8), x, at)
		e.i("cvt.u64.u16", d, x)
	case 4:
		x := e.w()
		e.i("ld.global.u32", x, at)
		e.i("cvt.u64.u32", d, x)
	default:
		e.i("ld.global.u64", d, at)
	}
}

// loadAny loads the size bytes (4, 8 or 16) at device address addr, of any
// alignment, into ds (one register, or two for 16 bytes): from the aligned
// words that hold them (the last is the one before again when the bytes
// end in it), joined by shifts. A device buffer starts and ends at 16-byte
// boundaries of guest addresses (launch.go), so an aligned word holding an
// accessed byte lies inside it.
func (e *emitter) loadAny(ds []string, addr string, size int) {
	base, last, o := e.t(), e.t(), e.t()
	e.i("and.b64", base, addr, lit(^uint64(7)))
	e.i("add.u64", last, addr, size-1)
	e.i("and.b64", last, last, lit(^uint64(7)))
	e.i("and.b64", o, addr, 7)
	sh, rsh := e.w(), e.w()
	e.i("cvt.u32.u64", sh, o)
	e.i("shl.b32", sh, sh, 3)
	e.i("sub.u32", rsh, 64, sh) // 64 when aligned: the shift gives 0
	w := []string{e.t(), e.t()}
	e.i("ld.global.u64", w[0], ptx.Addr(base, 0))
	if size == 16 {
		w = append(w, e.t())
		e.i("ld.global.u64", w[1], ptx.Addr(base, 8))
	}
	e.i("ld.global.u64", w[len(w)-1], ptx.Addr(last, 0))
	for h, d := range ds {
		x, y := e.t(), e.t()
		e.i("shr.b64", x, w[h], sh)
		e.i("shl.b64", y, w[h+1], rsh)
		e.i("or.b64", d, x, y)
		if size < 8 {
			e.i("and.b64", d, d, lit(sizeMask(size)))
		}
	}
}

// storeAny stores the size bytes (4, 8 or 16) of vs (one register, or two
// for 16 bytes) at device address addr, of any alignment: as 8-byte words
// when addr is 8-byte aligned, as 4-byte words when it is 4-byte aligned
// (floats at a[j+1]), else byte by byte. Other threads may write the bytes
// around, so no word is read and written back.
func (e *emitter) storeAny(addr string, vs []string, size int) {
	o, o3, odd := e.t(), e.t(), e.pred()
	e.i("and.b64", o, addr, 7)
	e.i("and.b64", o3, o, 3)
	e.i("setp.ne.u64", odd, o3, 0)
	p4 := e.pred()
	if size >= 8 {
		p8 := e.pred()
		e.i("setp.eq.u64", p8, o, 0)
		e.i("setp.eq.u64", p4, o, 4)
		for h, v := range vs {
			e.i("st.global.u64", ptx.Addr(addr, int64(8*h)), v).when(p8)
		}
	} else {
		e.i("setp.eq.u64", p4, o3, 0)
	}
	for k := 0; k < size/4; k++ {
		x, w := e.t(), e.w()
		e.i("shr.u64", x, vs[k/2], 32*(k%2))
		e.i("cvt.u32.u64", w, x)
		e.i("st.global.u32", ptx.Addr(addr, int64(4*k)), w).when(p4)
	}
	for k := 0; k < size; k++ {
		x, b := e.t(), e.h()
		e.i("shr.u64", x, vs[k/8], 8*(k%8))
		e.i("cvt.u16.u64", b, x)
		e.i("st.global.u8", ptx.Addr(addr, int64(k)), b).when(odd)
	}
}

// store stores the low size bytes of register v at device address at.
func (e *emitter) store(at ptx.Operand, v string, size int) {
	switch size {
	case 1, 2:
		x := e.h()
		e.i("cvt.u16.u64", x, v)
		e.i(fmt.Sprintf("st.global.u%d", size*8), at, x)
	case 4:
		x := e.w()
		e.i("cvt.u32.u64", x, v)
		e.i("st.global.u32", at, x)
	default:
		e.i("st.global.u64", at, v)
	}
}

func sizeMask(n int) uint64 {
	if n >= 8 {
		return ^uint64(0)
	}
	return uint64(1)<<(8*n) - 1
}

// divw lowers DIVW and REMW: the 2t-bit dividend hi:lo divided by b. For t
// of 32 bits or less the dividend fits a 64-bit register; for 64-bit t the
// kernel handles the dividends compiled code makes (hi the sign or zero
// extension of lo, as cqo and xor edx, edx leave it) and reports any other
// as a division it cannot do, like a quotient that does not fit t.
func (e *emitter) divw(in *gvinst.Inst) {
	t := in.Type
	n := t.Bits()
	s := t.IsSigned()
	hi, lo, b := e.reg(in.Src[0]), e.reg(in.Src[1]), e.reg(in.Src[2])
	d := e.reg(in.Dst)
	p, q := e.pred(), e.pred()
	e.i("mov.b64", "%xa", lit(in.X86))
	y := e.ext(b, t, s)
	e.i("setp.eq.u64", p, y, 0)
	e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeDivide)).when(p)
	x := e.t()
	if n < 64 {
		l := e.ext(lo, t, false)
		e.i("shl.b64", x, hi, n)
		e.i("or.b64", x, x, l)
		if s && n < 32 {
			e.i("shl.b64", x, x, 64-2*n)
			e.i("shr.s64", x, x, 64-2*n)
		} else if !s && n < 32 {
			e.i("and.b64", x, x, lit(uint64(1)<<(2*n)-1))
		}
	} else {
		// hi must extend lo.
		ext := e.t()
		if s {
			e.i("shr.s64", ext, lo, 63)
		} else {
			e.i("mov.b64", ext, 0)
		}
		e.i("setp.ne.u64", p, hi, ext)
		e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeDivide)).when(p)
		e.i("mov.b64", x, lo)
	}
	var done string
	if n == 64 {
		// A dividend and divisor that both fit 32 bits (long index
		// arithmetic: (i*j) % n) divide in 32 bits, their quotient and
		// remainder extended back to 64; a divisor of -1 goes the long
		// way (INT_MIN / -1 is 2^31, which 32 bits do not hold).
		slow := fmt.Sprintf("$Ldivw%d", e.divs)
		done = fmt.Sprintf("$Ldivw%d_done", e.divs)
		e.divs++
		w, v, r := e.w(), e.w(), e.w()
		c := e.t()
		e.i("cvt.u32.u64", w, x)
		e.i("cvt.u32.u64", v, y)
		cvt := "cvt.u64.u32"
		if s {
			cvt = "cvt.s64.s32"
			e.i("cvt.s64.s32", c, w)
			e.i("setp.ne.u64", p, c, x)
			e.i("cvt.s64.s32", c, v)
			e.i("setp.ne.or.u64", p, c, y, p)
			e.i("setp.eq.s32", q, v, -1)
			e.i("or.pred", p, p, q)
		} else {
			e.i("or.b64", c, x, y)
			e.i("shr.u64", c, c, 32)
			e.i("setp.ne.u64", p, c, 0)
		}
		e.i("bra", slow).when(p)
		op := "div"
		if in.Op == gvinst.OpRemW {
			op = "rem"
		}
		ty32 := "u32"
		if s {
			ty32 = "s32"
		}
		e.i(fmt.Sprintf("%s.%s", op, ty32), r, w, v)
		e.i(cvt, d, r)
		e.i("bra", done)
		e.label(slow)
	}
	if n == 32 {
		// A dividend that fits 32 bits (cdq or xor edx, edx made hi)
		// divides in 32 bits: a GPU divides 64-bit integers in
		// software, several times slower. Signed, a divisor of -1 goes
		// the long way, which reports INT_MIN / -1 as x86 traps on it;
		// no other quotient of a 32-bit dividend leaves 32 bits.
		slow := fmt.Sprintf("$Ldivw%d", e.divs)
		done = fmt.Sprintf("$Ldivw%d_done", e.divs)
		e.divs++
		w, v, r := e.w(), e.w(), e.w()
		e.i("cvt.u32.u64", w, x)
		e.i("cvt.u32.u64", v, y)
		if s {
			c := e.t()
			e.i("cvt.s64.s32", c, w)
			e.i("setp.ne.u64", p, c, x)
			e.i("setp.eq.s32", q, v, -1)
			e.i("or.pred", p, p, q)
		} else {
			c := e.t()
			e.i("shr.u64", c, x, 32)
			e.i("setp.ne.u64", p, c, 0)
		}
		e.i("bra", slow).when(p)
		ty32 := "u32"
		if s {
			ty32 = "s32"
		}
		op := "div"
		if in.Op == gvinst.OpRemW {
			op = "rem"
		}
		e.i(fmt.Sprintf("%s.%s", op, ty32), r, w, v)
		e.i("cvt.u64.u32", d, r)
		e.i("bra", done)
		e.label(slow)
	}
	ty := "u64"
	if s {
		ty = "s64"
		e.i("setp.eq.s64", q, y, -1)
		e.i("setp.eq.s64", p, x, lit(1<<63))
		e.i("and.pred", p, p, q)
		e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeDivide)).when(p)
	}
	quo := e.t()
	e.i(fmt.Sprintf("div.%s", ty), quo, x, y)
	if n < 64 {
		// The quotient must fit t.
		if s {
			e.i("setp.lt.s64", p, quo, -(int64(1) << (n - 1)))
			e.i("setp.ge.s64", q, quo, int64(1)<<(n-1))
		} else {
			e.i("setp.ge.u64", p, quo, lit(uint64(1)<<n))
			e.i("setp.ge.u64", q, quo, lit(uint64(1)<<n))
		}
		e.i("or.pred", p, p, q)
		e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeDivide)).when(p)
	}
	if in.Op == gvinst.OpDivW {
		e.i("mov.b64", d, quo)
	} else {
		e.i(fmt.Sprintf("rem.%s", ty), d, x, y)
	}
	e.mask(d, t)
	if done != "" {
		e.label(done)
	}
}

// copies finds the GET and MOV instructions of b whose destination can
// simply name their source: a one-slot virtual register written only
// there, whose source register is not written again while it is read.
// It maps each such destination to the register it copies.
func copies(b *gvinst.VBlock) map[gvinst.Reg]gvinst.Reg {
	writes := map[gvinst.Reg][]int{}
	reads := map[gvinst.Reg][]int{}
	for i := range b.Insts {
		in := &b.Insts[i]
		if hasDst(in) {
			for s := 0; s < in.DstType().Slots(); s++ {
				writes[in.Dst+gvinst.Reg(s)] = append(writes[in.Dst+gvinst.Reg(s)], i)
			}
		}
		rs, ws := stringRegs(in)
		for _, r := range ws {
			writes[r] = append(writes[r], i)
		}
		for _, r := range rs {
			reads[r] = append(reads[r], i)
		}
		si := 0
		for _, k := range in.Op.Info().Operands {
			switch k {
			case gvinst.OpdSrc, gvinst.OpdMem, gvinst.OpdSrcImm:
				if k == gvinst.OpdSrcImm && in.HasImm {
					si++
					continue
				}
				for s := 0; s < in.SrcTypeOf(si).Slots(); s++ {
					r := in.Src[si] + gvinst.Reg(s)
					reads[r] = append(reads[r], i)
				}
				si++
			}
		}
	}
	alias := map[gvinst.Reg]gvinst.Reg{}
	free := func(dst, src gvinst.Reg, i int) bool {
		// dst, written only at i, may name src's root while src's root
		// is not written again before dst's last read.
		if !dst.IsVirtual() || len(writes[dst]) != 1 {
			return false
		}
		root := src
		if to, ok := alias[root]; ok {
			root = to
		}
		last := -1
		for _, j := range reads[dst] {
			last = max(last, j)
		}
		for _, j := range writes[root] {
			if j > i && j <= last {
				return false
			}
		}
		alias[dst] = root
		return true
	}
	for i := range b.Insts {
		in := &b.Insts[i]
		if in.Op == gvinst.OpJoin {
			// Both halves, or neither (the JOIN is then emitted).
			lo, hi := in.Src[0], in.Src[1]
			if free(in.Dst, lo, i) && !free(in.Dst+1, hi, i) {
				delete(alias, in.Dst)
			}
			continue
		}
		if in.Op != gvinst.OpGet && in.Op != gvinst.OpMov {
			continue
		}
		t := in.Type
		if t.IsWide() || (in.Op == gvinst.OpGet && t.Size() != 8) || !in.Dst.IsVirtual() || len(writes[in.Dst]) != 1 {
			continue
		}
		root := in.Src[0]
		if to, ok := alias[root]; ok {
			root = to
		}
		last := -1
		for _, j := range reads[in.Dst] {
			last = max(last, j)
		}
		ok := true
		for _, j := range writes[root] {
			if j > i && j <= last {
				ok = false
			}
		}
		// Reads of a wide value through its first slot must not see a
		// copy in the second.
		if _, wide := alias[in.Dst-1]; wide {
			ok = false
		}
		if ok {
			alias[in.Dst] = root
		}
	}
	return alias
}

// checkSteps ends the thread with ErrCodeStep unless each value of cs has
// the value it must have where the iteration ends: its value where the
// iteration began plus its step. The kernel placed each thread's iteration
// at entry + step·u, which is where the CPU would be only if every earlier
// iteration advanced by exactly one step; a step that depends on the data
// (i += a[i] > t ? 2 : 1) is affine in a profile that never saw the other
// side, and without this check the kernel would run iterations the CPU
// skips. A thread that checks its own step proves, over the launch, that
// every iteration did.
func (e *emitter) checkSteps(cs []stepCheck) {
	if len(cs) == 0 {
		return
	}
	e.i("mov.u64", "%xa", lit(e.a.n.Header))
	for i, c := range cs {
		if i == 0 {
			e.i("setp.ne.u64", "%p0", c.reg, c.next)
		} else {
			e.i("setp.ne.or.u64", "%p0", c.reg, c.next, "%p0")
		}
	}
	e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeStep)).when("%p0")
}

// toInnerIteration moves this thread to its inner iteration %xi of row
// %idx (each inner live-in advanced by its step, whose per-row change is
// istepd_), reloads the inner level's reloaded registers, and enters the
// inner loop. A value the inner loop does not write has step 0, and a
// reloaded register is loaded (or, in the iterations before its depth,
// holds its value at the inner loop's entry): neither moves.
func (e *emitter) toInnerIteration(a *analysis) {
	var steps []stepCheck
	reloaded := a.reloadedAt(1)
	for _, l := range a.innerLive {
		if !l.Written || !l.Stack && reloaded[l.Slot] {
			continue
		}
		dst := e.liveReg(l)
		e.i("ld.param.u64", "%t1", ptx.Addr(fmt.Sprintf("istep_%s", paramName(l)), 0))
		e.i("ld.param.u64", "%t0", ptx.Addr(fmt.Sprintf("istepd_%s", paramName(l)), 0))
		e.i("mad.lo.u64", "%t1", "%t0", "%idx", "%t1")
		e.i("mad.lo.u64", dst, "%t1", e.mid(), dst)
		c := stepCheck{reg: dst, next: fmt.Sprintf("%%nxi%d", len(steps))}
		e.i("add.u64", c.next, dst, "%t1")
		if a.runs2D() {
			e.runMove(len(steps))
		}
		steps = append(steps, c)
	}
	e.innerSteps = steps
	if a.runs2D() {
		e.label("$Linner_reload")
	}
	e.reloads(1)
	e.i("bra", label(a.n.Inner))
}

// liveReg is the kernel register that holds live value l: its guest
// register's, or the private register of its stack slot.
func (e *emitter) liveReg(l LiveIn) string {
	if l.Stack {
		return fmt.Sprintf("%%k%d", e.a.privIdx[privKeyOf(l.Base, l.Disp)])
	}
	return e.reg(l.Slot)
}

// reloadedAt is the set of registers the reloads of level (Reload.level)
// set, the high slot of a HighZero one included.
func (a *analysis) reloadedAt(level int) map[gvinst.Reg]bool {
	set := map[gvinst.Reg]bool{}
	for _, r := range a.n.Reloads {
		if r.level() == level {
			set[r.Slot] = true
			if r.HighZero {
				set[r.Slot+1] = true
			}
		}
	}
	return set
}

// mid is the register of the thread's inner iteration: %xi in a 2D
// kernel, %yi in a 3D one.
func (e *emitter) mid() string {
	if e.a.inner2 != nil {
		return "%yi"
	}
	return "%xi"
}

// innerTarget is the label of an edge from the inner level's body (not
// the innermost loop's) to block to.
func (e *emitter) innerTarget(to uint64) string {
	switch {
	case to == e.a.n.Inner:
		return "$Linner_back"
	case !e.a.inner[to]:
		return "$Linner_exit"
	}
	return label(to)
}

// runs3D reports whether the 3D kernel's threads run runs of innermost
// iterations (LaunchPlan.Runs3D): only where the innermost level is one
// block, a stencil point's straight code, whose set-up is most of a
// thread's work. Not where it holds a loop (doitgen's sum: an iteration
// is long already, and a run's threads, four elements apart, would walk
// four times the lines of C4[s][p] a warp's one-element threads share),
// nor with a counted loop, a thread loop or an interchange, whose threads
// enter the levels otherwise.
func (a *analysis) runs3D() bool {
	return a.inner2 != nil && len(a.inner2) == 1 && a.tripLoop == nil && a.n.ThreadLoop == 0 && !a.n.Interchange && !a.n.Even
}

// threadIndex sets dst to the thread's index along dim (x, y or z),
// computed in 32 bits: Launch refuses a launch of more than 2^32 threads
// along a dimension.
func (e *emitter) threadIndex(dst, dim string) {
	e.i("mov.u32", "%w0", "%ctaid."+dim)
	e.i("mov.u32", "%w1", "%ntid."+dim)
	e.i("mov.u32", "%w2", "%tid."+dim)
	e.i("mad.lo.u32", "%w0", "%w0", "%w1", "%w2")
	e.i("cvt.u64.u32", dst, "%w0")
}

// strideX sets %xs, the threads along x: the distance between the
// iterations of a thread's run (LaunchPlan.Runs3D, Runs2D), which
// starts at its iteration %xi. Strided, not consecutive, so that a
// warp's 32 threads load 32 consecutive elements in every iteration of
// their runs, as one-iteration threads do.
func (e *emitter) strideX() {
	e.i("mov.u32", "%w0", "%nctaid.x")
	e.i("mov.u32", "%w1", "%ntid.x")
	e.i("mul.wide.u32", "%xs", "%w0", "%w1")
}

// runMove keeps, for the level's i-th stepped value (its step in %t1),
// how far it moves from the end of one iteration of a run to the start
// of the next (%xs-1 steps: %mvi or %mvj), and the step itself for the
// checks (%sxi or %sxj).
func (e *emitter) runMove(i int) {
	mv, sx := "%mvi", "%sxi"
	switch {
	case e.a.inner2 != nil:
		mv, sx = "%mvj", "%sxj"
	case e.a.inner == nil:
		mv, sx = "%mv", "%sx"
	}
	e.i("sub.u64", "%t0", "%xs", 1)
	e.i("mul.lo.u64", fmt.Sprintf("%s%d", mv, i), "%t1", "%t0")
	if !e.unchecked {
		e.i("mov.b64", fmt.Sprintf("%s%d", sx, i), "%t1")
	}
}

// nextOfRun ends an iteration of a thread's run at the level's back edge
// (its checks done): the thread's next iteration (index) is %xs further,
// if still below the row's trip count (trip); each stepped value (steps)
// moves there and its expected next value is a step on; the level's
// reloaded registers load again (reload: the label before them), and
// the loop runs on.
func (e *emitter) nextOfRun(index, trip string, steps []stepCheck, mv, sx, reload string) {
	e.i("add.u64", index, index, "%xs")
	e.i("setp.ge.u64", "%p0", index, trip)
	e.i("bra", "$Ldone").when("%p0")
	for i, c := range steps {
		e.i("add.u64", c.reg, c.reg, fmt.Sprintf("%s%d", mv, i))
		if !e.unchecked {
			e.i("add.u64", c.next, c.reg, fmt.Sprintf("%s%d", sx, i))
		}
	}
	e.i("bra", reload)
}

// runs1D is runs3D for a 1D kernel's level (LaunchPlan.Runs1D): one
// block, not a part of a distributed level (another part steps its
// values too).
func (a *analysis) runs1D() bool {
	return a.inner == nil && a.inner2 == nil && len(a.n.Blocks) == 1 && a.tripLoop == nil && !a.n.part()
}

// runs2D is runs3D for a 2D kernel's inner level (LaunchPlan.Runs2D).
func (a *analysis) runs2D() bool {
	return a.inner != nil && a.inner2 == nil && len(a.inner) == 1 && a.tripLoop == nil && a.n.ThreadLoop == 0 && !a.n.Interchange && !a.n.Even
}

// toInner2Iteration moves this thread to its innermost iteration %xi
// (each innermost live-in the innermost loop writes advanced by its
// step, the same in every inner iteration), reloads the innermost
// level's reloaded registers, and enters the innermost loop.
func (e *emitter) toInner2Iteration(a *analysis) {
	var steps []stepCheck
	reloaded := a.reloadedAt(2)
	for _, l := range a.inner2Live {
		if !l.Written || !l.Stack && reloaded[l.Slot] {
			continue
		}
		dst := e.liveReg(l)
		e.i("ld.param.u64", "%t1", ptx.Addr(fmt.Sprintf("i2step_%s", paramName(l)), 0))
		e.i("mad.lo.u64", dst, "%t1", "%xi", dst)
		c := stepCheck{reg: dst, next: fmt.Sprintf("%%nxj%d", len(steps))}
		e.i("add.u64", c.next, dst, "%t1")
		if a.runs3D() {
			e.runMove(len(steps))
		}
		steps = append(steps, c)
	}
	e.inner2Steps = steps
	if a.runs3D() {
		e.label("$Linner2_reload")
	}
	e.reloads(2)
	e.i("bra", label(a.n.Inner2))
}

// levelReloads are the reloads of a level (0 the nest's, 1 the inner
// level's, 2 the innermost's) whose registers the level's threads read
// (a part of a distributed level may not), the deepest first.
func (e *emitter) levelReloads(level int) []Reload {
	var rs []Reload
	for _, r := range e.a.n.Reloads {
		if r.level() == level {
			rs = append(rs, r)
		}
	}
	live := map[gvinst.Reg]bool{}
	lives := [][]LiveIn{e.a.liveIns, e.a.innerLive, e.a.inner2Live}[level]
	for _, l := range lives {
		if !l.Stack {
			live[l.Slot] = true
		}
	}
	rs = slices.DeleteFunc(rs, func(r Reload) bool { return !live[r.Slot] && !(r.HighZero && live[r.Slot+1]) })
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Depth > rs[j].Depth })
	return rs
}

// reloads loads the reloaded registers of a level (0 the nest's; 1 the
// inner level, at inner iteration mid(); 2 the innermost, at innermost
// iteration %xi) as a thread enters it: those of depth 2
// first, so that one whose inner iteration is 1 copies its source before
// the source is loaded again. The first depth iterations of the launch
// (of the row, inner) have no iteration that far back to load from: they
// keep the value passed in (the row's entry value), and iteration 1 of a
// depth-2 register takes its source's.
func (e *emitter) reloads(level int) {
	for n, r := range e.levelReloads(level) {
		e.reset()
		e.cur = r.X86
		site := -1
		for i, s := range e.a.sites {
			if s.X86 == r.X86 && !s.Store {
				site = i
				break
			}
		}
		if site < 0 || r.Depth < 1 || r.Depth > 2 || r.Size > 8 {
			e.fail("register %s reloads the load at %#x, which is not a site of the kernel", r.Slot, r.X86)
			return
		}
		e.comment(fmt.Sprintf(" reload %s: the load at x86 %#x, %d iteration(s) back", r.Slot, r.X86, r.Depth))
		skip := fmt.Sprintf("$Lreload%d_%d", n, level)
		index := [...]string{"%idx", e.mid(), "%xi"}[level]
		p := e.pred()
		e.i("setp.lt.u64", p, index, r.Depth)
		e.i("bra", skip).when(p)
		// The address: Σ Scale·reg + Disp, a scale of 1 added as it is,
		// a power of two shifted, no add of a zero displacement.
		addr := e.t()
		for n, t := range r.Terms {
			x := e.reg(t.Reg)
			if t.Scale != 1 {
				x = e.t()
				if t.Scale > 0 && t.Scale&(t.Scale-1) == 0 {
					e.i("shl.b64", x, e.reg(t.Reg), bits.TrailingZeros64(uint64(t.Scale)))
				} else {
					e.i("mul.lo.u64", x, e.reg(t.Reg), lit(uint64(t.Scale)))
				}
			}
			if n == 0 {
				e.i("mov.b64", addr, x)
			} else {
				e.i("add.u64", addr, addr, x)
			}
		}
		switch {
		case len(r.Terms) == 0:
			e.i("mov.u64", addr, lit(uint64(r.Disp)))
		case r.Disp != 0:
			e.i("add.u64", addr, addr, lit(uint64(r.Disp)))
		}
		e.siteCheck(site, addr, r.Size, r.X86)
		e.load(e.reg(r.Slot), ptx.Addr(addr, 0), r.Size)
		if r.HighZero {
			e.i("mov.b64", e.reg(r.Slot+1), 0)
		}
		if r.Depth == 2 {
			// Iteration 1 has what the source held at iteration 0.
			done := skip + "_done"
			e.i("bra", done)
			e.label(skip)
			p := e.pred()
			e.i("setp.ne.u64", p, index, 1)
			e.i("bra", done).when(p)
			e.i("mov.b64", e.reg(r.Slot), e.reg(r.Source))
			if r.HighZero {
				e.i("mov.b64", e.reg(r.Slot+1), e.reg(r.Source+1))
			}
			e.label(done)
			continue
		}
		e.label(skip)
	}
}
