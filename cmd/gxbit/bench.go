package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"time"

	"github.com/gxbit/gxbit/pipeline"
)

// benchRun is one timed run of the program in one way.
type benchRun struct {
	stdout, stderr []byte
	status         int
	wall           time.Duration
}

func cmdBench(args []string) int {
	fs := flag.NewFlagSet("gxbit bench", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `usage: gxbit bench [-n N] PROG [ARGS...]

Runs PROG natively and under gxbit run, alternately, N times each, checks that
both give the same stdout, stderr and exit status, and reports the median
times and their ratio. Runs are interleaved so that machine noise hits both
sides alike.

flags:`)
		fs.PrintDefaults()
	}
	n := fs.Int("n", 3, "runs of each kind")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() < 1 || *n < 1 {
		fs.Usage()
		return 2
	}
	prog, pargs := fs.Arg(0), fs.Args()[1:]
	path, err := findProgram(prog)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gxbit bench: %v\n", err)
		return 2
	}
	stdin, err := readStdin()
	if err != nil {
		fmt.Fprintf(os.Stderr, "gxbit bench: %v\n", err)
		return 1
	}
	var native, under []benchRun
	for i := 0; i < *n; i++ {
		nr, err := benchNative(path, prog, pargs, stdin)
		if err != nil {
			fmt.Fprintf(os.Stderr, "gxbit bench: native run: %v\n", err)
			return 1
		}
		native = append(native, nr)
		gr, err := benchGxbit(path, prog, pargs, stdin)
		if err != nil {
			return loadError(err)
		}
		under = append(under, gr)
		if !bytes.Equal(nr.stdout, gr.stdout) || !bytes.Equal(nr.stderr, gr.stderr) || nr.status != gr.status {
			fmt.Fprintf(os.Stderr, "gxbit bench: output differs from native (status %d vs %d, stdout %d vs %d bytes)\n", nr.status, gr.status, len(nr.stdout), len(gr.stdout))
			return 1
		}
	}
	tn, tg := median(native), median(under)
	fmt.Printf("%-10s %10s\n", "native", fmtDur(tn))
	fmt.Printf("%-10s %10s  %6.2fx native\n", "gxbit run", fmtDur(tg), tg.Seconds()/tn.Seconds())
	return 0
}

func readStdin() ([]byte, error) {
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		return nil, nil
	}
	var b bytes.Buffer
	_, err := b.ReadFrom(os.Stdin)
	return b.Bytes(), err
}

// benchNative runs the program at path natively, with argv[0] prog.
func benchNative(path, prog string, args []string, stdin []byte) (benchRun, error) {
	cmd := exec.Command(path, args...)
	cmd.Args[0] = prog
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := benchRun{stdout: out.Bytes(), stderr: errb.Bytes(), wall: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.status = ee.ExitCode()
		if r.status < 0 {
			r.status = 128 + 9
		}
	default:
		return r, err
	}
	return r, nil
}

// benchGxbit runs the program at path under gxbit, with argv[0] prog, in
// the working directory the native run has.
func benchGxbit(path, prog string, args []string, stdin []byte) (benchRun, error) {
	var out, errb bytes.Buffer
	cfg := pipeline.Config{Path: path, Args: append([]string{prog}, args...), Env: os.Environ(),
		Stdin: bytes.NewReader(stdin), Stdout: &out, Stderr: &errb, Cwd: pipeline.GuestCwd("/")}
	start := time.Now()
	res, err := pipeline.Run(context.Background(), cfg)
	if err != nil {
		return benchRun{}, err
	}
	if d := res.Diagnosis(); d != "" {
		fmt.Fprintf(os.Stderr, "gxbit: %s\n", d)
	}
	return benchRun{stdout: out.Bytes(), stderr: errb.Bytes(), status: res.ExitStatus, wall: time.Since(start)}, nil
}

func median(rs []benchRun) time.Duration {
	ds := make([]time.Duration, len(rs))
	for i, r := range rs {
		ds[i] = r.wall
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

func fmtDur(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }
