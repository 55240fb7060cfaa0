#!/bin/bash
# The host side of `make test`'s counting, kept apart so a test can run it on
# scripts that fail on purpose.
#
#   tap-runner.sh run LOG PROGRAM...  run each PROGRAM, print its TAP stream as it
#                                     comes, append it to LOG with a "not ok" line
#                                     for every way it can be untrustworthy (see
#                                     harness/guest/tap-check.awk)
#   tap-runner.sh summary LOG         list the "not ok" lines with the comments
#                                     just before each, then print
#                                     "N passed, N failed[, N skipped]";
#                                     exit 1 on any failure or when nothing passed
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

usage() {
	echo "usage: $0 run LOG PROGRAM... | summary LOG" >&2
	exit 2
}

run_one() {
	local log=$1 prog=$2 out rc=0
	out=$(mktemp)
	echo "# host: $prog" | tee -a "$log"
	{
		"$prog" 2>&1 || rc=$?
		echo "# exit $rc"
	} | tee "$out"
	# The checker's verdicts go to the screen and the log alike.
	cat "$out" >>"$log"
	awk -v name="$prog" -f "$top/harness/guest/tap-check.awk" "$out" | tee -a "$log"
	rm -f "$out"
}

# Result lines count at the start of a line only: nested TAP is indented,
# comment lines start with '#'.
summary() {
	local passed failed skipped
	read -r passed failed skipped < <(awk '
		/^ok .*# [Ss][Kk][Ii][Pp]/ { s++; next }
		/^ok / { p++ }
		/^not ok / { f++ }
		END { print p + 0, f + 0, s + 0 }' "$1")
	# The failures again, just above the count, each with the last comment
	# lines written before it (the test's own account of why): a CI that
	# shows only the tail of the output still names them and their reasons.
	if [ "$failed" -gt 0 ]; then
		echo "# failed:"
		awk -v keep=6 '
			/^(not )?ok / {
				if (/^not ok /) {
					print "#   " $0
					for (i = (n > keep ? n - keep : 0); i < n; i++)
						print "#       " substr(why[i % keep], 1, 200)
				}
				n = 0
				next
			}
			/^[[:space:]]*#/ { why[n % keep] = $0; n++ }' "$1"
	fi
	if [ "$skipped" -gt 0 ]; then
		echo "$passed passed, $failed failed, $skipped skipped"
	else
		echo "$passed passed, $failed failed"
	fi
	[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
}

[ $# -ge 2 ] || usage
case $1 in
run)
	log=$2
	shift 2
	for prog in "$@"; do run_one "$log" "$prog"; done
	;;
summary)
	[ $# -eq 2 ] || usage
	[ -f "$2" ] || { echo "error: no such TAP log: $2" >&2; exit 2; }
	summary "$2"
	;;
*) usage ;;
esac
