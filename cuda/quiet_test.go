package cuda

import (
	"testing"
	"time"
)

// TestWaitIdle checks that waitIdle returns at once when no driver call
// has run, and not while one runs, nor before the quiet spell after the
// call has passed.
func TestWaitIdle(t *testing.T) {
	w := &caller{}
	const quiet = 20 * time.Millisecond
	t0 := time.Now()
	w.waitIdle(quiet)
	if d := time.Since(t0); d > time.Second {
		t.Errorf("idle calls kept waitIdle %v", d)
	}
	started, ended := make(chan struct{}), make(chan time.Time, 1)
	go w.do(func() {
		close(started)
		time.Sleep(60 * time.Millisecond)
		ended <- time.Now()
	})
	<-started
	w.waitIdle(quiet)
	returned := time.Now()
	if end := <-ended; returned.Before(end.Add(quiet)) {
		t.Errorf("waitIdle returned %v after the call ended, before the %v quiet spell passed", returned.Sub(end), quiet)
	}
}
