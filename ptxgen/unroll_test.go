package ptxgen

import (
	"bytes"
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptx"
)

// dotNest is a 1D nest with a counted inner loop whose trip count is
// i & 15 (0 to 15, so every remainder of the unrolled loop, and the empty
// loop the header skips): sum = Σ_k A[k] * B[i + k*stride] into C[i].
// i is s1 (n in s2), k is s3 (bound s13), A, B, C in s6, s7, s8, the B
// stride in bytes in s9; the A pointer s11 steps by 8, the B pointer s10
// by s9. The variants below change the steps and the counter's width.
const dotNest = `
vblock 0x4000..0x4010:
  # 0x4000: bound = i & 15; k = 0; sum = 0; pa = A; pb = B + 8*i; none: skip
  GET.u64 v0, s1
  AND.u64 v1, v0, 15
  PUT.u64 s13, v1
  LI.u64 v2, 0
  PUT.u64 s3, v2
  PUT.u64 x0, v2
  GET.u64 v3, s6
  PUT.u64 s11, v3
  GET.u64 v4, s7
  SHL.u64 v5, v0, 3
  ADD.u64 v6, v4, v5
  PUT.u64 s10, v6
  CMP.eq.u64 v7, v1, v2
  BRANCH v7, 0x4030, 0x4010
vblock 0x4010..0x4030:
  # 0x4010: sum += *pa * *pb; pa += 8; pb += stride; k++; k != bound
  GET.u64 v0, s11
  LD.f64 v1, v0(0)
  GET.u64 v2, s10
  LD.f64 v3, v2(0)
  MUL.f64 v4, v1, v3
  GET.f64 v5, x0
  ADD.f64 v6, v5, v4
  PUT.f64 x0, v6
  ADD.u64 v7, v0, 8
  PUT.u64 s11, v7
  GET.u64 v8, s9
  ADD.u64 v9, v2, v8
  PUT.u64 s10, v9
  GET.u64 v10, s3
  ADD.u64 v11, v10, 1
  PUT.u64 s3, v11
  GET.u64 v12, s13
  CMP.ne.u64 v13, v11, v12
  BRANCH v13, 0x4010, 0x4030
vblock 0x4030..0x4040:
  # 0x4030: C[i] = sum; i++
  GET.u64 v0, s1
  SHL.u64 v1, v0, 3
  GET.u64 v2, s8
  ADD.u64 v3, v2, v1
  GET.f64 v4, x0
  ST.f64 v3(0), v4
  ADD.u64 v5, v0, 1
  PUT.u64 s1, v5
  GET.u64 v6, s2
  CMP.ne.u64 v7, v5, v6
  BRANCH v7, 0x4000, 0x4040
vblock 0x4040..0x4042:
  # 0x4040: syscall
  SYSCALL 0x4042
`

// The guest layout of the unrolled-loop tests.
const (
	uA, uB, uC, uD = dataBase, dataBase + 0x1000, dataBase + 0x4000, dataBase + 0x5000
	uN             = 40     // outer iterations
	uStride        = 8 * uN // B's row in bytes
)

// dotVariants are dotNest with other steps and counters.
func dotVariants(t *testing.T) []struct{ name, src string } {
	rep := func(s string, pairs ...string) string {
		for i := 0; i < len(pairs); i += 2 {
			if !strings.Contains(s, pairs[i]) {
				t.Fatalf("variant: no %q", pairs[i])
			}
			s = strings.Replace(s, pairs[i], pairs[i+1], 1)
		}
		return s
	}
	return []struct{ name, src string }{
		{"f64", dotNest},
		// A from its bound-1'th element down (an immediate -8), B from
		// its last row up (a negative stride in a register).
		{"negative", rep(dotNest,
			"  GET.u64 v3, s6\n  PUT.u64 s11, v3\n", "  GET.u64 v3, s6\n  SHL.u64 v20, v1, 3\n  ADD.u64 v21, v3, v20\n  SUB.u64 v22, v21, 8\n  PUT.u64 s11, v22\n",
			"  ADD.u64 v6, v4, v5\n", "  ADD.u64 v30, v4, v5\n  ADD.u64 v6, v30, 4800\n",
			"  ADD.u64 v7, v0, 8\n", "  ADD.u64 v7, v0, -8\n")},
		// k is a 32-bit counter from s12 (high bits set, near the wrap),
		// its bound s12 + (i & 15) modulo 2^32.
		{"counter32", rep(dotNest,
			"  PUT.u64 s13, v1\n  LI.u64 v2, 0\n  PUT.u64 s3, v2\n", "  GET.u64 v20, s12\n  ADD.u32 v21, v20, v1\n  PUT.u64 s13, v21\n  LI.u64 v2, 0\n  PUT.u64 s3, v20\n",
			"  ADD.u64 v11, v10, 1\n", "  ADD.u32 v11, v10, 1\n",
			"  CMP.ne.u64 v13, v11, v12\n", "  CMP.ne.u32 v13, v11, v12\n")},
		// Integers: a 64-bit sum of products, no floats.
		{"int", rep(dotNest,
			"  PUT.u64 x0, v2\n", "  PUT.u64 s14, v2\n",
			"  LD.f64 v1, v0(0)\n", "  LD.u64 v1, v0(0)\n",
			"  LD.f64 v3, v2(0)\n", "  LD.u64 v3, v2(0)\n",
			"  MUL.f64 v4, v1, v3\n  GET.f64 v5, x0\n  ADD.f64 v6, v5, v4\n  PUT.f64 x0, v6\n", "  MUL.u64 v4, v1, v3\n  GET.u64 v5, s14\n  ADD.u64 v6, v5, v4\n  PUT.u64 s14, v6\n",
			"  GET.f64 v4, x0\n  ST.f64 v3(0), v4\n", "  GET.u64 v4, s14\n  ST.u64 v3(0), v4\n")},
		// The loop also stores: D[i*128 + k*8] = the running sum, through
		// a pointer that steps by 8 (s14, from D + 128*i).
		{"store", rep(dotNest,
			"  PUT.u64 s10, v6\n", "  PUT.u64 s10, v6\n  SHL.u64 v20, v0, 7\n  GET.u64 v21, s14\n  ADD.u64 v22, v21, v20\n  PUT.u64 s15, v22\n",
			"  PUT.f64 x0, v6\n", "  PUT.f64 x0, v6\n  GET.u64 v20, s15\n  ST.f64 v20(0), v6\n  ADD.u64 v21, v20, 8\n  PUT.u64 s15, v21\n")},
		// The loop stores the running sum to C[i] in every iteration
		// (trmm's B[i][j]): the unrolled copies sink the store.
		{"sunk", rep(dotNest,
			"  PUT.f64 x0, v6\n", "  PUT.f64 x0, v6\n  GET.u64 v20, s1\n  SHL.u64 v21, v20, 3\n  GET.u64 v22, s8\n  ADD.u64 v23, v22, v21\n  ST.f64 v23(0), v6\n")},
		// The same store to B[2][i], which the loop reads in its
		// iteration 2: the entry test sees the overlap and runs the
		// loop as it was (each iteration storing).
		{"sunkalias", rep(dotNest,
			"  PUT.f64 x0, v6\n", "  PUT.f64 x0, v6\n  GET.u64 v20, s1\n  SHL.u64 v21, v20, 3\n  GET.u64 v22, s7\n  ADD.u64 v23, v22, v21\n  GET.u64 v24, s9\n  SHL.u64 v25, v24, 1\n  ADD.u64 v26, v23, v25\n  ST.f64 v26(0), v6\n")},
	}
}

// dotSetup fills the arrays and the registers of dotNest; a and b move
// the A and B arrays (to misalign them).
func dotSetup(aOff, bOff uint64, stride int64) func(mem *gvinst.Memory, cpu *gvinst.CPU) {
	return func(mem *gvinst.Memory, cpu *gvinst.CPU) {
		for i := 0; i < 16; i++ {
			_ = mem.Store(uA+aOff+uint64(8*i), 8, math.Float64bits(float64(i)*0.37-1.1))
		}
		for i := 0; i < 0x3000/8-1; i++ {
			_ = mem.Store(uB+bOff+uint64(8*i), 8, math.Float64bits(float64(i%29)/7+0.01))
		}
		cpu.State[gvinst.SReg(1)] = 0
		cpu.State[gvinst.SReg(2)] = uN
		cpu.State[gvinst.SReg(6)] = uA + aOff
		cpu.State[gvinst.SReg(7)] = uB + bOff
		cpu.State[gvinst.SReg(8)] = uC
		cpu.State[gvinst.SReg(9)] = uint64(stride)
		cpu.State[gvinst.SReg(12)] = 0x5_ffff_fff8
		cpu.State[gvinst.SReg(14)] = uD
	}
}

// runOnGPU runs c's iterations 2..arrivals-3 on gpusim with each site's
// footprint from sites (nil: c.data for all), the rest on the CPU engine,
// and compares memory and guest registers with a CPU-only run. It returns
// the launch's error (then nothing is compared).
func runOnGPU(t *testing.T, c loopCase, sites func(k *Kernel) []Range) (*Kernel, error) {
	t.Helper()
	bs := parseBlocks(t, c.src)
	nest := &Nest{Header: c.header, Blocks: map[uint64]*gvinst.VBlock{}}
	for _, a := range c.level {
		nest.Blocks[a] = bs[a]
	}
	k, err := Generate(nest)
	if err != nil {
		t.Fatal(err)
	}
	if c.unchecked {
		if k.Unchecked == nil {
			t.Fatal("the kernel has no unchecked variant")
		}
		k = k.Unchecked
	}
	mod, err := ptx.Parse(k.PTX)
	if err != nil {
		t.Fatalf("generated PTX does not parse: %v\n%s", err, numbered(k.PTX))
	}
	if err := ptx.Check(mod); err != nil {
		t.Fatalf("generated PTX does not check: %v\n%s", err, numbered(k.PTX))
	}
	refMem, refCPU := newGuest(t, c)
	runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), refCPU)

	mem, cpu := newGuest(t, c)
	e := gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{Breakpoints: map[uint64]bool{c.header: true}})
	var states [2][]uint64
	for s := 0; s < 2; s++ {
		if st := e.Run(cpu, 0); st.Kind != gvinst.StopBreakpoint {
			t.Fatalf("expected a breakpoint, got %v", st)
		}
		for _, l := range k.LiveIns {
			states[s] = append(states[s], liveValue(mem, cpu, l))
		}
	}
	count := c.arrivals - 2 - 2
	in := LaunchInput{Count: count, Values: states[1]}
	for i := range k.LiveIns {
		in.Steps = append(in.Steps, states[1][i]-states[0][i])
	}
	if sites != nil {
		in.Sites = sites(k)
	} else {
		for range k.Sites {
			in.Sites = append(in.Sites, c.data)
		}
	}
	ctx, fn := simKernel(t, k)
	if _, err := Launch(ctx, fn, k, mem, in, nil); err != nil {
		return k, err
	}
	for i, l := range k.LiveIns {
		setLive(mem, cpu, l, in.Values[i]+in.Steps[i]*count)
	}
	runToSyscall(t, e, cpu)
	want, got := make([]byte, c.data.Hi-c.data.Lo), make([]byte, c.data.Hi-c.data.Lo)
	_ = refMem.Read(c.data.Lo, want)
	_ = mem.Read(c.data.Lo, got)
	if !bytes.Equal(want, got) {
		for i := range want {
			if want[i] != got[i] {
				t.Fatalf("memory differs first at %#x: cpu %x, gpu %x\n%s", c.data.Lo+uint64(i), want[i:i+8], got[i:i+8], numbered(k.PTX))
			}
		}
	}
	for r := gvinst.Reg(0); r < gvinst.NumGuestSlots; r++ {
		if refCPU.State[r] != cpu.State[r] {
			t.Errorf("slot %s: cpu %#x, accelerated %#x", r, refCPU.State[r], cpu.State[r])
		}
	}
	return k, nil
}

// unrolledLoop returns the unrolled loop of kernel text src (from its
// label to its back edge), the first one, or "".
func unrolledLoop(src string) string {
	i := strings.Index(src, "_unroll:\n")
	if i < 0 {
		return ""
	}
	j := strings.Index(src[i:], "_unroll;\n")
	if j < 0 {
		return ""
	}
	return src[i : i+j]
}

// TestUnrolledLoopsMatchCPU runs the dotNest variants, whose inner loop
// is hoisted and unrolled, with trip counts 0 to 15 in one launch,
// against the CPU engine; then with footprints that are exact (they
// pass) and one element short, or misaligned (the kernel must fail).
func TestUnrolledLoopsMatchCPU(t *testing.T) {
	for _, vr := range dotVariants(t) {
		t.Run(vr.name, func(t *testing.T) {
			stride := int64(uStride)
			bOff := uint64(0)
			if vr.name == "negative" {
				stride = -uStride
			}
			c := loopCase{name: vr.name, src: vr.src, header: 0x4000, level: []uint64{0x4000, 0x4010, 0x4030}, arrivals: uN + 1,
				setup: dotSetup(0, bOff, stride), data: Range{dataBase, dataBase + 0x8000}}
			k, err := runOnGPU(t, c, nil)
			if err != nil {
				t.Fatalf("launch: %v\n%s", err, numbered(k.PTX))
			}
			u := unrolledLoop(k.PTX)
			if u == "" {
				t.Fatalf("the inner loop is not unrolled:\n%s", numbered(k.PTX))
			}
			if strings.Contains(u, "%sd") || strings.Contains(u, "%sl") {
				t.Errorf("the unrolled loop still adds deltas or checks:\n%s", u)
			}
			if vr.name == "f64" && !regexp.MustCompile(`ld\.global\.[bf]64 %(d|hld)\d+, \[%hv\d+\+24\];`).MatchString(u) {
				t.Errorf("no immediate offset in the unrolled loop:\n%s", u)
			}
			if (vr.name == "sunk" || vr.name == "sunkalias") && (strings.Contains(u, "st.global") || !strings.Contains(k.PTX, "min.s64")) {
				t.Errorf("the store is not sunk out of the unrolled loop behind an entry test:\n%s", numbered(k.PTX))
			}
			// The unchecked variant (replays of a proven input) has the
			// same loop unrolled, and writes what the CPU does.
			uc := c
			uc.unchecked = true
			ku, err := runOnGPU(t, uc, nil)
			if err != nil {
				t.Fatalf("unchecked launch: %v\n%s", err, numbered(ku.PTX))
			}
			if uu := unrolledLoop(ku.PTX); uu == "" || strings.Contains(uu, "%sd") {
				t.Errorf("the unchecked kernel's loop is not unrolled through device pointers:\n%s", numbered(ku.PTX))
			}
			if vr.name == "counter32" && strings.Contains(u, "4294967295") {
				t.Errorf("the 32-bit counter still steps in the unrolled loop:\n%s", u)
			}
			if vr.name == "negative" && !regexp.MustCompile(`\[%hv\d+\+-24\]`).MatchString(u) {
				t.Errorf("no negative immediate offset in the unrolled loop:\n%s", u)
			}
			// The A site (0) exactly as large as the longest loop reads,
			// then one element short, then misaligned.
			aSite := func(lo, hi uint64) func(k *Kernel) []Range {
				return func(k *Kernel) []Range {
					var rs []Range
					for i := range k.Sites {
						rs = append(rs, c.data)
						if i == 0 {
							rs[i] = Range{lo, hi}
						}
					}
					return rs
				}
			}
			if _, err := runOnGPU(t, c, aSite(uA, uA+15*8)); err != nil {
				t.Errorf("exact footprint: %v", err)
			}
			var ke *KernelError
			if _, err := runOnGPU(t, c, aSite(uA, uA+14*8)); !errors.As(err, &ke) || ke.Code != ErrCodeFootprint {
				t.Errorf("footprint one short: got %v, want a footprint error", err)
			}
			if _, err := runOnGPU(t, c, aSite(uA+8, uA+16*8)); !errors.As(err, &ke) || ke.Code != ErrCodeFootprint {
				t.Errorf("footprint starting late: got %v, want a footprint error", err)
			}
			mis := c
			mis.setup = dotSetup(4, bOff, stride)
			if _, err := runOnGPU(t, mis, nil); !errors.As(err, &ke) || (ke.Code != ErrCodeFootprint && ke.Code != ErrCodeAlign) {
				t.Errorf("misaligned A: got %v, want a footprint or alignment error", err)
			}
		})
	}
}
