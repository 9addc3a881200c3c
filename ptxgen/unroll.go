package ptxgen

import (
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gxbit/gxbit/ptx"
)

// Hoisted loops, made fast (RATIONALE). Once hoist.go has proven a
// one-block counted loop's accesses at its entry and knows its trip
// count T there, three rewrites make its body short:
//
//   - Device pointers. An access whose guest address steps with the loop
//     (F + k*step in iteration k, as the entry checks proved) reads
//     through a register initialised at the entry to F + delta and
//     advanced by step at the end of each iteration: D_k = G_k + delta
//     modulo 2^64, exactly the address the per-access "add delta" made,
//     without the add. The guest address registers still step as before,
//     so the loop's exit state and its exit test are unchanged.
//   - Float registers. A .b64 register the loop only moves into and out
//     of .f64 registers (an accumulator) lives in an .f64 register inside
//     the loop: copied in at the entry, out where the loop ends. The
//     moves are bit copies, so the value is the same.
//   - Unrolling by four. With T known at the entry, the loop runs
//     U = floor(T/4) times four copies of its body with no exit test in
//     between (none of the first 4U iterations leaves the loop), then the
//     original loop for what is left, entered only when the original exit
//     test, evaluated after iteration 4U on the state that iteration
//     left, says to go on. In the copies a register stepped by an
//     immediate that is read only as an address is read at an immediate
//     offset and advanced once per four iterations; one stepped by an
//     invariant register S and read only as an address is read at
//     P + m*S, one mad.wide.s32 (an IMAD.WIDE) from the four's first
//     value, when S is its low 32 bits sign-extended (checked at the
//     entry; else the loop runs as it was); one that nothing in the body
//     reads (a guest induction variable whose only reader is the exit
//     test) is advanced by 4U*step once, before the copies, and so is a
//     32-bit counter (add, then mask to 32 bits) that only the exit test
//     reads; the lines computing only the exit test's operands run once,
//     after the copies. All leave every register as four iterations of
//     the original would (modulo 2^64, as the adds they replace).
//   - Side exits out of the copies. A branch to an error check taken
//     when a register the body steps by an immediate meets an invariant
//     one (rowChecks: the interchanged kernel's test, after every row,
//     that the level does not end before its count) is tested once
//     before the copies for all 4U iterations; where it would be taken
//     among them, the loop runs as it was.
//   - Loads first. Copies without stores, branches or guards start with
//     all their loads, each into a register of its own (hoistLoads):
//     ptxas otherwise issued some loops' loads a pair at a time.
//
// A failed non-hoisted check inside the copies takes the same error exit
// as in the original; the rewrites above are refused for registers live
// there.

// The registers of the rewrites: device pointers %hv<N>, float registers
// %hfd<N>, the unrolled loop's counter %hn (.b32), register steps' low
// halves %hs<N> (.b32) and an address temporary %hw0.
const (
	ptrRegs   = 16
	floatRegs = 8
	wideRegs  = 8
	// unrollMax is the longest body (instructions, without the exit
	// test) that is unrolled.
	unrollMax = 48
	// unrollBy is the number of copies in the unrolled loop, a power of
	// two. On an H200 the matmul 2000x2000 kernel took 5.7 ms unrolled
	// by 4, 8.2 ms by 8 and 6.5 ms by 16 (16x16 tiles, event-timed).
	unrollBy = 4
)

// hoistedLoop names the lines of a hoisted loop the unroller needs; the
// clean-up between hoisting and unrolling keeps their identity.
type hoistedLoop struct {
	loop, out *pline // the loop's label and the label where it ends
	keep      *pline // "cvt.u32.u64 %hn, %hq0": T-1 at the entry
	cmp       *pline // the exit test
	name      string // the label's stem, $Lx<addr>
	promo     *promotion
}

// promotion is a load and a store of one 8-byte location that stays put
// in a hoisted loop (gemm's C[i][j] in the k loop of a thread): the
// unrolled copies keep it in %hcd0 (.f64: the values are bit copies), loaded before them and stored after
// (see unroll). The copies may do so when, at the loop's entry, the two
// device pointers are equal and every other site of the loop has a
// delta other than the store's: a site of another group has a device
// buffer of its own (a group's sites share one delta), and each of the
// loop's accesses was proven inside its site's footprint, so no other
// access touches the location. A side exit of the copies is an error
// exit, where device memory no longer matters (the launch fails and the
// guest keeps its memory).
//
// A store with no load (trmm's B[i][j] += A[k][i]*B[k][j], stored every
// iteration, read before the loop) is sunk instead: the copies keep the
// value in %hcd0 and store it once after them, when, at the loop's entry,
// the bytes every other access of the loop touches over its T
// iterations (device addresses: different buffers never share one) lie
// apart from the store's 8. The stores the copies leave out are
// overwritten by the last before anything reads them (no access of the
// thread does, and no other thread's: the level's iterations are
// independent). Without the stores between them, each copy's loads no
// longer wait for the previous copy's store (a GPU, like its compiler,
// cannot tell they do not alias), so the four copies' loads overlap.
type promotion struct {
	ld, st       *pline   // the load (nil: a sunk store) and the store
	ldPtr, stPtr string   // their device pointers (loop-invariant)
	stDelta      string   // the store's site delta, %sd<N>
	others       []string // the other sites' deltas
	// spans are, for a sunk store, the other accesses of the loop.
	spans []accessSpan
}

// accessSpan is one access of a hoisted loop through a device pointer:
// in iteration k it touches [ptr + off + k*step, +size).
type accessSpan struct {
	ptr       string
	step      ptx.Operand // none for an invariant address
	off, size int64
}

// deltaAdd finds the device address of a checked access: the line after
// its check (at) must be "add.u64 X, g, sd", and X must be read only as
// the address of the loads and stores that follow, before it is written
// again, and not be live where the loop ends (brk, the back edge). It
// returns the add's line and the accesses'.
func deltaAdd(ls []*pline, v *live, at, end, brk int, g, sd string) (int, []int, bool) {
	n := nextInst(ls, at, end)
	if n < 0 || n >= brk {
		return 0, nil, false
	}
	d := ls[n]
	if d.guard() != "" || d.op != "add.u64" || d.nargs() != 3 || d.arg(1) != g || d.arg(2) != sd || !isReg(d.in.Args[0]) {
		return 0, nil, false
	}
	x := d.arg(0)
	var acc []int
	for k := n + 1; k < end; k++ {
		l := ls[k]
		if !l.isInst() {
			continue
		}
		if has(l.uses(), x) {
			ai := addrArg(l)
			if ai < 0 || l.in.Guard == x {
				return 0, nil, false
			}
			if r, _, ok := splitAddr(l.in.Args[ai]); !ok || r != x {
				return 0, nil, false
			}
			for i, a := range l.in.Args {
				if i != ai && i != 0 && has(regsIn(a), x) {
					return 0, nil, false
				}
			}
			if ai == 0 && has(regsIn(l.in.Args[1]), x) {
				return 0, nil, false
			}
			acc = append(acc, k)
		}
		if has(l.defs(), x) {
			if l.guard() != "" {
				return 0, nil, false
			}
			return n, acc, len(acc) > 0
		}
	}
	if v.liveOut(brk, x) {
		return 0, nil, false
	}
	return n, acc, len(acc) > 0
}

// addrArg returns the index of l's address operand when l is a global
// load or store of one register value, else -1.
func addrArg(l *pline) int {
	switch {
	case l.in.Op == "ld" && l.in.Space == ptx.SpaceGlobal && l.nargs() == 2 && isReg(l.in.Args[0]):
		return 1
	case l.in.Op == "st" && l.in.Space == ptx.SpaceGlobal && l.nargs() == 2 && isReg(l.in.Args[1]):
		return 0
	}
	return -1
}

// splitAddr splits an address operand [R], [R+N] into its register and
// offset; false for an address not based on a register.
func splitAddr(a ptx.Operand) (reg string, off int64, ok bool) {
	if a.Kind != ptx.OpAddr || !isReg(ptx.Reg(a.Name)) {
		return "", 0, false
	}
	return a.Name, a.Int, true
}

// sideExits lists the targets of the guarded branches among lines ks
// other than skip (error stubs of checks left in the loop).
func sideExits(ls []*pline, v *live, ks []int, skip *pline) []int {
	var out []int
	for _, k := range ks {
		l := ls[k]
		if l.isBranch() && l != skip {
			if t, ok := v.labels[l.in.Args[0].Name]; ok {
				out = append(out, t)
			}
		}
	}
	return out
}

// promoteFloats renames the .b64 registers of the loop's body (lines ks)
// that it only moves to and from .f64 registers, and writes every one at
// least once, to %hfd registers; it returns the registers in order.
func promoteFloats(ls []*pline, v *live, ks []int, br *pline) []string {
	bad := map[string]bool{}
	written := map[string]bool{}
	for _, k := range ks {
		l := ls[k]
		if !l.isInst() {
			continue
		}
		var rs []string
		rs = append(rs, l.uses()...)
		rs = append(rs, l.defs()...)
		for _, r := range rs {
			if !(strings.HasPrefix(r, "%r") || strings.HasPrefix(r, "%k")) || regClass(r) != "b64" {
				continue
			}
			switch {
			case l.isMove() && l.op == "mov.b64" && l.arg(1) == r && l.arg(0) != r && regClass(l.arg(0)) == "f64":
			case l.isMove() && l.op == "mov.b64" && l.arg(0) == r && isReg(l.in.Args[1]) && regClass(l.arg(1)) == "f64":
				written[r] = true
			default:
				bad[r] = true
			}
		}
	}
	exits := sideExits(ls, v, ks, br)
	var out []string
	for r := range written {
		if bad[r] {
			continue
		}
		live := false
		for _, t := range exits {
			if v.liveAtLabel(t, r) {
				live = true
			}
		}
		if !live {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	if len(out) > floatRegs {
		out = out[:floatRegs]
	}
	for i, r := range out {
		f := fmt.Sprintf("%%hfd%d", i)
		for _, k := range ks {
			l := ls[k]
			if !l.isInst() || !l.isMove() {
				continue
			}
			for a := range l.in.Args {
				if isReg(l.in.Args[a]) && l.in.Args[a].Name == r {
					l.in.Args[a] = ptx.Reg(f)
				}
			}
			l.touch()
		}
	}
	return out
}

// unroll rewrites the hoisted loop h of ls as four copies of its body
// and the original loop for the rest (see the top of this file), v
// being the liveness of ls; it returns ls unchanged (but for h.keep)
// when the loop does not fit.
func unroll(ls []*pline, h *hoistedLoop, v *live) []*pline {
	h.keep.keep = false
	li, oi, ki := -1, -1, -1
	for i, l := range ls {
		switch l {
		case h.loop:
			li = i
		case h.out:
			oi = i
		case h.keep:
			ki = i
		}
	}
	if li < 0 || oi < li || ki < 0 || ki > li || h.keep.dead {
		return ls
	}
	var body []int
	for k := li + 1; k < oi; k++ {
		if ls[k].label != "" {
			return ls
		}
		if ls[k].isInst() {
			body = append(body, k)
		}
	}
	if len(body) < 2 || ls[body[len(body)-2]] != h.cmp || len(body)-2 > unrollMax {
		return ls
	}
	br := ls[body[len(body)-1]]
	core := body[:len(body)-2]
	for _, k := range body {
		for _, r := range append(append([]string(nil), ls[k].uses()...), ls[k].defs()...) {
			if strings.HasPrefix(r, "%hq") || r == "%hn" || r == "%hp" {
				return ls // the unrolled loop's own registers
			}
		}
	}
	exits := sideExits(ls, v, core, br)
	liveOut := func(r string) bool {
		for _, t := range exits {
			if v.liveAtLabel(t, r) {
				return true
			}
		}
		return false
	}
	defs := map[string][]int{}
	for i, k := range core {
		if ls[k].guard() == "" {
			for _, d := range ls[k].defs() {
				defs[d] = append(defs[d], i)
			}
		} else {
			for _, d := range ls[k].defs() {
				defs[d] = append(defs[d], i, i) // never a simple step
			}
		}
	}
	// The exit test's feeders: lines whose one result only the exit test
	// reads, from registers no later line of the body changes. The copies
	// leave them out; they run once, before the test after the copies.
	feeder := map[int]bool{}
	for i, k := range core {
		m := ls[k]
		ds := m.defs()
		if m.guard() != "" || !m.pure() || m.in.Op == "ld" || len(ds) != 1 || len(defs[ds[0]]) != 1 || liveOut(ds[0]) || !has(h.cmp.uses(), ds[0]) {
			continue
		}
		ok := true
		for i2, k2 := range core {
			if has(ls[k2].uses(), ds[0]) {
				ok = false
			}
			if i2 > i {
				for _, u := range m.uses() {
					if has(ls[k2].defs(), u) {
						ok = false
					}
				}
			}
		}
		feeder[i] = ok
	}
	// The stepped registers: "add.u64 R, R, S" once, S invariant.
	type stepped struct {
		at   int // its add's position in core
		step ptx.Operand
		imm  int64
		late bool   // nothing reads it: advanced by 4U*step before the copies
		wide string // a register step's low 32 bits (%hs<N>), when it is read only as an address
	}
	steps := map[string]*stepped{}
	var names []string
	nwide := 0
	// In register order: the %hs registers are numbered as found.
	for _, r := range slices.Sorted(maps.Keys(defs)) {
		ds := defs[r]
		if len(ds) != 1 {
			continue
		}
		l := ls[core[ds[0]]]
		if l.op != "add.u64" || l.nargs() != 3 || l.arg(0) != r || l.arg(1) != r || l.arg(2) == r {
			continue
		}
		s := l.in.Args[2]
		if !(isImm(s) || isReg(s) && len(defs[s.Name]) == 0) {
			continue
		}
		if liveOut(r) {
			continue
		}
		st := &stepped{at: ds[0], step: s}
		reads, memOnly := 0, true
		maxOff := int64(0)
		for i, k := range core {
			m := ls[k]
			if i == ds[0] || feeder[i] || !has(m.uses(), r) {
				continue
			}
			reads++
			ai := addrArg(m)
			if ai < 0 {
				memOnly = false
				continue
			}
			ar, off, ok := splitAddr(m.in.Args[ai])
			if !ok || ar != r || m.in.Guard == r || has(regsIn(m.in.Args[1-ai]), r) {
				memOnly = false
				continue
			}
			maxOff = max(maxOff, off, -off)
		}
		switch {
		case reads == 0:
			st.late = true
		case memOnly && isImm(s):
			iv, ok := s.Int, s.Kind == ptx.OpInt
			if !ok || iv >= 1<<28 || iv <= -(1<<28) || maxOff+unrollBy*max(iv, -iv) >= math.MaxInt32 {
				continue
			}
			st.imm = iv
		case memOnly && isReg(s) && nwide < wideRegs:
			st.wide = fmt.Sprintf("%%hs%d", nwide)
			nwide++
		default:
			continue
		}
		steps[r] = st
		names = append(names, r)
	}
	sort.Strings(names)
	// 32-bit counters: "add.u64 X, R, imm" then "and.b64 R, X, 2^32-1",
	// R read by nothing but the add and lines after the and whose result
	// only the exit test reads: advanced by 4U steps before the copies.
	type counter struct {
		x   string
		imm ptx.Operand
	}
	counters := map[string]*counter{}
	counterX := map[string]bool{} // their sums X
	var cnames []string
	for r, ds := range defs {
		if len(ds) != 1 || steps[r] != nil {
			continue
		}
		lb := ls[core[ds[0]]]
		if lb.op != "and.b64" || lb.nargs() != 3 || lb.arg(0) != r || !isMask32(lb.in.Args[2]) || !isReg(lb.in.Args[1]) || lb.arg(1) == r {
			continue
		}
		x := lb.arg(1)
		xd := defs[x]
		if len(xd) != 1 || xd[0] >= ds[0] {
			continue
		}
		la := ls[core[xd[0]]]
		if la.op != "add.u64" || la.nargs() != 3 || la.arg(1) != r || la.in.Args[2].Kind != ptx.OpInt || liveOut(r) || liveOut(x) {
			continue
		}
		ok := true
		for i, k := range core {
			m := ls[k]
			if i == xd[0] || i == ds[0] {
				continue
			}
			if has(m.uses(), x) || has(m.uses(), r) && !feeder[i] {
				ok = false
			}
		}
		if ok {
			counters[r] = &counter{x: x, imm: la.in.Args[2]}
			counterX[x] = true
			cnames = append(cnames, r)
		}
	}
	sort.Strings(cnames)
	unrolled := &pline{label: h.name + "_unroll"}
	var pre, main []*pline
	add := func(to *[]*pline, op string, args ...ptx.Operand) *pline {
		l := inst(op, args...)
		*to = append(*to, l)
		return l
	}
	hn, hp, hw0, hcd0 := ptx.Reg("%hn"), ptx.Reg("%hp"), ptx.Reg("%hw0"), ptx.Reg("%hcd0")
	hq0, hq1, hq2 := ptx.Reg("%hq0"), ptx.Reg("%hq1"), ptx.Reg("%hq2")
	// U = T/unrollBy (T-1 <= 2^31 in %hq0, so T fits 32 bits); none:
	// the loop.
	add(&pre, "add.u32", hn, hn, ptx.Int(1))
	add(&pre, "shr.u32", hn, hn, ptx.Int(int64(bits.TrailingZeros(unrollBy))))
	add(&pre, "setp.eq.u32", hp, hn, ptx.Int(0))
	add(&pre, "bra", ptx.Sym(h.loop.label)).when("%hp")
	// A register step read as an address: P + m*S by one mad.wide.s32 in
	// the copies when S is its low 32 bits sign-extended; else the loop
	// runs as it was.
	for _, r := range names {
		if st := steps[r]; st.wide != "" {
			add(&pre, "cvt.u32.u64", ptx.Reg(st.wide), st.step)
			add(&pre, "cvt.s64.s32", hw0, ptx.Reg(st.wide))
			add(&pre, "setp.ne.u64", hp, hw0, st.step)
			add(&pre, "bra", ptx.Sym(h.loop.label)).when("%hp")
		}
	}
	// The location kept in a register: when the entry test fails, the
	// loop runs as it was.
	promo := h.promo
	if promo != nil {
		found := 0
		for _, k := range core {
			if ls[k] == promo.ld || ls[k] == promo.st {
				found++
			}
		}
		want := 2
		if promo.ld == nil {
			want = 1
		}
		if found != want || promo.ld != nil && promo.ld.dead || promo.st.dead {
			promo = nil
		}
	}
	switch {
	case promo != nil && promo.ld == nil:
		// A sunk store: every other access's bytes over the T
		// iterations ([lo, hi), from the T-1 in %hq0) apart from the
		// store's.
		hq3 := ptx.Reg("%hq3")
		add(&pre, "add.u64", hq1, ptx.Reg(promo.stPtr), ptx.Int(8))
		for _, s := range promo.spans {
			if none(s.step) {
				add(&pre, "mov.u64", hq2, ptx.Int(0))
			} else {
				add(&pre, "mul.lo.u64", hq2, s.step, hq0)
			}
			add(&pre, "min.s64", hq3, hq2, ptx.Int(0))
			add(&pre, "add.u64", hq3, hq3, ptx.Reg(s.ptr))
			add(&pre, "max.s64", hq2, hq2, ptx.Int(0))
			add(&pre, "add.u64", hq2, hq2, ptx.Reg(s.ptr))
			if s.off != 0 {
				add(&pre, "add.u64", hq3, hq3, lit(uint64(s.off)))
			}
			add(&pre, "add.u64", hq2, hq2, lit(uint64(s.off+s.size)))
			add(&pre, "setp.lt.u64", hp, ptx.Reg(promo.stPtr), hq2)
			add(&pre, "setp.lt.and.u64", hp, hq3, hq1, hp)
			add(&pre, "bra", ptx.Sym(h.loop.label)).when("%hp")
		}
	case promo != nil:
		add(&pre, "setp.ne.u64", hp, ptx.Reg(promo.ldPtr), ptx.Reg(promo.stPtr))
		add(&pre, "bra", ptx.Sym(h.loop.label)).when("%hp")
		for _, d := range promo.others {
			add(&pre, "setp.eq.u64", hp, ptx.Reg(d), ptx.Reg(promo.stDelta))
			add(&pre, "bra", ptx.Sym(h.loop.label)).when("%hp")
		}
	}
	checks := rowChecks(ls, core, defs, h.cmp)
	deferred := false
	fourU := func() {
		if !deferred {
			add(&pre, "add.u64", hq1, hq0, ptx.Int(1))
			add(&pre, "and.b64", hq1, hq1, lit(^uint64(unrollBy-1)))
			deferred = true
		}
	}
	// A side exit taken where a register the body steps meets an
	// invariant one (the interchanged kernel's check that the level
	// does not end before its count): where that happens within the 4U
	// iterations of the copies, the loop runs as it was; else the copies
	// leave the test out and the register advances by 4U steps before
	// them.
	for _, c := range checks {
		fourU()
		step := c.imm
		d := []ptx.Operand{c.x, ptx.Reg(c.r)} // the distance, in the step's direction
		if step < 0 {
			step, d[0], d[1] = -step, d[1], d[0]
		}
		hq3 := ptx.Reg("%hq3")
		add(&pre, "sub.u64", hq2, d[0], d[1])
		add(&pre, "mul.lo.u64", hq3, hq1, lit(uint64(step)))
		add(&pre, "setp.le.u64", hp, hq2, hq3)
		add(&pre, "setp.ge.and.u64", hp, hq2, lit(uint64(step)), hp)
		if step&(step-1) == 0 {
			add(&pre, "and.b64", hq3, hq2, lit(uint64(step-1)))
		} else {
			add(&pre, "rem.u64", hq3, hq2, lit(uint64(step)))
		}
		add(&pre, "setp.eq.and.u64", hp, hq3, ptx.Int(0), hp)
		add(&pre, "bra", ptx.Sym(h.loop.label)).when("%hp")
	}
	for _, c := range checks {
		add(&pre, "mul.lo.u64", hq2, hq1, lit(uint64(c.imm)))
		add(&pre, "add.u64", ptx.Reg(c.r), ptx.Reg(c.r), hq2)
	}
	for _, r := range cnames {
		// R after 4U-1 steps (U >= 1 here), masked; then the last add
		// and mask as the original does them.
		c := counters[r]
		imm := c.imm.Int
		fourU()
		add(&pre, "mul.lo.u64", hq2, hq1, c.imm)
		add(&pre, "add.u64", hq2, hq2, lit(-uint64(imm)))
		add(&pre, "add.u64", hq2, ptx.Reg(r), hq2)
		add(&pre, "and.b64", hq2, hq2, mask32)
		add(&pre, "add.u64", ptx.Reg(c.x), hq2, c.imm)
		add(&pre, "and.b64", ptx.Reg(r), ptx.Reg(c.x), mask32)
	}
	for _, r := range names {
		if st := steps[r]; st.late {
			fourU()
			if st.step.Kind == ptx.OpInt && st.step.Int == 1 {
				add(&pre, "add.u64", ptx.Reg(r), ptx.Reg(r), hq1)
				continue
			}
			add(&pre, "mul.lo.u64", hq2, hq1, st.step)
			add(&pre, "add.u64", ptx.Reg(r), ptx.Reg(r), hq2)
		}
	}
	if promo != nil && promo.ld != nil {
		add(&pre, "ld.global.b64", hcd0, ptx.Addr(promo.stPtr, 0))
	}
	// An error exit on a predicate the loop does not change (the thread
	// loop's test that its inner iteration is the row's: %ptripx) is
	// taken in every iteration or in none: tested once, before the
	// copies. (A failing thread then ends before its first iteration
	// instead of after it; either way the launch fails.)
	invariantExit := map[int]bool{}
	for i, k := range core {
		l := ls[k]
		if l.op == "bra" && l.in.Guard != "" && len(defs[l.in.Guard]) == 0 && (strings.HasPrefix(l.arg(0), "$Lck") || strings.HasPrefix(l.arg(0), "$Lerr")) {
			invariantExit[i] = true
			pre = append(pre, l.clone())
		}
	}
	main = append(main, unrolled)
	copiesAt := len(main)
	for j := int64(0); j < unrollBy; j++ {
		main = append(main, &pline{comment: fmt.Sprintf(" x86 0x%s, the loop body: copy %d of %d", strings.TrimPrefix(h.name, "$Lx"), j+1, unrollBy)})
		for i, k := range core {
			l := ls[k]
			if d := l.defs(); feeder[i] || invariantExit[i] || checkLine(checks, i) || len(d) == 1 && (steps[d[0]] != nil && steps[d[0]].at == i || counters[d[0]] != nil || counterX[d[0]]) {
				continue
			}
			if promo != nil && promo.ld != nil && l == promo.ld {
				add(&main, "mov.b64", l.in.Args[0], hcd0)
				continue
			}
			if promo != nil && l == promo.st {
				add(&main, "mov.b64", hcd0, l.in.Args[1])
				continue
			}
			c := l.clone()
			if ai := addrArg(c); ai >= 0 {
				if r, off, ok := splitAddr(c.in.Args[ai]); ok && steps[r] != nil && !steps[r].late {
					n := j // steps taken since the copies began
					if i > steps[r].at {
						n++
					}
					switch st := steps[r]; {
					case st.wide == "":
						c.in.Args[ai] = ptx.Addr(r, off+n*st.imm)
					case n > 0:
						add(&main, "mad.wide.s32", hw0, ptx.Reg(st.wide), ptx.Int(n), ptx.Reg(r))
						c.in.Args[ai] = ptx.Addr("%hw0", off)
					}
				}
			}
			main = append(main, c)
		}
	}
	main = append(main[:copiesAt], hoistLoads(main[copiesAt:])...)
	for _, r := range names {
		switch st := steps[r]; {
		case st.wide != "":
			add(&main, "mad.wide.s32", ptx.Reg(r), ptx.Reg(st.wide), ptx.Int(unrollBy), ptx.Reg(r))
		case !st.late:
			add(&main, "add.u64", ptx.Reg(r), ptx.Reg(r), lit(uint64(unrollBy*st.imm)))
		}
	}
	add(&main, "sub.u32", hn, hn, ptx.Int(1))
	add(&main, "setp.ne.u32", hp, hn, ptx.Int(0))
	add(&main, "bra", ptx.Sym(unrolled.label)).when("%hp")
	if promo != nil {
		add(&main, "st.global.b64", ptx.Addr(promo.stPtr, 0), hcd0)
	}
	for i, k := range core {
		if feeder[i] {
			main = append(main, ls[k].clone())
		}
	}
	main = append(main, h.cmp.clone())
	add(&main, "bra", ptx.Sym(h.out.label)).when("!%pbr")
	out := make([]*pline, 0, len(ls)+len(pre)+len(main)+1)
	out = append(out, ls[:li]...)
	out = append(out, &pline{comment: fmt.Sprintf(" unrolled by %d: the loop's trip count is known here (see unroll.go)", unrollBy)})
	out = append(out, pre...)
	out = append(out, main...)
	out = append(out, ls[li:]...)
	return out
}

// rowCheck is a side exit of a loop's body taken when register r,
// which the body steps by imm, equals x, which it does not change:
// "add.u64 r, r, imm; setp.ne.u64 p, x, r; @!p bra L" at lines add, set
// and br of the body.
type rowCheck struct {
	r            string
	x            ptx.Operand
	imm          int64
	add, set, br int
}

// rowChecks finds the rowCheck side exits among the body's lines core
// (defs: the lines of core that write each register; cmp the loop's
// exit test): r written only by its add and read only by the compare,
// the predicate read only by the branch.
func rowChecks(ls []*pline, core []int, defs map[string][]int, cmp *pline) []rowCheck {
	var out []rowCheck
	for i := 0; i+1 < len(core); i++ {
		set, br := ls[core[i]], ls[core[i+1]]
		if set.guard() != "" || set.op != "setp.ne.u64" && set.op != "setp.eq.u64" || set.nargs() != 3 || br.op != "bra" || br.nargs() != 1 {
			continue
		}
		p := set.arg(0)
		if br.in.Guard != p || br.in.GuardNeg != (set.op == "setp.ne.u64") || !strings.HasPrefix(br.arg(0), "$Lck") {
			continue // taken when the two are equal, to an error check
		}
		a, b := set.in.Args[1], set.in.Args[2]
		if !isReg(b) || len(defs[b.Name]) != 1 {
			a, b = b, a
		}
		if !isReg(b) || len(defs[b.Name]) != 1 || isReg(a) && len(defs[a.Name]) != 0 || !isReg(a) && !isImm(a) {
			continue
		}
		r := b.Name
		at := defs[r][0]
		add := ls[core[at]]
		if at >= i || add.guard() != "" || add.op != "add.u64" || add.nargs() != 3 || add.arg(0) != r || add.arg(1) != r || !isImm(add.in.Args[2]) || add.in.Args[2].Kind != ptx.OpInt {
			continue
		}
		imm := add.in.Args[2].Int
		if imm == 0 || imm >= 1<<28 || imm <= -(1<<28) || has(cmp.uses(), r) {
			continue
		}
		ok := true
		for j, k := range core {
			if j != at && j != i && has(ls[k].uses(), r) || j != i+1 && has(ls[k].uses(), p) && j > i {
				ok = false
			}
		}
		if ok {
			out = append(out, rowCheck{r: r, x: a, imm: imm, add: at, set: i, br: i + 1})
		}
	}
	return out
}

// checkLine reports whether line i of the body belongs to one of checks.
func checkLine(checks []rowCheck, i int) bool {
	for _, c := range checks {
		if i == c.add || i == c.set || i == c.br {
			return true
		}
	}
	return false
}

// maxHoistedLoads is the most loads of the unrolled copies hoistLoads
// moves ahead of them (each holds its value in a register of its own).
const maxHoistedLoads = 16

// hoistLoads moves the loads of the unrolled copies seg ahead of the
// copies, each into a register of its own (%hl<N>, %hld<N>, %hlw<N> or
// %hlf<N> as its destination's class; its address in %hx<N> where a
// mad.wide.s32 computed it), and leaves a move from that register where
// the load was, which the clean-up after unrolling propagates. The copies then start
// with every load of the four iterations in flight, where ptxas had
// issued them pair by pair, each pair after the adds of the one before
// (trmm's k loop on an H100: 404 ms at the JIT's default level, 226 ms
// at level 1, the reference 151). Only where the copies have no store,
// branch or guarded line (nothing a load could be moved across: a
// sunk store's location is apart from every load's, unroll checked), and
// only loads whose address no line of the copies computes but the
// mad.wide.s32 right before them.
func hoistLoads(seg []*pline) []*pline {
	for _, l := range seg {
		if !l.isInst() {
			continue
		}
		if l.guard() != "" || l.op == "bra" || strings.HasPrefix(l.op, "st.") || strings.HasPrefix(l.op, "atom.") || strings.HasPrefix(l.op, "red.") {
			return seg
		}
	}
	defined := map[string]bool{}
	var head, rest []*pline
	n64, n32, nx := 0, 0, 0
	for _, l := range seg {
		if !l.isInst() {
			rest = append(rest, l)
			continue
		}
		if hl := hoistLoad(l, rest, defined, &n64, &n32, &nx); hl != nil {
			if hl.mad != nil {
				rest = rest[:len(rest)-1] // the address moves with it
				head = append(head, hl.mad)
			}
			head = append(head, hl.load)
			rest = append(rest, hl.move)
			for _, d := range hl.move.defs() {
				defined[d] = true
			}
			continue
		}
		rest = append(rest, l)
		for _, d := range l.defs() {
			defined[d] = true
		}
	}
	if len(head) == 0 {
		return seg
	}
	return append(head, rest...)
}

// hoisted is one load hoistLoads moves: its address's mad.wide.s32 (or
// nil), the load into its own register, and the move left in its place.
type hoisted struct{ mad, load, move *pline }

// hoistLoad returns how to hoist load l of the copies (rest the lines
// before it, defined the registers they write), or nil.
func hoistLoad(l *pline, rest []*pline, defined map[string]bool, n64, n32, nx *int) *hoisted {
	if !strings.HasPrefix(l.op, "ld.global.") || strings.Contains(l.op, ".v") || *n64+*n32 >= maxHoistedLoads {
		return nil
	}
	ai := addrArg(l)
	if ai != 1 || l.nargs() != 2 || !isReg(l.in.Args[0]) {
		return nil
	}
	bits := 0
	switch {
	case strings.HasSuffix(l.op, "64"):
		bits = 64
	case strings.HasSuffix(l.op, "32"):
		bits = 32
	default:
		return nil
	}
	h := &hoisted{}
	addr := l.in.Args[1]
	check := regsIn(addr)
	if r, off, ok := splitAddr(addr); ok && r == "%hw0" {
		if len(rest) == 0 {
			return nil
		}
		m := rest[len(rest)-1]
		if m.op != "mad.wide.s32" || m.arg(0) != "%hw0" {
			return nil
		}
		x := fmt.Sprintf("%%hx%d", *nx)
		h.mad = m.clone()
		h.mad.in.Args[0] = ptx.Reg(x)
		h.mad.touch()
		addr = ptx.Addr(x, off)
		check = m.uses()
	}
	for _, r := range check {
		if defined[r] {
			return nil
		}
	}
	// The register of the destination's class, so that the move left
	// behind is a copy the clean-up propagates.
	prefix := map[string]string{"b64": "%hl", "f64": "%hld", "b32": "%hlw", "f32": "%hlf"}[regClass(l.arg(0))]
	if prefix == "" || size(regClass(l.arg(0)))*8 != bits {
		return nil
	}
	n := n64
	if bits == 32 {
		n = n32
	}
	reg := fmt.Sprintf("%s%d", prefix, *n)
	*n++
	h.load = l.clone()
	h.load.in.Args[0], h.load.in.Args[1] = ptx.Reg(reg), addr
	h.load.touch()
	h.move = inst(fmt.Sprintf("mov.b%d", bits), l.in.Args[0], ptx.Reg(reg))
	if h.mad != nil {
		*nx++
	}
	return h
}

// hoistRegKinds are the registers hoist.go and unroll.go name, by prefix,
// in the order hoistDecls declares them: a scalar one is one register
// (%hp, %hn), the others a numbered range (%hq always hoistRegs of them).
var hoistRegKinds = []struct {
	prefix string
	typ    ptx.Type
	scalar bool
}{
	{"%hq", ptx.B64, false}, {"%hp", ptx.Pred, true}, {"%hv", ptx.B64, false}, {"%hfd", ptx.F64, false},
	{"%hs", ptx.B32, false}, {"%hcd", ptx.F64, false}, {"%hw", ptx.B64, false}, {"%hn", ptx.B32, true},
	{"%hl", ptx.B64, false}, {"%hld", ptx.F64, false}, {"%hlw", ptx.B32, false}, {"%hlf", ptx.F32, false},
	{"%hx", ptx.B64, false},
}

// hoistDecls declares the registers of hoist.go and unroll.go that ls
// uses.
func hoistDecls(ls []*pline) []ptx.Stmt {
	maxN := map[string]int{}
	note := func(rs []string) {
		for _, r := range rs {
			// Every kind's prefix starts "%h": the other registers, most
			// of them, are passed over at once. (Reading a number after
			// each kind's prefix in every register made strconv build an
			// error for nearly every try: 9% of the generator's time on
			// heat3d's kernels, 0.24 of 2.6 s.)
			if !strings.HasPrefix(r, "%h") {
				continue
			}
			for _, k := range hoistRegKinds {
				if !strings.HasPrefix(r, k.prefix) {
					continue
				}
				if k.scalar {
					if r == k.prefix {
						maxN[r] = 1
					}
				} else if n, err := strconv.Atoi(r[len(k.prefix):]); err == nil {
					maxN[k.prefix] = max(maxN[k.prefix], n+1)
				}
			}
		}
	}
	for _, l := range ls {
		if !l.isInst() {
			continue
		}
		note(l.uses())
		note(l.defs())
	}
	var out []ptx.Stmt
	for _, k := range hoistRegKinds {
		n := maxN[k.prefix]
		switch {
		case n == 0:
			continue
		case k.scalar:
			n = 0
		case k.prefix == "%hq":
			n = hoistRegs
		}
		out = append(out, &ptx.RegDecl{Name: k.prefix, Type: k.typ, Count: n})
	}
	return out
}
