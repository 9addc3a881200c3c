package accel

import (
	"fmt"
	"time"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptxgen"
)

// Dry rows (RATIONALE).
//
// A probed row used to run whole on the CPU: its first iterations of each
// inner loop instance recorded, the rest of the instance on the fast
// engine (bounded.go), so that the row's effects were the guest's and the
// GPU went on from the arrival after the probed ones. A row of gemm at
// 1600×1800×2000 is 3.6 M inner iterations, and the two or three probed
// rows plus the timing were 0.09-0.16 s of an H100 run of about a second
// (doitgen's 0.4 s of 1.6).
//
// A dry row records the same prefix of every inner loop instance, and
// then, instead of running the rest, jumps to its last iteration: the
// loop's exit compare, whose operands the recorded iterations showed
// moving by constant steps, gives the arrival at which it leaves
// (exitArrival, as for the mapped level), and the general registers that
// counted the recorded arrivals are set to their values at the last one.
// That iteration runs, the loop leaves, and the row goes on. What the
// jumped iterations touch comes from the recorded ones' model, as for a
// skipped instance; their instructions are counted at the recorded
// iterations' mean. A row then costs tens of iterations whatever its size.
//
// The jumped iterations store nothing, and neither does a string store
// (memset and memcpy, inlined as rep stos and rep movs): its run is
// probed, and its registers move as it would move them. So what the row
// computes is not the program's: every store a dry row makes is logged (its bytes before
// it), and once the rows are probed the log is put back and the CPU state
// set to the instance's first arrival. The guest is as it was, and the
// GPU runs the instance from arrival 0 (from = 0 in offload, as a replay
// does). Nothing of a dry row reaches the guest: a row that leaves the
// hot spot's blocks (a call into unknown code), runs a store the log
// cannot take back, faults, or whose jumped loop comes back
// to its header after the predicted last iteration is abandoned, its log
// put back, and the instance probed as before on the CPU.
//
// What keeps the output exact is what kept the skipped rows exact: the
// values a dry row computes from data (an accumulator after a jump) are
// wrong, but the kernels take from the rows only addresses, steps and
// trip counts, and every kernel checks each access against its site's
// footprint, and its inner trip counts (a thread that leaves an inner loop
// where the model said it would not fails the launch, which leaves the
// guest as it was and runs the instance on the CPU).

// ProbeTrace is what probing one instance of a hot spot gave: the values
// and footprints its launch is made from (Options.Probes).
type ProbeTrace struct {
	Entry string // the hot spot's header, as the report names it
	// Dry says the rows ran dry (jumped through their inner loops), and
	// From is the arrival the GPU runs the instance from (0 after dry
	// rows long enough that the GPU runs them too, else the arrival after
	// the probed rows).
	Dry  bool
	From uint64
	// Start are the live-in values at the instance's first arrival,
	// Steps their change per arrival, and Last the arrival that leaves.
	Start, Steps []uint64
	Last         uint64
	// InnerTrips are the inner loop's arrivals in each probed row (the
	// 2D kernel's trip counts), 0 where not counted.
	InnerTrips [3]uint64
	// Rows are, per access (its x86 address, and 1 for a store), the
	// bytes it touched in the first two rows: [lo, hi) each, an empty
	// range where it did not run.
	Rows map[[2]uint64][2]ptxgen.Range
	// RowInstructions are the guest instructions of each probed row,
	// jumped iterations counted at their recorded ones' mean.
	RowInstructions [3]float64
}

// traceProbe gives Options.Probes what the instance's probe gave.
func (sp *spot) traceProbe(dry bool, from uint64, start, steps []uint64, last uint64, rows *probedRows, byX86 map[[2]uint64]*siteObs) {
	if sp.a.opts.Probes == nil {
		return
	}
	t := ProbeTrace{Entry: sp.rep.Entry, Dry: dry, From: from, Start: start, Steps: steps, Last: last, InnerTrips: rows.innerTrips, RowInstructions: rows.rowInsns, Rows: map[[2]uint64][2]ptxgen.Range{}}
	for key, o := range byX86 {
		var r [2]ptxgen.Range
		for it := range r {
			if o.seen[it] {
				r[it] = ptxgen.Range{Lo: o.lo[it], Hi: o.hi[it]}
			}
		}
		t.Rows[key] = r
	}
	sp.a.opts.Probes(t)
}

// dryState is a spot's machinery for dry rows, made at the first use.
type dryState struct {
	made bool
	// off says why the spot's rows cannot run dry ("" when they can).
	off    string
	engine gvinst.Engine
	// exits are the inner loops' exit tests, by header, and undoSite the
	// probe site of the dry engine's store log.
	exits    map[uint64]*innerExit
	cmpAt    map[[3]uint64]*innerExit // each test's CMP: its block, x86 address and result register
	undoSite uint32
	cur      *dryRun
}

// innerExit is an inner loop's exit test, and the probe sites of its
// operands (site: A, site+1: B).
type innerExit struct {
	test ptxgen.ExitTest
	site uint32
}

// dryRun is one instance's dry probe: the CPU state at its first arrival
// and the bytes its stores overwrote, oldest first.
type dryRun struct {
	sp     *spot
	engine gvinst.Engine
	start  gvinst.CPU
	undo   []undoEntry
	err    error
	walk   *rowWalk
	// What an abandoned probe gives back: the spot's fatal error and the
	// report's probe counts as they were.
	fatal      error
	iterations int
	access     uint64
}

// undoEntry is what a store overwrote: size bytes at addr.
type undoEntry struct {
	addr uint64
	size int
	old  [16]byte
}

// startDry begins a dry probe of the instance at its first arrival, cpu:
// nil where the spot's rows cannot run dry.
func (sp *spot) startDry(cpu *gvinst.CPU) *dryRun {
	if sp.a.opts.WetProbes || !sp.dryReady() || cpu.State[gvinst.RFLAGS]&gvinst.FlagDF != 0 {
		return nil
	}
	d := &dryRun{sp: sp, engine: sp.dry.engine, start: *cpu, fatal: sp.fatal, iterations: sp.rep.ProbedIterations, access: sp.rep.ProbedAccesses}
	sp.dry.cur = d
	return d
}

// dryReady reports whether the spot's rows can run dry, making the dry
// engine at the first call: every inner loop a row may jump through has
// one exit test of an integer compare.
func (sp *spot) dryReady() bool {
	ds := &sp.dry
	if ds.made {
		return ds.off == ""
	}
	ds.made = true
	ds.off = sp.makeDry()
	return ds.off == ""
}

func (sp *spot) makeDry() string {
	ds := &sp.dry
	n := uint32(len(sp.kernel.Sites))
	ds.undoSite = n + 2
	ds.exits = map[uint64]*innerExit{}
	ds.cmpAt = map[[3]uint64]*innerExit{}
	for i, l := range sp.loops {
		x, at, why := sp.innerExitOf(l)
		if why != "" {
			return fmt.Sprintf("the inner loop at %#x: %s", l.header, why)
		}
		x.site = n + 3 + 2*uint32(i)
		ds.exits[l.header] = x
		for _, a := range at {
			ds.cmpAt[a] = x
		}
	}
	e := gvinst.NewInterpreter(sp.a.g.Mem, &dryTranslator{sp: sp}, gvinst.InterpOptions{Breakpoints: sp.rowBps, Probe: sp.dryProbe})
	ds.engine = e
	sp.a.aux = append(sp.a.aux, e)
	return ""
}

// innerExitOf finds inner loop l's exit test: the BRANCH on an integer
// CMP of its own block by which the loop leaves, as ptxgen's findExit
// finds the mapped level's, in every lifted copy of it (a block entered
// one instruction earlier holds the test too). at are the copies' CMPs,
// by block, x86 address and result register.
func (sp *spot) innerExitOf(l *innerLoop) (x *innerExit, at [][3]uint64, why string) {
	for addr := range l.body {
		b := sp.blocks[addr]
		out := -1
		for k, s := range b.Successors() {
			if !l.body[s] {
				if out >= 0 {
					return nil, nil, "a block leaves it two ways"
				}
				out = k
			}
		}
		if out < 0 {
			continue
		}
		last := &b.Insts[len(b.Insts)-1]
		if last.Op != gvinst.OpBranch {
			return nil, nil, "it leaves by no branch"
		}
		ci := -1
		for i := len(b.Insts) - 2; i >= 0; i-- {
			if b.Insts[i].Dst == last.Src[0] && b.Insts[i].Op != gvinst.OpPut {
				ci = i
				break
			}
		}
		if ci < 0 || b.Insts[ci].Op != gvinst.OpCmp || !b.Insts[ci].Type.IsInt() {
			return nil, nil, "its exit branch tests no integer compare of its block"
		}
		c := &b.Insts[ci]
		e := &innerExit{test: ptxgen.ExitTest{X86: last.X86, Cmp: gvinst.Cmp(c.Mod), Type: c.Type, BImm: c.HasImm, Imm: c.Imm, ContinueIf: out == 1}}
		if t, u := e.test, x; u != nil && (t.X86 != u.test.X86 || t.Cmp != u.test.Cmp || t.Type != u.test.Type || t.BImm != u.test.BImm || t.Imm != u.test.Imm || t.ContinueIf != u.test.ContinueIf) {
			return nil, nil, "it leaves by two exit tests"
		}
		x = e
		at = append(at, [3]uint64{addr, c.X86, uint64(c.Dst)})
	}
	if x == nil {
		return nil, nil, "it has no exit"
	}
	return x, at, ""
}

// dryTranslator gives the dry engine the spot's blocks as the probing
// engine has them, with a probe before each store (the log) and before
// each inner loop's exit compare (its operands); any other block is an
// error, which abandons the dry probe, but for the level's exits: the
// engine stops at them (breakpoints) before they run, but it translates
// a block before it looks at its breakpoint. (symm at 900 1000 on an
// H100: a row that left its level abandoned the dry probe, and every
// instance after it was probed on the CPU.)
type dryTranslator struct{ sp *spot }

func (t *dryTranslator) Translate(addr uint64) (*gvinst.VBlock, error) {
	sp := t.sp
	if _, ok := sp.blocks[addr]; !ok {
		if sp.exits[addr] {
			return (&probeTranslator{sp: sp}).Translate(addr)
		}
		return nil, fmt.Errorf("a dry row left the hot spot's blocks for %#x", addr)
	}
	b, err := (&probeTranslator{sp: sp}).Translate(addr)
	if err != nil {
		return nil, err
	}
	out := *b
	out.Insts = make([]gvinst.Inst, 0, len(b.Insts)+8)
	fresh := b.NumVRegs()
	for _, in := range b.Insts {
		if in.Op == gvinst.OpRepStos || in.Op == gvinst.OpRepMovs {
			// Its probes (before it) recorded its run; it stores
			// nothing, and moves its registers as it would.
			out.Insts = append(out.Insts, dryString(in, &fresh)...)
			continue
		}
		if in.Op == gvinst.OpCmp {
			if x := sp.dry.cmpAt[[3]uint64{addr, in.X86, uint64(in.Dst)}]; x != nil {
				out.Insts = append(out.Insts, gvinst.Inst{Op: gvinst.OpProbe, Type: in.Type, Src: [4]gvinst.Reg{in.Src[0]}, Target: [2]uint64{uint64(x.site)}, X86: in.X86})
				if !in.HasImm {
					out.Insts = append(out.Insts, gvinst.Inst{Op: gvinst.OpProbe, Type: in.Type, Src: [4]gvinst.Reg{in.Src[1]}, Target: [2]uint64{uint64(x.site) + 1}, X86: in.X86})
				}
			}
		}
		if in.Op.Info().Effects&gvinst.EffStore != 0 {
			if in.Op != gvinst.OpSt || in.Type.Size() > len(undoEntry{}.old) {
				return nil, fmt.Errorf("a dry row cannot take back the store at %#x", in.X86)
			}
			out.Insts = append(out.Insts, gvinst.Inst{Op: gvinst.OpProbe, Type: in.Type, Src: [4]gvinst.Reg{in.Src[0]}, Imm: in.Imm, Target: [2]uint64{uint64(sp.dry.undoSite)}, X86: in.X86})
		}
		out.Insts = append(out.Insts, in)
	}
	return &out, nil
}

// dryString is what a dry row runs for the string store in (rep stos,
// rep movs): its registers moved as the op moves them with the direction
// flag clear (rdi, and rsi for a copy, by rcx elements; rcx zero), and
// nothing stored, so that nothing needs putting back. Its run is probed
// before it as in any probed row. (A row that sets the direction flag is
// abandoned: finish checks it.) fresh is the block's next free virtual
// register.
func dryString(in gvinst.Inst, fresh *int) []gvinst.Inst {
	v := func() gvinst.Reg { *fresh++; return gvinst.VReg(*fresh - 1) }
	u := gvinst.U64
	count, bytes, zero := v(), v(), v()
	out := []gvinst.Inst{
		{Op: gvinst.OpGet, Type: u, Dst: count, Src: [4]gvinst.Reg{gvinst.SReg(1)}, X86: in.X86},
		{Op: gvinst.OpMul, Type: u, Dst: bytes, Src: [4]gvinst.Reg{count}, HasImm: true, Imm: int64(in.Type.Size()), X86: in.X86},
	}
	ptrs := []gvinst.Reg{gvinst.SReg(7)}
	if in.Op == gvinst.OpRepMovs {
		ptrs = append(ptrs, gvinst.SReg(6))
	}
	for _, p := range ptrs {
		at, moved := v(), v()
		out = append(out,
			gvinst.Inst{Op: gvinst.OpGet, Type: u, Dst: at, Src: [4]gvinst.Reg{p}, X86: in.X86},
			gvinst.Inst{Op: gvinst.OpAdd, Type: u, Dst: moved, Src: [4]gvinst.Reg{at, bytes}, X86: in.X86},
			gvinst.Inst{Op: gvinst.OpPut, Type: u, Dst: p, Src: [4]gvinst.Reg{moved}, X86: in.X86})
	}
	return append(out,
		gvinst.Inst{Op: gvinst.OpLi, Type: u, Dst: zero, Imm: 0, X86: in.X86},
		gvinst.Inst{Op: gvinst.OpPut, Type: u, Dst: gvinst.SReg(1), Src: [4]gvinst.Reg{zero}, X86: in.X86})
}

// dryProbe is the dry engine's probe hook: the store log, the inner exit
// compares, and the probing record.
func (sp *spot) dryProbe(site uint32, addr uint64, size int) {
	d := sp.dry.cur
	switch {
	case d == nil:
	case site == sp.dry.undoSite:
		d.save(addr, size)
	case site > sp.dry.undoSite:
		d.compare(site, addr)
	default:
		sp.rec.probe(site, addr, size)
	}
}

// save logs the size bytes at addr before a store overwrites them.
func (d *dryRun) save(addr uint64, size int) {
	e := undoEntry{addr: addr, size: size}
	if err := d.sp.a.g.Mem.Read(addr, e.old[:size]); err != nil {
		if d.err == nil {
			d.err = fmt.Errorf("reading %d bytes at %#x before a dry store: %w", size, addr, err)
		}
		return
	}
	d.undo = append(d.undo, e)
}

// compare notes an operand of an inner loop's exit compare in the
// current iteration of that loop's innermost open instance.
func (d *dryRun) compare(site uint32, v uint64) {
	ds := &d.sp.dry
	rel := site - ds.undoSite - 1
	li := int(rel / 2)
	if d.walk == nil || li >= len(d.sp.loops) {
		return
	}
	h := d.sp.loops[li].header
	for i := len(d.walk.frames) - 1; i >= 0; i-- {
		f := d.walk.frames[i]
		if f.loop.header != h {
			continue
		}
		t := f.arrivals - 1
		if t < 0 || t >= boundedIterations {
			return
		}
		for len(f.cmps) <= t {
			f.cmps = append(f.cmps, [2]uint64{})
		}
		f.cmps[t][rel%2] = v
		return
	}
}

// restore puts back what the dry rows stored, newest first, and the CPU
// state of the instance's first arrival.
func (d *dryRun) restore(cpu *gvinst.CPU) error {
	mem := d.sp.a.g.Mem
	for i := len(d.undo) - 1; i >= 0; i-- {
		e := &d.undo[i]
		if err := mem.Write(e.addr, e.old[:e.size]); err != nil {
			return fmt.Errorf("putting back %d bytes at %#x: %w", e.size, e.addr, err)
		}
	}
	d.undo = nil
	*cpu = d.start
	d.sp.dry.cur = nil
	return nil
}

// finish ends a dry probe whose rows ran: the guest as it was at the
// first arrival. An error says the probe cannot be used (abandon it).
func (d *dryRun) finish(cpu *gvinst.CPU) error {
	df := cpu.State[gvinst.RFLAGS]&gvinst.FlagDF != 0
	if err := d.restore(cpu); err != nil {
		return err
	}
	if df && d.err == nil {
		return fmt.Errorf("a dry row set the direction flag, which its string ops assumed clear")
	}
	return d.err
}

// abandon ends a dry probe that failed: the guest as it was at the first
// arrival, the spot's fatal error and the report's probe counts too.
func (d *dryRun) abandon(cpu *gvinst.CPU) error {
	err := d.restore(cpu)
	d.sp.fatal = d.fatal
	d.sp.rep.ProbedIterations, d.sp.rep.ProbedAccesses = d.iterations, d.access
	return err
}

// jump takes instance f, at its arrival boundedIterations on a dry row,
// to its last iteration: the exit compare's operands, affine over the
// recorded iterations, give the iteration that leaves, and the registers
// that counted the recorded arrivals are set as at its arrival. The
// iteration runs (recorded apart: the extension over the instance's
// iterations covers it) and the engine's next stop is returned.
func (w *rowWalk) jump(cpu *gvinst.CPU, f *loopFrame) (gvinst.Stop, error) {
	l := f.loop
	x := w.sp.dry.exits[l.header]
	if x == nil || len(f.cmps) < boundedIterations {
		return gvinst.Stop{}, fmt.Errorf("the inner loop at %#x: its exit compare ran in %d of %d recorded iterations", l.header, len(f.cmps), boundedIterations)
	}
	a0, b0 := f.cmps[0][0], f.cmps[0][1]
	da, db := f.cmps[1][0]-a0, f.cmps[1][1]-b0
	for t := 2; t < boundedIterations; t++ {
		if f.cmps[t][0] != a0+da*uint64(t) || (!x.test.BImm && f.cmps[t][1] != b0+db*uint64(t)) {
			return gvinst.Stop{}, fmt.Errorf("the inner loop at %#x: its exit compare's operands do not move by constant steps", l.header)
		}
	}
	j, ok := exitArrival(x.test, a0, da, b0, db)
	if !ok || j < boundedIterations {
		return gvinst.Stop{}, fmt.Errorf("the inner loop at %#x: its exit compare gives no exit past the recorded iterations", l.header)
	}
	n := j + 1 // arrivals; the last, n-1, leaves
	for r, d := range f.steps() {
		cpu.State[gvinst.S0+gvinst.Reg(r)] = f.regs[0][r] + d*(n-1)
	}
	last := uint64(len(f.insns) - 1)
	per := (f.insns[last] - f.insns[0]) / last
	w.fast += per * (n - 1 - last)
	w.skipped[l.header] += n - uint64(len(f.regs))
	f.jumped, f.tail = n, w.newBuffers()
	w.rec.cur = w.sink()
	return w.engine.Run(cpu, 0), nil
}

// dryStepsTrusted says why the steps of the live-in values that dry rows
// give (states at arrivals 0 to P) cannot be trusted, or "". The
// general registers that move must be the profile's induction variables
// (checkIVs, for either kind of row); an SSE register the level writes,
// which checkIVs leaves alone (a vectorised index vector), must be one
// too, moving by the profile's step: a dry row computes a value from data
// wrongly after a jump, and only a value phase 1 saw step by a constant
// cannot be one.
func (sp *spot) dryStepsTrusted(states [][]uint64) string {
	for i, l := range sp.kernel.LiveIns {
		if !l.Written || l.Stack || l.Slot <= gvinst.S15 || states[1][i] == states[0][i] {
			continue
		}
		d := states[1][i] - states[0][i]
		iv, ok := sp.ivs[l.String()]
		if !ok || iv.varies || uint64(iv.step) != d {
			return fmt.Sprintf("%s moved by %#x in a dry row, which the profile's induction variables do not say", l, d)
		}
	}
	return ""
}

// dryLaunchRow is the guest instructions of a dry row (jumped iterations
// counted) from which the GPU runs the probed rows too: below it they run
// on the CPU after the probe (runDryRows), as before dry rows, and the GPU
// runs the instance from the arrival after them. Rows that short cost the
// CPU less than a launch's fixed costs, and an array the GPU would write
// in them, had it run them, came to the device and back for nothing
// (heat3d's initialisation at 40: three planes of 1,600 iterations).
const dryLaunchRow = 1 << 18

// runDryRows runs the instance's P probed rows on the CPU after a dry
// probe, on the fast engine, to arrival P; its live-in values there
// must be the dry rows' (reloaded registers aside). The rows' time per
// row prices the CPU side (rows.cpuPerIter).
func (sp *spot) runDryRows(cpu *gvinst.CPU, P int, reloaded map[int]ptxgen.Reload, rows *probedRows) *fallback {
	t0 := time.Now()
	for arrivals := 0; arrivals < P; {
		st := sp.toHeader.Run(cpu, 0)
		switch {
		case st.Kind != gvinst.StopBreakpoint:
			return fail(ReasonProbeStop, "running the probed rows: %v", st)
		case st.PC == sp.header:
			arrivals++
		case sp.exits[st.PC]:
			return fail(ReasonTripCount, "the loop ended after %d iterations", arrivals+1)
		}
	}
	rows.cpuPerIter = time.Since(t0).Seconds() / float64(P)
	vs, err := sp.liveValues(cpu)
	if err != nil {
		return fail(ReasonNotAffine, "reading live-in: %v", err)
	}
	for i, v := range vs {
		if _, data := reloaded[i]; !data && v != rows.states[P][i] {
			return fail(ReasonNotAffine, "%s is %#x after the probed rows ran, the dry rows gave %#x", sp.kernel.LiveIns[i], v, rows.states[P][i])
		}
	}
	return nil
}

// abandonDry notes why a dry probe was abandoned (why, from fb when
// probing failed), and turns dry probes off for the spot's later
// instances, unless the instance was too short for its probed rows (it
// left the level before them): what made it fail will not make theirs.
func (sp *spot) abandonDry(why error, fb *fallback) {
	sp.rep.DryNote = fmt.Sprintf("abandoned: %v", why)
	if fb == nil || fb.reason != ReasonTripCount {
		sp.dry.off = sp.rep.DryNote
	}
}

// earlyDry probes the instance at its first arrival dry before the CPU
// engine is timed on the loop, where timing is still to come (timePlain)
// and a speed was timed on another hot spot (runRate): when its rows are
// long enough for the GPU to run them (dryLaunchRow), it returns them,
// and the instance goes without timing, priced at that speed, its CPU
// tail timing the loop (cpuTail); else nil, the guest as it was, and
// timing and probing as ever. Timing runs a budget of instructions and
// then the rest of the row to the header on the CPU: gemm's row at
// 1600×1800×2000 is 18 ms of an H100 host's CPU, doitgen's at 200×220×240
// about 60. A spot with a replay (an earlier instance launched) is not
// probed early: the replay may take the instance without probing, after
// the timing (heat3d at 160 200 on an H100: each of 200 time steps
// probed dry, 1.7 ms each, where the wet flow timed once and replayed
// the rest; 1.27 s against 0.63).
func (sp *spot) earlyDry(cpu *gvinst.CPU, P int, reloaded map[int]ptxgen.Reload) (*probedRows, *fallback) {
	if sp.plainIter != 0 || sp.a.opts.AlwaysOffload || sp.plainTimed || sp.a.runRate() <= 0 || sp.replay != nil {
		return nil, nil
	}
	t0 := time.Now()
	defer func() { sp.rep.ProbeSeconds += time.Since(t0).Seconds() }()
	start, err := sp.liveValues(cpu)
	if err != nil {
		return nil, nil
	}
	d := sp.startDry(cpu)
	if d == nil {
		return nil, nil
	}
	rows := &probedRows{}
	rows.states[0] = start
	_, fb := sp.probeRows(cpu, P, reloaded, d, rows)
	if err := d.finish(cpu); fb != nil || err != nil {
		// Abandoned here, it is not tried again (the rows will run on
		// the CPU, as offload does for a dry probe that fails).
		if err := d.abandon(cpu); err != nil {
			sp.fatal = fmt.Errorf("accelerate: hot spot %s: undoing a dry probe: %w", sp.rep.Entry, err)
			return nil, fail(ReasonProbeStop, "%v", err)
		}
		why := err
		if fb != nil {
			why = fb
		}
		sp.abandonDry(why, fb)
		return nil, nil
	}
	if rows.insnsPerIter < dryLaunchRow {
		// Probed again after the timing: counted then.
		sp.rep.ProbedIterations, sp.rep.ProbedAccesses = d.iterations, d.access
		return nil, nil
	}
	return rows, nil
}
