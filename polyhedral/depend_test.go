package polyhedral

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

var indexNames = []string{"i", "j", "k"}

// genDomain returns a random 1–3 level domain: rectangular levels with small
// constant bounds or the parameter n, triangular levels bounded by an outer
// index, and occasional strides.
func genDomain(r *rand.Rand) Domain {
	var d Domain
	nl := 1 + r.IntN(3)
	for l := range nl {
		lv := Level{Index: indexNames[l]}
		lv.Lower = Const(r.Int64N(3) - 1)
		lv.Upper = Const(r.Int64N(4))
		if r.IntN(4) == 0 {
			lv.Upper = Var("n").AddConst(r.Int64N(3) - 2)
		}
		if l > 0 && r.IntN(2) == 0 {
			outer := Var(indexNames[r.IntN(l)])
			switch r.IntN(4) {
			case 0: // j <= i
				lv.Upper = outer
			case 1: // j < i
				lv.Upper = outer.AddConst(-1)
			case 2: // j > i
				lv.Lower = outer.AddConst(1)
				lv.Upper = Const(3)
			case 3: // j >= 2*i - 1
				lv.Lower = outer.Scale(2).AddConst(-1)
				lv.Upper = Const(4)
			}
		}
		if r.IntN(5) == 0 {
			lv.Step = 2 + r.Int64N(2)
		}
		d.Levels = append(d.Levels, lv)
	}
	return d
}

// genAccess returns an access with a small affine offset.
func genAccess(r *rand.Rand, d Domain, site int) Access {
	off := Const(r.Int64N(9) - 4)
	for _, lv := range d.Levels {
		if r.IntN(3) > 0 {
			off = off.Add(Var(lv.Index).Scale(r.Int64N(9) - 4))
		}
	}
	if r.IntN(6) == 0 {
		off = off.Add(Var("n"))
	}
	base := Var("var0")
	if r.IntN(4) == 0 {
		base = Var("var1")
	}
	kind := Read
	if r.IntN(2) == 0 {
		kind = Write
	}
	return Access{Site: fmt.Sprintf("s%d", site), Base: base, Offset: off, Size: []int64{1, 2, 4, 8}[r.IntN(4)], Kind: kind}
}

// points enumerates the iteration vectors of d under params.
func points(t testing.TB, d Domain, params map[string]int64) [][]int64 {
	env := map[string]int64{}
	for k, v := range params {
		env[k] = v
	}
	var out [][]int64
	cur := make([]int64, len(d.Levels))
	var rec func(l int)
	rec = func(l int) {
		if l == len(d.Levels) {
			out = append(out, append([]int64(nil), cur...))
			return
		}
		lv := d.Levels[l]
		lo, err1 := lv.Lower.Eval(env)
		hi, err2 := lv.Upper.Eval(env)
		if err1 != nil || err2 != nil {
			t.Fatalf("enumerating: %v %v", err1, err2)
		}
		for v := lo; v <= hi; v += lv.step() {
			cur[l] = v
			env[lv.Index] = v
			rec(l + 1)
		}
		delete(env, lv.Index)
	}
	rec(0)
	return out
}

func addrAt(t testing.TB, d Domain, a Access, pt []int64, params map[string]int64) int64 {
	env := map[string]int64{}
	for k, v := range params {
		env[k] = v
	}
	for l, lv := range d.Levels {
		env[lv.Index] = pt[l]
	}
	v, err := a.Addr().Eval(env)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// bruteDepends is the reference for Depends with concrete params.
func bruteDepends(t testing.TB, d Domain, a, b Access, level int, params map[string]int64) bool {
	if a.Kind == Read && b.Kind == Read {
		return false
	}
	pts := points(t, d, params)
	for _, p := range pts {
		for _, q := range pts {
			if !carriedPair(p, q, level) {
				continue
			}
			x, y := addrAt(t, d, a, p, params), addrAt(t, d, b, q, params)
			if x < y+b.Size && y < x+a.Size {
				return true
			}
		}
	}
	return false
}

func carriedPair(p, q []int64, level int) bool {
	for l := range level {
		if p[l] != q[l] {
			return false
		}
	}
	return p[level] != q[level]
}

// checkWitness verifies that w is a real conflict of a and b at level.
func checkWitness(t testing.TB, d Domain, a, b Access, level int, params map[string]int64, w *Witness) {
	t.Helper()
	all := map[string]int64{}
	for k, v := range params {
		all[k] = v
	}
	for k, v := range w.Params {
		all[k] = v
	}
	in := func(pt []int64) bool {
		for _, q := range points(t, d, all) {
			if fmt.Sprint(q) == fmt.Sprint(pt) {
				return true
			}
		}
		return false
	}
	if !in(w.A) || !in(w.B) || !carriedPair(w.A, w.B, level) {
		t.Fatalf("witness %v is not a pair of iterations differing first at level %d", w, level)
	}
	x, y := addrAt(t, d, a, w.A, all), addrAt(t, d, b, w.B, all)
	if !(x < y+b.Size && y < x+a.Size) {
		t.Fatalf("witness %v: addresses %d and %d do not overlap", w, x, y)
	}
}

// TestDependsMatchesBruteForce compares Depends with enumeration on random
// nests with concrete parameters.
func TestDependsMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	n := 3000
	if testing.Short() {
		n = 300
	}
	found := 0
	for it := range n {
		d := genDomain(r)
		a, b := genAccess(r, d, 0), genAccess(r, d, 1)
		params := map[string]int64{"n": r.Int64N(4), "var0": 1000, "var1": 1000 + r.Int64N(12) - 6}
		level := r.IntN(len(d.Levels))
		w, err := Depends(d, a, b, level, Options{Params: params})
		if err != nil {
			t.Fatalf("case %d: %v", it, err)
		}
		want := bruteDepends(t, d, a, b, level, params)
		if (w != nil) != want {
			t.Fatalf("case %d: level %d of %+v\n%v\n%v\nDepends=%v brute=%v", it, level, d, a, b, w, want)
		}
		if w != nil {
			found++
			checkWitness(t, d, a, b, level, params, w)
		}
	}
	if found < n/10 || found > n*9/10 {
		t.Errorf("generator unbalanced: %d of %d dependent", found, n)
	}
	t.Logf("%d of %d dependent", found, n)
}

// TestDependsSymbolic leaves n and the bases symbolic with assumptions that
// bound them, and compares with enumeration over every allowed value.
func TestDependsSymbolic(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	n := 800
	if testing.Short() {
		n = 100
	}
	for it := range n {
		d := genDomain(r)
		d.Assume = []Constraint{
			GE(Var("n"), Const(1)), GE(Const(4), Var("n")),
			GE(Var("var1"), Var("var0").AddConst(-5)), GE(Var("var0").AddConst(5), Var("var1")),
		}
		a, b := genAccess(r, d, 0), genAccess(r, d, 1)
		level := r.IntN(len(d.Levels))
		w, err := Depends(d, a, b, level, Options{})
		if err != nil {
			t.Fatalf("case %d: %v", it, err)
		}
		want := false
		for nv := int64(1); nv <= 4 && !want; nv++ {
			for dv := int64(-5); dv <= 5 && !want; dv++ {
				want = bruteDepends(t, d, a, b, level, map[string]int64{"n": nv, "var0": 0, "var1": dv})
			}
		}
		if (w != nil) != want {
			t.Fatalf("case %d: level %d of %+v\n%v\n%v\nDepends=%v brute=%v", it, level, d, a, b, w, want)
		}
		if w != nil {
			checkWitness(t, d, a, b, level, nil, w)
		}
	}
}

// TestFootprintAndTripCount compares Footprint and TripCount with
// enumeration on random domains.
func TestFootprintAndTripCount(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	n := 1500
	if testing.Short() {
		n = 200
	}
	for it := range n {
		d := genDomain(r)
		a := genAccess(r, d, 0)
		params := map[string]int64{"n": r.Int64N(5), "var0": 1 << 40, "var1": 4096}
		pts := points(t, d, params)
		cnt, err := d.TripCount(params)
		if err != nil {
			t.Fatalf("case %d: %v", it, err)
		}
		if cnt != int64(len(pts)) {
			t.Fatalf("case %d: %+v: TripCount = %d, enumeration %d", it, d, cnt, len(pts))
		}
		fp, err := Footprint(d, a, params)
		if err != nil {
			t.Fatalf("case %d: %v", it, err)
		}
		want := Range{}
		for k, p := range pts {
			x := addrAt(t, d, a, p, params)
			if k == 0 || x < want.Lo {
				want.Lo = x
			}
			if k == 0 || x+a.Size > want.Hi {
				want.Hi = x + a.Size
			}
		}
		if fp != want {
			t.Fatalf("case %d: %+v %v: Footprint = %v, enumeration %v", it, d, a, fp, want)
		}
	}
}

// byteSource reads small integers from fuzz input, then zeros.
type byteSource []byte

func (b *byteSource) next(lo, hi int64) int64 {
	var v byte
	if len(*b) > 0 {
		v, *b = (*b)[0], (*b)[1:]
	}
	return lo + int64(v)%(hi-lo+1)
}

// fuzzNest decodes a small nest, two accesses and a level from data.
func fuzzNest(data []byte) (Domain, Access, Access, int) {
	src := byteSource(data)
	var d Domain
	nl := int(src.next(1, 3))
	for l := range nl {
		lv := Level{Index: indexNames[l], Lower: Const(src.next(-3, 3)), Upper: Const(src.next(-1, 5)), Step: src.next(0, 3)}
		if l > 0 {
			// Optionally make the bounds triangular in an outer index.
			o := Var(indexNames[src.next(0, int64(l-1))])
			lv.Lower = lv.Lower.Add(o.Scale(src.next(-1, 2)))
			lv.Upper = lv.Upper.Add(o.Scale(src.next(-1, 2)))
		}
		d.Levels = append(d.Levels, lv)
	}
	access := func(site string) Access {
		a := Access{Site: site, Base: Const(0), Offset: Const(src.next(-8, 8)), Size: src.next(1, 8)}
		for _, lv := range d.Levels {
			a.Offset = a.Offset.Add(Var(lv.Index).Scale(src.next(-9, 9)))
		}
		if src.next(0, 1) == 1 {
			a.Kind = Write
		}
		return a
	}
	a, b := access("a"), access("b")
	return d, a, b, int(src.next(0, int64(nl-1)))
}

// FuzzDepends compares Depends with enumeration on nests decoded from the
// fuzz input.
func FuzzDepends(f *testing.F) {
	f.Add([]byte{2, 0, 4, 0, 0, 3, 0, 1, 1, 8, 8, 7, 1, 1, 8, 9, 9, 8, 0, 0})
	f.Add([]byte{1, 3, 5, 2, 9, 1, 4, 1, 4, 7, 2, 0, 0})
	f.Add([]byte{3, 1, 4, 0, 2, 5, 1, 0, 1, 1, 3, 3, 0, 0, 2, 1, 5, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 1, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		d, a, b, level := fuzzNest(data)
		w, err := Depends(d, a, b, level, Options{})
		if err != nil {
			t.Fatalf("%+v %v %v level %d: %v", d, a, b, level, err)
		}
		want := bruteDepends(t, d, a, b, level, nil)
		if (w != nil) != want {
			t.Fatalf("%+v\n%v\n%v\nlevel %d: Depends=%v, enumeration %v", d, a, b, level, w, want)
		}
		if w != nil {
			checkWitness(t, d, a, b, level, nil, w)
		}
	})
}

// TestDependsUnboundedParams leaves n unbounded above and uses row strides
// as compiled code does; no enumeration can decide these, so it checks
// soundness (every dependence enumeration finds for small n is reported)
// and that the exact test stays within budget.
func TestDependsUnboundedParams(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	n := 300
	if testing.Short() {
		n = 50
	}
	for it := range n {
		d := genDomain(r)
		d.Assume = []Constraint{GE(Var("n"), Const(0))}
		a, b := genAccess(r, d, 0), genAccess(r, d, 1)
		stride := []int64{1, 8, 64, 520}[r.IntN(4)]
		a.Offset, b.Offset = a.Offset.Scale(stride), b.Offset.Scale(stride)
		level := r.IntN(len(d.Levels))
		w, err := Depends(d, a, b, level, Options{})
		if err != nil {
			t.Fatalf("case %d: %v", it, err)
		}
		if w != nil {
			continue
		}
		for nv := int64(0); nv <= 6; nv++ {
			for dv := int64(-4); dv <= 4; dv++ {
				if bruteDepends(t, d, a, b, level, map[string]int64{"n": nv, "var0": 0, "var1": dv}) {
					t.Fatalf("case %d: independent, but n=%d var1-var0=%d conflict\n%+v\n%v\n%v", it, nv, dv, d, a, b)
				}
			}
		}
	}
}
