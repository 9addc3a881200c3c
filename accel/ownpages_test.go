package accel_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
)

// TestOwnFallbackPagesShared runs testdata/ownpages.c: time steps over
// rows of a page each, step 1 short enough that the cost model sends it
// to the CPU, which writes a double in every row. The copies of those
// pages into the device's buffer are the hot spot's own doing, made once
// if it goes back to the GPU: the steps after step 1 must launch. Priced
// whole at every step (8 MB at 2 GB/s against 2 to 7 ms on the CPU),
// they kept every later step on the CPU, which dirtied the rows again
// (cholesky at 2400 on an H100: 14.6 s, where the run that launched every
// column took 3.4 s).
func TestOwnFallbackPagesShared(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a C program")
	}
	path := buildC(t, "ownpages")
	const steps = 20
	args := []string{path, "2000", "256", "20"}
	prof := phase1(t, pipeline.Config{Path: path, Args: args, Engine: testEngine})
	want := runNative(t, path, args[1:]...)
	costs := accel.DeviceCosts{LaunchLatency: 10 * time.Microsecond, HostToDevice: 2e9, DeviceToHost: 10e9, DeviceToDevice: 100e9}
	var out bytes.Buffer
	_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
		accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{KernelSpeedup: 1000}), Costs: &costs})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("accelerated output differs from native:\n got %q\nwant %q", out.String(), want)
	}
	found := false
	for _, h := range rep.HotSpots {
		t.Logf("%s %s: %d launches, %d fallbacks %v, dozed %d, disarmed %v; %s; %s", h.Entry, h.Schedule, h.Launches, h.Fallbacks, h.FallbackReasons, h.Dozed, h.Disarmed, h.LastFallback, h.NotProfitable)
		if h.Launches+h.Fallbacks < steps-2 || h.Launches+h.Fallbacks > steps {
			continue // the fill, the checksum
		}
		found = true
		if h.Launches < steps-3 {
			t.Errorf("the steps' hot spot launched %d times in %d steps, want all but step 1 (and one more at most)", h.Launches, steps)
		}
	}
	if !found {
		t.Errorf("no hot spot entered once a step in the report")
	}
}
