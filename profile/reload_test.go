package profile

import (
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// jacobi1dSweep is gcc -O2's loop for B[i] = c*(A[i-1] + A[i] + A[i+1]):
// A[i+1] is loaded into xmm1, which the next iteration uses as A[i] and
// copies to xmm2 as the one after's A[i-1].
const jacobi1dSweep = `
vblock 0x4015d0..0x4015f8:
  # 0x4015d0: addsd xmm2, xmm1
  GET.u64 v0, x1
  GET.u64 v1, x2
  ADD.f64 v2, v1, v0
  PUT.u64 x2, v2
  # 0x4015d4: movapd xmm0, xmm2
  GET.b128 v3, x2
  PUT.b128 x0, v3
  # 0x4015d8: movapd xmm2, xmm1
  GET.b128 v5, x1
  PUT.b128 x2, v5
  # 0x4015dc: movsd xmm1, qword ptr [rbx+8*rax]
  GET.u64 v7, s3
  GET.u64 v8, s0
  SHL.u64 v9, v8, 3
  ADD.u64 v10, v7, v9
  LD.u64 v11, v10(0)
  LI.u64 v12, 0
  JOIN.b128 v13, v11, v12
  PUT.b128 x1, v13
  # 0x4015e1: mulsd xmm0, xmm3 (shortened)
  GET.u64 v16, x3
  MUL.f64 v18, v13, v16
  PUT.u64 x0, v18
  # 0x4015e9: movsd qword ptr [rbp+8*rax-0x8], xmm0
  GET.u64 v19, s5
  SHL.u64 v20, v8, 3
  ADD.u64 v21, v19, v20
  ST.u64 v21(-8), v18
  # 0x4015ef: add rax, 0x1
  ADD.u64 v23, v8, 1
  PUT.u64 s0, v23
  GET.u64 v25, s2
  CMP.ne.u64 v27, v25, v23
  BRANCH v27, 0x4015d0, 0x4015f8
`

// TestBlockEffect evaluates the sweep's block from its header: at the back
// edge xmm1 holds the load of [rbx + 8·rax] (the header's rax) with its
// high half zero, xmm2 the header's xmm1 whole, rax the header's plus 1,
// and xmm0 nothing a reload could be (a computed value).
func TestBlockEffect(t *testing.T) {
	bs, err := gvinst.Parse(jacobi1dSweep)
	if err != nil {
		t.Fatal(err)
	}
	st := blockEffect([]*Insn{{Addr: 0x4015d0, Code: bs[0].Insts}})
	x1 := st[gvinst.XReg(1)]
	if x1.kind != symLoad || x1.x86 != 0x4015dc || !x1.highZero || x1.size != 8 || x1.c != 0 || len(x1.terms) != 2 || x1.terms[gvinst.SReg(3)] != 1 || x1.terms[gvinst.S0] != 8 {
		t.Errorf("xmm1 at the back edge: %+v, want the load at 0x4015dc of [s3 + 8*s0]", x1)
	}
	if src, ok := st[gvinst.XReg(2)].headerSlot(); !ok || src != gvinst.XReg(1) {
		t.Errorf("xmm2 at the back edge: %+v, want the header's xmm1", st[gvinst.XReg(2)])
	}
	if rax := st[gvinst.S0]; rax.kind != symLinear || rax.c != 1 || rax.terms[gvinst.S0] != 1 || len(rax.terms) != 1 {
		t.Errorf("rax at the back edge: %+v, want the header's plus 1", rax)
	}
	if x0 := st[gvinst.XReg(0)]; x0.kind != symUnknown {
		t.Errorf("xmm0 at the back edge: %+v, want unknown (a low-half write of a product)", x0)
	}
}
