package profile

import (
	"strings"

	"github.com/gxbit/gxbit/gvinst"
)

// Calls to memset inside loop nests (RATIONALE).
//
// gcc turns the zeroing of a row that a loop then accumulates into (the
// first product of two chained ones: tmp[i][j] = 0 before the sum over k)
// into a call of memset, and a nest holding a call is no candidate: the
// callee is code the analyses do not see. memset's effect is known and
// simple, so inside loop nests phase 1 and phase 2 replace the call by
// what it does, as one GVInst string store: rax = rdi, then rdx bytes of
// sil from rdi upward (REPSTOS.u8 with rcx = rdx). The collector records
// its footprint like any rep stos, the dependence test sees the row it
// writes, and ptxgen lowers it. The CPU engines outside the nests still
// call the library's memset; the two differ only in registers the ABI
// lets a callee clobber (rcx, rdx, rsi, rdi, r8–r11 and the SSE
// registers) and in the return address the call leaves below the stack
// pointer, neither of which a correct caller reads. The string store runs
// upward only with the direction flag clear, as the ABI has it at every
// call (phase 2's kernels check it before each launch).
//
// A call is to memset when its target is a function symbol named memset
// (or one of glibc's implementations of it, __memset_<variant>, not the
// _chk ones, which take a fourth argument), or a PLT stub — jmp through a
// pointer in memory — whose pointer holds such a symbol's address: in a
// static glibc program memset is an IFUNC that the start-up code resolves
// into the stub's slot before main runs.

// KnownCalls recognises calls to functions whose effect phase 1 and phase
// 2 model without running them (memset). It reads the guest's memory, so
// ask after the program's start-up code ran.
type KnownCalls struct {
	code   gvinst.Translator
	mem    *gvinst.Memory
	byAddr map[uint64]string
	memset map[uint64]bool // answers so far, by call target
}

// NewKnownCalls makes a recogniser over the guest's code (lifted by code),
// memory and function symbols.
func NewKnownCalls(code gvinst.Translator, mem *gvinst.Memory, symbols []Symbol) *KnownCalls {
	k := &KnownCalls{code: code, mem: mem, byAddr: map[uint64]string{}, memset: map[uint64]bool{}}
	for _, s := range symbols {
		if isMemsetName(s.Name) || k.byAddr[s.Addr] == "" {
			k.byAddr[s.Addr] = s.Name
		}
	}
	return k
}

// isMemsetName reports whether a function symbol is memset or one of
// glibc's implementations of it.
func isMemsetName(name string) bool {
	return name == "memset" || strings.HasPrefix(name, "__memset_") && !strings.Contains(name, "chk")
}

// Memset reports whether a call to target runs memset.
func (k *KnownCalls) Memset(target uint64) bool {
	if k == nil {
		return false
	}
	if v, ok := k.memset[target]; ok {
		return v
	}
	v := isMemsetName(k.byAddr[target])
	if !v {
		if slot, ok := k.stubSlot(target); ok {
			if to, err := k.mem.Load(slot, 8); err == nil {
				v = isMemsetName(k.byAddr[to])
			}
		}
	}
	k.memset[target] = v
	return v
}

// stubSlot returns the address of the pointer a PLT stub at addr jumps
// through: a block that only loads a pointer from a constant address and
// jumps to it.
func (k *KnownCalls) stubSlot(addr uint64) (uint64, bool) {
	vb, err := k.code.Translate(addr)
	if err != nil || vb == nil || len(vb.Insts) != 3 {
		return 0, false
	}
	li, ld, jmp := &vb.Insts[0], &vb.Insts[1], &vb.Insts[2]
	if li.Op != gvinst.OpLi || ld.Op != gvinst.OpLd || ld.Type != gvinst.U64 || ld.Src[0] != li.Dst ||
		jmp.Op != gvinst.OpJmpR || jmp.Src[0] != ld.Dst {
		return 0, false
	}
	return uint64(li.Imm + ld.Imm), true
}

// InlineMemset replaces the call ending vb, when it calls memset (k), by
// memset's effect (see the RATIONALE above) and a jump to the return
// address, and reports whether it did. vb is changed in place; its
// instructions are not optimized afterwards.
func InlineMemset(vb *gvinst.VBlock, k *KnownCalls) bool {
	n := len(vb.Insts)
	if k == nil || n == 0 {
		return false
	}
	call := vb.Insts[n-1]
	if call.Op != gvinst.OpCall || !k.Memset(call.Target[0]) {
		return false
	}
	// The call's own instructions (pushing the return address) go too.
	start := n - 1
	for start > 0 && vb.Insts[start-1].X86 == call.X86 {
		start--
	}
	nv := vb.NumVRegs()
	v := func() gvinst.Reg { nv++; return gvinst.VReg(nv - 1) }
	dst, val, cnt := v(), v(), v()
	x := call.X86
	insts := append(vb.Insts[:start:start],
		gvinst.Inst{Op: gvinst.OpGet, Type: gvinst.U64, Dst: dst, Src: [4]gvinst.Reg{gvinst.S7}, X86: x},
		gvinst.Inst{Op: gvinst.OpGet, Type: gvinst.U64, Dst: val, Src: [4]gvinst.Reg{gvinst.S6}, X86: x},
		gvinst.Inst{Op: gvinst.OpGet, Type: gvinst.U64, Dst: cnt, Src: [4]gvinst.Reg{gvinst.S2}, X86: x},
		gvinst.Inst{Op: gvinst.OpPut, Type: gvinst.U64, Dst: gvinst.S0, Src: [4]gvinst.Reg{val}, X86: x},
		gvinst.Inst{Op: gvinst.OpPut, Type: gvinst.U64, Dst: gvinst.S1, Src: [4]gvinst.Reg{cnt}, X86: x},
		gvinst.Inst{Op: gvinst.OpRepStos, Type: gvinst.U8, X86: x},
		gvinst.Inst{Op: gvinst.OpPut, Type: gvinst.U64, Dst: gvinst.S0, Src: [4]gvinst.Reg{dst}, X86: x},
		gvinst.Inst{Op: gvinst.OpJmp, Target: [2]uint64{call.Target[1]}, X86: x},
	)
	vb.Insts = insts
	return true
}

// inliningCode is Code with the memset calls of k inlined (InlineMemset).
type inliningCode struct {
	Code
	k *KnownCalls
}

func (c inliningCode) Translate(addr uint64) (*gvinst.VBlock, error) {
	vb, err := c.Code.Translate(addr)
	if err == nil && vb != nil {
		vb = inlined(vb, c.k)
	}
	return vb, err
}

func (c inliningCode) LiftInst(addr uint64) (*gvinst.VBlock, error) {
	vb, err := c.Code.LiftInst(addr)
	if err == nil && vb != nil {
		vb = inlined(vb, c.k)
	}
	return vb, err
}

// inlined returns vb with its memset call inlined, as a copy (the
// lifter's blocks may be cached and shared).
func inlined(vb *gvinst.VBlock, k *KnownCalls) *gvinst.VBlock {
	if n := len(vb.Insts); n == 0 || vb.Insts[n-1].Op != gvinst.OpCall || !k.Memset(vb.Insts[n-1].Target[0]) {
		return vb
	}
	cp := *vb
	cp.Insts = append([]gvinst.Inst(nil), vb.Insts...)
	InlineMemset(&cp, k)
	return &cp
}
