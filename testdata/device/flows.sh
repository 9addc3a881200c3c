#!/usr/bin/env bash
# flows.sh times, on the GPU machine, given programs three ways: natively,
# under gxbit's two-phase flow (gxbit profile at a small size, then gxbit
# accelerate --profile at the given one) and under the single run (gxbit
# run --accelerate), and prints a markdown table of the wall times, their
# ratios to native, the single run's over the two-phase flow's, and
# whether each output is native's. The single run's report (its
# profiling rounds, their guest instructions and seconds, launches) is
# kept in OUTDIR: its --stats in single.out.err, its --report in
# single.json (the two-phase run's in 2phase.json).
#
# Usage: flows.sh [-g cuda|sim] [-T SECONDS] [-o OUTDIR] SPEC...
#
#   SPEC  BINARY:ARGS[:PROFILE ARGS], the arguments space-separated: the
#         program (a static binary, e.g. gcc -O2 -static), the arguments
#         of the timed runs, and those of the two-phase flow's profiling
#         run (default: the timed ones)
#   -g    gxbit's GPU back end (default cuda)
#   -T    time limit of each gxbit run in seconds (default 60); a run past
#         it prints "limit"
#   -o    keep outputs, profiles and reports here (default: a temporary
#         directory)
#
# Environment: GXBIT, the gxbit binary (default: go build of this
# checkout).
#
# Example (unseen programs, built with gcc -O2 -static -lm):
#   GXBIT=$PWD/out/nests/gxbit bash testdata/device/flows.sh -T 25 \
#     'out/unseen/nbody:40000 2:1500 2' \
#     'out/unseen/transpose_add:8000 8000 8:700 650 2' \
#     'out/unseen/fsum:9000 10000:600 700'
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
gpu=cuda limit=60 outdir=
while getopts "g:T:o:h" opt; do
	case $opt in
	g) gpu=$OPTARG ;;
	T) limit=$OPTARG ;;
	o) outdir=$OPTARG ;;
	h)
		sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -eq 0 ]; then
	echo "flows.sh: no program given (SPEC is BINARY:ARGS[:PROFILE ARGS]; -h for help)" >&2
	exit 2
fi
if [ -z "$outdir" ]; then
	outdir=$(mktemp -d)
	trap 'rm -rf "$outdir"' EXIT
fi
mkdir -p "$outdir"
gx=${GXBIT:-}
if [ -z "$gx" ]; then
	gx=$outdir/gxbit
	(cd "$root" && CGO_ENABLED=0 go build -o "$gx" ./cmd/gxbit)
fi

# seconds OUT CMD... runs CMD (stdout to OUT, stderr to OUT.err) and
# prints its wall seconds, or "limit" when it ran past the time limit.
seconds() {
	local o=$1 s e rc=0
	shift
	s=$(date +%s%N)
	"$@" >"$o" 2>"$o.err" || rc=$?
	e=$(date +%s%N)
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo limit
		return
	fi
	[ "$rc" -eq 0 ] || echo "exit $rc" >>"$o"
	awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'
}

# ratio A B prints A/B, or "-" when either is not a number.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "-" }'
}

echo "# native, two-phase and single run, gxbit --gpu $gpu, $(date -u +%Y-%m-%dT%H:%MZ)"
command -v nvidia-smi >/dev/null 2>&1 && echo "# device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)"
echo
echo "| program | args | native s | 2phase s | native/2phase | single s | native/single | single/2phase | output |"
echo "|---|---|---|---|---|---|---|---|---|"
failed=0 n=0
for spec in "$@"; do
	IFS=: read -r bin args pargs <<<"$spec"
	[ -n "$pargs" ] || pargs=$args
	if [ ! -x "$bin" ]; then
		echo "flows.sh: $bin is not an executable" >&2
		exit 2
	fi
	n=$((n + 1))
	name=$(basename "$bin")
	d=$outdir/$n-$name
	mkdir -p "$d"
	read -r -a a <<<"$args"
	read -r -a pa <<<"$pargs"
	tn=$(seconds "$d/native.out" "$bin" "${a[@]}")
	"$gx" profile -o "$d/profile.json" "$bin" "${pa[@]}" >/dev/null 2>"$d/profile.err" || true
	t2=$(seconds "$d/2phase.out" timeout -k 5 "$limit" "$gx" accelerate --profile "$d/profile.json" --gpu "$gpu" --report "$d/2phase.json" "$bin" "${a[@]}")
	t1=$(seconds "$d/single.out" timeout -k 5 "$limit" "$gx" run --accelerate --gpu "$gpu" --stats --report "$d/single.json" "$bin" "${a[@]}")
	same=same
	for f in 2phase single; do
		if [ "$(cat "$d/$f.out")" != "$(cat "$d/native.out")" ]; then
			same="$f differs"
			failed=1
		fi
	done
	echo "| $name | $args | $tn | $t2 | $(ratio "$tn" "$t2") | $t1 | $(ratio "$tn" "$t1") | $(ratio "$t1" "$t2") | $same |"
	grep -E "^gxbit: profiling:" "$d/single.out.err" | sed "s/^gxbit:/  $name single run:/" >&2 || true
done
exit $failed
