package gpusim

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/gxbit/gxbit/gpu"
)

// BenchmarkGpusim measures simulated thread instructions per second on a
// compute-bound kernel (naive matmul, 128x128 and 512x512) and a
// memory-bound one (saxpy), with one worker and with GOMAXPROCS workers.
// matmul512 (4096 blocks, about 1e9 thread instructions) is the one to read
// for scaling: the 128x128 launch lasts a few milliseconds on 16 workers, so
// per-launch costs weigh on it.
func BenchmarkGpusim(b *testing.B) {
	for _, wl := range []string{"matmul", "matmul512", "saxpy"} {
		for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("%s/workers=%d", wl, workers), func(b *testing.B) {
				h := newHarness(b, Options{Workers: workers})
				var f gpu.Function
				var cfg gpu.LaunchConfig
				var params [][]byte
				switch wl {
				case "matmul", "matmul512":
					n := 128
					if wl == "matmul512" {
						n = 512
					}
					f = h.fn(h.loadFile("matmul.ptx"), "matmul")
					a := make([]float32, n*n)
					for i := range a {
						a[i] = float32(i % 13)
					}
					pa, pb, pc := h.upload(f32s(a)), h.upload(f32s(a)), h.upload(make([]byte, 4*n*n))
					cfg = gpu.LaunchConfig{Grid: dim(uint32(n/16), uint32(n/16), 1), Block: dim(16, 16, 1)}
					params = [][]byte{pptr(pa), pptr(pb), pptr(pc), p32(uint32(n))}
				case "saxpy":
					const n = 1 << 18
					f = h.fn(h.loadFile("saxpy.ptx"), "saxpy")
					x := make([]float32, n)
					px, py := h.upload(f32s(x)), h.upload(f32s(x))
					cfg = gpu.LaunchConfig{Grid: dim(n/256, 1, 1), Block: dim(256, 1, 1)}
					params = [][]byte{p32(n), pf32(2), pptr(px), pptr(py)}
				}
				var instrs uint64
				cpu0 := cpuTime()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := h.ctx.Launch(f, cfg, params); err != nil {
						b.Fatal(err)
					}
					instrs += h.ctx.LastLaunchStats().ThreadInstructions
				}
				b.ReportMetric(float64(instrs)/b.Elapsed().Seconds(), "thread-instr/s")
				// Per CPU-second: robust when the machine is shared.
				b.ReportMetric(float64(instrs)/(cpuTime()-cpu0).Seconds(), "thread-instr/cpu-s")
			})
		}
	}
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
