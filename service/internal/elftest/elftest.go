// Package elftest builds small ELF files for the daemon's tests: a valid
// x86-64 executable and variants that are wrong in one field each.
package elftest

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
)

// Options choose the fields of the ELF that Build writes.
type Options struct {
	Class   elf.Class   // default ELFCLASS64
	Machine elf.Machine // default EM_X86_64
	Type    elf.Type    // default ET_EXEC
	Entry   uint64      // default 0x401000; set NoEntry for 0
	NoEntry bool
	NoLoad  bool   // make the only program header PT_NOTE instead of PT_LOAD
	Code    []byte // bytes of the loaded segment (default: exit(0))
}

// Build returns a minimal ELF executable: a 64-byte header, one program
// header, and the code. 32-bit classes get a 32-bit header of the same shape.
func Build(o Options) []byte {
	if o.Class == 0 {
		o.Class = elf.ELFCLASS64
	}
	if o.Machine == 0 {
		o.Machine = elf.EM_X86_64
	}
	if o.Type == 0 {
		o.Type = elf.ET_EXEC
	}
	if o.Entry == 0 && !o.NoEntry {
		o.Entry = 0x401000 + 64 + 56
	}
	if o.Code == nil {
		// mov eax, 60; xor edi, edi; syscall
		o.Code = []byte{0xb8, 0x3c, 0, 0, 0, 0x31, 0xff, 0x0f, 0x05}
	}
	ptype := elf.PT_LOAD
	if o.NoLoad {
		ptype = elf.PT_NOTE
	}
	var b bytes.Buffer
	le := binary.LittleEndian
	w := func(v any) { binary.Write(&b, le, v) }
	if o.Class == elf.ELFCLASS32 {
		b.Write([]byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS32), byte(elf.ELFDATA2LSB), 1, 0})
		b.Write(make([]byte, 8))
		w(uint16(o.Type))
		w(uint16(o.Machine))
		w(uint32(1))
		w(uint32(o.Entry))
		w(uint32(52)) // phoff
		w(uint32(0))  // shoff
		w(uint32(0))  // flags
		w(uint16(52)) // ehsize
		w(uint16(32)) // phentsize
		w(uint16(1))  // phnum
		w(uint16(40)) // shentsize
		w(uint16(0))  // shnum
		w(uint16(0))  // shstrndx
		size := uint32(52 + 32 + len(o.Code))
		w(uint32(ptype))
		w(uint32(0))
		w(uint32(0x8048000))
		w(uint32(0x8048000))
		w(size)
		w(size)
		w(uint32(elf.PF_R | elf.PF_X))
		w(uint32(0x1000))
		b.Write(o.Code)
		return b.Bytes()
	}
	b.Write([]byte{0x7f, 'E', 'L', 'F', byte(o.Class), byte(elf.ELFDATA2LSB), 1, 0})
	b.Write(make([]byte, 8))
	w(uint16(o.Type))
	w(uint16(o.Machine))
	w(uint32(1))
	w(o.Entry)
	w(uint64(64)) // phoff
	w(uint64(0))  // shoff
	w(uint32(0))  // flags
	w(uint16(64)) // ehsize
	w(uint16(56)) // phentsize
	w(uint16(1))  // phnum
	w(uint16(64)) // shentsize
	w(uint16(0))  // shnum
	w(uint16(0))  // shstrndx
	size := uint64(64 + 56 + len(o.Code))
	w(uint32(ptype))
	w(uint32(elf.PF_R | elf.PF_X))
	w(uint64(0))        // offset
	w(uint64(0x401000)) // vaddr
	w(uint64(0x401000)) // paddr
	w(size)             // filesz
	w(size)             // memsz
	w(uint64(0x1000))   // align
	b.Write(o.Code)
	return b.Bytes()
}
