package gvinst

import "slices"

// Stale runs (RATIONALE).
//
// A device buffer that a kernel fills leaves every page of it stale in the
// guest (Defer): an array made on the device (an initialisation nest's)
// is hundreds of thousands of pages nothing on the host ever touched. A
// page table entry for each cost about 100 ms a gigabyte (allocating the
// entries and growing the table) in the launch that made the array, and
// their memory and the collector's time after it. So Defer keeps the
// untouched pages it marks as runs, first..last, of pages stale for one
// holder and otherwise untouched, with no entry: entry gives a page of a
// run an entry of its own (stale for that holder) the moment anything
// looks at it, and Undefer cuts the pages it clears out of the runs,
// leaving them untouched again.

// pageRun is a run of pages, first..last.
type pageRun struct{ first, last uint64 }

// runAt returns the index of the first stale run that ends at or after
// page pn, and whether that run holds pn.
func (m *Memory) runAt(pn uint64) (int, bool) {
	i, _ := slices.BinarySearchFunc(m.staleRuns, pn, func(r pageRun, pn uint64) int {
		switch {
		case r.last < pn:
			return -1
		case r.first > pn:
			return 1
		}
		return 0
	})
	return i, i < len(m.staleRuns) && m.staleRuns[i].first <= pn && pn <= m.staleRuns[i].last
}

// entry returns the page table entry of page pn: the table's, or, for a
// page of a stale run, a new one, stale for one holder, taken out of the
// run. ok is false for a page with neither (untouched, or not mapped).
func (m *Memory) entry(pn uint64) (*page, bool) {
	if p, ok := m.pages[pn]; ok {
		return p, true
	}
	if len(m.staleRuns) == 0 {
		return nil, false
	}
	if _, in := m.runAt(pn); !in {
		return nil, false
	}
	m.cutRuns(pn, pn)
	a, _ := m.areaAt(pn) // a page of a run is mapped
	p := &page{perm: m.areas[a].perm, stale: 1}
	m.pages[pn] = p
	return p, true
}

// cutRuns takes pages first..last out of the stale runs.
func (m *Memory) cutRuns(first, last uint64) {
	i, _ := m.runAt(first)
	j := i
	for j < len(m.staleRuns) && m.staleRuns[j].first <= last {
		j++
	}
	if i == j {
		return
	}
	var keep []pageRun
	if r := m.staleRuns[i]; r.first < first {
		keep = append(keep, pageRun{r.first, first - 1})
	}
	if r := m.staleRuns[j-1]; r.last > last {
		keep = append(keep, pageRun{last + 1, r.last})
	}
	m.staleRuns = slices.Replace(m.staleRuns, i, j, keep...)
}

// materializeRuns gives every page of first..last in a stale run its
// entry, so that a walk of the touched pages (touchedIn) sees it.
func (m *Memory) materializeRuns(first, last uint64) {
	if len(m.staleRuns) == 0 {
		return
	}
	for i, _ := m.runAt(first); i < len(m.staleRuns) && m.staleRuns[i].first <= last; i++ {
		r := m.staleRuns[i]
		for pn := max(r.first, first); pn <= min(r.last, last); pn++ {
			a, _ := m.areaAt(pn)
			m.pages[pn] = &page{perm: m.areas[a].perm, stale: 1}
		}
	}
	m.cutRuns(first, last)
}

// addRun makes pages first..last, untouched and in no run, a stale run,
// joined with the runs it touches.
func (m *Memory) addRun(first, last uint64) {
	i, _ := m.runAt(first)
	if i > 0 && m.staleRuns[i-1].last+1 == first {
		i--
		first = m.staleRuns[i].first
		m.staleRuns = slices.Delete(m.staleRuns, i, i+1)
	}
	if i < len(m.staleRuns) && m.staleRuns[i].first == last+1 {
		last = m.staleRuns[i].last
		m.staleRuns = slices.Delete(m.staleRuns, i, i+1)
	}
	m.staleRuns = slices.Insert(m.staleRuns, i, pageRun{first, last})
}

// inRuns reports whether page pn is in a stale run.
func (m *Memory) inRuns(pn uint64) bool {
	if len(m.staleRuns) == 0 {
		return false
	}
	_, in := m.runAt(pn)
	return in
}

// dropRuns tells OnStaleDropped of every page of first..last in a stale
// run, without giving it an entry: the holder undefers it (an array the
// device held, freed at the end of a run, is a quarter of a million pages
// a gigabyte). A page the holder leaves stale stops the walk; settling
// then brings it back.
func (m *Memory) dropRuns(first, last uint64) {
	for i, _ := m.runAt(first); i < len(m.staleRuns) && m.staleRuns[i].first <= last; {
		pn := max(m.staleRuns[i].first, first)
		m.OnStaleDropped(pn * PageSize)
		if m.inRuns(pn) {
			return
		}
		if pn == last {
			return
		}
		i, _ = m.runAt(pn + 1)
	}
}
