package accel_test

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// TestTailBringsBackAhead accelerates testdata/nests' cholesky at 400
// (rows of 3,200 bytes), every column's nest launched: each instance's CPU
// tail reads the last row, which the launch left on the device, and the
// next instance's probed rows are the ones this instance began with. The
// tail's footprint comes back in one batch before the CPU runs it, with
// the stale pages of the instance's first rows (bringBackTail), so the
// guest finds few pages stale, the output is native's, and bring-backs
// take about a copy an instance (379 launches: 31 faults and 381 copies;
// a page at a time, 870 and 870; the tail alone, 388 and 738).
// Where the kernels give the exit state, no CPU tail is left to bring back
// ahead of: the reads between instances then fault, a window a copy, and
// the copies stay about one an instance.
func TestTailBringsBackAhead(t *testing.T) {
	script, err := corpus.ScriptPath()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(filepath.Dir(script), string(corpus.SuiteNests), "cholesky.c")
	bin := gccStatic(t, src, filepath.Join(t.TempDir(), "cholesky"), "-O2")
	_, prof, err := pipeline.Profile(context.Background(), pipeline.Config{Path: bin, Args: []string{bin}, Stdout: io.Discard, Stderr: io.Discard, Engine: testEngine}, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := offloadedAsNative(t, bin, []string{bin, "400"}, prof)
	launches := 0
	for _, h := range rep.HotSpots {
		launches += h.Launches
	}
	if launches < 300 {
		t.Fatalf("%d launches, want the column nest's of most columns", launches)
	}
	calls := uint64(0)
	if rep.BroughtBackParts != nil {
		calls = rep.BroughtBackParts.DeviceToHostCopies
	}
	// With exit states from the kernels there is no CPU tail to bring
	// back ahead of: the accesses between instances fault, a window a
	// copy, which costs what the tail's batch did.
	if calls > uint64(launches)*5/4 {
		t.Errorf("%d launches: %d accesses found pages stale, %d copies brought pages back; want about a copy an instance", launches, rep.BroughtBackFaults, calls)
	}
}
