package ptxgen

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/gxbit/gxbit/gvinst"
)

// emitter writes the PTX of one kernel.
type emitter struct {
	a    *analysis
	k    *Kernel
	sb   strings.Builder
	maxR int // highest frame slot used, plus one
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
	err                                error
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

func (e *emitter) p(format string, args ...any) {
	e.sb.WriteString("\t")
	fmt.Fprintf(&e.sb, format, args...)
	e.sb.WriteString(";\n")
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

func lit(v uint64) string {
	if v <= math.MaxInt64 {
		return fmt.Sprintf("%d", v)
	}
	return fmt.Sprintf("0x%016X", v)
}

func label(addr uint64) string { return fmt.Sprintf("$Lx%x", addr) }

func (e *emitter) fail(format string, args ...any) {
	if e.err == nil {
		e.err = reject(e.cur, format, args...)
	}
}

// emit produces the module text.
func emit(a *analysis, k *Kernel) (string, error) {
	e := &emitter{a: a, k: k, stubs: map[string][2]uint64{}}
	var body strings.Builder
	// Prologue: the thread's iteration index and its live-in values.
	e.reset()
	e.p("mov.u32 %%w0, %%ctaid.x")
	e.p("mov.u32 %%w1, %%ntid.x")
	e.p("mov.u32 %%w2, %%tid.x")
	e.p("mul.wide.u32 %%idx, %%w0, %%w1")
	e.p("cvt.u64.u32 %%t0, %%w2")
	e.p("add.u64 %%idx, %%idx, %%t0")
	if a.inner == nil {
		e.p("ld.param.u64 %%t0, [count]")
		e.p("setp.ge.u64 %%p0, %%idx, %%t0")
		e.p("@%%p0 exit")
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
		e.p("mov.b64 %%xi, %%idx")
		e.p("mov.u64 %%idx, 0")
		e.sb.WriteString("\t// threads past the widest row retire\n")
		e.p("ld.param.u64 %%t0, [itrip0]")
		e.p("setp.ge.u64 %%p0, %%xi, %%t0")
		e.p("ld.param.u64 %%t1, [itripstep]")
		e.p("ld.param.u64 %%t0, [count]")
		e.p("sub.u64 %%t0, %%t0, 1")
		e.p("ld.param.u64 %%ib, [itrip0]")
		e.p("mad.lo.u64 %%ib, %%t1, %%t0, %%ib")
		e.p("setp.ge.and.u64 %%p0, %%xi, %%ib, %%p0")
		e.p("@%%p0 exit")
	}
	if a.inner != nil && !interchanged {
		// 2D: idx above is along x; the outer iteration is along y.
		e.p("mov.b64 %%xi, %%idx")
		e.p("mov.u32 %%w0, %%ctaid.y")
		e.p("mov.u32 %%w1, %%ntid.y")
		e.p("mov.u32 %%w2, %%tid.y")
		e.p("mul.wide.u32 %%idx, %%w0, %%w1")
		e.p("cvt.u64.u32 %%t0, %%w2")
		e.p("add.u64 %%idx, %%idx, %%t0")
		e.p("ld.param.u64 %%t0, [count]")
		e.p("setp.ge.u64 %%p0, %%idx, %%t0")
		e.p("@%%p0 exit")
		e.sb.WriteString("\t// this row's inner trip count; threads past it retire\n")
		e.p("ld.param.u64 %%ib, [itrip0]")
		e.p("ld.param.u64 %%t1, [itripstep]")
		e.p("mad.lo.u64 %%ib, %%t1, %%idx, %%ib")
		e.p("setp.ge.u64 %%p0, %%xi, %%ib")
		e.p("@%%p0 exit")
	}
	e.maxW, e.maxT, e.maxP = 3, 2, 1
	for _, l := range a.liveIns {
		nm := paramName(l)
		var dst string
		if l.Stack {
			dst = fmt.Sprintf("%%k%d", a.privIdx[privKeyOf(l.Base, l.Disp)])
		} else {
			dst = e.reg(l.Slot)
		}
		e.sb.WriteString(fmt.Sprintf("\t// live-in %s\n", l))
		e.p("ld.param.u64 %s, [in_%s]", dst, nm)
		e.p("ld.param.u64 %%t1, [step_%s]", nm)
		e.p("mad.lo.u64 %s, %%t1, %%idx, %s", dst, dst)
	}
	for i := range a.sites {
		e.p("ld.param.u64 %%sd%d, [site%d_delta]", i, i)
		// The host passes the span an access of this site may start in
		// (hi-lo-size), so one unsigned compare checks both ends.
		e.p("ld.param.u64 %%sl%d, [site%d_lo]", i, i)
		e.p("ld.param.u64 %%sh%d, [site%d_span]", i, i)
	}
	if even {
		// Even rows, or the kernel does not apply.
		e.p("ld.param.u64 %%t0, [itripstep]")
		e.p("setp.ne.u64 %%p0, %%t0, 0")
		for _, l := range a.innerLive {
			if l.Written {
				e.p("ld.param.u64 %%t0, [istepd_%s]", paramName(l))
				e.p("setp.ne.or.u64 %%p0, %%t0, 0, %%p0")
			}
		}
		e.p("@%%p0 bra $Lerr%d", ErrCodeExit)
		e.p("ld.param.u64 %%cnt, [count]")
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
			e.p("ld.param.u64 %%t1, [istep_%s]", paramName(l))
			e.p("ld.param.u64 %%t0, [istepd_%s]", paramName(l))
			e.p("mad.lo.u64 %%t1, %%t0, %%idx, %%t1")
			e.p("mul.lo.u64 %%io%d, %%t1, %%xi", i)
		}
		e.p("sub.u64 %%t0, %%ib, 1")
		e.p("setp.eq.u64 %%plast, %%xi, %%t0")
	}
	e.reloads(false)
	e.p("bra %s", label(a.n.start()))
	if interchanged && !even {
		// Entering the inner loop: this row's trip count; a thread past
		// it skips the row's inner loop, else moves to its iteration.
		// (With a thread loop, the level's row is the thread's: its trip
		// count, computed in the prologue, holds for every entry.)
		fmt.Fprintf(&e.sb, "$Linner_entry:\n")
		{
			e.p("ld.param.u64 %%ib, [itrip0]")
			e.p("ld.param.u64 %%t1, [itripstep]")
			e.p("mad.lo.u64 %%ib, %%t1, %%idx, %%ib")
			e.p("setp.ge.u64 %%p0, %%xi, %%ib")
			e.p("@%%p0 bra %s", label(a.innerExit))
		}
		for _, l := range a.innerLive {
			dst := ""
			if l.Stack {
				dst = fmt.Sprintf("%%k%d", a.privIdx[privKeyOf(l.Base, l.Disp)])
			} else {
				dst = e.reg(l.Slot)
			}
			e.p("ld.param.u64 %%t1, [istep_%s]", paramName(l))
			e.p("ld.param.u64 %%t0, [istepd_%s]", paramName(l))
			e.p("mad.lo.u64 %%t1, %%t0, %%idx, %%t1")
			e.p("mad.lo.u64 %s, %%t1, %%xi, %s", dst, dst)
		}
		e.reloads(true)
		e.p("bra %s", label(a.n.Inner))
		// After its one inner iteration the thread leaves the inner loop:
		// by the back edge unless it ran the row's last iteration, by the
		// exit only if it did.
		fmt.Fprintf(&e.sb, "$Linner_back:\n")
		e.p("sub.u64 %%t0, %%ib, 1")
		e.p("setp.eq.u64 %%p0, %%xi, %%t0")
		e.p("@%%p0 bra $Lerr%d", ErrCodeExit)
		e.p("bra %s", label(a.innerExit))
		fmt.Fprintf(&e.sb, "$Linner_exit:\n")
		e.p("sub.u64 %%t0, %%ib, 1")
		e.p("setp.ne.u64 %%p0, %%xi, %%t0")
		e.p("@%%p0 bra $Lerr%d", ErrCodeExit)
		e.p("bra %s", label(a.innerExit))
		// The level's back edge: the next row, until count rows ran.
		fmt.Fprintf(&e.sb, "$Linner_row:\n")
		e.p("add.u64 %%idx, %%idx, 1")
		e.p("ld.param.u64 %%t0, [count]")
		e.p("setp.lt.u64 %%p0, %%idx, %%t0")
		e.p("@%%p0 bra %s", label(a.n.start()))
		e.p("bra $Ldone")
	}

	if a.inner != nil && !interchanged && !threadLoop {
		// Entering the inner loop from the outer body: move this thread to
		// its inner iteration.
		fmt.Fprintf(&e.sb, "$Linner_entry:\n")
		for _, l := range a.innerLive {
			dst := ""
			if l.Stack {
				dst = fmt.Sprintf("%%k%d", a.privIdx[privKeyOf(l.Base, l.Disp)])
			} else {
				dst = e.reg(l.Slot)
			}
			e.p("ld.param.u64 %%t1, [istep_%s]", paramName(l))
			e.p("ld.param.u64 %%t0, [istepd_%s]", paramName(l))
			e.p("mad.lo.u64 %%t1, %%t0, %%idx, %%t1")
			e.p("mad.lo.u64 %s, %%t1, %%xi, %s", dst, dst)
		}
		e.reloads(true)
		e.p("bra %s", label(a.n.Inner))
		// The inner loop's back edge: only the row's last iteration may
		// not take it; its exit: only the last one takes it.
		fmt.Fprintf(&e.sb, "$Linner_back:\n")
		e.p("sub.u64 %%t0, %%ib, 1")
		e.p("setp.eq.u64 %%p0, %%xi, %%t0")
		e.p("@%%p0 bra $Lerr%d", ErrCodeExit)
		e.p("bra $Ldone")
		fmt.Fprintf(&e.sb, "$Linner_exit:\n")
		e.p("sub.u64 %%t0, %%ib, 1")
		e.p("setp.ne.u64 %%p0, %%xi, %%t0")
		e.p("@%%p0 bra $Lerr%d", ErrCodeExit)
		e.p("bra $Ldone")
	}
	for _, addr := range a.order {
		b := a.n.Blocks[addr]
		fmt.Fprintf(&e.sb, "%s:\n", label(addr))
		if fast && addr == a.n.Inner {
			// Only the thread loop enters the inner header (its back
			// edge leaves): move to this thread's inner iteration.
			for i, l := range a.innerLive {
				if l.Written {
					dst := e.reg(l.Slot)
					if l.Stack {
						dst = fmt.Sprintf("%%k%d", a.privIdx[privKeyOf(l.Base, l.Disp)])
					}
					e.p("add.u64 %s, %s, %%io%d", dst, dst, i)
				}
			}
			e.reloads(true)
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
				fmt.Fprintf(&e.sb, "\t// x86 %#x%s\n", in.X86, guestText(b, in.X86))
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
			e.inst(addr, i, in)
		}
	}
	if even && strings.Contains(e.sb.String(), "bra $Linner_row;\n") {
		// The level's back edge where a jump takes it.
		fmt.Fprintf(&e.sb, "$Linner_row:\n")
		e.p("add.u64 %%idx, %%idx, 1")
		e.p("setp.lt.u64 %%p0, %%idx, %%cnt")
		e.p("@%%p0 bra %s", label(a.n.start()))
		e.p("bra $Ldone")
	}
	if fast {
		// The inner loop's back edge and exit where a jump takes them (a
		// branch between the two tests %plast itself, see inst).
		if strings.Contains(e.sb.String(), "bra $Linner_back;\n") {
			fmt.Fprintf(&e.sb, "$Linner_back:\n")
			e.p("@%%plast bra $Lerr%d", ErrCodeExit)
			e.p("bra %s", label(a.innerExit))
		}
		if strings.Contains(e.sb.String(), "bra $Linner_exit;\n") {
			fmt.Fprintf(&e.sb, "$Linner_exit:\n")
			e.p("@!%%plast bra $Lerr%d", ErrCodeExit)
			e.p("bra %s", label(a.innerExit))
		}
	}
	// Error exits: per x86 instruction stubs, then one per code.
	stubs := make([]string, 0, len(e.stubs))
	for l := range e.stubs {
		stubs = append(stubs, l)
	}
	sort.Strings(stubs)
	for _, l := range stubs {
		fmt.Fprintf(&e.sb, "%s:\n", l)
		e.p("mov.b64 %%xa, %s", lit(e.stubs[l][1]))
		e.p("bra $Lerr%d", e.stubs[l][0])
	}
	for _, c := range e.checks {
		fmt.Fprintf(&e.sb, "%s:\n", c.label)
		e.p("mov.b64 %%xa, %s", lit(c.x86))
		e.p("setp.gt.u64 %%p0, %s, %%sh%d", c.off, c.site)
		e.p("@%%p0 bra $Lerr%d", ErrCodeFootprint)
		e.p("bra $Lerr%d", ErrCodeAlign)
	}
	for _, code := range []int{ErrCodeFootprint, ErrCodeExit, ErrCodeDivide, ErrCodeAlign} {
		fmt.Fprintf(&e.sb, "$Lerr%d:\n", code)
		e.p("ld.param.u64 %%t0, [errrec]")
		e.p("mov.u32 %%w0, %d", code)
		e.p("st.global.u32 [%%t0], %%w0")
		e.p("st.global.u64 [%%t0+8], %%xa")
		e.p("exit")
	}
	fmt.Fprintf(&e.sb, "$Ldone:\n")
	e.p("ret")
	if e.err != nil {
		return "", e.err
	}

	fmt.Fprintf(&body, "//\n// gxbit kernel %s: the loop at %#x, %s.\n//\n", k.Name, a.n.Header, shapeOf(a.n))
	body.WriteString(".version 8.0\n.target sm_90\n.address_size 64\n\n")
	fmt.Fprintf(&body, ".visible .entry %s(\n", k.Name)
	for i, p := range k.Params {
		sep := ","
		if i == len(k.Params)-1 {
			sep = ""
		}
		fmt.Fprintf(&body, "\t.param .u64 %s%s\n", p.Name, sep)
	}
	body.WriteString(")\n{\n")
	decl := func(t, prefix string, n int) {
		if n > 0 {
			fmt.Fprintf(&body, "\t.reg .%s %%%s<%d>;\n", t, prefix, n)
		}
	}
	decl("pred", "p", e.maxP)
	body.WriteString("\t.reg .pred %pbr;\n")
	decl("b64", "r", e.maxR)
	decl("b64", "t", e.maxT)
	decl("b32", "w", e.maxW)
	decl("b16", "h", e.maxH)
	decl("f32", "f", e.maxF)
	decl("f64", "d", e.maxD)
	decl("b64", "k", len(a.privIdx))
	decl("b64", "sd", len(a.sites))
	decl("b64", "sl", len(a.sites))
	decl("b64", "sh", len(a.sites))
	body.WriteString("\t.reg .b64 %idx;\n\t.reg .b64 %xa;\n")
	if a.inner != nil {
		body.WriteString("\t.reg .b64 %xi;\n\t.reg .b64 %ib;\n")
	}
	if even {
		body.WriteString("\t.reg .b64 %cnt;\n")
	}
	if fast {
		decl("b64", "io", len(a.innerLive))
		body.WriteString("\t.reg .pred %plast;\n\t.reg .pred %ptrip;\n\t.reg .pred %ptripx;\n")
	}
	text, decls := optimizeBody(e.sb.String())
	body.WriteString(decls)
	body.WriteString("\n")
	body.WriteString(text)
	body.WriteString("}\n")
	return body.String(), nil
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
					e.p("mov.b64 %s, %s", t, lit(uint64(in.Imm)))
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
		e.p("shl.b64 %s, %s, %d", x, r, 64-n)
		e.p("shr.s64 %s, %s, %d", x, x, 64-n)
	} else {
		e.p("and.b64 %s, %s, %s", x, r, lit(t.Mask()))
	}
	return x
}

// mask truncates d to t's width in place.
func (e *emitter) mask(d string, t gvinst.Type) {
	if t.Size() < 8 {
		e.p("and.b64 %s, %s, %s", d, d, lit(t.Mask()))
	}
}

// fin loads a float operand into an .f32/.f64 register.
func (e *emitter) fin(r string, t gvinst.Type) string {
	if t == gvinst.F32 {
		w, f := e.w(), e.fs()
		e.p("cvt.u32.u64 %s, %s", w, r)
		e.p("mov.b32 %s, %s", f, w)
		return f
	}
	d := e.fd()
	e.p("mov.b64 %s, %s", d, r)
	return d
}

// fout stores a float result into frame register d, zero-extended.
func (e *emitter) fout(d, f string, t gvinst.Type) {
	if t == gvinst.F32 {
		w := e.w()
		e.p("mov.b32 %s, %s", w, f)
		e.p("cvt.u64.u32 %s, %s", d, w)
		return
	}
	e.p("mov.b64 %s, %s", d, f)
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
func flit(t gvinst.Type, v float64) string {
	if t == gvinst.F32 {
		return fmt.Sprintf("0f%08X", math.Float32bits(float32(v)))
	}
	return fmt.Sprintf("0d%016X", math.Float64bits(v))
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

// innerLeaves reports whether a branch of the block being lowered goes
// to the inner loop's back edge one way and leaves it the other.
func (e *emitter) innerLeaves(to [2]uint64) bool {
	t0, t1 := e.target(to[0]), e.target(to[1])
	return t0 == "$Linner_back" && t1 == "$Linner_exit" || t0 == "$Linner_exit" && t1 == "$Linner_back"
}

// target returns the label control goes to for a successor address.
func (e *emitter) target(to uint64) string {
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
		return "$Ldone"
	}
	if _, ok := e.a.n.Blocks[to]; ok {
		return label(to)
	}
	return fmt.Sprintf("$Lerr%d", ErrCodeExit)
}

// inst lowers one instruction.
func (e *emitter) inst(block uint64, idx int, in *gvinst.Inst) {
	t := in.Type
	switch in.Op {
	case gvinst.OpFlags:
		// The lazy flags nobody in the loop reads: nothing to compute.
	case gvinst.OpGet, gvinst.OpPut, gvinst.OpMov:
		a := e.src(in, 0)
		d := e.reg(in.Dst)
		switch {
		case t.IsWide():
			e.p("mov.b64 %s, %s", d, a)
			e.p("mov.b64 %s, %s", e.reg(in.Dst+1), e.reg(in.Src[0]+1))
		case t.Size() == 8 || in.Op == gvinst.OpMov:
			e.p("mov.b64 %s, %s", d, a)
		default:
			e.p("and.b64 %s, %s, %s", d, a, lit(t.Mask()))
		}
	case gvinst.OpLi:
		d := e.reg(in.Dst)
		if t.IsWide() {
			e.p("mov.b64 %s, %s", d, lit(uint64(in.Imm)))
			e.p("mov.b64 %s, 0", e.reg(in.Dst+1))
		} else {
			e.p("mov.b64 %s, %s", d, lit(uint64(in.Imm)&t.Mask()))
		}
	case gvinst.OpJoin:
		lo, hi := e.reg(in.Src[0]), e.reg(in.Src[1])
		if in.Dst == in.Src[1] {
			x := e.t()
			e.p("mov.b64 %s, %s", x, hi)
			hi = x
		}
		e.p("mov.b64 %s, %s", e.reg(in.Dst), lo)
		e.p("mov.b64 %s, %s", e.reg(in.Dst+1), hi)
	case gvinst.OpLd, gvinst.OpSt:
		e.mem(block, idx, in)
	case gvinst.OpChkAlign:
		e.chkAlign(block, idx, in)
	case gvinst.OpRepStos:
		e.repStos(block, idx, in)
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
			e.p("%s.u64 %s, %s, %s", name, d, e.reg(in.Src[0]), lit(imm))
			e.mask(d, t)
			return
		}
		a, b := e.src(in, 0), e.src(in, 1)
		if t.IsFloat() {
			fa, fb := e.fin(a, t), e.fin(b, t)
			r := e.freg(t)
			e.p("%s.rn.%s %s, %s, %s", name, ftype(t), r, fa, fb)
			e.fout(d, r, t)
			return
		}
		if in.Op == gvinst.OpMul {
			e.p("mul.lo.u64 %s, %s, %s", d, a, b)
		} else {
			e.p("%s.u64 %s, %s, %s", name, d, a, b)
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
			e.p("mul.hi.%s %s, %s, %s", s, d, a, b)
			return
		}
		x, y := e.ext(a, t, t.IsSigned()), e.ext(b, t, t.IsSigned())
		e.p("mul.lo.u64 %s, %s, %s", d, x, y)
		if t.IsSigned() {
			e.p("shr.s64 %s, %s, %d", d, d, t.Bits())
		} else {
			e.p("shr.u64 %s, %s, %d", d, d, t.Bits())
		}
		e.mask(d, t)
	case gvinst.OpDiv, gvinst.OpRem:
		a, b := e.src(in, 0), e.src(in, 1)
		d := e.reg(in.Dst)
		if t.IsFloat() {
			fa, fb := e.fin(a, t), e.fin(b, t)
			r := e.freg(t)
			e.p("div.rn.%s %s, %s, %s", ftype(t), r, fa, fb)
			e.fout(d, r, t)
			return
		}
		s := t.IsSigned()
		x, y := e.ext(a, t, s), e.ext(b, t, s)
		p := e.pred()
		e.p("mov.b64 %%xa, %s", lit(in.X86))
		e.p("setp.eq.u64 %s, %s, 0", p, y)
		e.p("@%s bra $Lerr%d", p, ErrCodeDivide)
		ty := "u64"
		if s {
			ty = "s64"
			// INT_MIN / -1 overflows on x86.
			q := e.pred()
			e.p("setp.eq.s64 %s, %s, -1", q, y)
			e.p("setp.eq.s64 %s, %s, %s", p, x, lit(uint64(sext(1<<(t.Bits()-1), t.Bits()))))
			e.p("and.pred %s, %s, %s", p, p, q)
			e.p("@%s bra $Lerr%d", p, ErrCodeDivide)
		}
		op := "div"
		if in.Op == gvinst.OpRem {
			op = "rem"
		}
		e.p("%s.%s %s, %s, %s", op, ty, d, x, y)
		e.mask(d, t)
	case gvinst.OpDivW, gvinst.OpRemW:
		e.divw(in)
	case gvinst.OpAnd, gvinst.OpOr, gvinst.OpXor:
		a, b := e.src(in, 0), e.src(in, 1)
		d := e.reg(in.Dst)
		name := map[gvinst.Op]string{gvinst.OpAnd: "and", gvinst.OpOr: "or", gvinst.OpXor: "xor"}[in.Op]
		e.p("%s.b64 %s, %s, %s", name, d, a, b)
		e.mask(d, t)
	case gvinst.OpShl, gvinst.OpShr, gvinst.OpSar:
		a := e.src(in, 0)
		d := e.reg(in.Dst)
		var w string
		if in.HasImm {
			// A constant count, masked and clamped here.
			w = fmt.Sprint(min(uint64(in.Imm)&t.Mask(), 64))
		} else {
			c := e.t()
			e.p("and.b64 %s, %s, %s", c, e.src(in, 1), lit(t.Mask()))
			e.p("min.u64 %s, %s, 64", c, c)
			w = e.w()
			e.p("cvt.u32.u64 %s, %s", w, c)
		}
		switch in.Op {
		case gvinst.OpShl:
			e.p("shl.b64 %s, %s, %s", d, a, w)
		case gvinst.OpShr:
			x := e.ext(a, t, false)
			e.p("shr.u64 %s, %s, %s", d, x, w)
		default:
			x := e.ext(a, t, true)
			e.p("shr.s64 %s, %s, %s", d, x, w)
		}
		e.mask(d, t)
	case gvinst.OpRol, gvinst.OpRor:
		a, b := e.src(in, 0), e.src(in, 1)
		d := e.reg(in.Dst)
		n := t.Bits()
		k := e.t()
		e.p("and.b64 %s, %s, %d", k, b, n-1)
		if in.Op == gvinst.OpRor {
			e.p("sub.u64 %s, %d, %s", k, n, k)
			e.p("and.b64 %s, %s, %d", k, k, n-1)
		}
		az := e.ext(a, t, false)
		kk := e.t()
		e.p("sub.u64 %s, %d, %s", kk, n, k)
		w1, w2 := e.w(), e.w()
		e.p("cvt.u32.u64 %s, %s", w1, k)
		e.p("cvt.u32.u64 %s, %s", w2, kk)
		x, y := e.t(), e.t()
		e.p("shl.b64 %s, %s, %s", x, az, w1)
		e.p("shr.u64 %s, %s, %s", y, az, w2)
		e.p("or.b64 %s, %s, %s", d, x, y)
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
			e.p("setp.%s.%s %s, %s, %s", c, ftype(t), p, fa, fb)
			e.p("selp.b64 %s, %s, %s, %s", d, a, b, p)
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
		e.p("%s.%s %s, %s, %s", name, ty, d, x, y)
		e.mask(d, t)
	case gvinst.OpNot:
		a := e.src(in, 0)
		d := e.reg(in.Dst)
		e.p("not.b64 %s, %s", d, a)
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
				e.p("xor.b64 %s, %s, %s", d, a, lit(sign))
			} else {
				e.p("and.b64 %s, %s, %s", d, a, lit(^sign))
			}
			e.mask(d, t)
			return
		}
		if in.Op == gvinst.OpNeg {
			e.p("neg.s64 %s, %s", d, a)
		} else {
			x := e.ext(a, t, true)
			e.p("abs.s64 %s, %s", d, x)
		}
		e.mask(d, t)
	case gvinst.OpSqrt:
		a := e.src(in, 0)
		fa := e.fin(a, t)
		r := e.freg(t)
		e.p("sqrt.rn.%s %s, %s", ftype(t), r, fa)
		e.fout(e.reg(in.Dst), r, t)
	case gvinst.OpClz, gvinst.OpCtz, gvinst.OpPopc:
		a := e.src(in, 0)
		az := e.ext(a, t, false)
		w := e.w()
		switch in.Op {
		case gvinst.OpClz:
			e.p("clz.b64 %s, %s", w, az)
			e.p("sub.u32 %s, %s, %d", w, w, 64-t.Bits())
		case gvinst.OpCtz:
			x := e.t()
			e.p("brev.b64 %s, %s", x, az)
			e.p("clz.b64 %s, %s", w, x)
			e.p("min.u32 %s, %s, %d", w, w, t.Bits())
		default:
			e.p("popc.b64 %s, %s", w, az)
		}
		e.p("cvt.u64.u32 %s, %s", e.reg(in.Dst), w)
	case gvinst.OpBswap:
		a := e.src(in, 0)
		d := e.reg(in.Dst)
		switch t.Size() {
		case 1:
			e.p("and.b64 %s, %s, 255", d, a)
		case 4:
			w, w2 := e.w(), e.w()
			e.p("cvt.u32.u64 %s, %s", w, a)
			e.p("prmt.b32 %s, %s, 0, 0x0123", w2, w)
			e.p("cvt.u64.u32 %s, %s", d, w2)
		default:
			lo, hi, lo2, hi2 := e.w(), e.w(), e.w(), e.w()
			e.p("mov.b64 {%s, %s}, %s", lo, hi, a)
			e.p("prmt.b32 %s, %s, 0, 0x0123", lo2, lo)
			e.p("prmt.b32 %s, %s, 0, 0x0123", hi2, hi)
			e.p("mov.b64 %s, {%s, %s}", d, hi2, lo2)
		}
	case gvinst.OpCvt:
		e.cvt(in)
	case gvinst.OpRound:
		a := e.src(in, 0)
		fa := e.fin(a, t)
		r := e.freg(t)
		e.p("cvt.%si.%s.%s %s, %s", roundName(gvinst.Rounding(in.Mod)), ftype(t), ftype(t), r, fa)
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
			e.p("setp.%s.%s %s, %s, %s", c, ftype(t), p, fa, fb)
		} else {
			s := t.IsSigned()
			x, y := e.ext(a, t, s), e.ext(b, t, s)
			ty := "u64"
			if s {
				ty = "s64"
			}
			e.p("setp.%s.%s %s, %s, %s", intCmpName(c), ty, p, x, y)
		}
		if e.fuse {
			return // only the BRANCH that follows reads the result
		}
		e.p("selp.u64 %s, 1, 0, %s", e.reg(in.Dst), p)
	case gvinst.OpSelect:
		c := e.reg(in.Src[0])
		p := e.pred()
		e.p("setp.ne.u64 %s, %s, 0", p, c)
		e.p("selp.b64 %s, %s, %s, %s", e.reg(in.Dst), e.reg(in.Src[1]), e.reg(in.Src[2]), p)
		if t.IsWide() {
			e.p("selp.b64 %s, %s, %s, %s", e.reg(in.Dst+1), e.reg(in.Src[1]+1), e.reg(in.Src[2]+1), p)
		}
	case gvinst.OpJmp:
		e.p("mov.b64 %%xa, %s", lit(in.X86))
		e.p("bra %s", e.target(in.Target[0]))
	case gvinst.OpBranch:
		p := e.fusePred
		if !e.fused {
			p = e.pred()
			e.p("setp.ne.u64 %s, %s, 0", p, e.reg(in.Src[0]))
		}
		t0, t1 := e.target(in.Target[0]), e.target(in.Target[1])
		if (e.a.n.ThreadLoop != 0 || e.a.n.Even) && e.innerLeaves(in.Target) {
			// The thread's one inner iteration ends: it must take the
			// back edge unless it is the row's last, the exit if it is.
			// With q = the branch's predicate xor %plast, that is q when
			// the back edge is the branch's target, else not q.
			q := "%ptripx"
			e.p("xor.pred %s, %s, %%plast", q, p)
			stub := fmt.Sprintf("$Lcktrip%x", in.X86)
			e.stubs[stub] = [2]uint64{ErrCodeExit, in.X86}
			if t0 == "$Linner_back" {
				e.p("@!%s bra %s", q, stub)
			} else {
				e.p("@%s bra %s", q, stub)
			}
			e.p("bra %s", label(e.a.innerExit))
			return
		}
		if e.a.n.Even && (t0 == "$Linner_row") != (t1 == "$Linner_row") {
			// The level's back edge in an even kernel: a row the GPU runs
			// is never the level's last (the CPU runs the last two), then
			// the next row, as a counted loop (hoist.go).
			stub := fmt.Sprintf("$Lckrow%x", in.X86)
			e.stubs[stub] = [2]uint64{ErrCodeExit, in.X86}
			if t0 == "$Linner_row" {
				e.p("@!%s bra %s", p, stub)
			} else {
				e.p("@%s bra %s", p, stub)
			}
			e.p("add.u64 %%idx, %%idx, 1")
			e.p("setp.ne.u64 %%pbr, %%idx, %%cnt")
			e.p("@%%pbr bra %s", label(e.a.n.start()))
			fmt.Fprintf(&e.sb, "$Lrows%x:\n", in.X86)
			e.p("bra $Ldone")
			return
		}
		if strings.HasPrefix(t0, "$Lerr") || strings.HasPrefix(t0, "$Linner_") || strings.HasPrefix(t1, "$Lerr") || strings.HasPrefix(t1, "$Linner_") {
			e.p("mov.b64 %%xa, %s", lit(in.X86))
		}
		e.p("@%s bra %s", p, t0)
		e.p("bra %s", t1)
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
		e.p("mov.b64 %s, %s", d, x)
		e.mask(d, t)
	case t.IsInt():
		fa := e.fin(a, s)
		ri := e.freg(s)
		e.p("cvt.%si.%s.%s %s, %s", roundName(r), ftype(s), ftype(s), ri, fa)
		n := t.Bits()
		var lo, hi float64
		if t.IsSigned() {
			lo, hi = -math.Ldexp(1, n-1), math.Ldexp(1, n-1)
		} else {
			lo, hi = 0, math.Ldexp(1, n)
		}
		p, q := e.pred(), e.pred()
		e.p("setp.ge.%s %s, %s, %s", ftype(s), p, ri, flit(s, lo))
		e.p("setp.lt.%s %s, %s, %s", ftype(s), q, ri, flit(s, hi))
		e.p("and.pred %s, %s, %s", p, p, q)
		x := e.t()
		if t.IsSigned() || n < 64 {
			e.p("cvt.rzi.s64.%s %s, %s", ftype(s), x, ri)
		} else {
			e.p("cvt.rzi.u64.%s %s, %s", ftype(s), x, ri)
		}
		e.p("selp.b64 %s, %s, %s, %s", d, x, lit(uint64(1)<<(n-1)), p)
		e.mask(d, t)
	case s.IsInt():
		x := e.ext(a, s, s.IsSigned())
		ty := "u64"
		if s.IsSigned() {
			ty = "s64"
		}
		f := e.freg(t)
		e.p("cvt.%s.%s.%s %s, %s", roundName(r), ftype(t), ty, f, x)
		e.fout(d, f, t)
	case t == s:
		e.p("mov.b64 %s, %s", d, a)
		e.mask(d, t)
	case t == gvinst.F64:
		fa := e.fin(a, s)
		f := e.fd()
		e.p("cvt.f64.f32 %s, %s", f, fa)
		e.fout(d, f, t)
	default:
		fa := e.fin(a, s)
		f := e.fs()
		e.p("cvt.%s.f32.f64 %s, %s", roundName(r), f, fa)
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
					e.p("mov.b64 %s, %s", d, k)
				} else {
					e.p("and.b64 %s, %s, %s", d, k, lit(sizeMask(size)))
				}
				continue
			}
			v := e.reg(in.Src[1] + gvinst.Reg(h))
			if size == 8 {
				e.p("mov.b64 %s, %s", k, v)
				continue
			}
			x := e.t()
			e.p("and.b64 %s, %s, %s", x, v, lit(sizeMask(size)))
			e.p("and.b64 %s, %s, %s", k, k, lit(^sizeMask(size)))
			e.p("or.b64 %s, %s, %s", k, k, x)
		}
		return
	}
	id := e.a.siteAt[key(block, idx)]
	addr := e.t()
	guest := e.reg(in.Src[0])
	if in.Imm != 0 {
		e.p("add.u64 %s, %s, %s", addr, guest, lit(uint64(in.Imm)))
		guest = addr
	}
	e.siteCheckTo(id, addr, guest, max(naturalAlign(size), e.a.align[key(block, idx)]), in.X86)
	parts := 1
	if size == 16 {
		parts, size = 2, 8
	}
	for h := 0; h < parts; h++ {
		at := fmt.Sprintf("[%s+%d]", addr, 8*h)
		if h == 0 {
			at = fmt.Sprintf("[%s]", addr)
		}
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
	e.p("add.u64 %s, %s, %s", x, e.reg(in.Src[0]), lit(uint64(in.Imm)))
	if n := in.Type.Size(); n&(n-1) == 0 {
		e.p("and.b64 %s, %s, %d", x, x, n-1)
	} else {
		e.p("rem.u64 %s, %s, %d", x, x, n)
	}
	p := e.pred()
	e.p("setp.ne.u64 %s, %s, 0", p, x)
	l := fmt.Sprintf("$Lal%x", in.X86)
	e.p("@%s bra %s", p, l)
	e.stubs[l] = [2]uint64{ErrCodeAlign, in.X86}
}

// repStos lowers rep stos as a loop storing rax's low bytes to rcx
// elements at rdi, upward (the runtime checks the direction flag).
func (e *emitter) repStos(block uint64, idx int, in *gvinst.Inst) {
	id := e.a.siteAt[key(block, idx)]
	size := in.Type.Size()
	n := fmt.Sprintf("%d_%d", idx, block)
	rcx, rdi, rax := e.reg(gvinst.SReg(1)), e.reg(gvinst.SReg(7)), e.reg(gvinst.S0)
	p := e.pred()
	fmt.Fprintf(&e.sb, "$Lrep%s:\n", n)
	e.p("setp.eq.u64 %s, %s, 0", p, rcx)
	e.p("@%s bra $Lrep%s_end", p, n)
	addr := e.t()
	e.p("mov.b64 %s, %s", addr, rdi)
	e.siteCheck(id, addr, size, in.X86)
	e.store(fmt.Sprintf("[%s]", addr), rax, size)
	e.p("add.u64 %s, %s, %d", rdi, rdi, size)
	e.p("sub.u64 %s, %s, 1", rcx, rcx)
	e.p("bra $Lrep%s", n)
	fmt.Fprintf(&e.sb, "$Lrep%s_end:\n", n)
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
	// %sl is the site's lowest address and %sh the span it may start an
	// access in (see the prologue): one unsigned compare checks both ends,
	// and the alignment test joins the same predicate, so an access costs
	// one branch; the error stub tells the two failures apart.
	p := e.pred()
	off := e.t()
	e.p("sub.u64 %s, %s, %%sl%d", off, guest, id)
	e.p("setp.gt.u64 %s, %s, %%sh%d", p, off, id)
	if al == 1 {
		e.p("@%s bra $Lfp%x", p, x86)
		e.stubs[fmt.Sprintf("$Lfp%x", x86)] = [2]uint64{ErrCodeFootprint, x86}
	} else {
		x := e.t()
		e.p("and.b64 %s, %s, %d", x, guest, al-1)
		e.p("setp.ne.or.u64 %s, %s, 0, %s", p, x, p)
		l := fmt.Sprintf("$Lck%x_%d", x86, len(e.checks))
		e.p("@%s bra %s", p, l)
		e.checks = append(e.checks, check{label: l, x86: x86, off: off, site: id})
	}
	e.p("add.u64 %s, %s, %%sd%d", addr, guest, id)
}

// load loads size bytes at device address at into register d,
// zero-extended.
func (e *emitter) load(d, at string, size int) {
	switch size {
	case 1, 2:
		x := e.h()
		e.p("ld.global.u%d %s, %s", size*8, x, at)
		e.p("cvt.u64.u16 %s, %s", d, x)
	case 4:
		x := e.w()
		e.p("ld.global.u32 %s, %s", x, at)
		e.p("cvt.u64.u32 %s, %s", d, x)
	default:
		e.p("ld.global.u64 %s, %s", d, at)
	}
}

// store stores the low size bytes of register v at device address at.
func (e *emitter) store(at, v string, size int) {
	switch size {
	case 1, 2:
		x := e.h()
		e.p("cvt.u16.u64 %s, %s", x, v)
		e.p("st.global.u%d %s, %s", size*8, at, x)
	case 4:
		x := e.w()
		e.p("cvt.u32.u64 %s, %s", x, v)
		e.p("st.global.u32 %s, %s", at, x)
	default:
		e.p("st.global.u64 %s, %s", at, v)
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
	e.p("mov.b64 %%xa, %s", lit(in.X86))
	y := e.ext(b, t, s)
	e.p("setp.eq.u64 %s, %s, 0", p, y)
	e.p("@%s bra $Lerr%d", p, ErrCodeDivide)
	x := e.t()
	if n < 64 {
		l := e.ext(lo, t, false)
		e.p("shl.b64 %s, %s, %d", x, hi, n)
		e.p("or.b64 %s, %s, %s", x, x, l)
		if s && n < 32 {
			e.p("shl.b64 %s, %s, %d", x, x, 64-2*n)
			e.p("shr.s64 %s, %s, %d", x, x, 64-2*n)
		} else if !s && n < 32 {
			e.p("and.b64 %s, %s, %s", x, x, lit(uint64(1)<<(2*n)-1))
		}
	} else {
		// hi must extend lo.
		ext := e.t()
		if s {
			e.p("shr.s64 %s, %s, 63", ext, lo)
		} else {
			e.p("mov.b64 %s, 0", ext)
		}
		e.p("setp.ne.u64 %s, %s, %s", p, hi, ext)
		e.p("@%s bra $Lerr%d", p, ErrCodeDivide)
		e.p("mov.b64 %s, %s", x, lo)
	}
	ty := "u64"
	if s {
		ty = "s64"
		e.p("setp.eq.s64 %s, %s, -1", q, y)
		e.p("setp.eq.s64 %s, %s, %s", p, x, lit(1<<63))
		e.p("and.pred %s, %s, %s", p, p, q)
		e.p("@%s bra $Lerr%d", p, ErrCodeDivide)
	}
	quo := e.t()
	e.p("div.%s %s, %s, %s", ty, quo, x, y)
	if n < 64 {
		// The quotient must fit t.
		if s {
			e.p("setp.lt.s64 %s, %s, %d", p, quo, -(int64(1) << (n - 1)))
			e.p("setp.ge.s64 %s, %s, %d", q, quo, int64(1)<<(n-1))
		} else {
			e.p("setp.ge.u64 %s, %s, %s", p, quo, lit(uint64(1)<<n))
			e.p("setp.ge.u64 %s, %s, %s", q, quo, lit(uint64(1)<<n))
		}
		e.p("or.pred %s, %s, %s", p, p, q)
		e.p("@%s bra $Lerr%d", p, ErrCodeDivide)
	}
	if in.Op == gvinst.OpDivW {
		e.p("mov.b64 %s, %s", d, quo)
	} else {
		e.p("rem.%s %s, %s, %s", ty, d, x, y)
	}
	e.mask(d, t)
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
		if in.Op == gvinst.OpRepStos {
			writes[gvinst.SReg(1)] = append(writes[gvinst.SReg(1)], i)
			writes[gvinst.SReg(7)] = append(writes[gvinst.SReg(7)], i)
			reads[gvinst.S0] = append(reads[gvinst.S0], i)
			reads[gvinst.SReg(1)] = append(reads[gvinst.SReg(1)], i)
			reads[gvinst.SReg(7)] = append(reads[gvinst.SReg(7)], i)
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

// reloads loads the reloaded registers of the level (inner: the inner
// level, at inner iteration %xi) as a thread enters it: those of depth 2
// first, so that one whose inner iteration is 1 copies its source before
// the source is loaded again.
func (e *emitter) reloads(inner bool) {
	var rs []Reload
	for _, r := range e.a.n.Reloads {
		if r.Inner == inner {
			rs = append(rs, r)
		}
	}
	// Only registers the level's threads read (a part of a distributed
	// level may not).
	live := map[gvinst.Reg]bool{}
	lives := e.a.liveIns
	if inner {
		lives = e.a.innerLive
	}
	for _, l := range lives {
		if !l.Stack {
			live[l.Slot] = true
		}
	}
	rs = slices.DeleteFunc(rs, func(r Reload) bool { return !live[r.Slot] && !(r.HighZero && live[r.Slot+1]) })
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Depth > rs[j].Depth })
	for n, r := range rs {
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
		fmt.Fprintf(&e.sb, "\t// reload %s: the load at x86 %#x, %d iteration(s) back\n", r.Slot, r.X86, r.Depth)
		skip := fmt.Sprintf("$Lreload%d_%t", n, inner)
		if inner {
			p := e.pred()
			e.p("setp.lt.u64 %s, %%xi, %d", p, r.Depth)
			e.p("@%s bra %s", p, skip)
		}
		addr := e.t()
		e.p("mov.u64 %s, %s", addr, lit(uint64(r.Disp)))
		for _, t := range r.Terms {
			x := e.t()
			e.p("mul.lo.u64 %s, %s, %s", x, e.reg(t.Reg), lit(uint64(t.Scale)))
			e.p("add.u64 %s, %s, %s", addr, addr, x)
		}
		e.siteCheck(site, addr, r.Size, r.X86)
		e.load(e.reg(r.Slot), fmt.Sprintf("[%s]", addr), r.Size)
		if r.HighZero {
			e.p("mov.b64 %s, 0", e.reg(r.Slot+1))
		}
		if !inner {
			continue
		}
		if r.Depth == 2 {
			// Inner iteration 1 has what the source held at iteration 0.
			done := skip + "_done"
			e.p("bra %s", done)
			fmt.Fprintf(&e.sb, "%s:\n", skip)
			p := e.pred()
			e.p("setp.ne.u64 %s, %%xi, 1", p)
			e.p("@%s bra %s", p, done)
			e.p("mov.b64 %s, %s", e.reg(r.Slot), e.reg(r.Source))
			if r.HighZero {
				e.p("mov.b64 %s, %s", e.reg(r.Slot+1), e.reg(r.Source+1))
			}
			fmt.Fprintf(&e.sb, "%s:\n", done)
			continue
		}
		fmt.Fprintf(&e.sb, "%s:\n", skip)
	}
}
