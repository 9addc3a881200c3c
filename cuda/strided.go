package cuda

import (
	"fmt"
	"unsafe"

	"github.com/gxbit/gxbit/gpu"
)

// memcpy2D is the driver's CUDA_MEMCPY2D: the source and destination of
// a copy of Height rows of WidthInBytes bytes, each side's rows Pitch
// bytes apart. Every field is 8 bytes wide, the memory types with their
// padding, as the structure is laid out on 64-bit hosts.
type memcpy2D struct {
	srcXInBytes, srcY uint64
	srcMemoryType     uint64 // CUmemorytype (4 bytes) and padding
	srcHost           unsafe.Pointer
	srcDevice         uint64
	srcArray          uintptr
	srcPitch          uint64
	dstXInBytes, dstY uint64
	dstMemoryType     uint64
	dstHost           unsafe.Pointer
	dstDevice         uint64
	dstArray          uintptr
	dstPitch          uint64
	widthInBytes      uint64
	height            uint64
}

// The CUmemorytype values a copy names.
const (
	memoryTypeHost   = 1
	memoryTypeDevice = 2
)

// CopyDtoHStrided implements gpu.StridedCopier with one cuMemcpy2D_v2;
// a library without it copies the rows one call each.
func (c *Context) CopyDtoHStrided(dst []byte, src gpu.DevicePtr, width, pitch, rows uint64) error {
	const op = "cuMemcpy2D_v2"
	if width == 0 || rows == 0 {
		return nil
	}
	if pitch < width || uint64(len(dst)) != width*rows {
		return fmt.Errorf("cuda: %s: %d rows of %d bytes %d apart into %d bytes", op, rows, width, pitch, len(dst))
	}
	return c.run(op, func() error {
		if err := c.checkSpan(op, src, pitch*(rows-1)+width); err != nil {
			return err
		}
		if c.l.cuMemcpy2D == nil {
			for r := uint64(0); r < rows; r++ {
				if err := c.dtoh(dst[r*width:(r+1)*width], src+gpu.DevicePtr(r*pitch)); err != nil {
					return err
				}
			}
			return nil
		}
		p := memcpy2D{
			srcMemoryType: memoryTypeDevice, srcDevice: uint64(src), srcPitch: pitch,
			dstMemoryType: memoryTypeHost, dstHost: unsafe.Pointer(&dst[0]), dstPitch: width,
			widthInBytes: width, height: rows,
		}
		return c.l.check(c.l.cuMemcpy2D(&p), op)
	})
}
