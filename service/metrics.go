package service

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// MetricNames returns the name of every metric family gxbitd exports under
// its own name (the Go runtime and process collectors come on top). The
// deploy tests check that the alert rules and the dashboard use only these.
func MetricNames() []string {
	return []string{
		"gxbit_build_info",
		"gxbit_gpu_backend_info",
		"gxbit_gpu_requested_info",
		"gxbit_jobs_total",
		"gxbit_jobs_queued",
		"gxbit_jobs_running",
		"gxbit_workers",
		"gxbit_submissions_rejected_total",
		"gxbit_job_duration_seconds",
		"gxbit_phase_duration_seconds",
		"gxbit_guest_instructions_total",
		"gxbit_hot_spots_found_total",
		"gxbit_hot_spots_offloaded_total",
		"gxbit_kernel_launches_total",
		"gxbit_kernel_seconds_total",
		"gxbit_copy_seconds_total",
		"gxbit_translation_seconds_total",
		"gxbit_fallbacks_total",
		"gxbit_accelerated_speedup_ratio",
		"gxbit_kernel_speedup_ratio",
		"gxbit_lease_expiries_total",
	}
}

// BuildInfo describes the running binary for the gxbit_build_info metric.
type BuildInfo struct {
	Version   string
	Revision  string
	GoVersion string
}

// Metrics are gxbitd's Prometheus metrics. They are registered on the
// registry given to NewMetrics, never on the global default one.
type Metrics struct {
	gpuBackend   *prometheus.GaugeVec
	gpuRequested *prometheus.GaugeVec
	// backendFixed is set once, before any job runs, when the executor
	// reports its backend; jobs then no longer change gxbit_gpu_backend_info.
	backendFixed     bool
	jobs             *prometheus.CounterVec
	queued           prometheus.Gauge
	running          prometheus.Gauge
	workers          prometheus.Gauge
	rejected         *prometheus.CounterVec
	jobDuration      *prometheus.HistogramVec
	phaseDuration    *prometheus.HistogramVec
	instructions     *prometheus.CounterVec
	hotSpotsFound    prometheus.Counter
	hotSpotsOffload  prometheus.Counter
	launches         *prometheus.CounterVec
	kernelSeconds    *prometheus.CounterVec
	copySeconds      *prometheus.CounterVec
	translateSeconds prometheus.Counter
	fallbacks        *prometheus.CounterVec
	speedup          prometheus.Histogram
	kernelSpeedup    prometheus.Histogram
	leaseExpiries    *prometheus.CounterVec
}

// The outcome label values of gxbit_jobs_total.
const (
	outcomeSucceeded     = "succeeded"
	outcomeFailed        = "failed"
	outcomeCancelled     = "cancelled"
	outcomeLimitExceeded = "limit_exceeded"
	outcomeInterrupted   = "interrupted"
)

var speedupBuckets = []float64{0.125, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4, 6, 8, 12, 16, 32, 64, 128}

// durationBuckets span 5 ms to about 12 minutes (14 buckets, each 2.5x
// the last) for job and phase times.
var durationBuckets = prometheus.ExponentialBuckets(0.005, 2.5, 14)

// NewMetrics creates gxbitd's metrics and registers them, with the Go runtime
// and process collectors, on reg.
func NewMetrics(reg prometheus.Registerer, build BuildInfo) (*Metrics, error) {
	m := &Metrics{
		gpuBackend: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gxbit_gpu_backend_info",
			Help: "GPU driver in use by the translator (1 for the backend last used or configured): sim, cuda, or none.",
		}, []string{"backend"}),
		gpuRequested: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gxbit_gpu_requested_info",
			Help: "GPU backend requested by gxbitd --gpu (auto, sim or cuda); 1 for the one configured.",
		}, []string{"backend"}),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gxbit_jobs_total",
			Help: "Jobs finished, by mode (run, profile, accelerate, both) and outcome (succeeded, failed, cancelled, limit_exceeded, interrupted).",
		}, []string{"mode", "outcome"}),
		queued: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gxbit_jobs_queued",
			Help: "Jobs waiting for a worker.",
		}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gxbit_jobs_running",
			Help: "Jobs being executed.",
		}),
		workers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gxbit_workers",
			Help: "Size of the worker pool.",
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gxbit_submissions_rejected_total",
			Help: "Submissions rejected before a job was created, by gRPC status code.",
		}, []string{"code"}),
		jobDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gxbit_job_duration_seconds",
			Help:    "Wall time of finished jobs from start of execution to end, by mode.",
			Buckets: durationBuckets,
		}, []string{"mode"}),
		phaseDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gxbit_phase_duration_seconds",
			Help:    "Wall time of job phases (load, run, profile, accelerate).",
			Buckets: durationBuckets,
		}, []string{"phase"}),
		instructions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gxbit_guest_instructions_total",
			Help: "Guest x86-64 instructions executed by finished jobs, by mode.",
		}, []string{"mode"}),
		hotSpotsFound: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gxbit_hot_spots_found_total",
			Help: "Parallel loop nests (hot spots) found or loaded by finished jobs.",
		}),
		hotSpotsOffload: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gxbit_hot_spots_offloaded_total",
			Help: "Hot spots that ran on the GPU at least once, in finished jobs.",
		}),
		launches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gxbit_kernel_launches_total",
			Help: "GPU kernel launches by finished jobs, by GPU backend.",
		}, []string{"backend"}),
		kernelSeconds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gxbit_kernel_seconds_total",
			Help: "Time spent in GPU kernels by finished jobs, by GPU backend.",
		}, []string{"backend"}),
		copySeconds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gxbit_copy_seconds_total",
			Help: "Time spent copying between host and device by finished jobs, by GPU backend.",
		}, []string{"backend"}),
		translateSeconds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gxbit_translation_seconds_total",
			Help: "Time spent translating (decode, lift, optimize, PTX generation) by finished jobs.",
		}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gxbit_fallbacks_total",
			Help: "Hot-spot entries run on the CPU engine instead of the GPU, by reason.",
		}, []string{"reason"}),
		speedup: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "gxbit_accelerated_speedup_ratio",
			Help:    "Per finished accelerated job: plain CPU-engine wall time over accelerated wall time of the same program.",
			Buckets: speedupBuckets,
		}),
		kernelSpeedup: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "gxbit_kernel_speedup_ratio",
			Help:    "Per offloaded hot spot of a finished job: CPU-engine time of the loop over its kernel time.",
			Buckets: speedupBuckets,
		}),
		leaseExpiries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gxbit_lease_expiries_total",
			Help: "With a shared (PostgreSQL) store: leases of other replicas that ran out and this replica ended, by the job's state (running: marked interrupted; queued: queued again).",
		}, []string{"state"}),
	}
	buildInfo := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gxbit_build_info",
		Help: "Build information of the running gxbitd; always 1.",
	}, []string{"version", "revision", "goversion"})
	buildInfo.WithLabelValues(build.Version, build.Revision, build.GoVersion).Set(1)

	cs := []prometheus.Collector{
		buildInfo, m.gpuBackend, m.gpuRequested, m.jobs, m.queued, m.running, m.workers, m.rejected,
		m.jobDuration, m.phaseDuration, m.instructions, m.hotSpotsFound, m.hotSpotsOffload,
		m.launches, m.kernelSeconds, m.copySeconds, m.translateSeconds, m.fallbacks,
		m.speedup, m.kernelSpeedup, m.leaseExpiries,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering metrics: %w", err)
		}
	}
	m.setBackend("")
	m.leaseExpiries.WithLabelValues("running")
	m.leaseExpiries.WithLabelValues("queued")
	return m, nil
}

// SetGPURequested records the daemon's --gpu choice.
func (m *Metrics) SetGPURequested(g GPU) {
	m.gpuRequested.WithLabelValues(g.String()).Set(1)
}

// SetGPUBackend records the backend ("sim", "cuda" or "" for none) that the
// executor reports it uses. It must be called before any job runs; from then
// on jobs no longer change gxbit_gpu_backend_info.
func (m *Metrics) SetGPUBackend(backend string) {
	m.backendFixed = true
	m.setBackend(backend)
}

// setBackend marks backend as the one in use.
func (m *Metrics) setBackend(backend string) {
	if backend == "" {
		backend = "none"
	}
	for _, b := range []string{"none", "sim", "cuda"} {
		if b != backend {
			m.gpuBackend.WithLabelValues(b).Set(0)
		}
	}
	m.gpuBackend.WithLabelValues(backend).Set(1)
}

// jobFinished records one finished job.
func (m *Metrics) jobFinished(mode Mode, outcome string, seconds float64, ran bool, st Stats) {
	m.jobs.WithLabelValues(mode.String(), outcome).Inc()
	if !ran {
		return
	}
	m.jobDuration.WithLabelValues(mode.String()).Observe(seconds)
	for _, p := range st.Phases {
		m.phaseDuration.WithLabelValues(p.Phase.String()).Observe(p.Duration.Seconds())
	}
	m.instructions.WithLabelValues(mode.String()).Add(float64(st.GuestInstructions))
	m.hotSpotsFound.Add(float64(max(st.HotSpotsFound, 0)))
	m.hotSpotsOffload.Add(float64(max(st.HotSpotsOffloaded, 0)))
	if st.GPUBackend != "" {
		m.launches.WithLabelValues(st.GPUBackend).Add(float64(st.KernelLaunches))
		m.kernelSeconds.WithLabelValues(st.GPUBackend).Add(max(st.KernelTime.Seconds(), 0))
		m.copySeconds.WithLabelValues(st.GPUBackend).Add(max(st.CopyTime.Seconds(), 0))
		if !m.backendFixed {
			m.setBackend(st.GPUBackend)
		}
	}
	m.translateSeconds.Add(max(st.TranslationTime.Seconds(), 0))
	for reason, n := range st.Fallbacks {
		m.fallbacks.WithLabelValues(reason).Add(float64(n))
	}
	if outcome == outcomeSucceeded && (mode == ModeAccelerate || mode == ModeBoth) {
		if s := st.Speedup(); s > 0 {
			m.speedup.Observe(s)
		}
	}
	for _, s := range st.KernelSpeedups {
		if s > 0 {
			m.kernelSpeedup.Observe(s)
		}
	}
}
