#!/bin/bash
# Host tests of sweeps: bench jobs run by GNU parallel, several at once on
# this machine (JOBS=2), on two "hosts" through parallel --sshlogin, and
# resumed after a Ctrl-C (RESUME=). The sweep is tests/fixtures/sweep-small:
# RSS_LIMIT x SWAP_KIND, four short guest runs of the active mode.
#
# The hosts are folders behind tests/fixtures/fake-ssh, an ssh stand-in
# through which parallel runs its commands and rsync, so that a job finds
# on its "host" only what the transfer put there (no ssh server needed).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/host/tap-lib.sh
. "tests/host/tap-lib.sh"
tap_start 3

sweep=tests/fixtures/sweep-small
variants="RSS_LIMIT-32M+SWAP_KIND-disk RSS_LIMIT-32M+SWAP_KIND-zram RSS_LIMIT-96M+SWAP_KIND-disk RSS_LIMIT-96M+SWAP_KIND-zram"

# sweep_bench RESULTS [VAR=value...]: the sweep into RESULTS; prints the run folder.
sweep_bench() {
	local results=$1
	shift
	env RESULTS_DIR="$results" SWEEP=$sweep "$@" harness/bench.sh >"$tmp/bench.out" 2>"$tmp/bench.err" ||
		{ sed 's/^/# /' "$tmp/bench.err" >&2; return 1; }
	readlink -f "$results/latest"
}

# shape RUN: what a run is made of, not what it measured: its result
# folders and the files in each (the guest's boot logs aside).
shape() {
	(cd "$1" && find . -path '*/boot' -prune -o -type f -print | grep -v '^\./[^/]*$' | sort)
}

# median_rss_kb DIR ROLE: ROLE's median resident size over the run's samples.
median_rss_kb() {
	awk -F'\t' -v role="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["role"] == role { print $c["rss_kb"] }' "$1/samples.tsv" |
		sort -n | awk '{ v[NR] = $1 } END { print v[int(NR / 2) + 1] + 0 }'
}

# Every variant ran and was summarised as its own row; the zram ones swapped
# to zram (the summary refuses a guest whose swap differs from the job's);
# the limit axis reached the guest, and the active mode held the hog lower
# under 32 MiB than under 96 MiB (medians: about 47 and 92 MiB when written);
# the two guests at once were pinned to different CPUs.
local_jobs() {
	local run v rows kind small big limit
	run=$(sweep_bench "$tmp/local" JOBS=2)
	echo "$run" >"$tmp/local.run"
	rows=$(jq -r '[.scenarios[] | .variant] | sort | join(" ")' "$run/summary.json")
	[ "$rows" = "$variants" ] || { echo "# summary rows: $rows"; return 1; }
	for v in $variants; do
		grep -qx "knob swap_kind=${v#*SWAP_KIND-}" "$run/hog-rsslimit-m2+$v.mglru/guest-settings.txt"
		limit=${v#RSS_LIMIT-}
		grep -q " rss_limit=${limit%%+*} " \
			"$run/hog-rsslimit-m2+$v.mglru/guest-settings.txt"
	done
	jq -e '[.scenarios[] | select(.variant | endswith("zram")) | .zram_ratio > 1] == [true, true]' \
		"$run/summary.json" >/dev/null
	for kind in disk zram; do
		small=$(median_rss_kb "$run/hog-rsslimit-m2+RSS_LIMIT-32M+SWAP_KIND-$kind.mglru" hog)
		big=$(median_rss_kb "$run/hog-rsslimit-m2+RSS_LIMIT-96M+SWAP_KIND-$kind.mglru" hog)
		echo "# hog median RSS on $kind swap: $small kB under 32M, $big kB under 96M"
		[ "$small" -lt "$big" ]
	done
	jq -e '.jobs == 2 and ([.job_hosts[] | .pinned] | all) and
		([.job_hosts[] | .cpus] | unique | length) == ([.job_hosts[] | .slot] | unique | length)' \
		"$run/meta.json" >/dev/null
}
check "a sweep of 2 axes runs every variant, 2 guests at once pinned apart, a summary row each" local_jobs

# The same sweep on two hosts through parallel --sshlogin: each job ran
# in a host's own work dir from the files parallel sent, and the results
# came back in the same shape as the local run's.
two_hosts() {
	local run local_run hosts
	export FAKE_HOSTS=$tmp/hosts
	mkdir -p "$FAKE_HOSTS"
	run=$(sweep_bench "$tmp/remote" HOSTS=1/host-a,1/host-b PARALLEL_SSH="$PWD/tests/fixtures/fake-ssh")
	local_run=$(cat "$tmp/local.run")
	diff <(shape "$local_run") <(shape "$run") | sed 's/^/# /'
	[ "$(shape "$local_run")" = "$(shape "$run")" ]
	hosts=$(jq -r '[.job_hosts[] | .work_dir] | unique | join(" ")' "$run/meta.json")
	echo "# work dirs: $hosts"
	[ "$hosts" = "$FAKE_HOSTS/host-a/rsslim-bench $FAKE_HOSTS/host-b/rsslim-bench" ]
	# The kernel reached the hosts as a base file, not through a shared folder.
	grep -q 'rsync --server' "$FAKE_HOSTS/commands.log"
	jq -e '[.scenarios[] | .runs] == [1, 1, 1, 1]' "$run/summary.json" >/dev/null
}
check "the sweep on two hosts through parallel --sshlogin comes back in the local run's shape" two_hosts

# Ctrl-C in the second job keeps the first; RESUME= runs only the jobs not
# finished, and the run is then complete, with the first job untouched.
resume() {
	local bench rc=0 partial id
	local first=hog-rsslimit-m2+RSS_LIMIT-32M+SWAP_KIND-disk.mglru
	local second=hog-rsslimit-m2+RSS_LIMIT-32M+SWAP_KIND-zram.mglru
	set -m
	RESULTS_DIR=$tmp/resume SWEEP=$sweep env --default-signal=INT harness/bench.sh \
		>"$tmp/int.out" 2>"$tmp/int.err" &
	bench=$!
	set +m
	for _ in $(seq 1 1800); do
		[ -z "$(find "$tmp/resume" -path "*.partial/$second/boot/console.log" 2>/dev/null)" ] || break
		sleep 0.1
	done
	sleep 2
	kill -INT -- "-$bench"
	wait "$bench" || rc=$?
	[ "$rc" -eq 130 ] || { echo "# bench exit $rc"; sed 's/^/# /' "$tmp/int.err"; return 1; }
	partial=$(find "$tmp/resume" -maxdepth 1 -name '*.partial')
	[ -f "$partial/INTERRUPTED" ] && [ -f "$partial/$first/host.json" ] && [ -f "$partial/$second/INTERRUPTED" ]
	cp "$partial/$first/host.json" "$tmp/first-host.json"
	id=$(basename "$partial" .partial)
	RESULTS_DIR=$tmp/resume RESUME=$id harness/bench.sh >"$tmp/resume.out" 2>"$tmp/resume.err" ||
		{ sed 's/^/# /' "$tmp/resume.err"; return 1; }
	[ -d "$tmp/resume/$id" ] && [ ! -e "$partial" ]
	cmp "$tmp/first-host.json" "$tmp/resume/$id/$first/host.json"
	# Three jobs started by the resume, none of them the first one again.
	[ "$(grep -c ': started on' "$tmp/resume.err")" -eq 3 ]
	if grep -qF "$first: started" "$tmp/resume.err"; then return 1; fi
	jq -e '[.scenarios[] | .runs] == [1, 1, 1, 1] and (.incomplete | length) == 0' \
		"$tmp/resume/$id/summary.json" >/dev/null
	# A finished run cannot be resumed; a bad id is refused.
	if RESULTS_DIR=$tmp/resume RESUME=$id harness/bench.sh >/dev/null 2>&1; then return 1; fi
	if RESULTS_DIR=$tmp/resume RESUME=nonsense harness/bench.sh >/dev/null 2>&1; then return 1; fi
}
check "Ctrl-C keeps the finished jobs; RESUME= runs only the rest and completes the run" resume

[ "$failed" -eq 0 ]
