package daemon

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/gxbit/gxbit/api"
	"github.com/gxbit/gxbit/service"
	"github.com/gxbit/gxbit/service/client"
	"github.com/gxbit/gxbit/service/internal/elftest"
	"github.com/gxbit/gxbit/service/store"
)

const testMaxUpload = 64 << 10

// testConfig is a daemon configuration on loopback ports with small limits.
func testConfig(dir string) Config {
	return Config{
		Listen:        "127.0.0.1:0",
		MetricsListen: "127.0.0.1:0",
		DataDir:       dir,
		ShutdownGrace: 2 * time.Second,
		Manager: service.ManagerConfig{
			Workers:        4,
			MaxQueued:      64,
			MaxBinaryBytes: testMaxUpload,
			MaxStdinBytes:  4 << 10,
			MaxOutputBytes: 256 << 10,
			DefaultGPU:     service.GPUAuto,
			Limits: service.LimitsConfig{
				Default: service.Limits{MemoryBytes: 64 << 20, Instructions: 1_000_000, WallTime: 10 * time.Second},
				Max:     service.Limits{MemoryBytes: 1 << 30, Instructions: 1_000_000_000, WallTime: time.Minute},
			},
		},
		Build: service.BuildInfo{Version: "test", Revision: "abc", GoVersion: "go"},
	}
}

type testDaemon struct {
	d      *Daemon
	cancel context.CancelFunc
	done   chan error
	addr   string
	http   string
	log    *syncBuffer
}

// syncBuffer is a bytes.Buffer safe for the daemon's logger and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startDaemon(t testing.TB, cfg Config, exec service.Executor) *testDaemon {
	t.Helper()
	log := &syncBuffer{}
	d, err := New(cfg, exec, log)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	td := &testDaemon{d: d, cancel: cancel, done: make(chan error, 1), addr: d.GRPCAddr(), http: d.MetricsAddr(), log: log}
	go func() { td.done <- d.Serve(ctx) }()
	t.Cleanup(func() { td.stop(t) })
	return td
}

func (td *testDaemon) stop(t testing.TB) {
	t.Helper()
	if td.cancel == nil {
		return
	}
	td.cancel()
	td.cancel = nil
	select {
	case err := <-td.done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("the daemon did not stop; log:\n%s", td.log)
	}
}

func (td *testDaemon) conn(t *testing.T) api.JobServiceClient {
	t.Helper()
	cc, err := grpc.NewClient(td.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return api.NewJobServiceClient(cc)
}

func (td *testDaemon) metrics(t *testing.T) string {
	t.Helper()
	resp, err := http.Get("http://" + td.http + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d, %v", resp.StatusCode, err)
	}
	return string(b)
}

// metricValue returns the value of one series ("name{labels}" exactly as
// exposed), or 0 when it is absent.
func metricValue(t *testing.T, body, series string) float64 {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
			if err != nil {
				t.Fatalf("metric line %q: %v", line, err)
			}
			return v
		}
	}
	return 0
}

// runCLI runs one client subcommand and returns its status and output.
func runCLI(ctx context.Context, cmd func(context.Context, []string, client.IO) int, tty bool, stdin string, args ...string) (int, string, string) {
	var out, errOut syncBuffer
	o := client.IO{
		Stdin:  strings.NewReader(stdin),
		Stdout: &out,
		Stderr: &errOut,
		StderrTerminal: func() (int, bool) {
			return 100, tty
		},
		Getenv: func(string) string { return "" },
	}
	rc := cmd(ctx, args, o)
	return rc, out.String(), errOut.String()
}

func writeProg(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func parseJob(t *testing.T, s string) *api.Job {
	t.Helper()
	j := &api.Job{}
	if err := protojson.Unmarshal([]byte(strings.TrimSpace(s)), j); err != nil {
		t.Fatalf("parsing job JSON %q: %v", s, err)
	}
	return j
}

func waitState(t *testing.T, cl api.JobServiceClient, id string, want api.JobState) *api.Job {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		j, err := cl.GetJob(context.Background(), &api.GetJobRequest{JobId: id})
		if err != nil {
			t.Fatalf("GetJob(%s): %v", id, err)
		}
		if j.GetState() == want {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s is %v, want %v", id, j.GetState(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestEndToEnd submits a program in every mode through the CLI client,
// checks output, status, artifacts and metrics, restarts the daemon on the
// same data directory and finds the finished jobs again.
func TestEndToEnd(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	td := startDaemon(t, testConfig(dir), &fakeExecutor{})
	bin := elftest.Build(elftest.Options{})
	prog := writeProg(t, bin)
	stdinFile := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(stdinFile, []byte("some input\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := td.metrics(t)
	if v := metricValue(t, before, `gxbit_gpu_backend_info{backend="sim"}`); v != 1 {
		t.Errorf("gxbit_gpu_backend_info{backend=sim} = %v at start, want 1", v)
	}
	if !strings.Contains(before, `gxbit_build_info{goversion="go",revision="abc",version="test"} 1`) {
		t.Errorf("no gxbit_build_info in:\n%s", before)
	}

	ids := map[string]string{}
	outputs := map[string]string{}
	for _, mode := range []string{"run", "profile", "accelerate", "both"} {
		t.Run(mode, func(t *testing.T) {
			rc, out, errOut := runCLI(ctx, client.Submit, false, "", "--server", td.addr, "--mode", mode, "--gpu", "sim",
				"--stdin", stdinFile, "--quiet", prog, "hello", "exit=3")
			if rc != 3 {
				t.Fatalf("submit rc = %d, want the guest's 3; stderr:\n%s", rc, errOut)
			}
			if want := "argv: prog hello exit=3\nstdin: some input\n"; out != want {
				t.Errorf("stdout = %q, want %q", out, want)
			}
			if want := fmt.Sprintf("mode=%s gpu=sim\n", mode); errOut != want {
				t.Errorf("stderr = %q, want %q", errOut, want)
			}
			rc, out, errOut = runCLI(ctx, client.Jobs, false, "", "--server", td.addr, "--json", "--limit", "1")
			if rc != 0 {
				t.Fatalf("jobs rc = %d: %s", rc, errOut)
			}
			list := &api.ListJobsResponse{}
			if err := protojson.Unmarshal([]byte(out), list); err != nil || len(list.Jobs) != 1 {
				t.Fatalf("jobs --json = %q, %v", out, err)
			}
			id := list.Jobs[0].GetId()
			ids[mode] = id
			outputs[mode] = "argv: prog hello exit=3\nstdin: some input\n"

			rc, out, errOut = runCLI(ctx, client.Job, false, "", id, "--server", td.addr, "--json")
			if rc != 0 {
				t.Fatalf("job rc = %d: %s", rc, errOut)
			}
			j := parseJob(t, out)
			if j.GetState() != api.JobState_JOB_STATE_SUCCEEDED || j.GetExitCode() != 3 || j.GetSpec().GetMode().String() != "MODE_"+strings.ToUpper(mode) {
				t.Fatalf("job = %v", j)
			}
			names := map[string]api.ArtifactKind{}
			for _, a := range j.GetArtifacts() {
				names[a.GetName()] = a.GetKind()
			}
			wantPTX := mode == "accelerate" || mode == "both"
			wantProfile := mode == "profile" || mode == "both"
			if _, ok := names["report.json"]; !ok {
				t.Errorf("no report.json in %v", names)
			}
			if _, ok := names["hot_401000.ptx"]; ok != wantPTX {
				t.Errorf("PTX artifacts %v, want present=%v", names, wantPTX)
			}
			if _, ok := names["profile.gxp"]; ok != wantProfile {
				t.Errorf("profile artifact %v, want present=%v", names, wantProfile)
			}

			outDir := t.TempDir()
			args := []string{"--server", td.addr, id, "--report", filepath.Join(outDir, "report.json")}
			if wantPTX {
				args = append(args, "--ptx", filepath.Join(outDir, "ptx"))
			}
			if wantProfile {
				args = append(args, "--profile", filepath.Join(outDir, "prof"))
			}
			rc, _, errOut = runCLI(ctx, client.Fetch, false, "", args...)
			if rc != 0 {
				t.Fatalf("fetch rc = %d: %s", rc, errOut)
			}
			report, err := os.ReadFile(filepath.Join(outDir, "report.json"))
			if err != nil || !bytes.Contains(report, []byte(`"mode":"`+mode+`"`)) {
				t.Errorf("report = %s, %v", report, err)
			}
			if wantPTX {
				for _, k := range []string{"hot_401000", "hot_401200"} {
					ptx, err := os.ReadFile(filepath.Join(outDir, "ptx", k+".ptx"))
					if err != nil || !bytes.HasPrefix(ptx, []byte("// "+k+" of binary ")) || !bytes.Contains(ptx, []byte(".version 8.0")) {
						t.Errorf("%s.ptx = %q, %v", k, ptx, err)
					}
				}
			} else {
				rc, _, errOut := runCLI(ctx, client.Fetch, false, "", "--server", td.addr, "--ptx", outDir, id)
				if rc != client.ExitError || !strings.Contains(errOut, "no PTX artifacts") {
					t.Errorf("fetch --ptx of a %s job: rc %d, %q", mode, rc, errOut)
				}
			}
			if wantProfile {
				prof, err := os.ReadFile(filepath.Join(outDir, "prof"))
				if err != nil || !bytes.HasPrefix(prof, []byte("gxbit-profile v1\n")) {
					t.Errorf("profile = %q, %v", prof, err)
				}
			}
		})
	}

	// Accelerate with the profile of an earlier job.
	rc, out, errOut := runCLI(ctx, client.Submit, false, "", "--server", td.addr, "--mode", "accelerate", "--profile-from", ids["profile"], "--quiet", prog)
	if rc != 0 || !strings.Contains(out, "profile: gxbit-profile v1\nbinary ") {
		t.Errorf("--profile-from: rc %d, stdout %q, stderr %q", rc, out, errOut)
	}
	for _, c := range []struct {
		mode, from, want string
	}{
		{"accelerate", ids["run"], "FailedPrecondition: spec.profile_job_id: job " + ids["run"] + " (JOB_STATE_SUCCEEDED, mode MODE_RUN) has no profile artifact"},
		{"accelerate", "01a0ffffffffffffffff", `NotFound: spec.profile_job_id: job "01a0ffffffffffffffff" not found`},
		{"run", ids["profile"], "InvalidArgument: spec.profile_job_id: only accelerate mode takes a profile, not MODE_RUN"},
	} {
		rc, _, errOut := runCLI(ctx, client.Submit, false, "", "--server", td.addr, "--mode", c.mode, "--profile-from", c.from, prog)
		if rc != client.ExitError || !strings.Contains(errOut, c.want) {
			t.Errorf("--mode %s --profile-from %s: rc %d, stderr %q; want %q", c.mode, c.from, rc, errOut, c.want)
		}
	}

	after := td.metrics(t)
	for _, c := range []struct {
		series string
		want   float64
	}{
		{`gxbit_jobs_total{mode="run",outcome="succeeded"}`, 1},
		{`gxbit_jobs_total{mode="both",outcome="succeeded"}`, 1},
		{`gxbit_job_duration_seconds_count{mode="accelerate"}`, 2},
		{`gxbit_phase_duration_seconds_count{phase="profile"}`, 2},
		{`gxbit_phase_duration_seconds_count{phase="accelerate"}`, 3},
		{`gxbit_guest_instructions_total{mode="profile"}`, 1000},
		{`gxbit_hot_spots_found_total`, 8},
		{`gxbit_hot_spots_offloaded_total`, 3},
		{`gxbit_kernel_launches_total{backend="sim"}`, 12},
		{`gxbit_fallbacks_total{reason="guard_alias"}`, 3},
		{`gxbit_accelerated_speedup_ratio_count`, 3},
		{`gxbit_accelerated_speedup_ratio_sum`, 12},
		{`gxbit_accelerated_speedup_ratio_bucket{le="4"}`, 3},
		{`gxbit_accelerated_speedup_ratio_bucket{le="3"}`, 0},
		{`gxbit_kernel_speedup_ratio_count`, 3},
		{`gxbit_gpu_backend_info{backend="sim"}`, 1},
		{`gxbit_jobs_running`, 0},
		{`gxbit_workers`, 4},
	} {
		if got := metricValue(t, after, c.series); got != c.want {
			t.Errorf("%s = %v, want %v", c.series, got, c.want)
		}
	}
	if got := metricValue(t, after, `gxbit_kernel_seconds_total{backend="sim"}`); got <= 0 {
		t.Errorf("gxbit_kernel_seconds_total did not move: %v", got)
	}
	if got := metricValue(t, after, `gxbit_translation_seconds_total`); got <= 0 {
		t.Errorf("gxbit_translation_seconds_total did not move: %v", got)
	}

	// Restart on the same data directory: every finished job is still there.
	td.stop(t)
	td2 := startDaemon(t, testConfig(dir), &fakeExecutor{})
	rc, out, errOut = runCLI(ctx, client.Jobs, false, "", "--server", td2.addr, "--json")
	if rc != 0 {
		t.Fatalf("jobs after restart rc = %d: %s", rc, errOut)
	}
	list := &api.ListJobsResponse{}
	if err := protojson.Unmarshal([]byte(out), list); err != nil {
		t.Fatal(err)
	}
	if len(list.Jobs) != 5 {
		t.Fatalf("%d jobs after restart, want 5", len(list.Jobs))
	}
	cl := td2.conn(t)
	for mode, id := range ids {
		j, err := cl.GetJob(ctx, &api.GetJobRequest{JobId: id})
		if err != nil || j.GetState() != api.JobState_JOB_STATE_SUCCEEDED {
			t.Errorf("%s job %s after restart: %v, %v", mode, id, j, err)
			continue
		}
		// Watching a finished job replays its output and ends.
		stream, err := cl.WatchJob(ctx, &api.WatchJobRequest{JobId: id})
		if err != nil {
			t.Fatal(err)
		}
		var stdout bytes.Buffer
		var finished *api.JobFinished
		for {
			ev, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if o := ev.GetOutput(); o != nil && o.GetStream() == api.Stream_STREAM_STDOUT {
				stdout.Write(o.GetData())
			}
			if f := ev.GetFinished(); f != nil {
				finished = f
			}
		}
		if stdout.String() != outputs[mode] || finished == nil || !bytes.Contains(finished.GetReportJson(), []byte(`"mode":"`+mode+`"`)) {
			t.Errorf("watch of %s job after restart: stdout %q, finished %v", mode, stdout.String(), finished)
		}
	}
	rc, out, errOut = runCLI(ctx, client.Fetch, false, "", "--server", td2.addr, "--report", "-", ids["both"])
	if rc != 0 || !strings.Contains(out, `"mode":"both"`) {
		t.Errorf("fetch after restart: rc %d, %q, %q", rc, out, errOut)
	}
	rc, out, _ = runCLI(ctx, client.Jobs, false, "", "--server", td2.addr)
	if rc != 0 || !strings.HasPrefix(out, "ID ") || strings.Count(out, "\n") != 6 || !strings.Contains(out, ids["run"]) {
		t.Errorf("jobs table:\n%s", out)
	}
	rc, out, _ = runCLI(ctx, client.Job, false, "", "--server", td2.addr, ids["accelerate"])
	for _, want := range []string{"state:", "succeeded", "speedup:", "4.00x", "hot_401200.ptx (ptx,", "fallbacks:", "guard_alias 1"} {
		if rc != 0 || !strings.Contains(out, want) {
			t.Errorf("job output lacks %q:\n%s", want, out)
		}
	}
}

// TestProgressDisplay checks the three ways submit reports progress.
func TestProgressDisplay(t *testing.T) {
	ctx := context.Background()
	td := startDaemon(t, testConfig(t.TempDir()), &fakeExecutor{})
	prog := writeProg(t, elftest.Build(elftest.Options{}))

	// Terminal: a redrawn status line, and a final line.
	rc, out, errOut := runCLI(ctx, client.Submit, true, "", "--server", td.addr, "--mode", "both", prog, "sleep=600ms")
	if rc != 0 || out != "argv: prog sleep=600ms\n" {
		t.Fatalf("tty submit: rc %d, stdout %q, stderr %q", rc, out, errOut)
	}
	if !strings.Contains(errOut, "\r\x1b[Kgxbit: ") || !strings.Contains(errOut, " running ") || !strings.Contains(errOut, "· run · 42 instr · waiting") || !strings.Contains(errOut, "succeeded in ") {
		t.Errorf("tty progress display missing from stderr %q", errOut)
	}

	// Not a terminal: plain lines, no escape sequences.
	rc, _, errOut = runCLI(ctx, client.Submit, false, "", "--server", td.addr, prog, "sleep=300ms")
	if rc != 0 || strings.Contains(errOut, "\x1b") || !strings.Contains(errOut, " running\n") || !strings.Contains(errOut, " succeeded in ") {
		t.Errorf("plain progress: rc %d, stderr %q", rc, errOut)
	}

	// --json: the final record on stdout, no guest output.
	rc, out, _ = runCLI(ctx, client.Submit, false, "", "--server", td.addr, "--json", "--mode", "accelerate", prog, "exit=7")
	if rc != 7 {
		t.Fatalf("json submit rc = %d", rc)
	}
	j := parseJob(t, out)
	if j.GetExitCode() != 7 || j.GetStats().GetSpeedup() != 4 || j.GetStdoutBytes() == 0 {
		t.Errorf("json job = %v", j)
	}

	// --detach: the id only.
	rc, out, _ = runCLI(ctx, client.Submit, false, "", "--server", td.addr, "--detach", prog)
	if rc != 0 || len(strings.TrimSpace(out)) != 20 {
		t.Errorf("detach: rc %d, %q", rc, out)
	}
	// --env and --argv0.
	rc, out, _ = runCLI(ctx, client.Submit, false, "", "--server", td.addr, "--quiet", "--env", "A=1", "--env", "B=x y", "--argv0", "/bin/fancy", prog, "z")
	if rc != 0 || out != "argv: /bin/fancy z\nenv: A=1\nenv: B=x y\n" {
		t.Errorf("--env/--argv0: rc %d, %q", rc, out)
	}
	// Guest stdin from the client's stdin.
	rc, out, _ = runCLI(ctx, client.Submit, false, "from stdin\n", "--server", td.addr, "--quiet", "--stdin", "-", prog)
	if rc != 0 || out != "argv: prog\nstdin: from stdin\n" {
		t.Errorf("stdin -: rc %d, %q", rc, out)
	}
}

// TestCancel cancels a running job with `gxbit cancel`, a queued one, and
// one whose submit was interrupted.
func TestCancel(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t.TempDir())
	cfg.Manager.Workers = 1
	fx := &fakeExecutor{started: make(chan string, 8)}
	td := startDaemon(t, cfg, fx)
	cl := td.conn(t)
	prog := writeProg(t, elftest.Build(elftest.Options{}))

	rc, out, errOut := runCLI(ctx, client.Submit, false, "", "--server", td.addr, "--detach", prog, "spin")
	if rc != 0 {
		t.Fatalf("submit: %d %s", rc, errOut)
	}
	running := strings.TrimSpace(out)
	<-fx.started
	waitState(t, cl, running, api.JobState_JOB_STATE_RUNNING)
	_, out, _ = runCLI(ctx, client.Submit, false, "", "--server", td.addr, "--detach", prog, "exit=0")
	queued := strings.TrimSpace(out)

	// The queued job is cancelled at once, without running.
	rc, out, _ = runCLI(ctx, client.Cancel, false, "", "--server", td.addr, queued)
	if rc != 0 || out != queued+" cancelled\n" {
		t.Errorf("cancel queued: rc %d, %q", rc, out)
	}
	j := waitState(t, cl, queued, api.JobState_JOB_STATE_CANCELLED)
	if j.GetStartedAt() != nil {
		t.Errorf("the cancelled queued job ran: %v", j)
	}
	rc, out, _ = runCLI(ctx, client.Cancel, false, "", "--server", td.addr, running)
	if rc != 0 || out != running+" cancelling\n" {
		t.Errorf("cancel running: rc %d, %q", rc, out)
	}
	j = waitState(t, cl, running, api.JobState_JOB_STATE_CANCELLED)
	if j.GetMessage() != "cancelled by a client" {
		t.Errorf("message = %q", j.GetMessage())
	}
	// Cancelling a finished job is not an error.
	if rc, out, _ := runCLI(ctx, client.Cancel, false, "", "--server", td.addr, running); rc != 0 || out != running+" cancelled\n" {
		t.Errorf("cancel again: rc %d, %q", rc, out)
	}

	// Interrupting `gxbit submit` cancels its job.
	sctx, stop := context.WithCancel(ctx)
	go func() {
		<-fx.started
		stop()
	}()
	rc, _, errOut = runCLI(sctx, client.Submit, false, "", "--server", td.addr, prog, "spin")
	if rc != client.ExitCancelled || !strings.Contains(errOut, "cancelled") {
		t.Errorf("interrupted submit: rc %d, stderr %q", rc, errOut)
	}
	m := td.metrics(t)
	if got := metricValue(t, m, `gxbit_jobs_total{mode="run",outcome="cancelled"}`); got != 3 {
		t.Errorf("cancelled jobs = %v, want 3", got)
	}
	// The daemon carries on.
	if rc, out, _ := runCLI(ctx, client.Submit, false, "", "--server", td.addr, "--quiet", prog, "exit=4"); rc != 4 || out != "argv: prog exit=4\n" {
		t.Errorf("submit after cancels: rc %d, %q", rc, out)
	}
}

// TestLimitsAndFailures checks each over-limit and failure path ends with a
// clear status while the daemon carries on.
func TestLimitsAndFailures(t *testing.T) {
	ctx := context.Background()
	td := startDaemon(t, testConfig(t.TempDir()), &fakeExecutor{})
	prog := writeProg(t, elftest.Build(elftest.Options{}))
	tests := []struct {
		name     string
		args     []string
		rc       int
		state    api.JobState
		exceeded api.LimitKind
		message  string
	}{
		{"wall time", []string{"--timeout", "100ms", prog, "spin"}, client.ExitLimit, api.JobState_JOB_STATE_LIMIT_EXCEEDED, api.LimitKind_LIMIT_KIND_WALL_TIME, "wall-time limit of 100ms exceeded"},
		{"memory", []string{"--memory", "2MiB", prog, "mem"}, client.ExitLimit, api.JobState_JOB_STATE_LIMIT_EXCEEDED, api.LimitKind_LIMIT_KIND_MEMORY, "memory limit of 2097152 bytes exceeded"},
		{"instructions", []string{"--instructions", "500", prog, "instr=501"}, client.ExitLimit, api.JobState_JOB_STATE_LIMIT_EXCEEDED, api.LimitKind_LIMIT_KIND_INSTRUCTIONS, "instruction limit of 500 exceeded"},
		{"output", []string{prog, "flood=300000"}, client.ExitLimit, api.JobState_JOB_STATE_LIMIT_EXCEEDED, api.LimitKind_LIMIT_KIND_OUTPUT, "output limit of 262144 bytes exceeded"},
		{"translator error", []string{prog, "crash"}, client.ExitError, api.JobState_JOB_STATE_FAILED, 0, "unsupported instruction at 0x401234"},
		{"executor panic", []string{prog, "panic"}, client.ExitError, api.JobState_JOB_STATE_FAILED, 0, "the executor panicked"},
		{"within limits", []string{"--instructions", "500", prog, "instr=499"}, 0, api.JobState_JOB_STATE_SUCCEEDED, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--server", td.addr, "--json"}, tt.args...)
			rc, out, errOut := runCLI(ctx, client.Submit, false, "", args...)
			if rc != tt.rc {
				t.Fatalf("rc = %d, want %d; stderr %q", rc, tt.rc, errOut)
			}
			j := parseJob(t, out)
			if j.GetState() != tt.state || j.GetExceeded() != tt.exceeded || !strings.Contains(j.GetMessage(), tt.message) {
				t.Errorf("job = %v %v %q; want %v %v %q", j.GetState(), j.GetExceeded(), j.GetMessage(), tt.state, tt.exceeded, tt.message)
			}
			if tt.exceeded == api.LimitKind_LIMIT_KIND_OUTPUT && (!j.GetOutputTruncated() || j.GetStdoutBytes()+j.GetStderrBytes() != 256<<10) {
				t.Errorf("output-limited job: truncated %v, %d+%d bytes", j.GetOutputTruncated(), j.GetStdoutBytes(), j.GetStderrBytes())
			}
		})
	}
	m := td.metrics(t)
	if got := metricValue(t, m, `gxbit_jobs_total{mode="run",outcome="limit_exceeded"}`); got != 4 {
		t.Errorf("limit_exceeded jobs = %v, want 4", got)
	}
	if got := metricValue(t, m, `gxbit_jobs_total{mode="run",outcome="failed"}`); got != 2 {
		t.Errorf("failed jobs = %v, want 2", got)
	}
	// Issue 12 item 9: jobs stopped at a limit count their instructions
	// too: 42 (wall time) + 500 (instruction limit) + 499 (within limits).
	if got := metricValue(t, m, `gxbit_guest_instructions_total{mode="run"}`); got != 42+500+499 {
		t.Errorf("guest instructions counted = %v, want %d", got, 42+500+499)
	}
}

// TestConcurrentSubmissions runs 20 submissions at once.
func TestConcurrentSubmissions(t *testing.T) {
	ctx := context.Background()
	td := startDaemon(t, testConfig(t.TempDir()), &fakeExecutor{})
	prog := writeProg(t, elftest.Build(elftest.Options{}))
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mode := []string{"run", "profile", "accelerate", "both"}[i%4]
			stdin := fmt.Sprintf("input %d\n", i)
			rc, out, errOut := runCLI(ctx, client.Submit, false, stdin, "--server", td.addr, "--quiet", "--stdin", "-", "--mode", mode,
				prog, fmt.Sprintf("job%d", i), fmt.Sprintf("exit=%d", i), "sleep=20ms")
			want := fmt.Sprintf("argv: prog job%d exit=%d sleep=20ms\nstdin: input %d\n", i, i, i)
			if rc != i || out != want || errOut != "mode="+mode+" gpu=auto\n" {
				errs <- fmt.Sprintf("submission %d: rc %d, stdout %q, stderr %q", i, rc, out, errOut)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	list, err := td.conn(t).ListJobs(ctx, &api.ListJobsRequest{States: []api.JobState{api.JobState_JOB_STATE_SUCCEEDED}})
	if err != nil || len(list.GetJobs()) != n {
		t.Errorf("succeeded jobs = %d, %v; want %d", len(list.GetJobs()), err, n)
	}
}

// TestShutdownInterrupts stops the daemon with a job running and one
// queued: after the restart the first is interrupted and the second runs.
func TestShutdownInterrupts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := testConfig(dir)
	cfg.Manager.Workers = 1
	cfg.ShutdownGrace = 100 * time.Millisecond
	fx := &fakeExecutor{started: make(chan string, 4)}
	td := startDaemon(t, cfg, fx)
	prog := writeProg(t, elftest.Build(elftest.Options{}))
	_, out, _ := runCLI(ctx, client.Submit, false, "", "--server", td.addr, "--detach", prog, "spin")
	running := strings.TrimSpace(out)
	<-fx.started
	_, out, _ = runCLI(ctx, client.Submit, false, "", "--server", td.addr, "--detach", prog, "exit=5")
	queued := strings.TrimSpace(out)

	// A watcher of the running job sees it end as interrupted.
	watchRC := make(chan int, 1)
	go func() {
		rc, _, _ := runCLI(ctx, client.Submit, false, "", "--server", td.addr, "--quiet", prog, "spin")
		watchRC <- rc
	}()
	time.Sleep(50 * time.Millisecond)
	td.stop(t)
	if rc := <-watchRC; rc != client.ExitError {
		t.Errorf("submit during shutdown: rc %d, want %d", rc, client.ExitError)
	}

	td2 := startDaemon(t, cfg, fx)
	cl := td2.conn(t)
	j := waitState(t, cl, running, api.JobState_JOB_STATE_INTERRUPTED)
	if !strings.Contains(j.GetMessage(), "shut down") {
		t.Errorf("interrupted message = %q", j.GetMessage())
	}
	j = waitState(t, cl, queued, api.JobState_JOB_STATE_SUCCEEDED)
	if j.GetExitCode() != 5 {
		t.Errorf("queued job after restart: %v", j)
	}
	rc, out, _ := runCLI(ctx, client.Fetch, false, "", "--server", td2.addr, "--report", "-", queued)
	if rc != 0 || !strings.Contains(out, `"exit=5"`) {
		t.Errorf("report of the requeued job: rc %d, %q", rc, out)
	}
}

// TestBadRequests checks that bad submissions and unknown ids are refused
// with the right code and a message that says what is wrong, and that
// nothing is stored for them.
func TestBadRequests(t *testing.T) {
	ctx := context.Background()
	td := startDaemon(t, testConfig(t.TempDir()), &fakeExecutor{})
	cl := td.conn(t)
	good := elftest.Build(elftest.Options{})
	spec := func(mut func(*api.JobSpec)) *api.SubmitJobRequest {
		s := &api.JobSpec{Name: "p", BinarySize: uint64(len(good))}
		if mut != nil {
			mut(s)
		}
		return &api.SubmitJobRequest{Payload: &api.SubmitJobRequest_Spec{Spec: s}}
	}
	bin := func(b []byte) *api.SubmitJobRequest {
		return &api.SubmitJobRequest{Payload: &api.SubmitJobRequest_BinaryChunk{BinaryChunk: b}}
	}
	text := []byte("#!/bin/sh\necho not an elf\n")
	arm := elftest.Build(elftest.Options{Machine: 183})
	tests := []struct {
		name string
		msgs []*api.SubmitJobRequest
		code codes.Code
		msg  string
	}{
		{"no messages", nil, codes.InvalidArgument, "empty upload"},
		{"chunk first", []*api.SubmitJobRequest{bin(good)}, codes.InvalidArgument, "first message must carry the job spec"},
		{"empty binary", []*api.SubmitJobRequest{spec(func(s *api.JobSpec) { s.BinarySize = 0 })}, codes.InvalidArgument, "the binary is empty"},
		{"not ELF", []*api.SubmitJobRequest{spec(func(s *api.JobSpec) { s.BinarySize = uint64(len(text)) }), bin(text)}, codes.InvalidArgument, "not an ELF file"},
		{"aarch64", []*api.SubmitJobRequest{spec(func(s *api.JobSpec) { s.BinarySize = uint64(len(arm)) }), bin(arm)}, codes.InvalidArgument, "EM_AARCH64"},
		{"oversize", []*api.SubmitJobRequest{spec(func(s *api.JobSpec) { s.BinarySize = testMaxUpload + 1 })}, codes.ResourceExhausted, "65537 bytes; this server accepts at most 65536"},
		{"stdin oversize", []*api.SubmitJobRequest{spec(func(s *api.JobSpec) { s.StdinSize = 1 << 20 })}, codes.ResourceExhausted, "standard input is 1048576 bytes"},
		{"more than declared", []*api.SubmitJobRequest{spec(nil), bin(good), bin([]byte{0})}, codes.InvalidArgument, "exceeds spec.binary_size"},
		{"less than declared", []*api.SubmitJobRequest{spec(nil), bin(good[:10])}, codes.InvalidArgument, "ended after 10 of"},
		{"second spec", []*api.SubmitJobRequest{spec(nil), spec(nil)}, codes.InvalidArgument, "only the first message"},
		{"memory over max", []*api.SubmitJobRequest{spec(func(s *api.JobSpec) { s.Limits = &api.Limits{MemoryBytes: 2 << 30} }), bin(good)}, codes.InvalidArgument, "limits.memory_bytes"},
		{"negative wall", []*api.SubmitJobRequest{spec(func(s *api.JobSpec) { s.Limits = &api.Limits{WallTime: durationpb.New(-time.Second)} }), bin(good)}, codes.InvalidArgument, "limits.wall_time: -1s is negative"},
		{"instructions over max", []*api.SubmitJobRequest{spec(func(s *api.JobSpec) { s.Limits = &api.Limits{Instructions: 2e9} }), bin(good)}, codes.InvalidArgument, "limits.instructions"},
		{"unknown mode", []*api.SubmitJobRequest{spec(func(s *api.JobSpec) { s.Mode = 9 }), bin(good)}, codes.InvalidArgument, "spec.mode: unknown mode 9"},
		{"unknown gpu", []*api.SubmitJobRequest{spec(func(s *api.JobSpec) { s.Gpu = 7 }), bin(good)}, codes.InvalidArgument, "spec.gpu"},
		{"bad env", []*api.SubmitJobRequest{spec(func(s *api.JobSpec) { s.Env = []string{"NOEQUALS"} }), bin(good)}, codes.InvalidArgument, "spec.env[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream, err := cl.SubmitJob(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range tt.msgs {
				if err := stream.Send(m); err != nil {
					break // the server already answered; CloseAndRecv has it
				}
			}
			_, err = stream.CloseAndRecv()
			if status.Code(err) != tt.code || !strings.Contains(status.Convert(err).Message(), tt.msg) {
				t.Fatalf("SubmitJob = %v, want %v with %q", err, tt.code, tt.msg)
			}
		})
	}

	m := td.metrics(t)
	if got := metricValue(t, m, `gxbit_submissions_rejected_total{code="InvalidArgument"}`); got != float64(len(tests)-2) {
		t.Errorf("rejected InvalidArgument = %v, want %d", got, len(tests)-2)
	}

	// An upload abandoned half-way stores nothing.
	actx, abort := context.WithCancel(ctx)
	stream, err := cl.SubmitJob(actx)
	if err != nil {
		t.Fatal(err)
	}
	stream.Send(spec(nil))
	stream.Send(bin(good[:10]))
	abort()
	stream.CloseAndRecv()

	time.Sleep(50 * time.Millisecond)
	list, err := cl.ListJobs(ctx, &api.ListJobsRequest{})
	if err != nil || len(list.GetJobs()) != 0 {
		t.Fatalf("after bad requests: %d jobs stored, %v; want none", len(list.GetJobs()), err)
	}
	// Unknown and empty ids.
	const unknown = "00000000000000000000"
	if _, err := cl.GetJob(ctx, &api.GetJobRequest{JobId: unknown}); status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), unknown) {
		t.Errorf("GetJob(unknown) = %v", err)
	}
	if _, err := cl.CancelJob(ctx, &api.CancelJobRequest{JobId: unknown}); status.Code(err) != codes.NotFound {
		t.Errorf("CancelJob(unknown) = %v", err)
	}
	if _, err := cl.GetJob(ctx, &api.GetJobRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("GetJob(empty) = %v", err)
	}
	for name, call := range map[string]func() error{
		"WatchJob": func() error {
			s, err := cl.WatchJob(ctx, &api.WatchJobRequest{JobId: unknown})
			if err != nil {
				return err
			}
			_, err = s.Recv()
			return err
		},
		"GetArtifact": func() error {
			s, err := cl.GetArtifact(ctx, &api.GetArtifactRequest{JobId: unknown, Name: "report.json"})
			if err != nil {
				return err
			}
			_, err = s.Recv()
			return err
		},
	} {
		if err := call(); status.Code(err) != codes.NotFound {
			t.Errorf("%s(unknown) = %v, want NotFound", name, err)
		}
	}
	if _, err := cl.ListJobs(ctx, &api.ListJobsRequest{States: []api.JobState{42}}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("ListJobs(bad state) = %v", err)
	}

	// Through the CLI: a non-ELF file, an unknown id, an artifact name
	// that is a path.
	prog := writeProg(t, text)
	rc, _, errOut := runCLI(ctx, client.Submit, false, "", "--server", td.addr, prog)
	if rc != client.ExitError || !strings.Contains(errOut, "InvalidArgument") || !strings.Contains(errOut, "not an ELF file") {
		t.Errorf("submit non-ELF: rc %d, %q", rc, errOut)
	}
	rc, _, errOut = runCLI(ctx, client.Job, false, "", "--server", td.addr, unknown)
	if rc != client.ExitError || !strings.Contains(errOut, "NotFound") {
		t.Errorf("job unknown: rc %d, %q", rc, errOut)
	}
	rc, _, errOut = runCLI(ctx, client.Submit, false, "", "--server", td.addr, "--mode", "fast", prog)
	if rc != client.ExitUsage || !strings.Contains(errOut, `unknown mode "fast"`) {
		t.Errorf("submit --mode fast: rc %d, %q", rc, errOut)
	}
	s, err := cl.GetArtifact(ctx, &api.GetArtifactRequest{JobId: unknown, Name: "../etc/passwd"})
	if err == nil {
		_, err = s.Recv()
	}
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("GetArtifact(../etc/passwd) = %v", err)
	}
}

// TestHealthReflectionHTTP checks what grpcurl and Kubernetes probes use.
func TestHealthReflectionHTTP(t *testing.T) {
	ctx := context.Background()
	td := startDaemon(t, testConfig(t.TempDir()), &fakeExecutor{})
	cc, err := grpc.NewClient(td.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	hc := healthpb.NewHealthClient(cc)
	for _, svc := range []string{"", "gxbit.v1.JobService"} {
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health %q = %v, %v", svc, resp, err)
		}
	}
	rs, err := reflectionpb.NewServerReflectionClient(cc).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := rs.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "gxbit.v1.JobService") || !strings.Contains(got, "grpc.health.v1.Health") {
		t.Errorf("reflection lists %q", got)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		r, err := http.Get("http://" + td.http + path)
		if err != nil || r.StatusCode != 200 {
			t.Errorf("GET %s = %v, %v", path, r, err)
		}
		if r != nil {
			r.Body.Close()
		}
	}
}

// TestParseFlags checks the daemon's flags and their validation.
func TestParseFlags(t *testing.T) {
	env := func(k string) string { return map[string]string{"HOME": "/home/u"}[k] }
	cfg, err := ParseFlags(nil, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != DefaultListen || cfg.MetricsListen != DefaultMetricsListen || cfg.DataDir != "/home/u/.local/state/gxbitd" ||
		cfg.Manager.MaxBinaryBytes != 64<<20 || cfg.Manager.Workers < 1 || cfg.Manager.DefaultGPU != service.GPUAuto {
		t.Errorf("defaults = %+v", cfg)
	}
	cfg, err = ParseFlags([]string{"--listen", ":9", "--insecure-plaintext", "--data", "/d", "--workers", "3", "--max-upload", "1MiB", "--gpu", "sim", "--default-timeout", "1s"}, env, io.Discard)
	if err != nil || cfg.Listen != ":9" || cfg.DataDir != "/d" || cfg.Manager.Workers != 3 || cfg.Manager.MaxBinaryBytes != 1<<20 || cfg.Manager.DefaultGPU != service.GPUSim {
		t.Errorf("parsed = %+v, %v", cfg, err)
	}
	if d := DefaultDataDir(func(k string) string { return map[string]string{"STATE_DIRECTORY": "/var/lib/gxbitd:/x"}[k] }); d != "/var/lib/gxbitd" {
		t.Errorf("DefaultDataDir with STATE_DIRECTORY = %q", d)
	}
	for _, bad := range [][]string{
		{"--workers", "0"},
		{"--queue", "0"},
		{"--gpu", "tpu"},
		{"--max-upload", "lots"},
		{"--default-memory", "16GiB"},
		{"--default-timeout", "3h"},
		{"--listen", ""},
		{"extra"},
	} {
		if _, err := ParseFlags(bad, env, io.Discard); err == nil {
			t.Errorf("ParseFlags(%q) = nil error", bad)
		}
	}
	if _, err := ParseFlags([]string{"-h"}, env, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}

// TestCrashRecovery starts the daemon on a store left by a process that died
// with a job running and one queued, as after a crash.
func TestCrashRecovery(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, dbFile))
	if err != nil {
		t.Fatal(err)
	}
	bin := elftest.Build(elftest.Options{})
	limits := &api.Limits{MemoryBytes: 64 << 20, Instructions: 1000, WallTime: durationpb.New(10 * time.Second)}
	for _, j := range []*api.Job{
		{Id: "01a000000000aaaaaaaa", State: api.JobState_JOB_STATE_RUNNING, Spec: &api.JobSpec{Name: "p", Argv: []string{"p", "spin"}, Mode: api.Mode_MODE_ACCELERATE}, EffectiveLimits: limits},
		{Id: "01a000000001aaaaaaaa", State: api.JobState_JOB_STATE_QUEUED, Spec: &api.JobSpec{Name: "p", Argv: []string{"p", "exit=9"}, Mode: api.Mode_MODE_RUN}, EffectiveLimits: limits},
	} {
		if err := st.CreateJob(j, bin, nil); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	td := startDaemon(t, testConfig(dir), &fakeExecutor{})
	cl := td.conn(t)
	j := waitState(t, cl, "01a000000000aaaaaaaa", api.JobState_JOB_STATE_INTERRUPTED)
	if !strings.Contains(j.GetMessage(), "stopped while the job was running") || j.GetFinishedAt() == nil {
		t.Errorf("crashed job = %v", j)
	}
	j = waitState(t, cl, "01a000000001aaaaaaaa", api.JobState_JOB_STATE_SUCCEEDED)
	if j.GetExitCode() != 9 {
		t.Errorf("requeued job = %v", j)
	}
	m := td.metrics(t)
	if got := metricValue(t, m, `gxbit_jobs_total{mode="accelerate",outcome="interrupted"}`); got != 1 {
		t.Errorf("interrupted jobs counted = %v, want 1", got)
	}
}

// TestQueueFull checks that a submission beyond the queue is refused with
// ResourceExhausted and stores nothing.
func TestQueueFull(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t.TempDir())
	cfg.Manager.Workers = 1
	cfg.Manager.MaxQueued = 1
	fx := &fakeExecutor{started: make(chan string, 4)}
	td := startDaemon(t, cfg, fx)
	prog := writeProg(t, elftest.Build(elftest.Options{}))
	_, out, _ := runCLI(ctx, client.Submit, false, "", "--server", td.addr, "--detach", prog, "spin")
	running := strings.TrimSpace(out)
	<-fx.started
	if rc, _, errOut := runCLI(ctx, client.Submit, false, "", "--server", td.addr, "--detach", prog); rc != 0 {
		t.Fatalf("second submission: rc %d, %s", rc, errOut)
	}
	rc, _, errOut := runCLI(ctx, client.Submit, false, "", "--server", td.addr, "--detach", prog)
	if rc != client.ExitError || !strings.Contains(errOut, "ResourceExhausted") || !strings.Contains(errOut, "queue is full") {
		t.Errorf("third submission: rc %d, %q", rc, errOut)
	}
	list, err := td.conn(t).ListJobs(ctx, &api.ListJobsRequest{})
	if err != nil || len(list.GetJobs()) != 2 {
		t.Errorf("%d jobs stored, %v; want 2", len(list.GetJobs()), err)
	}
	runCLI(ctx, client.Cancel, false, "", "--server", td.addr, running)
}

// TestRefusesRoot checks that gxbitd run as root stops unless --allow-root
// is given (issue 12 item 4). It runs only as root.
func TestRefusesRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not running as root")
	}
	exec := func(Config) (service.Executor, error) {
		t.Fatal("the executor was built although gxbitd runs as root")
		return nil, nil
	}
	if rc := Main([]string{"--data", t.TempDir(), "--listen", "127.0.0.1:0", "--metrics-listen", ""}, exec); rc != 1 {
		t.Errorf("Main as root = %d, want 1", rc)
	}
}
