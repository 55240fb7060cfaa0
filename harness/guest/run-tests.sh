#!/bin/sh
# Runs every guest test program in /rsslim/tests in name order, each a TAP 13
# stream (kselftest harness or tap.sh). A program that dies before reporting
# all the results it planned gets one "not ok" line for the missing ones, so
# a crash can never look like a pass.

cd /rsslim/tests || exit 1
echo "TAP version 13"
for t in *; do
	[ -x "$t" ] || continue
	echo "# selftest: $t"
	log=/tmp/tap.$t
	"./$t" 2>&1 | tee "$log"
	# busybox sh has no PIPESTATUS: the result lines are what counts.
	awk -v name="$t" '
		/^1\.\.[0-9]+/ { split($0, a, "\\.\\."); plan = a[2] + 0 }
		/^(not )?ok [0-9]/ { seen++ }
		END {
			if (plan == 0 && seen == 0) print "not ok 1 " name ": no TAP output"
			else if (seen < plan) printf "not ok %d %s: %d of %d results missing\n", seen + 1, name, plan - seen, plan
		}' "$log"
done
# Warnings and oopses that did not stop the kernel still fail the run.
# (A failed GFP_ATOMIC allocation under pressure also prints a call trace;
# it is not a bug and is not matched.)
if dmesg | grep -E -f /rsslim/splats.ere >/tmp/splat; then
	echo "not ok 1 kernel log clean"
	sed 's/^/# /' /tmp/splat | head -40
else
	echo "ok 1 kernel log clean"
fi
