package gpusim

import (
	"testing"

	"github.com/gxbit/gxbit/gpu/gputest"
)

// TestConformance runs the shared driver conformance suite, including every
// kernel recorded on a real GPU under testdata/cuda, against the simulator.
// Known lists the recorded fixtures the simulator does not reproduce yet,
// each with how it differs from the H200 (sm_90) recording; remove an entry
// once its fixture passes. Every recorded fixture passes at present.
func TestConformance(t *testing.T) {
	known := map[string]string{}
	gputest.RunWith(t, New(Options{}), gputest.Options{Known: known})
}
