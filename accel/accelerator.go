package accel

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/profile"
	"github.com/gxbit/gxbit/ptxgen"
	"github.com/gxbit/gxbit/schedule"
)

// Guest is what phase 2 needs of the guest program: its memory, the
// lifter that translates its code, and its identity. Package pipeline
// loads the guest and fills it in.
type Guest struct {
	Mem    *gvinst.Memory
	Lifter gvinst.Translator
	// SHA256 is the hex SHA-256 of the program file; a profile made for
	// another program is refused.
	SHA256 string
	// Symbols are the program's function symbols, by which phase 2 knows
	// a call to memset in a nest (profile.KnownCalls); without them no
	// call is known.
	Symbols []profile.Symbol
	// CodeRanges are the guest addresses [start, end) of the program's
	// code and the data its PLT stubs read (its loaded segments, as the
	// file has them), and NewLifter makes a lifter like Lifter over
	// another memory: with both, hot spots are translated from a copy of
	// those ranges on a goroutine of their own while the guest runs
	// (background.go). Without them, on the guest's goroutine when it
	// first reaches a header.
	CodeRanges [][2]uint64
	NewLifter  func(mem *gvinst.Memory) gvinst.Translator
	known      *profile.KnownCalls
}

// knownCalls returns the recogniser of the guest's memset calls.
func (g *Guest) knownCalls() *profile.KnownCalls {
	if g.known == nil {
		g.known = profile.NewKnownCalls(g.Lifter, g.Mem, g.Symbols)
	}
	return g.known
}

// Options configures phase 2.
type Options struct {
	Profile *profile.File
	Driver  gpu.Driver // an initialised driver
	// PTXDir, when set, receives every generated kernel as <entry>.ptx.
	PTXDir string
	// MinIterations is the least number of iterations worth a launch;
	// 0 means DefaultMinIterations.
	MinIterations uint64
	// AlwaysOffload launches whenever the guards pass, whatever the cost
	// model says (tests, and measuring kernels).
	AlwaysOffload bool
	// WetProbes runs probed rows whole on the CPU, where by default they
	// run dry (dryrows.go): each inner loop's first iterations recorded,
	// then jumped to its last, the guest put back and the GPU running
	// the rows too. (On an H100, two-phase at the large sizes: gemm at
	// 2000 2300 2600 0.45 s dry against 0.69 wet, the 2D products 10-30%
	// faster, none slower once a replay came before an early dry probe.)
	// gxbit's commands set it on the simulator (pipeline.WetProbesFor).
	WetProbes bool
	// Probes, when set, hears what probing each instance gave, before
	// the guards and the launch (tests, and tools comparing probes).
	Probes func(ProbeTrace)
	// CPUTail has the CPU run every offloaded instance's last arrival,
	// the one that leaves the loop, as before kernels gave the loop's
	// exit state (for comparing the two: TestExitStateFromKernel).
	CPUTail bool
	// Costs are the device's costs; nil means measure them at the first
	// launch that needs them (MeasureDevice).
	Costs *DeviceCosts
	// Engine makes the main engine, the one the guest runs on outside
	// the offloaded loops (breakpoints at the hot spots' headers); nil
	// means the interpreter. Package pipeline passes the engine its
	// Config names (the compiling one by default).
	Engine gvinst.NewEngineFunc
	// ArmAfter, when not 0, is the process CPU time the run takes before
	// the hot spots are armed: New arms none, and whoever drives the run
	// (package pipeline) calls Arm once that much has passed, so that a
	// program too short for any offload to pay does not pay for probing
	// either. A nest instance running by then is offloaded from its next
	// iteration.
	ArmAfter time.Duration
	// Prefetch says when armed hot spots have their kernels generated
	// and loaded ahead, with the device context, on a goroutine of their
	// own (see prefetch.go): PrefetchAuto on a real GPU only.
	Prefetch Prefetch
	// NoBackground translates every hot spot on the guest's goroutine,
	// when the guest first reaches it, even where Guest.CodeRanges would
	// let a goroutine of its own do it ahead (background.go).
	NoBackground bool
	// BackgroundWorkers is how many goroutines translate in the
	// background; 0 means one per eight cores, one to four.
	BackgroundWorkers int
	// DryRunAbove is the size of backup above which a checked launch of
	// a data-independent kernel proves its input with a launch of the
	// kernel's dry variant and then runs the unchecked one, instead of
	// backing up the device's only copies of what it may overwrite
	// (ptxgen's backup.go). 0 means: never on the simulator, whose
	// copies on the device cost a memmove and whose kernels cost their
	// emulation twice; elsewhere whichever costs less, the backup at the
	// bandwidth the backups so far saw or the dry launch at what the dry
	// launches so far took (before one ran, a launch's latency and the
	// kernel's time), once a backup has been timed (proveDry).
	DryRunAbove uint64
	// LeaveDevice leaves the device's memory and context to the
	// driver's clean-up at the process's exit when the run ends (Discard,
	// Close):
	// gxbit's commands exit right after the run, and freeing every
	// buffer and destroying the context one call at a time took an H100
	// 0.07 s at the end of each run. A process that goes on (the daemon)
	// must leave it false.
	LeaveDevice bool
	// BackWindow is how many bytes of the pages brought back while the
	// guest reads an array forward stay in the guest before their host
	// memory goes to the next ones (ptxgen.Resident.BackWindow; 0: its
	// default).
	BackWindow uint64
	// CostsCache is the file that keeps a real GPU's costs between runs
	// (costcache.go; DefaultCostsCache): a run on a device it knows does
	// not measure it. Empty: measured every run.
	CostsCache string
	// EntryCutAfter is how many of a hot spot's instances are replayed
	// before its header is cut from outside its level too, so that its
	// instances start at their first arrival rather than the second
	// (breakCutter; the first instance after the cut is probed again).
	// 0 means defaultEntryCutAfter; below 0, never.
	EntryCutAfter int
}

// Prefetch is Options.Prefetch.
type Prefetch int

// The Prefetch settings.
const (
	PrefetchAuto Prefetch = iota // on a real GPU, not on the simulator
	PrefetchOn
	PrefetchOff
)

// disarmAfter is how many instances in a row too short to launch make a
// hot spot that never launched stop probing, how many in a row predicted
// not to pay make any hot spot stop (see streak), and how many launches in
// a row whose kernel reported an error send a hot spot back to the CPU.
const disarmAfter = 8

// ErrProfileMismatch is returned when a profile is applied to a program
// other than the one it was made for.
var ErrProfileMismatch = errors.New("the profile does not belong to this program")

// DefaultMinIterations is the smallest offloaded iteration count when
// Options.MinIterations is 0: below it a launch and its copies cost
// more than the CPU engine takes.
const DefaultMinIterations = 16

// Accelerator offloads a guest's hot spots: it owns the breakpoints, the
// kernels and the device context of one run.
type Accelerator struct {
	g    *Guest
	opts Options
	// run is the whole run's account of offloading; stopped says why it
	// stopped offloading altogether ("" while it goes on).
	run     runLedger
	stopped string
	// ctx is the device context (nil until openContext), closed once
	// Close ran.
	ctx    gpu.Context
	closed bool
	// loader opens the context and loads kernels ahead (prefetch.go);
	// nil when it does not run. prefetchedUsed counts the launches' kernels
	// it had loaded.
	loader         *loader
	prefetchedUsed int
	// deviceReadyAt is when the context was open (and the device
	// measured); deviceWait the time the guest waited for the loader.
	deviceReadyAt time.Time
	deviceWait    time.Duration
	// deviceOpen and deviceMeasure are what deviceReadyAt took: the
	// context's opening and the device's measurement; costsCached says
	// the costs came from Options.CostsCache (costcache.go).
	deviceOpen, deviceMeasure time.Duration
	costsCached               bool
	// bg translates hot spots off the guest's goroutine (background.go).
	bg    background
	dev   string
	spots map[uint64]*spot // by mapped header
	// profiled are the hot spots of the profiles added so far
	// (hotSpots).
	profiled []*profile.HotSpot
	order    []*spot
	main     gvinst.Engine
	// closeMain releases the main engine (nil when it holds nothing, or
	// once released).
	closeMain io.Closer
	// fallbacks are the engines Options.Engine made for the hot spots'
	// CPU runs (spot.fastEngine).
	fallbacks []gvinst.Engine
	aux       []*gvinst.Interpreter
	// resident keeps device buffers across launches; a launch skips the
	// copy in of an array the guest has not changed since.
	resident ptxgen.Resident
	// bps are the main engine's breakpoints; a disarmed hot spot's goes.
	// cut is the main engine's translator, which cuts a level's block
	// before its header (breakCutter).
	bps map[uint64]bool
	cut *breakCutter
	// costs are the device's, measured at the first launch that needs
	// them (costErr when that failed).
	costs   *DeviceCosts
	costErr error
	// copyIn measures the copy-in bandwidth the launches saw; merges the
	// bandwidth of their copies on the device when buffers merge;
	// backups the device-to-device bandwidth of the launches' backups
	// (proveDry).
	copyIn, merges copyMeter
	backups        backupMeter
	// calib compares the kernels' times with the throughput model's
	// (DeviceCosts.KernelScale).
	calib calibration
	// prepared are the entries of the hot spots prepared so far.
	prepared map[uint64]bool
	// dozing are hot spots armed early (armEarly) that the guest reached
	// before the device was ready: their breakpoints are off until Wake
	// finds it ready (and sets woke).
	dozing []*spot
	woke   bool
	// The main engine's speed: since created is the time it has had,
	// but for inBreak, spent in OnBreak.
	created time.Time
	inBreak time.Duration
	// plainRate is the plain engine's best speed timed on any hot spot
	// (guest instructions per second; 0 until one was timed), which
	// prices the iterations of loops too short to time (CPUIteration).
	plainRate float64
	// roughRate is the best speed timed on runs that also brought data
	// back from the device, less that (runRate).
	roughRate float64
	// launchSeq counts the run's launches (see spot.deviceUse).
	launchSeq uint64
	// unseen is the host time of an emulated faster GPU's launches that
	// the emulated device does not count (Report.EmulationSeconds).
	unseen time.Duration
}

// mainRate is the main engine's guest instructions per second so far
// (0 until it has run enough to tell): the CPU engine's speed on plain
// code, for iterations too short to time one by one.
func (a *Accelerator) mainRate() float64 {
	n := a.main.Stats().GuestInsns
	t := time.Since(a.created) - a.inBreak
	if n < 1<<20 || t <= 0 {
		return 0
	}
	return float64(n) / t.Seconds()
}

// New prepares the hot spots of opts.Profile for guest g: it arms a
// breakpoint at the header of each parallel nest; the nest is translated
// and its kernels generated in the background from when the guest reaches
// main (background.go; or on the guest's goroutine when it first reaches
// the header), and loaded ahead on a real GPU (prefetch.go) or at their
// first launch. The device context is made when the guest
// first reaches a hot spot whose kernel was generated (a context on a
// real GPU costs a good part of a second), so a run that offloads
// nothing never opens it. A nest that cannot be offloaded is reported
// with its reason and runs on the CPU. The caller runs the guest
// on Engine, calls OnBreak at each breakpoint stop, and Finish at the end.
func New(g *Guest, opts Options) (*Accelerator, error) {
	if opts.Profile == nil || opts.Driver == nil {
		return nil, errors.New("accelerate: a profile and a driver are needed")
	}
	if sum := opts.Profile.ProgramSHA256; sum != "" && sum != g.SHA256 {
		return nil, fmt.Errorf("%w: it was made for %s (sha256 %.12s…), not this program (sha256 %.12s…)", ErrProfileMismatch, opts.Profile.Program, sum, g.SHA256)
	}
	if opts.MinIterations == 0 {
		opts.MinIterations = DefaultMinIterations
	}
	a := &Accelerator{g: g, opts: opts, spots: map[uint64]*spot{}, created: time.Now()}
	// What a kernel writes stays on the device until the guest touches
	// it; the first launch makes the resident buffers g.Mem's holder.
	a.resident.Lazy = true
	a.resident.LeaveDevice = opts.LeaveDevice
	a.resident.BackWindow = opts.BackWindow
	if !a.prefetching() {
		// On a real GPU the loader asks, once the context is open: the
		// driver may still be initialising (pipeline.StartGPU).
		a.setDevice(opts.Driver.Device(0))
	}
	a.costs = opts.Costs
	a.bps = map[uint64]bool{}
	a.cut = &breakCutter{lift: g.Lifter, bps: a.bps, levels: map[uint64]map[uint64]bool{}, entries: map[uint64]bool{}}
	a.prepared = map[uint64]bool{}
	if opts.ArmAfter == 0 {
		a.addSpots(opts.Profile)
	} else {
		a.startDevice()
		a.armEarly()
	}
	a.scheduleBackground()
	newEngine := opts.Engine
	if newEngine == nil {
		newEngine = func(mem *gvinst.Memory, t gvinst.Translator, o gvinst.InterpOptions) (gvinst.Engine, error) {
			return gvinst.NewInterpreter(mem, t, o), nil
		}
	}
	// The breakpoint set is shared: the engine and its translator read it
	// whenever they translate a block (breakCutter), and add and disarm
	// change it, then invalidate the header's block.
	var err error
	if a.main, err = newEngine(g.Mem, a.cut, gvinst.InterpOptions{Breakpoints: a.bps, Optimize: true}); err != nil {
		return nil, fmt.Errorf("accelerate: the main engine: %w", err)
	}
	a.closeMain, _ = a.main.(io.Closer)
	if opts.ArmAfter == 0 {
		// Hot spots armed early wait for the device or the guest
		// before their kernels are generated (Wake, doze).
		a.prefetch(a.order)
	}
	return a, nil
}

// setDevice takes the device's name and memory (Driver.Device) when err is
// nil.
func (a *Accelerator) setDevice(p gpu.DeviceProps, err error) {
	if err == nil && a.dev == "" {
		a.dev = a.opts.Driver.Name() + ": " + p.Name
		a.resident.MaxBytes = residentBudget(p.TotalMemory)
	}
}

// residentBudget is the device memory the resident buffers may keep on a
// device of total bytes: half of it (the rest is for the backups a launch
// makes of what it may write, and the driver's own), and never less than
// the Resident's default of 1 GiB. An array over the budget is copied back
// eagerly after every launch, so a budget far below the device's memory
// costs gigabytes of copies on large arrays.
func residentBudget(total uint64) uint64 {
	return max(total/2, 1<<30)
}

// hotSpots returns every hot spot of the profiles added so far, the ones
// not offloadable too (a time step's sequential nest around a sweep).
func (a *Accelerator) hotSpots() []*profile.HotSpot { return a.profiled }

// addSpots prepares the hot spots of prof not prepared yet and arms their
// breakpoints; it returns the spots it armed.
func (a *Accelerator) addSpots(prof *profile.File) []*spot {
	var armed []*spot
	for i := range prof.HotSpots {
		hs := &prof.HotSpots[i]
		if !slices.Contains(a.profiled, hs) {
			a.profiled = append(a.profiled, hs)
		}
		if a.prepared[uint64(hs.Entry)] {
			continue
		}
		sp := a.prepare(hs)
		if sp == nil {
			continue
		}
		a.prepared[sp.entry] = true
		a.order = append(a.order, sp)
		if first, dup := a.spots[sp.header]; dup {
			sp.rep.SameAs = first.rep.Entry
			sp.rep.Offloadable = false
			sp.rep.Reason = "the same loop level as hot spot " + first.rep.Entry
			continue
		}
		a.spots[sp.header] = sp
		a.bps[sp.header] = true
		a.cut.levels[sp.header] = sp.level
		if a.main != nil {
			a.main.Invalidate(sp.header, 1)
		}
		armed = append(armed, sp)
	}
	return armed
}

// Hot spots armed at the start on a real GPU (RATIONALE).
//
// Options.ArmAfter keeps a program too short for any offload to pay from
// paying for probing and the device's set-up. But a program's
// initialisation nests have mostly run on the CPU by the time they are
// armed, and the arrays they made are then copied to the device by the
// first kernel that reads them (gemm's three matrices at 2000 were all
// made on the CPU, atax's 1.3 GB matrix in part), and a hot nest reached
// before arming runs on the CPU until then (gemm's product, reached after
// a tenth of a second). Where the device opens on the loader from the
// start (a real GPU, startDevice), the device's readiness serves as that
// delay instead: every hot spot is armed at once, and reaching one while
// the context is still opening costs a breakpoint stop and nothing else
// (so does one a profiling round of gxbit run --accelerate arms before the
// device is ready, addAndPrefetch, where the guest waited for the context
// before: 0.07-0.14 s for it and the kernels in 0.25-0.7 s runs of the
// nests programs at their medium sizes on an H100 host):
// the hot spot dozes (its breakpoint comes off and the instance runs on at
// the CPU engine's speed) until Wake, between two runs of the main engine,
// finds the device ready, arms it again and prefetches the kernels; the
// next visit of its header offloads the rest of the instance, priced by
// the cost model as any other. So an initialisation nest long enough to
// outlast the context's opening makes the rest of its arrays on the
// device, and a program that ends before the device is ready has paid a
// breakpoint stop per hot spot it reached.

// armEarly arms every hot spot of the profile when the device opens on
// the loader (see the RATIONALE above).
func (a *Accelerator) armEarly() {
	if a.loader == nil {
		return
	}
	for _, sp := range a.addSpots(a.opts.Profile) {
		sp.early, sp.rep.Early = true, true
	}
}

// deviceReady reports whether opening the context would not wait for
// the loader.
func (a *Accelerator) deviceReady() bool {
	return a.ctx != nil || a.loader == nil || closed(a.loader.ctxReady)
}

// prefetchDozingAfter is how many guest instructions the main engine
// must have run for a hot spot that dozes off to have its kernels
// generated and queued on the loader at once, so that the JIT compiles
// them as soon as the context is open rather than after Wake (a tenth of
// a second each on a real GPU, on the first launch's path). Generating
// costs milliseconds, which a run that long (tens of milliseconds at the
// least) can pay.
const prefetchDozingAfter = 1 << 26

// doze takes the breakpoint off early spot sp until the device is ready
// (Wake).
func (a *Accelerator) doze(sp *spot) {
	if a.bps[sp.header] {
		delete(a.bps, sp.header)
		a.main.Invalidate(sp.header, 1)
	}
	sp.rep.Dozed++
	a.dozing = append(a.dozing, sp)
	if a.main.Stats().GuestInsns >= prefetchDozingAfter {
		// Translated now if the background has not (it may be under
		// way: then waited for), as prefetch does not wait.
		sp.ensureBuilt()
		a.prefetch([]*spot{sp})
	}
}

// Wake arms again the hot spots that dozed off waiting for the device
// (see the RATIONALE above) once it is ready, and prefetches the kernels
// of the hot spots armed early. Whoever drives the run calls it between
// runs of the main engine; it costs nothing once it has woken them.
func (a *Accelerator) Wake() {
	if a.woke || !a.deviceReady() {
		return
	}
	a.woke = true
	for _, sp := range a.dozing {
		if !sp.rep.Disarmed && a.spots[sp.header] == sp && !a.bps[sp.header] {
			a.bps[sp.header] = true
			a.main.Invalidate(sp.header, 1)
		}
	}
	a.dozing = nil
	var early []*spot
	for _, sp := range a.order {
		if sp.early {
			early = append(early, sp)
		}
	}
	a.prefetch(early)
}

// Arm arms the hot spots of Options.Profile (see Options.ArmAfter) and
// returns how many it armed; they are armed once.
func (a *Accelerator) Arm() int { return a.addAndPrefetch(a.opts.Profile, 0) }

// addAndPrefetch arms prof's new hot spots (addSpots) and prefetches them;
// the background translates first those whose nest holds pc, where the
// guest is (0: none).
func (a *Accelerator) addAndPrefetch(prof *profile.File, pc uint64) int {
	if a.bg.startAt == 0 {
		// Armed late (Arm), or a later round's profile (Update): the
		// new hot spots are translated in the background from now.
		a.startBackground(prof, pc)
	}
	before := len(a.order)
	armed := a.addSpots(prof)
	if a.loader != nil && !a.deviceReady() {
		// The device is still opening (a later round of gxbit run
		// --accelerate, begun before it was ready): the new hot spots
		// doze as the ones armed early do (see the RATIONALE above).
		for _, sp := range armed {
			sp.early = true
		}
	}
	a.prefetch(a.order[before:])
	return len(armed)
}

// Update adds the parallel hot spots of prof, a later profile of the same
// run (gxbit run --accelerate profiles again when the guest runs code no
// profile has seen), that are not prepared yet, with the guest at pc (the
// hot spots whose nest holds it are translated first: the guest reaches
// their headers next). It returns how many it armed.
func (a *Accelerator) Update(prof *profile.File, pc uint64) int { return a.addAndPrefetch(prof, pc) }

// Engine is the engine the guest runs on: Options.Engine's (the
// interpreter by default) with a breakpoint at every offloadable hot
// spot's header.
func (a *Accelerator) Engine() gvinst.Engine { return a.main }

// Finish brings back into guest memory everything the device still holds,
// so that whatever reads the guest's memory next sees its bytes. Call it
// when the guest has stopped.
func (a *Accelerator) Finish() error {
	a.stopLoader()
	if err := a.resident.Close(); err != nil {
		return fmt.Errorf("accelerate: %w", err)
	}
	return nil
}

// Discard releases what the device still holds without bringing it back
// into guest memory: for a guest that has ended, whose memory nothing
// reads again (the report counts the bytes left, BytesDropped). Call
// it instead of Finish when the guest has stopped for good.
func (a *Accelerator) Discard() {
	a.stopLoader()
	if a.ctx != nil {
		a.resident.Discard()
	}
}

// AuxInstructions is the number of guest instructions the hot spots'
// own engines ran (probed iterations and CPU fallbacks), which the main
// engine's count does not include.
func (a *Accelerator) AuxInstructions() uint64 {
	var n uint64
	for _, e := range a.aux {
		n += e.Stats().GuestInsns
	}
	for _, e := range a.fallbacks {
		n += e.Stats().GuestInsns
	}
	return n
}

// Close brings back into guest memory what is left on the device (see
// Finish) and releases the device context and the main engine.
func (a *Accelerator) Close() {
	a.stopLoader()
	a.closed = true
	if a.ctx != nil && !a.opts.LeaveDevice {
		_ = a.resident.Close()
		_ = a.ctx.Close()
	}
	a.ctx = nil
	if a.closeMain != nil {
		_ = a.closeMain.Close()
		a.closeMain = nil
	}
	for _, e := range a.fallbacks {
		if c, ok := e.(io.Closer); ok {
			_ = c.Close()
		}
	}
	a.fallbacks = nil
}

// spot is one offloadable hot spot at run time.
type spot struct {
	a      *Accelerator
	hs     *profile.HotSpot
	entry  uint64
	header uint64
	level  map[uint64]bool
	cold   map[uint64]bool // the level's error-path blocks (profile.Level.Cold)
	blocks map[uint64]*gvinst.VBlock
	exits  map[uint64]bool
	// exitHints are the profile's exit targets: blocks are cut there, so
	// that leaving the level by falling through starts a block too.
	exitHints []uint64
	ivs       map[string]ivStep // the profile's induction variables of the level, by location
	// known recognises memset calls when the spot is translated off the
	// guest's goroutine (nil: the guest's, Guest.knownCalls), and
	// memsetAsked are the answers translation got, by call target.
	known       *profile.KnownCalls
	memsetAsked map[uint64]bool
	// built is set once the level is translated and its kernels
	// generated (ensureBuilt); kernel is nil when that failed.
	built   bool
	kernel  *ptxgen.Kernel
	fn      gpu.Function
	loadErr error // why the kernel could not be loaded (it then never is)
	// loadTime is the time spent loading the spot's kernels (spot.load).
	loadTime time.Duration
	// The 2D kernel, when the level inside is parallel too and the
	// generator accepts the nest for it (nil otherwise).
	inner    uint64
	innerSet map[uint64]bool
	kernel2  *ptxgen.Kernel
	fn2      gpu.Function
	// The 3D kernel, when the level inside the inner one is parallel too
	// and the generator accepts the nest for it (nil otherwise).
	inner2    uint64
	inner2Set map[uint64]bool
	kernel3   *ptxgen.Kernel
	fn3       gpu.Function

	// tripsDiffer is set once a launch of the 1D kernel found a row whose
	// inner trip count the probed rows did not tell: its launches check
	// no trip count from then on, and prove no inner store dense.
	tripsDiffer bool
	// dead2D says that kernel2 skips the outer body's string stores
	// (ptxgen.Nest.Dead): a launch uses it only where deadStoresCovered
	// proves their bytes overwritten.
	dead2D bool

	// groupOf maps a site's x86 address and kind to the profile's array.
	groupOf map[[2]uint64]int
	// modelStep maps a site's x86 address and kind to the step its
	// profile access function takes along the mapped level, where the
	// profile fitted one (every access of that instruction and kind the
	// same step; checkStrides).
	modelStep map[[2]uint64]modelStep
	probe     *gvinst.Interpreter // instrumented; stops at the header and the exits
	// rows runs the probed iterations past recordedRows, without probes,
	// stopping at rowBps, where probe does (rowEngine).
	rows   gvinst.Engine
	rowBps map[uint64]bool
	// fallback runs the rest of an instance after a fallback, stopping at
	// the exits (see fallbackEngine).
	fallback gvinst.Engine
	// The fast engines (fastEngine) of timePlain: timer runs a budget of
	// instructions (stopping at the exits; it is fallback); toHeader then
	// runs on to the header or an exit (it is skipper too).
	timer    gvinst.Engine
	toHeader gvinst.Engine
	rec      probeRecord
	// loops are the inner loops a probed row may skip through, and
	// skipper the fast engine that runs their skipped iterations
	// (bounded.go).
	loops   []*innerLoop
	skipper gvinst.Engine
	// dry is the state of the spot's dry rows (dryrows.go).
	dry    dryState
	groups [][]int // the kernel's sites by x86 access (accessGroups)
	// The schedule of the hot spot, the mapped level's index, and the
	// schedule's kernels phase 2 runs instead of kernel when they differ
	// from it (parts.go; nil otherwise), with the CPU engine that runs a
	// part whose launch failed.
	sched      *schedule.Schedule
	levelIndex int
	parts      []*partKernel
	partCPU    gvinst.Engine
	cutAfter   map[uint64]uint64 // a distributed loop's exit → where its stores end (parts.go)
	skip       []uint64          // live-in values expected at the tail's second arrival
	early      bool              // armed before the device was ready (armEarly, addAndPrefetch): dozes until it is
	small      int               // consecutive too-short instances before any launch
	// The cost model's measurements: the launches so far, the plain CPU
	// engine's time per iteration (timed on the CPU tails; 0 until one
	// ran), the kernel's time per iteration on the last launch, and when
	// the last tail began.
	ledger    ledger
	plainIter time.Duration
	// plainInsns is the guest instructions of the iteration plainIter
	// timed (0 when not known), and tailInsns those of the first tail
	// iteration of the instance under way (see tailAt).
	plainInsns, tailInsns float64
	// plainRate is the plain engine's speed on the loop, guest
	// instructions per second, once timePlain timed it (plainTimed; 0
	// when the instance ended before a run could tell).
	plainRate  float64
	plainTimed bool
	// busyTimings counts the timings of the loop (timePlain) made while
	// the loader compiled modules, which time it again at the next
	// instance (launch.go: Timings beside compiles).
	busyTimings int
	// The timing of short instances (timePlain): whether the engine was
	// warmed up on the loop, the instances timed, and the best rate of
	// those that ended within their runs.
	warmed         bool
	timedInstances int
	shortRate      float64
	roughRate      float64 // as Accelerator.roughRate, on this loop
	// fetch is what the instance under way would cost the CPU to bring
	// back of its footprints from the device (the cost model's Fetch).
	fetch time.Duration
	// unseen is the host time the instance's launches took that the
	// device does not count (an emulated faster GPU's, see
	// gpusim.Options.KernelSpeedup): the instance's GPU side leaves it out.
	unseen        time.Duration
	kernelPerIter time.Duration
	// kernelTimes are the last launches' kernel times per iteration, of
	// which kernelPerIter is the least.
	kernelTimes recentLeast
	// launchedLast says the hot spot's last instance launched (stays).
	launchedLast bool
	// sampling is set while the sampled first launch of an instance runs
	// (offload): its wall, whole, prices the rest.
	sampling bool
	// jit is the loader's mark at the instance's start (markJIT): an
	// instance during which a module loaded goes to neither ledger.
	jit jitMark
	// modelPerIter is the throughput model's kernel time per iteration at
	// the last prediction, before scaling (0 when none was made).
	modelPerIter time.Duration
	// exit is the exit state the last launch's last thread stored, and
	// exitKernel the kernel that ran (finishInstance).
	exit       *ptxgen.ExitRecord
	exitKernel *ptxgen.Kernel
	// launchCPU is the guest state of the instance being offloaded: a
	// kernel's ExitInits take their values from it.
	launchCPU  *gvinst.CPU
	tailStart  time.Time
	tailBack   time.Duration // the Resident's time bringing data back at tailStart
	timedTails int           // instances that ran a second tail arrival to time it (cpuTail)
	// unprofitable counts the instances in a row predicted not to pay;
	// predicted is the last prediction; probeMark the report's probing
	// seconds when the last instance began (each instance's probing is
	// what the streak weighs, see streak).
	unprofitable streak
	predicted    Estimate
	probeMark    float64
	kernelErrors int     // launches whose kernel reported an error, in a row
	fatal        error   // a broken invariant that must stop the run
	replay       *replay // an instance to launch again without probing (replay.go)
	// entryCut says blocks falling into the header from outside the
	// level are cut (breakCutter.entries), since instance entryCutAt;
	// entryUncut that it was undone, for good (cutEntry).
	entryCut, entryUncut bool
	entryCutAt           uint64
	// deviceReads and deviceWrites are the footprints the spot's
	// launches read and wrote on the device, merged; lastLaunch is the
	// run's count of launches at its last (Accelerator.launchSeq), and
	// predictedAt that count at its last prediction (refill.go).
	deviceReads, deviceWrites []ptxgen.Range
	lastLaunch, predictedAt   uint64
	// fellBack is the store footprints, merged, of the instances the
	// cost model sent to the CPU since the spot's last launch: what its
	// next launch copies in of them is an outlay (copycost.go).
	fellBack []ptxgen.Range
	// loaded are the kernels whose modules loaded (spot.load), and
	// instancesKnown says whether variantsLaunch decided (1: no, 2:
	// yes). dryFailed are the kernels whose variants did not load.
	loaded         map[*ptxgen.Kernel]gpu.Function
	instancesKnown uint8
	dryFailed      map[*ptxgen.Kernel]bool
	dryTook        time.Duration // the last dry launch, beyond its copies in
	// instances counts the instances of the loop the guest entered with
	// the hot spot armed (consecutive ones make a replay's progression).
	instances uint64
	rep       HotSpotReport
}

// prepare makes the spot of a hot spot, not built yet (see ensureBuilt):
// nil when the profile does not mark it parallel.
func (a *Accelerator) prepare(hs *profile.HotSpot) *spot {
	L := mappedLevel(hs)
	if L < 0 {
		return nil
	}
	sp := newSpot(hs, L)
	sp.a = a
	sp.rep.Offloadable = true
	return sp
}

// ensureBuilt gives the hot spot its translation and kernels the first
// time the guest reaches its header (or prefetch asks): the background's
// (background.go) where it has them and the guest's memory still holds
// what they were made from, else translated here. It reports whether the
// spot has its kernel; when generation fails, the hot spot is reported
// not offloadable with the reason and disarmed.
func (sp *spot) ensureBuilt() bool {
	if sp.built {
		return sp.kernel != nil
	}
	sp.built = true
	t0 := time.Now()
	var err error
	if j := sp.a.takeBackground(sp); j != nil {
		sp.adopt(j.sp)
		sp.rep.TranslateBackgroundSeconds = j.took.Seconds()
		err = j.err
	} else {
		err = sp.generate(sp.a.g.Lifter)
	}
	if err == nil {
		err = sp.build()
	}
	sp.rep.TranslateSeconds += time.Since(t0).Seconds()
	sp.rep.KernelGenerated = sp.kernel != nil
	if err != nil {
		sp.kernel, sp.kernel2, sp.kernel3 = nil, nil, nil
		sp.rep.Offloadable, sp.rep.Reason = false, err.Error()
		sp.disarm("")
		return false
	}
	return true
}

// newSpot makes the spot of level L of hot spot hs, before translation.
func newSpot(hs *profile.HotSpot, L int) *spot {
	lv := &hs.Levels[L]
	sp := &spot{hs: hs, entry: uint64(hs.Entry), header: uint64(lv.Header), level: map[uint64]bool{},
		blocks: map[uint64]*gvinst.VBlock{}, exits: map[uint64]bool{}, groupOf: map[[2]uint64]int{}}
	sp.rep = HotSpotReport{Entry: hs.Entry.String(), Function: hs.Function, Header: lv.Header.String(), FallbackReasons: map[string]int{}}
	sched := schedule.Build(hs)
	sp.sched, sp.levelIndex = sched, L
	sp.rep.Schedule, sp.rep.ScheduleDetail, sp.rep.ScheduleNote = schedule.Summary(sched), schedule.Format(sched), scheduleNote(sched, hs, L)
	for _, b := range lv.Blocks {
		sp.level[uint64(b)] = true
	}
	sp.level[sp.header] = true
	sp.cold = map[uint64]bool{}
	for _, b := range lv.Cold {
		sp.cold[uint64(b)] = true
	}
	for _, e := range lv.Exits {
		sp.exitHints = append(sp.exitHints, uint64(e))
	}
	sp.ivs = map[string]ivStep{}
	for _, iv := range lv.IVs {
		sp.ivs[iv.Loc.String()] = ivStep{iv.Step, iv.Step == 0 && len(iv.StepObserved) > 0}
	}
	if L+1 < len(hs.Levels) {
		for _, p := range hs.ParallelLevels {
			if p == L+1 {
				il := &hs.Levels[L+1]
				sp.inner, sp.innerSet = uint64(il.Header), map[uint64]bool{uint64(il.Header): true}
				for _, b := range il.Blocks {
					sp.innerSet[uint64(b)] = true
				}
			}
		}
	}
	sp.modelStep = map[[2]uint64]modelStep{}
	if sp.inner != 0 && L+2 < len(hs.Levels) && slices.Contains(hs.ParallelLevels, L+2) {
		il := &hs.Levels[L+2]
		sp.inner2, sp.inner2Set = uint64(il.Header), map[uint64]bool{uint64(il.Header): true}
		for _, b := range il.Blocks {
			sp.inner2Set[uint64(b)] = true
		}
	}
	for _, acc := range hs.Accesses {
		k := uint64(0)
		if acc.Kind == "write" {
			k = 1
		}
		key := [2]uint64{uint64(acc.X86), k}
		sp.groupOf[key] = acc.Group
		ms, seen := sp.modelStep[key]
		fitted := acc.Affine && !acc.Stack && L < len(acc.Coeffs)
		switch {
		case !seen && fitted:
			sp.modelStep[key] = modelStep{step: acc.Coeffs[L], ok: true}
		case !seen || !fitted || ms.step != acc.Coeffs[L]:
			sp.modelStep[key] = modelStep{}
		}
	}
	return sp
}

// scheduleNote compares the schedule of hs with what phase 2 runs: one
// kernel over level L (and L+1 when it is parallel: the 2D kernel, and
// L+2 when it is parallel too: the 3D kernel), each thread running the
// rest of the x86 body.
func scheduleNote(s *schedule.Schedule, hs *profile.HotSpot, L int) string {
	grid := []string{hs.Levels[L].Index}
	for l := L + 1; l < len(hs.Levels) && l <= L+2 && hs.Levels[l].Verdict == profile.VerdictParallel; l++ {
		grid = append(grid, hs.Levels[l].Index)
	}
	if len(s.Kernels) == 1 && !s.Kernels[0].Distributed && s.Kernels[0].Interchanged[0] == "" {
		var g []string
		for _, l := range s.Kernels[0].Grid {
			g = append(g, l.Index)
		}
		if strings.Join(g, ",") == strings.Join(grid, ",") || len(g) == 1 && g[0] == grid[0] {
			return "phase 2 runs it as scheduled"
		}
	}
	return fmt.Sprintf("phase 2 runs one kernel over %s with the rest of the x86 body inside each thread: the schedule's other kernels (distribution, interchange) need code generated from the model, which is not built yet", strings.Join(grid, ", "))
}

// mappedLevel is the level of a parallel hot spot that phase 2 maps to
// threads (the outermost parallel one), or of a sequential one whose
// schedule distributes it into kernels (distributedLevel), or -1.
func mappedLevel(hs *profile.HotSpot) int {
	if len(hs.ParallelLevels) == 0 || hs.Verdict != profile.VerdictParallel {
		return distributedLevel(hs)
	}
	L := hs.ParallelLevels[0]
	for _, l := range hs.ParallelLevels {
		L = min(L, l)
	}
	if L < 0 || L >= len(hs.Levels) {
		return -1
	}
	return L
}

// OnBreak handles a breakpoint stop of Engine: at a hot spot's header it
// offloads the loop instance, or runs it on the CPU when a guard fails,
// and leaves cpu where the guest continues. An error stops the run.
func (a *Accelerator) OnBreak(cpu *gvinst.CPU) error {
	a.reachedStart(cpu.PC)
	sp := a.spots[cpu.PC]
	if sp == nil {
		return nil
	}
	t0 := time.Now()
	defer func() { a.inBreak += time.Since(t0) }()
	if sp.skip != nil {
		want := sp.skip
		sp.skip = nil
		if got, err := sp.liveValues(cpu); err == nil && equalU64(got, want) {
			// The CPU tail of the instance just offloaded: its first
			// iteration ran on the plain engine.
			// A tail that brought back what the device held (page by
			// page, with the fault handling around each) did not time
			// the engine: an iteration on the CPU finds its data there
			// (the cost model prices bringing it back separately,
			// Estimate.Fetch). (gramschmidt's j loop: 190 us for an
			// iteration the engine runs in 2.3 us.)
			if _, back := a.resident.BroughtBack(); back == sp.tailBack {
				sp.timedTail(time.Since(sp.tailStart))
			}
			return nil
		}
	}
	sp.instances++
	if sp.early && !a.deviceReady() {
		a.doze(sp)
		return nil
	}
	if sp.rep.Disarmed || !sp.ensureBuilt() {
		return nil
	}
	if err := a.openContext(); err != nil {
		return err
	}
	sp.probeMark = sp.rep.ProbeSeconds
	done, fb := sp.offload(cpu)
	sp.launchedLast = fb == nil
	if fb == nil {
		sp.small, sp.unprofitable, sp.kernelErrors = 0, streak{}, 0
		sp.cutEntry()
		return nil
	}
	sp.uncutEntry(fb)
	if fb.reason == ReasonKernel {
		// Each failed launch costs the kernel and then the whole
		// instance on the CPU: a kernel that keeps failing (a step or
		// trip count that depends on the data) goes back to the CPU.
		if sp.kernelErrors++; sp.kernelErrors >= disarmAfter {
			sp.disarm("")
		}
	}
	if fb.reason == ReasonTripCount && sp.rep.Launches == 0 && !fb.timing {
		// A loop whose instances are all too short is not worth probing
		// again and again. (Instances that ended while the plain engine
		// was timed on them do not count: LU's column scaling, a few
		// thousand instructions an instance, is timed on its first few,
		// then launched.)
		if sp.small++; sp.small >= disarmAfter {
			sp.disarm("")
		}
	}
	if fb.reason == ReasonNotProfitable {
		probed := time.Duration((sp.rep.ProbeSeconds - sp.probeMark) * float64(time.Second))
		if sp.unprofitable.add(sp.predicted, probed) {
			sp.disarm(fb.detail)
		}
	}
	sp.rep.Fallbacks++
	sp.rep.FallbackReasons[fb.reason]++
	sp.rep.LastFallback = fb.Error()
	if sp.fatal != nil {
		return sp.fatal
	}
	if done {
		return nil
	}
	return sp.runRest(cpu)
}

// disarm stops offloading the hot spot: its breakpoint goes, and the
// loop runs on the CPU engine from now on. notProfitable, when not "",
// is the cost model's reason.
func (sp *spot) disarm(notProfitable string) {
	sp.rep.Disarmed = true
	if notProfitable != "" {
		sp.rep.NotProfitable = notProfitable
	}
	if sp.a.bps[sp.header] {
		delete(sp.a.bps, sp.header)
		sp.a.main.Invalidate(sp.header, 1)
	}
}

// defaultEntryCutAfter is the replayed instances after which a hot spot's
// header is cut from outside its level too (Options.EntryCutAfter): the
// instance after the cut starts at the first arrival, where the replay
// does not match, and is probed again, which a run of many steps (LU's,
// a stencil's hundreds) pays once, and a run of a few steps need not pay
// at all. entryProbation is the instances after the cut in which a
// fallback that says the first arrival's state does not fit (anything
// but a trip count too small or a launch that would not pay) undoes it.
const (
	defaultEntryCutAfter = 32
	entryProbation       = 3
)

// cutEntry makes the main engine stop at sp's header at its first arrival
// from outside the level too, once sp's instances are replayed: the
// iteration before the second arrival then runs on the device with the
// rest, rather than on the CPU over what the device holds.
func (sp *spot) cutEntry() {
	after := cmp.Or(sp.a.opts.EntryCutAfter, defaultEntryCutAfter)
	if sp.entryCut || sp.entryUncut || after < 0 || sp.rep.Replays < after {
		return
	}
	sp.entryCut, sp.entryCutAt, sp.rep.EntryCut = true, sp.instances, true
	sp.a.cut.entries[sp.header] = true
	sp.a.main.Invalidate(sp.header, 1)
}

// uncutEntry undoes cutEntry when an instance soon after it fell back for
// a reason its first arrival may cause (a live-in value not yet affine
// there, as gcc -O3's matmul's stack slot).
func (sp *spot) uncutEntry(fb *fallback) {
	if !sp.entryCut || sp.instances-sp.entryCutAt > entryProbation || fb.reason == ReasonTripCount || fb.reason == ReasonNotProfitable || fb.reason == ReasonLoading {
		return
	}
	sp.entryCut, sp.entryUncut, sp.rep.EntryUncut = false, true, true
	delete(sp.a.cut.entries, sp.header)
	sp.a.main.Invalidate(sp.header, 1)
}

// stopOffloading sends every hot spot back to the CPU for the rest of the
// run: offloading has lost in all (runLedger).
func (a *Accelerator) stopOffloading(why string) {
	if a.stopped != "" {
		return
	}
	a.stopped = why
	for _, sp := range a.spots {
		sp.disarm(why)
	}
}

// openContext makes the device context, the first time a hot spot may
// launch (see New).
func (a *Accelerator) openContext() error {
	if a.ctx != nil {
		return nil
	}
	if a.closed {
		return errors.New("accelerate: the accelerator is closed")
	}
	if a.loader != nil {
		if err := a.loaderContext(); err != nil {
			return fmt.Errorf("accelerate: %w", err)
		}
		return nil
	}
	t0 := time.Now()
	ctx, err := a.opts.Driver.NewContext(0)
	if err != nil {
		return fmt.Errorf("accelerate: %w", err)
	}
	a.ctx = ctx
	a.deviceReadyAt = time.Now()
	a.deviceOpen = a.deviceReadyAt.Sub(t0)
	a.setDevice(a.opts.Driver.Device(0))
	a.deviceWait += a.deviceOpen
	return nil
}

// deviceCosts are the device's costs, measured the first time.
func (a *Accelerator) deviceCosts() (*DeviceCosts, error) {
	if a.costs == nil && a.costErr == nil {
		t0 := time.Now()
		defer func() { a.deviceMeasure = time.Since(t0) }()
		props, propsErr := a.opts.Driver.Device(0)
		c, cached, err := deviceCostsOf(a.ctx, a.opts.Driver.Name(), props, propsErr, a.opts.CostsCache)
		a.costs, a.costErr, a.costsCached = &c, err, cached
		if err != nil {
			a.costs = nil
		}
	}
	return a.costs, a.costErr
}

// runRest runs the rest of the loop instance on the CPU, until it leaves
// the loop (or stops for any other reason the main engine then handles).
func (sp *spot) runRest(cpu *gvinst.CPU) error {
	e := sp.fallbackEngine()
	for {
		st := e.Run(cpu, 0)
		switch {
		case st.Kind == gvinst.StopBreakpoint && !sp.exits[st.PC]:
			continue
		case st.Kind == gvinst.StopSyscall:
			// As in probing: the loop has no system call.
			return fmt.Errorf("accelerate: hot spot %s stopped at a system call in its CPU fallback (%v)", sp.rep.Entry, st)
		}
		return nil
	}
}

// fallbackEngine is the engine that runs the rest of a loop instance on
// the CPU after a fallback: the fast engine (a fallback may run almost the
// whole instance, so it runs at the main engine's speed), stopping at the
// level's exits.
func (sp *spot) fallbackEngine() gvinst.Engine {
	if sp.fallback != nil {
		return sp.fallback
	}
	exits := make(map[uint64]bool, len(sp.exits))
	for e := range sp.exits {
		exits[e] = true
	}
	sp.fallback = sp.fastEngine(exits)
	return sp.fallback
}

// fastEngine makes an engine that runs the spot's blocks without probes,
// optimized, stopping at breakpoints bps: one made by Options.Engine, as
// the main engine is (the compiling engine by default), or an interpreter
// when Options.Engine is not set or fails. Its instructions count in
// AuxInstructions.
func (sp *spot) fastEngine(bps map[uint64]bool) gvinst.Engine {
	return sp.engineWith(&probeTranslator{sp: sp, plain: true}, bps)
}

// engineWith makes a CPU engine as fastEngine does, over the code tr
// gives.
func (sp *spot) engineWith(tr gvinst.Translator, bps map[uint64]bool) gvinst.Engine {
	a := sp.a
	opts := gvinst.InterpOptions{Breakpoints: bps, Optimize: true}
	if a.opts.Engine != nil {
		if e, err := a.opts.Engine(a.g.Mem, tr, opts); err == nil {
			a.fallbacks = append(a.fallbacks, e)
			return e
		}
	}
	e := gvinst.NewInterpreter(a.g.Mem, tr, opts)
	a.aux = append(a.aux, e)
	return e
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// offload runs one instance of the loop from the header: two probed
// iterations on the CPU, the middle on the GPU, the last one (or two,
// see cpuTail) on the CPU.
// done is true when the loop instance needs nothing more from the caller
