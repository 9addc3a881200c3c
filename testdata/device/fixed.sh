#!/usr/bin/env bash
# fixed.sh measures, on the GPU machine, what phase 2 pays besides its
# kernels and copies (issue 10: the device's readiness, translation, the
# CUDA JIT), per program of testdata/nests at one size set: the native
# run, then gxbit's two-phase run (profile at the default size, accelerate
# with --report) under each of these settings, in this order:
#
#   cold      a new, empty JIT cache (CUDA_CACHE_PATH=OUTDIR/jitcache)
#   cached    the same cache again: what a run that repeats another pays
#   nocache   CUDA_CACHE_DISABLE=1: the JIT compiles every module
#   threads4  nocache, GXBIT_CUDA_JIT_THREADS=4 (modules compiled 4 at once)
#   levelN    nocache, GXBIT_CUDA_JIT_LEVEL=N for N in LEVELS (default
#             "0 1 3"; the driver's default is 4): the JIT's time against
#             the kernels'
#
# Per run it prints, from the report: the whole time, the device's init
# (libcuda + cuInit, before phase 2), context and measurement seconds,
# when it was ready and how long the guest waited for it and its kernels,
# the guest's wait for translation and modules (translate_seconds), the
# background's translation, the module loads (the JIT) wherever they ran,
# and the kernels' seconds; and whether the output is native's.
#
# Usage: fixed.sh -B BINDIR [-s medium|large] [-g cuda|sim] [-o OUTDIR]
#                 [-T SECONDS] [PROGRAM...]
#
#   -B  the programs, built (build.sh -s nests -m O2-static makes them)
#   -s  size set of testdata/nests/sizes (default large)
#   -g  gxbit's GPU back end (default cuda; sim checks the script)
#   -o  keep profiles, reports and outputs here (default: a temporary
#       directory)
#   -T  time limit of each gxbit run in seconds (default 60)
#   PROGRAM  default: gemm doitgen atax twomm threemm
#
# Environment: GXBIT, the gxbit binary (required); LEVELS.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
set=large outdir= bin= limit=60 gpu=cuda
while getopts "s:g:o:B:T:h" opt; do
	case $opt in
	s) set=$OPTARG ;;
	g) gpu=$OPTARG ;;
	o) outdir=$OPTARG ;;
	B) bin=$OPTARG ;;
	T) limit=$OPTARG ;;
	h)
		sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
case $set in medium) col=2 ;; large) col=3 ;; *)
	echo "fixed.sh: unknown size set '$set' (want medium or large)" >&2
	exit 2
	;;
esac
[ -n "$bin" ] || {
	echo "fixed.sh: -B BINDIR is required" >&2
	exit 2
}
gx=${GXBIT:?fixed.sh: set GXBIT to the gxbit binary}
bin=$(cd "$bin" && pwd)
if [ -z "$outdir" ]; then
	outdir=$(mktemp -d)
	trap 'rm -rf "$outdir"' EXIT
fi
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(gemm doitgen atax twomm threemm)
declare -A sizeargs
while IFS= read -r line; do
	line=${line%%#*}
	[ -n "${line// /}" ] || continue
	sizeargs[$(echo "$line" | cut -d'|' -f1 | xargs)]=$(echo "$line" | cut -d'|' -f"$col" | xargs)
done <"$root/testdata/nests/sizes"

# sum FIELD FILE: the sum of a numeric JSON field over the report.
sum() { awk -v f="\"$1\":" '$1 == f { gsub(/,/, "", $2); s += $2 } END { printf "%.3f", s }' "$2"; }

settings=(cold cached nocache threads4)
for l in ${LEVELS:-0 1 3}; do settings+=("level$l"); done
rm -rf "$outdir/jitcache"

echo "# phase 2's fixed costs, $set sizes, $(date -u +%Y-%m-%dT%H:%MZ)"
command -v nvidia-smi >/dev/null 2>&1 && echo "# device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)"
echo
echo "| program | setting | native s | 2phase s | init s | context s | measure s | ready s | device wait s | guest translate s | background s | JIT (load) s | kernel s | launches | output |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for p in "${progs[@]}"; do
	d=$outdir/runs/$p
	mkdir -p "$d"
	read -r -a args <<<"${sizeargs[$p]:-}"
	t0=$(date +%s.%N)
	"$bin/$p" "${args[@]}" >"$d/native.out" 2>/dev/null || true
	tn=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	"$gx" profile -o "$d/profile.json" "$bin/$p" >/dev/null 2>"$d/profile.err" || true
	for s in "${settings[@]}"; do
		env=(CUDA_CACHE_PATH="$outdir/jitcache")
		case $s in
		nocache) env+=(CUDA_CACHE_DISABLE=1) ;;
		threads4) env+=(CUDA_CACHE_DISABLE=1 GXBIT_CUDA_JIT_THREADS=4) ;;
		level*) env+=(CUDA_CACHE_DISABLE=1 GXBIT_CUDA_JIT_LEVEL="${s#level}") ;;
		esac
		r=$d/report.$s.json
		rm -f "$r"
		t0=$(date +%s.%N)
		env "${env[@]}" timeout -k 5 "$limit" "$gx" accelerate --profile "$d/profile.json" --gpu "$gpu" --report "$r" "$bin/$p" "${args[@]}" >"$d/$s.out" 2>"$d/$s.err" || true
		tg=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
		output=ok
		cmp -s "$d/$s.out" "$d/native.out" || output=DIFF
		if [ -s "$r" ]; then
			echo "| $p | $s | $tn | $tg | $(sum device_init_seconds "$r") | $(sum device_open_seconds "$r") | $(sum device_measure_seconds "$r") | $(sum device_ready_seconds "$r") | $(sum device_wait_seconds "$r") | $(sum translate_seconds "$r") | $(sum background_seconds "$r") | $(sum load_seconds "$r") | $(sum kernel_seconds "$r") | $(sum launches "$r" | cut -d. -f1) | $output |"
		else
			echo "| $p | $s | $tn | $tg | | | | | | | | | | | $output (no report) |"
		fi
	done
	# cold and cached share the cache; the next program starts cold too.
	rm -rf "$outdir/jitcache"
done
