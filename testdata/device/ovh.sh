#!/bin/bash
# ovh.sh: on the GPU machine, where a medium-size single run's time goes
# beyond plain gxbit run: each program three times plainly, under run
# --accelerate with nothing profiled (--profile-after 1h) on the simulator
# and on cuda, the whole single run, and nothing profiled with the
# device's teardown inline (GXBIT_CUDA_TEARDOWN=inline). Layout as
# ab.py's: gx, n/ beside it.
cd "$(dirname "$0")"
export CUDA_CACHE_DISABLE=1
t() { python3 -c 'import subprocess,sys,time; t0=time.time(); subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(f"{time.time()-t0:.3f}")' "$@"; }
for p in "lu 450" "gemm 320 340 360" "atax 2400 2600" "covariance 500 400"; do
  set -- $p; prog=n/$1; shift
  for r in 1 2 3; do
    a=$(t ./gx run $prog "$@")
    b=$(t ./gx run --accelerate --gpu sim --profile-after 1h $prog "$@")
    c=$(t ./gx run --accelerate --gpu cuda --profile-after 1h $prog "$@")
    d=$(t ./gx run --accelerate --gpu cuda $prog "$@")
    e=$(GXBIT_CUDA_TEARDOWN=inline t ./gx run --accelerate --gpu cuda --profile-after 1h $prog "$@")
    echo "$p r$r plain $a | sim-noprof $b | cuda-noprof $c | cuda $d | cuda-noprof-inline $e"
  done
done
