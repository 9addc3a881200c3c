package cuda

import (
	"testing"
	"time"
)

// TestWaitIdle checks that waitIdle returns at once on an idle worker, and
// while calls keep the worker busy with gaps shorter than the quiet spell
// it waits until they stop, then the quiet spell.
func TestWaitIdle(t *testing.T) {
	w := newWorker()
	defer close(w.calls)
	const quiet = 50 * time.Millisecond
	t0 := time.Now()
	w.waitIdle(quiet)
	if d := time.Since(t0); d > quiet {
		t.Errorf("an idle worker kept waitIdle %v", d)
	}
	stopped := make(chan time.Time)
	go func() {
		end := time.Now().Add(150 * time.Millisecond)
		for time.Now().Before(end) {
			w.do(func() { time.Sleep(2 * time.Millisecond) })
			time.Sleep(2 * time.Millisecond)
		}
		stopped <- time.Now()
	}()
	time.Sleep(10 * time.Millisecond) // the calls are under way
	w.waitIdle(quiet)
	returned := time.Now()
	last := <-stopped
	if returned.Before(last.Add(quiet - 5*time.Millisecond)) {
		t.Errorf("waitIdle returned %v before the calls stopped and the quiet spell passed", last.Add(quiet).Sub(returned))
	}
}
