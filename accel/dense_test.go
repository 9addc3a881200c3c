package accel_test

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/pipeline"
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
	need2D(t)
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
			if h.Schedule != "grid(i,j)" {
				continue // the 1D nests over x, y and tmp, and the product
			}
			if h.Launches2D == 0 {
				t.Errorf("the init nest %s launched no 2D kernel", h.Entry)
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

// TestDenseStoresOnly runs testdata/holes.c on gpusim: its nests store
// every other element of a's rows, and b's elements only under a
// condition, over arrays a CPU loop filled. Neither overwrites its
// footprint, so their launches must copy the arrays in (else the bytes
// between the stores would be the device's, not the fill's): the output
// is native's, and each 2D launch copied in most of its footprint. (With
// every store taken as dense, the output differs: the holes hold the
// device's zeros.)
func TestDenseStoresOnly(t *testing.T) {
	need2D(t)
	path := buildC(t, "holes")
	const m, n = 100, 300
	args := []string{path, strconv.Itoa(m), strconv.Itoa(n)}
	prof := phase1(t, pipeline.Config{Path: path, Args: args, Engine: testEngine})
	want := runNative(t, path, args[1:]...)
	var out bytes.Buffer
	_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
		accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("accelerated output differs from native:\n got %q\nwant %q", out.String(), want)
	}
	nests := 0
	for _, h := range rep.HotSpots {
		t.Logf("%s %s: %d launches (%d 2D), in %d, left on device %d %s%s", h.Entry, h.Schedule, h.Launches, h.Launches2D, h.BytesIn, h.BytesDeferred, h.Reason, h.LastFallback)
		if h.Launches2D == 0 {
			continue
		}
		nests++
		// b is m·n doubles, a twice that; the launch covers all but a
		// few rows.
		if h.BytesIn < (m-8)*n*8 {
			t.Errorf("the nest %s copied %d bytes in, want its footprint: its stores leave holes", h.Entry, h.BytesIn)
		}
	}
	// The conditional nest stays on the CPU today (its probed windows
	// look dependent); the strided one must launch.
	if nests == 0 {
		t.Error("no nest launched a 2D kernel, want the strided one at least")
	}
}

// need2D skips t where gpusim runs these tests' nests (about 100 rows)
// with the 1D kernel: on one core, the outer level alone fills it
// (Accelerator.prefer1D), and only the 2D kernel's stores are proved
// dense.
func need2D(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: gpusim prefers the 1D kernels")
	}
}

// TestDenseCountedRows runs testdata/rowtrips.c on gpusim: its nest
// writes c[i] and every element of a's row i (lens[i] of them), so it has
// only a 1D kernel, which counts the row loop (ptxgen.Kernel.TripChecked).
// With every row as long as the probed ones, a (m·n doubles, filled by a
// CPU loop) is overwritten wholly: the launch copies (almost) nothing in.
// With row m-10 shorter, the kernel's check fails the first launch and
// the second copies a in: the output is native's either way (had the
// short row been taken for a whole one, its last elements would hold the
// device's bytes, not the fill's).
func TestDenseCountedRows(t *testing.T) {
	path := buildC(t, "rowtrips")
	const m, n = 400, 300
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path}, Engine: testEngine})
	for _, short := range []int{0, 5} {
		args := []string{path, strconv.Itoa(m), strconv.Itoa(n), strconv.Itoa(short)}
		want := runNative(t, path, args[1:]...)
		var out bytes.Buffer
		_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
			accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("short %d: accelerated output differs from native:\n got %q\nwant %q", short, out.String(), want)
		}
		found := false
		for _, h := range rep.HotSpots {
			t.Logf("short %d: %s %s: %d launches (%d 2D), %d retried, in %d, left on device %d %s", short, h.Entry, h.Schedule, h.Launches, h.Launches2D, h.TripRetries, h.BytesIn, h.BytesDeferred, h.LastFallback)
			if h.Schedule != "grid(i,j)" { // c[i] and a are apart: the schedule's grid takes j
				continue
			}
			found = true
			if h.Launches == 0 || h.Launches2D != 0 {
				t.Errorf("short %d: the row nest %s made %d launches, %d of them 2D: want 1D launches", short, h.Entry, h.Launches, h.Launches2D)
			}
			switch {
			case short == 0 && (h.BytesIn > 64 || h.TripRetries != 0):
				t.Errorf("rows of one length: the row nest %s copied %d bytes in (%d retries), want none: it overwrites a (%d bytes)", h.Entry, h.BytesIn, h.TripRetries, m*n*8)
			case short > 0 && (h.TripRetries != 1 || h.BytesIn < (m-8)*n*8):
				t.Errorf("a short row: the row nest %s copied %d bytes in after %d retries, want a in after one", h.Entry, h.BytesIn, h.TripRetries)
			}
		}
		if !found {
			t.Errorf("short %d: no hot spot scheduled grid(i,j)", short)
		}
	}
}

// TestInitBornOnDeviceBranches runs testdata/nests' lu two-phase on
// gpusim: its init nest stores A[i][j] once per j, of a value computed on
// one of two paths (the diagonal's or the rest's), and gcc gives each path
// its own copy of the store. Together the copies run in every iteration,
// so A is overwritten wholly: the init launch copies (almost) nothing in,
// whichever kernel runs it. The output is native's.
func TestInitBornOnDeviceBranches(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a nests program")
	}
	dir := buildNests(t, []string{"O2-static"})
	progs, err := corpus.Programs(dir, "O2-static")
	if err != nil {
		t.Fatal(err)
	}
	const n = 100
	for _, p := range progs {
		if p.Name != "lu" {
			continue
		}
		rep := accelerateAt(t, p, []string{strconv.Itoa(n)})
		for _, h := range rep.HotSpots {
			if h.Schedule != "grid(i,j)" || h.Launches != 1 {
				continue // the update nest launches once per k
			}
			t.Logf("%s %s: %d launches (%d 2D), in %d, left on device %d", h.Entry, h.Schedule, h.Launches, h.Launches2D, h.BytesIn, h.BytesDeferred)
			if h.BytesIn > 32 {
				t.Errorf("the init nest %s copied %d bytes in, want none: it overwrites A (%d bytes)", h.Entry, h.BytesIn, n*n*8)
			}
			return
		}
		t.Fatal("no init nest launched once over grid(i,j)")
	}
	t.Fatal("lu not built")
}
