package schedule_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
	"github.com/gxbit/gxbit/schedule"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// hexOrBig matches what differs between builds: addresses and large
// decimal constants (array bases).
var hexOrBig = regexp.MustCompile(`0x[0-9a-f]+|\b[0-9]{6,}\b`)

// TestScheduleGolden profiles each C nest of testdata (gcc -O2, static,
// small sizes), builds the schedule of every hot spot of main, and
// compares the text with NAME.golden (go test -run Golden -update
// rewrites them). Addresses and array bases are masked.
func TestScheduleGolden(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	srcs, err := filepath.Glob(filepath.Join("testdata", "*.c"))
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no nests in testdata: %v", err)
	}
	dir := t.TempDir()
	for _, src := range srcs {
		name := strings.TrimSuffix(filepath.Base(src), ".c")
		t.Run(name, func(t *testing.T) {
			bin := filepath.Join(dir, name)
			if out, err := exec.Command(gcc, "-O2", "-static", "-o", bin, src).CombinedOutput(); err != nil {
				t.Skipf("gcc: %v\n%s", err, out)
			}
			res, f, err := pipeline.Profile(context.Background(), pipeline.Config{Path: bin, Args: []string{bin}, Stdout: &strings.Builder{}}, profile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != pipeline.Exited || res.ExitStatus != 0 {
				t.Fatalf("profiled run: %v %d", res.Outcome, res.ExitStatus)
			}
			got := hexOrBig.ReplaceAllString(schedules(f), "#")
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("schedules differ from %s:\n%s", golden, got)
			}
		})
	}
}

// schedules prints the nest and schedule of every analysed hot spot of
// main, in address order.
func schedules(f *profile.File) string {
	var hs []*profile.HotSpot
	for i := range f.HotSpots {
		if h := &f.HotSpots[i]; h.Function == "main" && h.Verdict != profile.VerdictRejected {
			hs = append(hs, h)
		}
	}
	sort.Slice(hs, func(a, b int) bool { return hs[a].Entry < hs[b].Entry })
	var sb strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&sb, "nest at %s:", h.Entry)
		for _, l := range h.Levels {
			fmt.Fprintf(&sb, " %s=%s", l.Index, l.Verdict)
		}
		for _, l := range h.InnerLoops {
			fmt.Fprintf(&sb, " %s(in %s)=%s", l.Index, l.Parent, l.Verdict)
		}
		fmt.Fprintf(&sb, "\n%s\n", schedule.Format(schedule.Build(h)))
	}
	return sb.String()
}

// TestBuildRefusals checks schedules of hand-made hot spots whose model
// is incomplete: every refusal is a note, never a panic or a kernel the
// model does not justify.
func TestBuildRefusals(t *testing.T) {
	lv := func(idx, trip, verdict string) profile.Level {
		return profile.Level{Index: idx, TripCount: trip, Verdict: verdict, Reason: "test", Header: 0x1000}
	}
	cases := []struct {
		name string
		hs   profile.HotSpot
		want string // a substring of Format's output
	}{
		{"no levels", profile.HotSpot{Reason: "never executed"}, "no kernel: the nest has no analysed level (never executed)"},
		{"all sequential", profile.HotSpot{Levels: []profile.Level{lv("i", "10", "sequential")}}, "no kernel for i"},
		{"register-carried k over parallel j", profile.HotSpot{Levels: []profile.Level{lv("i", "10", "sequential"), lv("j", "10", "parallel")}}, "i carries a register or was not analysed"},
		{"no trip count", profile.HotSpot{Levels: []profile.Level{
			{Index: "i", Verdict: "sequential", Reason: "test", Conflict: &profile.Conflict{Sites: [2]int{0, 0}}},
			lv("j", "", "parallel")}, Accesses: []profile.Access{{X86: 0x1000, Kind: "write", Size: 8, Affine: true, Base: "0x100", Coeffs: []int64{0, 8}, Loop: "j"}}},
			"j has no affine trip count"},
		{"triangular", profile.HotSpot{Levels: []profile.Level{
			{Index: "i", TripCount: "10", Verdict: "sequential", Reason: "test", Conflict: &profile.Conflict{Sites: [2]int{0, 0}}},
			lv("j", "10 - 1*i", "parallel")}, Accesses: []profile.Access{{X86: 0x1000, Kind: "write", Size: 8, Affine: true, Base: "0x100", Coeffs: []int64{0, 8}, Loop: "j"}}},
			"j's trip count depends on i (triangular)"},
		{"interchange", profile.HotSpot{Levels: []profile.Level{
			{Index: "i", TripCount: "10", Verdict: "sequential", Reason: "test", Conflict: &profile.Conflict{Sites: [2]int{0, 1}}},
			lv("j", "12", "parallel")}, Accesses: []profile.Access{
			{X86: 0x1000, Kind: "read", Size: 8, Affine: true, Base: "0x100", Coeffs: []int64{0, 8}, Loop: "j"},
			{X86: 0x1004, Kind: "write", Size: 8, Affine: true, Base: "0x100", Coeffs: []int64{0, 8}, Loop: "j"}}},
			"kernel 1: grid (j→x [12 trips]), in the thread: i [10 trips] reduction [i and j interchanged]"},
		{"interchange reverses a dependence", profile.HotSpot{Levels: []profile.Level{
			{Index: "i", TripCount: "10", Verdict: "sequential", Reason: "test", Conflict: &profile.Conflict{Sites: [2]int{0, 1}}},
			lv("j", "12", "parallel")}, Accesses: []profile.Access{
			{X86: 0x1000, Kind: "read", Size: 8, Affine: true, Base: "0x108", Coeffs: []int64{96, 8}, Loop: "j"},
			{X86: 0x1004, Kind: "write", Size: 8, Affine: true, Base: "0x100", Coeffs: []int64{104, 8}, Loop: "j"}}},
			"i is not moved inside j: with j outside, it would carry a dependence"},
	}
	for _, c := range cases {
		got := schedule.Format(schedule.Build(&c.hs))
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: want %q in\n%s", c.name, c.want, got)
		}
	}
}

// TestSummary checks the one-line form the accelerate report carries.
func TestSummary(t *testing.T) {
	s := &schedule.Schedule{Host: []schedule.Loop{{Index: "t"}}, Kernels: []schedule.Kernel{
		{Grid: []schedule.Loop{{Index: "i"}, {Index: "u0"}}},
		{Grid: []schedule.Loop{{Index: "i"}, {Index: "u2"}}, Thread: []schedule.Loop{{Index: "u1"}}, Interchanged: [2]string{"u1", "u2"}},
	}}
	if got, want := schedule.Summary(s), "host(t); grid(i,u0); grid(i,u2) thread(u1) [u1<->u2]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := schedule.Summary(&schedule.Schedule{}); got != "CPU" {
		t.Errorf("empty schedule: %q", got)
	}
}
