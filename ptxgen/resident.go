package ptxgen

import (
	"bytes"
	"errors"
	"fmt"
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
// A buffer is reused by a later launch over exactly the same guest range,
// which copies in only the pages whose guest bytes changed since the
// device last held them. With Lazy set (and a DeferringMemory, which the
// first launch makes the Resident the holder of), what a kernel wrote
// stays on the device too: the guest's pages are marked stale, and the
// memory calls Refresh, which brings back the pages touched (and, while the guest reads a buffer in order, a
// doubling run of the pages after them). A launch over the same range
// finds the stale pages current on the device and copies nothing for them.
// Lazy buffers also watch their pages (the memory calls Touched), so a
// launch reads and compares only the pages the guest has written since,
// not the whole range. Close brings everything back and lets go of the
// memory.
type Resident struct {
	// MaxBytes bounds the device memory kept (0: 1 GiB); the least
	// recently used buffers go first.
	MaxBytes uint64
	// Lazy leaves written buffers on the device until the guest touches
	// them.
	Lazy bool

	ctx       gpu.Context
	mem       GuestMemory
	lazyMem   DeferringMemory // mem, when Lazy and it can hold stale pages; else nil
	bufs      []*resBuf
	bytes     uint64
	clock     uint64
	scratch   []byte
	broughtIn uint64        // bytes Refresh and Close brought back
	broughtT  time.Duration // and the time that took
}

// maxReadAhead is the longest run of pages one Refresh brings back.
const maxReadAhead = 2048

type resBuf struct {
	r    Range
	dev  gpu.DevicePtr
	snap []byte // the device's bytes, on the pages that are not stale
	// stale[i] is set when the guest's copy of page i of r (counted from
	// r.Lo's page) is stale: the device's bytes are newer.
	stale  []bool
	nstale int
	// dirty[i] is set when the guest may have changed page i since snap
	// was taken; without watching (not lazy) every page counts as dirty.
	dirty   []bool
	watched bool // the guest memory reports changes to the pages
	filled  bool // snap and the device were filled from the guest
	pinned  bool // in use by the launch under way: never evicted
	used    uint64
	// Read-ahead: the page after the last run Refresh brought back, and
	// that run's length.
	nextPage, ahead int
}

func newResBuf(r Range, dev gpu.DevicePtr) *resBuf {
	first, last := r.Lo/gvinst.PageSize, (r.Hi-1)/gvinst.PageSize
	n := last - first + 1
	return &resBuf{r: r, dev: dev, snap: make([]byte, r.Hi-r.Lo), stale: make([]bool, n), dirty: make([]bool, n), nextPage: -1}
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

// load brings the device's copy up to date with the guest and returns the
// bytes it copied: everything for a new buffer, else the pages that are
// not stale and whose guest bytes changed since.
func (b *resBuf) load(ctx gpu.Context, mem GuestMemory, res *Resident) (uint64, error) {
	if !b.filled {
		if err := mem.Read(b.r.Lo, b.snap); err != nil {
			return 0, fmt.Errorf("reading guest footprint [%#x,%#x): %w", b.r.Lo, b.r.Hi, err)
		}
		if err := ctx.CopyHtoD(b.dev, b.snap); err != nil {
			return 0, err
		}
		b.filled = true
		b.watch(res)
		return uint64(len(b.snap)), nil
	}
	var cur []byte
	if res != nil {
		if uint64(cap(res.scratch)) < b.r.Hi-b.r.Lo {
			res.scratch = make([]byte, b.r.Hi-b.r.Lo)
		}
		cur = res.scratch[:b.r.Hi-b.r.Lo]
	} else {
		cur = make([]byte, b.r.Hi-b.r.Lo)
	}
	at := func(lo, hi uint64) (int, int) { return int(lo - b.r.Lo), int(hi - b.r.Lo) }
	same := func(p int) bool {
		x, y := at(b.chunk(p))
		return bytes.Equal(cur[x:y], b.snap[x:y])
	}
	// The pages to look at: not stale, and (when watched) changed since.
	check := func(p int) bool { return !b.stale[p] && (!b.watched || b.dirty[p]) }
	var copied uint64
	for i := 0; i < len(b.stale); {
		if !check(i) {
			i++
			continue
		}
		j := i + 1
		for j < len(b.stale) && check(j) {
			j++
		}
		lo, hi := b.span(i, j)
		x, y := at(lo, hi)
		if err := mem.Read(lo, cur[x:y]); err != nil {
			return copied, fmt.Errorf("reading guest footprint [%#x,%#x): %w", lo, hi, err)
		}
		for p := i; p < j; {
			if same(p) {
				p++
				continue
			}
			q := p + 1
			for q < j && !same(q) {
				q++
			}
			x, y := at(b.span(p, q))
			if err := ctx.CopyHtoD(b.dev+gpu.DevicePtr(x), cur[x:y]); err != nil {
				return copied, err
			}
			copy(b.snap[x:y], cur[x:y])
			copied += uint64(y - x)
			p = q
		}
		i = j
	}
	b.watch(res)
	return copied, nil
}

// watch asks the guest memory of a lazy Resident to report the next
// change of each of b's pages, now that snap holds them.
func (b *resBuf) watch(res *Resident) {
	if res == nil || res.lazyMem == nil {
		return
	}
	for i := range b.dirty {
		b.dirty[i] = false
	}
	res.lazyMem.Watch(b.r.Lo, b.r.Hi-b.r.Lo)
	b.watched = true
}

// Touched records that the guest is about to change the page at pageAddr
// (gvinst.Memory.OnWatchedWrite calls it): the buffers holding it must
// compare it at their next launch.
func (res *Resident) Touched(pageAddr uint64) {
	for _, b := range res.bufs {
		b.touch(pageAddr / gvinst.PageSize)
	}
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

// deferAll marks every page of b stale in the guest memory: the device
// holds what the kernel wrote. Other buffers holding those pages must look
// at them again (their guest bytes change without a write the memory could
// report).
func (res *Resident) deferAll(b *resBuf) error {
	for i := range b.stale {
		if b.stale[i] {
			continue
		}
		lo, hi := b.chunk(i)
		if err := res.lazyMem.Defer(lo, hi-lo); err != nil {
			return fmt.Errorf("%w: leaving [%#x,%#x) on the device: %v", ErrLostCopy, lo, hi, err)
		}
		b.stale[i] = true
		b.nstale++
		for _, o := range res.bufs {
			if o != b {
				o.touch(lo / gvinst.PageSize)
			}
		}
	}
	b.nextPage = -1
	return nil
}

// bind ties the Resident to the context and memory of its first launch.
func (res *Resident) bind(ctx gpu.Context, mem GuestMemory) error {
	if res == nil {
		return nil
	}
	if res.ctx == nil {
		res.ctx, res.mem = ctx, mem
		if dm, ok := mem.(DeferringMemory); ok && res.Lazy {
			res.lazyMem = dm
			dm.SetHolder(res)
		}
		return nil
	}
	if res.ctx != ctx || res.mem != mem {
		return errors.New("ptxgen: a Resident serves one context and one guest memory")
	}
	return nil
}

// Refresh brings back from the device every stale page of the buffers that
// hold the guest page at pageAddr (gvinst.Memory.OnStale calls it).
func (res *Resident) Refresh(pageAddr uint64) error {
	for _, b := range res.bufs {
		i, ok := b.page(pageAddr / gvinst.PageSize)
		if !ok || !b.stale[i] {
			continue
		}
		n := 1
		if i == b.nextPage {
			n = min(2*b.ahead, maxReadAhead)
		}
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

// bringBack copies pages i..j-1 of b, all stale, from the device into the
// guest.
func (res *Resident) bringBack(b *resBuf, i, j int) error {
	t0 := time.Now()
	defer func() { res.broughtT += time.Since(t0) }()
	lo, hi := b.span(i, j)
	s := b.snap[lo-b.r.Lo : hi-b.r.Lo]
	if err := res.ctx.CopyDtoH(s, b.dev+gpu.DevicePtr(lo-b.r.Lo)); err != nil {
		return fmt.Errorf("%w: copying [%#x,%#x) from the device: %v", ErrLostCopy, lo, hi, err)
	}
	mem := res.lazyMem // only a lazy Resident has stale pages
	for p := i; p < j; p++ {
		plo, phi := b.chunk(p)
		mem.Undefer(plo, phi-plo)
		b.stale[p] = false
		b.nstale--
	}
	if err := mem.Poke(lo, s); err != nil {
		return fmt.Errorf("%w: writing [%#x,%#x) back: %v", ErrLostCopy, lo, hi, err)
	}
	// The guest now holds what snap holds; the Poke reported these pages
	// changing to every buffer (others may share the edge pages).
	if b.watched {
		for p := i; p < j; p++ {
			b.dirty[p] = false
		}
		mem.Watch(lo, hi-lo)
	}
	res.broughtIn += hi - lo
	return nil
}

// BroughtBack reports the bytes Refresh and Close brought back from the
// device so far, and the time it took.
func (res *Resident) BroughtBack() (uint64, time.Duration) { return res.broughtIn, res.broughtT }

// find returns the resident buffer for exactly r, or nil.
func (res *Resident) find(r Range) *resBuf {
	if res == nil {
		return nil
	}
	for _, b := range res.bufs {
		if b.r == r {
			res.clock++
			b.used = res.clock
			return b
		}
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
	limit := res.MaxBytes
	if limit == 0 {
		limit = 1 << 30
	}
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
	res.forget(b)
	return nil
}

// forget frees b, which must have no stale page.
func (res *Resident) forget(b *resBuf) {
	for i, x := range res.bufs {
		if x == b {
			res.bufs = append(res.bufs[:i], res.bufs[i+1:]...)
			res.bytes -= b.r.Hi - b.r.Lo
			_ = res.ctx.Free(b.dev)
			return
		}
	}
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
	if res.lazyMem != nil && len(errs) == 0 {
		res.lazyMem.SetHolder(nil)
	}
	return errors.Join(errs...)
}
