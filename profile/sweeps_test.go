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

// TestRoundBudgetThinsOnly profiles testdata/sweeps1d.c (time steps of two
// 1D sweeps: jacobi1d's shape) with a round's probe budget (SetProbeBudget,
// as gxbit run --accelerate sizes it by the run so far) a hundredth of the
// collector's: the nest thins out at the round's budget but stops
// sampling only at thinBudget times the collector's, so it must get the
// verdicts and see the sweeps' trip counts as with the collector's budget
// alone (with a cap that shrank with the round's budget, the time loop's
// inner loops had "no affine, positive trip count").
func TestRoundBudgetThinsOnly(t *testing.T) {
	path := buildStatic(t, "sweeps1d")
	args := []string{path, "20002", "3"}
	profileWith := func(budget int64) *profile.File {
		t.Helper()
		var out bytes.Buffer
		g, err := pipeline.Load(pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		sess, err := profile.NewSession(g.Lifter, g.Mem, imageOf(g), profile.Options{Collect: profile.CollectOptions{MaxProbesPerNest: 3000, SliceInsns: 256}})
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		sess.Collector.SetProbeBudget(budget)
		res, err := g.RunEngine(context.Background(), sess.Engine(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != pipeline.Exited || res.ExitStatus != 0 {
			t.Fatalf("%v %d %s", res.Outcome, res.ExitStatus, res.Diagnosis())
		}
		return sess.Finish(profile.RunInfo{Program: path, Args: args[1:], LoadBias: g.Image.Bias, GuestInstructions: res.Stats.GuestInstructions})
	}
	const round = 30
	want := verdicts(profileWith(0))
	got := profileWith(round)
	for k, w := range want {
		if g := verdicts(got)[k]; g != w {
			t.Errorf("hot spot %s: %s with a round's budget of %d; %s with the collector's 3000", k, g, round, w)
		}
	}
	sweeps := 0
	for _, h := range got.HotSpots {
		if len(h.Levels) != 1 || len(h.InnerLoops) < 2 {
			continue
		}
		for _, il := range h.InnerLoops {
			if il.Parent != h.Levels[0].Index {
				continue
			}
			sweeps++
			if len(il.ObservedTrips) == 0 {
				t.Errorf("the sweep at %s: no trip count seen", il.Header)
			}
			for _, n := range il.ObservedTrips {
				if n != 20000 {
					t.Errorf("the sweep at %s: trip counts %v seen, want 20000", il.Header, il.ObservedTrips)
					break
				}
			}
		}
	}
	if sweeps != 2 {
		t.Errorf("%d sweeps under the time loop, want 2", sweeps)
	}
}
