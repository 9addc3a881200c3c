package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/loader"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// guestFlags are the flags every command that runs a guest shares.
type guestFlags struct {
	root     string
	writable multiFlag
	sysroot  string
	maxMem   string
	maxInsns uint64
	stats    bool
	engine   string
	// cpuProfile is where the Go CPU profile of gxbit itself goes ("":
	// none): what a run spends its time on, for go tool pprof.
	cpuProfile string
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

func (g *guestFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&g.root, "root", "/", "host directory the guest sees as /")
	fs.Var(&g.writable, "writable", "guest directory the guest may write in (repeatable)")
	fs.StringVar(&g.sysroot, "sysroot", "", "where the dynamic loader (PT_INTERP) is found (default: the root)")
	fs.StringVar(&g.maxMem, "max-mem", "4G", "guest memory budget (bytes, or with K, M, G)")
	fs.Uint64Var(&g.maxInsns, "max-insns", 0, "guest instruction budget (0: none)")
	fs.BoolVar(&g.stats, "stats", false, "print execution statistics on stderr at the end")
	fs.StringVar(&g.cpuProfile, "cpuprofile", "", "write gxbit's own Go CPU profile to this file (for go tool pprof)")
	fs.StringVar(&g.engine, "engine", "", "CPU engine of every phase (run, profile, accelerate, run --accelerate): jit (compiled code, linux/amd64) or interp (the interpreter); default "+pipeline.DefaultEngine+", the interpreter where jit cannot start")
}

// profileCPU starts the Go CPU profile --cpuprofile asks for; the
// returned function stops it and closes the file.
func (g *guestFlags) profileCPU() (stop func(), err error) {
	if g.cpuProfile == "" {
		return func() {}, nil
	}
	f, err := os.Create(g.cpuProfile)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// findProgram finds the program a command was given as a shell does: a
// name with a slash is a path, used as it is; a bare name is looked up in
// $PATH (exec.LookPath, with a match through "." in $PATH accepted as a
// shell accepts it).
func findProgram(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	p, err := exec.LookPath(name)
	if errors.Is(err, exec.ErrDot) {
		err = nil
	}
	return p, err
}

// config builds the pipeline configuration for PROG ARGS...: PROG is found
// as a shell finds it (findProgram) and keeps its name as argv[0]; the
// guest starts in the host's working directory as seen inside the root.
func (g *guestFlags) config(prog string, args []string) (pipeline.Config, error) {
	path, err := findProgram(prog)
	if err != nil {
		return pipeline.Config{}, err
	}
	mem, err := parseSize(g.maxMem)
	if err != nil {
		return pipeline.Config{}, fmt.Errorf("--max-mem: %w", err)
	}
	for _, w := range g.writable {
		if !strings.HasPrefix(w, "/") {
			return pipeline.Config{}, fmt.Errorf("--writable %s: must be an absolute guest path", w)
		}
	}
	var tty [3]bool
	for i := range tty {
		tty[i] = term.IsTerminal(i)
	}
	return pipeline.Config{
		Path: path, Args: append([]string{prog}, args...), Env: os.Environ(),
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, TTY: tty,
		Root: g.root, Writable: g.writable, Sysroot: g.sysroot, Cwd: pipeline.GuestCwd(g.root),
		Files:  inheritedFiles(),
		MaxMem: mem, MaxInsns: g.maxInsns, Engine: g.engine,
	}, nil
}

// inheritedFiles are the descriptors above 2 gxbit inherited open (not
// close-on-exec), as a shell's process substitution (<(cmd)) leaves them.
// The guest inherits them too, as it would when run natively.
func inheritedFiles() map[int]*os.File {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	files := map[int]*os.File{}
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n < 3 {
			continue
		}
		if flags, err := unix.FcntlInt(uintptr(n), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
			files[n] = os.NewFile(uintptr(n), fmt.Sprintf("/dev/fd/%d", n))
		}
	}
	return files
}

func parseSize(s string) (uint64, error) {
	mult := uint64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	var n uint64
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil || n == 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

// loadError prints why a program could not be started and returns the exit
// status: 2 for a file gxbit cannot run, 1 otherwise.
func loadError(err error) int {
	fmt.Fprintf(os.Stderr, "gxbit: %v\n", err)
	var fe *loader.FormatError
	var pe *os.PathError
	if errors.As(err, &fe) || errors.As(err, &pe) || errors.Is(err, accel.ErrProfileMismatch) {
		return 2
	}
	return 1
}

// finish prints the diagnosis and statistics of a run and returns its exit
// status.
func finish(res *pipeline.Result, stats bool) int {
	if d := res.Diagnosis(); d != "" {
		fmt.Fprintf(os.Stderr, "gxbit: %s\n", d)
	}
	if stats {
		printStats(res)
	}
	return res.ExitStatus
}

func printStats(res *pipeline.Result) {
	s := res.Stats
	fmt.Fprintf(os.Stderr, "gxbit: guest instructions %d, blocks translated %d, wall %.3fs", s.GuestInstructions, s.BlocksTranslated, s.Wall.Seconds())
	if s.Wall > 0 {
		fmt.Fprintf(os.Stderr, " (%.1f M guest instructions/s)", float64(s.GuestInstructions)/s.Wall.Seconds()/1e6)
	}
	fmt.Fprintln(os.Stderr)
	if s.UnitsCompiled > 0 {
		fmt.Fprintf(os.Stderr, "gxbit: jit: units compiled %d (%d more blocks in traces), compile time %.3fs, guest instructions in the interpreter (cold code) %d, callouts to the interpreter %d\n",
			s.UnitsCompiled, s.TraceBlocks, s.CompileTime.Seconds(), s.InterpInstructions, s.Callouts)
		if len(s.CalloutsByOp) > 0 {
			fmt.Fprintf(os.Stderr, "gxbit: jit: callouts by op: %s\n", calloutsLine(s.CalloutsByOp, 12))
		}
		if len(s.ExitsByKind) > 0 {
			fmt.Fprintf(os.Stderr, "gxbit: jit: exits to Go by kind: %s\n", calloutsLine(s.ExitsByKind, 12))
		}
	}
	var parts []string
	for _, c := range s.Syscalls {
		p := fmt.Sprintf("%s=%d", c.Name, c.Count)
		if c.Unsupported {
			p += "(unsupported)"
		}
		parts = append(parts, p)
	}
	fmt.Fprintf(os.Stderr, "gxbit: syscalls: %s\n", strings.Join(parts, " "))
}

// calloutsLine lists the n most frequent callout kinds, most frequent
// first, and the total of the rest.
func calloutsLine(by map[string]uint64, n int) string {
	names := make([]string, 0, len(by))
	for k := range by {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if by[names[i]] != by[names[j]] {
			return by[names[i]] > by[names[j]]
		}
		return names[i] < names[j]
	})
	var parts []string
	rest := uint64(0)
	for i, k := range names {
		if i < n {
			parts = append(parts, fmt.Sprintf("%s=%d", k, by[k]))
		} else {
			rest += by[k]
		}
	}
	if rest > 0 {
		parts = append(parts, fmt.Sprintf("others=%d", rest))
	}
	return strings.Join(parts, " ")
}

// signalContext is cancelled on SIGINT or SIGTERM.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func cmdRun(args []string) int {
	fs := flag.NewFlagSet("gxbit run", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: gxbit run [flags] PROG [ARGS...]\n\nRuns PROG under the translator; its stdin, stdout and stderr pass through and gxbit exits with its status.\n\nflags:")
		fs.PrintDefaults()
	}
	var g guestFlags
	g.register(fs)
	accel := fs.Bool("accelerate", false, "profile the first part of the run (phase 1) and offload the parallel loop nests of the rest (phase 2)")
	gpuName := fs.String("gpu", "sim", "with --accelerate: GPU back end, sim, cuda or auto")
	always := fs.Bool("always-offload", false, "with --accelerate: launch whenever the guards pass, even where the cost model says the CPU is faster")
	dry := fs.Bool("dry-probes", true, "with --accelerate: probe rows dry (their inner loops jumped through, the guest put back, the GPU running them too); false runs them whole on the CPU (default: dry on a real GPU, whole on the simulator)")
	after := fs.Duration("profile-after", 0, fmt.Sprintf("with --accelerate: the CPU time the program runs plainly before profiling begins (a shorter program is not profiled; 0 profiles from the start); by default %v on a real GPU, %v on the simulator", pipeline.DefaultProfileAfterGPU, pipeline.DefaultProfileAfter))
	saveProfile := fs.String("save-profile", "", "with --accelerate: write the profile phase 1 made in this run to this file (for gxbit profile --print, or gxbit accelerate --profile)")
	reportPath := fs.String("report", "", "with --accelerate: write the run's report as JSON to this file: its profiling rounds (where each began and ended, in guest instructions) and phase 2's per-hot-spot report")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() < 1 {
		fs.Usage()
		return 2
	}
	cfg, err := g.config(fs.Arg(0), fs.Args()[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "gxbit run: %v\n", err)
		return 2
	}
	stopProfile, err := g.profileCPU()
	if err != nil {
		fmt.Fprintf(os.Stderr, "gxbit run: %v\n", err)
		return 2
	}
	defer stopProfile()
	ctx, stop := signalContext()
	defer stop()
	if *accel {
		if !flagSet(fs, "profile-after") {
			*after = -1 // the backend's (pipeline.ProfileAfterFor)
		}
		opts := pipeline.OnlineOptions{AlwaysOffload: *always, ProfileAfter: *after, LeaveDevice: true}
		return runAccelerated(ctx, cfg, *gpuName, opts, dryProbesGiven(fs, dry), *saveProfile, *reportPath, g.stats)
	}
	res, err := pipeline.Run(ctx, cfg)
	if err != nil {
		return loadError(err)
	}
	return finish(res, g.stats)
}

// runAccelerated is gxbit run --accelerate: phase 1 and phase 2 in one run
// with opts, on the GPU gpuName names (opts.ProfileAfter < 0: the
// backend's, pipeline.ProfileAfterFor), its rows probed as dry says
// (wetProbes).
func runAccelerated(ctx context.Context, cfg pipeline.Config, gpuName string, opts pipeline.OnlineOptions, dry *bool, saveProfile, reportPath string, stats bool) int {
	drv, err := pipeline.StartGPU(gpuName)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gxbit run: %v\n", err)
		return 2
	}
	opts.Driver, opts.WetProbes = drv, wetProbes(dry, drv)
	if opts.ProfileAfter < 0 {
		opts.ProfileAfter = pipeline.ProfileAfterFor(drv)
	}
	res, on, err := pipeline.RunOnline(ctx, cfg, opts)
	if err != nil {
		return loadError(err)
	}
	if saveProfile != "" && on.Profile != nil {
		if err := writeFile(saveProfile, func(w *os.File) error { return profile.Write(w, on.Profile) }); err != nil {
			fmt.Fprintf(os.Stderr, "gxbit run: %v\n", err)
		}
	}
	if reportPath != "" {
		if err := writeOnlineReport(reportPath, on); err != nil {
			fmt.Fprintf(os.Stderr, "gxbit run: writing the report: %v\n", err)
		}
	}
	if on.Why != nil {
		fmt.Fprintf(os.Stderr, "gxbit: nothing was accelerated: %v\n", on.Why)
	} else if stats && on.Report != nil {
		launches := 0
		for _, h := range on.Report.HotSpots {
			launches += h.Launches
		}
		fmt.Fprintf(os.Stderr, "gxbit: %d hot spots, %d kernel launches on %s\n", len(on.Report.HotSpots), launches, on.Report.Device)
	}
	if stats {
		fmt.Fprintf(os.Stderr, "gxbit: profiling: %d rounds (%d ended by the instruction bound), %d guest instructions in %.3fs; analysis %.3fs; phase 2 set-up %.3fs\n",
			on.Rounds, on.LimitedRounds, on.ProfiledInstructions, on.ProfileSeconds, on.AnalyseSeconds, on.SetupSeconds)
		if on.Report != nil {
			fmt.Fprint(os.Stderr, accel.FormatReport(on.Report))
		}
	}
	return finish(res, stats)
}

// writeOnlineReport writes gxbit run --accelerate's --report: the
// profiling rounds and phase 2's report (null when it did not start).
func writeOnlineReport(path string, on *pipeline.OnlineResult) error {
	why := ""
	if on.Why != nil {
		why = on.Why.Error()
	}
	spans := on.RoundSpans
	if spans == nil {
		spans = []pipeline.RoundSpan{}
	}
	data, err := json.MarshalIndent(struct {
		Rounds               int                  `json:"rounds"`
		LimitedRounds        int                  `json:"rounds_ended_by_bound"`
		ProfiledInstructions uint64               `json:"profiled_instructions"`
		ProfileSeconds       float64              `json:"profile_seconds"`
		AnalyseSeconds       float64              `json:"analyse_seconds"`
		SetupSeconds         float64              `json:"setup_seconds"`
		RoundSpans           []pipeline.RoundSpan `json:"round_spans"`
		NotAccelerated       string               `json:"not_accelerated,omitempty"`
		Accelerate           *accel.Report        `json:"accelerate"`
	}{on.Rounds, on.LimitedRounds, on.ProfiledInstructions, on.ProfileSeconds, on.AnalyseSeconds, on.SetupSeconds, spans, why, on.Report}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// dryProbesGiven is --dry-probes (dry) as the command line gave it, nil
// where it left the choice to the back end.
func dryProbesGiven(fs *flag.FlagSet, dry *bool) *bool {
	if flagSet(fs, "dry-probes") {
		return dry
	}
	return nil
}

// wetProbes is accel.Options.WetProbes on drv for --dry-probes as given
// (dryProbesGiven): the back end's default where not given
// (pipeline.WetProbesFor).
func wetProbes(dry *bool, drv gpu.Driver) bool {
	if dry == nil {
		return pipeline.WetProbesFor(drv)
	}
	return !*dry
}

// flagSet reports whether the command line set flag name of fs.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
