#!/bin/bash
# Host tests of harness/reference.sh, which makes results/reference (the
# README's numbers) from bench runs, and which a fresh checkout can only feed
# with results/reference itself: refreshed from itself it is the same to the
# byte; a later run's scenario replaces the same one and nothing else; bad
# runs are refused with one line, and the reference in place is left as it was.
# Each writes to a scratch REFERENCE_DIR, never to results/reference.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/host/tap-lib.sh
. "tests/host/tap-lib.sh"
tap_start 3

ref=results/reference
# The scenario folder the later run replaces, and the repeat whose data it brings.
replaced=victim-alone.mglru.r1
donor=victim-alone.mglru.r2

# tree_sum DIR: one checksum for every file under DIR and its name.
tree_sum() {
	(cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
}

from_itself() {
	REFERENCE_DIR=$tmp/self harness/reference.sh "$ref" 2>"$tmp/self.err" ||
		{ sed 's/^/# /' "$tmp/self.err"; return 1; }
	diff -r --exclude=plots "$ref" "$tmp/self" | head -5 | sed 's/^/# /'
	diff -rq --exclude=plots "$ref" "$tmp/self" >/dev/null
	# The figures are redrawn, by whatever gnuplot this machine has.
	[ "$(ls "$ref/plots")" = "$(ls "$tmp/self/plots")" ]
}
check "results/reference refreshed from itself is the same to the byte (summary, data), with its figures" from_itself

# The later run holds one scenario folder, with another repeat's data, as a
# bench run would after a rerun of one scenario.
later_replaces() {
	local later=$tmp/later d
	[ -d "$tmp/self" ] || cp -r "$ref" "$tmp/self"
	mkdir -p "$later/$replaced"
	jq 'del(.reference_from)' "$ref/meta.json" >"$later/meta.json"
	cp "$ref/summary.json" "$later/"
	cp -r "$ref/$donor/." "$later/$replaced/"
	find "$later/$replaced" -name '*.gz' -exec gunzip {} +
	REFERENCE_DIR=$tmp/merged harness/reference.sh "$tmp/self" "$later" 2>"$tmp/merged.err" ||
		{ sed 's/^/# /' "$tmp/merged.err"; return 1; }
	diff -rq "$ref/$donor" "$tmp/merged/$replaced" >/dev/null ||
		{ echo "# $replaced is not the later run's"; return 1; }
	for d in "$ref"/*.*/; do
		d=$(basename "$d")
		[ "$d" = "$replaced" ] && continue
		diff -rq "$ref/$d" "$tmp/merged/$d" >/dev/null || { echo "# $d changed"; return 1; }
	done
	# The runs the reference stands for: the committed ones, then the later one.
	[ "$(jq -r .reference_from "$tmp/merged/meta.json")" = "$(jq -r .reference_from "$ref/meta.json") $later" ] ||
		{ echo "# reference_from: $(jq -r .reference_from "$tmp/merged/meta.json")"; return 1; }
	# The victim-alone row now counts r2's data twice: it changed, and
	# still stands for 5 runs.
	if cmp -s <(grep $'^victim-alone\t' "$ref/summary.tsv") <(grep $'^victim-alone\t' "$tmp/merged/summary.tsv"); then
		echo "# the victim-alone row did not change"
		return 1
	fi
	[ "$(jq '[.scenarios[] | select(.scenario == "victim-alone") | .runs] == [5]' "$tmp/merged/summary.json")" = true ]
}
check "a later run's scenario replaces the same one in the reference, the rest is kept" later_replaces

# refused NAME RUN...: reference.sh on these runs fails with one error
# line naming the problem, and the reference in place is untouched.
refused() {
	local expect=$1 before rc=0
	shift
	before=$(tree_sum "$tmp/self")
	REFERENCE_DIR=$tmp/self harness/reference.sh "$@" >/dev/null 2>"$tmp/refused.err" || rc=$?
	[ "$rc" -ne 0 ] || { echo "# accepted $*"; return 1; }
	if [ "$(wc -l <"$tmp/refused.err")" -ne 1 ] || ! grep -q "^error: .*$expect" "$tmp/refused.err"; then
		sed 's/^/# /' "$tmp/refused.err"
		return 1
	fi
	[ "$(tree_sum "$tmp/self")" = "$before" ] || { echo "# the reference changed"; return 1; }
	[ ! -e "$tmp/self.new" ]
}
bad_runs() {
	local b=$tmp/bad
	[ -d "$tmp/self" ] || cp -r "$ref" "$tmp/self"
	mkdir -p "$b/run.partial" "$b/stopped" "$b/half/$replaced" "$b/empty"
	for d in "$b/run.partial" "$b/stopped" "$b/half"; do cp "$ref"/{meta.json,summary.json} "$d/"; done
	echo "interrupted by signal" >"$b/stopped/INTERRUPTED"
	echo "guest did not complete the scenario" >"$b/half/$replaced/INCOMPLETE"
	refused "unfinished bench run (.partial)" "$ref" "$b/run.partial"
	refused "was interrupted" "$ref" "$b/stopped"
	refused "has incomplete scenarios" "$ref" "$b/half"
	refused "not a finished bench run" "$b/empty"
	refused "usage"
}
check "a .partial, interrupted, incomplete or empty run is refused in one line; the reference is untouched" bad_runs

[ "$failed" -eq 0 ]
