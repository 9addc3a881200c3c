package ptxgen

import (
	"cmp"

	"github.com/gxbit/gxbit/gvinst"
)

// Recycling the host memory of pages brought back (RATIONALE).
//
// An array a kernel made has no host page until the guest reads it: each
// page it brings back into takes a page of fresh host memory, which costs
// the system a page fault at its first write, several times what copying
// the page costs (conv2d 14000 15000 on an H100 host: 840 MB of output
// brought back at 0.8 GB/s, its copy from the device at 13 GB/s; 1.3 GB/s
// here, against 20 GB/s into pages the guest had). A guest that reads such
// an array forward (a checksum, a print, a copy to a file) reads each page
// once. So, while the guest reads a buffer forward, the runs of pages
// Refresh brings back are queued, and once they hold more than
// BackWindow bytes, the oldest pages the guest did not write since are
// left to the device again (gvinst.Memory.Release): they turn stale, and
// their host memory, faulted in already, takes the next run. The guest
// then keeps about BackWindow bytes of the array at a time, and the
// rest comes back from the device when read again. A page read again
// after its release (a second pass, a column walk over the array) stops
// the release of its buffer's pages (keepBack): from then on they stay.

// backWindow is the default BackWindow: 32 MiB, two of Refresh's
// longest runs (maxReadAhead pages), so that the run before the one the
// guest reads stays whole (a row's neighbours), and half of what gvinst
// keeps of the pages released for reuse. A page read again after its
// release costs a copy from the device (13 GB/s on an H100) and one into
// a reused page, against a fault a page for fresh memory.
const backWindow = 32 << 20

// A backRun is pages i..j-1 of b, brought back while the guest read b
// forward.
type backRun struct {
	b    *resBuf
	i, j int
}

// recycle releases the oldest runs brought back until the window holds
// pages i..j-1 of b, about to come back, too. A run's pages are
// released where they still hold what the device does (not stale, not
// written since), lie wholly in their buffer and no other buffer holds
// them (its edge pages may be another's), and their buffer is neither in
// use by a launch nor holding pages a second pass read (keepBack).
func (res *Resident) recycle(b *resBuf, i, j int) {
	lo, hi := b.span(i, j)
	window := cmp.Or(res.BackWindow, backWindow)
	rm, ok := res.lazyMem.(interface {
		Release(addr, size uint64) (bool, error)
	})
	if !ok {
		return
	}
	for len(res.backRuns) > 0 && res.backBytes+hi-lo > window {
		r := res.backRuns[0]
		res.backRuns = res.backRuns[1:]
		rlo, rhi := r.b.span(r.i, r.j)
		res.backBytes -= rhi - rlo
		if !res.releasable(r.b) {
			continue
		}
		for p := r.i; p < r.j; {
			if !res.releasablePage(r.b, p) {
				p++
				continue
			}
			q := p + 1
			for q < r.j && res.releasablePage(r.b, q) {
				q++
			}
			plo, phi := r.b.span(p, q)
			if done, err := rm.Release(plo, phi-plo); err != nil || !done {
				break
			}
			if len(r.b.released) < len(r.b.stale) {
				// (A buffer grows at its end: see extend.)
				r.b.released = append(r.b.released, make([]bool, len(r.b.stale)-len(r.b.released))...)
			}
			for k := p; k < q; k++ {
				r.b.stale[k] = true
				r.b.released[k] = true
			}
			r.b.nstale += q - p
			res.back.Released += phi - plo
			p = q
		}
	}
}

// reread notes that page p of b, stale, comes back: if it was released
// before, the guest reads b a second time, and b's pages stay from now
// on.
func (res *Resident) reread(b *resBuf, p int) {
	if p < len(b.released) && b.released[p] {
		b.released[p] = false
		b.keepBack = true
		lo, hi := b.chunk(p)
		res.back.Reread += hi - lo
	}
}

// releasable reports whether pages of b may be released: b is one of
// res's buffers, lazy, watched, not in use by a launch, and no page of it
// was read again after a release.
func (res *Resident) releasable(b *resBuf) bool {
	if b.pinned || b.snap != nil || !b.watched || b.keepBack || b == res.poking {
		return false
	}
	for _, x := range res.bufs {
		if x == b {
			return true
		}
	}
	return false
}

// releasablePage reports whether page p of b may be released: it holds
// what the device does (not stale, not written since it came back), lies
// wholly in b, and no other buffer holds it.
func (res *Resident) releasablePage(b *resBuf, p int) bool {
	if b.stale[p] || b.dirty[p] {
		return false
	}
	lo, hi := b.chunk(p)
	if hi-lo != gvinst.PageSize {
		return false
	}
	for _, o := range res.bufs {
		if _, ok := o.page(lo / gvinst.PageSize); ok && o != b {
			return false
		}
	}
	return true
}
