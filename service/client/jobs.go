package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gxbit/gxbit/api"
	"github.com/gxbit/gxbit/service/bytesize"
)

// Jobs implements `gxbit jobs [flags]`: a table of jobs, newest first.
func Jobs(ctx context.Context, args []string, o IO) int {
	fs := newFlagSet("jobs", "[flags]", o)
	var c common
	c.register(fs, o)
	states := fs.String("state", "", "only jobs in these `states` (comma-separated: queued,running,succeeded,failed,cancelled,limit_exceeded,interrupted)")
	limit := fs.Uint("limit", 50, "at most this many jobs (0: all)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return usageStatus(err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(o.Stderr, "gxbit jobs: unexpected arguments %q\n", pos)
		return ExitUsage
	}
	req := &api.ListJobsRequest{}
	if *states != "" {
		for _, s := range strings.Split(*states, ",") {
			st, err := parseState(s)
			if err != nil {
				fmt.Fprintf(o.Stderr, "gxbit jobs: --state: %v\n", err)
				return ExitUsage
			}
			req.States = append(req.States, st)
		}
	}
	return withServer(ctx, o, c, func(ctx context.Context, cl api.JobServiceClient) int {
		all := &api.ListJobsResponse{}
		for {
			req.PageSize = 1000
			if *limit > 0 {
				req.PageSize = uint32(min(*limit-uint(len(all.Jobs)), 1000))
			}
			resp, err := cl.ListJobs(ctx, req)
			if err != nil {
				return rpcError(o, "list jobs", err)
			}
			all.Jobs = append(all.Jobs, resp.GetJobs()...)
			req.PageToken = resp.GetNextPageToken()
			if req.PageToken == "" || (*limit > 0 && uint(len(all.Jobs)) >= *limit) {
				all.NextPageToken = req.PageToken
				break
			}
		}
		if c.json {
			if err := printJSON(o.Stdout, all); err != nil {
				fmt.Fprintf(o.Stderr, "gxbit: %v\n", err)
				return ExitError
			}
			return ExitOK
		}
		tw := tabwriter.NewWriter(o.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATE\tMODE\tNAME\tCREATED\tDURATION\tEXIT")
		for _, j := range all.Jobs {
			exit := "-"
			if j.GetState() == api.JobState_JOB_STATE_SUCCEEDED {
				exit = fmt.Sprint(exitStatus(j))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.GetId(), stateName(j.GetState()), modeName(j.GetSpec().GetMode()),
				j.GetSpec().GetName(), j.GetCreatedAt().AsTime().Local().Format(time.DateTime), duration(j), exit)
		}
		tw.Flush()
		return ExitOK
	})
}

func modeName(m api.Mode) string {
	return strings.ToLower(strings.TrimPrefix(m.String(), "MODE_"))
}

func duration(j *api.Job) string {
	if j.GetStartedAt() == nil {
		return "-"
	}
	end := time.Now()
	if j.GetFinishedAt() != nil {
		end = j.GetFinishedAt().AsTime()
	}
	return end.Sub(j.GetStartedAt().AsTime()).Round(time.Millisecond).String()
}

// Job implements `gxbit job [flags] ID`: one job's record.
func Job(ctx context.Context, args []string, o IO) int {
	fs := newFlagSet("job", "[flags] ID", o)
	var c common
	c.register(fs, o)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return usageStatus(err)
	}
	if len(pos) != 1 {
		fmt.Fprintln(o.Stderr, "gxbit job: want exactly one job ID")
		return ExitUsage
	}
	return withServer(ctx, o, c, func(ctx context.Context, cl api.JobServiceClient) int {
		j, err := cl.GetJob(ctx, &api.GetJobRequest{JobId: pos[0]})
		if err != nil {
			return rpcError(o, "job "+pos[0], err)
		}
		if c.json {
			if err := printJSON(o.Stdout, j); err != nil {
				fmt.Fprintf(o.Stderr, "gxbit: %v\n", err)
				return ExitError
			}
			return ExitOK
		}
		describe(o.Stdout, j)
		return ExitOK
	})
}

// describe writes a job's record for people.
func describe(w io.Writer, j *api.Job) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, format string, args ...any) {
		fmt.Fprintf(tw, "%s:\t"+format+"\n", append([]any{k}, args...)...)
	}
	row("id", "%s", j.GetId())
	row("state", "%s", stateName(j.GetState()))
	if j.GetMessage() != "" {
		row("message", "%s", j.GetMessage())
	}
	if j.GetState() == api.JobState_JOB_STATE_SUCCEEDED {
		if j.GetExitSignal() != 0 {
			row("exit", "killed by signal %d", j.GetExitSignal())
		} else {
			row("exit", "status %d", j.GetExitCode())
		}
	}
	if j.GetOwner() != "" {
		row("owner", "%s", j.GetOwner())
	}
	row("program", "%s", j.GetSpec().GetName())
	row("argv", "%q", j.GetSpec().GetArgv())
	row("mode", "%s", modeName(j.GetSpec().GetMode()))
	row("gpu", "%s", strings.ToLower(strings.TrimPrefix(j.GetSpec().GetGpu().String(), "GPU_BACKEND_")))
	l := j.GetEffectiveLimits()
	row("limits", "memory %s, %d instructions, wall time %v", bytesize.Format(l.GetMemoryBytes()), l.GetInstructions(), l.GetWallTime().AsDuration())
	row("created", "%s", j.GetCreatedAt().AsTime().Local().Format(time.RFC3339))
	row("duration", "%s", duration(j))
	row("output", "%d bytes stdout, %d bytes stderr", j.GetStdoutBytes(), j.GetStderrBytes())
	if s := j.GetStats(); s != nil {
		row("instructions", "%d", s.GetGuestInstructions())
		if s.GetHotSpotsFound() > 0 || s.GetHotSpotsOffloaded() > 0 {
			row("hot spots", "%d found, %d offloaded", s.GetHotSpotsFound(), s.GetHotSpotsOffloaded())
		}
		if s.GetGpuBackend() != "" {
			row("gpu backend", "%s", s.GetGpuBackend())
			row("kernels", "%d launches, %v in kernels, %v copying", s.GetKernelLaunches(), s.GetKernelTime().AsDuration(), s.GetCopyTime().AsDuration())
		}
		if s.GetTranslationTime() != nil {
			row("translation", "%v", s.GetTranslationTime().AsDuration())
		}
		if s.GetSpeedup() > 0 {
			row("speedup", "%.2fx (%v on the CPU engine, %v accelerated)", s.GetSpeedup(), s.GetCpuEngineTime().AsDuration(), s.GetAcceleratedTime().AsDuration())
		}
		if len(s.GetFallbacks()) > 0 {
			reasons := make([]string, 0, len(s.GetFallbacks()))
			for r, n := range s.GetFallbacks() {
				reasons = append(reasons, fmt.Sprintf("%s %d", r, n))
			}
			sort.Strings(reasons)
			row("fallbacks", "%s", strings.Join(reasons, ", "))
		}
		for _, p := range s.GetPhases() {
			row("phase "+phaseName(p.GetPhase()), "%v", p.GetDuration().AsDuration())
		}
	}
	for _, a := range j.GetArtifacts() {
		row("artifact", "%s (%s, %d bytes)", a.GetName(), artifactKindName(a.GetKind()), a.GetSize())
	}
	tw.Flush()
}

func artifactKindName(k api.ArtifactKind) string {
	return strings.ToLower(strings.TrimPrefix(k.String(), "ARTIFACT_KIND_"))
}

// Cancel implements `gxbit cancel [flags] ID...`.
func Cancel(ctx context.Context, args []string, o IO) int {
	fs := newFlagSet("cancel", "[flags] ID...", o)
	var c common
	c.register(fs, o)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return usageStatus(err)
	}
	if len(pos) == 0 {
		fmt.Fprintln(o.Stderr, "gxbit cancel: want at least one job ID")
		return ExitUsage
	}
	return withServer(ctx, o, c, func(ctx context.Context, cl api.JobServiceClient) int {
		rc := ExitOK
		for _, id := range pos {
			j, err := cl.CancelJob(ctx, &api.CancelJobRequest{JobId: id})
			if err != nil {
				rc = rpcError(o, "cancel "+id, err)
				continue
			}
			if c.json {
				if err := printJSON(o.Stdout, j); err != nil {
					fmt.Fprintf(o.Stderr, "gxbit: %v\n", err)
					return ExitError
				}
				continue
			}
			switch j.GetState() {
			case api.JobState_JOB_STATE_QUEUED, api.JobState_JOB_STATE_RUNNING:
				fmt.Fprintf(o.Stdout, "%s cancelling\n", id)
			default:
				fmt.Fprintf(o.Stdout, "%s %s\n", id, stateName(j.GetState()))
			}
		}
		return rc
	})
}

// Fetch implements `gxbit fetch [flags] ID`: with no output flag it lists
// the job's artifacts (with --json, the job record, whose "artifacts" lists
// them); --ptx, --report, --profile and --dir write them.
func Fetch(ctx context.Context, args []string, o IO) int {
	fs := newFlagSet("fetch", "[flags] ID", o)
	var c common
	c.register(fs, o)
	ptxDir := fs.String("ptx", "", "write every generated .ptx kernel into `dir`")
	report := fs.String("report", "", "write the report JSON to `file` (\"-\" for stdout)")
	profile := fs.String("profile", "", "write the profile file to `file` (\"-\" for stdout)")
	dir := fs.String("dir", "", "write every artifact into `dir`")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return usageStatus(err)
	}
	if len(pos) != 1 {
		fmt.Fprintln(o.Stderr, "gxbit fetch: want exactly one job ID")
		return ExitUsage
	}
	id := pos[0]
	return withServer(ctx, o, c, func(ctx context.Context, cl api.JobServiceClient) int {
		j, err := cl.GetJob(ctx, &api.GetJobRequest{JobId: id})
		if err != nil {
			return rpcError(o, "job "+id, err)
		}
		if *ptxDir == "" && *report == "" && *profile == "" && *dir == "" {
			if c.json {
				if err := printJSON(o.Stdout, j); err != nil {
					fmt.Fprintf(o.Stderr, "gxbit: %v\n", err)
					return ExitError
				}
				return ExitOK
			}
			tw := tabwriter.NewWriter(o.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tKIND\tSIZE")
			for _, a := range j.GetArtifacts() {
				fmt.Fprintf(tw, "%s\t%s\t%d\n", a.GetName(), artifactKindName(a.GetKind()), a.GetSize())
			}
			tw.Flush()
			return ExitOK
		}
		type target struct{ name, path string }
		var targets []target
		byKind := func(k api.ArtifactKind) []*api.Artifact {
			var out []*api.Artifact
			for _, a := range j.GetArtifacts() {
				if a.GetKind() == k {
					out = append(out, a)
				}
			}
			return out
		}
		single := func(flagName, path string, k api.ArtifactKind) error {
			as := byKind(k)
			if len(as) == 0 {
				return fmt.Errorf("--%s: job %s (%s) has no %s artifact", flagName, id, stateName(j.GetState()), artifactKindName(k))
			}
			targets = append(targets, target{as[0].GetName(), path})
			return nil
		}
		if *report != "" {
			if err := single("report", *report, api.ArtifactKind_ARTIFACT_KIND_REPORT); err != nil {
				fmt.Fprintf(o.Stderr, "gxbit fetch: %v\n", err)
				return ExitError
			}
		}
		if *profile != "" {
			if err := single("profile", *profile, api.ArtifactKind_ARTIFACT_KIND_PROFILE); err != nil {
				fmt.Fprintf(o.Stderr, "gxbit fetch: %v\n", err)
				return ExitError
			}
		}
		if *ptxDir != "" {
			ptx := byKind(api.ArtifactKind_ARTIFACT_KIND_PTX)
			if len(ptx) == 0 {
				fmt.Fprintf(o.Stderr, "gxbit fetch: --ptx: job %s (%s) has no PTX artifacts\n", id, stateName(j.GetState()))
				return ExitError
			}
			for _, a := range ptx {
				targets = append(targets, target{a.GetName(), filepath.Join(*ptxDir, a.GetName())})
			}
		}
		if *dir != "" {
			for _, a := range j.GetArtifacts() {
				targets = append(targets, target{a.GetName(), filepath.Join(*dir, a.GetName())})
			}
		}
		for _, t := range targets {
			data, err := fetchArtifact(ctx, cl, id, t.name)
			if err != nil {
				return rpcError(o, fmt.Sprintf("fetch %s of job %s", t.name, id), err)
			}
			if err := writeOut(o, t.path, data); err != nil {
				fmt.Fprintf(o.Stderr, "gxbit fetch: %v\n", err)
				return ExitError
			}
			if t.path != "-" && !c.json {
				fmt.Fprintf(o.Stderr, "gxbit: wrote %s (%d bytes)\n", t.path, len(data))
			}
		}
		return ExitOK
	})
}

// fetchArtifact reads one artifact's stream, checking its size.
func fetchArtifact(ctx context.Context, cl api.JobServiceClient, id, name string) ([]byte, error) {
	stream, err := cl.GetArtifact(ctx, &api.GetArtifactRequest{JobId: id, Name: name})
	if err != nil {
		return nil, err
	}
	var data []byte
	var desc *api.Artifact
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if chunk.GetArtifact() != nil {
			desc = chunk.GetArtifact()
		}
		data = append(data, chunk.GetData()...)
	}
	if desc == nil || uint64(len(data)) != desc.GetSize() {
		return nil, fmt.Errorf("artifact %q arrived incomplete (%d bytes)", name, len(data))
	}
	return data, nil
}

// writeOut writes data to path ("-" for stdout) atomically: a temporary
// file in the same directory renamed into place.
func writeOut(o IO, path string, data []byte) error {
	if path == "-" {
		_, err := o.Stdout.Write(data)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
