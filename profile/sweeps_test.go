package profile_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// buildStatic compiles testdata/name.c with gcc -O2 -static.
func buildStatic(t *testing.T, name string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found")
	}
	out := filepath.Join(t.TempDir(), name)
	if b, err := exec.Command(gcc, "-O2", "-static", "-o", out, filepath.Join("testdata", name+".c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	return out
}

// verdicts lists each hot spot as "entry depth: levels", in the profile's
// order of entries.
func verdicts(f *profile.File) map[string]string {
	m := map[string]string{}
	for _, h := range f.HotSpots {
		var lv []string
		for _, l := range h.Levels {
			lv = append(lv, l.Verdict)
		}
		m[h.Entry.String()+" depth "+string(rune('0'+h.Depth))] = strings.Join(lv, ",") + " (" + h.Reason + ")"
	}
	return m
}

// TestSecondSweepSampled profiles time loops around two sweeps with a
// probe budget that the first sweep of the first time step spends, and
// with slices shorter than a row (the proportions of a real input: a
// resumed loop's probes come back only at the next slice, rows later):
// testdata/twosweeps.c (two 2D sweeps: the shape of an
// alternating-direction solver or of a filter followed by a fold) and
// testdata/forces.c (a sweep with an inner loop, then one without: an
// n-body step) and testdata/sweeps1d.c (two 1D sweeps). Every hot spot must get the verdicts a profile with
// budget to spare gives, and every trip count seen must be a real one.
//
// The second sweep's induction variables were lost: the first sweep's
// row loop, paused with no earlier trip count to resume before, resumed
// at its end, so the second sweep's first row ran unrecorded, and the
// next time step began unrecorded as a whole; twosweeps' second sweep was
// sequential, "no induction variable found". With one time step, that
// happened with budget to spare too (predictTrips). forces' second sweep,
// entered before the probes came back, was taken as recorded from its
// second iteration on, and counted one iteration short. testdata/sweeps1d.c
// (two 1D sweeps, no inner loops: jacobi1d's shape) probed every point of
// its sweeps and stopped at thinBudget inside the first one: the second
// sweep's trip count was never seen (innermostPauseMin).
func TestSecondSweepSampled(t *testing.T) {
	for _, tc := range []struct {
		prog  string
		args  []string
		trips int64 // every trip count of a sweep seen (its rows, its points)
	}{
		{"twosweeps", []string{"48", "120", "1"}, 48},
		{"twosweeps", []string{"48", "120", "3"}, 48},
		{"forces", []string{"300", "2"}, 300},
		{"sweeps1d", []string{"20002", "3"}, 20000},
	} {
		t.Run(tc.prog+"/"+strings.Join(tc.args, "x"), func(t *testing.T) {
			path := buildStatic(t, tc.prog)
			args := append([]string{path}, tc.args...)
			profileWith := func(opts profile.CollectOptions) *profile.File {
				t.Helper()
				var out bytes.Buffer
				res, f, err := pipeline.Profile(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out}, profile.Options{Collect: opts})
				if err != nil {
					t.Fatal(err)
				}
				if res.Outcome != pipeline.Exited || res.ExitStatus != 0 {
					t.Fatalf("%v %d %s", res.Outcome, res.ExitStatus, res.Diagnosis())
				}
				return f
			}
			want := verdicts(profileWith(profile.CollectOptions{}))
			parallel := 0
			for _, v := range want {
				if strings.HasPrefix(v, "parallel") {
					parallel++
				}
			}
			if parallel < 3 {
				t.Fatalf("with budget to spare, the initialisation and the sweeps should be parallel: %v", want)
			}
			f := profileWith(profile.CollectOptions{MaxProbesPerNest: 3000, SliceInsns: 256})
			got := verdicts(f)
			for k, w := range want {
				if g := got[k]; g != w {
					t.Errorf("hot spot %s: %s; with budget to spare %s", k, g, w)
				}
			}
			// The time loop's sweeps (its inner loops right below it)
			// ran tc.trips iterations every time.
			for _, h := range f.HotSpots {
				if len(h.Levels) != 1 || len(h.InnerLoops) < 2 {
					continue
				}
				for _, il := range h.InnerLoops {
					if il.Parent != h.Levels[0].Index {
						continue
					}
					for _, n := range il.ObservedTrips {
						if n != tc.trips {
							t.Errorf("the sweep at %s: trip counts %v seen, want %d", il.Header, il.ObservedTrips, tc.trips)
							break
						}
					}
				}
			}
		})
	}
}
