package cuda

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/gxbit/gxbit/gpu"
)

// gateTestPTX is a kernel of a few instructions: thread i stores i.
const gateTestPTX = `.version 7.0
.target sm_50
.address_size 64

.visible .entry ids(.param .u64 ids_out)
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<5>;
	ld.param.u64 %rd1, [ids_out];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd3, %r1, 4;
	add.u64 %rd4, %rd2, %rd3;
	st.global.u32 [%rd4], %r1;
	ret;
}
`

// gateFixture is a context with the ids kernel loaded and its output.
func gateFixture(t testing.TB) (*Context, gpu.Function, gpu.DevicePtr) {
	d := New()
	if err := d.Init(); err != nil {
		t.Skipf("no CUDA back end here: %v", err)
	}
	gc, err := d.NewContext(0)
	if err != nil {
		t.Fatalf("NewContext: %v", err)
	}
	t.Cleanup(func() { _ = gc.Close() })
	m, err := gc.LoadModule(gateTestPTX)
	if err != nil {
		t.Fatalf("LoadModule: %v", err)
	}
	f, err := m.Function("ids")
	if err != nil {
		t.Fatalf("Function: %v", err)
	}
	out, err := gc.Alloc(4 * 128)
	if err != nil {
		t.Fatalf("Alloc: %v", err)
	}
	return gc.(*Context), f, out
}

// launchIDs launches the ids kernel once and waits for it.
func launchIDs(t testing.TB, c *Context, f gpu.Function, out gpu.DevicePtr) gpu.LaunchStats {
	cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1, Y: 1, Z: 1}, Block: gpu.Dim3{X: 128, Y: 1, Z: 1}}
	if err := c.Launch(f, cfg, [][]byte{binary.LittleEndian.AppendUint64(nil, uint64(out))}); err != nil {
		t.Fatalf("Launch: %v", err)
	}
	if err := c.Synchronize(); err != nil {
		t.Fatalf("Synchronize: %v", err)
	}
	return c.LastLaunchStats()
}

// TestGateHoldsLaunches checks, on a real GPU, that launches after a
// kernel's first are gated (gate.go): the stream waits on the pinned word
// while each launch is queued, and the worker, not the timer, opens it
// (a hundred launches take far less than a hundred timeouts). A driver
// without stream memory operations fails it: its kernel times would
// include their submission.
func TestGateHoldsLaunches(t *testing.T) {
	c, f, out := gateFixture(t)
	const launches = 100
	begin := time.Now()
	for range launches {
		st := launchIDs(t, c, f, out)
		if st.Duration <= 0 || st.Submit <= 0 {
			t.Fatalf("kernel time %v, submission %v: want both positive", st.Duration, st.Submit)
		}
	}
	took := time.Since(begin)
	var next uint32
	var off bool
	_ = c.run("gate", func() error { next, off = c.gate.next, c.gate.off; return nil })
	if off || next != launches {
		t.Fatalf("gate off %v after %d launches (next wait value %d): kernel times include their submission", off, launches, next)
	}
	if took > launches*gateTimeout/10 {
		t.Errorf("%d gated launches took %v: the gate waits for its timer", launches, took)
	}
	got := make([]byte, 4*128)
	if err := c.CopyDtoH(got, out); err != nil {
		t.Fatal(err)
	}
	for i := range 128 {
		if v := binary.LittleEndian.Uint32(got[4*i:]); v != uint32(i) {
			t.Fatalf("out[%d] = %d after gated launches", i, v)
		}
	}
}

// BenchmarkLaunchTiming launches a tiny kernel with and without the gate
// and reports the mean kernel time and submission each launch reported
// (kernel-ns/op, submit-ns/op): without the gate the kernel time holds
// the submission.
func BenchmarkLaunchTiming(b *testing.B) {
	for _, gated := range []bool{true, false} {
		name := "gated"
		if !gated {
			name = "ungated"
		}
		b.Run(name, func(b *testing.B) {
			c, f, out := gateFixture(b)
			launchIDs(b, c, f, out) // the first launch is never gated
			if !gated {
				_ = c.run("gate", func() error { c.gate.tried, c.gate.off = true, true; return nil })
			}
			var kernel, submit time.Duration
			b.ResetTimer()
			for range b.N {
				st := launchIDs(b, c, f, out)
				kernel += st.Duration
				submit += st.Submit
			}
			b.ReportMetric(float64(kernel.Nanoseconds())/float64(b.N), "kernel-ns/op")
			b.ReportMetric(float64(submit.Nanoseconds())/float64(b.N), "submit-ns/op")
		})
	}
}
