#!/bin/bash
# Host tests of rsstrimd: bad arguments and missing privileges get one line
# and exit 2; a dry run scans and trims nothing; a process it holds stopped
# is resumed whatever happens to rsstrimd; a range the kernel refuses does
# not switch trimming off; a trim that cannot help backs off.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=build/bin/rsstrimd
# shellcheck source=tests/host/tap-lib.sh
. "tests/host/tap-lib.sh"
tap_start 13

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
		"--rescan nan" "--rescan 1e300" "--psi nan" "--psi inf" "--max-stop 0" \
		"--max-stop 2h" "--exclude averyveryverylongname" "--exclude a/b" "--state-file="; do
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
	"$bin" --once --mode hard --stop --state-file "$tmp/stopped" >"$tmp/log" 2>&1
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

# The unit file `make install-rsstrimd` installs passes systemd's own check
# (with the installed binary's path in ExecStart).
unit_file() {
	make --no-print-directory install-rsstrimd PREFIX="$tmp/prefix" UNITDIR="$tmp/units" >/dev/null
	[ -x "$tmp/prefix/sbin/rsstrimd" ]
	grep -qx "ExecStart=$tmp/prefix/sbin/rsstrimd --stop --state-file /run/rsstrimd/stopped" \
		"$tmp/units/rsstrimd.service"
	systemd-analyze verify "$tmp/units/rsstrimd.service"
}
check "make install-rsstrimd: binary and a unit file systemd-analyze verify accepts" unit_file

# run_without_syscall NR PROGRAM ARGS...: PROGRAM with system call NR failing
# with ENOSYS (a seccomp filter), as on a kernel that lacks it; at most 10 s.
run_without_syscall() {
	timeout 10 python3 -c '
import ctypes, os, struct, sys
nr = int(sys.argv[1])
insns = [(0x20, 0, 0, 0),                      # load the system call number
         (0x15, 0, 1, nr),                     # is it NR?
         (0x06, 0, 0, 0x00050000 | 38),        # then fail it with ENOSYS
         (0x06, 0, 0, 0x7fff0000)]             # else allow it
code = b"".join(struct.pack("HBBI", *i) for i in insns)
buf = ctypes.create_string_buffer(code, len(code))
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
prog = Prog(len(insns), ctypes.addressof(buf))
libc = ctypes.CDLL(None, use_errno=True)
ul = ctypes.c_ulong
if libc.prctl(ul(38), ul(1), ul(0), ul(0), ul(0)) or \
   libc.prctl(ul(22), ul(2), ctypes.byref(prog), ul(0), ul(0)):
    sys.exit("seccomp: " + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[2], sys.argv[2:])
' "$@"
}

# (Before, without pidfd_open() it ran and silently trimmed nothing.)
kernel_without_support() {
	local nr what rc
	for nr in 434 440; do # x86_64 pidfd_open, process_madvise
		rc=0
		run_without_syscall "$nr" "$PWD/$bin" --mode hard >/dev/null 2>"$tmp/err" || rc=$?
		what=$(cat "$tmp/err")
		echo "# without system call $nr: exit $rc, '$what'"
		[ "$rc" -eq 3 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ]
		case $nr in
		434) grep -q "cannot do pidfd_open() (Linux 5.3): Function not implemented" "$tmp/err" ;;
		440) grep -q "cannot do process_madvise(MADV_PAGEOUT) (Linux 5.10): Function not implemented" "$tmp/err" ;;
		esac
	done
}
if [ "$(uname -m)" = x86_64 ]; then
	check "a kernel without pidfd_open() or process_madvise(): one clear line and exit 3" kernel_without_support
else
	skip "a kernel without pidfd_open() or process_madvise()" "the system call numbers are x86_64's"
fi

# The tests below trim for real and need root (CAP_SYS_NICE, CAP_IPC_LOCK).
if [ "$(id -u)" -ne 0 ]; then
	for name in "SIGKILL in mid-trim" "SIGHUP and SIGSEGV in mid-trim" "--max-stop" \
		"a range the kernel refuses" "a trim that cannot help" "--exclude"; do
		skip "$name" "the test needs root to trim"
	done
	[ "$failed" -eq 0 ]
	exit
fi

# A python process under a 4 KiB RSS limit, in $victim, that maps what its
# arguments ask for and sleeps: "reserve" 16 GiB of untouched private memory
# (a trim of it in 4 KiB batches takes a minute: rsstrimd can be caught in
# the middle), or "mlock" 8 MiB of locked memory (MADV_PAGEOUT refuses it).
start_python_victim() {
	prlimit --rss=4096:unlimited python3 -c '
import ctypes, mmap, sys, time
flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
if sys.argv[1] == "reserve":
    keep = mmap.mmap(-1, 16 << 30, flags=flags | 0x4000)  # MAP_NORESERVE
else:
    keep = mmap.mmap(-1, 8 << 20, flags=flags)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(keep))
    if ctypes.CDLL(None, use_errno=True).mlock(ctypes.c_void_p(addr), ctypes.c_size_t(8 << 20)):
        sys.exit("mlock failed")
print("ready", flush=True)
time.sleep(120)
' "$1" >"$tmp/victim.out" &
	victim=$!
	for _ in $(seq 100); do
		grep -q ready "$tmp/victim.out" && return 0
		sleep 0.1
	done
	echo "# the python victim never got ready"
	return 1
}

state_of() { awk '{ sub(/.*\) /, ""); print substr($0, 1, 1) }' "/proc/$1/stat"; }

# wait_held: until rsstrimd ($trimd) holds $victim stopped and says so in the state file.
wait_held() {
	for _ in $(seq 200); do
		[ "$(state_of "$victim")" = T ] && [ -s "$tmp/stopped" ] && return 0
		kill -0 "$trimd" 2>/dev/null || { echo "# rsstrimd exited before it stopped $victim"; return 1; }
		sleep 0.05
	done
	echo "# $victim was never held stopped"
	return 1
}

start_slow_trim() {
	start_python_victim reserve
	"$bin" --mode hard --stop --batch 4K --max-stop 600s --state-file "$tmp/stopped" \
		>"$tmp/log" 2>"$tmp/err" &
	trimd=$!
	wait_held
}

# (Before the state file, a SIGKILL left the process stopped for good.)
sigkill_in_mid_trim() {
	start_slow_trim
	kill -KILL "$trimd"
	wait "$trimd" || true
	[ "$(state_of "$victim")" = T ] || { echo "# not stopped after the SIGKILL: the test proves nothing"; return 1; }
	"$bin" --once --dry-run --state-file "$tmp/stopped" >/dev/null 2>"$tmp/err2"
	sleep 0.1
	local state
	state=$(state_of "$victim")
	kill -CONT "$victim"
	kill "$victim"
	echo "# after the restart: state $state; $(cat "$tmp/err2")"
	[ "$state" != T ]
	grep -q "resumed process $victim (python3), left stopped by an earlier rsstrimd" "$tmp/err2"
	[ ! -e "$tmp/stopped" ]
}
check "SIGKILL in mid-trim: the next start resumes the process held stopped" sigkill_in_mid_trim

# (Before, SIGHUP killed rsstrimd with the process stopped.)
fatal_signals_in_mid_trim() {
	local sig state rc
	ulimit -c 0 # no core file of the SIGSEGV in the checkout
	for sig in HUP SEGV; do
		start_slow_trim
		kill -"$sig" "$trimd"
		rc=0
		wait "$trimd" || rc=$?
		sleep 0.1
		state=$(state_of "$victim")
		kill -CONT "$victim"
		kill "$victim"
		echo "# SIG$sig: rsstrimd exit $rc, the process then in state $state"
		[ "$state" != T ]
	done
}
check "SIGHUP and SIGSEGV in mid-trim: the process is resumed" fatal_signals_in_mid_trim

max_stop() {
	start_python_victim reserve
	timeout 30 "$bin" --once --mode hard --stop --batch 4K --max-stop 300ms \
		--state-file "$tmp/stopped" >"$tmp/log"
	local state
	state=$(state_of "$victim")
	kill "$victim"
	grep '^# summary' "$tmp/log"
	[ "$state" != T ]
	grep -qE '^# summary .* stops=1 stops_cut=1 ' "$tmp/log"
	awk '/^# summary/ { for (i = 2; i <= NF; i++) if ($i ~ /^wall_ms=/) { sub(/wall_ms=/, "", $i); exit !($i + 0 < 10000) } }' "$tmp/log"
}
check "--max-stop: a trim that would hold a process stopped longer is cut short" max_stop

# pages_asked and ranges_skipped of $victim's trims in $tmp/log.
victim_trims() { awk -F'\t' -v pid="$victim" '$2 == pid { n++; asked += $7; skipped += $8 } END { print n + 0, asked + 0, skipped + 0 }' "$tmp/log"; }

# (Before, the EINVAL of the locked range switched trimming off for every
# process: "this kernel lacks process_madvise(MADV_PAGEOUT)".)
refused_range() {
	local trims asked skipped
	start_python_victim mlock
	"$bin" --once --mode hard --state-file "$tmp/stopped" >"$tmp/log" 2>"$tmp/err"
	kill "$victim"
	read -r trims asked skipped < <(victim_trims)
	echo "# $trims trims, $asked pages asked, $skipped ranges skipped; $(grep '^# summary' "$tmp/log")"
	[ ! -s "$tmp/err" ] || { sed 's/^/# stderr: /' "$tmp/err"; return 1; }
	[ "$trims" -eq 1 ] && [ "$asked" -gt 0 ] && [ "$skipped" -ge 1 ]
	grep -qE '^# summary .* ranges_skipped=[1-9]' "$tmp/log"
}
check "a range the kernel refuses (mlocked) is skipped and counted; the rest is trimmed" refused_range

# Nothing the victim has can go (its 8 MiB are locked, and this host has no
# swap or its other pages go at the first trim): checked every 10 ms for
# 3 s, it is trimmed at 0, 0.5, 1.5 s (and maybe once more), not 300 times.
futile_trims_back_off() {
	local trims asked skipped
	start_python_victim mlock
	timeout -s TERM 3 "$bin" --mode hard --interval 10ms --state-file "$tmp/stopped" \
		>"$tmp/log" 2>"$tmp/err" || [ $? -eq 124 ]
	kill "$victim"
	read -r trims asked skipped < <(victim_trims)
	echo "# $trims trims in 3 s; $(grep '^# summary' "$tmp/log")"
	[ "$trims" -ge 2 ] && [ "$trims" -le 6 ]
	grep -qE '^# summary .* futile=[1-9]' "$tmp/log"
}
check "a trim that cannot help is retried after 0.5, 1, 2 s, not at once" futile_trims_back_off

exclude() {
	start_limited
	"$bin" --once --dry-run --mode hard --exclude sleep --exclude other >"$tmp/log"
	"$bin" --once --dry-run --mode hard --exclude other >"$tmp/log2"
	kill "$victim"
	awk -F'\t' -v pid="$victim" '$2 == pid { found = 1 } END { exit found }' "$tmp/log"
	awk -F'\t' -v pid="$victim" '$2 == pid { found = 1 } END { exit !found }' "$tmp/log2"
}
check "--exclude leaves processes of that name alone, and only those" exclude
[ "$failed" -eq 0 ]
