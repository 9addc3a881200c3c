package gputest

import (
	"fmt"
	"sync"

	"github.com/gxbit/gxbit/gpu"
)

// Counts are the calls a Counting context passed on, by kind.
type Counts struct {
	// Syncs are Synchronize calls; Launches, kernel launches.
	Syncs, Launches int
	// CopiesHtoD, CopiesDtoH and CopiesDtoD are synchronous copies;
	// Batches, batches of copies (gpu.BatchCopier), each one call that
	// waits.
	CopiesHtoD, CopiesDtoH, CopiesDtoD, Batches int
	// QueuedHtoD, QueuedDtoH and QueuedDtoD are copies queued on the
	// stream (CopyHtoDAsync, …); QueuedBatches, queued batches
	// (gpu.BatchQueuer). None of them waits.
	QueuedHtoD, QueuedDtoH, QueuedDtoD, QueuedBatches int
	Memsets, Allocs, Frees                            int
}

// Waits is the calls that waited for the device: Synchronize, the
// synchronous copies to and from the host, and batches.
func (c Counts) Waits() int { return c.Syncs + c.CopiesHtoD + c.CopiesDtoH + c.Batches }

// Queued is the copies queued without waiting, a batch counting once.
func (c Counts) Queued() int { return c.QueuedHtoD + c.QueuedDtoH + c.QueuedDtoD + c.QueuedBatches }

// Sub returns the counts of c less those of o: the calls made between two
// readings.
func (c Counts) Sub(o Counts) Counts {
	return Counts{
		Syncs: c.Syncs - o.Syncs, Launches: c.Launches - o.Launches,
		CopiesHtoD: c.CopiesHtoD - o.CopiesHtoD, CopiesDtoH: c.CopiesDtoH - o.CopiesDtoH, CopiesDtoD: c.CopiesDtoD - o.CopiesDtoD, Batches: c.Batches - o.Batches,
		QueuedHtoD: c.QueuedHtoD - o.QueuedHtoD, QueuedDtoH: c.QueuedDtoH - o.QueuedDtoH, QueuedDtoD: c.QueuedDtoD - o.QueuedDtoD, QueuedBatches: c.QueuedBatches - o.QueuedBatches,
		Memsets: c.Memsets - o.Memsets, Allocs: c.Allocs - o.Allocs, Frees: c.Frees - o.Frees,
	}
}

// String lists the counts that are not zero.
func (c Counts) String() string {
	return fmt.Sprintf("%d syncs, %d launches; waiting copies %d in, %d out, %d on the device, %d batches; queued %d in, %d out, %d on the device, %d batches; %d memsets, %d allocs, %d frees",
		c.Syncs, c.Launches, c.CopiesHtoD, c.CopiesDtoH, c.CopiesDtoD, c.Batches, c.QueuedHtoD, c.QueuedDtoH, c.QueuedDtoD, c.QueuedBatches, c.Memsets, c.Allocs, c.Frees)
}

// Counting is a gpu.Context that counts the calls made through it
// (Counts), for tests that hold a caller to how many driver calls, and
// how many waits for the device, its work takes. It offers the optional
// interfaces (gpu.BatchCopier, gpu.BatchQueuer, gpu.MappedAllocator,
// gpu.PinnedAllocator) and passes each on to the context under it; where
// that lacks one, a batch runs a copy at a time (counted as such) and an
// allocation of mapped or pinned memory fails with ErrNotSupported, as a
// caller that asks expects of a context without them.
type Counting struct {
	gpu.Context
	mu sync.Mutex
	n  Counts
}

// NewCounting returns a Counting context over ctx.
func NewCounting(ctx gpu.Context) *Counting { return &Counting{Context: ctx} }

// Counts returns the calls counted so far.
func (c *Counting) Counts() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// count adds one to the count f selects.
func (c *Counting) count(f func(*Counts) *int) {
	c.mu.Lock()
	*f(&c.n)++
	c.mu.Unlock()
}

// Alloc implements gpu.Context.
func (c *Counting) Alloc(n uint64) (gpu.DevicePtr, error) {
	c.count(func(n *Counts) *int { return &n.Allocs })
	return c.Context.Alloc(n)
}

// Free implements gpu.Context.
func (c *Counting) Free(p gpu.DevicePtr) error {
	c.count(func(n *Counts) *int { return &n.Frees })
	return c.Context.Free(p)
}

// CopyHtoD implements gpu.Context.
func (c *Counting) CopyHtoD(dst gpu.DevicePtr, src []byte) error {
	c.count(func(n *Counts) *int { return &n.CopiesHtoD })
	return c.Context.CopyHtoD(dst, src)
}

// CopyDtoH implements gpu.Context.
func (c *Counting) CopyDtoH(dst []byte, src gpu.DevicePtr) error {
	c.count(func(n *Counts) *int { return &n.CopiesDtoH })
	return c.Context.CopyDtoH(dst, src)
}

// CopyDtoD implements gpu.Context.
func (c *Counting) CopyDtoD(dst, src gpu.DevicePtr, n uint64) error {
	c.count(func(n *Counts) *int { return &n.CopiesDtoD })
	return c.Context.CopyDtoD(dst, src, n)
}

// CopyHtoDAsync implements gpu.Context.
func (c *Counting) CopyHtoDAsync(dst gpu.DevicePtr, src []byte) error {
	c.count(func(n *Counts) *int { return &n.QueuedHtoD })
	return c.Context.CopyHtoDAsync(dst, src)
}

// CopyDtoHAsync implements gpu.Context.
func (c *Counting) CopyDtoHAsync(dst []byte, src gpu.DevicePtr) error {
	c.count(func(n *Counts) *int { return &n.QueuedDtoH })
	return c.Context.CopyDtoHAsync(dst, src)
}

// CopyDtoDAsync implements gpu.Context.
func (c *Counting) CopyDtoDAsync(dst, src gpu.DevicePtr, n uint64) error {
	c.count(func(n *Counts) *int { return &n.QueuedDtoD })
	return c.Context.CopyDtoDAsync(dst, src, n)
}

// Memset implements gpu.Context.
func (c *Counting) Memset(dst gpu.DevicePtr, b byte, n uint64) error {
	c.count(func(n *Counts) *int { return &n.Memsets })
	return c.Context.Memset(dst, b, n)
}

// Launch implements gpu.Context.
func (c *Counting) Launch(f gpu.Function, cfg gpu.LaunchConfig, params [][]byte) error {
	c.count(func(n *Counts) *int { return &n.Launches })
	return c.Context.Launch(f, cfg, params)
}

// Synchronize implements gpu.Context.
func (c *Counting) Synchronize() error {
	c.count(func(n *Counts) *int { return &n.Syncs })
	return c.Context.Synchronize()
}

// CopyBatch implements gpu.BatchCopier: one batch where the context under
// c runs them, else a synchronous copy at a time.
func (c *Counting) CopyBatch(copies []gpu.Copy) error {
	if bc, ok := c.Context.(gpu.BatchCopier); ok {
		c.count(func(n *Counts) *int { return &n.Batches })
		return bc.CopyBatch(copies)
	}
	for i, cp := range copies {
		var err error
		if cp.FromDevice {
			err = c.CopyDtoH(cp.Host, cp.Dev)
		} else {
			err = c.CopyHtoD(cp.Dev, cp.Host)
		}
		if err != nil {
			return fmt.Errorf("copy %d of %d: %w", i, len(copies), err)
		}
	}
	return nil
}

// QueueBatch implements gpu.BatchQueuer: one queued batch where the
// context under c queues them, else a queued copy at a time.
func (c *Counting) QueueBatch(copies []gpu.Copy) error {
	if bq, ok := c.Context.(gpu.BatchQueuer); ok {
		c.count(func(n *Counts) *int { return &n.QueuedBatches })
		return bq.QueueBatch(copies)
	}
	for i, cp := range copies {
		var err error
		if cp.FromDevice {
			err = c.CopyDtoHAsync(cp.Host, cp.Dev)
		} else {
			err = c.CopyHtoDAsync(cp.Dev, cp.Host)
		}
		if err != nil {
			return fmt.Errorf("copy %d of %d: %w", i, len(copies), err)
		}
	}
	return nil
}

// AllocMapped implements gpu.MappedAllocator.
func (c *Counting) AllocMapped(n uint64) ([]byte, gpu.DevicePtr, error) {
	if ma, ok := c.Context.(gpu.MappedAllocator); ok {
		return ma.AllocMapped(n)
	}
	return nil, 0, gpu.Errorf(gpu.ErrNotSupported, "cuMemHostAlloc", "the context under the counter maps no host memory")
}

// FreeMapped implements gpu.MappedAllocator.
func (c *Counting) FreeMapped(b []byte) error {
	if ma, ok := c.Context.(gpu.MappedAllocator); ok {
		return ma.FreeMapped(b)
	}
	return gpu.Errorf(gpu.ErrNotSupported, "cuMemFreeHost", "the context under the counter maps no host memory")
}

// AllocPinned implements gpu.PinnedAllocator.
func (c *Counting) AllocPinned(n uint64) ([]byte, error) {
	if pa, ok := c.Context.(gpu.PinnedAllocator); ok {
		return pa.AllocPinned(n)
	}
	return nil, gpu.Errorf(gpu.ErrNotSupported, "cuMemAllocHost", "the context under the counter pins no host memory")
}

// FreePinned implements gpu.PinnedAllocator.
func (c *Counting) FreePinned(b []byte) error {
	if pa, ok := c.Context.(gpu.PinnedAllocator); ok {
		return pa.FreePinned(b)
	}
	return gpu.Errorf(gpu.ErrNotSupported, "cuMemFreeHost", "the context under the counter pins no host memory")
}

var (
	_ gpu.Context         = (*Counting)(nil)
	_ gpu.BatchCopier     = (*Counting)(nil)
	_ gpu.BatchQueuer     = (*Counting)(nil)
	_ gpu.MappedAllocator = (*Counting)(nil)
	_ gpu.PinnedAllocator = (*Counting)(nil)
)
