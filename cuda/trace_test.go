package cuda

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCallTrace records two calls and reads them back: a line each, with
// when each was asked for and began, how long it ran, its thread and its
// name, after a header naming the unix time the milliseconds count from;
// a nil trace (no Options.Trace) records nothing.
func TestCallTrace(t *testing.T) {
	var nilTrace *callTrace
	nilTrace.record("driver", "cuMemcpyDtoH_v2", time.Now(), time.Now())
	if newCallTrace(nil) != nil {
		t.Fatal("a trace without a writer")
	}
	var b bytes.Buffer
	tr := newCallTrace(&b)
	asked := time.Now()
	time.Sleep(2 * time.Millisecond)
	tr.record("jit", "cuModuleLoadDataEx", asked, time.Now())
	tr.record("driver", "cuMemcpyDtoH_v2", time.Now(), time.Now())
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	header, lines := lines[0], lines[1:]
	if f := strings.Fields(header); f[0] != "#" || f[len(f)-1] == "" {
		t.Errorf("header %q", header)
	} else if unix, err := strconv.ParseFloat(f[len(f)-1], 64); err != nil || unix < float64(asked.Add(-time.Second).Unix()) || unix > float64(asked.Unix()+1) {
		t.Errorf("header %q: want the unix time the trace began", header)
	}
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), b.String())
	}
	f := strings.Fields(lines[0])
	if len(f) != 5 || f[3] != "jit" || f[4] != "cuModuleLoadDataEx" {
		t.Fatalf("line %q: want asked, begun, took, thread, call", lines[0])
	}
	askedMs, err1 := strconv.ParseFloat(f[0], 64)
	begunMs, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil || begunMs-askedMs < 1.5 {
		t.Errorf("line %q: the call was asked for 2 ms before it began", lines[0])
	}
	if f := strings.Fields(lines[1]); len(f) != 5 || f[3] != "driver" || f[4] != "cuMemcpyDtoH_v2" {
		t.Errorf("line %q", lines[1])
	}
}
