// Package jit is gxbit's compiling CPU engine: it translates each GVInst
// VBlock to x86-64 machine code and runs that code directly, behind the same
// gvinst.Engine interface as the interpreter, which stays the reference
// semantics and the fallback.
//
// # How a block becomes code
//
// A unit is one VBlock (after the optimization passes, when asked), or,
// when tiering gives an edge profile, a trace of several (trace.go): the
// blocks along the path the interpreter saw taken most, through branches
// (side exits for the other way), direct jumps, calls and their returns,
// and computed jumps that always went to one target (behind a compare),
// with guest registers kept in host registers across the blocks. Every
// GVInst register, guest state and virtual alike, has its home in the
// machine's frame, laid out exactly as the interpreter's (gvinst.FrameSlots
// slots, guest state first); r15 holds the frame's address while compiled
// code runs. Within a unit, values live in host registers (regalloc.go): a
// write-back cache of frame slots in rbx, rdi and r8-r14, which stores a
// value to the frame only when the unit leaves or the register is needed
// for another slot (the one whose slot is read again furthest ahead);
// rax, rcx, rdx and rsi are scratch within one instruction. Virtual
// registers die with the block, so exits store guest slots only. A copy
// (GET, MOV, JOIN) whose original stays unchanged while it is read is not
// made: its reads read the original; likewise the reads of a register after
// its PUT read the guest slot. An instruction that reads a virtual register
// last computes in that register (no copy first). gxbit run lifts straight
// runs of up to MaxUnitInsts x86 instructions for this engine, so the
// registers stay in host registers across them.
//
// Each instruction the compiler knows (integer arithmetic, logic and shifts
// of every width, comparisons, selects, integer conversions, moves, the
// lazy flags record, loads and stores, scalar SSE arithmetic) becomes host
// instructions that take their operands through the operand API
// (compiler.src, dstReg, put, frame, ... documented in regalloc.go; code
// generators in other files use the same calls) and compute in registers.
// Beside compile.go, compile_flags.go compiles GETCC, GETFLAGS, SETFLAGS
// and every FLAGS kind through two routines placed once at the start of
// the code memory (statusFlags, the interpreter's lazyFlags in machine
// code, and subConds, its getCC of a sub; both keep every register but
// rax); compile_muldiv.go the wide multiplications, the divisions
// (operands that would make the host's div fault take the callout
// instead, so #DE stays the interpreter's and precise) and the bit counts;
// compile_sse.go the packed SSE operations; compile_more.go float CMP and
// CHKALIGN. x87 instructions stay callouts: a call from compiled code into
// Go's float80 would need the goroutine stack switch that compiled code
// cannot make safely, and the callout is that switch.
//
// Every other instruction is a callout: the code stores every dirty slot,
// returns to Go with the instruction's index, Go runs it with the
// interpreter's semantics (gvinst.Interpreter.Exec) on the frame, and
// re-enters the code just after it, which reloads what it keeps in
// registers. Because the frame is complete at every exit, a unit can be
// left and resumed at any instruction.
//
// A block (or trace) that branches back to its start is a loop unit: the guest registers
// it uses most are loaded once at its entry and stay in host registers
// across iterations; the back edge is a fuel check and a jump to the loop's
// head, and every other way out stores them. A CMP read only by the closing
// BRANCH becomes a host compare and conditional jump. gxbit lift --jit
// (Disassemble) prints a unit's code.
//
// Float values live in xmm registers (xmmpin.go): a loop unit keeps the
// low halves of the SSE registers its float code uses in xmm2-6 and
// xmm8-15 from its entry to its exits, as it pins general registers, and
// a float result of a virtual register stays in a free one of those until
// its last read; float arithmetic reads them in place. A slot that other
// code needs (a store of its bits, an integer op, a packed op) is not
// kept so: the unit is compiled again without it. The lifter's merge of a
// scalar .f32 result into its register's low lane (an AND and an OR,
// compile_lowmerge.go) is the host instruction's own, and the flags word
// of a ucomis/comis one host compare (comiFlags).
//
// Scalar SSE arithmetic runs on the host's MXCSR, which holds the guest's
// with every exception masked. That is exact only while the guest masks
// every exception too, so a unit with float arithmetic checks that once,
// at its entry (machine.mxTrap, which Go sets on every entry), not per
// instruction: when the guest unmasks one, the entry leaves for Go
// (exitFloatTrap), which runs the block's first x86 instruction by the
// interpreter's semantics and goes on at the next, translated afresh; Go
// never resumes such a unit after a callout (LDMXCSR) that unmasked one.
// Setting GXBIT_PERFMAP=1 writes /tmp/perf-PID.map for Linux perf.
//
// # Cold code
//
// With InterpOptions.HotAfter set (gxbit sets DefaultHotAfter), a block
// is compiled only after the interpreter has run it that many times: the
// engine runs cold code on its interpreter, which stops before a hot
// block (gvinst.StopHot), and compiles that block from the interpreter's
// VBlock, so it is lifted once. Start-up code that runs a few times is
// only interpreted: it is not encoded, placed or linked, each of which
// costs two mprotect calls (tier.go).
//
// Loads and stores probe the Memory's software TLB inline (gvinst.SoftTLBs)
// in eight instructions and the access: the entry of the first byte's page
// (its page number's low bits), addressed from r15 (the TLBs and the
// machine lie within a 32-bit displacement of each other on Go's heap;
// through the machine's TLB pointers where not), is compared with the tag
// of the last byte's page (its address or'ed with PageSize-1), which checks
// the page and that the access stays in it at once (gvinst.TLBSlot never
// gives neighbouring pages one entry), and the access is the guest address
// plus the entry's host word; base+offset is the probe's and the access's
// own operand, and an address computed as base+index*scale is folded into
// a lea. Accesses at constant offsets from one base value (a stack frame,
// a structure; followed through copies and constant sums, as
// gvinst.AddressValues does) form a page group (pagegroup.go): one probe of
// the group's whole range (of the write TLB alone when the group stores:
// it holds only readable pages), then one host instruction per access, and
// each access's own probe when the range is not in one page the TLB holds.
// Where the machine's parts lie within a page matters as much (4K
// aliasing with the frame slots that unit exits store; see machine). The
// optimization passes (gvinst.LoadForwardPass) have already made a load of
// bytes the block loaded or stored before into a copy. In a loop unit each
// load and store first tries its own page cache (machine.sites): the page
// it touched last and that page's bytes, good while the Memory's TLB
// generation (gvinst.Memory.TLBGeneration, which Go passes on every entry)
// has not changed; a miss probes the TLB out of line and refills it. A
// miss, a page-crossing access, and every page the TLB does not vouch for
// (unmapped, stale, watched, holding translated code) take the callout,
// where the interpreter's load or store does the full check; its faults
// are therefore precise: the stop names the faulting x86 instruction, and
// the guest state is as it was before that instruction's first GVInst that
// had not completed.
//
// # Leaving and entering
//
// enter (enter_amd64.s) is a NOSPLIT assembly function that loads the
// machine's address into r15 and CALLs the code; the code uses no stack
// but that return address and comes back with an exit word in rax: why it
// stopped (a successor not yet linked, a computed jump, a system call, a
// callout, the budget, a breakpoint), an argument and the unit's number.
// The code must return promptly: every unit entry checks and decrements a
// fuel counter (guest instructions left), which Go sets to the instruction
// budget, and at most about a millisecond's worth (quantum), so that a loop
// that never leaves compiled code still returns to Go for the garbage
// collector, the budget, and the caller's cancellation.
//
// The fuel lives in rbp (fuelReg) while compiled code runs, so the check
// and decrement at each entry are register operations; enter loads it from
// the machine and stores it back.
//
// A unit's static successors start as exits; the first time one is taken,
// Go compiles the successor and patches the exit into a direct jump (the
// code memory page is flipped to writable and back: code memory is never
// writable and executable at once). Invalidating a unit restores the exits
// that jump into it.
//
// # Calls and returns
//
// Compiled code runs on a stack of its own, the machine's retStack: enter
// switches rsp to it and calls the start routine, which pushes the bottom
// frame and jumps to the code; every exit resets rsp to where enter's
// return address lies (machine.exitSP) before its ret, so an exit leaves
// from any depth. A guest CALL or CALLR, while the stack has room
// (machine.retLimit), pushes the guest return address and makes a host
// call to the callee's way in (its successor exit, or the jump-cache
// probe); a guest RET whose target equals the guest return address of
// the frame on top returns with a host ret, which the host's return
// predictor foresees, to the code after that call, which drops the frame
// and goes on at the call's return successor, a linked jump. Any other
// RET takes the jump cache. The compare makes this exact whatever the
// guest does with its stack (longjmp, a replaced return address, calls
// deeper than the stack): a frame that does not match is only a missed
// prediction. Frames last only until the code leaves for Go; the bottom
// frame's guest address (retBottom) is non-canonical and its host return
// is the miss routine, which leaves for Go as a jump-cache miss does, and
// to which every empty jump-cache entry leads too.
//
// # Self-modifying code
//
// A store into a page translated code came from always takes the callout
// (the write TLB never holds such pages); the Memory's OnCodeWrite hook
// drops the units of that page. When the storing unit is among them, Go
// finishes the current x86 instruction with the interpreter's semantics and
// goes on at the next instruction, translated afresh: code that patches the
// instruction right after the store runs the patched one, as on hardware.
//
// # Threads, later
//
// The engine is single-threaded, like the interpreter. For guest threads
// the design extends as follows: a machine (frame, fuel, TLB pointers) per
// thread, pointed to by r15, so compiled code is shared; one code cache per
// process whose units are immutable once placed, with links patched only
// while the other threads are out of compiled code (at their next fuel
// exit) and invalidated units freed only after every thread has left them
// (an epoch per thread); lock-prefixed instructions compiled to the host's
// lock-prefixed instructions on the guest page, which the software TLB
// resolves to one host address.
package jit
