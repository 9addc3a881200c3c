package pipeline

import (
	"fmt"
	"os"
	"strconv"

	"github.com/gxbit/gxbit/cuda"
	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpusim"
)

// OpenGPU returns an initialised driver for a GPU choice: "sim" is the
// simulator, "cuda" the real GPU (an error when there is none), "auto" the
// real GPU when one is present and the simulator otherwise. The simulator
// ends any launch that runs longer than gpusim.DefaultMaxLaunchTime with
// CUDA_ERROR_LAUNCH_TIMEOUT.
//
// For work on the cost model, the environment variable
// GXBIT_GPUSIM_SPEEDUP=F (F above 1) makes the simulator emulate a GPU F
// times faster (gpusim.Options.KernelSpeedup): phase 2 then decides as on
// a real GPU, though the kernels take the simulator's time.
func OpenGPU(choice string) (gpu.Driver, error) {
	sim := gpusim.Options{MaxLaunchTime: gpusim.DefaultMaxLaunchTime}
	if v := os.Getenv("GXBIT_GPUSIM_SPEEDUP"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 1 {
			return nil, fmt.Errorf("GXBIT_GPUSIM_SPEEDUP=%q: want a number of at least 1", v)
		}
		sim.KernelSpeedup = f
	}
	return OpenGPUWith(choice, sim)
}

// OpenGPUWith is OpenGPU with the simulator configured by sim (its launch
// bounds, say).
//
// For measuring the CUDA JIT, the environment variable
// GXBIT_CUDA_JIT_LEVEL=N (0 to 4) sets its optimization level
// (cuda.Options.JITLevel; the driver's default is 4), and
// GXBIT_CUDA_JIT_THREADS=N how many modules it compiles at once
// (cuda.Options.JITThreads; 1 by default).
func OpenGPUWith(choice string, sim gpusim.Options) (gpu.Driver, error) {
	switch choice {
	case "sim":
		d := gpusim.New(sim)
		return d, d.Init()
	case "cuda":
		o := cuda.Options{JITLevel: cuda.DefaultJITLevel}
		if v := os.Getenv("GXBIT_CUDA_JIT_LEVEL"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 4 {
				return nil, fmt.Errorf("GXBIT_CUDA_JIT_LEVEL=%q: want 0 to 4", v)
			}
			o.JITLevel = n
		}
		if v := os.Getenv("GXBIT_CUDA_JIT_THREADS"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 64 {
				return nil, fmt.Errorf("GXBIT_CUDA_JIT_THREADS=%q: want 1 to 64", v)
			}
			o.JITThreads = n
		}
		d := cuda.NewWith(o)
		if err := d.Init(); err != nil {
			return nil, fmt.Errorf("--gpu cuda: %w", err)
		}
		if n, err := d.DeviceCount(); err != nil || n == 0 {
			return nil, fmt.Errorf("--gpu cuda: no CUDA device (%v)", err)
		}
		return d, nil
	case "auto":
		if d, err := OpenGPUWith("cuda", sim); err == nil {
			return d, nil
		}
		return OpenGPUWith("sim", sim)
	}
	return nil, fmt.Errorf("--gpu %q: want sim, cuda or auto", choice)
}
