package corpus

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCompare(t *testing.T) {
	base := Result{Stdout: []byte("line one\nline two\n"), Stderr: []byte("warn\n"), ExitCode: 3}
	tests := []struct {
		name   string
		other  Result
		stream string // "" means equal
		offset int
		line   int
		col    int
	}{
		{name: "equal", other: Result{Stdout: []byte("line one\nline two\n"), Stderr: []byte("warn\n"), ExitCode: 3, Duration: time.Hour}},
		{name: "stdout byte", other: Result{Stdout: []byte("line one\nline tw0\n"), Stderr: []byte("warn\n"), ExitCode: 3}, stream: "stdout", offset: 16, line: 2, col: 8},
		{name: "stdout first byte", other: Result{Stdout: []byte("Line one\nline two\n"), Stderr: []byte("warn\n"), ExitCode: 3}, stream: "stdout", offset: 0, line: 1, col: 1},
		{name: "stdout short", other: Result{Stdout: []byte("line one\n"), Stderr: []byte("warn\n"), ExitCode: 3}, stream: "stdout", offset: 9, line: 2, col: 1},
		{name: "stdout long", other: Result{Stdout: []byte("line one\nline two\nthree"), Stderr: []byte("warn\n"), ExitCode: 3}, stream: "stdout", offset: 18, line: 3, col: 1},
		{name: "stderr", other: Result{Stdout: []byte("line one\nline two\n"), Stderr: []byte("warm\n"), ExitCode: 3}, stream: "stderr", offset: 3, line: 1, col: 4},
		{name: "exit", other: Result{Stdout: []byte("line one\nline two\n"), Stderr: []byte("warn\n"), ExitCode: 4}, stream: "exit status"},
		{name: "signal", other: Result{Stdout: []byte("line one\nline two\n"), Stderr: []byte("warn\n"), ExitCode: -1, Signal: syscall.SIGSEGV}, stream: "exit status"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Compare(base, tc.other)
			if tc.stream == "" {
				if err != nil {
					t.Fatalf("Compare = %v, want nil", err)
				}
				return
			}
			var me *MismatchError
			if !errors.As(err, &me) {
				t.Fatalf("Compare = %v, want a *MismatchError", err)
			}
			if me.Stream != tc.stream || me.Offset != tc.offset || (tc.line != 0 && (me.Line != tc.line || me.Column != tc.col)) {
				t.Fatalf("mismatch %s@%d (%d:%d), want %s@%d (%d:%d): %v", me.Stream, me.Offset, me.Line, me.Column, tc.stream, tc.offset, tc.line, tc.col, err)
			}
			if err.Error() == "" {
				t.Fatal("empty message")
			}
		})
	}
	// Context is bounded and centred on the difference.
	long := bytes.Repeat([]byte("abcdefghij"), 100)
	mod := bytes.Clone(long)
	mod[500] = 'X'
	var me *MismatchError
	if !errors.As(Compare(Result{Stdout: long}, Result{Stdout: mod}), &me) {
		t.Fatal("no mismatch found")
	}
	if me.Offset != 500 || len(me.Want) != 2*contextBytes || me.Got[contextBytes] != 'X' || me.Want[contextBytes] != 'a' {
		t.Fatalf("bad context: %+v", me)
	}
}

// subsetNames are the programs the package's own tests build: ones that use
// arguments, the environment, stdin, a temporary directory, exit(3), stderr,
// long double printing, and a loop kernel.
var subsetNames = []string{"envargs", "fileio", "strtod_scan", "exitcall", "exitret", "stderr", "longdouble", "matmul", "clock"}

func TestBuildAndRunSubset(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	out := t.TempDir()
	modes := []string{"O0-static", "O2-dynamic", "O3-static-pie"}
	if _, err := exec.LookPath("musl-gcc"); err == nil {
		modes = append(modes, "O2-musl")
	}
	ctx := context.Background()
	if err := BuildInto(ctx, out, BuildOptions{Names: subsetNames, Modes: modes}); err != nil {
		t.Fatal(err)
	}
	// A second build is a no-op: binaries keep their modification times.
	bin := filepath.Join(out, "O0-static", "matmul")
	st1, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := BuildInto(ctx, out, BuildOptions{Names: subsetNames, Modes: modes}); err != nil {
		t.Fatal(err)
	}
	if st2, err := os.Stat(bin); err != nil || !st2.ModTime().Equal(st1.ModTime()) {
		t.Errorf("incremental build rebuilt %s (%v)", bin, err)
	}
	if got := len(BuiltModes(out)); got != len(modes) {
		t.Errorf("BuiltModes: %d modes, want %d", got, len(modes))
	}
	if _, err := Programs(out, "O2-static"); !errors.Is(err, ErrModeNotBuilt) {
		t.Errorf("Programs of an unbuilt mode: %v, want ErrModeNotBuilt", err)
	}

	ref := map[string]Result{}
	for _, mode := range modes {
		ps, err := Programs(out, mode)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != len(subsetNames) {
			t.Fatalf("%s: %d programs, want %d", mode, len(ps), len(subsetNames))
		}
		for _, p := range ps {
			r := RunNative(t, p)
			if r.ExitCode != p.WantExit {
				t.Errorf("%s: exit status %d, want %d\nstderr: %s", p, r.ExitCode, p.WantExit, r.Stderr)
			}
			if len(r.Stdout) == 0 {
				t.Errorf("%s: no output", p)
			}
			if p.Mode.Libc != "glibc" {
				continue
			}
			if want, ok := ref[p.Name]; !ok {
				ref[p.Name] = r
			} else if err := Compare(want, r); err != nil {
				t.Errorf("%s differs from %s: %v", p, modes[0], err)
			}
		}
	}

	// Compare finds a difference planted in a real program's output.
	r := ref["envargs"]
	if !bytes.Contains(r.Stdout, []byte("GXBIT_NUMBER=17\n")) || !bytes.Contains(r.Stdout, []byte("argv[2]=[two words]")) {
		t.Errorf("envargs did not see its arguments and environment:\n%s", r.Stdout)
	}
	bad := r
	bad.Stdout = bytes.Replace(bytes.Clone(r.Stdout), []byte("=17"), []byte("=18"), 1)
	var me *MismatchError
	if err := Compare(r, bad); !errors.As(err, &me) || me.Stream != "stdout" || me.Offset != bytes.Index(r.Stdout, []byte("=17"))+2 {
		t.Errorf("Compare of planted difference: %v", err)
	}
}

func TestExecTimeoutAndLauncher(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	p := Program{Name: "sleep", Path: sh, Spec: Spec{Args: []string{"-c", "sleep 5"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := Exec(ctx, p, ""); !errors.Is(err, ErrTimeout) {
		t.Errorf("Exec of a sleeping program: %v, want ErrTimeout", err)
	}
	// A launcher runs first, with the program's path and arguments after it.
	env, err := exec.LookPath("env")
	if err != nil {
		t.Skip("no env")
	}
	script := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(script, []byte("#!"+sh+"\necho \"$1:$2:$X\"\nkill -9 $$\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p = Program{Name: "script", Path: script, Spec: Spec{Args: []string{"tmp"}, Env: []string{"X=y"}, NeedsTempDir: true}}
	r, err := Exec(context.Background(), p, "/some/dir", env, "-u", "NONE")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(r.Stdout); got != "/some/dir:tmp:y\n" {
		t.Errorf("stdout %q, want %q", got, "/some/dir:tmp:y\n")
	}
	if r.Signal != syscall.SIGKILL || r.ExitCode != -1 {
		t.Errorf("exit %d signal %v, want SIGKILL", r.ExitCode, r.Signal)
	}
	if _, err := Exec(context.Background(), p, ""); err == nil {
		t.Error("Exec without the needed temporary directory succeeded")
	}
}

// TestBuildFailsLoudly copies build.sh next to a program that does not
// compile and checks that the build fails with the compiler's message.
func TestBuildFailsLoudly(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	script, err := ScriptPath()
	if err != nil {
		t.Fatal(err)
	}
	td := t.TempDir()
	data, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"corpus", "loops"} {
		if err := os.MkdirAll(filepath.Join(td, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(td, "build.sh"), data, 0o755))
	must(os.WriteFile(filepath.Join(td, "corpus", "good.c"), []byte("int main(void) { return 0; }\n"), 0o644))
	must(os.WriteFile(filepath.Join(td, "corpus", "broken.c"), []byte("int main(void) { return undeclared_thing; }\n"), 0o644))
	cmd := exec.Command("bash", filepath.Join(td, "build.sh"), "-m", "O0-dynamic", filepath.Join(td, "out"))
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("build of a broken program succeeded:\n%s", out)
	}
	if !strings.Contains(string(out), "FAILED") || !strings.Contains(string(out), "undeclared_thing") {
		t.Errorf("build failure output lacks the compiler error:\n%s", out)
	}
	// Duplicate names across suites are refused too.
	must(os.Remove(filepath.Join(td, "corpus", "broken.c")))
	must(os.WriteFile(filepath.Join(td, "loops", "good.c"), []byte("int main(void) { return 0; }\n"), 0o644))
	if out, err := exec.Command("bash", filepath.Join(td, "build.sh"), "-m", "O0-dynamic", filepath.Join(td, "out")).CombinedOutput(); err == nil {
		t.Errorf("build with a duplicate program name succeeded:\n%s", out)
	}
}
