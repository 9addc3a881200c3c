package accel

import (
	"sort"
	"time"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptxgen"
)

// What the device's holding an array costs the CPU side of an instance
// (Estimate.Fetch and Estimate.Refill), and which hot spots make it.
//
// Run on the CPU, an instance first brings back what only the device
// holds of its footprints (Fetch), and the pages it writes that the device
// holds go stale there, to be copied in again before the next launch that
// reads them (Refill). Both come again at every instance only when
// another hot spot launches between this one's instances, writing on the
// device what the instance reads, or reading there what it writes (LU's
// column scaling on the CPU between trailing updates on the device: a
// column is a page per row, and every step sent them all back and
// forth). What the hot spot's own launches left on the device is brought
// back once, when it goes back to the CPU, and its own next launch pays
// for what it copies in in its own prediction (Estimate.Copy). Counting
// its own pages made launching justify itself: each launch left the
// footprint on the device, so that the next instance's CPU side paid for
// bringing it back, and launched too (gramschmidt's column update, whose
// columns no other nest uses on the device, launched 395 times on
// gpusim, copying 12 MB in each time, and the run took twice as long as
// a plain one).

// deviceUse records what a launch of k over sites used on the device:
// its groups that hold a load join the spot's deviceReads, those that
// hold a store its deviceWrites, and the launch is the run's latest.
func (sp *spot) deviceUse(k *ptxgen.Kernel, sites []ptxgen.Range) {
	var reads, writes []ptxgen.Range
	for _, g := range ptxgen.Groups(k, sites) {
		if g.Written {
			writes = append(writes, g.Range)
		}
		for _, s := range g.Sites {
			if !k.Sites[s].Store {
				reads = append(reads, g.Range)
				break
			}
		}
	}
	sp.deviceReads = unionRanges(append(sp.deviceReads, reads...))
	sp.deviceWrites = unionRanges(append(sp.deviceWrites, writes...))
	sp.a.launchSeq++
	sp.lastLaunch = sp.a.launchSeq
	// The launch copied in what the hot spot's own CPU runs wrote.
	sp.fellBack = nil
}

// interleaved gives the footprints read and written on the device, each
// merged, by the hot spots other than sp that launched since sp's last
// prediction (any launch, before its first) and still launch, and marks
// the prediction.
func (sp *spot) interleaved() (reads, writes []ptxgen.Range) {
	for _, o := range sp.a.order {
		if o == sp || o.rep.Disarmed || o.lastLaunch == 0 || o.lastLaunch <= sp.predictedAt {
			continue
		}
		reads = append(reads, o.deviceReads...)
		writes = append(writes, o.deviceWrites...)
	}
	sp.predictedAt = sp.a.launchSeq
	return unionRanges(reads), unionRanges(writes)
}

// unionRanges merges rs into sorted disjoint ranges (touching ones join).
func unionRanges(rs []ptxgen.Range) []ptxgen.Range {
	rs = append([]ptxgen.Range(nil), rs...)
	sort.Slice(rs, func(a, b int) bool { return rs[a].Lo < rs[b].Lo })
	var out []ptxgen.Range
	for _, r := range rs {
		if r.Hi <= r.Lo {
			continue
		}
		if n := len(out); n > 0 && r.Lo <= out[n-1].Hi {
			out[n-1].Hi = max(out[n-1].Hi, r.Hi)
			continue
		}
		out = append(out, r)
	}
	return out
}

// within calls f with each part of r that lies in one of the sorted
// disjoint ranges of among.
func within(r ptxgen.Range, among []ptxgen.Range, f func(ptxgen.Range)) {
	for _, o := range among {
		if lo, hi := max(r.Lo, o.Lo), min(r.Hi, o.Hi); lo < hi {
			f(ptxgen.Range{Lo: lo, Hi: hi})
		}
	}
}

// staleFootprint is how many bytes of the footprints of the count
// iterations kernel k would run (sites) only the device holds, within
// written (what the other hot spots write there, see interleaved): what
// running them on the CPU brings back first. A group counts at most a
// page per iteration and site (a column walk touches one page a row,
// however wide the rows).
func staleFootprint(res *ptxgen.Resident, k *ptxgen.Kernel, sites []ptxgen.Range, count uint64, written []ptxgen.Range) uint64 {
	var n uint64
	for _, g := range ptxgen.Groups(k, sites) {
		var stale uint64
		within(g.Range, written, func(r ptxgen.Range) { stale += res.Stale(r) })
		n += min(stale, count*uint64(len(g.Sites))*gvinst.PageSize)
	}
	return n
}

// residentWrites is how many bytes of the pages that count iterations of
// kernel k write (its write groups over sites) the device holds, within
// read (what the other hot spots read there, see interleaved): run on
// the CPU, they make each of those pages stale on the device, to be
// copied in again before the next launch that reads it. A group counts at
// most a page per iteration and site.
func residentWrites(res *ptxgen.Resident, k *ptxgen.Kernel, sites []ptxgen.Range, count uint64, read []ptxgen.Range) uint64 {
	var n uint64
	for _, g := range ptxgen.Groups(k, sites) {
		if !g.Written {
			continue
		}
		var held uint64
		within(g.Range, read, func(r ptxgen.Range) { held += r.Hi - r.Lo - res.ToCopy(r) })
		n += min(held, count*uint64(len(g.Sites))*gvinst.PageSize)
	}
	return n
}

// pageTraffic prices at c what running count iterations of kernel k over
// sites on the CPU would cost in pages going back and forth: bringing
// back what the device holds of their footprints (Fetch) and copying in
// again, at the next launch, the device's pages they write (Refill), each
// counted only where the hot spots launching between this one's instances
// use the pages (interleaved). Pages go page by page: both are priced at
// the rate the guest brought pages back so far (measuredCosts).
func (sp *spot) pageTraffic(c DeviceCosts, k *ptxgen.Kernel, sites []ptxgen.Range, count uint64) (fetch, refill time.Duration) {
	reads, writes := sp.interleaved()
	return c.FetchTime(staleFootprint(&sp.a.resident, k, sites, count, writes)),
		c.FetchTime(residentWrites(&sp.a.resident, k, sites, count, reads))
}

// measuredCosts is the device's costs (a.costs, which must be set) with
// what the run measured since: the kernels' time against the throughput
// model (KernelScale), the launches' copies in and merges where slower
// than the device's bare copies (copyMeter), and the rate pages came back
// at (DeviceToHost, fetchBandwidth). Every prediction prices at them: a
// probed instance's (spot.offload) and an extrapolated replay's
// (replayPays).
func (a *Accelerator) measuredCosts() DeviceCosts {
	c := *a.costs
	c.KernelScale = a.calib.scale()
	c.HostToDevice = a.copyIn.bandwidth(c.HostToDevice)
	c.HostToNewBuffer = a.copyIn.bandwidth(c.HostToNewBuffer)
	c.DeviceToDevice = a.merges.bandwidth(c.DeviceToDevice)
	back, took := a.resident.BroughtBack()
	c.DeviceToHost = fetchBandwidth(c.DeviceToHost, back, took)
	return c
}
