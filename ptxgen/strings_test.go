package ptxgen

import (
	"errors"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// rowCopy copies a row per iteration with rep movsb, as an inlined memcpy
// does (profile.InlineCall): s15 bytes from s14 to s13, both moving by s9,
// until s13 reaches s12.
const rowCopy = `
vblock 0x7000..0x7010:
  # 0x7000: mov rdi, r13; mov rsi, r14; mov rcx, r15; rep movsb; add r13, r9; add r14, r9; cmp r13, r12; jne
  GET.u64 v0, s13
  PUT.u64 s7, v0
  GET.u64 v1, s14
  PUT.u64 s6, v1
  GET.u64 v2, s15
  PUT.u64 s1, v2
  REPMOVS.u8
  GET.u64 v3, s9
  ADD.u64 v4, v0, v3
  PUT.u64 s13, v4
  ADD.u64 v5, v1, v3
  PUT.u64 s14, v5
  GET.u64 v6, s12
  CMP.ne.u64 v7, v4, v6
  BRANCH v7, 0x7000, 0x7100
vblock 0x7100..0x7102:
  # 0x7100: syscall
  SYSCALL 0x7102
`

// rowCopyCase runs rowCopy over 100 rows of 43 bytes, 64 apart, from
// dataBase + src to dataBase + dst.
func rowCopyCase(name string, dst, src uint64) loopCase {
	return loopCase{
		name: name, src: rowCopy, header: 0x7000, level: []uint64{0x7000}, arrivals: 100,
		setup: func(mem *gvinst.Memory, cpu *gvinst.CPU) {
			for i := uint64(0); i < 0x2000; i++ {
				_ = mem.Store(dataBase+i, 1, i*7+i/64)
			}
			cpu.State[gvinst.SReg(13)] = dataBase + dst
			cpu.State[gvinst.SReg(14)] = dataBase + src
			cpu.State[gvinst.SReg(15)] = 43
			cpu.State[gvinst.SReg(9)] = 64
			cpu.State[gvinst.SReg(12)] = dataBase + dst + 100*64
		},
		data: Range{dataBase, dataBase + 0x8000},
	}
}

// TestRowCopy runs a nest whose iterations each copy a row (gcc's memcpy
// of a row, inlined) on gpusim: where source and destination are apart,
// memory ends as the CPU engine leaves it, whether they are aligned alike
// (words, after a head of bytes where they are not 8-byte aligned) or not
// (bytes); where each copy's destination
// starts inside its source (8 bytes on, in the same buffer), the kernel
// fails with ErrCodeOverlap at the copy, since the CPU copies such a
// memcpy as memmove and the kernel copies upward only.
func TestRowCopy(t *testing.T) {
	for _, c := range []loopCase{
		rowCopyCase("aligned", 0x4000, 0),
		rowCopyCase("aligned alike", 0x4003, 3),
		rowCopyCase("aligned unlike", 0x4005, 2),
	} {
		if k, err := runOnGPU(t, c, nil); err != nil {
			t.Fatalf("%s: launch: %v\n%s", c.name, err, numbered(k.PTX))
		}
	}
	_, err := runOnGPU(t, rowCopyCase("overlapping", 8, 0), nil)
	var ke *KernelError
	if !errors.As(err, &ke) || ke.Code != ErrCodeOverlap || ke.X86 != 0x7000 {
		t.Fatalf("overlapping copies: got %v, want the kernel error %d at 0x7000", err, ErrCodeOverlap)
	}
}

// rowFill stores s15 bytes of rax's low byte per iteration with rep
// stosb, as an inlined memset does: from s13, moving by s9, until s13
// reaches s12.
const rowFill = `
vblock 0x7200..0x7210:
  # 0x7200: mov rdi, r13; mov rcx, r15; rep stosb; add r13, r9; cmp r13, r12; jne
  GET.u64 v0, s13
  PUT.u64 s7, v0
  GET.u64 v2, s15
  PUT.u64 s1, v2
  REPSTOS.u8
  GET.u64 v3, s9
  ADD.u64 v4, v0, v3
  PUT.u64 s13, v4
  GET.u64 v6, s12
  CMP.ne.u64 v7, v4, v6
  BRANCH v7, 0x7200, 0x7300
vblock 0x7300..0x7302:
  # 0x7300: syscall
  SYSCALL 0x7302
`

// TestRowFill runs a nest whose iterations each fill a row of 43 bytes
// (an inlined memset) on gpusim, the rows starting on a word boundary or
// 3 bytes into one: memory ends as the CPU engine leaves it (the kernel
// stores words of the byte repeated between the rows' bytes).
func TestRowFill(t *testing.T) {
	for _, start := range []uint64{0, 3} {
		c := loopCase{
			name: "rowFill", src: rowFill, header: 0x7200, level: []uint64{0x7200}, arrivals: 100,
			setup: func(mem *gvinst.Memory, cpu *gvinst.CPU) {
				for i := uint64(0); i < 0x2000; i++ {
					_ = mem.Store(dataBase+i, 1, i*7+i/64)
				}
				cpu.State[gvinst.SReg(13)] = dataBase + start
				cpu.State[gvinst.S0] = 0x12a5
				cpu.State[gvinst.SReg(15)] = 43
				cpu.State[gvinst.SReg(9)] = 64
				cpu.State[gvinst.SReg(12)] = dataBase + start + 100*64
			},
			data: Range{dataBase, dataBase + 0x8000},
		}
		if k, err := runOnGPU(t, c, nil); err != nil {
			t.Fatalf("rows from %d: launch: %v\n%s", start, err, numbered(k.PTX))
		}
	}
}
