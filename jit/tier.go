//go:build linux && amd64

package jit

import (
	"errors"

	"github.com/gxbit/gxbit/gvinst"
)

// cold reports whether the engine runs the block at pc on its interpreter:
// tiering is on (InterpOptions.HotAfter) and pc has no compiled unit.
func (e *Engine) cold(pc uint64) bool {
	if e.opts.HotAfter == 0 {
		return false
	}
	_, ok := e.byAddr[pc]
	return !ok
}

// runCold runs the guest from pc on the interpreter, whose frame is its
// own, until it stops: StopHot at a block to compile, or any other stop,
// which ends Run. executed is what Run has counted of budget (0: none); it
// returns the stop and the guest instructions the interpreter ran.
func (e *Engine) runCold(pc, budget, executed uint64) (gvinst.Stop, uint64) {
	var cpu gvinst.CPU
	copy(cpu.State[:], e.m.frame[:gvinst.NumGuestSlots])
	cpu.PC = pc
	left := uint64(0)
	if budget != 0 {
		left = budget - executed
	}
	before := e.interp.Stats()
	st := e.interp.Run(&cpu, left)
	after := e.interp.Stats()
	copy(e.m.frame[:gvinst.NumGuestSlots], cpu.State[:])
	n := after.GuestInsns - before.GuestInsns
	e.stats.InterpInsns += n
	e.stats.BlocksTranslated += after.BlocksTranslated - before.BlocksTranslated
	e.stats.BlocksInvalidated += after.BlocksInvalidated - before.BlocksInvalidated
	e.stats.Traps += after.Traps - before.Traps
	e.stats.Syscalls += after.Syscalls - before.Syscalls
	return st, n
}

// translate returns the verified VBlock at pc, not optimized: the
// interpreter's, when it has run the block (cold code that got hot: there
// is no second lifting), else the translator's, counted as translated.
func (e *Engine) translate(pc uint64) (*gvinst.VBlock, error) {
	if vb := e.interp.Translated(pc); vb != nil {
		return vb, nil
	}
	e.stats.BlocksTranslated++
	vb, err := e.tr.Translate(pc)
	if err != nil {
		return nil, &gvinst.TranslateError{Addr: pc, Err: err}
	}
	if vb == nil || vb.Addr != pc {
		return nil, &gvinst.TranslateError{Addr: pc, Err: errors.New("the translator returned no block for this address")}
	}
	if err := gvinst.Verify(vb); err != nil {
		return nil, &gvinst.TranslateError{Addr: pc, Err: err}
	}
	return vb, nil
}
