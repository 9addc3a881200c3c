package linux

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gxbit/gxbit/gvinst"
)

const (
	nrMmap      = 9
	nrMunmap    = 11
	nrBrk       = 12
	nrMremap    = 25
	nrMadvise   = 28
	nrNanosleep = 35
	nrPwrite64  = 18

	anonPrivate = mapPrivate | mapAnonymous
	protRW      = protRead | protWrite
)

// mustCall makes a system call that must not stop the guest.
func (g *guest) mustCall(nr int, args ...uint64) int64 {
	g.t.Helper()
	r, err := g.call(nr, args...)
	if err != nil {
		g.t.Fatalf("syscall %d: %v", nr, err)
	}
	return r
}

// TestMemorySyscallsHuge is the regression test for issue 12 item 5:
// mmap, mremap, madvise, munmap and brk of 2^46 bytes answer at once and
// take host memory only for the pages the guest touches.
func TestMemorySyscallsHuge(t *testing.T) {
	g := newGuest(t, Config{Brk: 0x1000000})
	const huge = 1 << 46
	a := g.mustCall(nrMmap, 0, huge, protRW, anonPrivate, ^uint64(0), 0)
	if a < 0 {
		t.Fatalf("mmap(2^46) = %d", a)
	}
	addr := uint64(a)
	if err := g.mem.Store(addr+huge-8, 8, 7); err != nil {
		t.Fatal(err)
	}
	if r := g.mustCall(nrMadvise, addr, huge, 4); r != 0 {
		t.Fatalf("madvise(DONTNEED) = %d", r)
	}
	if v, _ := g.mem.Load(addr+huge-8, 8); v != 0 {
		t.Errorf("MADV_DONTNEED left %d", v)
	}
	if r := g.mustCall(nrMunmap, addr+huge/2, huge/2); r != 0 {
		t.Fatalf("munmap = %d", r)
	}
	if err := g.mem.Store(addr, 8, 9); err != nil {
		t.Fatal(err)
	}
	moved := g.mustCall(nrMremap, addr, huge/2, huge, mremapMaymove)
	if moved < 0 {
		t.Fatalf("mremap = %d", moved)
	}
	if v, err := g.mem.Load(uint64(moved), 8); err != nil || v != 9 {
		t.Errorf("mremap moved %d, %v", v, err)
	}
	if r := g.mustCall(nrBrk, 0x1000000+huge/4); r != 0x1000000+huge/4 {
		t.Errorf("brk(+2^44) = %#x", r)
	}
	if r := g.mustCall(nrBrk, 0x1000000); r != 0x1000000 {
		t.Errorf("brk back = %#x", r)
	}
	if h := g.mem.HostBytes(); h > 64*gvinst.PageSize {
		t.Errorf("huge mappings took %d bytes of host memory", h)
	}
}

// TestMmapOverLimit: a mapping over --max-mem is ENOMEM and changes
// nothing.
func TestMmapOverLimit(t *testing.T) {
	g := newGuest(t, Config{})
	g.mem = gvinst.NewMemory(1 << 30)
	p, err := New(g.mem, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	g.p = p
	if r := g.mustCall(nrMmap, 0, 1<<40, protRW, anonPrivate, ^uint64(0), 0); r != -int64(ENOMEM) {
		t.Errorf("mmap(2^40) over a 1 GiB limit = %d", r)
	}
	if g.mem.Mapped() != 0 {
		t.Errorf("refused mmap mapped %d bytes", g.mem.Mapped())
	}
}

// TestWriteBadBufferAllocatesNothing is the regression test for
// write(1, bad, 1 GiB), which allocated 1 GiB before checking the address.
func TestWriteBadBufferAllocatesNothing(t *testing.T) {
	g := newGuest(t, Config{})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if r := g.mustCall(nrWrite, 1, 0x7000_0000_0000, 1<<30); r != -int64(EFAULT) {
		t.Errorf("write(bad, 1 GiB) = %d", r)
	}
	if r := g.mustCall(nrRead, 0, 0x7000_0000_0000, 1<<30); r != -int64(EFAULT) {
		t.Errorf("read(bad, 1 GiB) = %d", r)
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Errorf("bad 1 GiB buffers allocated %d bytes", d)
	}
	// A buffer that runs into an unmapped page writes what comes before.
	g.mem.Poke(scratch+16*gvinst.PageSize-3, []byte("abc"))
	if r := g.mustCall(nrWrite, 1, scratch+16*gvinst.PageSize-3, 100); r != 3 || g.out.String() != "abc" {
		t.Errorf("write across the end of the mapping = %d, wrote %q", r, g.out.String())
	}
}

// TestReadBadBufferConsumesNothing: read into an unwritable buffer is
// EFAULT and leaves the input for the next read.
func TestReadBadBufferConsumesNothing(t *testing.T) {
	g := newGuest(t, Config{Stdin: strings.NewReader("hello")})
	if r := g.mustCall(nrRead, 0, 0x7000_0000_0000, 5); r != -int64(EFAULT) {
		t.Errorf("read(bad) = %d", r)
	}
	if r := g.mustCall(nrRead, 0, scratch, 1<<40); r != 5 {
		t.Fatalf("read = %d", r)
	}
	b := make([]byte, 5)
	g.mem.Peek(scratch, b)
	if string(b) != "hello" {
		t.Errorf("read %q", b)
	}
}

// TestMmapFileLongerThanFile: a file mapping longer than the file copies
// the file in chunks and leaves the rest zero.
func TestMmapFileLongerThanFile(t *testing.T) {
	root := t.TempDir()
	content := strings.Repeat("0123456789", 20000) // 200000 bytes: several chunks
	if err := os.WriteFile(filepath.Join(root, "f"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	g := newGuest(t, Config{Root: root})
	fd := g.mustCall(nrOpenat, cwd, g.str("/f"), 0, 0)
	if fd < 0 {
		t.Fatalf("open = %d", fd)
	}
	a := g.mustCall(nrMmap, 0, 1<<40, protRead, mapPrivate, uint64(fd), 0)
	if a < 0 {
		t.Fatalf("mmap = %d", a)
	}
	b := make([]byte, len(content)+8)
	if err := g.mem.Read(uint64(a), b); err != nil {
		t.Fatal(err)
	}
	if string(b[:len(content)]) != content || string(b[len(content):]) != "\x00\x00\x00\x00\x00\x00\x00\x00" {
		t.Error("mapped bytes differ from the file")
	}
	if h := g.mem.HostBytes(); h > uint64(len(content))+64*gvinst.PageSize {
		t.Errorf("mapping a %d-byte file took %d bytes of host memory", len(content), h)
	}
}

// TestSyscallsInterrupted: once the run's context ends, a sleep and a long
// write stop within a chunk with ErrInterrupted.
func TestSyscallsInterrupted(t *testing.T) {
	g := newGuest(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	g.p.SetContext(ctx)
	g.mem.Poke(scratch, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}) // 1 s
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	if _, err := g.call(nrNanosleep, scratch, 0); !errors.Is(err, ErrInterrupted) {
		t.Errorf("nanosleep after cancel: %v", err)
	}
	if d := time.Since(start); d >= time.Second {
		t.Errorf("nanosleep was not interrupted (%v)", d)
	}
	if _, err := g.call(nrWrite, 1, scratch, 16*gvinst.PageSize); !errors.Is(err, ErrInterrupted) {
		t.Errorf("write after cancel: %v", err)
	}
}

// TestBlockedStreamInterrupted: a read from a stream that never answers
// (a terminal, a pipe from an idle program) and a write to one that never
// drains stop with ErrInterrupted once the run's context ends.
func TestBlockedStreamInterrupted(t *testing.T) {
	stdin, _ := io.Pipe()  // nothing is ever written
	_, stdout := io.Pipe() // nothing is ever read
	mem := gvinst.NewMemory(0)
	if err := mem.Map(scratch, 16*gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
		t.Fatal(err)
	}
	p, err := New(mem, Config{Stdin: stdin, Stdout: stdout})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	g := &guest{t: t, p: p, mem: mem, cpu: &gvinst.CPU{}, next: scratch}
	for _, nr := range []int{nrRead, nrWrite} {
		ctx, cancel := context.WithCancel(context.Background())
		p.SetContext(ctx)
		time.AfterFunc(20*time.Millisecond, cancel)
		done := make(chan error, 1)
		go func() {
			_, err := g.call(nr, uint64(nr), scratch, 100)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrInterrupted) {
				t.Errorf("syscall %d on a blocked stream after cancel: %v", nr, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("syscall %d on a blocked stream was not interrupted", nr)
		}
	}
}
