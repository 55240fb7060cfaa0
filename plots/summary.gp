# Figure 5: per scenario, victim p99 latency, victim major faults and the
# hog's work rate, MGLRU and classic LRU side by side; each bar has an error
# bar for the interval of the median over the repeats (none for one run).
# Variables: pivot (TSV: scenario, then for p99, majflt and hog kpage/s an
# MGLRU and a classic triple value, low, high), out, fmt, lrus (the LRUs with
# victim figures), hog_lrus (those with hog work: none for a custom HOG command,
# which reports none), majflt_max (the largest victim major-fault figure).
w = 1200
h = 900
load "plots/common.gp"
set multiplot layout 3, 1 title "Summary by scenario (MGLRU vs classic LRU; error bars: interval of the median over the repeats)"
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -30 noenhanced
set key inside top right
# Column of LRU k's value in a panel whose MGLRU column is `first`.
col(first, set, k) = first + (word(set, k) eq "mglru" ? 0 : 3)
name(set, k) = word(set, k) eq "mglru" ? "MGLRU" : "classic"
colour(set, k) = word(set, k) eq "mglru" ? "#1f77b4" : "#ff7f0e"
# Log axis: protected rows (tens of us) beside unprotected ones (hundreds of ms).
set title "victim p99 latency (us, log scale, from when each round was due)"
set logscale y
set yrange [1:*]
plot for [k = 1:words(lrus)] pivot \
	using (column(col(2, lrus, k))):(column(col(2, lrus, k) + 1)):(column(col(2, lrus, k) + 2)):xtic(1) skip 1 \
	title name(lrus, k) lc rgb colour(lrus, k)
unset logscale y
# An all-zero panel (no victim fault anywhere) gets a fixed axis: gnuplot
# warns about an empty autoscaled range.
if (majflt_max > 0) { set yrange [0:*] } else { set yrange [0:1] }
set title "victim major faults"
plot for [k = 1:words(lrus)] pivot \
	using (column(col(8, lrus, k))):(column(col(8, lrus, k) + 1)):(column(col(8, lrus, k) + 2)):xtic(1) skip 1 \
	title name(lrus, k) lc rgb colour(lrus, k)
# Log axis too: a hog beside a server that is away does a thousand times
# the work of a limited one, which would flatten every other bar to zero.
set title "hog work (thousand pages touched per second, log scale)"
if (words(hog_lrus) > 0) {
	set logscale y
	set yrange [1:*]
	plot for [k = 1:words(hog_lrus)] pivot \
		using (column(col(14, hog_lrus, k))):(column(col(14, hog_lrus, k) + 1)):(column(col(14, hog_lrus, k) + 2)):xtic(1) skip 1 \
		title name(hog_lrus, k) lc rgb colour(hog_lrus, k)
} else {
	unset xtics
	unset ytics
	unset key
	set label 1 "not measured: a custom HOG command reports no work" at graph 0.5, 0.5 center
	plot [0:1] [0:1] NaN notitle
}
unset multiplot
