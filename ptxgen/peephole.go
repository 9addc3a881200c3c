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
	// cached register lists; valid until the operands change (see touch).
	cached     bool
	cdef, cuse []string
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
func (l *pline) touch() { l.cached = false }

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
func (l *pline) noDst() bool { return len(l.in.Dests()) == 0 }

// pure says whether l only computes its destinations (the table's
// Removable: a non-volatile load counts).
func (l *pline) pure() bool { return l.in.Removable() }

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
	if !l.cached {
		l.cdef, l.cuse, l.cached = l.in.DefRegs(nil), l.in.UseRegs(nil), true
	}
	return l.cdef
}

// uses lists the registers l reads.
func (l *pline) uses() []string {
	if !l.isInst() {
		return nil
	}
	if !l.cached {
		l.cdef, l.cuse, l.cached = l.in.DefRegs(nil), l.in.UseRegs(nil), true
	}
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
	return l.isInst() && l.in.Effects()&ptx.Branch != 0 && len(l.in.Args) == 1
}

// endsBlock says whether control does not fall through l.
func (l *pline) endsBlock() bool {
	return l.isInst() && l.in.Guard == "" && l.in.Effects()&(ptx.Branch|ptx.Ends) != 0 && l.op != "trap"
}

// simplify propagates copies and constants, then coalesces moves and
// drops dead lines until neither changes anything.
func simplify(ls []*pline) {
	copyProp(ls)
	for {
		lv := liveness(ls)
		if !coalesce(ls, lv) && !dce(ls, lv) {
			return
		}
	}
}

// optimize runs the peephole pass over the kernel body's lines and returns
// the new lines (dead ones still among them, marked).
func optimize(ls []*pline) []*pline {
	simplify(ls)
	dropFallthrough(ls)
	ls = dropUnusedLabels(ls)
	simplify(ls) // over the blocks the labels no longer split
	ls = hoistChecks(ls)
	for dce(ls, liveness(ls)) {
		// what the unrolled copies no longer read
	}
	foldDisplacements(ls, liveness(ls))
	dropFallthrough(ls)
	return ls
}

// copyProp replaces, inside each basic block, reads of a register that
// holds a copy of another with reads of the original.
func copyProp(ls []*pline) {
	copyOf := map[string]string{}
	constOf := map[string]ptx.Operand{}
	kill := func(r string) {
		delete(copyOf, r)
		delete(constOf, r)
		for k, v := range copyOf {
			if v == r {
				delete(copyOf, k)
			}
		}
	}
	for _, l := range ls {
		if l.label != "" {
			clear(copyOf)
			clear(constOf)
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
		for i := range args {
			if i == 0 && !l.noDst() {
				continue
			}
			if move && i == 1 && isReg(args[1]) {
				src, dst := args[1].Name, args[0].Name
				if c, ok := constOf[src]; ok && strings.HasPrefix(regClass(dst), "b") && size(regClass(src)) == size(regClass(dst)) {
					args[1] = c
					continue
				}
				if to, ok := copyOf[src]; ok && size(regClass(to)) == size(regClass(dst)) {
					args[1] = ptx.Reg(to)
				}
				continue
			}
			renameRegs(&args[i], func(r string) string {
				if to, ok := copyOf[r]; ok && regClass(to) == regClass(r) {
					return to
				}
				return r
			})
		}
		l.touch()
		for _, d := range l.defs() {
			kill(d)
		}
		if move {
			d, src := args[0].Name, args[1]
			switch {
			case isReg(src) && src.Name != d:
				copyOf[d] = src.Name
			case isImm(src) && strings.HasPrefix(regClass(d), "b"):
				constOf[d] = src
			}
		}
		if l.endsBlock() {
			clear(copyOf)
			clear(constOf)
		}
	}
}

// live is the result of a liveness analysis: the registers live after
// each line, and the line of each label.
type live struct {
	ids    map[string]int
	out    [][]uint64
	in     [][]uint64
	labels map[string]int
}

func (v *live) has(set []uint64, r string) bool {
	id, ok := v.ids[r]
	return ok && set[id/64]&(1<<(id%64)) != 0
}

// succs lists the lines control may go to after line i.
func succs(ls []*pline, labels map[string]int, i int) []int {
	l := ls[i]
	var out []int
	if l.isBranch() {
		if t, ok := labels[l.in.Args[0].Name]; ok {
			out = append(out, t)
		}
		if l.in.Guard == "" {
			return out
		}
	}
	if l.endsBlock() {
		return out
	}
	if i+1 < len(ls) {
		out = append(out, i+1)
	}
	return out
}

func liveness(ls []*pline) *live {
	v := &live{ids: map[string]int{}, labels: map[string]int{}}
	for i, l := range ls {
		if l.label != "" {
			v.labels[l.label] = i
		}
		for _, rs := range [2][]string{l.defs(), l.uses()} {
			for _, r := range rs {
				if _, ok := v.ids[r]; !ok {
					v.ids[r] = len(v.ids)
				}
			}
		}
	}
	words := (len(v.ids) + 63) / 64
	v.out = make([][]uint64, len(ls))
	v.in = make([][]uint64, len(ls))
	use := make([][]int, len(ls))
	def := make([][]int, len(ls))
	sc := make([][]int, len(ls))
	backing := make([]uint64, 2*words*len(ls))
	for i, l := range ls {
		v.out[i] = backing[2*i*words : (2*i+1)*words : (2*i+1)*words]
		v.in[i] = backing[(2*i+1)*words : (2*i+2)*words : (2*i+2)*words]
		for _, r := range l.uses() {
			use[i] = append(use[i], v.ids[r])
		}
		if l.guard() == "" {
			for _, r := range l.defs() {
				def[i] = append(def[i], v.ids[r])
			}
		}
		sc[i] = succs(ls, v.labels, i)
	}
	tmp := make([]uint64, words)
	for changed := true; changed; {
		changed = false
		for i := len(ls) - 1; i >= 0; i-- {
			clear(tmp)
			for _, s := range sc[i] {
				for w := range tmp {
					tmp[w] |= v.in[s][w]
				}
			}
			copy(v.out[i], tmp)
			for _, d := range def[i] {
				tmp[d/64] &^= 1 << (d % 64)
			}
			for _, u := range use[i] {
				tmp[u/64] |= 1 << (u % 64)
			}
			for w := range tmp {
				if tmp[w] != v.in[i][w] {
					changed = true
					v.in[i][w] = tmp[w]
				}
			}
		}
	}
	return v
}

// dce drops the pure instructions whose results nobody reads.
func dce(ls []*pline, v *live) bool {
	changed := false
	for i, l := range ls {
		if !l.isInst() || !l.pure() || l.keep {
			continue
		}
		ds := l.defs()
		if len(ds) == 0 {
			continue
		}
		dead := true
		for _, d := range ds {
			if v.has(v.out[i], d) {
				dead = false
			}
		}
		if l.isMove() && l.arg(0) == l.arg(1) {
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
				if t, found := v.labels[l.in.Args[0].Name]; !found || v.has(v.in[t], y) || v.has(v.in[t], x) {
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
				ok = !v.has(v.out[k-1], x)
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
				if t, found := v.labels[l.in.Args[0].Name]; !found || v.has(v.in[t], x) {
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
		if k < 0 || ls[k].guard() != "" || v.has(v.out[k], t) {
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
