package accel

import (
	"strings"
	"testing"
	"time"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/profile"
	"github.com/gxbit/gxbit/ptxgen"
)

// moduleCounter counts a context's module loads and refuses a module that
// holds refuse (when set).
type moduleCounter struct {
	gpu.Context
	loads  [][]string // the kernels (entries) of each module loaded
	refuse string
}

func (c *moduleCounter) LoadModule(text string) (gpu.Module, error) {
	if c.refuse != "" && strings.Contains(text, ".entry "+c.refuse+"(") {
		return nil, gpu.Errorf(gpu.ErrInvalidPTX, "cuModuleLoadDataEx", "refused %s", c.refuse)
	}
	var names []string
	for _, l := range strings.Split(text, "\n") {
		if name, ok := strings.CutPrefix(l, ".visible .entry "); ok {
			names = append(names, strings.TrimSuffix(name, "("))
		}
	}
	c.loads = append(c.loads, names)
	return c.Context.LoadModule(text)
}

// tinyKernel is a kernel named name that does nothing.
func tinyKernel(name string) *ptxgen.Kernel {
	return &ptxgen.Kernel{Name: name, PTX: "//\n// " + name + "\n//\n.version 8.0\n.target sm_90\n.address_size 64\n\n.visible .entry " + name + "(\n\t.param .u64 p\n)\n{\n\tret;\n}\n"}
}

// TestKernelModules checks which kernels load in one module (moduleOf): a
// level expected to run more than once loads its kernel with the
// unchecked and dry variants, and no module after; a level that runs once
// loads its kernel alone, then the dry variant with its unchecked twin;
// a module the driver refuses loads its kernel alone again. modulesOf
// groups the loader's modules the same way.
func TestKernelModules(t *testing.T) {
	newSpot := func(instances uint8) (*spot, *ptxgen.Kernel, *moduleCounter) {
		ctx, err := gpusim.New(gpusim.Options{}).NewContext(0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ctx.Close() })
		c := &moduleCounter{Context: ctx}
		k := tinyKernel("gx_k")
		k.Unchecked, k.Dry = tinyKernel("gx_k_u"), tinyKernel("gx_k_d")
		sp := &spot{a: &Accelerator{ctx: c}, kernel: k, instancesKnown: instances}
		return sp, k, c
	}
	load := func(sp *spot, k *ptxgen.Kernel) {
		t.Helper()
		if fn, err := sp.load(k); err != nil || fn == nil {
			t.Fatalf("load %s: %v", k.Name, err)
		}
	}

	sp, k, c := newSpot(2)
	load(sp, k)
	load(sp, k.Unchecked)
	load(sp, k.Dry)
	if got := strings.Join(c.loads[0], " "); len(c.loads) != 1 || got != "gx_k gx_k_u gx_k_d" {
		t.Errorf("a level that runs many times loaded %v, want one module of gx_k gx_k_u gx_k_d", c.loads)
	}

	sp, k, c = newSpot(1)
	load(sp, k)
	load(sp, k.Dry)
	load(sp, k.Unchecked)
	if len(c.loads) != 2 || strings.Join(c.loads[0], " ") != "gx_k" || strings.Join(c.loads[1], " ") != "gx_k_d gx_k_u" {
		t.Errorf("a level that runs once loaded %v, want gx_k, then gx_k_d with gx_k_u", c.loads)
	}

	sp, k, c = newSpot(2)
	c.refuse = "gx_k_d"
	load(sp, k)
	if len(c.loads) != 1 || strings.Join(c.loads[0], " ") != "gx_k" {
		t.Errorf("with its dry variant refused, loaded %v, want gx_k alone", c.loads)
	}
	if _, err := sp.load(k.Dry); err == nil {
		t.Error("the refused dry variant loaded")
	}

	ms := modulesOf([]*ptxgen.Kernel{k, nil, tinyKernel("gx_other")}, true)
	if len(ms) != 2 || len(ms[0]) != 3 || len(ms[1]) != 1 {
		t.Errorf("modulesOf with variants: %d modules (%v)", len(ms), ms)
	}
	if ms := modulesOf([]*ptxgen.Kernel{k}, false); len(ms) != 1 || len(ms[0]) != 1 {
		t.Errorf("modulesOf without variants: %v", ms)
	}
}

// besideDriver is a driver whose contexts compile beside their other
// calls (cuda's, where the library links).
type besideDriver struct{ gpu.Driver }

func (besideDriver) CompilesBeside() bool { return true }

// TestKernelModulesBeside: where the driver compiles beside its calls,
// a kernel loads alone even where its instances launch its variants, and
// its variants are queued on the loader as modules of their own (not
// where its instances are not expected to launch them); a dry variant's
// unchecked twin is queued the same way; and no launch counts as having
// waited for a compile (jitOverlap).
func TestKernelModulesBeside(t *testing.T) {
	d := gpusim.New(gpusim.Options{})
	ctx, err := d.NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	c := &moduleCounter{Context: ctx}
	l := &loader{jobs: make(chan struct{}, 8), loads: map[*ptxgen.Kernel]*loadFuture{}}
	a := &Accelerator{ctx: c, loader: l, opts: Options{Driver: besideDriver{d}}}
	k := tinyKernel("gx_k")
	k.Unchecked, k.Dry = tinyKernel("gx_k_u"), tinyKernel("gx_k_d")
	sp := &spot{a: a, kernel: k, instancesKnown: 2, hs: &profile.HotSpot{Share: 0.4}}
	if fn, err := sp.load(k); err != nil || fn == nil {
		t.Fatalf("load: %v", err)
	}
	if len(c.loads) != 1 || strings.Join(c.loads[0], " ") != "gx_k" {
		t.Errorf("loaded %v, want gx_k alone", c.loads)
	}
	if len(l.queue) != 2 || len(l.queue[0].f.ks) != 1 || len(l.queue[1].f.ks) != 1 || l.loads[k.Unchecked] == nil || l.loads[k.Dry] == nil {
		t.Fatalf("queued %+v, want gx_k_u and gx_k_d a module each", l.queue)
	}
	if l.queue[0].share != 0.2 {
		t.Errorf("the variants queued at share %v, want half the hot spot's", l.queue[0].share)
	}
	if a.jitOverlap(jitMark{busy: true}) {
		t.Error("a launch beside a compile counted as waiting for it")
	}

	// A level that runs once queues no variants with its kernel.
	l1 := &loader{jobs: make(chan struct{}, 8), loads: map[*ptxgen.Kernel]*loadFuture{}}
	a.loader = l1
	sp = &spot{a: a, kernel: k, instancesKnown: 1, hs: &profile.HotSpot{Share: 0.4}}
	if _, err := sp.load(k); err != nil {
		t.Fatal(err)
	}
	if len(l1.queue) != 0 {
		t.Errorf("a level that runs once queued %+v, want nothing", l1.queue)
	}

	// A dry variant loaded first queues its unchecked twin.
	l2 := &loader{jobs: make(chan struct{}, 8), loads: map[*ptxgen.Kernel]*loadFuture{}}
	a.loader = l2
	sp = &spot{a: a, kernel: k, instancesKnown: 1, hs: &profile.HotSpot{Share: 0.4}}
	if _, err := sp.load(k.Dry); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.loads[len(c.loads)-1], " "); got != "gx_k_d" {
		t.Errorf("loaded %s, want gx_k_d alone", got)
	}
	if len(l2.queue) != 1 || l2.loads[k.Unchecked] == nil {
		t.Errorf("queued %+v, want the unchecked twin", l2.queue)
	}
}

// TestLoaderModuleOfVariants: the loader queues a kernel and its variants
// as one module, which every one of them then finds.
func TestLoaderModuleOfVariants(t *testing.T) {
	l := &loader{jobs: make(chan struct{}, 8), loads: map[*ptxgen.Kernel]*loadFuture{}}
	k := tinyKernel("gx_k")
	k.Unchecked, k.Dry = tinyKernel("gx_k_u"), tinyKernel("gx_k_d")
	l.enqueue(modulesOf([]*ptxgen.Kernel{k}, true), 0.5)
	l.enqueue(modulesOf([]*ptxgen.Kernel{k.Unchecked}, false), 0.5) // queued already
	if len(l.jobs) != 1 {
		t.Fatalf("%d modules queued, want 1", len(l.jobs))
	}
	f := l.loads[k]
	if f == nil || l.loads[k.Unchecked] != f || l.loads[k.Dry] != f || len(f.ks) != 3 {
		t.Fatalf("the variants do not share the kernel's module: %+v", l.loads)
	}
}

// TestExpectedInstancesOf: a sweep inside a time step's loop runs as
// many times as the steps, a nest entered once runs once; the sweep
// launches its kernels' variants, unless its trips differ between
// entries (a triangle's) or it runs once.
func TestExpectedInstancesOf(t *testing.T) {
	sweep := &profile.HotSpot{Entry: 0x120, Entries: 1, Levels: []profile.Level{{Header: 0x120}}}
	steps := &profile.HotSpot{Entry: 0x100, Entries: 1, Levels: []profile.Level{{Header: 0x100, ObservedTrips: []int64{500}}, {Header: 0x120}}}
	if n := expectedInstancesOf(sweep, 0, []*profile.HotSpot{steps, sweep}); n != 500 {
		t.Errorf("the sweep runs %d times, want 500", n)
	}
	if n := expectedInstancesOf(sweep, 0, []*profile.HotSpot{sweep}); n != 1 {
		t.Errorf("alone, the sweep runs %d times, want 1", n)
	}
	sweep.Levels[0].ObservedTrips = []int64{1298, 1298, 1298}
	if !variantsLaunchIn(sweep, 0, []*profile.HotSpot{steps, sweep}) {
		t.Error("a time step's sweep should launch its variants")
	}
	if variantsLaunchIn(sweep, 0, []*profile.HotSpot{sweep}) {
		t.Error("a sweep that runs once should not launch its variants")
	}
	sweep.Levels[0].ObservedTrips = []int64{2399, 2398, 2397}
	if variantsLaunchIn(sweep, 0, []*profile.HotSpot{steps, sweep}) {
		t.Error("a triangle's columns should not launch their variants")
	}
}

// namedDriver is a driver that only tells its name.
type namedDriver struct {
	gpu.Driver
	name string
}

func (d namedDriver) Name() string { return d.name }

// TestLoadWait checks what an instance would wait for its kernels
// (spot.loadWait): nothing without a loader or on the simulator, or once
// a kernel of the spot has loaded or its module is done; else the
// loader's mean module load so far (the default before any), less what
// the load under way has run, but at least half that. queueLoad queues the spot's module once.
func TestLoadWait(t *testing.T) {
	k := tinyKernel("gx_k")
	newSpot := func(driver string) (*spot, *loader) {
		l := &loader{jobs: make(chan struct{}, 8), loads: map[*ptxgen.Kernel]*loadFuture{}}
		a := &Accelerator{loader: l, opts: Options{Driver: namedDriver{name: driver}}}
		return &spot{a: a, hs: &profile.HotSpot{Share: 0.5}, kernel: k, instancesKnown: 1}, l
	}
	sp, l := newSpot("cuda")
	if w, ok := sp.loadWait(); !ok || w != defaultModuleLoad {
		t.Errorf("before any load: wait %v (%v), want %v", w, ok, defaultModuleLoad)
	}
	sp.queueLoad()
	sp.queueLoad()
	if len(l.jobs) != 1 || l.loads[k] == nil {
		t.Fatalf("queueLoad queued %d modules, want 1", len(l.jobs))
	}
	l.compiled.Store(2)
	l.loadsTook.Store(int64(200 * time.Millisecond))
	if w, ok := sp.loadWait(); !ok || w != 100*time.Millisecond {
		t.Errorf("queued: wait %v (%v), want the mean load, 100ms", w, ok)
	}
	l.loads[k].started.Store(time.Now().Add(-30 * time.Millisecond).UnixNano())
	if w, ok := sp.loadWait(); !ok || w > 71*time.Millisecond || w < 50*time.Millisecond {
		t.Errorf("under way for 30ms: wait %v (%v), want about 70ms", w, ok)
	}
	l.loads[k].started.Store(time.Now().Add(-160 * time.Millisecond).UnixNano())
	if w, ok := sp.loadWait(); !ok || w < 80*time.Millisecond || w > 90*time.Millisecond {
		t.Errorf("under way for 160ms, past the mean: wait %v (%v), want about 80ms, half of what it ran", w, ok)
	}
	close(l.loads[k].done)
	if _, ok := sp.loadWait(); ok {
		t.Error("a loaded module still kept the instance waiting")
	}

	// Compiled beside the driver's calls, four at a time, each is slower;
	// queued, a kernel's variants come after it, a module each.
	sp, l = newSpot("cuda")
	sp.a.opts.Driver = besideDriver{namedDriver{name: "cuda"}}
	if w, ok := sp.loadWait(); !ok || w != defaultModuleLoadBeside {
		t.Errorf("beside, before any load: wait %v (%v), want %v", w, ok, defaultModuleLoadBeside)
	}
	kv := tinyKernel("gx_kv")
	kv.Unchecked = tinyKernel("gx_kv_u")
	sp.kernel, sp.instancesKnown = kv, 2
	sp.queueLoad()
	if len(l.queue) != 2 || len(l.queue[0].f.ks) != 1 || l.queue[1].f.ks[0] != kv.Unchecked {
		t.Errorf("beside, queueLoad queued %+v, want gx_kv, then gx_kv_u", l.queue)
	}

	sp, _ = newSpot("cuda")
	sp.loaded = map[*ptxgen.Kernel]gpu.Function{k: nil}
	sp.loaded[k] = struct{ gpu.Function }{}
	if _, ok := sp.loadWait(); ok {
		t.Error("a spot with its kernel loaded waited")
	}
	for _, name := range []string{"sim", "sim-fast"} {
		sp, _ = newSpot(name)
		if _, ok := sp.loadWait(); ok {
			t.Errorf("the simulator (%s) waited", name)
		}
	}
	sp.a.loader = nil
	if _, ok := sp.loadWait(); ok {
		t.Error("no loader, yet a wait")
	}
}

// TestCompiledSince: a timing counts as made beside compiles (launch.go:
// Timings beside compiles) when the loader was compiling at its start or end, or
// finished a module in between; not when the loader was idle throughout,
// nor without a loader.
func TestCompiledSince(t *testing.T) {
	l := &loader{}
	a := &Accelerator{loader: l}
	l.compiled.Store(3)
	mark := a.markJIT()
	if a.compiledSince(mark) {
		t.Error("an idle loader counted as compiling")
	}
	l.compiling.Add(1)
	if !a.compiledSince(mark) {
		t.Error("a compile under way at the end not counted")
	}
	busy := a.markJIT()
	l.compiling.Add(-1)
	l.compiled.Add(1)
	if !a.compiledSince(busy) || !a.compiledSince(mark) {
		t.Error("a compile that ended during the timing not counted")
	}
	a.loader = nil
	if a.compiledSince(jitMark{}) {
		t.Error("no loader, yet compiling")
	}
}
