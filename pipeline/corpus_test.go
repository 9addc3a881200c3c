package pipeline

import (
	"bytes"
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/jit"
)

// corpusModes are the build modes the differential test covers: all of them
// with GXBIT_CORPUS_FULL=1, else one per link kind and optimisation level.
func corpusModes() []string {
	if os.Getenv("GXBIT_CORPUS_FULL") != "" {
		var all []string
		for _, m := range corpus.Modes() {
			all = append(all, m.Name)
		}
		return all
	}
	return []string{"O0-static", "O2-static", "O3-static", "O2-static-pie", "O2-dynamic", "O2-musl"}
}

// runUnder runs p under the translator the way the native run was made.
func runUnder(t *testing.T, p corpus.Program, tempDir, engine string) corpus.Result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cfg := Config{
		Path: p.Path, Args: append([]string{p.Path}, p.Argv(tempDir)...), Env: p.Env,
		Stdin: bytes.NewReader(p.Stdin), Stdout: &stdout, Stderr: &stderr,
		MaxInsns: 20_000_000_000, Engine: engine,
	}
	if tempDir != "" {
		cfg.Writable = []string{tempDir}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("gxbit run: %v", err)
	}
	if d := res.Diagnosis(); d != "" {
		t.Logf("gxbit: %s", d)
	}
	r := corpus.Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: res.ExitStatus, Duration: time.Since(start)}
	if res.Signal != 0 {
		r.ExitCode, r.Signal = -1, syscall.Signal(res.Signal)
	}
	return r
}

// knownMismatches lists the runs that differ from native today, each with
// the reason. An entry that starts passing fails the test, so the list only
// shrinks.
var knownMismatches = map[string]string{}

// TestCorpusDifferential runs every corpus program natively and under gxbit
// and requires byte-identical stdout and stderr and the same exit status.
func TestCorpusDifferential(t *testing.T) {
	dir := corpus.Build(t)
	for _, mode := range corpusModes() {
		progs, err := corpus.Programs(dir, mode)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range progs {
			if p.Suite != corpus.SuiteCorpus {
				continue
			}
			t.Run(p.String(), func(t *testing.T) {
				native := corpus.RunNative(t, p)
				for _, engine := range testEngines() {
					tmp := ""
					if p.NeedsTempDir {
						tmp = t.TempDir()
					}
					under := runUnder(t, p, tmp, engine)
					err := corpus.Compare(native, under)
					why, known := knownMismatches[p.String()]
					switch {
					case err != nil && known:
						t.Logf("%s: known mismatch (%s): %v", engine, why, err)
					case err != nil:
						t.Errorf("%s: %v\n(native %v, gxbit %v)", engine, err, native.Duration, under.Duration)
					case known:
						t.Errorf("%s passes now: remove it from knownMismatches (%s)", engine, why)
					}
				}
			})
		}
	}
}

var _ = strings.Contains

// testEngines are the CPU engines every differential suite runs on: the
// interpreter, and the compiling engine where it runs.
func testEngines() []string {
	if jit.Supported() {
		return []string{EngineInterp, EngineJIT}
	}
	return []string{EngineInterp}
}
