package accel

import (
	"strings"
	"testing"
)

// trace builds an access trace from the addresses it touched (size bytes
// each) in probed iterations 0 and 1.
func trace(x86 uint64, store bool, size uint64, it0, it1 []uint64) *accessTrace {
	t := &accessTrace{x86: x86, store: store}
	for i, addrs := range [2][]uint64{it0, it1} {
		for _, a := range addrs {
			t.it[i].add(a, a+size)
		}
		t.it[i].normalize()
	}
	return t
}

// seq is n addresses from a by step.
func seq(a, step uint64, n int) []uint64 {
	var out []uint64
	for i := 0; i < n; i++ {
		out = append(out, a+uint64(i)*step)
	}
	return out
}

// TestObservedDependence checks the independence test on the access
// shapes of parallel and of sequential loops, against a brute force over
// the iterations the affine model extrapolates.
func TestObservedDependence(t *testing.T) {
	const A, B = 0x10000, 0x90000
	row := uint64(8 * 64)
	cases := []struct {
		name   string
		traces []*accessTrace
		n      uint64
		dep    bool
	}{
		{"row update", []*accessTrace{
			trace(1, false, 8, seq(A, 8, 64), seq(A+row, 8, 64)),
			trace(2, true, 8, seq(A, 8, 64), seq(A+row, 8, 64)),
		}, 64, false},
		{"column writes", []*accessTrace{
			trace(1, true, 8, seq(A, row, 64), seq(A+8, row, 64)),
			trace(2, false, 8, seq(B, row, 64), seq(B+8, row, 64)),
		}, 64, false},
		{"prefix sum", []*accessTrace{
			trace(1, false, 8, []uint64{A}, []uint64{A + 8}),
			trace(2, true, 8, []uint64{A + 8}, []uint64{A + 16}),
		}, 1000, true},
		{"distance three", []*accessTrace{
			trace(1, false, 8, []uint64{A}, []uint64{A + 8}),
			trace(2, true, 8, []uint64{A + 24}, []uint64{A + 32}),
		}, 1000, true},
		{"distance three, two launched", []*accessTrace{
			trace(1, false, 8, []uint64{A}, []uint64{A + 8}),
			trace(2, true, 8, []uint64{A + 24}, []uint64{A + 32}),
		}, 3, false},
		{"even writes, odd reads", []*accessTrace{
			trace(1, false, 8, []uint64{A + 8}, []uint64{A + 24}),
			trace(2, true, 8, []uint64{A}, []uint64{A + 16}),
		}, 1000, false},
		{"scalar written every iteration", []*accessTrace{
			trace(1, true, 8, []uint64{B}, []uint64{B}),
			trace(2, false, 8, seq(A, 8, 4), seq(A+32, 8, 4)),
		}, 10, true},
		{"Gauss-Seidel rows", []*accessTrace{
			trace(1, false, 8, seq(A, 8, 62), seq(A+row, 8, 62)),          // g[i-1][j]
			trace(2, false, 8, seq(A+2*row, 8, 62), seq(A+3*row, 8, 62)),  // g[i+1][j]
			trace(3, true, 8, seq(A+row+8, 8, 62), seq(A+2*row+8, 8, 62)), // g[i][j]
		}, 62, true},
		{"triangular rows", []*accessTrace{
			trace(1, true, 8, seq(A, 8, 1), seq(A+row, 8, 2)),
		}, 64, false},
		{"triangular rows past the row", []*accessTrace{
			trace(1, true, 8, seq(A, 8, 1), seq(A+row, 8, 2)),
		}, 80, true},
	}
	for _, c := range cases {
		why := observedDependence(c.traces, c.n)
		if (why != "") != c.dep {
			t.Errorf("%s: dependence %q, want one: %v", c.name, why, c.dep)
		}
		if why != "" && !strings.Contains(why, "0x") {
			t.Errorf("%s: the reason names no access: %q", c.name, why)
		}
	}
}
