package accel_test

import (
	"path/filepath"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/pipeline"
)

// busiest is the hot spot of rep with the most launches, or, with
// byWork, the one whose launches ran the most thread instructions.
func busiest(t *testing.T, rep *accel.Report, byWork bool) *accel.HotSpotReport {
	t.Helper()
	var best *accel.HotSpotReport
	for i := range rep.HotSpots {
		h := &rep.HotSpots[i]
		if best == nil || !byWork && h.Launches > best.Launches || byWork && h.ThreadInstructions > best.ThreadInstructions {
			best = h
		}
	}
	if best == nil || best.Launches == 0 {
		t.Fatalf("nothing launched:\n%s", accel.FormatReport(rep))
	}
	return best
}

// TestExtrapolatedReplays runs LU (a trailing update whose rows start a
// row and an element further, and shorten by one, at every step of the
// sequential k loop) and cholesky (a triangle whose column moves by one,
// rows lengthening inside each thread) on gpusim: after two probed
// steps, the steps that continue the progression launch without probing
// (fewer probed iterations than launches, where probing every one probes
// two), and the output is native's.
func TestExtrapolatedReplays(t *testing.T) {
	for _, prog := range []string{"lu", "cholesky"} {
		t.Run(prog, func(t *testing.T) {
			path := gccStatic(t, filepath.Join("..", "testdata", "nests", prog+".c"), filepath.Join(t.TempDir(), prog), "-O2")
			args := []string{path, "64"}
			prof := phase1(t, pipeline.Config{Path: path, Args: args, Engine: testEngine})
			rep := offloadedAsNative(t, path, args, prof)
			h := busiest(t, rep, true) // LU's trailing update, not its inner loop's instances on the CPU
			t.Logf("%s", accel.FormatReport(rep))
			if h.Extrapolated < h.Launches/2 || h.Extrapolated > h.Replays {
				t.Errorf("hot spot %s: %d of %d launches extrapolated (%d replays), want at least half", h.Entry, h.Extrapolated, h.Launches, h.Replays)
			}
			if h.ProbedIterations >= h.Launches {
				t.Errorf("hot spot %s: %d iterations probed for %d launches, want fewer than one a launch", h.Entry, h.ProbedIterations, h.Launches)
			}
		})
	}
}

// TestExtrapolationBreaks runs progress.c, whose sequential outer loop's
// instances move by constant amounts, with its progression broken at
// step 12: a live-in that jumps (the rows start one element further from
// there on), and a trip count that falls by 3 there where every live-in
// follows (the bound is read from memory). The first is seen at the
// header and probed; the second launches as extrapolated, its kernel
// finds a thread leaving the loop and fails, and the CPU runs the step.
// Either way the progression is probed anew (two steps) and extrapolated
// again, and the output is native's.
func TestExtrapolationBreaks(t *testing.T) {
	path := buildC(t, "progress")
	const steps = 30
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path, "200", "30", "-1", "-1"}, Engine: testEngine})
	var whole *accel.HotSpotReport
	for _, c := range []struct{ name, jump, short string }{{"whole", "-1", "-1"}, {"jump", "12", "-1"}, {"short", "-1", "12"}} {
		t.Run(c.name, func(t *testing.T) {
			rep := offloadedAsNative(t, path, []string{path, "200", "30", c.jump, c.short}, prof)
			h := busiest(t, rep, false)
			t.Logf("%s", accel.FormatReport(rep))
			failed := h.FallbackReasons[accel.ReasonKernel]
			if c.name == "whole" {
				whole = h
				if h.Extrapolated < steps-3 || failed != 0 {
					t.Errorf("%d of %d steps extrapolated, %d failed launches: want all but the two probed", h.Extrapolated, steps, failed)
				}
				return
			}
			if whole == nil {
				t.Skip("the unbroken run failed")
			}
			if h.ProbedIterations <= whole.ProbedIterations || h.Extrapolated >= whole.Extrapolated || h.Extrapolated < steps-8 {
				t.Errorf("%d iterations probed, %d steps extrapolated; unbroken %d and %d: want the break probed anew, the rest extrapolated", h.ProbedIterations, h.Extrapolated, whole.ProbedIterations, whole.Extrapolated)
			}
			if want := map[string]int{"jump": 0, "short": 1}[c.name]; failed != want {
				t.Errorf("%d launches failed (%v), want %d", failed, h.FallbackReasons, want)
			}
		})
	}
}

// TestDryLaunches runs LU on gpusim with every backup replaced by a dry
// launch (Options.DryRunAbove 1; on the simulator the default never
// does): its kernels are data independent, so each launch over pages only
// the device holds first runs the kernel without its stores, then the
// unchecked kernel, and nothing is copied on the device to back up what
// the launches overwrite (against the run with backups, only the buffers'
// merges). The output is native's. (ptxgen's TestDryLaunch fails a dry
// launch.)
func TestDryLaunches(t *testing.T) {
	lu := gccStatic(t, filepath.Join("..", "testdata", "nests", "lu.c"), filepath.Join(t.TempDir(), "lu"), "-O2")
	args := []string{lu, "64"}
	prof := phase1(t, pipeline.Config{Path: lu, Args: args, Engine: testEngine})
	backed := busiest(t, offloadedAsNative(t, lu, args, prof), true)
	h := busiest(t, offloadedAsNativeWith(t, lu, args, accel.Options{Profile: prof, DryRunAbove: 1}), true)
	if backed.DryLaunches != 0 || h.DryLaunches < h.Launches/2 || h.Unchecked < h.DryLaunches {
		t.Errorf("hot spot %s: %d dry launches, %d unchecked, of %d (%d dry by default on gpusim): want most launches proven dry", h.Entry, h.DryLaunches, h.Unchecked, h.Launches, backed.DryLaunches)
	}
	if h.CopyParts == nil || backed.CopyParts == nil || h.CopyParts.DeviceToDeviceBytes*10 > backed.CopyParts.DeviceToDeviceBytes {
		t.Errorf("hot spot %s: copies on the device %+v, with backups %+v: want a tenth at most", h.Entry, h.CopyParts, backed.CopyParts)
	}
}

// TestEntryCut runs LU and cholesky on gpusim: their hot spots are
// entered by falling into the header from the code before the loop, so
// the main engine stopped there only at the second arrival, and every
// step's first iteration ran on the CPU, over rows only the device held
// (a fault and a copy back each: 1,373 faults in 1,061 steps of LU at
// 1078). With the header cut from outside the level too once two
// instances were replayed (Options.EntryCutAfter), the busiest hot spot
// reports the cut, LU's run brings pages back on a third as many faults
// as without the cut or fewer (the last steps, which the CPU runs, and
// the checksum), and both outputs are native's. (Cholesky's host reads
// the row of each step's diagonal for the sum it keeps on the CPU: a
// fault a step that is the program's own.)
func TestEntryCut(t *testing.T) {
	for _, prog := range []string{"lu", "cholesky"} {
		t.Run(prog, func(t *testing.T) {
			path := gccStatic(t, filepath.Join("..", "testdata", "nests", prog+".c"), filepath.Join(t.TempDir(), prog), "-O2")
			args := []string{path, "64"}
			prof := phase1(t, pipeline.Config{Path: path, Args: args, Engine: testEngine})
			uncut := offloadedAsNativeWith(t, path, args, accel.Options{Profile: prof, EntryCutAfter: -1})
			rep := offloadedAsNativeWith(t, path, args, accel.Options{Profile: prof, EntryCutAfter: 2})
			h := busiest(t, rep, true)
			t.Logf("%s", accel.FormatReport(rep))
			if !h.EntryCut || h.EntryUncut || busiest(t, uncut, true).EntryCut {
				t.Errorf("hot spot %s: entry cut %v, undone %v; want it cut (and not when never asked)", h.Entry, h.EntryCut, h.EntryUncut)
			}
			if prog == "lu" && rep.BroughtBackFaults*3 > uncut.BroughtBackFaults {
				t.Errorf("%d faults brought pages back, %d without the cut: want the steps' first iterations on the device", rep.BroughtBackFaults, uncut.BroughtBackFaults)
			}
		})
	}
}
