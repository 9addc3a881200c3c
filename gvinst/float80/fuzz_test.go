package float80

import (
	"math"
	"testing"
)

// FuzzFloat80 checks that no operation panics on any encoding and control
// word, that Add and Mul commute (result and flags), and that exactly
// representable values survive conversions.
func FuzzFloat80(f *testing.F) {
	f.Add(uint64(1<<63), uint16(0x3FFF), uint64(0xC000000000000000), uint16(0xFFFF), uint16(0x037F))
	f.Add(uint64(0), uint16(0), uint64(1), uint16(0), uint16(0x0C7F))
	f.Add(uint64(0x4000000000000000), uint16(0x7FFF), uint64(^uint64(0)), uint16(0x7FFE), uint16(0x007F))
	f.Fuzz(func(t *testing.T, am uint64, ae uint16, bm uint64, be uint16, cw uint16) {
		a, b := F80{am, ae}, F80{bm, be}
		env := NewEnv(cw)
		e1, e2 := env, env
		if r1, r2 := e1.Add(a, b), e2.Add(b, a); r1 != r2 || e1.Flags != e2.Flags {
			t.Fatalf("Add not commutative: %v %v flags %#x %#x", r1, r2, e1.Flags, e2.Flags)
		}
		e1, e2 = env, env
		if r1, r2 := e1.Mul(a, b), e2.Mul(b, a); r1 != r2 || e1.Flags != e2.Flags {
			t.Fatalf("Mul not commutative: %v %v flags %#x %#x", r1, r2, e1.Flags, e2.Flags)
		}
		e := env
		e.Sub(a, b)
		e.Div(a, b)
		e.Sqrt(a)
		e.Rem(a, b)
		e.Rem1(a, b)
		e.RoundToInt(a)
		e.Scale(a, b)
		e.Xtract(a)
		e.Compare(a, b, false)
		e.ToInt16(a)
		e.TruncInt32(a)
		e.ToInt64(a)
		e.ToFloat32(a)
		Examine(a)
		if FromBytes(a.Bytes()) != a {
			t.Fatal("Bytes round trip")
		}
		// Conversions of exactly representable values round-trip.
		v := int64(am)
		if got := e.ToInt64(FromInt64(v)); got != v {
			t.Fatalf("int64 %d round-trips to %d", v, got)
		}
		if x := math.Float64frombits(am); !math.IsNaN(x) {
			if got := e.ToFloat64(e.FromFloat64(am)); got != am {
				t.Fatalf("float64 %#x round-trips to %#x", am, got)
			}
		}
		if x := math.Float32frombits(uint32(bm)); !math.IsNaN(float64(x)) {
			if got := e.ToFloat32(e.FromFloat32(uint32(bm))); got != uint32(bm) {
				t.Fatalf("float32 %#x round-trips to %#x", uint32(bm), got)
			}
		}
		// Transcendentals only on a moderate exponent range, to bound time.
		if ae&expMask > expBias-200 && ae&expMask < expBias+200 {
			e.F2xm1(a)
			e.Yl2x(a, b)
			e.Yl2xp1(a, b)
			e.Patan(a, b)
			e.SinCos(a)
			e.Tan(a)
		}
	})
}
