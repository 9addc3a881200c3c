package gputest

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"testing"
)

// This file checks the real-GPU recordings against independent Go
// computations of the same kernels, for the kernels whose results Go can
// compute exactly. It guards the fixtures themselves: a recording that does
// not follow the PTX semantics written here fails on any machine.

// fixture loads one recorded fixture by name.
func fixture(t *testing.T, name string) *Fixture {
	t.Helper()
	dir, err := FixtureDir()
	if err != nil {
		t.Fatal(err)
	}
	fs, err := LoadFixtures(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no fixture %s in %s", name, dir)
	return nil
}

func words32(b []byte) []uint32 {
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

func words64(b []byte) []uint64 {
	out := make([]uint64, len(b)/8)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return out
}

func floats32(b []byte) []float32 {
	w := words32(b)
	out := make([]float32, len(w))
	for i, v := range w {
		out[i] = math.Float32frombits(v)
	}
	return out
}

// checker compares recorded values with Go's and reports at most a few
// mismatches per test.
type checker struct {
	t    *testing.T
	bad  int
	name string
}

// eq compares one recorded integer or bit pattern with Go's.
func (c *checker) eq(what string, i int, got, want uint64) {
	c.t.Helper()
	if got == want {
		return
	}
	c.bad++
	if c.bad <= 8 {
		c.t.Errorf("%s: %s[%d] recorded %#x, Go computes %#x", c.name, what, i, got, want)
	}
}

func TestOracleSimple(t *testing.T) {
	t.Run("vecadd", func(t *testing.T) {
		f := fixture(t, "vecadd")
		a, b, c := floats32(f.Inputs["a"]), floats32(f.Inputs["b"]), floats32(f.Expected["c"])
		ck := &checker{t: t, name: "vecadd"}
		for i := range c {
			ck.eq("c", i, uint64(math.Float32bits(c[i])), uint64(math.Float32bits(a[i]+b[i])))
		}
	})
	t.Run("transpose", func(t *testing.T) {
		f := fixture(t, "transpose")
		const w, h = 100, 72
		in, out := words32(f.Inputs["in"]), words32(f.Expected["out"])
		ck := &checker{t: t, name: "transpose"}
		for y := range h {
			for x := range w {
				ck.eq("out", x*h+y, uint64(out[x*h+y]), uint64(in[y*w+x]))
			}
		}
	})
	t.Run("histogram", func(t *testing.T) {
		f := fixture(t, "histogram")
		var bins [64]uint32
		var seen [8]uint32
		for _, d := range f.Inputs["data"] {
			bins[d%64]++
			seen[d/32] |= 1 << (d % 32)
		}
		ck := &checker{t: t, name: "histogram"}
		for i, v := range words32(f.Expected["bins"]) {
			ck.eq("bins", i, uint64(v), uint64(bins[i]))
		}
		for i, v := range words32(f.Expected["seen"]) {
			ck.eq("seen", i, uint64(v), uint64(seen[i]))
		}
	})
	t.Run("localarray", func(t *testing.T) {
		f := fixture(t, "localarray")
		keys, out := words32(f.Inputs["keys"]), words32(f.Expected["out"])
		ck := &checker{t: t, name: "localarray"}
		for i := range 100 {
			k := slices.Clone(keys[i*24 : i*24+24])
			var h [16]uint32
			for j, v := range k {
				h[v&15] += uint32(j + 1)
			}
			s := make([]int32, 24)
			for j, v := range k {
				s[j] = int32(v)
			}
			slices.Sort(s)
			o := out[i*26:]
			for j := range 24 {
				ck.eq("out", i*26+j, uint64(o[j]), uint64(uint32(s[j])))
			}
			ck.eq("pick", i, uint64(o[24]), uint64(uint32(s[k[0]%24])))
			ck.eq("bucket", i, uint64(o[25]), uint64(h[k[1]&15]))
		}
	})
	t.Run("reduce", func(t *testing.T) {
		f := fixture(t, "reduce")
		v := words32(f.Inputs["v"])
		const block = 128
		tot := []int32{0, math.MinInt32, math.MaxInt32}
		for b := 0; b*2*block < len(v); b++ {
			var s int32
			for i := b * 2 * block; i < min(len(v), (b+1)*2*block); i++ {
				s += int32(v[i])
			}
			tot[0] += s
			tot[1] = max(tot[1], s)
			tot[2] = min(tot[2], s)
		}
		ck := &checker{t: t, name: "reduce"}
		for i, got := range words32(f.Expected["totals"]) {
			ck.eq("totals", i, uint64(got), uint64(uint32(tot[i])))
		}
	})
	t.Run("divergence", func(t *testing.T) {
		f := fixture(t, "divergence")
		trips, vals, out := words32(f.Inputs["trips"]), words32(f.Inputs["vals"]), words32(f.Expected["out"])
		ck := &checker{t: t, name: "divergence"}
		for i := range out {
			tr := int32(trips[i])
			v := vals[i]
			var acc uint32
			for k := int32(0); k < tr; k++ {
				if (v+uint32(k))&1 != 0 {
					if k%3 == 0 {
						acc += v * uint32(k)
					} else {
						acc -= uint32(k)
					}
				} else if int32(v) > 0 {
					acc ^= v << (k & 7)
					if acc > 0x40000000 {
						break
					}
				} else {
					acc += 7
					v += 3
					continue
				}
				v = v*1103515245 + 12345
			}
			w := int32(0)
			for tr > 0 && w < 50 {
				w += tr&3 + 1
				tr >>= 1
			}
			ck.eq("out", i, uint64(out[i]), uint64(uint32(int32(acc)+w)))
		}
	})
}

func TestOracleWarp(t *testing.T) {
	f := fixture(t, "warpops")
	in, out := words32(f.Inputs["in"]), words32(f.Expected["out"])
	ck := &checker{t: t, name: "warpops"}
	for w := 0; w < len(in)/32; w++ {
		v := in[w*32 : w*32+32]
		var ballot uint32
		all, any := uint32(1), uint32(0)
		var sum uint32
		for l, x := range v {
			if int32(x) > 0 {
				ballot |= 1 << l
			}
			if int32(x) <= -1000000 {
				all = 0
			}
			if int32(x) > 900000 {
				any = 1
			}
			sum += x
		}
		for l := range 32 {
			o := out[(w*32+l)*12:]
			at := func(k int) int { return (w*32+l)*12 + k }
			up := v[l]
			if l >= 3 {
				up = v[l-3]
			}
			down := v[l]
			if l+5 < 32 {
				down = v[l+5]
			}
			d16 := v[l]
			if l%16+1 < 16 {
				d16 = v[l+1]
			}
			ck.eq("up", at(0), uint64(o[0]), uint64(up))
			ck.eq("down", at(1), uint64(o[1]), uint64(down))
			ck.eq("xor", at(2), uint64(o[2]), uint64(v[l^6]))
			ck.eq("idx", at(3), uint64(o[3]), uint64(v[v[l]&31]))
			ck.eq("down16", at(4), uint64(o[4]), uint64(d16))
			ck.eq("f32", at(5), uint64(o[5]), uint64(math.Float32bits(float32(int32(v[l^1]))*0.5)))
			db := math.Float64bits(float64(int32(v[(l*7)&31])) * 0.25)
			ck.eq("f64 lo", at(6), uint64(o[6]), db&0xffffffff)
			ck.eq("f64 hi", at(7), uint64(o[7]), db>>32)
			ck.eq("ballot", at(8), uint64(o[8]), uint64(ballot))
			ck.eq("all", at(9), uint64(o[9]), uint64(all))
			ck.eq("any", at(10), uint64(o[10]), uint64(any))
			ck.eq("sum", at(11), uint64(o[11]), uint64(sum))
		}
	}
}

// mulhi64 is the high half of the signed 128-bit product.
func mulhi64(a, b int64) int64 {
	hi, _ := bits.Mul64(uint64(a), uint64(b))
	if a < 0 {
		hi -= uint64(b)
	}
	if b < 0 {
		hi -= uint64(a)
	}
	return int64(hi)
}

func ffs32(x uint32) uint32 {
	if x == 0 {
		return 0
	}
	return uint32(bits.TrailingZeros32(x) + 1)
}

// bytePerm is __byte_perm (prmt.b32 in default mode) with selector bits 3,
// 7, 11 and 15 clear.
func bytePerm(x, y, s uint32) uint32 {
	src := uint64(y)<<32 | uint64(x)
	var r uint32
	for n := range 4 {
		sel := (s >> (4 * n)) & 7
		r |= uint32(byte(src>>(8*sel))) << (8 * n)
	}
	return r
}

func TestOracleIntops(t *testing.T) {
	f := fixture(t, "intops")
	a32, b32 := words32(f.Inputs["a32"]), words32(f.Inputs["b32"])
	a64, b64 := words64(f.Inputs["a64"]), words64(f.Inputs["b64"])
	r32, r64 := words32(f.Expected["r32"]), words64(f.Expected["r64"])
	ck := &checker{t: t, name: "intops"}
	for i := range a32 {
		ua, ub := a32[i], b32[i]
		a, b := int32(ua), int32(ub)
		sext24 := func(x uint32) int32 { return int32(x<<8) >> 8 }
		d := a - b
		if a < b {
			d = b - a
		}
		abs := a
		if a < 0 {
			abs = -a
		}
		want := []uint32{
			ua + ub, ua - ub, ua * ub,
			uint32((int64(a) * int64(b)) >> 32),
			uint32((uint64(ua) * uint64(ub)) >> 32),
			uint32(a / b), uint32(a % b), ua / ub, ua % ub,
			ua & ub, ua | ub, ua ^ ^ub,
			ua << (ub & 31), uint32(a >> (ub & 31)), ua >> (ub & 31),
			uint32(bits.OnesCount32(ua)), uint32(bits.LeadingZeros32(ua)), ffs32(ua), bits.Reverse32(ua),
			bytePerm(ua, ub, ub&0x7777),
			uint32((uint64(ub)<<32 | uint64(ua)) << ((ub >> 27) & 31) >> 32),
			uint32((uint64(ub)<<32 | uint64(ua)) >> ((ub >> 26) & 31)),
			uint32(min(a, b)), max(ua, ub), uint32(abs),
			(ua >> (ub & 15)) & (1<<((ub>>4)&15) - 1),
			uint32(sext24(ua) * sext24(ub)),
			uint32(d) + ua>>4,
		}
		for k, w := range want {
			ck.eq("r32", i*28+k, uint64(r32[i*28+k]), uint64(w))
		}
		uc, ud := a64[i], b64[i]
		c, dd := int64(uc), int64(ud)
		uhi, _ := bits.Mul64(uc, ud)
		want64 := []uint64{
			uc * ud, uint64(c / dd), uint64(c % dd), uc / ud, uc % ud,
			uint64(mulhi64(c, dd)), uhi,
			uc << (ud & 63), uint64(c >> (ud & 63)), uc >> (ud & 63),
			uint64(bits.OnesCount64(uc)), uint64(bits.LeadingZeros64(uc)),
			uint64(bits.TrailingZeros64(uc)+1) % 65, bits.Reverse64(uc),
			uint64(int64(a) * int64(b)), uint64(ua)*uint64(ub) + (uc - ud),
		}
		for k, w := range want64 {
			ck.eq("r64", i*16+k, r64[i*16+k], w)
		}
	}
}

// nanToInt is what the GPU's cvt to an integer makes of a NaN, as recorded
// on an H200 (sm_90): 0 from f32 to a 32-bit integer; the sign bit alone
// (0x80000000 or 0x8000000000000000) from f64 to a 32-bit integer and from
// either float type to a 64-bit integer, for unsigned destinations too.
func nanToInt(fromF64 bool, dstBits int) uint64 {
	switch {
	case dstBits == 32 && !fromF64:
		return 0
	case dstBits == 32:
		return 1 << 31
	}
	return 1 << 63
}

// cvtInt converts x to an integer the way PTX cvt.{rni,rzi,rmi,rpi} does:
// rounded, then clamped to [lo, hi]; NaN gives 0 here (see nanToInt).
func cvtInt(x float64, mode byte, lo, hi float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	switch mode {
	case 'n':
		x = math.RoundToEven(x)
	case 'z':
		x = math.Trunc(x)
	case 'm':
		x = math.Floor(x)
	case 'p':
		x = math.Ceil(x)
	}
	return math.Max(lo, math.Min(hi, x))
}

// Integer ranges as float64 bounds; the upper bounds of the 64-bit types
// are not representable, so the clamping is finished by the callers.
const (
	minS32, maxS32 = -2147483648.0, 2147483647.0
	maxU32         = 4294967295.0
	two63, two64   = 9223372036854775808.0, 18446744073709551616.0
)

func toS64(x float64) uint64 {
	if x >= two63 {
		return math.MaxInt64
	}
	return uint64(int64(x))
}

func toU64(x float64) uint64 {
	if x >= two64 {
		return math.MaxUint64
	}
	return uint64(x)
}

// roundInt rounds an integer to prec bits with the given mode.
func roundInt(v *big.Int, prec uint, mode big.RoundingMode) float64 {
	f := new(big.Float).SetMode(mode).SetPrec(prec).SetInt(v)
	r, _ := f.Float64()
	return r
}

// roundFloat rounds x to an f32 with mode; ok is false outside the normal
// f32 range, where exponent limits (not handled here) decide.
func roundFloat(x float64, mode big.RoundingMode) (float32, bool) {
	a := math.Abs(x)
	if math.IsInf(x, 0) || x == 0 {
		return float32(x), true
	}
	if math.IsNaN(x) || a < 0x1p-126 || a >= 0x1p127 {
		return 0, false
	}
	f := new(big.Float).SetMode(mode).SetPrec(24).SetFloat64(x)
	r, _ := f.Float64()
	return float32(r), true
}

func TestOracleConvert(t *testing.T) {
	f := fixture(t, "convert")
	fin := floats32(f.Inputs["fin"])
	din := words64(f.Inputs["din"])
	iin := words32(f.Inputs["iin"])
	lin := words64(f.Inputs["lin"])
	ou, od := words32(f.Expected["ou"]), words64(f.Expected["od"])
	ck := &checker{t: t, name: "convert"}
	f32b := func(x float32) uint64 { return uint64(math.Float32bits(x)) }
	for i := range fin {
		x := float64(fin[i])
		d := math.Float64frombits(din[i])
		s := int32(iin[i])
		l := int64(lin[i])
		u := ou[i*32:]
		o := od[i*20:]
		s32 := func(v float64) uint64 { return uint64(uint32(int32(v))) }
		u32 := func(v float64) uint64 { return uint64(uint32(v)) }
		ints := map[int]uint64{
			0: s32(cvtInt(x, 'z', minS32, maxS32)), 1: s32(cvtInt(x, 'n', minS32, maxS32)),
			2: s32(cvtInt(x, 'z', minS32, maxS32)), 3: s32(cvtInt(x, 'm', minS32, maxS32)),
			4: s32(cvtInt(x, 'p', minS32, maxS32)), 5: u32(cvtInt(x, 'z', 0, maxU32)),
			6: u32(cvtInt(x, 'n', 0, maxU32)), 7: u32(cvtInt(x, 'm', 0, maxU32)), 8: u32(cvtInt(x, 'p', 0, maxU32)),
			9: s32(cvtInt(d, 'z', minS32, maxS32)), 10: s32(cvtInt(d, 'n', minS32, maxS32)),
			11: s32(cvtInt(d, 'm', minS32, maxS32)), 12: s32(cvtInt(d, 'p', minS32, maxS32)),
			13: u32(cvtInt(d, 'z', 0, maxU32)),
			14: f32b(float32(roundInt(big.NewInt(int64(s)), 24, big.ToNearestEven))),
			15: f32b(float32(roundInt(big.NewInt(int64(s)), 24, big.ToZero))),
			16: f32b(float32(roundInt(big.NewInt(int64(s)), 24, big.ToNegativeInf))),
			17: f32b(float32(roundInt(big.NewInt(int64(s)), 24, big.ToPositiveInf))),
			18: f32b(float32(roundInt(new(big.Int).SetUint64(uint64(uint32(s))), 24, big.ToNearestEven))),
			19: f32b(float32(roundInt(new(big.Int).SetUint64(uint64(uint32(s))), 24, big.ToNegativeInf))),
			20: f32b(float32(roundInt(big.NewInt(l), 24, big.ToNearestEven))),
			21: f32b(float32(roundInt(big.NewInt(l), 24, big.ToPositiveInf))),
			22: f32b(float32(d)),
			27: uint64(uint32(int32(int8(s)))),
			28: uint64(uint16(s)),
			29: uint64(uint32(int32(int16(int32(cvtInt(x, 'z', minS32, maxS32)))))),
			30: uint64(uint8(uint32(cvtInt(x, 'z', 0, maxU32)))),
			31: f32b(float32(roundInt(new(big.Int).SetUint64(uint64(l)), 24, big.ToNearestEven))),
		}
		for k, mode := range map[int]big.RoundingMode{23: big.ToZero, 24: big.ToNegativeInf, 25: big.ToPositiveInf} {
			if r, ok := roundFloat(d, mode); ok {
				ints[k] = f32b(r)
			}
		}
		if math.IsNaN(d) {
			for k := 9; k <= 13; k++ {
				ints[k] = nanToInt(true, 32)
			}
		}
		if !math.IsNaN(x) {
			// cvt.sat.f32.f32 clamps to [0, 1]; compared by value below.
			sat := math.Max(0, math.Min(1, x))
			if got := float64(math.Float32frombits(u[26])); got != sat {
				ck.eq("saturate", i, u64bits(got), u64bits(sat))
			}
		} else if u[26] != 0 {
			ck.eq("saturate NaN", i, uint64(u[26]), 0)
		}
		for k, w := range ints {
			ck.eq("ou", i*32+k, uint64(u[k]), w)
		}
		d64 := func(v float64) uint64 { return math.Float64bits(v) }
		wants := map[int]uint64{
			0: toS64(cvtInt(x, 'z', -two63, two64)), 1: toU64(cvtInt(x, 'z', 0, two64)),
			2: toS64(cvtInt(x, 'n', -two63, two64)), 3: toS64(cvtInt(x, 'm', -two63, two64)),
			4: toU64(cvtInt(x, 'p', 0, two64)),
			5: toS64(cvtInt(d, 'z', -two63, two64)), 6: toU64(cvtInt(d, 'z', 0, two64)),
			7: toS64(cvtInt(d, 'n', -two63, two64)), 8: toS64(cvtInt(d, 'p', -two63, two64)),
			9:  toU64(cvtInt(d, 'm', 0, two64)),
			11: d64(float64(s)), 12: d64(float64(uint32(s))),
			13: d64(roundInt(big.NewInt(l), 53, big.ToNearestEven)),
			14: d64(roundInt(big.NewInt(l), 53, big.ToZero)),
			15: d64(roundInt(big.NewInt(l), 53, big.ToNegativeInf)),
			16: d64(roundInt(new(big.Int).SetUint64(uint64(l)), 53, big.ToPositiveInf)),
			17: uint64(int64(s)), 18: uint64(uint32(s)), 19: uint64(int64(int32(l))),
		}
		if !math.IsNaN(x) {
			wants[10] = d64(x)
		}
		for k := range 10 {
			if k < 5 && math.IsNaN(x) || k >= 5 && math.IsNaN(d) {
				wants[k] = nanToInt(k >= 5, 64)
			}
		}
		for k, w := range wants {
			ck.eq("od", i*20+k, o[k], w)
		}
	}
}

func u64bits(x float64) uint64 { return math.Float64bits(x) }
