package corpus

import (
	"os"
	"testing"
	"time"
)

// crossLibcDiffers lists the programs whose output legitimately differs
// between glibc and musl, with the reason. The full corpus test checks that
// every other program prints the same bytes with both.
var crossLibcDiffers = map[string]string{
	"longdouble":  "printf %La: glibc normalizes the x87 mantissa as 0xc.9p-2, musl as 0x1.92p+0",
	"floatfmt":    "printf %a of a subnormal: glibc prints 0x0.4p-1022, musl 0x1p-1024",
	"strtod_scan": "printf %a of a subnormal: glibc prints 0x0.…p-1022, musl a normalized mantissa",
}

// TestFullCorpus builds the whole corpus in every mode (through Build, into
// the shared cache) and runs every program natively: each exits with its
// expected status, corpus programs finish quickly, and every mode of one libc
// prints the same bytes. A build from scratch takes about a minute on two
// cores, so it runs only with GXBIT_CORPUS_FULL=1.
func TestFullCorpus(t *testing.T) {
	if os.Getenv("GXBIT_CORPUS_FULL") != "1" {
		t.Skip("set GXBIT_CORPUS_FULL=1 to build and run the whole corpus")
	}
	dir := Build(t)
	modes := BuiltModes(dir)
	if len(modes) < 9 {
		t.Fatalf("only %d modes built", len(modes))
	}
	glibc := map[string]Result{}
	musl := map[string]Result{}
	for _, m := range modes {
		ps, err := Programs(dir, m.Name)
		if err != nil {
			t.Fatal(err)
		}
		var slowest Program
		var slowestDur time.Duration
		for _, p := range ps {
			r := RunNative(t, p)
			if p.Suite == SuiteCorpus && r.Duration > slowestDur {
				slowest, slowestDur = p, r.Duration
			}
			if r.ExitCode != p.WantExit {
				t.Errorf("%s: exit status %d, want %d\nstderr: %s", p, r.ExitCode, p.WantExit, r.Stderr)
			}
			if p.Suite == SuiteCorpus && p.Mode.Opt != "O0" && r.Duration > time.Second {
				t.Errorf("%s took %v natively; corpus programs must be fast", p, r.Duration)
			}
			ref := glibc
			if m.Libc == "musl" {
				ref = musl
			}
			if want, ok := ref[p.Name]; !ok {
				ref[p.Name] = r
			} else if err := Compare(want, r); err != nil {
				t.Errorf("%s differs from the first %s mode: %v", p, m.Libc, err)
			}
		}
		t.Logf("%s: %d programs; slowest corpus program %s (%v)", m.Name, len(ps), slowest.Name, slowestDur.Round(time.Millisecond))
	}
	for name, r := range musl {
		err := Compare(glibc[name], r)
		_, allowed := crossLibcDiffers[name]
		switch {
		case err != nil && !allowed:
			t.Errorf("%s: musl differs from glibc: %v", name, err)
		case err == nil && allowed:
			t.Errorf("%s: listed in crossLibcDiffers but musl and glibc agree; remove the entry", name)
		}
	}
}
