package accel_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
)

// TestStatementsSplitOnDevice runs the nests corpus's bicg (q = A·p and s =
// Aᵀ·r in one j loop, gcc -O2) on gpusim: the initialisation nest makes A
// on the device, and the product nest, whose levels each carry something
// (i carries s, j q's sum), runs as the schedule's two statement kernels
// (grid i for q, grid j with i inside for s). Only the vectors may come
// back to the host (the checksum reads s and q), and the pages of A's rows
// that the iterations run on the CPU read (probed ones, the tail). Before the schedule split
// statements, the product ran on the CPU and brought all of A back.
func TestStatementsSplitOnDevice(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a C program")
	}
	path := gccStatic(t, filepath.Join("..", "testdata", "nests", "bicg.c"), filepath.Join(t.TempDir(), "bicg"), "-O2")
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path}, Engine: testEngine})
	checkSplitBicg(t, offloadedAsNative(t, path, []string{path, "300", "260"}, prof), 300, 260)
}

// TestStatementsSplitOnline is TestStatementsSplitOnDevice in one run
// (gxbit run --accelerate, profiling from the start): the round ends in
// the initialisation nest, and the product, entered once after it, runs
// as the two statement kernels.
func TestStatementsSplitOnline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a C program")
	}
	path := gccStatic(t, filepath.Join("..", "testdata", "nests", "bicg.c"), filepath.Join(t.TempDir(), "bicg"), "-O2")
	args := []string{path, "1000", "900"}
	want := runNative(t, path, args[1:]...)
	var out bytes.Buffer
	res, on, err := pipeline.RunOnline(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
		pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want || res.ExitStatus != 0 {
		t.Fatalf("online run %q (status %d), native %q", out.String(), res.ExitStatus, want)
	}
	if on.Why != nil {
		t.Fatalf("phase 2 did not run: %v\n%s", on.Why, accel.FormatReport(on.Report))
	}
	checkSplitBicg(t, on.Report, 1000, 900)
}

// checkSplitBicg holds the report of bicg n m to its product running as
// the statement kernels, and little coming back to the host.
func checkSplitBicg(t *testing.T, rep *accel.Report, n, m uint64) {
	t.Helper()
	product := false
	for _, h := range rep.HotSpots {
		t.Logf("%s %s: %d launches, %d fallbacks (%s); %s", h.Entry, h.Schedule, h.Launches, h.Fallbacks, h.LastFallback, h.ScheduleNote)
		if strings.Contains(h.Schedule, "[i<->j]") {
			product = true
			if h.Launches < 2 || !strings.HasPrefix(h.ScheduleNote, "phase 2 runs the schedule's kernels") {
				t.Errorf("the product nest %s launched %d kernels (%s)", h.Entry, h.Launches, h.ScheduleNote)
			}
		}
	}
	if !product {
		t.Errorf("no hot spot with the split schedule in the report")
	}
	vectors := uint64(8 * (n + m))
	if back := rep.BytesBroughtBack; back > 2*vectors+16*4096 {
		t.Errorf("%d bytes brought back to the host; the vectors are %d (A is %d)", back, vectors, 8*n*m)
	}
}

// failingDriver is gpusim whose launches of kernels whose names hold part
// fail with a driver error.
type failingDriver struct {
	gpu.Driver
	part string
}

func (d failingDriver) NewContext(i int) (gpu.Context, error) {
	c, err := d.Driver.NewContext(i)
	if err != nil {
		return nil, err
	}
	return failingContext{Context: c, part: d.part}, nil
}

type failingContext struct {
	gpu.Context
	part string
}

func (c failingContext) Launch(f gpu.Function, cfg gpu.LaunchConfig, params [][]byte) error {
	if strings.Contains(f.Name(), c.part) {
		return errors.New("injected launch failure")
	}
	return c.Context.Launch(f, cfg, params)
}

// TestStatementsLaterPartFails fails every launch of the second statement
// kernel of a bicg whose vectors accumulate onto values they hold
// (testdata/bicgacc.c: s[j] += r[i]·A[i][j] and q[i] += A[i][j]·p[j], no
// reset) after the first kernel ran: the CPU must then run that statement
// alone, over the level's blocks sliced to it, for every offloaded
// iteration — running the whole body would add q's terms twice — and the
// output stays native's.
func TestStatementsLaterPartFails(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a C program")
	}
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			path := buildC(t, "bicgacc")
			if opt != "-O2" {
				path = gccStatic(t, filepath.Join("testdata", "bicgacc.c"), filepath.Join(t.TempDir(), "bicgacc"), opt)
			}
			prof := phase1(t, pipeline.Config{Path: path, Args: []string{path}, Engine: testEngine})
			args := []string{path, "300", "260"}
			want := runNative(t, path, args[1:]...)
			var out bytes.Buffer
			_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
				accel.Options{Profile: prof, Driver: failingDriver{gpusim.New(gpusim.Options{}), "_s2"}, AlwaysOffload: true})
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != want {
				t.Fatalf("accelerated %q, native %q", out.String(), want)
			}
			ran := false
			for _, h := range rep.HotSpots {
				if strings.Contains(h.Schedule, "<->") {
					t.Logf("%s: %d launches, %d fallbacks: %s", h.Entry, h.Launches, h.Fallbacks, h.LastFallback)
					ran = h.Launches > 0 && strings.Contains(h.LastFallback, "the CPU ran it and the later kernels")
				}
			}
			if !ran {
				t.Errorf("the product's first statement kernel did not launch, or the CPU did not take over the second")
			}
		})
	}
}
