package pipeline

import (
	"bytes"
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// escapeProgram is a guest that tries to reach files: each argument is one
// attempt (op:path[:path]), and it prints one line per attempt with the
// errno it got, or "ok" and what it read.
const escapeProgram = `
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void show(const char *what, int fd) {
	char buf[256];
	if (fd < 0) { printf("%s -> errno %d\n", what, errno); return; }
	ssize_t n = read(fd, buf, sizeof buf - 1);
	if (n < 0) { printf("%s -> read errno %d\n", what, errno); close(fd); return; }
	buf[n] = 0;
	printf("%s -> ok %s\n", what, buf);
	close(fd);
}

int main(int argc, char **argv) {
	for (int i = 1; i < argc; i++) {
		char arg[1024];
		snprintf(arg, sizeof arg, "%s", argv[i]);
		char *op = arg, *a = strchr(op, ':'), *b = NULL;
		if (!a) return 2;
		*a++ = 0;
		if ((b = strchr(a, ':'))) *b++ = 0;
		if (!strcmp(op, "open")) {
			show(argv[i], open(a, O_RDONLY));
		} else if (!strcmp(op, "openat")) {
			int d = open(a, O_RDONLY | O_DIRECTORY);
			if (d < 0) { printf("%s -> dir errno %d\n", argv[i], errno); continue; }
			show(argv[i], openat(d, b, O_RDONLY));
			close(d);
		} else if (!strcmp(op, "chdir")) {
			if (chdir(a) < 0) { printf("%s -> chdir errno %d\n", argv[i], errno); continue; }
			show(argv[i], open(b, O_RDONLY));
			chdir("/");
		} else if (!strcmp(op, "readlink")) {
			char buf[256];
			ssize_t n = readlink(a, buf, sizeof buf - 1);
			if (n < 0) { printf("%s -> errno %d\n", argv[i], errno); continue; }
			buf[n] = 0;
			printf("%s -> ok %s\n", argv[i], buf);
		} else if (!strcmp(op, "list")) {
			DIR *d = opendir(a);
			if (!d) { printf("%s -> errno %d\n", argv[i], errno); continue; }
			printf("%s -> ok", argv[i]);
			struct dirent *e;
			while ((e = readdir(d))) if (e->d_name[0] != '.') printf(" %s", e->d_name);
			printf("\n");
			closedir(d);
		} else {
			return 2;
		}
	}
	return 0;
}
`

// runEscape runs the escape program under gxbit with root and hidden host
// paths, and returns its output, one line per attempt.
func runEscape(t *testing.T, prog, root string, hide []string, attempts []string) []string {
	t.Helper()
	var out, errb bytes.Buffer
	res, err := Run(context.Background(), Config{Path: prog, Args: append([]string{"escape"}, attempts...),
		Root: root, Hide: hide, Writable: []string{}, Stdout: &out, Stderr: &errb})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitStatus != 0 {
		t.Fatalf("escape program: status %d (%s), stderr %s", res.ExitStatus, res.Diagnosis(), errb.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(attempts) {
		t.Fatalf("%d lines for %d attempts:\n%s", len(lines), len(attempts), out.String())
	}
	return lines
}

// TestFilesystemEscape is the filesystem-escape suite of issue 12: a guest
// tries to reach the daemon's data directory, a job's scratch directory
// and the host's /proc through every kind of alias (absolute and relative
// symlinks, "..", a directory descriptor, chdir, systemd's StateDirectory
// layout) and must get ENOENT (2) each time, never the content.
func TestFilesystemEscape(t *testing.T) {
	prog := compileStatic(t, "escape", escapeProgram)
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	mk := func(rel string) { must(os.MkdirAll(filepath.Join(root, rel), 0o755)) }
	file := func(rel, data string) { must(os.WriteFile(filepath.Join(root, rel), []byte(data), 0o644)) }
	link := func(target, rel string) { must(os.Symlink(target, filepath.Join(root, rel))) }
	mk("var/lib/gxbitd-data")
	file("var/lib/gxbitd-data/jobs.db", "SECRET-DB")
	mk("tmp/gxbitd-job-7")
	file("tmp/gxbitd-job-7/k.ptx", "SECRET-PTX")
	mk("var/lib/private/gxbitd")
	file("var/lib/private/gxbitd/state.db", "SECRET-STATE")
	link("private/gxbitd", "var/lib/gxbitd")
	mk("home/u/deep")
	file("home/u/f.txt", "public")
	link("/var/lib/gxbitd-data", "home/u/abs")
	link("../../var/lib/gxbitd-data", "home/u/rel")
	link("..", "home/u/parent")
	link("../../../../../../../..", "home/u/up")
	link("../../../proc", "home/u/deep/procdir")
	hide := []string{filepath.Join(root, "var/lib/gxbitd-data"), filepath.Join(root, "tmp/gxbitd-job-7"), filepath.Join(root, "var/lib/gxbitd")}
	attempts := map[string]string{
		"open:/home/u/f.txt":                                      "ok public",
		"open:/var/lib/gxbitd-data/jobs.db":                       "errno 2",
		"open:/home/u/abs/jobs.db":                                "errno 2",
		"open:/home/u/rel/jobs.db":                                "errno 2",
		"open:/home/u/parent/parent/var/lib/gxbitd-data/jobs.db":  "errno 2",
		"open:/home/u/up/var/lib/gxbitd-data/jobs.db":             "errno 2",
		"open:/home/../var/lib/gxbitd-data/jobs.db":               "errno 2",
		"open:/../../var/lib/gxbitd-data/jobs.db":                 "errno 2",
		"open:/tmp/gxbitd-job-7/k.ptx":                            "errno 2",
		"open:/var/lib/gxbitd/state.db":                           "errno 2",
		"open:/var/lib/private/gxbitd/state.db":                   "errno 2",
		"open:/home/u/deep/procdir/self/mem":                      "errno 2",
		"open:/home/u/deep/procdir/1/environ":                     "errno 2",
		"open:/proc/self/mem":                                     "errno 2",
		"open:/proc/self/root/etc/passwd":                         "errno 2",
		"openat:/home/u:../../var/lib/gxbitd-data/jobs.db":        "errno 2",
		"openat:/home/u:rel/jobs.db":                              "errno 2",
		"openat:/home/u:f.txt":                                    "ok public",
		"openat:/var/lib/gxbitd-data:jobs.db":                     "dir errno 2",
		"chdir:/home/u/deep:../../../var/lib/gxbitd-data/jobs.db": "errno 2",
		"chdir:/home/u:abs/jobs.db":                               "errno 2",
		"chdir:/home/u/abs:jobs.db":                               "chdir errno 2",
		"chdir:/tmp:gxbitd-job-7/k.ptx":                           "errno 2",
		"list:/var/lib":                                           "ok gxbitd private",
		"list:/var/lib/private":                                   "ok",
		"list:/tmp":                                               "ok",
		"readlink:/proc/self/exe":                                 "ok /escape",
		"open:/dev/null":                                          "ok ",
	}
	var args []string
	for a := range attempts {
		args = append(args, a)
	}
	lines := runEscape(t, prog, root, hide, args)
	for i, a := range args {
		got := strings.TrimPrefix(lines[i], a+" -> ")
		want := attempts[a]
		if strings.HasPrefix(a, "list:") {
			// The listing's order is the host's.
			got, want = sortWords(got), sortWords(want)
		}
		if got != want {
			t.Errorf("%s: got %q, want %q", a, got, want)
		}
		if strings.Contains(lines[i], "SECRET") {
			t.Errorf("%s: the guest read a hidden file: %s", a, lines[i])
		}
	}
}

// TestFilesystemEscapeHostProc runs the escape program with the host's
// root: the host's /proc, reached directly or through a relative symlink,
// shows only the guest's own process, and /proc/self/exe names the
// program's own path.
func TestFilesystemEscapeHostProc(t *testing.T) {
	prog := compileStatic(t, "escape", escapeProgram)
	dir := t.TempDir()
	rel, err := filepath.Rel(dir, "/proc")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rel, filepath.Join(dir, "procdir")); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "jobs.db"), []byte("SECRET-DB"), 0o644); err != nil {
		t.Fatal(err)
	}
	relData, _ := filepath.Rel(dir, data)
	if err := os.Symlink(relData, filepath.Join(dir, "datalink")); err != nil {
		t.Fatal(err)
	}
	attempts := map[string]string{
		"open:" + dir + "/procdir/self/mem":     "errno 2",
		"open:" + dir + "/procdir/self/environ": "errno 2",
		"open:" + dir + "/procdir/1/cmdline":    "errno 2",
		"open:/proc/1/cmdline":                  "errno 2",
		"open:/proc/self/maps":                  "errno 2",
		"open:" + dir + "/datalink/jobs.db":     "errno 2",
		"open:" + data + "/jobs.db":             "errno 2",
		"readlink:/proc/self/exe":               "ok " + prog,
		"readlink:" + dir + "/procdir/self/exe": "ok " + prog,
	}
	var args []string
	for a := range attempts {
		args = append(args, a)
	}
	lines := runEscape(t, prog, "/", []string{data}, args)
	for i, a := range args {
		if got := strings.TrimPrefix(lines[i], a+" -> "); got != attempts[a] {
			t.Errorf("%s: got %q, want %q", a, got, attempts[a])
		}
	}
}

func sortWords(s string) string {
	w := strings.Fields(s)
	for i := range w {
		for j := i + 1; j < len(w); j++ {
			if w[j] < w[i] {
				w[i], w[j] = w[j], w[i]
			}
		}
	}
	return strings.Join(w, " ")
}

// withInterp returns a copy of the dynamically linked program bin whose
// PT_INTERP names interp instead.
func withInterp(t *testing.T, bin []byte, interp string) []byte {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			if uint64(len(interp)+1) > p.Filesz {
				t.Fatalf("interpreter path %q longer than the program's", interp)
			}
			out := bytes.Clone(bin)
			field := out[p.Off : p.Off+p.Filesz]
			clear(field)
			copy(field, interp)
			return out
		}
	}
	t.Skip("the program has no PT_INTERP")
	return nil
}

// TestInterpreterSandboxed is issue 12's item 2: the program interpreter
// is read through the guest's file rules. /dev/zero as the interpreter is
// refused at once (it used to exhaust memory), and a symlink inside the
// root cannot lead to a loader outside it or in a hidden directory.
func TestInterpreterSandboxed(t *testing.T) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1)")
	}
	bin, err := os.ReadFile(truePath)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatal(err)
	}
	var hostInterp string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			_, _ = p.ReadAt(b, 0)
			hostInterp = strings.TrimRight(string(b), "\x00")
		}
	}
	if hostInterp == "" {
		t.Skip(truePath + " is statically linked")
	}
	ld, err := os.ReadFile(hostInterp)
	if err != nil {
		t.Skip(err)
	}
	root := t.TempDir()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "lib"), 0o755))
	must(os.MkdirAll(filepath.Join(root, "h"), 0o755))
	must(os.WriteFile(filepath.Join(root, "h/ld.so"), ld, 0o755))
	must(os.Symlink(hostInterp, filepath.Join(root, "lib/abs.so")))
	must(os.Symlink("../../../../../../../../.."+hostInterp, filepath.Join(root, "lib/rel.so")))
	must(os.Symlink("h", filepath.Join(root, "l")))
	must(os.Symlink("/h/ld.so", filepath.Join(root, "lib/h.so")))
	hide := []string{filepath.Join(root, "h")}
	cases := []struct {
		interp, root, want string
		hide               []string
	}{
		{"/dev/zero", "", "not a regular file", nil},
		{"/dev/urandom", "", "not a regular file", nil},
		{"/proc/self/mem", "", "no such file", nil},
		{"/lib/abs.so", root, "no such file", nil},
		{"/lib/rel.so", root, "no such file", nil},
		{"/h/ld.so", root, "no such file", hide},
		{"/l/ld.so", root, "no such file", hide},
		{"/lib/h.so", root, "no such file", hide},
	}
	for _, c := range cases {
		start := time.Now()
		_, err := Load(Config{Path: "true", Binary: withInterp(t, bin, c.interp), Root: c.root, Hide: c.hide})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "interpreter") {
			t.Errorf("interpreter %s (root %q): %v; want an error saying %q", c.interp, c.root, err, c.want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("interpreter %s: refused only after %v", c.interp, d)
		}
	}
	// The same loader, visible, still loads.
	g, err := Load(Config{Path: "true", Binary: withInterp(t, bin, "/lib/h.so"), Root: root})
	if err != nil {
		t.Fatalf("a visible interpreter: %v", err)
	}
	g.Close()
}

// TestDeviceFilesPrograms is issue 12's item 6 with real programs: git
// hash-object opens /dev/null read-write, openssl writes to /dev/stdout,
// and process substitution hands the guest /dev/fd/N of a pipe. Each must
// print what it prints natively. Programs not installed are skipped.
func TestDeviceFilesPrograms(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(file, []byte("hello, devices\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"LC_ALL=C", "HOME=" + dir, "PATH=/usr/bin:/bin"}
	cases := []struct {
		prog string
		args []string
		pipe string // sent through descriptor 3, the args name /dev/fd/3
	}{
		{"git", []string{"hash-object", file}, ""},
		{"openssl", []string{"dgst", "-sha256", "-out", "/dev/stdout", file}, ""},
		{"cat", []string{"/dev/fd/3"}, "through a pipe\n"},
		{"bc", []string{"-q", "/dev/fd/3"}, "6*7\nquit\n"},
		{"cat", []string{"/proc/self/fd/3"}, "by /proc\n"},
	}
	for _, c := range cases {
		bin, err := exec.LookPath(c.prog)
		if err != nil {
			t.Logf("skipping %s: not installed", c.prog)
			continue
		}
		t.Run(c.prog+" "+strings.Join(c.args, " "), func(t *testing.T) {
			pipeWith := func() *os.File {
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.WriteString(c.pipe); err != nil {
					t.Fatal(err)
				}
				w.Close()
				return r
			}
			cmd := exec.Command(bin, c.args...)
			cmd.Args[0] = c.prog
			cmd.Env, cmd.Dir = env, dir
			var nout, nerr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &nout, &nerr
			if c.pipe != "" {
				cmd.ExtraFiles = []*os.File{pipeWith()}
			}
			if err := cmd.Run(); err != nil {
				t.Skipf("native %s fails here: %v: %s", c.prog, err, nerr.String())
			}
			var gout, gerr bytes.Buffer
			cfg := Config{Path: bin, Args: append([]string{c.prog}, c.args...), Env: env,
				Stdout: &gout, Stderr: &gerr, Cwd: dir}
			if c.pipe != "" {
				cfg.Files = map[int]*os.File{3: pipeWith()}
			}
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitStatus != 0 || gout.String() != nout.String() || gerr.String() != nerr.String() {
				t.Errorf("under gxbit: status %d (%s), stdout %q, stderr %q; natively stdout %q, stderr %q",
					res.ExitStatus, res.Diagnosis(), gout.String(), gerr.String(), nout.String(), nerr.String())
			}
		})
	}
}
