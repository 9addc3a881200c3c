package cuda

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// callTrace writes a line per driver call to Options.Trace: when the
// caller asked for it and when it began on its thread (milliseconds
// since the driver was made), how long it ran, the thread (a driver call,
// or a JIT thread), and the call. A call that waited long between the
// two waited for the thread: a JIT compiling on another thread holds the
// driver, and copies and launches queue behind it. Safe for concurrent
// use.
type callTrace struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

// newCallTrace returns a trace writing to w, or nil when w is nil.
func newCallTrace(w io.Writer) *callTrace {
	if w == nil {
		return nil
	}
	t := &callTrace{w: w, start: time.Now()}
	fmt.Fprintf(w, "# driver calls: asked ms, begun ms, took ms, thread, call; ms since unix time %.6f\n", float64(t.start.UnixNano())/1e9)
	return t
}

// record writes one call: op on thread, asked at asked, run from begun
// until now.
func (t *callTrace) record(thread, op string, asked, begun time.Time) {
	if t == nil {
		return
	}
	now := time.Now()
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, "%10.3f %10.3f %9.3f %-6s %s\n", ms(asked.Sub(t.start)), ms(begun.Sub(t.start)), ms(now.Sub(begun)), thread, op)
}
