package accel_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
)

// TestSqrtErrorPath offloads a loop around sqrt (testdata/sqrtpath.c,
// -O2): gcc calls the library's sqrt only for a negative argument, and
// phase 1 leaves that path out of the loop (profile.Level.Cold), so the
// i loop launches. From the third round one argument is negative: the
// thread that reaches the call ends the launch with an error, the CPU
// runs the instance and makes the call, and the output (NaN, errno) is
// the native one.
func TestSqrtErrorPath(t *testing.T) {
	path := buildC(t, "sqrtpath")
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path, "200", "2", "99"}, Engine: testEngine})
	for _, neg := range []string{"99", "2"} {
		args := []string{path, "400", "4", neg}
		want := runNative(t, path, args[1:]...)
		var out bytes.Buffer
		res, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
			accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != want || res.ExitStatus != 0 {
			t.Fatalf("neg %s: accelerated %q (status %d), native %q", neg, out.String(), res.ExitStatus, want)
		}
		launched, cold := 0, false
		for _, h := range rep.HotSpots {
			t.Logf("neg %s: %s %s: launches %d, fallbacks %v %s %s", neg, h.Entry, h.Schedule, h.Launches, h.FallbackReasons, h.LastFallback, h.Reason)
			if strings.HasPrefix(h.Schedule, "grid(i) thread(j)") {
				launched += h.Launches
				cold = cold || strings.Contains(h.LastFallback, "a path only the CPU runs")
			}
		}
		if launched == 0 {
			t.Errorf("neg %s: the i loop around sqrt did not launch", neg)
		}
		if neg == "2" && !cold {
			t.Errorf("neg %s: no launch ended on the sqrt call's path", neg)
		}
	}
}
