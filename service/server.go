package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/gxbit/gxbit/api"
	"github.com/gxbit/gxbit/service/auth"
	"github.com/gxbit/gxbit/service/store"
)

// Limits on the parts of a spec that are not uploads.
const (
	maxArgs       = 4096
	maxArgvBytes  = 1 << 20
	maxNameBytes  = 255
	defaultPage   = 100
	maxPage       = 1000
	artifactChunk = 256 << 10
)

// Server implements the gxbit.v1 JobService over a Manager.
type Server struct {
	api.UnimplementedJobServiceServer
	m *Manager
}

// NewServer returns the JobService of m.
func NewServer(m *Manager) *Server {
	return &Server{m: m}
}

// rejected counts a refused submission and returns err.
func (s *Server) rejected(err error) error {
	s.m.metrics.rejected.WithLabelValues(status.Code(err).String()).Inc()
	return err
}

// checkSpec validates a submission's spec and returns its effective limits.
func (s *Server) checkSpec(ctx context.Context, spec *api.JobSpec) (Limits, error) {
	if spec == nil {
		return Limits{}, status.Error(codes.InvalidArgument, "the first message must carry the job spec")
	}
	if _, err := modeFromAPI(spec.GetMode()); err != nil {
		return Limits{}, err
	}
	if _, err := gpuFromAPI(spec.GetGpu(), s.m.cfg.DefaultGPU); err != nil {
		return Limits{}, err
	}
	if len(spec.GetName()) > maxNameBytes || !utf8.ValidString(spec.GetName()) {
		return Limits{}, status.Errorf(codes.InvalidArgument, "spec.name: must be valid UTF-8 of at most %d bytes", maxNameBytes)
	}
	n, total := len(spec.GetArgv())+len(spec.GetEnv()), 0
	for _, list := range [][]string{spec.GetArgv(), spec.GetEnv()} {
		for _, a := range list {
			total += len(a) + 1
		}
	}
	if n > maxArgs || total > maxArgvBytes {
		return Limits{}, status.Errorf(codes.InvalidArgument, "spec.argv and spec.env: %d strings of %d bytes; at most %d strings and %d bytes", n, total, maxArgs, maxArgvBytes)
	}
	for i, e := range spec.GetEnv() {
		if !strings.Contains(e, "=") {
			return Limits{}, status.Errorf(codes.InvalidArgument, "spec.env[%d]: %q is not KEY=value", i, e)
		}
	}
	if spec.GetBinarySize() == 0 {
		return Limits{}, status.Error(codes.InvalidArgument, "spec.binary_size: the binary is empty")
	}
	if spec.GetBinarySize() > uint64(s.m.cfg.MaxBinaryBytes) {
		return Limits{}, status.Errorf(codes.ResourceExhausted, "the binary is %d bytes; this server accepts at most %d (gxbitd --max-upload)", spec.GetBinarySize(), s.m.cfg.MaxBinaryBytes)
	}
	if spec.GetStdinSize() > uint64(s.m.cfg.MaxStdinBytes) {
		return Limits{}, status.Errorf(codes.ResourceExhausted, "the standard input is %d bytes; this server accepts at most %d (gxbitd --max-stdin)", spec.GetStdinSize(), s.m.cfg.MaxStdinBytes)
	}
	if id := spec.GetProfileJobId(); id != "" {
		if spec.GetMode() != api.Mode_MODE_ACCELERATE {
			return Limits{}, status.Errorf(codes.InvalidArgument, "spec.profile_job_id: only accelerate mode takes a profile, not %s", spec.GetMode())
		}
		if _, err := s.accessibleJob(ctx, id); err != nil {
			return Limits{}, status.Errorf(status.Code(err), "spec.profile_job_id: %s", status.Convert(err).Message())
		}
		if _, err := s.m.profileOf(id); err != nil {
			return Limits{}, err
		}
	}
	return s.m.cfg.Limits.effective(spec.GetLimits())
}

// SubmitJob implements api.JobServiceServer.
func (s *Server) SubmitJob(stream api.JobService_SubmitJobServer) error {
	first, err := stream.Recv()
	if errors.Is(err, io.EOF) {
		return s.rejected(status.Error(codes.InvalidArgument, "empty upload: the first message must carry the job spec"))
	}
	if err != nil {
		return err
	}
	spec := first.GetSpec()
	limits, err := s.checkSpec(stream.Context(), spec)
	if err != nil {
		return s.rejected(err)
	}
	binary := make([]byte, 0, spec.GetBinarySize())
	stdin := make([]byte, 0, spec.GetStdinSize())
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err // the client went away; nothing was stored
		}
		switch p := msg.GetPayload().(type) {
		case *api.SubmitJobRequest_BinaryChunk:
			if uint64(len(binary)+len(p.BinaryChunk)) > spec.GetBinarySize() {
				return s.rejected(status.Errorf(codes.InvalidArgument, "the binary upload exceeds spec.binary_size (%d bytes)", spec.GetBinarySize()))
			}
			binary = append(binary, p.BinaryChunk...)
		case *api.SubmitJobRequest_StdinChunk:
			if uint64(len(stdin)+len(p.StdinChunk)) > spec.GetStdinSize() {
				return s.rejected(status.Errorf(codes.InvalidArgument, "the stdin upload exceeds spec.stdin_size (%d bytes)", spec.GetStdinSize()))
			}
			stdin = append(stdin, p.StdinChunk...)
		case *api.SubmitJobRequest_Spec:
			return s.rejected(status.Error(codes.InvalidArgument, "only the first message may carry a job spec"))
		default:
			return s.rejected(status.Error(codes.InvalidArgument, "a message with no payload"))
		}
	}
	if uint64(len(binary)) != spec.GetBinarySize() {
		return s.rejected(status.Errorf(codes.InvalidArgument, "the binary upload ended after %d of %d bytes", len(binary), spec.GetBinarySize()))
	}
	if uint64(len(stdin)) != spec.GetStdinSize() {
		return s.rejected(status.Errorf(codes.InvalidArgument, "the stdin upload ended after %d of %d bytes", len(stdin), spec.GetStdinSize()))
	}
	if err := CheckELF(binary); err != nil {
		return s.rejected(status.Errorf(codes.InvalidArgument, "%v", err))
	}
	spec = proto.CloneOf(spec)
	if spec.Name == "" {
		spec.Name = "a.out"
		if len(spec.Argv) > 0 {
			spec.Name = path.Base(spec.Argv[0])
		}
	}
	if spec.Mode == api.Mode_MODE_UNSPECIFIED {
		spec.Mode = api.Mode_MODE_RUN
	}
	if spec.Gpu == api.GpuBackend_GPU_BACKEND_UNSPECIFIED {
		spec.Gpu = gpuToAPI(s.m.cfg.DefaultGPU)
	}
	var owner string
	if u, ok := auth.UserFrom(stream.Context()); ok {
		owner = u.Name
	}
	rec, err := s.m.submit(spec, owner, limits, binary, stdin)
	if err != nil {
		return s.rejected(err)
	}
	return stream.SendAndClose(&api.SubmitJobResponse{JobId: rec.GetId(), Job: rec})
}

func checkID(id string) error {
	if id == "" {
		return status.Error(codes.InvalidArgument, "job_id is empty")
	}
	return nil
}

// mayAccess reports whether the caller may see and act on job rec: anyone
// when the server checks no tokens, an admin always, a submit user only on
// their own jobs.
func mayAccess(ctx context.Context, rec *api.Job) error {
	u, ok := auth.UserFrom(ctx)
	if !ok || u.Role == auth.RoleAdmin || rec.GetOwner() == u.Name {
		return nil
	}
	return status.Errorf(codes.PermissionDenied, "job %s belongs to another user; %s (role %s) may act only on their own jobs", rec.GetId(), u.Name, u.Role)
}

// accessibleJob returns the record of job id if the caller may act on it.
func (s *Server) accessibleJob(ctx context.Context, id string) (*api.Job, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	rec, err := s.m.job(id)
	if err != nil {
		return nil, err
	}
	if err := mayAccess(ctx, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// WatchJob implements api.JobServiceServer.
func (s *Server) WatchJob(req *api.WatchJobRequest, stream api.JobService_WatchJobServer) error {
	if _, err := s.accessibleJob(stream.Context(), req.GetJobId()); err != nil {
		return err
	}
	return s.m.watch(stream.Context(), req.GetJobId(), req.GetSkipPastOutput(), stream.Send)
}

// GetJob implements api.JobServiceServer.
func (s *Server) GetJob(ctx context.Context, req *api.GetJobRequest) (*api.Job, error) {
	return s.accessibleJob(ctx, req.GetJobId())
}

// ListJobs implements api.JobServiceServer. Records of active jobs come from
// the manager, so they are as fresh as GetJob's.
func (s *Server) ListJobs(ctx context.Context, req *api.ListJobsRequest) (*api.ListJobsResponse, error) {
	size := int(req.GetPageSize())
	if size == 0 {
		size = defaultPage
	}
	size = min(size, maxPage)
	var filter store.Filter
	for _, st := range req.GetStates() {
		if _, ok := api.JobState_name[int32(st)]; !ok || st == api.JobState_JOB_STATE_UNSPECIFIED {
			return nil, status.Errorf(codes.InvalidArgument, "states: unknown job state %d", int32(st))
		}
		filter.States = append(filter.States, st)
	}
	if u, ok := auth.UserFrom(ctx); ok && u.Role != auth.RoleAdmin {
		filter.Owner = u.Name
	}
	jobs, next, err := s.m.store.List(filter, size, req.GetPageToken())
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	for i, j := range jobs {
		if fresh, ok := s.m.activeRecord(j.GetId()); ok {
			jobs[i] = fresh
		}
	}
	return &api.ListJobsResponse{Jobs: jobs, NextPageToken: next}, nil
}

// CancelJob implements api.JobServiceServer.
func (s *Server) CancelJob(ctx context.Context, req *api.CancelJobRequest) (*api.Job, error) {
	if _, err := s.accessibleJob(ctx, req.GetJobId()); err != nil {
		return nil, err
	}
	return s.m.cancel(req.GetJobId())
}

// GetArtifact implements api.JobServiceServer.
func (s *Server) GetArtifact(req *api.GetArtifactRequest, stream api.JobService_GetArtifactServer) error {
	if err := checkID(req.GetJobId()); err != nil {
		return err
	}
	if err := checkArtifactName(req.GetName()); err != nil {
		return status.Errorf(codes.InvalidArgument, "name: %v", err)
	}
	rec, err := s.accessibleJob(stream.Context(), req.GetJobId())
	if err != nil {
		return err
	}
	var desc *api.Artifact
	for _, a := range rec.GetArtifacts() {
		if a.GetName() == req.GetName() {
			desc = a
		}
	}
	if desc == nil {
		switch rec.GetState() {
		case api.JobState_JOB_STATE_QUEUED, api.JobState_JOB_STATE_RUNNING:
			return status.Errorf(codes.FailedPrecondition, "job %s is %s; its artifacts are stored when it ends", rec.GetId(), rec.GetState())
		}
		return status.Errorf(codes.NotFound, "job %s has no artifact %q", rec.GetId(), req.GetName())
	}
	data, err := s.m.store.Artifact(rec.GetId(), req.GetName())
	if err != nil {
		return storeStatus(err, rec.GetId())
	}
	first := true
	for first || len(data) > 0 {
		n := min(len(data), artifactChunk)
		chunk := &api.ArtifactChunk{Data: data[:n]}
		if first {
			chunk.Artifact = desc
			first = false
		}
		if err := stream.Send(chunk); err != nil {
			return fmt.Errorf("sending artifact %q: %w", req.GetName(), err)
		}
		data = data[n:]
	}
	return nil
}
