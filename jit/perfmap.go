//go:build linux && amd64

package jit

import (
	"fmt"
	"os"
)

// PerfMapEnv names the environment variable that turns on the perf map:
// when it is set to 1, every engine writes a line for each unit it
// compiles to /tmp/perf-PID.map, the file Linux perf reads to name code
// that no ELF file describes (perf record, then perf report shows each
// unit as jit:0xGUESTADDR). When the arena fills up and compiling starts
// over, its addresses are reused; the later lines describe them.
const PerfMapEnv = "GXBIT_PERFMAP"

// perfMap appends one line per compiled unit to a perf map file.
type perfMap struct {
	f *os.File
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
	if os.Getenv(PerfMapEnv) != "1" {
		return nil, nil
	}
	return openPerfMap(fmt.Sprintf("/tmp/perf-%d.map", os.Getpid()))
}

// add records that the size bytes at host address start are the code of
// the unit compiled from the guest block at guest, in perf's format:
// "START SIZE name", both numbers in hexadecimal.
func (p *perfMap) add(start uintptr, size int, guest uint64, loop bool) error {
	kind := "jit"
	if loop {
		kind = "jit-loop"
	}
	if _, err := fmt.Fprintf(p.f, "%x %x %s:%#x\n", start, size, kind, guest); err != nil {
		return fmt.Errorf("writing the perf map: %w", err)
	}
	return nil
}

// close closes the file.
func (p *perfMap) close() error { return p.f.Close() }
