package profile_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/gxbit/gxbit/jit"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// TestCountedHeaders profiles testdata/sweeps1d.c (time steps of two 1D
// sweeps: jacobi1d's shape) on the compiling engine with a probe budget
// its sweeps spend, so that their rows pause counting their headers
// (Counted headers): the profile must be the one probed headers give,
// byte for byte, for a small part of the callouts.
func TestCountedHeaders(t *testing.T) {
	if !jit.Supported() {
		t.Skip("the compiling engine does not run on this platform")
	}
	path := buildStatic(t, "sweeps1d")
	profileWith := func(probed bool) (string, uint64) {
		t.Helper()
		var out, file bytes.Buffer
		cfg := pipeline.Config{Path: path, Args: []string{path, "200002", "3"}, Stdout: &out, Stderr: &out, Engine: pipeline.EngineJIT}
		res, f, err := pipeline.Profile(context.Background(), cfg, profile.Options{Collect: profile.CollectOptions{MaxProbesPerNest: 3000, ProbedHeaders: probed}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != pipeline.Exited || res.ExitStatus != 0 {
			t.Fatalf("%v %d %s", res.Outcome, res.ExitStatus, res.Diagnosis())
		}
		if err := profile.Write(&file, f); err != nil {
			t.Fatal(err)
		}
		c := res.Stats.CalloutsByOp
		t.Logf("probed headers %v: %d callouts (%v)", probed, res.Stats.Callouts, c)
		return file.String(), c["PROBE.u8"] + c["COUNT"]
	}
	counted, few := profileWith(false)
	probed, many := profileWith(true)
	if counted != probed {
		t.Errorf("the profiles differ:\n--- counted headers\n%s\n--- probed headers\n%s", counted, probed)
	}
	if few*2 > many {
		t.Errorf("%d header callouts with counted headers, %d with probed ones: want at most half", few, many)
	}
}
