package gpusim

import (
	"fmt"

	"github.com/gxbit/gxbit/gpu"
)

// CopyDtoHStrided implements gpu.StridedCopier: rows rows of width bytes,
// pitch bytes apart on the device, packed into dst.
func (c *Context) CopyDtoHStrided(dst []byte, src gpu.DevicePtr, width, pitch, rows uint64) error {
	const op = "cuMemcpy2D"
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(op); err != nil {
		return err
	}
	if width == 0 || rows == 0 {
		return nil
	}
	if pitch < width || uint64(len(dst)) != width*rows {
		return fmt.Errorf("gpusim: %s: %d rows of %d bytes %d apart into %d bytes", op, rows, width, pitch, len(dst))
	}
	b, err := c.mem.span(op, uint64(src), pitch*(rows-1)+width)
	if err != nil {
		return err
	}
	for r := uint64(0); r < rows; r++ {
		copy(dst[r*width:(r+1)*width], b[r*pitch:r*pitch+width])
	}
	return nil
}
