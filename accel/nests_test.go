package accel_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// EnvNestsFull names the environment variable that widens TestNests to
// -O0, -O2 and -O3 and to the medium sizes of testdata/nests/sizes.
const EnvNestsFull = "GXBIT_NESTS_FULL"

// nestsMismatch lists the runs of TestNests (key "MODE/PROGRAM MODE-OF-RUN",
// the run mode being "run", "profile", "accelerate" or "online") known to differ from native,
// each with the reason. An entry that passes fails the test, so the list
// only shrinks.
var nestsMismatch = map[string]string{}

// TestNests is issue 10's acceptance test: every program of testdata/nests
// runs natively, under gxbit run, profiled then accelerated on gpusim
// (the two-phase flow), and profiled and accelerated in one run (gxbit
// run --accelerate), and every run prints the same bytes and exits alike
// (the profiling run included), on each CPU engine (TestMain).
// By default it covers -O2 and -O3 at the programs' default (small)
// sizes; with GXBIT_NESTS_FULL=1 it covers -O0, -O2 and -O3 at the medium
// sizes.
func TestNests(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every nests program three ways")
	}
	full := os.Getenv(EnvNestsFull) == "1"
	modes := []string{"O2-static", "O3-static"} // -O3: gcc's vectorised loops (packed SSE ops, rows at any offset)
	if full {
		modes = []string{"O0-static", "O2-static", "O3-static"}
	}
	dir := buildNests(t, modes)
	script, err := corpus.ScriptPath()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(filepath.Dir(script), string(corpus.SuiteNests))
	expect, err := corpus.ReadNestExpectations(src)
	if err != nil {
		t.Fatal(err)
	}
	var sizes map[string][]string
	if full {
		if sizes, err = corpus.ReadNestSizes(src, "medium"); err != nil {
			t.Fatal(err)
		}
	}
	for _, mode := range modes {
		progs, err := corpus.Programs(dir, mode)
		if err != nil {
			t.Fatal(err)
		}
		if len(progs) < 24 {
			t.Fatalf("%d nests programs built in %s, want at least 24", len(progs), mode)
		}
		for _, p := range progs {
			if full {
				args, ok := sizes[p.Name]
				if !ok {
					t.Fatalf("%s has no medium size in testdata/nests/sizes", p.Name)
				}
				p.Args = args
			}
			t.Run(p.String(), func(t *testing.T) { checkNest(t, p, expect.Programs[p.Name]) })
		}
	}
}

// checkNest runs one program natively, under gxbit run and two-phase on
// gpusim, and compares the outputs; no nest that must stay on the CPU may
// have launched a kernel.
func checkNest(t *testing.T, p corpus.Program, want *corpus.ProgramExpect) {
	if want == nil {
		t.Fatalf("%s has no entry in expect.json", p.Name)
	}
	native := corpus.RunNative(t, p)
	if native.ExitCode != 0 {
		t.Fatalf("native run exits %d: %s", native.ExitCode, native.Stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cfg := func(out, errOut *bytes.Buffer) pipeline.Config {
		return pipeline.Config{Path: p.Path, Args: append([]string{p.Path}, p.Args...), Env: p.Env, Stdin: bytes.NewReader(p.Stdin), Stdout: out, Stderr: errOut, Engine: testEngine}
	}
	check := func(how string, got corpus.Result) {
		err := corpus.Compare(native, got)
		key := p.String() + " " + how
		why, known := nestsMismatch[key]
		switch {
		case err != nil && known:
			t.Logf("known mismatch %s (%s): %v", key, why, err)
		case err != nil:
			t.Errorf("%s differs from native: %v", how, err)
		case known:
			t.Errorf("%s passes now: remove it from nestsMismatch (%s)", key, why)
		}
	}

	var out, errOut bytes.Buffer
	res, err := pipeline.Run(ctx, cfg(&out, &errOut))
	if err != nil {
		t.Fatalf("gxbit run: %v", err)
	}
	check("run", resultOf(res, &out, &errOut))

	out.Reset()
	errOut.Reset()
	res, prof, err := pipeline.Profile(ctx, cfg(&out, &errOut), profile.Options{})
	if err != nil {
		t.Fatalf("gxbit profile: %v", err)
	}
	check("profile", resultOf(res, &out, &errOut))
	out.Reset()
	errOut.Reset()
	res, rep, err := pipeline.Accelerate(ctx, cfg(&out, &errOut), accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
	if err != nil {
		t.Fatalf("gxbit accelerate: %v", err)
	}
	check("accelerate", resultOf(res, &out, &errOut))
	if testing.Verbose() {
		t.Logf("%s", accel.FormatReport(rep))
	}
	// Both phases in one run (gxbit run --accelerate): every launch the
	// guards allow at the small sizes, the cost model's choice at the
	// medium ones (there nussinov -O0 offloads an inner level once per
	// instance, 84,434 launches whose device buffers, one per footprint,
	// take 6 GB).
	out.Reset()
	errOut.Reset()
	always := os.Getenv(EnvNestsFull) != "1"
	res, on, err := pipeline.RunOnline(ctx, cfg(&out, &errOut), pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: always})
	if err != nil {
		t.Fatalf("gxbit run --accelerate: %v", err)
	}
	check("online", resultOf(res, &out, &errOut))
	if testing.Verbose() && on.Report != nil {
		t.Logf("online, %d profiling rounds:\n%s", on.Rounds, accel.FormatReport(on.Report))
	}
	lines, err := corpus.ReadLineTable(p.Path, p.Name+".c")
	if err != nil {
		t.Fatal(err)
	}
	offloaded := map[*corpus.NestExpect]bool{}
	for _, h := range rep.HotSpots {
		header, err := strconv.ParseUint(strings.TrimPrefix(h.Header, "0x"), 16, 64)
		if err != nil {
			t.Fatalf("hot spot %s: header %q: %v", h.Entry, h.Header, err)
		}
		n := want.NestAt(lines.Line(header))
		if n == nil || h.Launches == 0 {
			continue
		}
		offloaded[n] = true
		if n.CPU {
			t.Errorf("hot spot %s (header %s, line %d) launched %d kernels in nest %s, which must stay on the CPU: %s", h.Entry, h.Header, lines.Line(header), h.Launches, n.Nest, n.Why)
		}
	}
	if min2D := nestsScheduled[p.Name]; min2D > 0 && p.Mode.Opt == "O2" && p.Mode.Libc == "glibc" {
		ran := false
		for _, h := range rep.HotSpots {
			ran = ran || strings.HasPrefix(h.ScheduleNote, "phase 2 runs the schedule's kernels") && h.Fallbacks == 0 &&
				// At the medium sizes the simulator, with rows enough for
				// every host core, runs the level's own kernel (prefer1D).
				(h.Launches2D >= min2D || strings.HasPrefix(h.Note, "the level's own kernel ran: on the simulator"))
		}
		switch {
		case !ran && os.Getenv(EnvNestsFull) == "1":
			// Profiled at the medium size, phase 1 may give no hot spot
			// at the level the schedule splits (gemm at -O2: the product
			// runs as its j loop's kernel, launched per row and k).
			t.Logf("%s: no hot spot ran the schedule's distributed kernels", p.Name)
		case !ran:
			t.Errorf("%s: no hot spot ran the schedule's distributed kernels", p.Name)
		}
	}
	for _, n := range want.Nests {
		if n.Hot && !n.CPU && !offloaded[n] {
			t.Logf("%s: hot nest %s (%s) was not offloaded", p.Name, n.Nest, n.Loops)
		}
	}
}

// nestsScheduled are the programs whose hot nest runs, at -O2, as the
// schedule's kernels (parts.go), with the least 2D launches that takes: a
// distributed level, the product as a grid (i, j) with k inside the
// thread (gemm, syrk, syr2k); a level carrying a dependence split into a
// grid over i and one over j with i interchanged inside (atax).
var nestsScheduled = map[string]int{"gemm": 2, "syrk": 2, "syr2k": 2, "atax": 1}

// resultOf turns a guest run into a corpus.Result for comparison.
func resultOf(res *pipeline.Result, out, errOut *bytes.Buffer) corpus.Result {
	r := corpus.Result{Stdout: append([]byte(nil), out.Bytes()...), Stderr: append([]byte(nil), errOut.Bytes()...), ExitCode: res.ExitStatus}
	if res.Signal != 0 {
		r.ExitCode, r.Signal = -1, syscall.Signal(res.Signal)
	}
	return r
}

// buildNests builds the nests suite in modes (corpus.BuildNests) and
// returns its folder.
func buildNests(t *testing.T, modes []string) string {
	t.Helper()
	return corpus.BuildNests(t, modes...)
}
