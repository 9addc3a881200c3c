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
	in := newJITInput(ptx, level)
	defer in.unpin()
	var state uintptr
	if err := l.check(l.cuLinkCreate(in.n(), in.opts(), in.vals(), &state), "cuLinkCreate_v2"); err != nil {
		return nil, err
	}
	defer l.cuLinkDestroy(state)
	name := []byte("gxbit.ptx\x00")
	in.pin.Pin(&name[0])
	if r := l.cuLinkAddData(state, jitInputPTX, in.image(), uint64(len(in.img)), &name[0], 0, nil, nil); r != 0 {
		return nil, in.fail(l, r, "cuLinkAddData_v2")
	}
	var cubin unsafe.Pointer
	var size uint64
	if r := l.cuLinkComplete(state, &cubin, &size); r != 0 {
		return nil, in.fail(l, r, "cuLinkComplete")
	}
	return append([]byte(nil), unsafe.Slice((*byte)(cubin), size)...), nil
}

// jitInput is PTX text as the JIT takes it (NUL-terminated), with the
// options every compile passes (the error log's buffer and size, the
// optimization level where one is set), all pinned until unpin.
type jitInput struct {
	img, logBuf []byte
	o           []int32
	v           []uintptr
	pin         runtime.Pinner
}

// newJITInput prepares ptx for a compile at optimization level (none
// when negative).
func newJITInput(ptx string, level int) *jitInput {
	in := &jitInput{img: make([]byte, len(ptx)+1), logBuf: make([]byte, jitLogBytes)}
	copy(in.img, ptx)
	in.o = []int32{jitErrorLogBuffer, jitErrorLogBufferSize}
	in.v = []uintptr{uintptr(unsafe.Pointer(&in.logBuf[0])), uintptr(len(in.logBuf))}
	if level >= 0 {
		in.o, in.v = append(in.o, jitOptimizationLevel), append(in.v, uintptr(level))
	}
	in.pin.Pin(&in.img[0])
	in.pin.Pin(&in.logBuf[0])
	in.pin.Pin(&in.o[0])
	in.pin.Pin(&in.v[0])
	return in
}

func (in *jitInput) image() unsafe.Pointer { return unsafe.Pointer(&in.img[0]) }
func (in *jitInput) n() uint32             { return uint32(len(in.o)) }
func (in *jitInput) opts() unsafe.Pointer  { return unsafe.Pointer(&in.o[0]) }
func (in *jitInput) vals() unsafe.Pointer  { return unsafe.Pointer(&in.v[0]) }
func (in *jitInput) unpin()                { in.pin.Unpin() }

// fail is op's error r with the compiler's log, which names the
// offending line of bad PTX.
func (in *jitInput) fail(l *lib, r cuResult, op string) error {
	log := in.logBuf
	if n := in.v[1]; n < uintptr(len(log)) {
		log = log[:n]
	}
	if i := strings.IndexByte(string(log), 0); i >= 0 {
		log = log[:i]
	}
	return l.wrap(r, op, strings.TrimSpace(string(log)))
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
