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
# Two traits of DAMOS show in the results (damon.tsv): the first quota
# window (100 ms) after the scheme activates has no quota at all, so it
# pages out whatever it reaches; and the quota grows by at most 2x per
# window from one byte, so it overshoots and falls back to one byte once
# the goal is met, and the hog's RSS swings around the limit.
#
# LOG gets "t_ms rss_kb goal_bp quota_bytes paged_out_kb" for every feed.
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
# Nothing to page out until the first feed says otherwise.
put "$scheme/quotas/goals/0/current_value" 20000
put "$scheme/watermarks/metric" free_mem_rate
put "$scheme/watermarks/interval_us" 100000
put "$scheme/watermarks/high" 150
put "$scheme/watermarks/mid" 100
put "$scheme/watermarks/low" 0
put "$kdamond/state" on

# The process limits itself to its RSS from here on: damon-feed feeds the
# goal every 100 ms until the process exits (and the kdamond stops with it).
damon-feed --pid "$pid" --limit "$2" --kdamond "$kdamond" --out "$log" --interval 100ms
rc=$?
read -r state <"$kdamond/state"
[ "$state" != on ] || echo off >"$kdamond/state"
exit "$rc"
