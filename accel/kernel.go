package accel

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/profile"
	"github.com/gxbit/gxbit/ptxgen"
)

// GeneratedKernel is the kernel of one hot spot, or why there is none.
type GeneratedKernel struct {
	Entry    uint64
	Header   uint64
	Function string
	Kernel   *ptxgen.Kernel
	// Kernel2D is the nest's 2D kernel (x over the inner level), which a
	// launch uses when the probed rows confirm the inner level's shape;
	// nil when there is none, and Note says why.
	Kernel2D *ptxgen.Kernel
	// Kernel3D is the nest's 3D kernel (x over the innermost level, y
	// over the inner one), launched instead of Kernel2D when the probed
	// rows confirm the innermost level's trip count and steps too; nil
	// when there is none.
	Kernel3D *ptxgen.Kernel
	// Scheduled are the schedule's kernels, which a launch runs in order
	// in place of Kernel when the probe confirms them (distribution, a
	// loop interchanged inward under a grid level), each with the
	// schedule's kernel in words; nil when the schedule is Kernel's own.
	Scheduled      []*ptxgen.Kernel
	ScheduledWords []string
	// ScheduledEven are, per Scheduled kernel, its variant for even rows
	// (ptxgen.Nest.Even), launched instead when the rows are even; nil
	// where there is none.
	ScheduledEven []*ptxgen.Kernel
	Note          string
	// Schedule is the schedule of the hot spot (schedule.Format) and
	// ScheduleNote how the kernels above compare with it.
	Schedule, ScheduleNote string
	Err                    error
}

// GenerateKernels translates every parallel hot spot of prof with the
// lifter of the loaded (not yet run) guest, without running anything
// (gxbit ptx gen).
func GenerateKernels(lifter gvinst.Translator, prof *profile.File) []GeneratedKernel {
	var out []GeneratedKernel
	for i := range prof.HotSpots {
		hs := &prof.HotSpots[i]
		L := mappedLevel(hs)
		if L < 0 {
			continue
		}
		sp := newSpot(hs, L)
		err := sp.generate(lifter)
		var sk []*ptxgen.Kernel
		var sw []string
		var se []*ptxgen.Kernel
		for _, p := range sp.parts {
			sk, sw, se = append(sk, p.k), append(sw, p.what), append(se, p.even)
		}
		out = append(out, GeneratedKernel{Scheduled: sk, ScheduledWords: sw, ScheduledEven: se, Entry: sp.entry, Header: sp.header, Function: hs.Function, Kernel: sp.kernel, Kernel2D: sp.kernel2, Kernel3D: sp.kernel3, Note: sp.rep.Note,
			Schedule: sp.rep.ScheduleDetail, ScheduleNote: sp.rep.ScheduleNote, Err: err})
	}
	return out
}

// liftLevel lifts and optimizes the level's blocks, from the header along
// the successors that stay in the level, and notes the exits.
func (sp *spot) liftLevel(lifter gvinst.Translator) error {
	work := []uint64{sp.header}
	for len(work) > 0 {
		addr := work[len(work)-1]
		work = work[:len(work)-1]
		if sp.blocks[addr] != nil {
			continue
		}
		b, err := lifter.Translate(addr)
		if err != nil {
			return fmt.Errorf("translating %#x: %w", addr, err)
		}
		// A call to memset or memcpy runs as the string store or copy
		// it is (as phase 1 saw it), going on at the return address, in
		// the same block of phase 1's CFG.
		if known := sp.knownCalls(); known != nil && endsInCall(b) && sp.askMemset(known, b) && profile.InlineCall(b, known) {
			ret := b.Insts[len(b.Insts)-1].Target[0]
			sp.level[ret] = true
			if sp.innerSet[addr] {
				sp.innerSet[ret] = true
			}
			if sp.inner2Set[addr] {
				sp.inner2Set[ret] = true
			}
		}
		// Blocks are cut where the level's header, the inner level's
		// header and the exits begin, so that each starts a block.
		if addr != sp.header {
			b.SplitAt(sp.header)
		}
		if sp.inner != 0 && addr != sp.inner {
			b.SplitAt(sp.inner)
		}
		if sp.inner2 != 0 && addr != sp.inner2 {
			b.SplitAt(sp.inner2)
		}
		for _, e := range sp.exitHints {
			if e != addr {
				b.SplitAt(e)
			}
		}
		for _, c := range sp.partCuts() {
			if c != addr {
				b.SplitAt(c)
			}
		}
		if err := gvinst.Optimize(b); err != nil {
			return fmt.Errorf("optimizing %#x: %w", addr, err)
		}
		sp.blocks[addr] = b
		if b.Split {
			// The block ends in the middle of a CFG block (the lifter
			// ended a long block, or it was cut above): the rest of it is
			// in the level too.
			sp.level[b.End] = true
			if sp.innerSet[addr] {
				sp.innerSet[b.End] = true
			}
			if sp.inner2Set[addr] {
				sp.inner2Set[b.End] = true
			}
		}
		for _, s := range b.Successors() {
			switch {
			case sp.level[s]:
				work = append(work, s)
			case sp.cold[s]:
				// An error path: kernels end there (Nest.Cold), the
				// CPU runs it; not an exit of the loop.
			default:
				sp.exits[s] = true
			}
		}
		if len(sp.blocks) > 4096 {
			return errors.New("the loop has too many blocks")
		}
	}
	return nil
}

// knownCalls is the memset recogniser translation uses: the background's
// (spot.known), the guest's, or none (gxbit ptx gen).
func (sp *spot) knownCalls() *profile.KnownCalls {
	if sp.known != nil {
		return sp.known
	}
	if sp.a != nil {
		return sp.a.g.knownCalls()
	}
	return nil
}

// endsInCall reports whether b ends with a call.
func endsInCall(b *gvinst.VBlock) bool {
	return len(b.Insts) > 0 && b.Insts[len(b.Insts)-1].Op == gvinst.OpCall
}

// askMemset asks known whether the call ending b is to memset or memcpy, notes the
// answer (spot.memsetAsked) and returns it.
func (sp *spot) askMemset(known *profile.KnownCalls, b *gvinst.VBlock) bool {
	t := b.Insts[len(b.Insts)-1].Target[0]
	v := known.Known(t)
	if sp.memsetAsked == nil {
		sp.memsetAsked = map[uint64]bool{}
	}
	sp.memsetAsked[t] = v
	return v
}

// generate lifts the level and generates its kernel.
func (sp *spot) generate(lifter gvinst.Translator) error {
	if err := sp.liftLevel(lifter); err != nil {
		return err
	}
	// What the code at each exit reads before writing it: a kernel
	// gives the exit state where the rest is dead there.
	exitLive := map[uint64]*gvinst.Liveness{}
	for t := range sp.exits {
		live := gvinst.LiveAt(lifter, t)
		exitLive[t] = &live
	}
	nest := &ptxgen.Nest{Name: fmt.Sprintf("gx_%x", sp.entry), Header: sp.header, Blocks: sp.blocks, Cold: sp.cold, Reloads: sp.reloads(false), ExitLive: exitLive}
	if loop := sp.countedLoop(); loop != nil {
		nest.TripCheck, nest.TripBlocks = sp.inner, loop
	}
	k, err := ptxgen.Generate(nest)
	if err != nil && nest.TripCheck != 0 {
		nest.TripCheck, nest.TripBlocks = 0, nil
		k, err = ptxgen.Generate(nest)
	}
	if err != nil {
		return err
	}
	sp.kernel = k
	if sp.sched != nil {
		sp.generateParts(sp.sched)
	}
	if sp.levelCarried() && sp.parts == nil && sp.cutAfter == nil {
		if cuts := sp.storeCuts(); len(cuts) > 0 {
			// Once more, with the stores after each distributed loop in
			// its part (a value the next part reads from a register it
			// reloads from them).
			sp.cutAfter = cuts
			sp.blocks, sp.exits = map[uint64]*gvinst.VBlock{}, map[uint64]bool{}
			return sp.generate(lifter)
		}
	}
	if sp.levelCarried() && sp.parts != nil {
		sp.rep.Note = "the level carries a dependence: only the schedule's kernels run it, never the level's own"
	}
	if sp.levelCarried() && sp.parts == nil {
		// The level's own kernel would run its iterations at once.
		return fmt.Errorf("the level carries a dependence, and its schedule's kernels are not generated (%s)", sp.rep.ScheduleNote)
	}
	if sp.inner != 0 && sp.blocks[sp.inner] != nil {
		inner := map[uint64]bool{}
		for a := range sp.blocks {
			if sp.innerSet[a] {
				inner[a] = true
			}
		}
		n2 := &ptxgen.Nest{Name: fmt.Sprintf("gx_%x_2d", sp.entry), Header: sp.header, Blocks: sp.blocks, Cold: sp.cold, Inner: sp.inner, InnerBlocks: inner, Reloads: sp.reloads(true), ExitLive: exitLive}
		k2, err := ptxgen.Generate(n2)
		if dead := sp.outerStringStores(inner); err != nil && dead != nil && sp.stringStoresRewritten(dead) {
			// The outer body's string stores (an inlined memset) kept
			// out of the 2D kernel: each launch proves them overwritten
			// (deadStoresCovered), else runs the 1D kernel.
			n2.Dead = dead
			if k2d, err2 := ptxgen.Generate(n2); err2 == nil {
				k2, err, sp.dead2D = k2d, nil, true
			}
		}
		if err != nil && !sp.dead2D {
			// The outer body's stores before the inner loop (an
			// initialisation nest's x1[i] = … beside its row): every
			// thread of a row makes them, where each launch proves
			// their footprints apart from the others' (outerStoresFit).
			n2.Dead, n2.OuterStores = nil, true
			if k2o, err2 := ptxgen.Generate(n2); err2 == nil {
				k2, err = k2o, nil
			}
		}
		if err == nil {
			sp.kernel2 = k2
		} else {
			sp.rep.Note = "1D only: " + err.Error()
		}
	}
	if sp.kernel2 != nil && !sp.dead2D && sp.inner2 != 0 && sp.blocks[sp.inner2] != nil {
		inner, inner2 := map[uint64]bool{}, map[uint64]bool{}
		for a := range sp.blocks {
			if sp.innerSet[a] {
				inner[a] = true
			}
			if sp.inner2Set[a] {
				inner2[a] = true
			}
		}
		n3 := &ptxgen.Nest{Name: fmt.Sprintf("gx_%x_3d", sp.entry), Header: sp.header, Blocks: sp.blocks, Inner: sp.inner, InnerBlocks: inner,
			Inner2: sp.inner2, Inner2Blocks: inner2, Reloads: sp.reloads3(), ExitLive: exitLive}
		k3, err := ptxgen.Generate(n3)
		switch {
		case err != nil:
			sp.rep.Note = "2D, not 3D: " + err.Error()
		case !slices.Equal(k3.InnerLiveIns, sp.kernel2.InnerLiveIns):
			// The probe reads the inner states by the 2D kernel's list.
			sp.rep.Note = "2D, not 3D: the 3D kernel's inner live-ins differ from the 2D kernel's"
		default:
			sp.kernel3 = k3
		}
	}
	sp.noteExit()
	return nil
}

// loadKernel loads k's module into ctx and finds its function.
func loadKernel(ctx gpu.Context, k *ptxgen.Kernel) (gpu.Function, error) {
	fns, err := loadKernels(ctx, []*ptxgen.Kernel{k})
	if err != nil {
		return nil, err
	}
	return fns[0], nil
}

// loadKernels loads kernels ks into ctx as one module (ptxgen.Module) and
// finds their functions, in ks's order.
func loadKernels(ctx gpu.Context, ks []*ptxgen.Kernel) ([]gpu.Function, error) {
	text, err := ptxgen.Module(ks...)
	if err != nil {
		return nil, fmt.Errorf("loading the kernel: %w", err)
	}
	mod, err := ctx.LoadModule(text)
	if err != nil {
		return nil, fmt.Errorf("loading the kernel: %w", err)
	}
	fns := make([]gpu.Function, len(ks))
	for i, k := range ks {
		if fns[i], err = mod.Function(k.Name); err != nil {
			return nil, fmt.Errorf("loading the kernel: %w", err)
		}
	}
	return fns, nil
}

// Kernels loaded together (RATIONALE).
//
// The CUDA JIT costs a module a fixed 20-30 ms beside what its code
// costs (ptxas on an H100: about 25 ms for a 150-line kernel, 50 ms for
// a 750-line one). A hot spot whose level runs many times (a time step's
// sweep) launches its checked kernel first and its unchecked one after
// (replays), and a dry one where a backup would cost more: heat3d's two
// sweeps loaded 15 modules, one kernel each, 45-65 ms each, one after the
// other, and the guest waited 0.6 s of its 1.1 s for them. So a kernel
// loads in one module with its unchecked and dry variants where its
// instances will launch them (variantsLaunch: a level expected to run
// more than once, with the same trip counts each time), and a dry variant
// with its unchecked twin, which proveDry launches after it. Elsewhere a
// kernel loads alone: a level that runs once launches its checked kernel,
// and so do the instances of a triangle (cholesky's columns, trmm's rows,
// each of another length, replay the checked kernel), for which the
// variants cost 60-140 ms on an H100 for nothing.
//
// All that holds where the JIT compiles one module at a time and holds
// the driver meanwhile (cuModuleLoadDataEx). Where the driver's linker
// compiles (compilesBeside), modules compile four at a time beside the
// guest's copies and launches, and each kernel loads alone: the variants
// are queued after it (variantsOf), so that it is ready when its own
// compile ends, not the three's.

// load returns kernel k's function, loading its module the first time
// (moduleOf: with the variants that load with it), timing it into the
// report's translate seconds and sp.loadTime. A module costs the CUDA JIT
// tens of milliseconds, so each is loaded the first time a launch runs one
// of its kernels: a hot spot that never passes its guards, the 1D kernel
// of a nest that launches in 2D and the other way round, and a part's
// variant its rows never take, cost nothing. A module of several kernels
// that the driver refuses is retried with k alone.
func (sp *spot) load(k *ptxgen.Kernel) (gpu.Function, error) {
	if fn := sp.loaded[k]; fn != nil {
		return fn, nil
	}
	// waited charges the guest's wait, d, and the module's load, took.
	waited := func(d, took time.Duration) {
		sp.loadTime += d
		sp.rep.TranslateSeconds += d.Seconds()
		sp.rep.LoadSeconds += took.Seconds()
	}
	t0 := time.Now()
	var ks []*ptxgen.Kernel
	var fns []gpu.Function
	var err error
	if f := sp.a.prefetched(k); f != nil {
		// Loaded ahead (prefetch.go): the launch waited for what was
		// left of it (or loaded it, when the loader had not begun it).
		waited(time.Since(t0), f.took)
		if f.err == nil && !f.byGuest {
			sp.a.prefetchedUsed++
		}
		ks, fns, err = f.ks, f.fns, f.err
	} else {
		ks = sp.moduleOf(k)
		if sp.a.compilesBeside() && sp.a.loader != nil && (sp.variantsLaunch() || sp.variantParent(k) != nil) {
			// A variant's twin launches after it (proveDry); a kernel's
			// variants where its instances launch them.
			sp.enqueueVariants(k)
		}
		fns, err = loadKernels(sp.a.ctx, ks)
		d := time.Since(t0)
		waited(d, d)
	}
	if err != nil && len(ks) > 1 {
		t1 := time.Now()
		var fn gpu.Function
		fn, err = loadKernel(sp.a.ctx, k)
		d := time.Since(t1)
		waited(d, d)
		ks, fns = []*ptxgen.Kernel{k}, []gpu.Function{fn}
	}
	if err != nil {
		return nil, err
	}
	if sp.loaded == nil {
		sp.loaded = map[*ptxgen.Kernel]gpu.Function{}
	}
	for i, x := range ks {
		sp.loaded[x] = fns[i]
	}
	return sp.loaded[k], nil
}

// moduleOf lists the kernels that load in one module with k, k first (see
// the RATIONALE above), leaving out those loaded already: k alone where
// the driver compiles beside its calls (compilesBeside); else a dry or
// unchecked variant with its twin; a kernel of a level expected to run
// more than once with its variants; else k alone.
func (sp *spot) moduleOf(k *ptxgen.Kernel) []*ptxgen.Kernel {
	ks := []*ptxgen.Kernel{k}
	if sp.a.compilesBeside() {
		return ks // its variants load beside it (variantsOf)
	}
	add := func(xs ...*ptxgen.Kernel) {
		for _, x := range xs {
			if x != nil && x != k && sp.loaded[x] == nil && !slices.Contains(ks, x) {
				ks = append(ks, x)
			}
		}
	}
	if p := sp.variantParent(k); p != nil {
		add(p.Unchecked, p.Dry)
		return ks
	}
	if sp.variantsLaunch() {
		add(k.Unchecked, k.Dry)
	}
	return ks
}

// variantParent is the spot's kernel whose unchecked or dry variant k
// is, or nil when k is none's.
func (sp *spot) variantParent(k *ptxgen.Kernel) *ptxgen.Kernel {
	for _, p := range sp.allKernels() {
		if p.Dry == k || p.Unchecked == k {
			return p
		}
	}
	return nil
}

// variantsOf lists the unchecked and dry variants of ks not loaded yet;
// for a variant, its twin.
func (sp *spot) variantsOf(ks ...*ptxgen.Kernel) []*ptxgen.Kernel {
	var out []*ptxgen.Kernel
	add := func(xs ...*ptxgen.Kernel) {
		for _, x := range xs {
			if x != nil && sp.loaded[x] == nil && !slices.Contains(ks, x) && !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
	}
	for _, k := range ks {
		if p := sp.variantParent(k); p != nil {
			add(p.Unchecked, p.Dry)
		} else {
			add(k.Unchecked, k.Dry)
		}
	}
	return out
}

// modulesOf groups ks into modules (loadKernels): each kernel with its
// unchecked and dry variants where variants says so (variantsLaunch),
// else alone.
func modulesOf(ks []*ptxgen.Kernel, variants bool) [][]*ptxgen.Kernel {
	var out [][]*ptxgen.Kernel
	for _, k := range ks {
		if k == nil {
			continue
		}
		m := []*ptxgen.Kernel{k}
		if variants {
			for _, v := range []*ptxgen.Kernel{k.Unchecked, k.Dry} {
				if v != nil {
					m = append(m, v)
				}
			}
		}
		out = append(out, m)
	}
	return out
}

// allKernels lists the spot's kernels that launch checked: the level's
// own (1D, 2D, 3D) and its schedule's parts.
func (sp *spot) allKernels() []*ptxgen.Kernel {
	ks := []*ptxgen.Kernel{sp.kernel, sp.kernel2, sp.kernel3}
	for _, p := range sp.parts {
		ks = append(ks, p.k, p.even)
	}
	return slices.DeleteFunc(ks, func(k *ptxgen.Kernel) bool { return k == nil })
}

// variantsLaunch reports, once for the spot, whether its instances are
// expected to launch its kernels' unchecked and dry variants
// (variantsLaunchIn).
func (sp *spot) variantsLaunch() bool {
	if sp.instancesKnown == 0 {
		sp.instancesKnown = 1
		if variantsLaunchIn(sp.hs, sp.levelIndex, sp.a.hotSpots()) {
			sp.instancesKnown = 2
		}
	}
	return sp.instancesKnown == 2
}

// variantsLaunchIn reports whether the instances of level L of hot spot
// hs are expected to launch the unchecked and dry variants of its
// kernels: the level runs more than once in the run (expectedInstancesOf,
// among others), and it and the levels inside it ran the same trips at
// every entry the profile saw, as a time step's sweep does (a replay
// launches the unchecked kernel where its instance repeats the one
// proven before it).
func variantsLaunchIn(hs *profile.HotSpot, L int, others []*profile.HotSpot) bool {
	if expectedInstancesOf(hs, L, others) < 2 {
		return false
	}
	for l := L; l < len(hs.Levels); l++ {
		t := hs.Levels[l].ObservedTrips
		for _, v := range t {
			if v != t[0] {
				return false
			}
		}
	}
	return true
}

// kernelFn returns the level's own (1D) kernel, loaded; a kernel the
// driver refuses disarms the hot spot.
func (sp *spot) kernelFn() (gpu.Function, error) {
	if sp.fn == nil && sp.loadErr == nil {
		fn, err := sp.load(sp.kernel)
		if err != nil {
			sp.loadErr = err
			sp.rep.Offloadable, sp.rep.Disarmed, sp.rep.Reason = false, true, err.Error()
		}
		sp.fn = fn
	}
	return sp.fn, sp.loadErr
}

// kernel2Fn returns the 2D kernel, loaded, or nil when there is none or
// the driver refuses it (the 1D kernel runs then).
func (sp *spot) kernel2Fn() gpu.Function {
	if sp.fn2 == nil && sp.kernel2 != nil {
		fn, err := sp.load(sp.kernel2)
		if err != nil {
			sp.kernel2 = nil
			sp.rep.Note = "1D only: " + err.Error()
		}
		sp.fn2 = fn
	}
	return sp.fn2
}

// kernel3Fn returns the 3D kernel, loaded, or nil when there is none or
// the driver refuses it (the 2D kernel runs then).
func (sp *spot) kernel3Fn() gpu.Function {
	if sp.fn3 == nil && sp.kernel3 != nil {
		fn, err := sp.load(sp.kernel3)
		if err != nil {
			sp.kernel3 = nil
			sp.rep.Note = "2D, not 3D: " + err.Error()
		}
		sp.fn3 = fn
	}
	return sp.fn3
}

// build writes the generated kernels (loaded at their first launch) to
// Options.PTXDir and makes the spot's engines.
func (sp *spot) build() error {
	a := sp.a
	k := sp.kernel
	if a.opts.PTXDir != "" {
		ks := map[string]*ptxgen.Kernel{"": sp.kernel, "_2d": sp.kernel2, "_3d": sp.kernel3}
		for suffix, k := range map[string]*ptxgen.Kernel{"_u": sp.kernel, "_2d_u": sp.kernel2, "_3d_u": sp.kernel3} {
			if k != nil && k.Unchecked != nil {
				ks[suffix] = k.Unchecked
			}
			if k != nil && k.Dry != nil {
				ks[strings.TrimSuffix(suffix, "_u")+"_d"] = k.Dry
			}
		}
		for i, p := range sp.parts {
			ks[fmt.Sprintf("_s%d", i+1)] = p.k
		}
		for suffix, k := range ks {
			if k == nil {
				continue
			}
			name := filepath.Join(a.opts.PTXDir, fmt.Sprintf("%#x%s.ptx", sp.entry, suffix))
			if err := os.WriteFile(name, []byte(k.PTX), 0o644); err != nil {
				return fmt.Errorf("writing %s: %w", name, err)
			}
		}
	}
	n := uint32(len(k.Sites))
	sp.rec.exitSiteA, sp.rec.exitSiteB = n, n+1
	sp.rec.fill = make([]bool, n)
	for _, s := range k.Sites {
		if b := sp.blocks[s.Block]; b != nil && s.Index < len(b.Insts) && (b.Insts[s.Index].Op == gvinst.OpRepStos || b.Insts[s.Index].Op == gvinst.OpRepMovs) {
			sp.rec.fill[s.ID] = true
		}
	}
	bps := map[uint64]bool{sp.header: true}
	if sp.countsInner() {
		bps[sp.inner] = true
	}
	for _, p := range sp.parts {
		for _, a := range []uint64{p.nest.Inner, p.nest.ThreadLoop} {
			if a != 0 {
				bps[a] = true
			}
		}

		sp.rec.watch = append(sp.rec.watch, &p.watch)
	}
	for e := range sp.exits {
		bps[e] = true
	}
	probeBps := maps.Clone(bps) // the probe also sees the parts' inner levels end
	if sp.kernel3 != nil {
		probeBps[sp.inner2] = true // the innermost arrivals give the 3D kernel's trip count and steps
	}
	for _, p := range sp.parts {
		for a := range p.innerExits {
			probeBps[a] = true
		}
	}
	// and every inner loop's arrivals and exits, to skip through them
	// (bounded.go).
	sp.loops = sp.innerLoops()
	for _, l := range sp.loops {
		probeBps[l.header] = true
		for e := range l.exits {
			probeBps[e] = true
		}
	}
	sp.probe = gvinst.NewInterpreter(a.g.Mem, &probeTranslator{sp: sp}, gvinst.InterpOptions{Breakpoints: probeBps, Probe: sp.rec.probe})
	// One compiled engine per breakpoint set (translations are per
	// engine, and each costs a millisecond or two to set up). toHeader
	// stops only at the header, the exits and where an inner loop leaves
	// (once per inner instance; a stop at every inner header arrival
	// would cost a return to Go each): it is the skipper too. rows stops
	// where the probe does, made when a third probed row first needs it.
	sp.timer = sp.fallbackEngine()
	toHeader := map[uint64]bool{sp.header: true}
	for e := range sp.exits {
		toHeader[e] = true
	}
	for _, l := range sp.loops {
		for e := range l.exits {
			toHeader[e] = true
		}
	}
	sp.toHeader = sp.fastEngine(toHeader)
	sp.skipper = sp.toHeader
	sp.rowBps = probeBps
	a.aux = append(a.aux, sp.probe)
	return nil
}

// rowEngine is the engine of the probed rows past recordedRows (rows),
// made at its first use.
func (sp *spot) rowEngine() gvinst.Engine {
	if sp.rows == nil {
		sp.rows = sp.fastEngine(sp.rowBps)
	}
	return sp.rows
}
