package accel_test

import (
	"strconv"
	"testing"

	"github.com/gxbit/gxbit/internal/corpus"
)

// TestInitBornOnDevice runs testdata/nests' atax two-phase on gpusim:
// its initialisation nest A[i][j] = … (grid (i, j)) overwrites A entirely,
// so the launch must copy (almost) nothing of A in, and leave A on the
// device for the product nest that reads it there: nothing copied back
// eagerly. The output is native's. Before the dense-store proof every
// byte of A was copied in first (m·n·8 bytes).
func TestInitBornOnDevice(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a nests program")
	}
	dir := buildNests(t, []string{"O2-static"})
	progs, err := corpus.Programs(dir, "O2-static")
	if err != nil {
		t.Fatal(err)
	}
	const m, n = 100, 3000
	for _, p := range progs {
		if p.Name != "atax" {
			continue
		}
		rep := accelerateAt(t, p, []string{strconv.Itoa(m), strconv.Itoa(n)})
		found := false
		for _, h := range rep.HotSpots {
			t.Logf("%s %s: %d launches (%d 2D), in %d, out %d, left on device %d", h.Entry, h.Schedule, h.Launches, h.Launches2D, h.BytesIn, h.BytesOut, h.BytesDeferred)
			if h.Launches2D == 0 {
				continue // the 1D nests over x, y and tmp
			}
			found = true
			// At most the 16-byte edges of A's footprint are copied in.
			if h.BytesIn > 32 {
				t.Errorf("the init nest %s copied %d bytes in, want none: it overwrites A (%d bytes) entirely", h.Entry, h.BytesIn, m*n*8)
			}
			if h.BytesOut != 0 || h.BytesDeferred < (m-8)*n*8 {
				t.Errorf("the init nest %s copied %d bytes back and left %d on the device, want A left there", h.Entry, h.BytesOut, h.BytesDeferred)
			}
		}
		if !found {
			t.Error("no 2D launch: the init nest of A ran on the CPU")
		}
		return
	}
	t.Fatal("atax not built")
}
