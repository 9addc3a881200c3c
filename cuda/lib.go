package cuda

import (
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"
)

// libName is the soname of the NVIDIA driver library.
const libName = "libcuda.so.1"

// cuResult is the raw CUresult returned by every driver entry point.
type cuResult int32

// lib holds the driver entry points resolved from libcuda.so.1. Every field
// but cuModuleLoadDataEx's is called only in the driver's serialised
// calls (caller), with the thread locked and the context current.
type lib struct {
	handle uintptr

	cuInit               func(flags uint32) cuResult
	cuGetErrorName       func(res cuResult, name **byte) cuResult
	cuDeviceGetCount     func(count *int32) cuResult
	cuDeviceGet          func(dev *int32, ordinal int32) cuResult
	cuDeviceGetName      func(name *byte, n int32, dev int32) cuResult
	cuDeviceTotalMem     func(bytes *uint64, dev int32) cuResult
	cuDeviceGetAttribute func(v *int32, attr int32, dev int32) cuResult
	cuCtxCreate          func(ctx *uintptr, flags uint32, dev int32) cuResult
	cuCtxDestroy         func(ctx uintptr) cuResult
	cuCtxSetCurrent      func(ctx uintptr) cuResult
	cuCtxSynchronize     func() cuResult
	cuModuleLoadDataEx   func(mod *uintptr, image unsafe.Pointer, n uint32, opts unsafe.Pointer, vals unsafe.Pointer) cuResult
	cuModuleUnload       func(mod uintptr) cuResult
	cuModuleGetFunction  func(fn *uintptr, mod uintptr, name string) cuResult
	cuMemAlloc           func(p *uint64, n uint64) cuResult
	cuMemFree            func(p uint64) cuResult
	cuMemcpyHtoD         func(dst uint64, src unsafe.Pointer, n uint64) cuResult
	cuMemcpyDtoH         func(dst unsafe.Pointer, src uint64, n uint64) cuResult
	cuMemcpyDtoD         func(dst, src uint64, n uint64) cuResult
	cuMemAllocHost       func(p *unsafe.Pointer, n uint64) cuResult
	cuMemFreeHost        func(p unsafe.Pointer) cuResult
	cuMemcpyHtoDAsync    func(dst uint64, src unsafe.Pointer, n uint64, stream uintptr) cuResult
	cuMemcpyDtoHAsync    func(dst unsafe.Pointer, src uint64, n uint64, stream uintptr) cuResult
	cuMemcpyDtoDAsync    func(dst, src uint64, n uint64, stream uintptr) cuResult
	cuMemsetD8           func(dst uint64, b uint8, n uint64) cuResult
	cuLaunchKernel       func(fn uintptr, gx, gy, gz, bx, by, bz, shared uint32, stream uintptr, params unsafe.Pointer, extra unsafe.Pointer) cuResult
	cuEventCreate        func(ev *uintptr, flags uint32) cuResult
	cuEventRecord        func(ev uintptr, stream uintptr) cuResult
	cuEventSynchronize   func(ev uintptr) cuResult
	cuEventElapsedTime   func(ms *float32, start, end uintptr) cuResult
	cuEventDestroy       func(ev uintptr) cuResult

	// Optional entry points, nil when the library lacks them: the gate
	// that keeps launch submission out of kernel times (gate.go).
	cuMemHostAlloc            func(p *unsafe.Pointer, n uint64, flags uint32) cuResult
	cuMemHostGetDevicePointer func(dev *uint64, p unsafe.Pointer, flags uint32) cuResult
	cuStreamWaitValue32       func(stream uintptr, addr uint64, value uint32, flags uint32) cuResult
	// cuMemcpy2D copies rows at a stride (strided.go).
	cuMemcpy2D func(p *memcpy2D) cuResult
	// The driver's linker, which compiles PTX to a cubin without loading
	// it (link.go).
	cuLinkCreate   func(n uint32, opts unsafe.Pointer, vals unsafe.Pointer, state *uintptr) cuResult
	cuLinkAddData  func(state uintptr, kind int32, data unsafe.Pointer, size uint64, name *byte, n uint32, opts unsafe.Pointer, vals unsafe.Pointer) cuResult
	cuLinkComplete func(state uintptr, cubin *unsafe.Pointer, size *uint64) cuResult
	cuLinkDestroy  func(state uintptr) cuResult
}

// openLib loads libcuda.so.1 and resolves every entry point the driver uses.
// It returns an error, never panics, when the library or a symbol is missing.
func openLib() (*lib, error) {
	h, err := purego.Dlopen(libName, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("%s could not be loaded: %w", libName, err)
	}
	l := &lib{handle: h}
	syms := []struct {
		fptr any
		name string
	}{
		{&l.cuInit, "cuInit"},
		{&l.cuGetErrorName, "cuGetErrorName"},
		{&l.cuDeviceGetCount, "cuDeviceGetCount"},
		{&l.cuDeviceGet, "cuDeviceGet"},
		{&l.cuDeviceGetName, "cuDeviceGetName"},
		{&l.cuDeviceTotalMem, "cuDeviceTotalMem_v2"},
		{&l.cuDeviceGetAttribute, "cuDeviceGetAttribute"},
		{&l.cuCtxCreate, "cuCtxCreate_v2"},
		{&l.cuCtxDestroy, "cuCtxDestroy_v2"},
		{&l.cuCtxSetCurrent, "cuCtxSetCurrent"},
		{&l.cuCtxSynchronize, "cuCtxSynchronize"},
		{&l.cuModuleLoadDataEx, "cuModuleLoadDataEx"},
		{&l.cuModuleUnload, "cuModuleUnload"},
		{&l.cuModuleGetFunction, "cuModuleGetFunction"},
		{&l.cuMemAlloc, "cuMemAlloc_v2"},
		{&l.cuMemFree, "cuMemFree_v2"},
		{&l.cuMemcpyHtoD, "cuMemcpyHtoD_v2"},
		{&l.cuMemcpyDtoH, "cuMemcpyDtoH_v2"},
		{&l.cuMemcpyDtoD, "cuMemcpyDtoD_v2"},
		{&l.cuMemAllocHost, "cuMemAllocHost_v2"},
		{&l.cuMemFreeHost, "cuMemFreeHost"},
		{&l.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"},
		{&l.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"},
		{&l.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"},
		{&l.cuMemsetD8, "cuMemsetD8_v2"},
		{&l.cuLaunchKernel, "cuLaunchKernel"},
		{&l.cuEventCreate, "cuEventCreate"},
		{&l.cuEventRecord, "cuEventRecord"},
		{&l.cuEventSynchronize, "cuEventSynchronize"},
		{&l.cuEventElapsedTime, "cuEventElapsedTime"},
		{&l.cuEventDestroy, "cuEventDestroy_v2"},
	}
	for _, s := range syms {
		addr, err := purego.Dlsym(h, s.name)
		if err != nil || addr == 0 {
			_ = purego.Dlclose(h)
			return nil, fmt.Errorf("%s has no symbol %s: %v", libName, s.name, err)
		}
		purego.RegisterFunc(s.fptr, addr)
	}
	optional := []struct {
		fptr any
		name string
	}{
		{&l.cuMemHostAlloc, "cuMemHostAlloc"},
		{&l.cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2"},
		{&l.cuStreamWaitValue32, "cuStreamWaitValue32_v2"},
		{&l.cuMemcpy2D, "cuMemcpy2D_v2"},
		{&l.cuLinkCreate, "cuLinkCreate_v2"},
		{&l.cuLinkAddData, "cuLinkAddData_v2"},
		{&l.cuLinkComplete, "cuLinkComplete"},
		{&l.cuLinkDestroy, "cuLinkDestroy"},
	}
	for _, s := range optional {
		if addr, err := purego.Dlsym(h, s.name); err == nil && addr != 0 {
			purego.RegisterFunc(s.fptr, addr)
		}
	}
	return l, nil
}

// errorName asks the library for the symbolic name of r, such as
// "CUDA_ERROR_INVALID_PTX".
func (l *lib) errorName(r cuResult) string {
	var p *byte
	if l.cuGetErrorName(r, &p) != 0 || p == nil {
		return fmt.Sprintf("CUresult(%d)", int(r))
	}
	return cString(p)
}

// cString copies the NUL-terminated C string at p.
func cString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}
