package pipeline

import (
	"fmt"
	"os"
	"strconv"

	"github.com/gxbit/gxbit/accel"
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
	sim, err := simOptions()
	if err != nil {
		return nil, err
	}
	return OpenGPUWith(choice, sim)
}

// simOptions are the simulator's options for OpenGPU and StartGPU.
func simOptions() (gpusim.Options, error) {
	sim := gpusim.Options{MaxLaunchTime: gpusim.DefaultMaxLaunchTime}
	if v := os.Getenv("GXBIT_GPUSIM_SPEEDUP"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 1 {
			return sim, fmt.Errorf("GXBIT_GPUSIM_SPEEDUP=%q: want a number of at least 1", v)
		}
		sim.KernelSpeedup = f
	}
	return sim, nil
}

// OpenGPUWith is OpenGPU with the simulator configured by sim (its launch
// bounds, say).
//
// For measuring the CUDA JIT, the environment variable
// GXBIT_CUDA_JIT_LEVEL=N (0 to 4) sets its optimization level
// (cuda.Options.JITLevel; gxbit's default is jitLevel, the driver's 4), and
// GXBIT_CUDA_JIT_THREADS=N how many modules it compiles at once
// (cuda.Options.JITThreads; by default four where the driver links).
// GXBIT_CUDA_TRACE=FILE writes a line per driver call there
// (cuda.Options.Trace): when it was asked for, when it began, how long
// it took, on which thread.
func OpenGPUWith(choice string, sim gpusim.Options) (gpu.Driver, error) {
	return openGPU(choice, sim, false)
}

// StartGPU is OpenGPU for a run that goes on while the real GPU's driver
// initialises: with "cuda" it returns once libcuda.so.1 is loaded (an
// error without it, at once), with cuInit under way on the driver's
// thread (a tenth of a second or more, which the guest's start then does
// not wait for); without a usable device, the run's first use of the GPU
// fails with cuInit's error. gxbit accelerate and run --accelerate open
// the GPU so.
func StartGPU(choice string) (gpu.Driver, error) {
	sim, err := simOptions()
	if err != nil {
		return nil, err
	}
	return openGPU(choice, sim, true)
}

// openGPU opens the GPU of choice; start says to leave cuInit running
// (StartGPU).
func openGPU(choice string, sim gpusim.Options, start bool) (gpu.Driver, error) {
	switch choice {
	case "sim":
		d := gpusim.New(sim)
		return d, d.Init()
	case "cuda":
		o, err := cudaOptions()
		if err != nil {
			return nil, err
		}
		d := cuda.NewWith(o)
		if start {
			if err := d.Start(); err != nil {
				return nil, fmt.Errorf("--gpu cuda: %w", err)
			}
			return d, nil
		}
		if err := d.Init(); err != nil {
			return nil, fmt.Errorf("--gpu cuda: %w", err)
		}
		if n, err := d.DeviceCount(); err != nil || n == 0 {
			return nil, fmt.Errorf("--gpu cuda: no CUDA device (%v)", err)
		}
		return d, nil
	case "auto":
		if d, err := openGPU("cuda", sim, false); err == nil {
			return d, nil
		}
		return openGPU("sim", sim, false)
	}
	return nil, fmt.Errorf("--gpu %q: want sim, cuda or auto", choice)
}

// CostsCache is the file phase 2 keeps a real GPU's measured costs in
// between runs (accel.Options.CostsCache): GXBIT_COSTS_CACHE=FILE names
// it, GXBIT_COSTS_CACHE=off measures the device every run, and by
// default it is accel.DefaultCostsCache (the user's cache directory).
func CostsCache() string {
	switch v := os.Getenv("GXBIT_COSTS_CACHE"); v {
	case "":
		return accel.DefaultCostsCache()
	case "off":
		return ""
	default:
		return v
	}
}

// jitLevel is the CUDA JIT's optimization level gxbit asks for
// (CU_JIT_OPTIMIZATION_LEVEL): 1, not the driver's 4. Phase 2's kernels
// are loops that ptxgen has already unrolled and hoisted, and on an H100
// host the kernels of thirteen programs took about as long at 1 or less
// (trmm's 0.23 s took 0.14, doitgen's 2 ms 1, conv2d's 6 ms 6; the most
// lost: gemver's 10 ms took 12, heat3d's 14 took 15-16), while their
// modules compiled a fifth sooner (trmm's three in 83-100 ms instead of
// 104-145): 22 programs two-phase, side by side, 6.82x native at 4 and
// 7.00x at 1, every output identical.
const jitLevel = 1

// cudaOptions are the real GPU's options, from the environment (see
// OpenGPUWith).
func cudaOptions() (cuda.Options, error) {
	o := cuda.Options{JITLevel: jitLevel}
	if v := os.Getenv("GXBIT_CUDA_JIT_LEVEL"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 4 {
			return o, fmt.Errorf("GXBIT_CUDA_JIT_LEVEL=%q: want 0 to 4", v)
		}
		o.JITLevel = n
	}
	if v := os.Getenv("GXBIT_CUDA_TRACE"); v != "" {
		f, err := os.Create(v)
		if err != nil {
			return o, fmt.Errorf("GXBIT_CUDA_TRACE: %w", err)
		}
		o.Trace = f // written until the process exits
	}
	if v := os.Getenv("GXBIT_CUDA_JIT_THREADS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 64 {
			return o, fmt.Errorf("GXBIT_CUDA_JIT_THREADS=%q: want 1 to 64", v)
		}
		o.JITThreads = n
	}
	return o, nil
}
