// Package client implements the gxbit CLI's client subcommands of gxbitd:
// submit, jobs, job, cancel and fetch. Each takes its arguments (after the
// subcommand's name) and an IO, and returns the process exit status; the
// command cmd/gxbit only hooks them into its dispatcher.
package client

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/gxbit/gxbit/api"
)

// Exit statuses of the client subcommands other than a guest's own status.
const (
	// ExitOK is success.
	ExitOK = 0
	// ExitUsage is a command-line error.
	ExitUsage = 2
	// ExitLimit means the job stopped at one of its limits (as timeout(1)).
	ExitLimit = 124
	// ExitError means the server could not be reached, refused the request,
	// or the job failed or was interrupted.
	ExitError = 125
	// ExitCancelled means the job was cancelled (as after SIGINT).
	ExitCancelled = 130
)

// DefaultServer is the server address used when neither --server nor
// $GXBIT_SERVER gives one.
const DefaultServer = "localhost:7070"

// IO is what a subcommand reads and writes.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// StderrTerminal reports whether Stderr is a terminal and its width;
	// the progress display is drawn only then.
	StderrTerminal func() (width int, ok bool)
	// Getenv reads the environment ($GXBIT_SERVER).
	Getenv func(string) string
}

// StdIO returns the process's standard streams and environment.
func StdIO() IO {
	return IO{
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		StderrTerminal: func() (int, bool) {
			fd := int(os.Stderr.Fd())
			if !term.IsTerminal(fd) {
				return 0, false
			}
			w, _, err := term.GetSize(fd)
			if err != nil || w <= 0 {
				w = 80
			}
			return w, true
		},
		Getenv: os.Getenv,
	}
}

func (o IO) terminal() (int, bool) {
	if o.StderrTerminal == nil {
		return 0, false
	}
	return o.StderrTerminal()
}

func (o IO) getenv(k string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(k)
}

// common holds the flags every subcommand has.
type common struct {
	server string
	json   bool
}

func (c *common) register(fs *flag.FlagSet, o IO) {
	def := o.getenv("GXBIT_SERVER")
	if def == "" {
		def = DefaultServer
	}
	fs.StringVar(&c.server, "server", def, "gxbitd gRPC `address` (default $GXBIT_SERVER, else "+DefaultServer+")")
	fs.BoolVar(&c.json, "json", false, "print JSON for scripts")
}

func newFlagSet(name, usage string, o IO) *flag.FlagSet {
	fs := flag.NewFlagSet("gxbit "+name, flag.ContinueOnError)
	fs.SetOutput(o.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(o.Stderr, "usage: gxbit %s %s\n\nflags:\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseInterspersed parses flags that may come before, between or after
// the positional arguments, and returns the positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// usageStatus turns a flag parsing error into an exit status.
func usageStatus(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	return ExitUsage
}

// dial connects to the gxbitd at addr.
func dial(addr string) (api.JobServiceClient, func(), error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to %s: %w", addr, err)
	}
	return api.NewJobServiceClient(conn), func() { conn.Close() }, nil
}

// rpcError prints a failed call's status for people and returns ExitError.
func rpcError(o IO, what string, err error) int {
	if st, ok := status.FromError(err); ok {
		fmt.Fprintf(o.Stderr, "gxbit: %s: %s: %s\n", what, st.Code(), st.Message())
	} else {
		fmt.Fprintf(o.Stderr, "gxbit: %s: %v\n", what, err)
	}
	return ExitError
}

// printJSON writes m as one line of JSON.
func printJSON(w io.Writer, m proto.Message) error {
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		return fmt.Errorf("encoding JSON: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// stateName is a job state as people read it: "succeeded", "limit exceeded".
func stateName(s api.JobState) string {
	n := strings.TrimPrefix(s.String(), "JOB_STATE_")
	return strings.ReplaceAll(strings.ToLower(n), "_", " ")
}

// parseState reads a state as stateName writes it, or its enum name.
func parseState(s string) (api.JobState, error) {
	want := strings.ToUpper(strings.NewReplacer(" ", "_", "-", "_").Replace(strings.TrimSpace(s)))
	if v, ok := api.JobState_value["JOB_STATE_"+want]; ok && v != 0 {
		return api.JobState(v), nil
	}
	if v, ok := api.JobState_value[want]; ok && v != 0 {
		return api.JobState(v), nil
	}
	return 0, fmt.Errorf("unknown job state %q (want queued, running, succeeded, failed, cancelled, limit_exceeded or interrupted)", s)
}

// exitStatus is the exit status that reflects a finished job.
func exitStatus(j *api.Job) int {
	switch j.GetState() {
	case api.JobState_JOB_STATE_SUCCEEDED:
		if j.GetExitSignal() != 0 {
			return 128 + int(j.GetExitSignal())
		}
		return int(j.GetExitCode())
	case api.JobState_JOB_STATE_LIMIT_EXCEEDED:
		return ExitLimit
	case api.JobState_JOB_STATE_CANCELLED:
		return ExitCancelled
	}
	return ExitError
}

// withServer runs f with a client of the server named by c.
func withServer(ctx context.Context, o IO, c common, f func(context.Context, api.JobServiceClient) int) int {
	cl, closeConn, err := dial(c.server)
	if err != nil {
		fmt.Fprintf(o.Stderr, "gxbit: %v\n", err)
		return ExitError
	}
	defer closeConn()
	return f(ctx, cl)
}
