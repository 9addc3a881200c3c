package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gxbit/gxbit/service/client"
	"github.com/gxbit/gxbit/service/daemon"
)

// startReal starts gxbitd with the real executor on loopback ports and
// returns its gRPC and metrics addresses and a stop function.
func startReal(t *testing.T, dataDir string) (grpcAddr, metricsAddr string, stop func()) {
	t.Helper()
	cfg, err := daemon.ParseFlags([]string{"--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--data", dataDir, "--workers", "2"}, os.Getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := newExecutor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(cfg, ex, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx) }()
	return d.GRPCAddr(), d.MetricsAddr(), func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("the daemon did not stop")
		}
	}
}

func cli(ctx context.Context, cmd func(context.Context, []string, client.IO) int, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	o := client.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
		StderrTerminal: func() (int, bool) { return 0, false }, Getenv: func(string) string { return "" }}
	rc := cmd(ctx, args, o)
	return rc, out.String(), errOut.String()
}

// TestDaemonRealPipeline submits a real program in every mode and checks
// output, exit status, artifacts and metrics, then restarts the daemon on
// the same data directory and finds the finished jobs.
func TestDaemonRealPipeline(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found")
	}
	bin := filepath.Join(t.TempDir(), "matmul")
	if out, err := exec.Command(gcc, "-O2", "-static", "-o", bin, "../../examples/matmul.c").CombinedOutput(); err != nil {
		t.Skipf("gcc -static: %v\n%s", err, out)
	}
	native, err := exec.Command(bin, "48").Output()
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	addr, metrics, stop := startReal(t, data)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, mode := range []string{"run", "profile", "both"} {
		rc, out, errOut := cli(ctx, client.Submit, "--server", addr, "--mode", mode, "--gpu", "sim", bin, "48")
		if rc != 0 || out != string(native) {
			t.Fatalf("submit --mode %s: status %d, stdout %q (native %q), stderr:\n%s", mode, rc, out, native, errOut)
		}
	}
	rc, list, _ := cli(ctx, client.Jobs, "--server", addr)
	if rc != 0 || strings.Count(list, "succeeded") != 3 {
		t.Fatalf("jobs: status %d\n%s", rc, list)
	}
	// The last job (mode both) has a profile, kernels and a report.
	var last string
	for _, line := range strings.Split(list, "\n") {
		if strings.Contains(line, " both ") {
			last = strings.Fields(line)[0]
		}
	}
	dir := t.TempDir()
	if rc, _, errOut := cli(ctx, client.Fetch, "--server", addr, "--dir", dir, last); rc != 0 {
		t.Fatalf("fetch: %d %s", rc, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	var ptx, prof, report bool
	for _, f := range files {
		switch {
		case strings.HasSuffix(f, ".ptx"):
			ptx = true
		case strings.HasSuffix(f, "profile.json"):
			prof = true
		case strings.HasSuffix(f, "report.json"):
			report = true
		}
	}
	if !ptx || !prof || !report {
		t.Errorf("artifacts of the both job: %v", files)
	}
	resp, err := http.Get("http://" + metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`gxbit_jobs_total{mode="both",outcome="succeeded"} 1`, `gxbit_kernel_launches_total{backend="sim"}`, "gxbit_hot_spots_offloaded_total"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	stop()
	addr, _, stop = startReal(t, data)
	defer stop()
	if rc, list, _ := cli(ctx, client.Jobs, "--server", addr); rc != 0 || strings.Count(list, "succeeded") != 3 {
		t.Errorf("after a restart: status %d\n%s", rc, list)
	}
}

// TestLimitedJobsCountInstructions is issue 12 item 9's regression test: a
// job stopped by its instruction limit, or cancelled, still adds the
// instructions it executed to gxbit_guest_instructions_total.
func TestLimitedJobsCountInstructions(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found")
	}
	bin := filepath.Join(t.TempDir(), "matmul")
	if out, err := exec.Command(gcc, "-O2", "-static", "-o", bin, "../../examples/matmul.c").CombinedOutput(); err != nil {
		t.Skipf("gcc -static: %v\n%s", err, out)
	}
	addr, metrics, stop := startReal(t, t.TempDir())
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const limit = 300_000
	for _, mode := range []string{"run", "both"} {
		rc, _, errOut := cli(ctx, client.Submit, "--server", addr, "--mode", mode, "--gpu", "sim", "--instructions", fmt.Sprint(limit), bin, "200")
		if rc != client.ExitLimit {
			t.Fatalf("--mode %s: status %d, want %d (instruction limit); stderr:\n%s", mode, rc, client.ExitLimit, errOut)
		}
	}
	// A cancelled job: a short wall-time limit on a long run.
	if rc, _, errOut := cli(ctx, client.Submit, "--server", addr, "--timeout", "300ms", bin, "2000"); rc != client.ExitLimit {
		t.Fatalf("--timeout: status %d; stderr:\n%s", rc, errOut)
	}
	resp, err := http.Get("http://" + metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	value := func(series string) float64 {
		for _, line := range strings.Split(string(body), "\n") {
			if v, ok := strings.CutPrefix(line, series+" "); ok {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				return f
			}
		}
		t.Fatalf("metrics lack %s:\n%s", series, body)
		return 0
	}
	// The run job stopped at exactly the limit; the timed-out one ran some
	// instructions before its deadline.
	if got := value(`gxbit_guest_instructions_total{mode="run"}`); got <= limit {
		t.Errorf(`gxbit_guest_instructions_total{mode="run"} = %v, want more than %d (the limited job plus the timed-out one)`, got, limit)
	}
	if got := value(`gxbit_guest_instructions_total{mode="both"}`); got < limit {
		t.Errorf(`gxbit_guest_instructions_total{mode="both"} = %v, want at least %d`, got, limit)
	}
}

// buildC compiles a C program statically, or skips the test without gcc.
func buildC(t *testing.T, name, src string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found")
	}
	dir := t.TempDir()
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, name)
	if out, err := exec.Command(gcc, "-O1", "-static", "-o", bin, c).CombinedOutput(); err != nil {
		t.Skipf("gcc -static: %v\n%s", err, out)
	}
	return bin
}

const proberC = `#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
	for (int i = 1; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY);
		printf("%s: %s\n", argv[i], fd >= 0 ? "opened" : strerror(errno));
	}
	return 0;
}
`

const spinnerC = `int main(void) { volatile unsigned long i = 0; for (;;) i++; }
`

// TestJobsCannotSeeEachOther is issue 12 item 4's regression test: while
// one job runs, with its private scratch directory (mode 0700) under the
// data directory, a second job's guest finds neither that directory, nor
// the kernel files in it, nor the data directory and its database.
func TestJobsCannotSeeEachOther(t *testing.T) {
	prober := buildC(t, "prober", proberC)
	spinner := buildC(t, "spinner", spinnerC)
	data := t.TempDir()
	addr, _, stop := startReal(t, data)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	rc, out, errOut := cli(ctx, client.Submit, "--server", addr, "--detach", "--timeout", "50s", spinner)
	if rc != 0 {
		t.Fatalf("submit the spinner: %d %s", rc, errOut)
	}
	spinning := strings.TrimSpace(out)
	defer cli(context.Background(), client.Cancel, "--server", addr, spinning)
	var scratch string
	for deadline := time.Now().Add(20 * time.Second); scratch == ""; {
		dirs, _ := filepath.Glob(filepath.Join(data, "scratch", "job-"+spinning+"-*"))
		if len(dirs) == 1 {
			scratch = dirs[0]
		} else if time.Now().After(deadline) {
			t.Fatalf("no scratch directory of job %s appeared under %s", spinning, data)
		}
		time.Sleep(20 * time.Millisecond)
	}
	fi, err := os.Stat(scratch)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("scratch directory %s: %v, mode %v; want 0700", scratch, err, fi.Mode())
	}
	// A kernel of the running job, as phase 2 writes it.
	kernel := filepath.Join(scratch, "hot_401000.ptx")
	if err := os.WriteFile(kernel, []byte("// a kernel\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// An alias of the data directory outside it hides nothing.
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(data, alias); err != nil {
		t.Fatal(err)
	}
	paths := []string{data, filepath.Join(data, "gxbitd.db"), filepath.Join(data, "scratch"), scratch, kernel,
		filepath.Join(alias, "gxbitd.db"), filepath.Join(alias, "scratch", filepath.Base(scratch), filepath.Base(kernel)), "/"}
	rc, out, errOut = cli(ctx, client.Submit, append([]string{"--server", addr, prober}, paths...)...)
	if rc != 0 {
		t.Fatalf("prober: status %d, stderr %s", rc, errOut)
	}
	var want strings.Builder
	for _, p := range paths[:len(paths)-1] {
		fmt.Fprintf(&want, "%s: No such file or directory\n", p)
	}
	want.WriteString("/: opened\n")
	if out != want.String() {
		t.Errorf("the prober saw:\n%s\nwant:\n%s", out, want.String())
	}
	// The spinner was still running, so its scratch directory existed
	// throughout; it goes with the job.
	if _, err := os.Stat(kernel); err != nil {
		t.Fatalf("the spinner's kernel is gone before the probe ended: %v", err)
	}
	if rc, _, errOut := cli(ctx, client.Cancel, "--server", addr, spinning); rc != 0 {
		t.Fatalf("cancel: %d %s", rc, errOut)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(scratch); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the scratch directory %s outlived its job", scratch)
		}
	}
}
