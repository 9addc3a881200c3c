package gpusim

import (
	"testing"
	"time"

	"github.com/gxbit/gxbit/gpu"
)

// TestLaunchTimeLimit is the regression test for issue 12 item 8: with
// Options.MaxLaunchTime, a kernel that never ends and a grid too big to
// finish both stop with CUDA_ERROR_LAUNCH_TIMEOUT, and the context works
// afterwards.
func TestLaunchTimeLimit(t *testing.T) {
	h := newHarness(t, Options{MaxLaunchTime: 100 * time.Millisecond})
	m := h.loadFile("faults.ptx")
	start := time.Now()
	err := h.ctx.Launch(h.fn(m, "forever"), gpu.LaunchConfig{Grid: dim(2, 1, 1), Block: dim(64, 1, 1)}, nil)
	wantCode(t, err, gpu.ErrLaunchTimeout, "kernel forever", "still running after 100ms")
	if err := h.ctx.Synchronize(); gpu.Code(err) != gpu.ErrLaunchTimeout {
		t.Errorf("Synchronize after the timeout: %v", err)
	}
	huge := h.load(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry nop() { ret; }\n")
	err = h.ctx.Launch(h.fn(huge, "nop"), gpu.LaunchConfig{Grid: dim(1<<31-1, 65535, 65535), Block: dim(1024, 1, 1)}, nil)
	wantCode(t, err, gpu.ErrLaunchTimeout, "kernel nop")
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the two launches took %v to time out", d)
	}
	calls := h.loadFile("prototype.ptx")
	out := h.upload(make([]byte, 4*32))
	if err := h.ctx.Launch(h.fn(calls, "k"), gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(32, 1, 1)}, [][]byte{pptr(out)}); err != nil {
		t.Fatalf("launch after the timeouts: %v", err)
	}
	for i, v := range toU32s(h.download(out, 4*32)) {
		if v != uint32(3*i) {
			t.Fatalf("out[%d] = %d, want %d", i, v, 3*i)
		}
	}
}
