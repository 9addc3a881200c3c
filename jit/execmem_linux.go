//go:build linux && amd64

package jit

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// codeArena is the executable memory compiled units live in: one mapping,
// filled from the start. Its pages are never writable and executable at
// once (W^X): write flips the pages it touches to read-write, copies, and
// flips them back to read-execute.
type codeArena struct {
	mem  []byte
	used int
	kept int // the start that reset keeps: the shared routines
	// protects counts the mprotect calls made.
	protects uint64
}

// newCodeArena maps size bytes (a multiple of the page size) of memory,
// readable and executable, empty.
func newCodeArena(size int) (*codeArena, error) {
	m, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil, fmt.Errorf("mapping %d bytes of code memory: %w", size, err)
	}
	return &codeArena{mem: m}, nil
}

// free unmaps the arena.
func (c *codeArena) free() error {
	if c.mem == nil {
		return nil
	}
	err := unix.Munmap(c.mem)
	c.mem = nil
	return err
}

// room reports whether n more bytes fit.
func (c *codeArena) room(n int) bool { return c.used+n <= len(c.mem) }

// reset forgets all code but the kept start (the caller has dropped every
// unit).
func (c *codeArena) reset() { c.used = c.kept }

// keep makes reset keep the code placed so far.
func (c *codeArena) keep() { c.kept = c.used }

// add copies code into the arena, 16-byte aligned, and returns its offset.
func (c *codeArena) add(code []byte) (int, error) {
	at := (c.used + 15) &^ 15
	if at+len(code) > len(c.mem) {
		return 0, fmt.Errorf("code arena full")
	}
	if err := c.write(at, code); err != nil {
		return 0, err
	}
	c.used = at + len(code)
	return at, nil
}

// write copies b to offset at, flipping the pages it covers to RW and back
// to RX.
func (c *codeArena) write(at int, b []byte) error {
	const pg = 4096
	lo := at &^ (pg - 1)
	hi := (at + len(b) + pg - 1) &^ (pg - 1)
	span := c.mem[lo:hi]
	if err := c.protect(span, unix.PROT_READ|unix.PROT_WRITE); err != nil {
		return fmt.Errorf("making code memory writable: %w", err)
	}
	copy(c.mem[at:], b)
	if err := c.protect(span, unix.PROT_READ|unix.PROT_EXEC); err != nil {
		return fmt.Errorf("making code memory executable: %w", err)
	}
	return nil
}

// codePatch is bytes b to write at arena offset at.
type codePatch struct {
	at int
	b  []byte
}

// writePatches writes patches, sorted by offset, with one pair of
// mprotect calls over the pages from the first to the last.
func (c *codeArena) writePatches(patches []codePatch) error {
	if len(patches) == 0 {
		return nil
	}
	const pg = 4096
	lo := patches[0].at &^ (pg - 1)
	hi := 0
	for _, p := range patches {
		hi = max(hi, (p.at+len(p.b)+pg-1)&^(pg-1))
	}
	span := c.mem[lo:hi]
	if err := c.protect(span, unix.PROT_READ|unix.PROT_WRITE); err != nil {
		return fmt.Errorf("making code memory writable: %w", err)
	}
	for _, p := range patches {
		copy(c.mem[p.at:], p.b)
	}
	if err := c.protect(span, unix.PROT_READ|unix.PROT_EXEC); err != nil {
		return fmt.Errorf("making code memory executable: %w", err)
	}
	return nil
}

// protect sets the protection of span, counting the calls.
func (c *codeArena) protect(span []byte, prot int) error {
	c.protects++
	return unix.Mprotect(span, prot)
}

// addr is the host address of offset at.
func (c *codeArena) addr(at int) uintptr { return uintptrOf(&c.mem[at]) }
