package service

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/gxbit/gxbit/api"
	"github.com/gxbit/gxbit/service/store"
)

// ManagerConfig configures a Manager.
type ManagerConfig struct {
	// Workers is the number of jobs executed at once.
	Workers int
	// MaxQueued is the number of jobs that may wait for a worker; a
	// submission beyond it is refused with ResourceExhausted.
	MaxQueued int
	// MaxBinaryBytes and MaxStdinBytes bound an upload.
	MaxBinaryBytes, MaxStdinBytes int64
	// MaxOutputBytes bounds a job's stdout and stderr together; a job that
	// writes more is stopped as over its output limit.
	MaxOutputBytes int64
	// Limits are the default and maximum job limits.
	Limits LimitsConfig
	// DefaultGPU is used for submissions that leave the GPU unspecified.
	DefaultGPU GPU
	// Logger receives the manager's log; nil discards it.
	Logger *slog.Logger
}

// Check reports whether the configuration is usable.
func (c ManagerConfig) Check() error {
	switch {
	case c.Workers < 1:
		return fmt.Errorf("workers must be at least 1, not %d", c.Workers)
	case c.MaxQueued < 1:
		return fmt.Errorf("queue size must be at least 1, not %d", c.MaxQueued)
	case c.MaxBinaryBytes < 1:
		return fmt.Errorf("maximum upload must be positive, not %d", c.MaxBinaryBytes)
	case c.MaxStdinBytes < 0:
		return fmt.Errorf("maximum stdin must not be negative, not %d", c.MaxStdinBytes)
	case c.MaxOutputBytes < 0:
		return fmt.Errorf("maximum output must not be negative, not %d", c.MaxOutputBytes)
	}
	if _, err := ParseGPU(c.DefaultGPU.String()); err != nil {
		return fmt.Errorf("default GPU: %w", err)
	}
	if err := c.Limits.Check(); err != nil {
		return err
	}
	return nil
}

// Reasons a job's context is cancelled, told apart with context.Cause.
var (
	errCancelled   = errors.New("cancelled by a client")
	errShutdown    = errors.New("the daemon shut down while the job was running")
	errWallTime    = errors.New("wall-time limit exceeded")
	errOutputLimit = errors.New("output limit exceeded")
)

// Manager runs jobs on a bounded pool of workers, keeps their records in a
// store, and lets clients watch and cancel them.
//
// With a LocalStore the queue is in memory and this process owns every
// job. With a SharedStore the queue is the store: workers claim jobs from
// it, a lease loop renews this replica's leases, passes on cancellations
// made through other replicas and ends the jobs of replicas that died;
// jobs that run elsewhere are watched by polling the store.
type Manager struct {
	cfg     ManagerConfig
	store   JobStore
	shared  SharedStore // nil with a LocalStore
	exec    Executor
	metrics *Metrics
	log     *slog.Logger

	// wake tells idle workers of a shared store that a job was submitted
	// here; closed is closed when the manager starts shutting down.
	wake      chan struct{}
	closed    chan struct{}
	leaseDone chan struct{}

	jobsCtx  context.Context
	stopJobs context.CancelCauseFunc
	workers  sync.WaitGroup

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []string
	active  map[string]*activeJob
	closing bool
	lastID  string
	// workersStopped is closed once the workers have returned in Shutdown.
	workersStopped chan struct{}
}

// activeJob is a job that is queued or running, with everything watchers
// need. Records are never mutated once published: a change installs a new
// record.
type activeJob struct {
	mu      sync.Mutex
	rec     *api.Job
	out     []byte
	segs    []segment
	changed chan struct{}
	// progress is the latest progress report, progressSeq counts reports.
	progress      *api.Progress
	progressSeq   int
	lastNotified  time.Time
	progressTimer bool
	cancel        context.CancelCauseFunc
	cancelReq     bool
	truncated     bool
	done          bool
	report        []byte
}

// segment is a run of one stream's output: out[previous end:end].
type segment struct {
	stream api.Stream
	end    int
}

func (a *activeJob) notifyLocked() {
	close(a.changed)
	a.changed = make(chan struct{})
}

// NewManager creates a Manager over st and exec and starts the workers.
// A LocalStore is recovered first (jobs that were running become
// interrupted, queued ones are queued again); with a SharedStore the lease
// loop starts, which does that for dead replicas.
func NewManager(cfg ManagerConfig, st JobStore, exec Executor, metrics *Metrics) (*Manager, error) {
	if err := cfg.Check(); err != nil {
		return nil, fmt.Errorf("job manager: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Manager{cfg: cfg, store: st, exec: exec, metrics: metrics, log: log, active: map[string]*activeJob{},
		wake: make(chan struct{}, cfg.Workers), closed: make(chan struct{}), leaseDone: make(chan struct{})}
	m.cond = sync.NewCond(&m.mu)
	m.jobsCtx, m.stopJobs = context.WithCancelCause(context.Background())
	metrics.workers.Set(float64(cfg.Workers))

	if sh, ok := st.(SharedStore); ok {
		m.shared = sh
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		interrupted, requeued, err := sh.RecoverReplica(ctx, "the daemon stopped while the job was running")
		cancel()
		if err != nil {
			return nil, fmt.Errorf("job manager: %w", err)
		}
		m.countEnded(interrupted, requeued, "job interrupted: this replica's previous process stopped while it ran")
		go m.leaseLoop()
		for range cfg.Workers {
			m.workers.Add(1)
			go m.worker()
		}
		return m, nil
	}
	close(m.leaseDone)
	ls, ok := st.(LocalStore)
	if !ok {
		return nil, fmt.Errorf("job manager: the store %T is neither local nor shared", st)
	}

	queued, interrupted, err := ls.Recover(time.Now(), "the daemon stopped while the job was running")
	if err != nil {
		return nil, fmt.Errorf("job manager: %w", err)
	}
	for _, rec := range interrupted {
		// Count what the previous process could not: it stopped first.
		mode, _ := modeFromAPI(rec.GetSpec().GetMode())
		metrics.jobFinished(mode, outcomeInterrupted, 0, false, Stats{})
		log.Warn("job interrupted by the previous shutdown", "job", rec.GetId())
	}
	for _, rec := range queued {
		m.active[rec.GetId()] = &activeJob{rec: rec, changed: make(chan struct{})}
		m.queue = append(m.queue, rec.GetId())
	}
	metrics.queued.Set(float64(len(m.queue)))
	for range cfg.Workers {
		m.workers.Add(1)
		go m.worker()
	}
	return m, nil
}

// newJobID returns a new job id: 12 hex digits of Unix milliseconds then 8
// random hex digits, so that ids sort by creation time.
func newJobID(now time.Time) string {
	var r [4]byte
	rand.Read(r[:])
	return fmt.Sprintf("%012x%08x", uint64(now.UnixMilli())&(1<<48-1), binary.BigEndian.Uint32(r[:]))
}

// nextJobID returns the id that follows id: the same millisecond part and
// the random part plus one (carrying into the milliseconds).
func nextJobID(id string) string {
	var ms uint64
	var r uint32
	if _, err := fmt.Sscanf(id, "%012x%08x", &ms, &r); err != nil {
		panic(fmt.Sprintf("job id %q not made by newJobID: %v", id, err))
	}
	r++
	if r == 0 {
		ms++
	}
	return fmt.Sprintf("%012x%08x", ms, r)
}

// submit stores a validated job and queues it.
func (m *Manager) submit(spec *api.JobSpec, owner string, limits Limits, binary, stdin []byte) (*api.Job, error) {
	mode, err := modeFromAPI(spec.GetMode())
	if err != nil {
		return nil, err
	}
	now := time.Now()
	rec := &api.Job{
		Id:        newJobID(now),
		Owner:     owner,
		Spec:      spec,
		State:     api.JobState_JOB_STATE_QUEUED,
		CreatedAt: timestamppb.New(now),
		EffectiveLimits: &api.Limits{
			MemoryBytes:  limits.MemoryBytes,
			Instructions: limits.Instructions,
			WallTime:     durationpb.New(limits.WallTime),
		},
	}
	m.mu.Lock()
	if rec.Id <= m.lastID {
		// Two submissions in one millisecond: keep ids in submission order.
		rec.Id = nextJobID(m.lastID)
	}
	m.lastID = rec.Id
	if m.closing {
		m.mu.Unlock()
		return nil, status.Error(codes.Unavailable, "the daemon is shutting down; submit again later")
	}
	if m.shared != nil {
		m.mu.Unlock()
		return m.submitShared(rec, binary, stdin)
	}
	defer m.mu.Unlock()
	if len(m.queue) >= m.cfg.MaxQueued {
		return nil, status.Errorf(codes.ResourceExhausted, "the job queue is full (%d jobs waiting); submit again later", len(m.queue))
	}
	if err := m.store.CreateJob(rec, binary, stdin); err != nil {
		return nil, status.Errorf(codes.Internal, "storing the job: %v", err)
	}
	m.active[rec.Id] = &activeJob{rec: rec, changed: make(chan struct{})}
	m.queue = append(m.queue, rec.Id)
	m.metrics.queued.Set(float64(len(m.queue)))
	m.cond.Signal()
	m.log.Info("job queued", "job", rec.Id, "owner", owner, "mode", mode.String(), "binary_bytes", len(binary))
	return proto.CloneOf(rec), nil
}

// submitShared queues a job in the shared store, where any replica may
// claim it, and wakes an idle worker here.
func (m *Manager) submitShared(rec *api.Job, binary, stdin []byte) (*api.Job, error) {
	depth, err := m.shared.QueueDepth(context.Background())
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "the job store: %v", err)
	}
	if depth >= m.cfg.MaxQueued {
		return nil, status.Errorf(codes.ResourceExhausted, "the job queue is full (%d jobs waiting); submit again later", depth)
	}
	if err := m.store.CreateJob(rec, binary, stdin); err != nil {
		return nil, status.Errorf(codes.Internal, "storing the job: %v", err)
	}
	m.metrics.queued.Set(float64(depth + 1))
	select {
	case m.wake <- struct{}{}:
	default:
	}
	m.log.Info("job queued", "job", rec.Id, "owner", rec.Owner, "mode", rec.GetSpec().GetMode().String(), "binary_bytes", len(binary))
	return proto.CloneOf(rec), nil
}

// pollInterval is how often idle workers look for queued jobs in a shared
// store, and how often watchers of a job that runs on another replica
// look for news.
const pollInterval = 250 * time.Millisecond

// claim waits for a job this replica can claim in the shared store; ok is
// false when the manager is closing.
func (m *Manager) claim() (a *activeJob, ok bool) {
	for {
		select {
		case <-m.closed:
			return nil, false
		default:
		}
		rec, err := m.shared.Claim(m.jobsCtx)
		if err != nil {
			m.log.Error("claiming a job", "err", err)
		}
		if rec != nil {
			a := &activeJob{rec: rec, changed: make(chan struct{})}
			m.mu.Lock()
			m.active[rec.GetId()] = a
			m.mu.Unlock()
			m.log.Info("job claimed", "job", rec.GetId(), "replica", m.shared.Replica())
			return a, true
		}
		select {
		case <-m.wake:
		case <-time.After(pollInterval):
		case <-m.closed:
			return nil, false
		}
	}
}

// leaseLoop renews this replica's leases, cancels the jobs clients
// cancelled through other replicas, ends the jobs of replicas whose leases
// ran out, and keeps the queue gauge current. It runs until the manager
// has shut down.
func (m *Manager) leaseLoop() {
	defer close(m.leaseDone)
	every := m.shared.Lease() / 3
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), every)
		cancelIDs, err := m.shared.Renew(ctx)
		if err != nil {
			m.log.Error("renewing leases", "err", err)
		}
		for _, id := range cancelIDs {
			m.mu.Lock()
			a := m.active[id]
			m.mu.Unlock()
			if a != nil {
				a.mu.Lock()
				if !a.cancelReq {
					m.log.Info("job cancelled through another replica", "job", id)
				}
				a.cancelReq = true
				if a.cancel != nil {
					a.cancel(errCancelled)
				}
				a.mu.Unlock()
			}
		}
		interrupted, requeued, err := m.shared.Expire(ctx, "the replica running the job stopped renewing its lease (it died or lost the database)")
		if err != nil {
			m.log.Error("expiring leases", "err", err)
		}
		m.countEnded(interrupted, requeued, "job interrupted: its replica's lease expired")
		if depth, err := m.shared.QueueDepth(ctx); err == nil {
			m.metrics.queued.Set(float64(depth))
		}
		cancel()
		select {
		case <-tick.C:
		case <-m.leaseStop():
			return
		}
	}
}

// countEnded counts and logs the jobs whose leases this replica ended.
func (m *Manager) countEnded(interrupted []*api.Job, requeued []string, why string) {
	for _, rec := range interrupted {
		mode, _ := modeFromAPI(rec.GetSpec().GetMode())
		m.metrics.jobFinished(mode, outcomeInterrupted, 0, false, Stats{})
		m.metrics.leaseExpiries.WithLabelValues("running").Inc()
		m.log.Warn(why, "job", rec.GetId())
	}
	for _, id := range requeued {
		m.metrics.leaseExpiries.WithLabelValues("queued").Inc()
		m.log.Warn("job queued again: the replica that claimed it let its lease go", "job", id)
	}
}

// leaseStop is closed when the workers have stopped during a shutdown.
func (m *Manager) leaseStop() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.workersStopped == nil {
		m.workersStopped = make(chan struct{})
	}
	return m.workersStopped
}

// next waits for a queued job; ok is false when the manager is closing.
func (m *Manager) next() (a *activeJob, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for len(m.queue) == 0 && !m.closing {
		m.cond.Wait()
	}
	if m.closing {
		return nil, false
	}
	id := m.queue[0]
	m.queue = m.queue[1:]
	m.metrics.queued.Set(float64(len(m.queue)))
	return m.active[id], true
}

func (m *Manager) worker() {
	defer m.workers.Done()
	for {
		var a *activeJob
		var ok bool
		if m.shared != nil {
			a, ok = m.claim()
		} else {
			a, ok = m.next()
		}
		if !ok {
			return
		}
		m.run(a)
	}
}

// profileOf returns the name of the profile artifact of job id, or a gRPC
// status saying why there is none.
func (m *Manager) profileOf(id string) (string, error) {
	rec, err := m.job(id)
	if err != nil {
		return "", status.Errorf(status.Code(err), "spec.profile_job_id: %s", status.Convert(err).Message())
	}
	for _, a := range rec.GetArtifacts() {
		if a.GetKind() == api.ArtifactKind_ARTIFACT_KIND_PROFILE {
			return a.GetName(), nil
		}
	}
	return "", status.Errorf(codes.FailedPrecondition, "spec.profile_job_id: job %s (%s, mode %s) has no profile artifact; use a finished profile or both job",
		id, rec.GetState(), rec.GetSpec().GetMode())
}

// jobSpec builds the Executor's view of a stored job.
func (m *Manager) jobSpec(rec *api.Job, binary, stdin []byte) (JobSpec, error) {
	mode, err := modeFromAPI(rec.GetSpec().GetMode())
	if err != nil {
		return JobSpec{}, err
	}
	gpu, err := gpuFromAPI(rec.GetSpec().GetGpu(), m.cfg.DefaultGPU)
	if err != nil {
		return JobSpec{}, err
	}
	argv := rec.GetSpec().GetArgv()
	if len(argv) == 0 {
		argv = []string{rec.GetSpec().GetName()}
	}
	var prof []byte
	if id := rec.GetSpec().GetProfileJobId(); id != "" {
		name, err := m.profileOf(id)
		if err != nil {
			return JobSpec{}, err
		}
		if prof, err = m.store.Artifact(id, name); err != nil {
			return JobSpec{}, fmt.Errorf("profile of job %s: %w", id, err)
		}
	}
	l := rec.GetEffectiveLimits()
	return JobSpec{
		Profile: prof,
		ID:      rec.GetId(),
		Binary:  binary,
		Argv:    argv,
		Env:     rec.GetSpec().GetEnv(),
		Stdin:   stdin,
		Mode:    mode,
		GPU:     gpu,
		Limits:  Limits{MemoryBytes: l.GetMemoryBytes(), Instructions: l.GetInstructions(), WallTime: l.GetWallTime().AsDuration()},
	}, nil
}

// run executes one job and finishes it.
func (m *Manager) run(a *activeJob) {
	a.mu.Lock()
	rec := proto.CloneOf(a.rec)
	cancelled := a.cancelReq
	a.mu.Unlock()
	if cancelled {
		m.finish(a, rec, nil, time.Time{}, errCancelled, Outcome{}, nil)
		return
	}
	binary, stdin, err := m.store.Inputs(rec.GetId())
	if err != nil {
		m.finish(a, rec, nil, time.Time{}, fmt.Errorf("loading the job's inputs: %w", err), Outcome{}, nil)
		return
	}
	spec, err := m.jobSpec(rec, binary, stdin)
	if err != nil {
		m.finish(a, rec, nil, time.Time{}, fmt.Errorf("preparing the job: %v", status.Convert(err).Message()), Outcome{}, nil)
		return
	}

	ctx, cancel := context.WithCancelCause(m.jobsCtx)
	defer cancel(nil)
	ctx, cancelTimer := context.WithTimeoutCause(ctx, spec.Limits.WallTime, errWallTime)
	defer cancelTimer()

	start := time.Now()
	rec.State = api.JobState_JOB_STATE_RUNNING
	rec.StartedAt = timestamppb.New(start)
	a.mu.Lock()
	if a.cancelReq {
		a.mu.Unlock()
		m.finish(a, rec, nil, time.Time{}, errCancelled, Outcome{}, nil)
		return
	}
	a.rec = rec
	a.cancel = cancel
	a.notifyLocked()
	a.mu.Unlock()
	if err := m.store.UpdateJob(rec); err != nil {
		m.log.Error("storing running state", "job", rec.GetId(), "err", err)
	}
	m.metrics.running.Inc()
	m.log.Info("job started", "job", rec.GetId(), "mode", spec.Mode.String())

	stdout := &outputWriter{m: m, a: a, stream: api.Stream_STREAM_STDOUT, cancel: cancel}
	stderr := &outputWriter{m: m, a: a, stream: api.Stream_STREAM_STDERR, cancel: cancel}
	stopFlush := m.flushOutput(a)
	out, execErr := m.execute(ctx, spec, stdout, stderr, func(p Progress) { m.progress(a, p) })
	stopFlush()
	cause := context.Cause(ctx)
	m.metrics.running.Dec()
	if execErr == nil || cause == nil {
		// Finished on its own (even if a cancellation raced with the end),
		// or failed with no cancellation involved.
		cause = execErr
	}
	m.finish(a, rec, &start, time.Now(), cause, out, execErr)
}

// flushOutput copies a running job's new output to the shared store every
// pollInterval, for watchers on other replicas; the returned function stops
// it (the final log is stored when the job finishes). Without a shared
// store it does nothing.
func (m *Manager) flushOutput(a *activeJob) (stop func()) {
	if m.shared == nil {
		return func() {}
	}
	id := a.rec.GetId()
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		flushed, seq := 0, 0
		tick := time.NewTicker(pollInterval)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
			case <-done:
				return
			}
			a.mu.Lock()
			chunks := segmentsFrom(a.out, a.segs, flushed)
			end := len(a.out)
			a.mu.Unlock()
			if len(chunks) == 0 {
				continue
			}
			seq++
			if err := m.shared.AppendOutput(id, seq, encodeOutput(chunks)); err != nil {
				m.log.Warn("storing live output", "job", id, "err", err)
				seq--
				continue
			}
			flushed = end
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// execute calls the Executor, turning a panic into an error so that one
// broken job never takes the daemon down.
func (m *Manager) execute(ctx context.Context, spec JobSpec, stdout, stderr *outputWriter, progress ProgressFunc) (out Outcome, err error) {
	defer func() {
		if r := recover(); r != nil {
			m.log.Error("executor panicked", "job", spec.ID, "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("internal error: the executor panicked: %v", r)
		}
	}()
	return m.exec.Execute(ctx, spec, stdout, stderr, progress)
}

// progress records a progress report, waking watchers at most once per
// progressInterval.
func (m *Manager) progress(a *activeJob, p Progress) {
	ap := &api.Progress{
		Phase:             phaseToAPI(p.Phase),
		GuestInstructions: p.GuestInstructions,
		HotSpotsFound:     uint32(max(p.HotSpotsFound, 0)),
		HotSpotsOffloaded: uint32(max(p.HotSpotsOffloaded, 0)),
		KernelLaunches:    p.KernelLaunches,
		Detail:            p.Detail,
	}
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return
	}
	a.progress = ap
	a.progressSeq++
	if wait := progressInterval - now.Sub(a.lastNotified); wait <= 0 {
		a.lastNotified = now
		a.notifyLocked()
	} else if !a.progressTimer {
		// Deliver this report later even if no other change comes.
		a.progressTimer = true
		time.AfterFunc(wait, func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.progressTimer = false
			if !a.done {
				a.lastNotified = time.Now()
				a.notifyLocked()
			}
		})
	}
}

// progressInterval is the shortest time between two progress wake-ups of a
// job's watchers.
const progressInterval = 100 * time.Millisecond

// outputWriter appends the guest's output to a job's output log.
type outputWriter struct {
	m      *Manager
	a      *activeJob
	stream api.Stream
	cancel context.CancelCauseFunc
}

// Write appends p to the log. Past the output limit it keeps what fits,
// stops the job and fails.
func (w *outputWriter) Write(p []byte) (int, error) {
	a := w.a
	a.mu.Lock()
	if a.done {
		a.mu.Unlock()
		return 0, fmt.Errorf("job %s has finished", a.rec.GetId())
	}
	if a.truncated {
		a.mu.Unlock()
		return 0, errOutputLimit
	}
	n := len(p)
	room := w.m.cfg.MaxOutputBytes - int64(len(a.out))
	over := int64(n) > room
	if over {
		n = int(max(room, 0))
		a.truncated = true
	}
	if n > 0 {
		a.out = append(a.out, p[:n]...)
		if k := len(a.segs); k > 0 && a.segs[k-1].stream == w.stream {
			a.segs[k-1].end = len(a.out)
		} else {
			a.segs = append(a.segs, segment{stream: w.stream, end: len(a.out)})
		}
		a.notifyLocked()
	}
	a.mu.Unlock()
	if over {
		w.cancel(errOutputLimit)
		return n, fmt.Errorf("%w: the job may write at most %d bytes", errOutputLimit, w.m.cfg.MaxOutputBytes)
	}
	return n, nil
}

// classify turns the reason a job ended into its final state.
func classify(cause error, limits *api.Limits, maxOutput int64) (api.JobState, api.LimitKind, string) {
	switch {
	case cause == nil:
		return api.JobState_JOB_STATE_SUCCEEDED, 0, ""
	case errors.Is(cause, errCancelled):
		return api.JobState_JOB_STATE_CANCELLED, 0, "cancelled by a client"
	case errors.Is(cause, errShutdown):
		return api.JobState_JOB_STATE_INTERRUPTED, 0, errShutdown.Error()
	case errors.Is(cause, errWallTime):
		return api.JobState_JOB_STATE_LIMIT_EXCEEDED, api.LimitKind_LIMIT_KIND_WALL_TIME,
			fmt.Sprintf("wall-time limit of %v exceeded", limits.GetWallTime().AsDuration())
	case errors.Is(cause, errOutputLimit):
		return api.JobState_JOB_STATE_LIMIT_EXCEEDED, api.LimitKind_LIMIT_KIND_OUTPUT,
			fmt.Sprintf("output limit of %d bytes exceeded", maxOutput)
	case errors.Is(cause, ErrMemoryLimit):
		return api.JobState_JOB_STATE_LIMIT_EXCEEDED, api.LimitKind_LIMIT_KIND_MEMORY,
			fmt.Sprintf("memory limit of %d bytes exceeded: %v", limits.GetMemoryBytes(), cause)
	case errors.Is(cause, ErrInstructionLimit):
		return api.JobState_JOB_STATE_LIMIT_EXCEEDED, api.LimitKind_LIMIT_KIND_INSTRUCTIONS,
			fmt.Sprintf("instruction limit of %d exceeded: %v", limits.GetInstructions(), cause)
	}
	return api.JobState_JOB_STATE_FAILED, 0, cause.Error()
}

// finish records a job's end: final record, output and artifacts in one
// store transaction, watchers woken, metrics updated. start is nil when the
// job never ran.
func (m *Manager) finish(a *activeJob, rec *api.Job, start *time.Time, end time.Time, cause error, out Outcome, execErr error) {
	if end.IsZero() {
		end = time.Now()
	}
	// rec may be the published record; build the final one as a copy.
	rec = proto.CloneOf(rec)
	rec.State, rec.Exceeded, rec.Message = classify(cause, rec.GetEffectiveLimits(), m.cfg.MaxOutputBytes)
	rec.FinishedAt = timestamppb.New(end)

	var arts []store.Artifact
	ran := start != nil
	if rec.State == api.JobState_JOB_STATE_SUCCEEDED {
		rec.ExitCode = int32(out.ExitCode)
		rec.ExitSignal = int32(out.Signal)
		var err error
		arts, err = artifactsOf(out)
		if err != nil {
			rec.State, rec.Message, arts = api.JobState_JOB_STATE_FAILED, err.Error(), nil
		}
	}
	if ran {
		rec.Stats = statsToAPI(out.Stats)
	}

	a.mu.Lock()
	a.done = true
	output := encodeOutput(segmentsOf(a.out, a.segs))
	for i, s := range a.segs {
		n := s.end
		if i > 0 {
			n -= a.segs[i-1].end
		}
		if s.stream == api.Stream_STREAM_STDOUT {
			rec.StdoutBytes += uint64(n)
		} else {
			rec.StderrBytes += uint64(n)
		}
	}
	rec.OutputTruncated = a.truncated
	a.mu.Unlock()
	for _, art := range arts {
		rec.Artifacts = append(rec.Artifacts, &api.Artifact{Name: art.Name, Kind: art.Kind, Size: uint64(len(art.Data))})
	}

	if err := m.store.FinishJob(rec, output, arts); errors.Is(err, store.ErrLeaseLost) {
		// Another replica ended the job when this one's lease ran out, and
		// counted it: keep its record.
		m.log.Warn("the job ended here after another replica had interrupted it; its record stays interrupted", "job", rec.GetId(), "state", rec.State.String())
		if stored, err := m.store.Job(rec.GetId()); err == nil {
			rec = stored
		}
		a.mu.Lock()
		a.rec = rec
		a.notifyLocked()
		a.mu.Unlock()
		m.mu.Lock()
		delete(m.active, rec.GetId())
		m.mu.Unlock()
		return
	} else if err != nil {
		m.log.Error("storing the finished job", "job", rec.GetId(), "err", err)
		rec.State, rec.Message, rec.Artifacts = api.JobState_JOB_STATE_FAILED, fmt.Sprintf("storing the job's results: %v", err), nil
		if err := m.store.UpdateJob(rec); err != nil {
			m.log.Error("storing the failed job", "job", rec.GetId(), "err", err)
		}
	}

	// Metrics first, so that whoever sees the job finished sees it counted.
	mode, _ := modeFromAPI(rec.GetSpec().GetMode())
	var secs float64
	if ran {
		secs = end.Sub(*start).Seconds()
	}
	m.metrics.jobFinished(mode, outcomeOf(rec.State), secs, ran, out.Stats)

	a.mu.Lock()
	a.rec = rec
	a.report = out.Report
	a.notifyLocked()
	a.mu.Unlock()
	m.mu.Lock()
	delete(m.active, rec.GetId())
	m.mu.Unlock()

	attrs := []any{"job", rec.GetId(), "state", rec.State.String(), "exit_code", rec.ExitCode, "seconds", secs}
	if rec.Message != "" {
		attrs = append(attrs, "message", rec.Message)
	}
	if execErr != nil && rec.State != api.JobState_JOB_STATE_FAILED {
		attrs = append(attrs, "executor_error", execErr.Error())
	}
	m.log.Info("job finished", attrs...)
}

// segmentsFrom returns the output from byte from on, split by stream.
func segmentsFrom(out []byte, segs []segment, from int) []outputChunk {
	var chunks []outputChunk
	start := 0
	for _, s := range segs {
		if s.end > from {
			chunks = append(chunks, outputChunk{stream: s.stream, data: bytes.Clone(out[max(start, from):s.end])})
		}
		start = s.end
	}
	return chunks
}

func segmentsOf(out []byte, segs []segment) []outputChunk {
	chunks := make([]outputChunk, 0, len(segs))
	start := 0
	for _, s := range segs {
		chunks = append(chunks, outputChunk{stream: s.stream, data: out[start:s.end]})
		start = s.end
	}
	return chunks
}

// artifactsOf checks an outcome's artifacts and adds the report.
func artifactsOf(out Outcome) ([]store.Artifact, error) {
	var arts []store.Artifact
	seen := map[string]bool{}
	for _, a := range out.Artifacts {
		if err := checkArtifactName(a.Name); err != nil {
			return nil, fmt.Errorf("internal error: the executor returned a bad artifact: %w", err)
		}
		if seen[a.Name] {
			return nil, fmt.Errorf("internal error: the executor returned artifact %q twice", a.Name)
		}
		seen[a.Name] = true
		arts = append(arts, store.Artifact{Name: a.Name, Kind: artifactKindToAPI(a.Kind), Data: a.Data})
	}
	if len(out.Report) > 0 && !seen["report.json"] {
		arts = append(arts, store.Artifact{Name: "report.json", Kind: api.ArtifactKind_ARTIFACT_KIND_REPORT, Data: out.Report})
	}
	return arts, nil
}

func outcomeOf(s api.JobState) string {
	switch s {
	case api.JobState_JOB_STATE_SUCCEEDED:
		return outcomeSucceeded
	case api.JobState_JOB_STATE_CANCELLED:
		return outcomeCancelled
	case api.JobState_JOB_STATE_LIMIT_EXCEEDED:
		return outcomeLimitExceeded
	case api.JobState_JOB_STATE_INTERRUPTED:
		return outcomeInterrupted
	}
	return outcomeFailed
}

// cancel cancels a queued or running job and returns its record.
func (m *Manager) cancel(id string) (*api.Job, error) {
	m.mu.Lock()
	a := m.active[id]
	queuedAt := -1
	for i, q := range m.queue {
		if q == id {
			queuedAt = i
			break
		}
	}
	if queuedAt >= 0 {
		m.queue = append(m.queue[:queuedAt], m.queue[queuedAt+1:]...)
		m.metrics.queued.Set(float64(len(m.queue)))
	}
	m.mu.Unlock()
	if a == nil && m.shared != nil {
		return m.cancelShared(id)
	}
	if a == nil {
		return m.job(id)
	}
	if queuedAt >= 0 {
		a.mu.Lock()
		rec := proto.CloneOf(a.rec)
		a.mu.Unlock()
		m.finish(a, rec, nil, time.Time{}, errCancelled, Outcome{}, nil)
		return m.job(id)
	}
	a.mu.Lock()
	a.cancelReq = true
	if a.cancel != nil {
		a.cancel(errCancelled)
	}
	rec := proto.CloneOf(a.rec)
	a.mu.Unlock()
	return rec, nil
}

// cancelShared cancels a job of the shared store that this replica does
// not run: a queued job nobody claimed ends here at once; for one that a
// replica claimed or runs, the cancellation is stored for that replica,
// which acts on it when it next renews its leases.
func (m *Manager) cancelShared(id string) (*api.Job, error) {
	rec, err := m.store.Job(id)
	if err != nil {
		return nil, storeStatus(err, id)
	}
	if rec.GetState() == api.JobState_JOB_STATE_QUEUED {
		final := proto.CloneOf(rec)
		final.State, final.Exceeded, final.Message = classify(errCancelled, rec.GetEffectiveLimits(), m.cfg.MaxOutputBytes)
		final.FinishedAt = timestamppb.Now()
		err := m.store.FinishJob(final, nil, nil)
		if err == nil {
			mode, _ := modeFromAPI(final.GetSpec().GetMode())
			m.metrics.jobFinished(mode, outcomeCancelled, 0, false, Stats{})
			m.log.Info("job finished", "job", id, "state", final.State.String(), "message", final.Message)
			return final, nil
		}
		if !errors.Is(err, store.ErrLeaseLost) {
			return nil, storeStatus(err, id)
		}
		// A replica claimed it meanwhile.
	}
	if isFinished(rec.GetState()) {
		return rec, nil
	}
	if err := m.shared.RequestCancel(id); err != nil {
		return nil, storeStatus(err, id)
	}
	return m.job(id)
}

// isFinished reports whether a job in state st has ended.
func isFinished(st api.JobState) bool {
	return st != api.JobState_JOB_STATE_QUEUED && st != api.JobState_JOB_STATE_RUNNING
}

// activeRecord returns the current record of a queued or running job,
// with the output counts so far.
func (m *Manager) activeRecord(id string) (*api.Job, bool) {
	m.mu.Lock()
	a := m.active[id]
	m.mu.Unlock()
	if a == nil {
		return nil, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	rec := proto.CloneOf(a.rec)
	if !a.done {
		rec.StdoutBytes, rec.StderrBytes = 0, 0
		start := 0
		for _, s := range a.segs {
			if s.stream == api.Stream_STREAM_STDOUT {
				rec.StdoutBytes += uint64(s.end - start)
			} else {
				rec.StderrBytes += uint64(s.end - start)
			}
			start = s.end
		}
	}
	return rec, true
}

// job returns a job's current record.
func (m *Manager) job(id string) (*api.Job, error) {
	if rec, ok := m.activeRecord(id); ok {
		return rec, nil
	}
	rec, err := m.store.Job(id)
	if err != nil {
		return nil, storeStatus(err, id)
	}
	return rec, nil
}

// storeStatus turns a store error into a gRPC status.
func storeStatus(err error, id string) error {
	if errors.Is(err, store.ErrNotFound) {
		return status.Errorf(codes.NotFound, "job %q not found", id)
	}
	return status.Errorf(codes.Internal, "job %q: %v", id, err)
}

// maxOutputEvent is the largest piece of output sent in one event.
const maxOutputEvent = 64 << 10

// watch sends job id's events to send until the job has finished (the last
// event is JobFinished) or ctx is done.
func (m *Manager) watch(ctx context.Context, id string, skipPast bool, send func(*api.JobEvent) error) error {
	m.mu.Lock()
	a := m.active[id]
	m.mu.Unlock()
	if a == nil && m.shared != nil {
		return m.watchShared(ctx, id, skipPast, send)
	}
	if a == nil {
		return m.watchFinished(id, skipPast, send)
	}
	lastState := api.JobState_JOB_STATE_UNSPECIFIED
	lastSeq, seg, pos := 0, 0, 0
	if skipPast {
		a.mu.Lock()
		seg, pos = max(len(a.segs)-1, 0), len(a.out)
		a.mu.Unlock()
	}
	for {
		a.mu.Lock()
		rec, done, report, changed := a.rec, a.done, a.report, a.changed
		var pieces []outputChunk
		for ; seg < len(a.segs); seg++ {
			start := 0
			if seg > 0 {
				start = a.segs[seg-1].end
			}
			start = max(start, pos)
			if end := a.segs[seg].end; end > start {
				pieces = append(pieces, outputChunk{stream: a.segs[seg].stream, data: a.out[start:end]})
			}
		}
		seg, pos = max(len(a.segs)-1, 0), len(a.out)
		prog, seq := a.progress, a.progressSeq
		a.mu.Unlock()

		if !done && rec.GetState() != lastState {
			lastState = rec.GetState()
			if err := send(stateEvent(rec)); err != nil {
				return err
			}
		}
		if err := sendOutput(pieces, send); err != nil {
			return err
		}
		if seq != lastSeq && !done {
			lastSeq = seq
			if err := send(&api.JobEvent{Event: &api.JobEvent_Progress{Progress: prog}}); err != nil {
				return err
			}
		}
		if done && rec.GetState() != api.JobState_JOB_STATE_QUEUED && rec.GetState() != api.JobState_JOB_STATE_RUNNING {
			if err := send(stateEvent(rec)); err != nil {
				return err
			}
			return send(&api.JobEvent{Event: &api.JobEvent_Finished{Finished: &api.JobFinished{Job: proto.CloneOf(rec), ReportJson: report}}})
		}
		if !done && rec.GetState() == api.JobState_JOB_STATE_QUEUED && m.isClosing() {
			return status.Errorf(codes.Unavailable, "the daemon is shutting down; job %s stays queued and runs after the restart", id)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (m *Manager) isClosing() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closing
}

func stateEvent(rec *api.Job) *api.JobEvent {
	return &api.JobEvent{Event: &api.JobEvent_State{State: &api.StateChange{State: rec.GetState(), Message: rec.GetMessage()}}}
}

func sendOutput(pieces []outputChunk, send func(*api.JobEvent) error) error {
	for _, p := range pieces {
		for data := p.data; len(data) > 0; {
			n := min(len(data), maxOutputEvent)
			ev := &api.JobEvent{Event: &api.JobEvent_Output{Output: &api.OutputChunk{Stream: p.stream, Data: data[:n]}}}
			if err := send(ev); err != nil {
				return err
			}
			data = data[n:]
		}
	}
	return nil
}

// watchShared sends the events of a job of the shared store that this
// replica does not run, polling the store: its state changes and the live
// output that its replica stores, then, once it has finished, the rest of
// its final output log and its end.
func (m *Manager) watchShared(ctx context.Context, id string, skipPast bool, send func(*api.JobEvent) error) error {
	lastState := api.JobState_JOB_STATE_UNSPECIFIED
	seq, sent := 0, 0 // the last live piece seen, and the output bytes seen
	first := true
	for {
		rec, err := m.store.Job(id)
		if err != nil {
			return storeStatus(err, id)
		}
		if isFinished(rec.GetState()) {
			return m.sendFinished(rec, sent, skipPast && first, send)
		}
		if rec.GetState() != lastState {
			lastState = rec.GetState()
			if err := send(stateEvent(rec)); err != nil {
				return err
			}
		}
		pieces, err := m.shared.LiveOutput(id, seq)
		if err != nil {
			return storeStatus(err, id)
		}
		for _, p := range pieces {
			seq = p.Seq
			chunks, err := decodeOutput(p.Data)
			if err != nil {
				return status.Errorf(codes.DataLoss, "job %q: %v", id, err)
			}
			if !(skipPast && first) {
				if err := sendOutput(chunks, send); err != nil {
					return err
				}
			}
			for _, c := range chunks {
				sent += len(c.data)
			}
		}
		first = false
		if rec.GetState() == api.JobState_JOB_STATE_QUEUED && m.isClosing() {
			return status.Errorf(codes.Unavailable, "this replica is shutting down; job %s stays queued for another replica", id)
		}
		select {
		case <-time.After(pollInterval):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// watchFinished sends the events of a job that is no longer active.
func (m *Manager) watchFinished(id string, skipPast bool, send func(*api.JobEvent) error) error {
	rec, err := m.store.Job(id)
	if err != nil {
		return storeStatus(err, id)
	}
	return m.sendFinished(rec, 0, skipPast, send)
}

// sendFinished sends the end of finished job rec: its state, its output
// log past the first skip bytes (none when skipPast), and the JobFinished
// event with its report.
func (m *Manager) sendFinished(rec *api.Job, skip int, skipPast bool, send func(*api.JobEvent) error) error {
	id := rec.GetId()
	if err := send(stateEvent(rec)); err != nil {
		return err
	}
	if !skipPast {
		raw, err := m.store.Output(id)
		if err != nil {
			return storeStatus(err, id)
		}
		chunks, err := decodeOutput(raw)
		if err != nil {
			return status.Errorf(codes.DataLoss, "job %q: %v", id, err)
		}
		if err := sendOutput(skipBytes(chunks, skip), send); err != nil {
			return err
		}
	}
	var report []byte
	for _, art := range rec.GetArtifacts() {
		if art.GetName() == "report.json" {
			var err error
			if report, err = m.store.Artifact(id, art.GetName()); err != nil {
				return storeStatus(err, id)
			}
		}
	}
	return send(&api.JobEvent{Event: &api.JobEvent_Finished{Finished: &api.JobFinished{Job: rec, ReportJson: report}}})
}

// skipBytes drops the first n bytes of an output log's chunks.
func skipBytes(chunks []outputChunk, n int) []outputChunk {
	for len(chunks) > 0 && n > 0 {
		if len(chunks[0].data) > n {
			chunks[0].data = chunks[0].data[n:]
			return chunks
		}
		n -= len(chunks[0].data)
		chunks = chunks[1:]
	}
	return chunks
}

// Shutdown stops taking jobs and waits for the running ones to end. When ctx
// is done first, the running jobs are cancelled and end as interrupted; jobs
// still queued stay queued in the store and run after the next start.
func (m *Manager) Shutdown(ctx context.Context) {
	m.mu.Lock()
	if !m.closing {
		close(m.closed)
	}
	m.closing = true
	m.cond.Broadcast()
	m.mu.Unlock()
	done := make(chan struct{})
	go func() {
		m.workers.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		m.stopJobs(errShutdown)
		<-done
	}
	m.stopJobs(errShutdown)
	// The leases were renewed while the jobs ran; stop now, and hand back
	// whatever this replica claimed without starting.
	m.mu.Lock()
	if m.workersStopped == nil {
		m.workersStopped = make(chan struct{})
	}
	select {
	case <-m.workersStopped:
	default:
		close(m.workersStopped)
	}
	m.mu.Unlock()
	<-m.leaseDone
	if m.shared != nil {
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if n, err := m.shared.Release(rctx); err != nil {
			m.log.Error("handing back claimed jobs", "err", err)
		} else if n > 0 {
			m.log.Info("handed back claimed jobs", "jobs", n)
		}
		cancel()
	}
	// Wake watchers of queued jobs so their streams end.
	m.mu.Lock()
	for _, a := range m.active {
		a.mu.Lock()
		a.notifyLocked()
		a.mu.Unlock()
	}
	m.mu.Unlock()
}
