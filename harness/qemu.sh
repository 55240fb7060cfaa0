#!/bin/bash
# Boot the rsslim kernel and initramfs in QEMU and run one guest job.
#
#   qemu.sh --job test|bench|shell --out DIR [--ram MIB] [--swap MIB]
#           [--swap-kind disk|zram|zswap] [--timeout SECONDS]
#           [--append 'key=value ...'] [--kernel F] [--initrd F]
#
# --swap-kind: the guest swaps to its virtio disk (disk), to a zram device of
# the same size in its own memory (zram), or to the disk behind zswap (zswap).
#
# The guest console (ttyS0) goes to DIR/console.log, the job's output (ttyS1)
# to stdout and DIR/job.log; a results archive the guest writes to its second
# disk is unpacked into DIR/guest/. A panic, oops, WARN, or a guest that does
# not finish before the timeout is reported in one line plus the last console
# lines, and the exit status is non-zero. ACCEL=kvm|tcg overrides the probe.
set -euo pipefail
# shellcheck source=harness/lib.sh
. "$(dirname "$0")/lib.sh"

job='' out='' ram=256 swap=512 swap_kind=disk timeout_s=600 append=''
kernel=$("$RSSLIM_TOP/harness/kernel.sh" path "${KCONFIG:-default}")
initrd=$BUILD_DIR/initramfs.cpio.gz
while [ $# -gt 0 ]; do
	case $1 in
	--job) job=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--ram) ram=$2; shift 2 ;;
	--swap) swap=$2; shift 2 ;;
	--swap-kind) swap_kind=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--initrd) initrd=$2; shift 2 ;;
	*) die "qemu.sh: unknown argument '$1'" ;;
	esac
done
[ -n "$job" ] || die "qemu.sh: --job is required"
[ -n "$out" ] || die "qemu.sh: --out is required"
ram=$(parse_size_mib "$ram") || die "RAM must be a size such as 256M or 1G"
swap_mib=$(parse_size_mib "$swap") || die "SWAP must be a size such as 512M or 1G"
case $swap_kind in
disk | zram | zswap) ;;
*) die "SWAP_KIND must be disk, zram or zswap (got '$swap_kind')" ;;
esac
if ! [[ $timeout_s =~ ^[0-9]+$ ]] || [ "$timeout_s" -eq 0 ]; then
	die "timeout must be a positive number of seconds"
fi
[ -f "$kernel" ] || die "no kernel at $kernel: run 'make kernel'"
[ -f "$initrd" ] || die "no initramfs at $initrd: run 'make initramfs'"
mkdir -p "$out"

qemu_base=(qemu-system-x86_64 -nodefaults -no-reboot -smp "${GUEST_CPUS:-2}" -m "$ram"
	-kernel "$kernel" -initrd "$initrd")
cmdline_base="console=ttyS0 panic=-1 oops=panic panic_on_warn=1 printk.devkmsg=on"
# The debug kernel (KASAN, lockdep) is so slow under TCG that its soft-lockup
# and RCU stall detectors fire on a healthy guest (seen at boot: a 26 s soft
# lockup while another guest ran, an RCU stall warning in ACPI probing alone).
# Its ACPI interpreter is slower still: evaluating the PCI interrupt routing
# (_PRT) took 24-28 s per virtio disk (0.44 s on the default kernel), and
# ACPICA gives up on any AML loop after 30 s (AE_AML_LOOP_TIMEOUT): a disk
# then gets no interrupt and the boot hangs, on an idle host too. acpi=noirq
# routes PCI interrupts from the BIOS's $PIR table instead: boot to /init
# in 16 s instead of 83 (when it did not hang).
[ "${KCONFIG:-default}" != debug ] ||
	cmdline_base+=" nosoftlockup rcupdate.rcu_cpu_stall_timeout=300 acpi=noirq"

# KVM only when a real boot shows it works: on nested hosts /dev/kvm may exist
# while guests crash or crawl. The answer is cached per QEMU and host kernel.
pick_accel() {
	local cache=$BUILD_DIR/accel-probe key probe_dir
	if [ -n "${ACCEL:-}" ]; then
		case $ACCEL in kvm | tcg) echo "$ACCEL"; return ;; esac
		die "ACCEL must be kvm or tcg"
	fi
	if ! [ -r /dev/kvm ] || ! [ -w /dev/kvm ]; then
		echo tcg
		return
	fi
	key="$(qemu-system-x86_64 --version | head -1) $(uname -r)"
	if [ -f "$cache" ] && [ "$(sed -n 1p "$cache")" = "$key" ]; then
		sed -n 2p "$cache"
		return
	fi
	probe_dir=$(mktemp -d)
	if timeout -k 5 30 "${qemu_base[@]}" -accel kvm -display none -monitor none \
		-serial null -serial "file:$probe_dir/job" \
		-append "$cmdline_base rsslim.job=probe" </dev/null >/dev/null 2>&1 &&
		grep -q 'probe ok' "$probe_dir/job"; then
		printf '%s\nkvm\n' "$key" >"$cache"
	else
		printf '%s\ntcg\n' "$key" >"$cache"
	fi
	rm -rf "$probe_dir"
	sed -n 2p "$cache"
}

accel=$(pick_accel)
echo "$accel" >"$out/accel"
disk_args=()
if [ "$swap_mib" -gt 0 ]; then
	truncate -s "${swap_mib}M" "$out/swap.img"
	disk_args+=(-drive "file=$out/swap.img,if=virtio,format=raw,cache=unsafe")
fi
truncate -s "${RESULTS_DISK_MIB:-64}M" "$out/results.img"
disk_args+=(-drive "file=$out/results.img,if=virtio,format=raw,cache=unsafe")
# A block-backed file system for file-backed workloads: pages of the
# initramfs can never be reclaimed, so they would measure nothing.
truncate -s "${SCRATCH_DISK_MIB:-512}M" "$out/scratch.img"
disk_args+=(-drive "file=$out/scratch.img,if=virtio,format=raw,cache=unsafe")
cleanup_disks() { rm -f "$out/swap.img" "$out/results.img" "$out/scratch.img"; }
trap cleanup_disks EXIT

cmdline="$cmdline_base rsslim.job=$job rsslim.swap_mib=$swap_mib rsslim.swap_kind=$swap_kind $append"
if [ "$job" = shell ]; then
	log "booting a guest shell ($accel, ${ram} MiB RAM, ${swap_mib} MiB swap); leave with 'poweroff -f'"
	# -nodefaults left the guest no serial port: give its console this
	# terminal (Ctrl-A X quits QEMU, Ctrl-A C is its monitor).
	exec "${qemu_base[@]}" -accel "$accel" -nographic -serial mon:stdio "${disk_args[@]}" -append "$cmdline"
fi

log "booting guest job '$job' ($accel, ${ram} MiB RAM, ${swap_mib} MiB $swap_kind swap, timeout ${timeout_s} s)"
start=$(date +%s)
# The pipeline runs in the background so that a signal (Ctrl-C reaches this
# script, not QEMU: timeout puts QEMU in a process group of its own) is
# handled at once: QEMU is stopped and the run reported as interrupted.
rm -f "$out/qemu.pid" "$out/qemu.rc"
{
	timeout -k 5 "$timeout_s" "${qemu_base[@]}" -accel "$accel" -display none -monitor none \
		-serial "file:$out/console.log" -serial stdio "${disk_args[@]}" -append "$cmdline" \
		</dev/null 2>"$out/qemu.stderr" &
	echo $! >"$out/qemu.pid"
	rc=0
	wait $! || rc=$?
	echo "$rc" >"$out/qemu.rc"
} | sed -u 's/\r$//' | tee "$out/job.log" &
pipeline=$!
on_signal() {
	trap - INT TERM
	kill -TERM "$(cat "$out/qemu.pid" 2>/dev/null)" 2>/dev/null || true
	wait "$pipeline" 2>/dev/null || true
	echo "error: interrupted: guest job '$job' stopped after $(($(date +%s) - start)) s" >&2
	cleanup_disks
	# Die by the same signal, so the calling shell sees the interruption.
	kill "-$1" $$
}
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
wait "$pipeline" || true
trap - INT TERM
qemu_rc=$(cat "$out/qemu.rc" 2>/dev/null || echo 1)
rm -f "$out/qemu.pid" "$out/qemu.rc"
elapsed=$(($(date +%s) - start))

if [ -s "$out/results.img" ] && tar -tf "$out/results.img" >/dev/null 2>&1; then
	mkdir -p "$out/guest"
	tar -xf "$out/results.img" -C "$out/guest"
fi

problem=
splat=$(grep -m1 -E -e 'Kernel panic' -f "$RSSLIM_TOP/harness/guest/splats.ere" "$out/console.log" || true)
if [ -n "$splat" ]; then
	problem="guest kernel failed: $splat"
elif grep -q '^# rsslim: writing results to /dev/vdb failed' "$out/job.log"; then
	problem="the guest's results did not fit on its ${RESULTS_DISK_MIB:-64} MiB results disk (set RESULTS_DISK_MIB)"
elif [ "$qemu_rc" -eq 124 ] || [ "$qemu_rc" -eq 137 ]; then
	problem="guest did not power off within ${timeout_s} s (hung?)"
elif ! grep -q "^# rsslim: job $job done" "$out/job.log"; then
	problem="guest stopped before its job finished (QEMU exit $qemu_rc: $(tail -1 "$out/qemu.stderr" 2>/dev/null))"
fi
if [ -n "$problem" ]; then
	echo "error: $problem" >&2
	echo "last console lines ($out/console.log):" >&2
	tail -n 25 "$out/console.log" | sed 's/^/  | /' >&2
	exit 1
fi
log "guest job '$job' finished in ${elapsed} s"
