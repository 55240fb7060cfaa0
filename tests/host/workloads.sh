#!/bin/bash
# Host tests of the workload programs: bad input is refused with one line
# and exit 2, leaving nothing behind; short runs print well-formed TSV.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=build/bin
# shellcheck source=tests/host/tap-lib.sh
. "tests/host/tap-lib.sh"
tap_start 16
# rejects PROGRAM ARGS...: exit 2 and exactly one line on stderr.
rejects() {
	local rc=0 lines
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	lines=$(wc -l <"$tmp/err")
	if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ]; then
		echo "# '$*' gave exit $rc and $lines stderr lines"
		return 1
	fi
}
all_rejected() {
	local prog=$1 arg
	shift
	for arg in "$@"; do
		# shellcheck disable=SC2086 # each case is a word list
		rejects "$bin/$prog" $arg || return 1
	done
}

hog_rejects_bad_input() {
	all_rejected hog "--size 0" "--size 12Q" "--size -5M" "--size 99999999999T" "--bogus" \
		"--size" "--mode disk" "--pattern zigzag" "--duration 0" "--passes -1" "--rate 0" "extra" \
		"--pattern sort --rate 5" "--random-pct 101" "--random-pct -1" "--random-pct x" \
		"--pattern sort --random-pct 10"
}
check "hog refuses bad input with one line and exit 2" hog_rejects_bad_input

victim_rejects_bad_input() {
	all_rejected victim "--wss 0" "--wss 12Q" "--wss -5M" "--wss 99999999999T" "--bogus" \
		"--mode busy" "--period 0" "--touch 0" "--duration 0" "--busy 1ms" "--away soon" \
		"--mode idle --away 1s"
}
check "victim refuses bad input with one line and exit 2" victim_rejects_bad_input

redis_load_rejects_bad_input() {
	all_rejected redis-load "--server-pid 1" "--socket $tmp/s" "--socket $tmp/s --server-pid 0" \
		"--socket $tmp/s --server-pid 1 --value 0" "--socket $tmp/s --server-pid 1 --data 1K --value 2K" \
		"--socket $tmp/s --server-pid 1 --period 10us" "--socket $tmp/s --server-pid 1 --duration 0" \
		"--socket $tmp/s --server-pid 1 --bogus" "--socket $tmp/s --server-pid 1 extra"
}
check "redis-load refuses bad input with one line and exit 2" redis_load_rejects_bad_input

# start_redis: a redis-server on a unix socket in $tmp (Debian's binary is
# redis-check-rdb, which acts as the server under that name); sets redis_pid.
start_redis() {
	ln -sf /usr/bin/redis-check-rdb "$tmp/redis-server"
	"$tmp/redis-server" --port 0 --unixsocket "$tmp/redis.sock" --save '' --appendonly no \
		--dir "$tmp" --logfile "$tmp/redis.log" &
	redis_pid=$!
}

# Against a real server: every key is stored (the server's key count), the
# requests are answered with the value stored (else redis-load exits 1),
# and a 300 ms stall of the server shows in p99 and max, measured from when
# each request was due, while the time the server took to answer a request
# it had received stays short.
redis_load_stall() {
	local load rc=0
	start_redis
	"$bin/redis-load" --socket "$tmp/redis.sock" --server-pid "$redis_pid" --data 2M --value 1000 \
		--period 5ms --duration 1.5 --log "$tmp/redis-rounds.tsv" >"$tmp/redis.out" &
	load=$!
	until grep -q '^# ready keys=2097$' "$tmp/redis.out" 2>/dev/null; do
		kill -0 "$load" || { cat "$tmp/redis.out"; return 1; }
		sleep 0.05
	done
	sleep 0.4
	kill -STOP "$redis_pid"
	sleep 0.3
	kill -CONT "$redis_pid"
	wait "$load" || rc=$?
	kill "$redis_pid"
	wait "$redis_pid" 2>/dev/null || true
	[ "$rc" -eq 0 ] || return 1
	awk -F'\t' '/^#/ { next }
		++rows == 2 { print "# requests " $1 ", missed " $2 ", p99 " $5 " us, max " $7 " us, service max " $11 " us"
			ok = $1 >= 250 && $2 >= 30 && $5 >= 150000 && $7 >= 250000 }
		END { exit !ok }' "$tmp/redis.out" || return 1
	[ "$(wc -l <"$tmp/redis-rounds.tsv")" -ge 250 ]
}
check "redis-load fills a real redis-server and times requests from when due: a 300 ms stall shows" redis_load_stall

# The summary's majflt is the server's, read from its /proc/PID/stat: a
# server that is gone is an error, not a zero.
redis_load_server_gone() {
	local rc=0
	start_redis
	"$bin/redis-load" --socket "$tmp/redis.sock" --server-pid "$redis_pid" --data 1M \
		--duration 5 >"$tmp/gone.out" 2>"$tmp/gone.err" &
	local load=$!
	until grep -q '^# ready' "$tmp/gone.out" 2>/dev/null; do sleep 0.05; done
	kill -KILL "$redis_pid"
	wait "$load" || rc=$?
	wait "$redis_pid" 2>/dev/null || true
	echo "# exit $rc: $(cat "$tmp/gone.err")"
	[ "$rc" -eq 1 ] && ! grep -q '^rounds' "$tmp/gone.out"
}
check "redis-load fails with an error, and no summary, when the server dies" redis_load_server_gone

hog_uncreatable_file() {
	rejects "$bin/hog" --mode file --file "$tmp/no/such/dir/hog.data" --size 1M
	[ ! -e "$tmp/no" ]
}
check "hog --mode file with an uncreatable path fails cleanly and creates nothing" hog_uncreatable_file

hog_tsv() {
	"$bin/hog" --size 8M --duration 1 --interval 200ms >"$tmp/hog.tsv"
	awk -F'\t' 'NR == 1 { ok = ($0 == "# work_unit=pages"); next }
		NR == 2 { ok = ok && ($1 == "t_s" && $2 == "work" && NF == 6); next }
		/^# summary / { summary = 1; next }
		NF != 6 { ok = 0 }
		{ rows++ }
		END { exit !(ok && summary && rows >= 3) }' "$tmp/hog.tsv"
}
check "hog prints a TSV header, interval rows and a summary" hog_tsv

hog_sort_passes() {
	"$bin/hog" --size 4M --pattern sort --passes 2 >"$tmp/sort.tsv"
	grep -q '^# summary .*passes=2 .*stopped=passes' "$tmp/sort.tsv"
}
check "hog --pattern sort completes a fixed number of passes (sorted, checked)" hog_sort_passes

# Work has one unit per pattern: pages touched for seq (the first touch
# included: 1024 pages + 2 passes of 1024), elements visited for sort (about
# n log2 n for a quicksort of n elements, n = 1 Mi here).
hog_work_units() {
	"$bin/hog" --size 4M --passes 2 >"$tmp/seq.tsv"
	grep -q '^# summary .* work=3072 work_unit=pages ' "$tmp/seq.tsv" || return 1
	"$bin/hog" --size 4M --pattern sort --passes 1 >"$tmp/sort1.tsv"
	awk '/^# summary / {
		for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		n = 1048576; nlog = n * 20
		exit !(v["work_unit"] == "elements" && v["work"] >= nlog * 0.75 && v["work"] <= nlog * 2) }' \
		"$tmp/sort1.tsv"
}
check "hog counts work in pages touched (seq) and elements visited (sort)" hog_work_units

hog_file_removed() {
	"$bin/hog" --size 4M --mode file --file "$tmp/hog.data" --duration 0.3 >/dev/null
	[ ! -e "$tmp/hog.data" ]
}
check "hog --mode file removes its file at exit" hog_file_removed

# What compressed swap would store: the hog's memory, read through
# /proc/PID/mem by its parent (which Yama's ptrace scope 1 allows) while it
# runs, compresses about 100/PCT to 1 with --random-pct PCT, and to almost
# nothing without it.
hog_random_pct() {
	python3 - "$bin/hog" <<'PY'
import re, subprocess, sys, time, zlib

size = 8 << 20
want = {0: (50, None), 25: (3, 5.5), 50: (1.6, 2.6), 100: (0.9, 1.1)}
for pct, (low, high) in want.items():
    hog = subprocess.Popen([sys.argv[1], "--size", "8M", "--duration", "5", "--random-pct", str(pct)],
                           stdout=subprocess.PIPE, text=True)
    hog.stdout.readline()  # the header comes before the first touch
    deadline = time.time() + 4
    while time.time() < deadline:  # until the first touch is done: a report line
        if re.match(r"[0-9.]+\t", hog.stdout.readline()):
            break
    start = None
    with open("/proc/%d/maps" % hog.pid) as maps:
        for line in maps:
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) rw-p 00000000 00:00 0", line)
            if m and int(m.group(2), 16) - int(m.group(1), 16) == size:
                start = int(m.group(1), 16)
    if start is None:
        sys.exit("# no 8 MiB mapping in the hog")
    with open("/proc/%d/mem" % hog.pid, "rb") as mem:
        mem.seek(start)
        data = mem.read(size)
    hog.terminate()
    hog.wait()
    ratio = len(data) / len(zlib.compress(data, 1))
    print("# --random-pct %d: compresses %.2f to 1" % (pct, ratio))
    if ratio < low or (high is not None and ratio > high):
        sys.exit("# --random-pct %d: %.2f to 1, outside %s..%s" % (pct, ratio, low, high))
PY
}
check "hog --random-pct PCT: its memory compresses about 100/PCT to 1" hog_random_pct

hog_sigterm() {
	local pid
	"$bin/hog" --size 8M --duration 30 >"$tmp/sig.tsv" &
	pid=$!
	sleep 0.5
	kill -TERM "$pid"
	wait "$pid"
	grep -q 'stopped=signal' "$tmp/sig.tsv"
}
check "hog exits cleanly with a summary on SIGTERM" hog_sigterm

victim_server() {
	"$bin/victim" --wss 4M --period 5ms --duration 0.5 --log "$tmp/rounds.tsv" >"$tmp/victim.tsv"
	awk -F'\t' '/^#/ { next }
		++rows == 1 { ok = ($1 == "rounds" && $7 == "max_us"); next }
		rows == 2 { ok = ok && $1 >= 50 && $3 <= $4 && $4 <= $5 && $5 <= $6 && $6 <= $7 }
		END { exit !(ok && rows == 2) }' "$tmp/victim.tsv"
	[ "$(wc -l <"$tmp/rounds.tsv")" -ge 50 ]
}
check "victim server mode reports ordered percentiles and a per-round log" victim_server

# A victim that comes and goes gives its working set back while away (RSS
# well under half of it, sampled in the middle of the absence), refills it on
# return, and has no rounds due while away.
victim_away() {
	local pid rss
	"$bin/victim" --wss 16M --period 5ms --busy 300ms --away 800ms --duration 1.5 \
		--log "$tmp/away-rounds.tsv" >"$tmp/away.tsv" &
	pid=$!
	sleep 0.7
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
	wait "$pid"
	echo "# RSS while away: $rss kB of 16384"
	[ "$rss" -lt 8192 ] || return 1
	awk -F'\t' '/^#/ { next } ++rows == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ exit !($(c["refills"]) == 1 && $(c["refill_max_ms"]) > 0) }' "$tmp/away.tsv" || return 1
	awk -F'\t' 'NR > 2 && $1 - prev >= 750 { gap = 1 } NR > 1 { prev = $1 } END { exit !gap }' \
		"$tmp/away-rounds.tsv"
}
check "victim --away frees its working set while away, refills it, and has no rounds due meanwhile" victim_away

# A victim stopped for 300 ms at a 5 ms period owes about 60 rounds: each is
# late and its latency counts from when it was due, so the stall shows in
# p99 and max (a closed loop would report one slow round, or none).
victim_stall() {
	"$bin/victim" --wss 4M --period 5ms --duration 1.5 --log "$tmp/stall.tsv" >"$tmp/stall.out" &
	local pid=$!
	sleep 0.5
	kill -STOP "$pid"
	sleep 0.3
	kill -CONT "$pid"
	wait "$pid"
	awk -F'\t' '/^#/ { next }
		++rows == 2 { print "# rounds " $1 ", missed " $2 ", p99 " $5 " us, max " $7 " us, service max " $11 " us"
			ok = $1 >= 250 && $2 >= 30 && $5 >= 150000 && $7 >= 250000 && $11 < $7 / 10 }
		END { exit !ok }' "$tmp/stall.out"
}
check "victim latency runs from when a round was due: a 300 ms stall shows as missed rounds, p99 and max" victim_stall

victim_idle() {
	"$bin/victim" --wss 4M --mode idle --sleep 0.2 >"$tmp/idle.tsv"
	awk -F'\t' '$1 == "4096" && $2 == "100.0" { found = 1 } END { exit !found }' "$tmp/idle.tsv"
}
check "victim idle mode reports its resident share (100% with no pressure)" victim_idle
[ "$failed" -eq 0 ]
