package ptx

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseNvccStyle(t *testing.T) {
	m, err := Parse(mustRead(t, "testdata/nvcc_style.ptx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(m); err != nil {
		t.Fatalf("check: %v", err)
	}
	if m.Version != "8.3" || m.AddressSize != 64 || len(m.Target) != 2 || m.Target[0] != "sm_90" || m.Target[1] != "debug" {
		t.Errorf("directives: %+v", m)
	}
	k := m.Func("_Z6kernelPfS_i")
	if k == nil || !k.Entry || k.Linkage != "visible" || len(k.Params) != 3 {
		t.Fatalf("kernel: %+v", k)
	}
	if got := k.Perf["maxntid"]; len(got) != 3 || got[0] != 256 {
		t.Errorf("maxntid = %v", got)
	}
	if p := k.Params[1]; !p.Ptr || p.Align != 4 || p.Type != U64 || p.Size() != 8 {
		t.Errorf("param 1 = %+v", p)
	}
	f := m.Func("_Z3addii")
	if f == nil || f.Entry || len(f.Rets) != 1 || len(f.Params) != 2 {
		t.Fatalf("func: %+v", f)
	}
	if len(m.Vars) != 3 || m.Vars[0].Dims[0] != -1 || m.Vars[1].Size() != 16 || len(m.Vars[1].Init) != 16 {
		t.Errorf("vars: %+v %+v", m.Vars[0], m.Vars[1])
	}
	var insts []*Inst
	var walk func(b *Block)
	walk = func(b *Block) {
		for _, s := range b.Stmts {
			switch x := s.(type) {
			case *Inst:
				insts = append(insts, x)
			case *Block:
				walk(x)
			}
		}
	}
	walk(k.Body)
	byText := map[string]*Inst{}
	for _, in := range insts {
		byText[in.String()] = in
	}
	if in := byText["mul.wide.s32"]; in == nil || !in.Has("wide") || in.Type() != S32 {
		t.Errorf("mul.wide.s32 = %+v", in)
	}
	if in := byText["cvta.to.global.u64"]; in == nil || !in.Has("to") || in.Space != SpaceGlobal {
		t.Errorf("cvta = %+v", in)
	}
	if in := byText["bra"]; in == nil || in.Guard != "%p1" || in.GuardNeg || in.Args[0].Name != "$L__BB0_2" {
		t.Errorf("bra = %+v", in)
	}
	if in := byText["bra.uni"]; in == nil || !in.GuardNeg || !in.Has("uni") {
		t.Errorf("bra.uni = %+v", in)
	}
	if in := byText["call.uni"]; in == nil || len(in.Args) != 3 || in.Args[2].Kind != OpList || len(in.Args[2].Elems) != 2 {
		t.Errorf("call = %+v", in)
	}
	if in := byText["setp.ge.s32"]; in == nil || in.Cmp != "ge" {
		t.Errorf("setp = %+v", in)
	}
	if in := byText["st.param.b32"]; in == nil || in.Args[0].Kind != OpAddr || in.Args[0].Name != "param1" {
		t.Errorf("st.param = %+v", in)
	}
}

func TestOperandForms(t *testing.T) {
	src := `.version 9.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
	.reg .pred %p<3>;
	.reg .b16 %h<2>;
	.reg .b32 %r<10>;
	.reg .f32 %f<5>;
	.reg .f64 %fd<3>;
	.reg .b64 %rd<5>;
	.shared .align 16 .b8 sm[64];
	ld.param.u64 %rd1, [p];
	ld.shared.v4.f32 {%f1, %f2, %f3, %f4}, [sm+16];
	ld.shared.v2.u32 {%r1, _}, [%rd1+-8];
	mov.f32 %f1, 0f3F800000;
	mov.f64 %fd1, 0d4000000000000000;
	mov.f32 %f2, -0f3F800000;
	mov.f64 %fd2, 1.5e3;
	mov.u32 %r2, 0x1F;
	mov.u32 %r3, -7;
	mov.u32 %r4, 017;
	mov.b64 %rd2, {%r1, %r2};
	mov.b32 %r5, {%h0, %h1};
	setp.lt.and.s32 %p1|%p2, %r1, %r2, !%p0;
	mov.u64 %rd3, sm;
	atom.shared.cas.b32 %r6, [sm], %r1, %r2;
	shfl.sync.bfly.b32 %r7|%p1, %r1, 1, 31, -1;
	vote.sync.ballot.b32 %r8, %p1, -1;
	ret;
}
`
	m, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(m); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range m.Funcs[0].Body.Stmts {
		if in, ok := s.(*Inst); ok {
			parts := []string{in.String()}
			for _, a := range in.Args {
				parts = append(parts, a.String())
			}
			got = append(got, strings.Join(parts, " "))
		}
	}
	want := []string{
		"ld.param.u64 %rd1 [p]",
		"ld.shared.v4.f32 {%f1, %f2, %f3, %f4} [sm+16]",
		"ld.shared.v2.u32 {%r1, _} [%rd1+-8]",
		"mov.f32 %f1 0f3F800000",
		"mov.f64 %fd1 0d4000000000000000",
		"mov.f32 %f2 0fBF800000",
		"mov.f64 %fd2 1500.0",
		"mov.u32 %r2 0x1F",
		"mov.u32 %r3 -7",
		"mov.u32 %r4 15",
		"mov.b64 %rd2 {%r1, %r2}",
		"mov.b32 %r5 {%h0, %h1}",
		"setp.lt.and.s32 %p1|%p2 %r1 %r2 !%p0",
		"mov.u64 %rd3 sm",
		"atom.shared.cas.b32 %r6 [sm] %r1 %r2",
		"shfl.sync.bfly.b32 %r7|%p1 %r1 1 31 -1",
		"vote.sync.ballot.b32 %r8 %p1 -1",
		"ret",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d instructions, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("inst %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestParseErrors(t *testing.T) {
	hdr := ".version 8.0\n.target sm_90\n.address_size 64\n"
	body := func(s string) string {
		return hdr + ".visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<4>;\n.reg .pred %p1;\n" + s + "\n}\n"
	}
	tests := []struct {
		name, src  string
		line, col  int
		wantSubstr string
	}{
		{"version", ".version 9.1\n", 1, 10, "unsupported PTX version 9.1"},
		{"unknown inst", body("frob.u32 %r1, %r2;"), 8, 1, `unknown instruction "frob"`},
		{"unknown modifier", body("add.zz.u32 %r1, %r2, %r3;"), 8, 1, "unknown modifier .zz on instruction add"},
		{"missing semicolon", body("add.u32 %r1, %r2, %r3\nret;"), 9, 1, `expected "," or ";"`},
		{"operand count", body("add.u32 %r1, %r2;"), 8, 1, "add takes 3 operands, found 2"},
		{"bad char", body("add.u32 %r1, %r2, #;"), 8, 19, "unexpected character"},
		{"unterminated comment", body("/* x"), 8, 1, "unterminated /* comment"},
		{"bad float", body("mov.f32 %r1, 0f3F80;"), 8, 14, "needs 8 hex digits"},
		{"bad param", hdr + ".entry k(.param p)\n{\n}\n", 4, 17, "expected a parameter type"},
		{"unclosed block", hdr + ".entry k()\n{\nret;\n", 7, 1, `expected "}" to close the block opened at 5:1`},
		{"top junk", hdr + "add.u32 %r1;\n", 4, 1, "expected a directive"},
		{"bad guard", body("@123 bra L;"), 8, 2, "expected a predicate register after @"},
		{"extern size", body(".shared .b8 s[];"), 8, 13, "needs an explicit array size"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.src)
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if pe.Pos.Line != tc.line || pe.Pos.Col != tc.col || !strings.Contains(pe.Msg, tc.wantSubstr) {
				t.Errorf("err = %v, want %d:%d ...%s", err, tc.line, tc.col, tc.wantSubstr)
			}
		})
	}
}

func TestCheckErrors(t *testing.T) {
	hdr := ".version 8.0\n.target sm_90\n.address_size 64\n.global .u32 g;\n.const .u32 c;\n"
	body := func(s string) string {
		return hdr + ".visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<4>;\n.reg .f32 %f1;\n.reg .pred %p1; .reg .s32 %s1;\n.reg .b64 %rd1;\n" + s + "\n}\n"
	}
	tests := []struct {
		name, src  string
		line, col  int
		wantSubstr string
	}{
		{"undeclared reg", body("add.u32 %r1, %r9, %r2;"), 12, 14, "register %r9 is not declared"},
		{"range end", body("mov.u32 %r4, 0;"), 12, 9, "register %r4 is not declared"},
		{"type mismatch", body("add.f32 %f1, %f1, %s1;"), 12, 19, "expects .f32"},
		{"size mismatch", body("add.u32 %r1, %rd1, %r2;"), 12, 14, "expects a 32-bit operand"},
		{"pred", body("setp.eq.u32 %r1, %r2, %r3;"), 12, 13, "expects .pred"},
		{"label", body("bra L9;"), 12, 5, "branch target L9 is not a label"},
		{"guard", body("@%r1 bra L;\nL:"), 12, 6, "guard %r1 is .b32, not .pred"},
		{"param space", body("ld.global.u64 %rd1, [p];"), 12, 21, "p is in .param but ld.global.u64 accesses .global"},
		{"const store", body("st.const.u32 [c], %r1;"), 12, 14, "cannot store to .const"},
		{"kernel param store", body("st.param.u64 [p], %rd1;"), 12, 14, "read-only"},
		{"no type", body("add %r1, %r2, %r3;"), 12, 1, "needs a type modifier"},
		{"float cmp", body("setp.lo.f32 %p1, %f1, %f1;"), 12, 1, "is for unsigned integers"},
		{"undeclared var", body("ld.global.u32 %r1, [nope];"), 12, 20, "nope in address is not a declared"},
		{"call", body("call.uni nof;"), 12, 10, "call target nof is not a function"},
		{"float imm", body("add.u32 %r1, %r2, 1.5;"), 12, 19, "floating-point immediate"},
		// Regression (fuzz): a duplicate register used to unbalance the scope stack.
		{"duplicate reg", body(".reg .b32 %x, %x;"), 12, 15, "register %x declared twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse(tc.src)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			err = Check(m)
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if pe.Pos.Line != tc.line || pe.Pos.Col != tc.col || !strings.Contains(pe.Msg, tc.wantSubstr) {
				t.Errorf("err = %v, want %d:%d ...%s", err, tc.line, tc.col, tc.wantSubstr)
			}
		})
	}
}

// FuzzParse checks that neither the parser nor the checker panics on any
// input, and that what parses prints back to text that parses to the same
// module and prints the same again.
func FuzzParse(f *testing.F) {
	f.Add(".version 8.0\n.target sm_90\n.address_size 64\n.entry k(.param .u32 a){.reg .b32 %r<2>; ld.param.u32 %r1,[a]; ret;}")
	f.Add(".global .b8 g[4] = {1,2,3,4};")
	f.Add("@%p bra L; [x+-1] {a,b} 0f3F800000 0d4000000000000000 /* c */ // d")
	entries, _ := os.ReadDir("testdata")
	for _, e := range entries {
		if b, err := os.ReadFile("testdata/" + e.Name()); err == nil {
			f.Add(string(b))
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		m, err := Parse(src)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error is not *Error: %v", err)
			}
			return
		}
		_ = Check(m)
		text := Print(m)
		m2, err := Parse(text)
		if err != nil {
			t.Fatalf("printed module does not parse: %v\n%s", err, text)
		}
		if again := Print(m2); again != text {
			t.Fatalf("printing is not canonical:\n%s\n--- then ---\n%s", text, again)
		}
		if !samePTX(m, m2) {
			t.Fatalf("the printed module parses to a different module:\n%s", text)
		}
	})
}

// TestCheckNeedsVersionAndTarget is the regression test for issue 12 item
// 8: an empty file, or a module without .version or .target, is not a
// module.
func TestCheckNeedsVersionAndTarget(t *testing.T) {
	for src, want := range map[string]string{
		"":                              "no .version directive",
		"// only a comment\n":           "no .target directive",
		".version 8.0\n":                "no .target directive",
		".target sm_90\n":               "no .version directive",
		".version 8.0\n.target sm_90\n": "",
	} {
		m, err := Parse(src)
		if err == nil {
			err = Check(m)
		}
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}

// TestFuncDeclaredBeforeDefinition is the regression test for issue 12
// item 8: a .func prototype followed by its definition checks, Func finds
// the definition, and a prototype that disagrees with it is an error.
func TestFuncDeclaredBeforeDefinition(t *testing.T) {
	const head = ".version 8.0\n.target sm_90\n.address_size 64\n"
	const def = ".func (.reg .u32 y) f(.reg .u32 x)\n{\n\tmov.u32 y, x;\n\tret;\n}\n"
	const entry = ".visible .entry k()\n{\n\t.reg .b32 %r<2>;\n\tcall.uni (%r1), f, (%r0);\n\tret;\n}\n"
	m, err := Parse(head + ".func (.reg .u32 y) f(.reg .u32 x);\n" + entry + def)
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(m); err != nil {
		t.Errorf("prototype then definition: %v", err)
	}
	if f := m.Func("f"); f == nil || f.Body == nil {
		t.Errorf("Func(f) = %+v, want the definition", f)
	}
	m, err = Parse(head + ".func (.reg .u64 y) f(.reg .u32 x);\n" + entry + def)
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(m); err == nil || !strings.Contains(err.Error(), "declaration of f does not match") {
		t.Errorf("mismatched prototype: %v", err)
	}
}
