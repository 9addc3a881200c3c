package accel_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/pipeline"
)

// TestStatementsSplitOnDevice runs the nests corpus's bicg (q = A·p and s =
// Aᵀ·r in one j loop, gcc -O2) on gpusim: the initialisation nest makes A
// on the device, and the product nest, whose levels each carry something
// (i carries s, j q's sum), runs as the schedule's two statement kernels
// (grid i for q, grid j with i inside for s). Only the vectors may come
// back to the host (the checksum reads s and q), and the pages of A's rows
// that the iterations run on the CPU read (probed ones, the tail). Before the schedule split
// statements, the product ran on the CPU and brought all of A back.
func TestStatementsSplitOnDevice(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a C program")
	}
	path := gccStatic(t, filepath.Join("..", "testdata", "nests", "bicg.c"), filepath.Join(t.TempDir(), "bicg"), "-O2")
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path}, Engine: testEngine})
	const n, m = 300, 260
	rep := offloadedAsNative(t, path, []string{path, "300", "260"}, prof)
	product := false
	for _, h := range rep.HotSpots {
		t.Logf("%s %s: %d launches, %d fallbacks (%s); %s", h.Entry, h.Schedule, h.Launches, h.Fallbacks, h.LastFallback, h.ScheduleNote)
		if strings.Contains(h.Schedule, "[i<->j]") {
			product = true
			if h.Launches < 2 || !strings.HasPrefix(h.ScheduleNote, "phase 2 runs the schedule's kernels") {
				t.Errorf("the product nest %s launched %d kernels (%s)", h.Entry, h.Launches, h.ScheduleNote)
			}
		}
	}
	if !product {
		t.Errorf("no hot spot with the split schedule in the report")
	}
	vectors := uint64(8 * (n + m))
	if back := rep.BytesBroughtBack; back > 2*vectors+16*4096 {
		t.Errorf("%d bytes brought back to the host; the vectors are %d (A is %d)", back, vectors, 8*n*m)
	}
}
