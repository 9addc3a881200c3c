package accel_test

import (
	"bytes"
	"context"
	"strconv"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/pipeline"
)

// TestMemsetNest runs testdata/nests' twomm two-phase on gpusim: gcc -O2
// turns the zeroing of tmp's row i in the first product into a call of
// memset inside the i loop. Phase 1 models the call (profile.KnownCalls)
// and finds i parallel, and phase 2 runs the memset in the kernel: the
// product's i level launches once per instance, not its j level once per
// i. The output is native's.
func TestMemsetNest(t *testing.T) {
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
		rep := accelerateAt(t, p, []string{"60", "62", "64", "66"})
		found := false
		for _, h := range rep.HotSpots {
			t.Logf("%s %s: %d launches, %d fallbacks %s%s", h.Entry, h.Schedule, h.Launches, h.Fallbacks, h.Reason, h.LastFallback)
			if h.Schedule != "grid(i) thread(j,k)" {
				continue
			}
			found = true
			if h.Launches != 1 || h.Reason != "" {
				t.Errorf("the first product's i level %s made %d launches (%s), want 1", h.Entry, h.Launches, h.Reason)
			}
		}
		if !found {
			t.Error("no hot spot at the first product's i level: its memset call made it no candidate")
		}
		return
	}
	t.Fatal("twomm not built")
}

// TestMemsetRows runs testdata/memsetrows.c on gpusim: its nest clears row
// i with memset, then writes the row's first n-cut elements. With cut 0
// the writes overwrite the memset's bytes, and the launch runs the 2D
// kernel that leaves the memset out (ptxgen.Nest.Dead); with cut 3 each
// row keeps three of the memset's zeros, so the launch must run the 1D
// kernel, memset included. The output is native's either way (a 2D launch
// with cut 3 would leave the fill's values where the zeros belong).
func TestMemsetRows(t *testing.T) {
	need2D(t)
	path := buildC(t, "memsetrows")
	const m, n = 100, 300
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path}, Engine: testEngine})
	for _, cut := range []int{0, 3} {
		args := []string{path, strconv.Itoa(m), strconv.Itoa(n), strconv.Itoa(cut)}
		want := runNative(t, path, args[1:]...)
		var out bytes.Buffer
		_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
			accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("cut %d: accelerated output differs from native:\n got %q\nwant %q", cut, out.String(), want)
		}
		found := false
		for _, h := range rep.HotSpots {
			t.Logf("cut %d: %s %s: %d launches (%d 2D), in %d %s%s", cut, h.Entry, h.Schedule, h.Launches, h.Launches2D, h.BytesIn, h.Reason, h.LastFallback)
			if h.Schedule != "grid(i) thread(j)" {
				continue
			}
			found = true
			switch {
			case h.Launches != 1:
				t.Errorf("cut %d: the row nest %s made %d launches, want 1", cut, h.Entry, h.Launches)
			case cut == 0 && h.Launches2D != 1:
				t.Errorf("cut 0: the row nest %s ran no 2D kernel: its writes overwrite the memset", h.Entry)
			case cut > 0 && h.Launches2D != 0:
				t.Errorf("cut %d: the row nest %s ran the 2D kernel, which leaves out a memset whose zeros stay", cut, h.Entry)
			}
		}
		if !found {
			t.Errorf("cut %d: no hot spot at the row nest: its memset call made it no candidate", cut)
		}
	}
}
