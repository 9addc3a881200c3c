// Package gputest is the conformance suite that every gpu.Driver must pass.
// The same tests run against the simulator (package gpusim) and the real GPU
// (package cuda), so that both back ends report the same results and the
// same CUresult codes for the same inputs and misuses.
//
// The suite covers: initialisation and device properties, memory round
// trips, misuse with the expected codes, events, parameter layout, and every
// kernel recorded on a real GPU under gpusim/testdata/cuda, whose outputs
// must match the recording bit for bit (or, for kernels marked approx,
// within the tolerance the manifest gives for each output).
//
// Call Run from a driver package's tests:
//
//	func TestConformance(t *testing.T) { gputest.Run(t, gpusim.New(gpusim.Options{})) }
package gputest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gxbit/gxbit/gpu"
)

// FixtureSubdir is where the recorded real-GPU fixtures live, relative to
// the module root.
const FixtureSubdir = "gpusim/testdata/cuda"

// Options adjusts a conformance run.
type Options struct {
	// FixtureDir is the folder of recorded fixtures. Empty means
	// FixtureSubdir under the module root, found by walking up from the
	// working directory to go.mod.
	FixtureDir string
	// Known lists subtests that are known to fail on this driver, by name
	// (a fixture's name, or a test name such as "Misuse/IllegalAddress"),
	// with the reason. They are skipped with that reason, so that every
	// known mismatch is an explicit, documented entry.
	Known map[string]string
	// NoFaults leaves out the tests that make a kernel fault
	// (IllegalAddress). On a real GPU a kernel fault is sticky for the whole
	// process: every later CUDA call, in any context, fails. A driver with
	// that property runs RunFaults in a process of its own instead.
	NoFaults bool
}

// Run runs the whole suite against d with default options. d must be
// available: callers skip before calling Run when Init fails because the
// back end is absent.
func Run(t *testing.T, d gpu.Driver) {
	t.Helper()
	RunWith(t, d, Options{})
}

// RunWith runs the whole suite against d with the given options.
func RunWith(t *testing.T, d gpu.Driver, o Options) {
	t.Helper()
	if err := d.Init(); err != nil {
		t.Fatalf("%s: Init: %v", d.Name(), err)
	}
	s := &suite{d: d, o: o}
	t.Run("Devices", s.testDevices)
	t.Run("Memory", s.testMemory)
	t.Run("CopyBatch", s.testCopyBatch)
	t.Run("Stream", s.testStream)
	t.Run("Kernel", s.testKernel)
	t.Run("Events", s.testEvents)
	t.Run("Misuse", s.testMisuse)
	t.Run("Fixtures", s.testFixtures)
	if !o.NoFaults {
		// Last: a kernel fault may leave its context, or on a real GPU the
		// whole process, unusable.
		t.Run("IllegalAddress", s.testIllegalAddress)
	}
}

// RunFaults runs only the tests that make a kernel fault. It is for drivers
// that run RunWith with NoFaults and these in a separate process.
func RunFaults(t *testing.T, d gpu.Driver, o Options) {
	t.Helper()
	if err := d.Init(); err != nil {
		t.Fatalf("%s: Init: %v", d.Name(), err)
	}
	s := &suite{d: d, o: o}
	t.Run("IllegalAddress", s.testIllegalAddress)
}

// suite carries the driver under test through the subtests.
type suite struct {
	d gpu.Driver
	o Options
}

// known skips t when its name (relative to the suite) is a known failure.
func (s *suite) known(t *testing.T, name string) {
	t.Helper()
	if why, ok := s.o.Known[name]; ok {
		t.Skipf("known failure on %s: %s", s.d.Name(), why)
	}
}

// context creates a context on device 0, closed when t ends.
func (s *suite) context(t *testing.T) gpu.Context {
	t.Helper()
	c, err := s.d.NewContext(0)
	if err != nil {
		t.Fatalf("NewContext(0): %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// FixtureDir returns the folder of recorded fixtures: FixtureSubdir under
// the module root that holds the working directory.
func FixtureDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding fixtures: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, filepath.FromSlash(FixtureSubdir)), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding fixtures: no go.mod above the working directory")
		}
		dir = parent
	}
}

// wantCode fails t unless err carries code.
func wantCode(t *testing.T, what string, err error, code gpu.Result) {
	t.Helper()
	if got := gpu.Code(err); got != code {
		t.Errorf("%s: got %v (error %v), want %v", what, got, err, code)
	}
}
