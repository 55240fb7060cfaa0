#!/bin/sh
# Runs one bench scenario in the guest: reads /rsslim/job.env (written by the
# host) and /rsslim/scenarios/$SCENARIO, starts the victim, the hog and the
# sampler, and leaves everything in /results/$RESULT_NAME for the host.

# shellcheck source=/dev/null
. /rsslim/job.env
scenario_file=/rsslim/scenarios/$SCENARIO
[ -f "$scenario_file" ] || { echo "# rsslim: no scenario '$SCENARIO' in the guest"; exit 2; }

# Defaults a scenario file may override. Every rsslim knob is off unless the
# scenario turns it on: a row that does not say otherwise is today's Linux.
VICTIM=server VICTIM_WSS=64M VICTIM_BUSY=2s VICTIM_AWAY=2s HOG_KIND=default HOG_LIMIT=none HOG_SIZE=300M HOG_PATTERN=seq
HOG_PASSES='' HOGS=1 LIMIT_AFTER=5 VICTIM_PROTECT='' MIN_TTL_MS=0 OOM_EXPECTED='' SORT_BUFFER=''
KERNEL=patched ENFORCE=0 SWAP_TOKEN=0 RSS_LIMIT='' TRIMD=''
# shellcheck source=/dev/null
. "$scenario_file"
[ -n "$RSS_LIMIT" ] || RSS_LIMIT=$USER_RSS_LIMIT
[ -z "$MODE" ] || [ "$ENFORCE" = 0 ] || ENFORCE=$MODE

out=/results/$RESULT_NAME
roles=/run/roles
mkdir -p "$out" "$roles"
cp "$scenario_file" "$out/scenario"
cp /rsslim/job.env "$out/job.env"
echo "incomplete" >"$out/status"

size_bytes() {
	case $1 in
	*K | *k) echo $((${1%?} * 1024)) ;;
	*M | *m) echo $((${1%?} * 1024 * 1024)) ;;
	*G | *g) echo $((${1%?} * 1024 * 1024 * 1024)) ;;
	*) echo "$1" ;;
	esac
}

case $LRU in
mglru) echo y >/sys/kernel/mm/lru_gen/enabled ;;
classic) echo n >/sys/kernel/mm/lru_gen/enabled ;;
esac
# MGLRU's thrashing prevention: the working set of the last MIN_TTL_MS is
# not evicted; when it cannot be kept, the OOM killer runs instead.
[ ! -w /sys/kernel/mm/lru_gen/min_ttl_ms ] || echo "$MIN_TTL_MS" >/sys/kernel/mm/lru_gen/min_ttl_ms
[ -w /proc/sys/vm/rss_limit_enforce ] && echo "$ENFORCE" >/proc/sys/vm/rss_limit_enforce
[ -w /proc/sys/vm/swap_token ] && echo "$SWAP_TOKEN" >/proc/sys/vm/swap_token
# knob NAME FILE: the value the run had, "absent" on a kernel without it.
knob() {
	if [ -r "$2" ]; then
		echo "knob $1=$(cat "$2")"
	else
		echo "knob $1=absent"
	fi
}
# What the guest swaps to: zram, the disk behind zswap, the disk, or none.
swap_kind() {
	if grep -q '^/dev/zram' /proc/swaps; then
		echo zram
	elif ! grep -q '^/dev/' /proc/swaps; then
		echo none
	elif [ "$(cat /sys/module/zswap/parameters/enabled 2>/dev/null)" = Y ]; then
		echo zswap
	else
		echo disk
	fi
}
# What the scenario asked for ("want") and what the guest had ("knob"): the
# summary refuses a run where they differ (harness/summarize.py).
{
	echo "scenario=$SCENARIO lru=$LRU enforce=$ENFORCE rss_limit=$RSS_LIMIT duration=$DURATION hog_random_pct=${HOG_RANDOM_PCT:-0}"
	echo "kernel=$(uname -r)"
	echo "want kernel=$KERNEL rss_limit_enforce=$ENFORCE swap_token=$SWAP_TOKEN lru_gen_enabled=$LRU min_ttl_ms=$MIN_TTL_MS swap_kind=${SWAP_KIND:-disk}"
	knob rss_limit_enforce /proc/sys/vm/rss_limit_enforce
	knob swap_token /proc/sys/vm/swap_token
	knob swap_token_timeout_ms /proc/sys/vm/swap_token_timeout_ms
	knob swap_token_idle_ms /proc/sys/vm/swap_token_idle_ms
	knob lru_gen_enabled /sys/kernel/mm/lru_gen/enabled
	knob min_ttl_ms /sys/kernel/mm/lru_gen/min_ttl_ms
	knob transparent_hugepage /sys/kernel/mm/transparent_hugepage/enabled
	knob swappiness /proc/sys/vm/swappiness
	knob overcommit_memory /proc/sys/vm/overcommit_memory
	echo "knob swap_kind=$(swap_kind)"
	echo "knob swap_kib=$(awk 'NR > 1 { kib += $3 } END { print kib + 0 }' /proc/swaps)"
} >"$out/guest-settings.txt"
# GNU sort's input (HOG_KIND=gnusort): HOG_SIZE of random 100-byte lines
# on the scratch disk, written before the caches are dropped, so that the
# sort reads it from the disk as a sort of a big file would.
if [ "$HOG_KIND" = gnusort ]; then
	head -c $(($(size_bytes "$HOG_SIZE") * 3 / 4)) /dev/urandom | base64 -w 99 >/scratch/sort-input ||
		{ echo "# rsslim: cannot write the sort's input to /scratch"; exit 3; }
fi
sync
echo 3 >/proc/sys/vm/drop_caches
cat /proc/vmstat >"$out/vmstat.before"
# The guest's CPU time (USER_HZ ticks: user nice system idle iowait irq softirq ...):
# what enforcement costs the whole system, wherever reclaim runs.
head -n1 /proc/stat >"$out/cpu.before"

# Swap-token changes of holder, from the tracepoints (converted at the end).
tracing=/sys/kernel/tracing
if [ -d "$tracing/events/swap_token" ]; then
	echo >"$tracing/trace"
	echo 1 >"$tracing/events/swap_token/enable"
fi
t0_uptime=$(cut -d' ' -f1 /proc/uptime)

# SAMPLE_INTERVAL=0 runs without the sampler, to measure what sampling costs.
sampler_pid=
if [ "${SAMPLE_INTERVAL:-100ms}" != 0 ]; then
	sampler --roles "$roles" --out "$out/samples.tsv" --interval "${SAMPLE_INTERVAL:-100ms}" &
	sampler_pid=$!
fi

# in_cgroup GROUP COMMAND...: become COMMAND, in the existing cgroup v2
# group GROUP. Only in the background (it execs), where $! is then
# COMMAND's own pid, as the sampler and the signals sent to it need.
in_cgroup() {
	group=$1
	shift
	exec sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "/sys/fs/cgroup/$group" "$@"
}

# start_victim PROGRAM ARGS...: become the victim (in the background, as
# in_cgroup), in a group whose memory.low or
# memory.min covers its working set when the scenario protects it that way
# (VICTIM_PROTECT=low|min; 16 MiB more for its binary and page tables).
start_victim() {
	if [ -n "$VICTIM_PROTECT" ]; then
		mkdir -p /sys/fs/cgroup/victim
		echo $(($(size_bytes "$VICTIM_WSS") + 16 * 1024 * 1024)) \
			>"/sys/fs/cgroup/victim/memory.$VICTIM_PROTECT"
		in_cgroup victim "$@"
	else
		exec "$@"
	fi
}

# A hog with a fixed amount of work (GNU sort) sets how long the run lasts:
# the victim serves until it is done (and is stopped then), not DURATION.
victim_duration=$DURATION
[ "$HOG_KIND" != gnusort ] || victim_duration=3600

# Victim first; the hog starts once the victim's memory is all touched.
# victim_pid is the process whose memory is watched; reporter_pid the one
# writing victim.tsv (the same one, but for redis: its load generator).
victim_pid=
case $VICTIM in
server)
	start_victim victim --wss "$VICTIM_WSS" --mode server --period 10ms --touch 16 \
		--duration "$victim_duration" --log "$out/victim_rounds.tsv" >"$out/victim.tsv" 2>&1 &
	victim_pid=$!
	;;
comego)
	# A server that comes and goes: while it is away its memory is free.
	start_victim victim --wss "$VICTIM_WSS" --mode server --period 10ms --touch 16 --duration "$DURATION" \
		--busy "$VICTIM_BUSY" --away "$VICTIM_AWAY" \
		--log "$out/victim_rounds.tsv" >"$out/victim.tsv" 2>&1 &
	victim_pid=$!
	;;
idle)
	start_victim victim --wss "$VICTIM_WSS" --mode idle --sleep $((DURATION * 3)) >"$out/victim.tsv" 2>&1 &
	victim_pid=$!
	;;
redis)
	# A real server: redis-server holding VICTIM_WSS of values, with a GET
	# of a random key due every 10 ms from redis-load, timed from when due.
	start_victim redis-server --port 0 --unixsocket /run/redis.sock --save '' --appendonly no \
		--dir /tmp >"$out/redis.log" 2>&1 &
	victim_pid=$!
	redis-load --socket /run/redis.sock --server-pid "$victim_pid" --data "$VICTIM_WSS" --period 10ms \
		--duration "$victim_duration" --log "$out/victim_rounds.tsv" >"$out/victim.tsv" 2>&1 &
	reporter_pid=$!
	;;
esac
[ "$VICTIM" = redis ] || reporter_pid=$victim_pid
if [ -n "$victim_pid" ]; then
	echo "$victim_pid" >"$roles/victim"
	waited=0
	until grep -q '^# ready' "$out/victim.tsv" 2>/dev/null; do
		sleep 0.1
		waited=$((waited + 1))
		[ "$waited" -lt 600 ] || { echo "# rsslim: victim never became ready"; exit 3; }
	done
fi

trimd_pid=
if [ -n "$TRIMD" ]; then
	# --stop (the process is stopped while it is trimmed): rsstrimd at its
	# best, as the rival of the kernel modes.
	rsstrimd --mode "$TRIMD" --stop >"$out/trimd.tsv" 2>&1 &
	trimd_pid=$!
	echo "$trimd_pid" >"$roles/trimd"
fi

# start_hog ROLE: start one hog (limited as the scenario says) in the background.
start_hog() {
	role=$1
	if [ -n "$HOG_CMD" ]; then
		set -- timeout "$DURATION" sh -c "$HOG_CMD"
	elif [ "$HOG_KIND" = gnusort ]; then
		# (/usr/bin: busybox's sort comes first in the guest's PATH.)
		# One thread, so that its work does not depend on the guest's CPUs;
		# with no SORT_BUFFER, sort sizes its buffer itself (GNU sort reads
		# RLIMIT_RSS and stays under it).
		set -- /usr/bin/sort --parallel=1 --temporary-directory=/scratch --output=/dev/null /scratch/sort-input
		[ -z "$SORT_BUFFER" ] || set -- "$@" --buffer-size="$SORT_BUFFER"
	elif [ -n "$HOG_PASSES" ]; then
		set -- hog --name "$role" --size "$HOG_SIZE" --pattern "$HOG_PATTERN" --passes "$HOG_PASSES" \
			--duration $((DURATION * 10))
	else
		set -- hog --name "$role" --size "$HOG_SIZE" --pattern "$HOG_PATTERN" --duration "$DURATION"
	fi
	# (The sorting hog writes random elements of its own.)
	[ "$1" != hog ] || [ "$HOG_PATTERN" = sort ] || set -- "$@" --random-pct "${HOG_RANDOM_PCT:-0}"
	limit_bytes=$(size_bytes "$RSS_LIMIT")
	case $HOG_LIMIT in
	none) "$@" >"$out/$role.tsv" 2>&1 & ;;
	rlimit) prlimit --rss="$limit_bytes" "$@" >"$out/$role.tsv" 2>&1 & ;;
	# Limited later, by limit_running_hog or start_damon.
	rlimit-pid | damon) "$@" >"$out/$role.tsv" 2>&1 & ;;
	memhigh)
		mkdir -p /sys/fs/cgroup/hog
		echo "$limit_bytes" >/sys/fs/cgroup/hog/memory.high
		in_cgroup hog "$@" >"$out/$role.tsv" 2>&1 &
		;;
	*) echo "# rsslim: unknown HOG_LIMIT '$HOG_LIMIT'"; exit 2 ;;
	esac
	echo "$!" >"$roles/$role"
}

# limit_running_hog PID: the limiter (harness/guest/limiter.c) gives the
# running hog its limit with prlimit(2) once the victim has lost 10% of what
# it had now (reclaim has reached it), or after LIMIT_AFTER seconds, and
# writes limit.tsv: what every role had resident just before the call and
# just after it returned, when the limit took effect. A program locked in
# memory and started now, because starting prlimit under thrashing took
# 0.2-0.4 s, in which the sleeper lost up to 43 MiB the kernel had not yet
# been asked to protect.
limit_running_hog() {
	set -- --pid "$1" --rss "$limit_bytes" --max-wait "${LIMIT_AFTER}s" --roles "$roles" \
		--t0 "$t0_uptime" --out "$out/limit.tsv"
	[ -z "$victim_pid" ] || set -- "$@" --watch "$victim_pid" --lost 10
	limiter "$@" &
	limiter_pid=$!
}

# start_damon PID: DAMOS pages PID out towards RSS_LIMIT, from its start
# (harness/guest/damon-pageout.sh; the log is damon.tsv).
start_damon() {
	/rsslim/damon-pageout.sh "$1" "$limit_bytes" "$out/damon.tsv" 2>"$out/damon.err" &
	damon_pid=$!
}

# zram swap: what it holds, and in how much memory, once a second.
zram_pid=
if [ "$(swap_kind)" = zram ]; then
	while cat /sys/block/zram0/mm_stat; do sleep 1; done >"$out/zram-mm_stat" &
	zram_pid=$!
fi

hog_pids=
killed=
incomplete_reason=
if [ "$HOG_KIND" != none ]; then
	hog_t0=$(cut -d' ' -f1 /proc/uptime)
	start_hog hog
	hog_pids=$(cat "$roles/hog")
	if [ "$HOGS" = 2 ]; then
		start_hog hog2
		hog_pids="$hog_pids $(cat "$roles/hog2")"
	fi
	limiter_pid=
	damon_pid=
	[ "$HOG_LIMIT" != rlimit-pid ] || limit_running_hog "$hog_pids"
	[ "$HOG_LIMIT" != damon ] || start_damon "$hog_pids"
	for pid in $hog_pids; do
		wait "$pid"
		rc=$?
		echo "hog_exit $pid $rc" >>"$out/guest-settings.txt"
		[ "$rc" -lt 128 ] || killed="$killed hog (pid $pid, exit $rc)"
		[ "$HOG_KIND" != gnusort ] || [ "$rc" -eq 0 ] || [ "$rc" -ge 128 ] ||
			incomplete_reason="sort failed (exit $rc): $(cat "$out/hog.tsv")"
	done
	if [ "$HOG_KIND" = gnusort ]; then
		# Its fixed work (the input's bytes) and how long it took, in the
		# summary line the hog program writes.
		awk -v t0="$hog_t0" -v bytes="$(wc -c </scratch/sort-input)" '{
			wall = $1 - t0
			printf "# summary wall_s=%.3f work=%d work_unit=bytes work_per_s=%.0f\n", wall, bytes, bytes / wall
		}' /proc/uptime >>"$out/hog.tsv"
	fi
	if [ -n "$limiter_pid" ] && ! wait "$limiter_pid"; then
		incomplete_reason="the limiter failed: the hog was never limited"
		echo "# rsslim: $incomplete_reason" >&2
	fi
	if [ -n "$damon_pid" ] && ! wait "$damon_pid"; then
		incomplete_reason="DAMON failed: $(cat "$out/damon.err")"
		echo "# rsslim: $incomplete_reason" >&2
	fi
fi

case $VICTIM in
idle) kill -USR1 "$victim_pid" ;;
*) [ "$HOG_KIND" != gnusort ] || kill -TERM "$reporter_pid" ;;
esac
if [ -n "$victim_pid" ] && [ "$reporter_pid" != "$victim_pid" ]; then
	wait "$reporter_pid"
	rc=$?
	echo "load_exit $reporter_pid $rc" >>"$out/guest-settings.txt"
	# Killed (by the OOM killer?) like any role; failed (the server stopped
	# answering, a wrong value): the run did not measure what it claims.
	if [ "$rc" -ge 128 ]; then
		killed="$killed redis-load (pid $reporter_pid, exit $rc)"
	elif [ "$rc" -ne 0 ]; then
		incomplete_reason="redis-load failed (exit $rc: $(tail -n1 "$out/victim.tsv"))"
	fi
	kill -TERM "$victim_pid" 2>/dev/null
fi
if [ -n "$victim_pid" ]; then
	wait "$victim_pid"
	rc=$?
	echo "victim_exit $victim_pid $rc" >>"$out/guest-settings.txt"
	[ "$rc" -lt 128 ] || killed="$killed victim (pid $victim_pid, exit $rc)"
fi
if [ -n "$trimd_pid" ]; then
	kill "$trimd_pid"
	wait "$trimd_pid"
fi
if [ -n "$sampler_pid" ]; then
	kill "$sampler_pid"
	wait "$sampler_pid"
fi
[ -z "$zram_pid" ] || { kill "$zram_pid"; wait "$zram_pid"; }
if [ -d "$tracing/events/swap_token" ]; then
	echo 0 >"$tracing/events/swap_token/enable"
	# t_ms (since the sampler started) old_pid new_pid reason
	awk -v t0="$t0_uptime" 'BEGIN { print "t_ms\told_pid\tnew_pid\treason" }
		/swap_token_[a-z]+: / {
			for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) ts = substr($i, 1, length($i) - 1)
			match($0, /swap_token_[a-z]+:/); ev = substr($0, RSTART + 11, RLENGTH - 12)
			match($0, / pid=[0-9]+/); pid = substr($0, RSTART + 5, RLENGTH - 5)
			match($0, /old_pid=[0-9]+/); old = substr($0, RSTART + 8, RLENGTH - 8)
			if (ev == "acquire" || ev == "replace") printf "%d\t%s\t%s\t%s\n", (ts - t0) * 1000, old, pid, ev
			else printf "%d\t%s\t0\t%s\n", (ts - t0) * 1000, pid, ev
		}' "$tracing/trace" >"$out/token.tsv"
fi
head -n1 /proc/stat >"$out/cpu.after"
cat /proc/vmstat >"$out/vmstat.after"
dmesg >"$out/dmesg.txt"
# A -pid scenario whose hog got no limit, or a sort that failed, measured
# nothing it claims to.
if [ -n "$incomplete_reason" ]; then
	echo "incomplete: $incomplete_reason" >"$out/status"
	exit 0
fi
# A role that died by a signal (the OOM killer, most likely) makes the
# run's numbers meaningless: keep them, but say so. Unless the scenario
# expects OOM kills (OOM_EXPECTED=1): then they are its result, counted
# by the summary from /proc/vmstat.
if [ -n "$killed" ] && [ -z "$OOM_EXPECTED" ]; then
	oom=$(grep -m1 'Killed process' "$out/dmesg.txt")
	echo "incomplete: killed:$killed${oom:+; OOM killer: ${oom#*] }}" >"$out/status"
	echo "# rsslim: scenario $SCENARIO ($LRU) incomplete: killed:$killed"
	exit 0
fi
echo "complete" >"$out/status"
echo "# rsslim: scenario $SCENARIO ($LRU) complete"
