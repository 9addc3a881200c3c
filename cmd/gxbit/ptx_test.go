package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

const fixtures = "../../gpusim/testdata/cuda"

// TestPtxRunFixture runs a recorded real-GPU fixture through the CLI on the
// simulator and compares the written buffer with the recorded output.
func TestPtxRunFixture(t *testing.T) {
	out := t.TempDir()
	f := func(name string) string { return filepath.Join(fixtures, name) }
	code := cmdPtxRun([]string{f("saxpy.ptx"), "--kernel", "saxpy", "--grid", "12", "--block", "128", "--out", out,
		"u32:1500", "f32:2.71828175", "buf:" + f("saxpy.x.in.bin"), "buf:" + f("saxpy.y.in.bin")})
	if code != 0 {
		t.Fatalf("exit status %d", code)
	}
	got, err := os.ReadFile(filepath.Join(out, "arg1.bin"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(f("saxpy.y.out.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("saxpy output differs from the real GPU's")
	}
	x, _ := os.ReadFile(filepath.Join(out, "arg0.bin"))
	if in, _ := os.ReadFile(f("saxpy.x.in.bin")); !bytes.Equal(x, in) {
		t.Error("arg0.bin should hold the unchanged input buffer")
	}
}

func TestPtxRunBadInput(t *testing.T) {
	saxpy := filepath.Join(fixtures, "saxpy.ptx")
	bad := filepath.Join(t.TempDir(), "bad.ptx")
	if err := os.WriteFile(bad, []byte(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { frob.u32 %r1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want int
	}{
		{[]string{saxpy, "--kernel", "saxpy", "u32:1"}, 2},                             // too few arguments
		{[]string{saxpy, "--kernel", "saxpy", "--grid", "0", "u32:1"}, 2},              // bad grid
		{[]string{saxpy, "--kernel", "nope", "u32:1", "f32:1", "zero:4", "zero:4"}, 1}, // unknown kernel
		{[]string{saxpy, "--kernel", "saxpy", "q32:1", "f32:1", "zero:4", "zero:4"}, 2},
		{[]string{saxpy, "--kernel", "saxpy", "--grid", "4", "--block", "64", "u32:100000", "f32:1", "zero:4", "zero:4"}, 1}, // out of bounds
		{[]string{bad, "--kernel", "k"}, 1},
		{[]string{"/nonexistent.ptx", "--kernel", "k"}, 2},
	}
	for _, c := range cases {
		if got := cmdPtxRun(append(c.args, "--out", t.TempDir())); got != c.want {
			t.Errorf("gxbit ptx run %v: exit status %d, want %d", c.args, got, c.want)
		}
	}
	if got := cmdPtxCheck([]string{bad}); got != 1 {
		t.Errorf("ptx check of a bad module: exit status %d, want 1", got)
	}
	if got := cmdPtxCheck([]string{saxpy}); got != 0 {
		t.Errorf("ptx check of saxpy: exit status %d", got)
	}
}

// TestPtxRunLimits is the regression test for issue 12 item 8: a kernel
// that never ends stops at --timeout (on by default), --shared beyond 32
// bits is refused rather than cut, an empty file is not a module, and a
// .func declared before its definition runs.
func TestPtxRunLimits(t *testing.T) {
	faults := "../../gpusim/testdata/faults.ptx"
	if got := cmdPtxRun([]string{faults, "--kernel", "forever", "--timeout", "100ms", "--out", t.TempDir()}); got != 1 {
		t.Errorf("endless kernel with --timeout 100ms: exit status %d, want 1", got)
	}
	saxpy := filepath.Join(fixtures, "saxpy.ptx")
	if got := cmdPtxRun([]string{saxpy, "--kernel", "saxpy", "--shared", "4294967396", "u32:1", "f32:1", "zero:4", "zero:4"}); got != 2 {
		t.Errorf("--shared 4294967396: exit status %d, want 2", got)
	}
	empty := filepath.Join(t.TempDir(), "empty.ptx")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := cmdPtxCheck([]string{empty}); got != 1 {
		t.Errorf("gxbit ptx check of an empty file: exit status %d, want 1", got)
	}
	proto := "../../gpusim/testdata/prototype.ptx"
	if got := cmdPtxCheck([]string{proto}); got != 0 {
		t.Errorf("gxbit ptx check of a prototype then its definition: exit status %d", got)
	}
	if got := cmdPtxRun([]string{proto, "--kernel", "k", "--block", "32", "--out", t.TempDir(), "zero:128"}); got != 0 {
		t.Errorf("gxbit ptx run of a prototyped .func: exit status %d", got)
	}
}
