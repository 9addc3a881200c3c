package accel_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
)

// closeCountingDriver counts the frees and context closes of the
// contexts it makes.
type closeCountingDriver struct {
	gpu.Driver
	frees, closes *int
}

func (d closeCountingDriver) NewContext(i int) (gpu.Context, error) {
	c, err := d.Driver.NewContext(i)
	if err != nil {
		return nil, err
	}
	return &closeCountingContext{Context: c, d: d}, nil
}

type closeCountingContext struct {
	gpu.Context
	d closeCountingDriver
}

func (c *closeCountingContext) Free(p gpu.DevicePtr) error {
	*c.d.frees++
	return c.Context.Free(p)
}

func (c *closeCountingContext) Close() error {
	*c.d.closes++
	return c.Context.Close()
}

// TestLeaveDevice runs a program that launches twice over: as the daemon
// does, the run's end frees the device's buffers and closes its context;
// with Options.LeaveDevice, as gxbit's commands do (they exit right
// after), it leaves both to the process's exit, and the output is the
// same.
func TestLeaveDevice(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a C program")
	}
	path := buildC(t, "pingpong")
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path}, Engine: testEngine})
	args := []string{path, "200", "4"}
	want := runNative(t, path, args[1:]...)
	var freed [2]int
	for i, leave := range []bool{false, true} {
		var frees, closes int
		drv := closeCountingDriver{Driver: gpusim.New(gpusim.Options{}), frees: &frees, closes: &closes}
		var out bytes.Buffer
		_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
			accel.Options{Profile: prof, Driver: drv, AlwaysOffload: true, LeaveDevice: leave})
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("LeaveDevice %v: output %q, native %q", leave, out.String(), want)
		}
		launches := 0
		for _, h := range rep.HotSpots {
			launches += h.Launches
		}
		if launches == 0 {
			t.Fatalf("LeaveDevice %v: no launch", leave)
		}
		freed[i] = frees
		if want := map[bool]int{false: 1, true: 0}[leave]; closes != want {
			t.Errorf("LeaveDevice %v: the context closed %d times, want %d", leave, closes, want)
		}
	}
	// The same run frees what it merges and backs up as it goes; only the
	// buffers left at its end differ.
	if freed[1] >= freed[0] {
		t.Errorf("%d buffers freed with LeaveDevice, %d without: want the buffers left at the end not freed", freed[1], freed[0])
	}
}
