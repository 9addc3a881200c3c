package profile_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/internal/corpus"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

var updateAnalysis = flag.Bool("update-analysis", false, "rewrite the analysis golden files")

// profileSession profiles one run of a program as gxbit profile does,
// returning the profile, the run's result, its standard output and the
// session.
func profileSession(t testing.TB, path string, args ...string) (*profile.File, *pipeline.Result, string, *profile.Session) {
	t.Helper()
	var out, errOut bytes.Buffer
	g, err := pipeline.Load(pipeline.Config{Path: path, Args: append([]string{path}, args...), Stdout: &out, Stderr: &errOut})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	sess, err := profile.NewSession(g.Lifter, g.Mem, imageOf(g), profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.RunEngine(context.Background(), sess.Engine(), nil)
	if err != nil {
		t.Fatal(err)
	}
	f := sess.Finish(profile.RunInfo{Program: path, Args: args, LoadBias: g.Image.Bias, GuestInstructions: res.Stats.GuestInstructions})
	return f, res, out.String(), sess
}

// profileRun is profileSession without the session.
func profileRun(t testing.TB, path string, args ...string) (*profile.File, *pipeline.Result, string) {
	f, res, out, _ := profileSession(t, path, args...)
	return f, res, out
}

// imageOf describes a loaded guest for the static analyzer.
func imageOf(g *pipeline.Guest) profile.Image {
	lo, hi := g.Image.Prog.Span()
	im := profile.Image{Entry: g.Image.ProgramEntry(), Lo: lo + g.Image.Bias, Hi: hi + g.Image.Bias}
	for _, s := range g.Image.Symbols {
		if s.IsFun {
			im.Symbols = append(im.Symbols, profile.Symbol{Name: s.Name, Addr: s.Addr, Size: s.Size})
		}
	}
	return im
}

// analysisText prints what the dynamic analysis found, without the parts
// that depend on the run's environment (stack addresses, sample counts).
func analysisText(f *profile.File) string {
	var sb strings.Builder
	hs := append([]profile.HotSpot(nil), f.HotSpots...)
	// By address: the order by share depends on the sampled hotness.
	sort.SliceStable(hs, func(i, j int) bool {
		if hs[i].Entry != hs[j].Entry {
			return hs[i].Entry < hs[j].Entry
		}
		return hs[i].Depth > hs[j].Depth
	})
	for _, h := range hs {
		fmt.Fprintf(&sb, "%s %s depth %d: %s %v\n", h.Function, h.Entry, h.Depth, h.Verdict, h.ParallelLevels)
		for _, l := range h.Levels {
			fmt.Fprintf(&sb, "  %s header %s trips %q: %s\n", l.Index, l.Header, l.TripCount, l.Verdict)
			for _, iv := range l.IVs {
				fmt.Fprintf(&sb, "    iv %s step %d/%d init %q\n", iv.Loc, iv.Step, iv.Bits, iv.Init)
			}
			if b := l.Bound; b != nil {
				fmt.Fprintf(&sb, "    while %s %s %s\n", b.IV, b.Cond, b.Limit)
			}
		}
		for _, a := range h.Accesses {
			if a.Stack {
				continue
			}
			fn := a.Function
			if !a.Affine {
				fn = "not affine"
			}
			fmt.Fprintf(&sb, "  %s %s %d [%s] array %d\n", a.X86, a.Kind, a.Size, fn, a.Group)
		}
		for _, s := range h.Scalars {
			if s.Loc.Reg != "" {
				fmt.Fprintf(&sb, "  scalar %s level %d %s %s\n", s.Loc, s.Level, s.Kind, s.Op)
			}
		}
	}
	return sb.String()
}

// TestGoldenAnalysis checks the loops found, the affine functions fitted
// and the verdicts on the small kernels of testdata/kernels.c.
func TestGoldenAnalysis(t *testing.T) {
	for _, opt := range []string{"O0", "O2"} {
		t.Run(opt, func(t *testing.T) {
			f, res, out, _ := profileSession(t, filepath.Join("testdata", "kernels-"+opt))
			if res.Outcome != pipeline.Exited || res.ExitStatus != 0 {
				t.Fatalf("run: %v %d %s %s", res.Outcome, res.ExitStatus, res.Diagnosis(), out)
			}
			got := analysisText(f)
			path := filepath.Join("testdata", "analysis-"+opt+".golden")
			if *updateAnalysis {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update-analysis to create it)", err)
			}
			if string(want) != got {
				t.Errorf("analysis differs from %s; got:\n%s", path, got)
			}
		})
	}
}

// TestProfileRoundTrip writes a profile and reads it back.
func TestProfileRoundTrip(t *testing.T) {
	f, _, _, _ := profileSession(t, filepath.Join("testdata", "kernels-O2"))
	var buf bytes.Buffer
	if err := profile.Write(&buf, f); err != nil {
		t.Fatal(err)
	}
	g, err := profile.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := profile.Write(&again, g); err != nil {
		t.Fatal(err)
	}
	if buf.String() != again.String() {
		t.Errorf("profile does not round-trip")
	}
	if len(g.HotSpots) == 0 || len(g.HotSpots[0].Blocks) == 0 {
		t.Fatalf("no hot spot with blocks")
	}
	// The GVInst of a hot spot parses back.
	for _, b := range g.HotSpots[0].Blocks {
		if _, err := gvinst.Parse(b.GVInst); err != nil {
			t.Errorf("block %s: %v", b.Addr, err)
		}
	}
}

// TestStrippedProfile profiles a stripped static glibc program: main is
// found as the target of __libc_start_call_main's indirect call, and its
// nests get the same verdicts as with symbols.
func TestStrippedProfile(t *testing.T) {
	strip, err := exec.LookPath("strip")
	if err != nil {
		t.Skip("no strip tool")
	}
	dir := corpus.Build(t)
	src := filepath.Join(dir, "O2-static", "matmul")
	bin := filepath.Join(t.TempDir(), "matmul")
	if out, err := exec.Command(strip, "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v %s", err, out)
	}
	verdicts := func(f *profile.File) []string {
		var vs []string
		for _, h := range f.HotSpots {
			if h.Depth == 3 {
				vs = append(vs, fmt.Sprintf("%s %v", h.Entry, h.Levels[0].Verdict+","+h.Levels[1].Verdict+","+h.Levels[2].Verdict))
			}
		}
		sort.Strings(vs)
		return vs
	}
	withSyms, _, _ := profileRun(t, src, "24")
	stripped, res, _ := profileRun(t, bin, "24")
	if res.Outcome != pipeline.Exited {
		t.Fatalf("stripped run: %s", res.Diagnosis())
	}
	a, b := verdicts(withSyms), verdicts(stripped)
	if len(a) == 0 || strings.Join(a, ";") != strings.Join(b, ";") {
		t.Errorf("depth-3 nests with symbols %v, stripped %v", a, b)
	}
}
