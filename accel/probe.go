package accel

import (
	"cmp"
	"fmt"
	"math/big"
	"slices"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptxgen"
)

// probeRecord is what one probed iteration saw.
type probeRecord struct {
	lo, hi     []uint64   // per site; lo > hi when not seen
	spans      []spanList // per site: the bytes it touched
	fill       []bool     // per site: a rep stos (probed at its two ends)
	a, b       uint64
	exitSeen   int
	accesses   uint64 // the site accesses recorded
	siteSeen   []bool
	numSites   int
	exitSiteA  uint32
	exitSiteB  uint32
	firstSites uint32
	// watch are the schedule's inner-level records, fed every site access.
	watch []*innerWatch
	// cur is where the accesses go, per channel (see channels): the
	// current iteration of the innermost inner loop instance a bounded
	// row records (bounded.go), or the row's own records; nil while
	// nothing records.
	cur [][]spanList
}

func (r *probeRecord) reset(n int) {
	r.lo = make([]uint64, n)
	r.hi = make([]uint64, n)
	r.siteSeen = make([]bool, n)
	r.spans = make([]spanList, n)
	for i := range r.spans {
		r.spans[i].fill = i < len(r.fill) && r.fill[i]
	}
	r.exitSeen = 0
	r.accesses = 0
	r.cur = r.channels()
}

// channels are the per-site span lists an access may go to: channel 0 is
// the row's own, then two per watch (its inner iterations 0 and 1).
func (r *probeRecord) channels() [][]spanList {
	out := [][]spanList{r.spans}
	for _, w := range r.watch {
		for j := range w.recs {
			if len(w.recs[j].spans) < len(r.spans) {
				w.recs[j].reset(len(r.spans))
			}
			out = append(out, w.recs[j].spans)
		}
	}
	return out
}

func (r *probeRecord) probe(site uint32, addr uint64, size int) {
	switch {
	case site == r.exitSiteA:
		r.a = addr
		r.exitSeen++
	case site == r.exitSiteB:
		r.b = addr
	case int(site) < len(r.lo) && r.cur != nil:
		r.accesses++
		end := addr + uint64(size)
		r.cur[0][site].add(addr, end)
		for wi, w := range r.watch {
			for j := range w.recs {
				if w.wants(j) {
					r.cur[1+2*wi+j][site].add(addr, end)
				}
			}
		}
	}
}

// finish sets the per-site ranges from the spans the row touched.
func (r *probeRecord) finish() {
	for s := range r.spans {
		l := &r.spans[s]
		r.siteSeen[s] = l.seen
		r.lo[s], r.hi[s] = l.window.Lo, l.window.Hi
	}
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
	sites, copyFrom := map[int]int{}, map[int]int{}
	for _, s := range k.Sites {
		if s.Block == addr {
			if s.Index < len(b.Insts) && b.Insts[s.Index].Op == gvinst.OpRepMovs && !s.Store {
				copyFrom[s.Index] = s.ID // rep movs: its load site
			} else {
				sites[s.Index] = s.ID
			}
		}
	}
	out := *b
	out.Insts = make([]gvinst.Inst, 0, len(b.Insts)+len(sites)+2)
	fresh := b.NumVRegs()
	for i := range b.Insts {
		in := &b.Insts[i]
		if id, ok := sites[i]; ok && (in.Op == gvinst.OpRepStos || in.Op == gvinst.OpRepMovs) {
			// rep stos and rep movs: the first and last element of each
			// run, at rdi (and rsi) and rdi + (rcx-1)*size.
			size := int64(in.Type.Size())
			run := func(slot gvinst.Reg, id int) {
				base := fresh
				fresh += 5
				v := func(n int) gvinst.Reg { return gvinst.VReg(base + n) }
				probe := func(r gvinst.Reg) gvinst.Inst {
					return gvinst.Inst{Op: gvinst.OpProbe, Type: in.Type, Src: [4]gvinst.Reg{r}, Target: [2]uint64{uint64(id)}, X86: in.X86}
				}
				out.Insts = append(out.Insts,
					gvinst.Inst{Op: gvinst.OpGet, Type: gvinst.U64, Dst: v(0), Src: [4]gvinst.Reg{slot}, X86: in.X86},
					probe(v(0)),
					gvinst.Inst{Op: gvinst.OpGet, Type: gvinst.U64, Dst: v(1), Src: [4]gvinst.Reg{gvinst.SReg(1)}, X86: in.X86},
					gvinst.Inst{Op: gvinst.OpSub, Type: gvinst.U64, Dst: v(2), Src: [4]gvinst.Reg{v(1)}, HasImm: true, Imm: 1, X86: in.X86},
					gvinst.Inst{Op: gvinst.OpMul, Type: gvinst.U64, Dst: v(3), Src: [4]gvinst.Reg{v(2)}, HasImm: true, Imm: size, X86: in.X86},
					gvinst.Inst{Op: gvinst.OpAdd, Type: gvinst.U64, Dst: v(4), Src: [4]gvinst.Reg{v(0), v(3)}, X86: in.X86},
					probe(v(4)))
			}
			if from, ok := copyFrom[i]; ok {
				run(gvinst.SReg(6), from)
			}
			run(gvinst.SReg(7), id)
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
	reloaded := reloadIndex(sp.kernel.LiveIns, sp.kernel.Reloads, 0)
	for i, l := range sp.kernel.LiveIns {
		if _, ok := reloaded[i]; ok {
			continue // each thread loads it (see reload.go)
		}
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

// modelStep is the step of a site's profile access function along the
// mapped level; ok is false where the profile fitted none (or several).
type modelStep struct {
	step int64
	ok   bool
}

// checkStrides compares how far each access moved from the first probed
// iteration to the second (byX86: the bytes each touched) with the step
// its profile access function takes along the mapped level. Where the
// induction variables moved as the profile says (restride still empty)
// and an access's bytes moved as a whole (its window as wide in both
// iterations) by another step, the profile's model is not this run's: a
// fit from too few samples, or a hand edit. Its dependence proof then
// does not cover the launch, and restride is set, so that the footprints
// must show the iterations disjoint (as for a profile of another size).
func (sp *spot) checkStrides(byX86 map[[2]uint64]*siteObs, restride *string) {
	if *restride != "" {
		return
	}
	keys := make([][2]uint64, 0, len(byX86))
	for k := range byX86 {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]uint64) int {
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		return cmp.Compare(a[1], b[1])
	})
	// The union of the windows of an array's accesses that share its
	// step in the profile, per iteration: the two sides of an if that
	// store to one row (fcond: b[i][j] = x > 5 ? ... : ...) each cover
	// the elements that took their side, and each window moves by what
	// they happened to be (31984 bytes, for rows of 32000); the row's
	// window moves by the row.
	type union struct {
		lo, hi [2]uint64
		n      int
	}
	unions := map[[2]int64]*union{}
	for _, key := range keys {
		o, ms := byX86[key], sp.modelStep[key]
		g, ok := sp.groupOf[key]
		if !ms.ok || !ok || !o.seen[0] || !o.seen[1] {
			continue
		}
		u := unions[[2]int64{int64(g), ms.step}]
		if u == nil {
			u = &union{lo: o.lo, hi: o.hi}
			unions[[2]int64{int64(g), ms.step}] = u
		}
		u.n++
		for it := 0; it < 2; it++ {
			u.lo[it], u.hi[it] = min(u.lo[it], o.lo[it]), max(u.hi[it], o.hi[it])
		}
	}
	for _, key := range keys {
		o, ms := byX86[key], sp.modelStep[key]
		if !ms.ok || !o.seen[0] || !o.seen[1] || o.hi[0]-o.lo[0] != o.hi[1]-o.lo[1] {
			continue
		}
		d := int64(o.lo[1] - o.lo[0])
		if d == ms.step {
			continue
		}
		if g, ok := sp.groupOf[key]; ok {
			if u := unions[[2]int64{int64(g), ms.step}]; u.n > 1 && u.hi[0]-u.lo[0] == u.hi[1]-u.lo[1] && int64(u.lo[1]-u.lo[0]) == ms.step {
				continue
			}
		}
		*restride = fmt.Sprintf("the access at %#x moves by %d bytes per iteration, the profile says %d", key[0], d, ms.step)
		return
	}
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
