#!/bin/bash
# Make results/reference/ (committed, a few hundred KiB) from one or more
# finished bench runs: every file of every scenario that harness/summarize.py
# reads (the bigger ones gzipped, which it reads as they are), the summary,
# the report and the headline figures, so that the committed summary can be
# regenerated from git (tests/host/plots.sh does). A scenario in a later run
# replaces the same scenario of an earlier one (to refresh a few scenarios
# without rerunning all). Console logs and dmesg are left out. The first run
# may be results/reference itself, whose runs are gone from a fresh checkout.
#
#   harness/reference.sh results/<run-id> [results/<run-id> ...]
#   harness/reference.sh results/reference results/<run-id> ...
#
# REFERENCE_DIR (default results/reference) is where it goes; it is replaced
# only once the new one is complete (tests/host/reference.sh uses a scratch
# one).
set -euo pipefail
# shellcheck source=harness/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$RSSLIM_TOP"
[ "$#" -gt 0 ] || die "usage: harness/reference.sh RUN_DIR [RUN_DIR ...]"
for run in "$@"; do
	case $run in
	*.partial | *.partial/) die "$run is an unfinished bench run (.partial)" ;;
	esac
	[ ! -e "$run/INTERRUPTED" ] || die "$run was interrupted"
	{ [ -s "$run/meta.json" ] && [ -s "$run/summary.json" ]; } ||
		die "$run is not a finished bench run (no meta.json or summary.json)"
	! ls -d "$run"/*/INCOMPLETE >/dev/null 2>&1 || die "$run has incomplete scenarios"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
merged=$work/run
mkdir -p "$merged"
for run in "$@"; do
	for d in "$run"/*.*/; do
		d=${d%/}
		rm -rf "${merged:?}/$(basename "$d")"
		cp -r "$d" "$merged/"
		# (What a reference gzipped, the figures want plain.)
		find "$merged/$(basename "$d")" -name '*.tsv.gz' -exec gunzip {} +
	done
done
# A reference given as a run stands for the runs it came from.
from=
for run in "$@"; do
	if ref=$(jq -er '.reference_from // empty' "$run/meta.json"); then from+=" $ref"; else from+=" $run"; fi
done
jq --arg from "$from" '. + {reference_from: ($from | split(" ") | map(select(. != "")) | join(" "))}' \
	"$1/meta.json" >"$merged/meta.json"
python3 harness/summarize.py "$merged" >"$merged/report.txt" ||
	die "the merged runs do not summarise cleanly: $(grep -m1 '^INVALID' "$merged/report.txt")"
harness/plots.sh "$merged" >/dev/null 2>&1 || log "some figures could not be drawn"

dest=${REFERENCE_DIR:-results/reference}
out=$dest.new
VMSTAT_KEPT=$(python3 -c 'import sys; sys.path.insert(0, "harness"); import summarize; print("|".join(summarize.VMSTAT_KEYS))')
rm -rf "$out"
mkdir -p "$out/plots"
cp "$merged"/{meta.json,summary.tsv,summary.json,report.txt} "$out/"
for d in "$merged"/*.*/; do
	d=${d%/}
	mkdir -p "$out/$(basename "$d")"
	for f in scenario job.env status guest-settings.txt victim.tsv hog.tsv hog2.tsv trimd.tsv limit.tsv zram-mm_stat host.json \
		cpu.before cpu.after; do
		[ ! -f "$d/$f" ] || cp "$d/$f" "$out/$(basename "$d")/"
	done
	for f in samples.tsv victim_rounds.tsv; do
		[ ! -f "$d/$f" ] || gzip -9n <"$d/$f" >"$out/$(basename "$d")/$f.gz"
	done
	# Only the counters summarize.py reads (a whole /proc/vmstat is 180 lines).
	for f in vmstat.before vmstat.after; do
		[ ! -f "$d/$f" ] ||
			grep -E "^($VMSTAT_KEPT) " "$d/$f" >"$out/$(basename "$d")/$f" || true
	done
done
# The per-run RSS figure (850 KiB for 33 scenarios) is redrawn by
# 'make plots RUN=<run-id>' from the run itself; the README shows these.
for f in summary idle-2004 token; do
	[ ! -f "$merged/plots/$f.png" ] || cp "$merged/plots/$f.png" "$out/plots/"
done
rm -rf "$dest"
mv "$out" "$dest"
log "$dest: $(du -sk --apparent-size "$dest" | cut -f1) KiB"
