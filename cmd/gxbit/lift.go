package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/jit"
	"github.com/gxbit/gxbit/loader"
	"github.com/gxbit/gxbit/pipeline"
)

func cmdLift(args []string) int {
	fs := flag.NewFlagSet("gxbit lift", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: gxbit lift [--func NAME | --addr HEX] [--max-blocks N] PROG\n\nPrints the GVInst VBlocks of a function of PROG (main by default), following its\ndirect branches. Nothing is executed.\n\nflags:")
		fs.PrintDefaults()
	}
	fn := fs.String("func", "", "function to lift, by symbol name (default main, or the entry point)")
	addrText := fs.String("addr", "", "guest address to lift from, in hex")
	maxBlocks := fs.Int("max-blocks", 200, "most VBlocks to print")
	optimize := fs.Bool("O", false, "print the blocks after the optimization passes")
	showJIT := fs.Bool("jit", false, "print each block's machine code as the compiling engine makes it (after the optimization passes, as it runs them)")
	sysroot := fs.String("sysroot", "", "where the dynamic loader is found")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	if *fn != "" && *addrText != "" {
		fmt.Fprintln(os.Stderr, "gxbit lift: give --func or --addr, not both")
		return 2
	}
	g, err := pipeline.Load(pipeline.Config{Path: fs.Arg(0), Sysroot: *sysroot})
	if err != nil {
		return loadError(err)
	}
	defer g.Close()
	start, end, err := liftRange(g.Image, *fn, *addrText)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gxbit lift: %v\n", err)
		return 2
	}
	seen := map[uint64]bool{}
	queue := []uint64{start}
	var blocks []*gvinst.VBlock
	for len(queue) > 0 && len(blocks) < *maxBlocks {
		a := queue[0]
		queue = queue[1:]
		if seen[a] {
			continue
		}
		seen[a] = true
		b, err := g.Lifter.Translate(a)
		if err != nil {
			fmt.Fprintf(os.Stderr, "gxbit lift: %v\n", err)
			return 1
		}
		if *optimize || *showJIT {
			gvinst.Optimize(b)
		}
		blocks = append(blocks, b)
		for _, s := range b.Successors() {
			if s >= start && s < end {
				queue = append(queue, s)
			}
		}
	}
	sort.Slice(blocks, func(i, j int) bool { return blocks[i].Addr < blocks[j].Addr })
	var sb strings.Builder
	for _, b := range blocks {
		gvinst.WriteBlock(&sb, b)
		if *showJIT {
			code, err := jit.Disassemble(b)
			if err != nil {
				fmt.Fprintf(os.Stderr, "gxbit lift: %v\n", err)
				return 1
			}
			sb.WriteString(code)
		}
		sb.WriteByte('\n')
	}
	fmt.Print(sb.String())
	return 0
}

// liftRange finds where to start lifting and the end of the function, so
// that branches out of it are not followed.
func liftRange(im *loader.Image, fn, addrText string) (start, end uint64, err error) {
	if addrText != "" {
		a, err := strconv.ParseUint(strings.TrimPrefix(addrText, "0x"), 16, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("--addr %q: not a hex address", addrText)
		}
		for _, s := range im.Symbols {
			if s.IsFun && a >= s.Addr && a < s.Addr+s.Size {
				return a, s.Addr + s.Size, nil
			}
		}
		return a, a + 4096, nil
	}
	name := fn
	if name == "" {
		name = "main"
	}
	for _, s := range im.Symbols {
		if s.IsFun && s.Name == name {
			return s.Addr, s.Addr + s.Size, nil
		}
	}
	if fn != "" {
		return 0, 0, fmt.Errorf("no function %q in the symbol table", fn)
	}
	e := im.ProgramEntry()
	return e, e + 4096, nil
}
