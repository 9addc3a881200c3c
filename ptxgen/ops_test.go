package ptxgen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/gvinst"
)

// opCases are single instructions checked lane by lane against the CPU
// engine. Sources are v0, v2, v4 (each a .b128 record of random bits, or
// its low 64 bits for scalar types); the result goes to v6 (and v7).
var opCases = []string{
	"ADD.u64 v6, v0, v2", "ADD.s32 v6, v0, v2", "ADD.u8 v6, v0, v2", "ADD.u16 v6, v0, -3",
	"SUB.u64 v6, v0, v2", "SUB.s16 v6, v0, v2", "MUL.u64 v6, v0, v2", "MUL.s32 v6, v0, 7",
	"MULHI.u64 v6, v0, v2", "MULHI.s64 v6, v0, v2", "MULHI.s32 v6, v0, v2", "MULHI.u16 v6, v0, v2", "MULHI.s8 v6, v0, v2",
	"AND.u32 v6, v0, v2", "OR.u64 v6, v0, v2", "XOR.u16 v6, v0, v2",
	"SHL.u64 v6, v0, v4", "SHL.u32 v6, v0, 5", "SHR.u32 v6, v0, v4", "SHR.u8 v6, v0, v4", "SAR.s32 v6, v0, v4", "SAR.s64 v6, v0, 63", "SAR.s16 v6, v0, v4",
	"ROL.u32 v6, v0, v4", "ROR.u64 v6, v0, v4", "ROL.u8 v6, v0, 3", "ROR.u16 v6, v0, v4",
	"MIN.s32 v6, v0, v2", "MAX.u64 v6, v0, v2", "MIN.u8 v6, v0, v2", "MAX.s16 v6, v0, v2",
	"NOT.u32 v6, v0", "NEG.s64 v6, v0", "NEG.s8 v6, v0", "ABS.s32 v6, v0", "ABS.s64 v6, v0",
	"CLZ.u32 v6, v0", "CLZ.u64 v6, v4", "CTZ.u16 v6, v0", "CTZ.u64 v6, v4", "POPC.u32 v6, v0", "BSWAP.u32 v6, v0", "BSWAP.u64 v6, v0",
	"DIV.s32 v6, v0, v4", "DIV.u64 v6, v0, v4", "REM.s32 v6, v0, v4", "REM.u16 v6, v0, v4",
	"DIV.u32 v6, v0, v4", "DIV.s8 v6, v0, v4", "REM.s8 v6, v0, v4", "REM.u32 v6, v0, v4",
	"DIVW.u32 v6, v4, v0, v2", "REMW.s32 v6, v4, v0, v2", "DIVW.s64 v6, v4, v0, v2", "DIVW.u64 v6, v4, v0, v2",
	"DIVW.s32 v6, v4, v0, v2", "REMW.u32 v6, v4, v0, v2", "REMW.s64 v6, v4, v0, v2", "REMW.u64 v6, v4, v0, v2",
	"ADD.f64 v6, v0, v2", "SUB.f64 v6, v0, v2", "MUL.f64 v6, v0, v2", "DIV.f64 v6, v0, v2",
	"ADD.f32 v6, v0, v2", "MUL.f32 v6, v0, v2", "DIV.f32 v6, v0, v2", "SQRT.f64 v6, v0", "SQRT.f32 v6, v2",
	"MIN.f64 v6, v0, v2", "MAX.f32 v6, v0, v2", "NEG.f64 v6, v0", "ABS.f32 v6, v0",
	"CVT.rn.s64.s32 v6, v0", "CVT.rn.u32.s8 v6, v0", "CVT.rn.s16.u64 v6, v0",
	"CVT.rz.s32.f64 v6, v0", "CVT.rn.s64.f64 v6, v2", "CVT.rm.s32.f32 v6, v0", "CVT.rz.u64.f64 v6, v0", "CVT.rz.u32.f64 v6, v2",
	"CVT.rn.f64.s32 v6, v0", "CVT.dyn.f64.s64 v6, v0", "CVT.rn.f32.s64 v6, v0", "CVT.rn.f64.u64 v6, v0", "CVT.rz.f32.u32 v6, v0",
	"CVT.rn.f64.f32 v6, v0", "CVT.rn.f32.f64 v6, v0", "CVT.rz.f32.f64 v6, v2",
	"ROUND.rn.f64 v6, v0", "ROUND.rm.f32 v6, v0", "ROUND.rz.f64 v6, v2",
	"CMP.lt.s32 v6, v0, v2", "CMP.ge.u64 v6, v0, v2", "CMP.eq.u8 v6, v0, v2", "CMP.le.s64 v6, v0, -5",
	"CMP.lt.f64 v6, v0, v2", "CMP.neu.f32 v6, v0, v2", "CMP.nan.f64 v6, v0, v0", "CMP.geu.f64 v6, v0, v2",
	"SELECT.u64 v6, v4, v0, v2", "SELECT.b128 v6, v4, v0, v2",
	"MOV.b128 v6, v2", "JOIN.b128 v6, v0, v4",
	"VADD.f64 v6, v0, v2", "VSUB.f32 v6, v0, v2", "VMUL.f64 v6, v0, v2", "VDIV.f32 v6, v0, v2", "VSQRT.f64 v6, v0",
	"VMIN.f64 v6, v0, v2", "VMAX.f32 v6, v0, v2", "VADD.u32 v6, v0, v2", "VSUB.u64 v6, v0, v2", "VMUL.u32 v6, v0, v2",
	"VMIN.s32 v6, v0, v2", "VMAX.u32 v6, v0, v2",
	"VAND.b128 v6, v0, v2", "VOR.b128 v6, v0, v2", "VXOR.b128 v6, v0, v2", "VANDN.b128 v6, v0, v2",
	"VUNPACKL.f64 v6, v0, v2", "VUNPACKH.u32 v6, v0, v2", "VUNPACKL.u32 v6, v0, v2",
	"VCMP.lt.s32 v6, v0, v2", "VCMP.eq.u64 v6, v0, v2", "VCMP.le.f64 v6, v0, v2", "VCMP.neu.f32 v6, v0, v2",
	"VSHL.u32 v6, v0, 3", "VSHL.u64 v6, v0, 32", "VSHR.u64 v6, v0, 32", "VADD.u64 v6, v0, v2", "VPERM.u32 v6, v0, 221", "VPERM.u32 v6, v0, 238", "VCMP.gt.s32 v6, v0, v2", "VSAR.s32 v6, v0, 5", "VSUB.u32 v6, v0, v2", "VSHR.u64 v6, v0, v4", "VSAR.s32 v6, v0, v4", "VSAR.s32 v6, v0, 40",
	"VPERM.u32 v6, v0, 27", "VPERM.u32 v6, v0, 0", "VMULW.u32 v6, v0, v2", "VMULW.s32 v6, v0, v2",
	"VSHUFP.f32 v6, v0, v2, 27", "VSHUFP.f32 v6, v0, v2, 228", "VSHUFP.f64 v6, v0, v2, 2",
	"VMULW.u32 v0, v0, v2; MOV.b128 v6, v0", "VADD.u32 v2, v0, v2; MOV.b128 v6, v2", "VPERM.u32 v0, v0, 27; MOV.b128 v6, v0",
	"VUNPACKL.u32 v2, v0, v2; MOV.b128 v6, v2", "VUNPACKL.u32 v0, v0, v2; MOV.b128 v6, v0", "VCMP.gt.s32 v2, v0, v2; MOV.b128 v6, v2",
	"VSHL.u64 v0, v0, 32; MOV.b128 v6, v0", "VCVT.rn.f64.s32 v0, v0; MOV.b128 v6, v0", "VSHUFP.f32 v2, v0, v2, 27; MOV.b128 v6, v2",
	"VSAR.s32 v0, v0, 5; MOV.b128 v6, v0", "VMUL.f64 v2, v2, v0; MOV.b128 v6, v2", "JOIN.b128 v2, v0, v2; MOV.b128 v6, v2",
	"CHKALIGN.b128 v42(16); MOV.b128 v6, v2", "CHKALIGN.u64 v42(8); MOV.b128 v6, v4",
	// Packed integer ops of byte and word lanes (gcc -O3 over uint8_t and
	// int16_t data), lane moves, and their edges: 0x80, 0xff, saturation.
	"VADD.u8 v6, v0, v2", "VADD.u16 v6, v0, v2", "VSUB.u8 v6, v0, v2", "VSUB.u16 v6, v0, v2", "VMUL.u16 v6, v0, v2",
	"VMIN.u8 v6, v0, v2", "VMAX.u8 v6, v0, v2", "VMIN.s16 v6, v0, v2", "VMAX.s16 v6, v0, v2", "VMIN.s8 v6, v0, v2", "VMAX.u16 v6, v0, v2",
	"VMIN.s64 v6, v0, v2", "VMAX.u64 v6, v0, v2",
	"VUNPACKL.u8 v6, v0, v2", "VUNPACKH.u8 v6, v0, v2", "VUNPACKL.u16 v6, v0, v2", "VUNPACKH.u16 v6, v0, v2", "VUNPACKH.u64 v6, v0, v2",
	"VCMP.eq.u8 v6, v0, v2", "VCMP.gt.s8 v6, v0, v2", "VCMP.eq.u16 v6, v0, v2", "VCMP.gt.s16 v6, v0, v2",
	"VSHR.u16 v6, v0, 3", "VSHL.u16 v6, v0, 15", "VSAR.s16 v6, v0, 4", "VSHR.u16 v6, v0, v4", "VSAR.s16 v6, v0, v4", "VSHL.u16 v6, v0, v4", "VSAR.s16 v6, v0, 16",
	"VSHL.u16 v6, v0, 16", "VSHR.u16 v6, v0, 0", "VSHL.u8 v6, v0, 3", "VSHR.u8 v6, v0, 7", "VSHR.u16 v6, v0, 200",
	"VSUB.u8 v0, v2, v0; MOV.b128 v6, v0", "VUNPACKH.u16 v2, v2, v0; MOV.b128 v6, v2",
	"VADDSAT.u8 v6, v0, v2", "VADDSAT.s8 v6, v0, v2", "VSUBSAT.u8 v6, v0, v2", "VSUBSAT.s8 v6, v0, v2",
	"VADDSAT.u16 v6, v0, v2", "VADDSAT.s16 v6, v0, v2", "VSUBSAT.u16 v6, v0, v2", "VSUBSAT.s16 v6, v0, v2",
	"VAVG.u8 v6, v0, v2", "VAVG.u16 v6, v0, v2", "VMULHI.s16 v6, v0, v2", "VMULHI.u16 v6, v0, v2", "VMADDW.s16 v6, v0, v2", "VSAD.u8 v6, v0, v2",
	"VABS.s8 v6, v0", "VABS.s16 v6, v0", "VABS.s32 v6, v0", "VSIGN.s8 v6, v0, v2", "VSIGN.s16 v6, v0, v2", "VSIGN.s32 v6, v0, v2",
	"VHADD.s16 v6, v0, v2", "VHSUB.s32 v6, v0, v2", "VHADD.f32 v6, v0, v2", "VHSUB.f64 v6, v0, v2", "VHADD.f64 v6, v0, v2",
	"VPACKUS.s16 v6, v0, v2", "VPACKSS.s16 v6, v0, v2", "VPACKSS.s32 v6, v0, v2", "VPACKUS.s32 v6, v0, v2",
	"VPERMLO.u16 v6, v0, 27", "VPERMHI.u16 v6, v0, 177",
	"VBSHL.b128 v6, v0, 3", "VBSHR.b128 v6, v0, 8", "VBSHR.b128 v6, v0, 17", "VBSHL.b128 v6, v0, 15",
	"VALIGNR.u8 v6, v0, v2, 4", "VALIGNR.u8 v6, v0, v2, 20", "VALIGNR.u8 v6, v0, v2, 33", "VSHUFB.u8 v6, v0, v2",
	"VBLEND.u16 v6, v0, v2, 165", "VBLEND.f64 v6, v0, v2, 2", "VBLENDV.u8 v6, v0, v2, v4", "VBLENDV.f32 v6, v0, v2, v4",
	"VMOVMSK.u8 v6, v0", "VMOVMSK.f64 v6, v0", "VMOVMSK.f32 v6, v0", "VEXTRACT.u16 v6, v0, 5", "VEXTRACT.u32 v6, v0, 3",
	"VINSERT.u16 v6, v0, v2, 6", "VINSERT.u8 v6, v0, v2, 15",
	"VEXT.u16.u8 v6, v0", "VEXT.s32.s16 v6, v0", "VEXT.s64.s32 v6, v0", "VEXT.u32.u8 v6, v0", "VEXT.s16.s8 v6, v0",
	"VROUND.rn.f32 v6, v0", "VROUND.rm.f64 v6, v0", "VROUND.rz.f32 v6, v2", "VROUND.rp.f64 v6, v2", "VROUND.dyn.f64 v6, v0",
	"VUNPACKL.u8 v0, v0, v2; MOV.b128 v6, v0", "VPACKUS.s16 v2, v0, v2; MOV.b128 v6, v2", "VADD.u16 v0, v0, v0; MOV.b128 v6, v0",
	"VSHUFB.u8 v0, v0, v0; MOV.b128 v6, v0", "VALIGNR.u8 v2, v0, v2, 7; MOV.b128 v6, v2",
	"VCVT.rn.f64.s32 v6, v0", "VCVT.rz.s32.f64 v6, v2", "VCVT.rn.f32.s32 v6, v0", "VCVT.rn.f64.f32 v6, v0", "VCVT.rn.f32.f64 v6, v2", "VCVT.rz.s32.f32 v6, v0",
}

// packedCases are one case per packed op and lane type that vecSupported
// accepts and opCases does not list, with register operands (v0, v2, v4)
// or an immediate as the op's operand kinds say.
func packedCases() []string {
	listed := map[string]bool{}
	for _, c := range opCases {
		listed[strings.Fields(c)[0]] = true
	}
	types := []gvinst.Type{gvinst.U8, gvinst.S8, gvinst.U16, gvinst.S16, gvinst.U32, gvinst.S32, gvinst.U64, gvinst.S64, gvinst.F32, gvinst.F64}
	var out []string
	for _, op := range gvinst.Ops() {
		info := op.Info()
		if info.Types != gvinst.TVec || op == gvinst.OpVCvt {
			continue
		}
		for _, ty := range types {
			srcs := []gvinst.Type{0}
			if op == gvinst.OpVExt {
				srcs = types
			}
			for _, st := range srcs {
				in := &gvinst.Inst{Op: op, Type: ty, SrcType: st}
				if !vecSupported(in) {
					continue
				}
				name := op.String() + "." + ty.String()
				if op == gvinst.OpVExt {
					name += "." + st.String()
				}
				if op == gvinst.OpVCmp {
					name = "VCMP.gt." + ty.String()
				}
				if info.Mod == gvinst.ModRound {
					name = op.String() + ".rn." + ty.String()
				}
				if listed[name] {
					continue
				}
				args := []string{"v6"}
				for _, k := range info.Operands[1:] {
					switch k {
					case gvinst.OpdImm:
						args = append(args, "27")
					default:
						args = append(args, fmt.Sprintf("v%d", 2*(len(args)-1)))
					}
				}
				out = append(out, name+" "+strings.Join(args, ", "))
			}
		}
	}
	return out
}

func opLoop(op string) string {
	return `
vblock 0x1000..0x1040:
  GET.u64 v40, s0
  GET.u64 v41, s6
  ADD.u64 v42, v41, v40
  LD.b128 v0, v42(0)
  LD.b128 v2, v42(16)
  LD.b128 v4, v42(32)
  LI.u64 v6, 0
  LI.u64 v7, 0
  ` + strings.ReplaceAll(op, "; ", "\n  ") + `
  GET.u64 v43, s7
  ADD.u64 v44, v43, v40
  ST.b128 v44(0), v6
  ADD.u64 v45, v40, 48
  PUT.u64 s0, v45
  GET.u64 v46, s2
  CMP.ne.u64 v47, v45, v46
  BRANCH v47, 0x1000, 0x1040
vblock 0x1040..0x1042:
  SYSCALL 0x1042
`
}

// interesting 64-bit patterns for operands.
var specials = []uint64{0, 1, 2, 3, 5, 7, 31, 32, 33, 63, 64, 65, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff,
	0x7fffffff, 0x80000000, 0xffffffff, 1 << 32, 1<<63 - 1, 1 << 63, ^uint64(0), ^uint64(1),
	math.Float64bits(1.5), math.Float64bits(-2.5), math.Float64bits(0.1), math.Float64bits(1e300), math.Float64bits(-1e-310),
	math.Float64bits(math.Inf(1)), math.Float64bits(math.Inf(-1)), math.Float64bits(math.Copysign(0, -1)),
	math.Float64bits(2147483647.5), math.Float64bits(-2147483648.7), math.Float64bits(9.3e18), math.Float64bits(1.8446744073709552e19),
	uint64(math.Float32bits(1.5)) | uint64(math.Float32bits(-3.25))<<32, uint64(math.Float32bits(3e9)) | uint64(math.Float32bits(1e-40))<<32,
	uint64(math.Float32bits(-0.0)) | uint64(math.Float32bits(2.5))<<32, uint64(math.Float32bits(float32(math.Inf(1)))),
}

// laneSpecials are lane edges (bytes and words 0x80, 0x7f, 0xff, 0x8000,
// 0x7fff; pshufb indices with and without the top bit; quiet and
// signalling NaNs with payloads and -0.0, as doubles and as float pairs)
// that replace every fifth operand word of the packed ops' input.
var laneSpecials = []uint64{0x80ff7f0001fe8081, 0x8000ffff7fff0001, 0x0f8f00ff10203040, 0x7f807f807f807f80,
	0xff00ff00ff00ff00, 0x8001800080018000, 0x0001020304050607, 0x8f8e0d0c0b0a0908,
	0x7ff8000000000123, 0xfff0000000000001, 0x7fc00001ff800001, 0x8000000080000000}

const opIters = 200

// TestOpsMatchCPU checks every lowering against the CPU engine on random
// and boundary operands. NaN results compare equal to any NaN (x86 and PTX
// differ in NaN payloads; the allowlist of the design).
func TestOpsMatchCPU(t *testing.T) {
	drv := gpusim.New(gpusim.Options{})
	ctx, err := drv.NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	rng := rand.New(rand.NewSource(1))
	input := make([]byte, opIters*48)
	for i := 0; i < len(input); i += 8 {
		var v uint64
		switch rng.Intn(3) {
		case 0:
			v = specials[rng.Intn(len(specials))]
		case 1:
			v = uint64(rng.Intn(200)) - 100
		default:
			v = rng.Uint64()
		}
		binary.LittleEndian.PutUint64(input[i:], v)
	}
	for _, op := range append(append([]string(nil), opCases...), packedCases()...) {
		t.Run(op, func(t *testing.T) {
			bs := parseBlocks(t, opLoop(op))
			k, err := Generate(&Nest{Header: 0x1000, Blocks: map[uint64]*gvinst.VBlock{0x1000: bs[0x1000]}})
			if err != nil {
				t.Fatal(err)
			}
			checkText(t, k.PTX)
			input := append([]byte(nil), input...)
			if strings.HasPrefix(op, "V") {
				for i := 0; i < len(input); i += 40 {
					binary.LittleEndian.PutUint64(input[i:], laneSpecials[i/40%len(laneSpecials)])
				}
			}
			isDiv := strings.HasPrefix(op, "DIV") || strings.HasPrefix(op, "REM")
			if strings.HasPrefix(op, "DIVW.s64") || strings.HasPrefix(op, "DIVW.u64") || strings.HasPrefix(op, "REMW.s64") || strings.HasPrefix(op, "REMW.u64") {
				// The kernel divides 64-bit dividends only (hi extends lo,
				// as cqo or xor edx, edx leave it); TestDivideTraps covers
				// the rest.
				for i := 0; i < opIters; i++ {
					lo := binary.LittleEndian.Uint64(input[i*48:])
					hi := uint64(0)
					if strings.Contains(op, "s64") {
						hi = uint64(int64(lo) >> 63)
					}
					binary.LittleEndian.PutUint64(input[i*48+32:], hi)
				}
			}
			var refMem *gvinst.Memory
			for tries := 0; ; tries++ {
				var refCPU *gvinst.CPU
				refMem, refCPU = setupWith(t, input)
				st := gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}).Run(refCPU, 0)
				if st.Kind == gvinst.StopSyscall {
					break
				}
				if !isDiv || st.Kind != gvinst.StopTrap || tries > opIters {
					t.Fatalf("engine stopped: %v", st)
				}
				// A division that traps on x86: give that record a divisor
				// that does not, and an extended high half, and run again.
				i := refCPU.State[gvinst.S0]
				binary.LittleEndian.PutUint64(input[i+16:], 7)
				binary.LittleEndian.PutUint64(input[i+32:], 7)
				if strings.HasPrefix(op, "DIVW") || strings.HasPrefix(op, "REMW") {
					binary.LittleEndian.PutUint64(input[i+32:], 0)
				}
			}

			mem, _ := setupWith(t, input)
			in := LaunchInput{Count: opIters - 1} // the last iteration leaves the loop: the CPU runs it
			for _, l := range k.LiveIns {
				v := map[gvinst.Reg]uint64{gvinst.S6: dataBase, gvinst.S7: dataBase + 0x20000, gvinst.S2: opIters * 48}[l.Slot]
				step := uint64(0)
				if l.Slot == gvinst.S0 {
					step = 48
				}
				in.Values = append(in.Values, v)
				in.Steps = append(in.Steps, step)
			}
			for range k.Sites {
				in.Sites = append(in.Sites, Range{dataBase, dataBase + 0x40000})
			}
			m, err := ctx.LoadModule(k.PTX)
			if err != nil {
				t.Fatalf("%v\n%s", err, numbered(k.PTX))
			}
			fn, err := m.Function(k.Name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err = Launch(ctx, fn, k, mem, in, nil); err != nil {
				t.Fatalf("%v\n%s", err, numbered(k.PTX))
			}
			want, got := make([]byte, opIters*48), make([]byte, opIters*48)
			_ = refMem.Read(dataBase+0x20000, want)
			_ = mem.Read(dataBase+0x20000, got)
			typ := opType(op)
			for i := 0; i < opIters-1; i++ {
				w, g := want[i*48:i*48+16], got[i*48:i*48+16]
				if bytes.Equal(w, g) || nanEqual(typ, w, g) {
					continue
				}
				ops := input[i*48 : i*48+48]
				t.Fatalf("iteration %d: cpu %x, gpu %x; operands %x %x %x", i, w, g, ops[0:16], ops[16:32], ops[32:48])
			}
		})
	}
}

// setupWith makes the guest of an op loop over the given input records.
func setupWith(t *testing.T, input []byte) (*gvinst.Memory, *gvinst.CPU) {
	mem := gvinst.NewMemory(1 << 26)
	if err := mem.Map(dataBase, 0x40000, gvinst.PermRead|gvinst.PermWrite); err != nil {
		t.Fatal(err)
	}
	_ = mem.Write(dataBase, input)
	cpu := &gvinst.CPU{PC: 0x1000}
	cpu.State[gvinst.S6] = dataBase
	cpu.State[gvinst.S7] = dataBase + 0x20000
	cpu.State[gvinst.S2] = opIters * 48
	cpu.State[gvinst.MXCSR] = 0x1f80
	return mem, cpu
}

// TestDivideTraps checks that a division that would trap on x86 makes the
// kernel report ErrCodeDivide with its x86 address.
func TestDivideTraps(t *testing.T) {
	ctx, err := gpusim.New(gpusim.Options{}).NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	for _, c := range []struct {
		op      string
		a, b, c uint64
	}{
		{"DIV.u32 v6, v0, v4", 5, 0, 0},
		{"DIV.s32 v6, v0, v4", 0x80000000, 0, 0xffffffff},
		{"DIV.s8 v6, v0, v4", 0x80, 0, 0xff}, // -128 / -1
		{"REM.s64 v6, v0, v4", 1 << 63, 0, ^uint64(0)},
		{"DIVW.u32 v6, v4, v0, v2", 0, 1, 1},                            // quotient 2^32 does not fit
		{"DIVW.u64 v6, v4, v0, v2", 0, 3, 1},                            // a 128-bit dividend
		{"DIVW.s16 v6, v4, v0, v2", 0x8000, 0xffff, 0xffff},             // -32768 / -1
		{"DIVW.s32 v6, v4, v0, v2", 0x80000000, 0xffffffff, 0xffffffff}, // INT_MIN / -1 (cdq; idiv)
		{"REMW.s32 v6, v4, v0, v2", 0x80000000, 0xffffffff, 0xffffffff}, // its remainder traps too
	} {
		bs := parseBlocks(t, opLoop(c.op))
		k, err := Generate(&Nest{Header: 0x1000, Blocks: map[uint64]*gvinst.VBlock{0x1000: bs[0x1000]}})
		if err != nil {
			t.Fatal(err)
		}
		input := make([]byte, opIters*48)
		for i := 0; i < opIters; i++ {
			binary.LittleEndian.PutUint64(input[i*48:], 9)
			binary.LittleEndian.PutUint64(input[i*48+16:], 3)
			binary.LittleEndian.PutUint64(input[i*48+32:], 1)
		}
		binary.LittleEndian.PutUint64(input[5*48:], c.a)
		binary.LittleEndian.PutUint64(input[5*48+16:], c.b)
		binary.LittleEndian.PutUint64(input[5*48+32:], c.c)
		mem, _ := setupWith(t, input)
		in := LaunchInput{Count: opIters - 1}
		for _, l := range k.LiveIns {
			in.Values = append(in.Values, map[gvinst.Reg]uint64{gvinst.S6: dataBase, gvinst.S7: dataBase + 0x20000, gvinst.S2: opIters * 48}[l.Slot])
			in.Steps = append(in.Steps, map[gvinst.Reg]uint64{gvinst.S0: 48}[l.Slot])
		}
		for range k.Sites {
			in.Sites = append(in.Sites, Range{dataBase, dataBase + 0x40000})
		}
		m, err := ctx.LoadModule(k.PTX)
		if err != nil {
			t.Fatal(err)
		}
		fn, _ := m.Function(k.Name)
		_, err = Launch(ctx, fn, k, mem, in, nil)
		ke, ok := err.(*KernelError)
		if !ok || ke.Code != ErrCodeDivide || ke.X86 != 0x1000 {
			t.Errorf("%s: got %v, want a divide error at 0x1000", c.op, err)
		}
		// The guest memory is untouched by a failed launch.
		out := make([]byte, 48)
		_ = mem.Read(dataBase+0x20000, out)
		if !bytes.Equal(out, make([]byte, 48)) {
			t.Errorf("%s: a failed launch wrote guest memory", c.op)
		}
	}
}

// TestChkAlignOnGPU checks CHKALIGN's two lowerings: folded into the site
// check of the 16-byte access it guards (which then tests 16-byte
// alignment, not the 8 bytes two 8-byte halves need), and on its own. A
// misaligned address makes the kernel report ErrCodeAlign with the x86
// address, so the CPU runs the instance and faults as x86 does; an aligned
// one runs.
func TestChkAlignOnGPU(t *testing.T) {
	ctx, err := gpusim.New(gpusim.Options{}).NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	for _, c := range []struct {
		name, from, to string
		folded         bool
	}{
		{"folded", "LD.b128 v0, v42(0)", "CHKALIGN.b128 v42(%d)\n  LD.b128 v0, v42(%[1]d)\n  MOV.b128 v6, v0", true},
		{"alone", "LD.b128 v4, v42(32)", "LD.b128 v4, v42(32)\n  CHKALIGN.b128 v42(%d)", false},
	} {
		for _, disp := range []int{0, 8, 16, 24} {
			src := strings.Replace(opLoop(""), c.from, fmt.Sprintf(c.to, disp), 1)
			bs := parseBlocks(t, src)
			k, err := Generate(&Nest{Header: 0x1000, Blocks: map[uint64]*gvinst.VBlock{0x1000: bs[0x1000]}})
			if err != nil {
				t.Fatal(err)
			}
			if c.folded && !strings.Contains(k.PTX, ", 15;") {
				t.Errorf("%s: no site check tests 16-byte alignment\n%s", c.name, numbered(k.PTX))
			}
			if got := strings.Contains(k.PTX, "$Lal"); got == c.folded {
				t.Errorf("%s: an explicit alignment test: %v, want %v", c.name, got, !c.folded)
			}
			mem, _ := setupWith(t, make([]byte, opIters*48))
			in := LaunchInput{Count: opIters - 1}
			for _, l := range k.LiveIns {
				in.Values = append(in.Values, map[gvinst.Reg]uint64{gvinst.S6: dataBase, gvinst.S7: dataBase + 0x20000, gvinst.S2: opIters * 48}[l.Slot])
				in.Steps = append(in.Steps, map[gvinst.Reg]uint64{gvinst.S0: 48}[l.Slot])
			}
			for range k.Sites {
				in.Sites = append(in.Sites, Range{dataBase, dataBase + 0x40000})
			}
			m, err := ctx.LoadModule(k.PTX)
			if err != nil {
				t.Fatalf("%v\n%s", err, numbered(k.PTX))
			}
			fn, _ := m.Function(k.Name)
			_, err = Launch(ctx, fn, k, mem, in, nil)
			ke, isKE := err.(*KernelError)
			switch {
			case disp%16 == 0 && err != nil:
				t.Errorf("%s disp %d: aligned, got %v", c.name, disp, err)
			case disp%16 != 0 && (!isKE || ke.Code != ErrCodeAlign || ke.X86 != 0x1000):
				t.Errorf("%s disp %d: got %v, want an alignment error at 0x1000", c.name, disp, err)
			}
		}
	}
}

// opType is the main type of an op's text, such as "f64".
func opType(op string) string {
	name := strings.Fields(op)[0]
	parts := strings.Split(name, ".")
	for _, p := range parts[1:] {
		if p == "f32" || p == "f64" {
			return p
		}
	}
	return ""
}

// nanEqual reports whether w and g differ only in NaN lanes of type typ.
func nanEqual(typ string, w, g []byte) bool {
	switch typ {
	case "f64":
		for i := 0; i < 16; i += 8 {
			a, b := binary.LittleEndian.Uint64(w[i:]), binary.LittleEndian.Uint64(g[i:])
			if a != b && !(math.IsNaN(math.Float64frombits(a)) && math.IsNaN(math.Float64frombits(b))) {
				return false
			}
		}
		return true
	case "f32":
		for i := 0; i < 16; i += 4 {
			a, b := binary.LittleEndian.Uint32(w[i:]), binary.LittleEndian.Uint32(g[i:])
			fa, fb := math.Float32frombits(a), math.Float32frombits(b)
			if a != b && !(fa != fa && fb != fb) {
				return false
			}
		}
		return true
	}
	return false
}

var _ = fmt.Sprintf
