package accel

import (
	"bytes"
	"cmp"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/profile"
	"github.com/gxbit/gxbit/ptxgen"
)

// Hot spots translated off the guest's goroutine (RATIONALE).
//
// Translating a hot spot's level and generating its kernels costs a few
// milliseconds to tens of milliseconds per hot spot (gemm's ten: 40 ms on
// the 2-core machine, doitgen's 55 ms), and on a real GPU each kernel is
// then compiled by the CUDA JIT. Done when the guest first reaches a
// header, all of it was the guest's time. Translation reads nothing but
// the guest's code (and the pointer a PLT stub jumps through: memset's,
// profile.KnownCalls), and the profile names every hot spot, so it need
// not wait for the guest: once the program's start-up code has run (when
// the guest reaches main, where the start-up code of a static glibc
// program has put memset's implementation into its stub's slot; at once
// when there is no main symbol), the accelerator copies the program's
// loaded segments (Guest.CodeRanges: a megabyte or two, a millisecond)
// into a memory of its own and a goroutine translates every parallel hot
// spot from that copy, one after the other, and queues their kernels on
// the loader (prefetch.go) where there is one. gxbit run --accelerate does
// the same with each profile its rounds make (Update).
//
// The guest's memory is not safe to read beside the running engine, and
// the copy may differ from it by the time the guest reaches the hot spot
// (code written since, a stub's slot bound since): so the goroutine keeps
// the bytes of every block it translated and the answer to every memset
// question it asked, and the guest's goroutine, when it first reaches the
// header, takes the background's kernels only where the guest's memory
// still holds those bytes and gives those answers. Otherwise, and where
// the background could not read what it needed (a lift error: code
// outside the copy), the guest's goroutine translates the hot spot as it
// always did, so a hot spot's kernels and its report (a generation error
// is its reason for staying on the CPU) are what they were. A hot spot
// the guest reaches before the goroutine has begun it is translated on
// the guest's goroutine at once rather than waited for.
//
// The cost is bounded: one goroutine per profile, each hot spot once; the
// run's end stops it after the hot spot under way (milliseconds), and a
// run that never reaches a hot spot pays a copy and a stop.

// backgroundJob is the translation of one hot spot off the guest's
// goroutine. The goroutine owns sp, err, took, reads and memset until done
// is closed.
type backgroundJob struct {
	hs *profile.HotSpot
	L  int
	// prefetch says its kernels load ahead once translated
	// (prefetchWorthy), variants with their unchecked and dry variants
	// (variantsLaunchIn: modulesOf).
	prefetch, variants bool
	// state is jobQueued until the goroutine begins the job (jobRunning)
	// or the guest's goroutine takes it over (jobTaken).
	state atomic.Int32
	done  chan struct{}
	sp    *spot // the hot spot, translated (generate) from the copy
	err   error // generate's
	took  time.Duration
	// reads are the blocks the job lifted, with their bytes; liftFailed
	// says a lift failed (code outside the copy, perhaps); memset are the
	// answers to the memset questions it asked, by call target.
	reads      []codeRead
	liftFailed bool
	memset     map[uint64]bool
	// stopped says the run ended before the job ran.
	stopped bool
}

// The states of a backgroundJob.
const (
	jobQueued int32 = iota
	jobRunning
	jobTaken
)

// codeRead is the guest code a background translation lifted.
type codeRead struct {
	addr  uint64
	bytes []byte
	// nothing is set for an address no code was mapped at, whose
	// translation failed (a liveness scan's walk past the code, to 0
	// say): the job stays good while the guest maps no code there.
	nothing bool
}

// background is the accelerator's translations off the guest's goroutine.
type background struct {
	jobs map[uint64]*backgroundJob // by hot spot entry, on the guest's goroutine only
	stop chan struct{}
	// batches are the goroutines started, one per profile.
	batches []*backgroundBatch
	// startAt is the address of main while the guest has not reached
	// it: the goroutine starts there (0: started, or never).
	startAt uint64
	// taken counts the jobs whose kernels the guest took; redone those it
	// translated again (the copy differed from its memory).
	taken, redone int
}

// backgroundBatch is the account of one profile's goroutines: exited is
// closed when they have ended; spent (the time they translated) and
// translated (the jobs they finished) are read once it is.
type backgroundBatch struct {
	exited     chan struct{}
	spent      time.Duration
	translated int
}

// backgroundAvailable reports whether the guest can be translated off its
// goroutine.
func (a *Accelerator) backgroundAvailable() bool {
	return len(a.g.CodeRanges) > 0 && a.g.NewLifter != nil && !a.opts.NoBackground
}

// scheduleBackground starts translating the profile's hot spots in the
// background when the guest reaches main (see the RATIONALE above), or at
// once when main is not known or not mapped yet; where hot spots are armed
// late, when Arm arms them. Without the background,
// the kernels loaded ahead (prefetch) wait for main too: translated
// before the start-up code has run, a nest that calls memset through its
// stub would see no memset and stay on the CPU (twomm's first product).
func (a *Accelerator) scheduleBackground() {
	if !slices.ContainsFunc(a.opts.Profile.HotSpots, func(hs profile.HotSpot) bool { return mappedLevel(&hs) >= 0 }) {
		return
	}
	if !a.backgroundAvailable() && !a.prefetching() {
		return
	}
	if a.opts.ArmAfter > 0 && a.loader == nil {
		// Hot spots armed late (Arm), where a run shorter than ArmAfter
		// pays nothing for phase 2: nor for translating, which Arm
		// starts.
		return
	}
	for _, s := range a.g.Symbols {
		if s.Name == "main" && a.executable(s.Addr) && !a.bps[s.Addr] {
			a.bg.startAt = s.Addr
			a.bps[s.Addr] = true
			return
		}
	}
	a.startBackground(a.opts.Profile, 0)
}

// reachedStart handles the guest's arrival at main: the breakpoint goes and
// the background starts (or, without it, the kernels of the hot spots
// armed so far are prefetched, where Wake or New would have). It reports
// whether pc was that address.
func (a *Accelerator) reachedStart(pc uint64) bool {
	if a.bg.startAt == 0 || pc != a.bg.startAt {
		return false
	}
	a.bg.startAt = 0
	if a.spots[pc] == nil {
		delete(a.bps, pc)
		a.main.Invalidate(pc, 1)
	}
	if a.backgroundAvailable() {
		a.startBackground(a.opts.Profile, 0)
	} else if a.woke || a.opts.ArmAfter == 0 {
		a.prefetch(a.order)
	}
	return true
}

// startBackground copies the guest's code and starts a goroutine that
// translates the parallel hot spots of prof not translated or queued yet,
// whose headers the copy holds.
func (a *Accelerator) startBackground(prof *profile.File, first uint64) {
	if !a.backgroundAvailable() || a.closed || prof == nil {
		return
	}
	if a.bg.jobs == nil {
		a.bg.jobs = map[uint64]*backgroundJob{}
		a.bg.stop = make(chan struct{})
	}
	var jobs []*backgroundJob
	headers := map[uint64]bool{}
	var snap *gvinst.Memory
	spots := make([]*profile.HotSpot, len(prof.HotSpots))
	for i := range prof.HotSpots {
		spots[i] = &prof.HotSpots[i]
	}
	for i := range prof.HotSpots {
		hs := &prof.HotSpots[i]
		L := mappedLevel(hs)
		entry := uint64(hs.Entry)
		if L < 0 || a.bg.jobs[entry] != nil || a.spotBuilt(entry) {
			continue
		}
		h := uint64(hs.Levels[L].Header)
		if headers[h] {
			continue // the same loop level as another hot spot: never built
		}
		if snap == nil {
			snap = a.copyCode()
		}
		if p, ok := snap.PermAt(h); !ok || p&gvinst.PermExec == 0 {
			continue
		}
		headers[h] = true
		j := &backgroundJob{hs: hs, L: L, done: make(chan struct{}), prefetch: prefetchWorthy(hs, spots), variants: variantsLaunchIn(hs, L, spots)}
		a.bg.jobs[entry] = j
		jobs = append(jobs, j)
	}
	if len(jobs) == 0 {
		return
	}
	orderJobs(jobs, first)
	batch := &backgroundBatch{exited: make(chan struct{})}
	a.bg.batches = append(a.bg.batches, batch)
	var ld *loader
	if a.prefetching() {
		a.startLoader()
		ld = a.loader
	}
	sim := a.opts.Driver.Name() == "sim"
	stop, symbols := a.bg.stop, a.g.Symbols
	// Each goroutine has a copy of its own (a memory is read by one
	// goroutine at a time) and takes the next job no one has begun.
	workers := a.backgroundWorkers()
	spent := make([]time.Duration, workers)
	translated := make([]int, workers)
	var all sync.WaitGroup
	for w := range workers {
		if w > 0 {
			snap = a.copyCode()
		}
		lifter := a.g.NewLifter(snap)
		all.Add(1)
		go func(w int, snap *gvinst.Memory) {
			defer all.Done()
			rec := &recordingLifter{t: lifter, mem: snap}
			known := profile.NewKnownCalls(rec, snap, symbols)
			for _, j := range jobs {
				if closed(stop) {
					if j.state.CompareAndSwap(jobQueued, jobTaken) {
						j.stopped = true
						close(j.done)
					}
					continue
				}
				if !j.state.CompareAndSwap(jobQueued, jobRunning) {
					continue // begun by another, or the guest's goroutine translates it
				}
				t0 := time.Now()
				rec.reads, rec.failed = nil, false
				j.sp = newSpot(j.hs, j.L)
				j.sp.known = known
				j.err = j.sp.generate(rec)
				j.reads, j.liftFailed, j.memset = rec.reads, rec.failed, j.sp.memsetAsked
				j.took = time.Since(t0)
				spent[w] += j.took
				translated[w]++
				close(j.done)
				if ld != nil && j.err == nil && !j.liftFailed && j.prefetch {
					ld.enqueue(modulesOf(kernelsToLoad(j.sp, sim), j.variants), j.hs.Share)
				}
			}
		}(w, snap)
	}
	go func() {
		all.Wait()
		for w := range workers {
			batch.spent += spent[w]
			batch.translated += translated[w]
		}
		close(batch.exited)
	}()
}

// orderJobs sorts background jobs in the order of the code: the guest
// reaches a program's initialisation nests, which come first, before its
// hot products (the profile's order, heaviest first), and takes over a
// hot spot the goroutines have not begun. But the nests that hold first,
// where a profiling round left the guest, come before all: the guest
// reaches their headers next. (gemm's product, fifth of seven in the
// code, was translated after the initialisation nests the guest had long
// left, while the guest waited for it at its header: 0.1 s of its single
// run at 1600 on an H100 host.)
func orderJobs(jobs []*backgroundJob, first uint64) {
	slices.SortStableFunc(jobs, func(x, y *backgroundJob) int {
		if hx, hy := holds(x.hs, first), holds(y.hs, first); hx != hy {
			if hx {
				return -1
			}
			return 1
		}
		return cmp.Compare(x.hs.Levels[x.L].Header, y.hs.Levels[y.L].Header)
	})
}

// holds reports whether one of hs's levels runs the block at pc (0: no
// block).
func holds(hs *profile.HotSpot, pc uint64) bool {
	if pc == 0 {
		return false
	}
	for _, lv := range hs.Levels {
		if uint64(lv.Header) == pc || slices.Contains(lv.Blocks, profile.Hex(pc)) {
			return true
		}
	}
	return false
}

// backgroundWorkers is how many goroutines translate in the background:
// Options.BackgroundWorkers, or one per four cores, one to four (one on
// the 2-core machines, where the guest and the simulator need the other;
// four on a 16-core GPU host, where two left a single run's guest waiting
// 0.1-0.4 s for the kernels of the nest a round had just found).
func (a *Accelerator) backgroundWorkers() int {
	if n := a.opts.BackgroundWorkers; n > 0 {
		return n
	}
	return min(max(runtime.NumCPU()/4, 1), 4)
}

// spotBuilt reports whether the hot spot at entry was translated already.
func (a *Accelerator) spotBuilt(entry uint64) bool {
	for _, sp := range a.order {
		if sp.entry == entry {
			return sp.built
		}
	}
	return false
}

// copyCode copies the pages of Guest.CodeRanges into a memory of their own,
// with their permissions (pages whose bytes the device holds are data, and
// are left out rather than brought back).
func (a *Accelerator) copyCode() *gvinst.Memory {
	snap := gvinst.NewMemory(0)
	buf := make([]byte, gvinst.PageSize)
	for _, r := range a.g.CodeRanges {
		for p := r[0] &^ (gvinst.PageSize - 1); p < r[1]; p += gvinst.PageSize {
			perm, ok := a.g.Mem.PermAt(p)
			if !ok || a.g.Mem.IsStale(p) || a.g.Mem.Peek(p, buf) != nil {
				continue
			}
			if snap.Map(p, gvinst.PageSize, perm|gvinst.PermRead) != nil {
				continue
			}
			if !allZero(buf) {
				_ = snap.Poke(p, buf)
			}
		}
	}
	return snap
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// recordingLifter is a lifter over the copy that keeps the bytes of every
// block it lifts (codeRead).
type recordingLifter struct {
	t      gvinst.Translator
	mem    *gvinst.Memory
	reads  []codeRead
	failed bool
}

func (r *recordingLifter) Translate(addr uint64) (*gvinst.VBlock, error) {
	b, err := r.t.Translate(addr)
	if err != nil && !executable(r.mem, addr) {
		// The guest's goroutine fails there too, as long as nothing
		// executable is mapped there (sameCode). (A liveness scan
		// walked to 0 in every hot spot of symm and gramschmidt: each
		// was translated again on the guest's goroutine, 0.1 to 0.2 s
		// of the run.)
		r.reads = append(r.reads, codeRead{addr: addr, nothing: true})
		return b, err
	}
	if err != nil || b == nil || b.End < b.Addr {
		r.failed = true
		return b, err
	}
	buf := make([]byte, b.End-b.Addr)
	if r.mem.Peek(b.Addr, buf) != nil {
		r.failed = true
	}
	r.reads = append(r.reads, codeRead{addr: b.Addr, bytes: buf})
	return b, nil
}

// takeBackground returns the background translation of sp, waiting for it
// while it runs, or nil when there is none the guest can use: sp is then
// translated on the guest's goroutine (a job not begun yet is taken over).
func (a *Accelerator) takeBackground(sp *spot) *backgroundJob {
	j := a.bg.jobs[sp.entry]
	if j == nil {
		return nil
	}
	delete(a.bg.jobs, sp.entry)
	if j.state.CompareAndSwap(jobQueued, jobTaken) {
		return nil
	}
	<-j.done
	if j.stopped || j.liftFailed || !a.sameCode(j) {
		a.bg.redone++
		return nil
	}
	a.bg.taken++
	return j
}

// sameCode reports whether the guest's memory still holds what job j
// translated, and gives the answers it had to its memset questions.
func (a *Accelerator) sameCode(j *backgroundJob) bool {
	for _, r := range j.reads {
		if r.nothing {
			if executable(a.g.Mem, r.addr) {
				return false
			}
			continue
		}
		buf := make([]byte, len(r.bytes))
		if a.g.Mem.Peek(r.addr, buf) != nil || !bytes.Equal(buf, r.bytes) {
			return false
		}
	}
	known := a.g.knownCalls()
	for t, v := range j.memset {
		if known.Known(t) != v {
			return false
		}
	}
	return true
}

// adopt takes the translation of g (newSpot's of the same hot spot and
// level, then generate) into sp, which was not translated.
func (sp *spot) adopt(g *spot) {
	sp.blocks, sp.exits, sp.level, sp.innerSet, sp.inner2Set = g.blocks, g.exits, g.level, g.innerSet, g.inner2Set
	sp.kernel, sp.kernel2, sp.kernel3, sp.dead2D = g.kernel, g.kernel2, g.kernel3, g.dead2D
	sp.parts, sp.cutAfter = g.parts, g.cutAfter
	sp.rep.Note, sp.rep.ScheduleNote, sp.rep.ExitNote = g.rep.Note, g.rep.ScheduleNote, g.rep.ExitNote
}

// stopBackground stops the background goroutines after the hot spot each
// is translating, and waits for them.
func (a *Accelerator) stopBackground() {
	if a.bg.stop == nil {
		return
	}
	if !closed(a.bg.stop) {
		close(a.bg.stop)
	}
	for _, b := range a.bg.batches {
		<-b.exited
	}
}

// backgroundDone is the time the background goroutines that have ended
// spent translating, and the hot spots they translated.
func (a *Accelerator) backgroundDone() (time.Duration, int) {
	var d time.Duration
	n := 0
	for _, b := range a.bg.batches {
		if closed(b.exited) {
			d += b.spent
			n += b.translated
		}
	}
	return d, n
}

// kernelsToLoad are the kernels of a translated hot spot a launch is
// likeliest to need, which the loader loads ahead: the schedule's parts
// (their even variants where they have them), else the 3D or 2D kernel on a real GPU (where prefer2D and prefer1D
// never pick the smaller one), else the level's own. The others load when
// a launch first needs them (spot.load): a module keeps the driver busy
// for the tens of milliseconds the JIT takes, and the guest's copies,
// allocations and launches wait for it (gemm at 2000 on an H100: ten
// modules loaded ahead one after the other, for the variants and for hot
// spots that never launched, and the product's launch waited 0.18 s for
// its own). sim says the driver is the simulator, whose modules load in
// microseconds: the 1D and 2D kernels both load ahead there, whichever
// the launch picks.
func kernelsToLoad(sp *spot, sim bool) []*ptxgen.Kernel {
	switch {
	case sim && sp.parts == nil:
		return []*ptxgen.Kernel{sp.kernel, sp.kernel2}
	case sp.parts != nil:
		// A part's even variant where it has one: a dense nest's rows
		// are even (loadedPart), and its own kernel loads if they are not.
		var ks []*ptxgen.Kernel
		for _, p := range sp.parts {
			ks = append(ks, cmp.Or(p.even, p.k))
		}
		return ks
	case sp.kernel3 != nil && !sim:
		return []*ptxgen.Kernel{sp.kernel3}
	case sp.kernel2 != nil && !sim:
		return []*ptxgen.Kernel{sp.kernel2}
	}
	return []*ptxgen.Kernel{sp.kernel}
}

// minPrefetchShare is the least share of the profiled run a hot spot must
// have taken for its kernels to load ahead.
const minPrefetchShare = 0.01

// prefetchWorthy reports whether the kernels of hot spot hs are worth
// loading ahead, among the hot spots all (hs's profile's, or those armed):
// it took at least minPrefetchShare of the profiled run, and its level
// is not inside another's mapped level, which launches its instances
// whole (an inner loop's hot spot runs only where the nest around it
// fell back to the CPU).
func prefetchWorthy(hs *profile.HotSpot, all []*profile.HotSpot) bool {
	L := mappedLevel(hs)
	if L < 0 || hs.Share < minPrefetchShare {
		return false
	}
	h := hs.Levels[L].Header
	for _, o := range all {
		oL := mappedLevel(o)
		if o == hs || oL < 0 || o.Levels[oL].Header == h {
			continue
		}
		if slices.Contains(o.Levels[oL].Blocks, h) {
			return false
		}
	}
	return true
}

// executable reports whether mem maps the page at addr executable.
func executable(mem *gvinst.Memory, addr uint64) bool {
	perm, ok := mem.PermAt(addr)
	return ok && perm&gvinst.PermExec != 0
}
