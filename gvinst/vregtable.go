package gvinst

// vregTable holds a value of type T for some virtual registers, for the
// passes and Verify, which look one up for nearly every instruction: in a
// slice indexed by the register's number below maxDenseVRegs, in a map
// past it (text and fuzzers may name v16777215; lifted blocks stay far
// below). The zero table is empty.
//
// RATIONALE: these were maps; on the blocks of the units a profiling run
// of heat3d compiles, map access, assignment and growth (and iterating
// the maps) were most of what Optimize and Verify cost.
type vregTable[T any] struct {
	dense []vregEntry[T]
	far   map[Reg]T
}

// vregEntry is a dense entry of a vregTable.
type vregEntry[T any] struct {
	v  T
	ok bool
}

// maxDenseVRegs bounds the virtual registers a vregTable keeps in its
// slice: as many as an interpreter frame holds.
const maxDenseVRegs = frameSlots

// get returns the value of virtual register r, if the table has one.
func (t *vregTable[T]) get(r Reg) (T, bool) {
	if i := r.VIndex(); i < len(t.dense) {
		return t.dense[i].v, t.dense[i].ok
	} else if i >= maxDenseVRegs {
		v, ok := t.far[r]
		return v, ok
	}
	var zero T
	return zero, false
}

// has reports whether the table has a value for virtual register r.
func (t *vregTable[T]) has(r Reg) bool {
	_, ok := t.get(r)
	return ok
}

// set makes v the value of virtual register r.
func (t *vregTable[T]) set(r Reg, v T) {
	i := r.VIndex()
	if i >= maxDenseVRegs {
		if t.far == nil {
			t.far = map[Reg]T{}
		}
		t.far[r] = v
		return
	}
	if i >= len(t.dense) {
		n := min(max(i+1, 2*len(t.dense), 64), maxDenseVRegs)
		t.dense = append(t.dense, make([]vregEntry[T], n-len(t.dense))...)
	}
	t.dense[i] = vregEntry[T]{v, true}
}

// remove removes virtual register r's value.
func (t *vregTable[T]) remove(r Reg) {
	if i := r.VIndex(); i < len(t.dense) {
		t.dense[i] = vregEntry[T]{}
	} else if i >= maxDenseVRegs {
		delete(t.far, r)
	}
}
