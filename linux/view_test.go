package linux

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

const (
	nrChdir      = 80
	nrFchdir     = 81
	nrReadlink   = 89
	nrGetdents64 = 217
	nrRenameat   = 264
	nrPipe2      = 293
	oRdonlyDir   = oDirectory
)

// escapeLayout builds a guest root with a secret directory (the daemon's
// data directory, as it were), a scratch directory and every kind of alias
// to them, and returns the root and the host paths to hide.
func escapeLayout(t *testing.T) (root string, hide []string) {
	t.Helper()
	root = t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	mk := func(rel string) { must(os.MkdirAll(filepath.Join(root, rel), 0o755)) }
	file := func(rel, data string) { must(os.WriteFile(filepath.Join(root, rel), []byte(data), 0o644)) }
	link := func(target, rel string) { must(os.Symlink(target, filepath.Join(root, rel))) }
	mk("data")
	file("data/jobs.db", "SECRET-DB")
	mk("tmp/scratch-1")
	file("tmp/scratch-1/kernel.ptx", "SECRET-PTX")
	mk("pub/deep")
	file("pub/f.txt", "public")
	link("/data", "pub/abs")
	link("../data", "pub/rel")
	link("..", "pub/parent")
	link("../../../../../..", "pub/up")
	link("../../proc", "pub/deep/procdir")
	link("/tmp/scratch-1/kernel.ptx", "pub/ptx")
	// systemd's DynamicUser/StateDirectory: the state directory is a
	// symlink into /var/lib/private.
	mk("var/lib/private/gxbitd")
	file("var/lib/private/gxbitd/state.db", "SECRET-STATE")
	link("private/gxbitd", "var/lib/gxbitd")
	link("lib/private", "var/statelink")
	return root, []string{filepath.Join(root, "data"), filepath.Join(root, "tmp/scratch-1"), filepath.Join(root, "var/lib/gxbitd")}
}

// readAll reads descriptor fd to the end through the guest's read(2).
func (g *guest) readAll(fd int64) string {
	buf := g.next
	var out []byte
	for {
		n, _ := g.call(nrRead, uint64(fd), buf, 256)
		if n <= 0 {
			return string(out)
		}
		b := make([]byte, n)
		_ = g.mem.Peek(buf, b)
		out = append(out, b...)
	}
}

// TestHiddenByIdentity is issue 12's item 3: hidden directories are
// unreachable through any alias, and an escape gets ENOENT, never content.
func TestHiddenByIdentity(t *testing.T) {
	root, hide := escapeLayout(t)
	g := newGuest(t, Config{Root: root, Hide: hide, Writable: []string{"/tmp"}})
	open := func(dirfd uint64, path string, flags uint64) int64 {
		r, err := g.call(nrOpenat, dirfd, g.str(path), flags, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if fd := open(cwd, "/pub/f.txt", 0); fd < 0 || g.readAll(fd) != "public" {
		t.Fatalf("a public file does not read: %d", fd)
	}
	pub := open(cwd, "/pub", oRdonlyDir)
	if pub < 0 {
		t.Fatalf("open /pub: %d", pub)
	}
	cases := []struct {
		name  string
		dirfd uint64
		path  string
	}{
		{"direct", cwd, "/data/jobs.db"},
		{"the directory itself", cwd, "/data"},
		{"dot-dot", cwd, "/pub/../data/jobs.db"},
		{"dot-dot above the root", cwd, "/../../../data/jobs.db"},
		{"absolute symlink", cwd, "/pub/abs/jobs.db"},
		{"relative symlink", cwd, "/pub/rel/jobs.db"},
		{"symlink to a parent", cwd, "/pub/parent/data/jobs.db"},
		{"symlink above the root", cwd, "/pub/up/data/jobs.db"},
		{"symlink to a hidden file", cwd, "/pub/ptx"},
		{"scratch directory", cwd, "/tmp/scratch-1/kernel.ptx"},
		{"scratch through dot-dot", cwd, "/tmp/../tmp/./scratch-1/kernel.ptx"},
		{"dirfd and dot-dot", uint64(pub), "../data/jobs.db"},
		{"dirfd and a relative symlink", uint64(pub), "rel/jobs.db"},
		{"dirfd and a symlink to a parent", uint64(pub), "parent/data/jobs.db"},
		{"systemd state directory", cwd, "/var/lib/gxbitd/state.db"},
		{"systemd private directory", cwd, "/var/lib/private/gxbitd/state.db"},
		{"symlink to the private directory", cwd, "/var/statelink/gxbitd/state.db"},
		{"relative symlink to /proc", cwd, "/pub/deep/procdir/1/environ"},
		{"/proc/self/mem", cwd, "/proc/self/mem"},
		{"/proc/self/mem through a symlink", cwd, "/pub/deep/procdir/self/mem"},
		{"/proc/self/root", cwd, "/proc/self/root/data/jobs.db"},
	}
	for _, c := range cases {
		if fd := open(c.dirfd, c.path, 0); fd != -int64(ENOENT) {
			got := ""
			if fd >= 0 {
				got = g.readAll(fd)
			}
			t.Errorf("%s: open %s = %d (%q), want -ENOENT", c.name, c.path, fd, got)
		}
		if r, _ := g.call(4, g.str(c.path), g.next+4096); c.dirfd == cwd && r != -int64(ENOENT) { // stat
			t.Errorf("%s: stat %s = %d, want -ENOENT", c.name, c.path, r)
		}
	}
	// chdir cannot enter a hidden directory, and relative paths from a
	// working directory next to one cannot reach it.
	for _, d := range []string{"/data", "/pub/rel", "/pub/abs", "/var/lib/gxbitd", "/tmp/scratch-1"} {
		if r, _ := g.call(nrChdir, g.str(d)); r != -int64(ENOENT) {
			t.Errorf("chdir %s = %d, want -ENOENT", d, r)
		}
	}
	if r, _ := g.call(nrChdir, g.str("/pub/deep")); r != 0 {
		t.Fatalf("chdir /pub/deep = %d", r)
	}
	for _, p := range []string{"../../data/jobs.db", "../rel/jobs.db", "../../../../data/jobs.db", "procdir/self/mem"} {
		if fd := open(cwd, p, 0); fd != -int64(ENOENT) {
			t.Errorf("after chdir /pub/deep, open %s = %d, want -ENOENT", p, fd)
		}
	}
	if r, _ := g.call(nrFchdir, uint64(pub)); r != 0 {
		t.Fatalf("fchdir: %d", r)
	}
	if fd := open(cwd, "rel/jobs.db", 0); fd != -int64(ENOENT) {
		t.Errorf("after fchdir /pub, open rel/jobs.db = %d", fd)
	}
	// A writable directory holding a hidden one: the hidden one can be
	// neither renamed, removed nor replaced.
	if r, _ := g.call(nrRenameat, cwd, g.str("/tmp/scratch-1"), cwd, g.str("/tmp/mine")); r != -int64(ENOENT) {
		t.Errorf("rename of a hidden directory = %d, want -ENOENT", r)
	}
	if r, _ := g.call(nrUnlinkat, cwd, g.str("/tmp/scratch-1/kernel.ptx"), 0); r != -int64(ENOENT) {
		t.Errorf("unlink in a hidden directory = %d, want -ENOENT", r)
	}
	if r, _ := g.call(nrUnlinkat, cwd, g.str("/tmp/scratch-1"), atRemoveDir); r != -int64(ENOENT) {
		t.Errorf("rmdir of a hidden directory = %d, want -ENOENT", r)
	}
	if fd := open(cwd, "/tmp/scratch-1/new", oCreat|oWronly); fd != -int64(ENOENT) {
		t.Errorf("create in a hidden directory = %d, want -ENOENT", fd)
	}
	if _, err := os.Stat(filepath.Join(root, "tmp/scratch-1/kernel.ptx")); err != nil {
		t.Errorf("the hidden file is gone: %v", err)
	}
	// Listings leave hidden entries out.
	for dir, hidden := range map[string]string{"/": "data", "/tmp": "scratch-1", "/var/lib/private": "gxbitd"} {
		names := g.list(dir)
		if strings.Contains(" "+names+" ", " "+hidden+" ") {
			t.Errorf("listing %s shows %s: %s", dir, hidden, names)
		}
	}
	if names := g.list("/"); !strings.Contains(names, " dev ") || !strings.Contains(names, " proc ") || !strings.Contains(names, " pub ") {
		t.Errorf("listing / = %s", names)
	}
}

// list returns the names getdents64 gives for dir, space-separated.
func (g *guest) list(dir string) string {
	fd, _ := g.call(nrOpenat, cwd, g.str(dir), oRdonlyDir, 0)
	if fd < 0 {
		g.t.Fatalf("open %s: %d", dir, fd)
	}
	defer g.call(nrClose, uint64(fd))
	buf := g.next
	names := " "
	for {
		n, _ := g.call(nrGetdents64, uint64(fd), buf, 4096)
		if n <= 0 {
			return names
		}
		b := make([]byte, n)
		_ = g.mem.Peek(buf, b)
		for off := 0; off < len(b); {
			reclen := int(binary.LittleEndian.Uint16(b[off+16:]))
			name := b[off+19 : off+reclen]
			names += strings.TrimRight(string(name), "\x00") + " "
			off += reclen
		}
	}
}

// TestDevices is issue 12's item 6: /dev and /proc/self/fd as programs
// expect them, with /dev/null writable under a read-only root.
func TestDevices(t *testing.T) {
	root := t.TempDir()
	exe := []byte("\x7fELF the program")
	g := newGuest(t, Config{Root: root, ExePath: "/bin/prog", Exe: exe})
	open := func(path string, flags uint64) int64 {
		r, err := g.call(nrOpenat, cwd, g.str(path), flags, 0)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	null := open("/dev/null", oRdwr)
	if null < 0 {
		t.Fatalf("open /dev/null read-write under a read-only root: %d", null)
	}
	if n, _ := g.call(nrWrite, uint64(null), g.str("xyz"), 3); n != 3 {
		t.Errorf("write /dev/null: %d", n)
	}
	if g.readAll(null) != "" {
		t.Errorf("/dev/null reads data")
	}
	zero := open("/dev/zero", 0)
	if n, _ := g.call(nrRead, uint64(zero), g.next, 64); n != 64 {
		t.Errorf("read /dev/zero: %d", n)
	}
	for _, d := range []string{"/dev/random", "/dev/urandom"} {
		if n, _ := g.call(nrRead, uint64(open(d, 0)), g.next, 32); n != 32 {
			t.Errorf("read %s: %d", d, n)
		}
	}
	if fd := open("/dev/tty", oRdwr); fd != -int64(ENXIO) {
		t.Errorf("open /dev/tty without a controlling terminal = %d, want -ENXIO", fd)
	}
	if fd := open("/dev/full", oWronly); fd < 0 {
		t.Errorf("open /dev/full: %d", fd)
	} else if n, _ := g.call(nrWrite, uint64(fd), g.str("x"), 1); n != -int64(ENOSPC) {
		t.Errorf("write /dev/full = %d, want -ENOSPC", n)
	}
	for _, p := range []string{"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "/proc/4242/fd/1"} {
		fd := open(p, oWronly)
		if n, _ := g.call(nrWrite, uint64(fd), g.str("|"+p), uint64(len(p)+1)); n != int64(len(p)+1) {
			t.Errorf("write to %s (fd %d): %d", p, fd, n)
		}
	}
	if want := "|/dev/stdout|/dev/fd/1|/proc/self/fd/1|/proc/4242/fd/1"; g.out.String() != want {
		t.Errorf("stdout got %q, want %q", g.out.String(), want)
	}
	// /dev/fd/N of a pipe reads what the write end wrote (process
	// substitution's <(cmd)).
	if r, _ := g.call(nrPipe2, g.next, 0); r != 0 {
		t.Fatalf("pipe2: %d", r)
	}
	ends := make([]byte, 8)
	_ = g.mem.Peek(g.next, ends)
	rfd, wfd := binary.LittleEndian.Uint32(ends), binary.LittleEndian.Uint32(ends[4:])
	g.call(nrWrite, uint64(wfd), g.str("piped"), 5)
	g.call(nrClose, uint64(wfd))
	byName := open("/dev/fd/"+strconv.Itoa(int(rfd)), 0)
	g.call(nrClose, uint64(rfd))
	if got := g.readAll(byName); got != "piped" {
		t.Errorf("read through /dev/fd/%d: %q", rfd, got)
	}
	// /proc/self/exe is the guest's program, under its guest path.
	n, _ := g.call(nrReadlink, g.str("/proc/self/exe"), g.next, 256)
	got := make([]byte, max(n, 0))
	_ = g.mem.Peek(g.next, got)
	if string(got) != "/bin/prog" {
		t.Errorf("readlink /proc/self/exe = %q (%d)", got, n)
	}
	if got := g.readAll(open("/proc/self/exe", 0)); got != string(exe) {
		t.Errorf("open /proc/self/exe reads %q", got)
	}
	if fd := open("/proc/self/exe", oWronly); fd != -int64(ETXTBSY) {
		t.Errorf("open /proc/self/exe for writing = %d, want -ETXTBSY", fd)
	}
	var st [144]byte
	if r, _ := g.call(4, g.str("/dev/null"), g.next); r != 0 {
		t.Errorf("stat /dev/null: %d", r)
	}
	_ = g.mem.Peek(g.next, st[:])
	if mode := binary.LittleEndian.Uint32(st[24:]); mode&syscall.S_IFMT != syscall.S_IFCHR {
		t.Errorf("/dev/null mode %#o", mode)
	}
	if fd := open("/dev/sda", 0); fd != -int64(ENOENT) {
		t.Errorf("open /dev/sda = %d, want -ENOENT", fd)
	}
	if fd := open("/dev/newfile", oCreat|oWronly); fd != -int64(EACCES) {
		t.Errorf("create in /dev = %d, want -EACCES", fd)
	}
}

// TestReadFileInterpreter is issue 12's item 2 at the sandbox's side: the
// program interpreter is read through the guest's view, a regular file of
// bounded size, never through a symlink out of the root or into a hidden
// directory.
func TestReadFileInterpreter(t *testing.T) {
	root, hide := escapeLayout(t)
	outside := filepath.Join(t.TempDir(), "ld.so")
	if err := os.WriteFile(outside, []byte("host loader"), 0o644); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "lib"), 0o755))
	must(os.WriteFile(filepath.Join(root, "lib/ld.so"), []byte("guest loader"), 0o644))
	must(os.WriteFile(filepath.Join(root, "lib/big.so"), make([]byte, 5000), 0o644))
	must(os.Symlink(outside, filepath.Join(root, "lib/abs-out.so")))
	must(os.Symlink("../../../../../../.."+outside, filepath.Join(root, "lib/rel-out.so")))
	must(os.Symlink("/data/jobs.db", filepath.Join(root, "lib/hidden.so")))
	must(os.Symlink("ld.so", filepath.Join(root, "lib/ok.so")))
	must(syscall.Mkfifo(filepath.Join(root, "lib/fifo.so"), 0o644))
	cfg := Config{Root: root, Hide: hide}
	if b, err := ReadFile(cfg, "/lib/ok.so", 1000); err != nil || string(b) != "guest loader" {
		t.Fatalf("ReadFile through a symlink inside the root: %q, %v", b, err)
	}
	for name, want := range map[string]string{
		"/dev/zero":        "not a regular file",
		"/dev/stdin":       "no such file", // no process: /proc/self is empty
		"/lib":             "not a regular file",
		"/lib/fifo.so":     "not a regular file",
		"/lib/big.so":      "more than the limit",
		"/lib/abs-out.so":  "no such file",
		"/lib/rel-out.so":  "no such file",
		"/lib/hidden.so":   "no such file",
		"/data/jobs.db":    "no such file",
		"/proc/self/exe":   "no such file",
		"/lib/missing.so":  "no such file",
		"/lib/ld.so/extra": "not a directory",
	} {
		b, err := ReadFile(cfg, name, 1000)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadFile %s = %q, %v; want an error saying %q", name, b, err, want)
		}
	}
}

// TestResolution covers the rest of path resolution: the guest starts in
// its root, symlink loops end in ELOOP, ".." after a symlink is the
// physical parent, a trailing slash wants a directory, and hidden paths
// must exist to be hidden.
func TestResolution(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "a/b"), 0o755))
	must(os.WriteFile(filepath.Join(root, "a/f"), []byte("in a"), 0o644))
	must(os.Symlink("loop2", filepath.Join(root, "loop1")))
	must(os.Symlink("loop1", filepath.Join(root, "loop2")))
	must(os.Symlink("a/b", filepath.Join(root, "tob")))
	g := newGuest(t, Config{Root: root})
	n, _ := g.call(79, g.next, 256) // getcwd
	got := make([]byte, max(n, 0))
	_ = g.mem.Peek(g.next, got)
	if string(got) != "/\x00" {
		t.Errorf("the guest starts in %q, want /", got)
	}
	open := func(path string, flags uint64) int64 {
		r, err := g.call(nrOpenat, cwd, g.str(path), flags, 0)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if fd := open("/loop1", 0); fd != -int64(ELOOP) {
		t.Errorf("a symlink loop: %d, want -ELOOP", fd)
	}
	if fd := open("/tob/../f", 0); fd < 0 || g.readAll(fd) != "in a" {
		t.Errorf("/tob/../f is /a/f: %d", fd)
	}
	if fd := open("/a/f/", 0); fd != -int64(ENOTDIR) {
		t.Errorf("a file with a trailing slash: %d, want -ENOTDIR", fd)
	}
	if fd := open("/tob", oNofollow); fd != -int64(ELOOP) {
		t.Errorf("O_NOFOLLOW on a symlink: %d, want -ELOOP", fd)
	}
	if r, _ := g.call(nrChdir, g.str("tob")); r != 0 {
		t.Fatalf("chdir tob: %d", r)
	}
	n, _ = g.call(79, g.next, 256)
	got = make([]byte, max(n, 0))
	_ = g.mem.Peek(g.next, got)
	if string(got) != "/a/b\x00" {
		t.Errorf("getcwd after chdir through a symlink = %q, want the physical /a/b", got)
	}
	// Directories in a writable directory can be renamed and removed; the
	// writable directory itself cannot.
	must(os.MkdirAll(filepath.Join(root, "rw/d1"), 0o755))
	w := newGuest(t, Config{Root: root, Writable: []string{"/rw"}})
	if r, _ := w.call(nrRenameat, cwd, w.str("/rw/d1"), cwd, w.str("/rw/d2")); r != 0 {
		t.Errorf("rename a directory: %d", r)
	}
	if r, _ := w.call(nrUnlinkat, cwd, w.str("/rw/d2/"), atRemoveDir); r != 0 {
		t.Errorf("rmdir: %d", r)
	}
	if r, _ := w.call(nrUnlinkat, cwd, w.str("/rw"), atRemoveDir); r != -int64(EROFS) {
		t.Errorf("rmdir of the writable directory itself: %d, want -EROFS", r)
	}
	if r, _ := w.call(nrUnlinkat, cwd, w.str("/rw/."), atRemoveDir); r != -int64(EINVAL) {
		t.Errorf("rmdir /rw/.: %d, want -EINVAL", r)
	}
	if r, _ := w.call(nrMkdirat, cwd, w.str("/rw/new/"), 0o755); r != 0 {
		t.Errorf("mkdir with a trailing slash: %d", r)
	}
	if _, err := os.Stat(filepath.Join(root, "rw/new")); err != nil {
		t.Errorf("mkdir /rw/new/: %v", err)
	}
	if _, err := New(g.mem, Config{Root: root, Hide: []string{filepath.Join(root, "missing")}}); err == nil {
		t.Errorf("a hidden path that does not exist was accepted")
	}
	if _, err := New(g.mem, Config{Root: root, Hide: []string{root}}); err == nil {
		t.Errorf("hiding the root itself was accepted")
	}
}

// FuzzResolve opens random paths, relative to the root or to a directory
// descriptor, in the escape layout: whatever the path, resolution ends,
// never panics, and never yields a hidden file's content.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"/pub/rel/jobs.db", "../data", "/pub/up/../data/jobs.db", "/proc/self/fd/3/../../data",
		"/dev/fd/0", "/var/statelink/gxbitd/state.db", "pub/deep/procdir/self/mem", "/pub/parent/pub/parent/tmp/scratch-1/", "//./..//tmp"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, path string, fromPub bool) {
		if path == "" || len(path) > 512 || strings.IndexByte(path, 0) >= 0 {
			return
		}
		root, hide := escapeLayout(t)
		g := newGuest(t, Config{Root: root, Hide: hide, Writable: []string{"/tmp"}})
		dirfd := uint64(cwd)
		if fromPub {
			fd, _ := g.call(nrOpenat, cwd, g.str("/pub"), oRdonlyDir, 0)
			dirfd = uint64(fd)
		}
		fd, err := g.call(nrOpenat, dirfd, g.str(path), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if fd >= 0 {
			if got := g.readAll(fd); strings.Contains(got, "SECRET") {
				t.Fatalf("open %q read a hidden file: %q", path, got)
			}
		}
		if r, _ := g.call(nrChdir, g.str(path)); r == 0 {
			if fd, _ := g.call(nrOpenat, cwd, g.str("jobs.db"), 0, 0); fd >= 0 {
				t.Fatalf("chdir %q reached a hidden directory", path)
			}
		}
	})
}

// TestResolutionLeaksNoDescriptors resolves paths of every kind, failing
// and succeeding, and checks that gxbit holds no more host descriptors
// afterwards than before.
func TestResolutionLeaksNoDescriptors(t *testing.T) {
	root, hide := escapeLayout(t)
	g := newGuest(t, Config{Root: root, Hide: hide, Writable: []string{"/tmp"}})
	count := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip(err)
		}
		return len(ents)
	}
	before := count()
	for i := 0; i < 3; i++ {
		for _, p := range []string{"/pub/f.txt", "/pub/rel/jobs.db", "/pub/parent/pub/deep", "/loop", "/pub/f.txt/x", "/dev/null", "/proc/self/fd/1", "/tmp/new", "/tmp/scratch-1"} {
			if fd, _ := g.call(nrOpenat, cwd, g.str(p), oCreat|oRdwr, 0o644); fd >= 0 {
				g.call(nrClose, uint64(fd))
			}
			g.call(4, g.str(p), g.next+4096)
			g.call(nrChdir, g.str(p))
			g.call(nrUnlinkat, cwd, g.str(p), 0)
			g.call(nrMkdirat, cwd, g.str(p), 0o755)
			g.call(nrReadlink, g.str(p), g.next, 100)
		}
		g.list("/pub")
	}
	if after := count(); after != before {
		t.Errorf("%d host descriptors before, %d after", before, after)
	}
}
