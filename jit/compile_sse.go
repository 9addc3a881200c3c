package jit

import (
	"golang.org/x/sys/cpu"

	"github.com/gxbit/gxbit/gvinst"
)

// The packed SSE operations compiled to the host's own: each loads its
// 128-bit operands from the frame into xmm0 and xmm1 (movdqu: frame slots
// are 8-byte aligned), applies the host instruction whose lane semantics
// are the op's (gvinst/vec.go), and stores xmm0 back. Float forms run
// under the guest's MXCSR and first check, as float() does, that the
// guest masks every exception.

// sse is an SSE instruction form of the table below: 66 0F (or 0F, for
// the ps forms) and the opcode bytes.
func sse(prefix byte, op ...byte) form {
	return form{prefix: prefix, op: append([]byte{0x0f}, op...), digit: -1}
}

// sseImm is sse with an immediate byte.
func sseImm(prefix byte, op ...byte) form {
	f := sse(prefix, op...)
	f.imm = 1
	return f
}

// vecKey names an op on a lane type.
type vecKey struct {
	op gvinst.Op
	t  gvinst.Type
}

// vecForms are the lane-wise integer and bitwise ops whose host
// instruction computes the op exactly (xmm0 = a op xmm1 = b).
var vecForms = func() map[vecKey]form {
	m := map[vecKey]form{}
	ints := func(op gvinst.Op, f form, ts ...gvinst.Type) {
		for _, t := range ts {
			m[vecKey{op, t}] = f
		}
	}
	const p = 0x66
	u8, s8, u16, s16, u32, s32, u64, s64 := gvinst.U8, gvinst.S8, gvinst.U16, gvinst.S16, gvinst.U32, gvinst.S32, gvinst.U64, gvinst.S64
	// The bitwise ops take any type, but only .b128 is a 128-bit result
	// (the lifter's form); the others stay callouts.
	ints(gvinst.OpVAnd, sse(p, 0xdb), gvinst.B128)
	ints(gvinst.OpVAndN, sse(p, 0xdf), gvinst.B128)
	ints(gvinst.OpVOr, sse(p, 0xeb), gvinst.B128)
	ints(gvinst.OpVXor, sse(p, 0xef), gvinst.B128)
	ints(gvinst.OpVAdd, sse(p, 0xfc), u8, s8)
	ints(gvinst.OpVAdd, sse(p, 0xfd), u16, s16)
	ints(gvinst.OpVAdd, sse(p, 0xfe), u32, s32)
	ints(gvinst.OpVAdd, sse(p, 0xd4), u64, s64)
	ints(gvinst.OpVSub, sse(p, 0xf8), u8, s8)
	ints(gvinst.OpVSub, sse(p, 0xf9), u16, s16)
	ints(gvinst.OpVSub, sse(p, 0xfa), u32, s32)
	ints(gvinst.OpVSub, sse(p, 0xfb), u64, s64)
	ints(gvinst.OpVMul, sse(p, 0xd5), u16, s16)
	ints(gvinst.OpVMin, sse(p, 0xda), u8)
	ints(gvinst.OpVMax, sse(p, 0xde), u8)
	ints(gvinst.OpVMin, sse(p, 0xea), s16)
	ints(gvinst.OpVMax, sse(p, 0xee), s16)
	ints(gvinst.OpVUnpackL, sse(p, 0x60), u8, s8)
	ints(gvinst.OpVUnpackL, sse(p, 0x61), u16, s16)
	ints(gvinst.OpVUnpackL, sse(p, 0x62), u32, s32, gvinst.F32)
	ints(gvinst.OpVUnpackL, sse(p, 0x6c), u64, s64, gvinst.F64)
	ints(gvinst.OpVUnpackH, sse(p, 0x68), u8, s8)
	ints(gvinst.OpVUnpackH, sse(p, 0x69), u16, s16)
	ints(gvinst.OpVUnpackH, sse(p, 0x6a), u32, s32, gvinst.F32)
	ints(gvinst.OpVUnpackH, sse(p, 0x6d), u64, s64, gvinst.F64)
	return m
}()

// vecFloatForms are the packed float ops (addps/addpd …), exact under the
// guest's MXCSR as the scalar ones are.
var vecFloatForms = map[vecKey]form{
	{gvinst.OpVAdd, gvinst.F32}: sse(0, 0x58), {gvinst.OpVAdd, gvinst.F64}: sse(0x66, 0x58),
	{gvinst.OpVMul, gvinst.F32}: sse(0, 0x59), {gvinst.OpVMul, gvinst.F64}: sse(0x66, 0x59),
	{gvinst.OpVSub, gvinst.F32}: sse(0, 0x5c), {gvinst.OpVSub, gvinst.F64}: sse(0x66, 0x5c),
	{gvinst.OpVDiv, gvinst.F32}: sse(0, 0x5e), {gvinst.OpVDiv, gvinst.F64}: sse(0x66, 0x5e),
	{gvinst.OpVMin, gvinst.F32}: sse(0, 0x5d), {gvinst.OpVMin, gvinst.F64}: sse(0x66, 0x5d),
	{gvinst.OpVMax, gvinst.F32}: sse(0, 0x5f), {gvinst.OpVMax, gvinst.F64}: sse(0x66, 0x5f),
	{gvinst.OpVSqrt, gvinst.F32}: sse(0, 0x51), {gvinst.OpVSqrt, gvinst.F64}: sse(0x66, 0x51),
}

// scalarMinMax are MIN and MAX of .f32 and .f64 (minss/minsd …: b when
// either is a NaN or both are zeros, as the op says).
var scalarMinMax = map[vecKey]form{
	{gvinst.OpMin, gvinst.F32}: sse(0xf3, 0x5d), {gvinst.OpMin, gvinst.F64}: sse(0xf2, 0x5d),
	{gvinst.OpMax, gvinst.F32}: sse(0xf3, 0x5f), {gvinst.OpMax, gvinst.F64}: sse(0xf2, 0x5f),
}

var (
	fmPcmpeqb    = sse(0x66, 0x74)
	fmPcmpeqw    = sse(0x66, 0x75)
	fmPcmpeqd    = sse(0x66, 0x76)
	fmPcmpgtb    = sse(0x66, 0x64)
	fmPcmpgtw    = sse(0x66, 0x65)
	fmPcmpgtd    = sse(0x66, 0x66)
	fmPmovmskb   = sse(0x66, 0xd7)    // pmovmskb r32, xmm
	fmMovmskps   = sse(0, 0x50)       // movmskps r32, xmm
	fmMovmskpd   = sse(0x66, 0x50)    // movmskpd r32, xmm
	fmPshufd     = sseImm(0x66, 0x70) // pshufd xmm, xmm, imm8
	fmShufps     = sseImm(0, 0xc6)    // shufps xmm, xmm, imm8
	fmShufpd     = sseImm(0x66, 0xc6) // shufpd xmm, xmm, imm8
	fmPshufb     = sse(0x66, 0x38, 0x00)
	fmPalignr    = sseImm(0x66, 0x3a, 0x0f)
	fmPunpcklqdq = sse(0x66, 0x6c)
	fmPunpckhqdq = sse(0x66, 0x6d)
)

// vecCvtKey names a packed conversion: to lanes of t from lanes of s,
// rounded as r says.
type vecCvtKey struct {
	t, s gvinst.Type
	r    gvinst.Rounding
}

// vecConversions are the packed conversions whose host instruction is
// VCVT's semantics (gvinst/vec.go: as many lanes as the narrower count,
// the rest zero; NaNs and overflows to the integer indefinite), under the
// guest's MXCSR (dyn) or truncating (rz).
var vecConversions = map[vecCvtKey]form{
	{gvinst.F32, gvinst.S32, gvinst.RoundMXCSR}: sse(0, 0x5b),    // cvtdq2ps
	{gvinst.S32, gvinst.F32, gvinst.RoundMXCSR}: sse(0x66, 0x5b), // cvtps2dq
	{gvinst.S32, gvinst.F32, gvinst.RoundZero}:  sse(0xf3, 0x5b), // cvttps2dq
	{gvinst.F64, gvinst.S32, gvinst.RoundMXCSR}: sse(0xf3, 0xe6), // cvtdq2pd
	{gvinst.S32, gvinst.F64, gvinst.RoundMXCSR}: sse(0xf2, 0xe6), // cvtpd2dq
	{gvinst.S32, gvinst.F64, gvinst.RoundZero}:  sse(0x66, 0xe6), // cvttpd2dq
	{gvinst.F64, gvinst.F32, gvinst.RoundMXCSR}: sse(0, 0x5a),    // cvtps2pd
	{gvinst.F32, gvinst.F64, gvinst.RoundMXCSR}: sse(0x66, 0x5a), // cvtpd2ps
}

// hasSSSE3 says whether the host has pshufb and palignr.
var hasSSSE3 = cpu.X86.HasSSSE3

// xmmTemp is the xmm register loadX and storeX use besides theirs.
const xmmTemp = reg(7)

// loadX loads the 128-bit value of slots r, r+1 into xmm register x,
// through the register cache.
func (c *compiler) loadX(x reg, r gvinst.Reg) {
	a := &c.a
	a.encode(mnMovqXR, 4, x, c.operand(r), 0)
	a.encode(mnMovqXR, 4, xmmTemp, c.operand(r+1), 0)
	a.encodeForm(&fmPunpcklqdq, 4, x, regOp(xmmTemp), 0)
}

// storeX makes xmm register x the new value of slots r, r+1 (clobbers x
// and rax).
func (c *compiler) storeX(r gvinst.Reg, x reg) {
	a := &c.a
	a.encode(mnMovqRX, 4, x, regOp(rax), 0)
	c.put(r, rax)
	a.encodeForm(&fmPunpckhqdq, 4, x, regOp(x), 0)
	a.encode(mnMovqRX, 4, x, regOp(rax), 0)
	c.put(r+1, rax)
}

// vecOp emits the packed ops of the tables above, VCMP eq and signed gt
// and lt of integers, VMOVMSK, VPERM.u32 (pshufd), VSHUFP (shufps,
// shufpd), the packed conversions of vecConversions, VSHUFB and VALIGNR
// (where the host has SSSE3), and scalar MIN and MAX.
func (c *compiler) vecOp(idx int, in *gvinst.Inst) bool {
	a := &c.a
	t := in.Type
	k := vecKey{in.Op, t}
	if f, ok := scalarMinMax[k]; ok && !in.HasImm {
		pre := c.cache
		j := c.checkMasked()
		c.loadF(0, in.Src[0], t == gvinst.F64)
		c.loadF(1, in.Src[1], t == gvinst.F64)
		a.encodeForm(&f, 4, 0, regOp(1), 0)
		c.putF(in.Dst, 0, t == gvinst.F64)
		c.out.resume[idx] = a.pos()
		c.slowJump(idx, &pre, j)
		return true
	}
	if f, ok := vecForms[k]; ok {
		c.loadX(0, in.Src[0])
		c.loadX(1, in.Src[1])
		a.encodeForm(&f, 4, 0, regOp(1), 0)
		c.storeX(in.Dst, 0)
		return true
	}
	if f, ok := vecFloatForms[k]; ok {
		pre := c.cache
		j := c.checkMasked()
		c.loadX(0, in.Src[0])
		if in.Op == gvinst.OpVSqrt {
			a.encodeForm(&f, 4, 0, regOp(0), 0)
		} else {
			c.loadX(1, in.Src[1])
			a.encodeForm(&f, 4, 0, regOp(1), 0)
		}
		c.storeX(in.Dst, 0)
		c.out.resume[idx] = a.pos()
		c.slowJump(idx, &pre, j)
		return true
	}
	switch in.Op {
	case gvinst.OpVCmp:
		var eq, gt *form
		switch t {
		case gvinst.U8, gvinst.S8:
			eq, gt = &fmPcmpeqb, &fmPcmpgtb
		case gvinst.U16, gvinst.S16:
			eq, gt = &fmPcmpeqw, &fmPcmpgtw
		case gvinst.U32, gvinst.S32:
			eq, gt = &fmPcmpeqd, &fmPcmpgtd
		default:
			return false
		}
		x, y := in.Src[0], in.Src[1]
		f := eq
		switch gvinst.Cmp(in.Mod) {
		case gvinst.CmpEq:
		case gvinst.CmpGt, gvinst.CmpLt:
			if !t.IsSigned() {
				return false
			}
			f = gt
			if gvinst.Cmp(in.Mod) == gvinst.CmpLt {
				x, y = y, x
			}
		default:
			return false
		}
		c.loadX(0, x)
		c.loadX(1, y)
		a.encodeForm(f, 4, 0, regOp(1), 0)
		c.storeX(in.Dst, 0)
		return true
	case gvinst.OpVMovMsk:
		f := &fmPmovmskb
		switch t.Size() {
		case 1:
		case 4:
			f = &fmMovmskps
		case 8:
			f = &fmMovmskpd
		default:
			return false
		}
		c.loadX(0, in.Src[0])
		a.encodeForm(f, 4, rax, regOp(0), 0)
		c.put(in.Dst, rax)
		return true
	case gvinst.OpVPerm:
		if t.Size() != 4 || in.Imm < 0 || in.Imm > 0xff {
			return false
		}
		c.loadX(1, in.Src[0])
		a.encodeForm(&fmPshufd, 4, 0, regOp(1), in.Imm)
		c.storeX(in.Dst, 0)
		return true
	case gvinst.OpVCvt:
		f, ok := vecConversions[vecCvtKey{t, in.SrcType, gvinst.Rounding(in.Mod)}]
		if !ok {
			return false
		}
		pre := c.cache
		j := c.checkMasked()
		c.loadX(1, in.Src[0])
		a.encodeForm(&f, 4, 0, regOp(1), 0)
		c.storeX(in.Dst, 0)
		c.out.resume[idx] = a.pos()
		c.slowJump(idx, &pre, j)
		return true
	case gvinst.OpVShufP:
		// A shuffle: no float exceptions, so no check.
		f := &fmShufps
		switch {
		case t.Size() == 8:
			f = &fmShufpd
		case t.Size() != 4:
			return false
		}
		if in.Imm < 0 || in.Imm > 0xff {
			return false
		}
		c.loadX(0, in.Src[0])
		c.loadX(1, in.Src[1])
		a.encodeForm(f, 4, 0, regOp(1), in.Imm)
		c.storeX(in.Dst, 0)
		return true
	case gvinst.OpVShufB:
		if !hasSSSE3 {
			return false
		}
		c.loadX(0, in.Src[0])
		c.loadX(1, in.Src[1])
		a.encodeForm(&fmPshufb, 4, 0, regOp(1), 0)
		c.storeX(in.Dst, 0)
		return true
	case gvinst.OpVAlignR:
		if !hasSSSE3 || in.Imm < 0 || in.Imm > 0xff {
			return false
		}
		c.loadX(0, in.Src[0])
		c.loadX(1, in.Src[1])
		a.encodeForm(&fmPalignr, 4, 0, regOp(1), in.Imm)
		c.storeX(in.Dst, 0)
		return true
	}
	return false
}
