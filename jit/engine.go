//go:build linux && amd64

package jit

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/gxbit/gxbit/gvinst"
)

// quantum is the most guest instructions compiled code runs before it
// returns to Go, so that the Go runtime (its garbage collector, above all)
// never waits long for this goroutine: about a millisecond.
const quantum = 1 << 20

// arenaBytes is the size of the code memory; when it fills up, every unit
// is dropped and compiling starts over.
const arenaBytes = 64 << 20

// unit is one compiled VBlock, or trace of VBlocks (trace.go), in the
// arena.
type unit struct {
	id         uint32
	addr, end  uint64 // the first block's address, the last block's end
	vb         *gvinst.VBlock
	trace      *traceUnit
	at         int     // arena offset of the code
	entryChain uintptr // where linked jumps enter: breakpoint and budget checks first
	entryGo    uintptr // where Go enters
	resume     []uintptr
	chainStub  []int // arena offsets of the successor exits, -1 for none
	targets    []uint64
	incoming   []link // linked jumps into this unit
	bp         bool
	dead       bool
	floatGuard bool // its entry leaves for Go while the guest unmasks an SSE exception
}

// link is successor k of unit from, jumping straight to another unit.
type link struct {
	from *unit
	k    int
}

// Engine is the compiling CPU engine: see the package documentation. It is
// not safe for concurrent use.
type Engine struct {
	mem    *gvinst.Memory
	tr     gvinst.Translator
	opts   gvinst.InterpOptions
	interp *gvinst.Interpreter // the reference semantics of callouts
	m      *machine
	arena  *codeArena
	units  []*unit
	byAddr map[uint64]*unit
	pages  map[uint64][]*unit
	stats  gvinst.EngineStats
	freed  bool
	// callouts counts the callouts of each kind of instruction.
	callouts map[calloutKey]uint64
	// exits counts the returns of compiled code to Go by exit kind.
	exits [numExitKinds]uint64
	// nextSite is the first page cache entry no unit uses yet.
	nextSite int
	// tlbFromMachine is the read and the write TLB's address minus the
	// machine's: the units address TLB entries from r15
	// (compiler.tlbFromMachine).
	tlbFromMachine [2]int64
	// perf, when PerfMapEnv is set, names each unit's code for Linux perf.
	perf *perfMap
	// pending are the links decided but not yet written (link.go).
	pending []pendingLink
}

var _ gvinst.Engine = (*Engine)(nil)

// Supported reports whether this build can compile guest code (linux/amd64).
func Supported() bool { return true }

// New returns a compiling engine over guest memory mem that gets its code
// from t; opts are the interpreter's (breakpoints, the probe hook, the
// optimization passes). It joins mem.OnCodeWrite (gvinst.ChainCodeWrite),
// so that a write to a page translated code came from invalidates that
// page's translations here as in every other engine over mem. Close
// releases its code memory.
func New(mem *gvinst.Memory, t gvinst.Translator, opts gvinst.InterpOptions) (*Engine, error) {
	arena, err := newCodeArena(arenaBytes)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		mem:    mem,
		tr:     t,
		opts:   opts,
		m:      new(machine),
		arena:  arena,
		byAddr: make(map[uint64]*unit),
		pages:  make(map[uint64][]*unit),
	}
	if e.perf, err = perfMapFromEnv(); err != nil {
		arena.free()
		return nil, err
	}
	gvinst.ChainCodeWrite(mem, e.Invalidate)
	if err := e.placeRoutines(); err != nil {
		arena.free()
		return nil, err
	}
	e.m.initRetStack()
	// The interpreter runs the callouts and, when opts.HotAfter is set,
	// the cold code (tier.go), which it does not optimize: most cold
	// blocks run a few times and are never compiled, and the
	// optimization passes (and the Verify after them) cost more than
	// they save there. lookup optimizes what it compiles.
	io := opts
	io.Optimize = false
	e.interp = gvinst.NewInterpreter(mem, t, io)
	e.m.rtlb, e.m.wtlb = mem.SoftTLBs()
	at := int64(uintptr(unsafe.Pointer(e.m)))
	e.tlbFromMachine = [2]int64{int64(e.m.rtlb) - at, int64(e.m.wtlb) - at}
	e.m.clearIJC()
	return e, nil
}

// Close releases the engine's code memory; the engine must not run again.
func (e *Engine) Close() error {
	e.dropAll()
	e.freed = true
	err := e.arena.free()
	if e.perf != nil {
		if perr := e.perf.close(); err == nil {
			err = perr
		}
		e.perf = nil
	}
	return err
}

// Stats returns the engine's counters.
func (e *Engine) Stats() gvinst.EngineStats {
	s := e.stats
	s.CalloutsByOp = e.calloutsByOp()
	s.ExitsByKind = e.exitsByKind()
	return s
}

// Invalidate drops every unit that overlaps [addr, addr+size).
func (e *Engine) Invalidate(addr, size uint64) {
	if size == 0 {
		return
	}
	e.interp.Invalidate(addr, size)
	end := addr + size
	if end < addr {
		end = ^uint64(0)
	}
	for pn := addr / gvinst.PageSize; pn <= (end-1)/gvinst.PageSize; pn++ {
		list := e.pages[pn]
		if len(list) == 0 {
			continue
		}
		kept := list[:0]
		for _, u := range list {
			if u.dead {
				continue
			}
			if u.trace.overlaps(addr, end) {
				e.kill(u)
				continue
			}
			kept = append(kept, u)
		}
		if len(kept) == 0 {
			delete(e.pages, pn)
		} else {
			e.pages[pn] = kept
		}
	}
}

// kill drops unit u: nothing enters it again, and the jumps linked into it
// become exits again.
func (e *Engine) kill(u *unit) {
	u.dead = true
	if e.byAddr[u.addr] == u {
		delete(e.byAddr, u.addr)
	}
	for _, l := range u.incoming {
		if !l.from.dead {
			e.unlink(l.from, l.k)
		}
	}
	u.incoming = nil
	if c := &e.m.ijc[ijcSlot(u.addr)]; c.pc == u.addr {
		*c = ijcEntry{pc: ijcEmpty, entry: e.m.missFn}
	}
	e.stats.BlocksInvalidated++
}

// dropAll drops every unit and empties the arena.
func (e *Engine) dropAll() {
	for _, u := range e.units {
		u.dead = true
	}
	e.units = nil
	e.pending = e.pending[:0]
	clear(e.byAddr)
	clear(e.pages)
	e.m.clearIJC()
	e.m.sites = [maxSites]siteEntry{}
	e.nextSite = 0
	e.arena.reset()
}

// lookup returns the unit at pc, compiling it if needed.
func (e *Engine) lookup(pc uint64) (*unit, error) {
	if u, ok := e.byAddr[pc]; ok {
		return u, nil
	}
	start := time.Now()
	vb, err := e.translate(pc)
	if err != nil {
		return nil, err
	}
	if e.opts.Optimize {
		c := *vb
		c.Insts = append([]gvinst.Inst(nil), vb.Insts...)
		c.Guest = append([]gvinst.GuestInst(nil), vb.Guest...)
		vb = &c
		if err := gvinst.Optimize(vb); err != nil {
			return nil, &gvinst.TranslateError{Addr: pc, Err: err}
		}
	}
	if len(e.units) >= 1<<31 {
		e.dropAll()
	}
	t, err := e.formTrace(vb)
	if err != nil {
		return nil, err
	}
	vb = t.vb
	bp := e.opts.Breakpoints[pc]
	id := uint32(len(e.units))
	site := e.nextSite
	if site+len(vb.Insts) > maxSites {
		site = -1
	}
	cu, err := compileTrace(t, id, bp, site, e.unitEnv())
	if err != nil {
		return nil, &gvinst.TranslateError{Addr: pc, Err: err}
	}
	if !e.arena.room(len(cu.code) + 16) {
		e.dropAll()
		id = 0
		if cu, err = compileTrace(t, id, bp, 0, e.unitEnv()); err != nil {
			return nil, &gvinst.TranslateError{Addr: pc, Err: err}
		}
	}
	e.nextSite += cu.sites
	at, err := e.arena.add(cu.code)
	if err != nil {
		return nil, &gvinst.TranslateError{Addr: pc, Err: err}
	}
	if e.perf != nil {
		if err := e.perf.add(e.arena.addr(at), len(cu.code), vb, cu.loop, cu.marks); err != nil {
			return nil, &gvinst.TranslateError{Addr: pc, Err: err}
		}
	}
	u := &unit{
		id: id, addr: vb.Addr, end: vb.End, vb: vb, trace: t, at: at,
		entryChain: e.arena.addr(at), entryGo: e.arena.addr(at + cu.entryGo),
		resume: make([]uintptr, len(cu.resume)), chainStub: make([]int, len(cu.chainStub)), bp: bp,
		floatGuard: cu.floatGuard, targets: cu.targets,
	}
	for i, r := range cu.resume {
		if r >= 0 {
			u.resume[i] = e.arena.addr(at + r)
		}
	}
	for k, s := range cu.chainStub {
		u.chainStub[k] = -1
		if s >= 0 {
			u.chainStub[k] = at + s
		}
	}
	e.units = append(e.units, u)
	e.byAddr[pc] = u
	for _, s := range t.segs {
		last := s.end
		if last > s.addr {
			last--
		}
		for pn := s.addr / gvinst.PageSize; pn <= last/gvinst.PageSize; pn++ {
			if l := e.pages[pn]; len(l) == 0 || l[len(l)-1] != u {
				e.pages[pn] = append(l, u)
			}
			e.mem.MarkCode(pn * gvinst.PageSize)
		}
	}
	e.stats.UnitsCompiled++
	e.stats.TraceBlocks += uint64(len(t.segs) - 1)
	e.stats.CodeBytes += uint64(len(cu.code))
	e.stats.CompileTime += time.Since(start)
	return u, nil
}

// unlink restores successor k of from to its exit.
func (e *Engine) unlink(from *unit, k int) {
	site := from.chainStub[k]
	var a asm
	a.movImm64(rax, exitWord(exitChain, k, from.id))
	a.exitToGo()
	if err := e.arena.write(site, a.bytes()); err != nil {
		// The arena can no longer be changed; nothing compiled may run.
		e.dropAll()
		panic(fmt.Sprintf("jit: unlinking a jump: %v", err))
	}
}

// Run runs the guest from cpu.PC until a system call, a trap, a breakpoint
// or the budget (0 for none) stops it. A Go panic inside becomes a StopTrap
// with an *gvinst.InternalError.
func (e *Engine) Run(cpu *gvinst.CPU, budget uint64) (stop gvinst.Stop) {
	m := e.m
	copy(m.frame[:gvinst.NumGuestSlots], cpu.State[:])
	pc := cpu.PC
	var executed uint64
	defer func() {
		if r := recover(); r != nil {
			e.stats.Traps++
			stop = gvinst.Stop{Kind: gvinst.StopTrap, PC: pc, Trap: gvinst.TrapIllegal, Err: &gvinst.InternalError{Addr: pc, Cause: r}}
		}
		e.stats.GuestInsns += executed
		copy(cpu.State[:], m.frame[:gvinst.NumGuestSlots])
		cpu.PC = pc
	}()
	if e.freed {
		panic("the engine was closed")
	}
	first := true
	for {
		if budget != 0 && executed >= budget {
			return gvinst.Stop{Kind: gvinst.StopBudget, PC: pc}
		}
		if e.cold(pc) {
			if e.opts.Breakpoints[pc] && !first {
				return gvinst.Stop{Kind: gvinst.StopBreakpoint, PC: pc}
			}
			st, n := e.runCold(pc, budget, executed)
			executed += n
			pc = st.PC
			if st.Kind != gvinst.StopHot {
				return st
			}
		}
		u, err := e.lookup(pc)
		if err != nil {
			return e.translateStop(pc, err)
		}
		if u.bp && !first {
			return gvinst.Stop{Kind: gvinst.StopBreakpoint, PC: pc}
		}
		first = false
		code := u.entryGo
		for {
			fuel := int64(quantum)
			if budget != 0 {
				fuel = min(fuel, int64(budget-executed))
			}
			m.fuel = fuel
			m.mxIn = uint32(m.frame[gvinst.MXCSR])&0xffff | mxMasks
			m.tlbGen = e.mem.TLBGeneration() + 1
			m.mxTrap = 0
			if sseUnmasked(m.frame[gvinst.MXCSR]) {
				m.mxTrap = 1
			}
			w := enter(code, uintptr(unsafe.Pointer(m)))
			m.frame[gvinst.MXCSR] |= uint64(m.mxOut & mxFlags)
			executed += uint64(fuel - m.fuel)
			kind, arg := int(w&0xff), int(w>>8&0xffffff)
			var cur *unit
			if id := w >> 32; id < uint64(len(e.units)) {
				cur = e.units[id] // the miss routine's exits name unit 0, which may not exist
			}
			if kind < numExitKinds {
				e.exits[kind]++
			}
			switch kind {
			case exitChain:
				pc = cur.targets[arg]
				if e.cold(pc) {
					break
				}
				next, err := e.lookup(pc)
				if err != nil {
					return e.translateStop(pc, err)
				}
				if !cur.dead && !next.dead {
					if err := e.deferLink(cur, arg, next); err != nil {
						panic(err)
					}
				}
				code = next.entryChain
				continue
			case exitIndirect:
				pc = m.nextPC
				if e.cold(pc) {
					break
				}
				next, err := e.lookup(pc)
				if err != nil {
					return e.translateStop(pc, err)
				}
				m.ijc[ijcSlot(pc)] = ijcEntry{pc: pc, entry: next.entryChain}
				code = next.entryChain
				continue
			case exitSyscall:
				pc = cur.targets[0]
				e.stats.Syscalls++
				return gvinst.Stop{Kind: gvinst.StopSyscall, PC: pc}
			case exitBreakpoint:
				pc = cur.addr
				return gvinst.Stop{Kind: gvinst.StopBreakpoint, PC: pc}
			case exitFuel:
				pc = cur.trace.segs[arg].addr
				if budget != 0 && executed >= budget {
					return gvinst.Stop{Kind: gvinst.StopBudget, PC: pc}
				}
				if arg == 0 {
					code = cur.entryGo
					continue
				}
				// Inside a trace: go on at that block, as after any
				// other exit to a new address.
			case exitCallout, exitFloatTrap:
				// A float trap exit runs the unit's first instruction
				// here, as a callout that must not resume.
				in := &cur.vb.Insts[arg]
				e.countCallout(in)
				if st := e.interp.Exec(m.frame[:], in); st != nil {
					pc = in.X86
					executed -= cur.trace.charged(arg) - guestBefore(cur.vb, in.X86)
					return e.trapStop(cur, st)
				}
				if cur.dead || kind == exitFloatTrap || cur.floatGuard && sseUnmasked(m.frame[gvinst.MXCSR]) {
					// The instruction wrote to the code of its own block
					// (self-modifying code), or the guest unmasks an SSE
					// exception, which the unit's inline float code
					// would not raise: finish the x86 instruction and go
					// on at the next one, translated afresh (a unit with
					// float arithmetic then comes back here at once, and
					// runs one x86 instruction at a time in Go).
					next, ended, syscall, st := e.interp.FinishInsn(m.frame[:], cur.vb.Insts, arg, cur.end)
					if st != nil {
						executed -= cur.trace.charged(arg) - guestBefore(cur.vb, st.PC)
						pc = st.PC
						return e.trapStop(cur, st)
					}
					if !ended {
						executed -= cur.trace.charged(arg) - guestBefore(cur.vb, in.X86) - 1
					}
					pc = next
					if syscall {
						e.stats.Syscalls++
						return gvinst.Stop{Kind: gvinst.StopSyscall, PC: pc}
					}
					break
				}
				code = cur.resume[arg]
				continue
			default:
				panic(fmt.Sprintf("compiled code exited with an unknown word %#x", w))
			}
			break
		}
	}
}

// sseUnmasked reports whether the guest MXCSR value mxcsr unmasks an SSE
// exception.
func sseUnmasked(mxcsr uint64) bool { return uint32(mxcsr)&mxMasks != mxMasks }

// guestBefore is the number of vb's x86 instructions before the one at
// addr.
func guestBefore(vb *gvinst.VBlock, addr uint64) uint64 {
	n := uint64(0)
	if len(vb.Guest) != 0 {
		for _, g := range vb.Guest {
			if g.Addr == addr {
				break
			}
			n++
		}
		return n
	}
	var prev uint64
	for i := range vb.Insts {
		x := vb.Insts[i].X86
		if x == addr {
			break
		}
		if i == 0 || x != prev {
			n++
			prev = x
		}
	}
	return n
}

// trapStop completes the stop of a trap in unit u.
func (e *Engine) trapStop(u *unit, st *gvinst.Stop) gvinst.Stop {
	e.stats.Traps++
	s := *st
	for _, g := range u.vb.Guest {
		if g.Addr == s.PC {
			s.Insn = g.Text
			break
		}
	}
	return s
}

// translateStop builds the stop for a failed translation at pc.
func (e *Engine) translateStop(pc uint64, err error) gvinst.Stop {
	e.stats.Traps++
	s := gvinst.Stop{Kind: gvinst.StopTrap, PC: pc, Trap: gvinst.TrapIllegal, Err: err}
	var f *gvinst.Fault
	if errors.As(err, &f) {
		s.Trap, s.FaultAddr = gvinst.TrapSegv, f.Addr
	}
	return s
}

// unitEnv is what the units compiled now address outside the machine.
func (e *Engine) unitEnv() unitEnv {
	return unitEnv{tlbFromMachine: e.tlbFromMachine, counts: e.opts.Counts}
}
