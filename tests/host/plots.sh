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
tap_start 8
cp -r tests/fixtures/run-small "$tmp/run"
rc=0
python3 harness/summarize.py "$tmp/run" >"$tmp/report" || rc=1
awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$1 == "hog-unlimited" && $2 == "mglru" { u = $(c["hog_throughput_pct"]) }
	$1 == "hog-rsslimit-m2" && $2 == "mglru" { l = $(c["hog_throughput_pct"]) }
	END { exit !(u == 100 && l == 60) }' "$tmp/run/summary.tsv" || rc=1
grep -q "knobs off (unpatched): the sleeper kept 27% of its memory" "$tmp/report" || rc=1
result $rc "summary: table, relative throughput and the 2004 sentence from the fixture"

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

# REPEAT=2: the table shows the mean, the report the spread of the runs.
rc=0
cp -r tests/fixtures/run-small "$tmp/repeat"
mv "$tmp/repeat/hog-unlimited.mglru" "$tmp/repeat/hog-unlimited.mglru.r1"
cp -r "$tmp/repeat/hog-unlimited.mglru.r1" "$tmp/repeat/hog-unlimited.mglru.r2"
sed -i 's/\t158$/\t358/' "$tmp/repeat/hog-unlimited.mglru.r2/victim.tsv"
python3 harness/summarize.py "$tmp/repeat" >"$tmp/report" || rc=1
awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$1 == "hog-unlimited" && $2 == "mglru" { m = $(c["victim_majflt"]); n = $(c["runs"]) }
	END { exit !(m == 258 && n == 2) }' "$tmp/repeat/summary.tsv" || rc=1
grep -q "hog-unlimited mglru, 2 runs: victim major faults 258 (158..358)" "$tmp/report" || rc=1
[ "$(grep -c ' runs: ' "$tmp/report")" -eq 1 ] || rc=1
result $rc "summary: repeated runs give the mean in the table and their spread in the report"

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
[ "$failed" -eq 0 ]
