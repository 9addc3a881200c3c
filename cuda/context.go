package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/gxbit/gxbit/gpu"
)

// CUjit_option values (cuda.h): the JIT's error log, and its
// optimization level (Options.JITLevel).
const (
	jitErrorLogBuffer     = 5
	jitErrorLogBufferSize = 6
	jitOptimizationLevel  = 7
)

// jitLogBytes is the size of the buffer that receives the JIT error log.
const jitLogBytes = 16 << 10

// Context is a CUDA context (CUcontext) on one device. Its methods may be
// called from any goroutine; they run one at a time (the driver's
// caller), but for LoadModule, which compiles beside them (see jits).
type Context struct {
	d *Driver
	l *lib
	h uintptr

	// jits holds a token for each compile under way, jitThreads at most
	// (made at LoadModule's first call). The CUDA JIT takes about 0.1 s
	// a module: one at a time with the other calls, it held up every
	// copy and launch asked for behind it (a caller loading modules
	// ahead, while it copies and launches others, waited for them all).
	// life guards the context's destruction against a compile
	// under way (read-locked by LoadModule, write-locked by Close).
	jitOnce sync.Once
	jits    chan struct{}
	life    sync.RWMutex

	// Fields below are touched only in calls of the driver's caller,
	// but closed, which Close sets in one holding life, and LoadModule
	// reads holding life.
	closed bool
	// allocs maps each live allocation's base to its size, for the range
	// checks of copies, memsets and frees.
	allocs map[gpu.DevicePtr]uint64
	// statStart and statStop time the most recent launch.
	statStart, statStop uintptr
	pending             bool   // a launch was recorded and its time not read yet
	pendingKernel       string // the kernel of that launch
	pendingSubmit       time.Duration
	gate                gate // holds the stream while a launch is queued
	stats               gpu.LaunchStats
	staging             staging // the pinned buffer large copies go through
	// unstaged makes every copy take the driver's pageable path (the
	// benchmark's baseline).
	unstaged bool
	// pinned maps the base of each AllocPinned buffer to its size.
	pinned map[unsafe.Pointer]uint64
}

var (
	_ gpu.Context         = (*Context)(nil)
	_ gpu.PinnedAllocator = (*Context)(nil)
	_ gpu.BatchCopier     = (*Context)(nil)
	_ gpu.BatchQueuer     = (*Context)(nil)
	_ gpu.MappedAllocator = (*Context)(nil)
)

// initStatsEvents creates the two events that time launches. It runs in a
// driver call with c current.
func (c *Context) initStatsEvents() error {
	if err := c.l.check(c.l.cuEventCreate(&c.statStart, 0), "cuEventCreate"); err != nil {
		return err
	}
	if err := c.l.check(c.l.cuEventCreate(&c.statStop, 0), "cuEventCreate"); err != nil {
		_ = c.l.cuEventDestroy(c.statStart)
		return err
	}
	return nil
}

// run executes f in a driver call with c current, or reports why it cannot.
func (c *Context) run(op string, f func() error) error {
	var err error
	c.d.call(op, func() {
		if c.closed {
			err = gpu.Errorf(gpu.ErrInvalidContext, op, "context has been closed")
			return
		}
		// The call runs on the caller's thread, which may have run
		// another context's calls or none (caller).
		if e := c.l.check(c.l.cuCtxSetCurrent(c.h), "cuCtxSetCurrent"); e != nil {
			err = e
			return
		}
		err = f()
	})
	return err
}

// span reports whether [p, p+n) lies inside one live allocation.
func (c *Context) span(p gpu.DevicePtr, n uint64) bool {
	for base, size := range c.allocs {
		if p >= base && uint64(p-base) <= size && n <= size-uint64(p-base) {
			return true
		}
	}
	return false
}

// checkSpan returns a CUDA_ERROR_INVALID_VALUE error for op when [p, p+n)
// leaves every live allocation.
func (c *Context) checkSpan(op string, p gpu.DevicePtr, n uint64) error {
	if c.span(p, n) {
		return nil
	}
	return gpu.Errorf(gpu.ErrInvalidValue, op, "range [%#x, %#x+%d) is not inside one allocation of this context", uint64(p), uint64(p), n)
}

// LoadParallelism is how many modules LoadModule compiles at once, from as
// many goroutines (Options.JITThreads, or defaultJITThreads where the
// library links).
func (c *Context) LoadParallelism() int { return c.jitThreads() }

// jitThreads is how many compiles may run at once: Options.JITThreads,
// else defaultJITThreads where the driver's linker compiles (beside the
// other calls and beside each other), else one.
func (c *Context) jitThreads() int {
	if n := c.d.opts.JITThreads; n > 0 {
		return n
	}
	if c.l.canLink() {
		return defaultJITThreads()
	}
	return 1
}

// defaultJITThreads is how many modules compile at once by default where
// the library links: four, leaving a core to the guest and one to the
// background translation. On an H100 host the linker compiled twelve
// modules in 0.16-0.18 s four at a time, in 0.57-0.62 s one at a time
// (BenchmarkJITBeside).
func defaultJITThreads() int { return max(1, min(4, runtime.NumCPU()-2)) }

// LoadModule compiles PTX text and loads it. Where the library has the
// driver's linker (cuLinkCreate, cuLinkAddData, cuLinkComplete) the PTX
// is compiled to a cubin by it, outside the driver's serialised calls,
// and then the cubin is loaded in one (cuModuleLoadDataEx of the image,
// about 1.3 ms): on an H100, copies asked for while the linker compiled
// ran as they do alone (BenchmarkJITBeside: at most 0.4-0.6 ms each),
// where a compile by cuModuleLoadDataEx held every call of the process
// until it ended (copies of 4 MiB waited up to 126 ms). Without the
// linker, cuModuleLoadDataEx compiles the PTX in the driver's quiet
// spells (quiet.go). When the compiler rejects the PTX, the error carries
// the library's code (CUDA_ERROR_INVALID_PTX for bad PTX) and the
// compiler's log, which names the offending line.
func (c *Context) LoadModule(ptx string) (gpu.Module, error) {
	c.life.RLock()
	defer c.life.RUnlock()
	if c.closed {
		return nil, gpu.Errorf(gpu.ErrInvalidContext, "cuModuleLoadDataEx", "context has been closed")
	}
	c.jitOnce.Do(func() {
		c.jits = make(chan struct{}, c.jitThreads())
	})
	asked := time.Now()
	linking := c.l.canLink()
	if !linking {
		c.d.w.waitIdle(jitQuiet) // quiet.go
	}
	var m *Module
	var img []byte
	var err error
	func() {
		c.jits <- struct{}{}
		defer func() { <-c.jits }()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if c.d.trace != nil {
			op := "cuModuleLoadDataEx"
			if linking {
				op = "cuLinkComplete"
			}
			defer c.d.trace.record("jit", op, asked, time.Now())
		}
		if err = c.l.check(c.l.cuCtxSetCurrent(c.h), "cuCtxSetCurrent"); err != nil {
			return
		}
		if linking {
			img, err = c.l.link(ptx, c.d.opts.JITLevel)
			return
		}
		err = c.compile(ptx, &m)
	}()
	if err != nil {
		return nil, err
	}
	if linking {
		err = c.run("cuModuleLoadDataEx", func() (err error) {
			m, err = c.loadImage(img, ptx)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

// compile runs cuModuleLoadDataEx on ptx with c current, and sets *m.
func (c *Context) compile(ptx string, m **Module) error {
	in := newJITInput(ptx, c.d.opts.JITLevel)
	defer in.unpin()
	var h uintptr
	if r := c.l.cuModuleLoadDataEx(&h, in.image(), in.n(), in.opts(), in.vals()); r != 0 {
		return in.fail(c.l, r, "cuModuleLoadDataEx")
	}
	*m = &Module{c: c, h: h, ptx: ptx}
	return nil
}

// Alloc allocates n bytes of device memory (cuMemAlloc_v2).
func (c *Context) Alloc(n uint64) (gpu.DevicePtr, error) {
	var p uint64
	err := c.run("cuMemAlloc_v2", func() error {
		if err := c.l.check(c.l.cuMemAlloc(&p, n), "cuMemAlloc_v2"); err != nil {
			return fmt.Errorf("allocating %d bytes: %w", n, err)
		}
		c.allocs[gpu.DevicePtr(p)] = n
		return nil
	})
	return gpu.DevicePtr(p), err
}

// Free releases an allocation (cuMemFree_v2). A pointer that is not the base
// of a live allocation of this context yields CUDA_ERROR_INVALID_VALUE.
func (c *Context) Free(p gpu.DevicePtr) error {
	return c.run("cuMemFree_v2", func() error {
		if _, ok := c.allocs[p]; !ok {
			return gpu.Errorf(gpu.ErrInvalidValue, "cuMemFree_v2", "%#x is not an allocation of this context", uint64(p))
		}
		if err := c.l.check(c.l.cuMemFree(uint64(p)), "cuMemFree_v2"); err != nil {
			return err
		}
		delete(c.allocs, p)
		return nil
	})
}

// CopyHtoD copies src to device memory at dst (cuMemcpyHtoD_v2).
func (c *Context) CopyHtoD(dst gpu.DevicePtr, src []byte) error {
	return c.run("cuMemcpyHtoD_v2", func() error { return c.htod(dst, src) })
}

// htod is CopyHtoD, in a driver call.
func (c *Context) htod(dst gpu.DevicePtr, src []byte) error {
	const op = "cuMemcpyHtoD_v2"
	if len(src) == 0 {
		return nil
	}
	if err := c.checkSpan(op, dst, uint64(len(src))); err != nil {
		return err
	}
	if len(src) >= stageMin && !c.unstaged && !c.isPinned(src) {
		if s := c.stage(); s != nil {
			return c.stagedHtoD(s, uint64(dst), src)
		}
	}
	return c.l.check(c.l.cuMemcpyHtoD(uint64(dst), unsafe.Pointer(&src[0]), uint64(len(src))), op)
}

// CopyDtoH copies len(dst) bytes from device memory at src (cuMemcpyDtoH_v2).
func (c *Context) CopyDtoH(dst []byte, src gpu.DevicePtr) error {
	return c.run("cuMemcpyDtoH_v2", func() error { return c.dtoh(dst, src) })
}

// dtoh is CopyDtoH, in a driver call.
func (c *Context) dtoh(dst []byte, src gpu.DevicePtr) error {
	const op = "cuMemcpyDtoH_v2"
	if len(dst) == 0 {
		return nil
	}
	if err := c.checkSpan(op, src, uint64(len(dst))); err != nil {
		return err
	}
	if len(dst) >= stageMin && !c.unstaged && !c.isPinned(dst) {
		if s := c.stage(); s != nil {
			return c.stagedDtoH(s, dst, uint64(src))
		}
	}
	return c.l.check(c.l.cuMemcpyDtoH(unsafe.Pointer(&dst[0]), uint64(src), uint64(len(dst))), op)
}

// CopyHtoDAsync queues a copy of src to device memory at dst on the
// context's stream (cuMemcpyHtoDAsync_v2). Only a copy from pinned memory
// (AllocPinned's) is queued; one from Go memory runs as CopyHtoD does,
// before the call returns (the driver would copy it to staging of its
// own first anyway, and Go memory may not be handed to it past the call).
func (c *Context) CopyHtoDAsync(dst gpu.DevicePtr, src []byte) error {
	const op = "cuMemcpyHtoDAsync_v2"
	return c.run(op, func() error {
		if len(src) == 0 {
			return nil
		}
		if err := c.checkSpan(op, dst, uint64(len(src))); err != nil {
			return err
		}
		if c.unstaged || !c.isPinned(src) {
			return c.htod(dst, src)
		}
		return c.l.check(c.l.cuMemcpyHtoDAsync(uint64(dst), unsafe.Pointer(&src[0]), uint64(len(src)), 0), op)
	})
}

// CopyDtoHAsync queues a copy of device memory at src into dst on the
// context's stream (cuMemcpyDtoHAsync_v2), when dst is pinned memory;
// into Go memory it runs as CopyDtoH does, waiting for the stream's work
// before it (it is ordered after it all the same).
func (c *Context) CopyDtoHAsync(dst []byte, src gpu.DevicePtr) error {
	const op = "cuMemcpyDtoHAsync_v2"
	return c.run(op, func() error {
		if len(dst) == 0 {
			return nil
		}
		if err := c.checkSpan(op, src, uint64(len(dst))); err != nil {
			return err
		}
		if c.unstaged || !c.isPinned(dst) {
			return c.dtoh(dst, src)
		}
		return c.l.check(c.l.cuMemcpyDtoHAsync(unsafe.Pointer(&dst[0]), uint64(src), uint64(len(dst)), 0), op)
	})
}

// CopyDtoDAsync queues a copy of n bytes between device allocations on
// the context's stream (cuMemcpyDtoDAsync_v2).
func (c *Context) CopyDtoDAsync(dst, src gpu.DevicePtr, n uint64) error {
	const op = "cuMemcpyDtoDAsync_v2"
	return c.run(op, func() error {
		if n == 0 {
			return nil
		}
		if err := c.checkSpan(op, dst, n); err != nil {
			return err
		}
		if err := c.checkSpan(op, src, n); err != nil {
			return err
		}
		return c.l.check(c.l.cuMemcpyDtoDAsync(uint64(dst), uint64(src), n, 0), op)
	})
}

// CopyBatch implements gpu.BatchCopier in one driver call: the
// copies from and to pinned memory (AllocPinned's) are queued on the
// stream (cuMemcpyHtoDAsync_v2, cuMemcpyDtoHAsync_v2) and waited for
// once, at the end (cuCtxSynchronize); the others take CopyHtoD's and
// CopyDtoH's paths, which wait for what was queued before them.
func (c *Context) CopyBatch(copies []gpu.Copy) error {
	const op = "cuMemcpyAsync_v2"
	return c.run(op, func() error {
		queued, err := c.queueCopies(op, copies)
		if queued {
			err = errors.Join(err, c.l.check(c.l.cuCtxSynchronize(), "cuCtxSynchronize"))
		}
		return err
	})
}

// QueueBatch implements gpu.BatchQueuer in one driver call: the
// copies from and to pinned memory are queued on the stream
// (cuMemcpyHtoDAsync_v2, cuMemcpyDtoHAsync_v2); the others take
// CopyHtoD's and CopyDtoH's paths, which wait for what was queued before
// them and for themselves.
func (c *Context) QueueBatch(copies []gpu.Copy) error {
	const op = "cuMemcpyAsync_v2"
	return c.run(op, func() error {
		_, err := c.queueCopies(op, copies)
		return err
	})
}

// queueCopies is CopyBatch's and QueueBatch's work, in a driver call: it
// queues the copies from and to pinned memory on the stream and runs the
// others, in order, up to the first that fails (its error names it), and
// reports whether it queued any.
func (c *Context) queueCopies(op string, copies []gpu.Copy) (queued bool, err error) {
	for i, cp := range copies {
		n := uint64(len(cp.Host))
		if n == 0 {
			continue
		}
		switch pinned := !c.unstaged && c.isPinned(cp.Host); {
		case !pinned && cp.FromDevice:
			err = c.dtoh(cp.Host, cp.Dev)
		case !pinned:
			err = c.htod(cp.Dev, cp.Host)
		default:
			if err = c.checkSpan(op, cp.Dev, n); err != nil {
				break
			}
			if cp.FromDevice {
				err = c.l.check(c.l.cuMemcpyDtoHAsync(unsafe.Pointer(&cp.Host[0]), uint64(cp.Dev), n, 0), "cuMemcpyDtoHAsync_v2")
			} else {
				err = c.l.check(c.l.cuMemcpyHtoDAsync(uint64(cp.Dev), unsafe.Pointer(&cp.Host[0]), n, 0), "cuMemcpyHtoDAsync_v2")
			}
			queued = true
		}
		if err != nil {
			return queued, fmt.Errorf("copy %d of %d: %w", i, len(copies), err)
		}
	}
	return queued, nil
}

// CopyDtoD copies n bytes between device allocations (cuMemcpyDtoD_v2).
func (c *Context) CopyDtoD(dst, src gpu.DevicePtr, n uint64) error {
	const op = "cuMemcpyDtoD_v2"
	return c.run(op, func() error {
		if n == 0 {
			return nil
		}
		if err := c.checkSpan(op, dst, n); err != nil {
			return err
		}
		if err := c.checkSpan(op, src, n); err != nil {
			return err
		}
		return c.l.check(c.l.cuMemcpyDtoD(uint64(dst), uint64(src), n), op)
	})
}

// Memset sets n bytes at dst to b (cuMemsetD8_v2).
func (c *Context) Memset(dst gpu.DevicePtr, b byte, n uint64) error {
	const op = "cuMemsetD8_v2"
	return c.run(op, func() error {
		if n == 0 {
			return nil
		}
		if err := c.checkSpan(op, dst, n); err != nil {
			return err
		}
		return c.l.check(c.l.cuMemsetD8(uint64(dst), b, n), op)
	})
}

// Launch starts f (cuLaunchKernel) on the context's default stream. The
// parameters must match the kernel's .entry declaration in number and size,
// else the launch is refused with CUDA_ERROR_INVALID_VALUE. Launch returns
// once the kernel is queued; Synchronize reports failures of the kernel.
func (c *Context) Launch(fn gpu.Function, cfg gpu.LaunchConfig, params [][]byte) error {
	const op = "cuLaunchKernel"
	f, ok := fn.(*Function)
	if !ok || f == nil {
		return gpu.Errorf(gpu.ErrInvalidHandle, op, "function %T does not come from the cuda driver", fn)
	}
	if f.m.c != c {
		return gpu.Errorf(gpu.ErrInvalidHandle, op, "function %s belongs to another context", f.name)
	}
	if len(params) != len(f.params) {
		return gpu.Errorf(gpu.ErrInvalidValue, op, "kernel %s takes %d parameters, got %d", f.name, len(f.params), len(params))
	}
	// Lay the parameters out in one 8-byte-aligned buffer and point at each.
	words := 0
	for i, p := range params {
		if len(p) != f.params[i].Size {
			return gpu.Errorf(gpu.ErrInvalidValue, op, "kernel %s parameter %d (%s) is %d bytes, got %d", f.name, i, f.params[i].Name, f.params[i].Size, len(p))
		}
		words += (len(p) + 7) / 8
	}
	buf := make([]uint64, words+1)
	ptrs := make([]unsafe.Pointer, len(params)+1)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*8)
	off := 0
	for i, p := range params {
		copy(raw[off:], p)
		ptrs[i] = unsafe.Pointer(&raw[off])
		off += (len(p) + 7) / 8 * 8
	}
	called := time.Now()
	return c.run(op, func() error {
		if f.m.unloaded {
			return gpu.Errorf(gpu.ErrInvalidHandle, op, "module of function %s has been unloaded", f.name)
		}
		var pin runtime.Pinner
		pin.Pin(&buf[0])
		pin.Pin(&ptrs[0])
		defer pin.Unpin()
		var kp unsafe.Pointer
		if len(params) > 0 {
			kp = unsafe.Pointer(&ptrs[0])
		}
		// The stream is held while the events and the kernel are
		// queued, so that the events time the kernel and not its
		// submission (gate.go).
		if f.launched && c.gate.ready(c) {
			if open := c.gate.shut(c); open != nil {
				defer open()
			}
		}
		if err := c.l.check(c.l.cuEventRecord(c.statStart, 0), "cuEventRecord"); err != nil {
			return err
		}
		r := c.l.cuLaunchKernel(f.h, cfg.Grid.X, cfg.Grid.Y, cfg.Grid.Z, cfg.Block.X, cfg.Block.Y, cfg.Block.Z, cfg.SharedBytes, 0, kp, nil)
		if r != 0 {
			return c.l.wrap(r, op, fmt.Sprintf("kernel %s grid %s block %s shared %d", f.name, cfg.Grid, cfg.Block, cfg.SharedBytes))
		}
		c.pendingSubmit = time.Since(called)
		f.launched = true
		if err := c.l.check(c.l.cuEventRecord(c.statStop, 0), "cuEventRecord"); err != nil {
			return err
		}
		c.pending = true
		c.pendingKernel = f.name
		return nil
	})
}

// finishStats reads the time of the pending launch, whose stop event has
// completed. It runs in a driver call.
func (c *Context) finishStats() error {
	if !c.pending {
		return nil
	}
	c.pending = false
	var ms float32
	if err := c.l.check(c.l.cuEventElapsedTime(&ms, c.statStart, c.statStop), "cuEventElapsedTime"); err != nil {
		return err
	}
	c.stats = gpu.LaunchStats{Kernel: c.pendingKernel, Duration: msToDuration(ms), Submit: c.pendingSubmit}
	return nil
}

// Synchronize waits for all work in the context (cuCtxSynchronize) and
// reports a failure of a kernel, such as CUDA_ERROR_ILLEGAL_ADDRESS.
func (c *Context) Synchronize() error {
	return c.run("cuCtxSynchronize", func() error {
		if err := c.l.check(c.l.cuCtxSynchronize(), "cuCtxSynchronize"); err != nil {
			c.pending = false
			return err
		}
		return c.finishStats()
	})
}

// LastLaunchStats reports the kernel name, duration and submission time of
// the most recent completed launch, waiting for it if needed. The
// instruction counters stay zero: the hardware driver does not count them.
func (c *Context) LastLaunchStats() gpu.LaunchStats {
	var s gpu.LaunchStats
	_ = c.run("cuEventSynchronize", func() error {
		if c.pending {
			if c.l.cuEventSynchronize(c.statStop) != 0 {
				c.pending = false
			} else {
				_ = c.finishStats()
			}
		}
		s = c.stats
		return nil
	})
	return s
}

// NewEvent creates a timing event (cuEventCreate).
func (c *Context) NewEvent() (gpu.Event, error) {
	var e *Event
	err := c.run("cuEventCreate", func() error {
		var h uintptr
		if err := c.l.check(c.l.cuEventCreate(&h, 0), "cuEventCreate"); err != nil {
			return err
		}
		e = &Event{c: c, h: h}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// Close destroys the context and everything it owns (cuCtxDestroy_v2).
func (c *Context) Close() error {
	c.life.Lock()
	defer c.life.Unlock()
	return c.run("cuCtxDestroy_v2", func() error {
		c.freeAllPinned()
		_ = c.l.cuEventDestroy(c.statStart)
		_ = c.l.cuEventDestroy(c.statStop)
		c.staging.free(c)
		c.gate.free(c)
		r := c.l.cuCtxDestroy(c.h)
		c.closed = true
		c.allocs = nil
		return c.l.check(r, "cuCtxDestroy_v2")
	})
}

// msToDuration converts cuEventElapsedTime's milliseconds to a Duration.
func msToDuration(ms float32) time.Duration {
	return time.Duration(float64(ms) * float64(time.Millisecond))
}

// Module is a loaded PTX module (CUmodule).
type Module struct {
	c        *Context
	h        uintptr
	ptx      string
	unloaded bool // touched only in driver calls
}

var _ gpu.Module = (*Module)(nil)

// Function looks a kernel up by name (cuModuleGetFunction); an unknown name
// yields CUDA_ERROR_NOT_FOUND. Its parameter list is read from the module's
// PTX text.
func (m *Module) Function(name string) (gpu.Function, error) {
	const op = "cuModuleGetFunction"
	var f *Function
	err := m.c.run(op, func() error {
		if m.unloaded {
			return gpu.Errorf(gpu.ErrInvalidHandle, op, "module has been unloaded")
		}
		if name == "" || strings.IndexByte(name, 0) >= 0 {
			return gpu.Errorf(gpu.ErrNotFound, op, "no kernel named %q", name)
		}
		var h uintptr
		if err := m.c.l.check(m.c.l.cuModuleGetFunction(&h, m.h, name), op); err != nil {
			return fmt.Errorf("kernel %q: %w", name, err)
		}
		params, err := entryParams(m.ptx, name)
		if err != nil {
			return gpu.Errorf(gpu.ErrInvalidPTX, op, "kernel %q: %v", name, err)
		}
		f = &Function{m: m, h: h, name: name, params: params}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Unload releases the module (cuModuleUnload).
func (m *Module) Unload() error {
	return m.c.run("cuModuleUnload", func() error {
		if m.unloaded {
			return gpu.Errorf(gpu.ErrInvalidHandle, "cuModuleUnload", "module already unloaded")
		}
		m.unloaded = true
		return m.c.l.check(m.c.l.cuModuleUnload(m.h), "cuModuleUnload")
	})
}

// Function is a kernel of a loaded module (CUfunction).
type Function struct {
	m      *Module
	h      uintptr
	name   string
	params []gpu.Param
	// launched says the function was launched once: its first launch
	// goes ungated (gate.go), as it may grow the context's local memory,
	// which synchronises. Touched only in driver calls.
	launched bool
}

var _ gpu.Function = (*Function)(nil)

// Name is the kernel's .entry name.
func (f *Function) Name() string { return f.name }

// Params lists the kernel's parameters as the PTX .entry declares them.
func (f *Function) Params() []gpu.Param { return append([]gpu.Param(nil), f.params...) }

// Event is a CUDA event (CUevent) recorded on the context's default stream.
type Event struct {
	c         *Context
	h         uintptr
	destroyed bool // touched only in driver calls
}

var _ gpu.Event = (*Event)(nil)

func (e *Event) live(op string) error {
	if e.destroyed {
		return gpu.Errorf(gpu.ErrInvalidHandle, op, "event has been destroyed")
	}
	return nil
}

// Record marks the event at the current point of the context's work.
func (e *Event) Record() error {
	return e.c.run("cuEventRecord", func() error {
		if err := e.live("cuEventRecord"); err != nil {
			return err
		}
		return e.c.l.check(e.c.l.cuEventRecord(e.h, 0), "cuEventRecord")
	})
}

// Synchronize waits until the event has completed.
func (e *Event) Synchronize() error {
	return e.c.run("cuEventSynchronize", func() error {
		if err := e.live("cuEventSynchronize"); err != nil {
			return err
		}
		return e.c.l.check(e.c.l.cuEventSynchronize(e.h), "cuEventSynchronize")
	})
}

// ElapsedSince reports the time from start to e (cuEventElapsedTime).
func (e *Event) ElapsedSince(start gpu.Event) (time.Duration, error) {
	const op = "cuEventElapsedTime"
	s, ok := start.(*Event)
	if !ok || s == nil || s.c != e.c {
		return 0, gpu.Errorf(gpu.ErrInvalidHandle, op, "start event is not an event of this context")
	}
	var ms float32
	err := e.c.run(op, func() error {
		if err := e.live(op); err != nil {
			return err
		}
		if err := s.live(op); err != nil {
			return err
		}
		return e.c.l.check(e.c.l.cuEventElapsedTime(&ms, s.h, e.h), op)
	})
	return msToDuration(ms), err
}

// Destroy releases the event (cuEventDestroy_v2).
func (e *Event) Destroy() error {
	return e.c.run("cuEventDestroy_v2", func() error {
		if err := e.live("cuEventDestroy_v2"); err != nil {
			return err
		}
		e.destroyed = true
		return e.c.l.check(e.c.l.cuEventDestroy(e.h), "cuEventDestroy_v2")
	})
}
