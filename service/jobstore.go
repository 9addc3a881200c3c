package service

import (
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
