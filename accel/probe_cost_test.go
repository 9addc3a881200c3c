package accel_test

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gxbit/gxbit/pipeline"
)

// maxRowAccesses bounds the accesses one recorded row of gemm's product
// nest may record: its beta loop and its k loop each record their first
// four iterations, and each recorded k iteration its inner j loop's first
// four (2·4 + 4·(1 + 3·4) = 60), with room to spare.
const maxRowAccesses = 200

// TestProbeBoundedRows accelerates testdata/nests/gemm.c, whose product
// nest (for i { for j: C *= beta; for k { for j: C += ... } }) runs as
// kernels over (i, j) that need three probed rows of i, with rows more
// than a hundred times maxRowAccesses long (nk × nj inner iterations).
// Each recorded row records only the first iterations of its inner loops
// and runs the rest on the fast engine (bounded.go): the accesses recorded
// per row stay under the bound, and the output is native's, with the
// kernels launched on footprints extended from those prefixes.
func TestProbeBoundedRows(t *testing.T) {
	const ni, nj, nk = 24, 40, 200
	path := gccStatic(t, filepath.Join("..", "testdata", "nests", "gemm.c"), filepath.Join(t.TempDir(), "gemm"), "-O1", "-fno-tree-vectorize")
	args := []string{path, strconv.Itoa(ni), strconv.Itoa(nj), strconv.Itoa(nk)}
	prof := phase1(t, pipeline.Config{Path: path, Args: args, Engine: testEngine})
	// The product nest: the one with three loops under its level (the
	// beta loop, k, and j inside k).
	product := ""
	for _, h := range prof.HotSpots {
		if len(h.InnerLoops) == 3 {
			product = h.Entry.String()
		}
	}
	if product == "" {
		t.Fatal("phase 1 found no nest with the product's three inner loops")
	}
	rowAccesses := uint64(2*nj + nk + 3*nk*nj)
	if rowAccesses < 100*maxRowAccesses {
		t.Fatalf("a row of %d accesses is too short to show the bound", rowAccesses)
	}
	rep := offloadedAsNative(t, path, args, prof)
	found := false
	for _, h := range rep.HotSpots {
		if h.Entry != product {
			continue
		}
		found = true
		t.Logf("%s: %d launches, probed %d iterations, %d accesses, %d instructions recorded", h.Entry, h.Launches, h.ProbedIterations, h.ProbedAccesses, h.ProbedInstructions)
		if h.Launches == 0 {
			t.Errorf("%s: not offloaded: %s (fallbacks %v)", h.Entry, h.LastFallback, h.FallbackReasons)
		}
		if h.ProbedIterations != 2 {
			t.Errorf("%s: %d iterations recorded in one instance, want 2", h.Entry, h.ProbedIterations)
		}
		if h.ProbedAccesses > 2*maxRowAccesses {
			t.Errorf("%s: %d accesses recorded in two rows, more than the bound of %d a row (a row has %d)", h.Entry, h.ProbedAccesses, maxRowAccesses, rowAccesses)
		}
	}
	if !found {
		t.Fatalf("hot spot %s is not in the report: %+v", product, rep.HotSpots)
	}
}

// TestProbeBoundedRows2D accelerates testdata/nests/conv2d.c at -O2, whose
// stencil nest runs as a 2D kernel and whose inner loop goes back to its
// header through a block of register moves (gcc's rotated loop): rows of
// nj inner iterations, a hundred times the bound's worth of accesses.
// Every recorded row records at most maxRowAccesses (recorded whole, the
// stencil's rows would record 25,000 between them), and the output is
// native's with the 2D kernel launched.
func TestProbeBoundedRows2D(t *testing.T) {
	const ni, nj = 40, 2500
	path := gccStatic(t, filepath.Join("..", "testdata", "nests", "conv2d.c"), filepath.Join(t.TempDir(), "conv2d"), "-O2")
	args := []string{path, strconv.Itoa(ni), strconv.Itoa(nj)}
	prof := phase1(t, pipeline.Config{Path: path, Args: args[:1], Engine: testEngine})
	rep := offloadedAsNative(t, path, args, prof)
	long := 0
	for _, h := range rep.HotSpots {
		if h.ProbedIterations == 0 {
			continue
		}
		t.Logf("%s: %d launches (%d 2D), probed %d iterations, %d accesses", h.Entry, h.Launches, h.Launches2D, h.ProbedIterations, h.ProbedAccesses)
		if h.ProbedAccesses > uint64(h.ProbedIterations)*maxRowAccesses {
			t.Errorf("%s: %d accesses recorded in %d rows of %d inner iterations, more than %d a row", h.Entry, h.ProbedAccesses, h.ProbedIterations, nj, maxRowAccesses)
		}
		if h.Launches2D > 0 {
			long++
		}
	}
	if long == 0 {
		t.Errorf("no hot spot launched its 2D kernel: %+v", rep.HotSpots)
	}
}
