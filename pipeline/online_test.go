package pipeline

import (
	"testing"
	"time"

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
