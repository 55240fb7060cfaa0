#!/bin/bash
# `make bench`: boot a kernel once per scenario, LRU and repeat (the patched
# one, or the stock one for a scenario with KERNEL=stock), in a shuffled
# order, collect the results in results/<run-id>/ and print the comparison.
#
# Variables (all optional): SCENARIOS DURATION REPEAT RAM SWAP LRU RSS_LIMIT HOG MODE
# SAMPLE_INTERVAL SEED (of the shuffle; ORDER=listed runs them as listed)
# RESULTS_DIR (default results; the fault tests use a temporary one)
#
# The default is sized for about 25 minutes under TCG on 2 cores: the
# headline scenarios on MGLRU (Debian's default LRU), 15 s each, 5 times, so
# each median comes with an interval that holds it with 94% confidence.
# The late-limit (-pid), unlimited and thrash-token scenarios and the
# classic LRU are there to be asked for (README, "Bench").
set -euo pipefail
# shellcheck source=harness/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$RSSLIM_TOP"

default_scenarios="victim-alone hog-rsslimit-stock hog-rsslimit-off hog-rsslimit hog-memhigh hog-trimd hog-damon idle-2004-stock idle-2004-off idle-2004 idle-2004-trimd idle-2004-damon comego-stock comego-memhigh comego-rsslimit"
hog_scenarios="hog-unlimited hog-rsslimit hog-memhigh"
DURATION=${DURATION:-12}
REPEAT=${REPEAT:-5}
RAM=${RAM:-256M}
SWAP=${SWAP:-512M}
LRU=${LRU:-mglru}
ORDER=${ORDER:-random}
SEED=${SEED:-$(date +%s)}
RSS_LIMIT=${RSS_LIMIT:-64M}
HOG=${HOG:-}
MODE=${MODE:-}
SAMPLE_INTERVAL=${SAMPLE_INTERVAL:-100ms}
if [ -z "${SCENARIOS:-}" ]; then
	SCENARIOS=$default_scenarios
	[ -z "$HOG" ] || SCENARIOS=$hog_scenarios
fi

# Everything is checked before anything is built or booted.
read -r -a scenarios <<<"$SCENARIOS"
[ "${#scenarios[@]}" -gt 0 ] || die "SCENARIOS is empty"
for s in "${scenarios[@]}"; do
	[ -f "harness/scenarios/$s" ] ||
		die "unknown scenario '$s' (known: $(cd harness/scenarios && echo *))"
done
in_range() { [[ $1 =~ ^[0-9]{1,6}$ ]] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
in_range "$DURATION" 1 3600 ||
	die "DURATION must be a whole number of seconds from 1 to 3600 (got '$DURATION')"
in_range "$REPEAT" 1 20 || die "REPEAT must be a whole number from 1 to 20 (got '$REPEAT')"
parse_size_mib "$RAM" >/dev/null || die "RAM must be a size such as 256M or 1G (got '$RAM')"
parse_size_mib "$SWAP" >/dev/null || die "SWAP must be a size such as 512M or 1G (got '$SWAP')"
[[ $RSS_LIMIT =~ ^0*[1-9][0-9]{0,8}[KMG]$ ]] ||
	die "RSS_LIMIT must be a size such as 64M or 4000K (got '$RSS_LIMIT')"
case $LRU in
both) lrus=(mglru classic) ;;
mglru | classic) lrus=("$LRU") ;;
*) die "LRU must be mglru, classic or both (got '$LRU')" ;;
esac
[[ $SAMPLE_INTERVAL =~ ^(0|[0-9]{1,5}ms)$ ]] ||
	die "SAMPLE_INTERVAL must be a time in ms such as 100ms, or 0 for no sampler (got '$SAMPLE_INTERVAL')"
case $ORDER in
random | listed) ;;
*) die "ORDER must be random or listed (got '$ORDER')" ;;
esac
[[ $SEED =~ ^[0-9]{1,12}$ ]] || die "SEED must be a whole number (got '$SEED')"
case $MODE in
'' | 1 | 2 | 3) ;;
*) die "MODE must be 1 (passive), 2 (active) or 3 (hard) (got '$MODE')" ;;
esac
[[ $HOG != *"'"* ]] || die "HOG must not contain single quotes"
if [ -n "$HOG" ]; then
	for s in "${scenarios[@]}"; do
		# prlimit --pid needs the hog's own pid; a HOG command runs under timeout and sh.
		! grep -qE '^HOG_LIMIT=(rlimit-pid|damon)' "harness/scenarios/$s" ||
			die "HOG cannot be used with scenario '$s', which limits the running hog by its pid (prlimit --pid or DAMON)"
	done
fi

# scenario_kernel SCENARIO: the flavour it boots (stock or the KCONFIG one).
scenario_kernel() {
	if grep -qx 'KERNEL=stock' "harness/scenarios/$1"; then echo stock; else echo "${KCONFIG:-default}"; fi
}
flavors=()
for s in "${scenarios[@]}"; do
	f=$(scenario_kernel "$s")
	[[ " ${flavors[*]} " == *" $f "* ]] || flavors+=("$f")
done
for f in "${flavors[@]}"; do
	make --no-print-directory kernel KCONFIG="$f"
done
make --no-print-directory initramfs

if [ -n "$HOG" ]; then
	prog=${HOG%% *}
	# (No grep -q on a pipe here: with pipefail, grep stopping early fails the pipe.)
	if ! zcat build/initramfs.cpio.gz | cpio -it --quiet 2>/dev/null |
		grep -xE "(usr/)?s?bin/$prog|rsslim/bin/$prog" >/dev/null &&
		! busybox --list | grep -x "$prog" >/dev/null; then
		die "HOG program '$prog' is not in the guest image (try hog or stress-ng)"
	fi
fi

results=${RESULTS_DIR:-results}
mkdir -p "$results"
run_id=$(date +%Y%m%d-%H%M%S)
while [ -e "$results/$run_id" ] || [ -e "$results/$run_id.partial" ]; do run_id="$run_id-x"; done
run_dir=$results/$run_id.partial
mkdir -p "$run_dir"
interrupted() {
	echo "interrupted by signal at $(date -Is)" >"$run_dir/INTERRUPTED"
	echo "error: bench interrupted; partial results kept in $run_dir (marked INTERRUPTED)" >&2
	exit 130
}
trap interrupted INT TERM

# A guest of the debug kernel (KASAN, lockdep) runs several times slower.
slowdown=1
[ "${KCONFIG:-default}" != debug ] || slowdown=4
release=$(cat "build/obj-${KCONFIG:-default}/include/config/kernel.release")
stock_release=
[ ! -f build/obj-stock/include/config/kernel.release ] ||
	stock_release=$(cat build/obj-stock/include/config/kernel.release)
jq -n --arg release "$release" --arg flavor "${KCONFIG:-default}" --arg stock "$stock_release" \
	--arg series "$(hash_files kernel-patch/series kernel-patch/*.patch)" \
	--arg config "$(hash_files kernel-patch/*.config)" \
	--arg qemu "$(qemu-system-x86_64 --version | head -1)" \
	--arg ram "$RAM" --arg swap "$SWAP" --arg duration "$DURATION" --arg repeat "$REPEAT" \
	--arg lru "$LRU" --arg rss_limit "$RSS_LIMIT" --arg hog "$HOG" --arg mode "$MODE" \
	--arg scenarios "$SCENARIOS" --arg start "$(date -Is)" --arg host "$(uname -n) $(uname -r)" \
	--arg cpus "${GUEST_CPUS:-2}" --arg sample "$SAMPLE_INTERVAL" --arg order "$ORDER" --arg seed "$SEED" \
	'{kernel_release: $release, kernel_flavor: $flavor, stock_kernel_release: $stock, series_hash: $series, config_hash: $config, qemu: $qemu,
	  guest_ram: $ram, guest_swap: $swap, guest_cpus: $cpus, duration_s: $duration,
	  repeat: $repeat, lru: $lru, rss_limit: $rss_limit, hog: $hog, mode: $mode,
	  scenarios: $scenarios, start: $start, host: $host, sample_interval: $sample,
	  order: $order, seed: $seed}' >"$run_dir/meta.json"

# Scenarios that turn enforcement on run once per enforcement mode (MODE=1|2|3
# picks one; a scenario's MODES= the ones it needs): label = scenario-mN.
runs=()
for s in "${scenarios[@]}"; do
	if grep -qx 'ENFORCE=1' "harness/scenarios/$s"; then
		# A scenario may name the modes worth its time (MODES="2").
		modes=$(sed -n 's/^MODES="\([1-3 ]*\)"$/\1/p' "harness/scenarios/$s")
		for m in ${MODE:-${modes:-1 2 3}}; do runs+=("$s-m$m:$s:$m"); done
	else
		runs+=("$s:$s:")
	fi
done

# One job per run, LRU and repeat. Shuffled, so that a drift of the host
# (thermal, another tenant) spreads over every scenario instead of landing on
# the ones that happen to run last; SEED in meta.json replays the order.
jobs=()
for run in "${runs[@]}"; do
	for lru in "${lrus[@]}"; do
		for r in $(seq 1 "$REPEAT"); do jobs+=("$run:$lru:$r"); done
	done
done
if [ "$ORDER" = random ]; then
	mapfile -t jobs < <(printf '%s\n' "${jobs[@]}" |
		awk -v seed="$SEED" 'BEGIN { srand(seed) } { printf "%.9f\t%s\n", rand(), $0 }' |
		sort -k1,1 | cut -f2-)
fi

total=${#jobs[@]}
# A scenario runs about DURATION plus 7-10 s of boot and set-up under TCG
# (22 s on average for the default 15 s); the estimate then follows the
# runs already done.
per_run=$(((DURATION + 8) * slowdown))
log "bench run $run_id: $total guest runs of about ${per_run} s each (~$((total * per_run / 60)) min), order $ORDER (seed $SEED)"
n=0
bench_start=$(date +%s)
incomplete=()
for job in "${jobs[@]}"; do
	IFS=: read -r label s mode lru r <<<"$job"
	n=$((n + 1))
	name=$label.$lru
	[ "$REPEAT" -eq 1 ] || name=$name.r$r
	dir=$run_dir/$name
	mkdir -p "$dir"
	elapsed=$(($(date +%s) - bench_start))
	[ "$n" -eq 1 ] || per_run=$((elapsed / (n - 1)))
	log "[$n/$total] $label ($lru, run $r) - elapsed ${elapsed} s, about $(((total - n + 1) * per_run)) s to go"
	stage=$(mktemp -d)
	mkdir -p "$stage/rsslim"
	{
		printf "SCENARIO='%s'\nLRU='%s'\nDURATION='%s'\nUSER_RSS_LIMIT='%s'\n" \
			"$s" "$lru" "$DURATION" "$RSS_LIMIT"
		printf "HOG_CMD='%s'\nMODE='%s'\nRESULT_NAME='%s'\n" "$HOG" "$mode" "$name"
		printf "SAMPLE_INTERVAL='%s'\n" "$SAMPLE_INTERVAL"
	} >"$stage/rsslim/job.env"
	(cd "$stage" && find . | cpio -o -H newc --quiet --owner=0:0) | gzip -1 >"$stage/job.cpio.gz"
	images=(build/initramfs.cpio.gz)
	! grep -qx 'IMAGE=apps' "harness/scenarios/$s" || images+=(build/apps.cpio.gz)
	cat "${images[@]}" "$stage/job.cpio.gz" >"$stage/initrd.gz"
	kernel=$(harness/kernel.sh path "$(scenario_kernel "$s")")
	if harness/qemu.sh --job bench --out "$dir/boot" --ram "$RAM" --swap "$SWAP" \
		--timeout $(((DURATION * 6 + 180) * slowdown)) --kernel "$kernel" --initrd "$stage/initrd.gz" \
		>"$dir/boot.log" 2>&1; then
		:
	fi
	rm -rf "$stage"
	if [ -d "$dir/boot/guest/$name" ]; then
		mv "$dir/boot/guest/$name"/* "$dir/"
		rmdir "$dir/boot/guest/$name" "$dir/boot/guest" 2>/dev/null || true
	fi
	if [ "$(cat "$dir/status" 2>/dev/null)" != complete ]; then
		reason=$(grep -m1 '^incomplete: ' "$dir/status" 2>/dev/null ||
			grep -m1 '^error:' "$dir/boot.log" || echo "guest did not complete the scenario")
		echo "$reason" >"$dir/INCOMPLETE"
		incomplete+=("$name")
		log "  incomplete: $reason"
	fi
done
trap - INT TERM

# Every knob each guest had, beside what the run was asked for.
for dir in "$run_dir"/*/; do
	[ -f "$dir/guest-settings.txt" ] || continue
	sed -n 's/^knob //p' "$dir/guest-settings.txt" |
		jq -R --arg name "$(basename "$dir")" 'split("=") | {($name): {(.[0]): .[1]}}'
done | jq -s --slurpfile meta "$run_dir/meta.json" \
	'$meta[0] + {guest_settings: (reduce .[] as $x ({}; . * $x))}' >"$run_dir/meta.json.new"
mv "$run_dir/meta.json.new" "$run_dir/meta.json"

summarized=true
python3 harness/summarize.py "$run_dir" | tee "$run_dir/report.txt" || summarized=false
final=$results/$run_id
mv "$run_dir" "$final"
ln -sfn "$run_id" "$results/latest"
harness/plots.sh "$final" || log "some figures could not be drawn (see above)"
log "results in $final ($results/latest) after $(($(date +%s) - bench_start)) s"
log "report page: $final/plots/index.html"
if [ "${#incomplete[@]}" -gt 0 ]; then
	echo "error: incomplete scenarios: ${incomplete[*]}" >&2
	exit 1
fi
if ! $summarized; then
	echo "error: the summary refused some runs (see INVALID in $final/report.txt)" >&2
	exit 1
fi
