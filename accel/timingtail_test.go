package accel_test

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// TestTimingTailLeavesDeviceData runs mvt (a matrix the initialisation
// nest makes, then a sweep by rows and one by columns) with the cost
// model on and the device free. Each nest's kernels give the exit state,
// so no arrival needs the CPU but the one that times the plain engine,
// and that one would bring back what the device holds: the column
// sweep's thread walks a column of the matrix the initialisation's launch
// made on the device (mvt and gemver at 12000 on an H100: a page of
// every row, 12,000 pages, 0.7 s of a 2 s run), and the initialisation's
// last rows share pages with what its launch stored. A timing that
// brought data back is not kept (OnBreak), so none of them may run.
func TestTimingTailLeavesDeviceData(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a C program")
	}
	script, err := corpus.ScriptPath()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(filepath.Dir(script), string(corpus.SuiteNests), "mvt.c")
	bin := gccStatic(t, src, filepath.Join(t.TempDir(), "mvt"), "-O2")
	_, prof, err := pipeline.Profile(context.Background(), pipeline.Config{Path: bin, Args: []string{bin}, Stdout: io.Discard, Stderr: io.Discard, Engine: testEngine}, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 400
	args := []string{bin, "400"}
	want := runNative(t, bin, args[1:]...)
	free := accel.DeviceCosts{HostToDevice: 1e18, DeviceToHost: 1e18, ThreadInsnsPerSecond: 1e18}
	var out bytes.Buffer
	_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: bin, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
		accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{KernelSpeedup: 1000}), Costs: &free})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("accelerated output %q, native %q", out.String(), want)
	}
	launches := 0
	for _, h := range rep.HotSpots {
		launches += h.Launches
		t.Logf("%s %s: %d launches, %d tail iterations, %d exit states %d gpu it; %s; %s", h.Entry, h.Schedule, h.Launches, h.TailIterations, h.ExitStates, h.Iterations, h.ExitNote, h.LastFallback)
	}
	t.Logf("brought back %d bytes: %d faults, %d runs, %d pages", rep.BytesBroughtBack, rep.BroughtBackFaults, rep.BroughtBackRuns, rep.BroughtBackPages)
	if launches < 3 {
		t.Fatalf("%d launches: want the initialisation and both sweeps", launches)
	}
	for _, h := range rep.HotSpots {
		if h.Launches > 0 && h.TailIterations != 0 {
			t.Errorf("hot spot %s ran %d iterations on the CPU after its launches: want its kernel's exit state, no timing arrival", h.Entry, h.TailIterations)
		}
	}
}
