package jit

import (
	"encoding/binary"
	"fmt"
)

// The host registers, numbered as the x86-64 encoding numbers them.
type reg uint8

const (
	rax reg = iota
	rcx
	rdx
	rbx
	rsp
	rbp
	rsi
	rdi
	r8
	r9
	r10
	r11
	r12
	r13
	r14
	r15
)

// mem is a memory operand: [base + index*scale + disp]. hasIndex is false
// for [base + disp].
type mem struct {
	base     reg
	index    reg
	scale    uint8 // 1, 2, 4 or 8
	hasIndex bool
	disp     int32
}

// operand is a register or a memory operand of an instruction's r/m field.
type operand struct {
	isMem bool
	r     reg
	m     mem
}

func regOp(r reg) operand { return operand{r: r} }
func memOp(m mem) operand { return operand{isMem: true, m: m} }

// mn names an instruction form of the encoder's table.
type mn uint8

// The instruction forms. The suffix says the operands: rm (reg, r/m: the
// register operand is the destination), mr (r/m, reg: the r/m operand is
// the destination), mi (r/m, imm32), m (r/m alone), mcl (r/m shifted by
// cl), mi8 (r/m, imm8).
const (
	mnInvalid mn = iota
	mnMovRM
	mnMovMR
	mnMovMR8
	mnMovzx8
	mnMovzx16
	mnMovsx8
	mnMovsx16
	mnMovsxd
	mnAddMR
	mnAddRM
	mnSubRM
	mnOrMR
	mnAndMR
	mnSubMR
	mnXorMR
	mnCmpMR
	mnTestMR
	mnAddMI
	mnOrMI
	mnAndMI
	mnSubMI
	mnXorMI
	mnCmpMI
	mnCmpMI8
	mnImulRM
	mnImulRMI // imul r, r/m, imm32 (69 /r)
	mnLea     // lea r, m (8D /r)
	mnCmpMR8  // cmp r/m8, r8 (38 /r)
	mnTestMI  // test r/m, imm32 (F7 /0)
	mnShlMCL
	mnShrMCL
	mnSarMCL
	mnNotM
	mnNegM
	mnMovMI
	mnRolMCL // rol r/m, cl (D3 /0; D2 for bytes: mnRol8MCL)
	mnRorMCL
	mnRol8MCL
	mnRor8MCL
	mnJmpM    // jmp r/m64 (FF /4)
	mnMovssRM // movss xmm, m32 (F3 0F 10)
	mnMovdRX  // movd r/m32, xmm (66 0F 7E)
	mnSqrtsd
	mnSqrtss
	mnCvtsi2sd // REX.W (size 8) for a 64-bit source
	mnCvtsi2ss
	mnCvttsd2si
	mnCvtsd2si
	mnCvttss2si
	mnCvtss2si
	mnCvtss2sd
	mnCvtsd2ss
	mnMovsdRM // movsd xmm, xmm/m64 (F2 0F 10)
	mnMovsdMR // movsd m64, xmm (F2 0F 11)
	mnMovqRX  // movq r/m64, xmm (66 REX.W 0F 7E)
	mnMovqXR  // movq xmm, r/m64 (66 REX.W 0F 6E)
	mnAddsd   // F2 0F 58
	mnMulsd   // F2 0F 59
	mnSubsd   // F2 0F 5C
	mnDivsd   // F2 0F 5E
	mnAddss   // F3 0F 58
	mnMulss   // F3 0F 59
	mnSubss   // F3 0F 5C
	mnDivss   // F3 0F 5E
	mnLdmxcsr // 0F AE /2
	mnStmxcsr // 0F AE /3
	mnCount
)

// form is one row of the encoding table: an optional mandatory prefix, the
// opcode bytes, the /digit that fills the ModRM reg field (or -1 when a
// register operand does), whether REX.W is part of the form, and the size
// of its immediate.
type form struct {
	prefix byte
	op     []byte
	digit  int8
	w      bool
	imm    int8
}

// forms is the encoder's one table: every instruction the compiler emits
// through encode. The integer forms take an operand size at the call (4 or
// 8 bytes; 2 adds the 0x66 prefix; 1 is a form of its own).
var forms = [mnCount]form{
	mnMovRM:     {op: []byte{0x8b}, digit: -1},
	mnMovMR:     {op: []byte{0x89}, digit: -1},
	mnMovMR8:    {op: []byte{0x88}, digit: -1},
	mnMovzx8:    {op: []byte{0x0f, 0xb6}, digit: -1},
	mnMovzx16:   {op: []byte{0x0f, 0xb7}, digit: -1},
	mnMovsx8:    {op: []byte{0x0f, 0xbe}, digit: -1},
	mnMovsx16:   {op: []byte{0x0f, 0xbf}, digit: -1},
	mnMovsxd:    {op: []byte{0x63}, digit: -1},
	mnAddMR:     {op: []byte{0x01}, digit: -1},
	mnAddRM:     {op: []byte{0x03}, digit: -1},
	mnSubRM:     {op: []byte{0x2b}, digit: -1},
	mnOrMR:      {op: []byte{0x09}, digit: -1},
	mnAndMR:     {op: []byte{0x21}, digit: -1},
	mnSubMR:     {op: []byte{0x29}, digit: -1},
	mnXorMR:     {op: []byte{0x31}, digit: -1},
	mnCmpMR:     {op: []byte{0x39}, digit: -1},
	mnTestMR:    {op: []byte{0x85}, digit: -1},
	mnAddMI:     {op: []byte{0x81}, digit: 0, imm: 4},
	mnOrMI:      {op: []byte{0x81}, digit: 1, imm: 4},
	mnAndMI:     {op: []byte{0x81}, digit: 4, imm: 4},
	mnSubMI:     {op: []byte{0x81}, digit: 5, imm: 4},
	mnXorMI:     {op: []byte{0x81}, digit: 6, imm: 4},
	mnCmpMI:     {op: []byte{0x81}, digit: 7, imm: 4},
	mnCmpMI8:    {op: []byte{0x83}, digit: 7, imm: 1},
	mnImulRM:    {op: []byte{0x0f, 0xaf}, digit: -1},
	mnImulRMI:   {op: []byte{0x69}, digit: -1, imm: 4},
	mnLea:       {op: []byte{0x8d}, digit: -1},
	mnCmpMR8:    {op: []byte{0x38}, digit: -1},
	mnTestMI:    {op: []byte{0xf7}, digit: 0, imm: 4},
	mnShlMCL:    {op: []byte{0xd3}, digit: 4},
	mnShrMCL:    {op: []byte{0xd3}, digit: 5},
	mnSarMCL:    {op: []byte{0xd3}, digit: 7},
	mnNotM:      {op: []byte{0xf7}, digit: 2},
	mnNegM:      {op: []byte{0xf7}, digit: 3},
	mnMovMI:     {op: []byte{0xc7}, digit: 0, imm: 4},
	mnRolMCL:    {op: []byte{0xd3}, digit: 0},
	mnRorMCL:    {op: []byte{0xd3}, digit: 1},
	mnRol8MCL:   {op: []byte{0xd2}, digit: 0},
	mnRor8MCL:   {op: []byte{0xd2}, digit: 1},
	mnJmpM:      {op: []byte{0xff}, digit: 4},
	mnMovssRM:   {prefix: 0xf3, op: []byte{0x0f, 0x10}, digit: -1},
	mnMovdRX:    {prefix: 0x66, op: []byte{0x0f, 0x7e}, digit: -1},
	mnSqrtsd:    {prefix: 0xf2, op: []byte{0x0f, 0x51}, digit: -1},
	mnSqrtss:    {prefix: 0xf3, op: []byte{0x0f, 0x51}, digit: -1},
	mnCvtsi2sd:  {prefix: 0xf2, op: []byte{0x0f, 0x2a}, digit: -1},
	mnCvtsi2ss:  {prefix: 0xf3, op: []byte{0x0f, 0x2a}, digit: -1},
	mnCvttsd2si: {prefix: 0xf2, op: []byte{0x0f, 0x2c}, digit: -1},
	mnCvtsd2si:  {prefix: 0xf2, op: []byte{0x0f, 0x2d}, digit: -1},
	mnCvttss2si: {prefix: 0xf3, op: []byte{0x0f, 0x2c}, digit: -1},
	mnCvtss2si:  {prefix: 0xf3, op: []byte{0x0f, 0x2d}, digit: -1},
	mnCvtss2sd:  {prefix: 0xf3, op: []byte{0x0f, 0x5a}, digit: -1},
	mnCvtsd2ss:  {prefix: 0xf2, op: []byte{0x0f, 0x5a}, digit: -1},
	mnMovsdRM:   {prefix: 0xf2, op: []byte{0x0f, 0x10}, digit: -1},
	mnMovsdMR:   {prefix: 0xf2, op: []byte{0x0f, 0x11}, digit: -1},
	mnMovqRX:    {prefix: 0x66, op: []byte{0x0f, 0x7e}, digit: -1, w: true},
	mnMovqXR:    {prefix: 0x66, op: []byte{0x0f, 0x6e}, digit: -1, w: true},
	mnAddsd:     {prefix: 0xf2, op: []byte{0x0f, 0x58}, digit: -1},
	mnMulsd:     {prefix: 0xf2, op: []byte{0x0f, 0x59}, digit: -1},
	mnSubsd:     {prefix: 0xf2, op: []byte{0x0f, 0x5c}, digit: -1},
	mnDivsd:     {prefix: 0xf2, op: []byte{0x0f, 0x5e}, digit: -1},
	mnAddss:     {prefix: 0xf3, op: []byte{0x0f, 0x58}, digit: -1},
	mnMulss:     {prefix: 0xf3, op: []byte{0x0f, 0x59}, digit: -1},
	mnSubss:     {prefix: 0xf3, op: []byte{0x0f, 0x5c}, digit: -1},
	mnDivss:     {prefix: 0xf3, op: []byte{0x0f, 0x5e}, digit: -1},
	mnLdmxcsr:   {op: []byte{0x0f, 0xae}, digit: 2},
	mnStmxcsr:   {op: []byte{0x0f, 0xae}, digit: 3},
}

// cond is an x86 condition code, as the low nibble of jcc, setcc and cmovcc
// encodes it.
type cond uint8

const (
	ccO  cond = 0x0
	ccB  cond = 0x2 // unsigned <
	ccAE cond = 0x3 // unsigned >=
	ccE  cond = 0x4
	ccNE cond = 0x5
	ccBE cond = 0x6 // unsigned <=
	ccA  cond = 0x7 // unsigned >
	ccL  cond = 0xc // signed <
	ccGE cond = 0xd
	ccLE cond = 0xe
	ccG  cond = 0xf
)

// asm accumulates machine code.
type asm struct {
	b []byte
}

func (a *asm) byte1(v byte)  { a.b = append(a.b, v) }
func (a *asm) u32(v uint32)  { a.b = binary.LittleEndian.AppendUint32(a.b, v) }
func (a *asm) u64(v uint64)  { a.b = binary.LittleEndian.AppendUint64(a.b, v) }
func (a *asm) pos() int      { return len(a.b) }
func (a *asm) bytes() []byte { return a.b }

// encode emits form f with operand size size (1, 2, 4 or 8; SSE forms
// ignore it), register r in the ModRM reg field (unless the form has a
// /digit) and rm in the r/m field, and imm when the form has one.
func (a *asm) encode(m mn, size int, r reg, rm operand, imm int64) {
	f := &forms[m]
	if f.op == nil {
		panic(fmt.Sprintf("jit: encoder table has no form %d", m))
	}
	a.emitForm(f, size, r, rm, imm, m == mnMovzx8 || m == mnMovsx8)
}

// encodeForm emits form f as encode does (for forms outside the table).
func (a *asm) encodeForm(f *form, size int, r reg, rm operand, imm int64) {
	a.emitForm(f, size, r, rm, imm, false)
}

// emitForm emits form f; byteSrc says that its r/m operand is a byte
// register even where size is not 1 (movzx, movsx).
func (a *asm) emitForm(f *form, size int, r reg, rm operand, imm int64, byteSrc bool) {
	if size == 2 {
		a.byte1(0x66)
	}
	if f.prefix != 0 {
		a.byte1(f.prefix)
	}
	regField := byte(r)
	if f.digit >= 0 {
		regField = byte(f.digit)
	}
	rex := byte(0)
	if size == 8 || f.w {
		rex |= 0x48
	}
	if regField&8 != 0 {
		rex |= 0x44
	}
	var base, index reg
	if rm.isMem {
		base = rm.m.base
		if rm.m.hasIndex {
			index = rm.m.index
			if index&8 != 0 {
				rex |= 0x42
			}
		}
	} else {
		base = rm.r
	}
	if base&8 != 0 {
		rex |= 0x41
	}
	// Byte operations on spl, bpl, sil, dil need a REX prefix to name them
	// rather than ah, ch, dh, bh.
	byteRM := size == 1 || byteSrc
	if byteRM && !rm.isMem && base >= 4 && base < 8 || size == 1 && f.digit < 0 && regField >= 4 && regField < 8 {
		rex |= 0x40
	}
	if rex != 0 {
		a.byte1(rex)
	}
	a.b = append(a.b, f.op...)
	a.modrm(regField&7, rm)
	switch f.imm {
	case 1:
		a.byte1(byte(imm))
	case 4:
		a.u32(uint32(imm))
	}
}

// modrm emits the ModRM byte, the SIB byte and the displacement for reg
// field r and operand rm.
func (a *asm) modrm(r byte, rm operand) {
	if !rm.isMem {
		a.byte1(0xc0 | r<<3 | byte(rm.r&7))
		return
	}
	m := rm.m
	var mod byte
	switch {
	case m.disp == 0 && m.base&7 != 5:
		mod = 0
	case m.disp >= -128 && m.disp < 128:
		mod = 1
	default:
		mod = 2
	}
	if m.hasIndex || m.base&7 == 4 {
		a.byte1(mod<<6 | r<<3 | 4)
		idx := byte(4) // none
		ss := byte(0)
		if m.hasIndex {
			idx = byte(m.index & 7)
			switch m.scale {
			case 2:
				ss = 1
			case 4:
				ss = 2
			case 8:
				ss = 3
			}
		}
		a.byte1(ss<<6 | idx<<3 | byte(m.base&7))
	} else {
		a.byte1(mod<<6 | r<<3 | byte(m.base&7))
	}
	switch mod {
	case 1:
		a.byte1(byte(int8(m.disp)))
	case 2:
		a.u32(uint32(m.disp))
	}
}

// movImm loads the 64-bit constant v into r in the shortest form.
func (a *asm) movImm(r reg, v uint64) {
	switch {
	case v <= 0xffffffff:
		if r&8 != 0 {
			a.byte1(0x41)
		}
		a.byte1(0xb8 + byte(r&7))
		a.u32(uint32(v))
	case int64(v) >= -1<<31 && int64(v) < 1<<31:
		a.encode(mnMovMI, 8, 0, regOp(r), int64(v))
	default:
		a.movImm64(r, v)
	}
}

// movImm64 is mov r, imm64 in its fixed 10-byte form.
func (a *asm) movImm64(r reg, v uint64) {
	rex := byte(0x48)
	if r&8 != 0 {
		rex |= 1
	}
	a.byte1(rex)
	a.byte1(0xb8 + byte(r&7))
	a.u64(v)
}

// jcc emits a conditional jump with a 32-bit displacement to be patched and
// returns the offset of that displacement.
func (a *asm) jcc(c cond) int {
	a.byte1(0x0f)
	a.byte1(0x80 + byte(c))
	at := a.pos()
	a.u32(0)
	return at
}

// jmp emits a jump with a 32-bit displacement to be patched and returns the
// offset of that displacement.
func (a *asm) jmp() int {
	a.byte1(0xe9)
	at := a.pos()
	a.u32(0)
	return at
}

// bind makes the rel32 displacement at offset at point to target (both
// offsets in this buffer).
func (a *asm) bind(at, target int) {
	binary.LittleEndian.PutUint32(a.b[at:], uint32(int32(target-(at+4))))
}

// setcc sets the low byte of r to condition c, and zero-extends it.
func (a *asm) setcc(c cond, r reg) {
	rex := byte(0)
	if r >= 4 {
		rex = 0x40
		if r&8 != 0 {
			rex |= 1
		}
	}
	if rex != 0 {
		a.byte1(rex)
	}
	a.b = append(a.b, 0x0f, 0x90+byte(c), 0xc0|byte(r&7))
	a.encode(mnMovzx8, 4, r, regOp(r), 0)
}

// extend loads the low size bytes of src (a register or memory) into d,
// zero- or sign-extended to 64 bits.
func (a *asm) extend(d reg, src operand, size int, signed bool) {
	switch {
	case size == 8:
		if src.isMem || src.r != d {
			a.encode(mnMovRM, 8, d, src, 0)
		}
	case size == 4 && signed:
		a.encode(mnMovsxd, 8, d, src, 0)
	case size == 4:
		a.encode(mnMovRM, 4, d, src, 0)
	case size == 2 && signed:
		a.encode(mnMovsx16, 8, d, src, 0)
	case size == 2:
		a.encode(mnMovzx16, 4, d, src, 0)
	case size == 1 && signed:
		a.encode(mnMovsx8, 8, d, src, 0)
	default:
		a.encode(mnMovzx8, 4, d, src, 0)
	}
}

// cmov moves src into dst when condition c holds (64-bit).
func (a *asm) cmov(c cond, dst reg, src operand) {
	rex := byte(0x48)
	if dst&8 != 0 {
		rex |= 4
	}
	base := src.r
	if src.isMem {
		base = src.m.base
		if src.m.hasIndex && src.m.index&8 != 0 {
			rex |= 2
		}
	}
	if base&8 != 0 {
		rex |= 1
	}
	a.byte1(rex)
	a.b = append(a.b, 0x0f, 0x40+byte(c))
	a.modrm(byte(dst&7), src)
}

// shiftImm shifts r (64-bit) by the constant k: digit 4 shl, 5 shr, 7 sar.
func (a *asm) shiftImm(digit byte, r reg, k uint8) {
	rex := byte(0x48)
	if r&8 != 0 {
		rex |= 1
	}
	a.b = append(a.b, rex, 0xc1, 0xc0|digit<<3|byte(r&7), k)
}

// shiftImmSized shifts or rotates r by the constant k at operand size sz (4
// or 8; 4 clears the upper half): digit 0 rol, 1 ror, 4 shl, 5 shr, 7 sar.
func (a *asm) shiftImmSized(digit byte, r reg, k uint8, sz int) {
	rex := byte(0)
	if sz == 8 {
		rex = 0x48
	}
	if r&8 != 0 {
		rex |= 0x41
	}
	if rex != 0 {
		a.byte1(rex)
	}
	a.b = append(a.b, 0xc1, 0xc0|digit<<3|byte(r&7), k)
}

func (a *asm) ret() { a.byte1(0xc3) }
