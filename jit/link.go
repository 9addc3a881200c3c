//go:build linux && amd64

package jit

import (
	"encoding/binary"
	"sort"
)

// Linking a successor exit into a direct jump writes the code memory,
// which costs two mprotect calls (and, the process having several threads,
// a TLB shootdown each). The engine therefore collects the links it
// decides and writes them in batches: a pending link's exit still works,
// through Go, which enters the successor itself.
//
// RATIONALE: python3's start-up links 18,000 exits, which took 36,000 of
// its 68,000 mprotect calls when each link was written at once.
const (
	// linkBatch is the most links that wait to be written.
	linkBatch = 64
	// linkHot is how many times an exit may be taken through Go while
	// its link waits: a hot edge is linked at once.
	linkHot = 4
	// linkSpan is the widest code range one pair of mprotect calls
	// covers when writing a batch; links farther apart take another pair.
	linkSpan = 1 << 20
)

// pendingLink is successor k of unit from, to jump to unit to once
// written; taken counts its exits through Go meanwhile.
type pendingLink struct {
	from, to *unit
	k        int
	taken    int
}

// deferLink decides that successor k of from jumps to to, and writes the
// pending links when they are many or this one is hot.
func (e *Engine) deferLink(from *unit, k int, to *unit) error {
	for i := range e.pending {
		p := &e.pending[i]
		if p.from == from && p.k == k {
			p.to = to
			p.taken++
			if p.taken >= linkHot {
				return e.flushLinks()
			}
			return nil
		}
	}
	e.pending = append(e.pending, pendingLink{from: from, to: to, k: k, taken: 1})
	if len(e.pending) >= linkBatch {
		return e.flushLinks()
	}
	return nil
}

// flushLinks writes the pending links whose units are both still alive,
// a pair of mprotect calls per linkSpan of code they touch.
func (e *Engine) flushLinks() error {
	var patches []codePatch
	for _, p := range e.pending {
		if p.from.dead || p.to.dead || p.from.chainStub[p.k] < 0 {
			continue
		}
		site := p.from.chainStub[p.k]
		j := make([]byte, 5)
		j[0] = 0xe9
		binary.LittleEndian.PutUint32(j[1:], uint32(int32(p.to.at-(site+5))))
		patches = append(patches, codePatch{at: site, b: j})
		p.to.incoming = append(p.to.incoming, link{from: p.from, k: p.k})
		e.stats.ChainHits++
	}
	e.pending = e.pending[:0]
	sort.Slice(patches, func(i, j int) bool { return patches[i].at < patches[j].at })
	for len(patches) > 0 {
		n := 1
		for n < len(patches) && patches[n].at-patches[0].at < linkSpan {
			n++
		}
		if err := e.arena.writePatches(patches[:n]); err != nil {
			return err
		}
		patches = patches[n:]
	}
	return nil
}
