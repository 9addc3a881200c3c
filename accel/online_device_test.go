package accel_test

import (
	"context"
	"testing"
	"time"

	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
)

// TestRunOnlineOpensDeviceAtStart runs gxbit run --accelerate on a real
// GPU (as far as phase 2 can tell) with a program that ends long before
// its first profiling round would begin: the device's context still
// starts opening at the start, on the loader, so that a longer program's
// first round finds it ready (the matrix-vector programs' initialisation
// nests otherwise made most of their matrix on the CPU while it opened);
// by the end it is closed, and the program's status is its own.
func TestRunOnlineOpensDeviceAtStart(t *testing.T) {
	quiet := compileStatic(t, "quiet", "int main(void) { return 3; }")
	drv := gpuNamed{Driver: gpusim.New(gpusim.Options{}), opens: make(chan struct{}, 4), closes: make(chan struct{}, 4)}
	res, on, err := pipeline.RunOnline(context.Background(), pipeline.Config{Path: quiet, Engine: testEngine}, pipeline.OnlineOptions{Driver: drv, ProfileAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitStatus != 3 || on.Rounds != 0 {
		t.Errorf("status %d after %d rounds, want 3 after none", res.ExitStatus, on.Rounds)
	}
	for _, c := range []struct {
		what string
		ch   chan struct{}
	}{{"opened", drv.opens}, {"closed", drv.closes}} {
		select {
		case <-c.ch:
		case <-time.After(time.Minute):
			t.Fatalf("no context was %s", c.what)
		}
	}
}
