// Package gpusim is gxbit's simulated GPU: an implementation of the gpu
// driver interface that parses PTX text, decodes every kernel once into a
// flat executable form, and runs it on the host CPU.
//
// Execution follows the hardware model: threads run in warps of 32 lanes in
// lockstep under an active mask; divergent branches reconverge at the
// immediate post-dominator, computed when a module is loaded; the warps of a
// thread block run round-robin on one goroutine, switching at bar.sync, and
// blocks run in parallel on a pool of workers. Global memory is the
// context's allocations, and every access is bounds- and alignment-checked:
// a bad access stops the launch with an error naming the kernel, the PTX
// line, the thread, the block and the address.
//
// RATIONALE: registers are stored per warp as [reg][32]uint64 and each
// decoded instruction runs one handler over all active lanes, so dispatch
// costs once per warp instruction, not once per thread; immediates and
// special registers live in registers filled when a warp starts, so
// handlers never test operand kinds. Calls to .func are inlined at decode
// time (recursion is reported as not supported), so a warp's reconvergence
// stack spans calls without a call stack.
//
// Where PTX leaves results open, the simulator does what sm_90 does as far
// as recordings from a real H200 show (the fixtures under testdata/cuda):
// f32 arithmetic returns the canonical NaN 0x7fffffff; f64 arithmetic
// passes a NaN operand on, quieted, or returns 0xfff8000000000000; a NaN
// converts to 0 for 32-bit integers from f32, and to the most negative
// value from f64 to 32 bits and for 64-bit targets. Not covered by the
// recordings: integer division by zero gives all ones (remainder: the
// dividend), MIN/-1 gives MIN (remainder 0); .approx functions are
// computed in float64 and rounded, which is within the ISA's error bounds.
//
// Limits: shared memory per block is 48 KiB (static plus dynamic) unless
// Options say otherwise; .f16/.bf16 arithmetic, mad.wide with carry,
// indirect calls, bar.red, texture and surface instructions are not
// implemented (LoadModule reports them as gpu.ErrNotSupported with their
// line and column); modules must use 64-bit addressing. Launch runs the
// kernel to completion. Plain global loads and stores race between blocks
// exactly as they do on a GPU; atomics and .volatile/.relaxed/.acquire/
// .release accesses to global memory are serialised per address.
package gpusim

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/ptx"
)

// DefaultMaxLaunchTime is the launch time bound (Options.MaxLaunchTime)
// that gxbit's commands and daemon put on the simulator unless told
// otherwise: far above what the simulator needs for any kernel gxbit
// generates for the loop corpus, and short enough that a kernel that never
// ends, or an absurd grid, stops with an error.
const DefaultMaxLaunchTime = 5 * time.Minute

// maxLocalBytes is the local memory per thread, as on sm_90.
const maxLocalBytes = 512 << 10

// Options configures a simulated device.
type Options struct {
	// Workers is the number of blocks run in parallel; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int
	// MaxWarpInstructions bounds the warp instructions one launch may
	// issue; a launch that exceeds it fails with gpu.ErrLaunchTimeout.
	// 0 means no bound.
	MaxWarpInstructions int64
	// MaxLaunchTime bounds the wall-clock time of one launch: a launch
	// still running after it fails with gpu.ErrLaunchTimeout
	// (CUDA_ERROR_LAUNCH_TIMEOUT), as a GPU's watchdog ends a kernel that
	// never finishes. 0 means no bound; DefaultMaxLaunchTime is what
	// gxbit's commands use.
	MaxLaunchTime time.Duration
	// Name overrides the device name ("gxbit gpusim").
	Name string
	// MemoryBytes is the device memory size; 0 means 16 GiB.
	MemoryBytes uint64
	// SharedMemPerBlock is the shared memory limit per block (static plus
	// dynamic); 0 means 48 KiB.
	SharedMemPerBlock int
	// KernelSpeedup, when above 1, emulates a GPU that many times faster,
	// for tests of a cost model on a host without one: a launch reports a
	// Duration of its time over KernelSpeedup plus EmulatedLaunchLatency,
	// and the rest as LaunchStats.Unseen (what the caller should take off
	// the time it measured), and the driver is named "sim-fast", not
	// "sim", so that callers which tailor their work to the simulator
	// treat it as a real GPU. The kernels still run at the simulator's
	// speed.
	KernelSpeedup float64
	// SubmitLatency, when positive, makes every Launch spend that long
	// on the host before its kernel starts, as a real driver's
	// cuLaunchKernel spends microseconds queueing the launch: it is
	// reported as LaunchStats.Submit, never in Duration (the tests of
	// how callers keep the two apart use it).
	SubmitLatency time.Duration
}

// EmulatedLaunchLatency is what a launch of Options.KernelSpeedup's
// emulated GPU costs besides its kernel, reported as its Submit: about a
// real GPU's.
const EmulatedLaunchLatency = 10 * time.Microsecond

// Driver is the simulated GPU back end. It exposes one device. A Driver
// and its contexts are safe for concurrent use; launches in one context
// run one at a time.
type Driver struct {
	opts  Options
	props gpu.DeviceProps
}

var _ gpu.Driver = (*Driver)(nil)

// New returns a simulated device driver configured by opts.
func New(opts Options) *Driver {
	name := opts.Name
	if name == "" {
		name = "gxbit gpusim"
	}
	mem := opts.MemoryBytes
	if mem == 0 {
		mem = 16 << 30
	}
	smem := opts.SharedMemPerBlock
	if smem == 0 {
		smem = 48 << 10
	}
	return &Driver{opts: opts, props: gpu.DeviceProps{
		Name: name, ComputeMajor: 9, ComputeMinor: 0, TotalMemory: mem,
		MultiProcessors: 132, MaxThreadsPerBlock: 1024,
		MaxBlockDim: [3]int{1024, 1024, 64}, MaxGridDim: [3]int{1<<31 - 1, 65535, 65535},
		SharedMemPerBlock: smem, WarpSize: 32, ClockRateKHz: 1980000,
		MemoryBusWidthBits: 5120, MemoryClockRateKHz: 2619000, RegistersPerBlock: 65536,
		L2CacheBytes: 50 << 20, ConcurrentKernels: true, UnifiedAddressing: true,
		ECCEnabled: false, AsyncEngineCount: 2, CanMapHostMemory: true,
		MaxSharedMemPerSM: 228 << 10, MaxRegistersPerSM: 65536, MaxThreadsPerSM: 2048,
		GlobalL1CacheSupported: true,
	}}
}

// Name implements gpu.Driver.
func (d *Driver) Name() string {
	if d.opts.KernelSpeedup > 1 {
		return "sim-fast"
	}
	return "sim"
}

// Init implements gpu.Driver; the simulator is always available.
func (d *Driver) Init() error { return nil }

// DeviceCount implements gpu.Driver: the simulator has one device.
func (d *Driver) DeviceCount() (int, error) { return 1, nil }

// Device implements gpu.Driver.
func (d *Driver) Device(i int) (gpu.DeviceProps, error) {
	if i != 0 {
		return gpu.DeviceProps{}, gpu.Errorf(gpu.ErrInvalidDevice, "cuDeviceGet", "device %d does not exist (1 device)", i)
	}
	return d.props, nil
}

// NewContext implements gpu.Driver.
func (d *Driver) NewContext(device int) (gpu.Context, error) {
	if device != 0 {
		return nil, gpu.Errorf(gpu.ErrInvalidDevice, "cuCtxCreate", "device %d does not exist (1 device)", device)
	}
	return &Context{drv: d, mem: newMemory(d.props.TotalMemory)}, nil
}

// Context is a simulated device context. It implements gpu.Context.
type Context struct {
	mu      sync.Mutex
	drv     *Driver
	mem     *memory
	closed  bool
	last    gpu.LaunchStats
	pending error // failure of the last launch, reported by Synchronize
	// mapped maps the first byte of each AllocMapped buffer to its
	// device address.
	mapped map[*byte]uint64
}

var (
	_ gpu.Context         = (*Context)(nil)
	_ gpu.BatchCopier     = (*Context)(nil)
	_ gpu.MappedAllocator = (*Context)(nil)
)

func (c *Context) check(op string) error {
	if c.closed {
		return gpu.Errorf(gpu.ErrInvalidContext, op, "context is closed")
	}
	return nil
}

// LoadModule implements gpu.Context: it parses and checks the PTX, places
// module-scope variables, and decodes every kernel. Malformed PTX yields
// gpu.ErrInvalidPTX, valid PTX the simulator does not implement
// gpu.ErrNotSupported; both messages start with "line:col:".
func (c *Context) LoadModule(src string) (gpu.Module, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check("cuModuleLoadData"); err != nil {
		return nil, err
	}
	m, err := ptx.Parse(src)
	if err != nil {
		return nil, &gpu.Error{Code: gpu.ErrInvalidPTX, Op: "cuModuleLoadData", Msg: err.Error()}
	}
	if err := ptx.Check(m); err != nil {
		return nil, &gpu.Error{Code: gpu.ErrInvalidPTX, Op: "cuModuleLoadData", Msg: err.Error()}
	}
	if m.AddressSize != 64 {
		return nil, gpu.Errorf(gpu.ErrNotSupported, "cuModuleLoadData", ".address_size %d: the simulator runs 64-bit modules only", m.AddressSize)
	}
	mod := &module{ctx: c, kernels: map[string]*kernel{}}
	syms := map[string]symRef{}
	var sharedNext uint64
	place := func(prefix string, v *ptx.Var) error {
		size := uint64(v.Size())
		switch v.Space {
		case ptx.SpaceGlobal:
			if size == 0 {
				return fmt.Errorf("%s: .global %s has no size", v.Pos, v.Name)
			}
			a, err := c.mem.alloc(size)
			if err != nil {
				return err
			}
			mod.globals = append(mod.globals, a.base)
			if err := initBytes(a.data, v, syms); err != nil {
				return err
			}
			syms[prefix+v.Name] = symRef{space: msGlobal, addr: a.base}
		case ptx.SpaceConst:
			off := alignUp(uint64(len(mod.constBank)), uint64(v.Alignment()))
			mod.constBank = append(mod.constBank, make([]byte, off+size-uint64(len(mod.constBank)))...)
			if err := initBytes(mod.constBank[off:off+size], v, syms); err != nil {
				return err
			}
			syms[prefix+v.Name] = symRef{space: msConst, addr: off}
		case ptx.SpaceShared:
			if v.Linkage == "extern" {
				syms[prefix+v.Name] = symRef{space: msShared, addr: dynSharedMarker}
				return nil
			}
			off := alignUp(sharedNext, uint64(v.Alignment()))
			sharedNext = off + size
			syms[prefix+v.Name] = symRef{space: msShared, addr: off}
		default:
			return fmt.Errorf("%s: module-scope .%s variables are not supported", v.Pos, v.Space)
		}
		return nil
	}
	fail := func(err error) (gpu.Module, error) {
		for _, g := range mod.globals {
			_ = c.mem.free(g)
		}
		var ue *unsupportedError
		if errors.As(err, &ue) {
			return nil, &gpu.Error{Code: gpu.ErrNotSupported, Op: "cuModuleLoadData", Msg: ue.Error()}
		}
		if pe, ok := err.(*ptx.Error); ok {
			return nil, &gpu.Error{Code: gpu.ErrInvalidPTX, Op: "cuModuleLoadData", Msg: pe.Error()}
		}
		if gpu.Code(err) != gpu.ErrUnknown {
			return nil, err
		}
		return nil, &gpu.Error{Code: gpu.ErrInvalidPTX, Op: "cuModuleLoadData", Msg: err.Error()}
	}
	for _, v := range m.Vars {
		if err := place("", v); err != nil {
			return fail(err)
		}
	}
	// Function-scope .global/.const variables are module-lifetime too.
	for _, f := range m.Funcs {
		if f.Body == nil {
			continue
		}
		var walk func(b *ptx.Block) error
		walk = func(b *ptx.Block) error {
			for _, st := range b.Stmts {
				switch x := st.(type) {
				case *ptx.Var:
					if x.Space == ptx.SpaceGlobal || x.Space == ptx.SpaceConst {
						if err := place(f.Name+"::", x); err != nil {
							return err
						}
					}
				case *ptx.Block:
					if err := walk(x); err != nil {
						return err
					}
				}
			}
			return nil
		}
		if err := walk(f.Body); err != nil {
			return fail(err)
		}
	}
	for _, f := range m.Funcs {
		if !f.Entry || f.Body == nil {
			continue
		}
		k, err := decodeKernel(m, f, syms, sharedNext, mod)
		if err != nil {
			return fail(err)
		}
		mod.kernels[f.Name] = k
	}
	return mod, nil
}

// initBytes writes a variable's initializer into b.
func initBytes(b []byte, v *ptx.Var, syms map[string]symRef) error {
	es := v.Type.Size()
	for i, o := range v.Init {
		if (i+1)*es > len(b) {
			return fmt.Errorf("%s: too many initializers for %s", o.Pos, v.Name)
		}
		var x uint64
		switch o.Kind {
		case ptx.OpInt:
			x = uint64(o.Int)
			switch v.Type {
			case ptx.F32:
				x = bits32(float32(o.Int))
			case ptx.F64:
				x = bits64(float64(o.Int))
			}
		case ptx.OpFloat:
			switch {
			case v.Type == ptx.F32 && o.FloatSize == 4:
				x = o.FloatBits
			case v.Type == ptx.F32:
				x = bits32(float32(o.Float))
			case v.Type == ptx.F64 && o.FloatSize == 8:
				x = o.FloatBits
			case v.Type == ptx.F64:
				x = bits64(o.Float)
			default:
				return fmt.Errorf("%s: floating-point initializer for .%s %s", o.Pos, v.Type, v.Name)
			}
		case ptx.OpSym:
			r, ok := syms[o.Name]
			if !ok || r.space != msGlobal {
				return fmt.Errorf("%s: initializer %s is not a .global variable", o.Pos, o.Name)
			}
			x = r.addr + uint64(o.Int)
		}
		writeN(b[i*es:], uint8(es), x)
	}
	return nil
}

// Alloc implements gpu.Context.
func (c *Context) Alloc(n uint64) (gpu.DevicePtr, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check("cuMemAlloc"); err != nil {
		return 0, err
	}
	a, err := c.mem.alloc(n)
	if err != nil {
		return 0, err
	}
	return gpu.DevicePtr(a.base), nil
}

// Free implements gpu.Context.
func (c *Context) Free(p gpu.DevicePtr) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check("cuMemFree"); err != nil {
		return err
	}
	return c.mem.free(uint64(p))
}

// CopyHtoD implements gpu.Context.
func (c *Context) CopyHtoD(dst gpu.DevicePtr, src []byte) error {
	return c.htod("cuMemcpyHtoD", dst, src)
}

// CopyHtoDAsync implements gpu.Context. The simulated device has no
// stream of its own: the copy is done when the call returns.
func (c *Context) CopyHtoDAsync(dst gpu.DevicePtr, src []byte) error {
	return c.htod("cuMemcpyHtoDAsync", dst, src)
}

// htod copies src to dst for the call op.
func (c *Context) htod(op string, dst gpu.DevicePtr, src []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(op); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	b, err := c.mem.span(op, uint64(dst), uint64(len(src)))
	if err != nil {
		return err
	}
	copy(b, src)
	return nil
}

// CopyDtoH implements gpu.Context.
func (c *Context) CopyDtoH(dst []byte, src gpu.DevicePtr) error {
	return c.dtoh("cuMemcpyDtoH", dst, src)
}

// CopyDtoHAsync implements gpu.Context, as CopyHtoDAsync does.
func (c *Context) CopyDtoHAsync(dst []byte, src gpu.DevicePtr) error {
	return c.dtoh("cuMemcpyDtoHAsync", dst, src)
}

// dtoh copies device memory at src into dst for the call op.
func (c *Context) dtoh(op string, dst []byte, src gpu.DevicePtr) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(op); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	b, err := c.mem.span(op, uint64(src), uint64(len(dst)))
	if err != nil {
		return err
	}
	copy(dst, b)
	return nil
}

// AllocMapped implements gpu.MappedAllocator: a device allocation whose
// bytes the host reads and writes in place (the simulated device's memory
// is the host's).
func (c *Context) AllocMapped(n uint64) ([]byte, gpu.DevicePtr, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check("cuMemHostAlloc"); err != nil {
		return nil, 0, err
	}
	a, err := c.mem.alloc(n)
	if err != nil {
		return nil, 0, err
	}
	if c.mapped == nil {
		c.mapped = map[*byte]uint64{}
	}
	c.mapped[&a.data[0]] = a.base
	return a.data, gpu.DevicePtr(a.base), nil
}

// FreeMapped implements gpu.MappedAllocator.
func (c *Context) FreeMapped(b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check("cuMemFreeHost"); err != nil {
		return err
	}
	if len(b) == 0 {
		return gpu.Errorf(gpu.ErrInvalidValue, "cuMemFreeHost", "an empty buffer")
	}
	base, ok := c.mapped[&b[0]]
	if !ok {
		return gpu.Errorf(gpu.ErrInvalidValue, "cuMemFreeHost", "%p is not a mapped buffer of this context", &b[0])
	}
	delete(c.mapped, &b[0])
	return c.mem.free(base)
}

// CopyBatch implements gpu.BatchCopier: the copies, in order, under one
// hold of the context.
func (c *Context) CopyBatch(copies []gpu.Copy) error {
	return c.batch("cuMemcpyBatch", copies)
}

// QueueBatch implements gpu.BatchQueuer: the simulated device has no
// stream of its own, so the copies are done when it returns.
func (c *Context) QueueBatch(copies []gpu.Copy) error {
	return c.batch("cuMemcpyBatchAsync", copies)
}

// batch runs copies in order for the call op.
func (c *Context) batch(op string, copies []gpu.Copy) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(op); err != nil {
		return err
	}
	for i, cp := range copies {
		if len(cp.Host) == 0 {
			continue
		}
		b, err := c.mem.span(op, uint64(cp.Dev), uint64(len(cp.Host)))
		if err != nil {
			return fmt.Errorf("copy %d of %d: %w", i, len(copies), err)
		}
		if cp.FromDevice {
			copy(cp.Host, b)
		} else {
			copy(b, cp.Host)
		}
	}
	return nil
}

// CopyDtoD implements gpu.Context.
func (c *Context) CopyDtoD(dst, src gpu.DevicePtr, n uint64) error {
	return c.dtod("cuMemcpyDtoD", dst, src, n)
}

// CopyDtoDAsync implements gpu.Context, as CopyHtoDAsync does.
func (c *Context) CopyDtoDAsync(dst, src gpu.DevicePtr, n uint64) error {
	return c.dtod("cuMemcpyDtoDAsync", dst, src, n)
}

// dtod copies n bytes of device memory from src to dst for the call op.
func (c *Context) dtod(op string, dst, src gpu.DevicePtr, n uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(op); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	s, err := c.mem.span(op, uint64(src), n)
	if err != nil {
		return err
	}
	d, err := c.mem.span(op, uint64(dst), n)
	if err != nil {
		return err
	}
	copy(d, s)
	return nil
}

// Memset implements gpu.Context.
func (c *Context) Memset(dst gpu.DevicePtr, v byte, n uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check("cuMemsetD8"); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	b, err := c.mem.span("cuMemsetD8", uint64(dst), n)
	if err != nil {
		return err
	}
	// At memory speed: a byte at a time set 70 MB in 0.2 s.
	if v == 0 {
		clear(b)
		return nil
	}
	b[0] = v
	for i := 1; i < len(b); i *= 2 {
		copy(b[i:], b[:i])
	}
	return nil
}

// Launch implements gpu.Context. The simulator runs the kernel to
// completion before returning; a failure of the kernel is returned here
// and again by the next Synchronize, as CUDA reports it.
func (c *Context) Launch(f gpu.Function, cfg gpu.LaunchConfig, params [][]byte) error {
	called := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	const op = "cuLaunchKernel"
	if err := c.check(op); err != nil {
		return err
	}
	fn, ok := f.(*function)
	if !ok || fn.k.mod.ctx != c || fn.k.mod.unloaded {
		return gpu.Errorf(gpu.ErrInvalidHandle, op, "function does not belong to this context's loaded modules")
	}
	k := fn.k
	p := c.drv.props
	b, g := cfg.Block, cfg.Grid
	if b.X == 0 || b.Y == 0 || b.Z == 0 || g.X == 0 || g.Y == 0 || g.Z == 0 {
		return gpu.Errorf(gpu.ErrInvalidValue, op, "kernel %s: zero grid (%s) or block (%s) dimension", k.name, g, b)
	}
	if int(b.X) > p.MaxBlockDim[0] || int(b.Y) > p.MaxBlockDim[1] || int(b.Z) > p.MaxBlockDim[2] || b.Count() > uint64(p.MaxThreadsPerBlock) {
		return gpu.Errorf(gpu.ErrInvalidValue, op, "kernel %s: block %s exceeds the limits (%v, %d threads)", k.name, b, p.MaxBlockDim, p.MaxThreadsPerBlock)
	}
	if uint64(g.X) > uint64(p.MaxGridDim[0]) || int(g.Y) > p.MaxGridDim[1] || int(g.Z) > p.MaxGridDim[2] {
		return gpu.Errorf(gpu.ErrInvalidValue, op, "kernel %s: grid %s exceeds the limits %v", k.name, g, p.MaxGridDim)
	}
	if shared := uint64(k.sharedStatic) + uint64(cfg.SharedBytes); shared > uint64(p.SharedMemPerBlock) {
		return gpu.Errorf(gpu.ErrInvalidValue, op, "kernel %s: %d bytes of shared memory (%d static + %d dynamic) exceed %d", k.name, shared, k.sharedStatic, cfg.SharedBytes, p.SharedMemPerBlock)
	}
	if k.localSize > maxLocalBytes {
		return gpu.Errorf(gpu.ErrLaunchOutOfResources, op, "kernel %s: %d bytes of local memory per thread exceed %d", k.name, k.localSize, maxLocalBytes)
	}
	if len(params) != len(k.params) {
		return gpu.Errorf(gpu.ErrInvalidValue, op, "kernel %s takes %d parameters, got %d", k.name, len(k.params), len(params))
	}
	buf := make([]byte, k.paramSize)
	for i, prm := range params {
		if len(prm) != k.params[i].Size {
			return gpu.Errorf(gpu.ErrInvalidValue, op, "kernel %s: parameter %d (%s) is %d bytes, got %d", k.name, i, k.params[i].Name, k.params[i].Size, len(prm))
		}
		copy(buf[k.paramOffs[i]:], prm)
	}
	if d := c.drv.opts.SubmitLatency; d > 0 {
		time.Sleep(d)
	}
	l := &launch{k: k, ctx: c, cfg: cfg, params: buf, mem: c.mem, nthreads: int(b.Count()),
		start: time.Now(), budget: c.drv.opts.MaxWarpInstructions}
	if c.drv.opts.MaxLaunchTime > 0 {
		l.deadline = l.start.Add(c.drv.opts.MaxLaunchTime)
	}
	err := l.execute(c.drv.opts.Workers)
	c.last = gpu.LaunchStats{
		Kernel: k.name, ThreadInstructions: l.threadInstr.Load(), WarpInstructions: l.warpInstr.Load(),
		DivergentBranches: l.divergent.Load(), Duration: time.Since(l.start), Submit: l.start.Sub(called),
	}
	if f := c.drv.opts.KernelSpeedup; f > 1 {
		// The emulated launch's kernel, and its submission, which the
		// host does not spend: both in what the caller counts.
		fast := time.Duration(float64(c.last.Duration) / f)
		c.last.Unseen = max(c.last.Duration-fast-EmulatedLaunchLatency, 0)
		c.last.Duration = fast
		c.last.Submit += EmulatedLaunchLatency
	}
	c.pending = err
	return err
}

// Synchronize implements gpu.Context: work is already complete; it reports
// (once) the failure of the last launch.
func (c *Context) Synchronize() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check("cuCtxSynchronize"); err != nil {
		return err
	}
	err := c.pending
	c.pending = nil
	return err
}

// LastLaunchStats implements gpu.Context.
func (c *Context) LastLaunchStats() gpu.LaunchStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// NewEvent implements gpu.Context.
func (c *Context) NewEvent() (gpu.Event, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check("cuEventCreate"); err != nil {
		return nil, err
	}
	return &event{}, nil
}

// Close implements gpu.Context.
func (c *Context) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check("cuCtxDestroy"); err != nil {
		return err
	}
	c.closed = true
	c.mem = newMemory(0)
	return nil
}

// module is a loaded PTX module.
type module struct {
	ctx       *Context
	kernels   map[string]*kernel
	globals   []uint64
	constBank []byte
	unloaded  bool
}

// Function implements gpu.Module.
func (m *module) Function(name string) (gpu.Function, error) {
	m.ctx.mu.Lock()
	defer m.ctx.mu.Unlock()
	k, ok := m.kernels[name]
	if !ok || m.unloaded {
		return nil, gpu.Errorf(gpu.ErrNotFound, "cuModuleGetFunction", "no kernel named %q in the module", name)
	}
	return &function{k: k}, nil
}

// Unload implements gpu.Module.
func (m *module) Unload() error {
	m.ctx.mu.Lock()
	defer m.ctx.mu.Unlock()
	if m.unloaded {
		return gpu.Errorf(gpu.ErrInvalidHandle, "cuModuleUnload", "module already unloaded")
	}
	m.unloaded = true
	for _, g := range m.globals {
		_ = m.ctx.mem.free(g)
	}
	return nil
}

type function struct{ k *kernel }

// Name implements gpu.Function.
func (f *function) Name() string { return f.k.name }

// Params implements gpu.Function.
func (f *function) Params() []gpu.Param { return append([]gpu.Param(nil), f.k.params...) }

type event struct {
	mu       sync.Mutex
	at       time.Time
	recorded bool
}

// Record implements gpu.Event.
func (e *event) Record() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.at, e.recorded = time.Now(), true
	return nil
}

// Synchronize implements gpu.Event.
func (e *event) Synchronize() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.recorded {
		return gpu.Errorf(gpu.ErrInvalidHandle, "cuEventSynchronize", "event was never recorded")
	}
	return nil
}

// ElapsedSince implements gpu.Event.
func (e *event) ElapsedSince(start gpu.Event) (time.Duration, error) {
	s, ok := start.(*event)
	if !ok {
		return 0, gpu.Errorf(gpu.ErrInvalidHandle, "cuEventElapsedTime", "start event is not a simulator event")
	}
	e.mu.Lock()
	end, rec := e.at, e.recorded
	e.mu.Unlock()
	s.mu.Lock()
	begin, srec := s.at, s.recorded
	s.mu.Unlock()
	if !rec || !srec {
		return 0, gpu.Errorf(gpu.ErrNotReady, "cuEventElapsedTime", "event not recorded")
	}
	return end.Sub(begin), nil
}

// Destroy implements gpu.Event.
func (e *event) Destroy() error { return nil }
