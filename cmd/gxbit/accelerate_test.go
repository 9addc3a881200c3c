package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// captureStdout runs f with os.Stdout going to a pipe and returns what it
// wrote.
func captureStdout(t *testing.T, f func() int) (string, int) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	code := f()
	os.Stdout = old
	w.Close()
	return <-done, code
}

// TestAccelerateCLI profiles a program with gxbit profile, accelerates it
// with gxbit accelerate on the simulator with another input, and prints
// its kernels with gxbit ptx gen.
func TestAccelerateCLI(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found")
	}
	dir := t.TempDir()
	prog := filepath.Join(dir, "alias")
	if b, err := exec.Command(gcc, "-O2", "-static", "-fno-tree-vectorize", "-o", prog, "../../accel/testdata/alias.c").CombinedOutput(); err != nil {
		t.Skipf("gcc: %v\n%s", err, b)
	}
	prof, pprof := filepath.Join(dir, "alias.profile.json"), filepath.Join(dir, "profile.pprof")
	if _, code := captureStdout(t, func() int { return cmdProfile([]string{"-o", prof, "-cpuprofile", pprof, prog, "2000", "0", "2000"}) }); code != 0 {
		t.Fatalf("gxbit profile: status %d", code)
	}
	if st, err := os.Stat(pprof); err != nil || st.Size() == 0 {
		t.Errorf("gxbit profile -cpuprofile wrote no profile: %v", err)
	}
	native, err := exec.Command(prog, "5000", "3", "6000").Output()
	if err != nil {
		t.Fatal(err)
	}
	ptxDir, report := filepath.Join(dir, "ptx"), filepath.Join(dir, "report.json")
	out, code := captureStdout(t, func() int {
		return cmdAccelerate([]string{"--profile", prof, "--gpu", "sim", "--arm-after", "0", "--always-offload", "--ptx-dir", ptxDir, "--report", report, prog, "5000", "3", "6000"})
	})
	if code != 0 || out != string(native) {
		t.Fatalf("gxbit accelerate: status %d, output %q, native %q", code, out, native)
	}
	var rep struct {
		HotSpots []struct {
			Entry           string         `json:"entry"`
			Function        string         `json:"function"`
			Launches        int            `json:"launches"`
			Fallbacks       int            `json:"fallbacks"`
			FallbackReasons map[string]int `json:"fallback_reasons"`
			KernelSeconds   *float64       `json:"kernel_seconds"`
			CopySeconds     *float64       `json:"copy_seconds"`
			CPUSeconds      *float64       `json:"cpu_seconds_estimate"`
		} `json:"hotspots"`
		WallSeconds       float64 `json:"wall_seconds"`
		GuestInstructions uint64  `json:"guest_instructions"`
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	kern := false
	for _, h := range rep.HotSpots {
		if h.Function != "kern" {
			continue
		}
		kern = true
		if h.Launches != 1 || h.Fallbacks != 0 || h.KernelSeconds == nil || h.CopySeconds == nil || h.CPUSeconds == nil {
			t.Errorf("kern's report: %+v", h)
		}
		if _, err := os.Stat(filepath.Join(ptxDir, h.Entry+".ptx")); err != nil {
			t.Errorf("--ptx-dir: %v", err)
		}
	}
	if !kern || rep.WallSeconds <= 0 || rep.GuestInstructions == 0 {
		t.Errorf("report: %s", data)
	}
	text, code := captureStdout(t, func() int { return cmdPtxGen([]string{"--profile", prof, prog}) })
	if !strings.Contains(text, ".visible .entry gx_") || !strings.Contains(text, "// x86 0x") {
		t.Errorf("gxbit ptx gen: status %d, output:\n%s", code, text)
	}
}

// TestPtxGen2D checks that gxbit ptx gen prints a matmul nest's 2D kernel
// beside its 1D one, since a GPU launch uses the 2D one.
func TestPtxGen2D(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found")
	}
	dir := t.TempDir()
	prog := filepath.Join(dir, "matmul")
	if b, err := exec.Command(gcc, "-O2", "-static", "-o", prog, "../../examples/matmul.c").CombinedOutput(); err != nil {
		t.Skipf("gcc: %v\n%s", err, b)
	}
	prof := filepath.Join(dir, "matmul.profile")
	if _, code := captureStdout(t, func() int { return cmdProfile([]string{"-o", prof, prog, "48"}) }); code != 0 {
		t.Fatalf("gxbit profile: status %d", code)
	}
	text, _ := captureStdout(t, func() int { return cmdPtxGen([]string{"--profile", prof, prog}) })
	if !strings.Contains(text, "2D kernel, launched instead") || !strings.Contains(text, "_2d(") || !strings.Contains(text, "%ctaid.y") {
		t.Errorf("gxbit ptx gen printed no 2D kernel:\n%.2000s", text)
	}
}
