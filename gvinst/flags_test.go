package gvinst

import (
	"fmt"
	"math/big"
	"math/rand"
	"strings"
	"testing"
)

// refFlags is an independent model of the x86 status flags: it computes the
// result and flags of one operation with big integers and bit-at-a-time
// shifts, as the Intel SDM describes them (with gxbit's documented choices
// for the flags the SDM leaves undefined). prev is the flags before the
// operation, for the kinds that keep some of them.
func refFlags(k FlagKind, bits int, a, b, c, prev uint64) (r, fl uint64, defined uint64) {
	mask := uint64(1)<<uint(bits) - 1
	if bits == 64 {
		mask = ^uint64(0)
	}
	signBit := uint64(1) << uint(bits-1)
	a, b = a&mask, b&mask
	ua, ub := new(big.Int).SetUint64(a), new(big.Int).SetUint64(b)
	sval := func(x uint64) *big.Int {
		v := new(big.Int).SetUint64(x)
		if x&signBit != 0 {
			v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(bits)))
		}
		return v
	}
	umax := new(big.Int).SetUint64(mask)
	smin := new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), uint(bits-1)))
	smax := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(bits-1)), big.NewInt(1))
	outOfSigned := func(v *big.Int) bool { return v.Cmp(smin) < 0 || v.Cmp(smax) > 0 }
	var cf, of, af bool
	defined = FlagsArith
	zsp := true
	carryIn := int64(c & 1)
	switch k {
	case FlagsAdd, FlagsAdc:
		if k == FlagsAdd {
			carryIn = 0
		}
		sum := new(big.Int).Add(ua, ub)
		sum.Add(sum, big.NewInt(carryIn))
		cf = sum.Cmp(umax) > 0
		ss := new(big.Int).Add(sval(a), sval(b))
		ss.Add(ss, big.NewInt(carryIn))
		of = outOfSigned(ss)
		af = a&15+b&15+uint64(carryIn) > 15
		r = (a + b + uint64(carryIn)) & mask
	case FlagsSub, FlagsSbb:
		if k == FlagsSub {
			carryIn = 0
		}
		sub := new(big.Int).Add(ub, big.NewInt(carryIn))
		cf = ua.Cmp(sub) < 0
		sd := new(big.Int).Sub(sval(a), sval(b))
		sd.Sub(sd, big.NewInt(carryIn))
		of = outOfSigned(sd)
		af = a&15 < b&15+uint64(carryIn)
		r = (a - b - uint64(carryIn)) & mask
	case FlagsLogic:
		r = (a & b) & mask
	case FlagsInc:
		r = (a + 1) & mask
		cf = prev&FlagCF != 0
		of = a == signBit-1
		af = a&15 == 15
	case FlagsDec:
		r = (a - 1) & mask
		cf = prev&FlagCF != 0
		of = a == signBit
		af = a&15 == 0
	case FlagsNeg:
		r = -a & mask
		cf = a != 0
		of = a == signBit
		af = a&15 != 0
	case FlagsShl, FlagsShr, FlagsSar:
		if b == 0 {
			return a, prev & FlagsArith, FlagsArith
		}
		x := a
		for i := uint64(0); i < b; i++ {
			switch k {
			case FlagsShl:
				cf = x&signBit != 0
				x = x << 1 & mask
			case FlagsShr:
				cf = x&1 != 0
				x >>= 1
			default:
				cf = x&1 != 0
				x = x>>1 | x&signBit
			}
		}
		r = x
		switch k {
		case FlagsShl:
			of = (r&signBit != 0) != cf
		case FlagsShr:
			of = a&signBit != 0
		}
		defined &^= FlagAF
	case FlagsRol, FlagsRor:
		x := a
		for i := uint64(0); i < b%uint64(bits); i++ {
			if k == FlagsRol {
				x = (x<<1 | x>>uint(bits-1)) & mask
			} else {
				x = x>>1 | (x&1)<<uint(bits-1)
			}
		}
		r = x
		if b == 0 {
			return r, prev & FlagsArith, FlagsArith
		}
		if k == FlagsRol {
			cf = r&1 != 0
			of = (r&signBit != 0) != cf
		} else {
			cf = r&signBit != 0
			of = cf != (r&(signBit>>1) != 0)
		}
		zsp = false
		fl = prev & (FlagPF | FlagAF | FlagZF | FlagSF)
	case FlagsMul:
		// a and b are the factors here; the caller passes the high half.
		p := new(big.Int).Mul(ua, ub)
		r = new(big.Int).And(p, umax).Uint64()
		sp := new(big.Int).Mul(sval(a), sval(b))
		cf = p.Cmp(umax) > 0
		if c == 1 { // signed
			cf = outOfSigned(sp)
		}
		of = cf
		defined &^= FlagAF
	}
	if zsp {
		if r == 0 {
			fl |= FlagZF
		}
		if r&signBit != 0 {
			fl |= FlagSF
		}
		n := 0
		for i := 0; i < 8; i++ {
			n += int(r >> uint(i) & 1)
		}
		if n%2 == 0 {
			fl |= FlagPF
		}
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
	return r, fl, defined
}

// refCond evaluates an x86 condition from flags, as the SDM's Jcc table.
func refCond(c Cond, fl uint64) bool {
	cf, zf, sf, of, pf := fl&FlagCF != 0, fl&FlagZF != 0, fl&FlagSF != 0, fl&FlagOF != 0, fl&FlagPF != 0
	return map[Cond]bool{
		CondO: of, CondNO: !of, CondB: cf, CondAE: !cf, CondE: zf, CondNE: !zf,
		CondBE: cf || zf, CondA: !cf && !zf, CondS: sf, CondNS: !sf, CondP: pf, CondNP: !pf,
		CondL: sf != of, CondGE: sf == of, CondLE: zf || sf != of, CondG: !zf && sf == of,
	}[c]
}

// TestFlagsAgainstReference runs every FLAGS kind on every integer width
// with edge and random operands, then reads the flags back with GETFLAGS
// and with GETCC of every condition, on every engine (the optimized one
// turns many GETCCs into CMPs), and compares with refFlags.
func TestFlagsAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	widths := []Type{U8, U16, U32, U64}
	kinds := []FlagKind{FlagsAdd, FlagsSub, FlagsAdc, FlagsSbb, FlagsLogic, FlagsInc, FlagsDec, FlagsNeg, FlagsShl, FlagsShr, FlagsSar, FlagsRol, FlagsRor, FlagsMul}
	edge := []uint64{0, 1, 2, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff, 1 << 63, 1<<63 - 1, ^uint64(0), 0x0f, 0x10}
	for _, ty := range widths {
		bits := ty.Bits()
		mask := ty.Mask()
		for _, k := range kinds {
			var cases [][4]uint64 // a, b, c, prev flags
			for i := 0; i < 24; i++ {
				pick := func() uint64 {
					if rng.Intn(2) == 0 {
						return edge[rng.Intn(len(edge))] & mask
					}
					return rng.Uint64() & mask
				}
				a, b := pick(), pick()
				if i%4 == 0 {
					b = a
				}
				switch k {
				case FlagsShl, FlagsShr, FlagsSar, FlagsRol, FlagsRor:
					limit := bits
					if bits >= 32 {
						limit = bits - 1
					}
					b = uint64(rng.Intn(limit + 1))
				}
				prev := rng.Uint64() & FlagsArith
				cases = append(cases, [4]uint64{a, b, uint64(rng.Intn(2)), prev})
			}
			for _, cs := range cases {
				a, b, c, prev := cs[0], cs[1], cs[2], cs[3]
				var sig Type = ty
				fa, fb, fc := a, b, c
				r, want, defined := refFlags(k, bits, a, b, c, prev)
				switch k {
				case FlagsMul:
					// FLAGS.mul records the high half as a, the low as r.
					if c == 1 {
						sig = ty.WithSign(true)
						fa = mulHi(sig, a, b)
					} else {
						fa = mulHi(ty, a, b)
					}
				case FlagsInc, FlagsDec, FlagsNeg:
					fb, fc = a, a
				}
				var body strings.Builder
				body.WriteString(li("v0", fa) + li("v1", fb) + li("v2", r) + li("v3", fc) + li("v4", prev|FlagDF))
				body.WriteString("  SETFLAGS v4\n")
				fmt.Fprintf(&body, "  FLAGS.%s.%s v0, v1, v2, v3\n", k, sig)
				body.WriteString("  GETFLAGS v5\n  PUT.u64 fsbase, v5\n")
				for cond := Cond(0); cond < numConds; cond++ {
					fmt.Fprintf(&body, "  GETCC.%s v%d\n  PUT.u64 s%d, v%d\n", cond, 6+cond, cond, 6+cond)
				}
				for _, e := range allEngines() {
					m := newMachine(t, e, body.String())
					m.mustSyscall(t)
					got := m.cpu.State[FSBase]
					name := fmt.Sprintf("%s FLAGS.%s.%s a=%#x b=%#x c=%d prev=%#x", e.name, k, sig, a, b, c, prev)
					if got&defined != want&defined || got&FlagDF == 0 || got&2 == 0 {
						t.Errorf("%s: GETFLAGS = %#x, want %#x (mask %#x)", name, got, want, defined)
						continue
					}
					for cond := Cond(0); cond < numConds; cond++ {
						if (m.cpu.State[cond] != 0) != refCond(cond, want) || m.cpu.State[cond] > 1 {
							t.Errorf("%s: GETCC.%s = %d, flags %#x", name, cond, m.cpu.State[cond], got)
						}
					}
				}
			}
		}
	}
}
