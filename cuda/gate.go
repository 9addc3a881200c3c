package cuda

import (
	"sync/atomic"
	"time"
	"unsafe"
)

// A launch's kernel time is what the device spends running it: the two
// timing events are recorded on the stream right before and after the
// kernel. On an idle stream, though, the device reaches the start event
// as soon as it is queued, and then waits for the host to submit the
// kernel (cuLaunchKernel's own work, microseconds), so the pair would
// time the submission too: about 10 us a launch, the whole gap between
// a 1,200-launch stencil's kernels and a CUDA C program's, whose
// back-to-back launches keep the stream busy and never show it.
//
// The gate holds the stream while the launch is queued: a wait on a word
// of pinned host memory (cuStreamWaitValue32) goes in first, then the
// start event, the kernel and the stop event, and the host then writes
// the word. The device reaches the start event with the kernel already
// queued behind it, as in a busy stream.
//
// A wait the host never releases would hold the stream for good, and a
// driver call that synchronises the context while the gate is shut (one
// growing the local memory for a kernel's first launch, say) would wait
// for it: every function's first launch goes ungated, and a timer opens
// the gate after gateTimeout whatever the driver calls do. Without
// the driver's stream memory operations (an older libcuda.so.1) or pinned
// memory, launches go ungated and time their submission as before.
type gate struct {
	word unsafe.Pointer // the pinned host word the stream waits on
	dev  uint64         // its device address
	next uint32         // the value the next wait is for
	// off says the gate is not to be used: not set up yet (tried at the
	// first launch), or not available.
	off, tried bool
}

// gateTimeout bounds how long a wait holds the stream when no driver call
// can open it (one blocked on the held stream).
const gateTimeout = 50 * time.Millisecond

// memHostAllocDeviceMap is CU_MEMHOSTALLOC_DEVICEMAP: pinned host memory
// the device can read.
const memHostAllocDeviceMap = 0x02

// streamWaitValueGEQ is CU_STREAM_WAIT_VALUE_GEQ: wait until
// (int32)(*addr - value) >= 0, which survives the counter's wrap.
const streamWaitValueGEQ = 0x0

// ready sets the gate up at its first use and reports whether it can be
// used. It runs in a driver call.
func (g *gate) ready(c *Context) bool {
	if g.tried {
		return !g.off
	}
	g.tried, g.off = true, true
	l := c.l
	if l.cuStreamWaitValue32 == nil || l.cuMemHostAlloc == nil || l.cuMemHostGetDevicePointer == nil {
		return false
	}
	var p unsafe.Pointer
	if l.cuMemHostAlloc(&p, 64, memHostAllocDeviceMap) != 0 || p == nil {
		return false
	}
	var dev uint64
	if l.cuMemHostGetDevicePointer(&dev, p, 0) != 0 || dev == 0 {
		_ = l.cuMemFreeHost(p)
		return false
	}
	atomic.StoreUint32((*uint32)(p), 0)
	g.word, g.dev, g.next, g.off = p, dev, 1, false
	return true
}

// shut queues a wait on the gate on the default stream and returns the
// function that opens it again, which the caller must call once the
// launch is queued; nil when the stream could not be held (the gate is
// then off for good).
func (g *gate) shut(c *Context) (open func()) {
	want := g.next
	if c.l.cuStreamWaitValue32(0, g.dev, want, streamWaitValueGEQ) != 0 {
		g.off = true
		return nil
	}
	g.next++
	word := (*uint32)(g.word)
	release := func() {
		// The word only grows (modulo the wrap the wait's compare
		// allows for): a late timer must not take it back below a
		// later launch's value.
		for {
			cur := atomic.LoadUint32(word)
			if int32(cur-want) >= 0 || atomic.CompareAndSwapUint32(word, cur, want) {
				return
			}
		}
	}
	fired := make(chan struct{})
	t := time.AfterFunc(gateTimeout, func() {
		release()
		close(fired)
	})
	return func() {
		if !t.Stop() {
			<-fired // the word is written before the caller goes on
		}
		release()
	}
}

// free releases the gate's pinned word, once the device has read it for
// the last time (every wait queued is open, but the device may not have
// reached the last one). It runs in a driver call.
func (g *gate) free(c *Context) {
	if g.word != nil {
		_ = c.l.cuCtxSynchronize()
		_ = c.l.cuMemFreeHost(g.word)
		g.word = nil
	}
	g.off = true
}
