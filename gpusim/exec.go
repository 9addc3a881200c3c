package gpusim

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gxbit/gxbit/gpu"
)

const fullMask = ^uint32(0)

// stackEntry is one entry of a warp's reconvergence stack: the lanes in mask
// run from pc until they reach rpc.
type stackEntry struct {
	pc, rpc int32
	mask    uint32
}

// warp is 32 lanes executing in lockstep. Registers are stored as
// struct-of-arrays: r[reg][lane]; predicates as one lane mask each.
type warp struct {
	r      [][32]uint64
	p      []uint32
	cta    *cta
	id     int
	stack  []stackEntry
	exited uint32
	cc     uint32 // CC.CF, the carry flag of each lane
	atBar  bool
	barID  int
	done   bool
	fault  *faultInfo

	// Global-memory lookup cache: the allocation hit last.
	gb, ge uint64
	gdata  []byte

	threadInstr, warpInstr, divergent uint64
}

// cta is the state of one thread block; a worker reuses it for every block
// it runs, and the kernel keeps it for the worker of the same index in
// later launches (see execute), so launches allocate nothing per warp.
type cta struct {
	l      *launch
	ctaid  [3]uint32
	shared []byte
	local  []byte
	warps  []*warp
	worker int
	bars   [16]barState
	// Instruction counts of the blocks this worker has finished in the
	// current launch.
	threadInstr, warpInstr, divergent uint64
	// gcache holds, per instruction, the allocation its last global access
	// hit: loads and stores usually stay inside one array.
	gcache []gslot
}

// barState counts the threads that have arrived at one named barrier, in
// whole warps as the hardware does; want is the expected count, 0 for the
// whole CTA.
type barState struct {
	arrived, want int
}

type gslot struct {
	base uint64
	data []byte
}

// launch is one kernel launch in progress.
type launch struct {
	k        *kernel
	ctx      *Context
	cfg      gpu.LaunchConfig
	params   []byte
	mem      *memory
	nthreads int
	start    time.Time

	// next is the index of the next CTA to run. Every worker takes its
	// blocks from it, so it sits on a cache line of its own, away from the
	// fields above that workers read all the time.
	_    [64]byte
	next atomic.Uint64
	_    [56]byte

	stop    atomic.Bool
	errOnce sync.Once
	err     error
	issued  atomic.Int64 // warp instructions issued, for the budget
	budget  int64        // 0 = unlimited
	// deadline is when the launch times out (Options.MaxLaunchTime); zero
	// is never.
	deadline time.Time
	locks    [64]sync.Mutex

	threadInstr, warpInstr, divergent atomic.Uint64
}

type faultInfo struct {
	code  gpu.Result
	what  string
	in    *inst
	lane  int
	addr  uint64
	space memSpace
	size  int
}

func (l *launch) fail(err error) {
	l.errOnce.Do(func() { l.err = err })
	l.stop.Store(true)
}

// faultError turns a warp's fault into a launch error naming kernel, PTX
// line, thread, block and address.
func (w *warp) faultError(f *faultInfo) error {
	c := w.cta
	b := c.l.cfg.Block
	t := w.id*32 + f.lane
	tx, ty, tz := t%int(b.X), t/int(b.X)%int(b.Y), t/int(b.X*b.Y)
	return gpu.Errorf(f.code, "cuLaunchKernel", "kernel %s: %s at PTX line %d (%s): thread (%d,%d,%d) block (%d,%d,%d): %s address 0x%x, %d bytes",
		c.l.k.name, f.what, f.in.line, f.in.text, tx, ty, tz, c.ctaid[0], c.ctaid[1], c.ctaid[2], f.space, f.addr, f.size)
}

func (w *warp) setFault(code gpu.Result, what string, in *inst, lane int, sp memSpace, addr uint64, size int) {
	if w.fault == nil {
		w.fault = &faultInfo{code: code, what: what, in: in, lane: lane, addr: addr, space: sp, size: size}
	}
}

// run executes the warp until it exits, reaches a barrier, faults, or has
// issued at least budget instructions (a straight-line run is finished
// first). It returns the number issued.
func (w *warp) run(prog []inst, budget int) int {
	n := len(w.stack)
	if n == 0 {
		w.done = true
		return 0
	}
	e := w.stack[n-1]
	pc, rpc, mask := e.pc, e.rpc, e.mask&^w.exited
	var ti, wi, dv uint64
	for wi < uint64(budget) {
		if pc == rpc || mask == 0 {
			n--
			w.stack = w.stack[:n]
			if n == 0 {
				w.done = true
				break
			}
			e = w.stack[n-1]
			pc, rpc, mask = e.pc, e.rpc, e.mask&^w.exited
			continue
		}
		in := &prog[pc]
		if k := in.run; k > 0 {
			// Unguarded ALU instructions up to the next leader: the mask
			// stays as it is and pc cannot meet rpc (see straightRuns).
			blk := prog[pc : pc+k]
			for i := range blk {
				blk[i].fn(w, &blk[i], mask)
				if w.fault != nil {
					// The faulting instruction counts as issued; the warp
					// stays at it.
					wi += uint64(i + 1)
					ti += uint64(i+1) * uint64(bits.OnesCount32(mask))
					w.stack[n-1] = stackEntry{pc + int32(i), rpc, mask}
					w.threadInstr += ti
					w.warpInstr += wi
					w.divergent += dv
					return int(wi)
				}
			}
			pc += k
			wi += uint64(k)
			ti += uint64(k) * uint64(bits.OnesCount32(mask))
			continue
		}
		wi++
		ti += uint64(bits.OnesCount32(mask))
		em := mask
		if in.guard >= 0 {
			g := w.p[in.guard]
			if in.gneg {
				g = ^g
			}
			em &= g
		}
		switch in.kind {
		case kALU:
			if em != 0 {
				in.fn(w, in, em)
				if w.fault != nil {
					w.stack[n-1] = stackEntry{pc, rpc, mask}
					w.threadInstr += ti
					w.warpInstr += wi
					w.divergent += dv
					return int(wi)
				}
			}
			pc++
		case kBra:
			switch em {
			case mask:
				pc = in.target
			case 0:
				pc++
			default:
				dv++
				r := in.rpc
				taken := stackEntry{in.target, r, em}
				if r == rpc {
					// Both paths rejoin where the current entry ends:
					// the current entry is replaced by the two paths.
					n--
					w.stack = w.stack[:n]
				} else {
					w.stack[n-1] = stackEntry{r, rpc, mask}
				}
				// Fall-through lanes that are already at r wait there in
				// the entry below; others get an entry of their own.
				if pc+1 != r {
					w.stack = append(w.stack, stackEntry{pc + 1, r, mask &^ em})
				}
				w.stack = append(w.stack, taken)
				n = len(w.stack)
				pc, rpc, mask = taken.pc, taken.rpc, taken.mask
			}
		case kExit:
			if em != 0 {
				w.exited |= em
				mask &^= em
				for i := range w.stack {
					w.stack[i].mask &^= em
				}
			}
			pc++
		case kBar:
			if em == 0 {
				pc++
				continue
			}
			first := bits.TrailingZeros32(em) & 31
			id := int(w.r[in.a][first] & 15)
			b := &w.cta.bars[id]
			b.arrived += 32
			if in.b >= 0 {
				b.want = int(uint32(w.r[in.b][first]))
			}
			if in.mode == 1 { // bar.arrive: count and go on
				pc++
				continue
			}
			w.stack[n-1] = stackEntry{pc + 1, rpc, mask}
			w.barID = id
			w.atBar = true
			w.threadInstr += ti
			w.warpInstr += wi
			w.divergent += dv
			return int(wi)
		case kNop:
			pc++
		}
	}
	if n > 0 {
		w.stack[n-1] = stackEntry{pc, rpc, mask}
	}
	w.threadInstr += ti
	w.warpInstr += wi
	w.divergent += dv
	return int(wi)
}

// sliceSteps is how many instructions a warp issues before the scheduler
// checks the launch's budget and stop flag.
const sliceSteps = 1 << 14

// runCTA runs every warp of block idx to completion, switching warps at
// barriers.
func (c *cta) run(idx uint64) error {
	l := c.l
	g := l.cfg.Grid
	c.ctaid = [3]uint32{uint32(idx % uint64(g.X)), uint32(idx / uint64(g.X) % uint64(g.Y)), uint32(idx / uint64(g.X) / uint64(g.Y))}
	clear(c.shared)
	clear(c.local)
	for _, w := range c.warps {
		w.reset()
	}
	prog := l.k.prog
	c.bars = [16]barState{}
	for {
		live, ran := 0, false
		for _, w := range c.warps {
			if w.done {
				continue
			}
			live++
			if w.atBar {
				continue
			}
			ran = true
			steps := w.run(prog, sliceSteps)
			if w.fault != nil {
				return w.faultError(w.fault)
			}
			if l.budget > 0 && l.issued.Add(int64(steps)) > l.budget {
				return gpu.Errorf(gpu.ErrLaunchTimeout, "cuLaunchKernel", "kernel %s: exceeded the budget of %d warp instructions (block (%d,%d,%d))",
					l.k.name, l.budget, c.ctaid[0], c.ctaid[1], c.ctaid[2])
			}
			if !l.deadline.IsZero() && time.Now().After(l.deadline) {
				return gpu.Errorf(gpu.ErrLaunchTimeout, "cuLaunchKernel", "kernel %s: still running after %v (block (%d,%d,%d))",
					l.k.name, l.deadline.Sub(l.start).Round(time.Millisecond), c.ctaid[0], c.ctaid[1], c.ctaid[2])
			}
			if l.stop.Load() {
				return nil
			}
			if w.done {
				live--
			}
		}
		if live == 0 {
			break
		}
		if !c.releaseBarriers(live) && !ran {
			return gpu.Errorf(gpu.ErrLaunchFailed, "cuLaunchKernel", "kernel %s: block (%d,%d,%d): every warp waits at a barrier that cannot complete",
				l.k.name, c.ctaid[0], c.ctaid[1], c.ctaid[2])
		}
	}
	for _, w := range c.warps {
		c.threadInstr += w.threadInstr
		c.warpInstr += w.warpInstr
		c.divergent += w.divergent
		w.threadInstr, w.warpInstr, w.divergent = 0, 0, 0
	}
	return nil
}

// releaseBarriers lets the warps waiting at every barrier whose expected
// count has arrived go on; live is the number of warps still running. It
// reports whether any warp was released.
func (c *cta) releaseBarriers(live int) bool {
	released := false
	for id := range c.bars {
		b := &c.bars[id]
		if b.arrived == 0 {
			continue
		}
		want := b.want
		if want == 0 {
			want = 32 * live
		}
		if b.arrived < want {
			continue
		}
		b.arrived, b.want = 0, 0
		for _, w := range c.warps {
			if w.atBar && w.barID == id {
				w.atBar = false
				released = true
			}
		}
	}
	return released
}

// setup prepares the warp for a launch: ordinary registers and predicates
// hold zeros; constant registers and the special registers that are the
// same in every block are filled here once, as no instruction writes them
// (decoding gives them registers of their own, never a destination).
func (w *warp) setup() {
	k := w.cta.l.k
	clear(w.r)
	for _, ci := range k.consts {
		fillRow(&w.r[ci.reg], ci.val)
	}
	for _, s := range k.sregs {
		if !s.kind.perBlock() {
			w.fillSreg(s)
		}
	}
	w.threadInstr, w.warpInstr, w.divergent = 0, 0, 0
}

// reset prepares the warp for a new block: ordinary registers and
// predicates hold zeros again, the block's %ctaid is filled in, and the
// whole warp starts at pc 0.
func (w *warp) reset() {
	k := w.cta.l.k
	for _, rg := range k.varRegs {
		clear(w.r[rg.lo:rg.hi])
	}
	clear(w.p)
	for _, s := range k.sregs {
		if s.kind.perBlock() {
			w.fillSreg(s)
		}
	}
	valid := fullMask
	if rest := w.cta.l.nthreads - w.id*32; rest < 32 {
		valid = uint32(1)<<uint(rest) - 1
	}
	w.stack = append(w.stack[:0], stackEntry{pc: 0, rpc: int32(len(k.prog)), mask: valid})
	w.exited, w.cc = 0, 0
	w.atBar, w.done, w.fault = false, false, nil
	w.gb, w.ge, w.gdata = 0, 0, nil
}

func fillRow(row *[32]uint64, v uint64) {
	for i := range row {
		row[i] = v
	}
}

// perBlock reports whether the special register differs between the
// blocks of a launch.
func (k sregKind) perBlock() bool {
	return k == srCtaidX || k == srCtaidY || k == srCtaidZ
}

// fillSreg writes special register s into its register row.
func (w *warp) fillSreg(s sregInit) {
	c := w.cta
	l := c.l
	b, g := l.cfg.Block, l.cfg.Grid
	row := &w.r[s.reg]
	switch s.kind {
	case srTidX, srTidY, srTidZ:
		// Thread coordinates of each lane, stepped without division.
		first := uint32(w.id * 32)
		x, y, z := first%b.X, first/b.X%b.Y, first/(b.X*b.Y)
		for lane := range row {
			switch s.kind {
			case srTidX:
				row[lane] = uint64(x)
			case srTidY:
				row[lane] = uint64(y)
			default:
				row[lane] = uint64(z)
			}
			if x++; x == b.X {
				x = 0
				if y++; y == b.Y {
					y = 0
					z++
				}
			}
		}
	case srLaneid:
		for lane := range row {
			row[lane] = uint64(lane)
		}
	case srLanemaskEq, srLanemaskLt, srLanemaskLe, srLanemaskGt, srLanemaskGe:
		for lane := range row {
			var v uint64
			switch s.kind {
			case srLanemaskEq:
				v = 1 << uint(lane)
			case srLanemaskLt:
				v = 1<<uint(lane) - 1
			case srLanemaskLe:
				v = 1<<uint(lane+1) - 1
			case srLanemaskGt:
				v = uint64(^uint32(1<<uint(lane+1) - 1))
			default:
				v = uint64(^uint32(1<<uint(lane) - 1))
			}
			row[lane] = v
		}
	default:
		var v uint64
		switch s.kind {
		case srNtidX:
			v = uint64(b.X)
		case srNtidY:
			v = uint64(b.Y)
		case srNtidZ:
			v = uint64(b.Z)
		case srCtaidX:
			v = uint64(c.ctaid[0])
		case srCtaidY:
			v = uint64(c.ctaid[1])
		case srCtaidZ:
			v = uint64(c.ctaid[2])
		case srNctaidX:
			v = uint64(g.X)
		case srNctaidY:
			v = uint64(g.Y)
		case srNctaidZ:
			v = uint64(g.Z)
		case srWarpid:
			v = uint64(w.id)
		case srNwarpid:
			v = uint64(len(c.warps))
		case srSmid:
			v = uint64(c.worker)
		case srNsmid:
			v = uint64(l.ctx.drv.props.MultiProcessors)
		case srGridid:
			v = 1
		case srDynSmem:
			v = uint64(l.cfg.SharedBytes)
		case srTotalSmem:
			v = uint64(len(c.shared))
		}
		fillRow(row, v)
	}
}

// execute runs all blocks of the launch on the configured number of
// workers. Each worker runs its blocks on one cta, reused for every block
// and kept on the kernel for the next launch (launches of a context are
// serialized by its lock); its instruction counts are merged into the
// launch's once, when the worker ends.
func (l *launch) execute(workers int) error {
	k := l.k
	nblocks := l.cfg.Grid.Count()
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if uint64(workers) > nblocks {
		workers = int(nblocks)
	}
	for len(k.ctas) < workers {
		k.ctas = append(k.ctas, nil)
	}
	var wg sync.WaitGroup
	for wk := 0; wk < workers; wk++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					l.fail(gpu.Errorf(gpu.ErrLaunchFailed, "cuLaunchKernel", "kernel %s: simulator fault: %v", k.name, r))
				}
			}()
			// The worker allocates its own state, so that no two workers'
			// frequently written fields share a cache line.
			c := k.ctas[wk]
			if c == nil {
				c = &cta{}
				k.ctas[wk] = c
			}
			c.prepare(l, wk)
			defer func() {
				l.threadInstr.Add(c.threadInstr)
				l.warpInstr.Add(c.warpInstr)
				l.divergent.Add(c.divergent)
				c.release()
			}()
			for !l.stop.Load() {
				idx := l.next.Add(1) - 1
				if idx >= nblocks {
					return
				}
				if err := c.run(idx); err != nil {
					l.fail(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return l.err
}

// prepare readies a worker's cta, new or kept from an earlier launch of the
// kernel, for launch l: memory sized for this launch's block, the
// per-instruction global-memory cache emptied (allocations may have been
// freed since), and one warp per 32 threads set up for the launch.
func (c *cta) prepare(l *launch, worker int) {
	k := l.k
	c.l, c.worker = l, worker
	c.threadInstr, c.warpInstr, c.divergent = 0, 0, 0
	c.shared = resize(c.shared, k.sharedStatic+int(l.cfg.SharedBytes))
	c.local = resize(c.local, k.localSize*l.nthreads)
	if len(c.gcache) != len(k.prog) {
		c.gcache = make([]gslot, len(k.prog))
	}
	clear(c.gcache)
	nwarps := (l.nthreads + 31) / 32
	for len(c.warps) < nwarps {
		c.warps = append(c.warps, &warp{cta: c, id: len(c.warps), r: make([][32]uint64, k.nregs), p: make([]uint32, k.npreds)})
	}
	c.warps = c.warps[:nwarps]
	for _, w := range c.warps {
		w.setup()
	}
}

// release drops the cta's references to the launch and to device memory
// until its next launch.
func (c *cta) release() {
	c.l = nil
	clear(c.gcache)
	for _, w := range c.warps {
		w.gb, w.ge, w.gdata, w.fault = 0, 0, nil, nil
	}
}

// resize returns a byte slice of length n, reusing b's memory when it is
// large enough.
func resize(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}
