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

// TestKernelSpeedup checks the fast-GPU emulation: the driver is named
// "sim-fast", a launch reports its time over the speedup as its Duration,
// the emulated launch latency as its Submit, and the rest of its time as
// Unseen.
func TestKernelSpeedup(t *testing.T) {
	if n := New(Options{}).Name(); n != "sim" {
		t.Errorf("plain driver named %q, want sim", n)
	}
	h := newHarness(t, Options{KernelSpeedup: 1000})
	if n := New(Options{KernelSpeedup: 1000}).Name(); n != "sim-fast" {
		t.Errorf("emulating driver named %q, want sim-fast", n)
	}
	m := h.loadFile("prototype.ptx")
	out := h.upload(make([]byte, 4*32))
	t0 := time.Now()
	if err := h.ctx.Launch(h.fn(m, "k"), gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(32, 1, 1)}, [][]byte{pptr(out)}); err != nil {
		t.Fatal(err)
	}
	wall := time.Since(t0)
	ls := h.ctx.LastLaunchStats()
	if ls.Duration <= 0 || ls.Duration > wall/1000+time.Microsecond {
		t.Errorf("emulated duration %v for a launch of %v (speedup 1000)", ls.Duration, wall)
	}
	if ls.Submit < EmulatedLaunchLatency || ls.Submit > EmulatedLaunchLatency+wall {
		t.Errorf("emulated submission %v for a launch of %v (latency %v)", ls.Submit, wall, EmulatedLaunchLatency)
	}
	if ls.Unseen > wall || ls.Unseen > 0 && ls.Duration+ls.Unseen+EmulatedLaunchLatency > wall {
		t.Errorf("duration %v, latency %v and unseen %v exceed the launch's %v", ls.Duration, EmulatedLaunchLatency, ls.Unseen, wall)
	}
	for i, v := range toU32s(h.download(out, 4*32)) {
		if v != uint32(3*i) {
			t.Fatalf("out[%d] = %d, want %d: the emulation must still run the kernel", i, v, 3*i)
		}
	}
}

// TestSubmitLatency checks that a launch's emulated submission is reported
// as its Submit and kept out of its Duration, the kernel's own time.
func TestSubmitLatency(t *testing.T) {
	const latency = 30 * time.Millisecond
	h := newHarness(t, Options{SubmitLatency: latency})
	m := h.loadFile("prototype.ptx")
	out := h.upload(make([]byte, 4*32))
	t0 := time.Now()
	if err := h.ctx.Launch(h.fn(m, "k"), gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(32, 1, 1)}, [][]byte{pptr(out)}); err != nil {
		t.Fatal(err)
	}
	wall := time.Since(t0)
	ls := h.ctx.LastLaunchStats()
	if ls.Submit < latency || ls.Submit > wall {
		t.Errorf("submission %v, want at least %v and at most the launch's %v", ls.Submit, latency, wall)
	}
	if ls.Duration <= 0 || ls.Duration > wall-latency {
		t.Errorf("kernel time %v of a launch of %v counts the %v submission", ls.Duration, wall, latency)
	}
}
