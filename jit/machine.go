package jit

import (
	"unsafe"

	"github.com/gxbit/gxbit/gvinst"
)

// machine is the memory compiled code works on; r15 holds its address. It
// holds no Go pointers (the code writes it without write barriers), and
// lives on the heap, where it does not move and starts on a page boundary
// (Go places an object this large at the start of its own span).
//
// RATIONALE: where its parts lie within a 4 KiB page matters. A load whose
// address has the same low 12 bits as a store still in flight is taken to
// depend on that store until the full addresses are compared (4K aliasing),
// and on this project's AMD EPYC host that costs far more than the few
// cycles Intel documents. Compiled code stores guest slots at every unit
// exit (frame offsets 0x0-0x1c0, the block's virtual registers above) and
// loads the TLB pointers at every load and store that is not cached: with
// the TLB pointers at 0x80010 and 0x80018, beside the slots of rdx and
// rbx, the machine's exitSP beside r11's and the return stack's top frames
// beside r12-r14's, python3 numeric.py 3 took 7.0 s of CPU; with the fields
// at page offset fieldsPageOffset and the return stack's top at
// retTopPageOffset (the frame's first 0xd00 bytes free of both), 3.0 s.
// TestMachineLayout checks these offsets.
type machine struct {
	frame  [gvinst.FrameSlots]uint64 // guest state slots, then the block's virtual registers
	_      [fieldsPageOffset]byte
	fuel   int64   // guest instructions left before the next unit entry exits; in fuelReg while compiled code runs
	nextPC uint64  // the target of a computed jump, at exitIndirect
	rtlb   uintptr // the Memory's read TLB
	wtlb   uintptr // its write TLB
	mxIn   uint32  // the MXCSR compiled code runs under: the guest's, every exception masked
	mxOut  uint32  // the MXCSR it left, whose exception flags go back to the guest's
	mxTrap uint32  // non-zero when the guest unmasks an SSE exception: float ops take their callouts
	// flagsFn is the address of the statusFlags routine (compile_flags.go).
	flagsFn uintptr
	// subCondsFn is the address of the subConds routine.
	subCondsFn uintptr
	// tlbGen is the Memory's TLB generation plus one when Go entered;
	// sites (below) are the loop units' page caches, one per load or
	// store: a copy of a TLB entry, good while its gen equals tlbGen.
	tlbGen uint64
	// Compiled code runs on retStack, not on the goroutine's stack (see
	// "Calls and returns" in the package documentation): enter saves the
	// Go stack pointer in goSP, switches to retTop and calls startFn;
	// exitSP is where enter's return address then lies, and every exit
	// returns from there. A guest call pushes its frame only while rsp
	// stays above retLimit.
	goSP, retTop, exitSP, retLimit uintptr
	// startFn and missFn are the addresses of the start and miss
	// routines (retstack.go).
	startFn, missFn uintptr
	// ijc caches the targets of computed jumps (returns, above all): the
	// entry at ijcSlot(pc) holds pc and the code address of its unit, so
	// compiled code jumps there without returning to Go.
	ijc      [ijcSize]ijcEntry
	sites    [maxSites]siteEntry
	_        [retStackPad]byte
	retStack [retStackWords]uint64
}

// The page offsets of the machine's fields and of its return stack's top
// (see machine's RATIONALE), and the padding before the return stack that
// puts its top there (ijc and sites are whole pages; the fields take 0x78
// bytes).
const (
	fieldsPageOffset = 0xe00
	retTopPageOffset = 0xd00
	retStackPad      = (retTopPageOffset - (fieldsPageOffset + 0x78) + 4096) % 4096
)

// siteEntry is the page cache of one load or store of a loop unit: the
// guest page it last accessed, that page's bytes, and the TLB generation
// the copy was taken in (0: empty).
type siteEntry struct {
	page uint64
	host uintptr
	gen  uint64
	_    uint64
}

const (
	maxSites  = 8192
	siteBytes = 32
)

// fuelReg holds the fuel (machine.fuel) while compiled code runs: every
// unit entry tests and decrements it, and a register keeps that off the
// memory round trip a counter in the machine would put between any two
// units (10% of python3's time).
const fuelReg = rbp

// ijcEntry is one entry of the computed-jump cache.
type ijcEntry struct {
	pc    uint64
	entry uintptr
}

// ijcBits is the log2 of the computed-jump cache's entries.
//
// RATIONALE: python3's interpreter loop jumps to some 4,000 distinct
// targets (its computed gotos and the returns of its calls); with 4,096
// entries and a hash that only folded the page number into the offset,
// 0.7 M of 0.77 M cache misses of numeric.py were two hot targets taking
// one entry in turns. 32,768 entries under a multiplicative hash keep
// them apart, for 512 KiB of the machine.
const ijcBits = 15

const ijcSize = 1 << ijcBits

// ijcMul is the multiplier of the computed-jump cache's hash: 2^32 over
// the golden ratio.
const ijcMul = 0x9e3779b9

// ijcEmpty is the pc of an empty computed-jump cache entry: no x86-64
// code address is that (it is not canonical).
const ijcEmpty = 1 << 63

// clearIJC empties the computed-jump cache: every entry leads to the miss
// routine (should a guest jump to ijcEmpty itself, it leaves for Go too).
func (m *machine) clearIJC() {
	for i := range m.ijc {
		m.ijc[i] = ijcEntry{pc: ijcEmpty, entry: m.missFn}
	}
}

// ijcSlot is the entry of the computed-jump cache for guest address pc:
// the top ijcBits of pc's low 32 bits times ijcMul, modulo 2^32 (Fibonacci
// hashing, which mixes every one of those bits into them; code addresses
// 4 GiB apart rarely meet). The compiled code computes the same with a
// 32-bit imul.
func ijcSlot(pc uint64) uint64 { return uint64(uint32(pc)*ijcMul) >> (32 - ijcBits) }

const (
	offNextPC     = unsafe.Offsetof(machine{}.nextPC)
	offRTLB       = unsafe.Offsetof(machine{}.rtlb)
	offWTLB       = unsafe.Offsetof(machine{}.wtlb)
	offMXIn       = unsafe.Offsetof(machine{}.mxIn)
	offMXOut      = unsafe.Offsetof(machine{}.mxOut)
	offMXTrap     = unsafe.Offsetof(machine{}.mxTrap)
	offIJC        = unsafe.Offsetof(machine{}.ijc)
	offTLBGen     = unsafe.Offsetof(machine{}.tlbGen)
	offSites      = unsafe.Offsetof(machine{}.sites)
	offFlagsFn    = unsafe.Offsetof(machine{}.flagsFn)
	offSubCondsFn = unsafe.Offsetof(machine{}.subCondsFn)
	offExitSP     = unsafe.Offsetof(machine{}.exitSP)
	offRetLimit   = unsafe.Offsetof(machine{}.retLimit)
	offMissFn     = unsafe.Offsetof(machine{}.missFn)
)
