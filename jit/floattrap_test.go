//go:build linux && amd64

package jit

import (
	"math"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// divLoop divides x0 by the s1 doubles at [s7] in turn; at s1 = 3 it sets
// mxcsr to s2 (a guest LDMXCSR), then makes a system call.
const divLoop = `vblock 0x1000..0x1010:
  # 0x1000: movsd xmm1, qword ptr [rdi]
  GET.u64 v0, s7
  LD.f64 v1, v0(0)
  PUT.f64 x1, v1
  # 0x1004: divsd xmm0, xmm1
  GET.f64 v2, x0
  GET.f64 v13, x1
  DIV.f64 v3, v2, v13
  PUT.f64 x0, v3
  # 0x1008: add rdi, 8
  GET.u64 v4, s7
  ADD.u64 v5, v4, 8
  PUT.u64 s7, v5
  # 0x100c: dec rcx; ldmxcsr when rcx is 3; jne
  GET.u64 v6, s1
  SUB.u64 v7, v6, 1
  PUT.u64 s1, v7
  CMP.eq.u64 v8, v7, 3
  GET.u64 v9, s2
  GET.u64 v10, mxcsr
  SELECT.u64 v11, v8, v9, v10
  PUT.u64 mxcsr, v11
  CMP.ne.u64 v12, v7, 0
  BRANCH v12, 0x1000, 0x1010
vblock 0x1010..0x1012:
  # 0x1010: syscall
  SYSCALL 0x1012
`

// TestFloatTrapGuard runs divLoop on both engines with SSE exceptions
// unmasked from the start, unmasked in the middle of the loop (the
// compiled unit must stop computing floats inline), and masked, dividing
// by zero at element zeroAt or never, and requires the same stop, state
// and exception flags: the compiled code checks the masks once per unit
// entry, not per float instruction.
func TestFloatTrapGuard(t *testing.T) {
	const n = 10
	const zeMasked = 0x1f80
	const zeUnmasked = 0x1f80 &^ (4 << 7)
	cases := []struct {
		name          string
		mxcsr, later  uint64
		zeroAt        int
		wantTrap      bool
		wantTrapAfter int // divisions done before the trap
	}{
		{"unmasked from the start", zeUnmasked, zeUnmasked, 5, true, 5},
		{"unmasked from the start, no zero", zeUnmasked, zeUnmasked, -1, false, 0},
		{"unmasked in the loop", zeMasked, zeUnmasked, 8, true, 8},
		{"unmasked in the loop, zero before", zeMasked, zeUnmasked, 2, false, 0},
		{"masked", zeMasked, zeMasked, 4, false, 0},
	}
	for _, c := range cases {
		var results [2]gvinst.CPU
		var stops [2]gvinst.Stop
		for k, useJIT := range []bool{false, true} {
			mem := gvinst.NewMemory(0)
			if err := mem.Map(dataBase, gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				v := 1.5 + float64(i)
				if i == c.zeroAt {
					v = 0
				}
				if err := mem.Store(dataBase+8*uint64(i), 8, math.Float64bits(v)); err != nil {
					t.Fatal(err)
				}
			}
			tr := newTextTranslator(t, mem, divLoop)
			var e gvinst.Engine = gvinst.NewInterpreter(mem, tr, gvinst.InterpOptions{})
			if useJIT {
				j, err := New(mem, tr, gvinst.InterpOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer j.Close()
				e = j
			}
			cpu := gvinst.CPU{PC: 0x1000}
			cpu.State[gvinst.S7] = dataBase
			cpu.State[gvinst.S1] = n
			cpu.State[gvinst.S2] = c.later
			cpu.State[gvinst.MXCSR] = c.mxcsr
			cpu.State[gvinst.X0] = math.Float64bits(1e6)
			stops[k] = e.Run(&cpu, 0)
			results[k] = cpu
		}
		want, got := stops[0], stops[1]
		if got.Kind != want.Kind || got.PC != want.PC || got.Trap != want.Trap {
			t.Errorf("%s: jit stops with %v, the interpreter with %v", c.name, got, want)
		}
		if results[0] != results[1] {
			t.Errorf("%s: jit ends with %#x, the interpreter with %#x", c.name, results[1].State, results[0].State)
		}
		if trapped := want.Kind == gvinst.StopTrap; trapped != c.wantTrap {
			t.Errorf("%s: the interpreter stops with %v, want a trap: %v", c.name, want, c.wantTrap)
		} else if trapped && (want.PC != 0x1004 || results[0].State[gvinst.S7] != dataBase+8*uint64(c.wantTrapAfter)) {
			t.Errorf("%s: trap %v with rdi %#x, want at 0x1004 after %d elements", c.name, want, results[0].State[gvinst.S7], c.wantTrapAfter)
		}
	}
}
