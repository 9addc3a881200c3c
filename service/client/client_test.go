package client

import (
	"flag"
	"io"
	"slices"
	"testing"

	"github.com/gxbit/gxbit/api"
)

func TestParseInterspersed(t *testing.T) {
	tests := []struct {
		args     []string
		wantPos  []string
		wantJSON bool
		wantSrv  string
	}{
		{[]string{"ID"}, []string{"ID"}, false, "d"},
		{[]string{"ID", "--json"}, []string{"ID"}, true, "d"},
		{[]string{"--server", "s:1", "A", "--json", "B"}, []string{"A", "B"}, true, "s:1"},
		{[]string{"A", "--", "--json"}, []string{"A", "--json"}, false, "d"},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		j := fs.Bool("json", false, "")
		s := fs.String("server", "d", "")
		pos, err := parseInterspersed(fs, tt.args)
		if err != nil || !slices.Equal(pos, tt.wantPos) || *j != tt.wantJSON || *s != tt.wantSrv {
			t.Errorf("parseInterspersed(%q) = %q, json %v, server %q, %v", tt.args, pos, *j, *s, err)
		}
	}
}

func TestParseState(t *testing.T) {
	for in, want := range map[string]api.JobState{
		"queued":                api.JobState_JOB_STATE_QUEUED,
		"limit_exceeded":        api.JobState_JOB_STATE_LIMIT_EXCEEDED,
		"limit exceeded":        api.JobState_JOB_STATE_LIMIT_EXCEEDED,
		"Limit-Exceeded":        api.JobState_JOB_STATE_LIMIT_EXCEEDED,
		"JOB_STATE_INTERRUPTED": api.JobState_JOB_STATE_INTERRUPTED,
		" succeeded ":           api.JobState_JOB_STATE_SUCCEEDED,
		"cancelled":             api.JobState_JOB_STATE_CANCELLED,
		"failed":                api.JobState_JOB_STATE_FAILED,
		"running":               api.JobState_JOB_STATE_RUNNING,
	} {
		got, err := parseState(in)
		if err != nil || got != want {
			t.Errorf("parseState(%q) = %v, %v; want %v", in, got, err, want)
		}
		if back, err := parseState(stateName(got)); err != nil || back != got {
			t.Errorf("parseState(stateName(%v)) = %v, %v", got, back, err)
		}
	}
	for _, bad := range []string{"", "unspecified", "JOB_STATE_UNSPECIFIED", "done"} {
		if _, err := parseState(bad); err == nil {
			t.Errorf("parseState(%q) = nil error", bad)
		}
	}
}

func TestExitStatus(t *testing.T) {
	tests := []struct {
		job  *api.Job
		want int
	}{
		{&api.Job{State: api.JobState_JOB_STATE_SUCCEEDED, ExitCode: 0}, 0},
		{&api.Job{State: api.JobState_JOB_STATE_SUCCEEDED, ExitCode: 42}, 42},
		{&api.Job{State: api.JobState_JOB_STATE_SUCCEEDED, ExitSignal: 11}, 139},
		{&api.Job{State: api.JobState_JOB_STATE_LIMIT_EXCEEDED}, ExitLimit},
		{&api.Job{State: api.JobState_JOB_STATE_CANCELLED}, ExitCancelled},
		{&api.Job{State: api.JobState_JOB_STATE_FAILED}, ExitError},
		{&api.Job{State: api.JobState_JOB_STATE_INTERRUPTED}, ExitError},
	}
	for _, tt := range tests {
		if got := exitStatus(tt.job); got != tt.want {
			t.Errorf("exitStatus(%v) = %d, want %d", tt.job, got, tt.want)
		}
	}
}

func TestHumanCount(t *testing.T) {
	for n, want := range map[uint64]string{0: "0", 999: "999", 1500: "1.5k", 2_500_000: "2.5M", 7e9: "7.0G", 3e12: "3.0T"} {
		if got := humanCount(n); got != want {
			t.Errorf("humanCount(%d) = %q, want %q", n, got, want)
		}
	}
}
