package profile_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// benchRun runs a program once, plainly or under the profile collector,
// on the default engine, and returns the wall time.
func benchRun(b *testing.B, path string, args []string, prof bool) time.Duration {
	b.Helper()
	cfg := pipeline.Config{Path: path, Args: append([]string{path}, args...), Stdout: io.Discard, Stderr: io.Discard}
	start := time.Now()
	if !prof {
		res, err := pipeline.Run(context.Background(), cfg)
		if err != nil || res.Outcome != pipeline.Exited {
			b.Fatalf("plain run: %v %v", err, res.Diagnosis())
		}
		return time.Since(start)
	}
	// As gxbit profile does, on the same engine as the plain run.
	res, _, err := pipeline.Profile(context.Background(), cfg, profile.Options{})
	if err != nil || res.Outcome != pipeline.Exited {
		b.Fatalf("profile run: %v %v", err, res.Diagnosis())
	}
	return time.Since(start)
}

// BenchmarkProfile measures the cost of profiling against a plain run of
// the same program, side by side, and reports their ratio (the target is
// at most 2). The programs run with their .args; GXBIT_BENCH_ARGS_<name>
// (e.g. GXBIT_BENCH_ARGS_matmul="200") gives others, for long runs.
func BenchmarkProfile(b *testing.B) {
	dir := corpus.Build(b)
	for _, name := range []string{"matmul", "stencil2d", "sumreduce", "histogram"} {
		progs, err := corpus.Programs(dir, "O2-static")
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range progs {
			if p.Name != name || p.Suite != corpus.SuiteLoops {
				continue
			}
			args := p.Argv(os.TempDir())
			if a := os.Getenv("GXBIT_BENCH_ARGS_" + name); a != "" {
				args = strings.Fields(a)
			}
			b.Run(name+"/O2-static", func(b *testing.B) {
				var plain, prof time.Duration
				for i := 0; i < b.N; i++ {
					plain += benchRun(b, p.Path, args, false)
					prof += benchRun(b, p.Path, args, true)
				}
				b.ReportMetric(float64(prof)/float64(plain), "profile/plain")
				b.ReportMetric(float64(plain.Nanoseconds())/float64(b.N), "plain-ns/op")
			})
		}
	}
}

// BenchmarkFinish measures phase 1's analysis (Collector.Finish) alone:
// each nests program named by GXBIT_BENCH_NESTS (default: the five whose
// analysis weighed most in gxbit run --accelerate) is profiled once at
// its medium size (or GXBIT_BENCH_NESTS_SIZE: large, contract), then
// analysed b.N times over the same collected data: every nest anew
// ("anew", as the first Finish of a run does), and again with nothing
// changed since the last Finish ("again", as a later round's Finish finds
// the nests that did not run in it). The programs come from
// GXBIT_NESTS_BUILD (default out/nests/build, as testdata/build.sh -s
// nests writes it), O2-static.
func BenchmarkFinish(b *testing.B) {
	build := os.Getenv("GXBIT_NESTS_BUILD")
	if build == "" {
		build = filepath.Join("..", "out", "nests", "build")
	}
	set := os.Getenv("GXBIT_BENCH_NESTS_SIZE")
	if set == "" {
		set = "medium"
	}
	sizes, err := corpus.ReadNestSizes(filepath.Join("..", "testdata", "nests"), set)
	if err != nil {
		b.Fatal(err)
	}
	names := strings.Fields(os.Getenv("GXBIT_BENCH_NESTS"))
	if len(names) == 0 {
		names = []string{"conv2d", "heat3d", "lu", "correlation", "covariance"}
	}
	for _, name := range names {
		path := filepath.Join(build, "O2-static", name)
		if _, err := os.Stat(path); err != nil {
			b.Skipf("%s not built (testdata/build.sh -s nests -m O2-static out/nests/build): %v", name, err)
		}
		b.Run(name, func(b *testing.B) {
			args := append([]string{path}, sizes[name]...)
			g, err := pipeline.Load(pipeline.Config{Path: path, Args: args, Stdout: io.Discard, Stderr: io.Discard})
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			newEngine, err := g.EngineFunc()
			if err != nil {
				b.Fatal(err)
			}
			sess, err := profile.NewSession(g.Lifter, g.Mem, g.ProfileImage(), profile.Options{Engine: newEngine})
			if err != nil {
				b.Fatal(err)
			}
			defer sess.Close()
			res, err := g.RunEngine(context.Background(), sess.Engine(), nil)
			if err != nil || res.Outcome != pipeline.Exited {
				b.Fatalf("profile run: %v %v", err, res.Diagnosis())
			}
			run := profile.RunInfo{Program: path, Args: args[1:], LoadBias: g.Image.Bias, GuestInstructions: res.Stats.GuestInstructions}
			b.Run("anew", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					profile.FinishAnew(sess.Collector, run)
				}
			})
			b.Run("again", func(b *testing.B) {
				sess.Finish(run)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					sess.Finish(run)
				}
			})
		})
	}
}
