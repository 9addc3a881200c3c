package lift

import (
	"github.com/gxbit/gxbit/gvinst"
	"golang.org/x/arch/x86/x86asm"
)

// controlOps is the dispatch table of jumps, calls, returns and the stack
// instructions.
func controlOps() map[x86asm.Op]liftFunc {
	t := map[x86asm.Op]liftFunc{
		x86asm.JMP:    liftJmp,
		x86asm.CALL:   liftCall,
		x86asm.RET:    liftRet,
		x86asm.JRCXZ:  liftJcxz(8),
		x86asm.JECXZ:  liftJcxz(4),
		x86asm.LOOP:   liftLoop(0, false),
		x86asm.LOOPE:  liftLoop(gvinst.CondE, true),
		x86asm.LOOPNE: liftLoop(gvinst.CondNE, true),
		x86asm.PUSH:   liftPush,
		x86asm.POP:    liftPop,
		x86asm.LEAVE:  liftLeave,
		x86asm.ENTER:  liftEnter,
	}
	for op, c := range jccOps {
		t[op] = liftJcc(c)
	}
	return t
}

var jccOps = map[x86asm.Op]gvinst.Cond{
	x86asm.JO: gvinst.CondO, x86asm.JNO: gvinst.CondNO, x86asm.JB: gvinst.CondB, x86asm.JAE: gvinst.CondAE,
	x86asm.JE: gvinst.CondE, x86asm.JNE: gvinst.CondNE, x86asm.JBE: gvinst.CondBE, x86asm.JA: gvinst.CondA,
	x86asm.JS: gvinst.CondS, x86asm.JNS: gvinst.CondNS, x86asm.JP: gvinst.CondP, x86asm.JNP: gvinst.CondNP,
	x86asm.JL: gvinst.CondL, x86asm.JGE: gvinst.CondGE, x86asm.JLE: gvinst.CondLE, x86asm.JG: gvinst.CondG,
}

// relTarget returns the target of a relative branch.
func (b *builder) relTarget() (uint64, bool) {
	r, ok := b.d.Inst.Args[0].(x86asm.Rel)
	if !ok {
		return 0, false
	}
	return b.next() + uint64(int64(r)), true
}

// checkNear rejects the 16-bit (66-prefixed) forms of near branches
// and stack operations, which truncate rip or move rsp by 2.
func (b *builder) checkNear() error {
	for _, p := range b.d.Inst.Prefix {
		if p == 0 {
			break
		}
		if p&0xff == 0x66 && p&x86asm.PrefixIgnored == 0 {
			return unsupported("16-bit operand size")
		}
	}
	return nil
}

// branchTo ends the block with BRANCH c, taken, next.
func (b *builder) branchTo(c gvinst.Reg, taken uint64) {
	in := gvinst.Inst{Op: gvinst.OpBranch, Target: [2]uint64{taken, b.next()}}
	in.Src[0] = c
	b.emit(in)
}

func liftJcc(c gvinst.Cond) liftFunc {
	return func(b *builder) error {
		if err := b.checkNear(); err != nil {
			return err
		}
		target, ok := b.relTarget()
		if !ok {
			return unsupported("jcc operand")
		}
		b.branchTo(b.getcc(c), target)
		return nil
	}
}

func liftJcxz(size int) liftFunc {
	return func(b *builder) error {
		target, ok := b.relTarget()
		if !ok {
			return unsupported("jrcxz operand")
		}
		b.branchTo(b.cmpi(gvinst.CmpEq, uintType(size), b.get(gvinst.S1), 0), target)
		return nil
	}
}

// liftLoop lifts loop, loope and loopne: rcx -= 1 (flags untouched), then
// branch while rcx != 0 (and the condition holds).
func liftLoop(c gvinst.Cond, useCond bool) liftFunc {
	return func(b *builder) error {
		target, ok := b.relTarget()
		if !ok || b.d.Inst.AddrSize != 64 {
			return unsupported("loop form")
		}
		rcx := b.opi(gvinst.OpSub, gvinst.U64, b.get(gvinst.S1), 1)
		b.put(gvinst.S1, rcx)
		cond := b.cmpi(gvinst.CmpNe, gvinst.U64, rcx, 0)
		if useCond {
			cond = b.op(gvinst.OpAnd, gvinst.U64, cond, b.getcc(c))
		}
		b.branchTo(cond, target)
		return nil
	}
}

// indirectTarget returns the target of an indirect jump or call as a register.
func (b *builder) indirectTarget() (gvinst.Reg, error) {
	a := b.d.Inst.Args[0]
	switch a := a.(type) {
	case x86asm.Reg:
		g, ok := gprOf(a)
		if !ok || g.size != 8 {
			return 0, unsupported("branch through %v", a)
		}
		return b.get(g.slot), nil
	case x86asm.Mem:
		if b.d.Inst.MemBytes != 8 {
			return 0, unsupported("far branch")
		}
		ref, err := b.addrOf(a, false)
		if err != nil {
			return 0, err
		}
		return b.ld(gvinst.U64, ref), nil
	}
	return 0, unsupported("branch operand %v", a)
}

func liftJmp(b *builder) error {
	if err := b.checkNear(); err != nil {
		return err
	}
	if target, ok := b.relTarget(); ok {
		b.jmp(target)
		return nil
	}
	t, err := b.indirectTarget()
	if err != nil {
		return err
	}
	in := gvinst.Inst{Op: gvinst.OpJmpR}
	in.Src[0] = t
	b.emit(in)
	return nil
}

// push stores v (8 bytes) below rsp.
func (b *builder) push(v gvinst.Reg) {
	sp := b.opi(gvinst.OpSub, gvinst.U64, b.get(gvinst.S4), 8)
	b.st(gvinst.U64, memRef{sp, 0}, v)
	b.put(gvinst.S4, sp)
}

// pop loads 8 bytes at rsp and moves rsp up.
func (b *builder) pop() gvinst.Reg {
	sp := b.get(gvinst.S4)
	v := b.ld(gvinst.U64, memRef{sp, 0})
	b.put(gvinst.S4, b.opi(gvinst.OpAdd, gvinst.U64, sp, 8))
	return v
}

func liftCall(b *builder) error {
	if err := b.checkNear(); err != nil {
		return err
	}
	ret := b.next()
	if target, ok := b.relTarget(); ok {
		b.push(b.li(gvinst.U64, int64(ret)))
		b.emit(gvinst.Inst{Op: gvinst.OpCall, Target: [2]uint64{target, ret}})
		return nil
	}
	t, err := b.indirectTarget()
	if err != nil {
		return err
	}
	b.push(b.li(gvinst.U64, int64(ret)))
	in := gvinst.Inst{Op: gvinst.OpCallR, Target: [2]uint64{ret}}
	in.Src[0] = t
	b.emit(in)
	return nil
}

func liftRet(b *builder) error {
	if err := b.checkNear(); err != nil {
		return err
	}
	sp := b.get(gvinst.S4)
	v := b.ld(gvinst.U64, memRef{sp, 0})
	adj := int64(8)
	if imm, ok := b.d.Inst.Args[0].(x86asm.Imm); ok {
		adj += int64(uint16(imm))
	}
	b.put(gvinst.S4, b.opi(gvinst.OpAdd, gvinst.U64, sp, adj))
	in := gvinst.Inst{Op: gvinst.OpRet}
	in.Src[0] = v
	b.emit(in)
	return nil
}

func liftPush(b *builder) error {
	if err := b.checkNear(); err != nil {
		return err
	}
	a := b.d.Inst.Args[0]
	switch a := a.(type) {
	case x86asm.Imm:
		b.push(b.li(gvinst.U64, int64(a)))
		return nil
	case x86asm.Reg:
		g, ok := gprOf(a)
		if !ok || g.size != 8 {
			return unsupported("push %v", a)
		}
		b.push(b.get(g.slot))
		return nil
	case x86asm.Mem:
		ref, err := b.addrOf(a, false)
		if err != nil {
			return err
		}
		b.push(b.ld(gvinst.U64, ref))
		return nil
	}
	return unsupported("push operand")
}

func liftPop(b *builder) error {
	if err := b.checkNear(); err != nil {
		return err
	}
	switch a := b.d.Inst.Args[0].(type) {
	case x86asm.Reg:
		g, ok := gprOf(a)
		if !ok || g.size != 8 {
			return unsupported("pop %v", a)
		}
		v := b.pop()
		b.put(g.slot, v)
		return nil
	case x86asm.Mem:
		v := b.pop()
		// The address is computed with rsp already incremented.
		ref, err := b.addrOf(a, false)
		if err != nil {
			return err
		}
		b.st(gvinst.U64, ref, v)
		return nil
	}
	return unsupported("pop operand")
}

func liftLeave(b *builder) error {
	if err := b.checkNear(); err != nil {
		return err
	}
	b.put(gvinst.S4, b.get(gvinst.S5))
	b.put(gvinst.S5, b.pop())
	return nil
}

func liftEnter(b *builder) error {
	if err := b.checkNear(); err != nil {
		return err
	}
	size, ok1 := b.d.Inst.Args[0].(x86asm.Imm)
	level, ok2 := b.d.Inst.Args[1].(x86asm.Imm)
	if !ok1 || !ok2 || level&31 != 0 {
		return unsupported("enter with a nesting level")
	}
	b.push(b.get(gvinst.S5))
	sp := b.get(gvinst.S4)
	b.put(gvinst.S5, sp)
	b.put(gvinst.S4, b.opi(gvinst.OpSub, gvinst.U64, sp, int64(uint16(size))))
	return nil
}
