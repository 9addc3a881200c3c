package gvinst

import (
	"fmt"
	"strings"
	"testing"
)

// engineConfig is one way of running GVInst: the reference path alone, the
// specialised compiled forms, or those after the optimization passes.
type engineConfig struct {
	name     string
	optimize bool
	noFast   bool
}

func allEngines() []engineConfig {
	var out []engineConfig
	for _, e := range engines() {
		out = append(out, engineConfig{e.name, e.optimize, e.noFast})
	}
	return out
}

// machine is a guest with code at 0x1000 and a read-write data page at
// dataBase (16 pages).
type machine struct {
	mem *Memory
	it  *Interpreter
	cpu *CPU
}

const dataPages = 16

// newMachine builds a machine whose code is the given instruction lines as
// one block at 0x1000, ended by SYSCALL 0x2000 unless the lines end the
// block themselves.
func newMachine(t testing.TB, e engineConfig, body string) *machine {
	t.Helper()
	mem := NewMemory(0)
	if err := mem.Map(dataBase, dataPages*PageSize, PermRead|PermWrite); err != nil {
		t.Fatal(err)
	}
	src := "vblock 0x1000..0x1010:\n  # 0x1000: test\n" + body
	lines := strings.Split(strings.TrimSpace(body), "\n")
	last := strings.Fields(lines[len(lines)-1])
	if op, ok := ParseOp(strings.Split(last[0], ".")[0]); !ok || !op.EndsBlock() {
		src += "  SYSCALL 0x2000\n"
	}
	tr := newTextTranslator(t, mem, src)
	it := NewInterpreter(mem, tr, InterpOptions{Optimize: e.optimize})
	it.noFast = e.noFast
	cpu := &CPU{PC: 0x1000}
	cpu.State[MXCSR] = 0x1f80 // the reset value: every SSE exception masked
	return &machine{mem: mem, it: it, cpu: cpu}
}

// run runs the machine until it stops.
func (m *machine) run(t testing.TB) Stop {
	t.Helper()
	return m.it.Run(m.cpu, 0)
}

// mustSyscall runs the machine and fails unless it reaches the block's
// closing SYSCALL.
func (m *machine) mustSyscall(t testing.TB) {
	t.Helper()
	if stop := m.run(t); stop.Kind != StopSyscall {
		t.Fatalf("stop = %v", stop)
	}
}

func li(r string, v uint64) string { return fmt.Sprintf("  LI.u64 %s, %d\n", r, v) }
