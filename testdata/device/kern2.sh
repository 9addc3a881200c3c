#!/usr/bin/env bash
# kern2.sh measures gxbit's kernels against the CUDA C references on the
# GPU machine (issue 10: each kernel within 2x of nvcc's), with kernel
# times that leave out the launches' submission on both sides:
#
#   prepare (here, no GPU): a static gxbit, the cuda package's test binary
#           and the nests programs (gcc -O2 -static) into out/kern2;
#   device  (on the GPU machine, out/kern2 carried): the gate that keeps
#           submission out of kernel times (cuda TestGateHoldsLaunches,
#           BenchmarkLaunchTiming: a tiny kernel's kernel and submit ns
#           with and without it), then testdata/device/nests.sh two-phase
#           at the large sizes with every kernel kept, the 2D and 3D
#           programs again with their threads' runs bounded to 1 and 4
#           iterations (gxbit-run1, gxbit-run4; the default runs up to
#           2), then ptxas -v on every kernel the runs generated
#           (registers, spills, errors) and cuobjdump -sass of each and
#           of the references, for reading here (ptx.tgz).
#           Writes to $OUT (default /tmp/gxbit-kern2): run.log, the
#           table, the ratios over the timed nests (timed.txt), the runs
#           (runs.txt), ptxas lines, and reports.tgz and ptx.tgz.
#           KERN2_SIZE and KERN2_GPU (default large, cuda) try the script
#           elsewhere: KERN2_SIZE=small KERN2_GPU=sim. KERN2_QUICK=1 runs
#           only the gate's test and benchmark, the table and the ratios
#           (no other runs, no ptxas): about a minute for three programs.
#
# Usage: kern2.sh prepare [PROGRAM...] | kern2.sh device [PROGRAM...]
# (default programs: the seven above 2x last session, and the
# time-stepped ones whose launches the timing change affects most).
set -uo pipefail
cd "$(dirname "$0")/../.."
D=out/kern2
mode=${1:-}
shift || true
progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(heat3d mvt lu gesummv doitgen gemver atax jacobi2dt jacobi1d fdtd2d)

case $mode in
prepare)
	set -e
	rm -rf "$D"
	mkdir -p "$D"
	CGO_ENABLED=0 go build -ldflags "-s -w" -o "$D/gxbit" ./cmd/gxbit
	# The same with the runs of 2D and 3D kernels' threads bounded to 1
	# and 4 iterations (ptxgen.buildLongestRun; 2 by default), to measure
	# them.
	for r in 1 4; do
		CGO_ENABLED=0 go build -ldflags "-s -w -X github.com/gxbit/gxbit/ptxgen.buildLongestRun=$r" -o "$D/gxbit-run$r" ./cmd/gxbit
	done
	CGO_ENABLED=0 go test -c -o "$D/cuda.test" ./cuda
	bash testdata/build.sh -s nests -m O2-static "$D/build" "${progs[@]}" >/dev/null
	rm -rf "$D/build/src"
	# The same programs with -g (the same code: checked), for naming
	# the hot spots after their nests (hotnests.py).
	mkdir -p "$D/g"
	for p in "${progs[@]}"; do
		gcc -O2 -static -g -std=gnu11 -o "$D/g/$p" "testdata/nests/$p.c" -lm
		cmp -s <(objcopy -O binary --only-section=.text "$D/g/$p" /dev/stdout) <(objcopy -O binary --only-section=.text "$D/build/O2-static/$p" /dev/stdout) ||
			echo "kern2.sh: $p built with -g has other code than the measured one: its hot spots' names may be wrong" >&2
	done
	git log -1 --format='prepared from %h %s' >"$D/commit"
	# One compressed file: the carry's limit is 64 MiB.
	tar czf "$D.tgz" -C "$D" .
	rm -rf "$D"
	mkdir -p "$D"
	mv "$D.tgz" "$D/kern2.tgz"
	du -sh "$D"
	;;
device)
	OUT=${OUT:-/tmp/gxbit-kern2}
	mkdir -p "$OUT"
	[ -x "$D/gxbit" ] || tar xzf "$D/kern2.tgz" -C "$D"
	exec > >(tee "$OUT/run.log") 2>&1
	say() { printf '\n== %s\n' "$*"; }
	cat "$D/commit"
	nvidia-smi -L
	nvcc --version | tail -1

	say "the gate: launches held on the stream while queued (cuda tests)"
	(cd cuda && "../$D/cuda.test" -test.run 'TestGateHoldsLaunches|TestConformance' -test.v 2>&1 | grep -E '^(=== RUN|--- |PASS|FAIL|ok)|gate|Launch' | grep -v '=== RUN' | head -60)
	(cd cuda && "../$D/cuda.test" -test.run '^$' -test.bench BenchmarkLaunchTiming -test.benchtime 2000x -test.count 3 2>&1 | grep -E 'Benchmark|FAIL|ok')

	say "nests: kernels against the CUDA C references, large sizes, two-phase"
	GXBIT=$PWD/$D/gxbit bash testdata/device/nests.sh -B "$D/build/O2-static" -o "$OUT/nests" -T 40 -s "${KERN2_SIZE:-large}" -g "${KERN2_GPU:-cuda}" -1 -P "${progs[@]}" | tee "$OUT/table.md"

	if [ -n "${KERN2_QUICK:-}" ]; then
		for p in "${progs[@]}"; do
			r=$OUT/nests/runs/$p/report.json
			[ -s "$r" ] || continue
			python3 testdata/device/hotnests.py "$p" "$D/g/$p" "testdata/nests/$p.c" "$r" testdata/nests/expect.json || true
		done | tee "$OUT/hotspots.txt"
		exit 0
	fi
	say "runs of 2D and 3D kernels' threads: gxbit with runs of at most 1 and 4 iterations (2 in the table above), two-phase, the same profiles"
	for p in "${progs[@]}"; do
		case $p in heat3d | jacobi2dt | fdtd2d | lu | gemver) ;; *) continue ;; esac
		d=$OUT/nests/runs/$p
		[ -s "$d/profile.json" ] || continue
		case ${KERN2_SIZE:-large} in large) col=3 ;; medium) col=2 ;; *) col= ;; esac
		args=
		[ -z "$col" ] || args=$(grep "^$p " testdata/nests/sizes | cut -d'|' -f"$col" | xargs)
		for r in 1 4; do
			# shellcheck disable=SC2086
			timeout -k 5 40 "$D/gxbit-run$r" accelerate --profile "$d/profile.json" --gpu "${KERN2_GPU:-cuda}" --report "$d/run$r.json" "$D/build/O2-static/$p" $args >"$d/run$r.out" 2>"$d/run$r.err"
			same=SAME
			cmp -s "$d/run$r.out" "$d/native.out" || same=DIFF
			python3 testdata/device/hotnests.py "$p" "$D/g/$p" "testdata/nests/$p.c" "$d/run$r.json" testdata/nests/expect.json | sed "s/^/runs<=$r $same /"
		done
	done | tee "$OUT/runs.txt"

	say "ptxas -v -arch=sm_90 on every kernel the runs generated"
	for p in "${progs[@]}"; do
		for f in "$OUT/nests/runs/$p"/ptx/*.ptx; do
			[ -f "$f" ] || continue
			if r=$(ptxas -arch=sm_90 -v -o "${f%.ptx}.cubin" "$f" 2>&1); then st=ok; else st=FAIL; fi
			# The machine code, for reading here: instruction counts
			# against the reference's.
			[ $st = FAIL ] || cuobjdump -sass "${f%.ptx}.cubin" >"${f%.ptx}.sass" 2>&1 || true
			rm -f "${f%.ptx}.cubin"
			line=$(echo "$r" | grep -E 'registers' | sed 's/^ptxas info *: *//' | head -1)
			spill=$(echo "$r" | grep -E 'spill' | sed 's/^ptxas info *: *//' | head -1)
			echo "$p $(basename "$f") $st | $line | $spill"
			[ $st = ok ] || echo "$r"
		done
	done | tee "$OUT/ptxas.txt"
	# The references' machine code, beside ours.
	for p in "${progs[@]}"; do
		mkdir -p "$OUT/nests/runs/$p/ptx"
		nvcc -O3 -fmad=false -arch=sm_90 -cubin -o "$OUT/nests/runs/$p/ptx/ref.cubin" "testdata/device/nests/$p.cu" &&
			cuobjdump -sass "$OUT/nests/runs/$p/ptx/ref.cubin" >"$OUT/nests/runs/$p/ptx/ref.sass" 2>&1
		nvcc -O3 -fmad=false -arch=sm_90 --resource-usage -cubin -o /dev/null "testdata/device/nests/$p.cu" 2>&1 | grep -E 'registers|spill' | sed "s/^/$p ref: /"
		rm -f "$OUT/nests/runs/$p/ptx/ref.cubin"
	done | tee -a "$OUT/ptxas.txt"

	say "per hot spot: its nest, launches, kernel and submit ms; the nests the reference times"
	for p in "${progs[@]}"; do
		r=$OUT/nests/runs/$p/report.json
		[ -s "$r" ] || continue
		python3 testdata/device/hotnests.py "$p" "$D/g/$p" "testdata/nests/$p.c" "$r" testdata/nests/expect.json || true
	done | tee "$OUT/hotspots.txt"
	say "kernel ms of the nests the reference times (initialisation left out), over the reference's"
	for p in "${progs[@]}"; do
		ref=$(sed -n "s/^$p kernel_ms=\([0-9.]*\).*/\1/p" "$OUT/nests/runs/$p/ref.err" 2>/dev/null)
		ours=$(sed -n "s/^$p total .*timed_kernel_ms=\([0-9.]*\).*/\1/p" "$OUT/hotspots.txt")
		[ -n "$ref" ] && [ -n "$ours" ] || continue
		awk -v p="$p" -v a="$ours" -v b="$ref" 'BEGIN { if (a > 0 && b > 0) printf "%s reference %s ms, gxbit %s ms: %.3g\n", p, b, a, a / b }'
	done | tee "$OUT/timed.txt"
	awk '{ s += log($NF); n++ } END { if (n) printf "geometric mean over %d: %.3g\n", n, exp(s / n) }' "$OUT/timed.txt" | tee -a "$OUT/timed.txt"
	# What comes back: the table, the per-hot-spot lines, ptxas, the reports.
	mkdir -p "$OUT/reports"
	for p in "${progs[@]}"; do
		cp "$OUT/nests/runs/$p/report.json" "$OUT/reports/$p.json" 2>/dev/null || true
		cp "$OUT/nests/runs/$p/ref.err" "$OUT/reports/$p.ref.err" 2>/dev/null || true
		for r in 1 4; do
			cp "$OUT/nests/runs/$p/run$r.json" "$OUT/reports/$p.run$r.json" 2>/dev/null || true
		done
	done
	# One file each: what comes back from the device is limited in files.
	tar czf "$OUT/reports.tgz" -C "$OUT" reports && rm -rf "$OUT/reports"
	tar czf "$OUT/ptx.tgz" -C "$OUT/nests/runs" $(cd "$OUT/nests/runs" && ls -d */ptx 2>/dev/null) 2>/dev/null || true
	rm -rf "$OUT/nests"
	;;
*)
	sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac
