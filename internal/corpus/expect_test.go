package corpus

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestNestExpectations reads testdata/nests/expect.json against the nests
// programs: it must parse, place every nest in its source, and say what
// phase 2 should do with every hot nest.
func TestNestExpectations(t *testing.T) {
	dir := filepath.Join(testdataDir(t), string(SuiteNests))
	ex, err := ReadNestExpectations(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Programs) < 24 {
		t.Errorf("%d programs, want at least 24", len(ex.Programs))
	}
	for name, p := range ex.Programs {
		hot := 0
		for _, n := range p.Nests {
			if n.Hot {
				hot++
			}
			if n.Hot && n.Why == "" {
				t.Errorf("%s: hot nest %s does not say why", name, n.Nest)
			}
		}
		if hot == 0 {
			t.Errorf("%s: no hot nest", name)
		}
	}
	for name, p := range ex.Programs {
		var spans [][2]int
		for _, n := range p.Nests {
			first, last := n.Lines()
			spans = append(spans, [2]int{first, last})
		}
		sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
		for i := 1; i < len(spans); i++ {
			if spans[i][0] <= spans[i-1][1] {
				t.Errorf("%s: a nest on lines %v overlaps one on lines %v", name, spans[i], spans[i-1])
			}
		}
	}
	gemm := ex.Programs["gemm"]
	var kernel *NestExpect
	for _, n := range gemm.Nests {
		if n.Nest == "kernel" {
			kernel = n
		}
	}
	if kernel == nil || len(kernel.Tree) != 1 || len(kernel.Tree[0].Children) != 2 || kernel.Tree[0].Children[1].Children[0].Var != "j" {
		t.Fatalf("gemm's kernel tree is not i(j k(j2)): %+v", kernel)
	}
	i, k := kernel.Tree[0], kernel.Tree[0].Children[1]
	if i.End != k.End+1 || k.End != k.Children[0].End || k.Children[0].End != k.Children[0].Line+1 {
		t.Errorf("gemm's kernel: i ends on %d, k on %d, j2 on %d (from %d)", i.End, k.End, k.Children[0].End, k.Children[0].Line)
	}
	if gemm.NestAt(k.Children[0].Line+1) != kernel || gemm.NestAt(i.End+1) != nil {
		t.Errorf("NestAt does not place gemm's kernel at lines %d-%d", i.Line, i.End)
	}
}

// TestNestSizes checks testdata/nests/sizes: both sets give every nests
// program as many arguments as it reads sizes (calls of size()).
func TestNestSizes(t *testing.T) {
	dir := filepath.Join(testdataDir(t), string(SuiteNests))
	srcs, err := filepath.Glob(filepath.Join(dir, "*.c"))
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []string{"medium", "large", "contract"} {
		sizes, err := ReadNestSizes(dir, set)
		if err != nil {
			t.Fatal(err)
		}
		if len(sizes) != len(srcs) {
			t.Errorf("%s: %d programs, %d sources", set, len(sizes), len(srcs))
		}
		for _, src := range srcs {
			name := strings.TrimSuffix(filepath.Base(src), ".c")
			code, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.Count(string(code), "= size(argc, argv, "); len(sizes[name]) != want {
				t.Errorf("%s %s: %d arguments, the program reads %d", set, name, len(sizes[name]), want)
			}
		}
	}
	if _, err := ReadNestSizes(dir, "huge"); err == nil {
		t.Error("an unknown size set is accepted")
	}
}

// TestNestExpectationsRejects checks that ReadNestExpectations finds what a
// hand edit can get wrong.
func TestNestExpectationsRejects(t *testing.T) {
	src := "int main(void) {\n" +
		"\tfor (int i = 0; i < 4; i++) { /* LOOP: k.i */\n" +
		"\t\tfor (int j = 0; j < 4; j++) /* LOOP: k.j */\n" +
		"\t\t\t;\n" +
		"\t\tfor (int j = 0; j < 4; j++) /* LOOP: k.j2 */\n" +
		"\t\t\t;\n" +
		"\t}\n}\n"
	good := `{"version": 1, "programs": {"p": {"shape": "s", "nests": [
		{"nest": "k", "loops": "i(j j2)", "verdicts": {"i": "parallel", "j": "parallel", "j2": "parallel"}, "kernels": [{"grid": ["i", "j"]}, {"grid": ["i", "j2"]}]}]}}}`
	cases := []struct{ name, json, want string }{
		{"good", good, ""},
		{"nesting", strings.Replace(good, `"i(j j2)"`, `"i(j(j2))"`, 1), "inside"},
		{"order", strings.Replace(good, `"i(j j2)"`, `"i(j2 j)"`, 1), "sibling"},
		{"unmarked", `{"version": 1, "programs": {"p": {"shape": "s", "nests": [
			{"nest": "k", "loops": "i(j)", "verdicts": {"i": "parallel", "j": "parallel"}, "kernels": [{"grid": ["i", "j"]}]}]}}}`, "no nest"},
		{"no marker", strings.Replace(good, `"i(j j2)"`, `"i(j j2 j3)"`, 1), "no marker"},
		{"verdict", strings.Replace(good, `"j2": "parallel"}`, `"j2": "maybe"}`, 1), "verdict"},
		{"grid", strings.Replace(good, `["i", "j2"]`, `["i", "x"]`, 1), "not a loop"},
		{"unbalanced", strings.Replace(good, `"i(j j2)"`, `"i(j j2"`, 1), "missing )"},
		{"cpu with kernels", strings.Replace(good, `"nest": "k",`, `"nest": "k", "cpu": true,`, 1), "CPU"},
		{"parallel host", strings.Replace(good, `"kernels"`, `"host": ["i"], "kernels"`, 1), "host loop"},
		{"unknown field", strings.Replace(good, `"shape"`, `"shap"`, 1), "unknown field"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "p.c"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ExpectFile), []byte(c.json), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadNestExpectations(dir)
			switch {
			case c.want == "" && err != nil:
				t.Fatal(err)
			case c.want != "" && err == nil:
				t.Fatalf("accepted; want an error about %q", c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Fatalf("error %q does not mention %q", err, c.want)
			}
		})
	}
}
