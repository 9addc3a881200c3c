package gpusim

import (
	"os"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/ptx"
)

func wantCode(t *testing.T, err error, code gpu.Result, substrs ...string) {
	t.Helper()
	if gpu.Code(err) != code {
		t.Fatalf("err = %v, want code %v", err, code)
	}
	for _, s := range substrs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("err = %q, want it to mention %q", err, s)
		}
	}
}

func TestFaults(t *testing.T) {
	h := newHarness(t, Options{Workers: 2, MaxWarpInstructions: 100000})
	m := h.loadFile("faults.ptx")
	buf := h.upload(make([]byte, 4*1000))

	// Block 3 thread 232 is the first to pass the end: 3*256+232 = 1000.
	err := h.ctx.Launch(h.fn(m, "oob"), gpu.LaunchConfig{Grid: dim(4, 1, 1), Block: dim(256, 1, 1)},
		[][]byte{pptr(buf), p32(0)})
	wantCode(t, err, gpu.ErrIllegalAddress, "kernel oob", "PTX line 20", "st.global.u32", "thread (232,0,0)", "block (3,0,0)")
	if !strings.Contains(err.Error(), "0x") {
		t.Errorf("err %q lacks the address", err)
	}
	if err2 := h.ctx.Synchronize(); gpu.Code(err2) != gpu.ErrIllegalAddress {
		t.Errorf("Synchronize after a fault = %v", err2)
	}
	if err := h.ctx.Synchronize(); err != nil {
		t.Errorf("second Synchronize = %v", err)
	}
	// The same kernel in bounds works afterwards.
	if err := h.ctx.Launch(h.fn(m, "oob"), gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(1000, 1, 1)},
		[][]byte{pptr(buf), p32(0)}); err != nil {
		t.Fatal(err)
	}
	// Before the start of an allocation.
	err = h.ctx.Launch(h.fn(m, "oob"), gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(32, 1, 1)},
		[][]byte{pptr(buf - 64), p32(0)})
	wantCode(t, err, gpu.ErrIllegalAddress, "thread (0,0,0)", "block (0,0,0)")

	err = h.ctx.Launch(h.fn(m, "misaligned"), gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(32, 1, 1)},
		[][]byte{pptr(buf)})
	wantCode(t, err, gpu.ErrMisalignedAddress, "kernel misaligned", "PTX line 34", "thread (5,0,0)")

	err = h.ctx.Launch(h.fn(m, "null"), gpu.LaunchConfig{Grid: dim(1, 3, 1), Block: dim(8, 2, 1)}, nil)
	wantCode(t, err, gpu.ErrIllegalAddress, "kernel null", "thread (3,1,0)", "block (0,2,0)", "address 0x0")

	err = h.ctx.Launch(h.fn(m, "sharedoob"), gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(32, 1, 1)}, nil)
	wantCode(t, err, gpu.ErrIllegalAddress, "thread (16,0,0)", "shared address 0x40")

	err = h.ctx.Launch(h.fn(m, "forever"), gpu.LaunchConfig{Grid: dim(2, 1, 1), Block: dim(64, 1, 1)}, nil)
	wantCode(t, err, gpu.ErrLaunchTimeout, "forever", "100000")
}

func TestLaunchErrors(t *testing.T) {
	h := newHarness(t, Options{})
	m := h.loadFile("saxpy.ptx")
	f := h.fn(m, "saxpy")
	p := h.upload(make([]byte, 64))
	good := [][]byte{p32(1), pf32(1), pptr(p), pptr(p)}
	shapes := []gpu.LaunchConfig{
		{Grid: dim(0, 1, 1), Block: dim(32, 1, 1)},
		{Grid: dim(1, 1, 1), Block: dim(32, 0, 1)},
		{Grid: dim(1, 1, 1), Block: dim(1025, 1, 1)},
		{Grid: dim(1, 1, 1), Block: dim(32, 32, 2)},
		{Grid: dim(1, 1, 1), Block: dim(1, 1, 65)},
		{Grid: dim(1, 65536, 1), Block: dim(32, 1, 1)},
		{Grid: dim(1<<31, 1, 1), Block: dim(32, 1, 1)},
		{Grid: dim(1, 1, 1), Block: dim(32, 1, 1), SharedBytes: 48<<10 + 1},
	}
	for _, cfg := range shapes {
		if err := h.ctx.Launch(f, cfg, good); gpu.Code(err) != gpu.ErrInvalidValue {
			t.Errorf("grid %v block %v shared %d: err = %v, want invalid value", cfg.Grid, cfg.Block, cfg.SharedBytes, err)
		}
	}
	cfg := gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(32, 1, 1)}
	for _, params := range [][][]byte{good[:3], append(good, p32(0)), {p64(1), pf32(1), pptr(p), pptr(p)}} {
		if err := h.ctx.Launch(f, cfg, params); gpu.Code(err) != gpu.ErrInvalidValue {
			t.Errorf("params %v: err = %v, want invalid value", params, err)
		}
	}
	if err := h.ctx.Launch(f, cfg, good); err != nil {
		t.Errorf("good launch after errors: %v", err)
	}
	if ps := f.Params(); len(ps) != 4 || ps[1].Name != "saxpy_param_1" || ps[2].Size != 8 || ps[0].Align != 4 {
		t.Errorf("Params() = %+v", ps)
	}
	if _, err := m.Function("nope"); gpu.Code(err) != gpu.ErrNotFound {
		t.Errorf("unknown function: %v", err)
	}
}

func TestModuleErrors(t *testing.T) {
	h := newHarness(t, Options{})
	tests := []struct {
		src  string
		want []string
	}{
		{".version 8.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n\tfrob.u32 %r1;\n}\n", []string{"6:2", `unknown instruction "frob"`}},
		{".version 8.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n.reg .b32 %r<2>;\n\tadd.u32 %r1, %r1, %r5;\n}\n", []string{"7:20", "%r5 is not declared"}},
		{".version 8.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n.reg .b32 %r<2>;\n\tbra.uni L;\n}\n", []string{"7:10", "not a label"}},
	}
	for _, tc := range tests {
		_, err := h.ctx.LoadModule(tc.src)
		wantCode(t, err, gpu.ErrInvalidPTX, tc.want...)
	}
	// Valid PTX the simulator does not implement is ErrNotSupported.
	rec := ".version 8.0\n.target sm_90\n.address_size 64\n.func f()\n{\ncall f;\nret;\n}\n.entry k()\n{\ncall f;\nret;\n}\n"
	_, err := h.ctx.LoadModule(rec)
	wantCode(t, err, gpu.ErrNotSupported, "6:1", "recursive call to f")
}

func TestMemory(t *testing.T) {
	h := newHarness(t, Options{})
	var ptrs []gpu.DevicePtr
	for _, n := range []uint64{1, 3, 256, 1000, 4096} {
		p, err := h.ctx.Alloc(n)
		if err != nil {
			t.Fatal(err)
		}
		if p == 0 || p%256 != 0 {
			t.Errorf("Alloc(%d) = %#x, want nonzero and 256-byte aligned", n, p)
		}
		for _, q := range ptrs {
			if q == p {
				t.Errorf("duplicate address %#x", p)
			}
		}
		ptrs = append(ptrs, p)
	}
	if _, err := h.ctx.Alloc(0); gpu.Code(err) != gpu.ErrInvalidValue {
		t.Errorf("Alloc(0) = %v", err)
	}
	if err := h.ctx.CopyHtoD(ptrs[1], make([]byte, 4)); gpu.Code(err) != gpu.ErrInvalidValue {
		t.Errorf("overlong copy: %v", err)
	}
	if err := h.ctx.CopyDtoH(make([]byte, 2), ptrs[1]+2); gpu.Code(err) != gpu.ErrInvalidValue {
		t.Errorf("copy past end: %v", err)
	}
	if err := h.ctx.CopyDtoD(ptrs[2], ptrs[3], 257); gpu.Code(err) != gpu.ErrInvalidValue {
		t.Errorf("DtoD past end: %v", err)
	}
	if err := h.ctx.Memset(ptrs[3]+10, 0xab, 990); err != nil {
		t.Fatal(err)
	}
	if err := h.ctx.CopyDtoD(ptrs[2], ptrs[3]+8, 256); err != nil {
		t.Fatal(err)
	}
	b := h.download(ptrs[2], 256)
	if b[0] != 0 || b[1] != 0 || b[2] != 0xab || b[255] != 0xab {
		t.Errorf("memset/copy result %x", b[:4])
	}
	if err := h.ctx.Free(ptrs[2] + 1); gpu.Code(err) != gpu.ErrInvalidValue {
		t.Errorf("Free(inner pointer) = %v", err)
	}
	if err := h.ctx.Free(ptrs[2]); err != nil {
		t.Fatal(err)
	}
	if err := h.ctx.Free(ptrs[2]); gpu.Code(err) != gpu.ErrInvalidValue {
		t.Errorf("double Free = %v", err)
	}
	if err := h.ctx.CopyHtoD(ptrs[2], []byte{1}); gpu.Code(err) != gpu.ErrInvalidValue {
		t.Errorf("copy to freed memory = %v", err)
	}
	d := New(Options{})
	if p, err := d.Device(0); err != nil || p.Name != "gxbit gpusim" || p.ComputeMajor != 9 || p.WarpSize != 32 {
		t.Errorf("Device(0) = %+v, %v", p, err)
	}
	if _, err := d.Device(1); gpu.Code(err) != gpu.ErrInvalidDevice {
		t.Errorf("Device(1) = %v", err)
	}
}

// FuzzLoadModule checks that parsing, checking and decoding never panic and
// that every rejection is an ErrInvalidPTX (or an explicit not-supported)
// driver error.
func FuzzLoadModule(f *testing.F) {
	for _, name := range []string{"saxpy.ptx", "matmul.ptx", "divergence.ptx", "reduce.ptx", "atomics.ptx", "warp.ptx", "faults.ptx", "calls.ptx"} {
		if b, err := os.ReadFile("testdata/" + name); err == nil {
			f.Add(string(b))
		}
	}
	d := New(Options{MemoryBytes: 64 << 20})
	f.Fuzz(func(t *testing.T, src string) {
		ctx, err := d.NewContext(0)
		if err != nil {
			t.Fatal(err)
		}
		defer ctx.Close()
		m, err := ctx.LoadModule(src)
		if err != nil {
			if c := gpu.Code(err); c != gpu.ErrInvalidPTX && c != gpu.ErrNotSupported && c != gpu.ErrOutOfMemory {
				t.Fatalf("LoadModule error with code %v: %v", c, err)
			}
			return
		}
		m.Unload()
	})
}

// FuzzLaunch loads each input and launches every kernel in it with zeroed
// parameters and a small instruction budget: whatever the kernel does, the
// launch must end with a driver error or success, never an internal fault.
func FuzzLaunch(f *testing.F) {
	for _, name := range []string{"saxpy.ptx", "divergence.ptx", "reduce.ptx", "atomics.ptx", "warp.ptx", "calls.ptx"} {
		if b, err := os.ReadFile("testdata/" + name); err == nil {
			f.Add(string(b))
		}
	}
	d := New(Options{MemoryBytes: 64 << 20, MaxWarpInstructions: 20000, Workers: 1})
	f.Fuzz(func(t *testing.T, src string) {
		ctx, err := d.NewContext(0)
		if err != nil {
			t.Fatal(err)
		}
		defer ctx.Close()
		mod, err := ctx.LoadModule(src)
		if err != nil {
			return
		}
		impl := mod.(*module)
		for name := range impl.kernels {
			fn, err := mod.Function(name)
			if err != nil {
				t.Fatal(err)
			}
			var params [][]byte
			for _, p := range fn.Params() {
				params = append(params, make([]byte, p.Size))
			}
			err = ctx.Launch(fn, gpu.LaunchConfig{Grid: dim(2, 1, 1), Block: dim(40, 1, 1), SharedBytes: 64}, params)
			if err != nil && strings.Contains(err.Error(), "simulator fault") {
				t.Fatalf("kernel %s: %v", name, err)
			}
		}
	})
}

// TestSpecialRegsFromPTX checks that the decoder knows every special
// register the ptx package declares (the two lists must not drift).
func TestSpecialRegsFromPTX(t *testing.T) {
	for name := range ptx.SpecialRegs {
		_, fixed := sregKinds[name]
		_, dyn := dynSregs[name]
		if !fixed && !dyn {
			t.Errorf("special register %s of the ptx package is not decoded", name)
		}
	}
	for name := range sregKinds {
		if _, ok := ptx.SpecialRegs[name]; !ok {
			t.Errorf("the decoder fills %s, which the ptx package does not declare", name)
		}
	}
	for name := range dynSregs {
		if _, ok := ptx.SpecialRegs[name]; !ok {
			t.Errorf("the decoder reads %s, which the ptx package does not declare", name)
		}
	}
}
