//go:build linux && amd64

package jit

import "github.com/gxbit/gxbit/gvinst"

// traceMinRuns is the fewest times the interpreter must have seen a block
// leave for a trace to pick a side of its branch (or HotAfter, if fewer).
const traceMinRuns = 4

// formTrace returns the unit that starts with block head (optimized when
// the engine optimizes): head alone, or head and the blocks along its hot
// path (see above), optimized one by one.
func (e *Engine) formTrace(head *gvinst.VBlock) (*traceUnit, error) {
	if e.opts.HotAfter == 0 {
		return singleTrace(head), nil
	}
	blocks := []*gvinst.VBlock{head}
	var follow []int
	var nexts []uint64
	// calls are the guest calls the trace entered and has not returned
	// from: the return address, and the block that calls.
	type call struct {
		ret   uint64
		block int
	}
	var calls []call
	insts := guestCount(head)
	t := &traceUnit{segs: []segment{{addr: head.Addr, end: head.End}}}
	minRuns := min(traceMinRuns, e.opts.HotAfter)
	for len(blocks) < maxTraceBlocks {
		cur := blocks[len(blocks)-1]
		last := &cur.Insts[len(cur.Insts)-1]
		edges, _ := e.interp.Edges(cur.Addr)
		k, next, ok := hotSide(cur, edges, minRuns)
		var ret uint64 // the return address of a call the trace goes into
		switch last.Op {
		case gvinst.OpJmpR:
			target, runs, _ := e.interp.Jumped(cur.Addr)
			k, next, ok = 0, target, runs >= minRuns
		case gvinst.OpCall:
			k, next, ok, ret = 0, last.Target[0], true, last.Target[1]
		case gvinst.OpCallR:
			target, runs, _ := e.interp.Jumped(cur.Addr)
			k, next, ok, ret = 0, target, runs >= minRuns, last.Target[0]
		case gvinst.OpRet:
			// Into the caller whose call the trace went through.
			k, ok = 0, len(calls) > 0
			if ok {
				next = calls[len(calls)-1].ret
			}
		}
		if !ok || next == head.Addr || e.opts.Breakpoints[next] {
			break
		}
		if _, compiled := e.byAddr[next]; compiled {
			// Its own unit runs it: a trace copies no compiled code.
			break
		}
		vb := e.interp.Translated(next)
		if vb == nil || vb.Addr != next || insts+guestCount(vb) > MaxUnitInsts {
			break
		}
		if t.overlaps(vb.Addr, max(vb.End, vb.Addr+1)) {
			break
		}
		switch {
		case ret != 0:
			calls = append(calls, call{ret: ret, block: len(blocks) - 1})
		case last.Op == gvinst.OpRet:
			calls = calls[:len(calls)-1]
		}
		blocks = append(blocks, vb)
		follow = append(follow, k)
		nexts = append(nexts, next)
		insts += guestCount(vb)
		t.segs = append(t.segs, segment{addr: vb.Addr, end: vb.End})
	}
	if len(calls) > 0 {
		// A call whose return the trace does not reach ends it: made
		// there, it pushes the return stack's frame that the callee's
		// return comes back by.
		n := calls[0].block + 1
		blocks, follow, nexts = blocks[:n], follow[:n-1], nexts[:n-1]
	}
	if len(blocks) == 1 {
		return singleTrace(head), nil
	}
	// The interpreter's blocks are not optimized (tier.go): optimize
	// copies, as lookup does a single block.
	if e.opts.Optimize {
		for i, vb := range blocks {
			if i == 0 {
				continue // lookup optimized the head
			}
			c := *vb
			c.Insts = append([]gvinst.Inst(nil), vb.Insts...)
			c.Guest = append([]gvinst.GuestInst(nil), vb.Guest...)
			if err := gvinst.Optimize(&c); err != nil {
				return nil, &gvinst.TranslateError{Addr: vb.Addr, Err: err}
			}
			blocks[i] = &c
		}
	}
	return joinBlocks(blocks, follow, nexts)
}
