package jit

// Instruction forms beyond the core table (asm.go's forms): the flags
// routine's bit tests and calls, and the SSE forms of compile_sse.go. Each
// is emitted with asm.encodeForm.
var (
	fmUcomisd  = form{prefix: 0x66, op: []byte{0x0f, 0x2e}, digit: -1} // ucomisd xmm, xmm/m64
	fmComisd   = form{prefix: 0x66, op: []byte{0x0f, 0x2f}, digit: -1} // comisd xmm, xmm/m64
	fmUcomiss  = form{op: []byte{0x0f, 0x2e}, digit: -1}               // ucomiss xmm, xmm/m32
	fmComiss   = form{op: []byte{0x0f, 0x2f}, digit: -1}               // comiss xmm, xmm/m32
	fmBtMR     = form{op: []byte{0x0f, 0xa3}, digit: -1}               // bt r/m, r
	fmCallM    = form{op: []byte{0xff}, digit: 2}                      // call r/m64
	fmTest8    = form{op: []byte{0x84}, digit: -1}                     // test r/m8, r8
	fmTest8MI  = form{op: []byte{0xf6}, digit: 0, imm: 1}              // test r/m8, imm8
	fmXorRM    = form{op: []byte{0x33}, digit: -1}                     // xor r, r/m
	fmMulM     = form{op: []byte{0xf7}, digit: 4}                      // mul r/m: rdx:rax = rax * r/m
	fmImulM    = form{op: []byte{0xf7}, digit: 5}                      // imul r/m: rdx:rax = rax * r/m, signed
	fmDivM     = form{op: []byte{0xf7}, digit: 6}                      // div r/m: rdx:rax / r/m
	fmIdivM    = form{op: []byte{0xf7}, digit: 7}                      // idiv r/m
	fmLeaRM    = form{op: []byte{0x8d}, digit: -1}                     // lea r, m
	fmTestMI   = form{op: []byte{0xf7}, digit: 0, imm: 4}              // test r/m, imm32
	fmMovzx8   = form{op: []byte{0x0f, 0xb6}, digit: -1}               // movzx r, r/m8
	fmMovdqu   = form{prefix: 0xf3, op: []byte{0x0f, 0x6f}, digit: -1} // movdqu xmm, xmm/m128
	fmMovdquMR = form{prefix: 0xf3, op: []byte{0x0f, 0x7f}, digit: -1} // movdqu m128, xmm
)

// More condition codes (asm.go has the common ones).
const (
	ccNO cond = 0x1
	ccS  cond = 0x8
	ccNS cond = 0x9
	ccP  cond = 0xa
	ccNP cond = 0xb
)

// push and pop a 64-bit register.
func (a *asm) push(r reg) {
	if r&8 != 0 {
		a.byte1(0x41)
	}
	a.byte1(0x50 + byte(r&7))
}

func (a *asm) pop(r reg) {
	if r&8 != 0 {
		a.byte1(0x41)
	}
	a.byte1(0x58 + byte(r&7))
}

// cqo sign-extends rax into rdx:rax.
func (a *asm) cqo() { a.b = append(a.b, 0x48, 0x99) }

// cdq sign-extends eax into edx:eax.
func (a *asm) cdq() { a.byte1(0x99) }
