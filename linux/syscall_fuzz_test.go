package linux

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gxbit/gxbit/gvinst"
)

// The fuzz guest: a small process over a 64 MiB memory limit, with 16
// scratch pages at fuzzScratch holding the strings below, and a root
// directory with one file and one writable directory.
const (
	fuzzScratch   = 0x10000
	fuzzPages     = 16
	fuzzMaxMem    = 64 << 20
	fuzzCallBytes = 2 + 6*8 // one call: number, then six arguments
	fuzzMaxCalls  = 4
	// fuzzInterrupt is when the run's context ends, so that sleeps and
	// long transfers are cut short; fuzzDeadline is how long one call may
	// take before the test calls it a hang.
	fuzzInterrupt = 200 * time.Millisecond
	fuzzDeadline  = 10 * time.Second
)

// fuzzStrings are NUL-terminated at fuzzScratch: paths for the calls
// that take one.
var fuzzStrings = "/f\x00/\x00/rw/new\x00/dev/null\x00/proc/self/exe\x00..\x00"

// fuzzRoot is the guest root shared by every fuzz call.
func fuzzRoot(f *testing.F) string {
	root := f.TempDir()
	if err := os.WriteFile(filepath.Join(root, "f"), []byte(strings.Repeat("fuzz data\n", 100)), 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "rw"), 0o755); err != nil {
		f.Fatal(err)
	}
	return root
}

// fuzzCall encodes one system call for the fuzz input.
func fuzzCall(nr uint16, a ...uint64) []byte {
	b := binary.LittleEndian.AppendUint16(nil, nr)
	var args [6]uint64
	copy(args[:], a)
	for _, v := range args {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b
}

// FuzzSyscalls makes up to four system calls with arbitrary numbers and
// arguments on a fresh small guest, and checks that none panics or takes
// longer than fuzzDeadline. The seeds below, and the named inputs in
// testdata/fuzz/FuzzSyscalls (the crashers found so far), run as a plain
// test.
func FuzzSyscalls(f *testing.F) {
	root := fuzzRoot(f)
	s := uint64(fuzzScratch)
	seeds := [][]byte{
		fuzzCall(1, 1, s, 5),                          // write
		fuzzCall(0, 0, 0x10, 1<<30),                   // read into a bad 1 GiB buffer
		fuzzCall(1, 1, 0x10, 1<<30),                   // write from one
		fuzzCall(9, 0, 1<<46, 3, 0x22, ^uint64(0), 0), // mmap 2^46
		fuzzCall(12, 1<<46),                           // brk
		append(fuzzCall(9, 0, 1<<20, 3, 0x22, ^uint64(0), 0), fuzzCall(25, 0x7ffff7eff000, 1<<20, 1<<40, 1)...), // mremap
		fuzzCall(28, s, 1<<40, 4), // madvise DONTNEED over unmapped pages
		append(fuzzCall(257, 0xffffff9c, s, 0, 0), fuzzCall(9, 0, 1<<40, 1, 2, 3, 0)...), // open, mmap the file
		append(fuzzCall(257, 0xffffff9c, s, 0, 0), fuzzCall(17, 3, s, 1<<40, 1<<62)...),  // open, pread
		fuzzCall(35, s+64, 0),      // nanosleep (the bytes there)
		fuzzCall(318, s, 1<<40, 0), // getrandom
		fuzzCall(7, s, 1<<20, 0),   // poll
		fuzzCall(20, 1, s, 1024),   // writev
		fuzzCall(217, 0, s, 1<<30), // getdents64 on stdin
		fuzzCall(62, 4242, 9),      // kill self
		fuzzCall(231, 3),           // exit_group
	}
	for _, seed := range seeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var calls [][7]uint64
		for len(data) >= fuzzCallBytes && len(calls) < fuzzMaxCalls {
			var c [7]uint64
			c[0] = fuzzNumber(binary.LittleEndian.Uint16(data))
			for i := range 6 {
				c[i+1] = binary.LittleEndian.Uint64(data[2+8*i:])
			}
			calls = append(calls, c)
			data = data[fuzzCallBytes:]
		}
		runFuzzCalls(t, root, calls)
	})
}

// fuzzNumber turns the fuzz input's number into a system call number: the
// numbers up to 0x7fff are themselves (with the seeds' calls as they are
// written), and 0x8000 + i is the i-th number of the table (mod its
// size), so that mutations mostly reach implemented calls.
func fuzzNumber(v uint16) uint64 {
	if v < 0x8000 {
		return uint64(v)
	}
	nrs := slices.Sorted(maps.Keys(table))
	return uint64(nrs[int(v-0x8000)%len(nrs)])
}

// runFuzzCalls makes calls on a fresh guest, each under the deadline.
func runFuzzCalls(t *testing.T, root string, calls [][7]uint64) {
	mem := gvinst.NewMemory(fuzzMaxMem)
	if err := mem.Map(fuzzScratch, fuzzPages*gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
		t.Fatal(err)
	}
	if err := mem.Poke(fuzzScratch, []byte(fuzzStrings)); err != nil {
		t.Fatal(err)
	}
	p, err := New(mem, Config{Root: root, Writable: []string{"/rw"}, Stdin: strings.NewReader("fuzz input\n"), Brk: 0x1000000})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), fuzzInterrupt)
	defer cancel()
	p.SetContext(ctx)
	cpu := &gvinst.CPU{PC: fuzzScratch + fuzzPages*gvinst.PageSize/2}
	for _, c := range calls {
		s := &cpu.State
		s[gvinst.S0] = c[0]
		s[7], s[6], s[2], s[10], s[8], s[9] = c[1], c[2], c[3], c[4], c[5], c[6]
		scratchMapped := mem.IsMapped(fuzzScratch, fuzzPages*gvinst.PageSize)
		done := make(chan error, 1)
		go func() {
			defer func() {
				if r := recover(); r != nil {
					done <- fmt.Errorf("panic: %v", r)
				}
			}()
			done <- p.Syscall(cpu)
		}()
		select {
		case err := <-done:
			var exit *ExitError
			var refused *UnsupportedError
			// Only munmap and mremap may take the scratch pages away.
			if scratchMapped && c[0] != 11 && c[0] != 25 && !mem.IsMapped(fuzzScratch, fuzzPages*gvinst.PageSize) {
				t.Fatalf("syscall %d%v unmapped the scratch pages", c[0], c[1:])
			}
			switch {
			case err == nil:
			case errors.As(err, &exit), errors.As(err, &refused), errors.Is(err, ErrInterrupted):
				return // the guest ended
			default:
				t.Fatalf("syscall %d%v: %v", c[0], c[1:], err)
			}
		case <-time.After(fuzzDeadline):
			t.Fatalf("syscall %d%v did not return within %v", c[0], c[1:], fuzzDeadline)
		}
	}
}
