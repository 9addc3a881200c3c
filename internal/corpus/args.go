package corpus

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Spec says how one corpus program is run: the contents of its NAME.args
// side file. The zero Spec (no side file) runs the program with no
// arguments, empty input, an empty environment, and expects exit status 0.
type Spec struct {
	// Args are the arguments after argv[0] (and after the temporary
	// directory, when NeedsTempDir is set).
	Args []string
	// Stdin is the program's whole standard input.
	Stdin []byte
	// Env is the program's whole environment as KEY=VALUE entries; nothing
	// is inherited from the test process.
	Env []string
	// NeedsTempDir says the program takes a fresh writable directory as
	// argv[1].
	NeedsTempDir bool
	// WantExit is the exit status a correct run ends with.
	WantExit int
}

// SyntaxError is an error in a side file (.args or .verdict), with the file
// name and the 1-based line where it was found.
type SyntaxError struct {
	// File is the side file (or C source) the error is in.
	File string
	// Line is the 1-based line of the error.
	Line int
	// Msg says what is wrong.
	Msg string
}

// Error returns "file:line: message".
func (e *SyntaxError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// ParseArgs parses a NAME.args side file. The format is line based; each
// line is one directive, its keyword followed by a single space and the rest
// of the line taken verbatim (trailing spaces included):
//
//	# comment (a line starting with #; blank lines are ignored too)
//	arg VALUE    append VALUE to the arguments ("arg" alone: an empty argument)
//	stdin TEXT   append TEXT and a newline to standard input ("stdin" alone: an empty line)
//	env K=V      add K=V to the environment (K must be non-empty)
//	tmpdir       pass a fresh writable directory as argv[1]
//	exit N       the expected exit status, 0..255 (default 0)
//
// file names the file in errors, which are *SyntaxError values.
func ParseArgs(file string, data []byte) (Spec, error) {
	var s Spec
	var sawExit, sawTmp bool
	lines := strings.Split(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var stdin bytes.Buffer
	for i, line := range lines {
		errAt := func(format string, a ...any) error {
			return &SyntaxError{File: file, Line: i + 1, Msg: fmt.Sprintf(format, a...)}
		}
		if strings.ContainsRune(line, '\r') {
			return Spec{}, errAt("carriage return in line")
		}
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, hasVal := strings.Cut(line, " ")
		switch key {
		case "arg":
			s.Args = append(s.Args, val)
		case "stdin":
			stdin.WriteString(val)
			stdin.WriteByte('\n')
		case "env":
			k, _, ok := strings.Cut(val, "=")
			if !ok || k == "" || strings.ContainsAny(k, " \t") {
				return Spec{}, errAt("env wants KEY=VALUE, got %q", val)
			}
			s.Env = append(s.Env, val)
		case "tmpdir":
			if hasVal {
				return Spec{}, errAt("tmpdir takes no value")
			}
			if sawTmp {
				return Spec{}, errAt("tmpdir given twice")
			}
			sawTmp = true
			s.NeedsTempDir = true
		case "exit":
			if sawExit {
				return Spec{}, errAt("exit given twice")
			}
			sawExit = true
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 || n > 255 {
				return Spec{}, errAt("exit wants a status 0..255, got %q", val)
			}
			s.WantExit = n
		default:
			return Spec{}, errAt("unknown directive %q (want arg, stdin, env, tmpdir or exit)", key)
		}
	}
	if stdin.Len() > 0 {
		s.Stdin = stdin.Bytes()
	}
	return s, nil
}
