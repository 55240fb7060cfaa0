#!/bin/bash
# Host tests of the harness's handling of bad input: each case fails with
# one clear "error:" line and a non-zero exit, before anything is built or
# booted, and destroys nothing.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/host/tap-lib.sh
. "$top/tests/host/tap-lib.sh"
tap_start 11
# fails_with PATTERN CMD...: non-zero exit and one "error:" line on stderr matching
# PATTERN (progress lines may come before it).
fails_with() {
	local pattern=$1 rc=0
	shift
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ "$rc" -eq 0 ] || [ "$(grep -c '^error:' "$tmp/err")" -ne 1 ] || ! grep -q "$pattern" "$tmp/err"; then
		echo "# '$*' gave exit $rc, stderr: $(head -c 300 "$tmp/err")"
		return 1
	fi
}

list_results() { find "$top/results" -mindepth 1 -maxdepth 1 2>/dev/null | sort | tr '\n' ' '; }
results_before=$(list_results)
rc=0
for bad in "RAM=abc:RAM must be" "SWAP=-1:SWAP must be" "DURATION=0:DURATION must be" \
	"SCENARIOS=no-such-scenario:unknown scenario" "LRU=fifo:LRU must be" \
	"RSS_LIMIT=12Q:RSS_LIMIT must be" "REPEAT=0:REPEAT must be" "MODE=7:MODE must be" \
	"SAMPLE_INTERVAL=5s:SAMPLE_INTERVAL must be" "ORDER=sorted:ORDER must be" "SEED=x1:SEED must be" \
	"SWAP_KIND=tape:SWAP_KIND must be" "JOBS=0:JOBS must be" "SWEEP=no-such-sweep:no sweep file" \
	"RESUME=../x:RESUME must be a run id" "RESUME=20000101-000000:no resumable run" \
	"HOG_RANDOM_PCT=101:HOG_RANDOM_PCT must be"; do
	fails_with "^error: ${bad#*:}" env "${bad%%:*}" "$top/harness/bench.sh" || rc=1
done
# Sweep files: an axis of a setting that cannot be one, a key that is no
# setting, an axis value that is no size, a key set twice.
printf 'DURATION=5,10\n' >"$tmp/sweep-duration"
printf 'RAM=256M,1G\nCOLOUR=red\n' >"$tmp/sweep-colour"
printf 'RAM=256M,12Q\n' >"$tmp/sweep-badram"
for bad in "sweep-duration:DURATION cannot be an axis" "sweep-colour:COLOUR is not a bench setting" \
	"sweep-badram:RAM must be a size"; do
	fails_with "^error: .*${bad#*:}" env SWEEP="$tmp/${bad%%:*}" "$top/harness/bench.sh" || rc=1
done
fails_with "^error: RAM is set both" env RAM=1G SWEEP="$tmp/sweep-colour" "$top/harness/bench.sh" || rc=1
fails_with "^error: HOG cannot be used with scenario 'idle-2004-pid'" \
	env SCENARIOS=idle-2004-pid HOG='hog --size 10M' "$top/harness/bench.sh" || rc=1
[ "$results_before" = "$(list_results)" ] || rc=1
result $rc "bench refuses bad variables before building anything, results/ untouched"

rc=0
fails_with "^error: RAM must be" "$top/harness/qemu.sh" --job test --out "$tmp/q" --ram 12X || rc=1
fails_with "^error: SWAP must be" "$top/harness/qemu.sh" --job test --out "$tmp/q" --swap -1 || rc=1
result $rc "qemu runner refuses bad RAM and SWAP sizes"

# A fake kernel tarball and patch series, so the tree logic runs in seconds.
fake=$tmp/fake
mkdir -p "$fake/src/linux-source-6.12" "$fake/top/kernel-patch" "$fake/top/harness"
cp "$top"/harness/lib.sh "$top"/harness/kernel.sh "$fake/top/harness/"
printf 'line one\nline two\n' >"$fake/src/linux-source-6.12/Makefile"
tar -cJf "$fake/linux.tar.xz" -C "$fake/src" linux-source-6.12
run_kernel() {
	RSSLIM_TOP=$fake/top BUILD_DIR=$fake/build KERNEL_TARBALL=$fake/linux.tar.xz \
		"$fake/top/harness/kernel.sh" "$@"
}

rc=0
fails_with "^error: missing .*no-such.tar.xz" env RSSLIM_TOP="$fake/top" BUILD_DIR="$fake/build" \
	KERNEL_TARBALL=/no-such.tar.xz "$fake/top/harness/kernel.sh" tree || rc=1
[ ! -e "$fake/build/linux" ] || rc=1
result $rc "a missing kernel tarball is named, with the package to install"

cat >"$fake/top/kernel-patch/0001-good.patch" <<'PATCH'
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: rsslim developers <dev@rsslim.invalid>
Date: Thu, 3 Dec 2026 00:00:00 +0000
Subject: [PATCH] make: change line two

Signed-off-by: rsslim developers <dev@rsslim.invalid>
---
 Makefile | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/Makefile b/Makefile
--- a/Makefile
+++ b/Makefile
@@ -1,2 +1,2 @@
 line one
-line two
+line 2
-- 
2.39.5
PATCH
cp "$fake/top/kernel-patch/0001-good.patch" "$tmp/good.patch"
echo 0001-good.patch >"$fake/top/kernel-patch/series"
rc=0
run_kernel tree >/dev/null 2>&1 || rc=1
[ "$(sed -n 2p "$fake/build/linux/Makefile" 2>/dev/null)" = "line 2" ] || rc=1
result $rc "the series is applied with git am onto the extracted tree"

sed 's/^ line one/ line ONE/; s/make: change line two/make: conflicting change/' \
	"$fake/top/kernel-patch/0001-good.patch" >"$fake/top/kernel-patch/0002-bad.patch"
printf '0001-good.patch\n0002-bad.patch\n' >"$fake/top/kernel-patch/series"
head_before=$(git -C "$fake/build/linux" rev-parse HEAD)
rc=0
fails_with "^error: kernel-patch/series does not apply" run_kernel tree || rc=1
[ "$(git -C "$fake/build/linux" rev-parse HEAD)" = "$head_before" ] || rc=1
[ -z "$(git -C "$fake/build/linux" status --porcelain --untracked-files=no)" ] || rc=1
result $rc "a series that does not apply is reported and the tree is left as it was"

echo 0001-good.patch >"$fake/top/kernel-patch/series"
echo "local work" >>"$fake/build/linux/Makefile"
git -C "$fake/build/linux" commit -qam "unexported work"
echo "# changed" >>"$fake/top/kernel-patch/series"
rc=0
fails_with "^error: build/linux has commits that are not in kernel-patch/" run_kernel tree || rc=1
git -C "$fake/build/linux" log -1 --format=%s | grep -q "unexported work" || rc=1
result $rc "unexported commits in the tree are never thrown away"

# make kernel-patches: each commit stays in its part (a directory of
# kernel-patch/ with its own cover letter and numbering), found by subject;
# a new commit joins the part of the one before it.
export_keeps_parts() {
	local got want
	rm -rf "$fake/build" "$fake/top/kernel-patch"/*
	mkdir -p "$fake/top/kernel-patch/a-first" "$fake/top/kernel-patch/b-second"
	cp "$tmp/good.patch" "$fake/top/kernel-patch/a-first/0001-make-change-line-two.patch"
	echo "a's cover letter" >"$fake/top/kernel-patch/a-first/0000-cover-letter.patch"
	echo "b's cover letter" >"$fake/top/kernel-patch/b-second/0000-cover-letter.patch"
	echo a-first/0001-make-change-line-two.patch >"$fake/top/kernel-patch/series"
	run_kernel tree >/dev/null 2>&1 || { echo "# the tree did not apply"; return 1; }
	echo "line three" >>"$fake/build/linux/Makefile"
	git -C "$fake/build/linux" commit -qam "make: add line three"
	run_kernel export >/dev/null 2>&1 || { echo "# the first export failed"; return 1; }
	# Move the new patch to the second part, as a maintainer splitting a series would.
	mv "$fake/top/kernel-patch/a-first/0002-make-add-line-three.patch" "$fake/top/kernel-patch/b-second/0001-make-add-line-three.patch"
	printf '%s\n' a-first/0001-make-change-line-two.patch b-second/0001-make-add-line-three.patch \
		>"$fake/top/kernel-patch/series"
	run_kernel tree >/dev/null 2>&1 || { echo "# the split series did not apply"; return 1; }
	echo "line four" >>"$fake/build/linux/Makefile"
	git -C "$fake/build/linux" commit -qam "make: add line four"
	run_kernel export >/dev/null 2>&1 || { echo "# the second export failed"; return 1; }
	got=$(grep -v '^#' "$fake/top/kernel-patch/series")
	want=$(printf '%s\n' a-first/0001-make-change-line-two.patch b-second/0001-make-add-line-three.patch \
		b-second/0002-make-add-line-four.patch)
	[ "$got" = "$want" ] || { echo "# series: $got"; return 1; }
	grep -q '^Subject: \[PATCH v2 2/2\] make: add line four$' "$fake/top/kernel-patch/b-second/0002-make-add-line-four.patch" ||
		{ echo "# part b is not numbered on its own"; return 1; }
	[ "$(cat "$fake/top/kernel-patch/b-second/0000-cover-letter.patch")" = "b's cover letter" ] || return 1
	[ ! -e "$fake/top/kernel-patch/a-first/0002-make-add-line-three.patch" ] || { echo "# a stale patch stayed"; return 1; }
}
check "make kernel-patches keeps each commit in its part, numbered within it" export_keeps_parts

# KCONFIG=parts-1-2: the first part checked out and the others applied on
# it; a choice that is not a set of the series' parts is refused.
parts_tree() {
	fails_with "^error: kernel flavour parts-2: the parts chosen must start with 1" run_kernel tree parts-2 || return 1
	fails_with "^error: kernel flavour parts-1-3: the series has parts 1-2" run_kernel tree parts-1-3 || return 1
	fails_with "^error: kernel flavour parts-1-x: the series has parts 1-2" run_kernel tree parts-1-x || return 1
	run_kernel tree parts-1 >/dev/null 2>&1 || { echo "# parts-1 failed"; return 1; }
	[ "$(git -C "$fake/build/linux-parts" log --format=%s | head -1)" = "make: change line two" ] || return 1
	run_kernel tree parts-1-2 >/dev/null 2>&1 || { echo "# parts-1-2 failed"; return 1; }
	[ "$(tail -1 "$fake/build/linux-parts/Makefile")" = "line four" ] || return 1
}
check "KCONFIG=parts-1-2 builds the chosen parts on the first, and refuses other choices" parts_tree

# deps_cover DEPS_FILE: every command the host scripts and the Makefile run
# (harness/list-commands.py) is installed by DEPS_FILE's list, or comes with
# every Debian system (an Essential or Priority: required package).
deps_cover() {
	local deps_file=$1 entry cmd path cand pkg files=" " pkgs=" " missing=0 needed=()
	eval "$(sed -n '/^needed=(/,/^)/p' "$deps_file")"
	for entry in "${needed[@]}"; do
		pkgs+="${entry%%:*} "
		files+="$(basename "${entry#*:}") "
	done
	while read -r cmd; do
		[[ $files == *" $cmd "* ]] && continue
		pkg=
		path=$(command -v "$cmd" || true)
		for cand in "$path" "$(readlink -f "$path" || true)" "/usr$path" "${path#/usr}"; do
			[ -n "$cand" ] || continue
			pkg=$(dpkg-query -S "$cand" 2>/dev/null | grep -v '^diversion' | head -1 | cut -d: -f1 || true)
			[ -n "$pkg" ] && break
		done
		if [ -z "$pkg" ]; then
			echo "# $cmd: not installed here and not in $deps_file"
			missing=1
		elif [[ $pkgs != *" $pkg "* ]] &&
			! dpkg-query -W -f='${Essential} ${Priority}\n' "$pkg" | grep -qE '^yes|required'; then
			echo "# $cmd comes from $pkg, which $deps_file does not install"
			missing=1
		fi
	done < <(python3 "$top/harness/list-commands.py" "$top"/harness/*.sh "$top"/tests/host/*.sh \
		"$top/.ci/run" "$top/Makefile")
	return "$missing"
}
check "harness/deps.sh installs every command the host scripts and the Makefile run" \
	deps_cover "$top/harness/deps.sh"

# The check above can fail: without jq in the list, jq is named.
deps_check_fails() {
	grep -v '^	jq:' "$top/harness/deps.sh" >"$tmp/deps-without-jq.sh"
	if deps_cover "$tmp/deps-without-jq.sh" >"$tmp/cover.out"; then
		echo "# the scan passed a list without jq"
		return 1
	fi
	grep -q '^# jq comes from jq, which' "$tmp/cover.out"
	[ "$(grep -c . "$tmp/cover.out")" -eq 1 ] || { sed 's/^/#   /' "$tmp/cover.out"; return 1; }
}
check "the dependency scan names a command whose package is missing from the list" deps_check_fails

# make test's counting: a failing, dying, short or silent TAP script, and a
# failure in the middle of a tap-lib check, each turn the closing line red.
tap_counting() {
	local out last rc=0
	"$top/harness/tap-runner.sh" run "$tmp/pass.log" "$top/tests/fixtures/tap/passes.sh" >/dev/null
	out=$("$top/harness/tap-runner.sh" summary "$tmp/pass.log")
	[ "$out" = "2 passed, 0 failed" ] || { echo "# passing fixture: $out"; return 1; }
	"$top/harness/tap-runner.sh" run "$tmp/all.log" "$top"/tests/fixtures/tap/*.sh >/dev/null
	out=$("$top/harness/tap-runner.sh" summary "$tmp/all.log") || rc=$?
	last=$(tail -n 1 <<<"$out")
	echo "# all fixtures: $last (exit $rc)"
	[ "$last" = "7 passed, 7 failed" ] && [ "$rc" -ne 0 ] || return 1
	# The failures are named again above the count line.
	[ "$(grep -c '^#   not ok ' <<<"$out")" -eq 7 ] || { echo "# failures not listed above the count"; return 1; }
	# ... each with the reason its test wrote just before it.
	grep -A 6 '^#   not ok 2 second$' <<<"$out" | grep -q '^#       # second: expected 4, got 3$' ||
		{ echo "# the reason of fails.sh is not listed with it"; return 1; }
	for f in fails dies short-plan exits-nonzero silent check-midway; do
		grep -q "^not ok .*" <(sed -n "\|^# host: .*/$f.sh|,\|^# host: |p" "$tmp/all.log") ||
			{ echo "# $f.sh not counted as a failure"; return 1; }
	done
}
check "a failing, dying, short or silent TAP script counts as a failure in the closing line, and is named above it" tap_counting
[ "$failed" -eq 0 ]
