package ptxgen

import "fmt"

// rowStore keeps the guest address of a RowChecked outer store (site id)
// in its %os register; at an inner store (in block), it checks the
// store's bytes against each of them, failing the launch with
// ErrCodeRowStore where they meet (see OuterStoresApart). A kernel
// without checks (Kernel.Unchecked) runs only where a checked launch
// found none.
func (e *emitter) rowStore(id int, block uint64, guest string, size int) {
	a := e.a
	if len(a.rowChecked) == 0 {
		return
	}
	for n, s := range a.rowChecked {
		if s == id {
			e.i("mov.b64", fmt.Sprintf("%%os%d", n), guest)
			return
		}
	}
	if !a.inner[block] || e.unchecked {
		return
	}
	l := fmt.Sprintf("$Lrow%x", e.cur)
	for n, s := range a.rowChecked {
		os := fmt.Sprintf("%%os%d", n)
		end, p := e.t(), e.pred()
		e.i("add.u64", end, os, a.sites[s].Size)
		e.i("setp.lt.u64", p, guest, end)
		e.i("add.u64", end, guest, size)
		e.i("setp.lt.and.u64", p, os, end, p)
		e.i("bra", l).when(p)
	}
	e.stubs[l] = [2]uint64{ErrCodeRowStore, e.cur}
}
