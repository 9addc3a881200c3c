package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/profile"
)

// One run, both phases (RATIONALE).
//
// gxbit run --accelerate starts under phase 1's collector and ends a
// profiling round as soon as every loop nest the guest has entered is
// sampled enough (profile.Collector.Progress), or after ProfileInsns
// guest instructions at most (a safety net). Phase 2 then takes over with the profile of
// what ran so far. A nest instance that was running when the round ended
// is not lost: its mapped level's header is a breakpoint, so at its next
// iteration the rest of that same instance goes to the GPU. When the
// guest later spends many slices in a row outside every nest the profile
// knows (a nest that had not started yet), a new profiling round begins,
// and the hot spots it finds join the running accelerator. A round that
// finds nothing new doubles the wait before the next one, so a program
// with nothing to offload pays for few of them.

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
	// Collect bounds the collector's sampling (zero values: its
	// defaults).
	Collect profile.CollectOptions
}

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
	// ProfileSeconds is the wall time the guest ran under the collector,
	// AnalyseSeconds the time phase 1's analysis of the rounds took
	// (profile.Session.Finish), and SetupSeconds the time phase 2 took
	// to start (accel.New and Update): the fixed costs of the single run
	// besides the accelerator's own (its report).
	ProfileSeconds, AnalyseSeconds, SetupSeconds float64
	// Why says, when nothing was offloaded, why not (wrapping ErrNoPhase2).
	Why error
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
	on := &onlineEngine{sess: sess, limit: opts.ProfileInsns, wait: unknownToProfile, profiling: true}
	on.endRound = func() error {
		out.Rounds++
		t0 := time.Now()
		out.Profile = sess.Finish(profile.RunInfo{Program: cfg.Path, ProgramSHA256: g.SHA256, Args: cfg.Args, LoadBias: g.Image.Bias, GuestInstructions: on.Stats().GuestInsns})
		t1 := time.Now()
		out.AnalyseSeconds += t1.Sub(t0).Seconds()
		defer func() { out.SetupSeconds += time.Since(t1).Seconds() }()
		if on.acc != nil {
			return on.armed(on.acc.Update(out.Profile))
		}
		a, err := accel.New(g.AccelGuest(), accel.Options{Profile: out.Profile, Driver: opts.Driver, MinIterations: opts.MinIterations, AlwaysOffload: opts.AlwaysOffload, Engine: newEngine})
		if err != nil {
			return err
		}
		on.acc = a
		return on.armed(len(out.Profile.HotSpots))
	}
	res, err := g.RunEngine(ctx, on, func(cpu *gvinst.CPU) error {
		if on.acc == nil {
			return nil
		}
		return on.acc.OnBreak(cpu)
	})
	if on.acc != nil {
		defer on.acc.Close()
		err = finishDevice(on.acc, err)
	}
	if err != nil {
		return nil, nil, err
	}
	out.LimitedRounds = on.limited
	out.ProfileSeconds = on.profileTime.Seconds()
	out.ProfiledInstructions = sess.Engine().Stats().GuestInsns
	if on.err != nil {
		out.Why = fmt.Errorf("%w: %v", ErrNoPhase2, on.err)
		return res, out, nil
	}
	if on.acc == nil {
		out.Why = fmt.Errorf("%w: the program ended after %d guest instructions, within the first profiling round", ErrNoPhase2, res.Stats.GuestInstructions)
		return res, out, nil
	}
	out.Report = on.acc.Report()
	out.Report.WallSeconds = res.Stats.Wall.Seconds()
	out.Report.GuestInstructions = on.Stats().GuestInsns + on.acc.AuxInstructions()
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
	limited   int    // rounds that ran to limit
	unknown   int    // slices in a row outside every known nest
	wait      int    // how many of those start a round
	endRound  func() error
	err       error // why phase 2 could not start
	// profileTime is the wall time spent in the profiling engine.
	profileTime time.Duration
}

// armed adjusts the wait before the next round to what the round that
// just ended found: back to the start when it armed hot spots, doubled
// when it armed none.
func (o *onlineEngine) armed(n int) error {
	if n > 0 {
		o.wait = unknownToProfile
	} else {
		o.wait *= 2
	}
	return nil
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
				if err := o.endRound(); err != nil {
					o.err = err
				}
				continue
			}
			slice := min(profileSlice, o.limit-used)
			if budget != 0 {
				slice = min(slice, budget)
			}
			t0 := time.Now()
			st := prof.Run(cpu, slice)
			o.profileTime += time.Since(t0)
			if st.Kind != gvinst.StopBudget || budget != 0 {
				return st
			}
			continue
		}
		if o.acc == nil {
			// Phase 2 could not start: the rest runs plainly.
			return prof.Run(cpu, budget)
		}
		slice := uint64(accelerateSlice)
		if budget != 0 {
			slice = min(slice, budget)
		}
		st := o.acc.Engine().Run(cpu, slice)
		if st.Kind != gvinst.StopBudget {
			return st
		}
		if o.sess.Collector.InNest(cpu.PC) {
			o.unknown = 0
		} else if o.unknown++; o.unknown >= o.wait {
			o.unknown = 0
			o.profiling = true
			o.start = prof.Stats().GuestInsns
		}
		if budget != 0 {
			return st
		}
	}
}

func (o *onlineEngine) Invalidate(addr, size uint64) {
	o.sess.Engine().Invalidate(addr, size)
	if o.acc != nil {
		o.acc.Engine().Invalidate(addr, size)
	}
}

func (o *onlineEngine) Stats() gvinst.EngineStats {
	st := o.sess.Engine().Stats()
	if o.acc != nil {
		t := o.acc.Engine().Stats()
		st.GuestInsns += t.GuestInsns
		st.BlocksTranslated += t.BlocksTranslated
		st.UnitsCompiled += t.UnitsCompiled
		st.CompileTime += t.CompileTime
		st.CodeBytes += t.CodeBytes
		st.Callouts += t.Callouts
		st.BlocksExecuted += t.BlocksExecuted
		st.BlocksInvalidated += t.BlocksInvalidated
		st.ChainHits += t.ChainHits
		st.Traps += t.Traps
		st.Syscalls += t.Syscalls
	}
	return st
}
