package gvinst

// Op identifies a GVInst operation. Every Op is defined exactly once, by its
// entry in opTable below; the comment beside each entry gives its semantics.
type Op uint16

// OperandKind says what one operand of an op is, in text order.
type OperandKind uint8

// The operand kinds. Sources fill Inst.Src in order; the one immediate of an
// instruction (if any) is Inst.Imm; code addresses fill Inst.Target in order.
const (
	OpdDst    OperandKind = iota + 1 // a destination register (Inst.Dst)
	OpdSrc                           // a source register (next Inst.Src)
	OpdSrcImm                        // a source register, or an immediate of the op's type when Inst.HasImm
	OpdMem                           // base register (next Inst.Src) plus displacement (Inst.Imm): v3(-8)
	OpdImm                           // a plain integer immediate (Inst.Imm): a lane, a stack index
	OpdTarget                        // a guest code address (next Inst.Target)
	OpdSite                          // an instrumentation site number (Inst.Target[0])
)

// ModKind says which modifier an op takes, printed after its name
// (CMP.lt.s32, CVT.rz.s32.f64, GETCC.le, FLAGS.sub.u64, TRAP.segv).
type ModKind uint8

// The modifier kinds.
const (
	ModNone    ModKind = iota
	ModCmp             // a Cmp condition
	ModX86Cond         // an x86 condition code (Cond)
	ModRound           // a Rounding mode
	ModFlags           // a FlagKind
	ModTrap            // a TrapKind
)

// TypeClass is the set of types an op accepts as its main type.
type TypeClass uint8

// The type classes.
const (
	TNone  TypeClass = iota // no type
	TInt                    // b8…b64, u8…u64, s8…s64
	TFloat                  // f32, f64, f80
	TNum                    // TInt or TFloat
	TAny                    // any type, b128 included
	TVec                    // a lane type of a packed op: integer ≤ 64 bits, f32, f64
	TInt64                  // exactly one 64-bit integer type (u64, s64 or b64)
	TB128                   // exactly b128: a whole-register bitwise op
)

// Effect is a bit set of what an op does besides writing its destination.
type Effect uint16

// The effects.
const (
	EffLoad       Effect = 1 << iota // reads guest memory
	EffStore                         // writes guest memory
	EffTrap                          // may stop the guest with a fault
	EffStateRead                     // reads guest state not named by its operands
	EffStateWrite                    // writes guest state not named by its operands
	EffEnd                           // ends a VBlock: control goes elsewhere
	EffHost                          // needs the host (system call, cpuid, timer)
)

// OpInfo is the definition of one op: everything the printer, parser,
// verifier, interpreter and ptxgen need to know about it.
type OpInfo struct {
	Name     string
	Operands []OperandKind
	Mod      ModKind
	Types    TypeClass
	SrcType  TypeClass // non-zero for ops that also name a source type (CVT.f64.s32)
	Effects  Effect
	GPU      bool // ptxgen can lower it (for the op's scalar, non-f80 types)
}

var (
	dA     = []OperandKind{OpdDst, OpdSrc}
	dAB    = []OperandKind{OpdDst, OpdSrc, OpdSrcImm}
	dABr   = []OperandKind{OpdDst, OpdSrc, OpdSrc}
	dABC   = []OperandKind{OpdDst, OpdSrc, OpdSrc, OpdSrc}
	dAI    = []OperandKind{OpdDst, OpdSrc, OpdImm}
	dABI   = []OperandKind{OpdDst, OpdSrc, OpdSrc, OpdImm}
	dOnly  = []OperandKind{OpdDst}
	aOnly  = []OperandKind{OpdSrc}
	memOnl = []OperandKind{OpdMem}
	none   = []OperandKind{}
)

// The ops.
const (
	OpInvalid Op = iota

	// State map.
	OpGet // GET.t d, g: d = guest slot g (a pair for .b128/.f80; the low 64 bits of xN for narrower types)
	OpPut // PUT.t g, a: guest slot g = a (writing a narrower type to xN sets its low 64 bits only)

	// Data move.
	OpMov  // MOV.t d, a: d = a (one or two slots, unchanged)
	OpLi   // LI.t d, imm: d = imm (raw bits, zero-extended to the slot)
	OpJoin // JOIN.b128 d, lo, hi: d = the 128-bit value hi:lo

	// Memory.
	OpLd // LD.t d, a(disp): d = memory[a+disp], t.Size() bytes, zero-extended
	OpSt // ST.t a(disp), b: memory[a+disp] = low t.Size() bytes of b
	// CHKALIGN.t a(disp): stop the guest with a segv trap, whose error is a
	// *MisalignedError, unless a+disp is a multiple of t.Size(); it reads
	// and writes nothing else. The lifter puts it before an access that x86
	// requires to be aligned (movaps, addps m128, fxsave: #GP otherwise),
	// which keeps its plain a(disp) operand.
	OpChkAlign

	// Integer and float computation. Results of a .t op are t's bits,
	// zero-extended to the slot; sources are read as their low t bits
	// (sign-extended for .sN where it matters). Every .f32/.f64 op that
	// rounds or inspects its operands (ADD SUB MUL DIV SQRT MIN MAX CMP CVT
	// ROUND and the packed V forms) runs as SSE under the guest's MXCSR:
	// rounding per RC, DAZ and FTZ honoured, the exception flags IE DE ZE
	// OE UE PE set, an unmasked exception stops the guest (see sse.go).
	OpAdd   // ADD.t d, a, b: d = a + b (integers wrap; floats round per MXCSR)
	OpSub   // SUB.t d, a, b: d = a - b
	OpMul   // MUL.t d, a, b: d = low half of a * b; floats: the product rounded per MXCSR
	OpMulHi // MULHI.t d, a, b: high t-width half of the full 2t-bit product (signed for .sN)
	OpDiv   // DIV.t d, a, b: integers truncate toward zero and trap (#DE) on b == 0 or signed overflow; floats round per MXCSR
	OpRem   // REM.t d, a, b: integer remainder with the sign of a; traps as DIV
	OpDivW  // DIVW.t d, hi, lo, b: quotient of the 2t-bit dividend hi:lo by b; traps (#DE) when b == 0 or the quotient does not fit t
	OpRemW  // REMW.t d, hi, lo, b: remainder of the same division
	OpAnd   // AND.t d, a, b
	OpOr    // OR.t d, a, b
	OpXor   // XOR.t d, a, b
	OpShl   // SHL.t d, a, b: a << b; b ≥ t.Bits() gives 0
	OpShr   // SHR.t d, a, b: logical a >> b; b ≥ t.Bits() gives 0
	OpSar   // SAR.t d, a, b: arithmetic a >> b; b ≥ t.Bits() gives the sign in every bit
	OpRol   // ROL.t d, a, b: rotate left by b mod t.Bits()
	OpRor   // ROR.t d, a, b: rotate right by b mod t.Bits()
	OpMin   // MIN.t d, a, b: integers by signedness; floats as SSE MINSS: b if either is NaN (raising IE) or both are zero, else the smaller (DAZ applies)
	OpMax   // MAX.t d, a, b: as MIN, the larger
	OpNot   // NOT.t d, a: bitwise complement
	OpNeg   // NEG.t d, a: two's complement negation; floats flip the sign bit
	OpAbs   // ABS.t d, a: integers: absolute value (wrapping); floats clear the sign bit
	OpSqrt  // SQRT.t d, a: correctly rounded square root (.f32/.f64 per MXCSR, .f80 per fpcw)
	OpClz   // CLZ.t d, a: count of leading zero bits (t.Bits() for 0)
	OpCtz   // CTZ.t d, a: count of trailing zero bits (t.Bits() for 0)
	OpPopc  // POPC.t d, a: count of set bits
	OpBswap // BSWAP.t d, a: byte order reversed

	// Conversions.
	OpCvt   // CVT.r.t.s d, a: convert a of type s to type t. Integer to integer: truncate or extend by s's signedness. Float to integer: round by r; NaN or out of range gives the x86 "integer indefinite" (only the sign bit set) and raises IE. Others round by r. SSE flags and DAZ/FTZ as above (a float-to-integer conversion raises no DE).
	OpRound // ROUND.r.t d, a: round float a to an integral value of the same type, by r (DAZ applies; IE on a signaling NaN; never PE, as roundss with immediate bit 3 set)

	// Comparison and selection.
	OpCmp    // CMP.c.t d, a, b: d = 1 if a c b else 0 (integer order by t's signedness; float conditions as PTX; lt le gt ge gtu geu raise IE on any NaN, as SSE's signaling predicates LT LE NLT NLE, the others on a signaling NaN only)
	OpSelect // SELECT.t d, c, a, b: d = a if c != 0 else b

	// x86 flags, computed lazily.
	OpFlags    // FLAGS.k.t a, b, r, c: record flag-setting operation k on type t with operands a, b, result r and carry in (or previous CF) c; shifts and rotates by a count b of 0 leave the flags unchanged
	OpGetCC    // GETCC.c d: d = 1 if x86 condition c holds on the current flags, else 0
	OpGetFlags // GETFLAGS d: d = the full RFLAGS value
	OpSetFlags // SETFLAGS a: RFLAGS = a (status flags included); the lazy state is cleared

	// Control transfer: each ends its VBlock.
	OpJmp     // JMP target
	OpJmpR    // JMPR a: jump to the address in a
	OpBranch  // BRANCH c, taken, fallthrough: to taken if c != 0
	OpCall    // CALL target, return: a direct call (the return address is already pushed)
	OpCallR   // CALLR a, return: an indirect call
	OpRet     // RET a: return to the address in a (already popped)
	OpSyscall // SYSCALL next: the host performs the system call in s0 with the guest's arguments, then control goes to next
	OpTrap    // TRAP.k imm: stop the guest with fault k (imm: a detail, such as the faulting address)

	// Host services.
	OpCpuid // CPUID: s0..s3 (eax, ecx, edx, ebx in encoding order) = cpuid(eax=s0, ecx=s1)
	OpRdtsc // RDTSC d: d = a monotonically increasing time-stamp counter

	// Instrumentation (inserted by the profile collector, never lifted).
	OpProbe // PROBE.t a(disp), site: report an access of t.Size() bytes at a+disp at instrumentation site number site to the engine's probe hook
	OpCount // COUNT site: count down site's counter (InterpOptions.Counts); where it is zero, or the site has none, report to the probe hook as PROBE.u8 of address 0 does

	// String instructions with a rep prefix, each one op for the whole loop.
	// They use s7 (rdi), s6 (rsi), s1 (rcx), s0 (rax) and RFLAGS.DF as x86 does.
	OpRepMovs // REPMOVS.t: copy s1 elements from [s6] to [s7]
	OpRepStos // REPSTOS.t: store s0's low t bits to s1 elements at [s7]
	OpRepCmps // REPCMPS.c.t: compare [s6] with [s7] while s1 != 0 and the condition c (e for repe, ne for repne) holds; sets the flags
	OpRepScas // REPSCAS.c.t: compare s0 with [s7] likewise

	// Processor state save and restore.
	OpFxsave  // FXSAVE a(disp): store the x87, MXCSR and SSE state (512 bytes)
	OpFxrstor // FXRSTOR a(disp): load it
	OpFnstenv // FNSTENV a(disp): store the 28-byte x87 environment
	OpFldenv  // FLDENV a(disp): load it

	// The x87 register stack. Values are .f80; arithmetic uses ADD/SUB/MUL/
	// DIV/SQRT/CVT/ROUND/CMP with .f80, rounding per fpcw.
	OpFGetST  // FGETST.f80 d, i: d = ST(i)
	OpFPutST  // FPUTST.f80 i, a: ST(i) = a, tagged valid
	OpFPush   // FPUSH: TOP = TOP-1 (the new ST(0) is written next with FPUTST)
	OpFPop    // FPOP: tag ST(0) empty, TOP = TOP+1
	OpFPrem   // FPREM.f80 d, a, b: partial remainder a rem b (truncating quotient); sets C0 C1 C2 C3 in fpsw
	OpFPrem1  // FPREM1.f80 d, a, b: IEEE partial remainder; sets C0 C1 C2 C3
	OpFScale  // FSCALE.f80 d, a, b: a * 2^trunc(b)
	OpF2xm1   // F2XM1.f80 d, a: 2^a - 1
	OpFYl2x   // FYL2X.f80 d, a, b: b * log2(a)
	OpFYl2xp1 // FYL2XP1.f80 d, a, b: b * log2(a + 1)
	OpFPatan  // FPATAN.f80 d, a, b: arctan(b / a) in the quadrant of (a, b)
	OpFSin    // FSIN.f80 d, a: sin(a); C2 set (d = a) when |a| ≥ 2^63
	OpFCos    // FCOS.f80 d, a: cos(a); C2 as FSIN
	OpFPtan   // FPTAN.f80 d, a: tan(a); C2 as FSIN
	OpFXtSig  // FXTSIG.f80 d, a: the significand of a, as FXTRACT leaves in ST(0)
	OpFXtExp  // FXTEXP.f80 d, a: the unbiased exponent of a, as FXTRACT leaves in ST(1)
	OpFCmp    // FCMP.f80 d, a, b, q: compare a with b as FCOM (q = 0: any NaN raises IE) or FUCOM (q = 1: only a signaling NaN does); d (.u64) = the C3 C2 C0 bits FCOM sets, as bits 14 10 8 of a status word (greater 0, less C0, equal C3, unordered all three); raises IE/DE in fpsw, changes no condition code
	OpFXam    // FXAM d, i: d (.u64) = FXAM's C3 C2 C1 C0 for ST(i), as bits 14 10 9 8 of a status word, "empty" included when ST(i) is tagged empty; no exception
	OpFConst  // FCONST.f80 d, k: d = the x87 constant k, rounded per fpcw's rounding control: 0 = 1.0 (FLD1), 1 = log2(10) (FLDL2T), 2 = log2(e) (FLDL2E), 3 = pi (FLDPI), 4 = log10(2) (FLDLG2), 5 = ln(2) (FLDLN2), 6 = +0.0 (FLDZ), as the low 3 bits of their opcodes D9 E8…EE
	OpFClass  // FCLASS.f80 d, a: FXAM's C3 C2 C1 C0 for a, as bits 14 10 9 8 of a status word

	// Packed SSE operations on .b128 values; the type is the lane type.
	OpVAdd     // VADD.t d, a, b: lane-wise a + b (floats rounded per MXCSR, flags of all lanes; integers wrap)
	OpVSub     // VSUB.t d, a, b
	OpVMul     // VMUL.t d, a, b: floats; integers keep the low half (pmullw, pmulld)
	OpVDiv     // VDIV.t d, a, b: floats
	OpVMin     // VMIN.t d, a, b: lane-wise MIN
	OpVMax     // VMAX.t d, a, b: lane-wise MAX
	OpVSqrt    // VSQRT.t d, a: floats
	OpVAnd     // VAND.b128 d, a, b
	OpVOr      // VOR.b128 d, a, b
	OpVXor     // VXOR.b128 d, a, b
	OpVAndN    // VANDN.b128 d, a, b: (NOT a) AND b
	OpVAddSat  // VADDSAT.t d, a, b: saturating add (s8 s16 u8 u16)
	OpVSubSat  // VSUBSAT.t d, a, b: saturating subtract
	OpVAvg     // VAVG.t d, a, b: (a + b + 1) >> 1 (u8 u16)
	OpVMulHi   // VMULHI.t d, a, b: high half of the lane products (s16 u16)
	OpVMulW    // VMULW.t d, a, b: the even t lanes (u32/s32) multiplied into 64-bit lanes (pmuludq, pmuldq)
	OpVMaddW   // VMADDW.s16 d, a, b: adjacent s16 products summed into s32 lanes (pmaddwd)
	OpVSad     // VSAD.u8 d, a, b: sums of absolute differences of each 8 bytes, in the 64-bit lanes (psadbw)
	OpVHAdd    // VHADD.t d, a, b: horizontal add of adjacent lanes, a's pairs low, b's high
	OpVHSub    // VHSUB.t d, a, b: horizontal subtract
	OpVAbs     // VABS.t d, a: lane-wise absolute value (pabsb/w/d)
	OpVSign    // VSIGN.t d, a, b: a negated, zeroed or kept by the sign of b (psignb/w/d)
	OpVCmp     // VCMP.c.t d, a, b: each lane all ones if a c b, else zero
	OpVShl     // VSHL.t d, a, b: each lane shifted left by the count b (register or immediate); count ≥ lane bits gives 0
	OpVShr     // VSHR.t d, a, b: logical right shift
	OpVSar     // VSAR.t d, a, b: arithmetic right shift
	OpVBShl    // VBSHL.b128 d, a, n: the whole register shifted left by n bytes (pslldq)
	OpVBShr    // VBSHR.b128 d, a, n: shifted right by n bytes (psrldq)
	OpVPackSS  // VPACKSS.t d, a, b: signed lanes of type t narrowed with signed saturation, a's low, b's high
	OpVPackUS  // VPACKUS.t d, a, b: narrowed with unsigned saturation
	OpVUnpackL // VUNPACKL.t d, a, b: low lanes of a and b interleaved (punpckl*, unpcklps/pd)
	OpVUnpackH // VUNPACKH.t d, a, b: high lanes interleaved
	OpVPerm    // VPERM.t d, a, imm: lane i of d = lane (imm >> (2i) & 3) of a (t = u32: pshufd)
	OpVPermLo  // VPERMLO.u16 d, a, imm: pshuflw
	OpVPermHi  // VPERMHI.u16 d, a, imm: pshufhw
	OpVShufP   // VSHUFP.t d, a, b, imm: shufps (f32) / shufpd (f64)
	OpVShufB   // VSHUFB.u8 d, a, b: pshufb
	OpVAlignR  // VALIGNR.u8 d, a, b, n: bytes n..n+15 of the 32-byte a:b (palignr)
	OpVBlend   // VBLEND.t d, a, b, imm: lane i from b if imm bit i is set, else from a
	OpVBlendV  // VBLENDV.t d, a, b, m: lane i from b if the top bit of lane i of m is set
	OpVMovMsk  // VMOVMSK.t d, a: the top bit of each lane of a, packed into d's low bits
	OpVExtract // VEXTRACT.t d, a, i: d = lane i of a, zero-extended
	OpVInsert  // VINSERT.t d, a, b, i: d = a with lane i replaced by b's low t bits
	OpVCvt     // VCVT.r.t.s d, a: lane-wise conversion from lanes of s to lanes of t, as many lanes as the narrower count; unused high lanes of d are zero
	OpVExt     // VEXT.t.s d, a: the low lanes of a widened from s to t, by s's signedness (pmovsx, pmovzx)
	OpVRound   // VROUND.r.t d, a: lane-wise round to integral (roundps/pd)

	// SSE4.2 string comparison (the core of pcmpestri/pcmpestrm/pcmpistri/
	// pcmpistrm; the lifter computes the lengths, the index or mask
	// register and the flags around it).
	OpVPcmpStr // VPCMPSTR.t d, a, b, lens, imm: t is u8, u16, s8 or s16 (imm bits 1:0). la = lens.lo and lb = lens.hi (each already 0..n, n = 128/t.Bits()) are the valid lane counts of a and b. IntRes1 by imm bits 3:2: 00 equal any: bit j = j < lb and a[i] == b[j] for some i < la; 01 ranges: bit j = j < lb and a[i] <= b[j] <= a[i+1] for some even i with i+1 < la (order by t's signedness); 10 equal each: bit j = a[j] == b[j] if j < la and j < lb, 1 if j >= la and j >= lb, else 0; 11 equal ordered: bit j = for every i < n-j: i >= la, or j+i < lb and a[i] == b[j+i]. IntRes2 by imm bits 5:4: x0 IntRes1; 01 NOT IntRes1 (n bits); 11 bit j negated only for j < lb. d = IntRes2 zero-extended to 128 bits, or, if imm bit 6 is set, each bit j of IntRes2 widened to all ones or zero in lane j of d

	numOps
)

// opTable defines every op.
var opTable = [numOps]OpInfo{
	OpGet:  {Name: "GET", Operands: dA, Types: TAny, GPU: true},
	OpPut:  {Name: "PUT", Operands: []OperandKind{OpdDst, OpdSrc}, Types: TAny, GPU: true},
	OpMov:  {Name: "MOV", Operands: dA, Types: TAny, GPU: true},
	OpLi:   {Name: "LI", Operands: []OperandKind{OpdDst, OpdImm}, Types: TAny, GPU: true},
	OpJoin: {Name: "JOIN", Operands: dABr, Types: TAny},

	OpLd: {Name: "LD", Operands: []OperandKind{OpdDst, OpdMem}, Types: TAny, Effects: EffLoad | EffTrap, GPU: true},
	OpSt: {Name: "ST", Operands: []OperandKind{OpdMem, OpdSrc}, Types: TAny, Effects: EffStore | EffTrap, GPU: true},

	OpChkAlign: {Name: "CHKALIGN", Operands: memOnl, Types: TAny, Effects: EffTrap, GPU: true},

	OpAdd:   {Name: "ADD", Operands: dAB, Types: TNum, GPU: true},
	OpSub:   {Name: "SUB", Operands: dAB, Types: TNum, GPU: true},
	OpMul:   {Name: "MUL", Operands: dAB, Types: TNum, GPU: true},
	OpMulHi: {Name: "MULHI", Operands: dAB, Types: TInt, GPU: true},
	OpDiv:   {Name: "DIV", Operands: dAB, Types: TNum, Effects: EffTrap, GPU: true},
	OpRem:   {Name: "REM", Operands: dAB, Types: TInt, Effects: EffTrap, GPU: true},
	OpDivW:  {Name: "DIVW", Operands: dABC, Types: TInt, Effects: EffTrap},
	OpRemW:  {Name: "REMW", Operands: dABC, Types: TInt, Effects: EffTrap},
	OpAnd:   {Name: "AND", Operands: dAB, Types: TInt, GPU: true},
	OpOr:    {Name: "OR", Operands: dAB, Types: TInt, GPU: true},
	OpXor:   {Name: "XOR", Operands: dAB, Types: TInt, GPU: true},
	OpShl:   {Name: "SHL", Operands: dAB, Types: TInt, GPU: true},
	OpShr:   {Name: "SHR", Operands: dAB, Types: TInt, GPU: true},
	OpSar:   {Name: "SAR", Operands: dAB, Types: TInt, GPU: true},
	OpRol:   {Name: "ROL", Operands: dAB, Types: TInt, GPU: true},
	OpRor:   {Name: "ROR", Operands: dAB, Types: TInt, GPU: true},
	OpMin:   {Name: "MIN", Operands: dAB, Types: TNum, GPU: true},
	OpMax:   {Name: "MAX", Operands: dAB, Types: TNum, GPU: true},
	OpNot:   {Name: "NOT", Operands: dA, Types: TInt, GPU: true},
	OpNeg:   {Name: "NEG", Operands: dA, Types: TNum, GPU: true},
	OpAbs:   {Name: "ABS", Operands: dA, Types: TNum, GPU: true},
	OpSqrt:  {Name: "SQRT", Operands: dA, Types: TFloat, GPU: true},
	OpClz:   {Name: "CLZ", Operands: dA, Types: TInt, GPU: true},
	OpCtz:   {Name: "CTZ", Operands: dA, Types: TInt, GPU: true},
	OpPopc:  {Name: "POPC", Operands: dA, Types: TInt, GPU: true},
	OpBswap: {Name: "BSWAP", Operands: dA, Types: TInt, GPU: true},

	OpCvt:   {Name: "CVT", Operands: dA, Mod: ModRound, Types: TNum, SrcType: TNum, GPU: true},
	OpRound: {Name: "ROUND", Operands: dA, Mod: ModRound, Types: TFloat, GPU: true},

	OpCmp:    {Name: "CMP", Operands: dAB, Mod: ModCmp, Types: TNum, GPU: true},
	OpSelect: {Name: "SELECT", Operands: dABC, Types: TAny, GPU: true},

	OpFlags:    {Name: "FLAGS", Operands: []OperandKind{OpdSrc, OpdSrc, OpdSrc, OpdSrc}, Mod: ModFlags, Types: TInt, Effects: EffStateWrite},
	OpGetCC:    {Name: "GETCC", Operands: dOnly, Mod: ModX86Cond, Effects: EffStateRead},
	OpGetFlags: {Name: "GETFLAGS", Operands: dOnly, Effects: EffStateRead},
	OpSetFlags: {Name: "SETFLAGS", Operands: aOnly, Effects: EffStateWrite},

	OpJmp:     {Name: "JMP", Operands: []OperandKind{OpdTarget}, Effects: EffEnd, GPU: true},
	OpJmpR:    {Name: "JMPR", Operands: aOnly, Effects: EffEnd},
	OpBranch:  {Name: "BRANCH", Operands: []OperandKind{OpdSrc, OpdTarget, OpdTarget}, Effects: EffEnd, GPU: true},
	OpCall:    {Name: "CALL", Operands: []OperandKind{OpdTarget, OpdTarget}, Effects: EffEnd},
	OpCallR:   {Name: "CALLR", Operands: []OperandKind{OpdSrc, OpdTarget}, Effects: EffEnd},
	OpRet:     {Name: "RET", Operands: aOnly, Effects: EffEnd},
	OpSyscall: {Name: "SYSCALL", Operands: []OperandKind{OpdTarget}, Effects: EffEnd | EffHost | EffStateRead | EffStateWrite | EffLoad | EffStore},
	OpTrap:    {Name: "TRAP", Operands: []OperandKind{OpdImm}, Mod: ModTrap, Effects: EffEnd | EffTrap},

	OpCpuid: {Name: "CPUID", Operands: none, Effects: EffHost | EffStateRead | EffStateWrite},
	OpRdtsc: {Name: "RDTSC", Operands: dOnly, Effects: EffHost},

	OpProbe: {Name: "PROBE", Operands: []OperandKind{OpdMem, OpdSite}, Types: TAny, Effects: EffHost},
	OpCount: {Name: "COUNT", Operands: []OperandKind{OpdSite}, Effects: EffHost},

	OpRepMovs: {Name: "REPMOVS", Operands: none, Types: TInt, Effects: EffLoad | EffStore | EffTrap | EffStateRead | EffStateWrite},
	OpRepStos: {Name: "REPSTOS", Operands: none, Types: TInt, Effects: EffStore | EffTrap | EffStateRead | EffStateWrite},
	OpRepCmps: {Name: "REPCMPS", Operands: none, Mod: ModX86Cond, Types: TInt, Effects: EffLoad | EffTrap | EffStateRead | EffStateWrite},
	OpRepScas: {Name: "REPSCAS", Operands: none, Mod: ModX86Cond, Types: TInt, Effects: EffLoad | EffTrap | EffStateRead | EffStateWrite},

	OpFxsave:  {Name: "FXSAVE", Operands: memOnl, Effects: EffStore | EffTrap | EffStateRead},
	OpFxrstor: {Name: "FXRSTOR", Operands: memOnl, Effects: EffLoad | EffTrap | EffStateWrite},
	OpFnstenv: {Name: "FNSTENV", Operands: memOnl, Effects: EffStore | EffTrap | EffStateRead},
	OpFldenv:  {Name: "FLDENV", Operands: memOnl, Effects: EffLoad | EffTrap | EffStateWrite},

	OpFGetST:  {Name: "FGETST", Operands: []OperandKind{OpdDst, OpdImm}, Types: TFloat, Effects: EffStateRead},
	OpFPutST:  {Name: "FPUTST", Operands: []OperandKind{OpdImm, OpdSrc}, Types: TFloat, Effects: EffStateWrite},
	OpFPush:   {Name: "FPUSH", Operands: none, Effects: EffStateRead | EffStateWrite},
	OpFPop:    {Name: "FPOP", Operands: none, Effects: EffStateRead | EffStateWrite},
	OpFPrem:   {Name: "FPREM", Operands: dABr, Types: TFloat, Effects: EffStateRead | EffStateWrite},
	OpFPrem1:  {Name: "FPREM1", Operands: dABr, Types: TFloat, Effects: EffStateRead | EffStateWrite},
	OpFScale:  {Name: "FSCALE", Operands: dABr, Types: TFloat, Effects: EffStateRead},
	OpF2xm1:   {Name: "F2XM1", Operands: dA, Types: TFloat, Effects: EffStateRead},
	OpFYl2x:   {Name: "FYL2X", Operands: dABr, Types: TFloat, Effects: EffStateRead},
	OpFYl2xp1: {Name: "FYL2XP1", Operands: dABr, Types: TFloat, Effects: EffStateRead},
	OpFPatan:  {Name: "FPATAN", Operands: dABr, Types: TFloat, Effects: EffStateRead},
	OpFSin:    {Name: "FSIN", Operands: dA, Types: TFloat, Effects: EffStateRead | EffStateWrite},
	OpFCos:    {Name: "FCOS", Operands: dA, Types: TFloat, Effects: EffStateRead | EffStateWrite},
	OpFPtan:   {Name: "FPTAN", Operands: dA, Types: TFloat, Effects: EffStateRead | EffStateWrite},
	OpFXtSig:  {Name: "FXTSIG", Operands: dA, Types: TFloat},
	OpFXtExp:  {Name: "FXTEXP", Operands: dA, Types: TFloat},
	OpFCmp:    {Name: "FCMP", Operands: []OperandKind{OpdDst, OpdSrc, OpdSrc, OpdImm}, Types: TFloat, Effects: EffStateRead | EffStateWrite},
	OpFXam:    {Name: "FXAM", Operands: []OperandKind{OpdDst, OpdImm}, Effects: EffStateRead},
	OpFConst:  {Name: "FCONST", Operands: []OperandKind{OpdDst, OpdImm}, Types: TFloat, Effects: EffStateRead},
	OpFClass:  {Name: "FCLASS", Operands: dA, Types: TFloat},

	OpVAdd:     {Name: "VADD", Operands: dABr, Types: TVec},
	OpVSub:     {Name: "VSUB", Operands: dABr, Types: TVec},
	OpVMul:     {Name: "VMUL", Operands: dABr, Types: TVec},
	OpVDiv:     {Name: "VDIV", Operands: dABr, Types: TVec},
	OpVMin:     {Name: "VMIN", Operands: dABr, Types: TVec},
	OpVMax:     {Name: "VMAX", Operands: dABr, Types: TVec},
	OpVSqrt:    {Name: "VSQRT", Operands: dA, Types: TVec},
	OpVAnd:     {Name: "VAND", Operands: dABr, Types: TB128},
	OpVOr:      {Name: "VOR", Operands: dABr, Types: TB128},
	OpVXor:     {Name: "VXOR", Operands: dABr, Types: TB128},
	OpVAndN:    {Name: "VANDN", Operands: dABr, Types: TB128},
	OpVAddSat:  {Name: "VADDSAT", Operands: dABr, Types: TVec},
	OpVSubSat:  {Name: "VSUBSAT", Operands: dABr, Types: TVec},
	OpVAvg:     {Name: "VAVG", Operands: dABr, Types: TVec},
	OpVMulHi:   {Name: "VMULHI", Operands: dABr, Types: TVec},
	OpVMulW:    {Name: "VMULW", Operands: dABr, Types: TVec},
	OpVMaddW:   {Name: "VMADDW", Operands: dABr, Types: TVec},
	OpVSad:     {Name: "VSAD", Operands: dABr, Types: TVec},
	OpVHAdd:    {Name: "VHADD", Operands: dABr, Types: TVec},
	OpVHSub:    {Name: "VHSUB", Operands: dABr, Types: TVec},
	OpVAbs:     {Name: "VABS", Operands: dA, Types: TVec},
	OpVSign:    {Name: "VSIGN", Operands: dABr, Types: TVec},
	OpVCmp:     {Name: "VCMP", Operands: dABr, Mod: ModCmp, Types: TVec},
	OpVShl:     {Name: "VSHL", Operands: dAB, Types: TVec},
	OpVShr:     {Name: "VSHR", Operands: dAB, Types: TVec},
	OpVSar:     {Name: "VSAR", Operands: dAB, Types: TVec},
	OpVBShl:    {Name: "VBSHL", Operands: dAI, Types: TAny},
	OpVBShr:    {Name: "VBSHR", Operands: dAI, Types: TAny},
	OpVPackSS:  {Name: "VPACKSS", Operands: dABr, Types: TVec},
	OpVPackUS:  {Name: "VPACKUS", Operands: dABr, Types: TVec},
	OpVUnpackL: {Name: "VUNPACKL", Operands: dABr, Types: TVec},
	OpVUnpackH: {Name: "VUNPACKH", Operands: dABr, Types: TVec},
	OpVPerm:    {Name: "VPERM", Operands: dAI, Types: TVec},
	OpVPermLo:  {Name: "VPERMLO", Operands: dAI, Types: TVec},
	OpVPermHi:  {Name: "VPERMHI", Operands: dAI, Types: TVec},
	OpVShufP:   {Name: "VSHUFP", Operands: dABI, Types: TVec},
	OpVShufB:   {Name: "VSHUFB", Operands: dABr, Types: TVec},
	OpVAlignR:  {Name: "VALIGNR", Operands: dABI, Types: TVec},
	OpVBlend:   {Name: "VBLEND", Operands: dABI, Types: TVec},
	OpVBlendV:  {Name: "VBLENDV", Operands: dABC, Types: TVec},
	OpVMovMsk:  {Name: "VMOVMSK", Operands: dA, Types: TVec},
	OpVExtract: {Name: "VEXTRACT", Operands: dAI, Types: TVec},
	OpVInsert:  {Name: "VINSERT", Operands: dABI, Types: TVec},
	OpVCvt:     {Name: "VCVT", Operands: dA, Mod: ModRound, Types: TVec, SrcType: TVec},
	OpVExt:     {Name: "VEXT", Operands: dA, Types: TVec, SrcType: TVec},
	OpVRound:   {Name: "VROUND", Operands: dA, Mod: ModRound, Types: TVec},

	OpVPcmpStr: {Name: "VPCMPSTR", Operands: []OperandKind{OpdDst, OpdSrc, OpdSrc, OpdSrc, OpdImm}, Types: TVec},
}

// Info returns the definition of op.
func (op Op) Info() *OpInfo {
	if op > OpInvalid && op < numOps {
		return &opTable[op]
	}
	return &opTable[OpInvalid]
}

// String returns the op's name, e.g. "ADD".
func (op Op) String() string {
	if op > OpInvalid && op < numOps {
		return opTable[op].Name
	}
	return "INVALID"
}

// Ops returns every defined op, in table order.
func Ops() []Op {
	ops := make([]Op, 0, numOps-1)
	for op := OpInvalid + 1; op < numOps; op++ {
		ops = append(ops, op)
	}
	return ops
}

// ParseOp looks an op up by name.
func ParseOp(name string) (Op, bool) {
	for op := OpInvalid + 1; op < numOps; op++ {
		if opTable[op].Name == name {
			return op, true
		}
	}
	return OpInvalid, false
}

// EndsBlock reports whether op transfers control and so ends a VBlock.
func (op Op) EndsBlock() bool { return op.Info().Effects&EffEnd != 0 }

// Accepts reports whether op takes t as its main type.
func (c TypeClass) Accepts(t Type) bool {
	switch c {
	case TNone:
		return t == TypeNone
	case TInt:
		return t.IsInt()
	case TFloat:
		return t.IsFloat()
	case TNum:
		return t.IsInt() || t.IsFloat()
	case TAny:
		return t != TypeNone
	case TVec:
		return t.IsInt() || t == F32 || t == F64
	case TInt64:
		return t == U64 || t == S64 || t == B64
	case TB128:
		return t == B128
	}
	return false
}
