package gvinst

import "testing"

// TestCodeWriteReachesEveryEngine: with several engines over one Memory
// (phase 2's main engine beside its probe interpreters, the profiler's
// beside the accelerator's), a host copy into a page translated code came
// from (Poke, as a copy back from the GPU does) drops that page's
// translations in every engine, and a copy into a page of data drops
// nothing.
func TestCodeWriteReachesEveryEngine(t *testing.T) {
	mem := NewMemory(0)
	if err := mem.Map(0x1000, 2*PageSize, PermRead|PermWrite|PermExec); err != nil {
		t.Fatal(err)
	}
	src := `vblock 0x1004..0x1006:
  # 0x1004: syscall
  SYSCALL 0x1006
`
	var its [3]*Interpreter
	var trs [3]*textTranslator
	for i := range its {
		trs[i] = newTextTranslator(t, mem, src)
		its[i] = NewInterpreter(mem, trs[i], InterpOptions{})
	}
	run := func() {
		t.Helper()
		for i, it := range its {
			cpu := &CPU{PC: 0x1004}
			if st := it.Run(cpu, 0); st.Kind != StopSyscall {
				t.Fatalf("engine %d: stop %v", i, st)
			}
		}
	}
	run()
	// Data: nothing is dropped.
	if err := mem.Poke(0x2000, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	run()
	for i, it := range its {
		if n := it.Stats().BlocksInvalidated; n != 0 || trs[i].calls != 1 {
			t.Errorf("engine %d after a write to data: %d invalidated, %d translations, want 0 and 1", i, n, trs[i].calls)
		}
	}
	// Code: every engine drops the block and translates it again.
	if err := mem.Poke(0x1800, []byte{1}); err != nil {
		t.Fatal(err)
	}
	run()
	for i, it := range its {
		if n := it.Stats().BlocksInvalidated; n != 1 || trs[i].calls != 2 {
			t.Errorf("engine %d after a write to code: %d invalidated, %d translations, want 1 and 2", i, n, trs[i].calls)
		}
	}
}
