package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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
