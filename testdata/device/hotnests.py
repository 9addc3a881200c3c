#!/usr/bin/env python3
"""hotnests.py names each hot spot of a gxbit report after the nest of
testdata/nests it runs, and sums the kernel times of the nests a CUDA C
reference times (every nest but the initialisation ones and the checksum):
the like-for-like side of the kernel ratio.

Usage: hotnests.py PROGRAM BINARY_G SOURCE REPORT [EXPECT]

BINARY_G is the program built with -g and otherwise as the measured one
(gcc's -g leaves the code as it is: the hot spots' addresses are its);
addr2line maps each hot spot's header to a source line, and the nearest
"/* LOOP: NEST.ID */" marker at or above it names the nest. It prints one
line per hot spot that launched, then a total line:

  PROGRAM total kernel_ms=ALL timed_kernel_ms=TIMED submit_ms=S launches=N
"""
import json
import re
import subprocess
import sys


MARKER = re.compile(r"/\*\s*LOOP:\s*([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)\s*\*/")


def nest_namer(binary, source, window=64):
    """nest_namer returns a function that names the loop at a guest
    address "NEST.ID": each of the window bytes from the address on is
    mapped to its source line (addr2line on BINARY, built with -g) and
    named after the nearest LOOP marker at or above that line; the nest
    most of them name wins (gcc puts a register copy from the nest before
    at the head of a loop now and then: syrk's product header reads as
    initc's line), and its first byte's loop ID names the loop. "?" where
    none is found."""
    lines = open(source).read().split("\n")

    def marker_at(line):
        for ln in range(line - 1, -1, -1):
            mm = MARKER.search(lines[ln]) if ln < len(lines) else None
            if mm:
                return mm.group(1) + "." + mm.group(2)
        return None

    def name(addr):
        start = int(addr, 16)
        addrs = ["%#x" % (start + k) for k in range(window)]
        try:
            out = subprocess.run(["addr2line", "-e", binary] + addrs, capture_output=True, text=True).stdout.split("\n")
        except OSError:
            out = []  # no addr2line: the nest stays unnamed
        loops = []
        for o in out:
            m = re.search(r":(\d+)", o)
            loop = marker_at(int(m.group(1))) if m else None
            if loop:
                loops.append(loop)
        if not loops:
            return "?"
        counts = {}
        for loop in loops:
            nest = loop.split(".")[0]
            counts[nest] = counts.get(nest, 0) + 1
        best = max(counts.values())
        for loop in loops:
            if counts[loop.split(".")[0]] == best:
                return loop
        return "?"

    return name


def main():
    if len(sys.argv) < 5:
        sys.stderr.write(__doc__)
        return 2
    prog, binary, source, report = sys.argv[1:5]
    expect = sys.argv[5] if len(sys.argv) > 5 else None
    name_of = nest_namer(binary, source)
    untimed = set()
    if expect:
        for n in json.load(open(expect))["programs"].get(prog, {}).get("nests", []):
            if n["nest"].startswith("init") or n.get("cpu"):
                untimed.add(n["nest"])
    else:
        untimed = None
    spots = [h for h in (json.load(open(report)).get("hotspots") or []) if h.get("launches")]
    total = timed = submit = 0.0
    launches = 0
    for h in spots:
        nest = name_of(h.get("header") or h["entry"])
        name = nest.split(".")[0]
        is_timed = untimed is not None and nest != "?" and name not in untimed and not name.startswith("init")
        if untimed is None:
            is_timed = nest != "?" and not name.startswith("init") and name != "fold"
        k = 1000 * h.get("kernel_seconds", 0)
        s = 1000 * h.get("submit_seconds", 0)
        total += k
        submit += s
        launches += h["launches"]
        if is_timed:
            timed += k
        print("%s %s %-10s %s launches %d (3d %d, unchecked %d) kernel %.3f ms submit %.3f ms iterations %d tail %d %s" % (
            prog, h["entry"], nest, "timed" if is_timed else "untimed", h["launches"], h.get("launches_3d", 0),
            h.get("launches_unchecked", 0), k, s, h.get("gpu_iterations", 0), h.get("cpu_tail_iterations", 0),
            h.get("schedule", "")))
    print("%s total kernel_ms=%.3f timed_kernel_ms=%.3f submit_ms=%.3f launches=%d" % (prog, total, timed, submit, launches))
    return 0


if __name__ == "__main__":
    sys.exit(main())
