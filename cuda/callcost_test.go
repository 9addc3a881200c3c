package cuda

import (
	"fmt"
	"testing"

	"github.com/gxbit/gxbit/gpu"
)

// BenchmarkCallCost measures what one driver call costs, by kind and
// size, on an idle device: a call of the driver's caller alone (no GPU
// needed), copies each way of 16 bytes to 1 MiB from Go and from pinned
// memory, a copy on the device, and a launch of a tiny kernel with its
// synchronisation and statistics, as a launch of phase 2 makes them.
// Phase 2 brings pages back and copies changed ones in a copy at a time:
// the fixed cost of a call, against the bus's bandwidth, says how many
// bytes a copy should carry at least. The step benchmarks compare a
// launch's device work made of calls that each wait with the same work
// queued on the stream and waited for once; queued/… is what queueing a
// copy costs the host.
func BenchmarkCallCost(b *testing.B) {
	b.Run("handoff", func(b *testing.B) {
		w := &caller{}
		for range b.N {
			w.do(func() {})
		}
	})
	c, f, out := gateFixture(b)
	const most = 1 << 20
	dev, err := c.Alloc(2 * most)
	if err != nil {
		b.Fatal(err)
	}
	pinned, err := c.AllocPinned(most)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.FreePinned(pinned) }()
	goMem := make([]byte, most)
	for _, n := range []int{16, 4 << 10, 64 << 10, most} {
		for _, mem := range []string{"go", "pinned"} {
			buf := goMem[:n]
			if mem == "pinned" {
				buf = pinned[:n]
			}
			b.Run(fmt.Sprintf("DtoH/%s/%d", mem, n), func(b *testing.B) {
				b.SetBytes(int64(n))
				for range b.N {
					if err := c.CopyDtoH(buf, dev); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("HtoD/%s/%d", mem, n), func(b *testing.B) {
				b.SetBytes(int64(n))
				for range b.N {
					if err := c.CopyHtoD(dev, buf); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(fmt.Sprintf("DtoD/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for range b.N {
				if err := c.CopyDtoD(dev+most, dev, uint64(n)); err != nil {
					b.Fatal(err)
				}
			}
			if err := c.Synchronize(); err != nil {
				b.Fatal(err)
			}
		})
	}
	b.Run("launch", func(b *testing.B) {
		launchIDs(b, c, f, out) // the first launch is never gated
		for range b.N {
			launchIDs(b, c, f, out)
		}
	})
	// The same launches with the gate (gate.go) off: what holding the
	// stream costs a launch's wall.
	b.Run("launch/ungated", func(b *testing.B) {
		launchIDs(b, c, f, out)
		setGate := func(off bool) {
			_ = c.run("gate", func() error { c.gate.off = off; return nil })
		}
		setGate(true)
		defer setGate(false)
		for range b.N {
			launchIDs(b, c, f, out)
		}
	})
	// A launch of phase 2 as a whole, for n copies in of 4 KiB from
	// pinned memory and a backup on the device of 64 KiB: "waiting",
	// as it made them before, a batch of the copies that waits, a
	// synchronous copy on the device, the launch and its wait; "queued",
	// as it makes them now, the copies and the backup queued on the
	// stream in front of the launch, and one wait.
	for _, n := range []int{1, 4, 16} {
		copies := make([]gpu.Copy, n)
		for i := range copies {
			copies[i] = gpu.Copy{Dev: dev + gpu.DevicePtr(i*8192), Host: pinned[i*4096 : (i+1)*4096]}
		}
		b.Run(fmt.Sprintf("step/waiting/%d", n), func(b *testing.B) {
			launchIDs(b, c, f, out)
			for range b.N {
				if err := c.CopyBatch(copies); err != nil {
					b.Fatal(err)
				}
				if err := c.CopyDtoD(dev+most, dev, 64<<10); err != nil {
					b.Fatal(err)
				}
				launchIDs(b, c, f, out)
			}
		})
		b.Run(fmt.Sprintf("step/queued/%d", n), func(b *testing.B) {
			launchIDs(b, c, f, out)
			for range b.N {
				if err := c.QueueBatch(copies); err != nil {
					b.Fatal(err)
				}
				if err := c.CopyDtoDAsync(dev+most, dev, 64<<10); err != nil {
					b.Fatal(err)
				}
				launchIDs(b, c, f, out)
			}
		})
	}
	for _, n := range []int{4 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("queued/HtoD/pinned/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for range b.N {
				if err := c.CopyHtoDAsync(dev, pinned[:n]); err != nil {
					b.Fatal(err)
				}
			}
			if err := c.Synchronize(); err != nil {
				b.Fatal(err)
			}
		})
		b.Run(fmt.Sprintf("queued/DtoD/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for range b.N {
				if err := c.CopyDtoDAsync(dev+most, dev, uint64(n)); err != nil {
					b.Fatal(err)
				}
			}
			if err := c.Synchronize(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
