package gvinst

import (
	"math/bits"
	"slices"
)

// AddrValue is the address of a load or store of a VBlock as a root
// value plus a constant: accesses whose addresses have one Root are Off
// bytes apart from each other's Off, exactly (64-bit wrapping sums).
type AddrValue struct {
	Root int   // the number of the root value, unique within the block
	Off  int64 // the address minus the root value
	OK   bool  // the instruction is an LD or ST
}

// AddressValues returns, per instruction of b, the address of each LD and
// ST as a root value plus an offset. A register's value is followed
// through copies (GET, PUT and MOV of 8 bytes) and constant sums (ADD and
// SUB of an immediate, 64 bits wide); any other write, an implicit one
// included, gives the register a root value of its own.
func AddressValues(b *VBlock) []AddrValue {
	// vals[r] is register r's value; a root of 0 means none yet (roots
	// are numbered from 1 here, from 0 in the result).
	type value struct {
		root  int
		delta int64
	}
	vals := make([]value, int(NumGuestSlots)+b.NumVRegs())
	roots := 0
	valueOf := func(r Reg) value {
		if int(r) >= len(vals) {
			roots++
			return value{root: roots}
		}
		if vals[r].root == 0 {
			roots++
			vals[r] = value{root: roots}
		}
		return vals[r]
	}
	out := make([]AddrValue, len(b.Insts))
	for i := range b.Insts {
		in := &b.Insts[i]
		if in.Op == OpLd || in.Op == OpSt {
			v := valueOf(in.Src[0])
			out[i] = AddrValue{Root: v.root - 1, Off: v.delta + in.Imm, OK: true}
		}
		known, ok := value{}, false
		switch {
		case (in.Op == OpGet || in.Op == OpPut || in.Op == OpMov) && in.Type.Size() == 8 && !in.Type.IsWide():
			known, ok = valueOf(in.Src[0]), true
		case (in.Op == OpAdd || in.Op == OpSub) && in.HasImm && in.Type.Size() == 8 && in.Type.IsInt():
			known, ok = valueOf(in.Src[0]), true
			if in.Op == OpAdd {
				known.delta += in.Imm
			} else {
				known.delta -= in.Imm
			}
		}
		_, wr := implicitSlots(in)
		for w := range wr {
			for set := wr[w]; set != 0; set &= set - 1 {
				vals[w*64+bits.TrailingZeros64(set)] = value{}
			}
		}
		if d, has := destReg(in); has {
			for s := 0; s < d.n; s++ {
				if r := int(d.r) + s; r < len(vals) {
					vals[r] = value{}
				}
			}
			if ok && int(d.r) < len(vals) {
				vals[d.r] = known
			}
		}
	}
	return out
}

// LoadForwardPass removes loads whose value the block already has: an LD
// of the bytes an earlier LD of the same type read, or an earlier ST of
// the same size wrote, at the same address (AddressValues), with no store
// in between that may overlap them and the earlier value's register
// unchanged, becomes a MOV from that register (an AND for a narrower
// unsigned integer taken from a store). The removed load could not fault:
// the earlier access to the same bytes did not, and only a system call,
// which ends the block, changes a mapping (a writable page is readable, as
// in x86 paging).
func LoadForwardPass(b *VBlock) {
	// Only a load after another access can be forwarded.
	accesses, later := 0, false
	for i := range b.Insts {
		switch b.Insts[i].Op {
		case OpLd:
			later = later || accesses > 0
			accesses++
		case OpSt:
			accesses++
		}
	}
	if !later {
		return
	}
	// mem lists the values known to be in memory: the bytes size at
	// root+off are in register reg (as loaded as typ, or stored as typ).
	type known struct {
		root  int
		off   int64
		size  int
		reg   Reg
		typ   Type
		store bool
	}
	addrs := AddressValues(b)
	var mem []known
	for i := range b.Insts {
		in := &b.Insts[i]
		a := addrs[i]
		if in.Op == OpLd && a.OK && forwardable(in.Type) {
			for _, k := range mem {
				if k.root == a.Root && k.off == a.Off && k.size == in.Type.Size() {
					if rep, ok := forwardedLoad(in, k.reg, k.typ, k.store); ok {
						*in = rep
						break
					}
				}
			}
		}
		// Forget the values this instruction overwrites: memory it may
		// store to, registers it writes.
		eff := in.Op.Info().Effects
		switch {
		case in.Op == OpSt && a.OK:
			lo, hi := a.Off, a.Off+int64(in.Type.Size())
			mem = slices.DeleteFunc(mem, func(k known) bool {
				return k.root != a.Root || k.off < hi && lo < k.off+int64(k.size)
			})
		case eff&(EffStore|EffHost) != 0 || usesX87Hook(in):
			mem = mem[:0]
		}
		if len(mem) > 0 {
			_, wr := implicitSlots(in)
			writesState := wr != slotSet{} // most instructions write none
			d, hasDst := destReg(in)
			mem = slices.DeleteFunc(mem, func(k known) bool {
				n := Reg(k.typ.Slots())
				if hasDst && overlaps(d.r, Reg(d.n), k.reg, n) {
					return true
				}
				for s := Reg(0); writesState && s < n; s++ {
					if wr.has(k.reg + s) {
						return true
					}
				}
				return false
			})
		}
		if a.OK && forwardable(in.Type) {
			switch in.Op {
			case OpLd:
				mem = append(mem, known{a.Root, a.Off, in.Type.Size(), in.Dst, in.Type, false})
			case OpSt:
				mem = append(mem, known{a.Root, a.Off, in.Type.Size(), in.Src[1], in.Type, true})
			}
		}
	}
}

// forwardedLoad is the instruction that gives load ld's destination the
// value register r holds: what an earlier load of type t read, or (store)
// what an earlier store of type t wrote, at ld's address.
func forwardedLoad(ld *Inst, r Reg, t Type, store bool) (Inst, bool) {
	// The whole slot (or pair) is the loaded value: a copy of 8 bytes,
	// which the compiling engine makes by renaming.
	mov := Inst{Op: OpMov, Type: U64, Dst: ld.Dst, Src: [4]Reg{r}, X86: ld.X86}
	if ld.Type.IsWide() {
		mov.Type = ld.Type
	}
	switch {
	case !store && t == ld.Type:
		return mov, true
	case !store:
		return Inst{}, false
	case ld.Type.IsWide() != t.IsWide():
		return Inst{}, false
	case ld.Type.IsWide() || ld.Type.Size() == 8:
		return mov, true
	case ld.Type.IsInt() && !ld.Type.IsSigned():
		return Inst{Op: OpAnd, Type: ld.Type, Dst: ld.Dst, Src: [4]Reg{r}, HasImm: true, Imm: CanonImm(ld.Type, -1), X86: ld.X86}, true
	}
	return Inst{}, false
}

// forwardable reports whether loads of type t take part in
// LoadForwardPass: 1, 2, 4, 8 or 16 bytes (not the 10 of an f80).
func forwardable(t Type) bool {
	switch t.Size() {
	case 1, 2, 4, 8, 16:
		return true
	}
	return false
}
