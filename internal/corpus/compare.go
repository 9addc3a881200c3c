package corpus

import (
	"bytes"
	"fmt"
	"strconv"
)

// contextBytes is how many bytes of output a MismatchError shows on each
// side of the first difference.
const contextBytes = 40

// MismatchError describes the first difference between two runs.
type MismatchError struct {
	// Stream is "stdout", "stderr" or "exit status".
	Stream string
	// Offset is the byte offset of the first difference in Stream (0 for
	// the exit status); when one output is a prefix of the other it is the
	// length of the shorter one.
	Offset int
	// Line and Column (1-based) locate Offset in the expected output.
	Line, Column int
	// Want and Got are the expected and the actual text around Offset
	// (for the exit status: the two statuses).
	Want, Got string
	// WantLen and GotLen are the full lengths of the two outputs.
	WantLen, GotLen int
}

// Error describes the difference with quoted context from both sides.
func (e *MismatchError) Error() string {
	if e.Stream == "exit status" {
		return fmt.Sprintf("exit status differs: want %s, got %s", e.Want, e.Got)
	}
	return fmt.Sprintf("%s differs at byte %d (line %d, column %d; lengths %d and %d):\n  want …%s…\n  got  …%s…",
		e.Stream, e.Offset, e.Line, e.Column, e.WantLen, e.GotLen, strconv.Quote(e.Want), strconv.Quote(e.Got))
}

// Compare checks that other produced exactly what native did: stdout, then
// stderr, then the exit status (and terminating signal). It returns nil when
// they agree and a *MismatchError for the first difference otherwise.
// Durations are not compared.
func Compare(native, other Result) error {
	if err := compareStream("stdout", native.Stdout, other.Stdout); err != nil {
		return err
	}
	if err := compareStream("stderr", native.Stderr, other.Stderr); err != nil {
		return err
	}
	if native.ExitCode != other.ExitCode || native.Signal != other.Signal {
		return &MismatchError{Stream: "exit status", Want: status(native), Got: status(other)}
	}
	return nil
}

func status(r Result) string {
	if r.Signal != 0 {
		return fmt.Sprintf("signal %d (%v)", int(r.Signal), r.Signal)
	}
	return strconv.Itoa(r.ExitCode)
}

func compareStream(name string, want, got []byte) error {
	if bytes.Equal(want, got) {
		return nil
	}
	n := min(len(want), len(got))
	off := n
	for i := 0; i < n; i++ {
		if want[i] != got[i] {
			off = i
			break
		}
	}
	line := 1 + bytes.Count(want[:off], []byte{'\n'})
	col := off - bytes.LastIndexByte(want[:off], '\n')
	return &MismatchError{
		Stream: name, Offset: off, Line: line, Column: col,
		Want: window(want, off), Got: window(got, off),
		WantLen: len(want), GotLen: len(got),
	}
}

func window(b []byte, off int) string {
	lo := max(0, off-contextBytes)
	hi := min(len(b), off+contextBytes)
	if lo > hi {
		return ""
	}
	return string(b[lo:hi])
}
