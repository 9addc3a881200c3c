package accel_test

import (
	"runtime"
	"testing"

	"github.com/gxbit/gxbit/internal/corpus"
)

// TestRowStores2D runs testdata/nests' correlation two-phase on gpusim at
// a size whose rows fit one CTA: the triangular product's row stores
// its diagonal, corr[i][i] = 1.0, before the j loop, whose footprint lies
// inside the window of corr[j][i] (a column below it) in every launch;
// the 2D kernel checks each row's inner stores against it
// (ptxgen.Kernel.RowChecked), so the nest runs 2D (grid (i, j), it ran
// 1D before: 406 ms against covariance's 1.4 ms on an H100), with
// native's output.
func TestRowStores2D(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a nests program")
	}
	if runtime.NumCPU() < 2 {
		t.Skip("on one core the simulator prefers the 1D kernel")
	}
	dir := buildNests(t, []string{"O2-static"})
	progs, err := corpus.Programs(dir, "O2-static")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range progs {
		if p.Name != "correlation" {
			continue
		}
		rep := accelerateAt(t, p, []string{"100", "80"})
		n := 0
		for _, h := range rep.HotSpots {
			if h.Schedule == "grid(i) thread(j,k)" {
				n += h.Launches2D
			}
		}
		if n == 0 {
			t.Errorf("the product's nest ran no 2D launch")
		}
		return
	}
	t.Fatal("correlation not built")
}
