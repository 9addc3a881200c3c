package gpusim

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/ptx"
)

// memSpace is a resolved state space of a memory operand.
type memSpace uint8

const (
	msGeneric memSpace = iota
	msGlobal
	msShared
	msLocal
	msConst
	msKParam
)

var memSpaceNames = [...]string{"generic", "global", "shared", "local", "const", "param"}

// String names the space as PTX spells it.
func (s memSpace) String() string { return memSpaceNames[s] }

// Generic-address windows. Global allocations live below windowBase, so a
// generic address is classified by comparing it with the window bounds.
const (
	windowBase   = uint64(1) << 48
	sharedWindow = windowBase
	localWindow  = windowBase + 1<<32
	constWindow  = windowBase + 2<<32
	paramWindow  = windowBase + 3<<32 // kernel parameters (cvta.param)
	windowEnd    = windowBase + 4<<32
)

// instKind says how the execution loop treats an instruction.
type instKind uint8

const (
	kALU  instKind = iota // runs fn over the active lanes
	kBra                  // branch to target
	kExit                 // the active lanes finish
	kBar                  // CTA barrier
	kNop                  // counted, no effect (membar, fence, prefetch)
)

// handler executes one instruction for the lanes in mask m.
type handler func(w *warp, in *inst, m uint32)

// inst is one decoded instruction: operands are resolved register indices,
// immediates live in constant registers, labels are program counters.
type inst struct {
	fn     handler
	kind   instKind
	gneg   bool
	guard  int32 // predicate index, or -1
	d, a   int32 // value register indices (or predicate indices, see handler)
	b, c   int32
	e      int32
	pd, pq int32 // destination predicates
	pc     int32 // source predicate of setp/selp/vote
	pcNeg  bool
	typ    ptx.Type
	t2     ptx.Type
	rnd    uint8
	ftz    bool
	sat    bool
	mode   uint8
	space  memSpace
	size   uint8 // bytes per element of a memory access
	signed bool
	base   int32 // address base register, or -1
	off    int64
	imm    uint64  // immediate source operand of specialised handlers (opAddImm32, ...)
	vec    []int32 // vector element registers
	target int32
	rpc    int32 // reconvergence pc of a branch
	run    int32 // length of the straight-line run starting here (see straightRuns)
	cmp    uint8 // comparison truth table of setp/set
	cmpFn  func(w *warp, in *inst, m uint32) uint32
	f2     func(a, b uint64) uint64
	f3     func(a, b, c uint64) uint64
	line   int32
	idx    int32  // position in the program (index of per-instruction caches)
	text   string // opcode with modifiers, for error messages
}

// Rounding modes as decoded.
const (
	rndNone uint8 = iota
	rndRN
	rndRZ
	rndRM
	rndRP
	rndRNI
	rndRZI
	rndRMI
	rndRPI
)

func decodeRound(s string) uint8 {
	switch s {
	case "rn", "rna":
		return rndRN
	case "rz":
		return rndRZ
	case "rm":
		return rndRM
	case "rp":
		return rndRP
	case "rni":
		return rndRNI
	case "rzi":
		return rndRZI
	case "rmi":
		return rndRMI
	case "rpi":
		return rndRPI
	}
	return rndNone
}

// sregKind identifies a special register filled in when a warp starts.
type sregKind uint8

const (
	srTidX sregKind = iota
	srTidY
	srTidZ
	srNtidX
	srNtidY
	srNtidZ
	srCtaidX
	srCtaidY
	srCtaidZ
	srNctaidX
	srNctaidY
	srNctaidZ
	srLaneid
	srWarpid
	srNwarpid
	srSmid
	srNsmid
	srGridid
	srLanemaskEq
	srLanemaskLt
	srLanemaskLe
	srLanemaskGt
	srLanemaskGe
	srDynSmem
	srTotalSmem
)

var sregKinds = map[string]sregKind{
	"%tid.x": srTidX, "%tid.y": srTidY, "%tid.z": srTidZ,
	"%ntid.x": srNtidX, "%ntid.y": srNtidY, "%ntid.z": srNtidZ,
	"%ctaid.x": srCtaidX, "%ctaid.y": srCtaidY, "%ctaid.z": srCtaidZ,
	"%nctaid.x": srNctaidX, "%nctaid.y": srNctaidY, "%nctaid.z": srNctaidZ,
	"%laneid": srLaneid, "%warpid": srWarpid, "%nwarpid": srNwarpid,
	"%smid": srSmid, "%nsmid": srNsmid, "%gridid": srGridid,
	"%lanemask_eq": srLanemaskEq, "%lanemask_lt": srLanemaskLt, "%lanemask_le": srLanemaskLe,
	"%lanemask_gt": srLanemaskGt, "%lanemask_ge": srLanemaskGe,
	"%dynamic_smem_size": srDynSmem, "%total_smem_size": srTotalSmem,
}

// dynamic special registers read by a dedicated handler.
var dynSregs = map[string]uint8{"%clock": 0, "%clock64": 1, "%globaltimer": 2, "%globaltimer_lo": 3, "%globaltimer_hi": 4}

type constInit struct {
	reg int32
	val uint64
}

type sregInit struct {
	reg  int32
	kind sregKind
}

// kernel is the executable form of one .entry.
type kernel struct {
	name         string
	params       []gpu.Param
	paramOffs    []int
	paramSize    int
	prog         []inst
	nregs        int
	npreds       int
	consts       []constInit
	sregs        []sregInit
	sharedStatic int
	localSize    int
	mod          *module
	// varRegs are the ranges of ordinary registers: all but the constant
	// and special registers, which no instruction writes.
	varRegs []regRange
	// ctas are the workers' block states, kept between launches.
	ctas []*cta
}

// regRange is the register indices [lo, hi).
type regRange struct{ lo, hi int }

// findVarRegs sets k.varRegs.
func (k *kernel) findVarRegs() {
	fixed := make([]bool, k.nregs)
	for _, c := range k.consts {
		fixed[c.reg] = true
	}
	for _, s := range k.sregs {
		fixed[s.reg] = true
	}
	for r := 0; r < k.nregs; {
		if fixed[r] {
			r++
			continue
		}
		lo := r
		for r < k.nregs && !fixed[r] {
			r++
		}
		k.varRegs = append(k.varRegs, regRange{lo, r})
	}
}

// symRef is a resolved variable or parameter: its space and address there.
type symRef struct {
	space memSpace
	addr  uint64
}

type regSlot struct {
	idx  int32
	pred bool
	typ  ptx.Type
}

type dframe struct {
	regs   map[string]regSlot
	ranges []*ptx.RegDecl
	vars   map[string]symRef
}

// fnInstance is one inlined copy of a function body.
type fnInstance struct {
	f        *ptx.Func
	kernel   bool
	frames   []*dframe
	labels   map[string]int32
	fixups   []labelFixup
	retFix   []int32
	params   map[string]symRef  // .param formals, aliased to the caller's variables
	regForms map[string]regSlot // .reg formals and returns
}

type labelFixup struct {
	pc    int32
	label string
	pos   ptx.Pos
}

type decoder struct {
	m          *ptx.Module
	k          *kernel
	consts     map[uint64]int32
	sregs      map[sregKind]int32
	modSyms    map[string]symRef // module-scope variables
	kparams    map[string]symRef
	stack      []*ptx.Func
	sink       int32
	sinkPred   int32
	pending    []int32 // kBra pcs needing rpc
	sharedNext uint64
	dynRegs    map[int64]int32 // offset from the dynamic shared base → register
}

// dynReg returns a register that will hold the dynamic shared base plus off.
func (d *decoder) dynReg(off int64) int32 {
	if r, ok := d.dynRegs[off]; ok {
		return r
	}
	r := d.newReg()
	d.dynRegs[off] = r
	return r
}

func decodeErr(p ptx.Pos, format string, args ...any) error {
	return &ptx.Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

// unsupportedError is valid PTX that the simulator does not implement.
type unsupportedError struct{ err *ptx.Error }

func (e *unsupportedError) Error() string { return e.err.Error() }

func (e *unsupportedError) Unwrap() error { return e.err }

func unsupported(p ptx.Pos, format string, args ...any) error {
	return &unsupportedError{&ptx.Error{Pos: p, Msg: fmt.Sprintf(format, args...)}}
}

func alignUp(x, a uint64) uint64 {
	if a <= 1 {
		return x
	}
	return (x + a - 1) / a * a
}

// decodeKernel builds the executable form of entry f. modSyms holds the
// addresses of module-scope variables (global, const, shared).
func decodeKernel(m *ptx.Module, f *ptx.Func, modSyms map[string]symRef, sharedStatic uint64, mod *module) (*kernel, error) {
	d := &decoder{
		m: m, k: &kernel{name: f.Name, mod: mod},
		consts: map[uint64]int32{}, sregs: map[sregKind]int32{},
		modSyms: modSyms, kparams: map[string]symRef{},
		sharedNext: sharedStatic, dynRegs: map[int64]int32{},
	}
	off := 0
	for _, p := range f.Params {
		al := p.Alignment()
		off = int(alignUp(uint64(off), uint64(al)))
		d.k.params = append(d.k.params, gpu.Param{Name: p.Name, Size: p.Size(), Align: al})
		d.k.paramOffs = append(d.k.paramOffs, off)
		d.kparams[p.Name] = symRef{space: msKParam, addr: uint64(off)}
		off += p.Size()
	}
	d.k.paramSize = off
	d.sink = d.newReg()
	d.sinkPred = d.newPred()
	fi := &fnInstance{f: f, kernel: true, labels: map[string]int32{}}
	if err := d.body(fi, f.Body); err != nil {
		return nil, err
	}
	d.emit(&inst{kind: kExit, line: int32(f.Pos.Line), text: "exit"}, f.Pos, -1, false)
	d.k.sharedStatic = int(alignUp(d.sharedNext, 16))
	for off, r := range d.dynRegs {
		d.k.consts = append(d.k.consts, constInit{r, uint64(d.k.sharedStatic) + uint64(off)})
	}
	if err := d.reconvergence(); err != nil {
		return nil, err
	}
	d.straightRuns()
	d.k.findVarRegs()
	return d.k, nil
}

func ptxPos(in *inst) ptx.Pos { return ptx.Pos{Line: int(in.line), Col: 1} }

func (d *decoder) newReg() int32 {
	d.k.nregs++
	return int32(d.k.nregs - 1)
}

func (d *decoder) newPred() int32 {
	d.k.npreds++
	return int32(d.k.npreds - 1)
}

func (d *decoder) constReg(v uint64) int32 {
	if r, ok := d.consts[v]; ok {
		return r
	}
	r := d.newReg()
	d.consts[v] = r
	d.k.consts = append(d.k.consts, constInit{r, v})
	return r
}

func (d *decoder) sreg(k sregKind) int32 {
	if r, ok := d.sregs[k]; ok {
		return r
	}
	r := d.newReg()
	d.sregs[k] = r
	d.k.sregs = append(d.k.sregs, sregInit{r, k})
	return r
}

func (d *decoder) emit(in *inst, p ptx.Pos, guard int32, gneg bool) int32 {
	in.guard, in.gneg = guard, gneg
	if in.line == 0 {
		in.line = int32(p.Line)
	}
	in.idx = int32(len(d.k.prog))
	d.k.prog = append(d.k.prog, *in)
	return int32(len(d.k.prog) - 1)
}

func (d *decoder) body(fi *fnInstance, b *ptx.Block) error {
	fr := &dframe{regs: map[string]regSlot{}, vars: map[string]symRef{}}
	for _, st := range b.Stmts {
		switch x := st.(type) {
		case *ptx.RegDecl:
			if x.Vec > 0 {
				return unsupported(x.Pos, "vector registers are not supported")
			}
			if x.Count > 0 {
				fr.ranges = append(fr.ranges, x)
			} else {
				fr.regs[x.Name] = d.allocReg(x.Type)
			}
		case *ptx.Var:
			ref, err := d.allocVar(x, fi)
			if err != nil {
				return err
			}
			fr.vars[x.Name] = ref
		}
	}
	fi.frames = append(fi.frames, fr)
	defer func() { fi.frames = fi.frames[:len(fi.frames)-1] }()
	for _, st := range b.Stmts {
		switch x := st.(type) {
		case *ptx.Block:
			if err := d.body(fi, x); err != nil {
				return err
			}
		case *ptx.Label:
			fi.labels[x.Name] = int32(len(d.k.prog))
		case *ptx.Inst:
			if err := d.inst(fi, x); err != nil {
				return err
			}
		}
	}
	if len(fi.frames) == 1 {
		for _, fx := range fi.fixups {
			pc, ok := fi.labels[fx.label]
			if !ok {
				return decodeErr(fx.pos, "label %s is not defined in %s", fx.label, fi.f.Name)
			}
			d.k.prog[fx.pc].target = pc
		}
	}
	return nil
}

func (d *decoder) allocReg(t ptx.Type) regSlot {
	if t == ptx.Pred {
		return regSlot{idx: d.newPred(), pred: true, typ: t}
	}
	return regSlot{idx: d.newReg(), typ: t}
}

func (d *decoder) allocVar(v *ptx.Var, fi *fnInstance) (symRef, error) {
	al := uint64(v.Alignment())
	size := uint64(v.Size())
	switch v.Space {
	case ptx.SpaceShared:
		if v.Linkage == "extern" {
			return symRef{space: msShared, addr: dynSharedMarker}, nil
		}
		a := alignUp(d.sharedNext, al)
		d.sharedNext = a + size
		return symRef{space: msShared, addr: a}, nil
	case ptx.SpaceLocal, ptx.SpaceParam:
		if len(v.Init) > 0 {
			return symRef{}, unsupported(v.Pos, "initialized .%s variables are not supported", v.Space)
		}
		a := alignUp(uint64(d.k.localSize), al)
		d.k.localSize = int(a + size)
		return symRef{space: msLocal, addr: a}, nil
	case ptx.SpaceGlobal, ptx.SpaceConst:
		if ref, ok := d.modSyms[fi.f.Name+"::"+v.Name]; ok {
			return ref, nil
		}
		return symRef{}, unsupported(v.Pos, "function-scope .%s variable %s is not supported", v.Space, v.Name)
	}
	return symRef{}, unsupported(v.Pos, "variable %s in .%s is not supported", v.Name, v.Space)
}

// dynSharedMarker stands for the address of extern (dynamic) shared memory,
// which follows all static shared variables; it is fixed up after decoding.
const dynSharedMarker = ^uint64(0) >> 1

func (d *decoder) lookupReg(fi *fnInstance, name string) (regSlot, bool) {
	for i := len(fi.frames) - 1; i >= 0; i-- {
		fr := fi.frames[i]
		if s, ok := fr.regs[name]; ok {
			return s, true
		}
		for _, r := range fr.ranges {
			if rest, ok := strings.CutPrefix(name, r.Name); ok && rest != "" {
				n, err := strconv.Atoi(rest)
				if err == nil && n >= 0 && n < r.Count && (rest == "0" || rest[0] != '0') {
					s := d.allocReg(r.Type)
					fr.regs[name] = s
					return s, true
				}
			}
		}
	}
	if s, ok := fi.regForms[name]; ok {
		return s, true
	}
	return regSlot{}, false
}

func (d *decoder) lookupSym(fi *fnInstance, name string) (symRef, bool) {
	for i := len(fi.frames) - 1; i >= 0; i-- {
		if r, ok := fi.frames[i].vars[name]; ok {
			return r, true
		}
	}
	if fi.kernel {
		if r, ok := d.kparams[name]; ok {
			return r, true
		}
	} else if r, ok := fi.params[name]; ok {
		return r, true
	}
	r, ok := d.modSyms[name]
	return r, ok
}

// src resolves a source operand to a register index; immediates become
// constant registers holding the value in the representation of type t.
func (d *decoder) src(fi *fnInstance, o ptx.Operand, t ptx.Type) (int32, error) {
	switch o.Kind {
	case ptx.OpReg, ptx.OpSym:
		if s, ok := d.lookupReg(fi, o.Name); ok {
			if s.pred {
				return 0, decodeErr(o.Pos, "predicate %s used as a value", o.Name)
			}
			return s.idx, nil
		}
		if k, ok := sregKinds[o.Name]; ok {
			return d.sreg(k), nil
		}
		if _, ok := dynSregs[o.Name]; ok {
			return 0, decodeErr(o.Pos, "%s can only be read by mov", o.Name)
		}
		if r, ok := d.lookupSym(fi, o.Name); ok {
			addr := r.addr + uint64(o.Int)
			if r.addr == dynSharedMarker {
				return d.dynReg(o.Int), nil
			}
			return d.constReg(addr), nil
		}
		return 0, decodeErr(o.Pos, "%s is not declared", o.Name)
	case ptx.OpInt:
		v := uint64(o.Int)
		switch t {
		case ptx.F32:
			v = uint64(math.Float32bits(float32(o.Int)))
		case ptx.F64:
			v = math.Float64bits(float64(o.Int))
		}
		return d.constReg(v), nil
	case ptx.OpFloat:
		var v uint64
		switch {
		case t == ptx.F64 && o.FloatSize == 8:
			v = o.FloatBits
		case t == ptx.F64:
			v = math.Float64bits(o.Float)
		case o.FloatSize == 4 && (t == ptx.F32 || t.Size() == 4):
			v = o.FloatBits
		case t == ptx.F32 || t.Size() == 4:
			v = uint64(math.Float32bits(float32(o.Float)))
		case o.FloatSize == 8 && t.Size() == 8:
			v = o.FloatBits
		default:
			return 0, decodeErr(o.Pos, "floating-point immediate for .%s operand", t)
		}
		return d.constReg(v), nil
	case ptx.OpSink:
		return d.sink, nil
	}
	return 0, decodeErr(o.Pos, "unexpected operand %s", o.String())
}

func (d *decoder) dst(fi *fnInstance, o ptx.Operand) (int32, error) {
	if o.Kind == ptx.OpSink {
		return d.sink, nil
	}
	if o.Kind == ptx.OpReg || o.Kind == ptx.OpSym {
		if s, ok := d.lookupReg(fi, o.Name); ok && !s.pred {
			return s.idx, nil
		}
	}
	return 0, decodeErr(o.Pos, "destination %s is not a declared value register", o.String())
}

func (d *decoder) pred(fi *fnInstance, name string, p ptx.Pos) (int32, error) {
	if name == "_" {
		return d.sinkPred, nil
	}
	if s, ok := d.lookupReg(fi, name); ok && s.pred {
		return s.idx, nil
	}
	return 0, decodeErr(p, "%s is not a declared predicate", name)
}

// addr resolves a memory operand to base register, offset and space.
func (d *decoder) addr(fi *fnInstance, o ptx.Operand, sp ptx.Space) (int32, int64, memSpace, error) {
	if o.Kind != ptx.OpAddr {
		return 0, 0, 0, decodeErr(o.Pos, "expected an address operand, found %s", o.String())
	}
	space := map[ptx.Space]memSpace{ptx.SpaceGeneric: msGeneric, ptx.SpaceGlobal: msGlobal, ptx.SpaceShared: msShared,
		ptx.SpaceLocal: msLocal, ptx.SpaceConst: msConst, ptx.SpaceParam: msKParam}[sp]
	if o.Name == "" {
		return -1, o.Int, space, nil
	}
	if s, ok := d.lookupReg(fi, o.Name); ok && !s.pred {
		if sp == ptx.SpaceParam && !fi.kernel {
			space = msLocal
		}
		return s.idx, o.Int, space, nil
	}
	r, ok := d.lookupSym(fi, o.Name)
	if !ok {
		return 0, 0, 0, decodeErr(o.Pos, "%s in address is not declared", o.Name)
	}
	if r.addr == dynSharedMarker {
		// The base of dynamic shared memory is known once the static layout
		// is complete: use a constant register patched after decoding.
		return d.dynReg(0), o.Int, msShared, nil
	}
	return -1, int64(r.addr) + o.Int, r.space, nil
}
