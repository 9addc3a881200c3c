// Package certfiles builds gxbitd's TLS configuration from PEM files (a
// certificate chain, its key, and optionally the CA that client
// certificates must chain to) and reloads them when they change, so that
// a renewed certificate (cert-manager writes new files into the mounted
// Secret) takes effect without a restart.
package certfiles

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"
)

// Files names the PEM files of a server's TLS configuration.
type Files struct {
	// Cert and Key are the server's certificate chain and private key.
	Cert, Key string
	// ClientCA, when not empty, holds the CA certificates a client's
	// certificate must chain to; clients without one are refused (mutual
	// TLS).
	ClientCA string
}

// recheckEvery is how often, at most, the files are checked for changes.
const recheckEvery = time.Second

// Reloader serves the current TLS configuration of its files. It is safe
// for concurrent use.
type Reloader struct {
	files Files
	log   *slog.Logger

	mu      sync.Mutex
	cfg     *tls.Config
	stamp   []stamp
	checked time.Time
}

type stamp struct {
	size  int64
	mtime time.Time
	inode uint64
}

// stamps identifies the current version of every file.
func (f Files) stamps() ([]stamp, error) {
	var out []stamp
	for _, p := range []string{f.Cert, f.Key, f.ClientCA} {
		if p == "" {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		s := stamp{size: fi.Size(), mtime: fi.ModTime()}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			s.inode = st.Ino
		}
		out = append(out, s)
	}
	return out, nil
}

// load reads the files into a configuration.
func (f Files) load() (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %s and key %s: %w", f.Cert, f.Key, err)
	}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		// gRPC runs over HTTP/2, which it negotiates with ALPN.
		NextProtos: []string{"h2"},
	}
	if f.ClientCA != "" {
		pem, err := os.ReadFile(f.ClientCA)
		if err != nil {
			return nil, fmt.Errorf("client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("client CA %s holds no PEM certificate", f.ClientCA)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// NewReloader loads the files; it fails if they do not make a usable
// configuration.
func NewReloader(files Files, log *slog.Logger) (*Reloader, error) {
	if files.Cert == "" || files.Key == "" {
		return nil, errors.New("TLS needs both a certificate and a key")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st, err := files.stamps()
	if err != nil {
		return nil, fmt.Errorf("TLS files: %w", err)
	}
	cfg, err := files.load()
	if err != nil {
		return nil, err
	}
	return &Reloader{files: files, log: log, cfg: cfg, stamp: st, checked: time.Now()}, nil
}

// Current returns the configuration of the files as they are now, read
// again if they changed; files that changed into something unusable keep
// the previous configuration, and the failure is logged.
func (r *Reloader) Current() *tls.Config {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.checked) < recheckEvery {
		return r.cfg
	}
	r.checked = time.Now()
	st, err := r.files.stamps()
	if err != nil {
		r.log.Error("TLS files unreadable; keeping the previous certificate", "err", err)
		return r.cfg
	}
	if equal(st, r.stamp) {
		return r.cfg
	}
	cfg, err := r.files.load()
	if err != nil {
		// A renewal may write the certificate and the key one after the
		// other: try again at the next check.
		r.log.Error("TLS files changed but do not load; keeping the previous certificate", "err", err)
		return r.cfg
	}
	r.cfg, r.stamp = cfg, st
	r.log.Info("TLS files reloaded", "cert", r.files.Cert)
	return r.cfg
}

func equal(a, b []stamp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ServerConfig returns a TLS configuration for a server that takes, for
// each connection, the current configuration of r.
func (r *Reloader) ServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2"},
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return r.Current(), nil
		},
	}
}
