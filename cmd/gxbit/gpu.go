package main

import (
	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/pipeline"
)

// openGPU returns an initialised driver for --gpu (sim, cuda or auto).
func openGPU(choice string) (gpu.Driver, error) { return pipeline.OpenGPU(choice) }
