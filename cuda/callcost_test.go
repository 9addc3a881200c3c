package cuda

import (
	"fmt"
	"testing"
)

// BenchmarkCallCost measures what one driver call costs, by kind and
// size, on an idle device: the hand-off to the worker alone (no GPU
// needed), copies each way of 16 bytes to 1 MiB from Go and from pinned
// memory, a copy on the device, and a launch of a tiny kernel with its
// synchronisation and statistics, as a launch of phase 2 makes them.
// Phase 2 brings pages back and copies changed ones in a copy at a time:
// the fixed cost of a call, against the bus's bandwidth, says how many
// bytes a copy should carry at least.
func BenchmarkCallCost(b *testing.B) {
	b.Run("handoff", func(b *testing.B) {
		w := newWorker()
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
}
