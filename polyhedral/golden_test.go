package polyhedral

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "record this code's answers as the results of "+nestsFile)

// nestsFile holds the Analyze calls of real programs: every call that
// gxbit profile (and its schedules, --print) and gxbit run --accelerate
// made on the nests corpus (testdata/nests, built -O2 static, at the
// medium sizes of testdata/nests/sizes, and lu, correlation and
// covariance at the large ones), duplicates removed, with the answers the
// code gave when they were recorded.
const nestsFile = "testdata/nests.jsonl"

// TestAnalyzeMatchesGolden is the differential test of Analyze: on every
// recorded nest, its answer (verdicts, reasons, conflicting pairs,
// witnesses, error texts) must be the recorded one, byte for byte. The
// results were recorded by the code before the solver's fast paths, so a
// change of any answer fails here.
func TestAnalyzeMatchesGolden(t *testing.T) {
	rs, err := readNestFile(nestsFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) < 500 {
		t.Fatalf("%s: %d nests, want the full corpus", nestsFile, len(rs))
	}
	changed := 0
	for i, r := range rs {
		n, opts, err := r.nest()
		if err != nil {
			t.Fatalf("%s:%d: %v", nestsFile, i+1, err)
		}
		// The record must hold the nest exactly (printing and parsing
		// expressions round-trips).
		back := recordNest(n, opts)
		back.Program, back.Result = r.Program, r.Result
		if !sameJSON(t, back, r) {
			t.Fatalf("%s:%d: the nest does not round-trip", nestsFile, i+1)
		}
		got := recordResult(Analyze(n, opts))
		if *updateGolden {
			rs[i].Result = got
			continue
		}
		if r.Result == nil {
			t.Fatalf("%s:%d: no recorded result (run with -update on the reference code)", nestsFile, i+1)
		}
		if !sameJSON(t, got, r.Result) {
			changed++
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(r.Result)
			t.Errorf("%s:%d (%s): Analyze's answer changed\n got %s\nwant %s", nestsFile, i+1, r.Program, g, w)
		}
	}
	if changed > 0 {
		t.Errorf("%d of %d answers changed", changed, len(rs))
	}
	if *updateGolden {
		var b bytes.Buffer
		if err := writeNestFile(&b, rs); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(nestsFile, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(x, y)
}

// BenchmarkAnalyzeNests runs Analyze on the recorded nests of real
// programs: all of them, and those of each large run (the analysis phase 1
// does in gxbit run --accelerate at those sizes).
func BenchmarkAnalyzeNests(b *testing.B) {
	rs, err := readNestFile(nestsFile)
	if err != nil {
		b.Fatal(err)
	}
	type call struct {
		n    Nest
		opts Options
	}
	groups := map[string][]call{}
	names := []string{"all"}
	for _, r := range rs {
		n, opts, err := r.nest()
		if err != nil {
			b.Fatal(err)
		}
		groups["all"] = append(groups["all"], call{n, opts})
		for _, large := range []string{"lu 2000", "correlation 1800 1500", "covariance 1800 1500"} {
			if r.Program == large {
				name := strings.Fields(large)[0] + "-large"
				if groups[name] == nil {
					names = append(names, name)
				}
				groups[name] = append(groups[name], call{n, opts})
			}
		}
	}
	for _, name := range names {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				for _, c := range groups[name] {
					Analyze(c.n, c.opts)
				}
			}
		})
	}
}
