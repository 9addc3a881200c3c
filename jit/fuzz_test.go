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
	// unmasks is set once a generated block unmasks an SSE exception.
	unmasks bool
}

// finish returns the text of the blocks: each made one x86 instruction
// when one of them unmasks an SSE exception (see oneInstruction).
func (g *blockGen) finish(blocks ...string) string {
	var b strings.Builder
	for _, bl := range blocks {
		if g.unmasks {
			bl = oneInstruction(bl)
		}
		b.WriteString(bl)
	}
	b.WriteString(exitBlocks)
	return b.String()
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

// program returns the text of the program: the block at 0x1000 and the two
// it branches to, which make a system call.
func (g *blockGen) program() string {
	return g.finish(g.block(0x1000, func(b *strings.Builder, nv int) {
		switch {
		case !g.loop:
			fmt.Fprintf(b, "  # 0x10fc: jcc\n  BRANCH %s, 0x2000, 0x3000\n", g.reg(nv))
		default:
			g.branch(b, 0x1000, nv, 0x1000, 0x3000)
		}
	}))
}

// exitBlocks are the blocks generated programs leave by: each makes a
// system call.
const exitBlocks = "vblock 0x2000..0x2002:\n  # 0x2000: syscall\n  SYSCALL 0x2002\n" +
	"vblock 0x3000..0x3002:\n  # 0x3000: syscall\n  SYSCALL 0x3002\n"

// branch writes the BRANCH that ends the block at addr to to or out (in
// either order), on a CMP right before it more often than not.
func (g *blockGen) branch(b *strings.Builder, addr uint64, nv int, to, out uint64) {
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
		fmt.Fprintf(b, "  # %#x: cmp\n  CMP.%s.%s %s, %s, %s\n", addr+0xf8, c, t, cond, x, y)
	}
	if g.pick(2) == 0 {
		fmt.Fprintf(b, "  # %#x: jcc\n  BRANCH %s, %#x, %#x\n", addr+0xfc, cond, to, out)
	} else {
		fmt.Fprintf(b, "  # %#x: jcc\n  BRANCH %s, %#x, %#x\n", addr+0xfc, cond, out, to)
	}
}

// traceProgram returns a program of three blocks in a loop that s15
// counts down: 0x1000 goes on to 0x4000 or skips it (by a branch, a jump,
// a computed jump, or a call of 0x6000, which returns to 0x4000 mostly),
// 0x4000 to 0x5000 or leaves, 0x5000 back to 0x1000 while the count lasts. The compiling engine
// joins them into traces whose side exits the loop takes now and then.
func (g *blockGen) traceProgram() string {
	a := g.block(0x1000, func(b *strings.Builder, nv int) {
		switch g.pick(6) {
		case 0:
			b.WriteString("  # 0x10fc: jmp\n  JMP 0x4000\n")
		case 1:
			// A computed jump that always goes to 0x4000 (a PLT stub's).
			fmt.Fprintf(b, "  # 0x10fc: jmp reg\n  LI.u64 v%d, 0x4000\n  JMPR v%d\n", nv, nv)
		case 2:
			// One that goes to 0x4000 or 0x5000.
			fmt.Fprintf(b, "  # 0x10fc: jmp reg\n  LI.u64 v%d, 0x4000\n  LI.u64 v%d, 0x5000\n  SELECT.u64 v%d, %s, v%d, v%d\n  JMPR v%d\n",
				nv, nv+1, nv+2, g.reg(nv), nv, nv+1, nv+2)
		case 3:
			// A call of 0x6000, which returns to 0x4000 (or not).
			b.WriteString("  # 0x10fc: call\n  CALL 0x6000, 0x4000\n")
		default:
			g.branch(b, 0x1000, nv, 0x4000, 0x5000)
		}
	})
	b := g.block(0x4000, func(b *strings.Builder, nv int) {
		if g.pick(2) == 0 {
			g.branch(b, 0x4000, nv, 0x5000, 0x2000)
			return
		}
		fmt.Fprintf(b, "  # 0x40fc: jcc\n  CMP.ltu.u64 v%d, s15, 100000\n  BRANCH v%d, 0x5000, 0x2000\n", nv, nv)
	})
	c := g.block(0x5000, func(b *strings.Builder, nv int) {
		fmt.Fprintf(b, "  # 0x50fc: dec; jnz\n  SUB.u64 v%d, s15, 1\n  PUT.u64 s15, v%d\n", nv, nv)
		fmt.Fprintf(b, "  CMP.ne.u64 v%d, v%d, 0\n  BRANCH v%d, 0x1000, 0x3000\n", nv+1, nv, nv+1)
	})
	f := g.block(0x6000, func(b *strings.Builder, nv int) {
		// The return: to the caller's next block, or elsewhere.
		if g.pick(3) == 0 {
			fmt.Fprintf(b, "  # 0x60fc: ret\n  LI.u64 v%d, 0x4000\n  LI.u64 v%d, 0x5000\n  SELECT.u64 v%d, %s, v%d, v%d\n  RET v%d\n",
				nv, nv+1, nv+2, g.reg(nv), nv, nv+1, nv+2)
			return
		}
		fmt.Fprintf(b, "  # 0x60fc: ret\n  LI.u64 v%d, 0x4000\n  RET v%d\n", nv, nv)
	})
	return g.finish(a, b, c, f)
}

// block returns the text of a block of random instructions at addr, which
// end writes the control transfer of (nv: the virtual registers defined).
func (g *blockGen) block(addr uint64, end func(b *strings.Builder, nv int)) string {
	var b strings.Builder
	fmt.Fprintf(&b, "vblock %#x..%#x:\n", addr, addr+0x100)
	nv := 0          // virtual registers defined so far
	unmasks := false // an MXCSR write unmasks an SSE exception
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
		fmt.Fprintf(&b, "  # %#x: insn %d\n", addr+4*uint64(i), i)
		t := fuzzTypes[g.pick(len(fuzzTypes))]
		switch g.pick(18) {
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
			if g.pick(3) == 0 {
				// A wide division: its dividend, hi:lo, is often lo
				// sign- or zero-extended (cqo; idiv), or small.
				hi, lo := g.reg(cur), g.reg(cur)
				op := []string{"DIVW", "REMW"}[g.pick(2)]
				fmt.Fprintf(&b, "  %s.%s %s, %s, %s, %s\n", op, t, def(), hi, lo, g.reg(cur))
				break
			}
			op := []string{"NOT", "NEG", "CLZ", "CTZ", "POPC", "BSWAP"}[g.pick(6)]
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
			k := []string{"add", "sub", "logic", "adc", "sbb", "inc", "dec", "neg", "shl", "shr", "sar", "rol", "ror", "mul", "none"}[g.pick(15)]
			fmt.Fprintf(&b, "  FLAGS.%s.%s %s, %s, %s, %s\n", k, t, g.reg(cur), g.reg(cur), g.reg(cur), g.reg(cur))
		case 12:
			switch g.pick(8) {
			case 0:
				fmt.Fprintf(&b, "  GETFLAGS %s\n", def())
			case 1:
				fmt.Fprintf(&b, "  SETFLAGS %s\n", g.reg(cur))
			default:
				c := []string{"o", "no", "b", "ae", "e", "ne", "be", "a", "s", "ns", "p", "np", "l", "ge", "le", "g"}[g.pick(16)]
				fmt.Fprintf(&b, "  GETCC.%s %s\n", c, def())
			}
		case 13:
			fmt.Fprintf(&b, "  MOV.u64 %s, %s\n", def(), g.reg(cur))
		case 14:
			// Float arithmetic, comparisons and conversions.
			ft := []string{"f32", "f64"}[g.pick(2)]
			switch g.pick(4) {
			case 0:
				op := []string{"ADD", "SUB", "MUL", "DIV", "MIN", "MAX"}[g.pick(6)]
				fmt.Fprintf(&b, "  %s.%s %s, %s, %s\n", op, ft, def(), g.reg(cur), g.reg(cur))
			case 1:
				c := []string{"eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"}[g.pick(14)]
				fmt.Fprintf(&b, "  CMP.%s.%s %s, %s, %s\n", c, ft, def(), g.reg(cur), g.reg(cur))
			case 2:
				fmt.Fprintf(&b, "  SQRT.%s %s, %s\n", ft, def(), g.reg(cur))
			default:
				r := []string{"rn", "rz", "dyn"}[g.pick(3)]
				it := []string{"s32", "s64"}[g.pick(2)]
				if g.pick(2) == 0 {
					fmt.Fprintf(&b, "  CVT.%s.%s.%s %s, %s\n", r, ft, it, def(), g.reg(cur))
				} else {
					fmt.Fprintf(&b, "  CVT.%s.%s.%s %s, %s\n", r, it, ft, def(), g.reg(cur))
				}
			}
		case 15:
			// A float of an interesting kind: zeros, denormals, NaNs
			// (quiet and signaling), infinities, 1.5, the largest finite.
			f64s := []uint64{0, 1 << 63, 1, 0x000fffffffffffff, 0x7ff8000000000000, 0xfff8000000000001, 0x7ff0000000000001,
				0x7ff0000000000000, 0xfff0000000000000, 0x3ff8000000000000, 0x7fefffffffffffff, 0xc00921fb54442d18}
			f32s := []uint64{0, 1 << 31, 1, 0x007fffff, 0x7fc00000, 0x7f800001, 0x7f800000, 0x3fc00000, 0x7f7fffff, 0xc0490fdb}
			v := f64s[g.pick(len(f64s))]
			if g.pick(2) == 0 {
				v = f32s[g.pick(len(f32s))]
			}
			fmt.Fprintf(&b, "  LI.u64 %s, %d\n", def(), int64(v))
		case 17:
			// A packed operation on xmm registers, or a scalar moved into
			// one (the low 64 bits).
			x := func() string { return fmt.Sprintf("x%d", g.pick(4)) }
			if g.pick(4) == 0 {
				fmt.Fprintf(&b, "  PUT.u64 %s, %s\n", x(), g.reg(cur))
				break
			}
			vt := []string{"u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64", "f32", "f64", "b128"}[g.pick(11)]
			fmt.Fprintf(&b, "  GET.b128 v20, %s\n  GET.b128 v22, %s\n", x(), x())
			switch g.pick(8) {
			case 0, 1, 2:
				op := []string{"VADD", "VSUB", "VMUL", "VDIV", "VMIN", "VMAX", "VAND", "VOR", "VXOR", "VANDN", "VUNPACKL", "VUNPACKH", "VSHUFB"}[g.pick(13)]
				if op == "VAND" || op == "VOR" || op == "VXOR" || op == "VANDN" {
					vt = "b128" // their 128-bit form
				}
				fmt.Fprintf(&b, "  %s.%s v24, v20, v22\n", op, vt)
			case 3:
				c := []string{"eq", "lt", "gt", "ne", "le"}[g.pick(5)]
				fmt.Fprintf(&b, "  VCMP.%s.%s v24, v20, v22\n", c, vt)
			case 4:
				fmt.Fprintf(&b, "  VALIGNR.u8 v24, v20, v22, %d\n", g.pick(40))
			case 5:
				fmt.Fprintf(&b, "  VPERM.%s v24, v20, %d\n", vt, g.pick(256))
			case 6:
				fmt.Fprintf(&b, "  VSQRT.%s v24, v20\n", vt)
			default:
				fmt.Fprintf(&b, "  VMOVMSK.%s %s, v20\n", vt, def())
				continue
			}
			fmt.Fprintf(&b, "  PUT.b128 %s, v24\n", x())
		case 16:
			// A rounding mode, DAZ and FTZ, and rarely an unmasked
			// exception.
			mx := uint64(0x1f80) | uint64(g.pick(4))<<13 | uint64(g.pick(2))<<15 | uint64(g.pick(2))<<6
			if g.pick(8) == 0 {
				mx &^= 1 << (7 + g.pick(6))
				unmasks = true
			}
			v := def()
			fmt.Fprintf(&b, "  LI.u32 %s, %d\n  PUT.u32 mxcsr, %s\n", v, mx, v)
		}
	}
	end(&b, nv)
	g.unmasks = g.unmasks || unmasks
	return b.String()
}

// oneInstruction makes the generated block one x86 instruction. With an
// SSE exception unmasked, the compiling engine runs a unit with float
// arithmetic one x86 instruction at a time, translating the block's tail
// afresh from each instruction (jit/doc.go); a lifted block allows that,
// since its virtual registers never outlive their x86 instruction, but the
// generator's blocks read virtual registers across its pseudo-instructions.
func oneInstruction(block string) string {
	lines := strings.SplitAfter(block, "\n")
	var out strings.Builder
	seen := false
	for _, l := range lines {
		if strings.HasPrefix(l, "  # ") {
			if seen {
				continue
			}
			seen = true
		}
		out.WriteString(l)
	}
	return out.String()
}

// runBoth runs src on the interpreter and on the compiling engine from the
// same state and reports the first difference.
func runBoth(t *testing.T, src string, seed []byte, budget uint64) {
	runBothTiered(t, src, seed, budget, 0)
}

// runBothTiered is runBoth with the compiling engine tiered: it compiles a
// block once its interpreter ran it hotAfter times (0: at once), forming
// traces along the paths the interpreter saw.
func runBothTiered(t *testing.T, src string, seed []byte, budget uint64, hotAfter uint32) {
	runBothAt(t, src, seed, budget, hotAfter, 0x1000)
}

// runBothAt is runBothTiered starting at guest address pc.
func runBothAt(t *testing.T, src string, seed []byte, budget uint64, hotAfter uint32, pc uint64) {
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
			opts.HotAfter = hotAfter
			j, err := New(mem, tr, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			e = j
		} else {
			e = gvinst.NewInterpreter(mem, tr, opts)
		}
		cpu := gvinst.CPU{PC: pc}
		for i := 0; i < 16; i++ {
			v := uint64(0x9e3779b97f4a7c15) * uint64(i+1+int(seed[i%len(seed)]))
			if i%3 == 0 {
				v &= 0xff
			}
			cpu.State[i] = v
		}
		for i := gvinst.X0; i < gvinst.X0+32; i++ {
			cpu.State[i] = uint64(0x9e3779b97f4a7c15)*uint64(i) ^ uint64(seed[int(i)%len(seed)])<<(8*(i%8))
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
		if hotAfter != 0 && (ws.Kind == gvinst.StopTrap && ws.Trap == gvinst.TrapUnsupported) != (gs.Kind == gvinst.StopTrap && gs.Trap == gvinst.TrapUnsupported) {
			// Tiered, the compiling engine runs cold blocks
			// unoptimized: an instruction gxbit does not implement
			// whose result is dead (the generator makes some) traps
			// there and not in the optimized block.
			return
		}
		if ws.Kind != gs.Kind || ws.PC != gs.PC || ws.Trap != gs.Trap || ws.FaultAddr != gs.FaultAddr {
			t.Fatalf("optimize=%v: jit stops with %v, the interpreter with %v\n%s", opt, gs, ws, src)
		}
		// At a trap the interpreter may already have written a guest
		// register that a later instruction of the block writes (its
		// copy coalescing allows it); the compiling engine is exact there.
		// Allowed: the interpreter's fast float path leaves DE unset for a
		// denormal operand of an op whose result is normal (gvinst/exec.go,
		// RATIONALE); compiled code runs the host's SSE, which sets it.
		if d := got.cpu.State[gvinst.MXCSR] ^ want.cpu.State[gvinst.MXCSR]; d == mxDE && got.cpu.State[gvinst.MXCSR]&mxDE != 0 {
			want.cpu.State[gvinst.MXCSR] |= mxDE
		}
		if hotAfter != 0 && flagsOf(t, got.cpu) == flagsOf(t, want.cpu) {
			// Tiered, the compiling engine runs cold blocks unoptimized:
			// a FLAGS record a later one overwrites is still made, and
			// leaves the lazy flags state different but the same flags.
			for r := gvinst.CCOp; r <= gvinst.RFLAGS; r++ {
				got.cpu.State[r] = want.cpu.State[r]
			}
		}
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

// flagsOf returns the flags cpu's lazy flags state stands for, as GETFLAGS
// makes them.
func flagsOf(t *testing.T, cpu gvinst.CPU) uint64 {
	frame := make([]uint64, gvinst.FrameSlots)
	copy(frame, cpu.State[:])
	get := gvinst.Inst{Op: gvinst.OpGetFlags, Type: gvinst.U64, Dst: gvinst.VReg(0)}
	if st := gvinst.NewInterpreter(gvinst.NewMemory(0), nil, gvinst.InterpOptions{}).Exec(frame, &get); st != nil {
		t.Fatalf("GETFLAGS: %v", st)
	}
	return frame[gvinst.VReg(0)]
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

// FuzzEngineTraces is FuzzEngines on three blocks in a loop, each going on
// to the next or leaving, run by the compiling engine tiered so that it
// forms traces (trace.go) along the paths its interpreter saw, side exits
// and all; the budget stops loops that do not end, at the same block
// boundary as the interpreter. Crashers are kept in
// testdata/fuzz/FuzzEngineTraces.
func FuzzEngineTraces(f *testing.F) {
	for i := 0; i < 64; i++ {
		seed := make([]byte, 160)
		for j := range seed {
			seed[j] = byte(i*43 + j*13 + i*j*5)
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		g := &blockGen{data: data, loop: true}
		runBothTiered(t, g.traceProgram(), data, 1+uint64(data[0])*37, 3)
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

// TestTraceGeneratorMakesTraces checks that the compiling engine forms
// traces on many of FuzzEngineTraces' seed programs, so that it compares
// side exits and joined blocks and not only single blocks.
func TestTraceGeneratorMakesTraces(t *testing.T) {
	traces := 0
	const n = 64
	for i := 0; i < n; i++ {
		seed := make([]byte, 160)
		for j := range seed {
			seed[j] = byte(i*43 + j*13 + i*j*5)
		}
		src := (&blockGen{data: seed, loop: true}).traceProgram()
		if _, err := gvinst.Parse(src); err != nil {
			continue
		}
		mem := gvinst.NewMemory(0)
		if err := mem.Map(dataBase, 2*gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		e, err := New(mem, newTextTranslator(t, mem, src), gvinst.InterpOptions{Optimize: true, HotAfter: 3})
		if err != nil {
			t.Fatal(err)
		}
		cpu := gvinst.CPU{PC: 0x1000}
		for r := 0; r < 16; r++ {
			cpu.State[r] = uint64(0x9e3779b97f4a7c15) * uint64(r+1+int(seed[r]))
			if r%3 == 0 {
				cpu.State[r] &= 0xff // s15 counts the loop down
			}
		}
		cpu.State[gvinst.S7] = dataBase
		cpu.State[gvinst.MXCSR] = 0x1f80
		e.Run(&cpu, 1+uint64(seed[0])*37)
		if e.Stats().TraceBlocks > 0 {
			traces++
		}
		e.Close()
	}
	t.Logf("%d of %d programs made traces", traces, n)
	if traces < n/16 {
		t.Errorf("only %d of %d generated programs made traces", traces, n)
	}
}
