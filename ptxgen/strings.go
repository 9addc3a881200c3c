package ptxgen

import (
	"fmt"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptx"
)

// String ops in kernels: REPSTOS (rep stos, and memset inlined by phase 1
// and 2, profile.InlineCall) stores rcx elements of rax from rdi up;
// REPMOVS (rep movs, and memcpy inlined the same way) copies rcx elements
// from rsi to rdi, upward. Each is one store site (and REPMOVS a load site
// too) whose footprint is the whole run of elements. A kernel assumes the
// direction flag clear (the runtime checks it before a launch); where a
// copy's source and destination overlap, a forward copy is not what the
// CPU does (an inlined memcpy copies as memmove), so the thread fails the
// launch with ErrCodeOverlap and the CPU runs the loop.

// isStringOp reports whether op is a string op a kernel lowers.
func isStringOp(op gvinst.Op) bool { return op == gvinst.OpRepStos || op == gvinst.OpRepMovs }

// stringRegs returns the guest registers string op in reads and those it
// writes (all of them left advanced), or nil for other ops.
func stringRegs(in *gvinst.Inst) (reads, writes []gvinst.Reg) {
	switch in.Op {
	case gvinst.OpRepStos:
		return []gvinst.Reg{gvinst.S0, gvinst.SReg(1), gvinst.SReg(7)}, []gvinst.Reg{gvinst.SReg(1), gvinst.SReg(7)}
	case gvinst.OpRepMovs:
		return []gvinst.Reg{gvinst.SReg(1), gvinst.SReg(6), gvinst.SReg(7)}, []gvinst.Reg{gvinst.SReg(1), gvinst.SReg(6), gvinst.SReg(7)}
	}
	return nil, nil
}

// repMovs lowers REPMOVS at index idx of block: after the overlap check,
// element by element, each load and store checked against its site; a
// byte copy whose source and destination are equally aligned modulo 8
// copies 8-byte words from the first aligned byte on (a row copy's bulk),
// each word's first and last byte checked.
func (e *emitter) repMovs(block uint64, idx int, in *gvinst.Inst) {
	dst := e.a.siteAt[key(block, idx)]
	src := e.a.copyFrom[key(block, idx)]
	size := in.Type.Size()
	n := fmt.Sprintf("%d_%d", idx, block)
	rcx, rsi, rdi := e.reg(gvinst.SReg(1)), e.reg(gvinst.SReg(6)), e.reg(gvinst.SReg(7))
	// The bytes [rsi, rsi+len) and [rdi, rdi+len) overlap when either
	// start is less than len past the other.
	bytes, d, p, q := e.t(), e.t(), e.pred(), e.pred()
	e.i("mul.lo.u64", bytes, rcx, size)
	e.i("sub.u64", d, rdi, rsi)
	e.i("setp.lt.u64", p, d, bytes)
	e.i("sub.u64", d, rsi, rdi)
	e.i("setp.lt.u64", q, d, bytes)
	e.i("or.pred", p, p, q)
	e.i("mov.b64", "%xa", lit(in.X86))
	e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeOverlap)).when(p)
	elems := fmt.Sprintf("$Lmovs%s", n)
	end := elems + "_end"
	// copy copies one element of sz bytes (checking its first and, for a
	// word, its last byte against the sites) and moves the registers on
	// by count elements.
	copy := func(sz int, count int) {
		from, to, v := e.t(), e.t(), e.t()
		e.i("mov.b64", from, rsi)
		if sz > size {
			last := e.t()
			e.i("add.u64", last, rsi, sz-1)
			e.siteCheck(src, last, 1, in.X86)
			e.i("add.u64", last, rdi, sz-1)
			e.siteCheck(dst, last, 1, in.X86)
			e.siteCheck(src, from, 1, in.X86)
		} else {
			e.siteCheck(src, from, sz, in.X86)
		}
		e.load(v, ptx.Addr(from, 0), sz)
		e.i("mov.b64", to, rdi)
		if sz > size {
			e.siteCheck(dst, to, 1, in.X86)
		} else {
			e.siteCheck(dst, to, sz, in.X86)
		}
		e.store(ptx.Addr(to, 0), v, sz)
		e.i("add.u64", rsi, rsi, sz)
		e.i("add.u64", rdi, rdi, sz)
		e.i("sub.u64", rcx, rcx, count)
	}
	if size == 1 {
		head, words := elems+"_head", elems+"_words"
		x := e.t()
		e.i("xor.b64", x, rsi, rdi)
		e.i("and.b64", x, x, 7)
		e.i("setp.ne.u64", p, x, 0)
		e.i("bra", elems).when(p)
		// Bytes up to rdi's first 8-byte boundary, then words.
		e.label(head)
		e.i("setp.eq.u64", p, rcx, 0)
		e.i("bra", end).when(p)
		e.i("and.b64", x, rdi, 7)
		e.i("setp.eq.u64", p, x, 0)
		e.i("bra", words).when(p)
		copy(1, 1)
		e.i("bra", head)
		e.label(words)
		e.i("setp.lt.u64", p, rcx, 8)
		e.i("bra", elems).when(p)
		copy(8, 8)
		e.i("bra", words)
	}
	e.label(elems)
	e.i("setp.eq.u64", p, rcx, 0)
	e.i("bra", end).when(p)
	copy(size, 1)
	e.i("bra", elems)
	e.label(end)
}

// repStos lowers REPSTOS as a loop storing rax's low bytes to rcx
// elements at rdi, upward (the runtime checks the direction flag); a byte
// store (an inlined memset) stores 8-byte words of the byte repeated
// from rdi's first 8-byte boundary on, each word's first and last byte
// checked against the site.
func (e *emitter) repStos(block uint64, idx int, in *gvinst.Inst) {
	id := e.a.siteAt[key(block, idx)]
	size := in.Type.Size()
	n := fmt.Sprintf("%d_%d", idx, block)
	rcx, rdi, rax := e.reg(gvinst.SReg(1)), e.reg(gvinst.SReg(7)), e.reg(gvinst.S0)
	if e.a.n.Dead[[2]uint64{block, uint64(idx)}] {
		// Overwritten before read (Nest.Dead): only the registers move.
		e.comment(" rep stos: its bytes are overwritten later in the iteration")
		e.i("mad.lo.u64", rdi, rcx, size, rdi)
		e.i("mov.u64", rcx, 0)
		return
	}
	p := e.pred()
	elems := fmt.Sprintf("$Lrep%s", n)
	end := elems + "_end"
	if size == 1 {
		head, words := elems+"_head", elems+"_words"
		word, x, addr := e.t(), e.t(), e.t()
		e.i("and.b64", word, rax, 0xff)
		e.i("mul.lo.u64", word, word, lit(0x0101010101010101))
		e.label(head)
		e.i("setp.eq.u64", p, rcx, 0)
		e.i("bra", end).when(p)
		e.i("and.b64", x, rdi, 7)
		e.i("setp.eq.u64", p, x, 0)
		e.i("bra", words).when(p)
		e.i("mov.b64", addr, rdi)
		e.siteCheck(id, addr, 1, in.X86)
		e.store(ptx.Addr(addr, 0), rax, 1)
		e.i("add.u64", rdi, rdi, 1)
		e.i("sub.u64", rcx, rcx, 1)
		e.i("bra", head)
		e.label(words)
		e.i("setp.lt.u64", p, rcx, 8)
		e.i("bra", elems).when(p)
		e.i("add.u64", addr, rdi, 7)
		e.siteCheck(id, addr, 1, in.X86)
		e.i("mov.b64", addr, rdi)
		e.siteCheck(id, addr, 1, in.X86)
		e.store(ptx.Addr(addr, 0), word, 8)
		e.i("add.u64", rdi, rdi, 8)
		e.i("sub.u64", rcx, rcx, 8)
		e.i("bra", words)
	}
	e.label(elems)
	e.i("setp.eq.u64", p, rcx, 0)
	e.i("bra", end).when(p)
	addr := e.t()
	e.i("mov.b64", addr, rdi)
	e.siteCheck(id, addr, size, in.X86)
	e.store(ptx.Addr(addr, 0), rax, size)
	e.i("add.u64", rdi, rdi, size)
	e.i("sub.u64", rcx, rcx, 1)
	e.i("bra", elems)
	e.label(end)
}
