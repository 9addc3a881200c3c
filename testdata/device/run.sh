#!/usr/bin/env bash
# Runs on the device machine (an NVIDIA GPU, nvcc, ptxas), from the repo
# root, with out/device prepared by testdata/device/prepare.sh and carried.
# Writes its logs to $OUT.
set -u
D=out/device
OUT=${OUT:-/tmp/gxbit-device}
mkdir -p "$OUT"
exec > >(tee "$OUT/run.log") 2>&1
say() { printf '\n== %s\n' "$*"; }

# Modules load when loaded, not at their first launch, so that a kernel's
# timed launch is the kernel alone.
export CUDA_MODULE_LOADING=EAGER
say "device"
nvidia-smi -L; nvcc --version | tail -1

say "ptxas -arch=sm_90 on every generated kernel"
ok=0; bad=0
for f in $(find "$D/ptx" -name '*.ptx' | sort); do
  if ptxas -arch=sm_90 -o /dev/null "$f" 2>"$OUT/ptxas.err"; then ok=$((ok+1)); else bad=$((bad+1)); echo "FAIL $f"; cat "$OUT/ptxas.err"; fi
done
echo "ptxas: $ok passed, $bad failed"

say "gpusim: thread instructions per second, 1 worker and all cores"
[ -n "${SKIP_GPUSIM:-}" ] || (cd gpusim && "../$D/gpusim.test" -test.run '^$' -test.bench BenchmarkGpusim -test.benchtime 3x -test.count 2 2>&1 | grep -E 'Benchmark|ok|FAIL|Error')

say "gpusim scaling against the machine's own ceiling: 1 worker, 16 workers in one process, 16 one-worker processes at once (matmul512)"
[ -n "${SKIP_GPUSIM:-}" ] || (cd gpusim && B="../$D/gpusim.test" && for r in 1 2 3; do
  one=$("$B" -test.run '^$' -test.bench 'BenchmarkGpusim/matmul512/workers=1$' -test.benchtime 3x 2>&1 | awk '/Bench/ {print $7}')
  all=$("$B" -test.run '^$' -test.bench "BenchmarkGpusim/matmul512/workers=$(nproc)\$" -test.benchtime 10x 2>&1 | awk '/Bench/ {print $7}')
  for i in $(seq "$(nproc)"); do GOMAXPROCS=1 "$B" -test.run '^$' -test.bench 'BenchmarkGpusim/matmul512/workers=1$' -test.benchtime 3x > "$OUT/proc$i.txt" 2>&1 & done; wait
  procs=$(cat "$OUT"/proc*.txt | awk '/Bench/ {s += $7} END {print s}'); rm -f "$OUT"/proc*.txt
  awk -v a="$one" -v b="$all" -v c="$procs" -v n="$(nproc)" 'BEGIN { printf "1 worker %.3g/s; %d workers %.3g/s (efficiency %.2f); %d processes %.3g/s (in-process reaches %.2f of that)\n", a, n, b, b / a / n, n, c, b / c }'
done)

say "loop programs: native vs gxbit accelerate --gpu cuda vs --gpu sim (output must be identical)"
for b in "$D"/bin/*; do
  name=$(basename "$b"); args=$(cat "$D/args/$name")
  [ -f "$D/profiles/$name.profile" ] || { echo "$name: no profile"; continue; }
  # shellcheck disable=SC2086
  n=$("$b" $args 2>&1 | md5sum | cut -c1-8)
  c=$("$D/gxbit" accelerate --profile "$D/profiles/$name.profile" --gpu cuda --report "$OUT/$name.cuda.json" "$b" $args 2>"$OUT/$name.cuda.err" | md5sum | cut -c1-8)
  s=$("$D/gxbit" accelerate --profile "$D/profiles/$name.profile" --gpu sim "$b" $args 2>/dev/null | md5sum | cut -c1-8)
  launches=$(grep -o '"launches": [0-9]*' "$OUT/$name.cuda.json" 2>/dev/null | awk '{s+=$2} END {print s+0}')
  verdict=SAME; { [ "$n" = "$c" ] && [ "$n" = "$s" ]; } || verdict=DIFF
  echo "$name: native $n cuda $c sim $s launches $launches $verdict"
done

say "matmul 2000x2000 (examples/matmul.c -O2): native vs gxbit accelerate --gpu cuda"
# The profile was made at n=256: the row strides differ at 2000, and the
# runtime proves the rows disjoint before it offloads.
P="$D/profiles/O2-examplematmul.profile"
t0=$(date +%s.%N); "$D/bin/O2-examplematmul" 2000 > "$OUT/mm.native"; t1=$(date +%s.%N)
"$D/gxbit" accelerate --profile "$P" --gpu cuda --ptx-dir "$OUT/mmptx" --report "$OUT/mm2000.json" "$D/bin/O2-examplematmul" 2000 > "$OUT/mm.accel"; t2=$(date +%s.%N)
cmp "$OUT/mm.native" "$OUT/mm.accel" && echo "output identical: $(cat "$OUT/mm.native")"
awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "native %.3f s; accelerated %.3f s; speedup %.2fx\n", b - a, c - b, (b - a) / (c - b) }'
grep -E '"(kernel|copy|translate)_seconds"|launches' "$OUT/mm2000.json"

say "lazy copy-back: bench_vecops 4000000 x 20 on the GPU (y stays on the device between its two nests)"
t0=$(date +%s.%N); "$D/bench/vecops" 4000000 20 > "$OUT/vec.native"; t1=$(date +%s.%N)
"$D/gxbit" accelerate --profile "$D/bench/vecops.profile" --gpu cuda --report "$OUT/vecops.json" "$D/bench/vecops" 4000000 20 > "$OUT/vec.accel"; t2=$(date +%s.%N)
cmp "$OUT/vec.native" "$OUT/vec.accel" && echo "output identical: $(cat "$OUT/vec.native")"
awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "native %.3f s; accelerated %.3f s\n", b - a, c - b }'
grep -E '"(bytes_[a-z_]*|brought_back_seconds|copy_seconds|kernel_seconds|launches)"' "$OUT/vecops.json" | tr -d ' ' | paste -sd' '

tar czf "$OUT/reports.tgz" -C "$OUT" $(cd "$OUT" && ls *.json *.err 2>/dev/null) && rm -f "$OUT"/*.json "$OUT"/*.err

say "the same nest in CUDA C, nvcc -O3"
nvcc -O3 -arch=sm_90 -o "$OUT/matmul_ref" testdata/device/matmul_ref.cu && "$OUT/matmul_ref" 2000
say "registers: the generated 2D matmul kernel, and nvcc's"
ptxas -arch=sm_90 -v -o /dev/null "$OUT/mmptx/0x4015f8_2d.ptx" 2>&1 | grep -E 'registers|spill'
nvcc -O3 -arch=sm_90 --resource-usage -c -o /dev/null testdata/device/matmul_ref.cu 2>&1 | grep -E 'registers|spill'

