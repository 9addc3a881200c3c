//go:build linux && amd64

package jit

import (
	"fmt"
	"os"
	"strings"

	"github.com/gxbit/gxbit/gvinst"
)

// PerfMapEnv names the environment variable that turns on the perf map:
// when it is set to 1, every engine writes a line for each unit it
// compiles to /tmp/perf-PID.map, the file Linux perf reads to name code
// that no ELF file describes (perf record, then perf report shows each
// unit as jit:0xGUESTADDR). When the arena fills up and compiling starts
// over, its addresses are reused; the later lines describe them.
//
// Set to "parts", it names the parts of each unit instead, by what they
// do, the same in every unit: "part:entry@GUESTADDR" (the fuel and breakpoint
// checks, a loop unit's loads of its pinned registers), "part:OP" (the
// code of a GVInst instruction, by its mnemonic), "part:exit:OP" (the
// block's control transfer: stores of the cached registers, the
// jump-cache probe, the exits), "part:slow" (slow paths, their resumes,
// the fuel exit); perf report --sort sym then tells what the compiled
// code spends its time on.
const PerfMapEnv = "GXBIT_PERFMAP"

// perfMap appends one line per compiled unit to a perf map file.
type perfMap struct {
	f     *os.File
	parts bool // one line per part of a unit, named by its kind
}

// openPerfMap opens (creating or appending to) the perf map at path.
func openPerfMap(path string) (*perfMap, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the perf map: %w", err)
	}
	return &perfMap{f: f}, nil
}

// perfMapFromEnv opens /tmp/perf-PID.map when PerfMapEnv is 1, and returns
// nil otherwise.
func perfMapFromEnv() (*perfMap, error) {
	v := os.Getenv(PerfMapEnv)
	if v != "1" && v != "parts" {
		return nil, nil
	}
	p, err := openPerfMap(fmt.Sprintf("/tmp/perf-%d.map", os.Getpid()))
	if p != nil {
		p.parts = v == "parts"
	}
	return p, err
}

// add records that the size bytes at host address start are the code of
// the unit compiled from the guest block at guest, in perf's format:
// "START SIZE name", both numbers in hexadecimal.
// With parts set, marks (the unit's, as compileUnit made them) split the
// code into parts named by partName.
func (p *perfMap) add(start uintptr, size int, vb *gvinst.VBlock, loop bool, marks []mark) error {
	guest := vb.Addr
	if p.parts {
		return p.addParts(start, size, vb, marks)
	}
	kind := "jit"
	if loop {
		kind = "jit-loop"
	}
	if _, err := fmt.Fprintf(p.f, "%x %x %s:%#x\n", start, size, kind, guest); err != nil {
		return fmt.Errorf("writing the perf map: %w", err)
	}
	return nil
}

// addParts writes one line per part of a unit's code.
func (p *perfMap) addParts(start uintptr, size int, vb *gvinst.VBlock, marks []mark) error {
	pos, name := 0, fmt.Sprintf("entry@%#x", vb.Addr)
	control := -1 // the mark of the block's last instruction
	for i, mk := range marks {
		if mk.inst >= 0 {
			control = i
		}
	}
	emit := func(end int) error {
		if end <= pos {
			return nil
		}
		_, err := fmt.Fprintf(p.f, "%x %x part:%s\n", start+uintptr(pos), end-pos, name)
		return err
	}
	for i, mk := range marks {
		if err := emit(mk.pos); err != nil {
			return fmt.Errorf("writing the perf map: %w", err)
		}
		pos, name = mk.pos, partName(mk.label(vb), i == control)
	}
	if err := emit(size); err != nil {
		return fmt.Errorf("writing the perf map: %w", err)
	}
	return nil
}

// partName is the perf map name of the part a mark starts: the mnemonic
// of its instruction ("LD.u64"), "exit:" and the mnemonic for the unit's
// last, or what the mark says it is.
func partName(text string, control bool) string {
	switch {
	case strings.HasPrefix(text, "slow path"), strings.HasPrefix(text, "resume"):
		return "slow"
	}
	_, inst, ok := strings.Cut(text, ": ")
	if !ok {
		return strings.ReplaceAll(text, " ", "_")
	}
	op, _, _ := strings.Cut(inst, " ")
	if control {
		return "exit:" + op
	}
	return op
}

// close closes the file.
func (p *perfMap) close() error { return p.f.Close() }
