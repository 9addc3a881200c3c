//go:build linux && amd64

package jit

import (
	"fmt"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// recursion is a guest program whose function at 0x2000 calls itself s1
// times (by CALL, or by CALLR through s2 when s2 is not 0), counting the
// returns in s0; a call made with s3 set returns to 0x1040 instead, its
// return address replaced on the stack (as longjmp or a hand-made
// continuation do), and RET jumps to 0x8000000000000000 when s5 is set.
// The stack starts at s4.
const recursion = `vblock 0x1000..0x1010:
  # 0x1000: call 0x2000
  GET.u64 v0, s4
  SUB.u64 v1, v0, 8
  LI.u64 v2, 0x1010
  ST.u64 v1(0), v2
  PUT.u64 s4, v1
  CALL 0x2000, 0x1010
vblock 0x1010..0x1012:
  # 0x1010: syscall
  SYSCALL 0x1012
vblock 0x1040..0x1042:
  # 0x1040: syscall
  SYSCALL 0x1042
vblock 0x2000..0x2008:
  # 0x2000: test rcx, rcx; jz 0x2030
  GET.u64 v0, s1
  CMP.eq.u64 v1, v0, 0
  BRANCH v1, 0x2030, 0x2008
vblock 0x2008..0x2010:
  # 0x2008: dec rcx; test rdx, rdx; jnz 0x2040
  GET.u64 v0, s1
  SUB.u64 v1, v0, 1
  PUT.u64 s1, v1
  GET.u64 v2, s2
  CMP.ne.u64 v3, v2, 0
  BRANCH v3, 0x2040, 0x2010
vblock 0x2010..0x2020:
  # 0x2010: call 0x2000
  GET.u64 v2, s4
  SUB.u64 v3, v2, 8
  LI.u64 v4, 0x2020
  ST.u64 v3(0), v4
  PUT.u64 s4, v3
  CALL 0x2000, 0x2020
vblock 0x2040..0x2050:
  # 0x2040: call rdx
  GET.u64 v0, s2
  GET.u64 v2, s4
  SUB.u64 v3, v2, 8
  LI.u64 v4, 0x2020
  ST.u64 v3(0), v4
  PUT.u64 s4, v3
  CALLR v0, 0x2020
vblock 0x2020..0x2028:
  # 0x2020: inc rax
  GET.u64 v0, s0
  ADD.u64 v1, v0, 1
  PUT.u64 s0, v1
  # 0x2024: jmp 0x2030
  JMP 0x2030
vblock 0x2030..0x2040:
  # 0x2030: test rbx, rbx; jz 0x2038
  GET.u64 v0, s3
  CMP.eq.u64 v1, v0, 0
  BRANCH v1, 0x2038, 0x2034
vblock 0x2034..0x2038:
  # 0x2034: mov qword ptr [rsp+8*rbp], 0x1040
  GET.u64 v0, s4
  LI.u64 v1, 0x1040
  ST.u64 v0(0), v1
  LI.u64 v2, 0
  PUT.u64 s3, v2
  JMP 0x2038
vblock 0x2038..0x2039:
  # 0x2038: ret
  GET.u64 v0, s4
  LD.u64 v1, v0(0)
  ADD.u64 v2, v0, 8
  PUT.u64 s4, v2
  GET.u64 v3, s5
  CMP.ne.u64 v4, v3, 0
  LI.u64 v5, 0x8000000000000000
  SELECT.u64 v6, v4, v5, v1
  RET v6
`

// TestReturnStack runs recursion on both engines, compiled from the first
// run of each block: calls deeper than the return stack holds, direct and
// indirect, a return to an address other than the one pushed, and one to
// the return stack's bottom value, which faults.
func TestReturnStack(t *testing.T) {
	const stackTop = dataBase + 64*gvinst.PageSize
	for _, tc := range []struct {
		name           string
		depth, callr   uint64
		replace, wild  uint64
		wantPC         uint64
		wantTrap       bool
		wantReturns    uint64
		wantRSP        uint64
		wantNoIndirect bool // every return found its frame on the return stack
	}{
		{name: "shallow", depth: 10, wantPC: 0x1012, wantReturns: 10, wantRSP: stackTop, wantNoIndirect: true},
		{name: "deeper_than_the_return_stack", depth: 3 * retStackWords, wantPC: 0x1012, wantReturns: 3 * retStackWords, wantRSP: stackTop},
		{name: "indirect", depth: 100, callr: 0x2000, wantPC: 0x1012, wantReturns: 100, wantRSP: stackTop},
		// The innermost call returns straight to 0x1040.
		{name: "replaced_return_address", depth: 50, replace: 1, wantPC: 0x1042, wantReturns: 0, wantRSP: stackTop - 8*50},
		{name: "return_to_the_bottom_value", depth: 5, wild: 1, wantTrap: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var results [2]gvinst.CPU
			var stops [2]gvinst.Stop
			var insns [2]uint64
			var indirect uint64
			for k, jit := range []bool{false, true} {
				mem := gvinst.NewMemory(0)
				if err := mem.Map(dataBase, 64*gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
					t.Fatal(err)
				}
				tr := newTextTranslator(t, mem, recursion)
				var e gvinst.Engine = gvinst.NewInterpreter(mem, tr, gvinst.InterpOptions{})
				if jit {
					je, err := New(mem, tr, gvinst.InterpOptions{})
					if err != nil {
						t.Fatal(err)
					}
					defer je.Close()
					e = je
				}
				// The jit runs three times: the first two link its
				// units (each new link leaves for Go, which drops the
				// frames on the return stack, so the code after a
				// call is reached, and linked, only in the second);
				// the last starts with an empty jump cache.
				runs := 1
				if jit {
					runs = 3
				}
				for r := 0; r < runs; r++ {
					if r > 0 {
						// The links decided so far are written; the
						// returns must not need the jump cache.
						if err := e.(*Engine).flushLinks(); err != nil {
							t.Fatal(err)
						}
						e.(*Engine).m.clearIJC()
					}
					before := e.Stats()
					cpu := &gvinst.CPU{PC: 0x1000}
					cpu.State[gvinst.S1] = tc.depth
					cpu.State[gvinst.S2] = tc.callr
					cpu.State[gvinst.S3] = tc.replace
					cpu.State[gvinst.S4] = stackTop
					cpu.State[gvinst.S5] = tc.wild
					stops[k] = e.Run(cpu, 0)
					results[k] = *cpu
					after := e.Stats()
					insns[k] = after.GuestInsns - before.GuestInsns
					indirect = after.ExitsByKind["indirect"] - before.ExitsByKind["indirect"]
				}
			}
			interp, jit := stops[0], stops[1]
			if tc.wantTrap {
				if jit.Kind != gvinst.StopTrap || interp.Kind != gvinst.StopTrap || jit.PC != interp.PC {
					t.Fatalf("stops: interpreter %v, jit %v; want the same trap", interp, jit)
				}
			} else if jit.Kind != gvinst.StopSyscall || jit.PC != tc.wantPC || interp != jit {
				t.Fatalf("stops: interpreter %v, jit %v; want a syscall at %#x", interp, jit, tc.wantPC)
			}
			if results[0] != results[1] {
				t.Errorf("the engines' states differ:\n%s", stateDiff(&results[0], &results[1]))
			}
			if insns[0] != insns[1] {
				t.Errorf("guest instructions: interpreter %d, jit %d", insns[0], insns[1])
			}
			if !tc.wantTrap {
				if got := results[1].State[gvinst.S0]; got != tc.wantReturns {
					t.Errorf("%d returns counted, want %d", got, tc.wantReturns)
				}
				if got := results[1].State[gvinst.S4]; got != tc.wantRSP {
					t.Errorf("rsp = %#x, want %#x", got, tc.wantRSP)
				}
			}
			if tc.wantNoIndirect && indirect != 0 {
				t.Errorf("%d returns left for Go; the return stack should have had them all", indirect)
			}
		})
	}
}

// stateDiff lists the slots in which a and b differ.
func stateDiff(a, b *gvinst.CPU) string {
	s := ""
	if a.PC != b.PC {
		s += fmt.Sprintf("pc %#x != %#x\n", a.PC, b.PC)
	}
	for i := range a.State {
		if a.State[i] != b.State[i] {
			s += fmt.Sprintf("slot %d: %#x != %#x\n", i, a.State[i], b.State[i])
		}
	}
	return s
}
