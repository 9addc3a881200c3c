package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
	"github.com/gxbit/gxbit/schedule"
)

// cmdProfile implements "gxbit profile": run a program with phase 1's
// collector and write its profile, or print a profile file.
func cmdProfile(args []string) int {
	fs := flag.NewFlagSet("gxbit profile", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `usage: gxbit profile [-o FILE] [--report FILE.json] [flags] PROG [ARGS...]
       gxbit profile --print FILE

Runs PROG under the translator with the phase 1 collector (its stdin, stdout
and stderr pass through; gxbit exits with its status), finds its loop nests
and writes the profile: hot spots, access functions, parallel levels.

flags:`)
		fs.PrintDefaults()
	}
	var g guestFlags
	g.register(fs)
	out := fs.String("o", "", "profile file to write (default: PROG's base name + .profile.json)")
	report := fs.String("report", "", "also write the JSON loop report (every loop nest and its verdict) here")
	text := fs.String("text", "", "also write the human-readable report here")
	print := fs.String("print", "", "print the profile FILE as text and exit")
	samples := fs.Int("samples", 0, "samples kept per access site (0: the default)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *print != "" {
		return printProfile(*print)
	}
	if fs.NArg() < 1 {
		fs.Usage()
		return 2
	}
	prog := fs.Arg(0)
	cfg, err := g.config(prog, fs.Args()[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "gxbit profile: %v\n", err)
		return 2
	}
	if *out == "" {
		*out = filepath.Base(prog) + ".profile.json"
	}
	stopProfile, err := g.profileCPU()
	if err != nil {
		fmt.Fprintf(os.Stderr, "gxbit profile: %v\n", err)
		return 2
	}
	defer stopProfile()
	ctx, stop := signalContext()
	defer stop()
	res, f, err := pipeline.Profile(ctx, cfg, profile.Options{Collect: profile.CollectOptions{MaxSamplesPerSite: *samples}})
	if err != nil {
		return loadError(err)
	}
	if err := writeFile(*out, func(w *os.File) error { return profile.Write(w, f) }); err != nil {
		fmt.Fprintf(os.Stderr, "gxbit profile: %v\n", err)
		return 1
	}
	if *report != "" {
		err := writeFile(*report, func(w *os.File) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(profile.Report{Loops: f.Loops})
		})
		if err != nil {
			fmt.Fprintf(os.Stderr, "gxbit profile: %v\n", err)
			return 1
		}
	}
	if *text != "" {
		if err := writeFile(*text, func(w *os.File) error { return profile.WriteText(w, f) }); err != nil {
			fmt.Fprintf(os.Stderr, "gxbit profile: %v\n", err)
			return 1
		}
	}
	return finish(res, g.stats)
}

// writeFile creates path and writes it with fn.
func writeFile(path string, fn func(*os.File) error) error {
	w, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fn(w); err != nil {
		w.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return w.Close()
}

// printProfile prints a profile file as text.
func printProfile(path string) int {
	r, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gxbit profile: %v\n", err)
		return 1
	}
	defer r.Close()
	f, err := profile.Read(r)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gxbit profile: %s: %v\n", path, err)
		return 1
	}
	if err := profile.WriteText(os.Stdout, f); err != nil {
		fmt.Fprintf(os.Stderr, "gxbit profile: %v\n", err)
		return 1
	}
	fmt.Println("\nschedules (phase 2's plan for each hot spot with a parallel loop):")
	for i := range f.HotSpots {
		hs := &f.HotSpots[i]
		if hs.Verdict == profile.VerdictRejected {
			continue
		}
		s := schedule.Build(hs)
		if len(s.Kernels) == 0 {
			continue
		}
		fmt.Printf("\nhot spot %d: %s", hs.ID, schedule.Format(s))
	}
	return 0
}
