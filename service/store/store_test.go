package store

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/gxbit/gxbit/api"
)

func open(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func job(id string, st api.JobState) *api.Job {
	return &api.Job{Id: id, State: st, Spec: &api.JobSpec{Name: "prog-" + id}}
}

func TestCreateFinishReopen(t *testing.T) {
	s, path := open(t)
	j := job("0001", api.JobState_JOB_STATE_QUEUED)
	if err := s.CreateJob(j, []byte("ELF..."), []byte("input")); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateJob(j, nil, nil); err == nil {
		t.Fatal("creating the same job twice succeeded")
	}
	bin, in, err := s.Inputs("0001")
	if err != nil || string(bin) != "ELF..." || string(in) != "input" {
		t.Fatalf("Inputs = %q, %q, %v", bin, in, err)
	}
	if _, err := s.Artifact("0001", "report.json"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Artifact before finish: %v, want ErrNotFound", err)
	}
	j.State = api.JobState_JOB_STATE_SUCCEEDED
	arts := []Artifact{{Name: "report.json", Kind: api.ArtifactKind_ARTIFACT_KIND_REPORT, Data: []byte(`{"ok":true}`)}, {Name: "k.ptx", Kind: api.ArtifactKind_ARTIFACT_KIND_PTX, Data: []byte(".version 8.0")}}
	if err := s.FinishJob(j, []byte("log"), arts); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Inputs("0001"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Inputs after finish: %v, want ErrNotFound", err)
	}
	s.Close()

	s2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.Job("0001")
	if err != nil || !proto.Equal(got, j) {
		t.Fatalf("Job after reopen = %v, %v; want %v", got, err, j)
	}
	out, err := s2.Output("0001")
	if err != nil || string(out) != "log" {
		t.Fatalf("Output = %q, %v", out, err)
	}
	for _, a := range arts {
		data, err := s2.Artifact("0001", a.Name)
		if err != nil || !bytes.Equal(data, a.Data) {
			t.Errorf("Artifact %s = %q, %v", a.Name, data, err)
		}
	}
	if _, err := s2.Job("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Job(nope) = %v, want ErrNotFound", err)
	}
	if err := s2.UpdateJob(job("nope", api.JobState_JOB_STATE_RUNNING)); !errors.Is(err, ErrNotFound) {
		t.Errorf("UpdateJob(nope) = %v, want ErrNotFound", err)
	}
}

func TestListPages(t *testing.T) {
	s, _ := open(t)
	for i := range 25 {
		st := api.JobState_JOB_STATE_SUCCEEDED
		if i%5 == 0 {
			st = api.JobState_JOB_STATE_FAILED
		}
		if err := s.CreateJob(job(fmt.Sprintf("%04d", i), st), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	token := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		jobs, next, err := s.List(Filter{}, 10, token)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			ids = append(ids, j.GetId())
		}
		if next == "" {
			break
		}
		token = next
	}
	if len(ids) != 25 || ids[0] != "0024" || ids[24] != "0000" {
		t.Fatalf("ids = %v, want 0024 down to 0000", ids)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] >= ids[i-1] {
			t.Fatalf("not newest first at %d: %v", i, ids)
		}
	}
	failed, next, err := s.List(Filter{States: []api.JobState{api.JobState_JOB_STATE_FAILED}}, 100, "")
	if err != nil || next != "" || len(failed) != 5 {
		t.Fatalf("failed jobs = %d, next %q, %v; want 5", len(failed), next, err)
	}
	// A page that ends exactly at the last job has no next page.
	all, next, err := s.List(Filter{}, 25, "")
	if err != nil || len(all) != 25 || next != "" {
		t.Fatalf("List(25) = %d jobs, next %q, %v", len(all), next, err)
	}
}

func TestRecover(t *testing.T) {
	s, _ := open(t)
	for id, st := range map[string]api.JobState{
		"0001": api.JobState_JOB_STATE_SUCCEEDED,
		"0002": api.JobState_JOB_STATE_RUNNING,
		"0003": api.JobState_JOB_STATE_QUEUED,
		"0004": api.JobState_JOB_STATE_QUEUED,
	} {
		if err := s.CreateJob(job(id, st), []byte("bin"), nil); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Unix(1700000000, 0)
	queued, interrupted, err := s.Recover(now, "daemon stopped")
	if err != nil {
		t.Fatal(err)
	}
	if len(interrupted) != 1 || interrupted[0].GetId() != "0002" || len(queued) != 2 || queued[0].GetId() != "0003" || queued[1].GetId() != "0004" {
		t.Fatalf("Recover = %v, %v", queued, interrupted)
	}
	j, err := s.Job("0002")
	if err != nil || j.GetState() != api.JobState_JOB_STATE_INTERRUPTED || j.GetMessage() != "daemon stopped" || !j.GetFinishedAt().AsTime().Equal(now) {
		t.Fatalf("job 0002 after Recover = %v, %v", j, err)
	}
	if _, _, err := s.Inputs("0002"); !errors.Is(err, ErrNotFound) {
		t.Errorf("inputs of the interrupted job kept: %v", err)
	}
	if _, _, err := s.Inputs("0003"); err != nil {
		t.Errorf("inputs of a queued job lost: %v", err)
	}
}
