//go:build linux && amd64

package jit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// blockChain is a guest program of n blocks, each jumping to the next,
// the last back to the first until s1 counts down to 0.
func blockChain(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		a := 0x1000 + 0x10*i
		fmt.Fprintf(&b, "vblock %#x..%#x:\n  # %#x: inc rax\n  GET.u64 v0, s0\n  ADD.u64 v1, v0, 1\n  PUT.u64 s0, v1\n", a, a+0x10, a)
		if i < n-1 {
			fmt.Fprintf(&b, "  # %#x: jmp\n  JMP %#x\n", a+4, a+0x10)
			continue
		}
		fmt.Fprintf(&b, "  # %#x: loop\n  GET.u64 v2, s1\n  SUB.u64 v3, v2, 1\n  PUT.u64 s1, v3\n  CMP.ne.u64 v4, v3, 0\n  BRANCH v4, 0x1000, 0x100000\n", a+4)
	}
	b.WriteString("vblock 0x100000..0x100002:\n  # 0x100000: syscall\n  SYSCALL 0x100002\n")
	return b.String()
}

// TestLinksBatched runs a ring of 300 blocks: the jit links every exit
// (on the last rounds no exit reaches Go), with far fewer mprotect calls
// than two per link, and counts as the interpreter does.
func TestLinksBatched(t *testing.T) {
	const n, rounds = 300, 20
	src := blockChain(n)
	var insns [2]uint64
	for k, jit := range []bool{false, true} {
		mem := gvinst.NewMemory(0)
		tr := newTextTranslator(t, mem, src)
		var e gvinst.Engine = gvinst.NewInterpreter(mem, tr, gvinst.InterpOptions{})
		var je *Engine
		if jit {
			var err error
			if je, err = New(mem, tr, gvinst.InterpOptions{}); err != nil {
				t.Fatal(err)
			}
			defer je.Close()
			e = je
		}
		cpu := &gvinst.CPU{PC: 0x1000}
		cpu.State[gvinst.S1] = rounds
		if stop := e.Run(cpu, 0); stop.Kind != gvinst.StopSyscall || stop.PC != 0x100002 {
			t.Fatalf("jit=%v: stop %v", jit, stop)
		}
		if got := cpu.State[gvinst.S0]; got != n*rounds {
			t.Errorf("jit=%v: %d blocks run, want %d", jit, got, n*rounds)
		}
		insns[k] = e.Stats().GuestInsns
		if !jit {
			continue
		}
		st := je.Stats()
		if st.ChainHits < n {
			t.Errorf("%d links written, want at least %d", st.ChainHits, n)
		}
		placed := 2 * (st.UnitsCompiled + 4) // each unit and routine placed
		if links := je.arena.protects - placed; links > st.ChainHits/4 {
			t.Errorf("%d mprotect calls for %d links", links, st.ChainHits)
		}
		t.Logf("%d units, %d links, %d mprotect calls", st.UnitsCompiled, st.ChainHits, je.arena.protects)
		// Every link of the ring is written by now: another run leaves
		// for Go only through the ring's way out (taken once so far,
		// its link still waits) and at its end.
		before := je.Stats().ExitsByKind
		cpu = &gvinst.CPU{PC: 0x1000}
		cpu.State[gvinst.S1] = 2
		if stop := e.Run(cpu, 0); stop.Kind != gvinst.StopSyscall {
			t.Fatalf("second run: stop %v", stop)
		}
		if after := je.Stats().ExitsByKind; after["chain"]-before["chain"] > 1 {
			t.Errorf("%d chain exits in a run after every link of the ring was taken %d times", after["chain"]-before["chain"], linkHot)
		}
	}
	if insns[0] != insns[1] {
		t.Errorf("guest instructions: interpreter %d, jit %d", insns[0], insns[1])
	}
}
