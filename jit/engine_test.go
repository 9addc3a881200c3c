//go:build linux && amd64

package jit

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// textTranslator serves VBlocks parsed from GVInst text.
type textTranslator struct {
	blocks map[uint64]*gvinst.VBlock
	mem    *gvinst.Memory
}

func newTextTranslator(t testing.TB, mem *gvinst.Memory, src string) *textTranslator {
	t.Helper()
	bs, err := gvinst.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	tr := &textTranslator{blocks: map[uint64]*gvinst.VBlock{}, mem: mem}
	for _, b := range bs {
		tr.blocks[b.Addr] = b
	}
	return tr
}

func (tr *textTranslator) Translate(addr uint64) (*gvinst.VBlock, error) {
	if b, ok := tr.blocks[addr]; ok {
		c := *b
		c.Insts = append([]gvinst.Inst(nil), b.Insts...)
		return &c, nil
	}
	// An x86 instruction inside a block starts that block's tail, as the
	// lifter translates a jump into the middle of a block (the engines go
	// on there after finishing an instruction in Go).
	for _, b := range tr.blocks {
		if addr <= b.Addr || addr >= b.End {
			continue
		}
		for i := range b.Insts {
			if b.Insts[i].X86 == addr {
				c := *b
				c.Addr = addr
				c.Insts = append([]gvinst.Inst(nil), b.Insts[i:]...)
				c.Guest = nil
				for _, g := range b.Guest {
					if g.Addr >= addr {
						c.Guest = append(c.Guest, g)
					}
				}
				return &c, nil
			}
		}
	}
	var buf [1]byte
	if _, err := tr.mem.Fetch(addr, buf[:]); err != nil {
		return nil, fmt.Errorf("fetching code: %w", err)
	}
	return nil, errors.New("invalid instruction")
}

// sumLoop sums the s1 quadwords at [s7] into s0, then makes a system call.
const sumLoop = `vblock 0x1000..0x1004:
  # 0x1000: xor eax, eax
  LI.u64 v0, 0
  PUT.u64 s0, v0
  LI.u64 v1, 0
  FLAGS.logic.u32 v1, v1, v1, v1
  # 0x1002: jmp 0x1010
  JMP 0x1010
vblock 0x1010..0x101d:
  # 0x1010: add rax, qword ptr [rdi]
  GET.u64 v0, s7
  LD.u64 v1, v0(0)
  GET.u64 v2, s0
  ADD.u64 v3, v2, v1
  FLAGS.add.u64 v2, v1, v3, v2
  PUT.u64 s0, v3
  # 0x1013: add rdi, 8
  GET.u64 v4, s7
  ADD.u64 v5, v4, 8
  LI.u64 v6, 8
  FLAGS.add.u64 v4, v6, v5, v4
  PUT.u64 s7, v5
  # 0x1017: sub rcx, 1
  GET.u64 v7, s1
  LI.u64 v8, 1
  SUB.u64 v9, v7, v8
  FLAGS.sub.u64 v7, v8, v9, v7
  PUT.u64 s1, v9
  # 0x101b: jne 0x1010
  GETCC.ne v10
  BRANCH v10, 0x1010, 0x101d
vblock 0x101d..0x101f:
  # 0x101d: syscall
  SYSCALL 0x101f
`

const dataBase = 0x100000

// mxDE is MXCSR's denormal-operand flag.
const mxDE = 1 << 1

func TestSumLoop(t *testing.T) {
	for _, opt := range []bool{false, true} {
		mem := gvinst.NewMemory(0)
		if err := mem.Map(dataBase, 16*gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		const n = 3000
		want := uint64(0)
		for i := uint64(0); i < n; i++ {
			v := i*i*7919 + 3
			want += v
			if err := mem.Store(dataBase+8*i, 8, v); err != nil {
				t.Fatal(err)
			}
		}
		e, err := New(mem, newTextTranslator(t, mem, sumLoop), gvinst.InterpOptions{Optimize: opt})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		cpu := &gvinst.CPU{PC: 0x1000}
		cpu.State[gvinst.S7] = dataBase
		cpu.State[gvinst.S1] = n
		stop := e.Run(cpu, 0)
		if stop.Kind != gvinst.StopSyscall || stop.PC != 0x101f {
			t.Fatalf("optimize=%v: stop = %v", opt, stop)
		}
		if got := cpu.State[gvinst.S0]; got != want {
			t.Errorf("optimize=%v: sum = %d, want %d", opt, got, want)
		}
		if got := e.Stats().GuestInsns; got != 2+4*n+1 {
			t.Errorf("optimize=%v: guest instructions = %d, want %d", opt, got, 2+4*n+1)
		}
		t.Logf("optimize=%v: %+v", opt, e.Stats())
	}
}
