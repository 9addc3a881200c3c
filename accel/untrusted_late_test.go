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

// lateOverlap updates overlapping rows in place: row i is x[i*s ..
// i*s+m), and with s < m its tail is row i+1's head, so the i loop is
// sequential, though the first iterations of two rows touch bytes far
// apart.
const lateOverlap = `#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	long n = atol(argv[1]), m = atol(argv[2]), s = atol(argv[3]);
	double *x = malloc(sizeof(double) * (n * s + m));
	for (long i = 0; i < n * s + m; i++)
		x[i] = (double)(i % 7);
	for (long i = 0; i < n; i++)
		for (long j = 0; j < m; j++)
			x[i * s + j] = x[i * s + j] * 0.5 + (double)(i + 1);
	double sum = 0;
	for (long i = 0; i < n * s + m; i++)
		sum += x[i] * (double)(i % 13);
	printf("%.17g\n", sum);
	return 0;
}
`

// TestUntrustedLateDependence marks the overlapping rows' i loop parallel
// by hand. A probed row records only its first inner iterations (bounded
// probing), where rows 0 and 1 touch bytes far apart; the dependence is
// only in the rows' later iterations. The independence check extends each
// recorded access along its steps over the whole row, so it must find the
// overlap before any launch: no launch, the reason a dependence, and the
// native output.
func TestUntrustedLateDependence(t *testing.T) {
	path := compileStatic(t, "late", lateOverlap)
	args := []string{path, "64", "1000", "600"}
	prof := phase1(t, pipeline.Config{Path: path, Args: args, Engine: testEngine})
	edited := ""
	for i := range prof.HotSpots {
		h := &prof.HotSpots[i]
		if len(h.Levels) != 2 || h.Levels[0].Verdict == profile.VerdictParallel {
			continue
		}
		h.Verdict, h.Reason, h.ParallelLevels = profile.VerdictParallel, "", []int{0, 1}
		edited = h.Entry.String()
	}
	if edited == "" {
		t.Fatal("phase 1 found no two-level nest with a sequential outer loop")
	}
	want := runNative(t, path, args[1:]...)
	var out bytes.Buffer
	res, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
		accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want || res.ExitStatus != 0 {
		t.Errorf("accelerated %q (status %d), native %q", out.String(), res.ExitStatus, want)
	}
	for _, h := range rep.HotSpots {
		if h.Entry != edited {
			continue
		}
		t.Logf("%s: launches %d, fallbacks %v (%s); probed %d accesses", h.Entry, h.Launches, h.FallbackReasons, h.LastFallback, h.ProbedAccesses)
		if h.Launches != 0 {
			t.Errorf("%s: %d launches of rows that overlap", h.Entry, h.Launches)
		}
		if h.FallbackReasons[accel.ReasonDependence] == 0 {
			t.Errorf("%s: fallbacks %v, want %q", h.Entry, h.FallbackReasons, accel.ReasonDependence)
		}
		if h.ProbedAccesses > 2*maxRowAccesses {
			t.Errorf("%s: %d accesses recorded, more than two bounded rows", h.Entry, h.ProbedAccesses)
		}
	}
}
