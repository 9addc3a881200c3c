package ptxgen

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptx"
)

// The exit state. A launch covers the arrivals of an instance up to its
// last, the one that leaves the loop, when the kernel can give what that
// arrival leaves behind: the thread of the launch's last iteration
// (LaunchInput.ExitState) takes the exit edge, stores the exit target and
// the values the level may have changed (Kernel.ExitStates) after the
// error record, and the runtime sets the CPU there; any other thread that
// takes an exit fails the launch, as before.
//
// A thread gives a value exactly where it computed it itself: a live-in
// (passed in, moved to the thread's iteration, or reloaded), or a value
// written on every path from where the thread began (the level's header;
// in a 2D or 3D kernel, whose thread runs one iteration of an inner
// level, that level's header too, where the values the inner loop writes
// are an earlier iteration's). A must-write dataflow over the level's
// blocks finds them (exactAt). What the level writes and the thread
// cannot give (a register only some iterations write, the lazy flags,
// which a kernel never computes) must be dead at the exit target
// (Nest.ExitLive, gvinst.LiveAt), a private stack slot never: else the
// exit keeps its error exit, and the CPU runs the last arrival. A
// value the level writes that is dead at the target is not stored.
// MXCSR's sticky exception bits are as the CPU left them before the
// launch, as for every iteration a kernel runs.

// MaxExitValues is the most values one exit's state may hold: a kernel
// whose exit state would need more keeps the exit an error.
const MaxExitValues = 96

// ExitRecordSize is the size in bytes of a kernel's whole record: the
// error record (ErrorRecordSize), the exit target (0: no thread took an
// exit) and up to MaxExitValues values.
const ExitRecordSize = ErrorRecordSize + 8 + 8*MaxExitValues

// exitClearSize is how much of the record a launch clears: the error
// code, its address and the exit target (the values are read only after
// a target).
const exitClearSize = ErrorRecordSize + 8

// ExitRecord is the state the thread of a launch's last iteration stored
// as it left the loop: the exit target, and the values of
// Kernel.ExitStates[Target], in order.
type ExitRecord struct {
	Target uint64
	Values []uint64
}

// exitEligible reports whether the nest's kernel may take exit states at
// all: a whole level (a part has no exit test of its own) whose threads
// run one iteration of it each (not an interchanged or thread-loop kernel,
// whose threads run many rows).
func (a *analysis) exitEligible() bool {
	n := a.n
	return n.ExitLive != nil && !n.part() && !n.Interchange && !n.Even && n.ThreadLoop == 0
}

// resID is the resource number (privRes) of live value l.
func (a *analysis) resID(l LiveIn) int {
	if l.Stack {
		return a.privRes(privKeyOf(l.Base, l.Disp))
	}
	return int(l.Slot)
}

// resLive is the LiveIn of resource r.
func (a *analysis) resLive(r int) LiveIn {
	if r < int(gvinst.NumGuestSlots) {
		return LiveIn{Slot: gvinst.Reg(r)}
	}
	for o, i := range a.privIdx {
		if int(gvinst.NumGuestSlots)+i == r {
			b, d := privBaseOff(o)
			return LiveIn{Stack: true, Base: b, Disp: d, Size: a.privSize[o]}
		}
	}
	panic(fmt.Sprintf("ptxgen: resource %d is no slot", r))
}

// flagSlots are the lazy flags' slots: a FLAGS writes them, and a kernel
// computes none of them.
var flagSlots = []int{int(gvinst.CCOp), int(gvinst.CCA), int(gvinst.CCB), int(gvinst.CCR), int(gvinst.CCC)}

// exactWrites applies block addr to set: the resources it writes whole
// (guest registers, private slots stored at their size, rep stos's rcx
// and rdi) become exact; a partial store to a private slot keeps its
// exactness. It returns the resources written at all, and whether the
// block sets flags.
func (a *analysis) exactWrites(addr uint64, set map[int]bool) (written map[int]bool, flags bool) {
	written = map[int]bool{}
	b := a.n.Blocks[addr]
	for i := range b.Insts {
		in := &b.Insts[i]
		switch in.Op {
		case gvinst.OpFlags, gvinst.OpSetFlags:
			flags = true
		case gvinst.OpRepStos, gvinst.OpRepMovs:
			flags = true
			_, ws := stringRegs(in)
			for _, reg := range ws {
				r := int(reg)
				written[r] = true
				if set != nil {
					set[r] = true
				}
			}
		}
		if o, ok := a.priv[key(addr, i)]; ok && in.Op == gvinst.OpSt {
			n := 1
			if in.Type.Size() == 16 {
				n = 2
			}
			whole := in.Type.Size() == 8 || in.Type.Size() == 16 || in.Type.Size() == a.privSize[o]
			for k := 0; k < n; k++ {
				r := a.privRes(o + int64(8*k))
				written[r] = true
				if whole && set != nil {
					set[r] = true
				}
			}
			continue
		}
		if hasDst(in) {
			t := in.DstType()
			for s := 0; s < t.Slots(); s++ {
				if rr := in.Dst + gvinst.Reg(s); rr < gvinst.NumGuestSlots {
					written[int(rr)] = true
					if set != nil {
						set[int(rr)] = true
					}
				}
			}
		}
	}
	return written, flags
}

// findExitStates fills a.exitStates: for each exit target the kernel can
// give the exit state of, the resources a thread leaving there stores.
func (a *analysis) findExitStates() {
	if !a.exitEligible() {
		return
	}
	n := a.n
	// What the level writes, the inner level and the innermost level.
	levelW, innerW, inner2W := map[int]bool{}, map[int]bool{}, map[int]bool{}
	for _, addr := range a.order {
		w, fl := a.exactWrites(addr, nil)
		if fl {
			for _, r := range flagSlots {
				w[r] = true
			}
		}
		for r := range w {
			levelW[r] = true
			if a.inner[addr] {
				innerW[r] = true
			}
			if a.inner2[addr] {
				inner2W[r] = true
			}
		}
	}
	out := a.exactAt(innerW, inner2W, nil)
	// The exact values on every edge to each exit target.
	exact := map[uint64]map[int]bool{}
	for _, addr := range a.order {
		if a.inner[addr] || a.inner2[addr] {
			continue // the level's exit is from its own body (findExit)
		}
		for _, t := range n.Blocks[addr].Successors() {
			if _, in := n.Blocks[t]; in || n.Cold[t] {
				continue
			}
			o := out[addr]
			if o == nil {
				continue // no path from the header runs it
			}
			if e, ok := exact[t]; ok {
				for r := range e {
					if !o[r] {
						delete(e, r)
					}
				}
				continue
			}
			e := map[int]bool{}
			for r := range o {
				e[r] = true
			}
			exact[t] = e
		}
	}
	targets := make([]uint64, 0, len(exact))
	for t := range exact {
		targets = append(targets, t)
	}
	slices.Sort(targets) // the kernel's parameters in one order
	for _, t := range targets {
		e := exact[t]
		live := n.ExitLive[t]
		if live == nil {
			continue
		}
		var store []int
		ok := true
		for r := range levelW {
			guest := r < int(gvinst.NumGuestSlots)
			switch {
			case e[r] && (!guest || live.Slot[r]):
				store = append(store, r)
			case !e[r] && (!guest || live.Slot[r]):
				ok = false
			}
		}
		var inits []int
		if !ok {
			if inits, ok = a.uniformStale(t, e, levelW, live, innerW, inner2W); ok {
				store = append(store, inits...)
			}
		}
		if !ok || len(store) > MaxExitValues {
			a.refuseExit(t, e, levelW, live, len(store))
			continue
		}
		for _, r := range inits {
			if !slices.Contains(a.exitInits, r) {
				a.exitInits = append(a.exitInits, r)
			}
		}
		sort.Ints(store)
		if a.exitStates == nil {
			a.exitStates = map[uint64][]int{}
		}
		a.exitStates[t] = store
	}
}

// Uniform branches. A register only some paths of the level write is an
// earlier iteration's at the exit, unless the branches that choose those
// paths test values the level does not change (gcc's zero-trip guard of
// an inner loop, `test ebx, ebx; jle` over an invariant bound): every
// iteration then takes the same side of each, a world. In a world where
// every path to the exit writes the register, the last thread's value is
// exact; in one where no path of the iteration writes it, no iteration
// did, and it still holds what it held before the instance, what the CPU
// holds at the launch, which the thread starts with (Kernel.ExitInits).
// The exit's state holds such a register where every world is one of
// the two.

// maxUniformBranches bounds the uniform branches a level may have for
// its worlds to be tried (2^n of them).
const maxUniformBranches = 4

// uniformStale returns the values exact at exit target t only through
// uniform branches (stale: what the level writes that is not exact
// there, exact, and live at t), when every one of them is; ok is false
// when any is not (or a private slot is stale).
func (a *analysis) uniformStale(t uint64, exact, levelW map[int]bool, live *gvinst.Liveness, innerW, inner2W map[int]bool) (inits []int, ok bool) {
	for r := range levelW {
		if exact[r] {
			continue
		}
		if r >= int(gvinst.NumGuestSlots) {
			return nil, false
		}
		if live.Slot[r] {
			inits = append(inits, r)
		}
	}
	if len(inits) == 0 {
		return nil, false
	}
	for _, r := range inits {
		if slices.Contains(flagSlots, r) {
			return nil, false // a kernel never computes the flags
		}
	}
	var ub []uint64
	for _, b := range a.order {
		if a.uniformBranch(b, levelW) {
			ub = append(ub, b)
		}
	}
	if len(ub) == 0 || len(ub) > maxUniformBranches {
		return nil, false
	}
	for w := 0; w < 1<<len(ub); w++ {
		cut := map[uint64]uint64{}
		for i, b := range ub {
			// Bit i set: the branch never goes to its first target.
			cut[b] = a.n.Blocks[b].Insts[len(a.n.Blocks[b].Insts)-1].Target[(w>>i)&1]
		}
		out := a.exactAt(innerW, inner2W, cut)
		// What the world's iteration may write: its reachable blocks'.
		wrote := map[int]bool{}
		for b, o := range out {
			if o == nil {
				continue
			}
			ww, _ := a.exactWrites(b, nil)
			for r := range ww {
				wrote[r] = true
			}
		}
		// Exact on every edge of the world to t.
		var edges []map[int]bool
		for _, b := range a.order {
			o := out[b]
			if o == nil || a.inner[b] || a.inner2[b] {
				continue
			}
			for _, s := range a.n.Blocks[b].Successors() {
				if s == t && cut[b] != s {
					edges = append(edges, o)
				}
			}
		}
		atT, ok := meetSets(edges)
		if !ok {
			continue // the world never leaves there
		}
		for _, r := range inits {
			if !atT[r] && wrote[r] {
				return nil, false
			}
		}
	}
	sort.Ints(inits)
	return inits, true
}

// uniformBranch reports whether block b ends in a branch within the
// level whose condition the block computes from constants and guest
// slots the level does not write (levelW) alone: it goes the same way in
// every iteration of an instance.
func (a *analysis) uniformBranch(b uint64, levelW map[int]bool) bool {
	blk := a.n.Blocks[b]
	last := &blk.Insts[len(blk.Insts)-1]
	if last.Op != gvinst.OpBranch || a.n.Blocks[last.Target[0]] == nil || a.n.Blocks[last.Target[1]] == nil {
		return false
	}
	// The virtual registers the condition depends on, back to GETs.
	need := map[gvinst.Reg]bool{last.Src[0]: true}
	for i := len(blk.Insts) - 2; i >= 0; i-- {
		in := &blk.Insts[i]
		if !hasDst(in) || !need[in.Dst] {
			continue
		}
		delete(need, in.Dst)
		switch in.Op {
		case gvinst.OpGet:
			if !in.Src[0].IsVirtual() && levelW[int(in.Src[0])] {
				return false
			}
			if in.Src[0].IsVirtual() {
				need[in.Src[0]] = true
			}
			continue
		case gvinst.OpLi:
			continue
		case gvinst.OpLd, gvinst.OpGetCC, gvinst.OpGetFlags:
			return false
		}
		if in.Op.Info().Effects != 0 {
			return false
		}
		for _, u := range in.SrcRegs() {
			if !u.IsVirtual() {
				if levelW[int(u)] {
					return false
				}
				continue
			}
			need[u] = true
		}
	}
	for r := range need {
		if r.IsVirtual() {
			return false // set before the block: another block's value
		}
	}
	return true
}

// refuseExit notes why the kernel does not give the state of the exit
// to t (exact the values exact there, levelW what the level writes, live
// what the code at t may read, n the values it would store).
func (a *analysis) refuseExit(t uint64, exact, levelW map[int]bool, live *gvinst.Liveness, n int) {
	var bad []int
	for r := range levelW {
		if !exact[r] && (r >= int(gvinst.NumGuestSlots) || live.Slot[r]) {
			bad = append(bad, r)
		}
	}
	sort.Ints(bad)
	var names []string
	for _, r := range bad {
		names = append(names, a.resLive(r).String())
	}
	why := fmt.Sprintf("%s the loop may leave from an earlier iteration, live at %#x", strings.Join(names, " "), t)
	if len(bad) == 0 {
		why = fmt.Sprintf("%d values to store, more than %d", n, MaxExitValues)
	}
	if a.exitRefused == nil {
		a.exitRefused = map[uint64]string{}
	}
	a.exitRefused[t] = why
}

// exactAt is the must-write dataflow of the exit state: for each block of
// the level, the resources exact at its end. A thread begins at the
// level's header with its live-ins; a 2D kernel's thread enters the inner
// loop at its header with the inner live-ins moved to its iteration and
// what else the inner loop writes (innerW) an earlier iteration's, and a
// 3D kernel's the innermost loop likewise (inner2W); back edges to those
// headers end the thread's iteration. cut (a world, see worlds) removes
// the edge from each of its blocks to the successor it maps it to.
func (a *analysis) exactAt(innerW, inner2W map[int]bool, cut map[uint64]uint64) map[uint64]map[int]bool {
	n := a.n
	preds := map[uint64][]uint64{}
	for _, b := range a.order {
		for _, s := range n.Blocks[b].Successors() {
			if n.Blocks[s] == nil || s == n.start() || a.inner[b] && s == n.Inner || a.inner2[b] && s == n.Inner2 {
				continue
			}
			if c, ok := cut[b]; ok && c == s {
				continue // a world's branch that does not go there
			}
			preds[s] = append(preds[s], b)
		}
	}
	entry := map[int]bool{}
	for _, l := range a.liveIns {
		entry[a.resID(l)] = true
	}
	moved := func(ls []LiveIn) map[int]bool {
		m := map[int]bool{}
		for _, l := range ls {
			if l.Written {
				m[a.resID(l)] = true
			}
		}
		return m
	}
	innerMoved, inner2Moved := moved(a.innerLive), moved(a.inner2Live)
	out := map[uint64]map[int]bool{} // nil: not reached yet
	for changed := true; changed; {
		changed = false
		for _, b := range a.order {
			var in map[int]bool
			if b == n.start() {
				in = map[int]bool{}
				for r := range entry {
					in[r] = true
				}
			} else {
				var reached []map[int]bool
				for _, p := range preds[b] {
					if o := out[p]; o != nil {
						reached = append(reached, o)
					}
				}
				var ok bool
				if in, ok = meetSets(reached); !ok {
					continue
				}
			}
			adjust := func(w, mv map[int]bool) {
				for r := range w {
					delete(in, r)
				}
				for r := range mv {
					in[r] = true
				}
			}
			if a.inner != nil && b == n.Inner {
				adjust(innerW, innerMoved)
			}
			if a.inner2 != nil && b == n.Inner2 {
				adjust(inner2W, inner2Moved)
			}
			a.exactWrites(b, in)
			if old := out[b]; old == nil || len(old) != len(in) {
				out[b], changed = in, true
			}
		}
	}
	return out
}

// innerLeavesTo is the one block of the level outside the inner level
// that the inner loop leaves to (2D and 3D kernels), or 0: the thread of
// the launch's last row that runs the row's last inner iteration goes on
// there, to the level's exit, where other threads end.
func (a *analysis) innerLeavesTo() uint64 {
	var to uint64
	for b := range a.inner {
		for _, s := range a.n.Blocks[b].Successors() {
			if a.inner[s] || a.n.Blocks[s] == nil {
				continue
			}
			if to != 0 && to != s {
				return 0
			}
			to = s
		}
	}
	return to
}

// exitLabel is the label of the exit-state stub for exit target to.
func exitLabel(to uint64) string { return fmt.Sprintf("$Lexit_%x", to) }

// exitTarget returns the exit-state stub's label for an edge from the
// block being lowered to exit target to, when the kernel gives that
// exit's state.
func (e *emitter) exitTarget(to uint64) (string, bool) {
	if _, ok := e.a.exitStates[to]; !ok || e.a.inner[e.block] || e.a.inner2[e.block] || e.a.tripLoop[e.block] {
		return "", false
	}
	e.exitsTaken[to] = true
	return exitLabel(to), true
}

// exitStubs emits the stub of each exit the body branches to: a thread
// other than the one of the launch's last iteration (xlast; all ones
// when the launch runs no last arrival) fails with ErrCodeExit, as every
// exit did; the last one (in a 2D or 3D kernel, the first or last thread
// of its row and column: all of the row's that get there hold the same
// values, see the top of this file) stores the target and the state
// after the error record and ends.
func (e *emitter) exitStubs() {
	var ts []uint64
	for t := range e.exitsTaken {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	e.alias = nil
	for _, t := range ts {
		e.reset()
		e.label(exitLabel(t))
		t0, t1, p0 := e.t(), e.t(), e.pred()
		e.i("ld.param.u64", t0, ptx.Addr("xlast", 0))
		e.i("setp.ne.u64", p0, "%idx", t0)
		e.i("bra", fmt.Sprintf("$Lerr%d", ErrCodeExit)).when(p0)
		if e.a.inner != nil {
			e.i("sub.u64", t0, "%ib", 1)
			e.i("setp.ne.u64", p0, e.mid(), t0)
			e.i("setp.ne.and.u64", p0, e.mid(), 0, p0)
			e.i("exit").when(p0)
		}
		if e.a.inner2 != nil {
			e.i("sub.u64", t0, "%ib2", 1)
			e.i("setp.ne.u64", p0, "%xi", t0)
			e.i("setp.ne.and.u64", p0, "%xi", 0, p0)
			e.i("exit").when(p0)
		}
		if e.a.tripLoop != nil {
			// A counted loop's kernel: the last iteration entered it
			// once, as every other did.
			e.i("setp.ne.and.u64", p0, "%te", 1, "%ptc")
			e.i("bra", fmt.Sprintf("$Lcktripx%x", e.a.n.TripCheck)).when(p0)
		}
		e.comment(fmt.Sprintf(" the exit state at %#x", t))
		e.i("ld.param.u64", t0, ptx.Addr("errrec", 0))
		e.i("mov.b64", t1, lit(t))
		e.i("st.global.u64", ptx.Addr(t0, ErrorRecordSize), t1)
		for k, r := range e.a.exitStates[t] {
			reg := e.liveReg(e.a.resLive(r))
			e.i("st.global.u64", ptx.Addr(t0, int64(ErrorRecordSize+8+8*k)), reg)
		}
		e.i("ret")
	}
}
