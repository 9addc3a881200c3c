package accel_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/jit"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// nestsProgram returns testdata/nests' program name, built -O2 -static,
// and its profile at its default (small) size.
func nestsProgram(t *testing.T, name string) (corpus.Program, *profile.File) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a nests program")
	}
	dir := buildNests(t, []string{"O2-static"})
	progs, err := corpus.Programs(dir, "O2-static")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range progs {
		if p.Name == name {
			prof := phase1(t, pipeline.Config{Path: p.Path, Args: []string{p.Path}, Env: p.Env, Engine: testEngine})
			return p, prof
		}
	}
	t.Fatalf("%s not built", name)
	return corpus.Program{}, nil
}

// accelerateProfiled runs p two-phase under prof on the simulated GPU,
// launching wherever the guards pass, with the options given, and fails
// the test unless its output is native's.
func accelerateProfiled(t *testing.T, p corpus.Program, prof *profile.File, opts accel.Options) *accel.Report {
	t.Helper()
	native := corpus.RunNative(t, p)
	var out, errOut bytes.Buffer
	opts.Profile, opts.AlwaysOffload = prof, true
	if opts.Driver == nil {
		opts.Driver = gpusim.New(gpusim.Options{})
	}
	cfg := pipeline.Config{Path: p.Path, Args: append([]string{p.Path}, p.Args...), Env: p.Env, Stdout: &out, Stderr: &errOut, Engine: testEngine}
	res, rep, err := pipeline.Accelerate(context.Background(), cfg, opts)
	if err != nil {
		t.Fatalf("gxbit accelerate: %v", err)
	}
	if err := corpus.Compare(native, resultOf(res, &out, &errOut)); err != nil {
		t.Fatalf("accelerated run differs from native: %v", err)
	}
	return rep
}

// TestBackgroundTranslation runs twomm (whose first product zeroes a row
// with memset, called through a stub whose slot the start-up code fills)
// and doitgen (3D kernels) two-phase with their hot spots translated in
// the background and, again, on the guest's goroutine only
// (Options.NoBackground), also with the kernels loaded ahead: every
// kernel written to the PTX directory is byte for byte the same, so is
// every hot spot's report but for its times, and the output is native's.
func TestBackgroundTranslation(t *testing.T) {
	for _, name := range []string{"twomm", "doitgen"} {
		t.Run(name, func(t *testing.T) {
			p, prof := nestsProgram(t, name)
			for _, prefetch := range []accel.Prefetch{accel.PrefetchOff, accel.PrefetchOn} {
				fgDir, bgDir := t.TempDir(), t.TempDir()
				fg := accelerateProfiled(t, p, prof, accel.Options{NoBackground: true, PTXDir: fgDir, Prefetch: prefetch})
				bg := accelerateProfiled(t, p, prof, accel.Options{PTXDir: bgDir, Prefetch: prefetch})
				t.Logf("prefetch %d: background: %d hot spots translated in %.3fs, %d used, %d redone", prefetch, bg.BackgroundTranslated, bg.BackgroundSeconds, bg.BackgroundUsed, bg.BackgroundRedone)
				if bg.BackgroundUsed == 0 || bg.BackgroundRedone != 0 {
					t.Errorf("the background's kernels served %d hot spots, %d translated again: want some, none", bg.BackgroundUsed, bg.BackgroundRedone)
				}
				if fg.BackgroundTranslated != 0 || fg.BackgroundUsed != 0 {
					t.Errorf("NoBackground translated %d hot spots in the background", fg.BackgroundTranslated)
				}
				sameFiles(t, fgDir, bgDir)
				if len(fg.HotSpots) != len(bg.HotSpots) {
					t.Fatalf("%d hot spots translated on the guest's goroutine, %d in the background", len(fg.HotSpots), len(bg.HotSpots))
				}
				for i := range fg.HotSpots {
					f, b := untimed(fg.HotSpots[i]), untimed(bg.HotSpots[i])
					if f.Entry != b.Entry || f.Offloadable != b.Offloadable || f.Reason != b.Reason || f.Note != b.Note ||
						f.ScheduleNote != b.ScheduleNote || f.KernelGenerated != b.KernelGenerated || f.Launches != b.Launches ||
						f.Launches2D != b.Launches2D || f.Launches3D != b.Launches3D || f.Iterations != b.Iterations {
						t.Errorf("hot spot %d differs:\n guest's goroutine %+v\n background        %+v", i, f, b)
					}
					if f.KernelGenerated && f.TranslateBackgroundSeconds != 0 {
						t.Errorf("hot spot %s: NoBackground reports %gs of background translation", f.Entry, f.TranslateBackgroundSeconds)
					}
				}
			}
		})
	}
}

// untimed is h without what depends on the machine's speed.
func untimed(h accel.HotSpotReport) accel.HotSpotReport {
	h.TranslateSeconds, h.TranslateBackgroundSeconds, h.LoadSeconds = 0, 0, 0
	h.KernelSeconds, h.CopySeconds, h.ProbeSeconds, h.CPUSecondsEstimate, h.KernelSpeedupEst = 0, 0, 0, 0, 0
	return h
}

// sameFiles fails the test unless directories a and b hold the same files
// with the same bytes.
func sameFiles(t *testing.T, a, b string) {
	t.Helper()
	ea, err := os.ReadDir(a)
	if err != nil {
		t.Fatal(err)
	}
	eb, err := os.ReadDir(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(ea) == 0 || len(ea) != len(eb) {
		var na, nb []string
		for _, e := range ea {
			na = append(na, e.Name())
		}
		for _, e := range eb {
			nb = append(nb, e.Name())
		}
		t.Fatalf("%d kernels written on the guest's goroutine, %d in the background:\n%v\n%v", len(ea), len(eb), na, nb)
	}
	for i, e := range ea {
		if eb[i].Name() != e.Name() {
			t.Fatalf("kernel %s on the guest's goroutine, %s in the background", e.Name(), eb[i].Name())
		}
		x, err := os.ReadFile(filepath.Join(a, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("kernel %s differs between the background and the guest's goroutine", e.Name())
		}
	}
}

// TestBackgroundStopsAtExit runs twomm with a bad size, so that it reaches
// main (where the background starts translating its hot spots) and exits
// at once with its usage error: the run stops the background after the
// hot spot under way rather than translating them all, and leaves no
// goroutine behind. (AlwaysOffload: the device is not measured, which
// would leave the simulator's spin kernel running a moment.)
func TestBackgroundStopsAtExit(t *testing.T) {
	p, prof := nestsProgram(t, "twomm")
	parallel := 0
	for _, hs := range prof.HotSpots {
		if hs.Verdict == profile.VerdictParallel {
			parallel++
		}
	}
	before := runtime.NumGoroutine()
	var out bytes.Buffer
	cfg := pipeline.Config{Path: p.Path, Args: []string{p.Path, "-5"}, Env: p.Env, Stdout: &out, Stderr: &out, Engine: testEngine}
	res, rep, err := pipeline.Accelerate(context.Background(), cfg, accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), Prefetch: accel.PrefetchOn, AlwaysOffload: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitStatus != 2 {
		t.Fatalf("status %d, want twomm's usage error 2: %s", res.ExitStatus, out.String())
	}
	t.Logf("%d of %d parallel hot spots translated in the background (%.3fs) before the exit", rep.BackgroundTranslated, parallel, rep.BackgroundSeconds)
	if rep.BackgroundTranslated >= parallel {
		t.Errorf("the background translated all %d hot spots of a run that ended at main", rep.BackgroundTranslated)
	}
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines after the run, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
	}
}

// codeFlipEngine is the suite's CPU engine that, before the guest starts,
// flips the bytes at addr in guest memory, and puts them back when the
// guest has stopped at main (where the background copies the code): the
// background translates the flipped bytes, the guest runs the right ones.
type codeFlipEngine struct {
	gvinst.Engine
	mem        *gvinst.Memory
	addr, main uint64
	orig       []byte
	state      int // 0 before the flip, 1 flipped, 2 put back
	atMain     bool
}

func (e *codeFlipEngine) Run(cpu *gvinst.CPU, budget uint64) gvinst.Stop {
	switch {
	case e.state == 0:
		e.orig = make([]byte, 4)
		if err := e.mem.Peek(e.addr, e.orig); err != nil {
			panic(err)
		}
		flipped := make([]byte, len(e.orig))
		for i, b := range e.orig {
			flipped[i] = ^b
		}
		if err := e.mem.Poke(e.addr, flipped); err != nil {
			panic(err)
		}
		e.Engine.Invalidate(e.addr, uint64(len(flipped)))
		e.state = 1
	case e.state == 1 && e.atMain:
		if err := e.mem.Poke(e.addr, e.orig); err != nil {
			panic(err)
		}
		e.Engine.Invalidate(e.addr, uint64(len(e.orig)))
		e.state = 2
	}
	st := e.Engine.Run(cpu, budget)
	e.atMain = e.atMain || st.Kind == gvinst.StopBreakpoint && st.PC == e.main
	return st
}

func (e *codeFlipEngine) Close() error {
	if c, ok := e.Engine.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// TestBackgroundCodeChanged runs twomm with the code at its first parallel
// hot spot's header changed in guest memory while the background copies
// it, and put back before the guest gets there: the background's
// translation of the changed bytes is not taken (the guest's goroutine
// translates the hot spot again), and the output is native's.
func TestBackgroundCodeChanged(t *testing.T) {
	p, prof := nestsProgram(t, "twomm")
	var header uint64
	for _, hs := range prof.HotSpots {
		if hs.Verdict == profile.VerdictParallel && len(hs.ParallelLevels) > 0 {
			header = uint64(hs.Levels[hs.ParallelLevels[0]].Header)
			break
		}
	}
	if header == 0 {
		t.Fatal("twomm's profile has no parallel hot spot")
	}
	mainAt := uint64(0)
	for _, s := range pipelineSymbols(t, p) {
		if s.Name == "main" {
			mainAt = s.Addr
		}
	}
	if mainAt == 0 {
		t.Fatal("twomm has no main symbol")
	}
	newEngine := func(mem *gvinst.Memory, tr gvinst.Translator, o gvinst.InterpOptions) (gvinst.Engine, error) {
		var e gvinst.Engine = gvinst.NewInterpreter(mem, tr, o)
		if testEngine == pipeline.EngineJIT {
			o.HotAfter = jit.DefaultHotAfter
			je, err := jit.New(mem, tr, o)
			if err != nil {
				return nil, err
			}
			e = je
		}
		if !o.Breakpoints[mainAt] {
			return e, nil // not the main engine
		}
		return &codeFlipEngine{Engine: e, mem: mem, addr: header, main: mainAt}, nil
	}
	rep := accelerateProfiled(t, p, prof, accel.Options{Engine: newEngine})
	t.Logf("%d hot spots translated in the background, %d used, %d translated again", rep.BackgroundTranslated, rep.BackgroundUsed, rep.BackgroundRedone)
	if rep.BackgroundRedone == 0 {
		t.Error("the background's translation of changed code was taken")
	}
}

// pipelineSymbols are p's function symbols, as phase 2 gets them.
func pipelineSymbols(t *testing.T, p corpus.Program) []profile.Symbol {
	t.Helper()
	g, err := pipeline.Load(pipeline.Config{Path: p.Path, Args: []string{p.Path}, Env: p.Env})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	return g.AccelGuest().Symbols
}

// TestRunOnlineBackground runs gemm once with both phases on gpusim with
// the kernels loaded ahead: the hot spots the profiling round found are
// translated in the background from the round's end, and the output is
// native's.
func TestRunOnlineBackground(t *testing.T) {
	p, _ := nestsProgram(t, "gemm")
	native := corpus.RunNative(t, p)
	var out, errOut bytes.Buffer
	cfg := pipeline.Config{Path: p.Path, Args: []string{p.Path}, Env: p.Env, Stdout: &out, Stderr: &errOut, Engine: testEngine}
	res, on, err := pipeline.RunOnline(context.Background(), cfg, pipeline.OnlineOptions{Driver: gpuNamed{Driver: gpusim.New(gpusim.Options{}), opens: make(chan struct{}, 4), closes: make(chan struct{}, 4)}, AlwaysOffload: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := corpus.Compare(native, resultOf(res, &out, &errOut)); err != nil {
		t.Fatalf("online run differs from native: %v", err)
	}
	if on.Report == nil {
		t.Fatalf("phase 2 did not run: %v", on.Why)
	}
	t.Logf("%s", accel.FormatReport(on.Report))
	if on.Report.BackgroundTranslated == 0 || on.Report.BackgroundRedone != 0 {
		t.Errorf("%d hot spots translated in the background, %d translated again: want some, none", on.Report.BackgroundTranslated, on.Report.BackgroundRedone)
	}
}

// parallelLoads is gpusim under a real GPU's name (gpuNamed) whose
// contexts load several modules at once, as cuda's do with
// Options.JITThreads.
type parallelLoads struct{ gpuNamed }

type parallelContext struct{ gpu.Context }

func (parallelContext) LoadParallelism() int { return 3 }

func (d parallelLoads) NewContext(i int) (gpu.Context, error) {
	ctx, err := d.gpuNamed.NewContext(i)
	if err != nil {
		return nil, err
	}
	return parallelContext{ctx}, nil
}

// TestParallelLoads runs twomm two-phase with the kernels translated in
// the background by three goroutines and loaded ahead by three loader
// goroutines at once: the
// launches run kernels loaded ahead, and the output is native's. Run with
// -race, it checks the loaders' hand-over.
func TestParallelLoads(t *testing.T) {
	p, prof := nestsProgram(t, "twomm")
	drv := parallelLoads{gpuNamed{Driver: gpusim.New(gpusim.Options{}), opens: make(chan struct{}, 4), closes: make(chan struct{}, 4)}}
	rep := accelerateProfiled(t, p, prof, accel.Options{Driver: drv, BackgroundWorkers: 3})
	t.Logf("%d kernels loaded ahead; %d hot spots translated in the background, %d used", rep.KernelsPrefetched, rep.BackgroundTranslated, rep.BackgroundUsed)
	if rep.KernelsPrefetched == 0 {
		t.Error("no launch ran a kernel loaded ahead")
	}
}

// TestBackgroundLiftsNothingAtZero runs testdata/weakcall.c, whose path
// out of its parallel loop calls a weak function no object defines (a
// call to address 0, never made): the hot spots' liveness scans walk to
// 0 and cannot lift it, in the background's copy of the code as on the
// guest's goroutine. The background's translations must serve the hot
// spots all the same; they were thrown away and done again on the
// guest's goroutine (symm and gramschmidt, through glibc's locking code:
// 0.1 to 0.2 s of their runs on an H100's host).
func TestBackgroundLiftsNothingAtZero(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a C program")
	}
	path := buildC(t, "weakcall")
	args := []string{path, "200000"}
	prof := phase1(t, pipeline.Config{Path: path, Args: args, Engine: testEngine})
	want := runNative(t, path, args[1:]...)
	var out bytes.Buffer
	_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
		accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("accelerated output %q, native %q", out.String(), want)
	}
	t.Logf("background: %d hot spots translated, %d used, %d redone", rep.BackgroundTranslated, rep.BackgroundUsed, rep.BackgroundRedone)
	if rep.BackgroundUsed == 0 || rep.BackgroundRedone != 0 {
		t.Errorf("the background's translations served %d hot spots, %d were translated again: want some, none", rep.BackgroundUsed, rep.BackgroundRedone)
	}
}
