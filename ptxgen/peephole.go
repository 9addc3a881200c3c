package ptxgen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gxbit/gxbit/ptx"
)

// The peephole pass (RATIONALE). The emitter lowers each GVInst
// instruction on its own: guest registers through .b64 frame registers,
// float operands through moves into .f64/.f32 temporaries, results through
// a virtual register and then a PUT. ptxas removes those moves for the real
// GPU, but gpusim executes exactly what it is given, so the generator
// removes them itself, over the kernel body's instructions (values of the
// ptx package; which registers each writes and reads, and whether it may
// be removed, come from the ptx op table):
//
//   - copy propagation inside each basic block (a register that is a copy
//     of another is read as the original; constants are propagated into
//     moves);
//   - coalescing: "X = op ...; mov Y, X" becomes "Y = op ..." when no one
//     sees the difference;
//   - dead code elimination with liveness over the whole kernel (nothing
//     is live at exit or ret: the kernel leaves registers behind only
//     through its stores);
//   - a branch to the label right after it is dropped;
//   - the footprint checks of one-block counted loops move to the loop's
//     entry (hoist.go), and such loops are then unrolled (unroll.go).
//
// Every rewrite is checked against the kernel's control flow, so the pass
// keeps the kernel's results bit for bit.

// pline is one line of the kernel body: a label, a comment or an
// instruction, a value of the ptx package.
type pline struct {
	label   string    // "name" for "name:"
	comment string    // a whole-line comment: the text after "//"
	in      *ptx.Inst // the instruction; nil for a label or a comment
	op      string    // in's opcode with its modifiers ("add.u64"), kept with in
	dead    bool
	keep    bool // dce must not drop it (a value a later pass reads)
	// What the passes ask of an instruction line again and again, cached
	// (see fill); valid until the operands change (see touch).
	cached     bool
	cdef, cuse []string
	eff        ptx.Effect // in.Effects()
	removable  bool       // in.Removable()
	ndst       int        // len(in.Dests())
	// The numbers of cdef and cuse in the register table numbered (nil
	// until a liveness analysis with a table asks; see regTable).
	numbered       *regTable
	cdefID, cuseID []int32
	// edits counts the changes of the operands (touch), for a liveness
	// analysis to find the lines that changed since it ran (live.update).
	edits uint32
}

// inst returns the line of instruction op (opcode and modifiers) on
// args. An op the ptx table refuses is a bug in the generator.
func inst(op string, args ...ptx.Operand) *pline {
	in, err := ptx.NewInst(op, args...)
	if err != nil {
		panic(fmt.Sprintf("ptxgen: bad instruction %s: %v", op, err))
	}
	return &pline{in: in, op: op}
}

// when guards l by predicate p ("%p0", or "!%p0" for the negation).
func (l *pline) when(p string) *pline {
	l.in.GuardNeg = strings.HasPrefix(p, "!")
	l.in.Guard = strings.TrimPrefix(p, "!")
	return l
}

// clone returns a copy of instruction line l.
func (l *pline) clone() *pline {
	in := *l.in
	in.Args = slices.Clone(in.Args)
	return &pline{in: &in, op: l.op}
}

// setType changes the type modifier of l, an instruction with one.
func (l *pline) setType(t ptx.Type) {
	old := l.in.Type().String()
	for k, m := range l.in.Mods {
		if m == old {
			l.in.Mods[k] = t.String()
		}
	}
	l.in.Types[0] = t
	l.op = l.in.String()
}

// touch drops l's cached register lists after its operands changed.
func (l *pline) touch() {
	l.cached = false
	l.edits++
}

// fill caches what the passes ask of instruction line l: the registers it
// writes and reads, its effects (the ptx table's, looked up by opcode
// name), whether it may be removed, how many destinations it has. The
// passes ask these of every line many times per kernel (isBranch and
// endsBlock several times per line in each liveness analysis); looked up
// in the op table each time, they were 14% of the generator's time on
// heat3d's kernels (ptx.(*Inst).Info, 0.36 of 2.6 s).
func (l *pline) fill() {
	if l.cached {
		return
	}
	// Fresh lists (a caller may still hold the old ones), in one
	// allocation: an operand names a register or two, the guard one.
	rs := l.in.DefRegs(make([]string, 0, len(l.in.Args)+1))
	nd := len(rs)
	rs = l.in.UseRegs(rs)
	l.cdef, l.cuse = rs[:nd:nd], rs[nd:]
	l.eff, l.removable, l.ndst = l.in.Effects(), l.in.Removable(), len(l.in.Dests())
	l.numbered = nil
	l.cached = true
}

// effects returns l's effects (ptx.Inst.Effects); 0 for a label or a
// comment.
func (l *pline) effects() ptx.Effect {
	if l.in == nil {
		return 0
	}
	l.fill()
	return l.eff
}

// regIDs returns the numbers in t of the registers instruction line l
// writes and reads (defs and uses, in their order).
func (l *pline) regIDs(t *regTable) (def, use []int32) {
	l.fill()
	if l.numbered != t {
		ids := make([]int32, 0, len(l.cdef)+len(l.cuse))
		for _, r := range l.cdef {
			ids = append(ids, t.id(r))
		}
		for _, r := range l.cuse {
			ids = append(ids, t.id(r))
		}
		nd := len(l.cdef)
		l.cdefID, l.cuseID = ids[:nd:nd], ids[nd:]
		l.numbered = t
	}
	return l.cdefID, l.cuseID
}

// guard returns l's guard as written ("@%p0", "@!%p0"), or "".
func (l *pline) guard() string {
	if l.in == nil || l.in.Guard == "" {
		return ""
	}
	if l.in.GuardNeg {
		return "@!" + l.in.Guard
	}
	return "@" + l.in.Guard
}

// arg returns l's operand i as PTX text: comparing it with a register or
// label name asks whether the operand is that register or label.
func (l *pline) arg(i int) string { return l.in.Args[i].String() }

// nargs is l's number of operands.
func (l *pline) nargs() int { return len(l.in.Args) }

// bodyLines turns the statements of a kernel body into lines.
func bodyLines(stmts []ptx.Stmt) []*pline {
	out := make([]*pline, 0, len(stmts))
	for _, st := range stmts {
		switch x := st.(type) {
		case *ptx.Label:
			out = append(out, &pline{label: x.Name})
		case *ptx.Comment:
			out = append(out, &pline{comment: x.Text})
		case *ptx.Inst:
			out = append(out, &pline{in: x, op: x.String()})
		}
	}
	return out
}

// stmts returns the live lines as statements of the ptx package.
func stmts(ls []*pline) []ptx.Stmt {
	out := make([]ptx.Stmt, 0, len(ls))
	for _, l := range ls {
		switch {
		case l.dead:
		case l.label != "":
			out = append(out, &ptx.Label{Name: l.label})
		case l.in == nil:
			out = append(out, &ptx.Comment{Text: l.comment})
		default:
			out = append(out, l.in)
		}
	}
	return out
}

func (l *pline) String() string {
	var b strings.Builder
	for _, st := range stmts([]*pline{l}) {
		ptx.WriteStmt(&b, st, "\t")
	}
	return b.String()
}

func (l *pline) isInst() bool { return l.in != nil && !l.dead }

// noDst says whether l writes no register.
func (l *pline) noDst() bool {
	l.fill()
	return l.ndst == 0
}

// pure says whether l only computes its destinations (the table's
// Removable: a non-volatile load counts).
func (l *pline) pure() bool {
	l.fill()
	return l.removable
}

// renameRegs replaces each register r that operand o names by f(r).
func renameRegs(o *ptx.Operand, f func(string) string) {
	switch o.Kind {
	case ptx.OpReg:
		if _, special := ptx.SpecialRegs[o.Name]; !special {
			o.Name = f(o.Name)
		}
		if o.Pair != "" {
			o.Pair = f(o.Pair)
		}
	case ptx.OpAddr:
		if strings.HasPrefix(o.Name, "%") {
			o.Name = f(o.Name)
		}
	case ptx.OpVec, ptx.OpList:
		for i := range o.Elems {
			renameRegs(&o.Elems[i], f)
		}
	}
}

// regsIn lists the registers operand o names (special registers such as
// %tid.x excluded).
func regsIn(o ptx.Operand) []string { return o.Regs(nil) }

// defs lists the registers l writes.
func (l *pline) defs() []string {
	if !l.isInst() {
		return nil
	}
	l.fill()
	return l.cdef
}

// uses lists the registers l reads.
func (l *pline) uses() []string {
	if !l.isInst() {
		return nil
	}
	l.fill()
	return l.cuse
}

// regClass is the class of a register the emitter names: b64, f64, b32,
// f32, b16 or pred.
func regClass(r string) string {
	n := strings.TrimRight(strings.TrimPrefix(r, "%"), "0123456789")
	switch n {
	case "d", "hfd", "hcd", "hld":
		return "f64"
	case "f", "hlf":
		return "f32"
	case "w", "hn", "hs", "hlw":
		return "b32"
	case "h":
		return "b16"
	case "p", "pbr", "plast", "ptrip", "ptripx":
		return "pred"
	}
	return "b64"
}

func size(class string) int {
	switch class {
	case "b64", "f64":
		return 8
	case "b32", "f32":
		return 4
	}
	return 0
}

// isReg says whether operand o is exactly one register.
func isReg(o ptx.Operand) bool {
	if o.Kind != ptx.OpReg || o.Neg || o.Pair != "" {
		return false
	}
	_, special := ptx.SpecialRegs[o.Name]
	return !special
}

// isImm says whether operand o is an integer or float literal.
func isImm(o ptx.Operand) bool { return o.Kind == ptx.OpInt || o.Kind == ptx.OpFloat }

// isMove says whether l is an unguarded "mov.bN dst, src" of registers or
// of an immediate (src).
func (l *pline) isMove() bool {
	return l.isInst() && l.in.Guard == "" && (l.op == "mov.b64" || l.op == "mov.b32") && len(l.in.Args) == 2 && isReg(l.in.Args[0])
}

// isBranch says whether l may branch to the label of its first operand.
func (l *pline) isBranch() bool {
	return l.isInst() && l.effects()&ptx.Branch != 0 && len(l.in.Args) == 1
}

// endsBlock says whether control does not fall through l.
func (l *pline) endsBlock() bool {
	return l.isInst() && l.in.Guard == "" && l.effects()&(ptx.Branch|ptx.Ends) != 0 && l.op != "trap"
}

// simplify propagates copies and constants, then coalesces moves and
// drops dead lines until neither changes anything. It returns the
// liveness of the lines as it leaves them, for the pass after it.
func simplify(ls []*pline, regs *regTable) *live {
	copyProp(ls)
	lv := liveness(ls, regs)
	for coalesce(ls, lv) || dce(ls, lv) {
		lv.update()
	}
	return lv
}

// optimize runs the peephole pass over the kernel body's lines and returns
// the new lines (dead ones still among them, marked).
func optimize(ls []*pline) []*pline {
	regs := newRegTable()
	simplify(ls, regs)
	dropFallthrough(ls)
	ls = dropUnusedLabels(ls)
	lv := simplify(ls, regs) // over the blocks the labels no longer split
	ls, lv = hoistChecks(ls, lv)
	for dce(ls, lv) { // what the unrolled copies no longer read
		lv.update()
	}
	foldDisplacements(ls, lv)
	dropFallthrough(ls)
	return ls
}

// copyProp replaces, inside each basic block, reads of a register that
// holds a copy of another with reads of the original.
func copyProp(ls []*pline) {
	copyOf := map[string]string{}
	constOf := map[string]ptx.Operand{}
	// copiesOf lists, per register, the registers copyOf has made copies
	// of it (some since written again: copyOf says which still are), so
	// that a write to it drops them without a walk over all of copyOf.
	copiesOf := map[string][]string{}
	kill := func(r string) {
		delete(copyOf, r)
		delete(constOf, r)
		for _, k := range copiesOf[r] {
			if copyOf[k] == r {
				delete(copyOf, k)
			}
		}
		delete(copiesOf, r)
	}
	forget := func() {
		clear(copyOf)
		clear(constOf)
		clear(copiesOf)
	}
	for _, l := range ls {
		if l.label != "" {
			forget()
			continue
		}
		if !l.isInst() {
			continue
		}
		if l.guard() == "" && l.op == "add.u64" && l.nargs() == 3 {
			// Adding a register known to hold 0 is a move.
			for k := 1; k <= 2; k++ {
				x, y := l.in.Args[k], l.in.Args[3-k]
				if !isReg(x) || !isReg(y) {
					continue
				}
				if c, ok := constOf[x.Name]; ok && c.Kind == ptx.OpInt && c.Int == 0 && size(regClass(y.Name)) == 8 {
					m := inst("mov.b64", l.in.Args[0], y)
					l.in, l.op = m.in, m.op
					l.touch()
					break
				}
			}
		}
		move := l.isMove()
		args := l.in.Args
		// Only a line whose operands change is touched: touching every
		// one made them all refill their facts and look changed to the
		// liveness update after it (BenchmarkOptimize 10.8 ms against
		// 8.0).
		changed := false
		for i := range args {
			if len(copyOf) == 0 && len(constOf) == 0 {
				break // nothing to propagate
			}
			if i == 0 && !l.noDst() {
				continue
			}
			if move && i == 1 && isReg(args[1]) {
				src, dst := args[1].Name, args[0].Name
				if c, ok := constOf[src]; ok && strings.HasPrefix(regClass(dst), "b") && size(regClass(src)) == size(regClass(dst)) {
					args[1] = c
					changed = true
					continue
				}
				if to, ok := copyOf[src]; ok && size(regClass(to)) == size(regClass(dst)) {
					args[1] = ptx.Reg(to)
					changed = true
				}
				continue
			}
			renameRegs(&args[i], func(r string) string {
				if to, ok := copyOf[r]; ok && regClass(to) == regClass(r) {
					changed = true
					return to
				}
				return r
			})
		}
		if changed {
			l.touch()
		}
		for _, d := range l.defs() {
			kill(d)
		}
		if move {
			d, src := args[0].Name, args[1]
			switch {
			case isReg(src) && src.Name != d:
				copyOf[d] = src.Name
				copiesOf[src.Name] = append(copiesOf[src.Name], d)
			case isImm(src) && strings.HasPrefix(regClass(d), "b"):
				constOf[d] = src
			}
		}
		if l.endsBlock() {
			forget()
		}
	}
}

// regTable numbers the registers of one kernel body for the liveness
// analyses of one optimize run. Each line keeps its registers' numbers
// (pline.regIDs) until its operands change, so that an analysis neither
// hashes a register name per line nor allocates per line: numbering the
// registers anew in each analysis was a third of its time.
type regTable struct {
	ids map[string]int32
}

// newRegTable returns an empty table.
func newRegTable() *regTable { return &regTable{ids: map[string]int32{}} }

// id returns register r's number, numbering it when it has none.
func (t *regTable) id(r string) int32 {
	id, ok := t.ids[r]
	if !ok {
		id = int32(len(t.ids))
		t.ids[r] = id
	}
	return id
}

// live is the result of a liveness analysis of lines ls: the registers
// live after each line, and the line of each label. update brings it up
// to date after rewrites that keep the control flow.
//
// It solves the data flow equations over basic blocks: each block's
// registers read before written (gen) and written (kill) are gathered
// once, the blocks' live sets iterate to the least fixed point, and one
// backward walk of each block then gives the lines' sets. (Iterating
// over lines instead took three to five walks of every line with all
// its registers to settle.) The result is the same least fixed point.
type live struct {
	ls     []*pline
	regs   *regTable
	labels map[string]int
	words  int      // the words of one register set
	out    []uint64 // line i's set: out[i*words : (i+1)*words]
	blocks []flowBlock
	// blockOf is each line's block.
	blockOf []int32
	// sets holds each block's gen, kill, in and out, in that order.
	sets []uint64
	// edits and inst are each line's pline.edits and isInst when its
	// registers were last read (see update).
	edits []uint32
	inst  []bool
}

// flowBlock is a basic block of a kernel body: lines first to last, run
// in order.
type flowBlock struct {
	first, last int
	// lineSucc are the lines control may go to after last (succs), succ
	// their blocks; -1 where there are fewer than two.
	lineSucc, succ [2]int
}

// liveOut says whether register r is live after line i.
func (v *live) liveOut(i int, r string) bool {
	id, ok := v.regs.ids[r]
	return ok && v.liveOutID(i, id)
}

// liveOutID says whether the register numbered id in v.regs is live
// after line i.
func (v *live) liveOutID(i int, id int32) bool {
	// A register numbered after the analysis was in none of its lines.
	return int(id) < 64*v.words && v.out[i*v.words+int(id/64)]&(1<<(id%64)) != 0
}

// liveAtLabel says whether register r is live at label line i: before it,
// which is after it too (a label reads and writes nothing). The passes
// ask it of the labels branches go to (v.labels). Asked of another line,
// whose set before it is not kept, it answers live: the passes then keep
// what they would have rewritten.
func (v *live) liveAtLabel(i int, r string) bool {
	if v.ls[i].label == "" {
		return true
	}
	return v.liveOut(i, r)
}

// succs returns the lines control may go to after line i (-1 where there
// are fewer than two): the branch target first, then the next line.
func succs(ls []*pline, labels map[string]int, i int) (s0, s1 int) {
	l := ls[i]
	s0, s1 = -1, -1
	if l.isBranch() {
		if t, ok := labels[l.in.Args[0].Name]; ok {
			s0 = t
		}
		if l.in.Guard == "" {
			return s0, s1
		}
	}
	if l.endsBlock() || i+1 >= len(ls) {
		return s0, s1
	}
	if s0 < 0 {
		return i + 1, -1
	}
	return s0, i + 1
}

// liveness computes which registers are live after each line of ls,
// numbering them in regs.
func liveness(ls []*pline, regs *regTable) *live {
	v := &live{ls: ls, regs: regs}
	v.build()
	return v
}

// build analyses v.ls from scratch: its labels and blocks, then the
// registers live in them.
func (v *live) build() {
	ls := v.ls
	n := len(ls)
	nlabels := 0
	for _, l := range ls {
		if l.label != "" {
			nlabels++
		}
	}
	v.labels = make(map[string]int, nlabels)
	v.edits, v.inst = make([]uint32, n), make([]bool, n)
	for i, l := range ls {
		if l.label != "" {
			v.labels[l.label] = i
		}
		if l.isInst() {
			l.regIDs(v.regs)
			v.edits[i], v.inst[i] = l.edits, true
		}
	}
	// The blocks: a block starts at line 0, at a label, and after a line
	// whose only successor is not the next line.
	v.blocks = make([]flowBlock, 0, nlabels+1)
	v.blockOf = make([]int32, n)
	for i := 0; i < n; {
		b := flowBlock{first: i}
		for {
			v.blockOf[i] = int32(len(v.blocks))
			s0, s1 := succs(ls, v.labels, i)
			i++
			if s0 != i || s1 >= 0 || i >= n || ls[i].label != "" {
				b.last, b.lineSucc = i-1, [2]int{s0, s1}
				break
			}
		}
		v.blocks = append(v.blocks, b)
	}
	for k := range v.blocks {
		b := &v.blocks[k]
		for j, s := range b.lineSucc {
			b.succ[j] = -1
			if s >= 0 {
				b.succ[j] = int(v.blockOf[s])
			}
		}
	}
	v.words = (len(v.regs.ids) + 63) / 64
	v.out = make([]uint64, n*v.words)
	v.sets = make([]uint64, 4*len(v.blocks)*v.words)
	for b := range v.blocks {
		v.gather(b)
	}
	v.solve()
	for b := range v.blocks {
		v.spread(b)
	}
}

// set returns register set k of block b (gen, kill, in, out: 0 to 3).
func (v *live) set(b, k int) []uint64 {
	at := (4*b + k) * v.words
	return v.sets[at : at+v.words : at+v.words]
}

// gen is the set of registers block b reads before it writes them.
func (v *live) gen(b int) []uint64 { return v.set(b, 0) }

// kill is the set of registers block b surely writes.
func (v *live) kill(b int) []uint64 { return v.set(b, 1) }

// bin is the set of registers live at the start of block b.
func (v *live) bin(b int) []uint64 { return v.set(b, 2) }

// bout is the set of registers live at the end of block b.
func (v *live) bout(b int) []uint64 { return v.set(b, 3) }

// gather computes block b's gen and kill from its lines.
func (v *live) gather(b int) {
	g, k := v.gen(b), v.kill(b)
	clear(g)
	clear(k)
	bl := v.blocks[b]
	for i := bl.last; i >= bl.first; i-- {
		l := v.ls[i]
		if !l.isInst() {
			continue
		}
		if l.in.Guard == "" { // a guarded write may not happen
			for _, d := range l.cdefID {
				g[d/64] &^= 1 << (d % 64)
				k[d/64] |= 1 << (d % 64)
			}
		}
		for _, u := range l.cuseID {
			g[u/64] |= 1 << (u % 64)
		}
	}
}

// solve computes the blocks' in and out sets from their gen and kill:
// from empty sets, backward over the blocks until nothing changes.
func (v *live) solve() {
	for b := range v.blocks {
		clear(v.bin(b))
		clear(v.bout(b))
	}
	for changed := true; changed; {
		changed = false
		for b := len(v.blocks) - 1; b >= 0; b-- {
			out, in, g, k := v.bout(b), v.bin(b), v.gen(b), v.kill(b)
			for _, s := range v.blocks[b].succ {
				if s >= 0 {
					for w, x := range v.bin(s) {
						out[w] |= x
					}
				}
			}
			for w := range in {
				x := g[w] | out[w]&^k[w]
				if x != in[w] {
					in[w] = x
					changed = true
				}
			}
		}
	}
}

// spread computes the sets after the lines of block b, backward from
// the block's out set.
func (v *live) spread(b int) {
	bl := v.blocks[b]
	w := v.words
	cur := v.out[bl.last*w : (bl.last+1)*w]
	copy(cur, v.bout(b))
	for i := bl.last; i > bl.first; i-- {
		prev := v.out[(i-1)*w : i*w]
		copy(prev, cur)
		if l := v.ls[i]; l.isInst() {
			if l.in.Guard == "" {
				for _, d := range l.cdefID {
					prev[d/64] &^= 1 << (d % 64)
				}
			}
			for _, u := range l.cuseID {
				prev[u/64] |= 1 << (u % 64)
			}
		}
		cur = prev
	}
}

// update brings v up to date with its lines after rewrites that kept
// the control flow: lines whose operands changed (pline.touch) or that
// died, none added, moved or removed, no branch or label changed.
// (simplify's coalescing and dead code elimination, which run in turns
// until neither changes anything, are such rewrites.) Only the changed
// lines' blocks are gathered again and only the blocks whose sets
// changed spread them to their lines: a dry kernel, whose stores are
// gone, took up to 17 rounds of dead code elimination, each with a whole
// new analysis. Where the rewrites changed the control flow after all,
// or numbered more registers than the sets hold, it analyses afresh.
func (v *live) update() {
	dirty := make([]bool, len(v.blocks))
	for i, l := range v.ls {
		isInst := l.isInst()
		if isInst == v.inst[i] && (!isInst || l.edits == v.edits[i]) {
			continue
		}
		if !v.keepsFlow(i) {
			v.build()
			return
		}
		if isInst {
			l.regIDs(v.regs)
		}
		v.edits[i], v.inst[i] = l.edits, isInst
		dirty[v.blockOf[i]] = true
	}
	if (len(v.regs.ids)+63)/64 > v.words {
		v.build()
		return
	}
	for b, d := range dirty {
		if d {
			v.gather(b)
		}
	}
	old := make([]uint64, len(v.blocks)*v.words)
	for b := range v.blocks {
		copy(old[b*v.words:], v.bout(b))
	}
	v.solve()
	for b := range v.blocks {
		if dirty[b] || !slices.Equal(old[b*v.words:(b+1)*v.words], v.bout(b)) {
			v.spread(b)
		}
	}
}

// keepsFlow says whether line i, changed since the analysis, still goes
// where it went: to the next line inside a block, to the same lines at
// the end of one.
func (v *live) keepsFlow(i int) bool {
	s0, s1 := succs(v.ls, v.labels, i)
	b := v.blocks[v.blockOf[i]]
	if i == b.last {
		return [2]int{s0, s1} == b.lineSucc
	}
	return s0 == i+1 && s1 < 0
}

// dce drops the pure instructions whose results nobody reads.
func dce(ls []*pline, v *live) bool {
	changed := false
	for i, l := range ls {
		if !l.isInst() || !l.pure() || l.keep {
			continue
		}
		// By number: a lookup by name per register and line was half of
		// dce's time, which runs up to 17 times per kernel.
		ds, _ := l.regIDs(v.regs)
		if len(ds) == 0 {
			continue
		}
		dead := true
		for _, d := range ds {
			if v.liveOutID(i, d) {
				dead = false
			}
		}
		if !dead && l.isMove() && l.arg(0) == l.arg(1) {
			dead = true
		}
		if dead {
			l.dead, changed = true, true
		}
	}
	return changed
}

// coalesce rewrites "X = op ...; ...; mov Y, X" as "Y = op ...; ..." where
// X and Y are of one class, when nothing between reads or writes Y, no
// branch on the way leaves to where Y's old value is read, and X's later
// reads in the block can read Y instead.
func coalesce(ls []*pline, v *live) bool {
	changed := false
	dirty := map[string]bool{}
	for j, m := range ls {
		if !m.isMove() || !isReg(m.in.Args[1]) {
			continue
		}
		y, x := m.in.Args[0].Name, m.in.Args[1].Name
		if x == y || dirty[x] || dirty[y] {
			continue
		}
		// Across classes (a loaded .b64 that is moved into an .f64) only a
		// load's destination can change, and only when the move is X's
		// one reader.
		cross := regClass(x) != regClass(y)
		if cross && size(regClass(x)) != size(regClass(y)) {
			continue
		}
		// Find X's definition in this block.
		i := -1
		ok := true
		for k := j - 1; k >= 0; k-- {
			l := ls[k]
			if l.label != "" || l.endsBlock() {
				ok = false
				break
			}
			if !l.isInst() {
				continue
			}
			if has(l.defs(), x) {
				if l.guard() == "" && len(l.defs()) == 1 && !l.noDst() && isReg(l.in.Args[0]) {
					i = k
				} else {
					ok = false
				}
				break
			}
			if has(l.defs(), y) || has(l.uses(), y) {
				ok = false
				break
			}
			if l.isBranch() {
				if t, found := v.labels[l.in.Args[0].Name]; !found || v.liveAtLabel(t, y) || v.liveAtLabel(t, x) {
					ok = false
					break
				}
			}
		}
		if !ok || i < 0 {
			continue
		}
		var crossType ptx.Type
		if cross {
			ld := ls[i].in
			switch ld.Type() {
			case ptx.U64, ptx.B64:
				crossType = ptx.B64
			case ptx.U32, ptx.B32:
				crossType = ptx.B32
			}
			if ld.Op != "ld" || len(ld.Types) != 1 || crossType == ptx.TypeNone {
				continue
			}
			for k := i + 1; k < j; k++ {
				if has(ls[k].uses(), x) {
					ok = false
				}
			}
			if !ok {
				continue
			}
		}
		// After the move: X's reads until it is written again become
		// reads of Y, which must not change before them; X must not be
		// read past the block.
		var rename []int
		yChanged := false
		end := false
		for k := j + 1; k < len(ls) && ok; k++ {
			l := ls[k]
			if l.label != "" {
				ok = !v.liveOut(k-1, x)
				end = true
				break
			}
			if !l.isInst() {
				continue
			}
			if has(l.uses(), x) {
				if yChanged {
					ok = false
					break
				}
				rename = append(rename, k)
			}
			if l.isBranch() {
				if t, found := v.labels[l.in.Args[0].Name]; !found || v.liveAtLabel(t, x) {
					ok = false
					break
				}
			}
			if has(l.defs(), x) {
				ok = l.guard() == ""
				end = true
				break
			}
			if has(l.defs(), y) {
				yChanged = true
			}
			if l.endsBlock() {
				end = true
				break
			}
		}
		if !ok || !end || (cross && len(rename) > 0) {
			continue
		}
		if cross {
			ls[i].setType(crossType)
		}
		re := func(l *pline, from int) {
			for a := from; a < len(l.in.Args); a++ {
				renameRegs(&l.in.Args[a], func(r string) string {
					if r == x {
						return y
					}
					return r
				})
			}
			l.touch()
		}
		ls[i].in.Args[0] = ptx.Reg(y)
		ls[i].touch()
		for k := i + 1; k < j; k++ {
			if ls[k].isInst() {
				re(ls[k], firstUse(ls[k]))
			}
		}
		for _, k := range rename {
			re(ls[k], firstUse(ls[k]))
		}
		m.dead = true
		changed = true
		// Liveness is stale for X and Y only: later candidates that
		// involve neither may still use it.
		dirty[x], dirty[y] = true, true
	}
	return changed
}

func firstUse(l *pline) int {
	if l.noDst() {
		return 0
	}
	return 1
}

func has(rs []string, r string) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

// dropFallthrough removes an unguarded branch to the label that follows it.
func dropFallthrough(ls []*pline) {
	for i, l := range ls {
		if !l.isInst() || l.guard() != "" || l.op != "bra" || l.nargs() != 1 {
			continue
		}
		for k := i + 1; k < len(ls); k++ {
			n := ls[k]
			if n.dead || n.comment != "" {
				continue
			}
			if n.label == l.in.Args[0].Name {
				l.dead = true
			}
			break
		}
	}
}

// dropUnusedLabels removes the labels no branch names: control reaches
// them only by falling through, so the blocks on either side are one
// (the thread loop of a 2D kernel whose inner iteration runs straight
// through becomes one block that hoist.go can take). A label after a
// branch to a guest block stays: it ends a loop that hoist.go may take.
func dropUnusedLabels(ls []*pline) []*pline {
	used := map[string]bool{}
	for _, l := range ls {
		if l.isBranch() {
			used[l.arg(0)] = true
		}
	}
	out := ls[:0]
	var prev *pline // the last instruction kept
	for _, l := range ls {
		if l.label != "" && !used[l.label] && !(prev != nil && prev.isBranch() && strings.HasPrefix(prev.arg(0), "$Lx")) {
			continue
		}
		if l.isInst() {
			prev = l
		}
		out = append(out, l)
	}
	return out
}

// foldDisplacements rewrites "add T, X, imm; add T, T, R; ld/st [T]" as
// "add T, X, R; ld/st [T+imm]" where T is dead after the access (the
// device address of a guest access with a displacement, once its check
// is gone).
func foldDisplacements(ls []*pline, v *live) {
	for i, a := range ls {
		if !a.isInst() || a.guard() != "" || a.op != "add.u64" || a.nargs() != 3 || !isReg(a.in.Args[0]) || a.in.Args[2].Kind != ptx.OpInt {
			continue
		}
		imm := uint64(a.in.Args[2].Int)
		if imm >= 1<<31 {
			continue
		}
		t := a.in.Args[0].Name
		j := nextLive(ls, i)
		if j < 0 {
			continue
		}
		b := ls[j]
		if b.guard() != "" || b.op != "add.u64" || b.nargs() != 3 || b.arg(0) != t || b.arg(1) != t || !isReg(b.in.Args[2]) || b.arg(2) == t {
			continue
		}
		k := nextLive(ls, j)
		if k < 0 || ls[k].guard() != "" || v.liveOut(k, t) {
			continue
		}
		m := ls[k]
		at := -1
		switch {
		case m.in.Op == "ld" && m.nargs() == 2 && isAddrOf(m.in.Args[1], t) && m.arg(0) != t:
			at = 1
		case m.in.Op == "st" && m.nargs() == 2 && isAddrOf(m.in.Args[0], t) && m.arg(1) != t:
			at = 0
		}
		if at < 0 {
			continue
		}
		b.in.Args[1] = a.in.Args[1]
		m.in.Args[at] = ptx.Addr(t, int64(imm))
		a.dead = true
		b.touch()
		m.touch()
	}
}

// nextLive returns the next instruction after line i in its block, or -1
// at a label.
func nextLive(ls []*pline, i int) int {
	for n := i + 1; n < len(ls); n++ {
		switch {
		case ls[n].label != "":
			return -1
		case ls[n].isInst():
			return n
		}
	}
	return -1
}

// none says whether o is the zero Operand: no operand at all.
func none(o ptx.Operand) bool { return o.Kind == 0 }

// isAddrOf says whether operand o is the address [r].
func isAddrOf(o ptx.Operand, r string) bool {
	return o.Kind == ptx.OpAddr && o.Name == r && o.Int == 0
}

// sameOperand says whether operands a and b are the same register,
// immediate, label or address (positions aside).
func sameOperand(a, b ptx.Operand) bool {
	a.Pos, b.Pos = ptx.Pos{}, ptx.Pos{}
	return a.Kind == b.Kind && a.String() == b.String()
}
