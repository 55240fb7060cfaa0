#!/bin/bash
# Check the Debian packages rsslim needs; install the missing ones when root,
# otherwise print the one apt-get line to run and fail.
set -euo pipefail
# shellcheck source=harness/lib.sh
. "$(dirname "$0")/lib.sh"

# package:file-that-proves-it-is-installed
needed=(
	linux-source-6.12:/usr/src/linux-source-6.12.tar.xz
	qemu-system-x86:/usr/bin/qemu-system-x86_64
	busybox-static:/bin/busybox
	util-linux:/usr/bin/prlimit
	stress-ng:/usr/bin/stress-ng
	gnuplot-nox:/usr/bin/gnuplot-nox
	ccache:/usr/bin/ccache
	gcc:/usr/bin/gcc
	make:/usr/bin/make
	flex:/usr/bin/flex
	bison:/usr/bin/bison
	bc:/usr/bin/bc
	libelf-dev:/usr/include/libelf.h
	libssl-dev:/usr/include/openssl/ssl.h
	cpio:/usr/bin/cpio
	xz-utils:/usr/bin/xz
	e2fsprogs:/sbin/mkfs.ext2
	git:/usr/bin/git
	perl:/usr/bin/perl
	python3:/usr/bin/python3
	shellcheck:/usr/bin/shellcheck
	jq:/usr/bin/jq
	libc6-dev:/usr/lib/x86_64-linux-gnu/libc.a
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
