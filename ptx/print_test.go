package ptx

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fixtures returns the PTX files kept in the repository's testdata
// folders, by path.
func fixtures(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".ptx") && strings.Contains(path, "testdata") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out[path] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("found %d PTX fixtures, expected the repository's testdata", len(out))
	}
	return out
}

// samePTX reports whether two modules are equal but for positions.
func samePTX(a, b *Module) bool {
	clearPos(reflect.ValueOf(a))
	clearPos(reflect.ValueOf(b))
	return reflect.DeepEqual(a, b)
}

var posType = reflect.TypeOf(Pos{})

// clearPos zeroes every Pos reachable from v.
func clearPos(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			clearPos(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == posType {
			if v.CanSet() {
				v.Set(reflect.Zero(posType))
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			clearPos(v.Field(i))
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			clearPos(v.Index(i))
		}
	}
}

// TestPrintRoundTrip prints every PTX fixture of the repository after
// parsing it: the text is canonical (printing what it parses to gives it
// back), and it parses to the same module as the original.
func TestPrintRoundTrip(t *testing.T) {
	n := 0
	for path, src := range fixtures(t) {
		m, err := Parse(src)
		if err != nil {
			continue // a fixture of a parse error
		}
		n++
		text := Print(m)
		m2, err := Parse(text)
		if err != nil {
			t.Errorf("%s: printed text does not parse: %v\n%s", path, err, text)
			continue
		}
		if again := Print(m2); again != text {
			t.Errorf("%s: printing is not canonical:\n%s\n--- then ---\n%s", path, text, again)
		}
		if !samePTX(m, m2) {
			t.Errorf("%s: the printed module parses to a different module:\n%s", path, text)
		}
	}
	if n < 10 {
		t.Errorf("only %d fixtures parse", n)
	}
}

// TestPrintKeepsLayout checks that text in the canonical layout comes back
// byte for byte: comments, labels, the blank line after declarations,
// immediates in hex with their width.
func TestPrintKeepsLayout(t *testing.T) {
	src := `.version 8.0
.target sm_90
.address_size 64

.global .align 8 .b8 g[16];

.visible .entry k(
	.param .u64 count,
	.param .align 8 .b8 blob[16]
)
{
	.reg .pred %p<2>;
	.reg .b64 %r<4>;
	.reg .f64 %d;

	// the thread's index
	mov.u32 %r0, %tid.x;
	and.b64 %r1, %r0, 0xFFFFFFFFFFFFFFFC;
	prmt.b32 %r2, %r1, 0, 0x0123;
	setp.eq.s64 %p0|%p1, %r1, -1;
	@!%p0 bra $Ldone;
	ld.global.v2.f64 {%d, %d}, [%r1+-8];
	mov.f64 %d, 0d3FF0000000000000;
	mov.f64 %d, 1.5;
	mov.u64 %r3, g+8;
	mov.u64 %r3, g-8;
$Ldone:
	ret;
}
`
	m, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if got := Print(m); got != src {
		t.Errorf("Print(Parse(src)) differs:\n%s", got)
	}
}

// TestDefsUses checks the destination and effect columns through the
// instructions' register lists.
func TestDefsUses(t *testing.T) {
	src := `.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 a)
{
	.reg .pred %p<3>;
	.reg .b64 %r<9>;
	.reg .f64 %d<2>;
	add.u64 %r0, %r1, %r2;
	st.global.u64 [%r3+8], %r4;
	ld.volatile.global.u64 %r5, [%r6];
	@%p0 setp.lt.u64 %p1|%p2, %r7, 4;
	ld.global.v2.f64 {%d0, %d1}, [%r8];
	mov.u32 %r0, %tid.x;
	bra $L;
$L:
	atom.global.add.u64 %r1, [%r2], 1;
	bar.sync 0;
	ret;
}
`
	m, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		defs, uses string
		eff        Effect
		removable  bool
	}{
		{"%r0", "%r1 %r2", 0, true},
		{"", "%r3 %r4", WritesMem, false},
		{"%r5", "%r6", ReadsMem | Volatile, false},
		{"%p1 %p2", "%p0 %r7", SetsPred, true},
		{"%d0 %d1", "%r8", ReadsMem, true},
		{"%r0", "", 0, true},
		{"", "", Branch, false},
		{"%r1", "%r2", ReadsMem | WritesMem, false},
		{"", "", Sync, false},
		{"", "", Ends, false},
	}
	var insts []*Inst
	for _, s := range m.Funcs[0].Body.Stmts {
		if in, ok := s.(*Inst); ok {
			insts = append(insts, in)
		}
	}
	if len(insts) != len(want) {
		t.Fatalf("%d instructions, want %d", len(insts), len(want))
	}
	for i, in := range insts {
		w := want[i]
		if got := strings.Join(in.DefRegs(nil), " "); got != w.defs {
			t.Errorf("%s: defs %q, want %q", FormatInst(in), got, w.defs)
		}
		if got := strings.Join(in.UseRegs(nil), " "); got != w.uses {
			t.Errorf("%s: uses %q, want %q", FormatInst(in), got, w.uses)
		}
		if got := in.Effects(); got != w.eff {
			t.Errorf("%s: effects %b, want %b", FormatInst(in), got, w.eff)
		}
		if got := in.Removable(); got != w.removable {
			t.Errorf("%s: removable %v, want %v", FormatInst(in), got, w.removable)
		}
	}
}

// TestOpTableComplete checks that every opcode has a consistent entry.
func TestOpTableComplete(t *testing.T) {
	for name, info := range opTable {
		if info.Name != name {
			t.Errorf("entry %q is named %q", name, info.Name)
		}
		if info.Dsts > info.MinArgs {
			t.Errorf("%s writes %d operands but may have %d", name, info.Dsts, info.MinArgs)
		}
		if info.Dsts == 0 && info.Effects == 0 {
			t.Errorf("%s writes nothing and has no effect", name)
		}
		// Only opcodes whose operands are labels, callees or nothing
		// lack a shape.
		if info.shape == nil && info.Effects&(Branch|Calls|Ends|Sync) == 0 {
			t.Errorf("%s has no operand shape", name)
		}
	}
}

// TestCheckDestinations checks that the checker, reading the table's
// destination column, refuses a write to an immediate or a special
// register.
func TestCheckDestinations(t *testing.T) {
	for _, c := range []struct{ inst, want string }{
		{"mov.u32 %tid.x, 1;", "read-only special register"},
		{"add.u32 5, %r0, 1;", "must be a register"},
	} {
		src := ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\t.reg .b32 %r<2>;\n\t" + c.inst + "\n}\n"
		m, err := Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", c.inst, err)
		}
		if err := Check(m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error about %q", c.inst, err, c.want)
		}
	}
}

// TestNewInst checks that instructions built as values classify their
// modifiers as parsed ones do, and that the table refuses what PTX lacks.
func TestNewInst(t *testing.T) {
	in, err := NewInst("setp.ne.or.u64", Reg("%p0"), Reg("%r1"), Int(0), Reg("%p1"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(".version 8.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n\tsetp.ne.or.u64 %p0, %r1, 0, %p1;\n}\n")
	if err != nil {
		t.Fatal(err)
	}
	parsed := m.Funcs[0].Body.Stmts[0].(*Inst)
	clearPos(reflect.ValueOf(parsed))
	if !reflect.DeepEqual(in, parsed) {
		t.Errorf("NewInst gives %+v, the parser %+v", in, parsed)
	}
	for _, bad := range []string{"frob.u32", "add.bogus", "add..u32"} {
		if _, err := NewInst(bad, Reg("%r0"), Reg("%r1"), Reg("%r2")); err == nil {
			t.Errorf("NewInst(%q) succeeded", bad)
		}
	}
	if _, err := NewInst("add.u32", Reg("%r0")); err == nil {
		t.Error("NewInst accepted add with one operand")
	}
}
