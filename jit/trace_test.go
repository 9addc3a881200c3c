//go:build linux && amd64

package jit

import (
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// guardedJump is a loop of two blocks joined by a computed jump: 0x1000
// jumps to 0x4000 while s15 > 50, to 0x5000 (which counts in s2 and goes
// on to 0x4000) after; 0x4000 counts s15 down and loops.
const guardedJump = `vblock 0x1000..0x1008:
  # 0x1000: add
  GET.u64 v0, s0
  GET.u64 v1, s1
  ADD.u64 v2, v0, v1
  PUT.u64 s0, v2
  # 0x1004: jmp reg
  LI.u64 v3, 0x4000
  LI.u64 v4, 0x5000
  GET.u64 v5, s15
  CMP.gtu.u64 v6, v5, 50
  SELECT.u64 v7, v6, v3, v4
  JMPR v7
vblock 0x4000..0x4004:
  # 0x4000: dec; jnz
  GET.u64 v0, s15
  SUB.u64 v1, v0, 1
  PUT.u64 s15, v1
  CMP.ne.u64 v2, v1, 0
  BRANCH v2, 0x1000, 0x3000
vblock 0x5000..0x5004:
  # 0x5000: inc; jmp
  GET.u64 v0, s2
  ADD.u64 v1, v0, 1
  PUT.u64 s2, v1
  JMP 0x4000
vblock 0x3000..0x3002:
  # 0x3000: syscall
  SYSCALL 0x3002
`

// TestTraceThroughComputedJump: the jump seen going to one target forms a
// trace through it, whose guard sends the other target through the jump
// cache; the guest state and instruction count are the interpreter's.
func TestTraceThroughComputedJump(t *testing.T) {
	run := func(e gvinst.Engine) (gvinst.Stop, gvinst.CPU) {
		cpu := gvinst.CPU{PC: 0x1000}
		cpu.State[gvinst.S1] = 7
		cpu.State[gvinst.S15] = 100
		return e.Run(&cpu, 0), cpu
	}
	mem := gvinst.NewMemory(0)
	ref := gvinst.NewInterpreter(mem, newTextTranslator(t, mem, guardedJump), gvinst.InterpOptions{})
	wantStop, want := run(ref)
	e, err := New(mem, newTextTranslator(t, mem, guardedJump), gvinst.InterpOptions{Optimize: true, HotAfter: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	stop, got := run(e)
	if stop.Kind != wantStop.Kind || stop.PC != wantStop.PC || got != want {
		t.Fatalf("jit stops with %v, s0 %d, s2 %d; the interpreter with %v, s0 %d, s2 %d", stop, got.State[gvinst.S0], got.State[gvinst.S2], wantStop, want.State[gvinst.S0], want.State[gvinst.S2])
	}
	if want.State[gvinst.S2] != 50 {
		t.Fatalf("the program counted %d jumps to 0x5000, want 50", want.State[gvinst.S2])
	}
	st := e.Stats()
	if st.TraceBlocks == 0 {
		t.Errorf("no trace was formed")
	}
	if st.GuestInsns != ref.Stats().GuestInsns {
		t.Errorf("jit ran %d guest instructions, the interpreter %d", st.GuestInsns, ref.Stats().GuestInsns)
	}
}

// storeIntoLaterBlock loops over two blocks, the first of which stores
// into the page of the second (self-modifying code, as far as the engines
// can tell): a trace of both drops itself at the store.
const storeIntoLaterBlock = `vblock 0x1000..0x1008:
  # 0x1000: store
  GET.u64 v0, s7
  GET.u64 v1, s15
  ST.u64 v0(8), v1
  GET.u64 v2, s0
  ADD.u64 v3, v2, v1
  PUT.u64 s0, v3
  # 0x1004: jmp
  JMP 0x4000
vblock 0x4000..0x4004:
  # 0x4000: dec; jnz
  GET.u64 v0, s15
  SUB.u64 v1, v0, 1
  PUT.u64 s15, v1
  CMP.ne.u64 v2, v1, 0
  BRANCH v2, 0x1000, 0x3000
vblock 0x3000..0x3002:
  # 0x3000: syscall
  SYSCALL 0x3002
`

// TestTraceStoreIntoItsCode: a store into the page of a later block of
// the running trace drops the trace and the run goes on exactly, on both
// engines, to the same state, memory and instruction count.
func TestTraceStoreIntoItsCode(t *testing.T) {
	var st gvinst.EngineStats
	run := func(jit bool) (gvinst.Stop, gvinst.CPU, uint64, uint64) {
		mem := gvinst.NewMemory(0)
		if err := mem.Map(0x1000, 0x5000, gvinst.PermRead|gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		var e gvinst.Engine = gvinst.NewInterpreter(mem, newTextTranslator(t, mem, storeIntoLaterBlock), gvinst.InterpOptions{})
		if jit {
			j, err := New(mem, newTextTranslator(t, mem, storeIntoLaterBlock), gvinst.InterpOptions{Optimize: true, HotAfter: 3})
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			e = j
		}
		cpu := gvinst.CPU{PC: 0x1000}
		cpu.State[gvinst.S7] = 0x4000
		cpu.State[gvinst.S15] = 40
		stop := e.Run(&cpu, 0)
		v, err := mem.Load(0x4008, 8)
		if err != nil {
			t.Fatal(err)
		}
		st = e.Stats()
		return stop, cpu, v, st.GuestInsns
	}
	wantStop, want, wantMem, wantN := run(false)
	stop, got, gotMem, gotN := run(true)
	if stop.Kind != wantStop.Kind || stop.PC != wantStop.PC || got != want || gotMem != wantMem || gotN != wantN {
		t.Fatalf("jit: %v, s0 %d, [0x4008] %d, %d instructions; interpreter: %v, s0 %d, [0x4008] %d, %d instructions",
			stop, got.State[gvinst.S0], gotMem, gotN, wantStop, want.State[gvinst.S0], wantMem, wantN)
	}
	if st.TraceBlocks == 0 || st.BlocksInvalidated == 0 {
		t.Errorf("jit: %d blocks in traces, %d invalidated; want a trace that drops itself", st.TraceBlocks, st.BlocksInvalidated)
	}
}
