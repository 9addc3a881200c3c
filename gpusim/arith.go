package gpusim

import (
	"math"
	"math/bits"

	"github.com/gxbit/gxbit/ptx"
)

// Modes of opCarry.
const (
	carryAdd uint8 = 1 << iota
	carrySub
	carryMad
	carryIn  // reads CC.CF
	carryOut // writes CC.CF
	carryHi  // mad: high half of the product
)

// opCarry runs add/sub/mad with carry-in and carry-out through the warp's
// per-lane carry flags. For subtraction the flag is a borrow, as PTX defines
// sub.cc and subc.
func opCarry(w *warp, in *inst, m uint32) {
	d, a, b, c := &w.r[in.d], &w.r[in.a], &w.r[in.b], &w.r[in.c]
	mode := in.mode
	is64 := in.size == 8
	var out uint32
	for mm := m; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm) & 31
		var cin uint64
		if mode&carryIn != 0 {
			cin = uint64(w.cc >> uint(l) & 1)
		}
		x, y := a[l], b[l]
		if mode&carryMad != 0 {
			// mad: the addend is c; the product's half is the first term.
			if is64 {
				hi, lo := bits.Mul64(x, y)
				x = lo
				if mode&carryHi != 0 {
					x = hi
				}
			} else {
				p := (x & math.MaxUint32) * (y & math.MaxUint32)
				x = p & math.MaxUint32
				if mode&carryHi != 0 {
					x = p >> 32
				}
			}
			y = c[l]
		}
		var r, co uint64
		switch {
		case mode&carrySub != 0 && is64:
			r, co = bits.Sub64(x, y, cin)
		case mode&carrySub != 0:
			r, co = bits.Sub64(x&math.MaxUint32, y&math.MaxUint32, cin)
			co, r = r>>63, r&math.MaxUint32
		case is64:
			r, co = bits.Add64(x, y, cin)
		default:
			r = x&math.MaxUint32 + y&math.MaxUint32 + cin
			co, r = r>>32, r&math.MaxUint32
		}
		d[l] = r
		out |= uint32(co) << uint(l)
	}
	if mode&carryOut != 0 {
		w.cc = w.cc&^m | out&m
	}
}

// selectArith picks the handler of an arithmetic or logic instruction from
// its opcode, type and modifiers. Hot forms get specialised handlers; the
// rest run a per-lane function built here once.
func selectArith(x *inst, in *ptx.Inst) error {
	t := in.Type()
	switch {
	case t == ptx.F32:
		return selectF32(x, in)
	case t == ptx.F64:
		return selectF64(x, in)
	case t.IsFloat():
		return unsupported(in.Pos, "%s: .%s arithmetic is not supported by the simulator", in.String(), t)
	}
	return selectInt(x, in)
}

func selectInt(x *inst, in *ptx.Inst) error {
	t := in.Type()
	size := t.Size()
	nb := uint(t.Bits())
	mask := sizeMask(uint8(size))
	sh := 64 - nb
	sext := func(v uint64) int64 { return int64(v<<sh) >> sh }
	signed := t.IsSigned()
	f2 := func(f func(a, b uint64) uint64) error { x.fn, x.f2 = opF2, f; return nil }
	f1 := func(f func(a uint64) uint64) error {
		x.fn, x.f2 = opF1, func(a, _ uint64) uint64 { return f(a) }
		return nil
	}
	f3 := func(f func(a, b, c uint64) uint64) error { x.fn, x.f3 = opF3, f; return nil }
	hi, wide := in.Has("hi"), in.Has("wide")
	switch in.Op {
	case "add", "sub":
		sub := in.Op == "sub"
		if x.sat {
			if t != ptx.S32 {
				return decodeErr(in.Pos, "%s: .sat needs .s32", in.String())
			}
			return f2(func(a, b uint64) uint64 {
				y := int64(int32(b))
				if sub {
					y = -y
				}
				r := int64(int32(a)) + y
				r = max(math.MinInt32, min(math.MaxInt32, r))
				return uint64(uint32(r))
			})
		}
		if len(in.Args) > 2 && in.Args[2].Kind == ptx.OpInt && (size == 4 || size == 8) {
			// A register plus an immediate, as in pointer and counter
			// increments: a - v is a + (-v) in two's complement.
			x.imm = uint64(in.Args[2].Int)
			if sub {
				x.imm = -x.imm
			}
			x.fn = opAddImm64
			if size == 4 {
				x.fn = opAddImm32
			}
			return nil
		}
		switch {
		case size == 4 && !sub:
			x.fn = opAdd32
		case size == 4:
			x.fn = opSub32
		case size == 8 && !sub:
			x.fn = opAdd64
		case size == 8:
			x.fn = opSub64
		case sub:
			return f2(func(a, b uint64) uint64 { return (a - b) & mask })
		default:
			return f2(func(a, b uint64) uint64 { return (a + b) & mask })
		}
		return nil
	case "mul", "mad":
		mad := in.Op == "mad"
		switch {
		case wide:
			if size == 4 && !mad {
				if signed {
					x.fn = opMulWideS32
				} else {
					x.fn = opMulWideU32
				}
				return nil
			}
			prod := func(a, b uint64) uint64 {
				if signed {
					return uint64(sext(a) * sext(b))
				}
				return (a & mask) * (b & mask)
			}
			wmask := sizeMask(uint8(2 * size))
			if mad {
				return f3(func(a, b, c uint64) uint64 { return (prod(a, b) + c) & wmask })
			}
			return f2(func(a, b uint64) uint64 { return prod(a, b) & wmask })
		case hi:
			mulhi := func(a, b uint64) uint64 {
				if size == 8 {
					if signed {
						h, _ := bits.Mul64(a, b)
						// Signed correction of the unsigned high word.
						if int64(a) < 0 {
							h -= b
						}
						if int64(b) < 0 {
							h -= a
						}
						return h
					}
					h, _ := bits.Mul64(a, b)
					return h
				}
				if signed {
					return uint64(sext(a)*sext(b)>>nb) & mask
				}
				return ((a & mask) * (b & mask) >> nb) & mask
			}
			if mad {
				if x.sat {
					if t != ptx.S32 {
						return decodeErr(in.Pos, "%s: .sat needs .s32", in.String())
					}
					return f3(func(a, b, c uint64) uint64 {
						r := int64(int32(mulhi(a, b))) + int64(int32(c))
						return uint64(uint32(max(math.MinInt32, min(math.MaxInt32, r))))
					})
				}
				return f3(func(a, b, c uint64) uint64 { return (mulhi(a, b) + c) & mask })
			}
			return f2(mulhi)
		}
		switch {
		case size == 4 && mad:
			x.fn = opMadLo32
		case size == 4:
			x.fn = opMulLo32
		case size == 8 && mad:
			x.fn = opMadLo64
		case size == 8:
			x.fn = opMulLo64
		case mad:
			return f3(func(a, b, c uint64) uint64 { return (a*b + c) & mask })
		default:
			return f2(func(a, b uint64) uint64 { return (a * b) & mask })
		}
		return nil
	case "mul24", "mad24":
		prod := func(a, b uint64) uint64 {
			var p int64
			if signed {
				p = (int64(a<<40) >> 40) * (int64(b<<40) >> 40)
			} else {
				p = int64(a&0xffffff) * int64(b&0xffffff)
			}
			if hi {
				return uint64(p>>16) & 0xffffffff
			}
			return uint64(p) & 0xffffffff
		}
		if in.Op == "mad24" {
			return f3(func(a, b, c uint64) uint64 { return (prod(a, b) + c) & 0xffffffff })
		}
		return f2(prod)
	case "div", "rem":
		rem := in.Op == "rem"
		// Division by zero is unspecified in PTX; like the hardware, the
		// quotient is all ones and the remainder is the dividend.
		if signed {
			return f2(func(a, b uint64) uint64 {
				x, y := sext(a), sext(b)
				switch {
				case y == 0 && rem:
					return a & mask
				case y == 0:
					return mask
				case y == -1 && x == -1<<(nb-1):
					if rem {
						return 0
					}
					return a & mask
				case rem:
					return uint64(x%y) & mask
				}
				return uint64(x/y) & mask
			})
		}
		return f2(func(a, b uint64) uint64 {
			x, y := a&mask, b&mask
			switch {
			case y == 0 && rem:
				return x
			case y == 0:
				return mask
			case rem:
				return x % y
			}
			return x / y
		})
	case "abs":
		return f1(func(a uint64) uint64 {
			v := sext(a)
			if v < 0 {
				v = -v
			}
			return uint64(v) & mask
		})
	case "neg":
		return f1(func(a uint64) uint64 { return -a & mask })
	case "min", "max":
		isMax := in.Op == "max"
		if signed {
			return f2(func(a, b uint64) uint64 {
				if (sext(a) < sext(b)) != isMax {
					return a & mask
				}
				return b & mask
			})
		}
		return f2(func(a, b uint64) uint64 {
			if (a&mask < b&mask) != isMax {
				return a & mask
			}
			return b & mask
		})
	case "and":
		return f2(func(a, b uint64) uint64 { return a & b & mask })
	case "or":
		return f2(func(a, b uint64) uint64 { return (a | b) & mask })
	case "xor":
		return f2(func(a, b uint64) uint64 { return (a ^ b) & mask })
	case "not":
		return f1(func(a uint64) uint64 { return ^a & mask })
	case "cnot":
		return f1(func(a uint64) uint64 {
			if a&mask == 0 {
				return 1
			}
			return 0
		})
	case "shl":
		if size == 4 {
			x.fn = opShl32
			return nil
		}
		return f2(func(a, b uint64) uint64 {
			s := uint32(b)
			if s >= uint32(nb) {
				return 0
			}
			return (a << s) & mask
		})
	case "shr":
		if signed {
			return f2(func(a, b uint64) uint64 {
				s := uint32(b)
				if s >= uint32(nb) {
					s = uint32(nb) - 1
				}
				return uint64(sext(a)>>s) & mask
			})
		}
		return f2(func(a, b uint64) uint64 {
			s := uint32(b)
			if s >= uint32(nb) {
				return 0
			}
			return (a & mask) >> s
		})
	case "shf":
		left, clamp := in.HasMode("l"), in.Has("clamp")
		return f3(func(a, b, c uint64) uint64 {
			n := uint32(c)
			if clamp {
				n = min(n, 32)
			} else {
				n &= 31
			}
			v := uint64(uint32(b))<<32 | uint64(uint32(a))
			if left {
				return (v << n) >> 32 & math.MaxUint32
			}
			return (v >> n) & math.MaxUint32
		})
	case "sad":
		return f3(func(a, b, c uint64) uint64 {
			var d uint64
			if signed {
				x, y := sext(a), sext(b)
				if x > y {
					d = uint64(x - y)
				} else {
					d = uint64(y - x)
				}
			} else if a&mask > b&mask {
				d = a&mask - b&mask
			} else {
				d = b&mask - a&mask
			}
			return (c + d) & mask
		})
	case "bfind":
		shiftamt := in.Has("shiftamt")
		return f1(func(a uint64) uint64 {
			v := a & mask
			if signed && v>>(nb-1) != 0 {
				v = ^v & mask
			}
			if v == 0 {
				return math.MaxUint32
			}
			pos := uint64(63 - bits.LeadingZeros64(v))
			if shiftamt {
				return uint64(nb-1) - pos
			}
			return pos
		})
	case "popc":
		return f1(func(a uint64) uint64 { return uint64(bits.OnesCount64(a & mask)) })
	case "clz":
		return f1(func(a uint64) uint64 { return uint64(bits.LeadingZeros64(a&mask) - int(sh)) })
	case "brev":
		return f1(func(a uint64) uint64 { return bits.Reverse64(a) >> sh })
	case "bfe":
		return f3(func(a, b, c uint64) uint64 {
			pos, ln := uint(uint8(b)), uint(uint8(c))
			if ln == 0 {
				return 0
			}
			var sbit bool
			if signed {
				msb := pos + ln - 1
				if msb >= nb {
					msb = nb - 1
				}
				sbit = a>>msb&1 != 0
			}
			var v uint64
			if pos < nb {
				v = (a & mask) >> pos
			}
			if ln < 64 {
				v &= 1<<ln - 1
			}
			if sbit && ln < nb {
				v |= ^uint64(0) << ln
			}
			return v & mask
		})
	case "bfi":
		x.fn = opBfi
		return nil
	case "prmt":
		if len(in.Mode) > 0 {
			return unsupported(in.Pos, "prmt.%s is not supported by the simulator", in.Mode[0])
		}
		return f3(func(a, b, c uint64) uint64 {
			src := uint64(uint32(a)) | uint64(uint32(b))<<32
			var r uint64
			for i := uint(0); i < 4; i++ {
				sel := (c >> (4 * i)) & 0xf
				byt := (src >> (8 * (sel & 7))) & 0xff
				if sel&8 != 0 {
					if byt&0x80 != 0 {
						byt = 0xff
					} else {
						byt = 0
					}
				}
				r |= byt << (8 * i)
			}
			return r
		})
	}
	return unsupported(in.Pos, "%s is not supported by the simulator", in.String())
}

func selectF32(x *inst, in *ptx.Inst) error {
	rnd, ftz, sat := x.rnd, x.ftz, x.sat
	fin := func(v float32) float32 {
		if ftz {
			v = flush32(v)
		}
		return v
	}
	fout := func(v float32) uint64 {
		if ftz {
			v = flush32(v)
		}
		if sat {
			v = sat32(v)
		}
		return bits32(v)
	}
	plain := !ftz && !sat && (rnd == rndRN || rnd == rndNone)
	f2 := func(f func(a, b float32) float32) error {
		x.fn, x.f2 = opF2, func(a, b uint64) uint64 { return fout(f(fin(f32(a)), fin(f32(b)))) }
		return nil
	}
	f1 := func(f func(a float32) float32) error {
		x.fn, x.f2 = opF1, func(a, _ uint64) uint64 { return fout(f(fin(f32(a)))) }
		return nil
	}
	approx := in.Has("approx")
	switch in.Op {
	case "add":
		if plain {
			x.fn = opAddF32
			return nil
		}
		return f2(func(a, b float32) float32 { return add32(a, b, rnd) })
	case "sub":
		return f2(func(a, b float32) float32 { return add32(a, -b, rnd) })
	case "mul":
		if plain {
			x.fn = opMulF32
			return nil
		}
		return f2(func(a, b float32) float32 { return mul32(a, b, rnd) })
	case "fma", "mad":
		if in.Op == "mad" && rnd == rndNone {
			return decodeErr(in.Pos, "mad.f32 needs a rounding modifier (.rn, .rz, .rm, .rp)")
		}
		if plain {
			x.fn = opFmaF32
			return nil
		}
		x.fn, x.f3 = opF3, func(a, b, c uint64) uint64 {
			return fout(fma32(fin(f32(a)), fin(f32(b)), fin(f32(c)), rnd))
		}
		return nil
	case "div":
		if approx || in.Has("full") {
			// Approximate division; within the ISA's 2 ulp bound.
			return f2(func(a, b float32) float32 { return float32(float64(a) / float64(b)) })
		}
		return f2(func(a, b float32) float32 { return div32(a, b, rnd) })
	case "rcp":
		if approx {
			return f1(func(a float32) float32 { return float32(1 / float64(a)) })
		}
		return f1(func(a float32) float32 { return div32(1, a, rnd) })
	case "sqrt":
		if approx {
			return f1(func(a float32) float32 { return float32(math.Sqrt(float64(a))) })
		}
		return f1(func(a float32) float32 { return sqrt32(a, rnd) })
	case "rsqrt":
		return f1(func(a float32) float32 { return float32(1 / math.Sqrt(float64(a))) })
	case "ex2":
		return f1(func(a float32) float32 { return float32(math.Exp2(float64(a))) })
	case "lg2":
		return f1(func(a float32) float32 { return float32(math.Log2(float64(a))) })
	case "sin":
		return f1(func(a float32) float32 { return float32(math.Sin(float64(a))) })
	case "cos":
		return f1(func(a float32) float32 { return float32(math.Cos(float64(a))) })
	case "abs", "neg":
		// Sign-bit operations: NaN payloads pass through.
		bit := uint64(1) << 31
		neg := in.Op == "neg"
		x.fn, x.f2 = opF1, func(a, _ uint64) uint64 {
			v := uint64(math.Float32bits(fin(f32(a))))
			if neg {
				return v ^ bit
			}
			return v &^ bit
		}
		return nil
	case "min", "max":
		pick := minF
		if in.Op == "max" {
			pick = maxF
		}
		if in.Has("NaN") { // .NaN: a NaN operand makes the result NaN
			return f2(func(a, b float32) float32 {
				if a != a || b != b {
					return float32(math.NaN())
				}
				return float32(pick(float64(a), float64(b)))
			})
		}
		return f2(func(a, b float32) float32 { return float32(pick(float64(a), float64(b))) })
	case "copysign":
		x.fn, x.f2 = opF2, func(a, b uint64) uint64 { return uint64(uint32(a)&(1<<31) | uint32(b)&^(1<<31)) }
		return nil
	}
	return unsupported(in.Pos, "%s is not supported by the simulator", in.String())
}

func selectF64(x *inst, in *ptx.Inst) error {
	rnd, ftz, sat := x.rnd, x.ftz, x.sat
	fin := func(v float64) float64 {
		if ftz {
			v = flush64(v)
		}
		return v
	}
	fout := func(v float64) uint64 {
		if ftz {
			v = flush64(v)
		}
		if sat {
			v = sat64(v)
		}
		return bits64(v)
	}
	f2 := func(f func(a, b float64) float64) error {
		x.fn, x.f2 = opF2, func(a, b uint64) uint64 {
			r := f(fin(f64(a)), fin(f64(b)))
			if r != r && !sat {
				return nan64(a, b, b)
			}
			return fout(r)
		}
		return nil
	}
	f1 := func(f func(a float64) float64) error {
		x.fn, x.f2 = opF1, func(a, _ uint64) uint64 {
			r := f(fin(f64(a)))
			if r != r && !sat {
				return nan64(a, a, a)
			}
			return fout(r)
		}
		return nil
	}
	plain := !ftz && !sat && (rnd == rndRN || rnd == rndNone)
	switch in.Op {
	case "add":
		if plain {
			x.fn = opAddF64
			return nil
		}
		return f2(func(a, b float64) float64 { return add64(a, b, rnd) })
	case "sub":
		if plain {
			x.fn = opSubF64
			return nil
		}
		return f2(func(a, b float64) float64 { return add64(a, -b, rnd) })
	case "mul":
		if plain {
			x.fn = opMulF64
			return nil
		}
		return f2(func(a, b float64) float64 { return mul64(a, b, rnd) })
	case "fma", "mad":
		if rnd == rndNone && in.Op == "mad" {
			return decodeErr(in.Pos, "mad.f64 needs a rounding modifier (.rn, .rz, .rm, .rp)")
		}
		if !ftz && !sat && (rnd == rndRN || rnd == rndNone) {
			x.fn = opFmaF64
			return nil
		}
		x.fn, x.f3 = opF3, func(a, b, c uint64) uint64 {
			r := fma64(fin(f64(a)), fin(f64(b)), fin(f64(c)), rnd)
			if r != r && !sat {
				return nan64(a, b, c)
			}
			return fout(r)
		}
		return nil
	case "div":
		return f2(func(a, b float64) float64 { return div64(a, b, rnd) })
	case "rcp":
		return f1(func(a float64) float64 { return div64(1, a, rnd) })
	case "sqrt":
		return f1(func(a float64) float64 { return sqrt64(a, rnd) })
	case "rsqrt":
		return f1(func(a float64) float64 { return 1 / math.Sqrt(a) })
	case "abs", "neg":
		neg := in.Op == "neg"
		x.fn, x.f2 = opF1, func(a, _ uint64) uint64 {
			if f64(a) != f64(a) {
				return nan64(a) // sm_90 passes a NaN operand on, sign unchanged
			}
			v := math.Float64bits(fin(f64(a)))
			if neg {
				return v ^ 1<<63
			}
			return v &^ (1 << 63)
		}
		return nil
	case "min":
		return f2(minF)
	case "max":
		return f2(maxF)
	case "copysign":
		x.fn, x.f2 = opF2, func(a, b uint64) uint64 { return a&(1<<63) | b&^(1<<63) }
		return nil
	case "ex2":
		return f1(math.Exp2)
	case "lg2":
		return f1(math.Log2)
	case "sin":
		return f1(math.Sin)
	case "cos":
		return f1(math.Cos)
	}
	return unsupported(in.Pos, "%s is not supported by the simulator", in.String())
}
