package polyhedral

import (
	"strings"
	"testing"
)

func mustExpr(t testing.TB, s string) Expr {
	t.Helper()
	e, err := ParseExpr(s)
	if err != nil {
		t.Fatalf("ParseExpr(%q): %v", s, err)
	}
	return e
}

// lv builds a unit-step level from bound texts.
func lv(t testing.TB, idx, lo, hi string) Level {
	return Level{Index: idx, Lower: mustExpr(t, lo), Upper: mustExpr(t, hi)}
}

// acc builds an access "r var0 + 8*i" / "w ..." of 8 bytes; the base is the
// expression's first parameter named var*.
func acc(t testing.TB, site, kind, addr string) Access {
	e := mustExpr(t, addr)
	a := Access{Site: site, Offset: e, Size: 8}
	for _, v := range e.Vars() {
		if strings.HasPrefix(v, "var") {
			a.Base = Var(v)
			a.Offset = e.Subst(v, Const(0))
		}
	}
	if kind == "w" {
		a.Kind = Write
	}
	return a
}

func TestAnalyzeNamed(t *testing.T) {
	assumeN := []Constraint{GE(Var("bound0"), Const(1)), GE(Const(64), Var("bound0"))}
	sq := func(idx ...string) []Level {
		var ls []Level
		for _, i := range idx {
			ls = append(ls, lv(t, i, "0", "bound0 - 1"))
		}
		return ls
	}
	tests := []struct {
		name string
		nest Nest
		opts Options
		want string // verdict kinds, one letter per level: P, R, S
	}{
		{
			// C[i][j] += A[i][k] * B[k][j], rows of 64 doubles.
			name: "matmul",
			nest: Nest{
				Domain: Domain{Levels: sq("i", "j", "k"), Assume: assumeN},
				Accesses: []Access{
					acc(t, "ldA", "r", "var0 + 512*i + 8*k"),
					acc(t, "ldB", "r", "var1 + 512*k + 8*j"),
					acc(t, "ldC", "r", "var2 + 512*i + 8*j"),
					acc(t, "stC", "w", "var2 + 512*i + 8*j"),
				},
				Reductions: []Reduction{{Read: 2, Write: 3, Op: Sum}},
			},
			opts: Options{DistinctBases: true},
			want: "PPR",
		},
		{
			// Without bound0 <= 64 a row may run into the next one, so i
			// carries a dependence for some parameter values; j does not
			// (within one row, distinct j are distinct bytes).
			name: "matmul unbounded rows",
			nest: Nest{
				Domain: Domain{Levels: sq("i", "j", "k"), Assume: assumeN[:1]},
				Accesses: []Access{
					acc(t, "ldC", "r", "var2 + 512*i + 8*j"),
					acc(t, "stC", "w", "var2 + 512*i + 8*j"),
				},
				Reductions: []Reduction{{Read: 0, Write: 1, Op: Sum}},
			},
			want: "SPR",
		},
		{
			// A[i][j] = (A[i-1][j] + A[i+1][j] + A[i][j-1] + A[i][j+1]) / 4.
			name: "gauss-seidel in place",
			nest: Nest{
				Domain: Domain{Levels: []Level{lv(t, "i", "1", "bound0 - 2"), lv(t, "j", "1", "bound0 - 2")}, Assume: assumeN},
				Accesses: []Access{
					acc(t, "up", "r", "var0 + 512*i + 8*j - 512"),
					acc(t, "down", "r", "var0 + 512*i + 8*j + 512"),
					acc(t, "left", "r", "var0 + 512*i + 8*j - 8"),
					acc(t, "right", "r", "var0 + 512*i + 8*j + 8"),
					acc(t, "st", "w", "var0 + 512*i + 8*j"),
				},
			},
			want: "SS",
		},
		{
			name: "jacobi stencil, separate arrays",
			nest: Nest{
				Domain: Domain{Levels: []Level{lv(t, "i", "1", "bound0 - 2"), lv(t, "j", "1", "bound0 - 2")}, Assume: assumeN},
				Accesses: []Access{
					acc(t, "up", "r", "var0 + 512*i + 8*j - 512"),
					acc(t, "down", "r", "var0 + 512*i + 8*j + 512"),
					acc(t, "left", "r", "var0 + 512*i + 8*j - 8"),
					acc(t, "right", "r", "var0 + 512*i + 8*j + 8"),
					acc(t, "st", "w", "var1 + 512*i + 8*j"),
				},
			},
			opts: Options{DistinctBases: true},
			want: "PP",
		},
		{
			// The same stencil with symbolic bases and no aliasing promise:
			// the arrays may overlap, so the answer must be sequential.
			name: "jacobi stencil, may alias",
			nest: Nest{
				Domain: Domain{Levels: []Level{lv(t, "i", "1", "bound0 - 2"), lv(t, "j", "1", "bound0 - 2")}, Assume: assumeN},
				Accesses: []Access{
					acc(t, "up", "r", "var0 + 512*i + 8*j - 512"),
					acc(t, "st", "w", "var1 + 512*i + 8*j"),
				},
			},
			want: "SS",
		},
		{
			// Concrete, far-apart bases: proven independent without the promise.
			name: "jacobi stencil, concrete bases",
			nest: Nest{
				Domain: Domain{Levels: []Level{lv(t, "i", "1", "bound0 - 2"), lv(t, "j", "1", "bound0 - 2")}, Assume: assumeN},
				Accesses: []Access{
					acc(t, "up", "r", "var0 + 512*i + 8*j - 512"),
					acc(t, "st", "w", "var1 + 512*i + 8*j"),
				},
			},
			opts: Options{Params: map[string]int64{"bound0": 64, "var0": 0x7ffd_0000_1000, "var1": 0x7ffd_0001_1000}},
			want: "PP",
		},
		{
			// a[i] = a[i-1] + a[i].
			name: "prefix sum",
			nest: Nest{
				Domain: Domain{Levels: []Level{lv(t, "i", "1", "bound0 - 1")}, Assume: assumeN[:1]},
				Accesses: []Access{
					acc(t, "prev", "r", "var0 + 8*i - 8"),
					acc(t, "cur", "r", "var0 + 8*i"),
					acc(t, "st", "w", "var0 + 8*i"),
				},
			},
			want: "S",
		},
		{
			// B[j][i] = A[i][j].
			name: "transpose out of place",
			nest: Nest{
				Domain: Domain{Levels: sq("i", "j"), Assume: assumeN},
				Accesses: []Access{
					acc(t, "ld", "r", "var0 + 512*i + 8*j"),
					acc(t, "st", "w", "var1 + 512*j + 8*i"),
				},
			},
			opts: Options{DistinctBases: true},
			want: "PP",
		},
		{
			// for j < i: swap A[i][j] and A[j][i]; every pair is touched once.
			name: "transpose in place, triangular",
			nest: Nest{
				Domain: Domain{Levels: []Level{lv(t, "i", "0", "bound0 - 1"), lv(t, "j", "0", "i - 1")}, Assume: assumeN},
				Accesses: []Access{
					acc(t, "ld1", "r", "var0 + 512*i + 8*j"),
					acc(t, "ld2", "r", "var0 + 512*j + 8*i"),
					acc(t, "st1", "w", "var0 + 512*i + 8*j"),
					acc(t, "st2", "w", "var0 + 512*j + 8*i"),
				},
			},
			want: "PP",
		},
		{
			// for i = 0; i < n; i += 2: a[i] = a[i+1]. Writes are even,
			// reads odd: no iteration reads what another writes.
			name: "strided, stride 2",
			nest: Nest{
				Domain: Domain{Levels: []Level{{Index: "i", Lower: Const(0), Upper: mustExpr(t, "bound0 - 1"), Step: 2}}},
				Accesses: []Access{
					acc(t, "ld", "r", "var0 + 8*i + 8"),
					acc(t, "st", "w", "var0 + 8*i"),
				},
			},
			want: "P",
		},
		{
			name: "strided, stride 1",
			nest: Nest{
				Domain: Domain{Levels: []Level{lv(t, "i", "0", "bound0 - 1")}},
				Accesses: []Access{
					acc(t, "ld", "r", "var0 + 8*i + 8"),
					acc(t, "st", "w", "var0 + 8*i"),
				},
			},
			want: "S",
		},
		{
			// for i, for j <= i: L[i][j] *= 2.
			name: "triangular update",
			nest: Nest{
				Domain: Domain{Levels: []Level{lv(t, "i", "0", "bound0 - 1"), lv(t, "j", "0", "i")}, Assume: assumeN},
				Accesses: []Access{
					acc(t, "ld", "r", "var0 + 512*i + 8*j"),
					acc(t, "st", "w", "var0 + 512*i + 8*j"),
				},
			},
			want: "PP",
		},
		{
			// Forward substitution: for i, for j < i: x[i] -= L[i][j]*x[j].
			name: "forward substitution",
			nest: Nest{
				Domain: Domain{Levels: []Level{lv(t, "i", "0", "bound0 - 1"), lv(t, "j", "0", "i - 1")}, Assume: assumeN},
				Accesses: []Access{
					acc(t, "ldL", "r", "var0 + 512*i + 8*j"),
					acc(t, "ldxj", "r", "var1 + 8*j"),
					acc(t, "ldxi", "r", "var1 + 8*i"),
					acc(t, "stxi", "w", "var1 + 8*i"),
				},
				Reductions: []Reduction{{Read: 2, Write: 3, Op: Sum}},
			},
			opts: Options{DistinctBases: true},
			want: "SR",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vs, err := Analyze(tc.nest, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for _, v := range vs {
				got.WriteByte(strings.ToUpper(v.Kind.String())[0])
				t.Logf("%s: %s: %s", v.Index, v.Kind, v.Reason)
				if v.Kind == LevelSequential && v.Conflict.Witness != nil {
					a, b := tc.nest.Accesses[v.Conflict.A], tc.nest.Accesses[v.Conflict.B]
					params := map[string]int64{}
					for k, x := range tc.opts.Params {
						params[k] = x
					}
					checkWitness(t, tc.nest.Domain, a, b, v.Level, params, v.Conflict.Witness)
				}
			}
			if got.String() != tc.want {
				t.Errorf("verdicts %s, want %s", got.String(), tc.want)
			}
		})
	}
}

func TestAnalyzeRejectsBadInput(t *testing.T) {
	d := Domain{Levels: []Level{lv(t, "i", "0", "9")}}
	rd := acc(t, "ld", "r", "var0 + 8*i")
	wr := acc(t, "st", "w", "var0 + 8*i + 8")
	tests := []struct {
		name string
		nest Nest
	}{
		{"zero size", Nest{Domain: d, Accesses: []Access{{Site: "x", Size: 0}}}},
		{"inner index in bound", Nest{Domain: Domain{Levels: []Level{lv(t, "i", "0", "j"), lv(t, "j", "0", "3")}}}},
		{"repeated index", Nest{Domain: Domain{Levels: []Level{lv(t, "i", "0", "3"), lv(t, "i", "0", "3")}}}},
		{"negative step", Nest{Domain: Domain{Levels: []Level{{Index: "i", Upper: Const(3), Step: -1}}}}},
		{"reduction on different bytes", Nest{Domain: d, Accesses: []Access{rd, wr}, Reductions: []Reduction{{0, 1, Sum}}}},
		{"reduction out of range", Nest{Domain: d, Accesses: []Access{rd}, Reductions: []Reduction{{0, 3, Sum}}}},
		{"reduction without operator", Nest{Domain: d, Accesses: []Access{rd, rd}, Reductions: []Reduction{{0, 1, 0}}}},
		{"overflowed bound", Nest{Domain: Domain{Levels: []Level{{Index: "i", Upper: Const(maxInt64).AddConst(1)}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Analyze(tc.nest, Options{}); err == nil {
				t.Fatal("Analyze accepted bad input")
			}
		})
	}
}
