package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Verdict is the expected classification of one loop level.
type Verdict string

// The verdicts a .verdict file may give a loop level.
const (
	// Parallel: iterations of this level are independent.
	Parallel Verdict = "parallel"
	// Reduction: iterations only combine into accumulators with an
	// associative operator (sum, product, min, max, and, or).
	Reduction Verdict = "reduction"
	// Sequential: a loop-carried dependence (or an access the analysis
	// cannot model) orders the iterations.
	Sequential Verdict = "sequential"
	// Excluded: the nest is no candidate at all (unknown trip count, call
	// to other code); the analyzer should not offer it.
	Excluded Verdict = "excluded"
)

func (v Verdict) valid() bool {
	switch v {
	case Parallel, Reduction, Sequential, Excluded:
		return true
	}
	return false
}

// Level is one loop of a nest.
type Level struct {
	// Var is the loop's index variable as the .verdict file names it.
	Var string
	// Marker is the name in the loop's /* LOOP: name */ comment, NEST.VAR.
	Marker string
	// Line is the 1-based source line of the loop's for statement.
	Line int
	// Verdict is the expected classification of this level.
	Verdict Verdict
}

// Nest is one loop nest of a loops program, outermost level first.
type Nest struct {
	// File is the C source's base name, as written in the .verdict file.
	File string
	// Name is the nest's name: the part of its markers before the dot.
	Name string
	// Line is the line of the outermost for statement.
	Line int
	// Levels are the nest's loops, outermost first.
	Levels []Level
	// Comment is the text after # on the verdict line, trimmed.
	Comment string
}

var markerRE = regexp.MustCompile(`/\* LOOP: ([A-Za-z0-9_]+)\.([A-Za-z0-9_]+) \*/`)

// ParseVerdicts parses a NAME.verdict file against the C source it
// describes. The format is line based:
//
//	# comment; blank lines are ignored
//	FILE:LINE VAR=VERDICT [VAR=VERDICT]... [# comment]
//
// FILE is the source's base name and LINE the line of the nest's outermost
// for statement; the levels follow outermost first, VAR being the loop's
// index variable and VERDICT one of parallel, reduction, sequential,
// excluded. Every for statement in the source carries a marker comment
// /* LOOP: NEST.VAR */ on its line, NEST naming the nest and VAR the level.
// The line FILE:LINE must carry the marker NEST.VAR1 of the first level, and
// each further level's marker NEST.VARk must appear exactly once, below the
// previous level's. Every marker of the source must belong to exactly one
// listed level. Errors are *SyntaxError values located in the .verdict file
// or in the source.
func ParseVerdicts(verdictFile string, verdicts []byte, sourceFile string, source []byte) ([]Nest, error) {
	base := filepath.Base(sourceFile)
	type mark struct {
		nest, v string
		line    int
	}
	byName := map[string][]mark{}
	var order []string
	for i, l := range strings.Split(string(source), "\n") {
		ms := markerRE.FindAllStringSubmatch(l, -1)
		if len(ms) > 1 {
			return nil, &SyntaxError{File: sourceFile, Line: i + 1, Msg: "more than one LOOP marker on a line"}
		}
		if len(ms) == 1 {
			name := ms[0][1] + "." + ms[0][2]
			if len(byName[name]) == 0 {
				order = append(order, name)
			}
			byName[name] = append(byName[name], mark{ms[0][1], ms[0][2], i + 1})
		}
	}
	for name, ms := range byName {
		if len(ms) > 1 {
			return nil, &SyntaxError{File: sourceFile, Line: ms[1].line, Msg: fmt.Sprintf("marker %s also on line %d", name, ms[0].line)}
		}
	}
	used := map[string]bool{}
	var nests []Nest
	for i, line := range strings.Split(string(verdicts), "\n") {
		errAt := func(format string, a ...any) error {
			return &SyntaxError{File: verdictFile, Line: i + 1, Msg: fmt.Sprintf(format, a...)}
		}
		body, comment, _ := strings.Cut(line, "#")
		fields := strings.Fields(body)
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 2 {
			return nil, errAt("want FILE:LINE VAR=VERDICT..., got %q", strings.TrimSpace(body))
		}
		file, lineStr, ok := strings.Cut(fields[0], ":")
		if !ok || file != base {
			return nil, errAt("nest location %q does not name %s", fields[0], base)
		}
		start, err := strconv.Atoi(lineStr)
		if err != nil || start < 1 {
			return nil, errAt("bad line number %q", lineStr)
		}
		n := Nest{File: file, Line: start, Comment: strings.TrimSpace(comment)}
		prev := 0
		for k, f := range fields[1:] {
			v, verdict, ok := strings.Cut(f, "=")
			if !ok || v == "" {
				return nil, errAt("level %q is not VAR=VERDICT", f)
			}
			if !Verdict(verdict).valid() {
				return nil, errAt("unknown verdict %q (want parallel, reduction, sequential or excluded)", verdict)
			}
			var m mark
			if k == 0 {
				found := false
				for _, name := range order {
					if mk := byName[name][0]; mk.line == start {
						m, found = mk, true
					}
				}
				if !found {
					return nil, errAt("%s:%d has no /* LOOP: NEST.VAR */ marker", base, start)
				}
				if m.v != v {
					return nil, errAt("line %d is loop %s.%s, not level %s", start, m.nest, m.v, v)
				}
				n.Name = m.nest
			} else {
				ms := byName[n.Name+"."+v]
				if len(ms) == 0 {
					return nil, errAt("no marker /* LOOP: %s.%s */ in %s", n.Name, v, base)
				}
				m = ms[0]
				if m.line <= prev {
					return nil, errAt("level %s (line %d) is not below the previous level (line %d)", v, m.line, prev)
				}
			}
			name := m.nest + "." + m.v
			if used[name] {
				return nil, errAt("loop %s listed twice", name)
			}
			used[name] = true
			prev = m.line
			n.Levels = append(n.Levels, Level{Var: v, Marker: name, Line: m.line, Verdict: Verdict(verdict)})
		}
		nests = append(nests, n)
	}
	for _, name := range order {
		if !used[name] {
			return nil, &SyntaxError{File: sourceFile, Line: byName[name][0].line, Msg: fmt.Sprintf("loop %s has no verdict in %s", name, filepath.Base(verdictFile))}
		}
	}
	return nests, nil
}

// LoopNests reads and checks the expected verdicts of a loops program
// (NAME.verdict beside its source). A corpus program has none: it returns
// nil and no error.
func (p Program) LoopNests() ([]Nest, error) {
	if p.Suite != SuiteLoops {
		return nil, nil
	}
	vf := strings.TrimSuffix(p.Source, ".c") + ".verdict"
	v, err := os.ReadFile(vf)
	if err != nil {
		return nil, fmt.Errorf("corpus: verdicts of %s: %w", p.Name, err)
	}
	src, err := os.ReadFile(p.Source)
	if err != nil {
		return nil, fmt.Errorf("corpus: source of %s: %w", p.Name, err)
	}
	return ParseVerdicts(vf, v, p.Source, src)
}
