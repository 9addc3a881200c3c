package accel

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gxbit/gxbit/gpusim"
)

// TestPredict checks the cost model's decisions on made-up device costs.
func TestPredict(t *testing.T) {
	sim := DeviceCosts{LaunchLatency: time.Millisecond, HostToDevice: 1e9, DeviceToHost: 1e9, ThreadInsnsPerSecond: 1e9}
	gpu := DeviceCosts{LaunchLatency: 10 * time.Microsecond, HostToDevice: 2e10, DeviceToHost: 2e10}
	cases := []struct {
		name      string
		c         DeviceCosts
		count     uint64
		cpuIter   time.Duration
		insns     float64
		overhead  time.Duration
		copyIn    uint64
		perIter   time.Duration
		pays      bool
		kernelMin time.Duration
	}{
		{"few iterations: the launch costs more", sim, 100, time.Microsecond, 20, 0, 0, 0, false, 0},
		{"many heavy iterations", sim, 1e6, time.Microsecond, 100, 0, 0, 0, true, 190 * time.Millisecond},
		{"simulator slower than the CPU per iteration", sim, 1e6, 100 * time.Nanosecond, 100, 0, 0, 0, false, 0},
		{"copies dominate", sim, 1e5, time.Microsecond, 10, 0, 1 << 30, 0, false, 0},
		{"measured kernel time replaces the model", sim, 1e6, time.Microsecond, 1e6, 0, 0, 100 * time.Nanosecond, true, 100 * time.Millisecond},
		{"real GPU: kernel not predicted", gpu, 1e4, time.Microsecond, 1e6, 0, 1 << 20, 0, true, 0},
		{"real GPU: too short", gpu, 10, 100 * time.Nanosecond, 10, 0, 0, 0, false, 0},
		// An instance's fixed overhead (probing, guards, copy
		// bookkeeping, about 4 ms) sinks a short one that the launch
		// alone would not.
		{"short instance: the overhead costs more", gpu, 2000, time.Microsecond, 10, 4 * time.Millisecond, 0, 0, false, 0},
		{"long instance: the overhead is paid back", gpu, 1e5, time.Microsecond, 10, 4 * time.Millisecond, 0, 0, true, 0},
	}
	for _, c := range cases {
		e := c.c.Predict(c.count, c.cpuIter, c.insns, c.overhead, c.copyIn, c.perIter)
		if e.Pays() != c.pays {
			t.Errorf("%s: pays %v, want %v: %s", c.name, e.Pays(), c.pays, e)
		}
		if e.Kernel < c.kernelMin {
			t.Errorf("%s: kernel %v, want at least %v", c.name, e.Kernel, c.kernelMin)
		}
		if !strings.Contains(e.String(), "against CPU") {
			t.Errorf("%s: %q", c.name, e)
		}
	}
}

// TestCPUIteration checks which measurement prices a CPU iteration
// before a launch, and that a loop of short iterations is not offloaded
// because probing made its sampled iteration look slow.
func TestCPUIteration(t *testing.T) {
	us := time.Microsecond
	cases := []struct {
		name                               string
		tail, probed                       time.Duration
		insns, loopRate, runRate, mainRate float64
		want                               time.Duration
	}{
		{"a CPU tail faster than the loop's rate", 2 * us, 7 * us, 10000, 1e9, 0, 1e9, 2 * us},
		{"the loop's rate faster than its tail (the breakpoint's round trip)", 2 * us, 7 * us, 10, 1e9, 0, 1e9, 10 * time.Nanosecond},
		{"the loop's rate beats the probed iteration", 0, 7 * us, 100, 1e8, 0, 0, us},
		{"the run's best rate where the loop's is slower", 0, 7 * us, 100, 1e7, 1e9, 0, 100 * time.Nanosecond},
		// gramschmidt's column loop, too short to time: the run's rate
		// instead of the probed iteration.
		{"the run's rate for a loop not timed", 0, 600 * time.Nanosecond, 10, 0, 2.9e9, 0, 3 * time.Nanosecond},
		{"the main engine's speed when faster than probed", 0, 7 * us, 100, 0, 0, 1e9, 100 * time.Nanosecond},
		{"the probed iteration when faster", 0, us / 2, 100, 0, 0, 1e8, us / 2},
		{"probed only (timing off)", 0, 7 * us, 10, 0, 0, 0, 7 * us},
	}
	for _, c := range cases {
		if got := CPUIteration(c.tail, c.probed, c.insns, c.loopRate, c.runRate, c.mainRate); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// A loop of a few instructions an iteration (testdata/loops
	// earlyexit): the probed iteration takes 7x the plain one, and before
	// the main engine has run a million instructions its speed is unknown.
	// Priced by the probed iteration the simulator looks profitable; at
	// the plain engine's speed it is not.
	sim := DeviceCosts{LaunchLatency: 100 * us, HostToDevice: 1e9, DeviceToHost: 1e9, ThreadInsnsPerSecond: 4e8}
	const count, insns = 1e6, 8
	const plainRate = insns / 30e-9 // 30 ns an iteration
	probed := 210 * time.Nanosecond
	if e := sim.Predict(count, probed, insns, 0, 0, 0); !e.Pays() {
		t.Fatalf("the example does not show the problem: priced by the probed iteration: %s", e)
	}
	if e := sim.Predict(count, CPUIteration(0, probed, insns, plainRate, 0, 0), insns, 0, 0, 0); e.Pays() {
		t.Errorf("priced at the plain engine's speed, offloaded: %s", e)
	}
}

// TestLedger checks when measured launches send a hot spot back to the
// CPU: at once for a launch far slower than the CPU, after a window of
// launches slower than the CPU, never for launches that pay, nor for dear
// launches before a steady state that pays.
func TestLedger(t *testing.T) {
	ms := time.Millisecond
	us := time.Microsecond
	var l ledger
	// The first launch is an outlay, however dear: a trailing update's
	// first, which made the buffers and warmed the probes.
	if why := l.add(100*ms, 1000, us, 0); why != "" {
		t.Errorf("the first launch, 100x slower: disarmed (%s)", why)
	}
	for i, g := range []time.Duration{2 * ms, ms / 2, ms, 2 * ms, 3 * ms / 2, 3 * ms / 2} { // wait for the verdict
		if why := l.add(g, 1000, us, 0); why != "" && i < 5 {
			t.Errorf("launch %d: disarmed before verdictAfter (%s)", i+2, why)
		} else if i == 5 && (why == "" || !strings.Contains(why, "the last 3 launches")) { // 3 ms against 2 ms, the 2 ms one left out
			t.Errorf("the last three launches slower: %q", why)
		}
	}
	// One stalled launch does not make a window lose: the window leaves
	// its dearest out.
	l = ledger{}
	l.add(100*ms, 1000, us, 0)
	for i := 0; i < 20; i++ {
		g := ms / 5
		if i%4 == 3 {
			g = 6 * ms // 6 ms against 1 ms: under lossFactor
		}
		if why := l.add(g, 1000, us, 0); why != "" {
			t.Fatalf("launch %d, paying 5x but every fourth stalled: disarmed (%s)", i+2, why)
		}
	}
	// Dear launches before the steady state (jacobi2dt's sweeps on gpusim:
	// buffers merged, a replay prepared) do not disarm a hot spot whose
	// later launches pay.
	l = ledger{}
	l.add(30*ms, 1000, 2*us, 0)
	for i, g := range []time.Duration{10 * ms, 9 * ms, ms, ms, ms, ms, ms, ms, ms, ms, ms, ms} {
		if why := l.add(g, 1000, 2*us, 0); why != "" {
			t.Errorf("launch %d, steady at half the CPU's time: disarmed (%s)", i+2, why)
		}
	}
	// Past the window, a launch far slower than the CPU disarms at once
	// after one that lost; alone, it may be a stall of the host's.
	l = ledger{}
	for i := 0; i <= ledgerWindow; i++ {
		l.add(0, 1000, us, 0)
	}
	if why := l.add(11*ms, 1000, us, 0); why != "" {
		t.Errorf("one launch 11x slower after launches that paid: disarmed (%s)", why)
	}
	l.add(0, 1000, us, 0)
	l.add(2*ms, 1000, us, 0)
	if why := l.add(11*ms, 1000, us, 0); why == "" || !strings.Contains(why, "1000 iterations") {
		t.Errorf("one launch 11x slower after one 2x slower: %q", why)
	}
	l = ledger{}
	for i := 0; i < 20; i++ {
		if why := l.add(ms/10, 1000, us, 0); why != "" {
			t.Fatalf("launch %d pays 10x: disarmed (%s)", i, why)
		}
	}
	// One dear launch among many that paid does not disarm.
	if why := l.add(11*ms, 1000, us, 0); why != "" {
		t.Errorf("one launch 11x slower after 19 paying 10x: disarmed (%s)", why)
	}
	// A better CPU estimate reprices the earlier launches.
	if why := l.add(ms/10, 1000, time.Nanosecond, 0); why == "" {
		t.Errorf("the CPU turned out 1000x faster: not disarmed")
	}
}

// TestLedgerShrinkingInstances: launches that paid early do not keep a
// hot spot on the GPU once its windows lose launch after launch
// (gramschmidt's column updates, which shrink column by column): it goes
// back after sustainedLoss losing windows in a row, while the launches
// still pay in all; a window that pays again starts the count over.
func TestLedgerShrinkingInstances(t *testing.T) {
	ms, us := time.Millisecond, time.Microsecond
	var l ledger
	l.add(50*ms, 1000, us, 0)
	for i := 0; i < 20; i++ {
		if why := l.add(ms, 10000, us, 0); why != "" { // 1 ms against 10 ms
			t.Fatalf("launch %d pays 10x: disarmed (%s)", i+2, why)
		}
	}
	lose := func(n int) string {
		for i := 0; i < n; i++ {
			if why := l.add(2*ms, 1000, us, 0); why != "" { // 2 ms against 1 ms
				return why
			}
		}
		return ""
	}
	// The window loses from the third losing launch on.
	if why := lose(ledgerWindow + sustainedLoss - 2); why != "" {
		t.Fatalf("%d losing launches: disarmed (%s)", ledgerWindow+sustainedLoss-2, why)
	}
	l.add(ms/10, 10000, us, 0) // one that pays: the window pays again
	if why := lose(ledgerWindow + sustainedLoss - 2); why != "" {
		t.Fatalf("after a window that paid, %d losing launches: disarmed (%s)", ledgerWindow+sustainedLoss-2, why)
	}
	why := lose(1)
	if !strings.Contains(why, fmt.Sprintf("the last %d launches each ended a window", sustainedLoss)) {
		t.Fatalf("windows losing %d launches in a row, the launches paying in all: %q", sustainedLoss, why)
	}
	if l.gpu > time.Duration(l.iterations)*us {
		t.Errorf("the test's launches no longer pay in all (%v against %v): it tests the old rule", l.gpu, time.Duration(l.iterations)*us)
	}
}

// TestLedgerSlowlyGrowingInstances checks that a hot spot whose instances grow
// by a trip a step (symm's triangle), losing early to the GPU side's
// fixed costs, stays on the GPU while the loss shrinks, too slowly for a
// window of three to see the growth; and that one whose loss does not
// shrink as its instances grow goes back to the CPU.
func TestLedgerSlowlyGrowingInstances(t *testing.T) {
	us := time.Microsecond
	// Instance n: 1000 iterations of n+20 ns each on the CPU (0.02 ms,
	// one trip, more a step), 2 ms of GPU side, almost all fixed.
	instance := func(n int) (gpu, cpuIter time.Duration) {
		return 2*time.Millisecond + time.Duration(n)*us/10, time.Duration(n+20) * time.Nanosecond * 40
	}
	var l ledger
	for n := 0; n < 200; n++ {
		g, c := instance(n)
		if why := l.add(g, 1000, c, 0); why != "" {
			t.Fatalf("instance %d (GPU side %v, CPU %v): disarmed (%s)", n, g, 1000*c, why)
		}
	}
	if _, c := instance(199); 1000*c < 4*time.Millisecond {
		t.Fatalf("the test's instances never pay (CPU side %v at the end): it tests nothing", 1000*c)
	}
	// Launching late in the triangle (its first instances ran on the CPU
	// while the kernels loaded): 2% more CPU side a launch from 2 ms, the
	// GPU side 2.6 ms: they pay from the 16th. The first verdict sees the
	// growth from the first full window.
	l = ledger{}
	for n := 0; n < 20; n++ {
		c := time.Duration(2000*(1+0.02*float64(n))) * time.Nanosecond
		if why := l.add(2600*us, 1000, c, 0); why != "" {
			t.Fatalf("launch %d late in a growing triangle (CPU side %v): disarmed (%s)", n+1, 1000*c, why)
		}
	}
	// The loss stays: the GPU side grows with the CPU's.
	l = ledger{}
	var why string
	for n := 0; n < 200 && why == ""; n++ {
		_, c := instance(n)
		why = l.add(1000*c+time.Millisecond, 1000, c, 0)
	}
	if why == "" {
		t.Fatal("instances that grow, each losing 1 ms to the GPU side: not disarmed")
	}
}

// TestLedgerFailedLaunches checks that launches whose kernel failed
// (lostLaunch: launches of no iterations, the CPU running their
// instances) count against a hot spot: failures among launches that pay
// in all do not disarm it, failures that outweigh what the launches saved
// do, saying so.
func TestLedgerFailedLaunches(t *testing.T) {
	ms := time.Millisecond
	var l ledger
	for i := 0; i < 10; i++ {
		l.add(ms, 1000, 10*time.Microsecond, 0) // 1 ms against 10 ms
	}
	// Nine launches after the first saved 81 ms; three failures of 20 ms
	// leave them ahead.
	for i := 0; i < 3; i++ {
		if why := l.add(20*ms, 0, 10*time.Microsecond, 0); why != "" {
			t.Fatalf("failure %d, the launches ahead in all: disarmed (%s)", i+1, why)
		}
	}
	// The fourth and fifth put them behind.
	var why string
	for i := 0; i < 2 && why == ""; i++ {
		why = l.add(20*ms, 0, 10*time.Microsecond, 0)
	}
	if !strings.Contains(why, "failed") {
		t.Errorf("failures costing more than the launches saved: %q", why)
	}
}

// TestMergeTime checks the price of copies on the device (buffers a
// launch merges) and into new device buffers: bytes over the bandwidth,
// nothing unmeasured, and the bandwidth the launches' merges showed when
// below the device's.
func TestMergeTime(t *testing.T) {
	c := DeviceCosts{DeviceToDevice: 2e9}
	if got := c.MergeTime(1e9); got != 500*time.Millisecond {
		t.Errorf("1 GB at 2 GB/s: %v", got)
	}
	if got := (DeviceCosts{}).MergeTime(1e9); got != 0 {
		t.Errorf("unmeasured: %v", got)
	}
	// Copies into new device memory: at their own bandwidth, else at
	// the copies'.
	if got := (DeviceCosts{HostToDevice: 4e9, HostToNewBuffer: 1e9}).NewBufferTime(1e9); got != time.Second {
		t.Errorf("1 GB into new buffers at 1 GB/s: %v", got)
	}
	if got := (DeviceCosts{HostToDevice: 4e9}).NewBufferTime(1e9); got != 250*time.Millisecond {
		t.Errorf("1 GB into new buffers, their bandwidth unmeasured, at 4 GB/s: %v", got)
	}
	var m copyMeter
	m.add(160<<20, 160*time.Millisecond) // fcond's first merge, at 1 GB/s
	if bw := m.bandwidth(c.DeviceToDevice); bw < 1.04e9 || bw > 1.05e9 {
		t.Errorf("bandwidth %g after a merge at 1 GiB/s, want that", bw)
	}
}

// TestRowGrowth checks the pricing of rows that lengthen: a triangle's
// mean row from its first three, nothing for rows alike, rows that do not
// change linearly, or too few rows.
func TestRowGrowth(t *testing.T) {
	for _, c := range []struct {
		rows  []float64
		count uint64
		want  float64
	}{
		// syrk's rows 0-2 at 1190: 7,614 more instructions a row; the
		// 1,180 rows after them average row 592.
		{[]float64{53306, 60920, 68534}, 1180, (68534 + 7614*(1+1179.0/2)) / 68534},
		{[]float64{300, 200, 100}, 1, 1.0 / 100}, // shrinking: the next row is empty, priced as 1 instruction
		{[]float64{10469, 10469, 10469}, 1171, 1},
		{[]float64{100, 5000, 5100}, 1000, 1}, // not linear
		{[]float64{100, 200, 150}, 1000, 1},
		{[]float64{100, 200}, 1000, 1},
		{[]float64{100, 200, 300}, 0, 1},
	} {
		got := rowGrowth(c.rows, c.count)
		if math.Abs(got-c.want) > 1e-9*c.want {
			t.Errorf("rows %v, %d after them: growth %g, want %g", c.rows, c.count, got, c.want)
		}
	}
}

// TestMeasureSimulator measures the simulator: every cost is positive and
// an empty launch costs less than a second.
func TestMeasureSimulator(t *testing.T) {
	d := gpusim.New(gpusim.Options{})
	if err := d.Init(); err != nil {
		t.Fatal(err)
	}
	ctx, err := d.NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	c, err := MeasureDevice(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", c)
	if c.LaunchLatency <= 0 || c.LaunchLatency > time.Second || c.HostToDevice <= 0 || c.DeviceToHost <= 0 || c.DeviceToDevice <= 0 || c.HostToNewBuffer <= 0 || c.HostToNewBuffer > c.HostToDevice || c.ThreadInsnsPerSecond <= 0 {
		t.Errorf("implausible costs %+v", c)
	}
}

// TestCalibration checks that the kernel times measured on launches scale
// the throughput model's predictions after them.
func TestCalibration(t *testing.T) {
	c := DeviceCosts{LaunchLatency: time.Microsecond, HostToDevice: 1e9, DeviceToHost: 1e9, ThreadInsnsPerSecond: 1e9}
	model := c.Predict(1000, time.Microsecond, 100, 0, 0, 0).Kernel
	if want := c.ModelKernel(1000, 100); model != want || want != 200*time.Microsecond {
		t.Fatalf("model kernel %v, ModelKernel %v, want 200µs", model, want)
	}
	var cal calibration
	if cal.scale() != 0 {
		t.Errorf("scale %v before any launch, want 0", cal.scale())
	}
	cal.add(model, 10*model)
	cal.add(0, time.Second) // no prediction: not counted
	if s := cal.scale(); s != 10 {
		t.Errorf("scale %v, want 10", s)
	}
	c.KernelScale = cal.scale()
	if e := c.Predict(1000, time.Microsecond, 100, 0, 0, 0); e.Kernel != 10*model || e.Pays() {
		t.Errorf("scaled prediction %s, want kernel %v and not paying", e, 10*model)
	}
}

// TestCopyMeter checks that the copy bandwidth the launches teach the
// model comes from launches that copied enough to tell: a small one's
// fixed costs (new buffers, the error record) do not price a gigabyte's
// copy, as conv2d's inner loop (178 KB in a millisecond) did its image's.
func TestCopyMeter(t *testing.T) {
	const measured = 15e9
	var m copyMeter
	if bw := m.bandwidth(measured); bw != measured {
		t.Fatalf("bandwidth %g before any launch, want the measured %g", bw, measured)
	}
	m.add(178128, time.Millisecond)
	if bw := m.bandwidth(measured); bw != measured {
		t.Errorf("bandwidth %g after a 178 KB launch, want the measured %g", bw, measured)
	}
	c := DeviceCosts{HostToDevice: m.bandwidth(measured)}
	if e := c.Predict(14000, time.Microsecond, 1, 0, 1<<30, 0); e.Copy > 100*time.Millisecond {
		t.Errorf("a GB's copy predicted at %v after a small launch, want about 72 ms", e.Copy)
	}
	// A launch that copied 240 MB in 0.18 s (the guest's pages read and
	// new buffers made on the way): the residency's real bandwidth.
	m.add(240<<20, 180*time.Millisecond)
	want := float64(240<<20) / 0.18
	if bw := m.bandwidth(measured); bw < 0.99*want || bw > 1.01*want {
		t.Errorf("bandwidth %g after a 240 MB launch in 0.18 s, want %g", bw, want)
	}
	// Never above the device's bare copies.
	var fast copyMeter
	fast.add(1<<30, time.Millisecond)
	if bw := fast.bandwidth(measured); bw != measured {
		t.Errorf("bandwidth %g, want at most the measured %g", bw, measured)
	}
}

// TestEstimateFetch checks that bringing back what the device holds of an
// instance's footprints counts on the CPU side: LU's column scaling, a few
// microseconds of iterations over a column whose pages the trailing update
// left on the device, pays on the GPU.
func TestEstimateFetch(t *testing.T) {
	c := DeviceCosts{LaunchLatency: 20 * time.Microsecond, HostToDevice: 10e9, DeviceToHost: 8e9}
	e := c.Predict(2000, 4*time.Nanosecond, 6, 30*time.Microsecond, 0, 0)
	if e.Pays() {
		t.Fatalf("%s: pays without a fetch", e)
	}
	e.Fetch = c.FetchTime(2000 * 4096)
	if want := time.Duration(2000 * 4096 / 8e9 * float64(time.Second)); e.Fetch != want {
		t.Errorf("fetch %v, want %v", e.Fetch, want)
	}
	if !e.Pays() || e.CPUSide() != e.CPU+e.Fetch || !strings.Contains(e.String(), "bringing back") {
		t.Errorf("%s: want it to pay, the fetch on the CPU side", e)
	}
	if bw := fetchBandwidth(8e9, 64<<10, time.Millisecond); bw != 8e9 {
		t.Errorf("bandwidth %g from 64 KiB brought back, want the measured 8e9", bw)
	}
	if bw := fetchBandwidth(8e9, 16<<20, 8*time.Millisecond); bw < 2.09e9 || bw > 2.1e9 {
		t.Errorf("bandwidth %g from 16 MiB in 8 ms, want 2.1e9", bw)
	}
	// The ledger counts the fetches on the CPU side.
	var l ledger
	for i := 0; i < 4; i++ {
		if why := l.add(100*time.Microsecond, 2000, 4*time.Nanosecond, e.Fetch); why != "" {
			t.Fatalf("launch %d: disarmed (%s) though the CPU would have brought back 8 MB", i, why)
		}
	}
	l = ledger{}
	for i := 0; i <= ledgerWindow; i++ {
		l.add(10*time.Microsecond, 2000, 4*time.Nanosecond, 0)
	}
	if why := l.add(100*time.Microsecond, 2000, 4*time.Nanosecond, 0); why == "" {
		t.Errorf("a launch 12 times dearer than its CPU side with nothing to bring back: not disarmed")
	}
}

// TestStreak checks when instances predicted not to pay disarm a hot
// spot: eight alike do, where probing them cost more than probeShare of
// their CPU time; eight alike probed cheaply, and instances that keep
// improving (cholesky's columns growing against fixed launch costs), do
// not.
func TestStreak(t *testing.T) {
	est := func(gpu, cpu time.Duration) Estimate { return Estimate{Launch: gpu, CPU: cpu} }
	const probed = 100 * time.Microsecond // a tenth of a millisecond's CPU side
	var s streak
	for i := 1; i <= disarmAfter; i++ {
		if got := s.add(est(2*time.Millisecond, time.Millisecond), probed); got != (i == disarmAfter) {
			t.Fatalf("instance %d of a flat streak: disarm %v", i, got)
		}
	}
	s = streak{}
	for i := 1; i <= 3*disarmAfter; i++ {
		if s.add(est(2*time.Millisecond, time.Millisecond), 20*time.Microsecond) {
			t.Fatalf("instance %d of a flat streak probed at 2%% of its CPU time: disarmed", i)
		}
	}
	// Cholesky's columns: a fixed GPU side of 1 ms against rows whose dot
	// products lengthen by one each column, from column 10 (up to 200,
	// past which eight columns improve the CPU side by less than 3%).
	s = streak{}
	for j := 10; j < 200; j++ {
		cpu := time.Duration(2400-j) * time.Duration(j) * 2 * time.Nanosecond
		if e := est(time.Millisecond, cpu); !e.Pays() && s.add(e, probed) {
			t.Fatalf("column %d (CPU %v): disarmed while the columns grow", j, cpu)
		}
	}
	// A streak that improves too little disarms.
	s = streak{}
	for i := 0; i < disarmAfter; i++ {
		if s.add(est(time.Duration(1000-2*i)*time.Millisecond, 10*time.Millisecond), time.Millisecond) {
			if i != disarmAfter-1 {
				t.Fatalf("disarmed at instance %d", i)
			}
			return
		}
	}
	t.Errorf("a streak improving by 0.2%% an instance did not disarm")
}

// TestTrustedTail checks when a tail's timing prices the CPU: always for
// an iteration with loops of its own (a triangle's last rows are longer
// than its probed first ones), and for a straight iteration only when it
// is not slower than the probed one (else it timed the breakpoint's round
// trip), in which case CPUIteration falls back to the probed time and the
// engines' rates.
func TestTrustedTail(t *testing.T) {
	us := time.Microsecond
	for _, c := range []struct {
		tail, probed time.Duration
		straight     bool
		want         time.Duration
	}{
		{4 * us, us / 4, true, 0},
		{4 * us, us / 4, false, 4 * us},
		{us / 10, us / 4, true, us / 10},
		{4 * us, 0, true, 4 * us},
		{0, us, true, 0},
	} {
		if got := TrustedTail(c.tail, c.probed, c.straight); got != c.want {
			t.Errorf("TrustedTail(%v, %v, %v) = %v, want %v", c.tail, c.probed, c.straight, got, c.want)
		}
	}
	// gemm's inner j loop: 7 instructions, 4.4 us timed on the tail,
	// 0.26 us probed, the main engine at 500 M instructions a second.
	tail := TrustedTail(4400*time.Nanosecond, 260*time.Nanosecond, true)
	if got := CPUIteration(tail, 260*time.Nanosecond, 7, 0, 0, 5e8); got != 14*time.Nanosecond {
		t.Errorf("gemm's inner iteration priced at %v on the CPU, want 14ns", got)
	}
}

// TestRunLedgerLoses checks the whole run's brake: nothing before
// runLossMin is spent, then offloading stops once the GPU sides and the
// bytes brought back cost more than runLossFactor times the CPU engine's
// time for the same iterations, and not while they pay.
func TestRunLedgerLoses(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		gpu, cpu, back time.Duration
		lost           bool
	}{
		{gpu: 300 * ms, cpu: 10 * ms, back: 100 * ms, lost: false}, // under runLossMin
		{gpu: 400 * ms, cpu: 10 * ms, back: 200 * ms, lost: true},
		{gpu: 600 * ms, cpu: 500 * ms, back: 0, lost: false}, // 1.2 times: within the factor
		{gpu: 600 * ms, cpu: 300 * ms, back: 0, lost: true},
		{gpu: 100 * ms, cpu: 2000 * ms, back: 2500 * ms, lost: false}, // bringing back, but the launches saved more
		{gpu: 100 * ms, cpu: 1000 * ms, back: 2500 * ms, lost: true},
	} {
		l := runLedger{gpu: c.gpu, cpu: c.cpu}
		why, lost := l.loses(c.back)
		if lost != c.lost || lost && !strings.Contains(why, "bringing data back") {
			t.Errorf("gpu %v, cpu %v, back %v: lost %v (%q), want %v", c.gpu, c.cpu, c.back, lost, why, c.lost)
		}
	}
}

// TestLedgerGrowingInstances: a window of launches that cost more than
// the CPU does not disarm a hot spot whose instances grow (cholesky's
// columns: each costs the CPU more than the one before, and a launch's
// fixed cost stays), and does once they stop growing.
func TestLedgerGrowingInstances(t *testing.T) {
	ms, us := time.Millisecond, time.Microsecond
	var l ledger
	l.add(50*ms, 1000, us, 0) // the first: an outlay
	for i := 0; i < 8; i++ {
		// 1.2 ms of GPU side against a CPU side growing 10% an instance
		// from 0.5 ms.
		count := uint64(500 + 50*i)
		if why := l.add(1200*us, count, us, 0); why != "" {
			t.Fatalf("instance %d of a growing loop: disarmed (%s)", i+2, why)
		}
	}
	var why string
	for i := 0; i < 3 && why == ""; i++ {
		why = l.add(3000*us, 1700, us, 0) // the same size from now on
	}
	if !strings.Contains(why, "the last 3 launches") {
		t.Errorf("instances no longer growing, dearer on the GPU: %q", why)
	}
}

// TestStays: an instance predicted a little dearer on the GPU launches
// all the same after a launch (going to the CPU for it costs what the
// prediction leaves out), not after a fallback, and not when it is
// predicted far dearer.
func TestStays(t *testing.T) {
	ms := time.Millisecond
	near := Estimate{CPU: 10 * ms, Launch: ms, Kernel: 10 * ms} // 1.1 times
	far := Estimate{CPU: 10 * ms, Launch: ms, Kernel: 14 * ms}  // 1.5 times
	if sp := (&spot{launchedLast: true}); !sp.stays(near) || sp.stays(far) {
		t.Errorf("after a launch: stays %v at 1.1 times (want true), %v at 1.5 (want false)", sp.stays(near), sp.stays(far))
	}
	if sp := (&spot{}); sp.stays(near) {
		t.Error("after a fallback, an instance predicted not to pay launched")
	}
}
