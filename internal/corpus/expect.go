package corpus

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// ExpectFile is the name of the nests suite's expectation file, beside its
// C sources: testdata/nests/expect.json.
const ExpectFile = "expect.json"

// NestExpectations is the content of testdata/nests/expect.json: the
// hand-written verdicts and schedule of every loop nest of every nests
// program, in terms of the C source (loop markers and variable names), so
// that tests can hold phase 1 and phase 2's decisions against it on any
// build mode.
type NestExpectations struct {
	// Doc says what the file is.
	Doc string `json:"doc"`
	// Version is the format's version, 1.
	Version int `json:"version"`
	// Programs maps a program's name (its C file's base name) to its
	// expectations.
	Programs map[string]*ProgramExpect `json:"programs"`
}

// ProgramExpect is the expectation for one nests program.
type ProgramExpect struct {
	// Shape says in words what the program computes.
	Shape string `json:"shape"`
	// Nests are all the program's loop nests.
	Nests []*NestExpect `json:"nests"`
}

// NestExpect is the expectation for one loop nest.
type NestExpect struct {
	// Nest is the nest's name, the part of its loops' markers
	// /* LOOP: NEST.ID */ before the dot.
	Nest string `json:"nest"`
	// Loops is the nest's loop tree written with the loops' marker IDs: an
	// ID followed by its children in parentheses, siblings separated by
	// spaces, in source order ("i(j k(j2))": i holds j and then k, which
	// holds j2).
	Loops string `json:"loops"`
	// Verdicts maps every loop's ID to what a correct memory-based
	// dependence analysis of the source concludes for that level:
	// parallel, reduction or sequential (see Verdict).
	Verdicts map[string]Verdict `json:"verdicts"`
	// Hot marks the nests that dominate the program's run time.
	Hot bool `json:"hot,omitempty"`
	// CPU says the whole nest must stay on the CPU (and must not run
	// slower than under plain gxbit run).
	CPU bool `json:"cpu,omitempty"`
	// Host lists the loops that run on the CPU around or between the
	// kernels: time-step loops and sequential outer loops that launch
	// kernels every iteration over arrays that stay on the device.
	Host []string `json:"host,omitempty"`
	// Kernels are the kernels one pass over the nest's body launches, in
	// source order: more than one when sibling loops are distributed or
	// a host loop's body holds several parallel nests.
	Kernels []KernelExpect `json:"kernels,omitempty"`
	// Distribute says sibling loops (or statements) under a parallel
	// level are split into separate kernels.
	Distribute bool `json:"distribute,omitempty"`
	// Interchange lists the pairs of loops swapped, outer first as in the
	// source: the first moves inside the second.
	Interchange [][2]string `json:"interchange,omitempty"`
	// Why explains the decision.
	Why string `json:"why,omitempty"`

	// Tree is Loops parsed and located in the source (set by
	// ReadNestExpectations).
	Tree []*LoopExpect `json:"-"`
}

// KernelExpect is one expected kernel of a nest.
type KernelExpect struct {
	// Grid lists the loops mapped to the grid, outermost first (one to
	// three of them; the innermost becomes x).
	Grid []string `json:"grid"`
	// Thread lists the loops each thread runs as loops, outermost first.
	Thread []string `json:"thread,omitempty"`
}

// LoopExpect is one loop of a nest's tree, located in the C source.
type LoopExpect struct {
	// ID is the loop's marker ID (the part after the dot).
	ID string
	// Var is the loop's index variable in the C source: ID without a
	// trailing number (j2 is a second loop over j).
	Var string
	// Line is the 1-based line of the loop's for statement.
	Line int
	// End is the last line of the loop's statement (its body's closing
	// brace, or its single statement's last line).
	End int
	// Children are the loops directly inside this one, in source order.
	Children []*LoopExpect
}

// Walk calls f on l and every loop below it, parents first.
func (l *LoopExpect) Walk(f func(*LoopExpect)) {
	f(l)
	for _, c := range l.Children {
		c.Walk(f)
	}
}

// Lines returns the first and last source lines of the nest.
func (n *NestExpect) Lines() (first, last int) {
	for _, r := range n.Tree {
		if first == 0 || r.Line < first {
			first = r.Line
		}
		last = max(last, r.End)
	}
	return first, last
}

// NestAt returns the nest whose lines hold the source line, or nil.
func (pe *ProgramExpect) NestAt(line int) *NestExpect {
	for _, n := range pe.Nests {
		if first, last := n.Lines(); first <= line && line <= last {
			return n
		}
	}
	return nil
}

var trailingDigits = regexp.MustCompile(`[0-9]+$`)

// ReadNestExpectations reads dir/expect.json and checks it against the C
// programs in dir: every program has an entry and every entry a program;
// every loop of a nest's tree has a marker /* LOOP: NEST.ID */ on a for
// statement over its variable, nested in the source (by indentation) as the
// tree says; every marker belongs to one tree; every loop has a verdict;
// and the schedule names only loops of its nest. Errors name the file and,
// where there is one, the line.
func ReadNestExpectations(dir string) (*NestExpectations, error) {
	path := filepath.Join(dir, ExpectFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	var ex NestExpectations
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ex); err != nil {
		return nil, fmt.Errorf("corpus: %s: %w", path, err)
	}
	if ex.Version != 1 {
		return nil, fmt.Errorf("corpus: %s: version %d, want 1", path, ex.Version)
	}
	srcs, err := filepath.Glob(filepath.Join(dir, "*.c"))
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	seen := map[string]bool{}
	for _, src := range srcs {
		name := strings.TrimSuffix(filepath.Base(src), ".c")
		seen[name] = true
		pe := ex.Programs[name]
		if pe == nil {
			return nil, fmt.Errorf("corpus: %s: no entry for %s", path, name)
		}
		code, err := os.ReadFile(src)
		if err != nil {
			return nil, fmt.Errorf("corpus: %w", err)
		}
		if err := pe.locate(src, code); err != nil {
			return nil, err
		}
	}
	var extra []string
	for name := range ex.Programs {
		if !seen[name] {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return nil, fmt.Errorf("corpus: %s: entries without a program: %s", path, strings.Join(extra, ", "))
	}
	return &ex, nil
}

// marker is one /* LOOP: NEST.ID */ comment of a source.
type marker struct {
	nest, id  string
	line, end int
	indent    int
	parent    string // the enclosing marker's NEST.ID, or ""
}

// sourceMarkers finds the source's loop markers and, from the indentation
// (tabs), each one's enclosing loop.
func sourceMarkers(file string, code []byte) (map[string]*marker, error) {
	lines := strings.Split(string(code), "\n")
	byLine := map[int]*marker{}
	out := map[string]*marker{}
	indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, "\t")) }
	for i, l := range lines {
		ms := markerRE.FindAllStringSubmatch(l, -1)
		if len(ms) == 0 {
			continue
		}
		if len(ms) > 1 {
			return nil, &SyntaxError{File: file, Line: i + 1, Msg: "more than one LOOP marker on a line"}
		}
		m := &marker{nest: ms[0][1], id: ms[0][2], line: i + 1, end: i + 1, indent: indent(l)}
		// The loop's statement runs on over the lines indented deeper
		// (blank lines included), and a closing brace at its own depth.
		for k := i + 1; k < len(lines); k++ {
			if strings.TrimSpace(lines[k]) == "" {
				continue
			}
			if indent(lines[k]) > m.indent {
				m.end = k + 1
				continue
			}
			if indent(lines[k]) == m.indent && strings.HasPrefix(strings.TrimSpace(lines[k]), "}") {
				m.end = k + 1
			}
			break
		}
		key := m.nest + "." + m.id
		if o, dup := out[key]; dup {
			return nil, &SyntaxError{File: file, Line: i + 1, Msg: fmt.Sprintf("marker %s also on line %d", key, o.line)}
		}
		v := trailingDigits.ReplaceAllString(m.id, "")
		if !regexp.MustCompile(`for \((int|long|size_t) ` + regexp.QuoteMeta(v) + ` = `).MatchString(l) {
			return nil, &SyntaxError{File: file, Line: i + 1, Msg: fmt.Sprintf("marker %s is not on a for statement over %s", key, v)}
		}
		// The enclosing loop is the nearest line above with less
		// indentation, when that line is a for statement.
		for k := i - 1; k >= 0; k-- {
			if strings.TrimSpace(lines[k]) == "" || indent(lines[k]) >= m.indent {
				continue
			}
			if p := byLine[k+1]; p != nil {
				m.parent = p.nest + "." + p.id
			}
			break
		}
		byLine[i+1] = m
		out[key] = m
	}
	return out, nil
}

// locate parses every nest's loop tree, places it in the source and checks
// the schedule's names.
func (pe *ProgramExpect) locate(file string, code []byte) error {
	marks, err := sourceMarkers(file, code)
	if err != nil {
		return err
	}
	errAt := func(format string, a ...any) error {
		return fmt.Errorf("corpus: %s: %s", file, fmt.Sprintf(format, a...))
	}
	used := map[string]bool{}
	for _, n := range pe.Nests {
		roots, err := parseLoopTree(n.Loops)
		if err != nil {
			return errAt("nest %s: %v", n.Nest, err)
		}
		n.Tree = roots
		ids := map[string]bool{}
		var check func(l *LoopExpect, parent string) error
		check = func(l *LoopExpect, parent string) error {
			key := n.Nest + "." + l.ID
			m := marks[key]
			if m == nil {
				return errAt("nest %s: no marker /* LOOP: %s */", n.Nest, key)
			}
			if ids[l.ID] {
				return errAt("nest %s: loop %s twice in %q", n.Nest, l.ID, n.Loops)
			}
			ids[l.ID] = true
			used[key] = true
			l.Line, l.End, l.Var = m.line, m.end, trailingDigits.ReplaceAllString(l.ID, "")
			if m.parent != parent {
				return errAt("line %d: loop %s is inside %q in the source, %q in %q", m.line, key, m.parent, parent, n.Loops)
			}
			prev := 0
			for _, c := range l.Children {
				if err := check(c, key); err != nil {
					return err
				}
				if c.Line <= prev {
					return errAt("nest %s: %s is listed after a sibling that follows it in the source", n.Nest, c.ID)
				}
				prev = c.Line
			}
			return nil
		}
		for _, r := range roots {
			if err := check(r, ""); err != nil {
				return err
			}
		}
		if err := n.checkSchedule(ids); err != nil {
			return errAt("nest %s: %v", n.Nest, err)
		}
	}
	var missing []string
	for key, m := range marks {
		if !used[key] {
			missing = append(missing, fmt.Sprintf("%s (line %d)", key, m.line))
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return errAt("loops in no nest of %s: %s", ExpectFile, strings.Join(missing, ", "))
	}
	return nil
}

// checkSchedule checks that verdicts and schedule name exactly the nest's
// loops and agree with each other.
func (n *NestExpect) checkSchedule(ids map[string]bool) error {
	for id := range ids {
		v, ok := n.Verdicts[id]
		if !ok {
			return fmt.Errorf("loop %s has no verdict", id)
		}
		if v != Parallel && v != Reduction && v != Sequential {
			return fmt.Errorf("loop %s: verdict %q (want parallel, reduction or sequential)", id, v)
		}
	}
	if len(n.Verdicts) != len(ids) {
		return fmt.Errorf("verdicts name loops outside %q", n.Loops)
	}
	known := func(what string, list []string) error {
		for _, id := range list {
			if !ids[id] {
				return fmt.Errorf("%s names %s, not a loop of %q", what, id, n.Loops)
			}
		}
		return nil
	}
	if err := known("host", n.Host); err != nil {
		return err
	}
	for _, pair := range n.Interchange {
		if err := known("interchange", pair[:]); err != nil {
			return err
		}
	}
	if n.CPU && (len(n.Kernels) > 0 || len(n.Host) > 0) {
		return fmt.Errorf("a nest that stays on the CPU has no kernels and no host loops")
	}
	if !n.CPU && len(n.Kernels) == 0 {
		return fmt.Errorf("no kernels: say cpu")
	}
	for _, id := range n.Host {
		if n.Verdicts[id] == Parallel {
			return fmt.Errorf("host loop %s is parallel: it belongs in the grid", id)
		}
	}
	for i, k := range n.Kernels {
		if len(k.Grid) < 1 || len(k.Grid) > 3 {
			return fmt.Errorf("kernel %d: %d grid levels, want 1 to 3", i, len(k.Grid))
		}
		if err := known("grid", k.Grid); err != nil {
			return err
		}
		if err := known("thread", k.Thread); err != nil {
			return err
		}
		role := map[string]bool{}
		for _, id := range append(append(append([]string(nil), k.Grid...), k.Thread...), n.Host...) {
			if role[id] {
				return fmt.Errorf("kernel %d: loop %s has two roles", i, id)
			}
			role[id] = true
		}
	}
	return nil
}

// parseLoopTree parses a Loops string such as "i(j k(j2))".
func parseLoopTree(s string) ([]*LoopExpect, error) {
	pos := 0
	var list func(depth int) ([]*LoopExpect, error)
	list = func(depth int) ([]*LoopExpect, error) {
		var out []*LoopExpect
		for {
			for pos < len(s) && s[pos] == ' ' {
				pos++
			}
			if pos == len(s) || s[pos] == ')' {
				if len(out) == 0 {
					return nil, fmt.Errorf("loops %q: empty list at column %d", s, pos+1)
				}
				if pos == len(s) && depth > 0 {
					return nil, fmt.Errorf("loops %q: missing )", s)
				}
				if pos < len(s) && depth == 0 {
					return nil, fmt.Errorf("loops %q: unbalanced ) at column %d", s, pos+1)
				}
				return out, nil
			}
			start := pos
			for pos < len(s) && (s[pos] == '_' || s[pos] >= '0' && s[pos] <= '9' || s[pos] >= 'a' && s[pos] <= 'z' || s[pos] >= 'A' && s[pos] <= 'Z') {
				pos++
			}
			if start == pos {
				return nil, fmt.Errorf("loops %q: want a loop ID at column %d", s, pos+1)
			}
			l := &LoopExpect{ID: s[start:pos]}
			if pos < len(s) && s[pos] == '(' {
				pos++
				kids, err := list(depth + 1)
				if err != nil {
					return nil, err
				}
				pos++ // the ')'
				l.Children = kids
			}
			out = append(out, l)
		}
	}
	return list(0)
}

// SizesFile is the name of the nests suite's benchmark sizes file, beside
// its C sources: testdata/nests/sizes.
const SizesFile = "sizes"

// ReadNestSizes reads one size set ("medium", "large" or "contract") of
// dir/sizes: per program, its arguments at that size. The file is line
// based:
//
//	# comment; blank lines are ignored
//	NAME | MEDIUM ARGS | LARGE ARGS | CONTRACT ARGS
//
// Every argument must be a positive integer.
func ReadNestSizes(dir, set string) (map[string][]string, error) {
	path := filepath.Join(dir, SizesFile)
	col := map[string]int{"medium": 1, "large": 2, "contract": 3}[set]
	if col == 0 {
		return nil, fmt.Errorf("corpus: size set %q (want medium, large or contract)", set)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	out := map[string][]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		if strings.TrimSpace(line) == "" {
			continue
		}
		fields := strings.Split(line, "|")
		if len(fields) != 4 {
			return nil, &SyntaxError{File: path, Line: i + 1, Msg: "want NAME | MEDIUM ARGS | LARGE ARGS | CONTRACT ARGS"}
		}
		name := strings.TrimSpace(fields[0])
		if _, dup := out[name]; dup || name == "" {
			return nil, &SyntaxError{File: path, Line: i + 1, Msg: fmt.Sprintf("program %q empty or listed twice", name)}
		}
		args := strings.Fields(fields[col])
		for _, a := range strings.Fields(strings.Join(fields[1:], " ")) {
			if !positiveInt.MatchString(a) {
				return nil, &SyntaxError{File: path, Line: i + 1, Msg: fmt.Sprintf("argument %q is not a positive integer", a)}
			}
		}
		if len(args) == 0 {
			return nil, &SyntaxError{File: path, Line: i + 1, Msg: "no arguments"}
		}
		out[name] = args
	}
	return out, nil
}

var positiveInt = regexp.MustCompile(`^[1-9][0-9]*$`)
