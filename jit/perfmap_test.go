//go:build linux && amd64

package jit

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// TestPerfMap runs sumLoop with the perf map on and checks that it names
// each compiled unit once, by its guest address, with host ranges inside
// the code arena.
func TestPerfMap(t *testing.T) {
	path := fmt.Sprintf("/tmp/perf-%d.map", os.Getpid())
	os.Remove(path)
	defer os.Remove(path)
	t.Setenv(PerfMapEnv, "1")
	mem := gvinst.NewMemory(0)
	if err := mem.Map(dataBase, gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
		t.Fatal(err)
	}
	e, err := New(mem, newTextTranslator(t, mem, sumLoop), gvinst.InterpOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cpu := &gvinst.CPU{PC: 0x1000}
	cpu.State[gvinst.S7] = dataBase
	cpu.State[gvinst.S1] = 10
	if stop := e.Run(cpu, 0); stop.Kind != gvinst.StopSyscall {
		t.Fatalf("stop = %v", stop)
	}
	lo, hi := e.arena.addr(0), e.arena.addr(0)+uintptr(len(e.arena.mem))
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var start, size uintptr
		var name string
		if n, err := fmt.Sscanf(line, "%x %x %s", &start, &size, &name); n != 3 || err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if start < lo || size == 0 || start+size > hi {
			t.Errorf("line %q: range outside the arena [%#x, %#x)", line, lo, hi)
		}
		if names[name] {
			t.Errorf("unit %s named twice", name)
		}
		names[name] = true
	}
	want := []string{"jit:0x1000", "jit-loop:0x1010", "jit:0x101d"}
	if len(names) != len(want) {
		t.Errorf("perf map names %v, want %v", names, want)
	}
	for _, w := range want {
		if !names[w] {
			t.Errorf("perf map lacks %s: %q", w, b)
		}
	}
}

// TestPerfMapParts runs sumLoop with the perf map naming parts and checks
// that the parts of each unit tile its code, that the entries, instructions
// and exits are named, each entry once per unit.
func TestPerfMapParts(t *testing.T) {
	path := fmt.Sprintf("/tmp/perf-%d.map", os.Getpid())
	os.Remove(path)
	defer os.Remove(path)
	t.Setenv(PerfMapEnv, "parts")
	mem := gvinst.NewMemory(0)
	if err := mem.Map(dataBase, gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
		t.Fatal(err)
	}
	e, err := New(mem, newTextTranslator(t, mem, sumLoop), gvinst.InterpOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cpu := &gvinst.CPU{PC: 0x1000}
	cpu.State[gvinst.S7] = dataBase
	cpu.State[gvinst.S1] = 10
	if stop := e.Run(cpu, 0); stop.Kind != gvinst.StopSyscall {
		t.Fatalf("stop = %v", stop)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	var next uintptr
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var start, size uintptr
		var name string
		if n, err := fmt.Sscanf(line, "%x %x %s", &start, &size, &name); n != 3 || err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		entry := strings.HasPrefix(name, "part:entry@0x")
		if entry {
			name = "part:entry"
		}
		if !entry && i > 0 && start != next {
			t.Errorf("line %q starts at %#x, not where the part before ended (%#x)", line, start, next)
		}
		next = start + size
		names[name]++
	}
	for _, w := range []string{"part:entry", "part:exit:BRANCH", "part:exit:SYSCALL", "part:ADD.u64", "part:LD.u64"} {
		if names[w] == 0 {
			t.Errorf("the parts %v lack %s", names, w)
		}
	}
	if names["part:entry"] != 3 {
		t.Errorf("%d entries, want one per unit (3)", names["part:entry"])
	}
	for n := range names {
		if !strings.HasPrefix(n, "part:") || strings.Contains(n, " ") {
			t.Errorf("odd part name %q", n)
		}
	}
}
