//go:build linux && amd64

package jit

import "testing"

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
