package profile_test

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// checkpointEngine runs the guest on the collector's engine and stops it
// at checkpoints, each half as far again into the run as the last, to
// call at(pc) there.
type checkpointEngine struct {
	gvinst.Engine
	next uint64
	at   func(pc uint64)
}

// Run implements gvinst.Engine: it stops at the next checkpoint, and
// calls at there before running on.
func (e *checkpointEngine) Run(cpu *gvinst.CPU, budget uint64) gvinst.Stop {
	used := e.Stats().GuestInsns
	if used >= e.next {
		e.at(cpu.PC)
		e.next += e.next / 2
	}
	if left := e.next - used; budget == 0 || left < budget {
		budget = left
	}
	return e.Engine.Run(cpu, budget)
}

// TestFinishReuse profiles nests programs, and at checkpoints through each
// run compares Finish, which uses again the analyses of nests whose data
// did not change since the last Finish, with an analysis of every nest
// anew: the profiles must be the same byte for byte. Every other
// checkpoint begins a new round (Restart), as gxbit run --accelerate does
// when it comes back to the collector. A profile handed out is then
// scribbled over, and must not change what the next Finish returns.
func TestFinishReuse(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and profiles the nests programs")
	}
	dir := corpus.BuildNests(t, "O2-static")
	progs, err := corpus.Programs(dir, "O2-static")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"conv2d": true, "heat3d": true, "lu": true, "correlation": true, "doitgen": true, "fdtd2d": true}
	for _, p := range progs {
		if p.Suite != corpus.SuiteNests || !want[p.Name] {
			continue
		}
		delete(want, p.Name)
		t.Run(p.Name, func(t *testing.T) {
			args := p.Argv(t.TempDir())
			g, err := pipeline.Load(pipeline.Config{Path: p.Path, Args: append([]string{p.Path}, args...), Stdout: io.Discard, Stderr: io.Discard})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			newEngine, err := g.EngineFunc()
			if err != nil {
				t.Fatal(err)
			}
			sess, err := profile.NewSession(g.Lifter, g.Mem, g.ProfileImage(), profile.Options{Engine: newEngine})
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			checks, reused := 0, 0
			var last *profile.File
			compare := func(insns uint64) {
				t.Helper()
				run := profile.RunInfo{Program: p.Path, Args: args, GuestInstructions: insns}
				if last != nil {
					scribble(last)
				}
				got := sess.Finish(run)
				reused += profile.Reused(sess.Collector)
				fresh := profile.FinishAnew(sess.Collector, run)
				var a, b bytes.Buffer
				if err := profile.Write(&a, got); err != nil {
					t.Fatal(err)
				}
				if err := profile.Write(&b, fresh); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(a.Bytes(), b.Bytes()) {
					t.Fatalf("after %d guest instructions, Finish differs from an analysis anew:\n%s", insns, firstDiff(a.String(), b.String()))
				}
				checks++
				last = got
			}
			e := &checkpointEngine{Engine: sess.Engine(), next: 1 << 14}
			e.at = func(pc uint64) {
				compare(e.Stats().GuestInsns)
				if checks%2 == 0 {
					sess.Collector.Restart(pc)
				}
			}
			res, err := g.RunEngine(context.Background(), e, nil)
			if err != nil || res.Outcome != pipeline.Exited {
				t.Fatalf("profile run: %v %v", err, res.Diagnosis())
			}
			// Nothing changes from here on: every nest's analysis is used
			// again, twice, the second time after the first's profile was
			// scribbled over.
			for range 3 {
				compare(res.Stats.GuestInstructions)
			}
			if reused == 0 {
				t.Errorf("%d checkpoints, no nest's analysis used again", checks)
			}
			t.Logf("%d checkpoints, %d analyses of nests used again", checks, reused)
		})
	}
	for name := range want {
		t.Errorf("%s is not in the O2-static nests corpus", name)
	}
}

// scribble overwrites what a profile says of its hot spots and loops, as
// a careless reader of it might.
func scribble(f *profile.File) {
	for i := range f.HotSpots {
		hs := &f.HotSpots[i]
		hs.Reason = "scribbled"
		for j := range hs.Levels {
			hs.Levels[j].Verdict, hs.Levels[j].TripCount = "scribbled", "scribbled"
			for k := range hs.Levels[j].IVs {
				hs.Levels[j].IVs[k].Step = -12345
			}
			if cf := hs.Levels[j].Conflict; cf != nil {
				cf.Witness = "scribbled"
			}
		}
		for j := range hs.Accesses {
			hs.Accesses[j].Function = "scribbled"
			for k := range hs.Accesses[j].Coeffs {
				hs.Accesses[j].Coeffs[k] = -12345
			}
		}
		for j := range hs.Vars {
			hs.Vars[j].Name = "scribbled"
		}
		for j := range hs.InnerLoops {
			hs.InnerLoops[j].Verdict = "scribbled"
		}
		for j := range hs.ParallelLevels {
			hs.ParallelLevels[j] = -1
		}
	}
	for i := range f.Loops {
		for j := range f.Loops[i].Levels {
			f.Loops[i].Levels[j] = "scribbled"
		}
	}
}

// firstDiff shows where two texts first differ.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(i-300, 0)
	return "got:  …" + a[lo:min(i+300, len(a))] + "\nwant: …" + b[lo:min(i+300, len(b))]
}
