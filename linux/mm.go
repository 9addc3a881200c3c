package linux

import (
	"errors"
	"io"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/loader"
)

// mmap flags and protections (x86-64 Linux values).
const (
	protRead  = 0x1
	protWrite = 0x2
	protExec  = 0x4

	mapShared         = 0x01
	mapPrivate        = 0x02
	mapFixed          = 0x10
	mapAnonymous      = 0x20
	mapFixedNoreplace = 0x100000

	mremapMaymove = 1
	mremapFixed   = 2
)

func permOf(prot uint64) gvinst.Perm {
	var p gvinst.Perm
	if prot&protRead != 0 {
		p |= gvinst.PermRead
	}
	if prot&protWrite != 0 {
		p |= gvinst.PermWrite | gvinst.PermRead
	}
	if prot&protExec != 0 {
		p |= gvinst.PermExec | gvinst.PermRead
	}
	return p
}

func pageUp(n uint64) uint64 { return (n + gvinst.PageSize - 1) &^ (gvinst.PageSize - 1) }

func memErr(err error) error {
	if errors.Is(err, gvinst.ErrOutOfMemory) {
		return ENOMEM
	}
	return EINVAL
}

// Brk implements linux syscall brk(2). Growing maps zeroed pages after the
// program's data; a failed request returns the current break.
func (p *Process) BrkSyscall(_ *gvinst.CPU, a args) (uint64, error) {
	want := a[0]
	// A break past the top of the mmap area would wrap when rounded up to
	// a page, and then unmap everything below the old break.
	if want < p.brkStart || want == p.brk || want > loader.MmapTop {
		return p.brk, nil
	}
	oldTop, newTop := pageUp(p.brk), pageUp(want)
	switch {
	case newTop > oldTop:
		if !p.freeRange(oldTop, newTop-oldTop) {
			return p.brk, nil
		}
		if err := p.mem.Map(oldTop, newTop-oldTop, gvinst.PermRead|gvinst.PermWrite); err != nil {
			return p.brk, nil
		}
	case newTop < oldTop:
		_ = p.mem.Unmap(newTop, oldTop-newTop)
	}
	p.brk = want
	return p.brk, nil
}

// freeRange reports whether no page of [addr, addr+size) is mapped.
func (p *Process) freeRange(addr, size uint64) bool { return p.mem.IsFree(addr, size) }

// Mmap implements linux syscall mmap(2): private anonymous and private file
// mappings (the file's bytes are copied in), at a fixed address or one gxbit
// chooses top-down below the stack. Writable shared mappings are refused.
func (p *Process) Mmap(_ *gvinst.CPU, a args) (uint64, error) {
	addr, length, prot, flags, fd, off := a[0], a[1], a[2], a[3], int(int32(a[4])), a[5]
	if length == 0 || length > 1<<46 || off&(gvinst.PageSize-1) != 0 {
		return 0, EINVAL
	}
	if flags&(mapShared|mapPrivate) == 0 {
		return 0, EINVAL
	}
	size := pageUp(length)
	var src *hostFile
	if flags&mapAnonymous == 0 {
		h, err := p.hostFD(uint64(fd))
		if err != nil {
			return 0, EBADF
		}
		if flags&mapShared != 0 && prot&protWrite != 0 {
			return 0, ENODEV
		}
		src = h
	}
	switch {
	case flags&(mapFixed|mapFixedNoreplace) != 0:
		if addr&(gvinst.PageSize-1) != 0 {
			return 0, EINVAL
		}
		if flags&mapFixedNoreplace != 0 && !p.freeRange(addr, size) {
			return 0, EEXIST
		}
	case addr != 0 && addr&(gvinst.PageSize-1) == 0 && addr+size <= loader.MmapTop && p.freeRange(addr, size):
		// Use the hint.
	default:
		var ok bool
		if addr, ok = p.mem.FindFree(size, loader.MmapBottom, loader.MmapTop); !ok {
			return 0, ENOMEM
		}
	}
	if err := p.mem.Map(addr, size, gvinst.PermRead|gvinst.PermWrite); err != nil {
		return 0, memErr(err)
	}
	if src != nil {
		if err := p.copyFile(src, int64(off), addr, length); err != nil {
			_ = p.mem.Unmap(addr, size)
			return 0, err
		}
	}
	if err := p.mem.Protect(addr, size, permOf(prot)); err != nil {
		return 0, EINVAL
	}
	return addr, nil
}

// Munmap implements linux syscall munmap(2).
func (p *Process) Munmap(_ *gvinst.CPU, a args) (uint64, error) {
	if a[0]&(gvinst.PageSize-1) != 0 || a[1] == 0 {
		return 0, EINVAL
	}
	if err := p.mem.Unmap(a[0], pageUp(a[1])); err != nil {
		return 0, EINVAL
	}
	return 0, nil
}

// Mprotect implements linux syscall mprotect(2).
func (p *Process) Mprotect(_ *gvinst.CPU, a args) (uint64, error) {
	if a[0]&(gvinst.PageSize-1) != 0 {
		return 0, EINVAL
	}
	if a[1] == 0 {
		return 0, nil
	}
	if err := p.mem.Protect(a[0], pageUp(a[1]), permOf(a[2])); err != nil {
		return 0, ENOMEM
	}
	return 0, nil
}

// Mremap implements linux syscall mremap(2): shrinking, growing in place,
// and moving when MREMAP_MAYMOVE allows it.
func (p *Process) Mremap(_ *gvinst.CPU, a args) (uint64, error) {
	old, oldSize, newSize, flags := a[0], pageUp(a[1]), pageUp(a[2]), a[3]
	if old&(gvinst.PageSize-1) != 0 || newSize == 0 || flags&mremapFixed != 0 {
		return 0, EINVAL
	}
	perm, ok := p.mem.PermAt(old)
	if !ok || !p.mem.IsMapped(old, oldSize) {
		return 0, EFAULT
	}
	switch {
	case newSize == oldSize:
		return old, nil
	case newSize < oldSize:
		_ = p.mem.Unmap(old+newSize, oldSize-newSize)
		return old, nil
	case p.freeRange(old+oldSize, newSize-oldSize) && old+newSize <= loader.MmapTop:
		if err := p.mem.Map(old+oldSize, newSize-oldSize, perm); err != nil {
			return 0, memErr(err)
		}
		return old, nil
	case flags&mremapMaymove == 0:
		return 0, ENOMEM
	}
	to, ok := p.mem.FindFree(newSize, loader.MmapBottom, loader.MmapTop)
	if !ok {
		return 0, ENOMEM
	}
	// Map the growth first, so that a refusal changes nothing; then move
	// the old pages in front of it.
	if err := p.mem.Map(to+oldSize, newSize-oldSize, perm); err != nil {
		return 0, memErr(err)
	}
	if err := p.mem.Move(old, to, oldSize); err != nil {
		_ = p.mem.Unmap(to+oldSize, newSize-oldSize)
		return 0, EFAULT
	}
	return to, nil
}

// Madvise implements linux syscall madvise(2) as advice gxbit may ignore,
// except MADV_DONTNEED, which zeroes private anonymous pages.
func (p *Process) Madvise(_ *gvinst.CPU, a args) (uint64, error) {
	if a[0]&(gvinst.PageSize-1) != 0 {
		return 0, EINVAL
	}
	if a[2] == 4 && a[1] > 0 { // MADV_DONTNEED
		if err := p.mem.Discard(a[0], pageUp(a[1])); err != nil {
			return 0, ENOMEM
		}
	}
	return 0, nil
}

// fileChunk is how many bytes of a file a mapping copies at a time.
const fileChunk = 1 << 16

// copyFile copies up to length bytes of src from offset off into guest
// memory at addr, a chunk at a time, stopping at the end of the file: the
// host memory it takes is one chunk, whatever length asks for.
func (p *Process) copyFile(src *hostFile, off int64, addr, length uint64) error {
	buf := make([]byte, min(length, fileChunk))
	for done := uint64(0); done < length; {
		if err := p.interrupted(); err != nil {
			return err
		}
		chunk := buf[:min(length-done, uint64(len(buf)))]
		n, err := src.ReadAt(chunk, off+int64(done))
		if n > 0 {
			if err := p.mem.Poke(addr+done, chunk[:n]); err != nil {
				return EFAULT
			}
			done += uint64(n)
		}
		if err == io.EOF || n == 0 && err == nil {
			return nil
		}
		if err != nil {
			return errnoOf(err)
		}
	}
	return nil
}
