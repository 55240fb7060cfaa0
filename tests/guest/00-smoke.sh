#!/bin/sh
# Smoke tests: the guest is the one we asked for, before anything is measured.
# shellcheck source=harness/guest/tap.sh
. /rsslim/tap.sh
plan 10

want_release=$(cmdline_value rsslim.release "")
host_release=$(cmdline_value rsslim.host_release "")
got_release=$(uname -r)
if [ -n "$want_release" ] && [ "$got_release" = "$want_release" ] && [ "$got_release" != "$host_release" ]; then
	ok "kernel release is ours ($got_release)"
else
	fail "kernel release is ours" "got '$got_release', built '$want_release', host '$host_release'"
fi

want_kib=$(($(cmdline_value rsslim.swap_mib 0) * 1024))
got_kib=$(awk 'NR > 1 { s += $3 } END { print s + 0 }' /proc/swaps)
# mkswap keeps one page for its header.
if [ "$want_kib" -gt 0 ] && [ "$got_kib" -ge $((want_kib - 64)) ] && [ "$got_kib" -le "$want_kib" ]; then
	ok "swap active and sized as asked ($got_kib KiB)"
else
	fail "swap active and sized as asked" "asked $want_kib KiB, /proc/swaps has $got_kib KiB"
fi

limits=$(prlimit --rss=67108864:unlimited sh -c 'grep "Max resident set" /proc/self/limits')
case $limits in
*" 67108864 "*unlimited*) ok "prlimit --rss sets the limit" ;;
*) fail "prlimit --rss sets the limit" "got: $limits" ;;
esac

sleep 30 &
sleeper=$!
prlimit --pid "$sleeper" --rss=33554432:67108864
readback=$(prlimit --pid "$sleeper" --rss --raw --noheadings -o SOFT,HARD)
kill "$sleeper"
if [ "$readback" = "33554432 67108864" ]; then
	ok "prlimit --pid reads back the limit it set"
else
	fail "prlimit --pid reads back the limit it set" "got: $readback"
fi

check "cgroup v2 memory controller present" grep -qw memory /sys/fs/cgroup/cgroup.controllers
check "MGLRU available" test -w /sys/kernel/mm/lru_gen/enabled
check "tracefs mounted" test -d /sys/kernel/tracing/events

check "scratch disk holds a block-backed file system" sh -c 'grep -q "^/dev/vdc /scratch ext2" /proc/mounts'
if /rsslim/bin/hog --mode file --file /scratch/smoke.data --size 8M --passes 2 >/tmp/hog-file.out 2>&1 &&
	grep -q "stopped=passes" /tmp/hog-file.out && [ ! -e /scratch/smoke.data ]; then
	ok "hog --mode file runs on the scratch disk and removes its file"
else
	fail "hog --mode file runs on the scratch disk and removes its file" "$(tail -2 /tmp/hog-file.out)"
fi

# The parts of the series the kernel shows are the ones it was booted for
# (rsslim.parts): the guest tests skip those it lacks, and a part missing
# by mistake must fail here, not be skipped.
parts_shown=
[ ! -e /proc/sys/vm/rss_limit_enforce ] || parts_shown=1
! grep -q '^rss_limit_trim ' /proc/vmstat || parts_shown=$parts_shown,2
[ ! -e /proc/sys/vm/swap_token ] || parts_shown=$parts_shown,3
parts_shown=${parts_shown#,}
parts_expected=
for n in 1 2 3; do
	! has_part "$n" || parts_expected=$parts_expected,$n
done
parts_expected=${parts_expected#,}
if [ "$parts_shown" = "$parts_expected" ]; then
	ok "the kernel has the parts of the series it was booted for (${parts_shown:-none})"
else
	fail "the kernel has the parts of the series it was booted for" \
		"rsslim.parts=$(cmdline_value rsslim.parts all): expected '${parts_expected:-none}', the kernel shows '${parts_shown:-none}'"
fi
