package gvinst

import (
	"math"
	"math/rand"
	"strings"
	"testing"
)

// Lane builders for 128-bit test values (lane 0 first).
func lanes(n int, vs ...uint64) v128 {
	var v v128
	for i, x := range vs {
		v.setLane(i, n, x)
	}
	return v
}
func u8s(vs ...uint64) v128  { return lanes(8, vs...) }
func u16s(vs ...uint64) v128 { return lanes(16, vs...) }
func u32s(vs ...uint64) v128 { return lanes(32, vs...) }
func u64s(vs ...uint64) v128 { return lanes(64, vs...) }
func f32s(vs ...float32) v128 {
	var v v128
	for i, x := range vs {
		v.setLane(i, 32, b32(x))
	}
	return v
}
func f64s(vs ...float64) v128 {
	var v v128
	for i, x := range vs {
		v.setLane(i, 64, b64(x))
	}
	return v
}
func seq8(from uint64) v128 {
	var v v128
	for i := 0; i < 16; i++ {
		v.setLane(i, 8, from+uint64(i))
	}
	return v
}

// neg is the two's complement of x in n bits.
func neg(x uint64, n int) uint64 { return -x & laneMask(n) }

// TestVectorOps runs one case or more of every packed op. The operands are
// v0 (a), v2 (b), v4 (a mask) and v6 (a scalar); the result is v10.
func TestVectorOps(t *testing.T) {
	nan32, nan64 := float32(math.NaN()), math.NaN()
	negz := math.Copysign(0, -1)
	cases := []struct {
		inst    string
		a, b, m v128
		s       uint64
		want    v128 // for a scalar result, want[0]
		scalar  bool
	}{
		{"VADD.u8 v10, v0, v2", u8s(0xff, 1), u8s(1, 1), v128{}, 0, u8s(0, 2), false},
		{"VSUB.u64 v10, v0, v2", u64s(0, 5), u64s(1, 2), v128{}, 0, u64s(^uint64(0), 3), false},
		{"VMUL.u32 v10, v0, v2", u32s(0xffffffff, 3), u32s(2, 3), v128{}, 0, u32s(0xfffffffe, 9), false},
		{"VMUL.f64 v10, v0, v2", f64s(1.5, -2), f64s(2, 0.25), v128{}, 0, f64s(3, -0.5), false},
		{"VDIV.f64 v10, v0, v2", f64s(1, 9), f64s(4, 3), v128{}, 0, f64s(0.25, 3), false},
		{"VSQRT.f32 v10, v0", f32s(4, 9, 16, 0.25), v128{}, v128{}, 0, f32s(2, 3, 4, 0.5), false},
		{"VMIN.f32 v10, v0, v2", f32s(1, nan32, 0, 5), f32s(2, 3, float32(negz), nan32), v128{}, 0, f32s(1, 3, float32(negz), nan32), false},
		{"VMAX.s16 v10, v0, v2", u16s(0xffff, 5), u16s(1, 3), v128{}, 0, u16s(1, 5), false},
		{"VMIN.u8 v10, v0, v2", u8s(0xff, 5), u8s(1, 3), v128{}, 0, u8s(1, 3), false},
		{"VAND.b128 v10, v0, v2", v128{0xff00, 0xf0}, v128{0x0ff0, 0xff}, v128{}, 0, v128{0x0f00, 0xf0}, false},
		{"VOR.b128 v10, v0, v2", v128{0xff00, 0xf0}, v128{0x0ff0, 0x0f}, v128{}, 0, v128{0xfff0, 0xff}, false},
		{"VXOR.b128 v10, v0, v2", v128{0xff00, 1}, v128{0x0ff0, 1}, v128{}, 0, v128{0xf0f0, 0}, false},
		{"VANDN.b128 v10, v0, v2", v128{0xff00, 0}, v128{0x0ff0, 7}, v128{}, 0, v128{0x00f0, 7}, false},
		{"VADDSAT.s16 v10, v0, v2", u16s(0x7fff, 0x8000, 1), u16s(1, 0xffff, 2), v128{}, 0, u16s(0x7fff, 0x8000, 3), false},
		{"VADDSAT.u8 v10, v0, v2", u8s(0xf0, 1), u8s(0x20, 1), v128{}, 0, u8s(0xff, 2), false},
		{"VSUBSAT.u8 v10, v0, v2", u8s(5, 0x10), u8s(0x10, 5), v128{}, 0, u8s(0, 0x0b), false},
		{"VSUBSAT.s8 v10, v0, v2", u8s(0x80, 0x7f), u8s(1, 0xff), v128{}, 0, u8s(0x80, 0x7f), false},
		{"VAVG.u8 v10, v0, v2", u8s(1, 0xff), u8s(2, 0xff), v128{}, 0, u8s(2, 0xff, 0), false},
		{"VMULHI.s16 v10, v0, v2", u16s(0x8000, 0xffff), u16s(0x8000, 2), v128{}, 0, u16s(0x4000, 0xffff), false},
		{"VMULHI.u16 v10, v0, v2", u16s(0xffff), u16s(0xffff), v128{}, 0, u16s(0xfffe), false},
		{"VMULW.u32 v10, v0, v2", u32s(0xffffffff, 9, 2, 9), u32s(0xffffffff, 9, 3, 9), v128{}, 0, u64s(0xfffffffe00000001, 6), false},
		{"VMULW.s32 v10, v0, v2", u32s(0xffffffff, 0, 2), u32s(3, 0, 3), v128{}, 0, u64s(neg(3, 64), 6), false},
		{"VMADDW.s16 v10, v0, v2", u16s(3, 2, 0x8000, 0x8000), u16s(5, 4, 0x8000, 0x8000), v128{}, 0, u32s(23, 0x80000000), false},
		{"VSAD.u8 v10, v0, v2", v128{0x0a01, 0xff}, v128{0x0305, 0}, v128{}, 0, v128{11, 255}, false},
		{"VHADD.f32 v10, v0, v2", f32s(1, 2, 3, 4), f32s(10, 20, 30, 40), v128{}, 0, f32s(3, 7, 30, 70), false},
		{"VHADD.u32 v10, v0, v2", u32s(1, 2, 3, 4), u32s(5, 6, 7, 8), v128{}, 0, u32s(3, 7, 11, 15), false},
		{"VHSUB.s16 v10, v0, v2", u16s(5, 2, 1, 3), u16s(9, 9), v128{}, 0, u16s(3, neg(2, 16), 0, 0, 0), false},
		{"VABS.s8 v10, v0", u8s(0x80, 0xff, 3), v128{}, v128{}, 0, u8s(0x80, 1, 3), false},
		{"VSIGN.s32 v10, v0, v2", u32s(5, 6, 7, 8), u32s(neg(1, 32), 0, 1, neg(5, 32)), v128{}, 0, u32s(neg(5, 32), 0, 7, neg(8, 32)), false},
		{"VCMP.eq.u32 v10, v0, v2", u32s(1, 2, 3, 4), u32s(1, 0, 3, 0), v128{}, 0, u32s(0xffffffff, 0, 0xffffffff, 0), false},
		{"VCMP.gt.s8 v10, v0, v2", u8s(0x80, 1), u8s(0, 0), v128{}, 0, u8s(0, 0xff), false},
		{"VCMP.lt.f64 v10, v0, v2", f64s(1, nan64), f64s(2, 1), v128{}, 0, u64s(^uint64(0), 0), false},
		{"VCMP.neu.f32 v10, v0, v2", f32s(1, nan32, 2, 2), f32s(1, 1, 3, 2), v128{}, 0, u32s(0, 0xffffffff, 0xffffffff, 0), false},
		{"VSHL.u16 v10, v0, 1", u16s(0x8001, 3), v128{}, v128{}, 0, u16s(2, 6), false},
		{"VSHL.u16 v10, v0, 16", u16s(0x8001, 3), v128{}, v128{}, 0, v128{}, false},
		{"VSHR.u64 v10, v0, v6", u64s(^uint64(0), 8), v128{}, v128{}, 64, v128{}, false},
		{"VSHR.u32 v10, v0, v6", u32s(0x80000000, 8), v128{}, v128{}, 3, u32s(0x10000000, 1), false},
		{"VSAR.s32 v10, v0, 40", u32s(0x80000000, 1), v128{}, v128{}, 0, u32s(0xffffffff, 0), false},
		{"VSAR.s16 v10, v0, v6", u16s(0x8000, 0x4000), v128{}, v128{}, 1, u16s(0xc000, 0x2000), false},
		{"VBSHL.b128 v10, v0, 3", seq8(1), v128{}, v128{}, 0, v128{0x0504030201000000, 0x0d0c0b0a09080706}, false},
		{"VBSHR.b128 v10, v0, 3", seq8(1), v128{}, v128{}, 0, v128{0x0b0a090807060504, 0x000000100f0e0d0c}, false},
		{"VBSHR.b128 v10, v0, 16", seq8(1), v128{}, v128{}, 0, v128{}, false},
		{"VPACKSS.s16 v10, v0, v2", u16s(0x0100, 0xff00, 5, 0xfffb), u16s(0x7f), v128{}, 0, v128{0x00000000fb05807f, 0x7f}, false},
		{"VPACKSS.s32 v10, v0, v2", u32s(0x10000, 0xfffe0000, 5), u32s(1), v128{}, 0, u16s(0x7fff, 0x8000, 5, 0, 1), false},
		{"VPACKUS.s32 v10, v0, v2", u32s(0x10000, 0xffffffff, 5, 0x8000), v128{}, v128{}, 0, v128{0x80000005_0000ffff, 0}, false},
		{"VPACKUS.s16 v10, v0, v2", u16s(0x100, 0xffff, 0x80), u16s(7), v128{}, 0, v128{0x8000ff, 7}, false},
		{"VUNPACKL.u8 v10, v0, v2", seq8(0), seq8(0x10), v128{}, 0, v128{0x1303120211011000, 0x1707160615051404}, false},
		{"VUNPACKH.u64 v10, v0, v2", u64s(1, 2), u64s(3, 4), v128{}, 0, u64s(2, 4), false},
		{"VUNPACKL.f32 v10, v0, v2", u32s(1, 2, 3, 4), u32s(5, 6, 7, 8), v128{}, 0, u32s(1, 5, 2, 6), false},
		{"VPERM.u32 v10, v0, 27", u32s(1, 2, 3, 4), v128{}, v128{}, 0, u32s(4, 3, 2, 1), false},
		{"VPERMLO.u16 v10, v0, 27", u16s(1, 2, 3, 4, 5, 6, 7, 8), v128{}, v128{}, 0, u16s(4, 3, 2, 1, 5, 6, 7, 8), false},
		{"VPERMHI.u16 v10, v0, 27", u16s(1, 2, 3, 4, 5, 6, 7, 8), v128{}, v128{}, 0, u16s(1, 2, 3, 4, 8, 7, 6, 5), false},
		{"VSHUFP.f32 v10, v0, v2, 78", u32s(1, 2, 3, 4), u32s(5, 6, 7, 8), v128{}, 0, u32s(3, 4, 5, 6), false},
		{"VSHUFP.f64 v10, v0, v2, 1", u64s(1, 2), u64s(3, 4), v128{}, 0, u64s(2, 3), false},
		{"VSHUFB.u8 v10, v0, v2", seq8(0x20), u8s(0x80, 0x0f, 0x00, 0x01, 0x83), v128{}, 0, u8s(0, 0x2f, 0x20, 0x21, 0, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20), false},
		{"VALIGNR.u8 v10, v0, v2, 4", seq8(0x10), seq8(0), v128{}, 0, v128{0x0b0a090807060504, 0x131211100f0e0d0c}, false},
		{"VALIGNR.u8 v10, v0, v2, 20", seq8(0x10), seq8(0), v128{}, 0, v128{0x1b1a191817161514, 0x1f1e1d1c}, false},
		{"VBLEND.u16 v10, v0, v2, 5", u16s(1, 2, 3, 4, 5, 6, 7, 8), u16s(9, 10, 11, 12, 13, 14, 15, 16), v128{}, 0, u16s(9, 2, 11, 4, 5, 6, 7, 8), false},
		{"VBLENDV.u8 v10, v0, v2, v4", v128{}, v128{^uint64(0), ^uint64(0)}, v128{0x80, 1 << 63}, 0, v128{0xff, 0xff << 56}, false},
		{"VBLENDV.f64 v10, v0, v2, v4", u64s(1, 2), u64s(3, 4), v128{1 << 63, 1}, 0, u64s(3, 2), false},
		{"VMOVMSK.f32 v10, v0", f32s(-1, 1, float32(negz), 2), v128{}, v128{}, 0, v128{5}, true},
		{"VMOVMSK.u8 v10, v0", v128{0x80, 1 << 63}, v128{}, v128{}, 0, v128{0x8001}, true},
		{"VEXTRACT.u16 v10, v0, 5", u16s(1, 2, 3, 4, 5, 6, 7, 8), v128{}, v128{}, 0, v128{6}, true},
		{"VINSERT.u32 v10, v0, v6, 2", u32s(1, 2, 3, 4), v128{}, v128{}, 0x123456789abcdef0, u32s(1, 2, 0x9abcdef0, 4), false},
		{"VCVT.rn.f64.s32 v10, v0", u32s(neg(1, 32), 3, 7, 7), v128{}, v128{}, 0, f64s(-1, 3), false},
		{"VCVT.rz.s32.f32 v10, v0", f32s(1.5, -2.5, nan32, 3e9), v128{}, v128{}, 0, u32s(1, neg(2, 32), 0x80000000, 0x80000000), false},
		{"VCVT.rn.s32.f32 v10, v0", f32s(1.5, -2.5, 0.5, 7), v128{}, v128{}, 0, u32s(2, neg(2, 32), 0, 7), false},
		{"VCVT.rn.f32.f64 v10, v0", f64s(1, 2), v128{}, v128{}, 0, f32s(1, 2, 0, 0), false},
		{"VCVT.rn.f64.f32 v10, v0", f32s(1, 2, 3, 4), v128{}, v128{}, 0, f64s(1, 2), false},
		{"VEXT.s32.s16 v10, v0", u16s(0xffff, 2, 0xfffd, 4, 9, 9, 9, 9), v128{}, v128{}, 0, u32s(0xffffffff, 2, 0xfffffffd, 4), false},
		{"VEXT.u64.u8 v10, v0", u8s(0xff, 1, 9), v128{}, v128{}, 0, u64s(0xff, 1), false},
		{"VROUND.rm.f64 v10, v0", f64s(1.5, -1.5), v128{}, v128{}, 0, f64s(1, -2), false},
		{"VPCMPSTR.u8 v10, v0, v2, v4, 0", u8s('a', 'b'), u8s('x', 'a', 'x', 'b'), u64s(2, 4), 0, v128{0xa}, false},
		{"VPCMPSTR.u8 v10, v0, v2, v4, 4", u8s('a', 'z'), u8s('A', '1', 'b', '~'), u64s(2, 4), 0, v128{0x4}, false},
		{"VPCMPSTR.s8 v10, v0, v2, v4, 4", u8s(0xf0, 0x10), u8s(0xff, 0x20, 0x80), u64s(2, 3), 0, v128{0x1}, false},
		{"VPCMPSTR.u8 v10, v0, v2, v4, 8", u8s('a', 'b', 'c'), u8s('a', 'b', 'd', 'e', 'f'), u64s(3, 5), 0, v128{0xffe3}, false},
		{"VPCMPSTR.u8 v10, v0, v2, v4, 12", u8s('a', 'b'), u8s('x', 'a', 'b', 'a', 'b'), u64s(2, 5), 0, v128{0xa}, false},
		{"VPCMPSTR.u8 v10, v0, v2, v4, 16", u8s('a', 'b'), u8s('x', 'a', 'x', 'b'), u64s(2, 4), 0, v128{0xfff5}, false},
		{"VPCMPSTR.u8 v10, v0, v2, v4, 48", u8s('a', 'b'), u8s('x', 'a', 'x', 'b'), u64s(2, 4), 0, v128{0x5}, false},
		{"VPCMPSTR.u8 v10, v0, v2, v4, 64", u8s('a', 'b'), u8s('x', 'a', 'x', 'b'), u64s(2, 4), 0, v128{0xff00ff00}, false},
		{"VPCMPSTR.u16 v10, v0, v2, v4, 73", u16s(1, 2, 3), u16s(1, 5, 3), u64s(3, 3), 0, u16s(0xffff, 0, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff), false},
		{"VROUND.rn.f32 v10, v0", f32s(0.5, 1.5, 2.5, -0.5), v128{}, v128{}, 0, f32s(0, 2, 2, float32(negz)), false},
	}
	for _, c := range cases {
		body := li("v20", c.a[0]) + li("v21", c.a[1]) + "  JOIN.b128 v0, v20, v21\n" +
			li("v22", c.b[0]) + li("v23", c.b[1]) + "  JOIN.b128 v2, v22, v23\n" +
			li("v24", c.m[0]) + li("v25", c.m[1]) + "  JOIN.b128 v4, v24, v25\n" +
			li("v6", c.s) + "  " + c.inst + "\n"
		if c.scalar {
			body += "  PUT.u64 s0, v10\n"
		} else {
			body += "  PUT.b128 x0, v10\n"
		}
		for _, e := range allEngines() {
			m := newMachine(t, e, body)
			m.mustSyscall(t)
			got := v128{m.cpu.State[XReg(0)], m.cpu.State[XReg(0)+1]}
			if c.scalar {
				got = v128{m.cpu.State[S0]}
			}
			if got != c.want {
				t.Errorf("%s %s: a=%#x b=%#x: got %#x, want %#x", e.name, c.inst, c.a, c.b, got, c.want)
			}
		}
	}
}

// TestVectorFastMatchesReference runs packed ops on random inputs (bytes
// drawn from a small alphabet, so lanes often agree) through every engine
// and checks that the specialised forms agree with the reference path.
func TestVectorFastMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	insts := []string{
		"VCMP.eq.u8 v10, v0, v2", "VCMP.eq.s8 v10, v0, v2", "VMOVMSK.u8 v10, v0", "VMOVMSK.s8 v10, v0",
		"VAND.b128 v10, v0, v2", "VOR.b128 v10, v0, v2", "VXOR.b128 v10, v0, v2", "VANDN.b128 v10, v0, v2",
		"VMIN.u8 v10, v0, v2", "VADD.u16 v10, v0, v2", "VSHUFB.u8 v10, v0, v2", "VCMP.gt.s16 v10, v0, v2",
	}
	rnd := func() v128 {
		var v v128
		for i := 0; i < 16; i++ {
			v.setLane(i, 8, []uint64{0, 0x80, 0xff, 'a', 0x7f}[rng.Intn(5)])
		}
		return v
	}
	for _, inst := range insts {
		scalar := strings.HasPrefix(inst, "VMOVMSK")
		for k := 0; k < 40; k++ {
			a, b := rnd(), rnd()
			body := li("v20", a[0]) + li("v21", a[1]) + "  JOIN.b128 v0, v20, v21\n" +
				li("v22", b[0]) + li("v23", b[1]) + "  JOIN.b128 v2, v22, v23\n  " + inst + "\n"
			if scalar {
				body += "  PUT.u64 s0, v10\n"
			} else {
				body += "  PUT.b128 x0, v10\n"
			}
			var results []v128
			for _, e := range allEngines() {
				m := newMachine(t, e, body)
				m.mustSyscall(t)
				results = append(results, v128{m.cpu.State[XReg(0)], m.cpu.State[XReg(0)+1]})
				if scalar {
					results[len(results)-1] = v128{m.cpu.State[S0]}
				}
			}
			for i := 1; i < len(results); i++ {
				if results[i] != results[0] {
					t.Errorf("%s a=%#x b=%#x: %s gives %#x, reference %#x", inst, a, b, allEngines()[i].name, results[i], results[0])
				}
			}
		}
	}
}
