package corpus

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestModes(t *testing.T) {
	ms := Modes()
	if len(ms) != 10 {
		t.Fatalf("got %d modes, want 10", len(ms))
	}
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m.Name] {
			t.Errorf("mode %s twice", m.Name)
		}
		seen[m.Name] = true
		got, err := ParseMode(m.Name)
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %+v, %v", m.Name, got, err)
		}
		if m.Name != m.Opt+"-"+m.Link {
			t.Errorf("mode %+v: name is not opt-link", m)
		}
	}
	if _, err := ParseMode("O1-static"); err == nil {
		t.Error("ParseMode accepted O1-static")
	}
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name, in string
		want     Spec
		errLine  int // 0: no error
	}{
		{name: "empty", in: "", want: Spec{}},
		{name: "comments", in: "# x\n\n   \n# arg no\n", want: Spec{}},
		{
			name: "all",
			in:   "arg a b\narg\narg \nstdin  1 2\nstdin\nenv K=v=w\nenv E=\ntmpdir\nexit 42\n",
			want: Spec{Args: []string{"a b", "", ""}, Stdin: []byte(" 1 2\n\n"), Env: []string{"K=v=w", "E="}, NeedsTempDir: true, WantExit: 42},
		},
		{name: "no final newline", in: "arg x", want: Spec{Args: []string{"x"}}},
		{name: "unknown", in: "arg x\nargs y\n", errLine: 2},
		{name: "env without =", in: "env FOO\n", errLine: 1},
		{name: "env empty key", in: "env =x\n", errLine: 1},
		{name: "exit range", in: "exit 256\n", errLine: 1},
		{name: "exit negative", in: "exit -1\n", errLine: 1},
		{name: "exit twice", in: "exit 1\nexit 1\n", errLine: 2},
		{name: "exit word", in: "exit one\n", errLine: 1},
		{name: "tmpdir value", in: "tmpdir /x\n", errLine: 1},
		{name: "tmpdir twice", in: "tmpdir\n#\ntmpdir\n", errLine: 3},
		{name: "crlf", in: "arg x\r\n", errLine: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseArgs("t.args", []byte(tc.in))
			if tc.errLine != 0 {
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("err = %v, want a *SyntaxError", err)
				}
				if se.Line != tc.errLine || se.File != "t.args" {
					t.Fatalf("error at %s:%d, want t.args:%d (%v)", se.File, se.Line, tc.errLine, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

const verdictSrc = `int main(void) {
	for (i = 0; i < n; i++) /* LOOP: mm.i */
		for (j = 0; j < n; j++) /* LOOP: mm.j */
			for (k = 0; k < n; k++) /* LOOP: mm.k */
				c += 1;
	for (i = 0; i < n; i++) /* LOOP: s.i */
		s += a[i];
}
`

func TestParseVerdicts(t *testing.T) {
	tests := []struct {
		name, in string
		src      string // default verdictSrc
		want     []Nest
		errFile  string // "" no error; else the file the error names
		errLine  int
	}{
		{
			name: "ok",
			in:   "# head\nx.c:2 i=parallel j=parallel k=reduction # mm\n\nx.c:6 i=reduction\n",
			want: []Nest{
				{File: "x.c", Name: "mm", Line: 2, Comment: "mm", Levels: []Level{
					{Var: "i", Marker: "mm.i", Line: 2, Verdict: Parallel},
					{Var: "j", Marker: "mm.j", Line: 3, Verdict: Parallel},
					{Var: "k", Marker: "mm.k", Line: 4, Verdict: Reduction},
				}},
				{File: "x.c", Name: "s", Line: 6, Levels: []Level{{Var: "i", Marker: "s.i", Line: 6, Verdict: Reduction}}},
			},
		},
		{name: "split nest", in: "x.c:2 i=parallel\nx.c:3 j=parallel k=sequential\nx.c:6 i=excluded\n", want: []Nest{
			{File: "x.c", Name: "mm", Line: 2, Levels: []Level{{Var: "i", Marker: "mm.i", Line: 2, Verdict: Parallel}}},
			{File: "x.c", Name: "mm", Line: 3, Levels: []Level{{Var: "j", Marker: "mm.j", Line: 3, Verdict: Parallel}, {Var: "k", Marker: "mm.k", Line: 4, Verdict: Sequential}}},
			{File: "x.c", Name: "s", Line: 6, Levels: []Level{{Var: "i", Marker: "s.i", Line: 6, Verdict: Excluded}}},
		}},
		{name: "missing loop", in: "x.c:2 i=parallel j=parallel k=reduction\n", errFile: "x.c", errLine: 6},
		{name: "wrong file", in: "y.c:2 i=parallel\n", errFile: "x.verdict", errLine: 1},
		{name: "no marker", in: "x.c:5 i=parallel\n", errFile: "x.verdict", errLine: 1},
		{name: "wrong var", in: "x.c:2 j=parallel\n", errFile: "x.verdict", errLine: 1},
		{name: "bad verdict", in: "x.c:6 i=fast\n", errFile: "x.verdict", errLine: 1},
		{name: "no levels", in: "\nx.c:6\n", errFile: "x.verdict", errLine: 2},
		{name: "bad line", in: "x.c:zero i=parallel\n", errFile: "x.verdict", errLine: 1},
		{name: "unknown level", in: "x.c:2 i=parallel q=parallel\n", errFile: "x.verdict", errLine: 1},
		{name: "order", in: "x.c:3 j=parallel\nx.c:2 i=parallel k=parallel j=parallel\n", errFile: "x.verdict", errLine: 2},
		{name: "twice", in: "x.c:2 i=parallel j=parallel k=reduction\nx.c:6 i=reduction\nx.c:6 i=reduction\n", errFile: "x.verdict", errLine: 3},
		{name: "duplicate marker", src: verdictSrc + "for (;;) /* LOOP: s.i */\n", in: "x.c:6 i=reduction\n", errFile: "x.c", errLine: 9},
		{name: "two markers on a line", src: "for /* LOOP: a.i */ /* LOOP: a.j */\n", in: "", errFile: "x.c", errLine: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.src
			if src == "" {
				src = verdictSrc
			}
			got, err := ParseVerdicts("x.verdict", []byte(tc.in), "dir/x.c", []byte(src))
			if tc.errFile != "" {
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("err = %v, want a *SyntaxError", err)
				}
				if filepath.Base(se.File) != tc.errFile || se.Line != tc.errLine {
					t.Fatalf("error at %s:%d, want %s:%d (%v)", se.File, se.Line, tc.errFile, tc.errLine, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// testdataDir returns the repository's testdata directory.
func testdataDir(t *testing.T) string {
	t.Helper()
	s, err := ScriptPath()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(s)
}

// TestSourceTree checks the side files of every program in the source tree:
// .args files parse, every loops program has a .verdict file that matches
// its LOOP markers and takes its size from argv, and no program name is used
// twice.
func TestSourceTree(t *testing.T) {
	td := testdataDir(t)
	names := map[string]Suite{}
	counts := map[Suite]int{}
	for _, suite := range Suites() {
		srcs, err := filepath.Glob(filepath.Join(td, string(suite), "*.c"))
		if err != nil {
			t.Fatal(err)
		}
		for _, src := range srcs {
			name := strings.TrimSuffix(filepath.Base(src), ".c")
			if s, ok := names[name]; ok {
				t.Errorf("%s is in both %s and %s", name, s, suite)
			}
			names[name] = suite
			counts[suite]++
			code, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if data, err := os.ReadFile(strings.TrimSuffix(src, ".c") + ".args"); err == nil {
				if _, err := ParseArgs(name+".args", data); err != nil {
					t.Error(err)
				}
			}
			if suite == SuiteCorpus {
				if strings.Contains(string(code), "LOOP:") {
					t.Errorf("%s: LOOP markers belong in loops/ and nests/ programs", name)
				}
				continue
			}
			// Every for statement must carry a marker.
			for i, l := range strings.Split(string(code), "\n") {
				if strings.Contains(l, "for (") && !markerRE.MatchString(l) {
					t.Errorf("%s:%d: for loop without a LOOP marker", src, i+1)
				}
			}
			if suite == SuiteNests {
				continue // TestNestExpectations checks the markers against expect.json
			}
			if !strings.Contains(string(code), "argv[1]") {
				t.Errorf("%s does not take its size from argv[1]", name)
			}
			p := Program{Name: name, Suite: suite, Source: src}
			nests, err := p.LoopNests()
			if err != nil {
				t.Error(err)
				continue
			}
			if len(nests) == 0 {
				t.Errorf("%s: no loop nests", name)
			}
		}
	}
	if counts[SuiteCorpus] < 28 {
		t.Errorf("corpus has %d programs, want at least 28", counts[SuiteCorpus])
	}
	if counts[SuiteLoops] < 14 {
		t.Errorf("loops has %d programs, want at least 14", counts[SuiteLoops])
	}
	if counts[SuiteNests] < 24 {
		t.Errorf("nests has %d programs, want at least 24", counts[SuiteNests])
	}
}

func FuzzParseArgs(f *testing.F) {
	f.Add([]byte("arg a\nstdin 1\nenv A=b\ntmpdir\nexit 3\n"))
	f.Add([]byte("# c\n\nexit 300\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseArgs("f.args", data)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 {
				t.Fatalf("error %v is not a located *SyntaxError", err)
			}
			return
		}
		if s.WantExit < 0 || s.WantExit > 255 {
			t.Fatalf("exit status %d out of range", s.WantExit)
		}
		for _, e := range s.Env {
			if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
				t.Fatalf("bad env entry %q", e)
			}
		}
	})
}

func FuzzParseVerdicts(f *testing.F) {
	f.Add([]byte("x.c:2 i=parallel j=parallel k=reduction\nx.c:6 i=reduction\n"), []byte(verdictSrc))
	f.Add([]byte("x.c:1 a=excluded # c\n"), []byte("for /* LOOP: n.a */\n"))
	f.Fuzz(func(t *testing.T, v, src []byte) {
		nests, err := ParseVerdicts("x.verdict", v, "x.c", src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 {
				t.Fatalf("error %v is not a located *SyntaxError", err)
			}
			return
		}
		for _, n := range nests {
			if len(n.Levels) == 0 || n.Levels[0].Line != n.Line {
				t.Fatalf("bad nest %+v", n)
			}
			for i := 1; i < len(n.Levels); i++ {
				if n.Levels[i].Line <= n.Levels[i-1].Line {
					t.Fatalf("levels out of order in %+v", n)
				}
			}
		}
	})
}
