package ptxgen

import (
	"testing"
	"time"

	"github.com/gxbit/gxbit/gpu"
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
