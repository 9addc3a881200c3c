// Package loader loads x86-64 Linux ELF programs into a guest image: it
// parses and validates the ELF file, maps its segments into guest memory,
// loads the program interpreter (PT_INTERP) for dynamically linked
// programs, and builds the initial stack with argv, envp and the auxiliary
// vector. It also fixes the guest address layout (where the program, the
// interpreter, mmap'd memory and the stack go).
package loader

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
)

// FormatError reports an ELF file gxbit cannot run: not an ELF, the wrong
// class or architecture, truncated, or with corrupt headers. Off is the file
// offset of the problem, when there is one.
type FormatError struct {
	Path string
	Off  int64
	Msg  string
}

func (e *FormatError) Error() string {
	if e.Off >= 0 {
		return fmt.Sprintf("%s: bad ELF file at offset %#x: %s", e.Path, e.Off, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

// ErrNotELF is wrapped by the FormatError for a file that is not ELF at all.
var ErrNotELF = errors.New("not an ELF file")

// Segment is one PT_LOAD program header.
type Segment struct {
	Vaddr, Memsz   uint64
	Off, Filesz    uint64
	Flags          elf.ProgFlag
	AlignmentBytes uint64
}

// ELFFile is a validated x86-64 ELF executable or shared object, as the
// loader needs it.
type ELFFile struct {
	Path     string
	Data     []byte
	Type     elf.Type // ET_EXEC or ET_DYN
	Entry    uint64
	PhOff    uint64
	PhEntSz  uint64
	PhNum    uint64
	Segments []Segment
	Interp   string // PT_INTERP, empty for a static executable
	PhdrAddr uint64 // PT_PHDR's address before relocation, 0 when absent
}

// ParseELF validates data as a 64-bit little-endian x86-64 ELF executable
// (static, static-pie or dynamically linked) and returns what the loader
// needs. Every problem is a *FormatError.
func ParseELF(path string, data []byte) (*ELFFile, error) {
	bad := func(off int64, format string, args ...any) error {
		return &FormatError{Path: path, Off: off, Msg: fmt.Sprintf(format, args...)}
	}
	if len(data) < 4 || !bytes.Equal(data[:4], []byte(elf.ELFMAG)) {
		return nil, &FormatError{Path: path, Off: -1, Msg: ErrNotELF.Error()}
	}
	if len(data) < 16 {
		return nil, bad(int64(len(data)), "file truncated inside the ELF identification")
	}
	switch elf.Class(data[elf.EI_CLASS]) {
	case elf.ELFCLASS64:
	case elf.ELFCLASS32:
		return nil, &FormatError{Path: path, Off: -1, Msg: "32-bit ELF files are not supported (gxbit runs x86-64 programs)"}
	default:
		return nil, bad(elf.EI_CLASS, "unknown ELF class %d", data[elf.EI_CLASS])
	}
	if elf.Data(data[elf.EI_DATA]) != elf.ELFDATA2LSB {
		return nil, bad(elf.EI_DATA, "big-endian ELF files are not supported")
	}
	const ehdrSize = 64
	if len(data) < ehdrSize {
		return nil, bad(int64(len(data)), "file truncated inside the ELF header (%d bytes, need %d)", len(data), ehdrSize)
	}
	le := binary.LittleEndian
	typ := elf.Type(le.Uint16(data[16:]))
	machine := elf.Machine(le.Uint16(data[18:]))
	if machine != elf.EM_X86_64 {
		return nil, &FormatError{Path: path, Off: -1, Msg: fmt.Sprintf("wrong architecture %s: gxbit runs x86-64 (EM_X86_64) programs", machine)}
	}
	if typ != elf.ET_EXEC && typ != elf.ET_DYN {
		return nil, &FormatError{Path: path, Off: -1, Msg: fmt.Sprintf("ELF type %s is not an executable", typ)}
	}
	f := &ELFFile{
		Path:    path,
		Data:    data,
		Type:    typ,
		Entry:   le.Uint64(data[24:]),
		PhOff:   le.Uint64(data[32:]),
		PhEntSz: uint64(le.Uint16(data[54:])),
		PhNum:   uint64(le.Uint16(data[56:])),
	}
	if f.PhNum == 0 {
		return nil, bad(56, "no program headers")
	}
	if f.PhEntSz != 56 {
		return nil, bad(54, "program header entry size %d, want 56", f.PhEntSz)
	}
	end := f.PhOff + f.PhNum*f.PhEntSz
	if f.PhOff > uint64(len(data)) || end > uint64(len(data)) || end < f.PhOff {
		return nil, bad(32, "program headers [%#x, %#x) lie outside the file (%d bytes)", f.PhOff, end, len(data))
	}
	for i := uint64(0); i < f.PhNum; i++ {
		off := f.PhOff + i*f.PhEntSz
		ph := data[off : off+f.PhEntSz]
		ptype := elf.ProgType(le.Uint32(ph[0:]))
		flags := elf.ProgFlag(le.Uint32(ph[4:]))
		pOff, vaddr := le.Uint64(ph[8:]), le.Uint64(ph[16:])
		filesz, memsz, align := le.Uint64(ph[32:]), le.Uint64(ph[40:]), le.Uint64(ph[48:])
		inFile := pOff <= uint64(len(data)) && filesz <= uint64(len(data))-pOff
		switch ptype {
		case elf.PT_LOAD:
			if !inFile {
				return nil, bad(int64(off), "PT_LOAD segment %d: file range [%#x, +%#x) lies outside the file (%d bytes)", i, pOff, filesz, len(data))
			}
			if filesz > memsz {
				return nil, bad(int64(off), "PT_LOAD segment %d: file size %#x exceeds memory size %#x", i, filesz, memsz)
			}
			if vaddr+memsz < vaddr || vaddr+memsz > 1<<47 {
				return nil, bad(int64(off), "PT_LOAD segment %d: [%#x, +%#x) is outside the user address space", i, vaddr, memsz)
			}
			if vaddr%4096 != pOff%4096 {
				return nil, bad(int64(off), "PT_LOAD segment %d: address %#x and offset %#x disagree modulo the page size", i, vaddr, pOff)
			}
			f.Segments = append(f.Segments, Segment{Vaddr: vaddr, Memsz: memsz, Off: pOff, Filesz: filesz, Flags: flags, AlignmentBytes: align})
		case elf.PT_INTERP:
			if !inFile || filesz == 0 || filesz > 4096 {
				return nil, bad(int64(off), "PT_INTERP: bad file range [%#x, +%#x)", pOff, filesz)
			}
			f.Interp = string(bytes.TrimRight(data[pOff:pOff+filesz], "\x00"))
		case elf.PT_PHDR:
			f.PhdrAddr = vaddr
		}
	}
	if len(f.Segments) == 0 {
		return nil, bad(32, "no PT_LOAD segment")
	}
	sort.Slice(f.Segments, func(i, j int) bool { return f.Segments[i].Vaddr < f.Segments[j].Vaddr })
	for i := 1; i < len(f.Segments); i++ {
		prev, cur := f.Segments[i-1], f.Segments[i]
		if prev.Vaddr+prev.Memsz > cur.Vaddr {
			return nil, bad(-1, "PT_LOAD segments at %#x and %#x overlap", prev.Vaddr, cur.Vaddr)
		}
	}
	lo, hi := f.Span()
	if f.Entry < lo || f.Entry >= hi {
		return nil, bad(24, "entry point %#x lies outside the loaded segments [%#x, %#x)", f.Entry, lo, hi)
	}
	return f, nil
}

// Span returns the page-aligned range [lo, hi) the PT_LOAD segments cover,
// before relocation.
func (f *ELFFile) Span() (lo, hi uint64) {
	lo = f.Segments[0].Vaddr &^ 4095
	last := f.Segments[len(f.Segments)-1]
	hi = (last.Vaddr + last.Memsz + 4095) &^ 4095
	return lo, hi
}

// Symbol is a function or object symbol of an ELF file, at its address
// after relocation by the load bias.
type Symbol struct {
	Name  string
	Addr  uint64
	Size  uint64
	IsFun bool
}

// Symbols reads the symbol table of an ELF file (.symtab, or .dynsym for a
// stripped file), adds bias to every address and returns the defined
// function and object symbols sorted by address. A file with neither table
// yields no symbols and no error.
func Symbols(path string, data []byte, bias uint64) ([]Symbol, error) {
	ef, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, &FormatError{Path: path, Off: -1, Msg: "reading symbols: " + err.Error()}
	}
	syms, err := ef.Symbols()
	if errors.Is(err, elf.ErrNoSymbols) {
		syms, err = ef.DynamicSymbols()
	}
	if errors.Is(err, elf.ErrNoSymbols) {
		return nil, nil
	}
	if err != nil {
		return nil, &FormatError{Path: path, Off: -1, Msg: "reading symbols: " + err.Error()}
	}
	var out []Symbol
	for _, s := range syms {
		t := elf.ST_TYPE(s.Info)
		if s.Section == elf.SHN_UNDEF || s.Value == 0 || (t != elf.STT_FUNC && t != elf.STT_OBJECT) {
			continue
		}
		out = append(out, Symbol{Name: s.Name, Addr: s.Value + bias, Size: s.Size, IsFun: t == elf.STT_FUNC})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	return out, nil
}
