package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/lift"
	"github.com/gxbit/gxbit/profile"
	"github.com/gxbit/gxbit/ptxgen"
)

// Phase 2 at run time (RATIONALE).
//
// The engine stops at the header of a hot spot's mapped level (a
// breakpoint). From there the spot's probing engine, which runs the level's
// blocks with a PROBE before every memory access and before the exit
// compare, runs two whole iterations on the CPU (three for a 2D kernel).
// That gives, from the live state and nothing remembered from the profile
// run: each live-in value's step (three samples must agree), the trip count
// (the exit compare's two operands are affine in the iteration: solved for
// the first arrival that leaves), and each access site's footprint (its
// range in the two iterations, extended linearly; a site that did not run
// takes its array's). The guards then check the footprints against the
// memory map, the profile's arrays (a written one may not overlap another),
// the private stack slots, the induction variables' width, MXCSR and DF.
// The GPU runs every iteration but the last two; the CPU runs those from
// the header with the live-in values set as the GPU's next iteration would
// have had them, so the exit state (registers, flags, the private slots of
// a -O0 loop) is what the native code leaves. A failed guard runs the rest
// of the instance on the CPU engine; a kernel that reports an error (a
// footprint or trip count prediction was wrong) leaves guest memory as it
// was, since written arrays are copied back only after a clean launch.
//
// Copies are lazy in both directions (ptxgen.Resident). Device buffers stay
// resident, and a launch over the same range copies in only the pages the
// guest changed since. What a kernel writes stays on the device: the
// guest's pages are marked stale, and the first access to one (by the
// guest, a system call, or the next probe) brings it back, with read-ahead
// while the guest reads in order. So two nests that pass an array between
// them never copy it through the host, and the CPU's probed and tail
// iterations bring back only the pages they touch. The buffer holding the
// only current copy of a page is backed up on the device before a launch
// that writes it, and restored if the kernel fails.

// AccelOptions configures phase 2.
type AccelOptions struct {
	Profile *profile.File
	Driver  gpu.Driver // an initialised driver
	// PTXDir, when set, receives every generated kernel as <entry>.ptx.
	PTXDir string
	// MinIterations is the least number of iterations worth a launch;
	// 0 means DefaultMinIterations.
	MinIterations uint64
}

// disarmAfter is how many instances in a row too short to launch make a
// hot spot that never launched stop probing.
const disarmAfter = 8

// ErrProfileMismatch is returned when a profile is applied to a program
// other than the one it was made for.
var ErrProfileMismatch = errors.New("the profile does not belong to this program")

// DefaultMinIterations is the smallest offloaded iteration count when
// AccelOptions.MinIterations is 0: below it a launch and its copies cost
// more than the CPU engine takes.
const DefaultMinIterations = 16

// The fallback reasons, as the report counts them.
const (
	ReasonTripCount   = "trip count too small"
	ReasonNotAffine   = "live-in value not affine"
	ReasonExitTest    = "exit test not evaluable"
	ReasonFootprint   = "footprint not evaluable"
	ReasonUnmapped    = "footprint outside mapped memory"
	ReasonAliasing    = "written footprint overlaps another array"
	ReasonStackAlias  = "stack slot inside an array footprint"
	ReasonWrap        = "induction variable would wrap"
	ReasonRounding    = "MXCSR rounding is not to nearest"
	ReasonDirection   = "direction flag set"
	ReasonKernel      = "kernel reported an error"
	ReasonDriver      = "driver error"
	ReasonProbeStop   = "probing stopped outside the loop"
	ReasonNotOffload  = "nest not offloadable"
	ReasonUnsupported = "no kernel"
)

// HotSpotReport is phase 2's account of one hot spot.
type HotSpotReport struct {
	Entry              string         `json:"entry"`
	Function           string         `json:"function"`
	Header             string         `json:"header"` // the mapped level's header
	Offloadable        bool           `json:"offloadable"`
	Disarmed           bool           `json:"disarmed,omitempty"` // stopped trying: every instance was too short
	SameAs             string         `json:"same_as,omitempty"`  // another hot spot with the same mapped level, which counts its launches
	Reason             string         `json:"reason,omitempty"`   // why not, when not
	Launches           int            `json:"launches"`
	Fallbacks          int            `json:"fallbacks"`
	FallbackReasons    map[string]int `json:"fallback_reasons"`
	LastFallback       string         `json:"last_fallback,omitempty"`
	Launches2D         int            `json:"launches_2d"`
	Note               string         `json:"note,omitempty"` // e.g. why the nest maps in one dimension only
	Iterations         uint64         `json:"gpu_iterations"`
	KernelSeconds      float64        `json:"kernel_seconds"`
	CopySeconds        float64        `json:"copy_seconds"`
	TranslateSeconds   float64        `json:"translate_seconds"`
	CPUSecondsEstimate float64        `json:"cpu_seconds_estimate"`
	KernelSpeedupEst   float64        `json:"kernel_speedup_estimate"` // CPU estimate over kernel and copy time
	BytesIn            uint64         `json:"bytes_in"`
	BytesOut           uint64         `json:"bytes_out"`
	BytesReused        uint64         `json:"bytes_resident"` // bytes not copied in again: already on the device
	// BytesDeferred are written bytes left on the device after a launch;
	// the guest pages come back when something touches them.
	BytesDeferred uint64 `json:"bytes_left_on_device"`
}

// KernelSpeedup estimates how much faster the GPU ran the offloaded
// iterations than the CPU engine would have (0 when nothing ran).
func (h *HotSpotReport) KernelSpeedup() float64 {
	if h.KernelSeconds+h.CopySeconds == 0 {
		return 0
	}
	return h.CPUSecondsEstimate / (h.KernelSeconds + h.CopySeconds)
}

// AccelReport is phase 2's account of a run (the --report JSON).
type AccelReport struct {
	HotSpots          []HotSpotReport `json:"hotspots"`
	WallSeconds       float64         `json:"wall_seconds"`
	GuestInstructions uint64          `json:"guest_instructions"`
	Device            string          `json:"device"`
	// BytesBroughtBack are the bytes left on the device that came back
	// into guest memory (all hot spots: they share the device buffers),
	// and BroughtBackSeconds the time that took.
	BytesBroughtBack   uint64  `json:"bytes_brought_back"`
	BroughtBackSeconds float64 `json:"brought_back_seconds"`
}

// Accelerate loads and runs a program with the profile's parallel hot
// spots offloaded to the GPU (gxbit accelerate).
func Accelerate(ctx context.Context, cfg Config, opts AccelOptions) (*Result, *AccelReport, error) {
	g, err := Load(cfg)
	if err != nil {
		return nil, nil, err
	}
	defer g.Close()
	acc, err := NewAccelerator(g, opts)
	if err != nil {
		return nil, nil, err
	}
	defer acc.Close()
	return acc.Run(ctx)
}

// Accelerator offloads a guest's hot spots: it owns the breakpoints, the
// kernels and the device context of one run.
type Accelerator struct {
	g     *Guest
	opts  AccelOptions
	ctx   gpu.Context
	dev   string
	spots map[uint64]*spot // by mapped header
	order []*spot
	main  *gvinst.Interpreter
	aux   []*gvinst.Interpreter
	// resident keeps device buffers across launches; a launch skips the
	// copy in of an array the guest has not changed since.
	resident ptxgen.Resident
}

// NewAccelerator prepares the hot spots of opts.Profile for guest g:
// it translates each parallel nest, generates and loads its kernel, and
// arms a breakpoint at its header. A nest that cannot be offloaded is
// reported with its reason and runs on the CPU.
func NewAccelerator(g *Guest, opts AccelOptions) (*Accelerator, error) {
	if opts.Profile == nil || opts.Driver == nil {
		return nil, errors.New("accelerate: a profile and a driver are needed")
	}
	if sum := opts.Profile.ProgramSHA256; sum != "" && sum != g.SHA256 {
		return nil, fmt.Errorf("%w: it was made for %s (sha256 %.12s…), not this program (sha256 %.12s…)", ErrProfileMismatch, opts.Profile.Program, sum, g.SHA256)
	}
	if opts.MinIterations == 0 {
		opts.MinIterations = DefaultMinIterations
	}
	gctx, err := opts.Driver.NewContext(0)
	if err != nil {
		return nil, fmt.Errorf("accelerate: %w", err)
	}
	a := &Accelerator{g: g, opts: opts, ctx: gctx, spots: map[uint64]*spot{}}
	// What a kernel writes stays on the device until the guest touches
	// it; the first launch makes the resident buffers g.Mem's holder.
	a.resident.Lazy = true
	if p, err := opts.Driver.Device(0); err == nil {
		a.dev = opts.Driver.Name() + ": " + p.Name
	}
	for i := range opts.Profile.HotSpots {
		hs := &opts.Profile.HotSpots[i]
		sp := a.prepare(hs)
		if sp == nil {
			continue
		}
		a.order = append(a.order, sp)
		if sp.kernel != nil {
			if first, dup := a.spots[sp.header]; dup {
				sp.rep.SameAs = first.rep.Entry
				sp.rep.Offloadable = false
				sp.rep.Reason = "the same loop level as hot spot " + first.rep.Entry
				continue
			}
			a.spots[sp.header] = sp
		}
	}
	bps := map[uint64]bool{}
	for h := range a.spots {
		bps[h] = true
	}
	a.main = gvinst.NewInterpreter(g.Mem, g.Lifter, gvinst.InterpOptions{Breakpoints: bps, Optimize: true})
	return a, nil
}

// Close brings back into guest memory what is left on the device (see
// Run) and releases the device context.
func (a *Accelerator) Close() {
	if a.ctx != nil {
		_ = a.resident.Close()
		_ = a.ctx.Close()
		a.ctx = nil
	}
}

// Run runs the guest to its end and returns its result and the report.
func (a *Accelerator) Run(ctx context.Context) (*Result, *AccelReport, error) {
	start := time.Now()
	res, err := a.g.RunEngine(ctx, a.main, a.onBreak)
	// The guest's memory holds everything again, whoever reads it next.
	if cerr := a.resident.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("accelerate: %w", cerr)
	}
	if err != nil {
		return nil, nil, err
	}
	rep := a.Report()
	rep.WallSeconds = time.Since(start).Seconds()
	rep.GuestInstructions = res.Stats.GuestInstructions
	for _, e := range a.aux {
		rep.GuestInstructions += e.Stats().GuestInsns
	}
	res.Stats.GuestInstructions = rep.GuestInstructions
	return res, rep, nil
}

// Report returns the per-hot-spot counters so far.
func (a *Accelerator) Report() *AccelReport {
	rep := &AccelReport{Device: a.dev}
	n, d := a.resident.BroughtBack()
	rep.BytesBroughtBack, rep.BroughtBackSeconds = n, d.Seconds()
	for _, sp := range a.order {
		r := sp.rep
		r.KernelSpeedupEst = r.KernelSpeedup()
		r.FallbackReasons = map[string]int{}
		for k, v := range sp.rep.FallbackReasons {
			r.FallbackReasons[k] = v
		}
		rep.HotSpots = append(rep.HotSpots, r)
	}
	return rep
}

// spot is one offloadable hot spot at run time.
type spot struct {
	a      *Accelerator
	hs     *profile.HotSpot
	entry  uint64
	header uint64
	level  map[uint64]bool
	blocks map[uint64]*gvinst.VBlock
	exits  map[uint64]bool
	// exitHints are the profile's exit targets: blocks are cut there, so
	// that leaving the level by falling through starts a block too.
	exitHints []uint64
	ivs       map[string]ivStep // the profile's induction variables of the level, by location
	kernel    *ptxgen.Kernel
	fn        gpu.Function
	loadErr   error // why the kernel could not be loaded (it then never is)
	// The 2D kernel, when the level inside is parallel too and the
	// generator accepts the nest for it (nil otherwise).
	inner    uint64
	innerSet map[uint64]bool
	kernel2  *ptxgen.Kernel
	fn2      gpu.Function
	// groupOf maps a site's x86 address and kind to the profile's array.
	groupOf map[[2]uint64]int
	probe   *gvinst.Interpreter // instrumented; stops at the header and the exits
	rest    *gvinst.Interpreter // plain; stops at the exits (fallback runs)
	rec     probeRecord
	skip    []uint64 // live-in values expected at the tail's second arrival
	small   int      // consecutive too-short instances before any launch
	fatal   error    // a broken invariant that must stop the run
	rep     HotSpotReport
}

// probeRecord is what one probed iteration saw.
type probeRecord struct {
	lo, hi     []uint64 // per site; lo > hi when not seen
	a, b       uint64
	exitSeen   int
	siteSeen   []bool
	numSites   int
	exitSiteA  uint32
	exitSiteB  uint32
	firstSites uint32
}

func (r *probeRecord) reset(n int) {
	r.lo = make([]uint64, n)
	r.hi = make([]uint64, n)
	r.siteSeen = make([]bool, n)
	r.exitSeen = 0
}

func (r *probeRecord) probe(site uint32, addr uint64, size int) {
	switch {
	case site == r.exitSiteA:
		r.a = addr
		r.exitSeen++
	case site == r.exitSiteB:
		r.b = addr
	case int(site) < len(r.lo):
		end := addr + uint64(size)
		if !r.siteSeen[site] {
			r.siteSeen[site] = true
			r.lo[site], r.hi[site] = addr, end
			return
		}
		r.lo[site] = min(r.lo[site], addr)
		r.hi[site] = max(r.hi[site], end)
	}
}

// prepare builds the spot of a hot spot: nil when the profile does not
// mark it parallel.
func (a *Accelerator) prepare(hs *profile.HotSpot) *spot {
	L := mappedLevel(hs)
	if L < 0 {
		return nil
	}
	sp := newSpot(hs, L)
	sp.a = a
	t0 := time.Now()
	err := sp.build()
	sp.rep.TranslateSeconds = time.Since(t0).Seconds()
	if err != nil {
		sp.kernel = nil
		sp.rep.Reason = err.Error()
		return sp
	}
	sp.rep.Offloadable = true
	return sp
}

// newSpot makes the spot of level L of hot spot hs, before translation.
func newSpot(hs *profile.HotSpot, L int) *spot {
	lv := &hs.Levels[L]
	sp := &spot{hs: hs, entry: uint64(hs.Entry), header: uint64(lv.Header), level: map[uint64]bool{},
		blocks: map[uint64]*gvinst.VBlock{}, exits: map[uint64]bool{}, groupOf: map[[2]uint64]int{}}
	sp.rep = HotSpotReport{Entry: hs.Entry.String(), Function: hs.Function, Header: lv.Header.String(), FallbackReasons: map[string]int{}}
	for _, b := range lv.Blocks {
		sp.level[uint64(b)] = true
	}
	sp.level[sp.header] = true
	for _, e := range lv.Exits {
		sp.exitHints = append(sp.exitHints, uint64(e))
	}
	sp.ivs = map[string]ivStep{}
	for _, iv := range lv.IVs {
		sp.ivs[iv.Loc.String()] = ivStep{iv.Step, iv.Step == 0 && len(iv.StepObserved) > 0}
	}
	if L+1 < len(hs.Levels) {
		for _, p := range hs.ParallelLevels {
			if p == L+1 {
				il := &hs.Levels[L+1]
				sp.inner, sp.innerSet = uint64(il.Header), map[uint64]bool{uint64(il.Header): true}
				for _, b := range il.Blocks {
					sp.innerSet[uint64(b)] = true
				}
			}
		}
	}
	for _, acc := range hs.Accesses {
		k := uint64(0)
		if acc.Kind == "write" {
			k = 1
		}
		sp.groupOf[[2]uint64{uint64(acc.X86), k}] = acc.Group
	}
	return sp
}

// mappedLevel is the level of a parallel hot spot that phase 2 maps to
// threads (the outermost parallel one), or -1.
func mappedLevel(hs *profile.HotSpot) int {
	if len(hs.ParallelLevels) == 0 || hs.Verdict != profile.VerdictParallel {
		return -1
	}
	L := hs.ParallelLevels[0]
	for _, l := range hs.ParallelLevels {
		L = min(L, l)
	}
	if L < 0 || L >= len(hs.Levels) {
		return -1
	}
	return L
}

// GeneratedKernel is the kernel of one hot spot, or why there is none.
type GeneratedKernel struct {
	Entry    uint64
	Header   uint64
	Function string
	Kernel   *ptxgen.Kernel
	// Kernel2D is the nest's 2D kernel (x over the inner level), which a
	// launch uses when the probed rows confirm the inner level's shape;
	// nil when there is none, and Note says why.
	Kernel2D *ptxgen.Kernel
	Note     string
	Err      error
}

// GenerateKernels translates every parallel hot spot of prof for the
// loaded (not yet run) guest g, without running anything (gxbit ptx gen).
func GenerateKernels(g *Guest, prof *profile.File) []GeneratedKernel {
	var out []GeneratedKernel
	for i := range prof.HotSpots {
		hs := &prof.HotSpots[i]
		L := mappedLevel(hs)
		if L < 0 {
			continue
		}
		sp := newSpot(hs, L)
		err := sp.generate(g.Lifter)
		out = append(out, GeneratedKernel{Entry: sp.entry, Header: sp.header, Function: hs.Function, Kernel: sp.kernel, Kernel2D: sp.kernel2, Note: sp.rep.Note, Err: err})
	}
	return out
}

// liftLevel lifts and optimizes the level's blocks, from the header along
// the successors that stay in the level, and notes the exits.
func (sp *spot) liftLevel(lifter *lift.Lifter) error {
	work := []uint64{sp.header}
	for len(work) > 0 {
		addr := work[len(work)-1]
		work = work[:len(work)-1]
		if sp.blocks[addr] != nil {
			continue
		}
		b, err := lifter.Translate(addr)
		if err != nil {
			return fmt.Errorf("translating %#x: %w", addr, err)
		}
		if addr != sp.header {
			cutAt(b, sp.header)
		}
		if sp.inner != 0 && addr != sp.inner {
			cutAt(b, sp.inner)
		}
		for _, e := range sp.exitHints {
			if e != addr {
				cutAt(b, e)
			}
		}
		if err := gvinst.Optimize(b); err != nil {
			return fmt.Errorf("optimizing %#x: %w", addr, err)
		}
		sp.blocks[addr] = b
		if splitAt(b) {
			// The lifter ended a long block in the middle of a CFG block:
			// the rest of it is in the level too.
			sp.level[b.End] = true
			if sp.innerSet[addr] {
				sp.innerSet[b.End] = true
			}
		}
		for _, s := range b.Successors() {
			if sp.level[s] {
				work = append(work, s)
			} else {
				sp.exits[s] = true
			}
		}
		if len(sp.blocks) > 4096 {
			return errors.New("the loop has too many blocks")
		}
	}
	return nil
}

// generate lifts the level and generates its kernel.
func (sp *spot) generate(lifter *lift.Lifter) error {
	if err := sp.liftLevel(lifter); err != nil {
		return err
	}
	k, err := ptxgen.Generate(&ptxgen.Nest{Name: fmt.Sprintf("gx_%x", sp.entry), Header: sp.header, Blocks: sp.blocks})
	if err != nil {
		return err
	}
	sp.kernel = k
	if sp.inner != 0 && sp.blocks[sp.inner] != nil {
		inner := map[uint64]bool{}
		for a := range sp.blocks {
			if sp.innerSet[a] {
				inner[a] = true
			}
		}
		k2, err := ptxgen.Generate(&ptxgen.Nest{Name: fmt.Sprintf("gx_%x_2d", sp.entry), Header: sp.header, Blocks: sp.blocks, Inner: sp.inner, InnerBlocks: inner})
		if err == nil {
			sp.kernel2 = k2
		} else {
			sp.rep.Note = "1D only: " + err.Error()
		}
	}
	return nil
}

// prefer1D reports whether a launch of count outer iterations should use
// the 1D kernel k though a 2D one exists: on the simulator, whose "SMs"
// are the host's cores, once the outer level alone gives every core a CTA
// of its own. There a thread's prologue costs as much as many inner
// iterations, and the 1D kernel pays it once per row, with the inner
// loop's footprint checks hoisted to its entry; a real GPU needs the 2D
// kernel's parallelism.
func (a *Accelerator) prefer1D(k *ptxgen.Kernel, count uint64) bool {
	bx := uint64(max(k.Plan.Config(count).Block.X, 1))
	return a.opts.Driver != nil && a.opts.Driver.Name() == "sim" && (count+bx-1)/bx >= uint64(runtime.NumCPU())
}

// loadKernel loads k's module into ctx and finds its function.
func loadKernel(ctx gpu.Context, k *ptxgen.Kernel) (gpu.Function, error) {
	mod, err := ctx.LoadModule(k.PTX)
	if err != nil {
		return nil, fmt.Errorf("loading the kernel: %w", err)
	}
	fn, err := mod.Function(k.Name)
	if err != nil {
		return nil, fmt.Errorf("loading the kernel: %w", err)
	}
	return fn, nil
}

// ensureLoaded loads the spot's kernels the first time a launch needs
// them: a module costs the CUDA JIT tens of milliseconds, which hot spots
// that never pass their guards should not pay.
func (sp *spot) ensureLoaded() error {
	if sp.fn != nil {
		return nil
	}
	if sp.loadErr != nil {
		return sp.loadErr
	}
	t0 := time.Now()
	defer func() { sp.rep.TranslateSeconds += time.Since(t0).Seconds() }()
	fn, err := loadKernel(sp.a.ctx, sp.kernel)
	if err != nil {
		sp.loadErr = err
		sp.rep.Offloadable, sp.rep.Disarmed, sp.rep.Reason = false, true, err.Error()
		return err
	}
	sp.fn = fn
	if sp.kernel2 != nil {
		if sp.fn2, err = loadKernel(sp.a.ctx, sp.kernel2); err != nil {
			sp.kernel2 = nil
			sp.rep.Note = "1D only: " + err.Error()
		}
	}
	return nil
}

// build generates the kernels (loaded at their first launch) and makes the
// spot's engines.
func (sp *spot) build() error {
	a := sp.a
	if err := sp.generate(a.g.Lifter); err != nil {
		return err
	}
	k := sp.kernel
	if a.opts.PTXDir != "" {
		for suffix, k := range map[string]*ptxgen.Kernel{"": sp.kernel, "_2d": sp.kernel2} {
			if k == nil {
				continue
			}
			name := filepath.Join(a.opts.PTXDir, fmt.Sprintf("%#x%s.ptx", sp.entry, suffix))
			if err := os.WriteFile(name, []byte(k.PTX), 0o644); err != nil {
				return fmt.Errorf("writing %s: %w", name, err)
			}
		}
	}
	n := uint32(len(k.Sites))
	sp.rec.exitSiteA, sp.rec.exitSiteB = n, n+1
	bps := map[uint64]bool{sp.header: true}
	if sp.kernel2 != nil {
		bps[sp.inner] = true
	}
	exits := map[uint64]bool{}
	for e := range sp.exits {
		bps[e] = true
		exits[e] = true
	}
	sp.probe = gvinst.NewInterpreter(a.g.Mem, &probeTranslator{sp: sp}, gvinst.InterpOptions{Breakpoints: bps, Probe: sp.rec.probe})
	sp.rest = gvinst.NewInterpreter(a.g.Mem, &probeTranslator{sp: sp, plain: true}, gvinst.InterpOptions{Breakpoints: exits})
	a.aux = append(a.aux, sp.probe, sp.rest)
	return nil
}

// splitAt reports whether block b ends with a jump to its own end that no
// x86 jump made: the lifter split a long block there.
func splitAt(b *gvinst.VBlock) bool {
	if len(b.Insts) == 0 || len(b.Guest) == 0 {
		return false
	}
	last := &b.Insts[len(b.Insts)-1]
	g := b.Guest[len(b.Guest)-1]
	return last.Op == gvinst.OpJmp && last.Target[0] == b.End && !strings.HasPrefix(strings.TrimSpace(g.Text), "j")
}

// cutAt ends block b before the guest instruction at addr, if b runs
// into it, with a jump there: a latch that falls through into the loop
// header (gcc -O0's loops) then ends at the header like any back edge.
func cutAt(b *gvinst.VBlock, addr uint64) {
	if addr <= b.Addr || addr >= b.End {
		return
	}
	cut := -1
	for i := range b.Insts {
		if b.Insts[i].X86 == addr {
			cut = i
			break
		}
	}
	if cut <= 0 {
		return
	}
	x86 := b.Insts[cut-1].X86
	b.Insts = append(b.Insts[:cut:cut], gvinst.Inst{Op: gvinst.OpJmp, Target: [2]uint64{addr}, X86: x86})
	for i, g := range b.Guest {
		if g.Addr >= addr {
			b.Guest = b.Guest[:i]
			break
		}
	}
	b.End = addr
	b.FlagsDeadAtExit = false
}

// probeTranslator gives the probing engine the spot's blocks (cut at the
// headers and exits) with a PROBE before every guest memory access and
// before the exit compare, and the fallback engine the same blocks without
// probes; other blocks are lifted and optimized as the main engine has
// them.
type probeTranslator struct {
	sp    *spot
	plain bool // the level's blocks without probes (the fallback engine)
}

func (p *probeTranslator) Translate(addr uint64) (*gvinst.VBlock, error) {
	sp := p.sp
	b, ok := sp.blocks[addr]
	if !ok {
		nb, err := sp.a.g.Lifter.Translate(addr)
		if err != nil {
			return nil, err
		}
		return nb, gvinst.Optimize(nb)
	}
	if p.plain {
		c := *b
		c.Insts = append([]gvinst.Inst(nil), b.Insts...)
		return &c, nil
	}
	k := sp.kernel
	sites := map[int]int{}
	for _, s := range k.Sites {
		if s.Block == addr {
			sites[s.Index] = s.ID
		}
	}
	out := *b
	out.Insts = make([]gvinst.Inst, 0, len(b.Insts)+len(sites)+2)
	fresh := b.NumVRegs()
	for i := range b.Insts {
		in := &b.Insts[i]
		if id, ok := sites[i]; ok && in.Op == gvinst.OpRepStos {
			// rep stos: its first and last element, rdi and
			// rdi + (rcx-1)*size.
			v := func(n int) gvinst.Reg { return gvinst.VReg(fresh + n) }
			size := int64(in.Type.Size())
			probe := func(r gvinst.Reg) gvinst.Inst {
				return gvinst.Inst{Op: gvinst.OpProbe, Type: in.Type, Src: [4]gvinst.Reg{r}, Target: [2]uint64{uint64(id)}, X86: in.X86}
			}
			out.Insts = append(out.Insts,
				gvinst.Inst{Op: gvinst.OpGet, Type: gvinst.U64, Dst: v(0), Src: [4]gvinst.Reg{gvinst.SReg(7)}, X86: in.X86},
				probe(v(0)),
				gvinst.Inst{Op: gvinst.OpGet, Type: gvinst.U64, Dst: v(1), Src: [4]gvinst.Reg{gvinst.SReg(1)}, X86: in.X86},
				gvinst.Inst{Op: gvinst.OpSub, Type: gvinst.U64, Dst: v(2), Src: [4]gvinst.Reg{v(1)}, HasImm: true, Imm: 1, X86: in.X86},
				gvinst.Inst{Op: gvinst.OpMul, Type: gvinst.U64, Dst: v(3), Src: [4]gvinst.Reg{v(2)}, HasImm: true, Imm: size, X86: in.X86},
				gvinst.Inst{Op: gvinst.OpAdd, Type: gvinst.U64, Dst: v(4), Src: [4]gvinst.Reg{v(0), v(3)}, X86: in.X86},
				probe(v(4)))
		} else if ok {
			out.Insts = append(out.Insts, gvinst.Inst{Op: gvinst.OpProbe, Type: in.Type, Src: [4]gvinst.Reg{in.Src[0]}, Imm: in.Imm, Target: [2]uint64{uint64(id)}, X86: in.X86})
		}
		for _, c := range k.Exit.Copies {
			if addr != c.Block || i != c.Index {
				continue
			}
			out.Insts = append(out.Insts, gvinst.Inst{Op: gvinst.OpProbe, Type: gvinst.U8, Src: [4]gvinst.Reg{c.A}, Target: [2]uint64{uint64(sp.rec.exitSiteA)}, X86: in.X86})
			if !k.Exit.BImm {
				out.Insts = append(out.Insts, gvinst.Inst{Op: gvinst.OpProbe, Type: gvinst.U8, Src: [4]gvinst.Reg{c.B}, Target: [2]uint64{uint64(sp.rec.exitSiteB)}, X86: in.X86})
			}
		}
		out.Insts = append(out.Insts, *in)
	}
	return &out, nil
}

// liveValues reads the kernel's live-in values from the guest state.
func (sp *spot) liveValues(cpu *gvinst.CPU) ([]uint64, error) {
	return liveValuesOf(sp.a.g.Mem, cpu, sp.kernel.LiveIns)
}

// liveValuesOf reads the values ls from the guest state.
func liveValuesOf(mem *gvinst.Memory, cpu *gvinst.CPU, ls []ptxgen.LiveIn) ([]uint64, error) {
	vs := make([]uint64, len(ls))
	for i, l := range ls {
		if !l.Stack {
			vs[i] = cpu.State[l.Slot]
			continue
		}
		v, err := mem.Load(cpu.State[l.Base]+uint64(l.Disp), l.Size)
		if err != nil {
			return nil, err
		}
		vs[i] = v
	}
	return vs, nil
}

func (sp *spot) setLive(cpu *gvinst.CPU, vs []uint64) error {
	for i, l := range sp.kernel.LiveIns {
		if !l.Stack {
			cpu.State[l.Slot] = vs[i]
			continue
		}
		if err := sp.a.g.Mem.Store(cpu.State[l.Base]+uint64(l.Disp), l.Size, vs[i]); err != nil {
			return err
		}
	}
	return nil
}

// fallback is a failed guard: its reason, and a detail for the report.
type fallback struct {
	reason, detail string
}

// Error is the reason and its detail.
func (f *fallback) Error() string { return f.reason + ": " + f.detail }

func fail(reason, format string, args ...any) *fallback {
	return &fallback{reason, fmt.Sprintf(format, args...)}
}

// onBreak is called by the engine at a hot spot header.
func (a *Accelerator) onBreak(cpu *gvinst.CPU) error {
	sp := a.spots[cpu.PC]
	if sp == nil {
		return nil
	}
	if sp.skip != nil {
		want := sp.skip
		sp.skip = nil
		if got, err := sp.liveValues(cpu); err == nil && equalU64(got, want) {
			return nil // the CPU tail of the instance just offloaded
		}
	}
	if sp.rep.Disarmed {
		return nil
	}
	done, fb := sp.offload(cpu)
	if fb == nil {
		sp.small = 0
		return nil
	}
	if fb.reason == ReasonTripCount && sp.rep.Launches == 0 {
		// A loop whose instances are all too short is not worth probing
		// again and again.
		if sp.small++; sp.small >= disarmAfter {
			sp.rep.Disarmed = true
		}
	}
	sp.rep.Fallbacks++
	sp.rep.FallbackReasons[fb.reason]++
	sp.rep.LastFallback = fb.Error()
	if sp.fatal != nil {
		return sp.fatal
	}
	if done {
		return nil
	}
	return sp.runRest(cpu)
}

// runRest runs the rest of the loop instance on the CPU, until it leaves
// the loop (or stops for any other reason the main engine then handles).
func (sp *spot) runRest(cpu *gvinst.CPU) error {
	for {
		st := sp.rest.Run(cpu, 0)
		switch {
		case st.Kind == gvinst.StopBreakpoint && !sp.exits[st.PC]:
			continue
		case st.Kind == gvinst.StopSyscall:
			// As in probing: the loop has no system call.
			return fmt.Errorf("accelerate: hot spot %s stopped at a system call in its CPU fallback (%v)", sp.rep.Entry, st)
		}
		return nil
	}
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// offload runs one instance of the loop from the header: two probed
// iterations on the CPU, the middle on the GPU, the last two on the CPU.
// done is true when the loop instance needs nothing more from the caller
// (it ended, or the engine must handle a stop).
func (sp *spot) offload(cpu *gvinst.CPU) (done bool, fb *fallback) {
	k := sp.kernel
	ns := len(k.Sites)
	// Two probed iterations give the steps (checked on three states); a
	// 2D kernel needs a third, to check the per-row changes of the inner
	// trip count and steps.
	P := 2
	if sp.kernel2 != nil {
		P = 3
	}
	var states [4][]uint64
	var recs [3]probeRecord
	var err error
	if states[0], err = sp.liveValues(cpu); err != nil {
		return false, fail(ReasonNotAffine, "reading live-in: %v", err)
	}
	// The CPU's time per iteration, for the report's estimate, is the last
	// probed iteration's: the first may include translating the blocks.
	var cpuPerIter float64
	var innerTrips [3]uint64
	var innerStates [3][][]uint64
	for it := 0; it < P; it++ {
		t0 := time.Now()
		sp.rec.reset(ns)
		var st gvinst.Stop
		for {
			st = sp.probe.Run(cpu, 0)
			if st.Kind != gvinst.StopBreakpoint || st.PC != sp.inner || sp.kernel2 == nil {
				break
			}
			// An arrival at the inner header: count it, and keep the
			// first three states of the first iteration for the inner
			// steps.
			innerTrips[it]++
			if len(innerStates[it]) < 3 {
				v, err := liveValuesOf(sp.a.g.Mem, cpu, sp.kernel2.InnerLiveIns)
				if err != nil {
					return false, fail(ReasonNotAffine, "reading inner live-in: %v", err)
				}
				innerStates[it] = append(innerStates[it], v)
			}
		}
		if st.Kind == gvinst.StopSyscall {
			// The loop's blocks have no system call and every exit is a
			// breakpoint, so this cannot happen; the syscall must not be
			// skipped if it does.
			sp.fatal = fmt.Errorf("accelerate: the probing engine of hot spot %s stopped at a system call (%v)", sp.rep.Entry, st)
			return true, fail(ReasonProbeStop, "%v", st)
		}
		if st.Kind != gvinst.StopBreakpoint {
			return true, fail(ReasonProbeStop, "%v", st)
		}
		if st.PC != sp.header {
			return true, fail(ReasonTripCount, "the loop ended after %d iterations", it+1)
		}
		recs[it] = sp.rec
		cpuPerIter = time.Since(t0).Seconds()
		if states[it+1], err = sp.liveValues(cpu); err != nil {
			return false, fail(ReasonNotAffine, "reading live-in: %v", err)
		}
	}
	// Steps of the live-in values.
	steps := make([]uint64, len(k.LiveIns))
	for i := range k.LiveIns {
		d1 := states[1][i] - states[0][i]
		for j := 2; j <= P; j++ {
			if d := states[j][i] - states[j-1][i]; d != d1 {
				return false, fail(ReasonNotAffine, "%s changed by %#x then %#x", k.LiveIns[i], d1, d)
			}
		}
		steps[i] = d1
	}
	// The values that move must be induction variables phase 1 saw, with
	// the steps it saw: a carried scalar (an accumulator) may look affine
	// over a few iterations.
	restride := ""
	if fb := sp.checkIVs(steps, &restride); fb != nil {
		return false, fb
	}
	// Trip count from the exit test: arrival j (0 = the first probed one)
	// compares a0 + da·j with b0 + db·j.
	for it := 0; it < P; it++ {
		if recs[it].exitSeen != 1 {
			return false, fail(ReasonExitTest, "the exit test ran %d times in one iteration", recs[it].exitSeen)
		}
	}
	last, ok := exitArrival(k.Exit, recs[0].a, recs[1].a-recs[0].a, recs[0].b, recs[1].b-recs[0].b)
	if !ok {
		return false, fail(ReasonExitTest, "no exit found for the compare at %#x", k.Exit.X86)
	}
	// The GPU runs arrivals P .. last-2; the CPU the last two.
	if last < uint64(P)+2 || last-1-uint64(P) < sp.a.opts.MinIterations {
		return false, fail(ReasonTripCount, "%d iterations left", last+1-uint64(P))
	}
	count := last - 1 - uint64(P)
	if k.DynRounding && cpu.State[gvinst.MXCSR]>>13&3 != 0 {
		return false, fail(ReasonRounding, "MXCSR %#x", cpu.State[gvinst.MXCSR])
	}
	if k.ClearDF && cpu.State[gvinst.RFLAGS]&gvinst.FlagDF != 0 {
		return false, fail(ReasonDirection, "rep stos with the direction flag set")
	}
	// No induction variable wraps over the offloaded and tail arrivals.
	for i := range k.LiveIns {
		if steps[i] == 0 {
			continue
		}
		limit := new(big.Int).Lsh(big.NewInt(1), 64)
		if states[0][i] < 1<<32 && states[1][i] < 1<<32 && states[P][i] < 1<<32 {
			limit = new(big.Int).Lsh(big.NewInt(1), 32)
		}
		end := new(big.Int).SetUint64(states[P][i])
		end.Add(end, new(big.Int).Mul(big.NewInt(int64(steps[i])), new(big.Int).SetUint64(count+1)))
		if end.Sign() < 0 || end.Cmp(limit) >= 0 {
			return false, fail(ReasonWrap, "%s from %#x by %#x", k.LiveIns[i], states[P][i], steps[i])
		}
	}
	// Footprints: each site's range in the probed iterations, extended
	// linearly over the offloaded ones.
	// Copies of one x86 instruction in several blocks share one access
	// function: merge what each iteration saw of them.
	byX86 := map[[2]uint64]*siteObs{}
	xkey := func(s ptxgen.Site) [2]uint64 {
		if s.Store {
			return [2]uint64{s.X86, 1}
		}
		return [2]uint64{s.X86, 0}
	}
	for s := 0; s < ns; s++ {
		o := byX86[xkey(k.Sites[s])]
		if o == nil {
			o = &siteObs{}
			byX86[xkey(k.Sites[s])] = o
		}
		for it := 0; it < 2; it++ {
			if !recs[it].siteSeen[s] {
				continue
			}
			if !o.seen[it] {
				o.seen[it], o.lo[it], o.hi[it] = true, recs[it].lo[s], recs[it].hi[s]
				continue
			}
			o.lo[it], o.hi[it] = min(o.lo[it], recs[it].lo[s]), max(o.hi[it], recs[it].hi[s])
		}
	}
	if restride != "" {
		if why := sp.disjointIterations(byX86); why != "" {
			return false, fail(ReasonNotAffine, "%s, and %s", restride, why)
		}
	}
	sites := make([]ptxgen.Range, ns)
	seen := make([]bool, ns)
	for s := 0; s < ns; s++ {
		o := byX86[xkey(k.Sites[s])]
		if !o.seen[0] || !o.seen[1] {
			continue
		}
		seen[s] = true
		lo0, lo1 := int64(o.lo[0]), int64(o.lo[1])
		hi0, hi1 := int64(o.hi[0]), int64(o.hi[1])
		first, lastJ := int64(P), int64(last-2)
		loA, loB := lo0+(lo1-lo0)*first, lo0+(lo1-lo0)*lastJ
		hiA, hiB := hi0+(hi1-hi0)*first, hi0+(hi1-hi0)*lastJ
		r := ptxgen.Range{Lo: uint64(min(loA, loB)), Hi: uint64(max(hiA, hiB))}
		if min(loA, loB) < 0 || r.Hi <= r.Lo || r.Hi-r.Lo > 1<<36 {
			return false, fail(ReasonFootprint, "site at %#x: bad range", k.Sites[s].X86)
		}
		sites[s] = r
	}
	// A site that did not run in both probed iterations (conditional code,
	// an inner loop empty there) gets the footprint of the profile's array
	// it belongs to, as the other sites of that array show it; the kernel
	// checks every access against it.
	for s := 0; s < ns; s++ {
		if seen[s] {
			continue
		}
		g, ok := sp.group(k.Sites[s])
		var r ptxgen.Range
		for o := 0; o < ns && ok; o++ {
			if og, ook := sp.group(k.Sites[o]); seen[o] && ook && og == g {
				if r.Hi == 0 {
					r = sites[o]
				}
				r.Lo, r.Hi = min(r.Lo, sites[o].Lo), max(r.Hi, sites[o].Hi)
			}
		}
		if r.Hi == 0 && ok && g >= 0 && g < len(sp.hs.Arrays) {
			// Nothing of that array ran either: the profile's footprint
			// of the array (the kernel's checks catch an input for which
			// it is wrong).
			fp := sp.hs.Arrays[g].Footprint
			r = ptxgen.Range{Lo: uint64(fp[0]), Hi: uint64(fp[1])}
		}
		// Else the site ran neither here nor when profiling (the scalar
		// remainder of a vectorised loop, say): an empty footprint, so
		// that the launch fails, and the CPU takes over, if it runs.
		sites[s] = r
	}
	if fb := sp.guards(cpu, sites); fb != nil {
		return false, fb
	}
	if err := sp.ensureLoaded(); err != nil {
		return false, fail(ReasonDriver, "%v", err)
	}
	in := ptxgen.LaunchInput{Count: count, Values: states[P], Steps: steps, Sites: sites}
	fn := sp.fn
	if k2 := sp.kernel2; k2 != nil && !sp.a.prefer1D(sp.kernel, count) && len(innerStates[0]) == 3 && len(innerStates[1]) == 3 && len(innerStates[2]) == 3 {
		// 2D: the inner trip count of outer arrival j is n0 + dn·j, and
		// each inner step is s0 + ds·j (an inner index whose step is the
		// outer index, i*j, say); three probed rows check both.
		n0, dn := int64(innerTrips[0]), int64(innerTrips[1])-int64(innerTrips[0])
		first, lastRow := n0+int64(P)*dn, n0+dn*int64(last-2)
		isteps := make([]uint64, len(k2.InnerLiveIns))
		irows := make([]uint64, len(k2.InnerLiveIns))
		ok := first >= 0 && lastRow >= 0 && int64(innerTrips[2])-int64(innerTrips[1]) == dn
		for i := range isteps {
			var st [3]uint64
			for it := 0; it < 3; it++ {
				is := innerStates[it]
				d1, d2 := is[1][i]-is[0][i], is[2][i]-is[1][i]
				if d1 != d2 {
					ok = false
				}
				st[it] = d2
			}
			irows[i] = st[1] - st[0]
			if st[2]-st[1] != irows[i] {
				ok = false
			}
			isteps[i] = st[0] + uint64(P)*irows[i]
		}
		if ok {
			in.InnerTrip0, in.InnerTripStep, in.InnerMax = uint64(first), uint64(dn), uint64(max(first, lastRow))
			in.InnerSteps, in.InnerStepRows = isteps, irows
			k, fn = k2, sp.fn2
		}
	}
	st, err := ptxgen.Launch(sp.a.ctx, fn, k, sp.a.g.Mem, in, &sp.a.resident)
	if errors.Is(err, ptxgen.ErrLostCopy) {
		// The guest's memory is not what the program wrote: stop.
		sp.fatal = fmt.Errorf("accelerate: hot spot %s: %w", sp.rep.Entry, err)
		return true, fail(ReasonDriver, "%v", err)
	}
	if err != nil {
		var ke *ptxgen.KernelError
		if errors.As(err, &ke) {
			return false, fail(ReasonKernel, "%v", ke)
		}
		return false, fail(ReasonDriver, "%v", err)
	}
	sp.rep.Launches++
	if k.TwoD {
		sp.rep.Launches2D++
	}
	sp.rep.Iterations += count
	sp.rep.KernelSeconds += st.Kernel.Seconds()
	sp.rep.CopySeconds += (st.CopyIn + st.CopyOut).Seconds()
	sp.rep.BytesIn += st.BytesIn
	sp.rep.BytesReused += st.BytesReused
	sp.rep.BytesOut += st.BytesOut
	sp.rep.BytesDeferred += st.BytesDeferred
	sp.rep.CPUSecondsEstimate += cpuPerIter * float64(count)
	// The CPU runs the last two arrivals from the header.
	tail := make([]uint64, len(steps))
	next := make([]uint64, len(steps))
	for i := range steps {
		tail[i] = states[P][i] + steps[i]*count
		next[i] = tail[i] + steps[i]
	}
	if err := sp.setLive(cpu, tail); err != nil {
		return false, fail(ReasonDriver, "writing the loop state: %v", err)
	}
	cpu.PC = sp.header
	sp.skip = next
	return true, nil
}

// ivStep is an induction variable's step as the profile gives it: fixed,
// or varying between entries of the level (a step held in a register).
type ivStep struct {
	step   int64
	varies bool
}

// checkIVs compares the observed steps of the live-in values with the
// induction variables the profile found for the mapped level (when it
// found any): a general or stack register that moves must be one of them,
// with the same step. SSE registers (vectorised index vectors) are not
// checked.
func (sp *spot) checkIVs(steps []uint64, restride *string) *fallback {
	if len(sp.ivs) == 0 {
		return nil
	}
	for i, l := range sp.kernel.LiveIns {
		if steps[i] == 0 && l.Written && !l.Stack && l.Slot <= gvinst.S15 {
			// The loop writes it, yet it did not move: an accumulator
			// that happened to add zeros, unless it is an IV of step 0.
			// (Stack slots are spared: compilers spill invariants to the
			// same slot every iteration.)
			if _, ok := sp.ivs[l.String()]; !ok {
				return fail(ReasonNotAffine, "%s is carried from iteration to iteration but did not change while probed", l)
			}
			continue
		}
		if steps[i] == 0 || (!l.Stack && l.Slot > gvinst.S15) {
			continue
		}
		want, ok := sp.ivs[l.String()]
		if !ok {
			return fail(ReasonNotAffine, "%s moves by %#x per iteration but is no induction variable of the profile", l, steps[i])
		}
		if !want.varies && steps[i] != uint64(want.step) && steps[i]&0xffffffff != uint64(want.step)&0xffffffff {
			// The same induction variable with another stride (the
			// program runs on another size than when profiled): the
			// profile's dependence proof does not cover it, so the
			// footprints must show the iterations disjoint instead.
			*restride = fmt.Sprintf("%s moves by %#x per iteration, the profile says %d", l, steps[i], want.step)
		}
	}
	return nil
}

// group is the profile's array of a site.
func (sp *spot) group(s ptxgen.Site) (int, bool) {
	kind := uint64(0)
	if s.Store {
		kind = 1
	}
	g, ok := sp.groupOf[[2]uint64{s.X86, kind}]
	return g, ok
}

// guards checks the footprints against the guest's memory map, the
// profile's arrays and the private stack slots.
func (sp *spot) guards(cpu *gvinst.CPU, sites []ptxgen.Range) *fallback {
	k := sp.kernel
	mem := sp.a.g.Mem
	for _, g := range ptxgen.Groups(k, sites) {
		if !mem.IsMapped(g.Range.Lo, g.Range.Hi-g.Range.Lo) {
			return fail(ReasonUnmapped, "[%#x,%#x)", g.Range.Lo, g.Range.Hi)
		}
		if g.Written {
			for p := g.Range.Lo &^ (gvinst.PageSize - 1); p < g.Range.Hi; p += gvinst.PageSize {
				if perm, ok := mem.PermAt(p); !ok || perm&gvinst.PermWrite == 0 {
					return fail(ReasonUnmapped, "page %#x is not writable", p)
				}
			}
		}
	}
	// Sites the profile put in different arrays must not overlap where
	// one of them writes.
	group := sp.group
	for i, si := range k.Sites {
		gi, ok := group(si)
		if !ok {
			continue
		}
		for j := i + 1; j < len(k.Sites); j++ {
			sj := k.Sites[j]
			if !si.Store && !sj.Store {
				continue
			}
			gj, ok := group(sj)
			if ok && gi != gj && sites[i].Overlaps(sites[j]) {
				return fail(ReasonAliasing, "sites at %#x and %#x", si.X86, sj.X86)
			}
		}
	}
	slot := func(l ptxgen.LiveIn) ptxgen.Range {
		lo := cpu.State[l.Base] + uint64(l.Disp)
		return ptxgen.Range{Lo: lo, Hi: lo + uint64(l.Size)}
	}
	for j, l := range k.Private {
		at := slot(l)
		for i, s := range sites {
			if s.Overlaps(at) {
				return fail(ReasonStackAlias, "%s and the site at %#x", l, k.Sites[i].X86)
			}
		}
		for _, m := range k.Private[j+1:] {
			if m.Base != l.Base && slot(m).Overlaps(at) {
				return fail(ReasonStackAlias, "%s and %s are the same memory", l, m)
			}
		}
	}
	return nil
}

// exitArrival finds the first arrival j ≥ 0 at which the loop leaves, when
// its exit compare sees a0 + da·j and b0 + db·j (wrapping 64-bit values
// compared as the test's type). It returns j, or false when the model
// gives no exit or the values would wrap in the type before it.
func exitArrival(e ptxgen.ExitTest, a0, da, b0, db uint64) (uint64, bool) {
	if e.BImm {
		b0, db = uint64(e.Imm), 0
	}
	t := e.Type
	n := t.Bits()
	val := func(v uint64) *big.Int {
		v &= t.Mask()
		if t.IsSigned() && n < 64 && v>>(n-1)&1 != 0 {
			return big.NewInt(int64(v) - int64(1)<<n)
		}
		if t.IsSigned() && n == 64 {
			return big.NewInt(int64(v))
		}
		return new(big.Int).SetUint64(v)
	}
	dlt := func(d uint64) *big.Int {
		// A change per iteration, as a signed number of t's width.
		d &= t.Mask()
		if n < 64 && d>>(n-1)&1 != 0 {
			return big.NewInt(int64(d) - int64(1)<<n)
		}
		return big.NewInt(int64(d))
	}
	A, dA, B, dB := val(a0), dlt(da), val(b0), dlt(db)
	D := new(big.Int).Sub(A, B)
	dD := new(big.Int).Sub(dA, dB)
	cont := func(j uint64) bool {
		a := a0 + da*j
		b := b0 + db*j
		if e.BImm {
			b = uint64(e.Imm)
		}
		return e.EvalExit(a, b)
	}
	var j uint64
	switch {
	case !cont(0):
		return 0, true
	case dD.Sign() == 0:
		return 0, false
	default:
		// Candidate: where D + dD·j crosses zero.
		negD := new(big.Int).Neg(D)
		q, r := new(big.Int).QuoRem(negD, dD, new(big.Int))
		if q.Sign() < 0 {
			return 0, false
		}
		if !q.IsUint64() || q.Uint64() > 1<<40 {
			return 0, false
		}
		j = q.Uint64()
		_ = r
		// Step from a little before the crossing to the first exit.
		if j > 2 {
			j -= 2
		} else {
			j = 0
		}
		for tries := 0; cont(j); tries++ {
			if tries > 8 {
				return 0, false
			}
			j++
		}
	}
	// The model must not wrap in t between 0 and j.
	lo, hi := new(big.Int), new(big.Int)
	if t.IsSigned() {
		lo.Neg(new(big.Int).Lsh(big.NewInt(1), uint(n-1)))
		hi.Lsh(big.NewInt(1), uint(n-1))
	} else {
		hi.Lsh(big.NewInt(1), uint(n))
	}
	J := new(big.Int).SetUint64(j)
	for _, v := range []*big.Int{A, B} {
		_ = v
	}
	endA := new(big.Int).Add(A, new(big.Int).Mul(dA, J))
	endB := new(big.Int).Add(B, new(big.Int).Mul(dB, J))
	for _, v := range []*big.Int{endA, endB} {
		if v.Cmp(lo) < 0 || v.Cmp(hi) >= 0 {
			return 0, false
		}
	}
	for i := uint64(1); i < j && i < 4; i++ {
		if !cont(j - i) {
			return 0, false
		}
	}
	return j, true
}

// FormatReport writes the report as text for people.
func FormatReport(r *AccelReport) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "device: %s\n", r.Device)
	for _, h := range r.HotSpots {
		fmt.Fprintf(&sb, "hot spot %s (%s), level header %s: ", h.Entry, h.Function, h.Header)
		if !h.Offloadable {
			fmt.Fprintf(&sb, "not offloadable: %s\n", h.Reason)
			continue
		}
		fmt.Fprintf(&sb, "%d launches (%d 2D), %d GPU iterations, %d fallbacks", h.Launches, h.Launches2D, h.Iterations, h.Fallbacks)
		var rs []string
		for k, v := range h.FallbackReasons {
			rs = append(rs, fmt.Sprintf("%s: %d", k, v))
		}
		sort.Strings(rs)
		if len(rs) > 0 {
			fmt.Fprintf(&sb, " (%s)", strings.Join(rs, ", "))
		}
		fmt.Fprintf(&sb, "; kernel %.3fs, copies %.3fs, CPU estimate %.3fs", h.KernelSeconds, h.CopySeconds, h.CPUSecondsEstimate)
		if h.Note != "" {
			fmt.Fprintf(&sb, "; %s", h.Note)
		}
		sb.WriteString("\n")
	}
	if r.BytesBroughtBack > 0 {
		fmt.Fprintf(&sb, "written bytes left on the device and brought back when read: %d in %.3fs\n", r.BytesBroughtBack, r.BroughtBackSeconds)
	}
	fmt.Fprintf(&sb, "wall %.3fs, %d guest instructions\n", r.WallSeconds, r.GuestInstructions)
	return sb.String()
}

// siteObs is what the probed iterations 0 and 1 saw of one x86 access
// (all its copies): whether it ran, and the bytes it touched.
type siteObs struct {
	seen   [2]bool
	lo, hi [2]uint64
}

// disjointIterations proves, from what the probed iterations touched, that
// distinct iterations of the mapped level touch disjoint bytes of every
// array they write: the sites of each written array move by one common
// stride d per iteration, and d is at least the width of the window the
// array's sites cover in one iteration, so the window of iteration t,
// [L+d·t, H+d·t), meets no other's. It returns "" when that holds, or what
// failed. Arrays are the profile's groups (an access without a group is
// its own array).
func (sp *spot) disjointIterations(byX86 map[[2]uint64]*siteObs) string {
	type window struct {
		written bool
		stride  int64
		set     bool
		lo, hi  uint64
		bad     string
	}
	arrays := map[int]*window{}
	for i, site := range sp.kernel.Sites {
		key := [2]uint64{site.X86, 0}
		if site.Store {
			key[1] = 1
		}
		o := byX86[key]
		g, ok := sp.group(site)
		if !ok {
			g = -1 - i
		}
		w := arrays[g]
		if w == nil {
			w = &window{}
			arrays[g] = w
		}
		w.written = w.written || site.Store
		if o == nil || !o.seen[0] || !o.seen[1] {
			w.bad = fmt.Sprintf("the access at %#x did not run in both probed iterations", site.X86)
			continue
		}
		d := int64(o.lo[1] - o.lo[0])
		if int64(o.hi[1]-o.hi[0]) != d || (w.set && d != w.stride) {
			w.bad = fmt.Sprintf("the accesses to one array move by different strides (%#x at %#x)", d, site.X86)
			continue
		}
		if !w.set {
			w.stride, w.lo, w.hi, w.set = d, o.lo[0], o.hi[0], true
		}
		w.lo, w.hi = min(w.lo, o.lo[0]), max(w.hi, o.hi[0])
	}
	for _, w := range arrays {
		if !w.written {
			continue
		}
		if w.bad != "" {
			return w.bad
		}
		d := w.stride
		if d < 0 {
			d = -d
		}
		if d == 0 || uint64(d) < w.hi-w.lo {
			return fmt.Sprintf("a written array's window of %d bytes per iteration overlaps the next (stride %d)", w.hi-w.lo, w.stride)
		}
	}
	return ""
}
