package lift

import (
	"github.com/gxbit/gxbit/gvinst"
	"golang.org/x/arch/x86/x86asm"
)

// lookahead is how many x86 instructions flagsDeadAt scans from a
// successor before it gives up and assumes the flags are read.
const lookahead = 12

// finish completes the block: it decides whether the flags are dead at its
// exit (never when liveOut), drops the FLAGS nobody can read and the pure instructions whose
// results nobody uses.
func (b *builder) finish(l *Lifter, liveOut bool) *gvinst.VBlock {
	blk := b.blk
	blk.FlagsDeadAtExit = !liveOut && l.flagsDeadAtExit(blk)
	blk.Insts = dropDeadFlags(blk.Insts, !blk.FlagsDeadAtExit)
	blk.Insts = dropDeadCode(blk.Insts)
	return blk
}

// flagsDeadAtExit reports whether every static successor of blk writes all
// six status flags before it reads any. Calls and returns count as writing
// them: the ABI does not preserve flags across them.
func (l *Lifter) flagsDeadAtExit(blk *gvinst.VBlock) bool {
	if len(blk.Insts) == 0 {
		return false
	}
	last := &blk.Insts[len(blk.Insts)-1]
	switch last.Op {
	case gvinst.OpCall, gvinst.OpCallR, gvinst.OpRet:
		return true
	case gvinst.OpJmp:
		return l.flagsDeadAt(last.Target[0])
	case gvinst.OpBranch:
		return l.flagsDeadAt(last.Target[0]) && l.flagsDeadAt(last.Target[1])
	}
	return false
}

// flagEffect says how an x86 instruction treats the status flags.
type flagEffect uint8

const (
	flagsRead    flagEffect = iota // may read them (or unknown)
	flagsWrite                     // writes all six before reading any
	flagsNeutral                   // neither reads nor writes them
	flagsDead                      // control leaves through a call or return
)

// flagsDeadAt reports whether the code at addr writes all status flags
// before reading any, following direct jumps.
func (l *Lifter) flagsDeadAt(addr uint64) bool {
	pc := addr
	for i := 0; i < lookahead; i++ {
		d, err := l.dec.Decode(pc)
		if err != nil {
			return false
		}
		switch x86FlagEffect(&d.Inst) {
		case flagsWrite, flagsDead:
			return true
		case flagsRead:
			return false
		}
		if d.Inst.Op == x86asm.JMP {
			r, ok := d.Inst.Args[0].(x86asm.Rel)
			if !ok {
				return false
			}
			pc = d.Next() + uint64(int64(r))
			continue
		}
		pc = d.Next()
	}
	return false
}

// x86FlagEffect classifies an instruction for flagsDeadAt.
func x86FlagEffect(in *x86asm.Inst) flagEffect {
	if hasVEX(in) {
		return flagsRead
	}
	switch in.Op {
	case x86asm.ADD, x86asm.SUB, x86asm.CMP, x86asm.AND, x86asm.OR, x86asm.XOR, x86asm.TEST, x86asm.NEG,
		x86asm.IMUL, x86asm.MUL, x86asm.CMPXCHG, x86asm.XADD, x86asm.POPCNT,
		x86asm.UCOMISS, x86asm.UCOMISD, x86asm.COMISS, x86asm.COMISD, x86asm.PTEST:
		return flagsWrite
	case x86asm.SHL, x86asm.SHR, x86asm.SAR:
		if imm, ok := in.Args[1].(x86asm.Imm); ok && imm&31 != 0 {
			return flagsWrite
		}
		return flagsRead
	case x86asm.CALL, x86asm.RET:
		return flagsDead
	case x86asm.JMP:
		if _, ok := in.Args[0].(x86asm.Rel); ok {
			return flagsNeutral
		}
		return flagsRead
	case x86asm.MOV, x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD, x86asm.LEA, x86asm.PUSH, x86asm.POP,
		x86asm.NOP, x86asm.NOT, x86asm.XCHG, x86asm.BSWAP, x86asm.CBW, x86asm.CWDE, x86asm.CDQE,
		x86asm.CWD, x86asm.CDQ, x86asm.CQO, x86asm.DIV, x86asm.IDIV, x86asm.LEAVE, x86asm.ENTER,
		x86asm.PREFETCHNTA, x86asm.PREFETCHT0, x86asm.PREFETCHT1, x86asm.PREFETCHT2, x86asm.PREFETCHW,
		x86asm.MOVAPS, x86asm.MOVUPS, x86asm.MOVAPD, x86asm.MOVUPD, x86asm.MOVDQA, x86asm.MOVDQU,
		x86asm.MOVD, x86asm.MOVQ, x86asm.MOVSS, x86asm.MOVSD_XMM, x86asm.PXOR, x86asm.XORPS, x86asm.XORPD,
		x86asm.CVTSI2SD, x86asm.CVTSI2SS, x86asm.ADDSD, x86asm.ADDSS, x86asm.MULSD, x86asm.MULSS,
		x86asm.SUBSD, x86asm.SUBSS, x86asm.DIVSD, x86asm.DIVSS, x86asm.PCMPEQB, x86asm.PMOVMSKB:
		return flagsNeutral
	case x86asm.FCOMI, x86asm.FCOMIP, x86asm.FUCOMI, x86asm.FUCOMIP:
		return flagsWrite // ZF PF CF from the comparison; OF SF AF cleared
	case x86asm.FCMOVB, x86asm.FCMOVE, x86asm.FCMOVBE, x86asm.FCMOVU,
		x86asm.FCMOVNB, x86asm.FCMOVNE, x86asm.FCMOVNBE, x86asm.FCMOVNU:
		return flagsRead
	}
	if isX87(in.Op) {
		return flagsNeutral // the rest of x87 keeps its condition codes in the status word
	}
	return flagsRead
}

// isX87 reports whether op is an x87 floating-point instruction (or one of
// the FPU state instructions such as FXSAVE): every x86asm op named F….
func isX87(op x86asm.Op) bool {
	s := op.String()
	return len(s) > 1 && s[0] == 'F'
}

// dropDeadFlags removes FLAGS whose flags are overwritten before anything
// in the block reads them (and not read after it when liveOut is false).
func dropDeadFlags(insts []gvinst.Inst, liveOut bool) []gvinst.Inst {
	// Constant counts: shifts by a non-zero constant write every flag.
	consts := make(map[gvinst.Reg]int64)
	for i := range insts {
		if in := &insts[i]; in.Op == gvinst.OpLi && in.Dst.IsVirtual() {
			consts[in.Dst] = in.Imm
		}
	}
	keep := make([]bool, len(insts))
	live := liveOut
	for i := len(insts) - 1; i >= 0; i-- {
		in := &insts[i]
		keep[i] = true
		switch in.Op {
		case gvinst.OpFlags:
			full := false
			switch gvinst.FlagKind(in.Mod) {
			case gvinst.FlagsAdd, gvinst.FlagsSub, gvinst.FlagsAdc, gvinst.FlagsSbb, gvinst.FlagsLogic, gvinst.FlagsNeg, gvinst.FlagsMul:
				full = true
			case gvinst.FlagsShl, gvinst.FlagsShr, gvinst.FlagsSar:
				c, ok := consts[in.Src[1]]
				full = ok && c != 0
			}
			if !live {
				keep[i] = false
				continue
			}
			if full {
				live = false
			}
		case gvinst.OpSetFlags:
			live = false
		case gvinst.OpGetCC, gvinst.OpGetFlags, gvinst.OpRepCmps, gvinst.OpRepScas, gvinst.OpSyscall, gvinst.OpTrap:
			live = true
		}
	}
	out := insts[:0]
	for i := range insts {
		if keep[i] {
			out = append(out, insts[i])
		}
	}
	return out
}

// dropDeadCode removes instructions without effects whose virtual
// destination nobody reads.
func dropDeadCode(insts []gvinst.Inst) []gvinst.Inst {
	used := make(map[gvinst.Reg]bool)
	keep := make([]bool, len(insts))
	for i := len(insts) - 1; i >= 0; i-- {
		in := &insts[i]
		info := in.Op.Info()
		hasDst := false
		for _, k := range info.Operands {
			if k == gvinst.OpdDst {
				hasDst = true
			}
		}
		if info.Effects == 0 && hasDst && in.Dst.IsVirtual() && in.Op != gvinst.OpPut {
			t := in.DstType()
			any := false
			for s := 0; s < t.Slots(); s++ {
				if used[in.Dst+gvinst.Reg(s)] {
					any = true
				}
			}
			if !any {
				continue
			}
		}
		keep[i] = true
		si := 0
		for _, k := range info.Operands {
			switch k {
			case gvinst.OpdSrc, gvinst.OpdMem, gvinst.OpdSrcImm:
				if k == gvinst.OpdSrcImm && in.HasImm {
					si++
					continue
				}
				r := in.Src[si]
				for s := 0; s < in.SrcTypeOf(si).Slots(); s++ {
					used[r+gvinst.Reg(s)] = true
				}
				si++
			}
		}
	}
	out := insts[:0]
	for i := range insts {
		if keep[i] {
			out = append(out, insts[i])
		}
	}
	return out
}
