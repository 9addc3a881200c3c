package accel_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
)

// TestRunOnlineOpensDeviceAtStart runs gxbit run --accelerate on a real
// GPU (as far as phase 2 can tell) with a program that ends long before
// its first profiling round would begin: the device's context still
// starts opening at the start, on the loader, so that a longer program's
// first round finds it ready (the matrix-vector programs' initialisation
// nests otherwise made most of their matrix on the CPU while it opened);
// by the end it is closed, and the program's status is its own.
func TestRunOnlineOpensDeviceAtStart(t *testing.T) {
	quiet := compileStatic(t, "quiet", "int main(void) { return 3; }")
	drv := gpuNamed{Driver: gpusim.New(gpusim.Options{}), opens: make(chan struct{}, 4), closes: make(chan struct{}, 4)}
	res, on, err := pipeline.RunOnline(context.Background(), pipeline.Config{Path: quiet, Engine: testEngine}, pipeline.OnlineOptions{Driver: drv, ProfileAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitStatus != 3 || on.Rounds != 0 {
		t.Errorf("status %d after %d rounds, want 3 after none", res.ExitStatus, on.Rounds)
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

// slowGPU is a device whose context opens only once open is closed,
// named as a real GPU, so that phase 2 opens it on the loader.
type slowGPU struct{ slowOpenDriver }

func (d slowGPU) Name() string { return "gpu" }

// TestRunOnlineDozesWhileDeviceOpens runs gxbit run --accelerate on syrk
// with its first profiling round inside the product's nest, on a real GPU
// (as far as phase 2 can tell) whose context does not open during the
// run: the hot spots the round arms doze, as those armed at the start of
// a two-phase run do, and the guest goes on at the CPU engine's speed
// instead of waiting for the device (on an H100 host the guest waited
// 0.07-0.14 s so in runs of 0.25-0.7 s); the output is native's.
func TestRunOnlineDozesWhileDeviceOpens(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a nests program")
	}
	dir := buildNests(t, []string{"O2-static"})
	path := filepath.Join(dir, "O2-static", "syrk")
	args := []string{path, "120", "100"}
	want := runNative(t, path, args[1:]...)
	drv := slowGPU{slowOpenDriver{Driver: gpusim.New(gpusim.Options{}), open: make(chan struct{}), closes: make(chan struct{}, 4)}}
	var once sync.Once
	release := func() { once.Do(func() { close(drv.open) }) }
	defer release()
	// Waiting for the device would wait for ever: the watchdog lets the run
	// end, and fail.
	watchdog := time.AfterFunc(20*time.Second, release)
	defer watchdog.Stop()
	on := runOnlineNative(t, path, args, want, pipeline.OnlineOptions{Driver: drv, AlwaysOffload: true, ProfileAfterInsns: 1_500_000})
	if on.Report == nil {
		t.Fatalf("no phase 2: %v", on.Why)
	}
	dozed := 0
	for _, h := range on.Report.HotSpots {
		dozed += h.Dozed
	}
	if dozed == 0 || on.Report.DeviceWaitSeconds > 0 {
		t.Errorf("%d hot spot arrivals dozed, and the guest waited %.3gs for the device; want arrivals dozing and no wait\n%s", dozed, on.Report.DeviceWaitSeconds, accel.FormatReport(on.Report))
	}
}
