package cuda

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
)

// TestStagedCopies round-trips buffers of sizes around the staging
// buffer's (below stageMin, one half, several halves and a ragged end) at
// an odd offset into an allocation, host to device and back, through the
// staged and the pageable paths, and checks every byte.
func TestStagedCopies(t *testing.T) {
	d := newDriver(t)
	gctx, err := d.NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer gctx.Close()
	c := gctx.(*Context)
	const off = 3
	for _, n := range []int{stageMin - 1, stageMin, stageHalf, 5*stageHalf + 12345} {
		src := make([]byte, n)
		rand.New(rand.NewSource(int64(n))).Read(src)
		dev, err := c.Alloc(uint64(n + 2*off))
		if err != nil {
			t.Fatal(err)
		}
		for _, unstaged := range []bool{false, true} {
			c.unstaged = unstaged
			if err := c.Memset(dev, 0, uint64(n+2*off)); err != nil {
				t.Fatal(err)
			}
			if err := c.CopyHtoD(dev+off, src); err != nil {
				t.Fatalf("%d bytes in (unstaged %v): %v", n, unstaged, err)
			}
			back := make([]byte, n+2*off)
			if err := c.CopyDtoH(back, dev); err != nil {
				t.Fatalf("%d bytes back (unstaged %v): %v", n, unstaged, err)
			}
			if !bytes.Equal(back[off:off+n], src) || !bytes.Equal(back[:off], make([]byte, off)) || !bytes.Equal(back[off+n:], make([]byte, off)) {
				t.Errorf("%d bytes (unstaged %v): the round trip differs", n, unstaged)
			}
		}
		c.unstaged = false
		if err := c.Free(dev); err != nil {
			t.Fatal(err)
		}
	}
	if c.staging.failed {
		t.Log("no pinned memory: every copy took the pageable path")
	}
}

// BenchmarkCopy measures host↔device copies of 256 MiB from freshly
// allocated Go memory (as a guest's first footprint is) and from reused
// Go memory, staged through pinned memory and through the driver's
// pageable path, and from a buffer of AllocPinned's (the bus's speed), and
// reports GB/s.
func BenchmarkCopy(b *testing.B) {
	d := New()
	if err := d.Init(); err != nil {
		b.Skipf("no CUDA back end here: %v", err)
	}
	gctx, err := d.NewContext(0)
	if err != nil {
		b.Fatal(err)
	}
	defer gctx.Close()
	c := gctx.(*Context)
	const n = 256 << 20
	dev, err := c.Alloc(n)
	if err != nil {
		b.Fatal(err)
	}
	reused := make([]byte, n)
	pinned, err := c.AllocPinned(n)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.FreePinned(pinned) }()
	for _, path := range []string{"staged", "pageable", "pinned"} {
		for _, mem := range []string{"fresh", "reused"} {
			if path == "pinned" && mem == "fresh" {
				continue
			}
			for _, dir := range []string{"HtoD", "DtoH"} {
				b.Run(fmt.Sprintf("%s/%s/%s", path, mem, dir), func(b *testing.B) {
					c.unstaged = path == "pageable"
					defer func() { c.unstaged = false }()
					b.SetBytes(n)
					for i := 0; i < b.N; i++ {
						buf := reused
						if path == "pinned" {
							buf = pinned
						}
						if mem == "fresh" {
							b.StopTimer()
							buf = make([]byte, n)
							b.StartTimer()
						}
						var err error
						if dir == "HtoD" {
							err = c.CopyHtoD(dev, buf)
						} else {
							err = c.CopyDtoH(buf, dev)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// TestPinnedCopies round-trips bytes between the device and buffers of
// AllocPinned's (copies that go straight to the driver, unstaged), checks
// every byte, and that FreePinned refuses a buffer it does not know.
func TestPinnedCopies(t *testing.T) {
	d := newDriver(t)
	gctx, err := d.NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer gctx.Close()
	c := gctx.(*Context)
	const n = 3*stageMin + 17
	in, err := c.AllocPinned(n)
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.AllocPinned(n)
	if err != nil {
		t.Fatal(err)
	}
	rand.New(rand.NewSource(1)).Read(in)
	dev, err := c.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CopyHtoD(dev, in[5:]); err != nil {
		t.Fatal(err)
	}
	if err := c.CopyDtoH(out[:n-5], dev); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out[:n-5], in[5:]) {
		t.Error("the round trip through pinned buffers differs")
	}
	if err := c.FreePinned(in); err != nil {
		t.Fatal(err)
	}
	if err := c.FreePinned(in); err == nil {
		t.Error("freeing a pinned buffer twice succeeded")
	}
	if err := c.FreePinned(make([]byte, 8)); err == nil {
		t.Error("freeing Go memory as pinned succeeded")
	}
	// out goes with the context.
}
