package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// cmdAccelerate is "gxbit accelerate": run a program with the parallel hot
// spots of its profile offloaded to a GPU.
func cmdAccelerate(args []string) int {
	fs := flag.NewFlagSet("gxbit accelerate", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: gxbit accelerate --profile FILE [--gpu sim|cuda|auto] [--ptx-dir DIR] [--report FILE.json] [flags] PROG [ARGS...]\n\nRuns PROG under the translator with the parallel loop nests of FILE (from gxbit\nprofile) running as PTX kernels on a GPU. The program's output passes through\nand gxbit exits with its status; a nest whose guards fail runs on the CPU.\n\nflags:")
		fs.PrintDefaults()
	}
	var g guestFlags
	g.register(fs)
	profPath := fs.String("profile", "", "the profile written by gxbit profile (required)")
	gpuName := fs.String("gpu", "sim", "GPU back end: sim (the simulated GPU), cuda (a real NVIDIA GPU) or auto (cuda when present)")
	ptxDir := fs.String("ptx-dir", "", "write every generated kernel to DIR/<entry>.ptx")
	reportPath := fs.String("report", "", "write the per-hot-spot report as JSON to this file")
	minIters := fs.Uint64("min-iterations", 0, "least iterations worth a launch (0: the default)")
	always := fs.Bool("always-offload", false, "launch whenever the guards pass, even where the cost model says the CPU is faster")
	dry := fs.Bool("dry-probes", true, "probe rows dry (their inner loops jumped through, the guest put back, the GPU running them too); false runs them whole on the CPU (default: dry on a real GPU, whole on the simulator)")
	dryAbove := fs.Uint64("dry-run-above", 0, "bytes of backup above which a launch of a data-independent kernel is proven by a run without stores instead (0: whichever costs less on a real GPU, never on the simulator)")
	armAfter := fs.Duration("arm-after", pipeline.DefaultArmAfter, "the CPU time the program runs plainly before its hot spots are armed (a shorter program pays nothing for probing; a nest running by then is offloaded from its next iteration; 0 arms them at the start)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() < 1 || *profPath == "" {
		fs.Usage()
		return 2
	}
	prof, err := readProfile(*profPath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gxbit accelerate: %v\n", err)
		return 2
	}
	drv, err := pipeline.StartGPU(*gpuName)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gxbit accelerate: %v\n", err)
		return 1
	}
	if *ptxDir != "" {
		if err := os.MkdirAll(*ptxDir, 0o755); err != nil {
			fmt.Fprintf(os.Stderr, "gxbit accelerate: %v\n", err)
			return 1
		}
	}
	cfg, err := g.config(fs.Arg(0), fs.Args()[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "gxbit accelerate: %v\n", err)
		return 2
	}
	stopProfile, err := g.profileCPU()
	if err != nil {
		fmt.Fprintf(os.Stderr, "gxbit accelerate: %v\n", err)
		return 2
	}
	defer stopProfile()
	ctx, cancel := signalContext()
	defer cancel()
	res, rep, err := pipeline.Accelerate(ctx, cfg, accel.Options{Profile: prof, Driver: drv, PTXDir: *ptxDir, MinIterations: *minIters, AlwaysOffload: *always, WetProbes: wetProbes(dryProbesGiven(fs, dry), drv), ArmAfter: *armAfter, DryRunAbove: *dryAbove, LeaveDevice: true, CostsCache: pipeline.CostsCache()})
	if err != nil {
		return loadError(err)
	}
	if *reportPath != "" {
		data, err := json.MarshalIndent(rep, "", "  ")
		if err == nil {
			err = os.WriteFile(*reportPath, append(data, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "gxbit accelerate: writing the report: %v\n", err)
		}
	}
	if g.stats {
		fmt.Fprint(os.Stderr, accel.FormatReport(rep))
	}
	return finish(res, g.stats)
}

// readProfile reads and checks a profile file.
func readProfile(path string) (*profile.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := profile.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}
