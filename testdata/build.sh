#!/usr/bin/env bash
# build.sh builds every C program under testdata/corpus/ and testdata/loops/
# (or the suites named with -s) in every build mode, for gxbit's
# differential tests.
#
# Usage: build.sh [-j JOBS] [-m MODE]... [-s SUITE]... [OUTDIR [NAME...]]
#
#   OUTDIR  build directory (default: testdata/build next to this script)
#   NAME    build only these programs (default: all of them)
#   -j      parallel compiler jobs (default: number of CPUs)
#   -m      build only this mode; may be repeated (default: all modes)
#   -s      build only this suite: corpus, loops or nests; may be repeated
#           (default: corpus and loops; nests, issue 10's loop-nest corpus,
#           is built only when named, into a build directory of its own)
#
# Modes (directory names under OUTDIR):
#   O0-static O2-static O3-static              gcc -static
#   O0-static-pie O2-static-pie O3-static-pie  gcc -static-pie
#   O0-dynamic O2-dynamic O3-dynamic           gcc default (dynamic PIE)
#   O2-musl                                    musl-gcc -static, only when musl-gcc exists
#
# Binaries land in OUTDIR/MODE/NAME (e.g. build/O2-static/matmul). The
# sources with their .args and .verdict files are mirrored to
# OUTDIR/src/SUITE/ (src/corpus/, src/loops/), so OUTDIR is self-contained.
#
# The build is incremental: each binary has a NAME.key file holding its
# source's hash, its compile flags and the compiler's version; a binary whose
# key matches is not rebuilt. Compile errors fail the build loudly (exit 1).
#
# Environment: CC (default gcc), MUSL_CC (default musl-gcc).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
want_modes=()
suites=()
while getopts "j:m:s:h" opt; do
	case $opt in
	j) jobs=$OPTARG ;;
	m) want_modes+=("$OPTARG") ;;
	s)
		case $OPTARG in
		corpus | loops | nests) suites+=("$OPTARG") ;;
		*)
			echo "build.sh: unknown suite '$OPTARG' (have: corpus loops nests)" >&2
			exit 1
			;;
		esac
		;;
	h)
		sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
out=${1:-$here/build}
[ $# -gt 0 ] && shift
names=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(corpus loops)

CC=${CC:-gcc}
MUSL_CC=${MUSL_CC:-musl-gcc}
command -v "$CC" >/dev/null 2>&1 || {
	echo "build.sh: C compiler '$CC' not found" >&2
	exit 1
}

all_modes=(O0-static O2-static O3-static O0-static-pie O2-static-pie O3-static-pie O0-dynamic O2-dynamic O3-dynamic)
if command -v "$MUSL_CC" >/dev/null 2>&1; then
	all_modes+=(O2-musl)
fi
if [ ${#want_modes[@]} -eq 0 ]; then
	modes=("${all_modes[@]}")
else
	modes=()
	for m in "${want_modes[@]}"; do
		found=
		for a in "${all_modes[@]}"; do [ "$a" = "$m" ] && found=1; done
		if [ -z "$found" ]; then
			echo "build.sh: unknown or unavailable mode '$m' (have: ${all_modes[*]})" >&2
			exit 1
		fi
		modes+=("$m")
	done
fi

# Collect programs as "suite name" pairs.
progs=()
for suite in "${suites[@]}"; do
	for src in "$here/$suite"/*.c; do
		[ -e "$src" ] || continue
		n=$(basename "$src" .c)
		if [ ${#names[@]} -gt 0 ]; then
			keep=
			for w in "${names[@]}"; do [ "$w" = "$n" ] && keep=1; done
			[ -n "$keep" ] || continue
		fi
		progs+=("$suite $n")
	done
done
declare -A seen
for p in "${progs[@]}"; do
	read -r suite n <<<"$p"
	if [ -n "${seen[$n]:-}" ]; then
		echo "build.sh: program name '$n' is used in both ${seen[$n]}/ and $suite/" >&2
		exit 1
	fi
	seen[$n]=$suite
done
if [ ${#names[@]} -gt 0 ] && [ ${#progs[@]} -eq 0 ]; then
	echo "build.sh: no program matches: ${names[*]}" >&2
	exit 1
fi

for suite in "${suites[@]}"; do mkdir -p "$out/src/$suite"; done
for m in "${modes[@]}"; do mkdir -p "$out/$m"; done

# Mirror sources and side files, touching only what changed.
for p in "${progs[@]}"; do
	read -r suite n <<<"$p"
	for f in "$here/$suite/$n".c "$here/$suite/$n".args "$here/$suite/$n".verdict; do
		dst="$out/src/$suite/$(basename "$f")"
		if [ -e "$f" ]; then
			cmp -s "$f" "$dst" 2>/dev/null || cp "$f" "$dst"
		else
			rm -f "$dst"
		fi
	done
done

# On a full build, forget programs that left the source tree.
if [ ${#names[@]} -eq 0 ]; then
	for suite in "${suites[@]}"; do
		for f in "$out/src/$suite"/*.c; do
			[ -e "$f" ] || continue
			n=$(basename "$f" .c)
			[ -e "$here/$suite/$n.c" ] && continue
			rm -f "$out/src/$suite/$n".{c,args,verdict}
			for m in "${all_modes[@]}"; do rm -f "$out/$m/$n" "$out/$m/$n.key"; done
		done
	done
fi

cc_id=$("$CC" --version 2>&1 | head -n 1)
musl_id=
if command -v "$MUSL_CC" >/dev/null 2>&1; then
	musl_id="$("$MUSL_CC" --version 2>&1 | head -n 1) $(readlink -f "$(command -v "$MUSL_CC")")"
fi
export CC MUSL_CC cc_id musl_id out here

# set_flags MODE sets cc, id and flags for one build mode.
set_flags() {
	local mode=$1
	local opt=${mode%%-*} link=${mode#*-}
	cc=$CC id=$cc_id
	flags=("-$opt" -g -std=gnu11 -fno-strict-aliasing)
	case $link in
	static) flags+=(-static) ;;
	static-pie) flags+=(-fPIE -static-pie) ;;
	dynamic) flags+=(-fPIE -pie) ;;
	musl)
		cc=$MUSL_CC id=$musl_id
		flags+=(-static)
		;;
	*)
		echo "build.sh: internal error: mode $mode" >&2
		return 1
		;;
	esac
}

# build_one MODE SUITE NAME KEY compiles one program in one mode and records
# KEY beside the binary.
build_one() {
	local mode=$1 suite=$2 n=$3 key=$4
	local src="$here/$suite/$n.c" bin="$out/$mode/$n"
	local cc id
	local -a flags
	set_flags "$mode"
	local tmp="$bin.tmp.$$"
	if ! "$cc" "${flags[@]}" -o "$tmp" "$src" -lm 2>"$tmp.err"; then
		echo "build.sh: FAILED: $cc ${flags[*]} -o $bin $src -lm" >&2
		cat "$tmp.err" >&2
		rm -f "$tmp" "$tmp.err"
		return 1
	fi
	rm -f "$tmp.err"
	mv -f "$tmp" "$bin"
	printf '%s\n' "$key" >"$bin.key"
}
export -f set_flags build_one

# Hash all sources in one go, then decide in this shell (no subprocess per
# binary) which binaries are stale: a key is "source-hash|flags|compiler".
declare -A srchash
while read -r h f; do
	srchash[$f]=$h
done < <(for p in "${progs[@]}"; do
	read -r suite n <<<"$p"
	printf '%s\n' "$here/$suite/$n.c"
done | xargs -d '\n' sha256sum)
stale=()
for m in "${modes[@]}"; do
	set_flags "$m"
	for p in "${progs[@]}"; do
		read -r suite n <<<"$p"
		key="${srchash[$here/$suite/$n.c]}|${flags[*]}|$cc|$id"
		key=${key// /_}
		have=
		[ -f "$out/$m/$n.key" ] && read -r have <"$out/$m/$n.key"
		if [ -x "$out/$m/$n" ] && [ "$have" = "$key" ]; then
			continue
		fi
		stale+=("$m" "$suite" "$n" "$key")
	done
done

status=0
if [ ${#stale[@]} -gt 0 ]; then
	printf '%s\n' "${stale[@]}" | xargs -d '\n' -P "$jobs" -n 4 bash -c 'build_one "$@" || exit 255' _ || status=$?
fi
if [ "$status" -ne 0 ]; then
	echo "build.sh: build failed (see errors above)" >&2
	exit 1
fi
