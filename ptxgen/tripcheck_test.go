package ptxgen

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// TestTripCheck1D runs matmul2D's nest as a 1D kernel (one row i per
// thread, the j and k loops inside it) that counts its j loop
// (Nest.TripCheck), for a square and a triangular j range: with the right
// trip counts, and with the check off, it matches the CPU engine; with a
// count one too many, or rows that grow where the launch says they do
// not, the kernel fails the launch with ErrCodeExit at the j header.
func TestTripCheck1D(t *testing.T) {
	const n = 24
	for _, tri := range []bool{false, true} {
		name := "square"
		if tri {
			name = "triangular"
		}
		t.Run(name, func(t *testing.T) {
			bs := parseBlocks(t, matmul2D)
			nest := &Nest{Header: 0x3000, TripCheck: 0x3010, Blocks: map[uint64]*gvinst.VBlock{},
				TripBlocks: map[uint64]bool{0x3010: true, 0x3020: true, 0x3030: true}}
			for _, a := range []uint64{0x3000, 0x3010, 0x3020, 0x3030, 0x3040} {
				nest.Blocks[a] = bs[a]
			}
			k, err := Generate(nest)
			if err != nil {
				t.Fatal(err)
			}
			if k.TwoD || !k.TripChecked {
				t.Fatalf("TwoD %v, TripChecked %v: want a trip-checked 1D kernel", k.TwoD, k.TripChecked)
			}
			setup := func() (*gvinst.Memory, *gvinst.CPU) {
				mem := gvinst.NewMemory(1 << 26)
				if err := mem.Map(dataBase, 0x40000, gvinst.PermRead|gvinst.PermWrite); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < n*n; i++ {
					_ = mem.Store(dataBase+uint64(8*i), 8, math.Float64bits(float64(i%13)*0.3-1))
					_ = mem.Store(dataBase+0x10000+uint64(8*i), 8, math.Float64bits(float64(i%7)/3))
				}
				cpu := &gvinst.CPU{PC: 0x3000}
				cpu.State[gvinst.SReg(6)] = dataBase
				cpu.State[gvinst.SReg(7)] = dataBase + 0x10000
				cpu.State[gvinst.SReg(8)] = dataBase + 0x20000
				cpu.State[gvinst.SReg(9)] = n * 8
				cpu.State[gvinst.SReg(10)] = n * n * 8
				cpu.State[gvinst.SReg(11)] = n
				cpu.State[gvinst.SReg(12)] = n * 8
				if tri {
					cpu.State[gvinst.SReg(12)], cpu.State[gvinst.SReg(13)] = 8, 8
				}
				cpu.State[gvinst.MXCSR] = 0x1f80
				return mem, cpu
			}
			refMem, refCPU := setup()
			runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), refCPU)
			want := make([]byte, 0x10000)
			_ = refMem.Read(dataBase+0x20000, want)

			// Rows 2..n-3 on the GPU, the CPU the rest.
			count := uint64(n - 4)
			trip0, tripStep := uint64(n), uint64(0)
			if tri {
				trip0, tripStep = 3, 1 // row 0 of the launch is i = 2: j = 0, 1, 2
			}
			ctx, fn := simKernel(t, k)
			run := func(trip0, tripStep uint64) ([]byte, error) {
				mem, cpu := setup()
				e := gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{Breakpoints: map[uint64]bool{0x3000: true}})
				var states [2][]uint64
				for s := 0; s < 2; s++ {
					if st := e.Run(cpu, 0); st.Kind != gvinst.StopBreakpoint {
						t.Fatalf("expected a breakpoint, got %v", st)
					}
					for _, l := range k.LiveIns {
						states[s] = append(states[s], liveValue(mem, cpu, l))
					}
				}
				in := LaunchInput{Count: count, Values: states[1], InnerTrip0: trip0, InnerTripStep: tripStep}
				for i := range k.LiveIns {
					in.Steps = append(in.Steps, states[1][i]-states[0][i])
				}
				for range k.Sites {
					in.Sites = append(in.Sites, Range{dataBase, dataBase + 0x30000})
				}
				if _, err := Launch(ctx, fn, k, mem, in, nil); err != nil {
					return nil, err
				}
				for i, l := range k.LiveIns {
					setLive(mem, cpu, l, in.Values[i]+in.Steps[i]*count)
				}
				runToSyscall(t, e, cpu)
				got := make([]byte, 0x10000)
				_ = mem.Read(dataBase+0x20000, got)
				return got, nil
			}
			for _, c := range []struct {
				name            string
				trip0, tripStep uint64
			}{{"checked", trip0, tripStep}, {"unchecked", ^uint64(0), 0}} {
				got, err := run(c.trip0, c.tripStep)
				if err != nil {
					t.Fatalf("%s: launch: %v\n%s", c.name, err, numbered(k.PTX))
				}
				if !bytes.Equal(want, got) {
					t.Errorf("%s: C differs from the CPU engine's", c.name)
				}
			}
			for _, c := range []struct {
				name            string
				trip0, tripStep uint64
			}{{"one too many", trip0 + 1, tripStep}, {"rows said to grow", trip0, tripStep + 1}} {
				_, err := run(c.trip0, c.tripStep)
				var ke *KernelError
				if !errors.As(err, &ke) || ke.Code != ErrCodeExit || ke.X86 != 0x3010 {
					t.Errorf("%s: got %v, want the trip count error at 0x3010", c.name, err)
				}
			}
		})
	}
}

// TestTripCheckRejected checks that Generate refuses a counted loop
// outside a 1D kernel's reach: with Inner, or its header not a block.
func TestTripCheckRejected(t *testing.T) {
	bs := parseBlocks(t, matmul2D)
	blocks := map[uint64]*gvinst.VBlock{}
	for _, a := range []uint64{0x3000, 0x3010, 0x3020, 0x3030, 0x3040} {
		blocks[a] = bs[a]
	}
	loop := map[uint64]bool{0x3010: true, 0x3020: true, 0x3030: true}
	for _, c := range []struct {
		name string
		nest Nest
	}{
		{"with Inner", Nest{Header: 0x3000, Inner: 0x3010, InnerBlocks: loop, TripCheck: 0x3020, TripBlocks: map[uint64]bool{0x3020: true}, Blocks: blocks}},
		{"the level's header", Nest{Header: 0x3000, TripCheck: 0x3000, TripBlocks: map[uint64]bool{0x3000: true}, Blocks: blocks}},
		{"not a block", Nest{Header: 0x3000, TripCheck: 0x3018, TripBlocks: map[uint64]bool{0x3018: true}, Blocks: blocks}},
	} {
		_, err := Generate(&c.nest)
		if !errors.Is(err, ErrNotOffloadable) || !strings.Contains(err.Error(), "trip count check") && !strings.Contains(err.Error(), "counted loop") {
			t.Errorf("%s: got %v, want a rejection of the counted loop", c.name, err)
		}
	}
}
