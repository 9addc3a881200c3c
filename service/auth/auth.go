// Package auth checks the bearer tokens of gxbitd's callers against a token
// file and tells the job service who is calling.
//
// The token file has one user per line, `TOKEN NAME ROLE`, where ROLE is
// submit or admin; blank lines and lines starting with # are ignored. Only
// the SHA-256 hashes of the tokens are kept in memory. The file is read
// again when it changes (its size, modification time or inode), at most
// once a second; a file that no longer parses keeps the previous users and
// is reported to the log.
package auth

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Role is what a user may do.
type Role int

// The roles.
const (
	// RoleSubmit may submit jobs and see, watch, fetch and cancel its own.
	RoleSubmit Role = iota + 1
	// RoleAdmin may act on every job.
	RoleAdmin
)

// String returns the role as the token file spells it.
func (r Role) String() string {
	switch r {
	case RoleSubmit:
		return "submit"
	case RoleAdmin:
		return "admin"
	}
	return "unknown"
}

// User is an authenticated caller.
type User struct {
	Name string
	Role Role
}

// MinTokenLength is the shortest token the file may hold.
const MinTokenLength = 16

// ParseTokens reads a token file and returns its users by the SHA-256 hash
// of their token. Errors name the line.
func ParseTokens(r io.Reader) (map[[32]byte]User, error) {
	users := map[[32]byte]User{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: want TOKEN NAME ROLE, got %d fields", n, len(f))
		}
		if len(f[0]) < MinTokenLength {
			return nil, fmt.Errorf("line %d: the token of %s has %d characters; use at least %d (openssl rand -hex 32)", n, f[1], len(f[0]), MinTokenLength)
		}
		var role Role
		switch f[2] {
		case "submit":
			role = RoleSubmit
		case "admin":
			role = RoleAdmin
		default:
			return nil, fmt.Errorf("line %d: role %q of %s is neither submit nor admin", n, f[2], f[1])
		}
		h := sha256.Sum256([]byte(f[0]))
		if u, dup := users[h]; dup {
			return nil, fmt.Errorf("line %d: %s has the same token as %s", n, f[1], u.Name)
		}
		users[h] = User{Name: f[1], Role: role}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return users, nil
}

// fileStamp identifies a version of a file.
type fileStamp struct {
	size  int64
	mtime time.Time
	inode uint64
}

func stampOf(fi os.FileInfo) fileStamp {
	s := fileStamp{size: fi.Size(), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.inode = st.Ino
	}
	return s
}

// Tokens is a token file, read again when it changes. It is safe for
// concurrent use.
type Tokens struct {
	path string
	log  *slog.Logger
	now  func() time.Time

	mu      sync.Mutex
	users   map[[32]byte]User
	stamp   fileStamp
	checked time.Time
}

// recheckEvery is how often, at most, the file is checked for changes.
const recheckEvery = time.Second

// LoadTokens reads the token file at path; it fails if the file cannot be
// read or parsed, or holds no users. log receives reload reports.
func LoadTokens(path string, log *slog.Logger) (*Tokens, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := &Tokens{path: path, log: log, now: time.Now}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	users, err := readTokens(path)
	if err != nil {
		return nil, err
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("token file %s: no users", path)
	}
	t.users, t.stamp, t.checked = users, stampOf(fi), t.now()
	return t, nil
}

func readTokens(path string) (map[[32]byte]User, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	defer f.Close()
	users, err := ParseTokens(f)
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	return users, nil
}

// Lookup returns the user whose token is token.
func (t *Tokens) Lookup(token string) (User, bool) {
	h := sha256.Sum256([]byte(token))
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reloadLocked()
	u, ok := t.users[h]
	return u, ok
}

// reloadLocked reads the file again if it changed since the last check.
func (t *Tokens) reloadLocked() {
	now := t.now()
	if now.Sub(t.checked) < recheckEvery {
		return
	}
	t.checked = now
	fi, err := os.Stat(t.path)
	if err != nil {
		t.log.Error("token file unreadable; keeping the previous users", "file", t.path, "err", err)
		return
	}
	if stampOf(fi) == t.stamp {
		return
	}
	users, err := readTokens(t.path)
	if err != nil {
		t.log.Error("token file changed but does not parse; keeping the previous users", "err", err)
		return
	}
	t.users, t.stamp = users, stampOf(fi)
	t.log.Info("token file reloaded", "file", t.path, "users", len(users))
}

type userKey struct{}

// WithUser returns ctx carrying u as the caller.
func WithUser(ctx context.Context, u User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the caller of a request that passed the token check;
// ok is false when the server checks no tokens.
func UserFrom(ctx context.Context) (u User, ok bool) {
	u, ok = ctx.Value(userKey{}).(User)
	return u, ok
}

// openMethods are the full gRPC method names any caller may use: the health
// service, which load balancers and Kubernetes probe without a token.
func openMethod(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/grpc.health.v1.Health/")
}

// ErrNoToken and ErrBadToken are the reasons a call is unauthenticated.
var (
	ErrNoToken  = errors.New("this server requires a token: pass gxbit --token or set GXBIT_TOKEN")
	ErrBadToken = errors.New("the token is not valid on this server")
)

// authenticate finds the caller of a request.
func (t *Tokens) authenticate(ctx context.Context) (User, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) == 0 {
		return User{}, status.Error(codes.Unauthenticated, ErrNoToken.Error())
	}
	token, ok := strings.CutPrefix(vals[0], "Bearer ")
	if !ok {
		return User{}, status.Error(codes.Unauthenticated, "the authorization header must be \"Bearer TOKEN\"")
	}
	u, ok := t.Lookup(strings.TrimSpace(token))
	if !ok {
		return User{}, status.Error(codes.Unauthenticated, ErrBadToken.Error())
	}
	return u, nil
}

// UnaryInterceptor checks the token of every unary call but the health
// service's, and puts the caller in the call's context.
func (t *Tokens) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if openMethod(info.FullMethod) {
			return handler(ctx, req)
		}
		u, err := t.authenticate(ctx)
		if err != nil {
			return nil, err
		}
		return handler(WithUser(ctx, u), req)
	}
}

// StreamInterceptor does for streaming calls (server reflection among them)
// what UnaryInterceptor does for unary ones.
func (t *Tokens) StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if openMethod(info.FullMethod) {
			return handler(srv, ss)
		}
		u, err := t.authenticate(ss.Context())
		if err != nil {
			return err
		}
		return handler(srv, &userStream{ServerStream: ss, ctx: WithUser(ss.Context(), u)})
	}
}

// userStream is a server stream whose context carries the caller.
type userStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *userStream) Context() context.Context { return s.ctx }
