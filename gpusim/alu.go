package gpusim

import (
	"math"
	"math/bits"
	"time"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/ptx"
)

// The lane loops below visit the set bits of m; `& 31` lets the compiler
// drop bounds checks on the [32]uint64 rows. With a full mask the hot
// handlers run all 32 lanes unrolled by four; lane l reads only lane l of
// its operands, so the destination may be one of them.

func movHandler(t ptx.Type) handler {
	switch t.Size() {
	case 1, 2:
		return opMov16
	case 4:
		return opMov32
	}
	return opMov64
}

func opMov16(w *warp, in *inst, m uint32) {
	d, a := &w.r[in.d], &w.r[in.a]
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = a[l] & 0xffff
	}
}

func opMov32(w *warp, in *inst, m uint32) {
	d, a := &w.r[in.d], &w.r[in.a]
	if m == fullMask {
		for l := 0; l < 32; l += 4 {
			d[l] = uint64(uint32(a[l]))
			d[l+1] = uint64(uint32(a[l+1]))
			d[l+2] = uint64(uint32(a[l+2]))
			d[l+3] = uint64(uint32(a[l+3]))
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = uint64(uint32(a[l]))
	}
}

func opMov64(w *warp, in *inst, m uint32) {
	d, a := &w.r[in.d], &w.r[in.a]
	if m == fullMask {
		for l := 0; l < 32; l += 4 {
			d[l] = a[l]
			d[l+1] = a[l+1]
			d[l+2] = a[l+2]
			d[l+3] = a[l+3]
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = a[l]
	}
}

func opF1(w *warp, in *inst, m uint32) {
	d, a := &w.r[in.d], &w.r[in.a]
	f := in.f2
	if m == fullMask {
		for l := range d {
			d[l] = f(a[l], 0)
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = f(a[l], 0)
	}
}

func opF2(w *warp, in *inst, m uint32) {
	d, a, b := &w.r[in.d], &w.r[in.a], &w.r[in.b]
	f := in.f2
	if m == fullMask {
		for l := range d {
			d[l] = f(a[l], b[l])
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = f(a[l], b[l])
	}
}

func opF3(w *warp, in *inst, m uint32) {
	d, a, b, c := &w.r[in.d], &w.r[in.a], &w.r[in.b], &w.r[in.c]
	f := in.f3
	if m == fullMask {
		for l := range d {
			d[l] = f(a[l], b[l], c[l])
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = f(a[l], b[l], c[l])
	}
}

// Specialised hot integer and f32 operations. Each is spelled out, the
// whole-warp case unrolled by four, rather than built from one helper that
// takes the operation as a function value: the compiler does not inline
// such a call, and these handlers are most of a compute-bound kernel's
// time.

func opAdd32(w *warp, in *inst, m uint32) {
	d, a, b := &w.r[in.d], &w.r[in.a], &w.r[in.b]
	if m == fullMask {
		for l := 0; l < 32; l += 4 {
			d[l] = uint64(uint32(a[l]) + uint32(b[l]))
			d[l+1] = uint64(uint32(a[l+1]) + uint32(b[l+1]))
			d[l+2] = uint64(uint32(a[l+2]) + uint32(b[l+2]))
			d[l+3] = uint64(uint32(a[l+3]) + uint32(b[l+3]))
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = uint64(uint32(a[l]) + uint32(b[l]))
	}
}

func opAdd64(w *warp, in *inst, m uint32) {
	d, a, b := &w.r[in.d], &w.r[in.a], &w.r[in.b]
	if m == fullMask {
		for l := 0; l < 32; l += 4 {
			d[l] = a[l] + b[l]
			d[l+1] = a[l+1] + b[l+1]
			d[l+2] = a[l+2] + b[l+2]
			d[l+3] = a[l+3] + b[l+3]
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = a[l] + b[l]
	}
}

// opAddImm32 and opAddImm64 add the immediate in.imm, read once instead of
// from a constant register in every lane.
func opAddImm32(w *warp, in *inst, m uint32) {
	d, a := &w.r[in.d], &w.r[in.a]
	v := uint32(in.imm)
	if m == fullMask {
		for l := 0; l < 32; l += 4 {
			d[l] = uint64(uint32(a[l]) + v)
			d[l+1] = uint64(uint32(a[l+1]) + v)
			d[l+2] = uint64(uint32(a[l+2]) + v)
			d[l+3] = uint64(uint32(a[l+3]) + v)
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = uint64(uint32(a[l]) + v)
	}
}

func opAddImm64(w *warp, in *inst, m uint32) {
	d, a := &w.r[in.d], &w.r[in.a]
	v := in.imm
	if m == fullMask {
		for l := 0; l < 32; l += 4 {
			d[l] = a[l] + v
			d[l+1] = a[l+1] + v
			d[l+2] = a[l+2] + v
			d[l+3] = a[l+3] + v
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = a[l] + v
	}
}

func opSub32(w *warp, in *inst, m uint32) {
	d, a, b := &w.r[in.d], &w.r[in.a], &w.r[in.b]
	if m == fullMask {
		for l := 0; l < 32; l += 4 {
			d[l] = uint64(uint32(a[l]) - uint32(b[l]))
			d[l+1] = uint64(uint32(a[l+1]) - uint32(b[l+1]))
			d[l+2] = uint64(uint32(a[l+2]) - uint32(b[l+2]))
			d[l+3] = uint64(uint32(a[l+3]) - uint32(b[l+3]))
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = uint64(uint32(a[l]) - uint32(b[l]))
	}
}

func opSub64(w *warp, in *inst, m uint32) {
	d, a, b := &w.r[in.d], &w.r[in.a], &w.r[in.b]
	if m == fullMask {
		for l := 0; l < 32; l += 4 {
			d[l] = a[l] - b[l]
			d[l+1] = a[l+1] - b[l+1]
			d[l+2] = a[l+2] - b[l+2]
			d[l+3] = a[l+3] - b[l+3]
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = a[l] - b[l]
	}
}

func opMulLo32(w *warp, in *inst, m uint32) {
	d, a, b := &w.r[in.d], &w.r[in.a], &w.r[in.b]
	if m == fullMask {
		for l := 0; l < 32; l += 4 {
			d[l] = uint64(uint32(a[l]) * uint32(b[l]))
			d[l+1] = uint64(uint32(a[l+1]) * uint32(b[l+1]))
			d[l+2] = uint64(uint32(a[l+2]) * uint32(b[l+2]))
			d[l+3] = uint64(uint32(a[l+3]) * uint32(b[l+3]))
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = uint64(uint32(a[l]) * uint32(b[l]))
	}
}

func opMulLo64(w *warp, in *inst, m uint32) {
	d, a, b := &w.r[in.d], &w.r[in.a], &w.r[in.b]
	if m == fullMask {
		for l := 0; l < 32; l += 4 {
			d[l] = a[l] * b[l]
			d[l+1] = a[l+1] * b[l+1]
			d[l+2] = a[l+2] * b[l+2]
			d[l+3] = a[l+3] * b[l+3]
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = a[l] * b[l]
	}
}

func opMadLo32(w *warp, in *inst, m uint32) {
	d, a, b, c := &w.r[in.d], &w.r[in.a], &w.r[in.b], &w.r[in.c]
	if m == fullMask {
		for l := 0; l < 32; l += 4 {
			d[l] = uint64(uint32(a[l])*uint32(b[l]) + uint32(c[l]))
			d[l+1] = uint64(uint32(a[l+1])*uint32(b[l+1]) + uint32(c[l+1]))
			d[l+2] = uint64(uint32(a[l+2])*uint32(b[l+2]) + uint32(c[l+2]))
			d[l+3] = uint64(uint32(a[l+3])*uint32(b[l+3]) + uint32(c[l+3]))
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = uint64(uint32(a[l])*uint32(b[l]) + uint32(c[l]))
	}
}

func opMadLo64(w *warp, in *inst, m uint32) {
	d, a, b, c := &w.r[in.d], &w.r[in.a], &w.r[in.b], &w.r[in.c]
	if m == fullMask {
		for l := 0; l < 32; l += 4 {
			d[l] = a[l]*b[l] + c[l]
			d[l+1] = a[l+1]*b[l+1] + c[l+1]
			d[l+2] = a[l+2]*b[l+2] + c[l+2]
			d[l+3] = a[l+3]*b[l+3] + c[l+3]
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = a[l]*b[l] + c[l]
	}
}

func opMulWideS32(w *warp, in *inst, m uint32) {
	d, a, b := &w.r[in.d], &w.r[in.a], &w.r[in.b]
	if m == fullMask {
		for l := 0; l < 32; l += 4 {
			d[l] = uint64(int64(int32(a[l])) * int64(int32(b[l])))
			d[l+1] = uint64(int64(int32(a[l+1])) * int64(int32(b[l+1])))
			d[l+2] = uint64(int64(int32(a[l+2])) * int64(int32(b[l+2])))
			d[l+3] = uint64(int64(int32(a[l+3])) * int64(int32(b[l+3])))
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = uint64(int64(int32(a[l])) * int64(int32(b[l])))
	}
}

func opMulWideU32(w *warp, in *inst, m uint32) {
	d, a, b := &w.r[in.d], &w.r[in.a], &w.r[in.b]
	if m == fullMask {
		for l := 0; l < 32; l += 4 {
			d[l] = uint64(uint32(a[l])) * uint64(uint32(b[l]))
			d[l+1] = uint64(uint32(a[l+1])) * uint64(uint32(b[l+1]))
			d[l+2] = uint64(uint32(a[l+2])) * uint64(uint32(b[l+2]))
			d[l+3] = uint64(uint32(a[l+3])) * uint64(uint32(b[l+3]))
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = uint64(uint32(a[l])) * uint64(uint32(b[l]))
	}
}

func opShl32(w *warp, in *inst, m uint32) {
	d, a, b := &w.r[in.d], &w.r[in.a], &w.r[in.b]
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		s := uint32(b[l])
		if s > 32 {
			s = 32
		}
		d[l] = uint64(uint32(uint64(uint32(a[l])) << s))
	}
}

func opAddF32(w *warp, in *inst, m uint32) {
	d, a, b := &w.r[in.d], &w.r[in.a], &w.r[in.b]
	if m == fullMask {
		for l := 0; l < 32; l += 4 {
			d[l] = bits32(f32(a[l]) + f32(b[l]))
			d[l+1] = bits32(f32(a[l+1]) + f32(b[l+1]))
			d[l+2] = bits32(f32(a[l+2]) + f32(b[l+2]))
			d[l+3] = bits32(f32(a[l+3]) + f32(b[l+3]))
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = bits32(f32(a[l]) + f32(b[l]))
	}
}

func opMulF32(w *warp, in *inst, m uint32) {
	d, a, b := &w.r[in.d], &w.r[in.a], &w.r[in.b]
	if m == fullMask {
		for l := 0; l < 32; l += 4 {
			d[l] = bits32(f32(a[l]) * f32(b[l]))
			d[l+1] = bits32(f32(a[l+1]) * f32(b[l+1]))
			d[l+2] = bits32(f32(a[l+2]) * f32(b[l+2]))
			d[l+3] = bits32(f32(a[l+3]) * f32(b[l+3]))
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		d[l] = bits32(f32(a[l]) * f32(b[l]))
	}
}

func opFmaF32(w *warp, in *inst, m uint32) {
	d, a, b, c := &w.r[in.d], &w.r[in.a], &w.r[in.b], &w.r[in.c]
	// The float64 result r is rounded to float32 where fma32Shortcut allows;
	// other lanes are redone by fma32 in a second pass, which keeps calls
	// out of the hot loop. d may alias an operand, so a lane left for pass
	// two is not written in pass one.
	var slow uint32
	if m == fullMask {
		for l := 0; l < 32; l += 2 { // two lanes at a time, both or neither
			r0 := float64(f32(a[l]))*float64(f32(b[l])) + float64(f32(c[l]))
			r1 := float64(f32(a[l+1]))*float64(f32(b[l+1])) + float64(f32(c[l+1]))
			if fma32Shortcut(r0) && fma32Shortcut(r1) {
				d[l] = uint64(math.Float32bits(float32(r0)))
				d[l+1] = uint64(math.Float32bits(float32(r1)))
				continue
			}
			slow |= 3 << uint(l)
		}
		m = 0
	}
	for mm := m; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm) & 31
		r := float64(f32(a[l]))*float64(f32(b[l])) + float64(f32(c[l]))
		if !fma32Shortcut(r) {
			slow |= 1 << uint(l)
			continue
		}
		d[l] = uint64(math.Float32bits(float32(r)))
	}
	for ; slow != 0; slow &= slow - 1 {
		l := bits.TrailingZeros32(slow) & 31
		d[l] = bits32(fma32(f32(a[l]), f32(b[l]), f32(c[l]), rndRN))
	}
}

// fma32Shortcut reports whether float32(r) is fma.rn.f32 of float32
// operands x, y, z when r = float64(x)*float64(y) + float64(z). The product
// of two float32 values is exact in float64 (48 significant bits, no
// overflow or underflow), so r is the float64 FMA, whether or not the
// compiler fuses the two operations. Rounding r once more to float32 is the
// correctly rounded result unless r sits on a float32 tie or in the float32
// subnormal range (an exact zero is exact in both); infinities and NaNs are
// left to fma32 too, which canonicalizes NaNs.
func fma32Shortcut(r float64) bool {
	rb := math.Float64bits(r)
	e := (rb >> 52) & 0x7ff
	return rb&(1<<29-1) != 1<<28 && (e-(1023-126) < 0x7ff-(1023-126) || rb<<1 == 0)
}

func opFmaF64(w *warp, in *inst, m uint32) {
	d, a, b, c := &w.r[in.d], &w.r[in.a], &w.r[in.b], &w.r[in.c]
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		r := math.FMA(f64(a[l]), f64(b[l]), f64(c[l]))
		if r != r {
			d[l] = nan64(a[l], b[l], c[l])
			continue
		}
		d[l] = math.Float64bits(r)
	}
}

// opAddF64, opSubF64 and opMulF64 are add, sub and mul.f64 rounding to
// nearest without .ftz or .sat: the host's arithmetic, with the
// simulator's NaN rule (selectF64's f2).
func opAddF64(w *warp, in *inst, m uint32) {
	d, a, b := &w.r[in.d], &w.r[in.a], &w.r[in.b]
	if m == fullMask {
		for l := range d {
			r := f64(a[l]) + f64(b[l])
			if r != r {
				d[l] = nan64(a[l], b[l])
				continue
			}
			d[l] = math.Float64bits(r)
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		r := f64(a[l]) + f64(b[l])
		if r != r {
			d[l] = nan64(a[l], b[l])
			continue
		}
		d[l] = math.Float64bits(r)
	}
}

func opSubF64(w *warp, in *inst, m uint32) {
	d, a, b := &w.r[in.d], &w.r[in.a], &w.r[in.b]
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		r := f64(a[l]) - f64(b[l])
		if r != r {
			d[l] = nan64(a[l], b[l])
			continue
		}
		d[l] = math.Float64bits(r)
	}
}

func opMulF64(w *warp, in *inst, m uint32) {
	d, a, b := &w.r[in.d], &w.r[in.a], &w.r[in.b]
	if m == fullMask {
		for l := range d {
			r := f64(a[l]) * f64(b[l])
			if r != r {
				d[l] = nan64(a[l], b[l])
				continue
			}
			d[l] = math.Float64bits(r)
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		r := f64(a[l]) * f64(b[l])
		if r != r {
			d[l] = nan64(a[l], b[l])
			continue
		}
		d[l] = math.Float64bits(r)
	}
}

func opBfi(w *warp, in *inst, m uint32) {
	d, a, b, c, e := &w.r[in.d], &w.r[in.a], &w.r[in.b], &w.r[in.c], &w.r[in.e]
	width := uint(in.typ.Bits())
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		pos, ln := uint(uint8(c[l])), uint(uint8(e[l]))
		v := b[l]
		if ln > 0 && pos < width {
			mask := uint64(math.MaxUint64)
			if ln < 64 {
				mask = 1<<ln - 1
			}
			mask <<= pos
			v = (v &^ mask) | ((a[l] << pos) & mask)
		}
		d[l] = v & sizeMask(uint8(width/8))
	}
}

func opTrap(w *warp, in *inst, m uint32) {
	w.setFault(gpu.ErrLaunchFailed, "trap", in, bits.TrailingZeros32(m), msGeneric, 0, 0)
}

func opClock(w *warp, in *inst, m uint32) {
	l := w.cta.l
	var v uint64
	switch in.mode {
	case 0, 1: // %clock, %clock64: cycles at the advertised clock rate
		v = uint64(time.Since(l.start).Nanoseconds()) * uint64(l.ctx.drv.props.ClockRateKHz) / 1e6
		if in.mode == 0 {
			v &= math.MaxUint32
		}
	case 2:
		v = uint64(time.Now().UnixNano())
	case 3:
		v = uint64(time.Now().UnixNano()) & math.MaxUint32
	case 4:
		v = uint64(time.Now().UnixNano()) >> 32
	}
	d := &w.r[in.d]
	for ; m != 0; m &= m - 1 {
		d[bits.TrailingZeros32(m)&31] = v
	}
}

func opActivemask(w *warp, in *inst, m uint32) {
	d := &w.r[in.d]
	for mm := m; mm != 0; mm &= mm - 1 {
		d[bits.TrailingZeros32(mm)&31] = uint64(m)
	}
}

func opPack(w *warp, in *inst, m uint32) {
	d := &w.r[in.d]
	sz := uint(in.size)
	mask := uint64(1)<<sz - 1
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		var v uint64
		for i, r := range in.vec {
			v |= (w.r[r][l] & mask) << (uint(i) * sz)
		}
		d[l] = v
	}
}

func opUnpack(w *warp, in *inst, m uint32) {
	a := &w.r[in.a]
	sz := uint(in.size)
	mask := uint64(1)<<sz - 1
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		v := a[l]
		for i, r := range in.vec {
			w.r[r][l] = (v >> (uint(i) * sz)) & mask
		}
	}
}

// Predicates.

func setPred(w *warp, p int32, m, v uint32) {
	w.p[p] = w.p[p]&^m | v&m
}

func opMovPred(w *warp, in *inst, m uint32) {
	var v uint32
	switch in.mode {
	case 1:
		v = 0
	case 2:
		v = fullMask
	default:
		v = w.p[in.pc]
		if in.pcNeg {
			v = ^v
		}
	}
	setPred(w, in.pd, m, v)
}

func opPredLogic(w *warp, in *inst, m uint32) {
	a := w.p[in.a]
	var v uint32
	switch in.mode {
	case 0:
		v = a & w.p[in.b]
	case 1:
		v = a | w.p[in.b]
	case 2:
		v = a ^ w.p[in.b]
	case 3:
		v = ^a
	}
	setPred(w, in.pd, m, v)
}

var boolOps = map[string]uint8{"": 0, "and": 1, "or": 2, "xor": 3}

// cmpTables maps a comparison to a truth table over the relation of the
// operands: bit 0 less, bit 1 equal, bit 2 greater, bit 3 unordered.
var cmpTables = map[string]uint8{
	"eq": 0b0010, "ne": 0b0101, "lt": 0b0001, "le": 0b0011, "gt": 0b0100, "ge": 0b0110,
	"lo": 0b0001, "ls": 0b0011, "hi": 0b0100, "hs": 0b0110,
	"equ": 0b1010, "neu": 0b1101, "ltu": 0b1001, "leu": 0b1011, "gtu": 0b1100, "geu": 0b1110,
	"num": 0b0111, "nan": 0b1000,
}

// relMask turns the masks of lanes where a < b and a == b (and, for floats,
// where the operands are unordered) into the result of comparison table tbl.
func relMask(tbl uint8, m, lt, eq, un uint32) uint32 {
	gt := m &^ (lt | eq | un)
	var r uint32
	if tbl&1 != 0 {
		r |= lt
	}
	if tbl&2 != 0 {
		r |= eq
	}
	if tbl&4 != 0 {
		r |= gt
	}
	if tbl&8 != 0 {
		r |= un
	}
	return r & m
}

// bit is 1 for true and 0 for false; the compiler turns it into a SETcc,
// which keeps data-dependent branches out of the comparison loops.
func bit(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// fullRel returns the mask of the 32 lanes where a <tbl> b holds, tbl being
// the truth table of an integer comparison (see cmpTables), with operands
// compared as T. Each relation has a loop of its own, with even
// and odd lanes in separate masks shifted into place from lane 31 down: no
// branches and short dependency chains. > and >= swap the operands.
func fullRel[T int32 | uint32 | int64 | uint64](a, b *[32]uint64, tbl uint8) uint32 {
	switch tbl & 7 {
	case 0b100: // a > b is b < a
		a, b, tbl = b, a, 0b001
	case 0b110: // a >= b is b <= a
		a, b, tbl = b, a, 0b011
	}
	var r0, r1 uint32
	switch tbl & 7 {
	case 0b001:
		for l := 30; l >= 0; l -= 2 {
			r0 = r0<<2 | bit(T(a[l]) < T(b[l]))
			r1 = r1<<2 | bit(T(a[l+1]) < T(b[l+1]))
		}
	case 0b011:
		for l := 30; l >= 0; l -= 2 {
			r0 = r0<<2 | bit(T(a[l]) <= T(b[l]))
			r1 = r1<<2 | bit(T(a[l+1]) <= T(b[l+1]))
		}
	case 0b010:
		for l := 30; l >= 0; l -= 2 {
			r0 = r0<<2 | bit(T(a[l]) == T(b[l]))
			r1 = r1<<2 | bit(T(a[l+1]) == T(b[l+1]))
		}
	case 0b101:
		for l := 30; l >= 0; l -= 2 {
			r0 = r0<<2 | bit(T(a[l]) != T(b[l]))
			r1 = r1<<2 | bit(T(a[l+1]) != T(b[l+1]))
		}
	case 0b111: // every ordered relation: always true for integers
		return fullMask
	default: // no ordered relation: never true for integers
		return 0
	}
	return r0 | r1<<1
}

// compareFunc returns a function computing, for the lanes in m, the mask of
// lanes where a <cmp> b holds for operand type t.
func compareFunc(t ptx.Type, ftz bool) func(w *warp, in *inst, m uint32) uint32 {
	sh := uint(64 - t.Bits())
	switch {
	case t == ptx.F32:
		return func(w *warp, in *inst, m uint32) uint32 {
			a, b := &w.r[in.a], &w.r[in.b]
			var lt, eq, un uint32
			for mm := m; mm != 0; mm &= mm - 1 {
				l := bits.TrailingZeros32(mm) & 31
				x, y := f32(a[l]), f32(b[l])
				if ftz {
					x, y = flush32(x), flush32(y)
				}
				bit := uint32(1) << uint(l)
				if x < y {
					lt |= bit
				} else if x == y {
					eq |= bit
				} else if x != x || y != y {
					un |= bit
				}
			}
			return relMask(in.cmp, m, lt, eq, un)
		}
	case t == ptx.F64:
		return func(w *warp, in *inst, m uint32) uint32 {
			a, b := &w.r[in.a], &w.r[in.b]
			var lt, eq, un uint32
			for mm := m; mm != 0; mm &= mm - 1 {
				l := bits.TrailingZeros32(mm) & 31
				x, y := f64(a[l]), f64(b[l])
				bit := uint32(1) << uint(l)
				if x < y {
					lt |= bit
				} else if x == y {
					eq |= bit
				} else if x != x || y != y {
					un |= bit
				}
			}
			return relMask(in.cmp, m, lt, eq, un)
		}
	case t == ptx.S32:
		return func(w *warp, in *inst, m uint32) uint32 {
			a, b := &w.r[in.a], &w.r[in.b]
			var lt, eq uint32
			if m == fullMask {
				return fullRel[int32](a, b, in.cmp)
			}
			for mm := m; mm != 0; mm &= mm - 1 {
				l := bits.TrailingZeros32(mm) & 31
				x, y := int32(a[l]), int32(b[l])
				if x < y {
					lt |= 1 << uint(l)
				}
				if x == y {
					eq |= 1 << uint(l)
				}
			}
			return relMask(in.cmp, m, lt, eq, 0)
		}
	case t.IsSigned():
		return func(w *warp, in *inst, m uint32) uint32 {
			a, b := &w.r[in.a], &w.r[in.b]
			if m == fullMask && sh == 0 {
				return fullRel[int64](a, b, in.cmp)
			}
			var lt, eq uint32
			for mm := m; mm != 0; mm &= mm - 1 {
				l := bits.TrailingZeros32(mm) & 31
				x, y := int64(a[l]<<sh)>>sh, int64(b[l]<<sh)>>sh
				if x < y {
					lt |= 1 << uint(l)
				}
				if x == y {
					eq |= 1 << uint(l)
				}
			}
			return relMask(in.cmp, m, lt, eq, 0)
		}
	}
	return func(w *warp, in *inst, m uint32) uint32 {
		a, b := &w.r[in.a], &w.r[in.b]
		if m == fullMask {
			switch sh {
			case 32:
				return fullRel[uint32](a, b, in.cmp)
			case 0:
				return fullRel[uint64](a, b, in.cmp)
			}
		}
		var lt, eq uint32
		for mm := m; mm != 0; mm &= mm - 1 {
			l := bits.TrailingZeros32(mm) & 31
			x, y := a[l]<<sh, b[l]<<sh
			if x < y {
				lt |= 1 << uint(l)
			}
			if x == y {
				eq |= 1 << uint(l)
			}
		}
		return relMask(in.cmp, m, lt, eq, 0)
	}
}

// combine applies setp's .and/.or/.xor with predicate c.
func combine(w *warp, in *inst, r uint32) (uint32, uint32) {
	p, q := r, ^r
	if in.pc >= 0 {
		c := w.p[in.pc]
		if in.pcNeg {
			c = ^c
		}
		switch in.mode {
		case 1:
			p, q = p&c, q&c
		case 2:
			p, q = p|c, q|c
		case 3:
			p, q = p^c, q^c
		}
	}
	return p, q
}

func opSetp(w *warp, in *inst, m uint32) {
	p, q := combine(w, in, in.cmpFn(w, in, m))
	setPred(w, in.pd, m, p)
	if in.pq >= 0 {
		setPred(w, in.pq, m, q)
	}
}

// opSet is set.cmp.dtype.stype: all ones (integer) or 1.0 (f32) when true.
func opSet(w *warp, in *inst, m uint32) {
	p, _ := combine(w, in, in.cmpFn(w, in, m))
	d := &w.r[in.d]
	var one uint64 = math.MaxUint32
	if in.typ == ptx.F32 {
		one = uint64(math.Float32bits(1))
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		if p>>uint(l)&1 != 0 {
			d[l] = one
		} else {
			d[l] = 0
		}
	}
}

func opSelp(w *warp, in *inst, m uint32) {
	d, a, b := &w.r[in.d], &w.r[in.a], &w.r[in.b]
	c := w.p[in.pc]
	if in.pcNeg {
		c = ^c
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		if c>>uint(l)&1 != 0 {
			d[l] = a[l]
		} else {
			d[l] = b[l]
		}
	}
}

func opSlct(w *warp, in *inst, m uint32) {
	d, a, b, c := &w.r[in.d], &w.r[in.a], &w.r[in.b], &w.r[in.c]
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		var ge bool
		if in.t2 == ptx.F32 {
			x := f32(c[l])
			if in.ftz {
				x = flush32(x)
			}
			ge = x >= 0
		} else {
			ge = int32(c[l]) >= 0
		}
		if ge {
			d[l] = a[l]
		} else {
			d[l] = b[l]
		}
	}
}

var testpModes = map[string]uint8{"finite": 0, "infinite": 1, "number": 2, "notanumber": 3, "normal": 4, "subnormal": 5}

func opTestp(w *warp, in *inst, m uint32) {
	a := &w.r[in.a]
	var r uint32
	for mm := m; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm) & 31
		x := f64(a[l])
		if in.typ == ptx.F32 {
			x = float64(f32(a[l]))
		}
		var ok bool
		switch in.mode {
		case 0:
			ok = !math.IsInf(x, 0) && x == x
		case 1:
			ok = math.IsInf(x, 0)
		case 2:
			ok = x == x
		case 3:
			ok = x != x
		case 4, 5:
			min := 0x1p-1022
			if in.typ == ptx.F32 {
				min = 0x1p-126
			}
			ax := math.Abs(x)
			normal := ax >= min && !math.IsInf(x, 0) && x == x
			if in.mode == 4 {
				ok = normal
			} else {
				ok = ax > 0 && ax < min
			}
		}
		if ok {
			r |= 1 << uint(l)
		}
	}
	setPred(w, in.pd, m, r)
}

// Warp-wide operations.

func opShfl(w *warp, in *inst, m uint32) {
	src := w.r[in.a] // copy: lanes read values from before the shuffle
	d, b, c := &w.r[in.d], &w.r[in.b], &w.r[in.c]
	var pm uint32
	for mm := m; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm) & 31
		bval := int(b[l] & 31)
		cval := int(c[l] & 31)
		seg := int(c[l]>>8) & 31
		maxLane := (l & seg) | (cval &^ seg)
		minLane := l & seg
		var j int
		var ok bool
		switch in.mode {
		case 0:
			j = l - bval
			ok = j >= maxLane
		case 1:
			j = l + bval
			ok = j <= maxLane
		case 2:
			j = l ^ bval
			ok = j <= maxLane
		default:
			j = minLane | (bval &^ seg)
			ok = j <= maxLane
		}
		if !ok {
			j = l
		} else {
			pm |= 1 << uint(l)
		}
		d[l] = uint64(uint32(src[j&31]))
	}
	if in.pd >= 0 {
		setPred(w, in.pd, m, pm)
	}
}

func opVote(w *warp, in *inst, m uint32) {
	p := w.p[in.pc]
	if in.pcNeg {
		p = ^p
	}
	active := m
	if in.b >= 0 {
		active &= uint32(w.r[in.b][bits.TrailingZeros32(m)&31])
	}
	p &= active
	var res bool
	switch in.mode {
	case 0:
		res = p == active
	case 1:
		res = p != 0
	case 2:
		res = p == active || p == 0
	case 3:
		d := &w.r[in.d]
		for mm := m; mm != 0; mm &= mm - 1 {
			d[bits.TrailingZeros32(mm)&31] = uint64(p)
		}
		return
	}
	v := uint32(0)
	if res {
		v = fullMask
	}
	setPred(w, in.pd, m, v)
}

// cvtaFunc converts between generic addresses and state-space addresses.
func cvtaFunc(in *ptx.Inst) (handler, func(a, b uint64) uint64) {
	var win uint64
	switch in.Space {
	case ptx.SpaceShared:
		win = sharedWindow
	case ptx.SpaceLocal:
		win = localWindow
	case ptx.SpaceConst:
		win = constWindow
	case ptx.SpaceParam:
		win = paramWindow
	}
	mask := sizeMask(uint8(in.Type().Size()))
	if win == 0 && mask == math.MaxUint64 {
		return opMov64, nil // global addresses are generic addresses
	}
	if in.Has("to") {
		return opF1, func(a, _ uint64) uint64 {
			if win != 0 && a >= win && a < win+1<<32 {
				return (a - win) & mask
			}
			return a & mask
		}
	}
	return opF1, func(a, _ uint64) uint64 { return (a + win) & mask }
}

// atomFunc returns the read-modify-write function of an atomic operation:
// new = f(old, operand).
func atomFunc(op string, t ptx.Type, p ptx.Pos) (func(a, b uint64) uint64, error) {
	is32 := t.Size() == 4
	mask := sizeMask(uint8(t.Size()))
	switch op {
	case "add":
		switch t {
		case ptx.F32:
			return func(a, b uint64) uint64 {
				return bits32(flush32(flush32(f32(a)) + flush32(f32(b))))
			}, nil
		case ptx.F64:
			return func(a, b uint64) uint64 { return bits64(f64(a) + f64(b)) }, nil
		}
		return func(a, b uint64) uint64 { return (a + b) & mask }, nil
	case "exch":
		return func(_, b uint64) uint64 { return b & mask }, nil
	case "and":
		return func(a, b uint64) uint64 { return a & b & mask }, nil
	case "or":
		return func(a, b uint64) uint64 { return (a | b) & mask }, nil
	case "xor":
		return func(a, b uint64) uint64 { return (a ^ b) & mask }, nil
	case "inc":
		if !is32 || t.IsSigned() {
			break
		}
		return func(a, b uint64) uint64 {
			if uint32(a) >= uint32(b) {
				return 0
			}
			return uint64(uint32(a) + 1)
		}, nil
	case "dec":
		if !is32 || t.IsSigned() {
			break
		}
		return func(a, b uint64) uint64 {
			if uint32(a) == 0 || uint32(a) > uint32(b) {
				return uint64(uint32(b))
			}
			return uint64(uint32(a) - 1)
		}, nil
	case "min", "max":
		isMax := op == "max"
		switch {
		case t.IsFloat():
			return nil, unsupported(p, "atom.%s.%s is not supported", op, t)
		case t.IsSigned():
			sh := uint(64 - t.Bits())
			return func(a, b uint64) uint64 {
				x, y := int64(a<<sh)>>sh, int64(b<<sh)>>sh
				if (y > x) == isMax && y != x {
					return b & mask
				}
				return a & mask
			}, nil
		}
		return func(a, b uint64) uint64 {
			x, y := a&mask, b&mask
			if (y > x) == isMax && y != x {
				return y
			}
			return x
		}, nil
	case "cas":
		return nil, nil
	}
	return nil, unsupported(p, "atom.%s.%s is not supported", op, t)
}
