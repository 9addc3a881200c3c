package gpusim

import (
	"math"
	"testing"

	"github.com/gxbit/gxbit/gpu"
)

func TestSaxpy(t *testing.T) {
	for _, workers := range []int{1, 0} {
		h := newHarness(t, Options{Workers: workers})
		m := h.loadFile("saxpy.ptx")
		f := h.fn(m, "saxpy")
		const n = 1000
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = float32(i)*0.5, float32(n-i)
		}
		px, py := h.upload(f32s(x)), h.upload(f32s(y))
		err := h.ctx.Launch(f, gpu.LaunchConfig{Grid: dim(4, 1, 1), Block: dim(256, 1, 1)},
			[][]byte{p32(n), pf32(3), pptr(px), pptr(py)})
		if err != nil {
			t.Fatal(err)
		}
		got := toF32s(h.download(py, 4*n))
		for i := range got {
			want := float32(math.FMA(float64(x[i]), 3, float64(y[i])))
			if got[i] != want {
				t.Fatalf("y[%d] = %v, want %v", i, got[i], want)
			}
		}
		st := h.ctx.LastLaunchStats()
		if st.Kernel != "saxpy" || st.WarpInstructions == 0 || st.ThreadInstructions == 0 {
			t.Errorf("stats = %+v", st)
		}
	}
}

func TestMatmul(t *testing.T) {
	h := newHarness(t, Options{})
	m := h.loadFile("matmul.ptx")
	f := h.fn(m, "matmul")
	const n = 40
	a, b := make([]float32, n*n), make([]float32, n*n)
	for i := range a {
		a[i], b[i] = float32(i%7-3), float32(i%5-2)
	}
	pa, pb, pc := h.upload(f32s(a)), h.upload(f32s(b)), h.upload(make([]byte, 4*n*n))
	err := h.ctx.Launch(f, gpu.LaunchConfig{Grid: dim(3, 3, 1), Block: dim(16, 16, 1)},
		[][]byte{pptr(pa), pptr(pb), pptr(pc), p32(n)})
	if err != nil {
		t.Fatal(err)
	}
	got := toF32s(h.download(pc, 4*n*n))
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var s float32
			for k := 0; k < n; k++ {
				s += a[i*n+k] * b[k*n+j]
			}
			if got[i*n+j] != s {
				t.Fatalf("C[%d][%d] = %v, want %v", i, j, got[i*n+j], s)
			}
		}
	}
}

func TestDivergence(t *testing.T) {
	h := newHarness(t, Options{Workers: 1})
	m := h.loadFile("divergence.ptx")
	const n = 64
	out, act := h.upload(make([]byte, 4*n)), h.upload(make([]byte, 4*n))
	if err := h.ctx.Launch(h.fn(m, "divergence"), gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(n, 1, 1)},
		[][]byte{pptr(out), pptr(act)}); err != nil {
		t.Fatal(err)
	}
	got, acts := toU32s(h.download(out, 4*n)), toU32s(h.download(act, 4*n))
	for i := 0; i < n; i++ {
		v := uint32(3)
		if i%2 == 0 {
			v = 2
			if i%4 == 0 {
				v = 1
			}
		}
		for j := 0; j < i%8; j++ {
			v = v*3 + uint32(j)
		}
		if got[i] != v {
			t.Errorf("out[%d] = %d, want %d", i, got[i], v)
		}
		if acts[i] != 0xffffffff {
			t.Errorf("activemask after the loop in thread %d = %#x, want all lanes reconverged", i, acts[i])
		}
	}
	st := h.ctx.LastLaunchStats()
	// Per warp: the odd/even split, the %4 split on the even side, and 7
	// loop exits that split the remaining lanes (trip counts 0..7; the last
	// group leaves together).
	if st.DivergentBranches != 2*9 {
		t.Errorf("divergent branches = %d, want %d", st.DivergentBranches, 2*9)
	}
	if e := st.SIMTEfficiency(); e <= 0.3 || e >= 0.9 {
		t.Errorf("SIMT efficiency = %.3f, want clearly below 1", e)
	}

	if err := h.ctx.Launch(h.fn(m, "uniform"), gpu.LaunchConfig{Grid: dim(2, 1, 1), Block: dim(n, 1, 1)},
		[][]byte{pptr(out)}); err != nil {
		t.Fatal(err)
	}
	if st := h.ctx.LastLaunchStats(); st.SIMTEfficiency() != 1 || st.DivergentBranches != 0 || st.ThreadInstructions != st.WarpInstructions*32 {
		t.Errorf("uniform kernel stats = %+v (efficiency %v)", st, st.SIMTEfficiency())
	}

	// Partial warp: 40 threads = one full and one 8-lane warp.
	if err := h.ctx.Launch(h.fn(m, "early"), gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(40, 1, 1)},
		[][]byte{pptr(out)}); err != nil {
		t.Fatal(err)
	}
	got = toU32s(h.download(out, 4*n))
	for i := 0; i < 40; i++ {
		want := map[int]uint32{0: 2, 1: 7, 2: 9}[i%3] // 2 is left from "divergence"
		if i%3 == 0 {
			continue
		}
		if got[i] != want {
			t.Errorf("early: out[%d] = %d, want %d", i, got[i], want)
		}
	}
}

func TestReduce(t *testing.T) {
	for _, workers := range []int{1, 2} {
		h := newHarness(t, Options{Workers: workers})
		m := h.loadFile("reduce.ptx")
		const blocks, threads = 37, 256
		in := make([]uint32, blocks*threads)
		for i := range in {
			in[i] = uint32(i*7919) % 1000
		}
		pin, pout := h.upload(u32s(in)), h.upload(make([]byte, 4*blocks))
		for _, k := range []struct {
			name   string
			shared uint32
		}{{"reduce_static", 0}, {"reduce_dynamic", 4 * threads}} {
			if err := h.ctx.Memset(pout, 0, 4*blocks); err != nil {
				t.Fatal(err)
			}
			err := h.ctx.Launch(h.fn(m, k.name), gpu.LaunchConfig{Grid: dim(blocks, 1, 1), Block: dim(threads, 1, 1), SharedBytes: k.shared},
				[][]byte{pptr(pin), pptr(pout)})
			if err != nil {
				t.Fatalf("%s: %v", k.name, err)
			}
			got := toU32s(h.download(pout, 4*blocks))
			for b := 0; b < blocks; b++ {
				var s uint32
				for _, v := range in[b*threads : (b+1)*threads] {
					s += v
				}
				if got[b] != s {
					t.Fatalf("%s workers=%d: block %d sum = %d, want %d", k.name, workers, b, got[b], s)
				}
			}
		}
	}
}

func TestAtomics(t *testing.T) {
	h := newHarness(t, Options{Workers: 2})
	m := h.loadFile("atomics.ptx")
	const n = 200000
	in := make([]uint32, n)
	want := make([]uint32, 64)
	for i := range in {
		in[i] = uint32(i*i + 3*i)
		want[in[i]&63]++
	}
	pin, bins := h.upload(u32s(in)), h.upload(make([]byte, 4*64))
	if err := h.ctx.Launch(h.fn(m, "histogram"), gpu.LaunchConfig{Grid: dim((n+255)/256, 1, 1), Block: dim(256, 1, 1)},
		[][]byte{pptr(pin), pptr(bins), p32(n)}); err != nil {
		t.Fatal(err)
	}
	got := toU32s(h.download(bins, 4*64))
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("bin %d = %d, want %d", i, got[i], want[i])
		}
	}

	pc, pf, pd := h.upload(make([]byte, 4)), h.upload(make([]byte, 4)), h.upload(make([]byte, 8))
	const blocks, threads = 50, 96
	if err := h.ctx.Launch(h.fn(m, "counter"), gpu.LaunchConfig{Grid: dim(blocks, 1, 1), Block: dim(threads, 1, 1)},
		[][]byte{pptr(pc), pptr(pf), pptr(pd)}); err != nil {
		t.Fatal(err)
	}
	if c := toU32s(h.download(pc, 4))[0]; c != blocks*threads {
		t.Errorf("cas counter = %d, want %d", c, blocks*threads)
	}
	if f := toF32s(h.download(pf, 4))[0]; f != blocks*threads {
		t.Errorf("f32 atomic sum = %v, want %d", f, blocks*threads)
	}
	if d := math.Float64frombits(toU64s(h.download(pd, 8))[0]); d != blocks*threads/2 {
		t.Errorf("f64 atomic sum = %v, want %d", d, blocks*threads/2)
	}

	// Semantics of each operation, one lane per slot.
	const lanes = 60
	slots, a, c := make([]uint32, lanes), make([]uint32, lanes), make([]uint32, lanes)
	for i := range slots {
		slots[i] = uint32(i*37) ^ 0x5a
		a[i] = uint32(i*11) % 50
		if i%20 == 9 {
			c[i] = slots[i] // cas that succeeds
		}
		if i == 1 {
			a[i] = 0xfffffff0 // negative for min.s32
		}
		if i == 4 {
			slots[i] = 0 // dec of 0 wraps to a
		}
	}
	ps, pa, pcc, pold := h.upload(u32s(slots)), h.upload(u32s(a)), h.upload(u32s(c)), h.upload(make([]byte, 4*lanes))
	if err := h.ctx.Launch(h.fn(m, "ops"), gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(lanes, 1, 1)},
		[][]byte{pptr(ps), pptr(pa), pptr(pcc), pptr(pold)}); err != nil {
		t.Fatal(err)
	}
	gotSlots, gotOld := toU32s(h.download(ps, 4*lanes)), toU32s(h.download(pold, 4*lanes))
	for i := range slots {
		o, x := slots[i], a[i]
		var nv uint32
		switch i % 10 {
		case 0:
			nv = o + x
		case 1:
			nv = uint32(min(int32(o), int32(x)))
		case 2:
			nv = max(o, x)
		case 3:
			nv = o + 1
			if o >= x {
				nv = 0
			}
		case 4:
			nv = o - 1
			if o == 0 || o > x {
				nv = x
			}
		case 5:
			nv = o & x
		case 6:
			nv = o | x
		case 7:
			nv = o ^ x
		case 8:
			nv = x
		case 9:
			nv = o
			if o == c[i] {
				nv = x
			}
		}
		if gotOld[i] != o || gotSlots[i] != nv {
			t.Errorf("lane %d op %d: old %#x new %#x, want old %#x new %#x", i, i%10, gotOld[i], gotSlots[i], o, nv)
		}
	}
}

func TestWarpOps(t *testing.T) {
	h := newHarness(t, Options{Workers: 1})
	m := h.loadFile("warp.ptx")
	const n = 64
	out := h.upload(make([]byte, 4*11*n))
	if err := h.ctx.Launch(h.fn(m, "warp"), gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(n, 1, 1)},
		[][]byte{pptr(out)}); err != nil {
		t.Fatal(err)
	}
	got := toU32s(h.download(out, 4*11*n))
	val := func(lane int) uint32 { return uint32(lane*lane + 1) }
	var sum uint32
	for l := 0; l < 32; l++ {
		sum += val(l)
	}
	var ballot uint32
	for l := 0; l < 32; l += 3 {
		ballot |= 1 << l
	}
	for tid := 0; tid < n; tid++ {
		l := tid % 32
		up, upOK := val(l), uint32(0)
		if l >= 3 {
			up, upOK = val(l-3), 1
		}
		down := val(l)
		if l+5 <= 31 {
			down = val(l + 5)
		}
		act := uint32(0)
		if l < 10 {
			act = 1<<10 - 1
		}
		want := []uint32{up, down, val(l ^ 6), val(7), val(l&^7 + 3), sum, ballot,
			1 | 2 | 4 | 16*0, act, upOK, 1<<l - 1}
		row := got[tid*11 : tid*11+11]
		for k := range want {
			if row[k] != want[k] {
				t.Errorf("thread %d word %d = %#x, want %#x", tid, k, row[k], want[k])
			}
		}
	}
}

func TestCallsAndSpaces(t *testing.T) {
	h := newHarness(t, Options{Workers: 1})
	m := h.loadFile("calls.ptx")
	const n = 40
	out := h.upload(make([]byte, 4*5*n))
	if err := h.ctx.Launch(h.fn(m, "calls"), gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(n, 1, 1)},
		[][]byte{pptr(out)}); err != nil {
		t.Fatal(err)
	}
	got := toU32s(h.download(out, 4*5*n))
	for i := 0; i < n; i++ {
		r0 := int32(i*i + 7)
		if i < 3 {
			r0 = -r0
		}
		want := []uint32{uint32(r0), uint32(int32(i) - 7), uint32(2 * i), uint32(i + i%8), uint32(100*(i%4+1) + 5)}
		for k := range want {
			if got[i*5+k] != want[k] {
				t.Errorf("thread %d word %d = %d, want %d", i, k, int32(got[i*5+k]), int32(want[k]))
			}
		}
	}
}

const prodConsPTX = `.version 8.0
.target sm_90
.address_size 64
// Warp 1 produces buf[0..31] in shared memory and bar.arrives on barrier 1;
// warp 0 bar.syncs on it, then fills buf[32..63] from the produced values.
// Both meet at barrier 0; vector loads and stores move buf out.
.visible .entry prodcons(.param .u64 out)
{
	.reg .pred %p<2>;
	.reg .b32 %r<12>;
	.reg .b64 %rd<6>;
	.shared .align 16 .b8 buf[256];
	mov.u32 %r1, %tid.x;
	setp.ge.u32 %p1, %r1, 32;
	and.b32 %r4, %r1, 31;
	shl.b32 %r5, %r4, 2;
	mov.u32 %r6, buf;
	add.s32 %r6, %r6, %r5;
	@!%p1 bra CONSUMER;
	mul.lo.u32 %r7, %r1, 3;
	st.shared.u32 [%r6], %r7;
	bar.arrive 1, 64;
	bra.uni JOIN;
CONSUMER:
	bar.sync 1, 64;
	ld.shared.u32 %r10, [%r6];
	add.s32 %r10, %r10, 1;
	st.shared.u32 [%r6+128], %r10;
JOIN:
	barrier.sync.aligned 0;
	setp.ge.u32 %p0, %r1, 16;
	@%p0 bra END;
	shl.b32 %r5, %r1, 4;
	mov.u32 %r6, buf;
	add.s32 %r6, %r6, %r5;
	ld.shared.v4.u32 {%r7, %r8, %r9, %r10}, [%r6];
	ld.param.u64 %rd1, [out];
	mul.wide.u32 %rd2, %r1, 16;
	add.s64 %rd3, %rd1, %rd2;
	st.global.v2.u32 [%rd3], {%r7, %r8};
	st.global.v2.u32 [%rd3+8], {%r9, %r10};
END:
	ret;
}
`

func TestNamedBarriersAndVectors(t *testing.T) {
	h := newHarness(t, Options{Workers: 1})
	f := h.fn(h.load(prodConsPTX), "prodcons")
	out := h.upload(make([]byte, 4*64))
	if err := h.ctx.Launch(f, gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(64, 1, 1)}, [][]byte{pptr(out)}); err != nil {
		t.Fatal(err)
	}
	got := toU32s(h.download(out, 4*64))
	for i := 0; i < 64; i++ {
		want := uint32((i%32 + 32) * 3)
		if i >= 32 {
			want++
		}
		if got[i] != want {
			t.Errorf("word %d = %d, want %d", i, got[i], want)
		}
	}
}

const sregPTX = `.version 8.0
.target sm_90
.address_size 64
.visible .entry sregs(.param .u64 out)
{
	.reg .b32 %r<20>;
	.reg .b64 %rd<8>;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %tid.y;
	mov.u32 %r3, %tid.z;
	mov.u32 %r4, %ntid.x;
	mov.u32 %r5, %ntid.y;
	mov.u32 %r6, %ctaid.x;
	mov.u32 %r7, %ctaid.y;
	mov.u32 %r8, %ctaid.z;
	mov.u32 %r9, %nctaid.x;
	mov.u32 %r10, %nctaid.y;
	mov.u32 %r11, %nctaid.z;
	mov.u32 %r12, %warpid;
	mov.u32 %r13, %laneid;
	mov.u32 %r14, %lanemask_ge;
	mov.u32 %r15, %nwarpid;
	mov.u64 %rd5, %clock64;
	mov.u32 %r16, %dynamic_smem_size;
	// linear thread and block index
	mad.lo.u32 %r17, %r3, %r5, %r2;
	mad.lo.u32 %r17, %r17, %r4, %r1;
	mad.lo.u32 %r18, %r8, %r10, %r7;
	mad.lo.u32 %r18, %r18, %r9, %r6;
	mov.u32 %r19, %ntid.z;
	mul.lo.u32 %r19, %r19, %r5;
	mul.lo.u32 %r19, %r19, %r4;
	mad.lo.u32 %r18, %r18, %r19, %r17;
	ld.param.u64 %rd1, [out];
	mul.wide.u32 %rd2, %r18, 64;
	add.s64 %rd3, %rd1, %rd2;
	st.global.v4.u32 [%rd3], {%r1, %r2, %r3, %r6};
	st.global.v4.u32 [%rd3+16], {%r7, %r8, %r9, %r11};
	st.global.v4.u32 [%rd3+32], {%r12, %r13, %r14, %r15};
	st.global.u32 [%rd3+48], %r16;
	st.global.u64 [%rd3+56], %rd5;
	ret;
}
`

func TestSpecialRegisters(t *testing.T) {
	h := newHarness(t, Options{Workers: 2})
	f := h.fn(h.load(sregPTX), "sregs")
	grid, block := dim(3, 2, 2), dim(8, 5, 2) // 80 threads: 2 full warps and one of 16
	n := int(grid.Count() * block.Count())
	out := h.upload(make([]byte, 64*n))
	if err := h.ctx.Launch(f, gpu.LaunchConfig{Grid: grid, Block: block, SharedBytes: 96}, [][]byte{pptr(out)}); err != nil {
		t.Fatal(err)
	}
	got := toU32s(h.download(out, 64*n))
	i := 0
	for bz := 0; bz < 2; bz++ {
		for by := 0; by < 2; by++ {
			for bx := 0; bx < 3; bx++ {
				for t0 := 0; t0 < 80; t0++ {
					tx, ty, tz := t0%8, t0/8%5, t0/40
					lane := t0 % 32
					want := []uint32{uint32(tx), uint32(ty), uint32(tz), uint32(bx), uint32(by), uint32(bz), 3, 2,
						uint32(t0 / 32), uint32(lane), ^uint32(0) << lane, 3, 96}
					row := got[i*16 : i*16+13]
					for k := range want {
						if row[k] != want[k] {
							t.Fatalf("block (%d,%d,%d) thread %d word %d = %d, want %d", bx, by, bz, t0, k, row[k], want[k])
						}
					}
					i++
				}
			}
		}
	}
}

func TestReconvergeAfterExit(t *testing.T) {
	h := newHarness(t, Options{Workers: 1})
	m := h.loadFile("divergence.ptx")
	out := h.upload(make([]byte, 4*32))
	if err := h.ctx.Launch(h.fn(m, "exitjoin"), gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(32, 1, 1)},
		[][]byte{pptr(out)}); err != nil {
		t.Fatal(err)
	}
	got := toU32s(h.download(out, 4*32))
	for i, v := range got {
		if i%4 == 0 {
			continue
		}
		if v != 0xeeeeeeee {
			t.Errorf("thread %d: activemask at the join = %#x, want %#x", i, v, 0xeeeeeeee)
		}
	}
}

const paramAddrPTX = `.version 8.0
.target sm_90
.address_size 64
// Reads a by-value struct parameter through a generic pointer.
.visible .entry pstruct(.param .align 8 .b8 s[24], .param .u64 out)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<6>;
	mov.b64 %rd1, s;
	cvta.param.u64 %rd2, %rd1;
	ld.u32 %r1, [%rd2+4];
	ld.u64 %rd3, [%rd2+16];
	cvt.u32.u64 %r2, %rd3;
	add.s32 %r3, %r1, %r2;
	ld.param.u64 %rd4, [out];
	st.global.u32 [%rd4], %r3;
	ret;
}
`

func TestParamAddress(t *testing.T) {
	h := newHarness(t, Options{})
	f := h.fn(h.load(paramAddrPTX), "pstruct")
	out := h.upload(make([]byte, 4))
	s := make([]byte, 24)
	copy(s[4:], p32(40))
	copy(s[16:], p64(2))
	if err := h.ctx.Launch(f, gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(1, 1, 1)}, [][]byte{s, pptr(out)}); err != nil {
		t.Fatal(err)
	}
	if got := toU32s(h.download(out, 4))[0]; got != 42 {
		t.Errorf("got %d, want 42", got)
	}
}
