package gvinst

import (
	"fmt"
	"testing"
)

// textBlocks is a Translator over parsed blocks.
type textBlocks map[uint64]*VBlock

func (s textBlocks) Translate(addr uint64) (*VBlock, error) {
	if b, ok := s[addr]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("no block at %#x", addr)
}

// TestLiveAt scans code after a loop: a scalar single-precision op
// reads xmm0's low half and merges its result back (no read of the high
// half), which a full write then ends; a loop runs back to its header
// (scanned once); a call is followed into the callee and back; the
// flags are written whole before the system call reads everything.
func TestLiveAt(t *testing.T) {
	bs, err := Parse(`
vblock 0x100..0x110:
  # 0x100: mulss xmm0, xmm0
  GET.u64 v0, x0
  MUL.f32 v1, v0, v0
  GET.u64 v2, x0
  AND.b64 v3, v2, -4294967296
  OR.b64 v4, v3, v1
  PUT.u64 x0, v4
  # 0x104: add rbx, rcx
  GET.u64 v5, s3
  GET.u64 v6, s1
  ADD.u64 v7, v5, v6
  PUT.u64 s3, v7
  FLAGS.add.u64 v5, v6, v7, v5
  JMP 0x110
vblock 0x110..0x120:
  # 0x110: mov edx, 1; test rsi, rsi; jne 0x110
  LI.u64 v0, 1
  PUT.u64 s2, v0
  GET.u64 v1, s6
  CMP.ne.u64 v2, v1, 0
  BRANCH v2, 0x110, 0x120
vblock 0x120..0x130:
  # 0x120: pxor xmm0, xmm0; call 0x200
  LI.u64 v0, 0
  JOIN.b128 v1, v0, v0
  PUT.b128 x0, v1
  CALL 0x200, 0x130
vblock 0x130..0x132:
  # 0x130: syscall
  SYSCALL 0x132
vblock 0x200..0x210:
  # 0x200: mov r8, 0; ret
  LI.u64 v0, 0
  PUT.u64 s8, v0
  GET.u64 v1, s4
  RET v1
`)
	if err != nil {
		t.Fatal(err)
	}
	s := textBlocks{}
	for _, b := range bs {
		s[b.Addr] = b
	}
	l := LiveAt(s, 0x100)
	for _, c := range []struct {
		r          Reg
		slot, high bool
	}{
		{XReg(0), true, false}, // the low half read, the high half kept, then written
		{XReg(0) + 1, false, false},
		{S3, true, true},
		{SReg(6), true, true},
		{SReg(2), false, false}, // written in the loop before the system call
		{SReg(8), false, false}, // written in the callee
		{CCOp, false, false},
		{S0, true, true}, // the system call reads it
	} {
		if l.Slot[c.r] != c.slot || l.High[c.r] != c.high {
			t.Errorf("%s: live %v, high %v; want %v, %v", c.r, l.Slot[c.r], l.High[c.r], c.slot, c.high)
		}
	}
	// Code that cannot be translated: everything not decided is live.
	if l := LiveAt(s, 0x999); !l.Slot[S0] || !l.High[XReg(3)] {
		t.Error("untranslatable code: want every slot live")
	}
}
