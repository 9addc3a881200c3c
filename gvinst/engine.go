package gvinst

import (
	"fmt"
	"time"
)

// CPU is the guest's architectural state: the NumGuestSlots state slots
// (indexed as Reg numbers them: s0…s15, x0…x15, fs/gs bases, the lazy flags,
// RFLAGS, MXCSR and the x87 state) and the program counter.
type CPU struct {
	State [NumGuestSlots]uint64
	PC    uint64
}

// Translator produces the VBlock starting at a guest address. Package
// lift's lifter implements it; tests use GVInst text.
type Translator interface {
	Translate(addr uint64) (*VBlock, error)
}

// NewEngineFunc makes a CPU engine over guest memory mem that gets its
// code from t, with the interpreter's options (breakpoints, the probe
// hook, the optimization passes): NewInterpreter wrapped, or a compiling
// engine's constructor. An engine that holds resources implements
// io.Closer; whoever made it closes it.
type NewEngineFunc func(mem *Memory, t Translator, opts InterpOptions) (Engine, error)

// Engine runs guest code. The interpreter is one; a compiling back end may
// be another.
type Engine interface {
	// Run runs the guest from cpu.PC until a stop: a system call, a trap, a
	// breakpoint, or the budget (the most guest instructions to run; 0 is
	// no limit). The engine executes whole VBlocks, so a budget stop comes
	// before the first block that starts after the budget is spent.
	Run(cpu *CPU, budget uint64) Stop
	// Invalidate drops the translations that overlap guest range
	// [addr, addr+size).
	Invalidate(addr, size uint64)
	// Stats returns the engine's counters.
	Stats() EngineStats
}

// StopKind says why Run returned.
type StopKind uint8

// The stop kinds.
const (
	StopSyscall    StopKind = iota + 1 // the guest made a system call; cpu.PC is after it
	StopTrap                           // the guest faulted; see Stop.Trap
	StopBudget                         // the instruction budget is spent; cpu.PC is the next block
	StopBreakpoint                     // the next block's address is a breakpoint; cpu.PC is there
	StopHot                            // the next block is hot (InterpOptions.HotAfter); cpu.PC is there
)

// String returns the kind's name: "syscall", "trap", "budget",
// "breakpoint" or "hot".
func (k StopKind) String() string {
	switch k {
	case StopSyscall:
		return "syscall"
	case StopTrap:
		return "trap"
	case StopBudget:
		return "budget"
	case StopBreakpoint:
		return "breakpoint"
	case StopHot:
		return "hot"
	}
	return fmt.Sprintf("stop%d", uint8(k))
}

// Stop describes why Run returned.
type Stop struct {
	Kind StopKind
	// PC is, for a syscall, the address of the instruction after it (cpu.PC
	// is already there); for a trap, the address of the faulting x86
	// instruction; for a breakpoint or a budget stop, the next block's
	// address.
	PC        uint64
	Trap      TrapKind // for traps: the kind
	FaultAddr uint64   // for segv traps: the bad address
	Err       error    // for traps: the underlying error (a *Fault, a translate error, an internal error)
	Insn      string   // the x86 disassembly of the faulting instruction, when known
}

// String formats the stop for people, e.g. "trap segv at 0x401000 (mov
// eax, dword ptr [rbx]): read of 0x0: unmapped address".
func (s Stop) String() string {
	switch s.Kind {
	case StopTrap:
		msg := fmt.Sprintf("trap %s at %#x", s.Trap, s.PC)
		if s.Insn != "" {
			msg += " (" + s.Insn + ")"
		}
		if s.Err != nil {
			msg += ": " + s.Err.Error()
		}
		return msg
	default:
		return fmt.Sprintf("%s at %#x", s.Kind, s.PC)
	}
}

// EngineStats are an engine's counters since it was made.
type EngineStats struct {
	GuestInsns        uint64 // guest x86 instructions executed
	BlocksTranslated  uint64 // VBlocks translated and compiled
	BlocksExecuted    uint64 // VBlocks entered
	BlocksInvalidated uint64 // translations dropped by Invalidate
	ChainHits         uint64 // block transitions that followed a cached successor pointer
	Traps             uint64 // StopTrap stops
	Syscalls          uint64 // StopSyscall stops

	// A compiling engine's counters (zero for the interpreter).
	UnitsCompiled uint64        // blocks compiled to host code
	TraceBlocks   uint64        // blocks compiled into a unit after its first (a trace's)
	CodeBytes     uint64        // bytes of host code made
	CompileTime   time.Duration // translating and compiling them
	Callouts      uint64        // GVInst instructions compiled code handed to the interpreter's semantics
	InterpInsns   uint64        // guest instructions it ran on its interpreter (cold code), part of GuestInsns
	// CalloutsByOp splits Callouts by the instruction's op, modifier and
	// types as its text form spells them ("GETCC.ne", "DIV.u64"); the
	// loads and stores counted are those whose TLB probe missed.
	CalloutsByOp map[string]uint64
	// ExitsByKind counts the times compiled code returned to Go, by why
	// ("chain": a successor not linked yet, "indirect": a computed jump
	// the jump cache missed, "syscall", "callout", "fuel", ...).
	ExitsByKind map[string]uint64
}

// InternalError is a broken invariant of the engine, caught at Run's
// boundary: the guest stops with TrapIllegal and this error, never a Go
// panic.
type InternalError struct {
	Op    Op     // the op being executed, when known
	Addr  uint64 // the guest address of its x86 instruction, or of the block
	Cause any    // the recovered panic value
}

// Error describes the broken invariant and where the guest was.
func (e *InternalError) Error() string {
	return fmt.Sprintf("internal error in the interpreter executing %s for guest address %#x: %v", e.Op, e.Addr, e.Cause)
}

// TranslateError is a failure to translate the guest code at Addr.
type TranslateError struct {
	Addr uint64
	Err  error
}

// Error says which guest address failed to translate, and why.
func (e *TranslateError) Error() string {
	return fmt.Sprintf("translating guest code at %#x: %v", e.Addr, e.Err)
}

// Unwrap returns the translator's error (a *Fault when fetching the code
// faulted).
func (e *TranslateError) Unwrap() error { return e.Err }

// MisalignedError is the error of the segv stop a CHKALIGN raises: the
// guest accessed Addr with an instruction that requires Align-byte
// alignment (a movaps, an addps from memory, an fxsave), which x86 answers
// with #GP and Linux with SIGSEGV. It tells such a stop from an access to
// an unmapped or protected page.
type MisalignedError struct {
	Addr  uint64
	Align int
}

// Error describes the access.
func (e *MisalignedError) Error() string {
	return fmt.Sprintf("misaligned %d-byte access to %#x", e.Align, e.Addr)
}

// GuestTrapError is the error of a stop caused by a TRAP instruction: the
// guest code itself faults (ud2, int3, hlt, a known-bad access, an
// instruction the lifter does not support).
type GuestTrapError struct {
	Kind   TrapKind
	Detail uint64 // TRAP's immediate: the faulting address for segv
}

// Error describes the trap.
func (e *GuestTrapError) Error() string {
	switch e.Kind {
	case TrapSegv:
		return fmt.Sprintf("guest fault (%s) at address %#x", e.Kind, e.Detail)
	case TrapUnsupported:
		return "unsupported instruction"
	}
	return fmt.Sprintf("guest trap (%s)", e.Kind)
}
