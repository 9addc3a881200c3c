package corpus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// EnvCorpusDir names the environment variable that overrides the build
// directory Build uses.
const EnvCorpusDir = "GXBIT_CORPUS_DIR"

// buildTimeout bounds one run of build.sh; a full build from scratch takes
// well under a minute on two idle cores. nestsBuildTimeout bounds
// BuildNests' (the nests suite alone), as the tests that built it each
// did before.
const (
	buildTimeout      = 15 * time.Minute
	nestsBuildTimeout = 10 * time.Minute
)

// ErrNoTool reports that a tool the build needs (the C compiler, bash) is
// not installed.
var ErrNoTool = errors.New("build tool not found")

// BuildOptions select part of the corpus for BuildInto.
type BuildOptions struct {
	// Names limits the build to these programs (default: all).
	Names []string
	// Modes limits the build to these mode names (default: all available).
	Modes []string
	// Jobs is the number of parallel compiler jobs (default: build.sh's,
	// the number of CPUs).
	Jobs int
	// Suites limits the build to these suites (default: build.sh's,
	// SuiteCorpus and SuiteLoops). Build SuiteNests into a directory of
	// its own: Programs lists every suite with sources in the directory and
	// requires a binary for each.
	Suites []Suite
}

// ScriptPath returns the path of testdata/build.sh, found beside this
// package's source or, failing that, in a parent of the working directory.
func ScriptPath() (string, error) {
	var tried []string
	if _, file, _, ok := runtime.Caller(0); ok {
		p := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "build.sh")
		if _, err := os.Stat(p); err == nil {
			return filepath.Clean(p), nil
		}
		tried = append(tried, p)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("corpus: locating build.sh: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "testdata", "build.sh")
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
		tried = append(tried, p)
		if filepath.Dir(d) == d {
			break
		}
	}
	return "", fmt.Errorf("corpus: testdata/build.sh not found (tried %v): %w", tried, os.ErrNotExist)
}

// BuildInto runs build.sh into the build directory out, holding an
// exclusive lock on out/.lock for the whole build so that test processes of
// several packages sharing out wait for each other. It returns an error
// wrapping ErrNoTool when gcc (or $CC) or bash is missing, and an error with
// build.sh's output when the build fails.
func BuildInto(ctx context.Context, out string, opts BuildOptions) error {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		return fmt.Errorf("corpus: %s: %w", cc, ErrNoTool)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return fmt.Errorf("corpus: bash is needed to run build.sh (%v): %w", err, ErrNoTool)
	}
	script, err := ScriptPath()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("corpus: build directory: %w", err)
	}
	unlock, err := lockFile(filepath.Join(out, ".lock"))
	if err != nil {
		return fmt.Errorf("corpus: locking %s: %w", out, err)
	}
	defer unlock()
	args := []string{script}
	if opts.Jobs > 0 {
		args = append(args, "-j", strconv.Itoa(opts.Jobs))
	}
	for _, m := range opts.Modes {
		args = append(args, "-m", m)
	}
	for _, s := range opts.Suites {
		args = append(args, "-s", string(s))
	}
	args = append(args, out)
	args = append(args, opts.Names...)
	cmd := exec.CommandContext(ctx, bash, args...)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("corpus: %s failed: %w\n%s", filepath.Base(script), err, output.Bytes())
	}
	return nil
}

// DefaultDir returns the build directory Build uses: $GXBIT_CORPUS_DIR if
// set, else gxbit-corpus in the user's cache directory.
func DefaultDir() (string, error) {
	if d := os.Getenv(EnvCorpusDir); d != "" {
		return filepath.Abs(d)
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("corpus: no cache directory (set %s): %w", EnvCorpusDir, err)
	}
	return filepath.Join(c, "gxbit-corpus"), nil
}

// buildOnce runs the full build at most once per test process; later calls
// of Build reuse its result. It is the package's only process-wide state,
// and is written once.
var buildOnce = sync.OnceValues(func() (string, error) {
	dir, err := DefaultDir()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	return dir, BuildInto(ctx, dir, BuildOptions{})
})

// Build builds the whole corpus in every available mode into DefaultDir
// (once per test process; build.sh skips up-to-date binaries, and a lock
// file serializes concurrent test processes) and returns the build
// directory. It skips the test when gcc or bash is missing and fails it
// when the build fails.
func Build(t testing.TB) string {
	t.Helper()
	dir, err := buildOnce()
	if errors.Is(err, ErrNoTool) || errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("corpus not built: %v", err)
	}
	if err != nil {
		t.Fatalf("building the corpus: %v", err)
	}
	return dir
}

// BuildNests builds the nests suite in modes into its own folder of
// DefaultDir ("nests": the corpus and loops suites are built without it)
// and returns that folder, whose mode subfolders Programs reads. It skips
// the test when the folder is not known or the suite cannot be built.
func BuildNests(t testing.TB, modes ...string) string {
	t.Helper()
	dir, err := DefaultDir()
	if err != nil {
		t.Skip(err)
	}
	dir = filepath.Join(dir, "nests")
	ctx, cancel := context.WithTimeout(context.Background(), nestsBuildTimeout)
	defer cancel()
	if err := BuildInto(ctx, dir, BuildOptions{Modes: modes, Suites: []Suite{SuiteNests}}); err != nil {
		t.Skipf("nests not built: %v", err)
	}
	return dir
}
