// Package ptxgen translates one loop level of a hot spot, given as GVInst
// VBlocks, into a PTX kernel and the plan for launching it.
//
// The input is a Nest: the VBlocks of one loop (its header and every block
// of its body, inner loops included), after gvinst.Optimize. The output is a
// Kernel: the PTX module text, the kernel's parameters in order (what the
// runtime must pass for each), the memory access sites, the live-in guest
// state, and the loop's exit test, from which the runtime computes the trip
// count on the live state.
//
// Each GPU thread runs one iteration of the mapped level: thread u starts at
// the header with every live-in value set to entry + step·u (a loop
// invariant has step 0, an induction variable its per-iteration step) and
// runs the level's blocks as the CPU would, inner loops as loops, until
// control returns to the header along a back edge (the thread is done) or
// leaves the level (an error: the trip count was wrong). Threads whose index
// is at least the launch's count retire at once (the paper's setp.ge +
// exit).
//
// Launch runs a kernel over the guest's memory: it copies each footprint
// group in, launches, and copies written groups out, or, with a lazy
// Resident, keeps device buffers across launches (never two holding one
// byte: a range overlapping resident buffers merges them, device to
// device), copies in only the pages of the launch's range the guest
// changed, and leaves written pages on the device until the guest touches
// them (resident.go).
//
// # RATIONALE
//
// Exactness first. Every GVInst value lives in a 64-bit PTX register, as it
// does in the interpreter's frame; narrower operations compute in 64 bits on
// operands zero- or sign-extended as the type says and mask the result, which
// is exactly GVInst's "t-width result, zero-extended" rule. Floats go through
// .f32/.f64 registers with mov.b64/mov.b32 and use add.rn, sub.rn, mul.rn,
// div.rn and sqrt.rn separately (never a fused multiply-add the x86 code did
// not have); conversions reproduce SSE's out-of-range "integer indefinite".
//
// Memory safety without trusting the footprint estimate: every access to
// guest arrays checks its address against the footprint the runtime computed
// for its site (and natural alignment, which the GPU requires and x86 does
// not) and, outside it, records an error code and ends the thread. Device
// writes reach guest memory only after a launch that reported no error, so a
// failed check costs a CPU fallback, never a wrong result. The two tests
// share one branch (off = addr - lo, with the host passing span = hi - lo -
// size: off > span, or-ed with the alignment test). A CHKALIGN (movaps,
// addps from memory: x86 faults unless the address is 16-byte aligned)
// raises the alignment test of the access it guards to its own size and
// emits nothing else; one guarding no site access is tested on its own.
// Either way a misaligned address ends the thread with ErrCodeAlign, and
// the CPU then runs the instance and faults as x86 does. Inside a one-block
// counted loop the checks of addresses that step with an induction
// variable are proven once at the loop's entry instead (hoist.go). Such a
// loop, whose trip count the kernel then knows, reads through device
// pointers advanced with the loop instead of adding the site's delta per
// access, keeps a float accumulator in a float register, and runs four
// iterations per pass with no exit test between them, then the original
// loop for the rest (unroll.go): exact, since every register leaves each
// group of four as four iterations of the original would.
//
// Packed SSE values (vector.go, vector_int.go): a .b128 value is its two
// 64-bit slot registers, and a packed op computes lane by lane what
// gvinst's interpreter does (saturation, rounding, lane order), the lanes
// split out with bfe and joined back with bfi; where a whole 64-bit half
// can be worked on at once exactly, it is (paddw and psubb as SWAR sums
// whose carries stay in their lanes, punpck*bw/wd as prmt byte permutes,
// shifts by an immediate as one shift and a mask). vecSupported is the
// table of the ops and lane types that lower. A 16-byte access that no
// CHKALIGN proves aligned (movdqu, movups; not movupd over doubles), and
// a 4- or 8-byte one into a vector register that ops on narrower lanes use
// (movd, movq over bytes or floats), may be at any address (anyAddress):
// the load takes the aligned words that
// hold its bytes and joins them by shifts (a device buffer begins and
// ends on 16-byte boundaries of guest addresses, so those words are
// inside it), the store writes words when aligned and bytes otherwise.
//
// Stack slots of the guest frame addressed from an rsp or rbp that the loop
// does not change are private to each iteration (spills, gcc -O0 locals):
// they become registers, initialised from the live state like guest
// registers.
//
// Two dimensions: when the level right inside is parallel too (Nest.Inner),
// thread (x, y) runs outer iteration y as far as the inner loop, moves the
// inner loop's live values by x inner steps (each step an affine function
// of y, so i*j-style indices work) and runs one inner iteration; x past the
// row's inner trip count (an affine function of y: triangular nests work)
// retires, and the kernel checks that exactly the row's last x leaves the
// inner loop, so a wrong trip count is an error, never a wrong result. The
// outer body outside the inner loop may not store to memory.
//
// Outer stores (Nest.OuterStores, 2D only): an initialisation nest's
// outer body may store before the inner loop (x1[i] = … beside A[i][j]);
// every thread of the row runs those stores with the same values, which
// is exact when the runtime proves their footprints apart from every
// other access's (Kernel.OuterStores, OuterStoresApart) and no row empty;
// or, for one made before the inner loop, where the kernel checks each
// inner store of the row against its bytes (Kernel.RowChecked,
// ErrCodeRowStore: correlation's diagonal beside its triangle).
// Stores after the inner loop are refused: no thread runs that part.
//
// Three dimensions (Nest.Inner2): when the level inside the inner one is
// parallel too, thread (x, y, z) runs level iteration z as far as the
// inner loop, moves its live values by y inner steps, runs on to the
// innermost loop, moves its live values by x innermost steps (the same
// in every row; reloaded registers are loaded at iteration x) and runs
// one innermost iteration. The thread with the last x goes on in the
// inner body, so the kernel checks both trip counts: only the last x
// leaves the innermost loop, and only the last y the inner one. Only the
// innermost loop may store. This is the kernel a CUDA programmer writes
// for a 3D stencil or a batched contraction (heat3d, doitgen), where the
// 2D kernel has one thread per row walking the row, its warps' accesses
// a row apart.
//
// Interchanged (Nest.Interchange, the schedule's "k moved inside j"):
// thread x runs the level's rows in order, from the first, and in each row
// one inner iteration, x, reached as in the 2D kernel (live values moved
// by x inner steps); it then leaves the inner loop by its exit, which is
// exact because nothing the level reads after the inner loop is written
// in it (checked). Every element is updated in row order, as on the CPU.
//
// Block shape (3D: 32x4x2, as the hand-written kernels; a warp is 32
// consecutive innermost iterations): one dimension, 256 threads per CTA (8 warps: enough resident
// warps to hide global memory latency, few enough registers per CTA for the
// large bodies of -O0 code); 128 when the level has fewer than 32768
// iterations, so that small launches still spread over every SM. Two
// dimensions: 16x16 tiles. A warp is 16 consecutive inner iterations of two
// rows: unit-stride accesses of 8-byte elements still fill whole 128-byte
// lines, and an access that does not depend on the outer level (B[k][j] in
// a matmul) is shared by the two rows, so a warp loads half the lines per
// multiply that a 32x8 tile does. On an H200, matmul 2000x2000 ran its
// kernel in 5.8 ms with 16x16 tiles against 6.2-6.5 ms with 32x8, 32x4 and
// 64x4 (16x8: 5.9 ms).
//
// Runs (LaunchPlan.Runs1D, Runs2D, Runs3D): where the level along x is
// one block (a stencil point's straight code), a thread runs up to two
// of its iterations, the grid's threads along x apart (a grid-stride
// loop: a warp's loads stay whole lines in each), moving its stepped
// values by the stride and reloading its carried registers in between:
// its set-up (its live values at every level), most of a stencil point's
// instructions, is paid once a run. A launch keeps at least MinThreads
// threads (2^17), so only large ones run runs. On an H100 (kern2.sh)
// runs of two took heat3d 160x200's kernels from 21.2 ms to 17.6 ms and
// jacobi2dt's from 13.8 to 11.7 (runs of four: 43.4 and 13.8; see
// buildLongestRun).
//
// Code shape: a CMP feeding the block's BRANCH becomes the branch's
// predicate, immediates go straight into the instructions, and a GET or
// MOV copy is not emitted when its source stays unchanged while it is read.
// The emitter builds the kernel as values of the ptx package (emitter.i:
// one *ptx.Inst per instruction, with labels and comments); a peephole
// pass over those values (peephole.go) then propagates copies, coalesces
// moves, removes dead code with liveness over the whole kernel and folds
// displacements into addresses: ptxas would do that for a real GPU, but
// gpusim runs exactly the instructions it is given. The passes ask the
// ptx op table which registers an instruction writes and reads and what
// else it does (memory, branches, ends); ptx.Print writes the module.
package ptxgen
