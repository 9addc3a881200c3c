package service

import (
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/gxbit/gxbit/api"
	"github.com/gxbit/gxbit/service/internal/elftest"
)

func TestCheckELF(t *testing.T) {
	good := elftest.Build(elftest.Options{})
	tests := []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"x86-64 exec", good, ""},
		{"x86-64 pie", elftest.Build(elftest.Options{Type: elf.ET_DYN}), ""},
		{"empty", nil, "empty"},
		{"text", []byte("#!/bin/sh\necho hi\n"), "not an ELF file"},
		{"truncated header", good[:20], "not an ELF file"},
		{"32-bit", elftest.Build(elftest.Options{Class: elf.ELFCLASS32, Machine: elf.EM_386}), "ELFCLASS32"},
		{"aarch64", elftest.Build(elftest.Options{Machine: elf.EM_AARCH64}), "EM_AARCH64"},
		{"relocatable", elftest.Build(elftest.Options{Type: elf.ET_REL}), "not an executable"},
		{"core", elftest.Build(elftest.Options{Type: elf.ET_CORE}), "not an executable"},
		{"no entry", elftest.Build(elftest.Options{NoEntry: true}), "no entry point"},
		{"no PT_LOAD", elftest.Build(elftest.Options{NoLoad: true}), "PT_LOAD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckELF(tt.data)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckELF = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("CheckELF = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestCheckELFRealBinary checks the test binary itself, a real Go-built
// x86-64 executable, when the tests run on x86-64.
func TestCheckELFRealBinary(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("no executable path: %v", err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(strings.NewReader(string(data)))
	if err != nil || f.Machine != elf.EM_X86_64 {
		t.Skipf("the test binary is not an x86-64 ELF (%v)", err)
	}
	if err := CheckELF(data); err != nil {
		t.Fatalf("CheckELF(%s) = %v", filepath.Base(exe), err)
	}
}

func FuzzCheckELF(f *testing.F) {
	f.Add(elftest.Build(elftest.Options{}))
	f.Add(elftest.Build(elftest.Options{Class: elf.ELFCLASS32}))
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		err := CheckELF(data)
		if err == nil {
			// Whatever CheckELF accepts, debug/elf must describe as an
			// x86-64 executable.
			ef, perr := elf.NewFile(strings.NewReader(string(data)))
			if perr != nil || ef.Machine != elf.EM_X86_64 || ef.Class != elf.ELFCLASS64 {
				t.Fatalf("accepted a file debug/elf reads as %v, %v", ef, perr)
			}
		}
	})
}

func TestEffectiveLimits(t *testing.T) {
	cfg := LimitsConfig{
		Default: Limits{MemoryBytes: 64 << 20, Instructions: 1000, WallTime: time.Minute},
		Max:     Limits{MemoryBytes: 1 << 30, Instructions: 1e6, WallTime: time.Hour},
	}
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      *api.Limits
		want    Limits
		wantErr string
	}{
		{"nil", nil, cfg.Default, ""},
		{"zeros", &api.Limits{}, cfg.Default, ""},
		{"all set", &api.Limits{MemoryBytes: 2 << 20, Instructions: 5, WallTime: durationpb.New(time.Second)}, Limits{2 << 20, 5, time.Second}, ""},
		{"at max", &api.Limits{MemoryBytes: 1 << 30, Instructions: 1e6, WallTime: durationpb.New(time.Hour)}, cfg.Max, ""},
		{"memory over max", &api.Limits{MemoryBytes: 2 << 30}, Limits{}, "limits.memory_bytes: 2147483648 exceeds"},
		{"memory under min", &api.Limits{MemoryBytes: 4096}, Limits{}, "below the minimum"},
		{"instructions over max", &api.Limits{Instructions: 1e6 + 1}, Limits{}, "limits.instructions"},
		{"negative wall", &api.Limits{WallTime: durationpb.New(-time.Second)}, Limits{}, "is negative"},
		{"wall over max", &api.Limits{WallTime: durationpb.New(2 * time.Hour)}, Limits{}, "exceeds the server's maximum 1h0m0s"},
		{"wall tiny", &api.Limits{WallTime: durationpb.New(time.Microsecond)}, Limits{}, "below the minimum 1ms"},
		{"wall invalid", &api.Limits{WallTime: &durationpb.Duration{Seconds: 1, Nanos: -1}}, Limits{}, "limits.wall_time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cfg.effective(tt.in)
			if tt.wantErr != "" {
				if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("effective = %v, want InvalidArgument containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("effective = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestLimitsConfigCheck(t *testing.T) {
	ok := LimitsConfig{Default: Limits{1 << 20, 1, time.Second}, Max: Limits{1 << 20, 1, time.Second}}
	if err := ok.Check(); err != nil {
		t.Fatalf("Check(%+v) = %v", ok, err)
	}
	bad := []LimitsConfig{
		{Default: Limits{2 << 20, 1, time.Second}, Max: Limits{1 << 20, 1, time.Second}},
		{Default: Limits{1 << 20, 0, time.Second}, Max: Limits{1 << 20, 1, time.Second}},
		{Default: Limits{1 << 20, 1, 0}, Max: Limits{1 << 20, 1, time.Second}},
		{Default: Limits{1 << 20, 2, time.Second}, Max: Limits{1 << 20, 1, time.Second}},
	}
	for _, c := range bad {
		if err := c.Check(); err == nil {
			t.Errorf("Check(%+v) = nil, want an error", c)
		}
	}
}

func TestArtifactNames(t *testing.T) {
	for _, n := range []string{"report.json", "profile.gxp", "k_401000.ptx"} {
		if err := checkArtifactName(n); err != nil {
			t.Errorf("checkArtifactName(%q) = %v", n, err)
		}
	}
	for _, n := range []string{"", ".", "..", "a/b", `a\b`, "a\x00b", strings.Repeat("x", 256)} {
		if err := checkArtifactName(n); err == nil {
			t.Errorf("checkArtifactName(%q) = nil, want an error", n)
		}
	}
}
