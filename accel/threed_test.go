package accel_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/pipeline"
)

// TestKernel3DNests runs testdata/nests' heat3d and doitgen two-phase on
// gpusim at sizes where the 2D grid would not give every host core a
// block, so the 3D kernel runs (thread (x, y, z) per element of the
// three parallel levels, as the schedule's grid (i, j, k) says and
// ../testdata/device/nests' references do): each hot nest of three
// parallel levels must launch it, and the output must be native's
// (accelerateWith compares).
func TestKernel3DNests(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nests programs")
	}
	need2D(t)
	dir := buildNests(t, []string{"O2-static"})
	progs, err := corpus.Programs(dir, "O2-static")
	if err != nil {
		t.Fatal(err)
	}
	args := map[string][]string{"heat3d": {"16", "3"}, "doitgen": {"9", "10", "12"}}
	ran := 0
	for _, p := range progs {
		a, ok := args[p.Name]
		if !ok {
			continue
		}
		ran++
		t.Run(p.Name, func(t *testing.T) {
			rep := accelerateWith(t, p, a, accel.Options{MinIterations: 1})
			grids := 0
			for _, h := range rep.HotSpots {
				t.Logf("%s %s: %d launches (%d 2D, %d 3D) %s", h.Entry, h.Schedule, h.Launches, h.Launches2D, h.Launches3D, h.Note)
				if h.Schedule != "grid(i,j,k)" && h.Schedule != "grid(r,q,p)" || h.Launches == 0 {
					continue
				}
				grids++
				if h.Launches3D != h.Launches {
					t.Errorf("hot spot %s (%s): %d launches, %d of them 3D: want all 3D", h.Entry, h.Schedule, h.Launches, h.Launches3D)
				}
			}
			if grids == 0 {
				t.Error("no hot spot with a 3D grid launched")
			}
		})
	}
	if ran != len(args) {
		t.Errorf("ran %d of the %d programs", ran, len(args))
	}
}

// TestInitOuterStores2D runs testdata/rowinit.c two-phase on gpusim at
// a size where the simulator takes 2D kernels: its initialisation nest
// stores first[i] and scale[i] in the outer body before the row loop of
// A[i][j], so its 2D kernel runs those stores in every thread of a row
// (ptxgen.Nest.OuterStores), their footprints proven apart from A's. It
// must launch in 2D, and the output must be native's. (mvt's init, whose
// outer body divides four times, keeps the 1D kernel.)
func TestInitOuterStores2D(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a C program")
	}
	need2D(t)
	path := buildC(t, "rowinit")
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path}, Engine: testEngine})
	args := []string{path, "40", "48"}
	want := runNative(t, path, args[1:]...)
	var out bytes.Buffer
	_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
		accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("accelerated output differs from native:\n got %q\nwant %q", out.String(), want)
	}
	for _, h := range rep.HotSpots {
		t.Logf("%s %s: %d launches (%d 2D) %s", h.Entry, h.Schedule, h.Launches, h.Launches2D, h.Note)
		if h.Launches2D > 0 {
			return // the initialisation nest: the only one with a parallel inner level
		}
	}
	t.Fatal("the initialisation nest launched no 2D kernel")
}
