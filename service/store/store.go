// Package store keeps gxbitd's job records, uploaded inputs, output logs and
// artifacts in an embedded bbolt database, so that a restarted daemon loses
// nothing that had finished.
//
// Every change a job goes through is one bbolt transaction: a job is created
// with its inputs at once, and finished with its record, output and artifacts
// at once, so a crash never leaves a half-written job behind.
package store

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/gxbit/gxbit/api"
)

// ErrNotFound is returned (wrapped) when a job or artifact does not exist.
var ErrNotFound = errors.New("not found")

var (
	bucketJobs      = []byte("jobs")
	bucketInputs    = []byte("inputs")
	bucketOutput    = []byte("output")
	bucketArtifacts = []byte("artifacts")
	keyBinary       = []byte("binary")
	keyStdin        = []byte("stdin")
)

// Store is an open job database. It is safe for concurrent use.
type Store struct {
	db *bolt.DB
}

// Artifact is one stored file of a job.
type Artifact struct {
	Name string
	Kind api.ArtifactKind
	Data []byte
}

// Open opens (creating if needed) the database file at path. It fails after
// a few seconds if another process holds the file.
func Open(path string) (*Store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 3 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketJobs, bucketInputs, bucketOutput, bucketArtifacts} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return fmt.Errorf("create bucket %s: %w", b, err)
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: initialise %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

func putJob(tx *bolt.Tx, job *api.Job) error {
	data, err := proto.Marshal(job)
	if err != nil {
		return fmt.Errorf("encode job %s: %w", job.GetId(), err)
	}
	return tx.Bucket(bucketJobs).Put([]byte(job.GetId()), data)
}

func getJob(tx *bolt.Tx, id string) (*api.Job, error) {
	data := tx.Bucket(bucketJobs).Get([]byte(id))
	if data == nil {
		return nil, fmt.Errorf("job %q: %w", id, ErrNotFound)
	}
	job := &api.Job{}
	if err := proto.Unmarshal(data, job); err != nil {
		return nil, fmt.Errorf("decode job %q: %w", id, err)
	}
	return job, nil
}

// CreateJob stores a new job's record with its binary and standard input in
// one transaction. It fails if a job with the same id exists.
func (s *Store) CreateJob(job *api.Job, binary, stdin []byte) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		id := []byte(job.GetId())
		if tx.Bucket(bucketJobs).Get(id) != nil {
			return fmt.Errorf("job %q already exists", job.GetId())
		}
		if err := putJob(tx, job); err != nil {
			return err
		}
		in, err := tx.Bucket(bucketInputs).CreateBucket(id)
		if err != nil {
			return fmt.Errorf("inputs of %q: %w", job.GetId(), err)
		}
		if err := in.Put(keyBinary, binary); err != nil {
			return fmt.Errorf("binary of %q: %w", job.GetId(), err)
		}
		if err := in.Put(keyStdin, stdin); err != nil {
			return fmt.Errorf("stdin of %q: %w", job.GetId(), err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: create: %w", err)
	}
	return nil
}

// UpdateJob replaces an existing job's record.
func (s *Store) UpdateJob(job *api.Job) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		if _, err := getJob(tx, job.GetId()); err != nil {
			return err
		}
		return putJob(tx, job)
	})
	if err != nil {
		return fmt.Errorf("store: update: %w", err)
	}
	return nil
}

// FinishJob stores a finished job's final record, its output log and its
// artifacts, and drops its inputs, in one transaction.
func (s *Store) FinishJob(job *api.Job, output []byte, artifacts []Artifact) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		id := []byte(job.GetId())
		if _, err := getJob(tx, job.GetId()); err != nil {
			return err
		}
		if err := putJob(tx, job); err != nil {
			return err
		}
		if err := tx.Bucket(bucketOutput).Put(id, output); err != nil {
			return fmt.Errorf("output of %q: %w", job.GetId(), err)
		}
		arts := tx.Bucket(bucketArtifacts)
		if arts.Bucket(id) != nil {
			if err := arts.DeleteBucket(id); err != nil {
				return fmt.Errorf("old artifacts of %q: %w", job.GetId(), err)
			}
		}
		if len(artifacts) > 0 {
			b, err := arts.CreateBucket(id)
			if err != nil {
				return fmt.Errorf("artifacts of %q: %w", job.GetId(), err)
			}
			for _, a := range artifacts {
				if err := b.Put([]byte(a.Name), a.Data); err != nil {
					return fmt.Errorf("artifact %q of %q: %w", a.Name, job.GetId(), err)
				}
			}
		}
		if tx.Bucket(bucketInputs).Bucket(id) != nil {
			if err := tx.Bucket(bucketInputs).DeleteBucket(id); err != nil {
				return fmt.Errorf("inputs of %q: %w", job.GetId(), err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: finish: %w", err)
	}
	return nil
}

// Job returns the record of job id.
func (s *Store) Job(id string) (*api.Job, error) {
	var job *api.Job
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		job, err = getJob(tx, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return job, nil
}

// Inputs returns the binary and standard input of a job that has not
// finished yet.
func (s *Store) Inputs(id string) (binary, stdin []byte, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		in := tx.Bucket(bucketInputs).Bucket([]byte(id))
		if in == nil {
			return fmt.Errorf("inputs of job %q: %w", id, ErrNotFound)
		}
		binary = bytes.Clone(in.Get(keyBinary))
		stdin = bytes.Clone(in.Get(keyStdin))
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: %w", err)
	}
	return binary, stdin, nil
}

// Output returns the output log of a finished job (empty if it had none).
func (s *Store) Output(id string) ([]byte, error) {
	var out []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		if _, err := getJob(tx, id); err != nil {
			return err
		}
		out = bytes.Clone(tx.Bucket(bucketOutput).Get([]byte(id)))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return out, nil
}

// Artifact returns the contents of artifact name of job id.
func (s *Store) Artifact(id, name string) ([]byte, error) {
	var data []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		if _, err := getJob(tx, id); err != nil {
			return err
		}
		b := tx.Bucket(bucketArtifacts).Bucket([]byte(id))
		var v []byte
		if b != nil {
			v = b.Get([]byte(name))
		}
		if v == nil {
			return fmt.Errorf("artifact %q of job %q: %w", name, id, ErrNotFound)
		}
		data = bytes.Clone(v)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return data, nil
}

// Filter chooses the jobs a listing returns.
type Filter struct {
	// States keeps the jobs in one of these states; empty keeps all.
	States []api.JobState
	// Owner keeps the jobs of this user; empty keeps everyone's.
	Owner string
}

// Keep reports whether job passes the filter.
func (f Filter) Keep(job *api.Job) bool {
	if f.Owner != "" && job.GetOwner() != f.Owner {
		return false
	}
	if len(f.States) == 0 {
		return true
	}
	for _, st := range f.States {
		if job.GetState() == st {
			return true
		}
	}
	return false
}

// List returns up to limit job records, newest first (job ids sort by
// creation time), starting after the id before (all when before is empty),
// keeping those that pass f. next is the id to pass as before for the
// following page, empty after the last page.
func (s *Store) List(f Filter, limit int, before string) (jobs []*api.Job, next string, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketJobs).Cursor()
		var k, v []byte
		if before == "" {
			k, v = c.Last()
		} else {
			k, v = c.Seek([]byte(before))
			if k == nil {
				k, v = c.Last()
			}
			for k != nil && bytes.Compare(k, []byte(before)) >= 0 {
				k, v = c.Prev()
			}
		}
		for ; k != nil; k, v = c.Prev() {
			job := &api.Job{}
			if err := proto.Unmarshal(v, job); err != nil {
				return fmt.Errorf("decode job %q: %w", k, err)
			}
			if !f.Keep(job) {
				continue
			}
			if len(jobs) == limit {
				next = jobs[len(jobs)-1].GetId()
				return nil
			}
			jobs = append(jobs, job)
		}
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("store: list: %w", err)
	}
	return jobs, next, nil
}

// Recover prepares the store after a (re)start: jobs that were running are
// marked JOB_STATE_INTERRUPTED with the given message and finish time, their
// inputs dropped, and returned as interrupted; jobs still queued are
// returned, oldest first, to be queued again.
func (s *Store) Recover(now time.Time, message string) (queued, interrupted []*api.Job, err error) {
	err = s.db.Update(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketJobs).Cursor()
		var running []*api.Job
		for k, v := c.First(); k != nil; k, v = c.Next() {
			job := &api.Job{}
			if err := proto.Unmarshal(v, job); err != nil {
				return fmt.Errorf("decode job %q: %w", k, err)
			}
			switch job.GetState() {
			case api.JobState_JOB_STATE_RUNNING:
				running = append(running, job)
			case api.JobState_JOB_STATE_QUEUED:
				queued = append(queued, job)
			}
		}
		for _, job := range running {
			job.State = api.JobState_JOB_STATE_INTERRUPTED
			job.Message = message
			job.FinishedAt = timestamppb.New(now)
			if err := putJob(tx, job); err != nil {
				return err
			}
			if tx.Bucket(bucketInputs).Bucket([]byte(job.GetId())) != nil {
				if err := tx.Bucket(bucketInputs).DeleteBucket([]byte(job.GetId())); err != nil {
					return fmt.Errorf("inputs of %q: %w", job.GetId(), err)
				}
			}
		}
		interrupted = running
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: recover: %w", err)
	}
	return queued, interrupted, nil
}

// ErrLeaseLost is returned (wrapped) by a shared store when a replica
// changes a job it no longer holds: its lease expired and another replica
// ended the job.
var ErrLeaseLost = errors.New("this replica no longer holds the job's lease")

// OutputPiece is one piece of a running job's live output log, as a
// shared store keeps it for watchers on other replicas: Data is in the
// output log's encoding.
type OutputPiece struct {
	Seq  int
	Data []byte
}
