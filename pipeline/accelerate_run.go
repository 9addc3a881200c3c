package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"time"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/profile"
)

// One run, both phases (RATIONALE).
//
// gxbit run --accelerate starts on phase 2's main engine with nothing to
// offload, as a plain run, and begins profiling only once the run has
// taken ProfileAfter of CPU time (ProfileAfterFor: less on a real GPU than
// on the simulator): a program shorter than that, which no offload could
// make much faster, pays nothing for profiling (a real
// GPU's context opens on a goroutine of its own from the start, and is
// abandoned when the program ends first; the simulator opens at the
// first launch phase 2 considers). A
// profiling round runs the guest under phase 1's collector (from where
// it is: inside a nest, the collector samples the outer iteration in
// progress from the loops' next headers, profile.Collector.Restart) and
// ends as soon as every loop nest the guest has entered is sampled
// enough (profile.Collector.Progress: nine outer iterations, or, in an
// outer iteration too long to wait for more, nine of each loop inside
// it), or after ProfileInsns guest instructions at most (a safety net).
// Phase 2 then takes over with the profile of what ran so far. A nest
// instance that was running when the round ended is not lost: its mapped
// level's header is a breakpoint, so at its next iteration the rest of
// that same instance goes to the GPU. When the guest later spends many
// slices in a row in loops no round has sampled (a nest that had not
// started yet, or a time step's second sweep), a new profiling round
// begins, if profiling has taken at most
// profileShare of the run's CPU time so far, and the hot spots it finds
// join the running accelerator. A round that finds nothing new doubles
// the wait before the next one, so a program with nothing to offload
// pays for few of them.

// OnlineOptions configures a run that profiles and accelerates in one
// execution (gxbit run --accelerate).
type OnlineOptions struct {
	Driver gpu.Driver
	// ProfileInsns bounds each profiling round, in guest instructions;
	// 0 means DefaultProfileInsns.
	ProfileInsns  uint64
	MinIterations uint64
	// AlwaysOffload launches whenever the guards pass (accel.Options).
	AlwaysOffload bool
	// WetProbes runs probed rows whole on the CPU (accel.Options).
	WetProbes bool
	// Collect bounds the collector's sampling (zero values: its
	// defaults; where rounds begin by CPU time, the probe budget is then
	// sized by the run so far, see Sized rounds).
	Collect profile.CollectOptions
	// ProfileAfter is the CPU time the guest takes as a plain run
	// before the first profiling round (its thread's, see The guest's
	// CPU time; DefaultProfileAfter is gxbit run --accelerate's); 0
	// profiles from the start, and again whenever the guest's position
	// asks (no profileShare limit).
	ProfileAfter time.Duration
	// ProfileAfterInsns, when not 0, begins the first profiling round
	// once the run has taken that many guest instructions instead, and
	// later rounds whenever the guest's position asks, as ProfileAfter 0
	// does (ProfileAfter is then not used): a test puts the rounds where
	// it wants them in the guest's run, whatever the machine's speed.
	ProfileAfterInsns uint64
	// LeaveDevice is accel.Options.LeaveDevice: for a process that exits
	// right after the run.
	LeaveDevice bool
}

// DefaultProfileAfter is gxbit run --accelerate's ProfileAfter on the
// simulated GPU, and DefaultProfileAfterGPU on a real one
// (ProfileAfterFor): a run shorter than this is over before a profiling
// round (tens to hundreds of milliseconds) and phase 2's probing could
// pay for themselves.
//
// On a real GPU, a round that finds a parallel nest sends the rest of it
// to a device some ten to fifty times the CPU engine's speed on it, so
// the CPU time spent before the round is what the single run loses most
// against the two-phase flow, which offloads from the start. Side by side
// on an H100 host, 23 programs of testdata/nests and others: 500 ms 3.11x
// native (geometric mean), 250 ms 3.67x (gesummv 0.88 -> 0.60 s, gemver
// 1.29 -> 0.96, heat3d 1.54 -> 1.16). (Those were the process's CPU
// time, the device's opening included: see The guest's CPU time.)
const (
	DefaultProfileAfter    = 500 * time.Millisecond
	DefaultProfileAfterGPU = 250 * time.Millisecond
)

// WetProbesFor is the default of accel.Options.WetProbes on d: rows
// probed dry on a real GPU, whole on the CPU on the simulated one. A dry
// row prices its instance at its instructions at a speed timed elsewhere,
// and on a triangle that priced the CPU too high: on gpusim, syr2k at
// 951 756 launched its product (CPU estimate 37.5 s, a 4.9 s kernel on
// the simulator against about 3 s on the CPU), and the single run took
// 2.8 times the plain run's CPU time; on an H100 the same launch pays
// many times over, and dry rows saved up to a third of the two-phase run
// (gemm at 2000 2300 2600: 0.45 s against 0.69).
func WetProbesFor(d gpu.Driver) bool {
	return d == nil || accel.Simulator(d.Name())
}

// ProfileAfterFor is the default ProfileAfter of a run on d:
// DefaultProfileAfter on the simulated GPU (accel.Simulator),
// DefaultProfileAfterGPU on a real one.
func ProfileAfterFor(d gpu.Driver) time.Duration {
	if d == nil || accel.Simulator(d.Name()) {
		return DefaultProfileAfter
	}
	return DefaultProfileAfterGPU
}

// The guest's CPU time (RATIONALE).
//
// ProfileAfter, profileShare and the sized rounds, and gxbit accelerate's
// ArmAfter, measure the run by the CPU time of the guest's thread
// (guestCPUTime; RunOnline and Accelerate lock the guest's goroutine to
// it), not the process's: the device's context
// opening on the loader from the start (cuInit and the context, about
// 0.2 s of CPU time on an H100 host), the background translation and the
// collector's garbage took CPU time of their own on other threads, which
// brought the first round forward into programs that had run a tenth of
// a second, and the rounds' and phase 2's costs with it: at the nests
// programs' medium sizes (0.16-0.31 s plain gxbit run) the single run
// took 1.34-1.76x plain (geometric mean), heat3d at 80 16 four times.
// Where the thread's clock cannot be read, the process's stands in.

// profileShare is the most of the run's CPU time so far that profiling
// may have taken when a later round begins.
const profileShare = 0.25

// A round's probe budget (RATIONALE: Sized rounds). Where the rounds begin
// by the run's CPU time (OnlineOptions.ProfileAfter) and the collector's
// budget is not given (Collect.MaxProbesPerNest), each round's budget is
// probesPerCPUSecond for every second of CPU time the run has taken when
// it begins, at least minRoundProbes and at most
// profile.DefaultMaxProbesPerNest.
const (
	probesPerCPUSecond = 500_000
	minRoundProbes     = 100_000
)

// Sized rounds (RATIONALE).
//
// A probe costs some 50-100 ns on the compiling engine (a call out of the
// compiled code into the collector), and a nest's probes up to its budget
// were most of a round's cost: with the collector's budget of a million
// probes, a round at the contract sizes of testdata/nests took 0.03-0.15 s
// of CPU time and its analysis up to 0.16 s, on runs of 0.8-2 s that no
// launch on the simulator makes faster (the contract: at most 1.1x plain
// gxbit run). The budget only moves the point where a nest thins out (it
// still records iterations 0-3 and the powers of two of each loop, to the
// end of the outer iteration and until every loop has shown its steps),
// not the cap where it stops (thinBudget times the collector's budget),
// and at a quarter of it the corpus's verdicts were the same. So a round
// begun at 500 ms of CPU time, as the first is by default, spends at most
// about 250,000 probes before thinning, a round begun later in a longer run
// more: the profile a run pays for grows with what the run has shown it can
// pay for, about 5% of its CPU time so far.

// DefaultProfileInsns bounds a profiling round of an online run when
// OnlineOptions.ProfileInsns is 0. It is a safety net: what the collector
// has seen ends a round (profile.Collector.Progress), and the collector
// bounds its own cost (probes per nest, and the pauses of long loops'
// unrecorded iterations, which run at the engine's speed), so a round
// over a time-stepped nest at large sizes may run several steps of
// hundreds of millions of instructions.
const DefaultProfileInsns = 2_000_000_000

// The online engine's rhythm: guest instructions per slice while
// profiling (progress is checked between slices) and while accelerating
// (the guest's position is sampled between slices), and how many slices
// in a row outside every known nest start a new profiling round.
const (
	profileSlice     = 1 << 18
	accelerateSlice  = 1 << 20
	unknownToProfile = 8
)

// ErrNoPhase2 is wrapped by OnlineResult.Why when an online run could not
// accelerate anything.
var ErrNoPhase2 = errors.New("phase 2 did not start")

// OnlineResult is what RunOnline learned besides the guest's result.
type OnlineResult struct {
	Profile *profile.File // the last profile phase 1 built (nil if the guest ended first)
	Report  *accel.Report // phase 2's report (nil when it did not start)
	// Rounds is the number of profiling rounds that ended, and
	// LimitedRounds how many of them ProfileInsns ended rather than
	// what the collector had seen (profile.Collector.Progress).
	Rounds, LimitedRounds int
	// ProfiledInstructions is the number of guest instructions run
	// under the collector, over every round.
	ProfiledInstructions uint64
	// ProfileSeconds is the process CPU time the guest ran under the
	// collector, AnalyseSeconds the time phase 1's analysis of the rounds
	// took (profile.Session.Finish), and SetupSeconds the time phase 2
	// took to start and take each profile (accel.New and Update): the
	// fixed costs of the single run besides the accelerator's own (its
	// report).
	ProfileSeconds, AnalyseSeconds, SetupSeconds float64
	// Why says, when nothing was offloaded, why not (wrapping ErrNoPhase2).
	Why error
	// RoundSpans say where each profiling round began and ended in the
	// run, in guest instructions of both engines.
	RoundSpans []RoundSpan
}

// RoundSpan is one profiling round of an online run: the run's guest
// instructions when it began and when it ended, and the guest addresses
// there.
type RoundSpan struct {
	Began   uint64 `json:"began_at_instructions"`
	Ended   uint64 `json:"ended_at_instructions"`
	BeganPC uint64 `json:"began_pc"`
	EndedPC uint64 `json:"ended_pc"`
}

// RunOnline runs a program once, profiling it in rounds and offloading the
// parallel hot spots found so far the rest of the time (see above).
func RunOnline(ctx context.Context, cfg Config, opts OnlineOptions) (*Result, *OnlineResult, error) {
	if opts.Driver == nil {
		return nil, nil, errors.New("run --accelerate: a driver is needed")
	}
	if opts.ProfileInsns == 0 {
		opts.ProfileInsns = DefaultProfileInsns
	}
	g, err := Load(cfg)
	if err != nil {
		return nil, nil, err
	}
	defer g.Close()
	newEngine, err := g.EngineFunc()
	if err != nil {
		return nil, nil, err
	}
	sess, err := profile.NewSession(g.Lifter, g.Mem, g.ProfileImage(), profile.Options{Engine: newEngine, Collect: opts.Collect})
	if err != nil {
		return nil, nil, err
	}
	defer sess.Close()
	out := &OnlineResult{}
	// The guest runs on this goroutine, locked to its thread, so that the
	// run's CPU time is the guest's own (see The guest's CPU time).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := time.Now()
	// Phase 2 with nothing to offload yet: its main engine runs the guest
	// until the first round (the device opens at the first launch).
	acc, err := accel.New(g.AccelGuest(), accel.Options{Profile: &profile.File{}, Driver: opts.Driver, MinIterations: opts.MinIterations, AlwaysOffload: opts.AlwaysOffload, WetProbes: opts.WetProbes, Engine: newEngine, LeaveDevice: opts.LeaveDevice, CostsCache: CostsCache()})
	if err != nil {
		return nil, nil, err
	}
	defer acc.Close()
	// A real GPU's context opens on the loader from the start, as gxbit
	// accelerate's does: the nests the first round arms then find it
	// ready instead of running on the CPU until it is (the matrix-vector
	// programs' initialisation nests made most of their matrix on the
	// CPU so, and copied it in); a run that ends first abandons it.
	acc.OpenDevice()
	out.SetupSeconds = time.Since(t0).Seconds()
	on := &onlineEngine{sess: sess, acc: acc, limit: opts.ProfileInsns, wait: unknownToProfile, after: opts.ProfileAfter, afterInsns: opts.ProfileAfterInsns, cpu0: guestCPUTime(),
		sizeRounds: opts.ProfileAfter > 0 && opts.ProfileAfterInsns == 0 && opts.Collect.MaxProbesPerNest == 0}
	on.beginRound = func(pc uint64) {
		out.RoundSpans = append(out.RoundSpans, RoundSpan{Began: on.Stats().GuestInsns, BeganPC: pc})
	}
	on.endRound = func(pc uint64) {
		if k := len(out.RoundSpans) - 1; k >= 0 {
			out.RoundSpans[k].Ended, out.RoundSpans[k].EndedPC = on.Stats().GuestInsns, pc
		}
		out.Rounds++
		t0 := time.Now()
		out.Profile = sess.Finish(profile.RunInfo{Program: cfg.Path, ProgramSHA256: g.SHA256, Args: cfg.Args, LoadBias: g.Image.Bias, GuestInstructions: on.Stats().GuestInsns})
		t1 := time.Now()
		out.AnalyseSeconds += t1.Sub(t0).Seconds()
		on.armed(acc.Update(out.Profile, pc))
		out.SetupSeconds += time.Since(t1).Seconds()
	}
	res, err := g.RunEngine(ctx, on, acc.OnBreak)
	err = finishDevice(acc, err)
	if err != nil {
		return nil, nil, err
	}
	out.LimitedRounds = on.limited
	out.ProfileSeconds = on.profileTime.Seconds()
	out.ProfiledInstructions = sess.Engine().Stats().GuestInsns
	if out.Rounds == 0 {
		out.Why = fmt.Errorf("%w: the program ended after %d guest instructions, before profiling began (after %v of CPU time)", ErrNoPhase2, res.Stats.GuestInstructions, on.after)
		return res, out, nil
	}
	out.Report = acc.Report()
	out.Report.WallSeconds = res.Stats.Wall.Seconds()
	out.Report.DeviceInitSeconds = driverInitSeconds(opts.Driver)
	out.Report.GuestInstructions = on.Stats().GuestInsns + acc.AuxInstructions()
	launches := 0
	for _, h := range out.Report.HotSpots {
		launches += h.Launches
	}
	if launches == 0 {
		out.Why = fmt.Errorf("%w: no parallel hot spot was launched after profiling (%d rounds)", ErrNoPhase2, out.Rounds)
	}
	return res, out, nil
}

// onlineEngine runs the guest under the profiling session's engine during
// a profiling round and under the accelerator's otherwise (see RunOnline).
type onlineEngine struct {
	sess      *profile.Session
	acc       *accel.Accelerator
	limit     uint64 // guest instructions a round may take
	profiling bool
	start     uint64 // the profiling engine's count when the round began
	rounds    int    // rounds begun
	limited   int    // rounds that ran to limit
	unknown   int    // slices in a row outside every known nest
	wait      int    // how many of those start a round
	// beginRound and endRound are told where each round begins and ends.
	beginRound func(pc uint64)
	endRound   func(pc uint64)
	// after is the CPU time before the first round (ProfileAfter), cpu0
	// the process's CPU time when the run began, and profileTime the
	// CPU time spent in the profiling engine.
	after       time.Duration
	cpu0        time.Duration
	profileTime time.Duration
	// afterInsns, when not 0, is the guest instruction count at which
	// the first round begins (ProfileAfterInsns), in place of after.
	afterInsns uint64
	// sizeRounds says each round's probe budget is sized by the CPU time
	// the run has taken when it begins (roundProbes).
	sizeRounds bool
}

// armed adjusts the wait before the next round to what the round that
// just ended found: back to the start when it armed hot spots, doubled
// when it armed none.
func (o *onlineEngine) armed(n int) {
	if n > 0 {
		o.wait = unknownToProfile
	} else {
		o.wait *= 2
	}
}

// roundDue reports whether a profiling round begins after a slice of
// the main engine that stopped at pc: the first once the run has taken
// o.after of CPU time, a later one after o.wait slices in a row outside
// every nest the collector knows, while profiling has taken at most
// profileShare of the run (without that limit when profiling began at
// the start: o.after <= 0).
func (o *onlineEngine) roundDue(pc uint64) bool {
	if o.rounds == 0 {
		if o.afterInsns > 0 {
			return o.Stats().GuestInsns >= o.afterInsns
		}
		return guestCPUTime()-o.cpu0 >= o.after
	}
	if o.sess.Collector.InNest(pc) {
		o.unknown = 0
		return false
	}
	if o.unknown++; o.unknown < o.wait {
		return false
	}
	o.unknown = 0
	return o.after <= 0 || o.afterInsns > 0 || float64(o.profileTime) <= profileShare*float64(guestCPUTime()-o.cpu0)
}

func (o *onlineEngine) Run(cpu *gvinst.CPU, budget uint64) gvinst.Stop {
	prof := o.sess.Engine()
	for {
		if o.profiling {
			used := prof.Stats().GuestInsns - o.start
			p := o.sess.Collector.Progress()
			if used >= o.limit || (used > 0 && p.Entered > 0 && p.Sampling == 0) {
				if used >= o.limit {
					o.limited++
				}
				o.profiling = false
				o.endRound(cpu.PC)
				continue
			}
			slice := min(profileSlice, o.limit-used)
			if budget != 0 {
				slice = min(slice, budget)
			}
			c0 := guestCPUTime()
			st := prof.Run(cpu, slice)
			o.profileTime += guestCPUTime() - c0
			if st.Kind != gvinst.StopBudget || budget != 0 {
				return st
			}
			continue
		}
		if o.rounds == 0 && o.after <= 0 && o.afterInsns == 0 {
			// Profiling from the start: the collector is where it
			// began, at the entry point.
			o.rounds++
			o.profiling = true
			o.beginRound(cpu.PC)
			continue
		}
		slice := uint64(accelerateSlice)
		if budget != 0 {
			slice = min(slice, budget)
		}
		if n := o.Stats().GuestInsns; o.rounds == 0 && o.afterInsns > n {
			// The first round begins at afterInsns exactly.
			slice = min(slice, o.afterInsns-n)
		}
		// Hot spots armed while the device was opening doze until it is
		// ready (accel.Accelerator.Wake).
		o.acc.Wake()
		st := o.acc.Engine().Run(cpu, slice)
		if st.Kind != gvinst.StopBudget {
			return st
		}
		if o.roundDue(cpu.PC) {
			o.startRound(cpu.PC)
		}
		if budget != 0 {
			return st
		}
	}
}

// startRound begins a profiling round with the guest at pc.
func (o *onlineEngine) startRound(pc uint64) {
	o.rounds++
	o.profiling = true
	o.start = o.sess.Engine().Stats().GuestInsns
	if o.sizeRounds {
		o.sess.Collector.SetProbeBudget(roundProbes(guestCPUTime() - o.cpu0))
	}
	o.sess.Collector.Restart(pc)
	o.beginRound(pc)
}

// roundProbes is the probe budget of a round begun when the run has taken
// cpu of CPU time (see Sized rounds).
func roundProbes(cpu time.Duration) int64 {
	n := int64(cpu.Seconds() * probesPerCPUSecond)
	return min(max(n, minRoundProbes), profile.DefaultMaxProbesPerNest)
}

// guestCPUTime is the CPU time of the guest's thread (see The guest's CPU
// time), or the process's where the thread's clock cannot be read.
func guestCPUTime() time.Duration {
	if t := accel.ThreadCPUTime(); t > 0 {
		return t
	}
	return processCPUTime()
}

// processCPUTime is the CPU time the process has used (every thread:
// the simulated GPU's too), or 0 where it cannot be read.
func processCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (o *onlineEngine) Invalidate(addr, size uint64) {
	o.sess.Engine().Invalidate(addr, size)
	o.acc.Engine().Invalidate(addr, size)
}

func (o *onlineEngine) Stats() gvinst.EngineStats {
	st := o.sess.Engine().Stats()
	t := o.acc.Engine().Stats()
	st.GuestInsns += t.GuestInsns
	st.BlocksTranslated += t.BlocksTranslated
	st.UnitsCompiled += t.UnitsCompiled
	st.TraceBlocks += t.TraceBlocks
	st.CompileTime += t.CompileTime
	st.CodeBytes += t.CodeBytes
	st.Callouts += t.Callouts
	st.BlocksExecuted += t.BlocksExecuted
	st.BlocksInvalidated += t.BlocksInvalidated
	st.ChainHits += t.ChainHits
	st.Traps += t.Traps
	st.Syscalls += t.Syscalls
	return st
}
