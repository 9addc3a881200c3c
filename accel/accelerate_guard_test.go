package accel_test

import (
	"bytes"
	"context"
	"errors"
	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/pipeline"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/profile"
)

// buildC compiles a C file of testdata with gcc -O2 -static.
func buildC(t *testing.T, name string, flags ...string) string {
	t.Helper()
	return gccStatic(t, filepath.Join("testdata", name+".c"), filepath.Join(t.TempDir(), name), append([]string{"-O2"}, flags...)...)
}

func runNative(t *testing.T, path string, args ...string) string {
	t.Helper()
	b, err := exec.Command(path, args...).Output()
	if err != nil {
		t.Fatalf("native %s: %v", path, err)
	}
	return string(b)
}

// TestGuards profiles a binary with one input and accelerates it with
// others: arrays that alias, and bounds that differ. The output stays the
// native one, and the report says which guard sent the loop to the CPU.
func TestGuards(t *testing.T) {
	path := buildC(t, "alias", "-fno-tree-vectorize")
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path, "1000", "0", "1000"}, Engine: testEngine})
	kern := ""
	for _, h := range prof.HotSpots {
		if h.Function == "kern" {
			kern = h.Entry.String()
			if h.Verdict != "parallel" {
				t.Fatalf("phase 1 did not find kern's loop parallel: %s (%s)", h.Verdict, h.Reason)
			}
		}
	}
	if kern == "" {
		t.Fatal("no hot spot in kern")
	}
	for _, c := range []struct {
		name     string
		args     []string
		launched bool
		reason   string
	}{
		{"profiled input", []string{"2000", "0", "2000"}, true, ""},
		{"larger", []string{"50000", "0", "50000"}, true, ""},
		{"shifted", []string{"3000", "7", "5000"}, true, ""},
		{"overlap read ahead", []string{"1000", "1", "0"}, false, accel.ReasonAliasing},
		{"overlap write ahead", []string{"1000", "0", "1"}, false, accel.ReasonAliasing},
		{"in place", []string{"1000", "0", "0"}, false, accel.ReasonAliasing},
		{"too short", []string{"6", "0", "6"}, false, accel.ReasonTripCount},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := runNative(t, path, c.args...)
			var out bytes.Buffer
			res, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: append([]string{path}, c.args...), Stdout: &out, Stderr: &out, Engine: testEngine},
				accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != want || res.ExitStatus != 0 {
				t.Errorf("accelerated %q (status %d), native %q", out.String(), res.ExitStatus, want)
			}
			for _, h := range rep.HotSpots {
				if h.Entry != kern {
					continue
				}
				if c.launched && (h.Launches != 1 || h.Fallbacks != 0) {
					t.Errorf("kern: %d launches, fallbacks %v; want one launch", h.Launches, h.FallbackReasons)
				}
				if !c.launched && (h.Launches != 0 || h.FallbackReasons[c.reason] != 1) {
					t.Errorf("kern: %d launches, fallbacks %v; want one fallback for %q", h.Launches, h.FallbackReasons, c.reason)
				}
				t.Logf("kern: launches %d, fallbacks %v (%s)", h.Launches, h.FallbackReasons, h.LastFallback)
			}
		})
	}
}

// TestRunOnline profiles the first time steps of a stencil and offloads
// the later ones in the same run.
func TestRunOnline(t *testing.T) {
	dir := buildLoops(t, "stencil2d", "O2-static")
	path := filepath.Join(dir, "O2-static", "stencil2d")
	args := []string{path, "48", "12"}
	want, _ := runPlain(t, path, args[1:]...)
	var out bytes.Buffer
	res, on, err := pipeline.RunOnline(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
		pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{}), ProfileInsns: 150_000, AlwaysOffload: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want || res.ExitStatus != 0 {
		t.Errorf("online run %q (status %d), plain %q", out.String(), res.ExitStatus, want)
	}
	if on.Why != nil {
		t.Fatalf("phase 2 did not run: %v", on.Why)
	}
	t.Logf("%s", accel.FormatReport(on.Report))
	// A run that ends within the first profiling round (main runs no
	// loop) says so.
	quiet := compileStatic(t, "quiet", "int main(void) { return 3; }")
	res, on, err = pipeline.RunOnline(context.Background(), pipeline.Config{Path: quiet, Engine: testEngine}, pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitStatus != 3 || !errors.Is(on.Why, pipeline.ErrNoPhase2) {
		t.Errorf("no loop: status %d, why %v", res.ExitStatus, on.Why)
	}
}

// TestProfileMismatch checks that a profile is refused for a program other
// than the one it was made for.
func TestProfileMismatch(t *testing.T) {
	f := &profile.File{Version: profile.FormatVersion, Program: "/other", ProgramSHA256: strings.Repeat("ab", 32)}
	drv, err := pipeline.OpenGPU("sim")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = pipeline.Accelerate(context.Background(), pipeline.Config{Path: "/usr/bin/true", Engine: testEngine}, accel.Options{Profile: f, Driver: drv, AlwaysOffload: true})
	if !errors.Is(err, accel.ErrProfileMismatch) {
		t.Errorf("accelerate with another program's profile: %v", err)
	}
}

// TestLazyCopyBack accelerates testdata/lazy.c, whose two parallel loops
// pass arrays back and forth while system calls read (write(2)) and write
// (read(2)) those arrays between launches, when only the device holds
// their current bytes. The output must be the native one, and the report
// must show arrays left on the device and brought back.
func TestLazyCopyBack(t *testing.T) {
	path := buildC(t, "lazy", "-fno-tree-vectorize")
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path, "20000"}, Engine: testEngine})
	want := runNative(t, path, "30000")
	var out bytes.Buffer
	_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: []string{path, "30000"}, Stdout: &out, Stderr: &out, Engine: testEngine},
		accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("accelerated output differs from native:\n got %q\nwant %q", out.String(), want)
	}
	launches, deferred := 0, uint64(0)
	for _, h := range rep.HotSpots {
		launches += h.Launches
		deferred += h.BytesDeferred
	}
	if launches < 12 || deferred == 0 || rep.BytesBroughtBack == 0 {
		t.Errorf("want both loops offloaded every round with arrays left on the device:\n%s", accel.FormatReport(rep))
	}
}

// TestRunOnlineSingleInstance runs programs once with both phases whose
// hot nest is entered once: matmul, whose first profiling round ends inside
// the product nest's only instance, and testdata/late.c, whose round ends
// in an init nest, so that the product nest, entered later, is found by a
// second round that the guest's time outside every known nest starts. In
// both the rest of the product nest's instance must run on the GPU, with
// the plain run's output.
func TestRunOnlineSingleInstance(t *testing.T) {
	dir := buildLoops(t, "matmul", "O2-static")
	late := buildC(t, "late")
	for _, c := range []struct {
		name   string
		args   []string
		rounds int
		outer  uint64 // the product nest's outer trip count
	}{
		{"matmul", []string{filepath.Join(dir, "O2-static", "matmul"), "256"}, 1, 256},
		{"late", []string{late, "512", "32"}, 2, 512},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := runNative(t, c.args[0], c.args[1:]...)
			var out bytes.Buffer
			res, on, err := pipeline.RunOnline(context.Background(), pipeline.Config{Path: c.args[0], Args: c.args, Stdout: &out, Stderr: &out, Engine: testEngine},
				pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != want || res.ExitStatus != 0 {
				t.Errorf("online run %q (status %d), native %q", out.String(), res.ExitStatus, want)
			}
			if on.Why != nil {
				t.Fatalf("phase 2 did not run: %v", on.Why)
			}
			t.Logf("%d profiling rounds\n%s", on.Rounds, accel.FormatReport(on.Report))
			if on.Rounds < c.rounds {
				t.Errorf("%d profiling rounds, want %d", on.Rounds, c.rounds)
			}
			// The product nest (the deepest) at its outer level: the rest
			// of its only instance on the GPU.
			product := ""
			depth := 0
			for _, h := range on.Profile.HotSpots {
				if h.Depth > depth {
					product, depth = h.Entry.String(), h.Depth
				}
			}
			rest := false
			for _, h := range on.Report.HotSpots {
				if h.Entry == product && h.Launches >= 1 && h.Iterations > c.outer/4 && h.Iterations < c.outer {
					rest = true
				}
			}
			if depth != 3 || !rest {
				t.Errorf("the rest of the product nest's only instance (%s, depth %d) was not offloaded", product, depth)
			}
		})
	}
}

// TestDataDependentReplays runs a time-stepped program with two sweeps:
// one whose load address depends on the data (a[i] > 0 picks a[i-1], else
// a[i+n]), one that does not. Both replay every step after the first; only
// the second runs its kernel unchecked (the first's kernel is not data
// independent). At step 3 the host makes an element negative: that step's
// gather reads outside its footprint, the checked kernel must fail, and
// the CPU runs the step, so that the output stays native's.
func TestDataDependentReplays(t *testing.T) {
	path := buildC(t, "datasteps")
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path, "500", "4"}, Engine: testEngine})
	for _, flip := range []string{"-1", "3"} {
		t.Run("flip "+flip, func(t *testing.T) {
			args := []string{"3000", "8", flip}
			want := runNative(t, path, args...)
			var out bytes.Buffer
			res, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: append([]string{path}, args...), Stdout: &out, Stderr: &out, Engine: testEngine},
				accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != want || res.ExitStatus != 0 {
				t.Fatalf("accelerated %q (status %d), native %q", out.String(), res.ExitStatus, want)
			}
			var gather, plain *accel.HotSpotReport
			for i := range rep.HotSpots {
				h := &rep.HotSpots[i]
				if h.Launches < 6 {
					continue // the initialisation and sum loops
				}
				if h.Unchecked > 0 {
					plain = h
				} else {
					gather = h
				}
			}
			t.Logf("%s", accel.FormatReport(rep))
			if gather == nil || plain == nil {
				t.Fatal("want one sweep replayed unchecked and one checked every step")
			}
			if plain.Unchecked < 5 || gather.Replays < 5 {
				t.Errorf("the plain sweep ran %d replays unchecked, the gather replayed %d times: want the steps after the second unchecked, every step replayed", plain.Unchecked, gather.Replays)
			}
			if fails := gather.FallbackReasons[accel.ReasonKernel]; (flip == "3") != (fails == 1) {
				t.Errorf("the gather's kernel failed %d times (%v), want once only when the data moves its reads out of their footprint", fails, gather.FallbackReasons)
			}
		})
	}
}
