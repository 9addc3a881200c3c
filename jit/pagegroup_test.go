//go:build linux && amd64

package jit

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// TestFindPageGroups checks which accesses share one probe: those from one
// base value (through copies and constant sums too) within a page's span;
// a new value in the base register, a span over a page, and a lone access
// end or leave a group.
func TestFindPageGroups(t *testing.T) {
	src := `vblock 0x1000..0x1100:
  # 0x1000: insn
  GET.u64 v0, s4
  LD.u32 v1, v0(8)
  LD.u32 v2, s4(160)
  ST.u32 v0(16), v1
  LD.u64 v3, s7(0)
  LD.u64 v4, s7(4090)
  LD.u64 v5, s7(8)
  PUT.u64 s4, v2
  LD.u32 v6, s4(8)
  LD.u32 v7, s4(12)
  LD.u8 v8, s5(0)
  SUB.u64 v11, v0, 8
  ST.u64 v11(0), v2
  PUT.u64 s0, v3
  PUT.u64 s1, v4
  PUT.u64 s2, v5
  PUT.u64 s3, v6
  PUT.u64 s6, v7
  PUT.u64 s8, v8
  # 0x10fc: jmp
  JMP 0x2000
`
	bs, err := gvinst.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	vb := bs[0]
	f, err := analyzeUnit(singleTrace(vb))
	if err != nil {
		t.Fatal(err)
	}
	groups := f.groups
	got := ""
	for _, g := range groups {
		got += fmt.Sprintf("[%d,%d) r%v w%v %d..%d; ", g.minOff, g.maxEnd, g.read, g.write, g.first, g.last)
	}
	want := "[-8,164) rtrue wtrue 1..12; [8,4098) rtrue wfalse 5..6; [8,16) rtrue wfalse 8..9; "
	if got != want {
		t.Errorf("groups %s\nwant   %s", got, want)
	}
	for i, g := range map[int]groupMember{1: {0, 0}, 2: {0, 0}, 3: {0, 0}, 5: {1, 0}, 6: {1, 0}, 8: {2, 0}, 9: {2, 0}, 12: {0, -8}} {
		if m, ok := f.memberOf(i); !ok || m != g {
			t.Errorf("instruction %d in group %v (%v), want %v", i, m, ok, g)
		}
	}
	for _, i := range []int{4, 10} {
		if _, ok := f.memberOf(i); ok {
			t.Errorf("instruction %d is in a group; its range or its loneness should keep it out", i)
		}
	}
}

// TestPageGroupsRunAsInterpreter runs groups of loads and stores on both
// engines: in one page, straddling the two data pages (each access then
// probes alone), reaching the unmapped page after them (a precise fault
// in the middle of the group), and around a callout (the group is probed
// again after it), as a loop unit too.
func TestPageGroupsRunAsInterpreter(t *testing.T) {
	bodies := map[string]string{
		"one page":        "  LD.u64 v0, s7(8)\n  LD.u32 v1, s7(100)\n  ST.u64 s7(16), v1\n  LD.u64 v2, s7(16)\n  ST.u8 s7(3), v0\n  LD.u16 v3, s7(2)\n  PUT.u64 s0, v2\n  PUT.u64 s1, v3\n",
		"straddle":        "  LD.u64 v0, s7(4088)\n  LD.u32 v1, s7(4094)\n  ST.u64 s7(4100), v0\n  LD.u64 v2, s7(4100)\n  PUT.u64 s0, v2\n  PUT.u64 s1, v1\n",
		"fault":           "  LD.u64 v0, s7(8000)\n  PUT.u64 s0, v0\n  ST.u64 s7(8180), v0\n  PUT.u64 s1, v0\n  LD.u64 v1, s7(8200)\n  PUT.u64 s2, v1\n",
		"callout":         "  LD.u64 v0, s7(8)\n  LD.u64 v4, s6(0)\n  ST.u64 s7(24), v4\n  CVT.rn.f80.f64 v12, v0\n  CVT.rn.f64.f80 v1, v12\n  ST.u64 s7(32), v1\n  LD.u64 v2, s7(40)\n  PUT.u64 s0, v2\n",
		"deltas":          "  GET.u64 v0, s7\n  ADD.u64 v1, v0, 400\n  ST.u64 v1(8), v0\n  SUB.u64 v2, v1, 16\n  PUT.u64 s5, v2\n  LD.u64 v3, s5(0)\n  LD.u32 v4, s7(408)\n  PUT.u64 s0, v3\n  PUT.u64 s1, v4\n",
		"deltas straddle": "  GET.u64 v0, s7\n  ADD.u64 v1, v0, 4000\n  ST.u64 v1(90), v0\n  SUB.u64 v2, v1, 16\n  LD.u64 v3, v2(0)\n  LD.u32 v4, s7(4090)\n  PUT.u64 s0, v3\n  PUT.u64 s1, v4\n",
		"wide":            "  LD.b128 v0, s7(8)\n  LD.u64 v2, s7(200)\n  ST.u64 s7(208), v0\n  ST.u64 s7(216), v1\n  LD.b128 v4, s7(208)\n  PUT.u64 s0, v4\n  PUT.u64 s1, v5\n  PUT.u64 s2, v2\n",
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			mustRunBoth(t, flagsProgram("  GET.u64 v9, s7\n  ADD.u64 v10, v9, 64\n  PUT.u64 s6, v10\n"+body), []byte{3, 1, 4})
			// The same as a loop unit, s12 (at most 255) counting down.
			mustRunBoth(t, "vblock 0x1000..0x1100:\n  # 0x1000: insn\n"+body+
				"  GET.u64 v20, s12\n  SUB.u64 v21, v20, 1\n  PUT.u64 s12, v21\n  CMP.gt.s64 v22, v21, 0\n"+
				"  # 0x10fc: jcc\n  BRANCH v22, 0x1000, 0x3000\n"+
				"vblock 0x3000..0x3002:\n  # 0x3000: syscall\n  SYSCALL 0x3002\n", []byte{2, 7})
		})
	}
}

// TestPageGroupAfterPageGetsBytes: a group that read an untouched page
// (the shared zero page) must probe again after a callout stores into
// that page and gives it bytes of its own, or it reads zeros.
func TestPageGroupAfterPageGetsBytes(t *testing.T) {
	src := `vblock 0x1000..0x1100:
  # 0x1000: insn
  LD.u64 v0, s7(8200)
  LD.u64 v1, s7(8208)
  GET.u64 v2, s7
  ADD.u64 v3, v2, 8192
  ST.u64 v3(24), s0
  LD.u64 v4, s7(8216)
  PUT.u64 s1, v4
  PUT.u64 s2, v0
  # 0x10fc: jmp
  JMP 0x3000
vblock 0x3000..0x3002:
  # 0x3000: syscall
  SYSCALL 0x3002
`
	for _, useJIT := range []bool{false, true} {
		mem := gvinst.NewMemory(0)
		if err := mem.Map(dataBase, 3*gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		tr := newTextTranslator(t, mem, src)
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
		cpu.State[gvinst.S0] = 0x1234_5678_9abc
		if stop := e.Run(&cpu, 0); stop.Kind != gvinst.StopSyscall {
			t.Fatalf("jit=%v: stopped with %v", useJIT, stop)
		}
		if cpu.State[gvinst.S1] != 0x1234_5678_9abc {
			t.Errorf("jit=%v: the load after the store reads %#x", useJIT, cpu.State[gvinst.S1])
		}
	}
}

// TestPageGroupOnWriteOnlyPage: a group that loads and stores probes the
// write TLB alone, which must therefore never vouch for a page the guest
// may write but not read: the group's store-only part runs, and its load
// faults precisely on both engines.
func TestPageGroupOnWriteOnlyPage(t *testing.T) {
	src := `vblock 0x1000..0x1100:
  # 0x1000: insn
  ST.u64 s7(8), s0
  ST.u64 s7(16), s0
  # 0x1004: insn
  ST.u32 s7(24), s0
  LD.u64 v0, s7(8)
  ADD.u64 v1, v0, 1
  ST.u64 s7(8), v1
  PUT.u64 s1, v1
  # 0x10fc: jmp
  JMP 0x3000
vblock 0x3000..0x3002:
  # 0x3000: syscall
  SYSCALL 0x3002
`
	var stops [2]string
	var states [2]gvinst.CPU
	for k, useJIT := range []bool{false, true} {
		mem := gvinst.NewMemory(0)
		if err := mem.Map(dataBase, gvinst.PageSize, gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		tr := newTextTranslator(t, mem, src)
		var e gvinst.Engine = gvinst.NewInterpreter(mem, tr, gvinst.InterpOptions{})
		if useJIT {
			j, err := New(mem, tr, gvinst.InterpOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			e = j
		}
		for round := 0; round < 3; round++ { // compiled by then, at any HotAfter
			cpu := gvinst.CPU{PC: 0x1000}
			cpu.State[gvinst.S7] = dataBase
			cpu.State[gvinst.S0] = 0x1234
			stop := e.Run(&cpu, 0)
			stops[k], states[k] = fmt.Sprint(stop), cpu
		}
		if stop := stops[k]; !strings.Contains(stop, "0x1004") {
			t.Errorf("jit=%v: stopped with %s, want a fault at 0x1004", useJIT, stop)
		}
	}
	if stops[0] != stops[1] || states[0] != states[1] {
		t.Errorf("the engines differ:\ninterp %s %+v\njit    %s %+v", stops[0], states[0].State[:8], stops[1], states[1].State[:8])
	}
}

// TestTLBFromMachineOrPointers runs loads and stores (alone, in a page
// group, in a loop unit's page caches, a miss and a fault) with the TLB
// entries addressed from r15 (where the engine finds the TLBs within a
// 32-bit displacement of its machine, as a Go heap places them) and
// through the machine's TLB pointers (where not), against the interpreter.
func TestTLBFromMachineOrPointers(t *testing.T) {
	src := `vblock 0x1000..0x1100:
  # 0x1000: insn
  GET.u64 v4, s12
  LD.u64 v0, s7(8)
  LD.u32 v1, s6(4096)
  ADD.u64 v2, v0, v1
  ADD.u64 v7, v2, v4
  ST.u64 s7(16), v7
  LD.u8 v3, s7(17)
  ST.u16 s6(4090), v3
  SUB.u64 v5, v4, 1
  PUT.u64 s12, v5
  CMP.gt.s64 v6, v5, 0
  # 0x10fc: jcc
  BRANCH v6, 0x1000, 0x2000
vblock 0x2000..0x2100:
  # 0x2000: insn
  LD.u64 v0, s7(4000)
  # 0x2004: insn
  LD.u64 v1, s7(13000)
  PUT.u64 s0, v0
  # 0x20fc: jmp
  JMP 0x3000
vblock 0x3000..0x3002:
  # 0x3000: syscall
  SYSCALL 0x3002
`
	run := func(kind string) string {
		mem := gvinst.NewMemory(0)
		if err := mem.Map(dataBase, 3*gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		// The first page starts untouched (the read TLB may hold the
		// shared zero page for it); the second has bytes.
		if err := mem.Poke(dataBase+gvinst.PageSize, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44}); err != nil {
			t.Fatal(err)
		}
		tr := newTextTranslator(t, mem, src)
		var e gvinst.Engine = gvinst.NewInterpreter(mem, tr, gvinst.InterpOptions{})
		if kind != "interp" {
			j, err := New(mem, tr, gvinst.InterpOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			if kind == "pointers" {
				j.tlbFromMachine = [2]int64{}
			} else if d := j.tlbFromMachine; d[0] != int64(int32(d[0])) || d[1] != int64(int32(d[1])) {
				t.Logf("the TLBs lie %#x, %#x from the machine: addressed through its pointers", d[0], d[1])
			}
			e = j
		}
		cpu := gvinst.CPU{PC: 0x1000}
		cpu.State[gvinst.S7] = dataBase
		cpu.State[gvinst.S6] = dataBase + 40
		cpu.State[12] = 20
		stop := e.Run(&cpu, 0)
		data := make([]byte, 64)
		if err := mem.Peek(dataBase, data); err != nil {
			t.Fatal(err)
		}
		// A page nothing touched reads as zeros: no store went to the
		// shared zero page through the read TLB.
		untouched := make([]byte, gvinst.PageSize)
		if err := mem.Peek(dataBase+2*gvinst.PageSize, untouched); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(untouched, make([]byte, gvinst.PageSize)) {
			t.Errorf("%s: an untouched page reads %x...", kind, untouched[:64])
		}
		return fmt.Sprintf("%v %x %x", stop, cpu.State[:16], data)
	}
	want := run("interp")
	if !strings.Contains(want, "0x2004") {
		t.Fatalf("the interpreter stopped with %s, want a fault at 0x2004", want)
	}
	for _, kind := range []string{"r15", "pointers"} {
		if got := run(kind); got != want {
			t.Errorf("jit, TLB entries from %s:\n%s\nwant\n%s", kind, got, want)
		}
	}
}

// TestConstantAddressProbe: loads and stores at constant addresses (an LI
// base) probe with the TLB entry and tag known at compile time: in a page,
// across two pages (the usual probe), on an untouched page (the read TLB
// may hold the shared zero page, the write TLB never), and unmapped (a
// precise fault), run three times so that the probes hit, against the
// interpreter. (Each access has an LI of its own: two from one register
// would form a page group.)
func TestConstantAddressProbe(t *testing.T) {
	src := fmt.Sprintf(`vblock 0x1000..0x1100:
  # 0x1000: insn
  LI.u64 v0, %d
  LD.u64 v1, v0(0)
  LI.u64 v2, %d
  LD.u64 v3, v2(0)
  ADD.u64 v4, v1, v3
  ADD.u64 v4, v4, s1
  LI.u64 v5, %d
  ST.u64 v5(4000), v4
  LI.u64 v6, %[4]d
  LD.u64 v7, v6(0)
  LI.u64 v13, %[4]d
  ST.u32 v13(8), v4
  LI.u64 v14, %[4]d
  LD.u64 v8, v14(8)
  ADD.u64 v9, v7, v8
  PUT.u64 s0, v9
  PUT.u64 s1, v4
  LI.u64 v10, %[5]d
  ST.u8 v10(0), v4
  # 0x1004: insn
  LI.u64 v11, %[6]d
  LD.u64 v12, v11(0)
  PUT.u64 s2, v12
  # 0x10fc: jmp
  JMP 0x3000
vblock 0x3000..0x3002:
  # 0x3000: syscall
  SYSCALL 0x3002
`, dataBase+16, dataBase+4092, dataBase+8, dataBase+2*gvinst.PageSize+100, dataBase+2*gvinst.PageSize+4095, dataBase+5*gvinst.PageSize+8)
	run := func(useJIT bool) string {
		mem := gvinst.NewMemory(0)
		if err := mem.Map(dataBase, 4*gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		if err := mem.Poke(dataBase, []byte("0123456789abcdefghijklmnopqrstuv")); err != nil {
			t.Fatal(err)
		}
		if err := mem.Poke(dataBase+4090, []byte("ABCDEFGHIJKL")); err != nil {
			t.Fatal(err)
		}
		tr := newTextTranslator(t, mem, src)
		var e gvinst.Engine = gvinst.NewInterpreter(mem, tr, gvinst.InterpOptions{})
		if useJIT {
			j, err := New(mem, tr, gvinst.InterpOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			e = j
		}
		out := ""
		cpu := gvinst.CPU{}
		for round := 0; round < 3; round++ {
			cpu.PC = 0x1000
			stop := e.Run(&cpu, 0)
			data := make([]byte, 4*gvinst.PageSize)
			if err := mem.Peek(dataBase, data); err != nil {
				t.Fatal(err)
			}
			out += fmt.Sprintf("%v %x %x\n", stop, cpu.State[:4], data)
		}
		// The fourth page, never touched, reads as zeros: no store went
		// to the shared zero page.
		untouched := make([]byte, gvinst.PageSize)
		if err := mem.Peek(dataBase+3*gvinst.PageSize, untouched); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(untouched, make([]byte, gvinst.PageSize)) {
			t.Errorf("jit=%v: an untouched page reads %x...", useJIT, untouched[:32])
		}
		return out
	}
	want, got := run(false), run(true)
	if !strings.Contains(want, "0x1004") {
		t.Fatalf("the interpreter did not fault at 0x1004:\n%.300s", want)
	}
	if got != want {
		t.Errorf("jit:\n%.400s\nwant\n%.400s", got, want)
	}
}
