// Package pgstore keeps gxbitd's jobs in a PostgreSQL database that several
// gxbitd replicas share: the job records and their state history, the
// inputs of unfinished jobs, the output logs (live, while a job runs, and
// final) and the artifacts. The database is also the job queue.
//
// A replica claims the oldest queued job with SELECT … FOR UPDATE SKIP
// LOCKED and holds a lease on it, which it renews while it runs the job. A
// job is finished only by the replica that holds its lease (or, while it is
// still queued and unclaimed, by a cancellation), so it never finishes
// twice. When a replica dies its leases expire, and any other replica then
// marks its running jobs interrupted and queues its claimed ones again.
//
// The schema is versioned; Open applies the missing migrations in order,
// under an advisory lock so that replicas starting together do not race.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/gxbit/gxbit/api"
	"github.com/gxbit/gxbit/service/store"
)

// migrations are the schema's versions: migrations[i] takes the schema
// from version i to i+1. Never edit one that has shipped; append.
var migrations = []string{
	// 1: jobs, their inputs, state history, output and artifacts.
	`CREATE TABLE jobs (
		id text PRIMARY KEY,
		state integer NOT NULL,
		owner text NOT NULL DEFAULT '',
		record bytea NOT NULL,
		replica text,
		lease_until timestamptz,
		cancel_requested boolean NOT NULL DEFAULT false,
		output bytea
	);
	CREATE INDEX jobs_queued ON jobs (id) WHERE state = 1;
	CREATE INDEX jobs_leased ON jobs (lease_until) WHERE replica IS NOT NULL;
	CREATE INDEX jobs_owner ON jobs (owner, id);
	CREATE TABLE job_inputs (
		job_id text PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
		binary_data bytea NOT NULL,
		stdin bytea NOT NULL
	);
	CREATE TABLE job_states (
		job_id text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
		seq bigserial,
		at timestamptz NOT NULL DEFAULT now(),
		state integer NOT NULL,
		message text NOT NULL DEFAULT '',
		replica text NOT NULL DEFAULT '',
		PRIMARY KEY (job_id, seq)
	);
	CREATE TABLE job_output (
		job_id text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
		seq integer NOT NULL,
		data bytea NOT NULL,
		PRIMARY KEY (job_id, seq)
	);
	CREATE TABLE job_artifacts (
		job_id text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
		name text NOT NULL,
		kind integer NOT NULL,
		data bytea NOT NULL,
		PRIMARY KEY (job_id, name)
	);`,
}

// migrationLock is the advisory lock key held while migrating.
const migrationLock = 0x67786269 // "gxbi"

const (
	stateQueued  = int32(api.JobState_JOB_STATE_QUEUED)
	stateRunning = int32(api.JobState_JOB_STATE_RUNNING)
)

// opTimeout bounds each database operation.
const opTimeout = 30 * time.Second

// Store is a job store in PostgreSQL, as seen by one replica.
type Store struct {
	pool    *pgxpool.Pool
	replica string
	lease   time.Duration
}

// Open connects to the database at dsn (a postgres:// URL), applies the
// schema's migrations, and returns the store of the replica named replica,
// whose leases last lease.
func Open(ctx context.Context, dsn, replica string, lease time.Duration) (*Store, error) {
	if replica == "" {
		return nil, errors.New("pgstore: the replica needs a name")
	}
	if lease < time.Second {
		return nil, fmt.Errorf("pgstore: a lease of %v is too short; use at least a second", lease)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgstore: the connection string: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	s := &Store{pool: pool, replica: replica, lease: lease}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// SchemaVersion is the schema version this code needs.
func SchemaVersion() int { return len(migrations) }

func (s *Store) migrate(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return fmt.Errorf("pgstore: connecting: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return fmt.Errorf("pgstore: migrations table: %w", err)
		}
		var have int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
			return fmt.Errorf("pgstore: schema version: %w", err)
		}
		if have > len(migrations) {
			return fmt.Errorf("pgstore: the database has schema version %d, newer than this gxbitd knows (%d); upgrade gxbitd", have, len(migrations))
		}
		for v := have + 1; v <= len(migrations); v++ {
			if _, err := tx.Exec(ctx, migrations[v-1]); err != nil {
				return fmt.Errorf("pgstore: migration %d: %w", v, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, v); err != nil {
				return fmt.Errorf("pgstore: migration %d: %w", v, err)
			}
		}
		return nil
	})
}

// Close closes the connections.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Replica is the name of this replica.
func (s *Store) Replica() string { return s.replica }

// Lease is how long a claim lasts without renewal.
func (s *Store) Lease() time.Duration { return s.lease }

func opContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), opTimeout)
}

func decode(id string, data []byte) (*api.Job, error) {
	job := &api.Job{}
	if err := proto.Unmarshal(data, job); err != nil {
		return nil, fmt.Errorf("decode job %q: %w", id, err)
	}
	return job, nil
}

func encode(job *api.Job) ([]byte, error) {
	data, err := proto.Marshal(job)
	if err != nil {
		return nil, fmt.Errorf("encode job %s: %w", job.GetId(), err)
	}
	return data, nil
}

// history records a state change.
func (s *Store) history(ctx context.Context, tx pgx.Tx, job *api.Job) error {
	_, err := tx.Exec(ctx, `INSERT INTO job_states (job_id, state, message, replica) VALUES ($1, $2, $3, $4)`,
		job.GetId(), int32(job.GetState()), job.GetMessage(), s.replica)
	if err != nil {
		return fmt.Errorf("state history of %s: %w", job.GetId(), err)
	}
	return nil
}

// CreateJob stores a new queued job with its inputs.
func (s *Store) CreateJob(job *api.Job, binary, stdin []byte) error {
	ctx, cancel := opContext()
	defer cancel()
	data, err := encode(job)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO jobs (id, state, owner, record) VALUES ($1, $2, $3, $4)`,
			job.GetId(), int32(job.GetState()), job.GetOwner(), data); err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "23505" {
				return fmt.Errorf("job %q already exists", job.GetId())
			}
			return err
		}
		if binary == nil {
			binary = []byte{}
		}
		if stdin == nil {
			stdin = []byte{}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO job_inputs (job_id, binary_data, stdin) VALUES ($1, $2, $3)`, job.GetId(), binary, stdin); err != nil {
			return err
		}
		return s.history(ctx, tx, job)
	})
	if err != nil {
		return fmt.Errorf("pgstore: create: %w", err)
	}
	return nil
}

// UpdateJob replaces the record of a job this replica holds the lease of.
func (s *Store) UpdateJob(job *api.Job) error {
	ctx, cancel := opContext()
	defer cancel()
	data, err := encode(job)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE jobs SET state = $2, record = $3 WHERE id = $1 AND replica = $4 AND state IN (1, 2)`,
			job.GetId(), int32(job.GetState()), data, s.replica)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("job %s: %w", job.GetId(), store.ErrLeaseLost)
		}
		return s.history(ctx, tx, job)
	})
	if err != nil {
		return fmt.Errorf("pgstore: update: %w", err)
	}
	return nil
}

// FinishJob stores a job's final record, output log and artifacts and
// drops its inputs, all at once. It succeeds only on a job this replica
// holds the lease of, or on a queued job nobody has claimed; otherwise the
// job has been finished elsewhere and the error wraps store.ErrLeaseLost.
func (s *Store) FinishJob(job *api.Job, output []byte, artifacts []store.Artifact) error {
	ctx, cancel := opContext()
	defer cancel()
	data, err := encode(job)
	if err != nil {
		return err
	}
	if output == nil {
		output = []byte{}
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE jobs SET state = $2, record = $3, output = $4, replica = NULL, lease_until = NULL
			WHERE id = $1 AND (replica = $5 AND state IN (1, 2) OR replica IS NULL AND state = 1)`,
			job.GetId(), int32(job.GetState()), data, output, s.replica)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("job %s: %w", job.GetId(), store.ErrLeaseLost)
		}
		// The final log replaces the live one.
		for _, table := range []string{"job_inputs", "job_output", "job_artifacts"} {
			if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE job_id = $1`, job.GetId()); err != nil {
				return err
			}
		}
		for _, a := range artifacts {
			if _, err := tx.Exec(ctx, `INSERT INTO job_artifacts (job_id, name, kind, data) VALUES ($1, $2, $3, $4)`,
				job.GetId(), a.Name, int32(a.Kind), a.Data); err != nil {
				return fmt.Errorf("artifact %q: %w", a.Name, err)
			}
		}
		return s.history(ctx, tx, job)
	})
	if err != nil {
		return fmt.Errorf("pgstore: finish: %w", err)
	}
	return nil
}

// Job returns a job's record.
func (s *Store) Job(id string) (*api.Job, error) {
	ctx, cancel := opContext()
	defer cancel()
	var data []byte
	err := s.pool.QueryRow(ctx, `SELECT record FROM jobs WHERE id = $1`, id).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("pgstore: job %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: job %q: %w", id, err)
	}
	return decode(id, data)
}

// Inputs returns an unfinished job's binary and standard input.
func (s *Store) Inputs(id string) (binary, stdin []byte, err error) {
	ctx, cancel := opContext()
	defer cancel()
	err = s.pool.QueryRow(ctx, `SELECT binary_data, stdin FROM job_inputs WHERE job_id = $1`, id).Scan(&binary, &stdin)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, fmt.Errorf("pgstore: inputs of job %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("pgstore: inputs of job %q: %w", id, err)
	}
	return binary, stdin, nil
}

// Output returns a finished job's output log (empty for an unfinished one).
func (s *Store) Output(id string) ([]byte, error) {
	ctx, cancel := opContext()
	defer cancel()
	var out []byte
	err := s.pool.QueryRow(ctx, `SELECT output FROM jobs WHERE id = $1`, id).Scan(&out)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("pgstore: job %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: output of job %q: %w", id, err)
	}
	return out, nil
}

// Artifact returns one artifact of a job.
func (s *Store) Artifact(id, name string) ([]byte, error) {
	ctx, cancel := opContext()
	defer cancel()
	var data []byte
	err := s.pool.QueryRow(ctx, `SELECT data FROM job_artifacts WHERE job_id = $1 AND name = $2`, id, name).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("pgstore: artifact %q of job %q: %w", name, id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: artifact %q of job %q: %w", name, id, err)
	}
	return data, nil
}

// List returns up to limit job records that pass f, newest first, after
// the id before; next is the id to pass for the following page.
func (s *Store) List(f store.Filter, limit int, before string) (jobs []*api.Job, next string, err error) {
	ctx, cancel := opContext()
	defer cancel()
	states := make([]int32, 0, len(f.States))
	for _, st := range f.States {
		states = append(states, int32(st))
	}
	rows, err := s.pool.Query(ctx, `SELECT id, record FROM jobs
		WHERE ($1 = '' OR id < $1) AND ($2 = '' OR owner = $2) AND (cardinality($3::integer[]) = 0 OR state = ANY($3))
		ORDER BY id DESC LIMIT $4`, before, f.Owner, states, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("pgstore: list: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var data []byte
		if err := rows.Scan(&id, &data); err != nil {
			return nil, "", fmt.Errorf("pgstore: list: %w", err)
		}
		if len(jobs) == limit {
			next = jobs[len(jobs)-1].GetId()
			break
		}
		job, err := decode(id, data)
		if err != nil {
			return nil, "", err
		}
		jobs = append(jobs, job)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("pgstore: list: %w", err)
	}
	return jobs, next, nil
}

// Claim takes the oldest queued job that nobody holds, leased to this
// replica, and returns its record; nil when there is none.
func (s *Store) Claim(ctx context.Context) (*api.Job, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var id string
	var data []byte
	err := s.pool.QueryRow(ctx, `UPDATE jobs SET replica = $1, lease_until = now() + $2 * interval '1 millisecond'
		WHERE id = (SELECT id FROM jobs WHERE state = 1 AND replica IS NULL ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING id, record`, s.replica, s.lease.Milliseconds()).Scan(&id, &data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: claim: %w", err)
	}
	return decode(id, data)
}

// Renew extends the leases of this replica's jobs and returns the ids of
// those that a client asked to cancel (through any replica).
func (s *Store) Renew(ctx context.Context) (cancel []string, err error) {
	ctx, done := context.WithTimeout(ctx, opTimeout)
	defer done()
	rows, err := s.pool.Query(ctx, `UPDATE jobs SET lease_until = now() + $2 * interval '1 millisecond' WHERE replica = $1 RETURNING id, cancel_requested`, s.replica, s.lease.Milliseconds())
	if err != nil {
		return nil, fmt.Errorf("pgstore: renew: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var c bool
		if err := rows.Scan(&id, &c); err != nil {
			return nil, fmt.Errorf("pgstore: renew: %w", err)
		}
		if c {
			cancel = append(cancel, id)
		}
	}
	return cancel, rows.Err()
}

// Expire ends the leases that ran out: a running job is marked interrupted
// with message (and returned), its output log being the live output its
// replica stored; a claimed job that had not started is queued again (its
// id returned).
func (s *Store) Expire(ctx context.Context, message string) (interrupted []*api.Job, requeued []string, err error) {
	interrupted, requeued, err = s.endLeases(ctx, `replica IS NOT NULL AND lease_until < now()`, message)
	if err != nil {
		return nil, nil, fmt.Errorf("pgstore: expire leases: %w", err)
	}
	return interrupted, requeued, nil
}

// RecoverReplica ends, as Expire does, the leases held under this
// replica's name by an earlier process of the same name, which stopped
// without handing them back. A replica calls it once, before it claims.
func (s *Store) RecoverReplica(ctx context.Context, message string) (interrupted []*api.Job, requeued []string, err error) {
	interrupted, requeued, err = s.endLeases(ctx, `replica = '`+strings.ReplaceAll(s.replica, "'", "''")+`'`, message)
	if err != nil {
		return nil, nil, fmt.Errorf("pgstore: recover replica %s: %w", s.replica, err)
	}
	return interrupted, requeued, nil
}

// endLeases ends the leases of the jobs that where selects.
func (s *Store) endLeases(ctx context.Context, where, message string) (interrupted []*api.Job, requeued []string, err error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		interrupted, requeued = nil, nil
		rows, err := tx.Query(ctx, `SELECT id, state, record FROM jobs WHERE `+where+` FOR UPDATE SKIP LOCKED`)
		if err != nil {
			return err
		}
		type row struct {
			id    string
			state int32
			data  []byte
		}
		var expired []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.state, &r.data); err != nil {
				rows.Close()
				return err
			}
			expired = append(expired, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range expired {
			job, err := decode(r.id, r.data)
			if err != nil {
				return err
			}
			if r.state != stateRunning {
				if _, err := tx.Exec(ctx, `UPDATE jobs SET replica = NULL, lease_until = NULL WHERE id = $1`, r.id); err != nil {
					return err
				}
				requeued = append(requeued, r.id)
				continue
			}
			job.State = api.JobState_JOB_STATE_INTERRUPTED
			job.Message = message
			job.FinishedAt = timestamppb.Now()
			data, err := encode(job)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE jobs SET state = $2, record = $3, replica = NULL, lease_until = NULL,
				output = coalesce((SELECT string_agg(data, ''::bytea ORDER BY seq) FROM job_output WHERE job_id = $1), ''::bytea)
				WHERE id = $1`,
				r.id, int32(job.State), data); err != nil {
				return err
			}
			for _, table := range []string{"job_inputs", "job_output"} {
				if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE job_id = $1`, r.id); err != nil {
					return err
				}
			}
			if err := s.history(ctx, tx, job); err != nil {
				return err
			}
			interrupted = append(interrupted, job)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return interrupted, requeued, nil
}

// RequestCancel marks a job for cancellation by the replica that runs it,
// which learns of it when it next renews its leases.
func (s *Store) RequestCancel(id string) error {
	ctx, cancel := opContext()
	defer cancel()
	if _, err := s.pool.Exec(ctx, `UPDATE jobs SET cancel_requested = true WHERE id = $1 AND state IN (1, 2)`, id); err != nil {
		return fmt.Errorf("pgstore: cancel %s: %w", id, err)
	}
	return nil
}

// AppendOutput stores piece seq (counting from 1) of a running job's live
// output log, for watchers on other replicas. The pieces go when the job
// finishes, replaced by its final log.
func (s *Store) AppendOutput(id string, seq int, data []byte) error {
	ctx, cancel := opContext()
	defer cancel()
	if _, err := s.pool.Exec(ctx, `INSERT INTO job_output (job_id, seq, data) VALUES ($1, $2, $3)`, id, seq, data); err != nil {
		return fmt.Errorf("pgstore: output of %s: %w", id, err)
	}
	return nil
}

// LiveOutput returns the pieces of a job's live output log after piece
// after, in order.
func (s *Store) LiveOutput(id string, after int) ([]store.OutputPiece, error) {
	ctx, cancel := opContext()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT seq, data FROM job_output WHERE job_id = $1 AND seq > $2 ORDER BY seq`, id, after)
	if err != nil {
		return nil, fmt.Errorf("pgstore: output of %s: %w", id, err)
	}
	pieces, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.OutputPiece, error) {
		var p store.OutputPiece
		err := r.Scan(&p.Seq, &p.Data)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: output of %s: %w", id, err)
	}
	return pieces, nil
}

// QueueDepth counts the queued jobs of every replica.
func (s *Store) QueueDepth(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM jobs WHERE state = 1`).Scan(&n); err != nil {
		return 0, fmt.Errorf("pgstore: queue depth: %w", err)
	}
	return n, nil
}

// Release hands back the jobs this replica claimed but has not started,
// for another replica to run.
func (s *Store) Release(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	tag, err := s.pool.Exec(ctx, `UPDATE jobs SET replica = NULL, lease_until = NULL WHERE replica = $1 AND state = 1`, s.replica)
	if err != nil {
		return 0, fmt.Errorf("pgstore: release: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// StateHistory returns the states job id went through, oldest first.
func (s *Store) StateHistory(id string) ([]api.JobState, error) {
	ctx, cancel := opContext()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT state FROM job_states WHERE job_id = $1 ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("pgstore: history of %s: %w", id, err)
	}
	states, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (api.JobState, error) {
		var st int32
		err := r.Scan(&st)
		return api.JobState(st), err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: history of %s: %w", id, err)
	}
	return states, nil
}
