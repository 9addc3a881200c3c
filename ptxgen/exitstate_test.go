package ptxgen

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// saxpyExit is saxpyO2 followed by code that sets the flags before the
// program's next system call: the loop's flags are dead at its exit, and
// every register it writes (rax, the last y in xmm1) is exact there.
var saxpyExit = strings.Replace(saxpyO2, `vblock 0x1030..0x1032:
  # 0x1030: syscall
  SYSCALL 0x1032`, `vblock 0x1030..0x1034:
  # 0x1030: test rdi, rdi
  GET.u64 v0, s7
  FLAGS.logic.u64 v0, v0, v0, v0
  JMP 0x1034
vblock 0x1034..0x1036:
  # 0x1034: syscall
  SYSCALL 0x1036`, 1)

// counterO0 is for (i = 0; i < n; i++) a[i] = i*3 as gcc -O0 shapes it,
// tested at the top: i at [rbp-4], n at [rbp-8], a at [rbp-16]; eax holds
// i*3, which the exit path does not write (an earlier iteration's value)
// and the code after the loop overwrites, with the flags, before its
// system call.
const counterO0 = `
vblock 0x5000..0x5010:
  # 0x5000: mov eax, [rbp-4]; cmp eax, [rbp-8]; jge 0x5100
  GET.u64 v0, s5
  LD.s32 v1, v0(-4)
  LD.s32 v2, v0(-8)
  CMP.lt.s32 v3, v1, v2
  BRANCH v3, 0x5010, 0x5100
vblock 0x5010..0x5040:
  # 0x5010: a[i] = i*3; i++
  GET.u64 v0, s5
  LD.u64 v1, v0(-16)
  LD.s32 v2, v0(-4)
  CVT.rn.s64.s32 v3, v2
  SHL.u64 v4, v3, 3
  ADD.u64 v5, v1, v4
  MUL.s32 v6, v2, 3
  PUT.u32 s0, v6
  CVT.rn.s64.s32 v7, v6
  ST.u64 v5(0), v7
  ADD.s32 v8, v2, 1
  FLAGS.add.s32 v2, v2, v8, v8
  ST.u32 v0(-4), v8
  JMP 0x5000
vblock 0x5100..0x5110:
  # 0x5100: xor eax, eax
  LI.u64 v0, 0
  FLAGS.logic.u32 v0, v0, v0, v0
  PUT.u64 s0, v0
  JMP 0x5110
vblock 0x5110..0x5112:
  # 0x5110: syscall
  SYSCALL 0x5112
`

// counterO0Case runs counterO0 over n = 90.
func counterO0Case() loopCase {
	return loopCase{
		name: "counterO0", src: counterO0, header: 0x5000, level: []uint64{0x5000, 0x5010}, arrivals: 91,
		setup: func(mem *gvinst.Memory, cpu *gvinst.CPU) {
			cpu.State[gvinst.S5] = stackBase + 0x800
			cpu.State[gvinst.S4] = stackBase + 0x700
			_ = mem.Store(stackBase+0x800-4, 4, 0)
			_ = mem.Store(stackBase+0x800-8, 4, 90)
			_ = mem.Store(stackBase+0x800-16, 8, dataBase)
		},
		data: Range{dataBase, dataBase + 0x2000},
	}
}

// exitLive gives the nest the liveness at each of its exit targets.
func exitLive(bs blockSet, n *Nest) {
	n.ExitLive = map[uint64]*gvinst.Liveness{}
	for _, b := range n.Blocks {
		for _, s := range b.Successors() {
			if n.Blocks[s] == nil {
				live := gvinst.LiveAt(bs, s)
				n.ExitLive[s] = &live
			}
		}
	}
}

// setExitState sets the CPU where the record says the loop left, with
// its values.
func setExitState(mem *gvinst.Memory, cpu *gvinst.CPU, k *Kernel, x *ExitRecord) {
	for i, l := range k.ExitStates[x.Target] {
		setLive(mem, cpu, l, x.Values[i])
	}
	cpu.PC = x.Target
}

// runToExit runs c's loop from its arrival 2 to its end in one launch,
// the last thread leaving the loop with the exit state (short: one
// arrival less, so that no thread leaves and the CPU goes on at the
// header), and compares memory and every state slot with the CPU
// engine's run.
func runToExit(t *testing.T, c loopCase, short bool) *Kernel {
	t.Helper()
	bs := parseBlocks(t, c.src)
	nest := &Nest{Header: c.header, Blocks: map[uint64]*gvinst.VBlock{}}
	for _, a := range c.level {
		nest.Blocks[a] = bs[a]
	}
	exitLive(bs, nest)
	k, err := Generate(nest)
	if err != nil {
		t.Fatal(err)
	}
	if !k.GivesExitState() {
		t.Fatalf("the kernel gives no exit state\n%s", numbered(k.PTX))
	}
	if c.unchecked {
		if k.Unchecked == nil {
			t.Skip("no unchecked variant")
		}
		k = k.Unchecked
	}
	checkText(t, k.PTX)
	refMem, refCPU := newGuest(t, c)
	runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), refCPU)

	mem, cpu := newGuest(t, c)
	e := gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{Breakpoints: map[uint64]bool{c.header: true}})
	var states [2][]uint64
	for s := 0; s < 2; s++ {
		if st := e.Run(cpu, 0); st.Kind != gvinst.StopBreakpoint {
			t.Fatalf("expected a breakpoint, got %v", st)
		}
		for _, l := range k.LiveIns {
			states[s] = append(states[s], liveValue(mem, cpu, l))
		}
	}
	count := c.arrivals - 2
	if short {
		count--
	}
	in := LaunchInput{Count: count, Values: states[1], ExitState: true}
	for i := range k.LiveIns {
		in.Steps = append(in.Steps, states[1][i]-states[0][i])
	}
	for range k.Sites {
		in.Sites = append(in.Sites, c.data)
	}
	for _, l := range k.ExitInits {
		in.ExitInits = append(in.ExitInits, cpu.State[l.Slot])
	}
	ctx, fn := simKernel(t, k)
	st, err := Launch(ctx, fn, k, mem, in, nil)
	if err != nil {
		t.Fatalf("launch: %v\n%s", err, numbered(k.PTX))
	}
	switch {
	case short && st.Exit != nil:
		t.Fatalf("a launch short of the last arrival left the loop at %#x", st.Exit.Target)
	case short:
		for i, l := range k.LiveIns {
			setLive(mem, cpu, l, in.Values[i]+in.Steps[i]*count)
		}
	case st.Exit == nil:
		t.Fatalf("no thread left the loop\n%s", numbered(k.PTX))
	default:
		setExitState(mem, cpu, k, st.Exit)
	}
	runToSyscall(t, e, cpu)
	compareRuns(t, k, refMem, mem, refCPU, cpu, c.data)
	return k
}

// compareRuns compares the data and every state slot of two runs.
func compareRuns(t *testing.T, k *Kernel, refMem, mem *gvinst.Memory, refCPU, cpu *gvinst.CPU, data Range) {
	t.Helper()
	want, got := make([]byte, data.Hi-data.Lo), make([]byte, data.Hi-data.Lo)
	_ = refMem.Read(data.Lo, want)
	_ = mem.Read(data.Lo, got)
	if !bytes.Equal(want, got) {
		for i := range want {
			if want[i] != got[i] {
				t.Fatalf("memory differs first at %#x: cpu %x, gpu %x\n%s", data.Lo+uint64(i), want[i:i+8], got[i:i+8], numbered(k.PTX))
			}
		}
	}
	for r := gvinst.Reg(0); r < gvinst.NumGuestSlots; r++ {
		if refCPU.State[r] != cpu.State[r] {
			t.Errorf("slot %s: cpu %#x, with the exit state %#x", r, refCPU.State[r], cpu.State[r])
		}
	}
	if refCPU.PC != cpu.PC {
		t.Errorf("pc: cpu %#x, with the exit state %#x", refCPU.PC, cpu.PC)
	}
}

// TestExitStateMatchesCPU runs loops whose last arrival leaves on the
// GPU with the exit state, against the CPU engine: a register the last
// iteration computes (saxpy's xmm1 and rax), an -O0 stack counter and a
// register the exit path leaves stale but the code after it overwrites,
// a level whose inner loop runs in the thread; each also one arrival
// short (the CPU goes on at the header), and with the unchecked kernel.
func TestExitStateMatchesCPU(t *testing.T) {
	saxpy := cases()[0]
	saxpy.name, saxpy.src = "saxpy", saxpyExit
	for _, c := range []loopCase{saxpy, counterO0Case(), unswitchedCase("unswitched", 1), unswitchedCase("unswitchedTwin", 0)} {
		for _, v := range []struct{ short, unchecked bool }{{false, false}, {true, false}, {false, true}} {
			name := c.name
			if v.short {
				name += "/short"
			}
			if v.unchecked {
				name += "/unchecked"
			}
			c := c
			c.unchecked = v.unchecked
			t.Run(name, func(t *testing.T) {
				k := runToExit(t, c, v.short)
				if c.name == "counterO0" {
					// eax is dead at the exit (the code there clears it):
					// not stored; i at [rbp-4] is.
					var names []string
					for _, l := range k.ExitStates[0x5100] {
						names = append(names, l.String())
					}
					if got := strings.Join(names, " "); got != "[s5-4]" {
						t.Errorf("exit state %q, want [s5-4]", got)
					}
				}
			})
		}
	}
}

// TestExitStateRefused checks the exits whose state a kernel cannot
// give: flags read after the loop, and a register only an inner loop's
// iterations write that the code after the loop reads (intO0's s9): they
// stay error exits, and a launch over the last arrival fails.
func TestExitStateRefused(t *testing.T) {
	flagsRead := strings.Replace(saxpyExit, "FLAGS.logic.u64 v0, v0, v0, v0", "GETCC.e v1\n  PUT.u64 s3, v1", 1)
	saxpy := cases()[0]
	for _, c := range []loopCase{{name: "flagsRead", src: flagsRead, header: 0x1000, level: saxpy.level, arrivals: saxpy.arrivals, setup: saxpy.setup, data: saxpy.data}, cases()[3]} {
		t.Run(c.name, func(t *testing.T) {
			bs := parseBlocks(t, c.src)
			nest := &Nest{Header: c.header, Blocks: map[uint64]*gvinst.VBlock{}}
			for _, a := range c.level {
				nest.Blocks[a] = bs[a]
			}
			exitLive(bs, nest)
			k, err := Generate(nest)
			if err != nil {
				t.Fatal(err)
			}
			if k.GivesExitState() {
				t.Fatalf("the kernel gives an exit state: %v", k.ExitStates)
			}
			mem, cpu := newGuest(t, c)
			e := gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{Breakpoints: map[uint64]bool{c.header: true}})
			var states [2][]uint64
			for s := 0; s < 2; s++ {
				e.Run(cpu, 0)
				for _, l := range k.LiveIns {
					states[s] = append(states[s], liveValue(mem, cpu, l))
				}
			}
			in := LaunchInput{Count: c.arrivals - 2, Values: states[1], ExitState: true}
			for i := range k.LiveIns {
				in.Steps = append(in.Steps, states[1][i]-states[0][i])
				_ = i
			}
			for range k.Sites {
				in.Sites = append(in.Sites, c.data)
			}
			ctx, fn := simKernel(t, k)
			var ke *KernelError
			if _, err := Launch(ctx, fn, k, mem, in, nil); !errors.As(err, &ke) || ke.Code != ErrCodeExit {
				t.Errorf("a launch over the last arrival: got %v, want an exit error", err)
			}
		})
	}
}

// TestExitState2D runs the 2D matmul nest (rotated: its rows leave
// after the inner loops) from row 2 to the end in one launch: the
// thread of the last row's last column leaves with the exit state, its
// inner registers (the k loop's counter and sum, j) the last
// iteration's, against the CPU engine.
func TestExitState2D(t *testing.T) {
	const n = 24
	for _, tri := range []bool{false, true} {
		name := "square"
		if tri {
			name = "triangular"
		}
		t.Run(name, func(t *testing.T) {
			bs := parseBlocks(t, matmul2D)
			nest := &Nest{Header: 0x3000, Inner: 0x3010, Blocks: map[uint64]*gvinst.VBlock{},
				InnerBlocks: map[uint64]bool{0x3010: true, 0x3020: true, 0x3030: true}}
			for _, a := range []uint64{0x3000, 0x3010, 0x3020, 0x3030, 0x3040} {
				nest.Blocks[a] = bs[a]
			}
			exitLive(bs, nest)
			k, err := Generate(nest)
			if err != nil {
				t.Fatal(err)
			}
			if !k.TwoD || !k.GivesExitState() {
				t.Fatalf("2D %v, exit state %v", k.TwoD, k.ExitStates)
			}
			setup := func() (*gvinst.Memory, *gvinst.CPU) {
				mem := gvinst.NewMemory(1 << 26)
				if err := mem.Map(dataBase, 0x40000, gvinst.PermRead|gvinst.PermWrite); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < n*n; i++ {
					_ = mem.Store(dataBase+uint64(8*i), 8, math.Float64bits(float64(i%13)*0.3-1))
					_ = mem.Store(dataBase+0x10000+uint64(8*i), 8, math.Float64bits(float64(i%7)/3))
				}
				cpu := &gvinst.CPU{PC: 0x3000}
				cpu.State[gvinst.SReg(6)] = dataBase
				cpu.State[gvinst.SReg(7)] = dataBase + 0x10000
				cpu.State[gvinst.SReg(8)] = dataBase + 0x20000
				cpu.State[gvinst.SReg(9)] = n * 8
				cpu.State[gvinst.SReg(10)] = n * n * 8
				cpu.State[gvinst.SReg(11)] = n
				cpu.State[gvinst.SReg(12)] = n * 8
				if tri {
					cpu.State[gvinst.SReg(12)], cpu.State[gvinst.SReg(13)] = 8, 8
				}
				cpu.State[gvinst.MXCSR] = 0x1f80
				return mem, cpu
			}
			refMem, refCPU := setup()
			runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), refCPU)
			mem, cpu := setup()
			e := gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{Breakpoints: map[uint64]bool{0x3000: true}})
			var states [2][]uint64
			for s := 0; s < 2; s++ {
				if st := e.Run(cpu, 0); st.Kind != gvinst.StopBreakpoint {
					t.Fatalf("expected a breakpoint, got %v", st)
				}
				for _, l := range k.LiveIns {
					states[s] = append(states[s], liveValue(mem, cpu, l))
				}
			}
			count := uint64(n - 2) // rows 2..n-1: the last leaves
			in := LaunchInput{Count: count, Values: states[1], InnerTrip0: n, InnerMax: n, ExitState: true}
			if tri {
				in.InnerTrip0, in.InnerTripStep, in.InnerMax = 3, 1, n
			}
			for i := range k.LiveIns {
				in.Steps = append(in.Steps, states[1][i]-states[0][i])
			}
			for _, l := range k.InnerLiveIns {
				step := uint64(0)
				if !l.Stack && l.Slot == gvinst.SReg(2) {
					step = 8
				}
				in.InnerSteps = append(in.InnerSteps, step)
			}
			for range k.Sites {
				in.Sites = append(in.Sites, Range{dataBase, dataBase + 0x30000})
			}
			ctx, fn := simKernel(t, k)
			st, err := Launch(ctx, fn, k, mem, in, nil)
			if err != nil {
				t.Fatalf("launch: %v\n%s", err, numbered(k.PTX))
			}
			if st.Exit == nil {
				t.Fatalf("no thread left the loop\n%s", numbered(k.PTX))
			}
			setExitState(mem, cpu, k, st.Exit)
			runToSyscall(t, e, cpu)
			compareRuns(t, k, refMem, mem, refCPU, cpu, Range{dataBase + 0x20000, dataBase + 0x30000})
		})
	}
}

// guardedInner is a level whose inner loop gcc guards against zero
// trips with a test of an invariant bound (r14): rbx and xmm1 are
// written only inside it, so at the exit they are the last iteration's
// where the bound is positive and what they held before the loop where
// it is not (guardedInnerData: the guard tests a loaded value instead).
const guardedInner = `
vblock 0x6000..0x6010:
  # 0x6000: xor edx, edx; test r14, r14; jle 0x6030
  LI.u64 v2, 0
  PUT.u64 s2, v2
  GET.u64 v0, s14
  CMP.le.s64 v1, v0, 0
  BRANCH v1, 0x6030, 0x6010
vblock 0x6010..0x6030:
  # 0x6010: movsd xmm1, [r9+rdx*8]; add rdx, 1; mov rbx, rdx; cmp rdx, r14; jne
  GET.u64 v0, s2
  GET.u64 v1, s9
  SHL.u64 v2, v0, 3
  ADD.u64 v3, v1, v2
  LD.f64 v4, v3(0)
  PUT.f64 x1, v4
  ADD.u64 v5, v0, 1
  PUT.u64 s2, v5
  PUT.u64 s3, v5
  GET.u64 v6, s14
  CMP.ne.u64 v7, v5, v6
  BRANCH v7, 0x6010, 0x6030
vblock 0x6030..0x6040:
  # 0x6030: out[i] = i; i++; r9 += 64; cmp r12, r11; jne 0x6000
  GET.u64 v0, s12
  GET.u64 v1, s13
  SHL.u64 v2, v0, 3
  ADD.u64 v3, v1, v2
  ST.u64 v3(0), v0
  ADD.u64 v4, v0, 1
  PUT.u64 s12, v4
  GET.u64 v5, s9
  ADD.u64 v6, v5, 64
  PUT.u64 s9, v6
  GET.u64 v7, s11
  CMP.ne.u64 v8, v4, v7
  BRANCH v8, 0x6000, 0x6100
vblock 0x6100..0x6102:
  # 0x6100: syscall
  SYSCALL 0x6102
`

// guardedInnerCase runs guardedInner over 50 rows with bound r14.
func guardedInnerCase(name, src string, bound uint64) loopCase {
	return loopCase{
		name: name, src: src, header: 0x6000, level: []uint64{0x6000, 0x6010, 0x6030}, arrivals: 50,
		setup: func(mem *gvinst.Memory, cpu *gvinst.CPU) {
			for i := 0; i < 50*8; i++ {
				_ = mem.Store(dataBase+uint64(8*i), 8, math.Float64bits(float64(i)/3))
			}
			cpu.State[gvinst.SReg(9)] = dataBase
			cpu.State[gvinst.SReg(13)] = dataBase + 0x4000
			cpu.State[gvinst.SReg(11)] = 50
			cpu.State[gvinst.SReg(14)] = bound
			cpu.State[gvinst.S3] = 0x5678
			cpu.State[gvinst.XReg(1)] = 0x1234
		},
		data: Range{dataBase, dataBase + 0x5000},
	}
}

// TestExitStateUniformBranch runs guardedInner with the bound positive
// and zero: either way the exit state holds rbx and xmm1 as the CPU
// leaves them (the last row's, or the values from before the loop,
// which the kernel's threads start with); with the guard testing loaded
// data instead, the kernel refuses the exit.
func TestExitStateUniformBranch(t *testing.T) {
	for _, bound := range []uint64{5, 0} {
		c := guardedInnerCase(fmt.Sprintf("bound%d", bound), guardedInner, bound)
		t.Run(c.name, func(t *testing.T) {
			k := runToExit(t, c, false)
			if len(k.ExitInits) != 2 {
				t.Errorf("exit inits %v, want rbx and xmm1", k.ExitInits)
			}
		})
	}
	data := strings.Replace(guardedInner, "  GET.u64 v0, s14\n  CMP.le.s64 v1, v0, 0", "  GET.u64 v0, s13\n  LD.u64 v3, v0(0)\n  CMP.le.s64 v1, v3, 0", 1)
	bs := parseBlocks(t, data)
	nest := &Nest{Header: 0x6000, Blocks: map[uint64]*gvinst.VBlock{}}
	for _, a := range []uint64{0x6000, 0x6010, 0x6030} {
		nest.Blocks[a] = bs[a]
	}
	exitLive(bs, nest)
	k, err := Generate(nest)
	if err != nil {
		t.Fatal(err)
	}
	if k.GivesExitState() {
		t.Errorf("a guard on loaded data: the kernel gives the exit state %v", k.ExitStates)
	}
}
