#!/bin/bash
# Host tests of damon-feed (harness/guest/damon-feed.c), the feeder of the
# bench's DAMON scenarios, against a fake kdamond folder: bad input is
# refused with one line and exit 2; a feed writes the goal computed from
# the process's RSS and commits it; it stops when the process is gone.
set -euo pipefail
cd "$(dirname "$0")/../.."
feed=build/bin/damon-feed
# shellcheck source=tests/host/tap-lib.sh
. "tests/host/tap-lib.sh"
tap_start 4

# fake_kdamond DIR: the files damon-feed reads and writes, kdamond "on".
fake_kdamond() {
	local scheme=$1/contexts/0/schemes/0
	mkdir -p "$scheme/quotas/goals/0" "$scheme/stats"
	echo on >"$1/state"
	echo 20000 >"$scheme/quotas/goals/0/current_value"
	echo 4096 >"$scheme/quotas/effective_bytes"
	echo 8192 >"$scheme/stats/sz_applied"
}

rejects_bad_input() {
	local args rc lines
	fake_kdamond "$tmp/kd"
	for args in "--pid 0 --limit 64M --kdamond $tmp/kd --out $tmp/o" \
		"--pid 1 --limit 1K --kdamond $tmp/kd --out $tmp/o" \
		"--pid 1 --limit 64M --kdamond $tmp/no/such --out $tmp/o" \
		"--pid 1 --limit 64M --kdamond $tmp/kd --out $tmp/o --interval 0" \
		"--pid 1 --limit 64M --kdamond $tmp/kd" "--bogus" "--pid 1 --limit 64M --kdamond $tmp/kd --out $tmp/o extra"; do
		rc=0
		# shellcheck disable=SC2086 # each case is a word list
		"$feed" $args >"$tmp/out" 2>"$tmp/err" || rc=$?
		lines=$(wc -l <"$tmp/err")
		if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ]; then
			echo "# '$args' gave exit $rc and $lines stderr lines"
			return 1
		fi
	done
	[ ! -e "$tmp/o" ]
}
check "damon-feed refuses bad input with one line and exit 2, writing nothing" rejects_bad_input

# One feed: the goal is the limit over the RSS in basis points. On a real
# kdamond "state" reads "on" whatever command was written to it; here the
# command stays in the file, so the feeder stops after one feed, having
# committed it.
one_feed() {
	local rss_kb half want
	fake_kdamond "$tmp/one"
	sleep 30 &
	local pid=$!
	# Until the child has exec'd sleep, its RSS is the shell's (one CI run
	# read 4821 bp for 5000 that way, under load).
	while [ "$(cat "/proc/$pid/comm")" != sleep ]; do sleep 0.01; done
	rss_kb=$(($(cut -d' ' -f2 "/proc/$pid/statm") * $(getconf PAGESIZE) / 1024))
	half=$((rss_kb / 2))
	want=$((half * 10000 / rss_kb))
	"$feed" --pid "$pid" --limit "${half}K" --kdamond "$tmp/one" --out "$tmp/one.tsv" \
		--interval 10ms
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	[ "$(cat "$tmp/one/contexts/0/schemes/0/quotas/goals/0/current_value")" = "$want" ] || {
		echo "# current_value $(cat "$tmp/one/contexts/0/schemes/0/quotas/goals/0/current_value"), want $want"
		return 1
	}
	[ "$(cat "$tmp/one/state")" = update_schemes_stats ] || return 1
	awk -F'\t' -v want="$want" -v rss="$rss_kb" '
		NR == 1 { ok = ($0 == "t_ms\trss_kb\tgoal_bp\tquota_bytes\tpaged_out_kb"); next }
		NR == 2 { ok = ok && $2 == rss && $3 == want && $4 == 4096 && $5 == 8; next }
		{ ok = 0 }
		END { exit !(ok && NR == 2) }' "$tmp/one.tsv"
}
check "one feed writes the limit over the RSS (basis points) and commits it" one_feed

# A process far under its limit: the goal is capped at 20000 (DAMOS then
# drops the quota to its minimum).
capped_goal() {
	fake_kdamond "$tmp/cap"
	sleep 30 &
	local pid=$!
	"$feed" --pid "$pid" --limit 64G --kdamond "$tmp/cap" --out "$tmp/cap.tsv" --interval 10ms
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	[ "$(cat "$tmp/cap/contexts/0/schemes/0/quotas/goals/0/current_value")" = 20000 ]
}
check "a process far under its limit gets the capped goal, 20000" capped_goal

gone_process() {
	fake_kdamond "$tmp/gone"
	sleep 0 &
	local pid=$!
	wait "$pid"
	"$feed" --pid "$pid" --limit 64M --kdamond "$tmp/gone" --out "$tmp/gone.tsv" --interval 10ms
	[ "$(wc -l <"$tmp/gone.tsv")" -eq 1 ] &&
		[ "$(cat "$tmp/gone/contexts/0/schemes/0/quotas/goals/0/current_value")" = 20000 ]
}
check "with the process gone it writes only the header and feeds nothing" gone_process
