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

// byteRow is gcc -O2's column loop of an 8-bit 5-point stencil (blur8):
// the byte at p[1] goes to edx and on to esi, the next column's p[0];
// r12d takes the header's esi, zero-extended from its low byte (movzx
// r12d, sil), the column after's p[-1].
const byteRow = `
vblock 0x401610..0x40164c:
  # 0x401610: movzx edx, byte ptr [r8+rcx+0x1]
  GET.u64 v0, s8
  GET.u64 v1, s1
  ADD.u64 v2, v0, v1
  LD.u8 v3, v2(1)
  PUT.u64 s2, v3
  # 0x401622: add eax, r12d
  GET.u64 v11, s12
  ADD.u32 v12, v3, v11
  PUT.u64 s0, v12
  # 0x40161d: movzx edx, byte ptr [rbx+rcx+0x2]
  GET.u64 v8, s3
  ADD.u64 v9, v8, v1
  LD.u8 v10, v9(2)
  PUT.u64 s2, v10
  # 0x401625: movzx r12d, sil
  GET.u64 v13, s6
  CVT.rn.u64.u8 v14, v13
  PUT.u64 s12, v14
  # 0x40162b: mov esi, edx
  PUT.u64 s6, v10
  # 0x401630: movzx edi, di (a zero-extension of a value the loop made)
  GET.u64 v15, s7
  ADD.u64 v16, v15, v12
  CVT.rn.u64.u16 v17, v16
  PUT.u64 s7, v17
  # 0x401643: add rcx, 0x1
  ADD.u64 v28, v1, 1
  PUT.u64 s1, v28
  GET.u64 v30, s9
  CMP.ne.u64 v31, v28, v30
  BRANCH v31, 0x401610, 0x40164c
`

// TestBlockEffectZeroExtension evaluates the byte row's block: esi holds
// the load of [rbx + rcx + 2] at the back edge, r12 the header's esi
// zero-extended from a byte (which reloadOf takes for last iteration's
// load when that load is of one byte), and edi nothing a reload could be
// (the zero-extension of a sum).
func TestBlockEffectZeroExtension(t *testing.T) {
	bs, err := gvinst.Parse(byteRow)
	if err != nil {
		t.Fatal(err)
	}
	st := blockEffect([]*Insn{{Addr: 0x401610, Code: bs[0].Insts}})
	if esi := st[gvinst.SReg(6)]; esi.kind != symLoad || esi.size != 1 || esi.c != 2 || esi.terms[gvinst.SReg(3)] != 1 || esi.terms[gvinst.SReg(1)] != 1 {
		t.Errorf("esi at the back edge: %+v, want the byte load of [rbx + rcx + 2]", esi)
	}
	if r12 := st[gvinst.SReg(12)]; r12.kind != symZext || r12.size != 1 || len(r12.terms) != 1 || r12.terms[gvinst.SReg(6)] != 1 {
		t.Errorf("r12 at the back edge: %+v, want the header's esi zero-extended from a byte", r12)
	}
	if edi := st[gvinst.SReg(7)]; edi.kind != symUnknown {
		t.Errorf("edi at the back edge: %+v, want unknown", edi)
	}
}

// constLoads are gcc -O2's ways of loading a constant from .rodata into
// an SSE register inside a loop (conv2d's movss; gramschmidt's mov to a
// general register, then movq), and two that are not loads from a fixed
// address.
const constLoads = `
vblock 0x401615..0x401640:
  # 0x401615: movss xmm1, dword ptr [rip+0x78a7f]
  LI.u64 v0, 4694172
  LD.u32 v1, v0(0)
  LI.u64 v2, 0
  JOIN.b128 v3, v1, v2
  PUT.b128 x1, v3
  # 0x40161d: mov rdx, qword ptr [rip+0x78a23]
  LI.u64 v4, 4694040
  LD.u64 v5, v4(0)
  PUT.u64 s2, v5
  # 0x401624: movq xmm2, rdx
  GET.u64 v6, s2
  LI.u64 v7, 0
  JOIN.b128 v8, v6, v7
  PUT.b128 x2, v8
  # 0x401629: movsd xmm3, qword ptr [rbx+0x8]
  GET.u64 v9, s3
  LD.u64 v10, v9(8)
  LI.u64 v11, 0
  JOIN.b128 v12, v10, v11
  PUT.b128 x3, v12
  # 0x40162e: add rdx, rbx
  GET.u64 v13, s2
  ADD.u64 v14, v13, v9
  PUT.u64 s2, v14
  # 0x401632: movq xmm4, rdx
  GET.u64 v15, s2
  LI.u64 v16, 0
  JOIN.b128 v17, v15, v16
  PUT.b128 x4, v17
  JMP 0x401640
`

// TestConstLoadPut checks which writes of an SSE register constLoadPut
// takes for a load of a constant: movss from a fixed address, and movq
// of a general register the block loaded from one; not a load through
// rbx, nor a general register computed from one.
func TestConstLoadPut(t *testing.T) {
	bs, err := gvinst.Parse(constLoads)
	if err != nil {
		t.Fatal(err)
	}
	var insns []*Insn
	for _, in := range bs[0].Insts {
		if len(insns) == 0 || insns[len(insns)-1].Addr != in.X86 {
			insns = append(insns, &Insn{Addr: in.X86})
		}
		x := insns[len(insns)-1]
		x.Code = append(x.Code, in)
	}
	for _, c := range []struct {
		x86  uint64
		reg  gvinst.Reg
		addr uint64
		ok   bool
	}{
		{0x401615, gvinst.XReg(1), 4694172, true},
		{0x401624, gvinst.XReg(2), 4694040, true},
		{0x401629, gvinst.XReg(3), 0, false},
		{0x401632, gvinst.XReg(4), 0, false},
	} {
		for xi, x := range insns {
			if x.Addr != c.x86 {
				continue
			}
			put := len(x.Code) - 1
			l, ok := constLoadPut(insns[:xi], x, put, c.reg)
			if ok != c.ok || ok && (l.addr != c.addr || !l.highZero) {
				t.Errorf("%#x: %+v %v, want the load from %#x: %v", c.x86, l, ok, c.addr, c.ok)
			}
		}
	}
}
