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
			var first *Fault
			for _, engine := range testEngines() {
				var out bytes.Buffer
				res, err := Run(context.Background(), Config{Path: bin, Stdout: &out, Stderr: &out, Engine: engine})
				if err != nil {
					t.Fatal(err)
				}
				if first == nil {
					first = res.Fault
				} else if res.Fault != nil && (res.Fault.PC != first.PC || res.Fault.FaultAddr != first.FaultAddr || res.Fault.Insn != first.Insn) {
					t.Errorf("%s: fault %+v, the interpreter's %+v", engine, res.Fault, first)
				}
				if res.Outcome != Faulted || res.Fault == nil || res.Fault.Kind != c.kind {
					t.Fatalf("outcome %v fault %+v, want a %v fault", res.Outcome, res.Fault, c.kind)
				}
				if res.ExitStatus != c.status {
					t.Errorf("exit status %d, want %d", res.ExitStatus, c.status)
				}
				d := res.Diagnosis()
				if !strings.Contains(d, c.diag) || strings.Contains(d, "\n") || res.Fault.PC == 0 || res.Fault.Insn == "" {
					t.Errorf("%s: diagnosis %q: want one line containing %q, with the instruction", engine, d, c.diag)
				}
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
	var counts []uint64
	for _, engine := range testEngines() {
		res, err := Run(context.Background(), Config{Path: loop, MaxInsns: 5_000_000, Engine: engine})
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != OverBudget || res.Stats.GuestInstructions < 5_000_000 || !strings.Contains(res.Diagnosis(), "instruction budget") {
			t.Errorf("%s: budget: outcome %v after %d instructions", engine, res.Outcome, res.Stats.GuestInstructions)
		}
		counts = append(counts, res.Stats.GuestInstructions)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		res, err = Run(ctx, Config{Path: loop, Engine: engine})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != Cancelled {
			t.Errorf("%s: cancel: outcome %v", engine, res.Outcome)
		}
	}
	// Both engines stop before the first block that starts after the
	// budget is spent.
	for i := range counts {
		if counts[i] != counts[0] {
			t.Errorf("the engines stopped the budget run after different counts: %v", counts)
		}
	}
}

// TestSelfModifyingCode runs a program that patches the immediate of the
// instruction right after the store that patches it, as hardware runs it:
// the patched instruction executes.
func TestSelfModifyingCode(t *testing.T) {
	bin := compileStatic(t, "smc", `#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
int main(void) {
	/* mov byte ptr [rip+1], 7 ; mov eax, 1 ; ret: the store writes the
	   immediate of the mov that follows it. */
	static const unsigned char code[] = {0xc6, 0x05, 0x01, 0x00, 0x00, 0x00, 0x07, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3};
	unsigned char *p = mmap(0, 4096, PROT_READ|PROT_WRITE|PROT_EXEC, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) return 2;
	int sum = 0;
	for (int i = 0; i < 3; i++) {
		memcpy(p, code, sizeof code);
		sum = sum * 10 + ((int (*)(void))p)();
	}
	printf("%d\n", sum);
	return 0;
}`)
	native, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatalf("native: %v", err)
	}
	for _, engine := range testEngines() {
		var out bytes.Buffer
		res, err := Run(context.Background(), Config{Path: bin, Stdout: &out, Engine: engine})
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != string(native) || res.ExitStatus != 0 {
			t.Errorf("%s: printed %q (status %d), natively %q", engine, out.String(), res.ExitStatus, native)
		}
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
