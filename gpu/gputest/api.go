package gputest

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gxbit/gxbit/gpu"
)

func (s *suite) testDevices(t *testing.T) {
	s.known(t, "Devices")
	if s.d.Name() == "" {
		t.Error("Name() is empty")
	}
	n, err := s.d.DeviceCount()
	if err != nil {
		t.Fatalf("DeviceCount: %v", err)
	}
	if n < 1 {
		t.Fatalf("DeviceCount = %d, want at least 1", n)
	}
	for i := range n {
		p, err := s.d.Device(i)
		if err != nil {
			t.Fatalf("Device(%d): %v", i, err)
		}
		checkProps(t, i, p)
	}
	_, err = s.d.Device(n)
	wantCode(t, "Device(count)", err, gpu.ErrInvalidDevice)
	_, err = s.d.Device(-1)
	wantCode(t, "Device(-1)", err, gpu.ErrInvalidDevice)
	c, err := s.d.NewContext(n)
	if err == nil {
		_ = c.Close()
	}
	wantCode(t, "NewContext(count)", err, gpu.ErrInvalidDevice)
}

// checkProps checks that a device's properties are plausible for a CUDA
// device of compute capability 1.0 or later.
func checkProps(t *testing.T, i int, p gpu.DeviceProps) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Errorf("device %d (%q): "+format, append([]any{i, p.Name}, args...)...)
	}
	if strings.TrimSpace(p.Name) == "" {
		fail("empty name")
	}
	if p.ComputeMajor < 1 || p.ComputeMinor < 0 {
		fail("compute capability %d.%d", p.ComputeMajor, p.ComputeMinor)
	}
	if p.WarpSize != 32 {
		fail("warp size %d, want 32", p.WarpSize)
	}
	if p.TotalMemory < 1<<20 {
		fail("total memory %d bytes", p.TotalMemory)
	}
	if p.MultiProcessors < 1 {
		fail("%d multiprocessors", p.MultiProcessors)
	}
	if p.MaxThreadsPerBlock < p.WarpSize || p.MaxThreadsPerBlock > 1<<16 {
		fail("max threads per block %d", p.MaxThreadsPerBlock)
	}
	for k := range 3 {
		if p.MaxBlockDim[k] < 1 || p.MaxBlockDim[k] > p.MaxThreadsPerBlock {
			fail("max block dim[%d] = %d", k, p.MaxBlockDim[k])
		}
		if p.MaxGridDim[k] < 1 {
			fail("max grid dim[%d] = %d", k, p.MaxGridDim[k])
		}
	}
	if p.SharedMemPerBlock < 16<<10 {
		fail("shared memory per block %d bytes", p.SharedMemPerBlock)
	}
	if p.MaxThreadsPerSM != 0 && p.MaxThreadsPerSM < p.MaxThreadsPerBlock {
		fail("max threads per SM %d < per block %d", p.MaxThreadsPerSM, p.MaxThreadsPerBlock)
	}
}

// pattern returns n bytes of a fixed pseudo-random pattern.
func pattern(n int, seed uint32) []byte {
	b := make([]byte, n)
	x := seed
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// testCopyBatch runs batches of copies each way (gpu.BatchCopier, where
// the context has it), from Go memory and, where the context can pin
// host memory, from pinned memory, with a copy back of bytes an earlier
// copy of the batch wrote: the copies run in order, every byte lands,
// and a copy outside every allocation fails naming itself.
func (s *suite) testCopyBatch(t *testing.T) {
	s.known(t, "CopyBatch")
	c := s.context(t)
	bc, ok := c.(gpu.BatchCopier)
	if !ok {
		t.Skip("the context runs no batches of copies")
	}
	const n = 3*4096 + 100
	dev, err := c.Alloc(2 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free(dev)
	host := func() []byte { return make([]byte, n) }
	if pa, ok := c.(gpu.PinnedAllocator); ok {
		host = func() []byte {
			b, err := pa.AllocPinned(n)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = pa.FreePinned(b) })
			return b
		}
	}
	for _, mem := range []string{"go", "pinned"} {
		t.Run(mem, func(t *testing.T) {
			in, back, again := make([]byte, n), make([]byte, n), make([]byte, n)
			if mem == "pinned" {
				in, back, again = host(), host(), host()
			}
			copy(in, pattern(n, 77))
			err := bc.CopyBatch([]gpu.Copy{
				{Dev: dev, Host: in[:4096]},
				{Dev: dev + 4096, Host: in[4096:]},
				{Dev: dev + 100, Host: back[:n-100], FromDevice: true},
				{Dev: dev + n, Host: in[:0]},
				{Dev: dev + n + 7, Host: in[7:4000]},
				{Dev: dev + n + 7, Host: again[:3993], FromDevice: true},
			})
			if err != nil {
				t.Fatalf("CopyBatch: %v", err)
			}
			if !bytes.Equal(back[:n-100], in[100:]) || !bytes.Equal(again[:3993], in[7:4000]) {
				t.Fatal("a batch's copies back differ from what its copies in wrote")
			}
			err = bc.CopyBatch([]gpu.Copy{{Dev: dev, Host: in[:8]}, {Dev: dev + 2*n - 4, Host: in[:8]}})
			if err == nil || !strings.Contains(err.Error(), "copy 1 of 2") {
				t.Fatalf("a copy past the allocation: %v, want an error naming copy 1 of 2", err)
			}
		})
	}
}

// testStream queues a copy in, a kernel that stores into what it copied,
// a copy on the device and a copy back, and waits once: the work runs in
// the order it was queued, from Go memory and from pinned memory, and
// through a queued batch (gpu.BatchQueuer) where the context has one. A
// queued copy outside every allocation fails at once, naming its call.
func (s *suite) testStream(t *testing.T) {
	s.known(t, "Stream")
	c := s.context(t)
	poke := function(t, loadTestModule(t, c), "poke")
	const n = 2*4096 + 24
	dev, err := c.Alloc(2 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer free(t, c, dev)
	host := func() []byte { return make([]byte, n) }
	pa, pinnable := c.(gpu.PinnedAllocator)
	for _, mem := range []string{"go", "pinned", "batch"} {
		t.Run(mem, func(t *testing.T) {
			in, back := host(), host()
			if mem == "pinned" && pinnable {
				for _, b := range []*[]byte{&in, &back} {
					if *b, err = pa.AllocPinned(n); err != nil {
						t.Fatal(err)
					}
					defer func(b []byte) { _ = pa.FreePinned(b) }(*b)
				}
			}
			bq, batches := c.(gpu.BatchQueuer)
			if mem == "batch" && !batches {
				t.Skip("the context queues no batches")
			}
			copy(in, pattern(n, 91))
			if mem == "batch" {
				err = bq.QueueBatch([]gpu.Copy{{Dev: dev, Host: in[:100]}, {Dev: dev + 100, Host: in[100:]}})
			} else {
				err = c.CopyHtoDAsync(dev, in)
			}
			if err != nil {
				t.Fatalf("queueing the copy in: %v", err)
			}
			if err := c.Launch(poke, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1, Y: 1, Z: 1}, Block: gpu.Dim3{X: 1, Y: 1, Z: 1}}, [][]byte{u64(uint64(dev)), u64(4100), u32(0xfeedf00d)}); err != nil {
				t.Fatalf("Launch poke: %v", err)
			}
			if err := c.CopyDtoDAsync(dev+n, dev, n); err != nil {
				t.Fatalf("CopyDtoDAsync: %v", err)
			}
			if mem == "batch" {
				err = bq.QueueBatch([]gpu.Copy{{Dev: dev + n, Host: back[:n-8], FromDevice: true}, {Dev: dev + 2*n - 8, Host: back[n-8:], FromDevice: true}})
			} else {
				err = c.CopyDtoHAsync(back, dev+n)
			}
			if err != nil {
				t.Fatalf("queueing the copy back: %v", err)
			}
			if err := c.Synchronize(); err != nil {
				t.Fatalf("Synchronize: %v", err)
			}
			want := append([]byte(nil), in...)
			copy(want[4100:], u32(0xfeedf00d))
			if !bytes.Equal(back, want) {
				t.Fatal("the queued work did not run in the order it was queued")
			}
		})
	}
	for what, err := range map[string]error{
		"CopyHtoDAsync": c.CopyHtoDAsync(dev+2*n-4, make([]byte, 8)),
		"CopyDtoHAsync": c.CopyDtoHAsync(make([]byte, 8), dev+2*n-4),
		"CopyDtoDAsync": c.CopyDtoDAsync(dev, dev+2*n-4, 8),
	} {
		wantCode(t, what+" past the allocation", err, gpu.ErrInvalidValue)
		if err != nil && !strings.Contains(err.Error(), "Async") {
			t.Errorf("%s past the allocation: %v, want an error naming the call", what, err)
		}
	}
	if err := c.Synchronize(); err != nil {
		t.Fatalf("Synchronize after the refused copies: %v", err)
	}
}

func (s *suite) testMemory(t *testing.T) {
	s.known(t, "Memory")
	c := s.context(t)
	for _, n := range []int{1, 7, 4096, 1<<20 + 3} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			a, err := c.Alloc(uint64(n))
			if err != nil {
				t.Fatalf("Alloc(%d): %v", n, err)
			}
			b, err := c.Alloc(uint64(n))
			if err != nil {
				t.Fatalf("Alloc(%d): %v", n, err)
			}
			want := pattern(n, uint32(n))
			if err := c.CopyHtoD(a, want); err != nil {
				t.Fatalf("CopyHtoD: %v", err)
			}
			got := make([]byte, n)
			if err := c.CopyDtoH(got, a); err != nil {
				t.Fatalf("CopyDtoH: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("HtoD/DtoH round trip of %d bytes differs", n)
			}
			if err := c.CopyDtoD(b, a, uint64(n)); err != nil {
				t.Fatalf("CopyDtoD: %v", err)
			}
			clear(got)
			if err := c.CopyDtoH(got, b); err != nil {
				t.Fatalf("CopyDtoH: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("DtoD copy of %d bytes differs", n)
			}
			// Memset and copies at interior offsets.
			lo, hi := n/4, n/4+n/2
			if hi > lo {
				if err := c.Memset(a+gpu.DevicePtr(lo), 0xA5, uint64(hi-lo)); err != nil {
					t.Fatalf("Memset: %v", err)
				}
				for i := lo; i < hi; i++ {
					want[i] = 0xA5
				}
				part := pattern(hi-lo, 99)
				if err := c.CopyHtoD(b+gpu.DevicePtr(lo), part); err != nil {
					t.Fatalf("CopyHtoD at offset %d: %v", lo, err)
				}
				tail := make([]byte, n-lo)
				if err := c.CopyDtoH(tail, b+gpu.DevicePtr(lo)); err != nil {
					t.Fatalf("CopyDtoH at offset %d: %v", lo, err)
				}
				if !bytes.Equal(tail[:hi-lo], part) {
					t.Errorf("copy at offset %d differs", lo)
				}
			}
			if err := c.CopyDtoH(got, a); err != nil {
				t.Fatalf("CopyDtoH: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Memset [%d,%d) of %d bytes: contents differ", lo, hi, n)
			}
			if err := c.Free(a); err != nil {
				t.Errorf("Free: %v", err)
			}
			if err := c.Free(b); err != nil {
				t.Errorf("Free: %v", err)
			}
		})
	}
}

// loadTestModule loads testPTX into c.
func loadTestModule(t *testing.T, c gpu.Context) gpu.Module {
	t.Helper()
	m, err := c.LoadModule(testPTX)
	if err != nil {
		t.Fatalf("LoadModule(testPTX): %v", err)
	}
	return m
}

func function(t *testing.T, m gpu.Module, name string) gpu.Function {
	t.Helper()
	f, err := m.Function(name)
	if err != nil {
		t.Fatalf("Function(%q): %v", name, err)
	}
	if f.Name() != name {
		t.Errorf("Function(%q).Name() = %q", name, f.Name())
	}
	return f
}

// free releases p, reporting a failure on t.
func free(t *testing.T, c gpu.Context, p gpu.DevicePtr) {
	t.Helper()
	if err := c.Free(p); err != nil {
		t.Errorf("Free(%#x): %v", uint64(p), err)
	}
}

func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func u64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// launch launches f and waits for it, failing t on an error.
func launch(t *testing.T, c gpu.Context, f gpu.Function, grid, block gpu.Dim3, params ...[]byte) {
	t.Helper()
	if err := c.Launch(f, gpu.LaunchConfig{Grid: grid, Block: block}, params); err != nil {
		t.Fatalf("Launch %s: %v", f.Name(), err)
	}
	if err := c.Synchronize(); err != nil {
		t.Fatalf("Synchronize after %s: %v", f.Name(), err)
	}
}

func (s *suite) testKernel(t *testing.T) {
	s.known(t, "Kernel")
	c := s.context(t)
	m := loadTestModule(t, c)

	t.Run("Params", func(t *testing.T) {
		want := map[string][]gpu.Param{
			"fill":   {{Name: "fill_out", Size: 8, Align: 8}, {Name: "fill_n", Size: 4, Align: 4}, {Name: "fill_k", Size: 4, Align: 4}},
			"poke":   {{Name: "poke_p", Size: 8, Align: 8}, {Name: "poke_off", Size: 8, Align: 8}, {Name: "poke_v", Size: 4, Align: 4}},
			"layout": {{Name: "layout_out", Size: 8, Align: 8}, {Name: "layout_a", Size: 4, Align: 4}, {Name: "layout_s", Size: 12, Align: 8}, {Name: "layout_h", Size: 2, Align: 2}, {Name: "layout_d", Size: 8, Align: 8}},
		}
		for name, w := range want {
			got := function(t, m, name).Params()
			if len(got) != len(w) {
				t.Errorf("%s: Params() = %+v, want %+v", name, got, w)
				continue
			}
			for i := range w {
				if got[i] != w[i] {
					t.Errorf("%s: param %d = %+v, want %+v", name, i, got[i], w[i])
				}
			}
		}
	})

	t.Run("Fill", func(t *testing.T) {
		const n, k = 1000, 17
		out, err := c.Alloc(4 * 1024)
		if err != nil {
			t.Fatalf("Alloc: %v", err)
		}
		defer free(t, c, out)
		if err := c.Memset(out, 0xFF, 4*1024); err != nil {
			t.Fatalf("Memset: %v", err)
		}
		f := function(t, m, "fill")
		launch(t, c, f, gpu.Dim3{X: 8, Y: 1, Z: 1}, gpu.Dim3{X: 128, Y: 1, Z: 1}, u64(uint64(out)), u32(n), u32(k))
		got := make([]byte, 4*1024)
		if err := c.CopyDtoH(got, out); err != nil {
			t.Fatalf("CopyDtoH: %v", err)
		}
		for i := range 1024 {
			v := binary.LittleEndian.Uint32(got[4*i:])
			want := uint32(3*i + k)
			if i >= n {
				want = 0xFFFFFFFF // threads past n must not store
			}
			if v != want {
				t.Fatalf("out[%d] = %#x, want %#x", i, v, want)
			}
		}
		st := c.LastLaunchStats()
		if st.Kernel != "fill" {
			t.Errorf("LastLaunchStats().Kernel = %q, want fill", st.Kernel)
		}
		if st.Duration < 0 {
			t.Errorf("LastLaunchStats().Duration = %v", st.Duration)
		}
	})

	t.Run("Mapped", func(t *testing.T) {
		// A kernel's stores into mapped host memory (gpu.MappedAllocator)
		// are the host's to read after Synchronize, with no copy.
		ma, ok := c.(gpu.MappedAllocator)
		if !ok {
			t.Skip("the context has no mapped host memory")
		}
		const n, k = 1000, 5
		host, dev, err := ma.AllocMapped(4 * 1024)
		if err != nil {
			t.Fatalf("AllocMapped: %v", err)
		}
		for i, b := range host {
			if b != 0 {
				t.Fatalf("AllocMapped's byte %d is %#x, want 0", i, b)
			}
		}
		launch(t, c, function(t, m, "fill"), gpu.Dim3{X: 8, Y: 1, Z: 1}, gpu.Dim3{X: 128, Y: 1, Z: 1}, u64(uint64(dev)), u32(n), u32(k))
		for i := range 1024 {
			v := binary.LittleEndian.Uint32(host[4*i:])
			want := uint32(3*i + k)
			if i >= n {
				want = 0
			}
			if v != want {
				t.Fatalf("mapped out[%d] = %#x, want %#x", i, v, want)
			}
		}
		if err := ma.FreeMapped(host); err != nil {
			t.Fatalf("FreeMapped: %v", err)
		}
		if err := ma.FreeMapped(make([]byte, 8)); err == nil {
			t.Error("FreeMapped of Go memory succeeded")
		}
	})

	t.Run("LaunchTimes", func(t *testing.T) {
		// A launch's kernel time and its submission are apart: the two
		// fit in the host's time for the launch (the first launch of a
		// kernel aside, which a real GPU's driver times with its
		// submission), and many launches in a row never stall.
		out, err := c.Alloc(4 * 1024)
		if err != nil {
			t.Fatalf("Alloc: %v", err)
		}
		defer free(t, c, out)
		f := function(t, m, "fill")
		const launches = 40
		begin := time.Now()
		for i := range launches {
			t0 := time.Now()
			launch(t, c, f, gpu.Dim3{X: 8, Y: 1, Z: 1}, gpu.Dim3{X: 128, Y: 1, Z: 1}, u64(uint64(out)), u32(1024), u32(uint32(i)))
			wall := time.Since(t0)
			st := c.LastLaunchStats()
			if st.Duration <= 0 || st.Submit <= 0 {
				t.Fatalf("launch %d: kernel time %v, submission %v; want both positive", i, st.Duration, st.Submit)
			}
			if i > 0 && st.Duration+st.Submit > wall+50*time.Microsecond {
				t.Errorf("launch %d: kernel time %v and submission %v exceed the launch's %v", i, st.Duration, st.Submit, wall)
			}
		}
		if d := time.Since(begin); d > launches*10*time.Millisecond {
			t.Errorf("%d small launches took %v", launches, d)
		}
	})

	t.Run("Layout", func(t *testing.T) {
		out, err := c.Alloc(32)
		if err != nil {
			t.Fatalf("Alloc: %v", err)
		}
		defer free(t, c, out)
		if err := c.Memset(out, 0xEE, 32); err != nil {
			t.Fatalf("Memset: %v", err)
		}
		a := u32(math.Float32bits(-1.25))
		sArr := pattern(12, 5)
		h := []byte{0x34, 0xB2}
		d := u64(math.Float64bits(math.Pi))
		f := function(t, m, "layout")
		launch(t, c, f, gpu.Dim3{X: 1, Y: 1, Z: 1}, gpu.Dim3{X: 1, Y: 1, Z: 1}, u64(uint64(out)), a, sArr, h, d)
		got := make([]byte, 32)
		if err := c.CopyDtoH(got, out); err != nil {
			t.Fatalf("CopyDtoH: %v", err)
		}
		want := append(append(append(append([]byte{}, a...), sArr...), h[0], h[1], 0, 0, 0, 0, 0, 0), d...)
		if !bytes.Equal(got, want) {
			t.Errorf("layout wrote % x, want % x", got, want)
		}
	})

	t.Run("Unload", func(t *testing.T) {
		m2 := loadTestModule(t, c)
		if _, err := m2.Function("fill"); err != nil {
			t.Fatalf("Function: %v", err)
		}
		if err := m2.Unload(); err != nil {
			t.Fatalf("Unload: %v", err)
		}
	})
}

func (s *suite) testEvents(t *testing.T) {
	s.known(t, "Events")
	c := s.context(t)
	m := loadTestModule(t, c)
	f := function(t, m, "fill")
	out, err := c.Alloc(4 << 10)
	if err != nil {
		t.Fatalf("Alloc: %v", err)
	}
	defer free(t, c, out)
	start, err := c.NewEvent()
	if err != nil {
		t.Fatalf("NewEvent: %v", err)
	}
	stop, err := c.NewEvent()
	if err != nil {
		t.Fatalf("NewEvent: %v", err)
	}
	if err := start.Record(); err != nil {
		t.Fatalf("Record: %v", err)
	}
	for range 3 {
		if err := c.Launch(f, gpu.LaunchConfig{Grid: gpu.Dim3{X: 8, Y: 1, Z: 1}, Block: gpu.Dim3{X: 128, Y: 1, Z: 1}},
			[][]byte{u64(uint64(out)), u32(1024), u32(1)}); err != nil {
			t.Fatalf("Launch: %v", err)
		}
	}
	if err := stop.Record(); err != nil {
		t.Fatalf("Record: %v", err)
	}
	if err := stop.Synchronize(); err != nil {
		t.Fatalf("Synchronize: %v", err)
	}
	if err := start.Synchronize(); err != nil {
		t.Fatalf("Synchronize: %v", err)
	}
	el, err := stop.ElapsedSince(start)
	if err != nil {
		t.Fatalf("ElapsedSince: %v", err)
	}
	if el < 0 || el > time.Minute {
		t.Errorf("elapsed %v", el)
	}
	for _, e := range []gpu.Event{start, stop} {
		if err := e.Destroy(); err != nil {
			t.Errorf("Destroy: %v", err)
		}
	}
}

func (s *suite) testMisuse(t *testing.T) {
	s.known(t, "Misuse")
	c := s.context(t)
	p, err := c.Alloc(256)
	if err != nil {
		t.Fatalf("Alloc: %v", err)
	}
	buf := make([]byte, 512)

	t.Run("Free", func(t *testing.T) {
		q, err := c.Alloc(64)
		if err != nil {
			t.Fatalf("Alloc: %v", err)
		}
		wantCode(t, "Free(interior pointer)", c.Free(q+8), gpu.ErrInvalidValue)
		wantCode(t, "Free(never allocated)", c.Free(q+(1<<40)), gpu.ErrInvalidValue)
		if err := c.Free(q); err != nil {
			t.Fatalf("Free: %v", err)
		}
		wantCode(t, "Free twice", c.Free(q), gpu.ErrInvalidValue)
	})
	t.Run("CopyRange", func(t *testing.T) {
		wantCode(t, "CopyHtoD past the end", c.CopyHtoD(p, buf), gpu.ErrInvalidValue)
		wantCode(t, "CopyHtoD at offset past the end", c.CopyHtoD(p+200, buf[:100]), gpu.ErrInvalidValue)
		wantCode(t, "CopyDtoH past the end", c.CopyDtoH(buf, p), gpu.ErrInvalidValue)
		wantCode(t, "CopyDtoH from unallocated", c.CopyDtoH(buf[:4], p+(1<<40)), gpu.ErrInvalidValue)
		wantCode(t, "CopyDtoD past the end", c.CopyDtoD(p, p+128, 256), gpu.ErrInvalidValue)
		wantCode(t, "Memset past the end", c.Memset(p+1, 0, 256), gpu.ErrInvalidValue)
		// The exact fit still works.
		if err := c.CopyHtoD(p, buf[:256]); err != nil {
			t.Errorf("CopyHtoD of the whole allocation: %v", err)
		}
	})
	t.Run("BadPTX", func(t *testing.T) {
		_, err := c.LoadModule(badPTX)
		wantCode(t, "LoadModule(bad PTX)", err, gpu.ErrInvalidPTX)
		if err != nil && !strings.Contains(err.Error(), strconv.Itoa(badPTXLine)) {
			t.Errorf("LoadModule(bad PTX) error %q does not name line %d", err, badPTXLine)
		}
	})
	m := loadTestModule(t, c)
	t.Run("UnknownFunction", func(t *testing.T) {
		_, err := m.Function("no_such_kernel")
		wantCode(t, "Function(no_such_kernel)", err, gpu.ErrNotFound)
	})
	f := function(t, m, "fill")
	good := [][]byte{u64(uint64(p)), u32(64), u32(0)}
	one := gpu.Dim3{X: 1, Y: 1, Z: 1}
	t.Run("LaunchShape", func(t *testing.T) {
		for _, tc := range []struct {
			name        string
			grid, block gpu.Dim3
		}{
			{"block 0", one, gpu.Dim3{X: 0, Y: 1, Z: 1}},
			{"block 1025", one, gpu.Dim3{X: 1025, Y: 1, Z: 1}},
			{"block 32x33", one, gpu.Dim3{X: 32, Y: 33, Z: 1}},
			{"block z 65", one, gpu.Dim3{X: 1, Y: 1, Z: 65}},
			{"grid 0", gpu.Dim3{X: 0, Y: 1, Z: 1}, one},
			{"grid y 0", gpu.Dim3{X: 1, Y: 0, Z: 1}, one},
		} {
			err := c.Launch(f, gpu.LaunchConfig{Grid: tc.grid, Block: tc.block}, good)
			wantCode(t, "Launch with "+tc.name, err, gpu.ErrInvalidValue)
		}
	})
	t.Run("LaunchParams", func(t *testing.T) {
		cfg := gpu.LaunchConfig{Grid: one, Block: gpu.Dim3{X: 64, Y: 1, Z: 1}}
		wantCode(t, "Launch with too few params", c.Launch(f, cfg, good[:2]), gpu.ErrInvalidValue)
		wantCode(t, "Launch with too many params", c.Launch(f, cfg, append(good[:3:3], u32(0))), gpu.ErrInvalidValue)
		wantCode(t, "Launch with a short param", c.Launch(f, cfg, [][]byte{good[0], good[1], {1, 2}}), gpu.ErrInvalidValue)
		wantCode(t, "Launch with a long param", c.Launch(f, cfg, [][]byte{good[0], u64(64), good[2]}), gpu.ErrInvalidValue)
	})
	// After the refused launches the context still works.
	t.Run("StillUsable", func(t *testing.T) {
		launch(t, c, f, one, gpu.Dim3{X: 64, Y: 1, Z: 1}, good...)
		got := make([]byte, 256)
		if err := c.CopyDtoH(got, p); err != nil {
			t.Fatalf("CopyDtoH: %v", err)
		}
		if v := binary.LittleEndian.Uint32(got[4*63:]); v != 3*63 {
			t.Errorf("out[63] = %d, want %d", v, 3*63)
		}
	})
}

// testIllegalAddress stores far outside every allocation from a kernel. The
// fault must surface as ErrIllegalAddress from Launch or Synchronize.
func (s *suite) testIllegalAddress(t *testing.T) {
	s.known(t, "IllegalAddress")
	c, err := s.d.NewContext(0)
	if err != nil {
		t.Fatalf("NewContext: %v", err)
	}
	// A context whose kernel faulted may report the fault again on Close.
	defer func() { _ = c.Close() }()
	m := loadTestModule(t, c)
	f := function(t, m, "poke")
	p, err := c.Alloc(256)
	if err != nil {
		t.Fatalf("Alloc: %v", err)
	}
	err = c.Launch(f, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1, Y: 1, Z: 1}, Block: gpu.Dim3{X: 32, Y: 1, Z: 1}},
		[][]byte{u64(uint64(p)), u64(1 << 40), u32(7)})
	if err == nil {
		err = c.Synchronize()
	}
	wantCode(t, "store at p+2^40", err, gpu.ErrIllegalAddress)
}
