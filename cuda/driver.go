// Package cuda implements gpu.Driver over the NVIDIA driver library
// libcuda.so.1, opened at run time with purego, so that one binary built
// with CGO_ENABLED=0 runs with or without a GPU.
//
// A CUDA context is current per OS thread. The driver therefore makes every
// library call on one goroutine locked to its OS thread (runtime.LockOSThread)
// and hands calls to it over a channel; callers may use a Driver, and the
// contexts, modules and events it creates, from any goroutine, including
// several at once.
//
// Errors are *gpu.Error values whose Code is the CUresult the library
// returned. A few misuses that the library would not catch reliably are
// checked here first and reported with the code the simulator uses: a copy or
// memset that leaves its allocation, a free of a pointer that Alloc did not
// return, and a launch whose parameters do not match the kernel's .entry
// declaration (all CUDA_ERROR_INVALID_VALUE).
package cuda

import (
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gxbit/gxbit/gpu"
)

// Driver is the real-GPU back end. The zero value is not usable; call New.
type Driver struct {
	w    *caller // serialises the driver calls
	opts Options

	once     sync.Once
	initDone chan struct{} // closed once Init's work is done (Start)
	initErr  error
	initTook time.Duration
	l        *lib // set by Init; read only in calls of w
	// links says the library has the driver's linker (link.go), once
	// Start has loaded it (CompilesBeside).
	links atomic.Bool
	trace *callTrace
}

var _ gpu.Driver = (*Driver)(nil)

// Options configures a Driver.
type Options struct {
	// JITLevel is the CUDA JIT's optimization level for every module
	// (CU_JIT_OPTIMIZATION_LEVEL, 0 to 4); DefaultJITLevel leaves the
	// driver's default, the highest.
	JITLevel int
	// JITThreads is how many modules a context compiles at once, each on
	// a thread of its own (0: defaultJITThreads where the library has the
	// driver's linker, else 1).
	JITThreads int
	// Trace, when not nil, receives a line per driver call of the
	// driver's contexts: when it was asked for, when it began, how long
	// it took, and on which thread (callTrace).
	Trace io.Writer
}

// DefaultJITLevel is Options.JITLevel's value that leaves the JIT's
// optimization level to the driver.
const DefaultJITLevel = -1

// New returns a driver with the default options (NewWith).
func New() *Driver { return NewWith(Options{JITLevel: DefaultJITLevel}) }

// NewWith returns a driver that has not loaded libcuda yet; Init loads it.
func NewWith(o Options) *Driver {
	return &Driver{w: &caller{}, opts: o, trace: newCallTrace(o.Trace)}
}

// InitTime is the time Init took: loading libcuda.so.1 and cuInit, which
// come before any context (0 while cuInit runs).
func (d *Driver) InitTime() time.Duration {
	if d.initDone == nil {
		return 0
	}
	select {
	case <-d.initDone:
		return d.initTook
	default:
		return 0
	}
}

// caller runs the driver's calls one at a time, each on the OS thread of
// the goroutine that makes it, locked to that thread while the call runs.
//
// The calls once went to one goroutine locked to its own thread (a
// worker), so that a context made current there stayed current. Each
// call was then a hand-off between two threads and back: on an H100
// host a call began 50-90 us after it was asked for (GXBIT_CUDA_TRACE),
// so that a launch, its wait and its statistics, three calls, took 160 us
// of hand-offs and LU 2000's 20,000 calls about a second, although the
// worker polled for 50 us before parking. Now a call takes a mutex, and
// the context it needs is made current on the caller's thread
// (cuCtxSetCurrent, a store in the driver's thread-local state) before
// it runs: no thread wakes.
type caller struct {
	mu sync.Mutex
	// busy counts the calls asked for and not finished; lastDone is
	// when the last one finished (UnixNano). See waitIdle.
	busy     atomic.Int32
	lastDone atomic.Int64
}

// do runs f on the calling goroutine's OS thread, after every call asked
// for before it has finished and before any asked for after it begins.
func (w *caller) do(f func()) {
	w.busy.Add(1)
	w.mu.Lock()
	w.run(f)
}

// goAhead runs f on a goroutine of its own, as do would, and returns at
// once: calls asked for after goAhead returns run after f.
func (w *caller) goAhead(f func()) {
	w.busy.Add(1)
	w.mu.Lock()
	go w.run(f)
}

// run runs f holding w.mu, which the caller took, and releases it.
func (w *caller) run(f func()) {
	runtime.LockOSThread()
	defer func() {
		runtime.UnlockOSThread()
		w.lastDone.Store(time.Now().UnixNano())
		w.busy.Add(-1)
		w.mu.Unlock()
	}()
	f()
}

// call runs f as the driver call op (caller.do) and records it in the
// trace (Options.Trace).
func (d *Driver) call(op string, f func()) {
	asked := time.Now()
	d.w.do(func() {
		if d.trace != nil {
			defer d.trace.record("driver", op, asked, time.Now())
		}
		f()
	})
}

// CompilesBeside reports whether the driver's contexts compile modules
// beside their other calls, several at once (Context.LoadModule), as they
// do where the library has the driver's linker: a copy or launch then
// does not wait for a compile under way. It is false until Start has
// loaded the library.
func (d *Driver) CompilesBeside() bool { return d.links.Load() }

// Name reports "cuda".
func (d *Driver) Name() string { return "cuda" }

// Init loads libcuda.so.1 and calls cuInit. Without the library it returns a
// *gpu.Error with code gpu.ErrNotInitialized whose message says the library
// could not be loaded; without a device, the library's code (normally
// gpu.ErrNoDevice). Later calls return the first call's result.
func (d *Driver) Init() error {
	if err := d.Start(); err != nil {
		return err
	}
	<-d.initDone
	return d.initErr
}

// Start loads libcuda.so.1 and begins cuInit on the driver's thread
// without waiting for it (a tenth of a second or more): every later call
// runs after it, and one that needs the device returns cuInit's error if
// it failed (Init waits for it and returns it). Without the library it
// returns Init's error at once.
func (d *Driver) Start() error {
	d.once.Do(func() {
		t0 := time.Now()
		d.initDone = make(chan struct{})
		var l *lib
		d.w.do(func() {
			var err error
			if l, err = openLib(); err != nil {
				d.initErr = gpu.Errorf(gpu.ErrNotInitialized, "cuInit", "%v", err)
			}
		})
		if d.initErr != nil {
			d.initTook = time.Since(t0)
			close(d.initDone)
			return
		}
		d.links.Store(l.canLink())
		// Not waited for: every call asked for after it runs after it.
		asked := time.Now()
		d.w.goAhead(func() {
			defer close(d.initDone)
			if d.trace != nil {
				defer d.trace.record("driver", "cuInit", asked, time.Now())
			}
			defer func() { d.initTook = time.Since(t0) }()
			if r := l.cuInit(0); r != 0 {
				d.initErr = l.wrap(r, "cuInit", "no usable CUDA device")
				return
			}
			d.l = l
		})
	})
	if closed := d.initDone; closed != nil {
		select {
		case <-closed:
			return d.initErr
		default:
		}
	}
	return nil
}

// ready returns the loaded library, or an error when Init has not succeeded.
// It must run in a call of d.w.
func (d *Driver) ready(op string) (*lib, error) {
	if d.l == nil && d.initErr != nil {
		return nil, d.initErr
	}
	if d.l == nil {
		return nil, gpu.Errorf(gpu.ErrNotInitialized, op, "driver not initialised (call Init first)")
	}
	return d.l, nil
}

// DeviceCount reports the number of CUDA devices (cuDeviceGetCount).
func (d *Driver) DeviceCount() (int, error) {
	var n int32
	var err error
	d.w.do(func() {
		l, e := d.ready("cuDeviceGetCount")
		if e != nil {
			err = e
			return
		}
		err = l.check(l.cuDeviceGetCount(&n), "cuDeviceGetCount")
	})
	return int(n), err
}

// CUdevice_attribute values (cuda.h).
const (
	attrMaxThreadsPerBlock     = 1
	attrMaxBlockDimX           = 2
	attrMaxGridDimX            = 5
	attrMaxSharedPerBlock      = 8
	attrWarpSize               = 10
	attrRegistersPerBlock      = 12
	attrClockRate              = 13
	attrMultiProcessors        = 16
	attrIntegrated             = 18
	attrCanMapHostMemory       = 19
	attrComputeMode            = 20
	attrConcurrentKernels      = 31
	attrECCEnabled             = 32
	attrPCIBusID               = 33
	attrPCIDeviceID            = 34
	attrMemoryClockRate        = 36
	attrMemoryBusWidth         = 37
	attrL2CacheSize            = 38
	attrMaxThreadsPerSM        = 39
	attrAsyncEngineCount       = 40
	attrUnifiedAddressing      = 41
	attrComputeMajor           = 75
	attrComputeMinor           = 76
	attrGlobalL1CacheSupported = 79
	attrMaxSharedPerSM         = 81
	attrMaxRegistersPerSM      = 82
)

// Device describes device ordinal i from cuDeviceGetName,
// cuDeviceTotalMem_v2 and cuDeviceGetAttribute.
func (d *Driver) Device(i int) (gpu.DeviceProps, error) {
	var p gpu.DeviceProps
	var err error
	d.call("cuDeviceGet", func() {
		l, e := d.ready("cuDeviceGet")
		if e != nil {
			err = e
			return
		}
		dev, e := l.device(i)
		if e != nil {
			err = e
			return
		}
		var name [256]byte
		if e := l.check(l.cuDeviceGetName(&name[0], int32(len(name)), dev), "cuDeviceGetName"); e != nil {
			err = e
			return
		}
		p.Name = cString(&name[0])
		if e := l.check(l.cuDeviceTotalMem(&p.TotalMemory, dev), "cuDeviceTotalMem_v2"); e != nil {
			err = e
			return
		}
		attr := func(a int32) int {
			if err != nil {
				return 0
			}
			var v int32
			err = l.check(l.cuDeviceGetAttribute(&v, a, dev), "cuDeviceGetAttribute")
			return int(v)
		}
		p.ComputeMajor = attr(attrComputeMajor)
		p.ComputeMinor = attr(attrComputeMinor)
		p.MultiProcessors = attr(attrMultiProcessors)
		p.MaxThreadsPerBlock = attr(attrMaxThreadsPerBlock)
		for k := range 3 {
			p.MaxBlockDim[k] = attr(attrMaxBlockDimX + int32(k))
			p.MaxGridDim[k] = attr(attrMaxGridDimX + int32(k))
		}
		p.SharedMemPerBlock = attr(attrMaxSharedPerBlock)
		p.WarpSize = attr(attrWarpSize)
		p.ClockRateKHz = attr(attrClockRate)
		p.MemoryBusWidthBits = attr(attrMemoryBusWidth)
		p.MemoryClockRateKHz = attr(attrMemoryClockRate)
		p.RegistersPerBlock = attr(attrRegistersPerBlock)
		p.L2CacheBytes = attr(attrL2CacheSize)
		p.ConcurrentKernels = attr(attrConcurrentKernels) != 0
		p.UnifiedAddressing = attr(attrUnifiedAddressing) != 0
		p.ECCEnabled = attr(attrECCEnabled) != 0
		p.PCIBusID = attr(attrPCIBusID)
		p.PCIDeviceID = attr(attrPCIDeviceID)
		p.AsyncEngineCount = attr(attrAsyncEngineCount)
		p.Integrated = attr(attrIntegrated) != 0
		p.CanMapHostMemory = attr(attrCanMapHostMemory) != 0
		p.ComputeMode = attr(attrComputeMode)
		p.MaxSharedMemPerSM = attr(attrMaxSharedPerSM)
		p.MaxRegistersPerSM = attr(attrMaxRegistersPerSM)
		p.MaxThreadsPerSM = attr(attrMaxThreadsPerSM)
		p.GlobalL1CacheSupported = attr(attrGlobalL1CacheSupported) != 0
	})
	if err != nil {
		return gpu.DeviceProps{}, err
	}
	return p, nil
}

// device resolves ordinal i to a CUdevice. It must run in a call of d.w.
func (l *lib) device(i int) (int32, error) {
	if i < 0 || i > 1<<30 {
		return 0, gpu.Errorf(gpu.ErrInvalidDevice, "cuDeviceGet", "device ordinal %d out of range", i)
	}
	var dev int32
	if err := l.check(l.cuDeviceGet(&dev, int32(i)), "cuDeviceGet"); err != nil {
		return 0, err
	}
	return dev, nil
}

// NewContext creates a context on device ordinal i (cuCtxCreate_v2).
func (d *Driver) NewContext(i int) (gpu.Context, error) {
	var c *Context
	var err error
	d.call("cuCtxCreate_v2", func() {
		l, e := d.ready("cuCtxCreate_v2")
		if e != nil {
			err = e
			return
		}
		dev, e := l.device(i)
		if e != nil {
			err = e
			return
		}
		var h uintptr
		if e := l.check(l.cuCtxCreate(&h, 0, dev), "cuCtxCreate_v2"); e != nil {
			err = e
			return
		}
		c = &Context{d: d, l: l, h: h, allocs: map[gpu.DevicePtr]uint64{}}
		if e := c.initStatsEvents(); e != nil {
			_ = l.cuCtxDestroy(h)
			err = e
			c = nil
		}
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// check turns a CUresult into nil or a *gpu.Error for op.
func (l *lib) check(r cuResult, op string) error {
	if r == 0 {
		return nil
	}
	return l.wrap(r, op, "")
}

// wrap builds the *gpu.Error for a failed call, with the library's own name
// for the code and an optional detail.
func (l *lib) wrap(r cuResult, op, detail string) error {
	msg := detail
	if code := gpu.Result(r); strings.HasPrefix(code.String(), "CUresult(") {
		// A code gpu does not name: keep the library's name for it.
		msg = strings.TrimSuffix(l.errorName(r)+": "+detail, ": ")
	}
	return &gpu.Error{Code: gpu.Result(r), Op: op, Msg: msg}
}
