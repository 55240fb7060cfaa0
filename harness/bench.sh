#!/bin/bash
# `make bench`: one guest run per scenario, LRU, sweep variant and repeat
# (the patched kernel, or the stock one for a scenario with KERNEL=stock), in
# a shuffled order, collected in results/<run-id>/, then the comparison.
#
# Every guest run is an independent job (harness/bench-job.sh with its own job
# file and results folder), handed to GNU parallel: JOBS=N guests at once on
# this machine, each pinned to its share of the CPUs, or on other machines
# with HOSTS=host1,host2 (or a parallel sshlogin file) over ssh.
#
# Variables (all optional): SCENARIOS DURATION REPEAT RAM SWAP SWAP_KIND LRU
# RSS_LIMIT HOG HOG_RANDOM_PCT MODE SAMPLE_INTERVAL SEED (of the shuffle;
# ORDER=listed runs them as listed) RESULTS_DIR (default results; the fault
# tests use a temporary one) JOBS HOSTS SWEEP (harness/sweeps/<name>: axes to
# cross) RESUME (a run id: run only the jobs an interrupted run did not
# finish).
#
# The default is sized for about 25 minutes under TCG on 2 cores: the
# headline scenarios on MGLRU (Debian's default LRU), modes 1 and 2, 12 s
# each, 5 times (80 guest runs, 24 minutes in run 20261206-101550), so each
# median comes with an interval that holds it with 94% confidence.
# The late-limit (-pid), unlimited and thrash-token scenarios and the
# classic LRU are there to be asked for (README, "Bench").
set -euo pipefail
# shellcheck source=harness/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$RSSLIM_TOP"

default_scenarios="victim-alone hog-rsslimit-stock hog-rsslimit-off hog-rsslimit hog-memhigh hog-trimd hog-damon idle-2004-stock idle-2004 idle-2004-trimd idle-2004-damon comego-stock comego-memhigh comego-rsslimit"
hog_scenarios="hog-unlimited hog-rsslimit hog-memhigh"
results=${RESULTS_DIR:-results}
JOBS=${JOBS:-1}
HOSTS=${HOSTS:-}
[[ $JOBS =~ ^[1-9][0-9]{0,2}$ ]] || die "JOBS must be a number of guests at once, 1 or more (got '$JOBS')"
[[ $HOSTS != *"'"* ]] || die "HOSTS must not contain quotes"
# Settings a sweep file may set, and those it may cross (a comma list).
settings_keys=(SCENARIOS DURATION REPEAT RAM SWAP SWAP_KIND LRU RSS_LIMIT HOG HOG_RANDOM_PCT MODE SAMPLE_INTERVAL ORDER SEED)
axis_keys=(RAM SWAP SWAP_KIND RSS_LIMIT HOG_RANDOM_PCT)
axes=()
declare -A axis_values=()

if [ -n "${RESUME:-}" ]; then
	# The interrupted run's own settings, job list and job log: only the
	# jobs that did not finish run again, on the kernel and images it used.
	[[ $RESUME =~ ^[0-9]{8}-[0-9]{6}(-x)*$ ]] || die "RESUME must be a run id such as 20261206-041500 (got '$RESUME')"
	[ ! -e "$results/$RESUME" ] || die "run $RESUME in $results is finished: nothing to resume"
	run_dir=$results/$RESUME.partial
	{ [ -f "$run_dir/settings.env" ] && [ -f "$run_dir/jobs.txt" ]; } ||
		die "no resumable run $run_dir (it needs settings.env and jobs.txt, written by this version of bench)"
	for k in "${settings_keys[@]}"; do
		[ -z "${!k:-}" ] ||
			die "RESUME runs with the settings the run started with: unset $k (JOBS and HOSTS may change)"
	done
	asked_sweep=${SWEEP:-}
	[ -z "$asked_sweep" ] || [ -f "$asked_sweep" ] || asked_sweep=harness/sweeps/$asked_sweep
	saved_inputs_hash=''
	# shellcheck source=/dev/null
	. "$run_dir/settings.env"
	[ -z "$asked_sweep" ] || [ "$asked_sweep" = "$SWEEP" ] ||
		die "run $RESUME was a sweep of '${SWEEP:-nothing}', not '$asked_sweep'"
	[ -z "$SWEEP" ] || [ "$(hash_files "$SWEEP")" = "$sweep_hash" ] ||
		die "$SWEEP changed since run $RESUME started: its jobs would not match"
	run_id=$RESUME
fi
# A sweep file: KEY=VALUE lines (# comments). A comma list of RAM, SWAP,
# SWAP_KIND, RSS_LIMIT or HOG_RANDOM_PCT is an axis: every combination of the
# axes' values is a variant of each scenario. A key may not also be set in
# the environment.
if [ -z "${RESUME:-}" ] && [ -n "${SWEEP:-}" ]; then
	[ -f "$SWEEP" ] || [ ! -f "harness/sweeps/$SWEEP" ] || SWEEP=harness/sweeps/$SWEEP
	[ -f "$SWEEP" ] || die "no sweep file '$SWEEP' (known: $(cd harness/sweeps && echo *))"
	lineno=0
	while IFS= read -r line || [ -n "$line" ]; do
		lineno=$((lineno + 1))
		line=${line%%#*}
		[[ $line =~ ^[[:space:]]*$ ]] && continue
		[[ $line =~ ^([A-Z_]+)=(.*[^[:space:]])[[:space:]]*$ ]] ||
			die "$SWEEP:$lineno: not KEY=VALUE: '$line'"
		key=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
		[[ " ${settings_keys[*]} " == *" $key "* ]] ||
			die "$SWEEP:$lineno: $key is not a bench setting (${settings_keys[*]})"
		[ -z "${!key:-}" ] || die "$key is set both in the environment and in $SWEEP: set it in one place"
		if [[ $value == *,* ]]; then
			[[ " ${axis_keys[*]} " == *" $key "* ]] ||
				die "$SWEEP:$lineno: $key cannot be an axis (axes: ${axis_keys[*]})"
			[[ $value =~ ^[A-Za-z0-9]+(,[A-Za-z0-9]+)+$ ]] ||
				die "$SWEEP:$lineno: an axis is a comma list of plain values (got '$value')"
			axes+=("$key")
			axis_values[$key]=${value//,/ }
			value=${value%%,*}
		fi
		printf -v "$key" '%s' "$value"
	done <"$SWEEP"
	[ "${#axes[@]}" -gt 0 ] || die "$SWEEP crosses no axis (give one of ${axis_keys[*]} a comma list)"
	sweep_hash=$(hash_files "$SWEEP")
fi
SWEEP=${SWEEP:-}
sweep_hash=${sweep_hash:-}
DURATION=${DURATION:-12}
REPEAT=${REPEAT:-5}
RAM=${RAM:-256M}
SWAP=${SWAP:-512M}
SWAP_KIND=${SWAP_KIND:-disk}
LRU=${LRU:-mglru}
ORDER=${ORDER:-random}
SEED=${SEED:-$(date +%s)}
RSS_LIMIT=${RSS_LIMIT:-64M}
HOG=${HOG:-}
# The share of each hog page that is random bytes, the rest zero: what
# compressed swap gets (0: nearly empty pages; 30 compresses about 3 to 1).
HOG_RANDOM_PCT=${HOG_RANDOM_PCT:-0}
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
# check_axis_setting KEY VALUE: the settings a sweep may cross.
check_axis_setting() {
	case $1 in
	RAM | SWAP) parse_size_mib "$2" >/dev/null || die "$1 must be a size such as 256M or 1G (got '$2')" ;;
	RSS_LIMIT) [[ $2 =~ ^0*[1-9][0-9]{0,8}[KMG]$ ]] ||
		die "RSS_LIMIT must be a size such as 64M or 4000K (got '$2')" ;;
	SWAP_KIND) case $2 in disk | zram | zswap) ;; *)
		die "SWAP_KIND must be disk, zram (compressed, in the guest's memory) or zswap (got '$2')" ;; esac ;;
	HOG_RANDOM_PCT) in_range "$2" 0 100 ||
		die "HOG_RANDOM_PCT must be a whole percentage from 0 to 100 (got '$2')" ;;
	esac
}
for k in "${axis_keys[@]}"; do
	for v in ${axis_values[$k]:-${!k}}; do check_axis_setting "$k" "$v"; done
done
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
uses_apps=false
for s in "${scenarios[@]}"; do
	f=$(scenario_kernel "$s")
	[[ " ${flavors[*]} " == *" $f "* ]] || flavors+=("$f")
	! grep -qx 'IMAGE=apps' "harness/scenarios/$s" || uses_apps=true
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

# The jobs' inputs, named relative to the tree: the same job file then works
# in the work dir of another host, where they are copied to the same places.
tree_path() { local p=$1; echo "${p#"$RSSLIM_TOP"/}"; }
declare -A kernel_of=()
inputs=()
for f in "${flavors[@]}"; do
	kernel_of[$f]=$(tree_path "$(harness/kernel.sh path "$f")")
	inputs+=("${kernel_of[$f]}")
done
initramfs=$(tree_path "$BUILD_DIR/initramfs.cpio.gz")
apps_image=$(tree_path "$BUILD_DIR/apps.cpio.gz")
inputs+=("$initramfs")
! $uses_apps || inputs+=("$apps_image")
if [ -n "$HOSTS" ]; then
	for i in "${inputs[@]}"; do
		[[ $i != /* ]] || die "HOSTS needs the build folder inside the rsslim tree ($i is not)"
	done
fi
inputs_hash=$(hash_files "${inputs[@]}")
if [ -n "${RESUME:-}" ] && [ "$inputs_hash" != "$saved_inputs_hash" ]; then
	die "the kernel or guest image changed since run $RESUME started: its results would mix two builds"
fi

# A guest of the debug kernel (KASAN, lockdep) runs several times slower, and
# so do guests that share the CPUs.
slowdown=1
[ "${KCONFIG:-default}" != debug ] || slowdown=4
[ "$JOBS" -eq 1 ] || slowdown=$((slowdown * JOBS))

if [ -z "${RESUME:-}" ]; then
	mkdir -p "$results"
	run_id=$(date +%Y%m%d-%H%M%S)
	while [ -e "$results/$run_id" ] || [ -e "$results/$run_id.partial" ]; do run_id="$run_id-x"; done
	run_dir=$results/$run_id.partial
	mkdir -p "$run_dir/jobs"
	release=$(cat "build/obj-${KCONFIG:-default}/include/config/kernel.release")
	stock_release=
	[ ! -f build/obj-stock/include/config/kernel.release ] ||
		stock_release=$(cat build/obj-stock/include/config/kernel.release)
	axes_json=$(for a in "${axes[@]}"; do jq -n --arg k "$a" --arg v "${axis_values[$a]}" '{($k): ($v | split(" "))}'; done | jq -s 'add // {}')
	mapfile -t series_files < <(series_patches)
	jq -n --arg release "$release" --arg flavor "${KCONFIG:-default}" --arg stock "$stock_release" \
		--arg series "$(hash_files kernel-patch/series "${series_files[@]}")" \
		--arg config "$(hash_files kernel-patch/*.config)" \
		--arg qemu "$(qemu-system-x86_64 --version | head -1)" \
		--arg ram "$RAM" --arg swap "$SWAP" --arg swap_kind "$SWAP_KIND" --arg duration "$DURATION" --arg repeat "$REPEAT" \
		--arg lru "$LRU" --arg rss_limit "$RSS_LIMIT" --arg hog "$HOG" --arg hog_random_pct "$HOG_RANDOM_PCT" --arg mode "$MODE" \
		--arg scenarios "$SCENARIOS" --arg start "$(date -Is)" --arg host "$(uname -n) $(uname -r)" \
		--arg cpus "${GUEST_CPUS:-2}" --arg sample "$SAMPLE_INTERVAL" --arg order "$ORDER" --arg seed "$SEED" \
		--arg jobs "$JOBS" --arg hosts "$HOSTS" --arg sweep "$SWEEP" --argjson axes "$axes_json" \
		--arg host_cpus "$(nproc)" --arg inputs "$inputs_hash" \
		'{kernel_release: $release, kernel_flavor: $flavor, stock_kernel_release: $stock, series_hash: $series, config_hash: $config, qemu: $qemu,
		  guest_ram: $ram, guest_swap: $swap, swap_kind: $swap_kind, guest_cpus: $cpus, duration_s: $duration,
		  repeat: $repeat, lru: $lru, rss_limit: $rss_limit, hog: $hog, hog_random_pct: $hog_random_pct, mode: $mode,
		  scenarios: $scenarios, start: $start, host: $host, host_cpus: ($host_cpus | tonumber),
		  sample_interval: $sample, order: $order, seed: $seed, jobs: ($jobs | tonumber), hosts: $hosts,
		  sweep: $sweep, sweep_axes: $axes, inputs_hash: $inputs}' >"$run_dir/meta.json"
	# What RESUME= needs to rebuild the same jobs.
	{
		for k in "${settings_keys[@]}" SWEEP sweep_hash; do printf '%s=%q\n' "$k" "${!k}"; done
		printf 'saved_inputs_hash=%q\n' "$inputs_hash"
		declare -p axes axis_values
	} >"$run_dir/settings.env"

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
	# Every combination of the sweep's axes: "RAM-1G+SWAP_KIND-zram" (in a
	# job's name: characters no shell or rsync command line needs to quote).
	variants=("")
	for a in "${axes[@]}"; do
		crossed=()
		for v in "${variants[@]}"; do
			for value in ${axis_values[$a]}; do crossed+=("${v:+$v+}$a-$value"); done
		done
		variants=("${crossed[@]}")
	done

	# One job per run, variant, LRU and repeat, each with its own job file.
	# Shuffled, so that a drift of the host (thermal, another tenant) spreads
	# over every scenario instead of landing on the ones that happen to run
	# last; SEED in meta.json replays the order.
	names=()
	for run in "${runs[@]}"; do
		IFS=: read -r label s mode <<<"$run"
		# What the scenario boots, read once for all its jobs.
		flavor=$(scenario_kernel "$s")
		images=$initramfs
		! grep -qx 'IMAGE=apps' "harness/scenarios/$s" || images+=" $apps_image"
		for variant in "${variants[@]}"; do
			ram=$RAM swap=$SWAP swap_kind=$SWAP_KIND rss_limit=$RSS_LIMIT hog_random_pct=$HOG_RANDOM_PCT
			IFS=+ read -r -a parts <<<"$variant"
			for part in "${parts[@]}"; do
				case ${part%%-*} in
				RAM) ram=${part#*-} ;;
				SWAP) swap=${part#*-} ;;
				SWAP_KIND) swap_kind=${part#*-} ;;
				RSS_LIMIT) rss_limit=${part#*-} ;;
				HOG_RANDOM_PCT) hog_random_pct=${part#*-} ;;
				esac
			done
			for lru in "${lrus[@]}"; do
				for r in $(seq 1 "$REPEAT"); do
					name=$label${variant:++$variant}.$lru
					[ "$REPEAT" -eq 1 ] || name=$name.r$r
					{
						printf "KERNEL='%s'\nKCONFIG='%s'\nIMAGES='%s'\nRAM='%s'\nSWAP='%s'\nSWAP_KIND='%s'\n" \
							"${kernel_of[$flavor]}" "$flavor" "$images" "$ram" "$swap" "$swap_kind"
						printf "TIMEOUT_S='%s'\nGUEST_CPUS='%s'\n" \
							"$(((DURATION * 6 + 180) * slowdown))" "${GUEST_CPUS:-2}"
						printf "SCENARIO='%s'\nLRU='%s'\nDURATION='%s'\nUSER_RSS_LIMIT='%s'\n" \
							"$s" "$lru" "$DURATION" "$rss_limit"
						printf "HOG_CMD='%s'\nMODE='%s'\nRESULT_NAME='%s'\n" "$HOG" "$mode" "$name"
						printf "SAMPLE_INTERVAL='%s'\nVARIANT='%s'\nHOG_RANDOM_PCT='%s'\n" \
							"$SAMPLE_INTERVAL" "$variant" "$hog_random_pct"
					} >"$run_dir/jobs/$name.env"
					names+=("$name")
				done
			done
		done
	done
	if [ "$ORDER" = random ]; then
		mapfile -t names < <(printf '%s\n' "${names[@]}" |
			awk -v seed="$SEED" 'BEGIN { srand(seed) } { printf "%.9f\t%s\n", rand(), $0 }' |
			sort -k1,1 | cut -f2-)
	fi
	printf '%s\n' "${names[@]}" >"$run_dir/jobs.txt"
else
	rm -f "$run_dir/INTERRUPTED"
	jq --arg at "$(date -Is)" --arg jobs "$JOBS" --arg hosts "$HOSTS" \
		'.resumed += [{at: $at, jobs: ($jobs | tonumber), hosts: $hosts}]' \
		"$run_dir/meta.json" >"$run_dir/meta.json.new"
	mv "$run_dir/meta.json.new" "$run_dir/meta.json"
fi
mapfile -t names <"$run_dir/jobs.txt"
total=${#names[@]}

# A job runs about DURATION plus 7-10 s of boot and set-up under TCG.
log "bench run $run_id: $total guest runs of about $(((DURATION + 8) * slowdown)) s each, $JOBS at a time${HOSTS:+ on each of $HOSTS}" \
	"(~$(((total * (DURATION + 8) * slowdown / JOBS + 59) / 60)) min${RESUME:+ for all, less the finished ones}), order $ORDER (seed $SEED)"
bench_start=$(date +%s)
interrupted() {
	echo "interrupted by signal at $(date -Is)" >"$run_dir/INTERRUPTED"
	echo "error: bench interrupted; partial results kept in $run_dir (marked INTERRUPTED);" \
		"RESUME=$run_id runs the rest" >&2
	exit 130
}

# GNU parallel runs the jobs; its job log is what RESUME= reads. A job it
# stops gets SIGINT first (QEMU is stopped and the job marked INTERRUPTED),
# then TERM and KILL if it has not finished after 15 s.
termseq=INT,15000,TERM,5000,KILL,25
par=(parallel --jobs "$JOBS" --joblog "$run_dir/joblog" --line-buffer
	--termseq "$termseq" --arg-file "$run_dir/jobs.txt")
[ -z "${RESUME:-}" ] || par+=(--resume-failed)
if [ -n "$HOSTS" ]; then
	if [ -f "$HOSTS" ]; then par+=(--sshloginfile "$HOSTS"); else par+=(--sshlogin "$HOSTS"); fi
	# Each host gets the scripts a job runs and its inputs once, in
	# ~/rsslim-bench, and each job's file; each job's results come back.
	par+=(--workdir rsslim-bench --cleanup)
	for f in harness/bench-job.sh harness/qemu.sh harness/lib.sh harness/kernel.sh \
		harness/guest/splats.ere "${inputs[@]}"; do
		par+=(--basefile "$RSSLIM_TOP/./$f")
	done
	results_abs=$(cd "$results" && pwd)
	par+=(--transferfile "$results_abs/./$run_id.partial/jobs/{}.env"
		--return "$results_abs/./$run_id.partial/{}")
	job_cmd="harness/bench-job.sh $run_id.partial/jobs/{}.env $run_id.partial/{} {%} $JOBS"
else
	job_cmd="harness/bench-job.sh $(printf %q "$run_dir")/jobs/{}.env $(printf %q "$run_dir")/{} {%} $JOBS"
fi
# (SIGINT is ignored in a script's background commands unless restored.)
env --default-signal=INT "${par[@]}" "$job_cmd" &
par_pid=$!
stop() {
	trap - INT TERM
	kill -INT "$par_pid" 2>/dev/null || true
	wait "$par_pid" 2>/dev/null || true
	interrupted
}
trap stop INT TERM
par_rc=0
wait "$par_pid" || par_rc=$?
trap - INT TERM

missing=()
incomplete=()
for name in "${names[@]}"; do
	if [ ! -f "$run_dir/$name/host.json" ] || [ -f "$run_dir/$name/INTERRUPTED" ]; then
		missing+=("$name")
	elif [ -f "$run_dir/$name/INCOMPLETE" ]; then
		incomplete+=("$name")
		log "  $name incomplete: $(cat "$run_dir/$name/INCOMPLETE")"
	fi
done
if [ "${#missing[@]}" -gt 0 ]; then
	echo "error: ${#missing[@]} of $total jobs did not run to the end (parallel exit $par_rc, job log $run_dir/joblog):" \
		"${missing[*]}; RESUME=$run_id runs them" >&2
	exit 1
fi

# Every knob each guest had, and where and when each job ran, beside what
# the run was asked for.
for name in "${names[@]}"; do
	dir=$run_dir/$name
	[ ! -f "$dir/guest-settings.txt" ] ||
		sed -n 's/^knob //p' "$dir/guest-settings.txt" |
		jq -R --arg name "$name" 'split("=") | {guest_settings: {($name): {(.[0]): .[1]}}}'
	jq --arg name "$name" '{job_hosts: {($name): .}}' "$dir/host.json"
done | jq -s --slurpfile meta "$run_dir/meta.json" \
	'$meta[0] + (reduce .[] as $x ({}; . * $x))' >"$run_dir/meta.json.new"
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
