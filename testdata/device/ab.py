#!/usr/bin/env python3
"""ab.py [PROG...]: on the GPU machine, side by side in one run, each
program natively, then two-phase (gxbit profile at the small size,
gxbit accelerate --gpu cuda at the large one) by each gxbit binary of
BINS (REPS rounds, alternating), optionally the single run (SINGLE=1,
gxbit run --accelerate --stats, last binary) and the plain run (PLAIN=1,
extra programs only); every output compared with the native one. It
prints a markdown table and the geometric means of x native (best of the
rounds). Layout, beside this script or where it is copied: the gxbit
binaries (CGO_ENABLED=0 go build), n/ with the programs (build.sh -s
nests -m O2-static, plus any extra ones, named in `extra` below) and
sizes (testdata/nests/sizes). Env: BINS (default "gxo gx"), REPS (2), T
(each run's limit in seconds, 40), OUT (reports, kept as r.tgz),
CUDA_CACHE_DISABLE (1: the JIT's own cost). gemmL is gemm at the issue's
2000 2300 2600. Times come from Popen.wait, not a polling timeout (which
rounds them up to 50 ms)."""
import os, subprocess, sys, time, json, math
os.chdir(os.path.dirname(os.path.abspath(__file__)))
out = os.environ.get("OUT", "/tmp/o"); os.makedirs(out, exist_ok=True)
os.environ.setdefault("CUDA_CACHE_DISABLE", "1")
bins = os.environ.get("BINS", "gxo gx").split()
reps = int(os.environ.get("REPS", "2"))
sizes = {}
for l in open("sizes"):
    if l.startswith("#") or "|" not in l: continue
    f = [x.strip() for x in l.split("|")]
    sizes[f[0]] = ("", f[2])
nests = "trmm covariance correlation syr2k syrk gemm threemm jacobi1d twomm fdtd2d heat3d gemver mvt atax gesummv jacobi2dt doitgen cholesky bicg lu conv2d".split()
extra = {"gramschmidt": ("120 100", "700 600"), "symm": ("120 140", "900 1000"), "adi": ("120 4", "2000 20"), "fsum": ("400 500", "9000 10000"), "fcond": ("400 500", "7000 8000"), "kmeans": ("8000 16", "2000000 64"), "blur8": ("300 400 3", "5000 6000 20")}
sizes["gemmL"] = ("", "2000 2300 2600")
progs = [(p, sizes[p]) for p in nests + ["gemmL"]] + list(extra.items())
only = sys.argv[1:]
import threading
def run(cmd, tag, limit=None):
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=open(f"{out}/{tag}.out", "wb"), stderr=open(f"{out}/{tag}.err", "wb"))
    timer = threading.Timer(limit or int(os.environ.get("T", "40")), p.kill); timer.start()
    rc = p.wait(); t = time.time() - t0; timer.cancel()
    return t, (124 if rc == -9 else rc)
logs = {b: [] for b in bins}
print("| program | native | " + " | ".join(f"{b} 2p" for b in bins) + " | x by bin | ok |", flush=True)
for p, (small, large) in progs:
    if only and p not in only: continue
    L = large.split()
    exe = "n/gemm" if p == "gemmL" else f"n/{p}"
    subprocess.run([f"./{bins[-1]}", "profile", "-o", f"{out}/{p}.prof", exe] + small.split(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tn, _ = run([exe] + L, f"{p}.native", 90)
    nat = open(f"{out}/{p}.native.out", "rb").read()
    ts = {b: [] for b in bins}; ok = True
    if os.environ.get("PLAIN") and p in extra:
        tp, _ = run([f"./{bins[-1]}", "run", exe] + L, f"{p}.plain"); ts["plain"] = [tp]
    if os.environ.get("SINGLE"):
        t1, rc = run([f"./{bins[-1]}", "run", "--accelerate", "--stats", "--gpu", "cuda", "--report", f"{out}/{p}.single.json", exe] + L, f"{p}.single"); ts["single"] = [t1]
        if open(f"{out}/{p}.single.out", "rb").read() != nat: ok = False; print("DIFF", p, "single", rc, flush=True)
    for r in range(reps):
        for b in bins:
            t, rc = run([f"./{b}", "accelerate", "--gpu", "cuda", "--profile", f"{out}/{p}.prof", "--report", f"{out}/{p}.{b}.{r}.json", exe] + L, f"{p}.{b}.{r}")
            ts[b].append(t)
            if open(f"{out}/{p}.{b}.{r}.out", "rb").read() != nat: ok = False; print("DIFF", p, b, r, rc, flush=True)
    cells = " | ".join("/".join(f"{t:.2f}" for t in ts[b]) for b in bins)
    xs = " ".join(f"{tn/min(ts[b]):.2f}" for b in bins)
    for b in bins: logs[b].append(math.log(tn / min(ts[b])))
    tail = (f" plain {ts['plain'][0]:.2f} 2p/plain {min(ts[bins[-1]])/ts['plain'][0]:.2f}" if "plain" in ts else "") + (f" single {ts['single'][0]:.2f} x{tn/ts['single'][0]:.2f}" if "single" in ts else "")
    if "single" in ts: logs.setdefault("single", []).append(math.log(tn / ts["single"][0]))
    print(f"| {p} {large} | {tn:.2f} | {cells} | {xs} | {'OK' if ok else 'DIFF'}{tail} |", flush=True)
for b in logs:
    if logs[b]: print(b, "geomean (best of reps)", f"{math.exp(sum(logs[b])/len(logs[b])):.2f}", flush=True)
subprocess.run(f"cd {out} && tar czf r.tgz *.json *.err && find . -type f ! -name r.tgz -delete", shell=True)
