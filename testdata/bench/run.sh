#!/bin/bash
# Benchmark of gxbit's CPU engines: loop-heavy -O2 programs (and python3
# running numeric.py, pure-Python float and integer work) run natively,
# under `gxbit run --engine jit`, under qemu-user (qemu-x86_64) and, with
# BENCH_INTERP=1, under `gxbit run --engine interp`; side by side in one run
# (the kinds of run alternate for each program), every output compared with
# the native one. Times are the CPU time (user + system) of the process,
# which a loaded machine disturbs less than wall time; compile time is
# included. Prints a table of seconds and ratios to native, and the
# geometric means.
#
#   bash testdata/bench/run.sh [GXBIT]      # GXBIT defaults to ./gxbit (go build -o gxbit ./cmd/gxbit)
#
# BENCH_N runs of each kind (default 1; the median is kept), BENCH_SMALL=1
# for sizes a tenth as long, QEMU the qemu-user binary (default: the first
# of qemu-x86_64, qemu-x86_64-static on PATH; none skips its column),
# BENCH_BASE another gxbit binary whose jit gets a column of its own
# (base), to compare two builds of the engine side by side.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gxbit=$(realpath "${1:-./gxbit}")
qemu=${QEMU:-$(command -v qemu-x86_64 || command -v qemu-x86_64-static || true)}
n=${BENCH_N:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

gcc -O2 -static -o "$work/matmul" "$here/../../examples/matmul.c"
for p in stencil vecops sort; do
	gcc -O2 -static -o "$work/$p" "$here/$p.c"
done
yes 'the quick brown fox jumps over the lazy dog 0123456789' | head -c $((50 << 20)) >"$work/data50m" || true # yes stops on SIGPIPE
sha=$(command -v sha256sum)
# python3 running numeric.py: the interpreter's own executable (a shell
# shim such as pyenv's cannot run under gxbit), skipped when there is none
# or the script does not run natively.
py=$(command -v python3 || true)
if [[ -n $py ]]; then
	py=$("$py" -c 'import sys; print(sys.executable)' 2>/dev/null || true)
fi
cp "$here/numeric.py" "$work/numeric.py"
if [[ -z $py || ! -x $py ]] || [[ $(head -c 4 "$py" | tail -c 3) != ELF ]] || ! "$py" "$work/numeric.py" 1 >/dev/null 2>&1; then
	echo "python3 (an ELF executable that runs numeric.py) not found: its row is skipped" >&2
	py=
fi

if [[ -n ${BENCH_SMALL:-} ]]; then
	progs=("matmul 520" "stencil 1300 80" "vecops 2000000 10" "sort 1000000 1" "$sha $work/data5m")
	head -c $((5 << 20)) "$work/data50m" >"$work/data5m" || true
	[[ -n $py ]] && progs+=("$py $work/numeric.py 3")
else
	progs=("matmul 1200" "stencil 1300 800" "vecops 4000000 60" "sort 4000000 3" "$sha $work/data50m")
	[[ -n $py ]] && progs+=("$py $work/numeric.py 25")
fi

# cpu RUNNER... CMD: runs it, output to $work/out, and prints its user+system seconds.
cpu() {
	/usr/bin/time -o "$work/time" -f '%U %S' "$@" >"$work/out" 2>/dev/null
	awk '{ printf "%.3f", $1 + $2 }' "$work/time"
}

median() { tr ' ' '\n' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

kinds=(native jit)
[[ -n ${BENCH_BASE:-} ]] && kinds+=(base)
[[ -n $qemu ]] && kinds+=(qemu)
[[ -n ${BENCH_INTERP:-} ]] && kinds+=(interp)

printf '%-28s' program
for k in "${kinds[@]}"; do printf '%16s' "$k"; done
echo
declare -A logsum
for k in "${kinds[@]}"; do logsum[$k]=0; done
count=0
for spec in "${progs[@]}"; do
	read -r -a cmd <<<"$spec"
	if [[ ${cmd[0]} != /* ]]; then cmd[0]=$work/${cmd[0]}; fi
	declare -A times=()
	"${cmd[@]}" >"$work/native.out"
	for ((i = 0; i < n; i++)); do
		for k in "${kinds[@]}"; do
			case $k in
			native) t=$(cpu "${cmd[@]}") ;;
			jit) t=$(cpu "$gxbit" run --engine jit "${cmd[@]}") ;;
			base) t=$(cpu "$BENCH_BASE" run --engine jit "${cmd[@]}") ;;
			interp) t=$(cpu "$gxbit" run --engine interp "${cmd[@]}") ;;
			qemu) t=$(cpu "$qemu" "${cmd[@]}") ;;
			esac
			if ! cmp -s "$work/out" "$work/native.out"; then
				echo "$k: the output of ${spec##*/} differs from native" >&2
				exit 1
			fi
			times[$k]="${times[$k]:-} $t"
		done
	done
	name=$(basename "${cmd[0]}")
	printf '%-28s' "$name ${cmd[*]:1}" | sed "s|$work/||" | head -c 28
	nat=$(echo ${times[native]} | median)
	for k in "${kinds[@]}"; do
		t=$(echo ${times[$k]} | median)
		if [[ $k == native ]]; then
			printf '%16s' "${t}s"
		else
			r=$(awk -v a="$t" -v b="$nat" 'BEGIN { printf "%.1f", a / b }')
			printf '%16s' "${t}s ${r}x"
			logsum[$k]=$(awk -v s="${logsum[$k]}" -v a="$t" -v b="$nat" 'BEGIN { print s + log(a / b) }')
		fi
	done
	echo
	count=$((count + 1))
done
printf '%-28s%16s' "geometric mean" ""
for k in "${kinds[@]}"; do
	[[ $k == native ]] && continue
	printf '%16s' "$(awk -v s="${logsum[$k]}" -v c=$count 'BEGIN { printf "%.1fx", exp(s / c) }')"
done
echo
