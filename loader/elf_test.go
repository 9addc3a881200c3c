package loader

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// minimalELF builds a valid static x86-64 ELF executable with one PT_LOAD
// segment holding an infinite loop at the entry point.
func minimalELF() []byte {
	const base = 0x400000
	b := make([]byte, 0x1000+16)
	copy(b, elf.ELFMAG)
	b[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	b[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	b[elf.EI_VERSION] = 1
	le := binary.LittleEndian
	le.PutUint16(b[16:], uint16(elf.ET_EXEC))
	le.PutUint16(b[18:], uint16(elf.EM_X86_64))
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[24:], base+0x1000) // entry
	le.PutUint64(b[32:], 64)          // phoff
	le.PutUint16(b[52:], 64)
	le.PutUint16(b[54:], 56)
	le.PutUint16(b[56:], 1)
	ph := b[64:]
	le.PutUint32(ph[0:], uint32(elf.PT_LOAD))
	le.PutUint32(ph[4:], uint32(elf.PF_R|elf.PF_X))
	le.PutUint64(ph[8:], 0)
	le.PutUint64(ph[16:], base)
	le.PutUint64(ph[24:], base)
	le.PutUint64(ph[32:], uint64(len(b)))
	le.PutUint64(ph[40:], uint64(len(b)))
	le.PutUint64(ph[48:], 0x1000)
	copy(b[0x1000:], []byte{0xeb, 0xfe}) // jmp .
	return b
}

func TestParseELFBadInput(t *testing.T) {
	good := minimalELF()
	if _, err := ParseELF("good", good); err != nil {
		t.Fatalf("minimal ELF rejected: %v", err)
	}
	mutate := func(f func(b []byte) []byte) []byte {
		b := append([]byte(nil), good...)
		return f(b)
	}
	le := binary.LittleEndian
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not an ELF file"},
		{"text", []byte("#!/bin/sh\necho hi\n"), "not an ELF file"},
		{"truncated ident", good[:10], "truncated inside the ELF identification"},
		{"truncated header", good[:40], "truncated inside the ELF header"},
		{"32-bit", mutate(func(b []byte) []byte { b[elf.EI_CLASS] = byte(elf.ELFCLASS32); return b }), "32-bit ELF files are not supported"},
		{"big-endian", mutate(func(b []byte) []byte { b[elf.EI_DATA] = byte(elf.ELFDATA2MSB); return b }), "big-endian"},
		{"arm64", mutate(func(b []byte) []byte { le.PutUint16(b[18:], uint16(elf.EM_AARCH64)); return b }), "wrong architecture EM_AARCH64"},
		{"relocatable", mutate(func(b []byte) []byte { le.PutUint16(b[16:], uint16(elf.ET_REL)); return b }), "is not an executable"},
		{"phdrs outside", mutate(func(b []byte) []byte { le.PutUint64(b[32:], 1<<40); return b }), "program headers"},
		{"bad phentsize", mutate(func(b []byte) []byte { le.PutUint16(b[54:], 32); return b }), "entry size 32"},
		{"segment past EOF", mutate(func(b []byte) []byte { le.PutUint64(b[64+32:], 1<<20); return b }), "lies outside the file"},
		{"filesz > memsz", mutate(func(b []byte) []byte { le.PutUint64(b[64+40:], 16); return b }), "exceeds memory size"},
		{"misaligned segment", mutate(func(b []byte) []byte { le.PutUint64(b[64+16:], 0x400010); return b }), "disagree modulo the page size"},
		{"entry outside", mutate(func(b []byte) []byte { le.PutUint64(b[24:], 0x10); return b }), "entry point"},
		{"no phdrs", mutate(func(b []byte) []byte { le.PutUint16(b[56:], 0); return b }), "no program headers"},
	}
	for _, c := range cases {
		_, err := ParseELF("prog", c.data)
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: got %v, want a *FormatError", c.name, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not say %q", c.name, err, c.want)
		}
	}
}

func FuzzParseELF(f *testing.F) {
	f.Add(minimalELF())
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		prog, err := ParseELF("fuzz", data)
		if err != nil {
			return
		}
		mem := gvinst.NewMemory(64 << 20)
		_, _ = Load(mem, prog, LoadOptions{Args: []string{"fuzz"}, Sysroot: t.TempDir()})
	})
}

// TestLoadStack loads a real static program and checks the initial stack
// as Linux's ABI lays it out.
func TestLoadStack(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "p.c")
	bin := filepath.Join(dir, "p")
	if err := os.WriteFile(src, []byte("int main(){return 0;}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-static", "-O2", "-o", bin, src).CombinedOutput(); err != nil {
		t.Skipf("static link failed (no static libc?): %v\n%s", err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := ParseELF(bin, data)
	if err != nil {
		t.Fatal(err)
	}
	mem := gvinst.NewMemory(0)
	im, err := Load(mem, prog, LoadOptions{Args: []string{"p", "one"}, Env: []string{"A=1"}})
	if err != nil {
		t.Fatal(err)
	}
	if im.SP%16 != 0 {
		t.Errorf("SP %#x not 16-byte aligned", im.SP)
	}
	word := func(a uint64) uint64 {
		v, err := mem.Load(a, 8)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	str := func(a uint64) string {
		s, err := mem.ReadString(a, 100)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if argc := word(im.SP); argc != 2 {
		t.Fatalf("argc = %d", argc)
	}
	if s := str(word(im.SP + 8)); s != "p" {
		t.Errorf("argv[0] = %q", s)
	}
	if s := str(word(im.SP + 16)); s != "one" {
		t.Errorf("argv[1] = %q", s)
	}
	if word(im.SP+24) != 0 {
		t.Error("argv not NULL-terminated")
	}
	if s := str(word(im.SP + 32)); s != "A=1" {
		t.Errorf("envp[0] = %q", s)
	}
	aux := map[uint64]uint64{}
	for a := im.SP + 48; ; a += 16 {
		k, v := word(a), word(a+8)
		if k == 0 {
			break
		}
		aux[k] = v
	}
	if aux[atEntry] != prog.Entry || aux[atPagesz] != 4096 || aux[atPhnum] != prog.PhNum {
		t.Errorf("auxv entry/pagesz/phnum = %#x/%d/%d", aux[atEntry], aux[atPagesz], aux[atPhnum])
	}
	if ph := aux[atPhdr]; word(ph)&0xffffffff != uint64(elf.PT_LOAD) && word(ph)&0xffffffff != uint64(elf.PT_PHDR) {
		t.Errorf("AT_PHDR %#x does not point at program headers", ph)
	}
	if im.Entry != prog.Entry || im.Interp != nil {
		t.Errorf("static program: entry %#x, interp %v", im.Entry, im.Interp)
	}
	if perm, ok := mem.PermAt(prog.Entry); !ok || perm&gvinst.PermExec == 0 {
		t.Errorf("entry page perm %v mapped %v", perm, ok)
	}
}
