package ptxgen

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/gxbit/gxbit/gvinst"
)

// Nest is one loop level of a hot spot, the input of Generate. The runtime
// fills it from the profile (or a test by hand): the level's header and its
// VBlocks after gvinst.Optimize, keyed by guest address. A successor address
// that is a key of Blocks stays in the level, the header included (that edge
// is a back edge); any other successor leaves the level.
type Nest struct {
	Name   string // the kernel's name; empty means "gx_<header in hex>"
	Header uint64
	Blocks map[uint64]*gvinst.VBlock
	// Cold are blocks outside Blocks that only an error path of the
	// level runs (profile.Level.Cold): a branch there is not an exit of
	// the loop, and a thread that takes one ends with ErrCodeCold.
	Cold map[uint64]bool
	// Inner, when not 0, asks for a 2D kernel: the header of the parallel
	// level right inside this one, mapped to x while this level maps to
	// y. InnerBlocks are that level's blocks (keys of Blocks). No block
	// may run into Inner without starting there (split them first), and
	// the outer body may not store to memory outside the inner loop.
	Inner       uint64
	InnerBlocks map[uint64]bool
	// OuterStores (with Inner, a plain 2D kernel) lets the outer body
	// store to memory before the inner loop (an initialisation nest's
	// x1[i] = … beside its A[i][j] loop): every thread of a row runs
	// those stores, writing the same values. The runtime must prove, per
	// launch, each such store's footprint (Kernel.OuterStores) apart from
	// every other site's, and every row's inner trip count at least one
	// (a row without threads would not store). Stores after the inner
	// loop (conv2d's per-row memset of its output, which gcc puts after
	// the row's input loop) are made by the thread that runs the row's
	// last inner iteration, which goes on in the outer body to the back
	// edge: once a row, as on the CPU, where the inner loop leaves to one
	// block and no loop of the outer body holds the store.
	OuterStores bool
	// Interchange (with Inner) asks for the interchanged kernel instead:
	// the level runs inside each thread, row by row in order, and thread
	// x runs inner iteration x of every row (the schedule's "k moved
	// inside j": gemm's C[i][j] += A[i][k]*B[k][j] over k in each thread).
	// The level may carry dependences between rows, never between inner
	// iterations (the caller proves that: package schedule); the inner
	// loop must leave to one block, and nothing the outer body reads after
	// the inner loop may be a value the inner loop writes (each thread
	// skips the inner iterations that are not its own).
	Interchange bool
	// Inner2 (with Inner, and no Interchange, ThreadLoop, TripCheck,
	// Dead or part) asks for a 3D kernel: the header of the parallel
	// level right inside Inner, mapped to x while Inner maps to y and the
	// level to z. Inner2Blocks are its blocks (keys of InnerBlocks).
	// Thread (x, y, z) runs level iteration z as far as Inner, moves
	// Inner's live values by y inner steps as the 2D kernel does, runs
	// on to Inner2, moves Inner2's live values by x innermost steps, which
	// are the same in every (y, z) (LaunchInput.Inner2Steps), and runs one
	// innermost iteration: threads past the innermost trip count
	// (LaunchInput.Inner2Trip, the same in every inner iteration) retire,
	// and the kernel checks that only the last x leaves the innermost
	// loop and, going on in Inner's body, that only the row's last y
	// leaves Inner. Only the innermost loop may store to memory, and it
	// leaves to one block.
	Inner2       uint64
	Inner2Blocks map[uint64]bool
	// Even (with Interchange) asks for the interchanged kernel of rows
	// that all run the same inner trip count with the same inner steps
	// (the launch's InnerTripStep and InnerStepRows 0; the kernel checks
	// that): each thread's row loop is then straight-line code, which
	// peephole.go hoists and unrolls (atax's y[j] += A[i][j]·tmp[i] over
	// i in the thread, y[j] in a register).
	Even bool
	// ThreadLoop (with Inner, without Interchange) asks for the 2D kernel
	// with a sequential loop between the level and Inner: the header of
	// that loop, which each thread runs in order. The level maps to y and
	// Inner to x as in the 2D kernel, and thread (x, y) runs level
	// iteration y with, of each iteration of the thread loop, only inner
	// iteration x (the schedule's interchange under a grid level: gemm's
	// i, k, j as a grid (i, j) with k inside the thread, C[i][j] updated
	// in k order). Inner's trip count and steps may change with the level
	// (a triangle j ≤ i), not with the thread loop; the conditions of
	// Interchange hold for the inner loop. The kernel needs only Inner:
	// ThreadLoop names the loop for the runtime (and the kernel's
	// comment), and need not start a block.
	ThreadLoop uint64
	// Start, when not 0, is where each thread begins its iteration of the
	// level instead of Header, and Stop, when not 0, where it ends it, as
	// the back edge to Header does: the kernel of one part of a
	// distributed body (gemm's `C *= beta` loop up to Stop, the product
	// from Start). Blocks still holds the whole level; the part is the
	// blocks reachable from Start (or Header) without passing Header or
	// Stop. A part that starts at Start reads the values it needs there as
	// they were at the header, so none of them may be written on the way
	// from the header to Start. The part's kernel has no exit test: the
	// runtime takes the trip count from the whole level's kernel, and a
	// thread that leaves the level reports it.
	Start, Stop uint64
	// TripCheck (a 1D kernel: no Inner, not a part) is the header of a
	// loop inside the level, whose blocks are TripBlocks (keys of Blocks,
	// TripCheck among them), that the kernel counts: a launch that passes
	// itrip0 other than all ones fails (ErrCodeExit) unless each thread
	// enters that loop exactly once and arrives at its header itrip0 +
	// itripstep·t times (t the thread's index), as the 2D kernel checks
	// its rows. A store the loop makes once per iteration, moving by its
	// size, then writes a whole row of a known width: the runtime's proof
	// that the launch overwrites an array (an initialisation nest whose
	// outer body stores too, so it has no 2D kernel).
	TripCheck  uint64
	TripBlocks map[uint64]bool
	// Dead are string stores (REPSTOS, by block and instruction index)
	// whose bytes the caller proved overwritten later in the same
	// iteration before anything reads them: the kernel advances their
	// registers without storing. A 2D kernel's outer body may hold them
	// (twomm's memset of the row its inner loop then writes).
	Dead map[[2]uint64]bool
	// Reloads are registers a level carries from one iteration to the
	// next that hold a value loaded from memory the nest does not write
	// (phase 1 proves it): a thread that starts in the middle of the
	// level loads them again (see Reload).
	Reloads []Reload
	// ExitLive, when set, gives for an exit target (a successor outside
	// Blocks) which guest slots the code there may read before writing
	// them (gvinst.LiveAt): where what the level writes and a thread
	// cannot give exactly is dead there, the kernel gives that exit's
	// state (Kernel.ExitStates, exitstate.go). A target it lacks keeps
	// its exit an error.
	ExitLive map[uint64]*gvinst.Liveness
}

// Reload is a register that the nest's level (Inner: the inner level of
// a 2D or interchanged kernel; Inner and Inner2: the innermost level of a
// 3D kernel, loaded at innermost iteration x) carries, and that holds at the header of
// iteration t ≥ Depth the Size bytes (zero-extended) at address
// Σ Scale·reg + Disp over Terms, the registers' values at that header.
// A thread that starts at the level's header (1D and 2D kernels: its
// first iteration is the launch's, at least Depth into the instance) or
// moves to inner iteration x ≥ Depth loads it; at inner iteration x <
// Depth a depth-2 reload is the value Source holds on entering the inner
// loop (the one its preheader loaded). HighZero clears an SSE register's
// high half. X86 is the load whose site's footprint covers the bytes.
type Reload struct {
	Slot     gvinst.Reg
	Inner    bool
	Inner2   bool
	Depth    int
	Source   gvinst.Reg
	Terms    []AddrTerm
	Disp     int64
	Size     int
	HighZero bool
	X86      uint64
}

// level is the level of the nest the reload belongs to: 0 the nest's
// own, 1 Inner, 2 Inner2.
func (r Reload) level() int {
	switch {
	case r.Inner2:
		return 2
	case r.Inner:
		return 1
	}
	return 0
}

// AddrTerm is one register of a reload's address, times Scale.
type AddrTerm struct {
	Reg   gvinst.Reg
	Scale int64
}

// reach lists the blocks of n reachable from from without entering a
// block of avoid, from first.
func (n *Nest) reach(from uint64, avoid ...uint64) []uint64 {
	seen := map[uint64]bool{from: true}
	out := []uint64{from}
	for w := []uint64{from}; len(w) > 0; {
		b := w[len(w)-1]
		w = w[:len(w)-1]
		for _, s := range n.Blocks[b].Successors() {
			if seen[s] || n.Blocks[s] == nil || slices.Contains(avoid, s) {
				continue
			}
			seen[s] = true
			out = append(out, s)
			w = append(w, s)
		}
	}
	return out
}

// inCycle reports whether block b of n runs again in the same iteration
// of the level: it is reachable from its own successors without passing
// the header.
func (n *Nest) inCycle(b uint64) bool {
	for _, s := range n.Blocks[b].Successors() {
		if n.Blocks[s] == nil || s == n.Header {
			continue
		}
		if slices.Contains(n.reach(s, n.Header), b) {
			return true
		}
	}
	return false
}

// start is the block each thread begins its iteration at.
func (n *Nest) start() uint64 {
	if n.Start != 0 {
		return n.Start
	}
	return n.Header
}

// part reports whether the nest is one part of a distributed level.
func (n *Nest) part() bool { return n.Start != 0 || n.Stop != 0 }

// ErrNotOffloadable is wrapped by Generate's error when the nest cannot run
// on the GPU (an op with no PTX lowering, a call, a flags read the optimizer
// did not fuse, …); the message says which instruction and why.
var ErrNotOffloadable = errors.New("nest cannot be offloaded")

// RejectError says why a nest cannot be offloaded, at which x86 address.
type RejectError struct {
	X86    uint64
	Reason string
}

// Error says why, with the x86 address when there is one.
func (e *RejectError) Error() string {
	if e.X86 == 0 {
		return e.Reason
	}
	return fmt.Sprintf("at %#x: %s", e.X86, e.Reason)
}

// Unwrap lets errors.Is find ErrNotOffloadable.
func (e *RejectError) Unwrap() error { return ErrNotOffloadable }

func reject(x86 uint64, format string, args ...any) error {
	return &RejectError{X86: x86, Reason: fmt.Sprintf(format, args...)}
}

// LiveIn is a value each thread needs at the header: a guest slot, or a
// private stack slot [Base+Disp] of Size bytes. The runtime passes its
// value at the first offloaded iteration and its step per iteration.
type LiveIn struct {
	Slot  gvinst.Reg // a guest slot, when Stack is false
	Stack bool
	Base  gvinst.Reg // s4 or s5, when Stack is true
	Disp  int64
	Size  int
	// Written says that the level also writes the value: it is carried
	// from one iteration to the next, so it must move by a constant step
	// (an induction variable) for the iterations to be independent.
	Written bool
}

// String names the value: "s3", "x1", "[s5-20]".
func (l LiveIn) String() string {
	if !l.Stack {
		return l.Slot.String()
	}
	if l.Disp < 0 {
		return fmt.Sprintf("[%s-%d]", l.Base, -l.Disp)
	}
	return fmt.Sprintf("[%s+%d]", l.Base, l.Disp)
}

// Site is one load or store of guest (non-private) memory in the kernel.
type Site struct {
	ID    int
	Block uint64 // the VBlock
	Index int    // the LD/ST's index in it
	X86   uint64 // its x86 instruction
	Size  int    // bytes
	Store bool
}

// ExitTest is the compare that decides, once per iteration of the level,
// whether the loop goes on: the loop continues while (CMP.Cmp.Type A, B) ==
// ContinueIf. The runtime observes A and B on the CPU to compute the trip
// count. The same x86 compare may be lifted into several blocks (a block
// that runs through into the latch's code); Copies lists them all.
type ExitTest struct {
	X86        uint64 // the x86 branch
	Cmp        gvinst.Cmp
	Type       gvinst.Type
	BImm       bool
	Imm        int64
	ContinueIf bool
	Copies     []ExitCopy
}

// ExitCopy is one lifted copy of the exit compare: the CMP at Index in
// Block, comparing registers A and B (B unused with an immediate).
type ExitCopy struct {
	Block uint64
	Index int
	A, B  gvinst.Reg
}

// privKey is a private stack slot: its offset from the frame base register.
type privKey struct {
	off int64
}

// analysis is what Generate learns about a nest before emitting PTX.
type analysis struct {
	n     *Nest
	order []uint64     // blocks, header first then by address
	bases []gvinst.Reg // frame base registers the level does not write
	// priv maps (block, inst index) of private LD/ST to their slot offset.
	priv     map[[2]int64]int64
	privSize map[int64]int // offset → extent
	privIdx  map[int64]int // offset → register number
	sites    []Site
	siteAt   map[[2]int64]int
	// copyFrom is the load site of each REPMOVS (siteAt has its store
	// site); copies says the nest has one (strings.go).
	copyFrom map[[2]int64]int
	copies   bool
	// anyAlign holds the LD/ST sites that may be at any address
	// (anyAddress): movdqu over bytes, movq in a vector loop's tail.
	anyAlign map[[2]int64]bool
	// align maps (block, inst index) of a site's LD/ST to the alignment
	// a CHKALIGN before it requires, which its site check then tests;
	// alignChecked holds those CHKALIGNs, which emit nothing themselves.
	align        map[[2]int64]int
	alignChecked map[[2]int64]bool
	liveIns      []LiveIn
	exit         ExitTest
	usesDyn      bool
	usesDF       bool // REPSTOS: the kernel assumes the direction flag is clear
	// 2D mapping: the inner level's blocks and live-in values, and the
	// stores of the outer body (Nest.OuterStores); tailStores says some
	// of them come after the inner loop, so that every row's last thread
	// runs on in the outer body.
	inner       map[uint64]bool
	innerLive   []LiveIn
	outerStores []int
	// rowChecked are the outer stores before the inner loop whose row's
	// inner stores the kernel checks against them (Kernel.RowChecked).
	rowChecked []int
	tailStores bool
	// innerExit is where the inner loop leaves to (interchanged kernel).
	innerExit uint64
	// 3D mapping (Nest.Inner2): the innermost level's blocks, live-in
	// values and the one block it leaves to.
	inner2     map[uint64]bool
	inner2Live []LiveIn
	inner2Exit uint64
	// tripLoop are the blocks of the loop a 1D kernel counts
	// (Nest.TripCheck).
	tripLoop map[uint64]bool
	// exitStates are, per exit target whose state the kernel gives, the
	// resources (privRes numbering) its thread stores (exitstate.go).
	exitStates map[uint64][]int
	// exitRefused says, per exit target whose state it does not give,
	// why (Kernel.ExitRefused).
	exitRefused map[uint64]string
	// exitInits are the resources a thread starts with the CPU's value
	// (Kernel.ExitInits).
	exitInits []int
	// plain caches plainMerges (see merges); nil until asked.
	plain map[[2]int64]bool
}

func key(block uint64, idx int) [2]int64 { return [2]int64{int64(block), int64(idx)} }

// analyze checks that every instruction can be lowered and finds the
// private stack slots, the memory sites, the live-in values and the exit
// test.
func analyze(n *Nest) (*analysis, error) {
	if n.Blocks[n.start()] == nil {
		return nil, reject(n.start(), "the first block %#x is not among the nest's blocks", n.start())
	}
	if n.part() && (n.Blocks[n.Header] == nil || n.Stop != 0 && n.Blocks[n.Stop] == nil || n.Start == n.Header || n.Stop == n.Header) {
		return nil, reject(n.Header, "a part of the level at %#x needs the level's blocks, its header and its Start and Stop among them, neither of them the header", n.Header)
	}
	if n.Even && !n.Interchange {
		return nil, reject(n.Header, "an even kernel is an interchanged one")
	}
	if n.ThreadLoop != 0 && (n.Inner == 0 || n.Interchange || n.InnerBlocks[n.ThreadLoop]) {
		return nil, reject(n.ThreadLoop, "the thread loop at %#x needs an inner level below it and no Interchange", n.ThreadLoop)
	}
	a := &analysis{n: n, priv: map[[2]int64]int64{}, privSize: map[int64]int{}, privIdx: map[int64]int{}, siteAt: map[[2]int64]int{}, copyFrom: map[[2]int64]int{},
		align: map[[2]int64]int{}, alignChecked: map[[2]int64]bool{}, anyAlign: map[[2]int64]bool{}}
	for addr, b := range n.Blocks {
		if b == nil {
			return nil, reject(addr, "no block at %#x", addr)
		}
		if err := gvinst.Verify(b); err != nil {
			return nil, fmt.Errorf("ptxgen: block %#x: %w", addr, err)
		}
	}
	in := map[uint64]bool{}
	if n.part() {
		for _, b := range n.reach(n.start(), n.Header, n.Stop) {
			in[b] = true
		}
	}
	for addr := range n.Blocks {
		if addr != n.start() && (!n.part() || in[addr]) {
			a.order = append(a.order, addr)
		}
	}
	sort.Slice(a.order, func(i, j int) bool { return a.order[i] < a.order[j] })
	a.order = append([]uint64{n.start()}, a.order...)
	if err := a.checkOps(); err != nil {
		return nil, err
	}
	a.findBase()
	if err := a.findAccesses(); err != nil {
		return nil, err
	}
	if !n.part() {
		if err := a.findExit(); err != nil {
			return nil, err
		}
	}
	a.findLiveIns()
	if n.Start != 0 {
		if err := a.checkStart(); err != nil {
			return nil, err
		}
	}
	if n.Inner != 0 {
		if err := a.check2D(); err != nil {
			return nil, err
		}
	}
	if n.Inner2 != 0 {
		if err := a.check3D(); err != nil {
			return nil, err
		}
	}
	if n.TripCheck != 0 {
		if err := a.checkTripLoop(); err != nil {
			return nil, err
		}
	}
	if n.Interchange || n.ThreadLoop != 0 {
		if err := a.checkInterchange(); err != nil {
			return nil, err
		}
	}
	a.findExitStates()
	return a, nil
}

// checkTripLoop checks the loop a 1D kernel counts (Nest.TripCheck): a
// loop of the level's blocks other than its header, in a kernel that runs
// whole iterations of the level.
func (a *analysis) checkTripLoop() error {
	n := a.n
	if n.Inner != 0 || n.part() {
		return reject(n.TripCheck, "a trip count check is for 1D kernels of a whole level")
	}
	if n.TripCheck == n.Header || n.Blocks[n.TripCheck] == nil || !n.TripBlocks[n.TripCheck] {
		return reject(n.TripCheck, "the counted loop's header %#x is not a block of the level other than its header", n.TripCheck)
	}
	for b := range n.TripBlocks {
		if n.Blocks[b] == nil || b == n.Header {
			return reject(n.TripCheck, "the counted loop's block %#x is not a block of the level other than its header", b)
		}
	}
	a.tripLoop = n.TripBlocks
	return nil
}

// checkInterchange checks what the interchanged kernel needs beyond the
// 2D one: the inner loop leaves to one block of the level, and the outer
// body reads nothing after it that the inner loop writes.
func (a *analysis) checkInterchange() error {
	n := a.n
	if n.Inner == 0 {
		return reject(n.Header, "interchange: no inner level")
	}
	var outer, inner []uint64
	for _, addr := range a.order {
		if a.inner[addr] {
			inner = append(inner, addr)
		} else {
			outer = append(outer, addr)
		}
	}
	for _, addr := range inner {
		for _, t := range n.Blocks[addr].Successors() {
			if a.inner[t] {
				continue
			}
			if a.innerExit != 0 && a.innerExit != t {
				return reject(n.Blocks[addr].Insts[len(n.Blocks[addr].Insts)-1].X86, "interchange: the inner loop leaves to %#x and to %#x", a.innerExit, t)
			}
			a.innerExit = t
		}
	}
	if a.innerExit == 0 || a.innerExit == n.Header || a.innerExit == n.Stop {
		return reject(n.Inner, "interchange: the inner loop has no exit into the level's body")
	}
	written := map[LiveIn]bool{}
	for _, addr := range inner {
		_, w := a.blockUse(addr)
		for r := range w {
			written[a.liveInOf(r)] = true
		}
	}
	for _, l := range a.liveAt(a.innerExit, outer) {
		k := l
		k.Written = false
		if written[k] {
			return reject(n.Inner, "interchange: the level reads %s after the inner loop, which writes it", l)
		}
	}
	return nil
}

// checkStart checks that a part starting at Start may take its live-in
// values from the header: no block on a path from the header to Start
// writes one of them (a register, or a stack slot at the same offset from
// an unchanged frame base).
func (a *analysis) checkStart() error {
	n := a.n
	live := map[LiveIn]bool{}
	for _, l := range a.liveIns {
		l.Written = false
		live[l] = true
	}
	// The blocks on a path from the header to Start: reached from the
	// header and reaching Start, neither through the header again (a
	// path that skips Start, to the latch, writes after the part's
	// iteration, not before it).
	toStart := map[uint64]bool{n.Start: true}
	for changed := true; changed; {
		changed = false
		for addr, b := range n.Blocks {
			if toStart[addr] || addr == n.Header {
				continue
			}
			for _, t := range b.Successors() {
				if toStart[t] {
					toStart[addr], changed = true, true
					break
				}
			}
		}
	}
	for _, addr := range n.reach(n.Header, n.Start) {
		if addr != n.Header && !toStart[addr] {
			continue
		}
		b := n.Blocks[addr]
		off := map[gvinst.Reg]int64{}
		for _, base := range a.bases {
			off[base] = privKeyOf(base, 0)
		}
		for i := range b.Insts {
			in := &b.Insts[i]
			if isStringOp(in.Op) || in.Op == gvinst.OpSt {
				if o, ok := off[in.Src[0]]; ok || isStringOp(in.Op) {
					for l := range live {
						if l.Stack && (isStringOp(in.Op) || privKeyOf(l.Base, l.Disp) < o+in.Imm+int64(in.Type.Size()) && o+in.Imm < privKeyOf(l.Base, l.Disp)+int64(l.Size)) {
							return reject(in.X86, "the part from %#x reads %s, which the level writes before it", n.Start, l)
						}
					}
				}
			}
			for r := gvinst.Reg(0); r < gvinst.NumGuestSlots; r++ {
				if live[LiveIn{Slot: r}] && writesSlot(in, r) {
					return reject(in.X86, "the part from %#x reads %s, which the level writes before it", n.Start, r)
				}
			}
			if hasDst(in) {
				o, ok := off[in.Src[0]]
				delete(off, in.Dst)
				if in.DstType().IsWide() {
					delete(off, in.Dst+1)
				}
				switch {
				case !ok || in.Type.Size() != 8:
				case in.Op == gvinst.OpGet || in.Op == gvinst.OpMov:
					off[in.Dst] = o
				case (in.Op == gvinst.OpAdd || in.Op == gvinst.OpSub) && in.Type.IsInt() && in.HasImm:
					if in.Op == gvinst.OpSub {
						off[in.Dst] = o - in.Imm
					} else {
						off[in.Dst] = o + in.Imm
					}
				}
			}
		}
	}
	return nil
}

// liveInOf names frame slot r (a guest slot or a private stack slot's
// register) as a LiveIn, Written unset.
func (a *analysis) liveInOf(r int) LiveIn {
	if r < int(gvinst.NumGuestSlots) {
		return LiveIn{Slot: gvinst.Reg(r)}
	}
	for o, i := range a.privIdx {
		if int(gvinst.NumGuestSlots)+i == r {
			b, d := privBaseOff(o)
			return LiveIn{Stack: true, Base: b, Disp: d, Size: a.privSize[o]}
		}
	}
	return LiveIn{Slot: gvinst.Reg(r)}
}

// check2D checks that the nest can map its inner level to x and finds the
// values live at the inner header.
func (a *analysis) check2D() error {
	n := a.n
	if n.Blocks[n.Inner] == nil || !n.InnerBlocks[n.Inner] {
		return reject(n.Inner, "2D: the inner header %#x is not among the blocks", n.Inner)
	}
	a.inner = n.InnerBlocks
	var inner []uint64
	for _, addr := range a.order {
		if a.inner[addr] {
			inner = append(inner, addr)
		}
	}
	// The blocks that run after the inner loop in a row (no thread of a
	// 2D kernel runs them).
	after := map[uint64]bool{}
	for _, addr := range inner {
		for _, t := range n.Blocks[addr].Successors() {
			if !a.inner[t] && n.Blocks[t] != nil && t != n.Header {
				for _, b := range n.reach(t, n.Header) {
					after[b] = true
				}
			}
		}
	}
	for i, s := range a.sites {
		if !s.Store || a.inner[s.Block] || n.Dead[[2]uint64{s.Block, uint64(s.Index)}] {
			continue
		}
		if !n.OuterStores || n.Interchange || n.ThreadLoop != 0 || n.Inner2 != 0 || n.part() || n.inCycle(s.Block) {
			// (A store in a loop of the outer body would have every
			// thread of the row run that loop: the 1D kernel runs it
			// once.)
			return reject(s.X86, "2D: the outer loop body stores outside the inner loop")
		}
		if after[s.Block] {
			// Made by the row's last thread, which leaves the inner
			// loop to the one block after it.
			if a.innerLeavesTo() == 0 {
				return reject(s.X86, "2D: the outer loop body stores after an inner loop that leaves to several places")
			}
			a.tailStores = true
		} else {
			a.rowChecked = append(a.rowChecked, i)
		}
		a.outerStores = append(a.outerStores, i)
	}
	if a.innerStringStores() {
		// A string store of the inner level is not checked against them.
		a.rowChecked = nil
	}
	if len(a.outerStores) > 0 {
		// Every thread of a row runs the outer body: where it divides
		// (mvt's x1[i] = (double)(i % n) / n, four times), that costs
		// more than the inner iteration, and the 1D kernel, which runs
		// it once per row, is the better one.
		for _, addr := range a.order {
			if a.inner[addr] {
				continue
			}
			for _, in := range n.Blocks[addr].Insts {
				switch in.Op {
				case gvinst.OpDiv, gvinst.OpRem, gvinst.OpDivW, gvinst.OpRemW, gvinst.OpSqrt, gvinst.OpVDiv, gvinst.OpVSqrt:
					return reject(in.X86, "2D: the outer body divides, and its stores would have every thread of a row do it")
				}
			}
		}
	}
	for _, addr := range inner {
		for _, t := range n.Blocks[addr].Successors() {
			if _, ok := n.Blocks[t]; !ok {
				return reject(n.Blocks[addr].Insts[len(n.Blocks[addr].Insts)-1].X86, "2D: the inner loop leaves the nest")
			}
		}
	}
	a.innerLive = a.liveAt(n.Inner, inner)
	return nil
}

// onlyFeedsSetFlags reports whether the value GETFLAGS i of b reads only
// reaches SETFLAGS of b, through ANDs and ORs (a ucomisd's flags update:
// the status bits masked out of the incoming flags, the new ones or-ed
// in). With SETFLAGS lowered to nothing, the incoming flags then matter
// to no thread.
func onlyFeedsSetFlags(b *gvinst.VBlock, i int) bool {
	vals := map[gvinst.Reg]bool{b.Insts[i].Dst: true}
	for k := i + 1; k < len(b.Insts); k++ {
		in := &b.Insts[k]
		reads := false
		for _, r := range in.SrcRegs() {
			reads = reads || vals[r]
		}
		switch {
		case !reads:
			if hasDst(in) && vals[in.Dst] {
				delete(vals, in.Dst) // written again
			}
		case in.Op == gvinst.OpSetFlags:
		case (in.Op == gvinst.OpAnd || in.Op == gvinst.OpOr) && hasDst(in) && in.Dst.IsVirtual():
			vals[in.Dst] = true
		default:
			return false
		}
	}
	return true
}

// check3D checks that the nest can map its innermost level (Inner2) to
// x, its inner level to y and itself to z, and finds the values live at
// the innermost header and where the innermost loop leaves to.
func (a *analysis) check3D() error {
	n := a.n
	if n.Inner == 0 || n.Interchange || n.ThreadLoop != 0 || n.TripCheck != 0 || n.part() || len(n.Dead) > 0 {
		return reject(n.Inner2, "3D: the innermost level at %#x needs a plain 2D nest above it", n.Inner2)
	}
	if n.Inner2 == n.Inner || n.Blocks[n.Inner2] == nil || !n.Inner2Blocks[n.Inner2] || !n.InnerBlocks[n.Inner2] {
		return reject(n.Inner2, "3D: the innermost header %#x is not a block of the inner level", n.Inner2)
	}
	for b := range n.Inner2Blocks {
		if !n.InnerBlocks[b] || b == n.Inner {
			return reject(n.Inner2, "3D: the innermost level's block %#x is not a block of the inner level", b)
		}
	}
	a.inner2 = n.Inner2Blocks
	var inner2 []uint64
	for _, addr := range a.order {
		if a.inner2[addr] {
			inner2 = append(inner2, addr)
		}
	}
	for _, s := range a.sites {
		if s.Store && !a.inner2[s.Block] {
			return reject(s.X86, "3D: the inner loop body stores outside the innermost loop")
		}
	}
	for _, addr := range inner2 {
		for _, t := range n.Blocks[addr].Successors() {
			if a.inner2[t] {
				continue
			}
			if !n.InnerBlocks[t] {
				return reject(n.Blocks[addr].Insts[len(n.Blocks[addr].Insts)-1].X86, "3D: the innermost loop leaves the inner level")
			}
			if a.inner2Exit != 0 && a.inner2Exit != t {
				return reject(n.Blocks[addr].Insts[len(n.Blocks[addr].Insts)-1].X86, "3D: the innermost loop leaves to %#x and to %#x", a.inner2Exit, t)
			}
			a.inner2Exit = t
		}
	}
	if a.inner2Exit == 0 {
		return reject(n.Inner2, "3D: the innermost loop has no exit")
	}
	// Every thread runs the inner body up to its innermost iteration:
	// where that divides, the 2D kernel, which runs it once per inner
	// iteration, is the better one.
	for b := range n.InnerBlocks {
		if a.inner2[b] || n.Blocks[b] == nil {
			continue
		}
		for _, in := range n.Blocks[b].Insts {
			switch in.Op {
			case gvinst.OpDiv, gvinst.OpRem, gvinst.OpDivW, gvinst.OpRemW, gvinst.OpSqrt, gvinst.OpVDiv, gvinst.OpVSqrt:
				return reject(in.X86, "3D: the inner body divides, and every innermost iteration's thread would do it")
			}
		}
	}
	a.inner2Live = a.liveAt(n.Inner2, inner2)
	return nil
}

// anyAddress reports whether LD or ST i of b may be at any address, and
// so gets the access that works at any alignment (emit.go's loadAny and
// storeAny) instead of the plain one, which requires natural alignment:
//   - a 16-byte access no CHKALIGN checks (movdqu, movups, movupd) whose
//     lanes are narrower than 8 bytes: floats, and bytes, words or
//     dwords of a row at any offset (a stencil's shifted reads); over
//     doubles or quadwords it is 8-byte aligned, and keeps the plain
//     access (two 8-byte words), which hoist.go walks with pointers;
//   - a 4- or 8-byte integer access that moves part of a vector register
//     that ops on narrower lanes use (movq over bytes or floats, movd over
//     bytes: a vector loop's 8-byte tail). movsd moves a double the same
//     way and keeps the plain access.
//
// Either way the kernel is exact: a plain access the guest makes at an
// unaligned address ends the thread with ErrCodeAlign, and the CPU runs
// the instance.
func anyAddress(b *gvinst.VBlock, i int, checked bool) bool {
	in := &b.Insts[i]
	size := in.Type.Size()
	lanes, known := accessLanes(b, i)
	switch {
	case checked:
		return false
	case size == 16:
		return !known || lanes.Size() < 8
	case in.Type.IsInt() && (size == 4 || size == 8):
		return known && lanes.Size() < size
	}
	return false
}

// accessLanes returns the lane type of the first op in b that reads the
// value LD i of b loads (followed through JOIN.b128 as its low half, MOV,
// and PUT and GET of a slot), or of the op that made the value ST i
// stores: a packed op's lane type (the source type of a conversion), or a
// scalar op's type. It reports false when no op of b tells.
func accessLanes(b *gvinst.VBlock, i int) (gvinst.Type, bool) {
	in := &b.Insts[i]
	if in.Op == gvinst.OpSt {
		for k := i - 1; k >= 0; k-- {
			if d := &b.Insts[k]; hasDst(d) && (d.Dst == in.Src[1] || d.DstType().Slots() == 2 && d.Dst+1 == in.Src[1]) {
				return laneTypeOf(d)
			}
		}
		return 0, false
	}
	regs, slots := map[gvinst.Reg]bool{in.Dst: true}, map[gvinst.Reg]bool{}
	for k := i + 1; k < len(b.Insts); k++ {
		u := &b.Insts[k]
		switch {
		case (u.Op == gvinst.OpJoin || u.Op == gvinst.OpMov) && regs[u.Src[0]]:
			regs[u.Dst] = true
			continue
		case u.Op == gvinst.OpPut && regs[u.Src[0]]:
			slots[u.Dst] = true
			continue
		case u.Op == gvinst.OpGet && slots[u.Src[0]]:
			regs[u.Dst] = true
			continue
		case u.Op == gvinst.OpPut:
			delete(slots, u.Dst) // another value
			continue
		case u.Op == gvinst.OpSt:
			// A copy: not a use that tells the lanes.
		default:
			for _, r := range u.SrcRegs() {
				if regs[r] {
					return laneTypeOf(u)
				}
			}
		}
		if hasDst(u) {
			delete(regs, u.Dst) // overwritten
		}
	}
	return 0, false
}

// laneTypeOf is the lane type op in works on: a conversion's source type,
// a packed op's lane type, a scalar op's type; false for ops whose type
// says nothing of lanes (b128 logic, moves, JOIN, GET, LD).
func laneTypeOf(in *gvinst.Inst) (gvinst.Type, bool) {
	switch in.Op {
	case gvinst.OpGet, gvinst.OpMov, gvinst.OpJoin, gvinst.OpLd, gvinst.OpVAnd, gvinst.OpVOr, gvinst.OpVXor, gvinst.OpVAndN, gvinst.OpVBShl, gvinst.OpVBShr:
		return 0, false
	case gvinst.OpVCvt, gvinst.OpCvt:
		return in.SrcType, in.SrcType != 0
	}
	return in.Type, in.Type != 0 && in.Type != gvinst.B128
}

// checkOps rejects blocks with instructions the generator cannot lower.
func (a *analysis) checkOps() error {
	for _, addr := range a.order {
		b := a.n.Blocks[addr]
		if len(b.Insts) == 0 {
			return reject(addr, "empty block")
		}
		for i := range b.Insts {
			in := &b.Insts[i]
			if in.Type == gvinst.F80 || in.SrcType == gvinst.F80 {
				return reject(in.X86, "x87 extended precision (%s) has no GPU equivalent", in.Op)
			}
			switch in.Op {
			case gvinst.OpFlags, gvinst.OpJoin, gvinst.OpSetFlags:
				// Flags a block leaves behind: a reader in the loop
				// would be a GETCC or GETFLAGS of another block,
				// refused there, so no thread reads them.
				continue
			case gvinst.OpGetFlags:
				if onlyFeedsSetFlags(b, i) {
					continue // the incoming flags' system bits, kept by a SETFLAGS nobody reads
				}
				return reject(in.X86, "%s reads or writes the x86 flags across blocks (not fused into a CMP)", in.Op)
			case gvinst.OpGetCC:
				return reject(in.X86, "%s reads or writes the x86 flags across blocks (not fused into a CMP)", in.Op)
			case gvinst.OpBswap:
				if in.Type.Size() == 2 {
					return reject(in.X86, "BSWAP of 16 bits is undefined on x86")
				}
			case gvinst.OpCvt, gvinst.OpRound, gvinst.OpVCvt, gvinst.OpVRound:
				switch gvinst.Rounding(in.Mod) {
				case gvinst.RoundX87:
					return reject(in.X86, "%s rounds by the x87 control word", in.Op)
				case gvinst.RoundMXCSR:
					a.usesDyn = true
				}
			}
			info := in.Op.Info()
			if vecSupported(in) || in.Op == gvinst.OpDivW || in.Op == gvinst.OpRemW {
				continue
			}
			if isStringOp(in.Op) {
				a.usesDF = true
				a.copies = a.copies || in.Op == gvinst.OpRepMovs
				continue
			}
			if !info.GPU {
				if info.Types == gvinst.TVec {
					return reject(in.X86, "packed SSE op %s.%s is not lowered to PTX", in.Op, in.Type)
				}
				return reject(in.X86, "op %s has no GPU lowering", in.Op)
			}
			if in.Op.EndsBlock() && i != len(b.Insts)-1 {
				return reject(in.X86, "control transfer in the middle of a block")
			}
		}
		last := &b.Insts[len(b.Insts)-1]
		if last.Op != gvinst.OpJmp && last.Op != gvinst.OpBranch {
			return reject(last.X86, "block %#x ends in %s, which a kernel cannot do", addr, last.Op)
		}
	}
	return nil
}

// checkedAccess finds the LD or ST whose address the CHKALIGN at index i
// of b checks: the next access of the same register and displacement, of
// at least the checked size, with the register unchanged in between.
func checkedAccess(b *gvinst.VBlock, i int) (int, bool) {
	chk := &b.Insts[i]
	for j := i + 1; j < len(b.Insts); j++ {
		in := &b.Insts[j]
		if (in.Op == gvinst.OpLd || in.Op == gvinst.OpSt) && in.Src[0] == chk.Src[0] && in.Imm == chk.Imm {
			return j, in.Type.Size() >= chk.Type.Size()
		}
		if hasDst(in) && in.Dst <= chk.Src[0] && chk.Src[0] < in.Dst+gvinst.Reg(in.DstType().Slots()) {
			return 0, false
		}
	}
	return 0, false
}

// writesSlot reports whether in writes guest slot r (explicitly).
func writesSlot(in *gvinst.Inst, r gvinst.Reg) bool {
	if _, w := stringRegs(in); slices.Contains(w, r) {
		return true
	}
	info := in.Op.Info()
	for _, k := range info.Operands {
		if k == gvinst.OpdDst {
			t := in.DstType()
			return in.Dst <= r && r < in.Dst+gvinst.Reg(t.Slots())
		}
	}
	return false
}

// findBase finds the frame base registers (rsp, rbp) the level never
// writes: stack slots addressed from them are private to each iteration.
func (a *analysis) findBase() {
	for _, cand := range []gvinst.Reg{gvinst.S4, gvinst.S5} {
		ok := true
		for _, addr := range a.order {
			for i := range a.n.Blocks[addr].Insts {
				if writesSlot(&a.n.Blocks[addr].Insts[i], cand) {
					ok = false
				}
			}
		}
		if ok {
			a.bases = append(a.bases, cand)
		}
	}
}

// A private slot is keyed by its offset from its base register, with rsp's
// slots moved far from rbp's: privKeyOf(base, off).
const rspBias = 1 << 40

func privKeyOf(base gvinst.Reg, off int64) int64 {
	if base == gvinst.S4 {
		return off + rspBias
	}
	return off
}

func privBaseOff(key int64) (gvinst.Reg, int64) {
	if key > rspBias/2 {
		return gvinst.S4, key - rspBias
	}
	return gvinst.S5, key
}

// findAccesses splits the LD/ST instructions into private stack slots and
// guest memory sites.
func (a *analysis) findAccesses() error {
	type acc struct {
		k    [2]int64
		off  int64
		size int
		x86  uint64
	}
	var privs []acc
	for _, addr := range a.order {
		b := a.n.Blocks[addr]
		// Offsets are valid at each instruction: recompute incrementally.
		off := map[gvinst.Reg]int64{}
		for _, b := range a.bases {
			off[b] = privKeyOf(b, 0)
		}
		for i := range b.Insts {
			in := &b.Insts[i]
			if isStringOp(in.Op) {
				if in.Op == gvinst.OpRepMovs {
					s := Site{ID: len(a.sites), Block: addr, Index: i, X86: in.X86, Size: in.Type.Size()}
					a.copyFrom[key(addr, i)] = s.ID
					a.sites = append(a.sites, s)
				}
				s := Site{ID: len(a.sites), Block: addr, Index: i, X86: in.X86, Size: in.Type.Size(), Store: true}
				a.siteAt[key(addr, i)] = s.ID
				a.sites = append(a.sites, s)
			}
			if in.Op == gvinst.OpChkAlign {
				if _, private := off[in.Src[0]]; !private {
					if j, ok := checkedAccess(b, i); ok {
						a.align[key(addr, j)] = in.Type.Size()
						a.alignChecked[key(addr, i)] = true
					}
				}
			}
			if (in.Op == gvinst.OpLd || in.Op == gvinst.OpSt) && anyAddress(b, i, a.align[key(addr, i)] >= 16) {
				a.anyAlign[key(addr, i)] = true
			}
			if in.Op == gvinst.OpLd || in.Op == gvinst.OpSt {
				srcIdx := 0
				size := in.Type.Size()
				if o, ok := off[in.Src[srcIdx]]; ok {
					so := o + in.Imm
					if size == 16 {
						privs = append(privs, acc{key(addr, i), so, 8, in.X86}, acc{[2]int64{-1, 0}, so + 8, 8, in.X86})
					} else {
						privs = append(privs, acc{key(addr, i), so, size, in.X86})
					}
					a.priv[key(addr, i)] = so
				} else {
					s := Site{ID: len(a.sites), Block: addr, Index: i, X86: in.X86, Size: size, Store: in.Op == gvinst.OpSt}
					a.siteAt[key(addr, i)] = s.ID
					a.sites = append(a.sites, s)
				}
			}
			if hasDst(in) {
				delete(off, in.Dst)
				if in.DstType().IsWide() {
					delete(off, in.Dst+1)
				}
				switch in.Op {
				case gvinst.OpGet, gvinst.OpMov:
					if in.Type.Size() == 8 {
						if o, ok := off[in.Src[0]]; ok {
							off[in.Dst] = o
						}
					}
				case gvinst.OpAdd, gvinst.OpSub:
					if in.Type.Size() == 8 && in.Type.IsInt() && in.HasImm {
						if o, ok := off[in.Src[0]]; ok {
							if in.Op == gvinst.OpAdd {
								off[in.Dst] = o + in.Imm
							} else {
								off[in.Dst] = o - in.Imm
							}
						}
					}
				}
			}
		}
	}
	for _, p := range privs {
		if p.size > a.privSize[p.off] {
			a.privSize[p.off] = p.size
		}
	}
	offs := make([]int64, 0, len(a.privSize))
	for o := range a.privSize {
		offs = append(offs, o)
	}
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
	for i, o := range offs {
		if i > 0 && offs[i-1]+int64(a.privSize[offs[i-1]]) > o {
			b1, o1 := privBaseOff(offs[i-1])
			b2, o2 := privBaseOff(o)
			return reject(0, "overlapping stack slot accesses at [%s%+d] and [%s%+d]", b1, o1, b2, o2)
		}
		a.privIdx[o] = i
	}
	return nil
}

// hasDst reports whether in writes a destination register.
func hasDst(in *gvinst.Inst) bool {
	for _, k := range in.Op.Info().Operands {
		if k == gvinst.OpdDst {
			return true
		}
	}
	return false
}

// findExit finds the branch of the level that leaves it, and the CMP
// that decides it; copies of one x86 branch in several blocks are one exit,
// and so are x86 branches that make the same compare of the same guest
// registers (gcc ends each side of a test the loop does not change with
// its own copy of the loop's compare: profile's latchExitTwins).
func (a *analysis) sameExitOperands(x, y ExitCopy) bool {
	for k, pair := range [2][2]gvinst.Reg{{x.A, y.A}, {x.B, y.B}} {
		if k == 1 && a.exit.BImm {
			break
		}
		sx, okx := a.n.Blocks[x.Block].SlotHolding(x.Index, pair[0])
		sy, oky := a.n.Blocks[y.Block].SlotHolding(y.Index, pair[1])
		if !okx || !oky || sx != sy {
			return false
		}
	}
	return true
}

// negateIntCmp returns the integer comparison that holds exactly when c
// does not.
func negateIntCmp(c gvinst.Cmp) (gvinst.Cmp, bool) {
	switch c {
	case gvinst.CmpEq:
		return gvinst.CmpNe, true
	case gvinst.CmpNe:
		return gvinst.CmpEq, true
	case gvinst.CmpLt:
		return gvinst.CmpGe, true
	case gvinst.CmpGe:
		return gvinst.CmpLt, true
	case gvinst.CmpLe:
		return gvinst.CmpGt, true
	case gvinst.CmpGt:
		return gvinst.CmpLe, true
	}
	return c, false
}

// findExit finds the branch of the level that leaves it, and the CMP
// that decides it (see sameExitOperands for several).
func (a *analysis) findExit() error {
	found := false
	for _, addr := range a.order {
		b := a.n.Blocks[addr]
		last := &b.Insts[len(b.Insts)-1]
		var out []int
		for k, t := range b.Successors() {
			if _, in := a.n.Blocks[t]; !in && !a.n.Cold[t] {
				out = append(out, k)
			}
		}
		if len(out) == 0 {
			continue
		}
		if last.Op != gvinst.OpBranch || len(out) != 1 {
			return reject(last.X86, "block %#x leaves the loop unconditionally", addr)
		}
		ci := -1
		for i := len(b.Insts) - 2; i >= 0; i-- {
			if writesSlot(&b.Insts[i], last.Src[0]) {
				ci = i
				break
			}
		}
		if ci < 0 || b.Insts[ci].Op != gvinst.OpCmp || !b.Insts[ci].Type.IsInt() {
			return reject(last.X86, "the loop's exit branch does not test an integer CMP of its own block")
		}
		c := &b.Insts[ci]
		for j := ci + 1; j < len(b.Insts)-1; j++ {
			if writesSlot(&b.Insts[j], c.Dst) {
				return reject(last.X86, "the exit condition is overwritten before the branch")
			}
		}
		e := ExitTest{X86: last.X86, Cmp: gvinst.Cmp(c.Mod), Type: c.Type, BImm: c.HasImm, Imm: c.Imm, ContinueIf: out[0] == 1}
		cp := ExitCopy{Block: addr, Index: ci, A: c.Src[0], B: c.Src[1]}
		if found {
			x := a.exit
			if x.ContinueIf != e.ContinueIf && x.X86 != e.X86 {
				// je out and jne back are one exit test.
				if nc, ok := negateIntCmp(e.Cmp); ok {
					e.Cmp, e.ContinueIf = nc, !e.ContinueIf
				}
			}
			if x.Cmp != e.Cmp || x.Type != e.Type || x.BImm != e.BImm || x.Imm != e.Imm || x.ContinueIf != e.ContinueIf ||
				x.X86 != e.X86 && !a.sameExitOperands(x.Copies[0], cp) {
				return reject(last.X86, "the loop has more than one exit (another at %#x)", x.X86)
			}
			a.exit.Copies = append(a.exit.Copies, cp)
			continue
		}
		found = true
		e.Copies = []ExitCopy{cp}
		a.exit = e
	}
	if !found {
		return reject(a.n.Header, "the loop has no exit branch")
	}
	return nil
}

// resource numbers: guest slots 0..NumGuestSlots-1, then private slots.
func (a *analysis) privRes(off int64) int { return int(gvinst.NumGuestSlots) + a.privIdx[off] }

// blockUse computes the resources block b reads before writing them
// (exposed) and those it writes.
func (a *analysis) blockUse(addr uint64) (exposed, written map[int]bool) {
	exposed, written = map[int]bool{}, map[int]bool{}
	b := a.n.Blocks[addr]
	read := func(r int) {
		if !written[r] {
			exposed[r] = true
		}
	}
	for i := range b.Insts {
		in := &b.Insts[i]
		if o, ok := a.priv[key(addr, i)]; ok {
			n := 1
			if in.Type.Size() == 16 {
				n = 2
			}
			for k := 0; k < n; k++ {
				r := a.privRes(o + int64(8*k))
				if in.Op == gvinst.OpLd {
					read(r)
				} else if in.Type.Size() == 8 || in.Type.Size() == 16 || in.Type.Size() == a.privSize[o] {
					written[r] = true
				} else {
					read(r) // a partial store merges with the old bytes
					written[r] = true
				}
			}
		}
		if rs, ws := stringRegs(in); rs != nil {
			// rep stos and rep movs read their registers and leave
			// rcx, rdi (and rsi) advanced.
			for _, r := range rs {
				read(int(r))
			}
			for _, r := range ws {
				written[int(r)] = true
			}
		}
		info := in.Op.Info()
		si := 0
		for _, k := range info.Operands {
			switch k {
			case gvinst.OpdSrc, gvinst.OpdMem, gvinst.OpdSrcImm:
				if k == gvinst.OpdSrcImm && in.HasImm {
					si++
					continue
				}
				r := in.Src[si]
				t := in.SrcTypeOf(si)
				si++
				for s := 0; s < t.Slots(); s++ {
					if rr := r + gvinst.Reg(s); rr < gvinst.NumGuestSlots {
						read(int(rr))
					}
				}
			}
		}
		if hasDst(in) {
			t := in.DstType()
			for s := 0; s < t.Slots(); s++ {
				if rr := in.Dst + gvinst.Reg(s); rr < gvinst.NumGuestSlots {
					written[int(rr)] = true
				}
			}
		}
	}
	return exposed, written
}

// findLiveIns computes the values read on some path from the header before
// being written (a must-write forward dataflow over the level's blocks).
func (a *analysis) findLiveIns() {
	a.liveIns = a.liveAt(a.n.start(), a.order)
}

// liveAt computes the values read on some path from header, through the
// given blocks, before being written (blocks no such path reaches read
// nothing).
func (a *analysis) liveAt(header uint64, blocks []uint64) []LiveIn {
	inSet := map[uint64]bool{}
	for _, b := range blocks {
		inSet[b] = true
	}
	type use struct{ exp, wr map[int]bool }
	uses := map[uint64]use{}
	preds := map[uint64][]uint64{}
	for _, addr := range blocks {
		e, w := a.blockUse(addr)
		uses[addr] = use{e, w}
		for _, s := range a.n.Blocks[addr].Successors() {
			if inSet[s] && s != header {
				preds[s] = append(preds[s], addr)
			}
		}
	}
	// in[b] = nil means "everything" (not yet reached).
	in := map[uint64]map[int]bool{header: {}}
	outOf := func(b uint64) map[int]bool {
		i, ok := in[b]
		if !ok {
			return nil
		}
		o := map[int]bool{}
		for r := range i {
			o[r] = true
		}
		for r := range uses[b].wr {
			o[r] = true
		}
		return o
	}
	for changed := true; changed; {
		changed = false
		for _, b := range blocks {
			if b == header {
				continue
			}
			var reached []map[int]bool
			for _, p := range preds[b] {
				if o := outOf(p); o != nil {
					reached = append(reached, o)
				}
			}
			meet, ok := meetSets(reached)
			if !ok {
				continue
			}
			old, ok := in[b]
			if !ok || len(old) != len(meet) {
				in[b] = meet
				changed = true
				continue
			}
			for r := range meet {
				if !old[r] {
					in[b] = meet
					changed = true
					break
				}
			}
		}
	}
	live := map[int]bool{}
	for _, b := range blocks {
		def, reached := in[b]
		if !reached {
			continue // no path from header runs it
		}
		for r := range uses[b].exp {
			if !def[r] {
				live[r] = true
			}
		}
	}
	var rs []int
	for r := range live {
		rs = append(rs, r)
	}
	sort.Ints(rs)
	offOf := map[int]int64{}
	for o, i := range a.privIdx {
		offOf[int(gvinst.NumGuestSlots)+i] = o
	}
	written := map[int]bool{}
	for _, b := range blocks {
		for r := range uses[b].wr {
			written[r] = true
		}
	}
	var out []LiveIn
	for _, r := range rs {
		if r < int(gvinst.NumGuestSlots) {
			out = append(out, LiveIn{Slot: gvinst.Reg(r), Written: written[r]})
		} else {
			o := offOf[r]
			b, d := privBaseOff(o)
			out = append(out, LiveIn{Stack: true, Base: b, Disp: d, Size: a.privSize[o], Written: written[r]})
		}
	}
	return out
}

// meetSets is the meet of a must-dataflow at a block: the keys set (true)
// in every one of sets, the facts of the predecessors (or edges) reached so
// far, as a new map; false when none was reached yet.
func meetSets[M ~map[K]bool, K comparable](sets []M) (M, bool) {
	if len(sets) == 0 {
		return nil, false
	}
	m := make(M, len(sets[0]))
	for k, v := range sets[0] {
		if v {
			m[k] = true
		}
	}
	for _, o := range sets[1:] {
		for k := range m {
			if !o[k] {
				delete(m, k)
			}
		}
	}
	return m, true
}

// innerStringStores reports whether a block of the inner level stores
// with a string op (rep stos, rep movs).
func (a *analysis) innerStringStores() bool {
	for addr := range a.inner {
		b := a.n.Blocks[addr]
		if b == nil {
			continue
		}
		for _, in := range b.Insts {
			if in.Op == gvinst.OpRepStos || in.Op == gvinst.OpRepMovs {
				return true
			}
		}
	}
	return false
}
