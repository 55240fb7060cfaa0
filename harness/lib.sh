# shellcheck shell=bash
# Helpers shared by the host-side harness scripts. Source it, do not run it.

RSSLIM_TOP=${RSSLIM_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BUILD_DIR=${BUILD_DIR:-$RSSLIM_TOP/build}
KERNEL_TARBALL=${KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
export KERNEL_SRC=$BUILD_DIR/linux
export KERNEL_ARCH=x86_64

log() { printf '%s %s\n' "[$(date +%H:%M:%S)]" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Run a command, printing what it is and how long it took.
timed() {
	local what=$1 start rc=0
	shift
	start=$(date +%s)
	log "$what ..."
	"$@" || rc=$?
	if [ "$rc" -ne 0 ]; then
		log "$what failed (exit $rc) after $(($(date +%s) - start)) s"
		return "$rc"
	fi
	log "$what done in $(($(date +%s) - start)) s"
}

# parse_size VALUE: print VALUE (e.g. 256M, 1G, 4096K, 512) in MiB; fail on
# anything else. Plain numbers are MiB, as QEMU's -m takes them.
parse_size_mib() {
	local v=$1 num unit
	[[ $v =~ ^([0-9]+)([KkMmGg]?)$ ]] || return 1
	num=$((10#${BASH_REMATCH[1]}))
	unit=${BASH_REMATCH[2]}
	[ "${#BASH_REMATCH[1]}" -le 9 ] || return 1
	case $unit in
	K | k) [ $((num % 1024)) -eq 0 ] || return 1; num=$((num / 1024)) ;;
	G | g) num=$((num * 1024)) ;;
	esac
	[ "$num" -gt 0 ] || return 1
	echo "$num"
}

# A content hash of files (names and bytes), for rebuild stamps.
hash_files() {
	local f
	for f in "$@"; do
		printf '%s\n' "$(basename "$f")"
		cat "$f"
	done | sha256sum | cut -c1-16
}

# The patches named by kernel-patch/series, in order.
series_patches() {
	local series=$RSSLIM_TOP/kernel-patch/series line
	[ -f "$series" ] || return 0
	while IFS= read -r line; do
		line=${line%%#*}
		line=${line//[[:space:]]/}
		[ -n "$line" ] && printf '%s\n' "$RSSLIM_TOP/kernel-patch/$line"
	done <"$series"
}

# Fail early, with the numbers, when the disk cannot hold what comes next.
need_disk_mib() {
	local dir=$1 need=$2 avail
	mkdir -p "$dir"
	avail=$(df -Pm "$dir" | awk 'NR == 2 { print $4 }')
	[ "$avail" -ge "$need" ] ||
		die "not enough disk space in $dir: $avail MiB free, $need MiB needed"
}
