package polyhedral

import (
	"errors"
	"math/rand/v2"
	"testing"
)

func TestExprPrintParse(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"2*i + j + 8*bound0 + 16", "2*i + j + 8*bound0 + 16"},
		{"16 + bound0*8 + j + i*2", "2*i + j + 8*bound0 + 16"},
		{"0", "0"},
		{"-i", "-i"},
		{"i - i", "0"},
		{"  -3*k-2*j +  1 ", "-2*j - 3*k + 1"},
		{"var10 + var9 + var0", "var0 + var9 + var10"},
		{"-9223372036854775808", "-9223372036854775808"},
		{"9223372036854775807*x - 9223372036854775808", "9223372036854775807*x - 9223372036854775808"},
		{"-9223372036854775808*x", "-9223372036854775808*x"},
		{"x - 9223372036854775808*y", "x - 9223372036854775808*y"},
		{"i + 0*j", "i"},
		{"_a1 + B", "B + _a1"},
	}
	for _, tc := range tests {
		e, err := ParseExpr(tc.in)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", tc.in, err)
			continue
		}
		if got := e.String(); got != tc.want {
			t.Errorf("ParseExpr(%q) prints %q, want %q", tc.in, got, tc.want)
		}
		back, err := ParseExpr(e.String())
		if err != nil || !back.Equal(e) {
			t.Errorf("round trip of %q: %v, %v", tc.in, back, err)
		}
	}
}

func TestExprParseErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int
	}{
		{"", 0},
		{"i +", 3},
		{"2*", 2},
		{"i*j", 2},
		{"i j", 2},
		{"3 3", 2},
		{"9223372036854775808", 0},
		{"-9223372036854775809", 1},
		{"9223372036854775807 + 1", 22},
		{"9223372036854775807*i + i", 24},
		{"i + (j)", 4},
		{"--i", 1},
		{"i\x00", 1},
	}
	for _, tc := range tests {
		_, err := ParseExpr(tc.in)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("ParseExpr(%q) = %v, want a *SyntaxError", tc.in, err)
			continue
		}
		if se.Offset != tc.offset {
			t.Errorf("ParseExpr(%q): offset %d, want %d (%v)", tc.in, se.Offset, tc.offset, err)
		}
	}
}

func TestExprArithmetic(t *testing.T) {
	e := mustExpr(t, "2*i + j + 3")
	f := mustExpr(t, "j - k + 1")
	tests := []struct {
		name string
		got  Expr
		want string
	}{
		{"add", e.Add(f), "2*i + 2*j - k + 4"},
		{"sub", e.Sub(f), "2*i + k + 2"},
		{"scale", e.Scale(-3), "-6*i - 3*j - 9"},
		{"scale 0", e.Scale(0), "0"},
		{"subst", e.Subst("j", f), "2*i + j - k + 4"},
		{"subst absent", e.Subst("z", f), "2*i + j + 3"},
		{"new", NewExpr(5, Term{"j", 2}, Term{"i", 1}, Term{"j", -2}), "i + 5"},
		{"overflow", Const(maxInt64).AddConst(1), "<overflow>"},
		{"overflow coef", Var("i").Scale(minInt64).Scale(-1), "<overflow>"},
		{"sticky", Const(maxInt64).AddConst(1).AddConst(-1), "<overflow>"},
	}
	for _, tc := range tests {
		if got := tc.got.String(); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
		if (tc.want == "<overflow>") != errors.Is(tc.got.Err(), ErrOverflow) {
			t.Errorf("%s: Err() = %v", tc.name, tc.got.Err())
		}
	}
	if e.Coef("i") != 2 || e.Coef("k") != 0 || e.Constant() != 3 || e.IsConst() || !Const(4).IsConst() {
		t.Errorf("accessors of %s", e)
	}
}

func TestExprEval(t *testing.T) {
	e := mustExpr(t, "2*i + j - 7")
	if v, err := e.Eval(map[string]int64{"i": 3, "j": 4}); err != nil || v != 3 {
		t.Errorf("Eval = %d, %v; want 3", v, err)
	}
	if _, err := e.Eval(map[string]int64{"i": 3}); !errors.Is(err, ErrUnbound) {
		t.Errorf("missing j: %v, want ErrUnbound", err)
	}
	if _, err := e.Eval(map[string]int64{"i": 1 << 62, "j": 0}); !errors.Is(err, ErrOverflow) {
		t.Errorf("2*2^62: %v, want ErrOverflow", err)
	}
	if _, err := Var("i").Eval(map[string]int64{"i": minInt64}); err != nil {
		t.Errorf("i = MinInt64: %v", err)
	}
}

// TestExprAlgebra checks the operations against evaluation on random
// expressions and points.
func TestExprAlgebra(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	names := []string{"i", "j", "k", "bound0", "var0"}
	rnd := func() Expr {
		e := Const(r.Int64N(201) - 100)
		for _, n := range names {
			if r.IntN(2) == 0 {
				e = e.Add(Var(n).Scale(r.Int64N(21) - 10))
			}
		}
		return e
	}
	for range 2000 {
		e, f := rnd(), rnd()
		env := map[string]int64{}
		for _, n := range names {
			env[n] = r.Int64N(2001) - 1000
		}
		ev := func(x Expr) int64 {
			v, err := x.Eval(env)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		k := r.Int64N(21) - 10
		if ev(e.Add(f)) != ev(e)+ev(f) || ev(e.Sub(f)) != ev(e)-ev(f) || ev(e.Scale(k)) != k*ev(e) {
			t.Fatalf("arithmetic of %s and %s", e, f)
		}
		sub := e.Subst("j", f)
		env2 := map[string]int64{}
		for n, v := range env {
			env2[n] = v
		}
		env2["j"] = ev(f)
		if v, _ := e.Eval(env2); v != ev(sub) {
			t.Fatalf("Subst(j, %s) of %s = %s", f, e, sub)
		}
		back, err := ParseExpr(e.String())
		if err != nil || !back.Equal(e) {
			t.Fatalf("round trip of %s: %s, %v", e, back, err)
		}
	}
}

// FuzzParseExpr checks that the parser never panics and that whatever it
// accepts prints canonically and reads back to the same expression.
func FuzzParseExpr(f *testing.F) {
	for _, s := range []string{"2*i + j + 8*bound0 + 16", "-i", "0", "x - 9223372036854775808*y", "i*3 - 4", "a+b-c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseExpr(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(s) {
				t.Fatalf("ParseExpr(%q): bad error %v", s, err)
			}
			return
		}
		p := e.String()
		back, err := ParseExpr(p)
		if err != nil || !back.Equal(e) {
			t.Fatalf("ParseExpr(%q) prints %q, which reads back as %v, %v", s, p, back, err)
		}
		if back.String() != p {
			t.Fatalf("printing is not canonical: %q then %q", p, back.String())
		}
	})
}
