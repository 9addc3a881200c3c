package accel_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// gccStatic builds the C file src into a static executable at out, with
// the extra gcc flags. It skips the test when gcc is missing and fails it
// when the build fails, so a broken test program cannot pass as a skip.
func gccStatic(t *testing.T, src, out string, flags ...string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found")
	}
	args := append(append(append([]string{"-static", "-o", out}, flags...), src), "-lm")
	if b, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc -static: %v\n%s", err, b)
	}
	return out
}

// compileStatic writes a C program given as text and builds it with gcc
// -O1 -static.
func compileStatic(t *testing.T, name, src string) string {
	t.Helper()
	dir := t.TempDir()
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return gccStatic(t, c, filepath.Join(dir, name), "-O1")
}
