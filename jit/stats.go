//go:build linux && amd64

package jit

import (
	"strings"

	"github.com/gxbit/gxbit/gvinst"
)

// calloutKey is what tells callouts apart in the statistics: the op, its
// modifier and its types, packed in one word (op | mod<<16 | type<<24 |
// srcType<<32) so that counting one, which a hot callout does millions
// of times, is a map access of the fast kind.
type calloutKey uint64

// keyOf is the calloutKey of in.
func keyOf(in *gvinst.Inst) calloutKey {
	return calloutKey(uint64(in.Op) | uint64(in.Mod)<<16 | uint64(in.Type)<<24 | uint64(in.SrcType)<<32)
}

// inst is the instruction (without operands) that key k stands for.
func (k calloutKey) inst() gvinst.Inst {
	return gvinst.Inst{Op: gvinst.Op(k), Mod: uint8(k >> 16), Type: gvinst.Type(k >> 24), SrcType: gvinst.Type(k >> 32)}
}

// countCallout counts one callout of in.
func (e *Engine) countCallout(in *gvinst.Inst) {
	e.stats.Callouts++
	if e.callouts == nil {
		e.callouts = make(map[calloutKey]uint64)
	}
	e.callouts[keyOf(in)]++
}

// calloutsByOp names each kind of callout as the text form spells the
// instruction's mnemonic ("GETCC.ne", "CVT.rn.f64.s32").
func (e *Engine) calloutsByOp() map[string]uint64 {
	if len(e.callouts) == 0 {
		return nil
	}
	m := make(map[string]uint64, len(e.callouts))
	for k, n := range e.callouts {
		in := k.inst()
		name, _, _ := strings.Cut(gvinst.FormatInst(&in), " ")
		m[name] += n
	}
	return m
}

// exitsByKind names each kind of exit to Go that happened, with its count.
func (e *Engine) exitsByKind() map[string]uint64 {
	var m map[string]uint64
	for k, n := range e.exits {
		if n == 0 {
			continue
		}
		if m == nil {
			m = make(map[string]uint64)
		}
		m[exitNames[k]] += n
	}
	return m
}
