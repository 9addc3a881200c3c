#!/bin/sh
# build.sh rebuilds the checked-in test binaries of package profile from
# their C sources (gcc 12, x86-64). The golden files depend on the exact
# code, so rebuild only together with `go test -run Golden -update`.
set -e
cd "$(dirname "$0")"
for o in O0 O2 O3; do
	gcc -$o -g -static -nostdlib -fno-pie -no-pie -fno-asynchronous-unwind-tables -fno-stack-protector -fcf-protection=none -o kernels-$o kernels.c
done
