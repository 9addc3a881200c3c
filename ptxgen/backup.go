package ptxgen

import (
	"fmt"
	"sort"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gvinst"
)

// A checked launch may fail after some of its threads stored: the guest
// is left as it was, since what the kernel wrote is copied back (or
// marked stale) only after a clean launch. The device's buffers need the
// same care where they hold the only current copy of a page (stale in
// the guest): the kernel may have written over it. So a launch backs up,
// on the device, what it may overwrite of those pages, and a failed one
// puts it back.
//
// What it may overwrite is what its store sites' footprints cover: the
// checked kernel tests every store against its site's footprint before
// it stores (an empty footprint admits none), so a failed launch wrote
// nothing outside them. Of those bytes, the ones on pages the guest
// holds (not stale) need no backup: the guest's copy is current, and a
// failed launch marks those pages changed, so that the next launch copies
// them in again. A group whose store footprints meet no stale page is
// backed up not at all. (The backup was the group's whole range, the
// footprints of its loads too. Footprints are ranges, though: LU's
// column scaling writes one element a row, and its store footprint still
// spans the rows below the diagonal, on pages the trailing update left
// on the device; so does cholesky's column. Each of LU's hot spots
// backed up 16 MB a launch on average at 2000, 31.7 GB over the run on
// an H100, and the store footprints alone are hardly less: there the
// dry launch below is what saves the copies.)
//
// A data-independent kernel (Kernel.DataIndependent) can do without a
// backup: nothing its checks test is a value it loaded, so its dry
// variant (Kernel.Dry, the same kernel without its stores to guest
// memory) fails exactly where it would, having written nothing. A clean
// dry launch proves the input, and the launch that follows runs
// Kernel.Unchecked as a proven one (LaunchInput.Proven), which backs up
// nothing. That costs a second launch instead of the copy: the caller
// weighs the two (BackupBytes).

// backup is what a launch saved of one group's buffer before the kernel
// ran: the guest ranges runs, packed in that order at dev (0 when runs is
// empty), and the group's store footprints, merged (writable).
type backup struct {
	dev      gpu.DevicePtr
	runs     []Range
	writable []Range
}

// writableRanges returns the footprints of g's store sites in sites,
// merged, lowest first.
func writableRanges(k *Kernel, g Group, sites []Range) []Range {
	var rs []Range
	for _, s := range g.Sites {
		if k.Sites[s].Store && sites[s].Lo < sites[s].Hi {
			rs = append(rs, sites[s])
		}
	}
	sort.Slice(rs, func(a, b int) bool { return rs[a].Lo < rs[b].Lo })
	var out []Range
	for _, r := range rs {
		if n := len(out); n > 0 && r.Lo <= out[n-1].Hi {
			out[n-1].Hi = max(out[n-1].Hi, r.Hi)
			continue
		}
		out = append(out, r)
	}
	return out
}

// staleRuns returns the parts of rs (merged, lowest first) that lie on
// pages of b stale in the guest, consecutive pages joined.
func (b *resBuf) staleRuns(rs []Range) []Range {
	var out []Range
	for _, r := range rs {
		lo, hi := max(r.Lo, b.r.Lo), min(r.Hi, b.r.Hi)
		for lo < hi {
			p, _ := b.page(lo / gvinst.PageSize)
			_, end := b.chunk(p)
			end = min(end, hi)
			if b.stale[p] {
				if n := len(out); n > 0 && out[n-1].Hi == lo {
					out[n-1].Hi = end
				} else {
					out = append(out, Range{lo, end})
				}
			}
			lo = end
		}
	}
	return out
}

// makeBackup saves on the device what a launch may write of b's stale
// pages, the bytes of writable on them.
func (res *Resident) makeBackup(ctx gpu.Context, b *resBuf, writable []Range) (*backup, error) {
	bk := &backup{writable: writable, runs: b.staleRuns(writable)}
	var n uint64
	for _, r := range bk.runs {
		n += r.Hi - r.Lo
	}
	if n == 0 {
		return bk, nil
	}
	dev, err := res.spare(n)
	if err != nil {
		return nil, err
	}
	var off uint64
	for _, r := range bk.runs {
		// Queued: the kernel after it on the stream runs once it is done.
		if err := ctx.CopyDtoDAsync(dev+gpu.DevicePtr(off), b.dev+gpu.DevicePtr(r.Lo-b.r.Lo), r.Hi-r.Lo); err != nil {
			res.putSpare(dev)
			return nil, err
		}
		off += r.Hi - r.Lo
	}
	bk.dev = dev
	return bk, nil
}

// restore puts back what bk saved of b after a failed launch, and marks
// the other pages the launch may have written (the guest holds them)
// changed, so that the next launch over them copies them in whole.
func (res *Resident) restore(ctx gpu.Context, b *resBuf, bk *backup) error {
	var off uint64
	for _, r := range bk.runs {
		if err := ctx.CopyDtoD(b.dev+gpu.DevicePtr(r.Lo-b.r.Lo), bk.dev+gpu.DevicePtr(off), r.Hi-r.Lo); err != nil {
			return fmt.Errorf("%w: restoring [%#x,%#x) after a failed launch: %v", ErrLostCopy, r.Lo, r.Hi, err)
		}
		off += r.Hi - r.Lo
	}
	for _, r := range bk.writable {
		lo, hi := max(r.Lo, b.r.Lo), min(r.Hi, b.r.Hi)
		if hi <= lo {
			continue
		}
		first, _ := b.page(lo / gvinst.PageSize)
		last, _ := b.page((hi - 1) / gvinst.PageSize)
		for p := first; p <= last; p++ {
			if !b.stale[p] {
				b.dirty[p], b.snapped[p] = true, false
				delete(b.pageSnap, p)
			}
		}
	}
	return nil
}

// BackupBytes returns the bytes a checked launch of k over sites would
// back up now: what its store sites' footprints cover of the pages only
// the device holds. (A data-independent kernel may prove its input with
// a launch of Kernel.Dry instead, and then run Kernel.Unchecked, which
// needs no backup.)
func (res *Resident) BackupBytes(k *Kernel, sites []Range) uint64 {
	if res == nil || res.lazyMem == nil || len(sites) != len(k.Sites) {
		return 0
	}
	var n uint64
	for _, g := range Groups(k, sites) {
		if !g.Written {
			continue
		}
		for _, w := range writableRanges(k, g, sites) {
			n += res.Stale(w)
		}
	}
	return n
}
