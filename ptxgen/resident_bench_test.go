package ptxgen

import (
	"runtime/debug"
	"testing"

	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/gvinst"
)

// BenchmarkResidentMerge measures the Resident's side of a launch whose
// footprint grows over a buffer a kernel left on the device (atax's
// matrix, made on the device but for the rows the CPU ran, then read
// whole): 256 MiB, all stale, merged with a few pages on each side.
func BenchmarkResidentMerge(b *testing.B) {
	const base, n = 0x10000000, 256 << 20
	ctx, err := gpusim.New(gpusim.Options{}).NewContext(0)
	if err != nil {
		b.Fatal(err)
	}
	defer ctx.Close()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		mem := gvinst.NewMemory(0)
		if err := mem.Map(base, n+2*16*gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
			b.Fatal(err)
		}
		res := &Resident{Lazy: true, MaxBytes: 1 << 30}
		if err := res.bind(ctx, mem); err != nil {
			b.Fatal(err)
		}
		born := Range{base + 16*gvinst.PageSize, base + 16*gvinst.PageSize + n}
		buf, _, _, err := res.acquire(res.ctx, mem, born)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := buf.load(res.ctx, mem, res, born, born); err != nil {
			b.Fatal(err)
		}
		if err := res.deferRange(buf, born); err != nil {
			b.Fatal(err)
		}
		buf.pinned = false
		b.StartTimer()
		all := Range{base, base + n + 2*16*gvinst.PageSize}
		grown, _, _, err := res.acquire(res.ctx, mem, all)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := grown.load(res.ctx, mem, res, all, Range{}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		grown.pinned = false
		res.Discard()
	}
}

// BenchmarkBringBackForward measures the guest reading forward through
// an array a kernel made (256 MiB, all stale, never on the host: conv2d's
// output folded into a checksum), a page at a time as the guest's loads
// reach them: "keep" with every page brought back kept in the guest (a
// BackWindow past the array: each into fresh host memory), "recycle"
// with the default window (recycle.go). Fresh host memory is what a run
// has: every iteration hands the Go heap's free pages back to the system
// first.
func BenchmarkBringBackForward(b *testing.B) {
	const base, n = 0x10000000, 256 << 20
	for _, mode := range []struct {
		name   string
		window uint64
	}{{"keep", 1 << 40}, {"recycle", 0}} {
		b.Run(mode.name, func(b *testing.B) {
			ctx, err := gpusim.New(gpusim.Options{}).NewContext(0)
			if err != nil {
				b.Fatal(err)
			}
			defer ctx.Close()
			b.SetBytes(n)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				mem := gvinst.NewMemory(0)
				if err := mem.Map(base, n, gvinst.PermRead|gvinst.PermWrite); err != nil {
					b.Fatal(err)
				}
				res := &Resident{Lazy: true, MaxBytes: 1 << 30, BackWindow: mode.window}
				if err := res.bind(ctx, mem); err != nil {
					b.Fatal(err)
				}
				born := Range{base, base + n}
				buf, _, _, err := res.acquire(res.ctx, mem, born)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := buf.load(res.ctx, mem, res, born, born); err != nil {
					b.Fatal(err)
				}
				if err := res.deferRange(buf, born); err != nil {
					b.Fatal(err)
				}
				buf.pinned = false
				debug.FreeOSMemory()
				b.StartTimer()
				var word [8]byte
				for a := uint64(base); a < base+n; a += gvinst.PageSize {
					if err := mem.Read(a, word[:]); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				res.Discard()
			}
		})
	}
}
