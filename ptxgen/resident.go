package ptxgen

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gvinst"
)

// DeferringMemory is guest memory whose pages can be left stale and
// watched for changes (gvinst.Memory implements it): a lazy Resident
// leaves what a kernel wrote on the device, brings a page back with Poke
// when something touches it, and copies in again only the pages whose
// change Watch reported.
type DeferringMemory interface {
	GuestMemory
	Defer(addr, size uint64) error
	Undefer(addr, size uint64)
	Poke(addr uint64, buf []byte) error
	Watch(addr, size uint64)
	// SetHolder routes the memory's stale-page and watched-write hooks
	// to h (nil: nowhere).
	SetHolder(h gvinst.Holder)
}

// ErrLostCopy is wrapped by errors after which the guest's memory may no
// longer hold what the program wrote: a copy back from the device failed.
// The run cannot go on.
var ErrLostCopy = errors.New("ptxgen: the device's copy of guest memory could not be brought back")

// Resident keeps device buffers, and the guest bytes each holds, across
// launches of one or several kernels in one context over one guest
// memory. The zero value is empty and ready.
//
// A buffer is reused by a later launch over any range inside it, which
// copies in only what changed, on the pages of its range, since the device
// last held them (a range that overlaps buffers without fitting in one
// merges them into one that covers all, on the device). With Lazy set (and a DeferringMemory, which the
// first launch makes the Resident the holder of), what a kernel wrote
// stays on the device too: the guest's pages are marked stale, and the
// memory calls Refresh, which brings back the pages touched (and, while the guest reads a buffer forward, in order or a
// few pages at a time as down a column, a doubling run of the pages after them). A launch over the same range
// finds the stale pages current on the device and copies nothing for them.
// Lazy buffers also watch their pages (the memory calls Touched), so a
// launch reads and compares only the pages the guest has written since,
// not the whole range; a lazy buffer whose footprints go on from its end
// launch after launch (an array made a row a launch) grows in place
// (growable). Copies are staged in the context's pinned memory where it
// has some (gpu.PinnedAllocator), and every launch's copy time is split
// by what it went to (LaunchStats.Parts). Close brings everything back
// and lets go of the memory.
type Resident struct {
	// MaxBytes bounds the device memory kept (0: 1 GiB); the least
	// recently used buffers go first.
	MaxBytes uint64
	// Lazy leaves written buffers on the device until the guest touches
	// them.
	Lazy bool
	// FaultWindow is how many guest pages, aligned, around a page an
	// access finds stale (not reading on from the last run brought back)
	// come back with it, those of them that are stale, in one copy (0:
	// faultWindow; 1: the page alone).
	FaultWindow int
	// BackWindow is how many bytes of the pages Refresh brought back
	// while the guest read a buffer forward stay in the guest before
	// their host memory is taken back for the next pages it reads (0:
	// backWindow); see recycle.go.
	BackWindow uint64
	// LeaveDevice makes Discard leave the buffers' device memory to the
	// process's exit (accel.Options.LeaveDevice): a process that exits
	// right after has the driver free it all at once.
	LeaveDevice bool

	// ctx is the context of the first launch, metered: its memory calls
	// count in the CopyParts of the launch under way (see Launch); raw is
	// that context as the launch passed it.
	ctx       *meteredContext
	raw       gpu.Context
	mem       GuestMemory
	lazyMem   DeferringMemory // mem, when Lazy and it can hold stale pages; else nil
	bufs      []*resBuf
	bytes     uint64
	clock     uint64
	back      BringBackStats // what bringing pages back took
	discarded uint64         // stale bytes Discard and Dropped left behind
	// stage is the staging buffer of copies that keep no snapshot (see
	// resBuf.snap), in chunks of at most stageBytes; staging says it is
	// in use (a guest read during a copy in may bring a page back).
	stage   []byte
	staging bool
	// stagePinned says stage is the context's pinned memory;
	// stageUnpinned that pinning it failed once (see growStage).
	stagePinned, stageUnpinned bool
	// poking is the buffer whose pages bringBack is writing into the
	// guest: Touched keeps no snapshot of them.
	poking *resBuf
	// recycling is set while a Refresh outside a launch brings pages
	// back, which may then take back the host memory of those brought
	// back before (see recycle.go); backRuns are those runs, oldest
	// first, and backBytes their bytes.
	recycling bool
	backRuns  []backRun
	backBytes uint64
	// spares are device buffers for the backups a launch makes of what
	// it may write (allocating and freeing them each launch costs more
	// than the copy on a real GPU: cuMemFree synchronizes).
	spares []spareBuf
	lent   map[gpu.DevicePtr]uint64 // spares in use, by size
	// gather is the device buffer of maxReadAhead pages that
	// bringBackStrided gathers pages in (0 until one ran).
	gather gpu.DevicePtr
	// errRec is the record every launch passes its kernel (ExitRecordSize
	// bytes): a kernel writes it only when it fails or stores an exit
	// state, so it is cleared once, and again only after a launch that
	// did not read it back zero (errDirty).
	errRec   gpu.DevicePtr
	errDirty bool
	// errHost is the record's bytes when it lies in host memory the
	// device writes (gpu.MappedAllocator); nil when it is device memory.
	errHost []byte
}

// errorRecord returns the device's error record for a launch, all zero.
// Without a Resident it is a new allocation, which the caller frees.
func (res *Resident) errorRecord(ctx gpu.Context) (gpu.DevicePtr, error) {
	if res == nil {
		dev, err := ctx.Alloc(ExitRecordSize)
		if err != nil {
			return 0, err
		}
		if err := ctx.Memset(dev, 0, exitClearSize); err != nil {
			_ = ctx.Free(dev)
			return 0, err
		}
		return dev, nil
	}
	if res.errRec == 0 {
		// Host memory the device writes, where the context has some:
		// the launch reads the record with no call to the driver (a
		// copy of 16 bytes took 140 us after each launch on an H100).
		if ma, ok := res.raw.(gpu.MappedAllocator); ok {
			if host, dev, err := ma.AllocMapped(ExitRecordSize); err == nil {
				res.errRec, res.errHost = dev, host
				return res.errRec, nil
			}
		}
		dev, err := ctx.Alloc(ExitRecordSize)
		if err != nil {
			return 0, err
		}
		res.errRec, res.errDirty = dev, true
	}
	if res.errDirty {
		if res.errHost != nil {
			clear(res.errHost[:exitClearSize])
		} else if err := ctx.Memset(res.errRec, 0, exitClearSize); err != nil {
			return 0, err
		}
		res.errDirty = false
	}
	return res.errRec, nil
}

// readErrorRecord reads the error record of the launch that just
// finished into rec: from the host memory it lies in, or with a copy.
func (res *Resident) readErrorRecord(ctx gpu.Context, rec []byte, dev gpu.DevicePtr) error {
	if res != nil && res.errHost != nil && dev == res.errRec {
		copy(rec, res.errHost)
		return nil
	}
	return ctx.CopyDtoH(rec, dev)
}

type spareBuf struct {
	dev  gpu.DevicePtr
	size uint64
}

// spare returns a device buffer of at least n bytes, kept for reuse.
func (res *Resident) spare(n uint64) (gpu.DevicePtr, error) {
	best := -1
	for i, s := range res.spares {
		if s.size >= n && (best < 0 || s.size < res.spares[best].size) {
			best = i
		}
	}
	if best >= 0 {
		s := res.spares[best]
		res.spares = append(res.spares[:best], res.spares[best+1:]...)
		res.lent[s.dev] = s.size
		return s.dev, nil
	}
	dev, err := res.ctx.Alloc(n)
	if err == nil {
		if res.lent == nil {
			res.lent = map[gpu.DevicePtr]uint64{}
		}
		res.lent[dev] = n
	}
	return dev, err
}

// putSpare gives back a buffer from spare. A few are kept, the largest.
func (res *Resident) putSpare(dev gpu.DevicePtr) {
	n, ok := res.lent[dev]
	if !ok {
		return
	}
	delete(res.lent, dev)
	res.spares = append(res.spares, spareBuf{dev, n})
	const keep = 4
	if len(res.spares) > keep {
		small := 0
		for i, s := range res.spares {
			if s.size < res.spares[small].size {
				small = i
			}
		}
		_ = res.ctx.Free(res.spares[small].dev)
		res.spares = append(res.spares[:small], res.spares[small+1:]...)
	}
}

// maxReadAhead is the longest run of pages one Refresh brings back.
const maxReadAhead = 2048

// strideAhead is the farthest past the last run Refresh brought back that
// a read still counts as reading the buffer forward (a column walked row
// by row, rows a few pages long), so that the next run doubles.
const strideAhead = 16

// joinGap is the most unchanged bytes a launch's copy in spans to join
// two changed runs into one copy: a copy call costs about what copying
// that many bytes does (a host walk of a column changes a few bytes a
// row).
const joinGap = 64 << 10

// stageBytes is the largest chunk a copy without a snapshot stages.
const stageBytes = 8 << 20

// withStage calls f with a staging buffer of n ≤ stageBytes bytes: the
// Resident's, or a new one when that is in use.
func (res *Resident) withStage(n uint64, f func([]byte) error) error {
	stage, done := res.takeStage(n)
	defer done()
	return f(stage)
}

// takeStage returns a staging buffer of n ≤ stageBytes bytes, the
// Resident's or a new one when that is in use, and the function that
// gives it back.
func (res *Resident) takeStage(n uint64) ([]byte, func()) {
	if res == nil || res.staging {
		return make([]byte, n), func() {}
	}
	if uint64(len(res.stage)) < n {
		res.growStage(n)
	}
	res.staging = true
	return res.stage[:n], func() { res.staging = false }
}

// A copyBatcher gathers copies to the device of bytes staged in its
// buffer (room), and runs them as one batch (gpu.BatchCopier) when the
// buffer is full, or at flush: a launch copies in the runs of pages that
// changed, in all its buffers, in as few calls as its staging buffer
// allows. With queue set it queues them on the context's stream instead
// (gpu.Context.CopyHtoDAsync), not waiting for them: the launch's one
// Synchronize does, after its kernel. Its buffer, which the queued copies
// read from, is then not to be written again (by room, or by anyone the
// caller gives it to) before a Synchronize.
type copyBatcher struct {
	ctx    gpu.Context
	stage  []byte
	used   uint64
	copies []gpu.Copy
	queue  bool
	// queued says copies out of stage were queued and not waited for.
	queued bool
	// high is how far into stage room has handed out bytes: a copy
	// queued from there on may still be reading the bytes before it.
	high uint64
}

// room returns n bytes of the staging buffer for copies to add, running
// the batch so far first when fewer remain (and, when it was queued,
// waiting for it: the buffer is reused).
func (cb *copyBatcher) room(n uint64) ([]byte, error) {
	if cb.used+n > uint64(len(cb.stage)) {
		if err := cb.flush(); err != nil {
			return nil, err
		}
		if cb.queued {
			cb.queued = false
			if err := cb.ctx.Synchronize(); err != nil {
				return nil, err
			}
		}
	}
	if n > uint64(len(cb.stage)) {
		return make([]byte, n), nil // (a run is at most stageBytes)
	}
	b := cb.stage[cb.used : cb.used+n]
	cb.used += n
	cb.high = max(cb.high, cb.used)
	return b, nil
}

// flush runs the copies gathered so far, as one batch, or queues them.
func (cb *copyBatcher) flush() error {
	if len(cb.copies) == 0 {
		cb.used = 0
		return nil
	}
	var err error
	if cb.queue {
		err = queueCopies(cb.ctx, cb.copies)
		cb.queued = true
	} else {
		err = copyBatch(cb.ctx, cb.copies)
	}
	cb.copies, cb.used = cb.copies[:0], 0
	return err
}

// queueCopies queues copies on ctx's stream, in order, as one call where
// it can (gpu.BatchQueuer), naming the copy that could not be queued.
func queueCopies(ctx gpu.Context, copies []gpu.Copy) error {
	if bq, ok := ctx.(gpu.BatchQueuer); ok {
		return bq.QueueBatch(copies)
	}
	for i, cp := range copies {
		var err error
		if cp.FromDevice {
			err = ctx.CopyDtoHAsync(cp.Host, cp.Dev)
		} else {
			err = ctx.CopyHtoDAsync(cp.Dev, cp.Host)
		}
		if err != nil {
			return fmt.Errorf("copy %d of %d: %w", i, len(copies), err)
		}
	}
	return nil
}

// growStage makes the staging buffer at least n ≤ stageBytes bytes: the
// largest, pinned, where the context can pin host memory (a copy from it
// goes straight to the device, where one from Go memory goes through the
// driver's staging buffer first: a second host copy of every byte), else
// Go memory twice as long as before.
func (res *Resident) growStage(n uint64) {
	if pa, ok := res.raw.(gpu.PinnedAllocator); ok && !res.stageUnpinned {
		if b, err := pa.AllocPinned(stageBytes); err == nil {
			res.freeStage()
			res.stage, res.stagePinned = b, true
			return
		}
		res.stageUnpinned = true // not to be had: Go memory from now on
	}
	size := min(max(n, 2*uint64(len(res.stage))), stageBytes)
	res.freeStage()
	res.stage = make([]byte, size)
}

// freeStage lets go of the staging buffer.
func (res *Resident) freeStage() {
	if res.stagePinned {
		_ = res.raw.(gpu.PinnedAllocator).FreePinned(res.stage)
	}
	res.stage, res.stagePinned = nil, false
}

type resBuf struct {
	r   Range
	dev gpu.DevicePtr
	// snap holds the device's bytes, on the pages that are not stale and
	// that snapped marks, so that a launch copies only the bytes the guest
	// changed since. A buffer of a lazy Resident has none (nil): a host
	// copy of every array the device holds would double the memory the
	// guest's arrays take. Its guest memory reports each page's first
	// write since the device last held what the guest holds (Touched),
	// and pageSnap keeps the page's bytes from just before it: a launch
	// copies what changed of them, and all of a dirty page without one.
	snap     []byte
	snapped  []bool
	pageSnap map[int][]byte
	// stale[i] is set when the guest's copy of page i of r (counted from
	// r.Lo's page) is stale: the device's bytes are newer.
	stale  []bool
	nstale int
	// dirty[i] is set when the guest may have changed page i since snap
	// was taken; without watching (not lazy) every page counts as dirty.
	dirty []bool
	// capacity is the device bytes at dev, when more than r's: a buffer
	// that grows at its end grows in place (see growable); unfilled is
	// the part it grew by last that no launch has loaded yet.
	capacity uint64
	unfilled Range
	watched  bool // the guest memory reports changes to the pages
	filled   bool // snap and the device were filled from the guest
	pinned   bool // in use by the launch under way: never evicted
	used     uint64
	// Read-ahead: the page after the last run Refresh brought back, and
	// that run's length.
	nextPage, ahead int
	// released[i] is set when the host memory of page i, brought back,
	// was taken back (recycle.go; pages past its end were not);
	// keepBack once a released page was read again, which stops it for
	// b.
	released []bool
	keepBack bool
	// hot are the last pages the guest found stale outside a launch,
	// which b's written launches bring back with them (ahead.go).
	hot []int
	// Strided read-ahead: the address of the last access Refresh brought
	// a page back for (0: none), or the last one a strided gather brought
	// back; its distance from the one before; and how many pages the last
	// gather brought (see Refresh).
	lastAddr, stride uint64
	strideRun        int
}

// newResBuf makes the buffer of guest bytes r at dev, with a snapshot
// unless res is lazy.
func newResBuf(res *Resident, r Range, dev gpu.DevicePtr) *resBuf {
	first, last := r.Lo/gvinst.PageSize, (r.Hi-1)/gvinst.PageSize
	n := last - first + 1
	b := &resBuf{r: r, dev: dev, snapped: make([]bool, n), stale: make([]bool, n), dirty: make([]bool, n), nextPage: -1}
	if res == nil || res.lazyMem == nil {
		b.snap = make([]byte, r.Hi-r.Lo)
	}
	return b
}

// copyIn copies the guest bytes [lo, hi) of b to the device, through snap
// where b keeps one (the pages lo..hi covers wholly are then snapped),
// else through the staging buffer in chunks.
func (b *resBuf) copyIn(ctx gpu.Context, mem GuestMemory, res *Resident, lo, hi uint64) error {
	if b.snap != nil {
		s := b.snap[lo-b.r.Lo : hi-b.r.Lo]
		if err := timeGuest(res.parts(), guestRead, func() error { return mem.Read(lo, s) }); err != nil {
			return fmt.Errorf("reading guest footprint [%#x,%#x): %w", lo, hi, err)
		}
		if err := ctx.CopyHtoD(b.dev+gpu.DevicePtr(lo-b.r.Lo), s); err != nil {
			return err
		}
		b.markSnapped(lo, hi)
		return nil
	}
	for lo < hi {
		n := min(hi-lo, stageBytes)
		err := res.withStage(n, func(s []byte) error {
			if err := timeGuest(res.parts(), guestRead, func() error { return mem.Read(lo, s) }); err != nil {
				return fmt.Errorf("reading guest footprint [%#x,%#x): %w", lo, lo+n, err)
			}
			return ctx.CopyHtoD(b.dev+gpu.DevicePtr(lo-b.r.Lo), s)
		})
		if err != nil {
			return err
		}
		lo += n
	}
	return nil
}

// copyInto is copyIn with the copies added to cb (the guest's bytes read
// into its staging buffer, or b's snapshot).
func (b *resBuf) copyInto(cb *copyBatcher, mem GuestMemory, res *Resident, lo, hi uint64) error {
	_, err := b.fillFrom(cb, mem, res, lo, hi)
	return err
}

// fillFrom is copyInto, returning the bytes it copies (those it sets to
// zeros on the device aside).
func (b *resBuf) fillFrom(cb *copyBatcher, mem GuestMemory, res *Resident, lo, hi uint64) (uint64, error) {
	if b.snap != nil {
		s := b.snap[lo-b.r.Lo : hi-b.r.Lo]
		if err := timeGuest(res.parts(), guestRead, func() error { return mem.Read(lo, s) }); err != nil {
			return 0, fmt.Errorf("reading guest footprint [%#x,%#x): %w", lo, hi, err)
		}
		cb.copies = append(cb.copies, gpu.Copy{Dev: b.dev + gpu.DevicePtr(lo-b.r.Lo), Host: s})
		b.markSnapped(lo, hi)
		return hi - lo, nil
	}
	var zeros uint64
	at := lo // copied or set up to here
	if zm, ok := mem.(unwrittenMemory); ok && hi-lo >= minZeroRun*gvinst.PageSize {
		// Runs of pages nothing wrote read as zeros: set on the device,
		// not read and copied (conv2d's output, which its initialisation
		// nest zeroes a row at a time by calling memset, a store no site
		// proves dense, was 840 MB copied in at 14000 15000).
		for _, z := range zm.Unwritten(lo, hi-lo, minZeroRun) {
			if err := b.copyStaged(cb, mem, res, at, z[0]); err != nil {
				return 0, err
			}
			if err := cb.ctx.Memset(b.dev+gpu.DevicePtr(z[0]-b.r.Lo), 0, z[1]-z[0]); err != nil {
				return 0, err
			}
			zeros += z[1] - z[0]
			at = z[1]
		}
	}
	return hi - lo - zeros, b.copyStaged(cb, mem, res, at, hi)
}

// unwrittenMemory is guest memory that tells the runs of pages nothing
// wrote (gvinst.Memory.Unwritten).
type unwrittenMemory interface {
	Unwritten(addr, size uint64, minPages int) [][2]uint64
}

// minZeroRun is the fewest pages nothing wrote that a copy in sets to
// zeros on the device instead of copying: a memset is a call of its own,
// which costs about what copying tens of kilobytes does.
const minZeroRun = 16

// copyStaged is copyInto through cb's staging buffer.
func (b *resBuf) copyStaged(cb *copyBatcher, mem GuestMemory, res *Resident, lo, hi uint64) error {
	for lo < hi {
		n := min(hi-lo, stageBytes)
		s, err := cb.room(n)
		if err != nil {
			return err
		}
		if err := timeGuest(res.parts(), guestRead, func() error { return mem.Read(lo, s) }); err != nil {
			return fmt.Errorf("reading guest footprint [%#x,%#x): %w", lo, lo+n, err)
		}
		cb.copies = append(cb.copies, gpu.Copy{Dev: b.dev + gpu.DevicePtr(lo-b.r.Lo), Host: s})
		lo += n
	}
	return nil
}

// markSnapped marks the pages of b whose chunk [lo, hi) covers wholly as
// held in snap.
func (b *resBuf) markSnapped(lo, hi uint64) {
	first, _ := b.page(lo / gvinst.PageSize)
	last, _ := b.page((hi - 1) / gvinst.PageSize)
	for p := first; p <= last; p++ {
		if clo, chi := b.chunk(p); lo <= clo && chi <= hi {
			b.snapped[p] = true
		}
	}
}

// chunk returns the guest bytes [lo, hi) of page i that lie in the buffer.
func (b *resBuf) chunk(i int) (lo, hi uint64) {
	base := (b.r.Lo/gvinst.PageSize + uint64(i)) * gvinst.PageSize
	return max(base, b.r.Lo), min(base+gvinst.PageSize, b.r.Hi)
}

// span returns the guest bytes of pages i..j-1 that lie in the buffer.
func (b *resBuf) span(i, j int) (lo, hi uint64) {
	lo, _ = b.chunk(i)
	_, hi = b.chunk(j - 1)
	return lo, hi
}

// load brings the device's copy of the bytes r of b up to date with the
// guest and returns the bytes it copied: everything for a new buffer, else,
// on the pages holding bytes of r that are not stale and that the guest
// wrote since, the span from the first byte that changed to the last.
// Pages of b outside r keep what they hold: the launch does not touch them.
// A new buffer is not filled on the bytes of skip, which the launch
// overwrites before reading them: its snap there is left as it is, for the
// launch makes those pages stale or copies them back.
func (b *resBuf) load(ctx gpu.Context, mem GuestMemory, res *Resident, r Range, skip Range) (uint64, error) {
	stage, done := res.takeStage(min(b.r.Hi-b.r.Lo+2*gvinst.PageSize, stageBytes))
	defer done()
	cb := &copyBatcher{ctx: ctx, stage: stage}
	copied, err := b.loadInto(ctx, mem, res, r, skip, cb, Range{})
	if err == nil {
		err = cb.flush()
	}
	return copied, err
}

// loadInto is load with the copies of the pages that changed added to
// cb, which runs them (the caller flushes it): a launch's loads of all
// its buffers go in one batch. The pages holding bytes of leave, which
// the launch leaves stale when it succeeds (a written group's range), are
// not watched but count as dirty (see watchLoaded).
func (b *resBuf) loadInto(ctx gpu.Context, mem GuestMemory, res *Resident, r Range, skip Range, cb *copyBatcher, leave Range) (uint64, error) {
	if !b.filled {
		skip.Lo, skip.Hi = max(skip.Lo, b.r.Lo), min(skip.Hi, b.r.Hi)
		if skip.Hi <= skip.Lo {
			skip = Range{b.r.Hi, b.r.Hi}
		}
		var copied uint64
		for _, part := range []Range{{b.r.Lo, skip.Lo}, {skip.Hi, b.r.Hi}} {
			if part.Hi <= part.Lo {
				continue
			}
			n, err := b.fillFrom(cb, mem, res, part.Lo, part.Hi)
			copied += n
			if err != nil {
				return copied, err
			}
		}
		b.filled = true
		// The pages the launch overwrites wholly are not watched: it
		// leaves them stale (or the buffer goes), and if it does not,
		// they count as dirty, so that a later launch copies them in
		// whole. (Watching a page costs the guest memory a mark; an
		// array born on the device is all such pages.)
		fi, li := len(b.stale), -1
		for p := range b.stale {
			if lo, hi := b.chunk(p); skip.Lo <= lo && hi <= skip.Hi {
				fi, li = min(fi, p), p
			}
		}
		if li < fi {
			b.watchLoaded(res, 0, len(b.stale), leave)
			return copied, nil
		}
		b.watchLoaded(res, 0, fi, leave)
		b.watchLoaded(res, li+1, len(b.stale), leave)
		for p := fi; p <= li; p++ {
			b.dirty[p] = true
		}
		return copied, nil
	}
	first, _ := b.page(max(r.Lo, b.r.Lo) / gvinst.PageSize)
	last, _ := b.page((min(r.Hi, b.r.Hi) - 1) / gvinst.PageSize)
	var copied uint64
	if u := b.unfilled; u.Lo < u.Hi {
		// The pages b grew by (extend): filled as a new buffer's are,
		// but for the bytes the launch overwrites; they stay dirty.
		b.unfilled = Range{}
		sk := Range{max(skip.Lo, u.Lo), min(skip.Hi, u.Hi)}
		if sk.Hi <= sk.Lo {
			sk = Range{u.Hi, u.Hi}
		}
		for _, part := range []Range{{u.Lo, sk.Lo}, {sk.Hi, u.Hi}} {
			if part.Hi <= part.Lo {
				continue
			}
			n, err := b.fillFrom(cb, mem, res, part.Lo, part.Hi)
			copied += n
			if err != nil {
				return copied, err
			}
		}
		grown, _ := b.page(u.Lo / gvinst.PageSize)
		last = min(last, grown-1)
	}
	// The pages to look at: not stale, and (when watched) changed since.
	// A run of them goes on over a few pages that did not change (the
	// device holds what the guest does), which its copy may then span.
	// The runs' bytes are gathered in cb's staging buffer, and their
	// copies go in batches (gpu.BatchCopier) as long as it holds them: a
	// copy's fixed cost is paid once a batch (LU's launches copied in the
	// rows the CPU's probed and tail iterations wrote, each run a copy of
	// its own, 75 us each on an H100).
	check := func(p int) bool { return !b.stale[p] && (!b.watched || b.dirty[p]) }
	for i := first; i <= last; {
		if !check(i) {
			i++
			continue
		}
		j, end := i+1, i+1 // end: past the run's last page to check
		for j <= last && !b.stale[j] && j-i < stageBytes/gvinst.PageSize && (check(j) || j-end < joinGap/gvinst.PageSize) {
			if check(j) {
				end = j + 1
			}
			j++
		}
		j = end
		lo, hi := b.span(i, j)
		cur, err := cb.room(hi - lo)
		if err != nil {
			return copied, err
		}
		cps, n, err := b.loadRun(mem, res.parts(), i, j, cur)
		if err != nil {
			return copied, err
		}
		cb.copies = append(cb.copies, cps...)
		copied += n
		// Watched again from here: snap holds these pages now. The
		// pages the loop skipped are watched already (a write to one
		// would have made it dirty), or stale, or not watched at all
		// (a Resident that is not lazy reads them every time).
		b.watchLoaded(res, i, j, leave)
		i = j
	}
	return copied, nil
}

// loadRun returns the copies to the device of what changed of pages
// i..j-1 of b (none of them stale), reading the guest's bytes into cur (as
// long as they are; the read counts in parts, when not nil), which the
// copies copy from, and the bytes they copy: from the first changed byte
// of a page to the last (all of a page it has no snapshot of), joined into
// one copy with the next change up to joinGap bytes on (the bytes between,
// on pages that are not stale, are the device's already).
func (b *resBuf) loadRun(mem GuestMemory, parts *CopyParts, i, j int, cur []byte) ([]gpu.Copy, uint64, error) {
	lo, hi := b.span(i, j)
	if err := timeGuest(parts, guestRead, func() error { return mem.Read(lo, cur) }); err != nil {
		return nil, 0, fmt.Errorf("reading guest footprint [%#x,%#x): %w", lo, hi, err)
	}
	// Offsets in b; cur starts at off.
	off := int(lo - b.r.Lo)
	var copied uint64
	var copies []gpu.Copy
	pend, pendEnd := -1, -1
	flush := func() {
		if pend < 0 {
			return
		}
		copies = append(copies, gpu.Copy{Dev: b.dev + gpu.DevicePtr(pend), Host: cur[pend-off : pendEnd-off]})
		if b.snap != nil {
			copy(b.snap[pend:pendEnd], cur[pend-off:pendEnd-off])
		}
		copied += uint64(pendEnd - pend)
		pend = -1
	}
	for p := i; p < j; p++ {
		clo, chi := b.chunk(p)
		x, y := int(clo-b.r.Lo), int(chi-b.r.Lo)
		now := cur[x-off : y-off]
		// Without a snapshot of the page, all of it may have changed;
		// a watched page the guest did not write has not.
		lo, hi := 0, y-x
		if b.watched && !b.dirty[p] {
			lo, hi = 0, 0
		} else if ps, ok := b.pageSnap[p]; ok && len(ps) == y-x {
			lo, hi = changed(now, ps)
		} else if b.snap != nil && b.snapped[p] {
			lo, hi = changed(now, b.snap[x:y])
		}
		if lo == hi {
			continue
		}
		if pend >= 0 && x+lo-pendEnd <= joinGap {
			// The bytes between are the device's already.
			pendEnd = x + hi
			continue
		}
		flush()
		pend, pendEnd = x+lo, x+hi
	}
	flush()
	if b.snap != nil {
		// Every page of the run that was not snapped was copied whole,
		// through snap.
		for p := i; p < j; p++ {
			b.snapped[p] = true
		}
	}
	return copies, copied, nil
}

// watchLoaded is watch for pages i..j-1 of b that a launch loaded, but
// for those holding bytes of leave, which the launch leaves stale when it
// succeeds: watching them would be undone at once (a stale page comes
// back before anything reads or writes it, and is watched then), and
// costs the guest memory a mark a page (conv2d's initialisation at 14000
// 15000 watched 195,000 pages of an array it then wrote: 0.1 s on an H100
// host). They count as dirty instead, so that a launch after one that
// failed (and left them as they were) copies them in whole.
func (b *resBuf) watchLoaded(res *Resident, i, j int, leave Range) {
	lo, hi := max(leave.Lo, b.r.Lo), min(leave.Hi, b.r.Hi)
	if res == nil || res.lazyMem == nil || hi <= lo || i >= j {
		b.watch(res, i, j)
		return
	}
	fi, _ := b.page(lo / gvinst.PageSize)
	li, _ := b.page((hi - 1) / gvinst.PageSize)
	if li < i || fi >= j {
		b.watch(res, i, j)
		return
	}
	b.watch(res, i, max(i, fi))
	b.watch(res, min(j, li+1), j)
	for p := max(i, fi); p < min(j, li+1); p++ {
		b.dirty[p] = true
		delete(b.pageSnap, p)
	}
}

// watch asks the guest memory of a lazy Resident to report the next
// change of pages i..j-1 of b, now that snap holds them.
func (b *resBuf) watch(res *Resident, i, j int) {
	if res == nil || res.lazyMem == nil {
		return
	}
	b.watched = true
	if i >= j {
		return
	}
	for p := i; p < j; p++ {
		b.dirty[p] = false
		delete(b.pageSnap, p)
	}
	lo, hi := b.span(i, j)
	_ = timeGuest(res.parts(), marks, func() error { res.lazyMem.Watch(lo, hi-lo); return nil })
}

// Touched records that the guest is about to change the page at pageAddr
// (gvinst.Memory.OnWatchedWrite calls it): the buffers holding it must
// compare it at their next launch.
func (res *Resident) Touched(pageAddr uint64) {
	pn := pageAddr / gvinst.PageSize
	for _, b := range res.bufs {
		if i, ok := b.page(pn); ok && b != res.poking && b.snap == nil && b.watched && !b.dirty[i] && !b.stale[i] && !res.staleAt(pn) {
			// The device's bytes, still the guest's: keep them, so that
			// the next launch copies only what the write changes.
			lo, hi := b.chunk(i)
			s := make([]byte, hi-lo)
			if res.mem.Read(lo, s) == nil {
				if b.pageSnap == nil {
					b.pageSnap = map[int][]byte{}
				}
				b.pageSnap[i] = s
			}
		}
		b.touch(pn)
	}
}

// Dropped forgets the stale page at pageAddr, whose bytes the guest throws
// away (gvinst.Memory.OnStaleDropped: an Unmap, say, of an array the
// device held, when the program frees it): the device's bytes are not
// brought back, and the page counts as changed, so that a launch over it
// copies whatever the guest maps there next.
func (res *Resident) Dropped(pageAddr uint64) {
	pn := pageAddr / gvinst.PageSize
	for _, b := range res.bufs {
		i, ok := b.page(pn)
		if !ok || !b.stale[i] {
			continue
		}
		lo, hi := b.chunk(i)
		res.lazyMem.Undefer(lo, hi-lo)
		res.discarded += hi - lo
		b.stale[i] = false
		b.nstale--
		b.dirty[i] = true
		b.snapped[i] = false
		delete(b.pageSnap, i)
	}
}

// staleAt reports whether a buffer left guest page pn stale (reading it
// would bring it back).
func (res *Resident) staleAt(pn uint64) bool {
	for _, b := range res.bufs {
		if i, ok := b.page(pn); ok && b.stale[i] {
			return true
		}
	}
	return false
}

// page returns the index in b of guest page pn, if b holds it.
func (b *resBuf) page(pn uint64) (int, bool) {
	first := b.r.Lo / gvinst.PageSize
	if pn < first || pn-first >= uint64(len(b.stale)) {
		return 0, false
	}
	return int(pn - first), true
}

// touch marks guest page pn dirty, if b holds it.
func (b *resBuf) touch(pn uint64) {
	if i, ok := b.page(pn); ok {
		b.dirty[i] = true
	}
}

// deferRange marks the pages of b that hold bytes of r stale in the guest
// memory: the device holds what the kernel wrote there (and, on the rest
// of those pages, what the guest held when the launch loaded b). Other
// buffers holding those pages must look at them again (their guest bytes
// change without a write the memory could report).
func (res *Resident) deferRange(b *resBuf, r Range) error {
	if parts := res.parts(); parts != nil {
		defer func(t0 time.Time) { parts.Marks += time.Since(t0) }(time.Now())
	}
	first, _ := b.page(max(r.Lo, b.r.Lo) / gvinst.PageSize)
	last, _ := b.page((min(r.Hi, b.r.Hi) - 1) / gvinst.PageSize)
	newly := func(p int) bool { return !b.stale[p] }
	edges := []int{first}
	if last != first {
		edges = append(edges, last)
	}
	var touch []uint64
	for _, p := range edges {
		if newly(p) {
			lo, _ := b.chunk(p)
			touch = append(touch, lo/gvinst.PageSize)
		}
	}
	// A run of pages at a time: the guest memory marks a run in one call.
	for i := first; i <= last; {
		if b.stale[i] {
			i++
			continue
		}
		j := i + 1
		for j <= last && !b.stale[j] {
			j++
		}
		lo, hi := b.span(i, j)
		if err := res.lazyMem.Defer(lo, hi-lo); err != nil {
			return fmt.Errorf("%w: leaving [%#x,%#x) on the device: %v", ErrLostCopy, lo, hi, err)
		}
		for p := i; p < j; p++ {
			b.stale[p] = true
			delete(b.pageSnap, p)
		}
		b.nstale += j - i
		i = j
	}
	// Buffers share no byte, so only b's first and last pages can be
	// another buffer's too.
	for _, pn := range touch {
		for _, o := range res.bufs {
			if o != b {
				o.touch(pn)
			}
		}
	}
	b.nextPage, b.lastAddr = -1, 0
	return nil
}

// parts is where the launch under way counts its copy time (nil: nowhere).
func (res *Resident) parts() *CopyParts {
	if res == nil || res.ctx == nil {
		return nil
	}
	return res.ctx.parts
}

// bind ties the Resident to the context and memory of its first launch.
func (res *Resident) bind(ctx gpu.Context, mem GuestMemory) error {
	if res == nil {
		return nil
	}
	if res.ctx == nil {
		res.ctx, res.raw, res.mem = &meteredContext{Context: ctx}, ctx, mem
		if dm, ok := mem.(DeferringMemory); ok && res.Lazy {
			res.lazyMem = dm
			dm.SetHolder(res)
		}
		return nil
	}
	if res.raw != ctx || res.mem != mem {
		return errors.New("ptxgen: a Resident serves one context and one guest memory")
	}
	return nil
}

// Refresh brings back from the device every stale page of the buffers that
// hold the guest page holding addr, which an access reached it at
// (gvinst.Memory.OnStale calls it), and, while the guest reads a buffer
// forward, the pages it will read next: a doubling run of the pages after
// them, or, down a column of rows longer than strideAhead pages, the
// column's pages of a doubling number of rows.
func (res *Resident) Refresh(addr uint64) error {
	res.back.Faults++
	if res.ctx.parts == nil {
		// The guest's own access, outside a launch: the next launch
		// that writes the page brings it back with it (ahead.go).
		for _, b := range res.bufs {
			if i, ok := b.page(addr / gvinst.PageSize); ok && b.stale[i] {
				b.noteFault(i)
			}
		}
	}
	if res.ctx.parts == nil && res.poking == nil && !res.recycling {
		// The guest's own access, outside a launch and any other
		// bring-back: the runs it brings back may recycle.
		res.recycling = true
		defer func() { res.recycling = false }()
	}
	defer res.meterBack()()
	for _, b := range res.bufs {
		i, ok := b.page(addr / gvinst.PageSize)
		if !ok || !b.stale[i] {
			continue
		}
		if d := addr - b.lastAddr; b.lastAddr != 0 && addr > b.lastAddr && d == b.stride && d > strideAhead*gvinst.PageSize && b.snap == nil {
			// The rows' pages at the same column, up to the first that
			// is not stale.
			var pages []int
			a := addr
			for ; a < b.r.Hi && len(pages) < min(2*b.strideRun, maxReadAhead); a += d {
				p, _ := b.page(a / gvinst.PageSize)
				if !b.stale[p] {
					break
				}
				pages = append(pages, p)
			}
			b.lastAddr, b.strideRun = a-d, len(pages)
			if err := res.bringBackStrided(b, pages, addr, d); err != nil {
				return err
			}
			continue
		}
		b.stride = 0
		if b.lastAddr != 0 && addr > b.lastAddr {
			b.stride = addr - b.lastAddr
		}
		b.lastAddr, b.strideRun = addr, 1
		if !(b.nextPage >= 0 && i >= b.nextPage && i-b.nextPage <= strideAhead) {
			// Not reading on from the last run: the stale pages of the
			// aligned window around the page, in one copy.
			pages := b.window(i, cmp.Or(res.FaultWindow, faultWindow))
			// Reading on from the page (not from the window's end: a
			// walk down a column of rows a little longer than the
			// window is not reading on) doubles the pages after it.
			b.nextPage, b.ahead = i+1, max(pages[len(pages)-1]+1-i, 1)
			if err := res.bringBackPages(b, pages); err != nil {
				return err
			}
			continue
		}
		n := min(2*b.ahead, maxReadAhead)
		j := i + 1
		for j < len(b.stale) && j < i+n && b.stale[j] {
			j++
		}
		b.nextPage, b.ahead = j, j-i
		if err := res.bringBack(b, i, j); err != nil {
			return err
		}
	}
	return nil
}

// faultWindow is the pages, aligned, of the window around a page an
// access found stale, not reading on from the run brought back before,
// whose stale pages come back with it in one copy: a copy's fixed cost
// (a call on the driver's thread that waits for the device, tens of
// microseconds on an H100) is what copying tens of kilobytes costs, and
// the guest reads near where it read (a row of a matrix, the rows of a
// stencil), in either direction.
const faultWindow = 16

// window returns the stale pages of b in the aligned window of w guest
// pages around page i (stale), in order.
func (b *resBuf) window(i, w int) []int {
	pn := b.r.Lo/gvinst.PageSize + uint64(i)
	w0 := int(pn-pn%uint64(w)) - int(b.r.Lo/gvinst.PageSize)
	pages := make([]int, 0, w)
	for p := max(w0, 0); p < min(w0+w, len(b.stale)); p++ {
		if b.stale[p] {
			pages = append(pages, p)
		}
	}
	return pages
}

// meterBack makes the copies of a bring-back outside a launch count in
// the bring-back's parts, and returns what ends that; during a launch
// they count in the launch's.
func (res *Resident) meterBack() func() {
	if res.ctx == nil || res.ctx.parts != nil {
		return func() {}
	}
	parts := &res.back.Parts
	counted, t0 := parts.counted(), time.Now()
	res.ctx.parts = parts
	return func() {
		res.ctx.parts = nil
		parts.Other += max(time.Since(t0)-(parts.counted()-counted), 0)
	}
}

// BringBack brings back from the device the stale pages holding bytes of
// the ranges rs (their chunks in every buffer): the footprint of
// iterations the CPU is about to run (a tail after a launch), which would
// otherwise come back as the guest reaches them, a fault and a copy at a
// time. The stale pages of a buffer come back a stretch a copy (stale
// pages fewer than joinGap bytes apart, up to stageBytes), the copies in
// one batch (gpu.BatchCopier) up to stageBytes: the device's bytes of the
// pages between a stretch's, which the guest holds and may have changed,
// are not written into the guest.
func (res *Resident) BringBack(rs []Range) error {
	if res == nil || res.lazyMem == nil {
		return nil
	}
	defer res.meterBack()()
	var todo []stretch
	for _, b := range res.bufs {
		if b.nstale == 0 {
			continue
		}
		var pages []int
		for _, r := range rs {
			// Whole pages: a page holding a byte of r is stale in the
			// guest while any buffer left its chunk of it so.
			lo := max(r.Lo/gvinst.PageSize*gvinst.PageSize, b.r.Lo)
			hi := min((r.Hi+gvinst.PageSize-1)/gvinst.PageSize*gvinst.PageSize, b.r.Hi)
			if r.Hi <= r.Lo || lo >= hi {
				continue
			}
			first, _ := b.page(lo / gvinst.PageSize)
			last, _ := b.page((hi - 1) / gvinst.PageSize)
			for p := first; p <= last; p++ {
				if b.stale[p] {
					pages = append(pages, p)
				}
			}
		}
		slices.Sort(pages)
		pages = slices.Compact(pages)
		for len(pages) > 0 {
			n := 1
			for n < len(pages) && pages[n]-pages[n-1] <= joinGap/gvinst.PageSize && pages[n]-pages[0] < stageBytes/gvinst.PageSize {
				n++
			}
			todo = append(todo, stretch{b, pages[:n]})
			pages = pages[n:]
		}
	}
	return res.bringBackStretches(todo)
}

// A stretch is stale pages of a buffer, in order, spanning at most
// stageBytes, that come back in one copy of their span.
type stretch struct {
	b     *resBuf
	pages []int
}

// span returns the guest bytes from the stretch's first page to its last.
func (st stretch) span() (lo, hi uint64) { return st.b.span(st.pages[0], st.pages[len(st.pages)-1]+1) }

// bringBackStretches brings the stretches back from the device into the
// guest, as many at a time as the staging buffer holds, their copies in
// one batch.
func (res *Resident) bringBackStretches(todo []stretch) error {
	for len(todo) > 0 {
		n, size := 0, uint64(0)
		for n < len(todo) {
			lo, hi := todo[n].span()
			if n > 0 && size+hi-lo > stageBytes {
				break
			}
			size += hi - lo
			n++
		}
		if n == 1 && todo[0].b.snap != nil || size > stageBytes {
			// (Only a lazy Resident's buffers have stale pages, and
			// those keep no snapshot; one that does, or a stretch
			// longer than the staging buffer, a run at a time.)
			st := todo[0]
			for i := 0; i < len(st.pages); {
				j := i + 1
				for j < len(st.pages) && st.pages[j] == st.pages[j-1]+1 {
					j++
				}
				if err := res.bringBack(st.b, st.pages[i], st.pages[j-1]+1); err != nil {
					return err
				}
				i = j
			}
			todo = todo[1:]
			continue
		}
		if err := res.bringBackBatch(todo[:n], size); err != nil {
			return err
		}
		todo = todo[n:]
	}
	return nil
}

// bringBackBatch copies the stretches todo, of size bytes in all (at most
// stageBytes), from the device into the staging buffer in one batch, then
// into the guest: only their stale pages (the device's bytes of the pages
// between them are not the guest's).
func (res *Resident) bringBackBatch(todo []stretch, size uint64) error {
	t0 := time.Now()
	defer func() { res.back.Time += time.Since(t0) }()
	return res.withStage(size, func(s []byte) error {
		copies := make([]gpu.Copy, len(todo))
		var off uint64
		for i, st := range todo {
			lo, hi := st.span()
			copies[i] = gpu.Copy{Dev: st.b.dev + gpu.DevicePtr(lo-st.b.r.Lo), Host: s[off : off+hi-lo], FromDevice: true}
			off += hi - lo
			res.back.Runs++
			res.back.Pages += uint64(len(st.pages))
		}
		if err := copyBatch(res.ctx, copies); err != nil {
			return fmt.Errorf("%w: copying %d stretches of pages from the device: %v", ErrLostCopy, len(todo), err)
		}
		for i, st := range todo {
			b, lo := st.b, st.pages[0]
			blo, _ := b.chunk(lo)
			prev := res.poking
			res.poking = b
			for _, p := range st.pages {
				if !b.stale[p] {
					continue // brought back meanwhile, for another buffer's page
				}
				plo, phi := b.chunk(p)
				if err := res.putPage(b, p, copies[i].Host[plo-blo:phi-blo]); err != nil {
					res.poking = prev
					return err
				}
			}
			res.poking = prev
		}
		return nil
	})
}

// bringBackPages copies pages of b, all stale, in order and spanning at
// most stageBytes, from the device into the guest in one copy of the span
// from the first to the last: the device's bytes of the pages between
// that are not among them are left out of the guest (they are not stale:
// the guest's are current).
func (res *Resident) bringBackPages(b *resBuf, pages []int) error {
	first, last := pages[0], pages[len(pages)-1]
	if last-first+1 == len(pages) {
		return res.bringBack(b, first, last+1)
	}
	return res.bringBackStretches([]stretch{{b, pages}})
}

// bringBack copies pages i..j-1 of b, all stale, from the device into the
// guest.
func (res *Resident) bringBack(b *resBuf, i, j int) error {
	lo, hi := b.span(i, j)
	if b.snap == nil && hi-lo > stageBytes {
		// Staged in chunks.
		mid := i + int(stageBytes/gvinst.PageSize)
		if err := res.bringBack(b, i, mid); err != nil {
			return err
		}
		return res.bringBack(b, mid, j)
	}
	t0 := time.Now()
	defer func() { res.back.Time += time.Since(t0) }()
	res.back.Runs++
	res.back.Pages += uint64(j - i)
	recycle := res.recycling && b.snap == nil
	if recycle {
		res.recycle(b, i, j)
	}
	put := func(s []byte) error {
		if err := res.ctx.CopyDtoH(s, b.dev+gpu.DevicePtr(lo-b.r.Lo)); err != nil {
			return fmt.Errorf("%w: copying [%#x,%#x) from the device: %v", ErrLostCopy, lo, hi, err)
		}
		mem := res.lazyMem // only a lazy Resident has stale pages
		for p := i; p < j; p++ {
			plo, phi := b.chunk(p)
			res.reread(b, p)
			mem.Undefer(plo, phi-plo)
			b.stale[p] = false
			b.nstale--
			b.snapped[p] = b.snap != nil
			delete(b.pageSnap, p)
		}
		// (Restored, not cleared: a Poke may bring back another
		// buffer's page, nested, in the middle of this one's.)
		prev := res.poking
		res.poking = b
		defer func() { res.poking = prev }()
		if err := timeGuest(res.parts(), guestWrite, func() error { return mem.Poke(lo, s) }); err != nil {
			return fmt.Errorf("%w: writing [%#x,%#x) back: %v", ErrLostCopy, lo, hi, err)
		}
		return nil
	}
	var err error
	if b.snap != nil {
		err = put(b.snap[lo-b.r.Lo : hi-b.r.Lo])
	} else {
		err = res.withStage(hi-lo, put)
	}
	if err != nil {
		return err
	}
	mem := res.lazyMem
	// The guest now holds what snap holds; the Poke reported these pages
	// changing to every buffer (others may share the edge pages). A
	// snapshot of one taken meanwhile (another buffer's page brought back
	// in the middle of the Poke) holds the bytes from before it.
	for p := i; p < j; p++ {
		delete(b.pageSnap, p)
	}
	if b.watched {
		for p := i; p < j; p++ {
			b.dirty[p] = false
		}
		mem.Watch(lo, hi-lo)
	}
	res.back.Bytes += hi - lo
	if recycle {
		res.backRuns = append(res.backRuns, backRun{b, i, j})
		res.backBytes += hi - lo
	}
	return nil
}

// bringBackStrided copies pages of b, all stale, from the device into the
// guest: one page of each of the rows a column walk reads next (see
// Refresh), the pages at addr, addr+d, addr+2d and so on. A copy to the
// host of a page a call costs on a real GPU about what copying a hundred
// kilobytes does, and a walk down a wide matrix's column reads one page
// a row: the rows' pages come back in one strided copy (gpu.StridedCopier)
// of the narrowest band at stride d that holds each row's page, or, where
// the context has none, are gathered on the device first (copies between
// device buffers do not wait for the device) and come back in one copy.
// (mvt at 12000 on an H100: 12,000 pages gathered a call each took 0.7 s.)
func (res *Resident) bringBackStrided(b *resBuf, pages []int, addr, d uint64) error {
	t0 := time.Now()
	defer func() { res.back.Time += time.Since(t0) }()
	res.back.Runs++
	res.back.Pages += uint64(len(pages))
	// The band: row k's page starts off_k bytes from addr + k*d.
	offs := make([]int64, len(pages))
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for k, p := range pages {
		plo, phi := b.chunk(p)
		offs[k] = int64(plo) - int64(addr+uint64(k)*d)
		lo, hi = min(lo, offs[k]), max(hi, offs[k]+int64(phi-plo))
	}
	width := uint64(hi - lo)
	start := int64(addr) + lo
	end := start + int64(d)*int64(len(pages)-1) + int64(width)
	if _, ok := res.raw.(gpu.StridedCopier); ok && start >= int64(b.r.Lo) && end <= int64(b.r.Hi) && width <= d && width <= stageBytes {
		// As many rows a copy as the staging buffer holds.
		rows := int(stageBytes / width)
		for k0 := 0; k0 < len(pages); k0 += rows {
			k1 := min(k0+rows, len(pages))
			stage, done := res.takeStage(width * uint64(k1-k0))
			src := b.dev + gpu.DevicePtr(uint64(start)+uint64(k0)*d-b.r.Lo)
			if _, err := res.ctx.copyDtoHStrided(stage, src, width, d, uint64(k1-k0)); err != nil {
				done()
				return fmt.Errorf("%w: copying %d rows' pages from the device: %v", ErrLostCopy, k1-k0, err)
			}
			at := make([]uint64, k1-k0)
			for k := k0; k < k1; k++ {
				at[k-k0] = uint64(k-k0)*width + uint64(offs[k]-lo)
			}
			err := res.putStrided(b, pages[k0:k1], stage, at)
			done()
			if err != nil {
				return err
			}
		}
		return nil
	}
	if res.gather == 0 {
		dev, err := res.ctx.Alloc(maxReadAhead * gvinst.PageSize)
		if err != nil {
			return fmt.Errorf("%w: a gather buffer: %v", ErrLostCopy, err)
		}
		res.gather = dev
	}
	at := make([]uint64, len(pages))
	var off uint64
	for k, p := range pages {
		lo, hi := b.chunk(p)
		if err := res.ctx.CopyDtoDAsync(res.gather+gpu.DevicePtr(off), b.dev+gpu.DevicePtr(lo-b.r.Lo), hi-lo); err != nil {
			return fmt.Errorf("%w: gathering [%#x,%#x) on the device: %v", ErrLostCopy, lo, hi, err)
		}
		at[k] = off
		off += hi - lo
	}
	return res.withStage(off, func(s []byte) error {
		if err := res.ctx.CopyDtoH(s, res.gather); err != nil {
			return fmt.Errorf("%w: copying %d gathered pages from the device: %v", ErrLostCopy, len(pages), err)
		}
		return res.putStrided(b, pages, s, at)
	})
}

// putStrided writes pages of b, brought back into s (page k's bytes at
// at[k]), into the guest, and marks them current there.
func (res *Resident) putStrided(b *resBuf, pages []int, s []byte, at []uint64) error {
	// (Restored, not cleared: a Poke may bring back another buffer's
	// page, nested, in the middle of this one's.)
	prev := res.poking
	res.poking = b
	defer func() { res.poking = prev }()
	for k, p := range pages {
		lo, hi := b.chunk(p)
		if err := res.putPage(b, p, s[at[k]:at[k]+hi-lo]); err != nil {
			return err
		}
	}
	return nil
}

// putPage writes page p of b, stale, brought back into src (its bytes),
// into the guest, and marks it current there; the caller has made b the
// buffer res is poking.
func (res *Resident) putPage(b *resBuf, p int, src []byte) error {
	mem := res.lazyMem // only a lazy Resident has stale pages
	lo, hi := b.chunk(p)
	res.reread(b, p)
	mem.Undefer(lo, hi-lo)
	b.stale[p] = false
	b.nstale--
	b.snapped[p] = false
	delete(b.pageSnap, p)
	if err := timeGuest(res.parts(), guestWrite, func() error { return mem.Poke(lo, src) }); err != nil {
		return fmt.Errorf("%w: writing [%#x,%#x) back: %v", ErrLostCopy, lo, hi, err)
	}
	delete(b.pageSnap, p) // (see bringBack)
	if b.watched {
		b.dirty[p] = false
		mem.Watch(lo, hi-lo)
	}
	res.back.Bytes += hi - lo
	return nil
}

// BroughtBack reports the bytes Refresh and Close brought back from the
// device so far, and the time it took.
func (res *Resident) BroughtBack() (uint64, time.Duration) { return res.back.Bytes, res.back.Time }

// BringBackStats says what bringing pages back from the device took: how
// often an access found a page stale, how many runs of pages came back
// (each one copy from the device) and where the time of those outside a
// launch went.
type BringBackStats struct {
	// Faults are the accesses that found a page stale and asked for it
	// (Refresh); Runs the runs of pages brought back, Pages and Bytes
	// what they held; Time the time they took.
	Faults, Runs, Pages, Bytes uint64
	Time                       time.Duration
	// Ahead is the pages that came back with a launch, behind its
	// kernel, where the guest found them stale after the launch before
	// (ahead.go).
	Ahead uint64
	// Released is the bytes of pages brought back whose host memory was
	// taken back for the next ones (recycle.go), Reread those of
	// them read again, which came back a second time.
	Released, Reread uint64
	// Parts splits the time of the bring-backs an access asked for
	// outside a launch (those during a launch count in its own parts)
	// by what it went to: the copies from the device (and gathers on
	// it), writing the bytes into the guest, the page marks, the rest.
	Parts CopyParts
}

// BringBackStats returns what bringing pages back took so far.
func (res *Resident) BringBackStats() BringBackStats {
	if res == nil {
		return BringBackStats{}
	}
	return res.back
}

// ToCopy returns how many bytes of r a launch would copy to the device:
// the bytes no filled resident buffer holds, and, of those one holds, the
// pages the guest may have written since (all of them when the guest
// memory does not report writes). Phase 2's cost model prices a launch's
// copies by it, so a time step over arrays already on the device is not
// charged for copying them again.
func (res *Resident) ToCopy(r Range) uint64 {
	if r.Hi <= r.Lo {
		return 0
	}
	n := r.Hi - r.Lo
	if res == nil {
		return n
	}
	for _, b := range res.bufs {
		lo, hi := max(r.Lo, b.r.Lo), min(r.Hi, b.r.Hi)
		if !b.filled || lo >= hi {
			continue
		}
		held := hi - lo
		if b.watched {
			for pn := lo / gvinst.PageSize; pn <= (hi-1)/gvinst.PageSize; pn++ {
				if i, ok := b.page(pn); ok && b.dirty[i] && !b.stale[i] {
					plo, phi := max(lo, pn*gvinst.PageSize), min(hi, (pn+1)*gvinst.PageSize)
					held -= phi - plo
				}
			}
		} else {
			held = 0
		}
		n -= held
	}
	return n
}

// Unheld returns how many bytes of r no resident buffer covers: what a
// launch over r copies into device memory it allocates for them (a new
// buffer, or the new part of a merged one). Phase 2's cost model prices
// those bytes at the bandwidth of copies into new buffers (on the
// simulator, the copy maps the buffer's pages as it first writes them).
func (res *Resident) Unheld(r Range) uint64 {
	if r.Hi <= r.Lo {
		return 0
	}
	n := r.Hi - r.Lo
	if res == nil {
		return n
	}
	for _, b := range res.bufs {
		if lo, hi := max(r.Lo, b.r.Lo), min(r.Hi, b.r.Hi); lo < hi {
			n -= hi - lo
		}
	}
	return n
}

// ToMerge returns how many bytes a launch over r would copy on the
// device, merging the resident buffers that overlap r into one that
// covers them and r (see acquire): 0 when a buffer holds r, or can grow
// in place to it, or when the merged buffer would pass the Resident's
// budget (the old buffers are then dropped, and their stale pages
// brought back, instead). Phase 2's cost model prices those copies with
// the launch's, as it does ToCopy's.
func (res *Resident) ToMerge(r Range) uint64 {
	if res == nil || r.Hi <= r.Lo {
		return 0
	}
	for _, b := range res.bufs {
		if b.r.Lo <= r.Lo && r.Hi <= b.r.Hi {
			return 0
		}
	}
	if res.growable(r) != nil {
		return 0
	}
	var n uint64
	u := r
	for _, b := range res.bufs {
		if b.r.Overlaps(r) {
			n += b.r.Hi - b.r.Lo
			u.Lo, u.Hi = min(u.Lo, b.r.Lo), max(u.Hi, b.r.Hi)
		}
	}
	if u.Hi-u.Lo > res.limit() {
		return 0
	}
	return n
}

// Stale returns how many bytes of r only the device holds (the guest's
// pages there are stale): what running over r on the CPU would bring back
// first. Phase 2's cost model charges it to the CPU side, so that a small
// nest between kernels over arrays that live on the device (LU's column
// scaling between its trailing updates) is not sent to the CPU, whose
// every pass would bring the pages back and the next launch copy them in
// again.
func (res *Resident) Stale(r Range) uint64 {
	if res == nil || r.Hi <= r.Lo {
		return 0
	}
	var n uint64
	for _, b := range res.bufs {
		lo, hi := max(r.Lo, b.r.Lo), min(r.Hi, b.r.Hi)
		if lo >= hi || b.nstale == 0 {
			continue
		}
		for pn := lo / gvinst.PageSize; pn <= (hi-1)/gvinst.PageSize; pn++ {
			if i, ok := b.page(pn); ok && b.stale[i] {
				plo, phi := max(lo, pn*gvinst.PageSize), min(hi, (pn+1)*gvinst.PageSize)
				n += phi - plo
			}
		}
	}
	return n
}

// containing returns the resident buffer that holds all of r, or nil.
func (res *Resident) containing(r Range) *resBuf {
	if res == nil {
		return nil
	}
	for _, b := range res.bufs {
		if b.r.Lo <= r.Lo && r.Hi <= b.r.Hi {
			res.clock++
			b.used = res.clock
			return b
		}
	}
	return nil
}

// acquire returns the device buffer a launch uses for the guest bytes r,
// pinned, and whether it is resident (kept after the launch). Resident
// buffers never share a byte: a buffer holding r is reused; buffers that
// overlap r are merged, with r, into one that covers them all, so that
// kernels over different parts of one array (the rows a stencil writes,
// the wider rows the next one reads) see one device copy of it and
// nothing goes through the host between them. An unkept buffer is new
// and empty (load fills it).
func (res *Resident) acquire(ctx gpu.Context, mem GuestMemory, r Range) (*resBuf, bool, uint64, error) {
	if b := res.containing(r); b != nil {
		b.pinned = true
		return b, true, 0, nil
	}
	if b := res.growable(r); b != nil {
		copied, err := res.extend(ctx, mem, b, r)
		if err != nil {
			return nil, false, 0, err
		}
		b.pinned = true
		return b, true, copied, nil
	}
	var olds []*resBuf
	u := r
	grows := false // r goes on from the end of a buffer it meets
	if res != nil {
		for _, b := range res.bufs {
			switch {
			case b.r.Overlaps(r):
				olds = append(olds, b)
				u.Lo, u.Hi = min(u.Lo, b.r.Lo), max(u.Hi, b.r.Hi)
				grows = grows || b.r.Hi < r.Hi && b.r.Lo <= r.Lo
			case res.meets(b, r):
				grows = true
			}
		}
	}
	limit := res.limit()
	if len(olds) > 0 && u.Hi-u.Lo > limit {
		// Too big to keep as one: the guest takes back what the old
		// buffers hold, and the launch uses a buffer of its own.
		for _, o := range olds {
			if err := res.drop(o); err != nil {
				return nil, false, 0, err
			}
		}
		olds, u = nil, r
	}
	if len(olds) > 0 {
		u = res.padded(u, olds)
	}
	size := u.Hi - u.Lo
	if grows && res.lazyMem != nil {
		// Room to grow on (see growable).
		size = min(max(2*size, growMin), size+growMax, limit)
	}
	dev, err := ctx.Alloc(size)
	if err != nil {
		return nil, false, 0, err
	}
	b := newResBuf(res, u, dev)
	b.pinned = true
	if grows && res.lazyMem != nil {
		b.capacity = size
	}
	var copied uint64
	if len(olds) > 0 {
		if copied, err = res.merge(ctx, mem, b, olds); err != nil {
			// The old buffers' stale pages are lost with them.
			_ = ctx.Free(dev)
			return nil, false, 0, fmt.Errorf("%w: merging device buffers: %v", ErrLostCopy, err)
		}
	}
	if res.add(b) {
		return b, true, copied, nil
	}
	if b.filled {
		// A merged buffer the budget cannot keep: the guest takes back
		// its stale pages, and the launch gets an empty buffer.
		if err := res.dropUnkept(b); err != nil {
			return nil, false, 0, err
		}
		b = newResBuf(res, r, b.dev)
		b.pinned = true
	}
	return b, false, 0, nil
}

// A footprint that goes on where a lazy buffer ends (an array made on the
// device a row a launch, conv2d's image) would make a buffer per launch,
// or merge the growing buffer into a new one each launch (a copy of all
// of it on the device, and a walk of all its pages: quadratic). So the
// buffer of a launch whose footprint meets the end of a buffer (starts in
// the page after it) or overlaps it and ends past it is made with room to
// grow (twice its size, growMin at least, growMax more at most), and the
// launches after it grow that buffer in place. (It does not merge with a
// buffer it only meets: that may be another array's, and a merged buffer
// is filled from the guest, where a new one is not filled where the
// launch overwrites it: an array made on the device.)
const (
	growMin = 1 << 20
	growMax = 256 << 20
)

// meets reports whether r starts at most a page past the end of b, a
// lazy buffer, and goes on past it.
func (res *Resident) meets(b *resBuf, r Range) bool {
	return res.lazyMem != nil && b.snap == nil && b.r.Hi <= r.Lo && r.Lo-b.r.Hi < gvinst.PageSize
}

// growable returns the buffer that r goes on from the end of (it meets or
// overlaps it, starting inside it or after it, and ending past it), when
// the buffer has room for r and no other buffer has a byte of r: the
// buffer then grows in place.
func (res *Resident) growable(r Range) *resBuf {
	if res == nil || res.lazyMem == nil {
		return nil
	}
	var g *resBuf
	for _, b := range res.bufs {
		switch {
		case b.capacity > 0 && b.r.Lo <= r.Lo && b.r.Hi < r.Hi && (b.r.Overlaps(r) || res.meets(b, r)) && r.Hi-b.r.Lo <= b.capacity:
			g = b
		case b.r.Overlaps(r):
			return nil // another buffer has bytes of r
		}
	}
	if g != nil {
		for _, b := range res.bufs {
			if b != g && b.r.Overlaps(Range{g.r.Hi, r.Hi}) {
				return nil
			}
		}
	}
	return g
}

// extend grows b, which growable returned for r, in place to r's end (or
// its last page's), and returns the bytes it copied in: the guest's bytes of the rest of b's
// last page (read while that page's chunk is b's old one, so that a stale
// old chunk comes back alone). The pages after it are new, dirty, and
// filled by the launch's load (unfilled): in full where the launch does
// not overwrite them; a later launch copies in what the kernel did not
// leave on the device.
func (res *Resident) extend(ctx gpu.Context, mem GuestMemory, b *resBuf, r Range) (uint64, error) {
	// To the end of r's last page, where the room allows and no other
	// buffer holds a byte of it: a footprint that grows by an element a
	// launch (cholesky's rows below column j, up to column j) then grows
	// the buffer, and copies its edge in (a call to the driver), once a
	// page, not once a launch.
	if pe := (r.Hi-1)/gvinst.PageSize*gvinst.PageSize + gvinst.PageSize; pe > r.Hi && pe-b.r.Lo <= b.capacity && !res.holdsAny(b, Range{r.Hi, pe}) {
		r.Hi = pe
	}
	oldHi := b.r.Hi
	pageEnd := (oldHi-1)/gvinst.PageSize*gvinst.PageSize + gvinst.PageSize
	edge := Range{oldHi, min(pageEnd, r.Hi)}
	if edge.Lo < edge.Hi {
		if err := b.copyIn(ctx, mem, res, edge.Lo, edge.Hi); err != nil {
			return 0, err
		}
	}
	b.r.Hi = r.Hi
	res.bytes += r.Hi - oldHi
	last := int((r.Hi-1)/gvinst.PageSize - b.r.Lo/gvinst.PageSize)
	for p := len(b.stale); p <= last; p++ {
		b.stale = append(b.stale, false)
		b.dirty = append(b.dirty, true)
		b.snapped = append(b.snapped, false)
	}
	switch {
	case b.unfilled.Lo < b.unfilled.Hi:
		b.unfilled.Hi = r.Hi
	case pageEnd < r.Hi:
		b.unfilled = Range{pageEnd, r.Hi}
	}
	b.nextPage, b.lastAddr = -1, 0
	return edge.Hi - edge.Lo, nil
}

// holdsAny reports whether a buffer other than b holds a byte of r.
func (res *Resident) holdsAny(b *resBuf, r Range) bool {
	for _, o := range res.bufs {
		if o != b && o.r.Overlaps(r) {
			return true
		}
	}
	return false
}

// padded widens u, the bytes of a buffer that grows over olds, to the
// ends of its first and last pages, short of any other buffer: a footprint
// that grows by an element each launch (cholesky's rows below column j,
// up to column j) then makes a new buffer, and walks every page of it,
// once a page rather than once a launch. Those pages are mapped, as u's
// ends are.
func (res *Resident) padded(u Range, olds []*resBuf) Range {
	lo := u.Lo / gvinst.PageSize * gvinst.PageSize
	hi := (u.Hi-1)/gvinst.PageSize*gvinst.PageSize + gvinst.PageSize
	if hi < u.Hi {
		hi = u.Hi // the last page of the address space
	}
	for _, b := range res.bufs {
		if b.r.Overlaps(u) {
			continue // one of olds (buffers share no byte)
		}
		if b.r.Hi <= u.Lo {
			lo = max(lo, b.r.Hi)
		}
		if b.r.Lo >= u.Hi {
			hi = min(hi, b.r.Lo)
		}
	}
	return Range{lo, hi}
}

// limit is the device memory the Resident keeps at most.
func (res *Resident) limit() uint64 {
	if res == nil || res.MaxBytes == 0 {
		return 1 << 30
	}
	return res.MaxBytes
}

// merge fills b, a new buffer covering the resident buffers olds (which
// share no byte), from them and the guest, takes their place and returns
// the bytes it copied from the guest. The device bytes move device to
// device. A page whose chunk in b the old buffers cover only with stale
// chunks stays stale (one holder's mark instead of theirs), with the
// guest's bytes of the rest of the chunk copied in; a page the old
// buffers cover wholly and none left stale keeps their snapshot (and
// whether the guest changed it since); the guest's bytes of every other
// page are current (stale old chunks of them are brought back first) and
// are copied in.
func (res *Resident) merge(ctx gpu.Context, mem GuestMemory, b *resBuf, olds []*resBuf) (uint64, error) {
	for _, o := range olds {
		off := o.r.Lo - b.r.Lo
		// Queued: what reads or writes b after it (copies, the kernel)
		// runs in stream order.
		if err := ctx.CopyDtoDAsync(b.dev+gpu.DevicePtr(off), o.dev, o.r.Hi-o.r.Lo); err != nil {
			return 0, err
		}
		if b.snap != nil && o.snap != nil {
			copy(b.snap[off:], o.snap)
		}
	}
	// The old buffers leave the Resident now (their device memory goes at
	// the end): a guest read below must not bring their chunks back.
	res.removeAll(olds)
	defer func() {
		for _, o := range olds {
			_ = res.ctx.Free(o.dev)
		}
	}()
	// The bytes no old buffer holds are copied in as runs: one copy per
	// page (a page's chunk at a time, below) cost a call on the driver's
	// thread each, some 40 us on an H100 (atax's product, merging the
	// rows its initialisation made on the CPU before the device was
	// ready: 27,048 copies, 105 MB in 1.05 s). flush stages the pending
	// run; in extends it. The runs' copies go in batches (copyBatcher),
	// as a launch's do.
	stage, done := res.takeStage(min(b.r.Hi-b.r.Lo, stageBytes))
	defer done()
	cb := &copyBatcher{ctx: ctx, stage: stage}
	var copied uint64
	var pendLo, pendHi uint64
	flush := func() error {
		if pendHi <= pendLo {
			return nil
		}
		lo, hi := pendLo, pendHi
		pendLo, pendHi = 0, 0
		return b.copyInto(cb, mem, res, lo, hi)
	}
	in := func(lo, hi uint64) error {
		copied += hi - lo
		if pendHi > pendLo && lo == pendHi {
			pendHi = hi
			return nil
		}
		if err := flush(); err != nil {
			return err
		}
		pendLo, pendHi = lo, hi
		return nil
	}
	// The old buffers in address order: those overlapping a page's chunk
	// are a run of them, found by a sweep (conv2d's image, its rows made
	// on the device a launch each, merged thousands of buffers, and a walk
	// of every buffer for every page took seconds).
	olds = slices.Clone(olds)
	slices.SortFunc(olds, func(x, y *resBuf) int { return cmp.Compare(x.r.Lo, y.r.Lo) })
	// from returns the index of the first old buffer that ends after lo.
	from := func(lo uint64) int {
		i, _ := slices.BinarySearchFunc(olds, lo, func(o *resBuf, lo uint64) int { return cmp.Compare(o.r.Hi, lo+1) })
		return i
	}
	// gaps copies in the bytes of [lo, hi) that no old buffer holds.
	gaps := func(lo, hi uint64) error {
		for i := from(lo); lo < hi; i++ {
			next := hi
			if i < len(olds) {
				next = min(next, max(olds[i].r.Lo, lo))
			}
			if lo < next {
				if err := in(lo, next); err != nil {
					return err
				}
			}
			if i >= len(olds) {
				break
			}
			lo = max(lo, olds[i].r.Hi)
		}
		return nil
	}
	first := 0 // the first old buffer that ends after the page's chunk starts
	for p := range b.stale {
		lo, hi := b.chunk(p)
		var stale, fresh []*resBuf
		dirty := false
		for first < len(olds) && olds[first].r.Hi <= lo {
			first++
		}
		for _, o := range olds[first:] {
			if o.r.Lo >= hi {
				break
			}
			if !o.r.Overlaps(Range{lo, hi}) {
				continue
			}
			i, _ := o.page(lo / gvinst.PageSize)
			if o.stale[i] {
				stale = append(stale, o)
			} else {
				fresh = append(fresh, o)
				dirty = dirty || !o.watched || o.dirty[i]
			}
		}
		switch {
		case len(stale) == 1 && len(fresh) == 0 && stale[0].r.Lo <= lo && hi <= stale[0].r.Hi:
			// One old buffer holds the whole chunk, stale: its mark on
			// the guest's page becomes b's (an array left on the device
			// grows without a walk of the guest's page marks).
			b.stale[p] = true
			b.nstale++
		case len(stale) > 0 && len(fresh) == 0:
			// The device holds the newest bytes of the old chunks; the
			// guest those of the rest, read with the old marks off.
			for range stale {
				res.lazyMem.Undefer(lo, hi-lo)
			}
			if err := gaps(lo, hi); err != nil {
				return copied, err
			}
			// Read before the marks go back on.
			if err := flush(); err != nil {
				return copied, err
			}
			if err := res.lazyMem.Defer(lo, hi-lo); err != nil {
				return copied, fmt.Errorf("%w: leaving [%#x,%#x) on the device: %v", ErrLostCopy, lo, hi, err)
			}
			b.stale[p] = true
			b.nstale++
		case len(stale) == 0 && !dirty:
			// The device holds the guest's bytes of the old chunks (and
			// snap, where they kept theirs).
			if err := gaps(lo, hi); err != nil {
				return copied, err
			}
			b.snapped[p] = b.snap != nil
			for _, o := range fresh {
				i, _ := o.page(lo / gvinst.PageSize)
				b.snapped[p] = b.snapped[p] && o.snapped[i]
			}
		default:
			for _, o := range stale {
				i, _ := o.page(lo / gvinst.PageSize)
				if err := res.bringBack(o, i, i+1); err != nil {
					return copied, err
				}
			}
			if err := in(lo, hi); err != nil {
				return copied, err
			}
		}
	}
	if err := flush(); err != nil {
		return copied, err
	}
	if err := cb.flush(); err != nil {
		return copied, err
	}
	b.filled = true
	if res.lazyMem != nil {
		// The pages that are not stale are watched from now on (a stale
		// one is when it comes back).
		for i := 0; i < len(b.stale); {
			if b.stale[i] {
				i++
				continue
			}
			j := i + 1
			for j < len(b.stale) && !b.stale[j] {
				j++
			}
			lo, hi := b.span(i, j)
			_ = timeGuest(res.parts(), marks, func() error { res.lazyMem.Watch(lo, hi-lo); return nil })
			i = j
		}
		b.watched = true
	}
	return copied, nil
}

// dropUnkept brings the stale pages of b, a buffer not among res.bufs,
// back into the guest.
func (res *Resident) dropUnkept(b *resBuf) error {
	for i := 0; i < len(b.stale); {
		if !b.stale[i] {
			i++
			continue
		}
		j := i + 1
		for j < len(b.stale) && b.stale[j] {
			j++
		}
		if err := res.bringBack(b, i, j); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// add keeps b, evicting the least recently used buffers not in use over
// the budget; false when b cannot be kept (it is over the budget alone, or
// eviction failed: then the launch copies back eagerly).
func (res *Resident) add(b *resBuf) bool {
	if res == nil {
		return false
	}
	limit := res.limit()
	n := b.r.Hi - b.r.Lo
	if n > limit {
		return false
	}
	for res.bytes+n > limit {
		var lru *resBuf
		for _, x := range res.bufs {
			if !x.pinned && (lru == nil || x.used < lru.used) {
				lru = x
			}
		}
		if lru == nil || res.drop(lru) != nil {
			return false
		}
	}
	res.clock++
	b.used = res.clock
	res.bufs = append(res.bufs, b)
	res.bytes += n
	return true
}

// drop brings b's stale pages back and frees it.
func (res *Resident) drop(b *resBuf) error {
	if err := res.dropUnkept(b); err != nil {
		return err
	}
	res.forget(b)
	return nil
}

// forget frees b, which must have no stale page.
func (res *Resident) forget(b *resBuf) {
	if res.remove(b) {
		_ = res.ctx.Free(b.dev)
	}
}

// remove takes b out of the Resident, without freeing it; false when b
// was not in it.
func (res *Resident) remove(b *resBuf) bool {
	for i, x := range res.bufs {
		if x == b {
			res.bufs = append(res.bufs[:i], res.bufs[i+1:]...)
			res.bytes -= b.r.Hi - b.r.Lo
			return true
		}
	}
	return false
}

// removeAll takes the buffers bs out of the Resident, without freeing
// them.
func (res *Resident) removeAll(bs []*resBuf) {
	gone := make(map[*resBuf]bool, len(bs))
	for _, b := range bs {
		gone[b] = true
	}
	res.bufs = slices.DeleteFunc(res.bufs, func(x *resBuf) bool {
		if gone[x] {
			res.bytes -= x.r.Hi - x.r.Lo
		}
		return gone[x]
	})
}

// Close brings every stale page back into the guest and frees every
// buffer. After an error wrapping ErrLostCopy the guest's memory is not
// what the program wrote.
func (res *Resident) Close() error {
	var errs []error
	for len(res.bufs) > 0 {
		b := res.bufs[0]
		if err := res.drop(b); err != nil {
			errs = append(errs, err)
			b.stale, b.nstale = nil, 0
			res.forget(b)
		}
	}
	res.freeScratch()
	if res.lazyMem != nil && len(errs) == 0 {
		res.lazyMem.SetHolder(nil)
	}
	return errors.Join(errs...)
}

// freeScratch frees the spare backup buffers, the error record, the
// gather buffer and a pinned staging buffer.
func (res *Resident) freeScratch() {
	if res.stagePinned {
		res.freeStage()
	}
	for _, s := range res.spares {
		_ = res.ctx.Free(s.dev)
	}
	res.spares = nil
	if res.errHost != nil {
		_ = res.raw.(gpu.MappedAllocator).FreeMapped(res.errHost)
		res.errRec, res.errHost = 0, nil
	}
	if res.errRec != 0 {
		_ = res.ctx.Free(res.errRec)
		res.errRec = 0
	}
	if res.gather != 0 {
		_ = res.ctx.Free(res.gather)
		res.gather = 0
	}
}

// Discard frees every buffer without bringing its stale pages back, and
// returns how many bytes of them it left behind. It is for a guest that
// has ended, whose memory nothing reads again: copying back what only the
// device holds would cost the time of the copy for nothing (atax's
// 1.3 GB matrix, born on the device, took a second). The guest's pages
// stay marked stale with no holder, so a read of one after all fails
// with a fault naming it instead of seeing old bytes.
func (res *Resident) Discard() uint64 {
	var left uint64
	for _, b := range res.bufs {
		for i, st := range b.stale {
			if st {
				lo, hi := b.span(i, i+1)
				left += hi - lo
			}
		}
		if !res.LeaveDevice {
			_ = res.ctx.Free(b.dev)
		}
	}
	res.bufs, res.bytes = nil, 0
	if !res.LeaveDevice {
		res.freeScratch()
	}
	if res.lazyMem != nil {
		res.lazyMem.SetHolder(nil)
	}
	res.discarded += left
	return left
}

// Discarded reports the stale bytes never brought back: left behind by
// Discard, or thrown away by the guest (Dropped).
func (res *Resident) Discarded() uint64 { return res.discarded }

// changed returns the span [lo, hi) from the first byte in which a and b
// (of one length) differ to the last; lo == hi when they are equal.
func changed(a, b []byte) (lo, hi int) {
	if bytes.Equal(a, b) {
		return 0, 0
	}
	for lo < len(a) && a[lo] == b[lo] {
		lo++
	}
	hi = len(a)
	for hi > lo && a[hi-1] == b[hi-1] {
		hi--
	}
	return lo, hi
}
