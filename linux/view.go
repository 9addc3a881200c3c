package linux

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// The sandbox's file view.
//
// A guest path is resolved one component at a time, as the Linux kernel
// does, over host directory descriptors opened with O_PATH|O_NOFOLLOW: "."
// and ".." are handled on the guest's own canonical path (".." at the guest
// root stays there), symbolic links are read and spliced in (an absolute
// target restarts at the guest root), and every file reached, directories
// and symlink targets included, is checked against the hidden set by
// identity (device and inode), never by name. So no alias (a symlink, a
// relative symlink, "..", a descriptor or working directory opened earlier)
// leads into a hidden directory or out of the root, and a directory renamed
// or replaced between two checks is caught when its descriptor is opened.
//
// RATIONALE: os.Root keeps a walk inside the root but knows nothing of
// hidden directories or of /dev and /proc, which the guest must see as its
// own; comparing path strings is what issue 12 showed to be escapable.

// maxSymlinks is how many symbolic links one path resolution may follow
// (Linux's MAXSYMLINKS).
const maxSymlinks = 40

// procSuperMagic is the file-system type of procfs (statfs f_type).
const procSuperMagic = 0x9fa0

// hostID is the identity of a host file: its device and inode.
type hostID struct{ dev, ino uint64 }

func idOf(st *unix.Stat_t) hostID { return hostID{uint64(st.Dev), st.Ino} }

// view is the guest's view of the host file system: the root, the
// directories it may write in and the files it must not reach, all known
// by identity.
type view struct {
	rootFD   int // O_PATH descriptor of the guest's root
	rootID   hostID
	writable map[hostID]bool
	hidden   map[hostID]bool
}

// openView opens the guest root and looks up the identities of the
// writable and hidden directories. writable are guest paths; hide are host
// paths (symlinks followed), which must exist.
func openView(root string, writable, hide []string) (*view, error) {
	if root == "" {
		root = "/"
	}
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the guest root %s: %w", root, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("opening the guest root %s: %w", root, err)
	}
	v := &view{rootFD: fd, rootID: idOf(&st), writable: map[hostID]bool{}, hidden: map[hostID]bool{}}
	for _, h := range hide {
		var st unix.Stat_t
		if err := unix.Stat(h, &st); err != nil {
			v.close()
			return nil, fmt.Errorf("hidden path %s: %w", h, err)
		}
		if idOf(&st) == v.rootID {
			v.close()
			return nil, fmt.Errorf("hidden path %s is the guest root itself", h)
		}
		v.hidden[idOf(&st)] = true
	}
	for _, w := range writable {
		g := path.Clean("/" + w)
		w, err := v.walk(nil, "/", g, true)
		if err == nil && !w.exists {
			err = ENOENT
		}
		if err == nil && (w.virtual != nil || w.st.Mode&unix.S_IFMT != unix.S_IFDIR) {
			err = ENOTDIR
		}
		if err != nil {
			if w != nil {
				w.release()
			}
			v.close()
			return nil, fmt.Errorf("writable directory %s: %w", g, err)
		}
		v.writable[idOf(&w.st)] = true
		w.release()
	}
	return v, nil
}

func (v *view) close() { unix.Close(v.rootFD) }

// frame is one directory on the way down a resolution: a host directory
// (fd, an O_PATH descriptor the frame owns unless it is the root) or a
// virtual one.
type frame struct {
	name     string // the component that led here ("" for the root)
	fd       int
	id       hostID
	writable bool
	vdir     *vnode // non-nil for /dev, /proc and their virtual subdirectories
}

// resolved is where a guest path leads: the entry name in directory dir
// (name "." when the path names dir itself), whether it exists, and what
// it is: a host file (st, from lstat after following the links asked for)
// or a virtual one.
type resolved struct {
	stack    []frame // stack[len-1] is dir; the caller calls release
	name     string
	guest    string // the canonical guest path of the entry
	exists   bool
	st       unix.Stat_t
	virtual  *vnode
	mustDir  bool // the path ended in "/", "." or ".."
	writable bool // the entry's directory lies in a writable directory
}

// dir is the directory holding the entry.
func (r *resolved) dir() *frame { return &r.stack[len(r.stack)-1] }

// release closes the descriptors the resolution opened.
func (r *resolved) release() {
	for _, f := range r.stack {
		if f.name != "" && f.vdir == nil {
			unix.Close(f.fd)
		}
	}
	r.stack = nil
}

// isDir reports whether the entry is a directory.
func (r *resolved) isDir() bool {
	if r.virtual != nil {
		return r.virtual.kind == vDir
	}
	return r.exists && r.st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// entry makes r name the entry c of its directory.
func (r *resolved) entry(c string) *resolved {
	r.name = c
	r.guest = path.Clean(guestOf(r.stack) + "/" + c)
	return r
}

// guestOf is the canonical guest path of a stack of frames.
func guestOf(stack []frame) string {
	if len(stack) <= 1 {
		return "/"
	}
	var b strings.Builder
	for _, f := range stack[1:] {
		b.WriteByte('/')
		b.WriteString(f.name)
	}
	return b.String()
}

// isHiddenAt reports whether the file st (named name in host directory
// dirFD, whose identity is dirID) is one the guest must not reach: a
// hidden identity, or anything on a procfs (the host's /proc, however it
// is mounted or linked).
func (v *view) isHiddenAt(dirFD int, dirID hostID, name string, st *unix.Stat_t) bool {
	if v.hidden[idOf(st)] {
		return true
	}
	if uint64(st.Dev) == dirID.dev {
		return false
	}
	// A mount point: the file system may be a procfs.
	fd, err := unix.Openat(dirFD, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return true
	}
	defer unix.Close(fd)
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		return true
	}
	return sfs.Type == procSuperMagic
}

// splitPath splits a guest path into its components, dropping empty ones.
func splitPath(p string) []string {
	parts := strings.Split(p, "/")
	out := parts[:0]
	for _, s := range parts {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// rootStack is a stack holding only the guest root.
func (v *view) rootStack() []frame {
	return []frame{{fd: v.rootFD, id: v.rootID, writable: v.writable[v.rootID]}}
}

// walk resolves name (absolute, or relative to the canonical guest
// directory start) for process p (nil when there is none yet: no
// /proc/self/fd). follow says whether a symbolic link in the last
// component is followed. Every error is an Errno; on error the returned
// value, if not nil, must still be released.
func (v *view) walk(p *Process, start, name string, follow bool) (res *resolved, err error) {
	if name == "" {
		return nil, ENOENT
	}
	r := &resolved{stack: v.rootStack()}
	defer func() {
		if err != nil {
			r.release()
			res = nil
		}
	}()
	var todo []string
	if !strings.HasPrefix(name, "/") {
		todo = splitPath(start)
	}
	todo = append(todo, splitPath(name)...)
	r.mustDir = strings.HasSuffix(name, "/") || strings.HasSuffix(name, "/.") || strings.HasSuffix(name, "/..") || name == "." || name == ".."
	links := 0
	pop := func() {
		if len(r.stack) > 1 {
			top := r.stack[len(r.stack)-1]
			if top.vdir == nil {
				unix.Close(top.fd)
			}
			r.stack = r.stack[:len(r.stack)-1]
		}
	}
	// splice puts a symbolic link's target in front of what is left.
	splice := func(target string) error {
		links++
		if links > maxSymlinks {
			return ELOOP
		}
		if target == "" {
			return ENOENT
		}
		if strings.HasPrefix(target, "/") {
			for len(r.stack) > 1 {
				pop()
			}
		}
		rest := todo
		todo = append(splitPath(target), rest...)
		if len(rest) == 0 && strings.HasSuffix(target, "/") {
			r.mustDir = true
		}
		return nil
	}
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		last := len(todo) == 0
		if len(c) > 255 {
			return nil, ENAMETOOLONG
		}
		switch c {
		case ".":
			continue
		case "..":
			pop()
			continue
		}
		top := r.dir()
		if top.vdir != nil || (len(r.stack) == 1 && (c == "dev" || c == "proc")) {
			var n *vnode
			if top.vdir != nil {
				n = top.vdir.child(p, c)
			} else {
				n = virtualRoot(c)
			}
			if n == nil {
				if last {
					return r.entry(c), nil
				}
				return nil, ENOENT
			}
			if n.kind == vLink || ((n.kind == vFD || n.kind == vExe) && !last) {
				if last && !follow && !r.mustDir {
					r.virtual, r.exists = n, true
					return r.entry(c), nil
				}
				target, err := n.linkTarget(p)
				if err != nil {
					return nil, err
				}
				if err := splice(target); err != nil {
					return nil, err
				}
				continue
			}
			if n.kind == vDir {
				r.stack = append(r.stack, frame{name: c, vdir: n})
				continue
			}
			if !last {
				return nil, ENOTDIR
			}
			r.virtual, r.exists = n, true
			return r.entry(c), nil
		}
		var st unix.Stat_t
		if err := unix.Fstatat(top.fd, c, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			e := errnoOf(err)
			if e == ENOENT && last {
				r.writable = top.writable
				return r.entry(c), nil
			}
			return nil, e
		}
		if v.isHiddenAt(top.fd, top.id, c, &st) {
			return nil, ENOENT
		}
		isLink := st.Mode&unix.S_IFMT == unix.S_IFLNK
		if isLink && (!last || follow || r.mustDir) {
			buf := make([]byte, 4096)
			n, err := unix.Readlinkat(top.fd, c, buf)
			if err != nil {
				return nil, errnoOf(err)
			}
			if err := splice(string(buf[:n])); err != nil {
				return nil, err
			}
			continue
		}
		if last {
			// A directory too is an entry of its parent here, so that
			// rmdir and rename see the parent; only a path ending in
			// "." or ".." names a directory itself (name ".").
			r.st, r.exists, r.writable = st, true, top.writable
			return r.entry(c), nil
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return nil, ENOTDIR
		}
		fd, err := unix.Openat(top.fd, c, unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, errnoOf(err)
		}
		var got unix.Stat_t
		if err := unix.Fstat(fd, &got); err != nil || idOf(&got) != idOf(&st) {
			// Replaced between the lstat and the open: check it again.
			unix.Close(fd)
			todo = append([]string{c}, todo...)
			links++
			if links > maxSymlinks {
				return nil, ELOOP
			}
			continue
		}
		id := idOf(&st)
		r.stack = append(r.stack, frame{name: c, fd: fd, id: id, writable: top.writable || v.writable[id]})
	}
	// The path names a directory on the stack itself.
	r.name, r.exists, r.guest = ".", true, guestOf(r.stack)
	top := r.dir()
	r.writable = top.writable
	if top.vdir != nil {
		r.virtual = top.vdir
		return r, nil
	}
	if err := unix.Fstat(top.fd, &r.st); err != nil {
		return nil, errnoOf(err)
	}
	return r, nil
}

// openHost opens the host entry r resolved to with the host open flags
// flags (O_NOFOLLOW and O_CLOEXEC are added) and checks that what was
// opened is still a file the guest may reach.
func (v *view) openHost(r *resolved, flags int, mode uint32) (*os.File, error) {
	dir := r.dir()
	fd, err := unix.Openat(dir.fd, r.name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	if err != nil {
		return nil, errnoOf(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, errnoOf(err)
	}
	if v.hidden[idOf(&st)] || (r.exists && r.name != "." && idOf(&st) != idOf(&r.st)) {
		unix.Close(fd)
		return nil, ENOENT
	}
	if uint64(st.Dev) != dir.id.dev {
		var sfs unix.Statfs_t
		if err := unix.Fstatfs(fd, &sfs); err != nil || sfs.Type == procSuperMagic {
			unix.Close(fd)
			return nil, ENOENT
		}
	}
	return os.NewFile(uintptr(fd), r.guest), nil
}

// ReadFile reads the file at guest path name as a guest process with cfg's
// Root and Hide would see it: through the same resolution, so a symlink
// cannot lead out of the root or into a hidden directory. Only a regular
// file of at most limit bytes is read; anything else is an error naming
// the problem. It is how the program interpreter (PT_INTERP) is loaded.
func ReadFile(cfg Config, name string, limit int64) ([]byte, error) {
	v, err := openView(cfg.Root, nil, cfg.Hide)
	if err != nil {
		return nil, err
	}
	defer v.close()
	r, err := v.walk(nil, "/", name, true)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	defer r.release()
	switch {
	case !r.exists:
		return nil, &os.PathError{Op: "open", Path: name, Err: ENOENT}
	case r.virtual != nil || r.st.Mode&unix.S_IFMT != unix.S_IFREG:
		return nil, &os.PathError{Op: "open", Path: name, Err: errNotRegular}
	case r.st.Size > limit:
		return nil, &os.PathError{Op: "open", Path: name, Err: fmt.Errorf("%d bytes, more than the limit of %d", r.st.Size, limit)}
	}
	f, err := v.openHost(r, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	defer f.Close()
	buf := make([]byte, r.st.Size+1)
	n, err := readFull(f, buf)
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: name, Err: err}
	}
	if int64(n) > r.st.Size {
		return nil, &os.PathError{Op: "read", Path: name, Err: errors.New("the file grew while it was read")}
	}
	return buf[:n], nil
}

// errNotRegular is the error for a file that must be a regular file and is
// not.
var errNotRegular = errors.New("not a regular file")

// readFull reads until buf is full or the file ends.
func readFull(f *os.File, buf []byte) (int, error) {
	n, err := io.ReadFull(f, buf)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	return n, err
}
