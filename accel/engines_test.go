package accel_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/gxbit/gxbit/jit"
	"github.com/gxbit/gxbit/pipeline"
)

// EnvEngine names the environment variable that runs this package's
// suite on one CPU engine only (jit or interp) instead of on each.
const EnvEngine = "GXBIT_TEST_ENGINE"

// testEngine is the CPU engine the guest runs on in every test of this
// package (pipeline.Config.Engine): phase 1's collector, phase 2's main
// engine, plain runs and single runs alike.
var testEngine string

// TestMain runs the package's suite once on each CPU engine: the
// compiling one (where it is supported, the default there) and the
// interpreter, so that both phases are checked on both. GXBIT_TEST_ENGINE
// picks one.
func TestMain(m *testing.M) {
	engines := []string{pipeline.EngineInterp}
	if jit.Supported() {
		engines = []string{pipeline.EngineJIT, pipeline.EngineInterp}
	}
	if e := os.Getenv(EnvEngine); e != "" {
		engines = []string{e}
	}
	code := 0
	for _, e := range engines {
		testEngine = e
		fmt.Printf("=== engine %s\n", e)
		if c := m.Run(); c != 0 {
			code = c
		}
	}
	os.Exit(code)
}
