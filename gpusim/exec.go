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
// it runs.
type cta struct {
	l      *launch
	ctaid  [3]uint32
	shared []byte
	local  []byte
	warps  []*warp
	worker int
	bars   [16]barState
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

	next    atomic.Uint64 // next CTA index to run
	stop    atomic.Bool
	errOnce sync.Once
	err     error
	issued  atomic.Int64 // warp instructions issued, for the budget
	budget  int64        // 0 = unlimited
	locks   [64]sync.Mutex

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
// issued budget instructions. It returns the number issued.
func (w *warp) run(prog []inst, budget int) int {
	n := len(w.stack)
	if n == 0 {
		w.done = true
		return 0
	}
	e := w.stack[n-1]
	pc, rpc, mask := e.pc, e.rpc, e.mask&^w.exited
	steps := 0
	var ti, wi, dv uint64
	for steps < budget {
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
		steps++
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
					return steps
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
			return steps
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
	return steps
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
	var ti, wi, dv uint64
	for _, w := range c.warps {
		ti += w.threadInstr
		wi += w.warpInstr
		dv += w.divergent
		w.threadInstr, w.warpInstr, w.divergent = 0, 0, 0
	}
	l.threadInstr.Add(ti)
	l.warpInstr.Add(wi)
	l.divergent.Add(dv)
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

// reset prepares the warp for a new block: registers hold zeros, constants
// and special registers; the whole warp starts at pc 0.
func (w *warp) reset() {
	c := w.cta
	l := c.l
	k := l.k
	clear(w.r)
	clear(w.p)
	b := l.cfg.Block
	g := l.cfg.Grid
	nthreads := l.nthreads
	first := w.id * 32
	valid := fullMask
	if rest := nthreads - first; rest < 32 {
		valid = uint32(1)<<uint(rest) - 1
	}
	for _, ci := range k.consts {
		row := &w.r[ci.reg]
		for i := range row {
			row[i] = ci.val
		}
	}
	// Thread coordinates of each lane, stepped without division.
	var tx, ty, tz [32]uint32
	x, y, z := uint32(first)%b.X, uint32(first)/b.X%b.Y, uint32(first)/(b.X*b.Y)
	for lane := range tx {
		tx[lane], ty[lane], tz[lane] = x, y, z
		if x++; x == b.X {
			x = 0
			if y++; y == b.Y {
				y = 0
				z++
			}
		}
	}
	for _, s := range k.sregs {
		row := &w.r[s.reg]
		for lane := range row {
			var v uint64
			switch s.kind {
			case srTidX:
				v = uint64(tx[lane])
			case srTidY:
				v = uint64(ty[lane])
			case srTidZ:
				v = uint64(tz[lane])
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
			case srLaneid:
				v = uint64(lane)
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
			case srLanemaskEq:
				v = 1 << uint(lane)
			case srLanemaskLt:
				v = 1<<uint(lane) - 1
			case srLanemaskLe:
				v = 1<<uint(lane+1) - 1
			case srLanemaskGt:
				v = uint64(^uint32(1<<uint(lane+1) - 1))
			case srLanemaskGe:
				v = uint64(^uint32(1<<uint(lane) - 1))
			case srDynSmem:
				v = uint64(l.cfg.SharedBytes)
			case srTotalSmem:
				v = uint64(len(c.shared))
			}
			row[lane] = v
		}
	}
	w.stack = append(w.stack[:0], stackEntry{pc: 0, rpc: int32(len(k.prog)), mask: valid})
	w.exited, w.cc = 0, 0
	w.atBar, w.done, w.fault = false, false, nil
	w.gb, w.ge, w.gdata = 0, 0, nil
}

// execute runs all blocks of the launch on the configured number of workers.
func (l *launch) execute(workers int) error {
	k := l.k
	nblocks := l.cfg.Grid.Count()
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if uint64(workers) > nblocks {
		workers = int(nblocks)
	}
	nwarps := (l.nthreads + 31) / 32
	sharedSize := k.sharedStatic + int(l.cfg.SharedBytes)
	var wg sync.WaitGroup
	for wk := 0; wk < workers; wk++ {
		c := &cta{l: l, shared: make([]byte, sharedSize), local: make([]byte, k.localSize*l.nthreads), worker: wk,
			gcache: make([]gslot, len(k.prog))}
		for i := 0; i < nwarps; i++ {
			c.warps = append(c.warps, &warp{cta: c, id: i, r: make([][32]uint64, k.nregs), p: make([]uint32, k.npreds)})
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					l.fail(gpu.Errorf(gpu.ErrLaunchFailed, "cuLaunchKernel", "kernel %s: simulator fault: %v", k.name, r))
				}
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
