package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// FormatVersion is the version of the profile file format this package
// writes. Readers reject other versions (see SCHEMA.md for the changes
// between versions).
const FormatVersion = 2

// ErrVersion is wrapped by Read's error for a file of another format
// version.
var ErrVersion = errors.New("profile: unsupported format version")

// Hex is a guest address or other 64-bit value, written in JSON as a
// "0x…" string so that readers in any language keep all 64 bits.
type Hex uint64

// MarshalJSON writes h as "0x…".
func (h Hex) MarshalJSON() ([]byte, error) {
	return []byte(`"0x` + strconv.FormatUint(uint64(h), 16) + `"`), nil
}

// UnmarshalJSON reads "0x…" (or a decimal string or number).
func (h *Hex) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return fmt.Errorf("profile: bad address %s: %w", b, err)
	}
	*h = Hex(v)
	return nil
}

// String formats h as "0x…".
func (h Hex) String() string { return "0x" + strconv.FormatUint(uint64(h), 16) }

// File is a profile: what one profiled run of a program found. It is
// written as JSON; SCHEMA.md documents every field.
type File struct {
	Version int    `json:"version"`
	Program string `json:"program"` // the program's host path
	// ProgramSHA256 is the hex SHA-256 of the program file, so that a
	// profile is never applied to another program ("" in older files).
	ProgramSHA256 string   `json:"program_sha256,omitempty"`
	Args          []string `json:"args"` // argv, argv[0] included
	// LoadBias is the main program's load bias (0 for ET_EXEC). All
	// addresses are run-time guest addresses; gxbit's loader places a PIE
	// at the same base every run.
	LoadBias Hex `json:"load_bias"`
	// GuestInstructions is the number of guest instructions the run
	// executed; hotness shares are fractions of it.
	GuestInstructions uint64 `json:"guest_instructions"`
	// Functions is the number of functions the static analyzer recovered.
	Functions int `json:"functions"`
	// Loops lists every loop nest found, hot or not (the --report view).
	Loops []LoopSummary `json:"loops"`
	// HotSpots are the nests that ran and were analysed, hottest first.
	HotSpots []HotSpot `json:"hot_spots"`
}

// The nest and level verdicts.
const (
	VerdictParallel   = "parallel"
	VerdictReduction  = "reduction"
	VerdictSequential = "sequential"
	VerdictRejected   = "rejected"
)

// LoopSummary is one loop nest in the report: where it is, what was
// decided, and how hot it was.
type LoopSummary struct {
	Entry          Hex      `json:"entry"` // the outermost loop's header
	Function       string   `json:"function"`
	Depth          int      `json:"depth"`
	Verdict        string   `json:"verdict"` // parallel|sequential|reduction|rejected
	ParallelLevels []int    `json:"parallel_levels"`
	Reason         string   `json:"reason"`
	Share          float64  `json:"share"`    // fraction of the run's guest instructions spent in the nest
	HotSpot        int      `json:"hot_spot"` // index into File.HotSpots, -1 when the nest is not one
	Levels         []string `json:"levels"`   // per level, outermost first: its verdict
}

// HotSpot is one analysed loop nest: everything phase 2 needs to run it on
// the GPU.
type HotSpot struct {
	ID       int    `json:"id"`
	Function string `json:"function"`
	// Entry is the outermost loop's header address: phase 2's breakpoint.
	// The engine may stop there at any iteration of the outermost loop (a
	// header reached by fall-through from its preheader does not start a
	// VBlock); every expression below that names entry-state values can be
	// evaluated at any visit of the header.
	Entry Hex   `json:"entry"`
	Exits []Hex `json:"exits"` // where control goes when the nest ends
	Depth int   `json:"depth"`
	// Verdict: parallel when some level is parallel; reduction when the
	// best level is a reduction; sequential; rejected when the nest could
	// not be analysed (Reason says why).
	Verdict        string  `json:"verdict"`
	ParallelLevels []int   `json:"parallel_levels"` // levels (0 = outermost) that are parallel
	Reason         string  `json:"reason"`
	Share          float64 `json:"share"`        // fraction of the run's guest instructions
	Instructions   uint64  `json:"instructions"` // guest instructions executed in the nest
	Entries        uint64  `json:"entries"`      // times the nest was entered from outside
	Levels         []Level `json:"levels"`
	// LiveIn are the guest slots (s0…s15, x0…x15, flags) read in the nest
	// before being written, at the outermost header; LiveOut those live at
	// the exits.
	LiveIn  []string `json:"live_in"`
	LiveOut []string `json:"live_out"`
	// InnerLoops are the loops below the last level (an imperfect nest:
	// sibling loops and the code around them), in pre-order: each inner
	// loop comes after the loop that encloses it.
	InnerLoops []InnerLoop `json:"inner_loops"`
	Vars       []Var       `json:"vars"`
	Accesses   []Access    `json:"accesses"`
	Arrays     []Array     `json:"arrays"`
	Blocks     []BlockText `json:"blocks"`
	// Unobserved are the x86 addresses of loads and stores of the nest
	// that never ran during profiling (an epilogue the input did not
	// need): nothing is known of their addresses, so a kernel must not
	// run them — reaching one must fail the hot spot's guard.
	Unobserved []Hex `json:"unobserved"`
	// innerScalar is, per inner loop, what a conservative check of the
	// registers and stack slots it carries says (see innerFromRoots).
	innerScalar []innerVerdict
	Scalars     []Scalar `json:"scalars"`
}

// Level is one loop of a hot spot's nest, outermost first. Its iterations
// are counted from 0 at each entry of the level: iteration t starts at the
// (t+1)-th arrival at Header since the level was entered from outside.
// TripCount is the number of arrivals at Header per entry, so for a loop
// tested at the top the last iteration only runs the test and leaves.
type Level struct {
	Index   string `json:"index"` // i, j, k, …
	Header  Hex    `json:"header"`
	Latches []Hex  `json:"latches"` // x86 addresses of the back-edge jumps
	Exits   []Hex  `json:"exits"`   // targets of edges leaving this level
	Blocks  []Hex  `json:"blocks"`  // start addresses of its CFG blocks (inner levels' included)
	// Cold are the blocks of the natural loop that only an error path
	// runs (a library sqrt called for a negative argument, see
	// Loop.Cold): not in Blocks, and the edges into them are not exits.
	// A kernel ends a thread that reaches one with an error.
	Cold []Hex `json:"cold,omitempty"`
	// IVs are the induction variables of this level: registers or stack
	// slots that change by a constant Step per iteration of it.
	IVs []IV `json:"ivs"`
	// Invariants are the live slots at the header that do not change in
	// an entry of this level.
	Invariants []Loc `json:"invariants"`
	// Bound is the compare that ends the level, when found.
	Bound *Bound `json:"bound,omitempty"`
	// TripCount is the number of header arrivals per entry as an affine
	// expression of outer indices and named variables (see Vars); empty
	// when not computable.
	TripCount string `json:"trip_count"`
	// ObservedTrips are the trip counts seen (the first entries).
	ObservedTrips []int64  `json:"observed_trips"`
	LiveIn        []string `json:"live_in"` // slots an iteration reads before writing them
	Verdict       string   `json:"verdict"` // parallel|reduction|sequential
	Reason        string   `json:"reason"`
	// Conflict is the pair of accesses (indices into HotSpot.Accesses,
	// or -1 for a scalar) and the witness iterations that decide a
	// sequential verdict.
	Conflict *Conflict `json:"conflict,omitempty"`
	// Reloads are the registers this level carries from one iteration to
	// the next that hold a value loaded from memory no access of the hot
	// spot writes: they do not make the level sequential, since each
	// iteration can load the value again.
	Reloads []Reload `json:"reloads,omitempty"`
}

// Reload is a register a level carries that holds, at the header of
// iteration t ≥ Depth, the bytes at address Σ Scale·reg + Disp (the
// registers' values at that header) as the load at X86 read them in
// iteration t-Depth: Depth 1 when the load's value itself is carried,
// 2 when a copy of it is (from Source, itself a reload of depth 1). The
// Size bytes are zero-extended to 64 bits, and an SSE register's high
// half is zero. Stride is the load's address step per iteration, already
// taken off Disp Depth times.
type Reload struct {
	Loc      Loc        `json:"loc"`
	X86      Hex        `json:"x86"`
	Depth    int        `json:"depth"`
	Source   string     `json:"source,omitempty"`
	Terms    []AddrTerm `json:"terms"`
	Disp     int64      `json:"disp"`
	Size     int        `json:"size"`
	HighZero bool       `json:"high_zero,omitempty"`
	Stride   int64      `json:"stride"`
}

// AddrTerm is one register of an address, times Scale.
type AddrTerm struct {
	Reg   string `json:"reg"`
	Scale int64  `json:"scale"`
}

// Loc is a guest register or a stack slot.
type Loc struct {
	Reg  string `json:"reg,omitempty"`  // a guest slot name: s0…s15, x0…x15
	Base string `json:"base,omitempty"` // for a stack slot: s4 (rsp) or s5 (rbp)
	Disp int64  `json:"disp,omitempty"` // for a stack slot: [Base+Disp]
	Size int    `json:"size,omitempty"` // for a stack slot: bytes
}

// String prints l as "s3" or "[s5-20]".
func (l Loc) String() string {
	if l.Reg != "" {
		return l.Reg
	}
	if l.Disp < 0 {
		return fmt.Sprintf("[%s-%d]", l.Base, -l.Disp)
	}
	return fmt.Sprintf("[%s+%d]", l.Base, l.Disp)
}

// IV is an induction variable of a level.
type IV struct {
	Loc  Loc   `json:"loc"`
	Step int64 `json:"step"` // change per iteration of the level
	// Bits is the width the IV steps in: 64, or 32 for a 32-bit register
	// whose upper half stays zero (the step then wraps at 2^32).
	Bits int `json:"bits"`
	// When the step differs between entries of the level (j*i strength
	// reduced to a step of i), Step is 0, StepObserved lists the steps
	// seen and StepLoc is a slot holding the step at each entry, if found.
	StepObserved []int64 `json:"step_observed,omitempty"`
	// StepHigh is, for an SSE register, the step of its high 64 bits
	// (Step is that of the low 64 bits, in Bits-wide arithmetic).
	StepHigh int64 `json:"step_high,omitempty"`
	StepLoc  *Loc  `json:"step_loc,omitempty"`
	// Init is its value at iteration 0 as an affine expression of outer
	// indices and Vars, when found; InitObserved the values seen.
	Init         string  `json:"init,omitempty"`
	InitObserved []int64 `json:"init_observed,omitempty"`
}

// Bound is the compare that ends a level: the loop goes on while
// IV Cond Limit holds (Cond as gvinst.Cmp names it: lt, le, ne, …, signed
// or unsigned as Signed says).
type Bound struct {
	IV     Loc    `json:"iv"`
	Cond   string `json:"cond"`
	Signed bool   `json:"signed"`
	Limit  string `json:"limit"` // an immediate, a slot, or an affine expression of Vars
	X86    Hex    `json:"x86"`   // the compare's address
}

// Var is a named value of the nest, as the paper names them: indices i,
// j, k…; bounds bound0…; other entry values var0….
type Var struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // index|bound|value
	// Loc is where the value lives at nest entry (bounds and values); for
	// an index, the level it counts.
	Loc      *Loc    `json:"loc,omitempty"`
	Level    int     `json:"level"`
	Observed []int64 `json:"observed,omitempty"` // values seen at nest entries
}

// Access is one memory access site of the nest.
type Access struct {
	Site  int    `json:"site"`  // the collector's site number
	Block Hex    `json:"block"` // the VBlock holding it (as the collector saw it)
	Index int    `json:"index"` // the LD/ST's index in that VBlock's uninstrumented GVInst
	X86   Hex    `json:"x86"`   // its x86 instruction
	Size  int    `json:"size"`
	Kind  string `json:"kind"` // read|write
	// Function is the fitted byte address: base + Σ coeff_l·iter_l.
	Function string  `json:"function"`
	Coeffs   []int64 `json:"coeffs"` // per level, outermost first
	// Loop is the index of the innermost loop holding the site: a level's
	// (i, j, …) or an inner loop's (u0, u1, …).
	Loop string `json:"loop"`
	// Inner is set for a site below the last level: per inner loop on its
	// path, outermost first, the address step per iteration of that loop.
	Inner []InnerIndex `json:"inner,omitempty"`
	// Base is the address at iteration (0,…,0) as an expression of Vars
	// when found (e.g. "var0 + 16"); BaseObserved its value per sampled
	// nest entry.
	Base         string `json:"base,omitempty"`
	BaseObserved []Hex  `json:"base_observed"`
	Affine       bool   `json:"affine"`        // the fit held for every sample
	Why          string `json:"why,omitempty"` // why not, when not affine
	Group        int    `json:"group"`         // index into HotSpot.Arrays
	Stack        bool   `json:"stack"`         // a slot of the guest stack frame
	Samples      int    `json:"samples"`
	// Footprint is the byte range [lo, hi) touched in the sampled entries.
	Footprint [2]Hex `json:"footprint"`
}

// InnerIndex is one inner loop on a site's path and the site's address
// step per iteration of it.
type InnerIndex struct {
	Index  string `json:"index"` // the inner loop's index (u0, u1, …)
	Header Hex    `json:"header"`
	Coeff  int64  `json:"coeff"`
}

// InnerLoop is a loop below a hot spot's last level: one of several
// sibling loops of an imperfect nest, or a loop inside one. Its iterations
// run inside one iteration of every enclosing loop.
type InnerLoop struct {
	Index  string `json:"index"`  // u0, u1, … in pre-order
	Header Hex    `json:"header"` // its header address
	Parent string `json:"parent"` // the enclosing loop's index: a level's or an inner loop's
	// TripCount is the header arrivals per entry as an affine expression
	// of the enclosing loops' indices and vars; ObservedTrips the counts
	// seen.
	TripCount     string  `json:"trip_count"`
	ObservedTrips []int64 `json:"observed_trips,omitempty"`
	// Verdict and Reason: whether the loop's iterations are independent
	// (within one iteration of the enclosing loops), from the exact test on
	// the fitted accesses and the registers and stack slots it carries.
	Verdict  string    `json:"verdict"`
	Reason   string    `json:"reason"`
	Conflict *Conflict `json:"conflict,omitempty"`
}

// Array is a group of access sites that touch the same object.
type Array struct {
	ID        int    `json:"id"`
	Sites     []int  `json:"sites"` // indices into HotSpot.Accesses
	Written   bool   `json:"written"`
	Footprint [2]Hex `json:"footprint"` // observed [lo, hi)
}

// Scalar is a register or stack slot carried across iterations that is not
// an induction variable: an accumulator or a true scalar dependence.
type Scalar struct {
	Loc   Loc    `json:"loc"`
	Level int    `json:"level"`
	Kind  string `json:"kind"` // reduction|carried|reload|private
	Op    string `json:"op,omitempty"`
}

// Conflict is the dependence that makes a level sequential.
type Conflict struct {
	Sites   [2]int `json:"sites"` // access indices, -1 for a scalar
	Witness string `json:"witness"`
}

// BlockText is one VBlock of the nest with its optimized GVInst, as
// gvinst.Print writes it (gvinst.Parse reads it back).
type BlockText struct {
	Addr   Hex    `json:"addr"`
	End    Hex    `json:"end"`
	GVInst string `json:"gvinst"`
}

// Write writes f as indented JSON.
func Write(w io.Writer, f *File) error {
	f.Version = FormatVersion
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return fmt.Errorf("profile: writing: %w", err)
	}
	return nil
}

// Read reads a profile written by Write, checking its version.
func Read(r io.Reader) (*File, error) {
	var f File
	dec := json.NewDecoder(r)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("profile: reading: %w", err)
	}
	if f.Version > 0 && f.Version < FormatVersion {
		return nil, fmt.Errorf("%w %d: written by an older gxbit (this one reads version %d, which models imperfect nests); run gxbit profile again", ErrVersion, f.Version, FormatVersion)
	}
	if f.Version != FormatVersion {
		return nil, fmt.Errorf("%w %d (this gxbit reads version %d)", ErrVersion, f.Version, FormatVersion)
	}
	return &f, nil
}
