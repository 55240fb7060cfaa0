#!/bin/bash
# One guest run of a bench: the unit that `make bench` hands to GNU parallel,
# on this machine or (HOSTS=) on another one over ssh.
#
#   bench-job.sh JOB_ENV OUT_DIR [SLOT SLOTS]
#
# JOB_ENV (written by bench.sh, one per job) names everything the run needs:
# the kernel and images (paths relative to the rsslim tree, so that the same
# file works in a remote work dir), guest size and swap, and the scenario's
# settings that go into the guest. OUT_DIR is replaced by the run's results:
# the guest's files, boot/ (console and job logs), host.json (where and when
# it ran), and INCOMPLETE with the reason when the guest did not finish.
# SLOT of SLOTS (parallel's {%} and its --jobs), with more than one slot,
# pins the guest to its share of the CPUs, so that guests running side by
# side do not compete.
#
# Exit status: 0 when OUT_DIR holds a result (complete or not), so that
# parallel --resume-failed reruns only what was interrupted; 130 when stopped.
set -euo pipefail
# shellcheck source=harness/lib.sh
. "$(dirname "$0")/lib.sh"

{ [ $# -eq 2 ] || [ $# -eq 4 ]; } || die "usage: bench-job.sh JOB_ENV OUT_DIR [SLOT SLOTS]"
job_env=$1 out=$2 slot=${3:-1} slots=${4:-1}
[ -f "$job_env" ] || die "no job file $job_env"
[[ "$slot $slots" =~ ^[1-9][0-9]{0,3}\ [1-9][0-9]{0,3}$ ]] ||
	die "SLOT and SLOTS must be whole numbers from 1 (got '$slot' '$slots')"
case $out in '' | / | .) die "refusing to use '$out' as a job's results folder" ;; esac

KERNEL='' KCONFIG=${KCONFIG:-default} IMAGES='' RAM='' SWAP='' SWAP_KIND=disk TIMEOUT_S='' GUEST_CPUS=${GUEST_CPUS:-2}
SCENARIO='' LRU='' DURATION='' USER_RSS_LIMIT='' HOG_CMD='' MODE='' RESULT_NAME='' SAMPLE_INTERVAL='' VARIANT=''
HOG_RANDOM_PCT=0
# shellcheck source=/dev/null
. "$job_env"
for v in KERNEL IMAGES RAM SWAP TIMEOUT_S SCENARIO LRU DURATION RESULT_NAME; do
	[ -n "${!v}" ] || die "$job_env does not set $v"
done
cd "$RSSLIM_TOP"
[ -f "$KERNEL" ] || die "no kernel at $RSSLIM_TOP/$KERNEL"
read -r -a images <<<"$IMAGES"
for i in "${images[@]}"; do [ -f "$i" ] || die "no image at $RSSLIM_TOP/$i"; done

# A rerun (RESUME=) starts the job afresh.
rm -rf "$out"
mkdir -p "$out"
stage=$(mktemp -d)
stopped() {
	echo "interrupted by signal at $(date -Is)" >"$out/INTERRUPTED"
	rm -rf "$stage"
	exit 130
}
trap stopped INT TERM

# Pinning: slot k of SLOTS gets the k-th equal share of the CPUs. With
# more jobs than CPUs the guests share them all (and meta.json says so).
ncpus=$(nproc)
pin=()
cpus="0-$((ncpus - 1))"
if [ "$slots" -gt 1 ] && [ "$slots" -le "$ncpus" ]; then
	share=$((ncpus / slots))
	first=$((((slot - 1) % slots) * share))
	cpus="$first-$((first + share - 1))"
	pin=(taskset -c "$cpus")
fi

mkdir -p "$stage/rsslim"
{
	printf "SCENARIO='%s'\nLRU='%s'\nDURATION='%s'\nUSER_RSS_LIMIT='%s'\n" \
		"$SCENARIO" "$LRU" "$DURATION" "$USER_RSS_LIMIT"
	printf "HOG_CMD='%s'\nMODE='%s'\nRESULT_NAME='%s'\n" "$HOG_CMD" "$MODE" "$RESULT_NAME"
	printf "SAMPLE_INTERVAL='%s'\nSWAP_KIND='%s'\nVARIANT='%s'\nHOG_RANDOM_PCT='%s'\n" \
		"$SAMPLE_INTERVAL" "$SWAP_KIND" "$VARIANT" "$HOG_RANDOM_PCT"
} >"$stage/rsslim/job.env"
(cd "$stage" && find . | cpio -o -H newc --quiet --owner=0:0) | gzip -1 >"$stage/job.cpio.gz"
cat "${images[@]}" "$stage/job.cpio.gz" >"$stage/initrd.gz"

start=$(date +%s)
log "$RESULT_NAME: started on $(uname -n), CPUs $cpus"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
# (KCONFIG: qemu.sh boots a debug kernel with its own command line.)
KCONFIG=$KCONFIG GUEST_CPUS=$GUEST_CPUS "${pin[@]}" harness/qemu.sh --job bench --out "$out/boot" --ram "$RAM" --swap "$SWAP" \
	--swap-kind "$SWAP_KIND" --timeout "$TIMEOUT_S" --kernel "$KERNEL" --initrd "$stage/initrd.gz" \
	>"$out/boot.log" 2>&1 || true
rm -rf "$stage"
jq -n --arg host "$(uname -n)" --arg dir "$PWD" --arg cpus "$cpus" --argjson pinned "$([ ${#pin[@]} -gt 0 ] && echo true || echo false)" \
	--arg slot "$slot" --arg jobs "$slots" --arg ncpus "$ncpus" --arg load_start "$load_start" \
	--arg load_end "$(cut -d' ' -f1-3 /proc/loadavg)" --arg start "$(date -d "@$start" -Is)" \
	--arg wall "$(($(date +%s) - start))" \
	'{host: $host, work_dir: $dir, host_cpus: ($ncpus | tonumber), cpus: $cpus, pinned: $pinned,
	  slot: ($slot | tonumber), jobs_per_host: ($jobs | tonumber), loadavg_start: $load_start,
	  loadavg_end: $load_end, start: $start, wall_s: ($wall | tonumber)}' >"$out/host.json"

if [ -d "$out/boot/guest/$RESULT_NAME" ]; then
	mv "$out/boot/guest/$RESULT_NAME"/* "$out/"
	rmdir "$out/boot/guest/$RESULT_NAME" "$out/boot/guest" 2>/dev/null || true
fi
if [ "$(cat "$out/status" 2>/dev/null)" != complete ]; then
	reason=$(grep -m1 '^incomplete: ' "$out/status" 2>/dev/null ||
		grep -m1 '^error:' "$out/boot.log" || echo "guest did not complete the scenario")
	echo "$reason" >"$out/INCOMPLETE"
fi
if [ -f "$out/INCOMPLETE" ]; then
	log "$RESULT_NAME: incomplete after $(($(date +%s) - start)) s: $(cat "$out/INCOMPLETE")"
else
	log "$RESULT_NAME: complete in $(($(date +%s) - start)) s"
fi
