package accel_test

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/jit"
	"github.com/gxbit/gxbit/pipeline"
)

// TestPrefetch runs testdata/nests' twomm (eight hot spots: the
// initialisation nests and the two products) two-phase on gpusim with
// kernels loaded ahead (accel.PrefetchOn, what a real GPU does): the
// context opens and the modules load on the loader goroutine while the
// guest runs, the launches take them from there, and the output is
// native's. Run with -race, it checks the hand-over between the loader
// and the guest's goroutine.
func TestPrefetch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a nests program")
	}
	dir := buildNests(t, []string{"O2-static"})
	progs, err := corpus.Programs(dir, "O2-static")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range progs {
		if p.Name != "twomm" {
			continue
		}
		// A launch whose module the loader has not begun loads it itself
		// (h10-fixed): on a loaded machine the guest may reach every hot
		// spot first. Three runs must see the loader ahead at least once.
		for try := 0; try < 3; try++ {
			rep := accelerateWith(t, p, nil, accel.Options{Prefetch: accel.PrefetchOn})
			launches := 0
			for _, h := range rep.HotSpots {
				launches += h.Launches
			}
			t.Logf("%d launches, %d kernels loaded ahead", launches, rep.KernelsPrefetched)
			if launches == 0 {
				t.Fatal("no launch")
			}
			if rep.KernelsPrefetched > 0 {
				return
			}
		}
		t.Error("in three runs, no launch ran a kernel the loader had loaded ahead")
		return
	}
	t.Fatal("twomm not built")
}

// slowOpenDriver is gpusim with a context that opens only when open is
// closed, as a real GPU's takes a good part of a second; closes counts
// the contexts closed.
type slowOpenDriver struct {
	gpu.Driver
	open   chan struct{}
	closes chan struct{}
	// opened, when not nil, is closed once a context is made.
	opened chan struct{}
}

type closeCountedContext struct {
	gpu.Context
	closes chan struct{}
}

func (c closeCountedContext) Close() error {
	c.closes <- struct{}{}
	return c.Context.Close()
}

func (d slowOpenDriver) NewContext(i int) (gpu.Context, error) {
	<-d.open
	ctx, err := d.Driver.NewContext(i)
	if err != nil {
		return nil, err
	}
	if d.opened != nil {
		close(d.opened)
	}
	return closeCountedContext{ctx, d.closes}, nil
}

// TestDeviceOpensAtStart runs atax two-phase with its hot spots armed
// late (Options.ArmAfter) on a device whose context never opens during
// the run: the context starts opening at once, on the loader; the hot
// spots, armed at the start all the same, doze and run on the CPU, the
// ones reached after 2^26 guest instructions with their kernels
// generated and queued for the loader; and the run, which ends before the
// context is open, neither waits for it nor leaks it (the loader closes
// it when it has it).
func TestDeviceOpensAtStart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a nests program")
	}
	dir := buildNests(t, []string{"O2-static"})
	progs, err := corpus.Programs(dir, "O2-static")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range progs {
		if p.Name != "atax" {
			continue
		}
		drv := slowOpenDriver{Driver: gpusim.New(gpusim.Options{}), open: make(chan struct{}), closes: make(chan struct{}, 1)}
		// A run that waits for the context gets it after a minute.
		var once sync.Once
		release := func() { once.Do(func() { close(drv.open) }) }
		waited := time.AfterFunc(time.Minute, release)
		rep := accelerateWith(t, p, []string{"3000", "3000"}, accel.Options{Prefetch: accel.PrefetchOn, ArmAfter: time.Hour, Driver: drv})
		if !waited.Stop() {
			t.Error("the run waited for the context it never used")
		}
		queued := false
		for _, h := range rep.HotSpots {
			if h.Launches != 0 {
				t.Fatalf("hot spot %s launched with no device", h.Entry)
			}
			queued = queued || h.Dozed > 0 && h.KernelGenerated
		}
		if !queued {
			t.Error("no hot spot reached late had its kernel generated while it dozed")
		}
		// The run is over with the context still opening.
		release()
		select {
		case <-drv.closes:
		case <-time.After(time.Minute):
			t.Fatal("the abandoned loader did not close its context")
		}
		return
	}
	t.Fatal("atax not built")
}

// releasingEngine is the suite's CPU engine that calls release once it
// has returned a breakpoint stop and then budgets budget stops: the
// device of TestInitNestArmedEarly opens in the middle of the nest the
// guest was in.
type releasingEngine struct {
	gvinst.Engine
	release       func()
	broke         bool
	budgets, wait int
	// opened, when not nil, is waited for after the release: the guest
	// goes on once the context is open (a loaded machine may otherwise
	// run the rest of the nest before the loader's goroutine opens it).
	opened chan struct{}
}

func (e *releasingEngine) Run(cpu *gvinst.CPU, budget uint64) gvinst.Stop {
	st := e.Engine.Run(cpu, budget)
	switch {
	case st.Kind == gvinst.StopBreakpoint:
		e.broke = true
	case st.Kind == gvinst.StopBudget && e.broke:
		if e.budgets++; e.budgets == e.wait {
			e.release()
			if e.opened != nil {
				select {
				case <-e.opened:
					// The loader marks the device ready right after.
					time.Sleep(20 * time.Millisecond)
				case <-time.After(10 * time.Second):
				}
			}
		}
	}
	return st
}

func (e *releasingEngine) Close() error {
	if c, ok := e.Engine.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// TestInitNestArmedEarly runs atax two-phase with Options.ArmAfter far
// off, on a device whose context opens in the middle of the matrix's
// initialisation nest: the hot spots are armed at the start all the same
// (the device opens on the loader), that nest runs on the CPU while the
// context opens (it dozes), and the rest of its instance is offloaded
// once the device is ready, so that the rows left are born on the device;
// the output is native's.
func TestInitNestArmedEarly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a nests program")
	}
	dir := buildNests(t, []string{"O2-static"})
	progs, err := corpus.Programs(dir, "O2-static")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range progs {
		if p.Name != "atax" {
			continue
		}
		drv := slowOpenDriver{Driver: gpusim.New(gpusim.Options{}), open: make(chan struct{}), closes: make(chan struct{}, 1), opened: make(chan struct{})}
		var once sync.Once
		release := func() { once.Do(func() { close(drv.open) }) }
		defer release()
		newEngine := func(mem *gvinst.Memory, tr gvinst.Translator, o gvinst.InterpOptions) (gvinst.Engine, error) {
			var e gvinst.Engine = gvinst.NewInterpreter(mem, tr, o)
			if testEngine == pipeline.EngineJIT {
				o.HotAfter = jit.DefaultHotAfter
				je, err := jit.New(mem, tr, o)
				if err != nil {
					return nil, err
				}
				e = je
			}
			return &releasingEngine{Engine: e, release: release, wait: 2, opened: drv.opened}, nil
		}
		const rows = 1500
		// AlwaysOffload: the test is of dozing and waking, not of the cost
		// model's verdict on the simulator, which its timings of the host
		// decide (on a loaded CI machine the woken matrix nest was once
		// priced not to pay, and nothing launched).
		rep := accelerateWith(t, p, []string{fmt.Sprint(rows), "1600"}, accel.Options{Prefetch: accel.PrefetchOn, ArmAfter: time.Hour, Driver: drv, Engine: newEngine, AlwaysOffload: true})
		// The matrix's nest, entered once, dozed, then ran its rows
		// left on the device (fewer than all).
		rest := false
		for _, h := range rep.HotSpots {
			t.Logf("%s: early %v, dozed %d, %d launches, %d GPU iterations", h.Entry, h.Early, h.Dozed, h.Launches, h.Iterations)
			rest = rest || h.Early && h.Dozed > 0 && h.Launches > 0 && h.Iterations < rows-1
			if h.Offloadable && !h.Early {
				t.Errorf("hot spot %s was not armed at the start", h.Entry)
			}
		}
		if !rest {
			t.Error("no initialisation nest dozed and then ran the rest of its instance on the device")
		}
		if rep.DeviceReadySeconds <= 0 {
			t.Errorf("the report says the device was ready after %gs", rep.DeviceReadySeconds)
		}
		return
	}
	t.Fatal("atax not built")
}

// gpuNamed is gpusim under another name, so that phase 2 treats it as a
// real GPU (Options.Prefetch's auto setting loads ahead on one); opens
// and closes count its contexts.
type gpuNamed struct {
	gpu.Driver
	opens, closes chan struct{}
}

func (d gpuNamed) Name() string { return "gpu" }

func (d gpuNamed) NewContext(i int) (gpu.Context, error) {
	ctx, err := d.Driver.NewContext(i)
	if err != nil {
		return nil, err
	}
	d.opens <- struct{}{}
	return closeCountedContext{ctx, d.closes}, nil
}

// TestRunOnlineOpensDevice runs gxbit run --accelerate on a program with
// no loop on a real GPU (as far as phase 2 can tell): its profiling round
// begins at the start, and the device's context starts opening then, on
// the loader (accel.Accelerator.OpenDevice), although nothing is ever
// armed; by the end it is closed, and the program's status is its own.
func TestRunOnlineOpensDevice(t *testing.T) {
	quiet := compileStatic(t, "quiet", "int main(void) { return 3; }")
	drv := gpuNamed{Driver: gpusim.New(gpusim.Options{}), opens: make(chan struct{}, 4), closes: make(chan struct{}, 4)}
	res, _, err := pipeline.RunOnline(context.Background(), pipeline.Config{Path: quiet, Engine: testEngine}, pipeline.OnlineOptions{Driver: drv})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitStatus != 3 {
		t.Errorf("status %d, want 3", res.ExitStatus)
	}
	for _, c := range []struct {
		what string
		ch   chan struct{}
	}{{"opened", drv.opens}, {"closed", drv.closes}} {
		select {
		case <-c.ch:
		case <-time.After(time.Minute):
			t.Fatalf("no context was %s", c.what)
		}
	}
}
