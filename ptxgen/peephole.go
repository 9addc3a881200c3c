package ptxgen

import (
	"fmt"
	"strconv"
	"strings"
)

// The peephole pass (RATIONALE). The emitter lowers each GVInst
// instruction on its own: guest registers through .b64 frame registers,
// float operands through moves into .f64/.f32 temporaries, results through
// a virtual register and then a PUT. ptxas removes those moves for the real
// GPU, but gpusim executes exactly what it is given, so the generator
// removes them itself, over the kernel body's text:
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
// instruction.
type pline struct {
	label   string // "name" for "name:"
	comment string // a whole-line comment, verbatim
	guard   string // "@%p0", "@!%p0" or ""
	op      string
	args    []string
	dead    bool
	keep    bool // dce must not drop it (a value a later pass reads)
	// cached register lists; valid until args change (see touch).
	cached     bool
	cdef, cuse []string
}

// touch drops l's cached register lists after its operands changed.
func (l *pline) touch() { l.cached = false }

// parseBody splits the kernel body the emitter wrote into lines.
func parseBody(s string) []*pline {
	var out []*pline
	for _, raw := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		t := strings.TrimSpace(raw)
		switch {
		case t == "":
			continue
		case strings.HasPrefix(t, "//"):
			out = append(out, &pline{comment: raw})
		case strings.HasSuffix(t, ":"):
			out = append(out, &pline{label: strings.TrimSuffix(t, ":")})
		default:
			t = strings.TrimSuffix(t, ";")
			l := &pline{}
			if strings.HasPrefix(t, "@") {
				i := strings.IndexByte(t, ' ')
				l.guard, t = t[:i], strings.TrimSpace(t[i+1:])
			}
			if i := strings.IndexByte(t, ' '); i >= 0 {
				l.op, l.args = t[:i], splitArgs(t[i+1:])
			} else {
				l.op = t
			}
			out = append(out, l)
		}
	}
	return out
}

// splitArgs splits operands at the commas outside brackets and braces.
func splitArgs(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

func (l *pline) String() string {
	switch {
	case l.label != "":
		return l.label + ":\n"
	case l.comment != "":
		return l.comment + "\n"
	}
	var b strings.Builder
	b.WriteByte('\t')
	if l.guard != "" {
		b.WriteString(l.guard)
		b.WriteByte(' ')
	}
	b.WriteString(l.op)
	if len(l.args) > 0 {
		b.WriteByte(' ')
		b.WriteString(strings.Join(l.args, ", "))
	}
	b.WriteString(";\n")
	return b.String()
}

func (l *pline) isInst() bool { return l.label == "" && l.comment == "" && !l.dead }

// noDst says whether op writes no register.
func noDst(op string) bool {
	for _, p := range []string{"st.", "bra", "exit", "ret", "bar", "atom", "red", "call", "membar", "fence", "trap"} {
		if strings.HasPrefix(op, p) {
			return true
		}
	}
	return false
}

// pure says whether op only computes its destination.
func pure(op string) bool { return !noDst(op) && !strings.HasPrefix(op, "ld.volatile") }

// replaceRegs returns s with each register r named in it replaced by f(r).
func replaceRegs(s string, f func(string) string) string {
	rs := regsIn(s)
	if len(rs) == 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '%' {
			matched := false
			for _, r := range rs {
				if strings.HasPrefix(s[i:], r) && (i+len(r) == len(s) || !isNameByte(s[i+len(r)])) {
					b.WriteString(f(r))
					i += len(r)
					matched = true
					break
				}
			}
			if matched {
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

func isNameByte(c byte) bool {
	return c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// regsIn lists the registers named in operand s (special registers such
// as %tid.x excluded).
func regsIn(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || j > i+1 && s[j] >= '0' && s[j] <= '9') {
			j++
		}
		if j > i+1 && (j == len(s) || s[j] != '.') {
			out = append(out, s[i:j])
		}
		i = j - 1
	}
	return out
}

// defs lists the registers l writes.
func (l *pline) defs() []string {
	if !l.isInst() {
		return nil
	}
	if !l.cached {
		l.cdef, l.cuse, l.cached = l.computeDefs(), l.computeUses(), true
	}
	return l.cdef
}

// uses lists the registers l reads.
func (l *pline) uses() []string {
	if !l.isInst() {
		return nil
	}
	if !l.cached {
		l.cdef, l.cuse, l.cached = l.computeDefs(), l.computeUses(), true
	}
	return l.cuse
}

func (l *pline) computeDefs() []string {
	if noDst(l.op) || len(l.args) == 0 {
		return nil
	}
	return regsIn(l.args[0])
}

func (l *pline) computeUses() []string {
	var out []string
	if l.guard != "" {
		out = append(out, regsIn(l.guard)...)
	}
	for i, a := range l.args {
		if i == 0 && !noDst(l.op) {
			continue
		}
		out = append(out, regsIn(a)...)
	}
	return out
}

// regClass is the class of a register the emitter names: b64, f64, b32,
// f32, b16 or pred.
func regClass(r string) string {
	n := strings.TrimRight(strings.TrimPrefix(r, "%"), "0123456789")
	switch n {
	case "d", "hfd", "hcd":
		return "f64"
	case "f":
		return "f32"
	case "w", "hn", "hs":
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

// isReg says whether operand s is exactly one register.
func isReg(s string) bool {
	rs := regsIn(s)
	return len(rs) == 1 && rs[0] == s
}

// isImm says whether operand s is an integer or float literal.
func isImm(s string) bool {
	return s != "" && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))
}

// isMove says whether l is an unguarded "mov.bN dst, src" of registers or
// of an immediate (src).
func (l *pline) isMove() bool {
	return l.isInst() && l.guard == "" && (l.op == "mov.b64" || l.op == "mov.b32") && len(l.args) == 2 && isReg(l.args[0])
}

// endsBlock says whether control does not fall through l.
func (l *pline) endsBlock() bool {
	return l.isInst() && l.guard == "" && (l.op == "bra" || l.op == "bra.uni" || l.op == "exit" || l.op == "ret")
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

// optimizeBody runs the peephole pass over the kernel body text; decls
// declares the registers the hoisted loops use (hoist.go, unroll.go), ""
// when none.
func optimizeBody(s string) (text, decls string) {
	ls := parseBody(s)
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
	var b strings.Builder
	for _, l := range ls {
		if !l.dead {
			b.WriteString(l.String())
		}
	}
	return b.String(), hoistDecls(ls)
}

// copyProp replaces, inside each basic block, reads of a register that
// holds a copy of another with reads of the original.
func copyProp(ls []*pline) {
	copyOf := map[string]string{}
	constOf := map[string]string{}
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
		if l.guard == "" && l.op == "add.u64" && len(l.args) == 3 {
			// Adding a register known to hold 0 is a move.
			for k := 1; k <= 2; k++ {
				if c, ok := constOf[l.args[k]]; ok && c == "0" && isReg(l.args[3-k]) && size(regClass(l.args[3-k])) == 8 {
					l.op, l.args = "mov.b64", []string{l.args[0], l.args[3-k]}
					break
				}
			}
		}
		move := l.isMove()
		for i := range l.args {
			if i == 0 && !noDst(l.op) {
				continue
			}
			if move && i == 1 && isReg(l.args[1]) {
				src := l.args[1]
				if c, ok := constOf[src]; ok && strings.HasPrefix(regClass(l.args[0]), "b") && size(regClass(src)) == size(regClass(l.args[0])) {
					l.args[1] = c
					continue
				}
				if to, ok := copyOf[src]; ok && size(regClass(to)) == size(regClass(l.args[0])) {
					l.args[1] = to
				}
				continue
			}
			l.args[i] = replaceRegs(l.args[i], func(r string) string {
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
			d, src := l.args[0], l.args[1]
			switch {
			case isReg(src) && src != d:
				copyOf[d] = src
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
	if l.isInst() && strings.HasPrefix(l.op, "bra") && len(l.args) == 1 {
		if t, ok := labels[l.args[0]]; ok {
			out = append(out, t)
		}
		if l.guard == "" {
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
		if l.guard == "" {
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
		if !l.isInst() || !pure(l.op) || l.keep {
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
		if l.isMove() && l.args[0] == l.args[1] {
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
		if !m.isMove() || !isReg(m.args[1]) {
			continue
		}
		y, x := m.args[0], m.args[1]
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
				if l.guard == "" && len(l.defs()) == 1 && !noDst(l.op) && isReg(l.args[0]) {
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
			if l.op == "bra" || strings.HasPrefix(l.op, "bra") {
				if t, found := v.labels[l.args[0]]; !found || v.has(v.in[t], y) || v.has(v.in[t], x) {
					ok = false
					break
				}
			}
		}
		if !ok || i < 0 {
			continue
		}
		var crossOp string
		if cross {
			op := ls[i].op
			n := strings.LastIndexByte(op, '.')
			if !strings.HasPrefix(op, "ld.") || n < 0 || (op[n+1:] != "u64" && op[n+1:] != "b64" && op[n+1:] != "u32" && op[n+1:] != "b32") {
				continue
			}
			crossOp = op[:n+1] + "b" + op[n+2:]
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
			if strings.HasPrefix(l.op, "bra") {
				if t, found := v.labels[l.args[0]]; !found || v.has(v.in[t], x) {
					ok = false
					break
				}
			}
			if has(l.defs(), x) {
				ok = l.guard == ""
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
			ls[i].op = crossOp
		}
		re := func(l *pline, from int) {
			for a := from; a < len(l.args); a++ {
				l.args[a] = replaceRegs(l.args[a], func(r string) string {
					if r == x {
						return y
					}
					return r
				})
			}
			l.touch()
		}
		ls[i].args[0] = y
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
	if noDst(l.op) {
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
		if !l.isInst() || l.guard != "" || l.op != "bra" || len(l.args) != 1 {
			continue
		}
		for k := i + 1; k < len(ls); k++ {
			n := ls[k]
			if n.dead || n.comment != "" {
				continue
			}
			if n.label == l.args[0] {
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
		if l.isInst() && strings.HasPrefix(l.op, "bra") {
			for _, a := range l.args {
				used[a] = true
			}
		}
	}
	out := ls[:0]
	var prev *pline // the last instruction kept
	for _, l := range ls {
		if l.label != "" && !used[l.label] && !(prev != nil && strings.HasPrefix(prev.op, "bra") && strings.HasPrefix(prev.args[0], "$Lx")) {
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
		if !a.isInst() || a.guard != "" || a.op != "add.u64" || len(a.args) != 3 || !isReg(a.args[0]) || !isImm(a.args[2]) {
			continue
		}
		imm, err := strconv.ParseUint(a.args[2], 0, 64)
		if err != nil || imm >= 1<<31 {
			continue
		}
		t := a.args[0]
		j := nextLive(ls, i)
		if j < 0 {
			continue
		}
		b := ls[j]
		if b.guard != "" || b.op != "add.u64" || len(b.args) != 3 || b.args[0] != t || b.args[1] != t || !isReg(b.args[2]) || b.args[2] == t {
			continue
		}
		k := nextLive(ls, j)
		if k < 0 || ls[k].guard != "" || v.has(v.out[k], t) {
			continue
		}
		m := ls[k]
		at := -1
		switch {
		case strings.HasPrefix(m.op, "ld.") && len(m.args) == 2 && m.args[1] == "["+t+"]" && m.args[0] != t:
			at = 1
		case strings.HasPrefix(m.op, "st.") && len(m.args) == 2 && m.args[0] == "["+t+"]" && m.args[1] != t:
			at = 0
		}
		if at < 0 {
			continue
		}
		b.args[1] = a.args[1]
		m.args[at] = fmt.Sprintf("[%s+%d]", t, imm)
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
