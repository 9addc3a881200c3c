package cuda

import "time"

// Compiles in the driver calls' quiet spells (RATIONALE), where the
// library has no linker (link.go): BenchmarkJITBeside measured that
// cuModuleLoadDataEx holds every driver call of the process while it
// compiles, and the linker none.
//
// LoadModule compiles beside the other calls (Context.jits), so a
// module's JIT, about 0.1 s, does not queue the copies and launches
// behind it. The library still seems to serialise them: on an H100,
// launches that copied nothing reported 0.19–0.25 s of copies while the
// kernels loaded ahead compiled, as if a cuMemAlloc or cuMemcpy issued
// while another thread is inside cuModuleLoadDataEx returned only
// when the compile does (the report's copy_parts say which calls wait). A launch makes a dozen driver calls; with
// a loader compiling one module after another, each call could wait for a
// compile of its own. So a compile starts only once no other driver call
// has run for jitQuiet: a launch under way keeps its calls closer together
// than that (between them the host reads or writes the guest's bytes, a
// few milliseconds per 8 MiB chunk at most), so it waits at most for the
// one compile it found running. A caller waiting for its module makes
// no calls, so its compile starts after jitQuiet.

// jitQuiet is how long the driver calls must have been idle before a
// compile starts.
const jitQuiet = 5 * time.Millisecond

// waitIdle returns once no call has run in w for quiet.
func (w *caller) waitIdle(quiet time.Duration) {
	for {
		wait := quiet
		if w.busy.Load() == 0 {
			idle := time.Since(time.Unix(0, w.lastDone.Load()))
			if idle >= quiet {
				return
			}
			wait = quiet - idle
		}
		time.Sleep(wait)
	}
}
