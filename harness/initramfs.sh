#!/bin/bash
# Build the guest initramfs: busybox, util-linux prlimit and stress-ng (with
# the shared libraries they need), the static rsslim programs and guest
# tests, the guest scripts and scenario files.
#
#   initramfs.sh OUTPUT BIN_DIR GUEST_TEST_DIR [UPSTREAM_TEST_DIR]
#
# With --apps, an overlay instead: the real programs some scenarios run
# (redis-server, GNU sort), appended to the image only for those scenarios
# (IMAGE=apps), so that the memory every other scenario's guest has left is
# the same as it was before they existed.
#
#   initramfs.sh --apps OUTPUT
set -euo pipefail
# shellcheck source=harness/lib.sh
. "$(dirname "$0")/lib.sh"

stage=$(mktemp -d "$BUILD_DIR/initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# A dynamically linked host program and every library ldd names for it.
copy_with_libs() {
	local prog=$1 dest=$2 lib
	install -D -m 0755 "$prog" "$stage$dest"
	for lib in $(ldd "$prog" | grep -oE '/[^ ]+\.so[^ ]*'); do
		[ -e "$stage$lib" ] || install -D -m 0755 "$lib" "$stage$lib"
	done
}

# pack OUTPUT: the staged tree as a gzipped newc archive, written atomically.
pack() {
	(cd "$stage" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc --owner=0:0 --quiet) | gzip -1 >"$1.tmp"
	mv "$1.tmp" "$1"
	log "initramfs $1 ($(du -k "$1" | cut -f1) KiB)"
}

if [ "${1:-}" = --apps ]; then
	[ $# -eq 2 ] || die "usage: initramfs.sh --apps OUTPUT"
	chmod 0755 "$stage"
	# Debian's redis-server is redis-check-rdb under another name (the binary
	# looks at argv[0]); redis-tools ships it without the daemon's service.
	copy_with_libs /usr/bin/redis-check-rdb /usr/bin/redis-server
	copy_with_libs /usr/bin/sort /usr/bin/sort
	pack "$2"
	exit 0
fi

output=$1 bin_dir=$2 test_dir=$3

mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,etc,proc,sys,dev,tmp,run,rsslim/bin,rsslim/tests,rsslim/scenarios}
# mktemp made the root 0700: other users in the guest could not open any file.
chmod 0755 "$stage"
chmod 1777 "$stage/tmp"
cp /bin/busybox "$stage/bin/busybox"
ln -s busybox "$stage/bin/sh"
install -m 0755 "$RSSLIM_TOP/harness/guest/init" "$stage/init"
for script in "$RSSLIM_TOP"/harness/guest/*.sh; do
	install -m 0755 "$script" "$stage/rsslim/"
done
install -m 0644 "$RSSLIM_TOP/harness/guest/splats.ere" "$RSSLIM_TOP/harness/guest/tap-check.awk" "$stage/rsslim/"
cp "$RSSLIM_TOP"/harness/scenarios/* "$stage/rsslim/scenarios/" 2>/dev/null || true

copy_with_libs /usr/bin/prlimit /usr/bin/prlimit
copy_with_libs /usr/bin/stress-ng /usr/bin/stress-ng

for f in "$bin_dir"/*; do
	[ -x "$f" ] && install -m 0755 "$f" "$stage/rsslim/bin/"
done
for f in "$test_dir"/*; do
	[ -x "$f" ] && install -m 0755 "$f" "$stage/rsslim/tests/"
done
# The kernel's own selftests (optional fourth argument), run by 80-upstream.
if [ -n "${4:-}" ]; then
	mkdir -p "$stage/rsslim/upstream"
	for f in "$4"/*; do
		[ -x "$f" ] && install -m 0755 "$f" "$stage/rsslim/upstream/"
	done
fi
echo "root:x:0:0:root:/root:/bin/sh" >"$stage/etc/passwd"
echo "nobody:x:65534:65534:nobody:/:/bin/sh" >>"$stage/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$stage/etc/group"

pack "$output"
