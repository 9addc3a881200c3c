package float80

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// modelTrans runs the transcendental and constant ops of a case.
func modelTrans(e *Env, c refCase, r *refResult, c2 *bool) bool {
	switch c.op {
	case "f2xm1":
		r.r1 = e.F2xm1(c.a)
	case "fyl2x":
		r.r1 = e.Yl2x(c.a, c.b)
	case "fyl2xp1":
		r.r1 = e.Yl2xp1(c.a, c.b)
	case "fpatan":
		r.r1 = e.Patan(c.a, c.b)
	case "fsin":
		r.r1, *c2 = e.Sin(c.a)
	case "fcos":
		r.r1, *c2 = e.Cos(c.a)
	case "fsincos":
		var s, co F80
		s, co, *c2 = e.SinCos(c.a)
		r.r1, r.r2 = co, s
		if *c2 {
			r.r1, r.r2 = c.a, Indefinite()
		}
	case "fptan":
		var t, p F80
		t, p, *c2 = e.Tan(c.a)
		r.r1, r.r2 = p, t
		if *c2 {
			r.r1, r.r2 = c.a, Indefinite()
		}
	case "fldpi":
		r.r1 = e.Const(ConstPi)
	case "fldl2e":
		r.r1 = e.Const(ConstL2E)
	case "fldl2t":
		r.r1 = e.Const(ConstL2T)
	case "fldlg2":
		r.r1 = e.Const(ConstLG2)
	case "fldln2":
		r.r1 = e.Const(ConstLN2)
	default:
		return false
	}
	return true
}

// transArg draws an operand in the domain an instruction defines.
func (g gen) transArg(op string) (a, b F80) {
	inRange := func(maxExp int) F80 { // |v| < 2^(maxExp+1)
		return F80{g.mant(), uint16(g.r.IntN(2))<<15 | uint16(expBias+maxExp-g.r.IntN(70))}
	}
	if g.r.IntN(10) == 0 {
		return g.f80(), g.f80() // special values, NaNs, anything
	}
	switch op {
	case "f2xm1":
		return inRange(-1), F80{}
	case "fyl2x":
		x := Abs(g.f80())
		if g.r.IntN(3) == 0 {
			x = F80{intBit + uint64(g.r.IntN(1<<20))<<uint(g.r.IntN(44)), expBias - uint16(g.r.IntN(2))}
		}
		return x, g.f80()
	case "fyl2xp1":
		return inRange(-3), g.f80()
	case "fpatan":
		if g.r.IntN(4) == 0 { // tiny exact quotient y/x
			x := F80{intBit, uint16(g.r.IntN(2))<<15 | uint16(expBias-10+g.r.IntN(20))}
			return x, F80{g.mant(), uint16(g.r.IntN(2))<<15 | uint16(expBias-60-g.r.IntN(16000))}
		}
		return g.f80(), g.near(g.f80())
	}
	// trigonometric: mostly moderate arguments, some large, some close to
	// a multiple of π/2 where the 66-bit π of the reduction shows.
	switch g.r.IntN(5) {
	case 4: // tiny: the first series term falls below the working precision
		return F80{g.mant(), uint16(g.r.IntN(2))<<15 | uint16(expBias-60-g.r.IntN(16000))}, F80{}
	case 0:
		var e Env
		pi := e.Const(ConstPi)
		n := FromInt64(int64(g.r.IntN(1 << uint(1+g.r.IntN(30)))))
		x := e.Mul(n, F80{pi.Mant, pi.SignExp - 1})
		if x.kind() == kNormal {
			x.Mant += uint64(g.r.IntN(9)) - 4
		}
		return x, F80{}
	case 1:
		return F80{g.mant(), uint16(g.r.IntN(2))<<15 | uint16(expBias+g.r.IntN(64))}, F80{}
	}
	return inRange(3), F80{}
}

// transOps are the transcendental instructions compared with the reference.
var transOps = []string{"f2xm1", "fyl2x", "fyl2xp1", "fpatan", "fsin", "fcos", "fsincos", "fptan"}

// recordedPerOp is the number of operands per op in the recorded reference.
const recordedPerOp = 100

// transCases draws n operands per transcendental op, each run under every
// rounding control; the same seed gives the same cases on every host.
func transCases(n int) []refCase {
	g := gen{rand.New(rand.NewPCG(7, 8))}
	var cases []refCase
	for _, op := range transOps {
		for i := 0; i < n; i++ {
			a, b := g.transArg(op)
			for _, cw := range cws(0, 3) {
				cases = append(cases, refCase{op, cw, a, b})
			}
		}
	}
	return cases
}

// TestDifferentialTranscendental runs the transcendental instructions on the
// host FPU and compares. Where the host is the reference CPU (an Intel x87:
// see doc.go), the whole reference rule applies (compareTrans, strict);
// elsewhere (AMD's x87 rounds some results the other way and sets C1
// differently) only the documented bound does: results within 1 ulp.
//
// GXBIT_X87_RECORD=FILE writes the cases and the host's answers to FILE in
// the format of testdata/x87_reference.txt: run it on the reference CPU to
// record that file anew.
func TestDifferentialTranscendental(t *testing.T) {
	bin := buildRef(t)
	n := 400
	if testing.Short() {
		n = 60
	}
	record := os.Getenv("GXBIT_X87_RECORD")
	if record != "" {
		n = recordedPerOp
	}
	cases := transCases(n)
	want := runRef(t, bin, cases)
	if path := record; path != "" {
		if err := writeTransRecord(path, cases, want); err != nil {
			t.Fatal(err)
		}
	}
	vendor := hostVendor()
	strict := vendor == referenceVendor
	if !strict {
		t.Logf("host FPU is %q, not the reference %q: comparing results within 1 ulp only", vendor, referenceVendor)
	}
	compareTrans(t, cases, want, strict)
}

// TestTranscendentalReference compares the package with answers recorded on
// the reference CPU (testdata/x87_reference.txt), under the full reference
// rule, on any host.
func TestTranscendentalReference(t *testing.T) {
	cases, want, err := readTransRecord(filepath.Join("testdata", "x87_reference.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 1000 {
		t.Fatalf("x87_reference.txt holds %d cases; expected the recorded set", len(cases))
	}
	compareTrans(t, cases, want, true)
}

// compareTrans checks the package's results for cases against want, the
// answers of an x87. Every result must be equal or 1 ulp away (float80 rounds
// correctly; the x87 is not always correctly rounded). With strict (want
// comes from the reference CPU), the status word must match too, except for
// C1 on at most a tenth of the equal results and knownFlagDiff.
func compareTrans(t *testing.T, cases []refCase, want []refResult, strict bool) {
	t.Helper()
	type tally struct{ n, diff, flagDiff, c1Diff, bad, undefined int }
	per := map[string]*tally{}
	hist := map[string]map[int64]int{}
	for i, c := range cases {
		tl := per[c.op]
		if tl == nil {
			tl = &tally{}
			per[c.op], hist[c.op] = tl, map[int64]int{}
		}
		tl.n++
		if outsideDomain(c) {
			tl.undefined++
			continue
		}
		got := model(c)
		w := want[i]
		if got.r1 != w.r1 || got.r2 != w.r2 {
			tl.diff++
			d1, d2 := ulps(got.r1, w.r1), ulps(got.r2, w.r2)
			d := max(d1, d2)
			if d1 < 0 || d2 < 0 {
				d = -1
			}
			hist[c.op][d]++
			if d < 0 || d > 1 {
				if tl.bad < 6 {
					t.Errorf("%v\n  got  %v\n  want %v", c, got, w)
				}
				tl.bad++
			}
			continue
		}
		if (got.sw ^ w.sw) == maskC1 {
			tl.c1Diff++
			continue
		}
		if strict && (got.sw^w.sw)&(maskExc|maskCC|maskC1) != 0 && !knownFlagDiff(c, got, w) {
			if tl.flagDiff < 6 {
				t.Errorf("flags: %v\n  got  %v\n  want %v", c, got, w)
			}
			tl.flagDiff++
		}
	}
	for _, op := range transOps {
		tl := per[op]
		if tl == nil {
			continue
		}
		if strict && tl.c1Diff*10 > tl.n {
			t.Errorf("%s: C1 differs from the reference on %d of %d equal results (more than 10%%)", op, tl.c1Diff, tl.n)
		}
		t.Logf("%-8s %5d cases (%d outside the defined domain skipped): %d results differ (ulps→count %v), %d flag and %d C1-only mismatches on equal results",
			op, tl.n, tl.undefined, tl.diff, hist[op], tl.flagDiff, tl.c1Diff)
	}
}

func TestDifferentialConstants(t *testing.T) {
	bin := buildRef(t)
	var cases []refCase
	for _, op := range []string{"fldpi", "fldl2e", "fldl2t", "fldlg2", "fldln2"} {
		for _, cw := range cws(0, 2, 3) {
			cases = append(cases, refCase{op: op, cw: cw})
		}
	}
	want := runRef(t, bin, cases)
	for i, c := range cases {
		if got := model(c); got.r1 != want[i].r1 {
			t.Errorf("%v: got %v, want %v", c, got, want[i])
		}
	}
}

// outsideDomain reports whether the x87 leaves the case's result undefined
// and the package does not reproduce it: FYL2XP1 for 1 - sqrt(2)/2 <= |x| <
// 1, where the hardware's approximation is outside its design range.
func outsideDomain(c refCase) bool {
	k := c.a.kind()
	if c.op != "fyl2xp1" || (k != kNormal && k != kDenormal) {
		return false
	}
	v, _ := toBig(Abs(c.a)).Float64()
	return v >= 1-math.Sqrt2/2 && v < 1
}

// knownFlagDiff allows the one flag difference seen between the host FPU and
// the package on equal results: FYL2X with x a power of two, and FYL2XP1 with
// 1+x one, have exact results, but the hardware sets C1 as if it had rounded
// an inexact internal value, which the package does not model.
func knownFlagDiff(c refCase, got, want refResult) bool {
	switch c.op {
	case "fyl2x":
		return c.a.kind() == kNormal && c.a.Mant == intBit && (got.sw^want.sw) == maskC1
	case "fyl2xp1":
		s, _ := toBig(c.a).Float64()
		s++
		_, e := math.Frexp(s)
		return math.Ldexp(1, e-1) == s && (got.sw^want.sw) == maskC1
	}
	return false
}
