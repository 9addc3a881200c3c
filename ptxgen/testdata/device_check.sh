#!/usr/bin/env bash
# device_check.sh runs ptxas on every generated kernel in a directory (as
# gxbit accelerate --ptx-dir or gxbit ptx gen write them) and reports each
# one's registers, spills and errors. Run it on the device machine.
#
# Usage: device_check.sh [-a ARCH] DIR
#
#   DIR   a directory of .ptx files
#   -a    the target architecture (default sm_90)
#
# Environment: PTXAS (default: ptxas on PATH, else /usr/local/cuda/bin/ptxas).
# Exit status: 0 when every file assembles, 1 when some do not, 2 on usage
# errors or a missing ptxas.
set -uo pipefail

arch=sm_90
while getopts "a:h" opt; do
	case $opt in
	a) arch=$OPTARG ;;
	h)
		sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: device_check.sh [-a ARCH] DIR" >&2
	exit 2
fi
dir=$1

ptxas=${PTXAS:-}
if [ -z "$ptxas" ]; then
	ptxas=$(command -v ptxas || true)
	[ -z "$ptxas" ] && [ -x /usr/local/cuda/bin/ptxas ] && ptxas=/usr/local/cuda/bin/ptxas
fi
if [ -z "$ptxas" ]; then
	echo "device_check.sh: ptxas not found (set PTXAS)" >&2
	exit 2
fi

ok=0
bad=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shopt -s nullglob
files=("$dir"/*.ptx)
if [ ${#files[@]} -eq 0 ]; then
	echo "device_check.sh: no .ptx files in $dir" >&2
	exit 2
fi
for f in "${files[@]}"; do
	name=$(basename "$f")
	if out=$("$ptxas" -arch="$arch" -v -o "$tmp/out.cubin" "$f" 2>&1); then
		regs=$(printf '%s\n' "$out" | grep -o 'Used [0-9]* registers' | head -1)
		spill=$(printf '%s\n' "$out" | grep -o '[0-9]* bytes spill stores' | head -1)
		printf 'ok    %s: %s, %s\n' "$name" "${regs:-registers ?}" "${spill:-0 bytes spill stores}"
		ok=$((ok + 1))
	else
		printf 'FAIL  %s:\n' "$name"
		printf '%s\n' "$out" | sed 's/^/      /'
		bad=$((bad + 1))
	fi
done
echo "device_check.sh: $ok assembled, $bad failed (ptxas -arch=$arch)"
[ $bad -eq 0 ]
