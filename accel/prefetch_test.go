package accel_test

import (
	"sync"
	"testing"
	"time"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/internal/corpus"
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
		rep := accelerateWith(t, p, nil, accel.Options{Prefetch: accel.PrefetchOn})
		launches := 0
		for _, h := range rep.HotSpots {
			launches += h.Launches
		}
		t.Logf("%d launches, %d kernels loaded ahead", launches, rep.KernelsPrefetched)
		if launches == 0 {
			t.Fatal("no launch")
		}
		if rep.KernelsPrefetched == 0 {
			t.Error("no launch ran a kernel the loader had loaded ahead")
		}
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
	return closeCountedContext{ctx, d.closes}, nil
}

// TestDeviceOpensAtStart runs a short program two-phase with its hot
// spots armed late (Options.ArmAfter): the context starts opening at
// once, on the loader, and a run that ends before it is open neither
// waits for it nor leaks it (the loader closes it when it has it).
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
		rep := accelerateWith(t, p, nil, accel.Options{Prefetch: accel.PrefetchOn, ArmAfter: time.Hour, Driver: drv})
		if !waited.Stop() {
			t.Error("the run waited for the context it never used")
		}
		for _, h := range rep.HotSpots {
			if h.Launches != 0 {
				t.Fatalf("hot spot %s launched before arming", h.Entry)
			}
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
