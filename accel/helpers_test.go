package accel_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
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

// offloadedAsNative accelerates path with args (args[0] the program) under
// prof on the simulated GPU, launching wherever the guards pass
// (AlwaysOffload), and fails the test unless its output and exit status
// are the native run's. It returns the report.
func offloadedAsNative(t *testing.T, path string, args []string, prof *profile.File) *accel.Report {
	t.Helper()
	return offloadedAsNativeWith(t, path, args, accel.Options{Profile: prof})
}

// offloadedAsNativeWith is offloadedAsNative with options opts (their
// Driver and AlwaysOffload set as there).
func offloadedAsNativeWith(t *testing.T, path string, args []string, opts accel.Options) *accel.Report {
	t.Helper()
	want := runNative(t, path, args[1:]...)
	var out bytes.Buffer
	opts.Driver, opts.AlwaysOffload = gpusim.New(gpusim.Options{}), true
	res, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want || res.ExitStatus != 0 {
		t.Fatalf("accelerated %q (status %d), native %q", out.String(), res.ExitStatus, want)
	}
	return rep
}
