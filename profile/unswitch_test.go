package profile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// TestUnswitchedGuardGemm profiles gemm built with gcc -O2, which versions
// the k loop on nj > 0: the nj <= 0 copy is a loop of register arithmetic
// only, leaving from its header and its latch. That copy is straight-line
// code of the i level, so the i nest is analysed (no static rejection) and
// found parallel, and its hot spot starts at i.
func TestUnswitchedGuardGemm(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and profiles gemm")
	}
	dir := corpus.BuildNests(t, "O2-static")
	progs, err := corpus.Programs(dir, "O2-static")
	if err != nil {
		t.Fatal(err)
	}
	var p corpus.Program
	for _, q := range progs {
		if q.Suite == corpus.SuiteNests && q.Name == "gemm" {
			p = q
		}
	}
	if p.Path == "" {
		t.Fatal("gemm is not in the O2-static nests corpus")
	}
	src, err := os.ReadFile(p.Source)
	if err != nil {
		t.Fatal(err)
	}
	iLine, kLine := 0, 0
	for n, text := range strings.Split(string(src), "\n") {
		switch {
		case strings.Contains(text, "LOOP: kernel.i "):
			iLine = n + 1
		case strings.Contains(text, "LOOP: kernel.k "):
			kLine = n + 1
		}
	}
	if iLine == 0 || kLine == 0 {
		t.Fatal("gemm.c has no kernel.i or kernel.k marker")
	}
	f, res, out, sess := profileSession(t, p.Path, p.Argv(t.TempDir())...)
	if res.Outcome != pipeline.Exited || res.ExitStatus != p.WantExit {
		t.Fatalf("run: %v status %d: %s", res.Outcome, res.ExitStatus, res.Diagnosis())
	}
	if native := corpus.RunNative(t, p); string(native.Stdout) != out {
		t.Errorf("profiled output differs from native:\n%s\nnative:\n%s", out, native.Stdout)
	}
	lines := sourceLines(t, p.Path, filepath.Base(p.Source))
	has := func(l *profile.Loop, line int) bool {
		for _, b := range l.Blocks {
			for _, x := range b.Insns {
				if lines[x.Addr] == line {
					return true
				}
			}
		}
		return false
	}
	// The i nest: the outermost loop holding both for lines.
	var iLoop *profile.Loop
	for _, fn := range sess.Program.Funcs {
		for _, l := range fn.Nests {
			if has(l, iLine) && has(l, kLine) {
				iLoop = l
			}
		}
	}
	if iLoop == nil {
		t.Fatal("no loop nest holds gemm's kernel.i and kernel.k lines")
	}
	// Every loop inside it runs the k loop's for line only as the real k
	// loop: the register-only copy is no loop of the forest.
	var walk func(l *profile.Loop)
	walk = func(l *profile.Loop) {
		for _, c := range l.Children {
			if len(c.Exits) > 1 {
				from := c.Exits[0].From
				for _, e := range c.Exits {
					if e.From != from {
						t.Errorf("loop %#x inside the i nest leaves from %#x and %#x", c.Header.Addr, from.Addr, e.From.Addr)
					}
				}
			}
			walk(c)
		}
	}
	walk(iLoop)
	found := false
	for _, s := range f.Loops {
		if uint64(s.Entry) != iLoop.Header.Addr {
			continue
		}
		found = true
		if len(s.Levels) == 0 || s.Levels[0] != profile.VerdictParallel {
			t.Errorf("gemm's i nest at %#x: levels %v, want i parallel (%s)", iLoop.Header.Addr, s.Levels, s.Reason)
		}
	}
	if !found {
		t.Errorf("gemm's i nest at %#x has no loop summary", iLoop.Header.Addr)
	}
	hot := false
	for _, h := range f.HotSpots {
		if len(h.Levels) > 0 && uint64(h.Levels[0].Header) == iLoop.Header.Addr {
			hot = true
		}
	}
	if !hot {
		t.Errorf("gemm's i nest at %#x is no hot spot", iLoop.Header.Addr)
	}
}
