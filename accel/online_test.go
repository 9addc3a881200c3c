package accel_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// TestRunOnlineStopsBySamples runs matmul once with both phases and no
// bound on the profiling round: only what the collector has seen can end
// it (every nest entered has run enough outer iterations, or has spent its
// probes). The round must end within the product nest's only instance,
// after a small part of the run, and the rest of that instance must run
// on the GPU, with the native output.
func TestRunOnlineStopsBySamples(t *testing.T) {
	dir := buildLoops(t, "matmul", "O2-static")
	path := filepath.Join(dir, "O2-static", "matmul")
	args := []string{path, "200"}
	want := runNative(t, path, args[1:]...)
	on := runOnlineNative(t, path, args, want, pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{}), ProfileInsns: 1 << 50, AlwaysOffload: true})
	if on.Why != nil {
		t.Fatalf("phase 2 did not run: %v", on.Why)
	}
	t.Logf("%d rounds, %d guest instructions profiled of %d\n%s", on.Rounds, on.ProfiledInstructions, on.Report.GuestInstructions, accel.FormatReport(on.Report))
	if on.Rounds < 1 || on.LimitedRounds != 0 {
		t.Errorf("%d profiling rounds, %d ended by the instruction bound: want at least one, each ended by what it saw", on.Rounds, on.LimitedRounds)
	}
	// The product nest is 200³ multiply-adds; the round needs a few of its
	// 200 outer iterations.
	plain, err := pipeline.Run(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: io.Discard, Stderr: io.Discard, Engine: testEngine})
	if err != nil {
		t.Fatal(err)
	}
	if all := plain.Stats.GuestInstructions; on.ProfiledInstructions == 0 || on.ProfiledInstructions > all/4 {
		t.Errorf("%d guest instructions ran under the collector, of %d in a plain run: the round did not end by what it saw", on.ProfiledInstructions, all)
	}
	launches := 0
	for _, h := range on.Report.HotSpots {
		launches += h.Launches
	}
	if launches == 0 {
		t.Errorf("nothing launched after the profiling round")
	}
}

// TestRunOnlineOuterLevelOfLongRows runs gemm, whose product nest is
// entered once, with a probe budget per nest smaller than one iteration
// of its outer loop takes, as at the sizes where the single run matters
// (an outer iteration there is millions of probes). The collector must
// still see several outer iterations, pausing the probes of the
// iterations it does not record, so that the outer level is found
// parallel, and the rest of the instance must launch as the schedule's
// few kernels (not once per inner loop), with the native output: with
// profiling from the start, and with the first round begun after the
// first slice of a plain run (as gxbit run --accelerate's does at large
// sizes: the collector takes over inside main, past its entry).
func TestRunOnlineOuterLevelOfLongRows(t *testing.T) {
	dir := buildNests(t, []string{"O2-static"})
	path := filepath.Join(dir, "O2-static", "gemm")
	args := []string{path, "240", "100", "150"}
	want := runNative(t, path, args[1:]...)
	for _, after := range []time.Duration{0, time.Nanosecond} {
		t.Run(fmt.Sprintf("after=%v", after), func(t *testing.T) {
			on := runOnlineNative(t, path, args, want, pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{}), ProfileInsns: 1 << 50, AlwaysOffload: true, ProfileAfter: after,
				// An outer iteration: 150 × 100 multiply-adds, some
				// 120,000 probes. Short slices let the pause work on
				// k's iterations of 100, as it does at large sizes on
				// iterations of thousands.
				Collect: profile.CollectOptions{MaxProbesPerNest: 100_000, SliceInsns: 1024}})
			if on.Why != nil {
				t.Fatalf("phase 2 did not run: %v", on.Why)
			}
			t.Logf("%d rounds, %d guest instructions profiled\n%s", on.Rounds, on.ProfiledInstructions, accel.FormatReport(on.Report))
			outer, launches := false, 0
			for _, h := range on.Report.HotSpots {
				launches += h.Launches
				if h.Launches > 0 && strings.HasPrefix(h.Schedule, "grid(i,") && strings.Contains(h.Schedule, "thread(") {
					outer = true
				}
			}
			if !outer {
				t.Errorf("no hot spot launched as a grid over the outer level with a loop inside the thread")
			}
			// The beta kernel and the product kernel once per instance,
			// after the rest of the row the profiling round ended in (a
			// launch per k there, as AlwaysOffload asks) and the
			// initialisation nests; one launch per (i, k) would be tens
			// of thousands.
			if launches == 0 || launches > 2*150 {
				t.Errorf("%d launches: want the product nest's instance offloaded as a few kernels", launches)
			}
		})
	}
}

// TestRunOnlineShortProgram checks that a run shorter than ProfileAfter
// is not profiled at all (the contract with plain gxbit run: a short
// program pays nothing for phase 1, nor for the device), with the native
// output and the reason.
func TestRunOnlineShortProgram(t *testing.T) {
	dir := buildLoops(t, "matmul", "O2-static")
	path := filepath.Join(dir, "O2-static", "matmul")
	args := []string{path, "120"}
	want := runNative(t, path, args[1:]...)
	on := runOnlineNative(t, path, args, want, pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{}), ProfileAfter: time.Hour})
	if on.Rounds != 0 || on.ProfiledInstructions != 0 || !errors.Is(on.Why, pipeline.ErrNoPhase2) || !strings.Contains(on.Why.Error(), "before profiling began") {
		t.Errorf("%d rounds, %d instructions profiled, why %v: want none, before profiling began", on.Rounds, on.ProfiledInstructions, on.Why)
	}
}

// TestAccelerateArmAfter runs gxbit accelerate's flow with the hot spots
// armed after some CPU time (accel.Options.ArmAfter): a run shorter than
// that probes and launches nothing; armed by the first slice, the product
// nest is offloaded; the native output either way. (Arming inside the
// nest's only instance is TestRunOnlineSingleInstance's case: the
// accelerator armed by a profiling round's Update.)
func TestAccelerateArmAfter(t *testing.T) {
	dir := buildLoops(t, "matmul", "O2-static")
	path := filepath.Join(dir, "O2-static", "matmul")
	_, prof, err := pipeline.Profile(context.Background(), pipeline.Config{Path: path, Args: []string{path, "48"}, Stdout: io.Discard, Stderr: io.Discard, Engine: testEngine}, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	args := []string{path, "256"}
	want := runNative(t, path, args[1:]...)
	for _, c := range []struct {
		after  time.Duration
		launch bool
	}{{time.Hour, false}, {time.Nanosecond, true}} {
		var out bytes.Buffer
		res, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
			accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true, ArmAfter: c.after})
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != want || res.ExitStatus != 0 {
			t.Errorf("armed after %v: output %q (status %d), native %q", c.after, out.String(), res.ExitStatus, want)
		}
		launches, probed := 0, 0
		var iters uint64
		for _, h := range rep.HotSpots {
			launches += h.Launches
			probed += h.ProbedIterations
			if h.Launches > 0 {
				iters = max(iters, h.Iterations)
			}
		}
		switch {
		case !c.launch && (launches != 0 || probed != 0):
			t.Errorf("armed after %v: %d launches, %d probed iterations: want none\n%s", c.after, launches, probed, accel.FormatReport(rep))
		case c.launch && (launches == 0 || iters < 256/4):
			t.Errorf("armed after %v: %d launches, at most %d iterations on the GPU: want the rest of the product nest's instance\n%s", c.after, launches, iters, accel.FormatReport(rep))
		}
	}
}

// TestRunOnlineSweepsAfterTheBudget profiles jacobi2dt, whose time loop
// holds two sweeps, with a probe budget the first sweep spends on its
// own: the collector thins its sampling to the end of that time step
// instead of stopping, so the second sweep is sampled too, and the round
// (begun after the first slice, inside main) finds every parallel hot
// spot of the nest that a run with the default budget finds.
func TestRunOnlineSweepsAfterTheBudget(t *testing.T) {
	dir := buildNests(t, []string{"O2-static"})
	path := filepath.Join(dir, "O2-static", "jacobi2dt")
	args := []string{path, "200", "30"}
	want := runNative(t, path, args[1:]...)
	hot := func(collect profile.CollectOptions) map[string]bool {
		on := runOnlineNative(t, path, args, want, pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{}), Collect: collect, ProfileAfter: time.Nanosecond})
		if on.Profile == nil {
			t.Fatalf("no profile: %v", on.Why)
		}
		m := map[string]bool{}
		for _, h := range on.Profile.HotSpots {
			if h.Function == "main" && h.Verdict == profile.VerdictParallel {
				m[h.Entry.String()] = true
			}
		}
		return m
	}
	full := hot(profile.CollectOptions{})
	small := hot(profile.CollectOptions{MaxProbesPerNest: 30_000})
	if len(full) < 4 || fmt.Sprint(small) != fmt.Sprint(full) {
		t.Errorf("parallel hot spots in main with a small probe budget %v, with the default one %v: want the same, both sweeps", small, full)
	}
}

// TestRunOnlineOneOuterIteration runs heat3d under the single run with a
// probe budget that the first sweep of its first time step spends: the
// collector thins out to the end of that time step, so the profile sees
// one iteration of the time loop, and the second sweep only with the
// first step's data (linear in k, so that gcc's register-carried A[k+1]
// steps like an induction variable). The time loop's hot spot must not
// fit an access of the sweeps with a coefficient the samples never
// showed (a level seen at one value has none), no register that holds
// loaded data may be an induction variable, and the run, launching
// wherever the guards pass, must print the native output.
func TestRunOnlineOneOuterIteration(t *testing.T) {
	dir := buildNests(t, []string{"O2-static"})
	path := filepath.Join(dir, "O2-static", "heat3d")
	args := []string{path, "40", "6"}
	want := runNative(t, path, args[1:]...)
	on := runOnlineNative(t, path, args, want, pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{}), Collect: profile.CollectOptions{MaxProbesPerNest: 100_000},
		ProfileAfter: time.Nanosecond, AlwaysOffload: true})
	if on.Profile == nil || on.Report == nil {
		t.Fatalf("no profile or no phase 2: %v", on.Why)
	}
	launches := 0
	for _, h := range on.Report.HotSpots {
		launches += h.Launches
	}
	if launches == 0 {
		t.Errorf("nothing launched:\n%s", accel.FormatReport(on.Report))
	}
	sweeps := 0
	for _, h := range on.Profile.HotSpots {
		if h.Function != "main" {
			continue
		}
		for _, lv := range h.Levels {
			for _, iv := range lv.IVs {
				if strings.HasPrefix(iv.Loc.Reg, "x") {
					t.Errorf("hot spot %s, level %s: %s is an induction variable (it holds loaded data)", h.Entry, lv.Index, iv.Loc)
				}
			}
		}
		if h.Depth == 3 && h.Verdict == profile.VerdictParallel {
			sweeps++
		}
		// Every array access of the sweeps moves along each of its loops
		// (102400-byte planes, rows, elements): a fitted 0 there is a
		// level the samples never showed moving.
		for _, a := range h.Accesses {
			if !a.Affine || a.Stack {
				continue
			}
			for _, in := range a.Inner {
				if in.Coeff == 0 {
					t.Errorf("hot spot %s: access at %s fitted as %s, with no step along %s", h.Entry, a.X86, a.Function, in.Index)
				}
			}
		}
	}
	if sweeps != 2 {
		var sb strings.Builder
		for _, l := range on.Profile.Loops {
			if l.Function == "main" {
				fmt.Fprintf(&sb, "  %s depth %d %s: %s\n", l.Entry, l.Depth, l.Verdict, l.Reason)
			}
		}
		t.Errorf("%d parallel 3-level sweeps in the profile, want both of the time step's; the loops of main:\n%s", sweeps, sb.String())
	}
}

// TestRunOnlineEntersTriangleMidInstance runs nussinov, whose DP nest is
// a triangle whose j rows grow by one each outer iteration, with the first
// profiling round begun after the first slice, inside the nest: the nest
// begins its entry at its next outer header, once its probes are back,
// and the round must end by what it saw. (The j loop used to pause to
// its end at every outer iteration, so the probes were never back in
// time, and the round ran to its instruction bound: the whole run.)
func TestRunOnlineEntersTriangleMidInstance(t *testing.T) {
	dir := buildNests(t, []string{"O2-static"})
	path := filepath.Join(dir, "O2-static", "nussinov")
	args := []string{path, "500"}
	want := runNative(t, path, args[1:]...)
	on := runOnlineNative(t, path, args, want, pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{}), ProfileAfter: time.Nanosecond, ProfileInsns: 60_000_000})
	if on.Rounds == 0 || on.LimitedRounds != 0 {
		t.Errorf("%d profiling rounds, %d of them ended by the bound of 60 M guest instructions (%d profiled): want each ended by what the collector saw",
			on.Rounds, on.LimitedRounds, on.ProfiledInstructions)
	}
}

// TestRunOnlineSingleLongInstance runs longsteps (an n-body time step:
// an i-j force nest, then an update loop) with one step, so that the
// force nest has a single instance, and the profiling round begins inside
// it (after the first slice of the plain run), as gxbit run --accelerate
// does on n-body at its sizes. The round must end by what it saw once
// the i loop has run a few iterations (its outermost loop, the step loop,
// has run one, and will run no other), and the rest of that same instance
// must be offloaded, with the native output. (The round used to wait for
// nine step iterations: it profiled the whole run and launched nothing.)
func TestRunOnlineSingleLongInstance(t *testing.T) {
	path := gccStatic(t, filepath.Join("testdata", "longsteps.c"), filepath.Join(t.TempDir(), "longsteps"), "-O2")
	args := []string{path, "800", "1"}
	want := runNative(t, path, args[1:]...)
	on := runOnlineNative(t, path, args, want, pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{}), ProfileAfter: time.Nanosecond, AlwaysOffload: true,
		Collect: profile.CollectOptions{LongOuterIteration: 2_000_000}})
	if on.Report == nil || on.Rounds == 0 || on.LimitedRounds != 0 {
		t.Fatalf("%d rounds, %d ended by the instruction bound, why %v: want rounds ended by what they saw", on.Rounds, on.LimitedRounds, on.Why)
	}
	var iters uint64
	for _, h := range on.Report.HotSpots {
		iters += h.Iterations
	}
	t.Logf("%d guest instructions profiled of %d\n%s", on.ProfiledInstructions, on.Report.GuestInstructions, accel.FormatReport(on.Report))
	if iters < 800/2 {
		t.Errorf("%d iterations ran on the GPU: want most of the force nest's 800 (the rest of its only instance)", iters)
	}
}

// TestRunOnlineLongTimeSteps runs heat3d under the single run with time
// steps counted long (CollectOptions.LongOuterIteration), as its steps
// are at its large size: a round begun inside a sweep ends once that
// sweep has run a few planes from where the collector took over, without
// waiting for nine steps, and the other sweep, which no round sampled,
// starts a round of its own. Each sweep must be launched at its outermost
// level (seen from the middle of an instance, or without its first
// planes, a sweep's plane loop was once taken for sequential and the
// sweep launched once per plane), with the native output, and the rounds
// must take a small part of the run. The run is 12 steps long: a later
// round begins only while profiling has taken at most a quarter of the
// guest's CPU time, and in 6 steps the rounds over the first sweep had
// taken more than that when the second sweep began.
func TestRunOnlineLongTimeSteps(t *testing.T) {
	runLongTimeSteps(t, pipeline.OnlineOptions{ProfileAfter: time.Nanosecond}, 12)
}

// TestRunOnlineLongTimeStepsAnyStart is TestRunOnlineLongTimeSteps with
// the first round begun at fixed points of heat3d's run (guest
// instructions: a time step is about 24 M at 80, each sweep half of it),
// so that where the round begins does not depend on the machine's speed.
// A round begun at 10 M (late in the first step's first sweep: the plane
// loop's last rows paused with no end to resume before, and the next
// plane, the first the round could record, ran unrecorded) or at 16 M
// (seven planes before the first sweep's end: too few, and the next
// step's header ended the provisional entry) profiled the rest of the run
// and offloaded nothing; TestRunOnlineLongTimeSteps failed so about one
// run in four.
func TestRunOnlineLongTimeStepsAnyStart(t *testing.T) {
	for _, at := range []uint64{4_000_000, 7_000_000, 10_000_000, 13_000_000, 16_000_000, 16_800_000, 19_000_000, 22_000_000, 28_000_000} {
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			runLongTimeSteps(t, pipeline.OnlineOptions{ProfileAfterInsns: at}, 6)
		})
	}
}

// runLongTimeSteps runs heat3d at 80, steps time steps, under the single
// run with opts (the driver, offload and collector options are set here)
// and checks what TestRunOnlineLongTimeSteps says.
func runLongTimeSteps(t *testing.T, opts pipeline.OnlineOptions, steps int) {
	dir := buildNests(t, []string{"O2-static"})
	path := filepath.Join(dir, "O2-static", "heat3d")
	args := []string{path, "80", fmt.Sprint(steps)}
	want := runNative(t, path, args[1:]...)
	var out bytes.Buffer
	opts.Driver, opts.AlwaysOffload = gpusim.New(gpusim.Options{}), true
	opts.Collect = profile.CollectOptions{LongOuterIteration: 2_000_000}
	res, on, err := pipeline.RunOnline(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want || res.ExitStatus != 0 {
		t.Errorf("online run %q (status %d), native %q", out.String(), res.ExitStatus, want)
	}
	if on.Report == nil {
		t.Fatalf("no phase 2: %v", on.Why)
	}
	t.Logf("%d rounds (%+v), %d guest instructions profiled of %d\n%s", on.Rounds, on.RoundSpans, on.ProfiledInstructions, on.Report.GuestInstructions, accel.FormatReport(on.Report))
	// Each sweep's outermost level is the grid's (a sweep mapped at its
	// second level was seen in part only, and launches once per plane).
	sweeps := 0
	for _, h := range on.Report.HotSpots {
		if (h.Entry == h.Header) && h.Launches > 0 && (h.Entry == "0x401700" || h.Entry == "0x401820") {
			sweeps++
		}
	}
	if sweeps != 2 {
		t.Errorf("%d sweeps launched at their outermost level: want both sweeps of the time step\n%s", sweeps, accel.FormatReport(on.Report))
	}
	if on.ProfiledInstructions > on.Report.GuestInstructions/4 {
		t.Errorf("%d of %d guest instructions ran under the collector: the rounds did not end within a time step", on.ProfiledInstructions, on.Report.GuestInstructions)
	}
}

// TestRunOnlineStackSlotsAnyStart runs syrk, whose nest's outer loop
// keeps a value in a stack slot (at -O2 the bound n, spilled around the
// inner loops that need its register; at -O0 every loop's counter), under
// the single run with the first round begun at fixed points inside the
// nest's only instance (guest instructions, so that where it begins does
// not depend on the machine's speed). The i level must be parallel, as a
// whole run's profile finds it, with every stack-slot induction variable
// that profile finds at that level, and the rest of the instance must
// launch at that level, with the native output. A round begun inside an
// outer iteration records that iteration from its middle, where the
// slot's first access is a read (its write ran before the round): the
// slot was taken for one the loop carries, and the i loop for sequential,
// at every start point. At -O0 the i loop's header is its condition
// block, which the latch falls into: it stopped the engine only when
// jumped to, at the instance's start, and the rest of the instance ran on
// the CPU.
func TestRunOnlineStackSlotsAnyStart(t *testing.T) {
	dir := buildNests(t, []string{"O2-static", "O0-static"})
	for _, c := range []struct {
		mode string
		at   []uint64 // the kernel nest runs from about 0.3 M to 6.2 M (-O2), 1.5 M to 24 M (-O0)
	}{
		{"O2-static", []uint64{500_000, 1_500_000, 3_000_000}},
		{"O0-static", []uint64{3_000_000, 8_000_000, 14_000_000}},
	} {
		path := filepath.Join(dir, c.mode, "syrk")
		args := []string{path, "120", "100"}
		want := runNative(t, path, args[1:]...)
		_, whole, err := pipeline.Profile(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: io.Discard, Stderr: io.Discard, Engine: testEngine}, profile.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ref := outerNest(whole)
		if ref == nil || ref.Levels[0].Verdict != profile.VerdictParallel {
			t.Fatalf("%s: the whole run's profile has no parallel outer nest in main:\n%s", c.mode, profileText(whole))
		}
		for _, at := range c.at {
			t.Run(fmt.Sprintf("%s/%d", c.mode, at), func(t *testing.T) {
				on := runOnlineNative(t, path, args, want, pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true, ProfileAfterInsns: at})
				if on.Profile == nil || on.Report == nil || len(on.RoundSpans) == 0 {
					t.Fatalf("no profile or no phase 2: %v", on.Why)
				}
				var hs *profile.HotSpot
				for i := range on.Profile.HotSpots {
					if h := &on.Profile.HotSpots[i]; h.Entry == ref.Entry && h.Depth >= 1 {
						hs = h
					}
				}
				if hs == nil {
					t.Fatalf("no hot spot at %s in the online profile:\n%s", ref.Entry, profileText(on.Profile))
				}
				if began := on.RoundSpans[0].BeganPC; !slices.Contains(ref.Levels[0].Blocks, profile.Hex(began)) {
					t.Fatalf("the round began at %#x, not at a block of the nest", began)
				}
				lev := hs.Levels[0]
				if lev.Verdict != profile.VerdictParallel {
					t.Errorf("level %s of %s: %s (%s), want parallel as the whole run's profile says", lev.Index, hs.Entry, lev.Verdict, lev.Reason)
				}
				for _, iv := range ref.Levels[0].IVs {
					if iv.Loc.Base == "" {
						continue
					}
					if !slices.ContainsFunc(lev.IVs, func(o profile.IV) bool { return o.Loc == iv.Loc && o.Step == iv.Step }) {
						t.Errorf("stack slot %s, an induction variable of step %d in the whole run's profile, is not one in the online profile: %+v", iv.Loc, iv.Step, lev.IVs)
					}
				}
				launches := 0
				for _, h := range on.Report.HotSpots {
					if h.Entry == ref.Entry.String() {
						launches += h.Launches
					}
				}
				if launches == 0 {
					t.Errorf("the outer level at %s did not launch\n%s", ref.Entry, accel.FormatReport(on.Report))
				}
			})
		}
	}
}

// TestRunOnlineLaterRoundKeepsCutEntries runs doitgen (an r-q-p nest
// with the s sum inside, then the checksum loop over its 1.6 M results)
// under the single run, its first round begun inside a q loop entry and
// ended inside the same one (outer iterations counted long past 1 M
// instructions), so that the checksum loop begins a second round. The
// profile after the second round, which phase 2 takes hot spots from,
// must still give the q level the trip count the first round saw and
// find it parallel: the q loop's only entry, begun before the first
// round and cut short by its end, was forgotten when the second began,
// and the q-p-s nest became "sequential: trip count of level i not
// observed".
func TestRunOnlineLaterRoundKeepsCutEntries(t *testing.T) {
	dir := buildNests(t, []string{"O2-static"})
	path := filepath.Join(dir, "O2-static", "doitgen")
	args := []string{path, "48", "4096", "8"}
	want := runNative(t, path, args[1:]...)
	on := runOnlineNative(t, path, args, want, pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true, ProfileAfterInsns: 20_000_000,
		Collect: profile.CollectOptions{LongOuterIteration: 1_000_000}})
	if on.Profile == nil || on.Rounds < 2 {
		t.Fatalf("%d rounds (%+v), want a second one in the checksum loop: %v", on.Rounds, on.RoundSpans, on.Why)
	}
	var q *profile.HotSpot
	for i := range on.Profile.HotSpots {
		if h := &on.Profile.HotSpots[i]; h.Function == "main" && len(h.Levels) == 3 {
			q = h
		}
	}
	if q == nil {
		t.Fatalf("no three-level hot spot (q, p, s) in the last profile:\n%s", profileText(on.Profile))
	}
	if lev := q.Levels[0]; lev.TripCount == "" || lev.Verdict != profile.VerdictParallel {
		t.Errorf("level %s at %s after %d rounds: trips %q, %s (%s); want the first round's trip count and parallel", lev.Index, lev.Header, on.Rounds, lev.TripCount, lev.Verdict, lev.Reason)
	}
}

// outerNest returns the hot spot of f rooted at main's outermost loop
// with the most loops inside it (syrk's kernel nest), or nil.
func outerNest(f *profile.File) *profile.HotSpot {
	var best *profile.HotSpot
	for i := range f.HotSpots {
		h := &f.HotSpots[i]
		if h.Function != "main" || len(h.Levels) == 0 {
			continue
		}
		if best == nil || h.Depth+len(h.InnerLoops) > best.Depth+len(best.InnerLoops) {
			best = h
		}
	}
	return best
}

// profileText prints f as gxbit profile --print does.
func profileText(f *profile.File) string {
	var sb strings.Builder
	_ = profile.WriteText(&sb, f)
	return sb.String()
}

// TestRunOnlineSequentialNests runs the corpus programs whose hot nest is
// sequential (Gauss-Seidel, the DP triangle, Floyd-Warshall, a prefix
// sum, a histogram) under the single run, the first round begun after
// the first slice: nothing the profile
// does not call parallel may be launched, each round must end by what
// the collector saw, and the rounds together must take a small part of
// the run (a sequential program pays for profiling and gains nothing),
// with the native output.
func TestRunOnlineSequentialNests(t *testing.T) {
	dir := buildNests(t, []string{"O2-static"})
	for _, c := range [][]string{{"seidel2d", "200", "40"}, {"nussinov", "250"}, {"floyd", "150"}, {"scan", "2000000"}, {"hist", "2000000", "256"}} {
		path := filepath.Join(dir, "O2-static", c[0])
		args := append([]string{path}, c[1:]...)
		want := runNative(t, path, args[1:]...)
		var out bytes.Buffer
		res, on, err := pipeline.RunOnline(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
			pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{}), ProfileAfter: time.Nanosecond})
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != want || res.ExitStatus != 0 {
			t.Errorf("%s: online run %q (status %d), native %q", c[0], out.String(), res.ExitStatus, want)
		}
		if on.Profile == nil || on.Report == nil {
			t.Errorf("%s: no profile or no phase 2: %v", c[0], on.Why)
			continue
		}
		t.Logf("%s: %d rounds, %d guest instructions profiled of %d", c[0], on.Rounds, on.ProfiledInstructions, on.Report.GuestInstructions)
		if on.LimitedRounds != 0 || on.ProfiledInstructions > on.Report.GuestInstructions/2 {
			t.Errorf("%s: %d rounds, %d ended by the instruction bound, %d of %d guest instructions profiled: want rounds ended by what they saw, a small part of the run",
				c[0], on.Rounds, on.LimitedRounds, on.ProfiledInstructions, on.Report.GuestInstructions)
		}
		verdict := map[string]string{}
		for _, h := range on.Profile.HotSpots {
			verdict[h.Entry.String()] = h.Verdict
		}
		for _, h := range on.Report.HotSpots {
			if verdict[h.Entry] != profile.VerdictParallel && h.Launches > 0 {
				t.Errorf("%s: the %s nest at %s launched %d times", c[0], verdict[h.Entry], h.Entry, h.Launches)
			}
		}
	}
}

// TestRunOnlineDistributedMidInstance runs atax and gemm, whose product
// nest's outer loop holds two sibling loops that the schedule distributes
// into kernels of their own, under the single run with its first round
// begun inside the second sibling (guest instructions, so that where it
// begins does not depend on the machine's speed): atax's y += Aᵀ·tmp
// loop, gemm's k-j product after the beta loop. The round's samples meet
// that sibling first, so the profile names it first among the level's
// inner loops; the rest of the instance must still run as the schedule's
// kernels, with the native output. Phase 2 paired the kernels (in the
// siblings' order) with the inner loops in the profile's order, found
// "kernel 1 of the schedule runs u1, which is not under loop u0", and
// ran one kernel over i with both siblings in each thread (gemm 1600 on
// an H100: past 20 s against two-phase's 1.2 s), or, where the level
// carries a dependence (atax), nothing at all.
func TestRunOnlineDistributedMidInstance(t *testing.T) {
	dir := buildNests(t, []string{"O2-static"})
	for _, c := range []struct {
		args []string
		at   []uint64 // inside the second sibling: atax's product runs from about 1.0 M to 2.8 M, gemm's from 0.5 M to 2.6 M
	}{
		{[]string{"atax", "300", "400"}, []uint64{1_500_000, 2_000_000}},
		{[]string{"gemm", "60", "70", "80"}, []uint64{1_000_000}},
	} {
		path := filepath.Join(dir, "O2-static", c.args[0])
		args := append([]string{path}, c.args[1:]...)
		want := runNative(t, path, args[1:]...)
		for _, at := range c.at {
			t.Run(fmt.Sprintf("%s/%d", c.args[0], at), func(t *testing.T) {
				on := runOnlineNative(t, path, args, want, pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true, ProfileAfterInsns: at})
				if on.Profile == nil || on.Report == nil {
					t.Fatalf("no profile or no phase 2: %v", on.Why)
				}
				hs := distributedNest(on.Profile)
				if hs == nil {
					t.Fatalf("no hot spot with two sibling loops under its outer level:\n%s", profileText(on.Profile))
				}
				var sibs []profile.InnerLoop
				for _, il := range hs.InnerLoops {
					if il.Parent == hs.Levels[0].Index {
						sibs = append(sibs, il)
					}
				}
				if sibs[0].Header < sibs[1].Header {
					t.Fatalf("the profile names %s (%s) before %s (%s): the round (%+v) did not begin inside the second sibling", sibs[0].Index, sibs[0].Header, sibs[1].Index, sibs[1].Header, on.RoundSpans)
				}
				for _, h := range on.Report.HotSpots {
					if h.Entry != hs.Entry.String() {
						continue
					}
					if !strings.HasPrefix(h.ScheduleNote, "phase 2 runs the schedule's kernels") || h.Launches == 0 {
						t.Errorf("%s: %d launches, %s\n%s", h.Entry, h.Launches, h.ScheduleNote, accel.FormatReport(on.Report))
					}
					return
				}
				t.Errorf("no report of hot spot %s\n%s", hs.Entry, accel.FormatReport(on.Report))
			})
		}
	}
}

// distributedNest returns the hot spot of f in main whose outermost level
// holds two or more inner loops, or nil.
func distributedNest(f *profile.File) *profile.HotSpot {
	for i := range f.HotSpots {
		h := &f.HotSpots[i]
		if h.Function != "main" || len(h.Levels) != 1 {
			continue
		}
		n := 0
		for _, il := range h.InnerLoops {
			if il.Parent == h.Levels[0].Index {
				n++
			}
		}
		if n >= 2 {
			return h
		}
	}
	return nil
}

// TestRunOnlineLongRowsOuterSites runs conv2d with rows of 15,000 columns
// under the single run, its first round begun inside the initialisation
// nest's rows (guest instructions, so that where it begins does not depend
// on the machine's speed) with a probe budget spent within the first row
// the round records, as the rounds of gxbit run --accelerate are at large
// sizes. The nest's outer level must be found parallel and launched for
// the rest of the instance, with the native output. Past the budget, each
// row's inner loop paused to near its end counting its headers, and the
// collector skipped on after the resume to the next outer header: the
// memset of the output row after the inner loop was recorded at one outer
// index only (no step), the outer level came out sequential, and the rest
// of the rows launched one at a time at the inner level (on an H100 at
// 14000 × 15000, 112 launches of 1.9 ms against 75 µs of CPU each before
// the ledger sent them back to the CPU).
func TestRunOnlineLongRowsOuterSites(t *testing.T) {
	dir := buildNests(t, []string{"O2-static"})
	path := filepath.Join(dir, "O2-static", "conv2d")
	args := []string{path, "120", "15000"}
	want := runNative(t, path, args[1:]...)
	for _, at := range []uint64{5_000_000, 7_000_000} { // the initialisation nest runs from the start to about 27 M
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			on := runOnlineNative(t, path, args, want, pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true, ProfileAfterInsns: at,
				Collect: profile.CollectOptions{MaxProbesPerNest: 250_000}})
			if on.Profile == nil || on.Report == nil || len(on.RoundSpans) == 0 {
				t.Fatalf("no profile or no phase 2: %v", on.Why)
			}
			began := profile.Hex(on.RoundSpans[0].BeganPC)
			var hs *profile.HotSpot
			for i := range on.Profile.HotSpots {
				h := &on.Profile.HotSpots[i]
				if h.Function == "main" && len(h.Levels) == 2 && slices.Contains(h.Levels[1].Blocks, began) {
					hs = h
				}
			}
			if hs == nil {
				t.Fatalf("no two-level hot spot holds %s, where the round began:\n%s", began, profileText(on.Profile))
			}
			if lev := hs.Levels[0]; lev.Verdict != profile.VerdictParallel {
				t.Errorf("level %s of %s: %s (%s), want parallel", lev.Index, hs.Entry, lev.Verdict, lev.Reason)
			}
			for _, h := range on.Report.HotSpots {
				if h.Entry == hs.Entry.String() && h.Launches > 0 {
					return
				}
			}
			t.Errorf("the outer level at %s did not launch\n%s", hs.Entry, accel.FormatReport(on.Report))
		})
	}
}

// TestRunOnlineLongRowsTripCounts runs gemm with rows of the product as
// long as at the GPU machine's sizes (k × j = 2000 × 1800, 18 M guest
// instructions a row) under the single run, its first round begun inside
// the product nest's only instance (guest instructions, so that where it
// begins does not depend on the machine's speed), with the probe budget
// of a round begun at 500 ms. The nest's outer level must be parallel, its
// k loop's trip count known, and the rest of the instance must launch as
// the schedule's kernels, with the native output. The round ended once
// the rows had run profile.CollectOptions.LongOuterIteration (32 M)
// instructions and k nine iterations, one row short of a second whole
// entry of k: k's trip count was seen at one value of i (no step), the
// outer level came out sequential ("the inner loop at 0x401730 has no
// affine, positive trip count"), and phase 2 launched the k level, once
// per k, until the ledger sent it back to the CPU.
//
// Rows of the size (k × j = 2600 × 2300, 48 M instructions, over
// one LongOuterIteration) are waited for too (longEntry): counted long,
// the round ended inside the first, mapped the k level, whose only
// parallel level left was j, 2300 iterations a launch, not profitable,
// and the product ran on the CPU.
func TestRunOnlineLongRowsTripCounts(t *testing.T) {
	dir := buildNests(t, []string{"O2-static"})
	path := filepath.Join(dir, "O2-static", "gemm")
	for _, c := range []struct {
		args []string
		at   uint64
	}{
		{[]string{"30", "1800", "2000"}, 100_000_000}, // the product runs from about 56 M to 600 M
		{[]string{"30", "1800", "2000"}, 150_000_000},
		{[]string{"24", "2300", "2600"}, 100_000_000}, // from about 70 M to 1250 M
	} {
		args := append([]string{path}, c.args...)
		at := c.at
		want := runNative(t, path, args[1:]...)
		t.Run(fmt.Sprint(c.args[1], "x", c.args[2], "@", at), func(t *testing.T) {
			on := runOnlineNative(t, path, args, want, pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true, ProfileAfterInsns: at,
				Collect: profile.CollectOptions{MaxProbesPerNest: 250_000}})
			if on.Profile == nil || on.Report == nil {
				t.Fatalf("no profile or no phase 2: %v", on.Why)
			}
			hs := distributedNest(on.Profile)
			if hs == nil {
				t.Fatalf("no hot spot with two sibling loops under its outer level:\n%s", profileText(on.Profile))
			}
			if lev := hs.Levels[0]; lev.Verdict != profile.VerdictParallel {
				t.Errorf("level %s of %s: %s (%s), want parallel", lev.Index, hs.Entry, lev.Verdict, lev.Reason)
			}
			for _, h := range on.Report.HotSpots {
				if h.Entry == hs.Entry.String() && h.Launches > 0 && strings.HasPrefix(h.ScheduleNote, "phase 2 runs the schedule's kernels") {
					return
				}
			}
			t.Errorf("the outer level at %s did not launch as the schedule's kernels\n%s", hs.Entry, accel.FormatReport(on.Report))
		})
	}
}

// runOnlineNative runs path with args (args[0] is path) under gxbit run
// --accelerate with opts, on the suite's CPU engine, checks that it
// printed want, as the native run did, and exited 0, and returns what
// the run learned.
func runOnlineNative(t *testing.T, path string, args []string, want string, opts pipeline.OnlineOptions) *pipeline.OnlineResult {
	t.Helper()
	var out bytes.Buffer
	res, on, err := pipeline.RunOnline(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want || res.ExitStatus != 0 {
		t.Errorf("online run %q (status %d), native %q", out.String(), res.ExitStatus, want)
	}
	return on
}
