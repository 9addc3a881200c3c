package auth

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseTokens(t *testing.T) {
	users, err := ParseTokens(strings.NewReader("# comment\n\n  0123456789abcdef alice submit\nfedcba9876543210 root admin\n"))
	if err != nil {
		t.Fatal(err)
	}
	if u := users[sha256.Sum256([]byte("0123456789abcdef"))]; u != (User{"alice", RoleSubmit}) {
		t.Errorf("alice = %+v", u)
	}
	if u := users[sha256.Sum256([]byte("fedcba9876543210"))]; u != (User{"root", RoleAdmin}) {
		t.Errorf("root = %+v", u)
	}
	for _, tt := range []struct{ in, err string }{
		{"0123456789abcdef alice\n", "line 1: want TOKEN NAME ROLE"},
		{"short alice submit\n", "line 1: the token of alice has 5 characters"},
		{"\n0123456789abcdef alice owner\n", `line 2: role "owner" of alice`},
		{"0123456789abcdef alice submit\n0123456789abcdef bob admin\n", "line 2: bob has the same token as alice"},
	} {
		if _, err := ParseTokens(strings.NewReader(tt.in)); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("ParseTokens(%q) = %v, want %q", tt.in, err, tt.err)
		}
	}
}

// TestReloadKeepsUsersOnBadFile checks that a token file that changes into
// something unparseable keeps the previous users, and that a good change
// replaces them.
func TestReloadKeepsUsersOnBadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(path, []byte("0123456789abcdef alice submit\n"), 0o600)
	tok, err := LoadTokens(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tok.now = func() time.Time { return now }
	os.WriteFile(path, []byte("broken line\n"), 0o600)
	now = now.Add(2 * time.Second)
	if _, ok := tok.Lookup("0123456789abcdef"); !ok {
		t.Error("a broken file dropped alice")
	}
	os.WriteFile(path, []byte("fedcba9876543210 bob submit\nmore-bytes-so-the-size-changes x admin\n"), 0o600)
	now = now.Add(2 * time.Second)
	if _, ok := tok.Lookup("0123456789abcdef"); ok {
		t.Error("alice is still accepted after her line went")
	}
	if u, ok := tok.Lookup("fedcba9876543210"); !ok || u.Name != "bob" {
		t.Errorf("bob = %+v, %v", u, ok)
	}
	if _, err := LoadTokens(filepath.Join(t.TempDir(), "none"), nil); err == nil {
		t.Error("a missing file loaded")
	}
}
