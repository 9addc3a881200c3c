package gvinst

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"unsafe"
)

// PageSize is the guest page size.
const PageSize = 4096

const pageMask = PageSize - 1

// Perm is a set of page permissions.
type Perm uint8

// The page permissions.
const (
	PermRead Perm = 1 << iota
	PermWrite
	PermExec
)

// String formats p as "rwx" with dashes for missing permissions.
func (p Perm) String() string {
	b := []byte("---")
	if p&PermRead != 0 {
		b[0] = 'r'
	}
	if p&PermWrite != 0 {
		b[1] = 'w'
	}
	if p&PermExec != 0 {
		b[2] = 'x'
	}
	return string(b)
}

// Access is the kind of memory access that faulted.
type Access uint8

// The access kinds.
const (
	AccessRead Access = iota
	AccessWrite
	AccessExec
)

func (a Access) String() string {
	switch a {
	case AccessWrite:
		return "write"
	case AccessExec:
		return "execute"
	}
	return "read"
}

// Fault is a guest memory access the guest is not allowed to make.
type Fault struct {
	Addr     uint64
	Access   Access
	Unmapped bool // no page is mapped there (otherwise the permission is missing)
	// Stale is set when the page was stale (see Memory.Defer) and bringing
	// its bytes back failed; it is that failure.
	Stale error
}

func (f *Fault) Error() string {
	why := "permission denied"
	switch {
	case f.Stale != nil:
		why = "its bytes could not be brought back: " + f.Stale.Error()
	case f.Unmapped:
		why = "unmapped address"
	}
	return fmt.Sprintf("%s of %#x: %s", f.Access, f.Addr, why)
}

// Unwrap returns the failure to bring a stale page back, if that was the
// cause.
func (f *Fault) Unwrap() error { return f.Stale }

// ErrOutOfMemory is returned when a mapping would exceed the memory limit.
var ErrOutOfMemory = errors.New("guest memory limit exceeded")

// page is a touched guest page: its bytes and the marks holders and the
// translator put on it.
type page struct {
	// data holds the page's bytes, or is nil while the page has none of
	// its own and reads as zeros: a page that only carries marks (stale,
	// watched, code) takes no host page until something writes it. A
	// stale page gets its bytes when they are brought back, so a page a
	// device buffer holds costs the host nothing until the host reads it.
	data *[PageSize]byte
	perm Perm // always the permission of the area holding the page
	code bool // translated code was read from this page
	// stale counts the holders (device buffers) that have newer bytes for
	// part of this page than data; see Memory.Defer.
	stale uint32
	// watched is set while a holder of a copy of the page wants to hear of
	// its next change; see Memory.Watch.
	watched bool
}

// zeroPage stands for every mapped page no one has written yet: reads and
// fetches of an untouched page see its zero bytes, and the read TLB may
// hold it. Nothing ever writes it: a write materializes a page of its own
// first.
var zeroPage = &page{data: new([PageSize]byte)}

// area is a run of mapped pages, first..last (page numbers), that share one
// permission.
type area struct {
	first, last uint64
	perm        Perm
}

// tlbSize is the number of slots of each software TLB. 16384 pages (64 MiB)
// cover a column walk of a large row-major matrix, which touches one page
// per row (256 slots thrashed there: a naive 850x850 matmul ran 4x
// slower), and the two 13.5 MB grids a Jacobi stencil sweeps (4096 slots
// missed on every page of every sweep).
const tlbSize = 16384

// tlbIndex is the TLB slot of page number pn: its low bits, so that
// compiled code finds the entry of an address with a shift and a mask.
// Consecutive pages are in different slots, which lets compiled code check
// the page and a page crossing with one compare (see TLBSlot).
func tlbIndex(pn uint64) uint64 { return pn % tlbSize }

// tlbTag is the tag of page pn's TLB entry: the page's address with every
// offset bit set, which is what an address of the page or'ed with
// pageMask gives. The zero tag of an empty entry is no page's.
func tlbTag(pn uint64) uint64 { return pn*PageSize | pageMask }

// tlbEntry is one software TLB entry. Compiled code reads tag and host
// (see TLBSlots); Go reads p.
type tlbEntry struct {
	tag  uint64  // tlbTag of the page; 0 is empty
	host uintptr // the host address of the page's data minus the page's guest address
	p    *page
	_    uint64
}

// newTLBEntry is the TLB entry of page pn, whose bytes p holds.
func newTLBEntry(pn uint64, p *page) tlbEntry {
	return tlbEntry{tag: tlbTag(pn), host: uintptr(unsafe.Pointer(p.data)) - uintptr(pn*PageSize), p: p}
}

// Memory is the guest's address space: pages the engine owns, with
// permissions. No host pointer is ever visible to the guest. A Memory is not
// safe for concurrent use.
//
// The mappings are kept as ranges (a sorted list of areas, each a run of
// pages with one permission), so mapping, unmapping or protecting any
// amount of memory costs time in the number of mappings, never in the
// number of pages. Host memory is taken for a page only when it is first
// written: until then it reads as zeros from one shared page. A page that
// is only marked (see MarkCode, Defer and Watch) takes an entry of a few
// bytes in the page table, not a page; untouched pages Defer marks take
// not even that (runs of them, staleruns.go). The memory limit counts
// mapped bytes, touched or not, and is checked before anything changes.
//
// A Holder outside the Memory (the GPU's resident buffers) may keep copies
// of pages: it can mark pages stale (Defer), when its copy is newer, so
// that any access brings them back first, and watched (Watch), so that it
// hears of their next change. Every path into a page checks both marks; the
// software TLBs never hold a stale page, nor a watched one for writing.
type Memory struct {
	areas  []area            // sorted by address, disjoint, neighbours of one permission merged
	pages  map[uint64]*page  // the touched pages (written or marked), by page number
	filled uint64            // pages that have bytes of their own
	limit  uint64            // most bytes mapped at once; 0 is no limit
	mapped uint64            // pages mapped
	rtlb   [tlbSize]tlbEntry // readable pages
	wtlb   [tlbSize]tlbEntry // writable pages that hold no translated code
	tlbGen uint64            // counts the changes that may make a TLB entry stale (TLBGeneration)
	// staleRuns are runs of pages stale for one holder and otherwise
	// untouched, with no entry in pages (see staleruns.go).
	staleRuns []pageRun
	// writeEnd is the end of the Write or Poke under way (0 when none),
	// and slab the bytes fill gives its pages without bytes of their own
	// (see fill).
	writeEnd uint64
	slab     []byte
	// spare holds page bytes Release took back, which fill gives the
	// next pages that need bytes (see Release); overwrite names the page
	// the write under way is resolving when it writes all of it, so
	// that a spare page fill gives it need not be cleared first.
	spare     []*[PageSize]byte
	overwrite uint64 // the page number plus one; 0: none
	// settling counts the settles under way (see settleAll): Release
	// does nothing meanwhile.
	settling int
	// OnCodeWrite, if set, is called when the guest writes to a page that
	// translated code was read from (see MarkCode), before the write.
	OnCodeWrite func(pageAddr uint64)
	// OnStale, if set, is called before any access reaches a page that
	// Defer marked stale: a guest load, store or fetch, Read, Write, Peek,
	// Poke, and Map or Unmap over it. addr is the address the access
	// reached the page at (its first byte for Map and Unmap), which tells
	// a holder the stride of a walk. It must write the page's current
	// bytes (with Poke) and Undefer it; an error fails the access.
	OnStale func(addr uint64) error
	// OnStaleDropped, if set, is called instead of OnStale for a stale
	// page whose bytes Map, Unmap or Discard throw away: bringing them
	// back first would be wasted. It must Undefer the page; if the page
	// is still stale after it, OnStale brings it back.
	OnStaleDropped func(pageAddr uint64)
	// OnWatchedWrite, if set, is called before the first change of a
	// page that Watch marked since: a guest store, Write, Poke, or Map or
	// Unmap over it. The page is then no longer watched.
	OnWatchedWrite func(pageAddr uint64)
}

// NewMemory returns an empty address space that maps at most limit bytes (0
// for no limit).
func NewMemory(limit uint64) *Memory {
	return &Memory{pages: make(map[uint64]*page), limit: limit}
}

// Mapped reports the number of bytes mapped, touched or not.
func (m *Memory) Mapped() uint64 {
	if m.mapped > ^uint64(0)/PageSize {
		return ^uint64(0)
	}
	return m.mapped * PageSize
}

// HostBytes reports the number of bytes of host memory the guest's pages
// take: the pages written so far (a page that is only marked takes none).
func (m *Memory) HostBytes() uint64 { return m.filled * PageSize }

// Limit reports the most bytes that may be mapped (0 for no limit).
func (m *Memory) Limit() uint64 { return m.limit }

// flushTLB drops the TLB entries of pages first..last: one by one when the
// range is smaller than the TLB, else all of them.
func (m *Memory) flushTLB(first, last uint64) {
	m.tlbGen++
	if last-first >= tlbSize {
		m.rtlb = [tlbSize]tlbEntry{}
		m.wtlb = [tlbSize]tlbEntry{}
		return
	}
	for pn := first; pn <= last; pn++ {
		i := tlbIndex(pn)
		if m.rtlb[i].tag == tlbTag(pn) {
			m.rtlb[i] = tlbEntry{}
		}
		if m.wtlb[i].tag == tlbTag(pn) {
			m.wtlb[i] = tlbEntry{}
		}
	}
}

func pageRange(addr, size uint64) (first, last uint64, err error) {
	if addr&pageMask != 0 {
		return 0, 0, fmt.Errorf("address %#x is not page aligned", addr)
	}
	if size == 0 {
		return 0, 0, fmt.Errorf("empty range at %#x", addr)
	}
	end := addr + size + pageMask
	if end < addr {
		return 0, 0, fmt.Errorf("range %#x+%#x overflows the address space", addr, size)
	}
	return addr / PageSize, (end&^pageMask)/PageSize - 1, nil
}

// areaAt returns the index of the first area that ends at or after page pn,
// and whether that area holds pn.
func (m *Memory) areaAt(pn uint64) (int, bool) {
	lo, hi := 0, len(m.areas)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if m.areas[mid].last < pn {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < len(m.areas) && m.areas[lo].first <= pn
}

// lookup reports the permission of page pn and whether it is mapped.
func (m *Memory) lookup(pn uint64) (Perm, bool) {
	if p, ok := m.pages[pn]; ok {
		return p.perm, true
	}
	if i, ok := m.areaAt(pn); ok {
		return m.areas[i].perm, true
	}
	return 0, false
}

// mappedIn counts the mapped pages among first..last.
func (m *Memory) mappedIn(first, last uint64) uint64 {
	n := uint64(0)
	for i, _ := m.areaAt(first); i < len(m.areas) && m.areas[i].first <= last; i++ {
		n += min(last, m.areas[i].last) - max(first, m.areas[i].first) + 1
	}
	return n
}

// firstHole returns the first page among first..last that is not mapped.
func (m *Memory) firstHole(first, last uint64) (uint64, bool) {
	pn := first
	for i, _ := m.areaAt(first); i < len(m.areas) && m.areas[i].first <= pn; i++ {
		if m.areas[i].last >= last {
			return 0, false
		}
		pn = m.areas[i].last + 1
	}
	return pn, true
}

// setAreas makes pages first..last mapped with permission perm (mapped
// set) or unmapped, splitting the areas that straddle the range and merging
// neighbours of one permission.
func (m *Memory) setAreas(first, last uint64, perm Perm, mapped bool) {
	i, _ := m.areaAt(first)
	j := i
	for j < len(m.areas) && m.areas[j].first <= last {
		j++
	}
	// areas[i:j] overlap the range; lo..hi also takes in a neighbour on
	// each side, so that equal permissions merge.
	lo, hi := i, j
	var repl []area
	if lo > 0 {
		lo--
		repl = append(repl, m.areas[lo])
	}
	if i < j && m.areas[i].first < first {
		repl = append(repl, area{m.areas[i].first, first - 1, m.areas[i].perm})
	}
	if mapped {
		repl = append(repl, area{first, last, perm})
	}
	if i < j && m.areas[j-1].last > last {
		repl = append(repl, area{last + 1, m.areas[j-1].last, m.areas[j-1].perm})
	}
	if hi < len(m.areas) {
		repl = append(repl, m.areas[hi])
		hi++
	}
	merged := repl[:0]
	for _, a := range repl {
		if n := len(merged); n > 0 && merged[n-1].perm == a.perm && merged[n-1].last+1 == a.first {
			merged[n-1].last = a.last
			continue
		}
		merged = append(merged, a)
	}
	m.areas = slices.Replace(m.areas, lo, hi, merged...)
}

// touched is a touched page and its number.
type touched struct {
	pn uint64
	p  *page
}

// touchedIn returns the touched pages among first..last in ascending order,
// walking whichever is smaller: the range or the touched pages.
func (m *Memory) touchedIn(first, last uint64) []touched {
	m.materializeRuns(first, last)
	var ts []touched
	if last-first < uint64(len(m.pages)) {
		for pn := first; ; pn++ {
			if p, ok := m.pages[pn]; ok {
				ts = append(ts, touched{pn, p})
			}
			if pn == last {
				break
			}
		}
		return ts
	}
	for pn, p := range m.pages {
		if pn >= first && pn <= last {
			ts = append(ts, touched{pn, p})
		}
	}
	slices.SortFunc(ts, func(a, b touched) int { return cmp.Compare(a.pn, b.pn) })
	return ts
}

// materialize gives mapped page pn, untouched so far, bytes of its own.
func (m *Memory) materialize(pn uint64, perm Perm) *page {
	p := &page{perm: perm}
	m.pages[pn] = p
	m.fill(pn, p)
	return p
}

// maxSlabPages is the most pages one allocation of fill gives bytes to,
// and populateMinPages the fewest whose host pages it faults in at once
// (populate).
const (
	maxSlabPages     = 256
	populateMinPages = 16
)

// fill gives page pn, which reads as zeros from no bytes of its own, a
// zeroed page of bytes. Inside a Write or Poke of several pages, the pages
// after pn that have no bytes of their own either get theirs from one
// allocation (slab), made here: a page allocated on its own costs several
// times its copy (bringing back an array born on the device, page by page
// into untouched guest memory, ran at 2-3 GB/s, against 15 GB/s into
// pages the guest had written).
//
// A page Release took back comes first: its host memory is in use
// already, where a page of fresh memory costs the system a page fault
// at its first write, several times the copy (bringing an array born on
// the device back into fresh pages ran at 1.3 GB/s here, 0.8 on an H100
// host, against 20 GB/s into pages the guest had). It is cleared unless
// the access under way overwrites it whole.
func (m *Memory) fill(pn uint64, p *page) {
	if n := len(m.spare); n > 0 {
		p.data = m.spare[n-1]
		m.spare[n-1] = nil
		m.spare = m.spare[:n-1]
		if m.overwrite != pn+1 {
			clear(p.data[:])
		}
		m.filled++
		m.tlbGen++
		if i := tlbIndex(pn); m.rtlb[i].tag == tlbTag(pn) {
			m.rtlb[i] = tlbEntry{}
		}
		return
	}
	if len(m.slab) < PageSize && m.writeEnd > (pn+1)*PageSize {
		n := uint64(1)
		for last := (m.writeEnd - 1) / PageSize; pn+n <= last && n < maxSlabPages; n++ {
			if q, ok := m.pages[pn+n]; ok && q.data != nil {
				break
			}
		}
		if n > 1 {
			m.slab = make([]byte, n*PageSize)
			if n >= populateMinPages {
				populate(m.slab)
			}
		}
	}
	if len(m.slab) >= PageSize {
		p.data = (*[PageSize]byte)(m.slab[:PageSize])
		m.slab = m.slab[PageSize:]
	} else {
		p.data = new([PageSize]byte)
	}
	m.filled++
	m.tlbGen++
	// The read TLB may hold the shared zero page for pn.
	if i := tlbIndex(pn); m.rtlb[i].tag == tlbTag(pn) {
		m.rtlb[i] = tlbEntry{}
	}
}

// touch returns page pn with bytes of its own, materializing it if it was
// untouched; ok is false when pn is not mapped.
func (m *Memory) touch(pn uint64) (*page, bool) {
	p, ok := m.mark(pn)
	if ok && p.data == nil {
		m.fill(pn, p)
	}
	return p, ok
}

// mark returns the page table entry of mapped page pn, to put a mark on,
// adding one without bytes (the page still reads as zeros) if the page
// was untouched; ok is false when pn is not mapped.
func (m *Memory) mark(pn uint64) (*page, bool) {
	if p, ok := m.entry(pn); ok {
		return p, true
	}
	i, ok := m.areaAt(pn)
	if !ok {
		return nil, false
	}
	p := &page{perm: m.areas[i].perm}
	m.pages[pn] = p
	return p, true
}

// bytesFor returns the bytes of page pn (entry p) that access a uses: its
// own, filled first for a write, or the shared zeros for a read of a page
// that has none.
func (m *Memory) bytesFor(pn uint64, p *page, a Access) *page {
	switch {
	case p.data != nil:
		return p
	case a == AccessWrite:
		m.fill(pn, p)
		return p
	}
	return zeroPage
}

// drop forgets the touched pages among first..last (after settle), telling
// OnCodeWrite of those translated code came from.
func (m *Memory) drop(first, last uint64) {
	for _, t := range m.touchedIn(first, last) {
		if t.p.code && m.OnCodeWrite != nil {
			m.OnCodeWrite(t.pn * PageSize)
		}
		if t.p.data != nil {
			m.filled--
		}
		delete(m.pages, t.pn)
	}
}

// Map maps zero-filled pages over [addr, addr+size) with permission perm,
// replacing whatever was mapped there. addr must be page aligned; size is
// rounded up to whole pages. It costs time in the number of mappings and
// touched pages it replaces, not in size.
func (m *Memory) Map(addr, size uint64, perm Perm) error {
	first, last, err := pageRange(addr, size)
	if err != nil {
		return err
	}
	added := last - first + 1 - m.mappedIn(first, last)
	if m.limit != 0 && (added > m.limit/PageSize || m.mapped+added > m.limit/PageSize) {
		return fmt.Errorf("mapping %d bytes at %#x: %w (limit %d bytes)", size, addr, ErrOutOfMemory, m.limit)
	}
	if err := m.settleDropping(first, last); err != nil {
		return err
	}
	m.drop(first, last)
	m.setAreas(first, last, perm, true)
	m.mapped += added
	m.flushTLB(first, last)
	return nil
}

// Unmap removes the pages of [addr, addr+size); pages not mapped are skipped.
func (m *Memory) Unmap(addr, size uint64) error {
	first, last, err := pageRange(addr, size)
	if err != nil {
		return err
	}
	if err := m.settleDropping(first, last); err != nil {
		return err
	}
	m.drop(first, last)
	m.mapped -= m.mappedIn(first, last)
	m.setAreas(first, last, 0, false)
	m.flushTLB(first, last)
	return nil
}

// Discard drops the bytes of the pages of [addr, addr+size), which read as
// zeros again and take no host memory until touched (madvise's
// MADV_DONTNEED); their permissions stay. It fails, changing nothing, if
// any of them is not mapped.
func (m *Memory) Discard(addr, size uint64) error {
	first, last, err := pageRange(addr, size)
	if err != nil {
		return err
	}
	if pn, hole := m.firstHole(first, last); hole {
		return &Fault{Addr: pn * PageSize, Access: AccessWrite, Unmapped: true}
	}
	if err := m.settleDropping(first, last); err != nil {
		return err
	}
	m.drop(first, last)
	m.flushTLB(first, last)
	return nil
}

// Move moves the mappings of [from, from+size) (permissions and bytes) to
// [to, to+size), which must be free, leaving [from, from+size) unmapped
// (mremap). It costs time in the number of mappings and touched pages
// moved, not in size.
func (m *Memory) Move(from, to, size uint64) error {
	first, last, err := pageRange(from, size)
	if err != nil {
		return err
	}
	toFirst, toLast, err := pageRange(to, size)
	if err != nil {
		return err
	}
	if m.mappedIn(toFirst, toLast) != 0 {
		return fmt.Errorf("moving %#x+%#x to %#x: the destination is mapped", from, size, to)
	}
	if err := m.settle(first, last); err != nil {
		return err
	}
	var moved []area
	for i, _ := m.areaAt(first); i < len(m.areas) && m.areas[i].first <= last; i++ {
		a := m.areas[i]
		moved = append(moved, area{max(a.first, first) - first + toFirst, min(a.last, last) - first + toFirst, a.perm})
	}
	pages := map[uint64]*page{}
	for _, t := range m.touchedIn(first, last) {
		if t.p.code && m.OnCodeWrite != nil {
			m.OnCodeWrite(t.pn * PageSize)
		}
		t.p.code = false
		pages[t.pn-first+toFirst] = t.p
		delete(m.pages, t.pn)
	}
	m.setAreas(first, last, 0, false)
	for _, a := range moved {
		m.setAreas(a.first, a.last, a.perm, true)
	}
	for pn, p := range pages {
		m.pages[pn] = p
	}
	m.flushTLB(first, last)
	m.flushTLB(toFirst, toLast)
	return nil
}

// Protect sets the permission of every page of [addr, addr+size). It fails,
// changing nothing, if any of them is not mapped.
func (m *Memory) Protect(addr, size uint64, perm Perm) error {
	first, last, err := pageRange(addr, size)
	if err != nil {
		return err
	}
	if pn, hole := m.firstHole(first, last); hole {
		return &Fault{Addr: pn * PageSize, Access: AccessRead, Unmapped: true}
	}
	m.setAreas(first, last, perm, true)
	for _, t := range m.touchedIn(first, last) {
		t.p.perm = perm
	}
	m.flushTLB(first, last)
	return nil
}

// PermAt reports the permission of the page holding addr, and whether it is
// mapped at all.
func (m *Memory) PermAt(addr uint64) (Perm, bool) { return m.lookup(addr / PageSize) }

// IsMapped reports whether every page of [addr, addr+size) is mapped.
func (m *Memory) IsMapped(addr, size uint64) bool {
	first, last, ok := spanPages(addr, size)
	if !ok {
		return size == 0
	}
	_, hole := m.firstHole(first, last)
	return !hole
}

// HasPerm reports whether every page of [addr, addr+size) is mapped with
// at least the permissions want: one walk over the mapped areas, where
// asking PermAt page by page costs a lookup per page.
func (m *Memory) HasPerm(addr, size uint64, want Perm) bool {
	first, last, ok := spanPages(addr, size)
	if !ok {
		return size == 0
	}
	pn := first
	for i, _ := m.areaAt(first); i < len(m.areas) && m.areas[i].first <= pn; i++ {
		if m.areas[i].perm&want != want {
			return false
		}
		if m.areas[i].last >= last {
			return true
		}
		pn = m.areas[i].last + 1
	}
	return false
}

// IsFree reports whether no page of [addr, addr+size) is mapped; a range
// that wraps the address space is not free.
func (m *Memory) IsFree(addr, size uint64) bool {
	first, last, ok := spanPages(addr, size)
	if !ok {
		return size == 0
	}
	return m.mappedIn(first, last) == 0
}

// FindFree finds the highest page-aligned gap of size bytes that lies within
// [lo, hi) and overlaps no mapped page.
func (m *Memory) FindFree(size, lo, hi uint64) (uint64, bool) {
	size = (size + pageMask) &^ pageMask
	if size == 0 || hi < size || hi-size < lo {
		return 0, false
	}
	n := size / PageSize
	at := (hi - size) / PageSize // the candidate's first page
	loPage := (lo + pageMask) / PageSize
	if lo+pageMask < lo {
		return 0, false
	}
	for i := len(m.areas) - 1; i >= 0; i-- {
		a := m.areas[i]
		if a.first >= at+n {
			continue // above the candidate
		}
		if a.last < at {
			break // below it: the candidate is free
		}
		if a.first < n || a.first-n < loPage {
			return 0, false
		}
		at = a.first - n
	}
	if at < loPage {
		return 0, false
	}
	return at * PageSize, true
}

// spanPages returns the first and last page numbers of [addr, addr+size);
// ok is false for an empty range or one that wraps the address space.
func spanPages(addr, size uint64) (first, last uint64, ok bool) {
	if size == 0 || addr+size-1 < addr {
		return 0, 0, false
	}
	return addr / PageSize, (addr + size - 1) / PageSize, true
}

// Defer marks every page of [addr, addr+size) stale: a holder outside this
// Memory (a device buffer) has newer bytes for part of each, so the bytes
// here must not be used until OnStale has brought them back. Pages stay
// stale until each holder that deferred them calls Undefer. Defer fails,
// marking nothing, if a page is not mapped. An untouched page gets a page
// table entry but no bytes: it takes host memory only once its bytes come
// back (a run of them, not even entries: see staleruns.go).
func (m *Memory) Defer(addr, size uint64) error { return m.deferPages(addr, size, false) }

// Release is Defer for pages whose bytes the holder has too (a device
// buffer that brought them back, and which the guest has not changed
// since): besides marking them stale, it takes back the host memory of
// those that were current, and the next pages that need bytes get it,
// in use already, instead of fresh memory, which costs the system a page
// fault at its first write (see fill). A holder that brings back more
// than the guest keeps reading (an array made on the device and read
// once) so brings the rest back into the same host pages. Release does
// nothing and reports false while Map, Unmap, Discard or Move settle the
// stale pages of their range (see settleAll): a holder bringing one back
// for them must not leave another stale.
func (m *Memory) Release(addr, size uint64) (bool, error) {
	if m.settling > 0 {
		return false, nil
	}
	if err := m.deferPages(addr, size, true); err != nil {
		return false, err
	}
	return true, nil
}

// maxSparePages bounds the pages Release keeps for fill (64 MiB); the
// bytes of pages released past it go to the garbage collector.
const maxSparePages = 16384

// deferPages is Defer, and with release set Release.
func (m *Memory) deferPages(addr, size uint64, release bool) error {
	first, last, ok := spanPages(addr, size)
	if !ok {
		if size == 0 {
			return nil
		}
		return fmt.Errorf("range %#x+%#x overflows the address space", addr, size)
	}
	if pn, hole := m.firstHole(first, last); hole {
		return &Fault{Addr: pn * PageSize, Access: AccessWrite, Unmapped: true}
	}
	// The touched pages (and those of runs: another holder's) take the
	// mark on their entries; the untouched ones between become runs.
	next := first
	for _, t := range m.touchedIn(first, last) {
		if release && t.p.stale == 0 && t.p.data != nil && !t.p.code {
			// (A page stale for another holder keeps the bytes
			// that holder does not bring back; one translated code
			// came from keeps its bytes for the translations.)
			if len(m.spare) < maxSparePages {
				m.spare = append(m.spare, t.p.data)
			}
			t.p.data = nil
			m.filled--
		}
		t.p.stale++
		if t.pn > next {
			m.addRun(next, t.pn-1)
		}
		next = t.pn + 1
	}
	if next <= last && next != 0 {
		m.addRun(next, last)
	}
	// Stale pages must miss in the TLBs, whose hits skip the check.
	m.flushTLB(first, last)
	return nil
}

// Undefer drops one holder's mark from every page of [addr, addr+size)
// (see Defer); pages no longer mapped are skipped.
func (m *Memory) Undefer(addr, size uint64) {
	first, last, ok := spanPages(addr, size)
	if !ok {
		return
	}
	if first == last {
		// A holder's page at a time, the common case.
		if p := m.pages[first]; p != nil {
			if p.stale > 0 {
				p.stale--
			}
		} else if m.inRuns(first) {
			m.cutRuns(first, first) // untouched again
		}
		return
	}
	m.cutRuns(first, last) // the runs' pages: untouched again
	for _, t := range m.touchedIn(first, last) {
		if t.p.stale > 0 {
			t.p.stale--
		}
	}
}

// IsStale reports whether the page holding addr is marked stale.
func (m *Memory) IsStale(addr uint64) bool {
	p, ok := m.pages[addr/PageSize]
	return ok && p.stale != 0 || !ok && m.inRuns(addr/PageSize)
}

// refresh asks OnStale to bring stale page p (holding addr) back before
// access a, and checks it did; a failure is a *Fault naming a and addr.
func (m *Memory) refresh(p *page, addr uint64, a Access) error {
	var err error
	switch {
	case m.OnStale == nil:
		err = errors.New("the page is stale and nothing can bring it back")
	default:
		if err = m.OnStale(addr); err == nil && p.stale != 0 {
			err = errors.New("the page is still stale after bringing it back")
		}
	}
	if err != nil {
		return &Fault{Addr: addr, Access: a, Stale: err}
	}
	return nil
}

// settle refreshes the stale pages among first..last, and reports the
// watched ones changing, before they are replaced or removed.
func (m *Memory) settle(first, last uint64) error { return m.settleAll(first, last, false) }

// settleDropping is settle for pages whose bytes are thrown away: their
// holders drop stale ones (OnStaleDropped) rather than bring them back.
func (m *Memory) settleDropping(first, last uint64) error { return m.settleAll(first, last, true) }

func (m *Memory) settleAll(first, last uint64, dropping bool) error {
	// A holder that brings a page back may release others (Release):
	// not meanwhile, or a page the walk passed would be stale again.
	m.settling++
	defer func() { m.settling-- }()
	if dropping && m.OnStaleDropped != nil {
		m.dropRuns(first, last)
	}
	for _, t := range m.touchedIn(first, last) {
		pn, p := t.pn, t.p
		if p.stale != 0 && dropping && m.OnStaleDropped != nil {
			m.OnStaleDropped(pn * PageSize)
		}
		if p.stale != 0 {
			if err := m.refresh(p, pn*PageSize, AccessWrite); err != nil {
				return err
			}
		}
		if p.watched {
			m.changing(pn, p)
		}
	}
	return nil
}

// Watch marks every mapped page of [addr, addr+size) watched: the next
// change to each calls OnWatchedWrite first. A holder of a copy of guest
// memory (a device buffer) uses it to learn which pages it must copy
// again. An untouched page gets a page table entry but no bytes.
func (m *Memory) Watch(addr, size uint64) {
	first, last, ok := spanPages(addr, size)
	if !ok {
		return
	}
	for i, _ := m.areaAt(first); i < len(m.areas) && m.areas[i].first <= last; i++ {
		for pn := max(first, m.areas[i].first); pn <= min(last, m.areas[i].last); pn++ {
			if p, _ := m.mark(pn); !p.watched {
				p.watched = true
				m.tlbGen++
				// Writes that hit the TLB would not see the mark.
				if i := tlbIndex(pn); m.wtlb[i].tag == tlbTag(pn) {
					m.wtlb[i] = tlbEntry{}
				}
			}
		}
	}
}

// Holder holds copies of guest pages outside the Memory (device buffers):
// some newer than the Memory's (stale pages, see Defer), some that must be
// copied again when the guest changes them (watched pages, see Watch).
type Holder interface {
	// Refresh brings the stale page holding addr, the address an access
	// reached it at, up to date (with Poke) and undefers it.
	Refresh(addr uint64) error
	// Touched hears that the watched page at pageAddr is about to change.
	Touched(pageAddr uint64)
}

// SetHolder routes OnStale to h.Refresh and OnWatchedWrite to h.Touched,
// and OnStaleDropped to h.Dropped where h has that method (a
// DroppingHolder); nil clears them.
func (m *Memory) SetHolder(h Holder) {
	if h == nil {
		m.OnStale, m.OnWatchedWrite, m.OnStaleDropped = nil, nil, nil
		return
	}
	m.OnStale, m.OnWatchedWrite, m.OnStaleDropped = h.Refresh, h.Touched, nil
	if d, ok := h.(DroppingHolder); ok {
		m.OnStaleDropped = d.Dropped
	}
}

// DroppingHolder is a Holder that can forget a stale page whose bytes the
// guest throws away (Map, Unmap or Discard over it) instead of bringing
// it back first.
type DroppingHolder interface {
	Holder
	// Dropped forgets the stale page at pageAddr and undefers it.
	Dropped(pageAddr uint64)
}

// Unwritten returns the runs of at least minPages whole pages of [addr,
// addr+size) that read as zeros from no bytes of their own: mapped,
// readable, and neither written nor left stale by a holder. Each run is
// its first byte's address and its end's, lowest first. A holder that
// copies guest memory elsewhere can make zeros there instead of reading
// and copying them (a device buffer set to zeros: an array the program
// allocated and the launch reads before anything wrote it).
func (m *Memory) Unwritten(addr, size uint64, minPages int) [][2]uint64 {
	if size == 0 || addr+size < addr {
		return nil
	}
	k := uint64(max(minPages, 1))
	first, end := (addr+pageMask)/PageSize, (addr+size)/PageSize // whole pages first..end-1
	zero := func(pn uint64) bool {
		if p, ok := m.pages[pn]; ok {
			return p.data == nil && p.stale == 0
		}
		return !m.inRuns(pn)
	}
	var runs [][2]uint64
	for i, _ := m.areaAt(first); i < len(m.areas) && m.areas[i].first < end; i++ {
		a := m.areas[i]
		lo, hi := max(a.first, first), min(a.last+1, end)
		if a.perm&PermRead == 0 {
			continue
		}
		// A run of k pages or more holds a page whose number is a
		// multiple of k: look at those, and around the ones that read
		// as zeros (pages the guest wrote, most often, cost a look
		// every k pages).
		next := lo // the pages before it are looked at
		for pn := (lo + k - 1) / k * k; pn < hi; pn += k {
			if pn < next || !zero(pn) {
				continue
			}
			s, e := pn, pn+1
			for s > next && zero(s-1) {
				s--
			}
			for e < hi && zero(e) {
				e++
			}
			if e-s >= k {
				runs = append(runs, [2]uint64{s * PageSize, e * PageSize})
			}
			next = e
		}
	}
	return runs
}

// IsWatched reports whether the page holding addr is watched.
func (m *Memory) IsWatched(addr uint64) bool {
	p, ok := m.pages[addr/PageSize]
	return ok && p.watched
}

// changing reports the first change of watched page pn and unwatches it.
func (m *Memory) changing(pn uint64, p *page) {
	p.watched = false
	if m.OnWatchedWrite != nil {
		m.OnWatchedWrite(pn * PageSize)
	}
}

// MarkCode records that translated code was read from the page holding
// addr, so that a later guest write to it calls OnCodeWrite.
func (m *Memory) MarkCode(addr uint64) {
	if p, ok := m.mark(addr / PageSize); ok && !p.code {
		p.code = true
		m.tlbGen++
		m.wtlb[tlbIndex(addr/PageSize)] = tlbEntry{}
	}
}

// ChainCodeWrite makes invalidate (an engine's Invalidate) hear of every
// write to a page translated code came from, before whatever
// mem.OnCodeWrite did already: several engines over one Memory (phase 2's
// main engine and its probes, the profiler's and the accelerator's in one
// run) each drop their translations of the page. The last in the chain
// forgets the page's mark (ClearCode), which the next translation from it
// sets again.
func ChainCodeWrite(mem *Memory, invalidate func(addr, size uint64)) {
	prev := mem.OnCodeWrite
	mem.OnCodeWrite = func(pageAddr uint64) {
		invalidate(pageAddr, PageSize)
		if prev != nil {
			prev(pageAddr)
			return
		}
		mem.ClearCode(pageAddr)
	}
}

// ClearCode forgets that translated code was read from the page holding
// addr (after its translations were dropped), so that writes to it no
// longer call OnCodeWrite until MarkCode marks it again.
func (m *Memory) ClearCode(addr uint64) {
	if p, ok := m.pages[addr/PageSize]; ok {
		p.code = false
	}
}

// allows reports whether permission perm allows access a.
func allows(perm Perm, a Access) bool {
	switch a {
	case AccessWrite:
		return perm&PermWrite != 0
	case AccessExec:
		return perm&PermExec != 0
	}
	return perm&PermRead != 0
}

// pageFor returns the page holding addr if it allows access a. A read or
// fetch of an untouched page gets the shared zero page; a write touches it.
func (m *Memory) pageFor(addr uint64, a Access) (*page, error) {
	pn := addr / PageSize
	if a == AccessWrite {
		if e := &m.wtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) {
			return e.p, nil
		}
	} else if a == AccessRead {
		if e := &m.rtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) {
			return e.p, nil
		}
	}
	p, ok := m.entry(pn)
	if !ok {
		i, mapped := m.areaAt(pn)
		switch {
		case !mapped:
			return nil, &Fault{Addr: addr, Access: a, Unmapped: true}
		case !allows(m.areas[i].perm, a):
			return nil, &Fault{Addr: addr, Access: a}
		case a == AccessRead:
			m.rtlb[tlbIndex(pn)] = newTLBEntry(pn, zeroPage)
			return zeroPage, nil
		case a == AccessExec:
			return zeroPage, nil
		}
		p = m.materialize(pn, m.areas[i].perm)
	}
	if p.stale != 0 {
		if err := m.refresh(p, addr, a); err != nil {
			return nil, err
		}
	}
	if !allows(p.perm, a) {
		return nil, &Fault{Addr: addr, Access: a}
	}
	switch a {
	case AccessRead:
		p = m.bytesFor(pn, p, a)
		m.rtlb[tlbIndex(pn)] = newTLBEntry(pn, p)
	case AccessWrite:
		if p.watched {
			m.changing(pn, p)
		}
		p = m.bytesFor(pn, p, a)
		if p.code {
			if m.OnCodeWrite != nil {
				m.OnCodeWrite(pn * PageSize)
			}
		} else if allows(p.perm, AccessRead) {
			// Only readable pages: compiled code reads through a
			// write TLB hit too (TLBSlots).
			m.wtlb[tlbIndex(pn)] = newTLBEntry(pn, p)
		}
	default:
		p = m.bytesFor(pn, p, a)
	}
	return p, nil
}

// access copies between buf and guest memory at addr, page by page,
// checking access a (or ignoring permissions when force is set).
func (m *Memory) access(addr uint64, buf []byte, a Access, force bool) error {
	if a == AccessWrite && len(buf) > PageSize {
		// Pages filled on the way share allocations (fill). (Nested
		// writes, a holder's Poke from OnStale, end theirs.)
		defer func() { m.writeEnd, m.slab = 0, nil }()
	}
	if a == AccessWrite {
		defer func() { m.overwrite = 0 }()
	}
	for len(buf) > 0 {
		if a == AccessWrite && len(buf) > PageSize {
			m.writeEnd = addr + uint64(len(buf))
		}
		var p *page
		if a == AccessWrite && addr&pageMask == 0 && len(buf) >= PageSize {
			// A spare page this write fills need not be cleared
			// first. (A nested write, a holder's Poke from OnStale,
			// sets its own and leaves none.)
			m.overwrite = addr/PageSize + 1
		}
		if force {
			pn := addr / PageSize
			var ok bool
			if p, ok = m.entry(pn); !ok {
				if _, mapped := m.areaAt(pn); !mapped {
					return &Fault{Addr: addr, Access: a, Unmapped: true}
				}
				p = zeroPage
				if a == AccessWrite {
					p, _ = m.touch(pn)
				}
			}
			if p.stale != 0 {
				if err := m.refresh(p, addr, a); err != nil {
					return err
				}
			}
			if a == AccessWrite && p.watched {
				m.changing(pn, p)
			}
			if a == AccessWrite && p.code && m.OnCodeWrite != nil {
				m.OnCodeWrite(addr &^ pageMask)
			}
			p = m.bytesFor(pn, p, a)
		} else {
			var err error
			if p, err = m.pageFor(addr, a); err != nil {
				return err
			}
		}
		m.overwrite = 0
		off := addr & pageMask
		var n int
		if a == AccessWrite {
			n = copy(p.data[off:], buf)
		} else {
			n = copy(buf, p.data[off:])
		}
		buf = buf[n:]
		addr += uint64(n)
	}
	return nil
}

// Read copies len(buf) bytes of guest memory at addr into buf, as a guest
// read would (the pages must be readable).
func (m *Memory) Read(addr uint64, buf []byte) error { return m.access(addr, buf, AccessRead, false) }

// Write copies buf into guest memory at addr, as a guest write would (the
// pages must be writable).
func (m *Memory) Write(addr uint64, buf []byte) error { return m.access(addr, buf, AccessWrite, false) }

// Fetch reads code bytes at addr for decoding (the pages must be
// executable); it returns as many bytes as are available, up to len(buf),
// and an error only if none is.
func (m *Memory) Fetch(addr uint64, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		p, err := m.pageFor(addr+uint64(n), AccessExec)
		if err != nil {
			if n == 0 {
				return 0, err
			}
			break
		}
		n += copy(buf[n:], p.data[(addr+uint64(n))&pageMask:])
	}
	return n, nil
}

// Peek reads guest memory ignoring page permissions (for the loader and
// the kernel).
func (m *Memory) Peek(addr uint64, buf []byte) error { return m.access(addr, buf, AccessRead, true) }

// Poke writes guest memory ignoring page permissions (for the loader and
// the kernel).
func (m *Memory) Poke(addr uint64, buf []byte) error { return m.access(addr, buf, AccessWrite, true) }

// ReadString reads a NUL-terminated string of at most max bytes at addr.
func (m *Memory) ReadString(addr uint64, max int) (string, error) {
	var out []byte
	for len(out) < max {
		p, err := m.pageFor(addr, AccessRead)
		if err != nil {
			return "", err
		}
		chunk := p.data[addr&pageMask:]
		for i, c := range chunk {
			if c == 0 {
				return string(append(out, chunk[:i]...)), nil
			}
			if len(out)+i+1 >= max {
				break
			}
		}
		out = append(out, chunk...)
		addr += uint64(len(chunk))
	}
	return "", fmt.Errorf("string at %#x longer than %d bytes", addr, max)
}

// Load reads a little-endian value of size 1, 2, 4 or 8 bytes at addr.
func (m *Memory) Load(addr uint64, size int) (uint64, error) {
	if off := addr & pageMask; off+uint64(size) <= PageSize {
		pn := addr / PageSize
		var p *page
		if e := &m.rtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) {
			p = e.p
		} else {
			var err error
			if p, err = m.pageFor(addr, AccessRead); err != nil {
				return 0, err
			}
		}
		d := p.data[off:]
		switch size {
		case 1:
			return uint64(d[0]), nil
		case 2:
			return uint64(binary.LittleEndian.Uint16(d)), nil
		case 4:
			return uint64(binary.LittleEndian.Uint32(d)), nil
		default:
			return binary.LittleEndian.Uint64(d), nil
		}
	}
	var b [8]byte
	if err := m.Read(addr, b[:size]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// Store writes the low size bytes (1, 2, 4 or 8) of v at addr, little-endian.
func (m *Memory) Store(addr uint64, size int, v uint64) error {
	if off := addr & pageMask; off+uint64(size) <= PageSize {
		pn := addr / PageSize
		var p *page
		if e := &m.wtlb[tlbIndex(pn)]; e.tag == tlbTag(pn) {
			p = e.p
		} else {
			var err error
			if p, err = m.pageFor(addr, AccessWrite); err != nil {
				return err
			}
		}
		d := p.data[off:]
		switch size {
		case 1:
			d[0] = byte(v)
		case 2:
			binary.LittleEndian.PutUint16(d, uint16(v))
		case 4:
			binary.LittleEndian.PutUint32(d, uint32(v))
		default:
			binary.LittleEndian.PutUint64(d, v)
		}
		return nil
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return m.Write(addr, b[:size])
}
