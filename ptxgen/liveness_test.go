package ptxgen

import (
	"fmt"
	"slices"
	"sort"
	"testing"
)

// lineLiveness is the reference the block analysis (liveness) must
// agree with: the data flow equations solved over lines, as the
// generator once did, every line's set from its successors' (succs)
// until none changes. It returns the registers live after each line,
// as sets of words numbered as v numbers them.
func lineLiveness(t *testing.T, ls []*pline, v *live) [][]uint64 {
	t.Helper()
	labels := map[string]int{}
	for i, l := range ls {
		if l.label != "" {
			labels[l.label] = i
		}
	}
	bit := func(r string) (int, uint64) {
		id, ok := v.regs.ids[r]
		if !ok || int(id) >= 64*v.words {
			t.Fatalf("register %s of the lines is not among the analysis's %d words", r, v.words)
		}
		return int(id / 64), 1 << (id % 64)
	}
	out := make([][]uint64, len(ls))
	in := make([][]uint64, len(ls))
	for i := range ls {
		out[i], in[i] = make([]uint64, v.words), make([]uint64, v.words)
	}
	for changed := true; changed; {
		changed = false
		for i := len(ls) - 1; i >= 0; i-- {
			set := make([]uint64, v.words)
			s0, s1 := succs(ls, labels, i)
			for _, s := range []int{s0, s1} {
				if s >= 0 {
					for w := range set {
						set[w] |= in[s][w]
					}
				}
			}
			copy(out[i], set)
			l := ls[i]
			if l.guard() == "" {
				for _, r := range l.defs() {
					w, b := bit(r)
					set[w] &^= b
				}
			}
			for _, r := range l.uses() {
				w, b := bit(r)
				set[w] |= b
			}
			if !slices.Equal(set, in[i]) {
				in[i], changed = set, true
			}
		}
	}
	return out
}

// checkLiveness fails the test where v, the analysis of ls, differs
// from lineLiveness's.
func checkLiveness(t *testing.T, what string, ls []*pline, v *live) {
	t.Helper()
	want := lineLiveness(t, ls, v)
	names := make([]string, 0, len(v.regs.ids))
	for r := range v.regs.ids {
		names = append(names, r)
	}
	sort.Strings(names)
	for i := range ls {
		got := v.out[i*v.words : (i+1)*v.words]
		if slices.Equal(got, want[i]) {
			continue
		}
		var diff []string
		for _, r := range names {
			id := v.regs.ids[r]
			if int(id) >= 64*v.words {
				continue
			}
			g, w := v.liveOut(i, r), want[i][id/64]&(1<<(id%64)) != 0
			if g != w {
				diff = append(diff, fmt.Sprintf("%s (block analysis %v, lines %v)", r, g, w))
			}
		}
		t.Fatalf("%s: after line %d (%s) the analysis differs: %v", what, i, ls[i], diff)
	}
}

// guardedWrite is a body whose block after $L1 may or may not write
// %r1 (a guarded write): %r1 is live on entry to it, so the first move
// stays. (%r2 is dead, for simplify to have a round.)
const guardedWrite = `	mov.b64 %r1, 1;
	mov.b64 %r2, 3;
	ld.param.u64 %t0, [count];
$L1:
	setp.ne.u64 %p1, %idx, 0;
	@%p1 mov.b64 %r1, 2;
	st.global.u64 [%t0], %r1;
	@%p1 bra $L1;
	ret;
`

// TestLivenessByBlocks checks the block analysis and its updates against
// the line by line solution, on real kernel bodies (testdata/bodies) and
// hand-written ones, at every round of simplify as optimize runs it:
// after copy propagation, then after each round of coalescing or dead
// code elimination, which update the analysis in place.
func TestLivenessByBlocks(t *testing.T) {
	srcs := realBodies(t)
	srcs["sumBody"] = sumBody
	srcs["guardedWrite"] = guardedWrite
	for name, src := range srcs {
		t.Run(name, func(t *testing.T) {
			ls, err := parseBody(src)
			if err != nil {
				t.Fatal(err)
			}
			regs := newRegTable()
			checkLiveness(t, "as emitted", ls, liveness(ls, regs))
			copyProp(ls)
			v := liveness(ls, regs)
			checkLiveness(t, "after copy propagation", ls, v)
			rounds := 0
			for coalesce(ls, v) || dce(ls, v) {
				v.update()
				rounds++
				checkLiveness(t, fmt.Sprintf("after round %d", rounds), ls, v)
			}
			if rounds == 0 {
				t.Errorf("simplify changed nothing: the updates went untested")
			}
		})
	}
}

// TestLivenessUpdateFlow checks that an update after a rewrite that
// changed the control flow (a branch gone) analyses the lines afresh.
func TestLivenessUpdateFlow(t *testing.T) {
	ls, err := parseBody(realBodies(t)["heat3d_gx_401700"])
	if err != nil {
		t.Fatal(err)
	}
	v := liveness(ls, newRegTable())
	n := 0
	for _, l := range ls {
		if l.isBranch() {
			l.dead = true
			n++
			v.update()
			checkLiveness(t, fmt.Sprintf("without branch %d (%s)", n, l), ls, v)
		}
	}
	if n == 0 {
		t.Fatal("the body has no branch")
	}
}
