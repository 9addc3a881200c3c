package gpusim

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gpu"
)

// copyPTX is a kernel copying one element per thread from src to dst, with
// .TYPE elements of SIZE bytes. The thread whose index is badLoad loads
// from badAddr instead, the one whose index is badStore stores there; when
// odd is not 0, only odd threads copy (a partial active mask).
const copyPTX = `
.version 8.0
.target sm_90
.address_size 64

.visible .entry copy(.param .u64 src, .param .u64 dst, .param .u32 badLoad,
	.param .u32 badStore, .param .u64 badAddr, .param .u32 odd)
{
	.reg .pred %p<4>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<8>;
	.reg .TYPE %v;
	ld.param.u64 %rd1, [src];
	ld.param.u64 %rd2, [dst];
	ld.param.u32 %r1, [badLoad];
	ld.param.u32 %r2, [badStore];
	ld.param.u64 %rd3, [badAddr];
	ld.param.u32 %r3, [odd];
	mov.u32 %r4, %tid.x;
	mul.wide.u32 %rd4, %r4, SIZE;
	add.s64 %rd5, %rd1, %rd4;
	add.s64 %rd6, %rd2, %rd4;
	setp.eq.u32 %p1, %r4, %r1;
	selp.b64 %rd5, %rd3, %rd5, %p1;
	setp.eq.u32 %p2, %r4, %r2;
	selp.b64 %rd6, %rd3, %rd6, %p2;
	and.b32 %r5, %r4, 1;
	setp.eq.u32 %p3, %r5, 0;
	setp.ne.and.u32 %p3, %r3, 0, %p3;
	@%p3 bra DONE;
	ld.global.TYPE %v, [%rd5];
	st.global.TYPE [%rd6], %v;
DONE:
	ret;
}
`

// TestGlobalFastPaths checks the whole-warp load and store paths against
// the per-lane ones they stand in for: a lane that leaves the allocation or
// is misaligned in a warp whose other lanes take the fast path must fault
// with the same lane and address, stores before it must land and stores
// after it must not, and partial masks must touch only their lanes.
func TestGlobalFastPaths(t *testing.T) {
	for _, size := range []int{4, 8} {
		t.Run(fmt.Sprintf("%dbytes", size), func(t *testing.T) {
			typ := map[int]string{4: "u32", 8: "u64"}[size]
			src := strings.NewReplacer(".TYPE", "."+typ, "SIZE", fmt.Sprint(size)).Replace(copyPTX)
			h := newHarness(t, Options{Workers: 1})
			f := h.fn(h.load(src), "copy")
			const n = 64 // two warps: the first fills the allocation cache
			in := make([]byte, n*size)
			for i := range in {
				in[i] = byte(i*7 + 1)
			}
			ps := h.upload(in)
			const none = ^uint32(0)
			run := func(badLoad, badStore uint32, badAddr gpu.DevicePtr, odd uint32) ([]byte, error) {
				pd := h.upload(make([]byte, n*size))
				err := h.ctx.Launch(f, gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(n, 1, 1)},
					[][]byte{pptr(ps), pptr(pd), p32(badLoad), p32(badStore), pptr(badAddr), p32(odd)})
				return h.download(pd, n*size), err
			}
			elem := func(b []byte, i int) string { return fmt.Sprintf("%x", b[i*size:(i+1)*size]) }

			out, err := run(none, none, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != string(in) {
				t.Fatalf("copy: got %x, want %x", out, in)
			}

			out, err = run(none, none, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				want := strings.Repeat("00", size)
				if i%2 == 1 {
					want = elem(in, i)
				}
				if got := elem(out, i); got != want {
					t.Fatalf("odd lanes: element %d = %s, want %s", i, got, want)
				}
			}

			below := ps - 64
			_, err = run(49, none, below, 0)
			wantCode(t, err, gpu.ErrIllegalAddress, "ld.global."+typ, "thread (49,0,0)", fmt.Sprintf("global address 0x%x", uint64(below)))
			_, err = run(51, none, below, 1)
			wantCode(t, err, gpu.ErrIllegalAddress, "ld.global."+typ, "thread (51,0,0)", fmt.Sprintf("global address 0x%x", uint64(below)))
			_, err = run(49, none, ps+2, 0)
			wantCode(t, err, gpu.ErrMisalignedAddress, "ld.global."+typ, "thread (49,0,0)", fmt.Sprintf("global address 0x%x", uint64(ps+2)))
			// A lane both misaligned and running past the end is misaligned.
			last := ps + gpu.DevicePtr(n*size) - 1
			_, err = run(40, none, last, 0)
			wantCode(t, err, gpu.ErrMisalignedAddress, "thread (40,0,0)", fmt.Sprintf("global address 0x%x", uint64(last)))

			out, err = run(none, 49, below, 0)
			wantCode(t, err, gpu.ErrIllegalAddress, "st.global."+typ, "thread (49,0,0)", fmt.Sprintf("global address 0x%x", uint64(below)))
			for i := 0; i < n; i++ {
				want := elem(in, i)
				if i >= 49 {
					want = strings.Repeat("00", size)
				}
				if got := elem(out, i); got != want {
					t.Fatalf("store fault: element %d = %s, want %s (lanes before the fault store, lanes after do not)", i, got, want)
				}
			}
			out, err = run(none, 37, ps+1, 1)
			wantCode(t, err, gpu.ErrMisalignedAddress, "st.global."+typ, "thread (37,0,0)")
			for i := 0; i < n; i++ {
				want := strings.Repeat("00", size)
				if i%2 == 1 && i < 37 {
					want = elem(in, i)
				}
				if got := elem(out, i); got != want {
					t.Fatalf("odd-lane store fault: element %d = %s, want %s", i, got, want)
				}
			}
		})
	}
}

// dirtyPTX stores a register that only block 0 writes: every other block
// must see it zero, although the worker's registers are reused from block
// to block and from launch to launch.
const dirtyPTX = `
.version 8.0
.target sm_90
.address_size 64

.visible .entry dirty(.param .u64 dst, .param .u32 writer)
{
	.reg .pred %p1;
	.reg .b32 %r<6>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [dst];
	ld.param.u32 %r5, [writer];
	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %tid.x;
	mad.lo.s32 %r4, %r1, %r2, %r3;
	setp.ne.u32 %p1, %r1, %r5;
	@%p1 bra STORE;
	mov.u32 %r0, 99;
STORE:
	mul.wide.u32 %rd2, %r4, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r0;
	ret;
}
`

func TestRegistersClearedPerBlock(t *testing.T) {
	h := newHarness(t, Options{Workers: 1})
	f := h.fn(h.load(dirtyPTX), "dirty")
	for _, c := range []struct{ grid, block, writer uint32 }{{4, 64, 0}, {3, 96, 1}, {5, 32, 7}} {
		n := int(c.grid * c.block)
		pd := h.upload(make([]byte, 4*n))
		err := h.ctx.Launch(f, gpu.LaunchConfig{Grid: dim(c.grid, 1, 1), Block: dim(c.block, 1, 1)},
			[][]byte{pptr(pd), p32(c.writer)})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range toU32s(h.download(pd, 4*n)) {
			want := uint32(0)
			if uint32(i)/c.block == c.writer {
				want = 99
			}
			if v != want {
				t.Fatalf("grid %d block %d: element %d = %d, want %d", c.grid, c.block, i, v, want)
			}
		}
	}
}

// TestInstructionCounts checks the launch statistics, which the execution
// loop counts per straight-line run, against the count of instructions
// each thread of matmul executes: 32 outside the loop and 8 per iteration.
func TestInstructionCounts(t *testing.T) {
	for _, workers := range []int{1, 3} {
		h := newHarness(t, Options{Workers: workers})
		f := h.fn(h.loadFile("matmul.ptx"), "matmul")
		const n = 48
		pa, pb, pc := h.upload(make([]byte, 4*n*n)), h.upload(make([]byte, 4*n*n)), h.upload(make([]byte, 4*n*n))
		if err := h.ctx.Launch(f, gpu.LaunchConfig{Grid: dim(n/16, n/16, 1), Block: dim(16, 16, 1)},
			[][]byte{pptr(pa), pptr(pb), pptr(pc), p32(n)}); err != nil {
			t.Fatal(err)
		}
		st := h.ctx.LastLaunchStats()
		want := uint64(n*n) * (32 + 8*n)
		if st.ThreadInstructions != want || st.WarpInstructions != want/32 || st.DivergentBranches != 0 {
			t.Errorf("workers %d: stats %+v, want %d thread and %d warp instructions", workers, st, want, want/32)
		}
	}
}

// TestFmaF32FastPath compares fma.rn.f32 over whole warps, where lanes
// take the float64 shortcut two at a time, with the exact fma32 on every
// lane: random bit patterns of every class (zeros, subnormals, infinities,
// NaNs), values whose results are exact, and results near float32 ties.
func TestFmaF32FastPath(t *testing.T) {
	h := newHarness(t, Options{Workers: 1})
	r := rand.New(rand.NewSource(5))
	specials := []uint32{0, 0x80000000, 1, 0x807fffff, 0x00800000, 0x7f7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0x3f800000}
	for round := 0; round < 8; round++ {
		a, b, c := make([]uint64, opLanes), make([]uint64, opLanes), make([]uint64, opLanes)
		for i := range a {
			switch round {
			case 0: // small integers: exact results, the fast path throughout
				a[i], b[i], c[i] = bits32(float32(r.Intn(13))), bits32(float32(r.Intn(13))), bits32(float32(r.Intn(1000)))
			case 1: // a tie of the float64 result: 1 + 2^-24 needs the exact path
				a[i], b[i], c[i] = bits32(1+0x1p-12), bits32(1+0x1p-12), bits32(float32(i%3-1))
			default:
				pick := func() uint64 {
					if r.Intn(4) == 0 {
						return uint64(specials[r.Intn(len(specials))])
					}
					if r.Intn(3) == 0 {
						return uint64(r.Uint32())
					}
					return bits32(randF32(r))
				}
				a[i], b[i], c[i] = pick(), pick(), pick()
			}
		}
		got := runOp(t, h, "f32", "f32", "fma.rn.f32 %d, %a, %b, %c;", a, b, c)
		for l := range got {
			want := bits32(fma32(f32(a[l]), f32(b[l]), f32(c[l]), rndRN))
			if got[l] != want {
				t.Fatalf("round %d lane %d: fma(%#x, %#x, %#x) = %#x, want %#x", round, l, a[l], b[l], c[l], got[l], want)
			}
		}
	}
}

// TestSignedLoadFastPath checks that ld.global.s32 over a whole warp
// sign-extends into a 64-bit register as the per-lane path does.
func TestSignedLoadFastPath(t *testing.T) {
	const src = `
.version 8.0
.target sm_90
.address_size 64

.visible .entry sext(.param .u64 src, .param .u64 dst)
{
	.reg .b32 %r1;
	.reg .b64 %rd<7>;
	ld.param.u64 %rd1, [src];
	ld.param.u64 %rd2, [dst];
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd3, %r1, 4;
	add.s64 %rd4, %rd1, %rd3;
	ld.global.s32 %rd5, [%rd4];
	mul.wide.u32 %rd3, %r1, 8;
	add.s64 %rd6, %rd2, %rd3;
	st.global.u64 [%rd6], %rd5;
	ret;
}
`
	h := newHarness(t, Options{Workers: 1})
	f := h.fn(h.load(src), "sext")
	const n = 96
	in := make([]uint32, n)
	for i := range in {
		in[i] = uint32(i*0x9e3779b9) | uint32(i%2)<<31
	}
	ps, pd := h.upload(u32s(in)), h.upload(make([]byte, 8*n))
	if err := h.ctx.Launch(f, gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(n, 1, 1)}, [][]byte{pptr(ps), pptr(pd)}); err != nil {
		t.Fatal(err)
	}
	for i, v := range toU64s(h.download(pd, 8*n)) {
		if want := uint64(int64(int32(in[i]))); v != want {
			t.Fatalf("element %d = %#x, want %#x", i, v, want)
		}
	}
}

// TestAddImmediate checks the add and sub handlers specialised on an
// immediate second operand, over whole warps and, guarded by a being odd,
// on a partial mask.
func TestAddImmediate(t *testing.T) {
	oddA := func(op string, wide bool) string {
		if wide {
			return "and.b64 %w, %a, 1; setp.ne.u64 %p, %w, 0; mov.b64 %d, %c; @%p " + op
		}
		return "and.b32 %u0, %a, 1; setp.ne.u32 %p, %u0, 0; mov.b32 %d, %c; @%p " + op
	}
	ifOdd := func(want func(a, b, c uint64) uint64) func(a, b, c uint64) uint64 {
		return func(a, b, c uint64) uint64 {
			if a&1 != 0 {
				return want(a, b, c)
			}
			return c
		}
	}
	cases := []opCase{
		{"add.s64 %d, %a, 4;", "s64", "s64", func(a, _, _ uint64) uint64 { return a + 4 }},
		{"add.u64 %d, %a, -1;", "u64", "u64", func(a, _, _ uint64) uint64 { return a - 1 }},
		{"sub.s64 %d, %a, -3;", "s64", "s64", func(a, _, _ uint64) uint64 { return a + 3 }},
		{"sub.u64 %d, %a, 4096;", "u64", "u64", func(a, _, _ uint64) uint64 { return a - 4096 }},
		{"add.u32 %d, %a, 4294967295;", "u32", "u32", func(a, _, _ uint64) uint64 { return a - 1 }},
		{"sub.s32 %d, %a, 7;", "s32", "s32", func(a, _, _ uint64) uint64 { return a - 7 }},
		{"sub.s32 %d, %a, -2147483648;", "s32", "s32", func(a, _, _ uint64) uint64 { return a + 1<<31 }},
		{oddA("add.s64 %d, %a, 12;", true), "s64", "s64", ifOdd(func(a, _, _ uint64) uint64 { return a + 12 })},
		{oddA("sub.u32 %d, %a, 5;", false), "u32", "u32", ifOdd(func(a, _, _ uint64) uint64 { return a - 5 })},
	}
	checkCases(t, cases, edges64, ^uint64(0))
}

// TestIntegerCompareRelations checks every integer comparison of setp
// over whole warps, where each relation has a loop of its own, and on the
// lanes where c is odd.
func TestIntegerCompareRelations(t *testing.T) {
	rels := []struct {
		name string
		f    func(x, y int) bool // on the sign of x-y
	}{
		{"eq", func(x, y int) bool { return x == y }},
		{"ne", func(x, y int) bool { return x != y }},
		{"lt", func(x, y int) bool { return x < y }},
		{"le", func(x, y int) bool { return x <= y }},
		{"gt", func(x, y int) bool { return x > y }},
		{"ge", func(x, y int) bool { return x >= y }},
	}
	unsignedNames := map[string]string{"lt": "lo", "le": "ls", "gt": "hi", "ge": "hs"}
	// cmp3 is -1, 0 or 1 as a is below, equal to or above b in type typ.
	cmp3 := func(typ string, a, b uint64) int {
		switch typ {
		case "s32":
			return cmpInt(int64(int32(a)), int64(int32(b)))
		case "s64":
			return cmpInt(int64(a), int64(b))
		case "u32", "b32":
			return cmpUint(uint64(uint32(a)), uint64(uint32(b)))
		case "u16":
			return cmpUint(uint64(uint16(a)), uint64(uint16(b)))
		}
		return cmpUint(a, b)
	}
	var cases []opCase
	for _, typ := range []string{"s32", "u32", "b32", "u64", "s64", "u16"} {
		for _, r := range rels {
			name := r.name
			if typ[0] != 's' && unsignedNames[name] != "" && typ != "b32" {
				name = unsignedNames[name]
			}
			if typ == "b32" && name != "eq" && name != "ne" {
				continue
			}
			rel, ty := r.f, typ
			holds := func(a, b uint64) uint64 {
				if rel(cmp3(ty, a, b), 0) {
					return 1
				}
				return 0
			}
			setp := fmt.Sprintf("setp.%s.%s %%p, %%a, %%b; selp.u32 %%d, 1, 0, %%p;", name, typ)
			cases = append(cases, opCase{setp, typ, "u32", func(a, b, _ uint64) uint64 { return holds(a, b) }})
			gate := "and.b32 %u0, %c, 1; setp.ne.u32 %q, %u0, 0;"
			if strings.HasSuffix(typ, "64") {
				gate = "and.b64 %w, %c, 1; setp.ne.u64 %q, %w, 0;"
			} else if typ == "u16" {
				continue
			}
			partial := gate + " mov.u32 %d, 7; @%q " + strings.Replace(setp, "selp", "@%q selp", 1)
			cases = append(cases, opCase{partial, typ, "u32", func(a, b, c uint64) uint64 {
				if c&1 == 0 {
					return 7
				}
				return holds(a, b)
			}})
		}
	}
	checkCases(t, cases, edges64, ^uint64(0))
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestFreedAllocationFaults checks that the per-instruction allocation
// cache, kept with the workers' state from launch to launch, does not let
// a later launch read an allocation freed in between.
func TestFreedAllocationFaults(t *testing.T) {
	src := strings.NewReplacer(".TYPE", ".u32", "SIZE", "4").Replace(copyPTX)
	h := newHarness(t, Options{Workers: 1})
	f := h.fn(h.load(src), "copy")
	const n = 64
	ps, pd := h.upload(make([]byte, 4*n)), h.upload(make([]byte, 4*n))
	launch := func() error {
		return h.ctx.Launch(f, gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(n, 1, 1)},
			[][]byte{pptr(ps), pptr(pd), p32(^uint32(0)), p32(^uint32(0)), pptr(0), p32(0)})
	}
	if err := launch(); err != nil {
		t.Fatal(err)
	}
	if err := h.ctx.Free(ps); err != nil {
		t.Fatal(err)
	}
	wantCode(t, launch(), gpu.ErrIllegalAddress, "ld.global.u32", "thread (0,0,0)", fmt.Sprintf("global address 0x%x", uint64(ps)))
}
