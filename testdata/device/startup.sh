#!/bin/bash
# startup.sh: on the GPU machine, what a run that offloads nothing pays for
# the device (issue 10's contract at sizes of a tenth of a second): a
# sequential program (seidel2d at 400 20) five times each plainly, under
# gxbit accelerate on the simulator and on cuda, and the time loading
# libcuda.so.1 takes in a fresh process (dlopen, which cuda.Driver.Start
# runs before the guest starts; cuInit runs beside it). Layout as ab.py's:
# gx, n/ beside it.
cd "$(dirname "$0")"
export CUDA_CACHE_DISABLE=1
t() { python3 -c 'import subprocess,sys,time; t0=time.time(); subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(f"{time.time()-t0:.3f}")' "$@"; }
./gx profile -o /tmp/seidel.prof n/seidel2d >/dev/null 2>&1
for r in 1 2 3 4 5; do
  a=$(t ./gx run n/seidel2d 400 20)
  b=$(t ./gx accelerate --gpu sim --profile /tmp/seidel.prof n/seidel2d 400 20)
  c=$(t ./gx accelerate --gpu cuda --profile /tmp/seidel.prof n/seidel2d 400 20)
  d=$(python3 -c 'import ctypes,time; t0=time.time(); ctypes.CDLL("libcuda.so.1"); print(f"{time.time()-t0:.3f}")')
  e=$(t ./gx run --accelerate --gpu cuda n/seidel2d 400 20)
  f=$(GXBIT_CUDA_TEARDOWN=inline t ./gx run --accelerate --gpu cuda n/seidel2d 400 20)
  echo "seidel2d r$r plain $a | 2p sim $b | 2p cuda $c | dlopen libcuda $d | single cuda $e | single cuda, teardown inline $f"
done
