package linux

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/gxbit/gxbit/gvinst"
)

// Config is what a guest process starts with.
type Config struct {
	// Root is the host directory the guest sees as "/". "" means "/".
	Root string
	// Writable lists guest directories (absolute, under Root) the guest may
	// create, write and remove files in. Everything else is read-only.
	Writable []string
	// Hide lists guest paths (absolute, under Root) that the guest must not
	// see: they and everything below them appear not to exist.
	Hide []string
	// Stdin, Stdout and Stderr are the guest's descriptors 0, 1 and 2. A
	// nil Stdin reads as empty; a nil writer discards.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// TTY reports, for descriptors 0, 1 and 2, whether the guest should see
	// a terminal (isatty, TCGETS).
	TTY [3]bool
	// ExePath is the guest path of the running program (/proc/self/exe).
	ExePath string
	// Cwd is the guest's initial working directory; "" means "/".
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
	root     *os.Root
	writable []writableDir
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

type writableDir struct {
	guest string
	root  *os.Root
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
	rootDir := cfg.Root
	if rootDir == "" {
		rootDir = "/"
	}
	root, err := os.OpenRoot(rootDir)
	if err != nil {
		return nil, fmt.Errorf("opening the guest root: %w", err)
	}
	p := &Process{
		cfg:         cfg,
		mem:         mem,
		root:        root,
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
		p.cwd = path.Clean("/" + cfg.Cwd)
	}
	for _, w := range cfg.Writable {
		g := path.Clean("/" + w)
		wr, err := root.OpenRoot(strings.TrimPrefix(g, "/") + "/.")
		if g == "/" {
			wr, err = os.OpenRoot(rootDir)
		}
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("writable directory %s: %w", w, err)
		}
		p.writable = append(p.writable, writableDir{guest: g, root: wr})
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
	p.fds[0] = &fileDesc{f: &stream{r: in, tty: cfg.TTY[0]}, path: "/dev/stdin"}
	p.fds[1] = &fileDesc{f: &stream{w: out, tty: cfg.TTY[1]}, path: "/dev/stdout"}
	p.fds[2] = &fileDesc{f: &stream{w: errw, tty: cfg.TTY[2]}, path: "/dev/stderr"}
	return p, nil
}

// Close releases the host files the process holds.
func (p *Process) Close() {
	for fd, d := range p.fds {
		d.f.Close()
		delete(p.fds, fd)
	}
	for _, w := range p.writable {
		w.root.Close()
	}
	p.root.Close()
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
