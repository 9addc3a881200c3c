package linux

import (
	"context"
	"errors"
	"fmt"

	"github.com/gxbit/gxbit/gvinst"
)

// ErrInterrupted is returned by Syscall when the context given to
// SetContext ended while a system call was running: the guest must stop.
var ErrInterrupted = errors.New("system call interrupted: the run was cancelled")

// SetContext makes the process's long system calls (big reads and writes,
// file mappings, sleeps) give up with ErrInterrupted soon after ctx ends:
// a chunk of work (ioChunk bytes, or a sleep's wake-up) at most.
func (p *Process) SetContext(ctx context.Context) { p.ctx = ctx }

// interrupted returns ErrInterrupted, wrapping the context's error, once
// the context given to SetContext has ended.
func (p *Process) interrupted() error {
	if p.ctx == nil {
		return nil
	}
	if err := p.ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrInterrupted, err)
	}
	return nil
}

// ioChunk is how many bytes a system call that takes a guest buffer moves
// at a time: the host memory it needs, whatever length the guest asks for.
const ioChunk = 1 << 16

// ioBuffer is the Process's ioChunk bytes of host memory for moving guest
// buffers through system calls, taken once: a fresh buffer per call made
// each read(2) of a large file fault its host pages in again (a tenth of
// sha256sum's time). The calls do not keep it (interruptible copies).
func (p *Process) ioBuffer() []byte {
	if p.ioBuf == nil {
		p.ioBuf = make([]byte, ioChunk)
	}
	return p.ioBuf
}

// faultPrefix is how many bytes of a guest copy of len n starting at addr
// went through before err, a *gvinst.Fault at the first byte that did not
// (the Memory copies page by page, in order).
func faultPrefix(err error, addr, n uint64) uint64 {
	var f *gvinst.Fault
	if errors.As(err, &f) && f.Addr >= addr && f.Addr-addr < n {
		return f.Addr - addr
	}
	return 0
}

// writeFrom hands n guest bytes at addr to put a chunk at a time, as
// write(2) does (wait: put may block; see interruptible): it stops at the first short or failed put, or at the first
// byte the guest cannot read, and reports the bytes put. No byte moved is
// EFAULT (unreadable buffer) or put's error.
func (p *Process) writeFrom(addr, n uint64, wait bool, put func([]byte) (int, error)) (uint64, error) {
	buf := p.ioBuffer()[:min(n, ioChunk)]
	done := uint64(0)
	for done < n {
		if err := p.interrupted(); err != nil {
			return done, err
		}
		chunk := buf[:min(n-done, uint64(len(buf)))]
		readable := uint64(len(chunk))
		if err := p.mem.Read(addr+done, chunk); err != nil {
			readable = faultPrefix(err, addr+done, readable)
		}
		if readable == 0 {
			if done == 0 {
				return 0, EFAULT
			}
			return done, nil
		}
		k, err := p.interruptible(wait, chunk[:readable], put)
		done += uint64(k)
		if errors.Is(err, ErrInterrupted) {
			return done, err
		}
		if err != nil {
			if done == 0 {
				return 0, errnoOf(err)
			}
			return done, nil
		}
		if uint64(k) < readable || readable < uint64(len(chunk)) {
			break
		}
	}
	return done, nil
}

// readInto fills up to n guest bytes at addr from get a chunk at a time, as
// read(2) does. It asks get only for as many bytes as the guest can take
// (so a bad buffer consumes nothing and is EFAULT), and asks again only
// while more is wanted, each get filled its chunk, and more is set (for
// regular files; a stream or pipe is read once, so that a read never waits
// for more than the first answer).
func (p *Process) readInto(addr, n uint64, more bool, get func([]byte) (int, error)) (uint64, error) {
	buf := p.ioBuffer()[:min(n, ioChunk)]
	done := uint64(0)
	for done < n {
		if err := p.interrupted(); err != nil {
			return done, err
		}
		chunk := buf[:p.writablePrefix(addr+done, min(n-done, uint64(len(buf))))]
		if len(chunk) == 0 {
			if done == 0 {
				return 0, EFAULT
			}
			return done, nil
		}
		k, err := p.interruptible(!more, chunk, get)
		if errors.Is(err, ErrInterrupted) {
			return done, err
		}
		if k > 0 {
			if err := p.mem.Write(addr+done, chunk[:k]); err != nil {
				return done, EFAULT
			}
			done += uint64(k)
		}
		if err != nil {
			if done == 0 {
				return 0, errnoOf(err)
			}
			return done, nil
		}
		if !more || k < len(chunk) {
			break
		}
	}
	return done, nil
}

// writablePrefix is how many of the n bytes at addr the guest may write,
// counted from addr.
func (p *Process) writablePrefix(addr, n uint64) uint64 {
	done := uint64(0)
	for done < n {
		perm, ok := p.mem.PermAt(addr + done)
		if !ok || perm&gvinst.PermWrite == 0 {
			break
		}
		done += gvinst.PageSize - (addr+done)%gvinst.PageSize
	}
	return min(done, n)
}

// readResult is what one read from a descriptor returned.
type readResult struct {
	n   int
	err error
}

// interruptible calls get(b) (a read or a write), and when wait is set (a
// stream, which may block until the other end reads or writes, as a
// terminal or a pipe to another program does) gives up with ErrInterrupted as soon as the run's context
// ends. The abandoned read then finishes on its own into a buffer no one
// reads; the guest is stopping anyway.
func (p *Process) interruptible(wait bool, b []byte, get func([]byte) (int, error)) (int, error) {
	if !wait || p.ctx == nil {
		return get(b)
	}
	// The call works on a copy, which it may still hold after an
	// interruption.
	own := append([]byte(nil), b...)
	done := make(chan readResult, 1)
	go func() {
		n, err := get(own)
		done <- readResult{n, err}
	}()
	select {
	case r := <-done:
		copy(b, own[:max(0, min(r.n, len(own)))])
		return r.n, r.err
	case <-p.ctx.Done():
		return 0, p.interrupted()
	}
}
