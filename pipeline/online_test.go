package pipeline

import (
	"testing"
	"time"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/profile"
)

// TestRoundProbes checks the sizing of a round's probe budget by the run
// so far (Sized rounds): the floor for a round begun at the start, 500,000
// probes a CPU second in between, the collector's own budget at most.
func TestRoundProbes(t *testing.T) {
	for _, c := range []struct {
		cpu  time.Duration
		want int64
	}{
		{0, minRoundProbes},
		{100 * time.Millisecond, minRoundProbes},
		{DefaultProfileAfter, 250_000},
		{time.Second, 500_000},
		{2 * time.Second, profile.DefaultMaxProbesPerNest},
		{time.Minute, profile.DefaultMaxProbesPerNest},
	} {
		if got := roundProbes(c.cpu); got != c.want {
			t.Errorf("roundProbes(%v) = %d, want %d", c.cpu, got, c.want)
		}
	}
}

// namedDriver is a gpu.Driver that only answers its name.
type namedDriver struct {
	gpu.Driver
	name string
}

func (d namedDriver) Name() string { return d.name }

// TestProfileAfterFor: a real GPU profiles sooner than the simulator,
// which GXBIT_GPUSIM_SPEEDUP renames sim-fast.
func TestProfileAfterFor(t *testing.T) {
	for _, c := range []struct {
		d    gpu.Driver
		want time.Duration
	}{
		{gpusim.New(gpusim.Options{}), DefaultProfileAfter},
		{namedDriver{name: "sim-fast"}, DefaultProfileAfter},
		{namedDriver{name: "cuda"}, DefaultProfileAfterGPU},
		{nil, DefaultProfileAfter},
	} {
		if got := ProfileAfterFor(c.d); got != c.want {
			name := "nil"
			if c.d != nil {
				name = c.d.Name()
			}
			t.Errorf("ProfileAfterFor(%s) = %v, want %v", name, got, c.want)
		}
	}
	if DefaultProfileAfterGPU >= DefaultProfileAfter {
		t.Errorf("a real GPU profiles after %v, not sooner than the simulator's %v", DefaultProfileAfterGPU, DefaultProfileAfter)
	}
}
