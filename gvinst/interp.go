package gvinst

import "errors"

// frameSlots is the size of the interpreter's frame: the guest state slots
// and the virtual registers of the running block. Compiled instructions name
// slots with uint16 indexes, so every frame access is in bounds by
// construction and needs no check.
const frameSlots = 1 << 16

// maxFrameReg is the highest slot a compiled block may use; the margin keeps
// the second slot of a pair inside the frame.
const maxFrameReg = frameSlots - 4

type frame [frameSlots]uint64

// InterpOptions configures an Interpreter.
type InterpOptions struct {
	// Breakpoints are block addresses Run stops before entering
	// (StopBreakpoint), for phase 2's hot spot entries. When the first block
	// of a Run is at a breakpoint, Run enters it, so a caller that chooses
	// not to act on a breakpoint just calls Run again.
	Breakpoints map[uint64]bool
	// Probe, if set, is called by PROBE with the instrumentation site, the
	// address and the size of the access (phase 1 instrumentation).
	Probe func(site uint32, addr uint64, size int)
	// Counts are the instrumentation sites' counters COUNT counts down
	// (site i's is Counts[i]): while one is above zero, COUNT only takes
	// one from it, without calling Probe. The instrumentation keeps them
	// (the profile collector's headers of loops it only counts), and an
	// engine may address them from its compiled code: the slice's backing
	// array must not move or shrink while the engine lives.
	Counts []int64
	// Optimize runs the passes of Passes on each new VBlock before it is
	// compiled.
	Optimize bool
	// HotAfter, when not zero, makes Run stop (StopHot) before entering a
	// block it has already run HotAfter times since translating it: a
	// compiling engine runs cold code here and compiles the hot blocks.
	HotAfter uint32
}

// Interpreter is the CPU engine that executes VBlocks. It translates each
// block once through its Translator, verifies it, optionally runs the
// optimization passes on it, compiles it to a flat internal form with
// specialised opcodes, caches it by guest address and chains it to its
// direct successors. An Interpreter is not safe for concurrent use.
//
// # How it runs
//
// The guest state and the running block's virtual registers live in one
// frame of 64-bit slots, guest state first, exactly as Reg numbers them, so
// GET and PUT are plain copies. Run copies cpu.State into the frame and back
// when it returns.
//
// Compiling a block (compile.go) first coalesces away the copies the frame
// makes unnecessary: a 64-bit GET or a MOV whose source is not overwritten
// while its value is read disappears and its readers read the source slot;
// a 64-bit PUT of a value computed in the block makes the computing
// instruction write the guest slot. Then each instruction becomes one cinst
// with a dense opcode: separate forms for 32- and 64-bit integer ops with a
// register or an immediate operand, loads and stores by size with the
// Memory TLB probed inline, SHL/ADD/LD address arithmetic fused into one
// indexed load or store, a CMP fused with the BRANCH that ends the block,
// FLAGS of the common kinds as five slot writes, 128-bit loads and stores
// (indexed too), packed .f32/.f64 ADD SUB MUL DIV and 64-bit unpacks, a
// 64-bit load or a scalar zero-extended into an xmm register together with
// the JOIN and PUT.b128 that follow (movsd, movq). Float ops use the host's
// SSE result when MXCSR and the values allow it and sse.go's exact
// MXCSR-aware path otherwise. Everything else runs
// through the reference semantics in slow.go, alu.go, flags.go, float.go,
// vec.go and sys.go, which the tests compare the fast forms with.
//
// Each block ends by naming a successor index; the compiled successor is
// cached in the block, so a loop runs from block to block with no map
// lookup; computed jumps go through a small direct-mapped cache, then the
// block map.
//
// Breakpoints are read from InterpOptions when a block is translated.
// Guest instructions are counted per block (len(VBlock.Guest)); a trap
// subtracts the instructions that did not complete.
type Interpreter struct {
	mem    *Memory
	tr     Translator
	opts   InterpOptions
	f      *frame
	blocks map[uint64]*cblock
	pages  map[uint64][]*cblock // blocks by the guest pages they were read from
	jcache [jcacheSize]*cblock  // direct-mapped cache of blocks by address
	stats  EngineStats
	tsc    uint64 // the last RDTSC value
	trap   trapInfo
	cur    *cblock // the block executing, for internal error reports
	curIdx int     // its instruction, where the engine knows it
	// smc is set when a store drops the block executing (self-modifying
	// code); exec then stops after the storing instruction, smcIdx, and
	// Run finishes its x86 instruction and goes on at the next.
	smc    bool
	smcIdx int

	// noFast disables the specialised opcodes and the register coalescing,
	// so that every instruction runs through the reference path (for tests).
	noFast bool
}

const jcacheSize = 4096

type trapInfo struct {
	kind  TrapKind
	addr  uint64
	err   error
	index int
}

var _ Engine = (*Interpreter)(nil)

// NewInterpreter returns an interpreter over guest memory mem that gets its
// code from t. It joins mem.OnCodeWrite (see ChainCodeWrite), so that a
// write to a page translated code came from invalidates that page's
// translations in this engine as in every other over mem.
func NewInterpreter(mem *Memory, t Translator, opts InterpOptions) *Interpreter {
	it := &Interpreter{
		mem:    mem,
		tr:     t,
		opts:   opts,
		f:      new(frame),
		blocks: make(map[uint64]*cblock),
		pages:  make(map[uint64][]*cblock),
	}
	ChainCodeWrite(mem, it.Invalidate)
	return it
}

// Stats returns the interpreter's counters.
func (it *Interpreter) Stats() EngineStats { return it.stats }

// Translated returns the VBlock the interpreter runs at pc (verified, and
// optimized when its options say so), or nil when it has none. The caller
// must not change it.
func (it *Interpreter) Translated(pc uint64) *VBlock {
	if b, ok := it.blocks[pc]; ok && !b.dead {
		return b.vb
	}
	return nil
}

// Edges returns how many times the block at pc, while the interpreter ran
// it, went to each of its static successors (a BRANCH's taken target, then
// its fall-through; a JMP's target): the edge profile a compiling engine
// forms traces from. It counts only with InterpOptions.HotAfter set, and
// reports false when the interpreter has no live block at pc.
func (it *Interpreter) Edges(pc uint64) ([2]uint32, bool) {
	if b, ok := it.blocks[pc]; ok && !b.dead {
		return b.edges, true
	}
	return [2]uint32{}, false
}

// Jumped returns the computed target the block at pc (ending in JMPR,
// CALLR or RET) went to the last time the interpreter ran it, and how many
// times in a row it went there; counted only with InterpOptions.HotAfter
// set. It reports false when the interpreter has no live block at pc.
func (it *Interpreter) Jumped(pc uint64) (target uint64, runs uint32, ok bool) {
	if b, ok := it.blocks[pc]; ok && !b.dead {
		return b.jumped, b.jumpedRuns, true
	}
	return 0, 0, false
}

// Invalidate drops every translation that overlaps [addr, addr+size).
func (it *Interpreter) Invalidate(addr, size uint64) {
	if size == 0 {
		return
	}
	end := addr + size
	if end < addr {
		end = ^uint64(0)
	}
	for pn := addr / PageSize; pn <= (end-1)/PageSize; pn++ {
		list := it.pages[pn]
		if len(list) == 0 {
			continue
		}
		kept := list[:0]
		for _, b := range list {
			if b.dead {
				continue
			}
			if b.addr < end && b.end > addr || b.addr == b.end && b.addr >= addr && b.addr < end {
				if b == it.cur {
					it.smc = true
				}
				b.dead = true
				if it.blocks[b.addr] == b {
					delete(it.blocks, b.addr)
				}
				it.stats.BlocksInvalidated++
				continue
			}
			kept = append(kept, b)
		}
		if len(kept) == 0 {
			delete(it.pages, pn)
		} else {
			it.pages[pn] = kept
		}
	}
}

// lookup returns the compiled block at pc, translating it if needed.
func (it *Interpreter) lookup(pc uint64) (*cblock, error) {
	slot := &it.jcache[(pc^pc>>12)%jcacheSize]
	if b := *slot; b != nil && b.addr == pc && !b.dead {
		return b, nil
	}
	b, ok := it.blocks[pc]
	if !ok {
		var err error
		if b, err = it.translate(pc); err != nil {
			return nil, err
		}
	}
	*slot = b
	return b, nil
}

// translate translates, verifies, optimizes and compiles the block at pc.
func (it *Interpreter) translate(pc uint64) (*cblock, error) {
	vb, err := it.tr.Translate(pc)
	if err != nil {
		return nil, &TranslateError{Addr: pc, Err: err}
	}
	if vb == nil || vb.Addr != pc {
		return nil, &TranslateError{Addr: pc, Err: errors.New("the translator returned no block for this address")}
	}
	if err := Verify(vb); err != nil {
		return nil, &TranslateError{Addr: pc, Err: err}
	}
	if it.opts.Optimize {
		vb = cloneBlock(vb)
		if err := Optimize(vb); err != nil {
			return nil, &TranslateError{Addr: pc, Err: err}
		}
	}
	b, err := compileBlock(vb, !it.noFast)
	if err != nil {
		return nil, &TranslateError{Addr: pc, Err: err}
	}
	b.bp = it.opts.Breakpoints[pc]
	it.blocks[pc] = b
	last := vb.End
	if last > vb.Addr {
		last--
	}
	for pn := vb.Addr / PageSize; pn <= last/PageSize; pn++ {
		it.pages[pn] = append(it.pages[pn], b)
		it.mem.MarkCode(pn * PageSize)
	}
	it.stats.BlocksTranslated++
	return b, nil
}

func cloneBlock(vb *VBlock) *VBlock {
	c := *vb
	c.Insts = append([]Inst(nil), vb.Insts...)
	c.Guest = append([]GuestInst(nil), vb.Guest...)
	return &c
}

// The ways a compiled block exits.
const (
	exitNext    = iota // control goes to next (a successor index k ≥ 0, or -1 for a computed address)
	exitSyscall        // a system call; next is the address after it
	exitTrap           // a trap; it.trap says which
	exitSMC            // a store wrote to the block's own code; it.smcIdx is the storing instruction
)

// Run runs the guest from cpu.PC until a system call, a trap, a breakpoint
// or the budget (0 for none) stops it. It never lets a Go panic escape: a
// broken invariant becomes a StopTrap with an *InternalError.
func (it *Interpreter) Run(cpu *CPU, budget uint64) (stop Stop) {
	f := it.f
	copy(f[:NumGuestSlots], cpu.State[:])
	pc := cpu.PC
	it.cur, it.curIdx = nil, -1
	defer func() {
		if r := recover(); r != nil {
			stop = it.internalStop(r, &pc)
		}
		it.cur, it.smc = nil, false
		copy(cpu.State[:], f[:NumGuestSlots])
		cpu.PC = pc
	}()
	var executed uint64
	var prev *cblock
	prevK := -1
	first := true
	for {
		if budget != 0 && executed >= budget {
			return Stop{Kind: StopBudget, PC: pc}
		}
		var b *cblock
		if prevK >= 0 {
			if b = prev.succ[prevK]; b != nil && b.dead {
				b, prev.succ[prevK] = nil, nil
			}
		}
		if b == nil {
			var err error
			it.cur = nil
			if b, err = it.lookup(pc); err != nil {
				return it.translateStop(pc, err)
			}
			if prevK >= 0 && !prev.dead {
				prev.succ[prevK] = b
			}
		} else {
			it.stats.ChainHits++
		}
		if b.bp && !first {
			return Stop{Kind: StopBreakpoint, PC: pc}
		}
		if it.opts.HotAfter != 0 {
			if b.runs >= it.opts.HotAfter {
				return Stop{Kind: StopHot, PC: pc}
			}
			b.runs++
		}
		first = false
		executed += b.nguest
		it.stats.GuestInsns += b.nguest
		it.stats.BlocksExecuted++
		it.cur, it.curIdx = b, -1
		exit, next, k, last := it.exec(f, b, budget, &executed)
		b = last
		switch exit {
		case exitNext:
			pc, prev, prevK = next, b, k
		case exitSyscall:
			pc = next
			it.stats.Syscalls++
			return Stop{Kind: StopSyscall, PC: next}
		case exitSMC:
			in := &b.insts[it.smcIdx]
			it.curIdx = it.smcIdx
			next, ended, syscall, st := it.finishInsn(f, b.insts, it.smcIdx, b.end)
			if st != nil {
				it.stats.Traps++
				pc = st.PC
				it.stats.GuestInsns -= b.nguest - b.guestBefore(st.PC)
				st.Insn = b.insnText(st.PC)
				return *st
			}
			if !ended {
				// The x86 instructions after the storing one did not run.
				n := b.nguest - b.guestBefore(in.X86) - 1
				it.stats.GuestInsns -= n
				executed -= n
			}
			pc, prev, prevK = next, nil, -1
			if syscall {
				it.stats.Syscalls++
				return Stop{Kind: StopSyscall, PC: next}
			}
		default:
			return it.trapStop(b, &pc)
		}
	}
}

// trapStop builds the stop for the trap it.trap in block b and moves pc to
// the faulting instruction.
func (it *Interpreter) trapStop(b *cblock, pc *uint64) Stop {
	tr := it.trap
	it.trap = trapInfo{}
	it.stats.Traps++
	in := &b.insts[tr.index]
	*pc = in.X86
	// The instructions from the faulting one on did not complete.
	it.stats.GuestInsns -= b.nguest - b.guestBefore(in.X86)
	return Stop{Kind: StopTrap, PC: in.X86, Trap: tr.kind, FaultAddr: tr.addr, Err: tr.err, Insn: b.insnText(in.X86)}
}

// translateStop builds the stop for a failed translation at pc.
func (it *Interpreter) translateStop(pc uint64, err error) Stop {
	it.stats.Traps++
	s := Stop{Kind: StopTrap, PC: pc, Trap: TrapIllegal, Err: err}
	var f *Fault
	if errors.As(err, &f) {
		s.Trap, s.FaultAddr = TrapSegv, f.Addr
	}
	return s
}

// internalStop turns a recovered panic into a trap stop.
func (it *Interpreter) internalStop(r any, pc *uint64) Stop {
	it.stats.Traps++
	ie := &InternalError{Cause: r, Addr: *pc}
	s := Stop{Kind: StopTrap, PC: *pc, Trap: TrapIllegal, Err: ie}
	if b := it.cur; b != nil {
		ie.Addr, s.PC = b.addr, b.addr
		if it.curIdx >= 0 && it.curIdx < len(b.insts) {
			in := &b.insts[it.curIdx]
			ie.Op, ie.Addr, s.PC = in.Op, in.X86, in.X86
			s.Insn = b.insnText(in.X86)
		}
		*pc = s.PC
	}
	it.cur = nil
	return s
}

// setTrap records a trap of instruction idx; exec then returns exitTrap.
func (it *Interpreter) setTrap(idx int, kind TrapKind, addr uint64, err error) {
	it.trap = trapInfo{kind: kind, addr: addr, err: err, index: idx}
}

// memTrap records a memory error of instruction idx.
func (it *Interpreter) memTrap(idx int, err error) {
	var f *Fault
	if errors.As(err, &f) {
		it.setTrap(idx, TrapSegv, f.Addr, err)
		return
	}
	it.setTrap(idx, TrapSegv, 0, err)
}

// misalignedTrap records the trap of CHKALIGN instruction idx, which
// found addr not a multiple of align.
func (it *Interpreter) misalignedTrap(idx int, addr uint64, align int) {
	it.setTrap(idx, TrapSegv, addr, &MisalignedError{Addr: addr, Align: align})
}

// guestBefore is the number of the block's guest instructions before addr.
func (b *cblock) guestBefore(addr uint64) uint64 {
	if len(b.vb.Guest) == 0 {
		n := uint64(0)
		seen := uint64(0)
		started := false
		for i := range b.vb.Insts {
			x := b.vb.Insts[i].X86
			if x == addr {
				break
			}
			if !started || x != seen {
				n++
				seen, started = x, true
			}
		}
		return n
	}
	n := uint64(0)
	for _, g := range b.vb.Guest {
		if g.Addr == addr {
			break
		}
		n++
	}
	if n > b.nguest {
		n = b.nguest
	}
	return n
}

// insnText is the disassembly of the guest instruction at addr, if known.
func (b *cblock) insnText(addr uint64) string {
	for _, g := range b.vb.Guest {
		if g.Addr == addr {
			return g.Text
		}
	}
	return ""
}

// rdtsc returns the time-stamp counter: 16 ticks per guest instruction
// executed, and always more than the previous read.
func (it *Interpreter) rdtsc() uint64 {
	v := it.stats.GuestInsns * 16
	if v <= it.tsc {
		v = it.tsc + 1
	}
	it.tsc = v
	return v
}
