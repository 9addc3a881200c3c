package gvinst

import "testing"

// TestSplitAt cuts a block before one of its guest instructions, as and
// before/after text, and checks the cases it must refuse.
func TestSplitAt(t *testing.T) {
	const src = `vblock 0x401000..0x40100c:
  # 0x401000: mov eax, dword ptr [rbp-0x8]
  GET.s64 v0, s5
  LD.s32 v1, v0(-8)
  # 0x401003: add eax, 0x64
  ADD.s32 v2, v1, 100
  PUT.u64 s0, v2
  # 0x401006: mov dword ptr [rbp-0x8], eax
  ST.s32 v0(-8), v2
  # 0x401009: jmp 0x401000
  JMP 0x401000
`
	parse := func() *VBlock {
		bs, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		b := bs[0]
		b.FlagsDeadAtExit = true
		return b
	}
	b := parse()
	if !b.SplitAt(0x401006) {
		t.Fatal("SplitAt(0x401006) refused")
	}
	want := `vblock 0x401000..0x401006:
  # 0x401000: mov eax, dword ptr [rbp-0x8]
  GET.s64 v0, s5
  LD.s32 v1, v0(-8)
  # 0x401003: add eax, 0x64
  ADD.s32 v2, v1, 100
  PUT.u64 s0, v2
  JMP 0x401006
`
	if got := Print(b); got != want {
		t.Errorf("after SplitAt:\n%s\nwant:\n%s", got, want)
	}
	if !b.Split || b.FlagsDeadAtExit || len(b.Guest) != 2 {
		t.Errorf("Split %v, FlagsDeadAtExit %v, %d guest instructions", b.Split, b.FlagsDeadAtExit, len(b.Guest))
	}
	if err := Verify(b); err != nil {
		t.Errorf("the cut block does not verify: %v", err)
	}
	for _, a := range []uint64{0x401000, 0x401004, 0x40100c, 0x400000} {
		b := parse()
		if b.SplitAt(a) || b.Split || b.End != 0x40100c {
			t.Errorf("SplitAt(%#x) cut the block", a)
		}
	}
}

// TestSplitAtAfterNop cuts a block whose guest instructions before the
// address lifted to nothing (a nop before a loop header that the block
// falls into): the block becomes the jump alone.
func TestSplitAtAfterNop(t *testing.T) {
	const src = `vblock 0x40172d..0x401734:
  # 0x40172d: nop dword ptr [rax]
  # 0x401730: movsd xmm1, qword ptr [rdi]
  GET.u64 v0, s7
  LD.f64 v1, v0(0)
  PUT.f64 x1, v1
  JMP 0x401734
`
	bs, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	b := bs[0]
	if !b.SplitAt(0x401730) {
		t.Fatal("SplitAt(0x401730) refused")
	}
	if len(b.Insts) != 1 || b.Insts[0].Op != OpJmp || b.Insts[0].Target[0] != 0x401730 || b.End != 0x401730 || !b.Split || len(b.Guest) != 1 {
		t.Errorf("after SplitAt:\n%s", Print(b))
	}
	if err := Verify(b); err != nil {
		t.Errorf("the cut block does not verify: %v", err)
	}
	if b.SplitAt(0x40172e) {
		t.Error("SplitAt inside the nop cut the block")
	}
}
