package pipeline

import (
	"fmt"

	"github.com/gxbit/gxbit/cuda"
	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpusim"
)

// OpenGPU returns an initialised driver for a GPU choice: "sim" is the
// simulator, "cuda" the real GPU (an error when there is none), "auto" the
// real GPU when one is present and the simulator otherwise. The simulator
// ends any launch that runs longer than gpusim.DefaultMaxLaunchTime with
// CUDA_ERROR_LAUNCH_TIMEOUT.
func OpenGPU(choice string) (gpu.Driver, error) {
	return OpenGPUWith(choice, gpusim.Options{MaxLaunchTime: gpusim.DefaultMaxLaunchTime})
}

// OpenGPUWith is OpenGPU with the simulator configured by sim (its launch
// bounds, say).
func OpenGPUWith(choice string, sim gpusim.Options) (gpu.Driver, error) {
	switch choice {
	case "sim":
		d := gpusim.New(sim)
		return d, d.Init()
	case "cuda":
		d := cuda.New()
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
