package accel

import (
	"fmt"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptxgen"
)

// Bounded probing (RATIONALE).
//
// A probed iteration of the mapped level (a row) may hold millions of
// inner iterations: gemm's row at 1600×1800×2000 runs 3.6 M, which the
// recording interpreter takes seconds over. So a row records only the
// first boundedIterations iterations of each instance of every loop inside
// it, and at the next arrival at that loop's header hands the rest of the
// instance to the fast engine (the jit by default), which stops only where
// the loop leaves. What the skipped iterations touch comes from the model
// the recorded ones give:
//
//   - each access that ran in every recorded iteration, at bytes that move
//     by one shift per iteration (or whose window moves affinely: a
//     triangular inner loop), is extended over the instance's iterations;
//   - the instance's iteration count n comes from the general registers
//     that moved by a constant step at every recorded arrival and, at the
//     exit, have moved by a whole number of steps: where the recorded
//     iterations ran the same number of guest instructions each, the
//     instructions the skipped ones ran give n when such a register
//     agrees; else (an if in the body that the prefix never took) those
//     registers must all agree (count). A loop is
//     skipped only where every way out of it is a latch (an edge back to
//     its header, directly or through a block of register moves, beside
//     the exit), so that n iterations are n arrivals; a loop tested at its
//     top is recorded whole.
//
// Accesses are modelled per x86 instruction, whichever lifted copy of it
// ran. An instance whose recorded iterations do not fit the model (an
// access seen in some iterations only, bytes that do not move affinely, no
// register that counts) is recorded to its end, as before; so is every
// loop of -O0 code, whose counters live in stack slots. The counts feed
// the 2D kernel's and the schedule's inner trip counts as the breakpoints
// counted them; a part's thread-loop rows are checked even on the
// recorded ones only.
//
// What a prefix can show, and what it cannot. A dependence between rows
// made by affine accesses shows in the extended spans wherever in the row
// it lies (row i's tail overlapping row i+1's head is found though the
// prefixes are apart), so the untrusted-profile check (independence.go)
// keeps its strength for affine code. An access whose address does not
// follow the prefix's model later in the row (data-dependent, or guarded
// by a condition first true after the prefix) is not seen: as conditional
// code was before, it is left to the profile's proof, and every access of
// the kernel is still checked against its site's footprint, so it cannot
// leave the arrays the guards cleared. The CPU fallback and the kernel's
// trip-count checks keep the output exact when the counts are wrong.

// boundedIterations is how many iterations of each inner loop instance a
// probed row records (the steps and the affine checks need three states;
// one more checks them).
const boundedIterations = 4

// innerLoop is a loop inside the level's body, as the lifted blocks show
// it, that a probed row may skip through.
type innerLoop struct {
	header uint64
	body   map[uint64]bool
	exits  map[uint64]bool // blocks outside body that body leaves to
	// late are the general registers (0-15) written only on the way back
	// to the header after the exit test (in a block of moves that goesTo
	// it): the iteration that leaves does not advance them, so at the
	// exit they have moved one step fewer than there were arrivals.
	late [16]bool
	// exitRegs are the general registers the compares deciding the
	// loop's exits read (where each reads them straight from the slot).
	exitRegs [16]bool
}

// innerLoops finds the loops of the lifted level below its header whose
// instances a probed row may skip through: headers that start a block
// wherever their code is (no block runs into one without a breakpoint
// seeing it), and whose every exit edge leaves from a latch (skippable).
func (sp *spot) innerLoops() []*innerLoop {
	var out []*innerLoop
	for h := range sp.blocks {
		if h == sp.header {
			continue
		}
		body := sp.loopBlocks(h)
		isLoop := false
		for b := range body {
			for _, s := range sp.blocks[b].Successors() {
				isLoop = isLoop || s == h
			}
		}
		if !isLoop || !sp.skippable(h, body) {
			continue
		}
		l := &innerLoop{header: h, body: body, exits: map[uint64]bool{}}
		backOnly := map[uint64]bool{}
		for b := range body {
			succ := sp.blocks[b].Successors()
			leaves := false
			for _, s := range succ {
				if !body[s] {
					l.exits[s] = true
					leaves = true
				}
			}
			for _, s := range succ {
				if leaves && body[s] && s != h && sp.goesTo(s, h) {
					backOnly[s] = true
				}
			}
		}
		var early [16]bool
		for b := range body {
			for _, in := range sp.blocks[b].Insts {
				if in.Op != gvinst.OpPut || in.Dst < gvinst.S0 || in.Dst >= gvinst.S0+16 {
					continue
				}
				if r := int(in.Dst - gvinst.S0); backOnly[b] {
					l.late[r] = true
				} else {
					early[r] = true
				}
			}
		}
		for r := range l.late {
			l.late[r] = l.late[r] && !early[r]
		}
		for b := range body {
			sp.markExitRegs(sp.blocks[b], body, &l.exitRegs)
		}
		out = append(out, l)
	}
	return out
}

// markExitRegs marks in regs the general registers that the compare
// deciding b's way out of body reads, when b leaves body by a BRANCH on a
// CMP whose operands are read from (or were just written to) guest
// registers of b.
func (sp *spot) markExitRegs(b *gvinst.VBlock, body map[uint64]bool, regs *[16]bool) {
	n := len(b.Insts)
	if n < 2 || b.Insts[n-1].Op != gvinst.OpBranch {
		return
	}
	leaves := false
	for _, s := range b.Successors() {
		leaves = leaves || !body[s]
	}
	if !leaves {
		return
	}
	cond := b.Insts[n-1].Src[0]
	for k := n - 2; k >= 0; k-- {
		in := &b.Insts[k]
		if in.Dst != cond || in.Op == gvinst.OpPut {
			continue
		}
		if in.Op != gvinst.OpCmp {
			return
		}
		ops := []gvinst.Reg{in.Src[0]}
		if !in.HasImm {
			ops = append(ops, in.Src[1])
		}
		for _, v := range ops {
			if slot, ok := b.SlotHolding(k, v); ok && slot >= gvinst.S0 && slot < gvinst.S0+16 {
				regs[slot-gvinst.S0] = true
			}
		}
		return
	}
}

// skippable reports whether the loop of header h with blocks body may be
// skipped through: h starts a block wherever its code is lifted, and each
// block that leaves body also goes back to h (directly, or through a
// block that only jumps there), so that an iteration leaves only at its
// end.
func (sp *spot) skippable(h uint64, body map[uint64]bool) bool {
	for a, b := range sp.blocks {
		if a == h {
			continue
		}
		for _, g := range b.Guest {
			if g.Addr == h {
				return false // h's code also runs inside another block
			}
		}
	}
	for a := range body {
		b := sp.blocks[a]
		if b == nil {
			return false
		}
		leaves, back := false, false
		for _, s := range b.Successors() {
			leaves = leaves || !body[s]
			back = back || s == h || sp.goesTo(s, h)
		}
		if leaves && !back {
			return false
		}
	}
	return true
}

// goesTo reports whether block a only moves registers and jumps to h: a
// rotated loop's back edge often passes through such a block. (A loop
// tested at its top, whose body would go back to h, cannot have such a
// body: with no arithmetic and no memory access it could not end.)
func (sp *spot) goesTo(a, h uint64) bool {
	b := sp.blocks[a]
	if b == nil {
		return false
	}
	if succ := b.Successors(); len(succ) != 1 || succ[0] != h {
		return false
	}
	for _, in := range b.Insts {
		switch in.Op {
		case gvinst.OpGet, gvinst.OpPut, gvinst.OpMov, gvinst.OpLi, gvinst.OpJmp:
		default:
			return false
		}
	}
	return true
}

// loopFrame is one instance of an inner loop being walked in a probed
// row.
type loopFrame struct {
	loop     *innerLoop
	arrivals int // header arrivals so far
	// flat frames record into their parent's buffers: the instance is
	// recorded to its end.
	flat bool
	// iters are the recorded iterations' accesses: per iteration, per
	// channel (probeRecord.channels), per site.
	iters [][][]spanList
	// regs are the general registers at arrivals 0..boundedIterations,
	// and insns the guest instructions run by then.
	regs  [][16]uint64
	insns []uint64
	// cmps are the operands of the loop's exit compare in the recorded
	// iterations, and jumped the arrivals of an instance a dry row
	// jumped through (0: not jumped); its last iteration records into
	// tail, which the model's extension covers (dryrows.go).
	cmps   [][2]uint64
	jumped uint64
	tail   [][]spanList
}

// current is where the accesses of f's current iteration go, when f
// records them.
func (f *loopFrame) current() [][]spanList {
	if f.jumped > 0 {
		return f.tail
	}
	return f.iters[len(f.iters)-1]
}

// rowWalk follows one probed row through its inner loops: it keeps the
// loop instances open at the current point, sends the recorded accesses
// to the innermost one's current iteration, and skips instances past
// their first boundedIterations iterations.
type rowWalk struct {
	sp     *spot
	rec    *probeRecord
	root   [][]spanList // per channel: where the row's accesses end up
	frames []*loopFrame
	// insns counts the guest instructions the row has run so far on its
	// engines (engine is the row's main one).
	engine gvinst.Engine
	base   uint64
	fast   uint64 // run by the skipping engines, or jumped (estimated)
	ran    uint64 // run by the skipping engines
	// skipped are, per inner loop header, the arrivals the skipping
	// engines ran (the breakpoints did not see them).
	skipped map[uint64]uint64
	// dry is set on a dry row (dryrows.go): its loops are jumped through,
	// not skipped.
	dry *dryRun
}

// newRowWalk starts the walk of a probed row run on engine, recording
// into rec (reset, and the schedule's watches started).
func (sp *spot) newRowWalk(rec *probeRecord, engine gvinst.Engine) *rowWalk {
	w := &rowWalk{sp: sp, rec: rec, engine: engine, base: engine.Stats().GuestInsns, skipped: map[uint64]uint64{}}
	w.root = rec.channels()
	rec.cur = w.root
	return w
}

// insns is the guest instructions the row has run so far, the
// iterations a dry row jumped through counted as if run.
func (w *rowWalk) insns() uint64 {
	return w.engine.Stats().GuestInsns - w.base + w.fast
}

// executed is the guest instructions the row's engines have run so far.
func (w *rowWalk) executed() uint64 {
	return w.engine.Stats().GuestInsns - w.base + w.ran
}

// loopAt is the skippable inner loop of header pc, or nil.
func (sp *spot) loopAt(pc uint64) *innerLoop {
	for _, l := range sp.loops {
		if l.header == pc {
			return l
		}
	}
	return nil
}

// sink is where the accesses of the innermost open instance go.
func (w *rowWalk) sink() [][]spanList {
	for i := len(w.frames) - 1; i >= 0; i-- {
		f := w.frames[i]
		if !f.flat {
			return f.current()
		}
	}
	return w.root
}

// newBuffers makes one iteration's empty buffers, shaped as the root.
func (w *rowWalk) newBuffers() [][]spanList {
	out := make([][]spanList, len(w.root))
	for c := range out {
		out[c] = make([]spanList, len(w.root[c]))
		for s := range out[c] {
			out[c][s].fill = w.root[c][s].fill
		}
	}
	return out
}

// arrive handles a breakpoint stop of the row at pc: the instances pc
// leaves end, and an arrival at an inner loop's header starts an instance
// or its next iteration. It returns the frame to skip from here (nil when
// none) and whether pc is one of the walk's own breakpoints.
func (w *rowWalk) arrive(cpu *gvinst.CPU) (skip *loopFrame, mine bool, err error) {
	pc := cpu.PC
	for len(w.frames) > 0 && !w.frames[len(w.frames)-1].loop.body[pc] {
		mine = true
		if err := w.pop(0); err != nil {
			return nil, true, err
		}
	}
	l := w.sp.loopAt(pc)
	if l == nil {
		for _, o := range w.sp.loops {
			mine = mine || o.exits[pc]
		}
		w.rec.cur = w.sink()
		return nil, mine, nil
	}
	var f *loopFrame
	if n := len(w.frames); n > 0 && w.frames[n-1].loop == l {
		f = w.frames[n-1]
		if f.jumped > 0 {
			return nil, true, fmt.Errorf("the inner loop at %#x ran past the %d arrivals its exit test gave", l.header, f.jumped)
		}
	} else {
		f = &loopFrame{loop: l}
		w.frames = append(w.frames, f)
	}
	f.arrivals++
	if f.arrivals <= boundedIterations+1 {
		var regs [16]uint64
		copy(regs[:], cpu.State[gvinst.S0:gvinst.S0+16])
		f.regs = append(f.regs, regs)
		f.insns = append(f.insns, w.insns())
	}
	switch {
	case f.flat:
	case f.arrivals <= boundedIterations:
		f.iters = append(f.iters, w.newBuffers())
	default:
		// Arrival boundedIterations: skip the rest when the recorded
		// iterations fit the model, else record the instance to its end.
		if w.fits(f) {
			skip = f
		} else {
			w.flatten(f)
		}
	}
	w.rec.cur = w.sink()
	return skip, true, nil
}

// flatten merges the recorded iterations of f into its parent and records
// the rest of the instance there.
func (w *rowWalk) flatten(f *loopFrame) {
	dst := w.parentSink(f)
	for _, it := range f.iters {
		for c := range it {
			for s := range it[c] {
				dst[c][s].merge(&it[c][s])
			}
		}
	}
	f.flat, f.iters = true, nil
}

// parentSink is where the accesses of f's parent instance go.
func (w *rowWalk) parentSink(f *loopFrame) [][]spanList {
	for i := len(w.frames) - 1; i >= 0; i-- {
		if w.frames[i] != f {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			if p := w.frames[j]; !p.flat {
				return p.current()
			}
		}
		break
	}
	return w.root
}

// steps are the general registers that moved by one constant step at
// every recorded arrival of f (the candidates for its counters).
func (f *loopFrame) steps() map[int]uint64 {
	out := map[int]uint64{}
	for r := 0; r < 16; r++ {
		d := f.regs[1][r] - f.regs[0][r]
		if d == 0 {
			continue
		}
		ok := true
		for t := 2; t < len(f.regs); t++ {
			ok = ok && f.regs[t][r]-f.regs[t-1][r] == d
		}
		if ok {
			out[r] = d
		}
	}
	return out
}

// fits reports whether the recorded iterations of f fit the model the
// skipped ones are extended by: a register counts them, and every
// access either ran in each of them and moves affinely, or ran in none
// (a watch's channel may hold its first two only).
func (w *rowWalk) fits(f *loopFrame) bool {
	if len(f.iters) != boundedIterations || len(f.steps()) == 0 {
		return false
	}
	for c := range f.iters[0] {
		for _, g := range w.sp.accessGroups() {
			if _, ok := extension(f.access(c, g), c); !ok {
				return false
			}
		}
	}
	return true
}

// access is what one access (the sites of group g: the lifted copies of
// one x86 instruction) touched in each recorded iteration of f, channel c.
func (f *loopFrame) access(c int, g []int) []spanList {
	out := make([]spanList, len(f.iters))
	for t, it := range f.iters {
		for _, s := range g {
			out[t].merge(&it[c][s])
		}
		out[t].normalize()
	}
	return out
}

// accessGroups are the kernel's sites grouped by x86 access (siteKey):
// bounded probing models each access, whichever lifted copy of it ran.
func (sp *spot) accessGroups() [][]int {
	if sp.groups == nil {
		at := map[[2]uint64]int{}
		for _, site := range sp.kernel.Sites {
			k := siteKey(site)
			i, ok := at[k]
			if !ok {
				i = len(sp.groups)
				at[k] = i
				sp.groups = append(sp.groups, nil)
			}
			sp.groups[i] = append(sp.groups[i], site.ID)
		}
	}
	return sp.groups
}

// extensionKind says how the recorded iterations of one access extend.
type extensionKind int

const (
	extendNone   extensionKind = iota // ran in no recorded iteration
	extendEarly                       // a watch's: the first two only, as recorded
	extendShift                       // spans moving by one shift
	extendWindow                      // a window whose ends move affinely
)

// extension classifies one access's recorded iterations its (one span
// list per iteration) of channel c.
func extension(its []spanList, c int) (extensionKind, bool) {
	seen := 0
	late := false
	for t := range its {
		if its[t].seen {
			seen++
			late = late || t >= 2
		}
	}
	switch {
	case seen == 0:
		return extendNone, true
	case seen < len(its):
		return extendEarly, c > 0 && !late
	}
	if _, ok := shiftOf(its); ok {
		return extendShift, true
	}
	if _, _, ok := windowSteps(its); ok {
		return extendWindow, true
	}
	return 0, false
}

// shiftOf is the shift by which every span of an access moves per
// recorded iteration, when they all move by one.
func shiftOf(its []spanList) (int64, bool) {
	a := &its[0]
	if a.overflow || len(a.spans) == 0 || len(its) < 2 || len(its[1].spans) == 0 {
		return 0, false
	}
	d := int64(its[1].spans[0].Lo - a.spans[0].Lo)
	for t := 1; t < len(its); t++ {
		b := &its[t]
		if b.overflow || len(b.spans) != len(a.spans) {
			return 0, false
		}
		for i := range a.spans {
			m := uint64(d * int64(t))
			if b.spans[i].Lo-a.spans[i].Lo != m || b.spans[i].Hi-a.spans[i].Hi != m {
				return 0, false
			}
		}
	}
	return d, true
}

// windowSteps are the steps of an access's window ends per recorded
// iteration, when both move affinely.
func windowSteps(its []spanList) (int64, int64, bool) {
	w0, w1 := its[0].window, its[1].window
	dl, dh := int64(w1.Lo-w0.Lo), int64(w1.Hi-w0.Hi)
	for t := 2; t < len(its); t++ {
		wt := its[t].window
		if int64(wt.Lo-w0.Lo) != dl*int64(t) || int64(wt.Hi-w0.Hi) != dh*int64(t) {
			return 0, 0, false
		}
	}
	return dl, dh, true
}

// skip runs the rest of instance f (at its arrival boundedIterations) on
// the spot's skipper, a fast engine that stops wherever an inner loop
// leaves (a stop inside f's loop, where a loop nested in it leaves, goes
// on), to where f's loop leaves, then ends the instance with its accesses
// extended over the iteration count the registers give. It returns the
// engine's stop (at one of the loop's exits, the level's header or exits,
// or any other stop the caller handles).
func (w *rowWalk) skip(cpu *gvinst.CPU, f *loopFrame) (gvinst.Stop, error) {
	sp, l := w.sp, f.loop
	w.rec.cur = nil // nothing records while the fast engine runs
	n0 := sp.skipper.Stats().GuestInsns
	st := sp.skipper.Run(cpu, 0)
	for st.Kind == gvinst.StopBreakpoint && l.body[st.PC] {
		st = sp.skipper.Run(cpu, 0)
	}
	ran := sp.skipper.Stats().GuestInsns - n0
	w.fast += ran
	w.ran += ran
	if st.Kind != gvinst.StopBreakpoint || !l.exits[st.PC] {
		return st, nil
	}
	n, err := f.count(cpu, ran)
	if err != nil {
		return st, fmt.Errorf("the inner loop at %#x: %w", l.header, err)
	}
	w.skipped[l.header] += n - uint64(len(f.regs))
	if err := w.pop(n); err != nil {
		return st, err
	}
	w.rec.cur = w.sink()
	return st, nil
}

// count is the number of iterations (arrivals) of instance f, skipped at
// arrival boundedIterations, now at its exit after the fast engine ran ran
// guest instructions. A register that moved by a constant step at every
// recorded arrival and has moved by a whole number of them since counts
// them (a remainder, say, may look like one over the prefix and not be).
// Where the recorded iterations ran the same instructions each, the
// skipped ones ran that many each (the last one up to its exit), which
// gives the count if a register agrees; else (uneven iterations, or
// skipped ones that took another path through the body) the registers
// that count must all agree.
func (f *loopFrame) count(cpu *gvinst.CPU, ran uint64) (uint64, error) {
	last := uint64(len(f.insns) - 1) // the arrival the skip began at
	counts := map[uint64][]int{}
	for r, d := range f.steps() {
		if m, ok := moves(f.regs[0][r], cpu.State[gvinst.S0+gvinst.Reg(r)], d); ok {
			if f.loop != nil && f.loop.late[r] {
				m++
			}
			if m > last {
				counts[m] = append(counts[m], r)
			}
		}
	}
	per := f.insns[1] - f.insns[0]
	even := per > 0
	for t := 2; t < len(f.insns); t++ {
		even = even && f.insns[t]-f.insns[t-1] == per
	}
	if even {
		// The last iteration leaves before the path back to the header
		// (a block of moves, say): it may run fewer.
		n := last + (ran+per-1)/per
		if _, ok := counts[n]; ok {
			return n, nil
		}
		// The skipped iterations took another path through the body
		// than the recorded ones (an if the prefix never took), or the
		// registers do not count them. Only the registers the loop's
		// exit test compares say when it left; the others may have
		// moved by other steps on that path.
		if len(counts) != 1 {
			return 0, fmt.Errorf("its iterations ran %d times by their instructions, which no register counts, and %d registers count them differently", n, len(counts))
		}
		for m, rs := range counts {
			for _, r := range rs {
				if f.loop != nil && f.loop.exitRegs[r] {
					return m, nil
				}
			}
		}
		return 0, fmt.Errorf("its iterations ran %d times by their instructions, which no register the exit test compares counts", n)
	}
	if len(counts) != 1 {
		return 0, fmt.Errorf("%d registers count its iterations differently", len(counts))
	}
	for n := range counts {
		return n, nil
	}
	return 0, nil
}

// moves is how many steps d take a 64-bit (or, failing that, a 32-bit)
// register from a to b.
func moves(a, b, d uint64) (uint64, bool) {
	if m, ok := stepsBetween(int64(b-a), int64(d)); ok {
		return m, true
	}
	return stepsBetween(int64(int32(uint32(b)-uint32(a))), int64(int32(uint32(d))))
}

func stepsBetween(diff, d int64) (uint64, bool) {
	if d == 0 || diff%d != 0 || diff/d <= 0 || diff/d > 1<<40 {
		return 0, false
	}
	return uint64(diff / d), true
}

// pop ends the innermost instance: its recorded iterations go to its
// parent as they are, or, when it was skipped after them, extended over
// its n iterations (n is 0 when it was not skipped).
func (w *rowWalk) pop(n uint64) error {
	f := w.frames[len(w.frames)-1]
	dst := w.parentSink(f)
	w.frames = w.frames[:len(w.frames)-1]
	if f.flat {
		return nil
	}
	if f.jumped > 0 {
		n = f.jumped
	}
	for c := range dst {
		if n == 0 {
			for _, it := range f.iters {
				for s := range dst[c] {
					dst[c][s].merge(&it[c][s])
				}
			}
			continue
		}
		// Each access extended as one, into its first copy's list.
		for _, g := range w.sp.accessGroups() {
			if err := extend(&dst[c][g[0]], f.access(c, g), c, n); err != nil {
				return fmt.Errorf("the inner loop at %#x: %w", f.loop.header, err)
			}
		}
	}
	return nil
}

// extend adds to dst what one access of channel c touches over n
// iterations of an instance whose first ones its recorded.
func extend(dst *spanList, its []spanList, c int, n uint64) error {
	kind, ok := extension(its, c)
	if !ok {
		return fmt.Errorf("an access does not fit the recorded iterations")
	}
	switch kind {
	case extendNone:
	case extendEarly:
		for t := range its {
			dst.merge(&its[t])
		}
	case extendShift:
		d, _ := shiftOf(its)
		a := &its[0]
		if d == 0 {
			dst.merge(a)
			return nil
		}
		hull, ok := moved(a.window, a.window, d, n)
		if !ok {
			return fmt.Errorf("an access leaves the address space")
		}
		if len(a.spans) == 1 && uint64(max(d, -d)) <= a.window.Hi-a.window.Lo {
			// One span that each iteration moves by at most its width:
			// the iterations cover one span.
			dst.add(hull.Lo, hull.Hi)
			return nil
		}
		column := len(a.spans) == 1 && !dst.seen && a.lat == nil
		for t := uint64(0); t < n && !dst.overflow; t++ {
			for _, r := range a.spans {
				dst.add(r.Lo+uint64(d)*t, r.Hi+uint64(d)*t)
			}
		}
		if dst.overflow {
			dst.addWindow(hull.Lo, hull.Hi)
		}
		if column {
			// One span moved farther than its width each iteration: a
			// lattice, whose shape the independence check may need once
			// the spans overflow (a column of more than maxSpans rows).
			r := a.spans[0]
			dst.lat = &lattice{lo: r.Lo, width: r.Hi - r.Lo, stride: d, count: n}
		}
	case extendWindow:
		dl, dh, _ := windowSteps(its)
		w := its[0].window
		lo, ok1 := moved(w, w, dl, n)
		hi, ok2 := moved(w, w, dh, n)
		if !ok1 || !ok2 {
			return fmt.Errorf("an access leaves the address space")
		}
		dst.addWindow(min(lo.Lo, w.Lo), max(hi.Hi, w.Hi))
	}
	return nil
}

// moved is the hull of span a and span b moved by d·(n-1) bytes, when it
// stays in the address space (below 2^62: guest addresses are far below).
func moved(a, b ptxgen.Range, d int64, n uint64) (ptxgen.Range, bool) {
	const top = 1 << 62
	if n == 0 {
		return a, true
	}
	if n-1 > 1<<40 || b.Hi > top || (n > 1 && uint64(max(d, -d)) > top/(n-1)) {
		return ptxgen.Range{}, false
	}
	off := d * int64(n-1)
	lo, hi := int64(b.Lo)+off, int64(b.Hi)+off
	if lo < 0 || hi > top {
		return ptxgen.Range{}, false
	}
	return ptxgen.Range{Lo: min(a.Lo, uint64(lo)), Hi: max(a.Hi, uint64(hi))}, true
}

// finish ends the row: every open instance ends (a row that leaves from
// inside inner loops), and the record's per-site ranges are set from what
// the row touched.
func (w *rowWalk) finish() error {
	for len(w.frames) > 0 {
		if err := w.pop(0); err != nil {
			return err
		}
	}
	w.rec.cur = w.root
	w.rec.finish()
	return nil
}

// countSkipped adds the n arrivals at inner header h that the fast engine
// ran in probed iteration it to what the breakpoints counted there: a
// part's inner trips, else the 2D kernel's (trips). A part whose thread
// loop was skipped keeps the rows it saw whole: the row open at the skip
// is dropped.
func (sp *spot) countSkipped(it int, h, n uint64, trips *uint64) {
	claimed := false
	for _, p := range sp.parts {
		o := &p.obs[it]
		switch h {
		case p.nest.Inner:
			o.trips += n
			claimed = true
		case p.nest.ThreadLoop:
			o.inRow, o.trips, o.cur = false, 0, nil
			claimed = true
		}
	}
	if !claimed && h == sp.inner && sp.countsInner() {
		*trips += n
	}
}
