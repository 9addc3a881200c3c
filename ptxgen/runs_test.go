package ptxgen

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// TestKernel2DRuns runs initRows' 2D kernel with 70 inner iterations a
// row, which its threads run in runs (LaunchPlan.Run2D), on gpusim against
// the CPU engine: every element written once, with the value of its own
// iteration (j, in s2, carried by the loop from one iteration of a run to
// the next). A wrong inner trip count or step fails the launch.
func TestKernel2DRuns(t *testing.T) {
	const n = 70
	const aBase, xBase = dataBase, dataBase + 0x10000
	bs := parseBlocks(t, initRows)
	k, err := Generate(initRowsNest(bs, true))
	if err != nil {
		t.Fatal(err)
	}
	// A GPU wants many threads: a launch this small would keep runs of
	// one.
	if k.Plan.Run2D(n-4, n) != 1 {
		t.Errorf("runs of %d over %d iterations, want 1 (MinThreads %d)", k.Plan.Run2D(n-4, n), (n-4)*n, k.Plan.MinThreads)
	}
	k.Plan.MinThreads = 0
	if !k.Plan.Runs2D || k.Plan.Run2D(n-4, n) < 2 {
		t.Fatalf("Runs2D %v, runs of %d: want runs of at least 2 over %d iterations", k.Plan.Runs2D, k.Plan.Run2D(n-4, n), n)
	}
	if cfg := k.Plan.Config2D(n-4, n); uint64(cfg.Grid.X*cfg.Block.X)*k.Plan.Run2D(n-4, n) < n || uint64(cfg.Grid.X*cfg.Block.X) >= n {
		t.Errorf("Config2D %+v: want fewer threads along x than the %d iterations, and their runs covering them", cfg, n)
	}
	setup := func() (*gvinst.Memory, *gvinst.CPU) {
		mem := gvinst.NewMemory(1 << 26)
		if err := mem.Map(dataBase, 0x20000, gvinst.PermRead|gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		cpu := &gvinst.CPU{PC: 0x5000}
		cpu.State[gvinst.SReg(6)] = aBase
		cpu.State[gvinst.SReg(7)] = xBase
		cpu.State[gvinst.SReg(9)] = n * 8
		cpu.State[gvinst.SReg(10)] = n * n * 8
		return mem, cpu
	}
	refMem, refCPU := setup()
	runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), refCPU)
	mem, cpu := setup()
	e := gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{Breakpoints: map[uint64]bool{0x5000: true}})
	var states [2][]uint64
	for s := 0; s < 2; s++ {
		if st := e.Run(cpu, 0); st.Kind != gvinst.StopBreakpoint {
			t.Fatalf("expected a breakpoint, got %v", st)
		}
		for _, l := range k.LiveIns {
			states[s] = append(states[s], liveValue(mem, cpu, l))
		}
	}
	count := uint64(n - 4)
	in := LaunchInput{Count: count, Values: states[1], InnerTrip0: n, InnerMax: n}
	for i := range k.LiveIns {
		in.Steps = append(in.Steps, states[1][i]-states[0][i])
	}
	for _, l := range k.InnerLiveIns {
		step := uint64(0)
		if !l.Stack && l.Slot == gvinst.SReg(2) {
			step = 8
		}
		in.InnerSteps = append(in.InnerSteps, step)
	}
	for _, s := range k.Sites {
		r := Range{aBase, aBase + n*n*8}
		if s.X86 == 0x5000 {
			r = Range{xBase, xBase + n*8}
		}
		in.Sites = append(in.Sites, r)
	}
	ctx, fn := simKernel(t, k)
	if _, err := Launch(ctx, fn, k, mem, in, nil); err != nil {
		t.Fatalf("launch: %v\n%s", err, numbered(k.PTX))
	}
	for i, l := range k.LiveIns {
		setLive(mem, cpu, l, in.Values[i]+in.Steps[i]*count)
	}
	runToSyscall(t, e, cpu)
	want, got := make([]byte, 0x20000), make([]byte, 0x20000)
	_ = refMem.Read(dataBase, want)
	_ = mem.Read(dataBase, got)
	if !bytes.Equal(want, got) {
		for i := range want {
			if want[i] != got[i] {
				t.Fatalf("memory differs first at %#x", dataBase+uint64(i))
			}
		}
	}
	for _, c := range []struct {
		what string
		edit func(*LaunchInput)
		code int
	}{
		{"inner trip count one long", func(in *LaunchInput) { in.InnerTrip0++; in.InnerMax++ }, ErrCodeExit},
		{"inner trip count one short", func(in *LaunchInput) { in.InnerTrip0--; in.InnerMax-- }, ErrCodeExit},
		{"inner step doubled", func(in *LaunchInput) {
			in.InnerSteps = append([]uint64(nil), in.InnerSteps...)
			for i, l := range k.InnerLiveIns {
				if !l.Stack && l.Slot == gvinst.SReg(2) {
					in.InnerSteps[i] = 16
				}
			}
		}, ErrCodeStep},
	} {
		bad := in
		c.edit(&bad)
		m, _ := setup()
		var ke *KernelError
		if _, err := Launch(ctx, fn, k, m, bad, nil); !errors.As(err, &ke) || ke.Code != c.code && !(c.code == ErrCodeStep && ke.Code == ErrCodeExit) {
			t.Errorf("%s: got %v, want error code %d", c.what, err, c.code)
		}
	}
}

// TestKernel1DRuns runs the saxpy loop's 1D kernel over 2999 iterations
// with runs of more than one (LaunchPlan.Runs1D; MinThreads lowered, as
// for a launch this small a GPU keeps runs of one) on gpusim against
// the CPU engine; a wrong step fails the launch.
func TestKernel1DRuns(t *testing.T) {
	const n = 3000
	bs, k, _, _ := saxpyKernel(t)
	if k.Plan.Run1D(n-1) != 1 {
		t.Errorf("runs of %d over %d iterations, want 1 (MinThreads %d)", k.Plan.Run1D(n-1), n-1, k.Plan.MinThreads)
	}
	k.Plan.MinThreads = 0
	if !k.Plan.Runs1D || k.Plan.Run1D(n-1) < 2 {
		t.Fatalf("Runs1D %v, runs of %d: want runs of at least 2", k.Plan.Runs1D, k.Plan.Run1D(n-1))
	}
	if cfg := k.Plan.Config(n - 1); uint64(cfg.Grid.X*cfg.Block.X) >= n-1 {
		t.Errorf("Config %+v: want fewer threads than the %d iterations", cfg, n-1)
	}
	ctx, fn := simKernel(t, k)
	refMem, refCPU := lazyGuest(t, n)
	mem, cpu := lazyGuest(t, n)
	xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
	in := saxpyInput(k, cpu, n, xr, yr)
	if _, err := Launch(ctx, fn, k, mem, in, nil); err != nil {
		t.Fatalf("launch: %v\n%s", err, numbered(k.PTX))
	}
	rc := *refCPU
	runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), &rc)
	last := *cpu
	last.State[gvinst.S0] = (n - 1) * 8
	runToSyscall(t, gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{}), &last)
	want, got := make([]byte, 0x10000), make([]byte, 0x10000)
	_ = refMem.Read(dataBase, want)
	_ = mem.Read(dataBase, got)
	if !bytes.Equal(want, got) {
		t.Fatal("memory differs from the CPU engine's after the launch with runs")
	}
	bad := saxpyInput(k, cpu, n, xr, yr)
	for i := range bad.Steps {
		if bad.Steps[i] != 0 {
			bad.Steps[i] *= 2
		}
	}
	m, _ := lazyGuest(t, n)
	var ke *KernelError
	if _, err := Launch(ctx, fn, k, m, bad, nil); !errors.As(err, &ke) || ke.Code != ErrCodeStep && ke.Code != ErrCodeFootprint {
		t.Errorf("a doubled step: got %v, want a step or footprint error", err)
	}
}
