package polyhedral

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// The nest file format of testdata/*.nests.jsonl: one JSON object a line,
// each an Analyze call (the nest and its Options) and, once recorded, the
// answer the code of the time gave: a differential test's input and golden
// output. Expressions are written as Expr.String prints them and read
// back with ParseExpr.

// nestRecord is one line of a nest file.
type nestRecord struct {
	Program  string           `json:"program,omitempty"` // where the nest came from, for people
	Levels   []levelRecord    `json:"levels"`
	Assume   []assumeRecord   `json:"assume,omitempty"`
	Accesses []accessRecord   `json:"accesses"`
	Reds     []Reduction      `json:"reductions,omitempty"`
	Params   map[string]int64 `json:"params,omitempty"`
	Distinct bool             `json:"distinctBases,omitempty"`
	MaxSteps int              `json:"maxSteps,omitempty"`
	Result   *resultRecord    `json:"result,omitempty"`
}

type levelRecord struct {
	Index string `json:"index"`
	Lower string `json:"lower"`
	Upper string `json:"upper"`
	Step  int64  `json:"step,omitempty"`
}

type assumeRecord struct {
	Expr string `json:"expr"`
	Eq   bool   `json:"eq,omitempty"`
}

type accessRecord struct {
	Site   string   `json:"site"`
	Base   string   `json:"base"`
	Offset string   `json:"offset"`
	Size   int64    `json:"size"`
	Write  bool     `json:"write,omitempty"`
	Loops  []string `json:"loops"` // null: every level
}

// resultRecord is Analyze's answer: its error, or every verdict in full.
type resultRecord struct {
	Err      string          `json:"err,omitempty"`
	Verdicts []verdictRecord `json:"verdicts,omitempty"`
}

type verdictRecord struct {
	Level      int             `json:"level"`
	Index      string          `json:"index"`
	Kind       string          `json:"kind"`
	Reductions []int           `json:"reductions,omitempty"`
	Conflict   *conflictRecord `json:"conflict,omitempty"`
	Reason     string          `json:"reason"`
}

type conflictRecord struct {
	A       int      `json:"a"`
	B       int      `json:"b"`
	Witness *Witness `json:"witness,omitempty"`
	Err     string   `json:"err,omitempty"`
}

// recordNest returns the record of an Analyze call.
func recordNest(n Nest, opts Options) nestRecord {
	r := nestRecord{Reds: n.Reductions, Params: opts.Params, Distinct: opts.DistinctBases, MaxSteps: opts.MaxSteps}
	for _, l := range n.Domain.Levels {
		r.Levels = append(r.Levels, levelRecord{Index: l.Index, Lower: l.Lower.String(), Upper: l.Upper.String(), Step: l.Step})
	}
	for _, c := range n.Domain.Assume {
		r.Assume = append(r.Assume, assumeRecord{Expr: c.Expr.String(), Eq: c.Eq})
	}
	for _, a := range n.Accesses {
		r.Accesses = append(r.Accesses, accessRecord{Site: a.Site, Base: a.Base.String(), Offset: a.Offset.String(), Size: a.Size, Write: a.Kind == Write, Loops: a.Loops})
	}
	return r
}

// nest returns the Analyze call a record holds.
func (r nestRecord) nest() (Nest, Options, error) {
	parse := func(s string) (Expr, error) {
		e, err := ParseExpr(s)
		if err != nil {
			return Expr{}, fmt.Errorf("%q: %w", s, err)
		}
		return e, nil
	}
	n := Nest{Reductions: r.Reds}
	for _, l := range r.Levels {
		lo, err := parse(l.Lower)
		if err != nil {
			return Nest{}, Options{}, err
		}
		hi, err := parse(l.Upper)
		if err != nil {
			return Nest{}, Options{}, err
		}
		n.Domain.Levels = append(n.Domain.Levels, Level{Index: l.Index, Lower: lo, Upper: hi, Step: l.Step})
	}
	for _, c := range r.Assume {
		e, err := parse(c.Expr)
		if err != nil {
			return Nest{}, Options{}, err
		}
		n.Domain.Assume = append(n.Domain.Assume, Constraint{Expr: e, Eq: c.Eq})
	}
	for _, a := range r.Accesses {
		base, err := parse(a.Base)
		if err != nil {
			return Nest{}, Options{}, err
		}
		off, err := parse(a.Offset)
		if err != nil {
			return Nest{}, Options{}, err
		}
		acc := Access{Site: a.Site, Base: base, Offset: off, Size: a.Size, Loops: a.Loops}
		if a.Write {
			acc.Kind = Write
		}
		n.Accesses = append(n.Accesses, acc)
	}
	return n, Options{Params: r.Params, DistinctBases: r.Distinct, MaxSteps: r.MaxSteps}, nil
}

// recordResult returns the record of Analyze's answer.
func recordResult(vs []LevelVerdict, err error) *resultRecord {
	if err != nil {
		return &resultRecord{Err: err.Error()}
	}
	r := &resultRecord{Verdicts: []verdictRecord{}}
	for _, v := range vs {
		vr := verdictRecord{Level: v.Level, Index: v.Index, Kind: v.Kind.String(), Reductions: v.Reductions, Reason: v.Reason}
		if c := v.Conflict; c != nil {
			vr.Conflict = &conflictRecord{A: c.A, B: c.B, Witness: c.Witness}
			if c.Err != nil {
				vr.Conflict.Err = c.Err.Error()
			}
		}
		r.Verdicts = append(r.Verdicts, vr)
	}
	return r
}

// readNestFile reads the records of a nest file.
func readNestFile(path string) ([]nestRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []nestRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for line := 1; sc.Scan(); line++ {
		var r nestRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// writeNestFile writes records one a line, map keys sorted (as
// encoding/json does), so that equal records give equal lines.
func writeNestFile(w io.Writer, rs []nestRecord) error {
	for _, r := range rs {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
	}
	return nil
}
