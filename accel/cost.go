package accel

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/gxbit/gxbit/gpu"
)

// The cost model (RATIONALE).
//
// A launch pays only when the GPU finishes the iterations it takes, with
// the launch and the copies, before the CPU engine would have. Before the
// first launch of a hot spot phase 2 predicts both sides: the CPU from
// the plain engine's speed, timed on the instance before probing, times
// the iteration's instructions (CPUIteration), the GPU from the
// instance's fixed overhead so far (probing and guards, which every
// offloaded instance pays again) and the device's costs
// (DeviceCosts, measured once per run at the first launch that needs
// them: launch latency, copy bandwidth each way and, on the simulator,
// its thread instructions per second on this host), the bytes the launch
// may copy in, and the kernel's work (on the simulator: guest
// instructions per iteration, times the PTX instructions one of them
// becomes, over its throughput; a real GPU is not predicted, its first
// launch is timed). After every launch the prediction gives way to
// measurement: the instance's whole cost on the GPU side (probing,
// guards, copies, the kernel) against what its iterations cost the CPU
// engine, timed on the plain iterations it runs itself at the end of
// each instance. A hot spot whose launches cost more than the CPU would
// have is disarmed: the breakpoint goes away, the loop runs on the CPU,
// and the report says "not profitable" with the numbers.

// DeviceCosts are what work on one device costs.
type DeviceCosts struct {
	// LaunchLatency is a launch of an empty kernel and the wait for it.
	LaunchLatency time.Duration `json:"launch_latency_ns"`
	// HostToDevice and DeviceToHost are copy bandwidths, in bytes per
	// second.
	HostToDevice float64 `json:"host_to_device_bytes_per_s"`
	DeviceToHost float64 `json:"device_to_host_bytes_per_s"`
	// HostToNewBuffer is the bandwidth of a copy into device memory just
	// allocated, in bytes per second: what a launch pays for the bytes no
	// buffer holds (ptxgen.Resident.Unheld). On the simulator the copy
	// maps the new buffer's pages as it first writes them (trisolv's
	// initialisation copied its 500 MB triangle in at 1.7 GB/s, where a
	// buffer copied into before takes 25 GB/s, and launched: 0.36 s of
	// copies against 0.05 s on the CPU); on a GPU it is HostToDevice.
	HostToNewBuffer float64 `json:"host_to_new_buffer_bytes_per_s,omitempty"`
	// DeviceToDevice is the bandwidth of copies on the device, in bytes
	// per second: a launch whose footprint overlaps buffers the device
	// holds merges them into one (ptxgen.Resident.ToMerge).
	DeviceToDevice float64 `json:"device_to_device_bytes_per_s,omitempty"`
	// ThreadInsnsPerSecond is the simulator's throughput on this host,
	// with all the cores it uses; 0 for a real GPU, whose kernels the
	// model does not predict.
	ThreadInsnsPerSecond float64 `json:"thread_instructions_per_s,omitempty"`
	// KernelScale is how many times longer the run's kernels took than
	// the throughput model gave them (measured over the launches so far,
	// see calibration; 0 or 1 until one ran): the spin loop that measures
	// the throughput does no memory access, the guest's kernels do.
	KernelScale float64 `json:"kernel_scale,omitempty"`
}

// calibration compares, over a run's launches, the kernel time the
// throughput model predicted with the time the kernels took, for
// DeviceCosts.KernelScale: a hot spot's loss teaches the model about the
// hot spots that launch after it.
type calibration struct {
	predicted, measured time.Duration
}

// add records one launch the model predicted would take predicted (before
// scaling) and that took measured.
func (c *calibration) add(predicted, measured time.Duration) {
	if predicted > 0 && measured > 0 {
		c.predicted += predicted
		c.measured += measured
	}
}

// scale is measured over predicted so far, 0 before any launch.
func (c calibration) scale() float64 {
	if c.predicted <= 0 {
		return 0
	}
	return float64(c.measured) / float64(c.predicted)
}

// minCopyMeasured is the least a launch must copy in for copyMeter to
// learn the copies' bandwidth from it: below it a launch's fixed costs
// (new device buffers, the error record, a copy call per run of pages)
// outweigh its bytes. (A launch of conv2d's inner loop copying 178 KB in
// a millisecond set the bandwidth at 178 MB/s, and its 1 GB image was
// priced at 5.7 s on the simulator, 21 s on an H100, against 3.2 s on the
// CPU.)
const minCopyMeasured = 32 << 20

// copyMeter measures what copying in costs through the residency (the
// guest's pages read, buffers made, the copies), summed over the launches
// that copied at least minCopyMeasured bytes; or, as Accelerator.merges,
// what merging buffers on the device costs. (fcond's sweeps on gpusim
// merged 160 MB arrays at 0.3 to 0.4 GB/s, where the device's measured
// copies on the device run at tens of GB/s, and launched: 1.1 s of merges
// against 0.2 s on the CPU.)
type copyMeter struct {
	bytes uint64
	took  time.Duration
}

// add records a launch that copied bytes in, taking took.
func (m *copyMeter) add(bytes uint64, took time.Duration) {
	if bytes >= minCopyMeasured && took > 0 {
		m.bytes += bytes
		m.took += took
	}
}

// bandwidth is the copy-in bandwidth to predict with, in bytes per
// second: the launches' where they measured one below measured (the
// device's bare copies), else measured.
func (m copyMeter) bandwidth(measured float64) float64 {
	if m.took <= 0 {
		return measured
	}
	seen := float64(m.bytes) / m.took.Seconds()
	if measured <= 0 {
		return seen
	}
	return min(measured, seen)
}

// NewBufferTime is what copying bytes into device memory just allocated
// costs, at HostToNewBuffer (HostToDevice where not measured; 0 where
// neither is).
func (c DeviceCosts) NewBufferTime(bytes uint64) time.Duration {
	bw := c.HostToNewBuffer
	if bw <= 0 {
		bw = c.HostToDevice
	}
	if bw <= 0 || bytes == 0 {
		return 0
	}
	return time.Duration(float64(bytes) / bw * float64(time.Second))
}

// MergeTime is what copying bytes on the device costs, merging resident
// buffers, at the device-to-device bandwidth (0 when not measured).
func (c DeviceCosts) MergeTime(bytes uint64) time.Duration {
	if c.DeviceToDevice <= 0 || bytes == 0 {
		return 0
	}
	return time.Duration(float64(bytes) / c.DeviceToDevice * float64(time.Second))
}

// ptxPerGuestInsn is about how many PTX instructions a thread runs per
// guest instruction of the iteration it runs (address arithmetic and the
// bounds checks of each access come on top of the loop's own work).
const ptxPerGuestInsn = 2

// costModule is the PTX the device measurement launches: an empty kernel,
// and a counted loop of four instructions per trip (the simulator's
// throughput).
const costModule = `.version 8.0
.target sm_90
.address_size 64

.visible .entry gx_cost_empty()
{
	ret;
}

.visible .entry gx_cost_spin(.param .u32 n, .param .u64 out)
{
	.reg .pred %p<2>;
	.reg .b32 %r<5>;
	.reg .b64 %rd<3>;
	ld.param.u32 %r1, [n];
	mov.u32 %r2, 0;
	mov.u32 %r3, 7;
SPIN:
	mul.lo.u32 %r3, %r3, 3;
	add.u32 %r2, %r2, 1;
	setp.lt.u32 %p1, %r2, %r1;
	@%p1 bra SPIN;
	mov.u32 %r4, %tid.x;
	setp.ne.u32 %p1, %r4, 0;
	@%p1 bra DONE;
	ld.param.u64 %rd1, [out];
	st.global.u32 [%rd1], %r3;
DONE:
	ret;
}
`

// Shapes of the measurement: the copied buffer, the spin kernel's grid and
// its trips per thread, and the new buffers timed each way.
const (
	costCopyBytes   = 4 << 20
	costSpinBlocks  = 16
	costSpinThreads = 128
	costSpinTrips   = 250
	costNewTries    = 3
)

// MeasureDevice measures the costs of the device of ctx. simulated says
// whether it is the simulator, whose throughput is measured too. It takes
// a few milliseconds.
func MeasureDevice(ctx gpu.Context, simulated bool) (DeviceCosts, error) {
	var c DeviceCosts
	mod, err := ctx.LoadModule(costModule)
	if err != nil {
		return c, fmt.Errorf("measuring the device: %w", err)
	}
	defer mod.Unload()
	empty, err := mod.Function("gx_cost_empty")
	if err != nil {
		return c, fmt.Errorf("measuring the device: %w", err)
	}
	one := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1, Y: 1, Z: 1}, Block: gpu.Dim3{X: 32, Y: 1, Z: 1}}
	best := func(n int, f func() error) (time.Duration, error) {
		var b time.Duration
		for i := 0; i < n; i++ {
			t0 := time.Now()
			if err := f(); err != nil {
				return 0, fmt.Errorf("measuring the device: %w", err)
			}
			if d := time.Since(t0); i == 0 || d < b {
				b = d
			}
		}
		return b, nil
	}
	if c.LaunchLatency, err = best(5, func() error {
		if err := ctx.Launch(empty, one, nil); err != nil {
			return err
		}
		return ctx.Synchronize()
	}); err != nil {
		return c, err
	}
	// The copies' bandwidth, on buffers made beforehand: a launch makes
	// its device buffers once per array, and keeps them (resident), so
	// an allocation is not a cost per byte. (Timing a fresh 4 MiB buffer
	// and host copy with each copy measured 1.2-1.7 GB/s on an H100 whose
	// copies run at 15 GB/s, and the model priced a 3 GB stencil's copies
	// at 12 s and kept it on the CPU.)
	buf, err := ctx.Alloc(costCopyBytes)
	if err != nil {
		return c, fmt.Errorf("measuring the device: %w", err)
	}
	defer ctx.Free(buf)
	host := make([]byte, costCopyBytes)
	for i := 0; i < len(host); i += 4096 {
		host[i] = byte(i)
	}
	h2d, err := best(3, func() error { return ctx.CopyHtoD(buf, host) })
	if err != nil {
		return c, err
	}
	d2h, err := best(3, func() error { return ctx.CopyDtoH(host, buf) })
	if err != nil {
		return c, err
	}
	// A merge copies the old buffers into a new one, and a launch copies
	// what no buffer holds into a new one: those copies are timed into
	// buffers made for each (on the simulator a new buffer's pages are
	// mapped as the copy first writes them: in a buffer copied into
	// before, the copies ran 20 to 60 times faster than fcond's merges
	// did), the best of costNewTries, each buffer kept to the end so that
	// the next one is new memory too (one try on a loaded host measured
	// 150 MB/s, and jacobi2dt's sweeps waited 22 steps to launch).
	var d2d, h2dNew time.Duration
	for i := 0; i < costNewTries; i++ {
		for _, toDevice := range []bool{false, true} {
			t0 := time.Now()
			fresh, err := ctx.Alloc(costCopyBytes)
			if err != nil {
				return c, fmt.Errorf("measuring the device: %w", err)
			}
			defer ctx.Free(fresh)
			if toDevice {
				err = ctx.CopyHtoD(fresh, host)
			} else {
				err = ctx.CopyDtoD(fresh, buf, costCopyBytes)
			}
			if err != nil {
				return c, fmt.Errorf("measuring the device: %w", err)
			}
			d, best := time.Since(t0), &d2d
			if toDevice {
				best = &h2dNew
			}
			if i == 0 || d < *best {
				*best = d
			}
		}
	}
	c.HostToDevice = costCopyBytes / max(h2d.Seconds(), 1e-9)
	c.DeviceToHost = costCopyBytes / max(d2h.Seconds(), 1e-9)
	c.DeviceToDevice = costCopyBytes / max(d2d.Seconds(), 1e-9)
	c.HostToNewBuffer = min(c.HostToDevice, costCopyBytes/max(h2dNew.Seconds(), 1e-9))
	if !simulated {
		return c, nil
	}
	spin, err := mod.Function("gx_cost_spin")
	if err != nil {
		return c, fmt.Errorf("measuring the device: %w", err)
	}
	params := [][]byte{binary.LittleEndian.AppendUint32(nil, costSpinTrips), binary.LittleEndian.AppendUint64(nil, uint64(buf))}
	cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: costSpinBlocks, Y: 1, Z: 1}, Block: gpu.Dim3{X: costSpinThreads, Y: 1, Z: 1}}
	d, err := best(2, func() error {
		if err := ctx.Launch(spin, cfg, params); err != nil {
			return err
		}
		return ctx.Synchronize()
	})
	if err != nil {
		return c, err
	}
	insns := float64(costSpinBlocks * costSpinThreads * (4*costSpinTrips + 10))
	c.ThreadInsnsPerSecond = insns / max((d-c.LaunchLatency).Seconds(), 1e-9)
	return c, nil
}

// Estimate is the cost model's account of one launch: what its
// iterations would cost on the CPU, and the parts of what they cost on
// the GPU.
type Estimate struct {
	Iterations uint64
	CPU        time.Duration // the CPU engine, all the iterations
	// Overhead is what an offloaded instance costs beyond the launch:
	// probing (slower than plain iterations), the guards and the copy
	// bookkeeping, paid again by every instance.
	Overhead time.Duration
	Launch   time.Duration
	// Copy is copying in, and copying on the device where the launch
	// merges buffers the device holds.
	Copy   time.Duration
	Kernel time.Duration // 0 when not predicted (a real GPU before its first launch)
	// Fetch is what the CPU side pays before its iterations: bringing back
	// the bytes of their footprints that only the device holds (arrays
	// earlier kernels left there), 0 when there are none.
	Fetch time.Duration
	// Refill is what the CPU side costs the device after its iterations:
	// the pages they write that the device holds must be copied in again
	// before the next launch that reads them (LU's column scaling on the
	// CPU between trailing updates on the device: a column is a page per
	// row, and every step sent them all back and forth).
	Refill time.Duration
}

// GPU is the GPU side: overhead, launch, copies and kernel.
func (e Estimate) GPU() time.Duration { return e.Overhead + e.Launch + e.Copy + e.Kernel }

// CPUSide is the CPU side: the iterations, the bytes brought back for
// them and the pages they write copied in again.
func (e Estimate) CPUSide() time.Duration { return e.CPU + e.Fetch + e.Refill }

// Pays reports whether the GPU side costs less than the CPU side.
func (e Estimate) Pays() bool { return e.GPU() < e.CPUSide() }

// String gives the numbers, for the report.
func (e Estimate) String() string {
	cpu := fmt.Sprintf("CPU %.3gs", e.CPU.Seconds())
	if e.Fetch > 0 || e.Refill > 0 {
		cpu = fmt.Sprintf("CPU %.3gs (iterations %.3gs, bringing back what the device holds %.3gs, copying in again what they write there %.3gs)", e.CPUSide().Seconds(), e.CPU.Seconds(), e.Fetch.Seconds(), e.Refill.Seconds())
	}
	return fmt.Sprintf("GPU %.3gs (overhead %.3gs, launch %.3gs, copies %.3gs, kernel %.3gs) against %s for %d iterations",
		e.GPU().Seconds(), e.Overhead.Seconds(), e.Launch.Seconds(), e.Copy.Seconds(), e.Kernel.Seconds(), cpu, e.Iterations)
}

// FetchTime is what bringing back bytes that only the device holds costs
// the CPU side, at the device-to-host bandwidth.
func (c DeviceCosts) FetchTime(bytes uint64) time.Duration {
	if c.DeviceToHost <= 0 || bytes == 0 {
		return 0
	}
	return time.Duration(float64(bytes) / c.DeviceToHost * float64(time.Second))
}

// minFetchMeasured is the least the guest must have brought back from the
// device for its rate to replace the measured device-to-host bandwidth
// (pages come back on demand, in runs: a few pages' rate is their calls').
const minFetchMeasured = 1 << 20

// fetchBandwidth is the bandwidth bringing back pages runs at: the
// guest's so far (bytes in took), where it brought back enough to tell,
// when below measured; else measured.
func fetchBandwidth(measured float64, bytes uint64, took time.Duration) float64 {
	if bytes < minFetchMeasured || took <= 0 {
		return measured
	}
	seen := float64(bytes) / took.Seconds()
	if measured <= 0 {
		return seen
	}
	return min(measured, seen)
}

// Predict estimates a launch of count iterations before it runs: each
// costs the CPU cpuPerIter and runs insnsPerIter guest instructions; the
// instance costs overhead besides (probing, guards); the launch copies at
// most copyIn bytes to the device. kernelPerIter, when not 0, is the
// kernel time per iteration measured on earlier launches, which replaces
// the throughput model.
func (c DeviceCosts) Predict(count uint64, cpuPerIter time.Duration, insnsPerIter float64, overhead time.Duration, copyIn uint64, kernelPerIter time.Duration) Estimate {
	e := Estimate{Iterations: count, CPU: time.Duration(count) * cpuPerIter, Overhead: max(overhead, 0), Launch: c.LaunchLatency}
	if c.HostToDevice > 0 {
		e.Copy = time.Duration(float64(copyIn) / c.HostToDevice * float64(time.Second))
	}
	switch {
	case kernelPerIter > 0:
		e.Kernel = time.Duration(count) * kernelPerIter
	case c.ThreadInsnsPerSecond > 0:
		e.Kernel = c.ModelKernel(count, insnsPerIter)
		if c.KernelScale > 0 {
			e.Kernel = time.Duration(float64(e.Kernel) * c.KernelScale)
		}
	}
	return e
}

// ModelKernel is the throughput model's kernel time for count iterations
// of insnsPerIter guest instructions on the simulator, before
// KernelScale (0 for a real GPU).
func (c DeviceCosts) ModelKernel(count uint64, insnsPerIter float64) time.Duration {
	if c.ThreadInsnsPerSecond <= 0 {
		return 0
	}
	return time.Duration(float64(count) * insnsPerIter * ptxPerGuestInsn / c.ThreadInsnsPerSecond * float64(time.Second))
}

// CPUIteration is the best estimate of what one iteration of insns guest
// instructions costs the CPU engine before a launch: the least of tail
// (the plain engine's time on the CPU tail of an earlier instance, which
// also times the engine stopping at the header and going on), insns at
// loopRate (the plain engine's guest instructions per second timed on
// this loop) and insns at runRate (its best speed timed on any hot spot of
// the run); without any of them, the least of probed (the last probed
// iteration, which the probes slow down several times over) and insns at
// mainRate (the main engine's speed so far). A zero duration or rate means
// not measured. The least, because a loop timed between launches runs
// slower than in a run that offloads nothing (the device's pages come
// back, the engines' TLBs were flushed), and the CPU side a launch must
// beat is the plain run's. (gramschmidt's column updates, 7 and 10
// instructions an iteration in instances of 700: timed at 15 M
// instructions a second between launches, the run's best 2.9 G; priced
// by the first, they launched 1,300 times on a run the CPU finishes in
// 1 s, and took twice as long.)
func CPUIteration(tail, probed time.Duration, insns, loopRate, runRate, mainRate float64) time.Duration {
	at := func(r float64) time.Duration {
		if r <= 0 {
			return 0
		}
		return time.Duration(insns / r * float64(time.Second))
	}
	least := func(ds ...time.Duration) time.Duration {
		var best time.Duration
		for _, d := range ds {
			if d > 0 && (best == 0 || d < best) {
				best = d
			}
		}
		return best
	}
	if d := least(tail, at(loopRate), at(runRate)); d > 0 {
		return d
	}
	return least(probed, at(mainRate))
}

// TrustedTail is the tail timing (see CPUIteration) the cost model may
// believe: tail, unless the iteration runs no loop of its own (straight)
// and tail took longer than probed, the same iteration slowed down by the
// probes: the tail's timing then measured the breakpoint's round trip
// (the engine stopping at the header, and going on), not the iteration,
// and 0 is returned. (gemm's inner j loop, 7 instructions an iteration,
// timed 4.4 us for its tail against 0.3 us probed; every one of its
// thousands of short instances, the rows the CPU runs around the
// product's launches, then looked worth a launch.)
func TrustedTail(tail, probed time.Duration, straight bool) time.Duration {
	if straight && probed > 0 && tail > probed {
		return 0
	}
	return tail
}

// ledger is a hot spot's account of its launches after the first: what
// the GPU side cost, how many iterations it took from the CPU, and what
// the CPU would have paid besides to bring back what the device held of
// their footprints, in all and over the last ledgerWindow launches.
type ledger struct {
	launches   int
	gpu        time.Duration
	iterations uint64
	fetch      time.Duration
	window     [ledgerWindow]ledgerEntry
	// losing counts the launches in a row whose window cost more on the
	// GPU side than on the CPU (see sustainedLoss).
	losing int
	// lost says the last launch cost more on the GPU side than on the CPU.
	// A launch far dearer than the CPU disarms at once only after one
	// that lost: alone, it may be a launch the host stalled (12 ms of GPU
	// side, where the launches around it took 0.2 ms against 1.1 ms on
	// the CPU, on a host running three busy loops besides).
	lost bool
	// first is the first full window, the launches after the first
	// (see gaining).
	first windowSum
}

// windowSum is a ledger window's launches but the dearest: their GPU
// side, and their CPU side at the price each was launched at.
type windowSum struct {
	set      bool
	gpu, cpu time.Duration
}

// ledgerEntry is one launch in a ledger's window: its GPU side, what
// bringing back its pages costs, its iterations, and its CPU side at the
// time (the iterations at the CPU's price then).
type ledgerEntry struct {
	gpu, fetch time.Duration
	count      uint64
	cpu        time.Duration
}

// ledgerGrowth is how much more the CPU side of a window's last launch
// must cost than its first's for the window to be growing instances,
// which the window's verdict waits out: cholesky's columns at 2400 cost
// the CPU 2.8 ms in three early on and grow with the column, and an
// H100's launch latency of 0.3 ms each made those three lose; the window
// disarmed the hot spot for good, and the run took 15 s against 2.9.
const ledgerGrowth = 1.05

// The ledger judges a hot spot by its last ledgerWindow launches, once
// it has had verdictAfter after the first: when they (all but the dearest,
// see windowSides) cost more on the GPU side than on the CPU, and the
// launches so far do not pay in all, the
// hot spot goes back to the CPU. Launches before a hot spot's steady
// state pay for what later ones find done (buffers made and merged,
// arrays copied in, the probes warmed up, a replay prepared; the first
// launch most of all): judged from the start, priced against the plain
// engine's time, they disarmed jacobi2dt's sweeps on gpusim after a few
// launches of 5 to 10 ms against 2.6 ms on the CPU, where the launches
// after them (replays) cost 0.5 ms; and the other sweep, left alone on
// the device, then lost to the arrays crossing the bus at every step.
// Past the first ledgerWindow launches after the first, a single launch
// that costs more than lossFactor times its CPU side, after one that cost
// more than its CPU side too, disarms at once, unless the launches so far
// pay in all (one dear launch among hundreds that
// paid, a buffer merged or the host busy, disarmed LU's column scaling
// after 268 launches on gpusim).
//
// Nor do the launches so far, paying in all, keep a hot spot on the GPU
// whose windows have lost sustainedLoss launches in a row: instances that
// shrink (gramschmidt's column updates, each over the columns right of
// the last) paid early and lost late, and the early gains kept them
// launching until they were spent: 465 launches, the last 458 even with
// the CPU in all (2.16 s against 2.16 s), on an H100.
const (
	ledgerWindow  = 3
	verdictAfter  = 6
	lossFactor    = 10
	sustainedLoss = 2 * ledgerWindow
)

// add records one launch of count iterations whose GPU side cost gpu (a
// launch whose kernel failed is one of no iterations: see lostLaunch),
// when an iteration costs the CPU engine cpuIter (the best estimate so
// far, which also prices the earlier launches) and running them on the CPU
// would first have brought back what the device held of their footprints,
// at a cost of fetch. It returns why the hot spot should go back to the
// CPU, or "".
func (l *ledger) add(gpu time.Duration, count uint64, cpuIter, fetch time.Duration) string {
	l.launches++
	if l.launches == 1 {
		return ""
	}
	l.gpu += gpu
	l.iterations += count
	l.fetch += fetch
	e := ledgerEntry{gpu: gpu, fetch: fetch, count: count, cpu: time.Duration(count) * cpuIter}
	l.window[(l.launches-2)%ledgerWindow] = e
	if l.launches-1 == ledgerWindow {
		// The first full window: what gaining measures growth from.
		wGPU, _, _, wAt := l.windowSides(cpuIter)
		l.first = windowSum{true, wGPU, wAt}
	}
	cpu := e.cpuSide(cpuIter)
	all := time.Duration(l.iterations)*cpuIter + l.fetch
	lostBefore := l.lost
	l.lost = gpu > cpu
	if l.launches-1 > ledgerWindow && gpu > lossFactor*cpu && lostBefore && l.gpu > all {
		if count == 0 {
			return fmt.Sprintf("a launch that failed cost %.3gs on the GPU side (copies, kernel), and the CPU ran its instance (all %d launches after the first: %.3gs against %.3gs)", gpu.Seconds(), l.launches-1, l.gpu.Seconds(), all.Seconds())
		}
		return fmt.Sprintf("a launch of %d iterations cost %.3gs on the GPU side (probing, guards, copies, kernel), the CPU engine %.3gs", count, gpu.Seconds(), cpu.Seconds())
	}
	if l.launches-1 < verdictAfter {
		return ""
	}
	wGPU, wCPU, wCount, wAt := l.windowSides(cpuIter)
	if wGPU <= wCPU {
		l.losing = 0
		return ""
	}
	first := l.window[(l.launches-1)%ledgerWindow]  // the oldest in the window
	latest := l.window[(l.launches-2)%ledgerWindow] // this launch
	if float64(latest.cpu) > ledgerGrowth*float64(first.cpu) || l.gaining(wGPU, wAt) {
		return "" // instances that grow may pay later
	}
	l.losing++
	if l.gpu <= all {
		if l.losing < sustainedLoss {
			return ""
		}
		return fmt.Sprintf("the last %d launches each ended a window of %d that cost more on the GPU side than the CPU engine's, its dearest launch left out; the last, of %d iterations, %.3gs against %.3gs (all %d after the first: %.3gs against %.3gs)", l.losing, ledgerWindow, wCount, wGPU.Seconds(), wCPU.Seconds(), l.launches-1, l.gpu.Seconds(), all.Seconds())
	}
	return fmt.Sprintf("the last %d launches but their dearest, of %d iterations, cost %.3gs on the GPU side (probing, guards, copies, kernel), the CPU engine %.3gs (all %d after the first: %.3gs against %.3gs)", ledgerWindow, wCount, wGPU.Seconds(), wCPU.Seconds(), l.launches-1, l.gpu.Seconds(), all.Seconds())
}

// windowSides sums the GPU and CPU sides (the iterations at cpuIter, and
// the fetches) and the iterations of the window's launches but its dearest
// (the one whose GPU side exceeds its CPU side the most). One launch the
// host stalled does not decide the window: on a loaded host a launch now
// and then took 4 to 6 ms of GPU side where the others took 0.2 ms,
// against 1.1 ms on the CPU, and the window it ended disarmed a hot spot
// whose launches paid five times over (testdata/ownpages.c on gpusim, the
// test's machine running three busy loops besides). cpuAt is their CPU
// side at the prices they were launched at, with the fetches.
func (l *ledger) windowSides(cpuIter time.Duration) (gpu, cpu time.Duration, count uint64, cpuAt time.Duration) {
	dearest, loss := -1, time.Duration(math.MinInt64)
	for i, e := range l.window {
		if d := e.gpu - e.cpuSide(cpuIter); d > loss {
			dearest, loss = i, d
		}
	}
	for i, e := range l.window {
		if i == dearest {
			continue
		}
		gpu += e.gpu
		cpu += e.cpuSide(cpuIter)
		count += e.count
		cpuAt += e.cpu + e.fetch
	}
	return gpu, cpu, count, cpuAt
}

// gaining reports whether a losing window whose GPU side is gpu, and
// whose CPU side at the launches' prices is cpu, belongs to instances
// that gain on the GPU: their CPU side grew past ledgerGrowth times the
// first full window's (the three launches after the first), and the
// loss (GPU side over CPU side) shrank below that window's. A triangle
// whose instances grow by one trip a step grows too slowly for a window
// of three to tell (symm at 900 1000 on an H100: each instance's k loop
// one trip longer, the GPU side about 2 ms a launch, mostly fixed; its
// 47th instance cost the CPU 1.9 ms, 5% more than the 45th, the window
// lost, and the hot spot went back to the CPU for 850 instances of up
// to 17 ms each: 8.4 s against 2.7; measured from the first verdict's
// window instead, the first verdict itself disarmed it: 6.4 and 7.9 s).
// Priced at a constant rate, a nest whose instances do not grow never
// has a CPU side that grew, whatever its GPU side did.
func (l *ledger) gaining(gpu, cpu time.Duration) bool {
	f := l.first
	return f.set && float64(cpu) > ledgerGrowth*float64(f.cpu) && gpu-cpu < f.gpu-f.cpu
}

// cpuSide is what launch e's iterations would have cost the CPU at
// cpuIter an iteration, with bringing back what the device held of their
// footprints.
func (e ledgerEntry) cpuSide(cpuIter time.Duration) time.Duration {
	return time.Duration(e.count)*cpuIter + e.fetch
}

// runLedger is the whole run's account of offloading, over every hot
// spot's launches after its first (see ledger): the GPU sides, the CPU
// engine's time for the same iterations, and, from the Resident, the time
// spent bringing back to the host what the device held when the CPU read
// it. Hot spots judged one by one each pay, and still the run can lose:
// two that share arrays, one on each side, send them across the bus at
// every instance (gramschmidt's column updates and the CPU code around
// them: 566 launches, 5.3 s of copies, 20 times native, on an H100).
type runLedger struct {
	gpu, cpu time.Duration
}

// Past runLossMin spent on the GPU side and bringing data back, a run
// whose offloading costs more than runLossFactor times what the CPU
// would have taken stops offloading (Accelerator.stopOffloading).
const (
	runLossMin    = 500 * time.Millisecond
	runLossFactor = 1.5
)

// loses reports, with the time brought back so far, whether the run's
// offloading has lost in all, and why.
func (l *runLedger) loses(back time.Duration) (string, bool) {
	spent := l.gpu + back
	if spent < runLossMin || float64(spent) <= runLossFactor*float64(l.cpu) {
		return "", false
	}
	return fmt.Sprintf("the launches after each hot spot's first cost %.3gs on the GPU side and %.3gs bringing data back to the host, the CPU engine %.3gs for the same iterations", l.gpu.Seconds(), back.Seconds(), l.cpu.Seconds()), true
}

// streak counts a hot spot's instances in a row that the cost model
// predicted not to pay. A streak of disarmAfter disarms the hot spot, but
// one that improves starts again: an instance whose GPU side, against its
// CPU side, is under streakGain times the streak's first (so instances
// that improve by 3% in eight go on being probed). Instances that
// grow (a triangular loop under a sequential one: cholesky's rows below
// the diagonal, whose dot products lengthen column by column, against a
// launch's fixed costs) or whose copies spread over more instances (a
// stencil's arrays, copied once for all its time steps) may pay later,
// when the first could not. (cholesky at 2400 launched nothing on an
// H100: eight columns in a row predicted not to pay disarmed a hot spot
// that had not launched yet, whatever came after.)
//
// Nor does a streak whose probing cost little: disarming saves only the
// probing (an instance not offloaded runs on the CPU all the same), so a
// streak disarms only when the time probing its instances took exceeds
// probeShare of their CPU side. Predictions are noisy where instances are
// short (cholesky's first columns at 2400 on an H100: copies predicted at
// 4 ms against 1 ms of CPU time, then 2,266 columns launched in one run
// and none in another, 18 s against 3 s), and probing two iterations of
// each costs far less than a wrong verdict for good.
type streak struct {
	n     int
	ratio float64 // GPU side over CPU side at the streak's first
	// cpu and probed are the streak's instances' CPU sides and the time
	// probing them took.
	cpu, probed time.Duration
}

// probeShare is the part of a streak's CPU time its probing may take
// before the streak disarms its hot spot.
const probeShare = 0.05

// streakGain is how much better than the streak's first an instance's
// prediction must be to start a new streak.
const streakGain = 0.97

// add counts one instance predicted as e, not paying, whose probing took
// probed, and reports whether the streak is long enough, and its probing
// dear enough, to disarm. A streak starts again at every launch (the zero
// streak).
func (s *streak) add(e Estimate, probed time.Duration) bool {
	r := math.Inf(1)
	if cpu := e.CPUSide(); cpu > 0 {
		r = float64(e.GPU()) / float64(cpu)
	}
	if s.n == 0 || r < streakGain*s.ratio {
		s.n, s.ratio, s.cpu, s.probed = 0, r, 0, 0
	}
	s.n++
	s.cpu += e.CPUSide()
	s.probed += probed
	return s.n >= disarmAfter && float64(s.probed) > probeShare*float64(s.cpu)
}

// timedTail records that the first CPU tail iteration of the instance
// just offloaded took d on the plain engine (sp.tailInsns guest
// instructions): it prices the CPU when it is the fastest per instruction
// timed so far (see tailAt).
func (sp *spot) timedTail(d time.Duration) {
	switch {
	case sp.plainIter == 0:
	case sp.tailInsns > 0 && sp.plainInsns > 0:
		if float64(d)/sp.tailInsns >= float64(sp.plainIter)/sp.plainInsns {
			return
		}
	case d >= sp.plainIter:
		return
	}
	sp.plainIter, sp.plainInsns = d, sp.tailInsns
}

// tailAt is the plain engine's time on a CPU tail iteration (plainIter,
// see CPUIteration) moved to an iteration of insns guest instructions:
// in proportion, where the tail's instructions are known. Instances that
// grow (cholesky's columns, whose rows' dot products lengthen column by
// column) are timed on the tails of the first few, the shortest: priced
// at those, every later column looked as cheap on the CPU as the first
// ones, and no better on the GPU (a streak of them disarms the hot spot).
func (sp *spot) tailAt(insns float64) time.Duration {
	if sp.plainInsns <= 0 || insns <= 0 {
		return sp.plainIter
	}
	return time.Duration(float64(sp.plainIter) * insns / sp.plainInsns)
}

// recentLeast keeps the last recentLaunches measurements of a launch's
// cost, and gives the least of them: one launch that the host stalled
// (a loaded machine, a collection) does not price every instance after
// it. (LU at 1078 on gpusim: one launch of its trailing update timed at
// 113 us an iteration, where the others took a fraction of one, priced
// the next eight instances at 33 ms against 0.2 ms on the CPU, and the
// streak disarmed the hot spot with 300 of its instances to come.)
type recentLeast struct {
	last [recentLaunches]time.Duration
	n    int
}

// recentLaunches is how many launches recentLeast remembers.
const recentLaunches = 3

// add records d and returns the least of the last recentLaunches.
func (r *recentLeast) add(d time.Duration) time.Duration {
	r.last[r.n%recentLaunches] = d
	r.n++
	least := d
	for i := 0; i < min(r.n, recentLaunches); i++ {
		least = min(least, r.last[i])
	}
	return least
}
