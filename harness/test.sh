#!/bin/bash
# `make test`: host unit tests, then the patched kernel booted in QEMU running
# the guest suite. TAP streams are printed as they come; the last line is
# "N passed, N failed[, N skipped]" and the exit status is non-zero on any
# failure.
set -euo pipefail
# shellcheck source=harness/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$RSSLIM_TOP"

tap_log=$(mktemp)
trap 'rm -f "$tap_log"' EXIT
m() { make --no-print-directory "$@"; }

# The kernel and guest image first: the harness fault tests boot them.
guest_ready=true
if ! m kernel || ! m initramfs; then
	echo "not ok - kernel or guest image build failed" | tee -a "$tap_log"
	guest_ready=false
fi

# Host tests: every program in build/host-tests and every tests/host/*.sh. A
# script that dies, or reports fewer results than it planned, counts as a
# failure (harness/tap-runner.sh). A kernel of some parts of the series
# (KCONFIG=parts-...) is there for its guest suite: the host tests check the
# harness, and the bench runs among them need every part.
if [[ $KCONFIG == parts-* ]]; then
	log "KCONFIG=$KCONFIG: the guest suite only (the host tests run with the whole series)"
elif timed "building host tests and workloads" m workloads host-tests; then
	host_tests=()
	for t in build/host-tests/* tests/host/*.sh; do
		[ -x "$t" ] && host_tests+=("$t")
	done
	harness/tap-runner.sh run "$tap_log" "${host_tests[@]}"
else
	echo "not ok - host tests and workloads build failed" | tee -a "$tap_log"
fi

# shaped_run LABEL CPUS RAM CASE APPEND: some cases of the guest suite again
# in a guest of another shape (APPEND names them, with rsslim.tests and
# rsslim.test_case, and gives the kernel what shapes it). Their results
# count with the others, marked [LABEL]; CASE must be among them.
shaped_run() {
	local label=$1 cpus=$2 ram=$3 must_run=$4 append=$5 dir log
	dir=$BUILD_DIR/test-${label// /-}
	log=$(mktemp)
	rm -rf "$dir"
	if ! GUEST_CPUS=$cpus harness/qemu.sh --job test --out "$dir" --ram "$ram" --swap "${SWAP:-512M}" \
		--timeout "${TIMEOUT:-$((600 * (time_scale + 1) / 2))}" \
		--append "rsslim.release=$release rsslim.host_release=$(uname -r) rsslim.time_scale=$time_scale $parts $append" |
		tee "$log"; then
		echo "not ok - $label guest run failed (console: $dir/console.log)" | tee -a "$log"
	fi
	sed -E "s/^(not )?ok [0-9]+ /&[$label] /" "$log" >>"$tap_log"
	grep -Eq "^(not )?ok .*$must_run" "$log" ||
		echo "not ok - [$label] $must_run never ran" | tee -a "$tap_log"
	rm -f "$log"
}

# Guest suite.
if $guest_ready; then
	run_dir=$BUILD_DIR/test-run
	rm -rf "$run_dir"
	release=$(cat "$BUILD_DIR/obj-$KCONFIG/include/config/kernel.release")
	# KASAN and lockdep under TCG make the guest several times slower: the
	# tests' waiting windows stretch by this factor, the whole run's limit
	# by half of it (the suite took 2300 s of guest time there, 430 s here).
	time_scale=1
	[ "$KCONFIG" != debug ] || time_scale=8
	# A kernel of some parts of the series (KCONFIG=parts-1-3): the guest
	# skips the tests of the others, and its smoke test checks that those
	# are what is missing.
	parts=
	[[ $KCONFIG != parts-* ]] || parts="rsslim.parts=${KCONFIG#parts-}"
	parts=${parts//-/,}
	boot_start=$(date +%s)
	if ! harness/qemu.sh --job test --out "$run_dir" --ram "${RAM:-256M}" --swap "${SWAP:-512M}" \
		--timeout "${TIMEOUT:-$((1200 * (time_scale + 1) / 2))}" \
		--append "rsslim.release=$release rsslim.host_release=$(uname -r) rsslim.time_scale=$time_scale $parts" | tee -a "$tap_log"; then
		echo "not ok - guest run failed (console: $run_dir/console.log)" | tee -a "$tap_log"
	fi
	log "guest suite took $(($(date +%s) - boot_start)) s on $(cat "$run_dir/accel" 2>/dev/null || echo '?')"
	# Every guest test program built must have run (a guest that stopped
	# early, or an image without it, would otherwise just count fewer).
	for t in "$BUILD_DIR"/guest-tests/*; do
		[ -x "$t" ] || continue
		grep -qx "# selftest: ${t##*/}" "$tap_log" ||
			echo "not ok - guest test ${t##*/} never ran" | tee -a "$tap_log"
	done
	# Counts a CPU holds back grow with the CPUs: the tests of reclaim's
	# judgement near the limit again, in a guest of 16.
	shaped_run "16 vCPUs" 16 "${RAM:-256M}" judged_on_exact_counts_just_over \
		"rsslim.tests=20-rss-limit-reclaim rsslim.test_case=judged_on_exact_counts_just_over,judged_on_exact_counts_just_under"
	# Mode 2 judges each node apart: its test, in a guest of two nodes.
	shaped_run "2 nodes" "${GUEST_CPUS:-2}" 512M mode_2_judges_only_the_nodes_a_process_may_use \
		"numa=fake=2 rsslim.tests=30-rss-limit-active rsslim.test_case=mode_2_judges_only_the_nodes_a_process_may_use"
	# rsstrimd is for kernels without the series: its guest tests (and the
	# smoke tests) also run on the stock kernel, the same tree and config
	# with no patch applied, where no rsslim knob exists.
	if [ "$KCONFIG" = default ]; then
		stock_dir=$BUILD_DIR/test-stock
		stock_tests=00-smoke,40-rsstrimd
		rm -rf "$stock_dir"
		stock_log=$(mktemp)
		if ! m kernel KCONFIG=stock; then
			echo "not ok - stock kernel build failed" | tee -a "$tap_log"
		else
			stock_release=$(cat "$BUILD_DIR/obj-stock/include/config/kernel.release")
			if ! harness/qemu.sh --job test --out "$stock_dir" --ram "${RAM:-256M}" --swap "${SWAP:-512M}" \
				--kernel "$(harness/kernel.sh path stock)" --timeout "${TIMEOUT:-600}" \
				--append "rsslim.release=$stock_release rsslim.host_release=$(uname -r) rsslim.parts=none rsslim.tests=$stock_tests" |
				tee "$stock_log"; then
				echo "not ok - stock kernel guest run failed (console: $stock_dir/console.log)" | tee -a "$stock_log"
			fi
			# Its results count like the others, under the stock kernel's name.
			sed -E 's/^(not )?ok [0-9]+ /&[stock] /' "$stock_log" >>"$tap_log"
			for t in ${stock_tests//,/ }; do
				grep -qx "# selftest: $t" "$stock_log" ||
					echo "not ok - guest test $t never ran on the stock kernel" | tee -a "$tap_log"
			done
			if grep -q "kernel enforcement: absent (stock kernel)" "$stock_log" &&
				! grep -q "kernel enforcement: present" "$stock_log"; then
				echo "ok - rsstrimd's guest tests ran with no rsslim knob in the kernel" | tee -a "$tap_log"
			else
				echo "not ok - rsstrimd's guest tests ran with no rsslim knob in the kernel" | tee -a "$tap_log"
			fi
		fi
		rm -f "$stock_log"
	fi
	# The debug kernel also runs one short bench scenario: the bench's own
	# paths (sampler, tracepoints, cgroup, trimming) under KASAN and lockdep.
	if [ "$KCONFIG" = debug ]; then
		rm -rf "$BUILD_DIR/debug-bench"
		if RESULTS_DIR=$BUILD_DIR/debug-bench SCENARIOS=idle-2004 MODE=2 LRU=mglru DURATION=10 \
			harness/bench.sh >"$BUILD_DIR/debug-bench.log" 2>&1; then
			echo "ok - bench scenario idle-2004 (mode 2) on the debug kernel" | tee -a "$tap_log"
		else
			echo "not ok - bench scenario idle-2004 (mode 2) on the debug kernel" | tee -a "$tap_log"
			grep -E '^error:|incomplete' "$BUILD_DIR/debug-bench.log" | sed 's/^/# /'
		fi
		# Its console, panic included, gets the guest suite's splat check.
		consoles=$(find "$BUILD_DIR/debug-bench" -path '*/boot/console.log' 2>/dev/null || true)
		if [ -z "$consoles" ]; then
			echo "not ok - debug kernel log clean during the bench scenario (no console log)" | tee -a "$tap_log"
		elif xargs cat <<<"$consoles" | grep -E -f harness/guest/splats.ere >"$BUILD_DIR/debug-bench.splats"; then
			echo "not ok - debug kernel log clean during the bench scenario" | tee -a "$tap_log"
			head -40 "$BUILD_DIR/debug-bench.splats" | sed 's/^/# /'
		else
			echo "ok - debug kernel log clean during the bench scenario" | tee -a "$tap_log"
		fi
	fi
fi

harness/tap-runner.sh summary "$tap_log"
