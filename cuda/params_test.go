package cuda

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gpu"
)

// prm builds a gpu.Param.
func prm(name string, size, align int) gpu.Param {
	return gpu.Param{Name: name, Size: size, Align: align}
}

func TestEntryParams(t *testing.T) {
	for _, tc := range []struct {
		name, ptx, entry string
		want             []gpu.Param
	}{
		{"nvcc style", `.visible .entry saxpy(
	.param .u32 saxpy_param_0,
	.param .f32 saxpy_param_1,
	.param .u64 .ptr .global .align 4 saxpy_param_2,
	.param .u64 saxpy_param_3
)
{ ret; }`, "saxpy", []gpu.Param{prm("saxpy_param_0", 4, 4), prm("saxpy_param_1", 4, 4), prm("saxpy_param_2", 8, 4), prm("saxpy_param_3", 8, 8)}},
		{"no params", ".entry k()\n{ ret; }", "k", nil},
		{"no list", ".entry k\n{ ret; }", "k", nil},
		{"arrays and align", ".entry k(.param .align 8 .b8 s[12], .param .b16 h, .param .f64 d, .param .b32 m[2][3])", "k",
			[]gpu.Param{prm("s", 12, 8), prm("h", 2, 2), prm("d", 8, 8), prm("m", 24, 4)}},
		{"spaced brackets", ".entry k(.param .u8 a [ 3 ])", "k", []gpu.Param{prm("a", 3, 1)}},
		{"second entry, prefix names", `.entry kk(.param .u32 x)
{ ret; }
// .entry k(.param .u64 fake)
/* .entry k(.param .u64 fake2) */
.visible .entry k(.param .f64 y, .param .s8 z)
{ ret; }`, "k", []gpu.Param{prm("y", 8, 8), prm("z", 1, 1)}},
		{"comment inside list", ".entry k(\n.param .u32 a, // first\n/* between */ .param .u64 b\n)", "k", []gpu.Param{prm("a", 4, 4), prm("b", 8, 8)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := entryParams(tc.ptx, tc.entry)
			if err != nil {
				t.Fatalf("entryParams: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestEntryParamsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, ptx, entry string
		line, col        int // 0: no position expected
	}{
		{"missing entry", ".entry other()", "k", 0, 0},
		{"unclosed", ".entry k(\n.param .u32 a", "k", 1, 9},
		{"no type", ".entry k(\n  .param a)", "k", 2, 3},
		{"reg param", ".entry k(\n  .reg .u32 a)", "k", 2, 3},
		{"bad array", ".entry k(.param .u32 a[x])", "k", 1, 24},
		{"bad align", ".entry k(.param .align 3 .u32 a)", "k", 1, 24},
		{"two types", ".entry k(.param .u32 .f32 a)", "k", 1, 22},
		{"empty decl", ".entry k(.param .u32 a,)", "k", 1, 24},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := entryParams(tc.ptx, tc.entry)
			if err == nil {
				t.Fatal("no error")
			}
			var pe *paramError
			if tc.line == 0 {
				if errors.As(err, &pe) {
					t.Errorf("unexpected position in %v", err)
				}
				return
			}
			if !errors.As(err, &pe) {
				t.Fatalf("error %v has no position", err)
			}
			if pe.Line != tc.line || pe.Col != tc.col {
				t.Errorf("error at %d:%d, want %d:%d (%v)", pe.Line, pe.Col, tc.line, tc.col, err)
			}
		})
	}
}

// TestEntryParamsFixtures reads the parameter lists of the nvcc-generated
// PTX fixtures, which gputest checks against the manifests on a GPU.
func TestEntryParamsFixtures(t *testing.T) {
	files, err := filepath.Glob("../gpusim/testdata/cuda/*.ptx")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no PTX fixtures recorded yet")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".ptx")
		ps, err := entryParams(string(b), name)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if len(ps) == 0 {
			t.Errorf("%s: no parameters found", f)
		}
		for _, p := range ps {
			if p.Size != 4 && p.Size != 8 {
				t.Errorf("%s: parameter %+v is neither a 32- nor a 64-bit scalar", f, p)
			}
		}
	}
}

func FuzzEntryParams(f *testing.F) {
	f.Add(".visible .entry k(\n.param .u64 .ptr .global .align 4 a,\n.param .f32 b\n)\n{ ret; }", "k")
	f.Add(".entry k(.param .align 8 .b8 s[12], .param .b16 h)", "k")
	f.Add("/* .entry k( */ .entry k(.param .u32 a[2][3])", "k")
	f.Add(".entry k(", "k")
	f.Fuzz(func(t *testing.T, ptx, name string) {
		ps, err := entryParams(ptx, name)
		if err != nil {
			return
		}
		for _, p := range ps {
			if p.Size <= 0 || p.Align <= 0 || p.Name == "" {
				t.Fatalf("bad param %+v from %q", p, ptx)
			}
		}
	})
}
