package jit

import (
	"fmt"
	"strings"

	"github.com/gxbit/gxbit/gvinst"
	"golang.org/x/arch/x86/x86asm"
)

// Disassemble compiles vb as the engine would (without a breakpoint) and
// returns its machine code as text: one host instruction a line, with its
// offset, and the GVInst instruction each run of host code comes from, so
// that a reader can count host instructions per guest instruction. It is
// for looking at the code (gxbit lift --jit); it runs nothing. With no
// Memory, its TLB probes find the TLBs through the machine's pointers,
// where a running engine's address the entries from r15 with one
// displacement (compiler.tlbFromMachine), one instruction fewer.
func Disassemble(vb *gvinst.VBlock) (string, error) {
	if len(vb.Insts) == 0 {
		return "", fmt.Errorf("vblock %#x is empty", vb.Addr)
	}
	return disassembleTrace(singleTrace(vb))
}

// disassembleTrace is Disassemble of the unit of t.
func disassembleTrace(t *traceUnit) (string, error) {
	vb := t.vb
	cu, err := compileTrace(t, 0, false, 0, unitEnv{})
	if err != nil {
		return "", err
	}
	starts := map[int]string{cu.entryGo: "entry (Go)"}
	for _, at := range cu.marks {
		starts[at.pos] = at.label(vb)
	}
	for i, r := range cu.resume {
		if r >= 0 {
			starts[r] += fmt.Sprintf(" resume after %d", i)
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "unit %#x..%#x: %d bytes, %d GVInst compiled, %d callouts\n", vb.Addr, vb.End, len(cu.code), cu.nativeOps, cu.nCallouts)
	code := cu.code
	for pc := 0; pc < len(code); {
		if s, ok := starts[pc]; ok {
			fmt.Fprintf(&sb, "  ; %s\n", strings.TrimSpace(s))
		}
		in, err := x86asm.Decode(code[pc:], 64)
		if err != nil {
			fmt.Fprintf(&sb, "  %4x: (byte %#02x: %v)\n", pc, code[pc], err)
			pc++
			continue
		}
		fmt.Fprintf(&sb, "  %4x: %s\n", pc, x86asm.IntelSyntax(in, 0, nil))
		pc += in.Len
	}
	return sb.String(), nil
}
