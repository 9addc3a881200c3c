package client

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/gxbit/gxbit/api"
	"github.com/gxbit/gxbit/service/bytesize"
)

// uploadChunk is the size of one upload message.
const uploadChunk = 1 << 20

// uploadTimeout bounds a whole upload.
const uploadTimeout = 10 * time.Minute

// stringList is a repeatable string flag.
type stringList []string

// String implements flag.Value.
func (l *stringList) String() string { return strings.Join(*l, ",") }

// Set implements flag.Value; each use of the flag adds one string.
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

func parseMode(s string) (api.Mode, error) {
	switch s {
	case "run":
		return api.Mode_MODE_RUN, nil
	case "profile":
		return api.Mode_MODE_PROFILE, nil
	case "accelerate":
		return api.Mode_MODE_ACCELERATE, nil
	case "both":
		return api.Mode_MODE_BOTH, nil
	}
	return 0, fmt.Errorf("unknown mode %q (want run, profile, accelerate or both)", s)
}

func parseGPU(s string) (api.GpuBackend, error) {
	switch s {
	case "":
		return api.GpuBackend_GPU_BACKEND_UNSPECIFIED, nil
	case "auto":
		return api.GpuBackend_GPU_BACKEND_AUTO, nil
	case "sim":
		return api.GpuBackend_GPU_BACKEND_SIM, nil
	case "cuda":
		return api.GpuBackend_GPU_BACKEND_CUDA, nil
	}
	return 0, fmt.Errorf("unknown GPU backend %q (want auto, sim or cuda)", s)
}

// Submit implements `gxbit submit [flags] PROG [ARGS...]`: it uploads PROG,
// follows the job (a progress display when stderr is a terminal, plain
// status lines otherwise), prints the guest's output, and returns the
// guest's exit status. When ctx is cancelled (SIGINT) it cancels the job.
func Submit(ctx context.Context, args []string, o IO) int {
	fs := newFlagSet("submit", "[flags] PROG [ARGS...]", o)
	var c common
	c.register(fs, o)
	mode := fs.String("mode", "run", "what to do: run, profile, accelerate or both")
	gpu := fs.String("gpu", "", "GPU backend: auto, sim or cuda (default: the server's)")
	var mem bytesize.Value
	fs.Var(&mem, "memory", "guest memory limit (`bytes`, e.g. 512MiB; default: the server's)")
	instr := fs.Uint64("instructions", 0, "guest instruction limit (default: the server's)")
	timeout := fs.Duration("timeout", 0, "wall-time limit (default: the server's)")
	stdinFile := fs.String("stdin", "", "`file` to send as the guest's standard input (\"-\" for this process's); default none")
	var env stringList
	fs.Var(&env, "env", "`KEY=VALUE` for the guest's environment (repeatable)")
	argv0 := fs.String("argv0", "", "argv[0] the guest sees (default: PROG's base name)")
	profileFrom := fs.String("profile-from", "", "accelerate with the profile of the finished profile or both job `ID`")
	detach := fs.Bool("detach", false, "print the job id and return without following the job")
	quiet := fs.Bool("quiet", false, "no progress display or status lines")
	if err := fs.Parse(args); err != nil {
		return usageStatus(err)
	}
	if fs.NArg() < 1 {
		fmt.Fprintln(o.Stderr, "gxbit submit: missing PROG")
		fs.Usage()
		return ExitUsage
	}
	m, err := parseMode(*mode)
	if err != nil {
		fmt.Fprintf(o.Stderr, "gxbit submit: --mode: %v\n", err)
		return ExitUsage
	}
	g, err := parseGPU(*gpu)
	if err != nil {
		fmt.Fprintf(o.Stderr, "gxbit submit: --gpu: %v\n", err)
		return ExitUsage
	}
	if *timeout < 0 {
		fmt.Fprintf(o.Stderr, "gxbit submit: --timeout: %v is negative\n", *timeout)
		return ExitUsage
	}
	prog := fs.Arg(0)
	binary, err := os.ReadFile(prog)
	if err != nil {
		fmt.Fprintf(o.Stderr, "gxbit submit: %v\n", err)
		return ExitError
	}
	var stdin []byte
	switch *stdinFile {
	case "":
	case "-":
		if stdin, err = io.ReadAll(o.Stdin); err != nil {
			fmt.Fprintf(o.Stderr, "gxbit submit: reading standard input: %v\n", err)
			return ExitError
		}
	default:
		if stdin, err = os.ReadFile(*stdinFile); err != nil {
			fmt.Fprintf(o.Stderr, "gxbit submit: --stdin: %v\n", err)
			return ExitError
		}
	}
	name := filepath.Base(prog)
	argv := append([]string{name}, fs.Args()[1:]...)
	if *argv0 != "" {
		argv[0] = *argv0
	}
	spec := &api.JobSpec{
		Name:         name,
		Argv:         argv,
		Env:          env,
		Mode:         m,
		Gpu:          g,
		Limits:       &api.Limits{MemoryBytes: mem.N, Instructions: *instr},
		BinarySize:   uint64(len(binary)),
		StdinSize:    uint64(len(stdin)),
		ProfileJobId: *profileFrom,
	}
	if *timeout > 0 {
		spec.Limits.WallTime = durationpb.New(*timeout)
	}
	return withServer(ctx, o, c, func(ctx context.Context, cl api.JobServiceClient) int {
		// The upload is not interrupted by ctx: once the server has the
		// whole upload it may create the job before its answer arrives, and
		// a job whose id the client never learnt could not be cancelled.
		// An interrupt during the upload cancels the job right after it.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), uploadTimeout)
		resp, err := upload(uctx, cl, spec, binary, stdin)
		cancel()
		if err != nil {
			return rpcError(o, "submit "+prog, err)
		}
		id := resp.GetJobId()
		if *detach && ctx.Err() == nil {
			if c.json {
				if err := printJSON(o.Stdout, resp.GetJob()); err != nil {
					fmt.Fprintf(o.Stderr, "gxbit: %v\n", err)
					return ExitError
				}
			} else {
				fmt.Fprintln(o.Stdout, id)
			}
			return ExitOK
		}
		return follow(ctx, cl, id, o, c.json, *quiet)
	})
}

// upload sends one SubmitJob stream: the spec, then the binary and stdin.
func upload(ctx context.Context, cl api.JobServiceClient, spec *api.JobSpec, binary, stdin []byte) (*api.SubmitJobResponse, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := cl.SubmitJob(ctx)
	if err != nil {
		return nil, err
	}
	send := func(m *api.SubmitJobRequest) error {
		if err := stream.Send(m); err != nil {
			if errors.Is(err, io.EOF) {
				// The server ended the call early; its status is in CloseAndRecv.
				_, err = stream.CloseAndRecv()
			}
			return err
		}
		return nil
	}
	if err := send(&api.SubmitJobRequest{Payload: &api.SubmitJobRequest_Spec{Spec: spec}}); err != nil {
		return nil, err
	}
	for b := binary; len(b) > 0; {
		n := min(len(b), uploadChunk)
		if err := send(&api.SubmitJobRequest{Payload: &api.SubmitJobRequest_BinaryChunk{BinaryChunk: b[:n]}}); err != nil {
			return nil, err
		}
		b = b[n:]
	}
	for b := stdin; len(b) > 0; {
		n := min(len(b), uploadChunk)
		if err := send(&api.SubmitJobRequest{Payload: &api.SubmitJobRequest_StdinChunk{StdinChunk: b[:n]}}); err != nil {
			return nil, err
		}
		b = b[n:]
	}
	return stream.CloseAndRecv()
}

// follow watches job id to its end, printing its output, and returns the
// exit status that reflects it.
func follow(ctx context.Context, cl api.JobServiceClient, id string, o IO, asJSON, quiet bool) int {
	watchCtx, cancelWatch := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWatch()
	stream, err := cl.WatchJob(watchCtx, &api.WatchJobRequest{JobId: id})
	if err != nil {
		return rpcError(o, "watch job "+id, err)
	}
	width, tty := o.terminal()
	d := &display{o: o, id: id, tty: tty && !quiet && !asJSON, plain: !tty && !quiet && !asJSON, width: width, start: time.Now(), atLineStart: true}

	type recvd struct {
		ev  *api.JobEvent
		err error
	}
	events := make(chan recvd)
	go func() {
		for {
			ev, err := stream.Recv()
			select {
			case events <- recvd{ev, err}:
			case <-watchCtx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	done := ctx.Done()
	for {
		select {
		case <-done:
			done = nil // cancel once, then keep following to the end
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			_, err := cl.CancelJob(cctx, &api.CancelJobRequest{JobId: id})
			cancel()
			if err != nil {
				d.clear()
				return rpcError(o, "cancel job "+id, err)
			}
		case <-tick.C:
			d.redraw()
		case r := <-events:
			if r.err != nil {
				d.clear()
				if errors.Is(r.err, io.EOF) {
					fmt.Fprintf(o.Stderr, "gxbit: job %s: the watch ended before the job did; see `gxbit job %s`\n", id, id)
					return ExitError
				}
				return rpcError(o, "watch job "+id, r.err)
			}
			switch ev := r.ev.GetEvent().(type) {
			case *api.JobEvent_Output:
				if !asJSON {
					d.output(ev.Output)
				}
			case *api.JobEvent_State:
				d.stateChanged(ev.State)
			case *api.JobEvent_Progress:
				d.progressed(ev.Progress)
			case *api.JobEvent_Finished:
				job := ev.Finished.GetJob()
				d.finished(job)
				if asJSON {
					if err := printJSON(o.Stdout, job); err != nil {
						fmt.Fprintf(o.Stderr, "gxbit: %v\n", err)
						return ExitError
					}
				}
				return exitStatus(job)
			}
		}
	}
}

// display draws a job's progress on stderr: one redrawn line on a
// terminal, plain status lines otherwise.
type display struct {
	o           IO
	id          string
	tty, plain  bool
	width       int
	start       time.Time
	state       api.JobState
	prog        *api.Progress
	shown       bool // a status line is on the terminal
	atLineStart bool // the guest's last output ended a line
}

func (d *display) clear() {
	if d.shown {
		fmt.Fprint(d.o.Stderr, "\r\x1b[K")
		d.shown = false
	}
}

func (d *display) redraw() {
	if !d.tty || !d.atLineStart || d.state == api.JobState_JOB_STATE_UNSPECIFIED {
		return
	}
	line := fmt.Sprintf("gxbit: %s %s %.1fs", shortID(d.id), stateName(d.state), time.Since(d.start).Seconds())
	if p := d.prog; p != nil && d.state == api.JobState_JOB_STATE_RUNNING {
		line += fmt.Sprintf(" · %s · %s instr", phaseName(p.GetPhase()), humanCount(p.GetGuestInstructions()))
		if p.GetHotSpotsFound() > 0 || p.GetHotSpotsOffloaded() > 0 {
			line += fmt.Sprintf(" · hot spots %d found, %d offloaded", p.GetHotSpotsFound(), p.GetHotSpotsOffloaded())
		}
		if p.GetKernelLaunches() > 0 {
			line += fmt.Sprintf(" · %d launches", p.GetKernelLaunches())
		}
		if p.GetDetail() != "" {
			line += " · " + p.GetDetail()
		}
	}
	if r := []rune(line); d.width > 1 && len(r) > d.width-1 {
		line = string(r[:d.width-1])
	}
	fmt.Fprintf(d.o.Stderr, "\r\x1b[K%s", line)
	d.shown = true
}

func (d *display) output(c *api.OutputChunk) {
	if len(c.GetData()) == 0 {
		return
	}
	d.clear()
	w := d.o.Stdout
	if c.GetStream() == api.Stream_STREAM_STDERR {
		w = d.o.Stderr
	}
	w.Write(c.GetData())
	d.atLineStart = c.GetData()[len(c.GetData())-1] == '\n'
	d.redraw()
}

func (d *display) stateChanged(s *api.StateChange) {
	if s.GetState() == d.state {
		return
	}
	d.state = s.GetState()
	if d.plain && (d.state == api.JobState_JOB_STATE_QUEUED || d.state == api.JobState_JOB_STATE_RUNNING) {
		fmt.Fprintf(d.o.Stderr, "gxbit: job %s %s\n", d.id, stateName(d.state))
	}
	d.redraw()
}

func (d *display) progressed(p *api.Progress) {
	if d.plain && (d.prog == nil || d.prog.GetPhase() != p.GetPhase()) && p.GetPhase() != api.Phase_PHASE_UNSPECIFIED {
		fmt.Fprintf(d.o.Stderr, "gxbit: job %s phase %s\n", d.id, phaseName(p.GetPhase()))
	}
	d.prog = p
	d.redraw()
}

func (d *display) finished(j *api.Job) {
	d.clear()
	if !d.tty && !d.plain {
		if j.GetState() != api.JobState_JOB_STATE_SUCCEEDED && j.GetMessage() != "" {
			fmt.Fprintf(d.o.Stderr, "gxbit: job %s %s: %s\n", j.GetId(), stateName(j.GetState()), j.GetMessage())
		}
		return
	}
	if !d.atLineStart {
		fmt.Fprintln(d.o.Stderr)
	}
	line := fmt.Sprintf("gxbit: job %s %s", j.GetId(), stateName(j.GetState()))
	if j.GetStartedAt() != nil && j.GetFinishedAt() != nil {
		line += fmt.Sprintf(" in %.2fs", j.GetFinishedAt().AsTime().Sub(j.GetStartedAt().AsTime()).Seconds())
	}
	if j.GetState() == api.JobState_JOB_STATE_SUCCEEDED {
		if j.GetExitSignal() != 0 {
			line += fmt.Sprintf(", killed by signal %d", j.GetExitSignal())
		} else {
			line += fmt.Sprintf(", exit status %d", j.GetExitCode())
		}
		if s := j.GetStats(); s.GetSpeedup() > 0 {
			line += fmt.Sprintf(", speedup %.2fx", s.GetSpeedup())
		}
	} else if j.GetMessage() != "" {
		line += ": " + j.GetMessage()
	}
	fmt.Fprintln(d.o.Stderr, line)
}

func phaseName(p api.Phase) string {
	return strings.ToLower(strings.TrimPrefix(p.String(), "PHASE_"))
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[len(id)-12:]
	}
	return id
}

// humanCount writes n with a k/M/G/T suffix.
func humanCount(n uint64) string {
	switch {
	case n >= 1e12:
		return fmt.Sprintf("%.1fT", float64(n)/1e12)
	case n >= 1e9:
		return fmt.Sprintf("%.1fG", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

var _ flag.Value = (*stringList)(nil)
