package gpusim

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gpu"
)

// opKernel is a one-instruction test kernel: each of 64 threads loads a, b
// and c (typed ta, from 8-byte slots), runs body, and stores d (typed td).
const opKernel = `.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{
	.reg .b32 %%t;
	.reg .b64 %%off, %%ad, %%w;
	.reg .pred %%p, %%q;
	.reg .u32 %%u<8>;
	.reg .%[1]s %%a, %%b, %%c;
	.reg .%[2]s %%d;
	mov.u32 %%t, %%tid.x;
	mul.wide.u32 %%off, %%t, 8;
	ld.param.u64 %%ad, [pa];
	add.s64 %%ad, %%ad, %%off;
	ld.global.b%[3]d %%a, [%%ad];
	ld.param.u64 %%ad, [pb];
	add.s64 %%ad, %%ad, %%off;
	ld.global.b%[3]d %%b, [%%ad];
	ld.param.u64 %%ad, [pc];
	add.s64 %%ad, %%ad, %%off;
	ld.global.b%[3]d %%c, [%%ad];
	%[5]s
	ld.param.u64 %%ad, [pd];
	add.s64 %%ad, %%ad, %%off;
	st.global.b%[4]d [%%ad], %%d;
	ret;
}
`

const opLanes = 64

// runOp runs body over the inputs and returns d of each lane, masked to the
// width of td.
func runOp(t *testing.T, h *harness, ta, td, body string, a, b, c []uint64) []uint64 {
	t.Helper()
	bitsOf := func(s string) int {
		switch {
		case strings.HasSuffix(s, "64"):
			return 64
		case strings.HasSuffix(s, "16"):
			return 16
		case strings.HasSuffix(s, "8"):
			return 8
		}
		return 32
	}
	tb, db := bitsOf(ta), bitsOf(td)
	if tb == 8 {
		tb = 16
	}
	src := fmt.Sprintf(opKernel, ta, td, tb, db, body)
	m, err := h.ctx.LoadModule(src)
	if err != nil {
		t.Fatalf("%s: LoadModule: %v", body, err)
	}
	f := h.fn(m, "k")
	pa, pb, pc := h.upload(u64s(a)), h.upload(u64s(b)), h.upload(u64s(c))
	pd := h.upload(make([]byte, 8*opLanes))
	err = h.ctx.Launch(f, gpu.LaunchConfig{Grid: dim(1, 1, 1), Block: dim(opLanes, 1, 1)},
		[][]byte{pptr(pa), pptr(pb), pptr(pc), pptr(pd)})
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	out := toU64s(h.download(pd, 8*opLanes))
	for _, p := range []gpu.DevicePtr{pa, pb, pc, pd} {
		h.ctx.Free(p)
	}
	m.Unload()
	return out
}

var edges32 = []uint64{0, 1, 2, 3, 7, 31, 32, 33, 63, 64, 0xff, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff, 0xfffffffe, 0x12345678, 0x80000001}
var edges64 = []uint64{0, 1, 2, 63, 64, 65, 0x7fffffffffffffff, 1 << 63, math.MaxUint64, 0xffffffff, 0x100000000, 0x123456789abcdef0}

// inputs returns opLanes values for a, b and c mixing edge cases and random
// values; b cycles through edges at a different stride than a.
func inputs(seed int64, edges []uint64, mask uint64) (a, b, c []uint64) {
	r := rand.New(rand.NewSource(seed))
	pick := func(i, stride int) uint64 {
		if i%3 != 2 {
			return edges[(i*stride)%len(edges)] & mask
		}
		return r.Uint64() & mask
	}
	for i := 0; i < opLanes; i++ {
		a = append(a, pick(i, 1))
		b = append(b, pick(i, 5))
		c = append(c, pick(i, 7))
	}
	return
}

func sx32(v uint64) int64 { return int64(int32(v)) }

type opCase struct {
	body   string
	ta, td string
	want   func(a, b, c uint64) uint64
}

func checkCases(t *testing.T, cases []opCase, edges []uint64, mask uint64) {
	h := newHarness(t, Options{Workers: 1})
	for i, tc := range cases {
		t.Run(tc.body, func(t *testing.T) {
			a, b, c := inputs(int64(i), edges, mask)
			got := runOp(t, h, tc.ta, tc.td, tc.body, a, b, c)
			dmask := uint64(math.MaxUint64)
			switch {
			case strings.HasSuffix(tc.td, "32"):
				dmask = math.MaxUint32
			case strings.HasSuffix(tc.td, "16"):
				dmask = 0xffff
			}
			for l := range got {
				want := tc.want(a[l], b[l], c[l]) & dmask
				if got[l] != want {
					t.Fatalf("lane %d: a=%#x b=%#x c=%#x: got %#x, want %#x", l, a[l], b[l], c[l], got[l], want)
				}
			}
		})
	}
}

func TestIntegerOps(t *testing.T) {
	u := func(x uint64) uint64 { return uint64(uint32(x)) }
	div0 := func(f func(a, b uint64) uint64) func(a, b, c uint64) uint64 {
		return func(a, b, _ uint64) uint64 { return f(a, b) }
	}
	cases := []opCase{
		{"add.s32 %d, %a, %b;", "s32", "s32", func(a, b, _ uint64) uint64 { return a + b }},
		{"add.s32 %d, %a, 5;", "s32", "s32", func(a, _, _ uint64) uint64 { return a + 5 }},
		{"sub.u32 %d, %a, %b;", "u32", "u32", func(a, b, _ uint64) uint64 { return a - b }},
		{"add.sat.s32 %d, %a, %b;", "s32", "s32", func(a, b, _ uint64) uint64 {
			return uint64(max(math.MinInt32, min(math.MaxInt32, sx32(a)+sx32(b))))
		}},
		{"sub.sat.s32 %d, %a, %b;", "s32", "s32", func(a, b, _ uint64) uint64 {
			return uint64(max(math.MinInt32, min(math.MaxInt32, sx32(a)-sx32(b))))
		}},
		{"mul.lo.s32 %d, %a, %b;", "s32", "s32", func(a, b, _ uint64) uint64 { return a * b }},
		{"mul.hi.s32 %d, %a, %b;", "s32", "s32", func(a, b, _ uint64) uint64 { return uint64((sx32(a) * sx32(b)) >> 32) }},
		{"mul.hi.u32 %d, %a, %b;", "u32", "u32", func(a, b, _ uint64) uint64 { return (u(a) * u(b)) >> 32 }},
		{"mad.lo.s32 %d, %a, %b, %c;", "s32", "s32", func(a, b, c uint64) uint64 { return a*b + c }},
		{"mad.hi.u32 %d, %a, %b, %c;", "u32", "u32", func(a, b, c uint64) uint64 { return (u(a)*u(b))>>32 + c }},
		{"mul24.lo.u32 %d, %a, %b;", "u32", "u32", func(a, b, _ uint64) uint64 { return (a & 0xffffff) * (b & 0xffffff) }},
		{"mul24.hi.u32 %d, %a, %b;", "u32", "u32", func(a, b, _ uint64) uint64 { return (a & 0xffffff) * (b & 0xffffff) >> 16 }},
		{"mad24.lo.s32 %d, %a, %b, %c;", "s32", "s32", func(a, b, c uint64) uint64 {
			return uint64((int64(a<<40)>>40)*(int64(b<<40)>>40)) + c
		}},
		{"div.u32 %d, %a, %b;", "u32", "u32", div0(func(a, b uint64) uint64 {
			if u(b) == 0 {
				return math.MaxUint32
			}
			return u(a) / u(b)
		})},
		{"rem.u32 %d, %a, %b;", "u32", "u32", div0(func(a, b uint64) uint64 {
			if u(b) == 0 {
				return a
			}
			return u(a) % u(b)
		})},
		{"div.s32 %d, %a, %b;", "s32", "s32", div0(func(a, b uint64) uint64 {
			switch {
			case u(b) == 0:
				return math.MaxUint32
			case sx32(b) == -1 && sx32(a) == math.MinInt32:
				return a
			}
			return uint64(sx32(a) / sx32(b))
		})},
		{"rem.s32 %d, %a, %b;", "s32", "s32", div0(func(a, b uint64) uint64 {
			switch {
			case u(b) == 0:
				return a
			case sx32(b) == -1:
				return 0
			}
			return uint64(sx32(a) % sx32(b))
		})},
		{"abs.s32 %d, %a;", "s32", "s32", func(a, _, _ uint64) uint64 {
			if sx32(a) < 0 {
				return uint64(-sx32(a))
			}
			return a
		}},
		{"neg.s32 %d, %a;", "s32", "s32", func(a, _, _ uint64) uint64 { return -a }},
		{"min.s32 %d, %a, %b;", "s32", "s32", func(a, b, _ uint64) uint64 { return uint64(min(sx32(a), sx32(b))) }},
		{"max.u32 %d, %a, %b;", "u32", "u32", func(a, b, _ uint64) uint64 { return max(u(a), u(b)) }},
		{"and.b32 %d, %a, %b;", "b32", "b32", func(a, b, _ uint64) uint64 { return a & b }},
		{"or.b32 %d, %a, %b;", "b32", "b32", func(a, b, _ uint64) uint64 { return a | b }},
		{"xor.b32 %d, %a, %b;", "b32", "b32", func(a, b, _ uint64) uint64 { return a ^ b }},
		{"not.b32 %d, %a;", "b32", "b32", func(a, _, _ uint64) uint64 { return ^a }},
		{"cnot.b32 %d, %a;", "b32", "b32", func(a, _, _ uint64) uint64 {
			if u(a) == 0 {
				return 1
			}
			return 0
		}},
		{"cvt.u32.u32 %u1, %b; shl.b32 %d, %a, %u1;", "b32", "b32", func(a, b, _ uint64) uint64 {
			if u(b) >= 32 {
				return 0
			}
			return a << u(b)
		}},
		{"cvt.u32.u32 %u1, %b; shr.u32 %d, %a, %u1;", "u32", "u32", func(a, b, _ uint64) uint64 {
			if u(b) >= 32 {
				return 0
			}
			return u(a) >> u(b)
		}},
		{"cvt.u32.u32 %u1, %b; shr.s32 %d, %a, %u1;", "s32", "s32", func(a, b, _ uint64) uint64 {
			return uint64(sx32(a) >> min(u(b), 31))
		}},
		{"popc.b32 %u1, %a; mov.b32 %d, %u1;", "b32", "b32", func(a, _, _ uint64) uint64 { return uint64(bits.OnesCount32(uint32(a))) }},
		{"clz.b32 %u1, %a; mov.b32 %d, %u1;", "b32", "b32", func(a, _, _ uint64) uint64 { return uint64(bits.LeadingZeros32(uint32(a))) }},
		{"brev.b32 %d, %a;", "b32", "b32", func(a, _, _ uint64) uint64 { return uint64(bits.Reverse32(uint32(a))) }},
		{"and.b32 %u1, %b, 31; and.b32 %u2, %c, 31; bfe.u32 %d, %a, %u1, %u2;", "u32", "u32", func(a, b, c uint64) uint64 {
			pos, ln := b&31, c&31
			if ln == 0 {
				return 0
			}
			return (u(a) >> pos) & (1<<ln - 1)
		}},
		{"and.b32 %u1, %b, 31; and.b32 %u2, %c, 31; bfe.s32 %d, %a, %u1, %u2;", "s32", "s32", func(a, b, c uint64) uint64 {
			pos, ln := b&31, c&31
			if ln == 0 {
				return 0
			}
			msb := min(pos+ln-1, 31)
			v := (u(a) >> pos) & (1<<ln - 1)
			if (u(a)>>msb)&1 != 0 {
				v |= ^uint64(0) << ln
			}
			return v
		}},
		{"and.b32 %u1, %b, 15; bfi.b32 %d, %a, %c, %u1, 8;", "b32", "b32", func(a, b, c uint64) uint64 {
			pos := b & 15
			mask := uint64(0xff) << pos
			return (c &^ mask) | ((a << pos) & mask)
		}},
		{"prmt.b32 %d, %a, %b, 0x3210;", "b32", "b32", func(a, _, _ uint64) uint64 { return a }},
		{"prmt.b32 %d, %a, %b, 0x7654;", "b32", "b32", func(_, b, _ uint64) uint64 { return b }},
		{"prmt.b32 %d, %a, %b, 0x0123;", "b32", "b32", func(a, _, _ uint64) uint64 { return uint64(bits.ReverseBytes32(uint32(a))) }},
		{"prmt.b32 %d, %a, %b, 0x8881;", "b32", "b32", func(a, _, _ uint64) uint64 {
			s := uint64(0)
			if a&0x80 != 0 {
				s = 0xff
			}
			return (a>>8)&0xff | s<<8 | s<<16 | s<<24
		}},
		{"setp.lt.s32 %p, %a, %b; selp.s32 %d, 1, 0, %p;", "s32", "s32", func(a, b, _ uint64) uint64 { return b2u(sx32(a) < sx32(b)) }},
		{"setp.hi.u32 %p|%q, %a, %b; selp.s32 %d, 1, 0, %q;", "u32", "u32", func(a, b, _ uint64) uint64 { return b2u(!(u(a) > u(b))) }},
		{"setp.ge.u32 %q, %c, 100; setp.ne.and.b32 %p, %a, %b, !%q; selp.s32 %d, 1, 0, %p;", "u32", "u32", func(a, b, c uint64) uint64 {
			return b2u(u(a) != u(b) && !(u(c) >= 100))
		}},
		{"set.le.u32.s32 %d, %a, %b;", "s32", "u32", func(a, b, _ uint64) uint64 { return b2u(sx32(a) <= sx32(b)) * math.MaxUint32 }},
		{"setp.eq.s32 %p, %a, %b; selp.b32 %d, %a, %c, %p;", "b32", "b32", func(a, b, c uint64) uint64 {
			if u(a) == u(b) {
				return a
			}
			return c
		}},
		{"slct.u32.s32 %d, %a, %b, %c;", "s32", "u32", func(a, b, c uint64) uint64 {
			if sx32(c) >= 0 {
				return a
			}
			return b
		}},
		{"mov.b64 %w, {%a, %b}; mov.b64 {%c, %d}, %w;", "b32", "b32", func(_, b, _ uint64) uint64 { return b }},
	}
	checkCases(t, cases, edges32, math.MaxUint32)
}

func TestWideOps(t *testing.T) {
	h := newHarness(t, Options{Workers: 1})
	a, b, _ := inputs(9, edges32, math.MaxUint32)
	cases := []struct {
		body string
		want func(a, b uint64) uint64
	}{
		{"mul.wide.s32 %w, %a, %b;", func(a, b uint64) uint64 { return uint64(sx32(a) * sx32(b)) }},
		{"mul.wide.u32 %w, %a, %b;", func(a, b uint64) uint64 { return uint64(uint32(a)) * uint64(uint32(b)) }},
		{"cvt.s64.s32 %w, %a; mad.wide.s32 %w, %a, %b, %w;", func(a, b uint64) uint64 { return uint64(sx32(a)*sx32(b) + sx32(a)) }},
	}
	for _, tc := range cases {
		// The 64-bit result is split into two 32-bit halves for storing.
		body := tc.body + " mov.b64 {%c, %d}, %w; xor.b32 %d, %d, %c;"
		got := runOp(t, h, "s32", "s32", body, a, b, b)
		for l := range got {
			w := tc.want(a[l], b[l])
			if want := (w>>32 ^ w) & math.MaxUint32; got[l] != want {
				t.Fatalf("%s lane %d: got %#x want %#x", tc.body, l, got[l], want)
			}
		}
	}
}

func Test64BitOps(t *testing.T) {
	cases := []opCase{
		{"add.s64 %d, %a, %b;", "s64", "s64", func(a, b, _ uint64) uint64 { return a + b }},
		{"mul.lo.u64 %d, %a, %b;", "u64", "u64", func(a, b, _ uint64) uint64 { return a * b }},
		{"mul.hi.u64 %d, %a, %b;", "u64", "u64", func(a, b, _ uint64) uint64 { h, _ := bits.Mul64(a, b); return h }},
		{"mul.hi.s64 %d, %a, %b;", "s64", "s64", func(a, b, _ uint64) uint64 {
			p := new(big.Int).Mul(big.NewInt(int64(a)), big.NewInt(int64(b)))
			return uint64(p.Rsh(p, 64).Int64())
		}},
		{"div.s64 %d, %a, %b;", "s64", "s64", func(a, b, _ uint64) uint64 {
			switch {
			case b == 0:
				return math.MaxUint64
			case int64(b) == -1 && int64(a) == math.MinInt64:
				return a
			}
			return uint64(int64(a) / int64(b))
		}},
		{"rem.u64 %d, %a, %b;", "u64", "u64", func(a, b, _ uint64) uint64 {
			if b == 0 {
				return a
			}
			return a % b
		}},
		{"cvt.u32.u64 %u1, %b; shl.b64 %d, %a, %u1;", "b64", "b64", func(a, b, _ uint64) uint64 {
			if uint32(b) >= 64 {
				return 0
			}
			return a << uint32(b)
		}},
		{"cvt.u32.u64 %u1, %b; shr.s64 %d, %a, %u1;", "s64", "s64", func(a, b, _ uint64) uint64 {
			return uint64(int64(a) >> min(uint32(b), 63))
		}},
		{"popc.b64 %u1, %a; cvt.u64.u32 %d, %u1;", "b64", "b64", func(a, _, _ uint64) uint64 { return uint64(bits.OnesCount64(a)) }},
		{"clz.b64 %u1, %a; cvt.u64.u32 %d, %u1;", "b64", "b64", func(a, _, _ uint64) uint64 { return uint64(bits.LeadingZeros64(a)) }},
		{"brev.b64 %d, %a;", "b64", "b64", func(a, _, _ uint64) uint64 { return bits.Reverse64(a) }},
		{"min.s64 %d, %a, %b;", "s64", "s64", func(a, b, _ uint64) uint64 { return uint64(min(int64(a), int64(b))) }},
		{"setp.lo.u64 %p, %a, %b; selp.u64 %d, 7, 9, %p;", "u64", "u64", func(a, b, _ uint64) uint64 {
			if a < b {
				return 7
			}
			return 9
		}},
		{"and.b64 %a, %a, 0xffff; cvta.shared.u64 %d, %a; cvta.to.shared.u64 %d, %d;", "u64", "u64", func(a, _, _ uint64) uint64 { return a & 0xffff }},
	}
	checkCases(t, cases, edges64, math.MaxUint64)
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func TestCarryChains(t *testing.T) {
	cases := []opCase{
		{"mov.b64 {%u0, %u1}, %a; mov.b64 {%u2, %u3}, %b; add.cc.u32 %u0, %u0, %u2; addc.u32 %u1, %u1, %u3; mov.b64 %d, {%u0, %u1};",
			"u64", "u64", func(a, b, _ uint64) uint64 { return a + b }},
		{"mov.b64 {%u0, %u1}, %a; mov.b64 {%u2, %u3}, %b; sub.cc.u32 %u0, %u0, %u2; subc.u32 %u1, %u1, %u3; mov.b64 %d, {%u0, %u1};",
			"u64", "u64", func(a, b, _ uint64) uint64 { return a - b }},
		{"mov.b64 {%u0, %u1}, %a; mov.b64 {%u2, %u3}, %b; mov.b64 {%u4, %u5}, %c; " +
			"mad.lo.cc.u32 %u6, %u0, %u2, %u4; madc.hi.u32 %u7, %u0, %u2, %u5; mov.b64 %d, {%u6, %u7};",
			"u64", "u64", func(a, b, c uint64) uint64 { return (a&math.MaxUint32)*(b&math.MaxUint32) + c }},
		{"add.cc.u64 %d, %a, %b; addc.u64 %d, 0, 0;", "u64", "u64", func(a, b, _ uint64) uint64 {
			_, carry := bits.Add64(a, b, 0)
			return carry
		}},
		{"sub.cc.u64 %d, %a, %b; subc.cc.u64 %d, 0, 0; subc.u64 %d, 5, 0;", "u64", "u64", func(a, b, _ uint64) uint64 {
			_, borrow := bits.Sub64(a, b, 0)
			_, borrow2 := bits.Sub64(0, 0, borrow)
			return 5 - borrow2
		}},
	}
	checkCases(t, cases, edges64, math.MaxUint64)
}
