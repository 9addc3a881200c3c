package gpusim

import (
	"testing"

	"github.com/gxbit/gxbit/ptx"
)

// opExamples holds one instruction of every opcode in the ptx package's
// table, over the registers tableModule declares. TestEveryOpDecodes
// fails when the table gains an opcode without an example here.
var opExamples = map[string]string{
	"mov":        "mov.u32 %r0, %r1;",
	"ld":         "ld.shared.u32 %r0, [sh];",
	"ldu":        "ldu.global.u32 %r0, [%rd0];",
	"st":         "st.shared.u32 [sh], %r0;",
	"cvt":        "cvt.u64.u32 %rd0, %r0;",
	"cvta":       "cvta.shared.u64 %rd0, %rd1;",
	"add":        "add.u32 %r0, %r1, %r2;",
	"addc":       "addc.u32 %r0, %r1, %r2;",
	"sub":        "sub.u32 %r0, %r1, %r2;",
	"subc":       "subc.u32 %r0, %r1, %r2;",
	"mul":        "mul.lo.u32 %r0, %r1, %r2;",
	"mad":        "mad.lo.u32 %r0, %r1, %r2, %r3;",
	"madc":       "madc.lo.u32 %r0, %r1, %r2, %r3;",
	"mul24":      "mul24.lo.u32 %r0, %r1, %r2;",
	"mad24":      "mad24.lo.u32 %r0, %r1, %r2, %r3;",
	"div":        "div.u32 %r0, %r1, %r2;",
	"rem":        "rem.u32 %r0, %r1, %r2;",
	"abs":        "abs.s32 %r0, %r1;",
	"neg":        "neg.s32 %r0, %r1;",
	"min":        "min.u32 %r0, %r1, %r2;",
	"max":        "max.u32 %r0, %r1, %r2;",
	"fma":        "fma.rn.f32 %f0, %f1, %f2, %f3;",
	"rcp":        "rcp.rn.f32 %f0, %f1;",
	"sqrt":       "sqrt.rn.f32 %f0, %f1;",
	"rsqrt":      "rsqrt.approx.f32 %f0, %f1;",
	"ex2":        "ex2.approx.f32 %f0, %f1;",
	"lg2":        "lg2.approx.f32 %f0, %f1;",
	"sin":        "sin.approx.f32 %f0, %f1;",
	"cos":        "cos.approx.f32 %f0, %f1;",
	"copysign":   "copysign.f32 %f0, %f1, %f2;",
	"testp":      "testp.finite.f32 %p0, %f0;",
	"and":        "and.b32 %r0, %r1, %r2;",
	"or":         "or.b32 %r0, %r1, %r2;",
	"xor":        "xor.b32 %r0, %r1, %r2;",
	"not":        "not.b32 %r0, %r1;",
	"cnot":       "cnot.b32 %r0, %r1;",
	"shl":        "shl.b32 %r0, %r1, 3;",
	"shr":        "shr.u32 %r0, %r1, 3;",
	"bfe":        "bfe.u32 %r0, %r1, 2, 3;",
	"bfi":        "bfi.b32 %r0, %r1, %r2, 2, 3;",
	"brev":       "brev.b32 %r0, %r1;",
	"bfind":      "bfind.u32 %r0, %r1;",
	"shf":        "shf.l.wrap.b32 %r0, %r1, %r2, 3;",
	"sad":        "sad.u32 %r0, %r1, %r2, %r3;",
	"popc":       "popc.b32 %r0, %r1;",
	"clz":        "clz.b32 %r0, %r1;",
	"prmt":       "prmt.b32 %r0, %r1, %r2, 0x3210;",
	"setp":       "setp.lt.u32 %p0, %r0, %r1;",
	"set":        "set.lt.u32.u32 %r0, %r1, %r2;",
	"selp":       "selp.u32 %r0, %r1, %r2, %p0;",
	"slct":       "slct.u32.s32 %r0, %r1, %r2, %r3;",
	"bra":        "bra $Lend;",
	"call":       "call f;",
	"ret":        "ret;",
	"exit":       "exit;",
	"trap":       "trap;",
	"bar":        "bar.sync 0;",
	"barrier":    "barrier.sync 0;",
	"membar":     "membar.gl;",
	"fence":      "fence.sc.gpu;",
	"atom":       "atom.shared.add.u32 %r0, [sh], 1;",
	"red":        "red.shared.add.u32 [sh], 1;",
	"shfl":       "shfl.sync.down.b32 %r0, %r1, 1, 31, -1;",
	"vote":       "vote.sync.any.pred %p0, %p1, -1;",
	"activemask": "activemask.b32 %r0;",
	"nanosleep":  "nanosleep.u32 100;",
	"prefetch":   "prefetch.global.L2 [%rd0];",
}

// tableModule is a module whose kernel runs inst.
func tableModule(inst string) string {
	return `.version 8.0
.target sm_90
.address_size 64
.func f()
{
	ret;
}
.visible .entry k()
{
	.reg .pred %p<4>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	.reg .f32 %f<4>;
	.shared .align 4 .b32 sh[32];
	` + inst + `
$Lend:
	ret;
}
`
}

// TestEveryOpDecodes walks the ptx package's op table: every opcode it
// lists loads on the simulator (parses, checks, decodes), so the table and
// the decoder cannot drift apart.
func TestEveryOpDecodes(t *testing.T) {
	h := newHarness(t, Options{})
	for _, info := range ptx.Ops() {
		ex, ok := opExamples[info.Name]
		if !ok {
			t.Errorf("opcode %s of the ptx table has no example in opExamples", info.Name)
			continue
		}
		if _, err := h.ctx.LoadModule(tableModule(ex)); err != nil {
			t.Errorf("%s: %v", ex, err)
		}
	}
	if len(opExamples) != len(ptx.Ops()) {
		t.Errorf("%d examples for %d opcodes: an example names an opcode the table lacks", len(opExamples), len(ptx.Ops()))
	}
}
