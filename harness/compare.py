#!/usr/bin/env python3
"""`make compare A=<run> B=<run>`: every headline figure of two bench runs side
by side, per scenario and LRU, with the change from A to B and whether the
confidence intervals of the two medians overlap (mmtests' compare-kernels
idea). A run is a folder with a summary.json (results/<run-id>, or a path).

Overlap: "no" means the two intervals are apart, so the difference is larger
than the runs' own spread; "yes" means it is not shown to be; "-" means a run
has no interval (a single repeat)."""

import json
import os
import sys

from summarize import fmt

HEADLINES = [
    ("victim_majflt", "victim major faults"), ("victim_p99_us", "victim p99 us"),
    ("victim_p999_us", "victim p99.9 us"), ("victim_missed", "victim missed rounds"),
    ("victim_refill_p50_ms", "victim refill ms"),
    ("victim_rss_kept_pct", "victim kept %"), ("victim_resident_pct", "sleeper kept %"),
    ("victim_kept_since_limit_pct", "kept since limit %"), ("hog_kpages_s", "hog kpage/s"),
    ("hog_melem_s", "sorting hog Melem/s"), ("hog_done_s", "GNU sort s"), ("hogs_wall_s", "2 hogs s"), ("kernel_cpu_s", "kernel CPU s"),
]


def die(msg):
    print("error: " + msg, file=sys.stderr)
    sys.exit(2)


def load(arg):
    path = arg if os.sep in arg else os.path.join("results", arg)
    summary = os.path.join(path, "summary.json")
    if not os.path.isfile(summary):
        die("%s has no summary.json (not a finished bench run: results/<run-id> or a path)" % path)
    try:
        with open(summary) as f:
            data = json.load(f)
        return path, {(r["scenario"], r["lru"]): r for r in data["scenarios"]}
    except (OSError, ValueError, KeyError, TypeError) as e:
        die("%s is not a bench summary: %s" % (summary, e))


def interval(row, key):
    lo, hi = row.get(key + "_ci_lo"), row.get(key + "_ci_hi")
    return None if lo is None or hi is None else (lo, hi)


def main():
    if len(sys.argv) != 3:
        die("usage: compare.py RUN_A RUN_B (make compare A=<run-id> B=<run-id>)")
    path_a, a = load(sys.argv[1])
    path_b, b = load(sys.argv[2])
    common = [k for k in a if k in b]
    if not common:
        die("%s and %s have no scenario and LRU in common" % (path_a, path_b))
    print("A = %s\nB = %s" % (path_a, path_b))
    table = [["scenario", "lru", "figure", "A", "B", "change", "CIs overlap"]]
    for key in common:
        ra, rb = a[key], b[key]
        for fig, label in HEADLINES:
            va, vb = ra.get(fig), rb.get(fig)
            if va is None and vb is None:
                continue
            change = "-"
            if va is not None and vb is not None:
                change = "%+.0f%%" % (100.0 * (vb / va - 1)) if va else ("0" if vb == va else "new")
            ia, ib = interval(ra, fig), interval(rb, fig)
            overlap = "-" if ia is None or ib is None else (
                "yes" if ia[0] <= ib[1] and ib[0] <= ia[1] else "no")
            table.append([key[0], key[1], label, fmt(va), fmt(vb), change, overlap])
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for r in table:
        print("  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
    only = sorted(set(a) ^ set(b))
    if only:
        print("in one run only: " + " ".join("%s.%s" % k for k in only))


if __name__ == "__main__":
    main()
