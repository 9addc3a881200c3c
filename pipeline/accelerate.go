package pipeline

import (
	"context"
	"errors"
	"runtime"
	"time"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/lift"
)

// AccelGuest is what phase 2 (package accel) needs of the guest: with the
// main program's loaded segments (as the file has them, not the zeroed
// rest) and a lifter like g's over another memory, phase 2 translates hot
// spots while the guest runs.
func (g *Guest) AccelGuest() *accel.Guest {
	ag := &accel.Guest{Mem: g.Mem, Lifter: g.Lifter, SHA256: g.SHA256, Symbols: g.ProfileImage().Symbols}
	for _, s := range g.Image.Prog.Segments {
		if s.Filesz > 0 {
			ag.CodeRanges = append(ag.CodeRanges, [2]uint64{s.Vaddr + g.Image.Bias, s.Vaddr + g.Image.Bias + s.Filesz})
		}
	}
	ag.NewLifter = func(mem *gvinst.Memory) gvinst.Translator {
		l := lift.NewLifter(mem)
		l.MaxInsts = g.Lifter.MaxInsts
		return l
	}
	return ag
}

// Accelerate loads and runs a program with the profile's parallel hot
// spots offloaded to the GPU (gxbit accelerate). The guest runs on the
// engine cfg.Engine names unless opts.Engine is set.
func Accelerate(ctx context.Context, cfg Config, opts accel.Options) (*Result, *accel.Report, error) {
	g, err := Load(cfg)
	if err != nil {
		return nil, nil, err
	}
	defer g.Close()
	if opts.Engine == nil {
		if opts.Engine, err = g.EngineFunc(); err != nil {
			return nil, nil, err
		}
	}
	a, err := accel.New(g.AccelGuest(), opts)
	if err != nil {
		return nil, nil, err
	}
	defer a.Close()
	start := time.Now()
	var e gvinst.Engine = a.Engine()
	if opts.ArmAfter > 0 {
		// The guest runs on this goroutine, locked to its thread, and
		// ArmAfter is its thread's CPU time (see The guest's CPU time).
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		e = &armingEngine{acc: a, after: opts.ArmAfter, cpu0: guestCPUTime()}
	}
	res, err := g.RunEngine(ctx, e, a.OnBreak)
	err = finishDevice(a, err)
	if err != nil {
		return nil, nil, err
	}
	rep := a.Report()
	rep.WallSeconds = time.Since(start).Seconds()
	rep.DeviceInitSeconds = driverInitSeconds(opts.Driver)
	rep.GuestInstructions = res.Stats.GuestInstructions + a.AuxInstructions()
	res.Stats.GuestInstructions = rep.GuestInstructions
	return res, rep, nil
}

// driverInitSeconds is the time d took to initialise, where it tells
// (cuda.Driver.InitTime).
func driverInitSeconds(d gpu.Driver) float64 {
	if it, ok := d.(interface{ InitTime() time.Duration }); ok {
		return it.InitTime().Seconds()
	}
	return 0
}

// finishDevice settles what the device still holds once the guest's run
// is over (runErr is the run's error). A run that ended as runs end (an
// exit, a signal, a fault, the budget) leaves memory nothing reads again:
// the device's bytes are dropped, not copied back. After an error of
// gxbit's own, the guest's memory is made whole again first.
func finishDevice(a *accel.Accelerator, runErr error) error {
	if runErr == nil {
		a.Discard()
		return nil
	}
	if ferr := a.Finish(); ferr != nil {
		return errors.Join(runErr, ferr)
	}
	return runErr
}

// DefaultArmAfter is gxbit accelerate's accel.Options.ArmAfter: a run
// shorter than this is over before probing (tens of milliseconds per hot
// spot) and a launch could pay for themselves.
const DefaultArmAfter = 250 * time.Millisecond

// armingEngine runs the guest on an accelerator's main engine and arms its
// hot spots once the guest's thread has taken after of CPU time
// (accel.Options.ArmAfter); between runs it wakes the hot spots armed
// early that wait for the device (accel.Accelerator.Wake).
type armingEngine struct {
	acc   *accel.Accelerator
	after time.Duration
	cpu0  time.Duration // the guest's CPU time when the run began
	armed bool
}

func (e *armingEngine) Run(cpu *gvinst.CPU, budget uint64) gvinst.Stop {
	if !e.armed && guestCPUTime()-e.cpu0 >= e.after {
		e.armed = true
		e.acc.Arm()
	}
	e.acc.Wake()
	return e.acc.Engine().Run(cpu, budget)
}

func (e *armingEngine) Invalidate(addr, size uint64) { e.acc.Engine().Invalidate(addr, size) }

func (e *armingEngine) Stats() gvinst.EngineStats { return e.acc.Engine().Stats() }
