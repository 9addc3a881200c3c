package profile_test

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"github.com/gxbit/gxbit/profile"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/pipeline"
)

// knownMiss lists the loop levels whose verdict is knowingly less precise
// than the hand-written one (never "parallel" for a loop that is not: the
// test fails on that whatever this list says). Key: "MODE/PROGRAM:LINE VAR".
var knownMiss = map[string]string{
	// An array reduction: y[j] += A[i][j]*x[i] accumulates over i into a
	// location that moves with the inner index j. The issue defines a
	// reduction as a scalar or a fixed location; the level is sequential.
	"O0-static/matvec:28 i": "array reduction over a moving location",
	"O2-static/matvec:28 i": "array reduction over a moving location",
	"O3-static/matvec:28 i": "array reduction over a moving location",
	// gcc -O2/-O3 duplicates the init loop's exit test per value of
	// (i == 0): the loops have two exits, or one loop jumps into another.
	"O2-static/gaussseidel:16 i": "loop duplicated by gcc: two exits",
	"O2-static/gaussseidel:17 j": "loop duplicated by gcc: two exits",
	"O3-static/gaussseidel:16 i": "loop duplicated by gcc: two exits",
	// gcc -O3 versions and vectorizes these nests: the time loops get a
	// second exit (a run-time check), the inner levels hold a vector loop,
	// a scalar epilogue and a fallback copy; registers of the unexecuted
	// copies look carried to the static liveness, and the pointer swap of
	// the time loop makes its accesses non-affine in t.
	"O3-static/stencil1d:18 t":       "-O3 versioned loop: two exits",
	"O3-static/stencil2d:21 t":       "-O3 versioned loop: two exits",
	"O3-static/stencil2d:22 i":       "-O3 versioned loop: two exits",
	"O3-static/stencil3d:22 i":       "-O3 vector loop + epilogue: a temporary of the fallback copy looks carried",
	"O3-static/stencil3d:23 j":       "-O3 vector loop + epilogue: a temporary of the fallback copy looks carried",
	"O3-static/bench_stencil2d:22 i": "-O3 vector loop + epilogue: a temporary of the fallback copy looks carried",
	"O3-static/triangular:19 i":      "-O3 vectorized triangular loop: the epilogue's start is not affine",
	"O3-static/triangular:22 i":      "-O3 turned the triangular nest into loops with no instruction of its for line",
	"O3-static/matmul:21 i":          "-O3 made the i loop irreducible (entered past its header): the line maps to the inner loop",
	"O3-static/mm2:17 i":             "-O3: a spilled value in a stack slot looks carried",
	"O3-static/mm2:23 i":             "-O3: an access runs twice per iteration of the loop found (irreducible inner structure)",
	"O3-static/mm2:24 j":             "-O3: an access runs twice per iteration of the loop found (irreducible inner structure)",
	"O3-static/mm2:26 k":             "-O3: an access runs twice per iteration of the loop found (irreducible inner structure)",
	"O3-static/mm2:30 i":             "-O3: an access runs twice per iteration of the loop found (irreducible inner structure)",
	"O3-static/mm2:31 j":             "-O3: an access runs twice per iteration of the loop found (irreducible inner structure)",
	"O3-static/mm2:33 k":             "-O3: an access runs twice per iteration of the loop found (irreducible inner structure)",
}

// sourceLines maps the addresses of a binary's code from its source file
// (base name src) to their lines, from the DWARF line table.
func sourceLines(t *testing.T, path, src string) map[uint64]int {
	t.Helper()
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	d, err := ef.DWARF()
	if err != nil {
		t.Fatalf("%s: no DWARF: %v", path, err)
	}
	out := map[uint64]int{}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit {
			continue
		}
		lr, err := d.LineReader(e)
		if err != nil || lr == nil {
			continue
		}
		var le dwarf.LineEntry
		for lr.Next(&le) == nil {
			if le.File != nil && filepath.Base(le.File.Name) == src && le.Line > 0 {
				out[le.Address] = le.Line
			}
		}
		r.SkipChildren()
	}
	return out
}

func TestVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("profiles every loops program in three modes")
	}
	dir := corpus.Build(t)
	modes := []string{"O0-static", "O2-static", "O3-static"}
	for _, mode := range modes {
		progs, err := corpus.Programs(dir, mode)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range progs {
			if p.Suite != corpus.SuiteLoops {
				continue
			}
			t.Run(p.String(), func(t *testing.T) {
				t.Parallel()
				checkVerdicts(t, p)
			})
		}
	}
}

func checkVerdicts(t *testing.T, p corpus.Program) {
	nests, err := p.LoopNests()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	f, res, out, sess := profileSession(t, p.Path, p.Argv(t.TempDir())...)
	unsupported := res.Outcome == pipeline.Faulted && res.Fault.Kind == gvinst.TrapUnsupported
	if unsupported {
		// The engine stopped at an instruction it does not implement yet
		// (x87 in printf, say): the loops before it still ran.
		t.Logf("run stopped early: %s", res.Diagnosis())
	} else if res.Outcome != pipeline.Exited || res.ExitStatus != p.WantExit {
		t.Fatalf("run: %v status %d: %s\n%s", res.Outcome, res.ExitStatus, res.Diagnosis(), out)
	}
	if !unsupported {
		// The profiled run's output is the program's own.
		native := corpus.RunNative(t, p)
		if string(native.Stdout) != out {
			t.Errorf("profiled output differs from native:\n%s\nnative:\n%s", out, native.Stdout)
		}
	}
	lines := sourceLines(t, p.Path, filepath.Base(p.Source))
	// The loops of the program, with the lines of their own instructions
	// (not their inner loops') and every verdict they got.
	type loopAt struct {
		loop   *profile.Loop
		header uint64
		lines  map[int]bool
		verd   []string
		reason []string
	}
	byHeader := map[uint64]*loopAt{}
	var order []*loopAt
	for _, fn := range sess.Program.Funcs {
		for _, lp := range fn.Loops {
			l := &loopAt{loop: lp, header: lp.Header.Addr, lines: map[int]bool{}}
			inner := map[*profile.Block]bool{}
			for _, c := range lp.Children {
				for _, b := range c.Blocks {
					inner[b] = true
				}
			}
			for _, b := range lp.Blocks {
				if inner[b] {
					continue
				}
				for _, x := range b.Insns {
					if ln, ok := lines[x.Addr]; ok {
						l.lines[ln] = true
					}
				}
			}
			byHeader[l.header] = l
			order = append(order, l)
		}
	}
	for _, s := range f.Loops {
		if l := byHeader[uint64(s.Entry)]; l != nil {
			l.verd = append(l.verd, s.Levels[0])
			l.reason = append(l.reason, s.Reason)
		}
	}
	for _, h := range f.HotSpots {
		for i, lev := range h.Levels {
			if l := byHeader[uint64(lev.Header)]; l != nil && i > 0 {
				l.verd = append(l.verd, lev.Verdict)
				l.reason = append(l.reason, lev.Reason)
			}
		}
	}
	var report []string
	for _, n := range nests {
		for _, lv := range n.Levels {
			// The loops whose own code has the for statement's line.
			// The loops whose own code has the for statement's line, less
			// those that hold another one (at -O0 the init of an inner
			// loop's index is its parent's code).
			var cands []*loopAt
			for _, l := range order {
				if !l.lines[lv.Line] {
					continue
				}
				outer := false
				for _, m := range order {
					if m != l && m.lines[lv.Line] && l.loop.Contains(m.loop.Header) {
						outer = true
					}
				}
				if !outer {
					cands = append(cands, l)
				}
			}
			key := fmt.Sprintf("%s/%s:%d %s", p.Mode.Name, p.Name, lv.Line, lv.Var)
			if len(cands) == 0 {
				msg := fmt.Sprintf("%s: expected %s, no loop found", key, lv.Verdict)
				if why, ok := knownMiss[key]; ok {
					t.Logf("known: %s (%s)", msg, why)
				} else {
					report = append(report, msg)
				}
				continue
			}
			best := ""
			for _, l := range cands {
				for i, v := range l.verd {
					// Safety: never parallel where the truth is not.
					if v == profile.VerdictParallel && lv.Verdict != corpus.Parallel {
						t.Errorf("%s: loop %#x reported parallel, expected %s (%s)", key, l.header, lv.Verdict, l.reason[i])
					}
					if rank(v) < rank(best) || best == "" {
						best = v
					}
				}
			}
			want := string(lv.Verdict)
			if want == string(corpus.Excluded) {
				want = profile.VerdictRejected
			}
			if best != want {
				msg := fmt.Sprintf("%s: expected %s, got %s", key, lv.Verdict, best)
				if why, ok := knownMiss[key]; ok {
					t.Logf("known: %s (%s)", msg, why)
				} else {
					report = append(report, msg)
				}
			}
		}
	}
	sort.Strings(report)
	for _, r := range report {
		t.Errorf("%s", r)
	}
	if len(report) > 0 || testing.Verbose() {
		var sb strings.Builder
		profile.WriteText(&sb, f)
		t.Logf("profiled in %v:\n%s", time.Since(start), sb.String())
	}
}

// rank orders verdicts from the most to the least parallel.
func rank(v string) int {
	switch v {
	case profile.VerdictParallel:
		return 0
	case profile.VerdictReduction:
		return 1
	case profile.VerdictSequential:
		return 2
	}
	return 3
}
