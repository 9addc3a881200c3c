package main

import (
	"fmt"

	"github.com/gxbit/gxbit/cuda"
	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpusim"
)

// openGPU returns an initialised driver for --gpu: "sim" is the simulator,
// "cuda" the real GPU (an error without one), "auto" the real GPU when one
// is present and the simulator otherwise.
func openGPU(choice string) (gpu.Driver, error) {
	switch choice {
	case "sim":
		d := gpusim.New(gpusim.Options{})
		return d, d.Init()
	case "cuda":
		d := cuda.New()
		if err := d.Init(); err != nil {
			return nil, fmt.Errorf("--gpu cuda: %w", err)
		}
		return d, nil
	case "auto":
		if d := cuda.New(); d.Init() == nil {
			if n, err := d.DeviceCount(); err == nil && n > 0 {
				return d, nil
			}
		}
		s := gpusim.New(gpusim.Options{})
		return s, s.Init()
	}
	return nil, fmt.Errorf("--gpu %q: want sim, cuda or auto", choice)
}
