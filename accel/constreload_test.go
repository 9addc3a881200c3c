package accel_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// TestConstReloadInit runs testdata/nests' conv2d (gcc -O2) two-phase on
// gpusim. Its initialisation nest divides by 17.0f, which gcc keeps in
// xmm1 and loads again from .rodata after the per-row memset of out (a
// known call, after the row's loop over in): phase 1 must take xmm1 for
// the same value at every header (a load from read-only memory, the same
// on entry), not for a value the rows carry, so both levels are
// parallel; the schedule is grid(i,j), the memset made by each row's last
// thread; and phase 2 launches the nest once, as a 2D kernel, the output
// native's. (Before, level i was sequential: "register x1 carries a value
// from one iteration to the next", and the rows ran on the CPU.)
func TestConstReloadInit(t *testing.T) {
	need2D(t)
	path := gccStatic(t, filepath.Join("..", "testdata", "nests", "conv2d.c"), filepath.Join(t.TempDir(), "conv2d"), "-O2")
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path}, Engine: testEngine})
	var init *profile.HotSpot
	for i := range prof.HotSpots {
		h := &prof.HotSpots[i]
		for _, a := range h.Accesses {
			if a.Kind == "write" && a.Size > 16 && len(h.Levels) == 2 { // the memset of a row
				init = h
			}
		}
	}
	if init == nil {
		t.Fatal("no two-level hot spot with the row's memset")
	}
	if len(init.ParallelLevels) != 2 {
		t.Fatalf("init nest %s: parallel levels %v, want both (%s; %s)", init.Entry, init.ParallelLevels, init.Levels[0].Reason, init.Levels[1].Reason)
	}
	found := false
	for _, iv := range init.Levels[0].IVs {
		if iv.Loc.Reg == "x1" {
			found = iv.Step == 0
		}
	}
	if !found {
		t.Errorf("init nest %s: no induction variable x1 of step 0 at level i: %+v", init.Entry, init.Levels[0].IVs)
	}
	const m, n = 60, 2000
	args := []string{path, strconv.Itoa(m), strconv.Itoa(n)}
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
		if h.Entry != init.Entry.String() {
			continue
		}
		t.Logf("%s %s: %d launches (%d 2D), fallbacks %v %s", h.Entry, h.Schedule, h.Launches, h.Launches2D, h.FallbackReasons, h.Note)
		if h.Schedule != "grid(i,j)" || h.Launches != 1 || h.Launches2D != 1 {
			t.Errorf("init nest %s: schedule %s, %d launches (%d 2D): want grid(i,j), one 2D launch", h.Entry, h.Schedule, h.Launches, h.Launches2D)
		}
		return
	}
	t.Errorf("init nest %s not in the report", init.Entry)
}
