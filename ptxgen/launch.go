package ptxgen

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/gxbit/gxbit/gpu"
)

// GuestMemory is the guest memory a launch copies from and back to
// (*gvinst.Memory implements it).
type GuestMemory interface {
	Read(addr uint64, buf []byte) error
	Write(addr uint64, buf []byte) error
}

// Range is a guest byte range [Lo, Hi).
type Range struct{ Lo, Hi uint64 }

// Overlaps reports whether r and o share a byte.
func (r Range) Overlaps(o Range) bool { return r.Lo < o.Hi && o.Lo < r.Hi }

// LaunchInput is everything one launch needs from the live state.
type LaunchInput struct {
	Count  uint64   // iterations (threads)
	Values []uint64 // per Kernel.LiveIns: value at thread 0
	Steps  []uint64 // per Kernel.LiveIns: change per iteration
	Sites  []Range  // per Kernel.Sites: the guest bytes the site may touch
	// 2D kernels: the inner trip count of row 0 and its change per row,
	// the largest of them (the grid's width), and per Kernel.InnerLiveIns
	// the change per inner iteration in row 0 and its change per row.
	InnerTrip0, InnerTripStep, InnerMax uint64
	InnerSteps, InnerStepRows           []uint64
}

// siteSpan returns the two values a kernel checks an access of size bytes
// against: off = addr - lo must be at most span. A footprint smaller than
// one access admits no address: lo all ones and span 0 (only address
// all ones passes that compare, and its site has no device buffer, so the
// device faults on it and the launch fails).
func siteSpan(r Range, size int) (lo, span uint64) {
	if r.Hi < r.Lo || r.Hi-r.Lo < uint64(size) {
		return ^uint64(0), 0
	}
	return r.Lo, r.Hi - r.Lo - uint64(size)
}

// Group is a set of sites whose footprints overlap: one device buffer.
type Group struct {
	Range   Range
	Sites   []int
	Written bool
}

// Groups merges the sites' footprints into groups, lowest address first.
// Sites with an empty footprint belong to no group.
func Groups(k *Kernel, sites []Range) []Group {
	idx := make([]int, len(sites))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return sites[idx[a]].Lo < sites[idx[b]].Lo })
	var gs []Group
	for _, i := range idx {
		if sites[i].Hi <= sites[i].Lo {
			continue // an empty footprint: any access fails the kernel's check
		}
		r := Range{sites[i].Lo &^ 15, (sites[i].Hi + 15) &^ 15}
		if n := len(gs); n > 0 && r.Lo < gs[n-1].Range.Hi {
			g := &gs[n-1]
			g.Range.Hi = max(g.Range.Hi, r.Hi)
			g.Sites = append(g.Sites, i)
			g.Written = g.Written || k.Sites[i].Store
			continue
		}
		gs = append(gs, Group{Range: r, Sites: []int{i}, Written: k.Sites[i].Store})
	}
	return gs
}

// KernelError is a launch whose kernel reported an error: the code
// (ErrCodeFootprint, …) and the x86 address of the instruction.
type KernelError struct {
	Code int
	X86  uint64
}

// Error names the failure and the x86 instruction.
func (e *KernelError) Error() string {
	what := map[int]string{ErrCodeFootprint: "an access left its footprint", ErrCodeExit: "a thread left the loop (wrong trip count)",
		ErrCodeDivide: "an integer division would trap", ErrCodeAlign: "an unaligned access"}[e.Code]
	if what == "" {
		what = fmt.Sprintf("error code %d", e.Code)
	}
	return fmt.Sprintf("kernel: %s at x86 %#x", what, e.X86)
}

// LaunchStats are the times and bytes of one launch.
type LaunchStats struct {
	Kernel, CopyIn, CopyOut time.Duration
	BytesIn, BytesOut       uint64
	BytesReused             uint64 // resident bytes the launch did not copy in again
}

// Launch runs one launch of k (loaded as fn in ctx): it copies every
// group's footprint to the device, launches, checks the kernel's error
// record and copies the written groups back. Guest memory is written only
// when the kernel succeeded, so a failed launch leaves the guest as it was.
//
// With a non-nil res, device buffers stay resident after the launch: a
// later launch over the same guest range reuses the buffer, and skips the
// copy in when the guest bytes are still those the device holds (as after
// a copy back, when a stencil's next step reads what the last one wrote).
func Launch(ctx gpu.Context, fn gpu.Function, k *Kernel, mem GuestMemory, in LaunchInput, res *Resident) (LaunchStats, error) {
	var st LaunchStats
	if len(in.Values) != len(k.LiveIns) || len(in.Steps) != len(k.LiveIns) || len(in.Sites) != len(k.Sites) || k.TwoD && len(in.InnerSteps) != len(k.InnerLiveIns) {
		return st, errors.New("ptxgen: launch input does not match the kernel")
	}
	groups := Groups(k, in.Sites)
	type buf struct {
		dev  gpu.DevicePtr
		data []byte
		kept *resBuf // the resident buffer, when there is one
	}
	bufs := make([]buf, len(groups))
	ok := false
	defer func() {
		for _, b := range bufs {
			switch {
			case b.kept != nil && !ok:
				// The device copy of a failed launch may differ from the
				// guest: drop it.
				res.drop(ctx, b.kept)
			case b.kept == nil && b.dev != 0:
				_ = ctx.Free(b.dev)
			}
		}
	}()
	delta := make([]uint64, len(k.Sites))
	t0 := time.Now()
	for gi, g := range groups {
		n := g.Range.Hi - g.Range.Lo
		data := make([]byte, n)
		if err := mem.Read(g.Range.Lo, data); err != nil {
			return st, fmt.Errorf("reading guest footprint [%#x,%#x): %w", g.Range.Lo, g.Range.Hi, err)
		}
		kept := res.find(g.Range)
		var dev gpu.DevicePtr
		if kept != nil {
			dev = kept.dev
		} else {
			var err error
			if dev, err = ctx.Alloc(n); err != nil {
				return st, err
			}
			kept = res.add(ctx, g.Range, dev)
		}
		bufs[gi] = buf{dev, data, kept}
		if kept != nil && bytes.Equal(kept.snap, data) {
			st.BytesReused += n
		} else {
			if err := ctx.CopyHtoD(dev, data); err != nil {
				return st, err
			}
			st.BytesIn += n
			if kept != nil {
				kept.snap = data
			}
		}
		for _, s := range g.Sites {
			delta[s] = uint64(dev) - g.Range.Lo
		}
	}
	errDev, err := ctx.Alloc(ErrorRecordSize)
	if err != nil {
		return st, err
	}
	defer func() { _ = ctx.Free(errDev) }()
	if err := ctx.Memset(errDev, 0, ErrorRecordSize); err != nil {
		return st, err
	}
	st.CopyIn = time.Since(t0)
	params := make([][]byte, len(k.Params))
	for i, p := range k.Params {
		var v uint64
		switch p.Kind {
		case ParamCount:
			v = in.Count
		case ParamErr:
			v = uint64(errDev)
		case ParamLiveValue:
			v = in.Values[p.Index]
		case ParamLiveStep:
			v = in.Steps[p.Index]
		case ParamSiteDelta:
			v = delta[p.Index]
		case ParamSiteLo, ParamSiteSpan:
			lo, span := siteSpan(in.Sites[p.Index], k.Sites[p.Index].Size)
			v = lo
			if p.Kind == ParamSiteSpan {
				v = span
			}
		case ParamInnerTrip0:
			v = in.InnerTrip0
		case ParamInnerTripStep:
			v = in.InnerTripStep
		case ParamInnerStep:
			v = in.InnerSteps[p.Index]
		case ParamInnerStepRow:
			if in.InnerStepRows != nil {
				v = in.InnerStepRows[p.Index]
			}
		}
		params[i] = binary.LittleEndian.AppendUint64(nil, v)
	}
	t1 := time.Now()
	cfg := k.Plan.Config(in.Count)
	if k.TwoD {
		cfg = k.Plan.Config2D(in.Count, in.InnerMax)
	}
	if err := ctx.Launch(fn, cfg, params); err != nil {
		return st, err
	}
	if err := ctx.Synchronize(); err != nil {
		return st, err
	}
	st.Kernel = time.Since(t1)
	t2 := time.Now()
	rec := make([]byte, ErrorRecordSize)
	if err := ctx.CopyDtoH(rec, errDev); err != nil {
		return st, err
	}
	if code := binary.LittleEndian.Uint32(rec); code != 0 {
		return st, &KernelError{Code: int(code), X86: binary.LittleEndian.Uint64(rec[8:])}
	}
	for gi, g := range groups {
		if !g.Written {
			continue
		}
		if err := ctx.CopyDtoH(bufs[gi].data, bufs[gi].dev); err != nil {
			return st, err
		}
	}
	for gi, g := range groups {
		if !g.Written {
			continue
		}
		if err := mem.Write(g.Range.Lo, bufs[gi].data); err != nil {
			return st, fmt.Errorf("writing back [%#x,%#x): %w", g.Range.Lo, g.Range.Hi, err)
		}
		st.BytesOut += uint64(len(bufs[gi].data))
		if kept := bufs[gi].kept; kept != nil {
			kept.snap = bufs[gi].data
		}
	}
	ok = true
	st.CopyOut = time.Since(t2)
	return st, nil
}

// Resident keeps device buffers, and the guest bytes each holds, across
// launches (of one or several kernels in one context). The zero value is
// empty and ready; MaxBytes bounds the device memory kept (0: 1 GiB).
type Resident struct {
	MaxBytes uint64
	bufs     []*resBuf
	bytes    uint64
	clock    uint64
}

type resBuf struct {
	r    Range
	dev  gpu.DevicePtr
	snap []byte // the bytes the device holds, as the guest had them
	used uint64
}

// find returns the resident buffer for exactly r, or nil.
func (res *Resident) find(r Range) *resBuf {
	if res == nil {
		return nil
	}
	for _, b := range res.bufs {
		if b.r == r {
			res.clock++
			b.used = res.clock
			return b
		}
	}
	return nil
}

// add keeps dev as the buffer for r, evicting the least recently used
// buffers over the budget; nil when r alone is over it.
func (res *Resident) add(ctx gpu.Context, r Range, dev gpu.DevicePtr) *resBuf {
	if res == nil {
		return nil
	}
	limit := res.MaxBytes
	if limit == 0 {
		limit = 1 << 30
	}
	n := r.Hi - r.Lo
	if n > limit {
		return nil
	}
	for res.bytes+n > limit && len(res.bufs) > 0 {
		lru := res.bufs[0]
		for _, b := range res.bufs {
			if b.used < lru.used {
				lru = b
			}
		}
		res.drop(ctx, lru)
	}
	res.clock++
	b := &resBuf{r: r, dev: dev, used: res.clock}
	res.bufs = append(res.bufs, b)
	res.bytes += n
	return b
}

// drop frees one resident buffer.
func (res *Resident) drop(ctx gpu.Context, b *resBuf) {
	for i, x := range res.bufs {
		if x == b {
			res.bufs = append(res.bufs[:i], res.bufs[i+1:]...)
			res.bytes -= b.r.Hi - b.r.Lo
			_ = ctx.Free(b.dev)
			return
		}
	}
}

// Free releases every resident buffer.
func (res *Resident) Free(ctx gpu.Context) {
	for len(res.bufs) > 0 {
		res.drop(ctx, res.bufs[0])
	}
}
