package cuda

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/gxbit/gxbit/gpu"
)

// Copies between Go memory and the device go through a pinned staging
// buffer when they are large: the driver copies pageable memory through
// its own small staging area, a chunk at a time and faulting the pages in
// (1.4–1.6 GB/s host to device measured on an H100 over PCIe), where a
// DMA from page-locked memory runs at the link's speed. The buffer has two
// halves: while the device reads one (an asynchronous copy), the host
// fills the other, so gathering the Go bytes overlaps the transfer.
const (
	// stageHalf is the bytes of each half of the staging buffer.
	stageHalf = 8 << 20
	// stageMin is the smallest copy that is staged: below it, the
	// driver's own path costs less than two host copies.
	stageMin = 1 << 20
)

// staging is a context's pinned buffer (cuMemAllocHost) and the events
// that say when the device is done with each half. Touched only in
// driver calls (caller).
type staging struct {
	half [2]unsafe.Pointer
	done [2]uintptr // events recorded after the copy out of or into a half
	busy [2]bool    // an event is recorded on that half and not waited on
	// failed is set when the buffer could not be allocated: copies then
	// take the driver's pageable path.
	failed bool
}

// stage returns c's staging buffer, allocating it at the first large copy;
// nil when pinned memory is not to be had.
func (c *Context) stage() *staging {
	s := &c.staging
	if s.failed {
		return nil
	}
	if s.half[0] != nil {
		return s
	}
	var p unsafe.Pointer
	if c.l.cuMemAllocHost(&p, 2*stageHalf) != 0 || p == nil {
		s.failed = true
		return nil
	}
	for i := range s.done {
		if c.l.cuEventCreate(&s.done[i], eventDisableTiming) != 0 {
			for j := 0; j < i; j++ {
				_ = c.l.cuEventDestroy(s.done[j])
			}
			_ = c.l.cuMemFreeHost(p)
			s.failed = true
			return nil
		}
	}
	s.half[0], s.half[1] = p, unsafe.Add(p, stageHalf)
	return s
}

// eventDisableTiming is CU_EVENT_DISABLE_TIMING: the staging events only
// order work, and untimed events cost less to record and wait on.
const eventDisableTiming = 2

// wait blocks until the device is done with half i.
func (s *staging) wait(c *Context, i int) error {
	if !s.busy[i] {
		return nil
	}
	s.busy[i] = false
	return c.l.check(c.l.cuEventSynchronize(s.done[i]), "cuEventSynchronize")
}

// bytes returns half i as a Go slice of n bytes.
func (s *staging) bytes(i, n int) []byte { return unsafe.Slice((*byte)(s.half[i]), n) }

// stagedHtoD copies src to dst through the staging buffer: it fills one
// half while the device copies out of the other.
func (c *Context) stagedHtoD(s *staging, dst uint64, src []byte) error {
	const op = "cuMemcpyHtoDAsync_v2"
	h := 0
	for off := 0; off < len(src); off += stageHalf {
		n := min(stageHalf, len(src)-off)
		if err := s.wait(c, h); err != nil {
			return err
		}
		copy(s.bytes(h, n), src[off:off+n])
		if err := c.l.check(c.l.cuMemcpyHtoDAsync(dst+uint64(off), s.half[h], uint64(n), 0), op); err != nil {
			return err
		}
		if err := c.l.check(c.l.cuEventRecord(s.done[h], 0), "cuEventRecord"); err != nil {
			return err
		}
		s.busy[h] = true
		h ^= 1
	}
	// The copy is synchronous to the caller, as cuMemcpyHtoD is.
	return errors.Join(s.wait(c, 0), s.wait(c, 1))
}

// stagedDtoH copies src to dst through the staging buffer: the device
// fills one half while the host empties the other.
func (c *Context) stagedDtoH(s *staging, dst []byte, src uint64) error {
	const op = "cuMemcpyDtoHAsync_v2"
	issue := func(h, off int) error {
		n := min(stageHalf, len(dst)-off)
		if err := c.l.check(c.l.cuMemcpyDtoHAsync(s.half[h], src+uint64(off), uint64(n), 0), op); err != nil {
			return err
		}
		if err := c.l.check(c.l.cuEventRecord(s.done[h], 0), "cuEventRecord"); err != nil {
			return err
		}
		s.busy[h] = true
		return nil
	}
	if err := issue(0, 0); err != nil {
		return err
	}
	h := 0
	for off := 0; off < len(dst); off += stageHalf {
		if next := off + stageHalf; next < len(dst) {
			if err := s.wait(c, h^1); err != nil {
				return err
			}
			if err := issue(h^1, next); err != nil {
				return errors.Join(err, s.wait(c, h))
			}
		}
		if err := s.wait(c, h); err != nil {
			return errors.Join(err, s.wait(c, h^1))
		}
		n := min(stageHalf, len(dst)-off)
		copy(dst[off:off+n], s.bytes(h, n))
		h ^= 1
	}
	return nil
}

// free releases the staging buffer; c must be current.
func (s *staging) free(c *Context) {
	if s.half[0] == nil {
		return
	}
	_ = s.wait(c, 0)
	_ = s.wait(c, 1)
	for _, ev := range s.done {
		_ = c.l.cuEventDestroy(ev)
	}
	_ = c.l.cuMemFreeHost(s.half[0])
	s.half = [2]unsafe.Pointer{}
}

// AllocPinned returns n bytes of page-locked host memory
// (cuMemAllocHost_v2), valid until FreePinned or Close. Copies to and from
// it go straight to the driver: a caller that gathers the bytes it copies
// in such a buffer saves the copy through the staging buffer.
func (c *Context) AllocPinned(n uint64) ([]byte, error) {
	const op = "cuMemAllocHost_v2"
	if n == 0 {
		return nil, gpu.Errorf(gpu.ErrInvalidValue, op, "zero bytes")
	}
	var b []byte
	err := c.run(op, func() error {
		var p unsafe.Pointer
		if err := c.l.check(c.l.cuMemAllocHost(&p, n), op); err != nil {
			return fmt.Errorf("allocating %d bytes of pinned host memory: %w", n, err)
		}
		if c.pinned == nil {
			c.pinned = map[unsafe.Pointer]uint64{}
		}
		c.pinned[p] = n
		b = unsafe.Slice((*byte)(p), n)
		return nil
	})
	return b, err
}

// FreePinned releases a buffer AllocPinned returned (cuMemFreeHost).
func (c *Context) FreePinned(b []byte) error {
	const op = "cuMemFreeHost"
	return c.run(op, func() error {
		if len(b) == 0 {
			return gpu.Errorf(gpu.ErrInvalidValue, op, "an empty buffer")
		}
		p := unsafe.Pointer(&b[0])
		if _, ok := c.pinned[p]; !ok {
			return gpu.Errorf(gpu.ErrInvalidValue, op, "%p is not a pinned buffer of this context", p)
		}
		delete(c.pinned, p)
		return c.l.check(c.l.cuMemFreeHost(p), op)
	})
}

// AllocMapped returns n bytes of pinned host memory the device reaches at
// the address it also returns (cuMemHostAlloc with
// CU_MEMHOSTALLOC_DEVICEMAP, cuMemHostGetDevicePointer_v2), zeroed, valid
// until FreeMapped or Close.
func (c *Context) AllocMapped(n uint64) ([]byte, gpu.DevicePtr, error) {
	const op = "cuMemHostAlloc"
	if n == 0 {
		return nil, 0, gpu.Errorf(gpu.ErrInvalidValue, op, "zero bytes")
	}
	var b []byte
	var dev uint64
	err := c.run(op, func() error {
		if c.l.cuMemHostAlloc == nil || c.l.cuMemHostGetDevicePointer == nil {
			return gpu.Errorf(gpu.ErrNotSupported, op, "the driver library has no mapped host memory")
		}
		var p unsafe.Pointer
		if err := c.l.check(c.l.cuMemHostAlloc(&p, n, memHostAllocDeviceMap), op); err != nil {
			return fmt.Errorf("allocating %d bytes of mapped host memory: %w", n, err)
		}
		if err := c.l.check(c.l.cuMemHostGetDevicePointer(&dev, p, 0), "cuMemHostGetDevicePointer_v2"); err != nil {
			_ = c.l.cuMemFreeHost(p)
			return err
		}
		if c.pinned == nil {
			c.pinned = map[unsafe.Pointer]uint64{}
		}
		c.pinned[p] = n
		b = unsafe.Slice((*byte)(p), n)
		clear(b)
		return nil
	})
	return b, gpu.DevicePtr(dev), err
}

// FreeMapped releases a buffer AllocMapped returned (cuMemFreeHost).
func (c *Context) FreeMapped(b []byte) error { return c.FreePinned(b) }

// isPinned reports whether b lies inside one AllocPinned buffer. It runs
// in a driver call.
func (c *Context) isPinned(b []byte) bool {
	if len(c.pinned) == 0 || len(b) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(&b[0]))
	for base, n := range c.pinned {
		if p >= uintptr(base) && uint64(p-uintptr(base))+uint64(len(b)) <= n {
			return true
		}
	}
	return false
}

// freeAllPinned releases every AllocPinned buffer; it runs in the
// driver call that closes the context.
func (c *Context) freeAllPinned() {
	for p := range c.pinned {
		_ = c.l.cuMemFreeHost(p)
	}
	c.pinned = nil
}
