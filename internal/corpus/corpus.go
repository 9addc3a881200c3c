// Package corpus is test support for gxbit: it builds the C programs under
// testdata/corpus/, testdata/loops/ and testdata/nests/ with
// testdata/build.sh, lists the
// built binaries with the arguments, standard input and environment each one
// runs with, runs them natively, and compares the outputs of two runs byte
// for byte.
//
// A build directory, as build.sh writes it, holds one folder per build mode
// (for example O2-static/matmul) and a mirror of the sources with their side
// files under src/corpus/ and src/loops/, so a build directory is all that
// Programs needs.
//
// Each program NAME.c may have a side file NAME.args (see ParseArgs) saying
// how to run it, and each program under loops/ has a NAME.verdict file (see
// ParseVerdicts) with the expected verdict of each of its loop nests. The
// nests programs share one file of expected verdicts and schedules,
// testdata/nests/expect.json (see ReadNestExpectations).
package corpus

import (
	"fmt"
	"strings"
)

// Suite names the folder of testdata a program comes from.
type Suite string

// The suites of programs.
const (
	// SuiteCorpus holds small programs exercising the whole x86-64 and libc
	// surface; they run with fixed inputs.
	SuiteCorpus Suite = "corpus"
	// SuiteLoops holds loop-kernel programs for profiling and acceleration;
	// each takes its problem size from argv and has a .verdict file.
	SuiteLoops Suite = "loops"
	// SuiteNests holds issue 10's loop-nest programs (numerical kernels in
	// the shapes real codes have); each takes its sizes from argv and is
	// described in testdata/nests/expect.json. build.sh builds them only
	// when asked (-s nests), into a build directory of their own.
	SuiteNests Suite = "nests"
)

// Suites returns the suites in the order build.sh builds them.
func Suites() []Suite { return []Suite{SuiteCorpus, SuiteLoops, SuiteNests} }

// Mode describes one way build.sh compiles and links every program.
type Mode struct {
	// Name is the mode's folder name under the build directory, such as
	// "O2-static".
	Name string
	// Opt is the optimization flag without its dash: "O0", "O2" or "O3".
	Opt string
	// Link is "static", "static-pie", "dynamic" (a PIE using the system's
	// dynamic loader) or "musl" (static, linked with musl-gcc).
	Link string
	// Libc is "glibc" or "musl". Programs built against the same libc
	// print the same output in every mode; across libcs, printf's %La and
	// the math library may differ.
	Libc string
}

// Modes returns every mode build.sh knows, glibc modes first. The musl mode
// is built only where musl-gcc is installed.
func Modes() []Mode {
	var ms []Mode
	for _, link := range []string{"static", "static-pie", "dynamic"} {
		for _, opt := range []string{"O0", "O2", "O3"} {
			ms = append(ms, Mode{Name: opt + "-" + link, Opt: opt, Link: link, Libc: "glibc"})
		}
	}
	return append(ms, Mode{Name: "O2-musl", Opt: "O2", Link: "musl", Libc: "musl"})
}

// ParseMode returns the Mode with the given folder name.
func ParseMode(name string) (Mode, error) {
	for _, m := range Modes() {
		if m.Name == name {
			return m, nil
		}
	}
	names := make([]string, 0, 10)
	for _, m := range Modes() {
		names = append(names, m.Name)
	}
	return Mode{}, fmt.Errorf("corpus: unknown build mode %q (known: %s)", name, strings.Join(names, ", "))
}

// Program is one built binary of the corpus together with how to run it.
type Program struct {
	// Name is the program's name, the base name of its C source.
	Name string
	// Suite is the testdata folder the program comes from.
	Suite Suite
	// Mode is the build mode of the binary at Path.
	Mode Mode
	// Path is the absolute path of the binary.
	Path string
	// Source is the path of the program's C source in the build directory.
	Source string
	// Spec says how to run the program (arguments, input, environment,
	// expected exit status).
	Spec
}

// Argv returns the program's arguments after argv[0]: the temporary
// directory first when the program needs one, then Spec.Args.
func (p Program) Argv(tempDir string) []string {
	var out []string
	if p.NeedsTempDir {
		out = append(out, tempDir)
	}
	return append(out, p.Args...)
}

// String returns "mode/name", which is how tests name a program run.
func (p Program) String() string { return p.Mode.Name + "/" + p.Name }
