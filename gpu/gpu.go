// Package gpu defines the driver interface that every GPU back end of gxbit
// implements: the in-process simulator (package gpusim) and the real NVIDIA
// driver loaded at run time (package cuda). It is modelled on the CUDA driver
// API: a driver is initialised, exposes devices, and a context on a device
// loads modules from PTX text, allocates and copies device memory, and
// launches kernels.
//
// The boundary between code generation and any driver is PTX text: the
// simulator parses exactly what the hardware receives.
//
// This package is a leaf: it imports only the standard library, so that
// gpusim, cuda, ptxgen and the commands can share it without cycles.
package gpu

import (
	"errors"
	"fmt"
	"time"
)

// Driver is one GPU back end. A Driver is safe for use by one goroutine at
// a time unless an implementation documents otherwise.
type Driver interface {
	// Name is a short identifier: "sim" or "cuda".
	Name() string
	// Init initialises the driver (cuInit). It returns an *Error with code
	// ErrNoDevice or ErrNotInitialized when the back end is unavailable.
	Init() error
	// DeviceCount reports how many devices the driver exposes.
	DeviceCount() (int, error)
	// Device describes device ordinal i.
	Device(i int) (DeviceProps, error)
	// NewContext creates a context on device ordinal i (cuCtxCreate).
	NewContext(device int) (Context, error)
}

// DeviceProps describes one device.
type DeviceProps struct {
	Name                   string
	ComputeMajor           int
	ComputeMinor           int
	TotalMemory            uint64
	MultiProcessors        int
	MaxThreadsPerBlock     int
	MaxBlockDim            [3]int
	MaxGridDim             [3]int
	SharedMemPerBlock      int
	WarpSize               int
	ClockRateKHz           int
	MemoryBusWidthBits     int
	MemoryClockRateKHz     int
	RegistersPerBlock      int
	L2CacheBytes           int
	ConcurrentKernels      bool
	UnifiedAddressing      bool
	ECCEnabled             bool
	PCIBusID               int
	PCIDeviceID            int
	AsyncEngineCount       int
	Integrated             bool
	CanMapHostMemory       bool
	ComputeMode            int
	MaxSharedMemPerSM      int
	MaxRegistersPerSM      int
	MaxThreadsPerSM        int
	GlobalL1CacheSupported bool
}

// DevicePtr is an address in device memory, as CUdeviceptr.
type DevicePtr uint64

// Dim3 is a grid or block shape.
type Dim3 struct{ X, Y, Z uint32 }

// Count is the number of elements X*Y*Z.
func (d Dim3) Count() uint64 { return uint64(d.X) * uint64(d.Y) * uint64(d.Z) }

// String formats d as "X,Y,Z".
func (d Dim3) String() string { return fmt.Sprintf("%d,%d,%d", d.X, d.Y, d.Z) }

// LaunchConfig is the shape and resources of one kernel launch.
type LaunchConfig struct {
	Grid        Dim3
	Block       Dim3
	SharedBytes uint32 // dynamic shared memory (extern .shared), in bytes
}

// Context is a context on one device (CUcontext). All memory and modules
// belong to the context that created them.
type Context interface {
	// LoadModule compiles or parses a PTX module (cuModuleLoadData). Bad PTX
	// yields an *Error with code ErrInvalidPTX whose message names the line
	// and column.
	LoadModule(ptx string) (Module, error)
	// Alloc allocates n bytes of device memory (cuMemAlloc).
	Alloc(n uint64) (DevicePtr, error)
	// Free releases memory returned by Alloc (cuMemFree).
	Free(p DevicePtr) error
	// CopyHtoD copies src to device memory at dst (cuMemcpyHtoD).
	CopyHtoD(dst DevicePtr, src []byte) error
	// CopyDtoH copies len(dst) bytes from device memory at src (cuMemcpyDtoH).
	CopyDtoH(dst []byte, src DevicePtr) error
	// CopyDtoD copies n bytes between device allocations (cuMemcpyDtoD).
	CopyDtoD(dst, src DevicePtr, n uint64) error
	// Memset sets n bytes at dst to b (cuMemsetD8).
	Memset(dst DevicePtr, b byte, n uint64) error
	// Launch runs f with the given configuration and parameters
	// (cuLaunchKernel). Each parameter is the raw little-endian bytes of one
	// kernel parameter, in declaration order; a pointer parameter holds a
	// DevicePtr. Launch may return before the kernel finishes; Synchronize
	// waits for it and reports a failure of the kernel itself.
	Launch(f Function, cfg LaunchConfig, params [][]byte) error
	// Synchronize waits for all work in the context (cuCtxSynchronize).
	Synchronize() error
	// NewEvent creates an event for timing (cuEventCreate).
	NewEvent() (Event, error)
	// LastLaunchStats reports the statistics of the most recent completed
	// launch. Back ends that cannot count instructions leave those fields zero
	// and fill only Duration.
	LastLaunchStats() LaunchStats
	// Close destroys the context and everything it owns (cuCtxDestroy).
	Close() error
}

// Module is a loaded PTX module (CUmodule).
type Module interface {
	// Function looks up a kernel by name (cuModuleGetFunction). An unknown
	// name yields an *Error with code ErrNotFound.
	Function(name string) (Function, error)
	// Unload releases the module (cuModuleUnload).
	Unload() error
}

// Function is a kernel entry point in a loaded module (CUfunction).
type Function interface {
	// Name is the kernel's .entry name.
	Name() string
	// Params describes the kernel's parameters in order, as declared.
	Params() []Param
}

// Param describes one kernel parameter.
type Param struct {
	Name  string
	Size  int // bytes
	Align int // bytes
}

// Event records a point in a context's work for timing (CUevent).
type Event interface {
	// Record marks the event at the current point of the context's work.
	Record() error
	// Synchronize waits until the event has completed.
	Synchronize() error
	// ElapsedSince reports the time from start to this event
	// (cuEventElapsedTime). Both events must have completed.
	ElapsedSince(start Event) (time.Duration, error)
	// Destroy releases the event.
	Destroy() error
}

// LaunchStats counts what one launch executed.
type LaunchStats struct {
	Kernel             string
	ThreadInstructions uint64 // instructions executed, summed over active lanes
	WarpInstructions   uint64 // instructions issued, one per warp per instruction
	DivergentBranches  uint64 // branches where the active lanes went both ways
	// Duration is the device's time running the kernel: on a real GPU,
	// events recorded on the stream right around it while the stream is
	// held, so that the host's submission of the launch is not in it (a
	// hand-written CUDA program's back-to-back launches measure the same).
	Duration time.Duration
	// Submit is the host's time submitting the launch: from the Launch
	// call until the kernel was queued (cuLaunchKernel returned). It is
	// not part of Duration; a cost model adds it.
	Submit time.Duration
	// Unseen is host time the launch took that the device does not count:
	// an emulated faster device's (gpusim's Options.KernelSpeedup), whose
	// kernels still take the simulator's time. 0 otherwise.
	Unseen time.Duration
}

// SIMTEfficiency is the mean fraction of a warp's 32 lanes that were active
// per issued instruction, in [0,1]; zero when nothing was issued.
func (s LaunchStats) SIMTEfficiency() float64 {
	if s.WarpInstructions == 0 {
		return 0
	}
	return float64(s.ThreadInstructions) / float64(s.WarpInstructions*32)
}

// Result is a CUresult-style status code. The numeric values are those of the
// CUDA driver API, so that both back ends report the same code for the same
// misuse.
type Result int

// CUresult codes used by gxbit's drivers (values from cuda.h).
const (
	Success                 Result = 0
	ErrInvalidValue         Result = 1
	ErrOutOfMemory          Result = 2
	ErrNotInitialized       Result = 3
	ErrDeinitialized        Result = 4
	ErrNoDevice             Result = 100
	ErrInvalidDevice        Result = 101
	ErrInvalidImage         Result = 200
	ErrInvalidContext       Result = 201
	ErrNoBinaryForGPU       Result = 209
	ErrInvalidPTX           Result = 218
	ErrInvalidSource        Result = 300
	ErrFileNotFound         Result = 301
	ErrInvalidHandle        Result = 400
	ErrNotFound             Result = 500
	ErrNotReady             Result = 600
	ErrIllegalAddress       Result = 700
	ErrLaunchOutOfResources Result = 701
	ErrLaunchTimeout        Result = 702
	ErrMisalignedAddress    Result = 716
	ErrIllegalInstruction   Result = 715
	ErrLaunchFailed         Result = 719
	ErrNotSupported         Result = 801
	ErrUnknown              Result = 999
)

var resultNames = map[Result]string{
	Success:                 "CUDA_SUCCESS",
	ErrInvalidValue:         "CUDA_ERROR_INVALID_VALUE",
	ErrOutOfMemory:          "CUDA_ERROR_OUT_OF_MEMORY",
	ErrNotInitialized:       "CUDA_ERROR_NOT_INITIALIZED",
	ErrDeinitialized:        "CUDA_ERROR_DEINITIALIZED",
	ErrNoDevice:             "CUDA_ERROR_NO_DEVICE",
	ErrInvalidDevice:        "CUDA_ERROR_INVALID_DEVICE",
	ErrInvalidImage:         "CUDA_ERROR_INVALID_IMAGE",
	ErrInvalidContext:       "CUDA_ERROR_INVALID_CONTEXT",
	ErrNoBinaryForGPU:       "CUDA_ERROR_NO_BINARY_FOR_GPU",
	ErrInvalidPTX:           "CUDA_ERROR_INVALID_PTX",
	ErrInvalidSource:        "CUDA_ERROR_INVALID_SOURCE",
	ErrFileNotFound:         "CUDA_ERROR_FILE_NOT_FOUND",
	ErrInvalidHandle:        "CUDA_ERROR_INVALID_HANDLE",
	ErrNotFound:             "CUDA_ERROR_NOT_FOUND",
	ErrNotReady:             "CUDA_ERROR_NOT_READY",
	ErrIllegalAddress:       "CUDA_ERROR_ILLEGAL_ADDRESS",
	ErrLaunchOutOfResources: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	ErrLaunchTimeout:        "CUDA_ERROR_LAUNCH_TIMEOUT",
	ErrMisalignedAddress:    "CUDA_ERROR_MISALIGNED_ADDRESS",
	ErrIllegalInstruction:   "CUDA_ERROR_ILLEGAL_INSTRUCTION",
	ErrLaunchFailed:         "CUDA_ERROR_LAUNCH_FAILED",
	ErrNotSupported:         "CUDA_ERROR_NOT_SUPPORTED",
	ErrUnknown:              "CUDA_ERROR_UNKNOWN",
}

// String returns the CUDA name of r, such as "CUDA_ERROR_INVALID_PTX".
func (r Result) String() string {
	if s, ok := resultNames[r]; ok {
		return s
	}
	return fmt.Sprintf("CUresult(%d)", int(r))
}

// Error is a driver failure: a CUresult-style code, the call that failed, and
// a message that says what was wrong.
type Error struct {
	Code Result
	Op   string // the driver call, e.g. "cuModuleLoadData"
	Msg  string
}

func (e *Error) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("%s: %s", e.Op, e.Code)
	}
	return fmt.Sprintf("%s: %s: %s", e.Op, e.Code, e.Msg)
}

// Errorf builds an *Error with a formatted message.
func Errorf(code Result, op, format string, args ...any) *Error {
	return &Error{Code: code, Op: op, Msg: fmt.Sprintf(format, args...)}
}

// Code extracts the Result of err: Success for nil, the code of an *Error in
// err's chain, and ErrUnknown otherwise.
func Code(err error) Result {
	if err == nil {
		return Success
	}
	var e *Error
	if !errors.As(err, &e) {
		return ErrUnknown
	}
	return e.Code
}

// Copy is one copy of a batch (BatchCopier): Host's bytes to device
// memory at Dev, or, FromDevice, len(Host) bytes of device memory at Dev
// into Host.
type Copy struct {
	Dev        DevicePtr
	Host       []byte
	FromDevice bool
}

// BatchCopier is a Context that runs several copies between host and
// device memory as one call: a copy's fixed cost (on a real GPU a call on
// the driver's thread and a wait for the device, tens of microseconds)
// is paid once for the batch. Phase 2 copies in the runs of guest pages
// that changed, and brings back the stretches of pages only the device
// holds, in batches.
type BatchCopier interface {
	// CopyBatch runs the copies in order and returns once all are
	// done. After an error, which names the copy that failed, the
	// copies after that one may or may not have run.
	CopyBatch(copies []Copy) error
}

// MappedAllocator is a Context that can allocate host memory the device
// reaches directly (cuMemHostAlloc with CU_MEMHOSTALLOC_DEVICEMAP): what
// a kernel stores there is the host's to read, with no copy, once the
// kernel has finished (Synchronize). Phase 2's kernels write their error
// record there, so that a launch reads it without a call to the driver.
type MappedAllocator interface {
	// AllocMapped returns n bytes of host memory, zeroed, and the device
	// address kernels reach them at, valid until FreeMapped or the
	// context's Close. No copy takes that address.
	AllocMapped(n uint64) ([]byte, DevicePtr, error)
	// FreeMapped releases a buffer AllocMapped returned.
	FreeMapped(b []byte) error
}

// PinnedAllocator is a Context that can allocate page-locked host memory
// (cuMemAllocHost): a copy to or from it runs at the bus's speed, where a
// copy from ordinary memory goes through the driver's own staging first.
// A caller that gathers the bytes it copies into a buffer of its own
// (phase 2 gathers guest pages) makes that buffer pinned, and saves a
// host copy of every byte.
type PinnedAllocator interface {
	// AllocPinned returns n bytes of page-locked host memory, valid until
	// FreePinned or the context's Close.
	AllocPinned(n uint64) ([]byte, error)
	// FreePinned releases a buffer AllocPinned returned.
	FreePinned(b []byte) error
}

// StridedCopier is a Context that copies rows at a fixed stride from
// device memory to host memory in one call (cuMemcpy2D). Phase 2 brings
// back a walk down a matrix's column, a page of every row, that way:
// a copy a page costs a driver call each (tens of microseconds on an
// H100), where the rows' bytes themselves take microseconds.
type StridedCopier interface {
	// CopyDtoHStrided copies rows rows of width bytes, the first at src
	// and each next pitch bytes after the one before, into dst, packed
	// (len(dst) must be rows*width; pitch at least width).
	CopyDtoHStrided(dst []byte, src DevicePtr, width, pitch, rows uint64) error
}
