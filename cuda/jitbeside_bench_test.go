package cuda

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"
)

// readPTXDir reads every .ptx file of the directory GXBIT_PTX_DIR names
// (gxbit accelerate --ptx-dir), skipping b when it is not set.
func readPTXDir(b *testing.B) []string {
	dir := os.Getenv("GXBIT_PTX_DIR")
	if dir == "" {
		b.Skip("GXBIT_PTX_DIR is not set")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.ptx"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no .ptx file in %s (%v)", dir, err)
	}
	sort.Strings(files)
	var ptx []string
	for _, f := range files {
		t, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		ptx = append(ptx, string(t))
	}
	return ptx
}

// BenchmarkJITBeside measures how compiling modules holds up the copies
// a guest's launches make meanwhile: one goroutine compiles the kernels
// of GXBIT_PTX_DIR one after another while another copies 4 MiB from
// pinned memory to the device, call after call, and times each copy.
// Run it with CUDA_CACHE_DISABLE=1. It skips without the directory or a
// GPU.
//
//	alone      the copies with nothing compiling
//	module     each kernel compiled and loaded by cuModuleLoadDataEx
//	link       compiled by the driver's linker (cuLinkCreate, …) with the
//	           same context current, then its cubin loaded
//	link-ctx2  compiled with a second context current, its cubin loaded
//	           into the first
//	link-x4    as link, four compiles at a time
//
// Metrics: copy-max-ms and copy-p50-ms over the copies made while the
// compiles ran, s/module the compile's time per module, and load-ms the
// time of loading a linked cubin.
func BenchmarkJITBeside(b *testing.B) {
	ptx := readPTXDir(b)
	d := New()
	if err := d.Init(); err != nil {
		b.Skipf("no CUDA back end here: %v", err)
	}
	if !d.l.canLink() {
		b.Skip("the library has no linker entry points")
	}
	ctx, err := d.NewContext(0)
	if err != nil {
		b.Fatal(err)
	}
	defer ctx.Close()
	gctx, err := d.NewContext(0)
	if err != nil {
		b.Fatal(err)
	}
	defer gctx.Close()
	c, c2 := ctx.(*Context), gctx.(*Context)
	const n = 4 << 20
	dev, err := c.Alloc(n)
	if err != nil {
		b.Fatal(err)
	}
	host, err := c.AllocPinned(n)
	if err != nil {
		b.Fatal(err)
	}
	// onThread runs f on a locked thread with cur current.
	onThread := func(cur *Context, f func() error) error {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := c.l.check(c.l.cuCtxSetCurrent(cur.h), "cuCtxSetCurrent"); err != nil {
			return err
		}
		return f()
	}
	var loads []time.Duration
	var loadsMu sync.Mutex
	linkLoad := func(cur *Context) func(string) error {
		return func(p string) error {
			var img []byte
			if err := onThread(cur, func() (err error) { img, err = c.l.link(p, DefaultJITLevel); return err }); err != nil {
				return err
			}
			t0 := time.Now()
			var m *Module
			err := c.run("cuModuleLoadDataEx", func() (err error) { m, err = c.loadImage(img, p); return err })
			loadsMu.Lock()
			loads = append(loads, time.Since(t0))
			loadsMu.Unlock()
			if err != nil {
				return err
			}
			return m.Unload()
		}
	}
	modes := []struct {
		name    string
		compile func(string) error
	}{
		{"alone", nil},
		{"module", func(p string) error {
			var m *Module
			if err := onThread(c, func() error { return c.compile(p, &m) }); err != nil {
				return err
			}
			return m.Unload()
		}},
		{"link", linkLoad(c)},
		{"link-ctx2", linkLoad(c2)},
		{"link-x4", nil},
	}
	for _, mode := range modes {
		b.Run(mode.name, func(b *testing.B) {
			var lat []time.Duration
			var compiled time.Duration
			loads = loads[:0]
			for i := 0; i < b.N; i++ {
				done := make(chan error, 1)
				t0 := time.Now()
				go func() {
					if mode.name == "link-x4" {
						done <- linkAll(ptx, 4, linkLoad(c))
						return
					}
					if mode.compile == nil {
						time.Sleep(300 * time.Millisecond)
						done <- nil
						return
					}
					for _, p := range ptx {
						if err := mode.compile(p); err != nil {
							done <- err
							return
						}
					}
					done <- nil
				}()
				for running := true; running; {
					select {
					case err := <-done:
						if err != nil {
							b.Fatal(err)
						}
						compiled += time.Since(t0)
						running = false
					default:
						s := time.Now()
						if err := c.CopyHtoD(dev, host); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(s))
					}
				}
			}
			slices.Sort(lat)
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(ms(lat[len(lat)-1]), "copy-max-ms")
			b.ReportMetric(ms(lat[len(lat)/2]), "copy-p50-ms")
			b.ReportMetric(float64(len(lat))/float64(b.N), "copies/op")
			if mode.compile != nil {
				b.ReportMetric(compiled.Seconds()/float64(b.N*len(ptx)), "s/module")
			}
			if len(loads) > 0 {
				slices.Sort(loads)
				b.ReportMetric(ms(loads[len(loads)/2]), "load-p50-ms")
				b.ReportMetric(ms(loads[len(loads)-1]), "load-max-ms")
			}
		})
	}
}

// linkAll runs compile on every module of ptx, n at a time.
func linkAll(ptx []string, n int, compile func(string) error) error {
	var mu sync.Mutex
	next := 0
	errs := make(chan error, n)
	for range n {
		go func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(ptx) {
					errs <- nil
					return
				}
				if err := compile(ptx[i]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var err error
	for range n {
		err = errors.Join(err, <-errs)
	}
	return err
}
