//go:build linux && amd64

package jit

// placeRoutines puts the routines units call (statusFlags, subConds) and
// those of the return stack (start, miss) at the start of the arena,
// which resetting it keeps.
func (e *Engine) placeRoutines() error {
	for _, r := range []struct {
		emit func(*asm)
		addr *uintptr
	}{{emitStatusFlags, &e.m.flagsFn}, {emitSubConds, &e.m.subCondsFn}, {emitStart, &e.m.startFn}, {emitMiss, &e.m.missFn}} {
		var a asm
		r.emit(&a)
		at, err := e.arena.add(a.bytes())
		if err != nil {
			return err
		}
		*r.addr = e.arena.addr(at)
	}
	e.arena.keep()
	return nil
}
