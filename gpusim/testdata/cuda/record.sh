#!/bin/bash
# record.sh: rebuild the real-GPU fixtures of this folder. Needs nvcc, ptxas
# and an NVIDIA GPU (run it on the device machine). For each <name>.cu it
#   1. compiles the kernel to <name>.ptx (nvcc -arch=sm_90 -ptx -O3),
#   2. assembles that PTX with ptxas -arch=sm_90 to prove it is valid,
#   3. builds the host program (nvcc -arch=sm_90 -O3) and runs it, which
#      writes <name>.json and the <name>.*.bin data files here.
# Usage: record.sh [name...]   (default: every .cu file)
set -u
cd "$(dirname "$0")" || exit 1
tmp=$(mktemp -d)
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for cu in *.cu; do names+=("${cu%.cu}"); done
fi
nvcc --version | tail -n 2 >"$tmp/toolchain"
one() {
  n=$1
  nvcc -arch=sm_90 -ptx -O3 "$n.cu" -o "$n.ptx" >"$2/$n.log" 2>&1 &&
    ptxas -arch=sm_90 "$n.ptx" -o "$2/$n.cubin" >>"$2/$n.log" 2>&1 &&
    nvcc -arch=sm_90 -O3 "$n.cu" -o "$2/$n.host" >>"$2/$n.log" 2>&1 ||
    { echo "FAIL build $n"; cat "$2/$n.log"; return 1; }
}
export -f one
printf '%s\n' "${names[@]}" | xargs -P 8 -I{} bash -c 'one {} '"$tmp" || true
fail=0
for n in "${names[@]}"; do
  if [ -x "$tmp/$n.host" ]; then
    rm -f "$n".*.bin "$n.json"
    "$tmp/$n.host" || { echo "FAIL run $n"; fail=1; }
  else
    fail=1
  fi
done
cat "$tmp/toolchain"
rm -rf "$tmp"
exit $fail
