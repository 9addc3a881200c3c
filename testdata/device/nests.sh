#!/usr/bin/env bash
# nests.sh compares, on the GPU machine, each offloadable hot nest of
# testdata/nests with the same nest written by hand in CUDA C
# (testdata/device/nests/NAME.cu, one thread per output element, nvcc -O3
# -fmad=false): per program, the native run, the reference's kernel time,
# gxbit's two-phase run on the GPU (profile at the default size, then
# accelerate with --report): its kernel and copy seconds, launches and
# whole time; and the single run (gxbit run --accelerate): its whole time.
# Kernel times on both sides are the device's time running the kernels,
# without the host's submission of the launches, which is given apart
# (submit ms: the reference's launch calls, gxbit's submit_seconds).
# The single run's --stats (profiling rounds, per hot spot the GPU and
# CPU iterations) stay in OUTDIR/runs/PROGRAM/online.err. Every output is
# compared with the native run's. It prints a markdown
# table with gxbit's kernel time over the reference's and the geometric
# mean of that ratio (issue 10 asks for at most 2x): whole programs, every
# hot spot gxbit ran (initialisation nests included) against every kernel
# of the reference; then a table per nest (pernest.py): each nest's hot
# spots (named by addr2line on the programs, which build.sh builds with
# -g, and the LOOP markers) against the reference kernels that mirror it
# (ref.h times each launch by itself), the ratio, the schedules; the
# nests without a reference (initialisation) apart; and the geometric
# mean over the paired nests.
#
# Usage: nests.sh [-s small|medium|large|contract] [-g cuda|sim] [-o OUTDIR] [-b]
#                 [-B BINDIR] [-T SECONDS] [-1] [-P] [PROGRAM...]
#
#   -s  size set of testdata/nests/sizes; small is the programs' defaults
#       (default large: native 1-10 s)
#   -g  gxbit's GPU back end (default cuda)
#   -o  keep builds, profiles, reports and outputs here (default: a
#       temporary directory)
#   -b  then run testdata/nests/bench.sh -n 1 at the same size and back
#       end (gxbit run included: long at the large size)
#   -B  the programs built already (gcc -O2 -static, as build.sh -s nests
#       -m O2-static makes them) in BINDIR: for a machine without a static
#       libc
#   -T  time limit of each gxbit run in seconds (default 600); a run past
#       it prints "exit 124" and counts as the limit
#   -1  two-phase only: leave out the single run (its columns read -)
#   -P  keep the two-phase run's kernels (--ptx-dir) in OUTDIR/runs/NAME/ptx
#   PROGRAM  only these programs (default: every NAME.cu)
#
# Environment: GXBIT, the gxbit binary (default: go build of this
# checkout); NVCC (default nvcc) and NVCC_ARCH (default native). Without
# nvcc the references are built for the CPU (ref.h's REF_CPU) and only
# their output is checked: their times are not GPU times.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
set=large gpu=cuda outdir= bench= prebuilt= limit=600 online=1 keepptx=
while getopts "s:g:o:bB:T:1Ph" opt; do
	case $opt in
	s) set=$OPTARG ;;
	g) gpu=$OPTARG ;;
	o) outdir=$OPTARG ;;
	b) bench=1 ;;
	B) prebuilt=$OPTARG ;;
	T) limit=$OPTARG ;;
	1) online= ;;
	P) keepptx=1 ;;
	h)
		sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
case $set in small) col= ;; medium) col=2 ;; large) col=3 ;; contract) col=4 ;; *)
	echo "nests.sh: unknown size set '$set' (want small, medium, large or contract)" >&2
	exit 2
	;;
esac
if [ -z "$outdir" ]; then
	outdir=$(mktemp -d)
	trap 'rm -rf "$outdir"' EXIT
fi
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

progs=("$@")
if [ ${#progs[@]} -eq 0 ]; then
	for f in "$here"/nests/*.cu; do progs+=("$(basename "$f" .cu)"); done
fi
declare -A sizeargs
if [ -n "$col" ]; then
	while IFS= read -r line; do
		line=${line%%#*}
		[ -n "${line// /}" ] || continue
		sizeargs[$(echo "$line" | cut -d'|' -f1 | xargs)]=$(echo "$line" | cut -d'|' -f"$col" | xargs)
	done <"$root/testdata/nests/sizes"
fi

if [ -n "$prebuilt" ]; then
	bin=$(cd "$prebuilt" && pwd)
else
	bash "$root/testdata/build.sh" -s nests -m O2-static "$outdir/build" "${progs[@]}" >&2
	bin=$outdir/build/O2-static
fi
gx=${GXBIT:-}
if [ -z "$gx" ]; then
	command -v go >/dev/null || {
		echo "nests.sh: set GXBIT to a gxbit binary (no go to build one)" >&2
		exit 2
	}
	(cd "$root" && CGO_ENABLED=0 go build -o "$outdir/gxbit" ./cmd/gxbit)
	gx=$outdir/gxbit
fi
nvcc=${NVCC:-nvcc}
mkdir -p "$outdir/ref"
if command -v "$nvcc" >/dev/null 2>&1; then
	refkind="nvcc -O3 -fmad=false -arch=${NVCC_ARCH:-native}"
	for p in "${progs[@]}"; do
		"$nvcc" -O3 -fmad=false -arch="${NVCC_ARCH:-native}" -o "$outdir/ref/$p" "$here/nests/$p.cu"
	done
else
	refkind="no nvcc: references run on the CPU (gcc -DREF_CPU), their times are not GPU times"
	for p in "${progs[@]}"; do
		"${CC:-gcc}" -x c -O2 -std=gnu11 -DREF_CPU -o "$outdir/ref/$p" "$here/nests/$p.cu" -lm
	done
fi

# seconds CMD... runs CMD (stdout to $out, stderr to $err) and prints its
# wall seconds.
seconds() {
	local s e
	s=$(date +%s%N)
	"$@" >"$out" 2>"$err" || echo "exit $?" >>"$out"
	e=$(date +%s%N)
	awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'
}

echo "# nests kernels against CUDA C references: $set sizes, gxbit --gpu $gpu, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "# references: $refkind"
command -v nvidia-smi >/dev/null 2>&1 && echo "# device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)"
echo
echo "| program | args | native s | reference kernel ms | gxbit kernel ms | gxbit/reference | reference / gxbit submit ms | launches | copy s | back MB | ready / wait s | gxbit 2phase s | native/2phase | gxbit online s | native/online | output |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
failed=0 logsum=0 count=0
for p in "${progs[@]}"; do
	d=$outdir/runs/$p
	mkdir -p "$d"
	read -r -a args <<<"${sizeargs[$p]:-}"
	out=$d/native.out err=$d/native.err
	tn=$(seconds "$bin/$p" "${args[@]}")
	out=$d/ref.out err=$d/ref.err
	seconds "$outdir/ref/$p" "${args[@]}" >/dev/null
	refms=$(sed -n "s/^$p kernel_ms=\([0-9.]*\).*/\1/p" "$d/ref.err")
	refsub=$(sed -n "s/^$p kernel_ms=.* submit_ms=\([0-9.]*\).*/\1/p" "$d/ref.err")
	"$gx" profile -o "$d/profile.json" "$bin/$p" >/dev/null 2>"$d/profile.err" || true
	out=$d/gxbit.out err=$d/gxbit.err
	ptxopt=()
	[ -z "$keepptx" ] || ptxopt=(--ptx-dir "$d/ptx")
	tg=$(seconds timeout -k 5 "$limit" "$gx" accelerate --profile "$d/profile.json" --gpu "$gpu" --report "$d/report.json" "${ptxopt[@]}" "$bin/$p" "${args[@]}")
	out=$d/online.out err=$d/online.err
	to=-
	if [ -n "$online" ]; then
		to=$(seconds timeout -k 5 "$limit" "$gx" run --accelerate --stats --gpu "$gpu" "$bin/$p" "${args[@]}")
	else
		cp "$d/native.out" "$d/online.out"
	fi
	kms=- sms=- launches=- copys=- backmb=- ready=-
	if [ -s "$d/report.json" ]; then
		kms=$(awk '$1 == "\"kernel_seconds\":" { gsub(/,/, "", $2); s += $2 } END { printf "%.3f", s * 1000 }' "$d/report.json")
		sms=$(awk '$1 == "\"submit_seconds\":" { gsub(/,/, "", $2); s += $2 } END { printf "%.3f", s * 1000 }' "$d/report.json")
		launches=$(awk '$1 == "\"launches\":" { gsub(/,/, "", $2); s += $2 } END { print s + 0 }' "$d/report.json")
		copys=$(awk '$1 == "\"copy_seconds\":" { gsub(/,/, "", $2); s += $2 } END { printf "%.3f", s }' "$d/report.json")
		backmb=$(awk '$1 == "\"bytes_brought_back\":" { gsub(/,/, "", $2); s += $2 } END { printf "%.1f", s / 1e6 }' "$d/report.json")
		ready=$(awk '$1 == "\"device_ready_seconds\":" { gsub(/,/, "", $2); r = $2 } $1 == "\"device_wait_seconds\":" { gsub(/,/, "", $2); w = $2 } END { printf "%.3f / %.3f", r, w }' "$d/report.json")
	fi
	ratio=-
	if [ -n "$refms" ] && [ "$kms" != - ]; then
		ratio=$(awk -v a="$kms" -v b="$refms" 'BEGIN { if (a > 0 && b > 0) printf "%.3g", a / b; else printf "-" }')
		if [ "$ratio" != - ]; then
			logsum=$(awk -v s="$logsum" -v r="$ratio" 'BEGIN { print s + log(r) }')
			count=$((count + 1))
		fi
	fi
	output=ok
	cmp -s "$d/ref.out" "$d/native.out" || output="DIFF: reference"
	cmp -s "$d/gxbit.out" "$d/native.out" || output="${output/ok/} DIFF: gxbit"
	cmp -s "$d/online.out" "$d/native.out" || output="${output/ok/} DIFF: online"
	[ "$output" = ok ] || failed=1
	speed=$(awk -v a="$tn" -v b="$tg" 'BEGIN { if (b > 0) printf "%.3g", a / b; else printf "-" }')
	speedo=$(awk -v a="$tn" -v b="$to" 'BEGIN { if (b > 0) printf "%.3g", a / b; else printf "-" }')
	echo "| $p | ${sizeargs[$p]:-default} | $tn | ${refms:--} | $kms | $ratio | ${refsub:--} / $sms | $launches | $copys | $backmb | $ready | $tg | $speed | $to | $speedo | $output |"
done
if [ "$count" -gt 0 ]; then
	echo "| **geometric mean** ($count programs) | | | | | $(awk -v s="$logsum" -v n="$count" 'BEGIN { printf "%.3g", exp(s / n) }') | | | | | | | | | | |"
fi
echo
echo "gxbit kernel ms sums kernel_seconds over the report's hot spots (initialisation nests included); the reference's sums the times of its kernels' launches (after initialisation). Neither counts the launches' submission (submit ms: the host's time in the launch calls). back MB: bytes the device held that came back into guest memory; ready / wait s: when the device was ready after phase 2 began, and how long the guest waited for it and its kernels (two-phase report)."
echo
echo "## Per nest"
echo
echo "# references: $refkind"
echo
nlog=0 ncount=0
for p in "${progs[@]}"; do
	d=$outdir/runs/$p
	[ -d "$d" ] || continue
	hdr=()
	[ "$p" != "${progs[0]}" ] || hdr=(-H)
	python3 "$here/pernest.py" "${hdr[@]}" "$p" "$bin/$p" "$root/testdata/nests/$p.c" "$d/report.json" "$d/ref.err" "$root/testdata/nests/expect.json" 2>"$d/pernest.err" || true
	read -r paired lsum < <(sed -n "s/^$p nests paired=\([0-9]*\) logsum=\([-0-9.e+]*\)$/\1 \2/p" "$d/pernest.err")
	if [ -n "${paired:-}" ] && [ "$paired" -gt 0 ]; then
		nlog=$(awk -v s="$nlog" -v r="$lsum" 'BEGIN { print s + r }')
		ncount=$((ncount + paired))
	fi
done
if [ "$ncount" -gt 0 ]; then
	echo
	echo "geometric mean of gxbit/reference over $ncount nests: $(awk -v s="$nlog" -v n="$ncount" 'BEGIN { printf "%.3g", exp(s / n) }')"
fi
echo
echo "Per nest: gxbit ms sums kernel_seconds over the nest's hot spots (each named LOOP@entry, its launches, ms and schedule; a * marks the nests expect.json calls hot); reference ms sums the launches of the reference kernels that mirror the nest (a+b: a kernel doing both nests' work). The last column is the whole-program ratio of the table above (the old metric)."
if [ -n "$bench" ]; then
	echo
	GXBIT=$gx bash "$root/testdata/nests/bench.sh" -n 1 -g "$gpu" -s "${set/small/medium}" "${progs[@]}" || failed=1
fi
exit "$failed"
