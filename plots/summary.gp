# Figure 5: per scenario, victim p99 latency, victim major faults and hog
# throughput, MGLRU and classic LRU side by side.
# Variables: pivot (TSV: scenario, then mglru/classic pairs of p99, majflt, hog%), out, fmt,
# lrus (the LRUs with victim figures), hog_lrus (those with hog throughput: none for a
# custom HOG command, which reports no throughput).
w = 1200
h = 900
load "plots/common.gp"
set multiplot layout 3, 1 title "Summary by scenario (MGLRU vs classic LRU)"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -30 noenhanced
set key inside top right
# Column of LRU k's value in a panel whose MGLRU column is `first`.
col(first, set, k) = first + (word(set, k) eq "mglru" ? 0 : 1)
name(set, k) = word(set, k) eq "mglru" ? "MGLRU" : "classic"
colour(set, k) = word(set, k) eq "mglru" ? "#1f77b4" : "#ff7f0e"
# Log axis: protected rows (tens of us) beside unprotected ones (hundreds of ms).
set title "victim p99 latency (us, log scale, from when each round was due)"
set logscale y
set yrange [1:*]
plot for [k = 1:words(lrus)] pivot using (column(col(2, lrus, k))):xtic(1) skip 1 \
	title name(lrus, k) lc rgb colour(lrus, k)
unset logscale y
set yrange [0:*]
set title "victim major faults"
plot for [k = 1:words(lrus)] pivot using (column(col(4, lrus, k))):xtic(1) skip 1 \
	title name(lrus, k) lc rgb colour(lrus, k)
set title "hog throughput (% of hog-unlimited)"
if (words(hog_lrus) > 0) {
	plot for [k = 1:words(hog_lrus)] pivot using (column(col(6, hog_lrus, k))):xtic(1) skip 1 \
		title name(hog_lrus, k) lc rgb colour(hog_lrus, k)
} else {
	unset xtics
	unset ytics
	unset key
	set label 1 "not measured: a custom HOG command reports no throughput" at graph 0.5, 0.5 center
	plot [0:1] [0:1] NaN notitle
}
unset multiplot
