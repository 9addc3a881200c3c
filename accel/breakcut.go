package accel

import "github.com/gxbit/gxbit/gvinst"

// breakCutter is the main engine's translator: the guest's lifter, with a
// block that runs from inside a hot spot's level into the level's header
// (the latch of a loop tested at the bottom, as gcc -O0 lays out every
// loop, falling into its condition block) cut before the header, so that
// every iteration's arrival there stops the engine. Without the cut only a
// jump to the header stopped it, at the level's entry: a nest whose only
// instance was running when it was armed (gxbit run --accelerate's round
// ended inside it) ran to its end on the CPU. A block from outside the
// level that falls into its header (the code before the loop) is not cut:
// the engine stops there from the loop's second iteration on, as it did
// (cutting there too stopped gcc -O3's matmul at the first, where its
// hot spot's live-in stack slot was not yet affine, and changed which hot
// spots a short run reaches: TestAccelerateLoops, TestBackgroundTranslation).
//
// Once a hot spot's instances are offloaded one after another (replayed,
// as a sequential outer loop's or a time step's are), the iteration the
// CPU runs before that second arrival is the one that costs: it reads
// what the last launch left on the device, a fault and a copy back from
// the device each. LU's two hot spots are each entered that way: their
// first rows ran on the CPU and faulted, 1.2 times a step on an H100
// (1,373 faults in 1,061 steps at 1078 on gpusim; 47 with the cut). Such
// a spot's header is cut from outside its level too (entries,
// spot.cutEntry): its instances start at their first arrival.
type breakCutter struct {
	lift gvinst.Translator
	bps  map[uint64]bool
	// levels holds, per hot spot header, the start addresses of its
	// level's blocks (spot.level).
	levels map[uint64]map[uint64]bool
	// entries are the headers a block from outside their level that
	// falls into them is cut before too.
	entries map[uint64]bool
}

// Translate implements gvinst.Translator.
func (t *breakCutter) Translate(addr uint64) (*gvinst.VBlock, error) {
	b, err := t.lift.Translate(addr)
	if err != nil || b == nil {
		return b, err
	}
	for bp := range t.bps {
		if bp > addr && bp < b.End && (t.levels[bp][addr] || t.entries[bp]) {
			// A block holds one header of a level it is in at most
			// (its own loop's); the cut ends it there.
			b.SplitAt(bp)
		}
	}
	return b, nil
}
