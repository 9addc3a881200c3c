package gpusim

import (
	"encoding/binary"
	"math"
	"os"
	"testing"

	"github.com/gxbit/gxbit/gpu"
)

// harness wraps a context for tests.
type harness struct {
	t   testing.TB
	ctx gpu.Context
}

func newHarness(t testing.TB, opts Options) *harness {
	t.Helper()
	d := New(opts)
	if err := d.Init(); err != nil {
		t.Fatal(err)
	}
	ctx, err := d.NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	return &harness{t: t, ctx: ctx}
}

func (h *harness) load(src string) gpu.Module {
	h.t.Helper()
	m, err := h.ctx.LoadModule(src)
	if err != nil {
		h.t.Fatalf("LoadModule: %v", err)
	}
	return m
}

func (h *harness) loadFile(name string) gpu.Module {
	h.t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.load(string(b))
}

func (h *harness) fn(m gpu.Module, name string) gpu.Function {
	h.t.Helper()
	f, err := m.Function(name)
	if err != nil {
		h.t.Fatal(err)
	}
	return f
}

func (h *harness) upload(b []byte) gpu.DevicePtr {
	h.t.Helper()
	p, err := h.ctx.Alloc(uint64(max(len(b), 1)))
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.ctx.CopyHtoD(p, b); err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) download(p gpu.DevicePtr, n int) []byte {
	h.t.Helper()
	b := make([]byte, n)
	if err := h.ctx.CopyDtoH(b, p); err != nil {
		h.t.Fatal(err)
	}
	return b
}

func f32s(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func toF32s(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func u32s(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

func toU32s(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

func u64s(v []uint64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

func toU64s(b []byte) []uint64 {
	v := make([]uint64, len(b)/8)
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return v
}

func p32(v uint32) []byte   { return binary.LittleEndian.AppendUint32(nil, v) }
func p64(v uint64) []byte   { return binary.LittleEndian.AppendUint64(nil, v) }
func pf32(v float32) []byte { return p32(math.Float32bits(v)) }
func pptr(p gpu.DevicePtr) []byte {
	return p64(uint64(p))
}

func dim(x, y, z uint32) gpu.Dim3 { return gpu.Dim3{X: x, Y: y, Z: z} }
