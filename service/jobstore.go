package service

import (
	"context"
	"time"

	"github.com/gxbit/gxbit/api"
	"github.com/gxbit/gxbit/service/store"
)

// JobStore keeps job records, the inputs of unfinished jobs, output logs
// and artifacts. The bbolt store of package service/store is one, for a
// single gxbitd; a SharedStore is one that several replicas share.
type JobStore interface {
	// CreateJob stores a new queued job with its inputs.
	CreateJob(job *api.Job, binary, stdin []byte) error
	// UpdateJob replaces the record of an unfinished job.
	UpdateJob(job *api.Job) error
	// FinishJob stores a job's final record, output log and artifacts at
	// once and drops its inputs.
	FinishJob(job *api.Job, output []byte, artifacts []store.Artifact) error
	// Job returns a job's record; errors wrap store.ErrNotFound for an
	// unknown job.
	Job(id string) (*api.Job, error)
	// Inputs returns an unfinished job's binary and standard input.
	Inputs(id string) (binary, stdin []byte, err error)
	// Output returns a finished job's output log (see encodeOutput).
	Output(id string) ([]byte, error)
	// Artifact returns one artifact of a finished job.
	Artifact(id, name string) ([]byte, error)
	// List returns a page of job records, newest first.
	List(f store.Filter, limit int, before string) (jobs []*api.Job, next string, err error)
	// Close releases the store.
	Close() error
}

// LocalStore is a JobStore that one gxbitd owns alone: at start it marks
// the jobs its previous process was running as interrupted and hands back
// the queued ones, which the job manager queues in memory.
type LocalStore interface {
	JobStore
	Recover(now time.Time, message string) (queued, interrupted []*api.Job, err error)
}

// SharedStore is a JobStore that several gxbitd replicas share, and that
// is also the job queue: each replica claims queued jobs for itself, holds
// a lease on each while it runs it, and ends the jobs of replicas whose
// leases ran out (package service/pgstore).
type SharedStore interface {
	JobStore
	// Replica names this replica.
	Replica() string
	// Lease is how long a claim lasts without renewal.
	Lease() time.Duration
	// Claim takes the oldest queued job nobody holds; nil when none.
	Claim(ctx context.Context) (*api.Job, error)
	// Renew extends this replica's leases and returns the ids of its jobs
	// a client asked (through any replica) to cancel.
	Renew(ctx context.Context) (cancel []string, err error)
	// Expire ends the leases that ran out: running jobs become
	// interrupted with message, claimed ones are queued again.
	Expire(ctx context.Context, message string) (interrupted []*api.Job, requeued []string, err error)
	// RecoverReplica does the same for the leases an earlier process of
	// this replica's name left behind; it is called once, at start.
	RecoverReplica(ctx context.Context, message string) (interrupted []*api.Job, requeued []string, err error)
	// RequestCancel asks the replica that runs a job to cancel it.
	RequestCancel(id string) error
	// AppendOutput and LiveOutput keep a running job's output for
	// watchers on other replicas.
	AppendOutput(id string, seq int, data []byte) error
	LiveOutput(id string, after int) ([]store.OutputPiece, error)
	// QueueDepth counts the queued jobs of all replicas.
	QueueDepth(ctx context.Context) (int, error)
	// Release hands back the jobs this replica claimed and has not started.
	Release(ctx context.Context) (int, error)
}
