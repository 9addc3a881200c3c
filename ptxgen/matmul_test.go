package ptxgen

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptx"
)

// matmulO2 is the i/j/k nest of examples/matmul.c as gcc -O2 compiles it
// and gxbit lifts and optimizes it (gxbit lift -O), the outer header cut
// at the j loop as the runtime cuts it: i in r11 (s11, 32 bits, bound
// eax), j in r8 (s8, bound rbx), k as the A pointer rdx (s2) up to the
// row's end rsi (s6) and the B pointer r15 (s15) stepping by the row size
// rcx (s1); A's row in r10 (s10), B's column in r13 (s13, from rbp), C's
// row in r9 (s9). The first k iteration is in the j block (0x401600).
const matmulO2 = `
vblock 0x4015f8..0x401600:
  # 0x4015f8: mov r13, rbp
  GET.u64 v0, s5
  PUT.u64 s13, v0
  # 0x4015fb: xor r8d, r8d
  LI.u32 v1, 0
  PUT.u64 s8, v1
  JMP 0x401600
vblock 0x401600..0x401629:
  # 0x401600: mov r15, r13
  GET.u64 v0, s13
  # 0x401603: mov rdx, r10
  GET.u64 v1, s10
  # 0x401606: pxor xmm1, xmm1
  LI.u64 v2, 0
  JOIN.b128 v3, v2, v2
  PUT.b128 x1, v3
  # 0x401610: movsd xmm0, qword ptr [rdx]
  LD.u64 v5, v1(0)
  LI.u64 v6, 0
  JOIN.b128 v7, v5, v6
  PUT.b128 x0, v7
  # 0x401614: mulsd xmm0, qword ptr [r15]
  LD.u64 v9, v0(0)
  MUL.f64 v10, v7, v9
  PUT.u64 x0, v10
  # 0x401619: add rdx, 0x8
  ADD.u64 v11, v1, 8
  PUT.u64 s2, v11
  # 0x40161d: add r15, rcx
  GET.u64 v13, s1
  ADD.u64 v14, v0, v13
  PUT.u64 s15, v14
  # 0x401620: addsd xmm1, xmm0
  MOV.u64 v15, v10
  ADD.f64 v16, v3, v15
  PUT.u64 x1, v16
  # 0x401624: cmp rdx, rsi
  GET.u64 v17, s6
  # 0x401627: jnz 0x401610
  CMP.ne.u64 v19, v11, v17
  BRANCH v19, 0x401610, 0x401629
vblock 0x401610..0x401629:
  # 0x401610: movsd xmm0, qword ptr [rdx]
  GET.u64 v0, s2
  LD.u64 v1, v0(0)
  LI.u64 v2, 0
  JOIN.b128 v3, v1, v2
  PUT.b128 x0, v3
  # 0x401614: mulsd xmm0, qword ptr [r15]
  GET.u64 v5, s15
  LD.u64 v6, v5(0)
  MUL.f64 v7, v3, v6
  PUT.u64 x0, v7
  # 0x401619: add rdx, 0x8
  ADD.u64 v8, v0, 8
  PUT.u64 s2, v8
  # 0x40161d: add r15, rcx
  GET.u64 v10, s1
  ADD.u64 v11, v5, v10
  PUT.u64 s15, v11
  # 0x401620: addsd xmm1, xmm0
  MOV.u64 v12, v7
  GET.u64 v13, x1
  ADD.f64 v14, v13, v12
  PUT.u64 x1, v14
  # 0x401624: cmp rdx, rsi
  GET.u64 v15, s6
  # 0x401627: jnz 0x401610
  CMP.ne.u64 v17, v8, v15
  BRANCH v17, 0x401610, 0x401629
vblock 0x401629..0x40163c:
  # 0x401629: movsd qword ptr [r9+8*r8], xmm1
  GET.u64 v0, s9
  GET.u64 v1, s8
  SHL.u64 v2, v1, 3
  ADD.u64 v3, v0, v2
  GET.u64 v4, x1
  ST.u64 v3(0), v4
  # 0x40162f: add r8, 0x1
  ADD.u64 v5, v1, 1
  PUT.u64 s8, v5
  # 0x401633: add r13, 0x8
  GET.u64 v7, s13
  ADD.u64 v8, v7, 8
  PUT.u64 s13, v8
  # 0x401637: cmp rbx, r8
  GET.u64 v10, s3
  # 0x40163a: jnz 0x401600
  CMP.ne.u64 v12, v10, v5
  BRANCH v12, 0x401600, 0x40163c
vblock 0x40163c..0x40164d:
  # 0x40163c: lea edx, ptr [r11+0x1]
  GET.u64 v0, s11
  ADD.u64 v1, v0, 1
  CVT.rn.u64.u32 v2, v1
  PUT.u64 s2, v2
  # 0x401640: add r9, rcx
  GET.u64 v3, s9
  GET.u64 v4, s1
  ADD.u64 v5, v3, v4
  PUT.u64 s9, v5
  # 0x401643: add r10, rcx
  GET.u64 v6, s10
  ADD.u64 v7, v6, v4
  PUT.u64 s10, v7
  # 0x401646: add rsi, rcx
  GET.u64 v8, s6
  ADD.u64 v9, v8, v4
  PUT.u64 s6, v9
  # 0x401649: cmp eax, edx
  GET.u64 v10, s0
  # 0x40164b: jz 0x401652
  CMP.eq.u32 v12, v10, v2
  BRANCH v12, 0x401652, 0x40164d
vblock 0x40164d..0x401652:
  # 0x40164d: mov r11d, edx
  GET.u64 v0, s2
  CVT.rn.u64.u32 v1, v0
  PUT.u64 s11, v1
  # 0x401650: jmp 0x4015f8
  JMP 0x4015f8
vblock 0x401652..0x401654:
  # 0x401652: syscall
  SYSCALL 0x401654
`

// The matrices of the matmulO2 tests.
const mA, mB, mC = dataBase, dataBase + 0x2000, dataBase + 0x4000

// matmulNest2D is matmulO2's i/j nest, j mapped to x.
func matmulNest2D(t *testing.T) (*Nest, blockSet) {
	bs := parseBlocks(t, matmulO2)
	n := &Nest{Header: 0x4015f8, Inner: 0x401600, Blocks: map[uint64]*gvinst.VBlock{},
		InnerBlocks: map[uint64]bool{0x401600: true, 0x401610: true, 0x401629: true}}
	for _, a := range []uint64{0x4015f8, 0x401600, 0x401610, 0x401629, 0x40163c, 0x40164d} {
		n.Blocks[a] = bs[a]
	}
	return n, bs
}

// matmulGuest sets up n x n matrices and the registers at the i loop.
func matmulGuest(t *testing.T, n int) (*gvinst.Memory, *gvinst.CPU) {
	mem := gvinst.NewMemory(1 << 26)
	if err := mem.Map(dataBase, 0x8000, gvinst.PermRead|gvinst.PermWrite); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n*n; i++ {
		_ = mem.Store(mA+uint64(8*i), 8, math.Float64bits(float64(i%11)*0.3-1.3))
		_ = mem.Store(mB+uint64(8*i), 8, math.Float64bits(float64(i%7)/3+1e-3))
	}
	cpu := &gvinst.CPU{PC: 0x4015f8}
	s := func(r int, v uint64) { cpu.State[gvinst.SReg(r)] = v }
	s(5, mB)
	s(10, mA)
	s(6, mA+uint64(8*n))
	s(9, mC)
	s(3, uint64(n))
	s(1, uint64(8*n))
	s(11, 0)
	s(0, uint64(n))
	cpu.State[gvinst.MXCSR] = 0x1f80
	return mem, cpu
}

// TestMatmulKLoop checks, asmcheck-style, the k loop of the 2D matmul
// kernel (the one a real GPU runs): unrolled by four, the A loads at
// immediate offsets from one pointer, the B loads one mad.wide.s32 apart,
// no per-access delta add or check, the sum in an .f64 register, exact
// rounding, no fusion.
func TestMatmulKLoop(t *testing.T) {
	nest, _ := matmulNest2D(t)
	k, err := Generate(nest)
	if err != nil {
		t.Fatal(err)
	}
	u := unrolledLoop(k.PTX)
	if u == "" {
		t.Fatalf("the k loop is not unrolled:\n%s", numbered(k.PTX))
	}
	count := func(re string) int { return len(regexp.MustCompile(re).FindAllString(u, -1)) }
	for _, c := range []struct {
		re   string
		want int
	}{
		{`mul\.rn\.f64 %d\d+, %(d|hld)\d+, %(d|hld)\d+;`, 4},
		{`add\.rn\.f64 (%hfd\d+), (%hfd\d+), %d\d+;`, 4}, // the sum stays in an .f64 register
		{`ld\.global\.[bf]64 %(d|hld)\d+, \[%hv0\];`, 1},
		{`ld\.global\.[bf]64 %(d|hld)\d+, \[%hv0\+8\];`, 1},
		{`ld\.global\.[bf]64 %(d|hld)\d+, \[%hv0\+16\];`, 1},
		{`ld\.global\.[bf]64 %(d|hld)\d+, \[%hv0\+24\];`, 1},
		{`ld\.global\.[bf]64 %(d|hld)\d+, \[%hv1\];`, 1},
		{`ld\.global\.[bf]64 %hld\d+, \[%hx\d+\];`, 3},
		{`mad\.wide\.s32 %hx\d+, %hs0, [123], %hv1;`, 3}, // B's rows 1..3 from B's pointer, one IMAD.WIDE each
		// every load of the four copies before the first multiply
		// (hoistLoads): eight in flight, not a pair at a time
		{`_unroll:\n(\s*(ld\.global|mad\.wide)[^\n]*\n){11}\s*// x86 0x[0-9a-f]+, the loop body: copy 1 of 4\n\s*mul\.rn`, 1},
		{`add\.u64 %hv0, %hv0, 32;`, 1},            // A's pointer once per four iterations
		{`mad\.wide\.s32 %hv1, %hs0, 4, %hv1;`, 1}, // B's by four rows
		{`add\.u64 %hv1`, 0},
		{`%sd\d+`, 0},                // no guest->device delta per access
		{`%s[lh]\d+`, 0},             // no footprint check
		{`mov\.b64 %d`, 0},           // no float round trips through .b64
		{`setp\.ne\.u64 %pbr`, 0},    // no exit test between the copies
		{`add\.u64 %r\d+, %r\d+`, 0}, // the guest k registers advance once, before the loop
		{`fma|mad\.rn|\.ftz|\.approx`, 0},
		{`;`, 23}, // 8 loads, 8 float ops, 5 address steps, the counter (the back edge not counted)
	} {
		if n := count(c.re); n != c.want {
			t.Errorf("%d of %q in the unrolled k loop, want %d", n, c.re, c.want)
		}
	}
	if t.Failed() {
		t.Logf("unrolled loop:\n%s\nkernel:\n%s", u, numbered(k.PTX))
	}
}

// TestMatmulMatchesCPU runs matmulO2 on gpusim, 2D, for sizes whose k
// loops (n-1 iterations after the first) leave every remainder of the
// unrolled loop, against the CPU engine; and the 1D kernel over j.
func TestMatmulMatchesCPU(t *testing.T) {
	for n := 5; n <= 11; n++ {
		t.Run(fmt.Sprintf("2D/n=%d", n), func(t *testing.T) {
			nest, bs := matmulNest2D(t)
			k, err := Generate(nest)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ptx.Parse(k.PTX); err != nil {
				t.Fatalf("%v\n%s", err, numbered(k.PTX))
			}
			refMem, refCPU := matmulGuest(t, n)
			runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), refCPU)
			mem, cpu := matmulGuest(t, n)
			e := gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{Breakpoints: map[uint64]bool{0x4015f8: true}})
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
			in := LaunchInput{Count: count, Values: states[1], InnerTrip0: uint64(n), InnerMax: uint64(n)}
			for i := range k.LiveIns {
				in.Steps = append(in.Steps, states[1][i]-states[0][i])
			}
			for _, l := range k.InnerLiveIns {
				step := uint64(0)
				switch {
				case l.Stack:
				case l.Slot == gvinst.SReg(8):
					step = 1
				case l.Slot == gvinst.SReg(13):
					step = 8
				}
				in.InnerSteps = append(in.InnerSteps, step)
				in.InnerStepRows = append(in.InnerStepRows, 0)
			}
			for range k.Sites {
				in.Sites = append(in.Sites, Range{dataBase, dataBase + 0x8000})
			}
			ctx, fn := simKernel(t, k)
			if _, err := Launch(ctx, fn, k, mem, in, nil); err != nil {
				t.Fatalf("launch: %v\n%s", err, numbered(k.PTX))
			}
			for i, l := range k.LiveIns {
				setLive(mem, cpu, l, in.Values[i]+in.Steps[i]*count)
			}
			runToSyscall(t, e, cpu)
			want, got := make([]byte, 8*n*n), make([]byte, 8*n*n)
			_ = refMem.Read(mC, want)
			_ = mem.Read(mC, got)
			if !bytes.Equal(want, got) {
				t.Fatalf("C differs:\ncpu %x\ngpu %x", want, got)
			}
		})
		t.Run(fmt.Sprintf("1D/n=%d", n), func(t *testing.T) {
			// The j loop alone, from row 1, as a 1D kernel.
			src := strings.Replace(matmulO2, "vblock 0x40163c..0x40164d:", "vblock 0x40163c..0x40163e:\n  SYSCALL 0x40163e\nvblock 0x50163c..0x50164d:", 1)
			c := loopCase{src: src, header: 0x401600, level: []uint64{0x401600, 0x401610, 0x401629}, arrivals: uint64(n),
				setup: func(mem *gvinst.Memory, cpu *gvinst.CPU) {
					for i := 0; i < n*n; i++ {
						_ = mem.Store(mA+uint64(8*i), 8, math.Float64bits(float64(i%11)*0.3-1.3))
						_ = mem.Store(mB+uint64(8*i), 8, math.Float64bits(float64(i%7)/3+1e-3))
					}
					s := func(r int, v uint64) { cpu.State[gvinst.SReg(r)] = v }
					s(13, mB)
					s(8, 0)
					s(10, mA+uint64(8*n))
					s(6, mA+uint64(16*n))
					s(9, mC+uint64(8*n))
					s(3, uint64(n))
					s(1, uint64(8*n))
				},
				data: Range{dataBase, dataBase + 0x8000}}
			k, err := runOnGPU(t, c, nil)
			if err != nil {
				t.Fatalf("launch: %v\n%s", err, numbered(k.PTX))
			}
			if unrolledLoop(k.PTX) == "" {
				t.Errorf("the k loop is not unrolled")
			}
		})
	}
}
