package gvinst

import (
	"errors"
	"strings"
	"testing"
)

// chkAlignCases are the shapes CHKALIGN comes in: alone, and right before
// the 16-byte access it guards, with the address a register plus a
// displacement, base + index<<3, base + index and base + immediate (the
// forms the compiled engine folds into one access). s7 holds the base, s6
// the index (2), x1 the value a store writes. addr is the address checked,
// given s7; folded is how many compiled accesses carry the check.
var chkAlignCases = []struct {
	name   string
	body   string
	align  int
	store  bool
	addr   func(s7 uint64) uint64
	folded int
}{
	{"alone.u32", `  GET.u64 v0, s7
  CHKALIGN.u32 v0(2)
  LI.u64 v1, 7
  PUT.u64 s0, v1
`, 4, false, func(s7 uint64) uint64 { return s7 + 2 }, 0},
	{"alone.b128", `  GET.u64 v0, s7
  CHKALIGN.b128 v0(-8)
`, 16, false, func(s7 uint64) uint64 { return s7 - 8 }, 0},
	{"load", `  GET.u64 v0, s7
  CHKALIGN.b128 v0(16)
  LD.b128 v2, v0(16)
  PUT.b128 x0, v2
`, 16, false, func(s7 uint64) uint64 { return s7 + 16 }, 1},
	{"load.indexed", `  GET.u64 v0, s7
  GET.u64 v1, s6
  SHL.u64 v2, v1, 3
  ADD.u64 v3, v0, v2
  CHKALIGN.b128 v3(0)
  LD.b128 v4, v3(0)
  PUT.b128 x0, v4
`, 16, false, func(s7 uint64) uint64 { return s7 + 16 }, 1},
	{"load.imm", `  GET.u64 v0, s7
  ADD.u64 v3, v0, 32
  CHKALIGN.b128 v3(8)
  LD.b128 v4, v3(8)
  PUT.b128 x0, v4
`, 16, false, func(s7 uint64) uint64 { return s7 + 40 }, 1},
	{"store", `  GET.b128 v4, x1
  GET.u64 v0, s7
  CHKALIGN.b128 v0(0)
  ST.b128 v0(0), v4
`, 16, true, func(s7 uint64) uint64 { return s7 }, 1},
	{"store.indexed", `  GET.b128 v4, x1
  GET.u64 v0, s7
  GET.u64 v1, s6
  ADD.u64 v3, v0, v1
  CHKALIGN.b128 v3(0)
  ST.b128 v3(0), v4
`, 16, true, func(s7 uint64) uint64 { return s7 + 2 }, 1},
}

// TestChkAlignFaults runs every shape on every engine at each offset 0..31
// from an aligned page: CHKALIGN stops the guest exactly when the address
// is not a multiple of its type's size, with a segv trap at the guest
// instruction, the address as FaultAddr and a *MisalignedError, and
// before the access changes anything; otherwise the access happens.
func TestChkAlignFaults(t *testing.T) {
	for _, c := range chkAlignCases {
		for _, e := range allEngines() {
			t.Run(c.name+"/"+e.name, func(t *testing.T) {
				for off := uint64(0); off < 32; off++ {
					m := newMachine(t, e, c.body)
					s7 := dataBase + 64 + off
					m.cpu.State[S7], m.cpu.State[S6] = s7, 2
					m.cpu.State[XReg(1)], m.cpu.State[XReg(1)+1] = 0x1111, 0x2222
					m.cpu.State[X0], m.cpu.State[X0+1] = 0xdead, 0xbeef
					for i := uint64(0); i < 256; i += 8 {
						_ = m.mem.Store(dataBase+i, 8, i|0x5500)
					}
					addr := c.addr(s7)
					stop := m.run(t)
					if addr%uint64(c.align) == 0 {
						if stop.Kind != StopSyscall {
							t.Fatalf("offset %d: address %#x is aligned, stop %v", off, addr, stop)
						}
						checkAccessDone(t, m, c.store, c.name, addr)
						continue
					}
					var me *MisalignedError
					if stop.Kind != StopTrap || stop.Trap != TrapSegv || stop.PC != 0x1000 || stop.FaultAddr != addr ||
						!errors.As(stop.Err, &me) || me.Addr != addr || me.Align != c.align {
						t.Fatalf("offset %d: address %#x: stop %+v, want a misaligned trap", off, addr, stop)
					}
					if m.cpu.State[X0] != 0xdead || m.cpu.State[X0+1] != 0xbeef || m.cpu.State[S0] != 0 {
						t.Errorf("offset %d: the faulting instruction wrote registers", off)
					}
					if v, _ := m.mem.Load(addr&^7, 8); v != (addr&^7-dataBase)|0x5500 {
						t.Errorf("offset %d: the faulting instruction wrote memory", off)
					}
				}
			})
		}
		// The compiled engine folds the check into the access after it.
		bs, err := Parse("vblock 0x1000..0x1010:\n" + c.body + "  SYSCALL 0x2000\n")
		if err != nil {
			t.Fatal(err)
		}
		cb, err := compileBlock(bs[0], true)
		if err != nil {
			t.Fatal(err)
		}
		folded := 0
		for _, ci := range cb.code {
			switch ci.op {
			case iLd128, iLdX128, iSt128, iStX128:
				if ci.mod&modAligned != 0 {
					folded++
				}
			}
		}
		if folded != c.folded {
			t.Errorf("%s: %d compiled accesses check alignment, want %d", c.name, folded, c.folded)
		}
	}
}

// checkAccessDone checks the effect of an aligned access of a case.
func checkAccessDone(t *testing.T, m *machine, store bool, name string, addr uint64) {
	t.Helper()
	switch {
	case store:
		lo, _ := m.mem.Load(addr, 8)
		hi, _ := m.mem.Load(addr+8, 8)
		if lo != 0x1111 || hi != 0x2222 {
			t.Errorf("store to %#x: memory holds %#x %#x", addr, lo, hi)
		}
	case strings.HasPrefix(name, "load"):
		lo, _ := m.mem.Load(addr, 8)
		hi, _ := m.mem.Load(addr+8, 8)
		if m.cpu.State[X0] != lo || m.cpu.State[X0+1] != hi {
			t.Errorf("load from %#x: x0 = %#x %#x, memory %#x %#x", addr, m.cpu.State[X0], m.cpu.State[X0+1], lo, hi)
		}
	case strings.HasPrefix(name, "alone.u32"):
		if m.cpu.State[S0] != 7 {
			t.Errorf("the instruction after the check did not run")
		}
	}
}
