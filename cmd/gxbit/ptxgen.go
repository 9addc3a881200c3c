package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
	"github.com/gxbit/gxbit/schedule"
)

// cmdPtxGen is "gxbit ptx gen": print the kernels phase 2 would generate
// for a program's profile, without running the program.
func cmdPtxGen(args []string) int {
	fs := flag.NewFlagSet("gxbit ptx gen", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: gxbit ptx gen --profile FILE [--sysroot DIR] PROG\n\nPrints the PTX kernels of every parallel hot spot in FILE (the 1D kernel and,\nfor a nest with a parallel inner level, the 2D one) as gxbit accelerate would\nlaunch them, or why the nest cannot be offloaded. Nothing is executed.\n\nflags:")
		fs.PrintDefaults()
	}
	profPath := fs.String("profile", "", "the profile written by gxbit profile (required)")
	sysroot := fs.String("sysroot", "", "where the dynamic loader is found")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 || *profPath == "" {
		fs.Usage()
		return 2
	}
	prof, err := readProfile(*profPath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gxbit ptx gen: %v\n", err)
		return 2
	}
	g, err := pipeline.Load(pipeline.Config{Path: fs.Arg(0), Sysroot: *sysroot})
	if err != nil {
		return loadError(err)
	}
	defer g.Close()
	status := 0
	ks := accel.GenerateKernels(g.Lifter, prof)
	if len(ks) == 0 {
		fmt.Fprintln(os.Stderr, "gxbit ptx gen: the profile has no parallel hot spot")
		return 1
	}
	for _, k := range ks {
		if k.Schedule != "" {
			fmt.Printf("%s\n// %s\n", commentLines(k.Schedule), k.ScheduleNote)
		}
		if k.Err != nil {
			fmt.Printf("// hot spot %#x (%s): not offloadable: %v\n\n", k.Entry, k.Function, k.Err)
			status = 1
			continue
		}
		fmt.Printf("// hot spot %#x (%s), loop level at %#x; launch plan: %s\n", k.Entry, k.Function, k.Header, k.Kernel.Plan.Reason)
		if k.Note != "" {
			fmt.Printf("// %s\n", k.Note)
		}
		fmt.Println(k.Kernel.PTX)
		if k2 := k.Kernel2D; k2 != nil {
			fmt.Printf("// hot spot %#x (%s), 2D kernel, launched instead when the probed rows confirm the inner level's trip count and steps (on the simulated GPU only while the outer level has too few iterations to give every host core a block); launch plan: %s\n", k.Entry, k.Function, k2.Plan.Reason)
			fmt.Println(k2.PTX)
		}
		if k3 := k.Kernel3D; k3 != nil {
			fmt.Printf("// hot spot %#x (%s), 3D kernel, launched instead of the 2D one when the probed rows also confirm the innermost level's trip count and steps (on the simulated GPU only while the 2D grid has too few blocks to give every host core one); launch plan: %s\n", k.Entry, k.Function, k3.Plan.Reason)
			fmt.Println(k3.PTX)
		}
		for i, sk := range k.Scheduled {
			fmt.Printf("// hot spot %#x (%s), the schedule's kernel %d of %d: %s; launched in order, in place of the kernels above, when the probe confirms them; launch plan: %s\n", k.Entry, k.Function, i+1, len(k.Scheduled), k.ScheduledWords[i], sk.Plan.Reason)
			fmt.Println(sk.PTX)
			if i < len(k.ScheduledEven) && k.ScheduledEven[i] != nil {
				fmt.Printf("// hot spot %#x (%s), the schedule's kernel %d of %d for even rows (every row the same inner trip count and steps), launched in its place when the probed rows show them\n", k.Entry, k.Function, i+1, len(k.Scheduled))
				fmt.Println(k.ScheduledEven[i].PTX)
			}
		}
	}
	// Nests phase 2 does not offload whose model still gives kernels
	// (a loop that is parallel once distributed or interchanged), but
	// not those it runs as the schedule's kernels (printed above).
	generated := map[uint64]bool{}
	for _, k := range ks {
		generated[k.Entry] = true
	}
	for i := range prof.HotSpots {
		hs := &prof.HotSpots[i]
		if hs.Verdict == profile.VerdictParallel || hs.Verdict == profile.VerdictRejected || generated[uint64(hs.Entry)] {
			continue
		}
		if s := schedule.Build(hs); len(s.Kernels) > 0 {
			fmt.Printf("%s\n// phase 2 offloads nothing of it: no loop is parallel as the x86 code nests them, and kernels generated from the model are not built yet\n\n", commentLines(schedule.Format(s)))
		}
	}
	return status
}

// commentLines turns text into PTX comment lines.
func commentLines(text string) string {
	return "// " + strings.ReplaceAll(strings.TrimRight(text, "\n"), "\n", "\n// ")
}
