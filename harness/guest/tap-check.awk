# Reads one test program's TAP output, followed by a line "# exit STATUS"
# that the runner adds, and prints a "not ok" line for each reason the
# stream cannot be trusted: no results at all, fewer or more results than
# its plan, no exit status, or a non-zero exit that no failing result
# explains (a script that died). Used by the host runner and in the guest
# (busybox awk), so it sticks to POSIX awk.
#
#   awk -v name=PROGRAM -f tap-check.awk OUTPUT
/^1\.\.[0-9]+/ {
	if (!planned) { plan = substr($0, 4) + 0; planned = 1 }
	next
}
/^not ok / { seen++; failed++; next }
/^ok / {
	seen++
	if ($0 ~ /# [Ss][Kk][Ii][Pp]/) skipped++
	next
}
/^# exit [0-9]+$/ { status = $3 + 0; have_status = 1 }
END {
	n = seen
	if (!planned && seen == 0)
		printf "not ok %d %s: no TAP output\n", ++n, name
	else if (!planned)
		printf "not ok %d %s: no plan line (1..N)\n", ++n, name
	else if (seen < plan)
		printf "not ok %d %s: %d of %d planned results missing\n", ++n, name, plan - seen, plan
	else if (seen > plan)
		printf "not ok %d %s: %d results for a plan of %d\n", ++n, name, seen, plan
	# kselftest's KSFT_SKIP (4) is a clean exit when everything was skipped.
	if (!have_status)
		printf "not ok %d %s: no exit status recorded\n", ++n, name
	else if (status != 0 && failed == 0 && !(status == 4 && seen > 0 && skipped == seen))
		printf "not ok %d %s: exit status %d with no failing result\n", ++n, name, status
}
