//go:build linux && amd64

package jit

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// lowMergeBodies are scalar .f32 operations as the lifter writes them (the
// result merged into the destination's low lane by an AND and an OR), and
// near misses the compiler must not fold: the OR reading the result
// twice, a binary operation whose first source is not the merged value,
// the OR's destination read in between, the result read again.
var lowMergeBodies = map[string]struct {
	body  string
	folds bool
}{
	"addss": {"  GET.u64 v0, x0\n  GET.u64 v1, x2\n  ADD.f32 v2, v0, v1\n  MOV.u64 v3, v0\n  AND.b64 v4, v3, -4294967296\n  OR.b64 v5, v4, v2\n  PUT.u64 x0, v5\n", true},
	"subss": {"  GET.u64 v0, x1\n  GET.u64 v1, x3\n  SUB.f32 v2, v0, v1\n  AND.b64 v4, v0, -4294967296\n  OR.b64 v5, v2, v4\n  PUT.u64 x1, v5\n", true},
	"mulss-chain": {"  GET.u64 v0, x0\n  GET.u64 v1, x1\n  MUL.f32 v2, v0, v1\n  AND.b64 v4, v0, -4294967296\n  OR.b64 v5, v4, v2\n" +
		"  MOV.u64 v6, v5\n  DIV.f32 v7, v6, v1\n  MOV.u64 v8, v5\n  AND.b64 v9, v8, -4294967296\n  OR.b64 v10, v9, v7\n  PUT.u64 x0, v10\n  ST.u32 s7(12), v10\n", true},
	"sqrtss":      {"  GET.u64 v0, x0\n  GET.u64 v1, x2\n  SQRT.f32 v2, v1\n  AND.b64 v4, v0, -4294967296\n  OR.b64 v5, v4, v2\n  PUT.u64 x0, v5\n", true},
	"cvtsi2ss":    {"  GET.u64 v0, x3\n  GET.u64 v1, s1\n  CVT.dyn.f32.s32 v2, v1\n  AND.b64 v4, v0, -4294967296\n  OR.b64 v5, v4, v2\n  PUT.u64 x3, v5\n", true},
	"cvtsi2ss-64": {"  GET.u64 v0, x3\n  GET.u64 v1, s2\n  CVT.dyn.f32.s64 v2, v1\n  AND.b64 v4, v0, -4294967296\n  OR.b64 v5, v4, v2\n  PUT.u64 x3, v5\n", true},
	"cvtsd2ss":    {"  GET.u64 v0, x0\n  GET.u64 v1, x1\n  CVT.dyn.f32.f64 v2, v1\n  AND.b64 v4, v0, -4294967296\n  OR.b64 v5, v4, v2\n  PUT.u64 x0, v5\n", true},
	"zeroed": {"  LI.u64 v0, 0\n  JOIN.b128 v1, v0, v0\n  GET.u64 v3, s1\n  CVT.dyn.f32.s32 v4, v3\n  AND.b64 v5, v1, -4294967296\n  OR.b64 v6, v5, v4\n" +
		"  GET.u64 v7, x1\n  MOV.u64 v8, v6\n  DIV.f32 v9, v8, v7\n  MOV.u64 v10, v6\n  AND.b64 v11, v10, -4294967296\n  OR.b64 v12, v11, v9\n  PUT.u64 x0, v12\n", true},
	"other-base": {"  GET.u64 v0, x0\n  GET.u64 v1, x2\n  ADD.f32 v2, v1, v0\n  AND.b64 v4, v0, -4294967296\n  OR.b64 v5, v4, v2\n  PUT.u64 x0, v5\n", false},
	"twice":      {"  GET.u64 v0, x0\n  GET.u64 v1, x2\n  ADD.f32 v2, v0, v1\n  OR.b64 v5, v2, v2\n  PUT.u64 x0, v5\n", false},
	"read-again": {"  GET.u64 v0, x0\n  GET.u64 v1, x2\n  MUL.f32 v2, v0, v1\n  AND.b64 v4, v0, -4294967296\n  OR.b64 v5, v4, v2\n  PUT.u64 x0, v5\n  PUT.u64 s3, v2\n", false},
	"other-mask": {"  GET.u64 v0, x0\n  GET.u64 v1, x2\n  MUL.f32 v2, v0, v1\n  AND.b64 v4, v0, -4294967295\n  OR.b64 v5, v4, v2\n  PUT.u64 x0, v5\n", false},
	"between":    {"  GET.u64 v0, x0\n  GET.u64 v1, x2\n  MUL.f32 v2, v0, v1\n  PUT.u64 x0, v1\n  AND.b64 v4, v0, -4294967296\n  OR.b64 v5, v4, v2\n  PUT.u64 x0, v5\n", false},
}

// TestLowMerges runs each of lowMergeBodies on both engines (see
// runFoldBodies).
func TestLowMerges(t *testing.T) { runFoldBodies(t, lowMergeBodies) }

// comiBodies are the flags words of ucomisd and ucomiss as the lifter
// writes them, and near misses: a value of the seven read again, the
// three comparisons not of the same operands.
var comiBodies = map[string]struct {
	body  string
	folds bool
}{
	"ucomisd":      {comiBody("f64", "x0", "x2", ""), true},
	"ucomiss":      {comiBody("f32", "x2", "x0", ""), true},
	"same-operand": {comiBody("f64", "x2", "x2", ""), true},
	"read-again":   {comiBody("f64", "x0", "x2", "  PUT.u64 s4, v3\n"), false},
	"other-operands": {"  GET.u64 v0, x0\n  GET.u64 v1, x2\n  CMP.ltu.f64 v2, v0, v1\n  CMP.equ.f64 v3, v1, v0\n  CMP.nan.f64 v4, v0, v1\n" +
		"  SHL.u64 v5, v4, 2\n  SHL.u64 v6, v3, 6\n  OR.u64 v7, v5, v6\n  OR.u64 v8, v2, v7\n  PUT.u64 s3, v8\n", false},
}

// comiBody is the flags word of a comparison of type ty of xmm registers
// x and y into s3, then more.
func comiBody(ty, x, y, more string) string {
	return "  GET.u64 v0, " + x + "\n  GET.u64 v1, " + y + "\n  CMP.ltu." + ty + " v2, v0, v1\n  CMP.equ." + ty + " v3, v0, v1\n  CMP.nan." + ty + " v4, v0, v1\n" +
		"  SHL.u64 v5, v4, 2\n  SHL.u64 v6, v3, 6\n  OR.u64 v7, v5, v6\n  OR.u64 v8, v2, v7\n  PUT.u64 s3, v8\n" + more +
		"  AND.u64 v9, v8, 65\n  PUT.u64 s5, v9\n"
}

// TestComiFlags runs each of comiBodies on both engines (see
// runFoldBodies).
func TestComiFlags(t *testing.T) { runFoldBodies(t, comiBodies) }

// runFoldBodies runs each body on both engines from several states (NaNs,
// denormals and infinities among the xmm registers' lanes, two rounding
// modes, DAZ with FTZ), straight and as a loop, and checks that the
// compiler folds instructions exactly where it should.
func runFoldBodies(t *testing.T, bodies map[string]struct {
	body  string
	folds bool
}) {
	for name, b := range bodies {
		t.Run(name, func(t *testing.T) {
			straight := flagsProgram(b.body)
			if got := mergeFolded(t, straight); got != b.folds {
				t.Fatalf("folded: %v, want %v", got, b.folds)
			}
			loop := "vblock 0x1000..0x1100:\n  # 0x1000: insn\n" + b.body +
				"  # 0x10f0: dec\n  GET.u64 v30, s0\n  SUB.u64 v31, v30, 1\n  PUT.u64 s0, v31\n  CMP.ne.u64 v32, v31, 0\n  BRANCH v32, 0x1000, 0x2000\n" +
				"vblock 0x2000..0x2002:\n  # 0x2000: syscall\n  SYSCALL 0x2002\n"
			for i, mx := range []uint64{0x1f80, 0x3f80, 0x9fc0} {
				pre := fmt.Sprintf("vblock 0x0ff0..0x1000:\n  # 0x0ff0: ldmxcsr\n  LI.u32 v40, %d\n  PUT.u32 mxcsr, v40\n  JMP 0x1000\n", mx)
				for _, f := range []uint64{0x7fc00001, 0x00000001, 0x7f800000, 0x3fc00000, 0xff7fffff, 0x7ff4000000000000, 0x8000000000000001} {
					seed := []byte{byte(i), byte(f), byte(f >> 8), byte(f >> 16), byte(f >> 24), 3, 1, 4, 1, 5}
					x2 := f
					if f>>32 == 0 {
						x2 |= 0xabcd000000000000 // a float's other lane
					}
					set := fmt.Sprintf("  # 0x1000: insn\n  LI.u64 v41, %d\n  PUT.u64 x2, v41\n", int64(x2))
					src := pre + strings.Replace(straight, "  # 0x1000: insn\n", set, 1)
					mustRunBothFrom(t, src, seed, 0, 0x0ff0)
					mustRunBothFrom(t, pre+loop, seed, 5000, 0x0ff0)
				}
			}
		})
	}
}

// mergeFolded compiles the first block of src and reports whether
// instructions were folded into others: an OR that makes no code.
func mergeFolded(t *testing.T, src string) bool {
	t.Helper()
	bs, err := gvinst.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	vb := bs[0]
	code, err := compileUnit(vb, 0, false, -1, unitEnv{})
	if err != nil {
		t.Fatal(err)
	}
	for k, m := range code.marks {
		if m.inst < 0 || vb.Insts[m.inst].Op != gvinst.OpOr || k+1 >= len(code.marks) {
			continue
		}
		if code.marks[k+1].pos == m.pos {
			return true
		}
	}
	return false
}

// xmmLoop is a loop block (s0 counts down) summing floats from memory into
// x0, squaring x1 in .f64, adding 1 to x2 as an integer (which keeps x2
// out of the xmm registers), and reading the MXCSR (a callout, after which
// the unit reloads what it keeps in registers; its DE flag left out, which
// the engines may set differently: see runBothAt); more is spliced in
// before the loop's count.
func xmmLoop(more string) string {
	return "vblock 0x1000..0x1100:\n  # 0x1000: insn\n" +
		"  GET.u64 v0, s0\n  AND.u64 v1, v0, 1023\n  SHL.u64 v2, v1, 2\n  GET.u64 v3, s7\n  ADD.u64 v4, v3, v2\n  LD.u32 v5, v4(0)\n" +
		"  GET.u64 v6, x0\n  ADD.f32 v7, v6, v5\n  AND.b64 v8, v6, -4294967296\n  OR.b64 v9, v8, v7\n  PUT.u64 x0, v9\n" +
		"  # 0x1004: insn\n  GET.u64 v10, x1\n  MUL.f64 v11, v10, v10\n  PUT.u64 x1, v11\n" +
		"  # 0x1008: insn\n  GET.u64 v12, x2\n  ADD.u64 v13, v12, 1\n  PUT.u64 x2, v13\n" +
		"  # 0x100c: insn\n  GET.u32 v14, mxcsr\n  AND.u32 v15, v14, -3\n  PUT.u64 s9, v15\n" + more +
		"  # 0x10f0: dec\n  GET.u64 v30, s0\n  SUB.u64 v31, v30, 1\n  PUT.u64 s0, v31\n  CMP.ne.u64 v32, v31, 0\n  BRANCH v32, 0x1000, 0x2000\n" +
		"vblock 0x2000..0x2002:\n  # 0x2000: syscall\n  SYSCALL 0x2002\n"
}

// TestXmmPins runs loop units that keep SSE registers in host xmm
// registers on both engines, and checks which registers they keep there:
// x0 and x1 (float arithmetic, whole moves, a movss load), not x2 (an
// integer add), nor one a packed op reads (x3) or stored as an integer
// (x4).
func TestXmmPins(t *testing.T) {
	cases := []struct {
		name, more string
		kept, out  []string
	}{
		{"sums", "", []string{"x0", "x1"}, []string{"x2"}},
		{"moved-whole", "  # 0x1010: movaps xmm3, xmm0\n  GET.b128 v15, x0\n  PUT.b128 x3, v15\n  # 0x1014: movaps xmm0, xmm2\n  GET.b128 v19, x2\n  PUT.b128 x0, v19\n",
			[]string{"x0", "x1", "x3"}, []string{"x2"}},
		{"packed", "  # 0x1010: addps xmm3, xmm3\n  GET.b128 v20, x3\n  VADD.f32 v22, v20, v20\n  PUT.b128 x3, v22\n  # 0x1014: movss xmm1, [s7+16]\n  LD.u32 v24, s7(16)\n  LI.u64 v25, 0\n  JOIN.b128 v26, v24, v25\n  PUT.b128 x1, v26\n" +
			"  # 0x1018: movaps xmm2, xmm1\n  GET.b128 v28, x1\n  PUT.b128 x2, v28\n",
			[]string{"x0", "x1"}, []string{"x2", "x3"}},
		{"virtuals", "  # 0x1010: insn\n  GET.u64 v40, x1\n  MUL.f64 v41, v40, v40\n  LD.u64 v43, s7(4092)\n  ADD.f64 v44, v41, v43\n" +
			"  GET.u32 v42, mxcsr\n  AND.u32 v47, v42, -3\n  PUT.u64 s10, v47\n  ADD.u64 v45, v41, 7\n  PUT.u64 s11, v45\n  SUB.f64 v46, v44, v41\n  PUT.u64 x1, v46\n", []string{"x0", "x1"}, []string{"x2"}},
		{"evicted", "  # 0x1010: insn\n  GET.u64 v50, x0\n  GET.u64 v51, x1\n  GET.u64 v52, x2\n  GET.u64 v53, x3\n  GET.u64 v54, x4\n  GET.u64 v55, x5\n  GET.u64 v56, x6\n  GET.u64 v57, x7\n  GET.u64 v58, x8\n  GET.u64 v59, x9\n  MUL.f64 v60, v50, v51\n  MUL.f64 v61, v51, v52\n  MUL.f64 v62, v52, v53\n  MUL.f64 v63, v53, v54\n  MUL.f64 v64, v54, v55\n  MUL.f64 v65, v55, v56\n  MUL.f64 v66, v56, v57\n  ADD.f64 v70, v66, v65\n  ADD.f64 v71, v70, v64\n  ADD.f64 v72, v71, v63\n  ADD.f64 v73, v72, v62\n  ADD.f64 v74, v73, v61\n  ADD.f64 v75, v74, v60\n  PUT.u64 x9, v75\n", []string{"x0", "x1"}, []string{"x2"}},
		{"stored", "  # 0x1010: movss [s7+8], xmm4\n  GET.u64 v16, x4\n  ST.u32 s7(8), v16\n  GET.u64 v17, x4\n  MUL.f32 v18, v17, v17\n  PUT.u64 x4, v18\n", []string{"x0", "x1"}, []string{"x2", "x4"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := xmmLoop(tc.more)
			bs, err := gvinst.Parse(src)
			if err != nil {
				t.Fatal(err)
			}
			code, err := compileUnit(bs[0], 0, false, -1, unitEnv{})
			if err != nil {
				t.Fatal(err)
			}
			if !code.loop {
				t.Fatal("not a loop unit")
			}
			kept := keptInXmm(t, bs[0])
			for _, x := range tc.kept {
				if !kept[x] {
					t.Errorf("%s is not kept in an xmm register", x)
				}
			}
			for _, x := range tc.out {
				if kept[x] {
					t.Errorf("%s is kept in an xmm register", x)
				}
			}
			for i := 0; i < 6; i++ {
				mustRunBothFrom(t, src, []byte{byte(i), byte(3 * i), 7}, 20000, 0x1000)
				// From SSE registers that hold ordinary doubles, whose
				// products do not all end as NaNs.
				pre := "vblock 0x0f00..0x1000:\n  # 0x0f00: insn\n"
				for k := 0; k < 10; k++ {
					pre += fmt.Sprintf("  LI.u64 v%d, %d\n  PUT.u64 x%d, v%d\n", k, int64(math.Float64bits(1+float64(k+i)/8)), k, k)
				}
				mustRunBothFrom(t, pre+"  JMP 0x1000\n"+src, []byte{byte(i), 1}, 20000, 0x0f00)
			}
		})
	}
}

// keptInXmm compiles loop block vb and returns the SSE registers (x0,
// x1, ...) its unit keeps in xmm registers.
func keptInXmm(t *testing.T, vb *gvinst.VBlock) map[string]bool {
	t.Helper()
	_, noXmm, err := compileTraceXmm(singleTrace(vb), 0, false, -1, unitEnv{})
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	for k := 0; k < 16; k++ {
		r := gvinst.X0 + gvinst.Reg(2*k)
		used := false
		for i := range vb.Insts {
			for _, u := range operandSlots(nil, &vb.Insts[i]) {
				used = used || u.r == r
			}
		}
		if used && noXmm&sseBit(r) == 0 {
			kept[fmt.Sprintf("x%d", k)] = true
		}
	}
	return kept
}

// TestShufP runs VSHUFP (shufps, shufpd) on both engines for every
// selector of a few lanes' choices, the destination one of the sources
// or neither.
func TestShufP(t *testing.T) {
	for _, ty := range []string{"f32", "f64"} {
		for _, imm := range []int{0, 1, 2, 3, 0x1b, 0x4e, 0xb1, 0xe4, 0xff} {
			for _, dst := range []string{"x0", "x1", "x3"} {
				body := fmt.Sprintf("  GET.b128 v0, x0\n  GET.b128 v2, x1\n  VSHUFP.%s v4, v0, v2, %d\n  PUT.b128 %s, v4\n", ty, imm, dst)
				mustRunBoth(t, flagsProgram(body), []byte{byte(imm), 5, 9})
			}
		}
	}
}

// TestVCvt runs the packed conversions (cvtdq2ps, cvt(t)ps2dq, cvtdq2pd,
// cvt(t)pd2dq, cvtps2pd, cvtpd2ps, and forms the compiler leaves to the
// interpreter) on both engines, over NaNs, denormals, infinities and
// integers too large, under several rounding modes, DAZ and FTZ (see
// runFoldBodies).
func TestVCvt(t *testing.T) {
	bodies := map[string]struct {
		body  string
		folds bool
	}{}
	for _, c := range []string{"dyn.f32.s32", "dyn.s32.f32", "rz.s32.f32", "dyn.f64.s32", "dyn.s32.f64", "rz.s32.f64", "dyn.f64.f32", "dyn.f32.f64", "rn.s32.f32"} {
		bodies[c] = struct {
			body  string
			folds bool
		}{"  GET.b128 v0, x2\n  VCVT." + c + " v2, v0\n  PUT.b128 x0, v2\n  GET.b128 v4, x1\n  VCVT." + c + " v6, v4\n  PUT.b128 x3, v6\n", false}
	}
	runFoldBodies(t, bodies)
}
