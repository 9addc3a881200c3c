package service

import (
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/gxbit/gxbit/api"
)

func phaseToAPI(p Phase) api.Phase {
	switch p {
	case PhaseLoad:
		return api.Phase_PHASE_LOAD
	case PhaseRun:
		return api.Phase_PHASE_RUN
	case PhaseProfile:
		return api.Phase_PHASE_PROFILE
	case PhaseAccelerate:
		return api.Phase_PHASE_ACCELERATE
	}
	return api.Phase_PHASE_UNSPECIFIED
}

func artifactKindToAPI(k ArtifactKind) api.ArtifactKind {
	switch k {
	case ArtifactProfile:
		return api.ArtifactKind_ARTIFACT_KIND_PROFILE
	case ArtifactReport:
		return api.ArtifactKind_ARTIFACT_KIND_REPORT
	case ArtifactPTX:
		return api.ArtifactKind_ARTIFACT_KIND_PTX
	}
	return api.ArtifactKind_ARTIFACT_KIND_OTHER
}

func statsToAPI(s Stats) *api.Stats {
	out := &api.Stats{
		GuestInstructions: s.GuestInstructions,
		HotSpotsFound:     uint32(max(s.HotSpotsFound, 0)),
		HotSpotsOffloaded: uint32(max(s.HotSpotsOffloaded, 0)),
		KernelLaunches:    s.KernelLaunches,
		KernelSpeedups:    s.KernelSpeedups,
		GpuBackend:        s.GPUBackend,
		Speedup:           s.Speedup(),
	}
	if s.AcceleratedTime != 0 {
		out.AcceleratedTime = durationpb.New(s.AcceleratedTime)
	}
	if s.CPUEngineTime != 0 {
		out.CpuEngineTime = durationpb.New(s.CPUEngineTime)
	}
	if s.KernelTime != 0 {
		out.KernelTime = durationpb.New(s.KernelTime)
	}
	if s.CopyTime != 0 {
		out.CopyTime = durationpb.New(s.CopyTime)
	}
	if s.TranslationTime != 0 {
		out.TranslationTime = durationpb.New(s.TranslationTime)
	}
	if len(s.Fallbacks) > 0 {
		out.Fallbacks = make(map[string]uint64, len(s.Fallbacks))
		for k, v := range s.Fallbacks {
			out.Fallbacks[k] = v
		}
	}
	for _, p := range s.Phases {
		out.Phases = append(out.Phases, &api.PhaseTime{Phase: phaseToAPI(p.Phase), Duration: durationpb.New(p.Duration)})
	}
	return out
}
