package jit

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gxbit/gxbit/gvinst"
)

// The ways compiled code returns to Go. The exit word (what enter returns)
// is kind | arg<<8 | unit<<32, arg an instruction index or a successor
// index.
const (
	exitChain      = iota + 1 // the static successor arg is not linked yet
	exitIndirect              // a computed jump; the target is in machine.nextPC
	exitSyscall               // the block's SYSCALL; control goes to its target
	exitCallout               // instruction arg needs Go (its op, or a TLB miss); resume after it
	exitFuel                  // the budget is spent before block arg of this unit (0: the unit)
	exitBreakpoint            // this unit is at a breakpoint
	exitFloatTrap             // the guest unmasks an SSE exception and this unit computes in floats inline
	numExitKinds
)

// exitNames names the exit kinds in the statistics.
var exitNames = [numExitKinds]string{
	exitChain:      "chain",
	exitIndirect:   "indirect",
	exitSyscall:    "syscall",
	exitCallout:    "callout",
	exitFuel:       "fuel",
	exitBreakpoint: "breakpoint",
	exitFloatTrap:  "floattrap",
}

func exitWord(kind int, arg int, unit uint32) uint64 {
	return uint64(kind) | uint64(arg)<<8 | uint64(unit)<<32
}

// chainStubBytes is the size of a successor exit: movabs rax, imm64; mov
// rsp, [r15+exitSP]; ret. Linking overwrites its start with jmp rel32.
const chainStubBytes = 18

// compiled is the code of one unit before it is placed in the arena, with
// the offsets Go needs.
type compiled struct {
	code    []byte
	entryGo int   // offset of the entry Go uses (past the breakpoint and budget checks)
	resume  []int // per instruction: where to continue after its callout, -1 if it has none
	// chainStub are the offsets of the successor exits, -1 for none, and
	// targets their guest addresses: the last instruction's two
	// successors, then a trace's side exits.
	chainStub  []int
	targets    []uint64
	nCallouts  int
	nativeOps  int
	loop       bool   // the block's back edge to itself stays inside the unit
	floatGuard bool   // the unit's entry checks that every SSE exception is masked
	marks      []mark // where each instruction's code starts (for Disassemble)
	sites      int    // page cache entries used, from the one compileUnit was given
}

// mark names a place in a unit's code: the start of instruction inst's
// code, or the slow path of instruction slow, or, with neither (-1), what
// text says. The text of an instruction is made only when asked for
// (label): compiling does not format every instruction.
type mark struct {
	pos        int
	inst, slow int
	text       string
}

// instMark marks the start of instruction i's code.
func instMark(pos, i int) mark { return mark{pos: pos, inst: i, slow: -1} }

// label is the mark's text, vb the unit's block: "N: INST" for the start
// of instruction N, "slow path of N", or the mark's own text.
func (m mark) label(vb *gvinst.VBlock) string {
	switch {
	case m.inst >= 0:
		return fmt.Sprintf("%d: %s", m.inst, gvinst.FormatInst(&vb.Insts[m.inst]))
	case m.slow >= 0:
		return fmt.Sprintf("slow path of %d", m.slow)
	}
	return m.text
}

// compiler turns one VBlock into x86-64 code. GVInst registers live in the
// machine's frame (r15 points at it), with copies in host registers while
// the unit runs (see regalloc.go); each instruction gets its operands
// through the operand API, computes in scratch or pool registers, and puts
// its result.
type compiler struct {
	a asm
	// unitFacts are what the compiler learned of the unit before it
	// emits code (facts.go), shared by every attempt at it.
	*unitFacts
	id     uint32
	out    compiled
	slowAt []slowPath // out-of-line slow paths, emitted after the body
	cache  regCache
	locked uint16 // pool registers the current instruction uses
	// A loop unit keeps its back edge inside the unit; loopWrites are the
	// guest slots the block writes (pinned ones stay dirty across
	// iterations).
	loop       bool
	loopTop    int
	loopWrites [gvinst.NumGuestSlots]bool
	// skip marks the instructions whose work folded into others: the
	// folded addresses (unitFacts.folded), and what code generators fold
	// as they go.
	skip []bool
	// xmmKept are the guest SSE registers whose low halves a loop unit
	// keeps in host xmm registers, xmmHome[k] that of xk; noXmm are those
	// it must not, and xmmRefused those the code needed elsewhere
	// (xmmpin.go). x0 says which slot's value xmm0 holds after the float
	// code that ends at x0.pos.
	xmmKept    sseSet
	xmmHome    [16]reg
	nXmm       int // how many xmmKept has: they take the first nXmm of xmmPins
	noXmm      sseSet
	xmmRefused sseSet
	x0         xmm0Value
	cur        int // the instruction being compiled
	// siteNext is the next free entry of the machine's page caches (-1:
	// none); outOfLine are code emitters run after the body.
	siteNext  int
	outOfLine []func()
	// unitEnv is what the unit addresses outside the machine.
	unitEnv
}

// unitEnv is what a unit's code addresses outside the machine, fixed
// while the engine lives.
type unitEnv struct {
	// tlbFromMachine is the address of the Memory's read and write TLB
	// minus the machine's, or 0 when unknown: both stay where they are
	// while the engine lives, so a probe addresses a TLB entry as [r15 +
	// offset + this] when it fits 32 bits (tlbEntry).
	tlbFromMachine [2]int64
	// counts are the sites' counters COUNT takes one from inline
	// (gvinst.InterpOptions.Counts; countDown).
	counts []int64
}

// addrOf says a virtual register holds base + index*scale from
// instruction from on.
type addrOf struct {
	base, index gvinst.Reg
	scale       uint8
	from        int
}

// aliasOf says virtual register's value is register of's from instruction
// from on.
type aliasOf struct {
	of   gvinst.Reg
	from int
}

// slowPath is a jump from the body to a callout of instruction idx, whose
// resume point is back in the body.
type slowPath struct {
	jumps []int // rel32 displacements to bind to the slow path
	idx   int
	back  int      // the resume point in the body
	pre   regCache // the cache where the jumps leave: its dirty slots are stored
	post  regCache // the cache at the resume point: reloaded from the frame
}

// maxPinned is the most guest registers a loop unit keeps in host
// registers across iterations; the rest of the pool serves temporaries.
const maxPinned = len(pool) - 3

// compileUnit compiles vb as unit id. bp makes the unit's chained entry
// stop at a breakpoint. A loop unit gives its loads and stores page cache
// entries from site on (none when site is -1).
func compileUnit(vb *gvinst.VBlock, id uint32, bp bool, site int, env unitEnv) (*compiled, error) {
	if len(vb.Insts) == 0 {
		return nil, fmt.Errorf("vblock %#x is empty", vb.Addr)
	}
	return compileTrace(singleTrace(vb), id, bp, site, env)
}

// compileTrace compiles the blocks of t as unit id (see compileUnit and
// trace.go).
func compileTrace(t *traceUnit, id uint32, bp bool, site int, env unitEnv) (*compiled, error) {
	cu, _, err := compileTraceXmm(t, id, bp, site, env)
	return cu, err
}

// compileTraceXmm is compileTrace; it also returns the guest SSE
// registers that the unit does not keep in xmm registers because code
// other than float arithmetic needs them.
func compileTraceXmm(t *traceUnit, id uint32, bp bool, site int, env unitEnv) (*compiled, sseSet, error) {
	f, err := analyzeUnit(t)
	if err != nil {
		return nil, 0, err
	}
	defer f.release()
	// A loop unit first tries to keep every SSE register's low half it
	// touches in a host xmm register; one that code other than float
	// arithmetic reads or writes is left out and the unit compiled again
	// (see xmmpin.go).
	var noXmm sseSet
	for {
		cu, refused := f.compile(id, bp, site, env, noXmm)
		if refused == 0 {
			return cu, noXmm, nil
		}
		noXmm |= refused
	}
}

// compile compiles the unit f describes, keeping none of the SSE
// registers noXmm names in xmm registers. It returns the registers it
// kept there that the code could not (refused); the code is then not to
// be used.
func (f *unitFacts) compile(id uint32, bp bool, site int, env unitEnv, noXmm sseSet) (*compiled, sseSet) {
	vb, t := f.vb, f.trace
	nInsts := len(vb.Insts)
	last := &vb.Insts[nInsts-1]
	c := &compiler{unitFacts: f, id: id, siteNext: site, unitEnv: env, noXmm: noXmm}
	// The code, marks, slow paths and out-of-line emitters are built in
	// f's buffers, kept for the next attempt or unit; the code and marks
	// are copied out at the end.
	c.skip = append(f.bufs.skip[:0], f.folded...)
	c.a.b = f.bufs.code[:0]
	c.out.marks = f.bufs.marks[:0]
	c.slowAt = f.bufs.slowAt[:0]
	c.outOfLine = f.bufs.outOfLine[:0]
	c.out.resume = make([]int, nInsts)
	for i := range c.out.resume {
		c.out.resume[i] = -1
	}
	c.out.chainStub = []int{-1, -1}
	c.out.targets = []uint64{last.Target[0], last.Target[1]}
	c.loop = !bp && (last.Op == gvinst.OpJmp && last.Target[0] == vb.Addr ||
		last.Op == gvinst.OpBranch && (last.Target[0] == vb.Addr || last.Target[1] == vb.Addr))
	c.out.loop = c.loop
	c.out.floatGuard = c.floatGuard
	a := &c.a
	if bp {
		a.movImm64(rax, exitWord(exitBreakpoint, 0, id))
		a.exitToGo()
	}
	// test rbp, rbp; jle → fuel exit (rbp is the fuel: fuelReg)
	a.encode(mnTestMR, 8, fuelReg, regOp(fuelReg), 0)
	fuelJump := a.jcc(ccLE)
	c.out.entryGo = a.pos()
	a.encode(mnSubMI, 8, 0, regOp(fuelReg), int64(t.segs[0].nguest))
	var floatTrapJump int
	if c.floatGuard {
		// cmp dword [r15+mxTrap], 0; jne → float trap exit, before the
		// unit changes anything.
		a.encode(mnCmpMI8, 4, 0, memOp(fieldMem(offMXTrap)), 0)
		floatTrapJump = a.jcc(ccNE)
	}
	if c.loop {
		c.pinLoop()
		c.loopTop = a.pos()
		c.out.marks = append(c.out.marks, mark{pos: a.pos(), inst: -1, slow: -1, text: "loop head"})
	}
	seg := 0
	for i := range vb.Insts[:nInsts-1] {
		in := &vb.Insts[i]
		if seg+1 < len(t.segs) && t.segs[seg+1].first == i {
			seg++
			c.segmentEntry(seg)
		}
		c.out.marks = append(c.out.marks, instMark(a.pos(), i))
		c.beginInst()
		c.cur = i
		if s := f.innerSeg[i]; s >= 0 {
			switch in.Op {
			case gvinst.OpBranch:
				c.sideExit(in, t.segs[s].follow)
			case gvinst.OpJmpR, gvinst.OpCallR, gvinst.OpRet:
				c.guardTarget(in, t.segs[s].next)
			}
			c.freeDead(i)
			continue
		}
		switch {
		case c.fused[i]:
			c.out.nativeOps++
			continue // the BRANCH compares
		case c.isAliasDef(i, in) || c.skip[i]:
			c.out.nativeOps++
			continue // a copy made by renaming, an address folded
		case c.native(i, in):
			c.out.nativeOps++
		default:
			c.callout(i)
		}
		c.freeDead(i)
	}
	if seg+1 < len(t.segs) {
		// The last block of a trace is its control transfer alone.
		seg++
		c.segmentEntry(seg)
	}
	c.out.marks = append(c.out.marks, instMark(a.pos(), nInsts-1))
	c.beginInst()
	c.cur = nInsts - 1
	c.control(nInsts-1, last)
	for _, emit := range c.outOfLine {
		emit()
	}
	for _, s := range c.slowAt {
		for _, j := range s.jumps {
			a.bind(j, a.pos())
		}
		c.out.marks = append(c.out.marks, mark{pos: a.pos(), inst: -1, slow: s.idx})
		c.emitFlush(&s.pre, true)
		c.materialize(s.idx)
		a.movImm64(rax, exitWord(exitCallout, s.idx, id))
		a.exitToGo()
		// Go ran the instruction on the frame: reload what the body
		// expects in registers, and go back.
		c.out.resume[s.idx] = a.pos()
		c.emitGroupsInvalid(s.idx)
		c.emitReload(&s.post)
		a.bind(a.jmp(), s.back)
		c.out.nCallouts++
	}
	a.bind(fuelJump, a.pos())
	a.movImm64(rax, exitWord(exitFuel, 0, id))
	a.exitToGo()
	if c.floatGuard {
		a.bind(floatTrapJump, a.pos())
		a.movImm64(rax, exitWord(exitFloatTrap, 0, id))
		a.exitToGo()
	}
	code, marks := a.bytes(), c.out.marks
	c.out.code, c.out.marks = slices.Clone(code), slices.Clone(marks)
	f.bufs = compileBuffers{code: code[:0], marks: marks[:0], skip: c.skip, slowAt: c.slowAt[:0], outOfLine: c.outOfLine[:0]}
	return &c.out, c.xmmRefused
}

// operandSlots appends to uses every frame slot instruction in reads (dst
// false) or writes (dst true) through its explicit operands, in operand
// order; a wide value is two slots.
func operandSlots(uses []slotUse, in *gvinst.Inst) []slotUse {
	info := in.Op.Info()
	// Packed ops name a lane type but read and write 128-bit values.
	dstWide := in.DstType().IsWide()
	wide := in.Type.IsWide() || in.SrcType.IsWide() || info.Types == gvinst.TVec || dstWide
	si := 0
	for _, k := range info.Operands {
		switch k {
		case gvinst.OpdDst:
			uses = append(uses, slotUse{in.Dst, true})
			if dstWide {
				uses = append(uses, slotUse{in.Dst + 1, true})
			}
		case gvinst.OpdSrc, gvinst.OpdMem:
			uses = append(uses, slotUse{in.Src[si], false})
			if wide {
				uses = append(uses, slotUse{in.Src[si] + 1, false})
			}
			si++
		case gvinst.OpdSrcImm:
			if !in.HasImm {
				uses = append(uses, slotUse{in.Src[si], false})
				if wide {
					uses = append(uses, slotUse{in.Src[si] + 1, false})
				}
			}
			si++
		}
	}
	return uses
}

// freeDead forgets the virtual registers no instruction's code after idx
// reads (findReads: reads renamed to another register do not count; a
// callout that reads one gets it from the renamed register's frame slot,
// see materialize): their values need never reach the frame.
func (c *compiler) freeDead(idx int) {
	for i := range c.cache.e {
		e := &c.cache.e[i]
		if e.valid && e.slot.IsVirtual() && c.nextRead(e.slot) >= len(c.vb.Insts) {
			*e = cacheEntry{}
		}
	}
	for k := range c.cache.x {
		if x := &c.cache.x[k]; x.valid && c.nextRead(x.slot) >= len(c.vb.Insts) {
			*x = xmmEntry{}
		}
	}
}

// findAliases finds the copies the compiler need not make: GET or MOV of
// 8 bytes into a virtual register written nowhere else, from a register
// that nothing writes before the copy's last read (an instruction that
// reads the copy and writes the original is fine: it reads first). Reads
// of the copy then read the original; a callout that reads the copy gets
// it stored to the frame first (materialize).
func (f *unitFacts) findAliases() {
	f.alias = reuse(f.alias, f.nSlots)
	for r := range f.alias {
		f.alias[r].from = -1
	}
	for i := range f.vb.Insts {
		in := &f.vb.Insts[i]
		cps, n := copies(in)
		for _, cp := range cps[:n] {
			f.tryAlias(i, cp[0], cp[1])
		}
		if in.Op == gvinst.OpPut && in.Type.Size() == 8 && !in.Type.IsWide() {
			f.tryPutAlias(i, in.Src[0], in.Dst)
		}
	}
}

// tryPutAlias makes the reads of virtual register v after PUT i of it into
// guest slot s read s instead, if s keeps v's value for as long as v is
// read: v is not written again, s and the guest state not before v's last
// read. The PUT is then v's last read, and v's register becomes s's.
func (f *unitFacts) tryPutAlias(i int, v, s gvinst.Reg) {
	if !v.IsVirtual() || s.IsVirtual() || s >= gvinst.FSBase {
		return
	}
	if _, ok := f.alias.get(v); ok {
		return
	}
	last := f.lastReadOf(v)
	if last <= i { // never read (-1), or not after the PUT
		return
	}
	for _, w := range f.writes.of(v) {
		if w >= i {
			return
		}
	}
	for _, w := range f.writes.of(s) {
		if w > i && w < last {
			return
		}
	}
	for _, w := range f.stateWriters {
		if w > i && w < last {
			return
		}
	}
	f.alias[v] = aliasOf{of: s, from: i}
}

// copies lists the (destination, source) slot pairs instruction in copies
// unchanged, the first n of cps: GET and MOV of 8 bytes, the halves of a
// wide MOV or GET, and of a JOIN.
func copies(in *gvinst.Inst) (cps [2][2]gvinst.Reg, n int) {
	switch {
	case in.Op == gvinst.OpJoin:
		return [2][2]gvinst.Reg{{in.Dst, in.Src[0]}, {in.Dst + 1, in.Src[1]}}, 2
	case (in.Op == gvinst.OpMov || in.Op == gvinst.OpGet) && in.Type.IsWide():
		return [2][2]gvinst.Reg{{in.Dst, in.Src[0]}, {in.Dst + 1, in.Src[0] + 1}}, 2
	case in.Op == gvinst.OpMov || in.Op == gvinst.OpGet && in.Type.Size() == 8:
		return [2][2]gvinst.Reg{{in.Dst, in.Src[0]}}, 1
	}
	return cps, 0
}

// isAliasDef reports whether instruction i only makes copies that are
// all renamed away.
func (f *unitFacts) isAliasDef(i int, in *gvinst.Inst) bool {
	cps, n := copies(in)
	if n == 0 {
		return false
	}
	for _, cp := range cps[:n] {
		if a, ok := f.alias.get(cp[0]); !ok || a.from != i {
			return false
		}
	}
	return true
}

// tryAlias makes v an alias of src from instruction i on, if that is
// sound (see findAliases).
func (f *unitFacts) tryAlias(i int, v, src gvinst.Reg) {
	if !v.IsVirtual() || len(f.writes.of(v)) != 1 || src == gvinst.MXCSR {
		return
	}
	last := f.lastReadOf(v)
	if last <= i { // never read (-1), or not after the copy
		return
	}
	of := src
	if a, ok := f.alias.get(of); ok && a.from < i {
		of = a.of
	}
	// Only general and SSE registers: the x87, flags and control slots
	// have implicit writers the op table does not all name.
	if !of.IsVirtual() && of >= gvinst.FSBase || of == v {
		return
	}
	for _, w := range f.writes.of(of) {
		if w >= i && w < last {
			return
		}
	}
	if !of.IsVirtual() {
		for _, w := range f.stateWriters {
			if w > i && w < last {
				return
			}
		}
	}
	f.alias[v] = aliasOf{of: of, from: i}
	// The original must stay for as long as the copy is read.
	if of.IsVirtual() && f.lastRead[of] < last {
		f.lastRead[of] = last
	}
}

// findAddresses finds the address computations loads and stores can fold:
// ADD.u64 v, a, b (b possibly SHL.u64 of c by 1 to 3, read only by the
// ADD) whose v is written nowhere else and read only as the base of
// loads and stores of at most 8 bytes, while a and c stay unchanged. It
// sets addr to them and marks the instructions they make unnecessary in
// folded.
func (f *unitFacts) findAddresses() {
	vb := f.vb
	pairs := f.pairs[:0]
	for i := range vb.Insts {
		from := len(pairs)
		for _, u := range f.usesOf(i) {
			if !u.dst {
				pairs = addOnce(pairs, from, u.r, i)
			}
		}
	}
	f.pairs = pairs
	readers := &f.readers
	readers.set(f.nSlots, pairs)
	writes := &f.writes
	resolve := func(r gvinst.Reg, at int) gvinst.Reg {
		if a, ok := f.alias.get(r); ok && a.from < at {
			return a.of
		}
		return r
	}
	unchanged := func(r gvinst.Reg, from, last int) bool {
		if !r.IsVirtual() && r >= gvinst.FSBase {
			return false
		}
		for _, w := range writes.of(r) {
			if w >= from && w < last {
				return false
			}
		}
		if !r.IsVirtual() {
			for _, w := range f.stateWriters {
				if w >= from && w < last {
					return false
				}
			}
		}
		return true
	}
	is64 := func(t gvinst.Type) bool { return t.Size() == 8 && t.IsInt() }
	f.addr = reuse(f.addr, f.nSlots)
	for r := range f.addr {
		f.addr[r].from = -1
	}
	f.folded = reuse(f.folded, len(vb.Insts))
	for i := range vb.Insts {
		in := &vb.Insts[i]
		v := in.Dst
		if in.Op != gvinst.OpAdd || !is64(in.Type) || in.HasImm || !v.IsVirtual() || len(writes.of(v)) != 1 {
			continue
		}
		if _, ok := f.alias.get(v); ok {
			continue
		}
		last := f.lastReadOf(v)
		if last <= i { // never read (-1), or not after the ADD
			continue
		}
		ok := true
		for _, k := range readers.of(v) {
			r := &vb.Insts[k]
			if !(r.Op == gvinst.OpLd || r.Op == gvinst.OpSt) || r.Src[0] != v || r.Op == gvinst.OpSt && r.Src[1] == v || r.Type.Size() > 8 || k <= i {
				ok = false
			}
		}
		if !ok {
			continue
		}
		a := resolve(in.Src[0], i)
		b := in.Src[1]
		idx, scale, shl := resolve(b, i), uint8(1), -1
		if wb, rb := writes.of(b), readers.of(b); len(wb) == 1 && wb[0] < i && len(rb) == 1 && rb[0] == i && b.IsVirtual() {
			if j := wb[0]; vb.Insts[j].Op == gvinst.OpShl && is64(vb.Insts[j].Type) && vb.Insts[j].HasImm && vb.Insts[j].Imm >= 1 && vb.Insts[j].Imm <= 3 {
				if _, aliased := f.alias.get(b); !aliased {
					shl, idx, scale = j, resolve(vb.Insts[j].Src[0], j), uint8(1)<<vb.Insts[j].Imm
				}
			}
		}
		from := i
		if shl >= 0 {
			from = shl
		}
		if a == v || idx == v || !unchanged(a, i, last) || !unchanged(idx, from, last) {
			continue
		}
		f.addr[v] = addrOf{base: a, index: idx, scale: scale, from: i}
		f.folded[i] = true
		if shl >= 0 {
			f.folded[shl] = true
		}
		for _, r := range [2]gvinst.Reg{a, idx} {
			if r.IsVirtual() && f.lastRead[r] < last {
				f.lastRead[r] = last
			}
		}
	}
}

// aliased returns the register whose value r has at the current
// instruction: r itself, or what it is an uncopied copy of.
func (c *compiler) aliased(r gvinst.Reg) gvinst.Reg {
	if a, ok := c.alias.get(r); ok && c.cur > a.from {
		return a.of
	}
	return r
}

// materialize stores, before a callout of instruction idx (the frame
// being current), the uncopied copies and folded addresses it reads, and
// those read after it: Go may finish the x86 instruction in the
// interpreter instead of resuming the code (self-modifying code, an SSE
// exception the guest unmasks), and the interpreter reads them from the
// frame. It stores those it reads first, in operand order, then the
// others by slot.
func (c *compiler) materialize(idx int) {
	ops := c.usesOf(idx)
	for k, u := range ops {
		if !u.dst && !readsSlot(ops[:k], u.r) {
			c.materializeSlot(idx, u.r)
		}
	}
	for _, r := range c.renamed {
		from := -1
		if a, ok := c.alias.get(r); ok {
			from = a.from
		} else if ad, ok := c.addr.get(r); ok {
			from = ad.from
		}
		if idx > from && c.lastRead[r] > idx && !readsSlot(ops, r) {
			c.materializeSlot(idx, r)
		}
	}
}

// readsSlot reports whether uses read slot r.
func readsSlot(uses []slotUse, r gvinst.Reg) bool {
	for _, u := range uses {
		if !u.dst && u.r == r {
			return true
		}
	}
	return false
}

// materializeSlot stores slot r to the frame before a callout of
// instruction idx when r is a folded address or an uncopied copy there.
func (c *compiler) materializeSlot(idx int, r gvinst.Reg) {
	if ad, ok := c.addr.get(r); ok && idx > ad.from {
		c.a.encode(mnMovRM, 8, rax, memOp(slotMem(ad.base)), 0)
		c.a.encode(mnMovRM, 8, rcx, memOp(slotMem(ad.index)), 0)
		c.a.encode(mnLea, 8, rax, memOp(mem{base: rax, index: rcx, scale: ad.scale, hasIndex: true}), 0)
		c.a.encode(mnMovMR, 8, rax, memOp(slotMem(r)), 0)
		return
	}
	if a, ok := c.alias.get(r); ok && idx > a.from {
		c.a.encode(mnMovRM, 8, rax, memOp(slotMem(a.of)), 0)
		c.a.encode(mnMovMR, 8, rax, memOp(slotMem(r)), 0)
	}
}

// findFusableCmps sets fused: per instruction, whether it is an integer
// CMP whose only reader is a BRANCH right after it (the block's closing
// one, or one inside a trace): the BRANCH then compares and jumps on the
// host flags, and the 0/1 value is never made.
func (f *unitFacts) findFusableCmps() {
	vb := f.vb
	f.fused = reuse(f.fused, len(vb.Insts))
	for b := 1; b < len(vb.Insts); b++ {
		cmp, br := &vb.Insts[b-1], &vb.Insts[b]
		if br.Op != gvinst.OpBranch || cmp.Op != gvinst.OpCmp || br.Src[0] != cmp.Dst || !cmp.Dst.IsVirtual() || f.lastReadOf(cmp.Dst) != b {
			continue
		}
		if _, ok := intCond(cmp); ok {
			f.fused[b-1] = true
		}
	}
}

// branchCond emits the test of BRANCH idx's condition (the fused CMP's
// host compare, or a test of its register) and returns the host condition
// under which it goes to its taken target.
func (c *compiler) branchCond(idx int, in *gvinst.Inst) cond {
	if idx > 0 && c.fused[idx-1] {
		cmp := &c.vb.Insts[idx-1]
		cc, _ := intCond(cmp)
		c.compare(cmp)
		return cc
	}
	r := c.src(in.Src[0])
	c.a.encode(mnTestMR, 8, r, regOp(r), 0)
	return ccNE
}

// segmentEntry emits the start of block seg of a trace (not the first):
// the fuel check of a unit entry, whose exit (out of line) stores the
// dirty guest slots and leaves for Go at the block's address, and the
// block's guest instructions taken from the fuel.
func (c *compiler) segmentEntry(seg int) {
	a := &c.a
	a.encode(mnTestMR, 8, fuelReg, regOp(fuelReg), 0)
	out := a.jcc(ccLE)
	pre := c.cache
	c.outOfLine = append(c.outOfLine, func() {
		a.bind(out, a.pos())
		c.out.marks = append(c.out.marks, mark{pos: a.pos(), inst: -1, slow: -1, text: "fuel exit"})
		c.emitFlush(&pre, false)
		a.movImm64(rax, exitWord(exitFuel, seg, c.id))
		a.exitToGo()
	})
	a.encode(mnSubMI, 8, 0, regOp(fuelReg), int64(c.trace.segs[seg].nguest))
}

// guardTarget emits a JMPR, CALLR or RET inside a trace, which goes on at guest address
// next: any other target leaves, out of line, through the jump cache
// (jumpCache) with the dirty guest slots stored as they are here.
func (c *compiler) guardTarget(in *gvinst.Inst, next uint64) {
	a := &c.a
	r := c.src(in.Src[0])
	a.movImm(rax, next)
	a.encode(mnCmpMR, 8, rax, regOp(r), 0)
	leave := a.jcc(ccNE)
	pre := c.cache
	c.outOfLine = append(c.outOfLine, func() {
		a.bind(leave, a.pos())
		c.out.marks = append(c.out.marks, mark{pos: a.pos(), inst: -1, slow: -1, text: "side exit"})
		a.encode(mnMovMR, 8, r, regOp(rax), 0)
		c.emitFlush(&pre, false)
		a.encode(mnMovMR, 8, rax, memOp(fieldMem(offNextPC)), 0)
		c.jumpCache()
	})
}

// sideExit emits a BRANCH inside a trace, which goes on along successor
// follow: the other way out is a side exit, out of line, that stores the
// dirty guest slots as they are here and leaves by a successor exit that
// linking may make a direct jump.
func (c *compiler) sideExit(in *gvinst.Inst, follow int) {
	a := &c.a
	cc := c.branchCond(c.cur, in)
	if follow == 0 {
		cc ^= 1 // leave when the branch is not taken
	}
	leave := a.jcc(cc)
	k := len(c.out.chainStub)
	c.out.chainStub = append(c.out.chainStub, -1)
	c.out.targets = append(c.out.targets, in.Target[1-follow])
	pre := c.cache
	c.outOfLine = append(c.outOfLine, func() {
		a.bind(leave, a.pos())
		c.out.marks = append(c.out.marks, mark{pos: a.pos(), inst: -1, slow: -1, text: "side exit"})
		c.emitFlush(&pre, false)
		c.chainExit(k)
	})
}

// pinLoop loads the guest registers a loop block uses most into pool
// registers, where they stay for the whole unit.
func (c *compiler) pinLoop() {
	var uses guestUses
	for _, u := range c.uses {
		r := u.r
		if r.IsVirtual() {
			continue
		}
		if u.dst {
			c.loopWrites[r] = true
		}
		if r < gvinst.X0 || r < gvinst.FSBase && (r-gvinst.X0)%2 == 0 {
			uses[r]++
		}
	}
	c.pinXmm(&uses)
	var buf [gvinst.NumGuestSlots]gvinst.Reg
	cands := buf[:0]
	for r, n := range uses {
		if n > 0 {
			cands = append(cands, gvinst.Reg(r))
		}
	}
	uses.sort(cands)
	if len(cands) > maxPinned {
		cands = cands[:maxPinned]
	}
	for i, r := range cands {
		c.a.encode(mnMovRM, 8, pool[i], memOp(slotMem(r)), 0)
		c.cache.e[i] = cacheEntry{valid: true, pinned: true, slot: r, dirty: c.loopWrites[r]}
	}
}

// guestUses counts, per guest slot, the times a loop block names it.
type guestUses [gvinst.NumGuestSlots]int

// sort sorts guest slots rs by their uses, most first, then by slot.
func (u *guestUses) sort(rs []gvinst.Reg) {
	slices.SortFunc(rs, func(a, b gvinst.Reg) int {
		if u[a] != u[b] {
			return cmp.Compare(u[b], u[a])
		}
		return cmp.Compare(a, b)
	})
}

// guestCount is the number of x86 instructions of vb.
func guestCount(vb *gvinst.VBlock) uint64 {
	if len(vb.Guest) != 0 {
		return uint64(len(vb.Guest))
	}
	n := uint64(0)
	var prev uint64
	for i := range vb.Insts {
		if x := vb.Insts[i].X86; i == 0 || x != prev {
			n++
			prev = x
		}
	}
	return n
}

// callout makes instruction idx run in Go (the interpreter's semantics):
// every dirty slot goes to the frame first, and the pinned registers come
// back from it after.
func (c *compiler) callout(idx int) {
	c.emitFlush(&c.cache, true)
	c.materialize(idx)
	c.a.movImm64(rax, exitWord(exitCallout, idx, c.id))
	c.a.exitToGo()
	c.out.resume[idx] = c.a.pos()
	c.out.nCallouts++
	c.cache.afterCallout()
	c.emitGroupsInvalid(idx)
	c.emitReload(&c.cache)
}

// slowJump records jumps (from conditional branches just emitted, with
// cache state pre where they leave) to a callout of instruction idx that
// resumes at the current position; the caller sets the resume point with
// c.out.resume[idx].
func (c *compiler) slowJump(idx int, pre *regCache, jumps ...int) {
	c.slowAt = append(c.slowAt, slowPath{jumps: jumps, idx: idx, back: c.a.pos(), pre: *pre, post: c.cache})
}

func slotMem(r gvinst.Reg) mem { return mem{base: r15, disp: int32(8 * r)} }
func fieldMem(off uintptr) mem { return mem{base: r15, disp: int32(off)} }

// srcOrImm returns the second source of a binary op in a register: the
// source's, or scratch d loaded with the immediate.
func (c *compiler) srcOrImm(d reg, in *gvinst.Inst) reg {
	if in.HasImm {
		c.a.movImm(d, uint64(in.Imm))
		return d
	}
	return c.src(in.Src[1])
}

// native emits instruction idx as host code, or reports false having
// emitted nothing.
func (c *compiler) native(idx int, in *gvinst.Inst) bool {
	t := in.Type
	// The host's MXCSR stands for the guest's while compiled code runs:
	// whatever reads or writes the slot runs in Go, where the slot is
	// current.
	if in.Dst == gvinst.MXCSR {
		return false
	}
	for _, r := range in.Src {
		if r == gvinst.MXCSR {
			return false
		}
	}
	if t.IsFloat() || in.SrcType.IsFloat() {
		return c.float(idx, in) || c.nativeMore(idx, in)
	}
	return c.nativeMove(idx, in) || c.nativeInt(idx, in) || c.nativeMore(idx, in)
}

// nativeMove emits the data movement ops (of any type but .f80 where it
// is wider than the forms): GET PUT MOV LI JOIN SELECT LD ST. A wide value
// moves as its two slots.
func (c *compiler) nativeMove(idx int, in *gvinst.Inst) bool {
	a := &c.a
	t := in.Type
	sz := t.Size()
	switch in.Op {
	case gvinst.OpGet, gvinst.OpPut, gvinst.OpMov:
		if in.Op == gvinst.OpPut && sz == 8 && !t.IsWide() && c.putXmm(in.Dst, in.Src[0]) {
			return true
		}
		if t.IsWide() {
			if c.moveWideXmm(in) {
				return true
			}
			if in.Dst == in.Src[0]+1 || in.Dst+1 == in.Src[0] {
				// Through scratch: the halves overlap.
				c.srcTo(rax, in.Src[0])
				c.srcTo(rcx, in.Src[0]+1)
				c.put(in.Dst, rax)
				c.put(in.Dst+1, rcx)
				return true
			}
			lo, hi := c.src(in.Src[0]), c.src(in.Src[0]+1)
			c.put(in.Dst, lo)
			c.put(in.Dst+1, hi)
			return true
		}
		if in.Op == gvinst.OpMov {
			sz = 8
		}
		s := c.src(in.Src[0])
		d := c.dstRegFrom(in.Dst, in.Src[0])
		if sz < 4 || d != s || sz == 4 {
			a.extend(d, regOp(s), sz, false)
		}
		return true
	case gvinst.OpLi:
		if t.IsWide() {
			c.putImm(in.Dst, uint64(in.Imm))
			c.putImm(in.Dst+1, 0)
			return true
		}
		c.putImm(in.Dst, uint64(in.Imm)&t.Mask())
		return true
	case gvinst.OpJoin:
		c.srcTo(rax, in.Src[0])
		c.srcTo(rcx, in.Src[1])
		c.put(in.Dst, rax)
		c.put(in.Dst+1, rcx)
		return true
	case gvinst.OpSelect:
		slots := 1
		if t.IsWide() {
			slots = 2
		}
		// Nothing is allocated after the test: the flags stay.
		cond := c.src(in.Src[0])
		for s := 0; s < slots; s++ {
			c.srcTo(rax+reg(s), in.Src[2]+gvinst.Reg(s))
		}
		a.encode(mnTestMR, 8, cond, regOp(cond), 0)
		for s := 0; s < slots; s++ {
			a.cmov(ccNE, rax+reg(s), c.operand(in.Src[1]+gvinst.Reg(s)))
		}
		for s := 0; s < slots; s++ {
			c.put(in.Dst+gvinst.Reg(s), rax+reg(s))
		}
		return true
	case gvinst.OpLd:
		return c.memAccess(idx, in, false)
	case gvinst.OpSt:
		return c.memAccess(idx, in, true)
	}
	return false
}

// aluForms are the host forms of the two-operand integer ops: reg-reg and
// reg-imm32.
var aluForms = map[gvinst.Op][2]mn{
	gvinst.OpAdd: {mnAddMR, mnAddMI},
	gvinst.OpSub: {mnSubMR, mnSubMI},
	gvinst.OpAnd: {mnAndMR, mnAndMI},
	gvinst.OpOr:  {mnOrMR, mnOrMI},
	gvinst.OpXor: {mnXorMR, mnXorMI},
}

// fitsImm32 reports whether v is an immediate a 32- or 64-bit host
// operation of size sz takes as it is.
func fitsImm32(v int64, sz int) bool {
	if sz == 4 {
		return true
	}
	return v == int64(int32(v))
}

// binary emits ADD SUB MUL AND OR XOR of 4 or 8 bytes, computing in the
// destination's register when it can: a 32-bit host operation clears the
// upper half as GVInst's zero-extension does.
func (c *compiler) binary(in *gvinst.Inst, sz int) {
	a := &c.a
	x := c.src(in.Src[0])
	var y reg
	imm := in.HasImm && fitsImm32(in.Imm, sz)
	if !imm {
		y = c.srcOrImm(rcx, in)
	}
	// add with an immediate: lea, one instruction.
	if in.Op == gvinst.OpAdd && imm {
		d := c.dstRegFrom(in.Dst, in.Src[0])
		if in.Imm == 0 && sz == 8 {
			if d != x {
				a.encode(mnMovMR, 8, x, regOp(d), 0)
			}
			return
		}
		a.encode(mnLea, sz, d, memOp(mem{base: x, disp: int32(in.Imm)}), 0)
		return
	}
	d := c.dstRegFrom(in.Dst, in.Src[0])
	if in.Op == gvinst.OpSub && imm && d != x && in.Imm != 0 && (sz == 4 || in.Imm != -1<<31) {
		// sub of a constant into another register: lea of its negation.
		a.encode(mnLea, sz, d, memOp(mem{base: x, disp: int32(-in.Imm)}), 0)
		return
	}
	if in.Op == gvinst.OpMul && imm {
		a.encode(mnImulRMI, sz, d, regOp(x), in.Imm)
		return
	}
	if in.Op == gvinst.OpAdd && !imm && d != x && d != y {
		// Three operands: lea (its 32-bit form clears the upper half).
		a.encode(mnLea, sz, d, memOp(mem{base: x, index: y, scale: 1, hasIndex: true}), 0)
		return
	}
	if !imm && d == y && d != x {
		// The destination is the second source: compute in scratch.
		a.encode(mnMovMR, 8, x, regOp(rax), 0)
		c.aluOp(in, sz, rax, y, false)
		a.encode(mnMovMR, 8, rax, regOp(d), 0)
		return
	}
	if d != x {
		a.encode(mnMovMR, sz, x, regOp(d), 0)
	}
	c.aluOp(in, sz, d, y, imm)
}

// aluOp emits d = d op y (or op the instruction's immediate).
func (c *compiler) aluOp(in *gvinst.Inst, sz int, d, y reg, imm bool) {
	a := &c.a
	if in.Op == gvinst.OpMul {
		a.encode(mnImulRM, sz, d, regOp(y), 0)
		return
	}
	f := aluForms[in.Op]
	if imm {
		a.encode(f[1], sz, 0, regOp(d), in.Imm)
		return
	}
	a.encode(f[0], sz, y, regOp(d), 0)
}

// nativeInt emits the integer computations.
func (c *compiler) nativeInt(idx int, in *gvinst.Inst) bool {
	a := &c.a
	t := in.Type
	sz := t.Size()
	switch in.Op {
	case gvinst.OpAdd, gvinst.OpSub, gvinst.OpMul, gvinst.OpAnd, gvinst.OpOr, gvinst.OpXor:
		if !t.IsInt() {
			return false
		}
		if sz >= 4 {
			c.binary(in, sz)
			return true
		}
		// The low bytes of the 32-bit operation, zero-extended in place
		// (an AND with a constant of the type's bits needs nothing more).
		c.binary(in, 4)
		if in.Op == gvinst.OpAnd && in.HasImm && uint64(in.Imm)&^t.Mask() == 0 {
			return true
		}
		d := c.dstReg(in.Dst)
		a.extend(d, regOp(d), sz, false)
		return true
	case gvinst.OpShl, gvinst.OpShr, gvinst.OpSar:
		if !t.IsInt() {
			return false
		}
		c.shift(in)
		return true
	case gvinst.OpRol, gvinst.OpRor:
		// The host rotates by its count modulo 32 or 64, then modulo the
		// width: b mod t.Bits(), as GVInst does, for every width.
		if !t.IsInt() {
			return false
		}
		if in.HasImm && sz >= 4 {
			// rol/ror by a constant, in the destination's register.
			k := uint8(uint64(in.Imm) % uint64(t.Bits()))
			x := c.src(in.Src[0])
			d := c.dstRegFrom(in.Dst, in.Src[0])
			if d != x || sz == 4 && k == 0 {
				// (A 32-bit rotate clears the upper half itself.)
				a.encode(mnMovMR, sz, x, regOp(d), 0)
			}
			if k != 0 {
				digit := byte(0)
				if in.Op == gvinst.OpRor {
					digit = 1
				}
				a.shiftImmSized(digit, d, k, sz)
			}
			return true
		}
		c.srcTo(rax, in.Src[0])
		if in.HasImm {
			a.movImm(rcx, uint64(in.Imm))
		} else {
			c.srcTo(rcx, in.Src[1])
		}
		m := mnRolMCL
		if in.Op == gvinst.OpRor {
			m = mnRorMCL
		}
		if sz == 1 {
			m += mnRol8MCL - mnRolMCL
		}
		a.encode(m, sz, 0, regOp(rax), 0)
		a.extend(rax, regOp(rax), sz, false)
		c.put(in.Dst, rax)
		return true
	case gvinst.OpBswap:
		// The byte-reversed 64 bits of the zero-extended value, shifted
		// down to t's width.
		if !t.IsInt() {
			return false
		}
		c.srcExt(rax, in.Src[0], sz, false)
		a.b = append(a.b, 0x48, 0x0f, 0xc8) // bswap rax
		if sz < 8 {
			a.shiftImm(5, rax, uint8(64-8*sz))
		}
		c.put(in.Dst, rax)
		return true
	case gvinst.OpNot, gvinst.OpNeg:
		if !t.IsInt() {
			return false
		}
		m := mnNotM
		if in.Op == gvinst.OpNeg {
			m = mnNegM
		}
		if sz >= 4 {
			x := c.src(in.Src[0])
			d := c.dstRegFrom(in.Dst, in.Src[0])
			if d != x {
				a.encode(mnMovMR, sz, x, regOp(d), 0)
			}
			a.encode(m, sz, 0, regOp(d), 0)
			return true
		}
		c.srcTo(rax, in.Src[0])
		a.encode(m, 8, 0, regOp(rax), 0)
		a.extend(rax, regOp(rax), sz, false)
		c.put(in.Dst, rax)
		return true
	case gvinst.OpCmp:
		cc, ok := intCond(in)
		if !ok {
			return false
		}
		c.compare(in)
		// (Taking the register moves nothing but registers: the host
		// flags stay.)
		a.setcc(cc, c.dstReg(in.Dst))
		return true
	case gvinst.OpCvt:
		if !t.IsInt() || !in.SrcType.IsInt() {
			return false
		}
		s := in.SrcType
		x := c.src(in.Src[0])
		d := c.dstRegFrom(in.Dst, in.Src[0])
		if s.Size() >= sz {
			// The low sz bytes, zero-extended.
			a.extend(d, regOp(x), sz, false)
			return true
		}
		a.extend(d, regOp(x), s.Size(), s.IsSigned())
		if sz < 8 && s.IsSigned() {
			a.extend(d, regOp(d), sz, false)
		}
		return true
	case gvinst.OpFlags:
		switch gvinst.FlagKind(in.Mod) {
		case gvinst.FlagsAdd, gvinst.FlagsSub, gvinst.FlagsAdc, gvinst.FlagsSbb, gvinst.FlagsLogic, gvinst.FlagsNeg, gvinst.FlagsMul:
		default:
			return false
		}
		ccs := [4]gvinst.Reg{gvinst.CCA, gvinst.CCB, gvinst.CCR, gvinst.CCC}
		fromCC := false
		for s := 0; s < 4; s++ {
			if r := c.aliased(in.Src[s]); r >= gvinst.CCOp && r <= gvinst.CCC {
				fromCC = true
			}
		}
		if !fromCC {
			// Each operand straight into its slot's register (a dying
			// one's own register, renamed, unless a later operand reads
			// it too), one at a time: no destination is a source.
			c.putImm(gvinst.CCOp, gvinst.CCOpValue(gvinst.FlagKind(in.Mod), t))
			for s := 0; s < 4; s++ {
				x := c.src(in.Src[s])
				again := false
				for k := s + 1; k < 4; k++ {
					again = again || c.aliased(in.Src[k]) == c.aliased(in.Src[s])
				}
				var d reg
				if again {
					d = c.dstReg(ccs[s])
				} else {
					d = c.dstRegFrom(ccs[s], in.Src[s])
				}
				if d != x {
					a.encode(mnMovMR, 8, x, regOp(d), 0)
				}
				c.unlock(x)
				c.unlock(d)
			}
			return true
		}
		// Read all four first: a source may be one of the CC slots.
		scratch := [4]reg{rax, rcx, rdx, rsi}
		for s := 0; s < 4; s++ {
			c.srcTo(scratch[s], in.Src[s])
		}
		c.putImm(gvinst.CCOp, gvinst.CCOpValue(gvinst.FlagKind(in.Mod), t))
		c.put(gvinst.CCA, rax)
		c.put(gvinst.CCB, rcx)
		c.put(gvinst.CCR, rdx)
		c.put(gvinst.CCC, rsi)
		return true
	}
	return false
}

// compare emits the host compare of an integer CMP's operands, so that the
// host flags hold the condition intCond names.
func (c *compiler) compare(in *gvinst.Inst) {
	a := &c.a
	t := in.Type
	sz := t.Size()
	signed := t.IsSigned()
	if sz == 1 {
		// Byte registers are awkward to name: compare the extended values.
		c.srcExt(rax, in.Src[0], sz, signed)
		if in.HasImm {
			v := uint64(in.Imm) & t.Mask()
			if signed && v>>7&1 != 0 {
				v |= ^t.Mask()
			}
			// The extended byte fits the sign-extended imm32.
			a.encode(mnCmpMI, 8, 0, regOp(rax), int64(v))
			return
		}
		c.srcExt(rcx, in.Src[1], sz, signed)
		a.encode(mnCmpMR, 8, rcx, regOp(rax), 0)
		return
	}
	x := c.src(in.Src[0])
	if in.HasImm {
		v := int64(uint64(in.Imm) & t.Mask())
		if sz < 8 {
			// The immediate as the host sign-extends it at this size.
			v = int64(uint64(in.Imm)&t.Mask()) << (64 - 8*sz) >> (64 - 8*sz)
		}
		if sz == 2 || !fitsImm32(v, sz) {
			a.movImm(rcx, uint64(v))
			a.encode(mnCmpMR, sz, rcx, regOp(x), 0)
			return
		}
		a.encode(mnCmpMI, sz, 0, regOp(x), v)
		return
	}
	y := c.src(in.Src[1])
	a.encode(mnCmpMR, sz, y, regOp(x), 0)
}

// intCond is the host condition of an integer CMP, unsigned or signed by
// its type.
func intCond(in *gvinst.Inst) (cond, bool) {
	t := in.Type
	if !t.IsInt() {
		return 0, false
	}
	s := t.IsSigned()
	pick := func(signed, unsigned cond) cond {
		if s {
			return signed
		}
		return unsigned
	}
	switch gvinst.Cmp(in.Mod) {
	case gvinst.CmpEq, gvinst.CmpEqu:
		return ccE, true
	case gvinst.CmpNe, gvinst.CmpNeu:
		return ccNE, true
	case gvinst.CmpLt, gvinst.CmpLtu:
		return pick(ccL, ccB), true
	case gvinst.CmpLe, gvinst.CmpLeu:
		return pick(ccLE, ccBE), true
	case gvinst.CmpGt, gvinst.CmpGtu:
		return pick(ccG, ccA), true
	case gvinst.CmpGe, gvinst.CmpGeu:
		return pick(ccGE, ccAE), true
	}
	return 0, false
}

// shift emits SHL, SHR or SAR: the count is read as its low t bits, and a
// count of t.Bits() or more gives 0 (or the sign in every bit for SAR).
func (c *compiler) shift(in *gvinst.Inst) {
	a := &c.a
	t := in.Type
	sz := t.Size()
	n := uint64(t.Bits())
	digit := byte(4)
	switch in.Op {
	case gvinst.OpShr:
		digit = 5
	case gvinst.OpSar:
		digit = 7
	}
	if in.HasImm && sz >= 4 {
		if k := uint64(in.Imm) & t.Mask(); k > 0 && k < n {
			// In the destination's register; a 32-bit shift clears the
			// upper half as GVInst does.
			x := c.src(in.Src[0])
			d := c.dstRegFrom(in.Dst, in.Src[0])
			if d != x {
				a.encode(mnMovMR, sz, x, regOp(d), 0)
			}
			a.shiftImmSized(digit, d, uint8(k), sz)
			return
		}
	}
	if in.HasImm && sz < 4 {
		if k := uint64(in.Imm) & t.Mask(); k > 0 && k < n {
			// The extended value shifted in the destination's register,
			// zero-extended again unless a right shift kept it in range.
			x := c.src(in.Src[0])
			d := c.dstRegFrom(in.Dst, in.Src[0])
			a.extend(d, regOp(x), sz, in.Op == gvinst.OpSar)
			a.shiftImm(digit, d, uint8(k))
			if in.Op != gvinst.OpShr {
				a.extend(d, regOp(d), sz, false)
			}
			return
		}
	}
	c.srcExt(rax, in.Src[0], sz, in.Op == gvinst.OpSar)
	if in.HasImm {
		k := uint64(in.Imm) & t.Mask()
		switch {
		case k >= n && in.Op != gvinst.OpSar:
			a.encode(mnXorMR, 4, rax, regOp(rax), 0)
		case k >= n:
			a.shiftImm(digit, rax, uint8(n-1))
		case k > 0:
			a.shiftImm(digit, rax, uint8(k))
		}
	} else {
		c.srcExt(rcx, in.Src[1], sz, false)
		a.encode(mnCmpMI, 8, 0, regOp(rcx), int64(n))
		inRange := a.jcc(ccB)
		if in.Op == gvinst.OpSar {
			a.movImm(rcx, n-1)
		} else {
			a.encode(mnXorMR, 4, rax, regOp(rax), 0)
			a.encode(mnXorMR, 4, rcx, regOp(rcx), 0)
		}
		a.bind(inRange, a.pos())
		a.encode(forms2shift(digit), 8, 0, regOp(rax), 0)
	}
	a.extend(rax, regOp(rax), sz, false)
	c.put(in.Dst, rax)
}

func forms2shift(digit byte) mn {
	switch digit {
	case 5:
		return mnShrMCL
	case 7:
		return mnSarMCL
	}
	return mnShlMCL
}

// control emits the instruction that ends the block. Every way out stores
// the dirty guest slots first; a loop unit's back edge keeps them in
// registers and jumps to the loop's head.
func (c *compiler) control(idx int, in *gvinst.Inst) {
	a := &c.a
	switch in.Op {
	case gvinst.OpJmp:
		c.successor(0, true)
	case gvinst.OpCall:
		// Push the frame, call the callee's exit (successor 0); the
		// matching return comes back to the exit to the return address
		// (successor 1).
		c.emitFlush(&c.cache, false)
		noRoom, call := c.pushFrame(in.Target[1])
		c.chainExit(1)
		a.bind(noRoom, a.pos())
		a.bind(call, a.pos())
		c.chainExit(0)
	case gvinst.OpBranch:
		cc := c.branchCond(idx, in)
		taken := a.jcc(cc)
		c.successor(1, true)
		a.bind(taken, a.pos())
		c.successor(0, true)
	case gvinst.OpJmpR, gvinst.OpCallR, gvinst.OpRet:
		c.srcTo(rax, in.Src[0])
		c.emitFlush(&c.cache, false)
		a.encode(mnMovMR, 8, rax, memOp(fieldMem(offNextPC)), 0)
		var probe []int
		switch in.Op {
		case gvinst.OpRet:
			// A return to the address the frame on top was pushed
			// with goes back to that call's code: the host's return
			// predictor knows where.
			a.encode(mnCmpMR, 8, rax, memOp(mem{base: rsp, disp: 8}), 0)
			probe = append(probe, a.jcc(ccNE))
			a.ret()
		case gvinst.OpCallR:
			noRoom, call := c.pushFrame(in.Target[0])
			c.chainExit(0)
			probe = append(probe, noRoom, call)
		}
		for _, p := range probe {
			a.bind(p, a.pos())
		}
		c.jumpCache()
	case gvinst.OpSyscall:
		c.emitFlush(&c.cache, false)
		a.movImm64(rax, exitWord(exitSyscall, 0, c.id))
		a.exitToGo()
	default: // TRAP
		c.callout(idx)
		// A trap never resumes; should it, the block has nowhere to go.
		a.movImm64(rax, exitWord(exitCallout, idx, c.id))
		a.exitToGo()
	}
}

// jumpCache emits the computed jump to guest address rax (stored in
// machine.nextPC, the guest slots stored): a hit in the jump cache jumps
// to the cached unit, a miss leaves for Go.
func (c *compiler) jumpCache() {
	a := &c.a
	// rcx = ijcSlot(rax) * 16; a hit jumps to the cached unit.
	a.encode(mnImulRMI, 4, rcx, regOp(rax), ijcMul-1<<32)
	a.shiftImmSized(5, rcx, 32-ijcBits, 4)
	a.shiftImmSized(4, rcx, 4, 4)
	e := mem{base: r15, index: rcx, scale: 1, hasIndex: true, disp: int32(offIJC)}
	a.encode(mnCmpMR, 8, rax, memOp(e), 0)
	miss := a.jcc(ccNE)
	e.disp += 8
	a.encode(mnJmpM, 4, 0, memOp(e), 0)
	a.bind(miss, a.pos())
	a.movImm64(rax, exitWord(exitIndirect, 0, c.id))
	a.exitToGo()
}

// successor emits the way to static successor k: the loop's back edge
// when it is the block itself (and mayLoop), else the stores of the dirty
// guest slots and the exit that linking may overwrite with a direct jump.
// It leaves the host flags alone until it has branched.
func (c *compiler) successor(k int, mayLoop bool) {
	a := &c.a
	if c.loop && mayLoop && c.vb.Insts[len(c.vb.Insts)-1].Target[k] == c.vb.Addr {
		// What is not pinned must reach the frame; the head expects
		// the pinned registers only.
		for i := range c.cache.e {
			e := &c.cache.e[i]
			if e.valid && !e.pinned && e.dirty && !e.slot.IsVirtual() {
				a.encode(mnMovMR, 8, pool[i], memOp(slotMem(e.slot)), 0)
			}
		}
		// The fuel check of a unit entry, then the next iteration.
		a.encode(mnTestMR, 8, fuelReg, regOp(fuelReg), 0)
		out := a.jcc(ccLE)
		a.encode(mnSubMI, 8, 0, regOp(fuelReg), int64(c.trace.segs[0].nguest))
		a.bind(a.jmp(), c.loopTop)
		a.bind(out, a.pos())
		for i := range c.cache.e {
			e := &c.cache.e[i]
			if e.valid && e.pinned && e.dirty {
				a.encode(mnMovMR, 8, pool[i], memOp(slotMem(e.slot)), 0)
			}
		}
		c.storeXmm()
		a.movImm64(rax, exitWord(exitFuel, 0, c.id))
		a.exitToGo()
		return
	}
	c.emitFlush(&c.cache, false)
	c.chainExit(k)
}

// chainExit emits the exit to static successor k, which linking may
// overwrite with a direct jump. The guest slots must be stored.
func (c *compiler) chainExit(k int) {
	a := &c.a
	c.out.chainStub[k] = a.pos()
	a.movImm64(rax, exitWord(exitChain, k, c.id))
	a.exitToGo()
}

// pushFrame emits the frame push of a guest call whose return address is
// ret: when the return stack has room, ret and the host address of the
// code after the call go on it, and a call (to bind to the callee's way
// in) leaves. That code, where a matching return comes back, drops ret
// and falls through to what the caller emits next. It returns the jump
// taken when there is no room, and the call, both to bind. rax is kept;
// the guest slots must be stored.
func (c *compiler) pushFrame(ret uint64) (noRoom, call int) {
	a := &c.a
	// cmp [r15+retLimit], rsp; ja → no room
	a.encode(mnCmpMR, 8, rsp, memOp(fieldMem(offRetLimit)), 0)
	noRoom = a.jcc(ccA)
	a.movImm64(rcx, ret)
	a.push(rcx)
	call = a.callRel()
	a.encode(mnAddMI, 8, 0, regOp(rsp), 8)
	return noRoom, call
}

// The MXCSR bits compiled float code depends on: the exception masks
// (all set, or the instruction is a callout) and the exception flags.
const (
	mxMasks = 0x1f80
	mxFlags = 0x3f
)

// hasFloatArith reports whether vb has an instruction float may compile
// as arithmetic (not data movement) or floatCmp as a comparison, whose
// inline code is right only while the guest masks every SSE exception.
func hasFloatArith(vb *gvinst.VBlock) bool {
	for i := range vb.Insts {
		in := &vb.Insts[i]
		if !in.Type.IsFloat() && !in.SrcType.IsFloat() {
			continue
		}
		switch in.Op {
		case gvinst.OpAdd, gvinst.OpSub, gvinst.OpMul, gvinst.OpDiv, gvinst.OpSqrt, gvinst.OpCvt:
			return true
		case gvinst.OpCmp:
			if in.Type == gvinst.F32 || in.Type == gvinst.F64 {
				return true
			}
		}
	}
	return false
}

// float emits the scalar SSE instructions whose GVInst semantics are the
// host instruction's under the guest's MXCSR: ADD SUB MUL DIV SQRT of .f32
// and .f64, and the conversions SSE makes, rounded as the GVInst says.
// They run only while the guest masks every exception: the unit's entry
// checks that once (hasFloatArith, exitFloatTrap), and Go never resumes
// such a unit after a callout that unmasked one; the host MXCSR holds the
// guest's (enter loads it), so rounding, DAZ, FTZ and the exception flags
// are the guest's.
func (c *compiler) float(idx int, in *gvinst.Inst) bool {
	a := &c.a
	t, s := in.Type, in.SrcType
	if in.HasImm || t == gvinst.F80 || s == gvinst.F80 {
		return false
	}
	is64 := func(x gvinst.Type) bool { return x == gvinst.F64 }
	var body func()
	switch in.Op {
	case gvinst.OpGet, gvinst.OpPut, gvinst.OpMov, gvinst.OpLd, gvinst.OpSt, gvinst.OpLi, gvinst.OpSelect:
		// Plain data movement: the integer forms do it.
		return c.nativeMove(idx, in)
	case gvinst.OpAdd, gvinst.OpSub, gvinst.OpMul, gvinst.OpDiv:
		var m mn
		switch in.Op {
		case gvinst.OpAdd:
			m = mnAddsd
		case gvinst.OpSub:
			m = mnSubsd
		case gvinst.OpMul:
			m = mnMulsd
		default:
			m = mnDivsd
		}
		if !is64(t) {
			m += mnAddss - mnAddsd
		}
		body = func() {
			if c.mergeInto(idx) {
				a.encode(m, 4, 0, c.floatOperand(1, in.Src[1], false), 0)
				c.mergeOut(idx)
				return
			}
			c.loadF(0, in.Src[0], is64(t))
			a.encode(m, 4, 0, c.floatOperand(1, in.Src[1], is64(t)), 0)
			c.putF(in.Dst, 0, is64(t))
		}
	case gvinst.OpSqrt:
		m := mnSqrtsd
		if !is64(t) {
			m = mnSqrtss
		}
		body = func() {
			merged := c.mergeInto(idx)
			a.encode(m, 4, 0, c.floatOperand(1, in.Src[0], is64(t)), 0)
			c.putFOrMerge(idx, merged, in.Dst, is64(t))
		}
	case gvinst.OpCvt:
		r := gvinst.Rounding(in.Mod)
		switch {
		case t.IsFloat() && s.IsInt() && s.IsSigned() && (s.Size() == 4 || s.Size() == 8):
			// cvtsi2sd/ss round per MXCSR; s32 to f64 is always exact.
			if r != gvinst.RoundMXCSR && !(is64(t) && s.Size() == 4) {
				return false
			}
			m := mnCvtsi2sd
			if !is64(t) {
				m = mnCvtsi2ss
			}
			body = func() {
				merged := c.mergeInto(idx)
				a.encode(m, s.Size(), 0, regOp(c.src(in.Src[0])), 0)
				c.putFOrMerge(idx, merged, in.Dst, is64(t))
			}
		case s.IsFloat() && t.IsInt() && t.IsSigned() && (t.Size() == 4 || t.Size() == 8):
			var m mn
			switch r {
			case gvinst.RoundZero:
				m = mnCvttsd2si
			case gvinst.RoundMXCSR:
				m = mnCvtsd2si
			default:
				return false
			}
			if !is64(s) {
				m += mnCvttss2si - mnCvttsd2si
			}
			body = func() {
				a.encode(m, t.Size(), rax, c.floatOperand(1, in.Src[0], is64(s)), 0)
				c.put(in.Dst, rax)
			}
		case t == gvinst.F64 && s == gvinst.F32:
			body = func() {
				a.encode(mnCvtss2sd, 4, 0, c.floatOperand(1, in.Src[0], false), 0)
				c.putF(in.Dst, 0, true)
			}
		case t == gvinst.F32 && s == gvinst.F64 && r == gvinst.RoundMXCSR:
			body = func() {
				merged := c.mergeInto(idx)
				a.encode(mnCvtsd2ss, 4, 0, c.floatOperand(1, in.Src[0], true), 0)
				c.putFOrMerge(idx, merged, in.Dst, false)
			}
		default:
			return false
		}
	default:
		return false
	}
	if !c.floatGuard {
		panic(fmt.Sprintf("jit: %s compiled inline in a unit without the float guard", in.Op))
	}
	body()
	return true
}

// loadF loads a .f64 (or .f32) slot into xmm register x.
func (c *compiler) loadF(x reg, r gvinst.Reg, f64 bool) {
	r = c.aliased(r)
	if k, ok := c.inXmm(r); ok {
		c.a.encodeForm(&fmMovaps, 4, x, regOp(k), 0)
		return
	}
	if i := c.cache.find(r); i >= 0 {
		c.lock(i)
		c.a.encode(mnMovqXR, 4, x, regOp(pool[i]), 0)
		return
	}
	m := mnMovsdRM
	if !f64 {
		m = mnMovssRM
	}
	c.a.encode(m, 4, x, memOp(slotMem(r)), 0)
}

// floatOperand returns slot r as the r/m operand of a scalar SSE
// instruction: xmm register x loaded from its register copy, or the frame
// slot itself.
func (c *compiler) floatOperand(x reg, r gvinst.Reg, f64 bool) operand {
	r = c.aliased(r)
	if k, ok := c.inXmm(r); ok {
		return regOp(k)
	}
	if c.cache.find(r) >= 0 {
		c.loadF(x, r, f64)
		return regOp(x)
	}
	return memOp(slotMem(r))
}

// putF makes xmm register x's low .f64 (or .f32, zero-extended) the new
// value of slot r.
func (c *compiler) putF(r gvinst.Reg, x reg, f64 bool) {
	if x == 0 && f64 && c.putVirtualXmm(r) {
		c.x0 = xmm0Value{slot: r, pos: c.a.pos(), inst: c.cur, valid: true}
		return
	}
	d := c.dstReg(r)
	if f64 {
		c.a.encode(mnMovqRX, 4, x, regOp(d), 0)
		if x == 0 {
			c.x0 = xmm0Value{slot: r, pos: c.a.pos(), inst: c.cur, valid: true}
		}
		return
	}
	c.a.encode(mnMovdRX, 4, x, regOp(d), 0)
}
