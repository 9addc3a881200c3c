//go:build linux && amd64

package jit

import (
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// Named regressions of the register cache: each program once ran
// differently on the two engines.
var regallocRegressions = []struct{ name, src string }{
	{
		// A packed op (a callout) reads a 128-bit value whose halves
		// the compiled JOIN left in registers: its lane type is not
		// wide, yet it reads the high half, which must reach the frame.
		"packed_op_reads_joined_high_half", `vblock 0x1000..0x1100:
  # 0x1000: a
  GET.u64 v0, s1
  GET.u64 v1, s2
  JOIN.b128 v2, v0, v1
  GET.b128 v4, x1
  VADD.u8 v6, v2, v4
  PUT.b128 x0, v6
  # 0x10fc: jcc
  BRANCH v0, 0x2000, 0x3000
vblock 0x2000..0x2002:
  # 0x2000: syscall
  SYSCALL 0x2002
vblock 0x3000..0x3002:
  # 0x3000: syscall
  SYSCALL 0x3002
`},
	{
		// A packed op writes both halves of its destination: a copy of
		// the high half taken before it is not the same value after.
		"packed_op_writes_high_half", `vblock 0x1000..0x1100:
  # 0x1000: a
  GET.u64 v0, s1
  GET.u64 v1, s2
  JOIN.b128 v2, v0, v1
  GET.u64 v4, s3
  GET.u64 v5, s4
  JOIN.b128 v6, v4, v5
  VSUB.u64 v10, v6, v2
  MOV.b128 v12, v10
  VADD.u64 v10, v2, v2
  PUT.b128 x2, v12
  PUT.b128 x3, v10
  # 0x10fc: jcc
  BRANCH v0, 0x2000, 0x3000
vblock 0x2000..0x2002:
  # 0x2000: syscall
  SYSCALL 0x2002
vblock 0x3000..0x3002:
  # 0x3000: syscall
  SYSCALL 0x3002
`},
	{
		// A copy of a guest register outlives a write to it.
		"copy_outlives_original", `vblock 0x1000..0x1100:
  # 0x1000: a
  GET.u64 v0, s0
  LI.u64 v1, 7
  PUT.u64 s0, v1
  ADD.u64 v2, v0, 1
  PUT.u64 s1, v2
  # 0x10fc: jcc
  CMP.ne.u64 v3, v2, 100
  BRANCH v3, 0x1000, 0x3000
vblock 0x3000..0x3002:
  # 0x3000: syscall
  SYSCALL 0x3002
`},
	{
		// Addresses folded into loads and stores (base + index*8 + disp
		// and base + index), the first access of each page missing in
		// the TLB so that the callout reads the address register.
		"folded_addresses", `vblock 0x1000..0x1100:
  # 0x1000: a
  GET.u64 v0, s7
  GET.u64 v1, s1
  AND.u64 v2, v1, 511
  SHL.u64 v3, v2, 3
  ADD.u64 v4, v0, v3
  LD.u64 v5, v4(8)
  ST.u32 v4(-8), v5
  ADD.u64 v6, v0, v2
  LD.u8 v7, v6(4000)
  ST.u16 v6(90), v7
  ADD.u64 v8, v5, v7
  PUT.u64 s2, v8
  ADD.u64 v9, v1, 37
  PUT.u64 s1, v9
  # 0x10fc: jcc
  CMP.lt.u64 v10, v9, 20000
  BRANCH v10, 0x1000, 0x3000
vblock 0x3000..0x3002:
  # 0x3000: syscall
  SYSCALL 0x3002
`},
	{
		// A folded address whose base changes after it was computed is
		// not folded: the access uses the value from before.
		"address_base_changes", `vblock 0x1000..0x1100:
  # 0x1000: a
  GET.u64 v0, s7
  GET.u64 v1, s1
  AND.u64 v2, v1, 1023
  ADD.u64 v4, v0, v2
  ADD.u64 v5, v0, 64
  PUT.u64 s7, v5
  LD.u64 v6, v4(0)
  PUT.u64 s3, v6
  GET.u64 v7, s7
  ADD.u64 v8, v7, -64
  PUT.u64 s7, v8
  ADD.u64 v9, v1, 13
  PUT.u64 s1, v9
  # 0x10fc: jcc
  CMP.lt.u64 v10, v9, 9000
  BRANCH v10, 0x1000, 0x3000
vblock 0x3000..0x3002:
  # 0x3000: syscall
  SYSCALL 0x3002
`},
}

func TestRegallocRegressions(t *testing.T) {
	for _, r := range regallocRegressions {
		t.Run(r.name, func(t *testing.T) {
			runBoth(t, r.src, []byte(r.name), 5000)
		})
	}
}

// TestSiteCacheSeesFirstWrite: a loop unit's load caches the page it
// reads, the shared zero page of an untouched page; a store then gives
// that page bytes of its own, and the next iteration's load must read them.
func TestSiteCacheSeesFirstWrite(t *testing.T) {
	const src = `vblock 0x1000..0x1100:
  # 0x1000: a
  GET.u64 v0, s7
  LD.u64 v1, v0(8)
  GET.u64 v3, s0
  ADD.u64 v4, v3, v1
  PUT.u64 s0, v4
  GET.u64 v5, s1
  ADD.u64 v6, v5, 1
  PUT.u64 s1, v6
  CMP.lt.u64 v8, v6, 5
  ADD.u64 v9, v0, 4096
  SELECT.u64 v10, v8, v9, v0
  ADD.u64 v2, v1, 3
  ST.u64 v10(8), v2
  # 0x10fc: jcc
  CMP.lt.u64 v7, v6, 1000
  BRANCH v7, 0x1000, 0x3000
vblock 0x3000..0x3002:
  # 0x3000: syscall
  SYSCALL 0x3002
`
	run := func(useJIT bool) (gvinst.Stop, gvinst.CPU) {
		mem := gvinst.NewMemory(0)
		if err := mem.Map(dataBase, 2*gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		// The second page is touched; the first stays untouched until
		// the fifth iteration's store.
		if err := mem.Poke(dataBase+gvinst.PageSize, make([]byte, 16)); err != nil {
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
		cpu.State[gvinst.MXCSR] = 0x1f80
		return e.Run(&cpu, 0), cpu
	}
	ws, wc := run(false)
	gs, gc := run(true)
	if ws.Kind != gs.Kind || ws.PC != gs.PC || wc != gc {
		t.Fatalf("jit: %v, s0=%d; interpreter: %v, s0=%d", gs, gc.State[gvinst.S0], ws, wc.State[gvinst.S0])
	}
	if wc.State[gvinst.S0] == 0 {
		t.Fatal("the loads never saw the stores")
	}
}

// TestPutRenamedReads runs blocks where a virtual register is PUT into a
// guest slot and read after: the reads go to the slot (tryPutAlias) and
// the PUT computes in place, unless the slot changes first; through an
// earlier copy, around a callout (which must see the value in the frame),
// and with a store whose slow path runs in between.
func TestPutRenamedReads(t *testing.T) {
	bodies := []string{
		"  GET.u64 v0, s1\n  ADD.u32 v1, v0, 5\n  PUT.u64 s2, v1\n  XOR.u32 v2, v1, v0\n  PUT.u64 s3, v2\n  ADD.u64 v3, v1, v1\n  PUT.u64 s4, v3\n",
		"  GET.u64 v0, s1\n  ADD.u64 v1, v0, 5\n  PUT.u64 s2, v1\n  LI.u64 v4, 9\n  PUT.u64 s2, v4\n  SUB.u64 v2, v1, v0\n  PUT.u64 s3, v2\n",
		"  GET.u64 v0, s1\n  ADD.u64 v1, v0, 5\n  MOV.u64 v5, v1\n  PUT.u64 s2, v1\n  ADD.u64 v2, v5, v1\n  PUT.u64 s3, v2\n",
		"  GET.u64 v0, s1\n  ADD.u64 v1, v0, 7\n  PUT.u64 s2, v1\n  CVT.rn.f80.f64 v12, v1\n  CVT.rn.f64.f80 v2, v12\n  XOR.u64 v3, v2, v1\n  PUT.u64 s3, v3\n",
		"  GET.u64 v0, s1\n  ADD.u64 v1, v0, 7\n  PUT.u64 s2, v1\n  ST.u64 s7(16), v1\n  LD.u64 v2, s7(4000)\n  ADD.u64 v3, v2, v1\n  PUT.u64 s3, v3\n",
	}
	for i, body := range bodies {
		mustRunBoth(t, flagsProgram(body), []byte{byte(i), 3})
	}
}
