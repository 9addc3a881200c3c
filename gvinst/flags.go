package gvinst

import "math/bits"

// The RFLAGS bits.
const (
	FlagCF uint64 = 1 << 0
	FlagPF uint64 = 1 << 2
	FlagAF uint64 = 1 << 4
	FlagZF uint64 = 1 << 6
	FlagSF uint64 = 1 << 7
	FlagDF uint64 = 1 << 10
	FlagOF uint64 = 1 << 11

	// FlagsArith is the set of status flags FLAGS computes.
	FlagsArith = FlagCF | FlagPF | FlagAF | FlagZF | FlagSF | FlagOF
	// flagsFixed is RFLAGS bit 1, which always reads as 1.
	flagsFixed uint64 = 1 << 1
)

// CCOpValue is the value FLAGS.k.t stores in the CCOp slot.
func CCOpValue(k FlagKind, t Type) uint64 { return uint64(k) | uint64(t)<<8 }

func parity(r uint64) uint64 {
	if bits.OnesCount8(uint8(r))&1 == 0 {
		return FlagPF
	}
	return 0
}

// lazyFlags computes the status flags (a subset of FlagsArith) recorded by
// the lazy state ccop, a, b, r, c, as mods.go defines them. ccop must not be
// 0, rol or ror (the interpreter keeps those in RFLAGS).
func lazyFlags(ccop, a, b, r, c uint64) uint64 {
	k := FlagKind(ccop & 0xff)
	t := Type(ccop >> 8)
	m := t.Mask()
	n := uint(t.Bits())
	sign := uint64(1) << (n - 1)
	a, b, r = a&m, b&m, r&m
	fl := parity(r)
	if r == 0 {
		fl |= FlagZF
	}
	if r&sign != 0 {
		fl |= FlagSF
	}
	var cf, of bool
	af := false
	switch k {
	case FlagsAdd:
		cf = r < a
		of = (a^r)&(b^r)&sign != 0
		af = (a^b^r)&0x10 != 0
	case FlagsSub:
		cf = a < b
		of = (a^b)&(a^r)&sign != 0
		af = (a^b^r)&0x10 != 0
	case FlagsAdc:
		if c&1 != 0 {
			cf = r <= a
		} else {
			cf = r < a
		}
		of = (a^r)&(b^r)&sign != 0
		af = (a^b^r)&0x10 != 0
	case FlagsSbb:
		if c&1 != 0 {
			cf = a <= b
		} else {
			cf = a < b
		}
		of = (a^b)&(a^r)&sign != 0
		af = (a^b^r)&0x10 != 0
	case FlagsLogic:
	case FlagsInc:
		cf = c&1 != 0
		of = (a^r)&(1^r)&sign != 0
		af = (a^1^r)&0x10 != 0
	case FlagsDec:
		cf = c&1 != 0
		of = (a^1)&(a^r)&sign != 0
		af = (a^1^r)&0x10 != 0
	case FlagsNeg:
		cf = a != 0
		of = a == sign
		af = (a^r)&0x10 != 0
	case FlagsShl:
		if b <= uint64(n) && b > 0 {
			cf = a>>(uint64(n)-b)&1 != 0
		}
		of = (r&sign != 0) != cf
	case FlagsShr:
		if b > 0 && b <= uint64(n) {
			cf = a>>(b-1)&1 != 0
		}
		of = a&sign != 0
	case FlagsSar:
		if b > 0 {
			sh := b - 1
			if sh >= uint64(n) {
				sh = uint64(n) - 1
			}
			cf = uint64(sext(a, int(n))>>sh)&1 != 0
		}
	case FlagsMul:
		if t.IsSigned() {
			ext := uint64(0)
			if r&sign != 0 {
				ext = m
			}
			cf = a != ext
		} else {
			cf = a != 0
		}
		of = cf
	}
	if cf {
		fl |= FlagCF
	}
	if of {
		fl |= FlagOF
	}
	if af {
		fl |= FlagAF
	}
	return fl
}

// statusFlags returns the current status flags of frame f.
func statusFlags(f *frame) uint64 {
	if op := f[CCOp]; op != 0 {
		return lazyFlags(op, f[CCA], f[CCB], f[CCR], f[CCC])
	}
	return f[RFLAGS] & FlagsArith
}

// getFlags materialises RFLAGS from the lazy state of frame f.
func getFlags(f *frame) uint64 {
	return f[RFLAGS]&^FlagsArith | statusFlags(f) | flagsFixed
}

// condFromFlags evaluates x86 condition c on status flags fl.
func condFromFlags(c Cond, fl uint64) bool {
	var v bool
	switch c &^ 1 {
	case CondO:
		v = fl&FlagOF != 0
	case CondB:
		v = fl&FlagCF != 0
	case CondE:
		v = fl&FlagZF != 0
	case CondBE:
		v = fl&(FlagCF|FlagZF) != 0
	case CondS:
		v = fl&FlagSF != 0
	case CondP:
		v = fl&FlagPF != 0
	case CondL:
		v = (fl&FlagSF != 0) != (fl&FlagOF != 0)
	case CondLE:
		v = fl&FlagZF != 0 || (fl&FlagSF != 0) != (fl&FlagOF != 0)
	}
	return v != (c&1 != 0)
}

// getCC evaluates x86 condition c on the flags of frame f, without
// computing the flags it does not need for the common kinds.
func getCC(f *frame, c Cond) bool {
	op := f[CCOp]
	switch FlagKind(op & 0xff) {
	case FlagsSub:
		t := Type(op >> 8)
		m := t.Mask()
		a, b := f[CCA]&m, f[CCB]&m
		n := t.Bits()
		var v bool
		switch c &^ 1 {
		case CondB:
			v = a < b
		case CondE:
			v = a == b
		case CondBE:
			v = a <= b
		case CondL:
			v = sext(a, n) < sext(b, n)
		case CondLE:
			v = sext(a, n) <= sext(b, n)
		default:
			return condFromFlags(c, lazyFlags(op, f[CCA], f[CCB], f[CCR], f[CCC]))
		}
		return v != (c&1 != 0)
	case FlagsLogic:
		t := Type(op >> 8)
		r := f[CCR] & t.Mask()
		sn := r>>(t.Bits()-1) != 0
		var v bool
		switch c &^ 1 {
		case CondO, CondB:
			v = false
		case CondE, CondBE:
			v = r == 0
		case CondS, CondL:
			v = sn
		case CondLE:
			v = r == 0 || sn
		default:
			v = parity(r) != 0
		}
		return v != (c&1 != 0)
	}
	return condFromFlags(c, statusFlags(f))
}

// execFlags records the flag-setting operation FLAGS.k.t a, b, r, c in
// frame f, as mods.go defines it.
func execFlags(f *frame, k FlagKind, t Type, a, b, r, c uint64) {
	switch k {
	case FlagsNone:
		return
	case FlagsInc, FlagsDec:
		c = statusFlags(f) & FlagCF
	case FlagsShl, FlagsShr, FlagsSar:
		if b&t.Mask() == 0 {
			return
		}
	case FlagsRol, FlagsRor:
		b &= t.Mask()
		if b == 0 {
			return
		}
		m := t.Mask()
		n := uint(t.Bits())
		sign := uint64(1) << (n - 1)
		r &= m
		var cf, of bool
		if k == FlagsRol {
			cf = r&1 != 0
			of = (r&sign != 0) != cf
		} else {
			cf = r&sign != 0
			of = cf != (r>>(n-2)&1 != 0)
		}
		fl := getFlags(f) &^ (FlagCF | FlagOF)
		if cf {
			fl |= FlagCF
		}
		if of {
			fl |= FlagOF
		}
		f[RFLAGS] = fl
		f[CCOp] = 0
		return
	}
	f[CCOp] = CCOpValue(k, t)
	f[CCA], f[CCB], f[CCR], f[CCC] = a, b, r, c
}
