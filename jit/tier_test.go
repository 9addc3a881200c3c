//go:build linux && amd64

package jit

import (
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// TestTieredSumLoop runs sumLoop with tiering on: the loop's block starts
// in the interpreter and is compiled once hot; the sum, the instruction
// count and the stop are those of the untiered run, and both tiers did
// part of the work.
func TestTieredSumLoop(t *testing.T) {
	for _, budget := range []uint64{0, 1001} {
		mem := gvinst.NewMemory(0)
		if err := mem.Map(dataBase, 16*gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		const n = 3000
		want := uint64(0)
		for i := uint64(0); i < n; i++ {
			v := i*i*7919 + 3
			if budget == 0 || 2+4*i+4 <= budget {
				want += v
			}
			if err := mem.Store(dataBase+8*i, 8, v); err != nil {
				t.Fatal(err)
			}
		}
		e, err := New(mem, newTextTranslator(t, mem, sumLoop), gvinst.InterpOptions{Optimize: true, HotAfter: 5})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		cpu := &gvinst.CPU{PC: 0x1000}
		cpu.State[gvinst.S7] = dataBase
		cpu.State[gvinst.S1] = n
		stop := e.Run(cpu, budget)
		st := e.Stats()
		if budget != 0 {
			// Budgets stop at block boundaries: 2 for the first block,
			// then 4 per iteration.
			if stop.Kind != gvinst.StopBudget || st.GuestInsns < budget || st.GuestInsns >= budget+4 {
				t.Fatalf("budget %d: stop %v after %d instructions", budget, stop, st.GuestInsns)
			}
			continue
		}
		if stop.Kind != gvinst.StopSyscall || stop.PC != 0x101f {
			t.Fatalf("stop = %v", stop)
		}
		if got := cpu.State[gvinst.S0]; got != want {
			t.Errorf("sum = %d, want %d", got, want)
		}
		if st.GuestInsns != 2+4*n+1 {
			t.Errorf("guest instructions = %d, want %d", st.GuestInsns, 2+4*n+1)
		}
		if st.InterpInsns == 0 || st.InterpInsns > 100 || st.UnitsCompiled != 1 {
			t.Errorf("interpreted %d instructions and compiled %d units, want a few and the loop", st.InterpInsns, st.UnitsCompiled)
		}
	}
}

// TestTieredBreakpoint: a breakpoint in cold code stops a tiered run as it
// stops an untiered one, except at the run's first block.
func TestTieredBreakpoint(t *testing.T) {
	mem := gvinst.NewMemory(0)
	if err := mem.Map(dataBase, 16*gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
		t.Fatal(err)
	}
	opts := gvinst.InterpOptions{HotAfter: 3, Breakpoints: map[uint64]bool{0x1010: true}}
	e, err := New(mem, newTextTranslator(t, mem, sumLoop), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cpu := &gvinst.CPU{PC: 0x1000}
	cpu.State[gvinst.S7] = dataBase
	cpu.State[gvinst.S1] = 10
	for i := 0; i < 10; i++ {
		stop := e.Run(cpu, 0)
		if stop.Kind != gvinst.StopBreakpoint || stop.PC != 0x1010 {
			t.Fatalf("run %d: stop %v, want the breakpoint at 0x1010", i, stop)
		}
	}
	if stop := e.Run(cpu, 0); stop.Kind != gvinst.StopSyscall {
		t.Fatalf("last run: stop %v, want the system call", stop)
	}
}
