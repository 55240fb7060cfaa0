# shellcheck shell=bash
# Sourced by the host test scripts (not a test itself: not executable).
# tap_start N: the TAP 13 header and plan, counters, and a scratch folder
# $tmp removed at exit. result STATUS NAME: one result line. check NAME
# COMMAND...: run COMMAND (usually a function holding one test) and report it.
# shellcheck disable=SC2034 # n, failed and tmp are the callers'
tap_start() {
	n=0
	failed=0
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	echo "TAP version 13"
	echo "1..$1"
}

result() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=$((failed + 1)); fi
}

# skip NAME REASON: one skipped result.
skip() {
	n=$((n + 1))
	echo "ok $n $1 # SKIP $2"
}

# The command runs in an asynchronous subshell on purpose: bash ignores
# `set -e` inside anything run from an `if`, `||` or `&&`, so there a failing
# step in the middle of a test would go unnoticed. In a background job errexit
# holds, so any failing command fails the test, and the script goes on to
# report it. (Variables the command sets do not come back: report details
# with "# " lines.)
check() {
	local name=$1 rc=0
	shift
	(
		set -euo pipefail
		"$@"
	) &
	wait $! || rc=$?
	result "$rc" "$name"
}
