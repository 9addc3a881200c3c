package accel_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
)

// outlayDriver is a driver whose first copy into each new device buffer
// of at least outlayBytes takes outlayTime more: a hot spot's first launch
// pays an outlay that the launches after it, which find the arrays on the
// device, do not (heat3d's first sweep, on an H100, spent 0.28 s copying
// in its first launch, against 0.2 s for a step on the CPU).
type outlayDriver struct{ gpu.Driver }

// A copy of outlayBytes or more to the start of a new buffer takes
// outlayTime more.
const (
	outlayBytes = 1 << 20
	outlayTime  = 300 * time.Millisecond
)

func (d outlayDriver) NewContext(i int) (gpu.Context, error) {
	c, err := d.Driver.NewContext(i)
	if err != nil {
		return nil, err
	}
	return &outlayContext{Context: c, fresh: map[gpu.DevicePtr]bool{}}, nil
}

type outlayContext struct {
	gpu.Context
	fresh map[gpu.DevicePtr]bool // buffers not copied into yet
}

func (c *outlayContext) Alloc(n uint64) (gpu.DevicePtr, error) {
	p, err := c.Context.Alloc(n)
	if err == nil && n >= outlayBytes {
		c.fresh[p] = true
	}
	return p, err
}

func (c *outlayContext) CopyHtoD(dst gpu.DevicePtr, src []byte) error {
	if len(src) >= outlayBytes && c.fresh[dst] {
		time.Sleep(outlayTime)
	}
	delete(c.fresh, dst)
	return c.Context.CopyHtoD(dst, src)
}

// TestTimeSteppedPairStaysOnDevice runs testdata/pingpong.c, two sweeps
// per time step (A -> B, then B -> A) over arrays the CPU fills, on gpusim
// emulating a fast GPU (KernelSpeedup) whose first copies are slow: the
// first launch pays an outlay for copying both arrays in, the launches
// after it find them there. Both sweeps must
// launch in most steps, and little must come back to the host (the final
// checksum's read of both arrays). Before the cost model priced a launch
// by what it would copy (ptxgen.Resident.ToCopy), it charged every
// instance after the first launch the first launch's copy time, and the
// first sweep went back to the CPU: each step then brought A back and
// copied B in again (heat3d on an H100: 2.4 s became 25 s).
func TestTimeSteppedPairStaysOnDevice(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a C program")
	}
	path := buildC(t, "pingpong")
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path}, Engine: testEngine})
	// Sweeps of 1200x1200 take the plain engine about 4 ms: a launch's
	// host side on gpusim (probing, guards, copies) on a loaded machine
	// costs up to tens of milliseconds, which smaller sweeps did not cover.
	const n, steps = 1200, 16
	args := []string{path, "1200", "16"}
	want := runNative(t, path, args[1:]...)
	drv := outlayDriver{gpusim.New(gpusim.Options{KernelSpeedup: 1000})}
	// The model is given the device's costs past the outlay: measured,
	// the copy into a new buffer (accel.MeasureDevice) would pay the
	// outlay too, and price every byte copied into a new buffer at 4 MB
	// in 0.3 s. What is tested is that the first launch's outlay is not
	// charged to the instances after it.
	costs := accel.DeviceCosts{LaunchLatency: 10 * time.Microsecond, HostToDevice: 10e9, DeviceToHost: 10e9, DeviceToDevice: 100e9}
	var out bytes.Buffer
	_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
		accel.Options{Profile: prof, Driver: drv, Costs: &costs})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("accelerated output differs from native:\n got %q\nwant %q", out.String(), want)
	}
	sweeps := 0
	for _, h := range rep.HotSpots {
		t.Logf("%s %s: %d launches, %d fallbacks, copies %.3fs, %d bytes in; %s %s", h.Entry, h.Schedule, h.Launches, h.Fallbacks, h.CopySeconds, h.BytesIn, h.NotProfitable, h.LastFallback)
		if h.Function != "main" || !strings.HasPrefix(h.Schedule, "grid(i,j)") || h.Launches+h.Fallbacks < steps/2 {
			continue // the fill, the checksum, inner loops
		}
		sweeps++
		if h.Launches < steps-2 {
			t.Errorf("sweep %s launched in %d of %d steps", h.Entry, h.Launches, steps)
		}
	}
	if sweeps != 2 {
		t.Errorf("found %d time-stepped sweeps in the report, want 2", sweeps)
	}
	// The final read of both arrays, and both again for each of the two
	// steps a sweep may have run on the CPU (steps-2 above); a sweep that
	// went back to the CPU brings them back at every step.
	array := uint64(4 * n * n)
	if rep.BytesBroughtBack > 6*array {
		t.Errorf("%d bytes brought back to the host, more than the final read of both arrays and two steps on the CPU (%d)", rep.BytesBroughtBack, 6*array)
	}
}
