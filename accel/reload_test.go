package accel_test

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// TestReloads runs testdata/nests' jacobi1d, whose sweeps gcc -O2 writes
// with A[i+1] carried to the next iteration in a register (and copied on
// as A[i-1]), two-phase on gpusim: phase 1 must model both registers as
// reloads, so that the sweeps launch (they were sequential before) with
// native's output. Then the same with the profile's reload addresses moved
// by one element, as a hand-edited profile could: the probed iterations
// must show the registers do not hold those loads, and the CPU runs the
// sweeps, with native's output still.
func TestReloads(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a nests program")
	}
	dir := buildNests(t, []string{"O2-static"})
	progs, err := corpus.Programs(dir, "O2-static")
	if err != nil {
		t.Fatal(err)
	}
	var p corpus.Program
	for _, q := range progs {
		if q.Name == "jacobi1d" {
			p = q
		}
	}
	if p.Path == "" {
		t.Fatal("jacobi1d not built")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out bytes.Buffer
	_, prof, err := pipeline.Profile(ctx, pipeline.Config{Path: p.Path, Args: []string{p.Path}, Stdout: &out, Stderr: &out, Engine: testEngine}, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sweeps := map[string]bool{}
	for _, h := range prof.HotSpots {
		for _, l := range h.Levels {
			if len(l.Reloads) == 2 && h.Verdict == profile.VerdictParallel {
				sweeps[h.Entry.String()] = true
			}
		}
	}
	if len(sweeps) != 2 {
		t.Fatalf("want the two sweeps parallel with two reloads each, found %d", len(sweeps))
	}
	args := []string{"6000", "12"}
	p.Args = args
	native := corpus.RunNative(t, p)
	run := func(prof *profile.File) *accel.Report {
		var out, errOut bytes.Buffer
		res, rep, err := pipeline.Accelerate(ctx, pipeline.Config{Path: p.Path, Args: append([]string{p.Path}, args...), Stdout: &out, Stderr: &errOut, Engine: testEngine},
			accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := corpus.Compare(native, resultOf(res, &out, &errOut)); err != nil {
			t.Fatalf("accelerated run differs from native: %v", err)
		}
		return rep
	}
	for _, h := range run(prof).HotSpots {
		if sweeps[h.Entry] && h.Launches < 12 {
			t.Errorf("sweep %s: %d launches, want one per time step (fallbacks %v: %s)", h.Entry, h.Launches, h.FallbackReasons, h.LastFallback)
		}
	}
	for i := range prof.HotSpots {
		for l := range prof.HotSpots[i].Levels {
			for r := range prof.HotSpots[i].Levels[l].Reloads {
				prof.HotSpots[i].Levels[l].Reloads[r].Disp += 8
			}
		}
	}
	for _, h := range run(prof).HotSpots {
		if !sweeps[h.Entry] {
			continue
		}
		if h.Launches != 0 || !strings.Contains(h.LastFallback, "reloaded register") {
			t.Errorf("sweep %s with wrong reloads: %d launches, last fallback %q", h.Entry, h.Launches, h.LastFallback)
		}
	}
}

// TestReloads2D runs testdata/nests' jacobi2dt two-phase on gpusim at a
// size whose rows fit one CTA, so that the sweeps run their 2D kernels
// (grid (i, j)), where each thread at j ≥ 2 loads A[i][j] and A[i][j-1]
// again (gcc carries them in two registers), the thread at j = 1 copies
// the one its row's preheader loaded: the output must be native's.
func TestReloads2D(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a nests program")
	}
	if runtime.NumCPU() < 2 {
		t.Skip("on one core the simulator prefers the 1D kernel")
	}
	dir := buildNests(t, []string{"O2-static"})
	progs, err := corpus.Programs(dir, "O2-static")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range progs {
		if p.Name != "jacobi2dt" {
			continue
		}
		const steps = 6
		rep := accelerateAt(t, p, []string{"100", strconv.Itoa(steps)})
		n := 0
		for _, h := range rep.HotSpots {
			n += h.Launches2D
		}
		if n < 2*steps {
			t.Errorf("%d 2D launches, want at least two per time step", n)
		}
		return
	}
	t.Fatal("jacobi2dt not built")
}

// TestReloadsChain runs testdata/nests' conv2d two-phase on gpusim. gcc
// -O2 writes its j loop as two blocks, the body and a block of register
// copies its back edge goes through, and carries six values loaded from
// the input in registers (three at depth two, copies of the others): phase
// 1 must evaluate the chain of blocks and model them as reloads, so that
// both levels are parallel (j was sequential), and the nest must run its
// 2D kernel (grid (i, j)) at a size whose rows fit one CTA, with native's
// output.
func TestReloadsChain(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a nests program")
	}
	if runtime.NumCPU() < 2 {
		t.Skip("on one core the simulator prefers the 1D kernel")
	}
	dir := buildNests(t, []string{"O2-static"})
	progs, err := corpus.Programs(dir, "O2-static")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range progs {
		if p.Name != "conv2d" {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		var out bytes.Buffer
		_, prof, err := pipeline.Profile(ctx, pipeline.Config{Path: p.Path, Args: []string{p.Path}, Stdout: &out, Stderr: &out}, profile.Options{})
		if err != nil {
			t.Fatal(err)
		}
		nest := ""
		for _, h := range prof.HotSpots {
			if len(h.Levels) == 2 && len(h.ParallelLevels) == 2 && len(h.Levels[1].Reloads) > 0 {
				nest = h.Entry.String()
			}
		}
		if nest == "" {
			t.Fatal("no two-level nest with both levels parallel and reloads at the inner one")
		}
		rep := accelerateAt(t, p, []string{"30", "1001"})
		for _, h := range rep.HotSpots {
			if h.Entry == nest && h.Launches2D == 0 {
				t.Errorf("nest %s: no 2D launch (%d launches, fallbacks %v: %s; %s)", nest, h.Launches, h.FallbackReasons, h.LastFallback, h.Note)
			}
		}
		return
	}
	t.Fatal("conv2d not built")
}
