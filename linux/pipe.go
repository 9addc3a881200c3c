package linux

import (
	"encoding/binary"

	"github.com/gxbit/gxbit/gvinst"
)

// pipeBuf is an in-process pipe. The guest is single-threaded, so a read of
// an empty pipe whose write end is open could never be satisfied: it fails
// with EAGAIN instead of blocking forever.
type pipeBuf struct {
	data    []byte
	readers int
	writers int
}

type pipeEnd struct {
	p     *pipeBuf
	write bool
}

func (e *pipeEnd) Read(b []byte) (int, error) {
	if e.write {
		return 0, EBADF
	}
	if len(e.p.data) == 0 {
		if e.p.writers == 0 {
			return 0, nil
		}
		return 0, EAGAIN
	}
	n := copy(b, e.p.data)
	e.p.data = e.p.data[n:]
	return n, nil
}

func (e *pipeEnd) Write(b []byte) (int, error) {
	if !e.write {
		return 0, EBADF
	}
	if e.p.readers == 0 {
		return 0, EPIPE
	}
	if len(e.p.data)+len(b) > 1<<20 {
		return 0, EAGAIN
	}
	e.p.data = append(e.p.data, b...)
	return len(b), nil
}

func (e *pipeEnd) Close() error {
	if e.write {
		e.p.writers--
	} else {
		e.p.readers--
	}
	return nil
}

// Pipe2 implements linux syscall pipe2(2) (and pipe(2)) with an in-process
// buffer.
func (p *Process) Pipe2(_ *gvinst.CPU, a args) (uint64, error) {
	if a[1]&^uint64(oCloexec|oNonblock) != 0 {
		return 0, EINVAL
	}
	buf := &pipeBuf{readers: 1, writers: 1}
	cloexec := a[1]&oCloexec != 0
	r, err := p.newFD(&fileDesc{f: &pipeEnd{p: buf}, path: "pipe:", flags: int(a[1]), cloexec: cloexec}, 0)
	if err != nil {
		return 0, err
	}
	w, err := p.newFD(&fileDesc{f: &pipeEnd{p: buf, write: true}, path: "pipe:", flags: int(a[1]) | oWronly, cloexec: cloexec}, 0)
	if err != nil {
		delete(p.fds, r)
		return 0, err
	}
	b := make([]byte, 8)
	binary.LittleEndian.PutUint32(b, uint32(r))
	binary.LittleEndian.PutUint32(b[4:], uint32(w))
	if err := p.writeBytes(a[0], b); err != nil {
		delete(p.fds, r)
		delete(p.fds, w)
		return 0, err
	}
	return 0, nil
}

// Pipe implements linux syscall pipe(2).
func (p *Process) Pipe(cpu *gvinst.CPU, a args) (uint64, error) {
	return p.Pipe2(cpu, args{a[0], 0})
}

// poll events.
const (
	pollIn   = 0x1
	pollOut  = 0x4
	pollErr  = 0x8
	pollHup  = 0x10
	pollNval = 0x20
)

// Poll implements linux syscall poll(2) (and ppoll(2)): files, terminals
// and the standard streams are always ready; a pipe is readable when it
// holds data or its writers are gone. Nothing ever waits, since nothing
// could change while the single guest thread waits.
func (p *Process) Poll(_ *gvinst.CPU, a args) (uint64, error) {
	n := a[1]
	if n > 1024 {
		return 0, EINVAL
	}
	raw, err := p.readBytes(a[0], n*8)
	if err != nil {
		return 0, err
	}
	ready := uint64(0)
	for i := uint64(0); i < n; i++ {
		ent := raw[i*8:]
		fd := int(int32(binary.LittleEndian.Uint32(ent)))
		events := binary.LittleEndian.Uint16(ent[4:])
		var rev uint16
		if fd >= 0 {
			d, ok := p.fds[fd]
			switch {
			case !ok:
				rev = pollNval
			default:
				if pe, isPipe := d.f.(*pipeEnd); isPipe {
					if !pe.write && (len(pe.p.data) > 0 || pe.p.writers == 0) {
						rev |= events & pollIn
					}
					if !pe.write && pe.p.writers == 0 {
						rev |= pollHup
					}
					if pe.write {
						rev |= events & pollOut
						if pe.p.readers == 0 {
							rev |= pollErr
						}
					}
				} else {
					rev = events & (pollIn | pollOut)
				}
			}
		}
		binary.LittleEndian.PutUint16(ent[6:], rev)
		if rev != 0 {
			ready++
		}
	}
	return ready, p.writeBytes(a[0], raw)
}

// Ppoll implements linux syscall ppoll(2) as poll(2).
func (p *Process) Ppoll(cpu *gvinst.CPU, a args) (uint64, error) { return p.Poll(cpu, a) }

// Getxattr implements linux syscalls getxattr(2), lgetxattr(2) and
// fgetxattr(2): gxbit shows no extended attributes.
func (p *Process) Getxattr(*gvinst.CPU, args) (uint64, error) { return 0, ENODATA }

// Listxattr implements linux syscalls listxattr(2), llistxattr(2) and
// flistxattr(2): an empty list.
func (p *Process) Listxattr(*gvinst.CPU, args) (uint64, error) { return 0, nil }
