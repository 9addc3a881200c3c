package ptxgen

import (
	"fmt"
	"time"

	"github.com/gxbit/gxbit/gpu"
)

// CopyParts splits the copy time of launches (LaunchStats.CopyIn and
// CopyOut) by what it went to, so that a report can say where a launch
// that copied few bytes spent its copy time: the device's calls
// (allocation, freeing, the transfers each way, copies on the device,
// memsets), the guest memory's side (reading the bytes to copy in,
// writing back what comes out, and the page marks that leave pages on
// the device or watch them), and the rest (Other: the Resident's own
// bookkeeping, walking its buffers and pages, comparing bytes).
type CopyParts struct {
	Alloc, Free                     time.Duration
	HostToDevice, DeviceToHost      time.Duration
	DeviceToDevice, Memset          time.Duration
	BytesHtoD, BytesDtoH, BytesDtoD uint64
	// CopiesHtoD, CopiesDtoH and CopiesDtoD count the copies each way: a
	// transfer's fixed cost (a call on the driver's thread, and for a
	// synchronous one a wait for the device, tens of microseconds) comes
	// once per copy, so bytes over time alone do not tell a slow link
	// from many small copies. A batch of copies (gpu.BatchCopier) counts
	// once each way it carries bytes; a queued copy (CopyHtoDAsync, …)
	// once.
	CopiesHtoD, CopiesDtoH, CopiesDtoD uint64
	// Waits counts the calls that waited for the device: synchronous
	// copies to or from the host, batches, and Synchronize (whose time
	// is the launch's, LaunchStats.LaunchWall, or for a copy's its
	// part's). A launch makes one, its kernel's Synchronize, when
	// everything it copies is queued.
	Waits uint64
	// GuestRead is reading guest memory into staging for a copy in (and
	// comparing it with a page's snapshot); GuestWrite writing copied-back
	// bytes into the guest; Marks the guest memory's page marks (Defer,
	// Watch, Undefer).
	GuestRead, GuestWrite, Marks time.Duration
	// Other is the copy time none of the above took.
	Other time.Duration
}

// Add adds o's times and bytes to p.
func (p *CopyParts) Add(o CopyParts) {
	p.Alloc += o.Alloc
	p.Free += o.Free
	p.HostToDevice += o.HostToDevice
	p.DeviceToHost += o.DeviceToHost
	p.DeviceToDevice += o.DeviceToDevice
	p.Memset += o.Memset
	p.BytesHtoD += o.BytesHtoD
	p.BytesDtoH += o.BytesDtoH
	p.BytesDtoD += o.BytesDtoD
	p.CopiesHtoD += o.CopiesHtoD
	p.CopiesDtoH += o.CopiesDtoH
	p.CopiesDtoD += o.CopiesDtoD
	p.Waits += o.Waits
	p.GuestRead += o.GuestRead
	p.GuestWrite += o.GuestWrite
	p.Marks += o.Marks
	p.Other += o.Other
}

// counted is the time the parts other than Other account for.
func (p *CopyParts) counted() time.Duration {
	return p.Alloc + p.Free + p.HostToDevice + p.DeviceToHost + p.DeviceToDevice + p.Memset + p.GuestRead + p.GuestWrite + p.Marks
}

// meteredContext is a device context whose memory calls add their time
// and bytes to the CopyParts parts points at (nowhere while it is nil).
// The kernel's launch passes through uncounted, its synchronization
// counted as a wait only (its time is the launch's).
type meteredContext struct {
	gpu.Context
	parts *CopyParts
}

// since adds the time from t0 to *d.
func (m *meteredContext) since(d *time.Duration, t0 time.Time) { *d += time.Since(t0) }

// copyWay is the way a copy goes: to the device, to the host, or on the
// device.
type copyWay int

const (
	toDevice copyWay = iota
	toHost
	onDevice
)

// copied counts a copy of n bytes the way w, whose call began at t0: its
// time, bytes and one copy that way, and a wait where the call waited for
// the device.
func (m *meteredContext) copied(w copyWay, t0 time.Time, n uint64, waited bool) {
	if m.parts == nil {
		return
	}
	p := m.parts
	d, bytes, copies := &p.HostToDevice, &p.BytesHtoD, &p.CopiesHtoD
	switch w {
	case toHost:
		d, bytes, copies = &p.DeviceToHost, &p.BytesDtoH, &p.CopiesDtoH
	case onDevice:
		d, bytes, copies = &p.DeviceToDevice, &p.BytesDtoD, &p.CopiesDtoD
	}
	m.since(d, t0)
	*bytes += n
	*copies++
	if waited {
		p.Waits++
	}
}

// Alloc allocates device memory, counting the call as Alloc.
func (m *meteredContext) Alloc(n uint64) (gpu.DevicePtr, error) {
	t0 := time.Now()
	p, err := m.Context.Alloc(n)
	if m.parts != nil {
		m.since(&m.parts.Alloc, t0)
	}
	return p, err
}

// Free frees device memory, counting the call as Free.
func (m *meteredContext) Free(p gpu.DevicePtr) error {
	t0 := time.Now()
	err := m.Context.Free(p)
	if m.parts != nil {
		m.since(&m.parts.Free, t0)
	}
	return err
}

// CopyHtoD copies to the device, counting the call and its bytes.
func (m *meteredContext) CopyHtoD(dst gpu.DevicePtr, src []byte) error {
	t0 := time.Now()
	err := m.Context.CopyHtoD(dst, src)
	m.copied(toDevice, t0, uint64(len(src)), true)
	return err
}

// CopyHtoDAsync queues a copy to the device, counting the call (its time
// is what queueing took) and its bytes.
func (m *meteredContext) CopyHtoDAsync(dst gpu.DevicePtr, src []byte) error {
	t0 := time.Now()
	err := m.Context.CopyHtoDAsync(dst, src)
	m.copied(toDevice, t0, uint64(len(src)), false)
	return err
}

// queueDtoHPinned queues a copy from the device into pinned host memory
// (the staging buffer's), which waits for nothing, counting the call and
// its bytes (a copy into memory the driver must stage waits: see
// CopyDtoHAsync).
func (m *meteredContext) queueDtoHPinned(dst []byte, src gpu.DevicePtr) error {
	t0 := time.Now()
	err := m.Context.CopyDtoHAsync(dst, src)
	m.copied(toHost, t0, uint64(len(dst)), false)
	return err
}

// CopyDtoHAsync queues a copy from the device, counting the call and its
// bytes.
func (m *meteredContext) CopyDtoHAsync(dst []byte, src gpu.DevicePtr) error {
	t0 := time.Now()
	err := m.Context.CopyDtoHAsync(dst, src)
	m.copied(toHost, t0, uint64(len(dst)), true)
	return err
}

// CopyDtoDAsync queues a copy on the device, counting the call and its
// bytes.
func (m *meteredContext) CopyDtoDAsync(dst, src gpu.DevicePtr, n uint64) error {
	t0 := time.Now()
	err := m.Context.CopyDtoDAsync(dst, src, n)
	m.copied(onDevice, t0, n, false)
	return err
}

// Synchronize waits for the context's work, counting a wait (its time is
// the caller's to count).
func (m *meteredContext) Synchronize() error {
	if m.parts != nil {
		m.parts.Waits++
	}
	return m.Context.Synchronize()
}

// CopyDtoH copies from the device, counting the call and its bytes.
func (m *meteredContext) CopyDtoH(dst []byte, src gpu.DevicePtr) error {
	t0 := time.Now()
	err := m.Context.CopyDtoH(dst, src)
	m.copied(toHost, t0, uint64(len(dst)), true)
	return err
}

// CopyDtoD copies on the device, counting the call and its bytes.
func (m *meteredContext) CopyDtoD(dst, src gpu.DevicePtr, n uint64) error {
	t0 := time.Now()
	err := m.Context.CopyDtoD(dst, src, n)
	m.copied(onDevice, t0, n, false)
	return err
}

// copyDtoHStrided copies rows at a stride from the device in one call
// where the context can (gpu.StridedCopier), counting it as one copy
// from the device, and reports whether it could.
func (m *meteredContext) copyDtoHStrided(dst []byte, src gpu.DevicePtr, width, pitch, rows uint64) (bool, error) {
	sc, ok := m.Context.(gpu.StridedCopier)
	if !ok {
		return false, nil
	}
	t0 := time.Now()
	err := sc.CopyDtoHStrided(dst, src, width, pitch, rows)
	m.copied(toHost, t0, uint64(len(dst)), false)
	return true, err
}

// CopyBatch runs copies as one call where the context can
// (gpu.BatchCopier), else one at a time; a batch counts as one copy each
// way it carries bytes (a copy's fixed cost is paid once a batch), its
// time split between the ways by their bytes.
func (m *meteredContext) CopyBatch(copies []gpu.Copy) error {
	bc, ok := m.Context.(gpu.BatchCopier)
	if !ok {
		for _, cp := range copies {
			var err error
			if cp.FromDevice {
				err = m.CopyDtoH(cp.Host, cp.Dev)
			} else {
				err = m.CopyHtoD(cp.Dev, cp.Host)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	t0 := time.Now()
	err := bc.CopyBatch(copies)
	if m.parts != nil {
		m.countBatch(copies, time.Since(t0))
		m.parts.Waits++
	}
	return err
}

// QueueBatch queues copies as one call where the context can
// (gpu.BatchQueuer), else one at a time; it counts as CopyBatch does, but
// for the wait it does not make.
func (m *meteredContext) QueueBatch(copies []gpu.Copy) error {
	bq, ok := m.Context.(gpu.BatchQueuer)
	if !ok {
		for i, cp := range copies {
			var err error
			if cp.FromDevice {
				err = m.CopyDtoHAsync(cp.Host, cp.Dev)
			} else {
				err = m.CopyHtoDAsync(cp.Dev, cp.Host)
			}
			if err != nil {
				return fmt.Errorf("copy %d of %d: %w", i, len(copies), err)
			}
		}
		return nil
	}
	t0 := time.Now()
	err := bq.QueueBatch(copies)
	if m.parts != nil {
		m.countBatch(copies, time.Since(t0))
	}
	return err
}

// countBatch counts a batch of copies that took d: once each way it
// carries bytes, its time split between the ways by their bytes.
func (m *meteredContext) countBatch(copies []gpu.Copy, d time.Duration) {
	var in, out uint64
	for _, cp := range copies {
		if cp.FromDevice {
			out += uint64(len(cp.Host))
		} else {
			in += uint64(len(cp.Host))
		}
	}
	if in+out > 0 {
		dIn := time.Duration(float64(d) * float64(in) / float64(in+out))
		m.parts.HostToDevice += dIn
		m.parts.DeviceToHost += d - dIn
	}
	m.parts.BytesHtoD += in
	m.parts.BytesDtoH += out
	if in > 0 {
		m.parts.CopiesHtoD++
	}
	if out > 0 {
		m.parts.CopiesDtoH++
	}
}

// copyBatch runs copies in ctx as one batch where it can
// (gpu.BatchCopier), else one at a time.
func copyBatch(ctx gpu.Context, copies []gpu.Copy) error {
	if bc, ok := ctx.(gpu.BatchCopier); ok {
		return bc.CopyBatch(copies)
	}
	for _, cp := range copies {
		var err error
		if cp.FromDevice {
			err = ctx.CopyDtoH(cp.Host, cp.Dev)
		} else {
			err = ctx.CopyHtoD(cp.Dev, cp.Host)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Memset sets device memory, counting the call as Memset.
func (m *meteredContext) Memset(dst gpu.DevicePtr, b byte, n uint64) error {
	t0 := time.Now()
	err := m.Context.Memset(dst, b, n)
	if m.parts != nil {
		m.since(&m.parts.Memset, t0)
	}
	return err
}

// timeGuest adds the time f takes to the part of parts that d selects,
// when parts is not nil.
func timeGuest(parts *CopyParts, d func(*CopyParts) *time.Duration, f func() error) error {
	if parts == nil {
		return f()
	}
	t0 := time.Now()
	err := f()
	*d(parts) += time.Since(t0)
	return err
}

func guestRead(p *CopyParts) *time.Duration  { return &p.GuestRead }
func guestWrite(p *CopyParts) *time.Duration { return &p.GuestWrite }
func marks(p *CopyParts) *time.Duration      { return &p.Marks }
