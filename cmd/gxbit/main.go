// Command gxbit runs x86-64 Linux programs under the GVInst translator,
// profiles them for parallel loop nests (phase 1), offloads those nests to a
// GPU (phase 2), shows the lifted GVInst and the generated PTX, runs PTX
// kernels, and talks to the gxbitd daemon.
//
// Usage:
//
//	gxbit run [flags] PROG [ARGS...]
//	gxbit lift [flags] PROG
//	gxbit profile [-o FILE] [--report FILE.json] PROG [ARGS...]
//	gxbit profile --print FILE
//	gxbit accelerate --profile FILE [--gpu sim|cuda|auto] [--ptx-dir DIR] [--report FILE.json] PROG [ARGS...]
//	gxbit ptx gen --profile FILE PROG
//	gxbit ptx check FILE.ptx
//	gxbit ptx run FILE.ptx --kernel NAME --grid X[,Y[,Z]] --block X[,Y[,Z]] [flags] ARG...
//	gxbit bench [-n N] PROG [ARGS...]
//	gxbit submit --server ADDR [--token T] [--ca FILE] [--mode MODE] [--gpu GPU] PROG [ARGS...]
//	gxbit jobs|job|cancel|fetch --server ADDR [--token T] [--ca FILE] ...
//	gxbit help
//
// Run "gxbit help COMMAND" for a command's flags.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"sort"
)

// command is one gxbit subcommand: it parses its own flags and returns the
// process exit status.
type command struct {
	run     func(args []string) int
	summary string
}

func commands() map[string]command {
	return map[string]command{
		"run":        {cmdRun, "run a program under the translator"},
		"bench":      {cmdBench, "time a program natively and under gxbit, side by side"},
		"lift":       {cmdLift, "print the GVInst VBlocks of a program's code"},
		"profile":    {cmdProfile, "phase 1: run a program and find its parallel loop nests"},
		"accelerate": {cmdAccelerate, "phase 2: run a program with its parallel loop nests on a GPU"},
		"ptx":        {cmdPtx, "check a PTX module, or run one of its kernels on a GPU"},
		"submit":     {cmdSubmit, "submit a program to a gxbitd daemon and follow the job"},
		"jobs":       {cmdJobs, "list a daemon's jobs"},
		"job":        {cmdJob, "show one job of a daemon"},
		"cancel":     {cmdCancel, "cancel jobs on a daemon"},
		"fetch":      {cmdFetch, "fetch a job's artifacts (report, profile, PTX)"},
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: gxbit COMMAND [flags] [args]\n\ncommands:")
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-12s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(os.Stderr, "\nRun \"gxbit COMMAND -h\" for a command's flags.")
}

// gcPercent is the garbage collector's target (GOGC) unless the
// environment sets one. Translating a program allocates many short-lived
// objects (decoded instructions, VBlocks, code buffers) while the live heap
// stays small, so collecting less often saves time: python3's start-up
// under the jit went from 1.9 to 1.6 CPU seconds with 400, its peak RSS
// from 224 to 256 MB.
const gcPercent = 400

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	name := os.Args[1]
	if name == holdDeviceCommand {
		os.Exit(holdUntilParentExits())
	}
	if name == "help" || name == "-h" || name == "--help" {
		if len(os.Args) > 2 {
			if c, ok := commands()[os.Args[2]]; ok {
				os.Exit(c.run([]string{"-h"}))
			}
		}
		usage()
		os.Exit(0)
	}
	c, ok := commands()[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "gxbit: unknown command %q\n", name)
		usage()
		os.Exit(2)
	}
	code := c.run(os.Args[2:])
	handOffDeviceTeardown()
	os.Exit(code)
}
