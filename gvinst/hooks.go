package gvinst

import (
	"fmt"
	"unsafe"
)

// This file holds the small exported hooks a second engine (package jit,
// which compiles VBlocks to host machine code) needs from this package: the
// interpreter's reference semantics for one instruction on a frame, and the
// layout of Memory's software TLBs.

// FrameSlots is the number of 64-bit slots of the frame Exec works on: the
// NumGuestSlots guest state slots, then the virtual registers of a block.
const FrameSlots = frameSlots

// Exec executes one non-control instruction, or a TRAP, by the
// interpreter's semantics on the frame slots, which must hold FrameSlots slots laid
// out as Reg numbers them. It returns nil when the instruction completed, or
// the trap it raised (Kind StopTrap, PC the instruction's X86 address; Insn
// is left empty). Control transfers other than TRAP are the caller's.
func (it *Interpreter) Exec(slots []uint64, in *Inst) *Stop {
	if len(slots) < frameSlots {
		return &Stop{Kind: StopTrap, PC: in.X86, Trap: TrapIllegal, Err: fmt.Errorf("Exec: a frame of %d slots, want %d", len(slots), frameSlots)}
	}
	f := (*frame)(slots)
	switch in.Op {
	case OpTrap:
		kind := TrapKind(in.Mod)
		addr := uint64(0)
		if kind == TrapSegv {
			addr = uint64(in.Imm)
		}
		return &Stop{Kind: StopTrap, PC: in.X86, Trap: kind, FaultAddr: addr, Err: &GuestTrapError{Kind: kind, Detail: uint64(in.Imm)}}
	case OpJmp, OpJmpR, OpBranch, OpCall, OpCallR, OpRet, OpSyscall:
		return &Stop{Kind: StopTrap, PC: in.X86, Trap: TrapIllegal, Err: fmt.Errorf("Exec: %s is a control transfer", in.Op)}
	}
	if it.slow(f, in, 0) {
		return nil
	}
	tr := it.trap
	it.trap = trapInfo{}
	return &Stop{Kind: StopTrap, PC: in.X86, Trap: tr.kind, FaultAddr: tr.addr, Err: tr.err}
}

// The layout of Memory's software TLBs, for code that probes them inline:
// TLBSlots entries of TLBEntryBytes bytes each; an entry holds at offset 0
// its page's tag, the page's guest address with the PageSize-1 offset bits
// set (0 for an empty entry), and at offset 8 the host address of the
// page's bytes minus the page's guest address: a guest address in the page
// plus that is the host address of its byte. Page number pn lives in entry
// TLBSlot(pn). The read TLB holds readable pages; the write TLB pages
// both readable and writable that hold no translated code, that are not
// stale and not watched, so a hit needs no further check, for a load or a
// store.
const (
	TLBSlots      = tlbSize
	TLBEntryBytes = 32
)

// TLBSlot is the TLB entry page number pn maps to: pn % TLBSlots. Pages pn
// and pn+1 never share an entry, so an access of at most a page's bytes
// whose last byte's tag (its address or'ed with PageSize-1) equals the tag
// in the entry of its first byte's page lies in one page.
func TLBSlot(pn uint64) uint64 { return tlbIndex(pn) }

// SoftTLBs returns the addresses of the read and the write TLB (see
// TLBSlots). They stay valid as long as m does; entries change whenever m
// is used from Go.
func (m *Memory) SoftTLBs() (read, write uintptr) {
	return uintptr(unsafe.Pointer(&m.rtlb)), uintptr(unsafe.Pointer(&m.wtlb))
}

// TLBGeneration changes whenever a software TLB entry, or a copy of one
// taken earlier, may have gone stale: a mapping, permission or mark
// changed, or an untouched page got bytes of its own. Copies of entries
// taken since it last changed are as good as the entries.
func (m *Memory) TLBGeneration() uint64 { return m.tlbGen }

// tlbLayoutOK reports whether the TLB entries and pages are laid out as
// TLBSlots documents (a test checks it).
func tlbLayoutOK() bool {
	var e tlbEntry
	return unsafe.Sizeof(e) == TLBEntryBytes && unsafe.Offsetof(e.tag) == 0 && unsafe.Offsetof(e.host) == 8
}

// FinishInsn runs, by the interpreter's semantics on the frame slots, the
// GVInst instructions of insts after idx that belong to the same x86
// instruction as insts[idx], after a store of that instruction wrote to the
// code of its own block (self-modifying code). It returns the guest address
// to go on at, translated afresh: the next x86 instruction, end when insts
// ends there, or the target of the block's control transfer when that was
// part of the instruction (ended is then set; syscall reports that the
// transfer was a SYSCALL). A trap returns its stop.
func (it *Interpreter) FinishInsn(slots []uint64, insts []Inst, idx int, end uint64) (next uint64, ended, syscall bool, stop *Stop) {
	if len(slots) < frameSlots {
		return 0, false, false, &Stop{Kind: StopTrap, PC: insts[idx].X86, Trap: TrapIllegal, Err: fmt.Errorf("FinishInsn: a frame of %d slots, want %d", len(slots), frameSlots)}
	}
	return it.finishInsn((*frame)(slots), insts, idx, end)
}

func (it *Interpreter) finishInsn(f *frame, insts []Inst, idx int, end uint64) (next uint64, ended, syscall bool, stop *Stop) {
	x := insts[idx].X86
	j := idx + 1
	for ; j < len(insts) && insts[j].X86 == x; j++ {
		in := &insts[j]
		switch in.Op {
		case OpJmp, OpCall:
			return in.Target[0], true, false, nil
		case OpSyscall:
			return in.Target[0], true, true, nil
		case OpBranch:
			if f[uint16(in.Src[0])] != 0 {
				return in.Target[0], true, false, nil
			}
			return in.Target[1], true, false, nil
		case OpJmpR, OpCallR, OpRet:
			return f[uint16(in.Src[0])], true, false, nil
		}
		if st := it.Exec(f[:], in); st != nil {
			return 0, false, false, st
		}
	}
	if j < len(insts) {
		return insts[j].X86, false, false, nil
	}
	return end, false, false, nil
}
