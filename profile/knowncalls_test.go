package profile

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// blockMap is a gvinst.Translator over parsed blocks (copies, as a lifter
// returns fresh ones).
type blockMap map[uint64]*gvinst.VBlock

func (m blockMap) Translate(addr uint64) (*gvinst.VBlock, error) {
	b, ok := m[addr]
	if !ok {
		return nil, fmt.Errorf("no block at %#x", addr)
	}
	c := *b
	c.Insts = append([]gvinst.Inst(nil), b.Insts...)
	return &c, nil
}

// memsetCaller calls 0x2000 (a PLT stub through the slot at 0x9000) with
// memset's arguments, then keeps the returned pointer in rbx and stops.
const memsetCaller = `
vblock 0x1000..0x100d:
  # 0x1000: call 0x2000
  GET.u64 v0, s4
  LI.u64 v1, 4109
  SUB.u64 v2, v0, 8
  ST.u64 v2(0), v1
  PUT.u64 s4, v2
  CALL 0x2000, 0x100d
vblock 0x100d..0x1012:
  # 0x100d: mov rbx, rax
  GET.u64 v0, s0
  PUT.u64 s3, v0
  SYSCALL 0x1012
vblock 0x2000..0x2006:
  # 0x2000: jmp qword ptr [rip+0x6ffa]
  LI.u64 v0, 36864
  LD.u64 v1, v0(0)
  JMPR v1
`

// TestInlineMemset checks that a call through a PLT stub whose slot holds
// a memset implementation runs, inlined, as memset does: rdx bytes of sil
// from rdi, rax = rdi; and that calls to other functions (memset's _chk
// form among them, or a slot not filled yet) are left alone.
func TestInlineMemset(t *testing.T) {
	for _, c := range []struct {
		name   string
		sym    string
		inline bool
	}{
		{"glibc's sse2 memset", "__memset_sse2_unaligned_erms", true},
		{"memset", "memset", true},
		{"the checked form", "__memset_chk_sse2_unaligned", false},
		{"wmemset", "__wmemset_sse2_unaligned", false},
		{"another function", "strlen", false},
		{"an empty slot", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			bs, err := gvinst.Parse(memsetCaller)
			if err != nil {
				t.Fatal(err)
			}
			blocks := blockMap{}
			for _, b := range bs {
				blocks[b.Addr] = b
			}
			mem := gvinst.NewMemory(1 << 24)
			if err := mem.Map(0x9000, 0x1000, gvinst.PermRead|gvinst.PermWrite); err != nil {
				t.Fatal(err)
			}
			if err := mem.Map(0x10000, 0x10000, gvinst.PermRead|gvinst.PermWrite); err != nil {
				t.Fatal(err)
			}
			var syms []Symbol
			if c.sym != "" {
				_ = mem.Store(0x9000, 8, 0x5000)
				syms = append(syms, Symbol{Name: c.sym, Addr: 0x5000, Size: 0x40})
			}
			k := NewKnownCalls(blocks, mem, syms)
			call, _ := blocks.Translate(0x1000)
			if got := InlineCall(call, k); got != c.inline {
				t.Fatalf("InlineCall = %v, want %v", got, c.inline)
			}
			if !c.inline {
				if last := call.Insts[len(call.Insts)-1]; last.Op != gvinst.OpCall {
					t.Errorf("the call became %s", last.Op)
				}
				return
			}
			if err := gvinst.Verify(call); err != nil {
				t.Fatalf("the inlined block does not verify: %v\n%s", err, gvinst.Print(call))
			}
			if s := call.Successors(); len(s) != 1 || s[0] != 0x100d {
				t.Errorf("successors %#x, want the return address 0x100d", s)
			}
			blocks[0x1000] = call
			for i := 0; i < 64; i++ {
				_ = mem.Store(0x10000+uint64(i), 1, 0xee)
			}
			cpu := &gvinst.CPU{PC: 0x1000}
			cpu.State[gvinst.S4] = 0x1f000
			cpu.State[gvinst.S7] = 0x10008    // dst
			cpu.State[gvinst.S6] = 0x1234     // c: only its low byte is stored
			cpu.State[gvinst.S2] = 40         // n
			cpu.State[gvinst.S0] = 0xdeadbeef // clobbered
			e := gvinst.NewInterpreter(mem, blocks, gvinst.InterpOptions{})
			if st := e.Run(cpu, 0); st.Kind != gvinst.StopSyscall {
				t.Fatalf("stopped: %v", st)
			}
			for i := 0; i < 64; i++ {
				v, _ := mem.Load(0x10000+uint64(i), 1)
				want := uint64(0xee)
				if i >= 8 && i < 48 {
					want = 0x34
				}
				if v != want {
					t.Fatalf("byte %d is %#x, want %#x", i, v, want)
				}
			}
			if cpu.State[gvinst.S3] != 0x10008 {
				t.Errorf("memset returned %#x, want its first argument 0x10008", cpu.State[gvinst.S3])
			}
		})
	}
}

// TestInlineMemcpy checks that a call through a PLT stub whose slot holds
// a memcpy implementation (glibc's memmove variant, or memcpy itself)
// runs, inlined, as glibc's memcpy does: rdx bytes from rsi to rdi as
// memmove copies them, whichever way the buffers overlap, rax = rdi, and
// the direction flag clear afterwards.
func TestInlineMemcpy(t *testing.T) {
	for _, sym := range []string{"__memmove_sse2_unaligned_erms", "memcpy", "__memcpy_avx_unaligned"} {
		for _, c := range []struct {
			name     string
			dst, src uint64
			n        uint64
		}{
			{"apart", 0x10030, 0x10000, 40},
			{"destination inside the source", 0x10008, 0x10000, 40},
			{"source inside the destination", 0x10000, 0x10008, 40},
			{"the same bytes", 0x10004, 0x10004, 16},
			{"nothing", 0x10008, 0x10000, 0},
		} {
			t.Run(sym+"/"+c.name, func(t *testing.T) {
				bs, err := gvinst.Parse(memsetCaller)
				if err != nil {
					t.Fatal(err)
				}
				blocks := blockMap{}
				for _, b := range bs {
					blocks[b.Addr] = b
				}
				mem := gvinst.NewMemory(1 << 24)
				if err := mem.Map(0x9000, 0x1000, gvinst.PermRead|gvinst.PermWrite); err != nil {
					t.Fatal(err)
				}
				if err := mem.Map(0x10000, 0x10000, gvinst.PermRead|gvinst.PermWrite); err != nil {
					t.Fatal(err)
				}
				_ = mem.Store(0x9000, 8, 0x5000)
				k := NewKnownCalls(blocks, mem, []Symbol{{Name: sym, Addr: 0x5000, Size: 0x40}})
				call, _ := blocks.Translate(0x1000)
				if !InlineCall(call, k) {
					t.Fatal("the call was not inlined")
				}
				if err := gvinst.Verify(call); err != nil {
					t.Fatalf("the inlined block does not verify: %v\n%s", err, gvinst.Print(call))
				}
				blocks[0x1000] = call
				want := make([]byte, 128)
				for i := range want {
					want[i] = byte(i*7 + 1)
					_ = mem.Store(0x10000+uint64(i), 1, uint64(want[i]))
				}
				copy(want[c.dst-0x10000:c.dst-0x10000+c.n], want[c.src-0x10000:c.src-0x10000+c.n]) // memmove
				cpu := &gvinst.CPU{PC: 0x1000}
				cpu.State[gvinst.S4] = 0x1f000
				cpu.State[gvinst.S7] = c.dst
				cpu.State[gvinst.S6] = c.src
				cpu.State[gvinst.S2] = c.n
				cpu.State[gvinst.RFLAGS] = 0x202
				e := gvinst.NewInterpreter(mem, blocks, gvinst.InterpOptions{})
				if st := e.Run(cpu, 0); st.Kind != gvinst.StopSyscall {
					t.Fatalf("stopped: %v", st)
				}
				got := make([]byte, 128)
				_ = mem.Read(0x10000, got)
				if !bytes.Equal(got, want) {
					t.Fatalf("memory after the copy:\n got %x\nwant %x", got, want)
				}
				if cpu.State[gvinst.S3] != c.dst {
					t.Errorf("memcpy returned %#x, want its first argument %#x", cpu.State[gvinst.S3], c.dst)
				}
				if f := cpu.State[gvinst.RFLAGS]; f&gvinst.FlagDF != 0 || f&0x200 == 0 {
					t.Errorf("RFLAGS after the copy %#x: want DF clear and IF kept", f)
				}
			})
		}
	}
}
