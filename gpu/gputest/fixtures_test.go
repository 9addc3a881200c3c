package gputest

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gpu"
)

func f32bytes(vs ...float32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func TestCompare(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	tol := &Tolerance{Elem: "f32", Abs: 1e-6, Rel: 1e-6}
	for _, tc := range []struct {
		name      string
		tol       *Tolerance
		got, want []byte
		mismatch  int // number of mismatches expected; 0 for a match
	}{
		{"exact equal", nil, f32bytes(1, 2, 3), f32bytes(1, 2, 3), 0},
		{"exact one ulp", nil, f32bytes(1, 2, 3), f32bytes(1, math.Nextafter32(2, 3), 3), 1},
		{"exact zero signs", nil, f32bytes(0), f32bytes(float32(math.Copysign(0, -1))), 1},
		{"exact NaN bits", nil, binary.LittleEndian.AppendUint32(nil, 0x7fffffff), binary.LittleEndian.AppendUint32(nil, 0x7fc00000), 1},
		{"exact tail bytes", nil, []byte{1, 2, 3, 4, 5, 6}, []byte{1, 2, 3, 4, 5, 7}, 1},
		{"tolerance within", tol, f32bytes(1.0000005, 0), f32bytes(1, 9e-7), 0},
		{"tolerance outside", tol, f32bytes(1.00001, 0), f32bytes(1, 3e-6), 2},
		{"tolerance NaN", tol, f32bytes(nan, 1), f32bytes(nan, nan), 1},
		{"tolerance inf", tol, f32bytes(inf, inf), f32bytes(inf, -inf), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(ParamSpec{Name: "b", Tolerance: tc.tol}, tc.got, tc.want)
			if tc.mismatch == 0 {
				if d != "" {
					t.Errorf("unexpected difference: %s", d)
				}
				return
			}
			if !strings.Contains(d, " "+string(rune('0'+tc.mismatch))+" mismatches") {
				t.Errorf("want %d mismatches, got %q", tc.mismatch, d)
			}
		})
	}
	if d := Compare(ParamSpec{Name: "b"}, []byte{1}, []byte{1, 2}); !strings.Contains(d, "want 2") {
		t.Errorf("length mismatch not reported: %q", d)
	}
}

// writeFixture writes a manifest and its files into dir.
func writeFixture(t *testing.T, dir, manifest string, files map[string][]byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "k.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadFixturesValidation(t *testing.T) {
	ptx := []byte(".entry k()")
	good := `{"name": "k", "ptx": "k.ptx", "kernel": "k", "grid": [1,1,1], "block": [32,1,1], "shared_bytes": 0,
	  "params": [{"name": "n", "type": "u32", "bits": "0x20"}, %s]}`
	for _, tc := range []struct {
		name, buf string
		files     map[string][]byte
		wantErr   string
	}{
		{"ok", `{"name": "o", "type": "buffer", "size": 4, "input": "i.bin", "expected": "o.bin"}`,
			map[string][]byte{"i.bin": {1, 2, 3, 4}, "o.bin": {5, 6, 7, 8}}, ""},
		{"size mismatch", `{"name": "o", "type": "buffer", "size": 8, "expected": "o.bin"}`,
			map[string][]byte{"o.bin": {5, 6, 7, 8}}, "has 4 bytes, want 8"},
		{"missing file", `{"name": "o", "type": "buffer", "size": 4, "expected": "nope.bin"}`, nil, "nope.bin"},
		{"no outputs", `{"name": "o", "type": "buffer", "size": 4, "input": "i.bin"}`,
			map[string][]byte{"i.bin": {1, 2, 3, 4}}, "no buffer has an expected output"},
		{"tolerance without approx", `{"name": "o", "type": "buffer", "size": 4, "expected": "o.bin", "tolerance": {"elem": "f32", "abs": 1}}`,
			map[string][]byte{"o.bin": {5, 6, 7, 8}}, "not approx"},
		{"path escape", `{"name": "o", "type": "buffer", "size": 4, "expected": "../o.bin"}`, nil, "must be in the fixture folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string][]byte{"k.ptx": ptx}
			for k, v := range tc.files {
				files[k] = v
			}
			writeFixture(t, dir, strings.Replace(good, "%s", tc.buf, 1), files)
			fs, err := LoadFixtures(dir)
			if tc.wantErr == "" {
				if err != nil || len(fs) != 1 {
					t.Fatalf("LoadFixtures: %v (%d fixtures)", err, len(fs))
				}
				args, err := fs[0].Args(map[string]gpu.DevicePtr{"o": 0x1000})
				if err != nil {
					t.Fatal(err)
				}
				if len(args) != 2 || len(args[0]) != 4 || args[0][0] != 0x20 || len(args[1]) != 8 || args[1][1] != 0x10 {
					t.Errorf("Args = %v", args)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("LoadFixtures error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestRecordedFixtures loads the fixtures recorded on a real GPU, so that a
// broken or incomplete recording fails here, on machines without a GPU.
func TestRecordedFixtures(t *testing.T) {
	dir, err := FixtureDir()
	if err != nil {
		t.Fatal(err)
	}
	fs, err := LoadFixtures(dir)
	if err != nil {
		t.Fatal(err)
	}
	cus, err := filepath.Glob(filepath.Join(dir, "*.cu"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != len(cus) {
		t.Errorf("%d manifests for %d .cu kernels in %s", len(fs), len(cus), dir)
	}
	for _, f := range fs {
		if !strings.Contains(f.Source, ".entry "+f.Kernel+"(") {
			t.Errorf("%s: %s has no .entry %s", f.Name, f.PTX, f.Kernel)
		}
	}
}
