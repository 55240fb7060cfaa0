#!/bin/bash
# Host tests of the real-program scenarios (IMAGE=apps): redis-server with
# redis-load as the victim, GNU sort as the hog, each one short bench run of
# the patched kernel with its knobs off (this test must not build the stock
# kernel).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/host/tap-lib.sh
. "tests/host/tap-lib.sh"
tap_start 3

# bench SCENARIOS: one short run of each, in $tmp/results; prints the run folder.
bench() {
	RESULTS_DIR=$tmp/results SCENARIOS=$1 LRU=mglru REPEAT=1 DURATION=6 ORDER=listed \
		harness/bench.sh >"$tmp/bench.out" 2>"$tmp/bench.err" ||
		{ sed 's/^/# /' "$tmp/bench.err" >&2; return 1; }
	readlink -f "$tmp/results/latest"
}

# max_rss_kb DIR ROLE: the most ROLE had resident in the run's samples.
max_rss_kb() {
	awk -F'\t' -v role="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["role"] == role && $c["rss_kb"] > max { max = $c["rss_kb"] }
		END { print max + 0 }' "$1/samples.tsv"
}

# The server was filled with 64 MiB of values before the hog started (the
# sampler saw it hold more than that), every request was answered with
# the value stored (redis-load exits 1 otherwise), the requests ran at the
# rate asked (600 due in 6 s) and the summary has the server's figures.
redis_victim() {
	local run dir
	run=$(bench redis-off)
	dir=$run/redis-off.mglru
	grep -qx 'load_exit [0-9]* 0' "$dir/guest-settings.txt"
	grep -q '^# ready keys=67108$' "$dir/victim.tsv"
	echo "# server max RSS $(max_rss_kb "$dir" victim) kB"
	[ "$(max_rss_kb "$dir" victim)" -gt $((64 * 1024)) ]
	jq -e '.scenarios[] | select(.scenario == "redis-off") |
		.victim_rounds == 600 and .victim_p999_us > 0 and .victim_majflt >= 0 and
		.victim_rss_kept_pct > 0' "$run/summary.json" >/dev/null
}
check "redis-server in the guest: filled, served at a fixed rate, summarised as the victim" redis_victim

# GNU sort reads RLIMIT_RSS: with no -S it stays under the sort rows'
# 128 MiB RSS limit by itself, even on a kernel that ignores the limit, and
# sorts the whole input (in runs spilled to the disk); with -S 384M it holds
# far more.
sort_hog() {
	local run self told
	run=$(bench "sort-selflimit sort-off")
	self=$(max_rss_kb "$run/sort-selflimit.mglru" hog)
	told=$(max_rss_kb "$run/sort-off.mglru" hog)
	echo "# GNU sort's max RSS under a 128 MiB RSS limit: $self kB with no -S, $told kB with -S 384M"
	[ "$self" -gt 0 ] && [ "$self" -le $((128 * 1024)) ] && [ "$told" -gt $((128 * 1024)) ]
	jq -e '[.scenarios[] | select(.scenario | startswith("sort-")) | .hog_done_s > 0] ==
		[true, true]' "$run/summary.json" >/dev/null
}
check "GNU sort in the guest sizes its buffer under RLIMIT_RSS itself, and finishes its fixed input" sort_hog

# A sort that fails (here: room for its 129 MiB input but not for its
# temporary files) makes the run incomplete with sort's own message, not a
# fast-looking result.
sort_failure() {
	local rc=0 run
	SCRATCH_DISK_MIB=160 RESULTS_DIR=$tmp/fail SCENARIOS=sort-selflimit LRU=mglru REPEAT=1 \
		DURATION=6 harness/bench.sh >"$tmp/fail.out" 2>"$tmp/fail.err" || rc=$?
	[ "$rc" -ne 0 ]
	run=$(readlink -f "$tmp/fail/latest")
	sed 's/^/# INCOMPLETE: /' "$run/sort-selflimit.mglru/INCOMPLETE"
	grep -q '^incomplete: sort failed (exit 2): .*No space left on device' \
		"$run/sort-selflimit.mglru/INCOMPLETE"
}
check "a GNU sort that fails marks the run incomplete with its message" sort_failure
[ "$failed" -eq 0 ]
