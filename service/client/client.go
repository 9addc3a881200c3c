// Package client implements the gxbit CLI's client subcommands of gxbitd:
// submit, jobs, job, cancel and fetch. Each takes its arguments (after the
// subcommand's name) and an IO, and returns the process exit status; the
// command cmd/gxbit only hooks them into its dispatcher.
package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
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
	conn   Connection
}

func (c *common) register(fs *flag.FlagSet, o IO) {
	def := o.getenv("GXBIT_SERVER")
	if def == "" {
		def = DefaultServer
	}
	fs.StringVar(&c.server, "server", def, "gxbitd gRPC `address` (default $GXBIT_SERVER, else "+DefaultServer+")")
	fs.BoolVar(&c.json, "json", false, "print JSON for scripts")
	fs.StringVar(&c.conn.Token, "token", o.getenv("GXBIT_TOKEN"), "the `token` gxbitd knows you by (default $GXBIT_TOKEN); implies TLS")
	fs.StringVar(&c.conn.CA, "ca", o.getenv("GXBIT_CA"), "PEM `file` of the CA that signed the server's certificate (default $GXBIT_CA, else the system's roots); implies TLS")
	fs.StringVar(&c.conn.Cert, "cert", o.getenv("GXBIT_CERT"), "PEM `file` of a client certificate, for a server that asks for one (default $GXBIT_CERT); implies TLS")
	fs.StringVar(&c.conn.Key, "key", o.getenv("GXBIT_KEY"), "PEM `file` of the client certificate's key (default $GXBIT_KEY)")
	fs.BoolVar(&c.conn.InsecurePlaintext, "insecure-plaintext", false, "talk plaintext even with a token (the token then crosses the network in the clear)")
}

// Connection says how to reach gxbitd: plaintext by default, TLS whenever
// a CA, a client certificate or a token is given (unless InsecurePlaintext).
type Connection struct {
	// Token is sent as "authorization: Bearer TOKEN" on every call.
	Token string
	// CA is a PEM file of the CA to trust for the server's certificate;
	// empty trusts the system's roots.
	CA string
	// Cert and Key are a client certificate and its key, for mutual TLS.
	Cert, Key string
	// InsecurePlaintext forces plaintext.
	InsecurePlaintext bool
}

// TLS reports whether the connection uses TLS.
func (c Connection) TLS() bool {
	return !c.InsecurePlaintext && (c.Token != "" || c.CA != "" || c.Cert != "")
}

// DialOptions returns the gRPC options of the connection.
func (c Connection) DialOptions() ([]grpc.DialOption, error) {
	if (c.Cert == "") != (c.Key == "") {
		return nil, errors.New("--cert and --key go together")
	}
	if c.InsecurePlaintext && (c.CA != "" || c.Cert != "") {
		return nil, errors.New("--insecure-plaintext contradicts --ca and --cert")
	}
	var opts []grpc.DialOption
	if !c.TLS() {
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	} else {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if c.CA != "" {
			pem, err := os.ReadFile(c.CA)
			if err != nil {
				return nil, fmt.Errorf("--ca: %w", err)
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--ca %s holds no PEM certificate", c.CA)
			}
		}
		if c.Cert != "" {
			cert, err := tls.LoadX509KeyPair(c.Cert, c.Key)
			if err != nil {
				return nil, fmt.Errorf("--cert and --key: %w", err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	}
	if c.Token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearerToken{token: c.Token, secure: c.TLS()}))
	}
	return opts, nil
}

// bearerToken sends a token with every call.
type bearerToken struct {
	token  string
	secure bool
}

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (b bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
func (b bearerToken) RequireTransportSecurity() bool { return b.secure }

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
func dial(addr string, c Connection) (api.JobServiceClient, func(), error) {
	opts, err := c.DialOptions()
	if err != nil {
		return nil, nil, err
	}
	conn, err := grpc.NewClient(addr, opts...)
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
	cl, closeConn, err := dial(c.server, c.conn)
	if err != nil {
		fmt.Fprintf(o.Stderr, "gxbit: %v\n", err)
		return ExitError
	}
	defer closeConn()
	return f(ctx, cl)
}
