package profile_test

import (
	"context"
	"io"
	"os"
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
