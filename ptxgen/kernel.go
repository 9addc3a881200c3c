package ptxgen

import (
	"fmt"
	"slices"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gvinst"
)

// ParamKind says what the runtime passes for one kernel parameter. Every
// parameter is a .u64.
type ParamKind uint8

// The parameter kinds.
const (
	ParamCount         ParamKind = iota + 1 // iterations to run (threads with a larger index retire)
	ParamErr                                // device address of the record: the 16-byte error record (u32 code, u64 x86 address at +8), then the exit state (ExitRecordSize)
	ParamLiveValue                          // LiveIns[Index]'s value at thread 0
	ParamLiveStep                           // LiveIns[Index]'s change per iteration
	ParamSiteDelta                          // device address minus guest address for Sites[Index]
	ParamSiteLo                             // lowest guest address Sites[Index] may touch (all ones when no access fits)
	ParamSiteSpan                           // the highest offset from that an access of the site may start at: the footprint's size less the access's (0 when none fits)
	ParamInnerTrip0                         // 2D: inner trip count (header arrivals) of row 0; a TripChecked 1D kernel: that of its counted loop (all ones: unchecked)
	ParamInnerTripStep                      // 2D, TripChecked: its change per row
	ParamInnerStep                          // 2D: InnerLiveIns[Index]'s change per inner iteration, in row 0
	ParamInnerStepRow                       // 2D: how much that change changes per row
	ParamInner2Trip                         // 3D: the innermost trip count (header arrivals), the same in every inner iteration
	ParamInner2Step                         // 3D: Inner2LiveIns[Index]'s change per innermost iteration
	ParamExitLast                           // the iteration whose thread may leave the loop and store its exit state (LaunchInput.ExitState; all ones: none)
	ParamExitInit                           // ExitInits[Index]'s value on the CPU at the launch (LaunchInput.ExitInits)
)

// Param is one kernel parameter, in declaration order.
type Param struct {
	Name  string
	Kind  ParamKind
	Index int // into Kernel.LiveIns or Kernel.Sites, per Kind
}

// The error codes a kernel stores in its error record (0: none).
const (
	ErrCodeFootprint = 1 // an access fell outside its site's footprint
	ErrCodeExit      = 2 // a thread left the loop: the trip count was wrong
	ErrCodeDivide    = 3 // an integer division would trap (#DE) on x86
	ErrCodeAlign     = 4 // an access is not naturally aligned (legal on x86, not on the GPU)
	ErrCodeStep      = 5 // an induction variable did not advance by its step: the next iteration is not where the next thread started
	ErrCodeCold      = 6 // a thread reached a path only the CPU runs (Nest.Cold: a library call on an error path)
	ErrCodeOverlap   = 7 // a string copy's source and destination overlap (strings.go)
	ErrCodeRowStore  = 8 // an inner store met a store its row's outer body made (Kernel.RowChecked)
)

// ErrorRecordSize is the size in bytes of the error record a kernel writes.
const ErrorRecordSize = 16

// Kernel is a generated kernel: its PTX module text and everything the
// runtime needs to launch it.
type Kernel struct {
	Name    string
	PTX     string
	Params  []Param
	LiveIns []LiveIn
	// Private are all the stack slots the kernel keeps in registers (the
	// live-in ones included); the runtime checks that they do not overlap
	// each other or any site's footprint.
	Private []LiveIn
	Sites   []Site
	Exit    ExitTest
	// DynRounding is true when the kernel rounds as MXCSR says; it rounds
	// to nearest, so the runtime must check MXCSR's rounding control is 0.
	DynRounding bool
	// ClearDF is true when the kernel assumes the x86 direction flag is
	// clear (rep stos runs upward); the runtime checks it.
	ClearDF bool
	Plan    LaunchPlan
	// TwoD is true for a kernel that maps the inner level to x: thread
	// (x, y) runs inner iteration x of outer iteration y; InnerLiveIns are
	// the values live at the inner header, advanced by x steps there.
	TwoD         bool
	InnerLiveIns []LiveIn
	// OuterStores are the sites of a 2D kernel's stores in the outer
	// body (Nest.OuterStores): a launch must have each one's footprint
	// apart from every other site's and no row without inner iterations
	// (OuterStoresApart).
	OuterStores []int
	// RowChecked are the outer stores (among OuterStores) that every
	// thread of a row makes before its inner iteration and whose bytes
	// the kernel checks its inner stores against (ErrCodeRowStore):
	// OuterStoresApart need not keep their footprints apart from the
	// others'.
	RowChecked []int
	// ThreeD is set (with TwoD) on the kernel of a Nest with Inner2: a 3D
	// launch, thread (x, y, z) running innermost iteration x of inner
	// iteration y of iteration z; Inner2LiveIns are the values live at
	// the innermost header, advanced by x steps there.
	ThreeD        bool
	Inner2LiveIns []LiveIn
	// Interchanged is set on the kernel of a Nest with Interchange (TwoD
	// is set too: it takes the 2D parameters): a 1D launch over the inner
	// level's iterations (LaunchInput.InnerMax threads), each thread
	// running Count rows of the level in order from the first one's live
	// values.
	Interchanged bool
	// Reloads are the nest's reloaded registers (Nest.Reloads): the
	// runtime passes them no value of their own, and checks while probing
	// that they hold what the kernel loads.
	Reloads []Reload
	// ThreadLoop is set on the kernel of a Nest with a ThreadLoop (TwoD is
	// set too): a 2D launch, each thread running the thread loop in order
	// with its own inner iteration of each of its rows.
	ThreadLoop bool
	// Part is set on the kernel of one part of a distributed level (a Nest
	// with Start or Stop): it has no exit test of its own.
	Part bool
	// DataIndependent says that no address the kernel accesses, no branch
	// it takes and nothing that could make it fail depends on a value it
	// loads from guest memory: two launches with the same LaunchInput make
	// the same accesses along the same paths, whatever the arrays hold.
	// Unchecked is then the same kernel (same parameters) without the
	// footprint and alignment checks of its accesses and without branches
	// to its error exits, to launch only with
	// an input a launch of this kernel ran without error (see
	// LaunchInput.Proven); nil otherwise.
	DataIndependent bool
	Unchecked       *Kernel
	// Dry is then the checked kernel (same parameters) without its
	// stores to guest memory: its checks read nothing it loads, so a
	// launch of it (LaunchInput.Dry) fails exactly where one of this
	// kernel with the same input would, having written nothing, and a
	// clean one proves the input for Unchecked (see backup.go); nil
	// otherwise.
	Dry *Kernel
	// TripChecked is set on a 1D kernel that counts the arrivals at a loop
	// inside the level (Nest.TripCheck): it takes the 2D parameters
	// itrip0 and itripstep (LaunchInput.InnerTrip0 all ones: no check).
	TripChecked bool
	// ExitStates are, per exit target, the values the thread of a
	// launch's last iteration stores when it leaves the loop there
	// (LaunchInput.ExitState, exitstate.go): guest slots and private
	// stack slots, in the order of ExitRecord.Values. An exit target not
	// here is an error exit for every thread.
	ExitStates map[uint64][]LiveIn
	// ExitRefused says, per exit target whose state the kernel does
	// not give though the nest asked (Nest.ExitLive), why.
	ExitRefused map[uint64]string
	// ExitInits are registers the exit state holds that only paths
	// chosen by uniform branches write (exitstate.go): each thread
	// starts with the CPU's value at the launch
	// (LaunchInput.ExitInits), which they still hold where no
	// iteration writes them.
	ExitInits []LiveIn
}

// GivesExitState reports whether a launch of k may run the loop's last
// arrival: some exit's state comes from the kernel.
func (k *Kernel) GivesExitState() bool { return len(k.ExitStates) > 0 }

// LaunchPlan is how to shape a launch of the kernel.
type LaunchPlan struct {
	BlockX int    // threads per CTA for large launches
	SmallX int    // threads per CTA below SmallBelow iterations
	Small  uint64 // the iteration count below which SmallX is used
	TileX  int    // 2D: threads per CTA along x (the inner level)
	TileY  int    // 2D: along y (the outer level)
	// 3D: threads per CTA along x (the innermost level), y (the inner
	// level) and z (the level).
	Tile3X, Tile3Y, Tile3Z int
	// Runs3D says that a thread of the 3D kernel runs a run of innermost
	// iterations (up to Run3D of them, as many threads apart as there
	// are along x, so that a warp's loads stay whole lines), moving its
	// stepped values and reloading its carried registers between them,
	// instead of one: the thread's set-up (its live values at three
	// levels), which is most of a stencil point's instructions, is paid
	// once a run. The launch makes Run3D times fewer threads along x.
	Runs3D bool
	// Runs2D is the same for a 2D kernel's inner level (Run2D), and
	// Runs1D for a 1D kernel's level (Run1D).
	Runs2D, Runs1D bool
	// MinThreads is the fewest threads a launch with runs keeps: runs
	// are shortened until the launch has at least that many (2^17, half
	// an H100's resident threads: fewer would leave memory latency
	// unhidden).
	MinThreads uint64
	Reason     string // why this shape
}

// Config3D returns the grid and block of a 3D launch: planes outer
// iterations of at most rows inner iterations of cols innermost ones.
// An innermost level narrower than the tile gets a tile as narrow as it
// (a power of two) and as many more inner rows.
func (p LaunchPlan) Config3D(planes, rows, cols uint64) gpu.LaunchConfig {
	run, bx := p.run3D(planes, rows, cols)
	threads := (cols + run - 1) / run
	by, bz := uint64(p.Tile3Y), uint64(p.Tile3Z)
	if w := pow2AtLeast(threads); w < bx {
		bx = w
	}
	if bx < uint64(p.Tile3X) {
		by = min(by*(uint64(p.Tile3X)/bx), max(pow2AtLeast(rows), by))
	}
	gx, gy, gz := max((threads+bx-1)/bx, 1), max((rows+by-1)/by, 1), max((planes+bz-1)/bz, 1)
	return gpu.LaunchConfig{Grid: gpu.Dim3{X: uint32(gx), Y: uint32(gy), Z: uint32(gz)}, Block: gpu.Dim3{X: uint32(bx), Y: uint32(by), Z: uint32(bz)}}
}

// Run3D is the most innermost iterations a thread of a 3D launch of
// planes × rows × cols iterations runs (1 without Runs3D).
func (p LaunchPlan) Run3D(planes, rows, cols uint64) uint64 {
	run, _ := p.run3D(planes, rows, cols)
	return run
}

// run3D is runs for the innermost level of a 3D launch.
func (p LaunchPlan) run3D(planes, rows, cols uint64) (run, width uint64) {
	return p.runs(p.Runs3D, cols, uint64(p.Tile3X), 64, mulSat(mulSat(planes, rows), cols))
}

// Run2D is the most inner iterations a thread of a 2D launch of rows ×
// cols iterations runs (1 without Runs2D).
func (p LaunchPlan) Run2D(rows, cols uint64) uint64 {
	run, _ := p.runs(p.Runs2D, cols, uint64(p.TileX), 32, mulSat(rows, cols))
	return run
}

// Run1D is the most iterations a thread of a 1D launch of count
// iterations runs (1 without Runs1D).
func (p LaunchPlan) Run1D(count uint64) uint64 {
	run, _ := p.runs(p.Runs1D, count, uint64(p.BlockX), 64, count)
	return run
}

// mulSat is a*b, or the largest uint64 when that overflows.
func mulSat(a, b uint64) uint64 {
	if a != 0 && b > ^uint64(0)/a {
		return ^uint64(0)
	}
	return a * b
}

// runs chooses a launch's run length and tile width along x for cols
// iterations of the level a thread runs runs of (Runs3D, Runs2D): of
// runs of 1, 2 and 4 and tiles tile and tile/2 wide, the one that issues
// the fewest instructions, a thread's set-up counted as two iterations (a
// stencil point's is about twice its body) and idle lanes as busy ones,
// up to the longest run (buildLongestRun). Heat3d's 158 columns: runs of
// 2, 16 wide (80 lanes for 158 iterations, against 160 lanes of one each:
// a third fewer instructions, the runs' moves and reloads aside). Kernels
// without runs, and levels narrower than narrow, run 1, tile wide.
func (p LaunchPlan) runs(enabled bool, cols, tile, narrow, total uint64) (run, width uint64) {
	run, width = 1, tile
	if !enabled || cols < narrow {
		return run, width
	}
	const setup = 2
	best := ^uint64(0)
	for _, r := range []uint64{1, 2, 4} {
		if r > longestRun() || r > 1 && total/r < p.MinThreads {
			break
		}
		for _, w := range []uint64{tile, tile / 2} {
			if w == 0 {
				continue
			}
			threads := (cols + r - 1) / r
			lanes := (threads + w - 1) / w * w
			if cost := lanes * (setup + r); cost < best {
				best, run, width = cost, r, w
			}
		}
	}
	return run, width
}

// buildLongestRun, when set at link time (go build -ldflags "-X
// github.com/gxbit/gxbit/ptxgen.buildLongestRun=4"), bounds the runs of
// 2D and 3D kernels' threads: 1, 2 (the default) or 4. It is for
// measuring the runs on a GPU (testdata/device/kern2.sh builds gxbit
// three ways), not a setting: nothing sets it at run time.
//
// RATIONALE: measured on an H100 (kern2.sh, large sizes, kernel ms of
// the two-phase run, runs of at most 1 / 2 / 4): heat3d 21.2 / 17.6 /
// 43.4, jacobi2dt 13.8 / 11.7 / 13.8, fdtd2d 45.1 / 47.1 / 42.5, lu 36.3
// / 38.3 / 39.5, gemver 9.9 / 9.7 / 10.3.
var buildLongestRun string

// longestRun is the longest run a thread may run (buildLongestRun).
func longestRun() uint64 {
	switch buildLongestRun {
	case "1":
		return 1
	case "4":
		return 4
	}
	return 2
}

// Config2D returns the grid and block of a 2D launch: rows outer
// iterations of at most cols inner iterations each.
// An inner level narrower than the tile gets a tile as narrow as it (a
// power of two) and as many more rows, so no warp is mostly idle.
func (p LaunchPlan) Config2D(rows, cols uint64) gpu.LaunchConfig {
	run, bx := p.runs(p.Runs2D, cols, uint64(p.TileX), 32, mulSat(rows, cols))
	threads := (cols + run - 1) / run
	by := uint64(p.TileY)
	if w := pow2AtLeast(threads); w < bx {
		bx = w
	}
	if bx < uint64(p.TileX) {
		by = min(by*(uint64(p.TileX)/bx), max(pow2AtLeast(rows), by))
	}
	gx, gy := max((threads+bx-1)/bx, 1), max((rows+by-1)/by, 1)
	return gpu.LaunchConfig{Grid: gpu.Dim3{X: uint32(gx), Y: uint32(gy), Z: 1}, Block: gpu.Dim3{X: uint32(bx), Y: uint32(by), Z: 1}}
}

// pow2AtLeast is the least power of two at least n (1 for 0).
func pow2AtLeast(n uint64) uint64 {
	p := uint64(1)
	for p < n && p < 1<<32 {
		p <<= 1
	}
	return p
}

// Config returns the grid and block for a launch of count iterations.
func (p LaunchPlan) Config(count uint64) gpu.LaunchConfig {
	run := p.Run1D(count)
	threads := (count + run - 1) / run
	bx := uint64(p.BlockX)
	if threads < p.Small && p.SmallX > 0 {
		bx = uint64(p.SmallX)
	}
	grid := (threads + bx - 1) / bx
	if grid == 0 {
		grid = 1
	}
	return gpu.LaunchConfig{Grid: gpu.Dim3{X: uint32(grid), Y: 1, Z: 1}, Block: gpu.Dim3{X: uint32(bx), Y: 1, Z: 1}}
}

func defaultPlan() LaunchPlan {
	return LaunchPlan{BlockX: 256, SmallX: 128, Small: 32768, TileX: 16, TileY: 16, Tile3X: 32, Tile3Y: 4, Tile3Z: 2, MinThreads: 1 << 17,
		Reason: "1D over the mapped level: 256 threads (8 warps) per CTA hide global memory latency with modest registers per CTA; 128 below 32768 iterations so small launches still cover every SM"}
}

// Generate translates the nest into a kernel. A nest that cannot run on the
// GPU yields an error wrapping ErrNotOffloadable (a *RejectError).
func Generate(n *Nest) (*Kernel, error) {
	a, err := analyze(n)
	if err != nil {
		return nil, err
	}
	name := n.Name
	if name == "" {
		name = fmt.Sprintf("gx_%x", n.Header)
	}
	k := &Kernel{Name: name, Part: n.part(), LiveIns: a.liveIns, Private: a.privateSlots(), Sites: a.sites, Exit: a.exit, DynRounding: a.usesDyn, ClearDF: a.usesDF, Plan: defaultPlan(), Reloads: n.Reloads}
	k.Params = append(k.Params, Param{Name: "count", Kind: ParamCount}, Param{Name: "errrec", Kind: ParamErr})
	for i, l := range a.liveIns {
		nm := paramName(l)
		k.Params = append(k.Params, Param{Name: "in_" + nm, Kind: ParamLiveValue, Index: i}, Param{Name: "step_" + nm, Kind: ParamLiveStep, Index: i})
	}
	if a.inner != nil {
		k.TwoD, k.InnerLiveIns, k.OuterStores, k.RowChecked = true, a.innerLive, a.outerStores, a.rowChecked
		k.Plan.Reason = "2D: 16x16 tiles, x over the inner level, y over the outer level; a warp covers 16 consecutive inner iterations of two rows, so unit-stride accesses still fill whole 128-byte lines of 8-byte elements, and the two rows share the lines of any access that does not depend on the outer level (B[k][j] in a matmul), halving the lines a warp loads per multiply against 32x8; 256 threads per CTA"
		if n.ThreadLoop != 0 {
			k.ThreadLoop = true
			k.Plan.Reason = "2D with a thread loop: 16x16 tiles, x over the inner level, y over the level; each thread runs the sequential loop between them in order, with the inner level's element in registers, as a one-thread-per-output-element kernel does"
		}
		if n.Interchange {
			k.Interchanged = true
			k.Plan.Reason = "interchanged: 1D over the inner level, each thread running the outer level's rows in order (consecutive threads touch consecutive elements of a row); 256 threads per CTA, 128 below 32768 columns"
		}
		k.Params = append(k.Params, Param{Name: "itrip0", Kind: ParamInnerTrip0}, Param{Name: "itripstep", Kind: ParamInnerTripStep})
		for i, l := range a.innerLive {
			k.Params = append(k.Params, Param{Name: "istep_" + paramName(l), Kind: ParamInnerStep, Index: i},
				Param{Name: "istepd_" + paramName(l), Kind: ParamInnerStepRow, Index: i})
		}
		if a.runs2D() {
			k.Plan.Runs2D = true
			k.Plan.Reason = "2D: x over the inner level, each thread running a run of inner iterations (1 or 2, with 16- or 8-wide tiles: LaunchPlan.Run2D) as many threads apart as there are along x, so that its set-up is paid once a run and a warp's loads stay whole lines; y over the outer level; 256 threads per CTA"
		}
	}
	if a.inner2 != nil {
		k.ThreeD, k.Inner2LiveIns = true, a.inner2Live
		k.Plan.Reason = "3D: 32x4x2 tiles, x over the innermost level, y over the inner level, z over the level, as a one-thread-per-element CUDA kernel of a 3D nest: a warp covers 32 consecutive innermost iterations (whole lines of unit-stride accesses); 256 threads per CTA"
		k.Params = append(k.Params, Param{Name: "i2trip", Kind: ParamInner2Trip})
		for i, l := range a.inner2Live {
			k.Params = append(k.Params, Param{Name: "i2step_" + paramName(l), Kind: ParamInner2Step, Index: i})
		}
		if a.runs3D() {
			k.Plan.Runs3D = true
			k.Plan.Reason = "3D: x over the innermost level, each thread running a run of innermost iterations (1 or 2, with 32- or 16-wide tiles: LaunchPlan.Run3D) as many threads apart as there are along x, so that its set-up is paid once a run and a warp's loads stay whole lines; y over the inner level, z over the level; 4x2 rows and planes per CTA"
		}
	}
	if a.runs1D() {
		k.Plan.Runs1D = true
		k.Plan.Reason = "1D over the level, each thread running a run of its iterations (1 or 2: LaunchPlan.Run1D) as many threads apart as the launch has, so that its set-up is paid once a run and a warp's loads stay whole lines; 256 threads per CTA, 128 below 32768 threads"
	}
	if a.tripLoop != nil {
		k.TripChecked = true
		k.Params = append(k.Params, Param{Name: "itrip0", Kind: ParamInnerTrip0}, Param{Name: "itripstep", Kind: ParamInnerTripStep})
	}
	for i := range a.sites {
		k.Params = append(k.Params,
			Param{Name: fmt.Sprintf("site%d_delta", i), Kind: ParamSiteDelta, Index: i},
			Param{Name: fmt.Sprintf("site%d_lo", i), Kind: ParamSiteLo, Index: i},
			Param{Name: fmt.Sprintf("site%d_span", i), Kind: ParamSiteSpan, Index: i})
	}
	for t, rs := range a.exitStates {
		if k.ExitStates == nil {
			k.ExitStates = map[uint64][]LiveIn{}
		}
		k.ExitStates[t] = []LiveIn{} // none to store: the target alone
		for _, r := range rs {
			k.ExitStates[t] = append(k.ExitStates[t], a.resLive(r))
		}
	}
	if len(a.exitStates) > 0 {
		k.Params = append(k.Params, Param{Name: "xlast", Kind: ParamExitLast})
	}
	k.ExitRefused = a.exitRefused
	for i, r := range a.exitInits {
		l := a.resLive(r)
		k.ExitInits = append(k.ExitInits, l)
		k.Params = append(k.Params, Param{Name: "xinit_" + paramName(l), Kind: ParamExitInit, Index: i})
	}
	src, err := emit(a, k, false)
	if err != nil {
		return nil, err
	}
	k.PTX = src
	if a.dataIndependent() {
		u := *k
		u.Name = name + "_u"
		if u.PTX, err = emit(a, &u, true); err != nil {
			return nil, err
		}
		d := *k
		d.Name = name + "_d"
		if d.PTX, err = emitDry(a, &d); err != nil {
			return nil, err
		}
		k.DataIndependent, k.Unchecked, k.Dry = true, &u, &d
	}
	return k, nil
}

// OuterStoresApart reports whether a launch of k over footprints sites
// may run its outer body's stores in every thread of a row
// (Kernel.OuterStores): each one's footprint shares no byte with any
// other site's, so no access of the kernel sees which thread stored
// last, and all of them store the same values. (The caller checks that
// every row has an inner iteration.)
//
// A RowChecked store needs no such proof. Each thread makes it before
// its own inner iteration, with the row's value: a load of its bytes in
// the row sees that value, as the loop's first inner iteration does
// after the outer body; the kernel fails the launch where an inner store
// of the row meets its bytes (another thread's store of the row could
// come after it); and another row's accesses of its bytes would be a
// dependence between two iterations of the level, which its 1D kernel,
// one thread a row, would break too (the level is parallel). Covariance
// and correlation's diagonal, corr[i][i] = 1.0, lies in the window of
// corr[j][i], a column below it, in every launch: it launches 2D now.
func OuterStoresApart(k *Kernel, sites []Range) bool {
	if len(sites) != len(k.Sites) {
		return false
	}
	for _, s := range k.OuterStores {
		if slices.Contains(k.RowChecked, s) {
			continue
		}
		for t := range sites {
			if t != s && sites[t].Lo < sites[t].Hi && sites[s].Overlaps(sites[t]) {
				return false
			}
		}
	}
	return true
}

func paramName(l LiveIn) string {
	if !l.Stack {
		return l.Slot.String()
	}
	if l.Disp < 0 {
		return fmt.Sprintf("%s_m%d", l.Base, -l.Disp)
	}
	return fmt.Sprintf("%s_p%d", l.Base, l.Disp)
}

// EvalExit reports whether the loop continues when its exit compare sees a
// and b (b is ignored when the compare has an immediate).
func (e ExitTest) EvalExit(a, b uint64) bool {
	if e.BImm {
		b = uint64(e.Imm)
	}
	return cmpInt(e.Cmp, e.Type, a, b) == e.ContinueIf
}

func sext(v uint64, n int) int64 {
	if n >= 64 {
		return int64(v)
	}
	s := 64 - uint(n)
	return int64(v<<s) >> s
}

// cmpInt is GVInst's integer CMP.
func cmpInt(c gvinst.Cmp, t gvinst.Type, a, b uint64) bool {
	m := t.Mask()
	a &= m
	b &= m
	if t.IsSigned() {
		n := t.Bits()
		sa, sb := sext(a, n), sext(b, n)
		switch c {
		case gvinst.CmpLt, gvinst.CmpLtu:
			return sa < sb
		case gvinst.CmpLe, gvinst.CmpLeu:
			return sa <= sb
		case gvinst.CmpGt, gvinst.CmpGtu:
			return sa > sb
		case gvinst.CmpGe, gvinst.CmpGeu:
			return sa >= sb
		}
	}
	switch c {
	case gvinst.CmpEq, gvinst.CmpEqu:
		return a == b
	case gvinst.CmpNe, gvinst.CmpNeu:
		return a != b
	case gvinst.CmpLt, gvinst.CmpLtu:
		return a < b
	case gvinst.CmpLe, gvinst.CmpLeu:
		return a <= b
	case gvinst.CmpGt, gvinst.CmpGtu:
		return a > b
	case gvinst.CmpGe, gvinst.CmpGeu:
		return a >= b
	case gvinst.CmpNum:
		return true
	}
	return false
}

// privateSlots lists the private stack slots in key order.
func (a *analysis) privateSlots() []LiveIn {
	out := make([]LiveIn, len(a.privIdx))
	for key, i := range a.privIdx {
		b, d := privBaseOff(key)
		out[i] = LiveIn{Stack: true, Base: b, Disp: d, Size: a.privSize[key]}
	}
	return out
}
