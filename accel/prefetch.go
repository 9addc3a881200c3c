package accel

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/profile"
	"github.com/gxbit/gxbit/ptxgen"
)

// Kernels loaded ahead (RATIONALE).
//
// On a real GPU, opening the context costs 0.1–0.3 s and loading a module
// (the CUDA JIT compiling its PTX) about 0.1 s; a run that waits for each
// at each hot spot's first launch pays them one after the other, in the
// guest's time: twomm's eight hot spots spent most of a second there. So
// once hot spots are armed, their kernels are generated at once (in the
// background, from a copy of the guest's code, background.go) and a
// loader goroutine opens the context, measures the device's costs (before
// any module load: a launch timed while the JIT holds the driver looked
// 500 times slower, and the cost model then kept every stencil on the
// CPU) and loads the modules in the background while the guest goes on;
// a launch waits only for the load under way, and loads a module the
// loader has not begun itself. The simulator opens a context and parses
// a module in microseconds, so it loads on demand (unless
// Options.Prefetch asks otherwise, as tests do).
//
// When the hot spots are armed late (Options.ArmAfter), the loader starts
// at once all the same, with no module to load: the context opens and the
// device is measured while the guest runs its first quarter second, so
// that the first launch after arming does not wait for them (0.1–0.3 s
// for the context alone, where gemm's whole two-phase run on an H100
// took under a second). A run that ends before it needs the context does not wait for
// it either: the loader is abandoned, and closes the context itself once
// it has it.

// loader opens the device context and loads modules on a goroutine of its
// own (see the RATIONALE above).
type loader struct {
	// jobs has a token for each module queued: the loader takes the
	// queued module of the hottest hot spot (queue, under mu), so that
	// the kernels of a program's product load before those of its
	// initialisation nests, which the guest may have run on the CPU while
	// the context opened.
	jobs chan struct{}
	// ctxReady is closed once ctx and ctxErr are set; exited once the
	// goroutine has finished its last job; stop tells it to skip the
	// jobs left (the run is over); abandon, closed before stop, that the
	// accelerator will not take the context: the goroutine closes it.
	ctxReady, exited, stop, abandon chan struct{}
	ctx                             gpu.Context
	ctxErr                          error
	readyAt                         time.Time // when ctxReady was closed
	// costs are the device's costs, measured on the loader before any
	// module loads (a measurement the JIT shares the driver with times
	// the JIT), when the accelerator has none yet; costErr why not.
	costs   *DeviceCosts
	costErr error
	// costsCached says the costs came from Options.CostsCache.
	costsCached bool
	// loads are the futures by kernel, each written before its job is
	// sent (by the guest's goroutine or a background translation's), under
	// mu.
	mu    sync.Mutex
	loads map[*ptxgen.Kernel]*loadFuture
	queue []loadJob
	// compiling is how many modules the loader's goroutines are loading
	// now, and compiled how many they have loaded: a launch made while
	// one loads waits for the JIT, which holds the driver, unless the
	// driver compiles beside its calls (jitOverlap), and a timing of the
	// CPU engine meanwhile shares the host's cores (compiledSince).
	compiling atomic.Int32
	compiled  atomic.Int64
	// loadsTook is the time the compiled modules took, in all.
	loadsTook atomic.Int64
	// openTook and measureTook are the times the context took to open
	// and the device to be measured (DeviceOpenSeconds).
	openTook, measureTook time.Duration
	// props are the device's (Driver.Device), asked once the context is
	// open, and propsErr why not.
	props    gpu.DeviceProps
	propsErr error
}

// errLoaderStopped is the error of a module the loader skipped because
// the run ended first.
var errLoaderStopped = errors.New("accelerate: the run ended before the kernel was loaded")

// loadJob is one module to load, of a hot spot that took share of the
// profiled run.
type loadJob struct {
	f     *loadFuture
	share float64
}

// loadFuture is a module being loaded, of kernels ks (spot.moduleOf):
// fns (in ks's order), err and took are set before done is closed, by the
// loader, or by the guest's goroutine when it needs the module before the
// loader has begun it (state).
type loadFuture struct {
	ks   []*ptxgen.Kernel
	done chan struct{}
	// state is jobQueued until the loader begins the load (jobRunning)
	// or the guest's goroutine takes it over (jobTaken); started is when
	// the loader began it (UnixNano, 0 before).
	state   atomic.Int32
	started atomic.Int64
	fns     []gpu.Function
	err     error
	took    time.Duration
	// byGuest says the guest's goroutine loaded it (jobTaken).
	byGuest bool
}

// fn is kernel k's function in the module (nil when it did not load).
func (f *loadFuture) fn(k *ptxgen.Kernel) gpu.Function {
	if i := slices.Index(f.ks, k); i >= 0 && i < len(f.fns) {
		return f.fns[i]
	}
	return nil
}

// compilesBeside reports whether the driver compiles modules beside its
// other calls, several at once (cuda.Driver.CompilesBeside, where the
// library has the driver's linker): a launch made while a module compiles
// does not wait for it (jitOverlap), and a kernel's unchecked and dry
// variants load as modules of their own, queued after it, instead of in
// one module with it (spot.moduleOf), so that the kernel is ready as soon
// as its own compile ends.
func (a *Accelerator) compilesBeside() bool {
	cb, ok := a.opts.Driver.(interface{ CompilesBeside() bool })
	return ok && cb.CompilesBeside()
}

// prefetching reports whether the accelerator loads ahead.
func (a *Accelerator) prefetching() bool {
	switch a.opts.Prefetch {
	case PrefetchOn:
		return true
	case PrefetchOff:
		return false
	}
	return a.opts.Driver.Name() != "sim"
}

// executable reports whether the guest code at addr is mapped to run:
// a hot spot in code not there yet (a library not loaded) is generated
// when the guest first reaches it instead.
func (a *Accelerator) executable(addr uint64) bool {
	p, ok := a.g.Mem.PermAt(addr)
	return ok && p&gvinst.PermExec != 0
}

// startLoader starts the loader goroutine, which opens the context first
// (or takes the one already open).
func (a *Accelerator) startLoader() {
	if a.loader != nil || a.closed {
		return
	}
	l := &loader{jobs: make(chan struct{}, 64), ctxReady: make(chan struct{}), exited: make(chan struct{}), stop: make(chan struct{}), abandon: make(chan struct{}), loads: map[*ptxgen.Kernel]*loadFuture{}}
	a.loader = l
	driver, open, measure, cache := a.opts.Driver, a.ctx, a.costs == nil && a.costErr == nil && !a.opts.AlwaysOffload, a.opts.CostsCache
	go func() {
		defer close(l.exited)
		t0 := time.Now()
		if open != nil {
			l.ctx = open
		} else {
			l.ctx, l.ctxErr = driver.NewContext(0)
		}
		l.openTook = time.Since(t0)
		l.props, l.propsErr = driver.Device(0)
		defer func() {
			// An abandoned loader's context is its own to close.
			select {
			case <-l.abandon:
				if open == nil && l.ctxErr == nil {
					_ = l.ctx.Close()
				}
			default:
			}
		}()
		if l.ctxErr == nil && measure && !closed(l.stop) {
			t1 := time.Now()
			c, cached, err := deviceCostsOf(l.ctx, driver.Name(), l.props, l.propsErr, cache)
			if err == nil {
				l.costs = &c
			}
			l.costErr, l.costsCached = err, cached
			l.measureTook = time.Since(t1)
		}
		l.readyAt = time.Now()
		close(l.ctxReady)
		// A driver that compiles several modules at once (cuda with
		// Options.JITThreads) gets as many goroutines loading them.
		n := 1
		if p, ok := l.ctx.(interface{ LoadParallelism() int }); ok && l.ctxErr == nil {
			n = max(p.LoadParallelism(), 1)
		}
		var more sync.WaitGroup
		for range n - 1 {
			more.Add(1)
			go func() {
				defer more.Done()
				l.loadJobs()
			}()
		}
		l.loadJobs()
		more.Wait()
	}()
}

// loadJobs loads the queued modules until the queue is closed; those left
// when the run stopped end with errLoaderStopped.
func (l *loader) loadJobs() {
	for range l.jobs {
		j := l.next()
		if !j.f.state.CompareAndSwap(jobQueued, jobRunning) {
			continue // the guest's goroutine loads it
		}
		select {
		case <-l.stop:
			j.f.err = errLoaderStopped
			close(j.f.done)
			continue
		default:
		}
		if l.ctxErr != nil {
			j.f.err = l.ctxErr
		} else {
			t0 := time.Now()
			j.f.started.Store(t0.UnixNano())
			l.compiling.Add(1)
			j.f.fns, j.f.err = loadKernels(l.ctx, j.f.ks)
			l.compiling.Add(-1)
			l.compiled.Add(1)
			j.f.took = time.Since(t0)
			l.loadsTook.Add(int64(j.f.took))
		}
		close(j.f.done)
	}
}

// next takes the queued job of the largest share (the first queued of
// those): a token on jobs stands for each.
func (l *loader) next() loadJob {
	l.mu.Lock()
	defer l.mu.Unlock()
	best := 0
	for i, j := range l.queue {
		if j.share > l.queue[best].share {
			best = i
		}
	}
	j := l.queue[best]
	l.queue = slices.Delete(l.queue, best, best+1)
	return j
}

// closed reports whether c is closed.
func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// startDevice starts the loader with no module to load when the hot
// spots are armed late (see the RATIONALE above), so that the context
// opens and the device is measured while the guest runs; a profile with
// nothing to offload opens nothing.
func (a *Accelerator) startDevice() {
	if !a.prefetching() || a.ctx != nil {
		return
	}
	for i := range a.opts.Profile.HotSpots {
		if mappedLevel(&a.opts.Profile.HotSpots[i]) >= 0 {
			a.startLoader()
			return
		}
	}
}

// OpenDevice starts opening the device's context (and measuring the
// device) on the loader, on a real GPU, before any hot spot is armed:
// gxbit run --accelerate calls it when its first profiling round begins,
// so that the context is open when the round's hot spots are armed. A run
// that ends first does not wait for it (stopLoader).
func (a *Accelerator) OpenDevice() {
	if a.prefetching() && a.ctx == nil {
		a.startLoader()
	}
}

// stopLoader waits for the loader's jobs to end and takes its context
// (the guest's goroutine may then use a.ctx alone). A loader still
// opening the context is abandoned instead of waited for: nothing has
// used the context yet, and the run should not wait for it now.
func (a *Accelerator) stopLoader() {
	a.stopBackground() // it may queue modules on the loader
	l := a.loader
	if l == nil {
		return
	}
	if !closed(l.ctxReady) {
		close(l.abandon)
		close(l.stop)
		close(l.jobs)
		a.loader = nil
		return
	}
	close(l.stop)
	close(l.jobs)
	<-l.exited
	a.loader = nil
	if a.ctx == nil && l.ctxErr == nil {
		a.ctx, a.deviceReadyAt = l.ctx, l.readyAt
		a.deviceOpen, a.deviceMeasure = l.openTook, l.measureTook
		a.setDevice(l.props, l.propsErr)
	}
}

// prefetch generates the kernels of the armed hot spots in spots whose
// header code is mapped, and queues their modules on the loader
// (kernelsToLoad's order). A hot spot the background translates
// (background.go) is left to it until it is done: it queues the modules
// itself.
func (a *Accelerator) prefetch(spots []*spot) {
	if !a.prefetching() || a.closed || a.bg.startAt != 0 {
		return
	}
	all := make([]*profile.HotSpot, 0, len(a.order))
	for _, sp := range a.order {
		all = append(all, sp.hs)
	}
	for _, sp := range spots {
		if j := a.bg.jobs[sp.entry]; j != nil && !closed(j.done) {
			continue
		}
		if !prefetchWorthy(sp.hs, all) {
			continue
		}
		if sp.rep.Disarmed || a.spots[sp.header] != sp || !a.executable(sp.header) || !sp.ensureBuilt() {
			continue
		}
		a.startLoader()
		if a.loader == nil {
			continue
		}
		sp.enqueue(kernelsToLoad(sp, a.opts.Driver.Name() == "sim"))
	}
}

// enqueue queues modules, each of the kernels of one of modules not
// queued yet, of a hot spot that took share of the profiled run (see
// jobs), in order; when the queue is full the rest load on demand. Any
// goroutine may call it until the loader stops.
func (l *loader) enqueue(modules [][]*ptxgen.Kernel, share float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ks := range modules {
		ks = slices.DeleteFunc(slices.Clone(ks), func(k *ptxgen.Kernel) bool { return k == nil || l.loads[k] != nil })
		if len(ks) == 0 {
			continue
		}
		f := &loadFuture{ks: ks, done: make(chan struct{})}
		select {
		case l.jobs <- struct{}{}:
			l.queue = append(l.queue, loadJob{f, share})
			for _, k := range ks {
				l.loads[k] = f
			}
		default:
			// The queue is full: these load on demand.
		}
	}
}

// future is kernel k's load, queued or done, or nil when k was not
// queued.
func (l *loader) future(k *ptxgen.Kernel) *loadFuture {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.loads[k]
}

// prefetched returns k's module as the loader loads it (waiting for it),
// or nil when the loader does not have it. A module the loader has not
// begun yet is loaded here at once (the context is open): the guest then
// waits for the load under way at most, not for the queue before it.
func (a *Accelerator) prefetched(k *ptxgen.Kernel) *loadFuture {
	if a.loader == nil {
		return nil
	}
	f := a.loader.future(k)
	if f == nil {
		return nil
	}
	if f.state.CompareAndSwap(jobQueued, jobTaken) {
		t0 := time.Now()
		f.fns, f.err = loadKernels(a.ctx, f.ks)
		f.took, f.byGuest = time.Since(t0), true
		close(f.done)
		return f
	}
	if !closed(f.done) {
		t0 := time.Now()
		<-f.done
		a.deviceWait += time.Since(t0)
	}
	return f
}

// loaderContext waits for the loader's context and device costs and
// makes them the accelerator's.
func (a *Accelerator) loaderContext() error {
	l := a.loader
	t0 := time.Now()
	<-l.ctxReady
	a.deviceWait += time.Since(t0)
	if l.ctxErr != nil {
		return l.ctxErr
	}
	a.ctx = l.ctx
	a.deviceReadyAt = l.readyAt
	a.deviceOpen, a.deviceMeasure = l.openTook, l.measureTook
	a.setDevice(l.props, l.propsErr)
	if a.costs == nil && a.costErr == nil {
		a.costs, a.costErr, a.costsCached = l.costs, l.costErr, l.costsCached
	}
	return nil
}

// jitMark is what jitOverlap compares with later: how many modules the
// loader has loaded, and whether it is loading one now.
type jitMark struct {
	compiled int64
	busy     bool
}

// markJIT returns the loader's jitMark now (the zero mark without a
// loader).
func (a *Accelerator) markJIT() jitMark {
	if a.loader == nil {
		return jitMark{}
	}
	return jitMark{a.loader.compiled.Load(), a.loader.compiling.Load() > 0}
}

// compiledSince reports whether the loader compiled a module at any time
// since mark (markJIT), beside the guest's calls or not (jitOverlap tells
// whether the guest waited for it): the host's cores were shared with
// the compiles meanwhile (launch.go: Timings beside compiles).
func (a *Accelerator) compiledSince(mark jitMark) bool {
	if a.loader == nil {
		return mark.busy
	}
	return mark.busy || a.loader.compiling.Load() > 0 || a.loader.compiled.Load() != mark.compiled
}

// jitOverlap reports whether the loader loaded a module at any time since
// mark: a launch made meanwhile waited for the JIT, which holds the
// driver (tens of milliseconds a module on an H100), and its time says
// nothing of the hot spot's. (jacobi2dt on an H100: the first sweep's
// early launches took 24 ms each while the second sweep's module loaded,
// the ledger sent the sweep back to the CPU, and the two sweeps' arrays
// crossed the bus at every step: 14 s against 1 s.)
//
// Where the driver compiles beside its calls, no launch waits for a
// compile.
func (a *Accelerator) jitOverlap(mark jitMark) bool {
	return !a.compilesBeside() && a.compiledSince(mark)
}

// Not waiting for a module the CPU does not need (RATIONALE).
//
// A hot spot's first launch used to wait for its module, loaded ahead or
// not: on an H100 each module takes the JIT 40-110 ms, one at a time
// (GXBIT_CUDA_JIT_THREADS=4 made each load three times slower and ended
// no sooner), and the small nests beside a program's product waited for
// theirs while their whole work on the CPU was a few milliseconds:
// doitgen's guest waited 0.29 s for a module whose instance the CPU ran
// in 0.2 ms, twomm's 0.24 s for 0.03 s of work. So an instance whose
// kernels have not loaded yet runs on the CPU when the CPU engine does it
// in less time than the load has left (loadWait: the loader's mean module
// so far, less what the load under way has run, at least half that,
// loadLeft), and the loader goes on loading the module for the instances
// after it.

// defaultModuleLoad is what loadWait expects a module to take before the
// loader has loaded one: about the least an H100 took, one at a time;
// defaultModuleLoadBeside where modules compile four at a time beside the
// driver's calls (compilesBeside), each slower: their median on an H100
// was 80 ms (gemm at 2000 2300 2600 waited 0.10 s for an initialisation
// nest's kernel that the CPU ran in 0.045 s, expecting 40 ms).
const (
	defaultModuleLoad       = 40 * time.Millisecond
	defaultModuleLoadBeside = 80 * time.Millisecond
)

// loadWait reports whether none of the spot's kernels has loaded yet
// while the loader has them to load (queued, or under way), and about how
// long the load has left. On the simulator ("sim", or "sim-fast"
// emulating a faster GPU), whose modules load in microseconds, and
// without a loader, nothing waits.
func (sp *spot) loadWait() (time.Duration, bool) {
	l := sp.a.loader
	if l == nil || sp.a.opts.Driver == nil || Simulator(sp.a.opts.Driver.Name()) {
		return 0, false
	}
	for _, k := range sp.allKernels() {
		if sp.loaded[k] != nil {
			return 0, false
		}
	}
	ks := kernelsToLoad(sp, false)
	if len(ks) == 0 || ks[0] == nil {
		return 0, false
	}
	f := l.future(ks[0])
	if f != nil && closed(f.done) {
		return 0, false
	}
	mean := defaultModuleLoad
	if sp.a.compilesBeside() {
		mean = defaultModuleLoadBeside
	}
	if n := l.compiled.Load(); n > 0 {
		mean = time.Duration(l.loadsTook.Load() / n)
	}
	if f != nil {
		if s := f.started.Load(); s != 0 {
			return loadLeft(mean, time.Since(time.Unix(0, s))), true
		}
	}
	return mean, true
}

// loadLeft is what a module load under way for ran, where loads took mean
// so far, has left: the rest of the mean, but never less than half of
// ran. Modules' JIT times vary two- and threefold (30-90 ms on an H100),
// and a load past its mean, expected to end in a millisecond, kept the
// guest waiting for the rest: heat3d at 80 16, whose sweeps the CPU runs
// in 9 ms each, waited 0.05 and 0.09 s for two hot spots' modules, a
// quarter of a 0.4 s run, where the CPU could have run the sweeps
// meanwhile.
func loadLeft(mean, ran time.Duration) time.Duration {
	return max(mean-ran, ran/2, time.Millisecond)
}

// queueLoad queues the spot's kernels on the loader when they are not
// queued yet, so that the instances after one that ran on the CPU while
// they loaded (loadWait) find them loaded.
func (sp *spot) queueLoad() {
	l := sp.a.loader
	if l == nil {
		return
	}
	ks := kernelsToLoad(sp, false)
	if len(ks) == 0 || l.future(ks[0]) == nil {
		sp.enqueue(ks)
	}
}

// enqueue queues the modules of kernels ks on the loader: each alone,
// and, where its instances launch its variants (variantsLaunch), those
// after it at half the hot spot's share, where the driver compiles beside
// its calls (compilesBeside); else each with its variants where its
// instances launch them. Variants the instances are not expected to
// launch load when one does: compiled ahead for every hot spot, they
// took the host's cores from the guest for nothing (gramschmidt's column
// loops and triangles replay their checked kernel).
func (sp *spot) enqueue(ks []*ptxgen.Kernel) {
	l := sp.a.loader
	if sp.a.compilesBeside() {
		l.enqueue(modulesOf(ks, false), sp.hs.Share)
		if sp.variantsLaunch() {
			sp.enqueueVariants(ks...)
		}
		return
	}
	l.enqueue(modulesOf(ks, sp.variantsLaunch()), sp.hs.Share)
}

// enqueueVariants queues the variants of ks not loaded yet (variantsOf)
// on the loader, a module each, at half the hot spot's share: after its
// kernels.
func (sp *spot) enqueueVariants(ks ...*ptxgen.Kernel) {
	sp.a.loader.enqueue(modulesOf(sp.variantsOf(ks...), false), sp.hs.Share/2)
}
