package main

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestFindProgramOnPath is issue 12's item 10: a program named without a
// slash is found on $PATH as a shell finds it, by every command that runs
// a program (they all build their configuration through guestFlags.config).
func TestFindProgramOnPath(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "myprog")
	if err := os.WriteFile(prog, []byte("\x7fELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notexec"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", "/nonexistent:"+dir)
	if got, err := findProgram("myprog"); err != nil || got != prog {
		t.Errorf("findProgram(myprog) = %q, %v; want %q", got, err, prog)
	}
	for _, name := range []string{"./myprog", "sub/myprog", "/abs/myprog"} {
		if got, err := findProgram(name); err != nil || got != name {
			t.Errorf("findProgram(%s) = %q, %v: a name with a slash is a path", name, got, err)
		}
	}
	for _, name := range []string{"notexec", "missing"} {
		if _, err := findProgram(name); !errors.Is(err, exec.ErrNotFound) {
			t.Errorf("findProgram(%s) = %v, want exec.ErrNotFound", name, err)
		}
	}
	var g guestFlags
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	g.register(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	cfg, err := g.config("myprog", []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Path != prog || len(cfg.Args) != 2 || cfg.Args[0] != "myprog" {
		t.Errorf("config: path %q, argv %q; want the path found and argv[0] as typed", cfg.Path, cfg.Args)
	}
	if _, err := g.config("missing", nil); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("config of a missing program: %v", err)
	}
}
