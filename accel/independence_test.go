package accel

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/ptxgen"
)

// trace builds an access trace from the addresses it touched (size bytes
// each) in probed iterations 0 and 1.
func trace(x86 uint64, store bool, size uint64, it0, it1 []uint64) *accessTrace {
	t := &accessTrace{x86: x86, store: store, size: size}
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

// column builds the trace of an access that walks a column of count0 rows
// in probed iteration 0 and count1 in iteration 1, as bounded probing
// leaves it past maxSpans rows: the window and the lattice.
func column(x86 uint64, store bool, size, lo0, lo1, stride, count0, count1 uint64) *accessTrace {
	t := &accessTrace{x86: x86, store: store, size: size}
	for i, c := range [2][2]uint64{{lo0, count0}, {lo1, count1}} {
		t.it[i].addWindow(c[0], c[0]+stride*(c[1]-1)+size)
		t.it[i].lat = &lattice{lo: c[0], width: size, stride: int64(stride), count: c[1]}
	}
	return t
}

// TestObservedDependenceLattices checks the exact test on rows and
// columns whose windows cross (covariance's cov[i][j] and cov[j][i] for
// j >= i: a column's window spans every row below it) against a brute
// force over the iterations.
func TestObservedDependenceLattices(t *testing.T) {
	const base = 0x100000
	for _, m := range []uint64{40, 750} {
		row := 8 * m
		at := func(r, c uint64) uint64 { return base + r*row + 8*c }
		// Iterations i0 and i0+1 probed, n launched from i0.
		i0 := uint64(3)
		n := m - i0
		rowW := trace(1, true, 8, seq(at(i0, i0), 8, int(m-i0)), seq(at(i0+1, i0+1), 8, int(m-i0-1)))
		colW := column(2, true, 8, at(i0, i0), at(i0+1, i0+1), row, m-i0, m-i0-1)
		if why := observedDependence([]*accessTrace{rowW, colW}, n); why != "" {
			t.Errorf("m=%d: cov[i][j] and cov[j][i]: %q, want independent", m, why)
		}
		// Reading the whole row i (columns below i included, which the
		// earlier iterations' columns wrote) depends.
		rowR := trace(3, false, 8, seq(at(i0, 0), 8, int(m)), seq(at(i0+1, 0), 8, int(m)))
		why := observedDependence([]*accessTrace{rowW, colW, rowR}, n)
		if !strings.Contains(why, "0x2") || !strings.Contains(why, "0x3") {
			t.Errorf("m=%d: column writes and whole-row reads: %q, want the column and the read", m, why)
		}
		if m > 100 {
			continue
		}
		// Brute force: the bytes each iteration writes and reads.
		writes := map[uint64]uint64{}
		dep := false
		for i := i0; i < i0+n; i++ {
			for j := i; j < m; j++ {
				for _, a := range []uint64{at(i, j), at(j, i)} {
					if w, ok := writes[a]; ok && w != i {
						t.Errorf("m=%d: brute force: %#x written in iterations %d and %d", m, a, w, i)
					}
					writes[a] = i
				}
			}
		}
		for i := i0; i < i0+n; i++ {
			for c := uint64(0); c < m; c++ {
				if w, ok := writes[at(i, c)]; ok && w != i {
					dep = true
				}
			}
		}
		if !dep {
			t.Errorf("m=%d: brute force finds the whole-row read independent", m)
		}
	}
}

// TestObservedDependenceConditional checks a store on one side of an if
// (ifsides.c): in each probed iteration it wrote some elements of the row
// the loop reads whole, others in the other, so its own window moved by
// 392 bytes for the row's 400, and windows moving apart meet further on.
// Inside the read's row both times, it is taken to move with the row: no
// dependence. A read of the next row, which the store's row overlaps one
// iteration later, still is one.
func TestObservedDependenceConditional(t *testing.T) {
	const A, row, n = 0x10000, 400, 300
	read := trace(1, false, 8, seq(A, 8, 50), seq(A+row, 8, 50))
	// Elements 3, 7, 20, 45 of row 0; 2, 9, 44 of row 1.
	store := trace(2, true, 8, []uint64{A + 24, A + 56, A + 160, A + 360}, []uint64{A + row + 16, A + row + 72, A + row + 352})
	if why := observedDependence([]*accessTrace{read, store}, n); why != "" {
		t.Errorf("a conditional store inside the row read: %q, want independent", why)
	}
	next := trace(3, false, 8, seq(A+row, 8, 50), seq(A+2*row, 8, 50))
	if why := observedDependence([]*accessTrace{read, store, next}, n); !strings.Contains(why, "0x2") || !strings.Contains(why, "0x3") {
		t.Errorf("a conditional store and a read of the next row: %q, want a dependence between them", why)
	}
}

// TestObservedDependenceIfSides checks a store on each side of an if into
// an array the loop does not read (fcond: b[i][j] = x > 5 ? ... : ...):
// neither store moves as a whole (each wrote the elements the other
// skipped, and its window moved by an accident of the data), and no other
// access covers them, but together they wrote the row, which moves as a
// whole: no dependence. The union still meets a read of the next row.
func TestObservedDependenceIfSides(t *testing.T) {
	const A, B, row, n = 0x10000, 0x90000, 400, 300
	read := trace(1, false, 8, seq(A, 8, 50), seq(A+row, 8, 50))
	var s1, s2 [2][]uint64
	for it := range 2 {
		for e := uint64(0); e < 50; e++ {
			a := B + uint64(it)*row + 8*e
			if (e*7+uint64(it)*3)%5 < 2 && e != 0 {
				s1[it] = append(s1[it], a)
			} else {
				s2[it] = append(s2[it], a)
			}
		}
	}
	// Elements of row 0 the first side wrote last, and of row 1 first:
	// its window alone moves by less than the row.
	yes := trace(2, true, 8, s1[0], s1[1])
	no := trace(3, true, 8, s2[0], s2[1])
	if _, ok := yes.shift(); ok {
		t.Fatal("the test's first store moves as a whole")
	}
	if why := observedDependence([]*accessTrace{read, yes, no}, n); why != "" {
		t.Errorf("the two sides of an if writing a row: %q, want independent", why)
	}
	next := trace(4, false, 8, seq(B+row, 8, 50), seq(B+2*row, 8, 50))
	if why := observedDependence([]*accessTrace{read, yes, no, next}, n); why == "" {
		t.Error("the two sides of an if and a read of the next row: independent, want a dependence")
	}
}

// spanConflictPairs is spanConflict as it was, every pair of spans
// checked: the reference the search by sorted spans must agree with.
func spanConflictPairs(ws, ss []ptxgen.Range, d int64, n uint64) string {
	for _, a := range ws {
		for _, b := range ss {
			if why := spansMeet(a, b, d, n); why != "" {
				return why
			}
		}
	}
	return ""
}

// TestSpanConflictAgreesWithPairs checks spanConflict against every pair
// checked, on random span lists (overlapping, unsorted, of mixed lengths,
// near and far apart) with strides of both signs, 0 among them, and level
// sizes up to one that overflows a stride's reach: the same verdict and
// the same pair named.
func TestSpanConflictAgreesWithPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	spans := func() []ptxgen.Range {
		out := make([]ptxgen.Range, rng.IntN(12))
		base := uint64(0x10000 + rng.IntN(4)*0x1000)
		for i := range out {
			lo := base + uint64(rng.IntN(4096))
			out[i] = ptxgen.Range{Lo: lo, Hi: lo + 1 + uint64(rng.IntN(64))}
		}
		return out
	}
	conflicts := 0
	for trial := 0; trial < 20000; trial++ {
		ws, ss := spans(), spans()
		d := int64(rng.IntN(257)) - 128
		n := []uint64{1, 2, 3, 10, 100, 1 << 20, math.MaxUint64}[rng.IntN(7)]
		got, want := spanConflict(ws, ss, d, n), spanConflictPairs(ws, ss, d, n)
		if got != want {
			t.Fatalf("ws %v, ss %v, d %d, n %d: %q, every pair checked says %q", ws, ss, d, n, got, want)
		}
		if got != "" {
			conflicts++
		}
	}
	if conflicts < 1000 || conflicts > 19000 {
		t.Fatalf("%d of 20000 trials conflict: the test's spans do not exercise both answers", conflicts)
	}
}

// BenchmarkSpanConflict is a triangle's column (symm's C above the
// diagonal: one 8-byte span a row, rows 8000 bytes apart) against
// itself, moving by 8 bytes an iteration, with no conflict: 512 spans.
func BenchmarkSpanConflict(b *testing.B) {
	col := make([]ptxgen.Range, maxSpans)
	for i := range col {
		lo := uint64(0x100000 + i*8000)
		col[i] = ptxgen.Range{Lo: lo, Hi: lo + 8}
	}
	for b.Loop() {
		if why := spanConflict(col, col, 8, 1000); why != "" {
			b.Fatal(why)
		}
	}
}
