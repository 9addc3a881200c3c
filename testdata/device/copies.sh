#!/usr/bin/env bash
# Runs on the device machine, from the repo root, with out/device prepared
# by testdata/device/prepare.sh and carried: checks the staged copies
# (pinned buffer, two halves) byte for byte against the driver's pageable
# path, then measures both: 256 MiB host to device and back, from fresh
# and from reused Go memory, in GB/s (Benchmark... MB/s column).
set -eu
D=out/device
[ -x "$D/cuda.test" ] || { echo "copies.sh: $D/cuda.test missing: run testdata/device/prepare.sh first" >&2; exit 1; }
cd cuda
"../$D/cuda.test" -test.run '^TestStagedCopies$' -test.v -test.count 1
"../$D/cuda.test" -test.run '^$' -test.bench '^BenchmarkCopy$' -test.benchtime 5x -test.count 2
