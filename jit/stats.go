//go:build linux && amd64

package jit

import (
	"strings"

	"github.com/gxbit/gxbit/gvinst"
)

// calloutKey is what tells callouts apart in the statistics: the op, its
// modifier and its types.
type calloutKey struct {
	op      gvinst.Op
	mod     uint8
	typ     gvinst.Type
	srcType gvinst.Type
}

// countCallout counts one callout of in.
func (e *Engine) countCallout(in *gvinst.Inst) {
	e.stats.Callouts++
	if e.callouts == nil {
		e.callouts = make(map[calloutKey]uint64)
	}
	e.callouts[calloutKey{in.Op, in.Mod, in.Type, in.SrcType}]++
}

// calloutsByOp names each kind of callout as the text form spells the
// instruction's mnemonic ("GETCC.ne", "CVT.rn.f64.s32").
func (e *Engine) calloutsByOp() map[string]uint64 {
	if len(e.callouts) == 0 {
		return nil
	}
	m := make(map[string]uint64, len(e.callouts))
	for k, n := range e.callouts {
		in := gvinst.Inst{Op: k.op, Mod: k.mod, Type: k.typ, SrcType: k.srcType}
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
