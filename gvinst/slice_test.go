package gvinst

import (
	"slices"
	"testing"
)

// bicgInner is the j loop of bicg at -O2 (s[j] += r[i]*A[i][j] in memory,
// q[i]'s sum in x2) and the block after it that stores q[i] from x2.
const bicgInner = `vblock 0x401720..0x40174d:
  # 0x401720: movsd xmm0, qword ptr [rdx+rax]
  GET.u64 v0, s2
  GET.u64 v1, s0
  ADD.u64 v2, v0, v1
  LD.u64 v3, v2(0)
  LI.u64 v4, 0
  JOIN.b128 v5, v3, v4
  PUT.b128 x0, v5
  # 0x401725: movapd xmm1, xmm3
  GET.b128 v7, x3
  PUT.b128 x1, v7
  # 0x401729: mulsd xmm1, xmm0
  MUL.f64 v9, v7, v5
  # 0x40172d: mulsd xmm0, qword ptr [r13+rax]
  GET.u64 v10, s13
  ADD.u64 v11, v10, v1
  LD.u64 v12, v11(0)
  MUL.f64 v13, v5, v12
  PUT.u64 x0, v13
  # 0x401734: addsd xmm1, qword ptr [rbp+rax]
  GET.u64 v14, s5
  ADD.u64 v15, v14, v1
  LD.u64 v16, v15(0)
  MOV.u64 v17, v9
  ADD.f64 v18, v17, v16
  PUT.u64 x1, v18
  # 0x40173a: movsd qword ptr [rbp+rax], xmm1
  ADD.u64 v19, v14, v1
  MOV.u64 v20, v18
  ST.u64 v19(0), v20
  # 0x401740: add rax, 0x8
  ADD.u64 v21, v1, 8
  PUT.u64 s0, v21
  # 0x401744: addsd xmm2, xmm0
  MOV.u64 v23, v13
  GET.u64 v24, x2
  ADD.f64 v25, v24, v23
  PUT.u64 x2, v25
  # 0x401748: cmp r12, rax
  GET.u64 v26, s12
  # 0x40174b: jnz 0x401720
  CMP.ne.u64 v28, v26, v21
  BRANCH v28, 0x401720, 0x40174d
vblock 0x40174d..0x401753:
  # 0x40174d: movsd qword ptr [r8+rsi], xmm2
  GET.u64 v0, s8
  GET.u64 v1, s6
  ADD.u64 v2, v0, v1
  GET.u64 v3, x2
  ST.u64 v2(0), v3
  JMP 0x401720
`

// TestSliceStores cuts bicg's j loop into its two statements: keeping
// s[j]'s store drops q's sum in x2 and its load of p; keeping q[i]'s
// drops the load and store of s; keeping both keeps every load and
// store, and of the PUTs only those of slots the nest reads (s0, x2).
func TestSliceStores(t *testing.T) {
	bs, err := Parse(bicgInner)
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[uint64]*VBlock{}
	for _, b := range bs {
		blocks[b.Addr] = b
	}
	count := func(s *Slice, op Op, x86 uint64) int {
		n := 0
		for _, b := range s.Blocks {
			for _, in := range b.Insts {
				if in.Op == op && (x86 == 0 || in.X86 == x86) {
					n++
				}
			}
		}
		return n
	}
	s := SliceStores(blocks, func(in *Inst) bool { return in.X86 == 0x40173a })
	if count(s, OpSt, 0x40173a) != 1 || count(s, OpSt, 0x40174d) != 0 {
		t.Errorf("keeping s[j]'s store: stores %d at 0x40173a, %d at 0x40174d", count(s, OpSt, 0x40173a), count(s, OpSt, 0x40174d))
	}
	if count(s, OpLd, 0x40172d) != 0 || slices.Contains(s.Slots, XReg(2)) {
		t.Errorf("keeping s[j]'s store: p's load kept (%d) or x2 read (slots %v)", count(s, OpLd, 0x40172d), s.Slots)
	}
	if !slices.Contains(s.Slots, XReg(3)) || !slices.Contains(s.Slots, S0) {
		t.Errorf("keeping s[j]'s store: slots %v lack x3 (r[i]) or s0 (j)", s.Slots)
	}
	q := SliceStores(blocks, func(in *Inst) bool { return in.X86 == 0x40174d })
	if count(q, OpSt, 0) != 1 || count(q, OpLd, 0x401734) != 0 {
		t.Errorf("keeping q[i]'s store: %d stores, s's load kept %d times", count(q, OpSt, 0), count(q, OpLd, 0x401734))
	}
	if !slices.Contains(q.Slots, XReg(2)) || slices.Contains(q.Slots, XReg(3)) {
		t.Errorf("keeping q[i]'s store: slots %v (want x2, not x3)", q.Slots)
	}
	for a, b := range q.Blocks {
		if err := Verify(b); err != nil {
			t.Errorf("sliced block %#x: %v", a, err)
		}
	}
	all := SliceStores(blocks, func(*Inst) bool { return true })
	if count(all, OpSt, 0) != 2 || count(all, OpLd, 0) != 3 || count(all, OpPut, 0) != 2 {
		t.Errorf("keeping every store: %d stores, %d loads, %d puts", count(all, OpSt, 0), count(all, OpLd, 0), count(all, OpPut, 0))
	}
}

// flagsLoop is a loop whose back edge tests the lazy flags a FLAGS in
// another block set (a compare hoisted away from its branch), beside a
// store of a value nothing else reads.
const flagsLoop = `vblock 0x1000..0x1010:
  # 0x1000: sub rcx, 1
  GET.u64 v0, s1
  LI.u64 v1, 1
  SUB.u64 v2, v0, v1
  PUT.u64 s1, v2
  FLAGS.sub.u64 v0, v1, v2, v0
  # 0x1004: mov [rdi], rcx
  GET.u64 v3, s7
  ST.u64 v3(0), v2
  JMP 0x1010
vblock 0x1010..0x1018:
  # 0x1010: jnz 0x1000
  GETCC.ne v0
  BRANCH v0, 0x1000, 0x1018
`

// TestSliceStoresKeepsFlags drops the loop's only store: the count and
// the FLAGS its branch reads in the next block stay.
func TestSliceStoresKeepsFlags(t *testing.T) {
	bs, err := Parse(flagsLoop)
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[uint64]*VBlock{}
	for _, b := range bs {
		blocks[b.Addr] = b
	}
	s := SliceStores(blocks, func(*Inst) bool { return false })
	var ops []Op
	for _, in := range s.Blocks[0x1000].Insts {
		ops = append(ops, in.Op)
	}
	if !slices.Contains(ops, OpFlags) || !slices.Contains(ops, OpPut) || slices.Contains(ops, OpSt) {
		t.Errorf("sliced block 0x1000 runs %v: want the FLAGS and the count's PUT, no store", ops)
	}
	if !slices.Contains(s.Slots, S1) || slices.Contains(s.Slots, S7) {
		t.Errorf("slots %v: want s1 (the count), not s7 (the dropped store's base)", s.Slots)
	}
	for a, b := range s.Blocks {
		if err := Verify(b); err != nil {
			t.Errorf("sliced block %#x: %v", a, err)
		}
	}
}
