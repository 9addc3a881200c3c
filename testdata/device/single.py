#!/usr/bin/env python3
"""single.py [PROG...]: on the GPU machine, each nests program's single
run (gxbit run --accelerate --stats, cuda) at SIZE (large, the default,
or medium), REPS times (best kept), for each --profile-after of PA
(default: gxbit's own) or each setting of VARIANTS ("name:K=V,K=V ...":
environment variables of the run; BIN=... picks the binary), with the
plain run (gxbit run) with PLAIN=1 and the two-phase flow (gxbit profile
at the programs' default size, then gxbit accelerate) with TWOP=1; every
output compared with the plain run's. Keeps the --stats output and the
reports under OUT; prints each run's profiling and device lines, then
per program the best times, and per setting the geometric mean over
plain (or over the first setting). Layout as ab.py's: the gxbit binary
(BIN, default gx), n/ and sizes beside it."""
import os, subprocess, sys, time, math
os.chdir(os.path.dirname(os.path.abspath(__file__)))
out = os.environ.get("OUT", "/tmp/o"); os.makedirs(out, exist_ok=True)
os.environ.setdefault("CUDA_CACHE_DISABLE", "1")
b = os.environ.get("BIN", "gx")
reps = int(os.environ.get("REPS", "1"))
pas = os.environ.get("PA", "").split() or [""]
# VARIANTS: "name:K=V,K=V name2:K=V" runs each setting with those
# environment variables (in place of PA).
variants = {}
for v in os.environ.get("VARIANTS", "").split():
    name, _, kv = v.partition(":")
    variants[name] = dict(x.split("=", 1) for x in kv.split(",") if x)
if variants: pas = list(variants)
col = 2 if os.environ.get("SIZE", "large") == "large" else 1
sizes = {}
for l in open("sizes"):
    if l.startswith("#") or "|" not in l: continue
    f = [x.strip() for x in l.split("|")]
    sizes[f[0]] = f[col]
sizes["gemmL"] = "2000 2300 2600"
nests = "trmm covariance correlation syr2k syrk gemm threemm jacobi1d twomm fdtd2d heat3d gemver mvt atax gesummv jacobi2dt doitgen cholesky bicg lu conv2d seidel2d".split()
if col == 2: nests.append("gemmL")
def run(cmd, tag, env=None):
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=open(f"{out}/{tag}.out", "wb"), stderr=open(f"{out}/{tag}.err", "wb"), env=dict(os.environ, **(env or {})))
    rc = p.wait()
    return time.time() - t0, rc
logs = {}
for p in (sys.argv[1:] or nests):
    exe = "n/gemm" if p == "gemmL" else f"n/{p}"
    args = sizes[p].split()
    best = {}
    if os.environ.get("TWOP"):
        subprocess.run([f"./{b}", "profile", "-o", f"{out}/{p}.prof", exe], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for r in range(reps):
        if os.environ.get("TWOP"):
            t, rc = run([f"./{b}", "accelerate", "--gpu", "cuda", "--profile", f"{out}/{p}.prof", "--report", f"{out}/{p}.2p.{r}.json", exe] + args, f"{p}.2p.{r}")
            best["2p"] = min(best.get("2p", 1e9), t)
            if os.path.exists(f"{out}/{p}.plain.0.out") and open(f"{out}/{p}.2p.{r}.out", "rb").read() != open(f"{out}/{p}.plain.0.out", "rb").read():
                print("DIFF", p, "2p", r, rc, flush=True)
        if os.environ.get("PLAIN"):
            t, rc = run([f"./{b}", "run", exe] + args, f"{p}.plain.{r}")
            best["plain"] = min(best.get("plain", 1e9), t)
        for pa in pas:
            tag = f"{p}.pa{pa or 'def'}.{r}"
            bb = (variants.get(pa) or {}).get("BIN", b)
            t, rc = run([f"./{bb}", "run", "--accelerate", "--stats", "--gpu", "cuda", "--report", f"{out}/{tag}.json"] + (["--profile-after", pa] if pa and not variants else []) + [exe] + args, tag, variants.get(pa))
            best[pa] = min(best.get(pa, 1e9), t)
            if r == 0 and os.path.exists(f"{out}/{p}.plain.0.out") and open(f"{out}/{tag}.out", "rb").read() != open(f"{out}/{p}.plain.0.out", "rb").read():
                print("DIFF", tag, rc, flush=True)
            err = open(f"{out}/{tag}.err").read().splitlines()
            keep = [l for l in err if l.startswith("gxbit: profiling") or l.startswith("device:")]
            print(f"{tag} {t:.2f} rc={rc} | " + " | ".join(k[:160] for k in keep), flush=True)
    ref = best.get("plain", best.get(pas[0]))
    print(f"== {p} {sizes[p]} " + " ".join(f"{k or 'def'}={v:.2f}" for k, v in best.items()), flush=True)
    for k, v in best.items():
        logs.setdefault(k, []).append(math.log(v / ref))
for k, v in logs.items():
    print(f"geomean {k or 'def'} / {'plain' if 'plain' in logs else 'first'}: {math.exp(sum(v)/len(v)):.3f}")
