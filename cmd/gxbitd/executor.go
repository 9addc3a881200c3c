package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
	"github.com/gxbit/gxbit/service"
	"github.com/gxbit/gxbit/service/daemon"
)

// executor runs jobs over the gxbit pipeline. Each job's guest sees the
// host directory --guest-root read-only, without the daemon's data
// directory (which holds the job database and every job's scratch
// directory). Each job gets a private scratch directory, mode 0700, for
// the files the translator writes (generated kernels), removed at its end.
type executor struct {
	root    string     // the guests' "/" on the host
	hide    []string   // the data and scratch directories, on the host
	scratch string     // the parent of the jobs' scratch directories
	cuda    gpu.Driver // the real GPU, shared by all jobs; nil without one
	cudaErr error      // why there is none
}

// newExecutor returns the service.Executor over the translator pipeline.
func newExecutor(cfg daemon.Config) (service.Executor, error) {
	root, err := filepath.Abs(cfg.GuestRoot)
	if err != nil {
		return nil, fmt.Errorf("--guest-root: %w", err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("--guest-root %s is not a directory", cfg.GuestRoot)
	}
	scratch, err := filepath.Abs(cfg.ScratchDir())
	if err != nil {
		return nil, err
	}
	e := &executor{root: root, scratch: scratch}
	data, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	// The sandbox hides them by identity, through any alias, inside the
	// guest root or not.
	e.hide = []string{data, scratch}
	e.cuda, e.cudaErr = pipeline.OpenGPU("cuda")
	return e, nil
}

// Execute runs one job.
func (e *executor) Execute(ctx context.Context, job service.JobSpec, stdout, stderr io.Writer, progress service.ProgressFunc) (service.Outcome, error) {
	name := "prog"
	if len(job.Argv) > 0 && job.Argv[0] != "" {
		name = filepath.Base(job.Argv[0])
	}
	scratch, err := os.MkdirTemp(e.scratch, "job-"+job.ID+"-")
	if err != nil {
		return service.Outcome{}, fmt.Errorf("the job's scratch directory: %w", err)
	}
	defer os.RemoveAll(scratch)
	cfg := pipeline.Config{
		Path: name, Binary: job.Binary, Args: job.Argv, Env: job.Env,
		Stdin: bytes.NewReader(job.Stdin), Stdout: stdout, Stderr: stderr,
		Root: e.root, Hide: e.hide, MaxMem: job.Limits.MemoryBytes, MaxInsns: job.Limits.Instructions,
	}
	progress(service.Progress{Phase: service.PhaseLoad})
	switch job.Mode {
	case service.ModeRun:
		return e.run(ctx, cfg, stderr, progress)
	case service.ModeProfile:
		out, _, err := e.profile(ctx, cfg, stderr, progress)
		return out, err
	case service.ModeAccelerate:
		if job.Profile == nil {
			return service.Outcome{}, fmt.Errorf("accelerate needs a profile: submit with --profile-from a profile job, or use mode both")
		}
		f, err := profile.Read(bytes.NewReader(job.Profile))
		if err != nil {
			return service.Outcome{}, fmt.Errorf("the profile: %w", err)
		}
		return e.accelerate(ctx, cfg, scratch, job.GPU, f, stderr, progress, nil)
	case service.ModeBoth:
		// Phase 1's run only finds the hot spots; the guest's output comes
		// from the accelerated run.
		quiet := cfg
		quiet.Stdout, quiet.Stderr = io.Discard, io.Discard
		quiet.Stdin = bytes.NewReader(job.Stdin)
		pout, f, err := e.profile(ctx, quiet, io.Discard, progress)
		if err != nil {
			return pout, err
		}
		return e.accelerate(ctx, cfg, scratch, job.GPU, f, stderr, progress, &pout)
	}
	return service.Outcome{}, fmt.Errorf("unknown mode %s", job.Mode)
}

// limitErr turns a run that hit a limit into the error the job manager
// expects, and reports the diagnosis of a faulting guest on its stderr. The
// callers still return the run's stats with the error, so that the metrics
// count the instructions of jobs stopped at a limit or cancelled.
func limitErr(ctx context.Context, res *pipeline.Result, stderr io.Writer) error {
	switch res.Outcome {
	case pipeline.OverBudget:
		return fmt.Errorf("after %d guest instructions: %w", res.Stats.GuestInstructions, service.ErrInstructionLimit)
	case pipeline.Cancelled:
		return ctx.Err()
	}
	if d := res.Diagnosis(); d != "" {
		fmt.Fprintf(stderr, "gxbit: %s\n", d)
	}
	return nil
}

// profile runs phase 1 and returns the profile as an artifact.
func (e *executor) profile(ctx context.Context, cfg pipeline.Config, stderr io.Writer, progress service.ProgressFunc) (service.Outcome, *profile.File, error) {
	progress(service.Progress{Phase: service.PhaseProfile})
	start := time.Now()
	res, f, err := pipeline.Profile(ctx, cfg, profile.Options{})
	if err != nil {
		return service.Outcome{}, nil, err
	}
	wall := time.Since(start)
	if err := limitErr(ctx, res, stderr); err != nil {
		return outcomeOf(res), nil, err
	}
	var pf, report bytes.Buffer
	if err := profile.Write(&pf, f); err != nil {
		return service.Outcome{}, nil, err
	}
	enc := json.NewEncoder(&report)
	enc.SetIndent("", "  ")
	if err := enc.Encode(profile.Report{Loops: f.Loops}); err != nil {
		return service.Outcome{}, nil, err
	}
	out := outcomeOf(res)
	out.Report = report.Bytes()
	out.Artifacts = []service.Artifact{{Name: "profile.json", Kind: service.ArtifactProfile, Data: pf.Bytes()}}
	for _, l := range f.Loops {
		if l.Verdict == "parallel" {
			out.Stats.HotSpotsFound++
		}
	}
	out.Stats.Phases = []service.PhaseTime{{Phase: service.PhaseProfile, Duration: wall}}
	progress(service.Progress{Phase: service.PhaseProfile, GuestInstructions: res.Stats.GuestInstructions, HotSpotsFound: out.Stats.HotSpotsFound})
	return out, f, nil
}

// accelerate runs phase 2 with profile f, writing the kernels under the
// job's scratch directory. before, for mode both, is the outcome of the
// profiling run, whose artifacts and phase time it keeps.
func (e *executor) accelerate(ctx context.Context, cfg pipeline.Config, scratch string, choice service.GPU, f *profile.File, stderr io.Writer, progress service.ProgressFunc, before *service.Outcome) (service.Outcome, error) {
	drv, err := e.driver(choice)
	if err != nil {
		return service.Outcome{}, err
	}
	ptxDir := filepath.Join(scratch, "ptx")
	if err := os.Mkdir(ptxDir, 0o700); err != nil {
		return service.Outcome{}, fmt.Errorf("the job's kernel directory: %w", err)
	}
	progress(service.Progress{Phase: service.PhaseAccelerate})
	start := time.Now()
	res, rep, err := pipeline.Accelerate(ctx, cfg, accel.Options{Profile: f, Driver: drv, PTXDir: ptxDir, WetProbes: pipeline.WetProbesFor(drv), CostsCache: pipeline.CostsCache()})
	if err != nil {
		return service.Outcome{}, err
	}
	wall := time.Since(start)
	out := outcomeOf(res)
	if before != nil {
		out.Stats.GuestInstructions += before.Stats.GuestInstructions
	}
	if err := limitErr(ctx, res, stderr); err != nil {
		return service.Outcome{Stats: service.Stats{GuestInstructions: out.Stats.GuestInstructions}}, err
	}
	if before != nil {
		out.Artifacts = before.Artifacts
		out.Stats.Phases = before.Stats.Phases
	}
	out.Stats.Phases = append(out.Stats.Phases, service.PhaseTime{Phase: service.PhaseAccelerate, Duration: wall})
	out.Stats.GPUBackend = drv.Name()
	out.Stats.AcceleratedTime = wall
	out.Stats.Fallbacks = map[string]uint64{}
	cpuEstimate := wall
	for _, h := range rep.HotSpots {
		if h.Offloadable {
			out.Stats.HotSpotsFound++
		}
		if h.Launches > 0 {
			out.Stats.HotSpotsOffloaded++
			if sp := h.KernelSpeedup(); sp > 0 {
				out.Stats.KernelSpeedups = append(out.Stats.KernelSpeedups, sp)
			}
		}
		out.Stats.KernelLaunches += uint64(h.Launches)
		out.Stats.KernelTime += seconds(h.KernelSeconds)
		out.Stats.CopyTime += seconds(h.CopySeconds)
		out.Stats.TranslationTime += seconds(h.TranslateSeconds)
		for reason, n := range h.FallbackReasons {
			out.Stats.Fallbacks[reason] += uint64(n)
		}
		// What the plain CPU engine would have taken: the accelerated run
		// without its GPU work, plus the CPU time the offloaded loops need.
		cpuEstimate += seconds(h.CPUSecondsEstimate - h.KernelSeconds - h.CopySeconds - h.TranslateSeconds)
	}
	out.Stats.CPUEngineTime = cpuEstimate
	report, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return service.Outcome{}, err
	}
	out.Report = report
	ptx, err := os.ReadDir(ptxDir)
	if err != nil {
		return service.Outcome{}, err
	}
	sort.Slice(ptx, func(i, j int) bool { return ptx[i].Name() < ptx[j].Name() })
	for _, p := range ptx {
		data, err := os.ReadFile(filepath.Join(ptxDir, p.Name()))
		if err != nil {
			return service.Outcome{}, err
		}
		out.Artifacts = append(out.Artifacts, service.Artifact{Name: p.Name(), Kind: service.ArtifactPTX, Data: data})
	}
	progress(service.Progress{Phase: service.PhaseAccelerate, GuestInstructions: res.Stats.GuestInstructions,
		HotSpotsFound: out.Stats.HotSpotsFound, HotSpotsOffloaded: out.Stats.HotSpotsOffloaded, KernelLaunches: out.Stats.KernelLaunches})
	return out, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// driver returns the GPU driver for a job: a fresh simulator per job, or
// the daemon's one real GPU driver.
func (e *executor) driver(choice service.GPU) (gpu.Driver, error) {
	switch choice {
	case service.GPUSim:
		return pipeline.OpenGPU("sim")
	case service.GPUCUDA:
		if e.cuda == nil {
			return nil, fmt.Errorf("no CUDA GPU on this host: %v", e.cudaErr)
		}
		return e.cuda, nil
	}
	if e.cuda != nil {
		return e.cuda, nil
	}
	return pipeline.OpenGPU("sim")
}

// GPUBackend reports the driver "auto" jobs use: "cuda" or "sim".
func (e *executor) GPUBackend() string {
	if e.cuda != nil {
		return "cuda"
	}
	return "sim"
}

func (e *executor) run(ctx context.Context, cfg pipeline.Config, stderr io.Writer, progress service.ProgressFunc) (service.Outcome, error) {
	progress(service.Progress{Phase: service.PhaseRun})
	start := time.Now()
	res, err := pipeline.Run(ctx, cfg)
	if err != nil {
		return service.Outcome{}, err
	}
	wall := time.Since(start)
	if err := limitErr(ctx, res, stderr); err != nil {
		return outcomeOf(res), err
	}
	out := outcomeOf(res)
	out.Stats.CPUEngineTime = wall
	out.Stats.Phases = []service.PhaseTime{{Phase: service.PhaseRun, Duration: wall}}
	report, err := json.MarshalIndent(runReport(res, wall), "", "  ")
	if err != nil {
		return service.Outcome{}, err
	}
	out.Report = report
	return out, nil
}

// outcomeOf turns a pipeline result into the job's exit status and stats.
func outcomeOf(res *pipeline.Result) service.Outcome {
	out := service.Outcome{ExitCode: res.ExitStatus, Signal: res.Signal}
	if res.Signal != 0 {
		out.ExitCode = 0 // the signal says how the guest ended
	}
	out.Stats.GuestInstructions = res.Stats.GuestInstructions
	return out
}

// runReport is the report.json of a run job.
func runReport(res *pipeline.Result, wall time.Duration) map[string]any {
	calls := map[string]uint64{}
	for _, c := range res.Stats.Syscalls {
		calls[c.Name] = c.Count
	}
	r := map[string]any{
		"exit_status":        res.ExitStatus,
		"guest_instructions": res.Stats.GuestInstructions,
		"blocks_translated":  res.Stats.BlocksTranslated,
		"wall_seconds":       wall.Seconds(),
		"syscalls":           calls,
	}
	if d := res.Diagnosis(); d != "" {
		r["diagnosis"] = d
	}
	return r
}
