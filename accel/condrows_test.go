package accel_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
)

// TestUnseenPrefixStore runs testdata/condrows.c on gpusim, profiled with
// rows of 200 and accelerated with rows of 4000: the profile's strides do
// not hold, so phase 2 must see every access of the rows nest in both
// probed rows. Its store under x > 7.5 first runs at j = 8, after the
// few inner iterations a probed row records before it skips the rest
// (bounded.go): a row that skipped there never showed it, and the nest
// fell back ("did not run in both probed iterations"). A row whose prefix
// misses an access the profile saw in that loop is recorded to its end,
// so the nest launches, the output native's.
func TestUnseenPrefixStore(t *testing.T) {
	path := buildC(t, "condrows")
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path, "100", "200"}, Engine: testEngine})
	rows := ""
	for _, h := range prof.HotSpots {
		writes := 0
		for _, a := range h.Accesses {
			if a.Kind == "write" {
				writes++
			}
		}
		if h.Function == "main" && len(h.Levels) == 2 && writes == 2 {
			rows = h.Entry.String()
		}
	}
	if rows == "" {
		t.Fatal("no two-level hot spot with the rows nest's two stores")
	}
	args := []string{"300", "4000"}
	want := runNative(t, path, args...)
	var out bytes.Buffer
	_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: append([]string{path}, args...), Stdout: &out, Stderr: &out, Engine: testEngine},
		accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("accelerated output differs from native:\n got %q\nwant %q", out.String(), want)
	}
	for _, h := range rep.HotSpots {
		if h.Entry != rows {
			continue
		}
		t.Logf("%s %s: %d launches, fallbacks %v %s", h.Entry, h.Schedule, h.Launches, h.FallbackReasons, h.LastFallback)
		if h.Launches != 1 || h.Fallbacks != 0 {
			t.Errorf("rows nest %s: %d launches, %d fallbacks (%s), want one launch", h.Entry, h.Launches, h.Fallbacks, h.LastFallback)
		}
		return
	}
	t.Errorf("rows nest %s not in the report", rows)
}
