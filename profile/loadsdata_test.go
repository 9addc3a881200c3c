package profile

import (
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// rowLoop is the shape of gcc -O3's row loop in an 8-bit stencil: the
// header computes the next row offset in eax from spilled invariants and
// r13 (the add and sub also set the flags), and moves it to r13; a tail
// block uses rax as a temporary for a byte of the row, whose address the
// loop moves (rsi).
var rowLoop = [][]string{
	{ // header, 0x1000
		"GET.u64 v0, s4\n  LD.u32 v1, v0(60)\n  PUT.u64 s0, v1",
		"GET.u64 v0, s4\n  LD.u32 v1, v0(32)\n  PUT.u64 s7, v1",
		"GET.u64 v0, s0\n  GET.u64 v1, s13\n  ADD.u32 v2, v0, v1\n  FLAGS.add.u32 v0, v1, v2, v0\n  PUT.u64 s0, v2",
		"GET.u64 v0, s0\n  GET.u64 v1, s7\n  SUB.u32 v2, v0, v1\n  FLAGS.sub.u32 v0, v1, v2, v0\n  PUT.u64 s0, v2",
		"GET.u64 v0, s0\n  CVT.rn.u64.u32 v1, v0\n  PUT.u64 s13, v1\n  JMP 0x1010",
	},
	{ // tail, 0x1010
		"GET.u64 v0, s6\n  ADD.u64 v1, v0, 1\n  PUT.u64 s6, v1",
		"GET.u64 v0, s6\n  LD.u8 v1, v0(0)\n  PUT.u64 s0, v1\n  JMP 0x1000",
	},
}

// TestLoadsDataFollowsTheBlock checks that a register computed in the
// header from values the header itself put in rax is not taken for data
// because a tail block of the loop loads data into rax too (blur8 -O3's i
// loop was sequential for r13): a slot written earlier in the same block
// holds what that write put there. rax itself, and rsi's byte, are data.
func TestLoadsDataFollowsTheBlock(t *testing.T) {
	var blocks []*Block
	for bi, insns := range rowLoop {
		b := &Block{Addr: 0x1000 + 0x10*uint64(bi)}
		for xi, text := range insns {
			bs, err := gvinst.Parse("vblock 0x1000..0x1001:\n  " + text + "\n")
			if err != nil {
				t.Fatalf("%s: %v", text, err)
			}
			b.Insns = append(b.Insns, &Insn{Addr: b.Addr + uint64(xi), Code: bs[0].Insts})
		}
		blocks = append(blocks, b)
	}
	blocks[0].Succs, blocks[1].Succs = []*Block{blocks[1]}, []*Block{blocks[0]}
	l := &Loop{Header: blocks[0], Blocks: blocks, body: map[*Block]bool{blocks[0]: true, blocks[1]: true}}
	if loadsData(l, slotBit(gvinst.SReg(13))) {
		t.Error("r13 (the header's rax, from spilled invariants and r13) is taken for loaded data")
	}
	if !loadsData(l, slotBit(gvinst.S0)) {
		t.Error("rax, which the tail loads a byte of the row into, is not taken for data")
	}
}

// borrowedCounter is the shape of gcc -O2's row loop in blur8: the header
// spills the row offset (edx) to the stack, the column loop below it
// borrows edx for the bytes it loads, and the latch restores edx from the
// spill plus the row length before the back edge. With restore false,
// the latch leaves the column loop's byte in edx.
func borrowedCounter(t *testing.T, restore bool) *Loop {
	t.Helper()
	latch := "GET.u64 v0, s4\n  LD.u32 v1, v0(4)\n  GET.u64 v2, s12\n  ADD.u32 v3, v1, v2\n  PUT.u64 s2, v3\n  JMP 0x1000"
	if !restore {
		latch = "GET.u64 v0, s11\n  ADD.u64 v1, v0, 1\n  PUT.u64 s11, v1\n  JMP 0x1000"
	}
	text := [][]string{
		{"GET.u64 v0, s4\n  GET.u64 v1, s2\n  ST.u32 v0(4), v1\n  JMP 0x1010"},                          // header, 0x1000
		{"GET.u64 v0, s6\n  GET.u64 v1, s1\n  ADD.u64 v2, v0, v1\n  LD.u8 v3, v2(0)\n  PUT.u64 s2, v3"}, // column loop, 0x1010
		{latch}, // latch, 0x1020
	}
	var blocks []*Block
	for bi, insns := range text {
		b := &Block{Addr: 0x1000 + 0x10*uint64(bi)}
		for xi, s := range insns {
			bs, err := gvinst.Parse("vblock 0x1000..0x1001:\n  " + s + "\n")
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			b.Insns = append(b.Insns, &Insn{Addr: b.Addr + uint64(xi), Code: bs[0].Insts})
		}
		blocks = append(blocks, b)
	}
	blocks[0].Succs = []*Block{blocks[1]}
	blocks[1].Succs = []*Block{blocks[1], blocks[2]}
	blocks[2].Succs = []*Block{blocks[0]}
	return &Loop{Header: blocks[0], Blocks: blocks, body: map[*Block]bool{blocks[0]: true, blocks[1]: true, blocks[2]: true}}
}

// TestLoadsDataBorrowedCounter checks that a row offset the latch
// restores from its spill is not taken for data because the column loop
// below borrows its register for loaded bytes (blur8 -O2's row loop was
// sequential for edx): only writes whose value can reach a back edge
// count. Without the restore the byte reaches the header, and is data.
func TestLoadsDataBorrowedCounter(t *testing.T) {
	if loadsData(borrowedCounter(t, true), slotBit(gvinst.SReg(2))) {
		t.Error("edx, restored from its spill before the back edge, is taken for loaded data")
	}
	if !loadsData(borrowedCounter(t, false), slotBit(gvinst.SReg(2))) {
		t.Error("edx, which holds a loaded byte at the back edge, is not taken for data")
	}
}

// freedRegisters is the shape of gcc -O3's gemm row loop: the header
// copies rdx away to r12 and spills ebp to [rsp+0x38] (r12d beside it, at
// 0x3c), the inner loop uses both as temporaries, and the latch puts them
// back. With restore false the latch leaves the inner loop's values.
func freedRegisters(t *testing.T, restore bool) *Loop {
	t.Helper()
	latch := "GET.u64 v0, s12\n  PUT.u64 s2, v0\n  GET.u64 v1, s4\n  LD.u32 v2, v1(56)\n  PUT.u64 s5, v2\n  JMP 0x1000"
	if !restore {
		latch = "GET.u64 v0, s11\n  ADD.u64 v1, v0, 1\n  PUT.u64 s11, v1\n  JMP 0x1000"
	}
	text := [][]string{
		{"GET.u64 v0, s2\n  MOV.u64 v1, v0\n  PUT.u64 s12, v1", "GET.u64 v0, s4\n  GET.u64 v1, s5\n  ST.u32 v0(56), v1", "GET.u64 v0, s4\n  GET.u64 v1, s12\n  ST.u32 v0(60), v1\n  JMP 0x1010"}, // header, 0x1000
		{"GET.u64 v0, s6\n  GET.u64 v1, s2\n  ADD.u64 v2, v0, v1\n  PUT.u64 s2, v2\n  AND.u32 v3, v2, -4\n  PUT.u64 s5, v3"},                                                                     // inner loop, 0x1010
		{latch}, // latch, 0x1020
	}
	var blocks []*Block
	for bi, insns := range text {
		b := &Block{Addr: 0x1000 + 0x10*uint64(bi)}
		for xi, s := range insns {
			bs, err := gvinst.Parse("vblock 0x1000..0x1001:\n  " + s + "\n")
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			b.Insns = append(b.Insns, &Insn{Addr: b.Addr + uint64(xi), Code: bs[0].Insts})
		}
		blocks = append(blocks, b)
	}
	blocks[0].Succs = []*Block{blocks[1]}
	blocks[1].Succs = []*Block{blocks[1], blocks[2]}
	blocks[2].Succs = []*Block{blocks[0]}
	blocks[0].Preds = []*Block{blocks[2]}
	blocks[1].Preds = []*Block{blocks[0], blocks[1]}
	blocks[2].Preds = []*Block{blocks[1]}
	return &Loop{Header: blocks[0], Blocks: blocks, Latches: []*Block{blocks[2]}, body: map[*Block]bool{blocks[0]: true, blocks[1]: true, blocks[2]: true}}
}

// TestFreedRegisters checks that rdx, copied to r12 and back, and ebp,
// spilled to [rsp+0x38] beside another 4-byte spill at 0x3c and loaded
// back, hold their header values at the back edge (copyRestored,
// spillRestored): gemm -O3's row loop was sequential for both. Without
// the restores they do not.
func TestFreedRegisters(t *testing.T) {
	rdx, rbp := slotBit(gvinst.SReg(2)), slotBit(gvinst.SReg(5))
	if l := freedRegisters(t, true); !copyRestored(l, rdx, true) || !spillRestored(l, rbp, true) || !copyRestored(l, rbp, true) {
		t.Errorf("restored: rdx %v (copied to r12 and back), ebp %v %v (spilled beside r12d), want all", copyRestored(l, rdx, true), spillRestored(l, rbp, true), copyRestored(l, rbp, true))
	}
	if l := freedRegisters(t, true); copyRestored(l, rbp, false) {
		t.Error("ebp, spilled in 32 bits, taken for restored where its value may not fit in 32 bits")
	}
	if l := freedRegisters(t, false); copyRestored(l, rdx, true) || spillRestored(l, rbp, true) || copyRestored(l, rbp, true) {
		t.Error("not restored: rdx or ebp taken for the header's value")
	}
}
