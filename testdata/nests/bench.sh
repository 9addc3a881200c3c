#!/usr/bin/env bash
# bench.sh measures issue 10's table on the nests programs: for each program
# at one size set, side by side and interleaved, the median of N runs of
#
#   native       the program built with gcc -O2 -static
#   run          gxbit run
#   profile      gxbit profile (phase 1 alone, at the same size; issue 11
#                asks for at most 2x run)
#   online       gxbit run --accelerate --gpu GPU (both phases in one run)
#   2phase       gxbit accelerate --gpu GPU with a profile from gxbit
#                profile at the program's default (small) size
#
# and from the two-phase run's report (--report): kernel launches, kernel
# and copy seconds, hot spots offloaded out of those in the profile, and
# the schedule chosen. Every run's stdout and exit status are compared with
# the native run's; a difference is reported in the "output" column and in
# the exit status (1), and the failing run's output is kept as
# MODE.failREP.{out,err,status} in the output directory's runs/PROGRAM/.
# It prints a markdown table, the ratios against plain gxbit run and
# against native, and their geometric means.
#
# Usage: bench.sh [-n N] [-g sim|cuda] [-s medium|large|contract] [-t SECONDS]
#                 [-e jit|interp] [-c] [-o OUTDIR] [PROGRAM...]
#
#   -n  runs of each mode per program, interleaved (default 3)
#   -g  GPU back end for the accelerated runs (default sim)
#   -s  size set from the file sizes beside this script (default medium)
#   -t  time limit of one run; a run past it counts as the limit, marked >
#       (default 600)
#   -e  the CPU engine of every gxbit run (--engine; default: gxbit's)
#   -c  CPU seconds (user + sys, GNU time's) instead of wall seconds: on a
#       shared machine, where wall times of separate runs do not compare;
#       the simulator's kernels count on every core they ran on
#   -o  keep the build, profiles, reports and outputs here (default: a
#       temporary directory, removed at the end)
#   PROGRAM  only these programs (default: all of sizes)
#
# Environment: GXBIT, the gxbit binary to measure (default: built from this
# checkout with go build into the output directory); CC (default gcc).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
runs=3 gpu=sim set=medium limit=600 outdir= engine=() cpu=
while getopts "n:g:s:t:e:co:h" opt; do
	case $opt in
	n) runs=$OPTARG ;;
	g) gpu=$OPTARG ;;
	s) set=$OPTARG ;;
	t) limit=$OPTARG ;;
	e) engine=(--engine "$OPTARG") ;;
	c) cpu=1 ;;
	o) outdir=$OPTARG ;;
	h)
		sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
case $set in medium) col=2 ;; large) col=3 ;; contract) col=4 ;; *)
	echo "bench.sh: unknown size set '$set' (want medium, large or contract)" >&2
	exit 2
	;;
esac
case $gpu in sim | cuda) ;; *)
	echo "bench.sh: unknown GPU '$gpu' (want sim or cuda)" >&2
	exit 2
	;;
esac
[[ $runs =~ ^[1-9][0-9]*$ ]] || {
	echo "bench.sh: -n wants a positive count" >&2
	exit 2
}

if [ -z "$outdir" ]; then
	outdir=$(mktemp -d)
	trap 'rm -rf "$outdir"' EXIT
fi
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

# The programs and their arguments at this size.
declare -A sizeargs
order=()
while IFS= read -r line; do
	line=${line%%#*}
	[ -n "${line// /}" ] || continue
	name=$(echo "$line" | cut -d'|' -f1 | xargs)
	sizeargs[$name]=$(echo "$line" | cut -d'|' -f"$col" | xargs)
	order+=("$name")
done <"$here/sizes"
if [ -n "$cpu" ] && [ ! -x /usr/bin/time ]; then
	echo "bench.sh: -c needs GNU time as /usr/bin/time" >&2
	exit 2
fi
if [ $# -gt 0 ]; then
	for p in "$@"; do
		[ -n "${sizeargs[$p]+x}" ] || {
			echo "bench.sh: no program '$p' in $here/sizes" >&2
			exit 2
		}
	done
	order=("$@")
fi

# The binaries: gcc -O2 -static through build.sh, and gxbit.
bash "$here/../build.sh" -s nests -m O2-static "$outdir/build" "${order[@]}" >&2
bin=$outdir/build/O2-static
gx=${GXBIT:-}
if [ -z "$gx" ]; then
	command -v go >/dev/null || {
		echo "bench.sh: set GXBIT to a gxbit binary (no go to build one)" >&2
		exit 2
	}
	(cd "$here/../.." && CGO_ENABLED=0 go build -o "$outdir/gxbit" ./cmd/gxbit)
	gx=$outdir/gxbit
fi

# timed OUT ERR CMD... runs CMD with the time limit and prints its wall
# seconds (the limit, prefixed by >, when it ran past it); its stdout goes to
# OUT, stderr to ERR, and its exit status to OUT.status.
timed() {
	local out=$1 err=$2
	shift 2
	local s e st=0
	s=$(date +%s%N)
	if [ -n "$cpu" ]; then
		/usr/bin/time -f "%U %S" -o "$out.time" timeout "$limit" "$@" >"$out" 2>"$err" || st=$?
	else
		timeout "$limit" "$@" >"$out" 2>"$err" || st=$?
	fi
	e=$(date +%s%N)
	echo "$st" >"$out.status"
	if [ "$st" = 124 ]; then
		echo ">$limit"
	elif [ -n "$cpu" ]; then
		awk 'END { printf "%.3f", $1 + $2 }' "$out.time"
	else
		awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'
	fi
}

# median prints the median of its arguments (a >-marked limit sorts last).
median() {
	printf '%s\n' "$@" | sed 's/^>//' | sort -g | awk '{ v[NR] = $1 } END { printf "%s", v[int((NR + 1) / 2)] }'
	for v in "$@"; do
		if [[ $v == '>'* ]]; then
			echo -n "+" # at least one run hit the limit
			return
		fi
	done
}

# same OUT reports whether OUT's stdout and status match the native run's.
same() {
	cmp -s "$1" "$dir/native.out" && cmp -s "$1.status" "$dir/native.out.status"
}

# report FIELD sums a number field over the hot spots of a report.
report_sum() {
	awk -v f="\"$1\":" '$1 == f { gsub(/,/, "", $2); s += $2 } END { printf "%g", s + 0 }' "$dir/report.json"
}

# ratio A B prints A/B to three significant digits (a + mark dropped).
ratio() { awk -v a="${1%+}" -v b="${2%+}" 'BEGIN { if (b > 0) printf "%.3g", a / b; else printf "-" }'; }

echo "# nests benchmark: $set sizes, gpu $gpu, median of $runs, $([ -n "$cpu" ] && echo "CPU seconds (user + sys)" || echo "wall seconds"), engine ${engine[1]:-default}, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "# host: $(uname -m), $(getconf _NPROCESSORS_ONLN) cores, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | xargs)"
echo "# gxbit: $gx"
echo
echo "| program | args | native s | run s | profile s | online s | 2phase s | profile/run | online/run | 2phase/run | native/online | native/2phase | launches | kernel s | copy s | offloaded | schedule | output |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
failed=0
sum_pr=0 sum_or=0 sum_tr=0 sum_no=0 sum_nt=0 count=0
for p in "${order[@]}"; do
	dir=$outdir/runs/$p
	mkdir -p "$dir"
	read -r -a args <<<"${sizeargs[$p]}"
	# Phase 1 at the default size (not timed in the table).
	"$gx" profile "${engine[@]}" -o "$dir/profile.json" "$bin/$p" >"$dir/profile.out" 2>"$dir/profile.err" || true
	tn=() tr=() tp=() to=() tt=()
	bad="" slow=""
	for ((r = 0; r < runs; r++)); do
		tn+=("$(timed "$dir/native.out" "$dir/native.err" "$bin/$p" "${args[@]}")")
		tr+=("$(timed "$dir/run.out" "$dir/run.err" "$gx" run "${engine[@]}" "$bin/$p" "${args[@]}")")
		tp+=("$(timed "$dir/profiled.out" "$dir/profiled.err" "$gx" profile "${engine[@]}" -o "$dir/profiled.json" "$bin/$p" "${args[@]}")")
		to+=("$(timed "$dir/online.out" "$dir/online.err" "$gx" run "${engine[@]}" --stats --accelerate --gpu "$gpu" "$bin/$p" "${args[@]}")")
		tt+=("$(timed "$dir/2phase.out" "$dir/2phase.err" "$gx" accelerate "${engine[@]}" --profile "$dir/profile.json" --gpu "$gpu" --report "$dir/report.json" "$bin/$p" "${args[@]}")")
		for m in run profiled online 2phase; do
			if [ "$(cat "$dir/$m.out.status")" = 124 ]; then
				slow="$slow $m" # past the time limit: its output is cut short
			elif ! same "$dir/$m.out"; then
				bad="$bad $m"
				# Keep the failing run's output for a look.
				cp "$dir/$m.out" "$dir/$m.fail$r.out"
				cp "$dir/$m.out.status" "$dir/$m.fail$r.status"
				cp "$dir/$m.err" "$dir/$m.fail$r.err"
			fi
		done
	done
	mn=$(median "${tn[@]}") mr=$(median "${tr[@]}") mp=$(median "${tp[@]}") mo=$(median "${to[@]}") mt=$(median "${tt[@]}")
	launches=- kernel=- copy=- offloaded=- sched=-
	if [ -s "$dir/report.json" ]; then
		launches=$(report_sum launches)
		kernel=$(report_sum kernel_seconds)
		copy=$(report_sum copy_seconds)
		offloaded="$(awk '$1 == "\"launches\":" { gsub(/,/, "", $2); if ($2 > 0) n++ } END { print n + 0 }' "$dir/report.json")/$(grep -c '"entry":' "$dir/report.json" || true)"
		# The schedule: the report's own words where it has them, else
		# how many offloaded hot spots ran 1D and 2D kernels.
		sched=$(grep -o '"schedule": *"[^"]*"' "$dir/report.json" | sed 's/.*: *"//; s/"$//' | sort | uniq -c | awk '{ c = $1; $1 = ""; printf "%s%s×%s", sep, c, substr($0, 2); sep = "; " }' || true)
		if [ -z "$sched" ]; then
			sched=$(awk '$1 == "\"launches\":" { gsub(/,/, "", $2); l = $2 } $1 == "\"launches_2d\":" { gsub(/,/, "", $2); if (l > 0) { if ($2 > 0) d2++; else d1++ } } END { printf "%d×1D, %d×2D", d1, d2 }' "$dir/report.json")
		fi
	fi
	online_launches=$(grep -o '[0-9]* kernel launches' "$dir/online.err" | cut -d' ' -f1 || true)
	[ -n "$online_launches" ] && launches="$launches (online $online_launches)"
	output=ok
	if [ -n "$bad" ]; then
		output="DIFF: $(printf '%s\n' $bad | sort -u | xargs)"
		failed=1
	fi
	if [ -n "$slow" ]; then
		output="${output/ok/} TIMEOUT: $(printf '%s\n' $slow | sort -u | xargs)"
	fi
	r_pr=$(ratio "$mp" "$mr") r_or=$(ratio "$mo" "$mr") r_tr=$(ratio "$mt" "$mr") r_no=$(ratio "$mn" "$mo") r_nt=$(ratio "$mn" "$mt")
	if [ "$r_pr" != - ] && [ "$r_or" != - ] && [ "$r_tr" != - ] && [ "$r_no" != - ] && [ "$r_nt" != - ]; then
		sum_pr=$(awk -v s="$sum_pr" -v r="$r_pr" 'BEGIN { print s + log(r) }')
		sum_or=$(awk -v s="$sum_or" -v r="$r_or" 'BEGIN { print s + log(r) }')
		sum_tr=$(awk -v s="$sum_tr" -v r="$r_tr" 'BEGIN { print s + log(r) }')
		sum_no=$(awk -v s="$sum_no" -v r="$r_no" 'BEGIN { print s + log(r) }')
		sum_nt=$(awk -v s="$sum_nt" -v r="$r_nt" 'BEGIN { print s + log(r) }')
		count=$((count + 1))
	fi
	echo "| $p | ${sizeargs[$p]} | $mn | $mr | $mp | $mo | $mt | $r_pr | $r_or | $r_tr | $r_no | $r_nt | $launches | $kernel | $copy | $offloaded | $sched | $output |"
done
if [ "$count" -gt 0 ]; then
	geo() { awk -v s="$1" -v n="$count" 'BEGIN { printf "%.3g", exp(s / n) }'; }
	echo "| **geometric mean** ($count programs) | | | | | | | $(geo "$sum_pr") | $(geo "$sum_or") | $(geo "$sum_tr") | $(geo "$sum_no") | $(geo "$sum_nt") | | | | | | |"
fi
echo
echo "profile/run, online/run and 2phase/run above 1 are slowdowns against plain gxbit run; native/online and native/2phase above 1 are speedups over native. A time marked + hit the ${limit}s limit in at least one run (the limit counts as its time)."
exit "$failed"
