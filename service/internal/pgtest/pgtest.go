// Package pgtest starts a throwaway PostgreSQL server for tests: initdb and
// pg_ctl in a temporary directory, listening on a free loopback port, with
// fsync off. PostgreSQL refuses to run as root, so under root (as in CI)
// the server runs as the "postgres" user (or "nobody") through runuser, in
// a directory that user owns.
//
// The server binaries are found through $GXBIT_PG_BINDIR, then Debian's
// /usr/lib/postgresql/VERSION/bin, then PATH.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// Server is a running throwaway PostgreSQL server.
type Server struct {
	bindir string
	dir    string
	data   string
	port   int
	runAs  string // the user the server runs as, when gxbit runs as root
	dbs    atomic.Int64
}

// bindir finds the directory of initdb and pg_ctl.
func bindir() (string, error) {
	if d := os.Getenv("GXBIT_PG_BINDIR"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	p, err := exec.LookPath("initdb")
	if err != nil {
		return "", errors.New("PostgreSQL's initdb not found (apt-get install postgresql, or set GXBIT_PG_BINDIR)")
	}
	return filepath.Dir(p), nil
}

// Start initialises and starts a server with fsync off, for tests. The
// error says why when the server cannot be started at all (no PostgreSQL
// installed, say).
func Start() (*Server, error) { return start(false) }

// StartDurable starts a server that commits to disk as a production one
// does (fsync and synchronous commit on), for benchmarks.
func StartDurable() (*Server, error) { return start(true) }

func start(durable bool) (*Server, error) {
	bin, err := bindir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "gxbit-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{bindir: bin, dir: dir, data: filepath.Join(dir, "data")}
	if os.Geteuid() == 0 {
		for _, name := range []string{"postgres", "nobody"} {
			u, err := user.Lookup(name)
			if err != nil {
				continue
			}
			uid, _ := strconv.Atoi(u.Uid)
			gid, _ := strconv.Atoi(u.Gid)
			if err := os.Chown(dir, uid, gid); err != nil {
				os.RemoveAll(dir)
				return nil, err
			}
			s.runAs = name
			break
		}
		if s.runAs == "" {
			os.RemoveAll(dir)
			return nil, errors.New("running as root and there is neither a postgres nor a nobody user to run PostgreSQL as")
		}
	}
	if out, err := s.command("initdb", "-D", s.data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=200", s.port, dir)
	if !durable {
		opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	}
	if out, err := s.command("pg_ctl", "-D", s.data, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "-o", opts, "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return s, nil
}

// command runs a PostgreSQL program, as s.runAs when set.
func (s *Server) command(name string, args ...string) *exec.Cmd {
	prog := filepath.Join(s.bindir, name)
	var cmd *exec.Cmd
	if s.runAs != "" {
		cmd = exec.Command("runuser", append([]string{"-u", s.runAs, "--", prog}, args...)...)
	} else {
		cmd = exec.Command(prog, args...)
	}
	cmd.Dir = s.dir
	return cmd
}

// DSN is the connection string of database db.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// NewDatabase creates an empty database and returns its connection string.
func (s *Server) NewDatabase(ctx context.Context) (string, error) {
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("gxbit_test_%d", s.dbs.Add(1))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	return s.DSN(name), nil
}

// Stop stops the server and removes its files.
func (s *Server) Stop() error {
	out, err := s.command("pg_ctl", "-D", s.data, "-m", "immediate", "-w", "stop").CombinedOutput()
	os.RemoveAll(s.dir)
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v\n%s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
