package ptxgen

import (
	"bytes"
	"testing"
	"time"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gvinst"
)

// slowAllocContext is a device context whose allocations take delay, as a
// real GPU's large cuMemAlloc may.
type slowAllocContext struct {
	gpu.Context
	delay time.Duration
}

func (c slowAllocContext) Alloc(n uint64) (gpu.DevicePtr, error) {
	time.Sleep(c.delay)
	return c.Context.Alloc(n)
}

// TestCopyParts checks what counts as copy time: a launch's allocations
// (slowed down here) are in its CopyIn and in Parts.Alloc; the bytes the
// device's copies moved are the launch's BytesIn and BytesOut (and the
// error record read back); the parts never add up to more than the copy
// time, and Other is the rest of it. A third launch over the same
// buffers allocates nothing.
func TestCopyParts(t *testing.T) {
	const n = 3000
	const delay = 20 * time.Millisecond
	_, k, ctx, fn := saxpyKernel(t)
	slow := slowAllocContext{ctx, delay}
	for _, lazy := range []bool{false, true} {
		mem, cpu := lazyGuest(t, n)
		res := Resident{Lazy: lazy}
		xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
		for round := 0; round < 3; round++ {
			st, err := Launch(slow, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), &res)
			if err != nil {
				t.Fatal(err)
			}
			p := st.Parts
			total := st.CopyIn + st.CopyOut
			if sum := p.counted() + p.Other; sum > total+time.Microsecond || sum+time.Microsecond < total {
				t.Errorf("lazy %v round %d: parts add up to %v, copy time %v (%+v)", lazy, round, sum, total, p)
			}
			if (p.BytesHtoD > 0) != (p.CopiesHtoD > 0) || p.CopiesHtoD > p.BytesHtoD {
				t.Errorf("lazy %v round %d: %d copies to the device for %d bytes", lazy, round, p.CopiesHtoD, p.BytesHtoD)
			}
			if p.BytesHtoD != st.BytesIn {
				t.Errorf("lazy %v round %d: %d bytes to the device, launch copied in %d", lazy, round, p.BytesHtoD, st.BytesIn)
			}
			if p.BytesDtoH != st.BytesOut+ErrorRecordSize {
				t.Errorf("lazy %v round %d: %d bytes from the device, want the %d copied out and the error record", lazy, round, p.BytesDtoH, st.BytesOut)
			}
			switch round {
			case 0:
				// Two buffers and the error record.
				if p.Alloc < 3*delay || st.CopyIn < p.Alloc {
					t.Errorf("lazy %v: allocations took %v, copy in %v; want at least %v in both", lazy, p.Alloc, st.CopyIn, 3*delay)
				}
				if st.BytesIn != 2*8*n {
					t.Errorf("lazy %v: copied in %d bytes, want both arrays", lazy, st.BytesIn)
				}
			case 2:
				// (The second lazy launch allocates the spare its backup
				// of y goes in.)
				if p.Alloc != 0 {
					t.Errorf("lazy %v: the third launch allocated (%v)", lazy, p.Alloc)
				}
			}
			if lazy && st.BytesOut != 0 {
				t.Errorf("round %d: a lazy launch copied %d bytes out", round, st.BytesOut)
			}
		}
		if err := res.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// pinningContext is a device context that hands out "pinned" host buffers
// (Go memory here) and counts the copies made from and into them.
type pinningContext struct {
	gpu.Context
	pinned          [][]byte
	freed           int
	htod, dtoh, all int
}

func (c *pinningContext) AllocPinned(n uint64) ([]byte, error) {
	b := make([]byte, n)
	c.pinned = append(c.pinned, b)
	return b, nil
}

func (c *pinningContext) FreePinned(b []byte) error {
	c.freed++
	return nil
}

// inPinned reports whether b lies in one of the buffers handed out.
func (c *pinningContext) inPinned(b []byte) bool {
	for _, p := range c.pinned {
		if sameBacking(p, b) {
			return true
		}
	}
	return false
}

// sameBacking reports whether b is a slice of p.
func sameBacking(p, b []byte) bool {
	return cap(b) > 0 && cap(p) >= cap(b) && &p[:cap(p)][cap(p)-1] == &b[:cap(b)][cap(b)-1]
}

func (c *pinningContext) CopyHtoD(dst gpu.DevicePtr, src []byte) error {
	c.all++
	if c.inPinned(src) {
		c.htod++
	}
	return c.Context.CopyHtoD(dst, src)
}

func (c *pinningContext) CopyHtoDAsync(dst gpu.DevicePtr, src []byte) error {
	c.all++
	if c.inPinned(src) {
		c.htod++
	}
	return c.Context.CopyHtoDAsync(dst, src)
}

func (c *pinningContext) CopyDtoH(dst []byte, src gpu.DevicePtr) error {
	if c.inPinned(dst) {
		c.dtoh++
	}
	return c.Context.CopyDtoH(dst, src)
}

// TestResidentStagesPinned checks that a lazy Resident over a context that
// can pin host memory stages its copies in one pinned buffer, both ways
// (the arrays copied in, the pages brought back when the guest reads
// them), frees it at Close, and leaves the guest as the CPU engine does.
func TestResidentStagesPinned(t *testing.T) {
	const n = 3000
	bs, k, ctx, fn := saxpyKernel(t)
	pc := &pinningContext{Context: ctx}
	refMem, refCPU := lazyGuest(t, n)
	mem, cpu := lazyGuest(t, n)
	rc := *refCPU
	rc.State[gvinst.S2] = 8 * (n - 1) // the reference runs the GPU's part
	runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), &rc)
	res := Resident{Lazy: true}
	in := saxpyInput(k, cpu, n, Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n})
	if _, err := Launch(pc, fn, k, mem, in, &res); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 0x10000)
	if err := mem.Read(dataBase, got); err != nil { // brings y back
		t.Fatal(err)
	}
	if len(pc.pinned) != 1 || pc.htod == 0 || pc.htod != pc.all || pc.dtoh == 0 {
		t.Errorf("%d pinned buffers; %d of %d copies in and %d copies back through them; want one buffer and every copy", len(pc.pinned), pc.htod, pc.all, pc.dtoh)
	}
	if err := res.Close(); err != nil {
		t.Fatal(err)
	}
	if pc.freed != 1 {
		t.Errorf("Close freed %d pinned buffers, want 1", pc.freed)
	}
	want := make([]byte, 0x10000)
	_ = refMem.Read(dataBase, want)
	if !bytes.Equal(want, got) {
		t.Fatal("memory differs from the CPU engine's")
	}
}
