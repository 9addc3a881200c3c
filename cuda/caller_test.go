package cuda

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCaller checks the driver's caller without a GPU: calls from many
// goroutines at once run one at a time and in full before do returns
// (their writes seen by the caller), and a call goAhead starts runs
// before every call asked for after it.
func TestCaller(t *testing.T) {
	w := &caller{}
	var running, overlaps atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				n := 0
				w.do(func() {
					if running.Add(1) != 1 {
						overlaps.Add(1)
					}
					for k := 0; k < i%7; k++ {
						n++
					}
					running.Add(-1)
				})
				if n != i%7 {
					errs <- "a call did not run in full before do returned"
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if n := overlaps.Load(); n != 0 {
		t.Fatalf("%d calls ran while another did", n)
	}
	if b := w.busy.Load(); b != 0 {
		t.Fatalf("busy is %d with no call under way, want 0", b)
	}

	var order []int
	release := make(chan struct{})
	w.goAhead(func() {
		<-release
		order = append(order, 1)
	})
	done := make(chan struct{})
	go func() {
		w.do(func() { order = append(order, 2) })
		close(done)
	}()
	time.Sleep(10 * time.Millisecond)
	close(release)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a call asked for after goAhead never ran")
	}
	if len(order) != 2 || order[0] != 1 || order[1] != 2 {
		t.Fatalf("calls ran in the order %v, want [1 2]", order)
	}
}
