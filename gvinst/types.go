package gvinst

import "fmt"

// Type is the type specifier carried by every op. The names are those of
// PTX (.s32, .u64, .f64, …) plus .f80 for x87 extended precision and .b128
// for a whole SSE register.
type Type uint8

// The types of GVInst.
const (
	TypeNone Type = iota
	B8
	B16
	B32
	B64
	B128
	U8
	U16
	U32
	U64
	S8
	S16
	S32
	S64
	F32
	F64
	F80
	numTypes
)

var typeNames = [numTypes]string{
	TypeNone: "",
	B8:       "b8", B16: "b16", B32: "b32", B64: "b64", B128: "b128",
	U8: "u8", U16: "u16", U32: "u32", U64: "u64",
	S8: "s8", S16: "s16", S32: "s32", S64: "s64",
	F32: "f32", F64: "f64", F80: "f80",
}

var typeSizes = [numTypes]int{
	B8: 1, B16: 2, B32: 4, B64: 8, B128: 16,
	U8: 1, U16: 2, U32: 4, U64: 8,
	S8: 1, S16: 2, S32: 4, S64: 8,
	F32: 4, F64: 8, F80: 10,
}

// String returns the type's name without the leading dot, e.g. "s32".
func (t Type) String() string {
	if t < numTypes {
		return typeNames[t]
	}
	return fmt.Sprintf("type%d", uint8(t))
}

// Size is the width of a value of type t in bytes (10 for .f80, 16 for
// .b128, 0 for TypeNone).
func (t Type) Size() int {
	if t < numTypes {
		return typeSizes[t]
	}
	return 0
}

// Bits is the width of t in bits.
func (t Type) Bits() int { return t.Size() * 8 }

// IsSigned reports whether t is a signed integer type.
func (t Type) IsSigned() bool { return t >= S8 && t <= S64 }

// IsInt reports whether t is an integer or bit-string type of at most 64 bits.
func (t Type) IsInt() bool { return t >= B8 && t <= S64 && t != B128 }

// IsFloat reports whether t is a floating-point type.
func (t Type) IsFloat() bool { return t == F32 || t == F64 || t == F80 }

// IsWide reports whether a value of type t occupies two frame slots.
func (t Type) IsWide() bool { return t == B128 || t == F80 }

// Slots is the number of 64-bit frame slots a value of type t occupies.
func (t Type) Slots() int {
	if t.IsWide() {
		return 2
	}
	return 1
}

// Mask is the bit mask of the low t.Bits() bits, for types of at most 64 bits.
func (t Type) Mask() uint64 {
	switch t.Size() {
	case 1:
		return 0xff
	case 2:
		return 0xffff
	case 4:
		return 0xffffffff
	default:
		return ^uint64(0)
	}
}

// WithSign returns the integer type of the same width as t that is signed
// (signed true) or unsigned.
func (t Type) WithSign(signed bool) Type {
	switch t.Size() {
	case 1:
		if signed {
			return S8
		}
		return U8
	case 2:
		if signed {
			return S16
		}
		return U16
	case 4:
		if signed {
			return S32
		}
		return U32
	case 8:
		if signed {
			return S64
		}
		return U64
	}
	return t
}

// ParseType parses a type name without the leading dot.
func ParseType(s string) (Type, bool) {
	for t := TypeNone + 1; t < numTypes; t++ {
		if typeNames[t] == s {
			return t, true
		}
	}
	return TypeNone, false
}
