# shellcheck shell=bash
# Sourced by the host test scripts (not a test itself: not executable).
# tap_start N: the TAP 13 header and plan, counters, and a scratch folder
# $tmp removed at exit. result STATUS NAME: one result line.
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
