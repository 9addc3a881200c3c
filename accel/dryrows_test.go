package accel_test

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
)

// dryNests are nests programs whose hot nests hold inner loops, at sizes
// where a row of the mapped level runs tens of thousands of inner
// iterations (past dryLaunchRow's instructions), but for the last two.
var dryNests = []struct {
	name string
	args []string
	// launched is how many hot spots probed dry the GPU runs from their
	// first arrival at least.
	launched int
}{
	{"gemm", []string{"32", "40", "2000"}, 1},
	{"doitgen", []string{"24", "20", "64"}, 1},
	{"covariance", []string{"2000", "40"}, 1},
	{"correlation", []string{"2000", "40"}, 1},
	// Both products, the first with tmp[i][j] = 0 as a memset (rep stos)
	// before each sum.
	{"twomm", []string{"32", "2000", "40", "40"}, 2},
	// Rows too short for the GPU to run them (dryLaunchRow): probed dry,
	// run on the CPU.
	{"syrk", []string{"40", "1200"}, 0},
	{"threemm", []string{"40"}, 0},
}

// TestDryRowsMatchProbed accelerates nests programs at -O2 twice: with
// dry rows (dryrows.go: each inner loop instance jumped to its last
// iteration by its exit compare's model, the guest put back as it was)
// and with the rows run on the CPU (Options.WetProbes). Both runs print
// what native prints; each hot spot's first instance, probed both ways,
// gives the same live-in values and steps, the same last arrival, the
// same inner trip counts and the same bytes per access in its first two
// rows, and nearly the same instructions per row (jumped iterations are
// counted at the recorded ones' mean); and the dry rows run a small part
// of the instructions the rows ran on the CPU.
func TestDryRowsMatchProbed(t *testing.T) {
	for _, p := range dryNests {
		t.Run(p.name, func(t *testing.T) {
			path := gccStatic(t, filepath.Join("..", "testdata", "nests", p.name+".c"), filepath.Join(t.TempDir(), p.name), "-O2")
			prof := phase1(t, pipeline.Config{Path: path, Args: []string{path}, Engine: testEngine})
			args := append([]string{path}, p.args...)
			traces := func(wet bool) (map[string]accel.ProbeTrace, *accel.Report) {
				first := map[string]accel.ProbeTrace{}
				rep := offloadedAsNativeWith(t, path, args, accel.Options{Profile: prof, WetProbes: wet, Probes: func(pt accel.ProbeTrace) {
					if _, ok := first[pt.Entry]; !ok {
						first[pt.Entry] = pt
					}
				}})
				return first, rep
			}
			dry, dryRep := traces(false)
			wet, wetRep := traces(true)
			compared, launched := 0, 0
			for entry, d := range dry {
				if !d.Dry {
					continue
				}
				w, ok := wet[entry]
				if !ok {
					t.Errorf("%s: probed dry, not probed on the CPU", entry)
					continue
				}
				if w.Dry {
					t.Errorf("%s: probed dry with WetProbes", entry)
				}
				compared++
				if d.From == 0 {
					launched++
				}
				if !reflect.DeepEqual(d.Start, w.Start) || !reflect.DeepEqual(d.Steps, w.Steps) || d.Last != w.Last {
					t.Errorf("%s: dry start %x steps %x last %d, probed start %x steps %x last %d", entry, d.Start, d.Steps, d.Last, w.Start, w.Steps, w.Last)
				}
				if d.InnerTrips != w.InnerTrips {
					t.Errorf("%s: dry inner trips %v, probed %v", entry, d.InnerTrips, w.InnerTrips)
				}
				if !reflect.DeepEqual(d.Rows, w.Rows) {
					for key, r := range w.Rows {
						if d.Rows[key] != r {
							t.Errorf("%s: access %#x (store %d): dry rows %+v, probed %+v", entry, key[0], key[1], d.Rows[key], r)
						}
					}
					if len(d.Rows) != len(w.Rows) {
						t.Errorf("%s: %d accesses dry, %d probed", entry, len(d.Rows), len(w.Rows))
					}
				}
				for it, n := range w.RowInstructions {
					if math.Abs(d.RowInstructions[it]-n) > 0.02*n {
						t.Errorf("%s: row %d counted %.0f instructions dry, ran %.0f", entry, it, d.RowInstructions[it], n)
					}
				}
			}
			if compared == 0 {
				t.Fatalf("no hot spot was probed dry (%d probed)", len(dry))
			}
			if launched < p.launched {
				t.Errorf("%d hot spots probed dry launched from their first arrival, want %d", launched, p.launched)
			}
			// What the rows cost: of the hot spots probed dry, the one
			// whose rows ran the most on the CPU runs a small part of
			// that dry.
			var most, dryRan uint64
			for i, h := range wetRep.HotSpots {
				d := dryRep.HotSpots[i]
				if d.Entry != h.Entry {
					t.Fatalf("hot spot %d is %s dry, %s probed", i, d.Entry, h.Entry)
				}
				if d.DryProbes > 0 && h.RowInstructions > most {
					most, dryRan = h.RowInstructions, d.RowInstructions
				}
			}
			t.Logf("%d hot spots compared, %d launched from their first arrival; the longest rows: %d instructions on the CPU, %d dry", compared, launched, most, dryRan)
			if dryRan > most/4 {
				t.Errorf("the longest probed rows ran %d instructions on the CPU and %d dry, want under a quarter", most, dryRan)
			}
		})
	}
}

// TestDryRowsSkipTiming accelerates gemm at -O2 deciding as on a fast GPU
// (gpusim emulating one a thousand times faster, the cost model on): the
// product's rows, 80,000 inner iterations each, are probed dry before
// any timing, and since the initialisation nests were timed before it,
// the product is priced at their speed and runs without the timing runs
// (which would run the rest of a row on the CPU): no timing seconds, and
// the GPU runs every row but the CPU tail. With WetProbes it is timed
// and probed on the CPU as before. Both print what native prints.
func TestDryRowsSkipTiming(t *testing.T) {
	path := gccStatic(t, filepath.Join("..", "testdata", "nests", "gemm.c"), filepath.Join(t.TempDir(), "gemm"), "-O2")
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path}, Engine: testEngine})
	args := []string{path, "32", "40", "2000"}
	want := runNative(t, path, args[1:]...)
	entry := "" // the product nest: three loops under its level
	for _, h := range prof.HotSpots {
		if len(h.InnerLoops) == 3 {
			entry = h.Entry.String()
		}
	}
	if entry == "" {
		t.Fatal("phase 1 found no nest with the product's three inner loops")
	}
	product := func(wet bool) accel.HotSpotReport {
		var out bytes.Buffer
		_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
			accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{KernelSpeedup: 1000}), WetProbes: wet})
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("accelerated output (wet probes %v) differs from native:\n got %q\nwant %q", wet, out.String(), want)
		}
		for _, h := range rep.HotSpots {
			if h.Entry == entry {
				return h
			}
		}
		t.Fatalf("the product %s is not in the report", entry)
		return accel.HotSpotReport{}
	}
	dry := product(false)
	t.Logf("dry: %s: %d launches, %d dry probes, timing %.4fs, probing %.4fs, %d GPU iterations", dry.Entry, dry.Launches, dry.DryProbes, dry.TimingSeconds, dry.ProbeSeconds, dry.Iterations)
	if dry.DryProbes == 0 || dry.Launches == 0 {
		t.Fatalf("%s: %d dry probes, %d launches (%s)", dry.Entry, dry.DryProbes, dry.Launches, dry.LastFallback)
	}
	if dry.TimingSeconds != 0 {
		t.Errorf("%s: timed the CPU for %.4fs before its dry probe", dry.Entry, dry.TimingSeconds)
	}
	wet := product(true)
	t.Logf("wet: %s: %d launches, timing %.4fs, probing %.4fs", wet.Entry, wet.Launches, wet.TimingSeconds, wet.ProbeSeconds)
	if wet.TimingSeconds == 0 {
		t.Errorf("%s: not timed with WetProbes", wet.Entry)
	}
}

// TestDryShortInstances accelerates testdata/shortrows.c, whose mapped
// level's instances are 64 rows long but for every fourth, of one or two:
// a short instance's dry rows reach the level's exit (which the dry
// engine must translate to stop at it) and it falls back as too short,
// and the instances after it are still probed dry. The output is
// native's.
func TestDryShortInstances(t *testing.T) {
	path := buildC(t, "shortrows")
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path}, Engine: testEngine})
	rep := offloadedAsNativeWith(t, path, []string{path, "40", "64", "200"}, accel.Options{Profile: prof})
	found := false
	for _, h := range rep.HotSpots {
		if h.Fallbacks == 0 || h.Launches == 0 {
			continue
		}
		t.Logf("%s %s: %d launches, %d dry probes, fallbacks %v, dry note %q", h.Entry, h.Schedule, h.Launches, h.DryProbes, h.FallbackReasons, h.DryNote)
		if h.FallbackReasons[accel.ReasonTripCount] == 0 {
			continue
		}
		found = true
		// (Some launches are replays, which probe nothing.)
		if h.DryProbes < h.Launches/2 || strings.Contains(h.DryNote, "left the hot spot's blocks") {
			t.Errorf("%s: %d launches, %d dry probes (dry note %q): the short instances turned dry probes off", h.Entry, h.Launches, h.DryProbes, h.DryNote)
		}
	}
	if !found {
		t.Fatal("no hot spot launched and fell back as too short: the test tests nothing")
	}
}
