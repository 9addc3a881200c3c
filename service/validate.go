package service

import (
	"bytes"
	"debug/elf"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gxbit/gxbit/api"
)

// minMemoryBytes is the smallest memory limit a job may ask for.
const minMemoryBytes = 1 << 20

// CheckELF reports why b is not an x86-64 Linux executable gxbit can run,
// or nil when it is one: a 64-bit little-endian ELF for EM_X86_64 of type
// ET_EXEC or ET_DYN, with an entry point and at least one PT_LOAD segment.
func CheckELF(b []byte) (err error) {
	if len(b) == 0 {
		return fmt.Errorf("the binary is empty")
	}
	defer func() {
		// debug/elf is not hardened against every malformed header; a
		// panic there means the file is malformed, never a daemon bug.
		if r := recover(); r != nil {
			err = fmt.Errorf("the binary is not a valid ELF file: %v", r)
		}
	}()
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("the binary is not an ELF file: %w", err)
	}
	if f.Class != elf.ELFCLASS64 {
		return fmt.Errorf("the binary is %v; gxbit runs x86-64 (ELFCLASS64) programs", f.Class)
	}
	if f.Data != elf.ELFDATA2LSB {
		return fmt.Errorf("the binary is %v; x86-64 programs are little-endian (ELFDATA2LSB)", f.Data)
	}
	if f.Machine != elf.EM_X86_64 {
		return fmt.Errorf("the binary is for %v; gxbit runs x86-64 (EM_X86_64) programs", f.Machine)
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("the binary is of type %v, not an executable (ET_EXEC or ET_DYN)", f.Type)
	}
	if f.Entry == 0 {
		return fmt.Errorf("the binary has no entry point (e_entry is 0)")
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			return nil
		}
	}
	return fmt.Errorf("the binary has no loadable (PT_LOAD) segment")
}

// LimitsConfig holds the server's default and maximum job limits.
type LimitsConfig struct {
	// Default applies to a limit a submission leaves at zero.
	Default Limits
	// Max is the largest value a submission may ask for.
	Max Limits
}

// Check reports whether the configuration is usable: every default set and
// no default above its maximum.
func (c LimitsConfig) Check() error {
	switch {
	case c.Default.MemoryBytes < minMemoryBytes || c.Default.MemoryBytes > c.Max.MemoryBytes:
		return fmt.Errorf("default memory limit %d must be between %d and the maximum %d", c.Default.MemoryBytes, minMemoryBytes, c.Max.MemoryBytes)
	case c.Default.Instructions == 0 || c.Default.Instructions > c.Max.Instructions:
		return fmt.Errorf("default instruction limit %d must be between 1 and the maximum %d", c.Default.Instructions, c.Max.Instructions)
	case c.Default.WallTime <= 0 || c.Default.WallTime > c.Max.WallTime:
		return fmt.Errorf("default wall-time limit %v must be positive and at most the maximum %v", c.Default.WallTime, c.Max.WallTime)
	}
	return nil
}

// effective applies the defaults to l and checks it against the maximums.
// Its errors are gRPC InvalidArgument statuses naming the field.
func (c LimitsConfig) effective(l *api.Limits) (Limits, error) {
	out := c.Default
	if l == nil {
		return out, nil
	}
	if v := l.GetMemoryBytes(); v != 0 {
		if v < minMemoryBytes {
			return Limits{}, status.Errorf(codes.InvalidArgument, "limits.memory_bytes: %d is below the minimum %d (1 MiB)", v, minMemoryBytes)
		}
		if v > c.Max.MemoryBytes {
			return Limits{}, status.Errorf(codes.InvalidArgument, "limits.memory_bytes: %d exceeds the server's maximum %d", v, c.Max.MemoryBytes)
		}
		out.MemoryBytes = v
	}
	if v := l.GetInstructions(); v != 0 {
		if v > c.Max.Instructions {
			return Limits{}, status.Errorf(codes.InvalidArgument, "limits.instructions: %d exceeds the server's maximum %d", v, c.Max.Instructions)
		}
		out.Instructions = v
	}
	if d := l.GetWallTime(); d != nil {
		if err := d.CheckValid(); err != nil {
			return Limits{}, status.Errorf(codes.InvalidArgument, "limits.wall_time: %v", err)
		}
		w := d.AsDuration()
		switch {
		case w < 0:
			return Limits{}, status.Errorf(codes.InvalidArgument, "limits.wall_time: %v is negative", w)
		case w > c.Max.WallTime:
			return Limits{}, status.Errorf(codes.InvalidArgument, "limits.wall_time: %v exceeds the server's maximum %v", w, c.Max.WallTime)
		case w > 0 && w < time.Millisecond:
			return Limits{}, status.Errorf(codes.InvalidArgument, "limits.wall_time: %v is below the minimum 1ms", w)
		case w > 0:
			out.WallTime = w
		}
	}
	return out, nil
}

// checkArtifactName reports whether name is a plain file name.
func checkArtifactName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("artifact name %q is not a file name", name)
	case strings.ContainsAny(name, "/\\\x00"):
		return fmt.Errorf("artifact name %q contains a path separator or NUL", name)
	case len(name) > 255:
		return fmt.Errorf("artifact name %.20q... is longer than 255 bytes", name)
	}
	return nil
}

// modeFromAPI converts a wire mode; unknown values are InvalidArgument.
func modeFromAPI(m api.Mode) (Mode, error) {
	switch m {
	case api.Mode_MODE_UNSPECIFIED, api.Mode_MODE_RUN:
		return ModeRun, nil
	case api.Mode_MODE_PROFILE:
		return ModeProfile, nil
	case api.Mode_MODE_ACCELERATE:
		return ModeAccelerate, nil
	case api.Mode_MODE_BOTH:
		return ModeBoth, nil
	}
	return 0, status.Errorf(codes.InvalidArgument, "spec.mode: unknown mode %d", int32(m))
}

// gpuFromAPI converts a wire GPU choice, using def for UNSPECIFIED.
func gpuFromAPI(g api.GpuBackend, def GPU) (GPU, error) {
	switch g {
	case api.GpuBackend_GPU_BACKEND_UNSPECIFIED:
		return def, nil
	case api.GpuBackend_GPU_BACKEND_AUTO:
		return GPUAuto, nil
	case api.GpuBackend_GPU_BACKEND_SIM:
		return GPUSim, nil
	case api.GpuBackend_GPU_BACKEND_CUDA:
		return GPUCUDA, nil
	}
	return 0, status.Errorf(codes.InvalidArgument, "spec.gpu: unknown GPU backend %d", int32(g))
}

// gpuToAPI converts a GPU choice to its wire value.
func gpuToAPI(g GPU) api.GpuBackend {
	switch g {
	case GPUSim:
		return api.GpuBackend_GPU_BACKEND_SIM
	case GPUCUDA:
		return api.GpuBackend_GPU_BACKEND_CUDA
	}
	return api.GpuBackend_GPU_BACKEND_AUTO
}

// ParseGPU parses a GPU choice as the flags spell it: auto, sim or cuda.
func ParseGPU(s string) (GPU, error) {
	for _, g := range []GPU{GPUAuto, GPUSim, GPUCUDA} {
		if s == g.String() {
			return g, nil
		}
	}
	return 0, fmt.Errorf("unknown GPU backend %q (want auto, sim or cuda)", s)
}
