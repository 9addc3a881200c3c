package linux

import (
	"encoding/binary"
	"io"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gxbit/gxbit/gvinst"
)

// Open flags (x86-64 Linux values).
const (
	oAccMode   = 0x3
	oWronly    = 0x1
	oRdwr      = 0x2
	oCreat     = 0x40
	oExcl      = 0x80
	oTrunc     = 0x200
	oAppend    = 0x400
	oNonblock  = 0x800
	oDirectory = 0x10000
	oNofollow  = 0x20000
	oCloexec   = 0x80000
	oPath      = 0x200000

	atFdcwd         = -100
	fdCwd           = uint64(0xffffff9c) // AT_FDCWD as a 32-bit argument
	atSymlinkNofoll = 0x100
	atRemoveDir     = 0x200
	atEmptyPath     = 0x1000
)

// file is what a descriptor refers to.
type file interface {
	Read(p []byte) (int, error)
	Write(p []byte) (int, error)
	Close() error
}

type fileDesc struct {
	f       file
	path    string // canonical guest path
	flags   int
	cloexec bool
	dir     bool // a directory: a base for *at calls, fchdir and /proc/self/fd/N/...
}

// stream is one of the guest's standard streams, backed by the caller's
// reader or writer.
type stream struct {
	r   io.Reader
	w   io.Writer
	tty bool
}

func (s *stream) Read(p []byte) (int, error) {
	if s.r == nil {
		return 0, EBADF
	}
	n, err := s.r.Read(p)
	if err == io.EOF {
		err = nil
	}
	return n, err
}

func (s *stream) Write(p []byte) (int, error) {
	if s.w == nil {
		return 0, EBADF
	}
	return s.w.Write(p)
}

func (s *stream) Close() error { return nil }

// dirent is one directory entry as getdents64 reports it.
type dirent struct {
	name string
	ino  uint64
	typ  byte // DT_* value
}

const dtDir, dtChr, dtLnk = 4, 2, 10

// readDirents lists a host directory as Linux does: "." and ".." first,
// without the entries the sandbox hides, and with the guest root's dev and
// proc standing for gxbit's virtual ones.
func (p *Process) readDirents(f *os.File, guestPath string) ([]dirent, error) {
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	var self unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &self); err != nil {
		return nil, err
	}
	dirID := idOf(&self)
	parent := self.Ino
	if guestPath != "/" {
		if r, err := p.view.walk(p, "/", path.Dir(guestPath), true); err == nil {
			if r.virtual == nil {
				parent = r.st.Ino
			}
			r.release()
		}
	}
	out := make([]dirent, 0, len(ents)+2)
	out = append(out, dirent{".", self.Ino, dtDir}, dirent{"..", parent, dtDir})
	if guestPath == "/" {
		out = append(out, dirent{"dev", vdirDev.ino, dtDir}, dirent{"proc", vdirProc.ino, dtDir})
	}
	fd := int(f.Fd())
	for _, e := range ents {
		if guestPath == "/" && (e.Name() == "dev" || e.Name() == "proc") {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, e.Name(), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue // gone since the listing
		}
		if p.view.isHiddenAt(fd, dirID, e.Name(), &st) {
			continue
		}
		out = append(out, dirent{e.Name(), st.Ino, byte(st.Mode & unix.S_IFMT >> 12)})
	}
	return out, nil
}

// virtualDirents lists a virtual directory.
func (p *Process) virtualDirents(n *vnode) []dirent {
	out := []dirent{{".", n.ino, dtDir}, {"..", 2, dtDir}}
	for _, c := range n.children(p) {
		typ := byte(dtLnk)
		switch c.kind {
		case vDir:
			typ = dtDir
		case vDev:
			typ = dtChr
		}
		out = append(out, dirent{c.name, c.ino, typ})
	}
	return out
}

// hostFile is a host file opened inside the sandbox.
type hostFile struct {
	*os.File
	dirents []dirent // pending getdents64 entries
	dirDone bool
}

// maxFDs bounds the guest's descriptor numbers (RLIMIT_NOFILE).
const maxFDs = 1024

func (p *Process) fd(n uint64) (*fileDesc, error) {
	d, ok := p.fds[int(int32(n))]
	if !ok {
		return nil, EBADF
	}
	return d, nil
}

func (p *Process) newFD(d *fileDesc, min int) (int, error) {
	for n := min; n < maxFDs; n++ {
		if _, used := p.fds[n]; !used {
			p.fds[n] = d
			return n, nil
		}
	}
	return 0, EMFILE
}

// resolve resolves the guest path name, relative to dirfd (AT_FDCWD: the
// working directory) unless it is absolute, through the sandbox's view.
// follow says whether a symbolic link in the last component is followed.
// The caller releases the result.
func (p *Process) resolve(dirfd uint64, name string, follow bool) (*resolved, error) {
	start := p.cwd
	if !strings.HasPrefix(name, "/") {
		if fd := int(int32(dirfd)); fd != atFdcwd {
			d, ok := p.fds[fd]
			if !ok {
				return nil, EBADF
			}
			if !d.dir {
				return nil, ENOTDIR
			}
			start = d.path
		}
	}
	return p.view.walk(p, start, name, follow)
}

// hostOpenFlags translates the guest's open flags to the host's, leaving
// out those gxbit decides itself (O_CLOEXEC, O_NOFOLLOW, O_NONBLOCK).
func hostOpenFlags(flags uint64) int {
	f := int(flags & oAccMode)
	for _, b := range []uint64{oCreat, oExcl, oTrunc, oAppend, oDirectory, oPath} {
		f |= int(flags & b)
	}
	return f
}

func (p *Process) openAt(dirfd uint64, name string, flags uint64, mode uint64) (uint64, error) {
	follow := flags&oNofollow == 0 && flags&(oCreat|oExcl) != oCreat|oExcl
	r, err := p.resolve(dirfd, name, follow)
	if err != nil {
		return 0, err
	}
	defer r.release()
	write := flags&oAccMode != 0 || flags&oTrunc != 0
	if r.virtual != nil {
		return p.openVirtual(r, flags, write)
	}
	d := &fileDesc{path: r.guest, flags: int(flags), cloexec: flags&oCloexec != 0}
	host := hostOpenFlags(flags)
	var perm uint32
	switch {
	case !r.exists:
		if flags&oCreat == 0 {
			return 0, ENOENT
		}
		if r.mustDir {
			return 0, EISDIR
		}
		if r.dir().vdir != nil {
			return 0, EACCES
		}
		if !r.writable {
			return 0, EROFS
		}
		perm = uint32(mode & 0o7777 &^ uint64(p.umask))
	case flags&(oCreat|oExcl) == oCreat|oExcl:
		return 0, EEXIST
	default:
		switch r.st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			return 0, ELOOP
		case unix.S_IFDIR:
			if write {
				return 0, EISDIR
			}
			d.dir = true
		case unix.S_IFREG:
			if r.mustDir {
				return 0, ENOTDIR
			}
		case unix.S_IFIFO:
			// A FIFO would block the only guest thread forever.
			host |= unix.O_NONBLOCK
		default:
			// Host devices and sockets stay the host's.
			return 0, EACCES
		}
		if flags&oDirectory != 0 && !d.dir {
			return 0, ENOTDIR
		}
		if write && !r.writable {
			return 0, EROFS
		}
		host &^= unix.O_CREAT | unix.O_EXCL
	}
	f, err := p.view.openHost(r, host, perm)
	if err != nil {
		return 0, err
	}
	d.f = &hostFile{File: f}
	n, err := p.newFD(d, 0)
	if err != nil {
		f.Close()
		return 0, err
	}
	return uint64(n), nil
}

// openVirtual opens a file of the guest's /dev or /proc.
func (p *Process) openVirtual(r *resolved, flags uint64, write bool) (uint64, error) {
	n := r.virtual
	if flags&(oCreat|oExcl) == oCreat|oExcl {
		return 0, EEXIST
	}
	d := &fileDesc{path: r.guest, flags: int(flags), cloexec: flags&oCloexec != 0}
	switch n.kind {
	case vDir:
		if write {
			return 0, EISDIR
		}
		d.f, d.dir = &vdirFile{n: n}, true
	case vDev:
		if n.name == "tty" {
			return 0, ENXIO // no controlling terminal
		}
		if flags&oDirectory != 0 {
			return 0, ENOTDIR
		}
		d.f = &devFile{n: n}
	case vFD:
		// Linux reopens the file the descriptor refers to; gxbit shares it.
		orig, ok := p.fds[n.fd]
		if !ok {
			return 0, ENOENT
		}
		if flags&oDirectory != 0 && !orig.dir {
			return 0, ENOTDIR
		}
		c := *orig
		c.cloexec = flags&oCloexec != 0
		fd, err := p.newFD(&c, 0)
		return uint64(fd), err
	case vExe:
		if write {
			return 0, ETXTBSY
		}
		if p.cfg.Exe == nil {
			return p.openAt(fdCwd, p.cfg.ExePath, flags, 0)
		}
		d.f, d.path = &memFile{data: p.cfg.Exe}, p.cfg.ExePath
	default:
		return 0, ELOOP // a link not followed: O_NOFOLLOW
	}
	fd, err := p.newFD(d, 0)
	return uint64(fd), err
}

// Openat implements linux syscall openat(2).
func (p *Process) Openat(_ *gvinst.CPU, a args) (uint64, error) {
	name, err := p.readPath(a[1])
	if err != nil {
		return 0, err
	}
	return p.openAt(a[0], name, a[2], a[3])
}

// Open implements linux syscall open(2).
func (p *Process) Open(_ *gvinst.CPU, a args) (uint64, error) {
	name, err := p.readPath(a[0])
	if err != nil {
		return 0, err
	}
	return p.openAt(fdCwd, name, a[1], a[2])
}

// Creat implements linux syscall creat(2).
func (p *Process) Creat(_ *gvinst.CPU, a args) (uint64, error) {
	name, err := p.readPath(a[0])
	if err != nil {
		return 0, err
	}
	return p.openAt(fdCwd, name, oCreat|oWronly|oTrunc, a[1])
}

// Close implements linux syscall close(2).
func (p *Process) CloseFD(_ *gvinst.CPU, a args) (uint64, error) {
	if _, err := p.fd(a[0]); err != nil {
		return 0, err
	}
	p.release(int(int32(a[0])))
	return 0, nil
}

// release removes descriptor n and closes its file unless another
// descriptor (a dup of it) still refers to the same file.
func (p *Process) release(n int) {
	d, ok := p.fds[n]
	if !ok {
		return
	}
	delete(p.fds, n)
	for _, other := range p.fds {
		if other.f == d.f {
			return
		}
	}
	d.f.Close()
}

// Read implements linux syscall read(2).
func (p *Process) Read(_ *gvinst.CPU, a args) (uint64, error) {
	d, err := p.fd(a[0])
	if err != nil {
		return 0, err
	}
	_, regular := d.f.(*hostFile)
	return p.readInto(a[1], a[2], regular, func(b []byte) (int, error) {
		n, err := d.f.Read(b)
		if err == io.EOF {
			err = nil
		}
		return n, err
	})
}

// Write implements linux syscall write(2).
func (p *Process) Write(_ *gvinst.CPU, a args) (uint64, error) {
	d, err := p.fd(a[0])
	if err != nil {
		return 0, err
	}
	_, regular := d.f.(*hostFile)
	return p.writeFrom(a[1], a[2], !regular, d.f.Write)
}

// iovecs reads an array of struct iovec.
func (p *Process) iovecs(addr, count uint64) ([][2]uint64, error) {
	if count > 1024 {
		return nil, EINVAL
	}
	raw, err := p.readBytes(addr, count*16)
	if err != nil {
		return nil, err
	}
	v := make([][2]uint64, count)
	for i := range v {
		v[i] = [2]uint64{binary.LittleEndian.Uint64(raw[i*16:]), binary.LittleEndian.Uint64(raw[i*16+8:])}
	}
	return v, nil
}

// vectorIO runs one read or write per struct iovec, stopping at the first
// short transfer; an error after some bytes moved reports those bytes.
func (p *Process) vectorIO(cpu *gvinst.CPU, a args, op func(*gvinst.CPU, args) (uint64, error)) (uint64, error) {
	vs, err := p.iovecs(a[1], a[2])
	if err != nil {
		return 0, err
	}
	total := uint64(0)
	for _, v := range vs {
		n, err := op(cpu, args{a[0], v[0], v[1]})
		total += n
		if err != nil {
			if total > 0 {
				return total, nil
			}
			return 0, err
		}
		if n < v[1] {
			break
		}
	}
	return total, nil
}

// Writev implements linux syscall writev(2).
func (p *Process) Writev(cpu *gvinst.CPU, a args) (uint64, error) { return p.vectorIO(cpu, a, p.Write) }

// Readv implements linux syscall readv(2).
func (p *Process) Readv(cpu *gvinst.CPU, a args) (uint64, error) { return p.vectorIO(cpu, a, p.Read) }

func (p *Process) hostFD(n uint64) (*hostFile, error) {
	d, err := p.fd(n)
	if err != nil {
		return nil, err
	}
	h, ok := d.f.(*hostFile)
	if !ok {
		return nil, ESPIPE
	}
	return h, nil
}

// Pread64 implements linux syscall pread64(2).
func (p *Process) Pread64(_ *gvinst.CPU, a args) (uint64, error) {
	h, err := p.hostFD(a[0])
	if err != nil {
		return 0, err
	}
	if int64(a[3]) < 0 {
		return 0, EINVAL
	}
	done := int64(0)
	return p.readInto(a[1], a[2], true, func(b []byte) (int, error) {
		n, err := h.ReadAt(b, int64(a[3])+done)
		done += int64(n)
		if err == io.EOF {
			err = nil
		}
		return n, err
	})
}

// Pwrite64 implements linux syscall pwrite64(2).
func (p *Process) Pwrite64(_ *gvinst.CPU, a args) (uint64, error) {
	h, err := p.hostFD(a[0])
	if err != nil {
		return 0, err
	}
	if int64(a[3]) < 0 {
		return 0, EINVAL
	}
	done := int64(0)
	return p.writeFrom(a[1], a[2], false, func(b []byte) (int, error) {
		n, err := h.WriteAt(b, int64(a[3])+done)
		done += int64(n)
		return n, err
	})
}

// Lseek implements linux syscall lseek(2).
func (p *Process) Lseek(_ *gvinst.CPU, a args) (uint64, error) {
	d, err := p.fd(a[0])
	if err != nil {
		return 0, err
	}
	switch f := d.f.(type) {
	case *devFile:
		return 0, nil // as Linux's memory devices do
	case *memFile:
		return f.seek(int64(a[1]), a[2])
	}
	h, err := p.hostFD(a[0])
	if err != nil {
		return 0, err
	}
	if a[2] > 2 {
		return 0, EINVAL
	}
	off, err := h.Seek(int64(a[1]), int(a[2]))
	if err != nil {
		return 0, errnoOf(err)
	}
	return uint64(off), nil
}

// statFields is the part of a stat both stat layouts need.
type statFields struct {
	dev, ino, nlink, rdev uint64
	mode, uid, gid        uint32
	size, blksize, blocks int64
	atime, mtime, ctime   time.Time
	devMajor, devMinor    uint32
	rdevMajor, rdevMinor  uint32
}

// fieldsOfStat describes a host file from its stat.
func fieldsOfStat(st *unix.Stat_t) statFields {
	s := statFields{
		dev: st.Dev, ino: st.Ino, nlink: uint64(st.Nlink), rdev: st.Rdev,
		mode: st.Mode, uid: st.Uid, gid: st.Gid,
		size: st.Size, blksize: int64(st.Blksize), blocks: st.Blocks,
		atime: time.Unix(st.Atim.Sec, st.Atim.Nsec),
		mtime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec),
		ctime: time.Unix(st.Ctim.Sec, st.Ctim.Nsec),
	}
	s.devMajor, s.devMinor = unix.Major(s.dev), unix.Minor(s.dev)
	s.rdevMajor, s.rdevMinor = unix.Major(s.rdev), unix.Minor(s.rdev)
	return s
}

// streamFields describes a standard stream: a character device for a
// terminal, a pipe otherwise.
func streamFields(s *stream) statFields {
	f := statFields{mode: syscall.S_IFIFO | 0o600, blksize: 4096, nlink: 1}
	if s.tty {
		f.mode = syscall.S_IFCHR | 0o620
		f.rdev = 0x8800
	}
	return f
}

// encodeStat lays out struct stat for x86-64 (144 bytes).
func encodeStat(s statFields) []byte {
	b := make([]byte, 144)
	le := binary.LittleEndian
	le.PutUint64(b[0:], s.dev)
	le.PutUint64(b[8:], s.ino)
	le.PutUint64(b[16:], s.nlink)
	le.PutUint32(b[24:], s.mode)
	le.PutUint32(b[28:], s.uid)
	le.PutUint32(b[32:], s.gid)
	le.PutUint64(b[40:], s.rdev)
	le.PutUint64(b[48:], uint64(s.size))
	le.PutUint64(b[56:], uint64(s.blksize))
	le.PutUint64(b[64:], uint64(s.blocks))
	for i, t := range []time.Time{s.atime, s.mtime, s.ctime} {
		if !t.IsZero() {
			le.PutUint64(b[72+16*i:], uint64(t.Unix()))
			le.PutUint64(b[80+16*i:], uint64(t.Nanosecond()))
		}
	}
	return b
}

// encodeStatx lays out struct statx (256 bytes).
func encodeStatx(s statFields) []byte {
	b := make([]byte, 256)
	le := binary.LittleEndian
	le.PutUint32(b[0:], 0x7ff) // STATX_BASIC_STATS
	le.PutUint32(b[4:], uint32(s.blksize))
	le.PutUint32(b[16:], uint32(s.nlink))
	le.PutUint32(b[20:], s.uid)
	le.PutUint32(b[24:], s.gid)
	le.PutUint16(b[28:], uint16(s.mode))
	le.PutUint64(b[32:], s.ino)
	le.PutUint64(b[40:], uint64(s.size))
	le.PutUint64(b[48:], uint64(s.blocks))
	for off, t := range map[int]time.Time{0x40: s.atime, 0x60: s.ctime, 0x70: s.mtime} {
		if !t.IsZero() {
			le.PutUint64(b[off:], uint64(t.Unix()))
			le.PutUint32(b[off+8:], uint32(t.Nanosecond()))
		}
	}
	le.PutUint32(b[0x80:], s.rdevMajor)
	le.PutUint32(b[0x84:], s.rdevMinor)
	le.PutUint32(b[0x88:], s.devMajor)
	le.PutUint32(b[0x8c:], s.devMinor)
	return b
}

func (p *Process) statFD(n uint64) (statFields, error) {
	d, err := p.fd(n)
	if err != nil {
		return statFields{}, err
	}
	switch f := d.f.(type) {
	case *stream:
		return streamFields(f), nil
	case *hostFile:
		var st unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &st); err != nil {
			return statFields{}, errnoOf(err)
		}
		return fieldsOfStat(&st), nil
	case *pipeEnd:
		return statFields{mode: syscall.S_IFIFO | 0o600, blksize: 4096, nlink: 1, uid: guestUID, gid: guestGID}, nil
	case *devFile:
		return f.n.stat(p), nil
	case *vdirFile:
		return f.n.stat(p), nil
	case *memFile:
		s := vExeNode.stat(p)
		s.mode, s.size, s.blocks = syscall.S_IFREG|0o755, int64(len(f.data)), int64(len(f.data)+511)/512
		return s, nil
	}
	return statFields{}, EBADF
}

func (p *Process) statPath(dirfd uint64, name string, flags uint64) (statFields, error) {
	if name == "" {
		if flags&atEmptyPath == 0 {
			return statFields{}, ENOENT
		}
		return p.statFD(dirfd)
	}
	r, err := p.resolve(dirfd, name, flags&atSymlinkNofoll == 0)
	if err != nil {
		return statFields{}, err
	}
	defer r.release()
	if !r.exists {
		return statFields{}, ENOENT
	}
	if r.mustDir && !r.isDir() {
		return statFields{}, ENOTDIR
	}
	if n := r.virtual; n != nil {
		switch {
		case n.kind == vFD && flags&atSymlinkNofoll == 0:
			return p.statFD(uint64(n.fd))
		case n.kind == vExe && flags&atSymlinkNofoll == 0:
			if p.cfg.Exe == nil {
				return p.statPath(fdCwd, p.cfg.ExePath, 0)
			}
			s := n.stat(p)
			s.mode, s.size = syscall.S_IFREG|0o755, int64(len(p.cfg.Exe))
			return s, nil
		}
		return n.stat(p), nil
	}
	return fieldsOfStat(&r.st), nil
}

// Fstat implements linux syscall fstat(2).
func (p *Process) Fstat(_ *gvinst.CPU, a args) (uint64, error) {
	s, err := p.statFD(a[0])
	if err != nil {
		return 0, err
	}
	return 0, p.writeBytes(a[1], encodeStat(s))
}

// Stat implements linux syscall stat(2).
func (p *Process) Stat(_ *gvinst.CPU, a args) (uint64, error) {
	return p.statAt(fdCwd, a[0], a[1], 0)
}

// Lstat implements linux syscall lstat(2).
func (p *Process) Lstat(_ *gvinst.CPU, a args) (uint64, error) {
	return p.statAt(fdCwd, a[0], a[1], atSymlinkNofoll)
}

// Newfstatat implements linux syscall newfstatat(2).
func (p *Process) Newfstatat(_ *gvinst.CPU, a args) (uint64, error) {
	return p.statAt(a[0], a[1], a[2], a[3])
}

func (p *Process) statAt(dirfd, nameAddr, buf, flags uint64) (uint64, error) {
	name, err := p.mem.ReadString(nameAddr, 4096)
	if err != nil {
		return 0, EFAULT
	}
	s, err := p.statPath(dirfd, name, flags)
	if err != nil {
		return 0, err
	}
	return 0, p.writeBytes(buf, encodeStat(s))
}

// Statx implements linux syscall statx(2).
func (p *Process) Statx(_ *gvinst.CPU, a args) (uint64, error) {
	name, err := p.mem.ReadString(a[1], 4096)
	if err != nil {
		return 0, EFAULT
	}
	s, err := p.statPath(a[0], name, a[2])
	if err != nil {
		return 0, err
	}
	return 0, p.writeBytes(a[4], encodeStatx(s))
}

// Faccessat implements linux syscall faccessat(2) (and access(2),
// faccessat2(2) through it).
func (p *Process) Faccessat(_ *gvinst.CPU, a args) (uint64, error) {
	name, err := p.readPath(a[1])
	if err != nil {
		return 0, err
	}
	s, err := p.statPath(a[0], name, 0)
	if err != nil {
		return 0, err
	}
	mode := a[2]
	if mode&2 != 0 && s.mode&syscall.S_IFMT != syscall.S_IFCHR { // W_OK
		r, err := p.resolve(a[0], name, true)
		if err != nil {
			return 0, err
		}
		writable := r.writable && r.virtual == nil
		r.release()
		if !writable {
			return 0, EROFS
		}
	}
	if mode&1 != 0 && s.mode&0o111 == 0 { // X_OK
		return 0, EACCES
	}
	return 0, nil
}

// Access implements linux syscall access(2).
func (p *Process) Access(cpu *gvinst.CPU, a args) (uint64, error) {
	return p.Faccessat(cpu, args{fdCwd, a[0], a[1]})
}

// Readlinkat implements linux syscall readlinkat(2).
func (p *Process) Readlinkat(_ *gvinst.CPU, a args) (uint64, error) {
	name, err := p.readPath(a[1])
	if err != nil {
		return 0, err
	}
	r, err := p.resolve(a[0], name, false)
	if err != nil {
		return 0, err
	}
	defer r.release()
	if !r.exists {
		return 0, ENOENT
	}
	var target string
	if r.virtual != nil {
		if target, err = r.virtual.readlink(p); err != nil {
			return 0, err
		}
	} else {
		if r.st.Mode&unix.S_IFMT != unix.S_IFLNK {
			return 0, EINVAL
		}
		buf := make([]byte, 4096)
		n, err := unix.Readlinkat(r.dir().fd, r.name, buf)
		if err != nil {
			return 0, errnoOf(err)
		}
		target = string(buf[:n])
	}
	if int64(a[3]) <= 0 {
		return 0, EINVAL
	}
	b := []byte(target)
	if uint64(len(b)) > a[3] {
		b = b[:a[3]]
	}
	return uint64(len(b)), p.writeBytes(a[2], b)
}

// Readlink implements linux syscall readlink(2).
func (p *Process) Readlink(cpu *gvinst.CPU, a args) (uint64, error) {
	return p.Readlinkat(cpu, args{fdCwd, a[0], a[1], a[2]})
}

// Getcwd implements linux syscall getcwd(2).
func (p *Process) Getcwd(_ *gvinst.CPU, a args) (uint64, error) {
	b := append([]byte(p.cwd), 0)
	if uint64(len(b)) > a[1] {
		return 0, ERANGE
	}
	return uint64(len(b)), p.writeBytes(a[0], b)
}

// Chdir implements linux syscall chdir(2).
func (p *Process) Chdir(_ *gvinst.CPU, a args) (uint64, error) {
	name, err := p.readPath(a[0])
	if err != nil {
		return 0, err
	}
	r, err := p.resolve(fdCwd, name, true)
	if err != nil {
		return 0, err
	}
	defer r.release()
	if !r.exists {
		return 0, ENOENT
	}
	if !r.isDir() {
		return 0, ENOTDIR
	}
	p.cwd = r.guest
	return 0, nil
}

// Fchdir implements linux syscall fchdir(2).
func (p *Process) Fchdir(_ *gvinst.CPU, a args) (uint64, error) {
	d, err := p.fd(a[0])
	if err != nil {
		return 0, err
	}
	if !d.dir {
		return 0, ENOTDIR
	}
	p.cwd = d.path
	return 0, nil
}

// resolveForChange resolves the last component of name without following
// it, for a call that changes the directory holding it: the directory must
// be a host one the guest may write in.
func (p *Process) resolveForChange(dirfd uint64, name string) (*resolved, error) {
	r, err := p.resolve(dirfd, name, false)
	if err != nil {
		return nil, err
	}
	switch {
	case r.virtual != nil || r.dir().vdir != nil:
		r.release()
		return nil, EACCES
	case !r.writable:
		r.release()
		return nil, EROFS
	}
	return r, nil
}

// Mkdirat implements linux syscall mkdirat(2).
func (p *Process) Mkdirat(_ *gvinst.CPU, a args) (uint64, error) {
	name, err := p.readPath(a[1])
	if err != nil {
		return 0, err
	}
	r, err := p.resolve(a[0], name, false)
	if err != nil {
		return 0, err
	}
	defer r.release()
	switch {
	case r.exists:
		return 0, EEXIST
	case r.dir().vdir != nil:
		return 0, EACCES
	case !r.writable:
		return 0, EROFS
	}
	return 0, errOrNil(unix.Mkdirat(r.dir().fd, r.name, uint32(a[2]&0o7777&^uint64(p.umask))))
}

// Mkdir implements linux syscall mkdir(2).
func (p *Process) Mkdir(cpu *gvinst.CPU, a args) (uint64, error) {
	return p.Mkdirat(cpu, args{fdCwd, a[0], a[1]})
}

// Unlinkat implements linux syscall unlinkat(2).
func (p *Process) Unlinkat(_ *gvinst.CPU, a args) (uint64, error) {
	name, err := p.readPath(a[1])
	if err != nil {
		return 0, err
	}
	if a[2]&^uint64(atRemoveDir) != 0 {
		return 0, EINVAL
	}
	r, err := p.resolve(a[0], name, false)
	if err != nil {
		return 0, err
	}
	defer r.release()
	if !r.exists {
		return 0, ENOENT
	}
	rmdir := a[2]&atRemoveDir != 0
	switch {
	case r.name == "." && rmdir:
		return 0, EINVAL
	case r.isDir() != rmdir && r.isDir():
		return 0, EISDIR
	case r.isDir() != rmdir:
		return 0, ENOTDIR
	case r.virtual != nil || r.dir().vdir != nil:
		return 0, EACCES
	case !r.writable:
		return 0, EROFS
	}
	flags := 0
	if rmdir {
		flags = unix.AT_REMOVEDIR
	}
	return 0, errOrNil(unix.Unlinkat(r.dir().fd, r.name, flags))
}

// Unlink implements linux syscall unlink(2).
func (p *Process) Unlink(cpu *gvinst.CPU, a args) (uint64, error) {
	return p.Unlinkat(cpu, args{fdCwd, a[0], 0})
}

// Rmdir implements linux syscall rmdir(2).
func (p *Process) Rmdir(cpu *gvinst.CPU, a args) (uint64, error) {
	return p.Unlinkat(cpu, args{fdCwd, a[0], atRemoveDir})
}

// Renameat implements linux syscall renameat(2) (and rename(2),
// renameat2(2) with no flags). Both names must lie in writable
// directories.
func (p *Process) Renameat(_ *gvinst.CPU, a args) (uint64, error) {
	from, err := p.readPath(a[1])
	if err != nil {
		return 0, err
	}
	to, err := p.readPath(a[3])
	if err != nil {
		return 0, err
	}
	rf, err := p.resolveForChange(a[0], from)
	if err != nil {
		return 0, err
	}
	defer rf.release()
	if !rf.exists {
		return 0, ENOENT
	}
	rt, err := p.resolveForChange(a[2], to)
	if err != nil {
		return 0, err
	}
	defer rt.release()
	return 0, errOrNil(unix.Renameat(rf.dir().fd, rf.name, rt.dir().fd, rt.name))
}

// Rename implements linux syscall rename(2).
func (p *Process) Rename(cpu *gvinst.CPU, a args) (uint64, error) {
	cwd := fdCwd
	return p.Renameat(cpu, args{cwd, a[0], cwd, a[1]})
}

// Renameat2 implements linux syscall renameat2(2) without flags.
func (p *Process) Renameat2(cpu *gvinst.CPU, a args) (uint64, error) {
	if a[4] != 0 {
		return 0, EINVAL
	}
	return p.Renameat(cpu, a)
}

// Ftruncate implements linux syscall ftruncate(2).
func (p *Process) Ftruncate(_ *gvinst.CPU, a args) (uint64, error) {
	h, err := p.hostFD(a[0])
	if err != nil {
		return 0, EINVAL
	}
	return 0, errOrNil(h.Truncate(int64(a[1])))
}

// Fsync implements linux syscall fsync(2) and fdatasync(2).
func (p *Process) Fsync(_ *gvinst.CPU, a args) (uint64, error) {
	if _, err := p.fd(a[0]); err != nil {
		return 0, err
	}
	return 0, nil
}

// Getdents64 implements linux syscall getdents64(2).
func (p *Process) Getdents64(_ *gvinst.CPU, a args) (uint64, error) {
	d, err := p.fd(a[0])
	if err != nil {
		return 0, err
	}
	var pending *[]dirent
	switch f := d.f.(type) {
	case *hostFile:
		if !d.dir {
			return 0, ENOTDIR
		}
		if !f.dirDone {
			ents, err := p.readDirents(f.File, d.path)
			if err != nil {
				return 0, errnoOf(err)
			}
			f.dirents, f.dirDone = ents, true
		}
		pending = &f.dirents
	case *vdirFile:
		if !f.dirDone {
			f.dirents, f.dirDone = p.virtualDirents(f.n), true
		}
		pending = &f.dirents
	default:
		return 0, ENOTDIR
	}
	var out []byte
	for len(*pending) > 0 {
		e := (*pending)[0]
		reclen := (19 + len(e.name) + 1 + 7) &^ 7
		if uint64(len(out)+reclen) > a[2] {
			if len(out) == 0 {
				return 0, EINVAL
			}
			break
		}
		rec := make([]byte, reclen)
		binary.LittleEndian.PutUint64(rec[0:], e.ino)
		binary.LittleEndian.PutUint64(rec[8:], uint64(len(out)+reclen))
		binary.LittleEndian.PutUint16(rec[16:], uint16(reclen))
		rec[18] = e.typ
		copy(rec[19:], e.name)
		out = append(out, rec...)
		*pending = (*pending)[1:]
	}
	return uint64(len(out)), p.writeBytes(a[1], out)
}

// Dup implements linux syscall dup(2).
func (p *Process) Dup(_ *gvinst.CPU, a args) (uint64, error) {
	d, err := p.fd(a[0])
	if err != nil {
		return 0, err
	}
	c := *d
	c.cloexec = false
	n, err := p.newFD(&c, 0)
	return uint64(n), err
}

// Dup3 implements linux syscall dup3(2) (and dup2(2)).
func (p *Process) Dup3(_ *gvinst.CPU, a args) (uint64, error) {
	d, err := p.fd(a[0])
	if err != nil {
		return 0, err
	}
	to := int(int32(a[1]))
	if to < 0 || to >= 1024 {
		return 0, EBADF
	}
	if to == int(int32(a[0])) {
		return a[1], nil
	}
	p.release(to)
	c := *d
	c.cloexec = a[2]&oCloexec != 0
	p.fds[to] = &c
	return uint64(to), nil
}

// Dup2 implements linux syscall dup2(2).
func (p *Process) Dup2(cpu *gvinst.CPU, a args) (uint64, error) {
	if _, err := p.fd(a[0]); err != nil {
		return 0, err
	}
	if a[0] == a[1] {
		return a[1], nil
	}
	return p.Dup3(cpu, args{a[0], a[1], 0})
}

// Fcntl implements linux syscall fcntl(2) for descriptor flags and dup.
func (p *Process) Fcntl(cpu *gvinst.CPU, a args) (uint64, error) {
	d, err := p.fd(a[0])
	if err != nil {
		return 0, err
	}
	switch a[1] {
	case 0, 1030: // F_DUPFD, F_DUPFD_CLOEXEC
		c := *d
		c.cloexec = a[1] == 1030
		n, err := p.newFD(&c, int(a[2]))
		return uint64(n), err
	case 1: // F_GETFD
		if d.cloexec {
			return 1, nil
		}
		return 0, nil
	case 2: // F_SETFD
		d.cloexec = a[2]&1 != 0
		return 0, nil
	case 3: // F_GETFL
		return uint64(d.flags &^ oCloexec), nil
	case 4: // F_SETFL
		d.flags = d.flags&^(oAppend|oNonblock) | int(a[2]&(oAppend|oNonblock))
		return 0, nil
	}
	return 0, EINVAL
}

// Ioctl implements linux syscall ioctl(2) for the terminal queries libc
// makes (TCGETS, TIOCGWINSZ).
func (p *Process) Ioctl(_ *gvinst.CPU, a args) (uint64, error) {
	d, err := p.fd(a[0])
	if err != nil {
		return 0, err
	}
	s, isStream := d.f.(*stream)
	tty := isStream && s.tty
	switch a[1] {
	case 0x5401: // TCGETS
		if !tty {
			return 0, ENOTTY
		}
		t := make([]byte, 36)
		binary.LittleEndian.PutUint32(t[0:], 0x500)   // ICRNL|IXON
		binary.LittleEndian.PutUint32(t[4:], 0x5)     // OPOST|ONLCR
		binary.LittleEndian.PutUint32(t[8:], 0xbf)    // B38400|CS8|CREAD
		binary.LittleEndian.PutUint32(t[12:], 0x8a3b) // ISIG|ICANON|ECHO…
		return 0, p.writeBytes(a[2], t)
	case 0x5413: // TIOCGWINSZ
		if !tty {
			return 0, ENOTTY
		}
		w := make([]byte, 8)
		binary.LittleEndian.PutUint16(w[0:], 24)
		binary.LittleEndian.PutUint16(w[2:], 80)
		return 0, p.writeBytes(a[2], w)
	}
	return 0, ENOTTY
}

// Umask implements linux syscall umask(2).
func (p *Process) Umask(_ *gvinst.CPU, a args) (uint64, error) {
	old := p.umask
	p.umask = uint32(a[0] & 0o777)
	return uint64(old), nil
}

func errOrNil(err error) error {
	if err == nil {
		return nil
	}
	return errnoOf(err)
}
