#!/usr/bin/env bash
# The phase 2 contract, measured: on each loops program, plain `gxbit run`
# against `gxbit accelerate` (with a profile made beforehand, not timed)
# and `gxbit run --accelerate` (both phases in one run), side by side in
# every round, with the native run for scale. Prints one row per program:
# median seconds over the rounds and the ratios to the plain run (the
# contract: at most 1.10).
#
#   testdata/loops/contract.sh [PROGRAM...]
#
# Environment: GPU (sim or cuda; default sim), ROUNDS (default 3),
# MODE (build mode of the corpus, default O2-static), GXBIT (a built gxbit;
# default: build one), CORPUS (the built corpus, default
# ~/.cache/gxbit-corpus, built with testdata/build.sh), SIZE_<name> (the
# program's arguments; defaults below take about a second of plain run on a
# 2-core AMD host).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
GPU=${GPU:-sim}
ROUNDS=${ROUNDS:-3}
MODE=${MODE:-O2-static}
CORPUS=${CORPUS:-$HOME/.cache/gxbit-corpus}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "${GXBIT:-}" ]; then
  GXBIT=$work/gxbit
  (cd "$root" && go build -o "$GXBIT" ./cmd/gxbit)
fi

declare -A size=(
  [matmul]="256" [mm2]="200" [matvec]="1024" [stencil1d]="200000 20"
  [stencil2d]="400 10" [stencil3d]="64 8" [triangular]="800" [aos]="300000 10"
  [bench_vecops]="300000 10" [sumreduce]="1000000" [prefixsum]="1000000"
  [gaussseidel]="200 8" [histogram]="1000000 64" [earlyexit]="1000000 900000"
  [callloop]="1000000"
)
progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(matmul mm2 matvec stencil1d stencil2d stencil3d triangular aos bench_vecops sumreduce prefixsum gaussseidel histogram earlyexit callloop)

# t CMD... prints the wall seconds of CMD (its output to $work/out).
t() {
  local s e
  s=$(date +%s.%N)
  "$@" >"$work/out" 2>"$work/err" || { echo "FAILED: $* ($(tail -1 "$work/err"))" >&2; return 1; }
  e=$(date +%s.%N)
  echo "$e - $s" | bc
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf '%-13s %-16s %8s %8s %8s %8s %7s %7s %s\n' program args native plain accel online acc/pl onl/pl "launches (accelerate)"
for p in "${progs[@]}"; do
  bin=$CORPUS/$MODE/$p
  [ -x "$bin" ] || { echo "$p: not built ($bin)"; continue; }
  var=SIZE_$p
  args=${!var:-${size[$p]:-}}
  # shellcheck disable=SC2086
  "$GXBIT" profile -o "$work/$p.profile" "$bin" $args >/dev/null 2>&1 || { echo "$p: gxbit profile failed"; continue; }
  # shellcheck disable=SC2086
  "$bin" $args >"$work/native.out" 2>/dev/null || true
  : >"$work/n"; : >"$work/p"; : >"$work/a"; : >"$work/o"
  ok=same
  for _ in $(seq "$ROUNDS"); do
    # shellcheck disable=SC2086
    t "$bin" $args >>"$work/n" || continue
    # shellcheck disable=SC2086
    t "$GXBIT" run "$bin" $args >>"$work/p"
    cmp -s "$work/out" "$work/native.out" || ok=DIFF
    # shellcheck disable=SC2086
    t "$GXBIT" accelerate --gpu "$GPU" --profile "$work/$p.profile" --report "$work/rep.json" "$bin" $args >>"$work/a"
    cmp -s "$work/out" "$work/native.out" || ok=DIFF
    # shellcheck disable=SC2086
    t "$GXBIT" run --accelerate --gpu "$GPU" "$bin" $args >>"$work/o"
    cmp -s "$work/out" "$work/native.out" || ok=DIFF
  done
  n=$(median <"$work/n"); pl=$(median <"$work/p"); a=$(median <"$work/a"); o=$(median <"$work/o")
  launches=$(grep -o '"launches": [0-9]*' "$work/rep.json" | awk '{s+=$2} END {print s+0}')
  printf '%-13s %-16s %8.3f %8.3f %8.3f %8.3f %7.2f %7.2f %s %s\n' "$p" "$args" "$n" "$pl" "$a" "$o" "$(echo "$a / $pl" | bc -l)" "$(echo "$o / $pl" | bc -l)" "$launches" "$ok"
done
