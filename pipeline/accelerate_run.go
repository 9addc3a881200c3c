package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/profile"
)

// OnlineOptions configures a run that profiles and accelerates in one
// execution (gxbit run --accelerate).
type OnlineOptions struct {
	Driver gpu.Driver
	// ProfileInsns is how many guest instructions phase 1 profiles before
	// phase 2 takes over; 0 means DefaultProfileInsns.
	ProfileInsns  uint64
	MinIterations uint64
	// AlwaysOffload launches whenever the guards pass (accel.Options).
	AlwaysOffload bool
}

// DefaultProfileInsns is the length of the profiling phase of an online
// run when OnlineOptions.ProfileInsns is 0.
const DefaultProfileInsns = 50_000_000

// ErrNoPhase2 is wrapped by OnlineResult.Why when an online run could not
// accelerate anything.
var ErrNoPhase2 = errors.New("phase 2 did not start")

// OnlineResult is what RunOnline learned besides the guest's result.
type OnlineResult struct {
	Profile *profile.File // the profile phase 1 built (nil if the guest ended first)
	Report  *accel.Report // phase 2's report (nil when it did not start)
	// Why says, when phase 2 did not start, why not (wrapping ErrNoPhase2).
	Why error
}

// RunOnline runs a program once: the first ProfileInsns guest
// instructions under phase 1's profiler, then, with the profile of what
// ran so far, the rest with its parallel hot spots offloaded. Nests whose
// instances all ran during profiling are not accelerated; Why says so when
// nothing was.
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
	im := g.ProfileImage()

	sess := profile.NewSession(g.Lifter, g.Mem, im, profile.Options{})
	sw := &switchEngine{first: sess.Engine(), limit: opts.ProfileInsns}
	out := &OnlineResult{}
	var acc *accel.Accelerator
	sw.change = func() error {
		out.Profile = sess.Finish(profile.RunInfo{Program: cfg.Path, ProgramSHA256: g.SHA256, Args: cfg.Args, LoadBias: g.Image.Bias, GuestInstructions: sw.first.Stats().GuestInsns})
		a, err := accel.New(g.AccelGuest(), accel.Options{Profile: out.Profile, Driver: opts.Driver, MinIterations: opts.MinIterations, AlwaysOffload: opts.AlwaysOffload})
		if err != nil {
			return err
		}
		acc = a
		sw.then = a.Engine()
		return nil
	}
	res, err := g.RunEngine(ctx, sw, func(cpu *gvinst.CPU) error {
		if acc == nil {
			return nil
		}
		return acc.OnBreak(cpu)
	})
	if acc != nil {
		defer acc.Close()
	}
	if err != nil {
		return nil, nil, err
	}
	if sw.err != nil {
		out.Why = fmt.Errorf("%w: %v", ErrNoPhase2, sw.err)
		return res, out, nil
	}
	if acc == nil {
		out.Why = fmt.Errorf("%w: the program ended after %d guest instructions, within the profiling phase (%d)", ErrNoPhase2, res.Stats.GuestInstructions, opts.ProfileInsns)
		return res, out, nil
	}
	out.Report = acc.Report()
	out.Report.WallSeconds = res.Stats.Wall.Seconds()
	out.Report.GuestInstructions = sw.Stats().GuestInsns + acc.AuxInstructions()
	launches := 0
	for _, h := range out.Report.HotSpots {
		launches += h.Launches
	}
	if launches == 0 {
		out.Why = fmt.Errorf("%w: no parallel hot spot ran again after the profiling phase", ErrNoPhase2)
	}
	return res, out, nil
}

// switchEngine runs the guest on first until it has run limit guest
// instructions, then calls change (which sets then) and runs it on then.
type switchEngine struct {
	first, then gvinst.Engine
	limit       uint64
	change      func() error
	err         error
}

func (s *switchEngine) Run(cpu *gvinst.CPU, budget uint64) gvinst.Stop {
	if s.then == nil && s.err == nil && s.first.Stats().GuestInsns >= s.limit {
		s.err = s.change()
	}
	if s.then != nil {
		return s.then.Run(cpu, budget)
	}
	if left := s.limit - min(s.limit, s.first.Stats().GuestInsns); s.err == nil && (budget == 0 || budget > left) {
		budget = max(left, 1)
	}
	return s.first.Run(cpu, budget)
}

func (s *switchEngine) Invalidate(addr, size uint64) {
	s.first.Invalidate(addr, size)
	if s.then != nil {
		s.then.Invalidate(addr, size)
	}
}

func (s *switchEngine) Stats() gvinst.EngineStats {
	st := s.first.Stats()
	if s.then != nil {
		t := s.then.Stats()
		st.GuestInsns += t.GuestInsns
		st.BlocksTranslated += t.BlocksTranslated
		st.BlocksExecuted += t.BlocksExecuted
		st.BlocksInvalidated += t.BlocksInvalidated
		st.ChainHits += t.ChainHits
		st.Traps += t.Traps
		st.Syscalls += t.Syscalls
	}
	return st
}
