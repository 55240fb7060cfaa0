#!/bin/bash
# Host tests of the summary and plot step on a small hand-made results
# folder (tests/fixtures/run-small): every figure is drawn without gnuplot
# warnings, files are valid, the report page's links resolve, and bad or
# incomplete input is reported while what can be drawn still is.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
# shellcheck source=tests/host/tap-lib.sh
. "tests/host/tap-lib.sh"
tap_start 13
cp -r tests/fixtures/run-small "$tmp/run"
rc=0
python3 harness/summarize.py "$tmp/run" >"$tmp/report" || rc=1
awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$1 == "hog-unlimited" && $2 == "mglru" { u = $(c["hog_kpages_s"]) }
	$1 == "hog-rsslimit-m2" && $2 == "mglru" { l = $(c["hog_kpages_s"]); e = $(c["hog_melem_s"]) }
	$1 == "idle-2004-m2" && $2 == "mglru" { s = $(c["hog_melem_s"]) }
	END { exit !(u == 25.6 && l == 15.36 && e == "" && s == 26.214) }' "$tmp/run/summary.tsv" || rc=1
grep -q "patched kernel, knobs off: the sleeper kept 27% of its memory" "$tmp/report" || rc=1
grep -q "the sorting hog visited 26.2 million elements/s" "$tmp/report" || rc=1
! grep -q "  hog %\|of unlimited" "$tmp/report" || rc=1
result $rc "summary: hog work in one unit per column (pages/s, sort elements/s), the 2004 sentence"

# A limit given to the running hog (limit.tsv): judged from when prlimit
# returned, 80000 kB in the fixture, of which the sleeper's last sample while
# the hog ran (76000 kB) is 95%.
rc=0
awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$1 == "idle-2004-pid-m2" && $2 == "mglru" { a = $(c["victim_rss_at_limit_kb"]); k = $(c["victim_kept_since_limit_pct"]) }
	END { exit !(a == 80000 && k == 95) }' "$tmp/run/summary.tsv" || rc=1
grep -q "given by prlimit --pid once the hog had grown: .*it had 78.1 MiB when the limit took effect (85.2 MiB when prlimit started) and kept 95% of it" "$tmp/report" || rc=1
result $rc "summary: a limit given to the running hog is judged from when it took effect"

# CPU cost: the guest kernel's system+irq+softirq ticks (USER_HZ 100) and the hog's own
# system time; a folder without cpu.before/after simply has no figure.
rc=0
awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$1 == "hog-rsslimit-m2" && $2 == "mglru" { k = $(c["kernel_cpu_s"]); h = $(c["hog_stime_s"]) }
	$1 == "hog-unlimited" && $2 == "mglru" { u = $(c["kernel_cpu_s"]) }
	END { exit !(k == 4.7 && h == 1.25 && u == "") }' "$tmp/run/summary.tsv" || rc=1
grep -q "active: 0 major faults .*; kernel CPU 4.7 s, hog system time 1.2 s" "$tmp/report" || rc=1
result $rc "summary: kernel CPU from /proc/stat and the hog's system time, only where recorded"

# REPEAT=2: the table shows the median, the report the runs' spread (the
# interval of 2 runs holds the median with 50% confidence).
rc=0
cp -r tests/fixtures/run-small "$tmp/repeat"
mv "$tmp/repeat/hog-unlimited.mglru" "$tmp/repeat/hog-unlimited.mglru.r1"
cp -r "$tmp/repeat/hog-unlimited.mglru.r1" "$tmp/repeat/hog-unlimited.mglru.r2"
sed -i 's/\t158$/\t358/' "$tmp/repeat/hog-unlimited.mglru.r2/victim.tsv"
python3 harness/summarize.py "$tmp/repeat" >"$tmp/report" || rc=1
awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$1 == "hog-unlimited" && $2 == "mglru" { m = $(c["victim_majflt"]); n = $(c["runs"]) }
	END { exit !(m == 258 && n == 2) }' "$tmp/repeat/summary.tsv" || rc=1
grep -q "hog-unlimited mglru, 2 runs: victim major faults 258 (158..358, 50%)" "$tmp/report" || rc=1
[ "$(grep -c ' runs: ' "$tmp/report")" -eq 1 ] || rc=1
result $rc "summary: repeated runs give the median in the table and its confidence interval in the report"

# Latency percentiles of repeated runs come from all their rounds together:
# 200 rounds under 48 us and 200 at 5000 us make p50 the first run's
# slowest round (47.2 us) and p99 5000 us, where the median of the two
# runs' own p99s (46.8 and 5000) would say 2523 us.
rc=0
awk -F'\t' 'BEGIN { OFS = "\t" } NR > 1 { $2 = 5000 } { print }' \
	"$tmp/repeat/hog-unlimited.mglru.r1/victim_rounds.tsv" >"$tmp/repeat/hog-unlimited.mglru.r2/victim_rounds.tsv"
sed -i 's/\t46\.8\t/\t5000\t/' "$tmp/repeat/hog-unlimited.mglru.r2/victim.tsv"
python3 harness/summarize.py "$tmp/repeat" >"$tmp/report" || rc=1
awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$1 == "hog-unlimited" && $2 == "mglru" { p50 = $(c["victim_p50_us"]); p99 = $(c["victim_p99_us"]) }
	END { print "# pooled p50 " p50 ", p99 " p99; exit !(p50 == 47.2 && p99 == 5000) }' "$tmp/repeat/summary.tsv" || rc=1
grep -q "p99 us 2523 (46.8..5000, 50%)" "$tmp/report" || { grep ' runs: ' "$tmp/report" | sed 's/^/# /'; rc=1; }
result $rc "summary: repeated runs' latency percentiles come from all their rounds, not averaged"

# The interval for the median: with 6 runs, the smallest and largest (1 - 2/64 = 97%).
rc=0
cp -r tests/fixtures/run-small "$tmp/six"
mv "$tmp/six/hog-unlimited.mglru" "$tmp/six/hog-unlimited.mglru.r1"
for i in 2 3 4 5 6; do
	cp -r "$tmp/six/hog-unlimited.mglru.r1" "$tmp/six/hog-unlimited.mglru.r$i"
	sed -i "s/\t158\$/\t$((150 + i * 10))/" "$tmp/six/hog-unlimited.mglru.r$i/victim.tsv"
done
python3 harness/summarize.py "$tmp/six" >"$tmp/report" || rc=1
grep -q "hog-unlimited mglru, 6 runs: victim major faults 185 (158..210, 97%)" "$tmp/report" ||
	{ grep ' runs: ' "$tmp/report" | sed 's/^/# /'; rc=1; }
awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$1 == "hog-unlimited" && $2 == "mglru" { lo = $(c["victim_majflt_ci_lo"]); hi = $(c["victim_majflt_ci_hi"]) }
	END { exit !(lo == 158 && hi == 210) }' "$tmp/six/summary.tsv" || rc=1
result $rc "summary: 6 repeats give the median and its 97% interval in the report and summary.tsv"

# make compare: the same run twice overlaps everywhere; a run whose victim
# took ten times the faults does not; a folder without a summary is refused.
rc=0
cp -r "$tmp/six" "$tmp/six-worse"
for d in "$tmp"/six-worse/hog-unlimited.mglru.r*; do
	awk -F'\t' 'BEGIN { OFS = "\t" } $1 ~ /^[0-9]+$/ { $NF = $NF * 10 } { print }' "$d/victim.tsv" >"$d/v" && mv "$d/v" "$d/victim.tsv"
done
python3 harness/summarize.py "$tmp/six-worse" >/dev/null || rc=1
python3 harness/compare.py "$tmp/six" "$tmp/six-worse" >"$tmp/compare" || rc=1
grep -qE '^hog-unlimited +mglru +victim major faults +185 +1850 +\+900% +no$' "$tmp/compare" || { sed 's/^/# /' "$tmp/compare" | head -12; rc=1; }
python3 harness/compare.py "$tmp/six" "$tmp/six" >"$tmp/compare" || rc=1
grep -qE '^hog-unlimited +mglru +victim major faults +185 +185 +\+0% +yes$' "$tmp/compare" || rc=1
if python3 harness/compare.py "$tmp/six" "$tmp/no-such-run" 2>"$tmp/err"; then rc=1; fi
grep -q "^error: .*no-such-run has no summary.json" "$tmp/err" || rc=1
result $rc "compare: change per figure and whether the runs' intervals overlap; a folder without a summary is refused"

# A run whose guest did not have the settings its scenario asked for (here
# the swap token left on in a knobs-off row, and a patched kernel booted for
# a stock row), or that did not thrash where it had to, is refused: out of the table, named with the reason, and the
# summary exits non-zero.
rc=0
cp -r tests/fixtures/run-small "$tmp/invalid"
sed -i 's/^knob swap_token=0$/knob swap_token=1/' "$tmp/invalid/idle-2004-off.mglru/guest-settings.txt"
sed -i 's/-stock+$/-rsslim+/' "$tmp/invalid/hog-unlimited.classic/guest-settings.txt"
echo "MIN_HOG_MAJFLT=1000" >>"$tmp/invalid/hog-unlimited.mglru/scenario"
if python3 harness/summarize.py "$tmp/invalid" >"$tmp/report"; then rc=1; fi
grep -q "^INVALID (not in the table): idle-2004-off.mglru: swap_token is 1, the scenario asked for 0$" "$tmp/report" || rc=1
grep -q "^INVALID (not in the table): hog-unlimited.classic: asked for the stock kernel, booted 6.12.118-rsslim+" "$tmp/report" || rc=1
grep -q "^INVALID (not in the table): hog-unlimited.mglru: the hogs did not thrash: 309 major faults, the scenario needs 1000$" "$tmp/report" || rc=1
awk -F'\t' '($1 == "idle-2004-off" && $2 == "mglru") || ($1 == "hog-unlimited" && $2 == "classic") { bad = 1 }
	$1 == "idle-2004-off" && $2 == "classic" { kept = 1 }
	END { exit bad || !kept }' "$tmp/invalid/summary.tsv" || rc=1
result $rc "summary: a run whose knobs or kernel differ from its scenario's is refused, with the reason"

rc=0
harness/plots.sh "$tmp/run" 2>"$tmp/err" || rc=1
if grep -qiE "error|warning" "$tmp/err"; then sed 's/^/# /' "$tmp/err"; rc=1; fi
result $rc "every plot script runs without a gnuplot warning"

rc=0
for f in rss-mglru rss-classic victim-majflt-mglru latency-mglru latency-classic idle-2004 summary token; do
	png=$tmp/run/plots/$f.png svg=$tmp/run/plots/$f.svg
	if [ "$(head -c 8 "$png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ] ||
		[ "$(stat -c %s "$png")" -lt 10000 ] || ! grep -q '<svg' "$svg" ||
		[ "$(grep -c '<path' "$svg")" -lt 5 ]; then
		echo "# $f: missing or trivial"
		rc=1
	fi
done
result $rc "every expected figure exists as a non-trivial PNG and SVG"

rc=0
refs=$(grep -oE '(src|href)="[^"]+"' "$tmp/run/plots/index.html" | sed 's/.*="\(.*\)"/\1/')
[ "$(echo "$refs" | grep -c .)" -ge 16 ] || rc=1
for r in $refs; do [ -f "$tmp/run/plots/$r" ] || { echo "# missing $r"; rc=1; }; done
grep -q "hog-rsslimit-m2" "$tmp/run/plots/index.html" || rc=1
result $rc "the report page shows the summary and every file it references exists"

rc=0
out=0
harness/plots.sh "$tmp/no-such-run" 2>"$tmp/err" || out=$?
[ "$out" -ne 0 ] && grep -q "^error: no such run folder" "$tmp/err" || rc=1
cp -r tests/fixtures/run-small "$tmp/partial"
rm -f "$tmp/partial/idle-2004-off.mglru/samples.tsv"
out=0
harness/plots.sh "$tmp/partial" 2>"$tmp/err" || out=$?
[ "$out" -ne 0 ] && grep -q "no summary.tsv" "$tmp/err" || rc=1
[ -s "$tmp/partial/plots/rss-mglru.png" ] && [ -s "$tmp/partial/plots/idle-2004.png" ] || rc=1
result $rc "missing or incomplete run folders are reported; what can be drawn is drawn"

# The committed reference run (results/reference, the README's numbers)
# summarises again, from what git holds, into its committed summary.tsv.
rc=0
mkdir -p "$tmp/reference"
for d in results/reference/*.*/; do cp -r "$d" "$tmp/reference/"; done
cp results/reference/meta.json "$tmp/reference/"
python3 harness/summarize.py "$tmp/reference" >"$tmp/reference.txt" || { echo "# the summary refused it"; rc=1; }
if ! cmp -s results/reference/summary.tsv "$tmp/reference/summary.tsv"; then
	diff results/reference/summary.tsv "$tmp/reference/summary.tsv" | head -5 | sed 's/^/# /'
	rc=1
fi
cmp -s results/reference/report.txt "$tmp/reference.txt" || { echo "# report.txt differs"; rc=1; }
result $rc "results/reference re-summarises from git into its committed summary and report"
[ "$failed" -eq 0 ]
