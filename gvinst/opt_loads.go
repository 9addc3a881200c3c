package gvinst

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
	type value struct {
		root  int
		delta int64
	}
	vals := map[Reg]value{}
	roots := 0
	valueOf := func(r Reg) value {
		if v, ok := vals[r]; ok {
			return v
		}
		v := value{root: roots}
		roots++
		vals[r] = v
		return v
	}
	out := make([]AddrValue, len(b.Insts))
	for i := range b.Insts {
		in := &b.Insts[i]
		if in.Op == OpLd || in.Op == OpSt {
			v := valueOf(in.Src[0])
			out[i] = AddrValue{Root: v.root, Off: v.delta + in.Imm, OK: true}
		}
		var known *value
		switch {
		case (in.Op == OpGet || in.Op == OpPut || in.Op == OpMov) && in.Type.Size() == 8 && !in.Type.IsWide():
			v := valueOf(in.Src[0])
			known = &v
		case (in.Op == OpAdd || in.Op == OpSub) && in.HasImm && in.Type.Size() == 8 && in.Type.IsInt():
			v := valueOf(in.Src[0])
			if in.Op == OpAdd {
				v.delta += in.Imm
			} else {
				v.delta -= in.Imm
			}
			known = &v
		}
		_, wr := implicitSlots(in)
		if wr != (slotSet{}) {
			for r := range vals {
				if wr.has(r) {
					delete(vals, r)
				}
			}
		}
		if d, ok := destReg(in); ok {
			for s := 0; s < d.n; s++ {
				delete(vals, d.r+Reg(s))
			}
			if known != nil {
				vals[d.r] = *known
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
	type key struct {
		root int
		off  int64
		size int
	}
	type known struct {
		reg   Reg
		typ   Type
		store bool
	}
	addrs := AddressValues(b)
	mem := map[key]known{}
	for i := range b.Insts {
		in := &b.Insts[i]
		a := addrs[i]
		if in.Op == OpLd && a.OK && forwardable(in.Type) {
			if k, ok := mem[key{a.Root, a.Off, in.Type.Size()}]; ok {
				if rep, ok := forwardedLoad(in, k.reg, k.typ, k.store); ok {
					*in = rep
				}
			}
		}
		// Forget the values this instruction overwrites: memory it may
		// store to, registers it writes.
		eff := in.Op.Info().Effects
		switch {
		case in.Op == OpSt && a.OK:
			lo, hi := a.Off, a.Off+int64(in.Type.Size())
			for k := range mem {
				if k.root != a.Root || k.off < hi && lo < k.off+int64(k.size) {
					delete(mem, k)
				}
			}
		case eff&(EffStore|EffHost) != 0 || usesX87Hook(in):
			clear(mem)
		}
		_, wr := implicitSlots(in)
		d, hasDst := destReg(in)
		for k, v := range mem {
			n := Reg(v.typ.Slots())
			gone := hasDst && overlaps(d.r, Reg(d.n), v.reg, n)
			for s := Reg(0); s < n; s++ {
				gone = gone || wr.has(v.reg+s)
			}
			if gone {
				delete(mem, k)
			}
		}
		if a.OK && (in.Op == OpLd || in.Op == OpSt) {
			k := key{a.Root, a.Off, in.Type.Size()}
			switch {
			case !forwardable(in.Type):
			case in.Op == OpLd:
				mem[k] = known{in.Dst, in.Type, false}
			default:
				mem[k] = known{in.Src[1], in.Type, true}
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
