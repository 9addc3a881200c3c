package accel_test

import (
	"testing"

	"github.com/gxbit/gxbit/pipeline"
)

// TestByteStencilO3 offloads testdata/bytestencil.c built with gcc -O3: a
// time-stepped 5-point stencil over an 8-bit image, whose row loops gcc
// vectorises into SSE2 byte and word ops (punpcklbw, paddw, psllw,
// psrlw, packuswb, pminub) over rows at byte offsets (movdqu, and movq
// for the 8-byte tail). Before ptxgen lowered 1- and 2-byte lanes and
// unaligned vector accesses, the hot nest was "not offloadable" (blur8 at
// -O3: 0 launches). The stencil nest must launch, a thread per row
// running the vector loop and its tails, with the native output.
func TestByteStencilO3(t *testing.T) {
	path := buildC(t, "bytestencil", "-O3")
	args := []string{path, "48", "70", "3"}
	prof := phase1(t, pipeline.Config{Path: path, Args: args, Engine: testEngine})
	rep := offloadedAsNative(t, path, args, prof)
	launched := false
	for _, h := range rep.HotSpots {
		t.Logf("%s %s: %s, launches %d (2D %d), fallbacks %v %s", h.Entry, h.Function, h.Schedule, h.Launches, h.Launches2D, h.FallbackReasons, h.Reason)
		if h.Schedule == "grid(i) thread(j)" && h.Launches > 0 {
			launched = true
		}
	}
	if !launched {
		t.Error("the stencil nest (grid(i) thread(j)) did not launch")
	}
}

// TestByteStencilO2 offloads the same stencil built with gcc -O2, which
// keeps the row's bytes in registers from one column to the next (esi
// holds p[1] for the next column's p[0], and r12d = movzx of sil its
// p[-1]) and borrows the row loop's offset register (edx, restored from
// a spill before the back edge) for loaded bytes. Phase 1 took the
// zero-extended byte for a carried value and the borrowed register for
// data, which left both levels sequential: blur8 at -O2, 0 launches. Both
// levels must be parallel and the nest launch as a 2D grid, each thread
// loading its row's bytes again, with the native output.
func TestByteStencilO2(t *testing.T) {
	path := buildC(t, "bytestencil", "-O2")
	args := []string{path, "48", "70", "3"}
	prof := phase1(t, pipeline.Config{Path: path, Args: args, Engine: testEngine})
	rep := offloadedAsNative(t, path, args, prof)
	grids := 0 // the stencil's nest and the copy's
	for _, h := range rep.HotSpots {
		t.Logf("%s %s: %s, launches %d (2D %d), fallbacks %v %s", h.Entry, h.Function, h.Schedule, h.Launches, h.Launches2D, h.FallbackReasons, h.Reason)
		if h.Schedule == "grid(i,j)" && h.Launches > 0 {
			grids++
		}
	}
	if grids < 2 {
		t.Errorf("%d nests launched as grid(i,j), want the stencil's and the copy's", grids)
	}
}
