package profile_test

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// roundEngine runs the guest as gxbit run --accelerate runs its first
// profiling round, at a fixed point instead of after some CPU time: on a
// plain engine until at guest instructions, then under the collector
// (Restart there, with a round's probe budget) until the collector has
// seen enough (Progress) or limit instructions have run under it; then
// it stops the guest (a trap: RunEngine reports a fault).
type roundEngine struct {
	plain      gvinst.Engine
	sess       *profile.Session
	at, limit  uint64
	budget     int64
	began      bool
	start      uint64 // the collector's engine's count when the round began
	beganPC    uint64
	roundInsns uint64 // the instructions the round ran, once it ended
	ended      bool
}

// Run implements gvinst.Engine.
func (e *roundEngine) Run(cpu *gvinst.CPU, budget uint64) gvinst.Stop {
	prof := e.sess.Engine()
	if !e.began {
		used := e.plain.Stats().GuestInsns
		if used < e.at {
			return e.plain.Run(cpu, min(budget, e.at-used))
		}
		e.began, e.beganPC, e.start = true, cpu.PC, prof.Stats().GuestInsns
		e.sess.Collector.SetProbeBudget(e.budget)
		e.sess.Collector.Restart(cpu.PC)
	}
	used := prof.Stats().GuestInsns - e.start
	if p := e.sess.Collector.Progress(); !e.ended && (used >= e.limit || used > 0 && p.Entered > 0 && p.Sampling == 0) {
		e.ended, e.roundInsns = true, used
	}
	if e.ended {
		return gvinst.Stop{Kind: gvinst.StopTrap, PC: cpu.PC}
	}
	// The single run's profiling slice (pipeline's profileSlice).
	return prof.Run(cpu, min(budget, 1<<18, e.limit-used))
}

// Invalidate implements gvinst.Engine.
func (e *roundEngine) Invalidate(addr, size uint64) {
	e.plain.Invalidate(addr, size)
	e.sess.Engine().Invalidate(addr, size)
}

// Stats implements gvinst.Engine.
func (e *roundEngine) Stats() gvinst.EngineStats {
	st := e.plain.Stats()
	st.GuestInsns += e.sess.Engine().Stats().GuestInsns
	return st
}

// TestRoundAnywhereInTimeStep begins a profiling round, as gxbit run
// --accelerate does after its plain start, at points a million guest
// instructions apart over a whole time step of fdtd2d (three 2D sweeps a
// step; the second's row loop sits inside a loop of one iteration, the
// compiler's path for a single row), each round with a probe budget of
// 125,000 (a round begun at 250 ms): every round must end by what the
// collector has seen, having made at most four budgets' probe calls, and
// find every level of every nest it reports parallel.
//
// A round begun inside the second sweep made 1.5-4.2 M: the loop around
// its rows had no counter until the next time step, so the rows were not
// recorded, gave no snapshots to predict their end from, and never paused
// (Blind loops); at 1500 × 1700 the round so took 1.3 s instead of 0.2 s.
func TestRoundAnywhereInTimeStep(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the nests programs")
	}
	dir := corpus.BuildNests(t, "O2-static")
	path := filepath.Join(dir, "O2-static", "fdtd2d")
	args := []string{path, "600", "700", "5"}
	const budget = 125_000
	// A time step at 600 × 700 is about 14 M guest instructions, from
	// about 10 M on.
	for at := uint64(10_000_000); at < 25_000_000; at += 1_000_000 {
		g, err := pipeline.Load(pipeline.Config{Path: path, Args: args, Stdout: io.Discard, Stderr: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		newEngine, err := g.EngineFunc()
		if err != nil {
			t.Fatal(err)
		}
		plain, release, err := g.NewEngine(gvinst.InterpOptions{Optimize: true})
		if err != nil {
			t.Fatal(err)
		}
		sess, err := profile.NewSession(g.Lifter, g.Mem, g.ProfileImage(), profile.Options{Engine: newEngine, Collect: profile.CollectOptions{LongOuterIteration: 2_000_000}})
		if err != nil {
			t.Fatal(err)
		}
		e := &roundEngine{plain: plain, sess: sess, at: at, limit: 100_000_000, budget: budget}
		if _, err := g.RunEngine(context.Background(), e, nil); err != nil {
			t.Fatal(err)
		}
		probes := profile.ProbeCalls(sess.Collector)
		f := sess.Finish(profile.RunInfo{Program: path, Args: args[1:]})
		sess.Close()
		release()
		g.Close()
		switch {
		case !e.ended:
			t.Errorf("round at %d: the program ended first", at)
		case e.roundInsns >= e.limit:
			t.Errorf("round at %d (pc %#x): still sampling after %d guest instructions", at, e.beganPC, e.roundInsns)
		case probes > 4*budget:
			t.Errorf("round at %d (pc %#x): %d probe calls in %d guest instructions, want at most %d", at, e.beganPC, probes, e.roundInsns, 4*budget)
		}
		for k, v := range verdicts(f) {
			if !strings.HasPrefix(v, "parallel") || strings.Contains(v, "sequential") {
				t.Errorf("round at %d: hot spot %s: %s", at, k, v)
			}
		}
		t.Logf("round at %d (pc %#x): %d guest instructions, %d probe calls, %d hot spots", at, e.beganPC, e.roundInsns, probes, len(f.HotSpots))
	}
}
