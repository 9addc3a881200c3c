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
# This run is shorter than the 250 ms of CPU time after which gxbit arms
# its hot spots (--arm-after 0 arms them at the start), and on this
# machine's simulated GPU the cost model would keep the nest on the CPU:
# --always-offload launches wherever the guards pass, to show the
# kernels running. On a real GPU (--gpu cuda) leave both out.
rm -rf "$out/ptx"
time out/gxbit accelerate --profile "$out/matmul.profile" --gpu sim --arm-after 0 --always-offload --ptx-dir "$out/ptx" --report "$out/accelerate.json" "$out/matmul" "$n"

step "what gxbit did"
echo "kernels: $(ls "$out/ptx")"
echo "report:"; cat "$out/accelerate.json"; echo
first=$(ls "$out/ptx" | head -1)
if [ -z "$first" ]; then
  echo "no kernel was generated (the report says why)"
  exit 1
fi
echo "The first kernel (${out}/ptx/$first):"
head -40 "$out/ptx/$first"
