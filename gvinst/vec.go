package gvinst

import (
	"fmt"
)

// The packed SSE ops, on 128-bit values held as two slots (low, high). The
// op's type is the lane type.

type v128 [2]uint64

func laneMask(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(n) - 1
}

// lane returns lane i of n bits.
func (v *v128) lane(i, n int) uint64 {
	bit := i * n
	return v[bit/64] >> uint(bit%64) & laneMask(n)
}

// setLane sets lane i of n bits to x's low n bits.
func (v *v128) setLane(i, n int, x uint64) {
	bit := i * n
	m := laneMask(n) << uint(bit%64)
	v[bit/64] = v[bit/64]&^m | x<<uint(bit%64)&m
}

func (v *v128) byteAt(i int) uint64 { return v.lane(i, 8) }

// execVec executes a packed op.
func execVec(f *frame, in *Inst) error {
	t := in.Type
	n := t.Bits()
	lanes := 0
	if n > 0 && n <= 64 {
		lanes = 128 / n
	}
	get := func(r Reg) v128 { return v128{f[uint16(r)], f[uint16(r+1)]} }
	a := get(in.Src[0])
	var b v128
	info := in.Op.Info()
	if len(info.Operands) > 2 {
		switch info.Operands[2] {
		case OpdSrc:
			b = get(in.Src[1])
		case OpdSrcImm:
			if in.HasImm {
				b = v128{uint64(in.Imm), 0}
			} else {
				b = v128{f[uint16(in.Src[1])], 0}
			}
		}
	}
	var d v128
	isF := t == F32 || t == F64
	signed := t.IsSigned()
	mx := f[MXCSR]
	var fl uint64 // SSE exception flags raised by the lanes
	switch in.Op {
	case OpVAdd, OpVSub, OpVMul, OpVDiv, OpVMin, OpVMax:
		op := scalarOf(in.Op)
		if !isF && op == OpDiv {
			return fmt.Errorf("integer VDIV: %w", errUnsupported)
		}
		for i := 0; i < lanes; i++ {
			x, y := a.lane(i, n), b.lane(i, n)
			var r, lf uint64
			switch {
			case isF && (op == OpMin || op == OpMax):
				r, lf = sseMinMax(op, t, x, y, mx)
			case isF:
				r, lf = sseArith(op, t, x, y, mx)
			default:
				r, _ = intBinary(op, t, x, y)
			}
			fl |= lf
			d.setLane(i, n, r)
		}
	case OpVSqrt, OpVAbs, OpVRound:
		for i := 0; i < lanes; i++ {
			x := a.lane(i, n)
			var r, lf uint64
			switch {
			case in.Op == OpVRound:
				r, lf = sseRound(t, x, resolveRounding(Rounding(in.Mod), f), mx)
			case isF && in.Op == OpVSqrt:
				r, lf = sseArith(OpSqrt, t, x, 0, mx)
			case isF:
				r = floatUnary(OpAbs, t, x)
			case in.Op == OpVAbs:
				r = intUnary(OpAbs, t, x)
			default:
				return fmt.Errorf("integer VSQRT: %w", errUnsupported)
			}
			fl |= lf
			d.setLane(i, n, r)
		}
	case OpVAnd:
		d = v128{a[0] & b[0], a[1] & b[1]}
	case OpVOr:
		d = v128{a[0] | b[0], a[1] | b[1]}
	case OpVXor:
		d = v128{a[0] ^ b[0], a[1] ^ b[1]}
	case OpVAndN:
		d = v128{^a[0] & b[0], ^a[1] & b[1]}
	case OpVAddSat, OpVSubSat:
		for i := 0; i < lanes; i++ {
			x, y := a.lane(i, n), b.lane(i, n)
			var r int64
			if signed {
				sx, sy := sext(x, n), sext(y, n)
				if in.Op == OpVAddSat {
					r = sx + sy
				} else {
					r = sx - sy
				}
				r = clamp(r, -(1 << (n - 1)), 1<<(n-1)-1)
			} else {
				if in.Op == OpVAddSat {
					r = int64(x + y)
				} else {
					r = int64(x) - int64(y)
				}
				r = clamp(r, 0, 1<<n-1)
			}
			d.setLane(i, n, uint64(r))
		}
	case OpVAvg:
		for i := 0; i < lanes; i++ {
			d.setLane(i, n, (a.lane(i, n)+b.lane(i, n)+1)>>1)
		}
	case OpVMulHi:
		for i := 0; i < lanes; i++ {
			d.setLane(i, n, mulHi(t, a.lane(i, n), b.lane(i, n)))
		}
	case OpVMulW:
		for i := 0; i < 2; i++ {
			x, y := a.lane(2*i, 32), b.lane(2*i, 32)
			if signed {
				d[i] = uint64(sext(x, 32) * sext(y, 32))
			} else {
				d[i] = x * y
			}
		}
	case OpVMaddW:
		for i := 0; i < 4; i++ {
			p := sext(a.lane(2*i, 16), 16)*sext(b.lane(2*i, 16), 16) + sext(a.lane(2*i+1, 16), 16)*sext(b.lane(2*i+1, 16), 16)
			d.setLane(i, 32, uint64(p))
		}
	case OpVSad:
		for h := 0; h < 2; h++ {
			var s uint64
			for i := 0; i < 8; i++ {
				x, y := a.byteAt(8*h+i), b.byteAt(8*h+i)
				if x > y {
					s += x - y
				} else {
					s += y - x
				}
			}
			d[h] = s
		}
	case OpVHAdd, OpVHSub:
		op := OpAdd
		if in.Op == OpVHSub {
			op = OpSub
		}
		for i := 0; i < lanes; i++ {
			src := &a
			j := i
			if i >= lanes/2 {
				src, j = &b, i-lanes/2
			}
			x, y := src.lane(2*j, n), src.lane(2*j+1, n)
			var r uint64
			if isF {
				var lf uint64
				r, lf = sseArith(op, t, x, y, mx)
				fl |= lf
			} else {
				r, _ = intBinary(op, t, x, y)
			}
			d.setLane(i, n, r)
		}
	case OpVSign:
		for i := 0; i < lanes; i++ {
			x, y := a.lane(i, n), sext(b.lane(i, n), n)
			switch {
			case y < 0:
				x = -x
			case y == 0:
				x = 0
			}
			d.setLane(i, n, x)
		}
	case OpVCmp:
		for i := 0; i < lanes; i++ {
			x, y := a.lane(i, n), b.lane(i, n)
			var ok bool
			if isF {
				var lf uint64
				ok, lf = sseCmp(Cmp(in.Mod), t, x, y, mx)
				fl |= lf
			} else {
				ok = cmpInt(Cmp(in.Mod), t, x, y)
			}
			if ok {
				d.setLane(i, n, ^uint64(0))
			}
		}
	case OpVShl, OpVShr, OpVSar:
		cnt := b[0]
		for i := 0; i < lanes; i++ {
			x := a.lane(i, n)
			var r uint64
			switch {
			case in.Op == OpVSar:
				c := cnt
				if c >= uint64(n) {
					c = uint64(n - 1)
				}
				r = uint64(sext(x, n) >> c)
			case cnt >= uint64(n):
				r = 0
			case in.Op == OpVShl:
				r = x << cnt
			default:
				r = x >> cnt
			}
			d.setLane(i, n, r)
		}
	case OpVBShl, OpVBShr:
		k := int(uint64(in.Imm))
		if uint64(in.Imm) > 16 {
			k = 16
		}
		for i := 0; i < 16; i++ {
			j := i - k
			if in.Op == OpVBShr {
				j = i + k
			}
			if j >= 0 && j < 16 {
				d.setLane(i, 8, a.byteAt(j))
			}
		}
	case OpVPackSS, OpVPackUS:
		if !signed || (n != 16 && n != 32) {
			return fmt.Errorf("%s.%s: %w", info.Name, t, errUnsupported)
		}
		h := n / 2
		lo, hi := -(int64(1) << (h - 1)), int64(1)<<(h-1)-1
		if in.Op == OpVPackUS {
			lo, hi = 0, 1<<h-1
		}
		for i := 0; i < lanes; i++ {
			d.setLane(i, h, uint64(clamp(sext(a.lane(i, n), n), lo, hi)))
			d.setLane(lanes+i, h, uint64(clamp(sext(b.lane(i, n), n), lo, hi)))
		}
	case OpVUnpackL, OpVUnpackH:
		off := 0
		if in.Op == OpVUnpackH {
			off = lanes / 2
		}
		for i := 0; i < lanes/2; i++ {
			d.setLane(2*i, n, a.lane(off+i, n))
			d.setLane(2*i+1, n, b.lane(off+i, n))
		}
	case OpVPerm:
		imm := uint64(in.Imm)
		for i := 0; i < lanes; i++ {
			d.setLane(i, n, a.lane(int(imm>>(2*uint(i)%64)&3)%lanes, n))
		}
	case OpVPermLo, OpVPermHi:
		imm := uint64(in.Imm)
		d = a
		base := 0
		if in.Op == OpVPermHi {
			base = 4
		}
		for i := 0; i < 4; i++ {
			d.setLane(base+i, 16, a.lane(base+int(imm>>(2*uint(i))&3), 16))
		}
	case OpVShufP:
		imm := uint64(in.Imm)
		if n == 32 {
			d.setLane(0, 32, a.lane(int(imm&3), 32))
			d.setLane(1, 32, a.lane(int(imm>>2&3), 32))
			d.setLane(2, 32, b.lane(int(imm>>4&3), 32))
			d.setLane(3, 32, b.lane(int(imm>>6&3), 32))
		} else {
			d[0] = a[imm&1]
			d[1] = b[imm>>1&1]
		}
	case OpVShufB:
		for i := 0; i < 16; i++ {
			s := b.byteAt(i)
			if s&0x80 == 0 {
				d.setLane(i, 8, a.byteAt(int(s&15)))
			}
		}
	case OpVAlignR:
		k := uint64(in.Imm)
		for i := 0; i < 16; i++ {
			j := k + uint64(i)
			switch {
			case j < 16:
				d.setLane(i, 8, b.byteAt(int(j)))
			case j < 32:
				d.setLane(i, 8, a.byteAt(int(j-16)))
			}
		}
	case OpVBlend:
		imm := uint64(in.Imm)
		for i := 0; i < lanes; i++ {
			if imm>>uint(i)&1 != 0 {
				d.setLane(i, n, b.lane(i, n))
			} else {
				d.setLane(i, n, a.lane(i, n))
			}
		}
	case OpVBlendV:
		m := get(in.Src[2])
		for i := 0; i < lanes; i++ {
			if m.lane(i, n)>>uint(n-1)&1 != 0 {
				d.setLane(i, n, b.lane(i, n))
			} else {
				d.setLane(i, n, a.lane(i, n))
			}
		}
	case OpVMovMsk:
		var r uint64
		for i := 0; i < lanes; i++ {
			r |= a.lane(i, n) >> uint(n-1) << uint(i)
		}
		f[uint16(in.Dst)] = r
		return nil
	case OpVExtract:
		f[uint16(in.Dst)] = a.lane(int(uint64(in.Imm)%uint64(lanes)), n)
		return nil
	case OpVInsert:
		d = a
		d.setLane(int(uint64(in.Imm)%uint64(lanes)), n, f[uint16(in.Src[1])])
	case OpVCvt:
		s := in.SrcType
		cnt := min(lanes, 128/s.Bits())
		r := resolveRounding(Rounding(in.Mod), f)
		sse := isSSEFloat(in)
		for i := 0; i < cnt; i++ {
			x := a.lane(i, s.Bits())
			if !sse {
				d.setLane(i, n, convert(t, s, x, r))
				continue
			}
			v, lf := sseConvert(t, s, x, r, mx)
			fl |= lf
			d.setLane(i, n, v)
		}
	case OpVExt:
		s := in.SrcType
		for i := 0; i < lanes; i++ {
			d.setLane(i, n, intConvert(t, s, a.lane(i, s.Bits())))
		}
	case OpVPcmpStr:
		d = pcmpStr(t, a, b, get(in.Src[2]), uint64(in.Imm))
	default:
		return fmt.Errorf("%s: %w", info.Name, errUnsupported)
	}
	if fl != 0 {
		f[MXCSR] = mx | fl
		if unmaskedSSE(fl, mx) {
			return fmt.Errorf("%w: MXCSR %#x", errSSEUnmasked, mx|fl)
		}
	}
	f[uint16(in.Dst)], f[uint16(in.Dst+1)] = d[0], d[1]
	return nil
}

func clamp(x, lo, hi int64) int64 {
	if x < lo {
		return lo
	}
	if x > hi {
		return hi
	}
	return x
}

// pcmpStr is VPCMPSTR.t: the SSE4.2 string comparison of a and b with valid
// lane counts lens[0] and lens[1], controlled by imm, as ops.go defines it.
func pcmpStr(t Type, a, b, lens v128, imm uint64) v128 {
	n := t.Bits()
	cnt := 128 / n
	la, lb := int(min(lens[0], uint64(cnt))), int(min(lens[1], uint64(cnt)))
	signed := t.IsSigned()
	val := func(v *v128, i int) int64 {
		x := v.lane(i, n)
		if signed {
			return sext(x, n)
		}
		return int64(x)
	}
	var res uint64
	for j := 0; j < cnt; j++ {
		var bit bool
		switch imm >> 2 & 3 {
		case 0: // equal any
			for i := 0; i < la && j < lb && !bit; i++ {
				bit = val(&a, i) == val(&b, j)
			}
		case 1: // ranges
			for i := 0; i+1 < la && j < lb && !bit; i += 2 {
				bit = val(&a, i) <= val(&b, j) && val(&b, j) <= val(&a, i+1)
			}
		case 2: // equal each
			switch {
			case j < la && j < lb:
				bit = val(&a, j) == val(&b, j)
			case j >= la && j >= lb:
				bit = true
			}
		case 3: // equal ordered
			bit = true
			for i := 0; i < cnt-j && bit; i++ {
				bit = i >= la || (j+i < lb && val(&a, i) == val(&b, j+i))
			}
		}
		if bit {
			res |= 1 << uint(j)
		}
	}
	switch imm >> 4 & 3 {
	case 1:
		res ^= 1<<uint(cnt) - 1
	case 3:
		res ^= 1<<uint(lb) - 1
	}
	if imm>>6&1 == 0 {
		return v128{res, 0}
	}
	var d v128
	for j := 0; j < cnt; j++ {
		if res>>uint(j)&1 != 0 {
			d.setLane(j, n, ^uint64(0))
		}
	}
	return d
}

// scalarOf is the scalar op a lane-wise arithmetic op applies to each lane.
func scalarOf(op Op) Op {
	switch op {
	case OpVAdd:
		return OpAdd
	case OpVSub:
		return OpSub
	case OpVMul:
		return OpMul
	case OpVDiv:
		return OpDiv
	case OpVMin:
		return OpMin
	}
	return OpMax
}

// cmpEqBytes is VCMP.eq.u8 on one 64-bit half: 0xff in each byte where x
// and y agree, 0 elsewhere.
func cmpEqBytes(x, y uint64) uint64 {
	const lo7 = 0x7f7f7f7f7f7f7f7f
	d := x ^ y
	nz := (d&lo7 + lo7) | d // high bit of each byte set where the byte is non-zero
	return (^nz & 0x8080808080808080 >> 7) * 0xff
}

// byteSigns packs the top bit of each byte of x into the low 8 bits.
func byteSigns(x uint64) uint64 {
	return (x & 0x8080808080808080 >> 7) * 0x0102040810204080 >> 56
}
