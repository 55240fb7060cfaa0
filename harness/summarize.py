#!/usr/bin/env python3
"""Summarise a bench run: results/<run-id>/<scenario>.<lru>[.rN]/ -> summary.tsv,
summary.json, and a printed comparison table with the headline ratios."""

import contextlib
import gzip
import io
import json
import math
import os
import re
import statistics
import sys


def open_text(path):
    """path, or path.gz as harness/reference.sh keeps the bigger files."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        return gzip.open(path + ".gz", "rt")
    return open(path)


def read_tsv(path):
    """Rows of a TSV file with a header, as dicts; '#' lines are skipped."""
    rows, header = [], None
    try:
        with open_text(path) as f:
            for line in f:
                line = line.rstrip("\n")
                if not line or line.startswith("#"):
                    continue
                cols = line.split("\t")
                if header is None:
                    header = cols
                elif len(cols) == len(header):
                    rows.append(dict(zip(header, cols)))
    except OSError:
        pass
    return rows


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def read_kv_line(path, prefix):
    """key=value pairs of the first line starting with prefix."""
    try:
        with open_text(path) as f:
            for line in f:
                if line.startswith(prefix):
                    return dict(w.split("=", 1) for w in line[len(prefix):].split() if "=" in w)
    except OSError:
        pass
    return {}


# The /proc/vmstat counters a run's figures come from (reference.sh keeps only these).
VMSTAT_KEYS = ("pswpin", "pswpout", "rss_limit_ignored_ref", "oom_kill")


def read_vmstat(path):
    out = {}
    try:
        with open_text(path) as f:
            for line in f:
                k, _, v = line.partition(" ")
                out[k] = int(v)
    except (OSError, ValueError):
        pass
    return out


def read_cpu_ticks(path):
    """The 'cpu' line of /proc/stat: {field: USER_HZ ticks}, empty if unreadable."""
    names = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
    try:
        with open_text(path) as f:
            fields = f.readline().split()
    except OSError:
        return {}
    if not fields or fields[0] != "cpu":
        return {}
    try:
        return dict(zip(names, (int(x) for x in fields[1:])))
    except ValueError:
        return {}


def read_scenario(path):
    vals = {}
    try:
        with open_text(path) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#") and "=" in line:
                    k, v = line.split("=", 1)
                    vals[k] = v.strip('"')
    except OSError:
        pass
    return vals


def summarise_late_limit(path, r, victim_kind, vic_rows, hog_rows):
    """A hog limited with prlimit --pid while it ran (limit.tsv): what the
    victim had when the limit took effect (prlimit returned), and what it
    kept of that while the hog ran on: the sleeper's last sample (it only
    loses memory), the server's mean."""
    limit = read_tsv(os.path.join(path, "limit.tsv"))
    rss = {(x["when"], x["role"]): num(x["rss_kb"]) for x in limit}
    if not limit or rss.get(("after", "victim")) is None:
        return
    at_limit = rss[("after", "victim")]
    r["victim_rss_before_prlimit_kb"] = rss.get(("before", "victim"))
    r["victim_rss_at_limit_kb"] = at_limit
    r["hog_rss_at_limit_kb"] = rss.get(("after", "hog"))
    t_limit = max(num(x["t_ms"]) for x in limit if x["when"] == "after")
    hog_end = max(num(s["t_ms"]) for s in hog_rows) if hog_rows else None
    later = [num(s["rss_kb"]) for s in vic_rows
             if num(s["t_ms"]) >= t_limit and (hog_end is None or num(s["t_ms"]) <= hog_end)]
    if later and at_limit > 0:
        kept = later[-1] if victim_kind == "idle" else statistics.mean(later)
        r["victim_kept_since_limit_pct"] = 100.0 * kept / at_limit


def read_settings(path):
    """guest-settings.txt: what the scenario asked for ("want ...") and every
    knob the guest had ("knob NAME=VALUE")."""
    want, knobs = {}, {}
    try:
        with open_text(path) as f:
            for line in f:
                if line.startswith("want "):
                    want = dict(w.split("=", 1) for w in line[5:].split() if "=" in w)
                elif line.startswith("knob "):
                    k, _, v = line[5:].rstrip("\n").partition("=")
                    knobs[k] = v
                elif line.startswith("kernel="):
                    knobs["kernel_release"] = line.strip().split("=", 1)[1]
    except OSError:
        pass
    return want, knobs


def settings_problems(want, knobs):
    """Why a run did not measure what its scenario claims, or [] if it did.
    A stock kernel has no rsslim knob: it must be one, and off is all a
    scenario may ask of it."""
    if not want:
        return ["no record of the settings the scenario asked for"]
    problems = []
    release = knobs.get("kernel_release", "")
    # (scripts/setlocalversion adds "+" to a release built from a git tree.)
    stock = re.search(r"-stock\+?$", release) is not None
    if (want.get("kernel") == "stock") != stock:
        problems.append("asked for the %s kernel, booted %s" % (want.get("kernel"), release or "?"))
    for knob in ("rss_limit_enforce", "swap_token"):
        got = knobs.get(knob)
        if got == "absent" and stock and want.get(knob) == "0":
            continue
        if got != want.get(knob):
            problems.append("%s is %s, the scenario asked for %s" % (knob, got, want.get(knob)))
    # (Runs from before min_ttl_ms was recorded do not say.)
    if "min_ttl_ms" in want and knobs.get("min_ttl_ms") not in (want["min_ttl_ms"], "absent"):
        problems.append("min_ttl_ms is %s, the scenario asked for %s" % (knobs.get("min_ttl_ms"), want["min_ttl_ms"]))
    if "swap_kind" in want and knobs.get("swap_kind") != want["swap_kind"]:
        problems.append("the guest swapped to %s, the run asked for %s" % (knobs.get("swap_kind"), want["swap_kind"]))
    lru = knobs.get("lru_gen_enabled")
    got_lru = None if lru in (None, "absent") else ("classic" if int(lru, 16) == 0 else "mglru")
    if got_lru != want.get("lru_gen_enabled"):
        problems.append("the LRU is %s, the scenario asked for %s" % (got_lru, want.get("lru_gen_enabled")))
    return problems


def summarise_dir(path):
    r = {"complete": os.path.exists(os.path.join(path, "status"))
         and open(os.path.join(path, "status")).read().strip() == "complete"}
    sc = read_scenario(os.path.join(path, "scenario"))
    r["description"] = sc.get("DESCRIPTION", "")
    want, knobs = read_settings(os.path.join(path, "guest-settings.txt"))
    r["settings"] = knobs
    r["problems"] = settings_problems(want, knobs)
    victim_kind = sc.get("VICTIM", "server")
    victim = read_tsv(os.path.join(path, "victim.tsv"))
    if victim:
        v = victim[-1]
        if victim_kind == "idle":
            r["victim_resident_pct"] = num(v.get("resident_pct"))
            r["victim_retouch_ms"] = num(v.get("retouch_ms"))
            r["victim_majflt"] = num(v.get("retouch_majflt"))
        else:
            for k in ("p50_us", "p99_us", "p999_us", "max_us", "missed", "rounds"):
                r["victim_" + k] = num(v.get(k))
            if victim_kind == "comego":
                # How long the returning server took to get its memory back.
                r["victim_refill_p50_ms"] = num(v.get("refill_p50_ms"))
                r["victim_refill_max_ms"] = num(v.get("refill_max_ms"))
            r["victim_majflt"] = num(v.get("majflt"))
            rounds = read_tsv(os.path.join(path, "victim_rounds.tsv"))
            r["round_latencies"] = [x for x in (num(row.get("latency_us")) for row in rounds)
                                    if x is not None]
    hog = read_kv_line(os.path.join(path, "hog.tsv"), "# summary ")
    if hog:
        # One unit per column: a seq or random hog touches pages, a sorting
        # hog visits array elements.
        per_s = num(hog.get("work_per_s"))
        if per_s is not None and hog.get("work_unit") == "pages":
            r["hog_kpages_s"] = per_s / 1e3
        elif per_s is not None and hog.get("work_unit") == "elements":
            r["hog_melem_s"] = per_s / 1e6
        elif hog.get("work_unit") == "bytes":
            # GNU sort: a fixed input, so the time it took is the figure.
            r["hog_done_s"] = num(hog.get("wall_s"))
        if num(hog.get("majflt")) is not None:
            r["hog_majflt"] = num(hog.get("majflt"))
        if num(hog.get("stime_ms")) is not None:
            r["hog_stime_s"] = num(hog.get("stime_ms")) / 1000
    trimd = read_kv_line(os.path.join(path, "trimd.tsv"), "# summary ")
    if trimd and num(trimd.get("user_ms")) is not None and num(trimd.get("sys_ms")) is not None:
        r["trimd_user_s"] = num(trimd.get("user_ms")) / 1000
        r["trimd_sys_s"] = num(trimd.get("sys_ms")) / 1000
    hog2 = read_kv_line(os.path.join(path, "hog2.tsv"), "# summary ")
    if hog and hog2:
        # Two hogs with fixed work (thrash-token): when both are done, and their faults.
        r["hogs_wall_s"] = max(num(hog.get("wall_s")) or 0, num(hog2.get("wall_s")) or 0)
        r["hog_majflt"] = (num(hog.get("majflt")) or 0) + (num(hog2.get("majflt")) or 0)
    samples = read_tsv(os.path.join(path, "samples.tsv"))
    by_role = {}
    for s in samples:
        by_role.setdefault(s["role"], []).append(s)
    hog_rows = by_role.get("hog", [])
    vic_rows = by_role.get("victim", [])
    # (A server that comes and goes gives its memory back on purpose.)
    if vic_rows and victim_kind in ("server", "redis"):
        # Kept = mean RSS while the hog runs / the most it had before (its
        # whole working set once touched); without a hog, over the whole run.
        t0 = num(hog_rows[0]["t_ms"]) if hog_rows else num(vic_rows[-1]["t_ms"])
        base = [num(s["rss_kb"]) for s in vic_rows if num(s["t_ms"]) <= t0]
        during = [num(s["rss_kb"]) for s in vic_rows
                  if (num(s["t_ms"]) >= t0 if hog_rows else num(s["rss_kb"]) >= max(base) * 0.5)]
        base_kb = max(base) if base else None
        if base_kb and during:
            r["victim_rss_kept_pct"] = 100.0 * statistics.mean(during) / base_kb
    summarise_late_limit(path, r, victim_kind, vic_rows, hog_rows)
    need = num(sc.get("MIN_HOG_MAJFLT"))
    if need is not None and (r.get("hog_majflt") or 0) < need:
        r["problems"].append("the hogs did not thrash: %s major faults, the scenario needs %s"
                                      % (fmt(r.get("hog_majflt") or 0), fmt(need)))
    if hog_rows:
        r["hog_rss_mean_mib"] = statistics.mean(num(s["rss_kb"]) for s in hog_rows) / 1024
        if "hog_majflt" not in r:
            r["hog_majflt"] = max(num(s["majflt"]) for s in hog_rows)
    if samples and any(num(s.get("token_pid")) is not None and num(s["token_pid"]) >= 0
                       for s in samples):
        for role, rows in by_role.items():
            held = sum(1 for s in rows if s["token_pid"] == s["pid"])
            r["token_share_" + role] = 100.0 * held / len(rows)
    before = read_vmstat(os.path.join(path, "vmstat.before"))
    after = read_vmstat(os.path.join(path, "vmstat.after"))
    for k in VMSTAT_KEYS:
        if k in before and k in after:
            r[k] = after[k] - before[k]
    # zram's mm_stat once a second (orig_data_size compr_data_size
    # mem_used_total ...): how many times smaller it kept what it held most.
    try:
        with open_text(os.path.join(path, "zram-mm_stat")) as f:
            stats = [[int(x) for x in line.split()[:3]] for line in f if len(line.split()) >= 3]
        orig, _, used = max(stats)
        if used > 0:
            r["zram_ratio"] = orig / used
    except (OSError, ValueError):
        pass
    # USER_HZ is 100 on every architecture the harness boots.
    cpu0 = read_cpu_ticks(os.path.join(path, "cpu.before"))
    cpu1 = read_cpu_ticks(os.path.join(path, "cpu.after"))
    kernel = ("system", "irq", "softirq")
    if all(k in cpu0 and k in cpu1 for k in kernel):
        r["kernel_cpu_s"] = sum(cpu1[k] - cpu0[k] for k in kernel) / 100
    return r


COLUMNS = [
    ("victim_p50_us", "p50 us"), ("victim_p99_us", "p99 us"), ("victim_p999_us", "p99.9 us"),
    ("victim_max_us", "max us"), ("victim_missed", "v.missed"), ("victim_p99_increase_pct", "p99 +%"),
    ("victim_majflt", "v.majflt"), ("victim_refill_p50_ms", "refill ms"),
    ("victim_refill_max_ms", "refill max ms"), ("victim_rss_kept_pct", "v.kept %"),
    ("victim_resident_pct", "v.resident %"), ("victim_retouch_ms", "retouch ms"),
    ("victim_rss_at_limit_kb", "v.kB@limit"), ("victim_kept_since_limit_pct", "v.kept since limit %"),
    ("hog_kpages_s", "hog kpage/s"), ("hog_melem_s", "hog Melem/s"), ("hog_done_s", "sort done s"),
    ("hog_majflt", "h.majflt"),
    ("hogs_wall_s", "2 hogs s"), ("token_share_hog", "tok.hog %"), ("token_share_hog2", "tok.hog2 %"),
    ("token_share_victim", "tok.vic %"),
    ("pswpin", "swapins"), ("pswpout", "swapouts"), ("oom_kill", "OOM kills"),
    ("zram_ratio", "zram x"),
    ("kernel_cpu_s", "sys cpu s"), ("hog_stime_s", "hog sys s"),
    ("trimd_user_s", "trimd usr s"), ("trimd_sys_s", "trimd sys s"),
]


def median_ci(vals):
    """A distribution-free confidence interval for the median of vals: the
    order statistics (k, n-k+1) with the largest k whose binomial coverage is
    still at least 95%, or the whole range (and its smaller coverage, 1 - 2^(1-n))
    when there are too few runs for 95%. Returns (low, high, coverage %)."""
    xs = sorted(vals)
    n = len(xs)

    def coverage(k):  # P(x(k) <= median <= x(n-k+1)) = 1 - 2 P(Bin(n, 1/2) < k)
        return 1.0 - 2.0 * sum(math.comb(n, i) for i in range(k)) / 2.0 ** n

    k = 1
    while k + 1 <= (n + 1) // 2 and coverage(k + 1) >= 0.95:
        k += 1
    return xs[k - 1], xs[n - k], 100.0 * coverage(k)


def percentile(sorted_vals, p):
    """Nearest-rank percentile of an ascending list."""
    if not sorted_vals:
        return None
    rank = max(1, math.ceil(p / 100.0 * len(sorted_vals)))
    return sorted_vals[rank - 1]


def pool_latency(row, runs):
    """With repeats, the latency percentiles of a row are those of all rounds
    of all its runs together (percentiles of separate runs do not average);
    the per-run values still give the spread."""
    if len(runs) < 2 or not all(r.get("round_latencies") for r in runs):
        return
    pooled = sorted(x for r in runs for x in r["round_latencies"])
    for key, p in (("victim_p50_us", 50), ("victim_p99_us", 99), ("victim_p999_us", 99.9),
                   ("victim_max_us", 100)):
        if key in row:
            row[key + "_run_median"] = row[key]
        row[key] = percentile(pooled, p)


def fmt(v):
    if v is None:
        return "-"
    if abs(v) >= 100 or v == int(v):
        return "%.0f" % v
    return "%.1f" % v


def main():
    run_dir = sys.argv[1]
    groups = {}
    incomplete, invalid = [], {}
    for name in sorted(os.listdir(run_dir)):
        path = os.path.join(run_dir, name)
        if not os.path.isdir(path) or "." not in name:
            continue
        parts = name.split(".")
        # label[+AXIS-value...].lru[.rN]: a sweep's variant follows the label.
        scenario, lru = parts[0], parts[1]
        r = summarise_dir(path)
        if not r["complete"] or os.path.exists(os.path.join(path, "INCOMPLETE")):
            incomplete.append(name)
            continue
        if r["problems"]:
            invalid[name] = r["problems"]
            continue
        groups.setdefault((scenario, lru), []).append(r)

    rows = []
    for (scenario, lru), runs in groups.items():
        base, _, variant = scenario.partition("+")
        row = {"scenario": scenario, "base": base, "variant": variant, "lru": lru, "runs": len(runs),
               "description": runs[0].get("description", ""),
               "kernel": runs[0]["settings"].get("kernel_release", ""),
               "settings": runs[0]["settings"]}
        keys = sorted({k for r in runs for k in r
                       if k not in ("complete", "description", "settings", "problems",
                                    "round_latencies")})
        for k in keys:
            vals = [r[k] for r in runs if r.get(k) is not None]
            if vals:
                row[k] = statistics.median(vals)
                if len(vals) > 1:
                    row[k + "_min"], row[k + "_max"] = min(vals), max(vals)
                    lo, hi, coverage = median_ci(vals)
                    row[k + "_ci_lo"], row[k + "_ci_hi"], row[k + "_ci_pct"] = lo, hi, coverage
        pool_latency(row, runs)
        rows.append(row)
    index = {(r["scenario"], r["lru"]): r for r in rows}
    for r in rows:
        alone = index.get(("victim-alone" + ("+" + r["variant"] if r["variant"] else ""), r["lru"]))
        if alone and alone.get("victim_p99_us") and r.get("victim_p99_us") is not None:
            r["victim_p99_increase_pct"] = 100.0 * (r["victim_p99_us"] / alone["victim_p99_us"] - 1)

    order = ["victim-alone", "hog-unlimited", "hog-rsslimit-stock", "hog-rsslimit-off", "hog-rsslimit",
             "hog-rsslimit-m1", "hog-rsslimit-m2", "hog-rsslimit-m3", "hog-rsslimit-pid-m1",
             "hog-rsslimit-pid-m2", "hog-rsslimit-pid-m3", "hog-memhigh", "hog-memlow", "hog-memmin", "hog-trimd", "hog-damon", "hog-minttl",
             "comego-stock", "comego-memhigh", "comego-rsslimit-m1", "comego-rsslimit-m2",
             "comego-rsslimit-m3",
             "idle-2004-stock", "idle-2004-off", "idle-2004",
             "idle-2004-m1", "idle-2004-m2", "idle-2004-m3", "idle-2004-pid-m1", "idle-2004-pid-m2",
             "idle-2004-pid-m3", "idle-2004-memhigh", "idle-2004-trimd", "idle-2004-damon", "thrash-token", "thrash-token-off",
             "redis-alone", "redis-stock", "redis-off", "redis-rsslimit-m1", "redis-rsslimit-m2", "redis-rsslimit-m3",
             "redis-memhigh", "redis-trimd",
             "sort-stock", "sort-off", "sort-selflimit", "sort-rsslimit-m1", "sort-rsslimit-m2", "sort-rsslimit-m3",
             "sort-memhigh"]
    # A sweep's variants of one scenario side by side.
    rows.sort(key=lambda r: (r["lru"] != "mglru",
                             order.index(r["base"]) if r["base"] in order else 99,
                             r["base"], r["variant"]))
    with open(os.path.join(run_dir, "summary.tsv"), "w") as f:
        keys = (["scenario", "lru", "variant", "runs"] + [k for k, _ in COLUMNS] +
                [k + sfx for k, _ in SPREAD_KEYS for sfx in ("_ci_lo", "_ci_hi", "_ci_pct")])
        f.write("\t".join(keys) + "\n")
        for r in rows:
            f.write("\t".join(str(r.get(k, "")) if not isinstance(r.get(k), float)
                              else "%.3f" % r[k] for k in keys) + "\n")
    with open(os.path.join(run_dir, "summary.json"), "w") as f:
        json.dump({"scenarios": rows, "incomplete": incomplete, "invalid": invalid}, f,
                  indent=1, sort_keys=True)

    # OOM kills only when there were some: only the min_ttl_ms scenario expects them.
    shown = [(k, h) for k, h in COLUMNS if any(r.get(k) is not None for r in rows)
             and (k != "oom_kill" or any(r.get(k) for r in rows))]
    table = [["scenario", "lru"] + [h for _, h in shown]]
    for r in rows:
        table.append([r["scenario"], r["lru"]] + [fmt(r.get(k)) for k, _ in shown])
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        print("  ".join(c.rjust(w) if i > 1 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))))
    print()
    def prose(index):
        """What the table says, in words: index maps (scenario, LRU) to a row."""
        mode_names = {"m1": "passive", "m2": "active", "m3": "hard", "trimd": "rsstrimd on stock 6.12",
                      "off": "patched kernel, knobs off", "stock": "stock 6.12 (limit ignored)",
                      "memhigh": "memory.high on stock 6.12 instead",
                      "damon": "DAMOS pageout (DAMON) on stock 6.12"}

        def mode_text(label):
            mode = mode_names.get(label.rsplit("-", 1)[-1], label)
            if "-pid-" in label:
                return mode + ", given by prlimit --pid once the hog had grown"
            return mode

        def late_text(r):
            """For a limit given to the running hog: judged from when it took effect."""
            if r.get("victim_kept_since_limit_pct") is None:
                return ""
            return ("; it had %s MiB when the limit took effect (%s MiB when prlimit started) "
                    "and kept %s%% of it" % (fmt(r["victim_rss_at_limit_kb"] / 1024),
                                             fmt((r.get("victim_rss_before_prlimit_kb") or 0) / 1024),
                                             fmt(r["victim_kept_since_limit_pct"])))

        def hog_text(r):
            if r.get("hog_kpages_s") is None:
                if r.get("oom_kill"):
                    return "hog work not reported (the OOM killer ended a process before the hog finished)"
                return "hog work not measured (a custom HOG command reports none)"
            return "the hog touched %s thousand pages/s" % fmt(r["hog_kpages_s"])

        def cpu_text(r):
            """Where the CPU went: the whole guest kernel, the hog's own system time, rsstrimd."""
            if r.get("kernel_cpu_s") is None:
                return ""
            text = "; kernel CPU %s s" % fmt(r["kernel_cpu_s"])
            if r.get("hog_stime_s") is not None:
                text += ", hog system time %s s" % fmt(r["hog_stime_s"])
            if r.get("trimd_user_s") is not None:
                text += ", rsstrimd %s s user + %s s system" % (fmt(r["trimd_user_s"]), fmt(r["trimd_sys_s"]))
            return text

        def family(prefix, lru):
            """The rows of one family of scenarios on one LRU, in the table's order."""
            return [(label, index[(label, lru)]) for label in order
                    if label.startswith(prefix) and (label, lru) in index]

        for lru in ("mglru", "classic"):
            # Today's Linux: a hog whose prlimit --rss stock 6.12 ignores, or one with no limit.
            unl, what = index.get(("hog-rsslimit-stock", lru)), "under an ignored prlimit --rss on stock 6.12"
            if not unl:
                unl, what = index.get(("hog-unlimited", lru)), "with no limit"
            if unl and unl.get("victim_majflt") is not None:
                print("%s: beside a hog %s the victim took %s major faults, p99 %s us." % (
                    lru, what, fmt(unl["victim_majflt"]), fmt(unl.get("victim_p99_us"))))
                for label in sorted(k[0] for k in index if k[1] == lru and k[0].startswith("hog-rsslimit")):
                    r = index[(label, lru)]
                    cut = "" if not unl["victim_majflt"] else " (%+.0f%%)" % (
                        100.0 * ((r.get("victim_majflt") or 0) / unl["victim_majflt"] - 1))
                    print("  prlimit --rss, %s: %s major faults%s, p99 %s us, %s%s%s." % (
                        mode_text(label), fmt(r.get("victim_majflt")), cut, fmt(r.get("victim_p99_us")),
                        hog_text(r), late_text(r), cpu_text(r)))
                for label, what in (("hog-trimd", "prlimit --rss + rsstrimd"), ("hog-memhigh", "memory.high instead"),
                                    ("hog-memlow", "no limit, memory.low on the victim"),
                                    ("hog-memmin", "no limit, memory.min on the victim"),
                                    ("hog-damon", "DAMOS pageout towards the limit instead"),
                                    ("hog-minttl", "no limit, MGLRU min_ttl_ms=1000")):
                    r = index.get((label, lru))
                    if r:
                        oom = "; %s OOM kills" % fmt(r["oom_kill"]) if r.get("oom_kill") else ""
                        print("  %s: %s major faults, p99 %s us, %s%s%s." % (
                            what, fmt(r.get("victim_majflt")), fmt(r.get("victim_p99_us")), hog_text(r),
                            oom, cpu_text(r)))
            idle = sorted(k[0] for k in index if k[1] == lru and k[0].startswith("idle-2004"))
            if idle:
                print("%s: 2004 test (sleeping 100 MiB beside a sorting hog under ulimit -m 4000):" % lru)
                for label in idle:
                    r = index[(label, lru)]
                    print("  %s: the sleeper kept %s%% of its memory%s; re-touching took %s ms, %s major faults; "
                          "the sorting hog visited %s million elements/s%s." % (
                              mode_text(label), fmt(r.get("victim_resident_pct")), late_text(r),
                              fmt(r.get("victim_retouch_ms")), fmt(r.get("victim_majflt")),
                              fmt(r.get("hog_melem_s")), cpu_text(r)))
        for lru in ("mglru", "classic"):
            come = family("comego-", lru)
            if come:
                print("%s: a server that comes and goes beside a hog that fits only while it is away:" % lru)
                high = index.get(("comego-memhigh", lru))
                for label, r in come:
                    what = ("prlimit --rss, " if label.startswith("comego-rsslimit") else "") + mode_text(label)
                    ratio = ""
                    if label.startswith("comego-rsslimit") and high and high.get("hog_kpages_s") and \
                            r.get("hog_kpages_s") is not None:
                        ratio = " (%.1fx the work under memory.high)" % (r["hog_kpages_s"] / high["hog_kpages_s"])
                    print("  %s: p99 %s us, %s missed rounds, refill %s ms (max %s), %s major faults; "
                          "the hog touched %s thousand pages/s%s." % (
                              what, fmt(r.get("victim_p99_us")), fmt(r.get("victim_missed")),
                              fmt(r.get("victim_refill_p50_ms")), fmt(r.get("victim_refill_max_ms")),
                              fmt(r.get("victim_majflt")), fmt(r.get("hog_kpages_s")), ratio))
        def described(label, r):
            """A row's own description (it says which kernel), and the mode it ran in."""
            mode = label.rsplit("-", 1)[-1]
            return r.get("description", label) + (", %s mode" % mode_names[mode] if mode in ("m1", "m2", "m3") else "")

        for lru in ("mglru", "classic"):
            redis = family("redis-", lru)
            if redis:
                print("%s: redis-server (its values, a GET due every 10 ms, latency from when due) "
                      "beside a hog under prlimit --rss:" % lru)
                for label, r in redis:
                    print("  %s: p50 %s us, p99 %s us, p99.9 %s us, %s late requests, %s major faults of "
                          "the server, which kept %s%% of its memory; %s." % (
                              described(label, r), fmt(r.get("victim_p50_us")), fmt(r.get("victim_p99_us")),
                              fmt(r.get("victim_p999_us")), fmt(r.get("victim_missed")),
                              fmt(r.get("victim_majflt")), fmt(r.get("victim_rss_kept_pct")),
                              hog_text(r) if label != "redis-alone" else "no hog"))
            sorts = family("sort-", lru)
            if sorts:
                print("%s: the victim beside GNU sort (a fixed input) under prlimit --rss:" % lru)
                for label, r in sorts:
                    print("  %s: the sort took %s s; the victim: %s major faults, p99 %s us, kept %s%% "
                          "of its memory%s." % (
                              described(label, r), fmt(r.get("hog_done_s")), fmt(r.get("victim_majflt")),
                              fmt(r.get("victim_p99_us")), fmt(r.get("victim_rss_kept_pct")), cpu_text(r)))
        for lru in ("mglru", "classic"):
            on, off = index.get(("thrash-token", lru)), index.get(("thrash-token-off", lru))
            if on and off and on.get("hogs_wall_s") and off.get("hogs_wall_s"):
                print("%s: two thrashing hogs finished in %s s with the swap token and %s s without "
                      "(%s major faults vs %s)." % (lru, fmt(on["hogs_wall_s"]), fmt(off["hogs_wall_s"]),
                                                   fmt(on.get("hog_majflt")), fmt(off.get("hog_majflt"))))

    variants = sorted({r["variant"] for r in rows})
    for variant in variants:
        said = io.StringIO()
        with contextlib.redirect_stdout(said):
            prose({(r["base"], r["lru"]): r for r in rows if r["variant"] == variant})
        if variant and said.getvalue():
            print("With %s:" % ", ".join(part.replace("-", "=", 1) for part in variant.split("+")))
        print(said.getvalue(), end="")
    print_spread(rows)
    if incomplete:
        print("INCOMPLETE (not in the table): " + " ".join(incomplete))
    for name, problems in sorted(invalid.items()):
        print("INVALID (not in the table): %s: %s" % (name, "; ".join(problems)))
    return 1 if invalid else 0


SPREAD_KEYS = [("victim_majflt", "victim major faults"), ("victim_p99_us", "p99 us"),
               ("victim_missed", "missed rounds"), ("victim_refill_p50_ms", "refill ms"),
               ("victim_resident_pct", "sleeper kept %"),
               ("victim_kept_since_limit_pct", "victim kept since the limit %"),
               ("hog_kpages_s", "hog kpage/s"), ("hog_melem_s", "sorting hog Melem/s"),
               ("hog_done_s", "GNU sort s"), ("hogs_wall_s", "2 hogs s")]


def print_spread(rows):
    """With REPEAT > 1: the median of each headline figure over the runs, with
    a confidence interval for it from the runs' order statistics."""
    repeated = [r for r in rows if r["runs"] > 1]
    if not repeated:
        return
    print("Run-to-run spread of the headline figures: median of the runs per scenario, then the\n"
          "interval that holds the true median with the confidence shown (95%, or the most a\n"
          "range of so few runs gives: 50% for 2, 75% for 3, 88% for 4, 94% for 5):")
    for r in repeated:
        parts = ["%s %s (%s..%s, %.0f%%)" % (label, fmt(r.get(k + "_run_median", r[k])),
                                            fmt(r[k + "_ci_lo"]), fmt(r[k + "_ci_hi"]), r[k + "_ci_pct"])
                 for k, label in SPREAD_KEYS if k + "_ci_lo" in r]
        if parts:
            print("  %s %s, %d runs: %s" % (r["scenario"], r["lru"], r["runs"], "; ".join(parts)))


if __name__ == "__main__":
    sys.exit(main())
