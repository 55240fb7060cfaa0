#!/bin/bash
# Host tests of rsstrimd's command line: bad arguments and missing
# privileges get one line and exit 2; a dry run scans and trims nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=build/bin/rsstrimd
# shellcheck source=tests/host/tap-lib.sh
. "tests/host/tap-lib.sh"
tap_start 5

# start_limited: a root-owned sleeper under a 4 KiB RSS limit in $victim, once the limit is set.
start_limited() {
	prlimit --rss=4096:unlimited sleep 30 &
	victim=$!
	for _ in $(seq 50); do
		grep -q '^Max resident set  *4096 ' "/proc/$victim/limits" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "# the 4 KiB limit never showed in /proc/$victim/limits"
	return 1
}
# (Under timeout: rsstrimd taking a bad value would run as a daemon forever.)
exit2_one_line() {
	local rc=0
	timeout 10 "$@" >/dev/null 2>"$tmp/err" || rc=$?
	if [ "$rc" -ne 2 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
		echo "# '$*': exit $rc"
		return 1
	fi
}

bad_arguments() {
	local args
	# (17179869185G wrapped to 1 GiB in the shift, and inf, nan and 1e300
	# were taken as times or percentages, before they were refused.)
	for args in "--mode soft" "--interval 1ms" "--batch 0" "--psi -3" "--min-available lots" \
		"--bogus" "extra" "--min-available 17179869185G" "--batch 16777216G" "--interval inf" \
		"--rescan nan" "--rescan 1e300" "--psi nan" "--psi inf"; do
		# shellcheck disable=SC2086 # each case is a word list
		exit2_one_line "$bin" $args
	done
}
check "bad arguments: one line and exit 2" bad_arguments

without_privileges() {
	exit2_one_line setpriv --reuid=65534 --regid=65534 --clear-groups "$bin" --once
	grep -q "needs root, or CAP_SYS_NICE" "$tmp/err"
}
if [ "$(id -u)" -eq 0 ]; then
	check "without root or CAP_SYS_NICE: one clear line and exit 2" without_privileges
else
	skip "without root or CAP_SYS_NICE" "the test needs root to drop privileges"
fi

# A process with a tiny limit is found; --dry-run logs it but trims nothing.
dry_run() {
	start_limited
	"$bin" --once --dry-run --mode hard >"$tmp/log"
	kill "$victim"
	awk -F'\t' -v pid="$victim" '$2 == pid { found = 1 } END { exit !found }' "$tmp/log"
	grep -qE '^# summary trims=[1-9][0-9]* .*cpu_ms=[0-9]+ user_ms=[0-9]+ sys_ms=[0-9]+ ' "$tmp/log"
}
check "--once --dry-run finds an over-limit process and reports a summary" dry_run

# --stop: the process is stopped only while it is trimmed, and runs again.
stop_and_resume() {
	local state
	start_limited
	"$bin" --once --mode hard --stop >"$tmp/log" 2>&1
	sleep 0.1
	state=$(awk '{ sub(/.*\) /, ""); print substr($0, 1, 1) }' "/proc/$victim/stat")
	kill "$victim"
	echo "# state after the trim: $state"
	awk -F'\t' -v pid="$victim" '$2 == pid { found = 1 } END { exit !found }' "$tmp/log"
	[ "$state" = S ]
}
if [ "$(id -u)" -eq 0 ]; then
	check "--stop: trimmed, and running again afterwards" stop_and_resume
else
	skip "--stop" "the test needs root to trim"
fi

# Another user's process, seen by an unprivileged rsstrimd with capabilities:
# its limit comes from /proc/PID/limits (prlimit() needs CAP_SYS_RESOURCE);
# with CAP_SYS_PTRACE it is trimmed (dry run), without it left alone with one line.
other_users_process() {
	local as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	start_limited
	"${as_nobody[@]}" --inh-caps=+sys_nice,+sys_ptrace --ambient-caps=+sys_nice,+sys_ptrace \
		"$bin" --once --dry-run --mode hard >"$tmp/log" 2>&1
	awk -F'\t' -v pid="$victim" '$2 == pid { found = 1 } END { exit !found }' "$tmp/log" ||
		{ echo "# with CAP_SYS_PTRACE: pid $victim not trimmed"; return 1; }
	"${as_nobody[@]}" --inh-caps=+sys_nice --ambient-caps=+sys_nice \
		"$bin" --once --mode hard >"$tmp/log" 2>"$tmp/err"
	kill "$victim"
	awk -F'\t' -v pid="$victim" '$2 == pid { found = 1 } END { exit found }' "$tmp/log" ||
		{ echo "# without CAP_SYS_PTRACE: pid $victim was trimmed"; return 1; }
	[ "$(grep -c "memory map of $victim (sleep).*CAP_SYS_PTRACE" "$tmp/err")" -eq 1 ] ||
		{ sed 's/^/# /' "$tmp/err"; return 1; }
}
if [ "$(id -u)" -eq 0 ]; then
	check "another user's process: limit found without CAP_SYS_RESOURCE, trimmed only with ptrace access" \
		other_users_process
else
	skip "another user's process" "the test needs root to drop privileges"
fi
[ "$failed" -eq 0 ]
