//go:build !linux

package accel

import "time"

// ThreadCPUTime is 0 where the thread's CPU clock is not read: the cost
// model then times the CPU engine by the wall clock.
func ThreadCPUTime() time.Duration { return 0 }
