#!/bin/bash
# Check the Debian packages rsslim needs; install the missing ones when root,
# otherwise print the one apt-get line to run and fail.
set -euo pipefail
# shellcheck source=harness/lib.sh
. "$(dirname "$0")/lib.sh"

# package:file-that-proves-it-is-installed. Every command the host scripts and
# the Makefile run is either here or in a package every Debian system has
# (Essential or Priority required); tests/host/harness.sh checks that with a
# scan of the scripts (harness/list-commands.py). The rest are needed by
# programs we run rather than by our scripts, as the comments say.
needed=(
	linux-source-6.12:/usr/src/linux-source-6.12.tar.xz
	qemu-system-x86:/usr/bin/qemu-system-x86_64
	busybox-static:/bin/busybox # the guest's userland
	util-linux:/usr/bin/prlimit # copied into the guest
	stress-ng:/usr/bin/stress-ng # copied into the guest, a HOG= example
	# redis-server for the guest (harness/initramfs.sh --apps): the binary is
	# in redis-tools, without the host daemon the redis-server package starts.
	redis-tools:/usr/bin/redis-check-rdb
	gnuplot-nox:/usr/bin/gnuplot-nox
	ccache:/usr/bin/ccache
	gcc:/usr/bin/gcc
	libc6-dev:/usr/lib/x86_64-linux-gnu/libc.a # the static guest programs
	make:/usr/bin/make
	# The kernel build's own tools (Documentation/process/changes.rst):
	# flex, bison and bc for the build, libelf and libssl headers for the host
	# programs it compiles, rsync for `make headers_install` (the uapi headers
	# the upstream selftests build against), cpio and xz for the source tarball.
	flex:/usr/bin/flex
	bison:/usr/bin/bison
	bc:/usr/bin/bc
	libelf-dev:/usr/include/libelf.h
	libssl-dev:/usr/include/openssl/ssl.h
	rsync:/usr/bin/rsync # also how parallel sends a remote bench job its files
	cpio:/usr/bin/cpio
	xz-utils:/usr/bin/xz
	git:/usr/bin/git
	perl:/usr/bin/perl # checkpatch.pl and the kernel build
	python3:/usr/bin/python3 # harness/summarize.py
	shellcheck:/usr/bin/shellcheck
	jq:/usr/bin/jq
	parallel:/usr/bin/parallel # runs the bench's guest jobs, here or on HOSTS over ssh
	procps:/usr/bin/pgrep # the fault tests look for QEMU left behind
	systemd:/usr/bin/systemd-analyze # tests/host/rsstrimd.sh verifies the rsstrimd unit
)

missing=()
for entry in "${needed[@]}"; do
	pkg=${entry%%:*}
	file=${entry#*:}
	[ -e "$file" ] || missing+=("$pkg")
done

[ "${#missing[@]}" -eq 0 ] && exit 0

line="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "missing packages: ${missing[*]}" >&2
	echo "run as root: $line" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
timed "apt-get update" apt-get update -q >/dev/null
timed "installing ${missing[*]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
for entry in "${needed[@]}"; do
	[ -e "${entry#*:}" ] || die "package ${entry%%:*} installed but ${entry#*:} is still missing"
done
