package accel_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// TestRowCopyNest runs testdata/rowcopy.c on gpusim: its nest copies a
// row per iteration with memcpy. Phase 1 models the call as the string
// copy it is (profile.InlineCall), so the nest is a hot spot, parallel;
// phase 2 launches it where the rows of a and b lie apart, and where the
// destination is a itself, a few bytes on (each call's source and
// destination overlap, which glibc copies as memmove), it sends the nest
// to the CPU with the reason. The output is native's every time, the
// profiled run's too (which copies overlapping rows as memmove).
func TestRowCopyNest(t *testing.T) {
	path := buildC(t, "rowcopy")
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path, "100", "300", "0", "0"}, Engine: testEngine})
	rows := ""
	for _, h := range prof.HotSpots {
		for _, a := range h.Accesses {
			if a.Kind == "write" && a.Size == 300 && h.Function == "main" {
				rows = h.Entry.String()
				if h.Verdict != "parallel" {
					t.Fatalf("the row copy nest %s is %s (%s), want parallel", rows, h.Verdict, h.Reason)
				}
			}
		}
	}
	if rows == "" {
		t.Fatal("no hot spot copies rows of 300 bytes: the memcpy call kept the nest out")
	}
	for _, c := range []struct {
		args     []string
		launched bool
	}{
		{[]string{"200", "500", "3", "0"}, true},
		{[]string{"100", "300", "8", "1"}, false},
	} {
		want := runNative(t, path, c.args...)
		var out bytes.Buffer
		_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: append([]string{path}, c.args...), Stdout: &out, Stderr: &out, Engine: testEngine},
			accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("%v: accelerated output differs from native:\n got %q\nwant %q", c.args, out.String(), want)
		}
		for _, h := range rep.HotSpots {
			if h.Entry != rows {
				continue
			}
			t.Logf("%v: %s %s: %d launches, fallbacks %v %s", c.args, h.Entry, h.Schedule, h.Launches, h.FallbackReasons, h.LastFallback)
			if c.launched && (h.Launches != 1 || h.Fallbacks != 0) {
				t.Errorf("%v: rows apart: %d launches, %d fallbacks, want one launch", c.args, h.Launches, h.Fallbacks)
			}
			if !c.launched && (h.Launches != 0 || h.Fallbacks == 0) {
				t.Errorf("%v: each copy overlapping itself: %d launches, %d fallbacks, want the CPU with a reason", c.args, h.Launches, h.Fallbacks)
			}
		}
	}
	// The profiled run copies the overlapping rows itself, as memmove.
	args := []string{"100", "300", "8", "1"}
	want := runNative(t, path, args...)
	var out bytes.Buffer
	if _, _, err := pipeline.Profile(context.Background(), pipeline.Config{Path: path, Args: append([]string{path}, args...), Stdout: &out, Stderr: &out, Engine: testEngine}, profile.Options{}); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("profiled run with overlapping copies: output differs from native:\n got %q\nwant %q", out.String(), want)
	}
}
