package accel_test

import (
	"bytes"
	"context"
	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/pipeline"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/profile"
)

// staticProfile builds a profile from the static analyzer alone: every
// loop nest of the program becomes a hot spot, and parallel(nest) names
// its parallel levels (the test supplies phase 1's verdict). It stands in
// for a phase 1 run in tests of phase 2.
func staticProfile(t *testing.T, path string, parallel func(n *profile.Loop) []int) *profile.File {
	t.Helper()
	g, err := pipeline.Load(pipeline.Config{Path: path, Engine: testEngine})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	im := g.Image
	lo, hi := im.Prog.Span()
	pim := profile.Image{Entry: im.ProgramEntry(), Lo: lo + im.Bias, Hi: hi + im.Bias}
	for _, s := range im.Symbols {
		if s.IsFun {
			pim.Symbols = append(pim.Symbols, profile.Symbol{Name: s.Name, Addr: s.Addr, Size: s.Size})
		}
	}
	prog := profile.RecoverImage(g.Lifter, g.Mem, pim, 0)
	f := &profile.File{Version: profile.FormatVersion, Program: path}
	for _, fn := range prog.Funcs {
		if fn.Name != "main" {
			continue
		}
		for _, n := range fn.Nests {
			levels := parallel(n)
			if levels == nil {
				continue
			}
			hs := profile.HotSpot{ID: len(f.HotSpots), Function: fn.Name, Entry: profile.Hex(n.Header.Addr), Verdict: profile.VerdictParallel, ParallelLevels: levels}
			for _, l := range n.Levels() {
				lv := profile.Level{Header: profile.Hex(l.Header.Addr)}
				for _, b := range l.Blocks {
					lv.Blocks = append(lv.Blocks, profile.Hex(b.Addr))
				}
				hs.Levels = append(hs.Levels, lv)
			}
			hs.Depth = len(hs.Levels)
			f.HotSpots = append(f.HotSpots, hs)
		}
	}
	return f
}

// depthNests marks level 0 parallel in the nests of exactly the given depth.
func depthNests(depth int) func(n *profile.Loop) []int {
	return func(n *profile.Loop) []int {
		if len(n.Levels()) == depth {
			return []int{0}
		}
		return nil
	}
}

// mmNests marks level 0 parallel in the nests of two or more levels whose
// code multiplies doubles (MUL.f64 or VMUL.f64) without converting or
// dividing: matmul.c's C += A*B nest, not its init or checksum nests.
func mmNests(t *testing.T, path string) func(n *profile.Loop) []int {
	g, err := pipeline.Load(pipeline.Config{Path: path, Engine: testEngine})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return func(n *profile.Loop) []int {
		if len(n.Levels()) < 2 {
			return nil
		}
		mul := false
		for _, b := range n.Blocks {
			vb, err := g.Lifter.Translate(b.Addr)
			if err != nil {
				return nil
			}
			for _, in := range vb.Insts {
				switch {
				case (in.Op == gvinst.OpMul || in.Op == gvinst.OpVMul) && in.Type == gvinst.F64:
					mul = true
				case in.Op == gvinst.OpCvt && (in.Type.IsFloat() || in.SrcType.IsFloat()), in.Op == gvinst.OpDiv && in.Type.IsFloat():
					return nil
				}
			}
		}
		if !mul {
			return nil
		}
		return []int{0}
	}
}

func buildLoops(t *testing.T, name string, modes ...string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found")
	}
	dir := filepath.Join(t.TempDir(), "build")
	if d := os.Getenv("GXBIT_P2_BUILD"); d != "" {
		dir = d
	}
	var opts corpus.BuildOptions
	opts.Modes = modes
	opts.Names = []string{name}
	if err := corpus.BuildInto(context.Background(), dir, opts); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runPlain(t *testing.T, path string, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	res, err := pipeline.Run(context.Background(), pipeline.Config{Path: path, Args: append([]string{path}, args...), Stdout: &out, Stderr: &out, Engine: testEngine})
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), res.ExitStatus
}

func TestAccelerateMatmul(t *testing.T) {
	modes := []string{"O0-static", "O2-static", "O3-static"}
	dir := buildLoops(t, "matmul", modes...)
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			path := filepath.Join(dir, mode, "matmul")
			prof := staticProfile(t, path, mmNests(t, path))
			if len(prof.HotSpots) != 1 {
				t.Fatalf("found %d matmul nests, want 1", len(prof.HotSpots))
			}
			want, wantStatus := runPlain(t, path, "48")
			var out bytes.Buffer
			res, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: []string{path, "48"}, Stdout: &out, Stderr: &out, Engine: testEngine},
				accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != want || res.ExitStatus != wantStatus {
				t.Errorf("accelerated output %q (status %d), plain %q (status %d)", out.String(), res.ExitStatus, want, wantStatus)
			}
			h := rep.HotSpots[0]
			t.Logf("%s", accel.FormatReport(rep))
			if !h.Offloadable || h.Launches == 0 || h.Fallbacks != 0 {
				t.Errorf("hot spot not offloaded cleanly: %+v", h)
			}
		})
	}
}

var _ gvinst.Reg

// TestNotProfitable runs matmul with device costs that make every launch
// a loss (a launch taking a minute): the nest stays on the CPU, the output
// is the plain run's, and the report says why with the numbers. With a
// free device the same nest is launched. The size makes the rows after the
// probed ones cost the CPU engine several times what probing two rows on
// the interpreter costs (the instance's overhead, which a free device does
// not remove).
func TestNotProfitable(t *testing.T) {
	dir := buildLoops(t, "matmul", "O2-static")
	path := filepath.Join(dir, "O2-static", "matmul")
	prof := staticProfile(t, path, mmNests(t, path))
	const size = "256"
	want, _ := runPlain(t, path, size)
	for _, c := range []struct {
		name  string
		costs accel.DeviceCosts
		pays  bool
	}{
		{"slow device", accel.DeviceCosts{LaunchLatency: time.Minute, HostToDevice: 1e9, DeviceToHost: 1e9, ThreadInsnsPerSecond: 1e9}, false},
		{"free device", accel.DeviceCosts{HostToDevice: 1e18, DeviceToHost: 1e18, ThreadInsnsPerSecond: 1e18}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: []string{path, size}, Stdout: &out, Engine: testEngine},
				accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), Costs: &c.costs})
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != want {
				t.Errorf("output %q, plain %q", out.String(), want)
			}
			h := rep.HotSpots[0]
			t.Logf("%s", accel.FormatReport(rep))
			if c.pays && h.Launches == 0 {
				t.Errorf("not launched on a free device: %s", h.LastFallback)
			}
			if !c.pays && (h.Launches != 0 || h.FallbackReasons[accel.ReasonNotProfitable] != 1 || !strings.Contains(h.LastFallback, "against CPU")) {
				t.Errorf("want one not-profitable fallback with the numbers: launches %d, %v, %q", h.Launches, h.FallbackReasons, h.LastFallback)
			}
		})
	}
}
