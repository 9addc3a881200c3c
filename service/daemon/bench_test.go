package daemon

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/gxbit/gxbit/api"
	"github.com/gxbit/gxbit/service/internal/elftest"
	"github.com/gxbit/gxbit/service/internal/pgtest"
)

// BenchmarkTeamLoad is issue 13's load benchmark: 500 small jobs submitted
// by 20 clients, against one gxbitd on its bbolt store and against 3
// replicas on one PostgreSQL database that commits to disk as bbolt does
// (in this process, each replica with its own job manager, listener and
// connection pool). Jobs do nothing (the fake
// executor), so the numbers are the service's own cost: submit latency
// p50 and p99, and jobs per second from the first submission until every
// job has finished.
//
//	go test ./service/daemon -run '^$' -bench TeamLoad -benchtime 1x
func BenchmarkTeamLoad(b *testing.B) {
	b.Run("bbolt-1", func(b *testing.B) {
		teamLoad(b, func(b *testing.B) []string {
			cfg := testConfig(b.TempDir())
			cfg.Manager.MaxQueued = 1000
			return []string{startDaemon(b, cfg, &fakeExecutor{}).addr}
		})
	})
	b.Run("postgres-3", func(b *testing.B) {
		// A server that commits to disk, as bbolt does; its start is not
		// timed.
		b.StopTimer()
		pg, err := pgtest.StartDurable()
		if err != nil {
			b.Skipf("PostgreSQL cannot be started here: %v", err)
		}
		defer pg.Stop()
		teamLoad(b, func(b *testing.B) []string {
			dsn, err := pg.NewDatabase(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			var addrs []string
			for i := range 3 {
				cfg := testConfig(b.TempDir())
				cfg.Manager.MaxQueued = 1000
				cfg.Store, cfg.Replica, cfg.Lease = dsn, fmt.Sprint("r", i), 15*time.Second
				addrs = append(addrs, startDaemon(b, cfg, &fakeExecutor{}).addr)
			}
			return addrs
		})
	})
}

func teamLoad(b *testing.B, start func(*testing.B) []string) {
	const jobs, clients = 500, 20
	prog := elftest.Build(elftest.Options{})
	for range b.N {
		b.StopTimer()
		addrs := start(b)
		var conns []api.JobServiceClient
		for i := range clients {
			cc, err := grpc.NewClient(addrs[i%len(addrs)], grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				b.Fatal(err)
			}
			defer cc.Close()
			conns = append(conns, api.NewJobServiceClient(cc))
		}
		b.StartTimer()
		ctx := context.Background()
		began := time.Now()
		latencies := make([]time.Duration, jobs)
		ids := make([]string, jobs)
		var wg sync.WaitGroup
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := c; j < jobs; j += clients {
					t0 := time.Now()
					s, err := conns[c].SubmitJob(ctx)
					if err == nil {
						spec := &api.JobSpec{Argv: []string{"prog", fmt.Sprint("n=", j)}, BinarySize: uint64(len(prog))}
						s.Send(&api.SubmitJobRequest{Payload: &api.SubmitJobRequest_Spec{Spec: spec}})
						s.Send(&api.SubmitJobRequest{Payload: &api.SubmitJobRequest_BinaryChunk{BinaryChunk: prog}})
						var resp *api.SubmitJobResponse
						resp, err = s.CloseAndRecv()
						if err == nil {
							ids[j] = resp.GetJobId()
						}
					}
					if err != nil {
						b.Errorf("submit %d: %v", j, err)
						return
					}
					latencies[j] = time.Since(t0)
				}
			}()
		}
		wg.Wait()
		// Wait for every job to end, through the first server.
		for _, id := range ids {
			for {
				j, err := conns[0].GetJob(ctx, &api.GetJobRequest{JobId: id})
				if err != nil {
					b.Fatal(err)
				}
				if isFinished(j.GetState()) {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		elapsed := time.Since(began)
		b.StopTimer()
		sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
		b.ReportMetric(float64(latencies[jobs/2].Microseconds())/1000, "submit-p50-ms")
		b.ReportMetric(float64(latencies[jobs*99/100].Microseconds())/1000, "submit-p99-ms")
		b.ReportMetric(jobs/elapsed.Seconds(), "jobs/s")
		b.StartTimer()
	}
}
