#!/usr/bin/env bash
# Prepares everything the device machine needs, here (no GPU needed):
# a static gxbit, gpusim's test binary, the loop programs (static, -O2 and
# -O3, and accel/testdata/bytestencil.c at -O3), their profiles and
# arguments, and the PTX gxbit generates for them.
# Then: the device tool runs testdata/device/run.sh with `out/device` carried.
set -euo pipefail
cd "$(dirname "$0")/../.."
D=out/device
rm -rf "$D"; mkdir -p "$D"/{bin,profiles,ptx,args}
CGO_ENABLED=0 go build -o "$D/gxbit" ./cmd/gxbit
CGO_ENABLED=0 go test -c -o "$D/gpusim.test" ./gpusim
CGO_ENABLED=0 go test -c -o "$D/cuda.test" ./cuda
bash testdata/build.sh -m O2-static -m O3-static "$D/build" >/dev/null
gcc -O2 -static -o "$D/bin/O2-examplematmul" examples/matmul.c
echo 256 > "$D/args/O2-examplematmul"
for mode in O2 O3; do
  for src in testdata/loops/*.c; do
    name=$(basename "$src" .c)
    case $name in bench_*) continue;; esac
    cp "$D/build/$mode-static/$name" "$D/bin/$mode-$name"
    # the .args file: "arg V" lines give the arguments
    { grep '^arg ' "testdata/loops/$name.args" 2>/dev/null || true; } | sed 's/^arg //' | tr '\n' ' ' > "$D/args/$mode-$name"
  done
done
# Vectorised byte code (gcc -O3: SSE2 byte and word ops over rows at byte
# offsets, movdqu and movq at any address), as ptxgen's packed-op table
# lowers it.
gcc -O3 -static -o "$D/bin/O3-bytestencil" accel/testdata/bytestencil.c
echo "300 400 3" > "$D/args/O3-bytestencil"
for b in "$D"/bin/*; do
  name=$(basename "$b")
  # shellcheck disable=SC2046
  "$D/gxbit" profile -o "$D/profiles/$name.profile" "$b" $(cat "$D/args/$name") >/dev/null 2>"$D/profiles/$name.log" || echo "prepare: profiling $name failed (see $D/profiles/$name.log)"
  # The kernels gxbit launches, from a run on the simulated GPU, which
  # must print what the native run prints.
  # shellcheck disable=SC2046
  if [ "$("$D/gxbit" accelerate --gpu sim --profile "$D/profiles/$name.profile" --ptx-dir "$D/ptx/$name" "$b" $(cat "$D/args/$name") 2>>"$D/profiles/$name.log" | md5sum)" != "$("$b" $(cat "$D/args/$name") 2>&1 | md5sum)" ]; then
    echo "prepare: $name: accelerated output differs from native on gpusim"
  fi
done
# Lazy copy-back: bench_vecops passes y from one nest to the next on the
# device; the report counts what stays there and what comes back.
mkdir -p "$D/bench"
gcc -O2 -static -o "$D/bench/vecops" testdata/loops/bench_vecops.c
"$D/gxbit" profile -o "$D/bench/vecops.profile" "$D/bench/vecops" 5000 3 >/dev/null
rm -rf "$D/build"
du -sh "$D"
