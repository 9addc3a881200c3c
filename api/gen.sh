#!/usr/bin/env bash
# Regenerates gxbit.pb.go and gxbit_grpc.pb.go from gxbit.proto.
#
# Pinned tools (regeneration is byte-for-byte reproducible only with these):
#   protoc              libprotoc 3.21.12  (Debian bookworm: apt-get install protobuf-compiler)
#   protoc-gen-go       google.golang.org/protobuf/cmd/protoc-gen-go      v1.36.12
#   protoc-gen-go-grpc  google.golang.org/grpc/cmd/protoc-gen-go-grpc     v1.6.2
#
# The plugins are installed with `go install` into a tools directory
# ($GXBIT_TOOLS, default $(go env GOPATH)/bin) and used from there, so a
# different plugin elsewhere on PATH does not change the output.
# Usage: api/gen.sh [OUTDIR]   (from anywhere; OUTDIR defaults to api/ itself)
# CI runs it and then `git diff --exit-code api/`; api/generate_test.go
# generates into a temporary OUTDIR and compares with the committed files.
set -euo pipefail

PROTOC_WANT="libprotoc 3.21.12"
PROTOC_GEN_GO_VERSION="v1.36.12"
PROTOC_GEN_GO_GRPC_VERSION="v1.6.2"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="${GXBIT_TOOLS:-$(go env GOPATH)/bin}"
mkdir -p "$tools"

protoc_bin="${PROTOC:-protoc}"
if ! command -v "$protoc_bin" >/dev/null 2>&1; then
	echo "gen.sh: protoc not found; install it with: apt-get install protobuf-compiler" >&2
	exit 1
fi
have="$("$protoc_bin" --version)"
if [[ "$have" != "$PROTOC_WANT" ]]; then
	echo "gen.sh: $protoc_bin is '$have', want '$PROTOC_WANT'; the generated headers would differ" >&2
	exit 1
fi

GOBIN="$tools" go install "google.golang.org/protobuf/cmd/protoc-gen-go@${PROTOC_GEN_GO_VERSION}"
GOBIN="$tools" go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@${PROTOC_GEN_GO_GRPC_VERSION}"

out="$(mkdir -p "${1:-$here}" && cd "${1:-$here}" && pwd)"
cd "$here"
"$protoc_bin" \
	--plugin=protoc-gen-go="$tools/protoc-gen-go" \
	--plugin=protoc-gen-go-grpc="$tools/protoc-gen-go-grpc" \
	--proto_path=. \
	--go_out="$out" --go_opt=paths=source_relative \
	--go-grpc_out="$out" --go-grpc_opt=paths=source_relative \
	gxbit.proto
