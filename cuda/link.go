package cuda

import (
	"runtime"
	"strings"
	"unsafe"
)

// jitInputPTX is CUjitInputType's CU_JIT_INPUT_PTX (cuda.h).
const jitInputPTX = 1

// canLink reports whether the library has the linker's entry points.
func (l *lib) canLink() bool {
	return l.cuLinkCreate != nil && l.cuLinkAddData != nil && l.cuLinkComplete != nil && l.cuLinkDestroy != nil
}

// link compiles ptx to a cubin for the device of the context current on
// the calling thread, with the driver's linker (cuLinkCreate,
// cuLinkAddData, cuLinkComplete), and returns a copy of the image. The
// caller locks its thread and makes a context current. When the compiler
// rejects the PTX, the error carries its log.
func (l *lib) link(ptx string, level int) ([]byte, error) {
	img := make([]byte, len(ptx)+1)
	copy(img, ptx)
	logBuf := make([]byte, jitLogBytes)
	opts := []int32{jitErrorLogBuffer, jitErrorLogBufferSize}
	vals := []uintptr{uintptr(unsafe.Pointer(&logBuf[0])), uintptr(len(logBuf))}
	if level >= 0 {
		opts, vals = append(opts, jitOptimizationLevel), append(vals, uintptr(level))
	}
	var pin runtime.Pinner
	pin.Pin(&img[0])
	pin.Pin(&logBuf[0])
	pin.Pin(&opts[0])
	pin.Pin(&vals[0])
	defer pin.Unpin()
	var state uintptr
	if err := l.check(l.cuLinkCreate(uint32(len(opts)), unsafe.Pointer(&opts[0]), unsafe.Pointer(&vals[0]), &state), "cuLinkCreate_v2"); err != nil {
		return nil, err
	}
	defer l.cuLinkDestroy(state)
	name := []byte("gxbit.ptx\x00")
	pin.Pin(&name[0])
	logged := func(r cuResult, op string) error {
		log := logBuf
		if n := vals[1]; n < uintptr(len(logBuf)) {
			log = logBuf[:n]
		}
		if i := strings.IndexByte(string(log), 0); i >= 0 {
			log = log[:i]
		}
		return l.wrap(r, op, strings.TrimSpace(string(log)))
	}
	if r := l.cuLinkAddData(state, jitInputPTX, unsafe.Pointer(&img[0]), uint64(len(img)), &name[0], 0, nil, nil); r != 0 {
		return nil, logged(r, "cuLinkAddData_v2")
	}
	var cubin unsafe.Pointer
	var size uint64
	if r := l.cuLinkComplete(state, &cubin, &size); r != 0 {
		return nil, logged(r, "cuLinkComplete")
	}
	return append([]byte(nil), unsafe.Slice((*byte)(cubin), size)...), nil
}

// loadImage loads a compiled image (a cubin from link) into c, with c
// current on the calling thread.
func (c *Context) loadImage(img []byte, ptx string) (*Module, error) {
	var pin runtime.Pinner
	pin.Pin(&img[0])
	defer pin.Unpin()
	var h uintptr
	if err := c.l.check(c.l.cuModuleLoadDataEx(&h, unsafe.Pointer(&img[0]), 0, nil, nil), "cuModuleLoadDataEx"); err != nil {
		return nil, err
	}
	return &Module{c: c, h: h, ptx: ptx}, nil
}
