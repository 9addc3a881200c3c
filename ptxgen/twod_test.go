package ptxgen

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptx"
)

// matmul2D is C[i][j] = sum_k A[i][k]*B[k][j] shaped as gcc -O2 does
// (rotated loops): i in s1 (row offset in bytes), j in s2, k in s3 (byte
// offsets), A, B, C in s6, s7, s8, the row size in bytes in s9, n*rowsize
// in s10, n in s11; j runs to s12, which the i latch advances by s13 (0
// for a square nest, 8 for a triangular one: j <= i).
const matmul2D = `
vblock 0x3000..0x3010:
  # 0x3000: xor edx, edx
  LI.u64 v0, 0
  PUT.u64 s2, v0
  JMP 0x3010
vblock 0x3010..0x3020:
  # 0x3010: xor ecx, ecx; pxor xmm0, xmm0
  LI.u64 v0, 0
  PUT.u64 s3, v0
  PUT.u64 x0, v0
  JMP 0x3020
vblock 0x3020..0x3030:
  # 0x3020: movsd xmm1, [rsi+rbx+rcx]
  GET.u64 v0, s1
  GET.u64 v1, s3
  GET.u64 v2, s6
  ADD.u64 v3, v2, v0
  ADD.u64 v4, v3, v1
  LD.f64 v5, v4(0)
  # 0x3024: mulsd xmm1, [rdi+rcx*n+rdx]
  GET.u64 v6, s11
  MUL.u64 v7, v1, v6
  GET.u64 v8, s7
  GET.u64 v9, s2
  ADD.u64 v10, v8, v7
  ADD.u64 v11, v10, v9
  LD.f64 v12, v11(0)
  MUL.f64 v13, v5, v12
  # 0x3028: addsd xmm0, xmm1
  GET.f64 v14, x0
  ADD.f64 v15, v14, v13
  PUT.f64 x0, v15
  # 0x302c: add rcx, 8; cmp rcx, r9; jne
  ADD.u64 v16, v1, 8
  PUT.u64 s3, v16
  GET.u64 v17, s9
  CMP.ne.u64 v18, v16, v17
  BRANCH v18, 0x3020, 0x3030
vblock 0x3030..0x3040:
  # 0x3030: movsd [r8+rbx+rdx], xmm0
  GET.u64 v0, s1
  GET.u64 v1, s2
  GET.u64 v2, s8
  ADD.u64 v3, v2, v0
  ADD.u64 v4, v3, v1
  GET.f64 v5, x0
  ST.f64 v4(0), v5
  # 0x3038: add rdx, 8; cmp rdx, r12; jne
  ADD.u64 v6, v1, 8
  PUT.u64 s2, v6
  GET.u64 v7, s12
  CMP.ne.u64 v8, v6, v7
  BRANCH v8, 0x3010, 0x3040
vblock 0x3040..0x3050:
  # 0x3040: add rbx, r9; add r12, r13; cmp rbx, r10; jne
  GET.u64 v0, s1
  GET.u64 v1, s9
  ADD.u64 v2, v0, v1
  PUT.u64 s1, v2
  GET.u64 v3, s12
  GET.u64 v4, s13
  ADD.u64 v5, v3, v4
  PUT.u64 s12, v5
  GET.u64 v6, s10
  CMP.ne.u64 v7, v2, v6
  BRANCH v7, 0x3000, 0x3100
vblock 0x3100..0x3102:
  # 0x3100: syscall
  SYSCALL 0x3102
`

// TestKernel2D runs the nest with (i, j) mapped to (y, x) on gpusim and
// compares with the CPU engine, for a square and a triangular j range.
func TestKernel2D(t *testing.T) {
	const n = 24
	for _, tri := range []bool{false, true} {
		name := "square"
		if tri {
			name = "triangular"
		}
		t.Run(name, func(t *testing.T) {
			bs := parseBlocks(t, matmul2D)
			nest := &Nest{Header: 0x3000, Inner: 0x3010, Blocks: map[uint64]*gvinst.VBlock{},
				InnerBlocks: map[uint64]bool{0x3010: true, 0x3020: true, 0x3030: true}}
			for _, a := range []uint64{0x3000, 0x3010, 0x3020, 0x3030, 0x3040} {
				nest.Blocks[a] = bs[a]
			}
			k, err := Generate(nest)
			if err != nil {
				t.Fatal(err)
			}
			if !k.TwoD {
				t.Fatal("not a 2D kernel")
			}
			if _, err := ptx.Parse(k.PTX); err != nil {
				t.Fatalf("%v\n%s", err, numbered(k.PTX))
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
			count := uint64(n - 4) // rows 2..n-3; the CPU runs the last two
			in := LaunchInput{Count: count, Values: states[1], InnerTrip0: n, InnerMax: n}
			if tri {
				in.InnerTrip0, in.InnerTripStep = 3, 1 // row 0 is i = 2: j = 0, 1, 2
			}
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
			for range k.Sites {
				in.Sites = append(in.Sites, Range{dataBase, dataBase + 0x30000})
			}
			ctx, fn := simKernel(t, k)
			if _, err := Launch(ctx, fn, k, mem, in, nil); err != nil {
				t.Fatalf("launch: %v\n%s", err, numbered(k.PTX))
			}
			for i, l := range k.LiveIns {
				setLive(mem, cpu, l, in.Values[i]+in.Steps[i]*count)
			}
			runToSyscall(t, e, cpu)
			want, got := make([]byte, 0x10000), make([]byte, 0x10000)
			_ = refMem.Read(dataBase+0x20000, want)
			_ = mem.Read(dataBase+0x20000, got)
			if !bytes.Equal(want, got) {
				for i := range want {
					if want[i] != got[i] {
						t.Fatalf("C differs first at byte %d (element %d)", i, i/8)
					}
				}
			}
			// B's footprint one row short: every thread's last k fails
			// the check left in the (unrolled) k loop.
			short := in
			short.Sites = append([]Range(nil), in.Sites...)
			short.Sites[1] = Range{dataBase + 0x10000, dataBase + 0x10000 + (n-1)*n*8}
			var ke *KernelError
			mem3, _ := setup()
			if _, err := Launch(ctx, fn, k, mem3, short, nil); !errors.As(err, &ke) || ke.Code != ErrCodeFootprint {
				t.Errorf("B one row short: got %v, want a footprint error", err)
			}
			// A wrong inner trip count is caught by the kernel.
			mem2, _ := setup()
			in.InnerTrip0++
			if _, err := Launch(ctx, fn, k, mem2, in, nil); err == nil {
				t.Error("a launch with a wrong inner trip count succeeded")
			}
		})
	}
}
