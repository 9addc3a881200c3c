package accel_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
)

// TestFixedReadNotWidened profiles threemm at its default size and
// accelerates it at a larger one (the two-phase flow of nests.sh), with
// kernels timed as a fast GPU's: its products' (i, j) kernels must launch.
// Their loads of a row of the left matrix read the same bytes at every j;
// widened to their array's moving window as if they were the sides of an
// if (coverConditionalUnions), they overlapped the products' writes, and
// the products ran on the CPU (30 s against 0.9 s on an H100).
func TestFixedReadNotWidened(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a C program")
	}
	dir := buildNests(t, []string{"O2-static"})
	path := filepath.Join(dir, "O2-static", "threemm")
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path}, Engine: testEngine})
	args := []string{path, "160"}
	want := runNative(t, path, args[1:]...)
	var out bytes.Buffer
	_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Engine: testEngine},
		accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{KernelSpeedup: 1000}), AlwaysOffload: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("output %q, native %q", out.String(), want)
	}
	products := 0
	for _, h := range rep.HotSpots {
		if strings.HasPrefix(h.Schedule, "grid(i,j) thread(k)") && h.Launches > 0 {
			products++
		}
	}
	if products == 0 {
		t.Errorf("no product launched as grid(i,j) thread(k):\n%s", accel.FormatReport(rep))
	}
}
