package gvinst

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// iop is the opcode of a compiled instruction: a dense enumeration of
// specialised forms (ADD.u64 reg/reg, ADD.u64 reg/imm, CMP.lt.s64 fused with
// BRANCH, …) so that the interpreter's loop is one switch. iSlow runs any
// instruction through the reference semantics in slow.go.
type iop uint16

// The compiled opcodes. Names: I for an immediate second operand, 32 for
// .u32/.s32/.b32 forms (results zero-extended), 64 for 64-bit forms.
const (
	iSlow    iop = iota
	iMov         // d = a
	iMov2        // d, d+1 = a, a+1
	iMovMask     // d = a & imm
	iLi          // d = imm
	iJoin        // d, d+1 = a, b
	iAdd64
	iAdd64I
	iSub64
	iSub64I
	iMul64
	iMul64I
	iAnd64
	iAnd64I
	iOr64
	iOr64I
	iXor64
	iXor64I
	iShl64
	iShl64I
	iShr64
	iShr64I
	iSar64
	iSar64I
	iAdd32
	iAdd32I
	iSub32
	iSub32I
	iMul32
	iMul32I
	iAnd32
	iAnd32I
	iOr32
	iOr32I
	iXor32
	iXor32I
	iShl32
	iShl32I
	iShr32
	iShr32I
	iSar32
	iSar32I
	iSelect // d = a != 0 ? b : c
	iLd8
	iLd16
	iLd32
	iLd64
	iSt8
	iSt16
	iSt32
	iSt64
	iLdX32         // d = 32-bit load at a + b<<mod + imm
	iLdX64         // d = 64-bit load at a + b<<mod + imm
	iStX32         // 32-bit store of c at a + b<<mod + imm
	iStX64         // 64-bit store of c at a + b<<mod + imm
	iSext          // d = sign-extension of a's low 64-mod bits, & imm
	iCvtF64FromS64 // d = float64 of a's low 64-mod bits, sign-extended
	iCvtS64FromF64 // d = int64 of truncated float64 a (indefinite when out of range), & imm
	iCvtS32FromF64 // d = int32 of truncated float64 a (indefinite when out of range)
	iVAnd          // d, d+1 = a AND b (128 bits)
	iVOr           // d, d+1 = a OR b
	iVXor          // d, d+1 = a XOR b
	iVAndN         // d, d+1 = NOT a AND b
	iVCmpEqU8      // pcmpeqb
	iVMovMskU8     // pmovmskb
	iFlags         // lazy flags of kind and type imm: CCA, CCB, CCR, CCC = a, b, c, d
	iGetCC         // d = condition mod on the flags
	iAddF64
	iSubF64
	iMulF64
	iDivF64
	iAddF32
	iSubF32
	iMulF32
	iDivF32
	iLd128      // d, d+1 = 128-bit load at a + imm
	iSt128      // 128-bit store of b, b+1 at a + imm
	iLdX128     // d, d+1 = 128-bit load at a + b<<mod + imm
	iStX128     // 128-bit store of c, c+1 at a + b<<mod + imm
	iChkAlign   // trap unless a + imm is a multiple of sz (a power of two)
	iVAddF64    // packed .f64 and .f32 arithmetic, fast path as iAddF64
	iVSubF64    //
	iVMulF64    //
	iVDivF64    //
	iVAddF32    // the four .f32 ones in this order ("+-*/", see exec)
	iVSubF32    //
	iVMulF32    //
	iVDivF32    //
	iVUnpackL64 // d, d+1 = a, b
	iVUnpackH64 // d, d+1 = a+1, b+1
	iLd64Z      // d = 64-bit load at a + imm, d+1 = 0 (movsd, movq from memory); with mod 1, b and b+1 too
	iJoinZ      // d = a, d+1 = 0; with mod 1, b and b+1 too
	iMulHiU64   // d = high 64 bits of a * b (of a * imm with mod 1)
	iMulHiS64   // the same, signed
	iAddF64M    // d = a + the .f64 at b + imm (the LD at idx into c, then the op at idx+1)
	iSubF64M    //
	iMulF64M    //
	iDivF64M    //
	iJmp        // to target 0
	iBranch     // to target 0 if a != 0, else target 1
	iJmpR       // to the address in a (JMPR, CALLR, RET)
	iSyscall
	iTrap

	// CMP, by condition, width and form (the order is used by cmpIop).
	iCmpEq64
	iCmpEq64I
	iCmpEq32
	iCmpEq32I
	iCmpNe64
	iCmpNe64I
	iCmpNe32
	iCmpNe32I
	iCmpLtS64
	iCmpLtS64I
	iCmpLtS32
	iCmpLtS32I
	iCmpLeS64
	iCmpLeS64I
	iCmpLeS32
	iCmpLeS32I
	iCmpGtS64
	iCmpGtS64I
	iCmpGtS32
	iCmpGtS32I
	iCmpGeS64
	iCmpGeS64I
	iCmpGeS32
	iCmpGeS32I
	iCmpLtU64
	iCmpLtU64I
	iCmpLtU32
	iCmpLtU32I
	iCmpLeU64
	iCmpLeU64I
	iCmpLeU32
	iCmpLeU32I
	iCmpGtU64
	iCmpGtU64I
	iCmpGtU32
	iCmpGtU32I
	iCmpGeU64
	iCmpGeU64I
	iCmpGeU32
	iCmpGeU32I

	// CMP fused with the BRANCH that follows it, in the same order.
	iBrEq64
	iBrEq64I
	iBrEq32
	iBrEq32I
	iBrNe64
	iBrNe64I
	iBrNe32
	iBrNe32I
	iBrLtS64
	iBrLtS64I
	iBrLtS32
	iBrLtS32I
	iBrLeS64
	iBrLeS64I
	iBrLeS32
	iBrLeS32I
	iBrGtS64
	iBrGtS64I
	iBrGtS32
	iBrGtS32I
	iBrGeS64
	iBrGeS64I
	iBrGeS32
	iBrGeS32I
	iBrLtU64
	iBrLtU64I
	iBrLtU32
	iBrLtU32I
	iBrLeU64
	iBrLeU64I
	iBrLeU32
	iBrLeU32I
	iBrGtU64
	iBrGtU64I
	iBrGtU32
	iBrGtU32I
	iBrGeU64
	iBrGeU64I
	iBrGeU32
	iBrGeU32I
)

// exec runs compiled block blk on frame f, and then its cached successors
// while no breakpoint, dead block or spent budget stops it (executed counts
// the guest instructions of the Run). It returns how the last block exited,
// the next guest address, the index of the successor taken (-1 for a
// computed address), and the last block.
func (it *Interpreter) exec(f *frame, blk *cblock, budget uint64, executed *uint64) (exit int, next uint64, succ int, last *cblock) {
	mem := it.mem
again:
	code := blk.code
	for i := range code {
		in := &code[i]
		switch in.op {
		case iMov:
			f[in.d] = f[in.a]
		case iMov2:
			lo, hi := f[in.a], f[uint16(in.a+1)]
			f[in.d], f[uint16(in.d+1)] = lo, hi
		case iMovMask:
			f[in.d] = f[in.a] & in.imm
		case iLi:
			f[in.d] = in.imm
		case iJoin:
			lo, hi := f[in.a], f[in.b]
			f[in.d], f[uint16(in.d+1)] = lo, hi
		case iAdd64:
			f[in.d] = f[in.a] + f[in.b]
		case iAdd64I:
			f[in.d] = f[in.a] + in.imm
		case iSub64:
			f[in.d] = f[in.a] - f[in.b]
		case iSub64I:
			f[in.d] = f[in.a] - in.imm
		case iMul64:
			f[in.d] = f[in.a] * f[in.b]
		case iMul64I:
			f[in.d] = f[in.a] * in.imm
		case iAnd64:
			f[in.d] = f[in.a] & f[in.b]
		case iAnd64I:
			f[in.d] = f[in.a] & in.imm
		case iOr64:
			f[in.d] = f[in.a] | f[in.b]
		case iOr64I:
			f[in.d] = f[in.a] | in.imm
		case iXor64:
			f[in.d] = f[in.a] ^ f[in.b]
		case iXor64I:
			f[in.d] = f[in.a] ^ in.imm
		case iShl64:
			f[in.d] = f[in.a] << f[in.b]
		case iShl64I:
			f[in.d] = f[in.a] << in.imm
		case iShr64:
			f[in.d] = f[in.a] >> f[in.b]
		case iShr64I:
			f[in.d] = f[in.a] >> in.imm
		case iSar64:
			f[in.d] = uint64(int64(f[in.a]) >> f[in.b])
		case iSar64I:
			f[in.d] = uint64(int64(f[in.a]) >> in.imm)
		case iAdd32:
			f[in.d] = uint64(uint32(f[in.a]) + uint32(f[in.b]))
		case iAdd32I:
			f[in.d] = uint64(uint32(f[in.a]) + uint32(in.imm))
		case iSub32:
			f[in.d] = uint64(uint32(f[in.a]) - uint32(f[in.b]))
		case iSub32I:
			f[in.d] = uint64(uint32(f[in.a]) - uint32(in.imm))
		case iMul32:
			f[in.d] = uint64(uint32(f[in.a]) * uint32(f[in.b]))
		case iMul32I:
			f[in.d] = uint64(uint32(f[in.a]) * uint32(in.imm))
		case iAnd32:
			f[in.d] = uint64(uint32(f[in.a]) & uint32(f[in.b]))
		case iAnd32I:
			f[in.d] = uint64(uint32(f[in.a]) & uint32(in.imm))
		case iOr32:
			f[in.d] = uint64(uint32(f[in.a]) | uint32(f[in.b]))
		case iOr32I:
			f[in.d] = uint64(uint32(f[in.a]) | uint32(in.imm))
		case iXor32:
			f[in.d] = uint64(uint32(f[in.a]) ^ uint32(f[in.b]))
		case iXor32I:
			f[in.d] = uint64(uint32(f[in.a]) ^ uint32(in.imm))
		case iShl32:
			f[in.d] = uint64(uint32(f[in.a]) << uint32(f[in.b]))
		case iShl32I:
			f[in.d] = uint64(uint32(f[in.a]) << uint32(in.imm))
		case iShr32:
			f[in.d] = uint64(uint32(f[in.a]) >> uint32(f[in.b]))
		case iShr32I:
			f[in.d] = uint64(uint32(f[in.a]) >> uint32(in.imm))
		case iSar32:
			f[in.d] = uint64(uint32(int32(uint32(f[in.a])) >> uint32(f[in.b])))
		case iSar32I:
			f[in.d] = uint64(uint32(int32(uint32(f[in.a])) >> uint32(in.imm)))
		case iSelect:
			if f[in.a] != 0 {
				f[in.d] = f[in.b]
			} else {
				f[in.d] = f[in.c]
			}
		case iLd64:
			addr := f[in.a] + in.imm
			pn := addr / PageSize
			if e := &mem.rtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) && addr&pageMask <= PageSize-8 {
				f[in.d] = binary.LittleEndian.Uint64(e.p.data[addr&pageMask:])
			} else if v, err := mem.Load(addr, 8); err == nil {
				f[in.d] = v
			} else {
				it.memTrap(int(in.idx), err)
				return exitTrap, 0, -1, blk
			}
		case iLd32:
			addr := f[in.a] + in.imm
			pn := addr / PageSize
			if e := &mem.rtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) && addr&pageMask <= PageSize-4 {
				f[in.d] = uint64(binary.LittleEndian.Uint32(e.p.data[addr&pageMask:]))
			} else if v, err := mem.Load(addr, 4); err == nil {
				f[in.d] = v
			} else {
				it.memTrap(int(in.idx), err)
				return exitTrap, 0, -1, blk
			}
		case iLd8:
			addr := f[in.a] + in.imm
			pn := addr / PageSize
			if e := &mem.rtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) {
				f[in.d] = uint64(e.p.data[addr&pageMask])
			} else if v, err := mem.Load(addr, 1); err == nil {
				f[in.d] = v
			} else {
				it.memTrap(int(in.idx), err)
				return exitTrap, 0, -1, blk
			}
		case iLd16:
			addr := f[in.a] + in.imm
			pn := addr / PageSize
			if e := &mem.rtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) && addr&pageMask <= PageSize-2 {
				f[in.d] = uint64(binary.LittleEndian.Uint16(e.p.data[addr&pageMask:]))
			} else if v, err := mem.Load(addr, 2); err == nil {
				f[in.d] = v
			} else {
				it.memTrap(int(in.idx), err)
				return exitTrap, 0, -1, blk
			}
		case iSt64:
			addr := f[in.a] + in.imm
			pn := addr / PageSize
			if e := &mem.wtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) && addr&pageMask <= PageSize-8 {
				binary.LittleEndian.PutUint64(e.p.data[addr&pageMask:], f[in.b])
			} else if err := mem.Store(addr, 8, f[in.b]); err != nil {
				it.memTrap(int(in.idx), err)
				return exitTrap, 0, -1, blk
			} else if it.smc {
				return it.smcExit(int(in.idx), blk)
			}
		case iSt32:
			addr := f[in.a] + in.imm
			pn := addr / PageSize
			if e := &mem.wtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) && addr&pageMask <= PageSize-4 {
				binary.LittleEndian.PutUint32(e.p.data[addr&pageMask:], uint32(f[in.b]))
			} else if err := mem.Store(addr, 4, f[in.b]); err != nil {
				it.memTrap(int(in.idx), err)
				return exitTrap, 0, -1, blk
			} else if it.smc {
				return it.smcExit(int(in.idx), blk)
			}
		case iSt8:
			addr := f[in.a] + in.imm
			pn := addr / PageSize
			if e := &mem.wtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) {
				e.p.data[addr&pageMask] = byte(f[in.b])
			} else if err := mem.Store(addr, 1, f[in.b]); err != nil {
				it.memTrap(int(in.idx), err)
				return exitTrap, 0, -1, blk
			} else if it.smc {
				return it.smcExit(int(in.idx), blk)
			}
		case iSt16:
			if err := mem.Store(f[in.a]+in.imm, 2, f[in.b]); err != nil {
				it.memTrap(int(in.idx), err)
				return exitTrap, 0, -1, blk
			} else if it.smc {
				return it.smcExit(int(in.idx), blk)
			}
		case iSext:
			f[in.d] = uint64(int64(f[in.a]<<in.mod)>>in.mod) & in.imm
		case iCvtF64FromS64:
			v := int64(f[in.a]<<in.mod) >> in.mod
			x := float64(v)
			if in.mod == 0 && f[MXCSR]&(mxPE|mxPM|0x6000) != mxPE|mxPM && !(x < 0x1p63 && int64(x) == v) {
				// Inexact, with PE to set or unmasked, or MXCSR not
				// rounding to nearest.
				if !it.slow(f, &blk.insts[in.idx], int(in.idx)) {
					return exitTrap, 0, -1, blk
				}
				break
			}
			f[in.d] = math.Float64bits(x)
		case iCvtS64FromF64:
			x := math.Float64frombits(f[in.a])
			if x >= -0x1p63 && x < 0x1p63 && (float64(int64(x)) == x || f[MXCSR]&(mxPE|mxPM) == mxPE|mxPM) {
				f[in.d] = uint64(int64(x)) & in.imm
			} else if !it.slow(f, &blk.insts[in.idx], int(in.idx)) {
				// Out of range (IE), or inexact with PE to set.
				return exitTrap, 0, -1, blk
			}
		case iCvtS32FromF64:
			x := math.Float64frombits(f[in.a])
			if x > -0x1p31-1 && x < 0x1p31 && (float64(int32(x)) == x || f[MXCSR]&(mxPE|mxPM) == mxPE|mxPM) {
				f[in.d] = uint64(uint32(int32(x)))
			} else if !it.slow(f, &blk.insts[in.idx], int(in.idx)) {
				return exitTrap, 0, -1, blk
			}
		case iLdX64:
			addr := f[in.a] + f[in.b]<<in.mod + in.imm
			pn := addr / PageSize
			if e := &mem.rtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) && addr&pageMask <= PageSize-8 {
				f[in.d] = binary.LittleEndian.Uint64(e.p.data[addr&pageMask:])
			} else if v, err := mem.Load(addr, 8); err == nil {
				f[in.d] = v
			} else {
				it.memTrap(int(in.idx), err)
				return exitTrap, 0, -1, blk
			}
		case iLdX32:
			addr := f[in.a] + f[in.b]<<in.mod + in.imm
			pn := addr / PageSize
			if e := &mem.rtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) && addr&pageMask <= PageSize-4 {
				f[in.d] = uint64(binary.LittleEndian.Uint32(e.p.data[addr&pageMask:]))
			} else if v, err := mem.Load(addr, 4); err == nil {
				f[in.d] = v
			} else {
				it.memTrap(int(in.idx), err)
				return exitTrap, 0, -1, blk
			}
		case iStX64:
			addr := f[in.a] + f[in.b]<<in.mod + in.imm
			pn := addr / PageSize
			if e := &mem.wtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) && addr&pageMask <= PageSize-8 {
				binary.LittleEndian.PutUint64(e.p.data[addr&pageMask:], f[in.c])
			} else if err := mem.Store(addr, 8, f[in.c]); err != nil {
				it.memTrap(int(in.idx), err)
				return exitTrap, 0, -1, blk
			} else if it.smc {
				return it.smcExit(int(in.idx), blk)
			}
		case iStX32:
			addr := f[in.a] + f[in.b]<<in.mod + in.imm
			pn := addr / PageSize
			if e := &mem.wtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) && addr&pageMask <= PageSize-4 {
				binary.LittleEndian.PutUint32(e.p.data[addr&pageMask:], uint32(f[in.c]))
			} else if err := mem.Store(addr, 4, f[in.c]); err != nil {
				it.memTrap(int(in.idx), err)
				return exitTrap, 0, -1, blk
			} else if it.smc {
				return it.smcExit(int(in.idx), blk)
			}
		case iVAnd:
			lo, hi := f[in.a]&f[in.b], f[uint16(in.a+1)]&f[uint16(in.b+1)]
			f[in.d], f[uint16(in.d+1)] = lo, hi
		case iVOr:
			lo, hi := f[in.a]|f[in.b], f[uint16(in.a+1)]|f[uint16(in.b+1)]
			f[in.d], f[uint16(in.d+1)] = lo, hi
		case iVXor:
			lo, hi := f[in.a]^f[in.b], f[uint16(in.a+1)]^f[uint16(in.b+1)]
			f[in.d], f[uint16(in.d+1)] = lo, hi
		case iVAndN:
			lo, hi := ^f[in.a]&f[in.b], ^f[uint16(in.a+1)]&f[uint16(in.b+1)]
			f[in.d], f[uint16(in.d+1)] = lo, hi
		case iVCmpEqU8:
			lo, hi := cmpEqBytes(f[in.a], f[in.b]), cmpEqBytes(f[uint16(in.a+1)], f[uint16(in.b+1)])
			f[in.d], f[uint16(in.d+1)] = lo, hi
		case iVMovMskU8:
			f[in.d] = byteSigns(f[in.a]) | byteSigns(f[uint16(in.a+1)])<<8
		case iFlags:
			a, b, c, d := f[in.a], f[in.b], f[in.c], f[in.d]
			f[CCOp], f[CCA], f[CCB], f[CCR], f[CCC] = in.imm, a, b, c, d
		case iGetCC:
			f[in.d] = b2u(getCC(f, Cond(in.mod)))
		case iAddF64:
			x, y := f[in.a], f[in.b]
			r := math.Float64bits(float64(math.Float64frombits(x) + math.Float64frombits(y)))
			if max(r>>52&0x7ff-1, (f[MXCSR]&mxFastMaskDE^mxFastVal)<<16) >= 0x7fe &&
				!fastSum64(f[MXCSR], x, y, r, false) {
				if !it.sseSlowOp(f, blk, in) {
					return exitTrap, 0, -1, blk
				}
				break
			}
			f[in.d] = r
		case iSubF64:
			x, y := f[in.a], f[in.b]
			r := math.Float64bits(float64(math.Float64frombits(x) - math.Float64frombits(y)))
			if max(r>>52&0x7ff-1, (f[MXCSR]&mxFastMaskDE^mxFastVal)<<16) >= 0x7fe &&
				!fastSum64(f[MXCSR], x, y, r, true) {
				if !it.sseSlowOp(f, blk, in) {
					return exitTrap, 0, -1, blk
				}
				break
			}
			f[in.d] = r
		case iMulF64:
			x, y := f[in.a], f[in.b]
			r := math.Float64bits(float64(math.Float64frombits(x) * math.Float64frombits(y)))
			if max(r>>52&0x7ff-2, (f[MXCSR]&mxFastMaskDE^mxFastVal)<<16) >= 0x7fd &&
				!fastMul64(f[MXCSR], x, y, r) {
				if !it.sseSlowOp(f, blk, in) {
					return exitTrap, 0, -1, blk
				}
				break
			}
			f[in.d] = r
		case iDivF64:
			x, y := f[in.a], f[in.b]
			r := math.Float64bits(float64(math.Float64frombits(x) / math.Float64frombits(y)))
			if max(r>>52&0x7ff-2, (f[MXCSR]&mxFastMaskDE^mxFastVal)<<16) >= 0x7fd &&
				!fastDiv64(f[MXCSR], x, y, r) {
				if !it.sseSlowOp(f, blk, in) {
					return exitTrap, 0, -1, blk
				}
				break
			}
			f[in.d] = r
		case iAddF32:
			x, y := f[in.a], f[in.b]
			r := uint64(math.Float32bits(float32(math.Float32frombits(uint32(x)) + math.Float32frombits(uint32(y)))))
			if max(r>>23&0xff-1, (f[MXCSR]&mxFastMaskDE^mxFastVal)<<16) >= 0xfe &&
				!(f[MXCSR]&mxFastMask == mxFastVal && ord32(x) && ord32(y) && ord32(r)) {
				if !it.sseSlowOp(f, blk, in) {
					return exitTrap, 0, -1, blk
				}
				break
			}
			f[in.d] = r
		case iSubF32:
			x, y := f[in.a], f[in.b]
			r := uint64(math.Float32bits(float32(math.Float32frombits(uint32(x)) - math.Float32frombits(uint32(y)))))
			if max(r>>23&0xff-1, (f[MXCSR]&mxFastMaskDE^mxFastVal)<<16) >= 0xfe &&
				!(f[MXCSR]&mxFastMask == mxFastVal && ord32(x) && ord32(y) && ord32(r)) {
				if !it.sseSlowOp(f, blk, in) {
					return exitTrap, 0, -1, blk
				}
				break
			}
			f[in.d] = r
		case iMulF32:
			x, y := f[in.a], f[in.b]
			r := uint64(math.Float32bits(float32(math.Float32frombits(uint32(x)) * math.Float32frombits(uint32(y)))))
			if max(r>>23&0xff-2, (f[MXCSR]&mxFastMaskDE^mxFastVal)<<16) >= 0xfd &&
				!(f[MXCSR]&mxFastMask == mxFastVal && ord32(x) && ord32(y) && prod32(r, x, y)) {
				if !it.sseSlowOp(f, blk, in) {
					return exitTrap, 0, -1, blk
				}
				break
			}
			f[in.d] = r
		case iDivF32:
			x, y := f[in.a], f[in.b]
			r := uint64(math.Float32bits(float32(math.Float32frombits(uint32(x)) / math.Float32frombits(uint32(y)))))
			if max(r>>23&0xff-2, (f[MXCSR]&mxFastMaskDE^mxFastVal)<<16) >= 0xfd &&
				!(f[MXCSR]&mxFastMask == mxFastVal && ord32(x) && ord32(y) && prod32(r, x, y)) {
				if !it.sseSlowOp(f, blk, in) {
					return exitTrap, 0, -1, blk
				}
				break
			}
			f[in.d] = r
		case iVAddF64:
			x0, x1, y0, y1 := f[in.a], f[uint16(in.a+1)], f[in.b], f[uint16(in.b+1)]
			r0 := math.Float64bits(math.Float64frombits(x0) + math.Float64frombits(y0))
			r1 := math.Float64bits(math.Float64frombits(x1) + math.Float64frombits(y1))
			if max(r0>>52&0x7ff-1, r1>>52&0x7ff-1, (f[MXCSR]&mxFastMaskDE^mxFastVal)<<16) >= 0x7fe &&
				!(fastSum64(f[MXCSR], x0, y0, r0, false) && fastSum64(f[MXCSR], x1, y1, r1, false)) {
				if !it.slow(f, &blk.insts[in.idx], int(in.idx)) {
					return exitTrap, 0, -1, blk
				}
				break
			}
			f[in.d], f[uint16(in.d+1)] = r0, r1
		case iVSubF64:
			x0, x1, y0, y1 := f[in.a], f[uint16(in.a+1)], f[in.b], f[uint16(in.b+1)]
			r0 := math.Float64bits(math.Float64frombits(x0) - math.Float64frombits(y0))
			r1 := math.Float64bits(math.Float64frombits(x1) - math.Float64frombits(y1))
			if max(r0>>52&0x7ff-1, r1>>52&0x7ff-1, (f[MXCSR]&mxFastMaskDE^mxFastVal)<<16) >= 0x7fe &&
				!(fastSum64(f[MXCSR], x0, y0, r0, true) && fastSum64(f[MXCSR], x1, y1, r1, true)) {
				if !it.slow(f, &blk.insts[in.idx], int(in.idx)) {
					return exitTrap, 0, -1, blk
				}
				break
			}
			f[in.d], f[uint16(in.d+1)] = r0, r1
		case iVMulF64:
			x0, x1, y0, y1 := f[in.a], f[uint16(in.a+1)], f[in.b], f[uint16(in.b+1)]
			r0 := math.Float64bits(math.Float64frombits(x0) * math.Float64frombits(y0))
			r1 := math.Float64bits(math.Float64frombits(x1) * math.Float64frombits(y1))
			if max(r0>>52&0x7ff-2, r1>>52&0x7ff-2, (f[MXCSR]&mxFastMaskDE^mxFastVal)<<16) >= 0x7fd &&
				!(fastMul64(f[MXCSR], x0, y0, r0) && fastMul64(f[MXCSR], x1, y1, r1)) {
				if !it.slow(f, &blk.insts[in.idx], int(in.idx)) {
					return exitTrap, 0, -1, blk
				}
				break
			}
			f[in.d], f[uint16(in.d+1)] = r0, r1
		case iVDivF64:
			x0, x1, y0, y1 := f[in.a], f[uint16(in.a+1)], f[in.b], f[uint16(in.b+1)]
			r0 := math.Float64bits(math.Float64frombits(x0) / math.Float64frombits(y0))
			r1 := math.Float64bits(math.Float64frombits(x1) / math.Float64frombits(y1))
			if max(r0>>52&0x7ff-2, r1>>52&0x7ff-2, (f[MXCSR]&mxFastMaskDE^mxFastVal)<<16) >= 0x7fd &&
				!(fastDiv64(f[MXCSR], x0, y0, r0) && fastDiv64(f[MXCSR], x1, y1, r1)) {
				if !it.slow(f, &blk.insts[in.idx], int(in.idx)) {
					return exitTrap, 0, -1, blk
				}
				break
			}
			f[in.d], f[uint16(in.d+1)] = r0, r1
		case iVAddF32, iVSubF32, iVMulF32, iVDivF32:
			x0, x1, y0, y1 := f[in.a], f[uint16(in.a+1)], f[in.b], f[uint16(in.b+1)]
			op := "+-*/"[in.op-iVAddF32]
			r0, ok0 := f32x2(x0, y0, op)
			r1, ok1 := f32x2(x1, y1, op)
			if f[MXCSR]&mxFastMask != mxFastVal || !ok0 || !ok1 {
				if !it.slow(f, &blk.insts[in.idx], int(in.idx)) {
					return exitTrap, 0, -1, blk
				}
				break
			}
			f[in.d], f[uint16(in.d+1)] = r0, r1
		case iVUnpackL64:
			lo, hi := f[in.a], f[in.b]
			f[in.d], f[uint16(in.d+1)] = lo, hi
		case iVUnpackH64:
			lo, hi := f[uint16(in.a+1)], f[uint16(in.b+1)]
			f[in.d], f[uint16(in.d+1)] = lo, hi
		case iLd64Z:
			addr := f[in.a] + in.imm
			pn := addr / PageSize
			if e := &mem.rtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) && addr&pageMask <= PageSize-8 {
				f[in.d] = binary.LittleEndian.Uint64(e.p.data[addr&pageMask:])
			} else if v, err := mem.Load(addr, 8); err == nil {
				f[in.d] = v
			} else {
				it.memTrap(int(in.idx), err)
				return exitTrap, 0, -1, blk
			}
			f[uint16(in.d+1)] = 0
			if in.mod == 1 {
				f[in.b], f[uint16(in.b+1)] = f[in.d], 0
			}
		case iJoinZ:
			v := f[in.a]
			f[in.d], f[uint16(in.d+1)] = v, 0
			if in.mod == 1 {
				f[in.b], f[uint16(in.b+1)] = v, 0
			}
		case iLd128, iLdX128:
			addr := f[in.a] + in.imm
			if in.op == iLdX128 {
				addr += f[in.b] << (in.mod & modShift)
			}
			if in.mod&modAligned != 0 && addr&15 != 0 {
				it.misalignedTrap(int(in.idx), addr, 16)
				return exitTrap, 0, -1, blk
			}
			pn := addr / PageSize
			if e := &mem.rtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) && addr&pageMask <= PageSize-16 {
				p := e.p.data[addr&pageMask:]
				f[in.d], f[uint16(in.d+1)] = binary.LittleEndian.Uint64(p), binary.LittleEndian.Uint64(p[8:])
			} else if err := it.loadWide(f, B128, in.d, addr); err != nil {
				it.memTrap(int(in.idx), err)
				return exitTrap, 0, -1, blk
			}
		case iSt128, iStX128:
			addr := f[in.a] + in.imm
			v := in.b
			if in.op == iStX128 {
				addr += f[in.b] << (in.mod & modShift)
				v = in.c
			}
			if in.mod&modAligned != 0 && addr&15 != 0 {
				it.misalignedTrap(int(in.idx), addr, 16)
				return exitTrap, 0, -1, blk
			}
			pn := addr / PageSize
			if e := &mem.wtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) && addr&pageMask <= PageSize-16 {
				p := e.p.data[addr&pageMask:]
				binary.LittleEndian.PutUint64(p, f[v])
				binary.LittleEndian.PutUint64(p[8:], f[uint16(v+1)])
			} else if err := it.storeWide(f, B128, v, addr); err != nil {
				it.memTrap(int(in.idx), err)
				return exitTrap, 0, -1, blk
			} else if it.smc {
				return it.smcExit(int(in.idx), blk)
			}
		case iAddF64M:
			addr := f[in.b] + in.imm
			pn := addr / PageSize
			var y uint64
			if e := &mem.rtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) && addr&pageMask <= PageSize-8 {
				y = binary.LittleEndian.Uint64(e.p.data[addr&pageMask:])
			} else if v, err := mem.Load(addr, 8); err == nil {
				y = v
			} else {
				it.memTrap(int(in.idx), err)
				return exitTrap, 0, -1, blk
			}
			x := f[in.a]
			r := math.Float64bits(float64(math.Float64frombits(x) + math.Float64frombits(y)))
			if max(r>>52&0x7ff-1, (f[MXCSR]&mxFastMaskDE^mxFastVal)<<16) >= 0x7fe &&
				!fastSum64(f[MXCSR], x, y, r, false) {
				f[in.c] = y
				if !it.sseSlowInst(f, blk, int(in.idx)+1) {
					return exitTrap, 0, -1, blk
				}
				break
			}
			f[in.d] = r
		case iSubF64M:
			addr := f[in.b] + in.imm
			pn := addr / PageSize
			var y uint64
			if e := &mem.rtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) && addr&pageMask <= PageSize-8 {
				y = binary.LittleEndian.Uint64(e.p.data[addr&pageMask:])
			} else if v, err := mem.Load(addr, 8); err == nil {
				y = v
			} else {
				it.memTrap(int(in.idx), err)
				return exitTrap, 0, -1, blk
			}
			x := f[in.a]
			r := math.Float64bits(float64(math.Float64frombits(x) - math.Float64frombits(y)))
			if max(r>>52&0x7ff-1, (f[MXCSR]&mxFastMaskDE^mxFastVal)<<16) >= 0x7fe &&
				!fastSum64(f[MXCSR], x, y, r, true) {
				f[in.c] = y
				if !it.sseSlowInst(f, blk, int(in.idx)+1) {
					return exitTrap, 0, -1, blk
				}
				break
			}
			f[in.d] = r
		case iMulF64M:
			addr := f[in.b] + in.imm
			pn := addr / PageSize
			var y uint64
			if e := &mem.rtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) && addr&pageMask <= PageSize-8 {
				y = binary.LittleEndian.Uint64(e.p.data[addr&pageMask:])
			} else if v, err := mem.Load(addr, 8); err == nil {
				y = v
			} else {
				it.memTrap(int(in.idx), err)
				return exitTrap, 0, -1, blk
			}
			x := f[in.a]
			r := math.Float64bits(float64(math.Float64frombits(x) * math.Float64frombits(y)))
			if max(r>>52&0x7ff-2, (f[MXCSR]&mxFastMaskDE^mxFastVal)<<16) >= 0x7fd &&
				!fastMul64(f[MXCSR], x, y, r) {
				f[in.c] = y
				if !it.sseSlowInst(f, blk, int(in.idx)+1) {
					return exitTrap, 0, -1, blk
				}
				break
			}
			f[in.d] = r
		case iDivF64M:
			addr := f[in.b] + in.imm
			pn := addr / PageSize
			var y uint64
			if e := &mem.rtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) && addr&pageMask <= PageSize-8 {
				y = binary.LittleEndian.Uint64(e.p.data[addr&pageMask:])
			} else if v, err := mem.Load(addr, 8); err == nil {
				y = v
			} else {
				it.memTrap(int(in.idx), err)
				return exitTrap, 0, -1, blk
			}
			x := f[in.a]
			r := math.Float64bits(float64(math.Float64frombits(x) / math.Float64frombits(y)))
			if max(r>>52&0x7ff-2, (f[MXCSR]&mxFastMaskDE^mxFastVal)<<16) >= 0x7fd &&
				!fastDiv64(f[MXCSR], x, y, r) {
				f[in.c] = y
				if !it.sseSlowInst(f, blk, int(in.idx)+1) {
					return exitTrap, 0, -1, blk
				}
				break
			}
			f[in.d] = r
		case iMulHiU64:
			y := f[in.b]
			if in.mod == 1 {
				y = in.imm
			}
			f[in.d], _ = bits.Mul64(f[in.a], y)
		case iMulHiS64:
			x, y := f[in.a], f[in.b]
			if in.mod == 1 {
				y = in.imm
			}
			hi, _ := bits.Mul64(x, y)
			// Signed high half: subtract the other operand for each negative one.
			hi -= x & uint64(int64(y)>>63)
			hi -= y & uint64(int64(x)>>63)
			f[in.d] = hi
		case iChkAlign:
			if addr := f[in.a] + in.imm; addr&(uint64(in.sz)-1) != 0 {
				it.misalignedTrap(int(in.idx), addr, int(in.sz))
				return exitTrap, 0, -1, blk
			}
		case iSlow:
			if !it.slow(f, &blk.insts[in.idx], int(in.idx)) {
				return exitTrap, 0, -1, blk
			} else if it.smc {
				return it.smcExit(int(in.idx), blk)
			}
		case iJmp:
			next, succ = blk.target[0], 0
			goto done
		case iBranch:
			if f[in.a] != 0 {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iJmpR:
			next, succ = f[in.a], -1
			if it.opts.HotAfter != 0 {
				if next == blk.jumped {
					blk.jumpedRuns++
				} else {
					blk.jumped, blk.jumpedRuns = next, 1
				}
			}
			goto done
		case iSyscall:
			return exitSyscall, blk.target[0], -1, blk
		case iTrap:
			addr := uint64(0)
			if TrapKind(in.mod) == TrapSegv {
				addr = in.imm
			}
			it.setTrap(int(in.idx), TrapKind(in.mod), addr, &GuestTrapError{Kind: TrapKind(in.mod), Detail: in.imm})
			return exitTrap, 0, -1, blk
		case iCmpEq64:
			f[in.d] = b2u(f[in.a] == f[in.b])
		case iCmpEq64I:
			f[in.d] = b2u(f[in.a] == in.imm)
		case iCmpEq32:
			f[in.d] = b2u(uint32(f[in.a]) == uint32(f[in.b]))
		case iCmpEq32I:
			f[in.d] = b2u(uint32(f[in.a]) == uint32(in.imm))
		case iCmpNe64:
			f[in.d] = b2u(f[in.a] != f[in.b])
		case iCmpNe64I:
			f[in.d] = b2u(f[in.a] != in.imm)
		case iCmpNe32:
			f[in.d] = b2u(uint32(f[in.a]) != uint32(f[in.b]))
		case iCmpNe32I:
			f[in.d] = b2u(uint32(f[in.a]) != uint32(in.imm))
		case iCmpLtS64:
			f[in.d] = b2u(int64(f[in.a]) < int64(f[in.b]))
		case iCmpLtS64I:
			f[in.d] = b2u(int64(f[in.a]) < int64(in.imm))
		case iCmpLtS32:
			f[in.d] = b2u(int32(uint32(f[in.a])) < int32(uint32(f[in.b])))
		case iCmpLtS32I:
			f[in.d] = b2u(int32(uint32(f[in.a])) < int32(uint32(in.imm)))
		case iCmpLeS64:
			f[in.d] = b2u(int64(f[in.a]) <= int64(f[in.b]))
		case iCmpLeS64I:
			f[in.d] = b2u(int64(f[in.a]) <= int64(in.imm))
		case iCmpLeS32:
			f[in.d] = b2u(int32(uint32(f[in.a])) <= int32(uint32(f[in.b])))
		case iCmpLeS32I:
			f[in.d] = b2u(int32(uint32(f[in.a])) <= int32(uint32(in.imm)))
		case iCmpGtS64:
			f[in.d] = b2u(int64(f[in.a]) > int64(f[in.b]))
		case iCmpGtS64I:
			f[in.d] = b2u(int64(f[in.a]) > int64(in.imm))
		case iCmpGtS32:
			f[in.d] = b2u(int32(uint32(f[in.a])) > int32(uint32(f[in.b])))
		case iCmpGtS32I:
			f[in.d] = b2u(int32(uint32(f[in.a])) > int32(uint32(in.imm)))
		case iCmpGeS64:
			f[in.d] = b2u(int64(f[in.a]) >= int64(f[in.b]))
		case iCmpGeS64I:
			f[in.d] = b2u(int64(f[in.a]) >= int64(in.imm))
		case iCmpGeS32:
			f[in.d] = b2u(int32(uint32(f[in.a])) >= int32(uint32(f[in.b])))
		case iCmpGeS32I:
			f[in.d] = b2u(int32(uint32(f[in.a])) >= int32(uint32(in.imm)))
		case iCmpLtU64:
			f[in.d] = b2u(f[in.a] < f[in.b])
		case iCmpLtU64I:
			f[in.d] = b2u(f[in.a] < in.imm)
		case iCmpLtU32:
			f[in.d] = b2u(uint32(f[in.a]) < uint32(f[in.b]))
		case iCmpLtU32I:
			f[in.d] = b2u(uint32(f[in.a]) < uint32(in.imm))
		case iCmpLeU64:
			f[in.d] = b2u(f[in.a] <= f[in.b])
		case iCmpLeU64I:
			f[in.d] = b2u(f[in.a] <= in.imm)
		case iCmpLeU32:
			f[in.d] = b2u(uint32(f[in.a]) <= uint32(f[in.b]))
		case iCmpLeU32I:
			f[in.d] = b2u(uint32(f[in.a]) <= uint32(in.imm))
		case iCmpGtU64:
			f[in.d] = b2u(f[in.a] > f[in.b])
		case iCmpGtU64I:
			f[in.d] = b2u(f[in.a] > in.imm)
		case iCmpGtU32:
			f[in.d] = b2u(uint32(f[in.a]) > uint32(f[in.b]))
		case iCmpGtU32I:
			f[in.d] = b2u(uint32(f[in.a]) > uint32(in.imm))
		case iCmpGeU64:
			f[in.d] = b2u(f[in.a] >= f[in.b])
		case iCmpGeU64I:
			f[in.d] = b2u(f[in.a] >= in.imm)
		case iCmpGeU32:
			f[in.d] = b2u(uint32(f[in.a]) >= uint32(f[in.b]))
		case iCmpGeU32I:
			f[in.d] = b2u(uint32(f[in.a]) >= uint32(in.imm))
		case iBrEq64:
			if f[in.a] == f[in.b] {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrEq64I:
			if f[in.a] == in.imm {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrEq32:
			if uint32(f[in.a]) == uint32(f[in.b]) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrEq32I:
			if uint32(f[in.a]) == uint32(in.imm) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrNe64:
			if f[in.a] != f[in.b] {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrNe64I:
			if f[in.a] != in.imm {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrNe32:
			if uint32(f[in.a]) != uint32(f[in.b]) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrNe32I:
			if uint32(f[in.a]) != uint32(in.imm) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrLtS64:
			if int64(f[in.a]) < int64(f[in.b]) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrLtS64I:
			if int64(f[in.a]) < int64(in.imm) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrLtS32:
			if int32(uint32(f[in.a])) < int32(uint32(f[in.b])) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrLtS32I:
			if int32(uint32(f[in.a])) < int32(uint32(in.imm)) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrLeS64:
			if int64(f[in.a]) <= int64(f[in.b]) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrLeS64I:
			if int64(f[in.a]) <= int64(in.imm) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrLeS32:
			if int32(uint32(f[in.a])) <= int32(uint32(f[in.b])) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrLeS32I:
			if int32(uint32(f[in.a])) <= int32(uint32(in.imm)) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrGtS64:
			if int64(f[in.a]) > int64(f[in.b]) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrGtS64I:
			if int64(f[in.a]) > int64(in.imm) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrGtS32:
			if int32(uint32(f[in.a])) > int32(uint32(f[in.b])) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrGtS32I:
			if int32(uint32(f[in.a])) > int32(uint32(in.imm)) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrGeS64:
			if int64(f[in.a]) >= int64(f[in.b]) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrGeS64I:
			if int64(f[in.a]) >= int64(in.imm) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrGeS32:
			if int32(uint32(f[in.a])) >= int32(uint32(f[in.b])) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrGeS32I:
			if int32(uint32(f[in.a])) >= int32(uint32(in.imm)) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrLtU64:
			if f[in.a] < f[in.b] {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrLtU64I:
			if f[in.a] < in.imm {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrLtU32:
			if uint32(f[in.a]) < uint32(f[in.b]) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrLtU32I:
			if uint32(f[in.a]) < uint32(in.imm) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrLeU64:
			if f[in.a] <= f[in.b] {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrLeU64I:
			if f[in.a] <= in.imm {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrLeU32:
			if uint32(f[in.a]) <= uint32(f[in.b]) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrLeU32I:
			if uint32(f[in.a]) <= uint32(in.imm) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrGtU64:
			if f[in.a] > f[in.b] {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrGtU64I:
			if f[in.a] > in.imm {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrGtU32:
			if uint32(f[in.a]) > uint32(f[in.b]) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrGtU32I:
			if uint32(f[in.a]) > uint32(in.imm) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrGeU64:
			if f[in.a] >= f[in.b] {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrGeU64I:
			if f[in.a] >= in.imm {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrGeU32:
			if uint32(f[in.a]) >= uint32(f[in.b]) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		case iBrGeU32I:
			if uint32(f[in.a]) >= uint32(in.imm) {
				next, succ = blk.target[0], 0
				goto done
			}
			next, succ = blk.target[1], 1
			goto done
		default:
			it.curIdx = int(in.idx)
			panic("unknown compiled opcode")
		}
	}
	it.curIdx = len(blk.insts) - 1
	panic("compiled block does not end with a control transfer")
done:
	// Follow a cached successor without going back to Run, when nothing
	// stops before it (a breakpoint, the budget, a block got hot).
	if succ >= 0 {
		if it.opts.HotAfter != 0 {
			blk.edges[succ]++
		}
		if n := blk.succ[succ]; n != nil && !n.dead && !n.bp && (budget == 0 || *executed < budget) &&
			(it.opts.HotAfter == 0 || n.runs < it.opts.HotAfter) {
			if it.opts.HotAfter != 0 {
				n.runs++
			}
			*executed += n.nguest
			it.stats.GuestInsns += n.nguest
			it.stats.BlocksExecuted++
			it.stats.ChainHits++
			it.cur, it.curIdx = n, -1
			blk = n
			goto again
		}
	}
	return exitNext, next, succ, blk
}

// smcExit ends exec after instruction idx of blk, whose store dropped
// blk (self-modifying code).
func (it *Interpreter) smcExit(idx int, blk *cblock) (exit int, next uint64, succ int, last *cblock) {
	it.smc = false
	it.smcIdx = idx
	return exitSMC, 0, -1, blk
}

// ord64 reports whether .f64 x is a zero or a normal number.
func ord64(x uint64) bool { u := x << 1; return u-1<<53 < 0x7fe<<53 || u == 0 }

// prod64 reports whether r, the host's .f64 product or quotient of the
// zero or normal x and y, needs nothing but PE from MXCSR: it lies clear of
// the smallest binade (where it may be tiny before the host rounds it) and
// of the infinities, or it is a zero that comes from a zero operand.
func prod64(r, x, y uint64) bool {
	u := r << 1
	return u-2<<53 < 0x7fd<<53 || u == 0 && (x<<1 == 0 || y<<1 == 0)
}

// ord32 is ord64 for .f32.
func ord32(x uint64) bool { u := uint32(x) << 1; return u-1<<24 < 0xfe<<24 || u == 0 }

// prod32 is prod64 for .f32.
func prod32(r, x, y uint64) bool {
	u := uint32(r) << 1
	return u-2<<24 < 0xfd<<24 || u == 0 && (uint32(x)<<1 == 0 || uint32(y)<<1 == 0)
}

// The fast paths of the compiled float ops first check, with one branch,
// that MXCSR has its default control bits (DAZ and FTZ clear) and PE set
// (mxFastMaskDE) and that the result is a normal number, clear of the
// smallest binade for products and quotients (where it may be tiny before
// the host rounds it): then the host's SSE result, rounded to nearest, is
// the guest's and no flag but PE (already set) or DE can change. Failing
// that, the precise test of every operand (ord64, prod64) lets zeros
// through; anything else runs sseArith. RATIONALE: the first test does not
// look at the operands, so a denormal operand with a normal result leaves
// MXCSR.DE unset (the value is right: DAZ is clear); checking both
// operands there cost a third of a float op, and DE, unlike the C99
// exceptions, is not something fetestexcept reports.

// sseSlowOp runs a compiled float ADD, true, MUL or DIV the exact
// way (sseArith) when the fast path may not, and writes its result. It
// returns false when an unmasked exception stops the guest.
func (it *Interpreter) sseSlowOp(f *frame, blk *cblock, in *cinst) bool {
	src := &blk.insts[in.idx]
	r, fl := sseArith(src.Op, src.Type, f[in.a], f[in.b], f[MXCSR])
	if fl != 0 && !it.sseFlags(f, src, int(in.idx), fl) {
		return false
	}
	f[in.d] = r
	return true
}

// f32x2 computes op on the two .f32 lanes of x and y with the host's SSE
// and reports whether the fast path holds for both (see ord64).
func f32x2(x, y uint64, op byte) (uint64, bool) {
	ok := true
	var r uint64
	for h := uint(0); h < 64; h += 32 {
		a, b := x>>h, y>>h
		p, q := math.Float32frombits(uint32(a)), math.Float32frombits(uint32(b))
		var v float32
		switch op {
		case '+':
			v = float32(p + q)
		case '-':
			v = float32(p - q)
		case '*':
			v = float32(p * q)
		default:
			v = float32(p / q)
		}
		c := uint64(math.Float32bits(v))
		r |= c << h
		if op == '+' || op == '-' {
			ok = ok && ord32(a) && ord32(b) && ord32(c)
		} else {
			ok = ok && ord32(a) && ord32(b) && prod32(c, a, b)
		}
	}
	return r, ok
}

// sseSlowInst runs the float ADD, true, MUL or DIV at blk.insts[idx] the
// exact way (sseArith) and writes its result. It returns false when an
// unmasked exception stops the guest.
func (it *Interpreter) sseSlowInst(f *frame, blk *cblock, idx int) bool {
	src := &blk.insts[idx]
	r, fl := sseArith(src.Op, src.Type, f[uint16(src.Src[0])], f[uint16(src.Src[1])], f[MXCSR])
	if fl != 0 && !it.sseFlags(f, src, idx, fl) {
		return false
	}
	f[uint16(src.Dst)] = r
	return true
}

// fastSum64 reports whether r, the host's .f64 sum (or difference, for
// sub) of x and y, is the guest's result with nothing for the slow path to
// do: MXCSR has its default control bits, operands and result are zero or
// normal, and either PE is already set or the result is exact. The
// compiled add and sub cases call it only when their cheap inline check
// could not decide.
func fastSum64(mx, x, y, r uint64, sub bool) bool {
	return mx&(mxFastMask&^mxPE) == mxFastVal&^mxPE && ord64(x) && ord64(y) && ord64(r) && (mx&mxPE != 0 || exactSum64(x, y, r, sub))
}

// fastMul64 is fastSum64 for the .f64 product r of x and y.
func fastMul64(mx, x, y, r uint64) bool {
	return mx&(mxFastMask&^mxPE) == mxFastVal&^mxPE && ord64(x) && ord64(y) && prod64(r, x, y) && (mx&mxPE != 0 || exactProd64(x, y, r))
}

// fastDiv64 is fastSum64 for the .f64 quotient r of x and y, which is
// trusted only once PE is set (an exact quotient is not checked for).
func fastDiv64(mx, x, y, r uint64) bool {
	return mx&mxFastMask == mxFastVal && ord64(x) && ord64(y) && prod64(r, x, y)
}

// exactSum64 reports whether r, the host's sum (or difference, for sub) of
// the .f64 values x and y, is exact (TwoSum; exact for any finite r).
func exactSum64(x, y, r uint64, sub bool) bool {
	a, b, z := math.Float64frombits(x), math.Float64frombits(y), math.Float64frombits(r)
	if sub {
		b = -b
	}
	bb := z - a
	return (a-(z-bb))+(b-bb) == 0
}

// exactProd64 reports whether r, the host's product of the .f64 values x
// and y, is exact; false (the exact path decides) when r is so small that
// the error term could underflow.
func exactProd64(x, y, r uint64) bool {
	if r<<1 == 0 {
		return true
	}
	if r>>52&0x7ff < 124 { // |r| < 2^-900
		return false
	}
	return math.FMA(math.Float64frombits(x), math.Float64frombits(y), -math.Float64frombits(r)) == 0
}
