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
// so that the references the GPU machine times compute the same thing.
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
			if !strings.HasPrefix(stderr.String(), name+" kernel_ms=") {
				t.Errorf("stderr %q does not report the kernel time", stderr.String())
			}
		})
	}
}
