#!/usr/bin/env bash
# bring.sh measures on the GPU machine what bringing data back from the
# device and copying it in cost (issue 10): per driver call (cuda
# BenchmarkCallCost: the hand-off, copies each way by size from Go and
# pinned memory, a launch) and per program, two gxbit binaries side by
# side (testdata/device/ab.sh): the reports' bytes_brought_back,
# brought_back_seconds, _faults, _runs, _parts and each hot spot's
# copy_parts.
#
#   prepare BASE (here, no GPU): gxbit from this checkout and from the git
#           revision BASE (default main), cuda's test binary and the nests
#           programs (gcc -O2 -static) into out/bring/bring.tgz.
#   device  (on the GPU machine, out/bring carried): the cuda tests of
#           batches and mapped memory (TestConformance), BenchmarkCallCost,
#           then ab.sh on PROGRAMS (default: gemm at 2000 2300 2600,
#           cholesky, lu, heat3d at their large sizes), then a summary
#           of each report (summary.txt). Writes to $OUT.
#
# Usage: bring.sh prepare [BASE] | bring.sh device [PROGRAM[:ARGS]...]
set -uo pipefail
cd "$(dirname "$0")/../.."
D=out/bring
mode=${1:-}
shift || true

case $mode in
prepare)
	set -e
	base=${1:-main}
	rm -rf "$D"
	mkdir -p "$D/bin"
	CGO_ENABLED=0 go build -ldflags "-s -w" -o "$D/bin/gxbit" ./cmd/gxbit
	tmp=$(mktemp -d)
	git worktree add -q --detach "$tmp/base" "$base"
	(cd "$tmp/base" && CGO_ENABLED=0 go build -ldflags "-s -w" -o "$OLDPWD/$D/bin/gxbit-base" ./cmd/gxbit)
	git worktree remove --force "$tmp/base"
	rm -rf "$tmp"
	CGO_ENABLED=0 go test -c -o "$D/cuda.test" ./cuda
	bash testdata/build.sh -s nests -m O2-static "$D/build" gemm cholesky lu heat3d >/dev/null
	rm -rf "$D/build/src"
	{
		git log -1 --format='prepared from %h %s'
		echo "base: $base ($(git rev-parse --short "$base"))"
	} >"$D/commit"
	tar czf "$D.tgz" -C "$D" .
	rm -rf "$D"
	mkdir -p "$D"
	mv "$D.tgz" "$D/bring.tgz"
	du -sh "$D"
	;;
device)
	OUT=${OUT:-/tmp/gxbit-bring}
	mkdir -p "$OUT"
	[ -x "$D/bin/gxbit" ] || tar xzf "$D/bring.tgz" -C "$D"
	exec > >(tee "$OUT/run.log") 2>&1
	say() { printf '\n== %s\n' "$*"; }
	cat "$D/commit"
	nvidia-smi -L
	say "batches of copies and mapped host memory (cuda TestConformance)"
	(cd cuda && "../$D/cuda.test" -test.run 'TestConformance' -test.v 2>&1 | grep -E '^(--- |PASS|FAIL|ok)|CopyBatch|Mapped' | head -40)
	say "what a driver call costs (BenchmarkCallCost)"
	(cd cuda && "../$D/cuda.test" -test.run '^$' -test.bench BenchmarkCallCost -test.benchtime 2000x 2>&1 | grep -E 'Benchmark|FAIL|ok')
	progs=("$@")
	[ ${#progs[@]} -gt 0 ] || progs=(gemm:2000,2300,2600 cholesky lu heat3d)
	say "two-phase runs, base and this branch (ab.sh)"
	T=${T:-60} bash testdata/device/ab.sh "$D/build/O2-static" "$OUT/ab" "$D/bin/gxbit-base" "$D/bin/gxbit" -- "${progs[@]}"
	say "the reports"
	for r in "$OUT"/ab/gxbit*/*/report.json; do
		[ -f "$r" ] || continue
		python3 - "$r" <<'EOF'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
keys = ('wall_seconds', 'bytes_brought_back', 'brought_back_seconds', 'brought_back_faults', 'brought_back_runs', 'brought_back_pages')
print(p.split('/ab/')[1], {k: d.get(k) for k in keys})
if d.get('brought_back_parts'):
    print('   brought_back_parts', d['brought_back_parts'])
for h in d['hotspots']:
    c = h.get('copy_parts')
    if h.get('launches') and c:
        print('   %s L%d kernel %.3fs copy %.3fs submit %.3fs | h2d %d/%d B %.3fs | d2h %d/%d B %.3fs | d2d %d B %.3fs | alloc %.3fs' % (
            h['entry'], h['launches'], h.get('kernel_seconds', 0), h.get('copy_seconds', 0), h.get('submit_seconds', 0),
            c['h2d_copies'], c['h2d_bytes'], c['h2d_seconds'], c['d2h_copies'], c['d2h_bytes'], c['d2h_seconds'],
            c['d2d_bytes'], c['d2d_seconds'], c['alloc_seconds']))
EOF
	done | tee "$OUT/summary.txt"
	;;
*)
	echo "usage: bring.sh prepare [BASE] | bring.sh device [PROGRAM[:ARGS]...]" >&2
	exit 2
	;;
esac
