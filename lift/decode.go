// Package lift turns guest x86-64 code into GVInst: it decodes x86-64
// instructions from guest memory (through golang.org/x/arch/x86/x86asm, in
// 64-bit mode) and lifts them to GVInst VBlocks for the CPU engine. Loading
// the ELF file into guest memory is package loader's job.
//
// The lifter's dispatch is one table from x86asm.Op to a lift function,
// built from per-category tables (integer, control and stack, string,
// system, SSE moves, packed integer, floating point, SSE4.2 strings); see
// liftTables.
package lift

import (
	"errors"
	"fmt"

	"github.com/gxbit/gxbit/gvinst"
	"golang.org/x/arch/x86/x86asm"
)

// maxInstLen is the longest x86 instruction, in bytes.
const maxInstLen = 15

// Decoded is one x86-64 instruction decoded at a guest address.
type Decoded struct {
	Addr  uint64      // guest address of the first byte
	Inst  x86asm.Inst // the decoded instruction
	Bytes []byte      // its encoding, Inst.Len bytes
	Text  string      // the Intel-syntax disassembly
}

// Next is the address of the instruction after d.
func (d *Decoded) Next() uint64 { return d.Addr + uint64(d.Inst.Len) }

// DecodeError reports bytes at a guest address that are not a valid x86-64
// instruction, or code that could not be fetched.
type DecodeError struct {
	Addr  uint64 // where decoding started
	Bytes []byte // the bytes fetched there (up to 15)
	Err   error  // x86asm's error, or the *gvinst.Fault of the fetch
}

func (e *DecodeError) Error() string {
	if len(e.Bytes) == 0 {
		return fmt.Sprintf("decode at %#x: %v", e.Addr, e.Err)
	}
	return fmt.Sprintf("decode at %#x (bytes % x): %v", e.Addr, e.Bytes, e.Err)
}

// Unwrap returns the underlying error.
func (e *DecodeError) Unwrap() error { return e.Err }

// ErrUndecodable is wrapped by a DecodeError for bytes that are no valid
// x86-64 instruction (as opposed to a fetch fault).
var ErrUndecodable = errors.New("invalid instruction encoding")

// Decoder decodes x86-64 instructions from guest memory, in 64-bit mode,
// and keeps the decoded instructions by address. A cached instruction is
// used only while the bytes in memory still match it, so code the guest
// rewrites is decoded afresh. A Decoder is not safe for concurrent use.
type Decoder struct {
	mem   *gvinst.Memory
	cache map[uint64]*Decoded
}

// NewDecoder returns a Decoder over mem.
func NewDecoder(mem *gvinst.Memory) *Decoder {
	return &Decoder{mem: mem, cache: make(map[uint64]*Decoded)}
}

// InvalidatePage drops the cached instructions that start on the page
// holding pageAddr (and those that cross into it from the page before).
func (d *Decoder) InvalidatePage(pageAddr uint64) {
	lo := pageAddr &^ (gvinst.PageSize - 1)
	for a := range d.cache {
		if a+maxInstLen > lo && a < lo+gvinst.PageSize {
			delete(d.cache, a)
		}
	}
}

// Decode decodes the instruction at addr. The bytes are fetched with
// Memory.Fetch (the page must be executable) and the pages they come from
// are marked as code. It returns a *DecodeError wrapping the *gvinst.Fault
// when nothing can be fetched at addr, and one wrapping ErrUndecodable
// when the bytes are no valid instruction.
func (d *Decoder) Decode(addr uint64) (*Decoded, error) {
	var buf [maxInstLen]byte
	n, err := d.mem.Fetch(addr, buf[:])
	if err != nil {
		return nil, &DecodeError{Addr: addr, Err: err}
	}
	code := buf[:n]
	if c, ok := d.cache[addr]; ok && len(c.Bytes) <= n && string(c.Bytes) == string(code[:len(c.Bytes)]) {
		return c, nil
	}
	in, err := x86asm.Decode(code, 64)
	var text string
	if err != nil || in.Op == 0 {
		hint, ok := decodeHintNop(code)
		if !ok {
			if err == nil {
				err = fmt.Errorf("unknown prefix or opcode")
			}
			if n < maxInstLen {
				// The instruction may run into a page that cannot be
				// fetched: then the fetch faults first.
				_, ferr := d.mem.Fetch(addr+uint64(n), buf[n:])
				if ferr != nil {
					return nil, &DecodeError{Addr: addr, Bytes: append([]byte(nil), code...), Err: ferr}
				}
			}
			return nil, &DecodeError{Addr: addr, Bytes: append([]byte(nil), code...), Err: fmt.Errorf("%w: %v", ErrUndecodable, err)}
		}
		in, text = hint.inst, hint.text
	} else {
		text = x86asm.IntelSyntax(in, addr, nil)
	}
	dec := &Decoded{Addr: addr, Inst: in, Bytes: append([]byte(nil), code[:in.Len]...), Text: text}
	d.mem.MarkCode(addr)
	d.mem.MarkCode(addr + uint64(in.Len) - 1)
	d.cache[addr] = dec
	return dec, nil
}

type hintNop struct {
	inst x86asm.Inst
	text string
}

// decodeHintNop decodes the register forms of the reserved-NOP opcode
// 0F 1E that x86asm does not know: endbr64, endbr32 and rdssp, which
// execute as NOPs on a processor without CET (rdssp leaves its destination
// unchanged, which glibc relies on).
func decodeHintNop(code []byte) (hintNop, bool) {
	i := 0
	rep, rexW := false, false
	for i < len(code) && i < maxInstLen {
		switch c := code[i]; {
		case c == 0x66 || c == 0x67 || c == 0xf2 || c == 0x2e || c == 0x3e || c == 0x26 || c == 0x64 || c == 0x65 || c == 0x36:
			rexW = false
		case c == 0xf3:
			rep, rexW = true, false
		case c >= 0x40 && c <= 0x4f:
			rexW = c&8 != 0
			i++
			goto opcode
		default:
			goto opcode
		}
		i++
	}
opcode:
	if i+3 > len(code) || code[i] != 0x0f || code[i+1] != 0x1e || code[i+2]&0xc0 != 0xc0 {
		return hintNop{}, false
	}
	m := code[i+2]
	text := "nop"
	switch {
	case rep && m == 0xfa:
		text = "endbr64"
	case rep && m == 0xfb:
		text = "endbr32"
	case rep && m&0xf8 == 0xc8 && rexW:
		text = "rdsspq"
	case rep && m&0xf8 == 0xc8:
		text = "rdsspd"
	}
	return hintNop{inst: x86asm.Inst{Op: x86asm.NOP, Mode: 64, AddrSize: 64, DataSize: 32, Len: i + 3}, text: text}, true
}
