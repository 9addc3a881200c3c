package ptxgen

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/ptx"
)

// sumBody is a kernel body as the emitter writes it: thread idx sums the
// len bytes of 64-bit words from guest address base+idx*rowstep in a
// one-block counted loop, each load checked against site 0's footprint.
const sumBody = `	mov.u32 %w0, %tid.x;
	cvt.u64.u32 %idx, %w0;
	ld.param.u64 %sd0, [delta];
	ld.param.u64 %sl0, [lo];
	ld.param.u64 %sh0, [span];
	ld.param.u64 %r1, [base];
	ld.param.u64 %r3, [rowstep];
	mad.lo.u64 %r1, %r3, %idx, %r1;
	ld.param.u64 %r2, [len];
	add.u64 %r7, %r1, %r2;
	mov.b64 %r6, %r7;
	mov.b64 %r9, 0;
	mov.b64 %r18, %r9;
$Lx100:
	// x86 0x100: add rax, qword ptr [rsi]
	sub.u64 %t1, %r1, %sl0;
	setp.gt.u64 %p0, %t1, %sh0;
	and.b64 %t2, %r1, 7;
	setp.ne.or.u64 %p0, %t2, 0, %p0;
	@%p0 bra $Lck100_0;
	add.u64 %t0, %r1, %sd0;
	ld.global.u64 %r5, [%t0];
	add.u64 %r10, %r18, %r5;
	mov.b64 %r18, %r10;
	add.u64 %r11, %r1, 8;
	mov.b64 %r1, %r11;
	setp.ne.u64 %pbr, %r11, %r6;
	@%pbr bra $Lx100;
	bra $Lx200;
$Lx200:
	ld.param.u64 %t0, [out];
	shl.b64 %t1, %idx, 3;
	add.u64 %t0, %t0, %t1;
	st.global.u64 [%t0], %r18;
	bra $Ldone;
$Lck100_0:
	mov.b64 %xa, 256;
	setp.gt.u64 %p0, %t1, %sh0;
	@%p0 bra $Lerr1;
	bra $Lerr4;
$Lerr1:
	ld.param.u64 %t0, [errrec];
	mov.u32 %w0, 1;
	st.global.u32 [%t0], %w0;
	st.global.u64 [%t0+8], %xa;
	exit;
$Lerr4:
	ld.param.u64 %t0, [errrec];
	mov.u32 %w0, 4;
	st.global.u32 [%t0], %w0;
	st.global.u64 [%t0+8], %xa;
	exit;
$Ldone:
	ret;
`

func sumModule(body, decls string) string {
	var b strings.Builder
	b.WriteString(".version 8.0\n.target sm_90\n.address_size 64\n\n.visible .entry sum(\n")
	ps := []string{"delta", "lo", "span", "base", "rowstep", "len", "out", "errrec"}
	for i, p := range ps {
		sep := ","
		if i == len(ps)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "\t.param .u64 %s%s\n", p, sep)
	}
	b.WriteString(")\n{\n\t.reg .pred %p<2>;\n\t.reg .pred %pbr;\n\t.reg .b64 %r<24>;\n\t.reg .b64 %t<3>;\n\t.reg .b32 %w<1>;\n")
	b.WriteString("\t.reg .b64 %sd<1>;\n\t.reg .b64 %sl<1>;\n\t.reg .b64 %sh<1>;\n\t.reg .b64 %idx;\n\t.reg .b64 %xa;\n")
	b.WriteString(decls)
	b.WriteString(body)
	b.WriteString("}\n")
	return b.String()
}

// TestPeepholeMatches runs the loop kernel as written and as the
// peephole pass leaves it (checks hoisted out of the loop) on gpusim:
// where the original passes every check, both must produce the same sums;
// where it fails one, the optimized kernel must fail too (with the
// footprint code: its entry check cannot tell which access would fail).
func TestPeepholeMatches(t *testing.T) {
	// derived is the same loop with the address computed in the loop
	// from the induction variable: hoisting recomputes it at the entry.
	derived := strings.Replace(sumBody, `	sub.u64 %t1, %r1, %sl0;
	setp.gt.u64 %p0, %t1, %sh0;
	and.b64 %t2, %r1, 7;
	setp.ne.or.u64 %p0, %t2, 0, %p0;
	@%p0 bra $Lck100_0;
	add.u64 %t0, %r1, %sd0;`, `	shl.b64 %r12, %r4, 4;
	sub.u64 %r13, %r1, %r12;
	add.u64 %r14, %r13, 8;
	add.u64 %t0, %r14, 8;
	sub.u64 %t1, %t0, %sl0;
	setp.gt.u64 %p0, %t1, %sh0;
	and.b64 %t2, %t0, 7;
	setp.ne.or.u64 %p0, %t2, 0, %p0;
	@%p0 bra $Lck100_0;
	add.u64 %t0, %t0, %sd0;`, 1)
	derived = strings.Replace(derived, "\tmov.b64 %r9, 0;\n", "\tmov.b64 %r9, 0;\n\tmov.b64 %r4, 1;\n", 1)
	if derived == sumBody {
		t.Fatal("no derived variant")
	}
	// counted32 ends the loop on a 32-bit counter stepping by 3 from
	// 0xfffffff0 (high bits set in its register and in the bound): the
	// trip count is solved modulo 2^32.
	counted32 := strings.Replace(sumBody, "\tsetp.ne.u64 %pbr, %r11, %r6;\n", `	add.u64 %r16, %r17, 3;
	and.b64 %r17, %r16, 4294967295;
	and.b64 %t0, %r15, 4294967295;
	and.b64 %t1, %r17, 4294967295;
	setp.ne.u64 %pbr, %t0, %t1;
`, 1)
	counted32 = strings.Replace(counted32, "\tmov.b64 %r9, 0;\n", `	mov.b64 %r9, 0;
	mov.b64 %r17, 0x7FFFFFFF0;
	shr.u64 %r15, %r2, 3;
	mul.lo.u64 %r15, %r15, 3;
	add.u64 %r15, %r15, %r17;
`, 1)
	if counted32 == sumBody {
		t.Fatal("no 32-bit variant")
	}
	// wide steps %r20 by %r21, a register, and reads it only as the
	// address of a load that never runs (%p1 is false): the unrolled loop
	// computes %r20's values with mad.wide.s32 when %r21 is a 32-bit
	// value sign-extended, else runs the plain loop; %r20 joins the sum.
	wide := func(stride string) string {
		b := strings.Replace(sumBody, "\tadd.u64 %r11, %r1, 8;\n", `	@%p1 ld.global.u64 %r22, [%r20];
	add.u64 %r18, %r18, %r22;
	add.u64 %r20, %r20, %r21;
	add.u64 %r11, %r1, 8;
`, 1)
		b = strings.Replace(b, "\tmov.b64 %r18, %r9;\n", `	mov.b64 %r18, %r9;
	mov.b64 %r20, 4096;
	mov.b64 %r21, `+stride+`;
	mov.b64 %r22, 0;
	setp.ne.u64 %p1, %idx, %idx;
`, 1)
		return strings.Replace(b, "\tst.global.u64 [%t0], %r18;\n", "\tadd.u64 %r18, %r18, %r20;\n\tst.global.u64 [%t0], %r18;\n", 1)
	}
	for _, body := range []string{sumBody, derived, counted32, wide("-24"), wide("0x80000008")} {
		testPeephole(t, body)
	}
	if w := wide("-24"); !strings.Contains(w, "%r21, -24;") || !strings.Contains(w, "%r20, %r20, %r21") || !strings.Contains(w, "%r18, %r18, %r20") {
		t.Fatalf("no wide variant:\n%s", w)
	}
	if opt, _ := optimizeBody(wide("-24")); !strings.Contains(opt, "mad.wide.s32") {
		t.Errorf("no mad.wide.s32 for a register step:\n%s", opt)
	}
}

func testPeephole(t *testing.T, body string) {
	opt, decls := optimizeBody(body)
	if decls == "" || !strings.Contains(opt, "$Lx100_loop:") {
		t.Fatalf("the loop's checks were not hoisted:\n%s", opt)
	}
	if !strings.Contains(opt, "$Lx100_unroll:") {
		t.Errorf("the loop is not unrolled:\n%s", opt)
	}
	loop := opt[strings.Index(opt, "$Lx100_loop:"):strings.Index(opt, "$Lx200:")]
	if strings.Contains(loop, "%sl0") || strings.Count(loop, ";") > 10 {
		t.Errorf("the loop still checks, or is long:\n%s", loop)
	}
	ctx, err := gpusim.New(gpusim.Options{}).NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	fns := map[string]gpu.Function{}
	for name, src := range map[string]string{"plain": sumModule(body, ""), "opt": sumModule(opt, decls)} {
		m, err := ctx.LoadModule(src)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, src)
		}
		if fns[name], err = m.Function("sum"); err != nil {
			t.Fatal(err)
		}
	}
	const guest, words, threads = 0x10000, 4096, 32
	data := make([]byte, words*8)
	for i := range words {
		binary.LittleEndian.PutUint64(data[8*i:], uint64(i*i+7))
	}
	dev, _ := ctx.Alloc(uint64(len(data)))
	out, _ := ctx.Alloc(threads * 8)
	rec, _ := ctx.Alloc(ErrorRecordSize)
	if err := ctx.CopyHtoD(dev, data); err != nil {
		t.Fatal(err)
	}
	run := func(fn gpu.Function, lo, hi, base, rowstep, length uint64) ([]byte, uint32) {
		_ = ctx.Memset(out, 0, threads*8)
		_ = ctx.Memset(rec, 0, ErrorRecordSize)
		l, span := siteSpan(Range{lo, hi}, 8)
		var params [][]byte
		for _, v := range []uint64{uint64(dev) - guest, l, span, base, rowstep, length, uint64(out), uint64(rec)} {
			params = append(params, binary.LittleEndian.AppendUint64(nil, v))
		}
		cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1, Y: 1, Z: 1}, Block: gpu.Dim3{X: threads, Y: 1, Z: 1}}
		if err := ctx.Launch(fn, cfg, params); err != nil {
			t.Fatal(err)
		}
		if err := ctx.Synchronize(); err != nil {
			t.Fatal(err)
		}
		o, r := make([]byte, threads*8), make([]byte, ErrorRecordSize)
		_ = ctx.CopyDtoH(o, out)
		_ = ctx.CopyDtoH(r, rec)
		return o, binary.LittleEndian.Uint32(r)
	}
	type runCase struct {
		name                          string
		lo, hi, base, rowstep, length uint64
	}
	var trips []runCase // every remainder of the loop unrolled by four
	for _, n := range []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17, 31} {
		trips = append(trips, runCase{fmt.Sprintf("trip %d", n), guest, guest + words*8, guest + 8*n, 8 * n, 8 * n},
			runCase{fmt.Sprintf("trip %d, one short", n), guest, guest + 8*n*32 - 8, guest, 8 * n, 8 * n})
	}
	for _, c := range append(trips, []runCase{
		{"rows", guest, guest + words*8, guest, 1024, 1024},
		{"overlapping rows", guest, guest + words*8, guest + 64, 8, 2048},
		{"one word", guest, guest + words*8, guest, 8, 8},
		{"footprint exact", guest + 64, guest + 64 + 31*8 + 800, guest + 64, 8, 800},
		{"footprint one short", guest + 64, guest + 64 + 31*8 + 792, guest + 64, 8, 800},
		{"footprint starts late", guest + 72, guest + words*8, guest + 64, 8, 800},
		{"misaligned", guest, guest + words*8, guest + 4, 8, 800},
		{"length not a multiple", guest, guest + words*8, guest, 8, 804},
		{"empty footprint", guest, guest + 4, guest, 8, 8},
		{"zero length", guest, guest + words*8, guest, 8, 0},
	}...) {
		po, pc := run(fns["plain"], c.lo, c.hi, c.base, c.rowstep, c.length)
		oo, oc := run(fns["opt"], c.lo, c.hi, c.base, c.rowstep, c.length)
		switch {
		case (pc == 0) != (oc == 0):
			t.Errorf("%s: error code %d as written, %d optimized", c.name, pc, oc)
		case pc == 0 && string(po) != string(oo):
			t.Errorf("%s: results differ", c.name)
		case pc == 0 && binary.LittleEndian.Uint64(po) == 0:
			t.Errorf("%s: no sum", c.name)
		}
	}
}

// optimizeBody runs the peephole pass over a kernel body written as text,
// as a test writes one; decls declares the registers the hoisted loops use
// (hoist.go, unroll.go), "" when none.
func optimizeBody(s string) (text, decls string) {
	ls, err := parseBody(s)
	if err != nil {
		panic(fmt.Sprintf("ptxgen: the emitted body does not parse: %v", err))
	}
	ls = optimize(ls)
	var b strings.Builder
	for _, st := range stmts(ls) {
		ptx.WriteStmt(&b, st, "\t")
	}
	var d strings.Builder
	for _, st := range hoistDecls(ls) {
		ptx.WriteStmt(&d, st, "\t")
	}
	return b.String(), d.String()
}

// parseBody reads a kernel body written as PTX text (the emitter's, or a
// test's) into lines.
func parseBody(s string) ([]*pline, error) {
	m, err := ptx.Parse(".version 8.0\n.target sm_90\n.address_size 64\n.entry body()\n{\n" + s + "}\n")
	if err != nil {
		return nil, err
	}
	return bodyLines(m.Funcs[0].Body.Stmts), nil
}

// TestUnrollDeterministic checks that the hoisted and unrolled loop's
// text does not depend on map order: two addresses stepped by registers
// get their %hs registers in register order, the same every time.
func TestUnrollDeterministic(t *testing.T) {
	body := strings.Replace(sumBody, "\tadd.u64 %r11, %r1, 8;\n", `	@%p1 ld.global.u64 %r22, [%r20];
	add.u64 %r18, %r18, %r22;
	@%p1 ld.global.u64 %r25, [%r23];
	add.u64 %r18, %r18, %r25;
	add.u64 %r23, %r23, %r24;
	add.u64 %r20, %r20, %r21;
	add.u64 %r11, %r1, 8;
`, 1)
	body = strings.Replace(body, "\tmov.b64 %r18, %r9;\n", `	mov.b64 %r18, %r9;
	mov.b64 %r20, 4096;
	mov.b64 %r21, -24;
	mov.b64 %r23, 8192;
	mov.b64 %r24, 40;
	mov.b64 %r22, 0;
	mov.b64 %r25, 0;
	setp.ne.u64 %p1, %idx, %idx;
`, 1)
	body = strings.Replace(body, "\tst.global.u64 [%t0], %r18;\n", "\tadd.u64 %r18, %r18, %r20;\n\tadd.u64 %r18, %r18, %r23;\n\tst.global.u64 [%t0], %r18;\n", 1)
	first, _ := optimizeBody(body)
	if !strings.Contains(first, "cvt.u32.u64 %hs0, %r21;") || !strings.Contains(first, "cvt.u32.u64 %hs1, %r24;") {
		t.Fatalf("the register steps are not numbered in register order:\n%s", first)
	}
	for range 20 {
		if again, _ := optimizeBody(body); again != first {
			t.Fatalf("the optimized body differs between runs:\n%s\n--- then ---\n%s", first, again)
		}
	}
}
