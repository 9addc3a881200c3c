package gvinst

import (
	"errors"
	"fmt"
)

// errUnsupported is wrapped by the error of a TrapUnsupported stop that the
// engine itself raises.
var errUnsupported = errors.New("unsupported operation")

// loadWide reads a value of type t (any size, .b128 and .f80 included) at
// addr into frame slots d (and d+1).
func (it *Interpreter) loadWide(f *frame, t Type, d uint16, addr uint64) error {
	switch t.Size() {
	case 16:
		lo, err := it.mem.Load(addr, 8)
		if err != nil {
			return err
		}
		hi, err := it.mem.Load(addr+8, 8)
		if err != nil {
			return err
		}
		f[d], f[uint16(d+1)] = lo, hi
	case 10:
		lo, err := it.mem.Load(addr, 8)
		if err != nil {
			return err
		}
		hi, err := it.mem.Load(addr+8, 2)
		if err != nil {
			return err
		}
		f[d], f[uint16(d+1)] = lo, hi
	default:
		v, err := it.mem.Load(addr, t.Size())
		if err != nil {
			return err
		}
		f[d] = v
	}
	return nil
}

// storeWide writes the value of type t in frame slots a (and a+1) at addr.
func (it *Interpreter) storeWide(f *frame, t Type, a uint16, addr uint64) error {
	switch t.Size() {
	case 16, 10:
		lo, hi := f[a], f[uint16(a+1)]
		// Check both halves first so that a fault stores nothing.
		if _, err := it.mem.pageFor(addr, AccessWrite); err != nil {
			return err
		}
		if last := addr + uint64(t.Size()) - 1; last/PageSize != addr/PageSize {
			if _, err := it.mem.pageFor(last&^pageMask, AccessWrite); err != nil {
				return err
			}
		}
		if err := it.mem.Store(addr, 8, lo); err != nil {
			return err
		}
		return it.mem.Store(addr+8, t.Size()-8, hi)
	}
	return it.mem.Store(addr, t.Size(), f[a])
}

// slow executes one non-control instruction by the reference semantics of
// its op. It returns false, with it.trap set, when the instruction traps.
// Register operands are frame slots (the compiled block's rewritten
// instructions may name guest slots directly).
func (it *Interpreter) slow(f *frame, in *Inst, idx int) bool {
	it.curIdx = idx
	d := uint16(in.Dst)
	r := func(i int) uint64 { return f[uint16(in.Src[i])] }
	b := func() uint64 {
		if in.HasImm {
			return uint64(in.Imm)
		}
		return f[uint16(in.Src[1])]
	}
	t := in.Type
	if usesX87Hook(in) {
		if err := execX87(in, f); err != nil {
			it.setTrap(idx, TrapUnsupported, 0, fmt.Errorf("%s: %w", FormatInst(in), err))
			return false
		}
		return true
	}
	switch in.Op {
	case OpGet, OpPut, OpMov:
		a := uint16(in.Src[0])
		if t.IsWide() {
			lo, hi := f[a], f[uint16(a+1)]
			f[d], f[uint16(d+1)] = lo, hi
		} else if in.Op == OpMov || t.Size() == 8 {
			f[d] = f[a]
		} else {
			f[d] = f[a] & t.Mask()
		}
	case OpLi:
		if t.IsWide() {
			f[d], f[uint16(d+1)] = uint64(in.Imm), 0
		} else {
			f[d] = uint64(in.Imm) & t.Mask()
		}
	case OpJoin:
		lo, hi := r(0), r(1)
		f[d], f[uint16(d+1)] = lo, hi
	case OpLd:
		if err := it.loadWide(f, t, d, r(0)+uint64(in.Imm)); err != nil {
			it.memTrap(idx, err)
			return false
		}
	case OpSt:
		if err := it.storeWide(f, t, uint16(in.Src[1]), r(0)+uint64(in.Imm)); err != nil {
			it.memTrap(idx, err)
			return false
		}
	case OpChkAlign:
		if addr := r(0) + uint64(in.Imm); addr%uint64(t.Size()) != 0 {
			it.misalignedTrap(idx, addr, t.Size())
			return false
		}
	case OpAdd, OpSub, OpMul, OpMulHi, OpDiv, OpRem, OpAnd, OpOr, OpXor, OpShl, OpShr, OpSar, OpRol, OpRor, OpMin, OpMax:
		a, bv := r(0), b()
		if t.IsFloat() {
			var v, fl uint64
			mx := f[MXCSR]
			switch in.Op {
			case OpAdd, OpSub, OpMul, OpDiv:
				v, fl = sseArith(in.Op, t, a, bv, mx)
			case OpMin, OpMax:
				v, fl = sseMinMax(in.Op, t, a, bv, mx)
			default:
				v = floatBinary(in.Op, t, a, bv)
			}
			if !it.sseFlags(f, in, idx, fl) {
				return false
			}
			f[d] = v
			return true
		}
		v, ok := intBinary(in.Op, t, a, bv)
		if !ok {
			it.setTrap(idx, TrapDivide, 0, fmt.Errorf("%s: divide error", FormatInst(in)))
			return false
		}
		f[d] = v
	case OpDivW, OpRemW:
		v, ok := divWide(t, r(0), r(1), r(2), in.Op == OpRemW)
		if !ok {
			it.setTrap(idx, TrapDivide, 0, fmt.Errorf("%s: divide error", FormatInst(in)))
			return false
		}
		f[d] = v
	case OpNot, OpNeg, OpAbs, OpClz, OpCtz, OpPopc, OpBswap, OpSqrt:
		if in.Op == OpSqrt {
			v, fl := sseArith(OpSqrt, t, r(0), 0, f[MXCSR])
			if !it.sseFlags(f, in, idx, fl) {
				return false
			}
			f[d] = v
		} else if t.IsFloat() {
			f[d] = floatUnary(in.Op, t, r(0))
		} else {
			f[d] = intUnary(in.Op, t, r(0))
		}
	case OpCvt:
		rm := resolveRounding(Rounding(in.Mod), f)
		if !isSSEFloat(in) {
			f[d] = convert(t, in.SrcType, r(0), rm)
			break
		}
		v, fl := sseConvert(t, in.SrcType, r(0), rm, f[MXCSR])
		if !it.sseFlags(f, in, idx, fl) {
			return false
		}
		f[d] = v
	case OpRound:
		v, fl := sseRound(t, r(0), resolveRounding(Rounding(in.Mod), f), f[MXCSR])
		if !it.sseFlags(f, in, idx, fl) {
			return false
		}
		f[d] = v
	case OpCmp:
		a, bv := r(0), b()
		if t.IsFloat() {
			v, fl := sseCmp(Cmp(in.Mod), t, a, bv, f[MXCSR])
			if !it.sseFlags(f, in, idx, fl) {
				return false
			}
			f[d] = b2u(v)
		} else {
			f[d] = b2u(cmpInt(Cmp(in.Mod), t, a, bv))
		}
	case OpSelect:
		c := r(0)
		a, bb := uint16(in.Src[1]), uint16(in.Src[2])
		if c == 0 {
			a = bb
		}
		if t.IsWide() {
			lo, hi := f[a], f[uint16(a+1)]
			f[d], f[uint16(d+1)] = lo, hi
		} else {
			f[d] = f[a]
		}
	case OpFlags:
		execFlags(f, FlagKind(in.Mod), t, r(0), r(1), r(2), r(3))
	case OpGetCC:
		f[d] = b2u(getCC(f, Cond(in.Mod)))
	case OpGetFlags:
		f[d] = getFlags(f)
	case OpSetFlags:
		f[RFLAGS] = r(0)
		f[CCOp] = 0
	case OpCpuid:
		eax, ebx, ecx, edx := cpuid(uint32(f[S0]), uint32(f[S1]))
		f[S0], f[S1], f[S2], f[S3] = uint64(eax), uint64(ecx), uint64(edx), uint64(ebx)
	case OpRdtsc:
		f[d] = it.rdtsc()
	case OpProbe:
		if it.opts.Probe != nil {
			it.opts.Probe(uint32(in.Target[0]), r(0)+uint64(in.Imm), t.Size())
		}
	case OpCount:
		if s := in.Target[0]; s < uint64(len(it.opts.Counts)) && it.opts.Counts[s] > 0 {
			it.opts.Counts[s]--
		} else if it.opts.Probe != nil {
			it.opts.Probe(uint32(s), 0, 1)
		}
	case OpRepMovs, OpRepStos, OpRepCmps, OpRepScas:
		if err := it.repString(f, in); err != nil {
			it.memTrap(idx, err)
			return false
		}
	case OpFxsave, OpFxrstor, OpFnstenv, OpFldenv:
		if err := it.fpState(f, in.Op, r(0)+uint64(in.Imm)); err != nil {
			it.memTrap(idx, err)
			return false
		}
	default:
		if in.Op.Info().Types == TVec || isVecOp(in.Op) {
			if err := execVec(f, in); err != nil {
				it.setTrap(idx, TrapUnsupported, 0, fmt.Errorf("%s: %w", FormatInst(in), err))
				return false
			}
			return true
		}
		it.setTrap(idx, TrapUnsupported, 0, fmt.Errorf("%s: %w in the interpreter", FormatInst(in), errUnsupported))
		return false
	}
	return true
}

// usesX87Hook reports whether in is executed by execX87: the x87 stack ops
// and every arithmetic, conversion or comparison on .f80. Moving .f80 values
// (GET, PUT, MOV, LI, LD, ST, SELECT) is plain data movement the interpreter
// does itself.
func usesX87Hook(in *Inst) bool {
	if in.Op >= OpFGetST && in.Op <= OpFClass {
		return true
	}
	if in.Type != F80 && in.SrcType != F80 {
		return false
	}
	switch in.Op {
	case OpGet, OpPut, OpMov, OpLi, OpLd, OpSt, OpSelect, OpProbe:
		return false
	}
	return true
}

// isVecOp reports whether op is one of the packed SSE ops.
func isVecOp(op Op) bool { return op >= OpVAdd && op <= OpVRound || op == OpVPcmpStr }

// sseFlags ORs the exception flags fl of SSE instruction in into MXCSR. It
// returns false, with the trap recorded, when one of them is unmasked: the
// instruction then writes no result.
func (it *Interpreter) sseFlags(f *frame, in *Inst, idx int, fl uint64) bool {
	mx := f[MXCSR]
	f[MXCSR] = mx | fl
	if unmaskedSSE(fl, mx) {
		it.setTrap(idx, TrapUnsupported, 0, fmt.Errorf("%s: %w: MXCSR %#x", FormatInst(in), errSSEUnmasked, mx|fl))
		return false
	}
	return true
}
