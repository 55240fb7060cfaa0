#!/bin/sh
# TAP 13 helpers for guest shell tests: source it, call plan N, then
# ok/fail/check/skip for each result.
# shellcheck source=harness/guest/guest-lib.sh
. /rsslim/guest-lib.sh
tap_n=0
plan() { echo "1..$1"; }
ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n $1"; }
fail() {
	tap_n=$((tap_n + 1))
	echo "not ok $tap_n $1"
	shift
	for line in "$@"; do echo "# $line"; done
}
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n $1 # SKIP $2"; }
# check NAME CMD...: one result from a command's exit status.
check() {
	name=$1
	shift
	if "$@" >/tmp/tap.out 2>&1; then ok "$name"; else fail "$name" "$(tail -3 /tmp/tap.out)"; fi
}
