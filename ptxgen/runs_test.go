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
	if !k.Plan.Runs2D || k.Plan.Run2D(n) < 2 {
		t.Fatalf("Runs2D %v, runs of %d: want runs of at least 2 over %d iterations", k.Plan.Runs2D, k.Plan.Run2D(n), n)
	}
	if cfg := k.Plan.Config2D(n-4, n); uint64(cfg.Grid.X*cfg.Block.X)*k.Plan.Run2D(n) < n || uint64(cfg.Grid.X*cfg.Block.X) >= n {
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
