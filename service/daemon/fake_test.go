package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gxbit/gxbit/service"
)

// fakeExecutor is a TEST DOUBLE of the translator pipeline. It does not
// translate anything: it "runs" a job by echoing its argv and stdin, and
// obeys commands in argv so the tests can drive every path of the daemon:
//
//	exit=N      exit with status N
//	sleep=D     wait D (or until cancelled)
//	spin        wait until cancelled (reporting 42 instructions executed)
//	mem         fail with service.ErrMemoryLimit
//	instr=N     "execute" N instructions; over the limit fails with ErrInstructionLimit
//	            after executing as many as the limit allows
//	flood=N     write N bytes to stdout
//	crash       fail with an ordinary error
//	panic       panic
//
// Profile, accelerate and both modes return made-up artifacts and stats
// derived from the binary's hash, so tests can check they arrive intact.
type fakeExecutor struct {
	started chan string // receives the id of each job as it starts, if non-nil
}

func (f *fakeExecutor) GPUBackend() string { return "sim" }

func (f *fakeExecutor) Execute(ctx context.Context, job service.JobSpec, stdout, stderr io.Writer, progress service.ProgressFunc) (service.Outcome, error) {
	if f.started != nil {
		select {
		case f.started <- job.ID:
		default:
		}
	}
	start := time.Now()
	progress(service.Progress{Phase: service.PhaseLoad, Detail: "loading"})
	fmt.Fprintf(stdout, "argv: %s\n", strings.Join(job.Argv, " "))
	if len(job.Stdin) > 0 {
		fmt.Fprintf(stdout, "stdin: %s", job.Stdin)
	}
	if job.Profile != nil {
		fmt.Fprintf(stdout, "profile: %s", job.Profile)
	}
	for _, e := range job.Env {
		fmt.Fprintf(stdout, "env: %s\n", e)
	}
	fmt.Fprintf(stderr, "mode=%s gpu=%s\n", job.Mode, job.GPU)
	exit := 0
	var instructions uint64 = 1000
	for _, a := range job.Argv[1:] {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "exit":
			exit, _ = strconv.Atoi(v)
		case "sleep", "spin":
			d, _ := time.ParseDuration(v)
			var timer <-chan time.Time
			if k == "sleep" {
				timer = time.After(d)
			}
			progress(service.Progress{Phase: service.PhaseRun, GuestInstructions: 42, Detail: "waiting"})
			select {
			case <-timer:
			case <-ctx.Done():
				// A stopped guest still reports what it executed.
				return service.Outcome{Stats: service.Stats{GuestInstructions: 42}}, fmt.Errorf("guest stopped: %w", context.Cause(ctx))
			}
		case "mem":
			return service.Outcome{}, fmt.Errorf("mmap of 2 GiB at 0x7f0000000000: %w", service.ErrMemoryLimit)
		case "instr":
			n, _ := strconv.ParseUint(v, 10, 64)
			if n > job.Limits.Instructions {
				return service.Outcome{Stats: service.Stats{GuestInstructions: job.Limits.Instructions}},
					fmt.Errorf("stopped at 0x401000 after %d instructions: %w", job.Limits.Instructions, service.ErrInstructionLimit)
			}
			instructions = n
		case "flood":
			n, _ := strconv.Atoi(v)
			chunk := []byte(strings.Repeat("x", 1023) + "\n")
			for n > 0 {
				m := min(n, len(chunk))
				if _, err := stdout.Write(chunk[:m]); err != nil {
					return service.Outcome{}, fmt.Errorf("guest write: %w", err)
				}
				n -= m
			}
		case "crash":
			return service.Outcome{}, fmt.Errorf("unsupported instruction at 0x401234: vfmadd231ps")
		case "panic":
			panic("fake executor told to panic")
		}
	}
	sum := sha256.Sum256(job.Binary)
	out := service.Outcome{ExitCode: exit}
	st := &out.Stats
	st.GuestInstructions = instructions
	st.Phases = append(st.Phases, service.PhaseTime{Phase: service.PhaseLoad, Duration: time.Millisecond})
	report := map[string]any{"mode": job.Mode.String(), "binary_sha256": fmt.Sprintf("%x", sum), "argv": job.Argv}
	if job.Mode == service.ModeProfile || job.Mode == service.ModeBoth {
		progress(service.Progress{Phase: service.PhaseProfile, GuestInstructions: instructions, HotSpotsFound: 2})
		st.HotSpotsFound = 2
		st.Phases = append(st.Phases, service.PhaseTime{Phase: service.PhaseProfile, Duration: 3 * time.Millisecond})
		out.Artifacts = append(out.Artifacts, service.Artifact{Name: "profile.gxp", Kind: service.ArtifactProfile, Data: fmt.Appendf(nil, "gxbit-profile v1\nbinary %x\nhotspots 2\n", sum)})
	}
	if job.Mode == service.ModeAccelerate || job.Mode == service.ModeBoth {
		progress(service.Progress{Phase: service.PhaseAccelerate, GuestInstructions: instructions, HotSpotsFound: 2, HotSpotsOffloaded: 1, KernelLaunches: 4})
		st.HotSpotsFound = 2
		st.HotSpotsOffloaded = 1
		st.KernelLaunches = 4
		st.KernelTime = 2 * time.Millisecond
		st.CopyTime = time.Millisecond
		st.TranslationTime = 5 * time.Millisecond
		st.AcceleratedTime = 10 * time.Millisecond
		st.CPUEngineTime = 40 * time.Millisecond // speedup 4
		st.KernelSpeedups = []float64{8}
		st.Fallbacks = map[string]uint64{"guard_alias": 1}
		st.GPUBackend = "sim"
		st.Phases = append(st.Phases, service.PhaseTime{Phase: service.PhaseAccelerate, Duration: 10 * time.Millisecond})
		for _, entry := range []string{"hot_401000", "hot_401200"} {
			out.Artifacts = append(out.Artifacts, service.Artifact{Name: entry + ".ptx", Kind: service.ArtifactPTX,
				Data: fmt.Appendf(nil, "// %s of binary %x\n.version 8.0\n.target sm_80\n.address_size 64\n", entry, sum)})
		}
		report["speedup"] = st.Speedup()
	}
	if job.Mode == service.ModeRun {
		st.Phases = append(st.Phases, service.PhaseTime{Phase: service.PhaseRun, Duration: time.Since(start)})
	}
	out.Report, _ = json.Marshal(report)
	return out, nil
}
