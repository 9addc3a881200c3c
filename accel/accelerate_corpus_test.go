package accel_test

import (
	"bytes"
	"context"
	"fmt"
	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/pipeline"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/profile"
)

// phase1 profiles one run of a program (what gxbit profile does).
func phase1(t testing.TB, cfg pipeline.Config) *profile.File {
	t.Helper()
	return phase1Collect(t, cfg, profile.CollectOptions{})
}

// phase1Collect is phase1 with the collector bounded by opts.
func phase1Collect(t testing.TB, cfg pipeline.Config, opts profile.CollectOptions) *profile.File {
	t.Helper()
	g, err := pipeline.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	lo, hi := g.Image.Prog.Span()
	im := profile.Image{Entry: g.Image.ProgramEntry(), Lo: lo + g.Image.Bias, Hi: hi + g.Image.Bias}
	for _, s := range g.Image.Symbols {
		if s.IsFun {
			im.Symbols = append(im.Symbols, profile.Symbol{Name: s.Name, Addr: s.Addr, Size: s.Size})
		}
	}
	newEngine, err := g.EngineFunc()
	if err != nil {
		t.Fatal(err)
	}
	sess, err := profile.NewSession(g.Lifter, g.Mem, im, profile.Options{Engine: newEngine, Collect: opts})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := g.RunEngine(context.Background(), sess.Engine(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return sess.Finish(profile.RunInfo{Program: cfg.Path, Args: cfg.Args, LoadBias: g.Image.Bias, GuestInstructions: res.Stats.GuestInstructions})
}

// loopModes are the build modes the phase 2 corpus test covers.
var loopModes = loopModesFromEnv()

// buildLoopsCorpus builds the loops programs in loopModes into the shared
// corpus directory.
func buildLoopsCorpus(t *testing.T) string {
	t.Helper()
	dir, err := corpus.DefaultDir()
	if err != nil {
		t.Skip(err)
	}
	if d := os.Getenv("GXBIT_P2_BUILD"); d != "" {
		dir = d
	}
	if err := corpus.BuildInto(context.Background(), dir, corpus.BuildOptions{Modes: loopModes}); err != nil {
		t.Skipf("corpus not built: %v", err)
	}
	return dir
}

// offloadMiss lists the programs whose parallel hot spots phase 2 does not
// offload, with the only fallback reason accepted and why.
var offloadMiss = map[string]struct{ reason, why string }{
	"histogram": {accel.ReasonNotAffine, "phase 1 marks the input generator loop parallel; its LCG state (rdi) is carried, and the affine guard sends it to the CPU"},
}

// TestAccelerateLoops profiles every loops program, accelerates it on
// gpusim with the same inputs, and checks that the output is byte-identical
// to the native run's and that every parallel hot spot was offloaded with
// no fallback.
func TestAccelerateLoops(t *testing.T) {
	if testing.Short() {
		t.Skip("profiles and accelerates every loops program in three modes")
	}
	dir := buildLoopsCorpus(t)
	for _, mode := range loopModes {
		progs, err := corpus.Programs(dir, mode)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range progs {
			if p.Suite != corpus.SuiteLoops || strings.HasPrefix(p.Name, "bench_") {
				continue
			}
			t.Run(p.String(), func(t *testing.T) {
				native := corpus.RunNative(t, p)
				argv := append([]string{p.Path}, p.Argv(t.TempDir())...)
				cfg := func(out, errOut *bytes.Buffer) pipeline.Config {
					return pipeline.Config{Path: p.Path, Args: argv, Env: p.Env, Stdin: bytes.NewReader(p.Stdin), Stdout: out, Stderr: errOut, Engine: testEngine}
				}
				var o1, e1 bytes.Buffer
				prof := phase1(t, cfg(&o1, &e1))
				var out, errOut bytes.Buffer
				res, rep, err := pipeline.Accelerate(context.Background(), cfg(&out, &errOut), accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
				if err != nil {
					t.Fatal(err)
				}
				got := corpus.Result{Stdout: out.Bytes(), Stderr: errOut.Bytes(), ExitCode: res.ExitStatus}
				if err := corpus.Compare(native, got); err != nil {
					t.Errorf("accelerated run differs from native: %v", err)
				}
				var report []string
				for _, h := range rep.HotSpots {
					key := fmt.Sprintf("%s %s", p, h.Entry)
					ok := h.Offloadable && h.Launches > 0 && h.Fallbacks == 0
					// A trip count too small for a launch is a guard these
					// inputs do not satisfy: the nest correctly ran on the CPU.
					small := h.Offloadable && h.Launches == 0 && h.Fallbacks == h.FallbackReasons[accel.ReasonTripCount]
					if ok || small || h.SameAs != "" {
						continue
					}
					msg := fmt.Sprintf("%s: not offloaded cleanly: %s%s (launches %d, fallbacks %v)", key, h.Reason, h.LastFallback, h.Launches, h.FallbackReasons)
					if m, known := offloadMiss[p.Name]; known && h.Fallbacks > 0 && h.FallbackReasons[m.reason] == h.Fallbacks {
						t.Logf("known: %s (%s)", msg, m.why)
						continue
					}
					report = append(report, msg)
				}
				sort.Strings(report)
				for _, r := range report {
					t.Error(r)
				}
				if testing.Verbose() {
					t.Logf("%s", accel.FormatReport(rep))
				}
			})
		}
	}
}

// loopModesFromEnv is O0/O2/O3-static, or the modes in $GXBIT_P2_MODES
// (comma separated).
func loopModesFromEnv() []string {
	if v := os.Getenv("GXBIT_P2_MODES"); v != "" {
		return strings.Split(v, ",")
	}
	return []string{"O0-static", "O2-static", "O3-static"}
}

// TestCostModelLoops runs every loops program (O2) with the cost model on
// and a free device, so that hot spots are timed on the plain engine,
// probed and launched, and checks that the output is byte-identical to
// the native run's, whether an instance ends while it is timed, on the
// CPU or on the GPU.
func TestCostModelLoops(t *testing.T) {
	if testing.Short() {
		t.Skip("profiles and accelerates every loops program")
	}
	dir := buildLoopsCorpus(t)
	progs, err := corpus.Programs(dir, "O2-static")
	if err != nil {
		t.Fatal(err)
	}
	free := accel.DeviceCosts{HostToDevice: 1e18, DeviceToHost: 1e18, ThreadInsnsPerSecond: 1e18}
	launches := 0
	for _, p := range progs {
		if p.Suite != corpus.SuiteLoops || strings.HasPrefix(p.Name, "bench_") {
			continue
		}
		t.Run(p.String(), func(t *testing.T) {
			native := corpus.RunNative(t, p)
			argv := append([]string{p.Path}, p.Argv(t.TempDir())...)
			cfg := func(out, errOut *bytes.Buffer) pipeline.Config {
				return pipeline.Config{Path: p.Path, Args: argv, Env: p.Env, Stdin: bytes.NewReader(p.Stdin), Stdout: out, Stderr: errOut, Engine: testEngine}
			}
			var o1, e1 bytes.Buffer
			prof := phase1(t, cfg(&o1, &e1))
			var out, errOut bytes.Buffer
			res, rep, err := pipeline.Accelerate(context.Background(), cfg(&out, &errOut), accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), Costs: &free})
			if err != nil {
				t.Fatal(err)
			}
			got := corpus.Result{Stdout: out.Bytes(), Stderr: errOut.Bytes(), ExitCode: res.ExitStatus}
			if err := corpus.Compare(native, got); err != nil {
				t.Errorf("accelerated run differs from native: %v", err)
			}
			for _, h := range rep.HotSpots {
				launches += h.Launches
			}
		})
	}
	if launches == 0 {
		t.Errorf("no launch in the whole corpus: the timed and probed path was not exercised")
	}
}
