package loader

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/gxbit/gxbit/gvinst"
)

// The guest address-space layout. Addresses follow Linux's x86-64 defaults
// without randomisation, so runs are reproducible.
const (
	// StackTop is the address just above the initial stack.
	StackTop = 0x7ffffffff000
	// DefaultStackSize is the size of the stack mapping.
	DefaultStackSize = 8 << 20
	// MmapTop is the highest address mmap hands out (below the stack).
	MmapTop = 0x7ffff7fff000
	// MmapBottom is the lowest address mmap hands out without a hint.
	MmapBottom = 0x10000000
	// PIEBase is where a position-independent main program is loaded.
	PIEBase = 0x555555554000
)

// Auxiliary vector keys (from the Linux ABI).
const (
	atNull     = 0
	atPhdr     = 3
	atPhent    = 4
	atPhnum    = 5
	atPagesz   = 6
	atBase     = 7
	atFlags    = 8
	atEntry    = 9
	atUID      = 11
	atEUID     = 12
	atGID      = 13
	atEGID     = 14
	atPlatform = 15
	atHwcap    = 16
	atClktck   = 17
	atSecure   = 23
	atRandom   = 25
	atHwcap2   = 26
	atExecfn   = 31
)

// MaxInterpSize is the largest program interpreter (PT_INTERP) Load
// reads. glibc's ld.so is about 250 KB.
const MaxInterpSize = 64 << 20

// LoadOptions configures Load.
type LoadOptions struct {
	Args    []string // argv, argv[0] included
	Env     []string // envp
	Sysroot string   // where PT_INTERP is looked up; "" means "/"
	// ReadInterp reads the program interpreter, named by its absolute path
	// as PT_INTERP gives it, refusing anything but a regular file of at
	// most limit bytes. The pipeline reads it through the guest's sandbox
	// (linux.ReadFile), so it obeys the guest's file rules. nil reads it
	// under Sysroot with os.Root: symlinks cannot lead out of Sysroot.
	ReadInterp func(name string, limit int64) ([]byte, error)
	StackSize  uint64   // 0 means DefaultStackSize
	ExecFn     string   // AT_EXECFN; defaults to Args[0]
	Random     [16]byte // the 16 bytes AT_RANDOM points at
	UID, GID   uint32
}

// Image is a program loaded into guest memory and ready to start.
type Image struct {
	Prog     *ELFFile
	Interp   *ELFFile // the dynamic loader, nil for a static program
	Bias     uint64   // load bias of the main program (0 for ET_EXEC)
	InterpAt uint64   // load bias of the dynamic loader
	Entry    uint64   // where execution starts (the loader's entry if there is one)
	SP       uint64   // initial stack pointer, at argc
	Brk      uint64   // initial program break
	Symbols  []Symbol // the main program's symbols, relocated
}

// ProgramEntry is the main program's entry point after relocation.
func (im *Image) ProgramEntry() uint64 { return im.Prog.Entry + im.Bias }

// Load maps prog (and its PT_INTERP loader, read from the sysroot) into mem
// and builds the initial stack, as Linux's execve does: argv, envp and the
// auxiliary vector.
func Load(mem *gvinst.Memory, prog *ELFFile, opts LoadOptions) (*Image, error) {
	im := &Image{Prog: prog}
	if prog.Type == elf.ET_DYN {
		// Position-independent programs (PIE and static-pie) go where
		// Linux puts them without randomisation.
		lo, _ := prog.Span()
		im.Bias = PIEBase - lo
	}
	if err := mapSegments(mem, prog, im.Bias); err != nil {
		return nil, err
	}
	_, hi := prog.Span()
	im.Brk = hi + im.Bias
	im.Entry = prog.Entry + im.Bias
	if prog.Interp != "" {
		ipath := path.Clean("/" + prog.Interp)
		read := opts.ReadInterp
		if read == nil {
			read = func(name string, limit int64) ([]byte, error) { return readUnder(opts.Sysroot, name, limit) }
		}
		data, err := read(ipath, MaxInterpSize)
		if err == nil && int64(len(data)) > MaxInterpSize {
			err = fmt.Errorf("%d bytes, more than the limit of %d", len(data), MaxInterpSize)
		}
		if err != nil {
			return nil, fmt.Errorf("loading the program interpreter %s: %w", prog.Interp, err)
		}
		interp, err := ParseELF(ipath, data)
		if err != nil {
			return nil, fmt.Errorf("loading the program interpreter: %w", err)
		}
		if interp.Type != elf.ET_DYN {
			return nil, &FormatError{Path: ipath, Off: -1, Msg: "the program interpreter is not position independent (ET_DYN)"}
		}
		ilo, ihi := interp.Span()
		base, ok := mem.FindFree(ihi-ilo, MmapBottom, MmapTop)
		if !ok {
			return nil, fmt.Errorf("no room for the program interpreter (%d bytes)", ihi-ilo)
		}
		im.Interp = interp
		im.InterpAt = base - ilo
		if err := mapSegments(mem, interp, im.InterpAt); err != nil {
			return nil, err
		}
		im.Entry = interp.Entry + im.InterpAt
	}
	sp, err := buildStack(mem, im, opts)
	if err != nil {
		return nil, err
	}
	im.SP = sp
	if syms, err := Symbols(prog.Path, prog.Data, im.Bias); err == nil {
		im.Symbols = syms
	}
	return im, nil
}

// readUnder reads the regular file name (absolute) under the host
// directory root ("" is "/"), of at most limit bytes.
func readUnder(root, name string, limit int64) ([]byte, error) {
	if root == "" {
		root = "/"
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	rel := strings.TrimPrefix(path.Clean("/"+name), "/")
	fi, err := r.Stat(rel)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the limit of %d", name, fi.Size(), limit)
	}
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	return io.ReadAll(io.LimitReader(f, limit+1))
}

func segPerm(f elf.ProgFlag) gvinst.Perm {
	var p gvinst.Perm
	if f&elf.PF_R != 0 {
		p |= gvinst.PermRead
	}
	if f&elf.PF_W != 0 {
		p |= gvinst.PermWrite
	}
	if f&elf.PF_X != 0 {
		p |= gvinst.PermExec | gvinst.PermRead
	}
	return p
}

// mapSegments maps f's PT_LOAD segments at bias: pages zero-filled, file
// bytes copied in, then each segment's permission applied (a page two
// segments share takes the later one's, as with the kernel's mmaps).
func mapSegments(mem *gvinst.Memory, f *ELFFile, bias uint64) error {
	for _, s := range f.Segments {
		lo := (s.Vaddr + bias) &^ 4095
		hi := (s.Vaddr + bias + s.Memsz + 4095) &^ 4095
		for a := lo; a < hi; a += gvinst.PageSize {
			if _, mapped := mem.PermAt(a); mapped {
				continue
			}
			if err := mem.Map(a, gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
				return fmt.Errorf("mapping %s segment at %#x: %w", f.Path, s.Vaddr+bias, err)
			}
		}
		if s.Filesz > 0 {
			if err := mem.Poke(s.Vaddr+bias, f.Data[s.Off:s.Off+s.Filesz]); err != nil {
				return fmt.Errorf("copying %s segment at %#x: %w", f.Path, s.Vaddr+bias, err)
			}
		}
	}
	for _, s := range f.Segments {
		lo := (s.Vaddr + bias) &^ 4095
		hi := (s.Vaddr + bias + s.Memsz + 4095) &^ 4095
		if err := mem.Protect(lo, hi-lo, segPerm(s.Flags)); err != nil {
			return fmt.Errorf("protecting %s segment at %#x: %w", f.Path, s.Vaddr+bias, err)
		}
	}
	return nil
}

// phdrAddr finds where f's program headers are in memory: PT_PHDR if
// present, else the PT_LOAD segment whose file range holds them.
func phdrAddr(f *ELFFile, bias uint64) uint64 {
	if f.PhdrAddr != 0 {
		return f.PhdrAddr + bias
	}
	for _, s := range f.Segments {
		if f.PhOff >= s.Off && f.PhOff < s.Off+s.Filesz {
			return s.Vaddr + (f.PhOff - s.Off) + bias
		}
	}
	return 0
}

// buildStack maps the stack and writes argc, argv, envp and auxv, returning
// the initial stack pointer (16-byte aligned, pointing at argc).
func buildStack(mem *gvinst.Memory, im *Image, opts LoadOptions) (uint64, error) {
	size := opts.StackSize
	if size == 0 {
		size = DefaultStackSize
	}
	size = (size + 4095) &^ 4095
	if err := mem.Map(StackTop-size, size, gvinst.PermRead|gvinst.PermWrite); err != nil {
		return 0, fmt.Errorf("mapping the stack: %w", err)
	}
	sp := uint64(StackTop)
	push := func(b []byte) (uint64, error) {
		sp -= uint64(len(b))
		return sp, mem.Poke(sp, b)
	}
	pushString := func(s string) (uint64, error) { return push(append([]byte(s), 0)) }
	execfn := opts.ExecFn
	if execfn == "" && len(opts.Args) > 0 {
		execfn = opts.Args[0]
	}
	execfnAt, err := pushString(execfn)
	if err != nil {
		return 0, err
	}
	envAt := make([]uint64, len(opts.Env))
	for i := len(opts.Env) - 1; i >= 0; i-- {
		if envAt[i], err = pushString(opts.Env[i]); err != nil {
			return 0, err
		}
	}
	argAt := make([]uint64, len(opts.Args))
	for i := len(opts.Args) - 1; i >= 0; i-- {
		if argAt[i], err = pushString(opts.Args[i]); err != nil {
			return 0, err
		}
	}
	platformAt, err := pushString("x86_64")
	if err != nil {
		return 0, err
	}
	sp &^= 15
	randomAt, err := push(opts.Random[:])
	if err != nil {
		return 0, err
	}
	auxv := [][2]uint64{
		{atPhdr, phdrAddr(im.Prog, im.Bias)},
		{atPhent, 56},
		{atPhnum, im.Prog.PhNum},
		{atPagesz, gvinst.PageSize},
		{atBase, im.InterpAt},
		{atFlags, 0},
		{atEntry, im.ProgramEntry()},
		{atUID, uint64(opts.UID)}, {atEUID, uint64(opts.UID)},
		{atGID, uint64(opts.GID)}, {atEGID, uint64(opts.GID)},
		{atSecure, 0},
		{atRandom, randomAt},
		{atHwcap, gvinst.CPUIDFeaturesEDX},
		{atHwcap2, 0},
		{atClktck, 100},
		{atPlatform, platformAt},
		{atExecfn, execfnAt},
		{atNull, 0},
	}
	if im.Interp == nil {
		auxv[4][1] = 0
	}
	words := []uint64{uint64(len(opts.Args))}
	words = append(words, argAt...)
	words = append(words, 0)
	words = append(words, envAt...)
	words = append(words, 0)
	for _, kv := range auxv {
		words = append(words, kv[0], kv[1])
	}
	sp -= uint64(len(words)) * 8
	sp &^= 15
	buf := make([]byte, len(words)*8)
	for i, w := range words {
		binary.LittleEndian.PutUint64(buf[i*8:], w)
	}
	if err := mem.Poke(sp, buf); err != nil {
		return 0, err
	}
	return sp, nil
}
