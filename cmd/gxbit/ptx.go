package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/ptx"
)

func cmdPtx(args []string) int {
	sub := map[string]func([]string) int{"check": cmdPtxCheck, "run": cmdPtxRun, "gen": cmdPtxGen}
	if len(args) == 0 || sub[args[0]] == nil {
		fmt.Fprintln(os.Stderr, "usage: gxbit ptx check FILE.ptx\n       gxbit ptx run FILE.ptx --kernel NAME --grid X[,Y[,Z]] --block X[,Y[,Z]] [flags] ARG...\n       gxbit ptx gen --profile FILE PROG")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "help") {
			return 0
		}
		return 2
	}
	return sub[args[0]](args[1:])
}

// cmdPtxCheck parses and checks a module and lists its kernels.
func cmdPtxCheck(args []string) int {
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(os.Stderr, "usage: gxbit ptx check FILE.ptx\n\nParses and checks a PTX module and lists its kernels with their parameters.")
		if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
			return 0
		}
		return 2
	}
	src, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "gxbit ptx check: %v\n", err)
		return 2
	}
	m, err := ptx.Parse(string(src))
	if err == nil {
		err = ptx.Check(m)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s:%v\n", args[0], err)
		return 1
	}
	for _, f := range m.Funcs {
		if !f.Entry {
			continue
		}
		var ps []string
		for _, p := range f.Params {
			ps = append(ps, fmt.Sprintf(".%s %s", p.Type, p.Name))
		}
		fmt.Printf("%s(%s)\n", f.Name, strings.Join(ps, ", "))
	}
	return 0
}

// kernelArg is one ARG of gxbit ptx run: a scalar, or a buffer with its
// initial bytes.
type kernelArg struct {
	scalar []byte
	buffer []byte // nil for a scalar
	text   string
}

func parseKernelArg(s string) (kernelArg, error) {
	kind, val, ok := strings.Cut(s, ":")
	if !ok {
		return kernelArg{}, fmt.Errorf("argument %q: want KIND:VALUE (u32, s32, u64, s64, f32, f64, buf, zero)", s)
	}
	a := kernelArg{text: s}
	le := binary.LittleEndian
	bad := func(err error) (kernelArg, error) { return kernelArg{}, fmt.Errorf("argument %q: %w", s, err) }
	switch kind {
	case "u32", "s32":
		v, err := parseInt(val, kind == "s32", 32)
		if err != nil {
			return bad(err)
		}
		a.scalar = le.AppendUint32(nil, uint32(v))
	case "u64", "s64":
		v, err := parseInt(val, kind == "s64", 64)
		if err != nil {
			return bad(err)
		}
		a.scalar = le.AppendUint64(nil, v)
	case "f32":
		v, err := strconv.ParseFloat(val, 32)
		if err != nil {
			return bad(err)
		}
		a.scalar = le.AppendUint32(nil, math.Float32bits(float32(v)))
	case "f64":
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return bad(err)
		}
		a.scalar = le.AppendUint64(nil, math.Float64bits(v))
	case "buf":
		b, err := os.ReadFile(val)
		if err != nil {
			return bad(err)
		}
		if len(b) == 0 {
			b = []byte{}
		}
		a.buffer = b
	case "zero":
		n, err := strconv.ParseUint(val, 0, 40)
		if err != nil {
			return bad(err)
		}
		a.buffer = make([]byte, n)
	default:
		return kernelArg{}, fmt.Errorf("argument %q: unknown kind %q (want u32, s32, u64, s64, f32, f64, buf, zero)", s, kind)
	}
	return a, nil
}

func parseInt(s string, signed bool, bits int) (uint64, error) {
	if signed {
		v, err := strconv.ParseInt(s, 0, bits)
		return uint64(v), err
	}
	return strconv.ParseUint(s, 0, bits)
}

func parseDim(s string) (gpu.Dim3, error) {
	parts := strings.Split(s, ",")
	if len(parts) > 3 {
		return gpu.Dim3{}, fmt.Errorf("%q: at most three dimensions", s)
	}
	d := [3]uint32{1, 1, 1}
	for i, p := range parts {
		v, err := strconv.ParseUint(strings.TrimSpace(p), 10, 32)
		if err != nil || v == 0 {
			return gpu.Dim3{}, fmt.Errorf("%q: dimensions are positive integers", s)
		}
		d[i] = uint32(v)
	}
	return gpu.Dim3{X: d[0], Y: d[1], Z: d[2]}, nil
}

// cmdPtxRun loads a module, launches one kernel with the given arguments,
// and writes every buffer argument back to DIR/argN.bin.
func cmdPtxRun(args []string) int {
	fs := flag.NewFlagSet("gxbit ptx run", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `usage: gxbit ptx run FILE.ptx --kernel NAME --grid X[,Y[,Z]] --block X[,Y[,Z]] [flags] ARG...

Each ARG is a kernel parameter, in order: u32:V, s32:V, u64:V, s64:V, f32:V,
f64:V (a scalar), buf:PATH (a device buffer holding PATH's bytes; the
parameter is its address) or zero:N (N zero bytes). After the launch, buffer
argument N (counted from 0 among the buffer arguments) is written to
DIR/argN.bin.

flags:`)
		fs.PrintDefaults()
	}
	kernel := fs.String("kernel", "", "kernel (.entry) name")
	gridText := fs.String("grid", "1", "grid shape X[,Y[,Z]]")
	blockText := fs.String("block", "1", "block shape X[,Y[,Z]]")
	shared := fs.Uint64("shared", 0, "dynamic shared memory bytes")
	timeout := fs.Duration("timeout", time.Minute, "on the simulator, fail a launch still running after this long with CUDA_ERROR_LAUNCH_TIMEOUT (0: no limit)")
	maxWarpInsns := fs.Int64("max-warp-insns", 0, "on the simulator, fail a launch that issues more warp instructions with CUDA_ERROR_LAUNCH_TIMEOUT (0: no limit)")
	gpuChoice := fs.String("gpu", "sim", "GPU: sim, cuda or auto")
	outDir := fs.String("out", ".", "directory for the argN.bin outputs")
	stats := fs.Bool("stats", false, "print the launch statistics")
	var pos []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(pos) < 1 || *kernel == "" {
		fs.Usage()
		return 2
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "gxbit ptx run: "+format+"\n", a...)
		return code
	}
	grid, err := parseDim(*gridText)
	if err != nil {
		return fail(2, "--grid %v", err)
	}
	block, err := parseDim(*blockText)
	if err != nil {
		return fail(2, "--block %v", err)
	}
	if *shared > math.MaxUint32 {
		return fail(2, "--shared %d: at most %d bytes", *shared, uint64(math.MaxUint32))
	}
	if *timeout < 0 || *maxWarpInsns < 0 {
		return fail(2, "--timeout and --max-warp-insns cannot be negative")
	}
	var kargs []kernelArg
	for _, s := range pos[1:] {
		a, err := parseKernelArg(s)
		if err != nil {
			return fail(2, "%v", err)
		}
		kargs = append(kargs, a)
	}
	src, err := os.ReadFile(pos[0])
	if err != nil {
		return fail(2, "%v", err)
	}
	drv, err := pipeline.OpenGPUWith(*gpuChoice, gpusim.Options{MaxLaunchTime: *timeout, MaxWarpInstructions: *maxWarpInsns})
	if err != nil {
		return fail(1, "%v", err)
	}
	ctx, err := drv.NewContext(0)
	if err != nil {
		return fail(1, "%v", err)
	}
	defer ctx.Close()
	mod, err := ctx.LoadModule(string(src))
	if err != nil {
		return fail(1, "%s: %v", pos[0], err)
	}
	fn, err := mod.Function(*kernel)
	if err != nil {
		return fail(1, "%v", err)
	}
	if want := len(fn.Params()); want != len(kargs) {
		return fail(2, "kernel %s takes %d parameters, %d given", *kernel, want, len(kargs))
	}
	params := make([][]byte, len(kargs))
	bufs := make([]gpu.DevicePtr, len(kargs))
	for i, a := range kargs {
		p := fn.Params()[i]
		if a.buffer == nil {
			if len(a.scalar) != p.Size {
				return fail(2, "parameter %d (%s) is %d bytes; %q is %d", i, p.Name, p.Size, a.text, len(a.scalar))
			}
			params[i] = a.scalar
			continue
		}
		if p.Size != 8 {
			return fail(2, "parameter %d (%s) is %d bytes and cannot hold the address of %q", i, p.Name, p.Size, a.text)
		}
		n := uint64(len(a.buffer))
		if n == 0 {
			n = 1
		}
		ptr, err := ctx.Alloc(n)
		if err != nil {
			return fail(1, "%v", err)
		}
		if len(a.buffer) > 0 {
			if err := ctx.CopyHtoD(ptr, a.buffer); err != nil {
				return fail(1, "%v", err)
			}
		}
		bufs[i] = ptr
		params[i] = binary.LittleEndian.AppendUint64(nil, uint64(ptr))
	}
	cfg := gpu.LaunchConfig{Grid: grid, Block: block, SharedBytes: uint32(*shared)}
	if err := ctx.Launch(fn, cfg, params); err != nil {
		return fail(1, "%v", err)
	}
	if err := ctx.Synchronize(); err != nil {
		return fail(1, "%v", err)
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return fail(1, "%v", err)
	}
	n := 0
	for i, a := range kargs {
		if a.buffer == nil {
			continue
		}
		out := make([]byte, len(a.buffer))
		if err := ctx.CopyDtoH(out, bufs[i]); err != nil {
			return fail(1, "%v", err)
		}
		path := filepath.Join(*outDir, fmt.Sprintf("arg%d.bin", n))
		if err := os.WriteFile(path, out, 0o644); err != nil {
			return fail(1, "%v", err)
		}
		n++
	}
	if *stats {
		s := ctx.LastLaunchStats()
		fmt.Fprintf(os.Stderr, "gxbit: kernel %s on %s: %d thread instructions, %d warp instructions, SIMT efficiency %.3f, %d divergent branches, %v (submitted in %v)\n",
			s.Kernel, drv.Name(), s.ThreadInstructions, s.WarpInstructions, s.SIMTEfficiency(), s.DivergentBranches, s.Duration, s.Submit)
		if s.Duration > 0 && s.ThreadInstructions > 0 {
			fmt.Fprintf(os.Stderr, "gxbit: %.3g thread instructions per second\n", float64(s.ThreadInstructions)/s.Duration.Seconds())
		}
	}
	return 0
}
