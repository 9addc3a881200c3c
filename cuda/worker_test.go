//go:build linux

package cuda

import (
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestWorker checks the worker without a GPU: every call runs on one OS
// thread, in full before do returns (its writes seen by the caller),
// from many goroutines at once, after the worker has parked (idle past
// spinFor) as while it polls; closing its calls ends it.
func TestWorker(t *testing.T) {
	w := newWorker()
	var tid int
	w.do(func() { tid = syscall.Gettid() })
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				var got, n int
				w.do(func() {
					got = syscall.Gettid()
					for k := 0; k < i%7; k++ {
						n++
					}
				})
				if got != tid || n != i%7 {
					errs <- "a call ran on another thread or not in full before do returned"
					return
				}
				if i%100 == 99 {
					time.Sleep(3 * spinFor) // the worker parks
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	ended := make(chan struct{})
	w.do(func() {})
	go func() {
		_, ok := w.next()
		for ok {
			_, ok = w.next()
		}
		close(ended)
	}()
	close(w.calls)
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("closing the worker's calls did not end it")
	}
}
