package profile_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/gxbit/gxbit/jit"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// TestProfileSameOnEngines profiles the kernels of testdata/kernels.c on
// the interpreter and on the compiling engine: the collector sees the
// same accesses either way (on the compiling engine each probe is a call
// out of compiled code), so the two profile files must be byte for byte
// the same, the guest's output too.
func TestProfileSameOnEngines(t *testing.T) {
	if !jit.Supported() {
		t.Skip("the compiling engine does not run on this platform")
	}
	for _, opt := range []string{"O0", "O2"} {
		t.Run(opt, func(t *testing.T) {
			path := filepath.Join("testdata", "kernels-"+opt)
			var files, outs [2]bytes.Buffer
			for i, engine := range []string{pipeline.EngineInterp, pipeline.EngineJIT} {
				res, f, err := pipeline.Profile(context.Background(), pipeline.Config{Path: path, Stdout: &outs[i], Stderr: &outs[i], Engine: engine}, profile.Options{})
				if err != nil {
					t.Fatalf("%s: %v", engine, err)
				}
				if res.Outcome != pipeline.Exited || res.ExitStatus != 0 {
					t.Fatalf("%s: %v %d %s", engine, res.Outcome, res.ExitStatus, res.Diagnosis())
				}
				if err := profile.Write(&files[i], f); err != nil {
					t.Fatal(err)
				}
			}
			if outs[0].String() != outs[1].String() {
				t.Errorf("output on the interpreter %q, on the jit %q", outs[0].String(), outs[1].String())
			}
			if files[0].String() != files[1].String() {
				t.Errorf("the profiles differ:\n--- interp\n%s\n--- jit\n%s", files[0].String(), files[1].String())
			}
		})
	}
}
