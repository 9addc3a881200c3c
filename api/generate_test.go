package api

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedCodeUpToDate regenerates the Go code with gen.sh into a
// temporary directory and compares it with the committed files. It needs
// the pinned protoc (apt-get install protobuf-compiler); gen.sh installs the
// pinned plugins with `go install`.
func TestGeneratedCodeUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: regeneration installs the protoc plugins")
	}
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		t.Skip("protoc not installed (apt-get install protobuf-compiler); cannot check the generated code")
	}
	if v, err := exec.Command(protoc, "--version").Output(); err != nil || strings.TrimSpace(string(v)) != "libprotoc 3.21.12" {
		t.Skipf("protoc is %q, not the pinned libprotoc 3.21.12 (%v); cannot check the generated code", strings.TrimSpace(string(v)), err)
	}
	out := t.TempDir()
	cmd := exec.Command("bash", "gen.sh", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen.sh: %v\n%s", err, b)
	}
	for _, f := range []string{"gxbit.pb.go", "gxbit_grpc.pb.go"} {
		want, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what gen.sh generates from gxbit.proto; run `go generate ./api` and commit the result", f)
		}
	}
}
