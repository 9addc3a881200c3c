//go:build linux && amd64

package jit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// blockGen turns fuzz bytes into a GVInst program: one block of random
// integer, memory, flag and select instructions over a few guest and
// virtual registers, ending in a branch to one of two blocks that make a
// system call.
type blockGen struct {
	data []byte
	pos  int
	// loop makes the block branch back to itself (a loop unit), through a
	// CMP right before the BRANCH more often than not.
	loop bool
}

func (g *blockGen) next() int {
	if g.pos >= len(g.data) {
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return int(b)
}

func (g *blockGen) pick(n int) int { return g.next() % n }

var fuzzTypes = []string{"u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"}

func (g *blockGen) reg(nv int) string {
	if nv > 0 && g.pick(2) == 0 {
		return fmt.Sprintf("v%d", g.pick(nv))
	}
	return fmt.Sprintf("s%d", g.pick(16))
}

func (g *blockGen) imm() int64 {
	switch g.pick(4) {
	case 0:
		return int64(g.pick(70))
	case 1:
		return -int64(g.pick(70))
	case 2:
		return int64(int32(uint32(g.next()) | uint32(g.next())<<8 | uint32(g.next())<<16 | uint32(g.next())<<24))
	}
	return int64(uint64(g.next()) | uint64(g.next())<<56 | uint64(g.next())<<24)
}

// program returns the text of the program and whether it has anything in
// it.
func (g *blockGen) program() string {
	var b strings.Builder
	b.WriteString("vblock 0x1000..0x1100:\n")
	nv := 0 // virtual registers defined so far
	def := func() string {
		if nv < 12 && (nv == 0 || g.pick(3) != 0) {
			nv++
			return fmt.Sprintf("v%d", nv-1)
		}
		return fmt.Sprintf("v%d", g.pick(nv))
	}
	n := 1 + g.pick(24)
	for i := 0; i < n; i++ {
		cur := nv // sources read only registers defined before
		fmt.Fprintf(&b, "  # %#x: insn %d\n", 0x1000+4*i, i)
		t := fuzzTypes[g.pick(len(fuzzTypes))]
		switch g.pick(14) {
		case 0:
			fmt.Fprintf(&b, "  LI.%s %s, %d\n", t, def(), g.imm())
		case 1:
			src := g.reg(cur)
			fmt.Fprintf(&b, "  GET.%s %s, %s\n", t, def(), src)
		case 2:
			fmt.Fprintf(&b, "  PUT.%s s%d, %s\n", t, g.pick(16), g.reg(cur))
		case 3, 4:
			op := []string{"ADD", "SUB", "MUL", "AND", "OR", "XOR", "SHL", "SHR", "SAR", "MULHI", "DIV", "REM", "MIN", "ROL"}[g.pick(14)]
			a := g.reg(cur)
			var src string
			if g.pick(2) == 0 {
				src = fmt.Sprint(g.imm())
			} else {
				src = g.reg(cur)
			}
			fmt.Fprintf(&b, "  %s.%s %s, %s, %s\n", op, t, def(), a, src)
		case 5:
			op := []string{"NOT", "NEG", "CLZ", "POPC", "BSWAP"}[g.pick(5)]
			fmt.Fprintf(&b, "  %s.%s %s, %s\n", op, t, def(), g.reg(cur))
		case 6:
			c := []string{"eq", "ne", "lt", "le", "gt", "ge"}[g.pick(6)]
			a := g.reg(cur)
			var src string
			if g.pick(2) == 0 {
				src = fmt.Sprint(g.imm())
			} else {
				src = g.reg(cur)
			}
			fmt.Fprintf(&b, "  CMP.%s.%s %s, %s, %s\n", c, t, def(), a, src)
		case 7:
			c, x, y := g.reg(cur), g.reg(cur), g.reg(cur)
			fmt.Fprintf(&b, "  SELECT.u64 %s, %s, %s, %s\n", def(), c, x, y)
		case 8:
			s := fuzzTypes[g.pick(len(fuzzTypes))]
			fmt.Fprintf(&b, "  CVT.rn.%s.%s %s, %s\n", t, s, def(), g.reg(cur))
		case 9, 10:
			// An address in the data pages (s7 holds their base), maybe
			// near the end of the last one, maybe unmapped.
			base := g.reg(0)
			if g.pick(4) != 0 {
				base = "s7"
			}
			disp := g.pick(3*gvinst.PageSize) - 8
			if g.pick(2) == 0 {
				fmt.Fprintf(&b, "  LD.%s %s, %s(%d)\n", t, def(), base, disp)
			} else {
				fmt.Fprintf(&b, "  ST.%s %s(%d), %s\n", t, base, disp, g.reg(cur))
			}
		case 11:
			k := []string{"add", "sub", "logic", "adc", "sbb", "inc", "shl", "mul"}[g.pick(8)]
			fmt.Fprintf(&b, "  FLAGS.%s.%s %s, %s, %s, %s\n", k, t, g.reg(cur), g.reg(cur), g.reg(cur), g.reg(cur))
		case 12:
			c := []string{"o", "no", "b", "ae", "e", "ne", "be", "a", "s", "ns", "p", "np", "l", "ge", "le", "g"}[g.pick(16)]
			fmt.Fprintf(&b, "  GETCC.%s %s\n", c, def())
		case 13:
			fmt.Fprintf(&b, "  MOV.u64 %s, %s\n", def(), g.reg(cur))
		}
	}
	switch {
	case !g.loop:
		fmt.Fprintf(&b, "  # 0x10fc: jcc\n  BRANCH %s, 0x2000, 0x3000\n", g.reg(nv))
	default:
		cond := g.reg(nv)
		if g.pick(4) != 0 {
			t := fuzzTypes[g.pick(len(fuzzTypes))]
			c := []string{"eq", "ne", "lt", "le", "gt", "ge"}[g.pick(6)]
			x := g.reg(nv)
			y := fmt.Sprint(g.imm())
			if g.pick(2) == 0 {
				y = g.reg(nv)
			}
			cond = fmt.Sprintf("v%d", nv)
			fmt.Fprintf(&b, "  # 0x10f8: cmp\n  CMP.%s.%s %s, %s, %s\n", c, t, cond, x, y)
		}
		if g.pick(2) == 0 {
			fmt.Fprintf(&b, "  # 0x10fc: jcc\n  BRANCH %s, 0x1000, 0x3000\n", cond)
		} else {
			fmt.Fprintf(&b, "  # 0x10fc: jcc\n  BRANCH %s, 0x3000, 0x1000\n", cond)
		}
	}
	b.WriteString("vblock 0x2000..0x2002:\n  # 0x2000: syscall\n  SYSCALL 0x2002\n")
	b.WriteString("vblock 0x3000..0x3002:\n  # 0x3000: syscall\n  SYSCALL 0x3002\n")
	return b.String()
}

// runBoth runs src on the interpreter and on the compiling engine from the
// same state and reports the first difference.
func runBoth(t *testing.T, src string, seed []byte, budget uint64) {
	bs, err := gvinst.Parse(src)
	if err != nil {
		return // not a valid program: nothing to compare
	}
	for _, b := range bs {
		if gvinst.Verify(b) != nil {
			return
		}
	}
	type result struct {
		stop gvinst.Stop
		cpu  gvinst.CPU
		data []byte
	}
	run := func(useJIT bool, opt bool) result {
		mem := gvinst.NewMemory(0)
		if err := mem.Map(dataBase, 2*gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		init := make([]byte, 2*gvinst.PageSize)
		for i := range init {
			init[i] = byte(i*131) ^ seed[i%len(seed)]
		}
		_ = mem.Poke(dataBase, init)
		tr := newTextTranslator(t, mem, src)
		var e gvinst.Engine
		opts := gvinst.InterpOptions{Optimize: opt}
		if useJIT {
			j, err := New(mem, tr, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			e = j
		} else {
			e = gvinst.NewInterpreter(mem, tr, opts)
		}
		cpu := gvinst.CPU{PC: 0x1000}
		for i := 0; i < 16; i++ {
			v := uint64(0x9e3779b97f4a7c15) * uint64(i+1+int(seed[i%len(seed)]))
			if i%3 == 0 {
				v &= 0xff
			}
			cpu.State[i] = v
		}
		cpu.State[gvinst.S7] = dataBase
		cpu.State[gvinst.MXCSR] = 0x1f80
		stop := e.Run(&cpu, budget)
		out := make([]byte, 2*gvinst.PageSize)
		_ = mem.Peek(dataBase, out)
		return result{stop, cpu, out}
	}
	for _, opt := range []bool{false, true} {
		want := run(false, opt)
		got := run(true, opt)
		ws, gs := want.stop, got.stop
		if ws.Kind != gs.Kind || ws.PC != gs.PC || ws.Trap != gs.Trap || ws.FaultAddr != gs.FaultAddr {
			t.Fatalf("optimize=%v: jit stops with %v, the interpreter with %v\n%s", opt, gs, ws, src)
		}
		// At a trap the interpreter may already have written a guest
		// register that a later instruction of the block writes (its
		// copy coalescing allows it); the compiling engine is exact there.
		if got.cpu != want.cpu && ws.Kind != gvinst.StopTrap {
			for i := range want.cpu.State {
				if got.cpu.State[i] != want.cpu.State[i] {
					t.Errorf("optimize=%v: %v: jit %#x, interpreter %#x", opt, gvinst.Reg(i), got.cpu.State[i], want.cpu.State[i])
				}
			}
			t.Fatalf("optimize=%v: the engines end in different states (pc jit %#x, interpreter %#x)\n%s", opt, got.cpu.PC, want.cpu.PC, src)
		}
		if string(got.data) != string(want.data) {
			t.Fatalf("optimize=%v: the engines leave different memory\n%s", opt, src)
		}
	}
}

// FuzzEngines runs random GVInst blocks on the interpreter and on the
// compiling engine and requires the same stop, guest state and memory.
// Crashers are kept in testdata/fuzz/FuzzEngines as named regressions.
func FuzzEngines(f *testing.F) {
	for i := 0; i < 64; i++ {
		seed := make([]byte, 96)
		for j := range seed {
			seed[j] = byte(i*37 + j*11 + i*j)
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		g := &blockGen{data: data}
		runBoth(t, g.program(), data, 0)
	})
}

// FuzzEngineLoops is FuzzEngines on blocks that branch back to themselves,
// which the compiling engine runs as loop units (guest registers held in
// host registers across iterations, the closing compare fused into the
// branch); the budget stops loops that do not end. Crashers are kept in
// testdata/fuzz/FuzzEngineLoops.
func FuzzEngineLoops(f *testing.F) {
	for i := 0; i < 64; i++ {
		seed := make([]byte, 96)
		for j := range seed {
			seed[j] = byte(i*41 + j*7 + i*j*3)
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		g := &blockGen{data: data, loop: true}
		runBoth(t, g.program(), data, 1+uint64(data[0])*37)
	})
}

// TestFuzzGeneratorMakesPrograms checks that most generated programs parse
// and verify, so that FuzzEngines compares something.
func TestFuzzGeneratorMakesPrograms(t *testing.T) {
	valid := 0
	const n = 200
	for i := 0; i < n; i++ {
		seed := make([]byte, 96)
		for j := range seed {
			seed[j] = byte(i*37 + j*11 + i*j)
		}
		src := (&blockGen{data: seed}).program()
		bs, err := gvinst.Parse(src)
		ok := err == nil
		for _, b := range bs {
			if e := gvinst.Verify(b); e != nil {
				if i < 3 {
					t.Logf("%v\n%s", e, src)
				}
				ok = false
			}
		}
		if err != nil && i < 3 {
			t.Logf("%v\n%s", err, src)
		}
		if ok {
			valid++
		}
	}
	if valid < n/2 {
		t.Errorf("only %d of %d generated programs are valid GVInst", valid, n)
	}
}
