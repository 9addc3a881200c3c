package ptxgen

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/gxbit/gxbit/ptx"
)

// Hoisting the footprint checks out of counted loops (RATIONALE).
//
// A sequential loop that stays in the kernel (matmul's k loop) checks
// every access against its site's footprint. When the loop is one block
// whose exit compare is an induction variable with a power-of-two step
// against a loop-invariant bound, and an access's address is an induction
// variable (any invariant step) or an invariant, the kernel can compute
// at the loop's entry how many iterations run and the first and last
// address of the access, and check those once: a monotone sequence whose
// ends lie in the footprint, aligned at its start and by its step, and
// whose whole extent is no more than the footprint's span, stays inside
// it (the proof is in hoistLoop). A failed entry check reports a
// footprint error, so the runtime runs the instance on the CPU, as a
// failed access check would.

// The registers the hoisted checks use.
const (
	hoistRegs = 16 // %hq0..%hq3 for the checks, %hq4..%hq15 for addresses computed in the loop
)

// iv is an induction variable of a one-block loop: defined once, by
// "add.u64 R, R, step" with an invariant step.
type iv struct {
	line int         // the add's line
	step ptx.Operand // an immediate or an invariant register
}

// emitFn appends instruction op on args to the code being built.
type emitFn func(op string, args ...ptx.Operand)

// hoistChecks rewrites the one-block counted loops of ls (and unrolls
// them, unroll.go), v being the liveness of ls; it returns the new lines
// and theirs.
func hoistChecks(ls []*pline, v *live) ([]*pline, *live) {
	for {
		out, ov, ok := hoistOne(ls, v)
		if !ok {
			return ls, v
		}
		ls, v = out, ov
	}
}

// hoistOne hoists the checks of the first loop it can and returns the new
// lines and their liveness (v is that of ls); false, with ls unchanged,
// when there is none.
func hoistOne(ls []*pline, v *live) ([]*pline, *live, bool) {
	// An unchecked kernel (Kernel.Unchecked) has no footprint spans.
	unchecked := true
	for _, l := range ls {
		if l.isInst() && slices.ContainsFunc(l.uses(), func(r string) bool { return strings.HasPrefix(r, "%sh") }) {
			unchecked = false
			break
		}
	}
	for b, lab := range ls {
		if lab.label == "" || !strings.HasPrefix(lab.label, "$Lx") || strings.HasSuffix(lab.label, "_loop") {
			continue
		}
		x86, err := strconv.ParseUint(strings.TrimPrefix(lab.label, "$Lx"), 16, 64)
		if err != nil {
			continue
		}
		// The block: b+1 up to the next label.
		end := b + 1
		for end < len(ls) && ls[end].label == "" {
			end++
		}
		var body []int
		for k := b + 1; k < end; k++ {
			if ls[k].isInst() {
				body = append(body, k)
			}
		}
		if len(body) < 2 {
			continue
		}
		// It ends "setp.ne.u64 %pbr, E, INV; @%pbr bra L" and falls
		// through to the next label.
		br, cmp := ls[body[len(body)-1]], ls[body[len(body)-2]]
		if br.guard() != "@%pbr" || br.op != "bra" || br.arg(0) != lab.label ||
			cmp.op != "setp.ne.u64" || cmp.guard() != "" || cmp.arg(0) != "%pbr" {
			continue
		}
		defs := map[string][]int{}
		ok := true
		for _, k := range body {
			l := ls[k]
			if l.isBranch() && l != br && !(l.guard() != "" && strings.HasPrefix(l.arg(0), "$Lck")) && !(l.guard() != "" && strings.HasPrefix(l.arg(0), "$Lfp")) {
				ok = false // another way out or a call: not handled
			}
			if l.op == "exit" || l.op == "ret" {
				ok = false
			}
			for _, d := range l.defs() {
				defs[d] = append(defs[d], k)
			}
		}
		if !ok {
			continue
		}
		invariant := func(o ptx.Operand) bool { return isImm(o) || (isReg(o) && len(defs[o.Name]) == 0) }
		ivs := map[string]iv{}
		for r, ks := range defs {
			if len(ks) != 1 {
				continue
			}
			l := ls[ks[0]]
			if l.guard() == "" && l.op == "add.u64" && l.arg(0) == r && l.arg(1) == r && invariant(l.in.Args[2]) && l.arg(2) != r {
				ivs[r] = iv{ks[0], l.in.Args[2]}
			}
		}
		// The exit induction variable and the trip count: trip writes
		// the code leaving T-1 in %hq0.
		var trip func(add, check emitFn)
		if e, inv, step, ok := exit64(cmp, ivs, invariant); ok {
			trip = func(add, check emitFn) {
				emitTrip64(add, check, e, inv, step, ivs[e].line < body[len(body)-2])
			}
		} else if r, inv, step, ok := exit32(ls, defs, invariant, cmp, body[len(body)-2]); ok {
			trip = func(add, check emitFn) {
				emitTrip32(add, check, r, inv, step)
			}
		} else {
			continue
		}
		// The checks to hoist.
		type site struct {
			lines  []int // the check's lines, removed from the loop
			g      ptx.Operand
			id     string // the site's register suffix
			al     uint64
			gOff   int
			step   ptx.Operand // none for an invariant address
			absImm uint64
			expr   *expr  // the address, when the loop computes it
			ptr    string // its device pointer (unroll.go), or ""
			dadd   int    // the line adding the site's delta
			acc    []int  // the accesses through that address
			// anchor is the line the delta add follows (the check's
			// last, or the line before it in an unchecked kernel).
			anchor    int
			unchecked bool
		}
		// classify finds how site st's guest address g, read at line k,
		// moves in the loop: an induction variable (its step, and
		// whether it has moved by then), an invariant, or an address the
		// loop computes from one induction variable and invariants.
		classify := func(st *site, k int) bool {
			g := st.g
			if r, isIV := ivs[g.Name]; isIV && isReg(g) {
				st.step = r.step
				if r.line < k {
					st.gOff = 1
				}
			} else if !invariant(g) {
				x, ok := derive(ls, defs, ivs, invariant, g, k, 0)
				if !ok {
					return false
				}
				st.expr = x
				if x.iv != "" {
					st.step = ivs[x.iv].step
				}
			}
			if isImm(st.step) {
				sv := st.step.Int
				if st.step.Kind != ptx.OpInt || uint64(sv)&(st.al-1) != 0 || sv >= 1<<32 || sv <= -(1<<32) {
					return false
				}
				st.absImm = uint64(sv)
				if sv < 0 {
					st.absImm = uint64(-sv)
				}
			}
			return true
		}
		var sites []site
		for _, k := range body {
			l := ls[k]
			if unchecked && l.op == "add.u64" && l.nargs() == 3 && strings.HasPrefix(l.arg(2), "%sd") && isReg(l.in.Args[1]) {
				// An unchecked kernel's access (Kernel.Unchecked): no
				// check to hoist, but the device pointer and the
				// unrolling all the same (the checked kernel, launched
				// with the same input, proved the accesses).
				st := site{g: l.in.Args[1], id: strings.TrimPrefix(l.arg(2), "%sd"), al: 1, anchor: k - 1, unchecked: true}
				if classify(&st, k) {
					sites = append(sites, st)
				}
				continue
			}
			if l.op != "sub.u64" || l.nargs() != 3 || !strings.HasPrefix(l.arg(2), "%sl") {
				continue
			}
			id := strings.TrimPrefix(l.arg(2), "%sl")
			g, a := l.in.Args[1], l.arg(0)
			st := site{g: g, id: id, al: 1, lines: []int{k}}
			n := nextInst(ls, k, end)
			if n < 0 || ls[n].op != "setp.gt.u64" || ls[n].nargs() != 3 || ls[n].arg(1) != a || ls[n].arg(2) != "%sh"+id {
				continue
			}
			p := ls[n].arg(0)
			st.lines = append(st.lines, n)
			n = nextInst(ls, n, end)
			if n >= 0 && ls[n].op == "and.b64" && sameOperand(ls[n].in.Args[1], g) {
				mask := ls[n].in.Args[2]
				m := uint64(mask.Int)
				bq := ls[n].arg(0)
				n2 := nextInst(ls, n, end)
				if mask.Kind != ptx.OpInt || m&(m+1) != 0 || n2 < 0 || ls[n2].op != "setp.ne.or.u64" || ls[n2].arg(0) != p || ls[n2].arg(1) != bq || ls[n2].arg(3) != p {
					continue
				}
				st.al = m + 1
				st.lines = append(st.lines, n, n2)
				n = nextInst(ls, n2, end)
			}
			if n < 0 || ls[n].guard() != "@"+p || ls[n].op != "bra" {
				continue
			}
			st.lines = append(st.lines, n)
			st.anchor = n
			if !classify(&st, k) {
				continue
			}
			// The check's temporaries must not be read after it (but by
			// its error stub).
			fine := true
			for _, li := range st.lines[:len(st.lines)-1] {
				for _, d := range ls[li].defs() {
					if readLater(ls, st.lines[len(st.lines)-1], end, d) || v.liveOut(body[len(body)-1], d) {
						fine = false
					}
				}
			}
			if fine {
				sites = append(sites, st)
			}
		}
		if len(sites) == 0 {
			continue
		}
		// Device pointers for the accesses that read their address only
		// as an address (unroll.go).
		nptr := 0
		for i := range sites {
			st := &sites[i]
			if nptr == ptrRegs {
				break
			}
			if dadd, acc, ok := deltaAdd(ls, v, st.anchor, end, body[len(body)-1], st.g.String(), "%sd"+st.id); ok {
				st.ptr, st.dadd, st.acc = fmt.Sprintf("%%hv%d", nptr), dadd, acc
				nptr++
			}
		}
		// The entry checks.
		fail := fmt.Sprintf("$Lhc%x", x86)
		var pre []*pline
		add := func(op string, args ...ptx.Operand) {
			pre = append(pre, inst(op, args...))
		}
		check := func(op string, args ...ptx.Operand) {
			add(op, append([]ptx.Operand{ptx.Reg("%hp")}, args...)...)
			pre = append(pre, inst("bra", ptx.Sym(fail)).when("%hp"))
		}
		pre = append(pre, &pline{comment: " the loop's footprint checks, once at its entry (see hoist.go)"})
		trip(add, check)
		// %hq0 is T-1 now. Per site: F = G0 + gOff*step aligned and in
		// the footprint; the span below 2^62; |step| < 2^32, aligned, and
		// |step|*(T-1) <= span; the last address F + step*(T-1) in the
		// footprint. Then every F + k*step, 0 <= k < T, is: the exact
		// integer last address lies within span of F, and so does the one
		// in the footprint congruent to it, so they are equal (2*span <
		// 2^64), and the sequence runs monotonely between the two ends.
		hq := func(i int) ptx.Operand { return ptx.Reg(fmt.Sprintf("%%hq%d", i)) }
		for _, st := range sites {
			sl, sh := ptx.Reg("%sl"+st.id), ptx.Reg("%sh"+st.id)
			switch {
			case st.expr != nil:
				n := 4
				r, ok := st.expr.emit(add, &n)
				if !ok {
					return ls, v, false // cannot happen: derive bounds the size
				}
				add("mov.b64", hq(1), r)
			case st.gOff == 1:
				add("add.u64", hq(1), st.g, st.step)
			default:
				add("mov.b64", hq(1), st.g)
			}
			if st.ptr != "" {
				add("add.u64", ptx.Reg(st.ptr), hq(1), ptx.Reg("%sd"+st.id))
			}
			if st.unchecked {
				continue // nothing to check: only the device pointer
			}
			if st.al > 1 {
				add("and.b64", hq(2), hq(1), lit(st.al-1))
				check("setp.ne.u64", hq(2), ptx.Int(0))
			}
			add("sub.u64", hq(2), hq(1), sl)
			check("setp.gt.u64", hq(2), sh)
			if none(st.step) {
				continue
			}
			check("setp.gt.u64", sh, lit(1<<62-1))
			if isImm(st.step) {
				add("mul.lo.u64", hq(3), hq(0), lit(st.absImm))
				add("mul.lo.u64", hq(2), hq(0), st.step)
			} else {
				if st.al > 1 {
					add("and.b64", hq(2), st.step, lit(st.al-1))
					check("setp.ne.u64", hq(2), ptx.Int(0))
				}
				add("abs.s64", hq(3), st.step)
				check("setp.gt.u64", hq(3), ptx.Int(4294967295))
				add("mul.lo.u64", hq(3), hq(3), hq(0))
				add("mul.lo.u64", hq(2), st.step, hq(0))
			}
			check("setp.gt.u64", hq(3), sh)
			add("add.u64", hq(2), hq(2), hq(1))
			add("sub.u64", hq(2), hq(2), sl)
			check("setp.gt.u64", hq(2), sh)
		}
		loop := lab.label + "_loop"
		var adv []*pline // the device pointers' steps, at the end of the body
		for _, st := range sites {
			for _, li := range st.lines {
				ls[li].dead = true
			}
			if st.ptr == "" {
				continue
			}
			ls[st.dadd].dead = true
			for _, k := range st.acc {
				l := ls[k]
				ai := addrArg(l)
				l.in.Args[ai] = ptx.Addr(st.ptr, l.in.Args[ai].Int)
				l.touch()
			}
			if !none(st.step) {
				adv = append(adv, inst("add.u64", ptx.Reg(st.ptr), ptx.Reg(st.ptr), st.step))
			}
		}
		// Loop-invariant instructions move to the entry too: defined once
		// in the loop, from invariants only, and not read in the loop
		// before that (the loop runs at least once, so the value after
		// it is the same).
		moved := map[string]bool{}
		for _, k := range body {
			l := ls[k]
			if l.dead || l.guard() != "" || !l.pure() || (l.in.Effects()&ptx.ReadsMem != 0 && l.in.Space != ptx.SpaceParam) {
				continue
			}
			ds := l.defs()
			// Of the predicates, only the thread loop's test of its inner
			// iteration (emit.go) moves.
			if len(ds) != 1 || !isReg(l.in.Args[0]) || len(defs[ds[0]]) != 1 || strings.HasPrefix(ds[0], "%p") && ds[0] != "%ptrip" && ds[0] != "%ptripx" {
				continue
			}
			inv := true
			for _, u := range l.uses() {
				if len(defs[u]) > 0 && !moved[u] {
					inv = false
				}
			}
			for _, k2 := range body {
				if k2 < k && has(ls[k2].uses(), ds[0]) {
					inv = false
				}
			}
			if !inv {
				continue
			}
			moved[ds[0]] = true
			pre = append(pre, l.clone())
			l.dead = true
		}
		// Accumulators in float registers (unroll.go).
		var wb []*pline
		for i, r := range promoteFloats(ls, v, body, br) {
			f := fmt.Sprintf("%%hfd%d", i)
			pre = append(pre, inst("mov.b64", ptx.Reg(f), ptx.Reg(r)))
			wb = append(wb, inst("mov.b64", ptx.Reg(r), ptx.Reg(f)))
		}
		h := &hoistedLoop{loop: &pline{label: loop}, out: &pline{label: lab.label + "_out"}, cmp: cmp, name: lab.label,
			keep: inst("cvt.u32.u64", ptx.Reg("%hn"), hq(0))}
		h.keep.keep = true
		// A load and a store of one invariant address, every other
		// access through another site: the unrolled loop may keep the
		// value in a register (unroll.go).
		accSite := map[*pline]int{}
		for i, st := range sites {
			if st.ptr == "" {
				continue
			}
			for _, k := range st.acc {
				accSite[ls[k]] = i
			}
		}
		var pl, ps []int // the candidates' sites
		promo := &promotion{}
		for _, k := range body {
			l := ls[k]
			if l.dead || l.in.Space != ptx.SpaceGlobal || l.in.Op != "ld" && l.in.Op != "st" {
				continue
			}
			si, ok := accSite[l]
			if !ok {
				pl = nil // an access with no hoisted site: anything may alias
				break
			}
			st := sites[si]
			if !none(st.step) || st.expr == nil && !invariant(st.g) || l.guard() != "" {
				continue
			}
			switch {
			case (l.op == "ld.global.b64" || l.op == "ld.global.u64" || l.op == "ld.global.f64") && isAddrOf(l.in.Args[1], st.ptr):
				pl = append(pl, si)
				promo.ld = l
			case (l.op == "st.global.b64" || l.op == "st.global.u64" || l.op == "st.global.f64") && isAddrOf(l.in.Args[0], st.ptr):
				ps = append(ps, si)
				promo.st = l
			}
		}
		if len(pl) == 1 && len(ps) == 1 {
			promo.ldPtr, promo.stPtr, promo.stDelta = sites[pl[0]].ptr, sites[ps[0]].ptr, "%sd"+sites[ps[0]].id
			for i, st := range sites {
				if i != pl[0] && i != ps[0] {
					promo.others = append(promo.others, "%sd"+st.id)
				}
			}
			h.promo = promo
		} else if len(pl) == 0 && len(ps) == 1 && promo.st != nil {
			// A store with no load of its location in the loop: sunk,
			// where the others' bytes are apart (unroll.go).
			promo.ld, promo.stPtr = nil, sites[ps[0]].ptr
			for _, k := range body {
				l := ls[k]
				if l.dead || l == promo.st || l.in.Space != ptx.SpaceGlobal || l.in.Op != "ld" && l.in.Op != "st" {
					continue
				}
				si, hoisted := accSite[l]
				ai := addrArg(l)
				size := int64(l.in.Type().Size()) * int64(max(l.in.Vec, 1))
				if !hoisted || ai < 0 || size <= 0 || l.in.Args[ai].Kind != ptx.OpAddr || l.in.Args[ai].Name != sites[si].ptr {
					promo = nil
					break
				}
				promo.spans = append(promo.spans, accessSpan{ptr: sites[si].ptr, step: sites[si].step, off: l.in.Args[ai].Int, size: size})
			}
			if promo != nil && len(promo.spans) > 0 && promo.st.in.Args[0].Int == 0 {
				h.promo = promo
			}
		}
		pre = append(pre, h.keep)
		br.in.Args[0] = ptx.Sym(loop)
		br.touch()
		var out []*pline
		out = append(out, ls[:b+1]...)
		out = append(out, pre...)
		out = append(out, h.loop)
		for k := b + 1; k < end; k++ {
			if k == body[len(body)-2] {
				out = append(out, adv...)
			}
			out = append(out, ls[k])
		}
		out = append(out, h.out)
		out = append(out, wb...)
		out = append(out, ls[end:]...)
		out = append(out, &pline{label: fail})
		out = append(out, inst("mov.b64", ptx.Reg("%xa"), lit(x86)))
		if unchecked {
			// An unchecked kernel has no error exits left (its input
			// was proven); a trip count its checked twin never tested
			// still ends the thread with an error, never a wrong one.
			out = append(out, inst("ld.param.u64", ptx.Reg("%t0"), ptx.Addr("errrec", 0)),
				inst("mov.u32", ptx.Reg("%w0"), ptx.Int(ErrCodeFootprint)),
				inst("st.global.u32", ptx.Addr("%t0", 0), ptx.Reg("%w0")),
				inst("st.global.u64", ptx.Addr("%t0", 8), ptx.Reg("%xa")),
				inst("exit"))
		} else {
			out = append(out, inst("bra", ptx.Sym(fmt.Sprintf("$Lerr%d", ErrCodeFootprint))))
		}
		// Clean up what the checks and the delta adds left (address
		// arithmetic nobody reads, float moves), then unroll.
		ov := simplify(out, v.regs)
		out = unroll(out, h, ov)
		ov = simplify(out, v.regs) // the moves around the kept location and the hoisted loads
		return out, ov, true
	}
	return ls, v, false
}

// expr is an address a loop computes: a leaf (an invariant register, an
// immediate, or an induction variable read ivOff updates into the
// iteration) or op applied to a and b.
type expr struct {
	op    string // "", add.u64, sub.u64, shl.b64 or mov.b64
	a, b  *expr
	leaf  ptx.Operand
	ivOff int
	isIV  bool
	iv    string      // the one induction variable the value depends on, or ""
	step  ptx.Operand // a leaf induction variable's step
	size  int         // nodes
}

// derive builds the expression of register r as line at reads it: r
// is defined in the loop before at (its last such definition counts), from induction variables,
// invariants and such values, with the value's one induction variable
// added (never subtracted or shifted), so that the value steps as that
// variable does.
func derive(ls []*pline, defs map[string][]int, ivs map[string]iv, invariant func(ptx.Operand) bool, o ptx.Operand, at, depth int) (*expr, bool) {
	if depth > 4 {
		return nil, false
	}
	if invariant(o) {
		return &expr{leaf: o, size: 1}, true
	}
	if !isReg(o) {
		return nil, false
	}
	r := o.Name
	if v, ok := ivs[r]; ok {
		x := &expr{leaf: o, isIV: true, iv: r, step: v.step, size: 1}
		if v.line < at {
			x.ivOff = 1
		}
		return x, true
	}
	// The definition that reaches at in the straight-line block: the
	// last before it (none: the value comes from the last iteration).
	d := -1
	for _, k := range defs[r] {
		if k < at {
			d = max(d, k)
		}
	}
	if d < 0 {
		return nil, false
	}
	ds := []int{d}
	l := ls[d]
	if l.guard() != "" || l.nargs() < 2 || l.arg(0) != r {
		return nil, false
	}
	switch l.op {
	case "mov.b64":
		if l.nargs() != 2 || (!isReg(l.in.Args[1]) && !isImm(l.in.Args[1])) {
			return nil, false
		}
		return derive(ls, defs, ivs, invariant, l.in.Args[1], ds[0], depth+1)
	case "add.u64", "sub.u64", "shl.b64":
		if l.nargs() != 3 {
			return nil, false
		}
		a, ok := derive(ls, defs, ivs, invariant, l.in.Args[1], ds[0], depth+1)
		if !ok {
			return nil, false
		}
		b, ok := derive(ls, defs, ivs, invariant, l.in.Args[2], ds[0], depth+1)
		if !ok {
			return nil, false
		}
		x := &expr{op: l.op, a: a, b: b, size: a.size + b.size + 1}
		switch {
		case a.iv != "" && b.iv != "":
			return nil, false
		case l.op == "add.u64":
			x.iv = a.iv + b.iv
		case l.op == "sub.u64" && b.iv == "":
			x.iv = a.iv
		case l.op == "shl.b64" && a.iv == "" && b.iv == "" && isImm(b.leaf):
		default:
			return nil, false
		}
		if x.size > 11 {
			return nil, false
		}
		return x, true
	}
	return nil, false
}

// emit writes the code computing x at the loop's entry (an induction
// variable leaf read as its entry value advanced by ivOff steps) into the
// registers from %hq<*n>, and returns the operand holding it.
func (x *expr) emit(add emitFn, n *int) (ptx.Operand, bool) {
	next := func() (ptx.Operand, bool) {
		if *n >= hoistRegs {
			return ptx.Operand{}, false
		}
		r := ptx.Reg(fmt.Sprintf("%%hq%d", *n))
		*n++
		return r, true
	}
	if x.op == "" {
		if x.isIV && x.ivOff == 1 {
			r, ok := next()
			if ok {
				add("add.u64", r, x.leaf, x.step)
			}
			return r, ok
		}
		return x.leaf, true
	}
	a, ok := x.a.emit(add, n)
	if !ok {
		return ptx.Operand{}, false
	}
	if isImm(a) {
		r, ok := next()
		if !ok {
			return ptx.Operand{}, false
		}
		add("mov.b64", r, a)
		a = r
	}
	b, ok := x.b.emit(add, n)
	if !ok {
		return ptx.Operand{}, false
	}
	r, ok := next()
	if !ok {
		return ptx.Operand{}, false
	}
	add(x.op, r, a, b)
	return r, true
}

// exit64 recognises the exit compare "setp.ne.u64 %pbr, E, INV" of a
// 64-bit induction variable E with a power-of-two step and an invariant
// INV.
func exit64(cmp *pline, ivs map[string]iv, invariant func(ptx.Operand) bool) (e, inv string, s int64, ok bool) {
	eo, io := cmp.in.Args[1], cmp.in.Args[2]
	if _, isIV := ivs[eo.Name]; !isIV || !isReg(eo) {
		eo, io = io, eo
	}
	eiv, isIV := ivs[eo.Name]
	if !isIV || !isReg(eo) || !isReg(io) || !invariant(io) {
		return "", "", 0, false
	}
	s = eiv.step.Int
	if eiv.step.Kind != ptx.OpInt || s == 0 || s == -s {
		return "", "", 0, false
	}
	e, inv = eo.Name, io.Name
	as := uint64(s)
	if s < 0 {
		as = uint64(-s)
	}
	return e, inv, s, as&(as-1) == 0
}

// emitTrip64 writes the trip count code of exit64's loop: T-1 = q - eOff,
// where q is the least k >= 0 with E0 + k*s = INV (mod 2^64) and eOff is 1
// when the compare sees E after its update: s = ±2^j, so D = ±(INV-E0)
// must be a multiple of 2^j, and q = D >> j.
func emitTrip64(add, check emitFn, e, inv string, s int64, after bool) {
	as := uint64(s)
	if s < 0 {
		as = uint64(-s)
	}
	hq0, hq1 := ptx.Reg("%hq0"), ptx.Reg("%hq1")
	add("sub.u64", hq0, ptx.Reg(inv), ptx.Reg(e))
	if s < 0 {
		add("neg.s64", hq0, hq0)
	}
	if as > 1 {
		add("and.b64", hq1, hq0, lit(as-1))
		check("setp.ne.u64", hq1, ptx.Int(0))
		add("shr.u64", hq0, hq0, ptx.Int(int64(bits.TrailingZeros64(as))))
	}
	check("setp.gt.u64", hq0, ptx.Int(2147483648))
	if after {
		check("setp.eq.u64", hq0, ptx.Int(0))
		add("sub.u64", hq0, hq0, ptx.Int(1))
	}
}

// mask32 is the immediate 2^32-1, written in decimal.
var mask32 = ptx.Int(math.MaxUint32)

// isMask32 says whether operand o is the immediate 2^32-1.
func isMask32(o ptx.Operand) bool { return o.Kind == ptx.OpInt && o.Int == math.MaxUint32 }

// iv32 recognises a 32-bit induction variable R: "add.u64 X, R, imm" then
// "and.b64 R, X, 0xffffffff", each X's and R's one definition in the loop;
// it returns the step.
func iv32(ls []*pline, defs map[string][]int, r string, before int) (uint64, bool) {
	ds := defs[r]
	if len(ds) != 1 || ds[0] >= before {
		return 0, false
	}
	a := ls[ds[0]]
	if a.guard() != "" || a.op != "and.b64" || a.nargs() != 3 || !isMask32(a.in.Args[2]) || !isReg(a.in.Args[1]) {
		return 0, false
	}
	x := a.arg(1)
	xs := defs[x]
	if len(xs) != 1 || xs[0] >= ds[0] {
		return 0, false
	}
	b := ls[xs[0]]
	if b.guard() != "" || b.op != "add.u64" || b.nargs() != 3 || b.arg(1) != r || b.in.Args[2].Kind != ptx.OpInt {
		return 0, false
	}
	return uint64(b.in.Args[2].Int), true
}

// exit32 recognises the exit compare of a 32-bit counter: "setp.ne.u64
// %pbr, A, B" where one side is a 32-bit induction variable R (or R masked
// to 32 bits) and the other an invariant Z masked to 32 bits, the masks
// the last definitions before the compare.
func exit32(ls []*pline, defs map[string][]int, invariant func(ptx.Operand) bool, cmp *pline, at int) (r, z string, s uint64, ok bool) {
	classify := func(o ptx.Operand) (isIV bool, name string, step uint64, ok bool) {
		if !isReg(o) {
			return false, "", 0, false
		}
		op := o.Name
		if st, ok := iv32(ls, defs, op, at); ok {
			return true, op, st, true
		}
		d := -1
		for _, k := range defs[op] {
			if k < at {
				d = max(d, k)
			}
		}
		if d < 0 {
			return false, "", 0, false
		}
		l := ls[d]
		if l.guard() != "" || l.op != "and.b64" || l.nargs() != 3 || !isMask32(l.in.Args[2]) || !isReg(l.in.Args[1]) {
			return false, "", 0, false
		}
		b := l.arg(1)
		if invariant(l.in.Args[1]) {
			return false, b, 0, true
		}
		if st, ok := iv32(ls, defs, b, d); ok {
			return true, b, st, true
		}
		return false, "", 0, false
	}
	ia, na, sa, oka := classify(cmp.in.Args[1])
	ib, nb, sb, okb := classify(cmp.in.Args[2])
	switch {
	case !oka || !okb || ia == ib:
		return "", "", 0, false
	case ia:
		r, z, s = na, nb, sa
	default:
		r, z, s = nb, na, sb
	}
	return r, z, s, uint32(s) != 0
}

// emitTrip32 writes the trip count code of exit32's loop, whose compare
// sees R after its update: T is the least k >= 1 with
// R0 + k*s = Z (mod 2^32). With s = 2^j*o (o odd), D = Z - R0 must be a
// multiple of 2^j, and the least k >= 0 is (D >> j) * o^-1 mod 2^(32-j);
// 0 would mean 2^(32-j) iterations, refused like any T above 2^31.
func emitTrip32(add, check emitFn, r, z string, s uint64) {
	s32 := uint32(s)
	j := bits.TrailingZeros32(s32)
	o := s32 >> j
	inv := o // Newton's iteration doubles the correct low bits each time.
	for range 5 {
		inv *= 2 - o*inv
	}
	hq0, hq1 := ptx.Reg("%hq0"), ptx.Reg("%hq1")
	add("and.b64", hq0, ptx.Reg(z), mask32)
	add("and.b64", hq1, ptx.Reg(r), mask32)
	add("sub.u64", hq0, hq0, hq1)
	add("and.b64", hq0, hq0, mask32)
	if j > 0 {
		add("and.b64", hq1, hq0, lit(uint64(1)<<j-1))
		check("setp.ne.u64", hq1, ptx.Int(0))
		add("shr.u64", hq0, hq0, ptx.Int(int64(j)))
	}
	add("mul.lo.u64", hq0, hq0, lit(uint64(inv)))
	add("and.b64", hq0, hq0, lit(uint64(1)<<(32-j)-1))
	check("setp.eq.u64", hq0, ptx.Int(0))
	check("setp.gt.u64", hq0, ptx.Int(2147483648))
	add("sub.u64", hq0, hq0, ptx.Int(1))
}

// nextInst returns the next live instruction after line k before end, or
// -1.
func nextInst(ls []*pline, k, end int) int {
	for n := k + 1; n < end; n++ {
		if ls[n].isInst() {
			return n
		}
	}
	return -1
}

// readLater says whether register r is read after line k, before it is
// written again, up to the block's end (end, exclusive).
func readLater(ls []*pline, k, end int, r string) bool {
	for n := k + 1; n < end; n++ {
		if has(ls[n].uses(), r) {
			return true
		}
		if ls[n].guard() == "" && has(ls[n].defs(), r) {
			return false
		}
	}
	return false
}
