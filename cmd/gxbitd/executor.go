package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/service"
	"github.com/gxbit/gxbit/service/daemon"
)

// executor runs jobs over the gxbit pipeline. Each job's guest sees the
// host file system read-only, without the daemon's data directory.
type executor struct {
	hide []string
}

// newExecutor returns the service.Executor over the translator pipeline.
func newExecutor(cfg daemon.Config) (service.Executor, error) {
	abs, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	return &executor{hide: []string{abs}}, nil
}

// Execute runs one job.
func (e *executor) Execute(ctx context.Context, job service.JobSpec, stdout, stderr io.Writer, progress service.ProgressFunc) (service.Outcome, error) {
	name := "prog"
	if len(job.Argv) > 0 && job.Argv[0] != "" {
		name = filepath.Base(job.Argv[0])
	}
	cfg := pipeline.Config{
		Path: name, Binary: job.Binary, Args: job.Argv, Env: job.Env,
		Stdin: bytes.NewReader(job.Stdin), Stdout: stdout, Stderr: stderr,
		Hide: e.hide, MaxMem: job.Limits.MemoryBytes, MaxInsns: job.Limits.Instructions,
	}
	progress(service.Progress{Phase: service.PhaseLoad})
	switch job.Mode {
	case service.ModeRun:
		return e.run(ctx, cfg, stderr, progress)
	}
	return service.Outcome{}, fmt.Errorf("mode %s is not available in this build", job.Mode)
}

func (e *executor) run(ctx context.Context, cfg pipeline.Config, stderr io.Writer, progress service.ProgressFunc) (service.Outcome, error) {
	progress(service.Progress{Phase: service.PhaseRun})
	start := time.Now()
	res, err := pipeline.Run(ctx, cfg)
	if err != nil {
		return service.Outcome{}, err
	}
	wall := time.Since(start)
	if res.Outcome == pipeline.OverBudget {
		return service.Outcome{}, fmt.Errorf("after %d guest instructions: %w", res.Stats.GuestInstructions, service.ErrInstructionLimit)
	}
	if res.Outcome == pipeline.Cancelled {
		return service.Outcome{}, ctx.Err()
	}
	if d := res.Diagnosis(); d != "" {
		fmt.Fprintf(stderr, "gxbit: %s\n", d)
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
