package pgstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gxbit/gxbit/api"
	"github.com/gxbit/gxbit/service/internal/pgtest"
	"github.com/gxbit/gxbit/service/store"
)

var server *pgtest.Server
var serverErr error

func TestMain(m *testing.M) {
	server, serverErr = pgtest.Start()
	code := m.Run()
	if server != nil {
		if err := server.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	os.Exit(code)
}

// database returns a fresh database, or skips when PostgreSQL cannot be
// started at all.
func database(t *testing.T) string {
	t.Helper()
	if serverErr != nil {
		t.Skipf("PostgreSQL cannot be started here: %v", serverErr)
	}
	dsn, err := server.NewDatabase(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

func open(t *testing.T, dsn, replica string, lease time.Duration) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn, replica, lease)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func queued(id, owner string) *api.Job {
	return &api.Job{Id: id, Owner: owner, State: api.JobState_JOB_STATE_QUEUED, Spec: &api.JobSpec{Name: "p"}}
}

// TestLeases walks a job through two replicas: one claims it, the other
// cannot finish it; its lease expires and the other marks it interrupted;
// the first then cannot finish it either, so it finishes exactly once.
func TestLeases(t *testing.T) {
	ctx := context.Background()
	dsn := database(t)
	a := open(t, dsn, "a", time.Second)
	b := open(t, dsn, "b", time.Second) // a second Open runs no migration twice
	for i, id := range []string{"j1", "j2", "j3"} {
		if err := a.CreateJob(queued(id, fmt.Sprint("u", i%2)), []byte("bin-"+id), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.CreateJob(queued("j1", ""), nil, nil); err == nil {
		t.Error("a duplicate job was created")
	}
	if n, err := a.QueueDepth(ctx); err != nil || n != 3 {
		t.Errorf("QueueDepth = %d, %v", n, err)
	}
	j1, err := a.Claim(ctx)
	if err != nil || j1.GetId() != "j1" {
		t.Fatalf("a claims %v, %v; want j1", j1, err)
	}
	j2, err := b.Claim(ctx)
	if err != nil || j2.GetId() != "j2" {
		t.Fatalf("b claims %v, %v; want j2 (j1 is a's)", j2, err)
	}
	if bin, _, err := a.Inputs("j1"); err != nil || string(bin) != "bin-j1" {
		t.Errorf("Inputs(j1) = %q, %v", bin, err)
	}
	j1.State = api.JobState_JOB_STATE_RUNNING
	if err := b.UpdateJob(j1); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("b updates a's job: %v", err)
	}
	if err := a.UpdateJob(j1); err != nil {
		t.Fatal(err)
	}
	if err := b.RequestCancel("j1"); err != nil {
		t.Fatal(err)
	}
	if ids, err := a.Renew(ctx); err != nil || len(ids) != 1 || ids[0] != "j1" {
		t.Errorf("a renews: cancel %v, %v; want [j1]", ids, err)
	}
	// b stops renewing j2 (queued, claimed) and a stops renewing j1
	// (running): both leases run out.
	time.Sleep(1200 * time.Millisecond)
	interrupted, requeued, err := b.Expire(ctx, "lease expired")
	if err != nil || len(interrupted) != 1 || interrupted[0].GetId() != "j1" || len(requeued) != 1 || requeued[0] != "j2" {
		t.Fatalf("Expire = %v, %v, %v", interrupted, requeued, err)
	}
	done := &api.Job{Id: "j1", State: api.JobState_JOB_STATE_SUCCEEDED}
	if err := a.FinishJob(done, []byte("out"), nil); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("a finishes the job b interrupted: %v", err)
	}
	if j, err := b.Job("j1"); err != nil || j.GetState() != api.JobState_JOB_STATE_INTERRUPTED || j.GetMessage() != "lease expired" {
		t.Errorf("j1 = %v, %v", j, err)
	}
	hist, err := a.StateHistory("j1")
	if err != nil || fmt.Sprint(hist) != "[JOB_STATE_QUEUED JOB_STATE_RUNNING JOB_STATE_INTERRUPTED]" {
		t.Errorf("history of j1 = %v, %v", hist, err)
	}
	// j2 runs again, this time to its end, with output and artifacts.
	j2, err = a.Claim(ctx)
	if err != nil || j2.GetId() != "j2" {
		t.Fatalf("a claims %v, %v; want j2 again", j2, err)
	}
	if err := a.AppendOutput("j2", 1, []byte("live")); err != nil {
		t.Fatal(err)
	}
	if p, err := b.LiveOutput("j2", 0); err != nil || len(p) != 1 || string(p[0].Data) != "live" {
		t.Errorf("LiveOutput = %v, %v", p, err)
	}
	j2.State = api.JobState_JOB_STATE_SUCCEEDED
	if err := a.FinishJob(j2, []byte("final"), []store.Artifact{{Name: "report.json", Kind: api.ArtifactKind_ARTIFACT_KIND_REPORT, Data: []byte("{}")}}); err != nil {
		t.Fatal(err)
	}
	if out, err := b.Output("j2"); err != nil || string(out) != "final" {
		t.Errorf("Output = %q, %v", out, err)
	}
	if p, err := b.LiveOutput("j2", 0); err != nil || len(p) != 0 {
		t.Errorf("live output of a finished job = %v, %v; want none (the final log replaces it)", p, err)
	}
	if d, err := b.Artifact("j2", "report.json"); err != nil || string(d) != "{}" {
		t.Errorf("Artifact = %q, %v", d, err)
	}
	if _, _, err := b.Inputs("j2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("inputs of a finished job: %v", err)
	}
	// An unclaimed queued job can be finished (cancelled) by anyone; a
	// claimed one handed back by Release can be claimed again.
	j3, _ := b.Claim(ctx)
	if n, err := b.Release(ctx); err != nil || n != 1 {
		t.Errorf("Release = %d, %v", n, err)
	}
	j3.State = api.JobState_JOB_STATE_CANCELLED
	if err := a.FinishJob(j3, nil, nil); err != nil {
		t.Errorf("cancelling an unclaimed queued job: %v", err)
	}
	if j, err := a.Claim(ctx); err != nil || j != nil {
		t.Errorf("Claim on an empty queue = %v, %v", j, err)
	}

	jobs, next, err := a.List(store.Filter{}, 2, "")
	if err != nil || len(jobs) != 2 || jobs[0].GetId() != "j3" || next != "j2" {
		t.Fatalf("List page 1 = %v, %q, %v", jobs, next, err)
	}
	jobs, next, err = a.List(store.Filter{}, 2, next)
	if err != nil || len(jobs) != 1 || jobs[0].GetId() != "j1" || next != "" {
		t.Errorf("List page 2 = %v, %q, %v", jobs, next, err)
	}
	jobs, _, err = a.List(store.Filter{Owner: "u1"}, 10, "")
	if err != nil || len(jobs) != 1 || jobs[0].GetId() != "j2" {
		t.Errorf("List of u1 = %v, %v", jobs, err)
	}
	jobs, _, err = a.List(store.Filter{States: []api.JobState{api.JobState_JOB_STATE_INTERRUPTED, api.JobState_JOB_STATE_CANCELLED}}, 10, "")
	if err != nil || len(jobs) != 2 {
		t.Errorf("List by state = %v, %v", jobs, err)
	}
	if _, err := a.Job("nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Job(nope) = %v", err)
	}
}

// TestClaimsDoNotOverlap has 4 replicas claim 40 jobs at once: each job is
// claimed exactly once.
func TestClaimsDoNotOverlap(t *testing.T) {
	ctx := context.Background()
	dsn := database(t)
	var replicas []*Store
	for i := range 4 {
		replicas = append(replicas, open(t, dsn, fmt.Sprint("r", i), 10*time.Second))
	}
	for i := range 40 {
		if err := replicas[0].CreateJob(queued(fmt.Sprintf("j%02d", i), ""), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	claims := make(chan string, 100)
	errc := make(chan error, 4)
	for _, r := range replicas {
		go func() {
			for {
				j, err := r.Claim(ctx)
				if err != nil || j == nil {
					errc <- err
					return
				}
				claims <- j.GetId()
			}
		}()
	}
	for range replicas {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	close(claims)
	seen := map[string]int{}
	for id := range claims {
		seen[id]++
	}
	if len(seen) != 40 {
		t.Errorf("%d jobs claimed, want 40", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("job %s claimed %d times", id, n)
		}
	}
}

// TestRestartedReplica checks that a replica started under the name of one
// that stopped without handing its jobs back ends them at once, instead of
// renewing their leases for ever.
func TestRestartedReplica(t *testing.T) {
	ctx := context.Background()
	dsn := database(t)
	old := open(t, dsn, "pod-0", time.Minute)
	for _, id := range []string{"j1", "j2"} {
		if err := old.CreateJob(queued(id, ""), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	j1, _ := old.Claim(ctx)
	j1.State = api.JobState_JOB_STATE_RUNNING
	if err := old.UpdateJob(j1); err != nil {
		t.Fatal(err)
	}
	old.Claim(ctx) // j2, claimed but not started
	again := open(t, dsn, "pod-0", time.Minute)
	interrupted, requeued, err := again.RecoverReplica(ctx, "restarted")
	if err != nil || len(interrupted) != 1 || interrupted[0].GetId() != "j1" || len(requeued) != 1 || requeued[0] != "j2" {
		t.Fatalf("RecoverReplica = %v, %v, %v", interrupted, requeued, err)
	}
	if j, err := again.Claim(ctx); err != nil || j.GetId() != "j2" {
		t.Errorf("claim after the restart = %v, %v; want j2", j, err)
	}
}

// TestNewerSchema checks that a gxbitd meeting a schema newer than it
// knows refuses to start.
func TestNewerSchema(t *testing.T) {
	dsn := database(t)
	s := open(t, dsn, "a", time.Minute)
	if _, err := s.pool.Exec(context.Background(), `INSERT INTO schema_migrations (version) VALUES ($1)`, SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), dsn, "b", time.Minute); err == nil || !strings.Contains(err.Error(), "newer than this gxbitd knows") {
		t.Errorf("Open on a newer schema: %v", err)
	}
}
