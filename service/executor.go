// Package service is the daemon side of gxbit: the gRPC JobService, the job
// manager with its bounded worker pool, and the Prometheus metrics of gxbitd.
//
// The translator pipeline is reached only through the Executor interface, so
// the daemon can be built and tested without it; the commands plug the real
// pipeline in. Job records and artifacts are kept by package service/store.
package service

import (
	"context"
	"errors"
	"io"
	"time"
)

// Mode says what a job does with its program.
type Mode int

// The job modes.
const (
	// ModeRun runs the program on the CPU engine.
	ModeRun Mode = iota + 1
	// ModeProfile runs phase 1 and writes a profile.
	ModeProfile
	// ModeAccelerate runs phase 2, offloading hot spots to the GPU.
	ModeAccelerate
	// ModeBoth profiles and then accelerates in one job.
	ModeBoth
)

// String returns the mode's name as the CLI and the metrics spell it.
func (m Mode) String() string {
	switch m {
	case ModeRun:
		return "run"
	case ModeProfile:
		return "profile"
	case ModeAccelerate:
		return "accelerate"
	case ModeBoth:
		return "both"
	}
	return "unknown"
}

// GPU chooses the GPU driver for a job's kernels.
type GPU int

// The GPU choices.
const (
	// GPUAuto uses a real GPU when one is present, else the simulator.
	GPUAuto GPU = iota + 1
	// GPUSim uses the in-process simulated GPU.
	GPUSim
	// GPUCUDA uses a real NVIDIA GPU through the CUDA driver API.
	GPUCUDA
)

// String returns the choice's name as the CLI spells it.
func (g GPU) String() string {
	switch g {
	case GPUAuto:
		return "auto"
	case GPUSim:
		return "sim"
	case GPUCUDA:
		return "cuda"
	}
	return "unknown"
}

// Limits bound one job. The job manager fills every field before calling
// the Executor; a zero field never reaches it.
type Limits struct {
	// MemoryBytes bounds the guest's memory.
	MemoryBytes uint64
	// Instructions bounds the guest instructions executed.
	Instructions uint64
	// WallTime bounds the execution's wall-clock time. The job manager
	// enforces it through the context's deadline as well.
	WallTime time.Duration
}

// JobSpec is everything an Executor needs to run one job.
type JobSpec struct {
	// ID is the job's identifier, for logs.
	ID string
	// Binary is the uploaded x86-64 ELF executable. It has been checked with
	// debug/elf: ELFCLASS64, EM_X86_64, ET_EXEC or ET_DYN with an entry point.
	// The Executor must not modify it.
	Binary []byte
	// Argv is the guest's argv; Argv[0] is the name the guest sees.
	Argv []string
	// Env is the guest's environment, "KEY=value" entries.
	Env []string
	// Stdin is the guest's whole standard input.
	Stdin []byte
	// Mode is what to do with the program.
	Mode Mode
	// GPU is the GPU driver choice (accelerate and both modes).
	GPU GPU
	// Limits are the job's effective limits.
	Limits Limits
	// Profile is, for ModeAccelerate, the profile file (phase 1's output)
	// of the job the submission named; nil when it named none, and the
	// Executor then decides (profile first, or fail).
	Profile []byte
}

// Phase is a stage of a job's execution.
type Phase int

// The phases, as reported in Progress and Stats.
const (
	// PhaseLoad is loading the ELF image.
	PhaseLoad Phase = iota + 1
	// PhaseRun is plain execution on the CPU engine.
	PhaseRun
	// PhaseProfile is phase 1.
	PhaseProfile
	// PhaseAccelerate is phase 2.
	PhaseAccelerate
)

// String returns the phase's name as the metrics spell it.
func (p Phase) String() string {
	switch p {
	case PhaseLoad:
		return "load"
	case PhaseRun:
		return "run"
	case PhaseProfile:
		return "profile"
	case PhaseAccelerate:
		return "accelerate"
	}
	return "unknown"
}

// Progress is a running job's progress, reported by the Executor as often as
// it likes; the job manager forwards at most a few updates a second.
type Progress struct {
	Phase             Phase
	GuestInstructions uint64
	HotSpotsFound     int
	HotSpotsOffloaded int
	KernelLaunches    uint64
	// Detail is free-form text for people.
	Detail string
}

// ProgressFunc receives progress reports. It is safe for concurrent use and
// returns quickly.
type ProgressFunc func(Progress)

// ArtifactKind classifies an artifact.
type ArtifactKind int

// The artifact kinds.
const (
	// ArtifactProfile is the versioned profile file of phase 1.
	ArtifactProfile ArtifactKind = iota + 1
	// ArtifactReport is the job's JSON report.
	ArtifactReport
	// ArtifactPTX is one generated PTX kernel, named "<entry>.ptx".
	ArtifactPTX
	// ArtifactOther is anything else.
	ArtifactOther
)

// Artifact is one file a job produced.
type Artifact struct {
	// Name is a plain file name: no path separators, not "." or "..".
	Name string
	Kind ArtifactKind
	Data []byte
}

// PhaseTime is the wall time one phase took.
type PhaseTime struct {
	Phase    Phase
	Duration time.Duration
}

// Stats are the numbers of one finished execution that the metrics and the
// job record need. Zero means "not measured" or "none".
type Stats struct {
	// GuestInstructions counts guest instructions executed, in all phases.
	GuestInstructions uint64
	// AcceleratedTime is the wall time of the accelerated execution
	// (accelerate and both modes).
	AcceleratedTime time.Duration
	// CPUEngineTime is the wall time of a plain CPU-engine execution of the
	// same program and input; with AcceleratedTime it gives the job's speedup.
	CPUEngineTime time.Duration
	// HotSpotsFound counts parallel loop nests found (profile, both) or
	// loaded from the profile (accelerate).
	HotSpotsFound int
	// HotSpotsOffloaded counts hot spots that ran on the GPU at least once.
	HotSpotsOffloaded int
	// KernelLaunches counts kernel launches.
	KernelLaunches uint64
	// KernelTime, CopyTime and TranslationTime are time spent in kernels, in
	// host-device copies, and in translation (decode, lift, optimize, ptxgen).
	KernelTime, CopyTime, TranslationTime time.Duration
	// Fallbacks counts hot-spot entries that ran on the CPU engine instead,
	// by reason (a short snake_case word such as "guard_bounds").
	Fallbacks map[string]uint64
	// KernelSpeedups holds, per offloaded hot spot, the CPU-engine time of
	// the loop over its kernel time.
	KernelSpeedups []float64
	// GPUBackend is the driver used: "sim", "cuda", or "" when none was.
	GPUBackend string
	// Phases are the wall times of the phases the job went through.
	Phases []PhaseTime
}

// Speedup is CPUEngineTime over AcceleratedTime, or 0 when either is unknown.
func (s Stats) Speedup() float64 {
	if s.CPUEngineTime <= 0 || s.AcceleratedTime <= 0 {
		return 0
	}
	return s.CPUEngineTime.Seconds() / s.AcceleratedTime.Seconds()
}

// Outcome is the result of an execution that ran the guest to its end.
type Outcome struct {
	// ExitCode is the guest's exit status (0-255).
	ExitCode int
	// Signal is the signal that ended the guest, 0 when it exited.
	Signal int
	// Report is the job's JSON report; the job manager stores it as the
	// artifact "report.json" unless Artifacts already has one by that name.
	Report []byte
	// Artifacts are the files the job produced: the profile file, the
	// report, "<entry>.ptx" kernels.
	Artifacts []Artifact
	// Stats are the execution's numbers.
	Stats Stats
}

// Executor runs jobs. The daemon calls Execute from several workers at once.
//
// Execute runs job and returns its Outcome when the guest ran to its end,
// whatever its exit status. The guest's output goes to stdout and stderr as
// it is produced (each write is one chunk in the job's output log). Execute
// returns promptly once ctx is done, with an error wrapping ctx's error. An
// error that wraps ErrMemoryLimit or ErrInstructionLimit ends the job as over
// that limit; any other error fails the job with the error's text. With an
// error, the Outcome's Stats still say what the guest executed before it
// stopped (the metrics count it); the rest of the Outcome is ignored.
type Executor interface {
	Execute(ctx context.Context, job JobSpec, stdout, stderr io.Writer, progress ProgressFunc) (Outcome, error)
}

// ErrMemoryLimit is wrapped by an Executor's error when the guest exceeded
// its memory limit.
var ErrMemoryLimit = errors.New("memory limit exceeded")

// ErrInstructionLimit is wrapped by an Executor's error when the guest
// exceeded its instruction limit.
var ErrInstructionLimit = errors.New("instruction limit exceeded")
