package polyhedral

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// genTree returns a random imperfect nest of 2–5 loops in pre-order (level
// 0 the root; each other level's parent an ancestor-or-self of the level
// before it), bounds using only ancestors' indices, and the path (as level
// numbers) of each level.
func genTree(r *rand.Rand) (Domain, [][]int) {
	names := []string{"i", "u0", "u1", "u2", "u3"}
	nl := 2 + r.IntN(4)
	var d Domain
	paths := [][]int{{0}}
	d.Levels = append(d.Levels, Level{Index: "i", Lower: Const(r.Int64N(2)), Upper: Const(1 + r.Int64N(3))})
	for l := 1; l < nl; l++ {
		prev := paths[l-1]
		parent := prev[r.IntN(len(prev))]
		var path []int
		for _, p := range prev {
			path = append(path, p)
			if p == parent {
				break
			}
		}
		path = append(path, l)
		lv := Level{Index: names[l], Lower: Const(r.Int64N(2)), Upper: Const(r.Int64N(4))}
		if r.IntN(2) == 0 {
			outer := Var(names[path[r.IntN(len(path)-1)]])
			if r.IntN(2) == 0 {
				lv.Upper = outer
			} else {
				lv.Lower = outer
				lv.Upper = Const(3)
			}
		}
		d.Levels = append(d.Levels, lv)
		paths = append(paths, path)
	}
	return d, paths
}

// genTreeAccess returns an access at the innermost loop of a random path.
func genTreeAccess(r *rand.Rand, d Domain, paths [][]int, site int) (Access, []int) {
	path := paths[r.IntN(len(paths))]
	off := Const(r.Int64N(9) - 4)
	var loops []string
	for _, l := range path {
		loops = append(loops, d.Levels[l].Index)
		if r.IntN(3) > 0 {
			off = off.Add(Var(d.Levels[l].Index).Scale(r.Int64N(7) - 3))
		}
	}
	kind := Read
	if r.IntN(2) == 0 {
		kind = Write
	}
	return Access{Site: fmt.Sprintf("s%d", site), Base: Const(0), Offset: off, Size: []int64{1, 2, 4}[r.IntN(3)], Kind: kind, Loops: loops}, path
}

// pathPoints enumerates the iterations of the levels on path (0 elsewhere).
func pathPoints(t testing.TB, d Domain, path []int) [][]int64 {
	var out [][]int64
	cur := make([]int64, len(d.Levels))
	var rec func(p int)
	rec = func(p int) {
		if p == len(path) {
			out = append(out, append([]int64(nil), cur...))
			return
		}
		l := path[p]
		env := map[string]int64{}
		for _, q := range path[:p] {
			env[d.Levels[q].Index] = cur[q]
		}
		lo, err := d.Levels[l].Lower.Eval(env)
		if err != nil {
			t.Fatal(err)
		}
		hi, err := d.Levels[l].Upper.Eval(env)
		if err != nil {
			t.Fatal(err)
		}
		for v := lo; v <= hi; v++ {
			cur[l] = v
			rec(p + 1)
		}
		cur[l] = 0
	}
	rec(0)
	return out
}

func onPath(path []int, l int) bool {
	for _, p := range path {
		if p == l {
			return true
		}
	}
	return false
}

// bruteTree is the reference for Depends on an imperfect nest: iterations
// of each access over its own path, equal on the shared levels before
// level, different at level.
func bruteTree(t testing.TB, d Domain, a, b Access, pa, pb []int, level int) bool {
	if a.Kind == Read && b.Kind == Read || !onPath(pa, level) || !onPath(pb, level) {
		return false
	}
	for _, p := range pathPoints(t, d, pa) {
		for _, q := range pathPoints(t, d, pb) {
			same := true
			for l := 0; l < level; l++ {
				if onPath(pa, l) && onPath(pb, l) && p[l] != q[l] {
					same = false
				}
			}
			if !same || p[level] == q[level] {
				continue
			}
			x, y := addrAt(t, d, a, p, nil), addrAt(t, d, b, q, nil)
			if x < y+b.Size && y < x+a.Size {
				return true
			}
		}
	}
	return false
}

// TestDependsTreeMatchesBruteForce compares Depends with enumeration on
// random imperfect nests (sibling loops, sites at every depth, triangular
// bounds on any enclosing index).
func TestDependsTreeMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	found := 0
	for it := 0; it < 2500; it++ {
		d, paths := genTree(r)
		a, pa := genTreeAccess(r, d, paths, 0)
		b, pb := genTreeAccess(r, d, paths, 1)
		level := r.IntN(len(d.Levels))
		w, err := Depends(d, a, b, level, Options{})
		if err != nil {
			t.Fatalf("%v: %v", d, err)
		}
		want := bruteTree(t, d, a, b, pa, pb, level)
		if (w != nil) != want {
			t.Fatalf("domain %v, %v (path %v) and %v (path %v) at level %d: Depends says %v, enumeration %v", d.Levels, a, pa, b, pb, level, w, want)
		}
		if w != nil {
			found++
			x, y := addrAt(t, d, a, w.A, nil), addrAt(t, d, b, w.B, nil)
			if !(x < y+b.Size && y < x+a.Size) || w.A[level] == w.B[level] {
				t.Fatalf("witness %v does not conflict at level %d", w, level)
			}
		}
	}
	if found < 100 {
		t.Fatalf("only %d dependences in the sample: the generator is too weak", found)
	}
}

// TestDependsBeforeMatchesBruteForce checks the one-direction test on
// random imperfect nests: a at an earlier iteration of level than b.
func TestDependsBeforeMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	found := 0
	for it := 0; it < 1500; it++ {
		d, paths := genTree(r)
		a, pa := genTreeAccess(r, d, paths, 0)
		b, pb := genTreeAccess(r, d, paths, 1)
		level := r.IntN(len(d.Levels))
		w, err := DependsBefore(d, a, b, level, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := false
		if (a.Kind == Write || b.Kind == Write) && onPath(pa, level) && onPath(pb, level) {
			for _, p := range pathPoints(t, d, pa) {
				for _, q := range pathPoints(t, d, pb) {
					same := q[level] > p[level]
					for l := 0; l < level; l++ {
						if onPath(pa, l) && onPath(pb, l) && p[l] != q[l] {
							same = false
						}
					}
					x, y := addrAt(t, d, a, p, nil), addrAt(t, d, b, q, nil)
					if same && x < y+b.Size && y < x+a.Size {
						want = true
					}
				}
			}
		}
		if (w != nil) != want {
			t.Fatalf("domain %v, %v and %v at level %d: DependsBefore says %v, enumeration %v", d.Levels, a, b, level, w, want)
		}
		if w != nil {
			found++
			if w.B[level] <= w.A[level] {
				t.Fatalf("witness %v is not in order at level %d", w, level)
			}
		}
	}
	if found < 50 {
		t.Fatalf("only %d dependences in the sample", found)
	}
}

// TestDependsTreeGemm is the imperfect gemm nest: for i { for j: C[i][j]
// *= beta; for k { for j: C[i][j] += A[i][k]*B[k][j] } }. i is parallel,
// the j loops are parallel, k is sequential: the accumulation it carries
// moves along C's row with the j inside it (a reduction only once j is
// moved outside k).
func TestDependsTreeGemm(t *testing.T) {
	d := Domain{Levels: []Level{
		{Index: "i", Lower: Const(0), Upper: Var("ni").AddConst(-1)},
		{Index: "u0", Lower: Const(0), Upper: Var("nj").AddConst(-1)},
		{Index: "u1", Lower: Const(0), Upper: Var("nk").AddConst(-1)},
		{Index: "u2", Lower: Const(0), Upper: Var("nj").AddConst(-1)},
	}, Assume: []Constraint{GE(Var("ni"), Const(1)), GE(Var("nj"), Const(1)), GE(Var("nk"), Const(1)), GE(Const(4096), Var("nj"))}}
	c := func(j string) Expr { return Var("i").Scale(32768).Add(Var(j).Scale(8)) }
	n := Nest{Domain: d, Accesses: []Access{
		{Site: "beta.r", Base: Var("C"), Offset: c("u0"), Size: 8, Kind: Read, Loops: []string{"i", "u0"}},
		{Site: "beta.w", Base: Var("C"), Offset: c("u0"), Size: 8, Kind: Write, Loops: []string{"i", "u0"}},
		{Site: "acc.r", Base: Var("C"), Offset: c("u2"), Size: 8, Kind: Read, Loops: []string{"i", "u1", "u2"}},
		{Site: "acc.w", Base: Var("C"), Offset: c("u2"), Size: 8, Kind: Write, Loops: []string{"i", "u1", "u2"}},
	}, Reductions: []Reduction{{Read: 2, Write: 3, Op: Sum}}}
	vs, err := Analyze(n, Options{DistinctBases: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []LevelKind{LevelParallel, LevelParallel, LevelSequential, LevelParallel}
	for l, v := range vs {
		if v.Kind != want[l] {
			t.Errorf("level %s: %v (%s), want %v", v.Index, v.Kind, v.Reason, want[l])
		}
	}
}

// TestDependsTreeBadPath: an access whose path skips an enclosing loop its
// bound or address needs is refused with ErrInvalid.
func TestDependsTreeBadPath(t *testing.T) {
	d := Domain{Levels: []Level{
		{Index: "i", Lower: Const(0), Upper: Const(3)},
		{Index: "u0", Lower: Const(0), Upper: Var("i")},
	}}
	good := Access{Site: "a", Base: Const(0), Offset: Var("u0"), Size: 1, Kind: Write, Loops: []string{"i", "u0"}}
	for _, bad := range []Access{
		{Site: "b", Base: Const(0), Offset: Var("u0"), Size: 1, Kind: Write, Loops: []string{"u0"}},
		{Site: "c", Base: Const(0), Offset: Var("u0"), Size: 1, Kind: Write, Loops: []string{"i"}},
		{Site: "d", Base: Const(0), Offset: Var("i"), Size: 1, Kind: Write, Loops: []string{"u0", "i"}},
		{Site: "e", Base: Const(0), Offset: Var("i"), Size: 1, Kind: Write, Loops: []string{"i", "x"}},
	} {
		if _, err := Depends(d, good, bad, 0, Options{}); err == nil {
			t.Errorf("%v with loops %v: no error", bad, bad.Loops)
		}
	}
}
