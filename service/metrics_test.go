package service

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestMetricNames checks that MetricNames lists exactly the gxbit families
// the registry exposes once every metric has a value, and that they follow
// the Prometheus naming conventions (promlint).
func TestMetricNames(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, BuildInfo{Version: "v", Revision: "r", GoVersion: "go"})
	if err != nil {
		t.Fatal(err)
	}
	m.SetGPURequested(GPUCUDA)
	m.jobFinished(ModeBoth, outcomeSucceeded, 1.5, true, Stats{
		GuestInstructions: 10, AcceleratedTime: time.Second, CPUEngineTime: 3 * time.Second,
		HotSpotsFound: 2, HotSpotsOffloaded: 1, KernelLaunches: 3, KernelTime: time.Millisecond,
		CopyTime: time.Millisecond, TranslationTime: time.Millisecond, Fallbacks: map[string]uint64{"guard_bounds": 1},
		KernelSpeedups: []float64{5}, GPUBackend: "cuda", Phases: []PhaseTime{{PhaseProfile, time.Second}},
	})
	m.rejected.WithLabelValues("InvalidArgument").Inc()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fams {
		if strings.HasPrefix(f.GetName(), "gxbit_") {
			got = append(got, f.GetName())
		}
	}
	want := MetricNames()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("exported gxbit families\n%v\nMetricNames\n%v", got, want)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "gxbit_") {
			t.Errorf("promlint: %s: %s", p.Metric, p.Text)
		}
	}
	if n := testutil.CollectAndCount(m.speedup); n != 1 {
		t.Errorf("speedup histogram has %d series, want 1 (no per-job labels)", n)
	}
}

// TestSpeedupOnlyForAccelerated checks which jobs feed the speedup
// histogram.
func TestSpeedupOnlyForAccelerated(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, BuildInfo{})
	if err != nil {
		t.Fatal(err)
	}
	st := Stats{AcceleratedTime: time.Second, CPUEngineTime: 2 * time.Second}
	m.jobFinished(ModeRun, outcomeSucceeded, 1, true, st)
	m.jobFinished(ModeProfile, outcomeSucceeded, 1, true, st)
	m.jobFinished(ModeAccelerate, outcomeFailed, 1, true, st)
	m.jobFinished(ModeAccelerate, outcomeSucceeded, 1, true, Stats{AcceleratedTime: time.Second})
	m.jobFinished(ModeAccelerate, outcomeSucceeded, 1, true, st)
	m.jobFinished(ModeBoth, outcomeSucceeded, 1, true, st)
	const want = `
# HELP gxbit_accelerated_speedup_ratio Per finished accelerated job: plain CPU-engine wall time over accelerated wall time of the same program.
# TYPE gxbit_accelerated_speedup_ratio histogram
gxbit_accelerated_speedup_ratio_bucket{le="0.125"} 0
gxbit_accelerated_speedup_ratio_bucket{le="0.25"} 0
gxbit_accelerated_speedup_ratio_bucket{le="0.5"} 0
gxbit_accelerated_speedup_ratio_bucket{le="0.75"} 0
gxbit_accelerated_speedup_ratio_bucket{le="1"} 0
gxbit_accelerated_speedup_ratio_bucket{le="1.5"} 0
gxbit_accelerated_speedup_ratio_bucket{le="2"} 2
gxbit_accelerated_speedup_ratio_bucket{le="3"} 2
gxbit_accelerated_speedup_ratio_bucket{le="4"} 2
gxbit_accelerated_speedup_ratio_bucket{le="6"} 2
gxbit_accelerated_speedup_ratio_bucket{le="8"} 2
gxbit_accelerated_speedup_ratio_bucket{le="12"} 2
gxbit_accelerated_speedup_ratio_bucket{le="16"} 2
gxbit_accelerated_speedup_ratio_bucket{le="32"} 2
gxbit_accelerated_speedup_ratio_bucket{le="64"} 2
gxbit_accelerated_speedup_ratio_bucket{le="128"} 2
gxbit_accelerated_speedup_ratio_bucket{le="+Inf"} 2
gxbit_accelerated_speedup_ratio_sum 4
gxbit_accelerated_speedup_ratio_count 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "gxbit_accelerated_speedup_ratio"); err != nil {
		t.Error(err)
	}
}
