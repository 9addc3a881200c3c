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
