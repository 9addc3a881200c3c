package accel_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
)

// TestUnseenVectorTail runs testdata/nests' heat3d built with gcc -O3
// two-phase on gpusim, profiled at its default size and accelerated at
// 30: its sweeps are vectorised, and at 30 no probed row runs the vector
// loops' scalar tails, while the profile's strides do not hold. Such a
// site is left out of the proof that the rows are independent and gets an
// empty footprint, so that a thread that runs it fails the launch: the
// sweeps launch (as 3D kernels), the output native's. (Before, every
// sweep fell back: "the access ... did not run in both probed
// iterations".) Phase 1 must also see r13, which the sweeps move to two
// stack slots and back, as the same at every header.
func TestUnseenVectorTail(t *testing.T) {
	path := gccStatic(t, filepath.Join("..", "testdata", "nests", "heat3d.c"), filepath.Join(t.TempDir(), "heat3d"), "-O3")
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path}, Engine: testEngine})
	const steps = 3
	args := []string{"30", "3"}
	want := runNative(t, path, args...)
	var out bytes.Buffer
	_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: append([]string{path}, args...), Stdout: &out, Stderr: &out, Engine: testEngine},
		accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("accelerated output differs from native:\n got %q\nwant %q", out.String(), want)
	}
	sweeps := 0
	for _, h := range rep.HotSpots {
		if h.Schedule != "grid(i,j,k)" {
			continue
		}
		sweeps++
		t.Logf("%s %s: %d launches, fallbacks %v %s", h.Entry, h.Schedule, h.Launches, h.FallbackReasons, h.LastFallback)
		if h.Launches != steps || h.Fallbacks != 0 {
			t.Errorf("sweep %s: %d launches, %d fallbacks (%s), want one a step", h.Entry, h.Launches, h.Fallbacks, h.LastFallback)
		}
	}
	if sweeps != 2 {
		t.Errorf("%d hot spots scheduled grid(i,j,k), want heat3d's two sweeps", sweeps)
	}
}
