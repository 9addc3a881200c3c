// Command gxbitd is the gxbit daemon: it runs gxbit jobs (run, profile,
// accelerate, both) submitted over gRPC (service gxbit.v1.JobService, with
// the gRPC health service and server reflection), keeps job records and
// artifacts in a bbolt database under --data, and exports Prometheus metrics
// at /metrics on --metrics-listen.
//
// Usage:
//
//	gxbitd [--listen localhost:7070] [--metrics-listen localhost:7071] [--data DIR] [--workers N] ...
//
// Run `gxbitd -h` for every flag and its default. SIGTERM or SIGINT shut it
// down gracefully: running jobs get --shutdown-grace to finish and are then
// marked interrupted; queued jobs run after the next start.
package main

import (
	"os"

	"github.com/gxbit/gxbit/service/daemon"
)

func main() {
	os.Exit(daemon.Main(os.Args[1:], newExecutor))
}
