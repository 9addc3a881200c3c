package gpusim

import (
	"encoding/binary"
	"math"
	"math/bits"
	"sort"

	"github.com/gxbit/gxbit/gpu"
)

// allocation is one block of device memory.
type allocation struct {
	base, size uint64
	data       []byte
}

// memory is a context's global memory: allocations at distinct 256-byte
// aligned addresses, kept sorted by address, with an unmapped gap after each
// so that running off the end of one never lands in the next.
type memory struct {
	allocs []*allocation
	next   uint64
	total  uint64
	limit  uint64
}

const (
	heapBase  = uint64(0x7f00_0000_0000) & ^uint64(255)
	allocGap  = 4096
	allocAlgn = 256
)

func newMemory(limit uint64) *memory {
	return &memory{next: heapBase, limit: limit}
}

func (m *memory) alloc(n uint64) (*allocation, error) {
	if n == 0 {
		return nil, gpu.Errorf(gpu.ErrInvalidValue, "cuMemAlloc", "size 0")
	}
	if n > m.limit || m.total+n > m.limit {
		return nil, gpu.Errorf(gpu.ErrOutOfMemory, "cuMemAlloc", "%d bytes requested, %d of %d in use", n, m.total, m.limit)
	}
	a := &allocation{base: m.next, size: n, data: make([]byte, n)}
	m.next = alignUp(m.next+n+allocGap, allocAlgn)
	if m.next >= windowBase {
		return nil, gpu.Errorf(gpu.ErrOutOfMemory, "cuMemAlloc", "device address space exhausted")
	}
	m.total += n
	m.allocs = append(m.allocs, a) // addresses only grow, so the slice stays sorted
	return a, nil
}

func (m *memory) free(p uint64) error {
	i := sort.Search(len(m.allocs), func(i int) bool { return m.allocs[i].base >= p })
	if i == len(m.allocs) || m.allocs[i].base != p {
		return gpu.Errorf(gpu.ErrInvalidValue, "cuMemFree", "0x%x is not an allocation", p)
	}
	m.total -= m.allocs[i].size
	m.allocs = append(m.allocs[:i], m.allocs[i+1:]...)
	return nil
}

// find returns the allocation containing addr, or nil.
func (m *memory) find(addr uint64) *allocation {
	i := sort.Search(len(m.allocs), func(i int) bool { return m.allocs[i].base+m.allocs[i].size > addr })
	if i < len(m.allocs) && m.allocs[i].base <= addr {
		return m.allocs[i]
	}
	return nil
}

// span returns n bytes at device address addr, or an error naming op when
// they are not inside one allocation.
func (m *memory) span(op string, addr, n uint64) ([]byte, error) {
	a := m.find(addr)
	if a == nil || addr+n < addr || addr+n > a.base+a.size {
		return nil, gpu.Errorf(gpu.ErrInvalidValue, op, "range 0x%x+%d is not inside one allocation", addr, n)
	}
	return a.data[addr-a.base : addr-a.base+n], nil
}

// global returns n bytes of global memory at addr, or nil when out of bounds.
func (w *warp) global(addr, n uint64) []byte {
	if addr >= w.gb && addr+n <= w.ge && addr+n > addr {
		return w.gdata[addr-w.gb : addr-w.gb+n]
	}
	a := w.cta.l.mem.find(addr)
	if a == nil || addr+n > a.base+a.size || addr+n < addr {
		return nil
	}
	w.gb, w.ge, w.gdata = a.base, a.base+a.size, a.data
	return a.data[addr-a.base : addr-a.base+n]
}

// resolve maps an address in space sp to n bytes of backing memory for lane,
// or nil when out of bounds. For generic addresses it also returns the
// space the address belongs to.
func (w *warp) resolve(sp memSpace, addr, n uint64, lane int) ([]byte, memSpace) {
	c := w.cta
	if sp == msGeneric {
		switch {
		case addr < windowBase || addr >= windowEnd:
			sp = msGlobal
		case addr < localWindow:
			sp, addr = msShared, addr-sharedWindow
		case addr < constWindow:
			sp, addr = msLocal, addr-localWindow
		case addr < paramWindow:
			sp, addr = msConst, addr-constWindow
		default:
			sp, addr = msKParam, addr-paramWindow
		}
	}
	var mem []byte
	switch sp {
	case msGlobal:
		return w.global(addr, n), sp
	case msShared:
		mem = c.shared
	case msLocal:
		ls := uint64(c.l.k.localSize)
		t := uint64(w.id*32 + lane)
		mem = c.local[t*ls : t*ls+ls]
	case msConst:
		mem = c.l.k.mod.constBank
	case msKParam:
		mem = c.l.params
	}
	if addr+n > uint64(len(mem)) || addr+n < addr {
		return nil, sp
	}
	return mem[addr : addr+n], sp
}

func readN(b []byte, size uint8, signed bool) uint64 {
	switch size {
	case 1:
		if signed {
			return uint64(int64(int8(b[0])))
		}
		return uint64(b[0])
	case 2:
		v := binary.LittleEndian.Uint16(b)
		if signed {
			return uint64(int64(int16(v)))
		}
		return uint64(v)
	case 4:
		v := binary.LittleEndian.Uint32(b)
		if signed {
			return uint64(int64(int32(v)))
		}
		return uint64(v)
	}
	return binary.LittleEndian.Uint64(b)
}

func writeN(b []byte, size uint8, v uint64) {
	switch size {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
}

func (w *warp) address(in *inst, lane int) uint64 {
	a := uint64(in.off)
	if in.base >= 0 {
		a += w.r[in.base][lane]
	}
	return a
}

// access checks alignment and bounds for one lane; on failure it records the
// fault and returns nil.
func (w *warp) access(in *inst, lane int, n uint64) ([]byte, memSpace) {
	addr := w.address(in, lane)
	if addr&(n-1) != 0 {
		w.setFault(gpu.ErrMisalignedAddress, "misaligned address", in, lane, in.space, addr, int(n))
		return nil, in.space
	}
	mem, sp := w.resolve(in.space, addr, n, lane)
	if mem == nil {
		w.setFault(gpu.ErrIllegalAddress, "illegal address", in, lane, in.space, addr, int(n))
	}
	return mem, sp
}

func loadHandler(in *inst) handler {
	if in.base < 0 && in.space == msKParam {
		return opLoadParam
	}
	if len(in.vec) == 1 && in.space == msGlobal && in.size == 4 && in.base >= 0 {
		return opLoadGlobal32
	}
	if len(in.vec) == 1 && in.space == msGlobal && in.size == 8 && in.base >= 0 {
		return opLoadGlobal64
	}
	return opLoad
}

func storeHandler(in *inst) handler {
	if len(in.vec) == 1 && in.space == msGlobal && in.size == 4 && in.base >= 0 {
		return opStoreGlobal32
	}
	if len(in.vec) == 1 && in.space == msGlobal && in.size == 8 && in.base >= 0 {
		return opStoreGlobal64
	}
	return opStore
}

// opLoadParam loads a kernel parameter at a fixed offset: the address and
// so the value are the same for every lane, so it is checked and read once.
func opLoadParam(w *warp, in *inst, m uint32) {
	n := uint64(in.size) * uint64(len(in.vec))
	mem, _ := w.access(in, bits.TrailingZeros32(m)&31, n)
	if mem == nil {
		return
	}
	for i, r := range in.vec {
		v := readN(mem[i*int(in.size):], in.size, in.signed)
		row := &w.r[r]
		if m == fullMask {
			fillRow(row, v)
			continue
		}
		for mm := m; mm != 0; mm &= mm - 1 {
			row[bits.TrailingZeros32(mm)&31] = v
		}
	}
}

func opLoad(w *warp, in *inst, m uint32) {
	n := uint64(in.size) * uint64(len(in.vec))
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		mem, _ := w.access(in, l, n)
		if mem == nil {
			return
		}
		for i, r := range in.vec {
			w.r[r][l] = readN(mem[i*int(in.size):], in.size, in.signed)
		}
	}
}

func opStore(w *warp, in *inst, m uint32) {
	n := uint64(in.size) * uint64(len(in.vec))
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		mem, _ := w.access(in, l, n)
		if mem == nil {
			return
		}
		for i, r := range in.vec {
			writeN(mem[i*int(in.size):], in.size, w.r[r][l])
		}
	}
}

// opLoadStrong is a .volatile/.relaxed/.acquire load: global memory is read
// under the atomics' lock for its address.
func opLoadStrong(w *warp, in *inst, m uint32) {
	n := uint64(in.size) * uint64(len(in.vec))
	l := w.cta.l
	for ; m != 0; m &= m - 1 {
		lane := bits.TrailingZeros32(m) & 31
		mem, sp := w.access(in, lane, n)
		if mem == nil {
			return
		}
		if sp == msGlobal {
			lk := &l.locks[(w.address(in, lane)>>3)&63]
			lk.Lock()
			for i, r := range in.vec {
				w.r[r][lane] = readN(mem[i*int(in.size):], in.size, in.signed)
			}
			lk.Unlock()
			continue
		}
		for i, r := range in.vec {
			w.r[r][lane] = readN(mem[i*int(in.size):], in.size, in.signed)
		}
	}
}

// opStoreStrong is the store counterpart of opLoadStrong.
func opStoreStrong(w *warp, in *inst, m uint32) {
	n := uint64(in.size) * uint64(len(in.vec))
	l := w.cta.l
	for ; m != 0; m &= m - 1 {
		lane := bits.TrailingZeros32(m) & 31
		mem, sp := w.access(in, lane, n)
		if mem == nil {
			return
		}
		if sp == msGlobal {
			lk := &l.locks[(w.address(in, lane)>>3)&63]
			lk.Lock()
			for i, r := range in.vec {
				writeN(mem[i*int(in.size):], in.size, w.r[r][lane])
			}
			lk.Unlock()
			continue
		}
		for i, r := range in.vec {
			writeN(mem[i*int(in.size):], in.size, w.r[r][lane])
		}
	}
}

// opLoadGlobal32 is ld.global of one 32-bit value through a register. The
// allocation last hit by this instruction is tried first.
func opLoadGlobal32(w *warp, in *inst, m uint32) {
	if m == fullMask && in.vec[0] != in.base {
		cs := &w.cta.gcache[in.idx]
		dst := &w.r[in.vec[0]]
		if loadFull32(&w.r[in.base], dst, uint64(in.off), cs.base, cs.data) {
			if in.signed {
				for l := range dst {
					dst[l] = uint64(int64(int32(dst[l])))
				}
			}
			return
		}
	}
	loadGlobal32Lanes(w, in, m)
}

// loadGlobal32Lanes is opLoadGlobal32 one lane at a time, filling the
// allocation cache on a miss and stopping at a faulting lane.
func loadGlobal32Lanes(w *warp, in *inst, m uint32) {
	base := &w.r[in.base]
	dst := &w.r[in.vec[0]]
	off := uint64(in.off)
	signed := in.signed
	cs := &w.cta.gcache[in.idx]
	gb, gdata := cs.base, cs.data
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		addr := base[l] + off
		o := addr - gb
		var v uint32
		if o < uint64(len(gdata)) && uint64(len(gdata))-o >= 4 && addr&3 == 0 {
			v = binary.LittleEndian.Uint32(gdata[o : o+4])
		} else {
			b, _ := w.access(in, l, 4)
			if b == nil {
				return
			}
			v = binary.LittleEndian.Uint32(b)
			if a := w.cta.l.mem.find(addr); a != nil {
				cs.base, cs.data = a.base, a.data
				gb, gdata = a.base, a.data
			}
		}
		if signed {
			dst[l] = uint64(int64(int32(v)))
		} else {
			dst[l] = uint64(v)
		}
	}
}

// loadFull32 loads 32 lanes from one allocation (data at device address
// gb). It reports false when a lane falls outside it or is misaligned; the
// caller then redoes all lanes one by one, which is safe because the
// destination is not the base register. Alignment is checked once for the
// warp, after the loads: a misaligned lane still reads inside data. It is
// not inlined so that its loop keeps every value in a register.
//
//go:noinline
func loadFull32(base, dst *[32]uint64, off, gb uint64, data []byte) bool {
	if len(data) < 4 {
		return false
	}
	lim := uint64(len(data)) - 4 // the last offset a 4-byte load may start at
	var or uint64
	for l := 0; l < 32; l += 2 { // two lanes at a time: one range check
		a0, a1 := base[l]+off, base[l+1]+off
		o0, o1 := a0-gb, a1-gb
		if max(o0, o1) > lim {
			return false
		}
		or |= a0 | a1
		dst[l] = uint64(binary.LittleEndian.Uint32(data[o0 : o0+4]))
		dst[l+1] = uint64(binary.LittleEndian.Uint32(data[o1 : o1+4]))
	}
	return or&3 == 0
}

func opStoreGlobal32(w *warp, in *inst, m uint32) {
	base := &w.r[in.base]
	src := &w.r[in.vec[0]]
	off := uint64(in.off)
	cs := &w.cta.gcache[in.idx]
	gb, gdata := cs.base, cs.data
	if m == fullMask {
		// Lanes store in order, as below, until one leaves the cached
		// allocation; the rest go the per-lane way.
		done := storeFull32(base, src, off, gb, gdata)
		if done == 32 {
			return
		}
		m &^= 1<<uint(done) - 1
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		addr := base[l] + off
		o := addr - gb
		if o < uint64(len(gdata)) && uint64(len(gdata))-o >= 4 && addr&3 == 0 {
			binary.LittleEndian.PutUint32(gdata[o:o+4], uint32(src[l]))
			continue
		}
		b, _ := w.access(in, l, 4)
		if b == nil {
			return
		}
		binary.LittleEndian.PutUint32(b, uint32(src[l]))
		if a := w.cta.l.mem.find(addr); a != nil {
			cs.base, cs.data = a.base, a.data
			gb, gdata = a.base, a.data
		}
	}
}

// storeFull32 stores lanes 0, 1, ... of src into one allocation (data at
// device address gb) while they fall inside it, aligned, and returns the
// number stored: 32, or the first lane the caller must store itself.
//
//go:noinline
func storeFull32(base, src *[32]uint64, off, gb uint64, data []byte) int {
	if len(data) < 4 {
		return 0
	}
	lim := uint64(len(data)) - 4
	for l := range base {
		addr := base[l] + off
		o := addr - gb
		if o > lim || addr&3 != 0 {
			return l
		}
		binary.LittleEndian.PutUint32(data[o:o+4], uint32(src[l]))
	}
	return 32
}

// storeFull64 is storeFull32 for 64-bit values.
//
//go:noinline
func storeFull64(base, src *[32]uint64, off, gb uint64, data []byte) int {
	if len(data) < 8 {
		return 0
	}
	lim := uint64(len(data)) - 8
	for l := range base {
		addr := base[l] + off
		o := addr - gb
		if o > lim || addr&7 != 0 {
			return l
		}
		binary.LittleEndian.PutUint64(data[o:o+8], src[l])
	}
	return 32
}

// opLoadGlobal64 is opLoadGlobal32 for one 64-bit value.
func opLoadGlobal64(w *warp, in *inst, m uint32) {
	if m == fullMask && in.vec[0] != in.base {
		cs := &w.cta.gcache[in.idx]
		if loadFull64(&w.r[in.base], &w.r[in.vec[0]], uint64(in.off), cs.base, cs.data) {
			return
		}
	}
	loadGlobal64Lanes(w, in, m)
}

// loadGlobal64Lanes is loadGlobal32Lanes for 64-bit values.
func loadGlobal64Lanes(w *warp, in *inst, m uint32) {
	base := &w.r[in.base]
	dst := &w.r[in.vec[0]]
	off := uint64(in.off)
	cs := &w.cta.gcache[in.idx]
	gb, gdata := cs.base, cs.data
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		addr := base[l] + off
		o := addr - gb
		if o < uint64(len(gdata)) && uint64(len(gdata))-o >= 8 && addr&7 == 0 {
			dst[l] = binary.LittleEndian.Uint64(gdata[o : o+8])
			continue
		}
		b, _ := w.access(in, l, 8)
		if b == nil {
			return
		}
		dst[l] = binary.LittleEndian.Uint64(b)
		if a := w.cta.l.mem.find(addr); a != nil {
			cs.base, cs.data = a.base, a.data
			gb, gdata = a.base, a.data
		}
	}
}

// loadFull64 is loadFull32 for 64-bit values.
//
//go:noinline
func loadFull64(base, dst *[32]uint64, off, gb uint64, data []byte) bool {
	if len(data) < 8 {
		return false
	}
	lim := uint64(len(data)) - 8
	var or uint64
	for l := 0; l < 32; l += 2 { // two lanes at a time: one range check
		a0, a1 := base[l]+off, base[l+1]+off
		o0, o1 := a0-gb, a1-gb
		if max(o0, o1) > lim {
			return false
		}
		or |= a0 | a1
		dst[l] = binary.LittleEndian.Uint64(data[o0 : o0+8])
		dst[l+1] = binary.LittleEndian.Uint64(data[o1 : o1+8])
	}
	return or&7 == 0
}

func opStoreGlobal64(w *warp, in *inst, m uint32) {
	base := &w.r[in.base]
	src := &w.r[in.vec[0]]
	off := uint64(in.off)
	cs := &w.cta.gcache[in.idx]
	gb, gdata := cs.base, cs.data
	if m == fullMask {
		// Lanes store in order, as below, until one leaves the cached
		// allocation; the rest go the per-lane way.
		done := storeFull64(base, src, off, gb, gdata)
		if done == 32 {
			return
		}
		m &^= 1<<uint(done) - 1
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m) & 31
		addr := base[l] + off
		o := addr - gb
		if o < uint64(len(gdata)) && uint64(len(gdata))-o >= 8 && addr&7 == 0 {
			binary.LittleEndian.PutUint64(gdata[o:o+8], src[l])
			continue
		}
		b, _ := w.access(in, l, 8)
		if b == nil {
			return
		}
		binary.LittleEndian.PutUint64(b, src[l])
		if a := w.cta.l.mem.find(addr); a != nil {
			cs.base, cs.data = a.base, a.data
			gb, gdata = a.base, a.data
		}
	}
}

// opAtom performs atom/red for each active lane in lane order. Global
// memory is shared between workers, so global atomics hold a lock striped
// by address; shared memory belongs to one worker.
func opAtom(w *warp, in *inst, m uint32) {
	n := uint64(in.size)
	l := w.cta.l
	a, b, d := &w.r[in.a], &w.r[in.b], &w.r[in.d]
	for ; m != 0; m &= m - 1 {
		lane := bits.TrailingZeros32(m) & 31
		mem, sp := w.access(in, lane, n)
		if mem == nil {
			return
		}
		var mu interface{ Unlock() }
		if sp == msGlobal {
			lk := &l.locks[(w.address(in, lane)>>3)&63]
			lk.Lock()
			mu = lk
		}
		old := readN(mem, in.size, false)
		var nv uint64
		if in.mode == 1 { // cas
			nv = old
			if old == a[lane]&sizeMask(in.size) {
				nv = b[lane]
			}
		} else {
			nv = in.f2(old, a[lane])
		}
		writeN(mem, in.size, nv)
		if mu != nil {
			mu.Unlock()
		}
		d[lane] = old
	}
}

func sizeMask(size uint8) uint64 {
	if size >= 8 {
		return math.MaxUint64
	}
	return 1<<(8*uint(size)) - 1
}
