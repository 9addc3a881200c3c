package linux

import (
	"crypto/rand"
	"strconv"
	"syscall"
)

// The guest's /dev and /proc are gxbit's own, whatever the root holds
// there: /dev has the devices programs expect (null, zero, full, random,
// urandom, tty, and stdin, stdout, stderr and fd as links into
// /proc/self/fd); /proc has only the guest's own process: /proc/self (a
// link to /proc/<pid>), its fd directory of magic links to the guest's
// descriptors, and exe. Nothing of the host's /proc is reachable.

// vkind is what a virtual file is.
type vkind uint8

// The kinds of virtual file.
const (
	vDir  vkind = iota // a directory: /dev, /proc, /proc/<pid>, /proc/<pid>/fd
	vDev               // a character device in /dev
	vLink              // a symbolic link
	vFD                // /proc/<pid>/fd/N: opening it reopens the guest's descriptor N
	vExe               // /proc/<pid>/exe: the running program
)

// vnode is one virtual file.
type vnode struct {
	kind  vkind
	name  string // its name in its directory
	ino   uint64
	major uint32 // device numbers, for vDev
	minor uint32
	link  string // the target, for vLink
	fd    int    // for vFD
}

// virtualDev is the device number the virtual files report.
const virtualDev = 5

// The virtual directories.
var (
	vdirDev   = &vnode{kind: vDir, name: "dev", ino: 1}
	vdirProc  = &vnode{kind: vDir, name: "proc", ino: 2}
	vdirPid   = &vnode{kind: vDir, name: strconv.Itoa(guestPID), ino: 3}
	vdirPidFD = &vnode{kind: vDir, name: "fd", ino: 4}
)

// devices are /dev's entries.
var devices = []*vnode{
	{kind: vDev, name: "null", ino: 10, major: 1, minor: 3},
	{kind: vDev, name: "zero", ino: 11, major: 1, minor: 5},
	{kind: vDev, name: "full", ino: 12, major: 1, minor: 7},
	{kind: vDev, name: "random", ino: 13, major: 1, minor: 8},
	{kind: vDev, name: "urandom", ino: 14, major: 1, minor: 9},
	{kind: vDev, name: "tty", ino: 15, major: 5, minor: 0},
	{kind: vLink, name: "stdin", ino: 16, link: "/proc/self/fd/0"},
	{kind: vLink, name: "stdout", ino: 17, link: "/proc/self/fd/1"},
	{kind: vLink, name: "stderr", ino: 18, link: "/proc/self/fd/2"},
	{kind: vLink, name: "fd", ino: 19, link: "/proc/self/fd"},
}

var (
	vlinkSelf = &vnode{kind: vLink, name: "self", ino: 20, link: strconv.Itoa(guestPID)}
	vExeNode  = &vnode{kind: vExe, name: "exe", ino: 21}
)

// virtualRoot is the virtual directory the guest root's entry c is, or nil.
func virtualRoot(c string) *vnode {
	switch c {
	case "dev":
		return vdirDev
	case "proc":
		return vdirProc
	}
	return nil
}

// child is the entry c of virtual directory n, or nil. p may be nil (no
// process yet): then /proc has no entries.
func (n *vnode) child(p *Process, c string) *vnode {
	for _, e := range n.children(p) {
		if e.name == c {
			return e
		}
	}
	return nil
}

// children lists the entries of virtual directory n.
func (n *vnode) children(p *Process) []*vnode {
	switch n {
	case vdirDev:
		return devices
	case vdirProc:
		if p == nil {
			return nil
		}
		return []*vnode{vlinkSelf, vdirPid}
	case vdirPid:
		return []*vnode{vdirPidFD, vExeNode}
	case vdirPidFD:
		var out []*vnode
		for fd := 0; fd < maxFDs; fd++ {
			if _, ok := p.fds[fd]; ok {
				out = append(out, &vnode{kind: vFD, name: strconv.Itoa(fd), ino: 1000 + uint64(fd), fd: fd})
			}
		}
		return out
	}
	return nil
}

// linkTarget is where the link n leads, for following it.
func (n *vnode) linkTarget(p *Process) (string, error) {
	switch n.kind {
	case vLink:
		return n.link, nil
	case vFD:
		d, ok := p.fds[n.fd]
		if !ok {
			return "", ENOENT
		}
		if !d.dir {
			return "", ENOTDIR
		}
		return d.path, nil
	case vExe:
		return "", ENOTDIR
	}
	return "", EINVAL
}

// readlink is what readlink(2) reports for the link n.
func (n *vnode) readlink(p *Process) (string, error) {
	switch n.kind {
	case vLink:
		return n.link, nil
	case vFD:
		d, ok := p.fds[n.fd]
		if !ok {
			return "", ENOENT
		}
		return d.path, nil
	case vExe:
		return p.cfg.ExePath, nil
	}
	return "", EINVAL
}

// stat describes n without following it.
func (n *vnode) stat(p *Process) statFields {
	s := statFields{dev: virtualDev, ino: n.ino, nlink: 1, blksize: 4096, atime: p.start, mtime: p.start, ctime: p.start}
	switch n.kind {
	case vDir:
		s.mode, s.nlink = syscall.S_IFDIR|0o555, 2
		if n == vdirDev {
			s.mode = syscall.S_IFDIR | 0o755
		}
	case vDev:
		s.mode = syscall.S_IFCHR | 0o666
		s.rdev = uint64(n.major)<<8 | uint64(n.minor)
		s.rdevMajor, s.rdevMinor = n.major, n.minor
	case vLink:
		s.mode, s.size = syscall.S_IFLNK|0o777, int64(len(n.link))
	case vFD:
		s.mode, s.size = syscall.S_IFLNK|0o700, 64
		s.uid, s.gid = guestUID, guestGID
	case vExe:
		s.mode, s.size = syscall.S_IFLNK|0o777, int64(len(p.cfg.ExePath))
		s.uid, s.gid = guestUID, guestGID
	}
	s.devMinor = virtualDev
	return s
}

// devFile is an open virtual device.
type devFile struct{ n *vnode }

func (d *devFile) Read(b []byte) (int, error) {
	switch d.n.name {
	case "null":
		return 0, nil
	case "random", "urandom":
		return rand.Read(b)
	}
	clear(b) // zero, full
	return len(b), nil
}

func (d *devFile) Write(b []byte) (int, error) {
	if d.n.name == "full" {
		return 0, ENOSPC
	}
	return len(b), nil
}

func (d *devFile) Close() error { return nil }

// memFile is a read-only file held in memory (/proc/self/exe).
type memFile struct {
	data []byte
	off  int64
}

func (m *memFile) Read(b []byte) (int, error) {
	if m.off >= int64(len(m.data)) {
		return 0, nil
	}
	n := copy(b, m.data[m.off:])
	m.off += int64(n)
	return n, nil
}

func (m *memFile) Write([]byte) (int, error) { return 0, EBADF }

func (m *memFile) Close() error { return nil }

// vdirFile is an open virtual directory.
type vdirFile struct {
	n       *vnode
	dirents []dirent
	dirDone bool
}

func (*vdirFile) Read([]byte) (int, error)  { return 0, EISDIR }
func (*vdirFile) Write([]byte) (int, error) { return 0, EBADF }
func (*vdirFile) Close() error              { return nil }

func (m *memFile) seek(off int64, whence uint64) (uint64, error) {
	switch whence {
	case 1:
		off += m.off
	case 2:
		off += int64(len(m.data))
	case 0:
	default:
		return 0, EINVAL
	}
	if off < 0 {
		return 0, EINVAL
	}
	m.off = off
	return uint64(off), nil
}
