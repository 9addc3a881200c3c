package linux

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gxbit/gxbit/gvinst"
)

// Config is what a guest process starts with.
type Config struct {
	// Root is the host directory the guest sees as "/". "" means "/".
	// Whatever it holds at dev and proc, the guest sees gxbit's own /dev
	// and /proc there (see virtual.go).
	Root string
	// Writable lists guest directories (absolute, under Root) the guest may
	// create, write and remove files in. Everything else is read-only.
	Writable []string
	// Hide lists host paths (directories or files; symbolic links are
	// followed) the guest must not reach by any path: through a symlink,
	// "..", a descriptor or a working directory, the hidden file and
	// everything below it appear not to exist (ENOENT). They are known by
	// identity (device and inode), so each must exist when the process is
	// created. The daemon hides its data directory and its jobs' scratch
	// directories this way. The host's /proc is always hidden.
	Hide []string
	// Stdin, Stdout and Stderr are the guest's descriptors 0, 1 and 2. A
	// nil Stdin reads as empty; a nil writer discards.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Files are further descriptors (3 and up) the guest starts with, as a
	// process inherits open descriptors across execve: a shell's process
	// substitution (<(cmd)) passes a pipe this way. The process owns them
	// from then on and closes them. The guest sees the host file itself;
	// /proc/self/fd/N and /dev/fd/N reach it.
	Files map[int]*os.File
	// TTY reports, for descriptors 0, 1 and 2, whether the guest should see
	// a terminal (isatty, TCGETS).
	TTY [3]bool
	// ExePath is the guest path of the running program: what
	// readlink("/proc/self/exe") gives.
	ExePath string
	// Exe is the running program's bytes, what opening /proc/self/exe
	// reads; nil means open ExePath instead.
	Exe []byte
	// Cwd is the guest's initial working directory, a guest path; "" means
	// "/", the root. It must be a directory the guest can reach.
	Cwd string
	// Brk is the initial program break (the end of the program's data).
	Brk uint64
	// Now returns the wall-clock time; nil means time.Now.
	Now func() time.Time
}

// Process is one guest process: its descriptors, memory map, signal
// dispositions and the counters of what it asked the kernel for. A Process
// is not safe for concurrent use.
type Process struct {
	cfg      Config
	mem      *gvinst.Memory
	ioBuf    []byte // see ioBuffer
	view     *view
	fds      map[int]*fileDesc
	cwd      string
	brkStart uint64
	brk      uint64
	start    time.Time
	sigacts  map[int][]byte
	sigmask  uint64
	umask    uint32

	counts      map[int]uint64
	unsupported map[int]uint64
	ctx         context.Context // see SetContext; nil is never cancelled
}

// ExitError is returned by Syscall when the guest process ends: by exit or
// exit_group (Signal 0), or killed by a signal it raised against itself.
type ExitError struct {
	Status int // exit status, 0..255, when Signal is 0
	Signal int // the terminating signal, or 0
}

func (e *ExitError) Error() string {
	if e.Signal != 0 {
		return fmt.Sprintf("guest killed by signal %d", e.Signal)
	}
	return fmt.Sprintf("guest exited with status %d", e.Status)
}

// UnsupportedError is returned by Syscall for a request gxbit refuses to
// emulate in a way that must stop the guest (a second thread, say).
type UnsupportedError struct {
	Syscall string
	Why     string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("unsupported system call %s: %s", e.Syscall, e.Why)
}

// New creates the guest process over mem.
func New(mem *gvinst.Memory, cfg Config) (*Process, error) {
	v, err := openView(cfg.Root, cfg.Writable, cfg.Hide)
	if err != nil {
		return nil, err
	}
	p := &Process{
		cfg:         cfg,
		mem:         mem,
		view:        v,
		fds:         map[int]*fileDesc{},
		cwd:         "/",
		brkStart:    cfg.Brk,
		brk:         cfg.Brk,
		start:       time.Now(),
		sigacts:     map[int][]byte{},
		umask:       0o022,
		counts:      map[int]uint64{},
		unsupported: map[int]uint64{},
	}
	if cfg.Cwd != "" {
		r, err := v.walk(p, "/", cfg.Cwd, true)
		if err == nil && !r.isDir() {
			err = ENOTDIR
		}
		if err != nil {
			if r != nil {
				r.release()
			}
			v.close()
			return nil, fmt.Errorf("working directory %s: %w", cfg.Cwd, err)
		}
		p.cwd = r.guest
		r.release()
	}
	in := cfg.Stdin
	if in == nil {
		in = strings.NewReader("")
	}
	out, errw := cfg.Stdout, cfg.Stderr
	if out == nil {
		out = io.Discard
	}
	if errw == nil {
		errw = io.Discard
	}
	for n, f := range cfg.Files {
		if n < 3 || n >= maxFDs {
			p.Close()
			return nil, fmt.Errorf("inherited descriptor %d: out of range 3..%d", n, maxFDs-1)
		}
		d := &fileDesc{f: &hostFile{File: f}, path: f.Name(), flags: oRdwr}
		var st unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &st); err == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO {
			d.path = fmt.Sprintf("pipe:[%d]", st.Ino)
		}
		p.fds[n] = d
	}
	p.fds[0] = &fileDesc{f: &stream{r: in, tty: cfg.TTY[0]}, path: streamPath(0, cfg.TTY[0])}
	p.fds[1] = &fileDesc{f: &stream{w: out, tty: cfg.TTY[1]}, path: streamPath(1, cfg.TTY[1])}
	p.fds[2] = &fileDesc{f: &stream{w: errw, tty: cfg.TTY[2]}, path: streamPath(2, cfg.TTY[2])}
	return p, nil
}

// streamPath is what readlink(/proc/self/fd/N) gives for standard stream
// N: a terminal's name, or a pipe's, as Linux shows them (never a path
// that links back to /proc/self/fd, which realpath would loop on).
func streamPath(n int, tty bool) string {
	if tty {
		return "/dev/pts/0"
	}
	return fmt.Sprintf("pipe:[%d]", 4242000+n)
}

// Close releases the host files the process holds.
func (p *Process) Close() {
	for fd, d := range p.fds {
		d.f.Close()
		delete(p.fds, fd)
	}
	p.view.close()
}

// Brk reports the current program break.
func (p *Process) Brk() uint64 { return p.brk }

// args are the six system call arguments.
type args [6]uint64

// Syscall performs the system call the guest asked for: number in s0,
// arguments in rdi, rsi, rdx, r10, r8, r9; the result (or -errno) goes to
// s0, and rcx and r11 are clobbered as the syscall instruction does. It
// returns nil to let the guest go on, an *ExitError when the guest has
// ended, or another error that must stop the guest.
func (p *Process) Syscall(cpu *gvinst.CPU) error {
	if p.isInt80(cpu) {
		return p.syscall32(cpu)
	}
	s := &cpu.State
	nr := int(s[gvinst.S0])
	a := args{s[7], s[6], s[2], s[10], s[8], s[9]}
	p.counts[nr]++
	entry, ok := lookup(nr)
	var ret uint64
	if !ok || entry.Fn == nil {
		p.unsupported[nr]++
		ret = errnoRet(ENOSYS)
	} else {
		var err error
		if ret, err = p.call(entry, cpu, a, nr); err != nil {
			return err
		}
	}
	s[gvinst.S0] = ret
	s[gvinst.S1] = cpu.PC
	s[11] = 0x202
	return nil
}

// call runs the handler of entry, counted under key, and returns the value
// for rax (-errno for an Errno), or the error that stops the guest.
func (p *Process) call(entry Entry, cpu *gvinst.CPU, a args, key int) (uint64, error) {
	ret, err := entry.Fn(p, cpu, a)
	if entry.Support == Unsupported || entry.Support == Refused {
		p.unsupported[key]++
	}
	if err != nil {
		var e Errno
		if !errors.As(err, &e) {
			return 0, err
		}
		return errnoRet(e), nil
	}
	return ret, nil
}

// SyscallCount is how often the guest made one system call.
type SyscallCount struct {
	Nr          int
	Name        string
	Count       uint64
	Unsupported bool // answered ENOSYS or refused by the sandbox
}

// Counts lists the system calls the guest made, most frequent first.
func (p *Process) Counts() []SyscallCount {
	var out []SyscallCount
	for nr, n := range p.counts {
		name := fmt.Sprintf("syscall_%d", nr)
		if e, ok := lookup(nr); ok {
			name = e.Name
		} else if nr >= i386CountBase {
			name = fmt.Sprintf("i386 syscall_%d", nr-i386CountBase)
			if n := i386Name(nr - i386CountBase); n != "" {
				name = n
			}
		}
		out = append(out, SyscallCount{Nr: nr, Name: name, Count: n, Unsupported: p.unsupported[nr] > 0})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Nr < out[j].Nr
	})
	return out
}

// readBytes reads n guest bytes at addr, or EFAULT. It is for the small
// structures system calls take (iovec arrays, pollfds, timespecs); n above
// 1 MiB is EINVAL. Buffers of any length go through writeFrom.
func (p *Process) readBytes(addr, n uint64) ([]byte, error) {
	if n > 1<<20 {
		return nil, EINVAL
	}
	b := make([]byte, n)
	if err := p.mem.Read(addr, b); err != nil {
		return nil, EFAULT
	}
	return b, nil
}

// writeBytes writes b to guest memory at addr, or EFAULT.
func (p *Process) writeBytes(addr uint64, b []byte) error {
	if err := p.mem.Write(addr, b); err != nil {
		return EFAULT
	}
	return nil
}

// readPath reads a NUL-terminated guest path.
func (p *Process) readPath(addr uint64) (string, error) {
	s, err := p.mem.ReadString(addr, 4096)
	if err != nil {
		var f *gvinst.Fault
		if errors.As(err, &f) {
			return "", EFAULT
		}
		return "", ENAMETOOLONG
	}
	if s == "" {
		return "", ENOENT
	}
	return s, nil
}

// errnoRet is the value rax gets for a failed call: -e.
func errnoRet(e Errno) uint64 { return uint64(-int64(e)) }
