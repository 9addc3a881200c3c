//go:build linux && amd64

package jit

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/lift"
	"github.com/gxbit/gxbit/linux"
	"github.com/gxbit/gxbit/loader"
	"github.com/gxbit/gxbit/profile"
)

// Compiling real units: the units an engine compiles while it runs a
// program of the nests suite (testdata/nests, built by the corpus's
// build.sh), as gxbit run makes them (tiered, optimized, traces) and as
// the phase 1 collector makes them (the same, with its probes and
// counters, and compiled again as it pauses and resumes its probes).
// BenchmarkCompile compiles them again and again; TestCompiledCodeDump
// writes what compiling each one gives, so that a change to the compiler
// that must not change its code can be checked byte for byte against a
// test binary built before it:
//
//	go test -c -o /tmp/jit_before.test ./jit   # before the change
//	cd jit && GXBIT_JIT_CODEDUMP=/tmp/before.txt /tmp/jit_before.test -test.run TestCompiledCodeDump
//	GXBIT_JIT_CODEDUMP=/tmp/after.txt go test -run TestCompiledCodeDump ./jit
//	cmp /tmp/before.txt /tmp/after.txt

// unitInput is one unit as the engine compiled it: what compileTrace
// takes, and the blocks it was made of as lifted (before the optimization
// passes).
type unitInput struct {
	trace  *traceUnit
	id     uint32
	bp     bool
	site   int
	env    unitEnv
	lifted []*gvinst.VBlock
}

// unitsProfiled says how a program's units are made: under the phase 1
// collector (true) or by a plain run (false).
var unitsProfiled = [...]bool{false, true}

// unitsModeName names a way of making units, in benchmark and dump names.
func unitsModeName(profiled bool) string {
	if profiled {
		return "profile"
	}
	return "run"
}

// nestsPrograms builds the nests suite in build mode mode (O2-static, say)
// into its folder of the shared corpus cache (as accel's TestNests does)
// and returns that mode's programs by name; it skips when they cannot be
// built.
func nestsPrograms(tb testing.TB, mode string) map[string]corpus.Program {
	tb.Helper()
	dir := corpus.BuildNests(tb, mode)
	progs, err := corpus.Programs(dir, mode)
	if err != nil {
		tb.Fatal(err)
	}
	byName := map[string]corpus.Program{}
	for _, p := range progs {
		if p.Suite == corpus.SuiteNests {
			byName[p.Name] = p
		}
	}
	return byName
}

// mediumSizes returns the arguments of each nests program at its medium
// size (testdata/nests/sizes).
func mediumSizes(tb testing.TB) map[string][]string {
	tb.Helper()
	script, err := corpus.ScriptPath()
	if err != nil {
		tb.Fatal(err)
	}
	sizes, err := corpus.ReadNestSizes(filepath.Join(filepath.Dir(script), string(corpus.SuiteNests)), "medium")
	if err != nil {
		tb.Fatal(err)
	}
	return sizes
}

// unitsOf runs program p with arguments args on a compiling engine, under
// the phase 1 collector when profiled, and returns the inputs of the
// units the engine compiled, in the order it compiled them.
func unitsOf(tb testing.TB, p corpus.Program, args []string, profiled bool) []unitInput {
	tb.Helper()
	data, err := os.ReadFile(p.Path)
	if err != nil {
		tb.Fatal(err)
	}
	prog, err := loader.ParseELF(p.Path, data)
	if err != nil {
		tb.Fatal(err)
	}
	mem := gvinst.NewMemory(1 << 30)
	im, err := loader.Load(mem, prog, loader.LoadOptions{Args: append([]string{p.Path}, args...), UID: 1000, GID: 1000})
	if err != nil {
		tb.Fatal(err)
	}
	proc, err := linux.New(mem, linux.Config{Stdout: io.Discard, Stderr: io.Discard, ExePath: p.Path, Exe: data, Brk: im.Brk})
	if err != nil {
		tb.Fatal(err)
	}
	defer proc.Close()
	cpu := &gvinst.CPU{PC: im.Entry}
	cpu.State[gvinst.S4] = im.SP
	cpu.State[gvinst.RFLAGS] = 0x202
	cpu.State[gvinst.MXCSR] = 0x1f80
	cpu.State[gvinst.FPCW] = 0x37f
	cpu.State[gvinst.FPTag] = 0xff
	lifter := lift.NewLifter(mem)
	lifter.MaxInsts = MaxUnitInsts
	var e *Engine
	newEngine := func(mem *gvinst.Memory, t gvinst.Translator, opts gvinst.InterpOptions) (gvinst.Engine, error) {
		opts.HotAfter = DefaultHotAfter
		var err error
		e, err = New(mem, t, opts)
		return e, err
	}
	var run gvinst.Engine
	if profiled {
		lo, hi := im.Prog.Span()
		pim := profile.Image{Entry: im.ProgramEntry(), Lo: lo + im.Bias, Hi: hi + im.Bias}
		for _, s := range im.Symbols {
			if s.IsFun {
				pim.Symbols = append(pim.Symbols, profile.Symbol{Name: s.Name, Addr: s.Addr, Size: s.Size})
			}
		}
		sess, err := profile.NewSession(lifter, mem, pim, profile.Options{Engine: newEngine})
		if err != nil {
			tb.Fatal(err)
		}
		defer sess.Close()
		run = sess.Engine()
	} else {
		if run, err = newEngine(mem, lifter, gvinst.InterpOptions{Optimize: true}); err != nil {
			tb.Fatal(err)
		}
		defer e.Close()
	}
	for done := false; !done; {
		switch stop := run.Run(cpu, 1<<22); stop.Kind {
		case gvinst.StopBudget:
		case gvinst.StopSyscall:
			err := proc.Syscall(cpu)
			var exit *linux.ExitError
			switch {
			case errors.As(err, &exit):
				done = true
			case err != nil:
				tb.Fatalf("%s: %v", p, err)
			}
		default:
			tb.Fatalf("%s: the guest stopped: %+v", p, stop)
		}
	}
	// Replay lookup's choice of page cache entries: e.units holds the
	// units in the order lookup compiled them (dead ones too; dropAll
	// empties it and starts the entries over), each from the first entry
	// the units before it left, or none when too few are left.
	var units []unitInput
	next := 0
	for _, u := range e.units {
		in := unitInput{trace: u.trace, id: u.id, bp: u.bp, site: next, env: e.unitEnv()}
		if next+len(u.trace.vb.Insts) > maxSites {
			in.site = -1
		}
		cu, err := compileTrace(in.trace, in.id, in.bp, in.site, in.env)
		if err != nil {
			tb.Fatalf("%s: unit %#x: %v", p, u.addr, err)
		}
		next += cu.sites
		for _, sg := range u.trace.segs {
			vb := e.interp.Translated(sg.addr)
			if vb == nil {
				if vb, err = e.tr.Translate(sg.addr); err != nil {
					tb.Fatalf("%s: block %#x: %v", p, sg.addr, err)
				}
			}
			in.lifted = append(in.lifted, vb)
		}
		units = append(units, in)
	}
	return units
}

// benchPrograms are the programs BenchmarkCompile compiles the units of:
// heat3d's are the largest (a 3D stencil's long blocks, page groups, many
// probes' callouts), the others ordinary.
var benchPrograms = []string{"heat3d", "gemm", "lu", "covariance"}

// BenchmarkCompile compiles the units that a run of each of benchPrograms
// at its medium size compiled (see unitsOf), all of them once per
// iteration; ns/unit is the time per unit. A profiled run compiles
// several times the units of a plain one: the collector's probes are
// callouts, and pausing and resuming them compiles a nest's units again.
func BenchmarkCompile(b *testing.B) {
	progs := nestsPrograms(b, "O2-static")
	sizes := mediumSizes(b)
	for _, name := range benchPrograms {
		p, ok := progs[name]
		if !ok {
			b.Fatalf("no nests program %s", name)
		}
		for _, profiled := range unitsProfiled {
			b.Run(name+"/"+unitsModeName(profiled), func(b *testing.B) {
				units := unitsOf(b, p, sizes[name], profiled)
				b.ReportAllocs()
				for b.Loop() {
					for _, u := range units {
						if _, err := compileTrace(u.trace, u.id, u.bp, u.site, u.env); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(units)), "ns/unit")
				b.ReportMetric(float64(len(units)), "units")
			})
		}
	}
}

// BenchmarkOptimize runs the optimization passes (gvinst.Optimize, which
// verifies the result) on copies of the blocks of the units that a run of
// each of benchPrograms at its medium size compiled, as lookup and
// formTrace do before compiling them; ns/block is the time per block.
func BenchmarkOptimize(b *testing.B) {
	benchBlocks(b, func(vb *gvinst.VBlock) error {
		c := *vb
		c.Insts = append([]gvinst.Inst(nil), vb.Insts...)
		c.Guest = append([]gvinst.GuestInst(nil), vb.Guest...)
		return gvinst.Optimize(&c)
	})
}

// BenchmarkVerify verifies the blocks BenchmarkOptimize optimizes, as
// they come from the lifter (which verifies every block it lifts).
func BenchmarkVerify(b *testing.B) {
	benchBlocks(b, gvinst.Verify)
}

// benchBlocks runs f on every lifted block of the units of
// BenchmarkCompile's runs, all of them once per iteration.
func benchBlocks(b *testing.B, f func(*gvinst.VBlock) error) {
	progs := nestsPrograms(b, "O2-static")
	sizes := mediumSizes(b)
	for _, name := range benchPrograms {
		for _, profiled := range unitsProfiled {
			b.Run(name+"/"+unitsModeName(profiled), func(b *testing.B) {
				var blocks []*gvinst.VBlock
				for _, u := range unitsOf(b, progs[name], sizes[name], profiled) {
					blocks = append(blocks, u.lifted...)
				}
				b.ReportAllocs()
				for b.Loop() {
					for _, vb := range blocks {
						if err := f(vb); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(blocks)), "ns/block")
				b.ReportMetric(float64(len(blocks)), "blocks")
			})
		}
	}
}

// codeDumpEnv names the environment variable that makes
// TestCompiledCodeDump write its dump to the file it names.
const codeDumpEnv = "GXBIT_JIT_CODEDUMP"

// TestCompiledCodeDump writes, for every unit of every nests program at
// -O0, -O2 and -O3 at its default size (run and profiled) and at -O2 at
// its medium size (profiled), a digest of what verifying and optimizing
// each of its blocks gives (optimizedDigest), a digest of the unit's
// input and everything compiling it gives: the code bytes, the entry,
// resume points, exits, marks and counts. It compiles each unit twice: with the TLBs at a known
// displacement from the machine and counters for the probe sites (the
// addresses of the counters, which differ between processes, are written
// as their index), and with neither (as Disassemble does). Two dumps made
// by test binaries of two versions of the compiler are equal exactly when
// they compile these units to the same code. It runs only when
// GXBIT_JIT_CODEDUMP names the file to write.
func TestCompiledCodeDump(t *testing.T) {
	path := os.Getenv(codeDumpEnv)
	if path == "" {
		t.Skipf("set %s to the file to write", codeDumpEnv)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	total := 0
	for _, mode := range []string{"O0-static", "O2-static", "O3-static"} {
		progs := nestsPrograms(t, mode)
		for _, name := range slices.Sorted(maps.Keys(progs)) {
			for _, profiled := range unitsProfiled {
				total += dumpUnits(t, w, progs[name], "default", progs[name].Argv(""), profiled)
			}
		}
	}
	progs, sizes := nestsPrograms(t, "O2-static"), mediumSizes(t)
	for _, name := range slices.Sorted(maps.Keys(progs)) {
		total += dumpUnits(t, w, progs[name], "medium", sizes[name], true)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d units in all, each compiled twice", total)
}

// dumpUnits writes the dump of the units of a run of program p with
// arguments args, at size size (see TestCompiledCodeDump), to w and
// returns how many there were.
func dumpUnits(t *testing.T, w io.Writer, p corpus.Program, size string, args []string, profiled bool) int {
	run := fmt.Sprintf("%s/%s/%s", p, size, unitsModeName(profiled))
	units := unitsOf(t, p, args, profiled)
	for k, u := range units {
		for bi, vb := range u.lifted {
			fmt.Fprintf(w, "%s unit %d block %d optimized %x\n", run, k, bi, optimizedDigest(vb))
		}
		counts := make([]int64, len(u.env.counts))
		envs := []unitEnv{{tlbFromMachine: [2]int64{1 << 20, 1<<20 + 1<<16}, counts: counts}, {}}
		for ei, env := range envs {
			fmt.Fprintf(w, "%s unit %d env %d input %x\n", run, k, ei, unitDigest(u))
			cu, err := compileTrace(u.trace, u.id, u.bp, u.site, env)
			if err != nil {
				fmt.Fprintf(w, "  error %v\n", err)
				continue
			}
			writeCompiled(w, cu, counts)
		}
	}
	t.Logf("%s: %d units", run, len(units))
	return len(units)
}

// unitDigest is a digest of everything compileTrace reads of u but the
// environment: its instructions, blocks and arguments.
func unitDigest(u unitInput) []byte {
	h := sha256.New()
	vb := u.trace.vb
	fmt.Fprintf(h, "%#x %#x %v %v %d %d %v %d\n", vb.Addr, vb.End, vb.FlagsDeadAtExit, vb.Split, len(vb.Guest), u.id, u.bp, u.site)
	for i := range vb.Insts {
		fmt.Fprintf(h, "%+v\n", vb.Insts[i])
	}
	for _, s := range u.trace.segs {
		fmt.Fprintf(h, "%+v\n", s)
	}
	fmt.Fprintf(h, "counts %d\n", len(u.env.counts))
	return h.Sum(nil)
}

// optimizedDigest is a digest of what verifying vb and optimizing a copy
// of it give: the errors, and every field of the optimized block.
func optimizedDigest(vb *gvinst.VBlock) []byte {
	h := sha256.New()
	fmt.Fprintf(h, "verify %v\n", gvinst.Verify(vb))
	c := *vb
	c.Insts = append([]gvinst.Inst(nil), vb.Insts...)
	c.Guest = append([]gvinst.GuestInst(nil), vb.Guest...)
	fmt.Fprintf(h, "optimize %v\n", gvinst.Optimize(&c))
	fmt.Fprintf(h, "%#x %#x %v %v %v\n", c.Addr, c.End, c.FlagsDeadAtExit, c.Split, c.Guest)
	for i := range c.Insts {
		fmt.Fprintf(h, "%+v\n", c.Insts[i])
	}
	return h.Sum(nil)
}

// writeCompiled writes what compiling a unit gave, its code in
// hexadecimal with each 8-byte address of an entry of counts replaced by
// the entry's index.
func writeCompiled(w io.Writer, cu *compiled, counts []int64) {
	code := append([]byte(nil), cu.code...)
	if len(counts) > 0 {
		lo := uint64(uintptr(unsafe.Pointer(&counts[0])))
		hi := lo + 8*uint64(len(counts))
		for i := 0; i+8 <= len(code); i++ {
			if v := binary.LittleEndian.Uint64(code[i:]); v >= lo && v < hi {
				binary.LittleEndian.PutUint64(code[i:], 0xc0de<<48|(v-lo)/8)
			}
		}
	}
	fmt.Fprintf(w, "  entry %d loop %v floatGuard %v sites %d native %d callouts %d\n", cu.entryGo, cu.loop, cu.floatGuard, cu.sites, cu.nativeOps, cu.nCallouts)
	fmt.Fprintf(w, "  resume %v\n  chain %v targets %x\n", cu.resume, cu.chainStub, cu.targets)
	var sb strings.Builder
	for _, m := range cu.marks {
		fmt.Fprintf(&sb, " %d/%d/%d/%q", m.pos, m.inst, m.slow, m.text)
	}
	fmt.Fprintf(w, "  marks%s\n  code %x\n", sb.String(), code)
}
