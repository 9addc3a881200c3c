package ptxgen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gvinst"
)

// GuestMemory is the guest memory a launch copies from and back to
// (*gvinst.Memory implements it).
type GuestMemory interface {
	Read(addr uint64, buf []byte) error
	Write(addr uint64, buf []byte) error
}

// Range is a guest byte range [Lo, Hi).
type Range struct{ Lo, Hi uint64 }

// Overlaps reports whether r and o share a byte.
func (r Range) Overlaps(o Range) bool { return r.Lo < o.Hi && o.Lo < r.Hi }

// LaunchInput is everything one launch needs from the live state.
type LaunchInput struct {
	Count  uint64   // iterations (threads)
	Values []uint64 // per Kernel.LiveIns: value at thread 0
	Steps  []uint64 // per Kernel.LiveIns: change per iteration
	Sites  []Range  // per Kernel.Sites: the guest bytes the site may touch
	// 2D kernels: the inner trip count of row 0 and its change per row,
	// the largest of them (the grid's width), and per Kernel.InnerLiveIns
	// the change per inner iteration in row 0 and its change per row.
	InnerTrip0, InnerTripStep, InnerMax uint64
	InnerSteps, InnerStepRows           []uint64
	// 3D kernels: the innermost trip count, the same in every inner
	// iteration, and per Kernel.Inner2LiveIns the change per innermost
	// iteration.
	Inner2Trip  uint64
	Inner2Steps []uint64
	// Dense (optional, per Kernel.Sites) marks the store sites that the
	// caller proved write every byte of their footprint in Sites: a new
	// device buffer of a group whose sites all store is not filled from
	// the guest where dense sites cover it (the kernel overwrites those
	// bytes before anything reads them).
	Dense []bool
	// Proven says that a launch of the kernel (or of its Dry variant)
	// with this same input (the
	// values of reloaded registers aside: data to a DataIndependent
	// kernel) ran without error, and the kernel is DataIndependent: this
	// launch cannot
	// fail its checks either (it may run Kernel.Unchecked), so it makes no
	// backup of the device's only copies of what it overwrites. Should it
	// fail after all, those bytes are lost (ErrLostCopy).
	Proven bool
	// ExitState says that the launch's last iteration (Count-1) is the
	// instance's last arrival, which may leave the loop: its thread then
	// stores the exit state (LaunchStats.Exit) where the kernel gives
	// that exit's (Kernel.ExitStates). Without it every exit fails.
	ExitState bool
	// ExitInits are, per Kernel.ExitInits, the CPU's values at the
	// launch (missing: 0, for a launch that is not the last arrival's).
	ExitInits []uint64
	// Dry says the launch is of a Kernel.Dry: it writes no guest byte, so
	// it backs up nothing, leaves nothing stale and copies nothing back,
	// and its Dense is not used (every byte is copied in).
	Dry bool
}

// Overwritten returns the bytes of group g that a launch of k with input in
// writes wholly before any read: the longest run the footprints of in's
// dense sites cover without a gap, when every site of g stores; empty
// otherwise. A new device buffer is not filled there.
func Overwritten(k *Kernel, g Group, in LaunchInput) Range {
	if len(in.Dense) != len(k.Sites) {
		return Range{}
	}
	var dense []Range
	for _, s := range g.Sites {
		if !k.Sites[s].Store {
			return Range{}
		}
		if in.Dense[s] && in.Sites[s].Lo < in.Sites[s].Hi {
			dense = append(dense, in.Sites[s])
		}
	}
	sort.Slice(dense, func(a, b int) bool { return dense[a].Lo < dense[b].Lo })
	var best, cur Range
	for _, r := range dense {
		if cur.Hi > cur.Lo && r.Lo <= cur.Hi {
			cur.Hi = max(cur.Hi, r.Hi)
		} else {
			cur = r
		}
		if cur.Hi-cur.Lo > best.Hi-best.Lo {
			best = cur
		}
	}
	return best
}

// siteSpan returns the two values a kernel checks an access of size bytes
// against: off = addr - lo must be at most span. A footprint smaller than
// one access admits no address: lo all ones and span 0 (only address
// all ones passes that compare, and its site has no device buffer, so the
// device faults on it and the launch fails).
func siteSpan(r Range, size int) (lo, span uint64) {
	if r.Hi < r.Lo || r.Hi-r.Lo < uint64(size) {
		return ^uint64(0), 0
	}
	return r.Lo, r.Hi - r.Lo - uint64(size)
}

// Group is a set of sites whose footprints overlap: one device buffer.
type Group struct {
	Range   Range
	Sites   []int
	Written bool
}

// Groups merges the sites' footprints into groups, lowest address first.
// Sites with an empty footprint belong to no group.
func Groups(k *Kernel, sites []Range) []Group {
	idx := make([]int, len(sites))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return sites[idx[a]].Lo < sites[idx[b]].Lo })
	var gs []Group
	for _, i := range idx {
		if sites[i].Hi <= sites[i].Lo {
			continue // an empty footprint: any access fails the kernel's check
		}
		r := Range{sites[i].Lo &^ 15, (sites[i].Hi + 15) &^ 15}
		if n := len(gs); n > 0 && r.Lo < gs[n-1].Range.Hi {
			g := &gs[n-1]
			g.Range.Hi = max(g.Range.Hi, r.Hi)
			g.Sites = append(g.Sites, i)
			g.Written = g.Written || k.Sites[i].Store
			continue
		}
		gs = append(gs, Group{Range: r, Sites: []int{i}, Written: k.Sites[i].Store})
	}
	return gs
}

// KernelError is a launch whose kernel reported an error: the code
// (ErrCodeFootprint, …) and the x86 address of the instruction.
type KernelError struct {
	Code int
	X86  uint64
}

// Error names the failure and the x86 instruction.
func (e *KernelError) Error() string {
	what := map[int]string{ErrCodeFootprint: "an access left its footprint", ErrCodeExit: "a thread left the loop (wrong trip count)",
		ErrCodeDivide: "an integer division would trap", ErrCodeAlign: "an unaligned access",
		ErrCodeStep: "an induction variable did not advance by its step", ErrCodeCold: "a thread reached a path only the CPU runs",
		ErrCodeOverlap: "a string copy's source and destination overlap", ErrCodeRowStore: "an inner store met its row's outer store"}[e.Code]
	if what == "" {
		what = fmt.Sprintf("error code %d", e.Code)
	}
	return fmt.Sprintf("kernel: %s at x86 %#x", what, e.X86)
}

// recordSize is how much of the record a launch of k with input in reads
// back: the error record, and the exit state when a thread may store one.
func recordSize(k *Kernel, in LaunchInput) int {
	if !in.ExitState || !k.GivesExitState() {
		return ErrorRecordSize
	}
	n := 0
	for _, ls := range k.ExitStates {
		n = max(n, len(ls))
	}
	return ErrorRecordSize + 8 + 8*n
}

// LaunchStats are the times and bytes of one launch.
type LaunchStats struct {
	// Kernel is the device's time running the kernel
	// (gpu.LaunchStats.Duration), without its submission.
	Kernel, CopyIn, CopyOut time.Duration
	// Submit is the host's time submitting the launch
	// (gpu.LaunchStats.Submit), which Kernel leaves out.
	Submit time.Duration
	// LaunchWall is the host's time from the launch call to the kernel's
	// end: Kernel and what launching cost (what a cost model must count).
	LaunchWall        time.Duration
	BytesIn, BytesOut uint64
	// ThreadInstructions are the kernel's, where the driver counts them
	// (the simulator; zero on a real GPU).
	ThreadInstructions uint64
	BytesReused        uint64 // resident bytes the launch did not copy in again
	// BytesDeferred are written bytes left on the device (a lazy Resident):
	// they come back page by page when the guest touches them.
	BytesDeferred uint64
	// Unseen is host time the launch took that the device does not count
	// (gpu.LaunchStats.Unseen: an emulated faster GPU's), already left out
	// of LaunchWall.
	Unseen time.Duration
	// Parts splits CopyIn and CopyOut by what they went to.
	Parts CopyParts
	// Exit is the state the launch's last iteration left the loop with
	// (LaunchInput.ExitState); nil when no thread left it.
	Exit *ExitRecord
}

// Launch runs one launch of k (loaded as fn in ctx): it copies every
// group's footprint to the device, launches, checks the kernel's error
// record and copies the written groups back. Guest memory is written only
// when the kernel succeeded, so a failed launch leaves the guest as it was.
//
// With a non-nil res, device buffers stay resident after the launch (see
// Resident): a later launch over the same guest range reuses the buffer
// and copies in only the pages whose guest bytes changed since. A lazy
// Resident also leaves what the kernel wrote on the device: the guest's
// pages are marked stale, and come back when something touches them.
func Launch(ctx gpu.Context, fn gpu.Function, k *Kernel, mem GuestMemory, in LaunchInput, res *Resident) (st LaunchStats, err error) {
	if len(in.Values) != len(k.LiveIns) || len(in.Steps) != len(k.LiveIns) || len(in.Sites) != len(k.Sites) || k.TwoD && len(in.InnerSteps) != len(k.InnerLiveIns) ||
		k.ThreeD && len(in.Inner2Steps) != len(k.Inner2LiveIns) {
		return st, errors.New("ptxgen: launch input does not match the kernel")
	}
	if err := res.bind(ctx, mem); err != nil {
		return st, err
	}
	// The launch's memory calls count in st.Parts (so do the Resident's,
	// through the same metered context). The frees after the copy out
	// (buffers not kept) count in CopyOut too.
	mc := &meteredContext{Context: ctx}
	if res != nil {
		mc = res.ctx
	}
	mc.parts, ctx = &st.Parts, mc
	var copiedOut time.Time
	defer func() {
		mc.parts = nil
		if !copiedOut.IsZero() {
			st.CopyOut += time.Since(copiedOut)
		}
		st.Parts.Other = max(st.CopyIn+st.CopyOut-st.Parts.counted(), 0)
	}()
	lazy := res != nil && res.lazyMem != nil
	groups := Groups(k, in.Sites)
	if in.Dry {
		in.Dense = nil
		for i := range groups {
			groups[i].Written = false
		}
	}
	bufs := make([]*resBuf, len(groups))
	kept := make([]bool, len(groups))
	backups := make([]*backup, len(groups))
	ok, launched := false, false
	defer func() {
		forgotten := map[*resBuf]bool{}
		for gi, b := range bufs {
			g := groups[gi]
			switch {
			case b == nil:
			case !kept[gi]:
				_ = ctx.Free(b.dev)
			case !ok && in.Proven && !launched:
				// Nothing ran: the device's copies are as they were.
			case !ok && in.Proven && g.Written && b.nstale > 0 && !forgotten[b]:
				// The kernel may have written over stale pages, which
				// only the device held, and there is no backup.
				err = errors.Join(err, fmt.Errorf("%w: a proven launch failed over [%#x,%#x), which held stale pages", ErrLostCopy, g.Range.Lo, g.Range.Hi))
				forgotten[b] = true
			case !ok && backups[gi] != nil:
				// The kernel may have written part of a buffer whose
				// stale pages only the device holds: put back the copy
				// made before the launch (backup.go).
				if rerr := res.restore(ctx, b, backups[gi]); rerr != nil {
					err = errors.Join(err, rerr)
				}
			case !ok && g.Written && !forgotten[b]:
				// The device copy of a failed launch may differ from the
				// guest, which holds every page: drop it.
				res.forget(b)
				forgotten[b] = true
			}
			if b != nil {
				b.pinned = false
			}
			if bk := backups[gi]; bk != nil && bk.dev != 0 {
				res.putSpare(bk.dev)
			}
		}
	}()
	delta := make([]uint64, len(k.Sites))
	t0 := time.Now()
	// The buffers first: a group's may grow (merge) over another's.
	for gi, g := range groups {
		b, keep, copied, err := res.acquire(ctx, mem, g.Range)
		if err != nil {
			return st, err
		}
		bufs[gi], kept[gi] = b, keep
		st.BytesIn += copied
	}
	for gi, g := range groups {
		if kept[gi] {
			bufs[gi] = res.containing(g.Range)
			bufs[gi].pinned = true
		}
	}
	// The copies of what changed in every buffer go in batches, as few
	// as the staging buffer allows (a copy's fixed cost is paid once a
	// batch), all run before any backup below is made.
	var stageLen uint64
	for _, g := range groups {
		stageLen += g.Range.Hi - g.Range.Lo + 2*gvinst.PageSize
	}
	stage, stageDone := res.takeStage(min(stageLen, stageBytes))
	// The copies in are queued, as the backups are, and waited for once,
	// with the kernel: the staging buffer they read from is given back
	// only after that wait (here, on the ways out that did not reach it).
	cb := &copyBatcher{ctx: ctx, stage: stage, queue: true}
	defer func() {
		if cb.queued {
			err = errors.Join(err, ctx.Synchronize())
		}
		stageDone()
	}()
	// dropLoaded lets go of the kept buffers from gi on (all of them: to
	// len(groups)) after a failed copy in: what the device holds of them
	// is unknown.
	dropLoaded := func(gi, to int, lerr error) error {
		for ; gi < to; gi++ {
			b := bufs[gi]
			if b == nil || !kept[gi] {
				continue
			}
			if derr := res.drop(b); derr != nil {
				lerr = errors.Join(lerr, derr)
			}
			for gj := range bufs {
				if bufs[gj] == b {
					kept[gj], bufs[gj] = false, nil
				}
			}
		}
		return lerr
	}
	for gi, g := range groups {
		b := bufs[gi]
		// What a written group's kept buffer holds of its range is left
		// stale after the kernel: not watched now (watchLoaded).
		var leave Range
		if lazy && kept[gi] && g.Written {
			leave = g.Range
		}
		copied, lerr := b.loadInto(ctx, mem, res, g.Range, Overwritten(k, g, in), cb, leave)
		if lerr != nil {
			// The batch may hold copies of the buffers before this one.
			return st, dropLoaded(0, gi+1, lerr)
		}
		st.BytesIn += copied
	}
	if ferr := cb.flush(); ferr != nil {
		return st, dropLoaded(0, len(groups), ferr)
	}
	for gi, g := range groups {
		b := bufs[gi]
		if lazy && g.Written && b.nstale > 0 && !in.Proven {
			bk, berr := res.makeBackup(ctx, b, writableRanges(k, g, in.Sites))
			if berr != nil {
				return st, berr
			}
			backups[gi] = bk
		}
		for _, s := range g.Sites {
			delta[s] = uint64(b.dev) - b.r.Lo
		}
	}
	for _, g := range groups {
		st.BytesReused += g.Range.Hi - g.Range.Lo
	}
	st.BytesReused -= min(st.BytesReused, st.BytesIn)
	errDev, err := res.errorRecord(ctx)
	if err != nil {
		return st, err
	}
	if res == nil {
		defer func() { _ = ctx.Free(errDev) }()
	} else {
		// Until the record is read back zero, the next launch clears it.
		res.errDirty = true
	}
	st.CopyIn = time.Since(t0)
	params := make([][]byte, len(k.Params))
	for i, p := range k.Params {
		var v uint64
		switch p.Kind {
		case ParamCount:
			v = in.Count
		case ParamErr:
			v = uint64(errDev)
		case ParamLiveValue:
			v = in.Values[p.Index]
		case ParamLiveStep:
			v = in.Steps[p.Index]
		case ParamSiteDelta:
			v = delta[p.Index]
		case ParamSiteLo, ParamSiteSpan:
			lo, span := siteSpan(in.Sites[p.Index], k.Sites[p.Index].Size)
			v = lo
			if p.Kind == ParamSiteSpan {
				v = span
			}
		case ParamInnerTrip0:
			v = in.InnerTrip0
		case ParamInnerTripStep:
			v = in.InnerTripStep
		case ParamInnerStep:
			v = in.InnerSteps[p.Index]
		case ParamInnerStepRow:
			if in.InnerStepRows != nil {
				v = in.InnerStepRows[p.Index]
			}
		case ParamInner2Trip:
			v = in.Inner2Trip
		case ParamInner2Step:
			v = in.Inner2Steps[p.Index]
		case ParamExitInit:
			if p.Index < len(in.ExitInits) {
				v = in.ExitInits[p.Index]
			}
		case ParamExitLast:
			v = ^uint64(0)
			if in.ExitState && in.Count > 0 {
				v = in.Count - 1
			}
		}
		params[i] = binary.LittleEndian.AppendUint64(nil, v)
	}
	cfg := k.Plan.Config(in.Count)
	switch {
	case k.Interchanged:
		cfg = k.Plan.Config(in.InnerMax)
	case k.ThreeD:
		cfg = k.Plan.Config3D(in.Count, in.InnerMax, in.Inner2Trip)
	case k.TwoD:
		cfg = k.Plan.Config2D(in.Count, in.InnerMax)
	}
	// Kernels compute thread indices in 32 bits.
	if uint64(cfg.Grid.X)*uint64(cfg.Block.X) > 1<<32 || uint64(cfg.Grid.Y)*uint64(cfg.Block.Y) > 1<<32 || uint64(cfg.Grid.Z)*uint64(cfg.Block.Z) > 1<<32 {
		return st, fmt.Errorf("ptxgen: a launch of grid %s block %s: more than 2^32 threads along a dimension", cfg.Grid, cfg.Block)
	}
	// The kernel's time is the context's own (a real GPU's events around
	// the kernel, on the driver's thread, with the stream held while the
	// launch is queued, so that its submission is not in it): one driver
	// call, where a pair of events of our own would cost six (create,
	// record, destroy each).
	t1 := time.Now()
	launched = true
	lerr := ctx.Launch(fn, cfg, params)
	var ahead []aheadCopy
	if lerr == nil && lazy && res.stagePinned && len(stage) > 0 && len(res.stage) > 0 && &stage[0] == &res.stage[0] && uint64(len(res.stage)) > cb.high {
		// The pages the guest read after the launch before, behind the
		// kernel, into the pinned staging buffer past what the copies in
		// read (ahead.go).
		ahead, lerr = queueAhead(mc, groups, bufs, kept, res.stage[cb.high:])
	}
	// The one wait of the launch: for the copies in, the backups and the
	// kernel, made whether or not the kernel was queued (the copies read
	// the staging buffer). A failure of any of them fails the launch,
	// which restores its backups (a copy that failed on the device left
	// its buffer's bytes unknown: the context is lost with it on a real
	// GPU). A launch that failed at once reports that; the wait may
	// report it again (gpusim does), or nothing.
	cb.queued = false
	serr := ctx.Synchronize()
	if lerr != nil {
		return st, lerr
	}
	if serr != nil {
		return st, serr
	}
	st.LaunchWall = time.Since(t1)
	ls := ctx.LastLaunchStats()
	st.Kernel, st.Submit, st.ThreadInstructions = ls.Duration, ls.Submit, ls.ThreadInstructions
	st.Unseen = min(ls.Unseen, st.LaunchWall)
	st.LaunchWall -= st.Unseen
	if st.Kernel <= 0 {
		st.Kernel = max(st.LaunchWall-st.Submit, 0)
	}
	t2 := time.Now()
	rec := make([]byte, recordSize(k, in))
	if err := res.readErrorRecord(ctx, rec, errDev); err != nil {
		return st, err
	}
	if code := binary.LittleEndian.Uint32(rec); code != 0 {
		return st, &KernelError{Code: int(code), X86: binary.LittleEndian.Uint64(rec[8:])}
	}
	if len(rec) > ErrorRecordSize {
		if t := binary.LittleEndian.Uint64(rec[ErrorRecordSize:]); t != 0 {
			ls, ok := k.ExitStates[t]
			if !ok {
				return st, fmt.Errorf("ptxgen: kernel %s stored the exit state of %#x, which it does not give", k.Name, t)
			}
			x := &ExitRecord{Target: t, Values: make([]uint64, len(ls))}
			for i := range ls {
				x.Values[i] = binary.LittleEndian.Uint64(rec[ErrorRecordSize+8+8*i:])
			}
			st.Exit = x
		}
	}
	if res != nil && st.Exit == nil {
		res.errDirty = false
	}
	// Written buffers: copy back, or (lazy) mark the guest's pages stale.
	// Every copy back is read before the guest is written, so that a
	// failed copy leaves the guest as it was.
	var eager []int
	for gi, g := range groups {
		if !g.Written {
			continue
		}
		if lazy && kept[gi] {
			continue
		}
		eager = append(eager, gi)
		b, r := bufs[gi], g.Range
		if b.snap == nil {
			// A lazy Resident's buffer it cannot keep: the copy back
			// needs the bytes on the host before the guest takes them.
			b.snap = make([]byte, b.r.Hi-b.r.Lo)
			clear(b.snapped)
		}
		if err := ctx.CopyDtoH(b.snap[r.Lo-b.r.Lo:r.Hi-b.r.Lo], b.dev+gpu.DevicePtr(r.Lo-b.r.Lo)); err != nil {
			return st, err
		}
	}
	ok = true
	for _, gi := range eager {
		b, r := bufs[gi], groups[gi].Range
		if err := timeGuest(&st.Parts, guestWrite, func() error { return mem.Write(r.Lo, b.snap[r.Lo-b.r.Lo:r.Hi-b.r.Lo]) }); err != nil {
			return st, fmt.Errorf("%w: writing back [%#x,%#x): %v", ErrLostCopy, r.Lo, r.Hi, err)
		}
		b.markSnapped(r.Lo, r.Hi)
		st.BytesOut += r.Hi - r.Lo
	}
	for gi, g := range groups {
		if g.Written && lazy && kept[gi] {
			if err := res.deferRange(bufs[gi], g.Range); err != nil {
				return st, err
			}
			st.BytesDeferred += g.Range.Hi - g.Range.Lo
		}
	}
	if err := res.putAhead(ahead); err != nil {
		return st, err
	}
	copiedOut = time.Now()
	st.CopyOut = copiedOut.Sub(t2)
	return st, nil
}
