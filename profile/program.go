package profile

import (
	"fmt"
	"io"

	"github.com/gxbit/gxbit/gvinst"
)

// Image is what the static analyzer needs to know about a loaded program
// (package loader's Image and ELF file give every field).
type Image struct {
	Entry   uint64   // the program's own entry point (not the dynamic loader's)
	Symbols []Symbol // function symbols, relocated; empty for a stripped file
	// Lo and Hi delimit the main program's mapping; code outside (the
	// dynamic loader, shared libraries) is unknown code.
	Lo, Hi uint64
}

// RecoverImage recovers the functions of a loaded program: from main when
// the symbol table names it, else from the entry point (a stripped
// program's main is then found as a code pointer that _start loads).
func RecoverImage(code Code, mem *gvinst.Memory, im Image, maxInsns int) *Program {
	isCode := func(a uint64) bool {
		if a < im.Lo || a >= im.Hi {
			return false
		}
		p, ok := mem.PermAt(a)
		return ok && p&gvinst.PermExec != 0
	}
	roots := []uint64{im.Entry}
	for _, s := range im.Symbols {
		if s.Name == "main" {
			roots = []uint64{s.Addr}
		}
	}
	return Recover(code, StaticOptions{Roots: roots, Symbols: im.Symbols, MaxInsns: maxInsns, IsCode: isCode})
}

// Lifter is what a profiling session needs of package lift's *Lifter:
// single instructions for the static analyzer, VBlocks for the engine.
type Lifter interface {
	Code
	BlockLifter
}

// Options configure a profiling session.
type Options struct {
	// MaxStaticInsns bounds the static analyzer (0: its default).
	MaxStaticInsns int
	// Eager analyses every function reachable from main before the run,
	// rather than each function when it first runs.
	Eager   bool
	Collect CollectOptions
	// Engine makes the engine the collector drives, over the collector
	// as its translator and with its probe hook; nil means the
	// interpreter. On a compiling engine the code outside the nests being
	// sampled runs compiled, and each probe of an instrumented block is a
	// call out of the compiled code into the hook (a nest stops sampling,
	// and loses its access probes, after CollectOptions.MaxProbesPerNest).
	Engine gvinst.NewEngineFunc
}

// Session is one profiled run: the static analysis of the program, and
// the collector with the engine it drives.
type Session struct {
	Program   *Program
	Collector *Collector
	inner     gvinst.Engine
}

// NewSession prepares the instrumented engine for the program loaded in
// mem. Functions are analysed when they first run (their entry is first
// translated), unless opts.Eager asks for every function reachable from
// main (or the entry point) up front. Run the guest on Engine() (its
// output passes through untouched), then call Finish.
//
// It fails only when opts.Engine cannot make an engine.
func NewSession(lift Lifter, mem *gvinst.Memory, im Image, opts Options) (*Session, error) {
	isCode := func(a uint64) bool {
		if a < im.Lo || a >= im.Hi {
			return false
		}
		p, ok := mem.PermAt(a)
		return ok && p&gvinst.PermExec != 0
	}
	// The static analyzer sees memset calls as the string stores they
	// do, and the collector runs them so inside candidate nests
	// (knowncalls.go).
	known := NewKnownCalls(lift, mem, im.Symbols)
	code := inliningCode{Code: lift, k: known}
	var c *Collector
	if opts.Eager {
		p := RecoverImage(code, mem, im, opts.MaxStaticInsns)
		c = NewCollector(p, lift, mem, opts.Collect)
	} else {
		an := newAnalyzer(code, StaticOptions{Symbols: im.Symbols, MaxInsns: opts.MaxStaticInsns, IsCode: isCode})
		c = newLazyCollector(an, lift, mem, opts.Collect, []uint64{im.Entry})
	}
	c.known = known
	iopts := gvinst.InterpOptions{Probe: c.Probe, Counts: c.Counts(), Optimize: true}
	var inner gvinst.Engine
	if opts.Engine == nil {
		inner = gvinst.NewInterpreter(mem, c, iopts)
	} else {
		var err error
		if inner, err = opts.Engine(mem, c, iopts); err != nil {
			return nil, fmt.Errorf("profile: %w", err)
		}
	}
	c.SetEngine(inner)
	return &Session{Program: c.prog, Collector: c, inner: inner}, nil
}

// Close releases the session's engine (a compiling engine's code memory);
// the session must not run again.
func (s *Session) Close() {
	if c, ok := s.inner.(io.Closer); ok {
		_ = c.Close()
	}
	s.inner = nil
}

// Engine is the engine to run the guest on.
func (s *Session) Engine() gvinst.Engine { return s.Collector }

// Finish analyses the run and returns the profile.
func (s *Session) Finish(run RunInfo) *File { return s.Collector.Finish(run) }
