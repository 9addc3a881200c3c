package lift

import (
	"errors"
	"fmt"

	"github.com/gxbit/gxbit/gvinst"
	"golang.org/x/arch/x86/x86asm"
)

// DefaultMaxInsts is the most x86 instructions a VBlock covers unless the
// Lifter is told otherwise; a longer straight run is split with a JMP to
// the next address.
const DefaultMaxInsts = 100

// Lifter translates guest x86-64 code to GVInst VBlocks. It implements the
// interpreter's Translator interface. A Lifter is not safe for concurrent
// use.
//
// RATIONALE: every x86 instruction is lifted on its own into plain GVInst,
// with x86's partial-register rules spelled out (32-bit writes zero the
// upper half, 8- and 16-bit writes merge) and its flags recorded with
// FLAGS for the interpreter to compute lazily. Two block-local passes then
// drop FLAGS whose flags are overwritten before any read and the pure
// instructions nobody reads. An instruction the lifter does not know
// becomes TRAP.unsupported: the guest stops rather than computes a wrong
// result.
type Lifter struct {
	dec   *Decoder
	table map[x86asm.Op]liftFunc
	// MaxInsts is the most x86 instructions a VBlock covers.
	MaxInsts int
}

// liftFunc lifts the instruction b.d into b. It returns errUnsupported
// (possibly wrapped) for a form the lifter does not implement; the caller
// then discards what it emitted and emits TRAP.unsupported.
type liftFunc func(b *builder) error

// errUnsupported marks an instruction form the lifter does not implement.
var errUnsupported = errors.New("unsupported instruction form")

// unsupported returns errUnsupported with a reason.
func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUnsupported, fmt.Sprintf(format, args...))
}

// liftTables lists the per-category dispatch tables the Lifter's one table
// is built from. A new category (x87, say) adds its table here.
func liftTables() []map[x86asm.Op]liftFunc {
	return []map[x86asm.Op]liftFunc{
		integerOps(),
		controlOps(),
		stringOps(),
		systemOps(),
		sseMoveOps(),
		sseIntOps(),
		sseFloatOps(),
		sseStringOps(),
		x87Ops(),
	}
}

// buildTable merges the category tables; an op in two of them is a
// programming error.
func buildTable() map[x86asm.Op]liftFunc {
	t := make(map[x86asm.Op]liftFunc)
	for _, part := range liftTables() {
		for op, fn := range part {
			if _, dup := t[op]; dup {
				panic(fmt.Sprintf("lift: x86 op %v is in two lift tables", op))
			}
			t[op] = fn
		}
	}
	return t
}

// NewLifter returns a Lifter that reads code from mem.
func NewLifter(mem *gvinst.Memory) *Lifter {
	return &Lifter{dec: NewDecoder(mem), table: buildTable(), MaxInsts: DefaultMaxInsts}
}

// Decoder returns the Lifter's decoder.
func (l *Lifter) Decoder() *Decoder { return l.dec }

// Lifted reports whether the lifter has a lift function for op (some forms
// of it may still be unsupported).
func (l *Lifter) Lifted(op x86asm.Op) bool { _, ok := l.table[op]; return ok }

// LiftedOps returns every x86asm op the lifter has a lift function for.
func (l *Lifter) LiftedOps() []x86asm.Op {
	ops := make([]x86asm.Op, 0, len(l.table))
	for op := range l.table {
		ops = append(ops, op)
	}
	return ops
}

// LiftError reports a lifter bug: the GVInst lifted from an instruction
// does not verify.
type LiftError struct {
	Addr uint64 // the x86 instruction's address
	Text string // its disassembly
	Err  error
}

func (e *LiftError) Error() string {
	return fmt.Sprintf("lift %#x (%s): %v", e.Addr, e.Text, e.Err)
}

// Unwrap returns the underlying error.
func (e *LiftError) Unwrap() error { return e.Err }

// Translate lifts the VBlock starting at addr: the x86 instructions from
// addr up to and including the first control transfer, or MaxInsts of
// them (the block then ends with a JMP to the next address). Undecodable
// bytes become TRAP.ill and instructions the lifter does not implement
// TRAP.unsupported, at their address. Translate fails with a *DecodeError
// wrapping a *gvinst.Fault when no code can be fetched at addr, and with a
// *LiftError when the lifted block does not verify (a lifter bug).
func (l *Lifter) Translate(addr uint64) (*gvinst.VBlock, error) {
	max := l.MaxInsts
	if max <= 0 {
		max = DefaultMaxInsts
	}
	return l.translate(addr, max, false)
}

// translate lifts a block of at most max instructions; with liveOut the
// flags are kept live at its exit.
func (l *Lifter) translate(addr uint64, max int, liveOut bool) (*gvinst.VBlock, error) {
	b := newBuilder(addr)
	pc := addr
	for n := 0; !b.ended; n++ {
		if n == max {
			// The jump belongs to the last instruction lifted.
			b.emit(gvinst.Inst{Op: gvinst.OpJmp, Target: [2]uint64{pc}})
			b.blk.Split = true
			break
		}
		d, err := l.dec.Decode(pc)
		if err != nil {
			var fault *gvinst.Fault
			if errors.As(err, &fault) {
				if n == 0 {
					return nil, err
				}
				// End the block before the unfetchable instruction; the
				// fault is raised when control gets there.
				b.emit(gvinst.Inst{Op: gvinst.OpJmp, Target: [2]uint64{pc}})
				b.blk.Split = true
				break
			}
			var de *DecodeError
			text := "(bad)"
			if errors.As(err, &de) {
				text = fmt.Sprintf("(bad) % x", de.Bytes)
			}
			b.blk.Guest = append(b.blk.Guest, gvinst.GuestInst{Addr: pc, Text: text})
			b.x86 = pc
			b.trap(gvinst.TrapIllegal)
			b.blk.End = pc + 1
			break
		}
		l.liftOne(b, d)
		pc = d.Next()
	}
	blk := b.finish(l, liveOut)
	if err := gvinst.Verify(blk); err != nil {
		var ve *gvinst.VerifyError
		if errors.As(err, &ve) && ve.Index >= 0 && ve.Index < len(blk.Insts) {
			a := blk.Insts[ve.Index].X86
			for _, g := range blk.Guest {
				if g.Addr == a {
					return nil, &LiftError{Addr: a, Text: g.Text, Err: err}
				}
			}
			return nil, &LiftError{Addr: a, Err: err}
		}
		return nil, &LiftError{Addr: addr, Err: err}
	}
	return blk, nil
}

// LiftInst lifts the single instruction at addr into a VBlock of its own,
// ending (if the instruction does not end it) with a JMP to the next
// instruction. The block's flags are live at exit. It is meant for tests
// that run one instruction at a time.
func (l *Lifter) LiftInst(addr uint64) (*gvinst.VBlock, error) {
	return l.translate(addr, 1, true)
}

// liftOne lifts the decoded instruction d into b.
func (l *Lifter) liftOne(b *builder, d *Decoded) {
	b.begin(d)
	fn := l.table[d.Inst.Op]
	var err error
	if fn == nil || hasVEX(&d.Inst) {
		err = errUnsupported
	} else {
		err = fn(b)
	}
	if err != nil {
		if !errors.Is(err, errUnsupported) {
			panic(fmt.Sprintf("lift: lifting %#x (%s): %v", d.Addr, d.Text, err))
		}
		b.rollback()
		b.trap(gvinst.TrapUnsupported)
	}
	if !b.ended && b.endsHere {
		b.ended = true
	}
}

func hasVEX(in *x86asm.Inst) bool {
	for _, p := range in.Prefix {
		if p == 0 {
			break
		}
		if p.IsVEX() || p.IsEVEX() {
			return true
		}
	}
	return false
}
