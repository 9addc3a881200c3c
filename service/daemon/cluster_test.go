package daemon

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/gxbit/gxbit/api"
	"github.com/gxbit/gxbit/service"
	"github.com/gxbit/gxbit/service/internal/elftest"
	"github.com/gxbit/gxbit/service/internal/pgtest"
)

// mainEnv, set in a child process's environment, makes the test binary run
// gxbitd's Main with the fake executor instead of the tests, so that the
// cluster test runs replicas as real processes.
const mainEnv = "GXBITD_TEST_MAIN"

var (
	pgOnce   sync.Once
	pgServer *pgtest.Server
	pgErr    error
)

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		os.Exit(Main(os.Args[1:], func(Config) (service.Executor, error) { return &fakeExecutor{}, nil }))
	}
	code := m.Run()
	if pgServer != nil {
		if err := pgServer.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	os.Exit(code)
}

// postgresDatabase returns a fresh database on the package's throwaway
// PostgreSQL server, started on first use; it skips the test only when the
// server cannot be started at all.
func postgresDatabase(t testing.TB) string {
	t.Helper()
	pgOnce.Do(func() { pgServer, pgErr = pgtest.Start() })
	if pgErr != nil {
		t.Skipf("PostgreSQL cannot be started here, so the shared store is not tested: %v", pgErr)
	}
	dsn, err := pgServer.NewDatabase(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// replica is a gxbitd process of the test.
type replica struct {
	name string
	cmd  *exec.Cmd
	addr string
	http string
	log  *syncBuffer
	done chan error
	conn api.JobServiceClient
}

var servingLine = regexp.MustCompile(`gxbitd serving" grpc=(\S+) metrics=(\S+)`)

// startReplica starts gxbitd as a child process on the shared store dsn.
func startReplica(t *testing.T, name, dsn string, extra ...string) *replica {
	t.Helper()
	args := []string{"--store", dsn, "--replica", name, "--data", t.TempDir(), "--listen", "127.0.0.1:0",
		"--metrics-listen", "127.0.0.1:0", "--workers", "4", "--lease", "2s", "--shutdown-grace", "2s",
		"--default-timeout", "1m"}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-root")
	}
	cmd := exec.Command(os.Args[0], append(args, extra...)...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &replica{name: name, cmd: cmd, log: &syncBuffer{}, done: make(chan error, 1)}
	found := make(chan [2]string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(r.log, line)
			if m := servingLine.FindStringSubmatch(line); m != nil {
				found <- [2]string{m[1], m[2]}
			}
		}
		io.Copy(io.Discard, stderr)
		r.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-r.done
		}
		if t.Failed() {
			t.Logf("log of replica %s:\n%s", name, r.log)
		}
	})
	select {
	case a := <-found:
		r.addr, r.http = a[0], a[1]
	case <-time.After(30 * time.Second):
		t.Fatalf("replica %s did not start; log:\n%s", name, r.log)
	}
	cc, err := grpc.NewClient(r.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	r.conn = api.NewJobServiceClient(cc)
	return r
}

// submit uploads a job with argv through r.
func (r *replica) submit(t *testing.T, ctx context.Context, prog []byte, argv ...string) string {
	t.Helper()
	s, err := r.conn.SubmitJob(ctx)
	if err != nil {
		t.Fatal(err)
	}
	spec := &api.JobSpec{Argv: argv, Mode: api.Mode_MODE_RUN, BinarySize: uint64(len(prog))}
	if err := s.Send(&api.SubmitJobRequest{Payload: &api.SubmitJobRequest_Spec{Spec: spec}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&api.SubmitJobRequest{Payload: &api.SubmitJobRequest_BinaryChunk{BinaryChunk: prog}}); err != nil {
		t.Fatal(err)
	}
	resp, err := s.CloseAndRecv()
	if err != nil {
		t.Fatalf("submit through %s: %v", r.name, err)
	}
	return resp.GetJobId()
}

// watched is what a watch stream delivered.
type watched struct {
	states []api.JobState
	stdout string
	final  *api.Job
	err    error
}

func watch(ctx context.Context, cl api.JobServiceClient, id string) watched {
	var w watched
	s, err := cl.WatchJob(ctx, &api.WatchJobRequest{JobId: id})
	if err != nil {
		w.err = err
		return w
	}
	for {
		ev, err := s.Recv()
		if err == io.EOF {
			return w
		}
		if err != nil {
			w.err = err
			return w
		}
		switch e := ev.GetEvent().(type) {
		case *api.JobEvent_State:
			w.states = append(w.states, e.State.GetState())
		case *api.JobEvent_Output:
			if e.Output.GetStream() == api.Stream_STREAM_STDOUT {
				w.stdout += string(e.Output.GetData())
			}
		case *api.JobEvent_Finished:
			w.final = e.Finished.GetJob()
		}
	}
}

// runningOn returns the ids of the jobs the store says replica runs.
func runningOn(t *testing.T, db *pgx.Conn, replica string) []string {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT id FROM jobs WHERE replica = $1 AND state = 2 ORDER BY id`, replica)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestReplicasShareQueue is issue 13's end-to-end test: two gxbitd
// processes on one PostgreSQL database take 40 jobs; one is killed with
// SIGKILL while it runs some. Within the lease the other marks those
// interrupted and runs what the dead one had claimed; every job ends
// exactly once, the finished ones with the right output; watch streams
// served by the surviving replica follow the dead one's jobs to their end;
// and a job watched through both replicas of a new pair arrives the same
// through either, whichever of them runs it.
func TestReplicasShareQueue(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dsn := postgresDatabase(t)
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	a := startReplica(t, "a", dsn)
	b := startReplica(t, "b", dsn)
	prog := elftest.Build(elftest.Options{})

	const n = 40
	ids := make([]string, n)
	want := map[string]string{}
	for i := range n {
		r := a
		if i%2 == 1 {
			r = b
		}
		argv := []string{"prog", "sleep=400ms", fmt.Sprintf("n=%d", i)}
		ids[i] = r.submit(t, ctx, prog, argv...)
		want[ids[i]] = "argv: " + strings.Join(argv, " ") + "\n"
	}

	// Wait until a runs jobs and has stored some of their output; stop it
	// (so that what it runs no longer changes), watch its jobs through b,
	// and kill it.
	var onA []string
	var withOutput string
	for deadline := time.Now().Add(30 * time.Second); withOutput == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("replica a never ran a job")
		}
		err := db.QueryRow(ctx, `SELECT j.id FROM jobs j WHERE j.replica = 'a' AND j.state = 2
			AND EXISTS (SELECT 1 FROM job_output o WHERE o.job_id = j.id) LIMIT 1`).Scan(&withOutput)
		if err != nil && err != pgx.ErrNoRows {
			t.Fatal(err)
		}
	}
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	onA = runningOn(t, db, "a")
	watches := make(chan watched, len(onA))
	for _, id := range onA {
		go func() { watches <- watch(ctx, b.conn, id) }()
	}
	time.Sleep(50 * time.Millisecond) // let the streams open
	killed := time.Now()
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.done

	// Every job ends, within the lease time of the kill.
	for _, id := range ids {
		for {
			j, err := b.conn.GetJob(ctx, &api.GetJobRequest{JobId: id})
			if err != nil {
				t.Fatalf("GetJob(%s) through b: %v", id, err)
			}
			if isFinished(j.GetState()) {
				break
			}
			if time.Since(killed) > 30*time.Second {
				t.Fatalf("job %s is still %v 30 s after replica a was killed", id, j.GetState())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Logf("all %d jobs ended %v after the kill; %d were running on a", n, time.Since(killed).Round(time.Millisecond), len(onA))

	interruptedIDs := map[string]bool{}
	for _, id := range onA {
		interruptedIDs[id] = true
	}
	for range onA {
		w := <-watches
		if w.err != nil || w.final == nil {
			t.Errorf("watch through b of a job on a: %+v", w)
			continue
		}
		if w.final.GetState() != api.JobState_JOB_STATE_INTERRUPTED || !strings.Contains(w.final.GetMessage(), "lease") {
			t.Errorf("job %s, running on a when it died, ended %v %q", w.final.GetId(), w.final.GetState(), w.final.GetMessage())
		}
		if got := fmt.Sprint(w.states); got != "[JOB_STATE_RUNNING JOB_STATE_INTERRUPTED]" {
			t.Errorf("job %s: the watch through b saw states %s", w.final.GetId(), got)
		}
		// The output a stored before it died: all of it for the job
		// waited for, none or all for the others.
		if id := w.final.GetId(); w.stdout != want[id] && (id == withOutput || w.stdout != "") {
			t.Errorf("job %s: the watch through b saw stdout %q, want %q (the output a stored before it died)", id, w.stdout, want[id])
		}
	}
	for _, id := range ids {
		w := watch(ctx, b.conn, id)
		if w.err != nil || w.final == nil {
			t.Errorf("watch %s: %+v", id, w)
			continue
		}
		switch {
		case interruptedIDs[id]:
			if w.final.GetState() != api.JobState_JOB_STATE_INTERRUPTED {
				t.Errorf("job %s, running on a when it died, is %v", id, w.final.GetState())
			}
			if id == withOutput && w.stdout != want[id] {
				t.Errorf("job %s: interrupted with stdout %q, want %q (its output until a died)", id, w.stdout, want[id])
			}
		case w.final.GetState() != api.JobState_JOB_STATE_SUCCEEDED || w.stdout != want[id]:
			t.Errorf("job %s ended %v %q with stdout %q, want succeeded with %q", id, w.final.GetState(), w.final.GetMessage(), w.stdout, want[id])
		}
	}
	// Exactly one end per job in the state history.
	var ends, jobs int
	if err := db.QueryRow(ctx, `SELECT count(*), count(DISTINCT job_id) FROM job_states WHERE state >= 3`).Scan(&ends, &jobs); err != nil {
		t.Fatal(err)
	}
	if ends != n || jobs != n {
		t.Errorf("the state history has %d ends of %d jobs, want %d of %d", ends, jobs, n, n)
	}
	m := b.metricsText(t)
	if got := metricValue(t, m, `gxbit_lease_expiries_total{state="running"}`); int(got) != len(onA) {
		t.Errorf("b counted %v expired leases of running jobs, want %d", got, len(onA))
	}

	// A new replica joins; a job watched through both arrives the same
	// through either, whichever runs it.
	c := startReplica(t, "c", dsn)
	id := c.submit(t, ctx, prog, "prog", "sleep=700ms", "exit=3")
	wb, wc := make(chan watched, 1), make(chan watched, 1)
	go func() { wb <- watch(ctx, b.conn, id) }()
	go func() { wc <- watch(ctx, c.conn, id) }()
	for _, w := range []watched{<-wb, <-wc} {
		if w.err != nil || w.final.GetState() != api.JobState_JOB_STATE_SUCCEEDED || w.final.GetExitCode() != 3 || w.stdout != "argv: prog sleep=700ms exit=3\n" {
			t.Errorf("watch of the last job: %+v", w)
		}
	}
	var ranOn string
	if err := db.QueryRow(ctx, `SELECT replica FROM job_states WHERE job_id = $1 AND state = 2`, id).Scan(&ranOn); err != nil {
		t.Fatal(err)
	}
	t.Logf("the last job ran on %s", ranOn)

	// A job cancelled through the replica that does not run it ends
	// cancelled: its replica learns of it when it renews its leases.
	spinning := c.submit(t, ctx, prog, "prog", "spin")
	var runner string
	for deadline := time.Now().Add(20 * time.Second); runner == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the spinning job never started")
		}
		err := db.QueryRow(ctx, `SELECT replica FROM jobs WHERE id = $1 AND state = 2`, spinning).Scan(&runner)
		if err != nil && err != pgx.ErrNoRows {
			t.Fatal(err)
		}
	}
	other := b
	if runner == "b" {
		other = c
	}
	if _, err := other.conn.CancelJob(ctx, &api.CancelJobRequest{JobId: spinning}); err != nil {
		t.Fatalf("cancel through %s of a job on %s: %v", other.name, runner, err)
	}
	w := watch(ctx, other.conn, spinning)
	if w.err != nil || w.final.GetState() != api.JobState_JOB_STATE_CANCELLED || w.final.GetMessage() != "cancelled by a client" {
		t.Errorf("the job cancelled through %s, running on %s: %+v", other.name, runner, w)
	}

	// SIGTERM: both stop cleanly.
	for _, r := range []*replica{b, c} {
		r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("replica %s exited with %v", r.name, err)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("replica %s did not stop on SIGTERM", r.name)
		}
	}
}

func (r *replica) metricsText(t *testing.T) string {
	t.Helper()
	td := &testDaemon{http: r.http}
	return td.metrics(t)
}

func isFinished(st api.JobState) bool {
	return st != api.JobState_JOB_STATE_QUEUED && st != api.JobState_JOB_STATE_RUNNING
}
