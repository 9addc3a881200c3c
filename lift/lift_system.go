package lift

import (
	"github.com/gxbit/gxbit/gvinst"
	"golang.org/x/arch/x86/x86asm"
)

// systemOps is the dispatch table of system, flag and no-op instructions.
func systemOps() map[x86asm.Op]liftFunc {
	return map[x86asm.Op]liftFunc{
		x86asm.NOP: liftNop, x86asm.PAUSE: liftNop,
		x86asm.PREFETCHNTA: liftNop, x86asm.PREFETCHT0: liftNop, x86asm.PREFETCHT1: liftNop,
		x86asm.PREFETCHT2: liftNop, x86asm.PREFETCHW: liftNop,
		x86asm.LFENCE: liftNop, x86asm.MFENCE: liftNop, x86asm.SFENCE: liftNop, x86asm.CLFLUSH: liftNop,
		x86asm.SYSCALL: liftSyscall,
		x86asm.CPUID:   liftCpuid,
		x86asm.RDTSC:   liftRdtsc,
		x86asm.HLT:     liftTrap(gvinst.TrapHalt),
		// Privileged instructions raise #GP in user mode: SIGSEGV.
		x86asm.CLI: liftTrap(gvinst.TrapHalt), x86asm.STI: liftTrap(gvinst.TrapHalt),
		x86asm.WRMSR: liftTrap(gvinst.TrapHalt), x86asm.RDMSR: liftTrap(gvinst.TrapHalt),
		x86asm.RDPMC: liftTrap(gvinst.TrapHalt),
		x86asm.IN:    liftTrap(gvinst.TrapHalt), x86asm.OUT: liftTrap(gvinst.TrapHalt),
		x86asm.INSB: liftTrap(gvinst.TrapHalt), x86asm.INSW: liftTrap(gvinst.TrapHalt), x86asm.INSD: liftTrap(gvinst.TrapHalt),
		x86asm.OUTSB: liftTrap(gvinst.TrapHalt), x86asm.OUTSW: liftTrap(gvinst.TrapHalt), x86asm.OUTSD: liftTrap(gvinst.TrapHalt),
		x86asm.LGDT: liftTrap(gvinst.TrapHalt), x86asm.LIDT: liftTrap(gvinst.TrapHalt),
		x86asm.LLDT: liftTrap(gvinst.TrapHalt), x86asm.LTR: liftTrap(gvinst.TrapHalt),
		x86asm.LMSW: liftTrap(gvinst.TrapHalt), x86asm.CLTS: liftTrap(gvinst.TrapHalt),
		x86asm.INVD: liftTrap(gvinst.TrapHalt), x86asm.WBINVD: liftTrap(gvinst.TrapHalt),
		x86asm.INVLPG: liftTrap(gvinst.TrapHalt), x86asm.SWAPGS: liftTrap(gvinst.TrapHalt),
		x86asm.SYSRET: liftTrap(gvinst.TrapHalt), x86asm.SYSEXIT: liftTrap(gvinst.TrapHalt),
		x86asm.UD2:       liftTrap(gvinst.TrapIllegal),
		x86asm.UD0:       liftTrap(gvinst.TrapIllegal),
		x86asm.UD1:       liftTrap(gvinst.TrapIllegal),
		x86asm.INT:       liftInt,
		x86asm.LAHF:      liftLahf,
		x86asm.SAHF:      liftSahf,
		x86asm.PUSHFQ:    liftPushf,
		x86asm.POPFQ:     liftPopf,
		x86asm.CLC:       liftFlagOp(flagCF, 0),
		x86asm.STC:       liftFlagOp(flagCF, 1),
		x86asm.CMC:       liftFlagOp(flagCF, 2),
		x86asm.CLD:       liftFlagOp(flagDF, 0),
		x86asm.STD:       liftFlagOp(flagDF, 1),
		x86asm.LDMXCSR:   liftLdmxcsr,
		x86asm.STMXCSR:   liftStmxcsr,
		x86asm.FXSAVE:    liftFxState(gvinst.OpFxsave),
		x86asm.FXSAVE64:  liftFxState(gvinst.OpFxsave),
		x86asm.FXRSTOR:   liftFxState(gvinst.OpFxrstor),
		x86asm.FXRSTOR64: liftFxState(gvinst.OpFxrstor),
	}
}

func liftNop(b *builder) error { return nil }

// liftSyscall sets rcx to the return address and r11 to RFLAGS, as the
// syscall instruction does, then ends the block with SYSCALL.
func liftSyscall(b *builder) error {
	b.put(gvinst.S1, b.li(gvinst.U64, int64(b.next())))
	b.put(gvinst.Reg(11), b.opi(gvinst.OpOr, gvinst.B64, b.getflags(), 0x202))
	b.emit(gvinst.Inst{Op: gvinst.OpSyscall, Target: [2]uint64{b.next()}})
	return nil
}

func liftCpuid(b *builder) error {
	b.emit(gvinst.Inst{Op: gvinst.OpCpuid})
	return nil
}

func liftRdtsc(b *builder) error {
	in := gvinst.Inst{Op: gvinst.OpRdtsc, Dst: b.newV(1)}
	b.emit(in)
	b.put(gvinst.S0, b.zext(in.Dst, 32))
	b.put(gvinst.S2, b.opi(gvinst.OpShr, gvinst.U64, in.Dst, 32))
	return nil
}

func liftTrap(k gvinst.TrapKind) liftFunc {
	return func(b *builder) error {
		b.trap(k)
		return nil
	}
}

// liftInt lifts int n. int 3 (cd 03) traps as int3 does; int 0x80 is the
// i386 system call, which ends the block with SYSCALL and leaves every
// register but rax alone (the linux package tells it from syscall by its
// bytes, cd 80); any other vector has a kernel-only gate in Linux's
// interrupt table, so user code gets #GP: SIGSEGV.
func liftInt(b *builder) error {
	imm, ok := b.d.Inst.Args[0].(x86asm.Imm)
	switch {
	case ok && imm == 3:
		b.trap(gvinst.TrapBreakpoint)
	case ok && imm == 0x80:
		b.emit(gvinst.Inst{Op: gvinst.OpSyscall, Target: [2]uint64{b.next()}})
	default:
		b.trap(gvinst.TrapHalt)
	}
	return nil
}

func liftLahf(b *builder) error {
	v := b.opi(gvinst.OpOr, gvinst.B64, b.opi(gvinst.OpAnd, gvinst.B64, b.getflags(), 0xd5), 2)
	b.writeGPR(gpr{slot: gvinst.S0, size: 1, high: true}, v)
	return nil
}

func liftSahf(b *builder) error {
	ah := b.readGPR(gpr{slot: gvinst.S0, size: 1, high: true})
	b.setFlagBits(0xd5, b.opi(gvinst.OpAnd, gvinst.B64, ah, 0xd5))
	return nil
}

func liftPushf(b *builder) error {
	if err := b.checkNear(); err != nil {
		return err
	}
	b.push(b.opi(gvinst.OpOr, gvinst.B64, b.getflags(), 0x202))
	return nil
}

// popfMask is the RFLAGS bits popfq may change in user mode (TF, which
// would single-step, is left out).
const popfMask = statusFlags | flagDF | 0x40000 | 0x200000

func liftPopf(b *builder) error {
	if err := b.checkNear(); err != nil {
		return err
	}
	v := b.pop()
	b.setFlagBits(popfMask, b.opi(gvinst.OpAnd, gvinst.B64, v, popfMask))
	return nil
}

// liftFlagOp lifts clc, stc, cmc, cld and std: set bit to 0, 1, or (2)
// complement it.
func liftFlagOp(bit uint64, how int) liftFunc {
	return func(b *builder) error {
		fl := b.getflags()
		var r gvinst.Reg
		switch how {
		case 0:
			r = b.opi(gvinst.OpAnd, gvinst.B64, fl, int64(^bit))
		case 1:
			r = b.opi(gvinst.OpOr, gvinst.B64, fl, int64(bit))
		default:
			r = b.opi(gvinst.OpXor, gvinst.B64, fl, int64(bit))
		}
		b.setflags(r)
		return nil
	}
}

func (b *builder) memArg(i int) (memRef, error) {
	m, ok := b.d.Inst.Args[i].(x86asm.Mem)
	if !ok {
		return memRef{}, unsupported("expected a memory operand")
	}
	return b.addrOf(m, false)
}

func liftLdmxcsr(b *builder) error {
	ref, err := b.memArg(0)
	if err != nil {
		return err
	}
	b.putT(gvinst.U64, gvinst.MXCSR, b.ld(gvinst.U32, ref))
	return nil
}

func liftStmxcsr(b *builder) error {
	ref, err := b.memArg(0)
	if err != nil {
		return err
	}
	b.st(gvinst.U32, ref, b.getT(gvinst.U64, gvinst.MXCSR))
	return nil
}

func liftFxState(op gvinst.Op) liftFunc {
	return func(b *builder) error {
		ref, err := b.memArg(0)
		if err != nil {
			return err
		}
		if op == gvinst.OpFxsave || op == gvinst.OpFxrstor {
			b.checkAligned16(ref) // the 512-byte area must be 16-byte aligned (#GP)
		}
		in := gvinst.Inst{Op: op, Imm: ref.disp}
		in.Src[0] = ref.base
		b.emit(in)
		return nil
	}
}
