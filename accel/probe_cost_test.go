package accel_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
)

// TestProbeRecordsTwoRows accelerates testdata/nests/gemm.c, whose product
// nest (for i { for j: C *= beta; for k { for j: C += ... } }) runs as
// kernels over (i, j) that need three probed rows of i, with long rows
// (nk × nj inner iterations). Only two of those rows may run on the
// recording engine (the third on the fast one): the accesses recorded are
// bounded by two rows' worth, and the output is native's.
func TestProbeRecordsTwoRows(t *testing.T) {
	const ni, nj, nk = 24, 40, 200
	path := gccStatic(t, filepath.Join("..", "testdata", "nests", "gemm.c"), filepath.Join(t.TempDir(), "gemm"), "-O1", "-fno-tree-vectorize")
	args := []string{path, strconv.Itoa(ni), strconv.Itoa(nj), strconv.Itoa(nk)}
	prof := phase1(t, pipeline.Config{Path: path, Args: args, Engine: testEngine})
	want := runNative(t, path, args[1:]...)
	var out bytes.Buffer
	res, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
		accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want || res.ExitStatus != 0 {
		t.Fatalf("accelerated %q (status %d), native %q", out.String(), res.ExitStatus, want)
	}
	// A row of the product: C[i][j] loaded and stored by the beta loop,
	// A[i][k] per k, and C[i][j] loaded and stored and B[k][j] loaded per
	// (k, j).
	rowAccesses := uint64(2*nj + nk + 3*nk*nj)
	found := false
	for _, h := range rep.HotSpots {
		if h.ProbedIterations == 0 || h.ProbedAccesses < uint64(nk*nj) {
			continue // not the product nest
		}
		found = true
		t.Logf("%s: %d launches, probed %d iterations, %d accesses, %d instructions", h.Entry, h.Launches, h.ProbedIterations, h.ProbedAccesses, h.ProbedInstructions)
		if h.Launches == 0 {
			t.Errorf("%s: not offloaded: %s (fallbacks %v)", h.Entry, h.LastFallback, h.FallbackReasons)
		}
		if h.ProbedIterations != 2 {
			t.Errorf("%s: %d iterations recorded in one instance, want 2", h.Entry, h.ProbedIterations)
		}
		if h.ProbedAccesses > 2*rowAccesses {
			t.Errorf("%s: %d accesses recorded, more than two rows' %d", h.Entry, h.ProbedAccesses, 2*rowAccesses)
		}
	}
	if !found {
		t.Fatalf("no hot spot probed the product nest: %+v", rep.HotSpots)
	}
}
