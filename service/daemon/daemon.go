// Package daemon wires gxbitd together: its flags, the job store under the
// data directory, the job manager, the gRPC server (JobService, the gRPC
// health service and server reflection), the metrics HTTP server, and the
// graceful shutdown. The command cmd/gxbitd only parses flags, builds the
// Executor and calls this package.
package daemon

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/gxbit/gxbit/api"
	"github.com/gxbit/gxbit/service"
	"github.com/gxbit/gxbit/service/auth"
	"github.com/gxbit/gxbit/service/bytesize"
	"github.com/gxbit/gxbit/service/certfiles"
	"github.com/gxbit/gxbit/service/pgstore"
	"github.com/gxbit/gxbit/service/store"
)

// Defaults of gxbitd's flags.
const (
	DefaultListen        = "localhost:7070"
	DefaultMetricsListen = "localhost:7071"
	dbFile               = "gxbitd.db"
	scratchDir           = "scratch"
)

// ScratchDir is the directory under the data directory that holds one
// private scratch directory per running job (generated kernels and other
// files the translator writes). Guests never see it.
func (c Config) ScratchDir() string { return filepath.Join(c.DataDir, scratchDir) }

// Config is gxbitd's configuration.
type Config struct {
	// Listen is the gRPC address; MetricsListen the HTTP address of
	// /metrics, /healthz and /readyz ("" disables it).
	Listen, MetricsListen string
	// DataDir holds the job database (with the bbolt store) and the jobs'
	// scratch directories.
	DataDir string
	// GuestRoot is the host directory the guests of jobs see as "/"; the
	// data directory and the scratch directories are hidden from them.
	GuestRoot string
	// AllowRoot lets Main run as root; it refuses to otherwise.
	AllowRoot bool
	// TLS names the server's certificate, key and optional client CA; with
	// no certificate the gRPC listener is plaintext.
	TLS certfiles.Files
	// InsecurePlaintext allows a plaintext gRPC listener on an address that
	// is not loopback.
	InsecurePlaintext bool
	// AuthTokens is the token file; "" serves every caller.
	AuthTokens string
	// Store chooses the job store: "" or "bbolt:DIR" for the embedded
	// database (DIR defaults to DataDir), "postgres://…" for a PostgreSQL
	// database that several replicas share.
	Store string
	// Replica names this replica in a shared store; Lease is how long its
	// claims last without renewal.
	Replica string
	Lease   time.Duration
	// ShutdownGrace is how long running jobs may go on after SIGTERM before
	// they are interrupted.
	ShutdownGrace time.Duration
	// Manager configures the job manager.
	Manager service.ManagerConfig
	// LogJSON selects JSON logs instead of text.
	LogJSON bool
	// Build describes the binary for gxbit_build_info.
	Build service.BuildInfo
}

// DefaultDataDir returns the default --data: $STATE_DIRECTORY (set by
// systemd's StateDirectory=), else $XDG_STATE_HOME/gxbitd, else
// $HOME/.local/state/gxbitd, else ./gxbitd-data.
func DefaultDataDir(getenv func(string) string) string {
	if d := getenv("STATE_DIRECTORY"); d != "" {
		// systemd may list several directories, separated by colons.
		return strings.Split(d, ":")[0]
	}
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "gxbitd")
	}
	if d := getenv("HOME"); d != "" {
		return filepath.Join(d, ".local", "state", "gxbitd")
	}
	return "gxbitd-data"
}

// ParseFlags parses gxbitd's command line. Help goes to out; flag.ErrHelp
// is returned for -h.
func ParseFlags(args []string, getenv func(string) string, out io.Writer) (Config, error) {
	fs := flag.NewFlagSet("gxbitd", flag.ContinueOnError)
	fs.SetOutput(out)
	var cfg Config
	maxUpload := bytesize.Value{N: 64 << 20}
	maxStdin := bytesize.Value{N: 16 << 20}
	maxOutput := bytesize.Value{N: 16 << 20}
	defMem := bytesize.Value{N: 1 << 30}
	maxMem := bytesize.Value{N: 8 << 30}
	var gpu string
	fs.StringVar(&cfg.Listen, "listen", DefaultListen, "gRPC `address` (host:port; \":7070\" for all interfaces)")
	fs.StringVar(&cfg.MetricsListen, "metrics-listen", DefaultMetricsListen, "HTTP `address` of /metrics, /healthz and /readyz; empty disables it")
	fs.StringVar(&cfg.DataDir, "data", DefaultDataDir(getenv), "`directory` of the job database and the jobs' scratch directories (created if missing)")
	fs.StringVar(&cfg.GuestRoot, "guest-root", "/", "host `directory` the jobs' programs see as /, read-only; the data directory is hidden from them")
	fs.BoolVar(&cfg.AllowRoot, "allow-root", false, "run even as root (the guests then read the host's files with root's rights)")
	fs.IntVar(&cfg.Manager.Workers, "workers", max(runtime.NumCPU()/2, 1), "jobs executed at once")
	fs.IntVar(&cfg.Manager.MaxQueued, "queue", 256, "jobs that may wait for a worker; more are refused with RESOURCE_EXHAUSTED")
	fs.Var(&maxUpload, "max-upload", "largest binary accepted (`bytes`, units KiB MiB GiB or kB MB GB)")
	fs.Var(&maxStdin, "max-stdin", "largest standard input accepted (`bytes`)")
	fs.Var(&maxOutput, "max-output", "most stdout+stderr a job may write (`bytes`); past it the job is stopped")
	fs.Var(&defMem, "default-memory", "memory limit of jobs that set none (`bytes`)")
	fs.Var(&maxMem, "max-memory", "largest memory limit a job may ask for (`bytes`)")
	fs.Uint64Var(&cfg.Manager.Limits.Default.Instructions, "default-instructions", 50_000_000_000, "instruction limit of jobs that set none")
	fs.Uint64Var(&cfg.Manager.Limits.Max.Instructions, "max-instructions", 1_000_000_000_000, "largest instruction limit a job may ask for")
	fs.DurationVar(&cfg.Manager.Limits.Default.WallTime, "default-timeout", 10*time.Minute, "wall-time limit of jobs that set none")
	fs.DurationVar(&cfg.Manager.Limits.Max.WallTime, "max-timeout", 2*time.Hour, "largest wall-time limit a job may ask for")
	fs.StringVar(&gpu, "gpu", "auto", "GPU backend of jobs that choose none: auto, sim or cuda")
	fs.DurationVar(&cfg.ShutdownGrace, "shutdown-grace", 30*time.Second, "on SIGTERM, how long running jobs may finish before they are interrupted")
	fs.BoolVar(&cfg.LogJSON, "log-json", false, "log JSON lines instead of text")
	fs.StringVar(&cfg.TLS.Cert, "tls-cert", "", "PEM `file` of the server's certificate chain; serves gRPC over TLS (reloaded when it changes)")
	fs.StringVar(&cfg.TLS.Key, "tls-key", "", "PEM `file` of the server's private key")
	fs.StringVar(&cfg.TLS.ClientCA, "client-ca", "", "PEM `file` of the CA that clients' certificates must chain to (mutual TLS)")
	fs.BoolVar(&cfg.InsecurePlaintext, "insecure-plaintext", false, "allow plaintext gRPC on a --listen address that is not loopback")
	fs.StringVar(&cfg.Store, "store", "", "job store: bbolt:DIR (the default, DIR defaulting to --data) or a postgres://user@host/db URL shared by several replicas (or $GXBIT_STORE)")
	fs.StringVar(&cfg.Replica, "replica", "", "this replica's name in a shared store (default: host name and process id)")
	fs.DurationVar(&cfg.Lease, "lease", 15*time.Second, "with a shared store, how long a replica's claim on a job lasts without renewal; a dead replica's jobs are taken over within about 1.3 times this")
	fs.StringVar(&cfg.AuthTokens, "auth-tokens", "", "`file` of lines TOKEN NAME ROLE (submit or admin); every call but health checks then needs a token (re-read when it changes)")
	fs.Usage = func() {
		fmt.Fprintf(out, "usage: gxbitd [flags]\n\ngxbitd runs gxbit jobs submitted over gRPC (gxbit.v1.JobService).\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("gxbitd takes no arguments, got %q", fs.Args())
	}
	g, err := service.ParseGPU(gpu)
	if err != nil {
		return Config{}, fmt.Errorf("--gpu: %w", err)
	}
	cfg.Manager.DefaultGPU = g
	cfg.Manager.MaxBinaryBytes = int64(min(maxUpload.N, 1<<40))
	cfg.Manager.MaxStdinBytes = int64(min(maxStdin.N, 1<<40))
	cfg.Manager.MaxOutputBytes = int64(min(maxOutput.N, 1<<40))
	cfg.Manager.Limits.Default.MemoryBytes = defMem.N
	cfg.Manager.Limits.Max.MemoryBytes = maxMem.N
	if cfg.Listen == "" {
		return Config{}, errors.New("--listen must not be empty")
	}
	if (cfg.TLS.Cert == "") != (cfg.TLS.Key == "") {
		return Config{}, errors.New("--tls-cert and --tls-key go together")
	}
	if cfg.TLS.ClientCA != "" && cfg.TLS.Cert == "" {
		return Config{}, errors.New("--client-ca needs --tls-cert and --tls-key")
	}
	if cfg.TLS.Cert == "" && !cfg.InsecurePlaintext && !isLoopback(cfg.Listen) {
		return Config{}, fmt.Errorf("--listen %s is not a loopback address: without --tls-cert and --tls-key gxbitd serves loopback only; pass --insecure-plaintext to serve plaintext there anyway", cfg.Listen)
	}
	if cfg.DataDir == "" {
		return Config{}, errors.New("--data must not be empty")
	}
	if cfg.GuestRoot == "" {
		return Config{}, errors.New("--guest-root must not be empty")
	}
	if cfg.Store == "" {
		cfg.Store = getenv("GXBIT_STORE")
	}
	if _, _, err := parseStore(cfg.Store); err != nil {
		return Config{}, err
	}
	if cfg.Lease < time.Second || cfg.Lease > 10*time.Minute {
		return Config{}, fmt.Errorf("--lease %v: want between 1s and 10m", cfg.Lease)
	}
	if err := cfg.Manager.Check(); err != nil {
		return Config{}, err
	}
	cfg.Build = ReadBuildInfo()
	return cfg, nil
}

// parseStore splits a --store value into its kind ("bbolt" or "postgres")
// and its location (a directory, or the connection URL).
func parseStore(v string) (kind, where string, err error) {
	switch {
	case v == "":
		return "bbolt", "", nil
	case strings.HasPrefix(v, "bbolt:"):
		return "bbolt", strings.TrimPrefix(v, "bbolt:"), nil
	case strings.HasPrefix(v, "postgres://"), strings.HasPrefix(v, "postgresql://"):
		return "postgres", v, nil
	}
	return "", "", fmt.Errorf("--store %q: want bbolt:DIR or a postgres:// URL", redactURL(v))
}

// redactURL hides a password in a connection URL for messages.
func redactURL(v string) string {
	if u, err := url.Parse(v); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			return u.Redacted()
		}
	}
	return v
}

// openStore opens the job store cfg names.
func openStore(cfg Config) (service.JobStore, error) {
	kind, where, err := parseStore(cfg.Store)
	if err != nil {
		return nil, err
	}
	if kind == "postgres" {
		replica := cfg.Replica
		if replica == "" {
			host, _ := os.Hostname()
			replica = fmt.Sprintf("%s-%d", host, os.Getpid())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return pgstore.Open(ctx, where, replica, cfg.Lease)
	}
	if where == "" {
		where = cfg.DataDir
	}
	if err := os.MkdirAll(where, 0o700); err != nil {
		return nil, fmt.Errorf("store directory: %w", err)
	}
	return store.Open(filepath.Join(where, dbFile))
}

// isLoopback reports whether a host:port address is on loopback only:
// "localhost" or a loopback IP, not an empty host (all interfaces).
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ReadBuildInfo describes the running binary from its embedded build info.
func ReadBuildInfo() service.BuildInfo {
	b := service.BuildInfo{Version: "devel", Revision: "unknown", GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			b.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				b.Revision = s.Value
			}
		}
	}
	return b
}

// GPUBackendReporter is implemented by an Executor that knows, before any
// job runs, which GPU backend it will use ("sim", "cuda" or "" for none);
// the daemon exports it as gxbit_gpu_backend_info from the start.
type GPUBackendReporter interface {
	GPUBackend() string
}

// Daemon is a configured gxbitd with its listeners bound.
type Daemon struct {
	cfg     Config
	log     *slog.Logger
	store   service.JobStore
	manager *service.Manager
	grpc    *grpc.Server
	health  *health.Server
	grpcLis net.Listener
	http    *http.Server
	httpLis net.Listener
}

// New opens the store, recovers it, starts the job manager and binds the
// listeners; Serve then serves until its context is done.
func New(cfg Config, exec service.Executor, logOut io.Writer) (d *Daemon, err error) {
	var log *slog.Logger
	if cfg.LogJSON {
		log = slog.New(slog.NewJSONHandler(logOut, nil))
	} else {
		log = slog.New(slog.NewTextHandler(logOut, nil))
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	// Scratch directories left by a previous process belong to no job now.
	if err := os.RemoveAll(cfg.ScratchDir()); err != nil {
		return nil, fmt.Errorf("scratch directory: %w", err)
	}
	if err := os.Mkdir(cfg.ScratchDir(), 0o700); err != nil {
		return nil, fmt.Errorf("scratch directory: %w", err)
	}
	st, err := openStore(cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			st.Close()
		}
	}()
	opts := []grpc.ServerOption{grpc.MaxRecvMsgSize(8 << 20)}
	if cfg.TLS.Cert != "" {
		certs, err := certfiles.NewReloader(cfg.TLS, log)
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(certs.ServerConfig())))
	} else if !isLoopback(cfg.Listen) {
		log.Warn("serving plaintext gRPC on a non-loopback address (--insecure-plaintext)", "listen", cfg.Listen)
	}
	if cfg.AuthTokens != "" {
		tokens, err := auth.LoadTokens(cfg.AuthTokens, log)
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.ChainUnaryInterceptor(tokens.UnaryInterceptor()), grpc.ChainStreamInterceptor(tokens.StreamInterceptor()))
	}
	reg := prometheus.NewRegistry()
	metrics, err := service.NewMetrics(reg, cfg.Build)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	metrics.SetGPURequested(cfg.Manager.DefaultGPU)
	if r, ok := exec.(GPUBackendReporter); ok {
		metrics.SetGPUBackend(r.GPUBackend())
	}
	grpcLis, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("--listen: %w", err)
	}
	var httpLis net.Listener
	if cfg.MetricsListen != "" {
		httpLis, err = net.Listen("tcp", cfg.MetricsListen)
		if err != nil {
			grpcLis.Close()
			return nil, fmt.Errorf("--metrics-listen: %w", err)
		}
	}
	mcfg := cfg.Manager
	mcfg.Logger = log
	manager, err := service.NewManager(mcfg, st, exec, metrics)
	if err != nil {
		grpcLis.Close()
		if httpLis != nil {
			httpLis.Close()
		}
		return nil, err
	}

	gs := grpc.NewServer(opts...)
	api.RegisterJobServiceServer(gs, service.NewServer(manager))
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(api.JobService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(gs, hs)
	reflection.Register(gs)

	d = &Daemon{cfg: cfg, log: log, store: st, manager: manager, grpc: gs, health: hs, grpcLis: grpcLis, httpLis: httpLis}
	if httpLis != nil {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintln(w, "ok")
		})
		mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
			resp, err := hs.Check(context.Background(), &healthpb.HealthCheckRequest{})
			if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				http.Error(w, "not serving", http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintln(w, "ok")
		})
		d.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	}
	return d, nil
}

// GRPCAddr is the bound gRPC address.
func (d *Daemon) GRPCAddr() string { return d.grpcLis.Addr().String() }

// MetricsAddr is the bound metrics address, or "" when disabled.
func (d *Daemon) MetricsAddr() string {
	if d.httpLis == nil {
		return ""
	}
	return d.httpLis.Addr().String()
}

// Serve serves until ctx is done, then shuts down gracefully: the health
// service turns NOT_SERVING, new submissions are refused, running jobs get
// the shutdown grace period and are then interrupted, open streams end, and
// the store is closed. It returns the first serving error, if any.
func (d *Daemon) Serve(ctx context.Context) error {
	errc := make(chan error, 2)
	go func() {
		if err := d.grpc.Serve(d.grpcLis); err != nil {
			errc <- fmt.Errorf("grpc: %w", err)
		}
	}()
	if d.http != nil {
		go func() {
			if err := d.http.Serve(d.httpLis); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("metrics http: %w", err)
			}
		}()
	}
	kind, _, _ := parseStore(d.cfg.Store)
	d.log.Info("gxbitd serving", "grpc", d.GRPCAddr(), "metrics", d.MetricsAddr(), "data", d.cfg.DataDir, "store", kind, "tls", d.cfg.TLS.Cert != "",
		"workers", d.cfg.Manager.Workers, "version", d.cfg.Build.Version)
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
		d.log.Error("serving failed; shutting down", "err", serveErr)
	}

	d.log.Info("shutting down", "grace", d.cfg.ShutdownGrace)
	d.health.Shutdown()
	grace, cancel := context.WithTimeout(context.Background(), d.cfg.ShutdownGrace)
	d.manager.Shutdown(grace)
	cancel()
	stopped := make(chan struct{})
	go func() {
		d.grpc.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		d.grpc.Stop()
		<-stopped
	}
	if d.http != nil {
		hctx, hcancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := d.http.Shutdown(hctx); err != nil {
			d.log.Warn("metrics server shutdown", "err", err)
		}
		hcancel()
	}
	if err := d.store.Close(); err != nil && serveErr == nil {
		serveErr = err
	}
	d.log.Info("gxbitd stopped")
	return serveErr
}

// ExecutorFactory builds the Executor for a configuration.
type ExecutorFactory func(Config) (service.Executor, error)

// Main is gxbitd's whole program: it parses args, builds the Executor with
// newExec, serves until SIGTERM or SIGINT, and returns the exit status.
func Main(args []string, newExec ExecutorFactory) int {
	cfg, err := ParseFlags(args, os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gxbitd: %v\n", err)
		return 2
	}
	if os.Geteuid() == 0 && !cfg.AllowRoot {
		fmt.Fprintln(os.Stderr, "gxbitd: refusing to run as root: the jobs' programs would read the host's files with root's rights; run gxbitd as an unprivileged user, or pass --allow-root")
		return 1
	}
	exec, err := newExec(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gxbitd: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	d, err := New(cfg, exec, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gxbitd: %v\n", err)
		return 1
	}
	if err := d.Serve(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "gxbitd: %v\n", err)
		return 1
	}
	return 0
}
