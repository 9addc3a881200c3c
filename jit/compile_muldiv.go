package jit

import (
	"golang.org/x/sys/cpu"

	"github.com/gxbit/gxbit/gvinst"
)

// The wide multiplications and the divisions, and the bit counts. A
// division the host could fault on (#DE: a zero divisor, a quotient that
// does not fit) never reaches the host's div: its operands are checked
// first, and any doubt takes the callout, where the interpreter raises the
// guest's divide error with the state as it was before the instruction.

var (
	fmBsf    = form{op: []byte{0x0f, 0xbc}, digit: -1}               // bsf r, r/m
	fmBsr    = form{op: []byte{0x0f, 0xbd}, digit: -1}               // bsr r, r/m
	fmPopcnt = form{prefix: 0xf3, op: []byte{0x0f, 0xb8}, digit: -1} // popcnt r, r/m
)

// hasPOPCNT says whether the host has popcnt.
var hasPOPCNT = cpu.X86.HasPOPCNT

// mulDiv emits MULHI, DIV, REM, DIVW, REMW, CLZ, CTZ and POPC of the
// integer types.
func (c *compiler) mulDiv(idx int, in *gvinst.Inst) bool {
	a := &c.a
	t := in.Type
	if !t.IsInt() {
		return false
	}
	sz := t.Size()
	n := uint8(8 * sz)
	signed := t.IsSigned()
	var slow []int
	pre := c.cache // scratch loads change nothing in it
	finish := func(r reg) {
		a.extend(r, regOp(r), sz, false)
		c.put(in.Dst, r)
		if len(slow) > 0 {
			c.out.resume[idx] = a.pos()
			c.slowJump(idx, &pre, slow...)
		}
	}
	// src1 loads the second source (register or immediate) into rcx,
	// extended from t to 64 bits.
	src1 := func() {
		if in.HasImm {
			a.movImm(rcx, uint64(in.Imm))
		} else {
			c.srcTo(rcx, in.Src[1])
		}
		a.extend(rcx, regOp(rcx), sz, signed)
	}
	// zeroDivisor takes the callout when rcx is 0.
	zeroDivisor := func() {
		a.encode(mnTestMR, 8, rcx, regOp(rcx), 0)
		slow = append(slow, a.jcc(ccE))
	}
	// minOverMinusOne takes the callout when rax is min and rcx is -1.
	minOverMinusOne := func(min uint64) {
		a.encode(mnCmpMI8, 8, 0, regOp(rcx), -1)
		ok := a.jcc(ccNE)
		a.movImm(rdx, min)
		a.encode(mnCmpMR, 8, rdx, regOp(rax), 0)
		slow = append(slow, a.jcc(ccE))
		a.bind(ok, a.pos())
	}
	divide := func() {
		if signed {
			a.cqo()
			a.encodeForm(&fmIdivM, 8, 0, regOp(rcx), 0)
		} else {
			a.encode(mnXorMR, 4, rdx, regOp(rdx), 0)
			a.encodeForm(&fmDivM, 8, 0, regOp(rcx), 0)
		}
	}
	switch in.Op {
	case gvinst.OpMulHi:
		if sz == 8 {
			c.srcTo(rax, in.Src[0])
			if in.HasImm {
				a.movImm(rcx, uint64(in.Imm))
			} else {
				c.srcTo(rcx, in.Src[1])
			}
			f := &fmMulM
			if signed {
				f = &fmImulM
			}
			a.encodeForm(f, 8, 0, regOp(rcx), 0)
			finish(rdx)
			return true
		}
		// The 2t-bit product is exact in 64 bits; its high half is
		// bits t..2t-1.
		c.srcExt(rax, in.Src[0], sz, signed)
		src1()
		a.encode(mnImulRM, 8, rax, regOp(rcx), 0)
		a.shiftImm(5, rax, n)
		finish(rax)
		return true
	case gvinst.OpDiv, gvinst.OpRem:
		c.srcExt(rax, in.Src[0], sz, signed)
		src1()
		zeroDivisor()
		if signed {
			minOverMinusOne(^uint64(0) << (n - 1))
		}
		divide()
		if in.Op == gvinst.OpDiv {
			finish(rax)
		} else {
			finish(rdx)
		}
		return true
	case gvinst.OpDivW, gvinst.OpRemW:
		if sz == 8 {
			c.srcTo(rdx, in.Src[0])
			c.srcTo(rax, in.Src[1])
			c.srcTo(rcx, in.Src[2])
			zeroDivisor()
			if signed {
				// Only a dividend that is lo sign-extended (cqo; idiv):
				// its quotient fits unless it is min / -1.
				a.encode(mnMovMR, 8, rax, regOp(rsi), 0)
				a.shiftImm(7, rsi, 63)
				a.encode(mnCmpMR, 8, rdx, regOp(rsi), 0)
				slow = append(slow, a.jcc(ccNE))
				minOverMinusOne(1 << 63)
				a.encode(mnMovMR, 8, rax, regOp(rdx), 0)
				a.shiftImm(7, rdx, 63)
				a.encodeForm(&fmIdivM, 8, 0, regOp(rcx), 0)
			} else {
				// The quotient fits when hi < b.
				a.encode(mnCmpMR, 8, rcx, regOp(rdx), 0)
				slow = append(slow, a.jcc(ccAE))
				a.encodeForm(&fmDivM, 8, 0, regOp(rcx), 0)
			}
		} else {
			// The 2t-bit dividend hi:lo in 64 bits (sign-extended for
			// .sN), divided in 64 bits; a quotient wider than t takes
			// the callout.
			c.srcExt(rax, in.Src[0], sz, false)
			a.shiftImm(4, rax, n)
			c.srcExt(rcx, in.Src[1], sz, false)
			a.encode(mnOrMR, 8, rcx, regOp(rax), 0)
			if signed && 2*n < 64 {
				a.shiftImm(4, rax, 64-2*n)
				a.shiftImm(7, rax, 64-2*n)
			}
			c.srcExt(rcx, in.Src[2], sz, signed)
			zeroDivisor()
			if signed {
				minOverMinusOne(1 << 63)
			}
			divide()
			a.encode(mnMovMR, 8, rax, regOp(rsi), 0)
			if signed {
				a.extend(rsi, regOp(rsi), sz, true)
				a.encode(mnCmpMR, 8, rax, regOp(rsi), 0)
				slow = append(slow, a.jcc(ccNE))
			} else {
				a.shiftImm(5, rsi, n)
				slow = append(slow, a.jcc(ccNE))
			}
		}
		if in.Op == gvinst.OpDivW {
			finish(rax)
		} else {
			finish(rdx)
		}
		return true
	case gvinst.OpCtz:
		c.srcExt(rax, in.Src[0], sz, false)
		a.movImm(rcx, uint64(n))
		a.encodeForm(&fmBsf, 8, rax, regOp(rax), 0)
		a.cmov(ccE, rax, regOp(rcx))
		finish(rax)
		return true
	case gvinst.OpClz:
		// t-1 - the index of the top set bit, t for 0.
		c.srcExt(rax, in.Src[0], sz, false)
		a.encodeForm(&fmBsr, 8, rcx, regOp(rax), 0)
		a.movImm(rdx, ^uint64(0))
		a.cmov(ccE, rcx, regOp(rdx))
		a.movImm(rax, uint64(n-1))
		a.encode(mnSubMR, 8, rcx, regOp(rax), 0)
		finish(rax)
		return true
	case gvinst.OpPopc:
		if !hasPOPCNT {
			return false
		}
		c.srcExt(rax, in.Src[0], sz, false)
		a.encodeForm(&fmPopcnt, 8, rax, regOp(rax), 0)
		finish(rax)
		return true
	}
	return false
}
