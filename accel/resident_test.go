package accel_test

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// TestStencilResidency runs the time-stepped stencils of testdata/nests
// two-phase on gpusim (profiled at the default size, accelerated at a
// larger one, every launch forced) and checks that the arrays stay on the
// device between time steps: the output is native's, the kernels launch
// every step, and all the bytes copied in and brought back come to the
// arrays once each way plus, per launch, what the CPU's probed and tail
// iterations touch (a few rows or planes), far less than an array. Before
// the resident buffers merged, each step copied whole arrays through the
// host (jacobi2dt: 1.2 MB per launch at these sizes, the test's bound is
// 45 KB). The steps after the first launch their nests without probing
// them (a replay; jacobi1d's too, whose first threads take the reloaded
// registers passed in), all but the first replay of a nest without the
// kernel's footprint checks, and the CPU runs one iteration of each
// instance, the one that leaves the loop (two until the plain engine was
// timed; the test forces launches, so never).
func TestStencilResidency(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three nests programs")
	}
	dir := buildNests(t, []string{"O2-static"})
	progs, err := corpus.Programs(dir, "O2-static")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]corpus.Program{}
	for _, p := range progs {
		byName[p.Name] = p
	}
	for _, c := range []struct {
		name string
		args []string
		// array is the bytes of one array, arrays how many the program
		// has; minLaunches the kernels the time steps launch at least,
		// minReplays the instances of one nest launched without probing
		// (the same registers as the step before).
		// minUnchecked the replays of one nest that ran the kernel
		// without its footprint checks (all but the first replay: the
		// stencils' addresses and branches do not depend on the data).
		array, arrays                         uint64
		minLaunches, minReplays, minUnchecked int
	}{
		{"jacobi1d", []string{"60000", "10"}, 60000 * 8, 2, 2 * 10, 9, 8}, // reloads at the level itself
		{"jacobi2dt", []string{"300", "10"}, 300 * 300 * 8, 2, 2 * 10, 9, 8},
		{"heat3d", []string{"40", "10"}, 40 * 40 * 40 * 4, 2, 2 * 10, 9, 8}, // 2D kernels with reloads at the inner level
		{"fdtd2d", []string{"200", "220", "10"}, 200 * 220 * 8, 3, 4 * 10, 9, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, ok := byName[c.name]
			if !ok {
				t.Fatalf("%s not built", c.name)
			}
			rep := accelerateAt(t, p, c.args)
			var launches, replays, unchecked int
			var in uint64
			for _, h := range rep.HotSpots {
				launches += h.Launches
				in += h.BytesIn
				unchecked = max(unchecked, h.Unchecked)
				if h.Unchecked > max(h.Replays-1, 0) {
					t.Errorf("hot spot %s: %d unchecked launches in %d replays: the first replay of an input must run the checked kernel", h.Entry, h.Unchecked, h.Replays)
				}
				// (Every launch is an instance's: no sample launches
				// with AlwaysOffload. An instance replayed from a
				// progression follows two probed ones: fdtd2d's boundary
				// row, whose value fict[t] moves by the same bits now and
				// then.)
				if h.Replays > 0 && h.TailIterations > uint64(h.Launches) {
					t.Errorf("hot spot %s: the CPU ran %d iterations after the kernels of %d instances, want one each (the one that leaves the loop)", h.Entry, h.TailIterations, h.Launches)
				}
				replays = max(replays, h.Replays)
			}
			if replays < c.minReplays {
				t.Errorf("at most %d instances of a nest replayed, want %d", replays, c.minReplays)
			}
			if unchecked < c.minUnchecked {
				t.Errorf("at most %d replays of a nest ran unchecked, want %d", unchecked, c.minUnchecked)
			}
			if launches < c.minLaunches {
				t.Errorf("%d launches, want at least %d (the time steps ran on the CPU)", launches, c.minLaunches)
			}
			once := 2 * c.arrays * c.array
			perLaunch := (in + rep.BytesBroughtBack - min(once, in+rep.BytesBroughtBack)) / uint64(max(launches, 1))
			t.Logf("%d launches, %d bytes copied in, %d brought back: %d per launch beyond the arrays once each way", launches, in, rep.BytesBroughtBack, perLaunch)
			if perLaunch > c.array/16 {
				t.Errorf("%d bytes copied per launch beyond the arrays once each way, want at most %d (an array is %d): the steps copy arrays through the host", perLaunch, c.array/16, c.array)
			}
		})
	}
}

// accelerateAt profiles p at its default size, accelerates it on gpusim
// at args with every launch forced, checks its output against native's
// and returns the report.
func accelerateAt(t *testing.T, p corpus.Program, args []string) *accel.Report {
	t.Helper()
	return accelerateWith(t, p, args, accel.Options{})
}

// accelerateWith is accelerateAt with opts (its profile, driver and
// forced launches set here).
func accelerateWith(t *testing.T, p corpus.Program, args []string, opts accel.Options) *accel.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := func(args []string, out, errOut *bytes.Buffer) pipeline.Config {
		return pipeline.Config{Path: p.Path, Args: append([]string{p.Path}, args...), Env: p.Env, Stdout: out, Stderr: errOut, Engine: testEngine}
	}
	var out, errOut bytes.Buffer
	_, prof, err := pipeline.Profile(ctx, cfg(nil, &out, &errOut), profile.Options{})
	if err != nil {
		t.Fatalf("gxbit profile: %v", err)
	}
	p.Args = args
	native := corpus.RunNative(t, p)
	out.Reset()
	errOut.Reset()
	opts.Profile, opts.AlwaysOffload = prof, true
	if opts.Driver == nil {
		opts.Driver = gpusim.New(gpusim.Options{})
	}
	res, rep, err := pipeline.Accelerate(ctx, cfg(args, &out, &errOut), opts)
	if err != nil {
		t.Fatalf("gxbit accelerate: %v", err)
	}
	if err := corpus.Compare(native, resultOf(res, &out, &errOut)); err != nil {
		t.Fatalf("accelerated run differs from native: %v", err)
	}
	return rep
}

// TestLUPerK runs testdata/nests' lu two-phase on gpusim at a size other
// than the profile's: the update nest under k (grid (i, j)) must launch
// once per k, its pivot row A[k][j], the same bytes in every i, kept
// apart from the rows it writes (the re-strided footprints' check used to
// refuse the nest for that load), with native's output.
func TestLUPerK(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a nests program")
	}
	dir := buildNests(t, []string{"O2-static"})
	progs, err := corpus.Programs(dir, "O2-static")
	if err != nil {
		t.Fatal(err)
	}
	const n = 120
	for _, p := range progs {
		if p.Name != "lu" {
			continue
		}
		rep := accelerateAt(t, p, []string{strconv.Itoa(n)})
		most := 0
		for _, h := range rep.HotSpots {
			if h.Schedule == "grid(i,j)" {
				most = max(most, h.Launches)
			}
		}
		if most < n/2 {
			t.Errorf("the update nest launched %d times, want about one per k (%d)", most, n)
		}
		return
	}
	t.Fatal("lu not built")
}

// TestExitStateFromKernel runs time-stepped stencils of testdata/nests
// two-phase on gpusim (every launch forced), the kernels giving each
// instance's exit state, and again with the CPU running each instance's
// last arrival (Options.CPUTail): with the exit state no offloaded
// instance leaves an iteration to the CPU, and the rows or planes the
// tails touched no longer come back from the device each step, so
// fewer bytes come back. The output is native's both ways
// (accelerateWith).
func TestExitStateFromKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two nests programs twice")
	}
	dir := buildNests(t, []string{"O2-static"})
	progs, err := corpus.Programs(dir, "O2-static")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]corpus.Program{}
	for _, p := range progs {
		byName[p.Name] = p
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"jacobi2dt", []string{"200", "10"}},
		{"heat3d", []string{"30", "8"}}, // 3D kernels, and 2D ones with reloads at the inner level
	} {
		t.Run(c.name, func(t *testing.T) {
			p, ok := byName[c.name]
			if !ok {
				t.Fatalf("%s not built", c.name)
			}
			rep := accelerateWith(t, p, c.args, accel.Options{})
			tail := accelerateWith(t, p, c.args, accel.Options{CPUTail: true})
			exits := 0
			for _, h := range rep.HotSpots {
				if h.Launches == 0 {
					continue
				}
				exits += h.ExitStates
				if h.ExitNote == "" && h.TailIterations != 0 {
					t.Errorf("hot spot %s: the CPU ran %d tail iterations after %d launches (%d exit states), want none", h.Entry, h.TailIterations, h.Launches, h.ExitStates)
				}
				if h.ExitNote != "" {
					t.Logf("hot spot %s: %s", h.Entry, h.ExitNote)
				}
			}
			var tails uint64
			for _, h := range tail.HotSpots {
				tails += h.TailIterations
				if h.ExitStates != 0 {
					t.Errorf("hot spot %s: %d exit states with CPUTail", h.Entry, h.ExitStates)
				}
			}
			copies := func(r *accel.Report) uint64 {
				if r.BroughtBackParts == nil {
					return 0
				}
				return r.BroughtBackParts.DeviceToHostCopies
			}
			t.Logf("exit states %d, brought back %d bytes in %d copies; with CPU tails (%d iterations) %d bytes in %d copies", exits, rep.BytesBroughtBack, copies(rep), tails, tail.BytesBroughtBack, copies(tail))
			if exits == 0 {
				t.Fatal("no instance took its exit state from a kernel")
			}
			// A copy's fixed cost, not its bytes, is what bringing
			// back costs (tens of microseconds a call on an H100, the
			// bytes at 10 GB/s): the fault window brings back whole
			// aligned windows, more bytes than a tail's footprint, in
			// fewer copies.
			if copies(rep) >= copies(tail) {
				t.Errorf("brought back in %d copies with exit states, %d with CPU tails: want fewer", copies(rep), copies(tail))
			}
		})
	}
}
