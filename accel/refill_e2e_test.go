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

// gpuLike is a driver that phase 2 takes for a real GPU: its first
// launch of a hot spot is not a timed sample.
type gpuLike struct{ slowDriver }

func (gpuLike) Name() string { return "gpu-like" }

// TestOwnPagesDoNotJustifyLaunches runs testdata/colupdate.c,
// gramschmidt's shape: at every step a column update parallel over the
// columns right of the reduced one, whose footprints no other nest uses
// on the device. The model believes the device free but for bringing
// pages back, which it prices dear, and every real launch takes 20 ms
// more than the CPU's whole instance (a driver it takes for a real GPU:
// the first launch is not a sample). What the update's own launches left
// on the device must not make its next instances' CPU side dear (see
// refill.go): it launches in few of the steps, and the output is the
// native one.
func TestOwnPagesDoNotJustifyLaunches(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a C program")
	}
	path := buildC(t, "colupdate")
	const steps = 300
	args := []string{path, "100", "300"}
	prof := phase1(t, pipeline.Config{Path: path, Args: args, Engine: testEngine})
	want := runNative(t, path, args[1:]...)
	costs := accel.DeviceCosts{HostToDevice: 1e18, DeviceToHost: 1e5, ThreadInsnsPerSecond: 1e18}
	var out bytes.Buffer
	_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
		accel.Options{Profile: prof, Driver: gpuLike{slowDriver{gpusim.New(gpusim.Options{}), 20 * time.Millisecond}}, Costs: &costs})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("accelerated output differs from native:\n got %q\nwant %q", out.String(), want)
	}
	launches := 0
	for _, h := range rep.HotSpots {
		t.Logf("%s %s: %d launches, %d fallbacks; %s %s", h.Entry, h.Schedule, h.Launches, h.Fallbacks, h.NotProfitable, h.LastFallback)
		launches += h.Launches
	}
	if launches > steps/6 {
		t.Errorf("%d launches in %d steps: the update's own pages on the device kept it launching", launches, steps)
	}
}
