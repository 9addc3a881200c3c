#!/usr/bin/env python3
"""pernest.py pairs each nest gxbit ran on the GPU with the kernels of its
CUDA C reference that mirror it, and prints one markdown table row per
nest: gxbit's kernel ms (kernel_seconds summed over the nest's hot spots),
the reference's (its kernels' per-launch times), their ratio (issue 10:
at most 2x), and the schedules; then the nests gxbit ran that no reference
kernel mirrors (the initialisation nests), apart.

Usage: pernest.py [-H] PROGRAM BINARY_G SOURCE REPORT REF_ERR [EXPECT]

BINARY_G is the program built with -g and otherwise as the measured one:
each hot spot's header is named "NEST.ID" after the nearest LOOP marker
of SOURCE at or above its line (hotnests.py). REF_ERR is the reference's
stderr: "PROG kernel NEST ms=T launches=N function=F" per kernel (ref.h),
NEST the nest of SOURCE it mirrors ("a+b" for a kernel doing two nests'
work, paired with the sum of both), and "PROG kernel_ms=T ..." in total.
EXPECT (testdata/nests/expect.json) marks the hot nests (a * after the
name). -H prints the table's header first.

Rows (markdown): program | nest | gxbit hot spots (NEST.ID@entry launches
ms: schedule) | gxbit launches | gxbit ms | reference kernels (function
launches ms) | reference ms | gxbit/reference | whole program
gxbit/reference (every hot spot, initialisation included, against the
reference's total: the old metric). On stderr, for scripts: "PROG
nests paired=N logsum=S", S the sum of the natural logarithms of its
nests' ratios.
"""
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hotnests import nest_namer  # noqa: E402

HEADER = ("| program | nest | gxbit hot spots (loop@entry launches ms: schedule) | gxbit launches | gxbit ms "
          "| reference kernels (function launches ms) | reference ms | gxbit/reference | whole program (old) |\n"
          "|---|---|---|---|---|---|---|---|---|")


def read_reference(prog, path):
    """read_reference returns the reference's kernels as a list of (nest,
    function, launches, ms) in the order it printed them, and its total
    kernel ms (None when it printed none)."""
    kernels, total = [], None
    line_re = re.compile(r"^%s kernel (\S+) ms=([0-9.]+) launches=(\d+) function=(\S+)" % re.escape(prog))
    total_re = re.compile(r"^%s kernel_ms=([0-9.]+)" % re.escape(prog))
    try:
        text = open(path).read()
    except OSError:
        return kernels, total
    for line in text.split("\n"):
        m = line_re.match(line)
        if m:
            kernels.append((m.group(1), m.group(4), int(m.group(3)), float(m.group(2))))
            continue
        m = total_re.match(line)
        if m:
            total = float(m.group(1))
    return kernels, total


def fmt(x):
    return "-" if x is None else "%.3f" % x


def main():
    args = sys.argv[1:]
    if args and args[0] == "-H":
        print(HEADER)
        args = args[1:]
    if len(args) < 5:
        sys.stderr.write(__doc__)
        return 2
    prog, binary, source, report, ref_err = args[:5]
    hot = set()
    if len(args) > 5:
        for n in json.load(open(args[5]))["programs"].get(prog, {}).get("nests", []):
            if n.get("hot"):
                hot.add(n["nest"])
    name_of = nest_namer(binary, source)
    spots = []
    try:
        spots = [h for h in (json.load(open(report)).get("hotspots") or []) if h.get("launches")]
    except (OSError, ValueError):
        pass
    ref_kernels, ref_total = read_reference(prog, ref_err)

    # The hot spots by nest, in the order of their entries.
    by_nest = {}
    gx_total = 0.0
    for h in sorted(spots, key=lambda h: int(h["entry"], 16)):
        loop = name_of(h.get("header") or h["entry"])
        by_nest.setdefault(loop.split(".")[0], []).append((loop, h))
        gx_total += 1000 * h.get("kernel_seconds", 0)
    whole = "-"
    if ref_total and gx_total > 0:
        whole = "%.3g" % (gx_total / ref_total)

    # The reference's kernels by the nests they mirror ("a+b": both).
    groups = []  # (nests, [kernels])
    for k in ref_kernels:
        nests = tuple(k[0].split("+"))
        for g in groups:
            if g[0] == nests:
                g[1].append(k)
                break
        else:
            groups.append((nests, [k]))

    paired, logsum = 0, 0.0
    used = set()
    for nests, kernels in groups:
        loops = [x for n in nests for x in by_nest.get(n, [])]
        used.update(nests)
        gx_ms = sum(1000 * h.get("kernel_seconds", 0) for _, h in loops) if loops else None
        gx_launches = sum(h["launches"] for _, h in loops)
        ref_ms = sum(k[3] for k in kernels)
        ratio = "-"
        if gx_ms and ref_ms > 0:
            r = gx_ms / ref_ms
            ratio = "%.3g" % r
            paired += 1
            logsum += math.log(r)
        name = "+".join(n + ("*" if n in hot else "") for n in nests)
        spots_txt = "; ".join("%s@%s %d %.3f: %s" % (loop, h["entry"], h["launches"], 1000 * h.get("kernel_seconds", 0),
                                                      h.get("schedule", "")) for loop, h in loops) or "not offloaded"
        ref_txt = "; ".join("%s %d %.3f" % (k[1], k[2], k[3]) for k in kernels)
        print("| %s | %s | %s | %s | %s | %s | %.3f | %s | %s |" % (
            prog, name, spots_txt, gx_launches if loops else "-", fmt(gx_ms), ref_txt, ref_ms, ratio, whole))
    for nest, loops in by_nest.items():
        if nest in used:
            continue
        ms = sum(1000 * h.get("kernel_seconds", 0) for _, h in loops)
        spots_txt = "; ".join("%s@%s %d %.3f: %s" % (loop, h["entry"], h["launches"], 1000 * h.get("kernel_seconds", 0),
                                                      h.get("schedule", "")) for loop, h in loops)
        print("| %s | (%s: no reference) | %s | %d | %.3f | - | - | - | %s |" % (
            prog, nest, spots_txt, sum(h["launches"] for _, h in loops), ms, whole))
    if not groups:
        print("| %s | (the reference printed no per-kernel lines) | | | %.3f | | %s | | %s |" % (prog, gx_total, fmt(ref_total), whole))
    sys.stderr.write("%s nests paired=%d logsum=%.6f\n" % (prog, paired, logsum))
    return 0


if __name__ == "__main__":
    sys.exit(main())
