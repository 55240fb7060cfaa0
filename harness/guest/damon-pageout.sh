#!/bin/sh
# damon-pageout.sh PID LIMIT_BYTES LOG: hold PID's resident memory near
# LIMIT_BYTES with the kernel's own per-process pageout, DAMON/DAMOS
# (CONFIG_DAMON_VADDR, CONFIG_DAMON_SYSFS), until PID exits. It is the
# bench's in-kernel rival of an RSS limit: hog-damon and idle-2004-damon.
#
# One kdamond monitors PID's address space and runs one "pageout" scheme on
# the coldest regions first. How much it may page out per 100 ms is tuned by
# DAMOS itself from a quota goal that this script feeds every 100 ms: the
# ratio of the limit to PID's VmRSS, in basis points (10000 = at the limit).
# Below 10000 DAMOS raises the quota, above it lowers it. Watermarks on free
# memory make the scheme act only under pressure (free memory under 10% of
# the guest), as a soft limit would.
#
# LOG gets "t_ms rss_kb goal_bp quota_bytes paged_out_kb" for every feed
# (paged_out_kb: what the scheme has paged out so far).
set -u

pid=$1
limit_kb=$(($2 / 1024))
log=$3
admin=/sys/kernel/mm/damon/admin
kdamond=$admin/kdamonds/0
ctx=$kdamond/contexts/0
scheme=$ctx/schemes/0

die() {
	echo "# damon-pageout: $*" >&2
	exit 1
}

[ -d "$admin" ] || die "no $admin: this kernel has no CONFIG_DAMON_SYSFS"
[ "$limit_kb" -gt 0 ] || die "limit '$2' is not a positive number of bytes"

# put FILE VALUE: write one DAMON sysfs file, or fail naming it.
put() {
	echo "$2" >"$1" || die "cannot write '$2' to $1"
}

rss_kb() {
	while read -r key value _; do
		if [ "$key" = VmRSS: ]; then
			echo "$value"
			return 0
		fi
	done <"/proc/$pid/status"
	return 1
}

put "$admin/kdamonds/nr_kdamonds" 1
put "$kdamond/contexts/nr_contexts" 1
put "$ctx/operations" vaddr
put "$ctx/targets/nr_targets" 1
put "$ctx/targets/0/pid_target" "$pid"
put "$ctx/schemes/nr_schemes" 1
put "$scheme/action" pageout
# Any region of any size, access rate and age: the quota, not the pattern,
# decides how much goes, and the coldest go first (the weights below).
put "$scheme/access_pattern/sz/min" 4096
put "$scheme/access_pattern/sz/max" 18446744073709551615
put "$scheme/access_pattern/nr_accesses/min" 0
put "$scheme/access_pattern/nr_accesses/max" 4294967295
put "$scheme/access_pattern/age/min" 0
put "$scheme/access_pattern/age/max" 4294967295
put "$scheme/quotas/reset_interval_ms" 100
put "$scheme/quotas/weights/nr_accesses_permil" 1
put "$scheme/quotas/weights/age_permil" 1
put "$scheme/quotas/goals/nr_goals" 1
put "$scheme/quotas/goals/0/target_metric" user_input
put "$scheme/quotas/goals/0/target_value" 10000
put "$scheme/quotas/goals/0/current_value" 10000
put "$scheme/watermarks/metric" free_mem_rate
put "$scheme/watermarks/interval_us" 100000
put "$scheme/watermarks/high" 150
put "$scheme/watermarks/mid" 100
put "$scheme/watermarks/low" 0
put "$kdamond/state" on

# uptime_cs: the uptime in hundredths of a second, without a fork.
uptime_cs() {
	read -r up _ </proc/uptime
	echo "${up%.*}${up#*.}"
}

t0=$(uptime_cs)
echo "t_ms	rss_kb	goal_bp	quota_bytes	paged_out_kb" >"$log"
while rss=$(rss_kb 2>/dev/null); do
	# A process that has exited or has no pages left to monitor: kdamond
	# stops by itself, and the loop with it.
	read -r state <"$kdamond/state"
	[ "$state" = on ] || break
	goal=20000
	[ "$rss" -eq 0 ] || goal=$((limit_kb * 10000 / rss))
	[ "$goal" -le 20000 ] || goal=20000
	echo "$goal" >"$scheme/quotas/goals/0/current_value"
	for command in commit_schemes_quota_goals update_schemes_effective_quotas update_schemes_stats; do
		echo "$command" >"$kdamond/state" 2>/dev/null
	done
	read -r quota <"$scheme/quotas/effective_bytes"
	read -r applied <"$scheme/stats/sz_applied"
	printf '%s\t%s\t%s\t%s\t%s\n' $((($(uptime_cs) - t0) * 10)) "$rss" "$goal" "$quota" \
		$((applied / 1024)) >>"$log"
	sleep 0.1
done
read -r state <"$kdamond/state"
[ "$state" != on ] || echo off >"$kdamond/state"
exit 0
