package corpus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// DefaultTimeout bounds one native run in RunNative. Every corpus program
// finishes natively in well under a second with its .args inputs.
const DefaultTimeout = 30 * time.Second

// ErrTimeout reports that a run was stopped because its context ended.
var ErrTimeout = errors.New("run timed out")

// Result is what one run of a program produced.
type Result struct {
	// Stdout and Stderr are everything the program wrote to them.
	Stdout, Stderr []byte
	// ExitCode is the exit status, or -1 when a signal ended the run.
	ExitCode int
	// Signal is the signal that ended the run, or 0.
	Signal syscall.Signal
	// Duration is the wall-clock time of the run.
	Duration time.Duration
}

// Exec runs p with its Spec (arguments, standard input, exactly its
// environment) and returns what it produced. With a launcher, the command
// run is launcher[0] launcher[1:]... p.Path args..., so the same inputs can
// be fed to a program under a translator; without one, p.Path runs
// natively. tempDir is passed as argv[1] when p needs a writable directory.
// A run that outlives ctx is killed and reported with an error wrapping
// ErrTimeout; a run that starts and ends, whatever its status, is no error.
func Exec(ctx context.Context, p Program, tempDir string, launcher ...string) (Result, error) {
	if p.NeedsTempDir && tempDir == "" {
		return Result{}, fmt.Errorf("corpus: %s needs a temporary directory", p)
	}
	argv := append(append(append([]string(nil), launcher...), p.Path), p.Argv(tempDir)...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append([]string{}, p.Env...)
	cmd.Stdin = bytes.NewReader(p.Stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A child that exits leaving its pipes open (a grandchild holds them)
	// releases Wait after this; a loaded machine can take seconds to copy
	// the last output of one that did not.
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err := cmd.Run()
	r := Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Duration: time.Since(start)}
	if ctx.Err() != nil {
		return r, fmt.Errorf("corpus: %s after %v: %w", p, r.Duration.Round(time.Millisecond), ErrTimeout)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
	default:
		return r, fmt.Errorf("corpus: running %s: %w", p, err)
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled():
		r.ExitCode, r.Signal = -1, ws.Signal()
	default:
		r.ExitCode = cmd.ProcessState.ExitCode()
	}
	return r, nil
}

// RunNative runs p natively with DefaultTimeout, in a fresh temporary
// directory when it needs one, and fails the test if the program cannot be
// started or times out.
func RunNative(t testing.TB, p Program) Result {
	t.Helper()
	dir := ""
	if p.NeedsTempDir {
		dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	defer cancel()
	r, err := Exec(ctx, p, dir)
	if err != nil {
		t.Fatalf("native run: %v", err)
	}
	return r
}
