package ptxgen

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/gvinst"
)

func TestGroups(t *testing.T) {
	k := &Kernel{Sites: []Site{{Store: false}, {Store: true}, {Store: false}, {Store: false}}}
	got := Groups(k, []Range{{0x1008, 0x1010}, {0x2000, 0x2100}, {0x100c, 0x1100}, {0, 0}})
	want := []Group{
		{Range: Range{0x1000, 0x1100}, Sites: []int{0, 2}},
		{Range: Range{0x2000, 0x2100}, Sites: []int{1}, Written: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Groups = %+v, want %+v", got, want)
	}
}

func TestLaunchShapes(t *testing.T) {
	p := defaultPlan()
	for _, c := range []struct {
		count uint64
		want  gpu.LaunchConfig
	}{
		{1, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1, Y: 1, Z: 1}, Block: gpu.Dim3{X: 128, Y: 1, Z: 1}}},
		{1000, gpu.LaunchConfig{Grid: gpu.Dim3{X: 8, Y: 1, Z: 1}, Block: gpu.Dim3{X: 128, Y: 1, Z: 1}}},
		{100000, gpu.LaunchConfig{Grid: gpu.Dim3{X: 391, Y: 1, Z: 1}, Block: gpu.Dim3{X: 256, Y: 1, Z: 1}}},
	} {
		if got := p.Config(c.count); got != c.want {
			t.Errorf("Config(%d) = %+v, want %+v", c.count, got, c.want)
		}
	}
	if got, want := p.Config2D(2000, 2000), (gpu.LaunchConfig{Grid: gpu.Dim3{X: 125, Y: 125, Z: 1}, Block: gpu.Dim3{X: 16, Y: 16, Z: 1}}); got != want {
		t.Errorf("Config2D = %+v, want %+v", got, want)
	}
	// A narrow inner level: a narrow tile, more rows.
	if got, want := p.Config2D(2000, 3), (gpu.LaunchConfig{Grid: gpu.Dim3{X: 1, Y: 32, Z: 1}, Block: gpu.Dim3{X: 4, Y: 64, Z: 1}}); got != want {
		t.Errorf("Config2D narrow = %+v, want %+v", got, want)
	}
	for _, c := range []struct {
		planes, rows, cols uint64
		want               gpu.LaunchConfig
	}{
		// heat3d 160: 32x4x2, as the hand-written kernel.
		{158, 158, 158, gpu.LaunchConfig{Grid: gpu.Dim3{X: 5, Y: 40, Z: 79}, Block: gpu.Dim3{X: 32, Y: 4, Z: 2}}},
		// Five innermost iterations: 8 wide, 16 rows.
		{100, 100, 5, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1, Y: 7, Z: 50}, Block: gpu.Dim3{X: 8, Y: 16, Z: 2}}},
		// Few rows too: no taller than they need.
		{100, 3, 5, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1, Y: 1, Z: 50}, Block: gpu.Dim3{X: 8, Y: 4, Z: 2}}},
	} {
		if got := p.Config3D(c.planes, c.rows, c.cols); got != c.want {
			t.Errorf("Config3D(%d, %d, %d) = %+v, want %+v", c.planes, c.rows, c.cols, got, c.want)
		}
	}
}

// TestLaunchTimesKernelWithoutSubmit checks the split of a launch's time:
// on a driver whose launches spend 25 ms on the host before the kernel
// starts (as a real driver queues a launch), Launch reports those as the
// submission, not as the kernel's time, and the host's whole launch time
// counts both.
func TestLaunchTimesKernelWithoutSubmit(t *testing.T) {
	const n, latency = 3000, 25 * time.Millisecond
	bs, k, _, _ := saxpyKernel(t)
	ctx, err := gpusim.New(gpusim.Options{SubmitLatency: latency}).NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	m, err := ctx.LoadModule(k.PTX)
	if err != nil {
		t.Fatal(err)
	}
	fn, err := m.Function(k.Name)
	if err != nil {
		t.Fatal(err)
	}
	refMem, refCPU := lazyGuest(t, n)
	mem, cpu := lazyGuest(t, n)
	xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
	st, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Submit < latency {
		t.Errorf("submission %v, want at least the driver's %v", st.Submit, latency)
	}
	if st.Kernel <= 0 || st.Kernel > st.LaunchWall-latency {
		t.Errorf("kernel time %v of a %v launch counts the %v submission", st.Kernel, st.LaunchWall, latency)
	}
	// And the launch did its work.
	rc := *refCPU
	runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), &rc)
	last := *cpu
	last.State[gvinst.S0] = (n - 1) * 8
	runToSyscall(t, gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{}), &last)
	want, got := make([]byte, 0x10000), make([]byte, 0x10000)
	_ = refMem.Read(dataBase, want)
	_ = mem.Read(dataBase, got)
	if !bytes.Equal(want, got) {
		t.Fatal("memory differs from the CPU engine's after the launch")
	}
}

// TestLaunchRefusesHugeGrid: kernels compute thread indices in 32 bits,
// so a launch of more than 2^32 threads along x is refused before it
// runs, and the guest is left as it was.
func TestLaunchRefusesHugeGrid(t *testing.T) {
	const n = 3000
	_, k, ctx, fn := saxpyKernel(t)
	mem, cpu := lazyGuest(t, n)
	before := make([]byte, 0x10000)
	_ = mem.Read(dataBase, before)
	xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
	in := saxpyInput(k, cpu, n, xr, yr)
	in.Count = 1<<33 + 5
	if _, err := Launch(ctx, fn, k, mem, in, nil); err == nil || !strings.Contains(err.Error(), "2^32") {
		t.Fatalf("a launch of %d iterations: got %v, want it refused", in.Count, err)
	}
	after := make([]byte, 0x10000)
	_ = mem.Read(dataBase, after)
	if !bytes.Equal(before, after) {
		t.Fatal("the refused launch changed the guest")
	}
}
