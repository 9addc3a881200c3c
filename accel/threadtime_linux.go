package accel

import (
	"time"

	"golang.org/x/sys/unix"
)

// ThreadCPUTime is the CPU time the calling OS thread has used so far (0
// when the clock cannot be read). Timed on one locked thread, it prices
// the CPU engine by the work it does, whatever share of the machine the
// run gets: on a loaded host wall time also counts the waits for a core.
func ThreadCPUTime() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
