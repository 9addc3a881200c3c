package accel_test

import (
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/internal/corpus"
)

// TestPrefetch runs testdata/nests' twomm (eight hot spots: the
// initialisation nests and the two products) two-phase on gpusim with
// kernels loaded ahead (accel.PrefetchOn, what a real GPU does): the
// context opens and the modules load on the loader goroutine while the
// guest runs, the launches take them from there, and the output is
// native's. Run with -race, it checks the hand-over between the loader
// and the guest's goroutine.
func TestPrefetch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a nests program")
	}
	dir := buildNests(t, []string{"O2-static"})
	progs, err := corpus.Programs(dir, "O2-static")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range progs {
		if p.Name != "twomm" {
			continue
		}
		rep := accelerateWith(t, p, nil, accel.Options{Prefetch: accel.PrefetchOn})
		launches := 0
		for _, h := range rep.HotSpots {
			launches += h.Launches
		}
		t.Logf("%d launches, %d kernels loaded ahead", launches, rep.KernelsPrefetched)
		if launches == 0 {
			t.Fatal("no launch")
		}
		if rep.KernelsPrefetched == 0 {
			t.Error("no launch ran a kernel the loader had loaded ahead")
		}
		return
	}
	t.Fatal("twomm not built")
}
