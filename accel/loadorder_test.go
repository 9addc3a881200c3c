package accel

import (
	"testing"

	"github.com/gxbit/gxbit/profile"
	"github.com/gxbit/gxbit/ptxgen"
)

// TestLoaderTakesHottestFirst queues the modules of three hot spots in
// the order of the code (two initialisation nests, then the product) and
// takes them as the loader does: the product's first, then the others by
// share, the first queued of equal shares first.
func TestLoaderTakesHottestFirst(t *testing.T) {
	l := &loader{jobs: make(chan struct{}, 8), loads: map[*ptxgen.Kernel]*loadFuture{}}
	initA, initB := &ptxgen.Kernel{Name: "initA"}, &ptxgen.Kernel{Name: "initB"}
	prod1, prod2 := &ptxgen.Kernel{Name: "part1"}, &ptxgen.Kernel{Name: "part2"}
	l.enqueue(modulesOf([]*ptxgen.Kernel{initA}, false), 0.02)
	l.enqueue(modulesOf([]*ptxgen.Kernel{initB, initA}, false), 0.02) // initA once only
	l.enqueue(modulesOf([]*ptxgen.Kernel{prod1, prod2}, false), 0.86)
	if len(l.jobs) != 4 {
		t.Fatalf("%d tokens for 4 modules", len(l.jobs))
	}
	var got []string
	for range 4 {
		<-l.jobs
		got = append(got, l.next().f.ks[0].Name)
	}
	want := []string{"part1", "part2", "initA", "initB"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("loaded %v, want %v", got, want)
		}
	}
}

// TestPrefetchWorthy: a hot spot loads ahead unless it took under 1% of
// the profiled run or its level lies inside another hot spot's mapped
// level (which launches its instances whole).
func TestPrefetchWorthy(t *testing.T) {
	level := func(h profile.Hex, blocks ...profile.Hex) profile.Level {
		return profile.Level{Header: h, Verdict: profile.VerdictParallel, Blocks: blocks}
	}
	outer := &profile.HotSpot{Entry: 0x100, Verdict: profile.VerdictParallel, ParallelLevels: []int{0}, Share: 0.8,
		Levels: []profile.Level{level(0x100, 0x100, 0x120, 0x140)}}
	inner := &profile.HotSpot{Entry: 0x120, Verdict: profile.VerdictParallel, ParallelLevels: []int{0}, Share: 0.7,
		Levels: []profile.Level{level(0x120, 0x120)}}
	tiny := &profile.HotSpot{Entry: 0x200, Verdict: profile.VerdictParallel, ParallelLevels: []int{0}, Share: 0.001,
		Levels: []profile.Level{level(0x200, 0x200)}}
	all := []*profile.HotSpot{outer, inner, tiny}
	for _, c := range []struct {
		hs   *profile.HotSpot
		want bool
	}{{outer, true}, {inner, false}, {tiny, false}} {
		if got := prefetchWorthy(c.hs, all); got != c.want {
			t.Errorf("hot spot %#x: worthy %v, want %v", uint64(c.hs.Entry), got, c.want)
		}
	}
}

// TestJITOverlap: an instance overlaps a module's JIT when one was under
// way at its start, or is now, or one finished meanwhile; without a
// loader (the simulator), never.
func TestJITOverlap(t *testing.T) {
	a := &Accelerator{}
	if m := a.markJIT(); a.jitOverlap(m) {
		t.Error("no loader, yet an overlap")
	}
	a.loader = &loader{}
	m := a.markJIT()
	if a.jitOverlap(m) {
		t.Error("an idle loader overlapped")
	}
	a.loader.compiling.Add(1)
	if !a.jitOverlap(m) {
		t.Error("a load under way did not overlap")
	}
	busy := a.markJIT()
	a.loader.compiling.Add(-1)
	a.loader.compiled.Add(1)
	if !a.jitOverlap(m) || !a.jitOverlap(busy) {
		t.Error("a load finished since the mark did not overlap")
	}
	if a.jitOverlap(a.markJIT()) {
		t.Error("an idle loader overlapped after its load")
	}
}
