package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// TestLiftPrintsParseableGVInst lifts main of a small static program and
// checks the printed text parses back into blocks that verify.
func TestLiftPrintsParseableGVInst(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "p.c")
	bin := filepath.Join(dir, "p")
	code := "int main(int c, char **v){ int s = 0; for (int i = 0; i < c * 10; i++) s += i * i; return s & 0x7f; }\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-O2", "-static", "-o", bin, src).CombinedOutput(); err != nil {
		t.Skipf("gcc -static: %v\n%s", err, out)
	}
	for _, args := range [][]string{{bin}, {"-O", "--func", "main", bin}} {
		text, status := captureStdout(t, func() int { return cmdLift(args) })
		if status != 0 {
			t.Fatalf("gxbit lift %v: exit status %d", args, status)
		}
		blocks, err := gvinst.Parse(text)
		if err != nil {
			t.Fatalf("gxbit lift %v printed text that does not parse: %v\n%s", args, err, text)
		}
		if len(blocks) < 2 {
			t.Fatalf("gxbit lift %v: %d blocks, want the loop's blocks too", args, len(blocks))
		}
		for _, b := range blocks {
			if err := gvinst.Verify(b); err != nil {
				t.Errorf("%v", err)
			}
		}
		if !strings.Contains(text, "# 0x") || !strings.Contains(text, "BRANCH") {
			t.Errorf("gxbit lift %v: no x86 comments or branch:\n%s", args, text)
		}
	}
	if status := cmdLift([]string{"--func", "no_such_function", bin}); status != 2 {
		t.Errorf("unknown function: exit status %d, want 2", status)
	}
	if status := cmdLift([]string{src}); status != 2 {
		t.Errorf("lifting a C source file: exit status %d, want 2", status)
	}
}
