package accel_test

import (
	"bytes"
	"context"
	"fmt"
	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/pipeline"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gxbit/gxbit/cuda"
	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/internal/corpus"
)

// benchDriver is the GPU of the benchmarks: $GXBIT_GPU (sim, cuda or
// auto; default sim).
func benchDriver(b *testing.B) gpu.Driver {
	switch os.Getenv("GXBIT_GPU") {
	case "cuda":
		d := cuda.New()
		if err := d.Init(); err != nil {
			b.Skipf("no CUDA GPU: %v", err)
		}
		return d
	case "auto":
		if d := cuda.New(); d.Init() == nil {
			return d
		}
	}
	return gpusim.New(gpusim.Options{})
}

// BenchmarkAccelerate runs each benchmark program natively, under the
// plain CPU engine and accelerated, side by side in every iteration, and
// reports the three times and their ratios. Sizes: $GXBIT_BENCH_MATMUL
// and $GXBIT_BENCH_STENCIL (program arguments, space separated).
func BenchmarkAccelerate(b *testing.B) {
	dir, err := corpus.DefaultDir()
	if err != nil {
		b.Skip(err)
	}
	if d := os.Getenv("GXBIT_P2_BUILD"); d != "" {
		dir = d
	}
	progs := []struct{ name, prog, env, args string }{
		{"matmul", "bench_matmul", "GXBIT_BENCH_MATMUL", "96"},
		{"stencil2d", "bench_stencil2d", "GXBIT_BENCH_STENCIL", "256 10"},
	}
	var names []string
	for _, p := range progs {
		names = append(names, p.prog)
	}
	if err := corpus.BuildInto(context.Background(), dir, corpus.BuildOptions{Modes: []string{"O2-static"}, Names: names}); err != nil {
		b.Skipf("corpus not built: %v", err)
	}
	drv := benchDriver(b)
	for _, p := range progs {
		b.Run(p.name, func(b *testing.B) {
			path := filepath.Join(dir, "O2-static", p.prog)
			argText := p.args
			if v := os.Getenv(p.env); v != "" {
				argText = v
			}
			args := append([]string{path}, strings.Fields(argText)...)
			prof := phase1(b, pipeline.Config{Path: path, Args: args, Engine: testEngine})
			var native, plain, accelerated, kernel time.Duration
			var launches int
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				want, err := exec.Command(path, args[1:]...).Output()
				if err != nil {
					b.Fatal(err)
				}
				native += time.Since(t0)

				var out bytes.Buffer
				t1 := time.Now()
				if _, err := pipeline.Run(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Engine: testEngine}); err != nil {
					b.Fatal(err)
				}
				plain += time.Since(t1)
				if out.String() != string(want) {
					b.Fatalf("plain run differs: %q vs %q", out.String(), want)
				}

				out.Reset()
				t2 := time.Now()
				_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Engine: testEngine}, accel.Options{Profile: prof, Driver: drv})
				if err != nil {
					b.Fatal(err)
				}
				accelerated += time.Since(t2)
				if out.String() != string(want) {
					b.Fatalf("accelerated run differs: %q vs %q", out.String(), want)
				}
				for _, h := range rep.HotSpots {
					launches += h.Launches
					kernel += time.Duration((h.KernelSeconds + h.CopySeconds) * float64(time.Second))
				}
			}
			n := float64(b.N)
			b.ReportMetric(native.Seconds()/n, "native-s/op")
			b.ReportMetric(plain.Seconds()/n, "plain-s/op")
			b.ReportMetric(accelerated.Seconds()/n, "accel-s/op")
			b.ReportMetric(kernel.Seconds()/n, "gpu-s/op")
			b.ReportMetric(plain.Seconds()/native.Seconds(), "plain/native")
			b.ReportMetric(accelerated.Seconds()/native.Seconds(), "accel/native")
			b.ReportMetric(plain.Seconds()/accelerated.Seconds(), "speedup-vs-plain")
			b.ReportMetric(float64(launches)/n, "launches/op")
			if testing.Verbose() {
				fmt.Fprintf(os.Stderr, "%s %s on %s: native %.3fs, plain %.3fs, accelerated %.3fs (GPU+copies %.3fs)\n",
					p.name, argText, drv.Name(), native.Seconds()/n, plain.Seconds()/n, accelerated.Seconds()/n, kernel.Seconds()/n)
			}
		})
	}
}
