package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/profile"
)

// EnvNestsFull names the environment variable that widens TestNests to
// -O0, -O2 and -O3 and to the medium sizes of testdata/nests/sizes.
const EnvNestsFull = "GXBIT_NESTS_FULL"

// nestsMismatch lists the runs of TestNests (key "MODE/PROGRAM MODE-OF-RUN",
// the run mode being "run", "profile" or "accelerate") known to differ from native,
// each with the reason. An entry that passes fails the test, so the list
// only shrinks.
var nestsMismatch = map[string]string{}

// TestNests is issue 10's acceptance test: every program of testdata/nests
// runs natively, under gxbit run, and profiled then accelerated on gpusim
// (the two-phase flow), and every run prints the same bytes and exits
// alike (the profiling run included).
// By default it covers -O2 at the programs' default (small) sizes; with
// GXBIT_NESTS_FULL=1 it covers -O0, -O2 and -O3 at the medium sizes.
func TestNests(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every nests program three ways")
	}
	full := os.Getenv(EnvNestsFull) == "1"
	modes := []string{"O2-static"}
	if full {
		modes = []string{"O0-static", "O2-static", "O3-static"}
	}
	dir := buildNests(t, modes)
	var sizes map[string][]string
	if full {
		var err error
		if sizes, err = readNestSizes(filepath.Join(dir, "src", "nests", "sizes"), "medium"); err != nil {
			t.Fatal(err)
		}
	}
	for _, mode := range modes {
		progs, err := corpus.Programs(dir, mode)
		if err != nil {
			t.Fatal(err)
		}
		if len(progs) < 24 {
			t.Fatalf("%d nests programs built in %s, want at least 24", len(progs), mode)
		}
		for _, p := range progs {
			if full {
				args, ok := sizes[p.Name]
				if !ok {
					t.Fatalf("%s has no medium size in testdata/nests/sizes", p.Name)
				}
				p.Args = args
			}
			t.Run(p.String(), func(t *testing.T) { checkNest(t, p) })
		}
	}
}

// checkNest runs one program natively, under gxbit run and two-phase on
// gpusim, and compares the outputs.
func checkNest(t *testing.T, p corpus.Program) {
	native := corpus.RunNative(t, p)
	if native.ExitCode != 0 {
		t.Fatalf("native run exits %d: %s", native.ExitCode, native.Stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cfg := func(out, errOut *bytes.Buffer) Config {
		return Config{Path: p.Path, Args: append([]string{p.Path}, p.Args...), Env: p.Env, Stdin: bytes.NewReader(p.Stdin), Stdout: out, Stderr: errOut}
	}
	check := func(how string, got corpus.Result) {
		err := corpus.Compare(native, got)
		key := p.String() + " " + how
		why, known := nestsMismatch[key]
		switch {
		case err != nil && known:
			t.Logf("known mismatch %s (%s): %v", key, why, err)
		case err != nil:
			t.Errorf("%s differs from native: %v", how, err)
		case known:
			t.Errorf("%s passes now: remove it from nestsMismatch (%s)", key, why)
		}
	}

	var out, errOut bytes.Buffer
	res, err := Run(ctx, cfg(&out, &errOut))
	if err != nil {
		t.Fatalf("gxbit run: %v", err)
	}
	check("run", resultOf(res, &out, &errOut))

	out.Reset()
	errOut.Reset()
	res, prof, err := Profile(ctx, cfg(&out, &errOut), profile.Options{})
	if err != nil {
		t.Fatalf("gxbit profile: %v", err)
	}
	check("profile", resultOf(res, &out, &errOut))
	out.Reset()
	errOut.Reset()
	res, rep, err := Accelerate(ctx, cfg(&out, &errOut), accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
	if err != nil {
		t.Fatalf("gxbit accelerate: %v", err)
	}
	check("accelerate", resultOf(res, &out, &errOut))
	if testing.Verbose() {
		t.Logf("%s", accel.FormatReport(rep))
	}
}

// resultOf turns a guest run into a corpus.Result for comparison.
func resultOf(res *Result, out, errOut *bytes.Buffer) corpus.Result {
	r := corpus.Result{Stdout: append([]byte(nil), out.Bytes()...), Stderr: append([]byte(nil), errOut.Bytes()...), ExitCode: res.ExitStatus}
	if res.Signal != 0 {
		r.ExitCode, r.Signal = -1, syscall.Signal(res.Signal)
	}
	return r
}

// buildNests builds the nests suite in modes into its own directory under
// the shared corpus cache (the corpus and loops suites are built without
// it) and returns that directory.
func buildNests(t *testing.T, modes []string) string {
	t.Helper()
	dir, err := corpus.DefaultDir()
	if err != nil {
		t.Skip(err)
	}
	dir = filepath.Join(dir, "nests")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	err = corpus.BuildInto(ctx, dir, corpus.BuildOptions{Modes: modes, Suites: []corpus.Suite{corpus.SuiteNests}})
	if err != nil {
		t.Skipf("nests not built: %v", err)
	}
	return dir
}

// readNestSizes reads one column ("medium" or "large") of
// testdata/nests/sizes: per program, the arguments of that size.
func readNestSizes(path, column string) (map[string][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	col := map[string]int{"medium": 1, "large": 2}[column]
	if col == 0 {
		return nil, fmt.Errorf("%s: no column %q", path, column)
	}
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "|")
		if len(fields) != 3 {
			return nil, fmt.Errorf("%s:%d: want NAME | MEDIUM ARGS | LARGE ARGS", path, n)
		}
		out[strings.TrimSpace(fields[0])] = strings.Fields(fields[col])
	}
	return out, sc.Err()
}
