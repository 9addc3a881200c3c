// Package accel is phase 2's runtime: it offloads the parallel hot spots
// of a phase 1 profile to a GPU while the guest runs. It arms a breakpoint
// at each hot spot's mapped loop level, probes a few iterations on the CPU
// engine when the guest gets there, checks the guards, launches the
// kernel ptxgen made for the level, keeps arrays resident on the device,
// falls back to the CPU when anything disagrees, and reports what it did.
//
// The guest itself (loading it, running it, its system calls) belongs to
// package pipeline, which hands accel the guest's memory and lifter
// (Guest) and runs the guest on the engine accel gives it (Engine,
// OnBreak).
//
// The files follow the concerns: accelerator.go (the run, the hot spots,
// the breakpoint handler), kernel.go (lifting a level, generating and
// loading its kernels), probe.go (the probing engine and what it
// measures), bounded.go (a probed row's inner loops: the recorded first
// iterations and the model that extends them), guard.go (the fallback reasons and the guards), launch.go
// (one offloaded instance: probe, guard, launch, CPU tail), replay.go
// (instances launched again without probing), reload.go (registers each
// thread loads again), report.go.
//
// # Phase 2 at run time (RATIONALE)
//
// The engine stops at the header of a hot spot's mapped level (a
// breakpoint). From there the spot's probing engine, which runs the level's
// blocks with a PROBE before every memory access and before the exit
// compare, runs two iterations on the CPU (three for a 2D kernel), each
// recording only the first iterations of every loop inside it, the fast
// engine running the rest (bounded.go).
// That gives, from the live state and nothing remembered from the profile
// run: each live-in value's step (three samples must agree), the trip count
// (the exit compare's two operands are affine in the iteration: solved for
// the first arrival that leaves), and each access site's footprint (its
// range in the two iterations, extended linearly; a site that did not run
// takes its array's). The guards then check the footprints against the
// memory map, the profile's arrays (a written one may not overlap another),
// the private stack slots, the induction variables' width, MXCSR and DF.
// The GPU runs every iteration but the last one (a thread may not take
// the loop's exit edge), or the last two until a CPU tail has timed the
// plain engine on the loop; the CPU runs those from the header with the live-in values set as the GPU's next iteration would
// have had them, so the exit state (registers, flags, the private slots of
// a -O0 loop) is what the native code leaves. A failed guard runs the rest
// of the instance on the CPU engine; a kernel that reports an error (a
// footprint or trip count prediction was wrong) leaves guest memory as it
// was, since written arrays are copied back only after a clean launch.
//
// Copies are lazy in both directions (ptxgen.Resident). Device buffers stay
// resident, one per stretch of guest memory (a launch over a range that
// overlaps resident buffers merges them on the device: a stencil's kernels
// over the rows one writes and the wider rows the next reads share one
// copy of the array), and a launch copies in only the pages of its range
// the guest changed since. What a kernel writes stays on the device: the
// guest's pages are marked stale, and the first access to one (by the
// guest, a system call, or the next probe) brings it back, with the stale
// pages of the window around it in one copy, and read-ahead while the
// guest reads in order; before the CPU runs an instance's tail, its
// footprint comes back in one batch of copies (bringBackTail). A copy's
// fixed cost (a call on the driver's thread that waits for the device)
// is what copying tens of kilobytes costs, so copies go in runs and
// batches, both ways (gpu.BatchCopier). So two nests that pass an array between
// them never copy it through the host, and the CPU's probed and tail
// iterations bring back only the pages they touch. The buffer holding the
// only current copy of a page is backed up on the device before a launch
// that writes it, and restored if the kernel fails. Buffers stay resident up
// to half the device's memory. A store proved to write every byte of its
// footprint (dense.go: an initialisation nest) is not copied in at all: the
// array is born on the device.
//
// A time step enters the same instance again and again: an instance whose
// live-in values at its first arrival are those of one probed and launched
// before runs on the GPU from that arrival without probing (replay.go), so
// between steps the CPU runs, and the host copies, only the last
// iteration's rows. A sequential outer loop (LU's k, cholesky's j)
// enters instances that differ by constant amounts instead: the start
// pointers move by a row and a column, the trip counts fall by one. Once
// two consecutive instances were probed and launched with one kernel, the
// next whose live-in values at arrival 0 continue their progression runs
// on the GPU without probing too, its steps, trip counts and footprints
// moved on by the same amounts from the two probed (an extrapolated
// replay, `replays_extrapolated`), and so does each instance after it
// that keeps to the progression. Nothing extrapolated is trusted: the
// launch runs the checked kernel, which fails on an access outside its
// footprint, a thread that leaves the loop early or an induction
// variable that moved by another step; the guest is then as it was, the
// CPU runs the instance, and the next two instances are probed again. (A
// trip count extrapolated too small leaves more arrivals to the CPU
// tail, which runs on to the loop's exit.) On LU's trailing update this
// turns about two thousand probed instances, each bringing back from the
// device the rows its probed iterations touch and copying them in again
// at the launch, into two. A register the level carries that phase 1 proved a
// reload (profile.Reload) is loaded again by each thread (reload.go), and
// checked at every probed arrival.
package accel
