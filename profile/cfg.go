package profile

import (
	"errors"
	"fmt"
	"sort"

	"github.com/gxbit/gxbit/gvinst"
)

// Code is what the static analyzer needs of the guest's code: VBlocks to
// walk the code quickly, and the GVInst of one x86 instruction lifted on
// its own, exact, for the functions that have loops. Package lift's
// *Lifter satisfies it.
type Code interface {
	Translate(addr uint64) (*gvinst.VBlock, error)
	LiftInst(addr uint64) (*gvinst.VBlock, error)
}

// Symbol is a function symbol of the program (loader.Symbol's fields).
type Symbol struct {
	Name string
	Addr uint64
	Size uint64
}

// TermKind says how an instruction passes control on.
type TermKind uint8

// The terminator kinds.
const (
	TermFall    TermKind = iota // to the next instruction
	TermJump                    // a direct jump
	TermBranch                  // a conditional branch: Targets[0] taken, Targets[1] not
	TermCall                    // a direct call: Targets[0] the callee, Targets[1] the return address
	TermCallR                   // an indirect call: Targets[1] the return address
	TermRet                     // a return
	TermJumpR                   // an indirect jump
	TermSyscall                 // a system call; control goes on to the next instruction
	TermTrap                    // a trap; control goes nowhere
)

var termNames = [...]string{"fall", "jump", "branch", "call", "callr", "ret", "jmpr", "syscall", "trap"}

// String returns the kind's name.
func (k TermKind) String() string {
	if int(k) < len(termNames) {
		return termNames[k]
	}
	return fmt.Sprintf("term%d", uint8(k))
}

// Insn is one x86 instruction of a function with its GVInst.
type Insn struct {
	Addr, Next uint64
	Text       string
	Code       []gvinst.Inst // the instruction's GVInst, the control transfer included
	Term       TermKind
	Targets    [2]uint64
}

// Block is a basic block of a function's control flow graph, at x86
// instruction granularity: it starts at a leader and ends at a control
// transfer or before the next leader.
type Block struct {
	ID     int
	Addr   uint64
	End    uint64 // the address after its last instruction
	Insns  []*Insn
	Succs  []*Block
	Preds  []*Block
	Callee uint64 // for a block ending in a direct call: the callee
	// Cold is set on a block ending in a call that only an error path
	// takes (isColdCall): loops leave it out of their bodies (Loop.Cold).
	Cold bool
	// Idom is the immediate dominator (nil for the entry and unreachable
	// blocks); RPO the block's reverse-postorder number (-1 unreachable).
	Idom *Block
	RPO  int
}

// Last returns the block's last instruction.
func (b *Block) Last() *Insn { return b.Insns[len(b.Insns)-1] }

// Func is a recovered function.
type Func struct {
	Name   string
	Entry  uint64
	Blocks []*Block // in address order; Blocks[0] need not be the entry
	ByAddr map[uint64]*Block
	// Calls are the direct callees; Indirect is set when the function has
	// an indirect jump (a switch table, a tail call through a register).
	Calls    []uint64
	Indirect bool
	Loops    []*Loop // every natural loop, outermost first within each nest
	Nests    []*Loop // the roots of the loop-nest forest, in address order
	Err      error   // the first problem met while recovering it, if any
	rpo      []*Block
}

// Program is the result of static analysis: functions and their loops.
type Program struct {
	Funcs  []*Func
	ByAddr map[uint64]*Func
	Insns  int // x86 instructions analysed
}

// StaticOptions bounds the static analyzer.
type StaticOptions struct {
	// Roots are the function entries to start from. Functions reachable
	// from them by direct calls and by code pointers loaded into
	// registers are analysed too.
	Roots []uint64
	// Symbols name functions and delimit them; optional.
	Symbols []Symbol
	// MaxInsns bounds the instructions analysed in all (0: 2,000,000).
	MaxInsns int
	// IsCode reports whether addr may hold code (an executable mapping);
	// nil accepts every address.
	IsCode func(addr uint64) bool
}

// ErrTooBig is wrapped by the error of a Func whose recovery stopped at
// StaticOptions.MaxInsns.
var ErrTooBig = errors.New("profile: instruction budget of the static analyzer spent")

// analyzer recovers functions one at a time.
type analyzer struct {
	code     Code
	syms     map[uint64]Symbol
	isCode   func(uint64) bool
	maxInsns int
	prog     *Program
}

func newAnalyzer(code Code, opts StaticOptions) *analyzer {
	an := &analyzer{code: code, syms: map[uint64]Symbol{}, isCode: opts.IsCode, maxInsns: opts.MaxInsns,
		prog: &Program{ByAddr: map[uint64]*Func{}}}
	if an.maxInsns <= 0 {
		an.maxInsns = 2_000_000
	}
	for _, s := range opts.Symbols {
		if _, ok := an.syms[s.Addr]; !ok || an.syms[s.Addr].Size == 0 {
			an.syms[s.Addr] = s
		}
	}
	return an
}

// function recovers the function at a (once) and returns it, with the
// code pointers it loads; nil when a is no code or the budget is spent.
func (an *analyzer) function(a uint64) (*Func, []uint64) {
	p := an.prog
	if f, ok := p.ByAddr[a]; ok {
		return f, nil
	}
	if an.isCode != nil && !an.isCode(a) || p.Insns >= an.maxInsns {
		return nil, nil
	}
	name := fmt.Sprintf("fn_%#x", a)
	if s, ok := an.syms[a]; ok {
		name = s.Name
	}
	f := &Func{Name: name, Entry: a}
	p.ByAddr[a] = f
	i := sort.Search(len(p.Funcs), func(i int) bool { return p.Funcs[i].Entry >= a })
	p.Funcs = append(p.Funcs, nil)
	copy(p.Funcs[i+1:], p.Funcs[i:])
	p.Funcs[i] = f
	lo, hi := a, ^uint64(0)
	if s, ok := an.syms[a]; ok && s.Size > 0 {
		hi = a + s.Size
	}
	isEntry := func(t uint64) bool {
		if t == a {
			return false
		}
		if _, ok := an.syms[t]; ok {
			return true
		}
		_, ok := p.ByAddr[t]
		return ok
	}
	insns, ptrs := walk(an.code, f, lo, hi, isEntry, an.maxInsns-p.Insns, an.isCode)
	p.Insns += len(insns)
	buildCFG(f, insns)
	for _, b := range f.Blocks {
		if b.Callee != 0 && isColdCall(an.syms[b.Callee].Name) {
			b.Cold = true
		}
	}
	f.dominators()
	f.findLoops()
	if f.hasCandidates() {
		if err := refine(an.code, f); err != nil && f.Err == nil {
			f.Err = fmt.Errorf("function %s: %w", f.Name, err)
		}
	}
	return f, ptrs
}

// Recover recovers the functions reachable from opts.Roots, their control
// flow graphs, dominators and loop-nest forests.
func Recover(code Code, opts StaticOptions) *Program {
	an := newAnalyzer(code, opts)
	work := append([]uint64(nil), opts.Roots...)
	for len(work) > 0 {
		a := work[0]
		work = work[1:]
		if _, done := an.prog.ByAddr[a]; done {
			continue
		}
		f, ptrs := an.function(a)
		if f == nil {
			continue
		}
		work = append(work, f.Calls...)
		if len(an.syms) == 0 {
			// Without symbols, functions reached only through pointers
			// (main, from _start) are found from the constants loaded.
			work = append(work, ptrs...)
		}
	}
	return an.prog
}

// walk lifts the instructions of f reachable from its entry, staying
// inside [lo, hi) and not entering other functions (a jump to one is a
// tail call). It returns the instructions and the code pointers the
// function loads as constants.
func walk(code Code, f *Func, lo, hi uint64, isEntry func(uint64) bool, budget int, isCode func(uint64) bool) (map[uint64]*Insn, []uint64) {
	insns := map[uint64]*Insn{}
	calls := map[uint64]bool{}
	var ptrs []uint64
	work := []uint64{f.Entry}
	follow := func(t uint64) {
		if t < lo || t >= hi || isEntry(t) {
			return
		}
		if _, ok := insns[t]; !ok {
			work = append(work, t)
		}
	}
	pre := map[uint64]*Insn{} // instructions lifted with a block, not walked yet
	for len(work) > 0 && len(insns) < budget {
		a := work[len(work)-1]
		work = work[:len(work)-1]
		for len(insns) < budget {
			if _, ok := insns[a]; ok {
				break
			}
			in, ok := pre[a]
			var err error
			if !ok {
				if err = liftBlock(code, a, pre); err == nil {
					in, ok = pre[a]
				}
				if !ok && err == nil {
					in, err = liftOne(code, a)
				}
			}
			if err != nil {
				if f.Err == nil {
					f.Err = fmt.Errorf("function %s: %w", f.Name, err)
				}
				break
			}
			insns[a] = in
			ptrs = append(ptrs, codePointers(in, isCode)...)
			switch in.Term {
			case TermFall, TermSyscall:
				if in.Next >= hi || isEntry(in.Next) {
					goto next
				}
				a = in.Next
				continue
			case TermJump:
				follow(in.Targets[0])
			case TermBranch:
				follow(in.Targets[0])
				follow(in.Targets[1])
			case TermCall:
				if !calls[in.Targets[0]] {
					calls[in.Targets[0]] = true
					f.Calls = append(f.Calls, in.Targets[0])
				}
				follow(in.Targets[1])
			case TermCallR:
				follow(in.Targets[1])
			case TermJumpR:
				f.Indirect = true
			}
			break
		}
	next:
	}
	if len(work) > 0 && f.Err == nil {
		f.Err = fmt.Errorf("function %s: %w", f.Name, ErrTooBig)
	}
	return insns, ptrs
}

// liftBlock lifts the VBlock at a and adds its instructions to pre, each
// with the GVInst lifted for it in the block (the block's passes may have
// dropped dead flags: exact enough to walk, not to analyse) and, for the
// last, the block's control transfer. Instructions the lifter leaves out
// of the block's guest list (nops) become empty instructions.
func liftBlock(code Code, a uint64, pre map[uint64]*Insn) error {
	vb, err := code.Translate(a)
	if err != nil {
		return err
	}
	if vb == nil || len(vb.Insts) == 0 {
		return fmt.Errorf("no code lifted at %#x", a)
	}
	guest := vb.Guest
	if len(guest) == 0 || guest[0].Addr != vb.Addr {
		guest = append([]gvinst.GuestInst{{Addr: vb.Addr, Text: "nop"}}, guest...)
	}
	last := &vb.Insts[len(vb.Insts)-1]
	j := 0
	for k, g := range guest {
		next := vb.End
		if k+1 < len(guest) {
			next = guest[k+1].Addr
		}
		in := &Insn{Addr: g.Addr, Next: next, Text: g.Text, Term: TermFall}
		for j < len(vb.Insts) && vb.Insts[j].X86 < g.Addr {
			j++
		}
		start := j
		for j < len(vb.Insts) && vb.Insts[j].X86 == g.Addr {
			j++
		}
		in.Code = vb.Insts[start:j:j]
		if k == len(guest)-1 {
			classify(in, last)
		}
		if _, ok := pre[g.Addr]; !ok {
			pre[g.Addr] = in
		}
	}
	return nil
}

// hasCandidates reports whether some loop of f may be analysed: one that
// is not rejected on sight (calls, indirect jumps, early exits, x87).
func (f *Func) hasCandidates() bool {
	for _, l := range f.Loops {
		if l.staticReject() == "" {
			return true
		}
	}
	return false
}

// refine replaces the GVInst of f's instructions by each one lifted on its
// own, exact for the analyses.
func refine(code Code, f *Func) error {
	for _, b := range f.Blocks {
		for _, x := range b.Insns {
			vb, err := code.LiftInst(x.Addr)
			if err != nil {
				return err
			}
			if vb != nil && len(vb.Insts) > 0 {
				x.Code = vb.Insts
			}
		}
	}
	return nil
}

// liftOne lifts the instruction at a and classifies its control transfer.
func liftOne(code Code, a uint64) (*Insn, error) {
	vb, err := code.LiftInst(a)
	if err != nil {
		return nil, err
	}
	if vb == nil || len(vb.Insts) == 0 {
		return nil, fmt.Errorf("no code lifted at %#x", a)
	}
	in := &Insn{Addr: a, Next: vb.End, Code: vb.Insts}
	if len(vb.Guest) > 0 {
		in.Text = vb.Guest[0].Text
		if len(vb.Guest) > 1 {
			in.Next = vb.Guest[1].Addr
		}
	}
	classify(in, &vb.Insts[len(vb.Insts)-1])
	return in, nil
}

// classify sets in's terminator kind and targets from the GVInst that
// ends its block.
func classify(in *Insn, last *gvinst.Inst) {
	switch last.Op {
	case gvinst.OpJmp:
		if last.Target[0] == in.Next {
			in.Term = TermFall
		} else {
			in.Term = TermJump
		}
	case gvinst.OpBranch:
		in.Term = TermBranch
	case gvinst.OpCall:
		in.Term = TermCall
	case gvinst.OpCallR:
		in.Term = TermCallR
		in.Targets[1] = last.Target[0]
	case gvinst.OpRet:
		in.Term = TermRet
	case gvinst.OpJmpR:
		in.Term = TermJumpR
	case gvinst.OpSyscall:
		in.Term = TermSyscall
	case gvinst.OpTrap:
		in.Term = TermTrap
	default:
		in.Term = TermFall
	}
	if in.Term != TermCallR {
		in.Targets = last.Target
	}
}

// buildCFG splits the instructions into blocks at leaders and links them.
func buildCFG(f *Func, insns map[uint64]*Insn) {
	leaders := map[uint64]bool{f.Entry: true}
	for _, in := range insns {
		switch in.Term {
		case TermJump:
			leaders[in.Targets[0]] = true
			leaders[in.Next] = true
		case TermBranch:
			leaders[in.Targets[0]] = true
			leaders[in.Targets[1]] = true
			leaders[in.Next] = true
		case TermCall, TermCallR, TermRet, TermJumpR, TermTrap, TermSyscall:
			leaders[in.Next] = true
		}
	}
	addrs := make([]uint64, 0, len(insns))
	for a := range insns {
		addrs = append(addrs, a)
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })
	f.ByAddr = map[uint64]*Block{}
	var cur *Block
	for _, a := range addrs {
		in := insns[a]
		if cur == nil || leaders[a] || cur.End != a {
			cur = &Block{ID: len(f.Blocks), Addr: a}
			f.Blocks = append(f.Blocks, cur)
			f.ByAddr[a] = cur
		}
		cur.Insns = append(cur.Insns, in)
		cur.End = in.Next
		if in.Term != TermFall {
			cur = nil
		}
	}
	link := func(b *Block, t uint64) {
		if s, ok := f.ByAddr[t]; ok {
			for _, x := range b.Succs {
				if x == s {
					return
				}
			}
			b.Succs = append(b.Succs, s)
			s.Preds = append(s.Preds, b)
		}
	}
	for _, b := range f.Blocks {
		l := b.Last()
		switch l.Term {
		case TermFall, TermSyscall:
			link(b, l.Next)
		case TermJump:
			link(b, l.Targets[0])
		case TermBranch:
			link(b, l.Targets[0])
			link(b, l.Targets[1])
		case TermCall:
			b.Callee = l.Targets[0]
			link(b, l.Targets[1])
		case TermCallR:
			link(b, l.Targets[1])
		}
	}
}

// dominators computes the immediate dominators by the iterative algorithm
// of Cooper, Harvey and Kennedy ("A simple, fast dominance algorithm").
func (f *Func) dominators() {
	entry := f.ByAddr[f.Entry]
	for _, b := range f.Blocks {
		b.RPO, b.Idom = -1, nil
	}
	if entry == nil {
		return
	}
	// Reverse postorder, iteratively.
	var post []*Block
	seen := map[*Block]bool{entry: true}
	type frame struct {
		b *Block
		i int
	}
	stack := []frame{{entry, 0}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.i < len(top.b.Succs) {
			s := top.b.Succs[top.i]
			top.i++
			if !seen[s] {
				seen[s] = true
				stack = append(stack, frame{s, 0})
			}
			continue
		}
		post = append(post, top.b)
		stack = stack[:len(stack)-1]
	}
	f.rpo = make([]*Block, len(post))
	for i, b := range post {
		f.rpo[len(post)-1-i] = b
	}
	for i, b := range f.rpo {
		b.RPO = i
	}
	entry.Idom = entry
	intersect := func(a, b *Block) *Block {
		for a != b {
			for a.RPO > b.RPO {
				a = a.Idom
			}
			for b.RPO > a.RPO {
				b = b.Idom
			}
		}
		return a
	}
	for changed := true; changed; {
		changed = false
		for _, b := range f.rpo[1:] {
			var nd *Block
			for _, p := range b.Preds {
				if p.RPO < 0 || p.Idom == nil {
					continue
				}
				if nd == nil {
					nd = p
				} else {
					nd = intersect(p, nd)
				}
			}
			if nd != nil && b.Idom != nd {
				b.Idom, changed = nd, true
			}
		}
	}
	entry.Idom = nil
}

// Dominates reports whether a dominates b.
func Dominates(a, b *Block) bool {
	if a.RPO < 0 || b.RPO < 0 {
		return false
	}
	for x := b; x != nil; x = x.Idom {
		if x == a {
			return true
		}
	}
	return false
}

// codePointers returns the constants instruction in puts into a general
// register that point at code: "lea rdi, [rip+main]" in a stripped
// program's _start.
func codePointers(in *Insn, isCode func(uint64) bool) []uint64 {
	if isCode == nil {
		return nil
	}
	var out []uint64
	for i := range in.Code {
		c := &in.Code[i]
		if c.Op != gvinst.OpPut || c.Dst >= 16 {
			continue
		}
		v := trace(in, i, c.Src[0])
		if v.kind == opdConst && v.value > 0 && isCode(uint64(v.value)) {
			out = append(out, uint64(v.value))
		}
	}
	return out
}
