package linux

import (
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

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
	path    string // guest path
	flags   int
	cloexec bool
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

func inoOf(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

// readDirents lists a directory as Linux does: "." and ".." first, and
// without the entries the sandbox hides.
func (p *Process) readDirents(f *os.File, guestPath string) ([]dirent, error) {
	root := p.root
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]dirent, 0, len(ents)+2)
	self, parent := uint64(0), uint64(0)
	if fi, err := f.Stat(); err == nil {
		self, parent = inoOf(fi), inoOf(fi)
	}
	if guestPath != "/" {
		rel := strings.TrimPrefix(path.Dir(guestPath), "/")
		if rel == "" {
			rel = "."
		}
		if fi, err := root.Stat(rel); err == nil {
			parent = inoOf(fi)
		}
	}
	out = append(out, dirent{".", self, 4}, dirent{"..", parent, 4})
	for _, e := range ents {
		if p.isHidden(path.Join(guestPath, e.Name())) {
			continue
		}
		ino := uint64(0)
		if info, err := e.Info(); err == nil {
			ino = inoOf(info)
		}
		out = append(out, dirent{e.Name(), ino, byte(modeBits(e.Type()) >> 12)})
	}
	return out, nil
}

// hostFile is a host file opened inside the sandbox.
type hostFile struct {
	*os.File
	dirents []dirent // pending getdents64 entries
	dirDone bool
}

func (p *Process) fd(n uint64) (*fileDesc, error) {
	d, ok := p.fds[int(int32(n))]
	if !ok {
		return nil, EBADF
	}
	return d, nil
}

func (p *Process) newFD(d *fileDesc, min int) (int, error) {
	for n := min; n < 1024; n++ {
		if _, used := p.fds[n]; !used {
			p.fds[n] = d
			return n, nil
		}
	}
	return 0, EMFILE
}

// guestPath resolves a path the guest named, relative to dirfd, to a clean
// absolute guest path.
func (p *Process) guestPath(dirfd uint64, name string) (string, error) {
	if strings.HasPrefix(name, "/") {
		return path.Clean(name), nil
	}
	base := p.cwd
	if fd := int(int32(dirfd)); fd != atFdcwd {
		d, ok := p.fds[fd]
		if !ok {
			return "", EBADF
		}
		base = d.path
	}
	return path.Clean(base + "/" + name), nil
}

// isHidden reports guest paths the sandbox hides: /proc, which would show
// the host's process rather than the guest, and Config.Hide.
func (p *Process) isHidden(g string) bool {
	under := func(dir string) bool {
		dir = path.Clean("/" + dir)
		return g == dir || strings.HasPrefix(g, strings.TrimSuffix(dir, "/")+"/")
	}
	if under("/proc") {
		return true
	}
	for _, h := range p.cfg.Hide {
		if under(h) {
			return true
		}
	}
	return false
}

// rootFor picks the os.Root a guest path is reached through and the path
// relative to it: a writable directory for writes, the read-only root
// otherwise.
func (p *Process) rootFor(g string, write bool) (*os.Root, string, error) {
	if p.isHidden(g) {
		return nil, "", ENOENT
	}
	for _, w := range p.writable {
		if g == w.guest || strings.HasPrefix(g, strings.TrimSuffix(w.guest, "/")+"/") {
			rel := strings.TrimPrefix(strings.TrimPrefix(g, w.guest), "/")
			if rel == "" {
				rel = "."
			}
			return w.root, rel, nil
		}
	}
	if write {
		return nil, "", EROFS
	}
	rel := strings.TrimPrefix(g, "/")
	if rel == "" {
		rel = "."
	}
	return p.root, rel, nil
}

func hostOpenFlags(flags uint64) int {
	var f int
	switch flags & oAccMode {
	case oWronly:
		f = os.O_WRONLY
	case oRdwr:
		f = os.O_RDWR
	default:
		f = os.O_RDONLY
	}
	if flags&oCreat != 0 {
		f |= os.O_CREATE
	}
	if flags&oExcl != 0 {
		f |= os.O_EXCL
	}
	if flags&oTrunc != 0 {
		f |= os.O_TRUNC
	}
	if flags&oAppend != 0 {
		f |= os.O_APPEND
	}
	return f
}

func (p *Process) openAt(dirfd uint64, name string, flags uint64, mode uint64) (uint64, error) {
	g, err := p.guestPath(dirfd, name)
	if err != nil {
		return 0, err
	}
	write := flags&oAccMode != 0 || flags&(oCreat|oTrunc) != 0
	root, rel, err := p.rootFor(g, write)
	if err != nil {
		return 0, err
	}
	f, err := root.OpenFile(rel, hostOpenFlags(flags), fs.FileMode(mode&0o7777&^uint64(p.umask)))
	if err != nil {
		return 0, errnoOf(err)
	}
	if flags&oDirectory != 0 {
		if fi, err := f.Stat(); err != nil || !fi.IsDir() {
			f.Close()
			return 0, ENOTDIR
		}
	}
	n, err := p.newFD(&fileDesc{f: &hostFile{File: f}, path: g, flags: int(flags), cloexec: flags&oCloexec != 0}, 0)
	if err != nil {
		f.Close()
		return 0, err
	}
	return uint64(n), nil
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

func fieldsOf(fi fs.FileInfo) statFields {
	s := statFields{size: fi.Size(), blksize: 4096, nlink: 1, mode: modeBits(fi.Mode()), mtime: fi.ModTime(), atime: fi.ModTime(), ctime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.dev, s.ino, s.nlink, s.rdev = uint64(st.Dev), st.Ino, uint64(st.Nlink), uint64(st.Rdev)
		s.mode, s.uid, s.gid = st.Mode, st.Uid, st.Gid
		s.blksize, s.blocks = int64(st.Blksize), st.Blocks
		s.atime = time.Unix(st.Atim.Sec, st.Atim.Nsec)
		s.ctime = time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	} else {
		s.blocks = (s.size + 511) / 512
	}
	s.devMajor, s.devMinor = uint32((s.dev>>8)&0xfff), uint32((s.dev&0xff)|((s.dev>>12)&0xfff00))
	s.rdevMajor, s.rdevMinor = uint32((s.rdev>>8)&0xfff), uint32((s.rdev&0xff)|((s.rdev>>12)&0xfff00))
	return s
}

func modeBits(m fs.FileMode) uint32 {
	bits := uint32(m.Perm())
	switch {
	case m.IsDir():
		bits |= syscall.S_IFDIR
	case m&fs.ModeSymlink != 0:
		bits |= syscall.S_IFLNK
	case m&fs.ModeNamedPipe != 0:
		bits |= syscall.S_IFIFO
	case m&fs.ModeCharDevice != 0:
		bits |= syscall.S_IFCHR
	case m&fs.ModeDevice != 0:
		bits |= syscall.S_IFBLK
	case m&fs.ModeSocket != 0:
		bits |= syscall.S_IFSOCK
	default:
		bits |= syscall.S_IFREG
	}
	return bits
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
		fi, err := f.Stat()
		if err != nil {
			return statFields{}, errnoOf(err)
		}
		return fieldsOf(fi), nil
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
	g, err := p.guestPath(dirfd, name)
	if err != nil {
		return statFields{}, err
	}
	root, rel, err := p.rootFor(g, false)
	if err != nil {
		return statFields{}, err
	}
	var fi fs.FileInfo
	if flags&atSymlinkNofoll != 0 {
		fi, err = root.Lstat(rel)
	} else {
		fi, err = root.Stat(rel)
	}
	if err != nil {
		return statFields{}, errnoOf(err)
	}
	return fieldsOf(fi), nil
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
	if mode&2 != 0 { // W_OK
		g, _ := p.guestPath(a[0], name)
		if _, _, err := p.rootFor(g, true); err != nil {
			return 0, err
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
	g, err := p.guestPath(a[0], name)
	if err != nil {
		return 0, err
	}
	var target string
	if g == "/proc/self/exe" && p.cfg.ExePath != "" {
		target = p.cfg.ExePath
	} else {
		root, rel, err := p.rootFor(g, false)
		if err != nil {
			return 0, err
		}
		if target, err = root.Readlink(rel); err != nil {
			return 0, errnoOf(err)
		}
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
	s, err := p.statPath(fdCwd, name, 0)
	if err != nil {
		return 0, err
	}
	if s.mode&syscall.S_IFMT != syscall.S_IFDIR {
		return 0, ENOTDIR
	}
	p.cwd, _ = p.guestPath(fdCwd, name)
	return 0, nil
}

// Mkdirat implements linux syscall mkdirat(2).
func (p *Process) Mkdirat(_ *gvinst.CPU, a args) (uint64, error) {
	name, err := p.readPath(a[1])
	if err != nil {
		return 0, err
	}
	g, err := p.guestPath(a[0], name)
	if err != nil {
		return 0, err
	}
	root, rel, err := p.rootFor(g, true)
	if err != nil {
		return 0, err
	}
	return 0, errOrNil(root.Mkdir(rel, fs.FileMode(a[2]&0o7777&^uint64(p.umask))))
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
	g, err := p.guestPath(a[0], name)
	if err != nil {
		return 0, err
	}
	root, rel, err := p.rootFor(g, true)
	if err != nil {
		return 0, err
	}
	fi, err := root.Lstat(rel)
	if err != nil {
		return 0, errnoOf(err)
	}
	if fi.IsDir() != (a[2]&atRemoveDir != 0) {
		if fi.IsDir() {
			return 0, EISDIR
		}
		return 0, ENOTDIR
	}
	return 0, errOrNil(root.Remove(rel))
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
// renameat2(2) with no flags). Both names must lie in the same writable
// directory.
func (p *Process) Renameat(_ *gvinst.CPU, a args) (uint64, error) {
	from, err := p.readPath(a[1])
	if err != nil {
		return 0, err
	}
	to, err := p.readPath(a[3])
	if err != nil {
		return 0, err
	}
	gf, err := p.guestPath(a[0], from)
	if err != nil {
		return 0, err
	}
	gt, err := p.guestPath(a[2], to)
	if err != nil {
		return 0, err
	}
	rf, relf, err := p.rootFor(gf, true)
	if err != nil {
		return 0, err
	}
	rt, relt, err := p.rootFor(gt, true)
	if err != nil {
		return 0, err
	}
	if rf != rt {
		return 0, EXDEV
	}
	return 0, errOrNil(rf.Rename(relf, relt))
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
	h, err := p.hostFD(a[0])
	if err != nil {
		return 0, ENOTDIR
	}
	if h.dirents == nil && !h.dirDone {
		d, _ := p.fd(a[0])
		ents, err := p.readDirents(h.File, d.path)
		if err != nil {
			return 0, errnoOf(err)
		}
		h.dirents = ents
		h.dirDone = true
	}
	var out []byte
	for len(h.dirents) > 0 {
		e := h.dirents[0]
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
		h.dirents = h.dirents[1:]
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

var _ = errors.New
