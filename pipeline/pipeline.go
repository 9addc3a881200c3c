// Package pipeline runs a guest program through gxbit's stages: it loads
// the ELF file into a fresh guest address space, lifts and interprets its
// code, serves its system calls, and (in the profile and accelerate modes)
// collects phase 1 profiles and, through package accel, offloads hot
// spots in phase 2.
//
// It is the one place where every stage meets; the commands and the daemon
// call it, and tests drive it directly.
package pipeline

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/jit"
	"github.com/gxbit/gxbit/lift"
	"github.com/gxbit/gxbit/linux"
	"github.com/gxbit/gxbit/loader"
)

// Config describes one run of a guest program.
type Config struct {
	Path     string   // the program, on the host (or only its name, with Binary)
	Binary   []byte   // the program's bytes; nil means read Path
	Args     []string // argv, argv[0] included; nil means {Path}
	Env      []string // the guest's environment
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
	TTY      [3]bool          // whether the guest's fds 0, 1, 2 are terminals
	Root     string           // the guest's view of the file system; "" is "/"
	Writable []string         // guest directories the guest may write in
	Hide     []string         // host paths the guest must not reach by any alias (see linux.Config.Hide)
	Files    map[int]*os.File // descriptors from 3 up the guest inherits (see linux.Config.Files)
	Cwd      string           // the guest's initial working directory, a guest path; "" is "/" (see GuestCwd)
	Sysroot  string           // where the dynamic loader is found; "" is Root
	MaxMem   uint64           // bytes of guest memory; 0 is DefaultMaxMem
	MaxInsns uint64           // guest instructions; 0 is no limit
	Engine   string           // the CPU engine: EngineJIT, EngineInterp, or "" for DefaultEngine (the interpreter where jit cannot start)
}

// The CPU engines Config.Engine names.
const (
	EngineJIT    = "jit"    // compiled x86-64 code (package jit), linux/amd64 only
	EngineInterp = "interp" // the interpreter (package gvinst)
)

// EngineFunc returns the constructor of the CPU engine cfg.Engine names:
// phase 1 and phase 2 build their engines with it, as Run does. It fails
// on an unknown name.
func (g *Guest) EngineFunc() (gvinst.NewEngineFunc, error) {
	return engineFunc(g.cfg.Engine)
}

// engineFunc is the constructor of the engine name names. "" is
// DefaultEngine, except that where the compiling engine cannot start (no
// executable memory, say) it falls back to the interpreter; an engine
// named explicitly that cannot start is an error.
func engineFunc(name string) (gvinst.NewEngineFunc, error) {
	if name == "" {
		if DefaultEngine == EngineInterp {
			return engineFunc(EngineInterp)
		}
		return func(mem *gvinst.Memory, t gvinst.Translator, opts gvinst.InterpOptions) (gvinst.Engine, error) {
			if e, err := jit.New(mem, t, jitOptions(opts)); err == nil {
				return e, nil
			}
			return gvinst.NewInterpreter(mem, t, opts), nil
		}, nil
	}
	switch name {
	case EngineInterp:
		return func(mem *gvinst.Memory, t gvinst.Translator, opts gvinst.InterpOptions) (gvinst.Engine, error) {
			return gvinst.NewInterpreter(mem, t, opts), nil
		}, nil
	case EngineJIT:
		return func(mem *gvinst.Memory, t gvinst.Translator, opts gvinst.InterpOptions) (gvinst.Engine, error) {
			e, err := jit.New(mem, t, jitOptions(opts))
			if err != nil {
				return nil, fmt.Errorf("engine %s: %w", EngineJIT, err)
			}
			return e, nil
		}, nil
	}
	return nil, fmt.Errorf("unknown engine %q (want %s or %s)", name, EngineJIT, EngineInterp)
}

// jitOptions are the compiling engine's options: unless opts says
// otherwise, cold code runs on its interpreter until a block has run
// jit.DefaultHotAfter times.
func jitOptions(opts gvinst.InterpOptions) gvinst.InterpOptions {
	if opts.HotAfter == 0 {
		opts.HotAfter = jit.DefaultHotAfter
	}
	return opts
}

// NewEngine returns the CPU engine cfg.Engine names over the guest's memory
// and lifter, with the interpreter's options, and a function that releases
// it.
func (g *Guest) NewEngine(opts gvinst.InterpOptions) (gvinst.Engine, func(), error) {
	newEngine, err := g.EngineFunc()
	if err != nil {
		return nil, nil, err
	}
	e, err := newEngine(g.Mem, g.Lifter, opts)
	if err != nil {
		return nil, nil, err
	}
	if _, ok := e.(*jit.Engine); ok {
		// Compiled code keeps registers in host registers within a
		// unit: longer straight runs make longer units.
		g.Lifter.MaxInsts = jit.MaxUnitInsts
	}
	return e, func() { closeEngine(e) }, nil
}

// closeEngine releases e's resources, if it holds any.
func closeEngine(e gvinst.Engine) {
	if c, ok := e.(io.Closer); ok {
		_ = c.Close()
	}
}

// DefaultMaxMem is the guest memory budget when Config.MaxMem is 0.
const DefaultMaxMem = 4 << 30

// Outcome is how a guest run ended.
type Outcome int

// The outcomes.
const (
	Exited     Outcome = iota // the guest called exit
	Signaled                  // the guest raised a fatal signal against itself
	Faulted                   // the guest made a fault gxbit stopped it for
	OverBudget                // the instruction budget ran out
	Refused                   // the guest asked for something gxbit refuses (a thread, say)
	Cancelled                 // the caller's context was cancelled
)

// Fault describes a guest fault: its kind, the guest address of the
// instruction and its disassembly, and the bad address for memory faults.
type Fault struct {
	Kind      gvinst.TrapKind
	PC        uint64
	Insn      string
	FaultAddr uint64
	Err       error
}

// Signal is the signal a native run would have died of.
func (f *Fault) Signal() int {
	switch f.Kind {
	case gvinst.TrapIllegal, gvinst.TrapUnsupported:
		return 4 // SIGILL
	case gvinst.TrapDivide:
		return 8 // SIGFPE
	case gvinst.TrapBreakpoint:
		return 5 // SIGTRAP
	}
	return 11 // SIGSEGV
}

// String is the one-line diagnosis gxbit prints.
func (f *Fault) String() string {
	insn := f.Insn
	if insn == "" {
		insn = "?"
	}
	switch f.Kind {
	case gvinst.TrapUnsupported:
		return fmt.Sprintf("unsupported instruction at %#x: %s", f.PC, insn)
	case gvinst.TrapIllegal:
		if f.Err != nil {
			return fmt.Sprintf("illegal instruction at %#x: %s (%v)", f.PC, insn, f.Err)
		}
		return fmt.Sprintf("illegal instruction at %#x: %s", f.PC, insn)
	case gvinst.TrapDivide:
		return fmt.Sprintf("divide error (SIGFPE) at %#x: %s", f.PC, insn)
	case gvinst.TrapBreakpoint:
		return fmt.Sprintf("breakpoint trap (SIGTRAP) at %#x: %s", f.PC, insn)
	case gvinst.TrapHalt:
		return fmt.Sprintf("privileged instruction (SIGSEGV) at %#x: %s", f.PC, insn)
	}
	var me *gvinst.MisalignedError
	if errors.As(f.Err, &me) {
		return fmt.Sprintf("general protection fault (SIGSEGV) at %#x: %s: %v", f.PC, insn, me)
	}
	if f.Err != nil {
		return fmt.Sprintf("segmentation fault (SIGSEGV) at %#x: %s: %v", f.PC, insn, f.Err)
	}
	return fmt.Sprintf("segmentation fault (SIGSEGV) at %#x: %s: address %#x", f.PC, insn, f.FaultAddr)
}

// Result is what a guest run produced besides its output.
type Result struct {
	Outcome    Outcome
	ExitStatus int // the guest's exit status, or 128+signal as a shell reports it
	Signal     int
	Fault      *Fault
	Refusal    error // for Refused
	Stats      Stats
}

// Stats counts the work of a run.
type Stats struct {
	GuestInstructions  uint64
	BlocksTranslated   uint64
	UnitsCompiled      uint64            // blocks compiled to host code (the jit engine)
	TraceBlocks        uint64            // blocks compiled into a unit after its first (the jit's traces)
	CompileTime        time.Duration     // spent translating and compiling them
	Callouts           uint64            // GVInst instructions compiled code handed to the interpreter's semantics
	CalloutsByOp       map[string]uint64 // Callouts by op, as gvinst.EngineStats has them
	ExitsByKind        map[string]uint64 // returns from compiled code to Go, by why, as gvinst.EngineStats has them
	InterpInstructions uint64            // guest instructions the jit ran on its interpreter (cold code)
	Wall               time.Duration
	Syscalls           []linux.SyscallCount
}

// Diagnosis is the line gxbit prints on stderr when the guest did not end
// by itself (empty when it did).
func (r *Result) Diagnosis() string {
	switch r.Outcome {
	case Faulted:
		return r.Fault.String()
	case OverBudget:
		return fmt.Sprintf("instruction budget exceeded after %d guest instructions", r.Stats.GuestInstructions)
	case Refused:
		return r.Refusal.Error()
	case Cancelled:
		return "cancelled"
	}
	return ""
}

// Guest is a program loaded and ready to run: its memory, CPU state,
// process and engine. Phase 1 and phase 2 build on it.
type Guest struct {
	Mem    *gvinst.Memory
	CPU    *gvinst.CPU
	Image  *loader.Image
	Proc   *linux.Process
	Lifter *lift.Lifter
	// SHA256 is the hex SHA-256 of the program file.
	SHA256 string
	cfg    Config
}

// Load reads cfg.Path and prepares a guest. Errors about the ELF file
// itself wrap a *loader.FormatError.
func Load(cfg Config) (*Guest, error) {
	data := cfg.Binary
	if data == nil {
		var err error
		if data, err = readProgram(cfg.Path); err != nil {
			return nil, err
		}
	}
	prog, err := loader.ParseELF(cfg.Path, data)
	if err != nil {
		return nil, err
	}
	maxMem := cfg.MaxMem
	if maxMem == 0 {
		maxMem = DefaultMaxMem
	}
	mem := gvinst.NewMemory(maxMem)
	args := cfg.Args
	if len(args) == 0 {
		args = []string{cfg.Path}
	}
	sysroot := cfg.Sysroot
	if sysroot == "" {
		sysroot = cfg.Root
	}
	opts := loader.LoadOptions{Args: args, Env: cfg.Env, Sysroot: sysroot, UID: 1000, GID: 1000}
	// The interpreter is read as the guest would read it: inside its root,
	// never from a hidden directory, a regular file of bounded size.
	opts.ReadInterp = func(name string, limit int64) ([]byte, error) {
		return linux.ReadFile(linux.Config{Root: sysroot, Hide: cfg.Hide}, name, limit)
	}
	if _, err := rand.Read(opts.Random[:]); err != nil {
		return nil, err
	}
	im, err := loader.Load(mem, prog, opts)
	if err != nil {
		return nil, err
	}
	proc, err := linux.New(mem, linux.Config{
		Root: cfg.Root, Writable: cfg.Writable, Hide: cfg.Hide,
		Stdin: cfg.Stdin, Stdout: cfg.Stdout, Stderr: cfg.Stderr, TTY: cfg.TTY, Files: cfg.Files,
		ExePath: guestExePath(cfg), Exe: data, Brk: im.Brk, Cwd: cfg.Cwd,
	})
	if err != nil {
		return nil, err
	}
	cpu := &gvinst.CPU{PC: im.Entry}
	cpu.State[gvinst.S4] = im.SP
	InitState(cpu)
	sum := sha256.Sum256(data)
	g := &Guest{Mem: mem, CPU: cpu, Image: im, Proc: proc, Lifter: lift.NewLifter(mem), SHA256: hex.EncodeToString(sum[:]), cfg: cfg}
	return g, nil
}

// InitState sets the processor state Linux gives a new process: RFLAGS
// with only IF, the x87 control word 0x37f with an empty stack, MXCSR 0x1f80.
func InitState(cpu *gvinst.CPU) {
	cpu.State[gvinst.RFLAGS] = 0x202
	cpu.State[gvinst.MXCSR] = 0x1f80
	cpu.State[gvinst.FPCW] = 0x37f
	cpu.State[gvinst.FPTag] = 0xff
}

// MaxProgramSize is the largest program file Load reads.
const MaxProgramSize = 1 << 30

// readProgram reads the program file at path: a regular file of at most
// MaxProgramSize bytes. Errors are *os.PathError.
func readProgram(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "read", Path: path, Err: errors.New("not a regular file")}
	}
	if fi.Size() > MaxProgramSize {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("%d bytes, more than the limit of %d", fi.Size(), MaxProgramSize)}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxProgramSize+1))
	if err == nil && len(data) > MaxProgramSize {
		err = &os.PathError{Op: "read", Path: path, Err: errors.New("the file grew while it was read")}
	}
	return data, err
}

// guestExePath is what the guest reads from /proc/self/exe: the program's
// path as the guest sees it, or "/" and its base name when the guest
// cannot see it (it came as bytes, or lies outside the root).
func guestExePath(cfg Config) string {
	outside := "/" + filepath.Base(cfg.Path)
	if cfg.Binary != nil {
		return outside
	}
	if g, ok := guestPathOf(cfg.Root, cfg.Path); ok {
		return g
	}
	return outside
}

// guestPathOf is the guest path of the host path host under root ("" is
// "/"), and whether it lies under root at all.
func guestPathOf(root, host string) (string, bool) {
	if root == "" {
		root = "/"
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return "", false
	}
	host, err = filepath.Abs(host)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(root, host)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return filepath.ToSlash(filepath.Join("/", rel)), true
}

// GuestCwd is the host's working directory as a guest with root sees it,
// or "/" when it lies outside root. The CLI starts its guests there, as a
// shell would; the daemon's guests start in "/".
func GuestCwd(root string) string {
	wd, err := os.Getwd()
	if err != nil {
		return "/"
	}
	if g, ok := guestPathOf(root, wd); ok {
		return g
	}
	return "/"
}

// Close releases the guest's host resources.
func (g *Guest) Close() { g.Proc.Close() }

// sliceInsns is how many guest instructions run between checks of the
// context: a few milliseconds of interpretation, so that a cancelled run
// stops well within 100 ms.
const sliceInsns = 1 << 22

// RunEngine runs the guest on e until it ends, serving its system calls.
// onBreak, if not nil, is called at each breakpoint stop and may move the
// CPU (phase 2 offloads a hot spot there); returning an error stops the run.
func (g *Guest) RunEngine(ctx context.Context, e gvinst.Engine, onBreak func(*gvinst.CPU) error) (*Result, error) {
	start := time.Now()
	res := &Result{}
	done := func(o Outcome) (*Result, error) {
		res.Outcome = o
		st := e.Stats()
		res.Stats.GuestInstructions = st.GuestInsns
		res.Stats.BlocksTranslated = st.BlocksTranslated
		res.Stats.UnitsCompiled = st.UnitsCompiled
		res.Stats.TraceBlocks = st.TraceBlocks
		res.Stats.CompileTime = st.CompileTime
		res.Stats.Callouts = st.Callouts
		res.Stats.CalloutsByOp = st.CalloutsByOp
		res.Stats.ExitsByKind = st.ExitsByKind
		res.Stats.InterpInstructions = st.InterpInsns
		res.Stats.Wall = time.Since(start)
		res.Stats.Syscalls = g.Proc.Counts()
		return res, nil
	}
	g.Proc.SetContext(ctx)
	for {
		if err := ctx.Err(); err != nil {
			res.ExitStatus = 128 + 9
			return done(Cancelled)
		}
		budget := uint64(sliceInsns)
		if g.cfg.MaxInsns != 0 {
			used := e.Stats().GuestInsns
			if used >= g.cfg.MaxInsns {
				res.ExitStatus = 128 + 9
				return done(OverBudget)
			}
			budget = min(budget, g.cfg.MaxInsns-used)
		}
		stop := e.Run(g.CPU, budget)
		switch stop.Kind {
		case gvinst.StopBudget:
			continue
		case gvinst.StopSyscall:
			err := g.Proc.Syscall(g.CPU)
			if err == nil {
				continue
			}
			var exit *linux.ExitError
			var refused *linux.UnsupportedError
			switch {
			case errors.Is(err, linux.ErrInterrupted):
				res.ExitStatus = 128 + 9
				return done(Cancelled)
			case errors.As(err, &exit):
				if exit.Signal != 0 {
					res.Signal, res.ExitStatus = exit.Signal, 128+exit.Signal
					return done(Signaled)
				}
				res.ExitStatus = exit.Status
				return done(Exited)
			case errors.As(err, &refused):
				res.Refusal, res.ExitStatus = err, 128+31 // as SIGSYS would
				return done(Refused)
			}
			return nil, err
		case gvinst.StopBreakpoint:
			if onBreak == nil {
				continue
			}
			if err := onBreak(g.CPU); err != nil {
				return nil, err
			}
		case gvinst.StopTrap:
			res.Fault = &Fault{Kind: stop.Trap, PC: stop.PC, Insn: stop.Insn, FaultAddr: stop.FaultAddr, Err: stop.Err}
			res.Signal = res.Fault.Signal()
			res.ExitStatus = 128 + res.Signal
			return done(Faulted)
		default:
			return nil, fmt.Errorf("engine stopped for an unknown reason %v", stop.Kind)
		}
	}
}

// Run loads and runs a program on the engine cfg.Engine names (gxbit run).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	g, err := Load(cfg)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	e, release, err := g.NewEngine(gvinst.InterpOptions{Optimize: true})
	if err != nil {
		return nil, err
	}
	defer release()
	return g.RunEngine(ctx, e, nil)
}
