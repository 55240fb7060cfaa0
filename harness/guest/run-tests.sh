#!/bin/sh
# Runs every guest test program in /rsslim/tests in name order, each a TAP 13
# stream (kselftest harness or tap.sh). A program that dies before reporting
# all the results it planned, reports more, or exits non-zero without a
# failing result gets a "not ok" line (tap-check.awk), so a crash can never
# look like a pass.
#
# rsslim.tests=A,B on the kernel command line runs only those programs (the
# stock kernel runs the ones that need nothing of the series), and
# rsslim.test_case=NAME[,NAME] only the kselftest cases of those names in
# them (-t: a case on both LRUs; the 16-vCPU boot of `make test`).

# shellcheck source=harness/guest/guest-lib.sh
. /rsslim/guest-lib.sh
only=$(cmdline_value rsslim.tests "")
case_args=
for c in $(cmdline_value rsslim.test_case "" | tr , ' '); do
	case_args="$case_args -t $c"
done

cd /rsslim/tests || exit 1
echo "TAP version 13"
for t in *; do
	[ -x "$t" ] || continue
	case ",$only," in
	,,| *",$t,"*) ;;
	*) continue ;;
	esac
	echo "# selftest: $t"
	log=/tmp/tap.$t
	# busybox sh has no PIPESTATUS: the exit status travels in the stream.
	{
		rc=0
		# shellcheck disable=SC2086 # $case_args: a word per option
		case $t in
		*.sh) "./$t" 2>&1 || rc=$? ;;
		*) "./$t" $case_args 2>&1 || rc=$? ;;
		esac
		echo "# exit $rc"
	} | tee "$log"
	awk -v name="$t" -f /rsslim/tap-check.awk "$log"
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
