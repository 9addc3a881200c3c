#!/usr/bin/env bash
# The gxbit demo: a matrix multiply, run natively, under the translator,
# profiled (phase 1) and accelerated on the simulated GPU (phase 2). Every
# run must print the same line. Usage: bash examples/demo.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-256}
out=out/demo

if ! command -v gcc >/dev/null 2>&1; then
  echo "demo: installing gcc"
  (apt-get update -qq && apt-get install -y -qq gcc libc6-dev) >/dev/null
fi
mkdir -p "$out"
echo "demo: building gxbit and the example"
go build -o out/gxbit ./cmd/gxbit
gcc -O2 -o "$out/matmul" examples/matmul.c

step() { printf '\n== %s\n' "$*"; }

step "native"
time "$out/matmul" "$n"

step "gxbit run (the CPU engine)"
time out/gxbit run --stats "$out/matmul" "$n"

step "gxbit profile (phase 1: find the parallel loop nests)"
out/gxbit profile -o "$out/matmul.profile" --report "$out/profile.json" "$out/matmul" "$n"
out/gxbit profile --print "$out/matmul.profile"

step "gxbit accelerate --gpu sim (phase 2: offload them to the simulated GPU)"
rm -rf "$out/ptx"
time out/gxbit accelerate --profile "$out/matmul.profile" --gpu sim --ptx-dir "$out/ptx" --report "$out/accelerate.json" "$out/matmul" "$n"

step "what gxbit did"
echo "kernels: $(ls "$out/ptx")"
echo "report:"; cat "$out/accelerate.json"; echo
echo "The first kernel (${out}/ptx):"
head -40 "$out/ptx/$(ls "$out/ptx" | head -1)"
