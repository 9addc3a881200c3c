package polyhedral

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// randomProblem returns a problem over nv variables boxed in [-box, box]
// plus a few random equalities and inequalities with coefficients up to
// maxc in magnitude.
func randomProblem(r *rand.Rand, nv int, box, maxc int64) problem {
	p := problem{nv: nv}
	for x := 0; x < nv; x++ {
		lo := lin{c: make([]int64, nv), k: box}
		lo.c[x] = 1
		hi := lin{c: make([]int64, nv), k: box}
		hi.c[x] = -1
		p.ges = append(p.ges, lo, hi)
	}
	rnd := func() lin {
		l := lin{c: make([]int64, nv), k: r.Int64N(4*maxc+1) - 2*maxc}
		for x := range l.c {
			l.c[x] = r.Int64N(2*maxc+1) - maxc
		}
		return l
	}
	for range r.IntN(4) + 1 {
		p.ges = append(p.ges, rnd())
	}
	if r.IntN(3) == 0 {
		p.eqs = append(p.eqs, rnd())
	}
	return p
}

// bruteFeasible enumerates the box [-box, box]^nv.
func bruteFeasible(p problem, box int64) bool {
	pt := make([]int64, p.nv)
	var rec func(x int) bool
	rec = func(x int) bool {
		if x == p.nv {
			return satisfies(p, pt)
		}
		for v := -box; v <= box; v++ {
			pt[x] = v
			if rec(x + 1) {
				return true
			}
		}
		return false
	}
	return rec(0)
}

func satisfies(p problem, pt []int64) bool {
	var s solver
	for _, e := range p.eqs {
		if s.eval(e, pt) != 0 {
			return false
		}
	}
	for _, g := range p.ges {
		if s.eval(g, pt) < 0 {
			return false
		}
	}
	return true
}

// TestSolverMatchesBruteForce checks the Omega test against enumeration on
// random small systems, with large coefficients so that dark shadows and
// splinters are exercised.
func TestSolverMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 4000
	if testing.Short() {
		n = 500
	}
	feasible := 0
	for it := range n {
		nv := 1 + r.IntN(4)
		box := int64(4)
		maxc := []int64{1, 3, 7}[r.IntN(3)]
		p := randomProblem(r, nv, box, maxc)
		want := bruteFeasible(p, box)
		s := solver{}
		pt, got, err := s.solve(p)
		if err != nil {
			t.Fatalf("case %d: %v\n%+v", it, err, p)
		}
		if got != want {
			t.Fatalf("case %d: solver says %v, enumeration %v\n%+v", it, got, want, p)
		}
		if got {
			feasible++
			if !satisfies(p, pt) {
				t.Fatalf("case %d: witness %v does not satisfy %+v", it, pt, p)
			}
		}
	}
	if feasible < n/10 || feasible > n*9/10 {
		t.Errorf("generator unbalanced: %d of %d feasible", feasible, n)
	}
}

func TestSolverNamed(t *testing.T) {
	mk := func(nv int, eqs, ges [][]int64) problem {
		p := problem{nv: nv}
		conv := func(rows [][]int64) []lin {
			var ls []lin
			for _, r := range rows {
				ls = append(ls, lin{c: r[:nv], k: r[nv]})
			}
			return ls
		}
		p.eqs, p.ges = conv(eqs), conv(ges)
		return p
	}
	tests := []struct {
		name string
		p    problem
		want bool
	}{
		// 2x = 1 has no integer solution (GCD).
		{"gcd", mk(1, [][]int64{{2, -1}}, nil), false},
		// 1 <= 3x <= 2 is real-feasible but has no integer point.
		{"tightening", mk(1, nil, [][]int64{{3, -1}, {-3, 2}}), false},
		// 27 <= 11x + 13y <= 45, -10 <= 7x - 9y <= 4: Pugh's example, no
		// integer solution although the real shadow is not empty.
		{"pugh", mk(2, nil, [][]int64{{11, 13, -27}, {-11, -13, 45}, {7, -9, 10}, {-7, 9, 4}}), false},
		// 3x + 5y = 1 with x, y unbounded has integer solutions.
		{"bezout", mk(2, [][]int64{{3, 5, -1}}, nil), true},
		// 6x + 10y + 15z = 1, -10 <= x, y, z <= 10 (x = 1, y = 1, z = -1).
		{"modhat", mk(3, [][]int64{{6, 10, 15, -1}}, [][]int64{
			{1, 0, 0, 10}, {0, 1, 0, 10}, {0, 0, 1, 10}, {-1, 0, 0, 10}, {0, -1, 0, 10}, {0, 0, -1, 10}}), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s solver
			pt, ok, err := s.solve(tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.want {
				t.Fatalf("feasible = %v, want %v", ok, tc.want)
			}
			if ok && !satisfies(tc.p, pt) {
				t.Fatalf("witness %v does not satisfy", pt)
			}
		})
	}
}

func TestSolverOverflowAndBudget(t *testing.T) {
	big := int64(1) << 62
	p := problem{nv: 2, ges: []lin{
		{c: []int64{3, big}, k: 1}, {c: []int64{-5, -big + 1}, k: big},
		{c: []int64{big - 1, 7}, k: 0}, {c: []int64{-big + 3, -11}, k: big},
	}}
	var s solver
	_, _, err := s.solve(p)
	if err != nil && !errors.Is(err, ErrOverflow) {
		t.Fatalf("want nil or ErrOverflow, got %v", err)
	}
	s = solver{maxSteps: 1}
	q := randomProblem(rand.New(rand.NewPCG(3, 4)), 3, 4, 7)
	if _, _, err := s.solve(q); !errors.Is(err, ErrTooComplex) {
		t.Fatalf("budget of 1 step: got %v, want ErrTooComplex", err)
	}
}

// TestCoefTableCollisions checks that coefTable tells vectors apart by
// their coefficients, not their hashes: every vector here is given the
// same hash.
func TestCoefTableCollisions(t *testing.T) {
	vecs := [][]int64{{1, 2}, {2, 1}, {-1, -2}, {1, 2, 0}, {minInt64, 0}, {}}
	var ls []lin
	var tab coefTable
	tab.reset(len(vecs))
	for i, c := range vecs {
		if _, ok := tab.find(ls, 0, c, false); ok {
			t.Fatalf("%v found before it was inserted", c)
		}
		tab.insert(0, i)
		ls = append(ls, lin{c: c})
	}
	for i, c := range vecs {
		if j, ok := tab.find(ls, 0, c, false); !ok || j != i {
			t.Errorf("find %v = %d, %v; want %d", c, j, ok, i)
		}
	}
	// Negated lookups: -{1, 2} is {-1, -2}, and -MinInt64 wraps to itself.
	for _, tc := range []struct {
		c    []int64
		want int
	}{{[]int64{1, 2}, 2}, {[]int64{-1, -2}, 0}, {[]int64{minInt64, 0}, 4}, {[]int64{}, 5}, {[]int64{2, 2}, -1}} {
		j, ok := tab.find(ls, 0, tc.c, true)
		if (tc.want < 0 && ok) || (tc.want >= 0 && (!ok || j != tc.want)) {
			t.Errorf("find -%v = %d, %v; want %d", tc.c, j, ok, tc.want)
		}
	}
}

// TestCoefHashLinear checks the property normalize relies on to find
// opposite constraints: the hash of -c is minus the hash of c.
func TestCoefHashLinear(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 1000 {
		c := make([]int64, r.IntN(8))
		neg := make([]int64, len(c))
		for i := range c {
			c[i] = int64(r.Uint64()) >> r.IntN(64)
			neg[i] = -c[i]
		}
		if coefHash(neg) != -coefHash(c) {
			t.Fatalf("hash of -%v is not minus the hash of %v", c, c)
		}
	}
}
