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

// Calls to memcpy (RATIONALE). gcc -O2 turns a loop that copies a row
// (blur8's a[i][j] = b[i][j] over j) into a call of memcpy per row, and
// the copy nest would be no candidate. memcpy is modelled the same way:
// rax = rdi, then rdx bytes from rsi to rdi as one string copy
// (REPMOVS.u8). memcpy on overlapping buffers is undefined in C, but
// glibc's (the same code as its memmove) copies them as memmove does,
// while a forward rep movsb would copy bytes it already overwrote; so the
// inlined copy runs downward, from the last byte, where the destination
// starts inside the source (the direction flag set for the copy and
// cleared after it), and is memmove exactly on the CPU. A kernel copies
// upward only: it fails the launch (ptxgen.ErrCodeOverlap) where a call's
// source and destination overlap, and the CPU runs the loop instead.
// Status flags, which a call leaves undefined, are cleared.

// The function kinds KnownCalls recognises.
const (
	callUnknown = iota
	callMemset
	callMemcpy
)

// KnownCalls recognises calls to functions whose effect phase 1 and phase
// 2 model without running them (memset, memcpy). It reads the guest's
// memory, so ask after the program's start-up code ran.
type KnownCalls struct {
	code   gvinst.Translator
	mem    *gvinst.Memory
	byAddr map[uint64]int // the kind of the function at an address, by its symbols
	known  map[uint64]int // answers so far, by call target
}

// NewKnownCalls makes a recogniser over the guest's code (lifted by code),
// memory and function symbols.
func NewKnownCalls(code gvinst.Translator, mem *gvinst.Memory, symbols []Symbol) *KnownCalls {
	k := &KnownCalls{code: code, mem: mem, byAddr: map[uint64]int{}, known: map[uint64]int{}}
	for _, s := range symbols {
		// Aliases share an address (glibc's memcpy variants are its
		// memmove's): any name that says what it does will do.
		if kind := kindOfName(s.Name); kind != callUnknown {
			k.byAddr[s.Addr] = kind
		}
	}
	return k
}

// kindOfName says which known function a symbol names: memset or one of
// glibc's implementations of it (__memset_<variant>), memcpy or memmove
// or theirs; not the _chk forms, which take another argument, nor the
// wide or mempcpy ones, which return something else.
func kindOfName(name string) int {
	switch {
	case strings.Contains(name, "chk"):
		return callUnknown
	case name == "memset" || strings.HasPrefix(name, "__memset_"):
		return callMemset
	case name == "memcpy" || name == "memmove" || strings.HasPrefix(name, "__memcpy_") || strings.HasPrefix(name, "__memmove_"):
		return callMemcpy
	}
	return callUnknown
}

// kind says which known function a call to target runs.
func (k *KnownCalls) kind(target uint64) int {
	if k == nil {
		return callUnknown
	}
	if v, ok := k.known[target]; ok {
		return v
	}
	v := k.byAddr[target]
	if v == callUnknown {
		if slot, ok := k.stubSlot(target); ok {
			if to, err := k.mem.Load(slot, 8); err == nil {
				v = k.byAddr[to]
			}
		}
	}
	k.known[target] = v
	return v
}

// Known reports whether a call to target runs a function the analyses
// model (memset or memcpy), which InlineCall inlines.
func (k *KnownCalls) Known(target uint64) bool { return k.kind(target) != callUnknown }

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

// InlineCall replaces the call ending vb, when it calls memset or memcpy
// (k), by the function's effect (see the RATIONALE above) and a jump to
// the return address, and reports whether it did. vb is changed in
// place; its instructions are not optimized afterwards.
func InlineCall(vb *gvinst.VBlock, k *KnownCalls) bool {
	n := len(vb.Insts)
	if k == nil || n == 0 {
		return false
	}
	call := vb.Insts[n-1]
	if call.Op != gvinst.OpCall {
		return false
	}
	kind := k.kind(call.Target[0])
	if kind == callUnknown {
		return false
	}
	// The call's own instructions (pushing the return address) go too.
	start := n - 1
	for start > 0 && vb.Insts[start-1].X86 == call.X86 {
		start--
	}
	nv := vb.NumVRegs()
	v := func() gvinst.Reg { nv++; return gvinst.VReg(nv - 1) }
	x := call.X86
	get := func(d, slot gvinst.Reg) gvinst.Inst {
		return gvinst.Inst{Op: gvinst.OpGet, Type: gvinst.U64, Dst: d, Src: [4]gvinst.Reg{slot}, X86: x}
	}
	put := func(slot, r gvinst.Reg) gvinst.Inst {
		return gvinst.Inst{Op: gvinst.OpPut, Type: gvinst.U64, Dst: slot, Src: [4]gvinst.Reg{r}, X86: x}
	}
	insts := vb.Insts[:start:start]
	dst, cnt := v(), v()
	if kind == callMemset {
		val := v()
		insts = append(insts, get(dst, gvinst.S7), get(val, gvinst.S6), get(cnt, gvinst.S2),
			put(gvinst.S0, val), put(gvinst.S1, cnt),
			gvinst.Inst{Op: gvinst.OpRepStos, Type: gvinst.U8, X86: x})
	} else {
		// back = (dst - src) < n: the destination starts inside the
		// source, and the copy runs down from off = n-1.
		src, diff, back, last, zero, off, s, d, fl, sys, df, set := v(), v(), v(), v(), v(), v(), v(), v(), v(), v(), v(), v()
		insts = append(insts, get(dst, gvinst.S7), get(src, gvinst.S6), get(cnt, gvinst.S2),
			gvinst.Inst{Op: gvinst.OpSub, Type: gvinst.U64, Dst: diff, Src: [4]gvinst.Reg{dst, src}, X86: x},
			gvinst.Inst{Op: gvinst.OpCmp, Type: gvinst.U64, Mod: uint8(gvinst.CmpLt), Dst: back, Src: [4]gvinst.Reg{diff, cnt}, X86: x},
			gvinst.Inst{Op: gvinst.OpSub, Type: gvinst.U64, Dst: last, Src: [4]gvinst.Reg{cnt}, HasImm: true, Imm: 1, X86: x},
			gvinst.Inst{Op: gvinst.OpLi, Type: gvinst.U64, Dst: zero, X86: x},
			gvinst.Inst{Op: gvinst.OpSelect, Type: gvinst.U64, Dst: off, Src: [4]gvinst.Reg{back, last, zero}, X86: x},
			gvinst.Inst{Op: gvinst.OpAdd, Type: gvinst.U64, Dst: s, Src: [4]gvinst.Reg{src, off}, X86: x},
			gvinst.Inst{Op: gvinst.OpAdd, Type: gvinst.U64, Dst: d, Src: [4]gvinst.Reg{dst, off}, X86: x},
			put(gvinst.S6, s), put(gvinst.S7, d), put(gvinst.S1, cnt),
			// RFLAGS' system bits, DF cleared, then DF = back.
			gvinst.Inst{Op: gvinst.OpGetFlags, Dst: fl, X86: x},
			gvinst.Inst{Op: gvinst.OpAnd, Type: gvinst.U64, Dst: sys, Src: [4]gvinst.Reg{fl}, HasImm: true, Imm: int64(^(gvinst.FlagsArith | gvinst.FlagDF) & 0x7fffffff), X86: x},
			gvinst.Inst{Op: gvinst.OpShl, Type: gvinst.U64, Dst: df, Src: [4]gvinst.Reg{back}, HasImm: true, Imm: 10, X86: x},
			gvinst.Inst{Op: gvinst.OpOr, Type: gvinst.U64, Dst: set, Src: [4]gvinst.Reg{sys, df}, X86: x},
			gvinst.Inst{Op: gvinst.OpSetFlags, Src: [4]gvinst.Reg{set}, X86: x},
			gvinst.Inst{Op: gvinst.OpRepMovs, Type: gvinst.U8, X86: x},
			gvinst.Inst{Op: gvinst.OpSetFlags, Src: [4]gvinst.Reg{sys}, X86: x})
	}
	insts = append(insts, put(gvinst.S0, dst), gvinst.Inst{Op: gvinst.OpJmp, Target: [2]uint64{call.Target[1]}, X86: x})
	vb.Insts = insts
	return true
}

// inliningCode is Code with the memset and memcpy calls of k inlined
// (InlineCall).
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

// inlined returns vb with its memset or memcpy call inlined, as a copy
// (the lifter's blocks may be cached and shared).
func inlined(vb *gvinst.VBlock, k *KnownCalls) *gvinst.VBlock {
	if n := len(vb.Insts); n == 0 || vb.Insts[n-1].Op != gvinst.OpCall || !k.Known(vb.Insts[n-1].Target[0]) {
		return vb
	}
	cp := *vb
	cp.Insts = append([]gvinst.Inst(nil), vb.Insts...)
	InlineCall(&cp, k)
	return &cp
}
