package linux

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// guest is a Process over a small memory with a scratch page, for calling
// system calls the way a guest would.
type guest struct {
	t    *testing.T
	p    *Process
	cpu  *gvinst.CPU
	mem  *gvinst.Memory
	out  bytes.Buffer
	next uint64
}

const scratch = 0x10000

func newGuest(t *testing.T, cfg Config) *guest {
	t.Helper()
	g := &guest{t: t, mem: gvinst.NewMemory(0), cpu: &gvinst.CPU{}, next: scratch}
	if err := g.mem.Map(scratch, 16*gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
		t.Fatal(err)
	}
	cfg.Stdout = &g.out
	p, err := New(g.mem, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	g.p = p
	return g
}

// str puts a NUL-terminated string in guest memory and returns its address.
func (g *guest) str(s string) uint64 {
	a := g.next
	if err := g.mem.Poke(a, append([]byte(s), 0)); err != nil {
		g.t.Fatal(err)
	}
	g.next += uint64(len(s)+16) &^ 7
	return a
}

// call makes system call nr and returns rax as a signed value (-errno on
// failure) and the error that stops the guest, if any.
func (g *guest) call(nr int, args ...uint64) (int64, error) {
	var a [6]uint64
	copy(a[:], args)
	s := &g.cpu.State
	s[gvinst.S0] = uint64(nr)
	s[7], s[6], s[2], s[10], s[8], s[9] = a[0], a[1], a[2], a[3], a[4], a[5]
	err := g.p.Syscall(g.cpu)
	return int64(s[gvinst.S0]), err
}

const (
	nrRead     = 0
	nrWrite    = 1
	nrOpenat   = 257
	nrMkdirat  = 258
	nrUnlinkat = 263
	nrClose    = 3
	nrExit     = 231
	cwd        = 0xffffff9c
)

func TestSandboxFiles(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "ro"), 0o755))
	must(os.MkdirAll(filepath.Join(root, "rw"), 0o755))
	must(os.MkdirAll(filepath.Join(root, "secret"), 0o755))
	must(os.WriteFile(filepath.Join(root, "ro", "f.txt"), []byte("hello"), 0o644))
	must(os.WriteFile(filepath.Join(root, "secret", "key"), []byte("k"), 0o644))
	outside := t.TempDir()
	must(os.WriteFile(filepath.Join(outside, "host.txt"), []byte("host"), 0o644))
	must(os.Symlink(filepath.Join(outside, "host.txt"), filepath.Join(root, "rw", "escape")))

	g := newGuest(t, Config{Root: root, Writable: []string{"/rw"}, Hide: []string{filepath.Join(root, "secret")}})
	open := func(path string, flags uint64) int64 {
		r, err := g.call(nrOpenat, cwd, g.str(path), flags, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// Reading inside the root works, through .. too, but never above it.
	if fd := open("/ro/f.txt", 0); fd < 0 {
		t.Fatalf("open /ro/f.txt: %d", fd)
	} else {
		buf := g.next
		n, _ := g.call(nrRead, uint64(fd), buf, 100)
		got := make([]byte, n)
		_ = g.mem.Peek(buf, got)
		if string(got) != "hello" {
			t.Errorf("read %q", got)
		}
		g.call(nrClose, uint64(fd))
	}
	if fd := open("/rw/../ro/f.txt", 0); fd < 0 {
		t.Errorf("open through ..: %d", fd)
	}
	if fd := open("/../../../../etc/passwd", 0); fd != -int64(ENOENT) {
		t.Errorf("open above the root: %d, want -ENOENT", fd)
	}
	// Writing is refused outside the writable directory.
	if fd := open("/ro/new.txt", oCreat|oWronly); fd != -int64(EROFS) {
		t.Errorf("create in a read-only directory: %d, want -EROFS", fd)
	}
	if fd := open("/ro/f.txt", oRdwr); fd != -int64(EROFS) {
		t.Errorf("open read-write outside --writable: %d, want -EROFS", fd)
	}
	if r, _ := g.call(nrUnlinkat, cwd, g.str("/ro/f.txt"), 0); r != -int64(EROFS) {
		t.Errorf("unlink outside --writable: %d", r)
	}
	// Inside it, files can be created, written and removed.
	fd := open("/rw/out.txt", oCreat|oWronly|oTrunc)
	if fd < 0 {
		t.Fatalf("create in --writable: %d", fd)
	}
	if n, _ := g.call(nrWrite, uint64(fd), g.str("data"), 4); n != 4 {
		t.Errorf("write: %d", n)
	}
	g.call(nrClose, uint64(fd))
	if b, err := os.ReadFile(filepath.Join(root, "rw", "out.txt")); err != nil || string(b) != "data" {
		t.Errorf("host sees %q, %v", b, err)
	}
	if r, _ := g.call(nrMkdirat, cwd, g.str("/rw/sub"), 0o755); r != 0 {
		t.Errorf("mkdir in --writable: %d", r)
	}
	if r, _ := g.call(nrUnlinkat, cwd, g.str("/rw/out.txt"), 0); r != 0 {
		t.Errorf("unlink in --writable: %d", r)
	}
	// A symlink cannot lead out of the sandbox, and hidden paths do not exist.
	if fd := open("/rw/escape", 0); fd >= 0 {
		t.Errorf("a symlink to a host file outside the root opened as fd %d", fd)
	}
	if fd := open("/secret/key", 0); fd != -int64(ENOENT) {
		t.Errorf("hidden path: %d, want -ENOENT", fd)
	}
	if fd := open("/proc/self/maps", 0); fd != -int64(ENOENT) {
		t.Errorf("/proc: %d, want -ENOENT", fd)
	}
}

func TestSyscallTable(t *testing.T) {
	g := newGuest(t, Config{})
	// An unknown number and an unsupported row both answer ENOSYS and are counted.
	if r, err := g.call(9999); err != nil || r != -int64(ENOSYS) {
		t.Errorf("unknown syscall: %d, %v", r, err)
	}
	if r, _ := g.call(334); r != -int64(ENOSYS) { // rseq
		t.Errorf("rseq: %d", r)
	}
	// The sandbox refuses execve and sockets with EACCES.
	if r, _ := g.call(59, g.str("/bin/sh"), 0, 0); r != -int64(EACCES) {
		t.Errorf("execve: %d", r)
	}
	if r, _ := g.call(41, 2, 1, 0); r != -int64(EACCES) {
		t.Errorf("socket: %d", r)
	}
	if n, _ := g.call(nrWrite, 1, g.str("hi\n"), 3); n != 3 || g.out.String() != "hi\n" {
		t.Errorf("write to stdout: %d, %q", n, g.out.String())
	}
	if _, err := g.call(nrWrite, 1, 0xdead0000, 3); err != nil {
		t.Errorf("a bad buffer must be EFAULT for the guest, not an error: %v", err)
	}
	if r, _ := g.call(nrWrite, 1, 0xdead0000, 3); r != -int64(EFAULT) {
		t.Errorf("write from a bad address: %d", r)
	}
	var exit *ExitError
	if _, err := g.call(nrExit, 7); !errors.As(err, &exit) || exit.Status != 7 {
		t.Errorf("exit_group: %v", err)
	}
	var unsup, named bool
	for _, c := range g.p.Counts() {
		if c.Nr == 9999 && c.Unsupported {
			unsup = true
		}
		if c.Name == "execve" && c.Unsupported {
			named = true
		}
	}
	if !unsup || !named {
		t.Errorf("counts do not mark unsupported and refused calls: %+v", g.p.Counts())
	}
	for nr, e := range Table() {
		if e.Name == "" || strings.ContainsAny(e.Name, " \t") {
			t.Errorf("syscall %d has a bad name %q", nr, e.Name)
		}
		if e.Support == Unsupported && table[nr].Fn != nil {
			t.Errorf("%s is marked unsupported but has a handler", e.Name)
		}
		if e.Support != Unsupported && table[nr].Fn == nil {
			t.Errorf("%s has no handler but is marked %s", e.Name, e.Support)
		}
	}
}

// TestDupAndClose checks that closing a descriptor leaves its dups working,
// and that dup2 over an open descriptor closes only that descriptor.
func TestDupAndClose(t *testing.T) {
	root := t.TempDir()
	g := newGuest(t, Config{Root: root, Writable: []string{"/"}})
	fd, _ := g.call(nrOpenat, cwd, g.str("/f.txt"), oCreat|oWronly|oTrunc, 0o644)
	if fd < 0 {
		t.Fatalf("open: %d", fd)
	}
	dup, _ := g.call(32, uint64(fd)) // dup
	if dup < 0 || dup == fd {
		t.Fatalf("dup: %d", dup)
	}
	if r, _ := g.call(nrClose, uint64(fd)); r != 0 {
		t.Fatalf("close: %d", r)
	}
	if n, _ := g.call(nrWrite, uint64(dup), g.str("ab"), 2); n != 2 {
		t.Errorf("write through the dup after closing the original: %d", n)
	}
	if r, _ := g.call(33, 1, uint64(dup)); r != dup { // dup2(stdout, dup)
		t.Errorf("dup2: %d", r)
	}
	if n, _ := g.call(nrWrite, uint64(dup), g.str("x\n"), 2); n != 2 || g.out.String() != "x\n" {
		t.Errorf("after dup2 the descriptor writes to stdout: %d, %q", n, g.out.String())
	}
	if r, _ := g.call(nrClose, uint64(fd)); r != -int64(EBADF) {
		t.Errorf("second close: %d, want -EBADF", r)
	}
	if b, err := os.ReadFile(filepath.Join(root, "f.txt")); err != nil || string(b) != "ab" {
		t.Errorf("file holds %q, %v", b, err)
	}
}
