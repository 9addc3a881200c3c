package pipeline

import (
	"bytes"
	"context"
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDistroBinaries runs programs of the distribution (dynamically linked
// against its glibc, built by people who never heard of gxbit) on files,
// natively and under gxbit, and requires the same bytes and exit status.
func TestDistroBinaries(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(1))
	random := make([]byte, 100_000)
	rng.Read(random)
	var lines strings.Builder
	for i := 0; i < 5000; i++ {
		lines.WriteString(strings.Repeat("x", rng.Intn(7)))
		lines.WriteString(" ")
		lines.WriteString(string(rune('a' + rng.Intn(26))))
		lines.WriteString(" ")
		lines.WriteString(time.Duration(rng.Int63n(1e12)).String())
		lines.WriteByte('\n')
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rnd := write("random.bin", random)
	txt := write("lines.txt", []byte(lines.String()))
	cases := []struct {
		name  string
		args  []string
		stdin string
	}{
		{"sha256sum", []string{rnd, txt}, ""},
		{"md5sum", []string{rnd}, ""},
		{"wc", []string{txt, rnd}, ""},
		{"sort", []string{"-k3", txt}, ""},
		{"sort", []string{"-n", "-r", txt}, ""},
		{"base64", []string{rnd}, ""},
		{"gzip", []string{"-c", "-9", txt}, ""},
		{"xz", []string{"-c", txt}, ""},
		{"bzip2", []string{"-c", txt}, ""},
		{"uniq", []string{"-c", txt}, ""},
		{"tr", []string{"a-z", "A-Z"}, lines.String()},
		{"od", []string{"-A", "x", "-t", "x1z", rnd}, ""},
		{"grep", []string{"-c", "x a", txt}, ""},
		{"sed", []string{"s/[0-9]/#/g", txt}, ""},
		{"cut", []string{"-d", " ", "-f", "2", txt}, ""},
		{"ls", []string{"-la", dir}, ""},
		{"cat", []string{"/nonexistent"}, ""}, // an error message and status 1
	}
	for _, c := range cases {
		bin, err := exec.LookPath(c.name)
		if err != nil {
			t.Logf("skipping %s: not installed", c.name)
			continue
		}
		t.Run(c.name+" "+strings.Join(c.args, " "), func(t *testing.T) {
			cmd := exec.Command(bin, c.args...)
			cmd.Stdin = strings.NewReader(c.stdin)
			cmd.Env = []string{"LC_ALL=C"}
			var nout, nerr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &nout, &nerr
			nstatus := 0
			if err := cmd.Run(); err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatal(err)
				}
				nstatus = ee.ExitCode()
			}
			for _, engine := range testEngines() {
				var gout, gerr bytes.Buffer
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				res, err := Run(ctx, Config{Path: bin, Args: append([]string{bin}, c.args...), Env: []string{"LC_ALL=C"},
					Stdin: strings.NewReader(c.stdin), Stdout: &gout, Stderr: &gerr, Engine: engine})
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if d := res.Diagnosis(); d != "" {
					t.Fatalf("%s: gxbit: %s", engine, d)
				}
				if !bytes.Equal(nout.Bytes(), gout.Bytes()) {
					t.Errorf("%s: stdout differs: native %d bytes, gxbit %d bytes", engine, nout.Len(), gout.Len())
				}
				if nerr.String() != gerr.String() {
					t.Errorf("%s: stderr differs:\nnative: %q\ngxbit:  %q", engine, nerr.String(), gerr.String())
				}
				if res.ExitStatus != nstatus {
					t.Errorf("%s: exit status %d, native %d", engine, res.ExitStatus, nstatus)
				}
			}
		})
	}
}
