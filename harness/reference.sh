#!/bin/bash
# Make results/reference/ (committed, well under 1 MiB) from one or more
# bench runs: the small result files of every scenario, the summary, the
# report and the headline figures. A scenario in a later run replaces the
# same scenario of an earlier one (to refresh a few scenarios without
# rerunning all). The samples themselves are left out: they are big.
#
#   harness/reference.sh results/<run-id> [results/<run-id> ...]
set -euo pipefail
# shellcheck source=harness/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$RSSLIM_TOP"
[ "$#" -gt 0 ] || die "usage: harness/reference.sh RUN_DIR [RUN_DIR ...]"
for run in "$@"; do
	[ -s "$run/meta.json" ] || die "$run is not a complete bench run (no meta.json)"
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
	done
done
jq --arg runs "$*" '. + {reference_from: $runs}' "$1/meta.json" >"$merged/meta.json"
python3 harness/summarize.py "$merged" >"$merged/report.txt"
harness/plots.sh "$merged" >/dev/null 2>&1 || log "some figures could not be drawn"

out=results/reference.new
rm -rf "$out"
mkdir -p "$out/plots"
cp "$merged"/{meta.json,summary.tsv,summary.json,report.txt} "$out/"
for d in "$merged"/*.*/; do
	d=${d%/}
	mkdir -p "$out/$(basename "$d")"
	for f in scenario job.env victim.tsv hog.tsv hog2.tsv guest-settings.txt limit.tsv; do
		[ ! -f "$d/$f" ] || cp "$d/$f" "$out/$(basename "$d")/"
	done
done
for f in summary idle-2004 rss-mglru token; do
	[ ! -f "$merged/plots/$f.png" ] || cp "$merged/plots/$f.png" "$out/plots/"
done
rm -rf results/reference
mv "$out" results/reference
log "results/reference: $(du -sk results/reference | cut -f1) KiB"
