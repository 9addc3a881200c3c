package pipeline

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/loader"
)

// gccStatic builds the C file src into a static executable at out, with
// the extra gcc flags. It skips the test when gcc is missing and fails it
// when the build fails, so a broken test program cannot pass as a skip.
func gccStatic(t *testing.T, src, out string, flags ...string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found")
	}
	args := append(append([]string{"-static", "-o", out}, flags...), src)
	if b, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc -static: %v\n%s", err, b)
	}
	return out
}

// compileStatic writes a C program given as text and builds it with gcc
// -O1 -static.
func compileStatic(t *testing.T, name, src string) string {
	t.Helper()
	dir := t.TempDir()
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return gccStatic(t, c, filepath.Join(dir, name), "-O1")
}

// TestGuestFaults checks that a guest that faults stops with a one-line
// diagnosis naming the kind, the address and the instruction, and the exit
// status a shell reports for the signal the native program dies of.
func TestGuestFaults(t *testing.T) {
	cases := []struct {
		name, src string
		kind      gvinst.TrapKind
		status    int
		diag      string
	}{
		{"nullread", "int main(int c, char **v){ volatile int *p = (int*)(long)(c-1); return *p; }", gvinst.TrapSegv, 139, "segmentation fault (SIGSEGV)"},
		{"wildwrite", "int main(){ *(volatile long*)0x7000dead0000 = 1; return 0; }", gvinst.TrapSegv, 139, "write of 0x7000dead0000: unmapped address"},
		{"ud2", "int main(){ __builtin_trap(); }", gvinst.TrapIllegal, 132, "illegal instruction at 0x"},
		{"divzero", "int main(int c, char **v){ volatile int z = c-1; return 10 / z; }", gvinst.TrapDivide, 136, "divide error (SIGFPE)"},
		{"avx", "int main(){ __asm__ volatile(\"vaddpd %ymm1, %ymm2, %ymm3\"); return 0; }", gvinst.TrapUnsupported, 132, "unsupported instruction at 0x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin := compileStatic(t, c.name, c.src)
			var out bytes.Buffer
			res, err := Run(context.Background(), Config{Path: bin, Stdout: &out, Stderr: &out})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != Faulted || res.Fault == nil || res.Fault.Kind != c.kind {
				t.Fatalf("outcome %v fault %+v, want a %v fault", res.Outcome, res.Fault, c.kind)
			}
			if res.ExitStatus != c.status {
				t.Errorf("exit status %d, want %d", res.ExitStatus, c.status)
			}
			d := res.Diagnosis()
			if !strings.Contains(d, c.diag) || strings.Contains(d, "\n") || res.Fault.PC == 0 || res.Fault.Insn == "" {
				t.Errorf("diagnosis %q: want one line containing %q, with the instruction", d, c.diag)
			}
		})
	}
}

// TestExitPaths checks exit statuses that do not come from faults: abort()
// ends the guest as SIGABRT would, exit(3) passes its status through, and
// a starting thread is refused with a clear error.
func TestExitPaths(t *testing.T) {
	abort := compileStatic(t, "abort", "#include <stdlib.h>\nint main(){ abort(); }")
	res, err := Run(context.Background(), Config{Path: abort})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Signaled || res.Signal != 6 || res.ExitStatus != 134 {
		t.Errorf("abort: outcome %v signal %d status %d, want SIGABRT and 134", res.Outcome, res.Signal, res.ExitStatus)
	}
	thread := compileStatic(t, "thread", `#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
static char stack[65536];
static int f(void *a){ return 0; }
int main(){ return clone(f, stack + sizeof stack, CLONE_VM|CLONE_THREAD|CLONE_SIGHAND, 0) < 0; }`)
	res, err = Run(context.Background(), Config{Path: thread})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Refused || !strings.Contains(res.Diagnosis(), "thread") {
		t.Errorf("clone of a thread: outcome %v, diagnosis %q", res.Outcome, res.Diagnosis())
	}
}

// TestBudgets checks the instruction budget and cancellation: an endless
// loop stops, with its own outcome, instead of hanging.
func TestBudgets(t *testing.T) {
	loop := compileStatic(t, "loop", "int main(){ for (volatile int i = 0;; i++); }")
	res, err := Run(context.Background(), Config{Path: loop, MaxInsns: 5_000_000})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OverBudget || res.Stats.GuestInstructions < 5_000_000 || !strings.Contains(res.Diagnosis(), "instruction budget") {
		t.Errorf("budget: outcome %v after %d instructions", res.Outcome, res.Stats.GuestInstructions)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err = Run(ctx, Config{Path: loop})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Cancelled {
		t.Errorf("cancel: outcome %v", res.Outcome)
	}
}

// TestBadPrograms checks that files gxbit cannot run are refused with a
// *loader.FormatError naming the problem.
func TestBadPrograms(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), Config{Path: script})
	var fe *loader.FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "not an ELF file") {
		t.Errorf("script: %v", err)
	}
	if _, err := Run(context.Background(), Config{Path: filepath.Join(dir, "missing")}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
