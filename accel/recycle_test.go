package accel_test

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// TestRecycledBringBackAsNative accelerates testdata/nests programs whose
// arrays a kernel makes and the host then reads (a checksum fold), with a
// window of eight pages for the pages brought back (accel.Options.
// BackWindow; 32 MiB by default, which these sizes stay under): most of
// what comes back is released to the device again and its host memory
// reused (ptxgen's recycle.go), and the output must still be native's.
func TestRecycledBringBackAsNative(t *testing.T) {
	script, err := corpus.ScriptPath()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"conv2d", []string{"300", "320"}},
		{"jacobi2dt", []string{"200", "6"}},
		{"mvt", []string{"400"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := filepath.Join(filepath.Dir(script), string(corpus.SuiteNests), c.name+".c")
			bin := gccStatic(t, src, filepath.Join(t.TempDir(), c.name), "-O2")
			_, prof, err := pipeline.Profile(context.Background(), pipeline.Config{Path: bin, Args: []string{bin}, Stdout: io.Discard, Stderr: io.Discard, Engine: testEngine}, profile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			rep := offloadedAsNativeWith(t, bin, append([]string{bin}, c.args...), accel.Options{Profile: prof, BackWindow: 8 << 12})
			t.Logf("brought back %d bytes, released %d, read again %d", rep.BytesBroughtBack, rep.BroughtBackReleased, rep.BroughtBackReread)
			if rep.BroughtBackReleased == 0 {
				t.Errorf("nothing brought back was released (%d bytes brought back)", rep.BytesBroughtBack)
			}
		})
	}
}
