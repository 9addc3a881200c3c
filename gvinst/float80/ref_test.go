package float80

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// refCase is one instruction run on the host FPU and on the model.
type refCase struct {
	op   string
	cw   uint16
	a, b F80
}

// refResult is what an instruction produced: up to two register or memory
// results and the status word (TOP masked out).
type refResult struct {
	r1, r2 F80
	sw     uint16
}

func (c refCase) String() string {
	return fmt.Sprintf("%s cw=%04x a=%04x:%016x b=%04x:%016x", c.op, c.cw, c.a.SignExp, c.a.Mant, c.b.SignExp, c.b.Mant)
}

func (r refResult) String() string {
	return fmt.Sprintf("%04x:%016x %04x:%016x sw=%04x", r.r1.SignExp, r.r1.Mant, r.r2.SignExp, r.r2.Mant, r.sw)
}

// buildRef compiles testdata/x87ref.c with gcc, skipping the test when the
// host cannot run x87 code or has no C compiler. GXBIT_X87REF names an
// x87ref built already (to record the reference on a machine without gcc).
func buildRef(t *testing.T) string {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skipf("host is %s: the x87 reference needs amd64", runtime.GOARCH)
	}
	if bin := os.Getenv("GXBIT_X87REF"); bin != "" {
		return bin
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found on PATH: cannot build the x87 reference program")
	}
	bin := filepath.Join(t.TempDir(), "x87ref")
	out, err := exec.Command(gcc, "-O1", "-o", bin, filepath.Join("testdata", "x87ref.c")).CombinedOutput()
	if err != nil {
		t.Fatalf("building x87ref: %v\n%s", err, out)
	}
	return bin
}

// runRef runs the cases on the host FPU.
func runRef(t *testing.T, bin string, cases []refCase) []refResult {
	t.Helper()
	var in bytes.Buffer
	for _, c := range cases {
		fmt.Fprintf(&in, "%s %x %x:%x %x:%x\n", c.op, c.cw, c.a.SignExp, c.a.Mant, c.b.SignExp, c.b.Mant)
	}
	cmd := exec.Command(bin)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("x87ref: %v\n%s", err, stderr.String())
	}
	res := make([]refResult, 0, len(cases))
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r refResult
		if _, err := fmt.Sscanf(sc.Text(), "%x:%x %x:%x %x", &r.r1.SignExp, &r.r1.Mant, &r.r2.SignExp, &r.r2.Mant, &r.sw); err != nil {
			t.Fatalf("x87ref output %q: %v", sc.Text(), err)
		}
		r.sw &^= 0x3800
		res = append(res, r)
	}
	if len(res) != len(cases) {
		t.Fatalf("x87ref answered %d of %d cases", len(res), len(cases))
	}
	return res
}

// swOf builds a status word from flags and condition codes.
func swOf(f Flags, c0, c2, c3 bool) uint16 {
	sw := uint16(f & 0x3F)
	if f&FlagRoundedUp != 0 {
		sw |= 0x200
	}
	if c0 {
		sw |= 0x100
	}
	if c2 {
		sw |= 0x400
	}
	if c3 {
		sw |= 0x4000
	}
	return sw
}

// model runs a case on the package.
func model(c refCase) refResult {
	e := NewEnv(c.cw)
	var r refResult
	var c0, c2, c3 bool
	switch c.op {
	case "add":
		r.r1 = e.Add(c.a, c.b)
	case "sub":
		r.r1 = e.Sub(c.a, c.b)
	case "mul":
		r.r1 = e.Mul(c.a, c.b)
	case "div":
		r.r1 = e.Div(c.a, c.b)
	case "sqrt":
		r.r1 = e.Sqrt(c.a)
	case "prem", "prem1":
		var q uint8
		var inc bool
		if c.op == "prem" {
			r.r1, q, inc = e.Rem(c.a, c.b)
		} else {
			r.r1, q, inc = e.Rem1(c.a, c.b)
		}
		e.Flags &^= FlagRoundedUp
		if q&1 != 0 {
			e.Flags |= FlagRoundedUp
		}
		c0, c3, c2 = q&4 != 0, q&2 != 0, inc
	case "rndint":
		r.r1 = e.RoundToInt(c.a)
	case "scale":
		r.r1 = e.Scale(c.a, c.b)
	case "xtract":
		r.r2, r.r1 = e.Xtract(c.a)
	case "fcom", "fucom", "fcomi":
		o := e.Compare(c.a, c.b, c.op == "fucom")
		c0 = o == Less || o == Unordered
		c3 = o == Equal || o == Unordered
		c2 = o == Unordered
		if c.op == "fcomi" {
			r.r1.Mant = uint64(b2i(c3))<<6 | uint64(b2i(c2))<<2 | uint64(b2i(c0))
			c0, c2, c3 = false, false, false
		}
	case "fxam":
		cl, neg := Examine(c.a)
		c0, c2, c3 = cl.CC()
		if neg {
			e.Flags |= FlagRoundedUp
		}
	case "ldf":
		r.r1 = e.FromFloat32(uint32(c.a.Mant))
	case "ldd":
		r.r1 = e.FromFloat64(c.a.Mant)
	case "stf":
		r.r1.Mant = uint64(e.ToFloat32(c.a))
	case "std":
		r.r1.Mant = e.ToFloat64(c.a)
	case "fild16":
		r.r1 = FromInt64(int64(int16(c.a.Mant)))
	case "fild32":
		r.r1 = FromInt64(int64(int32(c.a.Mant)))
	case "fild64":
		r.r1 = FromInt64(int64(c.a.Mant))
	case "fist16":
		r.r1.Mant = uint64(uint16(e.ToInt16(c.a)))
	case "fist32":
		r.r1.Mant = uint64(uint32(e.ToInt32(c.a)))
	case "fist64":
		r.r1.Mant = uint64(e.ToInt64(c.a))
	case "fisttp16":
		r.r1.Mant = uint64(uint16(e.TruncInt16(c.a)))
	case "fisttp32":
		r.r1.Mant = uint64(uint32(e.TruncInt32(c.a)))
	case "fisttp64":
		r.r1.Mant = uint64(e.TruncInt64(c.a))
	default:
		if !modelTrans(&e, c, &r, &c2) {
			panic("model: unknown op " + c.op)
		}
	}
	r.sw = swOf(e.Flags, c0, c2, c3)
	return r
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// gen makes operands that exercise the interesting corners of the format.
type gen struct{ r *rand.Rand }

func (g gen) mant() uint64 {
	switch g.r.IntN(8) {
	case 0:
		return intBit
	case 1:
		return ^uint64(0)
	case 2: // a tie or near-tie at the 24-, 53- or 64-bit rounding point
		p := []uint{24, 53, 63}[g.r.IntN(3)]
		m := intBit | g.r.Uint64()&^(uint64(1)<<(64-p)-1)
		m |= uint64(1) << (63 - p)
		return m + uint64(g.r.IntN(3)) - 1
	case 3: // few significant bits
		return intBit | g.r.Uint64()&0xFFFF000000000000
	default:
		return intBit | g.r.Uint64()
	}
}

// f80 returns a random operand; supported encodings dominate.
func (g gen) f80() F80 {
	s := uint16(g.r.IntN(2)) << 15
	switch g.r.IntN(22) {
	case 0:
		return F80{g.r.Uint64(), uint16(g.r.Uint32())}
	case 20, 21: // just above or below the smallest normal
		return F80{^uint64(0) - uint64(g.r.IntN(1<<12)), s | uint16(g.r.IntN(2))}
	case 1:
		return Zero(s != 0)
	case 2:
		return Inf(s != 0)
	case 3: // quiet or signaling NaN
		m := intBit | g.r.Uint64()>>uint(g.r.IntN(64))
		if m<<1 == 0 {
			m |= 1
		}
		return F80{m, s | expMask}
	case 4: // denormal or pseudo-denormal
		return F80{g.r.Uint64() >> uint(g.r.IntN(64)), s}
	case 5: // near the bottom of the range
		return F80{g.mant(), s | uint16(1+g.r.IntN(70))}
	case 6: // near the top of the range
		return F80{g.mant(), s | uint16(expMask-1-g.r.IntN(70))}
	case 7: // small integers and halves
		return FromInt64(int64(g.r.IntN(2001) - 1000))
	case 8:
		return F80{g.mant(), s | uint16(g.r.IntN(expMask))}
	}
	return F80{g.mant(), s | uint16(expBias-70+g.r.IntN(140))}
}

// near returns an operand close to a: same value, a few ulps away, or a
// power of two apart.
func (g gen) near(a F80) F80 {
	switch g.r.IntN(5) {
	case 4: // close to one, to move a across the underflow boundary
		if g.r.IntN(2) == 0 {
			return F80{intBit + uint64(g.r.IntN(1<<12)), expBias}
		}
		return F80{^uint64(0) - uint64(g.r.IntN(1<<12)), expBias - 1}
	case 0:
		return F80{a.Mant + uint64(g.r.IntN(5)) - 2, a.SignExp ^ uint16(g.r.IntN(2))<<15}
	case 1:
		return F80{a.Mant, a.SignExp + uint16(g.r.IntN(130)) - 65}
	case 2:
		return F80{a.Mant ^ 1<<uint(g.r.IntN(64)), a.SignExp ^ 0x8000}
	}
	return g.f80()
}

// cws lists every rounding mode under each precision control.
func cws(precisions ...uint16) []uint16 {
	var out []uint16
	for _, pc := range precisions {
		for rc := uint16(0); rc < 4; rc++ {
			out = append(out, 0x037F&^0x0300|pc<<8|rc<<10)
		}
	}
	return out
}

// opSpec says how to draw cases for an op and what to compare.
type opSpec struct {
	op     string
	args   int      // number of F80 operands
	cws    []uint16 // control words to run under
	swMask uint16   // status word bits compared
	kind   string   // "f80" operands, or "i16"/"i32"/"i64"/"f32"/"f64" source bits
}

const (
	maskExc   = 0x003F
	maskC1    = 0x0200
	maskCC    = 0x4500
	maskArith = maskExc | maskC1
)

func basicSpecs() []opSpec {
	all := cws(0, 1, 2, 3) // PC=1 is reserved; the x87 treats it as 64 bits
	rc := all              // precision control must not affect these
	return []opSpec{
		{"add", 2, all, maskArith, "f80"},
		{"sub", 2, all, maskArith, "f80"},
		{"mul", 2, all, maskArith, "f80"},
		{"div", 2, all, maskArith, "f80"},
		{"sqrt", 1, all, maskArith, "f80"},
		{"prem", 2, rc, maskArith | maskCC, "f80"},
		{"prem1", 2, rc, maskArith | maskCC, "f80"},
		{"rndint", 1, rc, maskArith, "f80"},
		{"scale", 2, rc, maskArith, "f80"},
		{"xtract", 1, rc, maskArith, "f80"},
		{"fcom", 2, rc, maskExc | maskCC | maskC1, "f80"},
		{"fucom", 2, rc, maskExc | maskCC | maskC1, "f80"},
		{"fcomi", 2, rc, maskExc | maskCC | maskC1, "f80"},
		{"fxam", 1, rc, maskCC | maskC1, "f80"},
		{"ldf", 1, rc, maskArith, "f32"},
		{"ldd", 1, rc, maskArith, "f64"},
		{"stf", 1, rc, maskArith, "f80"},
		{"std", 1, rc, maskArith, "f80"},
		{"fild16", 1, rc, maskArith, "i16"},
		{"fild32", 1, rc, maskArith, "i32"},
		{"fild64", 1, rc, maskArith, "i64"},
		{"fist16", 1, rc, maskArith, "i16"},
		{"fist32", 1, rc, maskArith, "i32"},
		{"fist64", 1, rc, maskArith, "i64"},
		{"fisttp16", 1, rc, maskArith, "i16"},
		{"fisttp32", 1, rc, maskArith, "i32"},
		{"fisttp64", 1, rc, maskArith, "i64"},
	}
}

// cases draws n cases for s under each of its control words.
func (g gen) cases(s opSpec, n int) []refCase {
	var out []refCase
	for i := 0; i < n; i++ {
		var a, b F80
		switch s.kind {
		case "f32":
			a.Mant = uint64(g.r.Uint32())
			if i%3 == 0 {
				a.Mant &= 0x807FFFFF // denormals and zeros
			} else if i%3 == 1 {
				a.Mant |= 0x7F800000 // infinities and NaNs
			}
		case "f64":
			a.Mant = g.r.Uint64()
			if i%3 == 0 {
				a.Mant &= 0x800FFFFFFFFFFFFF
			} else if i%3 == 1 {
				a.Mant |= 0x7FF0000000000000
			}
		case "i16", "i32", "i64":
			if strings.HasPrefix(s.op, "fild") {
				a.Mant = g.r.Uint64() >> uint(g.r.IntN(64))
				if g.r.IntN(2) == 0 {
					a.Mant = -a.Mant
				}
				break
			}
			// a value near the integer range of the destination
			w := map[string]int{"i16": 16, "i32": 32, "i64": 64}[s.kind]
			v := g.f80()
			if g.r.IntN(2) == 0 {
				v = F80{g.mant(), uint16(expBias+w-3+g.r.IntN(4)) | uint16(g.r.IntN(2))<<15}
			}
			if g.r.IntN(4) == 0 {
				v = F80{g.mant(), uint16(expBias-2+g.r.IntN(5)) | uint16(g.r.IntN(2))<<15}
			}
			a = v
		default:
			a = g.f80()
			b = g.f80()
			if g.r.IntN(2) == 0 {
				b = g.near(a)
			}
		}
		if s.kind != "f80" && s.kind[0] == 'f' {
			b = F80{}
		}
		for _, cw := range s.cws {
			out = append(out, refCase{s.op, cw, a, b})
		}
	}
	return out
}

// ulps returns the distance in units in the last place between two finite
// values of the same sign, or -1 when they are not comparable that way.
func ulps(x, y F80) int64 {
	kx, ky := x.kind(), y.kind()
	if x == y {
		return 0
	}
	if kx != kNormal && kx != kDenormal || ky != kNormal && ky != kDenormal || x.Neg() != y.Neg() {
		return -1
	}
	ord := func(a F80) uint64 {
		e := uint64(a.Exp())
		m := a.Mant
		if e == 0 {
			e = 1
		}
		return (e-1)<<63 + m // monotone: each binade holds 2^63 steps
	}
	d := int64(ord(x) - ord(y))
	if d < 0 {
		d = -d
	}
	return d
}

func TestDifferentialBasic(t *testing.T) {
	bin := buildRef(t)
	g := gen{rand.New(rand.NewPCG(1, 2))}
	n := 800
	if testing.Short() {
		n = 200
	}
	for _, s := range basicSpecs() {
		cases := g.cases(s, n)
		want := runRef(t, bin, cases)
		bad := 0
		for i, c := range cases {
			got := model(c)
			w := want[i]
			if s.op == "prem" || s.op == "prem1" {
				if w.sw&0x400 != 0 { // partial: C0, C1, C3 are undefined
					got.sw &^= 0x4300
					w.sw &^= 0x4300
				}
			}
			if got.r1 != w.r1 || got.r2 != w.r2 || (got.sw^w.sw)&s.swMask != 0 {
				if bad < 8 {
					t.Errorf("%v\n  got  %v\n  want %v", c, got, w)
				}
				bad++
			}
		}
		t.Logf("%-9s %6d cases, %d mismatches", s.op, len(cases), bad)
		if bad > 0 {
			t.Errorf("%s: %d of %d cases differ from the host FPU", s.op, bad, len(cases))
		}
	}
}

// TestDifferentialUnderflowBoundary runs products, quotients and sums whose
// exact results lie just below and just above the smallest normal, under
// every rounding and precision control, where tininess detection and the
// rounding position of denormal results decide the outcome.
func TestDifferentialUnderflowBoundary(t *testing.T) {
	bin := buildRef(t)
	var cases []refCase
	const ones = ^uint64(0)
	mants := []uint64{ones, ones - 1, ones &^ (1<<11 - 1), ones &^ (1<<40 - 1), ones&^(1<<11-1) | 1<<10, ones&^(1<<40-1) | 1<<39, intBit | 1, intBit}
	for _, m := range mants {
		for _, se := range []uint16{0x0000, 0x0001, 0x0002, 0x8001} {
			a := F80{m, se}
			if se == 0 {
				a.Mant >>= 1
			}
			for _, b := range []F80{{intBit, expBias - 1}, {intBit | 1, expBias - 1}, {^uint64(0), expBias - 1}, {^uint64(0), expBias - 2}, {intBit, expBias}, {intBit + 1<<20, expBias}} {
				for _, cw := range cws(0, 2, 3) {
					cases = append(cases, refCase{"mul", cw, a, b}, refCase{"div", cw, a, F80{b.Mant, b.SignExp + 1}},
						refCase{"add", cw, a, F80{b.Mant >> 3, 0}}, refCase{"sub", cw, a, F80{b.Mant >> 2, 0x0001}},
						refCase{"std", cw, F80{m, uint16(0x3C00 + int(se))}, F80{}}, refCase{"stf", cw, F80{m, uint16(0x3F80 + int(se))}, F80{}})
				}
			}
		}
	}
	want := runRef(t, bin, cases)
	bad := 0
	for i, c := range cases {
		if got := model(c); got.r1 != want[i].r1 || (got.sw^want[i].sw)&maskArith != 0 {
			if bad < 8 {
				t.Errorf("%v\n  got  %v\n  want %v", c, got, want[i])
			}
			bad++
		}
	}
	t.Logf("%d boundary cases, %d mismatches", len(cases), bad)
}

// referenceVendor is the CPUID vendor of the reference CPU whose x87 the
// package reproduces (doc.go).
const referenceVendor = "GenuineIntel"

// hostVendor is the host processor's vendor string from /proc/cpuinfo, or
// "" when it cannot be read.
func hostVendor() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "vendor_id" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// hostModel is the host processor's model name from /proc/cpuinfo.
func hostModel() string {
	data, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// writeTransRecord writes cases and the host's answers, one per line:
// "op cw a b = r1 r2 sw", every value in hex as the x87ref program reads
// and prints them.
func writeTransRecord(path string, cases []refCase, want []refResult) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# x87 transcendental results recorded on %s (%s) by\n", hostModel(), hostVendor())
	fmt.Fprintf(&b, "# GXBIT_X87_RECORD=FILE go test ./gvinst/float80 -run TestDifferentialTranscendental\n")
	fmt.Fprintf(&b, "# op cw a b = r1 r2 sw (TOP masked out)\n")
	for i, c := range cases {
		w := want[i]
		fmt.Fprintf(&b, "%s %04x %04x:%016x %04x:%016x = %04x:%016x %04x:%016x %04x\n",
			c.op, c.cw, c.a.SignExp, c.a.Mant, c.b.SignExp, c.b.Mant,
			w.r1.SignExp, w.r1.Mant, w.r2.SignExp, w.r2.Mant, w.sw)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// readTransRecord reads a file written by writeTransRecord.
func readTransRecord(path string) ([]refCase, []refResult, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var cases []refCase
	var res []refResult
	for n, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var c refCase
		var r refResult
		_, err := fmt.Sscanf(line, "%s %x %x:%x %x:%x = %x:%x %x:%x %x", &c.op, &c.cw,
			&c.a.SignExp, &c.a.Mant, &c.b.SignExp, &c.b.Mant,
			&r.r1.SignExp, &r.r1.Mant, &r.r2.SignExp, &r.r2.Mant, &r.sw)
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %v", path, n+1, err)
		}
		cases = append(cases, c)
		res = append(res, r)
	}
	return cases, res, nil
}
