#!/bin/bash
# Draw the figures of a bench run and write its report page:
#   plots.sh RUN_DIR   ->   RUN_DIR/plots/*.png, *.svg, index.html
# A missing or incomplete run folder is reported; the figures that can be
# drawn from what is there are still drawn. Exit status 1 when something
# could not be drawn or gnuplot complained.
set -euo pipefail
# shellcheck source=harness/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$RSSLIM_TOP"

run=${1:-}
[ -n "$run" ] || die "usage: plots.sh RUN_DIR (or make plots RUN=<run-id>)"
[ -d "$run" ] || [ ! -d "results/$run" ] || run=results/$run
[ -d "$run" ] || die "no such run folder: $run"
out=$run/plots
mkdir -p "$out"
problems=0

# Scenario folders with the files a figure needs, as "dir label" lines.
dirs_with() {
	local file=$1 pattern=$2 d
	for d in "$run"/*.*/; do
		d=${d%/}
		[[ $(basename "$d") =~ $pattern ]] || continue
		[ -s "$d/$file" ] && [ "$(grep -vc '^#' "$d/$file")" -gt 1 ] && echo "$d $(basename "$d")"
	done
}

limit_mib() {
	local d=$1 lim
	grep -qE '^HOG_LIMIT=(rlimit|memhigh|damon)' "$d/scenario" 2>/dev/null || { echo 0; return; }
	lim=$(sed -n "s/^RSS_LIMIT=\(.*\)/\1/p" "$d/scenario" 2>/dev/null)
	[ -n "$lim" ] || lim=$(sed -n "s/^USER_RSS_LIMIT='\(.*\)'/\1/p" "$d/job.env" 2>/dev/null)
	case $lim in
	*K) echo "scale=2; ${lim%K} / 1024" | bc ;;
	*M) echo "${lim%M}" ;;
	*G) echo $((${lim%G} * 1024)) ;;
	*) echo 0 ;;
	esac
}

# plot NAME SCRIPT VARS: draw NAME.png and NAME.svg; any gnuplot output is a problem.
plot() {
	local name=$1 script=$2 vars=$3 fmt
	for fmt in png svg; do
		if ! gnuplot -e "out='$out/$name'; fmt='$fmt'; $vars" "plots/$script" >"$out/$name.log" 2>&1 ||
			[ -s "$out/$name.log" ]; then
			echo "error: $script ($fmt): $(head -3 "$out/$name.log" | tr '\n' ' ')" >&2
			problems=$((problems + 1))
			rm -f "$out/$name.$fmt"
		fi
		rm -f "$out/$name.log"
	done
}

join_col() { awk -v c="$1" '{ printf "%s%s", (NR > 1 ? " " : ""), $c }'; }

figures=()
for lru in mglru classic; do
	mapfile -t rows < <(dirs_with samples.tsv "\.$lru(\.r1)?$")
	if [ "${#rows[@]}" -gt 0 ]; then
		dirs=$(printf '%s\n' "${rows[@]}" | join_col 1)
		labels=$(printf '%s\n' "${rows[@]}" | join_col 2)
		limits=$(for r in "${rows[@]}"; do limit_mib "${r%% *}"; done | tr '\n' ' ')
		plot "rss-$lru" rss.gp "dirs='$dirs'; labels='$labels'; limits='$limits'"
		figures+=("rss-$lru:Resident memory of victim and hog over time, $lru")
	fi
	mapfile -t rows < <(dirs_with samples.tsv "^(victim|hog).*\.$lru(\.r1)?$")
	if [ "${#rows[@]}" -gt 0 ]; then
		plot "victim-majflt-$lru" victim-majflt.gp "lru='$lru'; dirs='$(printf '%s\n' "${rows[@]}" | join_col 1)'; labels='$(printf '%s\n' "${rows[@]}" | join_col 2)'"
		figures+=("victim-majflt-$lru:Victim major faults over time, $lru")
	fi
	mapfile -t rows < <(dirs_with victim_rounds.tsv "\.$lru(\.r1)?$")
	if [ "${#rows[@]}" -gt 0 ]; then
		plot "latency-$lru" latency-cdf.gp "lru='$lru'; dirs='$(printf '%s\n' "${rows[@]}" | join_col 1)'; labels='$(printf '%s\n' "${rows[@]}" | join_col 2)'"
		figures+=("latency-$lru:Victim round latency distribution, $lru")
	fi
done

# Scenarios in which somebody held the swap token at some point.
mapfile -t rows < <(dirs_with samples.tsv "\.mglru(\.r1)?$" | while read -r d label; do
	awk -F'\t' 'NR > 1 && $10 > 0 { found = 1; exit } END { exit !found }' "$d/samples.tsv" &&
		echo "$d $label"
done)
if [ "${#rows[@]}" -gt 0 ]; then
	plot token token.gp "dirs='$(printf '%s\n' "${rows[@]}" | join_col 1)'; labels='$(printf '%s\n' "${rows[@]}" | join_col 2)'"
	figures+=("token:Swap-token holder over time (MGLRU)")
fi

mapfile -t rows < <(dirs_with samples.tsv "^idle-2004")
if [ "${#rows[@]}" -gt 0 ]; then
	plot idle-2004 idle-2004.gp "dirs='$(printf '%s\n' "${rows[@]}" | join_col 1)'; labels='$(printf '%s\n' "${rows[@]}" | join_col 2)'"
	figures+=("idle-2004:The 2004 test: the sleeper's resident memory")
fi

if [ -s "$run/summary.tsv" ]; then
	pivot=$out/summary-pivot.tsv
	# Per scenario and LRU: each panel's value with the low and high end of
	# its interval over the repeats (the value itself for a single run).
	awk -F'\t' 'BEGIN { split("victim_p99_us victim_majflt hog_kpages_s", keys, " ") }
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$(c["scenario"]) == "victim-alone" || $(c["scenario"]) ~ /^(idle|thrash)/ { next }
		{ s = $(c["scenario"]); if (!(s in seen)) { seen[s] = 1; order[++n] = s }
		  for (k = 1; k <= 3; k++) { key = keys[k]; x = $(c[key])
		    lo = (key "_ci_lo") in c ? $(c[key "_ci_lo"]) : ""
		    hi = (key "_ci_hi") in c ? $(c[key "_ci_hi"]) : ""
		    v[s, $(c["lru"]), k] = g(x) "\t" g(lo == "" ? x : lo) "\t" g(hi == "" ? x : hi) } }
		function g(x) { return x == "" ? "NaN" : x }
		function get(s, l, k) { return (s, l, k) in v ? v[s, l, k] : "NaN\tNaN\tNaN" }
		END { printf "scenario"
		  for (k = 1; k <= 3; k++) for (l = 1; l <= 2; l++) printf "\t%s_%s\tlo\thi", keys[k], l == 1 ? "mglru" : "classic"
		  print ""
		  for (i = 1; i <= n; i++) { s = order[i]; printf "%s", s
		    for (k = 1; k <= 3; k++) printf "\t%s\t%s", get(s, "mglru", k), get(s, "classic", k)
		    print "" } }' \
		"$run/summary.tsv" >"$pivot"
	# Only when some scenario has a victim or hog figure to show.
	if awk -F'\t' 'NR > 1 { for (i = 2; i <= NF; i++) if ($i != "NaN") found = 1 } END { exit !found }' "$pivot"; then
		# The LRUs with values in a panel's columns (gnuplot fails on an all-NaN series).
		with_values() {
			awk -F'\t' -v m="$1" -v c="$2" 'NR > 1 { if ($m != "NaN") a = 1; if ($c != "NaN") b = 1 }
				END { printf "%s%s", a ? "mglru " : "", b ? "classic" : "" }' "$pivot"
		}
		majflt_max=$(awk -F'\t' 'NR > 1 { for (i = 8; i <= 13; i++) if ($i != "NaN" && $i > m) m = $i }
			END { print m + 0 }' "$pivot")
		plot summary summary.gp "pivot='$pivot'; lrus='$(with_values 2 5)'; hog_lrus='$(with_values 14 17)'; majflt_max=$majflt_max"
		figures+=("summary:Victim p99, victim major faults and hog work by scenario, with the interval over repeats")
	fi
else
	echo "error: $run has no summary.tsv (incomplete run?): summary figure skipped" >&2
	problems=$((problems + 1))
fi

# The report page: metadata, summary table, every figure drawn.
html() { sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g'; }
{
	echo "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>rsslim run $(basename "$run")</title>"
	echo "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}td:first-child,td:nth-child(2){text-align:left}img{max-width:100%}</style></head><body>"
	echo "<h1>rsslim bench run $(basename "$run" | html)</h1>"
	if [ -s "$run/meta.json" ]; then
		echo "<h2>Run</h2><table>"
		jq -r 'to_entries[] | "\(.key)\t\(.value)"' "$run/meta.json" | html |
			awk -F'\t' '{ printf "<tr><th>%s</th><td>%s</td></tr>\n", $1, $2 }'
		echo "</table>"
	fi
	if [ -s "$run/summary.tsv" ]; then
		echo "<h2>Summary</h2><table>"
		html <"$run/summary.tsv" | awk -F'\t' '{ tag = NR == 1 ? "th" : "td"; printf "<tr>"
			for (i = 1; i <= NF; i++) printf "<%s>%s</%s>", tag, $i, tag; print "</tr>" }'
		echo "</table>"
	fi
	[ ! -s "$run/report.txt" ] || { echo "<pre>"; html <"$run/report.txt"; echo "</pre>"; }
	for f in "${figures[@]}"; do
		name=${f%%:*}
		[ -f "$out/$name.png" ] || continue
		echo "<h2>$(echo "${f#*:}" | html)</h2><p><a href=\"$name.svg\"><img src=\"$name.png\" alt=\"$name\"></a></p>"
	done
	echo "</body></html>"
} >"$out/index.html"
log "report page: $out/index.html (${#figures[@]} figures)"
[ "$problems" -eq 0 ]
