package jit

import "github.com/gxbit/gxbit/gvinst"

// nativeMore emits the instructions the files beside compile.go compile:
// the flags (compile_flags.go), the wide multiplications and divisions
// (compile_muldiv.go), the alignment check, and the packed SSE operations
// (compile_sse.go). It reports false for an instruction that stays a
// callout.
func (c *compiler) nativeMore(idx int, in *gvinst.Inst) bool {
	switch in.Op {
	case gvinst.OpGetCC, gvinst.OpGetFlags, gvinst.OpSetFlags, gvinst.OpFlags:
		return c.flagsOps(idx, in)
	}
	return false
}
