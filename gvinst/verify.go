package gvinst

import "fmt"

// VerifyError reports an ill-formed instruction in a VBlock.
type VerifyError struct {
	Block uint64 // the VBlock's guest address
	Index int    // the instruction's index in the block
	Inst  Inst
	Msg   string
}

func (e *VerifyError) Error() string {
	return fmt.Sprintf("vblock %#x: inst %d (%s): %s", e.Block, e.Index, FormatInst(&e.Inst), e.Msg)
}

// Verify checks that b is well formed: every op is defined and has types and
// modifiers its table entry allows, wide values sit on slot pairs, guest
// slots appear where GET and PUT need them, every virtual register is written
// before it is read, and exactly the last instruction ends the block.
func Verify(b *VBlock) error {
	if len(b.Insts) == 0 {
		return &VerifyError{Block: b.Addr, Index: -1, Msg: "empty block"}
	}
	var defined vregTable[struct{}] // the virtual registers written so far
	for i := range b.Insts {
		in := &b.Insts[i]
		fail := func(format string, args ...any) error {
			return &VerifyError{Block: b.Addr, Index: i, Inst: *in, Msg: fmt.Sprintf(format, args...)}
		}
		if in.Op <= OpInvalid || in.Op >= numOps {
			return fail("undefined op %d", in.Op)
		}
		info := in.Op.Info()
		if in.Type == TypeNone && info.Types != TNone || !info.Types.Accepts(in.Type) && !(in.Type == TypeNone && info.Types == TNone) {
			return fail("type .%s not allowed for %s", in.Type, info.Name)
		}
		if info.SrcType != TNone && !info.SrcType.Accepts(in.SrcType) {
			return fail("source type .%s not allowed for %s", in.SrcType, info.Name)
		}
		if names := modNames(info.Mod); info.Mod != ModNone && int(in.Mod) >= len(names) {
			return fail("modifier %d out of range", in.Mod)
		}
		if in.HasImm && !hasOperand(info, OpdSrcImm) {
			return fail("immediate operand not allowed")
		}
		if end := info.Effects&EffEnd != 0; end != (i == len(b.Insts)-1) {
			if end {
				return fail("control transfer before the end of the block")
			}
			return fail("block does not end with a control transfer")
		}
		si := 0
		for _, k := range info.Operands {
			switch k {
			case OpdSrc, OpdMem, OpdSrcImm:
				if k == OpdSrcImm && in.HasImm {
					si++
					continue
				}
				r, t := in.Src[si], in.srcType(si)
				si++
				if err := checkSlot(r, t); err != "" {
					return fail("source %s: %s", r, err)
				}
				if r.IsVirtual() {
					for s := 0; s < t.Slots(); s++ {
						if !defined.has(r + Reg(s)) {
							return fail("%s read before it is written", r+Reg(s))
						}
					}
				}
				if in.Op == OpGet && r.IsVirtual() {
					return fail("GET reads a guest slot, not %s", r)
				}
			}
		}
		if hasOperand(info, OpdDst) {
			t := in.DstType()
			if err := checkSlot(in.Dst, t); err != "" {
				return fail("destination %s: %s", in.Dst, err)
			}
			if in.Op == OpPut && in.Dst.IsVirtual() {
				return fail("PUT writes a guest slot, not %s", in.Dst)
			}
			for s := 0; s < t.Slots(); s++ {
				if d := in.Dst + Reg(s); d.IsVirtual() {
					defined.set(d, struct{}{})
				}
			}
		}
	}
	return nil
}

func hasOperand(info *OpInfo, k OperandKind) bool {
	for _, o := range info.Operands {
		if o == k {
			return true
		}
	}
	return false
}

// checkSlot checks that a value of type t can live at r: a wide value needs a
// virtual pair or the start of a guest pair (xN or frN).
func checkSlot(r Reg, t Type) string {
	if r.IsVirtual() {
		return ""
	}
	if r >= NumGuestSlots {
		return "not a register"
	}
	if !startsGuestValue(r) {
		return "the second half of a register pair"
	}
	if t.IsWide() && !((r >= X0 && r < FSBase) || r >= FR0) {
		return fmt.Sprintf("a .%s value needs an xN or frN pair", t)
	}
	return ""
}
