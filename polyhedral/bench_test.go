package polyhedral

import "testing"

// matmulNest is C[i][j] += A[i][k] * B[k][j] over n x n doubles with rows of
// n elements at concrete, distinct base addresses.
func matmulNest(t testing.TB, n int64) (Nest, Options) {
	row := 8 * n
	ix := func(base string, a, b string) string {
		return base + " + " + itoa(row) + "*" + a + " + 8*" + b
	}
	nest := Nest{
		Domain: Domain{Levels: []Level{lv(t, "i", "0", "bound0 - 1"), lv(t, "j", "0", "bound0 - 1"), lv(t, "k", "0", "bound0 - 1")}},
		Accesses: []Access{
			acc(t, "ldA", "r", ix("var0", "i", "k")),
			acc(t, "ldB", "r", ix("var1", "k", "j")),
			acc(t, "ldC", "r", ix("var2", "i", "j")),
			acc(t, "stC", "w", ix("var2", "i", "j")),
		},
		Reductions: []Reduction{{Read: 2, Write: 3, Op: Sum}},
	}
	size := 8 * n * n
	opts := Options{Params: map[string]int64{"bound0": n, "var0": 0x7f00_0000_0000, "var1": 0x7f00_0000_0000 + size, "var2": 0x7f00_0000_0000 + 2*size}}
	return nest, opts
}

func itoa(v int64) string { return Const(v).String() }

func TestAnalyzeConcreteMatmul(t *testing.T) {
	for _, n := range []int64{3, 100, 1000, 4097} {
		nest, opts := matmulNest(t, n)
		vs, err := Analyze(nest, opts)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, v := range vs {
			got += v.Kind.String()[:1]
		}
		if got != "ppr" {
			t.Errorf("n=%d: verdicts %s, want ppr (%v)", n, got, vs)
		}
	}
}

func BenchmarkAnalyze(b *testing.B) {
	b.Run("matmul/concrete", func(b *testing.B) {
		nest, opts := matmulNest(b, 1000)
		for b.Loop() {
			if _, err := Analyze(nest, opts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("matmul/symbolic", func(b *testing.B) {
		nest, _ := matmulNest(b, 64)
		nest.Domain.Assume = []Constraint{GE(Var("bound0"), Const(1)), GE(Const(64), Var("bound0"))}
		for b.Loop() {
			if _, err := Analyze(nest, Options{DistinctBases: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkFootprint(b *testing.B) {
	nest, opts := matmulNest(b, 1000)
	nest.Domain.Levels[1].Upper = Var("i") // triangular
	for b.Loop() {
		for _, a := range nest.Accesses {
			if _, err := Footprint(nest.Domain, a, opts.Params); err != nil {
				b.Fatal(err)
			}
		}
	}
}
