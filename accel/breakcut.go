package accel

import "github.com/gxbit/gxbit/gvinst"

// breakCutter is the main engine's translator: the guest's lifter, with
// each block cut before every breakpoint inside it, so that a hot spot's
// header starts a block however control reaches it. A header that the
// code before it falls into (the condition block of a loop tested at the
// bottom, as gcc -O0 lays out every loop, reached from the latch) is
// otherwise in the middle of a block at every iteration but the first,
// and only a jump to it stops the engine: a nest whose only instance was
// running when it was armed (gxbit run --accelerate's round ended inside
// it) ran to its end on the CPU. Add and disarm change bps and then
// invalidate the block holding the header, which is translated again
// here.
type breakCutter struct {
	lift gvinst.Translator
	bps  map[uint64]bool
}

// Translate implements gvinst.Translator.
func (t *breakCutter) Translate(addr uint64) (*gvinst.VBlock, error) {
	b, err := t.lift.Translate(addr)
	if err != nil || b == nil {
		return b, err
	}
	for bp := range t.bps {
		if bp > addr && bp < b.End {
			// The cuts end the block at the first breakpoint in it,
			// whatever their order.
			b.SplitAt(bp)
		}
	}
	return b, nil
}
