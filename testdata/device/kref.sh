#!/usr/bin/env bash
# kref.sh measures, on the GPU machine, each nest's kernel against the
# CUDA C reference kernels that mirror it (issue 10: each within 2x of
# nvcc -O3 -fmad=false), and what loading gxbit's kernels costs:
#
#   prepare (here, no GPU): a static gxbit and the nests programs (gcc -O2
#           -static -g, build.sh) into out/kref/kref.tgz, with the commit.
#   device  (on the GPU machine, out/kref carried): testdata/device/nests.sh
#           two-phase at the large sizes with every kernel kept (-1 -P):
#           the whole-program table and the table per nest (pernest.py:
#           gxbit's hot spots of each nest against the reference's kernels
#           of it, each launch timed by itself, ref.h); the references
#           again without their gate (REF_GATE=0: what holding the stream
#           changes in their times); then per kernel gxbit generated: its
#           PTX lines, ptxas -v (registers, spills) and ptxas's wall ms at
#           its default level, as a measure of what the driver's JIT
#           spends on it, beside each hot spot's load_seconds; and the
#           SASS of the kernels and of the references, for reading here.
#           Writes $OUT (default /tmp/gxbit-kref): run.log, table.md,
#           nogate.txt, modules.txt, reports.tgz (reports, the
#           references' stderr), ptx.tgz (PTX and SASS).
#           KREF_SIZE and KREF_GPU (default large, cuda) try it elsewhere:
#           KREF_SIZE=small KREF_GPU=sim.
#
# Usage: kref.sh prepare [PROGRAM...] | kref.sh device [PROGRAM...]
# (default programs: every testdata/device/nests/NAME.cu).
set -uo pipefail
cd "$(dirname "$0")/../.."
D=out/kref
mode=${1:-}
shift || true
progs=("$@")
if [ ${#progs[@]} -eq 0 ]; then
	for f in testdata/device/nests/*.cu; do progs+=("$(basename "$f" .cu)"); done
fi

case $mode in
prepare)
	set -e
	rm -rf "$D"
	mkdir -p "$D"
	CGO_ENABLED=0 go build -ldflags "-s -w" -o "$D/gxbit" ./cmd/gxbit
	bash testdata/build.sh -s nests -m O2-static "$D/build" "${progs[@]}" >/dev/null
	rm -rf "$D/build/src"
	git log -1 --format='prepared from %h %s' >"$D/commit"
	# One compressed file: the carry's limit is 64 MiB.
	tar czf "$D.tgz" -C "$D" .
	rm -rf "$D"
	mkdir -p "$D"
	mv "$D.tgz" "$D/kref.tgz"
	du -sh "$D"
	;;
device)
	OUT=${OUT:-/tmp/gxbit-kref}
	mkdir -p "$OUT"
	[ -x "$D/gxbit" ] || tar xzf "$D/kref.tgz" -C "$D"
	exec > >(tee "$OUT/run.log") 2>&1
	say() { printf '\n== %s\n' "$*"; }
	cat "$D/commit"
	nvidia-smi -L
	nvcc --version | tail -1
	size=${KREF_SIZE:-large}

	say "nests: whole programs and per nest against the CUDA C references, $size sizes, two-phase"
	GXBIT=$PWD/$D/gxbit bash testdata/device/nests.sh -B "$D/build/O2-static" -o "$OUT/nests" -T 60 -s "$size" -g "${KREF_GPU:-cuda}" -1 -P "${progs[@]}" | tee "$OUT/table.md"

	say "the references without their gate (REF_GATE=0): per kernel ms, gated then not"
	case $size in small) col= ;; medium) col=2 ;; contract) col=4 ;; *) col=3 ;; esac
	for p in "${progs[@]}"; do
		d=$OUT/nests/runs/$p
		[ -x "$OUT/nests/ref/$p" ] || continue
		args=
		[ -z "$col" ] || args=$(grep "^$p " testdata/nests/sizes | cut -d'|' -f"$col" | xargs)
		# shellcheck disable=SC2086
		REF_GATE=0 timeout 120 "$OUT/nests/ref/$p" $args 2>"$d/ref-nogate.err" >/dev/null
		paste -d' ' <(grep " kernel" "$d/ref.err") <(grep " kernel" "$d/ref-nogate.err" | sed 's/^/| nogate: /')
	done | tee "$OUT/nogate.txt"

	say "modules: per kernel PTX lines, ptxas -v -arch=sm_90 (registers, spills) and its wall ms; per hot spot load_seconds"
	for p in "${progs[@]}"; do
		for f in "$OUT/nests/runs/$p"/ptx/*.ptx; do
			[ -f "$f" ] || continue
			lines=$(wc -l <"$f")
			entries=$(grep -c '^\.visible \.entry\|^\.entry' "$f")
			s=$(date +%s%N)
			if r=$(ptxas -arch=sm_90 -v -o "${f%.ptx}.cubin" "$f" 2>&1); then st=ok; else st=FAIL; fi
			e=$(date +%s%N)
			[ $st = FAIL ] || cuobjdump -sass "${f%.ptx}.cubin" >"${f%.ptx}.sass" 2>&1 || true
			rm -f "${f%.ptx}.cubin"
			regs=$(echo "$r" | grep -o 'Used [0-9]* registers' | head -1)
			spill=$(echo "$r" | grep -o '[0-9]* bytes spill stores' | head -1)
			echo "$p $(basename "$f") $st lines=$lines entries=$entries ptxas_ms=$(((e - s) / 1000000)) | $regs | $spill"
			[ $st = ok ] || echo "$r"
		done
		r=$OUT/nests/runs/$p/report.json
		[ -s "$r" ] && python3 -c '
import json, sys
for h in json.load(open(sys.argv[2])).get("hotspots") or []:
    if h.get("launches"):
        print("%s hot spot %s launches %d load_seconds %.3f translate_seconds %.3f kernel_ms %.3f" % (sys.argv[1], h["entry"],
              h["launches"], h.get("load_seconds", 0), h.get("translate_seconds", 0), 1000 * h.get("kernel_seconds", 0)))
' "$p" "$r"
	done | tee "$OUT/modules.txt"
	# The references' machine code, beside gxbit's.
	for p in "${progs[@]}"; do
		mkdir -p "$OUT/nests/runs/$p/ptx"
		nvcc -O3 -fmad=false -arch=sm_90 --resource-usage -cubin -o "$OUT/nests/runs/$p/ptx/ref.cubin" "testdata/device/nests/$p.cu" 2>&1 |
			grep -E 'registers|spill|Function properties' | sed "s/^/$p ref: /"
		cuobjdump -sass "$OUT/nests/runs/$p/ptx/ref.cubin" >"$OUT/nests/runs/$p/ptx/ref.sass" 2>&1
		rm -f "$OUT/nests/runs/$p/ptx/ref.cubin"
	done | tee -a "$OUT/modules.txt"

	# What comes back: the tables, the module lines, the reports and the
	# references' stderr in one file, the kernels in another (what comes
	# back from the device is limited in files).
	mkdir -p "$OUT/reports"
	for p in "${progs[@]}"; do
		d=$OUT/nests/runs/$p
		cp "$d/report.json" "$OUT/reports/$p.json" 2>/dev/null || true
		for e in ref.err ref-nogate.err pernest.err profile.err gxbit.err; do
			cp "$d/$e" "$OUT/reports/$p.$e" 2>/dev/null || true
		done
	done
	tar czf "$OUT/reports.tgz" -C "$OUT" reports && rm -rf "$OUT/reports"
	tar czf "$OUT/ptx.tgz" -C "$OUT/nests/runs" $(cd "$OUT/nests/runs" && ls -d */ptx 2>/dev/null) 2>/dev/null || true
	rm -rf "$OUT/nests"
	;;
*)
	sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac
