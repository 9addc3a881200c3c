// Package linux is gxbit's Linux personality: the x86-64 system call
// interface a guest program sees, its file descriptors, its memory map (brk
// and mmap), and the sandbox policy that bounds what it may touch.
//
// System calls are one table (table.go): number → name, handler, support
// level and a note. Calls gxbit does not implement are explicit rows that
// return ENOSYS and are counted. Handlers return an Errno, which becomes
// -errno in the guest's rax in exactly one place (Process.Syscall).
//
// The sandbox: the guest sees host files only under Config.Root, read-only
// unless a directory is listed in Config.Writable, never those listed in
// Config.Hide (known by device and inode, checked on every path component:
// view.go), and gxbit's own /dev and /proc (virtual.go); it has no sockets,
// no execve, no ptrace and no second thread.
package linux

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// Errno is a Linux error number as the guest sees it.
type Errno uint16

// The error numbers handlers use (x86-64 Linux values).
const (
	EPERM        Errno = 1
	ENOENT       Errno = 2
	ESRCH        Errno = 3
	EINTR        Errno = 4
	EIO          Errno = 5
	ENXIO        Errno = 6
	EBADF        Errno = 9
	ECHILD       Errno = 10
	EAGAIN       Errno = 11
	ENOMEM       Errno = 12
	EACCES       Errno = 13
	EFAULT       Errno = 14
	EEXIST       Errno = 17
	EXDEV        Errno = 18
	ENODEV       Errno = 19
	ENOTDIR      Errno = 20
	EISDIR       Errno = 21
	EINVAL       Errno = 22
	EMFILE       Errno = 24
	ENOTTY       Errno = 25
	ETXTBSY      Errno = 26
	EFBIG        Errno = 27
	ENOSPC       Errno = 28
	ESPIPE       Errno = 29
	EROFS        Errno = 30
	EPIPE        Errno = 32
	ERANGE       Errno = 34
	ENAMETOOLONG Errno = 36
	ENOSYS       Errno = 38
	ENODATA      Errno = 61
	ENOTEMPTY    Errno = 39
	ELOOP        Errno = 40
	EOPNOTSUPP   Errno = 95
)

func (e Errno) Error() string {
	return syscall.Errno(e).Error()
}

// errnoOf maps a host error to the errno the guest should see.
func errnoOf(err error) Errno {
	if err == nil {
		return 0
	}
	var se syscall.Errno
	if errors.As(err, &se) {
		return Errno(se)
	}
	var e Errno
	if errors.As(err, &e) {
		return e
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ENOENT
	case errors.Is(err, fs.ErrPermission):
		return EACCES
	case errors.Is(err, fs.ErrExist):
		return EEXIST
	case errors.Is(err, os.ErrInvalid):
		return EINVAL
	}
	return EIO
}
