package gvinst

import (
	"math/rand"
	"testing"
)

// memoryBlock is a random block of loads and stores through a few base
// registers at nearby offsets, with the bases moved by constants, copied
// through guest registers, and loaded values overwritten: the accesses
// meet often, as LoadForwardPass needs to be tested.
func memoryBlock(rng *rand.Rand) *VBlock {
	b := &VBlock{Addr: 0x1000, End: 0x1100}
	next := 0
	newReg := func() Reg { r := VReg(next); next++; return r }
	emit := func(in Inst) { in.X86 = 0x1000; b.Insts = append(b.Insts, in) }
	var vals, bases []Reg
	for i := 0; i < 2; i++ {
		m, a := newReg(), newReg()
		emit(Inst{Op: OpGet, Type: U64, Dst: m, Src: [4]Reg{[]Reg{S0, S2, S3}[rng.Intn(3)]}})
		emit(Inst{Op: OpAnd, Type: U64, Dst: a, Src: [4]Reg{m}, HasImm: true, Imm: dataPages*PageSize/2 - 1})
		base := newReg()
		emit(Inst{Op: OpAdd, Type: U64, Dst: base, Src: [4]Reg{a}, HasImm: true, Imm: dataBase + 64})
		bases = append(bases, base)
		vals = append(vals, m)
	}
	types := []Type{U8, U16, U32, U64, S32, B64, F64}
	for i := 0; i < 10+rng.Intn(30); i++ {
		base := bases[rng.Intn(len(bases))]
		disp := int64(4*rng.Intn(5)) - 8
		t := types[rng.Intn(len(types))]
		switch rng.Intn(8) {
		case 0, 1, 2:
			d := newReg()
			emit(Inst{Op: OpLd, Type: t, Dst: d, Src: [4]Reg{base}, Imm: disp})
			vals = append(vals, d)
		case 3, 4:
			emit(Inst{Op: OpSt, Type: t, Src: [4]Reg{base, vals[rng.Intn(len(vals))]}, Imm: disp})
		case 5:
			// A moved base, or one copied through rsp.
			nb := newReg()
			if rng.Intn(2) == 0 {
				emit(Inst{Op: []Op{OpAdd, OpSub}[rng.Intn(2)], Type: U64, Dst: nb, Src: [4]Reg{base}, HasImm: true, Imm: int64(4 * rng.Intn(3))})
			} else {
				emit(Inst{Op: OpPut, Type: U64, Dst: S4, Src: [4]Reg{base}})
				emit(Inst{Op: OpGet, Type: U64, Dst: nb, Src: [4]Reg{S4}})
			}
			bases = append(bases, nb)
		case 6:
			// A loaded value overwritten.
			emit(Inst{Op: OpLi, Type: U64, Dst: vals[rng.Intn(len(vals))], Imm: int64(rng.Intn(1000))})
		case 7:
			emit(Inst{Op: OpPut, Type: U64, Dst: []Reg{S1, S5, S6, S7}[rng.Intn(4)], Src: [4]Reg{vals[rng.Intn(len(vals))]}})
		}
	}
	for k, r := range []Reg{S1, S5, S6, S7, XReg(2), XReg(3)} {
		emit(Inst{Op: OpPut, Type: U64, Dst: r, Src: [4]Reg{vals[(len(vals)-1-k+len(vals))%len(vals)]}})
	}
	l := newReg()
	emit(Inst{Op: OpLi, Type: U64, Dst: l, Imm: 0x2000})
	emit(Inst{Op: OpRet, Src: [4]Reg{l}})
	return b
}

// TestLoadForwardRandom runs random memory blocks before and after
// LoadForwardPass: same guest state, same memory.
func TestLoadForwardRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	forwarded := 0
	for i := 0; i < 300; i++ {
		b := memoryBlock(rng)
		if err := Verify(b); err != nil {
			t.Fatalf("generated block invalid: %v\n%s", err, Print(b))
		}
		opt := cloneBlock(b)
		LoadForwardPass(opt)
		if err := Verify(opt); err != nil {
			t.Fatalf("%v\n%s", err, Print(opt))
		}
		for j := range opt.Insts {
			if b.Insts[j].Op == OpLd && opt.Insts[j].Op != OpLd {
				forwarded++
			}
		}
		compareBlocks(t, b, opt, rng)
	}
	if forwarded < 50 {
		t.Errorf("only %d loads forwarded: the generator no longer makes accesses meet", forwarded)
	}
}
