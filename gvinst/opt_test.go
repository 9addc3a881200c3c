package gvinst

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden outputs under testdata/opt")

// A golden file under testdata/opt holds option lines ("#! pass NAME" —
// a pass of Passes() or "all" — and "#! flags-dead-at-exit"), the input
// VBlock, a line "----", and the exact printed output.
func TestPassGoldens(t *testing.T) {
	files, err := filepath.Glob("testdata/opt/*.gv")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			in, want, ok := strings.Cut(string(data), "----\n")
			if !ok {
				t.Fatal("no ---- separator")
			}
			var header []string
			var body strings.Builder
			for _, line := range strings.SplitAfter(in, "\n") {
				if strings.HasPrefix(line, "#!") {
					header = append(header, strings.TrimSpace(line))
				} else {
					body.WriteString(line)
				}
			}
			bs, err := Parse(body.String())
			if err != nil || len(bs) != 1 {
				t.Fatalf("input: %v", err)
			}
			b := bs[0]
			if Print(b) != body.String() {
				t.Fatalf("input does not round-trip:\n%s", Print(b))
			}
			if err := Verify(b); err != nil {
				t.Fatalf("input: %v", err)
			}
			var passes []Pass
			for _, h := range header {
				switch {
				case h == "#! flags-dead-at-exit":
					b.FlagsDeadAtExit = true
				case h == "#! pass all":
					passes = Passes()
				case strings.HasPrefix(h, "#! pass "):
					name := strings.TrimPrefix(h, "#! pass ")
					for _, p := range Passes() {
						if p.Name == name {
							passes = append(passes, p)
						}
					}
					if len(passes) == 0 {
						t.Fatalf("unknown pass %q", name)
					}
				}
			}
			orig := cloneBlock(b)
			for _, p := range passes {
				p.Run(b)
				if err := Verify(b); err != nil {
					t.Fatalf("after %s: %v\n%s", p.Name, err, Print(b))
				}
			}
			got := Print(b)
			if *update {
				if err := os.WriteFile(file, []byte(in+"----\n"+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("output differs:\n%s\nwant:\n%s", got, want)
			}
			if again, err := Parse(want); err != nil || Print(again[0]) != want {
				t.Errorf("golden output does not round-trip: %v", err)
			}
			// The optimized block does what the input does.
			rng := rand.New(rand.NewSource(int64(len(got))))
			for i := 0; i < 20; i++ {
				compareBlocks(t, orig, b, rng)
			}
		})
	}
}

// compareBlocks runs two versions of a block from the same random guest
// state and memory and fails if the final guest state, stop or memory
// differ. Flags are compared as materialised RFLAGS, and not at all when
// the block says they are dead at its exit.
func compareBlocks(t *testing.T, a, b *VBlock, rng *rand.Rand) {
	t.Helper()
	var init CPU
	for r := range init.State {
		init.State[r] = randValue(rng)
	}
	init.State[CCOp] = CCOpValue(FlagsSub, U64)
	init.State[MXCSR] = 0x1f80
	init.State[RFLAGS] = 0x202
	// Point a few registers at memory.
	for _, r := range []Reg{S0, S2, S3, S5, S6, S7} {
		if rng.Intn(3) != 0 {
			init.State[r] = dataBase + uint64(rng.Intn(dataPages*PageSize/2))&^7
		}
	}
	init.PC = a.Addr
	seed := rng.Int63()
	run := func(vb *VBlock, fast bool) (CPU, Stop, []byte) {
		mem := NewMemory(0)
		if err := mem.Map(dataBase, dataPages*PageSize, PermRead|PermWrite); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, dataPages*PageSize)
		rand.New(rand.NewSource(seed)).Read(buf)
		_ = mem.Write(dataBase, buf)
		tr := &textTranslator{blocks: map[uint64]*VBlock{vb.Addr: vb}, mem: mem}
		it := NewInterpreter(mem, tr, InterpOptions{})
		it.noFast = !fast
		cpu := init
		stop := it.Run(&cpu, 1)
		_ = mem.Read(dataBase, buf)
		return cpu, stop, buf
	}
	c1, s1, m1 := run(a, false)
	for _, fast := range []bool{false, true} {
		c2, s2, m2 := run(b, fast)
		if s1.Kind != s2.Kind || s1.PC != s2.PC || s1.Trap != s2.Trap {
			t.Fatalf("fast=%v: stop %v, want %v\n%s", fast, s2, s1, Print(b))
		}
		if s1.Kind == StopTrap {
			continue // guest state at a trap need not be precise
		}
		for r := Reg(0); r < NumGuestSlots; r++ {
			if r >= CCOp && r <= RFLAGS {
				continue
			}
			want := c1.State[r]
			if r == MXCSR && fast {
				want |= c2.State[r] & mxDE // the compiled fast path may leave DE unset (exec.go)
				c2.State[r] |= c1.State[r] & mxDE
			}
			if want != c2.State[r] {
				t.Fatalf("fast=%v: slot %s = %#x, want %#x\n%s", fast, r, c2.State[r], want, Print(b))
			}
		}
		if !a.FlagsDeadAtExit && getFlagsOf(&c1) != getFlagsOf(&c2) {
			t.Fatalf("fast=%v: flags %#x, want %#x\n%s", fast, getFlagsOf(&c2), getFlagsOf(&c1), Print(b))
		}
		if c1.PC != c2.PC || string(m1) != string(m2) {
			t.Fatalf("fast=%v: pc %#x (want %#x) or memory differs\n%s", fast, c2.PC, c1.PC, Print(b))
		}
	}
}

func randValue(rng *rand.Rand) uint64 {
	switch rng.Intn(6) {
	case 0:
		return uint64(rng.Intn(5))
	case 1:
		return ^uint64(rng.Intn(3))
	case 2:
		return 1 << uint(rng.Intn(64))
	case 3:
		return uint64(rng.Int63n(1 << 16))
	}
	return rng.Uint64()
}

// TestOptimizedMatchesUnoptimized generates random valid straight-line
// blocks from the op table and checks that the optimization passes (and
// the interpreter's specialised forms) do not change what they compute.
func TestOptimizedMatchesUnoptimized(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	n := 250
	if testing.Short() {
		n = 100
	}
	for i := 0; i < n; i++ {
		b := randomBlock(rng)
		if err := Verify(b); err != nil {
			t.Fatalf("generated block invalid: %v\n%s", err, Print(b))
		}
		b.FlagsDeadAtExit = rng.Intn(4) == 0
		opt := cloneBlock(b)
		for _, p := range Passes() {
			p.Run(opt)
			if err := Verify(opt); err != nil {
				t.Fatalf("after pass %s: %v\nbefore:\n%s\nafter:\n%s", p.Name, err, Print(b), Print(opt))
			}
		}
		for k := 0; k < 2; k++ {
			compareBlocks(t, b, opt, rng)
			compareBlocks(t, b, b, rng) // the specialised forms alone
		}
	}
}

// randomBlock builds a random valid block of integer, float, flags, state
// and memory ops over a few guest registers.
func randomBlock(rng *rand.Rand) *VBlock {
	b := &VBlock{Addr: 0x1000, End: 0x1100}
	var ints []Reg // defined one-slot virtual registers
	next := 0
	newReg := func() Reg { r := VReg(next); next++; return r }
	addr := uint64(0x1000)
	emit := func(in Inst) {
		in.X86 = addr
		b.Insts = append(b.Insts, in)
	}
	pick := func() Reg { return ints[rng.Intn(len(ints))] }
	var bases []Reg // the address registers of earlier loads and stores
	gregs := []Reg{S0, S1, S2, S3, S6, S7, XReg(0), XReg(1)}
	intTypes := []Type{U8, U16, U32, U64, S8, S16, S32, S64, B32, B64}
	// Start with a few GETs and constants.
	for i := 0; i < 3; i++ {
		r := newReg()
		emit(Inst{Op: OpGet, Type: U64, Dst: r, Src: [4]Reg{gregs[rng.Intn(len(gregs))]}})
		ints = append(ints, r)
	}
	r := newReg()
	emit(Inst{Op: OpLi, Type: U64, Dst: r, Imm: int64(randValue(rng))})
	ints = append(ints, r)
	nInsts := 5 + rng.Intn(30)
	for i := 0; i < nInsts; i++ {
		if rng.Intn(4) == 0 {
			b.Guest = append(b.Guest, GuestInst{Addr: addr, Text: fmt.Sprintf("insn %d", i)})
			addr++
		}
		t := intTypes[rng.Intn(len(intTypes))]
		switch k := rng.Intn(16); k {
		case 0, 1, 2:
			ops := []Op{OpAdd, OpSub, OpMul, OpAnd, OpOr, OpXor, OpShl, OpShr, OpSar, OpRol, OpRor, OpMin, OpMax, OpMulHi, OpCmp}
			in := Inst{Op: ops[rng.Intn(len(ops))], Type: t, Dst: newReg(), Src: [4]Reg{pick(), pick()}}
			if in.Op == OpCmp {
				in.Mod = uint8(rng.Intn(int(CmpGeu) + 1))
			}
			if rng.Intn(3) == 0 {
				in.HasImm, in.Imm, in.Src[1] = true, CanonImm(t, int64(randValue(rng))), 0
			}
			emit(in)
			ints = append(ints, in.Dst)
		case 3:
			r := newReg()
			emit(Inst{Op: OpLi, Type: t, Dst: r, Imm: CanonImm(t, int64(randValue(rng)))})
			ints = append(ints, r)
		case 4:
			ops := []Op{OpNot, OpNeg, OpAbs, OpClz, OpCtz, OpPopc, OpBswap, OpMov, OpCvt, OpCvt}
			in := Inst{Op: ops[rng.Intn(len(ops))], Type: t, Dst: newReg(), Src: [4]Reg{pick()}}
			if in.Op == OpCvt {
				all := append(intTypes, F32, F64)
				in.Type, in.SrcType = all[rng.Intn(len(all))], all[rng.Intn(len(all))]
				in.Mod = uint8(rng.Intn(int(RoundMXCSR) + 1))
			}
			emit(in)
			ints = append(ints, in.Dst)
		case 5:
			g := gregs[rng.Intn(len(gregs))]
			emit(Inst{Op: OpPut, Type: []Type{U64, U32, U64, U16}[rng.Intn(4)], Dst: g, Src: [4]Reg{pick()}})
		case 6, 7:
			g := gregs[rng.Intn(len(gregs))]
			in := Inst{Op: OpGet, Type: []Type{U64, U32, U64, U8, S64}[rng.Intn(5)], Dst: newReg(), Src: [4]Reg{g}}
			emit(in)
			ints = append(ints, in.Dst)
		case 8, 9:
			kinds := []FlagKind{FlagsAdd, FlagsSub, FlagsAdc, FlagsSbb, FlagsLogic, FlagsInc, FlagsDec, FlagsNeg, FlagsShl, FlagsShr, FlagsSar, FlagsRol, FlagsRor, FlagsMul}
			emit(Inst{Op: OpFlags, Type: t, Mod: uint8(kinds[rng.Intn(len(kinds))]), Src: [4]Reg{pick(), pick(), pick(), pick()}})
		case 10, 11:
			in := Inst{Op: OpGetCC, Mod: uint8(rng.Intn(int(numConds))), Dst: newReg()}
			if rng.Intn(5) == 0 {
				in = Inst{Op: OpGetFlags, Dst: newReg()}
			}
			emit(in)
			ints = append(ints, in.Dst)
		case 12:
			// A load or store through a register that points into the
			// data pages (masked into range).
			// Often through an earlier access's base, at nearby
			// offsets, so that accesses meet (LoadForwardPass).
			var a Reg
			if len(bases) > 0 && rng.Intn(2) == 0 {
				a = bases[rng.Intn(len(bases))]
			} else {
				base := newReg()
				emit(Inst{Op: OpAnd, Type: U64, Dst: base, Src: [4]Reg{pick()}, HasImm: true, Imm: dataPages*PageSize/2 - 1})
				a = newReg()
				emit(Inst{Op: OpAdd, Type: U64, Dst: a, Src: [4]Reg{base}, HasImm: true, Imm: dataBase})
				bases = append(bases, a)
			}
			lt := []Type{U8, U16, U32, U64, S32}[rng.Intn(5)]
			disp := int64(rng.Intn(64))
			if rng.Intn(2) == 0 {
				disp = int64(4 * rng.Intn(3))
			}
			if rng.Intn(2) == 0 {
				d := newReg()
				emit(Inst{Op: OpLd, Type: lt, Dst: d, Src: [4]Reg{a}, Imm: disp})
				ints = append(ints, d)
			} else {
				emit(Inst{Op: OpSt, Type: lt, Src: [4]Reg{a, pick()}, Imm: disp})
			}
		case 13:
			in := Inst{Op: OpSelect, Type: U64, Dst: newReg(), Src: [4]Reg{pick(), pick(), pick()}}
			emit(in)
			ints = append(ints, in.Dst)
		case 14:
			if rng.Intn(3) == 0 {
				emit(Inst{Op: OpSetFlags, Src: [4]Reg{pick()}})
			} else {
				// A divisor that is never zero.
				dv := newReg()
				emit(Inst{Op: OpOr, Type: t, Dst: dv, Src: [4]Reg{pick()}, HasImm: true, Imm: 1})
				in := Inst{Op: []Op{OpDiv, OpRem}[rng.Intn(2)], Type: t, Dst: newReg(), Src: [4]Reg{pick(), dv}}
				emit(in)
				ints = append(ints, in.Dst)
			}
		case 15:
			ft := []Type{F32, F64}[rng.Intn(2)]
			ops := []Op{OpAdd, OpSub, OpMul, OpDiv, OpMin, OpMax}
			in := Inst{Op: ops[rng.Intn(len(ops))], Type: ft, Dst: newReg(), Src: [4]Reg{pick(), pick()}}
			emit(in)
			ints = append(ints, in.Dst)
		}
	}
	switch rng.Intn(3) {
	case 0:
		emit(Inst{Op: OpBranch, Src: [4]Reg{pick()}, Target: [2]uint64{0x3000, 0x4000}})
	case 1:
		emit(Inst{Op: OpJmpR, Src: [4]Reg{pick()}})
	default:
		emit(Inst{Op: OpJmp, Target: [2]uint64{0x3000}})
	}
	if len(b.Guest) == 0 || b.Guest[0].Addr != 0x1000 {
		b.Guest = append([]GuestInst{{Addr: 0x1000, Text: "first"}}, b.Guest...)
	}
	return b
}

// FuzzPasses checks, for random blocks grown from the fuzzer's seed, that
// the passes keep blocks valid and do not change what they compute.
func FuzzPasses(f *testing.F) {
	for _, seed := range []int64{1, 2, 3, 42} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed int64) {
		rng := rand.New(rand.NewSource(seed))
		b := randomBlock(rng)
		b.FlagsDeadAtExit = seed%3 == 0
		opt := cloneBlock(b)
		if err := Optimize(opt); err != nil {
			t.Fatalf("%v\n%s", err, Print(b))
		}
		compareBlocks(t, b, opt, rng)
	})
}
