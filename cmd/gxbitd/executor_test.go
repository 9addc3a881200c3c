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
