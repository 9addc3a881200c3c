#!/usr/bin/env bash
# ab.sh compares two gxbit binaries' two-phase runs on the GPU machine, side
# by side in one call: for each program, the native run, then each binary's
# `gxbit accelerate --report` after its own `gxbit profile` at the
# program's default size. Reports and outputs go to OUTDIR/NAME/PROGRAM.
#
# Usage: ab.sh BINDIR OUTDIR GXBIT... -- PROGRAM[:ARGS]...
#   BINDIR   the programs (gcc -O2 -static), as build.sh -s nests makes them
#   GXBIT    gxbit binaries to compare (their base names name the columns)
#   PROGRAM  a program of BINDIR; ARGS, comma-separated, replace its
#            large size from testdata/nests/sizes
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=$1 out=$2
shift 2
gxs=()
while [ "$1" != -- ]; do gxs+=("$1"); shift; done
shift
now() { date +%s.%N; }
for spec in "$@"; do
	p=${spec%%:*}
	if [[ $spec == *:* ]]; then IFS=, read -r -a args <<<"${spec#*:}"; else
		read -r -a args <<<"$(awk -F'|' -v p="$p" '$1 ~ "^"p" *$" {print $3}' "$root/testdata/nests/sizes")"
	fi
	mkdir -p "$out/native"
	t0=$(now); "$bin/$p" "${args[@]}" >"$out/native/$p.out"; t1=$(now)
	line="$p ${args[*]}: native $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')"
	for gx in "${gxs[@]}"; do
		n=$(basename "$gx") d=$out/$n/$p
		mkdir -p "$d"
		"$gx" profile -o "$d/profile.json" "$bin/$p" >/dev/null 2>"$d/profile.err" || true
		t0=$(now)
		rc=0
		timeout -k 5 "${T:-25}" "$gx" accelerate --profile "$d/profile.json" --gpu cuda --report "$d/report.json" "$bin/$p" "${args[@]}" >"$d/out" 2>"$d/err" || rc=$?
		t1=$(now)
		same=same; cmp -s "$d/out" "$out/native/$p.out" || same=DIFFERS
		line+=" | $n $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}') rc=$rc $same"
	done
	echo "$line"
done
