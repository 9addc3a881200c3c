package cuda

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpu/gputest"
)

// newDriver returns an initialised driver, or skips t with the reason when
// no usable libcuda.so.1 or device is present.
func newDriver(t *testing.T) *Driver {
	t.Helper()
	d := New()
	if err := d.Init(); err != nil {
		t.Skipf("no CUDA back end here: %v", err)
	}
	return d
}

// faultChildEnv marks the child process that TestKernelFault starts.
const faultChildEnv = "GXBIT_CUDA_FAULT_CHILD"

// TestConformance runs the shared suite. A kernel fault poisons a CUDA
// process for good, so the fault tests run in a child process
// (TestKernelFault) and are left out here.
func TestConformance(t *testing.T) {
	gputest.RunWith(t, newDriver(t), gputest.Options{NoFaults: true})
}

// TestKernelFault runs gputest's fault tests in a child process of this test
// binary, so that the sticky error they cause does not reach other tests.
func TestKernelFault(t *testing.T) {
	if os.Getenv(faultChildEnv) == "1" {
		gputest.RunFaults(t, newDriver(t), gputest.Options{})
		return
	}
	newDriver(t) // skip without a GPU
	cmd := exec.Command(os.Args[0], "-test.run=^TestKernelFault$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), faultChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("child process:\n%s", out)
	if err != nil {
		t.Fatalf("fault tests failed in the child process: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: TestKernelFault/IllegalAddress") {
		t.Fatal("the child process did not run the fault tests")
	}
}

// TestInitWithoutGPU checks the contract when the back end is missing: Init
// fails with a *gpu.Error, never a panic, and says why. With a GPU present
// it checks that Init succeeds and is idempotent.
func TestInitWithoutGPU(t *testing.T) {
	d := New()
	if d.Name() != "cuda" {
		t.Errorf("Name() = %q", d.Name())
	}
	_, err := d.DeviceCount()
	if gpu.Code(err) != gpu.ErrNotInitialized {
		t.Errorf("DeviceCount before Init: %v, want %v", err, gpu.ErrNotInitialized)
	}
	err = d.Init()
	if err == nil {
		if err := d.Init(); err != nil {
			t.Errorf("second Init: %v", err)
		}
		return
	}
	var ge *gpu.Error
	if !errors.As(err, &ge) {
		t.Fatalf("Init error %v (%T) is not a *gpu.Error", err, err)
	}
	if ge.Code != gpu.ErrNotInitialized && ge.Code != gpu.ErrNoDevice {
		t.Errorf("Init code %v, want %v or %v", ge.Code, gpu.ErrNotInitialized, gpu.ErrNoDevice)
	}
	if ge.Code == gpu.ErrNotInitialized && !strings.Contains(err.Error(), libName) {
		t.Errorf("Init error %q does not name %s", err, libName)
	}
	if err2 := d.Init(); err2 != err {
		t.Errorf("second Init returned %v, want the first error", err2)
	}
	if _, err := d.NewContext(0); gpu.Code(err) != gpu.ErrNotInitialized {
		t.Errorf("NewContext after failed Init: %v", err)
	}
	if _, err := d.Device(0); gpu.Code(err) != gpu.ErrNotInitialized {
		t.Errorf("Device after failed Init: %v", err)
	}
}

// TestConcurrentCallers uses one context from many goroutines at once: all
// calls funnel through the driver's locked thread.
func TestConcurrentCallers(t *testing.T) {
	d := newDriver(t)
	c, err := d.NewContext(0)
	if err != nil {
		t.Fatalf("NewContext: %v", err)
	}
	defer c.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 1000 + g*37
			p, err := c.Alloc(uint64(n))
			if err != nil {
				errs <- err
				return
			}
			want := bytes.Repeat([]byte{byte(g)}, n)
			if err := c.CopyHtoD(p, want); err != nil {
				errs <- err
				return
			}
			got := make([]byte, n)
			if err := c.CopyDtoH(got, p); err != nil {
				errs <- err
				return
			}
			if !bytes.Equal(got, want) {
				errs <- errors.New("round trip differs")
			}
			if err := c.Free(p); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestTwoContexts interleaves calls on two contexts, which makes the worker
// switch the current context.
func TestTwoContexts(t *testing.T) {
	d := newDriver(t)
	var cs [2]gpu.Context
	var ps [2]gpu.DevicePtr
	for i := range cs {
		c, err := d.NewContext(0)
		if err != nil {
			t.Fatalf("NewContext: %v", err)
		}
		defer c.Close()
		cs[i] = c
		if ps[i], err = c.Alloc(64); err != nil {
			t.Fatalf("Alloc: %v", err)
		}
	}
	for round := range 3 {
		for i, c := range cs {
			if err := c.Memset(ps[i], byte(10*round+i), 64); err != nil {
				t.Fatalf("Memset: %v", err)
			}
		}
		for i, c := range cs {
			got := make([]byte, 64)
			if err := c.CopyDtoH(got, ps[i]); err != nil {
				t.Fatalf("CopyDtoH: %v", err)
			}
			if got[0] != byte(10*round+i) || got[63] != byte(10*round+i) {
				t.Errorf("context %d round %d: got %d", i, round, got[0])
			}
		}
	}
	// A pointer of one context is not an allocation of the other.
	if err := cs[0].Free(ps[1]); gpu.Code(err) != gpu.ErrInvalidValue {
		t.Errorf("Free of the other context's pointer: %v", err)
	}
	if err := cs[1].Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := cs[1].Memset(ps[1], 0, 1); gpu.Code(err) != gpu.ErrInvalidContext {
		t.Errorf("Memset on a closed context: %v", err)
	}
}

// TestStartReportsInitError checks Start, which leaves cuInit running:
// where the driver cannot start (no libcuda.so.1, or no device), Init and
// every call that needs the device return that error, not a panic or a
// "not initialised" of their own. It skips where a GPU is usable.
func TestStartReportsInitError(t *testing.T) {
	d := New()
	startErr := d.Start()
	initErr := d.Init()
	if initErr == nil {
		t.Skip("a usable GPU here")
	}
	if startErr != nil && startErr.Error() != initErr.Error() {
		t.Errorf("Start: %v; Init: %v", startErr, initErr)
	}
	if _, err := d.DeviceCount(); err == nil || err.Error() != initErr.Error() {
		t.Errorf("DeviceCount after a failed start: %v, want %v", err, initErr)
	}
	if _, err := d.NewContext(0); err == nil || err.Error() != initErr.Error() {
		t.Errorf("NewContext after a failed start: %v, want %v", err, initErr)
	}
}
