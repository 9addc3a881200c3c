package ptxgen

import (
	"fmt"
	"slices"

	"github.com/gxbit/gxbit/gpu"
)

// Pages brought back with the launch (RATIONALE).
//
// A time step's nest often reads a few elements of an array the launch
// before left on the device on its way in, before its loop (gcc's -O2
// jacobi1d loads A[0] and A[1] ahead of the loop that the kernel runs):
// each step the guest then finds a page stale and waits for a copy from
// the device of its own, a call that waits for the device (jacobi1d 2000000
// 1000 on an H100: 2,005 such copies, 0.2 s of its 1.6). So a buffer
// remembers the last pages the guest found stale outside a launch
// (resBuf.hot, at most maxAhead: a page stays until a newer one takes its
// place, for once it comes back with each launch the guest no longer
// finds it stale), and each of its written launches queues their copies
// from the device behind its kernel, on the
// stream, into the pinned staging buffer past the copies in: the launch's
// one wait covers them, and the pages are put into the guest as current
// right after it, instead of being left stale. (Without pinned memory,
// gpusim's, a copy to the host waits, and the launch leaves them stale.)

// maxAhead is the most pages of a buffer a launch brings back with it.
const maxAhead = 4

// noteFault records that the guest found page i of b stale outside a
// launch, in place of the page recorded longest ago when b has maxAhead.
func (b *resBuf) noteFault(i int) {
	if slices.Contains(b.hot, i) {
		return
	}
	if len(b.hot) == maxAhead {
		b.hot = slices.Delete(b.hot, 0, 1)
	}
	b.hot = append(b.hot, i)
}

// aheadCopy is a page of b coming back with the launch into host.
type aheadCopy struct {
	b    *resBuf
	p    int
	host []byte
}

// queueAhead queues, behind the kernel, the copies from the device of
// the hot pages of the written groups' kept buffers that hold bytes of
// their groups' ranges (the pages the launch leaves stale), into room (a
// part of the pinned staging buffer no copy in reads: the copies wait for
// nothing), as many as it holds; it returns them.
func queueAhead(ctx *meteredContext, groups []Group, bufs []*resBuf, kept []bool, room []byte) ([]aheadCopy, error) {
	var out []aheadCopy
	var used uint64
	queued := map[[2]int]bool{} // (group's buffer, page): groups may share a buffer
	for gi, g := range groups {
		b := bufs[gi]
		if !g.Written || !kept[gi] || b == nil || len(b.hot) == 0 {
			continue
		}
		for _, p := range b.hot {
			if p >= len(b.stale) {
				continue
			}
			lo, hi := b.chunk(p)
			if hi <= g.Range.Lo || lo >= g.Range.Hi || used+hi-lo > uint64(len(room)) || queued[[2]int{slices.Index(bufs, b), p}] {
				continue
			}
			queued[[2]int{slices.Index(bufs, b), p}] = true
			host := room[used : used+hi-lo]
			if err := ctx.queueDtoHPinned(host, b.dev+gpu.DevicePtr(lo-b.r.Lo)); err != nil {
				return nil, fmt.Errorf("%w: queueing [%#x,%#x) back with the launch: %v", ErrLostCopy, lo, hi, err)
			}
			used += hi - lo
			out = append(out, aheadCopy{b, p, host})
		}
	}
	return out, nil
}

// putAhead writes the pages that came back with the launch into the
// guest, now that the launch left them stale, and marks them current.
func (res *Resident) putAhead(ahead []aheadCopy) error {
	for _, a := range ahead {
		if !a.b.stale[a.p] {
			continue
		}
		prev := res.poking
		res.poking = a.b
		err := res.putPage(a.b, a.p, a.host)
		res.poking = prev
		if err != nil {
			return err
		}
		res.back.Ahead++
	}
	return nil
}
