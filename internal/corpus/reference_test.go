package corpus

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDeviceNestReferences builds every CUDA C reference of
// testdata/device/nests as C for the CPU (ref.h's REF_CPU: each thread in
// turn) and checks that it prints what its nests program prints natively,
// so that the references the GPU machine times compute the same thing,
// and that each of its kernels names nests of the program
// (testdata/device/pernest.py pairs them with gxbit's hot spots by name).
func TestDeviceNestReferences(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles every reference")
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("no C compiler: %v", err)
	}
	refDir := filepath.Join(testdataDir(t), "device", "nests")
	refs, err := filepath.Glob(filepath.Join(refDir, "*.cu"))
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) < 20 {
		t.Fatalf("%d references in %s, want at least 20", len(refs), refDir)
	}
	ex, err := ReadNestExpectations(filepath.Join(testdataDir(t), "nests"))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := DefaultDir()
	if err != nil {
		t.Skip(err)
	}
	dir = filepath.Join(dir, "nests")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	err = BuildInto(ctx, dir, BuildOptions{Modes: []string{"O2-static"}, Suites: []Suite{SuiteNests}})
	if errors.Is(err, ErrNoTool) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, ref := range refs {
		name := strings.TrimSuffix(filepath.Base(ref), ".cu")
		t.Run(name, func(t *testing.T) {
			native := filepath.Join(dir, "O2-static", name)
			if _, err := os.Stat(native); err != nil {
				t.Fatalf("no nests program for the reference: %v", err)
			}
			exe := filepath.Join(bin, name)
			cmd := exec.Command(cc, "-x", "c", "-O2", "-std=gnu11", "-Wall", "-Werror", "-DREF_CPU", "-o", exe, ref, "-lm")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", cmd, err, out)
			}
			want, err := exec.Command(native).Output()
			if err != nil {
				t.Fatalf("%s: %v", native, err)
			}
			var stderr bytes.Buffer
			cmd = exec.Command(exe)
			cmd.Stderr = &stderr
			got, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v\n%s", exe, err, stderr.Bytes())
			}
			if !bytes.Equal(got, want) {
				t.Errorf("reference prints %q, the program %q", got, want)
			}
			checkReferenceTimes(t, name, stderr.String(), ex.Programs[name])
		})
	}
}

// checkReferenceTimes checks a reference's stderr: one line per kernel,
// "NAME kernel NEST ms=T launches=N function=F", each NEST ("a+b" for a
// kernel doing two nests' work) a nest of the program, then the total
// line "NAME kernel_ms=T submit_ms=S".
func checkReferenceTimes(t *testing.T, name, stderr string, pe *ProgramExpect) {
	t.Helper()
	if pe == nil {
		t.Fatalf("no expectations for %s", name)
	}
	nests := map[string]bool{}
	for _, n := range pe.Nests {
		nests[n.Nest] = true
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) < 2 {
		t.Fatalf("stderr %q: want a line per kernel and the total", stderr)
	}
	for _, l := range lines[:len(lines)-1] {
		f := strings.Fields(l)
		if len(f) != 6 || f[0] != name || f[1] != "kernel" || !strings.HasPrefix(f[3], "ms=") ||
			!strings.HasPrefix(f[4], "launches=") || !strings.HasPrefix(f[5], "function=") {
			t.Errorf("kernel line %q, want %q", l, name+" kernel NEST ms=T launches=N function=F")
			continue
		}
		for _, n := range strings.Split(f[2], "+") {
			if !nests[n] {
				t.Errorf("kernel line %q names %q, not a nest of %s", l, n, name)
			}
		}
	}
	if !strings.HasPrefix(lines[len(lines)-1], name+" kernel_ms=") {
		t.Errorf("last line %q does not report the kernel time", lines[len(lines)-1])
	}
}
