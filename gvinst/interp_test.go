package gvinst

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// textTranslator serves VBlocks parsed from GVInst text; addresses without a
// block fail like a decoder would: a fetch fault where nothing executable
// is mapped, an illegal instruction otherwise.
type textTranslator struct {
	blocks map[uint64]*VBlock
	mem    *Memory
	calls  int
}

func newTextTranslator(t testing.TB, mem *Memory, src string) *textTranslator {
	t.Helper()
	bs, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	tr := &textTranslator{blocks: map[uint64]*VBlock{}, mem: mem}
	for _, b := range bs {
		if err := Verify(b); err != nil {
			t.Fatal(err)
		}
		tr.blocks[b.Addr] = b
	}
	return tr
}

func (tr *textTranslator) Translate(addr uint64) (*VBlock, error) {
	tr.calls++
	if b, ok := tr.blocks[addr]; ok {
		return cloneBlock(b), nil
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

// engines returns the interpreter configurations every end-to-end test
// runs on: reference path only, specialised, and specialised with the
// optimization passes.
func engines() []struct {
	name     string
	optimize bool
	noFast   bool
} {
	return []struct {
		name     string
		optimize bool
		noFast   bool
	}{{"reference", false, true}, {"fast", false, false}, {"optimized", true, false}}
}

func newSumMachine(t testing.TB, n int, opts InterpOptions, noFast bool) (*Interpreter, *CPU, *textTranslator, uint64) {
	t.Helper()
	mem := NewMemory(0)
	if err := mem.Map(0x1000, PageSize, PermRead|PermExec); err != nil {
		t.Fatal(err)
	}
	if err := mem.Map(dataBase, uint64(8*n+PageSize), PermRead|PermWrite); err != nil {
		t.Fatal(err)
	}
	var want uint64
	for i := 0; i < n; i++ {
		v := uint64(i*i + 3)
		want += v
		if err := mem.Store(dataBase+uint64(8*i), 8, v); err != nil {
			t.Fatal(err)
		}
	}
	tr := newTextTranslator(t, mem, sumLoop)
	it := NewInterpreter(mem, tr, opts)
	it.noFast = noFast
	cpu := &CPU{PC: 0x1000}
	cpu.State[S7] = dataBase
	cpu.State[S1] = uint64(n)
	return it, cpu, tr, want
}

func TestRunSumLoop(t *testing.T) {
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			const n = 100
			it, cpu, tr, want := newSumMachine(t, n, InterpOptions{Optimize: e.optimize}, e.noFast)
			stop := it.Run(cpu, 0)
			if stop.Kind != StopSyscall || stop.PC != 0x101f || cpu.PC != 0x101f {
				t.Fatalf("stop = %+v, pc %#x", stop, cpu.PC)
			}
			if cpu.State[S0] != want || cpu.State[S1] != 0 || cpu.State[S7] != dataBase+8*n {
				t.Errorf("s0=%d (want %d) s1=%d s7=%#x", cpu.State[S0], want, cpu.State[S1], cpu.State[S7])
			}
			// Flags left by the last sub: ZF set.
			if fl := getFlagsOf(cpu); fl&FlagZF == 0 || fl&FlagCF != 0 {
				t.Errorf("flags = %#x, want ZF and not CF", fl)
			}
			st := it.Stats()
			if wantInsns := uint64(2 + 4*n + 1); st.GuestInsns != wantInsns {
				t.Errorf("GuestInsns = %d, want %d", st.GuestInsns, wantInsns)
			}
			if st.BlocksTranslated != 3 || tr.calls != 3 || st.BlocksExecuted != n+2 {
				t.Errorf("stats %+v, translate calls %d", st, tr.calls)
			}
			if st.ChainHits < n-2 {
				t.Errorf("ChainHits = %d, want at least %d", st.ChainHits, n-2)
			}
		})
	}
}

func getFlagsOf(cpu *CPU) uint64 {
	var f frame
	copy(f[:], cpu.State[:])
	return getFlags(&f)
}

func TestRunBudgetAndBreakpoint(t *testing.T) {
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			it, cpu, _, want := newSumMachine(t, 10, InterpOptions{Optimize: e.optimize}, e.noFast)
			stop := it.Run(cpu, 5)
			// 2 instructions, then one loop iteration of 4: 6 ≥ 5.
			if stop.Kind != StopBudget || stop.PC != 0x1010 || cpu.PC != 0x1010 {
				t.Fatalf("stop = %+v", stop)
			}
			if it.Stats().GuestInsns != 6 {
				t.Errorf("GuestInsns = %d, want 6", it.Stats().GuestInsns)
			}
			if stop := it.Run(cpu, 0); stop.Kind != StopSyscall || cpu.State[S0] != want {
				t.Fatalf("resumed: stop %+v, s0 %d want %d", stop, cpu.State[S0], want)
			}

			it, cpu, _, want = newSumMachine(t, 3, InterpOptions{Optimize: e.optimize, Breakpoints: map[uint64]bool{0x1010: true}}, e.noFast)
			hits := 0
			for {
				stop := it.Run(cpu, 0)
				if stop.Kind == StopBreakpoint {
					if stop.PC != 0x1010 || cpu.PC != 0x1010 {
						t.Fatalf("breakpoint stop %+v pc %#x", stop, cpu.PC)
					}
					hits++
					continue
				}
				if stop.Kind != StopSyscall {
					t.Fatalf("stop %+v", stop)
				}
				break
			}
			if hits != 3 || cpu.State[S0] != want {
				t.Errorf("breakpoint hits = %d (want 3), s0 = %d want %d", hits, cpu.State[S0], want)
			}
		})
	}
}

func TestRunSegfaultAndProbe(t *testing.T) {
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			var probes []string
			opts := InterpOptions{Optimize: e.optimize, Probe: func(site uint32, addr uint64, size int) {
				probes = append(probes, fmt.Sprintf("%d:%#x:%d", site, addr, size))
			}}
			mem := NewMemory(0)
			if err := mem.Map(0x1000, PageSize, PermRead|PermExec); err != nil {
				t.Fatal(err)
			}
			if err := mem.Map(dataBase, PageSize, PermRead|PermWrite); err != nil {
				t.Fatal(err)
			}
			tr := newTextTranslator(t, mem, `vblock 0x1000..0x1010:
  # 0x1000: mov qword ptr [rdi], rax
  GET.u64 v0, s7
  GET.u64 v1, s0
  PROBE.u64 v0(0), 7
  ST.u64 v0(0), v1
  # 0x1003: add rdi, 0x1000
  ADD.u64 v2, v0, 4096
  PUT.u64 s7, v2
  # 0x100a: mov qword ptr [rdi+8], rax
  PROBE.u32 v2(8), 8
  ST.u32 v2(8), v1
  # 0x100e: jmp 0x1000
  JMP 0x1000
`)
			it := NewInterpreter(mem, tr, opts)
			it.noFast = e.noFast
			cpu := &CPU{PC: 0x1000}
			cpu.State[S7] = dataBase
			cpu.State[S0] = 42
			stop := it.Run(cpu, 0)
			if stop.Kind != StopTrap || stop.Trap != TrapSegv || stop.PC != 0x100a || cpu.PC != 0x100a {
				t.Fatalf("stop = %+v", stop)
			}
			if stop.FaultAddr != dataBase+PageSize+8 || stop.Insn != "mov qword ptr [rdi+8], rax" {
				t.Errorf("fault addr %#x insn %q", stop.FaultAddr, stop.Insn)
			}
			var f *Fault
			if !errors.As(stop.Err, &f) || f.Access != AccessWrite {
				t.Errorf("err = %v", stop.Err)
			}
			if v, _ := mem.Load(dataBase, 8); v != 42 {
				t.Errorf("stored %d", v)
			}
			if cpu.State[S7] != dataBase+PageSize {
				t.Errorf("s7 = %#x", cpu.State[S7])
			}
			if got := strings.Join(probes, " "); got != "7:0x100000:8 8:0x101008:4" {
				t.Errorf("probes = %s", got)
			}
			if it.Stats().GuestInsns != 2 {
				t.Errorf("GuestInsns = %d, want 2 (the faulting one does not count)", it.Stats().GuestInsns)
			}
			if !strings.Contains(stop.String(), "trap segv at 0x100a (mov qword ptr [rdi+8], rax)") {
				t.Errorf("String() = %s", stop)
			}
		})
	}
}

func TestRunTranslateErrors(t *testing.T) {
	mem := NewMemory(0)
	if err := mem.Map(0x1000, PageSize, PermRead|PermExec); err != nil {
		t.Fatal(err)
	}
	tr := newTextTranslator(t, mem, "vblock 0x1000..0x1002:\n  JMP 0x1100\nvblock 0x2000..0x2002:\n  JMP 0x9000\n")
	it := NewInterpreter(mem, tr, InterpOptions{Optimize: true})
	cpu := &CPU{PC: 0x1000}
	stop := it.Run(cpu, 0)
	var te *TranslateError
	if stop.Kind != StopTrap || stop.Trap != TrapIllegal || stop.PC != 0x1100 || !errors.As(stop.Err, &te) {
		t.Errorf("illegal: %+v", stop)
	}
	cpu.PC = 0x9000
	stop = it.Run(cpu, 0)
	if stop.Kind != StopTrap || stop.Trap != TrapSegv || stop.FaultAddr != 0x9000 || cpu.PC != 0x9000 {
		t.Errorf("fetch fault: %+v", stop)
	}
}

func TestRunTrapOpAndDivide(t *testing.T) {
	for _, e := range engines() {
		mem := NewMemory(0)
		tr := newTextTranslator(t, mem, `vblock 0x1000..0x1004:
  # 0x1000: div rcx
  GET.u64 v0, s2
  GET.u64 v1, s0
  GET.u64 v2, s1
  DIVW.u64 v3, v0, v1, v2
  REMW.u64 v4, v0, v1, v2
  PUT.u64 s0, v3
  PUT.u64 s2, v4
  # 0x1003: ud2
  TRAP.ill 0
vblock 0x2000..0x2001:
  # 0x2000: hlt
  TRAP.segv 1234
`)
		it := NewInterpreter(mem, tr, InterpOptions{Optimize: e.optimize})
		it.noFast = e.noFast
		cpu := &CPU{PC: 0x1000}
		cpu.State[S2], cpu.State[S0], cpu.State[S1] = 1, 5, 3
		stop := it.Run(cpu, 0)
		if stop.Kind != StopTrap || stop.Trap != TrapIllegal || stop.PC != 0x1003 {
			t.Errorf("%s: ud2 stop %+v", e.name, stop)
		}
		if q, r := cpu.State[S0], cpu.State[S2]; q != (1<<64+5)/3 || r != (1<<64+5)%3 {
			t.Errorf("%s: div: q=%d r=%d", e.name, q, r)
		}
		cpu.PC = 0x1000
		cpu.State[S2], cpu.State[S0], cpu.State[S1] = 7, 5, 3
		stop = it.Run(cpu, 0)
		if stop.Kind != StopTrap || stop.Trap != TrapDivide || stop.PC != 0x1000 {
			t.Errorf("%s: divide overflow stop %+v", e.name, stop)
		}
		cpu.PC = 0x2000
		stop = it.Run(cpu, 0)
		var ge *GuestTrapError
		if stop.Trap != TrapSegv || stop.FaultAddr != 1234 || !errors.As(stop.Err, &ge) {
			t.Errorf("%s: TRAP.segv stop %+v", e.name, stop)
		}
	}
}

// TestPanicBecomesTrap: a panic inside Run (here from the probe hook) stops
// the guest with an InternalError naming the op and guest address.
func TestPanicBecomesTrap(t *testing.T) {
	mem := NewMemory(0)
	if err := mem.Map(dataBase, PageSize, PermRead|PermWrite); err != nil {
		t.Fatal(err)
	}
	tr := newTextTranslator(t, mem, "vblock 0x1000..0x1008:\n  # 0x1000: nop\n  LI.u64 v0, 1048576\n  # 0x1004: mov al, [rax]\n  PROBE.u8 v0(0), 1\n  JMP 0x1000\n")
	it := NewInterpreter(mem, tr, InterpOptions{Probe: func(uint32, uint64, int) { panic("probe exploded") }})
	cpu := &CPU{PC: 0x1000}
	stop := it.Run(cpu, 0)
	var ie *InternalError
	if stop.Kind != StopTrap || !errors.As(stop.Err, &ie) || ie.Op != OpProbe || ie.Addr != 0x1004 || stop.PC != 0x1004 {
		t.Fatalf("stop = %+v", stop)
	}
	if !strings.Contains(stop.Err.Error(), "internal error") || !strings.Contains(stop.Err.Error(), "PROBE") {
		t.Errorf("error text %q", stop.Err)
	}
}

// TestSelfModifyingCode: a guest store into a page translated code came
// from drops that page's translations, so the new code runs.
func TestSelfModifyingCode(t *testing.T) {
	for _, e := range allEngines() {
		mem := NewMemory(0)
		if err := mem.Map(0x1000, PageSize, PermRead|PermWrite|PermExec); err != nil {
			t.Fatal(err)
		}
		tr := newTextTranslator(t, mem, `vblock 0x1000..0x1004:
  # 0x1000: mov byte ptr [0x1800], 1
  LI.u64 v0, 0x1800
  LI.u64 v1, 1
  ST.u8 v0(0), v1
  JMP 0x1004
vblock 0x1004..0x1006:
  # 0x1004: syscall
  SYSCALL 0x1006
`)
		it := NewInterpreter(mem, tr, InterpOptions{Optimize: e.optimize})
		it.noFast = e.noFast
		cpu := &CPU{PC: 0x1000}
		for round := 0; round < 2; round++ {
			cpu.PC = 0x1000
			if stop := it.Run(cpu, 0); stop.Kind != StopSyscall {
				t.Fatalf("%s: stop %v", e.name, stop)
			}
		}
		st := it.Stats()
		// Round 1 translates 0x1000, whose store drops it, then 0x1004;
		// round 2 translates 0x1000 again, whose store drops both, then
		// 0x1004 again.
		if tr.calls != 4 || st.BlocksInvalidated != 3 {
			t.Errorf("%s: translations %d, invalidated %d, want 4 and 3", e.name, tr.calls, st.BlocksInvalidated)
		}
		// Invalidate by range.
		cpu.PC = 0x1004
		it.Run(cpu, 0)
		it.Invalidate(0x1005, 1)
		cpu.PC = 0x1004
		it.Run(cpu, 0)
		if tr.calls != 5 {
			t.Errorf("%s: Invalidate did not drop the block: %d translations", e.name, tr.calls)
		}
	}
}

// TestTrapInChainedBlock: a fault in a later iteration of a chained loop
// reports the faulting instruction, and the state and counts of the
// iterations that completed.
func TestTrapInChainedBlock(t *testing.T) {
	for _, e := range allEngines() {
		mem := NewMemory(0)
		if err := mem.Map(0x1000, PageSize, PermRead|PermExec); err != nil {
			t.Fatal(err)
		}
		if err := mem.Map(dataBase, PageSize, PermRead|PermWrite); err != nil {
			t.Fatal(err)
		}
		start := uint64(dataBase + PageSize - 80) // 10 quadwords, then unmapped
		for i := uint64(0); i < 10; i++ {
			_ = mem.Store(start+8*i, 8, i+1)
		}
		tr := newTextTranslator(t, mem, sumLoop)
		it := NewInterpreter(mem, tr, InterpOptions{Optimize: e.optimize})
		it.noFast = e.noFast
		cpu := &CPU{PC: 0x1000}
		cpu.State[S7], cpu.State[S1] = start, 20
		stop := it.Run(cpu, 0)
		if stop.Kind != StopTrap || stop.Trap != TrapSegv || stop.PC != 0x1010 || stop.FaultAddr != dataBase+PageSize ||
			stop.Insn != "add rax, qword ptr [rdi]" {
			t.Fatalf("%s: stop %+v", e.name, stop)
		}
		if cpu.PC != 0x1010 || cpu.State[S0] != 55 || cpu.State[S1] != 10 || cpu.State[S7] != dataBase+PageSize {
			t.Errorf("%s: pc %#x s0 %d s1 %d s7 %#x", e.name, cpu.PC, cpu.State[S0], cpu.State[S1], cpu.State[S7])
		}
		if n := it.Stats().GuestInsns; n != 2+4*10 {
			t.Errorf("%s: GuestInsns = %d, want %d", e.name, n, 2+4*10)
		}
	}
}
